#include "client/partitioner.h"

namespace eddy::client {

int32_t murmur2(std::span<const uint8_t> data) {
  const uint32_t seed = 0x9747b28c;
  const uint32_t m = 0x5bd1e995;
  const int r = 24;
  const size_t length = data.size();
  uint32_t h = seed ^ static_cast<uint32_t>(length);
  const size_t blocks = length / 4;
  for (size_t i = 0; i < blocks; ++i) {
    const uint8_t* p = data.data() + i * 4;
    uint32_t k = uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
    k *= m;
    k ^= k >> r;
    k *= m;
    h *= m;
    h ^= k;
  }
  const uint8_t* tail = data.data() + blocks * 4;
  switch (length % 4) {
    case 3: h ^= uint32_t{tail[2]} << 16; [[fallthrough]];
    case 2: h ^= uint32_t{tail[1]} << 8; [[fallthrough]];
    case 1:
      h ^= tail[0];
      h *= m;
  }
  h ^= h >> 13;
  h *= m;
  h ^= h >> 15;
  return static_cast<int32_t>(h);
}

int32_t partition_for_key(std::span<const uint8_t> key, int32_t partition_count) {
  uint32_t positive = static_cast<uint32_t>(murmur2(key)) & 0x7fffffffu;
  return static_cast<int32_t>(positive % static_cast<uint32_t>(partition_count));
}

}  // namespace eddy::client

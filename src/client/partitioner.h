// Kafka's default partitioner for keyed records: murmur2 of the key bytes,
// made positive, modulo the partition count — the same partition Kafka's
// Java client (and librdkafka's "murmur2_random") picks for the same key.
#pragma once

#include <cstdint>
#include <span>

namespace eddy::client {

// Kafka's Utils.murmur2 (seed 0x9747b28c).
int32_t murmur2(std::span<const uint8_t> data);
// REQUIRES: partition_count > 0.
int32_t partition_for_key(std::span<const uint8_t> key, int32_t partition_count);

}  // namespace eddy::client

// CRC-32C throughput: the three-stream hardware path (port::crc32c) against
// the same instructions as one dependent stream and the portable table code,
// on the buffer sizes a broker checks (one record batch of 1 KiB to 1 MiB).
// Prints GB/s per path and size, the ratio interleaved / one stream, and
// whether the three agree.
//
//   build/tests/bench/eddy_crc32c_bench [seconds per measurement, default 0.3]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "port/port.h"

namespace {

using Crc = uint32_t (*)(uint32_t, const void*, size_t);

// GB/s of f over buffer[0, size), repeated for about `seconds`.
double throughput(Crc f, const std::vector<uint8_t>& buffer, size_t size, double seconds, uint32_t* sink) {
  using Clock = std::chrono::steady_clock;
  size_t rounds = 0;
  uint64_t bytes = 0;
  auto start = Clock::now();
  double elapsed = 0;
  do {
    for (int i = 0; i < 16; ++i) {
      *sink += f(static_cast<uint32_t>(rounds * 16 + i), buffer.data(), size);
      bytes += size;
    }
    ++rounds;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < seconds);
  return static_cast<double>(bytes) / elapsed / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 0.3;
  const size_t sizes[] = {1024, 4 * 1024, 16 * 1024, 64 * 1024, 1024 * 1024};
  std::vector<uint8_t> buffer(sizes[4]);
  std::mt19937_64 rng(1);
  for (auto& b : buffer) b = static_cast<uint8_t>(rng());
  uint32_t sink = 0;
  std::printf("crc32c on this CPU: %s\n", eddy::port::crc32c_implementation());
  std::printf("%10s %14s %14s %14s %10s %6s\n", "bytes", "3 streams GB/s", "1 stream GB/s", "portable GB/s",
              "3/1 ratio", "equal");
  bool all_equal = true;
  for (size_t size : sizes) {
    double three = throughput(eddy::port::crc32c, buffer, size, seconds, &sink);
    double one = throughput(eddy::port::crc32c_one_stream, buffer, size, seconds, &sink);
    double portable = throughput(eddy::port::crc32c_portable, buffer, size, seconds, &sink);
    uint32_t a = eddy::port::crc32c(0, buffer.data(), size);
    bool equal = a == eddy::port::crc32c_one_stream(0, buffer.data(), size) &&
                 a == eddy::port::crc32c_portable(0, buffer.data(), size);
    all_equal = all_equal && equal;
    std::printf("%10zu %14.2f %14.2f %14.2f %10.2f %6s\n", size, three, one, portable, three / one,
                equal ? "yes" : "NO");
  }
  std::printf("(checksum sink %08x)\n", sink);
  return all_equal ? 0 : 1;
}

// CRC-32C throughput on the buffer sizes a broker checks (one record batch of
// 1 KiB to 1 MiB): the path port::crc32c takes on this CPU (fused crc32 +
// carry-less multiply where the CPU has both), the three-stream crc32 path,
// the same instructions as one dependent stream, and the portable table code.
// Prints GB/s per path and size, the ratio crc32c / one stream, and whether
// all paths agree. Each figure is the best of 100 short windows taken in turn
// with the other paths' windows: on a machine that also runs other work, some
// windows run undisturbed, and all paths see the same conditions.
//
//   build/tests/bench/eddy_crc32c_bench [seconds per figure, default 0.2] [start offset, default 0]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "port/port.h"

namespace {

using Crc = uint32_t (*)(uint32_t, const void*, size_t);

// GB/s of f over data[0, size), repeated for about `seconds`.
double throughput(Crc f, const uint8_t* data, size_t size, double seconds, uint32_t* sink) {
  using Clock = std::chrono::steady_clock;
  size_t rounds = 0;
  uint64_t bytes = 0;
  auto start = Clock::now();
  double elapsed = 0;
  const size_t batch = size < 65536 ? 65536 / size : 1;  // the clock costs little next to a batch
  do {
    for (size_t i = 0; i < batch; ++i) *sink += f(static_cast<uint32_t>(rounds++), data, size);
    bytes += batch * size;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < seconds);
  return static_cast<double>(bytes) / elapsed / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 0.2;
  const size_t offset = argc > 2 ? static_cast<size_t>(std::atoi(argv[2])) % 64 : 0;
  const size_t sizes[] = {1024, 4 * 1024, 16 * 1024, 64 * 1024, 1024 * 1024};
  std::vector<uint8_t> buffer(sizes[4] + 64);
  std::mt19937_64 rng(1);
  for (auto& b : buffer) b = static_cast<uint8_t>(rng());
  const uint8_t* data = buffer.data() + offset;
  const Crc paths[] = {eddy::port::crc32c, eddy::port::crc32c_three_streams, eddy::port::crc32c_one_stream,
                       eddy::port::crc32c_portable};
  constexpr int kRounds = 100;
  uint32_t sink = 0;
  std::printf("crc32c on this CPU: %s (start offset %zu)\n", eddy::port::crc32c_implementation(), offset);
  std::printf("%10s %12s %12s %12s %12s %10s %6s\n", "bytes", "crc32c GB/s", "3 str GB/s", "1 str GB/s",
              "port. GB/s", "crc32c/1", "equal");
  bool all_equal = true;
  for (size_t size : sizes) {
    double best[4] = {0, 0, 0, 0};
    for (int round = 0; round < kRounds; ++round) {
      for (int i = 0; i < 4; ++i) {
        best[i] = std::max(best[i], throughput(paths[i], data, size, seconds / kRounds, &sink));
      }
    }
    bool equal = true;
    for (Crc path : paths) equal = equal && path(0, data, size) == eddy::port::crc32c_portable(0, data, size);
    all_equal = all_equal && equal;
    std::printf("%10zu %12.2f %12.2f %12.2f %12.2f %10.2f %6s\n", size, best[0], best[1], best[2], best[3],
                best[0] / best[2], equal ? "yes" : "NO");
  }
  std::printf("(checksum sink %08x)\n", sink);
  return all_equal ? 0 : 1;
}

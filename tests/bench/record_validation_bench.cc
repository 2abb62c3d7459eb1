// What record validation on append costs (protocol/record_validator.h),
// next to what every append already pays for the same bytes: the CRC-32C
// check, measured in the same run on the same batches.
//
//   build/tests/bench/eddy_record_validation_bench [MiB per case, default 256]
//
// Batches as producers send them (1 000 records of 1 KiB values with small
// keys, headers on every tenth), uncompressed and with each codec built in.
// Prints per case: walk throughput (MB/s of stored batch bytes), the CRC's,
// and the ratio walk/CRC; for compressed cases the walk includes the
// streaming decompression, the dominant part.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "client/compression.h"
#include "client/record_stream.h"
#include "port/port.h"
#include "protocol/record_batch.h"
#include "protocol/record_validator.h"

namespace P = eddy::protocol;

namespace {

// Telemetry-like values: JSON with pseudo-random readings (compresses
// about as real sensor data does, 3-6x), fixed seed so that every run and
// codec sees the same bytes.
std::string reading(uint64_t* seed, int i) {
  std::string v;
  while (v.size() < 1024) {
    *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
    char item[96];
    std::snprintf(item, sizeof item, "{\"sensor\":%d,\"t\":%d,\"temp\":%.3f,\"rpm\":%u},", i % 50,
                  1700000000 + i, static_cast<double>(*seed >> 44) / 1000.0, static_cast<unsigned>(*seed >> 52));
    v += item;
  }
  v.resize(1024);
  return v;
}

std::vector<uint8_t> make_batch(P::Compression codec) {
  P::RecordBatchBuilder builder;
  uint64_t seed = 42;
  std::vector<std::string> values;
  std::vector<std::string> keys;
  for (int i = 0; i < 1000; ++i) {
    values.push_back(reading(&seed, i));
    keys.push_back("sensor-" + std::to_string(i % 50));
  }
  for (int i = 0; i < 1000; ++i) {
    const std::string& key = keys[static_cast<size_t>(i)];
    const std::string& value = values[static_cast<size_t>(i)];
    P::RecordInput r;
    r.key = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(key.data()), key.size());
    r.value = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(value.data()), value.size());
    r.timestamp = 1'700'000'000'000 + i;
    static const uint8_t unit[] = {'C'};
    if (i % 10 == 0) r.headers.push_back({"unit", std::span<const uint8_t>(unit, 1)});
    builder.add(r);
  }
  std::vector<uint8_t> plain = builder.build();
  if (codec == P::Compression::kNone) return plain;
  // Same header, the records section compressed.
  namespace L = P::batch_layout;
  std::vector<uint8_t> compressed;
  if (!eddy::client::compress(codec, std::span<const uint8_t>(plain).subspan(L::kRecords), &compressed).ok()) {
    return {};
  }
  std::vector<uint8_t> out(plain.begin(), plain.begin() + L::kRecords);
  out.insert(out.end(), compressed.begin(), compressed.end());
  P::store_be32(out.data() + L::kBatchLength, static_cast<uint32_t>(out.size() - L::kLogOverhead));
  P::store_be16(out.data() + L::kAttributes, static_cast<uint16_t>(codec));
  P::update_crc(out);
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const double mib = argc > 1 ? std::atof(argv[1]) : 256;
  P::RecordStreamFactory open = [](P::Compression c, std::span<const uint8_t> in) {
    return eddy::client::open_record_stream(c, in, size_t{64} << 20);
  };
  std::printf("%-8s %10s %8s %14s %15s %12s %10s\n", "codec", "batch", "stored", "walk MB/s", "walk MB/s", "crc MB/s",
              "walk/crc");
  std::printf("%-8s %10s %8s %14s %15s %12s %10s\n", "", "", "", "(stored)", "(decompressed)", "(stored)", "");
  for (P::Compression codec : {P::Compression::kNone, P::Compression::kGzip, P::Compression::kSnappy,
                               P::Compression::kLz4, P::Compression::kZstd}) {
    std::vector<uint8_t> batch = make_batch(codec);
    if (batch.empty() || (codec != P::Compression::kNone && !open(codec, {}))) {
      std::printf("%-8s not built in\n", eddy::client::compression_name(codec));
      continue;
    }
    P::RecordBatchView view;
    if (P::RecordBatchView::parse(batch, &view) != P::BatchError::kOk) return 1;
    P::RecordRules rules;
    rules.now_ms = 1'700'000'000'000;
    rules.open_stream = &open;
    // Enough rounds for `mib` of decompressed records (what the walk reads).
    const size_t plain_bytes = make_batch(P::Compression::kNone).size();
    const size_t rounds = static_cast<size_t>(mib * 1048576 / static_cast<double>(plain_bytes)) + 1;
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < rounds; ++i) {
      if (P::validate_batch_records(view, rules).error != P::ErrorCode::kNone) return 1;
    }
    const double walk = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    uint32_t sink = 0;
    for (size_t i = 0; i < rounds; ++i) sink ^= view.compute_crc();
    const double crc = seconds_since(t0);
    const double bytes = static_cast<double>(batch.size()) * static_cast<double>(rounds);
    const double plain = static_cast<double>(plain_bytes) * static_cast<double>(rounds);
    std::printf("%-8s %9zuB %7.0f%% %14.0f %15.0f %12.0f %10.2f%s\n", eddy::client::compression_name(codec),
                batch.size(), 100.0 * static_cast<double>(batch.size()) / static_cast<double>(plain_bytes),
                bytes / walk / 1e6, plain / walk / 1e6, bytes / crc / 1e6, walk / crc, sink == 1 ? " " : "");
  }
  std::printf("(crc32c: %s; walk/crc = validation time per byte as a multiple of the CRC check every append does)\n",
              eddy::port::crc32c_implementation());
  return 0;
}

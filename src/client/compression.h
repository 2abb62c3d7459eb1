// Record batch compression codecs, for the tools (compress and
// decompress) and for the broker, which only reads compressed records to
// validate them (record_stream.h) and stores batches as they came; the
// forwarder never compresses or decompresses.
//
// Which codecs exist depends on the build: CMake option EDDY_COMPRESSION
// (ON by default in every build) links zlib (gzip), snappy, lz4 and zstd;
// with it OFF each is reported here as unavailable, so `eddy consume`
// prints a clear error naming the codec of a batch it cannot read, and
// `eddy produce --compression X` refuses X.
// 'none' always works.
//
// Kafka's framing per codec: gzip is a gzip stream; snappy is raw snappy or
// the xerial framing Kafka's Java client writes ("\x82SNAPPY\0" header and
// length-prefixed blocks; both are read, raw is written); lz4 is the LZ4
// frame format (written with independent 64 KiB blocks and no checksums,
// as Kafka's Java client does); zstd is a zstd frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "port/status.h"
#include "protocol/errors.h"
#include "protocol/record_batch.h"

namespace eddy::client {

// Kafka's names: none, gzip, snappy, lz4, zstd.
const char* compression_name(protocol::Compression codec);
bool parse_compression(std::string_view name, protocol::Compression* out);
// Whether this build can compress and decompress codec (always for kNone).
bool compression_available(protocol::Compression codec);

// Replaces *out with the compressed bytes of in.
Status compress(protocol::Compression codec, std::span<const uint8_t> in, std::vector<uint8_t>* out);
// Replaces *out with the decompressed bytes of in. kCodec when the codec is
// not built in, the input is corrupt, or the output would exceed max_output.
Status decompress(protocol::Compression codec, std::span<const uint8_t> in, size_t max_output,
                  std::vector<uint8_t>* out);

}  // namespace eddy::client

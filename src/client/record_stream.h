// Streaming decompression of a compressed batch's records section, for
// record validation on append (protocol/record_validator.h): the records
// are read through a small buffer, never decompressed whole into memory.
//
// Per codec: gzip (zlib inflate), lz4 (LZ4 frame) and zstd stream with a
// bounded state: zstd frames that need a window above kZstdMaxWindowLog are
// refused as corrupt (levels up to 19 without --long need at most 8 MiB).
// Raw snappy cannot be streamed (a copy may reach any earlier byte): its
// declared uncompressed length is checked against max_output before one
// buffer of that size is allocated; the xerial framing Kafka's Java client
// writes is read block by block (each at most max_output).
//
// Codecs follow the build (EDDY_COMPRESSION, see compression.h):
// open_record_stream returns nullptr for one that is not built in.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "protocol/record_validator.h"

namespace eddy::client {

inline constexpr int kZstdMaxWindowLog = 23;

std::unique_ptr<protocol::RecordStream> open_record_stream(protocol::Compression codec,
                                                           std::span<const uint8_t> compressed, size_t max_output);

}  // namespace eddy::client

#include "client/compression.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "client/codec_libraries.h"

namespace eddy::client {

using protocol::Compression;

namespace {

Status codec_error(Compression codec, const std::string& what) {
  return Status::error(Status::Code::kCodec, std::string(compression_name(codec)) + ": " + what);
}

Status too_large(Compression codec, size_t max_output) {
  return codec_error(codec, "decompressed data exceeds " + std::to_string(max_output) + " bytes");
}

#if EDDY_HAVE_ZLIB
Status gzip_compress(std::span<const uint8_t> in, std::vector<uint8_t>* out) {
  z_stream z{};
  // windowBits 15 + 16: a gzip header and trailer, as Java's GZIPOutputStream.
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return codec_error(Compression::kGzip, "deflateInit2 failed");
  }
  out->resize(deflateBound(&z, static_cast<uLong>(in.size())) + 32);
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = out->data();
  z.avail_out = static_cast<uInt>(out->size());
  int rc = deflate(&z, Z_FINISH);
  size_t produced = z.total_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return codec_error(Compression::kGzip, "deflate failed");
  out->resize(produced);
  return Status();
}

Status gzip_decompress(std::span<const uint8_t> in, size_t max_output, std::vector<uint8_t>* out) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) return codec_error(Compression::kGzip, "inflateInit2 failed");
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  out->clear();
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    size_t have = out->size();
    if (have >= max_output) {
      inflateEnd(&z);
      return too_large(Compression::kGzip, max_output);
    }
    size_t grow = std::min(max_output - have, std::max<size_t>(4096, in.size() * 4));
    out->resize(have + grow);
    z.next_out = out->data() + have;
    z.avail_out = static_cast<uInt>(grow);
    rc = inflate(&z, Z_NO_FLUSH);
    out->resize(have + grow - z.avail_out);
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      inflateEnd(&z);
      return codec_error(Compression::kGzip, std::string("corrupt data: ") + (z.msg ? z.msg : "inflate failed"));
    }
    if (rc == Z_BUF_ERROR && z.avail_in == 0) {
      inflateEnd(&z);
      return codec_error(Compression::kGzip, "corrupt data: truncated");
    }
  }
  inflateEnd(&z);
  return Status();
}
#endif

#if EDDY_HAVE_SNAPPY
constexpr uint8_t kXerialMagic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};

Status snappy_raw_append(std::span<const uint8_t> in, size_t max_output, std::vector<uint8_t>* out) {
  size_t length = 0;
  const char* src = reinterpret_cast<const char*>(in.data());
  if (snappy_uncompressed_length(src, in.size(), &length) != SNAPPY_OK) {
    return codec_error(Compression::kSnappy, "corrupt data");
  }
  if (length > max_output - out->size()) return too_large(Compression::kSnappy, max_output);
  size_t at = out->size();
  out->resize(at + length);
  if (snappy_uncompress(src, in.size(), reinterpret_cast<char*>(out->data() + at), &length) != SNAPPY_OK) {
    return codec_error(Compression::kSnappy, "corrupt data");
  }
  out->resize(at + length);
  return Status();
}

Status snappy_decompress(std::span<const uint8_t> in, size_t max_output, std::vector<uint8_t>* out) {
  out->clear();
  if (in.size() < 16 || std::memcmp(in.data(), kXerialMagic, sizeof kXerialMagic) != 0) {
    return snappy_raw_append(in, max_output, out);
  }
  size_t pos = 16;  // magic, version, compatible version
  while (pos < in.size()) {
    if (in.size() - pos < 4) return codec_error(Compression::kSnappy, "corrupt data: truncated xerial block");
    uint32_t length = protocol::load_be32(in.data() + pos);
    pos += 4;
    if (length > in.size() - pos) return codec_error(Compression::kSnappy, "corrupt data: truncated xerial block");
    Status s = snappy_raw_append(in.subspan(pos, length), max_output, out);
    if (!s.ok()) return s;
    pos += length;
  }
  return Status();
}

Status snappy_compress_raw(std::span<const uint8_t> in, std::vector<uint8_t>* out) {
  size_t length = snappy_max_compressed_length(in.size());
  out->resize(length);
  if (snappy_compress(reinterpret_cast<const char*>(in.data()), in.size(), reinterpret_cast<char*>(out->data()),
                      &length) != SNAPPY_OK) {
    return codec_error(Compression::kSnappy, "compression failed");
  }
  out->resize(length);
  return Status();
}
#endif

#if EDDY_HAVE_LZ4
Status lz4_compress(std::span<const uint8_t> in, std::vector<uint8_t>* out) {
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.blockSizeID = LZ4F_max64KB;
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  prefs.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
  prefs.frameInfo.blockChecksumFlag = LZ4F_noBlockChecksum;
  out->resize(LZ4F_compressFrameBound(in.size(), &prefs));
  size_t n = LZ4F_compressFrame(out->data(), out->size(), in.data(), in.size(), &prefs);
  if (LZ4F_isError(n)) return codec_error(Compression::kLz4, LZ4F_getErrorName(n));
  out->resize(n);
  return Status();
}

Status lz4_decompress(std::span<const uint8_t> in, size_t max_output, std::vector<uint8_t>* out) {
  LZ4F_dctx* dctx = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) {
    return codec_error(Compression::kLz4, "cannot create a decompression context");
  }
  out->clear();
  size_t pos = 0;
  Status result;
  for (;;) {
    size_t have = out->size();
    if (have >= max_output) {
      result = too_large(Compression::kLz4, max_output);
      break;
    }
    size_t grow = std::min(max_output - have, std::max<size_t>(65536, in.size() * 4));
    out->resize(have + grow);
    size_t dst_size = grow;
    size_t src_size = in.size() - pos;
    size_t hint = LZ4F_decompress(dctx, out->data() + have, &dst_size, in.data() + pos, &src_size, nullptr);
    out->resize(have + dst_size);
    pos += src_size;
    if (LZ4F_isError(hint)) {
      result = codec_error(Compression::kLz4, std::string("corrupt data: ") + LZ4F_getErrorName(hint));
      break;
    }
    if (hint == 0) break;  // the frame is complete
    if (src_size == 0 && dst_size == 0) {
      result = codec_error(Compression::kLz4, "corrupt data: truncated frame");
      break;
    }
  }
  LZ4F_freeDecompressionContext(dctx);
  return result;
}
#endif

#if EDDY_HAVE_ZSTD
Status zstd_compress(std::span<const uint8_t> in, std::vector<uint8_t>* out) {
  out->resize(ZSTD_compressBound(in.size()));
  size_t n = ZSTD_compress(out->data(), out->size(), in.data(), in.size(), ZSTD_CLEVEL_DEFAULT);
  if (ZSTD_isError(n)) return codec_error(Compression::kZstd, ZSTD_getErrorName(n));
  out->resize(n);
  return Status();
}

Status zstd_decompress(std::span<const uint8_t> in, size_t max_output, std::vector<uint8_t>* out) {
  ZSTD_DStream* stream = ZSTD_createDStream();
  if (stream == nullptr) return codec_error(Compression::kZstd, "cannot create a stream");
  out->clear();
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  Status result;
  size_t rc = 1;
  // Frames may follow one another; stop when the input is consumed and the
  // last frame is complete (rc == 0).
  while (input.pos < input.size || rc != 0) {
    size_t have = out->size();
    if (have >= max_output) {
      result = too_large(Compression::kZstd, max_output);
      break;
    }
    size_t grow = std::min(max_output - have, std::max<size_t>(ZSTD_DStreamOutSize(), in.size() * 4));
    out->resize(have + grow);
    ZSTD_outBuffer output{out->data() + have, grow, 0};
    size_t before_in = input.pos;
    rc = ZSTD_decompressStream(stream, &output, &input);
    out->resize(have + output.pos);
    if (ZSTD_isError(rc)) {
      result = codec_error(Compression::kZstd, std::string("corrupt data: ") + ZSTD_getErrorName(rc));
      break;
    }
    if (rc != 0 && input.pos == input.size && output.pos == 0 && before_in == input.pos) {
      result = codec_error(Compression::kZstd, "corrupt data: truncated frame");
      break;
    }
  }
  ZSTD_freeDStream(stream);
  return result;
}
#endif

}  // namespace

const char* compression_name(Compression codec) {
  switch (codec) {
    case Compression::kNone: return "none";
    case Compression::kGzip: return "gzip";
    case Compression::kSnappy: return "snappy";
    case Compression::kLz4: return "lz4";
    case Compression::kZstd: return "zstd";
  }
  return "unknown";
}

bool parse_compression(std::string_view name, Compression* out) {
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kSnappy, Compression::kLz4,
                        Compression::kZstd}) {
    if (name == compression_name(c)) {
      *out = c;
      return true;
    }
  }
  return false;
}

bool compression_available(Compression codec) {
  switch (codec) {
    case Compression::kNone: return true;
    case Compression::kGzip: return EDDY_HAVE_ZLIB;
    case Compression::kSnappy: return EDDY_HAVE_SNAPPY;
    case Compression::kLz4: return EDDY_HAVE_LZ4;
    case Compression::kZstd: return EDDY_HAVE_ZSTD;
  }
  return false;
}

namespace {
Status not_built(Compression codec) {
  return Status::error(Status::Code::kCodec, std::string("compression codec ") + compression_name(codec) +
                                               " is not built into this eddy (CMake option "
                                               "EDDY_COMPRESSION, library lib" +
                                               (codec == Compression::kGzip ? std::string("z") : compression_name(codec)) +
                                               ")");
}
}  // namespace

Status compress(Compression codec, std::span<const uint8_t> in, std::vector<uint8_t>* out) {
  switch (codec) {
    case Compression::kNone:
      out->assign(in.begin(), in.end());
      return Status();
#if EDDY_HAVE_ZLIB
    case Compression::kGzip: return gzip_compress(in, out);
#endif
#if EDDY_HAVE_SNAPPY
    case Compression::kSnappy: return snappy_compress_raw(in, out);
#endif
#if EDDY_HAVE_LZ4
    case Compression::kLz4: return lz4_compress(in, out);
#endif
#if EDDY_HAVE_ZSTD
    case Compression::kZstd: return zstd_compress(in, out);
#endif
    default: return not_built(codec);
  }
}

Status decompress(Compression codec, std::span<const uint8_t> in, size_t max_output, std::vector<uint8_t>* out) {
  switch (codec) {
    case Compression::kNone:
      if (in.size() > max_output) return too_large(codec, max_output);
      out->assign(in.begin(), in.end());
      return Status();
#if EDDY_HAVE_ZLIB
    case Compression::kGzip: return gzip_decompress(in, max_output, out);
#endif
#if EDDY_HAVE_SNAPPY
    case Compression::kSnappy: return snappy_decompress(in, max_output, out);
#endif
#if EDDY_HAVE_LZ4
    case Compression::kLz4: return lz4_decompress(in, max_output, out);
#endif
#if EDDY_HAVE_ZSTD
    case Compression::kZstd: return zstd_decompress(in, max_output, out);
#endif
    default: return not_built(codec);
  }
}

}  // namespace eddy::client

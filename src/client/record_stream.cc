#include "client/record_stream.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "client/codec_libraries.h"
#include "protocol/big_endian.h"

namespace eddy::client {

using protocol::Compression;
using Result = protocol::RecordStream::Result;

namespace {

#if EDDY_HAVE_ZLIB
// A gzip stream (members one after the other, as Java's GZIPInputStream
// reads them).
class GzipStream final : public protocol::RecordStream {
 public:
  explicit GzipStream(std::span<const uint8_t> in) {
    ok_ = inflateInit2(&z_, 15 + 32) == Z_OK;
    z_.next_in = const_cast<Bytef*>(in.data());
    z_.avail_in = static_cast<uInt>(in.size());
  }
  ~GzipStream() override {
    if (ok_) inflateEnd(&z_);
  }

  Result read(std::span<uint8_t> into, size_t* got, std::string* error) override {
    *got = 0;
    if (!ok_) {
      *error = "gzip: inflateInit2 failed";
      return Result::kCorrupt;
    }
    while (*got == 0 && !done_) {
      z_.next_out = into.data();
      z_.avail_out = static_cast<uInt>(into.size());
      int rc = inflate(&z_, Z_NO_FLUSH);
      *got = into.size() - z_.avail_out;
      if (rc == Z_STREAM_END) {
        if (z_.avail_in == 0) {
          done_ = true;
        } else if (inflateReset(&z_) != Z_OK) {
          *error = "gzip: cannot read the next member";
          return Result::kCorrupt;
        }
      } else if (rc == Z_BUF_ERROR && z_.avail_in == 0 && *got == 0) {
        *error = "gzip: truncated stream";
        return Result::kCorrupt;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        *error = std::string("gzip: ") + (z_.msg != nullptr ? z_.msg : "corrupt data");
        return Result::kCorrupt;
      }
    }
    return Result::kOk;
  }

 private:
  z_stream z_{};
  bool ok_ = false;
  bool done_ = false;
};
#endif

#if EDDY_HAVE_LZ4
class Lz4Stream final : public protocol::RecordStream {
 public:
  explicit Lz4Stream(std::span<const uint8_t> in) : in_(in) {
    ok_ = !LZ4F_isError(LZ4F_createDecompressionContext(&dctx_, LZ4F_VERSION));
  }
  ~Lz4Stream() override {
    if (dctx_ != nullptr) LZ4F_freeDecompressionContext(dctx_);
  }

  Result read(std::span<uint8_t> into, size_t* got, std::string* error) override {
    *got = 0;
    if (!ok_) {
      *error = "lz4: cannot create a decompression context";
      return Result::kCorrupt;
    }
    while (*got == 0 && !done_) {
      size_t dst = into.size();
      size_t src = in_.size() - pos_;
      size_t hint = LZ4F_decompress(dctx_, into.data(), &dst, in_.data() + pos_, &src, nullptr);
      pos_ += src;
      *got = dst;
      if (LZ4F_isError(hint)) {
        *error = std::string("lz4: ") + LZ4F_getErrorName(hint);
        return Result::kCorrupt;
      }
      if (hint == 0 && pos_ == in_.size()) {
        done_ = true;  // the (last) frame is complete
      } else if (src == 0 && dst == 0) {
        *error = "lz4: truncated frame";
        return Result::kCorrupt;
      }
    }
    return Result::kOk;
  }

 private:
  std::span<const uint8_t> in_;
  size_t pos_ = 0;
  LZ4F_dctx* dctx_ = nullptr;
  bool ok_ = false;
  bool done_ = false;
};
#endif

#if EDDY_HAVE_ZSTD
class ZstdStream final : public protocol::RecordStream {
 public:
  explicit ZstdStream(std::span<const uint8_t> in) : input_{in.data(), in.size(), 0} {
    dctx_ = ZSTD_createDCtx();
    if (dctx_ != nullptr) ZSTD_DCtx_setParameter(dctx_, ZSTD_d_windowLogMax, kZstdMaxWindowLog);
  }
  ~ZstdStream() override { ZSTD_freeDCtx(dctx_); }

  Result read(std::span<uint8_t> into, size_t* got, std::string* error) override {
    *got = 0;
    if (dctx_ == nullptr) {
      *error = "zstd: cannot create a decompression context";
      return Result::kCorrupt;
    }
    while (*got == 0 && !done_) {
      ZSTD_outBuffer output{into.data(), into.size(), 0};
      const size_t before = input_.pos;
      size_t rc = ZSTD_decompressStream(dctx_, &output, &input_);
      *got = output.pos;
      if (ZSTD_isError(rc)) {
        *error = std::string("zstd: ") + ZSTD_getErrorName(rc);
        return Result::kCorrupt;
      }
      // Frames may follow one another: the end is a complete frame with
      // nothing after it.
      if (rc == 0 && input_.pos == input_.size) {
        done_ = true;
      } else if (output.pos == 0 && input_.pos == before) {
        *error = "zstd: truncated frame";
        return Result::kCorrupt;
      }
    }
    return Result::kOk;
  }

 private:
  ZSTD_DCtx* dctx_ = nullptr;
  ZSTD_inBuffer input_;
  bool done_ = false;
};
#endif

#if EDDY_HAVE_SNAPPY
constexpr uint8_t kXerialMagic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};

// Raw snappy blocks (one, or the xerial framing's length-prefixed blocks),
// each decompressed whole into block_ and served from there.
class SnappyStream final : public protocol::RecordStream {
 public:
  SnappyStream(std::span<const uint8_t> in, size_t max_output) : in_(in), max_output_(max_output) {
    xerial_ = in.size() >= 16 && std::memcmp(in.data(), kXerialMagic, sizeof kXerialMagic) == 0;
    pos_ = xerial_ ? 16 : 0;  // magic, version, compatible version
  }

  Result read(std::span<uint8_t> into, size_t* got, std::string* error) override {
    *got = 0;
    while (served_ == block_.size()) {
      if (pos_ == in_.size() && (xerial_ || started_)) return Result::kOk;
      Result r = next_block(error);
      if (r != Result::kOk) return r;
    }
    *got = std::min(into.size(), block_.size() - served_);
    std::memcpy(into.data(), block_.data() + served_, *got);
    served_ += *got;
    return Result::kOk;
  }

 private:
  Result next_block(std::string* error) {
    started_ = true;
    std::span<const uint8_t> block = in_.subspan(pos_);
    if (xerial_) {
      if (block.size() < 4) {
        *error = "snappy: truncated xerial block";
        return Result::kCorrupt;
      }
      uint32_t length = protocol::load_be32(block.data());
      if (length > block.size() - 4) {
        *error = "snappy: truncated xerial block";
        return Result::kCorrupt;
      }
      block = block.subspan(4, length);
      pos_ += 4 + length;
    } else {
      pos_ = in_.size();
    }
    const char* src = reinterpret_cast<const char*>(block.data());
    size_t length = 0;
    if (snappy_uncompressed_length(src, block.size(), &length) != SNAPPY_OK) {
      *error = "snappy: corrupt data";
      return Result::kCorrupt;
    }
    total_ += length;
    if (total_ > max_output_) return Result::kTooLarge;
    block_.resize(length);
    if (snappy_uncompress(src, block.size(), reinterpret_cast<char*>(block_.data()), &length) != SNAPPY_OK) {
      *error = "snappy: corrupt data";
      return Result::kCorrupt;
    }
    block_.resize(length);
    served_ = 0;
    return Result::kOk;
  }

  std::span<const uint8_t> in_;
  size_t max_output_;
  size_t pos_ = 0;
  bool xerial_ = false;
  bool started_ = false;
  size_t total_ = 0;
  std::vector<uint8_t> block_;
  size_t served_ = 0;
};
#endif

}  // namespace

std::unique_ptr<protocol::RecordStream> open_record_stream(Compression codec, std::span<const uint8_t> compressed,
                                                           size_t max_output) {
  (void)compressed;
  (void)max_output;
  switch (codec) {
#if EDDY_HAVE_ZLIB
    case Compression::kGzip: return std::make_unique<GzipStream>(compressed);
#endif
#if EDDY_HAVE_SNAPPY
    case Compression::kSnappy: return std::make_unique<SnappyStream>(compressed, max_output);
#endif
#if EDDY_HAVE_LZ4
    case Compression::kLz4: return std::make_unique<Lz4Stream>(compressed);
#endif
#if EDDY_HAVE_ZSTD
    case Compression::kZstd: return std::make_unique<ZstdStream>(compressed);
#endif
    default: return nullptr;
  }
}

}  // namespace eddy::client

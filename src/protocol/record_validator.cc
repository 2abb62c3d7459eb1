#include "protocol/record_validator.h"

#include <algorithm>
#include <array>
#include <limits>

namespace eddy::protocol {

namespace {

// Reads the records section as one byte stream: in place for an
// uncompressed batch, chunk by chunk from a RecordStream otherwise. Every
// read fails once the stream is exhausted; `failure` says why.
class Cursor {
 public:
  enum class Failure { kNone, kEnd, kCorrupt, kTooLarge };

  explicit Cursor(std::span<const uint8_t> bytes) : chunk_(bytes) {}
  Cursor(RecordStream* stream, uint64_t max_bytes) : stream_(stream), max_bytes_(max_bytes) {}

  bool byte(uint8_t* out) {
    if (pos_ == chunk_.size() && !refill()) return false;
    *out = chunk_[pos_++];
    ++consumed_;
    return true;
  }

  bool skip(uint64_t n) {
    while (n > 0) {
      if (pos_ == chunk_.size() && !refill()) return false;
      size_t step = static_cast<size_t>(std::min<uint64_t>(n, chunk_.size() - pos_));
      pos_ += step;
      consumed_ += step;
      n -= step;
    }
    return true;
  }

  // True when no byte is left (reads one chunk ahead if needed).
  bool at_end() { return pos_ == chunk_.size() && !refill() && failure_ == Failure::kEnd; }

  // Bytes left in an in-place buffer; unknown (max) for a stream.
  uint64_t remaining_hint() const {
    return stream_ == nullptr ? chunk_.size() - pos_ : std::numeric_limits<uint64_t>::max();
  }

  uint64_t consumed() const { return consumed_; }
  Failure failure() const { return failure_; }
  const std::string& stream_error() const { return stream_error_; }

 private:
  bool refill() {
    if (stream_ == nullptr || failure_ != Failure::kNone) {
      if (failure_ == Failure::kNone) failure_ = Failure::kEnd;
      return false;
    }
    if (decompressed_ >= max_bytes_) {
      // One byte beyond the bound tells a bomb from a batch of exactly it.
      uint8_t probe = 0;
      size_t got = 0;
      RecordStream::Result r = stream_->read({&probe, 1}, &got, &stream_error_);
      if (r == RecordStream::Result::kOk) {
        failure_ = got == 0 ? Failure::kEnd : Failure::kTooLarge;
      } else {
        failure_ = r == RecordStream::Result::kTooLarge ? Failure::kTooLarge : Failure::kCorrupt;
      }
      return false;
    }
    size_t want = static_cast<size_t>(std::min<uint64_t>(buffer_.size(), max_bytes_ - decompressed_));
    size_t got = 0;
    RecordStream::Result r = stream_->read({buffer_.data(), want}, &got, &stream_error_);
    if (r != RecordStream::Result::kOk) {
      failure_ = r == RecordStream::Result::kTooLarge ? Failure::kTooLarge : Failure::kCorrupt;
      return false;
    }
    if (got == 0) {
      failure_ = Failure::kEnd;
      return false;
    }
    decompressed_ += got;
    chunk_ = {buffer_.data(), got};
    pos_ = 0;
    return true;
  }

  std::span<const uint8_t> chunk_;
  size_t pos_ = 0;
  uint64_t consumed_ = 0;
  RecordStream* stream_ = nullptr;
  uint64_t max_bytes_ = 0;
  uint64_t decompressed_ = 0;
  Failure failure_ = Failure::kNone;
  std::string stream_error_;
  // Only a stream's chunks are read into it (never read past what was
  // written), so it is not zeroed: a Cursor is made per batch on the
  // append path.
  std::array<uint8_t, 16384> buffer_;
};

enum class Read { kOk, kFailed, kTooLong };

// Unsigned LEB128 of at most max_bytes (Kafka's varint and varlong limits).
Read read_uvarint(Cursor& in, int max_bytes, uint64_t* out) {
  uint64_t value = 0;
  for (int i = 0; i < max_bytes; ++i) {
    uint8_t b = 0;
    if (!in.byte(&b)) return Read::kFailed;
    value |= uint64_t{b & 0x7fu} << (7 * i);
    if ((b & 0x80) == 0) {
      *out = value;
      return Read::kOk;
    }
  }
  return Read::kTooLong;
}

Read read_varint(Cursor& in, int32_t* out) {
  uint64_t raw = 0;
  Read r = read_uvarint(in, 5, &raw);
  if (r != Read::kOk) return r;
  if (raw > 0xffffffffu) return Read::kTooLong;
  uint32_t u = static_cast<uint32_t>(raw);
  *out = static_cast<int32_t>((u >> 1) ^ (~(u & 1) + 1));
  return Read::kOk;
}

Read read_varlong(Cursor& in, int64_t* out) {
  uint64_t u = 0;
  Read r = read_uvarint(in, 10, &u);
  if (r != Read::kOk) return r;
  *out = static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
  return Read::kOk;
}

// Why the walk stopped, with the text Kafka gives where it has one.
struct Walk {
  ErrorCode error = ErrorCode::kNone;
  std::string message;
  void fail(ErrorCode code, std::string why) {
    if (error != ErrorCode::kNone) return;
    error = code;
    message = std::move(why);
  }
};

void fail_read(Walk* walk, Cursor& in, Read r, int32_t index, const char* field) {
  std::string at = "record " + std::to_string(index) + ": ";
  if (in.failure() == Cursor::Failure::kTooLarge) return;  // reported by the caller
  if (in.failure() == Cursor::Failure::kCorrupt) {
    walk->fail(ErrorCode::kInvalidRecord, "Failed to decompress record stream: " + in.stream_error());
  } else if (r == Read::kTooLong) {
    walk->fail(ErrorCode::kInvalidRecord, at + "Found invalid record structure (" + field + ": varint too long)");
  } else {
    walk->fail(ErrorCode::kInvalidRecord, at + "Incorrect declared batch size, premature EOF reached (in " + field +
                                              ")");
  }
}

// Skips a varint-prefixed byte string (key, value, header value); -1 is
// null. *size gets its length (0 for null).
bool skip_bytes(Cursor& in, Walk* walk, int32_t index, const char* field, int64_t* size) {
  int32_t length = 0;
  Read r = read_varint(in, &length);
  if (r != Read::kOk) {
    fail_read(walk, in, r, index, field);
    return false;
  }
  if (length < -1) {
    walk->fail(ErrorCode::kInvalidRecord,
               "record " + std::to_string(index) + ": invalid " + field + " length " + std::to_string(length));
    return false;
  }
  *size = std::max(length, 0);
  if (length > 0 && !in.skip(static_cast<uint64_t>(length))) {
    fail_read(walk, in, Read::kFailed, index, field);
    return false;
  }
  return true;
}

// A producer's base and delta are both its own: their sum wraps as Java's
// long addition does in Kafka's validator (no overflow to trap on).
int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

void check_timestamp(const RecordBatchView& batch, const RecordRules& rules, int32_t index, int64_t timestamp,
                     int64_t offset, RecordVerdict* verdict, bool* timestamp_fault) {
  std::string why;
  if (rules.topic_timestamp_type == TimestampType::kCreateTime && timestamp != -1) {
    // As Kafka: now - ts > before, or ts - now > after (saturating).
    const int64_t now = rules.now_ms;
    bool too_old = timestamp < now && static_cast<uint64_t>(now) - static_cast<uint64_t>(timestamp) >
                                          static_cast<uint64_t>(rules.timestamp_before_max_ms);
    bool too_new = timestamp > now && static_cast<uint64_t>(timestamp) - static_cast<uint64_t>(now) >
                                          static_cast<uint64_t>(rules.timestamp_after_max_ms);
    if (too_old || too_new) {
      auto bound = [](int64_t a, int64_t b, bool add) {
        if (add) return b > INT64_MAX - a ? INT64_MAX : a + b;
        return a < INT64_MIN + b ? INT64_MIN : a - b;
      };
      why = "Timestamp " + std::to_string(timestamp) + " of message with offset " + std::to_string(offset) +
            " is out of range. The timestamp should be within [" +
            std::to_string(bound(now, rules.timestamp_before_max_ms, false)) + ", " +
            std::to_string(bound(now, rules.timestamp_after_max_ms, true)) + "]";
    }
  } else if (batch.timestamp_type() == TimestampType::kLogAppendTime) {
    why = "Invalid timestamp type in message with offset " + std::to_string(offset) +
          ". Producer should not set timestamp type to LogAppendTime.";
  }
  if (why.empty()) return;
  *timestamp_fault = true;
  if (verdict->record_errors.size() < kMaxRecordErrors) verdict->record_errors.push_back({index, std::move(why)});
}

// The headers of record i, after its header count: each a key (length >= 0)
// and a value (length >= -1). False with walk->error set on a fault.
bool walk_headers(Cursor& in, int32_t i, int32_t headers, Walk* walk) {
  for (int32_t h = 0; h < headers; ++h) {
    int32_t key_length = 0;
    Read r = read_varint(in, &key_length);
    if (r != Read::kOk) {
      fail_read(walk, in, r, i, "header key length");
      return false;
    }
    if (key_length < 0) {
      walk->fail(ErrorCode::kInvalidRecord,
                 "record " + std::to_string(i) + ": Invalid negative header key size " + std::to_string(key_length));
      return false;
    }
    if (!in.skip(static_cast<uint64_t>(key_length))) {
      fail_read(walk, in, Read::kFailed, i, "header key");
      return false;
    }
    int64_t header_value_size = 0;
    if (!skip_bytes(in, walk, i, "header value", &header_value_size)) return false;
  }
  return true;
}

// The fields of record i after its length `size`: attributes, timestamp
// delta, offset delta (must be i), key, value, headers, and that they take
// exactly `size` bytes. False with walk->error set on a fault.
bool walk_record_fields(Cursor& in, int32_t i, int32_t size, Walk* walk, int64_t* timestamp_delta) {
  const uint64_t start = in.consumed();
  uint8_t attributes = 0;
  if (!in.byte(&attributes)) {
    fail_read(walk, in, Read::kFailed, i, "attributes");
    return false;
  }
  Read r = read_varlong(in, timestamp_delta);
  if (r != Read::kOk) {
    fail_read(walk, in, r, i, "timestamp delta");
    return false;
  }
  int32_t offset_delta = 0;
  if ((r = read_varint(in, &offset_delta)) != Read::kOk) {
    fail_read(walk, in, r, i, "offset delta");
    return false;
  }
  if (offset_delta != i) {
    walk->fail(ErrorCode::kInvalidRecord, "record " + std::to_string(i) + " has offset delta " +
                                              std::to_string(offset_delta) + ", expected " + std::to_string(i) +
                                              " (offsets must be consecutive from the batch's base offset)");
    return false;
  }
  int64_t key_size = 0, value_size = 0;
  if (!skip_bytes(in, walk, i, "key", &key_size) || !skip_bytes(in, walk, i, "value", &value_size)) return false;
  int32_t headers = 0;
  if ((r = read_varint(in, &headers)) != Read::kOk) {
    fail_read(walk, in, r, i, "header count");
    return false;
  }
  if (headers < 0) {
    walk->fail(ErrorCode::kInvalidRecord,
               "record " + std::to_string(i) + ": Found invalid number of record headers " + std::to_string(headers));
    return false;
  }
  // Each header takes at least two bytes of the record.
  const uint64_t used = in.consumed() - start;
  if (static_cast<uint64_t>(headers) * 2 > static_cast<uint64_t>(size) - std::min<uint64_t>(used, size)) {
    walk->fail(ErrorCode::kInvalidRecord, "record " + std::to_string(i) + ": Found invalid number of record "
                                              "headers. " + std::to_string(headers) +
                                              " is larger than the remaining size of the record");
    return false;
  }
  if (!walk_headers(in, i, headers, walk)) return false;
  const uint64_t read = in.consumed() - start;
  if (read != static_cast<uint64_t>(size)) {
    walk->fail(ErrorCode::kInvalidRecord, "record " + std::to_string(i) + ": Invalid record size: expected to read " +
                                              std::to_string(size) + " bytes in record payload, but instead read " +
                                              std::to_string(read));
    return false;
  }
  return true;
}

// Record i's length, checked against what is left and the record bound.
bool walk_record_length(Cursor& in, const RecordRules& rules, bool compressed, int32_t i, Walk* walk,
                        int32_t* size) {
  Read r = read_varint(in, size);
  if (r != Read::kOk) {
    fail_read(walk, in, r, i, "record length");
    return false;
  }
  if (*size < 0 || static_cast<uint64_t>(*size) > in.remaining_hint()) {
    walk->fail(ErrorCode::kInvalidRecord, "record " + std::to_string(i) + ": Invalid record size: expected " +
                                              std::to_string(*size) + " bytes in record payload, but instead the "
                                              "buffer has only " + std::to_string(in.remaining_hint()) +
                                              " remaining bytes.");
    return false;
  }
  if (compressed && *size > rules.max_decompressed_record_bytes) {
    walk->fail(ErrorCode::kInvalidRecord, "record " + std::to_string(i) + " of " + std::to_string(*size) +
                                              " bytes exceeds max.decompressed.message.bytes (" +
                                              std::to_string(rules.max_decompressed_record_bytes) + ")");
    return false;
  }
  return true;
}

// After the declared records: nothing may be left, and the stream's own
// failures (corrupt, over the decompressed bound) decide over the walk's.
void finish_walk(Cursor& in, const RecordRules& rules, Walk* walk) {
  if (walk->error == ErrorCode::kNone && !in.at_end()) {
    if (in.failure() == Cursor::Failure::kCorrupt) {
      walk->fail(ErrorCode::kInvalidRecord, "Failed to decompress record stream: " + in.stream_error());
    } else if (in.failure() != Cursor::Failure::kTooLarge) {
      walk->fail(ErrorCode::kInvalidRecord, "Incorrect declared batch size, records still remaining in file");
    }
  }
  if (in.failure() == Cursor::Failure::kTooLarge) {
    walk->error = ErrorCode::kNone;  // the bound decides, whatever the walk saw
    walk->fail(ErrorCode::kMessageTooLarge, "The batch decompresses to more than " +
                                                std::to_string(rules.max_decompressed_batch_bytes) +
                                                " bytes (eddy.max.decompressed.batch.bytes)");
  }
}

void walk_records(const RecordBatchView& batch, const RecordRules& rules, bool compressed, Cursor& in,
                  RecordVerdict* verdict) {
  Walk walk;
  bool timestamp_fault = false;
  int64_t max_timestamp = -1;
  for (int32_t i = 0; i < batch.record_count(); ++i) {
    int32_t size = 0;
    int64_t timestamp_delta = 0;
    if (!walk_record_length(in, rules, compressed, i, &walk, &size) ||
        !walk_record_fields(in, i, size, &walk, &timestamp_delta)) {
      break;
    }
    const int64_t timestamp = batch.timestamp_type() == TimestampType::kLogAppendTime
                                  ? batch.max_timestamp()
                                  : wrapping_add(batch.base_timestamp(), timestamp_delta);
    max_timestamp = std::max(max_timestamp, timestamp);
    check_timestamp(batch, rules, i, timestamp, wrapping_add(batch.base_offset(), i), verdict, &timestamp_fault);
  }
  finish_walk(in, rules, &walk);
  if (walk.error != ErrorCode::kNone) {
    verdict->error = walk.error;
    verdict->message = std::move(walk.message);
    verdict->record_errors.clear();
    return;
  }
  verdict->max_timestamp = max_timestamp;
  if (timestamp_fault) {
    verdict->error = ErrorCode::kInvalidTimestamp;
    verdict->message = "One or more records have been rejected due to invalid timestamp";
  }
}

}  // namespace

RecordVerdict validate_batch_records(const RecordBatchView& batch, const RecordRules& rules) {
  RecordVerdict verdict;
  if (static_cast<uint8_t>(batch.compression()) > static_cast<uint8_t>(Compression::kZstd)) {
    verdict.error = ErrorCode::kInvalidRecord;
    verdict.message = "Unknown compression type id " + std::to_string(static_cast<int>(batch.compression()));
    return verdict;
  }
  if (batch.compression() == Compression::kNone) {
    verdict.walked = true;
    Cursor in(batch.records_bytes());
    walk_records(batch, rules, false, in, &verdict);
    return verdict;
  }
  if (!rules.validate_compressed || rules.open_stream == nullptr || !*rules.open_stream) return verdict;
  std::unique_ptr<RecordStream> stream = (*rules.open_stream)(batch.compression(), batch.records_bytes());
  if (!stream) return verdict;
  verdict.walked = true;
  Cursor in(stream.get(), rules.max_decompressed_batch_bytes);
  walk_records(batch, rules, true, in, &verdict);
  return verdict;
}

}  // namespace eddy::protocol

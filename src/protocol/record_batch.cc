#include "protocol/record_batch.h"

#include <cstring>
#include <limits>

#include "port/port.h"

namespace eddy::protocol {

namespace L = batch_layout;

const char* batch_error_name(BatchError error) {
  switch (error) {
    case BatchError::kOk: return "ok";
    case BatchError::kTruncated: return "truncated";
    case BatchError::kUnsupportedMagic: return "unsupported magic (0/1)";
    case BatchError::kInvalid: return "invalid";
    case BatchError::kCrcMismatch: return "CRC mismatch";
  }
  return "unknown";
}

// ---------------------------------------------------------------------------
// RecordBatchView
// ---------------------------------------------------------------------------

BatchError peek_batch_size(std::span<const uint8_t> bytes, size_t* size) {
  if (bytes.size() < L::kLogOverhead) return BatchError::kTruncated;
  int32_t length = static_cast<int32_t>(load_be32(bytes.data() + L::kBatchLength));
  if (length < 0) return BatchError::kInvalid;
  *size = L::kLogOverhead + static_cast<size_t>(length);
  return BatchError::kOk;
}

BatchError RecordBatchView::parse(std::span<const uint8_t> bytes, RecordBatchView* out) {
  // The magic byte decides how the rest is framed, so look at it first: an
  // old-format message set is reported as such even when it is short.
  if (bytes.size() <= L::kMagic) return BatchError::kTruncated;
  int8_t magic = static_cast<int8_t>(bytes[L::kMagic]);
  if (magic == 0 || magic == 1) return BatchError::kUnsupportedMagic;
  if (magic != kRecordBatchMagic) return BatchError::kInvalid;
  size_t size = 0;
  BatchError e = peek_batch_size(bytes, &size);
  if (e != BatchError::kOk) return e;
  if (size < L::kHeaderSize) return BatchError::kInvalid;
  if (bytes.size() < L::kHeaderSize || bytes.size() < size) return BatchError::kTruncated;
  const uint8_t* p = bytes.data();
  int32_t count = static_cast<int32_t>(load_be32(p + L::kRecordCount));
  int32_t last_delta = static_cast<int32_t>(load_be32(p + L::kLastOffsetDelta));
  if (count < 0 || last_delta != (count == 0 ? 0 : count - 1)) return BatchError::kInvalid;
  int64_t base = static_cast<int64_t>(load_be64(p + L::kBaseOffset));
  if (base < 0 || base > std::numeric_limits<int64_t>::max() - last_delta - 1) return BatchError::kInvalid;
  out->bytes_ = bytes.first(size);
  return BatchError::kOk;
}

int64_t RecordBatchView::base_offset() const { return static_cast<int64_t>(load_be64(bytes_.data() + L::kBaseOffset)); }
int32_t RecordBatchView::batch_length() const { return static_cast<int32_t>(load_be32(bytes_.data() + L::kBatchLength)); }
int32_t RecordBatchView::partition_leader_epoch() const {
  return static_cast<int32_t>(load_be32(bytes_.data() + L::kPartitionLeaderEpoch));
}
int8_t RecordBatchView::magic() const { return static_cast<int8_t>(bytes_[L::kMagic]); }
uint32_t RecordBatchView::crc() const { return load_be32(bytes_.data() + L::kCrc); }
int16_t RecordBatchView::attributes() const { return static_cast<int16_t>(load_be16(bytes_.data() + L::kAttributes)); }
int32_t RecordBatchView::last_offset_delta() const {
  return static_cast<int32_t>(load_be32(bytes_.data() + L::kLastOffsetDelta));
}
int64_t RecordBatchView::base_timestamp() const { return static_cast<int64_t>(load_be64(bytes_.data() + L::kBaseTimestamp)); }
int64_t RecordBatchView::max_timestamp() const { return static_cast<int64_t>(load_be64(bytes_.data() + L::kMaxTimestamp)); }
int64_t RecordBatchView::producer_id() const { return static_cast<int64_t>(load_be64(bytes_.data() + L::kProducerId)); }
int16_t RecordBatchView::producer_epoch() const {
  return static_cast<int16_t>(load_be16(bytes_.data() + L::kProducerEpoch));
}
int32_t RecordBatchView::base_sequence() const { return static_cast<int32_t>(load_be32(bytes_.data() + L::kBaseSequence)); }
int32_t RecordBatchView::record_count() const { return static_cast<int32_t>(load_be32(bytes_.data() + L::kRecordCount)); }

Compression RecordBatchView::compression() const {
  return static_cast<Compression>(attributes() & batch_attributes::kCompressionMask);
}
TimestampType RecordBatchView::timestamp_type() const {
  return (attributes() & batch_attributes::kLogAppendTime) ? TimestampType::kLogAppendTime : TimestampType::kCreateTime;
}
bool RecordBatchView::is_transactional() const { return (attributes() & batch_attributes::kTransactional) != 0; }
bool RecordBatchView::is_control() const { return (attributes() & batch_attributes::kControl) != 0; }

uint32_t RecordBatchView::compute_crc() const {
  return port::crc32c(0, bytes_.data() + L::kAttributes, bytes_.size() - L::kAttributes);
}

// ---------------------------------------------------------------------------
// Patching
// ---------------------------------------------------------------------------

void set_base_offset(std::span<uint8_t> batch, int64_t base_offset) {
  store_be64(batch.data() + L::kBaseOffset, static_cast<uint64_t>(base_offset));
}

void set_partition_leader_epoch(std::span<uint8_t> batch, int32_t epoch) {
  store_be32(batch.data() + L::kPartitionLeaderEpoch, static_cast<uint32_t>(epoch));
}

void update_crc(std::span<uint8_t> batch) {
  uint32_t crc = port::crc32c(0, batch.data() + L::kAttributes, batch.size() - L::kAttributes);
  store_be32(batch.data() + L::kCrc, crc);
}

void set_log_append_time(std::span<uint8_t> batch, int64_t append_time_ms) {
  uint16_t attributes = load_be16(batch.data() + L::kAttributes);
  store_be16(batch.data() + L::kAttributes, static_cast<uint16_t>(attributes | batch_attributes::kLogAppendTime));
  store_be64(batch.data() + L::kMaxTimestamp, static_cast<uint64_t>(append_time_ms));
  update_crc(batch);
}

void set_max_timestamp(std::span<uint8_t> batch, int64_t max_timestamp) {
  store_be64(batch.data() + L::kMaxTimestamp, static_cast<uint64_t>(max_timestamp));
  update_crc(batch);
}

void rewrite_producer(std::span<uint8_t> batch, int64_t producer_id, int16_t producer_epoch, int32_t base_sequence) {
  store_be64(batch.data() + L::kProducerId, static_cast<uint64_t>(producer_id));
  store_be16(batch.data() + L::kProducerEpoch, static_cast<uint16_t>(producer_epoch));
  store_be32(batch.data() + L::kBaseSequence, static_cast<uint32_t>(base_sequence));
  update_crc(batch);
}

// ---------------------------------------------------------------------------
// BatchIterator
// ---------------------------------------------------------------------------

bool BatchIterator::next(RecordBatchView* batch) {
  if (error_ != BatchError::kOk || position_ >= bytes_.size()) return false;
  RecordBatchView view;
  BatchError e = RecordBatchView::parse(bytes_.subspan(position_), &view);
  if (e == BatchError::kOk && verify_crc_ && !view.crc_matches()) e = BatchError::kCrcMismatch;
  if (e != BatchError::kOk) {
    error_ = e;
    return false;
  }
  position_ += view.size();
  *batch = view;
  return true;
}

BatchError validate_batches(std::span<const uint8_t> bytes, size_t* batches) {
  BatchIterator it(bytes);
  RecordBatchView view;
  size_t n = 0;
  while (it.next(&view)) ++n;
  if (batches != nullptr) *batches = n;
  if (it.error() != BatchError::kOk) return it.error();
  return n == 0 ? BatchError::kTruncated : BatchError::kOk;
}

// ---------------------------------------------------------------------------
// Varints (zigzag, as in Kafka's record format). Record iteration keeps its
// own few lines rather than wire::Reader, which builds field-path error
// messages for message codecs; here a bool per read is all that is needed.
// ---------------------------------------------------------------------------

namespace {

// Reads an unsigned LEB128 of at most max_bytes; false when truncated or too
// long.
bool read_uvarint(std::span<const uint8_t> in, size_t* pos, int max_bytes, uint64_t* out) {
  uint64_t value = 0;
  for (int i = 0; i < max_bytes; ++i) {
    if (*pos >= in.size()) return false;
    uint8_t b = in[(*pos)++];
    value |= uint64_t{b & 0x7fu} << (7 * i);
    if ((b & 0x80) == 0) {
      *out = value;
      return true;
    }
  }
  return false;
}

bool read_varint(std::span<const uint8_t> in, size_t* pos, int32_t* out) {
  uint64_t raw;
  if (!read_uvarint(in, pos, 5, &raw) || raw > 0xffffffffu) return false;
  uint32_t u = static_cast<uint32_t>(raw);
  *out = static_cast<int32_t>((u >> 1) ^ (~(u & 1) + 1));
  return true;
}

bool read_varlong(std::span<const uint8_t> in, size_t* pos, int64_t* out) {
  uint64_t u;
  if (!read_uvarint(in, pos, 10, &u)) return false;
  *out = static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
  return true;
}

// A varint length then that many bytes; length -1 means null.
bool read_bytes(std::span<const uint8_t> in, size_t* pos, std::optional<std::span<const uint8_t>>* out) {
  int32_t length;
  if (!read_varint(in, pos, &length) || length < -1) return false;
  if (length == -1) {
    out->reset();
    return true;
  }
  if (static_cast<size_t>(length) > in.size() - *pos) return false;
  *out = in.subspan(*pos, static_cast<size_t>(length));
  *pos += static_cast<size_t>(length);
  return true;
}

void write_uvarint(std::vector<uint8_t>* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<uint8_t>(v));
}
void write_varint(std::vector<uint8_t>* out, int64_t v) {
  write_uvarint(out, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}
void write_bytes(std::vector<uint8_t>* out, const std::optional<std::span<const uint8_t>>& bytes) {
  if (!bytes) {
    write_varint(out, -1);
    return;
  }
  write_varint(out, static_cast<int64_t>(bytes->size()));
  out->insert(out->end(), bytes->begin(), bytes->end());
}

}  // namespace

// ---------------------------------------------------------------------------
// RecordIterator
// ---------------------------------------------------------------------------

RecordIterator::RecordIterator(const RecordBatchView& batch)
    : records_(batch.records_bytes()), remaining_(batch.record_count()) {
  if (batch.compression() != Compression::kNone) {
    error_ = BatchError::kInvalid;
    done_ = true;
  }
}

bool RecordIterator::next(Record* record) {
  if (done_) return false;
  if (remaining_ == 0) {
    done_ = true;
    if (position_ != records_.size()) error_ = BatchError::kInvalid;
    return false;
  }
  auto fail = [this] {
    error_ = BatchError::kInvalid;
    done_ = true;
    return false;
  };
  int32_t length;
  if (!read_varint(records_, &position_, &length) || length < 0) return fail();
  if (static_cast<size_t>(length) > records_.size() - position_) return fail();
  std::span<const uint8_t> body = records_.subspan(position_, static_cast<size_t>(length));
  position_ += static_cast<size_t>(length);

  size_t pos = 0;
  if (body.empty()) return fail();
  record->attributes = static_cast<int8_t>(body[pos++]);
  if (!read_varlong(body, &pos, &record->timestamp_delta)) return fail();
  if (!read_varint(body, &pos, &record->offset_delta)) return fail();
  if (!read_bytes(body, &pos, &record->key)) return fail();
  if (!read_bytes(body, &pos, &record->value)) return fail();
  int32_t header_count;
  if (!read_varint(body, &pos, &header_count) || header_count < 0) return fail();
  // Each header takes at least two bytes: bound the count before reserving.
  if (static_cast<size_t>(header_count) > (body.size() - pos) / 2) return fail();
  record->headers.clear();
  record->headers.reserve(static_cast<size_t>(header_count));
  for (int32_t i = 0; i < header_count; ++i) {
    std::optional<std::span<const uint8_t>> key, value;
    if (!read_bytes(body, &pos, &key) || !key) return fail();
    if (!read_bytes(body, &pos, &value)) return fail();
    record->headers.push_back(
        RecordHeader{std::string_view(reinterpret_cast<const char*>(key->data()), key->size()), value});
  }
  if (pos != body.size()) return fail();
  --remaining_;
  return true;
}

BatchError validate_records(const RecordBatchView& batch) {
  if (batch.compression() != Compression::kNone) return BatchError::kOk;
  RecordIterator it(batch);
  Record record;
  int32_t expected_delta = 0;
  while (it.next(&record)) {
    if (record.offset_delta != expected_delta) return BatchError::kInvalid;
    ++expected_delta;
  }
  if (it.error() != BatchError::kOk) return it.error();
  return expected_delta == batch.record_count() ? BatchError::kOk : BatchError::kInvalid;
}

// ---------------------------------------------------------------------------
// RecordBatchBuilder
// ---------------------------------------------------------------------------

RecordBatchBuilder& RecordBatchBuilder::add(std::string_view key, std::string_view value, int64_t timestamp) {
  RecordInput r;
  r.key = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(key.data()), key.size());
  r.value = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(value.data()), value.size());
  r.timestamp = timestamp;
  return add(r);
}

RecordBatchBuilder& RecordBatchBuilder::add(const RecordInput& record) {
  if (count_ == 0) base_timestamp_ = record.timestamp;
  if (record.timestamp > max_timestamp_) max_timestamp_ = record.timestamp;
  std::vector<uint8_t> body;
  body.push_back(0);  // record attributes: unused
  write_varint(&body, record.timestamp - base_timestamp_);
  write_varint(&body, count_);
  write_bytes(&body, record.key);
  write_bytes(&body, record.value);
  write_varint(&body, static_cast<int64_t>(record.headers.size()));
  for (const auto& [key, value] : record.headers) {
    write_bytes(&body, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(key.data()), key.size()));
    write_bytes(&body, value);
  }
  write_varint(&records_, static_cast<int64_t>(body.size()));
  records_.insert(records_.end(), body.begin(), body.end());
  ++count_;
  return *this;
}

std::vector<uint8_t> build_empty_batch(int64_t timestamp_ms) {
  std::vector<uint8_t> out(L::kHeaderSize, 0);
  uint8_t* p = out.data();
  store_be32(p + L::kBatchLength, static_cast<uint32_t>(out.size() - L::kLogOverhead));
  p[L::kMagic] = static_cast<uint8_t>(kRecordBatchMagic);
  store_be64(p + L::kBaseTimestamp, static_cast<uint64_t>(timestamp_ms));
  store_be64(p + L::kMaxTimestamp, static_cast<uint64_t>(timestamp_ms));
  store_be64(p + L::kProducerId, static_cast<uint64_t>(int64_t{-1}));
  store_be16(p + L::kProducerEpoch, static_cast<uint16_t>(int16_t{-1}));
  store_be32(p + L::kBaseSequence, static_cast<uint32_t>(int32_t{-1}));
  update_crc(out);
  return out;
}

std::vector<uint8_t> RecordBatchBuilder::build() const {
  std::vector<uint8_t> out(L::kHeaderSize + records_.size());
  uint8_t* p = out.data();
  store_be64(p + L::kBaseOffset, static_cast<uint64_t>(base_offset_));
  store_be32(p + L::kBatchLength, static_cast<uint32_t>(out.size() - L::kLogOverhead));
  store_be32(p + L::kPartitionLeaderEpoch, static_cast<uint32_t>(leader_epoch_));
  p[L::kMagic] = static_cast<uint8_t>(kRecordBatchMagic);
  store_be16(p + L::kAttributes, static_cast<uint16_t>(attributes_));
  store_be32(p + L::kLastOffsetDelta, static_cast<uint32_t>(count_ - 1));
  store_be64(p + L::kBaseTimestamp, static_cast<uint64_t>(base_timestamp_));
  store_be64(p + L::kMaxTimestamp, static_cast<uint64_t>(max_timestamp_));
  store_be64(p + L::kProducerId, static_cast<uint64_t>(producer_id_));
  store_be16(p + L::kProducerEpoch, static_cast<uint16_t>(producer_epoch_));
  store_be32(p + L::kBaseSequence, static_cast<uint32_t>(base_sequence_));
  store_be32(p + L::kRecordCount, static_cast<uint32_t>(count_));
  if (!records_.empty()) std::memcpy(p + L::kRecords, records_.data(), records_.size());
  update_crc(out);
  return out;
}

void RecordBatchBuilder::clear() {
  count_ = 0;
  records_.clear();
  base_timestamp_ = 0;
  max_timestamp_ = -1;
}

}  // namespace eddy::protocol

#include "client/record_accumulator.h"

#include <cstring>

#include "client/compression.h"

namespace eddy::client {

namespace L = protocol::batch_layout;

size_t RecordAccumulator::record_size_bound(const protocol::RecordInput& record) {
  // length, attributes, timestamp delta, offset delta, key and value lengths,
  // header count: at most 5+1+10+5+5+5+5 bytes of varints.
  size_t size = 36;
  if (record.key) size += record.key->size();
  if (record.value) size += record.value->size();
  for (const auto& [key, value] : record.headers) size += 10 + key.size() + (value ? value->size() : 0);
  return size;
}

Status RecordAccumulator::append(const TopicPartition& tp, const protocol::RecordInput& record) {
  size_t size = record_size_bound(record);
  auto it = open_.find(tp);
  if (it != open_.end() && it->second.builder.record_count() > 0 && it->second.bytes + size > options_.batch_bytes) {
    Status s = seal(tp, it->second);
    open_.erase(it);
    it = open_.end();
    if (!s.ok()) return s;
  }
  if (it == open_.end()) it = open_.try_emplace(tp).first;
  it->second.builder.add(record);
  it->second.bytes += size;
  return Status();
}

Status RecordAccumulator::seal_all() {
  Status first;
  for (auto& [tp, batch] : open_) {
    Status s = seal(tp, batch);
    if (first.ok() && !s.ok()) first = s;
  }
  open_.clear();
  return first;
}

std::vector<SealedBatch> RecordAccumulator::take_sealed() {
  std::vector<SealedBatch> out(std::make_move_iterator(sealed_.begin()), std::make_move_iterator(sealed_.end()));
  sealed_.clear();
  return out;
}

Status RecordAccumulator::seal(const TopicPartition& tp, OpenBatch& batch) {
  SealedBatch sealed;
  sealed.tp = tp;
  sealed.record_count = static_cast<int32_t>(batch.builder.record_count());
  std::vector<uint8_t> plain = batch.builder.build();
  if (options_.compression == protocol::Compression::kNone) {
    sealed.bytes = std::move(plain);
  } else {
    Status s = compress_batch(plain, options_.compression, &sealed.bytes);
    if (!s.ok()) return s.with_context(tp.to_string());
  }
  sealed_.push_back(std::move(sealed));
  return Status();
}

Status compress_batch(const std::vector<uint8_t>& batch, protocol::Compression codec, std::vector<uint8_t>* out) {
  std::vector<uint8_t> compressed;
  Status s = compress(codec, std::span<const uint8_t>(batch).subspan(L::kRecords), &compressed);
  if (!s.ok()) return s;
  out->resize(L::kHeaderSize + compressed.size());
  std::memcpy(out->data(), batch.data(), L::kHeaderSize);
  if (!compressed.empty()) std::memcpy(out->data() + L::kHeaderSize, compressed.data(), compressed.size());
  uint16_t attributes = protocol::load_be16(batch.data() + L::kAttributes);
  attributes = static_cast<uint16_t>((attributes & ~protocol::batch_attributes::kCompressionMask) |
                                     static_cast<uint16_t>(codec));
  protocol::store_be16(out->data() + L::kAttributes, attributes);
  protocol::store_be32(out->data() + L::kBatchLength, static_cast<uint32_t>(out->size() - L::kLogOverhead));
  protocol::update_crc(*out);
  return Status();
}

}  // namespace eddy::client

#include "broker/producer_state.h"

#include <algorithm>
#include <limits>

namespace eddy::broker {

using protocol::ErrorCode;

namespace {

constexpr int64_t kSequenceSpace = int64_t{std::numeric_limits<int32_t>::max()} + 1;

int32_t next_sequence(int32_t sequence) {
  return sequence == std::numeric_limits<int32_t>::max() ? 0 : sequence + 1;
}

SequenceCheck reject(ErrorCode code, std::string message) {
  SequenceCheck c;
  c.action = SequenceCheck::Action::kReject;
  c.error = code;
  c.message = std::move(message);
  return c;
}

}  // namespace

int32_t batch_last_sequence(int32_t first_sequence, int32_t record_count) {
  int64_t last = int64_t{first_sequence} + record_count - 1;
  return static_cast<int32_t>(((last % kSequenceSpace) + kSequenceSpace) % kSequenceSpace);
}

const ProducerBatch* ProducerEntry::find(int32_t first_sequence, int32_t last_sequence) const {
  for (int i = 0; i < batch_count; ++i) {
    const ProducerBatch& b = batches[(next_slot - 1 - i + kCachedBatches) % kCachedBatches];
    if (b.first_sequence == first_sequence && b.last_sequence == last_sequence) return &b;
  }
  return nullptr;
}

const ProducerBatch& ProducerEntry::oldest() const {
  return batches[(next_slot - batch_count + kCachedBatches) % kCachedBatches];
}

void ProducerEntry::push(const ProducerBatch& batch) {
  batches[next_slot] = batch;
  next_slot = (next_slot + 1) % kCachedBatches;
  batch_count = std::min(batch_count + 1, kCachedBatches);
  last_sequence = batch.last_sequence;
  last_offset = batch.last_offset;
}

SequenceCheck PartitionProducers::check(int64_t producer_id, int16_t epoch, int32_t first_sequence,
                                        int32_t record_count) const {
  const std::string who = "producer " + std::to_string(producer_id) + " epoch " + std::to_string(epoch);
  if (first_sequence < 0) return reject(ErrorCode::kOutOfOrderSequenceNumber, who + ": negative base sequence");
  auto it = producers_.find(producer_id);
  if (it == producers_.end()) {
    if (first_sequence == 0) return SequenceCheck{};
    return reject(ErrorCode::kUnknownProducerId,
                  who + " has no state on this partition (new or expired) and sent sequence " +
                      std::to_string(first_sequence) + " instead of 0");
  }
  const ProducerEntry& e = it->second;
  if (epoch < e.epoch) {
    return reject(ErrorCode::kInvalidProducerEpoch,
                  who + " is older than the producer's current epoch " + std::to_string(e.epoch));
  }
  if (epoch > e.epoch) {
    if (first_sequence == 0) return SequenceCheck{};
    return reject(ErrorCode::kOutOfOrderSequenceNumber,
                  who + ": a new epoch must start at sequence 0, got " + std::to_string(first_sequence));
  }
  const int32_t last_sequence = batch_last_sequence(first_sequence, record_count);
  if (const ProducerBatch* b = e.find(first_sequence, last_sequence)) {
    SequenceCheck c;
    c.action = SequenceCheck::Action::kDuplicate;
    c.duplicate_base_offset = b->first_offset;
    c.duplicate_last_offset = b->last_offset;
    return c;
  }
  if (first_sequence == next_sequence(e.last_sequence)) return SequenceCheck{};
  const bool before_cache = e.batch_count == 0 || last_sequence < e.oldest().first_sequence;
  if (first_sequence <= last_sequence && last_sequence <= e.last_sequence && before_cache) {
    // Written before, but older than what is cached: its offset is unknown.
    // (Within the cached window, a range that matches no batch is a client
    // error: out of order below.)
    SequenceCheck c;
    c.action = SequenceCheck::Action::kDuplicate;
    c.error = ErrorCode::kDuplicateSequenceNumber;
    c.duplicate_last_offset = e.last_offset;
    c.message = who + ": sequences " + std::to_string(first_sequence) + "-" + std::to_string(last_sequence) +
                " were already written";
    return c;
  }
  return reject(ErrorCode::kOutOfOrderSequenceNumber, who + ": expected sequence " +
                                                          std::to_string(next_sequence(e.last_sequence)) + ", got " +
                                                          std::to_string(first_sequence));
}

void PartitionProducers::record(int64_t producer_id, int16_t epoch, int32_t first_sequence, int32_t record_count,
                                int64_t first_offset, int64_t last_offset, int64_t now_ms) {
  ProducerEntry& e = producers_[producer_id];
  if (epoch != e.epoch) {
    // A new epoch starts a new sequence space: forget the old batches.
    e.batch_count = 0;
    e.next_slot = 0;
    e.epoch = epoch;
  }
  e.push(ProducerBatch{first_sequence, batch_last_sequence(first_sequence, record_count), first_offset, last_offset});
  e.last_write_ms = std::max(e.last_write_ms, now_ms);
}

void PartitionProducers::record_marker(int64_t producer_id, int16_t epoch, int32_t coordinator_epoch, int64_t offset,
                                       int64_t now_ms) {
  ProducerEntry& e = producers_[producer_id];
  if (epoch != e.epoch) {
    e.batch_count = 0;
    e.next_slot = 0;
    e.epoch = epoch;
    e.last_sequence = -1;
    // The marker stands for the new epoch in snapshots (to_snapshot keeps
    // the row whose last offset is below the snapshot point).
    e.last_offset = offset;
  }
  e.coordinator_epoch = coordinator_epoch;
  e.last_write_ms = std::max(e.last_write_ms, now_ms);
}

ErrorCode PartitionProducers::check_marker(int64_t producer_id, int16_t epoch, int32_t coordinator_epoch) const {
  auto it = producers_.find(producer_id);
  if (it == producers_.end()) return ErrorCode::kNone;
  if (epoch < it->second.epoch) return ErrorCode::kInvalidProducerEpoch;
  if (coordinator_epoch < it->second.coordinator_epoch) return ErrorCode::kTransactionCoordinatorFenced;
  return ErrorCode::kNone;
}

void PartitionProducers::load_snapshot(const std::vector<meta::ProducerSnapshot>& rows) {
  for (const auto& row : rows) {
    if (row.producer_id < 0) continue;
    ProducerEntry& e = producers_[row.producer_id];
    e = ProducerEntry{};
    e.epoch = row.producer_epoch;
    e.last_sequence = row.last_sequence;
    e.last_offset = row.last_offset;
    e.last_write_ms = row.timestamp_ms;
  }
}

std::vector<meta::ProducerSnapshot> PartitionProducers::to_snapshot(
    const std::string& topic, int32_t partition, int64_t upto_offset,
    const std::vector<meta::ProducerSnapshot>& previous) const {
  std::vector<meta::ProducerSnapshot> rows;
  rows.reserve(producers_.size());
  for (const auto& [id, e] : producers_) {
    meta::ProducerSnapshot row;
    row.topic = topic;
    row.partition = partition;
    row.producer_id = id;
    row.producer_epoch = e.epoch;
    row.timestamp_ms = e.last_write_ms;
    bool found = false;
    if (e.last_offset >= 0 && e.last_offset < upto_offset) {
      row.last_sequence = e.last_sequence;
      row.last_offset = e.last_offset;
      found = true;
    } else {
      for (int i = 0; i < e.batch_count && !found; ++i) {
        const ProducerBatch& b = e.batches[(e.next_slot - 1 - i + ProducerEntry::kCachedBatches) %
                                           ProducerEntry::kCachedBatches];
        if (b.last_offset < upto_offset) {
          row.last_sequence = b.last_sequence;
          row.last_offset = b.last_offset;
          found = true;
        }
      }
    }
    if (!found) {
      auto p = std::lower_bound(previous.begin(), previous.end(), id,
                                [](const meta::ProducerSnapshot& r, int64_t v) { return r.producer_id < v; });
      if (p == previous.end() || p->producer_id != id || p->last_offset >= upto_offset) continue;
      row = *p;
    }
    rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end(), [](const meta::ProducerSnapshot& a, const meta::ProducerSnapshot& b) {
    return a.producer_id < b.producer_id;
  });
  return rows;
}

const ProducerEntry* PartitionProducers::find(int64_t producer_id) const {
  auto it = producers_.find(producer_id);
  return it == producers_.end() ? nullptr : &it->second;
}

}  // namespace eddy::broker

#include "broker/producer_state_table.h"

#include <algorithm>

#include "port/log.h"
#include "protocol/control_batch.h"
#include "protocol/record_batch.h"

namespace eddy::broker {

namespace {

constexpr int64_t kShutdownSyncTimeoutMs = 10000;

meta::ProducerSnapshot marker_row(const std::string& topic, int32_t partition, int64_t point, int64_t now_ms) {
  meta::ProducerSnapshot m;
  m.topic = topic;
  m.partition = partition;
  m.producer_id = -1;
  m.last_offset = point;
  m.timestamp_ms = now_ms;
  return m;
}

}  // namespace

Status ProducerStateTable::open_partition(const std::string& topic, int32_t partition, storage::PartitionLog* log,
                                          int64_t now_ms, ProducerReplayStats* stats) {
  PartitionState& state = partitions_[Key(topic, partition)];
  if (state.log != nullptr) by_log_.erase(state.log);
  state = PartitionState{};
  state.log = log;
  by_log_[log] = &state;
  std::vector<meta::ProducerSnapshot> rows;
  Status s = meta_->producer_snapshots().load(topic, partition, &rows);
  if (!s.ok()) return s.with_context("loading the producer state of " + topic + "-" + std::to_string(partition));
  const int64_t log_end = log->log_end_offset();
  int64_t point = -1;
  bool dropped = false;
  std::vector<meta::ProducerSnapshot> kept;
  kept.reserve(rows.size());
  for (auto& row : rows) {
    if (row.producer_id < 0) {
      point = row.last_offset;
    } else if (row.last_offset < log_end) {
      kept.push_back(std::move(row));
    } else {
      dropped = true;
    }
  }
  if (point > log_end) {
    EDDY_LOG_WARN("producer state of {}-{} was saved at offset {} but the log ends at {}; rebuilding from there",
                  topic, partition, point, log_end);
    point = log_end;
    dropped = true;
  }
  if (point < 0) {
    // No snapshot: rows without a marker cannot be trusted to cover the log.
    kept.clear();
  }
  state.producers.load_snapshot(kept);
  for (const auto& row : kept) {
    auto it = epochs_.find(row.producer_id);
    if (it == epochs_.end() || it->second.epoch < row.producer_epoch) {
      epochs_[row.producer_id] = EpochEntry{row.producer_epoch, -1, row.timestamp_ms};
    }
  }
  if (stats != nullptr) stats->snapshot_rows += kept.size();
  state.last_rows = std::move(kept);
  state.last_point = point;
  int64_t from = std::max(point, log->log_start_offset());
  s = replay(state, from, now_ms, stats);
  if (!s.ok()) return s;
  if (dropped) {
    // Rows beyond the log end must not outlive this start: the log will
    // grow past them.
    std::vector<meta::ProducerSnapshot> fixed = state.last_rows;
    if (point >= 0) fixed.push_back(marker_row(topic, partition, point, now_ms));
    s = meta_->producer_snapshots().replace_partition(topic, partition, fixed);
    if (!s.ok()) {
      return s.with_context("removing stale producer state of " + topic + "-" + std::to_string(partition));
    }
  }
  return Status();
}

Status ProducerStateTable::replay(PartitionState& state, int64_t from, int64_t now_ms, ProducerReplayStats* stats) {
  namespace L = protocol::batch_layout;
  storage::PartitionLog* log = state.log;
  const int64_t end = log->log_end_offset();
  if (from >= end) return Status();
  // Headers only (producer id, epoch, sequence, count, offsets): a
  // replica's log is followed without reading its records back, except a
  // control batch's (its marker type is in its record).
  std::vector<uint8_t> control;
  Status s = log->visit_headers(from, end, [&](const storage::BatchPosition& position, std::span<const uint8_t> h,
                                               bool* /*stop*/) -> Status {
    if (stats != nullptr) {
      ++stats->batches_replayed;
      stats->bytes_replayed += position.info.size;
    }
    const auto producer_id = static_cast<int64_t>(protocol::load_be64(h.data() + L::kProducerId));
    if (producer_id < 0 || position.info.last_offset < from) return Status();
    const auto epoch = static_cast<int16_t>(protocol::load_be16(h.data() + L::kProducerEpoch));
    const auto attributes = static_cast<int16_t>(protocol::load_be16(h.data() + L::kAttributes));
    if (attributes & protocol::batch_attributes::kControl) {
      // A transaction marker: the producer's epoch as of the marker.
      int64_t next = 0;
      Status r = log->read_copy(position.info.base_offset, position.info.size, end, &control, &next);
      if (!r.ok()) return r;
      protocol::RecordBatchView batch;
      if (protocol::RecordBatchView::parse(control, &batch) != protocol::BatchError::kOk) {
        return Status::corruption("a stored control batch at offset " + std::to_string(position.info.base_offset) +
                                  " does not parse");
      }
      // As written: the leader checked the coordinator epoch when it
      // appended the marker; only the producer epoch guards the replay.
      if (protocol::control_type(batch).has_value() &&
          state.producers.check_marker(producer_id, epoch, -1) == protocol::ErrorCode::kNone) {
        state.producers.record_marker(producer_id, epoch, protocol::marker_coordinator_epoch(batch).value_or(-1),
                                      position.info.base_offset, now_ms);
        saw_producer(producer_id, epoch, now_ms);
      }
      return Status();
    }
    const auto base_sequence = static_cast<int32_t>(protocol::load_be32(h.data() + L::kBaseSequence));
    const auto record_count = static_cast<int32_t>(protocol::load_be32(h.data() + L::kRecordCount));
    state.producers.record(producer_id, epoch, base_sequence, record_count, position.info.base_offset,
                           position.info.last_offset, now_ms);
    saw_producer(producer_id, epoch, now_ms);
    return Status();
  });
  return s.with_context("replaying " + log->directory() + " from offset " + std::to_string(from));
}

Status ProducerStateTable::follow(storage::PartitionLog* log, int64_t from, int64_t now_ms) {
  auto it = by_log_.find(log);
  if (it == by_log_.end()) return Status::not_found("no producer state for this log");
  return replay(*it->second, std::max(from, log->log_start_offset()), now_ms, nullptr);
}

Status ProducerStateTable::rebuild(storage::PartitionLog* log, int64_t now_ms, ProducerReplayStats* stats) {
  auto it = by_log_.find(log);
  if (it == by_log_.end()) return Status::not_found("no producer state for this log");
  for (const auto& [key, state] : partitions_) {
    if (&state != it->second) continue;
    const Key name = key;  // open_partition replaces the state the key is found by
    return open_partition(name.first, name.second, log, now_ms, stats);
  }
  return Status::not_found("no producer state for this log");
}

PartitionProducers* ProducerStateTable::find(const storage::PartitionLog* log) {
  auto it = by_log_.find(log);
  return it == by_log_.end() ? nullptr : &it->second->producers;
}

PartitionProducers* ProducerStateTable::find(const std::string& topic, int32_t partition) {
  auto it = partitions_.find(Key(topic, partition));
  return it == partitions_.end() ? nullptr : &it->second.producers;
}

void ProducerStateTable::saw_producer(int64_t producer_id, int16_t epoch, int64_t now_ms) {
  EpochEntry& e = epochs_[producer_id];
  if (epoch > e.epoch) e.epoch = epoch;
  if (now_ms > e.last_seen_ms) e.last_seen_ms = now_ms;
}

int16_t ProducerStateTable::current_epoch(int64_t producer_id, int16_t* bumped_from) const {
  auto it = epochs_.find(producer_id);
  if (bumped_from != nullptr) *bumped_from = it == epochs_.end() ? int16_t{-1} : it->second.bumped_from;
  return it == epochs_.end() ? int16_t{-1} : it->second.epoch;
}

void ProducerStateTable::set_epoch(int64_t producer_id, int16_t epoch, int16_t bumped_from, int64_t now_ms) {
  EpochEntry& e = epochs_[producer_id];
  e.epoch = epoch;
  e.bumped_from = bumped_from;
  e.last_seen_ms = now_ms;
}

size_t ProducerStateTable::snapshot(const CurrentLog& current_log, int64_t now_ms, bool sync,
                                    const SnapshotBound& bound) {
  const int64_t cutoff = now_ms - expiration_ms_;
  for (auto it = epochs_.begin(); it != epochs_.end();) {
    it = it->second.last_seen_ms < cutoff ? epochs_.erase(it) : std::next(it);
  }
  size_t written = 0;
  for (auto it = partitions_.begin(); it != partitions_.end();) {
    const std::string& topic = it->first.first;
    const int32_t partition = it->first.second;
    PartitionState& state = it->second;
    if (current_log(topic, partition) != state.log) {
      Status s = meta_->producer_snapshots().remove_partition(topic, partition);
      if (!s.ok()) EDDY_LOG_WARN("removing producer state of {}-{}: {}", topic, partition, s.message());
      auto indexed = by_log_.find(state.log);
      if (indexed != by_log_.end() && indexed->second == &state) by_log_.erase(indexed);
      it = partitions_.erase(it);
      continue;
    }
    // A producer with a transaction open here stays (Kafka's
    // isProducerExpired): kafka-transactions finds it by DescribeProducers.
    const storage::TransactionIndex& open = state.log->transactions();
    size_t expired = state.producers.expire(
        cutoff, [&open](int64_t producer_id) { return open.ongoing_first_offset(producer_id) >= 0; });
    if (expired > 0) {
      EDDY_LOG_INFO("{}-{}: forgot {} idle producer ids (producer.id.expiration.ms)", topic, partition,
                    expired);
    }
    storage::PartitionLog* log = state.log;
    int64_t point = log->durable_offset();
    if (sync) {
      const int64_t end = log->log_end_offset();
      if (log->durable_offset() < end) log->wait_durable(end, kShutdownSyncTimeoutMs);
      point = log->durable_offset();
    }
    // Never above what the partition has committed (a replicated
    // partition's truncations stay above its commit index), nor above what
    // the broker allows (a replicated partition whose commit index is not
    // known yet: none).
    point = std::min({point, log->log_end_offset(), log->high_watermark()});
    if (bound) point = std::min(point, bound(log));
    // The state below an unchanged point changes only by expiry; a point
    // below the last one cannot be described from the last rows.
    if (point < 0 || point < state.last_point || (point == state.last_point && expired == 0)) {
      ++it;
      continue;
    }
    std::vector<meta::ProducerSnapshot> rows = state.producers.to_snapshot(topic, partition, point, state.last_rows);
    std::vector<meta::ProducerSnapshot> with_marker = rows;
    with_marker.push_back(marker_row(topic, partition, point, now_ms));
    Status s = meta_->producer_snapshots().replace_partition(topic, partition, with_marker);
    if (!s.ok()) {
      EDDY_LOG_WARN("saving the producer state of {}-{}: {}", topic, partition, s.message());
      ++it;
      continue;
    }
    state.last_rows = std::move(rows);
    state.last_point = point;
    ++written;
    ++it;
  }
  return written;
}

}  // namespace eddy::broker

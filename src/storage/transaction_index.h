// What one partition knows about transactions (KIP-98): which producers
// have a transaction open in it, which transactions were aborted, and so
// the last stable offset (LSO) that read_committed consumers read up to.
//
// Fed, in offset order, with every transactional batch the log holds: at
// append time (PartitionLog::append, whoever appends: a producer's data or
// a coordinator's COMMIT/ABORT marker) and at open, by scanning the batch
// headers of the segments (scan_transactions below; see README.md,
// "Transactions").
//
// Invariants:
//   - ongoing: at most one entry per producer id, the first offset of its
//     transaction; an entry exists from its first transactional data batch
//     until a marker of that producer id ends it.
//   - decided: transactions a marker ended whose marker may not yet lie
//     below the high watermark (as Kafka's "unreplicated" transactions): the
//     LSO stays at their first offset until the high watermark passes the
//     marker.
//   - aborted: ordered by last_offset (the ABORT marker's offset, increasing
//     as markers are appended); entries whose last offset lies below the log
//     start are trimmed.
//   - A marker for a producer id without an ongoing transaction ends nothing;
//     as in Kafka it counts as a transaction of its own offset alone.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "port/status.h"
#include "protocol/control_batch.h"

namespace eddy::storage {

class Segment;

struct AbortedTransaction {
  int64_t producer_id = -1;
  int64_t first_offset = -1;
  int64_t last_offset = -1;  // the ABORT marker's offset
  bool operator==(const AbortedTransaction&) const = default;
};

class TransactionIndex {
 public:
  // A transactional data batch (not a control batch) at base_offset.
  void on_data_batch(int64_t producer_id, int64_t base_offset);
  // A COMMIT or ABORT marker of producer_id at offset.
  void on_marker(int64_t producer_id, protocol::ControlType type, int64_t offset);

  // The smallest first offset of a transaction not yet stable at
  // high_watermark (ongoing, or decided by a marker at or above it); -1 when
  // every transaction is stable.
  int64_t first_unstable_offset(int64_t high_watermark) const;
  // Forgets decided transactions whose marker lies below high_watermark.
  void settle(int64_t high_watermark);
  // Drops aborted transactions whose last offset is below log_start_offset.
  void trim_before(int64_t log_start_offset);

  // Appends to *out every aborted transaction overlapping [from, to):
  // last_offset >= from and first_offset < to, in last-offset order.
  // Allocates nothing but what *out needs.
  void collect_aborted(int64_t from, int64_t to, std::vector<AbortedTransaction>* out) const {
    for_each_aborted(from, to, [out](const AbortedTransaction& a) { out->push_back(a); });
  }
  // The same, handing each to visit(const AbortedTransaction&).
  template <typename Visit>
  void for_each_aborted(int64_t from, int64_t to, Visit visit) const;

  // True when no transaction is open or awaiting stability: the LSO is the
  // high watermark.
  bool all_stable() const { return ongoing_.empty() && decided_.empty(); }
  bool has_aborted() const { return !aborted_.empty(); }
  size_t ongoing_count() const { return ongoing_.size(); }
  // The first offset of producer_id's open transaction, -1 when none.
  int64_t ongoing_first_offset(int64_t producer_id) const;
  const std::deque<AbortedTransaction>& aborted() const { return aborted_; }

  // The open and aborted transactions as bytes (big-endian; the clean
  // shutdown's transactions.snapshot). REQUIRES nothing is awaiting
  // stability (everything is durable: settle(log end) was called).
  void encode(std::vector<uint8_t>* out) const;
  // Replaces the state with what encode wrote; false (state unchanged) when
  // bytes are not that.
  bool decode(std::span<const uint8_t> bytes);

 private:
  struct Open {
    int64_t producer_id;
    int64_t first_offset;
  };
  struct Decided {
    int64_t first_offset;
    int64_t marker_offset;
  };
  // Few entries (one per producer with an open transaction): a flat vector.
  std::vector<Open> ongoing_;
  std::vector<Decided> decided_;
  std::deque<AbortedTransaction> aborted_;
  // The largest last_offset - first_offset among aborted_ ever held: bounds
  // how far past `to` collect_aborted must look.
  int64_t max_aborted_span_ = 0;
};

template <typename Visit>
void TransactionIndex::for_each_aborted(int64_t from, int64_t to, Visit visit) const {
  if (aborted_.empty() || from >= to) return;
  auto it = std::lower_bound(aborted_.begin(), aborted_.end(), from,
                             [](const AbortedTransaction& a, int64_t offset) { return a.last_offset < offset; });
  // An entry with first_offset < to has last_offset < to + max_aborted_span_.
  for (; it != aborted_.end() && it->last_offset - max_aborted_span_ < to; ++it) {
    if (it->first_offset < to) visit(*it);
  }
}

// Feeds *index with the transactional batches of segment, oldest first,
// reading only batch headers (and the one record of each control batch).
// REQUIRES the segment's batches were validated (recovery did). Adds the
// bytes read to *bytes_read.
Status scan_transactions(const Segment& segment, TransactionIndex* index, uint64_t* bytes_read);

}  // namespace eddy::storage

// The exactly-once send window of one forwarded partition: which stored
// batches are on their way to the central cluster, with which producer
// sequences, and how far the central cluster acknowledged (the cursor the
// link saves in forward.db). No threads, no I/O: the link reads, sends,
// saves and decides what an error means; this class keeps the numbers.
//
// Invariant (what makes restarts exactly-once): the batches sent but not
// covered by the acknowledged cursor are at most limit() <= max_in_flight
// (Kafka remembers the last 5 batches per producer and partition), all sent
// with the cursor's producer id/epoch and consecutive sequences starting at
// the cursor's next_sequence, their offsets consecutive from the cursor's
// next_offset. With nothing in flight, the next send starts at the cursor.
// After a failure or a restart the link rewinds (or starts again from the
// saved cursor) and resends the same batches with the same sequences; the
// central cluster answers those it already has as duplicates.
//
// Batches sent and never acknowledged may still have been written by the
// central cluster (the answer was lost with the connection). A central
// partition that forgot the producer takes them again as new (Kafka 4
// accepts any sequence from a producer it holds no state for), so after such
// a rewind, and after a restart, the window is unsettled(): the link looks at
// the central log from the cursor's remote_next_offset for them before it
// sends anything (Link::settle), and counts those it finds as acknowledged.
//
// Until the central partition has acknowledged a batch since the last
// rewind, limit() is 1: a partition that holds no state for this producer
// (new, or its state expired) accepts any sequence, so a second batch must
// not overtake a first that fails.
#pragma once

#include <cstdint>
#include <deque>

#include "meta/forward_progress.h"

namespace eddy::forward {

// Kafka's DefaultRecordBatch.incrementSequence: sequences wrap to 0 after
// INT32_MAX.
int32_t increment_sequence(int32_t sequence, int64_t increment);

class SendWindow {
 public:
  // A batch sent and not yet acknowledged.
  struct Batch {
    uint64_t tag;          // the caller's name for it (echoed in its outcome)
    int64_t base_offset;   // its local base offset
    int64_t next_offset;   // the local offset after it
    int32_t base_sequence;
    int32_t next_sequence;  // the sequence after it
    uint64_t bytes;
  };

  // Starts at a saved cursor, under the producer it names: its batches go
  // out under that producer id and epoch with the sequences that follow, as
  // the central partition expects (in a cluster, the cursor may be another
  // node's; the central cluster sees one producer per partition, whichever
  // node forwards it). A cursor without a producer (never sent) starts at
  // sequence 0 under producer, the link's current one.
  // REQUIRES: 1 <= max_in_flight.
  SendWindow(const meta::ForwardCursor& saved, const meta::ForwardProducer& producer, int32_t max_in_flight);

  // What the central cluster acknowledged: what the link saves.
  const meta::ForwardCursor& acked() const { return acked_; }
  // Where the next batch starts, and its sequence.
  int64_t send_offset() const { return send_offset_; }
  int32_t send_sequence() const { return send_sequence_; }

  const std::deque<Batch>& in_flight() const { return in_flight_; }
  bool idle() const { return in_flight_.empty(); }
  // How many batches may be in flight now: 1 until the central partition
  // acknowledged one since the last rewind, then max_in_flight.
  size_t limit() const;
  bool can_send() const { return in_flight_.size() < limit(); }

  // Records that the batch [base_offset, next_offset) goes out now under
  // tag; returns its base sequence. REQUIRES: can_send().
  int32_t send(uint64_t tag, int64_t base_offset, int64_t next_offset, uint64_t bytes);
  // The oldest batch in flight when its tag is tag, else nullptr (a batch
  // sent before a rewind, or an answer out of order).
  const Batch* oldest(uint64_t tag) const;
  // The central cluster wrote the oldest batch in flight (tag) at
  // remote_base_offset (-1: not said): the cursor moves past it. False
  // (nothing changes) when tag is not the oldest.
  bool acknowledge(uint64_t tag, Batch* done, int64_t remote_base_offset = -1);

  // Whether batches beyond the cursor may be in the central log unseen:
  // after a restart from a saved cursor, and after a rewind that forgot
  // batches in flight. settle() says the link has looked.
  bool unsettled() const { return unsettled_; }
  void settle() { unsettled_ = false; }

  // The central offset at or after which this cursor's batches would lie,
  // learnt before the first acknowledgement (the central end when the link
  // looked and found nothing of it): see Link::settle_all. Only while
  // acked().remote_next_offset is unknown (-1).
  void learn_remote_next_offset(int64_t offset) {
    if (acked_.remote_next_offset < 0) acked_.remote_next_offset = offset;
  }

  // Forgets everything in flight: the next send starts at the cursor again,
  // with the same sequence.
  void rewind();
  // A new producer (id, epoch): sequences start again at 0 under it; rewinds.
  void restart_sequences(const meta::ForwardProducer& producer);
  // Moves the cursor to next_offset without sending (the local log dropped
  // what was before it, lost what was after it, or holds a batch that is
  // not sent); dropped_messages are added to the cursor's count. The
  // sequence stays. REQUIRES: idle().
  void move_cursor(int64_t next_offset, int64_t dropped_messages = 0);

 private:
  const int32_t max_in_flight_;
  meta::ForwardCursor acked_;
  int64_t send_offset_ = 0;
  int32_t send_sequence_ = 0;
  std::deque<Batch> in_flight_;
  bool confirmed_ = false;  // acknowledged a batch since the last rewind
  bool unsettled_ = true;   // see unsettled()
};

}  // namespace eddy::forward

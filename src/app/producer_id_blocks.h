// The producer ids a cluster node hands out (InitProducerId): blocks that
// its controller log gave this node, used in order, each id once.
//
// Invariant: ids come only from blocks given to this process. A restart
// starts with none (what was left of a block is skipped), so no id is
// handed out twice, by this node or another, even after a wiped disk: the
// log never gives a block twice (cluster_producer_ids.cc).
//
// The next block is asked for while the current one still has a tenth of
// its ids left (Kafka's brokers prefetch at 90 %), so that InitProducerId
// rarely finds none; then the broker answers COORDINATOR_LOAD_IN_PROGRESS,
// which clients retry, as Kafka's brokers do while their next block is on
// its way.
//
// Not thread-safe: the reactor thread's.
#pragma once

#include <cstdint>
#include <deque>

namespace eddy::app {

class ProducerIdBlocks {
 public:
  // Queues [start, start + len) behind the blocks held. REQUIRES: start >=
  // 0, len >= 1, start + len does not overflow, above every block added.
  void add(int64_t start, int32_t len);
  // Sets *id to the next id; false when none is left.
  bool next(int64_t* id);
  // Whether to ask for another block now: none is queued behind the current
  // one and fewer than a tenth of its ids are left (or none is held).
  bool wants_block() const;
  // Ids left in the blocks held.
  int64_t remaining() const;

 private:
  struct Block {
    int64_t next;  // [next, end): not handed out yet
    int64_t end;
    int32_t len;
  };
  std::deque<Block> blocks_;  // in order; the front one is in use, never empty
};

}  // namespace eddy::app

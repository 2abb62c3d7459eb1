// Producer id allocation (InitProducerId). Ids are reserved in blocks: the
// database holds the start of the next unreserved block; reserving a block
// advances it in one durable transaction, and the ids of the block are then
// handed out from memory.
//
// Invariant: every id returned is greater than every id returned before on
// this database, by this process or an earlier one, even one that crashed or
// lost power: the block was durable before its first id was returned, and a
// restart resumes at the next block, skipping what was left of the last one.
//
// A single node's. A cluster node hands out the blocks its controller log
// gives it instead (app/cluster_producer_ids.cc), so that no two nodes, nor
// a node restarted on a wiped disk, give out the same id.
#pragma once

#include <cstdint>

#include "meta/sqlite_db.h"
#include "port/status.h"

namespace eddy::meta {

class ProducerIdAllocator {
 public:
  static constexpr int32_t kDefaultBlockSize = 1000;

  // REQUIRES: block_size >= 1.
  ProducerIdAllocator(Database* db, int32_t block_size) : db_(db), block_size_(block_size) {}

  // Sets *id to the next producer id (>= 0). io_error when the block cannot
  // be reserved durably (then no id is returned) or the id space is spent.
  Status next(int64_t* id);

 private:
  Status reserve_block();

  Database* db_;
  int32_t block_size_;
  int64_t next_ = 0;  // [next_, end_): reserved in the database, not yet handed out
  int64_t end_ = 0;
};

}  // namespace eddy::meta

// The committed offsets of every consumer group as the metrics listener
// last read them from the meta store, so that a scrape of /metrics or
// /status.json reads eddy.db only when it changed since the last one.
//
// Invalidation: the stamp is SQLite's total_changes() of the meta store's
// connection, the rows inserted, updated or deleted through it since it was
// opened. That connection is the only one to eddy.db (the store holds the
// file locked exclusively) and every writer of committed offsets goes
// through it: OffsetCommit, a transaction's completion (TxnOffsetCommit),
// OffsetDelete, DeleteGroups, expiry. So the copy is never stale, whatever
// wrote; a write to another table (a topic, a producer snapshot) only costs
// one re-read. Reading the stamp is one cached statement that touches no
// table.
//
// REQUIRES: one cache serves one MetaStore for its whole life (a store
// opened again starts its counter at 0), every call on the thread that
// owns it (the reactor thread).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "port/status.h"

namespace eddy::meta {
class MetaStore;
}

namespace eddy::app {

// One committed offset of a group.
struct GroupCommittedOffset {
  std::string group;
  std::string topic;
  int32_t partition = 0;
  int64_t offset = -1;
};

class CommittedOffsetsCache {
 public:
  // Every committed offset in meta, groups sorted, then topic and
  // partition: the copy when meta's connection changed nothing since it
  // was read, else read again. *out stays valid until the next call. On a
  // read error, the error, and *out holds the groups read before it (not
  // kept: the next call reads again).
  Status read(meta::MetaStore& meta, const std::vector<GroupCommittedOffset>** out);

  // How many times read() went to the store (tests, the bench).
  int64_t store_reads() const { return store_reads_; }

 private:
  Status read_store(meta::MetaStore& meta);

  bool valid_ = false;
  int64_t stamp_ = 0;
  int64_t store_reads_ = 0;
  std::vector<GroupCommittedOffset> rows_;
};

}  // namespace eddy::app

// Forward progress: per store-and-forward link and partition, the next local
// offset to send to the central cluster together with the uplink producer's
// id, epoch and next sequence for that partition. A cursor is saved after the
// central cluster acknowledged everything before it. After a restart the link
// resends from the cursor with the same producer id, epoch and sequence, so
// the central cluster recognises what was in flight as duplicates.
//
// Each link also has its current uplink producer (id, epoch). A cursor whose
// producer differs from the link's current one starts again at sequence 0
// (the link got a new producer id; see src/forward/README.md).
//
// Its own database file (<log.dirs>/forward.db, same rules as eddy.db: WAL,
// synchronous=FULL, exclusive lock, refusals never touch the file), written
// by the links' threads: a commit (one fsync per acknowledgement) never
// holds up the reactor, which owns eddy.db. Thread-safe (one mutex).
//
//   std::unique_ptr<ForwardProgress> progress;
//   Status s = ForwardProgress::open(dir + "/forward.db", &progress);
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "meta/sqlite_db.h"
#include "port/mutex.h"
#include "port/status.h"
#include "port/thread_annotations.h"

namespace eddy::meta {

struct ForwardCursor {
  std::string topic;
  int32_t partition = 0;
  int64_t next_offset = 0;
  int64_t producer_id = -1;  // the producer next_sequence belongs to (-1: none yet)
  int16_t producer_epoch = -1;
  int32_t next_sequence = 0;
  // Messages the full policy dropped before they were forwarded (cumulative).
  int64_t dropped_messages = 0;
  // The central offset after the last batch the central cluster
  // acknowledged (-1: not known yet). Batches sent after it and never
  // acknowledged, if the central cluster wrote them, lie at or after it.
  int64_t remote_next_offset = -1;

  friend bool operator==(const ForwardCursor&, const ForwardCursor&) = default;
};

struct ForwardProducer {
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;

  friend bool operator==(const ForwardProducer&, const ForwardProducer&) = default;
};

class ForwardProgress {
 public:
  // Opens (creating) the database at path; the refusals of
  // MetaStore::open. REQUIRES: the parent directory exists. sqlite_vfs: as
  // MetaStore::Options::sqlite_vfs (nullptr: SQLite's default).
  static Status open(const std::string& path, std::unique_ptr<ForwardProgress>* out,
                     const char* sqlite_vfs = nullptr);
  ~ForwardProgress();
  ForwardProgress(const ForwardProgress&) = delete;
  ForwardProgress& operator=(const ForwardProgress&) = delete;
  const std::string& path() const { return path_; }

  // Inserts or replaces the cursors of link and, when not null, its
  // producer, in one transaction. invalid_argument for a negative partition,
  // offset, sequence or count, or a negative producer id or epoch.
  Status save(const std::string& link, const std::vector<ForwardCursor>& cursors,
              const ForwardProducer* producer = nullptr) EXCLUDES(mu_);
  // Every cursor of link, sorted by topic then partition.
  Status load(const std::string& link, std::vector<ForwardCursor>* out) EXCLUDES(mu_);
  // One cursor; not_found when none was saved.
  Status get(const std::string& link, const std::string& topic, int32_t partition, ForwardCursor* out)
      EXCLUDES(mu_);

  // The link's uplink producer; not_found when none was saved.
  Status save_producer(const std::string& link, const ForwardProducer& producer) EXCLUDES(mu_);
  Status load_producer(const std::string& link, ForwardProducer* out) EXCLUDES(mu_);

  // Links having cursors or a producer, sorted (to find links no longer configured).
  Status list_links(std::vector<std::string>* out) EXCLUDES(mu_);
  // Removes the link's cursors and producer.
  Status remove_link(const std::string& link) EXCLUDES(mu_);
  // Removes one cursor (the local partition is gone).
  Status remove_cursor(const std::string& link, const std::string& topic, int32_t partition) EXCLUDES(mu_);

  // Checkpoints and closes; the destructor does it too.
  Status close() EXCLUDES(mu_);

  // For tests: the raw connection. REQUIRES no concurrent use.
  Database* database() { return db_.get(); }

 private:
  explicit ForwardProgress(std::unique_ptr<Database> db) : path_(db->path()), db_(std::move(db)) {}
  Status save_producer_locked(const std::string& link, const ForwardProducer& producer) REQUIRES(mu_);

  const std::string path_;
  port::Mutex mu_;
  // The connection is used with mu_ held (database() aside, for tests).
  std::unique_ptr<Database> db_ PT_GUARDED_BY(mu_);
};

}  // namespace eddy::meta

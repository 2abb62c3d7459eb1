// MetaStore: Eddy's durable metadata, one SQLite database file
// (<log.dirs>/eddy.db), reached only through this room.
//
//   std::unique_ptr<meta::MetaStore> store;
//   Status s = meta::MetaStore::open(dir + "/eddy.db", &store);
//   if (!s.ok()) { EDDY_LOG_ERROR("{}", s.message()); return 1; }  // stop startup
//   meta::NewTopic topic;  topic.name = "sensors";  topic.partition_count = 3;
//   s = store->topics().create(topic, &created);
//
// Durability invariant: when a write call returns ok, its transaction is on
// stable storage and survives a crash or power loss. The database runs in
// WAL mode with synchronous=FULL: every commit fsyncs the WAL. (With
// synchronous=NORMAL a WAL commit is synced only at the next checkpoint, so
// power loss could undo commits already acknowledged to clients: offsets
// they committed, producer id blocks already handed out. Not acceptable.)
// Cost: one fsync per write call; batch APIs take vectors so that one
// request is one transaction.
//
// Refusals on open: a corrupt or unreadable file, another application's
// database, or a schema newer than this binary stop startup with a message
// naming the file; the file is never modified, repaired or recreated.
//
// Exclusive: the store keeps the file locked (SQLite locking_mode=EXCLUSIVE)
// while open; a second open, from this or another process, fails with
// io_error ("in use by another process"). No -shm file is used.
//
// Threading: not thread-safe and needs no locks: REQUIRES every call on the
// reactor thread (or, in general, one thread at a time).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "meta/acl_store.h"
#include "meta/broker_config_store.h"
#include "meta/cluster_store.h"
#include "meta/offset_store.h"
#include "meta/pending_offset_store.h"
#include "meta/producer_id_allocator.h"
#include "meta/producer_snapshot_store.h"
#include "meta/scram_credential_store.h"
#include "meta/sqlite_db.h"
#include "meta/static_member_store.h"
#include "meta/topic_store.h"
#include "meta/transaction_store.h"
#include "port/status.h"

namespace eddy::meta {

class MetaStore {
 public:
  struct Options {
    // Producer ids reserved per durable write; at most this many are skipped
    // after a crash.
    int32_t producer_id_block_size = ProducerIdAllocator::kDefaultBlockSize;
    // The SQLite VFS to open the file with, for tests (the power-cut VFS,
    // tests/unit/meta/power_cut_vfs.h); nullptr: SQLite's default.
    const char* sqlite_vfs = nullptr;
  };

  // Opens the database at path, creating it (with a new random cluster id)
  // when the file is missing or empty, and migrates its schema to this
  // binary's version. REQUIRES: the parent directory exists.
  static Status open(const std::string& path, const Options& options, std::unique_ptr<MetaStore>* out);
  static Status open(const std::string& path, std::unique_ptr<MetaStore>* out) { return open(path, Options(), out); }

  ~MetaStore();
  MetaStore(const MetaStore&) = delete;
  MetaStore& operator=(const MetaStore&) = delete;

  const std::string& path() const { return db_->path(); }
  // 22 characters of URL-safe base64 (Kafka's form), fixed for the
  // database's lifetime.
  const std::string& cluster_id() const { return cluster_id_; }
  // A cluster node takes the id its controller log carries (the cluster's,
  // shared by every node). invalid_argument unless 22 characters.
  Status adopt_cluster_id(const std::string& cluster_id);

  TopicStore& topics() { return topics_; }
  BrokerConfigStore& broker_configs() { return broker_configs_; }
  OffsetStore& offsets() { return offsets_; }
  StaticMemberStore& static_members() { return static_members_; }
  ProducerIdAllocator& producer_ids() { return producer_ids_; }
  ProducerSnapshotStore& producer_snapshots() { return producer_snapshots_; }
  ScramCredentialStore& scram_credentials() { return scram_credentials_; }
  AclStore& acls() { return acls_; }
  ClusterStore& cluster() { return cluster_; }
  TransactionStore& transactions() { return transactions_; }
  PendingOffsetStore& pending_offsets() { return pending_offsets_; }

  // The raw connection, for tests and diagnostics. Writing through it
  // bypasses the room's invariants.
  Database* database() { return db_.get(); }

  // Closes the database, checkpointing the WAL into the main file. Not
  // needed for durability (every commit already is); calling nothing else
  // afterwards. The destructor closes too.
  Status close();

 private:
  MetaStore(std::unique_ptr<Database> db, const Options& options);
  Status load_cluster_id();

  std::unique_ptr<Database> db_;
  std::string cluster_id_;
  TopicStore topics_;
  BrokerConfigStore broker_configs_;
  OffsetStore offsets_;
  StaticMemberStore static_members_;
  ProducerIdAllocator producer_ids_;
  ProducerSnapshotStore producer_snapshots_;
  ScramCredentialStore scram_credentials_;
  AclStore acls_;
  TransactionStore transactions_;
  PendingOffsetStore pending_offsets_;
  ClusterStore cluster_;
};

}  // namespace eddy::meta

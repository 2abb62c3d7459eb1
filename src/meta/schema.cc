#include "meta/schema.h"

#include <cstdio>
#include <string>

#include "meta/uuid.h"
#include "port/log.h"
#include "port/port.h"

namespace eddy::meta {

namespace {

// Text shared by every refusal: Eddy never repairs or recreates the file.
std::string refusal(const SchemaSpec& spec) {
  return std::string(". Eddy left the file unchanged and will not recreate it: restore it from a backup, or move "
                     "it away to start empty (") +
         spec.loss + " are then lost)";
}

// Schema version 1. Names of topics in the per-partition tables are the
// topic names (Kafka's offsets are keyed by name); deleting a topic removes
// its rows from all of them in one transaction (TopicStore::remove).
Status create_schema_v1(Database* db) {
  Status s = db->exec(R"sql(
    CREATE TABLE cluster (
      singleton INTEGER PRIMARY KEY CHECK (singleton = 0),
      cluster_id TEXT NOT NULL CHECK (length(cluster_id) = 22),
      next_producer_id_block INTEGER NOT NULL CHECK (next_producer_id_block >= 0)
    );
    CREATE TABLE topics (
      topic_id BLOB PRIMARY KEY CHECK (length(topic_id) = 16),
      name TEXT NOT NULL UNIQUE,
      partition_count INTEGER NOT NULL CHECK (partition_count > 0),
      replication_factor INTEGER NOT NULL CHECK (replication_factor > 0)
    ) WITHOUT ROWID;
    CREATE TABLE topic_configs (
      topic_id BLOB NOT NULL REFERENCES topics (topic_id) ON DELETE CASCADE,
      key TEXT NOT NULL,
      value TEXT NOT NULL,
      PRIMARY KEY (topic_id, key)
    ) WITHOUT ROWID;
    CREATE TABLE broker_configs (
      key TEXT PRIMARY KEY,
      value TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE committed_offsets (
      group_id TEXT NOT NULL,
      topic TEXT NOT NULL,
      partition INTEGER NOT NULL CHECK (partition >= 0),
      committed_offset INTEGER NOT NULL,
      leader_epoch INTEGER NOT NULL,
      metadata TEXT NOT NULL,
      commit_timestamp_ms INTEGER NOT NULL,
      PRIMARY KEY (group_id, topic, partition)
    ) WITHOUT ROWID;
    CREATE INDEX committed_offsets_by_topic ON committed_offsets (topic);
    CREATE TABLE static_members (
      group_id TEXT NOT NULL,
      group_instance_id TEXT NOT NULL,
      member_id TEXT NOT NULL,
      client_id TEXT NOT NULL,
      client_host TEXT NOT NULL,
      protocol_type TEXT NOT NULL,
      protocol_name TEXT NOT NULL,
      generation_id INTEGER NOT NULL,
      session_timeout_ms INTEGER NOT NULL,
      rebalance_timeout_ms INTEGER NOT NULL,
      subscription BLOB NOT NULL,
      assignment BLOB NOT NULL,
      PRIMARY KEY (group_id, group_instance_id)
    ) WITHOUT ROWID;
    CREATE TABLE producer_snapshots (
      topic TEXT NOT NULL,
      partition INTEGER NOT NULL CHECK (partition >= 0),
      producer_id INTEGER NOT NULL,
      producer_epoch INTEGER NOT NULL,
      last_sequence INTEGER NOT NULL,
      last_offset INTEGER NOT NULL,
      timestamp_ms INTEGER NOT NULL,
      PRIMARY KEY (topic, partition, producer_id)
    ) WITHOUT ROWID;
    CREATE TABLE forward_cursors (
      link TEXT NOT NULL,
      topic TEXT NOT NULL,
      partition INTEGER NOT NULL CHECK (partition >= 0),
      next_offset INTEGER NOT NULL CHECK (next_offset >= 0),
      PRIMARY KEY (link, topic, partition)
    ) WITHOUT ROWID;
  )sql");
  if (!s.ok()) return s;

  // The cluster id is born with the database and never changes.
  Statement st;
  s = db->prepare("INSERT INTO cluster (singleton, cluster_id, next_producer_id_block) VALUES (0, ?, 0)", &st);
  if (!s.ok()) return s;
  st.bind_text(1, Uuid::random().to_string());
  return st.run();
}

// Schema version 2: forward progress moved to its own database
// (forward_progress.cc: written by the forwarding links' threads, so that
// the reactor never waits for their commits). No Eddy release wrote cursors
// here.
Status migrate_to_v2(Database* db) { return db->exec("DROP TABLE forward_cursors"); }

// Schema version 3: SASL. SCRAM credentials (scram_credential_store.h: salt,
// StoredKey, ServerKey and iterations, never a password; mechanism is
// Kafka's id, 1 SCRAM-SHA-256, 2 SCRAM-SHA-512) and the broker's secrets.
Status migrate_to_v3(Database* db) {
  return db->exec(R"sql(
    CREATE TABLE scram_credentials (
      user TEXT NOT NULL CHECK (length(user) > 0),
      mechanism INTEGER NOT NULL CHECK (mechanism IN (1, 2)),
      salt BLOB NOT NULL CHECK (length(salt) > 0),
      stored_key BLOB NOT NULL CHECK (length(stored_key) > 0),
      server_key BLOB NOT NULL CHECK (length(server_key) > 0),
      iterations INTEGER NOT NULL CHECK (iterations >= 4096),
      PRIMARY KEY (user, mechanism)
    ) WITHOUT ROWID;
    CREATE TABLE security_secrets (
      name TEXT PRIMARY KEY,
      value BLOB NOT NULL CHECK (length(value) >= 16)
    ) WITHOUT ROWID;
  )sql");
}

// Schema version 4: authorization. One row per Kafka AclBinding, with
// Kafka's wire codes (meta/acl_store.h); the primary key makes it a set.
Status migrate_to_v4(Database* db) {
  return db->exec(R"sql(
    CREATE TABLE acls (
      resource_type INTEGER NOT NULL CHECK (resource_type BETWEEN 2 AND 7),
      resource_name TEXT NOT NULL CHECK (length(resource_name) > 0),
      pattern_type INTEGER NOT NULL CHECK (pattern_type IN (3, 4)),
      principal TEXT NOT NULL CHECK (length(principal) > 0),
      host TEXT NOT NULL CHECK (length(host) > 0),
      operation INTEGER NOT NULL CHECK (operation BETWEEN 2 AND 14),
      permission INTEGER NOT NULL CHECK (permission IN (2, 3)),
      PRIMARY KEY (resource_type, resource_name, pattern_type, principal, host, operation, permission)
    ) WITHOUT ROWID;
  )sql");
}

// Schema version 5: transactions (meta/transaction_store.h: one row per
// transactional id, Kafka's TransactionState ids, the partitions and groups
// of its current transaction) and the transactional offsets staged until
// their transaction ends (meta/pending_offset_store.h).
Status migrate_to_v5(Database* db) {
  return db->exec(R"sql(
    CREATE TABLE transactions (
      transactional_id TEXT PRIMARY KEY CHECK (length(transactional_id) > 0),
      producer_id INTEGER NOT NULL,
      last_producer_id INTEGER NOT NULL,
      producer_epoch INTEGER NOT NULL,
      last_producer_epoch INTEGER NOT NULL,
      timeout_ms INTEGER NOT NULL CHECK (timeout_ms > 0),
      state INTEGER NOT NULL CHECK (state BETWEEN 0 AND 7),
      start_ms INTEGER NOT NULL,
      last_update_ms INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE transaction_partitions (
      transactional_id TEXT NOT NULL REFERENCES transactions (transactional_id) ON DELETE CASCADE,
      topic TEXT NOT NULL,
      partition INTEGER NOT NULL CHECK (partition >= 0),
      PRIMARY KEY (transactional_id, topic, partition)
    ) WITHOUT ROWID;
    CREATE TABLE transaction_groups (
      transactional_id TEXT NOT NULL REFERENCES transactions (transactional_id) ON DELETE CASCADE,
      group_id TEXT NOT NULL,
      PRIMARY KEY (transactional_id, group_id)
    ) WITHOUT ROWID;
    CREATE TABLE pending_offsets (
      group_id TEXT NOT NULL,
      producer_id INTEGER NOT NULL,
      topic TEXT NOT NULL,
      partition INTEGER NOT NULL CHECK (partition >= 0),
      committed_offset INTEGER NOT NULL,
      leader_epoch INTEGER NOT NULL,
      metadata TEXT NOT NULL,
      commit_timestamp_ms INTEGER NOT NULL,
      PRIMARY KEY (group_id, producer_id, topic, partition)
    ) WITHOUT ROWID;
    CREATE INDEX pending_offsets_by_topic ON pending_offsets (topic);
  )sql");
}

// Schema version 6: a cluster node's share of the controller log's state
// (cluster_store.h). Empty on a single node.
Status migrate_to_v6(Database* db) {
  return db->exec(R"sql(
    CREATE TABLE cluster_brokers (
      node_id INTEGER PRIMARY KEY CHECK (node_id >= 0),
      rack TEXT
    );
    CREATE TABLE cluster_broker_endpoints (
      node_id INTEGER NOT NULL REFERENCES cluster_brokers (node_id) ON DELETE CASCADE,
      listener TEXT NOT NULL,
      host TEXT NOT NULL,
      port INTEGER NOT NULL CHECK (port BETWEEN 0 AND 65535),
      security_protocol INTEGER NOT NULL,
      PRIMARY KEY (node_id, listener)
    ) WITHOUT ROWID;
    CREATE TABLE partition_replicas (
      topic_id BLOB NOT NULL REFERENCES topics (topic_id) ON DELETE CASCADE,
      partition INTEGER NOT NULL CHECK (partition >= 0),
      replicas TEXT NOT NULL,
      PRIMARY KEY (topic_id, partition)
    ) WITHOUT ROWID;
    CREATE TABLE controller_applied (
      singleton INTEGER PRIMARY KEY CHECK (singleton = 0),
      next_offset INTEGER NOT NULL CHECK (next_offset >= 0),
      cluster_id TEXT CHECK (cluster_id IS NULL OR length(cluster_id) = 22)
    );
  )sql");
}

// Schema version 7: what the controller log carries of replicated partitions
// (cluster_store.h): the store-and-forward cursors (ForwardCursorsRecord),
// how far each link got on each partition, whichever node forwarded it; and
// each partition's leader, epoch and ISR as its leader published them
// (PartitionLeadersRecord). Empty on a single node.
Status migrate_to_v7(Database* db) {
  return db->exec(R"sql(
    CREATE TABLE cluster_forward_cursors (
      link TEXT NOT NULL,
      topic_id BLOB NOT NULL REFERENCES topics (topic_id) ON DELETE CASCADE,
      partition INTEGER NOT NULL CHECK (partition >= 0),
      topic TEXT NOT NULL,
      next_offset INTEGER NOT NULL CHECK (next_offset >= 0),
      producer_id INTEGER NOT NULL,
      producer_epoch INTEGER NOT NULL,
      next_sequence INTEGER NOT NULL CHECK (next_sequence >= 0),
      remote_next_offset INTEGER NOT NULL,
      dropped_messages INTEGER NOT NULL CHECK (dropped_messages >= 0),
      PRIMARY KEY (link, topic_id, partition)
    ) WITHOUT ROWID;
    CREATE TABLE partition_leaders (
      topic_id BLOB NOT NULL REFERENCES topics (topic_id) ON DELETE CASCADE,
      partition INTEGER NOT NULL CHECK (partition >= 0),
      leader INTEGER NOT NULL,
      leader_epoch INTEGER NOT NULL,
      isr TEXT NOT NULL,
      PRIMARY KEY (topic_id, partition)
    ) WITHOUT ROWID;
  )sql");
}

// Schema version 8: the nodes the controller leader fenced (cluster_store.h,
// NodeFencingRecord): a row while the node is fenced, none otherwise. Not
// tied to cluster_brokers: a node that never registered can be fenced too.
// Empty on a single node.
Status migrate_to_v8(Database* db) {
  return db->exec(R"sql(
    CREATE TABLE cluster_fenced_nodes (
      node_id INTEGER PRIMARY KEY CHECK (node_id >= 0)
    ) WITHOUT ROWID;
  )sql");
}

// Append only: migration i takes the schema from version i to i + 1.
constexpr Migration kMigrations[] = {
    {1, create_schema_v1},
    {2, migrate_to_v2},
    {3, migrate_to_v3},
    {4, migrate_to_v4},
    {5, migrate_to_v5},
    {6, migrate_to_v6},
    {7, migrate_to_v7},
    {8, migrate_to_v8},
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kSchemaVersion,
              "one migration per schema version");

// The forward progress database (forward_progress.h), version 1: per link
// its uplink producer, per (link, partition) the cursor.
Status create_forward_schema_v1(Database* db) {
  return db->exec(R"sql(
    CREATE TABLE forward_links (
      link TEXT PRIMARY KEY,
      producer_id INTEGER NOT NULL CHECK (producer_id >= 0),
      producer_epoch INTEGER NOT NULL CHECK (producer_epoch >= 0)
    ) WITHOUT ROWID;
    CREATE TABLE forward_cursors (
      link TEXT NOT NULL,
      topic TEXT NOT NULL,
      partition INTEGER NOT NULL CHECK (partition >= 0),
      next_offset INTEGER NOT NULL CHECK (next_offset >= 0),
      producer_id INTEGER NOT NULL,
      producer_epoch INTEGER NOT NULL,
      next_sequence INTEGER NOT NULL CHECK (next_sequence >= 0),
      dropped_messages INTEGER NOT NULL CHECK (dropped_messages >= 0),
      PRIMARY KEY (link, topic, partition)
    ) WITHOUT ROWID;
  )sql");
}

// Version 2: each cursor also keeps the central offset after the last batch
// the central cluster acknowledged (-1: not known), where the link looks for
// batches it sent but never saw acknowledged (src/forward/README.md, "Beyond
// the central cluster's memory").
Status migrate_forward_to_v2(Database* db) {
  return db->exec(
      "ALTER TABLE forward_cursors ADD COLUMN remote_next_offset INTEGER NOT NULL DEFAULT -1 "
      "CHECK (remote_next_offset >= -1)");
}

constexpr Migration kForwardMigrations[] = {
    {1, create_forward_schema_v1},
    {2, migrate_forward_to_v2},
};

// s's message without the leading "<path>: " that Database::error puts there.
std::string detail(const Status& s, const std::string& path) {
  const std::string& m = s.message();
  if (m.compare(0, path.size() + 2, path + ": ") == 0) return m.substr(path.size() + 2);
  return m;
}

Status set_pragma(Database* db, const char* name, int64_t value) {
  char sql[64];
  std::snprintf(sql, sizeof(sql), "PRAGMA %s = %lld", name, static_cast<long long>(value));
  return db->exec(sql);
}

}  // namespace

const SchemaSpec& metadata_schema() {
  static const SchemaSpec spec{kApplicationId, "metadata database", "topics, committed offsets, producer ids, SCRAM credentials and ACLs",
                               kMigrations, sizeof(kMigrations) / sizeof(kMigrations[0])};
  return spec;
}

const SchemaSpec& forward_progress_schema() {
  static const SchemaSpec spec{kForwardApplicationId, "forward progress database",
                               "how far each link forwarded (links then resend from the start of each partition)",
                               kForwardMigrations, sizeof(kForwardMigrations) / sizeof(kForwardMigrations[0])};
  return spec;
}

Status inspect_database(Database* db, const SchemaSpec& spec, int64_t* version) {
  const std::string kRefusal = refusal(spec);
  const std::string& path = db->path();
  // quick_check reads every page (cheap at metadata sizes) and is the first
  // access: an unreadable file or a file that is not SQLite fails here.
  std::string verdict;
  Status s = db->query_text("PRAGMA quick_check(1)", &verdict);
  if (!s.ok()) {
    std::string message = path + ": cannot read the " + spec.what + " (" + detail(s, path) + ")";
    if (s.is_corruption()) return Status::corruption(message + kRefusal);
    return s.with_message(std::move(message));  // locked, I/O: nothing is wrong with the file itself
  }
  if (verdict != "ok") {
    for (char& c : verdict) {
      if (c == '\n') c = ' ';  // one log line
    }
    return Status::corruption(path + ": the " + spec.what + " is corrupt (integrity check: " + verdict + ")" +
                              kRefusal);
  }

  int64_t application_id = 0;
  int64_t user_version = 0;
  int64_t objects = 0;
  s = db->query_int64("PRAGMA application_id", &application_id);
  if (s.ok()) s = db->query_int64("PRAGMA user_version", &user_version);
  if (s.ok()) s = db->query_int64("SELECT count(*) FROM sqlite_master", &objects);
  if (!s.ok()) {
    return Status::corruption(path + ": cannot read the " + spec.what + " (" + detail(s, path) + ")" + kRefusal);
  }

  const bool foreign = (application_id != 0 && application_id != spec.application_id) ||
                       (application_id == 0 && (user_version != 0 || objects != 0)) ||
                       (user_version == 0 && objects != 0);
  if (foreign) {
    char id[16];
    std::snprintf(id, sizeof(id), "0x%08llx", static_cast<unsigned long long>(application_id));
    return Status::corruption(path + ": not an Eddy " + spec.what + " (SQLite application_id " + id +
                              ", user_version " + std::to_string(user_version) + ", " + std::to_string(objects) +
                              " schema objects)" + kRefusal);
  }
  if (user_version > spec.version()) {
    return Status::not_supported(path + ": the " + spec.what + " schema version is " +
                                 std::to_string(user_version) + ", newer than this Eddy understands (" +
                                 std::to_string(spec.version()) +
                                 "); it was written by a newer Eddy. Run that version (or newer) on this data "
                                 "directory; Eddy left the file unchanged");
  }
  if (user_version < 0) {
    return Status::corruption(path + ": invalid " + spec.what + " schema version " + std::to_string(user_version) +
                              kRefusal);
  }
  *version = user_version;
  return Status();
}

Status migrate_database(Database* db, const SchemaSpec& spec, int64_t from_version) {
  for (int64_t version = from_version; version < spec.version(); ++version) {
    const Migration& migration = spec.migrations[version];
    Transaction tx(db);
    Status s = tx.begin();
    if (s.ok()) s = migration.apply(db);
    if (s.ok() && version == 0) s = set_pragma(db, "application_id", spec.application_id);
    if (s.ok()) s = set_pragma(db, "user_version", migration.to_version);
    if (s.ok()) s = tx.commit();
    if (!s.ok()) {
      return s.with_message(s.message() + " (while migrating the " + spec.what + " schema from version " +
                            std::to_string(version) + " to " + std::to_string(migration.to_version) +
                            "; the database stays at version " + std::to_string(version) + ")");
    }
    EDDY_LOG_INFO("meta: {}: schema migrated from version {} to {}", db->path(),
                  version, migration.to_version);
  }
  return Status();
}

namespace {

// Connection settings, applied on every open before any write.
Status configure_connection(Database* db) {
  // WAL: a commit appends its pages to one file and syncs it once; a torn
  // append after a crash is recognised (checksums) and ignored on recovery.
  std::string mode;
  Status s = db->query_text("PRAGMA journal_mode = WAL", &mode);
  if (!s.ok()) return s;
  if (mode != "wal") {
    return Status::io_error(db->path() + ": cannot switch the database to WAL mode (journal_mode is '" + mode +
                            "'); is the file system read-only?");
  }
  // See meta_store.h: every commit durable before it returns.
  // cache_size: 1 MiB of page cache is plenty for metadata on a 64 MiB board.
  // journal_size_limit: truncate the WAL back to 4 MiB after a checkpoint.
  // cell_size_check: detect damaged b-tree cells early instead of misreading.
  return db->exec(
      "PRAGMA synchronous = FULL;"
      "PRAGMA foreign_keys = ON;"
      "PRAGMA cache_size = -1024;"
      "PRAGMA journal_size_limit = 4194304;"
      "PRAGMA cell_size_check = ON;");
}

}  // namespace

namespace {

// "dir/eddy.db" -> "dir"; "eddy.db" -> ".".
std::string parent_directory(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

Status open_database(const std::string& path, const SchemaSpec& spec, std::unique_ptr<Database>* out,
                     int64_t* found_version, const char* vfs) {
  std::unique_ptr<Database> db;
  Status s = Database::open(path, &db, vfs);
  if (!s.ok()) return s;
  // Exclusive locking, set before the first access: the connection holds
  // the file lock until it closes, so a second process (another Eddy on the
  // same data directory) is refused instead of sharing the database, and the
  // WAL index lives in heap memory, not in a mmap'ed -shm file (flash file
  // systems such as JFFS2 lack shared writable mmap).
  s = db->exec("PRAGMA locking_mode = EXCLUSIVE");
  if (!s.ok()) return s;
  // Read-only checks first: a file we refuse is never written to.
  s = inspect_database(db.get(), spec, found_version);
  if (!s.ok()) return s;
  s = configure_connection(db.get());
  if (!s.ok()) return s;
  s = migrate_database(db.get(), spec, *found_version);
  if (!s.ok()) return s;
  if (*found_version == 0) {
    // A new database file: SQLite syncs the directory when it creates its
    // WAL, but not for the main file, whose directory entry a power cut
    // could otherwise take away with everything committed to it.
    if (std::error_code ec = port::sync_directory(parent_directory(path))) {
      return Status::io_error(path + ": cannot sync the directory of the new database: " + ec.message());
    }
  }
  *out = std::move(db);
  return Status();
}

}  // namespace eddy::meta

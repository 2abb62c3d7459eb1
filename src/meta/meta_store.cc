#include "meta/meta_store.h"

#include "meta/schema.h"
#include "port/log.h"

namespace eddy::meta {

namespace {

// Connection settings, applied on every open before any write.
Status configure_connection(Database* db) {
  // WAL: a commit appends its pages to one file and syncs it once; a torn
  // append after a crash is recognised (checksums) and ignored on recovery.
  std::string mode;
  Status s = db->query_text("PRAGMA journal_mode = WAL", &mode);
  if (!s.ok()) return s;
  if (mode != "wal") {
    return Status::io_error(db->path() + ": cannot switch the metadata database to WAL mode (journal_mode is '" +
                            mode + "'); is the file system read-only?");
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

MetaStore::MetaStore(std::unique_ptr<Database> db, const Options& options)
    : db_(std::move(db)),
      topics_(db_.get()),
      broker_configs_(db_.get()),
      offsets_(db_.get()),
      static_members_(db_.get()),
      producer_ids_(db_.get(), options.producer_id_block_size),
      producer_snapshots_(db_.get()),
      forward_cursors_(db_.get()) {}

MetaStore::~MetaStore() {
  Status s = close();
  if (!s.ok()) EDDY_LOG_WARN("meta: %s", s.message().c_str());
}

Status MetaStore::open(const std::string& path, const Options& options, std::unique_ptr<MetaStore>* out) {
  if (options.producer_id_block_size < 1) {
    return Status::invalid_argument("producer id block size must be at least 1");
  }
  std::unique_ptr<Database> db;
  Status s = Database::open(path, &db);
  if (!s.ok()) return s;

  // Exclusive locking, set before the first access: the connection holds
  // the file lock until it closes, so a second process (another Eddy on the
  // same data directory) is refused instead of sharing the database, and the
  // WAL index lives in heap memory, not in a mmap'ed -shm file (flash file
  // systems such as JFFS2 lack shared writable mmap).
  s = db->exec("PRAGMA locking_mode = EXCLUSIVE");
  if (!s.ok()) return s;

  // Read-only checks first: a file we refuse is never written to.
  int64_t version = 0;
  s = inspect_database(db.get(), &version);
  if (!s.ok()) return s;
  s = configure_connection(db.get());
  if (!s.ok()) return s;
  s = migrate_database(db.get(), version);
  if (!s.ok()) return s;

  std::unique_ptr<MetaStore> store(new MetaStore(std::move(db), options));
  s = store->load_cluster_id();
  if (!s.ok()) return s;
  if (version == 0) {
    EDDY_LOG_INFO("meta: created metadata database %s, cluster id %s", path.c_str(), store->cluster_id_.c_str());
  }
  *out = std::move(store);
  return Status();
}

Status MetaStore::load_cluster_id() {
  Status s = db_->query_text("SELECT cluster_id FROM cluster WHERE singleton = 0", &cluster_id_);
  if (s.is_not_found()) return Status::corruption(db_->path() + ": the cluster row is missing");
  return s;
}

Status MetaStore::close() { return db_ == nullptr ? Status() : db_->close(); }

}  // namespace eddy::meta

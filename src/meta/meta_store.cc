#include "meta/meta_store.h"

#include "meta/schema.h"
#include "port/log.h"

namespace eddy::meta {


MetaStore::MetaStore(std::unique_ptr<Database> db, const Options& options)
    : db_(std::move(db)),
      topics_(db_.get()),
      broker_configs_(db_.get()),
      offsets_(db_.get()),
      static_members_(db_.get()),
      producer_ids_(db_.get(), options.producer_id_block_size),
      producer_snapshots_(db_.get()),
      scram_credentials_(db_.get()),
      acls_(db_.get()),
      transactions_(db_.get()),
      pending_offsets_(db_.get()),
      cluster_(db_.get()) {}

MetaStore::~MetaStore() {
  Status s = close();
  if (!s.ok()) EDDY_LOG_WARN("meta: {}", s.message());
}

Status MetaStore::open(const std::string& path, const Options& options, std::unique_ptr<MetaStore>* out) {
  if (options.producer_id_block_size < 1) {
    return Status::invalid_argument("producer id block size must be at least 1");
  }
  std::unique_ptr<Database> db;
  int64_t version = 0;
  Status s = open_database(path, metadata_schema(), &db, &version, options.sqlite_vfs);
  if (!s.ok()) return s;

  std::unique_ptr<MetaStore> store(new MetaStore(std::move(db), options));
  s = store->load_cluster_id();
  if (!s.ok()) return s;
  if (version == 0) {
    EDDY_LOG_INFO("meta: created metadata database {}, cluster id {}", path, store->cluster_id_);
  }
  *out = std::move(store);
  return Status();
}

Status MetaStore::load_cluster_id() {
  Status s = db_->query_text("SELECT cluster_id FROM cluster WHERE singleton = 0", &cluster_id_);
  if (s.is_not_found()) return Status::corruption(db_->path() + ": the cluster row is missing");
  return s;
}

Status MetaStore::adopt_cluster_id(const std::string& cluster_id) {
  if (cluster_id.size() != 22) return Status::invalid_argument("cluster id '" + cluster_id + "' is not 22 characters");
  if (cluster_id == cluster_id_) return Status();
  Statement st;
  Status s = db_->prepare("UPDATE cluster SET cluster_id = ? WHERE singleton = 0", &st);
  if (!s.ok()) return s;
  st.bind_text(1, cluster_id);
  if (s = st.run(); !s.ok()) return s;
  cluster_id_ = cluster_id;
  return Status();
}

Status MetaStore::close() { return db_ == nullptr ? Status() : db_->close(); }

}  // namespace eddy::meta

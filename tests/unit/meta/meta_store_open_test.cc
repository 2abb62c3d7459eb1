// Opening the metadata database: creation, reopening, schema versions, and
// refusing files Eddy must not touch.
#include <gtest/gtest.h>

#include <filesystem>

#include "meta/meta_store.h"
#include "meta/schema.h"
#include "meta/sqlite_db.h"
#include "meta/uuid.h"
#include "port/file_interceptor.h"
#include "tests/unit/meta/meta_test_util.h"

namespace eddy::meta {
namespace {

using testing::open_or_die;
using testing::read_bytes;
using testing::write_bytes;

int64_t query(Database* db, const char* sql) {
  int64_t value = -1;
  Status s = db->query_int64(sql, &value);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return value;
}

void run_sql(const std::string& path, const char* sql) {
  std::unique_ptr<Database> db;
  ASSERT_TRUE(Database::open(path, &db).ok());
  Status s = db->exec(sql);
  ASSERT_TRUE(s.ok()) << s.to_string();
  ASSERT_TRUE(db->close().ok());
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Records the directories synced while installed.
class DirectorySyncs : public port::FileInterceptor {
 public:
  DirectorySyncs() { port::set_file_interceptor(this); }
  ~DirectorySyncs() override { port::set_file_interceptor(nullptr); }
  void lock() override { mu_.lock(); }
  void unlock() override { mu_.unlock(); }
  std::error_code before(const port::FileEvent&) override { return {}; }
  void after(const port::FileEvent& event, const std::error_code& result) override {
    if (event.op == port::FileOp::kSyncDirectory && !result) synced_.push_back(*event.path);
  }
  // REQUIRES: no intercepted operation runs meanwhile.
  const std::vector<std::string>& synced() const { return synced_; }

 private:
  std::mutex mu_;
  std::vector<std::string> synced_;
};

TEST(MetaStoreOpen, CreatingTheDatabaseSyncsItsDirectoryAndReopeningDoesNot) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("eddy.db");
  {
    DirectorySyncs syncs;
    auto store = open_or_die(path);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(syncs.synced(), std::vector<std::string>{dir.path()});
  }
  DirectorySyncs syncs;
  auto store = open_or_die(path);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(syncs.synced().empty());
}

TEST(MetaStoreOpen, CreatesDatabaseWithClusterIdAndSettings) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("eddy.db");
  auto store = open_or_die(path);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(port::path_exists(path));
  EXPECT_EQ(store->path(), path);

  const std::string& id = store->cluster_id();
  ASSERT_EQ(id.size(), 22u);
  Uuid parsed;
  EXPECT_TRUE(Uuid::parse(id, &parsed)) << id;
  EXPECT_NE(id[0], '-');

  Database* db = store->database();
  std::string mode;
  ASSERT_TRUE(db->query_text("PRAGMA journal_mode", &mode).ok());
  EXPECT_EQ(mode, "wal");
  EXPECT_EQ(query(db, "PRAGMA synchronous"), 2);  // FULL
  EXPECT_EQ(query(db, "PRAGMA foreign_keys"), 1);
  EXPECT_EQ(query(db, "PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(query(db, "PRAGMA application_id"), kApplicationId);
}

TEST(MetaStoreOpen, ReopenKeepsClusterId) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("eddy.db");
  std::string first;
  {
    auto store = open_or_die(path);
    first = store->cluster_id();
  }
  auto again = open_or_die(path);
  EXPECT_EQ(again->cluster_id(), first);
  // A different database gets a different cluster id.
  auto other = open_or_die(dir.file("other.db"));
  EXPECT_NE(other->cluster_id(), first);
}

TEST(MetaStoreOpen, EmptyFileIsMigratedFromVersionZero) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("eddy.db");
  write_bytes(path, "");
  auto store = open_or_die(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(query(store->database(), "PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(store->cluster_id().size(), 22u);
  EXPECT_EQ(query(store->database(), "SELECT count(*) FROM topics"), 0);
}

TEST(MetaStoreOpen, VersionOneIsMigrated) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("eddy.db");
  {
    auto store = open_or_die(path);
    ASSERT_TRUE(store->close().ok());
  }
  // Turn the file back into a version 1 database (as Eddy 0.1 wrote it).
  run_sql(path,
          "DROP TABLE cluster_fenced_nodes; DROP TABLE cluster_forward_cursors; DROP TABLE partition_leaders;"
          "DROP TABLE cluster_broker_endpoints; DROP TABLE cluster_brokers; DROP TABLE partition_replicas;"
          "DROP TABLE controller_applied;"
          "DROP TABLE pending_offsets; DROP TABLE transaction_groups; DROP TABLE transaction_partitions;"
          "DROP TABLE transactions;"
          "DROP TABLE acls; DROP TABLE scram_credentials; DROP TABLE security_secrets;"
          "CREATE TABLE forward_cursors (link TEXT NOT NULL, topic TEXT NOT NULL, partition INTEGER NOT NULL, "
          "next_offset INTEGER NOT NULL, PRIMARY KEY (link, topic, partition)) WITHOUT ROWID;"
          "PRAGMA user_version = 1;");
  auto store = open_or_die(path);
  EXPECT_EQ(query(store->database(), "PRAGMA user_version"), kSchemaVersion);
  // Forward progress moved to forward.db.
  EXPECT_EQ(query(store->database(), "SELECT count(*) FROM sqlite_master WHERE name = 'forward_cursors'"), 0);
  // Version 3 added the SASL tables.
  EXPECT_EQ(query(store->database(), "SELECT count(*) FROM sqlite_master WHERE name = 'scram_credentials'"), 1);
}

TEST(MetaStoreOpen, VersionThreeIsMigratedKeepingCredentials) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("eddy.db");
  {
    auto store = open_or_die(path);
    ScramCredentialRow row;
    row.user = "alice";
    row.mechanism = 2;
    row.salt.assign(16, 1);
    row.stored_key.assign(64, 2);
    row.server_key.assign(64, 3);
    row.iterations = 4096;
    ASSERT_TRUE(store->scram_credentials().upsert(row).ok());
    ASSERT_TRUE(store->close().ok());
  }
  // Turn the file back into a version 3 database (as Eddy with SASL wrote it).
  run_sql(path,
          "DROP TABLE cluster_fenced_nodes; DROP TABLE cluster_forward_cursors; DROP TABLE partition_leaders;"
          "DROP TABLE cluster_broker_endpoints; DROP TABLE cluster_brokers; DROP TABLE partition_replicas;"
          "DROP TABLE controller_applied;"
          "DROP TABLE pending_offsets; DROP TABLE transaction_groups; DROP TABLE transaction_partitions;"
          "DROP TABLE transactions; DROP TABLE acls; PRAGMA user_version = 3;");
  auto store = open_or_die(path);
  EXPECT_EQ(query(store->database(), "PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(query(store->database(), "SELECT count(*) FROM scram_credentials"), 1);
  std::vector<AclRow> acls;
  ASSERT_TRUE(store->acls().list(&acls).ok());
  EXPECT_TRUE(acls.empty());
  AclRow acl{2, "sensors", 3, "User:alice", "*", 4, 3};
  ASSERT_TRUE(store->acls().add({acl}).ok());
  ASSERT_TRUE(store->acls().list(&acls).ok());
  EXPECT_EQ(acls, std::vector<AclRow>{acl});
}

TEST(MetaStoreOpen, VersionFourIsMigratedKeepingOffsetsAndAcls) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("eddy.db");
  AclRow acl{2, "sensors", 3, "User:alice", "*", 4, 3};
  {
    auto store = open_or_die(path);
    ASSERT_TRUE(store->acls().add({acl}).ok());
    ASSERT_TRUE(store->offsets().commit("g", {{"t", 0, 42, -1, "", 1}}).ok());
    ASSERT_TRUE(store->close().ok());
  }
  // Turn the file back into a version 4 database (as Eddy with ACLs wrote it).
  run_sql(path,
          "DROP TABLE cluster_fenced_nodes; DROP TABLE cluster_forward_cursors; DROP TABLE partition_leaders;"
          "DROP TABLE cluster_broker_endpoints; DROP TABLE cluster_brokers; DROP TABLE partition_replicas;"
          "DROP TABLE controller_applied;"
          "DROP TABLE pending_offsets; DROP TABLE transaction_groups; DROP TABLE transaction_partitions;"
          "DROP TABLE transactions; PRAGMA user_version = 4;");
  auto store = open_or_die(path);
  EXPECT_EQ(query(store->database(), "PRAGMA user_version"), kSchemaVersion);
  std::vector<AclRow> acls;
  ASSERT_TRUE(store->acls().list(&acls).ok());
  EXPECT_EQ(acls, std::vector<AclRow>{acl});
  std::vector<CommittedOffset> offsets;
  ASSERT_TRUE(store->offsets().fetch_all("g", &offsets).ok());
  ASSERT_EQ(offsets.size(), 1u);
  EXPECT_EQ(offsets[0].offset, 42);
  // Version 5 added the transaction tables, empty.
  std::vector<TransactionRow> transactions;
  ASSERT_TRUE(store->transactions().load_all(&transactions).ok());
  EXPECT_TRUE(transactions.empty());
}

TEST(MetaStoreOpen, VersionFiveIsMigratedKeepingTopicsWithoutReplicas) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("eddy.db");
  {
    auto store = open_or_die(path);
    ASSERT_TRUE(store->topics().create(testing::new_topic("kept", 2), nullptr).ok());
    ASSERT_TRUE(store->close().ok());
  }
  // Turn the file back into a version 5 database (before clusters).
  run_sql(path,
          "DROP TABLE cluster_fenced_nodes; DROP TABLE cluster_forward_cursors; DROP TABLE partition_leaders;"
          "DROP TABLE cluster_broker_endpoints; DROP TABLE cluster_brokers; DROP TABLE partition_replicas;"
          "DROP TABLE controller_applied; PRAGMA user_version = 5;");
  auto store = open_or_die(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(query(store->database(), "PRAGMA user_version"), kSchemaVersion);
  TopicRecord kept;
  ASSERT_TRUE(store->topics().get("kept", &kept).ok());
  std::map<int32_t, std::vector<int32_t>> replicas;
  ASSERT_TRUE(store->cluster().replicas(kept.id, &replicas).ok());
  EXPECT_TRUE(replicas.empty()) << "a single node's topics name no replicas";
  int64_t applied = -1;
  ASSERT_TRUE(store->cluster().applied_offset(&applied).ok());
  EXPECT_EQ(applied, 0);
}

TEST(MetaStoreOpen, VersionSixIsMigratedWithTheReplicatedPartitionsTables) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("eddy.db");
  {
    auto store = open_or_die(path);
    ASSERT_TRUE(store->topics().create(testing::new_topic("kept", 1), nullptr).ok());
    ASSERT_TRUE(store->close().ok());
  }
  // Turn the file back into a version 6 database (before issue 16's records).
  run_sql(path,
          "DROP TABLE cluster_fenced_nodes; DROP TABLE cluster_forward_cursors; DROP TABLE partition_leaders;"
          "PRAGMA user_version = 6;");
  auto store = open_or_die(path);
  EXPECT_EQ(query(store->database(), "PRAGMA user_version"), kSchemaVersion);
  TopicRecord kept;
  ASSERT_TRUE(store->topics().get("kept", &kept).ok());
  bool stored = false;
  ASSERT_TRUE(store->cluster().merge_partition_leader({kept.id, 0, 2, 5, {1, 2}}, &stored).ok());
  EXPECT_TRUE(stored);
  std::vector<PartitionLeader> leaders;
  ASSERT_TRUE(store->cluster().partition_leaders(&leaders).ok());
  ASSERT_EQ(leaders.size(), 1u);
  EXPECT_EQ(leaders[0].isr, (std::vector<int32_t>{1, 2}));
}

TEST(MetaStoreOpen, VersionSevenIsMigratedWithNoNodeFenced) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("eddy.db");
  {
    auto store = open_or_die(path);
    TopicRecord kept;
    ASSERT_TRUE(store->topics().create(testing::new_topic("kept", 1), &kept).ok());
    ASSERT_TRUE(store->cluster().register_broker({2, std::nullopt, {{"PLAINTEXT", "n2", 9092, 0}}}).ok());
    bool stored = false;
    ASSERT_TRUE(store->cluster().merge_partition_leader({kept.id, 0, 2, 5, {1, 2}}, &stored).ok());
    ASSERT_TRUE(stored);
    ASSERT_TRUE(store->close().ok());
  }
  // Turn the file back into a version 7 database (before fenced nodes).
  run_sql(path, "DROP TABLE cluster_fenced_nodes; PRAGMA user_version = 7;");
  {
    auto store = open_or_die(path);
    EXPECT_EQ(query(store->database(), "PRAGMA user_version"), kSchemaVersion);
    // What version 7 held is still there; nobody is fenced.
    std::vector<ClusterBroker> brokers;
    ASSERT_TRUE(store->cluster().brokers(&brokers).ok());
    ASSERT_EQ(brokers.size(), 1u);
    EXPECT_EQ(brokers[0].node_id, 2);
    std::vector<PartitionLeader> leaders;
    ASSERT_TRUE(store->cluster().partition_leaders(&leaders).ok());
    ASSERT_EQ(leaders.size(), 1u);
    std::vector<int32_t> fenced = {99};
    ASSERT_TRUE(store->cluster().fenced_nodes(&fenced).ok());
    EXPECT_TRUE(fenced.empty());
    ASSERT_TRUE(store->cluster().set_fenced(3, true).ok());
    ASSERT_TRUE(store->close().ok());
  }
  auto store = open_or_die(path);
  std::vector<int32_t> fenced;
  ASSERT_TRUE(store->cluster().fenced_nodes(&fenced).ok());
  EXPECT_EQ(fenced, (std::vector<int32_t>{3})) << "kept across a restart";
}

TEST(MetaStoreOpen, NewerSchemaIsRefusedAndLeftUntouched) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("eddy.db");
  open_or_die(path)->close().ok();
  const std::string newer = "PRAGMA user_version = " + std::to_string(kSchemaVersion + 1);
  run_sql(path, newer.c_str());
  const std::string before = read_bytes(path);

  std::unique_ptr<MetaStore> store;
  Status s = MetaStore::open(path, &store);
  ASSERT_TRUE(s.is_not_supported()) << s.to_string();
  EXPECT_EQ(store, nullptr);
  EXPECT_TRUE(contains(s.message(), path)) << s.message();
  EXPECT_TRUE(contains(s.message(), "newer")) << s.message();
  EXPECT_TRUE(contains(s.message(), std::to_string(kSchemaVersion + 1))) << s.message();
  EXPECT_EQ(read_bytes(path), before);
}

TEST(MetaStoreOpen, GarbageFileIsRefusedAndLeftUntouched) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("eddy.db");
  std::string garbage;
  uint32_t x = 12345;
  for (int i = 0; i < 3 * 4096; ++i) {
    x = x * 1103515245u + 12345u;
    garbage += static_cast<char>(x >> 24);
  }
  write_bytes(path, garbage);

  for (int attempt = 0; attempt < 2; ++attempt) {  // refusing twice: nothing was "fixed" in between
    std::unique_ptr<MetaStore> store;
    Status s = MetaStore::open(path, &store);
    ASSERT_TRUE(s.is_corruption()) << s.to_string();
    EXPECT_EQ(store, nullptr);
    EXPECT_TRUE(contains(s.message(), path)) << s.message();
    EXPECT_TRUE(contains(s.message(), "not a database")) << s.message();
    EXPECT_TRUE(contains(s.message(), "will not recreate")) << s.message();
    EXPECT_EQ(read_bytes(path), garbage);
  }
  EXPECT_FALSE(port::path_exists(path + "-wal"));
}

TEST(MetaStoreOpen, TextFileIsRefused) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("eddy.db");
  const std::string text = "log.dirs=/var/lib/eddy\n";  // e.g. a config file at the wrong path
  write_bytes(path, text);
  std::unique_ptr<MetaStore> store;
  Status s = MetaStore::open(path, &store);
  EXPECT_TRUE(s.is_corruption()) << s.to_string();
  EXPECT_EQ(read_bytes(path), text);
}

TEST(MetaStoreOpen, DamagedPageIsRefusedAndLeftUntouched) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("eddy.db");
  {
    auto store = open_or_die(path);
    std::vector<CommittedOffset> offsets;
    for (int p = 0; p < 400; ++p) offsets.push_back({"topic-with-a-long-name", p, p * 10, 0, "metadata", 1});
    ASSERT_TRUE(store->offsets().commit("group", offsets).ok());
    ASSERT_TRUE(store->close().ok());  // checkpoints everything into the main file
  }
  std::string bytes = read_bytes(path);
  ASSERT_GE(bytes.size(), 4u * 4096);
  // Scribble over the b-tree pages after page 1 (the header page stays valid).
  for (size_t i = 4096; i < bytes.size(); i += 97) bytes[i] = static_cast<char>(0xA5);
  write_bytes(path, bytes);

  std::unique_ptr<MetaStore> store;
  Status s = MetaStore::open(path, &store);
  ASSERT_TRUE(s.is_corruption()) << s.to_string();
  EXPECT_TRUE(contains(s.message(), path)) << s.message();
  EXPECT_EQ(read_bytes(path), bytes);
}

TEST(MetaStoreOpen, OtherApplicationsDatabaseIsRefused) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("eddy.db");
  run_sql(path, "CREATE TABLE readings (sensor TEXT, value REAL); INSERT INTO readings VALUES ('t1', 21.5);");
  const std::string before = read_bytes(path);
  std::unique_ptr<MetaStore> store;
  Status s = MetaStore::open(path, &store);
  ASSERT_TRUE(s.is_corruption()) << s.to_string();
  EXPECT_TRUE(contains(s.message(), "not an Eddy metadata database")) << s.message();
  EXPECT_EQ(read_bytes(path), before);

  const std::string other_app = dir.file("app.db");
  run_sql(other_app, "PRAGMA application_id = 1234;");
  s = MetaStore::open(other_app, &store);
  EXPECT_TRUE(s.is_corruption()) << s.to_string();
}

TEST(MetaStoreOpen, DirectoryIsRefused) {
  eddy::testing::TempDir dir;
  std::unique_ptr<MetaStore> store;
  Status s = MetaStore::open(dir.path(), &store);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.is_io_error()) << s.to_string();
  EXPECT_TRUE(contains(s.message(), dir.path())) << s.message();
  EXPECT_TRUE(port::is_directory(dir.path()));
}

TEST(MetaStoreOpen, MissingDirectoryIsAnError) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("no/such/dir/eddy.db");
  std::unique_ptr<MetaStore> store;
  Status s = MetaStore::open(path, &store);
  ASSERT_TRUE(s.is_io_error()) << s.to_string();
  EXPECT_TRUE(contains(s.message(), path)) << s.message();
  EXPECT_FALSE(port::path_exists(dir.file("no")));
}

TEST(MetaStoreOpen, SecondOpenIsRefusedWhileInUse) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("eddy.db");
  auto first = open_or_die(path);
  ASSERT_TRUE(first->broker_configs().set("k", "v").ok());

  std::unique_ptr<MetaStore> second;
  Status s = MetaStore::open(path, &second);
  ASSERT_TRUE(s.is_io_error()) << s.to_string();
  EXPECT_EQ(second, nullptr);
  EXPECT_TRUE(contains(s.message(), path)) << s.message();
  EXPECT_TRUE(contains(s.message(), "in use by another process")) << s.message();
  EXPECT_FALSE(contains(s.message(), "restore it from a backup")) << s.message();
  EXPECT_FALSE(port::path_exists(path + "-shm"));  // the WAL index is in heap memory

  // The first store is unaffected; once it is closed the file opens again.
  ASSERT_TRUE(first->broker_configs().set("k2", "v2").ok());
  ASSERT_TRUE(first->close().ok());
  second = open_or_die(path);
  std::map<std::string, std::string> configs;
  ASSERT_TRUE(second->broker_configs().list(&configs).ok());
  EXPECT_EQ(configs.size(), 2u);
}

TEST(MetaStoreOpen, InvalidOptionsAreRefused) {
  eddy::testing::TempDir dir;
  MetaStore::Options options;
  options.producer_id_block_size = 0;
  std::unique_ptr<MetaStore> store;
  EXPECT_TRUE(MetaStore::open(dir.file("eddy.db"), options, &store).is_invalid_argument());
  EXPECT_FALSE(port::path_exists(dir.file("eddy.db")));
}

// The image a crash leaves: the main file and the WAL as they were, without
// a close (no checkpoint) and without the shared-memory index.
TEST(MetaStoreOpen, CommittedDataSurvivesACrashImage) {
  eddy::testing::TempDir dir;
  const std::string path = dir.file("eddy.db");
  const std::string copy = dir.file("crashed.db");
  auto store = open_or_die(path);
  TopicRecord topic;
  ASSERT_TRUE(store->topics().create(testing::new_topic("sensors", 2), &topic).ok());
  ASSERT_TRUE(store->offsets().commit("g", {{"sensors", 1, 42, 3, "m", 1000}}).ok());
  ASSERT_TRUE(port::path_exists(path + "-wal"));
  std::filesystem::copy_file(path, copy);
  std::filesystem::copy_file(path + "-wal", copy + "-wal");

  auto recovered = open_or_die(copy);
  ASSERT_NE(recovered, nullptr);
  EXPECT_EQ(recovered->cluster_id(), store->cluster_id());
  TopicRecord again;
  ASSERT_TRUE(recovered->topics().get("sensors", &again).ok());
  EXPECT_EQ(again.id, topic.id);
  std::vector<CommittedOffset> offsets;
  ASSERT_TRUE(recovered->offsets().fetch_all("g", &offsets).ok());
  ASSERT_EQ(offsets.size(), 1u);
  EXPECT_EQ(offsets[0].offset, 42);
}

}  // namespace
}  // namespace eddy::meta

// The SQLite wrapper: statement cache, nested use, transactions, errors.
#include "meta/sqlite_db.h"

#include <gtest/gtest.h>

#include "tests/unit/port/test_dir.h"

namespace eddy::meta {
namespace {

class DatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Database::open(dir_.file("x.db"), &db_).ok());
    ASSERT_TRUE(db_->exec("CREATE TABLE kv (k INTEGER PRIMARY KEY, v TEXT NOT NULL)").ok());
  }
  int64_t count() {
    int64_t n = -1;
    EXPECT_TRUE(db_->query_int64("SELECT count(*) FROM kv", &n).ok());
    return n;
  }
  Status insert(int64_t k, const std::string& v) {
    Statement st;
    Status s = db_->prepare("INSERT INTO kv (k, v) VALUES (?, ?)", &st);
    if (!s.ok()) return s;
    st.bind_int64(1, k);
    st.bind_text(2, v);
    return st.run();
  }

  eddy::testing::TempDir dir_;
  std::unique_ptr<Database> db_;
};

TEST_F(DatabaseTest, CachedStatementIsReusedWithFreshBindings) {
  ASSERT_TRUE(insert(1, "one").ok());
  ASSERT_TRUE(insert(2, "").ok());
  EXPECT_EQ(count(), 2);
  Statement st;
  ASSERT_TRUE(db_->prepare("SELECT v FROM kv WHERE k = ?", &st).ok());
  st.bind_int64(1, 2);
  bool row = false;
  ASSERT_TRUE(st.step(&row).ok());
  ASSERT_TRUE(row);
  EXPECT_FALSE(st.column_is_null(0));  // '' stays '', not NULL
  EXPECT_EQ(st.column_text(0), "");
}

TEST_F(DatabaseTest, NestedUseOfTheSameStatement) {
  for (int k = 1; k <= 3; ++k) ASSERT_TRUE(insert(k, std::to_string(k)).ok());
  Statement outer;
  ASSERT_TRUE(db_->prepare("SELECT k FROM kv ORDER BY k", &outer).ok());
  bool row = false;
  int outer_rows = 0;
  while (outer.step(&row).ok() && row) {
    ++outer_rows;
    // Same SQL while the cached one is mid-iteration: gets a private statement.
    Statement inner;
    ASSERT_TRUE(db_->prepare("SELECT k FROM kv ORDER BY k", &inner).ok());
    int inner_rows = 0;
    bool inner_row = false;
    while (inner.step(&inner_row).ok() && inner_row) ++inner_rows;
    EXPECT_EQ(inner_rows, 3);
  }
  EXPECT_EQ(outer_rows, 3);
}

TEST_F(DatabaseTest, TransactionRollsBackUnlessCommitted) {
  {
    Transaction tx(db_.get());
    ASSERT_TRUE(tx.begin().ok());
    ASSERT_TRUE(insert(1, "a").ok());
    EXPECT_TRUE(db_->in_transaction());
  }
  EXPECT_FALSE(db_->in_transaction());
  EXPECT_EQ(count(), 0);
  {
    Transaction tx(db_.get());
    ASSERT_TRUE(tx.begin().ok());
    ASSERT_TRUE(insert(1, "a").ok());
    ASSERT_TRUE(tx.commit().ok());
  }
  EXPECT_EQ(count(), 1);
}

TEST_F(DatabaseTest, ErrorsNameTheFileAndSqlite) {
  Status s = insert(1, "a");
  ASSERT_TRUE(s.ok());
  s = insert(1, "again");
  EXPECT_TRUE(s.is_invalid_argument()) << s.to_string();
  EXPECT_NE(s.message().find(dir_.file("x.db")), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("UNIQUE constraint failed"), std::string::npos) << s.message();

  Statement st;
  s = db_->prepare("SELECT nope FROM kv", &st);
  EXPECT_TRUE(s.is_io_error()) << s.to_string();
  EXPECT_NE(s.message().find("no such column"), std::string::npos) << s.message();

  ASSERT_TRUE(db_->prepare("SELECT ?", &st).ok());
  st.bind_int64(5, 1);  // out of range: reported by step
  bool row = false;
  s = st.step(&row);
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(row);
}

TEST_F(DatabaseTest, ClosedDatabaseRefusesWork) {
  ASSERT_TRUE(db_->close().ok());
  ASSERT_TRUE(db_->close().ok());
  Statement st;
  EXPECT_FALSE(db_->prepare("SELECT 1", &st).ok());
  EXPECT_FALSE(db_->exec("SELECT 1").ok());
}

}  // namespace
}  // namespace eddy::meta

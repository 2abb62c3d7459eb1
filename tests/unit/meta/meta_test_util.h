// Helpers for the meta room's tests: a temp dir, whole-file reads/writes,
// and opening a store that must succeed.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>

#include "meta/meta_store.h"
#include "tests/unit/port/test_dir.h"

namespace eddy::meta::testing {

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

inline std::unique_ptr<MetaStore> open_or_die(const std::string& path,
                                              const MetaStore::Options& options = MetaStore::Options()) {
  std::unique_ptr<MetaStore> store;
  Status s = MetaStore::open(path, options, &store);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return store;
}

inline NewTopic new_topic(std::string name, int32_t partition_count = 1,
                          std::map<std::string, std::string> configs = {}, int16_t replication_factor = 1) {
  NewTopic topic;
  topic.name = std::move(name);
  topic.partition_count = partition_count;
  topic.replication_factor = replication_factor;
  topic.configs = std::move(configs);
  return topic;
}

// A fresh store in a temp dir, reopenable.
class MetaStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = open_or_die(path());
    ASSERT_NE(store_, nullptr);
  }
  std::string path() const { return dir_.file("eddy.db"); }
  void reopen() {
    ASSERT_TRUE(store_->close().ok());
    store_.reset();
    store_ = open_or_die(path());
    ASSERT_NE(store_, nullptr);
  }

  eddy::testing::TempDir dir_;
  std::unique_ptr<MetaStore> store_;
};

}  // namespace eddy::meta::testing

#include "meta/broker_config_store.h"

#include <gtest/gtest.h>

#include "tests/unit/meta/meta_test_util.h"

namespace eddy::meta {
namespace {

using BrokerConfigStoreTest = testing::MetaStoreTest;
using Configs = std::map<std::string, std::string>;

TEST_F(BrokerConfigStoreTest, SetDeleteListPersist) {
  Configs configs;
  ASSERT_TRUE(store_->broker_configs().list(&configs).ok());
  EXPECT_TRUE(configs.empty());

  ASSERT_TRUE(store_->broker_configs().set("log.retention.ms", "3600000").ok());
  ASSERT_TRUE(store_->broker_configs().set("message.max.bytes", "1000000").ok());
  ASSERT_TRUE(store_->broker_configs().set("log.retention.ms", "7200000").ok());
  ASSERT_TRUE(store_->broker_configs().remove("not-set").ok());
  ASSERT_TRUE(store_->broker_configs().list(&configs).ok());
  EXPECT_EQ(configs, (Configs{{"log.retention.ms", "7200000"}, {"message.max.bytes", "1000000"}}));

  ASSERT_TRUE(store_->broker_configs().remove("message.max.bytes").ok());
  reopen();
  ASSERT_TRUE(store_->broker_configs().list(&configs).ok());
  EXPECT_EQ(configs, (Configs{{"log.retention.ms", "7200000"}}));
}

TEST_F(BrokerConfigStoreTest, AlterIsAllOrNothing) {
  ASSERT_TRUE(store_->broker_configs().set("a", "1").ok());
  Status s = store_->broker_configs().alter({ConfigChange::set("b", "2"), ConfigChange::remove("a"),
                                             ConfigChange::set("", "x")});
  EXPECT_TRUE(s.is_invalid_argument()) << s.to_string();
  Configs configs;
  ASSERT_TRUE(store_->broker_configs().list(&configs).ok());
  EXPECT_EQ(configs, (Configs{{"a", "1"}}));

  ASSERT_TRUE(store_->broker_configs().alter({ConfigChange::set("b", "2"), ConfigChange::remove("a")}).ok());
  ASSERT_TRUE(store_->broker_configs().list(&configs).ok());
  EXPECT_EQ(configs, (Configs{{"b", "2"}}));
}

}  // namespace
}  // namespace eddy::meta

// Topic configs: every Kafka name is known; honoured values take effect;
// no-effect values are accepted; values Eddy cannot honour are refused with
// the reason; DescribeConfigs sources follow Kafka's rules.
#include <gtest/gtest.h>

#include "broker/topic_config_defs.h"
#include "broker/topic_configs.h"

namespace eddy::broker {
namespace {

const DescribedConfig* find(const std::vector<DescribedConfig>& all, const std::string& name) {
  for (const auto& c : all) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

TEST(TopicConfigs, KafkaNamesAreKnown) {
  for (const char* name : {"cleanup.policy", "compression.type", "compression.zstd.level", "delete.retention.ms",
                           "file.delete.delay.ms", "local.retention.ms", "max.compaction.lag.ms",
                           "message.timestamp.after.max.ms", "min.cleanable.dirty.ratio", "preallocate",
                           "remote.storage.enable", "segment.index.bytes", "segment.jitter.ms", "segment.ms",
                           "unclean.leader.election.enable", "message.format.version",
                           "message.downconversion.enable"}) {
    EXPECT_TRUE(is_topic_config(name)) << name;
  }
  EXPECT_FALSE(is_topic_config("no.such.config"));
  EXPECT_EQ(validate_topic_config("no.such.config", "1"), "Unknown topic config name: no.such.config");
}

TEST(TopicConfigs, TableIsSortedAndUnique) {
  auto defs = topic_config_defs();
  for (size_t i = 1; i < defs.size(); ++i) {
    EXPECT_LT(std::string(defs[i - 1].name), std::string(defs[i].name));
  }
}

TEST(TopicConfigs, EveryListedDefaultIsValid) {
  for (const auto& d : topic_config_defs()) {
    if (std::string(d.name) == "preallocate") continue;  // Kafka's default false is refused; Eddy's is true
    EXPECT_EQ(validate_topic_config(d.name, d.kafka_default), "") << d.name;
  }
}

TEST(TopicConfigs, TypesAndBounds) {
  EXPECT_EQ(validate_topic_config("retention.ms", "-1"), "");
  EXPECT_NE(validate_topic_config("retention.ms", "-2"), "");
  EXPECT_NE(validate_topic_config("retention.ms", "soon"), "");
  EXPECT_NE(validate_topic_config("index.interval.bytes", "4294967296"), "");  // not an INT
  EXPECT_EQ(validate_topic_config("min.cleanable.dirty.ratio", "0.25"), "");
  EXPECT_NE(validate_topic_config("min.cleanable.dirty.ratio", "1.5"), "");
  EXPECT_NE(validate_topic_config("min.cleanable.dirty.ratio", "half"), "");
  EXPECT_EQ(validate_topic_config("unclean.leader.election.enable", "TRUE"), "");
  EXPECT_NE(validate_topic_config("unclean.leader.election.enable", "yes"), "");
  EXPECT_EQ(validate_topic_config("leader.replication.throttled.replicas", "*"), "");
  EXPECT_EQ(validate_topic_config("leader.replication.throttled.replicas", "0:1, 1:2"), "");
  EXPECT_NE(validate_topic_config("leader.replication.throttled.replicas", "0-1"), "");
  EXPECT_NE(validate_topic_config("compression.type", "brotli"), "");
}

TEST(TopicConfigs, RefusedWithTheReason) {
  EXPECT_NE(validate_topic_config("compression.type", "gzip").find("never re-compresses"), std::string::npos);
  EXPECT_EQ(validate_topic_config("compression.type", "producer"), "");
  EXPECT_NE(validate_topic_config("cleanup.policy", "compact").find("does not compact"), std::string::npos);
  EXPECT_NE(validate_topic_config("cleanup.policy", "delete,compact").find("does not compact"), std::string::npos);
  EXPECT_EQ(validate_topic_config("cleanup.policy", "delete"), "");
  EXPECT_NE(validate_topic_config("remote.storage.enable", "true"), "");
  EXPECT_NE(validate_topic_config("preallocate", "false").find("always preallocated"), std::string::npos);
  EXPECT_NE(validate_topic_config("min.insync.replicas", "2"), "");
  EXPECT_NE(validate_topic_config("segment.ms", "1000"), "");
}

TEST(TopicConfigs, AClusterHonoursMinInsyncReplicas) {
  const auto cluster = TopicConfigScope::kCluster;
  EXPECT_EQ(validate_topic_config("min.insync.replicas", "2", cluster), "");
  EXPECT_EQ(validate_topic_config("min.insync.replicas", "1", cluster), "");
  EXPECT_NE(validate_topic_config("min.insync.replicas", "0", cluster), "") << "Kafka's lower bound";
  EXPECT_NE(validate_topic_config("min.insync.replicas", "2"), "") << "a single node: 1 only";
  // What a cluster still refuses everywhere.
  EXPECT_NE(validate_topic_config("cleanup.policy", "compact", cluster), "");
  BrokerOptions broker;
  EXPECT_EQ(effective_topic_config(broker, {}).min_insync_replicas, 1);
  EXPECT_EQ(effective_topic_config(broker, {{"min.insync.replicas", "2"}}).min_insync_replicas, 2);
  broker.min_insync_replicas = 3;
  EXPECT_EQ(effective_topic_config(broker, {}).min_insync_replicas, 3);
  for (const DescribedConfig& c : describe_topic_configs(broker, {})) {
    if (c.name == "min.insync.replicas") {
      EXPECT_EQ(c.value, "3");
    }
  }
}

TEST(TopicConfigs, ListOperations) {
  EXPECT_EQ(append_to_list("", "0:1"), "0:1");
  EXPECT_EQ(append_to_list("0:1", "1:1,0:1"), "0:1,1:1");
  EXPECT_EQ(subtract_from_list("0:1,1:1,0:1", "0:1"), "1:1");
  EXPECT_EQ(subtract_from_list("", "0:1"), "");
  EXPECT_TRUE(is_list_topic_config("cleanup.policy"));
  EXPECT_FALSE(is_list_topic_config("retention.ms"));
}

TEST(TopicConfigs, EffectiveValues) {
  BrokerOptions broker;
  broker.log_defaults.segment_bytes = 8 << 20;
  ConfigMap o = {{"index.interval.bytes", "8192"}, {"message.timestamp.after.max.ms", "60000"},
                 {"compression.gzip.level", "5"}};
  EffectiveTopicConfig c = effective_topic_config(broker, o);
  EXPECT_EQ(c.log.index_interval_bytes, 8192u);
  EXPECT_EQ(c.timestamp_after_max_ms, 60000);
  EXPECT_EQ(c.log.segment_bytes, 8u << 20);
  EXPECT_EQ(effective_topic_config(broker, {}).timestamp_after_max_ms, 3600000);
}

TEST(TopicConfigs, DescribedSources) {
  BrokerOptions broker;
  broker.log_defaults.segment_bytes = 8 << 20;
  broker.static_configs.push_back({"log.segment.bytes", "8388608", false, true});
  broker.static_configs.push_back({"log.retention.bytes", "-1", true, true});
  std::vector<DescribedConfig> all = describe_topic_configs(broker, {{"retention.ms", "1000"}});
  const DescribedConfig* segment = find(all, "segment.bytes");
  ASSERT_NE(segment, nullptr);
  EXPECT_EQ(segment->value, "8388608");
  EXPECT_EQ(segment->source, kStaticBrokerConfig);
  EXPECT_FALSE(segment->is_default);
  ASSERT_EQ(segment->synonyms.size(), 2u);
  EXPECT_EQ(segment->synonyms[0].name, "log.segment.bytes");
  EXPECT_EQ(segment->synonyms[0].source, kStaticBrokerConfig);
  const DescribedConfig* retention = find(all, "retention.ms");
  ASSERT_NE(retention, nullptr);
  EXPECT_EQ(retention->source, kDynamicTopicConfig);
  EXPECT_EQ(retention->synonyms[0].source, kDynamicTopicConfig);
  const DescribedConfig* compression = find(all, "compression.type");
  ASSERT_NE(compression, nullptr);
  EXPECT_EQ(compression->value, "producer");
  EXPECT_EQ(compression->source, kDefaultConfig);
  EXPECT_EQ(compression->config_type, static_cast<int8_t>(TopicConfigType::kString));
  EXPECT_EQ(find(all, "message.format.version"), nullptr) << "Kafka 3.x-only names are not listed";
  EXPECT_NE(find(describe_topic_configs(broker, {{"message.format.version", "3.0"}}), "message.format.version"),
            nullptr)
      << "... unless the topic sets them";
}

}  // namespace
}  // namespace eddy::broker

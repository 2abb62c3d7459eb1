// Every topic-level config Apache Kafka 3.9 and 4.x define, plus Eddy's own,
// with Kafka's type, bounds and default, the broker key that supplies the
// default (Kafka's "synonym"), and what Eddy does with it.
//
// What Eddy does with a key is one of:
//   kHonoured   the value does what it does in Kafka;
//   kNoEffect   any valid value is accepted and stored, and changes nothing
//               observable on a single-node broker without compaction or
//               tiered storage (Kafka itself ignores these there too);
//   kOnly       only the values in `only` are accepted: the others ask for
//               something Eddy does not do, and are refused with `why_only`;
//   kHonouredInCluster
//               honoured on a node of a cluster (where partitions have
//               replicas), kOnly on a single node.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace eddy::broker {

// Kafka's ConfigDef types as DescribeConfigs v3+ reports them (config_type).
enum class TopicConfigType : int8_t {
  kBoolean = 1,
  kString = 2,
  kInt = 3,
  kLong = 5,
  kDouble = 6,
  kList = 7,
};

enum class TopicConfigUse : uint8_t { kHonoured, kNoEffect, kOnly, kHonouredInCluster };

struct TopicConfigDef {
  const char* name;
  TopicConfigType type;
  // Kafka's default; for honoured keys the broker's own default wins (see
  // topic_configs.cc), so this is only the fallback.
  const char* kafka_default;
  // The broker configuration key the default comes from ("" when none).
  const char* broker_key;
  TopicConfigUse use;
  // Numeric bounds (kInt, kLong, kDouble), inclusive.
  int64_t min;
  int64_t max;
  // kString: the allowed values (empty: any). kOnly: the accepted values.
  std::vector<std::string> choices;
  std::vector<std::string> only;
  const char* why_only;
  // Listed by DescribeConfigs (false for names only Kafka 3.9 had, which are
  // accepted but not listed unless a topic overrides them).
  bool listed;
  const char* documentation;
};

std::span<const TopicConfigDef> topic_config_defs();
const TopicConfigDef* find_topic_config_def(const std::string& name);

}  // namespace eddy::broker

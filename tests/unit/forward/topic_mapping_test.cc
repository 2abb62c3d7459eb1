#include "forward/topic_mapping.h"

#include <gtest/gtest.h>

namespace eddy::forward {
namespace {

LinkOptions options(std::vector<std::string> topics, std::string remote = "${topic}") {
  LinkOptions o;
  o.name = "central";
  o.topics = std::move(topics);
  o.remote_topic = std::move(remote);
  return o;
}

TEST(TopicMapping, PatternsMatchWholeNames) {
  TopicMapping m;
  Status s = TopicMapping::create(options({"sensors\\..*", "alarms"}), &m);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_TRUE(m.forwards("sensors.temp"));
  EXPECT_TRUE(m.forwards("alarms"));
  EXPECT_FALSE(m.forwards("alarms2"));     // whole-name match
  EXPECT_FALSE(m.forwards("xsensors.t"));  // not a search
  EXPECT_FALSE(m.forwards("sensors"));
}

TEST(TopicMapping, RemoteNameTemplates) {
  LinkOptions o = options({".*"}, "${gateway.id}.${link}.${topic}");
  o.gateway_id = "gw-17";
  TopicMapping m;
  Status s = TopicMapping::create(o, &m);
  ASSERT_TRUE(s.ok()) << s.to_string();
  std::string error;
  EXPECT_EQ(m.remote_name("sensors.temp", &error), "gw-17.central.sensors.temp");
  // A result longer than Kafka allows is refused, with the reason.
  std::string long_topic(245, 'a');
  EXPECT_EQ(m.remote_name(long_topic, &error), "");
  EXPECT_NE(error.find("249"), std::string::npos) << error;
}

TEST(TopicMapping, BadConfigurationIsRefused) {
  TopicMapping m;
  Status s = TopicMapping::create(options({"("}), &m);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("invalid regex"), std::string::npos) << s.to_string();
  s = TopicMapping::create(options({".*"}, "${gateway.id}.${topic}"), &m);
  EXPECT_NE(s.message().find("eddy.gateway.id"), std::string::npos) << s.to_string();
  s = TopicMapping::create(options({".*"}, "${host}"), &m);
  EXPECT_NE(s.message().find("unknown placeholder"), std::string::npos) << s.to_string();
  EXPECT_FALSE(TopicMapping::create(options({".*"}, "a b"), &m).ok());
  EXPECT_FALSE(TopicMapping::create(options({".*"}, "${topic"), &m).ok());
}

TEST(TopicMapping, PrioritiesFirstMatchWins) {
  LinkOptions o = options({".*"});
  o.priorities = {{"alarms\\..*", 10}, {"sensors\\..*", 5}, {".*\\.debug", -1}};
  TopicMapping m;
  ASSERT_TRUE(TopicMapping::create(o, &m).ok());
  EXPECT_EQ(m.priority("alarms.fire"), 10);
  EXPECT_EQ(m.priority("sensors.temp"), 5);
  EXPECT_EQ(m.priority("app.debug"), -1);
  EXPECT_EQ(m.priority("other"), 0);
}

TEST(TopicMapping, TopicNameRules) {
  std::string why;
  EXPECT_TRUE(valid_topic_name("a.b-c_D9", &why));
  EXPECT_FALSE(valid_topic_name("", &why));
  EXPECT_FALSE(valid_topic_name(".", &why));
  EXPECT_FALSE(valid_topic_name("..", &why));
  EXPECT_FALSE(valid_topic_name("a/b", &why));
  EXPECT_FALSE(valid_topic_name(std::string(250, 'x'), &why));
}

}  // namespace
}  // namespace eddy::forward

#include "meta/topic_name.h"

#include <gtest/gtest.h>

namespace eddy::meta {
namespace {

TEST(TopicName, LegalNames) {
  EXPECT_TRUE(is_valid_topic_name("sensors"));
  EXPECT_TRUE(is_valid_topic_name("a"));
  EXPECT_TRUE(is_valid_topic_name("Temp.Room-1_raw"));
  EXPECT_TRUE(is_valid_topic_name("..."));
  EXPECT_TRUE(is_valid_topic_name(".a"));
  EXPECT_TRUE(is_valid_topic_name("__consumer_offsets"));
  EXPECT_TRUE(is_valid_topic_name(std::string(249, 'x')));
  EXPECT_EQ(topic_name_error("0123456789"), "");
}

TEST(TopicName, IllegalNamesWithKafkasMessages) {
  EXPECT_EQ(topic_name_error(""), "Topic name is invalid: the empty string is not allowed");
  EXPECT_EQ(topic_name_error("."), "Topic name is invalid: '.' is not allowed");
  EXPECT_EQ(topic_name_error(".."), "Topic name is invalid: '..' is not allowed");
  EXPECT_EQ(topic_name_error(std::string(250, 'x')),
            "Topic name is invalid: the length of '" + std::string(250, 'x') +
                "' is longer than the max allowed length 249");
  EXPECT_EQ(topic_name_error("a b"),
            "Topic name is invalid: 'a b' contains one or more characters other than ASCII alphanumerics, '.', '_' "
            "and '-'");
  for (const char* bad : {"a/b", "a\\b", "a:b", "a+b", "a,b", "a*", "t\xc3\xa9", "tab\t", "a=b", "a@b"}) {
    EXPECT_FALSE(is_valid_topic_name(bad)) << bad;
  }
  EXPECT_FALSE(is_valid_topic_name(std::string("a\0b", 3)));
}

TEST(TopicName, MessageStaysPrintable) {
  std::string message = topic_name_error("t\xc3\xa9\n");
  EXPECT_NE(message.find("'t\?\?\?'"), std::string::npos) << message;
}

TEST(TopicName, DotUnderscoreCollision) {
  EXPECT_TRUE(topic_names_collide("a.b", "a_b"));
  EXPECT_TRUE(topic_names_collide("a_b", "a.b"));
  EXPECT_TRUE(topic_names_collide("a.b_c", "a_b.c"));
  EXPECT_TRUE(topic_names_collide("same", "same"));
  EXPECT_FALSE(topic_names_collide("a.b", "a-b"));
  EXPECT_FALSE(topic_names_collide("a.b", "a.bc"));
  EXPECT_FALSE(topic_names_collide("ab", "a_b"));
}

}  // namespace
}  // namespace eddy::meta

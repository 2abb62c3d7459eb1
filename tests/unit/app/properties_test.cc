#include <gtest/gtest.h>

#include "app/properties.h"

namespace eddy::app {
namespace {

TEST(Properties, SeparatorsCommentsAndLines) {
  auto props = parse_properties(
      "# comment\n"
      "! also a comment\n"
      "\n"
      "a=1\n"
      "  b : two words  \n"
      "c 3\n"
      "d=\n"
      "e\n",
      "f.properties");
  ASSERT_EQ(props.size(), 5u);
  EXPECT_EQ(props[0].key, "a");
  EXPECT_EQ(props[0].value, "1");
  EXPECT_EQ(props[0].line, 4);
  EXPECT_EQ(props[1].key, "b");
  EXPECT_EQ(props[1].value, "two words");
  EXPECT_EQ(props[1].line, 5);
  EXPECT_EQ(props[2].key, "c");
  EXPECT_EQ(props[2].value, "3");
  EXPECT_EQ(props[3].key, "d");
  EXPECT_EQ(props[3].value, "");
  EXPECT_EQ(props[4].key, "e");
  EXPECT_EQ(props[4].source, "f.properties");
}

TEST(Properties, ContinuationAndEscapes) {
  auto props = parse_properties("listeners=PLAINTEXT://a:1,\\\n    PLAINTEXT://b:2\nx=tab\\there\nk\\=ey=v\nu=\\u00e9\n",
                                "s");
  ASSERT_EQ(props.size(), 4u);
  EXPECT_EQ(props[0].value, "PLAINTEXT://a:1,PLAINTEXT://b:2");
  EXPECT_EQ(props[0].line, 1);
  EXPECT_EQ(props[1].value, "tab\there");
  EXPECT_EQ(props[1].line, 3);
  EXPECT_EQ(props[2].key, "k=ey");
  EXPECT_EQ(props[3].value, "\xC3\xA9");
}

TEST(Properties, CrLfAndNoTrailingNewline) {
  auto props = parse_properties("a=1\r\nb=2", "s");
  ASSERT_EQ(props.size(), 2u);
  EXPECT_EQ(props[0].value, "1");
  EXPECT_EQ(props[1].value, "2");
  EXPECT_EQ(props[1].line, 2);
}

TEST(Properties, MissingFileIsAnError) {
  std::vector<Property> props;
  Status s = read_properties_file("/nonexistent/eddy.properties", &props);
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find("/nonexistent/eddy.properties"), std::string::npos);
}

}  // namespace
}  // namespace eddy::app

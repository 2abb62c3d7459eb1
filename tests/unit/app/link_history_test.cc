#include <gtest/gtest.h>

#include "app/link_history.h"

namespace eddy::app {
namespace {

forward::LinkStatus link(const std::string& name, int64_t backlog) {
  forward::LinkStatus l;
  l.name = name;
  forward::PartitionStatus a, b;
  a.backlog_messages = backlog;
  a.backlog_bytes = static_cast<uint64_t>(backlog) * 10;
  b.backlog_messages = 1;
  b.backlog_bytes = 10;
  l.partitions = {a, b};
  return l;
}

TEST(LinkHistory, SumsPartitionsAndKeepsTheNewestSamples) {
  LinkHistory h({"dc"});
  EXPECT_TRUE(h.samples("dc").empty());
  for (int64_t i = 0; i < static_cast<int64_t>(kLinkHistorySamples) + 5; ++i) {
    h.sample({link("dc", i), link("unknown", 99)}, 1000 * i);
  }
  std::vector<LinkSample> s = h.samples("dc");
  ASSERT_EQ(s.size(), kLinkHistorySamples);
  EXPECT_EQ(s.front().wall_ms, 5000);
  EXPECT_EQ(s.front().backlog_messages, 6);
  EXPECT_EQ(s.front().backlog_bytes, 60u);
  EXPECT_EQ(s.back().backlog_messages, static_cast<int64_t>(kLinkHistorySamples) + 5);
  EXPECT_TRUE(h.samples("unknown").empty());
}

}  // namespace
}  // namespace eddy::app

#include "forward/link_status.h"

#include <gtest/gtest.h>

namespace eddy::forward {
namespace {

LinkStatus sample() {
  LinkStatus l;
  l.name = "central";
  l.bootstrap = "dc:9092";
  l.state = LinkState::kBackingOff;
  l.last_error = "cannot reach \"dc\"\n";
  l.producer_id = 7;
  l.producer_epoch = 0;
  PartitionStatus p;
  p.topic = "sensors.temp";
  p.partition = 1;
  p.remote_topic = "gw.sensors.temp";
  p.forwarded_offset = 10;
  p.local_end_offset = 25;
  p.backlog_messages = 15;
  p.backlog_bytes = 3 * 1024 * 1024;
  p.dropped_messages = 4;
  p.paused = "topic gw.sensors.temp does not exist on the central cluster";
  l.partitions.push_back(p);
  return l;
}

TEST(StatusBoard, TextShowsStateBacklogAndReasons) {
  StatusBoard board;
  EXPECT_NE(board.render_text().find("no forwarding links"), std::string::npos);
  board.publish(sample());
  std::string text = board.render_text();
  EXPECT_NE(text.find("link central -> dc:9092: backing-off"), std::string::npos) << text;
  EXPECT_NE(text.find("sensors.temp-1"), std::string::npos) << text;
  EXPECT_NE(text.find("3.0 MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("paused: topic gw.sensors.temp does not exist"), std::string::npos) << text;
}

TEST(StatusBoard, JsonEscapesAndCarriesEveryNumber) {
  StatusBoard board;
  board.publish(sample());
  std::string json = board.render_json();
  EXPECT_NE(json.find("\"last_error\":\"cannot reach \\\"dc\\\"\\n\""), std::string::npos) << json;
  for (const char* field : {"\"forwarded_offset\":10", "\"local_end_offset\":25", "\"backlog_messages\":15",
                            "\"backlog_bytes\":3145728", "\"dropped_messages\":4", "\"state\":\"backing-off\"",
                            "\"producer_id\":7"}) {
    EXPECT_NE(json.find(field), std::string::npos) << field << " in " << json;
  }
}

TEST(StatusBoard, ShowsTheDiskBudgetWhenGiven) {
  StatusBoard board;
  const DiskBudgetStatus disk{4ull << 30, 1ull << 30, 3ull << 30};
  EXPECT_EQ(board.render_text(&disk).find("disk budget: 4 GiB, 1 GiB used, 3 GiB free"), 0u)
      << board.render_text(&disk);
  EXPECT_NE(board.render_text(&disk).find("no forwarding links"), std::string::npos);
  board.publish(sample());
  std::string json = board.render_json(&disk);
  EXPECT_EQ(json.find("{\"disk_budget\":{\"limit_bytes\":4294967296,\"used_bytes\":1073741824,"
                      "\"free_bytes\":3221225472},\"links\":["),
            0u)
      << json;
  EXPECT_EQ(board.render_json().find("{\"links\":["), 0u);
}

TEST(StatusBoard, PublishReplacesTheLinksEntry) {
  StatusBoard board;
  LinkStatus l = sample();
  board.publish(l);
  l.state = LinkState::kConnected;
  board.publish(l);
  auto snapshot = board.snapshot();
  ASSERT_EQ(snapshot.size(), 1u);
  EXPECT_EQ(snapshot[0].state, LinkState::kConnected);
}

TEST(RateMeter, AveragesOverTheLastFiveSeconds) {
  RateMeter m;
  m.sample(1000, 0, 0);
  EXPECT_EQ(m.bytes_per_sec(), 0);
  m.sample(2000, 1000, 10);
  EXPECT_DOUBLE_EQ(m.bytes_per_sec(), 1000);
  EXPECT_DOUBLE_EQ(m.messages_per_sec(), 10);
  m.sample(4000, 1000, 10);  // quiet for two seconds
  EXPECT_DOUBLE_EQ(m.bytes_per_sec(), 1000.0 / 3);
  // Samples older than the window fall out: only the quiet time is left.
  m.sample(7000, 1000, 10);
  m.sample(9500, 1000, 10);
  EXPECT_DOUBLE_EQ(m.bytes_per_sec(), 0);
}

}  // namespace
}  // namespace eddy::forward

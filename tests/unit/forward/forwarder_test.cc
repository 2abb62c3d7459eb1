// The Forwarder over a real local broker (local_side.h), its links to
// in-memory central clusters (fake_central.h): configuration errors, every
// link forwarding, the pin at the slowest link, stop and forward.db.
#include "forward/forwarder.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <thread>

#include "fake_central.h"
#include "local_side.h"
#include "port/port.h"

namespace eddy::forward {
namespace {

using testing::FakeCentral;
using testing::LocalSide;
using testing::eventually;

LinkOptions link_to(const std::string& name, FakeCentral* central, const std::string& topics) {
  LinkOptions o;
  o.name = name;
  o.bootstrap = {{name, 9092}};
  o.topics = {topics};
  o.linger_ms = 5;
  o.retry_backoff_ms = 10;
  o.retry_backoff_max_ms = 50;
  o.transport_factory = central->transport_factory();
  return o;
}

int64_t forwarded(const Forwarder& f, const std::string& link, const std::string& topic, int32_t partition) {
  for (const LinkStatus& l : f.status().snapshot()) {
    if (l.name != link) continue;
    for (const PartitionStatus& p : l.partitions) {
      if (p.topic == topic && p.partition == partition) return p.forwarded_offset;
    }
  }
  return -1;
}

TEST(Forwarder, ABadTopicPatternStopsInitNamingTheLink) {
  LocalSide local;
  FakeCentral central;
  Forwarder f(local.reactor(), local.broker(), local.data_dir(), {link_to("dc1", &central, "(")});
  Status s;
  local.reactor().run([&] { s = f.init(); });
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message().rfind("forward link dc1: ", 0), 0u) << s.to_string();
}

TEST(Forwarder, EveryLinkForwardsAndThePinWaitsForTheSlowest) {
  LocalSide local;
  FakeCentral dc1, dc2;
  dc1.add_topic("sensors", 1);
  dc2.add_topic("sensors", 1);
  dc2.refuse_connections(true);  // dc2 is down
  {
    Forwarder f(local.reactor(), local.broker(), local.data_dir(),
                {link_to("dc1", &dc1, "sensors"), link_to("dc2", &dc2, "sensors")});
    Status s;
    local.reactor().run([&] { s = f.init(); });
    ASSERT_TRUE(s.ok()) << s.to_string();
    local.start();
    local.create_topic("sensors", 1);
    local.append("sensors", 0, 5);
    f.start();
    ASSERT_TRUE(eventually([&] { return forwarded(f, "dc1", "sensors", 0) == 5; }));
    EXPECT_EQ(dc1.written("sensors", 0), (std::vector<int64_t>{0}));
    EXPECT_EQ(forwarded(f, "dc2", "sensors", 0), 0);
    // dc2 has delivered nothing: the log stays pinned at its start.
    EXPECT_EQ(local.pin("sensors", 0), 0);
    // dc2 alternates between backing off and a refused connect: wait for
    // the former (a single look may land on "connecting", as under qemu).
    EXPECT_TRUE(eventually([&] {
      return f.status_text(false).find("link dc2 -> dc2:9092: backing-off") != std::string::npos;
    })) << f.status_text(false);
    f.request_stop();
    f.join();
    local.reactor().run([] {});
  }
  // What dc1 delivered is in forward.db for the next start.
  std::unique_ptr<meta::ForwardProgress> progress;
  ASSERT_TRUE(meta::ForwardProgress::open(local.data_dir() + "/forward.db", &progress).ok());
  meta::ForwardCursor c;
  ASSERT_TRUE(progress->get("dc1", "sensors", 0, &c).ok());
  EXPECT_EQ(c.next_offset, 5);
  EXPECT_TRUE(progress->get("dc2", "sensors", 0, &c).is_not_found());
}

}  // namespace
}  // namespace eddy::forward

#include "broker/disk_budget_check.h"

#include <gtest/gtest.h>

namespace eddy::broker {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

storage::LogConfig sixteen_mib_unbounded() {
  storage::LogConfig c;
  c.segment_bytes = 16 * kMiB;
  c.retention_bytes = storage::kNoLimit;
  return c;
}

TEST(DiskBudgetCheck, ATopicThatFitsIsAccepted) {
  storage::DiskBudget budget(storage::kOtherFilesReserveBytes +
                             4 * storage::partition_reservation_bytes(sixteen_mib_unbounded()));
  EXPECT_TRUE(check_new_partitions(budget, "topic 'x'", 4, sixteen_mib_unbounded()).ok());
}

TEST(DiskBudgetCheck, ATopicThatDoesNotFitIsAPolicyViolationNamingTheBudget) {
  const uint64_t limit = 256 * kMiB;
  storage::DiskBudget budget(limit);
  budget.recharge(0, 200 * kMiB);
  TopicResult r = check_new_partitions(budget, "topic 'x'", 4, sixteen_mib_unbounded());
  EXPECT_EQ(r.code, protocol::ErrorCode::kPolicyViolation);
  EXPECT_EQ(protocol::to_int(r.code), 44);
  // 4 x (2 x (16 MiB + 40 KiB of index) + 12 KiB) = 128.4 MiB
  EXPECT_EQ(r.message,
            "topic 'x' needs 128.4 MiB of disk (4 partitions x 2 segments of 16 MiB, with their indexes) but the "
            "disk budget eddy.disk.budget.bytes=268435456 (256 MiB) has 40 MiB left (216 MiB used)");
}

TEST(DiskBudgetCheck, ConfigChangesAreCheckedForWhatTheyAdd) {
  storage::DiskBudget budget(storage::kOtherFilesReserveBytes);
  // No partitions: nothing is added, whatever the config.
  storage::LogConfig bigger = sixteen_mib_unbounded();
  bigger.retention_bytes = 1LL << 40;
  EXPECT_TRUE(check_config_change(budget, "x", {}, bigger).ok());
}

}  // namespace
}  // namespace eddy::broker

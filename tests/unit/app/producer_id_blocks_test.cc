// A cluster node's blocks of producer ids: each id once, in order, and the
// next block asked for before the current one runs out.
#include "app/producer_id_blocks.h"

#include <gtest/gtest.h>

namespace eddy::app {
namespace {

TEST(ProducerIdBlocks, NoneUntilABlockIsGiven) {
  ProducerIdBlocks blocks;
  int64_t id = -1;
  EXPECT_FALSE(blocks.next(&id));
  EXPECT_TRUE(blocks.wants_block());
  EXPECT_EQ(blocks.remaining(), 0);
}

TEST(ProducerIdBlocks, HandsOutEachIdOfEachBlockOnceInOrder) {
  ProducerIdBlocks blocks;
  blocks.add(1000, 3);
  blocks.add(5000, 2);  // another node took the blocks between
  EXPECT_EQ(blocks.remaining(), 5);
  const int64_t expected[] = {1000, 1001, 1002, 5000, 5001};
  for (int64_t want : expected) {
    int64_t id = -1;
    ASSERT_TRUE(blocks.next(&id));
    EXPECT_EQ(id, want);
  }
  int64_t id = -1;
  EXPECT_FALSE(blocks.next(&id));
  EXPECT_EQ(blocks.remaining(), 0);
}

TEST(ProducerIdBlocks, AsksForTheNextBlockWhenATenthIsLeft) {
  ProducerIdBlocks blocks;
  blocks.add(0, 100);
  int64_t id = -1;
  for (int i = 0; i < 90; ++i) {
    EXPECT_FALSE(blocks.wants_block()) << "after " << i << " ids";
    ASSERT_TRUE(blocks.next(&id));
  }
  EXPECT_FALSE(blocks.wants_block()) << "ten of a hundred left";
  ASSERT_TRUE(blocks.next(&id));
  EXPECT_TRUE(blocks.wants_block()) << "nine of a hundred left";
  blocks.add(100, 100);
  EXPECT_FALSE(blocks.wants_block()) << "one queued behind the current block";
  for (int i = 0; i < 9; ++i) ASSERT_TRUE(blocks.next(&id));
  EXPECT_EQ(id, 99);
  EXPECT_FALSE(blocks.wants_block()) << "the queued block is current now, whole";
  ASSERT_TRUE(blocks.next(&id));
  EXPECT_EQ(id, 100);
}

TEST(ProducerIdBlocks, ABlockOfOneIdIsAskedPastAtOnce) {
  ProducerIdBlocks blocks;
  blocks.add(7, 1);
  EXPECT_FALSE(blocks.wants_block());
  int64_t id = -1;
  ASSERT_TRUE(blocks.next(&id));
  EXPECT_EQ(id, 7);
  EXPECT_TRUE(blocks.wants_block());
}

}  // namespace
}  // namespace eddy::app

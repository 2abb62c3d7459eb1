// The send window's invariant (send_window.h): after any sequence of sends,
// acknowledgements, failures (rewinds), producer changes and cursor moves,
// the batches in flight are at most limit() <= max_in_flight, consecutive
// in offsets and sequences from the acknowledged cursor, and a batch sent
// again after a rewind carries the sequence it had before.
#include "forward/send_window.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>

namespace eddy::forward {
namespace {

meta::ForwardCursor cursor(int64_t next_offset, int64_t producer_id, int16_t epoch, int32_t next_sequence) {
  meta::ForwardCursor c;
  c.topic = "t";
  c.partition = 0;
  c.next_offset = next_offset;
  c.producer_id = producer_id;
  c.producer_epoch = epoch;
  c.next_sequence = next_sequence;
  return c;
}

// Checks the invariant; returns a description of the first violation.
::testing::AssertionResult holds_invariant(const SendWindow& w, int32_t max_in_flight,
                                           const meta::ForwardProducer& producer) {
  const auto& batches = w.in_flight();
  const meta::ForwardCursor& acked = w.acked();
  if (w.limit() > static_cast<size_t>(max_in_flight)) return ::testing::AssertionFailure() << "limit above max";
  if (batches.size() > w.limit()) {
    return ::testing::AssertionFailure() << batches.size() << " in flight, limit " << w.limit();
  }
  if (acked.producer_id != producer.producer_id || acked.producer_epoch != producer.producer_epoch) {
    return ::testing::AssertionFailure() << "cursor under producer " << acked.producer_id;
  }
  int64_t offset = acked.next_offset;
  int32_t sequence = acked.next_sequence;
  for (const SendWindow::Batch& b : batches) {
    if (b.base_offset != offset || b.base_sequence != sequence) {
      return ::testing::AssertionFailure() << "batch at " << b.base_offset << " seq " << b.base_sequence
                                           << ", expected " << offset << " seq " << sequence;
    }
    if (b.next_sequence != increment_sequence(b.base_sequence, b.next_offset - b.base_offset)) {
      return ::testing::AssertionFailure() << "batch at " << b.base_offset << " has a wrong next sequence";
    }
    offset = b.next_offset;
    sequence = b.next_sequence;
  }
  if (w.send_offset() != offset || w.send_sequence() != sequence) {
    return ::testing::AssertionFailure() << "next send at " << w.send_offset() << " seq " << w.send_sequence()
                                         << ", expected " << offset << " seq " << sequence;
  }
  return ::testing::AssertionSuccess();
}

TEST(SendWindow, SendsConsecutiveSequencesFromTheSavedCursor) {
  const meta::ForwardProducer producer{7, 2};
  SendWindow w(cursor(100, 7, 2, 40), producer, 5);
  EXPECT_EQ(w.send_offset(), 100);
  EXPECT_EQ(w.send(1, 100, 103, 10), 40);
  SendWindow::Batch done{};
  ASSERT_TRUE(w.acknowledge(1, &done));
  EXPECT_EQ(w.send(2, 103, 104, 10), 43);
  EXPECT_EQ(w.send(3, 104, 110, 10), 44);
  EXPECT_EQ(w.send_sequence(), 50);
  EXPECT_TRUE(holds_invariant(w, 5, producer));
}

TEST(SendWindow, ACursorGoesOnUnderItsOwnProducerAndANewOneStartsUnderTheLinks) {
  // In a cluster a cursor may be another node's (taken over with the
  // partition): its sequences go on under its producer, as the central
  // partition expects them.
  SendWindow other(cursor(100, 7, 1, 40), {8, 2}, 5);
  EXPECT_EQ(other.send_sequence(), 40);
  EXPECT_EQ(other.acked().producer_id, 7);
  EXPECT_EQ(other.acked().producer_epoch, 1);
  EXPECT_EQ(other.send_offset(), 100);
  SendWindow never(cursor(0, -1, -1, 0), {9, 0}, 5);
  EXPECT_EQ(never.acked().producer_id, 9);
  EXPECT_EQ(never.send_sequence(), 0);
}

TEST(SendWindow, OneBatchInFlightUntilTheFirstAcknowledgement) {
  SendWindow w(cursor(0, 1, 0, 0), {1, 0}, 3);
  EXPECT_EQ(w.limit(), 1u);
  w.send(1, 0, 1, 1);
  EXPECT_FALSE(w.can_send());
  SendWindow::Batch done{};
  ASSERT_TRUE(w.acknowledge(1, &done));
  EXPECT_EQ(w.limit(), 3u);
  w.send(2, 1, 2, 1);
  w.send(3, 2, 3, 1);
  w.send(4, 3, 4, 1);
  EXPECT_FALSE(w.can_send());
  // A failure rewinds: one at a time again until the partition answers.
  w.rewind();
  EXPECT_EQ(w.limit(), 1u);
  EXPECT_TRUE(w.can_send());
}

TEST(SendWindow, AcknowledgesOnlyTheOldestBatch) {
  SendWindow w(cursor(0, 1, 0, 0), {1, 0}, 5);
  w.send(1, 0, 2, 1);
  SendWindow::Batch done{};
  ASSERT_TRUE(w.acknowledge(1, &done));
  w.send(2, 2, 4, 1);
  w.send(3, 4, 6, 1);
  EXPECT_FALSE(w.acknowledge(3, &done));  // out of order
  EXPECT_FALSE(w.acknowledge(1, &done));  // already acknowledged
  EXPECT_EQ(w.acked().next_offset, 2);
  EXPECT_EQ(w.oldest(3), nullptr);
  ASSERT_NE(w.oldest(2), nullptr);
  ASSERT_TRUE(w.acknowledge(2, &done));
  EXPECT_EQ(done.base_offset, 2);
  EXPECT_EQ(done.next_offset, 4);
  EXPECT_EQ(w.acked().next_offset, 4);
  EXPECT_EQ(w.acked().next_sequence, 4);
}

TEST(SendWindow, ResendsAfterARewindWithTheSameSequences) {
  SendWindow w(cursor(10, 1, 0, 5), {1, 0}, 5);
  w.send(1, 10, 12, 1);
  SendWindow::Batch done{};
  ASSERT_TRUE(w.acknowledge(1, &done));
  const int32_t first = w.send(2, 12, 15, 1);
  const int32_t second = w.send(3, 15, 16, 1);
  w.rewind();  // both lost
  EXPECT_EQ(w.send_offset(), 12);
  EXPECT_EQ(w.send(4, 12, 15, 1), first);
  EXPECT_FALSE(w.acknowledge(2, &done));  // the answer to the abandoned send
  ASSERT_TRUE(w.acknowledge(4, &done));
  EXPECT_EQ(w.send(5, 15, 16, 1), second);
}

TEST(SendWindow, KeepsTheCentralOffsetAfterTheLastAcknowledgedBatch) {
  SendWindow w(cursor(10, 1, 0, 5), {1, 0}, 5);
  EXPECT_EQ(w.acked().remote_next_offset, -1);
  w.send(1, 10, 12, 1);
  SendWindow::Batch done{};
  ASSERT_TRUE(w.acknowledge(1, &done, 400));
  EXPECT_EQ(w.acked().remote_next_offset, 402);
  w.send(2, 12, 15, 1);
  ASSERT_TRUE(w.acknowledge(2, &done));  // no offset said: the last one stays (lower, never past)
  EXPECT_EQ(w.acked().remote_next_offset, 402);
  w.restart_sequences({2, 0});
  EXPECT_EQ(w.acked().remote_next_offset, 402) << "a new producer writes to the same central log";
}

TEST(SendWindow, IsUnsettledFromASavedCursorAndAfterARewindThatForgotBatches) {
  SendWindow w(cursor(10, 1, 0, 5), {1, 0}, 5);
  EXPECT_TRUE(w.unsettled()) << "a restart does not know what was in flight";
  w.settle();
  EXPECT_FALSE(w.unsettled());
  w.rewind();  // nothing in flight: nothing can be unseen
  EXPECT_FALSE(w.unsettled());
  w.send(1, 10, 12, 1);
  SendWindow::Batch done{};
  ASSERT_TRUE(w.acknowledge(1, &done, 0));
  w.rewind();
  EXPECT_FALSE(w.unsettled()) << "everything sent was acknowledged";
  w.send(2, 12, 15, 1);
  w.rewind();
  EXPECT_TRUE(w.unsettled()) << "the batch at 12 may be in the central log";
}

TEST(SendWindow, ANewProducerRestartsSequencesAtTheCursor) {
  SendWindow w(cursor(10, 1, 0, 5), {1, 0}, 5);
  w.send(1, 10, 12, 1);
  w.restart_sequences({2, 0});
  EXPECT_TRUE(w.idle());
  EXPECT_EQ(w.acked().producer_id, 2);
  EXPECT_EQ(w.send_offset(), 10);
  EXPECT_EQ(w.send(2, 10, 12, 1), 0);
}

TEST(SendWindow, MovingTheCursorKeepsTheSequenceAndCountsDrops) {
  SendWindow w(cursor(10, 1, 0, 5), {1, 0}, 5);
  w.move_cursor(30, 20);
  EXPECT_EQ(w.acked().next_offset, 30);
  EXPECT_EQ(w.acked().dropped_messages, 20);
  EXPECT_EQ(w.send_offset(), 30);
  EXPECT_EQ(w.send(1, 30, 31, 1), 5);
}

TEST(SendWindow, SequencesWrapAfterInt32Max) {
  const int32_t max = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(increment_sequence(max - 1, 1), max);
  EXPECT_EQ(increment_sequence(max, 1), 0);
  EXPECT_EQ(increment_sequence(max - 1, 5), 3);
  SendWindow w(cursor(0, 1, 0, max - 1), {1, 0}, 5);
  w.send(1, 0, 3, 1);
  EXPECT_EQ(w.send_sequence(), 1);
}

// Random sends, acknowledgements (right and wrong tags), failures, producer
// changes and cursor moves; the invariant holds after each step, and every
// offset sent again under the same producer goes with the same sequence.
TEST(SendWindow, InvariantHoldsUnderRandomOperations) {
  for (uint32_t seed = 1; seed <= 50; ++seed) {
    std::mt19937 rng(seed);
    const int32_t max_in_flight = 1 + static_cast<int32_t>(rng() % 5);
    meta::ForwardProducer producer{3, 0};
    SendWindow w(cursor(0, 3, 0, std::numeric_limits<int32_t>::max() - 20), producer, max_in_flight);
    std::map<int64_t, int32_t> sequence_of;  // base offset -> sequence, under the current producer
    uint64_t next_tag = 1;
    for (int step = 0; step < 2000; ++step) {
      const uint32_t op = rng() % 100;
      std::string what;
      if (op < 50) {
        if (!w.can_send()) continue;
        const int64_t base = w.send_offset();
        // Batches as stored: their boundaries are fixed by the offset.
        const int64_t next = base + 1 + static_cast<int64_t>(base % 4);
        const int32_t seq = w.send(next_tag++, base, next, 100);
        auto [it, fresh] = sequence_of.emplace(base, seq);
        ASSERT_EQ(it->second, seq) << "seed " << seed << " step " << step << ": offset " << base
                                   << " sent again with another sequence";
        what = "send";
      } else if (op < 80) {
        if (w.idle()) continue;
        SendWindow::Batch done{};
        const SendWindow::Batch oldest = w.in_flight().front();
        const meta::ForwardCursor before = w.acked();
        if (rng() % 4 == 0 && w.in_flight().size() > 1) {
          ASSERT_FALSE(w.acknowledge(w.in_flight().back().tag, &done)) << "seed " << seed;
          ASSERT_EQ(w.acked(), before);
        } else {
          ASSERT_TRUE(w.acknowledge(oldest.tag, &done));
          ASSERT_EQ(done.tag, oldest.tag);
          ASSERT_EQ(w.acked().next_offset, oldest.next_offset);
          ASSERT_EQ(w.acked().next_sequence, oldest.next_sequence);
        }
        what = "ack";
      } else if (op < 95) {
        w.rewind();
        ASSERT_TRUE(w.idle());
        what = "rewind";
      } else if (op < 97) {
        producer.producer_epoch = static_cast<int16_t>(producer.producer_epoch + 1);
        w.restart_sequences(producer);
        sequence_of.clear();
        what = "new producer";
      } else {
        if (!w.idle()) continue;
        w.move_cursor(w.send_offset() + 1 + static_cast<int64_t>(rng() % 10));
        sequence_of.clear();  // different batch boundaries from here
        what = "move";
      }
      ASSERT_TRUE(holds_invariant(w, max_in_flight, producer)) << "seed " << seed << " step " << step << " after "
                                                                << what;
    }
  }
}

}  // namespace
}  // namespace eddy::forward

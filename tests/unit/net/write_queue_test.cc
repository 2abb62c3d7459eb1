// WriteQueue: what a connection writes next, and the cursor across partial
// writes, file regions and responses.
#include "net/write_queue.h"

#include <gtest/gtest.h>

#include <string>

namespace eddy::net {
namespace {

protocol::OutputBuffer memory_response(const std::string& text) {
  protocol::OutputBuffer b;
  b.append(text.data(), text.size());
  return b;
}

std::string joined(const WriteQueue::Next& next) {
  std::string out;
  for (size_t i = 0; i < next.piece_count; ++i) {
    out.append(reinterpret_cast<const char*>(next.pieces[i].data), next.pieces[i].length);
  }
  return out;
}

TEST(WriteQueue, GathersMemoryAcrossResponsesAndFollowsPartialWrites) {
  WriteQueue q;
  q.push(memory_response("hello "));
  q.push(memory_response("world"));
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.queued_bytes(), 11u);

  WriteQueue::Next next;
  ASSERT_TRUE(q.next(&next));
  EXPECT_FALSE(next.is_file);
  EXPECT_EQ(joined(next), "hello world");
  EXPECT_FALSE(next.file_follows);

  q.advance(8);  // "hello wo": the first response is written, the second in part
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.queued_bytes(), 5u);
  ASSERT_TRUE(q.next(&next));
  EXPECT_EQ(joined(next), "rld");

  q.advance(3);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.queued_bytes(), 0u);
  EXPECT_FALSE(q.next(&next));
}

TEST(WriteQueue, AFileRegionEndsTheGatherAndIsSentOnItsOwnFromWhereItStopped) {
  WriteQueue q;
  protocol::OutputBuffer b;
  b.append("head", 4);
  b.append_file(protocol::FileRegion{7, 1000, 50, nullptr});
  b.append("tail", 4);
  q.push(std::move(b));
  q.push(memory_response("next"));

  WriteQueue::Next next;
  ASSERT_TRUE(q.next(&next));
  EXPECT_EQ(joined(next), "head");  // stops at the file region
  EXPECT_TRUE(next.file_follows);
  q.advance(2);
  ASSERT_TRUE(q.next(&next));
  EXPECT_EQ(joined(next), "ad");
  EXPECT_TRUE(next.file_follows);
  q.advance(2);

  ASSERT_TRUE(q.next(&next));
  ASSERT_TRUE(next.is_file);
  EXPECT_EQ(next.fd, 7);
  EXPECT_EQ(next.file_offset, 1000u);
  EXPECT_EQ(next.file_length, 50u);
  q.advance(20);  // sendfile took part of it
  ASSERT_TRUE(q.next(&next));
  ASSERT_TRUE(next.is_file);
  EXPECT_EQ(next.file_offset, 1020u);
  EXPECT_EQ(next.file_length, 30u);
  q.advance(30);

  ASSERT_TRUE(q.next(&next));
  EXPECT_EQ(joined(next), "tailnext");  // the rest of the first response, then the second
  EXPECT_FALSE(next.file_follows);
  q.advance(8);
  EXPECT_TRUE(q.empty());
}

TEST(WriteQueue, OneGatherTakesAtMostKMaxGatherPieces) {
  WriteQueue q;
  for (size_t i = 0; i < WriteQueue::kMaxGather + 3; ++i) q.push(memory_response("x"));
  WriteQueue::Next next;
  ASSERT_TRUE(q.next(&next));
  EXPECT_EQ(next.piece_count, WriteQueue::kMaxGather);
  q.advance(WriteQueue::kMaxGather);
  ASSERT_TRUE(q.next(&next));
  EXPECT_EQ(next.piece_count, 3u);
}

TEST(WriteQueue, EmptyResponsesAreDroppedWithoutAWrite) {
  WriteQueue q;
  q.push(protocol::OutputBuffer());
  q.push(memory_response("a"));
  WriteQueue::Next next;
  ASSERT_TRUE(q.next(&next));
  EXPECT_EQ(joined(next), "a");
  EXPECT_EQ(q.size(), 1u);
  q.clear();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.queued_bytes(), 0u);
  EXPECT_FALSE(q.next(&next));
}

}  // namespace
}  // namespace eddy::net

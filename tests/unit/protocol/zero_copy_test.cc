// Decoding a Produce request does not copy its records: the decoded records
// field points into the frame, and decoding a 1 MiB request allocates only a
// few hundred bytes (the topic and partition vectors), counted by replacing
// the global operator new in this test binary.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "protocol/generated/produce.h"
#include "protocol/headers.h"

namespace {

std::atomic<bool> g_counting{false};
std::atomic<size_t> g_allocated_bytes{0};
std::atomic<size_t> g_allocations{0};

void* counted_alloc(size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) {
    g_allocated_bytes += size;
    ++g_allocations;
  }
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(size_t size) { return counted_alloc(size); }
void* operator new[](size_t size) { return counted_alloc(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace eddy::protocol {
namespace {

TEST(ZeroCopy, ProduceRecordsViewTheFrame) {
  constexpr size_t kRecordBytes = 1 << 20;
  std::vector<uint8_t> payload(kRecordBytes);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 131 + 7);

  for (int16_t version : {int16_t{3}, int16_t{7}, int16_t{9}, int16_t{11}}) {
    SCOPED_TRACE(version);
    ProduceRequest request;
    request.acks = -1;
    request.timeout_ms = 30000;
    auto& topic = request.topic_data.emplace_back();
    topic.name = "a-topic-name-longer-than-sso";
    auto& partition = topic.partition_data.emplace_back();
    partition.index = 3;
    partition.records.emplace();
    partition.records->bytes = payload;

    OutputBuffer out;
    ASSERT_TRUE(encode_request_frame(request, version, 1, std::string("producer"), &out).ok());
    // The frame as the network layer would hold it, without the size prefix.
    std::vector<uint8_t> wire(out.memory() + 4, out.memory() + out.memory_size());
    std::span<const uint8_t> frame(wire);

    ParsedRequestHeader header;
    ASSERT_TRUE(parse_request_header(frame, &header).ok());
    ProduceRequest decoded;

    g_allocated_bytes = 0;
    g_allocations = 0;
    g_counting = true;
    Status s = decode_request_body(frame, header, &decoded);
    g_counting = false;
    ASSERT_TRUE(s.ok()) << s.message();

    ASSERT_EQ(decoded.topic_data.size(), 1u);
    ASSERT_EQ(decoded.topic_data[0].partition_data.size(), 1u);
    const auto& records = decoded.topic_data[0].partition_data[0].records;
    ASSERT_TRUE(records.has_value());
    ASSERT_EQ(records->bytes.size(), kRecordBytes);
    EXPECT_GE(records->bytes.data(), frame.data());
    EXPECT_LE(records->bytes.data() + records->bytes.size(), frame.data() + frame.size());
    EXPECT_EQ(records->bytes.data(), frame.data() + frame.size() - kRecordBytes - (version >= 9 ? 3 : 0))
        << "records end the frame (followed by the partition's, topic's and request's tag sections)";
    EXPECT_TRUE(std::equal(payload.begin(), payload.end(), records->bytes.begin()));

    EXPECT_LT(g_allocated_bytes.load(), 1024u) << g_allocations.load() << " allocations";
    EXPECT_LE(g_allocations.load(), 4u);
  }
}

}  // namespace
}  // namespace eddy::protocol

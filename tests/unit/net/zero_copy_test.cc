// Responses with file regions go out with port::send_file_range (sendfile(2)
// on Linux): the bytes are right and never pass through a user-space buffer.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "net_test_util.h"
#include "port/port.h"

namespace eddy::net {
namespace {

using namespace testing;

// A file of random bytes in a fresh temporary directory.
class DataFile {
 public:
  explicit DataFile(size_t size) {
    std::random_device seed;
    std::mt19937_64 rng(seed());
    dir_ = (std::filesystem::temp_directory_path() / ("eddy-net-test-" + std::to_string(rng()))).string();
    EXPECT_FALSE(port::make_directories(dir_));
    auto file = std::make_shared<port::File>();
    EXPECT_FALSE(port::File::open(dir_ + "/data", port::OpenMode::kCreate, file.get()));
    content_.resize(size);
    for (auto& b : content_) b = static_cast<uint8_t>(rng());
    EXPECT_FALSE(file->write_at(0, content_.data(), content_.size()));
    file_ = std::move(file);
  }
  ~DataFile() { port::remove_tree(dir_); }

  protocol::FileRegion region(uint64_t offset, uint64_t length) const {
    protocol::FileRegion r;
    r.fd = file_->fd();
    r.offset = offset;
    r.length = length;
    r.keep_alive = file_;
    return r;
  }
  std::vector<uint8_t> bytes(uint64_t offset, uint64_t length) const {
    return std::vector<uint8_t>(content_.begin() + offset, content_.begin() + offset + length);
  }

 private:
  std::string dir_;
  std::shared_ptr<port::File> file_;
  std::vector<uint8_t> content_;
};

struct Piece {
  bool file;
  std::string text;   // when !file
  uint64_t offset;    // when file
  uint64_t length;
};

// Builds the framed response and the body the client must receive.
protocol::OutputBuffer build(const DataFile& data, const std::vector<Piece>& pieces, std::vector<uint8_t>* body) {
  body->clear();
  protocol::OutputBuffer out;
  size_t size_at = out.reserve(4);
  for (const Piece& p : pieces) {
    if (p.file) {
      out.append_file(data.region(p.offset, p.length));
      auto bytes = data.bytes(p.offset, p.length);
      body->insert(body->end(), bytes.begin(), bytes.end());
    } else {
      out.append(p.text.data(), p.text.size());
      body->insert(body->end(), p.text.begin(), p.text.end());
    }
  }
  uint32_t size = static_cast<uint32_t>(out.size() - 4);
  uint8_t prefix[4] = {static_cast<uint8_t>(size >> 24), static_cast<uint8_t>(size >> 16),
                       static_cast<uint8_t>(size >> 8), static_cast<uint8_t>(size)};
  out.patch(size_at, prefix, 4);
  return out;
}

uint64_t expected_copies(uint64_t file_bytes) {
#ifdef EDDY_PORT_GENERIC_BUILD
  return file_bytes;  // the generic port copies through a buffer
#else
  return 0;
#endif
}

TEST(ZeroCopy, FileRegionIsSentWithoutCopying) {
  DataFile data(256 * 1024);
  std::vector<Piece> pieces = {{false, "head", 0, 0}, {true, "", 1000, 100000}, {false, "tail", 0, 0}};
  std::vector<uint8_t> expected;
  build(data, pieces, &expected);
  ServerFixture fx(ServerOptions(), [&](ConnectionContext&, protocol::FrameBytes, ResponseSlot slot) {
    std::vector<uint8_t> ignored;
    slot.respond(build(data, pieces, &ignored));
  });
  uint64_t copied_before = port::bytes_copied_by_send_file();
  TestClient client;
  ASSERT_TRUE(client.connect(fx.port()));
  ASSERT_TRUE(client.write_frame(bytes_of("fetch")));
  std::vector<uint8_t> body;
  ASSERT_TRUE(client.read_frame(&body));
  EXPECT_TRUE(body == expected);
  EXPECT_EQ(port::bytes_copied_by_send_file() - copied_before, expected_copies(100000));
}

// 8 MiB regions through small socket buffers: sendfile hits would-block many
// times and resumes after waiting for writability; two pipelined responses
// stay whole and in order.
TEST(ZeroCopy, LargeRegionsAcrossPartialSends) {
  constexpr uint64_t kLarge = 8 * 1024 * 1024;
  DataFile data(kLarge + 4096);
  std::vector<std::vector<Piece>> responses = {
      {{false, "first", 0, 0}, {true, "", 17, kLarge}},
      {{true, "", 4096, kLarge}, {false, "second", 0, 0}},
  };
  ServerOptions options;
  options.socket_send_buffer_bytes = 64 * 1024;
  int next = 0;  // reactor thread only
  ServerFixture fx(options, [&](ConnectionContext&, protocol::FrameBytes, ResponseSlot slot) {
    std::vector<uint8_t> ignored;
    slot.respond(build(data, responses[next++ % 2], &ignored));
  });
  uint64_t copied_before = port::bytes_copied_by_send_file();
  TestClient client;
  ASSERT_TRUE(client.connect(fx.port(), 64 * 1024));
  std::vector<uint8_t> two = framed(bytes_of("a"));
  auto second = framed(bytes_of("b"));
  two.insert(two.end(), second.begin(), second.end());
  ASSERT_TRUE(client.write(two));
  for (const auto& pieces : responses) {
    std::vector<uint8_t> expected;
    build(data, pieces, &expected);
    std::vector<uint8_t> body;
    ASSERT_TRUE(client.read_frame(&body));
    ASSERT_EQ(body.size(), expected.size());
    EXPECT_TRUE(body == expected);
  }
  EXPECT_EQ(port::bytes_copied_by_send_file() - copied_before, expected_copies(2 * kLarge));
}

// Many pipelined responses mixing memory and file chunks: gathered writes
// span responses and stop at file regions; every byte lands in order.
TEST(ZeroCopy, MixedChunksAcrossPipelinedResponses) {
  constexpr int kRequests = 40;
  DataFile data(64 * 1024);
  auto pieces_for = [](int i) {
    std::vector<Piece> pieces;
    pieces.push_back({false, std::string(1, 'r').append(std::to_string(i)), 0, 0});
    for (int k = 0; k < i % 4; ++k) {
      pieces.push_back({true, "", static_cast<uint64_t>(i * 100 + k), static_cast<uint64_t>(1 + i * 37 + k)});
      pieces.push_back({false, std::string(static_cast<size_t>(k + 1), static_cast<char>('a' + k)), 0, 0});
    }
    return pieces;
  };
  ServerFixture fx(ServerOptions(), [&](ConnectionContext&, protocol::FrameBytes frame, ResponseSlot slot) {
    std::vector<uint8_t> ignored;
    slot.respond(build(data, pieces_for(std::stoi(text_of(frame))), &ignored));
  });
  TestClient client;
  ASSERT_TRUE(client.connect(fx.port()));
  std::vector<uint8_t> all;
  for (int i = 0; i < kRequests; ++i) {
    auto frame = framed(bytes_of(std::to_string(i)));
    all.insert(all.end(), frame.begin(), frame.end());
  }
  ASSERT_TRUE(client.write(all));
  for (int i = 0; i < kRequests; ++i) {
    std::vector<uint8_t> expected;
    build(data, pieces_for(i), &expected);
    std::vector<uint8_t> body;
    ASSERT_TRUE(client.read_frame(&body)) << i;
    EXPECT_TRUE(body == expected) << i;
  }
}

TEST(ZeroCopy, UnframedResponseClosesTheConnection) {
  ServerFixture fx(ServerOptions(), [](ConnectionContext&, protocol::FrameBytes, ResponseSlot slot) {
    protocol::OutputBuffer wrong;
    uint8_t bytes[] = {0, 0, 0, 9, 'x'};  // claims 9 bytes, has 1
    wrong.append(bytes, sizeof(bytes));
    slot.respond(std::move(wrong));
  });
  TestClient client;
  ASSERT_TRUE(client.connect(fx.port()));
  ASSERT_TRUE(client.write_frame(bytes_of("x")));
  EXPECT_TRUE(client.wait_closed());
}

}  // namespace
}  // namespace eddy::net

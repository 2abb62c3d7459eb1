#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <random>
#include <thread>
#include <vector>

#include "port/port.h"
#include "test_dir.h"

namespace eddy::port {
namespace {

using eddy::testing::TempDir;

struct Fixture {
  TempDir dir;
  File file;
  std::vector<uint8_t> content;
  int sockets[2] = {-1, -1};

  Fixture() {
    std::mt19937 rng(7);
    content.resize(3 * 1024 * 1024 + 17);
    for (auto& b : content) b = static_cast<uint8_t>(rng());
    EXPECT_FALSE(File::open(dir.file("data"), OpenMode::kCreate, &file));
    EXPECT_FALSE(file.write_at(0, content.data(), content.size()));
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sockets), 0);
  }
  ~Fixture() {
    if (sockets[0] >= 0) ::close(sockets[0]);
    if (sockets[1] >= 0) ::close(sockets[1]);
  }

  // Sends [offset, offset+length) with send, receiving on the other end.
  std::vector<uint8_t> transfer(uint64_t offset, size_t length,
                                std::error_code (*send)(int, int, uint64_t, size_t, size_t*)) {
    std::vector<uint8_t> received;
    std::thread reader([&] {
      uint8_t buf[65536];
      while (received.size() < length) {
        ssize_t n = ::read(sockets[1], buf, sizeof(buf));
        if (n <= 0) break;
        received.insert(received.end(), buf, buf + n);
      }
    });
    size_t done = 0;
    while (done < length) {
      size_t sent = 0;
      auto ec = send(sockets[0], file.fd(), offset + done, length - done, &sent);
      done += sent;
      if (ec && ec != std::errc::operation_would_block) {
        ADD_FAILURE() << ec.message();
        break;
      }
    }
    reader.join();
    return received;
  }
};

TEST(SendFile, ZeroCopySendsTheRangeWithoutUserSpaceCopies) {
  Fixture fx;
  uint64_t copied_before = bytes_copied_by_send_file();
  auto got = fx.transfer(1000, 2 * 1024 * 1024, send_file_range);
  ASSERT_EQ(got.size(), 2u * 1024 * 1024);
  EXPECT_TRUE(std::equal(got.begin(), got.end(), fx.content.begin() + 1000));
#if defined(__linux__) && !defined(EDDY_PORT_GENERIC_BUILD)
  EXPECT_EQ(bytes_copied_by_send_file(), copied_before) << "sendfile path copied bytes through user space";
#endif
}

TEST(SendFile, CopyingFallbackSendsTheSameBytesAndCountsThem) {
  Fixture fx;
  uint64_t copied_before = bytes_copied_by_send_file();
  auto got = fx.transfer(17, fx.content.size() - 17, send_file_range_copying);
  ASSERT_EQ(got.size(), fx.content.size() - 17);
  EXPECT_TRUE(std::equal(got.begin(), got.end(), fx.content.begin() + 17));
  EXPECT_EQ(bytes_copied_by_send_file() - copied_before, fx.content.size() - 17);
}

TEST(SendFile, RangePastEndOfFileIsAnError) {
  Fixture fx;
  size_t sent = 0;
  auto ec = send_file_range(fx.sockets[0], fx.file.fd(), fx.content.size(), 10, &sent);
  EXPECT_TRUE(ec);
  EXPECT_EQ(sent, 0u);
}

}  // namespace
}  // namespace eddy::port

// port::notify_service_manager: the datagram a service manager listening on
// NOTIFY_SOCKET receives, for a path and an abstract-namespace socket, and
// what happens when there is no usable socket.
#include <gtest/gtest.h>

#include <stddef.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "port/port.h"
#include "test_dir.h"

namespace eddy::port {
namespace {

// A datagram socket bound where a service manager would listen; `name` is
// NOTIFY_SOCKET's form ('@' for the abstract namespace). Receives with a
// 5 s deadline.
class Listener {
 public:
  explicit Listener(const std::string& name) : name_(name) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    EXPECT_GE(fd_, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, name.data(), name.size());
    if (name[0] == '@') address.sun_path[0] = '\0';
    const socklen_t length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&address), length), 0) << std::strerror(errno);
    timeval timeout{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  }
  ~Listener() {
    ::close(fd_);
    ::unsetenv("NOTIFY_SOCKET");
  }
  void export_name() const { ::setenv("NOTIFY_SOCKET", name_.c_str(), 1); }
  std::string receive() const {
    char buffer[4096];
    const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
    return n < 0 ? std::string("(nothing: ") + std::strerror(errno) + ")" : std::string(buffer, n);
  }

 private:
  std::string name_;
  int fd_ = -1;
};

TEST(ServiceNotify, PathSocketReceivesTheStateAsOneDatagram) {
  testing::TempDir dir;
  Listener listener(dir.file("notify"));
  listener.export_name();
  ASSERT_FALSE(notify_service_manager("READY=1\nSTATUS=serving"));
  EXPECT_EQ(listener.receive(), "READY=1\nSTATUS=serving");
  ASSERT_FALSE(notify_service_manager("STOPPING=1"));
  EXPECT_EQ(listener.receive(), "STOPPING=1");
}

TEST(ServiceNotify, AbstractNamespaceSocket) {
  Listener listener("@eddy-notify-test-" + std::to_string(::getpid()));
  listener.export_name();
  ASSERT_FALSE(notify_service_manager("READY=1"));
  EXPECT_EQ(listener.receive(), "READY=1");
}

TEST(ServiceNotify, WithoutNotifySocketNothingIsSentAndNothingFails) {
  ::unsetenv("NOTIFY_SOCKET");
  EXPECT_FALSE(notify_service_manager("READY=1"));
  ::setenv("NOTIFY_SOCKET", "", 1);
  EXPECT_FALSE(notify_service_manager("READY=1"));
  ::unsetenv("NOTIFY_SOCKET");
}

TEST(ServiceNotify, UnusableAddressesAreErrors) {
  ::setenv("NOTIFY_SOCKET", "relative/notify", 1);
  EXPECT_EQ(notify_service_manager("READY=1"), std::error_code(EAFNOSUPPORT, std::generic_category()));
  ::setenv("NOTIFY_SOCKET", "vsock:2:1234", 1);
  EXPECT_EQ(notify_service_manager("READY=1"), std::error_code(EAFNOSUPPORT, std::generic_category()));
  ::setenv("NOTIFY_SOCKET", ("/" + std::string(200, 'x')).c_str(), 1);
  EXPECT_EQ(notify_service_manager("READY=1"), std::error_code(ENAMETOOLONG, std::generic_category()));
  testing::TempDir dir;
  ::setenv("NOTIFY_SOCKET", dir.file("nobody-listens").c_str(), 1);
  EXPECT_EQ(notify_service_manager("READY=1"), std::error_code(ENOENT, std::generic_category()));
  ::unsetenv("NOTIFY_SOCKET");
}

}  // namespace
}  // namespace eddy::port

// port::notify_service_manager: systemd's notify protocol (sd_notify(3)) in
// a few lines instead of a libsystemd dependency: one datagram with the
// state text to the AF_UNIX socket named by NOTIFY_SOCKET. Plain POSIX
// sockets, so it is compiled on every platform; the abstract namespace
// ('@') exists only on Linux, and elsewhere sendto fails with the errno the
// system gives.
#include <errno.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "port/port.h"

namespace eddy::port {
namespace {

std::error_code errno_code(int e) { return std::error_code(e, std::generic_category()); }

// Fills *address from a NOTIFY_SOCKET value; *length is the address length
// to pass to sendto (for the abstract namespace it must not count a
// trailing NUL: the name is exactly the bytes given).
std::error_code notify_address(const char* name, sockaddr_un* address, socklen_t* length) {
  const size_t n = std::strlen(name);
  if (name[0] != '/' && name[0] != '@') return errno_code(EAFNOSUPPORT);
  // A path needs room for its terminating NUL; an abstract name does not.
  if (n > sizeof(address->sun_path) - (name[0] == '/' ? 1 : 0)) return errno_code(ENAMETOOLONG);
  std::memset(address, 0, sizeof(*address));
  address->sun_family = AF_UNIX;
  std::memcpy(address->sun_path, name, n);
  if (name[0] == '@') address->sun_path[0] = '\0';
  *length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + n);
  return {};
}

}  // namespace

std::error_code notify_service_manager(std::string_view state) {
  const char* name = std::getenv("NOTIFY_SOCKET");
  if (name == nullptr || name[0] == '\0') return {};
  sockaddr_un address;
  socklen_t length = 0;
  if (std::error_code ec = notify_address(name, &address, &length)) return ec;
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno_code(errno);
  ssize_t sent;
  do {
    sent = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&address), length);
  } while (sent < 0 && errno == EINTR);
  const int send_errno = errno;
  ::close(fd);
  // A datagram goes out whole or not at all.
  if (sent < 0) return errno_code(send_errno);
  return {};
}

}  // namespace eddy::port

// The generic POSIX mapping of the parts of port/port.h that Linux speeds up:
// preallocation by writing zeros, fsync, and copying file ranges to sockets.
#include <errno.h>
#include <unistd.h>

#include "port/file_interceptor.h"
#include "port/port.h"

namespace eddy::port {

std::error_code File::preallocate(uint64_t offset, uint64_t length) {
  if (length == 0) return {};
  return detail::intercepted({.op = FileOp::kPreallocate, .fd = fd_, .offset = offset, .length = length},
                             [&](FileEvent&) { return preallocate_by_writing(fd_, offset, length); });
}

std::error_code File::sync_data() {
  return detail::intercepted({.op = FileOp::kSyncData, .fd = fd_}, [&](FileEvent&) {
    if (::fsync(fd_) != 0) return std::error_code(errno, std::generic_category());
    return std::error_code();
  });
}

void release_free_memory() {}

std::error_code send_file_range(int socket_fd, int file_fd, uint64_t file_offset, size_t length, size_t* sent) {
  return send_file_range_copying(socket_fd, file_fd, file_offset, length, sent);
}

}  // namespace eddy::port

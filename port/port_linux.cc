// Linux fast paths of port/port.h: fallocate(2), fdatasync(2), sendfile(2).
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "port/file_interceptor.h"
#include "port/port.h"

namespace eddy::port {

std::error_code File::preallocate(uint64_t offset, uint64_t length) {
  if (length == 0) return {};
  return detail::intercepted({.op = FileOp::kPreallocate, .fd = fd_, .offset = offset, .length = length},
                             [&](FileEvent&) {
                               int rc;
                               do {
                                 rc = ::fallocate(fd_, 0, static_cast<off_t>(offset), static_cast<off_t>(length));
                               } while (rc != 0 && errno == EINTR);
                               if (rc == 0) return std::error_code();
                               if (errno == EOPNOTSUPP || errno == ENOSYS) {
                                 return preallocate_by_writing(fd_, offset, length);
                               }
                               return std::error_code(errno, std::generic_category());
                             });
}

std::error_code File::sync_data() {
  return detail::intercepted({.op = FileOp::kSyncData, .fd = fd_}, [&](FileEvent&) {
    if (::fdatasync(fd_) != 0) return std::error_code(errno, std::generic_category());
    return std::error_code();
  });
}

void release_free_memory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

std::error_code send_file_range(int socket_fd, int file_fd, uint64_t file_offset, size_t length, size_t* sent) {
  *sent = 0;
  while (*sent < length) {
    off_t off = static_cast<off_t>(file_offset + *sent);
    ssize_t n = ::sendfile(socket_fd, file_fd, &off, length - *sent);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return std::make_error_code(std::errc::operation_would_block);
      if (errno == EINVAL || errno == ENOSYS) {
        // The file system or socket type cannot do sendfile: copy instead.
        size_t copied = 0;
        auto ec = send_file_range_copying(socket_fd, file_fd, file_offset + *sent, length - *sent, &copied);
        *sent += copied;
        return ec;
      }
      return std::error_code(errno, std::generic_category());
    }
    if (n == 0) return std::make_error_code(std::errc::io_error);  // range past end of file
    *sent += static_cast<size_t>(n);
  }
  return {};
}

}  // namespace eddy::port

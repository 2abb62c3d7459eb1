// Generic POSIX implementation of port/port.h. Always compiled: on Linux,
// port_linux.cc provides the fast paths (fallocate, sendfile) and falls back
// to the functions here; elsewhere port_generic.cc maps the contract onto
// them directly.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "port/file_interceptor.h"
#include "port/port.h"
#include "port/replace_file.h"

// File offsets (pread, pwrite, ftruncate, fstat, fallocate, sendfile) and
// clocks pass through the C library as off_t and time_t: narrower types
// would cut positions at 2 GiB and timestamps in 2038. 32-bit glibc targets
// get 64-bit ones from _FILE_OFFSET_BITS=64 and _TIME_BITS=64 (top-level
// CMakeLists.txt); _TIME_BITS needs glibc >= 2.34.
static_assert(sizeof(off_t) == 8, "off_t must be 64 bits: build with -D_FILE_OFFSET_BITS=64");
static_assert(sizeof(time_t) == 8, "time_t must be 64 bits: build with -D_TIME_BITS=64 (glibc >= 2.34)");

namespace eddy::port {
namespace {

std::error_code last_error() { return std::error_code(errno, std::generic_category()); }

std::atomic<uint64_t> g_bytes_copied{0};

}  // namespace

File& File::operator=(File&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.release();
  }
  return *this;
}

File::~File() { close(); }

std::error_code File::open(const std::string& path, OpenMode mode, File* out) {
  int flags = O_CLOEXEC;
  switch (mode) {
    case OpenMode::kReadOnly: flags |= O_RDONLY; break;
    case OpenMode::kReadWrite: flags |= O_RDWR; break;
    case OpenMode::kCreate: flags |= O_RDWR | O_CREAT; break;
    case OpenMode::kCreateExclusive: flags |= O_RDWR | O_CREAT | O_EXCL; break;
  }
  return detail::intercepted({.op = FileOp::kOpen, .path = &path, .mode = mode}, [&](FileEvent& event) {
    int fd;
    do {
      fd = ::open(path.c_str(), flags, 0644);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return last_error();
    event.fd = fd;
    *out = File(fd);
    return std::error_code();
  });
}

std::error_code File::close() {
  if (fd_ < 0) return {};
  int fd = release();
  if (::close(fd) != 0 && errno != EINTR) return last_error();
  return {};
}

std::error_code File::write_at(uint64_t offset, const void* data, size_t length) {
  FileEvent event{.op = FileOp::kWrite, .fd = fd_, .offset = offset, .length = length, .data = data};
  return detail::intercepted(event, [&](FileEvent&) {
    const char* p = static_cast<const char*>(data);
    while (length > 0) {
      ssize_t n = ::pwrite(fd_, p, length, static_cast<off_t>(offset));
      if (n < 0) {
        if (errno == EINTR) continue;
        return last_error();
      }
      if (n == 0) return std::make_error_code(std::errc::io_error);
      p += n;
      offset += static_cast<uint64_t>(n);
      length -= static_cast<size_t>(n);
    }
    return std::error_code();
  });
}

std::error_code read_fd_at(int fd, uint64_t offset, void* data, size_t length, size_t* read_bytes) {
  char* p = static_cast<char*>(data);
  size_t done = 0;
  while (done < length) {
    ssize_t n = ::pread(fd, p + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      *read_bytes = done;
      return last_error();
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  *read_bytes = done;
  return std::error_code();
}

std::error_code File::read_at(uint64_t offset, void* data, size_t length, size_t* read_bytes) const {
  return read_fd_at(fd_, offset, data, length, read_bytes);
}

std::error_code File::size(uint64_t* bytes) const {
  struct stat st;
  if (::fstat(fd_, &st) != 0) return last_error();
  *bytes = static_cast<uint64_t>(st.st_size);
  return {};
}

std::error_code File::truncate(uint64_t length) {
  return detail::intercepted({.op = FileOp::kTruncate, .fd = fd_, .offset = length}, [&](FileEvent&) {
    if (::ftruncate(fd_, static_cast<off_t>(length)) != 0) return last_error();
    return std::error_code();
  });
}

std::error_code File::try_lock_exclusive() {
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) return last_error();
  return {};
}

std::error_code preallocate_by_writing(int fd, uint64_t offset, uint64_t length) {
  // Writes zeros over the range; a range that already holds data is
  // overwritten, which matches fallocate's "reads as zeros" only for new
  // space — callers preallocate fresh files or recycled ranges they zero.
  static const char kZeros[64 * 1024] = {};
  uint64_t end = offset + length;
  while (offset < end) {
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(sizeof(kZeros), end - offset));
    ssize_t n = ::pwrite(fd, kZeros, chunk, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return last_error();
    }
    offset += static_cast<uint64_t>(n);
  }
  return {};
}

std::error_code rename_file(const std::string& from, const std::string& to) {
  return detail::intercepted({.op = FileOp::kRename, .path = &from, .to = &to}, [&](FileEvent&) {
    if (::rename(from.c_str(), to.c_str()) != 0) return last_error();
    return std::error_code();
  });
}

std::error_code remove_file(const std::string& path) {
  return detail::intercepted({.op = FileOp::kRemove, .path = &path}, [&](FileEvent&) {
    if (::unlink(path.c_str()) != 0) return last_error();
    return std::error_code();
  });
}

std::error_code make_directories(const std::string& path) {
  if (path.empty()) return std::make_error_code(std::errc::invalid_argument);
  return detail::intercepted({.op = FileOp::kMakeDirectories, .path = &path}, [&](FileEvent&) {
    std::string partial;
    size_t pos = 0;
    while (pos != std::string::npos) {
      pos = path.find('/', pos + 1);
      partial = path.substr(0, pos);
      if (partial.empty()) continue;
      if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) return last_error();
    }
    if (!is_directory(path)) return std::make_error_code(std::errc::not_a_directory);
    return std::error_code();
  });
}

std::error_code remove_tree(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    return last_error();
  }
  if (S_ISDIR(st.st_mode)) {
    std::vector<std::string> names;
    if (auto ec = list_directory(path, &names)) return ec;
    for (const auto& name : names) {
      if (auto ec = remove_tree(path + "/" + name)) return ec;
    }
    if (::rmdir(path.c_str()) != 0) return last_error();
    return {};
  }
  return remove_file(path);
}

std::error_code sync_directory(const std::string& path) {
  return detail::intercepted({.op = FileOp::kSyncDirectory, .path = &path}, [&](FileEvent&) {
    int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return last_error();
    std::error_code ec;
    if (::fsync(fd) != 0) ec = last_error();
    ::close(fd);
    return ec;
  });
}

std::error_code replace_file(const std::string& path, const void* data, size_t size, bool durable) {
  const std::string tmp = path + ".tmp";
  File file;
  std::error_code ec = File::open(tmp, OpenMode::kCreate, &file);
  if (!ec) ec = file.truncate(0);
  if (!ec) ec = file.write_at(0, data, size);
  if (!ec && durable) ec = file.sync_data();
  if (!ec) ec = file.close();
  if (!ec) ec = rename_file(tmp, path);
  if (!ec && durable) {
    const size_t slash = path.find_last_of('/');
    ec = sync_directory(slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash));
  }
  if (ec) (void)remove_file(tmp);
  return ec;
}

std::error_code list_directory(const std::string& path, std::vector<std::string>* names) {
  names->clear();
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return last_error();
  // readdir returns nullptr both at the end and on error; only errno tells
  // them apart (a partial listing must not pass for the whole directory).
  std::error_code ec;
  for (;;) {
    errno = 0;
    struct dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      if (errno != 0) ec = last_error();
      break;
    }
    if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
    names->emplace_back(entry->d_name);
  }
  ::closedir(dir);
  if (ec) names->clear();
  return ec;
}

bool path_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool is_directory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::error_code filesystem_space(const std::string& path, FilesystemSpace* out) {
  struct statvfs fs;
  if (::statvfs(path.c_str(), &fs) != 0) return last_error();
  out->total_bytes = static_cast<uint64_t>(fs.f_blocks) * fs.f_frsize;
  out->available_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  return {};
}

std::error_code allocated_bytes(const std::string& path, uint64_t* bytes) {
  *bytes = 0;
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return last_error();
  *bytes = static_cast<uint64_t>(st.st_blocks) * 512;
  if (!S_ISDIR(st.st_mode)) return {};
  std::vector<std::string> names;
  if (auto ec = list_directory(path, &names)) return ec;
  for (const auto& name : names) {
    uint64_t child = 0;
    std::error_code ec = allocated_bytes(path + "/" + name, &child);
    if (ec && ec != std::errc::no_such_file_or_directory) return ec;
    *bytes += child;
  }
  return {};
}

std::error_code send_file_range_copying(int socket_fd, int file_fd, uint64_t file_offset, size_t length,
                                        size_t* sent) {
  *sent = 0;
  char buffer[16 * 1024];
  while (*sent < length) {
    size_t want = std::min(sizeof(buffer), length - *sent);
    ssize_t got = ::pread(file_fd, buffer, want, static_cast<off_t>(file_offset + *sent));
    if (got < 0) {
      if (errno == EINTR) continue;
      return last_error();
    }
    if (got == 0) return std::make_error_code(std::errc::io_error);  // range past end of file
    size_t written = 0;
    while (written < static_cast<size_t>(got)) {
      ssize_t n = ::send(socket_fd, buffer + written, static_cast<size_t>(got) - written, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          // Bytes read but not sent are read again next time.
          return std::make_error_code(std::errc::operation_would_block);
        }
        return last_error();
      }
      written += static_cast<size_t>(n);
      *sent += static_cast<size_t>(n);
      g_bytes_copied.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    }
  }
  return {};
}

uint64_t bytes_copied_by_send_file() { return g_bytes_copied.load(std::memory_order_relaxed); }

int64_t monotonic_nanos() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t wall_clock_millis() {
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void block_termination_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // A peer closing a socket must surface as EPIPE, not kill the process.
  signal(SIGPIPE, SIG_IGN);
}

int wait_for_termination_signal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  int sig = 0;
  while (sigwait(&set, &sig) != 0) {
  }
  return sig;
}

uint64_t raise_open_file_limit(uint64_t wanted) {
  struct rlimit limit;
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < wanted) {
    rlim_t target = static_cast<rlim_t>(wanted);
    if (limit.rlim_max != RLIM_INFINITY && target > limit.rlim_max) target = limit.rlim_max;
    limit.rlim_cur = target;
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) ::getrlimit(RLIMIT_NOFILE, &limit);
  }
  return limit.rlim_cur == RLIM_INFINITY ? UINT64_MAX : static_cast<uint64_t>(limit.rlim_cur);
}

uint64_t peak_rss_bytes() {
  struct rusage usage;
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
#if defined(__APPLE__)
  return static_cast<uint64_t>(usage.ru_maxrss);
#else
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;
#endif
}

std::string error_message(const std::error_code& ec) { return ec.message(); }

}  // namespace eddy::port

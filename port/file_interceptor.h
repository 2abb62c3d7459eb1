// port/file_interceptor.h — a seam for tests of what the disk keeps.
//
// When an interceptor is installed, every function of port.h that changes
// files or directories reports to it before it acts and may be refused:
// File::open, File::write_at, File::preallocate, File::truncate,
// File::sync_data, rename_file, remove_file (also for each file remove_tree
// removes), make_directories and sync_directory. The power-cut test
// (tests/unit/storage/power_cut_test.cc) records writes through it and
// drops what was not synced, as LevelDB's fault-injection environment does;
// a test can also make one call fail (fdatasync returning EIO).
//
// Production never installs one: then each of those calls costs one
// atomic load more.
//
// Invariant: the interceptor is locked from before() to after() of one
// operation, so that the operation and what the interceptor records about
// it are atomic with respect to other threads (the flusher) and to whatever
// the interceptor does between operations (a simulated power cut).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <system_error>

#include "port/port.h"

namespace eddy::port {

enum class FileOp : uint8_t {
  kOpen,             // path, mode; after(): fd of the opened file
  kWrite,            // fd, offset, length, data
  kPreallocate,      // fd, offset, length
  kTruncate,         // fd, offset = the new length
  kSyncData,         // fd
  kRename,           // path -> to
  kRemove,           // path (a file)
  kMakeDirectories,  // path
  kSyncDirectory,    // path
};

struct FileEvent {
  FileOp op;
  int fd = -1;
  const std::string* path = nullptr;
  const std::string* to = nullptr;
  OpenMode mode = OpenMode::kReadOnly;
  uint64_t offset = 0;
  uint64_t length = 0;
  const void* data = nullptr;
};

class FileInterceptor {
 public:
  virtual ~FileInterceptor() = default;
  virtual void lock() = 0;
  virtual void unlock() = 0;
  // Before the operation; an error fails it without doing it.
  virtual std::error_code before(const FileEvent& event) = 0;
  // After it ran (not when before() refused it), with its result.
  virtual void after(const FileEvent& event, const std::error_code& result) = 0;
};

// Installs interceptor for the whole process (nullptr: none). REQUIRES no
// intercepted operation runs on another thread while it changes.
void set_file_interceptor(FileInterceptor* interceptor);
FileInterceptor* file_interceptor();

namespace detail {

// Runs operation(event) -> std::error_code under the installed interceptor,
// if any. operation may fill in event.fd (kOpen).
template <typename Operation>
std::error_code intercepted(FileEvent event, Operation&& operation) {
  FileInterceptor* interceptor = file_interceptor();
  if (interceptor == nullptr) return operation(event);
  std::lock_guard<FileInterceptor> hold(*interceptor);
  if (std::error_code refused = interceptor->before(event)) return refused;
  std::error_code result = operation(event);
  interceptor->after(event, result);
  return result;
}

}  // namespace detail
}  // namespace eddy::port

// port/port.h — the platform contract.
//
// Everything Eddy needs from the operating system and the CPU goes through
// this header; nothing outside port/ includes a platform header (<unistd.h>,
// <fcntl.h>, <sys/...>, intrinsics). A new platform provides these functions
// with the semantics documented here. Two implementations exist:
//   port_posix.cc  generic POSIX, always compiled (also the fallback paths);
//   port_linux.cc  Linux fast paths: fallocate(2), sendfile(2), fdatasync(2).
// EDDY_PORT_GENERIC=ON builds the generic one on Linux too.
//
// Conventions: functions that can fail return std::error_code (empty on
// success) carrying the errno value in std::generic_category(). None of them
// throws. File descriptors are plain ints owned by port::File.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace eddy::port {

// ---------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------

enum class OpenMode {
  kReadOnly,        // the file must exist
  kReadWrite,       // the file must exist
  kCreate,          // read-write, created when missing
  kCreateExclusive  // read-write, fails with EEXIST when present
};

// An owned file descriptor. Move-only; closes on destruction.
class File {
 public:
  File() = default;
  explicit File(int fd) : fd_(fd) {}
  File(File&& other) noexcept : fd_(other.release()) {}
  File& operator=(File&& other) noexcept;
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  ~File();

  static std::error_code open(const std::string& path, OpenMode mode, File* out);

  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  std::error_code close();

  // Reserves [offset, offset+length) on disk so that later writes there cannot
  // fail for lack of space. The reserved range reads as zeros. Linux uses
  // fallocate(2); where the filesystem does not support it, and on the generic
  // port, zeros are written.
  std::error_code preallocate(uint64_t offset, uint64_t length);

  // Writes all of [data, data+length) at offset (retrying short writes).
  std::error_code write_at(uint64_t offset, const void* data, size_t length);

  // Reads up to length bytes at offset; *read_bytes < length only at end of
  // file.
  std::error_code read_at(uint64_t offset, void* data, size_t length, size_t* read_bytes) const;

  // Makes written data durable (fdatasync; fsync where that is missing).
  std::error_code sync_data();

  std::error_code size(uint64_t* bytes) const;
  std::error_code truncate(uint64_t length);

  // Takes an advisory exclusive lock (flock) without waiting. EWOULDBLOCK
  // when another process holds it. Released when the file is closed.
  std::error_code try_lock_exclusive();

 private:
  int fd_ = -1;
};

// Portable implementation of File::preallocate (writes zeros); exposed so
// tests can exercise the fallback on every platform.
std::error_code preallocate_by_writing(int fd, uint64_t offset, uint64_t length);

std::error_code rename_file(const std::string& from, const std::string& to);
std::error_code remove_file(const std::string& path);
// Creates the directory and its missing parents (mkdir -p).
std::error_code make_directories(const std::string& path);
// Removes a directory and everything under it (rm -rf). Missing is success.
std::error_code remove_tree(const std::string& path);
// fsyncs a directory so that creations, renames and removals in it are durable.
std::error_code sync_directory(const std::string& path);
// Names (not paths) of the entries of a directory, without "." and "..".
std::error_code list_directory(const std::string& path, std::vector<std::string>* names);
bool path_exists(const std::string& path);
bool is_directory(const std::string& path);

// Size of the filesystem holding path and the bytes an unprivileged process
// may still allocate there (statvfs: f_blocks and f_bavail times f_frsize).
struct FilesystemSpace {
  uint64_t total_bytes = 0;
  uint64_t available_bytes = 0;
};
std::error_code filesystem_space(const std::string& path, FilesystemSpace* out);
// Bytes allocated on disk to path and, for a directory, to everything under
// it (st_blocks x 512, what du(1) counts; symbolic links are not followed).
// Entries that vanish while it walks are skipped.
std::error_code allocated_bytes(const std::string& path, uint64_t* bytes);

// ---------------------------------------------------------------------------
// Zero-copy send
// ---------------------------------------------------------------------------

// Sends up to length bytes of file_fd starting at file_offset to the
// (possibly non-blocking) socket socket_fd. *sent is set to the bytes sent,
// which may be fewer than length; a socket that cannot take more returns
// std::errc::operation_would_block with *sent possibly > 0. Linux uses
// sendfile(2), so the bytes never pass through user space; elsewhere (and
// in send_file_range_copying) they are pread into a buffer and written.
std::error_code send_file_range(int socket_fd, int file_fd, uint64_t file_offset, size_t length, size_t* sent);
std::error_code send_file_range_copying(int socket_fd, int file_fd, uint64_t file_offset, size_t length, size_t* sent);

// Reads up to length bytes of the descriptor fd at offset (pread(2),
// retrying short reads); *read_bytes < length only at end of file. For
// descriptors held elsewhere (a response's file region), where File::read_at
// needs a File.
std::error_code read_fd_at(int fd, uint64_t offset, void* data, size_t length, size_t* read_bytes);

// Number of file bytes that went through a user-space buffer on the way to a
// socket (the copying path) since the process started. The zero-copy tests
// assert that plaintext fetches leave it unchanged.
uint64_t bytes_copied_by_send_file();

// ---------------------------------------------------------------------------
// CRC-32C (Castagnoli), as used by Kafka's RecordBatch.
// ---------------------------------------------------------------------------

// Extends crc (0 to start) over data. Uses the CPU's CRC-32C instructions
// together with carry-less multiply when it has both (SSE4.2 and PCLMULQDQ on
// x86-64, CRC32 and PMULL on aarch64), the CRC instructions alone when it has
// only those, the table-driven portable code otherwise.
// crc32c(0, "123456789", 9) == 0xE3069283.
uint32_t crc32c(uint32_t crc, const void* data, size_t length);
// The portable path, always available (tests compare every path with it).
uint32_t crc32c_portable(uint32_t crc, const void* data, size_t length);
// The CRC instructions as three interleaved streams, without carry-less
// multiply (crc32c on CPUs without it); the portable path when the CPU has no
// CRC instructions. For tests and the micro-benchmark.
uint32_t crc32c_three_streams(uint32_t crc, const void* data, size_t length);
// The CRC instructions as one dependent stream: the micro-benchmark's
// baseline and a cross-check; the portable path when the CPU has no CRC
// instructions.
uint32_t crc32c_one_stream(uint32_t crc, const void* data, size_t length);
// Names the path crc32c takes on this CPU: "sse4.2+pclmul", "sse4.2",
// "armv8-crc+pmull", "armv8-crc" or "portable".
const char* crc32c_implementation();

// ---------------------------------------------------------------------------
// Clocks
// ---------------------------------------------------------------------------

// Nanoseconds from an arbitrary fixed point; never goes backwards.
int64_t monotonic_nanos();
inline int64_t monotonic_millis() { return monotonic_nanos() / 1000000; }
// Milliseconds since the Unix epoch (Kafka's timestamp unit).
int64_t wall_clock_millis();

// ---------------------------------------------------------------------------
// Process
// ---------------------------------------------------------------------------

// Blocks SIGINT/SIGTERM for the calling thread (and threads it creates later)
// and returns when one of them is delivered; returns the signal number.
// Used by a dedicated thread so the reactor never runs signal handlers.
void block_termination_signals();
int wait_for_termination_signal();
// Raises this process's soft limit on open files towards `wanted` (at most
// the hard limit); returns the soft limit in effect afterwards.
uint64_t raise_open_file_limit(uint64_t wanted);
// Gives back to the system the memory the allocator holds free (glibc:
// malloc_trim(0), which also releases free pages inside the heap; elsewhere
// nothing). For after a spike: it walks the whole heap.
void release_free_memory();
// Peak resident set size of this process in bytes (0 when unknown).
uint64_t peak_rss_bytes();
std::string error_message(const std::error_code& ec);

// ---------------------------------------------------------------------------
// Service manager (port/service_notify.cc)
// ---------------------------------------------------------------------------

// Tells the service manager that started this process (systemd with
// Type=notify, or anything speaking its notify protocol, sd_notify(3)) about
// this process's state: sends `state`, newline-separated VARIABLE=value
// assignments such as "READY=1\nSTATUS=serving", as one datagram to the
// AF_UNIX socket named by the environment variable NOTIFY_SOCKET. A name
// starting with '@' is in the abstract namespace ('@' stands for the leading
// NUL byte); otherwise it must be an absolute path. Does not link libsystemd.
// Returns {} without sending anything when NOTIFY_SOCKET is unset or empty
// (not started by a service manager); EAFNOSUPPORT for any other address form
// (e.g. systemd's "vsock:"), ENAMETOOLONG when the name does not fit a
// sockaddr_un, else the errno of socket(2)/sendto(2). NOTIFY_SOCKET is left
// set, so that later states (STOPPING=1) reach the same socket.
std::error_code notify_service_manager(std::string_view state);

}  // namespace eddy::port

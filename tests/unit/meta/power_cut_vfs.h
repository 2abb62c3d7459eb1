// A simulated power cut for SQLite databases: a VFS registered over SQLite's
// default one ("unix"), modelled on SQLite's own crash-test VFS (src/test6.c
// in SQLite's sources). Eddy's databases do their I/O through SQLite's VFS,
// not through port::File, so the storage room's PowerCutFilesystem
// (tests/unit/storage/power_cut_filesystem.h) cannot see it; this can.
//
// Every call is forwarded to the real VFS at once (reads see every write, as
// with a page cache). While it forwards, it remembers for each file the old
// contents of each range written or truncated since the file's last xSync,
// and for each directory the files created and deleted since the directory
// was last synced. A directory is synced
//   - by the unix VFS itself, on the first xSync of a WAL, rollback or super
//     journal it opened with SQLITE_OPEN_CREATE (os_unix.c's
//     UNIXFILE_DIRSYNC), and by xDelete with syncDir set;
//   - by Eddy (port::sync_directory, after creating a database), which the
//     VFS learns through DirectorySyncReporter below.
// A deleted file whose deletion no directory sync covered is kept as a hard
// link in the stash directory, so that the cut can bring it back.
//
// The cut comes at a chosen call (arm()) or between calls (cut_now()). From
// then on every call that would read or change a file fails with an I/O
// error and does nothing (the process has died: what the connection still
// tries on its way out, such as sqlite3_close's checkpoint and WAL delete,
// changes nothing). Once every connection is closed, power_off() decides
// what the disk kept of what no sync covered:
//   - each 512-byte sector of unsynced writes holds the contents of some
//     prefix of its own write history (newest writes undone first, each with
//     undo_probability): a torn write keeps some of its sectors;
//   - a file's size falls back, newest change first, to its size before
//     each undone size change (a write past the end, a truncate);
//   - per directory, unsynced creations and deletions are undone newest
//     first, each with directory_undo_probability, up to the first one kept
//     (a journaling file system commits directory changes in order): a file
//     created since may vanish, a file deleted since may come back (with its
//     own unsynced writes undone at random too).
// What a sync covered is never touched.
//
// Not modelled: renames (SQLite does none), files without a name or deleted
// on close (temporary files: their contents die with the process anyway),
// the -shm file's contents (Eddy uses exclusive locking: no -shm file).
//
// Thread safety: one mutex around each call and its bookkeeping.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "port/file_interceptor.h"

namespace eddy::meta::testing {

class PowerCutVfs {
 public:
  struct CutStats {
    uint64_t sectors_undone = 0;
    uint64_t sectors_kept = 0;
    uint64_t files_shortened = 0;
    uint64_t files_vanished = 0;  // created, the creation undone
    uint64_t files_restored = 0;  // deleted, the deletion undone
    uint64_t directory_changes_kept = 0;
  };

  // Registers the VFS as name (not as the default) over sqlite3_vfs_find(nullptr).
  // stash: a directory on the databases' file system, for deleted files.
  PowerCutVfs(std::string name, std::string stash);
  ~PowerCutVfs();  // unregisters; REQUIRES no connection open through it
  PowerCutVfs(const PowerCutVfs&) = delete;
  PowerCutVfs& operator=(const PowerCutVfs&) = delete;

  // For sqlite3_open_v2 (MetaStore::Options::sqlite_vfs, ForwardProgress::open).
  const char* name() const { return name_.c_str(); }

  // The cut comes instead of the n-th call from now that changes a file or a
  // directory (xOpen, xWrite, xTruncate, xSync, xDelete, a directory sync):
  // that call and every later one fail. n = 0: no cut armed.
  void arm(uint64_t n);
  void cut_now();
  bool is_cut();

  // After the cut, once every connection through the VFS is closed: undoes
  // at random what no sync covered (see above); then calls go through
  // again and recording starts afresh.
  CutStats power_off(std::mt19937_64& rng, double undo_probability, double directory_undo_probability);

  // A directory sync outside SQLite: before() counts it as a call (false:
  // the cut came, the sync must fail); synced() records it once done.
  bool before_directory_sync();
  void directory_synced(const std::string& directory);

  // Calls changing files seen since construction, and the syncs among them.
  uint64_t calls();
  uint64_t syncs();

 private:
  struct Write {
    uint64_t offset;
    std::vector<uint8_t> old_bytes;  // the range's bytes before it (zeros past the old size)
    uint64_t size_before;
    uint64_t size_after;
  };
  struct FileState {
    std::vector<Write> unsynced;  // oldest first
  };
  struct DirectoryChange {
    enum Kind { kCreate, kDelete } kind;
    std::string path;
    std::string stash;  // kDelete: the deleted file's hard link ("" when it had none)
    FileState state;    // kDelete: the deleted file's unsynced writes
  };
  struct File;  // an sqlite3_file of this VFS (power_cut_vfs.cc)

  // The io methods and VFS methods SQLite calls.
  static int x_open(sqlite3_vfs* vfs, const char* name, sqlite3_file* file, int flags, int* out_flags);
  static int x_delete(sqlite3_vfs* vfs, const char* name, int sync_dir);
  static int x_close(sqlite3_file* file);
  static int x_read(sqlite3_file* file, void* data, int amount, sqlite3_int64 offset);
  static int x_write(sqlite3_file* file, const void* data, int amount, sqlite3_int64 offset);
  static int x_truncate(sqlite3_file* file, sqlite3_int64 size);
  static int x_sync(sqlite3_file* file, int flags);
  static int x_file_control(sqlite3_file* file, int op, void* arg);
  static PowerCutVfs* of(sqlite3_vfs* vfs) { return static_cast<PowerCutVfs*>(vfs->pAppData); }
  static File* file_of(sqlite3_file* file) { return reinterpret_cast<File*>(file); }
  // The real VFS's file, after ours in the memory SQLite gave x_open.
  static size_t real_offset();
  static sqlite3_file* real_of(sqlite3_file* file);
  void init_vfs();
  void init_io_methods();

  // REQUIRES mu_ held. False when the cut has come (now or before).
  bool count_call();
  // Records that file at path is about to change range [offset, offset +
  // length) or its size to new_size; reads the old bytes first.
  void record_change(const std::string& path, sqlite3_file* real, uint64_t offset, uint64_t length,
                     uint64_t new_size);
  void record_delete(const std::string& path);
  void synced_locked(const std::string& directory);
  void undo_directory(std::vector<DirectoryChange>& changes, std::mt19937_64& rng, double p, CutStats* stats);
  void undo_writes(const std::string& path, const FileState& state, std::mt19937_64& rng, double p,
                   CutStats* stats);

  const std::string name_;
  const std::string stash_;
  sqlite3_vfs* real_ = nullptr;
  sqlite3_vfs vfs_{};
  sqlite3_io_methods io_methods_{};
  std::mutex mu_;
  bool cut_ = false;
  uint64_t calls_ = 0;
  uint64_t cut_at_ = 0;  // calls_ value of the call that is the cut (0: none)
  uint64_t syncs_ = 0;
  uint64_t stash_serial_ = 0;
  int open_files_ = 0;
  std::map<std::string, FileState> files_;                             // by full path
  std::map<std::string, std::vector<DirectoryChange>> directory_changes_;  // by directory, oldest first
};

// Reports port::sync_directory to a PowerCutVfs and passes every operation
// on to next, when given (the storage's PowerCutFilesystem: one machine).
// Once the VFS's cut has come every intercepted operation fails with EIO,
// so that the port layer's files lose power at the same moment.
class DirectorySyncReporter : public port::FileInterceptor {
 public:
  explicit DirectorySyncReporter(PowerCutVfs* vfs, port::FileInterceptor* next = nullptr) : vfs_(vfs), next_(next) {}
  void lock() override;
  void unlock() override;
  std::error_code before(const port::FileEvent& event) override;
  void after(const port::FileEvent& event, const std::error_code& result) override;

 private:
  PowerCutVfs* vfs_;
  port::FileInterceptor* next_;
  std::mutex mu_;
};

}  // namespace eddy::meta::testing

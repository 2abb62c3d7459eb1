#include "tests/unit/meta/power_cut_vfs.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>
#include <set>
#include <utility>

namespace eddy::meta::testing {

namespace {

constexpr uint64_t kSector = 512;

// The directory of a full path, with symbolic links resolved, so that it
// compares equal to the path port::sync_directory was given.
std::string directory_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  std::string directory = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  char resolved[PATH_MAX];
  if (::realpath(directory.c_str(), resolved) != nullptr) return resolved;
  return directory;
}

bool coin(std::mt19937_64& rng, double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }

// Creating a journal or a WAL with SQLITE_OPEN_CREATE makes the unix VFS
// sync the directory on the file's first xSync (os_unix.c: UNIXFILE_DIRSYNC).
bool first_sync_syncs_directory(int flags) {
  return (flags & SQLITE_OPEN_CREATE) != 0 &&
         (flags & (SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_SUPER_JOURNAL | SQLITE_OPEN_WAL)) != 0;
}

}  // namespace

// What SQLite allocates for a file of this VFS (szOsFile): this struct, then
// the real VFS's file at real_offset(). Built by x_open with placement new,
// destroyed by x_close.
struct PowerCutVfs::File {
  sqlite3_file base;  // first: what SQLite sees
  PowerCutVfs* vfs = nullptr;
  std::string path;       // "" when not tracked (temporary files)
  std::string directory;  // of path
  bool sync_syncs_directory = false;
};

// Past File, aligned for whatever the real VFS keeps in its file.
size_t PowerCutVfs::real_offset() { return (sizeof(File) + 15) / 16 * 16; }

sqlite3_file* PowerCutVfs::real_of(sqlite3_file* file) {
  return reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(file) + real_offset());
}

namespace {

uint64_t file_size(sqlite3_file* real) {
  sqlite3_int64 size = 0;
  if (real->pMethods->xFileSize(real, &size) != SQLITE_OK) return 0;
  return static_cast<uint64_t>(size);
}

}  // namespace

PowerCutVfs::PowerCutVfs(std::string name, std::string stash) : name_(std::move(name)), stash_(std::move(stash)) {
  real_ = sqlite3_vfs_find(nullptr);
  init_vfs();
  init_io_methods();
  sqlite3_vfs_register(&vfs_, 0);
}

PowerCutVfs::~PowerCutVfs() { sqlite3_vfs_unregister(&vfs_); }

// Our xOpen and xDelete; everything else goes to the real VFS unchanged.
void PowerCutVfs::init_vfs() {
  vfs_ = *real_;
  vfs_.pNext = nullptr;
  vfs_.szOsFile = static_cast<int>(real_offset()) + real_->szOsFile;
  vfs_.zName = name_.c_str();
  vfs_.pAppData = this;
  vfs_.xOpen = x_open;
  vfs_.xDelete = x_delete;
  vfs_.xAccess = [](sqlite3_vfs* v, const char* n, int f, int* out) { return of(v)->real_->xAccess(of(v)->real_, n, f, out); };
  vfs_.xFullPathname = [](sqlite3_vfs* v, const char* n, int size, char* out) {
    return of(v)->real_->xFullPathname(of(v)->real_, n, size, out);
  };
  vfs_.xDlOpen = [](sqlite3_vfs* v, const char* n) { return of(v)->real_->xDlOpen(of(v)->real_, n); };
  vfs_.xDlError = [](sqlite3_vfs* v, int size, char* out) { of(v)->real_->xDlError(of(v)->real_, size, out); };
  vfs_.xDlSym = [](sqlite3_vfs* v, void* h, const char* symbol) -> void (*)(void) {
    return of(v)->real_->xDlSym(of(v)->real_, h, symbol);
  };
  vfs_.xDlClose = [](sqlite3_vfs* v, void* h) { of(v)->real_->xDlClose(of(v)->real_, h); };
  vfs_.xRandomness = [](sqlite3_vfs* v, int size, char* out) { return of(v)->real_->xRandomness(of(v)->real_, size, out); };
  vfs_.xSleep = [](sqlite3_vfs* v, int us) { return of(v)->real_->xSleep(of(v)->real_, us); };
  vfs_.xCurrentTime = [](sqlite3_vfs* v, double* out) { return of(v)->real_->xCurrentTime(of(v)->real_, out); };
  vfs_.xGetLastError = [](sqlite3_vfs* v, int size, char* out) { return of(v)->real_->xGetLastError(of(v)->real_, size, out); };
  if (vfs_.iVersion >= 2) {
    vfs_.xCurrentTimeInt64 = [](sqlite3_vfs* v, sqlite3_int64* out) {
      return of(v)->real_->xCurrentTimeInt64(of(v)->real_, out);
    };
  }
  if (vfs_.iVersion >= 3) {
    vfs_.xSetSystemCall = [](sqlite3_vfs* v, const char* n, sqlite3_syscall_ptr call) {
      return of(v)->real_->xSetSystemCall(of(v)->real_, n, call);
    };
    vfs_.xGetSystemCall = [](sqlite3_vfs* v, const char* n) { return of(v)->real_->xGetSystemCall(of(v)->real_, n); };
    vfs_.xNextSystemCall = [](sqlite3_vfs* v, const char* n) { return of(v)->real_->xNextSystemCall(of(v)->real_, n); };
  }
}

// Version 2: the shared-memory methods are forwarded (unused under Eddy's
// exclusive locking); no xFetch, so SQLite never maps the file.
void PowerCutVfs::init_io_methods() {
  io_methods_.iVersion = 2;
  io_methods_.xClose = x_close;
  io_methods_.xRead = x_read;
  io_methods_.xWrite = x_write;
  io_methods_.xTruncate = x_truncate;
  io_methods_.xSync = x_sync;
  io_methods_.xFileSize = [](sqlite3_file* f, sqlite3_int64* size) {
    return real_of(f)->pMethods->xFileSize(real_of(f), size);
  };
  io_methods_.xLock = [](sqlite3_file* f, int lock) { return real_of(f)->pMethods->xLock(real_of(f), lock); };
  io_methods_.xUnlock = [](sqlite3_file* f, int lock) { return real_of(f)->pMethods->xUnlock(real_of(f), lock); };
  io_methods_.xCheckReservedLock = [](sqlite3_file* f, int* out) {
    return real_of(f)->pMethods->xCheckReservedLock(real_of(f), out);
  };
  io_methods_.xFileControl = x_file_control;
  io_methods_.xSectorSize = [](sqlite3_file* f) { return real_of(f)->pMethods->xSectorSize(real_of(f)); };
  io_methods_.xDeviceCharacteristics = [](sqlite3_file* f) {
    return real_of(f)->pMethods->xDeviceCharacteristics(real_of(f));
  };
  io_methods_.xShmMap = [](sqlite3_file* f, int region, int size, int extend, void volatile** out) {
    return real_of(f)->pMethods->xShmMap(real_of(f), region, size, extend, out);
  };
  io_methods_.xShmLock = [](sqlite3_file* f, int offset, int n, int flags) {
    return real_of(f)->pMethods->xShmLock(real_of(f), offset, n, flags);
  };
  io_methods_.xShmBarrier = [](sqlite3_file* f) { real_of(f)->pMethods->xShmBarrier(real_of(f)); };
  io_methods_.xShmUnmap = [](sqlite3_file* f, int remove) { return real_of(f)->pMethods->xShmUnmap(real_of(f), remove); };
}

void PowerCutVfs::arm(uint64_t n) {
  std::lock_guard<std::mutex> hold(mu_);
  cut_at_ = n == 0 ? 0 : calls_ + n;
}

void PowerCutVfs::cut_now() {
  std::lock_guard<std::mutex> hold(mu_);
  cut_ = true;
}

bool PowerCutVfs::is_cut() {
  std::lock_guard<std::mutex> hold(mu_);
  return cut_;
}

uint64_t PowerCutVfs::calls() {
  std::lock_guard<std::mutex> hold(mu_);
  return calls_;
}

uint64_t PowerCutVfs::syncs() {
  std::lock_guard<std::mutex> hold(mu_);
  return syncs_;
}

bool PowerCutVfs::count_call() {
  if (cut_) return false;
  ++calls_;
  if (cut_at_ != 0 && calls_ >= cut_at_) {
    cut_ = true;
    return false;
  }
  return true;
}

bool PowerCutVfs::before_directory_sync() {
  std::lock_guard<std::mutex> hold(mu_);
  return count_call();
}

void PowerCutVfs::directory_synced(const std::string& directory) {
  char resolved[PATH_MAX];
  std::string canonical = ::realpath(directory.c_str(), resolved) != nullptr ? resolved : directory;
  std::lock_guard<std::mutex> hold(mu_);
  synced_locked(canonical);
}

// Every change in directory is durable now: deletions are final.
void PowerCutVfs::synced_locked(const std::string& directory) {
  auto it = directory_changes_.find(directory);
  if (it == directory_changes_.end()) return;
  for (const DirectoryChange& change : it->second) {
    if (change.kind == DirectoryChange::kDelete && !change.stash.empty()) ::unlink(change.stash.c_str());
  }
  directory_changes_.erase(it);
}

void PowerCutVfs::record_change(const std::string& path, sqlite3_file* real, uint64_t offset, uint64_t length,
                                uint64_t new_size) {
  const uint64_t size = file_size(real);
  Write write{offset, std::vector<uint8_t>(length, 0), size, new_size};
  if (offset < size && length > 0) {
    // A short read (past the end) fills the rest with zeros.
    real->pMethods->xRead(real, write.old_bytes.data(), static_cast<int>(length), static_cast<sqlite3_int64>(offset));
  }
  files_[path].unsynced.push_back(std::move(write));
}

// Before path is deleted without a directory sync: a hard link in the stash
// keeps it, with its unsynced writes, so that the cut can bring it back.
void PowerCutVfs::record_delete(const std::string& path) {
  std::string stash = stash_ + "/" + std::to_string(++stash_serial_);
  if (::link(path.c_str(), stash.c_str()) != 0) return;  // nothing there to delete
  DirectoryChange change{DirectoryChange::kDelete, path, stash, FileState{}};
  auto it = files_.find(path);
  if (it != files_.end()) change.state = std::move(it->second);
  directory_changes_[directory_of(path)].push_back(std::move(change));
}

// ---------------------------------------------------------------------------
// The calls SQLite makes
// ---------------------------------------------------------------------------

int PowerCutVfs::x_open(sqlite3_vfs* vfs, const char* name, sqlite3_file* file, int flags, int* out_flags) {
  PowerCutVfs* self = of(vfs);
  std::lock_guard<std::mutex> hold(self->mu_);
  file->pMethods = nullptr;  // SQLite calls no xClose after a failed xOpen
  if (!self->count_call()) return SQLITE_CANTOPEN;
  const bool tracked = name != nullptr && (flags & SQLITE_OPEN_DELETEONCLOSE) == 0;
  const bool existed = tracked && ::access(name, F_OK) == 0;
  sqlite3_file* real = real_of(file);
  std::memset(real, 0, static_cast<size_t>(self->real_->szOsFile));
  int rc = self->real_->xOpen(self->real_, name, real, flags, out_flags);
  if (rc != SQLITE_OK) {
    if (real->pMethods != nullptr) real->pMethods->xClose(real);
    return rc;
  }
  File* f = new (file) File();
  f->base.pMethods = &self->io_methods_;
  f->vfs = self;
  ++self->open_files_;
  if (!tracked) return SQLITE_OK;
  f->path = name;
  f->directory = directory_of(f->path);
  f->sync_syncs_directory = first_sync_syncs_directory(flags);
  if (!existed) {
    self->directory_changes_[f->directory].push_back(DirectoryChange{DirectoryChange::kCreate, f->path, "", {}});
    self->files_[f->path] = FileState{};
  }
  return SQLITE_OK;
}

int PowerCutVfs::x_delete(sqlite3_vfs* vfs, const char* name, int sync_dir) {
  PowerCutVfs* self = of(vfs);
  std::lock_guard<std::mutex> hold(self->mu_);
  if (!self->count_call()) return SQLITE_IOERR_DELETE;
  const std::string path = name;
  if (sync_dir == 0) self->record_delete(path);
  int rc = self->real_->xDelete(self->real_, name, sync_dir);
  if (rc != SQLITE_OK) return rc;  // (a stash link, if made, only costs a file until the next cut)
  self->files_.erase(path);
  if (sync_dir != 0) self->synced_locked(directory_of(path));
  return SQLITE_OK;
}

int PowerCutVfs::x_close(sqlite3_file* file) {
  File* f = file_of(file);
  PowerCutVfs* self = f->vfs;
  std::lock_guard<std::mutex> hold(self->mu_);
  // Closing changes nothing on disk, so it goes through even after the cut.
  sqlite3_file* real = real_of(file);
  int rc = real->pMethods->xClose(real);
  --self->open_files_;
  f->~File();
  return rc;
}

int PowerCutVfs::x_read(sqlite3_file* file, void* data, int amount, sqlite3_int64 offset) {
  PowerCutVfs* self = file_of(file)->vfs;
  std::lock_guard<std::mutex> hold(self->mu_);
  if (self->cut_) return SQLITE_IOERR_READ;
  return real_of(file)->pMethods->xRead(real_of(file), data, amount, offset);
}

int PowerCutVfs::x_write(sqlite3_file* file, const void* data, int amount, sqlite3_int64 offset) {
  File* f = file_of(file);
  PowerCutVfs* self = f->vfs;
  std::lock_guard<std::mutex> hold(self->mu_);
  if (!self->count_call()) return SQLITE_IOERR_WRITE;
  sqlite3_file* real = real_of(file);
  if (!f->path.empty()) {
    const uint64_t end = static_cast<uint64_t>(offset) + static_cast<uint64_t>(amount);
    self->record_change(f->path, real, static_cast<uint64_t>(offset), static_cast<uint64_t>(amount),
                        std::max(file_size(real), end));
  }
  return real->pMethods->xWrite(real, data, amount, offset);
}

int PowerCutVfs::x_truncate(sqlite3_file* file, sqlite3_int64 size) {
  File* f = file_of(file);
  PowerCutVfs* self = f->vfs;
  std::lock_guard<std::mutex> hold(self->mu_);
  if (!self->count_call()) return SQLITE_IOERR_TRUNCATE;
  sqlite3_file* real = real_of(file);
  const uint64_t old_size = file_size(real);
  const uint64_t new_size = static_cast<uint64_t>(size);
  if (!f->path.empty() && new_size != old_size) {
    // Shrinking: the bytes cut off; growing: zeros.
    self->record_change(f->path, real, std::min(old_size, new_size),
                        old_size > new_size ? old_size - new_size : new_size - old_size, new_size);
  }
  return real->pMethods->xTruncate(real, size);
}

int PowerCutVfs::x_sync(sqlite3_file* file, int flags) {
  File* f = file_of(file);
  PowerCutVfs* self = f->vfs;
  std::lock_guard<std::mutex> hold(self->mu_);
  if (!self->count_call()) return SQLITE_IOERR_FSYNC;
  int rc = real_of(file)->pMethods->xSync(real_of(file), flags);
  if (rc != SQLITE_OK) return rc;
  ++self->syncs_;
  if (f->path.empty()) return SQLITE_OK;
  self->files_[f->path].unsynced.clear();
  if (f->sync_syncs_directory) {
    self->synced_locked(f->directory);
    f->sync_syncs_directory = false;
  }
  return SQLITE_OK;
}

// SQLITE_FCNTL_SIZE_HINT may grow the file (with a chunk size set): recorded
// as a write of zeros; ignored once cut. Other controls change no file.
int PowerCutVfs::x_file_control(sqlite3_file* file, int op, void* arg) {
  File* f = file_of(file);
  sqlite3_file* real = real_of(file);
  if (op != SQLITE_FCNTL_SIZE_HINT) return real->pMethods->xFileControl(real, op, arg);
  PowerCutVfs* self = f->vfs;
  std::lock_guard<std::mutex> hold(self->mu_);
  if (self->cut_) return SQLITE_OK;
  const uint64_t before = file_size(real);
  int rc = real->pMethods->xFileControl(real, op, arg);
  const uint64_t after = file_size(real);
  if (!f->path.empty() && after > before) {
    self->files_[f->path].unsynced.push_back(Write{before, std::vector<uint8_t>(after - before, 0), before, after});
  }
  return rc;
}

// ---------------------------------------------------------------------------
// The power cut
// ---------------------------------------------------------------------------

PowerCutVfs::CutStats PowerCutVfs::power_off(std::mt19937_64& rng, double undo_probability,
                                             double directory_undo_probability) {
  std::lock_guard<std::mutex> hold(mu_);
  if (open_files_ != 0) {
    std::fprintf(stderr, "PowerCutVfs::power_off: %d files still open through the VFS\n", open_files_);
    std::abort();
  }
  CutStats stats;
  for (auto& [directory, changes] : directory_changes_) {
    undo_directory(changes, rng, directory_undo_probability, &stats);
  }
  // files_ now names the files that are there, restored ones included.
  for (const auto& [path, state] : files_) {
    if (!state.unsynced.empty()) undo_writes(path, state, rng, undo_probability, &stats);
  }
  files_.clear();
  directory_changes_.clear();
  cut_ = false;
  cut_at_ = 0;
  return stats;
}

// Newest first, each change undone with probability p, up to the first one
// kept; older ones stay. Kept deletions drop their stash link.
void PowerCutVfs::undo_directory(std::vector<DirectoryChange>& changes, std::mt19937_64& rng, double p,
                                 CutStats* stats) {
  size_t kept = changes.size();
  while (kept > 0 && coin(rng, p)) {
    DirectoryChange& change = changes[kept - 1];
    if (change.kind == DirectoryChange::kCreate) {
      ::unlink(change.path.c_str());
      files_.erase(change.path);
      ++stats->files_vanished;
    } else if (::rename(change.stash.c_str(), change.path.c_str()) == 0) {
      change.stash.clear();
      files_[change.path] = std::move(change.state);
      ++stats->files_restored;
    }
    --kept;
  }
  stats->directory_changes_kept += kept;
  for (const DirectoryChange& change : changes) {
    if (change.kind == DirectoryChange::kDelete && !change.stash.empty()) ::unlink(change.stash.c_str());
  }
}

// Each sector keeps a prefix of its write history: newest writes first,
// each undone with probability p until one is kept. The size falls back the
// same way through the size changes.
void PowerCutVfs::undo_writes(const std::string& path, const FileState& state, std::mt19937_64& rng, double p,
                              CutStats* stats) {
  int fd = ::open(path.c_str(), O_RDWR);
  if (fd < 0) return;
  struct stat st;
  const uint64_t size_now = ::fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  std::set<uint64_t> frozen;  // sectors whose newer write was kept
  for (auto w = state.unsynced.rbegin(); w != state.unsynced.rend(); ++w) {
    const uint64_t end = w->offset + w->old_bytes.size();
    for (uint64_t sector = w->offset / kSector; sector * kSector < end; ++sector) {
      if (frozen.count(sector) != 0) continue;
      if (!coin(rng, p)) {
        frozen.insert(sector);
        ++stats->sectors_kept;
        continue;
      }
      const uint64_t lo = std::max(w->offset, sector * kSector);
      const uint64_t hi = std::min(end, (sector + 1) * kSector);
      if (::pwrite(fd, w->old_bytes.data() + (lo - w->offset), hi - lo, static_cast<off_t>(lo)) < 0) break;
      ++stats->sectors_undone;
    }
  }
  uint64_t size = size_now;
  for (auto w = state.unsynced.rbegin(); w != state.unsynced.rend(); ++w) {
    if (w->size_before == w->size_after) continue;
    if (!coin(rng, p)) break;
    size = w->size_before;
  }
  if (size < size_now) ++stats->files_shortened;
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) std::perror("ftruncate");
  ::close(fd);
}

// ---------------------------------------------------------------------------
// DirectorySyncReporter
// ---------------------------------------------------------------------------

void DirectorySyncReporter::lock() {
  mu_.lock();
  if (next_ != nullptr) next_->lock();
}

void DirectorySyncReporter::unlock() {
  if (next_ != nullptr) next_->unlock();
  mu_.unlock();
}

std::error_code DirectorySyncReporter::before(const port::FileEvent& event) {
  const bool refused = event.op == port::FileOp::kSyncDirectory ? !vfs_->before_directory_sync() : vfs_->is_cut();
  if (refused) return std::make_error_code(std::errc::io_error);
  return next_ != nullptr ? next_->before(event) : std::error_code();
}

void DirectorySyncReporter::after(const port::FileEvent& event, const std::error_code& result) {
  if (event.op == port::FileOp::kSyncDirectory && !result) vfs_->directory_synced(*event.path);
  if (next_ != nullptr) next_->after(event, result);
}

}  // namespace eddy::meta::testing

// A simulated power cut for the files under one directory, through the
// port layer's interceptor (port/file_interceptor.h), as LevelDB's
// fault-injection environment and SQLite's crash tests do.
//
// While installed it records, for every file under root, the old contents
// of each range written (write_at, preallocate, truncate) since the file's
// last sync_data, and every directory change (file created, renamed,
// removed; directory made) since the last sync_directory of the directory
// it changed. A removed or overwritten-by-rename file is kept alive as a
// hard link in stash so that it can come back.
//
// cut() is the power cut: every later intercepted operation fails with EIO
// (so what the objects still holding the files do on their way out changes
// nothing), and what no sync covered is undone at random, the way a disk
// may have kept any part of it: each 512-byte sector of unsynced writes
// holds the contents of some prefix of its own write history (newest writes
// dropped first), a file's size falls back to its size before the undone
// writes, and each unsynced directory change is undone or kept, newest
// first. What a sync covered is never touched.
//
// Not modelled: directories removed (rmdir is not intercepted; they stay
// removed), files written outside the port layer (SQLite).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "port/file_interceptor.h"

namespace eddy::storage::testing {

class PowerCutFilesystem : public port::FileInterceptor {
 public:
  struct CutStats {
    uint64_t sectors_undone = 0;
    uint64_t sectors_kept = 0;
    uint64_t files_shortened = 0;
    uint64_t directory_changes_undone = 0;
    uint64_t directory_changes_kept = 0;
  };

  // Tracks files under root; stash must be a directory on the same
  // filesystem, outside root.
  PowerCutFilesystem(std::string root, std::string stash);

  void lock() override { mu_.lock(); }
  void unlock() override { mu_.unlock(); }
  std::error_code before(const port::FileEvent& event) override;
  void after(const port::FileEvent& event, const std::error_code& result) override;

  // The power cut. undo_probability: the chance that each unsynced sector
  // (and each size change) is lost; directory_undo_probability: the same
  // for each unsynced directory change.
  CutStats cut(std::mt19937_64& rng, double undo_probability, double directory_undo_probability);
  // After cut(), once whatever held the files is gone: operations go through
  // again, and recording starts afresh.
  void reset();

  // Writes and syncs seen since construction (for the test's report).
  uint64_t writes() const { return writes_; }
  uint64_t syncs() const { return syncs_; }

 private:
  using Inode = std::pair<dev_t, ino_t>;
  struct Write {
    uint64_t offset;
    std::vector<uint8_t> old_bytes;  // the range's bytes before it (zeros past the old size)
    uint64_t size_before;
  };
  struct Node {
    std::string path;  // its current name (under root, or in the stash)
    std::vector<Write> unsynced;
  };
  struct DirectoryChange {
    enum Kind { kCreate, kRename, kRemove, kMakeDirectory } kind;
    std::string path;        // created / removed / renamed from / made
    std::string to;          // kRename
    std::string stash;       // kRemove: the removed file; kRename: the file `to` replaced
    bool from_synced = false;  // kRename: the directory of path was synced
    bool to_synced = false;    // kRename: the directory of to was synced
  };

  bool tracked(const std::string& path) const;
  Node* node_of_fd(int fd);
  std::string stash_link(const std::string& path);
  void record_write(int fd, uint64_t offset, uint64_t length);
  // The change before() recorded for this rename or removal (null when the
  // path is not tracked); dropped, with its stash link, when it failed.
  DirectoryChange* settle_change(DirectoryChange::Kind kind, const std::string& path, const std::error_code& result);
  // Nodes named from are now named to (nothing when to is empty).
  void rename_nodes(const std::string& from, const std::string& to);
  void directory_synced(const std::string& directory);
  void undo_writes(Node& node, std::mt19937_64& rng, double p, CutStats* stats);
  void undo_directory_change(const DirectoryChange& change);
  void forget_stash(const DirectoryChange& change);

  const std::string root_;
  const std::string stash_;
  std::mutex mu_;
  bool cut_ = false;
  std::map<Inode, Node> nodes_;
  std::vector<DirectoryChange> changes_;  // oldest first
  // Set by before(kOpen) for after(): the path did not exist.
  bool opening_creates_ = false;
  // Set by before(kMakeDirectories): the directories it will create.
  std::vector<std::string> directories_to_make_;
  uint64_t stash_serial_ = 0;
  uint64_t writes_ = 0;
  uint64_t syncs_ = 0;
};

}  // namespace eddy::storage::testing

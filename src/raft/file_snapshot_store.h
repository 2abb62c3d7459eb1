// raft/file_snapshot_store.h — a SnapshotStore in a directory of files named
// as KRaft names its snapshots: <end offset, 20 digits>-<epoch, 10
// digits>.checkpoint. store() writes it with port::replace_file (a .tmp
// file synced, renamed into place, the directory synced), then removes the
// older snapshot: a crash leaves the old snapshot or the new one, whole (a
// leftover .tmp is removed at the next open).
//
// Threading: one thread at a time (the Raft group's).
#pragma once

#include <memory>
#include <string>

#include "raft/snapshot_store.h"

namespace eddy::raft {

class FileSnapshotStore final : public SnapshotStore {
 public:
  // Creates directory when missing; finds the latest snapshot in it and
  // removes every other snapshot file and leftover part.
  static Status open(const std::string& directory, std::unique_ptr<FileSnapshotStore>* out);

  SnapshotId latest() const override { return latest_; }
  int64_t latest_size() const override { return latest_size_; }
  Status read(SnapshotId id, int64_t position, size_t max_bytes, std::string* out) const override;
  Status store(SnapshotId id, const std::string& bytes) override;

  // The file name of snapshot id.
  static std::string file_name(SnapshotId id);
  const std::string& directory() const { return directory_; }

 private:
  explicit FileSnapshotStore(std::string directory) : directory_(std::move(directory)) {}
  std::string path(SnapshotId id) const { return directory_ + "/" + file_name(id); }

  const std::string directory_;
  SnapshotId latest_;
  int64_t latest_size_ = 0;
};

}  // namespace eddy::raft

#include "power_cut_filesystem.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

namespace eddy::storage::testing {
namespace {

constexpr uint64_t kSector = 512;

std::string parent_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

std::error_code power_is_off() { return std::error_code(EIO, std::generic_category()); }

}  // namespace

PowerCutFilesystem::PowerCutFilesystem(std::string root, std::string stash)
    : root_(std::move(root)), stash_(std::move(stash)) {
  std::filesystem::create_directories(stash_);
}

bool PowerCutFilesystem::tracked(const std::string& path) const {
  return path.size() > root_.size() && path.compare(0, root_.size(), root_) == 0 && path[root_.size()] == '/';
}

PowerCutFilesystem::Node* PowerCutFilesystem::node_of_fd(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return nullptr;
  auto it = nodes_.find({st.st_dev, st.st_ino});
  return it == nodes_.end() ? nullptr : &it->second;
}

std::string PowerCutFilesystem::stash_link(const std::string& path) {
  std::string link = stash_ + "/" + std::to_string(++stash_serial_);
  return ::link(path.c_str(), link.c_str()) == 0 ? link : std::string();
}

void PowerCutFilesystem::record_write(int fd, uint64_t offset, uint64_t length) {
  Node* node = node_of_fd(fd);
  if (node == nullptr) return;
  struct stat st;
  if (::fstat(fd, &st) != 0) return;
  Write write{offset, std::vector<uint8_t>(length, 0), static_cast<uint64_t>(st.st_size)};
  if (offset < write.size_before && length > 0) {
    size_t readable = static_cast<size_t>(std::min<uint64_t>(length, write.size_before - offset));
    ssize_t n = ::pread(fd, write.old_bytes.data(), readable, static_cast<off_t>(offset));
    (void)n;  // a short read leaves zeros, which is what the range held
  }
  node->unsynced.push_back(std::move(write));
}

std::error_code PowerCutFilesystem::before(const port::FileEvent& e) {
  if (cut_) return power_is_off();
  using port::FileOp;
  switch (e.op) {
    case FileOp::kOpen:
      opening_creates_ = tracked(*e.path) && !exists(*e.path) && e.mode != port::OpenMode::kReadOnly &&
                         e.mode != port::OpenMode::kReadWrite;
      break;
    case FileOp::kWrite:
      ++writes_;
      record_write(e.fd, e.offset, e.length);
      break;
    case FileOp::kPreallocate:
      record_write(e.fd, e.offset, 0);  // fallocate keeps the data; only the size may grow
      break;
    case FileOp::kTruncate: {
      struct stat st;
      if (::fstat(e.fd, &st) == 0 && e.offset < static_cast<uint64_t>(st.st_size)) {
        record_write(e.fd, e.offset, static_cast<uint64_t>(st.st_size) - e.offset);
      } else {
        record_write(e.fd, e.offset, 0);
      }
      break;
    }
    case FileOp::kRename:
      if (tracked(*e.path) || tracked(*e.to)) {
        DirectoryChange change{DirectoryChange::kRename, *e.path, *e.to, exists(*e.to) ? stash_link(*e.to) : ""};
        changes_.push_back(std::move(change));
      }
      break;
    case FileOp::kRemove:
      if (tracked(*e.path) && exists(*e.path)) {
        changes_.push_back({DirectoryChange::kRemove, *e.path, "", stash_link(*e.path)});
      }
      break;
    case FileOp::kMakeDirectories: {
      directories_to_make_.clear();
      for (std::string d = *e.path; tracked(d) && !exists(d); d = parent_of(d)) directories_to_make_.push_back(d);
      std::reverse(directories_to_make_.begin(), directories_to_make_.end());
      break;
    }
    case FileOp::kSyncData:
    case FileOp::kSyncDirectory:
      break;
  }
  return {};
}

void PowerCutFilesystem::after(const port::FileEvent& e, const std::error_code& result) {
  using port::FileOp;
  switch (e.op) {
    case FileOp::kOpen: {
      if (result || !tracked(*e.path)) break;
      struct stat st;
      if (::fstat(e.fd, &st) != 0) break;
      Node& node = nodes_[{st.st_dev, st.st_ino}];
      node.path = *e.path;
      if (opening_creates_) changes_.push_back({DirectoryChange::kCreate, *e.path, "", ""});
      break;
    }
    case FileOp::kSyncData:
      if (!result) {
        ++syncs_;
        if (Node* node = node_of_fd(e.fd)) node->unsynced.clear();
      }
      break;
    case FileOp::kRename:
    case FileOp::kRemove: {
      const bool rename = e.op == FileOp::kRename;
      DirectoryChange* change =
          settle_change(rename ? DirectoryChange::kRename : DirectoryChange::kRemove, *e.path, result);
      if (change == nullptr) break;
      if (rename) {
        rename_nodes(*e.to, change->stash);  // the file `to` replaced lives on in the stash
        rename_nodes(*e.path, *e.to);
      } else {
        rename_nodes(*e.path, change->stash);
      }
      break;
    }
    case FileOp::kMakeDirectories:
      for (const std::string& d : directories_to_make_) {
        if (exists(d)) changes_.push_back({DirectoryChange::kMakeDirectory, d, "", ""});
      }
      directories_to_make_.clear();
      break;
    case FileOp::kSyncDirectory:
      if (!result) directory_synced(*e.path);
      break;
    case FileOp::kWrite:
    case FileOp::kPreallocate:
    case FileOp::kTruncate:
      break;
  }
}

PowerCutFilesystem::DirectoryChange* PowerCutFilesystem::settle_change(DirectoryChange::Kind kind,
                                                                       const std::string& path,
                                                                       const std::error_code& result) {
  if (changes_.empty() || changes_.back().kind != kind || changes_.back().path != path) return nullptr;
  if (!result) return &changes_.back();
  if (!changes_.back().stash.empty()) ::unlink(changes_.back().stash.c_str());
  changes_.pop_back();
  return nullptr;
}

void PowerCutFilesystem::rename_nodes(const std::string& from, const std::string& to) {
  if (to.empty()) return;
  for (auto& [inode, node] : nodes_) {
    if (node.path == from) node.path = to;
  }
}

void PowerCutFilesystem::directory_synced(const std::string& directory) {
  std::string dir = directory;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  std::vector<DirectoryChange> pending;
  for (DirectoryChange& change : changes_) {
    bool durable;
    if (change.kind == DirectoryChange::kRename) {
      change.from_synced = change.from_synced || parent_of(change.path) == dir;
      change.to_synced = change.to_synced || parent_of(change.to) == dir;
      durable = change.from_synced && change.to_synced;
    } else {
      durable = parent_of(change.path) == dir;
    }
    if (durable) {
      forget_stash(change);
    } else {
      pending.push_back(std::move(change));
    }
  }
  changes_ = std::move(pending);
}

// A durable removal (or replacement by rename) cannot be undone any more:
// its stashed file goes.
void PowerCutFilesystem::forget_stash(const DirectoryChange& change) {
  if (change.stash.empty()) return;
  struct stat st;
  if (::lstat(change.stash.c_str(), &st) == 0) nodes_.erase({st.st_dev, st.st_ino});
  ::unlink(change.stash.c_str());
}

void PowerCutFilesystem::undo_writes(Node& node, std::mt19937_64& rng, double p, CutStats* stats) {
  if (node.unsynced.empty()) return;
  int fd = ::open(node.path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return;
  std::bernoulli_distribution lose(p);
  std::set<uint64_t> kept_sectors;  // a kept sector keeps every older write to it too
  bool all_undone = true;
  uint64_t size = 0;
  for (auto w = node.unsynced.rbegin(); w != node.unsynced.rend(); ++w) {
    bool whole = true;
    const uint64_t end = w->offset + w->old_bytes.size();
    for (uint64_t s = w->offset / kSector * kSector; s < end; s += kSector) {
      uint64_t from = std::max(s, w->offset), to = std::min(s + kSector, end);
      if (kept_sectors.count(s) == 0 && lose(rng)) {
        ssize_t n = ::pwrite(fd, w->old_bytes.data() + (from - w->offset), to - from, static_cast<off_t>(from));
        (void)n;
        ++stats->sectors_undone;
      } else {
        kept_sectors.insert(s);
        whole = false;
        ++stats->sectors_kept;
      }
    }
    if (w->old_bytes.empty()) whole = lose(rng);  // a size change alone
    all_undone = all_undone && whole;
    if (all_undone) size = w->size_before;
  }
  struct stat st;
  if (all_undone && ::fstat(fd, &st) == 0 && size < static_cast<uint64_t>(st.st_size)) {
    if (::ftruncate(fd, static_cast<off_t>(size)) == 0) ++stats->files_shortened;
  }
  ::close(fd);
}

void PowerCutFilesystem::undo_directory_change(const DirectoryChange& change) {
  switch (change.kind) {
    case DirectoryChange::kCreate:
      ::unlink(change.path.c_str());
      break;
    case DirectoryChange::kRename:
      if (exists(change.to)) ::rename(change.to.c_str(), change.path.c_str());
      if (!change.stash.empty()) ::rename(change.stash.c_str(), change.to.c_str());
      break;
    case DirectoryChange::kRemove:
      if (!change.stash.empty()) ::rename(change.stash.c_str(), change.path.c_str());
      break;
    case DirectoryChange::kMakeDirectory: {
      std::error_code ec;
      std::filesystem::remove_all(change.path, ec);
      break;
    }
  }
}

PowerCutFilesystem::CutStats PowerCutFilesystem::cut(std::mt19937_64& rng, double undo_probability,
                                                     double directory_undo_probability) {
  std::lock_guard<std::mutex> hold(mu_);
  cut_ = true;
  CutStats stats;
  // File contents first, while every node is still under the name recorded.
  for (auto& [inode, node] : nodes_) undo_writes(node, rng, undo_probability, &stats);
  std::bernoulli_distribution undo(directory_undo_probability);
  for (auto change = changes_.rbegin(); change != changes_.rend(); ++change) {
    if (undo(rng)) {
      undo_directory_change(*change);
      ++stats.directory_changes_undone;
    } else {
      ++stats.directory_changes_kept;
      if (!change->stash.empty()) ::unlink(change->stash.c_str());
    }
  }
  nodes_.clear();
  changes_.clear();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(stash_, ec)) std::filesystem::remove(entry.path(), ec);
  return stats;
}

void PowerCutFilesystem::reset() {
  std::lock_guard<std::mutex> hold(mu_);
  cut_ = false;
  nodes_.clear();
  changes_.clear();
}

}  // namespace eddy::storage::testing

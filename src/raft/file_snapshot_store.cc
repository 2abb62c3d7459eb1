#include "raft/file_snapshot_store.h"

#include <charconv>
#include <cstdio>
#include <string_view>
#include <vector>

#include "port/log.h"
#include "port/port.h"
#include "port/replace_file.h"

namespace eddy::raft {
namespace {

constexpr std::string_view kSuffix = ".checkpoint";
constexpr std::string_view kPartSuffix = ".checkpoint.tmp";  // port::replace_file's temp file
constexpr size_t kOffsetDigits = 20;
constexpr size_t kEpochDigits = 10;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The snapshot id a file name names; false for any other name.
bool parse_name(std::string_view name, SnapshotId* id) {
  if (name.size() != kOffsetDigits + 1 + kEpochDigits + kSuffix.size() || !ends_with(name, kSuffix) ||
      name[kOffsetDigits] != '-') {
    return false;
  }
  int64_t offset = 0;
  int64_t epoch = 0;
  const char* p = name.data();
  auto a = std::from_chars(p, p + kOffsetDigits, offset);
  auto b = std::from_chars(p + kOffsetDigits + 1, p + kOffsetDigits + 1 + kEpochDigits, epoch);
  if (a.ec != std::errc() || a.ptr != p + kOffsetDigits || b.ec != std::errc() ||
      b.ptr != p + kOffsetDigits + 1 + kEpochDigits || offset <= 0 || epoch <= 0 || epoch > INT32_MAX) {
    return false;
  }
  *id = SnapshotId{offset, static_cast<Epoch>(epoch)};
  return true;
}

Status file_size(const std::string& path, int64_t* size) {
  port::File file;
  if (auto ec = port::File::open(path, port::OpenMode::kReadOnly, &file)) return Status::from_error_code(ec, path);
  uint64_t bytes = 0;
  if (auto ec = file.size(&bytes)) return Status::from_error_code(ec, path);
  *size = static_cast<int64_t>(bytes);
  return Status();
}

}  // namespace

std::string FileSnapshotStore::file_name(SnapshotId id) {
  char name[64];
  std::snprintf(name, sizeof name, "%020lld-%010d", static_cast<long long>(id.end_offset), id.epoch);
  return std::string(name) + std::string(kSuffix);
}

Status FileSnapshotStore::open(const std::string& directory, std::unique_ptr<FileSnapshotStore>* out) {
  if (auto ec = port::make_directories(directory)) return Status::from_error_code(ec, directory);
  std::vector<std::string> names;
  if (auto ec = port::list_directory(directory, &names)) return Status::from_error_code(ec, directory);
  std::unique_ptr<FileSnapshotStore> store(new FileSnapshotStore(directory));
  std::vector<std::string> stale;
  for (const std::string& name : names) {
    SnapshotId id;
    if (parse_name(name, &id)) {
      if (id.end_offset > store->latest_.end_offset) {
        if (!store->latest_.empty()) stale.push_back(file_name(store->latest_));
        store->latest_ = id;
      } else {
        stale.push_back(name);
      }
    } else if (ends_with(name, kPartSuffix)) {
      stale.push_back(name);
    }
  }
  for (const std::string& name : stale) {
    EDDY_LOG_INFO("raft snapshots: removing {}/{} (not the latest)", directory, name);
    if (auto ec = port::remove_file(directory + "/" + name)) return Status::from_error_code(ec, directory + "/" + name);
  }
  if (!stale.empty()) {
    if (auto ec = port::sync_directory(directory)) return Status::from_error_code(ec, directory);
  }
  if (!store->latest_.empty()) {
    if (Status s = file_size(store->path(store->latest_), &store->latest_size_); !s.ok()) return s;
  }
  *out = std::move(store);
  return Status();
}

Status FileSnapshotStore::read(SnapshotId id, int64_t position, size_t max_bytes, std::string* out) const {
  out->clear();
  if (latest_.empty() || id != latest_) return Status::not_found("raft snapshot: no such snapshot in " + directory_);
  if (position < 0 || position > latest_size_) return Status::out_of_range("raft snapshot: position out of range");
  const std::string file_path = path(id);
  port::File file;
  if (auto ec = port::File::open(file_path, port::OpenMode::kReadOnly, &file)) {
    return Status::from_error_code(ec, file_path);
  }
  const uint64_t left = static_cast<uint64_t>(latest_size_ - position);
  out->resize(static_cast<size_t>(std::min<uint64_t>(left, max_bytes)));  // <= max_bytes
  size_t got = 0;
  if (auto ec = file.read_at(static_cast<uint64_t>(position), out->data(), out->size(), &got)) {
    out->clear();
    return Status::from_error_code(ec, file_path);
  }
  if (got != out->size()) {
    out->clear();
    return Status::corruption(file_path + ": shorter than when it was stored");
  }
  return Status();
}

Status FileSnapshotStore::store(SnapshotId id, const std::string& bytes) {
  if (Status s = check_storable(latest_, id); !s.ok()) return s;
  const std::string final_path = path(id);
  if (auto ec = port::replace_file(final_path, bytes.data(), bytes.size(), /*durable=*/true)) {
    return Status::from_error_code(ec, final_path);
  }
  const SnapshotId previous = latest_;
  latest_ = id;
  latest_size_ = static_cast<int64_t>(bytes.size());
  if (!previous.empty()) {
    // The new one is durable: the old one is only disk now (a failure here
    // leaves it for the next open to remove).
    if (auto ec = port::remove_file(path(previous))) {
      EDDY_LOG_WARN("raft snapshots: cannot remove {}: {}", path(previous), port::error_message(ec));
    }
  }
  return Status();
}

}  // namespace eddy::raft

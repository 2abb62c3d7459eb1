#include "storage/log_manager.h"

#include <cstdio>

#include "port/log.h"

namespace eddy::storage {

namespace {
constexpr const char* kLockFile = ".lock";
constexpr const char* kDeletingSuffix = ".deleting";
}  // namespace

bool is_valid_topic_name(const std::string& topic) {
  if (topic.empty() || topic.size() > 249 || topic == "." || topic == "..") return false;
  for (char c : topic) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string partition_directory_name(const TopicPartition& tp) {
  return tp.topic + "-" + std::to_string(tp.partition);
}

bool parse_partition_directory_name(const std::string& name, TopicPartition* tp) {
  size_t dash = name.rfind('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == name.size() || name.size() - dash - 1 > 9) return false;
  int32_t partition = 0;
  for (size_t i = dash + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    partition = partition * 10 + (name[i] - '0');
  }
  std::string topic = name.substr(0, dash);
  if (!is_valid_topic_name(topic)) return false;
  tp->topic = std::move(topic);
  tp->partition = partition;
  return true;
}

Status LogManager::open(const std::string& data_directory, std::unique_ptr<LogManager>* out) {
  std::unique_ptr<LogManager> manager(new LogManager(data_directory));
  std::error_code ec = port::make_directories(data_directory);
  if (!ec) ec = port::File::open(data_directory + "/" + kLockFile, port::OpenMode::kCreate, &manager->lock_);
  if (ec) {
    EDDY_LOG_ERROR("cannot open data directory {}: {}", data_directory, port::error_message(ec));
    return Status::from_error_code(ec);
  }
  ec = manager->lock_.try_lock_exclusive();
  if (ec) {
    if (ec == std::errc::operation_would_block || ec == std::errc::resource_unavailable_try_again) {
      EDDY_LOG_ERROR("data directory {} is in use by another process", data_directory);
      return Status::locked("data directory " + data_directory + " is in use by another process");
    }
    return Status::from_error_code(ec);
  }
  std::vector<std::string> names;
  ec = port::list_directory(data_directory, &names);
  if (ec) return Status::from_error_code(ec);
  for (const std::string& name : names) {
    size_t n = std::char_traits<char>::length(kDeletingSuffix);
    if (name.size() > n && name.compare(name.size() - n, n, kDeletingSuffix) == 0) {
      port::remove_tree(data_directory + "/" + name);  // a deletion interrupted by a crash
    }
  }
  manager->flusher_.start();
  *out = std::move(manager);
  return Status();
}

LogManager::~LogManager() {
  logs_.clear();  // unregisters each from the flusher
  flusher_.stop();
}

Status LogManager::close() {
  if (closed_) return Status();
  closed_ = true;
  Status result;
  for (auto& [tp, log] : logs_) {
    Status s = log->close();
    if (!s.ok()) {
      EDDY_LOG_ERROR("clean close of {}-{} failed: {}", tp.topic, tp.partition, s.to_string());
      result = s;
    }
  }
  logs_.clear();
  flusher_.stop();
  lock_.close();
  return result;
}

std::vector<TopicPartition> LogManager::partitions_on_disk() const {
  std::vector<TopicPartition> out;
  std::vector<std::string> names;
  if (port::list_directory(directory_, &names)) return out;
  for (const std::string& name : names) {
    TopicPartition tp;
    if (parse_partition_directory_name(name, &tp) && port::is_directory(directory_ + "/" + name)) out.push_back(tp);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Status LogManager::open_partition(const TopicPartition& tp, const LogConfig& config, PartitionLog** log) {
  if (!is_valid_topic_name(tp.topic) || tp.partition < 0) return Status::invalid_argument("bad topic name or partition");
  auto it = logs_.find(tp);
  if (it != logs_.end()) {
    *log = it->second.get();
    return it->second->update_config(config);
  }
  std::unique_ptr<PartitionLog> opened;
  Status s = PartitionLog::open(directory_ + "/" + partition_directory_name(tp), config, &flusher_, &opened);
  if (!s.ok()) return s;
  opened->set_owner(owner_);
  opened->set_budget(&budget_);
  *log = opened.get();
  logs_.emplace(tp, std::move(opened));
  return Status();
}

void LogManager::set_owner(const port::Executor* owner) {
  owner_ = owner;
  for (auto& [tp, log] : logs_) log->set_owner(owner);
}

PartitionLog* LogManager::find(const TopicPartition& tp) const {
  auto it = logs_.find(tp);
  return it == logs_.end() ? nullptr : it->second.get();
}

Status LogManager::delete_partition(const TopicPartition& tp) {
  logs_.erase(tp);  // unregisters from the flusher; no checkpoint
  std::string path = directory_ + "/" + partition_directory_name(tp);
  if (!port::path_exists(path)) return Status();
  // Rename first so that a crash mid-way never leaves a half-deleted
  // partition that would be opened again.
  std::string doomed = path + kDeletingSuffix;
  std::error_code ec = port::rename_file(path, doomed);
  if (!ec) ec = port::sync_directory(directory_);
  if (!ec) ec = port::remove_tree(doomed);
  if (ec) {
    EDDY_LOG_ERROR("cannot delete {}: {}", path, port::error_message(ec));
    return Status::from_error_code(ec);
  }
  return Status();
}

Status LogManager::delete_topic(const std::string& topic) {
  std::vector<TopicPartition> doomed;
  for (const auto& [tp, log] : logs_) {
    if (tp.topic == topic) doomed.push_back(tp);
  }
  for (const TopicPartition& tp : partitions_on_disk()) {
    if (tp.topic == topic && logs_.find(tp) == logs_.end()) doomed.push_back(tp);
  }
  Status result;
  for (const TopicPartition& tp : doomed) {
    Status s = delete_partition(tp);
    if (!s.ok()) result = s;
  }
  return result;
}

size_t LogManager::apply_retention(int64_t now_ms) {
  size_t dropped = 0;
  for (auto& [tp, log] : logs_) dropped += log->apply_retention(now_ms);
  return dropped;
}

}  // namespace eddy::storage

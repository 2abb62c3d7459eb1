// Link: the central cluster's side of each partition (link.h): its leader
// from the metadata, the central topic created when missing (create.topics)
// and partitions paused while it cannot take their batches.
#include "forward/link.h"

#include <algorithm>

#include "client/admin.h"
#include "port/log.h"
#include "port/port.h"
#include "protocol/errors.h"

namespace eddy::forward {

using protocol::ErrorCode;

bool Link::refresh_metadata(const std::set<std::string>& topics) {
  std::vector<std::string> names(topics.begin(), topics.end());
  next_metadata_refresh_ms_ = port::monotonic_millis() + kMetadataRefreshMs;
  Status s = client_->refresh_metadata(&names, false);
  if (!s.ok()) {
    fail("metadata from the central cluster: " + s.message());
    return false;
  }
  std::set<std::string> missing = apply_leaders();
  if (!missing.empty() && options_.create_topics && create_remote_topics(missing)) {
    s = client_->refresh_metadata(&names, false);
    if (!s.ok()) {
      fail("metadata from the central cluster: " + s.message());
      return false;
    }
    missing = apply_leaders();
  }
  const int64_t now = port::monotonic_millis();
  for (const std::string& topic : missing) {
    if (created_remote_topics_.count(topic) != 0) {
      // Created, not visible everywhere yet: ask again soon.
      next_metadata_refresh_ms_ = std::min(next_metadata_refresh_ms_, now + 200);
    } else if (!options_.create_topics) {
      pause_topic(topic, "topic " + topic + " does not exist on the central cluster (create it there, or set "
                         "eddy.forward." + options_.name + ".create.topics=true)");
    }
  }
  return true;
}

bool Link::create_remote_topics(const std::set<std::string>& missing) {
  bool created = false;
  client::Admin admin(client_.get());
  for (const std::string& topic : missing) {
    if (created_remote_topics_.count(topic) != 0) continue;
    int32_t partitions = 0;
    for (const auto& [key, p] : partitions_) {
      if (p.remote_topic == topic) partitions = std::max(partitions, p.partition + 1);
    }
    client::NewTopic t;
    t.name = topic;
    t.partitions = partitions;
    t.replication_factor = options_.replication_factor;
    Status s = admin.create_topic(t);
    if (s.ok() || protocol::kafka_error(s) == ErrorCode::kTopicAlreadyExists) {
      EDDY_LOG_INFO("forward link {}: created central topic {} with {} partitions", options_.name,
                    topic, partitions);
      created_remote_topics_.insert(topic);
      created = true;
    } else {
      pause_topic(topic, "could not create central topic " + topic + ": " + s.message());
    }
  }
  return created;
}

void Link::pause_topic(const std::string& remote_topic, const std::string& why) {
  for (auto& [key, p] : partitions_) {
    if (p.remote_topic == remote_topic) pause(p, why);
  }
}

std::set<std::string> Link::apply_leaders() {
  const client::ClusterMetadata& md = client_->metadata();
  const int64_t now = port::monotonic_millis();
  std::set<std::string> missing;
  for (auto& [key, p] : partitions_) {
    if (p.remote_topic.empty()) continue;
    const client::TopicInfo* t = md.topic(p.remote_topic);
    if (t == nullptr) continue;  // not asked for yet
    if (t->error_code == static_cast<int16_t>(ErrorCode::kUnknownTopicOrPartition)) {
      missing.insert(p.remote_topic);
      p.leader = -1;
      continue;
    }
    created_remote_topics_.erase(p.remote_topic);
    if (t->error_code == static_cast<int16_t>(ErrorCode::kTopicAuthorizationFailed)) {
      pause(p, "not authorized to write " + p.remote_topic + " on the central cluster");
      continue;
    }
    if (t->error_code == 0 && t->partition(p.partition) == nullptr) {
      pause(p, "central topic " + p.remote_topic + " has " + std::to_string(t->partitions.size()) +
                   " partitions; local partition " + std::to_string(p.partition) + " has no counterpart");
      continue;
    }
    p.leader = md.leader_for(p.remote_topic, p.partition);
    if (p.leader < 0) {
      // Leader election in progress on the central cluster: ask again soon.
      next_metadata_refresh_ms_ = std::min(next_metadata_refresh_ms_, now + options_.retry_backoff_max_ms / 10 + 100);
    }
    if (!p.paused.empty() && now >= p.paused_until_ms) {
      EDDY_LOG_INFO("forward link {}: {}-{} resumes (was paused: {})", options_.name, p.topic,
                    p.partition, p.paused);
      p.paused.clear();
    }
  }
  return missing;
}

void Link::pause(Partition& p, const std::string& why) {
  if (p.paused != why) {
    EDDY_LOG_WARN("forward link {}: {}-{} paused: {} (retried every {} ms)", options_.name, p.topic,
                  p.partition, why, options_.paused_retry_ms);
  }
  p.paused = why;
  p.last_error = why;
  p.paused_until_ms = port::monotonic_millis() + options_.paused_retry_ms;
  // Metadata is refreshed when the pause ends, so that a fixed cause resumes.
  next_metadata_refresh_ms_ = std::min(next_metadata_refresh_ms_, p.paused_until_ms);
}

}  // namespace eddy::forward

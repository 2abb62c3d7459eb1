#include "forward/link_status.h"

#include <cinttypes>
#include <cstdio>

#include "metrics/json_writer.h"
#include "port/port.h"
#include "storage/disk_budget.h"

namespace eddy::forward {

namespace {

void write_partition_json(const PartitionStatus& p, metrics::JsonWriter* j) {
  j->begin_object();
  j->field("topic", p.topic);
  j->field("partition", p.partition);
  j->field("remote_topic", p.remote_topic);
  j->field("priority", p.priority);
  j->field("forwarded_offset", p.forwarded_offset);
  j->field("log_start_offset", p.log_start_offset);
  j->field("local_end_offset", p.local_end_offset);
  j->field("backlog_messages", p.backlog_messages);
  j->field("backlog_bytes", p.backlog_bytes);
  j->field("dropped_messages", p.dropped_messages);
  j->field("rejected_appends", p.rejected_appends);
  j->field("forwarded_messages", p.forwarded_messages);
  j->field("forwarded_bytes", p.forwarded_bytes);
  j->field("skipped_invalid_batches", p.skipped_invalid_batches);
  j->field("lost_after_forwarding", p.lost_after_forwarding);
  j->field("paused", p.paused);
  j->field("last_error", p.last_error);
  j->end_object();
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

template <typename... Args>
void appendf(std::string* out, const char* fmt, Args... args) {
  char buf[1024];
  int n = std::snprintf(buf, sizeof(buf), fmt, args...);
  if (n > 0) out->append(buf, std::min<size_t>(static_cast<size_t>(n), sizeof(buf) - 1));
}

}  // namespace

const char* link_state_name(LinkState state) {
  switch (state) {
    case LinkState::kConnecting: return "connecting";
    case LinkState::kConnected: return "connected";
    case LinkState::kBackingOff: return "backing-off";
    case LinkState::kStopped: return "stopped";
  }
  return "?";
}

void StatusBoard::publish(LinkStatus status) {
  port::MutexLock lock(mu_);
  links_[status.name] = std::move(status);
}

std::vector<LinkStatus> StatusBoard::snapshot() const {
  port::MutexLock lock(mu_);
  std::vector<LinkStatus> out;
  for (const auto& entry : links_) out.push_back(entry.second);
  return out;
}

std::string StatusBoard::render_text(const DiskBudgetStatus* disk) const {
  std::vector<LinkStatus> links = snapshot();
  std::string out;
  if (disk != nullptr) {
    appendf(&out, "disk budget: %s, %s used, %s free (eddy.disk.budget.bytes)\n",
            storage::human_bytes(disk->limit_bytes).c_str(), storage::human_bytes(disk->used_bytes).c_str(),
            storage::human_bytes(disk->free_bytes).c_str());
  }
  if (links.empty()) return out + "no forwarding links configured (eddy.forward.links)\n";
  for (const LinkStatus& l : links) {
    appendf(&out, "link %s -> %s: %s", l.name.c_str(), l.bootstrap.c_str(), link_state_name(l.state));
    if (l.state == LinkState::kBackingOff) appendf(&out, " (retry in %" PRId64 " ms)", l.retry_in_ms);
    out += "\n";
    if (l.security != "PLAINTEXT") out += "  security: " + l.security + "\n";
    if (!l.last_error.empty()) out += "  last error: " + l.last_error + "\n";
    appendf(&out, "  rate: %s/s, %.0f msg/s", human_bytes(l.rate_bytes_per_sec).c_str(), l.rate_messages_per_sec);
    if (l.bandwidth_bytes_per_sec > 0) {
      appendf(&out, " (cap %s/s)", human_bytes(static_cast<double>(l.bandwidth_bytes_per_sec)).c_str());
    }
    appendf(&out,
            "; producer id %" PRId64 " epoch %d; producer resets %" PRIu64 "; found unacknowledged %" PRIu64
            "; connects %" PRIu64 "\n",
            l.producer_id, l.producer_epoch, l.producer_resets, l.found_unacknowledged, l.connects);
    appendf(&out, "  %-28s %-34s %4s %12s %12s %12s %10s %10s  %s\n", "PARTITION", "REMOTE", "PRIO", "FORWARDED",
            "END", "BACKLOG", "BYTES", "DROPPED", "STATE");
    for (const PartitionStatus& p : l.partitions) {
      std::string local = p.topic + "-" + std::to_string(p.partition);
      std::string state = p.paused.empty() ? "ok" : "paused: " + p.paused;
      if (p.paused.empty() && !p.last_error.empty()) state = "ok (last error: " + p.last_error + ")";
      if (p.rejected_appends > 0) state += "; " + std::to_string(p.rejected_appends) + " appends rejected (full)";
      if (p.skipped_invalid_batches > 0) {
        state += "; " + std::to_string(p.skipped_invalid_batches) + " malformed batches skipped";
      }
      if (p.lost_after_forwarding > 0) {
        state += "; " + std::to_string(p.lost_after_forwarding) + " forwarded offsets lost locally (power cut)";
      }
      appendf(&out, "  %-28s %-34s %4d %12" PRId64 " %12" PRId64 " %12" PRId64 " %10s %10" PRId64 "  %s\n",
              local.c_str(), p.remote_topic.c_str(), p.priority, p.forwarded_offset, p.local_end_offset,
              p.backlog_messages, human_bytes(static_cast<double>(p.backlog_bytes)).c_str(), p.dropped_messages,
              state.c_str());
    }
  }
  return out;
}

std::string StatusBoard::render_json(const DiskBudgetStatus* disk) const {
  std::vector<LinkStatus> links = snapshot();
  metrics::JsonWriter j;
  j.begin_object();
  if (disk != nullptr) {
    j.key("disk_budget");
    j.begin_object();
    j.field("limit_bytes", disk->limit_bytes);
    j.field("used_bytes", disk->used_bytes);
    j.field("free_bytes", disk->free_bytes);
    j.end_object();
  }
  j.key("links");
  j.begin_array();
  for (const LinkStatus& l : links) {
    j.begin_object();
    j.field("name", l.name);
    j.field("bootstrap", l.bootstrap);
    j.field("security", l.security);
    j.field("state", link_state_name(l.state));
    j.field("last_error", l.last_error);
    j.field("retry_in_ms", l.retry_in_ms);
    j.field("producer_id", l.producer_id);
    j.field("producer_epoch", static_cast<int>(l.producer_epoch));
    j.field("producer_resets", l.producer_resets);
    j.field("found_unacknowledged", l.found_unacknowledged);
    j.field("connects", l.connects);
    j.field("bandwidth_bytes_per_sec", l.bandwidth_bytes_per_sec);
    j.field("rate_bytes_per_sec", l.rate_bytes_per_sec);
    j.field("rate_messages_per_sec", l.rate_messages_per_sec);
    j.key("partitions");
    j.begin_array();
    for (const PartitionStatus& p : l.partitions) write_partition_json(p, &j);
    j.end_array();
    j.end_object();
  }
  j.end_array();
  j.end_object();
  return j.take() + "\n";
}

void RateMeter::sample(int64_t now_ms, uint64_t total_bytes, int64_t total_messages) {
  samples_.push_back({now_ms, total_bytes, total_messages});
  while (samples_.size() > 2 && now_ms - samples_.front().ms > kWindowMs) samples_.pop_front();
  const Sample& first = samples_.front();
  double seconds = static_cast<double>(now_ms - first.ms) / 1000.0;
  bytes_per_sec_ = seconds > 0 ? static_cast<double>(total_bytes - first.bytes) / seconds : 0;
  messages_per_sec_ = seconds > 0 ? static_cast<double>(total_messages - first.messages) / seconds : 0;
}

LinkStatusPublisher::LinkStatusPublisher(StatusBoard* board, LinkStatus initial)
    : board_(board), status_(std::move(initial)) {
  board_->publish(status_);
}

void LinkStatusPublisher::count_forwarded(uint64_t bytes, int64_t messages) {
  total_bytes_ += bytes;
  total_messages_ += messages;
}

bool LinkStatusPublisher::due(bool force) {
  const int64_t now = port::monotonic_millis();
  if (!force && now - last_publish_ms_ < kPublishMs) return false;
  last_publish_ms_ = now;
  rates_.sample(now, total_bytes_, total_messages_);
  status_.rate_bytes_per_sec = rates_.bytes_per_sec();
  status_.rate_messages_per_sec = rates_.messages_per_sec();
  return true;
}

}  // namespace eddy::forward

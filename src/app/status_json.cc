// /status.json: what the status page draws, for scripts too.
//   {"broker":{version,node_id,started_ms,uptime_seconds,connections,...},
//    "disk_budget":{limit_bytes,used_bytes,free_bytes},
//    "topics":[{name,partitions,bytes_in,messages_in,bytes_out,messages_out,log_end_offset,
//               high_watermark,last_stable_offset}],  (offsets: sums over partitions)
//    "groups":[{group,lag,partitions:[{topic,partition,committed,end_offset,lag}]}],
//    "links":[{name,bootstrap,security,state,last_error,backlog_messages,backlog_bytes,rate_*,
//              dropped_messages,paused_partitions,producer_resets,found_unacknowledged,partitions:[...],
//              history:[[wall_ms,backlog_messages,backlog_bytes],...]}],
//    "history_sample_ms":..., "history_samples":240, "now_ms":...}
// Counters are totals since the broker started; the page derives rates
// from two consecutive readings.
#include <string>

#include "app/link_history.h"
#include "app/metrics_render.h"
#include "app/version.h"
#include "broker/broker.h"
#include "forward/forwarder.h"
#include "app/controller_quorum.h"
#include "metrics/json_writer.h"
#include "net/server.h"
#include "port/port.h"
#include "storage/log_manager.h"

namespace eddy::app {

namespace {

using metrics::JsonWriter;

void write_broker(const MetricsSources& src, JsonWriter& j) {
  j.key("broker");
  j.begin_object();
  j.field("version", EDDY_VERSION);
  j.field("node_id", static_cast<int64_t>(src.broker->options().node_id));
  j.field("started_ms", src.started_wall_ms);
  j.field("uptime_seconds", static_cast<double>(port::monotonic_millis() - src.started_monotonic_ms) / 1000.0);
  const net::ServerStats s = src.server->stats();
  j.field("connections", static_cast<uint64_t>(s.connections));
  j.field("connections_accepted", s.accepted_total);
  j.field("parked_produces", static_cast<uint64_t>(src.broker->parked_produces()));
  j.field("parked_fetches", static_cast<uint64_t>(src.broker->parked_fetches()));
  j.end_object();
  const storage::DiskBudget& budget = src.logs->budget();
  j.key("disk_budget");
  j.begin_object();
  j.field("limit_bytes", budget.limit_bytes());
  j.field("used_bytes", budget.used_bytes());
  j.field("free_bytes", budget.free_bytes());
  j.end_object();
}

// A cluster node's controller quorum (null on a single node).
void write_quorum(const MetricsSources& src, JsonWriter& j) {
  j.key("controller_quorum");
  if (src.quorum == nullptr) {
    j.null();
    return;
  }
  const raft::QuorumView v = src.quorum->view();
  j.begin_object();
  j.field("role", raft::role_name(v.role));
  j.field("epoch", static_cast<int64_t>(v.epoch));
  j.field("leader_id", static_cast<int64_t>(v.leader_id));
  j.field("high_watermark", v.high_watermark);
  j.field("log_end_offset", v.log_end_offset);
  j.field("recovering", v.recovering);
  j.end_object();
}

void write_topics(const MetricsSources& src, JsonWriter& j) {
  j.key("topics");
  j.begin_array();
  for (const broker::Topic* t : src.broker->topics().all()) {
    j.begin_object();
    j.field("name", t->name);
    j.field("partitions", static_cast<uint64_t>(t->partitions.size()));
    j.field("bytes_in", t->traffic.bytes_in);
    j.field("messages_in", t->traffic.messages_in);
    j.field("bytes_out", t->traffic.bytes_out);
    j.field("messages_out", t->traffic.messages_out);
    int64_t end = 0, hw = 0, lso = 0;
    for (const storage::PartitionLog* log : t->partitions) {
      if (log == nullptr) continue;  // held by other nodes
      end += log->log_end_offset();
      hw += log->high_watermark();
      lso += log->last_stable_offset();
    }
    j.field("log_end_offset", end);  // sums over partitions
    j.field("high_watermark", hw);
    j.field("last_stable_offset", lso);
    j.end_object();
  }
  j.end_array();
}

void write_groups(const MetricsSources& src, JsonWriter& j) {
  std::vector<GroupPartitionLag> lag;
  const Status read = collect_group_lag(src, &lag);
  j.key("groups");
  j.begin_array();
  for (size_t i = 0; i < lag.size();) {
    size_t k = i;
    int64_t total = 0;
    while (k < lag.size() && lag[k].group == lag[i].group) total += lag[k++].lag;
    j.begin_object();
    j.field("group", lag[i].group);
    j.field("lag", total);
    j.key("partitions");
    j.begin_array();
    for (; i < k; ++i) {
      j.begin_object();
      j.field("topic", lag[i].topic);
      j.field("partition", static_cast<int64_t>(lag[i].partition));
      j.field("committed", lag[i].committed);
      j.field("end_offset", lag[i].end_offset);
      j.field("lag", lag[i].lag);
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  j.end_array();
  if (!read.ok()) j.field("groups_error", read.message());
}

void write_link(const MetricsSources& src, const forward::LinkStatus& l, JsonWriter& j) {
  j.begin_object();
  j.field("name", l.name);
  j.field("bootstrap", l.bootstrap);
  j.field("security", l.security);
  j.field("state", forward::link_state_name(l.state));
  j.field("last_error", l.last_error);
  int64_t messages = 0, dropped = 0;
  uint64_t bytes = 0, paused = 0;
  for (const forward::PartitionStatus& p : l.partitions) {
    messages += p.backlog_messages;
    bytes += p.backlog_bytes;
    dropped += p.dropped_messages;
    if (!p.paused.empty()) ++paused;
  }
  j.field("backlog_messages", messages);
  j.field("backlog_bytes", bytes);
  j.field("rate_messages_per_sec", l.rate_messages_per_sec);
  j.field("rate_bytes_per_sec", l.rate_bytes_per_sec);
  j.field("dropped_messages", dropped);
  j.field("paused_partitions", paused);
  j.field("producer_resets", l.producer_resets);
  j.field("found_unacknowledged", l.found_unacknowledged);
  j.key("partitions");
  j.begin_array();
  for (const forward::PartitionStatus& p : l.partitions) {
    j.begin_object();
    j.field("topic", p.topic);
    j.field("partition", static_cast<int64_t>(p.partition));
    j.field("backlog_messages", p.backlog_messages);
    j.field("backlog_bytes", p.backlog_bytes);
    j.field("paused", p.paused);
    j.end_object();
  }
  j.end_array();
  j.key("history");
  j.begin_array();
  if (src.history != nullptr) {
    for (const LinkSample& s : src.history->samples(l.name)) {
      j.begin_array();
      j.number(s.wall_ms);
      j.number(s.backlog_messages);
      j.number(s.backlog_bytes);
      j.end_array();
    }
  }
  j.end_array();
  j.end_object();
}

}  // namespace

std::string render_status_json(const MetricsSources& src) {
  JsonWriter j;
  j.begin_object();
  j.field("now_ms", port::wall_clock_millis());
  j.field("history_sample_ms", src.history_sample_ms);
  j.field("history_samples", static_cast<uint64_t>(kLinkHistorySamples));
  write_broker(src, j);
  write_quorum(src, j);
  write_topics(src, j);
  write_groups(src, j);
  j.key("links");
  j.begin_array();
  for (const forward::LinkStatus& l : src.forwarder->status().snapshot()) write_link(src, l, j);
  j.end_array();
  j.end_object();
  return j.take();
}

}  // namespace eddy::app

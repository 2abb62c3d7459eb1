// /metrics: every family with HELP and TYPE, names per Prometheus'
// conventions (eddy_ prefix, _total for counters, _seconds, _bytes).
#include <algorithm>
#include <string>

#include "app/controller_quorum.h"
#include "app/metrics_render.h"
#include "app/version.h"
#include "broker/broker.h"
#include "forward/forwarder.h"
#include "metrics/prometheus_text.h"
#include "net/http_server.h"
#include "net/server.h"
#include "port/log.h"
#include "port/port.h"
#include "protocol/errors.h"
#include "storage/log_manager.h"

namespace eddy::app {

namespace {

using metrics::PrometheusText;

const char* api_label(int16_t api_key) { return api_key < 0 ? "other" : protocol::api_name(api_key); }

void render_process(const MetricsSources& src, PrometheusText& out) {
  out.family("eddy_build_info", "gauge", "Always 1; the version of this broker in its label.");
  out.sample("eddy_build_info", {{"version", EDDY_VERSION}}, 1);
  out.family("eddy_start_time_seconds", "gauge", "When this broker started, in seconds since the epoch.");
  out.sample("eddy_start_time_seconds", {}, static_cast<double>(src.started_wall_ms) / 1000.0);
  out.family("eddy_uptime_seconds", "gauge", "Seconds since this broker started.");
  out.sample("eddy_uptime_seconds", {},
             static_cast<double>(port::monotonic_millis() - src.started_monotonic_ms) / 1000.0);
  out.family("eddy_peak_resident_memory_bytes", "gauge", "The largest resident set size of the process so far.");
  out.sample("eddy_peak_resident_memory_bytes", {}, port::peak_rss_bytes());
}

void render_network(const MetricsSources& src, PrometheusText& out) {
  const net::ServerStats s = src.server->stats();
  out.family("eddy_connections", "gauge", "Open Kafka client connections.");
  out.sample("eddy_connections", {}, static_cast<uint64_t>(s.connections));
  out.family("eddy_connections_accepted_total", "counter", "Kafka client connections accepted.");
  out.sample("eddy_connections_accepted_total", {}, s.accepted_total);
  out.family("eddy_connections_read_paused", "gauge", "Connections not reading because of backpressure.");
  out.sample("eddy_connections_read_paused", {}, static_cast<uint64_t>(s.read_paused_connections));
  out.family("eddy_request_memory_bytes", "gauge", "Memory held by large request frames (queued.max.request.bytes).");
  out.sample("eddy_request_memory_bytes", {}, s.request_memory_bytes);
  out.family("eddy_queued_response_bytes", "gauge", "Response bytes in memory waiting to be written.");
  out.sample("eddy_queued_response_bytes", {}, static_cast<uint64_t>(s.queued_response_bytes));
  if (src.http == nullptr) return;
  const net::HttpServerStats h = src.http->stats();
  out.family("eddy_metrics_http_connections", "gauge", "Open connections to this metrics listener.");
  out.sample("eddy_metrics_http_connections", {}, static_cast<uint64_t>(h.open_connections));
  out.family("eddy_metrics_http_requests_total", "counter", "Requests this metrics listener answered from its pages.");
  out.sample("eddy_metrics_http_requests_total", {}, h.requests);
  out.family("eddy_metrics_http_bad_requests_total", "counter",
             "Requests to this metrics listener refused (400, 405, 431, 505, incomplete).");
  out.sample("eddy_metrics_http_bad_requests_total", {}, h.bad_requests);
  out.family("eddy_metrics_http_refused_connections_total", "counter",
             "Connections to this metrics listener refused at its connection limit.");
  out.sample("eddy_metrics_http_refused_connections_total", {}, h.refused_connections);
}

void render_requests(const MetricsSources& src, PrometheusText& out) {
  const broker::RequestMetrics& m = src.broker->request_metrics();
  out.family("eddy_requests_total", "counter", "Kafka requests received, per API.");
  for (const auto& slot : m.slots()) out.sample("eddy_requests_total", {{"api", api_label(slot.api_key)}}, slot.requests);
  out.family("eddy_requests_refused_total", "counter",
             "Kafka requests that closed their connection (malformed, unsupported API or version), per API.");
  for (const auto& slot : m.slots()) {
    out.sample("eddy_requests_refused_total", {{"api", api_label(slot.api_key)}}, slot.refused);
  }
  out.family("eddy_request_errors_total", "counter",
             "Error codes answered (each partition, topic, group or resource with one counts once), per API and Kafka error.");
  for (const auto& [key, count] : m.errors()) {
    out.sample("eddy_request_errors_total",
               {{"api", api_label(key.first)}, {"error", protocol::error_name(static_cast<protocol::ErrorCode>(key.second))}},
               count);
  }
  out.family("eddy_request_duration_seconds", "histogram",
             "From a request frame read to its response handed to the connection (parked waits included), per API.");
  for (const auto& slot : m.slots()) {
    out.histogram_seconds("eddy_request_duration_seconds", {{"api", api_label(slot.api_key)}}, slot.latency.snapshot());
  }
  out.family("eddy_parked_requests", "gauge",
             "Requests waiting: Produce acks=all for durability, Fetch for min.bytes.");
  out.sample("eddy_parked_requests", {{"api", "Produce"}}, static_cast<uint64_t>(src.broker->parked_produces()));
  out.sample("eddy_parked_requests", {{"api", "Fetch"}}, static_cast<uint64_t>(src.broker->parked_fetches()));
  out.family("eddy_sasl_authentications_total", "counter",
             "SASL authentications on SASL listeners, by result (failed: wrong or unknown credentials, a malformed "
             "exchange, a mechanism not enabled).");
  out.sample("eddy_sasl_authentications_total", {{"result", "succeeded"}}, src.broker->sasl_authentications_succeeded());
  out.sample("eddy_sasl_authentications_total", {{"result", "failed"}}, src.broker->sasl_authentications_failed());
  out.family("eddy_authorization_refusals_total", "counter",
             "Operations the authorizer (authorizer.class.name) refused: a request or a part of one (a partition, "
             "a group) answered with an authorization error.");
  out.sample("eddy_authorization_refusals_total", {}, src.broker->authorization_refusals());
}

void render_storage(const MetricsSources& src, PrometheusText& out) {
  const storage::DiskBudget& budget = src.logs->budget();
  out.family("eddy_disk_budget_limit_bytes", "gauge", "eddy.disk.budget.bytes: what the data directory may take.");
  out.sample("eddy_disk_budget_limit_bytes", {}, budget.limit_bytes());
  out.family("eddy_disk_budget_used_bytes", "gauge",
             "Charged to the budget: every partition's reservation (or its files, if larger) and the metadata reserve.");
  out.sample("eddy_disk_budget_used_bytes", {}, budget.used_bytes());
  out.family("eddy_disk_budget_free_bytes", "gauge", "Left in the budget for new topics, partitions and growth.");
  out.sample("eddy_disk_budget_free_bytes", {}, budget.free_bytes());
  out.family("eddy_fsync_duration_seconds", "histogram", "Duration of each fdatasync of a segment by the flusher.");
  out.histogram_seconds("eddy_fsync_duration_seconds", {},
                        src.logs->flusher().fsync_latency().snapshot());
}

void render_topics(const MetricsSources& src, PrometheusText& out) {
  std::vector<broker::Topic*> topics = src.broker->topics().all();
  struct Counter {
    const char* name;
    const char* help;
    uint64_t broker::TopicTraffic::*field;
  };
  static const Counter kCounters[] = {
      {"eddy_topic_bytes_in_total", "Record batch bytes appended by Produce.", &broker::TopicTraffic::bytes_in},
      {"eddy_topic_messages_in_total", "Records appended by Produce.", &broker::TopicTraffic::messages_in},
      {"eddy_topic_bytes_out_total", "Record batch bytes returned by Fetch.", &broker::TopicTraffic::bytes_out},
      {"eddy_topic_messages_out_total", "Offsets Fetch advanced consumers by.", &broker::TopicTraffic::messages_out},
  };
  for (const Counter& c : kCounters) {
    out.family(c.name, "counter", c.help);
    for (const broker::Topic* t : topics) out.sample(c.name, {{"topic", t->name}}, t->traffic.*(c.field));
  }
  out.family("eddy_topic_partitions", "gauge", "Partitions of the topic.");
  for (const broker::Topic* t : topics) {
    out.sample("eddy_topic_partitions", {{"topic", t->name}}, static_cast<uint64_t>(t->partitions.size()));
  }
  struct Offset {
    const char* name;
    const char* help;
    int64_t (*get)(const storage::PartitionLog&);
  };
  static const Offset kOffsets[] = {
      {"eddy_partition_log_start_offset", "First offset still in the log.",
       [](const storage::PartitionLog& l) { return l.log_start_offset(); }},
      {"eddy_partition_log_end_offset", "Offset the next appended record gets.",
       [](const storage::PartitionLog& l) { return l.log_end_offset(); }},
      {"eddy_partition_high_watermark", "Offset below which consumers may read.",
       [](const storage::PartitionLog& l) { return l.high_watermark(); }},
      {"eddy_partition_last_stable_offset",
       "Offset below which read_committed consumers may read: the first offset of the earliest open transaction, "
       "else the high watermark.",
       [](const storage::PartitionLog& l) { return l.last_stable_offset(); }},
  };
  for (const Offset& o : kOffsets) {
    out.family(o.name, "gauge", o.help);
    for (const broker::Topic* t : topics) {
      for (size_t p = 0; p < t->partitions.size(); ++p) {
        if (t->partitions[p] == nullptr) continue;  // held by other nodes
        const std::string partition = std::to_string(p);
        out.sample(o.name, {{"topic", t->name}, {"partition", partition}}, o.get(*t->partitions[p]));
      }
    }
  }
}

void render_groups(const MetricsSources& src, PrometheusText& out) {
  std::vector<GroupPartitionLag> lag;
  if (Status s = collect_group_lag(src, &lag); !s.ok()) {
    EDDY_LOG_WARN("metrics: cannot read committed offsets: {}", s.message());
  }
  out.family("eddy_consumer_group_committed_offset", "gauge", "The offset the group committed for the partition.");
  for (const GroupPartitionLag& r : lag) {
    const std::string partition = std::to_string(r.partition);
    out.sample("eddy_consumer_group_committed_offset",
               {{"group", r.group}, {"topic", r.topic}, {"partition", partition}}, r.committed);
  }
  out.family("eddy_consumer_group_lag", "gauge",
             "High watermark minus the committed offset (0 for a partition that no longer exists).");
  for (const GroupPartitionLag& r : lag) {
    const std::string partition = std::to_string(r.partition);
    out.sample("eddy_consumer_group_lag", {{"group", r.group}, {"topic", r.topic}, {"partition", partition}}, r.lag);
  }
}

// The controller quorum of a cluster node (src/raft): this node's role and
// view, and on the leader every voter's replication.
void render_quorum(const MetricsSources& src, PrometheusText& out) {
  if (src.quorum == nullptr) return;
  const raft::QuorumView v = src.quorum->view();
  out.family("eddy_raft_role", "gauge", "1 for this node's role in the Raft group (leader, follower, candidate, "
                                        "unattached, resigned), 0 for the others.");
  for (raft::Role role : {raft::Role::kLeader, raft::Role::kFollower, raft::Role::kCandidate, raft::Role::kUnattached,
                          raft::Role::kResigned}) {
    out.sample("eddy_raft_role", {{"group", "controller"}, {"role", raft::role_name(role)}},
               static_cast<uint64_t>(v.role == role ? 1 : 0));
  }
  out.family("eddy_raft_epoch", "gauge", "The Raft group's epoch as this node knows it.");
  out.sample("eddy_raft_epoch", {{"group", "controller"}}, static_cast<int64_t>(v.epoch));
  out.family("eddy_raft_leader_id", "gauge", "The node id of the group's leader as this node knows it; -1 unknown.");
  out.sample("eddy_raft_leader_id", {{"group", "controller"}}, static_cast<int64_t>(v.leader_id));
  out.family("eddy_raft_high_watermark", "gauge", "Entries below it are committed (held by a majority).");
  out.sample("eddy_raft_high_watermark", {{"group", "controller"}}, v.high_watermark);
  out.family("eddy_raft_log_end_offset", "gauge", "One past this node's last entry of the group's log.");
  out.sample("eddy_raft_log_end_offset", {{"group", "controller"}}, v.log_end_offset);
  out.family("eddy_raft_recovering", "gauge", "1 while this node catches up after a wiped disk (it does not vote).");
  out.sample("eddy_raft_recovering", {{"group", "controller"}}, static_cast<uint64_t>(v.recovering ? 1 : 0));
  out.family("eddy_raft_failed", "gauge", "1 when the group's log or state store failed here (restart the node).");
  out.sample("eddy_raft_failed", {{"group", "controller"}}, static_cast<uint64_t>(v.failed ? 1 : 0));
  if (v.voter_progress.empty()) return;
  out.family("eddy_raft_voter_lag", "gauge", "On the leader: entries a voter lacks of the leader's log (-1 unknown).");
  for (const raft::QuorumView::Voter& voter : v.voter_progress) {
    const int64_t lag = voter.log_end_offset < 0 ? -1 : std::max<int64_t>(0, v.log_end_offset - voter.log_end_offset);
    out.sample("eddy_raft_voter_lag", {{"group", "controller"}, {"voter", std::to_string(voter.id)}}, lag);
  }
}

}  // namespace

std::string render_prometheus_metrics(const MetricsSources& src) {
  PrometheusText out;
  render_process(src, out);
  render_network(src, out);
  render_requests(src, out);
  render_storage(src, out);
  render_topics(src, out);
  render_groups(src, out);
  render_quorum(src, out);
  render_link_metrics(src.forwarder->status().snapshot(), out);
  return out.take();
}

}  // namespace eddy::app

// The eddy_link_* families: what each forwarding link's status already
// knows (forward/link_status.h), per link and per forwarded partition.
#include <string>

#include "app/metrics_render.h"

namespace eddy::app {

namespace {

using forward::LinkState;
using forward::LinkStatus;
using forward::PartitionStatus;
using metrics::PrometheusText;

void render_link_level(const std::vector<LinkStatus>& links, PrometheusText& out) {
  static const LinkState kStates[] = {LinkState::kConnecting, LinkState::kConnected, LinkState::kBackingOff,
                                      LinkState::kStopped};
  out.family("eddy_link_state", "gauge", "1 for the link's current state, 0 for the others.");
  for (const LinkStatus& l : links) {
    for (LinkState s : kStates) {
      out.sample("eddy_link_state", {{"link", l.name}, {"state", forward::link_state_name(s)}}, l.state == s ? 1 : 0);
    }
  }
  out.family("eddy_link_connects_total", "counter", "Connections the link made to the central cluster.");
  for (const LinkStatus& l : links) out.sample("eddy_link_connects_total", {{"link", l.name}}, l.connects);
  out.family("eddy_link_producer_resets_total", "counter",
             "Times the central cluster had forgotten the link's producer id (a new one was taken).");
  for (const LinkStatus& l : links) out.sample("eddy_link_producer_resets_total", {{"link", l.name}}, l.producer_resets);
  out.family("eddy_link_found_unacknowledged_total", "counter",
             "Batches the link found written in the central log that were never acknowledged (not sent again).");
  for (const LinkStatus& l : links) {
    out.sample("eddy_link_found_unacknowledged_total", {{"link", l.name}}, l.found_unacknowledged);
  }
  out.family("eddy_link_rate_bytes_per_second", "gauge", "Bytes forwarded per second over the last few seconds.");
  for (const LinkStatus& l : links) out.sample("eddy_link_rate_bytes_per_second", {{"link", l.name}}, l.rate_bytes_per_sec);
  out.family("eddy_link_rate_messages_per_second", "gauge", "Records forwarded per second over the last few seconds.");
  for (const LinkStatus& l : links) {
    out.sample("eddy_link_rate_messages_per_second", {{"link", l.name}}, l.rate_messages_per_sec);
  }
  out.family("eddy_link_bandwidth_limit_bytes_per_second", "gauge",
             "eddy.forward.<link>.bandwidth.bytes.per.sec (0: no cap).");
  for (const LinkStatus& l : links) {
    out.sample("eddy_link_bandwidth_limit_bytes_per_second", {{"link", l.name}}, l.bandwidth_bytes_per_sec);
  }
}

struct PartitionFamily {
  const char* name;
  const char* type;
  const char* help;
  double (*get)(const PartitionStatus&);
};

const PartitionFamily kPartitionFamilies[] = {
    {"eddy_link_backlog_messages", "gauge", "Records stored and not yet acknowledged by the central cluster.",
     [](const PartitionStatus& p) { return static_cast<double>(p.backlog_messages); }},
    {"eddy_link_backlog_bytes", "gauge", "Bytes of the backlog.",
     [](const PartitionStatus& p) { return static_cast<double>(p.backlog_bytes); }},
    {"eddy_link_forwarded_offset", "gauge", "The next local offset not yet acknowledged by the central cluster.",
     [](const PartitionStatus& p) { return static_cast<double>(p.forwarded_offset); }},
    {"eddy_link_forwarded_messages_total", "counter", "Records forwarded since the broker started.",
     [](const PartitionStatus& p) { return static_cast<double>(p.forwarded_messages); }},
    {"eddy_link_forwarded_bytes_total", "counter", "Bytes forwarded since the broker started.",
     [](const PartitionStatus& p) { return static_cast<double>(p.forwarded_bytes); }},
    {"eddy_link_dropped_messages_total", "counter",
     "Records lost to eddy.full.policy=drop-oldest before they were forwarded.",
     [](const PartitionStatus& p) { return static_cast<double>(p.dropped_messages); }},
    {"eddy_link_rejected_appends_total", "counter",
     "Local produces refused by eddy.full.policy=reject since the broker started.",
     [](const PartitionStatus& p) { return static_cast<double>(p.rejected_appends); }},
    {"eddy_link_skipped_invalid_batches_total", "counter",
     "Stored batches with malformed records, not forwarded, since the broker started.",
     [](const PartitionStatus& p) { return static_cast<double>(p.skipped_invalid_batches); }},
    {"eddy_link_paused", "gauge", "1 while forwarding of the partition is paused (see eddy forward status).",
     [](const PartitionStatus& p) { return p.paused.empty() ? 0.0 : 1.0; }},
};

}  // namespace

void render_link_metrics(const std::vector<LinkStatus>& links, PrometheusText& out) {
  render_link_level(links, out);
  for (const PartitionFamily& f : kPartitionFamilies) {
    out.family(f.name, f.type, f.help);
    for (const LinkStatus& l : links) {
      for (const PartitionStatus& p : l.partitions) {
        const std::string partition = std::to_string(p.partition);
        out.sample(f.name, {{"link", l.name}, {"topic", p.topic}, {"partition", partition}}, f.get(p));
      }
    }
  }
}

}  // namespace eddy::app

#include "app/link_history.h"

namespace eddy::app {

LinkHistory::LinkHistory(const std::vector<std::string>& link_names) : rings_(link_names.size()) {
  for (size_t i = 0; i < link_names.size(); ++i) rings_[i].name = link_names[i];
}

void LinkHistory::sample(const std::vector<forward::LinkStatus>& links, int64_t wall_ms) {
  for (const forward::LinkStatus& link : links) {
    for (Ring& ring : rings_) {
      if (ring.name != link.name) continue;
      LinkSample s;
      s.wall_ms = wall_ms;
      for (const forward::PartitionStatus& p : link.partitions) {
        s.backlog_messages += p.backlog_messages;
        s.backlog_bytes += p.backlog_bytes;
      }
      ring.samples[ring.next] = s;
      ring.next = (ring.next + 1) % kLinkHistorySamples;
      if (ring.count < kLinkHistorySamples) ++ring.count;
      break;
    }
  }
}

std::vector<LinkSample> LinkHistory::samples(const std::string& link) const {
  std::vector<LinkSample> out;
  for (const Ring& ring : rings_) {
    if (ring.name != link) continue;
    out.reserve(ring.count);
    const size_t first = (ring.next + kLinkHistorySamples - ring.count) % kLinkHistorySamples;
    for (size_t i = 0; i < ring.count; ++i) out.push_back(ring.samples[(first + i) % kLinkHistorySamples]);
  }
  return out;
}

}  // namespace eddy::app

#include <algorithm>

#include "app/metrics_sources.h"
#include "broker/broker.h"

namespace eddy::app {

Status collect_group_lag(broker::Broker& broker, std::vector<GroupPartitionLag>* out) {
  meta::OffsetStore& offsets = broker.meta()->offsets();
  std::vector<std::string> groups;
  Status s = offsets.list_groups(&groups);
  if (!s.ok()) return s;
  std::vector<meta::CommittedOffset> committed;
  for (const std::string& group : groups) {
    committed.clear();
    s = offsets.fetch_all(group, &committed);
    if (!s.ok()) return s;
    for (const meta::CommittedOffset& c : committed) {
      GroupPartitionLag row;
      row.group = group;
      row.topic = c.topic;
      row.partition = c.partition;
      row.committed = c.offset;
      broker::Topic* topic = broker.topics().find(c.topic);
      if (topic != nullptr && topic->local(c.partition) != nullptr) {
        row.end_offset = topic->local(c.partition)->high_watermark();
        row.lag = row.committed >= 0 ? std::max<int64_t>(0, row.end_offset - row.committed) : row.end_offset;
      }
      out->push_back(std::move(row));
    }
  }
  return Status();
}

}  // namespace eddy::app

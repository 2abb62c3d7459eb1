#include <algorithm>

#include "app/committed_offsets_cache.h"
#include "app/metrics_sources.h"
#include "broker/broker.h"

namespace eddy::app {

Status collect_group_lag(const MetricsSources& src, std::vector<GroupPartitionLag>* out) {
  CommittedOffsetsCache uncached;
  CommittedOffsetsCache* cache = src.committed_offsets != nullptr ? src.committed_offsets : &uncached;
  const std::vector<GroupCommittedOffset>* committed = nullptr;
  const Status read = cache->read(*src.broker->meta(), &committed);
  for (const GroupCommittedOffset& c : *committed) {
    GroupPartitionLag row;
    row.group = c.group;
    row.topic = c.topic;
    row.partition = c.partition;
    row.committed = c.offset;
    broker::Topic* topic = src.broker->topics().find(c.topic);
    if (topic != nullptr && topic->local(c.partition) != nullptr) {
      row.end_offset = topic->local(c.partition)->high_watermark();
      row.lag = row.committed >= 0 ? std::max<int64_t>(0, row.end_offset - row.committed) : row.end_offset;
    }
    out->push_back(std::move(row));
  }
  return read;
}

}  // namespace eddy::app

// DescribeLogDirs: Eddy's one data directory (log.dirs) with its disk budget
// as the volume: TotalBytes is eddy.disk.budget.bytes, UsableBytes what is
// left of it, and each partition's PartitionSize is its charge on the budget
// (storage/disk_budget.h: its reservation, or what its files take when
// more). So TotalBytes - UsableBytes is the sum of the PartitionSizes plus
// the reserve for the metadata files. kafka-log-dirs.sh and `eddy topics
// --describe` show these.
#include <algorithm>
#include <limits>

#include "broker/broker.h"
#include "protocol/errors.h"

namespace eddy::broker {

namespace {

using Response = protocol::DescribeLogDirsResponse;

int64_t as_int64(uint64_t bytes) {
  return static_cast<int64_t>(std::min<uint64_t>(bytes, std::numeric_limits<int64_t>::max()));
}

// The partitions of topic named in wanted (every one when wanted is null),
// in partition order; partitions the topic does not have are left out, as
// Kafka leaves out what it does not host.
Response::DescribeLogDirsTopic describe(const Topic& topic, const std::vector<int32_t>* wanted) {
  Response::DescribeLogDirsTopic out;
  out.name = topic.name;
  for (size_t p = 0; p < topic.partitions.size(); ++p) {
    const int32_t index = static_cast<int32_t>(p);
    if (wanted != nullptr && std::find(wanted->begin(), wanted->end(), index) == wanted->end()) continue;
    if (topic.partitions[p] == nullptr) continue;  // held by other nodes
    const storage::PartitionLog& log = *topic.partitions[p];
    Response::DescribeLogDirsPartition d;
    d.partition_index = index;
    d.partition_size = as_int64(log.budget_charge());
    d.offset_lag = std::max<int64_t>(0, log.log_end_offset() - log.high_watermark());
    d.is_future_key = false;
    out.partitions.push_back(std::move(d));
  }
  return out;
}

}  // namespace

void Broker::handle_describe_log_dirs(RequestPtr request) {
  protocol::DescribeLogDirsRequest body;
  if (!decode(*request, &body)) return;
  if (!authorized_on_cluster(*request, security::AclOperation::kDescribe)) {
    Response refused;  // no directories; the error from v3 on, as Kafka
    refused.error_code = protocol::to_int(protocol::ErrorCode::kClusterAuthorizationFailed);
    respond(*request, refused);
    return;
  }
  Response::DescribeLogDirsResult dir;
  dir.log_dir = logs_->directory();
  dir.total_bytes = as_int64(logs_->budget().limit_bytes());
  dir.usable_bytes = as_int64(logs_->budget().free_bytes());
  if (!body.topics.has_value()) {
    for (Topic* topic : topics_.all()) dir.topics.push_back(describe(*topic, nullptr));
  } else {
    for (const auto& wanted : *body.topics) {
      const Topic* topic = topics_.find(wanted.topic);
      if (topic != nullptr) dir.topics.push_back(describe(*topic, &wanted.partitions));
    }
  }
  Response response;
  response.results.push_back(std::move(dir));
  respond(*request, response);
}

}  // namespace eddy::broker

// Appends the batch a partition group's new leader writes at the start of
// its epoch (src/raft/README.md, "Partition groups") to a stopped broker's
// partition directory, so that test_leader_change_batches.py can show what
// every client of the test matrix makes of it. KIND is
//   control  KRaft's LeaderChange control batch (LEADER_ID and the VOTERs in
//            its LeaderChangeMessage), or
//   empty    a data batch of no records spanning one offset (what Kafka's
//            compaction leaves of a batch whose records all went).
//
//   append_leader_change PARTITION_DIR SEGMENT_BYTES EPOCH KIND LEADER_ID VOTER...
//
// SEGMENT_BYTES must be the topic's segment.bytes. Prints the batch's offset.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "port/port.h"
#include "protocol/control_batch.h"
#include "protocol/record_batch.h"
#include "raft/kafka_entries.h"
#include "storage/flusher.h"
#include "storage/log_config.h"
#include "storage/partition_log.h"

namespace {

int fail(const std::string& what) {
  std::fprintf(stderr, "append_leader_change: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace eddy;
  if (argc < 7) return fail("usage: append_leader_change PARTITION_DIR SEGMENT_BYTES EPOCH KIND LEADER_ID VOTER...");
  storage::LogConfig config;
  config.segment_bytes = std::strtoull(argv[2], nullptr, 10);
  const auto epoch = static_cast<int32_t>(std::strtol(argv[3], nullptr, 10));
  const std::string kind = argv[4];
  if (kind != "control" && kind != "empty") return fail("KIND must be control or empty");
  const auto leader = static_cast<raft::NodeId>(std::strtol(argv[5], nullptr, 10));
  std::vector<raft::NodeId> voters;
  for (int i = 6; i < argc; ++i) voters.push_back(static_cast<raft::NodeId>(std::strtol(argv[i], nullptr, 10)));
  Status s = storage::validate(config);
  if (!s.ok()) return fail(s.message());

  storage::Flusher flusher;
  flusher.start();
  std::unique_ptr<storage::PartitionLog> log;
  s = storage::PartitionLog::open(argv[1], config, &flusher, &log);
  if (!s.ok()) return fail(s.message());
  const int64_t now = port::wall_clock_millis();
  std::vector<uint8_t> batch = kind == "empty" ? protocol::build_empty_batch(now)
                                               : protocol::build_leader_change_batch(
                                                     raft::leader_change_message(leader, voters), now);
  storage::AppendOptions options;
  options.leader_epoch = epoch;
  storage::AppendResult result;
  s = log->append(batch, options, &result);
  if (s.ok()) s = log->close();
  flusher.stop();
  if (!s.ok()) return fail(s.message());
  std::printf("%lld\n", static_cast<long long>(result.base_offset));
  return 0;
}

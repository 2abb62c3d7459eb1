#include "broker/topic_config_defs.h"

#include <cstdint>

namespace eddy::broker {
namespace {

using T = TopicConfigType;
using U = TopicConfigUse;

constexpr int64_t kLongMax = INT64_MAX;
constexpr int64_t kIntMax = INT32_MAX;

const char* const kNoCompaction = "Eddy does not compact logs; with cleanup.policy=delete this has no effect.";
const char* const kNoTiered = "Eddy has no tiered storage; without remote.storage.enable this has no effect.";
const char* const kNoReplicas = "A single Eddy node has no followers; this has no effect.";

// Sorted by name: DescribeConfigs lists them in this order, as Kafka does.
const std::vector<TopicConfigDef>& table() {
  static const std::vector<TopicConfigDef> kDefs = {
      {"cleanup.policy", T::kList, "delete", "log.cleanup.policy", U::kOnly, 0, 0, {"compact", "delete"}, {"delete"},
       "Eddy does not compact logs: cleanup.policy must be delete", true,
       "How old segments are removed: Eddy recycles them by retention.bytes / retention.ms (delete)."},
      {"compression.gzip.level", T::kInt, "-1", "compression.gzip.level", U::kNoEffect, -1, 9, {}, {}, nullptr, true,
       "Only used when the broker re-compresses; Eddy never does (compression.type=producer)."},
      {"compression.lz4.level", T::kInt, "9", "compression.lz4.level", U::kNoEffect, 1, 17, {}, {}, nullptr, true,
       "Only used when the broker re-compresses; Eddy never does (compression.type=producer)."},
      {"compression.type", T::kString, "producer", "compression.type", U::kOnly, 0, 0,
       {"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}, {"producer"},
       "Eddy stores batches exactly as the producer compressed them (zero-copy reads) and never re-compresses: "
       "compression.type must be producer",
       true, "Batches are stored as the producer compressed them."},
      {"compression.zstd.level", T::kInt, "3", "compression.zstd.level", U::kNoEffect, -131072, 22, {}, {}, nullptr,
       true, "Only used when the broker re-compresses; Eddy never does (compression.type=producer)."},
      {"delete.retention.ms", T::kLong, "86400000", "log.cleaner.delete.retention.ms", U::kNoEffect, 0, kLongMax, {},
       {}, nullptr, true, kNoCompaction},
      {"eddy.acks.all.waits.for", T::kString, "disk", "eddy.acks.all.waits.for", U::kHonoured, 0, 0,
       {"disk", "page-cache"}, {}, nullptr, true,
       "What an acks=all Produce waits for: disk (fdatasync) or page-cache (the write)."},
      {"eddy.full.policy", T::kString, "drop-oldest", "eddy.full.policy", U::kHonoured, 0, 0,
       {"drop-oldest", "reject"}, {}, nullptr, true,
       "When the budget is full and the oldest data is pinned: drop-oldest recycles it, reject refuses new batches."},
      {"errors.deadletterqueue.group.enable", T::kBoolean, "false", "", U::kNoEffect, 0, 0, {}, {}, nullptr, true,
       "Dead-letter queues of share and streams groups; Eddy has neither."},
      {"file.delete.delay.ms", T::kLong, "60000", "log.segment.delete.delay.ms", U::kNoEffect, 0, kLongMax, {}, {},
       nullptr, true, "Eddy recycles segment files in place instead of deleting them."},
      {"flush.messages", T::kLong, "9223372036854775807", "log.flush.interval.messages", U::kHonoured, 1, kLongMax,
       {}, {}, nullptr, true, "fdatasync the partition after this many messages."},
      {"flush.ms", T::kLong, "9223372036854775807", "log.flush.interval.ms", U::kHonoured, 0, kLongMax, {}, {},
       nullptr, true, "fdatasync the partition at least this often."},
      {"follower.replication.throttled.replicas", T::kList, "", "", U::kNoEffect, 0, 0, {}, {}, nullptr, true,
       kNoReplicas},
      {"index.interval.bytes", T::kInt, "4096", "log.index.interval.bytes", U::kHonoured, 0, kIntMax, {}, {}, nullptr,
       true, "Bytes between two entries of the sparse offset index."},
      {"leader.replication.throttled.replicas", T::kList, "", "", U::kNoEffect, 0, 0, {}, {}, nullptr, true,
       kNoReplicas},
      {"local.retention.bytes", T::kLong, "-2", "log.local.retention.bytes", U::kNoEffect, -2, kLongMax, {}, {},
       nullptr, true, kNoTiered},
      {"local.retention.ms", T::kLong, "-2", "log.local.retention.ms", U::kNoEffect, -2, kLongMax, {}, {}, nullptr,
       true, kNoTiered},
      {"max.compaction.lag.ms", T::kLong, "9223372036854775807", "log.cleaner.max.compaction.lag.ms", U::kNoEffect, 1,
       kLongMax, {}, {}, nullptr, true, kNoCompaction},
      {"max.decompressed.message.bytes", T::kInt, "2147483639", "max.decompressed.message.bytes", U::kHonoured, 0,
       kIntMax, {}, {}, nullptr, true,
       "Largest record of a compressed batch, decompressed (INVALID_RECORD); the whole batch is bounded by "
       "eddy.max.decompressed.batch.bytes."},
      {"max.message.bytes", T::kInt, "1048588", "message.max.bytes", U::kHonoured, 0, kIntMax, {}, {}, nullptr, true,
       "Largest record batch a Produce may append (after compression)."},
      {"message.downconversion.enable", T::kBoolean, "true", "log.message.downconversion.enable", U::kNoEffect, 0, 0,
       {}, {}, nullptr, false, "Kafka 3.x only; Eddy serves record batches v2 only and never converts."},
      {"message.format.version", T::kString, "3.0-IV1", "log.message.format.version", U::kNoEffect, 0, 0, {}, {},
       nullptr, false, "Kafka 3.x only, ignored from 3.0 on; Eddy stores record batches v2."},
      {"message.timestamp.after.max.ms", T::kLong, "3600000", "log.message.timestamp.after.max.ms", U::kHonoured, 0,
       kLongMax, {}, {}, nullptr, true,
       "With CreateTime, a batch whose newest timestamp is further ahead of the broker's clock is refused "
       "(INVALID_TIMESTAMP)."},
      {"message.timestamp.before.max.ms", T::kLong, "9223372036854775807", "log.message.timestamp.before.max.ms",
       U::kHonoured, 0, kLongMax, {}, {}, nullptr, true,
       "With CreateTime, a record whose timestamp is further behind the broker's clock is refused "
       "(INVALID_TIMESTAMP, with record_errors)."},
      {"message.timestamp.difference.max.ms", T::kLong, "9223372036854775807",
       "log.message.timestamp.difference.max.ms", U::kHonoured, 0, kLongMax, {}, {}, nullptr, false,
       "Kafka 3.x (replaced by message.timestamp.before/after.max.ms): stands for each of them not set itself."},
      {"message.timestamp.type", T::kString, "CreateTime", "log.message.timestamp.type", U::kHonoured, 0, 0,
       {"CreateTime", "LogAppendTime"}, {}, nullptr, true,
       "CreateTime keeps the producer's timestamps; LogAppendTime stamps batches on append."},
      {"min.cleanable.dirty.ratio", T::kDouble, "0.5", "log.cleaner.min.cleanable.ratio", U::kNoEffect, 0, 1, {}, {},
       nullptr, true, kNoCompaction},
      {"min.compaction.lag.ms", T::kLong, "0", "log.cleaner.min.compaction.lag.ms", U::kNoEffect, 0, kLongMax, {}, {},
       nullptr, true, kNoCompaction},
      {"min.insync.replicas", T::kInt, "1", "min.insync.replicas", U::kHonouredInCluster, 1, kIntMax, {}, {"1"},
       "A single Eddy node is the only replica of each partition: min.insync.replicas must be 1", true,
       "Replicas that must be in sync for acks=all to be accepted (NOT_ENOUGH_REPLICAS below it); a single node "
       "is the only replica of its partitions."},
      {"preallocate", T::kBoolean, "true", "", U::kOnly, 0, 0, {}, {"true"},
       "Eddy's segment files are always preallocated (a fixed disk budget): preallocate must be true", true,
       "Segment files are preallocated when created."},
      {"remote.copy.lag.bytes", T::kLong, "-1", "log.remote.copy.lag.bytes", U::kNoEffect, -1, kLongMax, {}, {},
       nullptr, true, kNoTiered},
      {"remote.copy.lag.ms", T::kLong, "0", "log.remote.copy.lag.ms", U::kNoEffect, 0, kLongMax, {}, {}, nullptr, true,
       kNoTiered},
      {"remote.log.copy.disable", T::kBoolean, "false", "", U::kNoEffect, 0, 0, {}, {}, nullptr, true, kNoTiered},
      {"remote.log.delete.on.disable", T::kBoolean, "false", "", U::kNoEffect, 0, 0, {}, {}, nullptr, true, kNoTiered},
      {"remote.storage.enable", T::kBoolean, "false", "", U::kOnly, 0, 0, {}, {"false"},
       "Eddy has no tiered storage: remote.storage.enable must be false", true, kNoTiered},
      {"retention.bytes", T::kLong, "-1", "log.retention.bytes", U::kHonoured, -1, kLongMax, {}, {}, nullptr, true,
       "Bytes the partition keeps, in whole segments (at least 2); -1: no limit of its own, only the disk "
       "budget (eddy.disk.budget.bytes)."},
      {"retention.ms", T::kLong, "604800000", "log.retention.ms", U::kHonoured, -1, kLongMax, {}, {}, nullptr, true,
       "Closed segments whose newest record is older are recycled; -1: no limit."},
      {"segment.bytes", T::kInt, "16777216", "log.segment.bytes", U::kHonoured, 64 * 1024, kIntMax, {}, {}, nullptr,
       true, "Size of each preallocated segment file."},
      {"segment.index.bytes", T::kInt, "10485760", "log.index.size.max.bytes", U::kNoEffect, 4, kIntMax, {}, {},
       nullptr, true, "Eddy's sparse index lives in memory and grows with the segment."},
      {"segment.jitter.ms", T::kLong, "0", "log.roll.jitter.ms", U::kNoEffect, 0, kLongMax, {}, {}, nullptr, true,
       "Eddy rolls segments when they are full, not by time."},
      {"segment.ms", T::kLong, "604800000", "log.roll.ms", U::kOnly, 1, kLongMax, {}, {"604800000"},
       "Eddy rolls a segment when its preallocated file is full, not by time: only the default 604800000 is accepted",
       true, "Eddy rolls segments when they are full."},
      {"unclean.leader.election.enable", T::kBoolean, "false", "unclean.leader.election.enable", U::kNoEffect, 0, 0,
       {}, {}, nullptr, true, kNoReplicas},
  };
  return kDefs;
}

}  // namespace

std::span<const TopicConfigDef> topic_config_defs() { return table(); }

const TopicConfigDef* find_topic_config_def(const std::string& name) {
  for (const auto& d : table()) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

}  // namespace eddy::broker

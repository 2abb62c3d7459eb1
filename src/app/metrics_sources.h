// What the metrics listener reads, gathered on the reactor thread when a
// scrape (/metrics or /status.json) arrives: the broker (topics, partitions,
// request counters), the Kafka listeners' connection counts, the disk budget
// and the flusher, the forwarder's link status and its sampled history.
// Every scrape reads live state; only the committed offsets of the consumer
// groups are kept between scrapes, read again when eddy.db changed
// (committed_offsets_cache.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "port/status.h"

namespace eddy::broker {
class Broker;
}
namespace eddy::net {
class Server;
class HttpServer;
}
namespace eddy::storage {
class LogManager;
}
namespace eddy::forward {
class Forwarder;
}

namespace eddy::app {

class LinkHistory;
class ControllerQuorum;
class CommittedOffsetsCache;

struct MetricsSources {
  broker::Broker* broker = nullptr;
  const net::Server* server = nullptr;
  const storage::LogManager* logs = nullptr;
  const forward::Forwarder* forwarder = nullptr;
  const LinkHistory* history = nullptr;     // may be null
  const net::HttpServer* http = nullptr;    // the metrics listener itself; may be null
  const ControllerQuorum* quorum = nullptr; // a cluster node's controller quorum; null on a single node

  // The running broker's parts, once they are up.
  void set(broker::Broker* b, const net::Server* srv, const storage::LogManager* l, const forward::Forwarder* f,
           const ControllerQuorum* q) {
    broker = b;
    server = srv;
    logs = l;
    forwarder = f;
    quorum = q;
  }
  CommittedOffsetsCache* committed_offsets = nullptr;  // the listener's copy; null: read the store every time
  int64_t started_wall_ms = 0;              // when the broker started
  int64_t started_monotonic_ms = 0;
  int64_t history_sample_ms = 0;            // eddy.metrics.history.sample.ms
};

// One committed offset of a consumer group against its partition's end.
struct GroupPartitionLag {
  std::string group;
  std::string topic;
  int32_t partition = 0;
  int64_t committed = -1;
  int64_t end_offset = -1;  // the high watermark; -1 when the partition is gone
  int64_t lag = 0;          // max(0, end_offset - committed); 0 when the partition is gone
};

// Every committed offset in the meta store (groups sorted, then topic and
// partition) against the partition's high watermark now. The offsets come
// from src.committed_offsets, which reads SQLite only when eddy.db changed
// since the last scrape. The meta store's error when it cannot be read
// (*out then holds the groups read before it).
Status collect_group_lag(const MetricsSources& src, std::vector<GroupPartitionLag>* out);

}  // namespace eddy::app

// A blocking producer: records are batched per partition (RecordAccumulator);
// full batches wait until some partition fills a second one and then go out
// together, one request per leader carrying one batch per partition (fewer
// requests: with acks=all each costs the broker a disk sync). Up to
// max_in_flight requests are pipelined per connection. flush() sends
// everything and waits for every acknowledgement. Every batch ends in exactly one
// DeliveryReport. Call flush() before destroying the producer: batches not
// yet acknowledged then are dropped without a report.
//
// Partitioning: an explicit partition; else murmur2 of the key (as Kafka's
// clients); else, for null keys, one partition per batch, moving on when a
// batch is sealed (Kafka's sticky partitioning).
//
// Retries: a batch the broker refuses with a retriable error (leader moved,
// not available, timeout) or that is lost with the connection is sent again
// by flush(), after a metadata refresh, up to `retries` times. Without
// idempotence a batch lost with the connection may have been written, and a
// retried batch may land after a later one: delivery is at-least-once, as
// with Kafka's non-idempotent producer.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "client/client.h"
#include "client/record_accumulator.h"
#include "port/status.h"

namespace eddy::client {

struct ProducerOptions {
  int16_t acks = -1;  // 0, 1 or -1 (all)
  protocol::Compression compression = protocol::Compression::kNone;
  size_t batch_bytes = 16384;
  int32_t broker_timeout_ms = 30000;  // ProduceRequest.timeout_ms
  int retries = 3;
  int64_t retry_backoff_ms = 100;
  bool allow_auto_create = true;  // topics the broker may create on first use
  // Pipelined Produce requests per connection. Deep enough that acks=all
  // requests share the broker's disk syncs (Eddy group-commits them; 5, as
  // in Kafka's clients, left the tools 4x slower). Their batches are kept
  // for retries: memory up to max_in_flight x batch_bytes per broker.
  int max_in_flight = 32;
};

struct DeliveryReport {
  TopicPartition tp;
  int32_t record_count = 0;
  int64_t base_offset = -1;  // -1 with acks=0 and on failure
  Status status;
};

class Producer {
 public:
  Producer(Client* client, ProducerOptions options);

  // Called once per batch, from send() or flush().
  void on_delivery(std::function<void(const DeliveryReport&)> callback) { on_delivery_ = std::move(callback); }

  // Queues a record; sends batches that became full. partition < 0 lets the
  // partitioner choose. Fails (and queues nothing) when the topic does not
  // exist or the partition is out of range; failures of batches sent go to
  // delivery reports.
  Status send(std::string_view topic, int32_t partition, std::optional<std::span<const uint8_t>> key,
              std::optional<std::span<const uint8_t>> value, int64_t timestamp_ms);

  // Sends everything queued and waits for the acknowledgements.
  Status flush();

  // The topic's partition count, from metadata fetched on first use (which
  // creates the topic where the broker auto-creates topics and
  // allow_auto_create is set; a topic still being created is waited for).
  // kNotFound for an unknown topic.
  Status partition_count(std::string_view topic, int32_t* count);

  uint64_t records_delivered() const { return records_delivered_; }
  uint64_t records_failed() const { return records_failed_; }

 private:
  struct Queued {
    SealedBatch batch;
    int attempts = 0;
  };
  struct InFlight {
    BrokerConnection* conn;
    std::vector<Queued> batches;  // in the order of the request's partitions
  };

  // Sends batches to their partitions' leaders without waiting for the
  // answers (beyond keeping max_in_flight per connection).
  void dispatch(std::vector<Queued> batches);
  // Reads the answer to the oldest request in flight on conn.
  void complete_oldest(BrokerConnection* conn);
  // Completes every request in flight.
  void drain();
  // conn was closed: the requests in flight on it will not be answered.
  void abandon(BrokerConnection* conn, const Status& why);
  // A batch that failed: queued for flush() to retry, or reported.
  void retry_or_report(Queued queued, const Status& status);
  void report(const SealedBatch& batch, int64_t base_offset, const Status& status);

  Client* client_;
  ProducerOptions options_;
  RecordAccumulator accumulator_;
  std::function<void(const DeliveryReport&)> on_delivery_;
  std::map<std::string, int32_t, std::less<>> partition_counts_;
  std::map<std::string, int32_t, std::less<>> sticky_partition_;
  std::vector<Queued> ready_;        // full batches, at most one per partition
  std::deque<InFlight> in_flight_;  // oldest first
  std::vector<Queued> retry_;
  uint64_t records_delivered_ = 0;
  uint64_t records_failed_ = 0;
};

}  // namespace eddy::client

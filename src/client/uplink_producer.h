// The forwarder's producer: sends RecordBatches exactly as they are stored
// locally (compression kept, records untouched) to a Kafka cluster as an
// idempotent producer, rewriting only producerId, producerEpoch and
// baseSequence (and so the CRC). Kafka accepts one batch per partition per
// Produce request (v3+); several requests may be in flight per leader and
// the leader answers them in order.
//
// It decides nothing: which batch goes where, with which sequence, and what
// an error means is the caller's business (forward::Link).
// Not thread-safe: one thread uses an UplinkProducer, and its Client, at a time.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "client/client.h"
#include "port/status.h"

namespace eddy::client {

struct UplinkBatch {
  const std::string* topic = nullptr;  // remote topic name
  int32_t partition = 0;
  std::span<uint8_t> bytes;  // one whole RecordBatch v2; rewritten in place by send()
  int32_t base_sequence = 0;
  // The producer it goes out under (-1: the one set_identity() named).
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  uint64_t tag = 0;  // the caller's name for the batch, echoed in its outcome
};

struct UplinkOutcome {
  uint64_t tag = 0;
  // kOk, or kBrokerError with the partition's Kafka error (protocol::kafka_error()).
  // DUPLICATE_SEQUENCE_NUMBER counts as ok: the cluster already has the batch.
  Status status;
  int64_t remote_base_offset = -1;
};

struct UplinkOptions {
  int16_t acks = -1;  // -1 (all) or 1
  int32_t timeout_ms = 30000;  // the Produce request's timeout_ms
  int max_in_flight = 5;  // per leader; Kafka keeps 5 batches per producer and partition for dedup
};

class UplinkProducer {
 public:
  UplinkProducer(Client* client, UplinkOptions options) : client_(client), options_(options) {}

  // A new producer id and epoch from InitProducerId without a transactional
  // id (what an idempotent Kafka producer does at start).
  Status init_producer_id(int64_t* producer_id, int16_t* producer_epoch);
  void set_identity(int64_t producer_id, int16_t producer_epoch) {
    producer_id_ = producer_id;
    producer_epoch_ = producer_epoch;
  }

  // Rewrites each batch for this producer and its base_sequence and sends
  // them in one Produce request to node, without waiting.
  // REQUIRES: batches non-empty, at most one per (topic, partition), and
  // in_flight(node) < max_in_flight.
  Status send(int32_t node, const std::vector<UplinkBatch>& batches);
  size_t in_flight(int32_t node) const;
  // Nodes with requests in flight, in the order their oldest request was sent.
  std::vector<int32_t> busy_nodes() const;
  // Waits for the answer to node's oldest request and reports every batch
  // of it. A non-ok return (network, timeout, protocol) means no batch of
  // that request is known to be written; the connection is closed.
  Status receive(int32_t node, std::vector<UplinkOutcome>* outcomes);
  // Forgets every request in flight and closes the connections.
  void abandon();

 private:
  struct SentBatch {
    std::string topic;
    int32_t partition;
    uint64_t tag;
  };
  struct InFlight {
    uint64_t sequence;  // send order across nodes
    std::vector<SentBatch> batches;
  };

  Client* client_;
  UplinkOptions options_;
  int64_t producer_id_ = -1;
  int16_t producer_epoch_ = -1;
  uint64_t next_request_ = 0;
  std::map<int32_t, std::deque<InFlight>> in_flight_;
};

}  // namespace eddy::client

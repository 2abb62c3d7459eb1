// A one-node central Kafka cluster for link tests, over the client tests'
// in-memory FakeBroker (tests/unit/client/fake_broker.h): Metadata names
// the topics it has (every partition led by node 1), InitProducerId hands
// out producer ids, and Produce deduplicates per producer and partition by
// sequence, as Kafka does: the next sequence is written, an older one is a
// duplicate, a gap is out of order. Told to, it cuts the connection at a
// Produce request: that request and the later ones are written but not
// answered (the link's read fails) until the link reconnects (its next
// Metadata request). ListOffsets (latest) and Fetch read back what it
// wrote (the link looks there for batches it never saw acknowledged), each
// batch as the link sent it with the base offset it got here.
//
// Handlers run on the link's thread; what they keep is read under a lock.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "client/transport.h"
#include "protocol/errors.h"
#include "fake_broker.h"

namespace eddy::forward::testing {

class FakeCentral {
 public:
  // One batch as the central cluster received it.
  struct Received {
    std::string topic;
    int32_t partition = 0;
    int64_t local_base_offset = 0;  // the edge offset of its first record
    int32_t records = 0;
    int64_t producer_id = -1;
    int16_t producer_epoch = -1;
    int32_t base_sequence = -1;
    bool written = false;   // appended (false: a duplicate or refused)
    bool answered = false;  // the request was answered
    bool transactional = false;  // the batch's attribute bits
    bool control = false;
    bool crc_ok = false;
  };

  FakeCentral();

  void add_topic(const std::string& name, int32_t partitions);
  client::TransportFactory transport_factory() { return broker_.factory(); }
  // Produce request number n (1: the first) and the later ones until the
  // next Metadata request are written but not answered.
  void cut_at_produce_request(int n);
  // The next n batches are refused with error (not written).
  void refuse_batches(protocol::ErrorCode error, int n);
  // Connections are refused (set before the link starts).
  void refuse_connections(bool refuse) { broker_.refuse_connections = refuse; }
  // Fetch answers TOPIC_AUTHORIZATION_FAILED (a user that may write, not read).
  void refuse_reads(bool refuse);
  // Forgets every producer's sequences and from now on, as Kafka 4 does,
  // takes any sequence from a producer it holds no state for as new data.
  void forget_producers();
  // The same, when the link reconnects after the cut (cut_at_produce_request).
  void forget_producers_after_the_cut() { forget_after_cut_ = true; }

  std::vector<Received> received() const;
  // Local base offsets of the batches written to topic-partition, in order.
  std::vector<int64_t> written(const std::string& topic, int32_t partition) const;
  int produce_requests() const;
  int init_producer_id_requests() const;

 private:
  void produce(const protocol::ParsedRequestHeader& h, std::span<const uint8_t> frame, protocol::OutputBuffer* out);
  void fetch(const protocol::ParsedRequestHeader& h, std::span<const uint8_t> frame, protocol::OutputBuffer* out);

  client::testing::FakeBroker broker_;
  mutable std::mutex mu_;
  std::map<std::string, int32_t> topics_;
  int cut_at_ = 0;
  protocol::ErrorCode refuse_with_ = protocol::ErrorCode::kNone;
  int refuse_ = 0;
  bool cut_ = false;
  int produce_requests_ = 0;
  int init_producer_id_requests_ = 0;
  int64_t next_producer_id_ = 1000;
  std::vector<Received> received_;
  // (topic, partition, producer id) -> next sequence expected
  std::map<std::tuple<std::string, int32_t, int64_t>, int32_t> next_sequence_;
  std::map<std::pair<std::string, int32_t>, int64_t> log_end_;
  // What was written, per partition: each batch with its central base offset.
  std::map<std::pair<std::string, int32_t>, std::vector<std::vector<uint8_t>>> log_;
  bool refuse_reads_ = false;
  bool any_sequence_from_unknown_ = false;
  bool forget_after_cut_ = false;
};

}  // namespace eddy::forward::testing

#include "forward/central_log.h"

#include "protocol/errors.h"
#include "protocol/generated/fetch.h"
#include "protocol/generated/list_offsets.h"
#include "protocol/record_batch.h"

namespace eddy::forward {

using protocol::ErrorCode;

namespace {

std::string name_of(const std::string& topic, int32_t partition) { return topic + "-" + std::to_string(partition); }

}  // namespace

Status central_end_offsets(client::Client* client, int32_t node, std::vector<EndOffsetQuery>* queries) {
  protocol::ListOffsetsResponse response;
  Status s = client->call<protocol::ListOffsetsRequest>(
      node,
      [&](protocol::ListOffsetsRequest& request, int16_t) {
        request.replica_id = -1;
        request.isolation_level = 0;
        for (const EndOffsetQuery& q : *queries) {
          if (request.topics.empty() || request.topics.back().name != q.topic) {
            request.topics.emplace_back();
            request.topics.back().name = q.topic;
          }
          protocol::ListOffsetsRequest::ListOffsetsPartition p;
          p.partition_index = q.partition;
          p.timestamp = q.timestamp;
          request.topics.back().partitions.push_back(p);
        }
      },
      &response);
  if (!s.ok()) return s.with_context("ListOffsets from node " + std::to_string(node));
  for (EndOffsetQuery& q : *queries) {
    q.status = Status::error(Status::Code::kProtocol,
                             "the ListOffsets answer does not mention " + name_of(q.topic, q.partition));
    for (const auto& t : response.topics) {
      if (t.name != q.topic) continue;
      for (const auto& p : t.partitions) {
        if (p.partition_index != q.partition) continue;
        if (p.error_code != 0) {
          q.status = protocol::broker_error(p.error_code, "ListOffsets of " + name_of(q.topic, q.partition));
        } else {
          q.status = Status();
          q.end = p.offset;
        }
      }
    }
  }
  return Status();
}

Status read_central_batches(client::Client* client, int32_t node, const std::string& topic, int32_t partition,
                            int64_t from, int32_t max_bytes, std::vector<CentralBatch>* out, int64_t* next,
                            size_t* bytes) {
  out->clear();
  *next = from;
  *bytes = 0;
  protocol::FetchResponse response;
  Status s = client->call<protocol::FetchRequest>(
      node,
      [&](protocol::FetchRequest& request, int16_t) {
        request.replica_id = -1;
        request.max_wait_ms = 0;
        request.min_bytes = 0;
        request.max_bytes = max_bytes;
        request.isolation_level = 0;  // read uncommitted: every batch written
        request.session_id = 0;
        request.session_epoch = -1;  // a full fetch, no session
        protocol::FetchRequest::FetchTopic t;
        t.topic = topic;
        protocol::FetchRequest::FetchPartition p;
        p.partition = partition;
        p.fetch_offset = from;
        p.partition_max_bytes = max_bytes;
        t.partitions.push_back(p);
        request.topics.push_back(std::move(t));
      },
      &response);
  if (!s.ok()) return s.with_context("Fetch of " + name_of(topic, partition));
  if (response.error_code != 0) return protocol::broker_error(response.error_code, "Fetch of " + name_of(topic, partition));
  for (const auto& t : response.responses) {
    if (t.topic != topic) continue;
    for (const auto& p : t.partitions) {
      if (p.partition_index != partition) continue;
      if (p.error_code == protocol::to_int(ErrorCode::kOffsetOutOfRange)) {
        return Status::error(Status::Code::kNotFound, name_of(topic, partition) + " on the central cluster has no offset " +
                                                          std::to_string(from));
      }
      if (p.error_code != 0) return protocol::broker_error(p.error_code, "Fetch of " + name_of(topic, partition));
      if (!p.records) return Status();
      std::span<const uint8_t> records = p.records->bytes;
      *bytes = records.size();
      protocol::BatchIterator batches(records);
      protocol::RecordBatchView view;
      // A batch cut short by max_bytes ends the walk (it comes whole next time).
      while (batches.next(&view)) {
        if (view.last_offset() < from) continue;  // a batch that started before from
        CentralBatch b;
        b.base_offset = view.base_offset();
        b.last_offset_delta = view.last_offset_delta();
        b.producer_id = view.producer_id();
        b.producer_epoch = view.producer_epoch();
        b.base_sequence = view.base_sequence();
        b.crc = view.crc();
        out->push_back(b);
        *next = view.next_offset();
      }
      return Status();
    }
  }
  return Status::error(Status::Code::kProtocol, "the Fetch answer does not mention " + name_of(topic, partition));
}

}  // namespace eddy::forward

#include "fake_central.h"

#include <deque>

#include "forward/send_window.h"
#include "protocol/errors.h"
#include "protocol/generated/fetch.h"
#include "protocol/generated/init_producer_id.h"
#include "protocol/generated/list_offsets.h"
#include "protocol/generated/metadata.h"
#include "protocol/generated/produce.h"
#include "protocol/record_batch.h"

namespace eddy::forward::testing {

using protocol::ErrorCode;

namespace {

// The edge offset of the batch's first record: the uplink producer zeroes
// the base offset field, the values are "<topic>-<partition>:<offset>"
// (LocalSide::append).
int64_t local_offset_of(const protocol::RecordBatchView& batch) {
  protocol::RecordIterator records(batch);
  protocol::Record first;
  if (!records.next(&first) || !first.value) return -1;
  std::string value(reinterpret_cast<const char*>(first.value->data()), first.value->size());
  size_t colon = value.rfind(':');
  return colon == std::string::npos ? -1 : std::stoll(value.substr(colon + 1));
}

}  // namespace

FakeCentral::FakeCentral() {
  broker_.on<protocol::MetadataRequest, protocol::MetadataResponse>([this](const protocol::MetadataRequest& request,
                                                                           int16_t) {
    std::lock_guard<std::mutex> lock(mu_);
    if (cut_ && forget_after_cut_) {
      next_sequence_.clear();
      any_sequence_from_unknown_ = true;
    }
    cut_ = false;  // the link reconnected
    protocol::MetadataResponse r;
    r.brokers.push_back({1, "central", 9092, std::nullopt, {}});
    r.controller_id = 1;
    std::vector<std::string> names;
    if (request.topics) {
      for (const auto& t : *request.topics) names.push_back(t.name.value_or(""));
    } else {
      for (const auto& [name, count] : topics_) names.push_back(name);
    }
    for (const std::string& name : names) {
      protocol::MetadataResponse::MetadataResponseTopic t;
      t.name = name;
      auto it = topics_.find(name);
      if (it == topics_.end()) {
        t.error_code = protocol::to_int(ErrorCode::kUnknownTopicOrPartition);
      } else {
        for (int32_t p = 0; p < it->second; ++p) {
          protocol::MetadataResponse::MetadataResponsePartition part;
          part.partition_index = p;
          part.leader_id = 1;
          part.replica_nodes = {1};
          part.isr_nodes = {1};
          t.partitions.push_back(part);
        }
      }
      r.topics.push_back(t);
    }
    return r;
  });
  broker_.on<protocol::InitProducerIdRequest, protocol::InitProducerIdResponse>(
      [this](const protocol::InitProducerIdRequest&, int16_t) {
        std::lock_guard<std::mutex> lock(mu_);
        ++init_producer_id_requests_;
        protocol::InitProducerIdResponse r;
        r.producer_id = next_producer_id_++;
        r.producer_epoch = 0;
        return r;
      });
  broker_.on<protocol::ListOffsetsRequest, protocol::ListOffsetsResponse>(
      [this](const protocol::ListOffsetsRequest& request, int16_t) {
        std::lock_guard<std::mutex> lock(mu_);
        protocol::ListOffsetsResponse r;
        for (const auto& t : request.topics) {
          protocol::ListOffsetsResponse::ListOffsetsTopicResponse tr;
          tr.name = t.name;
          for (const auto& p : t.partitions) {
            protocol::ListOffsetsResponse::ListOffsetsPartitionResponse pr;
            pr.partition_index = p.partition_index;
            pr.offset = p.timestamp == -1 ? log_end_[{t.name, p.partition_index}] : 0;
            tr.partitions.push_back(pr);
          }
          r.topics.push_back(tr);
        }
        return r;
      });
  broker_.on_raw(protocol::FetchRequest::kApiKey,
                 [this](const protocol::ParsedRequestHeader& h, std::span<const uint8_t> frame,
                        protocol::OutputBuffer* out) { fetch(h, frame, out); });
  broker_.on_raw(protocol::ProduceRequest::kApiKey,
                 [this](const protocol::ParsedRequestHeader& h, std::span<const uint8_t> frame,
                        protocol::OutputBuffer* out) { produce(h, frame, out); });
}

void FakeCentral::add_topic(const std::string& name, int32_t partitions) {
  std::lock_guard<std::mutex> lock(mu_);
  topics_[name] = partitions;
}

void FakeCentral::cut_at_produce_request(int n) {
  std::lock_guard<std::mutex> lock(mu_);
  cut_at_ = n;
}

void FakeCentral::refuse_batches(ErrorCode error, int n) {
  std::lock_guard<std::mutex> lock(mu_);
  refuse_with_ = error;
  refuse_ = n;
}

void FakeCentral::refuse_reads(bool refuse) {
  std::lock_guard<std::mutex> lock(mu_);
  refuse_reads_ = refuse;
}

void FakeCentral::forget_producers() {
  std::lock_guard<std::mutex> lock(mu_);
  next_sequence_.clear();
  any_sequence_from_unknown_ = true;
}

void FakeCentral::fetch(const protocol::ParsedRequestHeader& h, std::span<const uint8_t> frame,
                        protocol::OutputBuffer* out) {
  protocol::FetchRequest request;
  if (!protocol::decode_request_body(frame, h, &request).ok()) return;
  std::lock_guard<std::mutex> lock(mu_);
  protocol::FetchResponse response;
  std::deque<std::vector<uint8_t>> records;  // what the response's views point at (stable)
  for (const auto& t : request.topics) {
    protocol::FetchResponse::FetchableTopicResponse tr;
    tr.topic = t.topic;
    for (const auto& p : t.partitions) {
      protocol::FetchResponse::PartitionData pd;
      pd.partition_index = p.partition;
      pd.high_watermark = log_end_[{t.topic, p.partition}];
      if (refuse_reads_) {
        pd.error_code = protocol::to_int(ErrorCode::kTopicAuthorizationFailed);
      } else {
        std::vector<uint8_t>& bytes = records.emplace_back();
        for (const std::vector<uint8_t>& batch : log_[{t.topic, p.partition}]) {
          protocol::RecordBatchView view;
          if (protocol::RecordBatchView::parse(batch, &view) != protocol::BatchError::kOk) continue;
          if (view.last_offset() < p.fetch_offset) continue;
          if (!bytes.empty() && bytes.size() + batch.size() > static_cast<size_t>(p.partition_max_bytes)) break;
          bytes.insert(bytes.end(), batch.begin(), batch.end());
        }
        pd.records = protocol::Records{bytes, {}};
      }
      tr.partitions.push_back(std::move(pd));
    }
    response.responses.push_back(std::move(tr));
  }
  Status s = protocol::encode_response_frame(response, h.header.request_api_version, h.header.correlation_id, out);
  if (!s.ok()) out->clear();
}

void FakeCentral::produce(const protocol::ParsedRequestHeader& h, std::span<const uint8_t> frame,
                          protocol::OutputBuffer* out) {
  protocol::ProduceRequest request;
  if (!protocol::decode_request_body(frame, h, &request).ok()) return;
  std::lock_guard<std::mutex> lock(mu_);
  ++produce_requests_;
  if (produce_requests_ == cut_at_) cut_ = true;
  const bool answer = !cut_;
  protocol::ProduceResponse response;
  for (const auto& topic : request.topic_data) {
    protocol::ProduceResponse::TopicProduceResponse tr;
    tr.name = topic.name;
    for (const auto& pd : topic.partition_data) {
      protocol::ProduceResponse::PartitionProduceResponse pr;
      pr.index = pd.index;
      protocol::RecordBatchView batch;
      if (!pd.records || protocol::RecordBatchView::parse(pd.records->bytes, &batch) != protocol::BatchError::kOk) {
        pr.error_code = protocol::to_int(ErrorCode::kCorruptMessage);
        tr.partition_responses.push_back(pr);
        continue;
      }
      Received got{topic.name,           pd.index,          local_offset_of(batch), batch.record_count(),
                   batch.producer_id(), batch.producer_epoch(), batch.base_sequence(), false, answer};
      got.transactional = batch.is_transactional();
      got.control = batch.is_control();
      got.crc_ok = batch.crc_matches();
      const auto producer = std::make_tuple(topic.name, pd.index, batch.producer_id());
      if (any_sequence_from_unknown_ && !next_sequence_.contains(producer)) {
        next_sequence_[producer] = got.base_sequence;  // Kafka 4: no state, any sequence
      }
      int32_t& expected = next_sequence_[producer];
      int64_t& end = log_end_[{topic.name, pd.index}];
      if (refuse_ > 0) {
        --refuse_;
        pr.error_code = protocol::to_int(refuse_with_);
      } else if (got.base_sequence == expected) {
        got.written = true;
        pr.base_offset = end;
        std::vector<uint8_t> stored(pd.records->bytes.begin(), pd.records->bytes.end());
        protocol::set_base_offset(stored, end);
        log_[{topic.name, pd.index}].push_back(std::move(stored));
        end += got.records;
        expected = increment_sequence(expected, got.records);
      } else if (got.base_sequence < expected) {
        pr.error_code = protocol::to_int(ErrorCode::kDuplicateSequenceNumber);
      } else {
        pr.error_code = protocol::to_int(ErrorCode::kOutOfOrderSequenceNumber);
      }
      received_.push_back(got);
      tr.partition_responses.push_back(pr);
    }
    response.responses.push_back(tr);
  }
  if (answer) {
    Status s = protocol::encode_response_frame(response, h.header.request_api_version, h.header.correlation_id, out);
    if (!s.ok()) out->clear();  // no answer: the test sees a timeout
  }
}

std::vector<FakeCentral::Received> FakeCentral::received() const {
  std::lock_guard<std::mutex> lock(mu_);
  return received_;
}

std::vector<int64_t> FakeCentral::written(const std::string& topic, int32_t partition) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<int64_t> out;
  for (const Received& r : received_) {
    if (r.written && r.topic == topic && r.partition == partition) out.push_back(r.local_base_offset);
  }
  return out;
}

int FakeCentral::produce_requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return produce_requests_;
}

int FakeCentral::init_producer_id_requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return init_producer_id_requests_;
}

}  // namespace eddy::forward::testing

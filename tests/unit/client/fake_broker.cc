#include "fake_broker.h"

#include <algorithm>
#include <cstring>
#include <deque>

#include "protocol/errors.h"
#include "protocol/record_batch.h"

namespace eddy::client::testing {

namespace {

class FakeTransport final : public Transport {
 public:
  explicit FakeTransport(FakeBroker* broker) : broker_(broker) {}

  Status connect(const BrokerAddress& address, Deadline) override {
    broker_->connects.push_back(address);
    if (broker_->refuse_connections) {
      open_ = false;
      return Status::error(Status::Code::kNetwork, "connection refused");
    }
    open_ = true;
    inbound_.clear();
    pending_.clear();
    unread_.clear();
    return Status();
  }

  Status write_all(std::span<const uint8_t> bytes, Deadline) override {
    if (!open_) return Status::error(Status::Code::kNetwork, "not connected");
    pending_.insert(pending_.end(), bytes.begin(), bytes.end());
    while (pending_.size() >= 4) {
      uint32_t size = protocol::load_be32(pending_.data());
      if (pending_.size() < 4 + size) break;
      std::vector<uint8_t> frame(pending_.begin() + 4, pending_.begin() + 4 + size);
      pending_.erase(pending_.begin(), pending_.begin() + 4 + size);
      protocol::OutputBuffer out;
      broker_->handle(frame, &out);
      inbound_.insert(inbound_.end(), out.memory(), out.memory() + out.memory_size());
      if (out.memory_size() > 0) unread_.push_back(out.memory_size());
      broker_->max_unread_answers = std::max(broker_->max_unread_answers, unread_.size());
    }
    return Status();
  }

  Status read_exact(std::span<uint8_t> into, Deadline) override {
    if (!open_) return Status::error(Status::Code::kNetwork, "not connected");
    if (inbound_.size() < into.size()) {
      open_ = false;
      return Status::error(Status::Code::kTimeout, "waiting for the fake broker timed out");
    }
    std::copy(inbound_.begin(), inbound_.begin() + static_cast<long>(into.size()), into.begin());
    inbound_.erase(inbound_.begin(), inbound_.begin() + static_cast<long>(into.size()));
    for (size_t left = into.size(); left > 0 && !unread_.empty();) {
      size_t take = std::min(left, unread_.front());
      unread_.front() -= take;
      left -= take;
      if (unread_.front() == 0) unread_.pop_front();
    }
    return Status();
  }

  void close() override { open_ = false; }
  bool is_open() const override { return open_; }

 private:
  FakeBroker* broker_;
  bool open_ = false;
  std::vector<uint8_t> pending_;
  std::deque<uint8_t> inbound_;
  std::deque<size_t> unread_;  // bytes left of each answer not yet read
};

}  // namespace

FakeBroker::FakeBroker() {
  for (const auto& api : protocol::codec_apis()) {
    protocol::ApiVersionsResponse::ApiVersion v;
    v.api_key = api.api_key;
    v.min_version = api.min_version;
    v.max_version = api.max_version;
    apis.push_back(v);
  }
  // ApiVersions as Kafka answers it (KIP-511 for versions it does not speak).
  on_raw(18, [this](const protocol::ParsedRequestHeader& h, std::span<const uint8_t>, protocol::OutputBuffer* out) {
    protocol::ApiVersionsResponse response;
    response.api_keys = apis;
    int16_t version = h.header.request_api_version;
    int16_t max = -1;
    for (const auto& v : apis) {
      if (v.api_key == 18) max = v.max_version;
    }
    if (version > max) {
      response.error_code = protocol::to_int(protocol::ErrorCode::kUnsupportedVersion);
      version = 0;
    }
    Status s = protocol::encode_response_frame(response, version, h.header.correlation_id, out);
    if (!s.ok()) out->clear();  // no answer: the test sees a timeout
  });
}

void FakeBroker::set_range(int16_t api_key, int16_t min, int16_t max) {
  for (auto& v : apis) {
    if (v.api_key == api_key) {
      v.min_version = min;
      v.max_version = max;
    }
  }
}

void FakeBroker::remove_api(int16_t api_key) {
  std::erase_if(apis, [&](const auto& v) { return v.api_key == api_key; });
}

std::unique_ptr<Transport> FakeBroker::transport() { return std::make_unique<FakeTransport>(this); }

void FakeBroker::handle(std::span<const uint8_t> frame, protocol::OutputBuffer* out) {
  protocol::ParsedRequestHeader h;
  if (!protocol::parse_request_header(frame, &h).ok()) return;
  requests.push_back({h.header.request_api_key, h.header.request_api_version, h.header.correlation_id});
  auto it = handlers_.find(h.header.request_api_key);
  if (it != handlers_.end()) it->second(h, frame, out);
}

}  // namespace eddy::client::testing

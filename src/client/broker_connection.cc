#include "client/broker_connection.h"

#include "protocol/record_batch.h"

#ifndef EDDY_CLIENT_VERSION
#define EDDY_CLIENT_VERSION "0"
#endif

namespace eddy::client {

BrokerConnection::BrokerConnection(std::unique_ptr<Transport> transport, ConnectionOptions options)
    : transport_(std::move(transport)), options_(std::move(options)), codec_(options_.client_id) {
  if (options_.software_version.empty()) options_.software_version = EDDY_CLIENT_VERSION;
}

std::string BrokerConnection::describe(const char* api, int16_t version) const {
  return std::string(api) + " v" + std::to_string(version) + " to " + address_.to_string();
}

Status BrokerConnection::fail(Status status) {
  close();
  return status;
}

void BrokerConnection::close() {
  transport_->close();
  codec_.reset();
  versions_.clear();
}

Status BrokerConnection::open(const BrokerAddress& address, Deadline deadline) {
  close();
  address_ = address;
  Status s = transport_->connect(address, deadline);
  if (!s.ok()) return s;
  ApiVersionsHandshake handshake;
  for (;;) {
    protocol::OutputBuffer out;
    s = codec_.encode(handshake.request(options_.software_name, options_.software_version), handshake.version(),
                      true, &out);
    if (!s.ok()) return fail(s);
    s = send_frame(out, deadline);
    if (!s.ok()) return s;
    PendingRequest answered;
    std::span<const uint8_t> body;
    s = receive(&answered, &body, deadline);
    if (!s.ok()) return s.with_context("ApiVersions to " + address_.to_string());
    switch (handshake.on_response(body, &versions_, &s)) {
      case ApiVersionsHandshake::Step::kDone: return options_.sasl ? authenticate(deadline) : Status();
      case ApiVersionsHandshake::Step::kRetry: continue;
      case ApiVersionsHandshake::Step::kFailed: return fail(s.with_context(address_.to_string()));
    }
  }
}

Status BrokerConnection::check_idle() {
  if (!transport_->is_open() || codec_.pending() != 0) return Status();
  Status s = transport_->check_idle();
  if (!s.ok()) {
    close();
    return s;
  }
  return s;
}

Status BrokerConnection::send_frame(const protocol::OutputBuffer& out, Deadline deadline) {
  if (out.has_file_regions()) {
    return Status::error(Status::Code::kInvalidArgument, "requests with file regions are not supported");
  }
  Status s = transport_->write_all({out.memory(), out.memory_size()}, deadline);
  return s.ok() ? s : fail(s);
}

Status BrokerConnection::receive(PendingRequest* request, std::span<const uint8_t>* body, Deadline deadline) {
  uint8_t prefix[4];
  Status s = transport_->read_exact(prefix, deadline);
  if (!s.ok()) return fail(s);
  int32_t size = static_cast<int32_t>(protocol::load_be32(prefix));
  if (size < 4 || size > options_.max_response_bytes) {
    return fail(Status::error(Status::Code::kProtocol, "response frame of " + std::to_string(size) +
                                                         " bytes (limit " +
                                                         std::to_string(options_.max_response_bytes) + ")"));
  }
  // A fresh buffer per response (not resized in place): a view kept past
  // the next call then points at freed memory, which sanitizers report,
  // instead of silently reading another response's bytes.
  frame_ = std::vector<uint8_t>(static_cast<size_t>(size));
  s = transport_->read_exact(frame_, deadline);
  if (!s.ok()) return fail(s);
  s = codec_.match(frame_, request, body);
  return s.ok() ? s : fail(s);
}

}  // namespace eddy::client

#include "client/tls_transport.h"

#include <string>

#include "security/tls_config.h"
#include "security/tls_session.h"

namespace eddy::client {
namespace {

// The session's BIO: blocking calls on the inner transport within the
// deadline of the operation under way. The inner Status of a failed call is
// kept so that the caller reports the network's reason, not mbedTLS's.
class InnerBio final : public security::TlsTransport {
 public:
  explicit InnerBio(Transport* inner) : inner_(inner) {}
  void begin(Deadline deadline) {
    deadline_ = deadline;
    failure_ = Status();
  }
  const Status& failure() const { return failure_; }

  security::TlsIo send(const uint8_t* data, size_t size, size_t* done) override {
    failure_ = inner_->write_all(std::span<const uint8_t>(data, size), deadline_);
    if (!failure_.ok()) return security::TlsIo::kError;
    *done = size;
    return security::TlsIo::kOk;
  }
  security::TlsIo receive(uint8_t* data, size_t size, size_t* done) override {
    failure_ = inner_->read_exact(std::span<uint8_t>(data, size), deadline_);
    if (!failure_.ok()) return security::TlsIo::kError;
    *done = size;
    return security::TlsIo::kOk;
  }

 private:
  Transport* inner_;
  Deadline deadline_ = Deadline::after_ms(0);
  Status failure_;
};

class TlsClientTransport final : public Transport {
 public:
  TlsClientTransport(std::shared_ptr<const security::TlsContext> context, std::unique_ptr<Transport> inner)
      : context_(std::move(context)), inner_(std::move(inner)), bio_(inner_.get()) {}
  ~TlsClientTransport() override { close(); }

  Status connect(const BrokerAddress& address, Deadline deadline) override {
    close();
    peer_ = address.to_string();
    if (Status s = inner_->connect(address, deadline); !s.ok()) return s;
    session_ = std::make_unique<security::TlsSession>(context_, &bio_);
    if (!session_->set_server_name(address.host)) return fail_handshake("the host name is not usable for TLS");
    bio_.begin(deadline);
    const security::TlsSession::Step step = session_->handshake();
    if (step == security::TlsSession::Step::kDone) return Status();
    if (!bio_.failure().ok()) {
      Status inner_failure = bio_.failure();
      close();
      return Status::error(inner_failure.code(), "TLS handshake with " + peer_ + ": " + inner_failure.message());
    }
    return fail_handshake(step == security::TlsSession::Step::kClosed ? "the server closed the connection"
                                                                       : session_->failure_reason());
  }

  Status write_all(std::span<const uint8_t> bytes, Deadline deadline) override {
    if (!session_) return Status::network("not connected");
    bio_.begin(deadline);
    size_t offset = 0;
    while (offset < bytes.size()) {
      size_t done = 0;
      const security::TlsSession::Step step = session_->write(bytes.data() + offset, bytes.size() - offset, &done);
      if (step != security::TlsSession::Step::kDone) return fail_io("writing to", step);
      offset += done;
    }
    return Status();
  }

  Status read_exact(std::span<uint8_t> into, Deadline deadline) override {
    if (!session_) return Status::network("not connected");
    bio_.begin(deadline);
    size_t offset = 0;
    while (offset < into.size()) {
      size_t done = 0;
      const security::TlsSession::Step step = session_->read(into.data() + offset, into.size() - offset, &done);
      if (step != security::TlsSession::Step::kDone) return fail_io("reading from", step);
      offset += done;
    }
    return Status();
  }

  void close() override {
    if (session_ && inner_->is_open()) {
      bio_.begin(Deadline::after_ms(100));
      session_->close_notify();
    }
    session_.reset();
    inner_->close();
  }

  bool is_open() const override { return session_ != nullptr && inner_->is_open(); }

  Status check_idle() override {
    if (!session_) return Status::network("not connected");
    // Buffered TLS bytes mean the connection is alive; otherwise the socket
    // peek tells (a close_notify waiting counts as alive until read).
    if (session_->has_buffered_input()) return Status();
    Status s = inner_->check_idle();
    if (!s.ok()) session_.reset();
    return s;
  }

  void interrupt() override { inner_->interrupt(); }

 private:
  Status fail_handshake(const std::string& reason) {
    close();
    return Status::network("TLS handshake with " + peer_ + " failed: " + reason);
  }

  Status fail_io(const char* what, security::TlsSession::Step step) {
    Status inner_failure = bio_.failure();
    std::string reason = !inner_failure.ok() ? inner_failure.message()
                         : step == security::TlsSession::Step::kClosed ? "the server closed the TLS connection"
                                                                       : session_->failure_reason();
    const Status::Code code = inner_failure.ok() ? Status::Code::kNetwork : inner_failure.code();
    close();
    return Status::error(code, std::string("TLS: ") + what + " " + peer_ + ": " + reason);
  }

  std::shared_ptr<const security::TlsContext> context_;
  std::unique_ptr<Transport> inner_;
  InnerBio bio_;
  std::unique_ptr<security::TlsSession> session_;
  std::string peer_;
};

}  // namespace

std::unique_ptr<Transport> make_tls_transport(std::shared_ptr<const security::TlsContext> context,
                                              std::unique_ptr<Transport> inner) {
  return std::make_unique<TlsClientTransport>(std::move(context), std::move(inner));
}

}  // namespace eddy::client

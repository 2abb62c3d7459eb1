#include "security/tls_session.h"

#include <climits>
#include <optional>

#include <mbedtls/net_sockets.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509.h>

#include "security/ssl_principal_mapper.h"
#include "security/tls_error.h"
#include "security/x509_principal.h"

namespace eddy::security {

struct TlsSession::Impl {
  Impl() { mbedtls_ssl_init(&ssl); }
  ~Impl() { mbedtls_ssl_free(&ssl); }
  mbedtls_ssl_context ssl;
  int setup_result = 0;
};

namespace {

// The BIO callbacks: the transport's answers in mbedTLS's terms.
int bio_send(void* context, const unsigned char* data, size_t size) {
  auto* transport = static_cast<TlsTransport*>(context);
  size_t done = 0;
  switch (transport->send(data, size > INT_MAX ? INT_MAX : size, &done)) {
    case TlsIo::kOk:
      return static_cast<int>(done);
    case TlsIo::kWouldBlock:
      return MBEDTLS_ERR_SSL_WANT_WRITE;
    case TlsIo::kEof:
    case TlsIo::kError:
      break;
  }
  return MBEDTLS_ERR_NET_SEND_FAILED;
}

int bio_receive(void* context, unsigned char* data, size_t size) {
  auto* transport = static_cast<TlsTransport*>(context);
  size_t done = 0;
  switch (transport->receive(data, size > INT_MAX ? INT_MAX : size, &done)) {
    case TlsIo::kOk:
      return static_cast<int>(done);
    case TlsIo::kWouldBlock:
      return MBEDTLS_ERR_SSL_WANT_READ;
    case TlsIo::kEof:
      return 0;  // mbedTLS: end of stream
    case TlsIo::kError:
      break;
  }
  return MBEDTLS_ERR_NET_RECV_FAILED;
}

}  // namespace

TlsSession::TlsSession(std::shared_ptr<const TlsContext> context, TlsTransport* transport)
    : context_(std::move(context)), impl_(std::make_unique<Impl>()) {
  impl_->setup_result = mbedtls_ssl_setup(&impl_->ssl, context_->ssl_config());
  mbedtls_ssl_set_bio(&impl_->ssl, transport, bio_send, bio_receive, nullptr);
}

TlsSession::~TlsSession() = default;

TlsSession::Step TlsSession::step_result(int rc) {
  switch (rc) {
    case MBEDTLS_ERR_SSL_WANT_READ:
      return Step::kWantRead;
    case MBEDTLS_ERR_SSL_WANT_WRITE:
      return Step::kWantWrite;
    case MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY:
    case MBEDTLS_ERR_SSL_CONN_EOF:
      return Step::kClosed;
    default:
      last_error_ = rc;
      return Step::kFailed;
  }
}

bool TlsSession::set_server_name(const std::string& host) {
  return mbedtls_ssl_set_hostname(&impl_->ssl, host.c_str()) == 0;
}

std::string TlsSession::failure_reason() const {
  std::string reason = mbedtls_reason(last_error_);
  const uint32_t flags = mbedtls_ssl_get_verify_result(&impl_->ssl);
  if (flags != 0 && flags != static_cast<uint32_t>(-1)) {
    char text[512];
    if (mbedtls_x509_crt_verify_info(text, sizeof(text), "", flags) > 0) {
      std::string info(text);
      for (char& c : info) {
        if (c == '\n') c = ';';
      }
      while (!info.empty() && (info.back() == ';' || info.back() == ' ')) info.pop_back();
      reason += ": " + info;
    }
  }
  return reason;
}

TlsSession::Step TlsSession::handshake() {
  if (impl_->setup_result != 0) {
    last_error_ = impl_->setup_result;
    return Step::kFailed;
  }
  int rc = mbedtls_ssl_handshake(&impl_->ssl);
  if (rc == MBEDTLS_ERR_SSL_CONN_EOF) {
    last_error_ = rc;  // the client left in the middle of the handshake
    return Step::kFailed;
  }
  if (rc != 0) return step_result(rc);
  // ssl.client.auth=requested (VERIFY_OPTIONAL): a certificate that was
  // presented must verify, as with Kafka (JSSE's wantClientAuth).
  if (mbedtls_ssl_get_peer_cert(&impl_->ssl) != nullptr && mbedtls_ssl_get_verify_result(&impl_->ssl) != 0) {
    last_error_ = MBEDTLS_ERR_X509_CERT_VERIFY_FAILED;
    return Step::kFailed;
  }
  return Step::kDone;
}

TlsSession::Step TlsSession::read(uint8_t* out, size_t size, size_t* done) {
  *done = 0;
  int rc = mbedtls_ssl_read(&impl_->ssl, out, size);
  if (rc > 0) {
    *done = static_cast<size_t>(rc);
    return Step::kDone;
  }
  if (rc == 0) return Step::kClosed;
  return step_result(rc);
}

TlsSession::Step TlsSession::write(const uint8_t* data, size_t size, size_t* done) {
  *done = 0;
  int rc = mbedtls_ssl_write(&impl_->ssl, data, size);
  if (rc >= 0) {
    *done = static_cast<size_t>(rc);
    return Step::kDone;
  }
  return step_result(rc);
}

void TlsSession::close_notify() {
  if (close_notify_sent_ || impl_->setup_result != 0) return;
  close_notify_sent_ = true;
  (void)mbedtls_ssl_close_notify(&impl_->ssl);  // best effort: WANT_WRITE is not retried
}

bool TlsSession::has_buffered_input() const {
  auto* ssl = const_cast<mbedtls_ssl_context*>(&impl_->ssl);
  return mbedtls_ssl_get_bytes_avail(ssl) > 0 || mbedtls_ssl_check_pending(ssl) != 0;
}

Status TlsSession::peer_principal(std::string* principal) const {
  principal->clear();
  // Needs MBEDTLS_SSL_KEEP_PEER_CERTIFICATE (Debian's default); without it
  // there is no certificate to name and the principal stays anonymous.
  const mbedtls_x509_crt* cert = mbedtls_ssl_get_peer_cert(&impl_->ssl);
  if (cert == nullptr) return Status();
  const std::string subject = rfc2253_name(&cert->subject);
  std::optional<std::string> name = context_->principal_mapper().name_for(subject);
  if (!name) return Status::invalid_argument("no ssl.principal.mapping.rules rule applies to " + subject);
  *principal = "User:" + *name;
  return Status();
}

std::string TlsSession::description() const {
  const char* version = mbedtls_ssl_get_version(&impl_->ssl);
  const char* suite = mbedtls_ssl_get_ciphersuite(&impl_->ssl);
  return std::string(version != nullptr ? version : "?") + " " + (suite != nullptr ? suite : "?");
}

}  // namespace eddy::security

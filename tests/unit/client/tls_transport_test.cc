// The TLS client transport against a real TLS server (the security room's
// TlsSession in server mode) on a loopback socket.
#include "client/tls_transport.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "../security/test_pem.h"
#include "security/crypto.h"
#include "security/tls_config.h"
#include "security/tls_session.h"

namespace eddy::client {
namespace {

namespace pem = security::test_pem;

// A CA that signed nothing the server presents.
constexpr const char* kOtherCa = R"PEM(-----BEGIN CERTIFICATE-----
MIIBfDCCASOgAwIBAgIUBuNvOSWi61oRNmCGA5afw5ISNSMwCgYIKoZIzj0EAwIw
EzERMA8GA1UEAwwIT3RoZXIgQ0EwIBcNMjYxMjAyMTAxNzAyWhgPMjEyNjExMDgx
MDE3MDJaMBMxETAPBgNVBAMMCE90aGVyIENBMFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAEvO+ULQ43tDmhT6FsE8UHTA7UNvsd2CBpL2mtuBlR3rOOJjJYTpcxBEvj
3ssHW9o4/SGn3EuefVJ5516KzQjuOKNTMFEwHQYDVR0OBBYEFJSdREfOwOjyS8k2
cBI/ka78urFKMB8GA1UdIwQYMBaAFJSdREfOwOjyS8k2cBI/ka78urFKMA8GA1Ud
EwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDRwAwRAIgfpo0Ap4fxV8O/f47oEV0+dXc
bR14NEi9P8C4AoKRQDECIAqY6b5CgKGqy99joFII2dBxdRQ5ZkLpsiE5/eHO5vBY
-----END CERTIFICATE-----
)PEM";

// Blocking socket I/O for the server's session.
class FdTransport final : public security::TlsTransport {
 public:
  explicit FdTransport(int fd) : fd_(fd) {}
  security::TlsIo send(const uint8_t* data, size_t size, size_t* done) override {
    ssize_t n = ::send(fd_, data, size, MSG_NOSIGNAL);
    if (n <= 0) return security::TlsIo::kError;
    *done = static_cast<size_t>(n);
    return security::TlsIo::kOk;
  }
  security::TlsIo receive(uint8_t* data, size_t size, size_t* done) override {
    ssize_t n = ::recv(fd_, data, size, 0);
    if (n == 0) return security::TlsIo::kEof;
    if (n < 0) return security::TlsIo::kError;
    *done = static_cast<size_t>(n);
    return security::TlsIo::kOk;
  }

 private:
  int fd_;
};

// One connection: handshake, read "hello", answer "world!". With plain =
// true it closes the connection at once without TLS.
class EchoServer {
 public:
  explicit EchoServer(bool plain = false) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::listen(listen_fd_, 1), 0);
    socklen_t len = sizeof(addr);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    security::TlsSettings settings;
    settings.keystore_certificate_chain = pem::kServerCert;
    settings.keystore_key = pem::kServerKey;
    EXPECT_TRUE(security::TlsContext::create_server(settings, &context_).ok());
    thread_ = std::thread([this, plain] { serve(plain); });
  }
  ~EchoServer() {
    thread_.join();
    ::close(listen_fd_);
  }
  uint16_t port() const { return port_; }
  bool handshake_done() const { return handshake_done_.load(); }
  std::string received() const { return received_; }

 private:
  void serve(bool plain) {
    int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) return;
    if (!plain) {
      FdTransport transport(fd);
      security::TlsSession session(context_, &transport);
      if (session.handshake() == security::TlsSession::Step::kDone) {
        handshake_done_ = true;
        uint8_t buffer[5];
        size_t got = 0;
        while (got < sizeof(buffer)) {
          size_t done = 0;
          if (session.read(buffer + got, sizeof(buffer) - got, &done) != security::TlsSession::Step::kDone) break;
          got += done;
        }
        received_.assign(reinterpret_cast<char*>(buffer), got);
        size_t written = 0;
        (void)session.write(reinterpret_cast<const uint8_t*>("world!"), 6, &written);
        session.close_notify();
      }
    }
    ::close(fd);
  }

  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::shared_ptr<const security::TlsContext> context_;
  std::thread thread_;
  std::atomic<bool> handshake_done_{false};
  std::string received_;
};

std::shared_ptr<const security::TlsContext> client_context(const char* ca, std::string identification = "https") {
  security::TlsSettings settings;
  settings.truststore_certificates = ca;
  settings.endpoint_identification_algorithm = std::move(identification);
  std::shared_ptr<const security::TlsContext> context;
  Status s = security::TlsContext::create_client(settings, &context);
  EXPECT_TRUE(s.ok()) << s.message();
  return context;
}

Status round_trip(std::shared_ptr<const security::TlsContext> context, const std::string& host, uint16_t port,
                  std::string* answer) {
  auto transport = make_tls_transport(std::move(context), make_tcp_transport());
  if (Status s = transport->connect(BrokerAddress{host, port}, Deadline::after_ms(5000)); !s.ok()) return s;
  if (Status s = transport->write_all(security::as_bytes("hello"), Deadline::after_ms(5000)); !s.ok()) return s;
  uint8_t buffer[6];
  if (Status s = transport->read_exact(buffer, Deadline::after_ms(5000)); !s.ok()) return s;
  answer->assign(reinterpret_cast<char*>(buffer), sizeof(buffer));
  // The server sends close_notify and closes: the next read reports that.
  uint8_t more[1];
  Status after = transport->read_exact(more, Deadline::after_ms(5000));
  EXPECT_EQ(after.code(), Status::Code::kNetwork);
  EXPECT_FALSE(transport->is_open());
  return Status();
}

TEST(TlsTransportTest, TrustedServerWithMatchingNameRoundTrips) {
  EchoServer server;
  std::string answer;
  Status s = round_trip(client_context(pem::kCa), "localhost", server.port(), &answer);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(answer, "world!");
  EXPECT_EQ(server.received(), "hello");
}

TEST(TlsTransportTest, UntrustedServerRefused) {
  EchoServer server;
  std::string answer;
  Status s = round_trip(client_context(kOtherCa), "localhost", server.port(), &answer);
  EXPECT_EQ(s.code(), Status::Code::kNetwork);
  EXPECT_NE(s.message().find("TLS handshake with localhost:"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("not correctly signed by the trusted CA"), std::string::npos) << s.message();
  EXPECT_FALSE(server.handshake_done());
}

TEST(TlsTransportTest, NameMismatchRefusedUnlessIdentificationOff) {
  {
    EchoServer server;
    std::string answer;
    // The certificate names localhost, not 127.0.0.1.
    Status s = round_trip(client_context(pem::kCa), "127.0.0.1", server.port(), &answer);
    EXPECT_EQ(s.code(), Status::Code::kNetwork);
    EXPECT_NE(s.message().find("CN"), std::string::npos) << s.message();
  }
  {
    EchoServer server;
    std::string answer;
    Status s = round_trip(client_context(pem::kCa, ""), "127.0.0.1", server.port(), &answer);
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(answer, "world!");
  }
  {
    // Identification off still verifies the chain.
    EchoServer server;
    std::string answer;
    Status s = round_trip(client_context(kOtherCa, ""), "127.0.0.1", server.port(), &answer);
    EXPECT_NE(s.message().find("not correctly signed by the trusted CA"), std::string::npos) << s.message();
  }
}

TEST(TlsTransportTest, ServerClosingDuringHandshakeIsNetworkError) {
  EchoServer server(/*plain=*/true);
  std::string answer;
  Status s = round_trip(client_context(pem::kCa), "localhost", server.port(), &answer);
  EXPECT_EQ(s.code(), Status::Code::kNetwork);
  EXPECT_NE(s.message().find("TLS handshake with"), std::string::npos) << s.message();
}

TEST(TlsTransportTest, ClientContextConfigErrors) {
  std::shared_ptr<const security::TlsContext> context;
  security::TlsSettings no_ca;
  Status s = security::TlsContext::create_client(no_ca, &context);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("ssl.truststore.location"), std::string::npos);

  security::TlsSettings bad_algorithm;
  bad_algorithm.truststore_certificates = pem::kCa;
  bad_algorithm.endpoint_identification_algorithm = "ldaps";
  s = security::TlsContext::create_client(bad_algorithm, &context);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("ssl.endpoint.identification.algorithm=ldaps"), std::string::npos);

  security::TlsSettings key_without_chain;
  key_without_chain.truststore_certificates = pem::kCa;
  key_without_chain.keystore_key = pem::kServerKey;
  s = security::TlsContext::create_client(key_without_chain, &context);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);

  security::TlsSettings client_cert;
  client_cert.truststore_certificates = pem::kCa;
  client_cert.keystore_certificate_chain = pem::kServerCert;
  client_cert.keystore_key = pem::kServerKey;
  s = security::TlsContext::create_client(client_cert, &context);
  EXPECT_TRUE(s.ok()) << s.message();
}

}  // namespace
}  // namespace eddy::client

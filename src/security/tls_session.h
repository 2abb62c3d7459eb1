// security/tls_session.h — one TLS connection's state machine (an
// mbedtls_ssl_context) over a non-blocking transport that the caller
// provides; no sockets and no mbedTLS headers here. net/tls_stream.h drives
// it from the reactor: kWantRead / kWantWrite mean "wait until the socket is
// readable / writable, then call the same function again with the same
// arguments" (mbedTLS's rule for a write in progress).
//
// Not thread-safe; one reactor thread. A read and a write may be in
// progress at the same time (TLS 1.2 without renegotiation: reading touches
// only the input side, writing only the output side).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "security/tls_config.h"

namespace eddy::security {

// What the transport did with one non-blocking send or receive.
enum class TlsIo { kOk, kWouldBlock, kEof, kError };

class TlsTransport {
 public:
  // Sends up to size bytes (*done > 0 with kOk).
  virtual TlsIo send(const uint8_t* data, size_t size, size_t* done) = 0;
  // Receives up to size bytes (*done > 0 with kOk; kEof at end of stream).
  virtual TlsIo receive(uint8_t* data, size_t size, size_t* done) = 0;

 protected:
  ~TlsTransport() = default;
};

class TlsSession {
 public:
  enum class Step {
    kDone,       // finished; for read/write *done bytes
    kWantRead,   // wait for readability, then call again
    kWantWrite,  // wait for writability, then call again
    kClosed,     // the peer closed (close_notify or end of stream)
    kFailed,     // last_error() says why; the session is unusable
  };

  // REQUIRES: transport outlives the session.
  TlsSession(std::shared_ptr<const TlsContext> context, TlsTransport* transport);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // A client session, before handshake(): the server name sent as SNI and,
  // when the context verifies_hostname(), the name the server certificate
  // must carry (mbedTLS 2.28 matches DNS names and the CN, not IP address
  // entries). False when mbedTLS refuses the name.
  bool set_server_name(const std::string& host);

  // A failed handshake's reason for people: mbedTLS's text, and for a
  // certificate that did not verify which checks failed ("not trusted",
  // "name mismatch", ...).
  std::string failure_reason() const;

  Step handshake();
  Step read(uint8_t* out, size_t size, size_t* done);
  // Writes at most one record's worth (*done may be < size).
  Step write(const uint8_t* data, size_t size, size_t* done);
  // Sends close_notify once, best effort (no waiting for writability).
  void close_notify();

  // Decrypted bytes or unprocessed record bytes are buffered: a read may
  // succeed without the socket becoming readable.
  bool has_buffered_input() const;

  // After a successful handshake, *principal is "User:<name>" for a verified
  // client certificate, the name being its subject as RFC 2253 prints it
  // ("CN=client,O=Example") mapped by the context's ssl.principal.mapping.rules;
  // empty when the client presented none. kInvalidArgument naming the
  // subject when no mapping rule applies (Kafka refuses the client then).
  Status peer_principal(std::string* principal) const;
  // The negotiated version and suite, "TLSv1.2 TLS-ECDHE-RSA-WITH-...".
  std::string description() const;

  // The mbedTLS code of the last kFailed (negative), and its text.
  int last_error() const { return last_error_; }

 private:
  struct Impl;
  Step step_result(int rc);
  std::shared_ptr<const TlsContext> context_;
  std::unique_ptr<Impl> impl_;
  int last_error_ = 0;
  bool close_notify_sent_ = false;
};

}  // namespace eddy::security

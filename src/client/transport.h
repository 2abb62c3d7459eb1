// The byte stream under a BrokerConnection, behind an interface so that the
// connection logic runs over TCP (make_tcp_transport), over TLS later, and
// over an in-memory fake in the unit tests.
//
// Blocking with deadlines: every call returns by its deadline (kTimeout).
// After any failure the transport is closed; connect() again to reuse it.
#pragma once

#include <functional>
#include <memory>
#include <span>

#include "client/broker_address.h"
#include "client/deadline.h"
#include "port/status.h"

namespace eddy::client {

class Transport {
 public:
  virtual ~Transport() = default;

  // Resolves address and connects (closing any previous connection).
  virtual Status connect(const BrokerAddress& address, Deadline deadline) = 0;
  // Writes all of bytes.
  virtual Status write_all(std::span<const uint8_t> bytes, Deadline deadline) = 0;
  // Reads exactly into.size() bytes. The peer closing first is kNetwork.
  virtual Status read_exact(std::span<uint8_t> into, Deadline deadline) = 0;
  virtual void close() = 0;
  virtual bool is_open() const = 0;
  // For an open connection with nothing outstanding: kNetwork when the peer
  // has closed or reset it meanwhile (then the transport is closed). Does
  // not block and consumes nothing the peer sent. Transports that cannot
  // tell (in-memory fakes) report the connection alive.
  virtual Status check_idle() { return Status(); }
  // Thread-safe, callable while another thread is blocked in a call: that
  // call and every later one fail promptly with kNetwork ("interrupted").
  // For shutting down a thread that owns the transport. Transports that
  // never block (in-memory fakes) need not override it.
  virtual void interrupt() {}
};

using TransportFactory = std::function<std::unique_ptr<Transport>()>;

// Plain TCP (Asio's synchronous-style socket driven with timeouts).
std::unique_ptr<Transport> make_tcp_transport();

}  // namespace eddy::client

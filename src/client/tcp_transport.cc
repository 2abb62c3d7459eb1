// The TCP transport. The only translation unit of the client that includes
// Asio: each blocking call starts an asynchronous operation on a private
// io_context and runs that context until the operation completes or the
// deadline passes (then the socket is closed, which cancels the operation).
// This gives every wait a timeout without platform socket calls.
#include <asio.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>

#include "client/transport.h"

namespace eddy::client {
namespace {

class TcpTransport final : public Transport {
 public:
  TcpTransport() : socket_(io_), resolver_(io_) {}
  ~TcpTransport() override { close(); }

  Status connect(const BrokerAddress& address, Deadline deadline) override {
    close();
    if (interrupted_.load()) return interrupted();
    peer_ = address.to_string();
    std::error_code ec;
    asio::ip::tcp::resolver::results_type endpoints;
    asio::ip::address literal = asio::ip::make_address(address.host, ec);
    if (!ec) {
      endpoints = asio::ip::tcp::resolver::results_type::create(asio::ip::tcp::endpoint(literal, address.port),
                                                                address.host, std::to_string(address.port));
    } else {
      // The resolver's handler may run long after a timeout (getaddrinfo
      // cannot be interrupted), so it writes to shared state, not the stack.
      struct Resolution {
        std::optional<std::error_code> done;
        asio::ip::tcp::resolver::results_type results;
      };
      auto resolution = std::make_shared<Resolution>();
      resolver_.async_resolve(address.host, std::to_string(address.port),
                              [resolution](const std::error_code& e, asio::ip::tcp::resolver::results_type r) {
                                resolution->done = e;
                                resolution->results = std::move(r);
                              });
      if (!run_until_done(resolution->done, deadline)) {
        resolver_.cancel();
        if (interrupted_.load()) return interrupted();
        return Status::error(Status::Code::kTimeout, "resolving " + address.host + " timed out");
      }
      if (*resolution->done) {
        return Status::error(Status::Code::kNetwork,
                             "cannot resolve " + address.host + ": " + resolution->done->message());
      }
      endpoints = resolution->results;
    }
    std::optional<std::error_code> connected;
    asio::async_connect(socket_, endpoints, [&](const std::error_code& e, const asio::ip::tcp::endpoint&) {
      connected = e;
    });
    if (!run_until_done(connected, deadline)) {
      abort_socket();
      if (interrupted_.load()) return interrupted();
      return Status::error(Status::Code::kTimeout, "connecting to " + peer_ + " timed out");
    }
    if (*connected) {
      abort_socket();
      return Status::error(Status::Code::kNetwork, "cannot connect to " + peer_ + ": " + connected->message());
    }
    socket_.set_option(asio::ip::tcp::no_delay(true), ec);
    return Status();
  }

  Status write_all(std::span<const uint8_t> bytes, Deadline deadline) override {
    if (!socket_.is_open()) return Status::error(Status::Code::kNetwork, "not connected");
    std::optional<std::error_code> done;
    asio::async_write(socket_, asio::buffer(bytes.data(), bytes.size()),
                      [&](const std::error_code& e, size_t) { done = e; });
    if (!run_until_done(done, deadline)) {
      abort_socket();
      if (interrupted_.load()) return interrupted();
      return Status::error(Status::Code::kTimeout, "writing to " + peer_ + " timed out");
    }
    if (*done) {
      abort_socket();
      return Status::error(Status::Code::kNetwork, "writing to " + peer_ + ": " + done->message());
    }
    return Status();
  }

  Status read_exact(std::span<uint8_t> into, Deadline deadline) override {
    if (!socket_.is_open()) return Status::error(Status::Code::kNetwork, "not connected");
    std::optional<std::error_code> done;
    asio::async_read(socket_, asio::buffer(into.data(), into.size()),
                     [&](const std::error_code& e, size_t) { done = e; });
    if (!run_until_done(done, deadline)) {
      abort_socket();
      if (interrupted_.load()) return interrupted();
      return Status::error(Status::Code::kTimeout, "waiting for " + peer_ + " timed out");
    }
    if (*done) {
      abort_socket();
      if (*done == asio::error::eof) {
        return Status::error(Status::Code::kNetwork, peer_ + " closed the connection");
      }
      return Status::error(Status::Code::kNetwork, "reading from " + peer_ + ": " + done->message());
    }
    return Status();
  }

  void close() override {
    if (socket_.is_open()) abort_socket();
  }

  Status check_idle() override {
    if (!socket_.is_open()) return Status::error(Status::Code::kNetwork, "not connected");
    // A peek in non-blocking mode: would_block means open and quiet, bytes
    // mean open (they stay for the next read), eof or an error means gone.
    // Only the synchronous calls see the mode; the asynchronous operations
    // above manage non-blocking I/O themselves.
    std::error_code ec;
    socket_.non_blocking(true, ec);
    uint8_t byte = 0;
    size_t n = socket_.receive(asio::buffer(&byte, 1), asio::socket_base::message_peek, ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again || (!ec && n > 0)) return Status();
    abort_socket();
    if (!ec || ec == asio::error::eof) return Status::error(Status::Code::kNetwork, peer_ + " closed the connection");
    return Status::error(Status::Code::kNetwork, "connection to " + peer_ + ": " + ec.message());
  }

  bool is_open() const override { return socket_.is_open(); }

  void interrupt() override {
    interrupted_.store(true);
    asio::post(io_, [] {});  // wakes run_one_for
  }

 private:
  static Status interrupted() { return Status::error(Status::Code::kNetwork, "interrupted"); }

  // Runs the context until *done is set or the deadline passes; false on
  // timeout or interrupt() (the operation is then still outstanding).
  bool run_until_done(const std::optional<std::error_code>& done, Deadline deadline) {
    io_.restart();
    while (!done) {
      if (interrupted_.load()) return false;
      int64_t left = deadline.remaining_ms();
      if (left <= 0) return false;
      io_.run_one_for(std::chrono::milliseconds(left));
      if (io_.stopped()) io_.restart();
    }
    return true;
  }

  // Closes the socket and runs the cancelled handlers, so that none refers
  // to a caller's stack frame afterwards.
  void abort_socket() {
    std::error_code ignored;
    socket_.close(ignored);
    drain();
  }

  void drain() {
    io_.restart();
    io_.run();
    io_.restart();
  }

  asio::io_context io_;
  asio::ip::tcp::socket socket_;
  asio::ip::tcp::resolver resolver_;
  std::string peer_;
  std::atomic<bool> interrupted_{false};
};

}  // namespace

std::unique_ptr<Transport> make_tcp_transport() { return std::make_unique<TcpTransport>(); }

}  // namespace eddy::client

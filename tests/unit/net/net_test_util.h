// Helpers for the net tests: a reactor on a background thread, a simple
// blocking loopback client with timeouts, a configurable FrameHandler, and
// condition waits with deadlines.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "net/frame_handler.h"
#include "net/reactor.h"
#include "net/server.h"
#include "protocol/output_buffer.h"

namespace eddy::net::testing {

using namespace std::chrono_literals;

constexpr auto kDeadline = 20s;

// Polls pred until it holds or the deadline passes.
bool wait_until(const std::function<bool()>& pred, std::chrono::milliseconds deadline = kDeadline);

// The body with its 4-byte big-endian size prefix.
std::vector<uint8_t> framed(std::span<const uint8_t> body);
std::vector<uint8_t> bytes_of(const std::string& text);
std::string text_of(std::span<const uint8_t> bytes);
// A framed response whose body is body.
protocol::OutputBuffer response_with(std::span<const uint8_t> body);

// A loopback TCP client. Every operation gives up after its timeout.
class TestClient {
 public:
  TestClient();
  ~TestClient();
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  // Connects to 127.0.0.1:port. receive_buffer_bytes > 0 sets SO_RCVBUF
  // first. False when refused (or timed out).
  bool connect(uint16_t port, int receive_buffer_bytes = 0);
  bool write(std::span<const uint8_t> bytes, std::chrono::milliseconds timeout = kDeadline);
  bool write_frame(std::span<const uint8_t> body) { return write(framed(body)); }
  bool read_exact(void* data, size_t length, std::chrono::milliseconds timeout = kDeadline);
  // Reads one size-prefixed frame; false on timeout or close.
  bool read_frame(std::vector<uint8_t>* body, std::chrono::milliseconds timeout = kDeadline);
  // True when the server closes the connection (EOF or reset) within the
  // timeout; bytes received before that are discarded.
  bool wait_closed(std::chrono::milliseconds timeout = kDeadline);
  void close();
  // Closes with a reset (SO_LINGER 0): the server's next write to it fails.
  void reset();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A FrameHandler whose on_frame is a replaceable function; counts events.
// Default behaviour: echo the frame body back.
class TestHandler : public FrameHandler {
 public:
  using OnFrame = std::function<void(ConnectionContext&, protocol::FrameBytes, ResponseSlot)>;

  void on_frame(ConnectionContext& connection, protocol::FrameBytes frame, ResponseSlot slot) override {
    frames.fetch_add(1);
    if (on_frame_fn) {
      on_frame_fn(connection, std::move(frame), std::move(slot));
    } else {
      slot.respond(response_with(frame));
    }
  }
  void on_connection_opened(ConnectionContext& connection) override {
    std::lock_guard<std::mutex> lock(mu);
    opened_ids.push_back(connection.id());
    peers.push_back(connection.peer());
    listeners.push_back(connection.listener());
    opened.fetch_add(1);
  }
  void on_connection_closed(ConnectionContext& connection) override { closed.fetch_add(1); }

  OnFrame on_frame_fn;  // set before traffic starts
  std::atomic<int> frames{0};
  std::atomic<int> opened{0};
  std::atomic<int> closed{0};
  std::mutex mu;
  std::vector<uint64_t> opened_ids;
  std::vector<std::string> peers;
  std::vector<std::string> listeners;
};

// A Reactor, a Server on 127.0.0.1:0 with the given options, and the
// reactor thread. Destroys everything in a safe order.
class ServerFixture {
 public:
  explicit ServerFixture(ServerOptions options = ServerOptions(), TestHandler::OnFrame on_frame = nullptr);
  ~ServerFixture();

  uint16_t port() const { return port_; }
  TestHandler& handler() { return handler_; }
  Server& server() { return *server_; }
  Reactor& reactor() { return reactor_; }

  // Runs fn on the reactor thread and waits for it.
  void on_reactor(const std::function<void()>& fn);
  // fn runs at teardown after the reactor thread ended, before the Server
  // and Reactor are destroyed: for releasing ResponseSlots a test kept.
  void at_teardown(std::function<void()> fn) { teardown_.push_back(std::move(fn)); }
  ServerStats stats();

 private:
  TestHandler handler_;
  Reactor reactor_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  uint16_t port_ = 0;
  std::vector<std::function<void()>> teardown_;
};

}  // namespace eddy::net::testing

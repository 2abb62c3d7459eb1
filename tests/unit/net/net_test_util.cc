#include "net_test_util.h"

#include <asio/connect.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>

#include "net/listener_config.h"

namespace eddy::net::testing {

bool wait_until(const std::function<bool()>& pred, std::chrono::milliseconds deadline) {
  auto end = std::chrono::steady_clock::now() + deadline;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

std::vector<uint8_t> framed(std::span<const uint8_t> body) {
  std::vector<uint8_t> out(4 + body.size());
  uint32_t size = static_cast<uint32_t>(body.size());
  out[0] = static_cast<uint8_t>(size >> 24);
  out[1] = static_cast<uint8_t>(size >> 16);
  out[2] = static_cast<uint8_t>(size >> 8);
  out[3] = static_cast<uint8_t>(size);
  std::copy(body.begin(), body.end(), out.begin() + 4);
  return out;
}

std::vector<uint8_t> bytes_of(const std::string& text) { return std::vector<uint8_t>(text.begin(), text.end()); }

std::string text_of(std::span<const uint8_t> bytes) { return std::string(bytes.begin(), bytes.end()); }

protocol::OutputBuffer response_with(std::span<const uint8_t> body) {
  protocol::OutputBuffer out;
  std::vector<uint8_t> bytes = framed(body);
  out.append(bytes.data(), bytes.size());
  return out;
}

// ---------------------------------------------------------------------------

struct TestClient::Impl {
  asio::io_context io{1};
  asio::ip::tcp::socket socket{io};

  // Runs the pending operation until done or timeout; cancels it on timeout.
  bool run(std::chrono::milliseconds timeout, const bool& done) {
    io.restart();
    io.run_for(timeout);
    if (done) return true;
    std::error_code ec;
    socket.cancel(ec);
    io.restart();
    io.run();
    return false;
  }
};

TestClient::TestClient() : impl_(std::make_unique<Impl>()) {}
TestClient::~TestClient() { close(); }

bool TestClient::connect(uint16_t port, int receive_buffer_bytes) {
  std::error_code ec;
  impl_->socket.open(asio::ip::tcp::v4(), ec);
  if (ec) return false;
  if (receive_buffer_bytes > 0) {
    impl_->socket.set_option(asio::socket_base::receive_buffer_size(receive_buffer_bytes), ec);
  }
  bool done = false;
  std::error_code result;
  impl_->socket.async_connect(
      asio::ip::tcp::endpoint(asio::ip::make_address_v4("127.0.0.1"), port), [&](const std::error_code& e) {
        result = e;
        done = true;
      });
  if (!impl_->run(kDeadline, done) || result) {
    close();
    return false;
  }
  impl_->socket.set_option(asio::ip::tcp::no_delay(true), ec);
  return true;
}

bool TestClient::write(std::span<const uint8_t> bytes, std::chrono::milliseconds timeout) {
  bool done = false;
  std::error_code result;
  asio::async_write(impl_->socket, asio::buffer(bytes.data(), bytes.size()),
                    [&](const std::error_code& e, size_t) {
                      result = e;
                      done = true;
                    });
  return impl_->run(timeout, done) && !result;
}

bool TestClient::read_exact(void* data, size_t length, std::chrono::milliseconds timeout) {
  bool done = false;
  std::error_code result;
  asio::async_read(impl_->socket, asio::buffer(data, length), [&](const std::error_code& e, size_t) {
    result = e;
    done = true;
  });
  return impl_->run(timeout, done) && !result;
}

bool TestClient::read_frame(std::vector<uint8_t>* body, std::chrono::milliseconds timeout) {
  uint8_t header[4];
  if (!read_exact(header, 4, timeout)) return false;
  uint32_t size = (uint32_t{header[0]} << 24) | (uint32_t{header[1]} << 16) | (uint32_t{header[2]} << 8) |
                  uint32_t{header[3]};
  body->resize(size);
  return size == 0 || read_exact(body->data(), size, timeout);
}

bool TestClient::wait_closed(std::chrono::milliseconds timeout) {
  auto end = std::chrono::steady_clock::now() + timeout;
  std::vector<uint8_t> scratch(65536);
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left <= 0ms) return false;
    bool done = false;
    std::error_code result;
    impl_->socket.async_read_some(asio::buffer(scratch), [&](const std::error_code& e, size_t) {
      result = e;
      done = true;
    });
    if (!impl_->run(left, done)) return false;
    if (result) return true;  // eof or reset
  }
}

void TestClient::close() {
  std::error_code ec;
  impl_->socket.close(ec);
}

void TestClient::reset() {
  std::error_code ec;
  impl_->socket.set_option(asio::socket_base::linger(true, 0), ec);
  impl_->socket.close(ec);
}

// ---------------------------------------------------------------------------

ServerFixture::ServerFixture(ServerOptions options, TestHandler::OnFrame on_frame) {
  handler_.on_frame_fn = std::move(on_frame);
  server_ = std::make_unique<Server>(reactor_, handler_, options);
  std::vector<ListenerConfig> listeners;
  std::string error;
  EXPECT_TRUE(parse_listeners("PLAINTEXT://127.0.0.1:0", nullptr, &listeners).ok());
  Status started = server_->start(listeners);
  EXPECT_TRUE(started.ok()) << started.to_string();
  if (!server_->bound_listeners().empty()) port_ = server_->bound_listeners()[0].port;
  thread_ = std::thread([this] { reactor_.run(); });
}

ServerFixture::~ServerFixture() {
  reactor_.stop();
  thread_.join();
  for (auto& fn : teardown_) fn();
  server_.reset();
}

void ServerFixture::on_reactor(const std::function<void()>& fn) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  reactor_.post([fn, done] {
    fn();
    done->set_value();
  });
  ASSERT_EQ(finished.wait_for(kDeadline), std::future_status::ready);
}

ServerStats ServerFixture::stats() {
  ServerStats stats;
  on_reactor([&] { stats = server_->stats(); });
  return stats;
}

}  // namespace eddy::net::testing

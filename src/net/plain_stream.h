// Internal to src/net/ (includes Asio): the PLAINTEXT byte stream under a
// Connection. A stream type provides (the seam where TLS plugs in):
//
//   void async_read_some(asio::mutable_buffer, Handler(error_code, size_t));
//   void async_wait_readable(Handler(error_code));
//       completes when a read would not block (bytes, end of stream or an
//       error), reading nothing: an idle connection holds no read buffer
//   void async_write(const ConstBufferSequence&, Handler(error_code, size_t));
//       writes everything or fails
//   void async_send_file(int fd, uint64_t offset, uint64_t length,
//                        Handler(error_code, size_t sent));
//       sends the file range, everything or fails
//   void close();
//       pending operations complete with an error, without touching their
//       buffers or files again
//   executor_type get_executor();
//
// Handlers are never called from inside the initiating function.
//
// A stream may also offer inline I/O, which Connection then tries before the
// asynchronous operations (one syscall where Asio would add a turn of the
// event loop to complete): each makes one attempt now and never waits;
// *n is what moved, and would_block is returned when nothing could.
//   std::error_code try_read_some(asio::mutable_buffer, size_t* n);   eof at end of stream
//   std::error_code try_write_some(const ConstBufferSequence&, bool more, size_t* n);
//   std::error_code try_send_file(int fd, uint64_t offset, uint64_t length, size_t* n);
// PlainStream does; TlsStream does not (its records need its own buffering).
#pragma once

#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>
#include <asio/write.hpp>
#include <algorithm>
#include <cstdint>
#include <system_error>
#include <utility>

#include "port/port.h"

namespace eddy::net {

class PlainStream {
 public:
  using executor_type = asio::ip::tcp::socket::executor_type;

  // File bytes sent per turn of the event loop before yielding to other
  // connections (sendfile to a fast reader may otherwise never block).
  static constexpr size_t kSendFileTurnBytes = size_t{1} << 20;

#ifdef MSG_MORE
  static constexpr asio::socket_base::message_flags kMore = MSG_MORE;
#else
  static constexpr asio::socket_base::message_flags kMore = 0;
#endif

  explicit PlainStream(asio::ip::tcp::socket socket) : socket_(std::move(socket)) {
    // sendfile(2) runs on the descriptor directly and must not block the
    // reactor; Asio's own async operations work on either mode.
    std::error_code ec;
    socket_.native_non_blocking(true, ec);
    // The inline operations below: one attempt, never an emulated wait.
    socket_.non_blocking(true, ec);
  }

  executor_type get_executor() { return socket_.get_executor(); }
  asio::ip::tcp::socket& socket() { return socket_; }

  template <class Handler>
  void async_read_some(asio::mutable_buffer buffer, Handler&& handler) {
    socket_.async_read_some(buffer, std::forward<Handler>(handler));
  }

  template <class Handler>
  void async_wait_readable(Handler&& handler) {
    socket_.async_wait(asio::ip::tcp::socket::wait_read, std::forward<Handler>(handler));
  }

  template <class Buffers, class Handler>
  void async_write(const Buffers& buffers, Handler&& handler) {
    asio::async_write(socket_, buffers, std::forward<Handler>(handler));
  }

  std::error_code try_read_some(asio::mutable_buffer buffer, size_t* n) {
    std::error_code ec;
    *n = socket_.read_some(buffer, ec);
    return ec;
  }

  // more: bytes follow at once (a file region after a response header):
  // the kernel may hold these back to send them together (MSG_MORE), so
  // that the reader is woken once for both.
  template <class Buffers>
  std::error_code try_write_some(const Buffers& buffers, bool more, size_t* n) {
    std::error_code ec;
    *n = socket_.send(buffers, more ? kMore : 0, ec);
    return ec;
  }

  std::error_code try_send_file(int fd, uint64_t offset, uint64_t length, size_t* n) {
    return port::send_file_range(socket_.native_handle(), fd, offset, static_cast<size_t>(length), n);
  }

  template <class Handler>
  void async_send_file(int fd, uint64_t offset, uint64_t length, Handler&& handler) {
    SendFileOp<std::decay_t<Handler>> op{&socket_, fd, offset, length, 0, std::forward<Handler>(handler)};
    // Start on a later turn: completions never run inside the initiator.
    asio::post(socket_.get_executor(), [op = std::move(op)]() mutable { op(std::error_code()); });
  }

  void close() {
    std::error_code ec;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    socket_.close(ec);
  }

 private:
  // Sends a file range with port::send_file_range (sendfile(2) on Linux) on
  // the non-blocking descriptor, waiting for writability when it would block.
  template <class Handler>
  struct SendFileOp {
    asio::ip::tcp::socket* socket;
    int fd;
    uint64_t offset;
    uint64_t remaining;
    size_t sent_total;
    Handler handler;

    void operator()(std::error_code ec) {
      if (ec) return finish(ec);
      if (!socket->is_open()) return finish(asio::error::operation_aborted);
      size_t budget = kSendFileTurnBytes;
      while (remaining > 0) {
        size_t want = static_cast<size_t>(std::min<uint64_t>(remaining, budget));
        size_t sent = 0;
        std::error_code err = port::send_file_range(socket->native_handle(), fd, offset, want, &sent);
        offset += sent;
        remaining -= sent;
        sent_total += sent;
        budget -= sent;
        if (err == std::errc::operation_would_block || err == std::errc::resource_unavailable_try_again) {
          socket->async_wait(asio::socket_base::wait_write, std::move(*this));
          return;
        }
        if (err) return finish(err);
        if (sent == 0) {
          // The file ended before the region did: the response cannot be
          // completed without breaking the framing.
          return finish(std::make_error_code(std::errc::io_error));
        }
        if (budget == 0 && remaining > 0) {
          asio::post(socket->get_executor(), [op = std::move(*this)]() mutable { op(std::error_code()); });
          return;
        }
      }
      finish(std::error_code());
    }

    void finish(std::error_code ec) {
      size_t sent = sent_total;
      std::move(handler)(ec, sent);
    }
  };

  asio::ip::tcp::socket socket_;
};

}  // namespace eddy::net

// Internal to src/net/ (includes Asio): the SSL byte stream under a
// Connection, with PlainStream's interface (see plain_stream.h) plus a
// handshake:
//
//   void async_handshake(Handler(error_code));
//       the server side of the TLS handshake; fails with
//       std::errc::timed_out when it has not finished within the timeout
//       given at construction, with a "tls" error (security/tls_error.h)
//       when mbedTLS refuses the peer
//   Status peer_principal(std::string*);  // after the handshake; "" when
//       none; an error when no ssl.principal.mapping.rules rule applies
//
// A security::TlsSession does the TLS work; its transport (SocketTransport)
// does non-blocking reads and writes on the socket, and "would block"
// becomes kWantRead/kWantWrite, on which the operation waits for the socket
// (async_wait) and calls the session again with the same arguments.
//
// File regions (async_send_file): TLS encrypts in user space, so the bytes
// must pass through memory: each is pread into a chunk buffer of at most
// kChunkBytes (one record's plaintext) and given to mbedtls_ssl_write, which
// encrypts it into its own output buffer. mbedTLS's public API takes
// plaintext only from memory, so the one read into our chunk (plus the
// encryption mbedTLS does anyway) is the least copying possible. The chunk
// is allocated when a send starts and freed when it ends: an idle
// connection holds none. Small memory pieces of a gathered write are
// coalesced into such a chunk too (one record, one send, instead of one
// per piece); pieces of a chunk's size or more go to mbedTLS directly.
//
// Ops hold a raw pointer to the State; the Connection keeps the stream (and
// so the State) alive while any of its operations is pending, as with
// PlainStream's socket.
#pragma once

#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "port/port.h"
#include "security/tls_error.h"
#include "security/tls_session.h"

namespace eddy::net {

// The session's transport: the socket, non-blocking.
class SocketTransport final : public security::TlsTransport {
 public:
  explicit SocketTransport(asio::ip::tcp::socket* socket) : socket_(socket) {}
  security::TlsIo send(const uint8_t* data, size_t size, size_t* done) override;
  security::TlsIo receive(uint8_t* data, size_t size, size_t* done) override;

 private:
  asio::ip::tcp::socket* socket_;
};

class TlsStream {
 public:
  using executor_type = asio::ip::tcp::socket::executor_type;
  static constexpr bool kHandshakes = true;
  // Plaintext per mbedtls_ssl_write: one TLS record's worth (2^14).
  static constexpr size_t kChunkBytes = 16384;
  // Bytes written per turn of the event loop before yielding to other
  // connections (as PlainStream's kSendFileTurnBytes).
  static constexpr size_t kTurnBytes = size_t{1} << 20;

  // handshake_timeout_ms <= 0: no timeout.
  TlsStream(asio::ip::tcp::socket socket, std::shared_ptr<const security::TlsContext> context,
            int64_t handshake_timeout_ms);
  TlsStream(TlsStream&&) noexcept = default;
  TlsStream& operator=(TlsStream&&) noexcept = default;
  ~TlsStream();

  executor_type get_executor() { return state_->socket.get_executor(); }
  asio::ip::tcp::socket& socket() { return state_->socket; }
  Status peer_principal(std::string* principal) const { return state_->session.peer_principal(principal); }
  std::string description() const { return state_->session.description(); }

  template <class Handler>
  void async_handshake(Handler&& handler) {
    State* s = state_.get();
    if (s->handshake_timeout_ms > 0) {
      s->timer.expires_after(std::chrono::milliseconds(s->handshake_timeout_ms));
      s->timer.async_wait([s](const std::error_code& ec) {
        if (ec) return;  // cancelled (done, or the stream is gone): s is not touched
        s->handshake_timed_out = true;
        std::error_code ignored;
        s->socket.cancel(ignored);
      });
    }
    start(HandshakeOp<std::decay_t<Handler>>{s, std::forward<Handler>(handler)});
  }

  template <class Handler>
  void async_read_some(asio::mutable_buffer buffer, Handler&& handler) {
    start(ReadOp<std::decay_t<Handler>>{state_.get(), static_cast<uint8_t*>(buffer.data()), buffer.size(),
                                        std::forward<Handler>(handler)});
  }

  template <class Handler>
  void async_wait_readable(Handler&& handler) {
    State* s = state_.get();
    if (s->closed || s->session.has_buffered_input()) {
      std::error_code ec = s->closed ? std::error_code(asio::error::operation_aborted) : std::error_code();
      asio::post(s->socket.get_executor(), [ec, h = std::forward<Handler>(handler)]() mutable { std::move(h)(ec); });
      return;
    }
    s->socket.async_wait(asio::ip::tcp::socket::wait_read, std::forward<Handler>(handler));
  }

  template <class Buffers, class Handler>
  void async_write(const Buffers& buffers, Handler&& handler) {
    BufferSource source;
    for (auto it = asio::buffer_sequence_begin(buffers); it != asio::buffer_sequence_end(buffers); ++it) {
      source.pieces.emplace_back(*it);
    }
    start(WriteOp<BufferSource, std::decay_t<Handler>>{state_.get(), std::move(source),
                                                       std::forward<Handler>(handler)});
  }

  template <class Handler>
  void async_send_file(int fd, uint64_t offset, uint64_t length, Handler&& handler) {
    FileSource source;
    source.fd = fd;
    source.offset = offset;
    source.remaining = length;
    start(WriteOp<FileSource, std::decay_t<Handler>>{state_.get(), std::move(source),
                                                     std::forward<Handler>(handler)});
  }

  // close_notify (best effort, when the handshake finished), then the
  // socket closes; pending operations complete with operation_aborted.
  void close();

 private:
  using Step = security::TlsSession::Step;

  struct State {
    State(asio::ip::tcp::socket s, std::shared_ptr<const security::TlsContext> context, int64_t timeout_ms);
    asio::ip::tcp::socket socket;
    SocketTransport transport;
    security::TlsSession session;
    asio::steady_timer timer;  // the handshake's deadline
    int64_t handshake_timeout_ms;
    bool handshake_timed_out = false;
    bool handshake_done = false;
    bool closed = false;
  };

  // Runs op on a later turn: completions never run inside the initiator.
  template <class Op>
  void start(Op op) {
    asio::post(state_->socket.get_executor(), [op = std::move(op)]() mutable { op(std::error_code()); });
  }

  // Waits for what the session asked for and runs op again. False for
  // kDone/kClosed/kFailed (the caller finishes).
  template <class Op>
  static bool wait_for(State* s, Step step, Op& op) {
    if (step == Step::kWantRead || step == Step::kWantWrite) {
      s->socket.async_wait(step == Step::kWantRead ? asio::socket_base::wait_read : asio::socket_base::wait_write,
                           std::move(op));
      return true;
    }
    return false;
  }

  static std::error_code failure(State* s, Step step) {
    if (step == Step::kClosed) return asio::error::eof;
    return security::make_tls_error(s->session.last_error());
  }

  template <class Handler>
  struct HandshakeOp {
    State* s;
    Handler handler;
    void operator()(std::error_code ec) {
      if (s->closed) return finish(asio::error::operation_aborted);
      if (s->handshake_timed_out) return finish(std::make_error_code(std::errc::timed_out));
      if (ec) return finish(ec);
      Step step = s->session.handshake();
      if (step == Step::kDone) {
        s->handshake_done = true;
        return finish(std::error_code());
      }
      if (!wait_for(s, step, *this)) finish(failure(s, step));
    }
    void finish(std::error_code ec) {
      s->timer.cancel();
      std::move(handler)(ec);
    }
  };

  template <class Handler>
  struct ReadOp {
    State* s;
    uint8_t* data;
    size_t size;
    Handler handler;
    void operator()(std::error_code ec) {
      if (s->closed) return std::move(handler)(asio::error::operation_aborted, size_t{0});
      if (ec) return std::move(handler)(ec, size_t{0});
      if (size == 0) return std::move(handler)(std::error_code(), size_t{0});
      size_t n = 0;
      Step step = s->session.read(data, size, &n);
      if (step == Step::kDone) return std::move(handler)(std::error_code(), n);
      if (!wait_for(s, step, *this)) std::move(handler)(failure(s, step), size_t{0});
    }
  };

  // A write's bytes, one record's worth at a time. next() sets the bytes to
  // give to mbedtls_ssl_write next; false when there are none: done, or
  // *ec says why not. The chunk buffer exists only while a send runs.
  struct BufferSource {
    std::vector<asio::const_buffer> pieces;
    size_t index = 0;
    size_t offset = 0;  // into pieces[index]
    std::unique_ptr<uint8_t[]> chunk;
    bool next(const uint8_t** data, size_t* size, std::error_code* ec);
  };
  struct FileSource {
    int fd = -1;
    uint64_t offset = 0;
    uint64_t remaining = 0;
    std::unique_ptr<uint8_t[]> chunk;
    bool next(const uint8_t** data, size_t* size, std::error_code* ec);
  };

  // Invariant: [cur, cur + cur_len) is the write in progress; after
  // kWantWrite it is passed again unchanged (mbedTLS's rule).
  template <class Source, class Handler>
  struct WriteOp {
    State* s;
    Source source;
    Handler handler;
    const uint8_t* cur = nullptr;
    size_t cur_len = 0;
    size_t total = 0;
    void operator()(std::error_code ec) {
      if (s->closed) return finish(asio::error::operation_aborted);
      if (ec) return finish(ec);
      size_t budget = kTurnBytes;
      while (true) {
        if (cur_len == 0) {
          std::error_code source_ec;
          if (!source.next(&cur, &cur_len, &source_ec)) return finish(source_ec);
        }
        size_t n = 0;
        Step step = s->session.write(cur, cur_len, &n);
        if (step != Step::kDone) {
          if (!wait_for(s, step, *this)) finish(step == Step::kClosed ? asio::error::broken_pipe : failure(s, step));
          return;
        }
        if (n == 0) return finish(std::make_error_code(std::errc::io_error));
        cur += n;
        cur_len -= n;
        total += n;
        budget = n >= budget ? 0 : budget - n;
        if (budget == 0) {
          asio::post(s->socket.get_executor(), [op = std::move(*this)]() mutable { op(std::error_code()); });
          return;
        }
      }
    }
    void finish(std::error_code ec) {
      source.chunk.reset();
      std::move(handler)(ec, total);
    }
  };

  std::unique_ptr<State> state_;
};

}  // namespace eddy::net

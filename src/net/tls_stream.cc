#include "net/tls_stream.h"

#include "net/connection_core.h"
#include "port/log.h"

namespace eddy::net {

namespace {

bool would_block(const std::error_code& ec) {
  return ec == asio::error::would_block || ec == asio::error::try_again;
}

}  // namespace

void note_handshake_failure(const ConnectionContext& connection, const std::error_code& ec) {
  static int64_t logged_ms = -1;
  static uint64_t not_logged = 0;
  const int64_t now = port::monotonic_millis();
  if (logged_ms >= 0 && now - logged_ms < 1000) {
    ++not_logged;
    return;
  }
  const std::string why = ec == std::errc::timed_out ? std::string("not finished in time (eddy.request.read.timeout.ms)")
                                                     : ec.message();
  if (not_logged > 0) {
    EDDY_LOG_WARN("TLS handshake with {} (listener {}) failed: {}; closing it ({} more failed handshakes not "
                  "logged)",
                  connection.peer(), connection.listener(), why, not_logged);
  } else {
    EDDY_LOG_WARN("TLS handshake with {} (listener {}) failed: {}; closing it", connection.peer(),
                  connection.listener(), why);
  }
  logged_ms = now;
  not_logged = 0;
}

security::TlsIo SocketTransport::send(const uint8_t* data, size_t size, size_t* done) {
  std::error_code ec;
  *done = socket_->write_some(asio::buffer(data, size), ec);
  if (!ec) return security::TlsIo::kOk;
  return would_block(ec) ? security::TlsIo::kWouldBlock : security::TlsIo::kError;
}

security::TlsIo SocketTransport::receive(uint8_t* data, size_t size, size_t* done) {
  std::error_code ec;
  *done = socket_->read_some(asio::buffer(data, size), ec);
  if (!ec) return security::TlsIo::kOk;
  if (ec == asio::error::eof) return security::TlsIo::kEof;
  return would_block(ec) ? security::TlsIo::kWouldBlock : security::TlsIo::kError;
}

TlsStream::State::State(asio::ip::tcp::socket s, std::shared_ptr<const security::TlsContext> context,
                        int64_t timeout_ms)
    : socket(std::move(s)),
      transport(&socket),
      session(std::move(context), &transport),
      timer(socket.get_executor()),
      handshake_timeout_ms(timeout_ms) {
  // The transport's reads and writes must return "would block" instead of
  // blocking the reactor; Asio's async waits work on either mode.
  std::error_code ec;
  socket.non_blocking(true, ec);
}

TlsStream::TlsStream(asio::ip::tcp::socket socket, std::shared_ptr<const security::TlsContext> context,
                     int64_t handshake_timeout_ms)
    : state_(std::make_unique<State>(std::move(socket), std::move(context), handshake_timeout_ms)) {}

TlsStream::~TlsStream() = default;

void TlsStream::close() {
  State* s = state_.get();
  if (s == nullptr || s->closed) return;
  s->closed = true;
  if (s->handshake_done) s->session.close_notify();
  s->timer.cancel();
  std::error_code ec;
  s->socket.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  s->socket.close(ec);
}

bool TlsStream::BufferSource::next(const uint8_t** data, size_t* size, std::error_code* ec) {
  ec->clear();
  while (index < pieces.size() && offset == pieces[index].size()) {
    ++index;
    offset = 0;
  }
  if (index == pieces.size()) return false;
  const auto* piece = static_cast<const uint8_t*>(pieces[index].data());
  const size_t left = pieces[index].size() - offset;
  if (left >= kChunkBytes) {
    // Large enough for whole records: straight from the caller's memory.
    *data = piece + offset;
    *size = left;
    ++index;
    offset = 0;
    return true;
  }
  // Coalesce small pieces into one record.
  if (!chunk) chunk = std::make_unique<uint8_t[]>(kChunkBytes);
  size_t filled = 0;
  while (index < pieces.size() && filled < kChunkBytes) {
    const auto* p = static_cast<const uint8_t*>(pieces[index].data());
    const size_t take = std::min(pieces[index].size() - offset, kChunkBytes - filled);
    std::memcpy(chunk.get() + filled, p + offset, take);
    filled += take;
    offset += take;
    if (offset == pieces[index].size()) {
      ++index;
      offset = 0;
    }
  }
  *data = chunk.get();
  *size = filled;
  return true;
}

bool TlsStream::FileSource::next(const uint8_t** data, size_t* size, std::error_code* ec) {
  ec->clear();
  if (remaining == 0) return false;
  if (!chunk) chunk = std::make_unique<uint8_t[]>(kChunkBytes);
  const size_t want = static_cast<size_t>(std::min<uint64_t>(remaining, kChunkBytes));
  size_t got = 0;
  *ec = port::read_fd_at(fd, offset, chunk.get(), want, &got);
  if (*ec) return false;
  if (got == 0) {
    // The file ended before the region did: the response cannot be
    // completed without breaking the framing.
    *ec = std::make_error_code(std::errc::io_error);
    return false;
  }
  offset += got;
  remaining -= got;
  *data = chunk.get();
  *size = got;
  return true;
}

}  // namespace eddy::net

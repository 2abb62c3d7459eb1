// A byte stream in memory for net::Connection (the interface plain_stream.h
// documents), driven by a test: what the client sends is a script of chunks
// the test releases one at a time; what the server writes (memory and file
// regions alike) is appended to one captured vector.
//
//   auto wire = std::make_shared<InMemoryWire>();
//   wire->script(bytes, chunk_ends);
//   auto conn = std::make_shared<net::Connection<InMemoryStream>>(InMemoryStream(io, wire), ...);
//   conn->start();
//   while (wire->release_next()) drain(io);   // one chunk, then let the server answer
//   wire->release_end(); drain(io);           // then end of stream
//
// A read returns bytes of the released chunks only, at most to the end of
// the current chunk (as a TCP segment would); with nothing released it
// waits (parked, not a ready handler, so io_context::poll() returns once the
// server has done what it can). After release_end() a read at the end
// completes with asio::error::eof.
//
// Invariants (those of PlainStream): every completion runs from the
// io_context, never inside the initiating call; after close() every pending
// or later operation completes with operation_aborted and touches no buffer.
// Writes are copied when initiated (everything or fail).
#pragma once

#include <asio/buffer.hpp>
#include <asio/error.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <system_error>
#include <utility>
#include <vector>

namespace eddy::fuzz {

// The shared state of one connection's stream: held by the stream (inside
// the Connection) and by the test.
// Invariant: read_pos_ <= released_end_ <= input_.size(); chunk ends are
// increasing and the last one is input_.size().
class InMemoryWire {
 public:
  // The client's bytes, cut after each offset of chunk_ends (sorted,
  // duplicates and out-of-range offsets ignored; the end is always a cut).
  void script(std::vector<uint8_t> input, const std::vector<size_t>& chunk_ends) {
    input_ = std::move(input);
    ends_.clear();
    for (size_t end : chunk_ends) {
      if (end > 0 && end < input_.size() && (ends_.empty() || end > ends_.back())) ends_.push_back(end);
    }
    ends_.push_back(input_.size());
  }

  // Releases the next chunk to the server (wakes a parked read); false when
  // every chunk is released already.
  bool release_next() {
    if (next_chunk_ >= ends_.size()) return false;
    released_end_ = ends_[next_chunk_++];
    wake();
    return true;
  }
  // The client closes its side: reads at the end complete with eof.
  void release_end() {
    released_end_ = input_.size();
    next_chunk_ = ends_.size();
    eof_ = true;
    wake();
  }

  const std::vector<uint8_t>& written() const { return written_; }
  bool closed() const { return closed_; }

 private:
  friend class InMemoryStream;
  using Wake = std::function<void(const std::error_code&)>;

  // Called when the chunk boundary or eof changes, and by close().
  void wake() {
    if (!parked_ || (!closed_ && !eof_ && read_pos_ >= released_end_)) return;
    Wake parked = std::move(parked_);
    parked_ = nullptr;
    parked(closed_ ? std::error_code(asio::error::operation_aborted) : std::error_code());
  }

  std::vector<uint8_t> input_;
  std::vector<size_t> ends_;
  size_t next_chunk_ = 0;
  size_t read_pos_ = 0;
  size_t released_end_ = 0;
  bool eof_ = false;
  bool closed_ = false;
  // The read (or wait) waiting for bytes; it posts its completion when woken.
  Wake parked_;
  std::vector<uint8_t> written_;
};

class InMemoryStream {
 public:
  using executor_type = asio::io_context::executor_type;

  InMemoryStream(asio::io_context& io, std::shared_ptr<InMemoryWire> wire) : io_(&io), wire_(std::move(wire)) {}

  executor_type get_executor() { return io_->get_executor(); }

  template <class Handler>
  void async_read_some(asio::mutable_buffer buffer, Handler&& handler) {
    auto h = std::make_shared<std::decay_t<Handler>>(std::forward<Handler>(handler));
    when_readable([wire = wire_, buffer, h](const std::error_code& ec) {
      if (ec) return (*h)(ec, size_t{0});
      if (wire->read_pos_ == wire->released_end_) return (*h)(std::error_code(asio::error::eof), size_t{0});
      // At most to the end of the current chunk.
      size_t chunk_end = wire->released_end_;
      for (size_t end : wire->ends_) {
        if (end > wire->read_pos_) {
          chunk_end = std::min(chunk_end, end);
          break;
        }
      }
      const size_t n = std::min(buffer.size(), chunk_end - wire->read_pos_);
      std::memcpy(buffer.data(), wire->input_.data() + wire->read_pos_, n);
      wire->read_pos_ += n;
      (*h)(std::error_code(), n);
    });
  }

  template <class Handler>
  void async_wait_readable(Handler&& handler) {
    auto h = std::make_shared<std::decay_t<Handler>>(std::forward<Handler>(handler));
    when_readable([h](const std::error_code& ec) { (*h)(ec); });
  }

  template <class Buffers, class Handler>
  void async_write(const Buffers& buffers, Handler&& handler) {
    size_t total = 0;
    if (!wire_->closed_) {
      for (auto it = asio::buffer_sequence_begin(buffers); it != asio::buffer_sequence_end(buffers); ++it) {
        asio::const_buffer b(*it);
        const auto* p = static_cast<const uint8_t*>(b.data());
        wire_->written_.insert(wire_->written_.end(), p, p + b.size());
        total += b.size();
      }
    }
    finish(std::forward<Handler>(handler), total);
  }

  // The file range is pread into the captured bytes; a file that ends
  // before the range does fails with io_error, as PlainStream's sendfile.
  template <class Handler>
  void async_send_file(int fd, uint64_t offset, uint64_t length, Handler&& handler) {
    size_t sent = 0;
    std::error_code ec;
    if (!wire_->closed_) {
      uint8_t block[64 * 1024];
      while (sent < length) {
        const size_t want = static_cast<size_t>(std::min<uint64_t>(length - sent, sizeof(block)));
        const ssize_t got = ::pread(fd, block, want, static_cast<off_t>(offset + sent));
        if (got < 0) {
          ec = std::error_code(errno, std::generic_category());
          break;
        }
        if (got == 0) {
          ec = std::make_error_code(std::errc::io_error);
          break;
        }
        wire_->written_.insert(wire_->written_.end(), block, block + got);
        sent += static_cast<size_t>(got);
      }
    }
    if (ec) {
      asio::post(*io_, [h = std::forward<Handler>(handler), ec, sent]() mutable { std::move(h)(ec, sent); });
      return;
    }
    finish(std::forward<Handler>(handler), sent);
  }

  void close() {
    wire_->closed_ = true;
    wire_->wake();
  }

 private:
  // Posts done(error) once a read would not wait: bytes released and not
  // read, end of stream, or closed. Otherwise parks it until wake().
  template <class Done>
  void when_readable(Done done) {
    asio::io_context* io = io_;
    auto wire = wire_;
    auto post_done = [io, wire, done](const std::error_code& ec) {
      asio::post(*io, [wire, done, ec] {
        done(wire->closed_ ? std::error_code(asio::error::operation_aborted) : ec);
      });
    };
    if (wire->closed_ || wire->read_pos_ < wire->released_end_ || wire->eof_) {
      post_done(std::error_code());
      return;
    }
    wire->parked_ = post_done;
  }

  template <class Handler>
  void finish(Handler&& handler, size_t n) {
    asio::post(*io_, [wire = wire_, h = std::forward<Handler>(handler), n]() mutable {
      if (wire->closed_) return std::move(h)(std::error_code(asio::error::operation_aborted), size_t{0});
      std::move(h)(std::error_code(), n);
    });
  }

  asio::io_context* io_;
  std::shared_ptr<InMemoryWire> wire_;
};

}  // namespace eddy::fuzz

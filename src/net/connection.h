// Internal to src/net/ (includes Asio): one client connection over a byte
// stream (PlainStream or TlsStream; see plain_stream.h, tls_stream.h).
//
// Read side: frames are 4-byte big-endian sizes followed by the body. Bytes
// are read into a fixed staging buffer, which usually holds several small
// pipelined frames at once; a frame too large for it is read straight into
// its own vector. So a connection holds at most the staging buffer plus one
// frame. Reading pauses while too many requests are outstanding or too many
// response bytes wait to be written, and resumes when they drain.
//
// Order: each frame gets the next sequence number and a pending entry;
// completions fill entries in any order; entries leave the front of the
// pending queue in order, into the write queue.
//
// Write side (the cursor in write_queue.h): runs of memory chunks (across
// queued responses) go out with one gathered write; file regions go out with
// the stream's async_send_file (sendfile(2) on plaintext). One write
// operation at a time. On a stream with inline I/O (plain_stream.h) what the
// socket takes at once is written inline, and a readable socket is read
// inline: at a low rate a request and its answer then cost one syscall
// each way, with no extra turn of the event loop to complete them.
//
// Lifetime: owned by shared_ptr; every pending Asio operation and every
// ResponseSlot holds one. close() is idempotent and leaves the object inert.
// The object holds Asio objects until destroyed, hence ResponseSlots must
// not outlive the Reactor.
#pragma once

#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "net/connection_core.h"
#include "net/frame_handler.h"
#include "net/request_memory.h"
#include "net/staging_pool.h"
#include "net/write_queue.h"
#include "port/log.h"
#include "port/port.h"
#include "port/status.h"
#include "protocol/big_endian.h"

namespace eddy::net {

template <class Stream>
class Connection final : public ConnectionCore {
  // The stream offers inline I/O (plain_stream.h).
  static constexpr bool kInlineIo = requires(Stream& s, size_t* n) {
    s.try_read_some(asio::mutable_buffer(), n);
  };
  // Asio's own codes (its system category) and port's (generic) alike.
  static bool would_block(const std::error_code& ec) {
    return ec == asio::error::would_block || ec == asio::error::try_again ||
           ec == std::errc::operation_would_block || ec == std::errc::resource_unavailable_try_again;
  }

 public:
  // memory: queued.max.request.bytes, shared by the server's connections
  // (null: large frames are not counted).
  Connection(Stream stream, uint64_t id, std::string peer, std::string listener, const ConnectionLimits& limits,
             FrameHandler* handler, ConnectionOwner* owner, RequestMemory* memory = nullptr)
      : ConnectionCore(id, std::move(peer), std::move(listener)),
        stream_(std::in_place, std::move(stream)),
        idle_timer_(std::in_place, stream_->get_executor()),
        limits_(limits),
        handler_(handler),
        owner_(owner),
        memory_(memory),
        staging_bytes_(std::max<size_t>(limits.read_buffer_bytes, 64)) {}

  // A stream with a handshake (TlsStream) finishes it before the first
  // frame is read; it keeps its own deadline for that (see tls_stream.h).
  void start() override {
    last_activity_ms_ = port::monotonic_millis();
    handler_->on_connection_opened(context());
    if (context().closed()) return;
    if (limits_.idle_timeout_ms > 0) arm_timer_at(last_activity_ms_ + limits_.idle_timeout_ms);
    if constexpr (requires(Stream& s) { s.async_handshake([](const std::error_code&) {}); }) {
      stream_->async_handshake([self = self()](const std::error_code& ec) { self->on_handshake(ec); });
    } else {
      continue_reading();
    }
  }

  // Graceful stop: read no new frames; close once every request read so far
  // is answered and written.
  void begin_drain() override {
    draining_ = true;
    close_if_drained();
  }

  // The owner is going away: do not call it back.
  void detach_owner() override { owner_ = nullptr; }

  void close() override {
    if (context().closed()) return;
    auto keep = shared_from_this();
    mark_closed();
    stream_->close();
    idle_timer_->cancel();
    // Release memory and file regions (their keep_alive) now: operations
    // on the closed stream fail without touching their buffers again.
    give_back_pending();
    pending_.clear();
    give_back(large_reserved_);
    large_reserved_ = 0;
    write_queue_.clear();
    handler_->on_connection_closed(context());
    if (owner_ != nullptr) owner_->connection_closed(context().id());
  }

  bool read_paused() const override { return read_paused_; }
  size_t queued_response_bytes() const override { return write_queue_.queued_bytes(); }

  void release_frame_memory(uint64_t sequence) override {
    if (context().closed()) return;
    if (sequence < first_pending_seq_ || sequence - first_pending_seq_ >= pending_.size()) return;
    Pending& entry = pending_[static_cast<size_t>(sequence - first_pending_seq_)];  // < pending_.size(), checked above
    if (entry.state != Completion::kWaiting) return;
    give_back(entry.reserved);
    entry.reserved = 0;
  }

  void complete(uint64_t sequence, Completion kind, protocol::OutputBuffer response) override {
    if (context().closed()) return;
    if (sequence < first_pending_seq_ || sequence - first_pending_seq_ >= pending_.size()) return;
    Pending& entry = pending_[static_cast<size_t>(sequence - first_pending_seq_)];  // < pending_.size(), checked above
    if (entry.state != Completion::kWaiting) return;
    if ((kind == Completion::kRespond || (kind == Completion::kClose && response.size() > 0)) &&
        !well_framed(response)) {
      EDDY_LOG_ERROR("response to {} (listener {}) is not framed: {} bytes with a different size prefix; "
                     "closing the connection",
                     context().peer(), context().listener(), response.size());
      kind = Completion::kClose;
      response = protocol::OutputBuffer();
    }
    entry.state = kind;
    entry.response = std::move(response);
    // The connection is going to close (once the answers before this one
    // are written): read and dispatch nothing more, even while an earlier
    // request is still parked, since a later one would be carried out
    // (a produce appended, a topic deleted) with no answer ever reaching
    // the client.
    if (kind == Completion::kClose) close_requested_ = true;
    release_in_order();
  }

 private:
  struct Pending {
    Completion state = Completion::kWaiting;
    protocol::OutputBuffer response;
    uint64_t reserved = 0;  // RequestMemory held by its frame until answered or released
  };

  void give_back(uint64_t bytes) {
    if (memory_ != nullptr && bytes != 0) memory_->give_back(bytes);
  }
  void give_back_pending() {
    for (Pending& p : pending_) {
      give_back(p.reserved);
      p.reserved = 0;
    }
  }

  // Takes bytes of RequestMemory for the large frame about to be read (its
  // whole size); false when they do not fit: reading stops and resumes (on a
  // later turn) once memory is given back.
  bool reserve_large(uint64_t bytes) {
    if (memory_ == nullptr || bytes == 0) return true;
    if (memory_paused_) return false;  // already waiting
    if (memory_->try_take(bytes)) {
      large_reserved_ += bytes;
      return true;
    }
    memory_paused_ = true;
    memory_->wait([weak = weak_from_this()] {
      auto core = weak.lock();
      if (!core) return;
      auto self = std::static_pointer_cast<Connection>(core);
      asio::post(self->stream_->get_executor(), [self] { self->on_memory_available(); });
    });
    return false;
  }

  void on_memory_available() {
    if (context().closed() || !memory_paused_) return;
    memory_paused_ = false;
    if (!reading_ && !in_parse_) continue_reading();
  }

  // A frame larger than the staging buffer grows by at least this much.
  static constexpr size_t kLargeFrameStep = 16 * 1024;
  // A frame up to this size gets its whole buffer at once: a produce
  // request of librdkafka's default batch then costs no growth copies. Its
  // size is already counted against queued.max.request.bytes, and its pages
  // become resident only as bytes arrive (a block reused from
  // frame_memory's cache is resident already), so a client that claims
  // this much and stalls still costs what it sent. Larger frames grow with
  // what arrives.
  static constexpr size_t kWholeFrameBytes = size_t{1} << 20;

  auto self() { return std::static_pointer_cast<Connection>(shared_from_this()); }

  // ---- read side ----------------------------------------------------------

  size_t outstanding_requests() const { return pending_.size() + write_queue_.size(); }

  bool over_limits() const {
    return outstanding_requests() >= limits_.max_in_flight_requests ||
           write_queue_.queued_bytes() >= limits_.max_queued_response_bytes;
  }

  bool may_read() const { return !context().closed() && !draining_ && !closing_ && !close_requested_; }

  // REQUIRES: no read in progress and not already inside this function.
  // Dispatches the complete frames already buffered, writes what they were
  // answered with at once, then reads more. Reading paused at the limits
  // resumes here when those answers went out at once: no write completion
  // would come to resume it.
  void continue_reading() {
    for (;;) {
      if (memory_paused_) return;  // on_memory_available resumes
      in_parse_ = true;
      Step step = Step::kNextFrame;
      while (step == Step::kNextFrame) {
        if (!may_read()) {
          step = Step::kStop;
        } else if (over_limits()) {
          read_paused_ = true;
          stop_frame_clock();
          step = Step::kStop;
        } else {
          step = take_buffered_frame();
        }
      }
      in_parse_ = false;
      start_write();
      if (context().closed()) return;
      close_if_drained();
      if (context().closed()) return;
      if (step == Step::kReadMore) {
        read_more();
        return;
      }
      if (!may_resume_reading()) return;
      read_paused_ = false;
    }
  }

  // What continue_reading does after one look at the staging buffer.
  enum class Step {
    kNextFrame,  // a frame was dispatched: look again
    kReadMore,   // the buffer holds no whole frame: read into it
    kStop,       // closed, paused, or reading a large frame on its own
  };

  // Dispatches the frame at the front of the staging buffer when it is
  // whole, or starts reading a frame too large for the buffer on its own.
  Step take_buffered_frame() {
    const size_t available = staging_end_ - staging_begin_;
    if (available < 4) return Step::kReadMore;
    const uint8_t* p = staging_.data() + staging_begin_;
    const int32_t size = static_cast<int32_t>(protocol::load_be32(p));
    const int32_t own_limit = context().max_frame_bytes();
    const bool lowered = own_limit > 0 && own_limit < limits_.max_frame_bytes;
    const int32_t limit = lowered ? own_limit : limits_.max_frame_bytes;
    if (size < 0 || size > limit) {
      EDDY_LOG_WARN("closing connection from {} (listener {}): request frame size {}"
                    " is outside 0..{} ({})",
                    context().peer(), context().listener(), size, limit,
                    lowered ? "before authentication: sasl.server.max.receive.size" : "socket.request.max.bytes");
      in_parse_ = false;
      close();
      return Step::kStop;
    }
    const size_t frame_size = static_cast<size_t>(size);
    const bool fits_staging = 4 + frame_size <= staging_.size();
    if (memory_ != nullptr && memory_->limit() != 0 && !fits_staging && frame_size > memory_->limit()) {
      EDDY_LOG_WARN("closing connection from {} (listener {}): request frame size {} exceeds "
                    "queued.max.request.bytes ({})",
                    context().peer(), context().listener(), frame_size,
                    memory_->limit());
      in_parse_ = false;
      close();
      return Step::kStop;
    }
    if (available - 4 >= frame_size) {
      protocol::FrameBytes frame(p + 4, p + 4 + frame_size);
      staging_begin_ += 4 + frame_size;
      dispatch(std::move(frame));
      return Step::kNextFrame;
    }
    if (fits_staging) return Step::kReadMore;
    // Too large for the staging buffer: read the rest straight into the
    // frame, which up to kWholeFrameBytes has its whole size at once and
    // beyond grows with what arrives (never resident for what the size
    // prefix merely claims: a client that claims 100 MB and sends 1 KB
    // costs about 1 KB). The whole frame is reserved before its first byte is kept (as
    // Kafka's memory pool does): frames that started always finish, none
    // can wait for memory another half-read frame holds.
    if (!reserve_large(frame_size)) {
      // The bytes stay in the staging buffer until memory frees.
      stop_frame_clock();
      return Step::kStop;
    }
    large_target_ = frame_size;
    large_have_ = available - 4;
    grow_large_frame(frame_size <= kWholeFrameBytes ? frame_size
                                                    : std::max(large_have_, kLargeFrameStep));
    std::memcpy(large_frame_.data(), p + 4, large_have_);
    staging_begin_ = staging_end_ = 0;
    in_parse_ = false;
    start_frame_clock();
    read_large_frame();
    return Step::kStop;
  }

  // The staging buffer holds part of a frame or nothing: compact it and
  // read on.
  void read_more() {
    if (staging_begin_ > 0) {
      std::memmove(staging_.data(), staging_.data() + staging_begin_, staging_end_ - staging_begin_);
      staging_end_ -= staging_begin_;
      staging_begin_ = 0;
    }
    if (staging_end_ == 0) {
      // Nothing buffered: wait until bytes arrive without holding the
      // staging buffer (an idle connection keeps none; it goes back to the
      // pool and is taken again when the client sends).
      release_staging();
      stop_frame_clock();
      reading_ = true;
      stream_->async_wait_readable([self = self()](const std::error_code& ec) { self->on_readable(ec); });
      return;
    }
    start_frame_clock();  // part of a frame is buffered
    read_into_staging();
  }

  void read_into_staging() {
    reading_ = true;
    stream_->async_read_some(asio::buffer(staging_.data() + staging_end_, staging_.size() - staging_end_),
                            [self = self()](const std::error_code& ec, size_t n) { self->on_read(ec, n); });
  }

  void on_readable(const std::error_code& ec) {
    reading_ = false;
    if (context().closed()) return;
    if (ec) {
      note_read_error(ec);
      return;
    }
    take_staging();
    if constexpr (kInlineIo) {
      // The bytes are there: read them now rather than through an
      // operation whose completion takes another turn of the loop.
      size_t n = 0;
      std::error_code read_ec =
          stream_->try_read_some(asio::buffer(staging_.data() + staging_end_, staging_.size() - staging_end_), &n);
      if (would_block(read_ec)) {
        read_more();  // woken for nothing after all: wait again
        return;
      }
      on_read(read_ec, n);
      return;
    }
    read_into_staging();
  }

  // An idle connection gives its staging buffer back (staging_pool.h).
  void release_staging() {
    if (!staging_.empty()) give_back_staging_buffer(staging_, staging_bytes_);
  }

  void take_staging() {
    if (staging_.empty()) staging_ = take_staging_buffer(staging_bytes_);
  }

  void on_read(const std::error_code& ec, size_t n) {
    reading_ = false;
    if (context().closed()) return;
    if (ec) {
      note_read_error(ec);
      return;
    }
    staging_end_ += n;
    last_activity_ms_ = port::monotonic_millis();
    continue_reading();
  }

  // Exactly `size` bytes, no more capacity (a vector left to grow itself
  // would keep up to twice the frame while the request waits). The new
  // bytes are not zeroed (FrameBytes): the socket overwrites them next.
  void grow_large_frame(size_t size) {
    large_frame_.reserve(size);
    large_frame_.resize(size);
  }

  // Invariant: large_have_ <= large_frame_.size() <= large_target_, and a
  // buffer beyond kWholeFrameBytes is at most twice the bytes received
  // (plus one step).
  void read_large_frame() {
    if (large_have_ == large_frame_.size()) {
      grow_large_frame(std::min(large_target_, large_have_ + std::max(large_have_, kLargeFrameStep)));
    }
    reading_ = true;
    stream_->async_read_some(asio::buffer(large_frame_.data() + large_have_, large_frame_.size() - large_have_),
                            [self = self()](const std::error_code& ec, size_t n) { self->on_large_read(ec, n); });
  }

  void on_large_read(const std::error_code& ec, size_t n) {
    reading_ = false;
    if (context().closed()) return;
    if (ec) {
      note_read_error(ec);
      return;
    }
    last_activity_ms_ = port::monotonic_millis();
    large_have_ += n;
    if (large_have_ < large_target_) {
      read_large_frame();
      return;
    }
    protocol::FrameBytes frame = std::move(large_frame_);
    large_frame_ = protocol::FrameBytes();
    large_have_ = 0;
    large_target_ = 0;
    const uint64_t reserved = large_reserved_;
    large_reserved_ = 0;
    dispatch(std::move(frame), reserved);
    if (!reading_ && !in_parse_) continue_reading();
  }

  void note_read_error(const std::error_code& ec) {
    size_t partial = (staging_end_ - staging_begin_) + large_have_;
    if (ec == asio::error::eof) {
      if (partial > 0) {
        EDDY_LOG_INFO("connection from {} (listener {}) closed by the client in the middle of a request "
                      "({} bytes of an incomplete frame)",
                      context().peer(), context().listener(), partial);
      } else {
        EDDY_LOG_DEBUG("connection from {} closed by the client", context().peer());
      }
    } else {
      EDDY_LOG_DEBUG("connection from {}: read failed: {}", context().peer(), ec.message());
    }
    close();
  }

  void dispatch(protocol::FrameBytes frame, uint64_t reserved = 0) {
    stop_frame_clock();  // this frame is whole; the next one's clock starts with its first bytes
    uint64_t sequence = first_pending_seq_ + pending_.size();
    pending_.emplace_back();
    pending_.back().reserved = reserved;
    handler_->on_frame(context(), std::move(frame), make_slot(sequence));
  }

  // Reading is paused and nothing stands in the way of resuming it now.
  bool may_resume_reading() const {
    return read_paused_ && !reading_ && !in_parse_ && may_read() && !over_limits();
  }

  // Called whenever outstanding requests or queued bytes went down.
  void maybe_resume_reading() {
    if (!may_resume_reading()) return;
    read_paused_ = false;
    continue_reading();
  }

  void on_handshake(const std::error_code& ec) {
    if (context().closed()) return;
    if (ec) {
      note_handshake_failure(context(), ec);
      close();
      return;
    }
    last_activity_ms_ = port::monotonic_millis();
    std::string principal;
    if (Status s = stream_->peer_principal(&principal); !s.ok()) {
      EDDY_LOG_WARN("connection from {} (listener {}): {}; closing it", context().peer(), context().listener(),
                    s.message());
      close();
      return;
    }
    EDDY_LOG_DEBUG("connection from {} (listener {}): {} as {}", context().peer(), context().listener(),
                   stream_->description(), principal.empty() ? context().principal() : principal);
    if (!principal.empty()) context().set_principal(std::move(principal));
    continue_reading();
  }

  // ---- order --------------------------------------------------------------

  static bool well_framed(const protocol::OutputBuffer& response) {
    const auto& chunks = response.chunks();
    if (chunks.empty() || chunks.front().is_file || chunks.front().length < 4) return false;
    const uint8_t* p = response.memory() + chunks.front().memory_offset;
    return protocol::load_be32(p) == response.size() - 4;
  }

  void release_in_order() {
    while (!pending_.empty() && pending_.front().state != Completion::kWaiting) {
      Pending entry = std::move(pending_.front());
      pending_.pop_front();
      ++first_pending_seq_;
      give_back(entry.reserved);
      if (entry.state == Completion::kRespond) {
        write_queue_.push(std::move(entry.response));
      } else if (entry.state == Completion::kClose) {
        // Its response (if any) is the last written. Later requests are not
        // answered: forget them (their slots then complete into nothing).
        if (entry.response.size() > 0) write_queue_.push(std::move(entry.response));
        closing_ = true;
        first_pending_seq_ += pending_.size();
        give_back_pending();
        pending_.clear();
      }
    }
    // Answers given while this connection's read chunk is being parsed
    // (acks=1 produces, metadata) go out together when the parse ends.
    if (in_parse_) return;
    start_write();
    if (context().closed()) return;
    close_if_drained();
    if (context().closed()) return;
    maybe_resume_reading();
  }

  void close_if_drained() {
    if (context().closed() || !(draining_ || closing_)) return;
    if (writing_ || !write_queue_.empty()) return;
    if (draining_ && !pending_.empty()) return;
    close();
  }

  // ---- write side ---------------------------------------------------------
  // write_queue_ keeps the cursor; this only starts the socket operations.

  void start_write() {
    if (writing_ || context().closed()) return;
    WriteQueue::Next next;
    if constexpr (kInlineIo) {
      // What the socket takes now goes out now, up to a turn's bytes (as
      // Asio's speculative write, but with no completion to run on a later
      // turn); what it does not take waits for the socket below.
      size_t budget = Stream::kSendFileTurnBytes;
      while (budget > 0 && write_queue_.next(&next)) {
        size_t want = 0;
        size_t n = 0;
        std::error_code ec;
        if (next.is_file) {
          want = static_cast<size_t>(std::min<uint64_t>(next.file_length, budget));
          ec = stream_->try_send_file(next.fd, next.file_offset, want, &n);
        } else {
          fill_gather(next);
          want = asio::buffer_size(gather_);
          ec = stream_->try_write_some(gather_, next.file_follows, &n);
        }
        if (ec && !would_block(ec)) {
          // Reported on a later turn, as a completion would be: start_write
          // runs inside complete(), whose caller (the broker answering a
          // list of waiters) must not see the connection close under it.
          writing_ = true;
          asio::post(stream_->get_executor(), [self = self(), ec] { self->on_written(ec, 0); });
          return;
        }
        if (n > 0) {
          last_activity_ms_ = port::monotonic_millis();
          write_queue_.advance(n);
          budget -= std::min(n, budget);
        }
        if (n < want) break;  // the socket is full
      }
    }
    if (!write_queue_.next(&next)) return;
    writing_ = true;
    if (next.is_file) {
      stream_->async_send_file(next.fd, next.file_offset, next.file_length,
                              [self = self()](const std::error_code& ec, size_t n) { self->on_written(ec, n); });
      return;
    }
    fill_gather(next);
    stream_->async_write(gather_,
                        [self = self()](const std::error_code& ec, size_t n) { self->on_written(ec, n); });
  }

  void fill_gather(const WriteQueue::Next& next) {
    gather_.clear();
    for (size_t i = 0; i < next.piece_count; ++i) gather_.emplace_back(next.pieces[i].data, next.pieces[i].length);
  }

  void on_written(const std::error_code& ec, size_t n) {
    writing_ = false;
    if (context().closed()) return;
    if (ec) {
      EDDY_LOG_DEBUG("connection from {}: write failed: {}", context().peer(), ec.message());
      close();
      return;
    }
    last_activity_ms_ = port::monotonic_millis();
    write_queue_.advance(n);
    start_write();
    close_if_drained();
    if (context().closed()) return;
    maybe_resume_reading();
  }

  // ---- timeouts -----------------------------------------------------------
  // One timer serves connections.max.idle.ms and eddy.request.read.timeout.ms:
  // it is set for the nearer deadline and, when it fires, checks both and
  // sets itself again.

  static constexpr int64_t kNoDeadline = INT64_MAX;

  // The clock of the frame being received starts (if not running yet).
  void start_frame_clock() {
    if (frame_started_ms_ != 0 || limits_.request_read_timeout_ms <= 0) return;
    frame_started_ms_ = port::monotonic_millis();
    arm_timer_at(frame_started_ms_ + limits_.request_read_timeout_ms);
  }
  // No frame is being received, or Eddy stopped reading (the client is not
  // to blame for that time).
  void stop_frame_clock() { frame_started_ms_ = 0; }

  // Wakes on_timer at due_ms unless an earlier wake-up is already set
  // (that one sets the next).
  void arm_timer_at(int64_t due_ms) {
    if (timer_due_ms_ != 0 && timer_due_ms_ <= due_ms) return;
    timer_due_ms_ = due_ms;
    idle_timer_->expires_after(std::chrono::milliseconds(std::max<int64_t>(0, due_ms - port::monotonic_millis())));
    idle_timer_->async_wait([self = self()](const std::error_code& ec) {
      if (ec) return;  // cancelled: replaced by a nearer deadline, or closed
      self->timer_due_ms_ = 0;
      self->on_timer();
    });
  }

  void on_timer() {
    if (context().closed()) return;
    int64_t now = port::monotonic_millis();
    int64_t next = kNoDeadline;
    if (frame_started_ms_ != 0 && limits_.request_read_timeout_ms > 0) {
      int64_t waited_ms = now - frame_started_ms_;
      if (waited_ms >= limits_.request_read_timeout_ms) {
        EDDY_LOG_INFO("closing connection from {} (listener {}): a request frame still incomplete after {}"
                      " ms ({} bytes of it received; eddy.request.read.timeout.ms)",
                      context().peer(), context().listener(), waited_ms,
                      (staging_end_ - staging_begin_) + large_have_);
        close();
        return;
      }
      next = frame_started_ms_ + limits_.request_read_timeout_ms;
    }
    if (limits_.idle_timeout_ms > 0) {
      // A request the handler still works on (e.g. a parked fetch) keeps
      // the connection alive; the clock restarts when it is answered.
      if (!pending_.empty()) last_activity_ms_ = now;
      int64_t idle_ms = now - last_activity_ms_;
      if (idle_ms >= limits_.idle_timeout_ms) {
        EDDY_LOG_INFO("closing connection from {} (listener {}): idle for {}"
                      " ms (connections.max.idle.ms)",
                      context().peer(), context().listener(), idle_ms);
        close();
        return;
      }
      next = std::min(next, now + limits_.idle_timeout_ms - idle_ms);
    }
    if (next != kNoDeadline) arm_timer_at(next);
  }

  // Engaged for the whole life of the object (optional only to construct
  // the timer from the stream's executor). Pending operations may refer to
  // them, so they are not destroyed on close().
  std::optional<Stream> stream_;
  std::optional<asio::steady_timer> idle_timer_;
  ConnectionLimits limits_;
  FrameHandler* handler_;
  ConnectionOwner* owner_;
  RequestMemory* memory_;
  uint64_t large_reserved_ = 0;  // RequestMemory held by the large frame being read
  bool memory_paused_ = false;    // waiting for RequestMemory

  // Read side. Invariant: staging_begin_ <= staging_end_ <= staging_.size();
  // staging_ is empty (released) only while staging_end_ == 0.
  size_t staging_bytes_;
  std::vector<uint8_t> staging_;
  size_t staging_begin_ = 0;
  size_t staging_end_ = 0;
  protocol::FrameBytes large_frame_;
  size_t large_have_ = 0;
  size_t large_target_ = 0;  // the frame size its prefix gave
  bool reading_ = false;
  bool in_parse_ = false;
  bool read_paused_ = false;
  bool draining_ = false;  // graceful stop
  bool closing_ = false;   // a close_connection() reached the front
  bool close_requested_ = false;  // a request completed with close_connection()
  int64_t last_activity_ms_ = 0;
  // When the frame being received began (after the previous one ended, or
  // reading resumed); 0: none is (see start_frame_clock).
  int64_t frame_started_ms_ = 0;
  int64_t timer_due_ms_ = 0;  // when the timer is set to fire; 0: not set

  // Requests [first_pending_seq_, first_pending_seq_ + pending_.size()) are
  // dispatched and not yet released; the front one is always kWaiting.
  uint64_t first_pending_seq_ = 0;
  std::deque<Pending> pending_;

  // Write side.
  WriteQueue write_queue_;
  bool writing_ = false;
  std::vector<asio::const_buffer> gather_;
};

}  // namespace eddy::net

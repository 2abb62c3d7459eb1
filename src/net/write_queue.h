// The responses a connection has released but not yet written, in order,
// with the cursor of how much of them the socket took. Pure bookkeeping
// (no Asio, no socket): the connection asks what to write next, writes it,
// and reports how many bytes went out.
//
// What to write next is either one file region (sent with sendfile) or a
// run of memory pieces, across responses, up to the next file region or
// kMaxGather pieces (sent with one gathered write).
//
// Invariant: the cursor (front response, chunk_, offset_) never points past
// the end of a chunk; after next() or advance() returned, the front
// response has bytes left to write (fully written ones are dropped).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>

#include "protocol/output_buffer.h"

namespace eddy::net {

class WriteQueue {
 public:
  static constexpr size_t kMaxGather = 16;

  struct Piece {
    const uint8_t* data = nullptr;
    size_t length = 0;
  };
  struct Next {
    bool is_file = false;
    // When is_file: the part of one file region not written yet.
    int fd = -1;
    uint64_t file_offset = 0;
    uint64_t file_length = 0;
    // Otherwise: pieces[0, piece_count), in order.
    std::array<Piece, kMaxGather> pieces{};
    size_t piece_count = 0;
    // A file region follows the pieces at once (a fetch response's header
    // before its records): the writer may hold the pieces back for it.
    bool file_follows = false;
  };

  void push(protocol::OutputBuffer response);
  // Fills *out with what to write next; false when everything is written.
  bool next(Next* out);
  // The socket took n bytes of what next() gave.
  // REQUIRES: n is at most the bytes of the last next().
  void advance(size_t n);
  void clear();

  // Responses not fully written (one partly written counts).
  size_t size() const { return queue_.size(); }
  bool empty() const { return queue_.empty(); }
  // Memory bytes of the queued responses (file regions are not counted:
  // they are not held in memory).
  size_t queued_bytes() const { return queued_bytes_; }

 private:
  // Moves the cursor past chunks with nothing left and drops fully written
  // responses from the front.
  void pop_written();

  std::deque<protocol::OutputBuffer> queue_;
  size_t chunk_ = 0;   // of the front response
  size_t offset_ = 0;  // into that chunk
  size_t queued_bytes_ = 0;
};

}  // namespace eddy::net

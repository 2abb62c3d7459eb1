#include "net/write_queue.h"

#include <algorithm>
#include <utility>

namespace eddy::net {

void WriteQueue::push(protocol::OutputBuffer response) {
  queued_bytes_ += response.memory_size();
  queue_.push_back(std::move(response));
}

void WriteQueue::pop_written() {
  while (!queue_.empty()) {
    const auto& chunks = queue_.front().chunks();
    while (chunk_ < chunks.size() && offset_ == chunks[chunk_].length) {
      ++chunk_;
      offset_ = 0;
    }
    if (chunk_ < chunks.size()) return;
    queued_bytes_ -= queue_.front().memory_size();
    queue_.pop_front();
    chunk_ = 0;
    offset_ = 0;
  }
}

bool WriteQueue::next(Next* out) {
  pop_written();
  if (queue_.empty()) return false;
  const protocol::OutputBuffer::Chunk& first = queue_.front().chunks()[chunk_];
  out->piece_count = 0;
  out->file_follows = false;
  out->is_file = first.is_file;
  if (first.is_file) {
    out->fd = first.file.fd;
    out->file_offset = first.file.offset + offset_;
    out->file_length = first.length - offset_;
    return true;
  }
  size_t chunk_index = chunk_;
  size_t offset = offset_;
  for (const protocol::OutputBuffer& buffer : queue_) {
    const auto& chunks = buffer.chunks();
    for (; chunk_index < chunks.size() && out->piece_count < kMaxGather; ++chunk_index) {
      const auto& c = chunks[chunk_index];
      if (c.is_file) {
        out->file_follows = true;
        return true;
      }
      out->pieces[out->piece_count++] = Piece{buffer.memory() + c.memory_offset + offset, c.length - offset};
      offset = 0;
    }
    if (out->piece_count >= kMaxGather) return true;
    chunk_index = 0;
  }
  return true;
}

void WriteQueue::advance(size_t n) {
  pop_written();
  while (n > 0 && !queue_.empty()) {
    const auto& chunks = queue_.front().chunks();
    const size_t take = std::min(chunks[chunk_].length - offset_, n);
    offset_ += take;
    n -= take;
    pop_written();
  }
}

void WriteQueue::clear() {
  queue_.clear();
  chunk_ = 0;
  offset_ = 0;
  queued_bytes_ = 0;
}

}  // namespace eddy::net

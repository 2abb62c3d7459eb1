// An encoded message as a list of chunks: bytes held in memory, interleaved
// with regions of files. Encoding a Fetch response puts the record batches in
// as file regions, so the network layer can send them with sendfile(2) and
// they never pass through user space (the zero-copy read path).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

namespace eddy::protocol {

// A byte range of an open file. keep_alive holds whatever keeps fd open and
// the range unchanged until the chunk has been sent (e.g. the segment).
struct FileRegion {
  int fd = -1;
  uint64_t offset = 0;
  uint64_t length = 0;
  std::shared_ptr<const void> keep_alive;
};

class OutputBuffer {
 public:
  struct Chunk {
    bool is_file = false;
    size_t memory_offset = 0;  // into memory(), when !is_file
    size_t length = 0;
    FileRegion file;           // when is_file
  };

  // Appends bytes to the memory part; extends the last chunk when it is a
  // memory chunk.
  void append(const void* data, size_t length) {
    if (length == 0) return;
    size_t at = memory_.size();
    memory_.resize(at + length);
    std::memcpy(memory_.data() + at, data, length);
    extend_memory_chunk(at, length);
  }
  void append(std::span<const uint8_t> bytes) { append(bytes.data(), bytes.size()); }

  // Reserves length bytes in memory (zeroed) and returns their offset, for a
  // value written later with patch() (e.g. a size prefix).
  size_t reserve(size_t length) {
    size_t at = memory_.size();
    memory_.resize(at + length, 0);
    extend_memory_chunk(at, length);
    return at;
  }
  // REQUIRES: [memory_offset, memory_offset+length) was appended or reserved.
  void patch(size_t memory_offset, const void* data, size_t length) {
    std::memcpy(memory_.data() + memory_offset, data, length);
  }

  void append_file(FileRegion region) {
    if (region.length == 0) return;
    total_ += region.length;
    Chunk c;
    c.is_file = true;
    c.length = static_cast<size_t>(region.length);  // a region is part of one response: below 2 GiB
    c.file = std::move(region);
    chunks_.push_back(std::move(c));
  }

  // Appends everything of other (memory copied, file regions shared).
  void append(const OutputBuffer& other) {
    for (const Chunk& c : other.chunks_) {
      if (c.is_file) {
        append_file(c.file);
      } else {
        append(other.memory_.data() + c.memory_offset, c.length);
      }
    }
  }

  // Total encoded size: memory bytes plus file region lengths.
  size_t size() const { return total_; }
  const std::vector<Chunk>& chunks() const { return chunks_; }
  const uint8_t* memory() const { return memory_.data(); }
  size_t memory_size() const { return memory_.size(); }
  bool has_file_regions() const { return memory_.size() != total_; }

  // The bytes of a chunk that lives in memory.
  std::span<const uint8_t> memory_of(const Chunk& c) const {
    return {memory_.data() + c.memory_offset, c.length};
  }

  void clear() {
    memory_.clear();
    chunks_.clear();
    total_ = 0;
  }

 private:
  void extend_memory_chunk(size_t at, size_t length) {
    total_ += length;
    if (!chunks_.empty() && !chunks_.back().is_file &&
        chunks_.back().memory_offset + chunks_.back().length == at) {
      chunks_.back().length += length;
      return;
    }
    Chunk c;
    c.memory_offset = at;
    c.length = length;
    chunks_.push_back(std::move(c));
  }

  std::vector<uint8_t> memory_;
  std::vector<Chunk> chunks_;
  size_t total_ = 0;
};

}  // namespace eddy::protocol

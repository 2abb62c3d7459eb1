// A segment: one preallocated file of fixed size named by its base offset
// (20 digits + ".log"), holding record batches exactly as on the wire, back
// to back from position 0. Bytes after end_position() are zeros or stale
// bytes of an earlier use of the file; they are never served.
//
// Threading: a Segment belongs to the thread that owns its PartitionLog.
// Its SegmentFile is shared (by shared_ptr) with the flusher, which only
// calls sync_data() on it, and with readers' FileRegions.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "port/port.h"
#include "port/status.h"
#include "protocol/output_buffer.h"
#include "storage/segment_index.h"

namespace eddy::storage {

// The open file of a segment. Shared with the flusher and with readers.
struct SegmentFile {
  port::File file;
};

// A batch and where it lies in its segment.
struct BatchPosition {
  uint64_t position = 0;
  BatchInfo info;
};

class Segment {
 public:
  // Creates (or empties) path and preallocates capacity bytes.
  // REQUIRES capacity <= kMaxSegmentBytes (log_config.h).
  static Status create(const std::string& path, int64_t base_offset, uint64_t capacity, uint32_t index_interval,
                       std::unique_ptr<Segment>* out);
  // Opens an existing segment file; its index is empty until recovery fills
  // it (scan or index file). Its capacity is the file's size, but at most
  // kMaxSegmentBytes (log_config.h): bytes past that are ignored.
  static Status open(const std::string& path, int64_t base_offset, uint32_t index_interval,
                     std::unique_ptr<Segment>* out);
  // A new, empty segment that takes over the file of retired, which the
  // caller has already renamed to path. REQUIRES !retired->has_readers().
  static std::unique_ptr<Segment> reuse(std::unique_ptr<Segment> retired, const std::string& path,
                                        int64_t base_offset, uint32_t index_interval);

  const std::string& path() const { return path_; }
  int64_t base_offset() const { return index_.base_offset(); }
  // Offset after the last batch (base_offset() when empty).
  int64_t next_offset() const { return index_.next_offset(); }
  uint64_t end_position() const { return index_.end_position(); }
  uint64_t capacity() const { return capacity_; }
  bool empty() const { return index_.empty(); }
  bool has_room(uint64_t bytes) const { return bytes <= capacity_ - index_.end_position(); }
  int64_t max_timestamp() const { return index_.max_timestamp(); }

  const SegmentIndex& index() const { return index_; }
  // For recovery: replaces the index (loaded from file or rebuilt by a scan).
  void set_index(SegmentIndex index) { index_ = std::move(index); }
  // Gives back the index's spare capacity (the segment receives no more
  // batches).
  void shrink_index() { index_.shrink_to_fit(); }

  // Writes batch at end_position() and indexes it. REQUIRES
  // has_room(batch.size()) and info describes batch with
  // info.base_offset == next_offset(). On error nothing is indexed.
  Status append(std::span<const uint8_t> batch, const BatchInfo& info);

  // Drops the batches at and after position: rebuilds the index from the
  // batch headers before it and zeroes [position, end_position()) in the
  // file (not synced). REQUIRES position is a batch boundary <= the end of
  // the batches the file holds (end_position(), or more for a fresh index:
  // a copy of another segment's prefix), and no reader holds a region of
  // the bytes zeroed. On error the index is unchanged.
  Status truncate(uint64_t position);

  // pread of [position, position+length) (tools, tests, recovery checks).
  Status read(uint64_t position, void* out, size_t length) const;

  // The batch holding offset. REQUIRES base_offset() <= offset < next_offset().
  Status locate(int64_t offset, BatchPosition* out) const;
  // Calls each(batch, header, &stop) for every batch from the one holding
  // offset to the segment's end, in file order, until it sets stop or
  // returns an error (returned). header: the batch's first
  // batch_layout::kHeaderSize bytes (its fixed fields), valid during the
  // call; read through a small buffer, never the records.
  // REQUIRES base_offset() <= offset < next_offset().
  using HeaderVisitor =
      std::function<Status(const BatchPosition& batch, std::span<const uint8_t> header, bool* stop)>;
  Status visit_headers(int64_t offset, const HeaderVisitor& each) const;
  // Where a read starting at the batch boundary `from` ends: the largest batch
  // boundary <= limit (or the end of the first batch, when include_first and
  // it is larger) such that every batch before it has base offset <
  // upper_offset. *next_offset is the offset after the last included batch
  // (unchanged when none is included).
  Status read_end(uint64_t from, uint64_t limit, int64_t upper_offset, bool include_first, uint64_t* end,
                  int64_t* next_offset) const;
  // The first batch holding offsets >= min_offset whose maxTimestamp >=
  // timestamp; *found false when none.
  Status find_timestamp(int64_t timestamp, int64_t min_offset, BatchPosition* out, bool* found) const;
  // Extends the file to capacity bytes, preallocated (an active segment
  // found shorter than segment.bytes).
  Status grow_to(uint64_t capacity);

  // A region for the zero-copy path; keeps the file open until released.
  protocol::FileRegion region(uint64_t position, uint64_t length) const;
  // True while a FileRegion returned by region() is alive. REQUIRES: called on
  // the owner thread, which is the only one copying or releasing regions.
  bool has_readers() const { return lease_.use_count() > 1; }

  const std::shared_ptr<SegmentFile>& file() const { return file_; }

 private:
  Segment(std::string path, std::shared_ptr<SegmentFile> file, uint64_t capacity, int64_t base_offset,
          uint32_t index_interval);

  struct Lease {
    std::shared_ptr<SegmentFile> file;
  };

  std::string path_;
  std::shared_ptr<SegmentFile> file_;
  std::shared_ptr<Lease> lease_;
  uint64_t capacity_;
  SegmentIndex index_;
};

// Segment and index file names: the base offset in 20 digits.
std::string segment_file_name(int64_t base_offset);  // "00000000000000000042.log"
std::string index_file_name(int64_t base_offset);    // "00000000000000000042.index"
// Parses "<20 digits><suffix>"; false for any other name.
bool parse_offset_file_name(const std::string& name, const char* suffix, int64_t* base_offset);

}  // namespace eddy::storage

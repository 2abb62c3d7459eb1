// Recovery of a segment after an unclean stop: validate batches from the
// start of the file, and zero what follows the last valid one.
#pragma once

#include <cstdint>
#include <string>

#include "port/port.h"
#include "port/status.h"
#include "storage/segment_index.h"

namespace eddy::storage {

struct ScanOutcome {
  uint64_t bytes_read = 0;
  // Why the scan stopped at index->end_position(): empty when it met zeros or
  // the end of the file (the normal end of data), else the first problem
  // ("CRC mismatch", "offset 12, expected 40", ...).
  std::string stop_reason;
  // Uncompressed batches whose records are malformed (stored by a version
  // without record validation): kept, reported. The first one's offset.
  uint64_t malformed_batches = 0;
  int64_t first_malformed_offset = -1;
};

// Rebuilds *index (empty, with the segment's base offset) from the batches
// of file. A batch is valid when its length fits the file, its header is
// consistent, magic is 2, its CRC-32C matches and its base offset is the
// expected next offset (the segment's base offset for the first). The first
// invalid batch ends the scan; bytes after it are not looked at. The records
// of uncompressed batches are walked too (protocol/record_validator.h, in
// place): malformed ones are counted in *out, not dropped (what follows
// them is good data; the forwarder skips them).
Status scan_segment(const port::File& file, uint64_t capacity, SegmentIndex* index, ScanOutcome* out);

// Makes [from, capacity) read as zeros, writing only where a byte is not
// already zero (flash wear, and no write at all for a fresh file).
// *dropped_bytes: distance from `from` to the end of the last non-zero byte.
Status zero_tail(port::File& file, uint64_t from, uint64_t capacity, uint64_t* dropped_bytes,
                 uint64_t* bytes_read, uint64_t* bytes_written);

// Cheap check of a segment whose index came from its index file: the first
// and last batches lie where the index says, are valid and carry the
// expected offsets.
bool verify_indexed_segment(const port::File& file, uint64_t capacity, const SegmentIndex& index);

}  // namespace eddy::storage

// What a link reads back from the central cluster to find batches it sent but
// never saw acknowledged (Link::settle, README.md "Beyond the central
// cluster's memory"): a partition's end offset, and the headers of the
// batches in its log from an offset on. Blocking calls on the link's client.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "client/client.h"
#include "port/status.h"

namespace eddy::forward {

// The header fields of one batch in the central log that identify it: who
// wrote it with which sequence, where, and its CRC (which covers everything
// the link sent but the base offset and the partition leader epoch).
struct CentralBatch {
  int64_t base_offset = 0;
  int32_t last_offset_delta = 0;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t base_sequence = -1;
  uint32_t crc = 0;
};

// One partition's latest offset (ListOffsets, read_uncommitted), or its
// earliest (timestamp -2).
struct EndOffsetQuery {
  std::string topic;
  int32_t partition = 0;
  int64_t timestamp = -1;  // ListOffsets' -1 latest, -2 earliest
  int64_t end = -1;  // the offset, when status is ok
  Status status;     // the partition's own error
};

// The end offsets of every queried partition led by node, in one
// ListOffsets request. Non-ok when the request itself failed.
Status central_end_offsets(client::Client* client, int32_t node, std::vector<EndOffsetQuery>* queries);

// One Fetch of topic-partition from node at offset from (at most max_bytes
// of records, at least one whole batch): the headers of the whole batches
// it returned that end at or after from, in order, and *next, the offset
// after the last of them (from when there were none). *bytes: the records
// bytes the answer carried. An offset below the central log's start is
// kNotFound.
Status read_central_batches(client::Client* client, int32_t node, const std::string& topic, int32_t partition,
                            int64_t from, int32_t max_bytes, std::vector<CentralBatch>* out, int64_t* next,
                            size_t* bytes);

}  // namespace eddy::forward

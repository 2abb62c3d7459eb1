// A blocking consumer of explicitly assigned partitions (no consumer group):
// start offsets resolved with ListOffsets, then Fetch long-polls to each
// partition's leader, records decoded by FetchDecoder.
//
//   Consumer consumer(&client, ConsumerOptions{});
//   consumer.assign("t", {{0, kEarliestOffset}});
//   consumer.poll(Deadline::after_ms(1000), [](const ConsumerRecord& r) { ...; return true; }, &n);
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "client/client.h"
#include "client/fetch_decoder.h"
#include "port/status.h"
#include "protocol/errors.h"

namespace eddy::protocol {
struct FetchResponse;
}

namespace eddy::client {

// Special start offsets (Kafka's ListOffsets timestamps).
inline constexpr int64_t kLatestOffset = -1;
inline constexpr int64_t kEarliestOffset = -2;

enum class OffsetReset { kEarliest, kLatest, kNone };

struct ConsumerOptions {
  int32_t max_wait_ms = 500;   // long-poll time of one Fetch
  int32_t min_bytes = 1;
  int32_t max_bytes = 50 << 20;
  int32_t partition_max_bytes = 1 << 20;
  // Where to go when the position is out of range (data deleted by
  // retention, or an offset past the end); kNone makes it an error.
  OffsetReset reset = OffsetReset::kLatest;
  size_t max_decompressed_bytes = 256u << 20;
};

struct ConsumerRecord {
  const std::string& topic;
  int32_t partition;
  const DecodedRecord& decoded;  // offset, timestamp, key/value/headers views
};

// Returns false to stop delivery after this record.
using ConsumerCallback = std::function<bool(const ConsumerRecord&)>;

class Consumer {
 public:
  Consumer(Client* client, ConsumerOptions options);

  // Assigns partitions of one topic (replacing any assignment), each starting
  // at an offset or at kEarliestOffset/kLatestOffset, resolved now. An
  // explicit offset outside the log is resolved on the first fetch by the
  // reset policy. kNotFound for an unknown topic or partition.
  Status assign(const std::string& topic, const std::vector<std::pair<int32_t, int64_t>>& starts);

  // One round of fetches (one per leader, each waiting up to max_wait_ms, cut
  // to the deadline) delivering records in offset order per partition.
  // *delivered counts the records passed to on_record. A retriable status
  // (leader moved, connection lost; metadata has been refreshed) means "poll
  // again"; the caller decides how long to keep trying. A topic deleted
  // meanwhile is kNotFound.
  Status poll(Deadline deadline, const ConsumerCallback& on_record, size_t* delivered);

  // The next offset to read of an assigned partition (-1 when unassigned).
  int64_t position(int32_t partition) const;
  const std::string& topic() const { return topic_; }

  // Offsets for partitions of topic by ListOffsets: timestamp kLatestOffset,
  // kEarliestOffset, or a time in ms (the first offset at or after it).
  Status list_offsets(const std::string& topic, const std::vector<int32_t>& partitions, int64_t timestamp,
                      std::map<int32_t, int64_t>* offsets);

 private:
  struct PollRound;
  Status reset_position(int32_t partition, OffsetReset how);
  // One Fetch of partitions from their leader; *frame owns what *response views.
  Status fetch_from(int32_t leader, const std::vector<int32_t>& partitions, int64_t wait_ms,
                    protocol::FetchResponse* response, std::vector<uint8_t>* frame);
  // Hands each fetched record to on_record and moves the positions on.
  Status deliver(const protocol::FetchResponse& response, const ConsumerCallback& on_record, size_t* delivered,
                 PollRound* round);
  // After a round with unknown leaders or retriable failures.
  Status refresh_after(Deadline deadline, Status retry_error);

  Client* client_;
  ConsumerOptions options_;
  FetchDecoder decoder_;
  std::string topic_;
  std::map<int32_t, int64_t> positions_;
};

}  // namespace eddy::client

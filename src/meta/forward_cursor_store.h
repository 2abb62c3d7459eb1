// Forward cursors: per store-and-forward link and partition, the next local
// offset to send to the central cluster. A cursor is saved after the central
// cluster acknowledged everything before it, so a restart resends at most
// what was in flight (at-least-once).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "meta/sqlite_db.h"
#include "meta/status.h"

namespace eddy::meta {

struct ForwardCursor {
  std::string topic;
  int32_t partition = 0;
  int64_t next_offset = 0;

  friend bool operator==(const ForwardCursor&, const ForwardCursor&) = default;
};

class ForwardCursorStore {
 public:
  explicit ForwardCursorStore(Database* db) : db_(db) {}

  // Inserts or replaces the cursors of link, in one transaction.
  // invalid_argument for a negative partition or offset.
  Status save(const std::string& link, const std::vector<ForwardCursor>& cursors);
  // Every cursor of link, sorted by topic then partition.
  Status load(const std::string& link, std::vector<ForwardCursor>* out);
  // One cursor; not_found when none was saved.
  Status get(const std::string& link, const std::string& topic, int32_t partition, int64_t* next_offset);
  // Links having cursors, sorted (to find links no longer configured).
  Status list_links(std::vector<std::string>* out);
  Status remove_link(const std::string& link);

 private:
  Database* db_;
};

}  // namespace eddy::meta

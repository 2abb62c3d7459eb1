// Static group members (KIP-345, group.instance.id): what the group
// coordinator needs to recognise a member after a restart without a
// rebalance. Subscription and assignment are opaque bytes (the consumer
// protocol's metadata and assignment, as the member sent/received them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "meta/sqlite_db.h"
#include "port/status.h"

namespace eddy::meta {

struct StaticMember {
  std::string group_id;
  std::string group_instance_id;
  std::string member_id;
  std::string client_id;
  std::string client_host;
  std::string protocol_type;  // e.g. "consumer"
  std::string protocol_name;  // e.g. "range"
  int32_t generation_id = -1;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = 0;
  std::vector<uint8_t> subscription;
  std::vector<uint8_t> assignment;

  friend bool operator==(const StaticMember&, const StaticMember&) = default;
};

class StaticMemberStore {
 public:
  explicit StaticMemberStore(Database* db) : db_(db) {}

  // Inserts or replaces members by (group_id, group_instance_id), in one
  // transaction (a rebalance saves the whole group at once).
  Status save(const std::vector<StaticMember>& members);
  Status save(const StaticMember& member) { return save(std::vector<StaticMember>{member}); }

  // The members of group, sorted by instance id.
  Status load(const std::string& group_id, std::vector<StaticMember>* out);
  // Every member of every group, sorted by group then instance id (startup).
  Status load_all(std::vector<StaticMember>* out);

  // Deletes one member; *removed (optional) tells whether it existed.
  Status remove(const std::string& group_id, const std::string& group_instance_id, bool* removed = nullptr);
  Status remove_group(const std::string& group_id);
  // Every member of every group (a cluster node loading a snapshot).
  Status remove_all();

 private:
  Status load_where(const std::string& where, const std::string* group_id, std::vector<StaticMember>* out);

  Database* db_;
};

}  // namespace eddy::meta

// Topics: name, id, partition count, replication factor and topic-level
// config overrides (only the keys set on the topic; defaults live in the
// broker's configuration).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "meta/config_change.h"
#include "meta/sqlite_db.h"
#include "meta/uuid.h"
#include "port/status.h"

namespace eddy::meta {

struct TopicRecord {
  std::string name;
  Uuid id;
  int32_t partition_count = 0;
  int16_t replication_factor = 0;
  std::map<std::string, std::string> configs;
};

struct NewTopic {
  std::string name;
  int32_t partition_count = 1;
  int16_t replication_factor = 1;
  std::map<std::string, std::string> configs;
  Uuid id;  // zero: a random one is generated (a Raft follower passes the leader's)
  // A cluster node: partition i's replicas (partition_count lists, written
  // with the topic in one transaction); empty on a single node.
  std::vector<std::vector<int32_t>> replicas;
};

class TopicStore {
 public:
  explicit TopicStore(Database* db) : db_(db) {}

  // Creates the topic; *out (optional) receives it with its id. Refuses, with
  // Kafka's wording in the message:
  //   invalid_argument  illegal name (topic_name_error), a name colliding with
  //                     an existing one ('.' vs '_'), partition_count < 1,
  //                     replication_factor < 1, an empty config key;
  //   already_exists    the name (or the given id) is taken.
  Status create(const NewTopic& topic, TopicRecord* out);

  // not_found when there is no such topic.
  Status get(const std::string& name, TopicRecord* out);
  Status get_by_id(const Uuid& id, TopicRecord* out);
  // Every topic, sorted by name.
  Status list(std::vector<TopicRecord>* out);

  // Deletes the topic, its configs, and everything the meta store keeps per
  // partition of it (committed offsets of every group, producer snapshots),
  // in one transaction, so a topic re-created under the same name starts
  // clean (forward cursors live in forward.db; the links drop those of a
  // deleted topic). not_found when absent.
  Status remove(const std::string& name);

  // CreatePartitions. REQUIRES nothing; refuses (invalid_argument) a count
  // that is not larger than the current one, as Kafka does. new_replicas: a
  // cluster node's replicas of the new partitions (empty, or one list each).
  Status set_partition_count(const std::string& name, int32_t partition_count,
                             const std::vector<std::vector<int32_t>>& new_replicas = {});

  // IncrementalAlterConfigs SET/DELETE on the topic's overrides, all or
  // nothing. Deleting a key that is not set is not an error (Kafka).
  Status alter_configs(const std::string& name, const std::vector<ConfigChange>& changes);

 private:
  Status load_configs(const Uuid& id, std::map<std::string, std::string>* out);
  // create()'s steps, inside its transaction: the name is neither taken nor
  // colliding ('.' vs '_'); the id given (unused) or a fresh random one;
  // the rows of the topic and its configs.
  Status check_name_is_free(const std::string& name);
  Status choose_id(const Uuid& wanted, Uuid* id);
  Status insert(const TopicRecord& record);
  // partition_replicas rows for partitions [first, first + replicas.size()).
  Status insert_replicas(const Uuid& id, int32_t first, const std::vector<std::vector<int32_t>>& replicas);
  // Steps st (a bound SELECT name, topic_id, partition_count,
  // replication_factor) once and fills *out; not_found(missing) when no row.
  Status read_topic(Statement* st, const std::string& missing, TopicRecord* out);

  Database* db_;
};

}  // namespace eddy::meta

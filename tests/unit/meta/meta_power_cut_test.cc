// Power cuts of the metadata databases: eddy.db (MetaStore) and forward.db
// (ForwardProgress) under a mixed load — topics created and deleted with
// their configs, broker configs, committed offsets, static members,
// producer-id blocks, producer snapshots, forward cursors, clean closes —
// lose power at a random call into SQLite's VFS, again and again; after each
// cut the disk holds only what a sync covered plus a random part of the rest
// (power_cut_vfs.h), and the reopened databases must be sound:
//   - both open (never "malformed"; the schema check on open and PRAGMA
//     integrity_check pass) and eddy.db keeps its cluster id;
//   - they hold exactly what the acknowledged operations (those that
//     returned ok) left, or that plus the one operation the cut interrupted,
//     as a whole: every acknowledged change is there, nothing unacknowledged
//     appears half-applied;
//   - producer ids never go backwards: every id handed out, across cuts, is
//     greater than every id handed out before;
//   - forward cursors never go below the last acknowledged save (the load
//     only moves them forward, so this is part of the state check; a
//     mismatch names the cursor).
//
//   EDDY_POWER_CUTS      number of cuts (default 1000; `make power-cuts` runs 20 000)
//   EDDY_POWER_CUT_SEED  the seed to replay (each run prints the one it used)
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "meta/forward_progress.h"
#include "meta/meta_store.h"
#include "port/file_interceptor.h"
#include "port/log.h"
#include "port/port.h"
#include "tests/unit/meta/power_cut_vfs.h"
#include "tests/unit/port/test_dir.h"

namespace eddy::meta {
namespace {

using testing::DirectorySyncReporter;
using testing::PowerCutVfs;

// Producer ids reserved per durable write: small, so that blocks are
// reserved often.
constexpr int32_t kBlockSize = 3;
// The cut comes within this many file-changing VFS calls of the start of a
// round (a round runs about a hundred operations).
constexpr uint64_t kCutWindow = 600;
constexpr int kMaxOpsPerRound = 150;

const char* const kTopics[] = {"t0", "t1", "t2", "t3", "t4", "t5"};
const char* const kGroups[] = {"g0", "g1", "g2"};
const char* const kLinks[] = {"dc", "backup"};
const char* const kConfigKeys[] = {"retention.ms", "cleanup.policy", "segment.bytes", "eddy.full.policy"};

uint64_t env_number(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

template <typename T, size_t N>
const T& pick(std::mt19937_64& rng, const T (&items)[N]) {
  return items[rng() % N];
}

int64_t number(std::mt19937_64& rng, int64_t below) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(below)); }

// Text of length up to max (sometimes long, so that a transaction spans
// several pages and the WAL several frames).
std::string text(std::mt19937_64& rng, size_t max) {
  size_t length = rng() % 4 == 0 ? rng() % (max + 1) : rng() % 12;
  std::string s(length, 'a');
  for (char& c : s) c = static_cast<char>('a' + rng() % 26);
  return s;
}

std::vector<uint8_t> bytes(std::mt19937_64& rng, size_t max) {
  std::string s = text(rng, max);
  return std::vector<uint8_t>(s.begin(), s.end());
}

// ---------------------------------------------------------------------------
// The state: everything both databases hold, as text keyed by what
// identifies a row. The model builds it from the operations; read_state
// from the reopened databases; the same functions spell both.
// ---------------------------------------------------------------------------

using State = std::map<std::string, std::string>;

std::string join(std::initializer_list<std::string> parts) {
  std::string out;
  for (const std::string& p : parts) {
    if (!out.empty()) out += '/';
    out += p;
  }
  return out;
}

std::string topic_key(const std::string& name) { return join({"topic", name}); }
std::string topic_value(const Uuid& id, int32_t partitions, int16_t replication) {
  return join({id.to_string(), std::to_string(partitions), std::to_string(replication)});
}
std::string topic_config_key(const std::string& name, const std::string& key) { return join({"tconf", name, key}); }
std::string broker_config_key(const std::string& key) { return join({"bconf", key}); }
std::string offset_key(const std::string& group, const std::string& topic, int32_t partition) {
  return join({"off", group, topic, std::to_string(partition)});
}
std::string offset_value(const CommittedOffset& o) {
  return join({std::to_string(o.offset), std::to_string(o.leader_epoch), o.metadata,
               std::to_string(o.commit_timestamp_ms)});
}
std::string member_key(const StaticMember& m) { return join({"member", m.group_id, m.group_instance_id}); }
std::string member_value(const StaticMember& m) {
  return join({m.member_id, m.client_id, m.client_host, m.protocol_type, m.protocol_name,
               std::to_string(m.generation_id), std::to_string(m.session_timeout_ms),
               std::to_string(m.rebalance_timeout_ms), std::string(m.subscription.begin(), m.subscription.end()),
               std::string(m.assignment.begin(), m.assignment.end())});
}
std::string snapshot_key(const ProducerSnapshot& p) {
  return join({"psnap", p.topic, std::to_string(p.partition), std::to_string(p.producer_id)});
}
std::string snapshot_value(const ProducerSnapshot& p) {
  return join({std::to_string(p.producer_epoch), std::to_string(p.last_sequence), std::to_string(p.last_offset),
               std::to_string(p.timestamp_ms)});
}
constexpr char kProducerIdBlockKey[] = "pidblock";
std::string cursor_key(const std::string& link, const std::string& topic, int32_t partition) {
  return join({"fwd", link, topic, std::to_string(partition)});
}
std::string cursor_value(const ForwardCursor& c) {
  return join({std::to_string(c.next_offset), std::to_string(c.producer_id), std::to_string(c.producer_epoch),
               std::to_string(c.next_sequence), std::to_string(c.dropped_messages)});
}
std::string forward_producer_key(const std::string& link) { return join({"fwdproducer", link}); }
std::string forward_producer_value(const ForwardProducer& p) {
  return join({std::to_string(p.producer_id), std::to_string(p.producer_epoch)});
}

// Removes the keys starting with prefix, and those whose i-th part (split at
// '/') is part; i < 0: only the prefix.
void erase_where(State* state, const std::string& prefix, int index = -1, const std::string& part = "") {
  for (auto it = state->lower_bound(prefix); it != state->end() && it->first.compare(0, prefix.size(), prefix) == 0;) {
    bool erase = index < 0;
    if (!erase) {
      size_t start = 0;
      for (int i = 0; i < index && start != std::string::npos; ++i) start = it->first.find('/', start) + 1;
      erase = it->first.compare(start, part.size() + 1, part + "/") == 0 ||
              (it->first.size() == start + part.size() && it->first.compare(start, part.size(), part) == 0);
    }
    it = erase ? state->erase(it) : std::next(it);
  }
}

// Topics present in state, with their partition counts.
std::map<std::string, int32_t> topics_of(const State& state) {
  std::map<std::string, int32_t> topics;
  for (const char* name : kTopics) {
    auto it = state.find(topic_key(name));
    if (it == state.end()) continue;
    size_t a = it->second.find('/');
    topics[name] = std::stoi(it->second.substr(a + 1, it->second.find('/', a + 1) - a - 1));
  }
  return topics;
}


// ---------------------------------------------------------------------------
// The stores and the model of what they must hold
// ---------------------------------------------------------------------------

struct Stores {
  std::unique_ptr<MetaStore> meta;
  std::unique_ptr<ForwardProgress> forward;
  int producer_ids_left = 0;  // in the allocator's block (mirrors ProducerIdAllocator)
};

struct Model {
  State acknowledged{{kProducerIdBlockKey, "0"}};
  // What the operation the cut interrupted would have left (it may have
  // reached the disk, but only as a whole).
  std::optional<State> interrupted;
  std::string cluster_id;         // "" until an open of eddy.db was acknowledged
  int64_t max_producer_id = -1;   // the greatest id handed out so far
};

struct Counters {
  uint64_t operations = 0, interrupted = 0, interrupted_survived = 0, opens_cut = 0, clean_closes = 0;
  uint64_t producer_ids = 0, idle_cuts = 0, acknowledged_then_cut = 0;
};

Status open_stores(PowerCutVfs& vfs, const std::string& dir, Stores* stores) {
  MetaStore::Options options;
  options.producer_id_block_size = kBlockSize;
  options.sqlite_vfs = vfs.name();
  stores->producer_ids_left = 0;
  Status s = MetaStore::open(dir + "/eddy.db", options, &stores->meta);
  if (s.ok()) s = ForwardProgress::open(dir + "/forward.db", &stores->forward, vfs.name());
  return s;
}

// A test-only connection setting: a small autocheckpoint makes commits
// checkpoint into the main file (its writes, syncs, the WAL's restarts and
// truncation) far more often than the default 1000 pages would.
void tune_checkpoints(std::mt19937_64& rng, Stores* stores) {
  static const char* const kSettings[] = {"PRAGMA wal_autocheckpoint = 1000", "PRAGMA wal_autocheckpoint = 2",
                                          "PRAGMA wal_autocheckpoint = 8"};
  EXPECT_TRUE(stores->meta->database()->exec(pick(rng, kSettings)).ok());
  EXPECT_TRUE(stores->forward->database()->exec(pick(rng, kSettings)).ok());
}

Status read_eddy_db(MetaStore& meta, State* state) {
  std::vector<TopicRecord> topics;
  Status s = meta.topics().list(&topics);
  for (const TopicRecord& t : topics) {
    (*state)[topic_key(t.name)] = topic_value(t.id, t.partition_count, t.replication_factor);
    for (const auto& [key, value] : t.configs) (*state)[topic_config_key(t.name, key)] = value;
  }
  std::map<std::string, std::string> broker;
  if (s.ok()) s = meta.broker_configs().list(&broker);
  for (const auto& [key, value] : broker) (*state)[broker_config_key(key)] = value;
  std::vector<std::string> groups;
  if (s.ok()) s = meta.offsets().list_groups(&groups);
  for (const std::string& group : groups) {
    std::vector<CommittedOffset> offsets;
    if (s.ok()) s = meta.offsets().fetch_all(group, &offsets);
    for (const CommittedOffset& o : offsets) (*state)[offset_key(group, o.topic, o.partition)] = offset_value(o);
  }
  std::vector<StaticMember> members;
  if (s.ok()) s = meta.static_members().load_all(&members);
  for (const StaticMember& m : members) (*state)[member_key(m)] = member_value(m);
  std::vector<ProducerSnapshot> snapshots;
  if (s.ok()) s = meta.producer_snapshots().load_all(&snapshots);
  for (const ProducerSnapshot& p : snapshots) (*state)[snapshot_key(p)] = snapshot_value(p);
  int64_t block = 0;
  if (s.ok()) s = meta.database()->query_int64("SELECT next_producer_id_block FROM cluster WHERE singleton = 0", &block);
  (*state)[kProducerIdBlockKey] = std::to_string(block);
  return s;
}

Status read_forward_db(ForwardProgress& forward, State* state) {
  std::vector<std::string> links;
  Status s = forward.list_links(&links);
  for (const std::string& link : links) {
    std::vector<ForwardCursor> cursors;
    if (s.ok()) s = forward.load(link, &cursors);
    for (const ForwardCursor& c : cursors) (*state)[cursor_key(link, c.topic, c.partition)] = cursor_value(c);
    ForwardProducer producer;
    Status p = forward.load_producer(link, &producer);
    if (p.ok()) (*state)[forward_producer_key(link)] = forward_producer_value(producer);
    if (!p.ok() && !p.is_not_found() && s.ok()) s = p;
  }
  return s;
}

// "" when both databases pass SQLite's full integrity check.
std::string integrity(Stores& stores) {
  std::string out;
  for (Database* db : {stores.meta->database(), stores.forward->database()}) {
    std::string verdict;
    Status s = db->query_text("PRAGMA integrity_check", &verdict);
    if (!s.ok()) out += s.to_string() + "\n";
    else if (verdict != "ok") out += db->path() + ": " + verdict + "\n";
  }
  return out;
}

// The keys where a and b differ, with both values.
std::string diff(const State& a, const State& b, const char* a_name, const char* b_name) {
  std::string out;
  std::map<std::string, std::pair<std::string, std::string>> keys;
  // Values cut at 60 characters: enough to tell them apart.
  auto quote = [](const std::string& v) { return "'" + (v.size() > 60 ? v.substr(0, 60) + "..." : v) + "'"; };
  for (const auto& [k, v] : a) keys[k].first = quote(v);
  for (const auto& [k, v] : b) keys[k].second = quote(v);
  for (const auto& [k, v] : keys) {
    if (v.first == v.second) continue;
    out += "  " + k + ": " + a_name + " " + (v.first.empty() ? "(none)" : v.first) + ", " + b_name + " " +
           (v.second.empty() ? "(none)" : v.second) + "\n";
  }
  return out;
}


// ---------------------------------------------------------------------------
// The operations: each runs one call on the stores and writes into *after
// the state it leaves when it commits (*after starts as the acknowledged
// state).
// ---------------------------------------------------------------------------

Status create_topic(std::mt19937_64& rng, Stores& stores, State* after) {
  std::vector<std::string> absent;
  for (const char* name : kTopics) {
    if (after->count(topic_key(name)) == 0) absent.push_back(name);
  }
  if (absent.empty()) return Status();
  NewTopic topic;
  topic.name = absent[rng() % absent.size()];
  topic.partition_count = 1 + static_cast<int32_t>(number(rng, 4));
  topic.id = Uuid::random();  // given, so that an interrupted create is recognised
  for (int i = number(rng, 3); i > 0; --i) topic.configs[pick(rng, kConfigKeys)] = text(rng, 40);
  (*after)[topic_key(topic.name)] = topic_value(topic.id, topic.partition_count, topic.replication_factor);
  for (const auto& [key, value] : topic.configs) (*after)[topic_config_key(topic.name, key)] = value;
  TopicRecord created;
  return stores.meta->topics().create(topic, &created);
}

Status delete_topic(const std::string& name, Stores& stores, State* after) {
  after->erase(topic_key(name));
  erase_where(after, topic_config_key(name, ""));
  erase_where(after, "off/", 2, name);
  erase_where(after, "psnap/", 1, name);
  return stores.meta->topics().remove(name);
}

Status alter_topic(std::mt19937_64& rng, const std::string& name, int32_t partitions, Stores& stores,
                   State* after) {
  if (rng() % 3 == 0) {
    const int32_t count = partitions + 1 + static_cast<int32_t>(number(rng, 2));
    std::string& value = (*after)[topic_key(name)];
    value = value.substr(0, value.find('/')) + "/" + std::to_string(count) + value.substr(value.rfind('/'));
    return stores.meta->topics().set_partition_count(name, count);
  }
  std::vector<ConfigChange> changes;
  for (int i = 1 + number(rng, 3); i > 0; --i) {
    const std::string key = pick(rng, kConfigKeys);
    if (rng() % 3 == 0) {
      changes.push_back(ConfigChange::remove(key));
      after->erase(topic_config_key(name, key));
    } else {
      changes.push_back(ConfigChange::set(key, text(rng, 40)));
      (*after)[topic_config_key(name, key)] = changes.back().value;
    }
  }
  return stores.meta->topics().alter_configs(name, changes);
}

Status alter_broker_configs(std::mt19937_64& rng, Stores& stores, State* after) {
  std::vector<ConfigChange> changes;
  for (int i = 1 + number(rng, 2); i > 0; --i) {
    const std::string key = pick(rng, kConfigKeys);
    if (rng() % 3 == 0) {
      changes.push_back(ConfigChange::remove(key));
      after->erase(broker_config_key(key));
    } else {
      changes.push_back(ConfigChange::set(key, text(rng, 40)));
      (*after)[broker_config_key(key)] = changes.back().value;
    }
  }
  return stores.meta->broker_configs().alter(changes);
}

Status commit_offsets(std::mt19937_64& rng, const std::map<std::string, int32_t>& topics, Stores& stores,
                      State* after) {
  const std::string group = pick(rng, kGroups);
  std::map<std::pair<std::string, int32_t>, CommittedOffset> offsets;  // one per partition
  for (int i = 1 + number(rng, 4); i > 0; --i) {
    auto t = std::next(topics.begin(), number(rng, static_cast<int64_t>(topics.size())));
    CommittedOffset o;
    o.topic = t->first;
    o.partition = static_cast<int32_t>(number(rng, t->second));
    o.offset = number(rng, 1000000);
    o.leader_epoch = static_cast<int32_t>(number(rng, 5)) - 1;
    o.metadata = text(rng, 3000);
    o.commit_timestamp_ms = number(rng, 1LL << 40);
    offsets[{o.topic, o.partition}] = o;
  }
  std::vector<CommittedOffset> batch;
  for (const auto& [tp, o] : offsets) {
    batch.push_back(o);
    (*after)[offset_key(group, o.topic, o.partition)] = offset_value(o);
  }
  return stores.meta->offsets().commit(group, batch);
}

Status remove_offsets(std::mt19937_64& rng, Stores& stores, State* after) {
  const std::string group = pick(rng, kGroups);
  erase_where(after, join({"off", group}) + "/");
  return stores.meta->offsets().remove_group(group);
}

Status save_members(std::mt19937_64& rng, Stores& stores, State* after) {
  std::map<std::string, StaticMember> members;
  const std::string group = pick(rng, kGroups);
  for (int i = 1 + number(rng, 3); i > 0; --i) {
    StaticMember m;
    m.group_id = group;
    m.group_instance_id = "instance-" + std::to_string(number(rng, 4));
    m.member_id = m.group_instance_id + "-" + text(rng, 30);
    m.client_id = text(rng, 20);
    m.client_host = "/10.0.0." + std::to_string(number(rng, 250));
    m.protocol_type = "consumer";
    m.protocol_name = rng() % 2 == 0 ? "range" : "cooperative-sticky";
    m.generation_id = static_cast<int32_t>(number(rng, 100));
    m.session_timeout_ms = 45000;
    m.rebalance_timeout_ms = 300000;
    m.subscription = bytes(rng, 2000);
    m.assignment = bytes(rng, 2000);
    members[m.group_instance_id] = m;
  }
  std::vector<StaticMember> batch;
  for (const auto& [id, m] : members) {
    batch.push_back(m);
    (*after)[member_key(m)] = member_value(m);
  }
  return stores.meta->static_members().save(batch);
}

Status remove_member(std::mt19937_64& rng, Stores& stores, State* after) {
  StaticMember m;
  m.group_id = pick(rng, kGroups);
  m.group_instance_id = "instance-" + std::to_string(number(rng, 4));
  after->erase(member_key(m));
  return stores.meta->static_members().remove(m.group_id, m.group_instance_id);
}


// Hands out ids; a block is reserved (one durable transaction) when the
// allocator's is used up. Every id must exceed every id handed out before,
// in this round or before any earlier cut.
Status next_producer_ids(std::mt19937_64& rng, Stores& stores, Model& model, State* after, Counters* counters) {
  for (int i = 1 + number(rng, 3); i > 0; --i) {
    const bool reserves = stores.producer_ids_left == 0;
    const int64_t block = std::stoll((*after)[kProducerIdBlockKey]);
    if (reserves) (*after)[kProducerIdBlockKey] = std::to_string(block + kBlockSize);
    int64_t id = -1;
    Status s = stores.meta->producer_ids().next(&id);
    if (!s.ok()) return s;
    ++counters->producer_ids;
    EXPECT_GT(id, model.max_producer_id) << "a producer id was handed out twice";
    if (reserves) {
      EXPECT_EQ(id, block) << "a new block starts where the durable one said";
      stores.producer_ids_left = kBlockSize;
      // The reservation is acknowledged with the id: later ids of this call
      // are no longer part of what the cut may undo.
      model.acknowledged[kProducerIdBlockKey] = (*after)[kProducerIdBlockKey];
    }
    --stores.producer_ids_left;
    model.max_producer_id = std::max(model.max_producer_id, id);
  }
  return Status();
}

Status save_snapshots(std::mt19937_64& rng, const std::map<std::string, int32_t>& topics, Stores& stores,
                      State* after) {
  auto t = std::next(topics.begin(), number(rng, static_cast<int64_t>(topics.size())));
  const int32_t partition = static_cast<int32_t>(number(rng, t->second));
  const bool replace = rng() % 4 == 0;
  if (replace) erase_where(after, join({"psnap", t->first, std::to_string(partition)}) + "/");
  std::map<int64_t, ProducerSnapshot> entries;
  for (int i = number(rng, 4) + (replace ? 0 : 1); i > 0; --i) {
    ProducerSnapshot p;
    p.topic = t->first;
    p.partition = partition;
    p.producer_id = number(rng, 20);
    p.producer_epoch = static_cast<int16_t>(number(rng, 3));
    p.last_sequence = static_cast<int32_t>(number(rng, 100000));
    p.last_offset = number(rng, 1000000);
    p.timestamp_ms = number(rng, 1LL << 40);
    entries[p.producer_id] = p;
  }
  std::vector<ProducerSnapshot> batch;
  for (const auto& [id, p] : entries) {
    batch.push_back(p);
    (*after)[snapshot_key(p)] = snapshot_value(p);
  }
  if (replace) return stores.meta->producer_snapshots().replace_partition(t->first, partition, batch);
  return stores.meta->producer_snapshots().save(batch);
}

// Cursors only move forward, as a link's do once the central cluster
// acknowledged what is before them.
Status save_cursors(std::mt19937_64& rng, Stores& stores, State* after) {
  const std::string link = pick(rng, kLinks);
  std::map<std::string, ForwardCursor> cursors;
  for (int i = 1 + number(rng, 3); i > 0; --i) {
    ForwardCursor c;
    c.topic = pick(rng, kTopics);
    c.partition = static_cast<int32_t>(number(rng, 4));
    auto old = after->find(cursor_key(link, c.topic, c.partition));
    const int64_t from = old == after->end() ? 0 : std::stoll(old->second.substr(0, old->second.find('/')));
    c.next_offset = from + number(rng, 200);
    c.producer_id = 4000 + number(rng, 3);
    c.producer_epoch = 0;
    c.next_sequence = static_cast<int32_t>(c.next_offset % 100000);
    c.dropped_messages = number(rng, 10);
    cursors[cursor_key(link, c.topic, c.partition)] = c;
  }
  std::vector<ForwardCursor> batch;
  for (const auto& [key, c] : cursors) {
    batch.push_back(c);
    (*after)[key] = cursor_value(c);
  }
  if (rng() % 4 != 0) return stores.forward->save(link, batch);
  ForwardProducer producer{4000 + number(rng, 3), static_cast<int16_t>(number(rng, 3))};
  (*after)[forward_producer_key(link)] = forward_producer_value(producer);
  return stores.forward->save(link, batch, &producer);
}

// A clean shutdown and restart: close() checkpoints the WAL into the main
// file and deletes it.
Status clean_restart(std::mt19937_64& rng, PowerCutVfs& vfs, const std::string& dir, Stores& stores) {
  Status s = stores.meta->close();
  if (s.ok()) s = stores.forward->close();
  stores.meta.reset();
  stores.forward.reset();
  if (s.ok()) s = open_stores(vfs, dir, &stores);
  if (s.ok()) tune_checkpoints(rng, &stores);
  return s;
}


// One random operation; *after: as for the operations above.
Status random_operation(std::mt19937_64& rng, PowerCutVfs& vfs, const std::string& dir, Stores& stores,
                        Model& model, State* after, Counters* counters) {
  const std::map<std::string, int32_t> topics = topics_of(*after);
  const unsigned roll = static_cast<unsigned>(rng() % 100);
  if (topics.empty() || roll < 8) return create_topic(rng, stores, after);
  auto topic = std::next(topics.begin(), number(rng, static_cast<int64_t>(topics.size())));
  if (roll < 13) return delete_topic(topic->first, stores, after);
  if (roll < 20) return alter_topic(rng, topic->first, topic->second, stores, after);
  if (roll < 24) return alter_broker_configs(rng, stores, after);
  if (roll < 40) return commit_offsets(rng, topics, stores, after);
  if (roll < 42) return remove_offsets(rng, stores, after);
  if (roll < 50) return save_members(rng, stores, after);
  if (roll < 53) return remove_member(rng, stores, after);
  if (roll < 63) return next_producer_ids(rng, stores, model, after, counters);
  if (roll < 75) return save_snapshots(rng, topics, stores, after);
  if (roll < 97) return save_cursors(rng, stores, after);
  ++counters->clean_closes;
  return clean_restart(rng, vfs, dir, stores);
}

// Runs operations until the cut comes (or, after kMaxOpsPerRound, cuts
// between two operations). Acknowledged ones move the model; the one the
// cut interrupted becomes model->interrupted. False on a failure that is
// not the cut's (recorded by gtest).
bool run_load(std::mt19937_64& rng, PowerCutVfs& vfs, const std::string& dir, Stores& stores, Model* model,
              Counters* counters) {
  for (int i = 0; i < kMaxOpsPerRound; ++i) {
    State after = model->acknowledged;
    Status s = random_operation(rng, vfs, dir, stores, *model, &after, counters);
    ++counters->operations;
    if (s.ok()) {
      model->acknowledged = std::move(after);
      if (stores.meta != nullptr && model->cluster_id != stores.meta->cluster_id()) {
        ADD_FAILURE() << "the cluster id changed from " << model->cluster_id << " to " << stores.meta->cluster_id();
        return false;
      }
    } else if (vfs.is_cut()) {
      model->interrupted = std::move(after);
      ++counters->interrupted;
      return true;
    } else {
      ADD_FAILURE() << "an operation failed without a power cut: " << s.to_string();
      return false;
    }
    if (vfs.is_cut()) {  // it returned ok with the cut in its last calls (a checkpoint after the commit)
      ++counters->acknowledged_then_cut;
      return true;
    }
  }
  vfs.cut_now();
  ++counters->idle_cuts;
  return true;
}

// After a cut: the databases opened, hold what was acknowledged (or that
// plus the interrupted operation, whole), and pass the integrity check.
// Adopts what they hold as the new acknowledged state.
bool check_recovered(Stores& stores, Model* model, Counters* counters) {
  EXPECT_EQ(integrity(stores), "");
  if (model->cluster_id.empty()) model->cluster_id = stores.meta->cluster_id();
  EXPECT_EQ(stores.meta->cluster_id(), model->cluster_id) << "eddy.db lost its cluster id";
  State recovered;
  Status s = read_eddy_db(*stores.meta, &recovered);
  if (s.ok()) s = read_forward_db(*stores.forward, &recovered);
  EXPECT_TRUE(s.ok()) << s.to_string();
  if (!s.ok()) return false;
  if (recovered == model->acknowledged) {
  } else if (model->interrupted.has_value() && recovered == *model->interrupted) {
    ++counters->interrupted_survived;
  } else {
    ADD_FAILURE() << "after the cut the databases hold neither the acknowledged state nor that plus the "
                     "interrupted operation; against the acknowledged state:\n"
                  << diff(model->acknowledged, recovered, "acknowledged", "recovered")
                  << (model->interrupted ? "against the interrupted operation's state:\n" +
                                               diff(*model->interrupted, recovered, "interrupted", "recovered")
                                         : std::string());
    return false;
  }
  const int64_t block = std::stoll(recovered[kProducerIdBlockKey]);
  EXPECT_GT(block, model->max_producer_id) << "the next producer id block starts at or below an id handed out";
  model->acknowledged = std::move(recovered);
  model->interrupted.reset();
  return !::testing::Test::HasFailure();
}

// The undo probabilities of one cut: everything unsynced lost, all of it
// kept, or a random share.
std::pair<double, double> cut_shape(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0: return {1.0, 1.0};
    case 1: return {0.0, 0.0};
    case 2: return {0.5, 0.5};
    default:
      return {std::uniform_real_distribution<double>(0, 1)(rng), std::uniform_real_distribution<double>(0, 1)(rng)};
  }
}

TEST(MetaPowerCutTest, AcknowledgedMetadataSurvivesRandomPowerCuts) {
  const uint64_t cuts = env_number("EDDY_POWER_CUTS", 1000);
  const uint64_t seed = env_number("EDDY_POWER_CUT_SEED", std::random_device{}());
  std::printf("power cuts: %llu, seed %llu (EDDY_POWER_CUT_SEED=%llu replays it)\n",
              static_cast<unsigned long long>(cuts), static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  // The simulation decides what survives: on tmpfs the syncs cost nothing.
  eddy::testing::TempDir root(port::is_directory("/dev/shm") ? "/dev/shm" : nullptr);
  const std::string dir = root.file("data");
  ASSERT_FALSE(port::make_directories(dir));
  ASSERT_FALSE(port::make_directories(root.file("stash")));
  // Every cut makes the stores log failed closes: expected here.
  const port::LogLevel level = port::log_level();
  port::set_log_level(port::LogLevel::kOff);
  PowerCutVfs vfs("eddy-power-cut", root.file("stash"));
  DirectorySyncReporter reporter(&vfs);
  port::set_file_interceptor(&reporter);

  Model model;
  Counters counters;
  PowerCutVfs::CutStats total;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t cut = 0; cut < cuts && !::testing::Test::HasFailure(); ++cut) {
    SCOPED_TRACE("cut " + std::to_string(cut) + " of seed " + std::to_string(seed));
    vfs.arm(1 + rng() % kCutWindow);
    Stores stores;
    Status s = open_stores(vfs, dir, &stores);
    if (!s.ok()) {
      ASSERT_TRUE(vfs.is_cut()) << "cannot open after a power cut: " << s.to_string();
      ++counters.opens_cut;
    } else {
      if (!check_recovered(stores, &model, &counters)) break;
      tune_checkpoints(rng, &stores);
      if (!run_load(rng, vfs, dir, stores, &model, &counters)) break;
    }
    stores.meta.reset();  // as the process dies: what they still try fails and changes nothing
    stores.forward.reset();
    auto [p_data, p_directory] = cut_shape(rng);
    PowerCutVfs::CutStats stats = vfs.power_off(rng, p_data, p_directory);
    total.sectors_undone += stats.sectors_undone;
    total.sectors_kept += stats.sectors_kept;
    total.files_shortened += stats.files_shortened;
    total.files_vanished += stats.files_vanished;
    total.files_restored += stats.files_restored;
    total.directory_changes_kept += stats.directory_changes_kept;
  }
  port::set_file_interceptor(nullptr);
  port::set_log_level(level);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "%.1f s: %llu operations (%llu producer ids, %llu clean restarts), %llu VFS calls changing files, %llu syncs;\n"
      "%llu cuts interrupted an operation (%llu of those survived whole, the rest not at all), %llu an open, %llu "
      "the end of an acknowledged one, %llu came between operations;\ncuts undid %llu and kept %llu unsynced sectors, shortened %llu files, made %llu "
      "new files vanish, brought %llu deleted files back, kept %llu directory changes\n",
      seconds, static_cast<unsigned long long>(counters.operations),
      static_cast<unsigned long long>(counters.producer_ids), static_cast<unsigned long long>(counters.clean_closes),
      static_cast<unsigned long long>(vfs.calls()), static_cast<unsigned long long>(vfs.syncs()),
      static_cast<unsigned long long>(counters.interrupted),
      static_cast<unsigned long long>(counters.interrupted_survived),
      static_cast<unsigned long long>(counters.opens_cut),
      static_cast<unsigned long long>(counters.acknowledged_then_cut),
      static_cast<unsigned long long>(counters.idle_cuts),
      static_cast<unsigned long long>(total.sectors_undone), static_cast<unsigned long long>(total.sectors_kept),
      static_cast<unsigned long long>(total.files_shortened), static_cast<unsigned long long>(total.files_vanished),
      static_cast<unsigned long long>(total.files_restored),
      static_cast<unsigned long long>(total.directory_changes_kept));
}

}  // namespace
}  // namespace eddy::meta

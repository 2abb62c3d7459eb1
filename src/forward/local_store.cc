#include "forward/local_store.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>

#include "forward/topic_mapping.h"
#include "port/log.h"
#include "port/mutex.h"
#include "port/thread_annotations.h"

namespace eddy::forward {

namespace {

// Bytes of the batches of log from offset to its end.
uint64_t bytes_from(storage::PartitionLog* log, int64_t offset) {
  offset = std::max(offset, log->log_start_offset());
  if (offset >= log->log_end_offset()) return 0;
  storage::BatchLocation where;
  if (!log->lookup(offset, &where).ok()) return 0;
  uint64_t total = 0;
  for (const storage::SegmentInfo& s : log->segments()) {
    if (s.next_offset <= offset || s.base_offset < where.segment_base_offset) continue;
    total += s.base_offset == where.segment_base_offset ? s.end_position - where.batch.position : s.end_position;
  }
  return total;
}

}  // namespace

LocalStore::LocalStore(port::Executor& executor, broker::TopicTable& topics, meta::ForwardProgress* progress)
    : executor_(executor), topics_(topics), progress_(progress) {}

template <typename R, typename Fn>
bool LocalStore::on_reactor(Fn fn, R* out) {
  struct Call {
    port::Mutex mu;
    std::condition_variable cv;
    bool done GUARDED_BY(mu) = false;
    R result GUARDED_BY(mu){};
  };
  if (stopping_.load()) return false;
  auto call = std::make_shared<Call>();
  executor_.post([call, fn = std::move(fn)]() mutable {
    R result{};
    fn(&result);
    port::MutexLock lock(call->mu);
    call->result = std::move(result);
    call->done = true;
    call->cv.notify_all();
  });
  port::MutexLock lock(call->mu);
  while (!call->done) {
    if (stopping_.load()) return false;
    lock.wait_for(call->cv, std::chrono::milliseconds(100));
  }
  *out = std::move(call->result);
  return true;
}

Status LocalStore::load(const std::vector<std::pair<std::string, const TopicMapping*>>& links) {
  for (const auto& [name, mapping] : links) {
    LinkEntry entry{name, mapping, {}, {}, {}};
    Status s = progress_->load_producer(name, &entry.producer);
    if (!s.ok() && !s.is_not_found()) return s;
    std::vector<meta::ForwardCursor> cursors;
    s = progress_->load(name, &cursors);
    if (!s.ok()) return s;
    for (meta::ForwardCursor& c : cursors) {
      TopicPartitionKey key{c.topic, c.partition};
      entry.cursors[key] = std::move(c);
    }
    links_.push_back(std::move(entry));
  }
  return Status();
}

void LocalStore::on_partition_opened(const std::string& topic, int32_t partition, storage::PartitionLog* log,
                                     bool after_start) {
  TopicPartitionKey key{topic, partition};
  for (LinkEntry& link : links_) {
    if (!link.mapping->forwards(topic)) continue;
    auto it = link.cursors.find(key);
    if (it == link.cursors.end() || after_start) {
      // Never forwarded (or a new log under an old name): from its start,
      // continuing the central partition's sequence of an old incarnation.
      meta::ForwardCursor c;
      const meta::ForwardCursor* old = it != link.cursors.end() ? &it->second : nullptr;
      if (old == nullptr) {
        auto r = link.retired.find(key);
        if (r != link.retired.end()) old = &r->second;
      }
      if (old != nullptr) {
        c.producer_id = old->producer_id;
        c.producer_epoch = old->producer_epoch;
        c.next_sequence = old->next_sequence;
      }
      c.topic = topic;
      c.partition = partition;
      c.next_offset = log->log_start_offset();
      link.cursors[key] = c;
      link.retired.erase(key);
    }
  }
  repin(topic, partition);
}

void LocalStore::repin(const std::string& topic, int32_t partition) {
  broker::Topic* t = topics_.find(topic);
  if (t == nullptr || t->local(partition) == nullptr) return;
  int64_t pin = -1;
  for (const LinkEntry& link : links_) {
    auto it = link.cursors.find({topic, partition});
    if (it == link.cursors.end()) continue;
    pin = pin < 0 ? it->second.next_offset : std::min(pin, it->second.next_offset);
  }
  t->local(partition)->set_pin(pin);
}

bool LocalStore::replicated(const broker::Topic& topic, int32_t partition) const {
  const auto p = static_cast<size_t>(partition);
  return cluster_.role && p < topic.replicas.size() && topic.replicas[p].size() > 1;
}

LocalStore::LinkEntry* LocalStore::find_link(const std::string& name) {
  for (LinkEntry& link : links_) {
    if (link.name == name) return &link;
  }
  return nullptr;
}

bool LocalStore::list(const std::string& link, const std::map<TopicPartitionKey, int64_t>& acked,
                      bool measure_bytes, std::vector<LocalPartition>* out) {
  return on_reactor<std::vector<LocalPartition>>(
      [this, link, acked, measure_bytes](std::vector<LocalPartition>* result) {
        LinkEntry* entry = find_link(link);
        if (entry == nullptr) return;
        for (broker::Topic* t : topics_.all()) {
          if (!entry->mapping->forwards(t->name)) continue;
          for (size_t i = 0; i < t->partitions.size(); ++i) {
            storage::PartitionLog* log = t->partitions[i];
            if (log == nullptr) continue;  // forwarded by a node that holds it
            TopicPartitionKey key{t->name, static_cast<int32_t>(i)};
            LocalPartition p;
            p.topic = t->name;
            p.topic_id = t->id;
            p.partition = static_cast<int32_t>(i);
            p.log_start_offset = log->log_start_offset();
            p.high_watermark = log->last_stable_offset();
            p.log_end_offset = log->log_end_offset();
            p.rejected_appends = log->stats().appends_rejected_full;
            if (replicated(*t, p.partition)) {
              const ClusterForwarding::Role role = cluster_.role(log);
              p.forwarded_here = role.here;
              p.leader_epoch = role.leader_epoch;
            }
            auto c = entry->cursors.find(key);
            if (c != entry->cursors.end()) {
              p.cursor = c->second;
            } else {
              p.cursor.topic = t->name;
              p.cursor.partition = p.partition;
              p.cursor.next_offset = p.log_start_offset;
              entry->cursors[key] = p.cursor;
              repin(t->name, p.partition);
            }
            if (measure_bytes) {
              auto a = acked.find(key);
              p.backlog_bytes = bytes_from(log, a != acked.end() ? a->second : p.cursor.next_offset);
            }
            result->push_back(std::move(p));
          }
        }
      },
      out);
}

bool LocalStore::read(const std::string& topic, int32_t partition, int64_t offset, size_t max_bytes,
                      LocalRead* out) {
  return on_reactor<LocalRead>(
      [this, topic, partition, offset, max_bytes](LocalRead* result) {
        broker::Topic* t = topics_.find(topic);
        storage::PartitionLog* log = t == nullptr ? nullptr : t->local(partition);
        if (log == nullptr) {
          result->exists = false;
          return;
        }
        result->log_start_offset = log->log_start_offset();
        result->status =
            log->read_copy(offset, max_bytes, log->last_stable_offset(), &result->bytes, &result->next_offset);
        if (result->status.ok() && log->has_aborted_transactions()) {
          log->collect_aborted_transactions(offset, result->next_offset, &result->aborted);
        }
      },
      out);
}

void LocalStore::cursors_saved(const std::string& link, const std::vector<meta::ForwardCursor>& cursors) {
  if (stopping_.load()) return;
  executor_.post([this, link, cursors] {
    LinkEntry* entry = find_link(link);
    if (entry == nullptr) return;
    std::vector<meta::ClusterForwardCursor> shared;
    for (const meta::ForwardCursor& c : cursors) {
      entry->cursors[{c.topic, c.partition}] = c;
      repin(c.topic, c.partition);
      // Only a replicated partition's: any other is forwarded by the one
      // node that holds it.
      broker::Topic* t = cluster_.share ? topics_.find(c.topic) : nullptr;
      if (t == nullptr || !replicated(*t, c.partition)) continue;
      meta::ClusterForwardCursor s{link, {}, c.topic, c.partition, c.next_offset, c.producer_id, c.producer_epoch,
                                   c.next_sequence, c.remote_next_offset, c.dropped_messages};
      std::copy(t->id.bytes.begin(), t->id.bytes.end(), s.topic_id.bytes.begin());
      shared.push_back(std::move(s));
    }
    if (!shared.empty()) cluster_.share(std::move(shared));
  });
}

void LocalStore::apply_shared_cursor(const meta::ClusterForwardCursor& shared) {
  LinkEntry* entry = find_link(shared.link);
  broker::Topic* t = topics_.find(shared.topic);
  if (entry == nullptr || t == nullptr || !std::equal(t->id.bytes.begin(), t->id.bytes.end(),
                                                      shared.topic_id.bytes.begin())) {
    return;  // not forwarded here, or another incarnation of the topic
  }
  if (!entry->mapping->forwards(shared.topic)) return;
  meta::ForwardCursor& held = entry->cursors[{shared.topic, shared.partition}];
  if (held.topic == shared.topic && held.next_offset >= shared.next_offset) return;
  held = meta::ForwardCursor{shared.topic,          shared.partition,        shared.next_offset,
                             shared.producer_id,    shared.producer_epoch,   shared.next_sequence,
                             shared.dropped_messages, shared.remote_next_offset};
  repin(shared.topic, shared.partition);
}

void LocalStore::cursors_forgotten(const std::string& link, const std::vector<TopicPartitionKey>& partitions) {
  if (stopping_.load()) return;
  executor_.post([this, link, partitions] {
    LinkEntry* entry = find_link(link);
    if (entry == nullptr) return;
    for (const TopicPartitionKey& key : partitions) {
      // A topic re-created since has a fresh entry from on_partition_opened.
      broker::Topic* t = topics_.find(key.first);
      if (t == nullptr || t->local(key.second) == nullptr) {
        auto it = entry->cursors.find(key);
        if (it != entry->cursors.end()) {
          entry->retired[key] = it->second;
          entry->cursors.erase(it);
        }
      }
    }
  });
}

}  // namespace eddy::forward

#include "forward/link.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "client/admin.h"
#include "port/log.h"
#include "port/port.h"
#include "protocol/errors.h"
#include "protocol/record_batch.h"
#include "protocol/record_validator.h"

namespace eddy::forward {

using client::Status;
using client::StatusCode;
using protocol::ErrorCode;

namespace {

// How often a busy link re-lists local partitions (new topics, status) and
// refreshes metadata for topics it forwards.
constexpr int64_t kLocalRefreshMs = 1000;
constexpr int64_t kMetadataRefreshMs = 60000;
constexpr int64_t kPublishMs = 250;
// How often an idle link looks whether the central cluster closed or reset
// its connections (one non-blocking peek per connection): a cut uplink shows
// in the status within this, not only when there is data to send again.
constexpr int64_t kIdleCheckMs = 250;
constexpr int64_t kRateWindowMs = 5000;
// Read-ahead per partition: enough for a full request, not more.
constexpr size_t kMinReadBytes = 64 * 1024;
constexpr size_t kMaxReadBytes = 512 * 1024;

// Kafka's DefaultRecordBatch.incrementSequence: sequences wrap to 0 after
// INT32_MAX.
int32_t increment_sequence(int32_t sequence, int64_t increment) {
  int64_t next = static_cast<int64_t>(sequence) + increment;
  const int64_t wrap = static_cast<int64_t>(std::numeric_limits<int32_t>::max()) + 1;
  return static_cast<int32_t>(next % wrap);
}

// Errors that stop a partition until someone fixes the cause (the central
// topic is missing, the link may not write, the batch will never fit).
bool pauses_partition(ErrorCode code) {
  switch (code) {
    case ErrorCode::kUnknownTopicOrPartition:
    case ErrorCode::kTopicAuthorizationFailed:
    case ErrorCode::kClusterAuthorizationFailed:
    case ErrorCode::kMessageTooLarge:
    case ErrorCode::kRecordListTooLarge:
    case ErrorCode::kInvalidRecord:
    case ErrorCode::kCorruptMessage:
    case ErrorCode::kInvalidTopicException:
    case ErrorCode::kPolicyViolation:
    case ErrorCode::kUnsupportedForMessageFormat:
    case ErrorCode::kUnsupportedCompressionType:
    case ErrorCode::kInvalidRequiredAcks:
    case ErrorCode::kInvalidTimestamp:
      return true;
    default:
      return false;
  }
}

// Errors meaning the central cluster does not (or no longer) knows this
// producer's sequence for the partition.
bool producer_lost(ErrorCode code) {
  return code == ErrorCode::kUnknownProducerId || code == ErrorCode::kOutOfOrderSequenceNumber;
}

bool producer_fenced(ErrorCode code) {
  return code == ErrorCode::kInvalidProducerEpoch || code == ErrorCode::kProducerFenced;
}

std::string join_addresses(const std::vector<client::BrokerAddress>& addresses) {
  std::string out;
  for (const auto& a : addresses) {
    if (!out.empty()) out += ",";
    out += a.to_string();
  }
  return out;
}

}  // namespace

// Every transport the link's client creates registers here, so that
// request_stop() (another thread) can interrupt a blocked call.
struct Link::Transports {
  std::mutex mu;
  std::set<client::Transport*> live;
  bool interrupted = false;

  void interrupt_all() {
    std::lock_guard<std::mutex> lock(mu);
    interrupted = true;
    for (client::Transport* t : live) t->interrupt();
  }
};

namespace {

class RegisteredTransport final : public client::Transport {
 public:
  RegisteredTransport(std::unique_ptr<client::Transport> inner, std::function<void(client::Transport*, bool)> track)
      : inner_(std::move(inner)), track_(std::move(track)) {
    track_(inner_.get(), true);
  }
  ~RegisteredTransport() override { track_(inner_.get(), false); }
  Status connect(const client::BrokerAddress& a, client::Deadline d) override { return inner_->connect(a, d); }
  Status write_all(std::span<const uint8_t> b, client::Deadline d) override { return inner_->write_all(b, d); }
  Status read_exact(std::span<uint8_t> b, client::Deadline d) override { return inner_->read_exact(b, d); }
  void close() override { inner_->close(); }
  bool is_open() const override { return inner_->is_open(); }
  Status check_idle() override { return inner_->check_idle(); }
  void interrupt() override { inner_->interrupt(); }

 private:
  std::unique_ptr<client::Transport> inner_;
  std::function<void(client::Transport*, bool)> track_;
};

}  // namespace

Link::Link(LinkOptions options, TopicMapping mapping, LocalStore* store, meta::ForwardProgress* progress,
           StatusBoard* board)
    : options_(std::move(options)),
      mapping_(std::move(mapping)),
      store_(store),
      progress_(progress),
      board_(board),
      transports_(std::make_shared<Transports>()),
      backoff_(options_.retry_backoff_ms, options_.retry_backoff_max_ms),
      bucket_(options_.bandwidth_bytes_per_sec) {
  status_.name = options_.name;
  status_.bootstrap = join_addresses(options_.bootstrap);
  status_.bandwidth_bytes_per_sec = options_.bandwidth_bytes_per_sec;
  board_->publish(status_);
}

Link::~Link() {
  request_stop();
  join();
}

void Link::start() { thread_ = std::thread([this] { run(); }); }

void Link::request_stop() {
  stop_.store(true);
  transports_->interrupt_all();
  std::lock_guard<std::mutex> lock(sleep_mu_);
  sleep_cv_.notify_all();
}

void Link::join() {
  if (thread_.joinable()) thread_.join();
}

void Link::sleep_ms(int64_t ms) {
  std::unique_lock<std::mutex> lock(sleep_mu_);
  sleep_cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stop_.load(); });
}

void Link::run() {
  EDDY_LOG_INFO("forward link %s: forwarding to %s", options_.name.c_str(), status_.bootstrap.c_str());
  meta::Status loaded = progress_->load_producer(options_.name, &identity_);
  if (!loaded.ok() && !loaded.is_not_found()) {
    EDDY_LOG_ERROR("forward link %s: %s", options_.name.c_str(), loaded.message().c_str());
    status_.last_error = loaded.message();
    status_.state = LinkState::kStopped;
    publish(true);
    return;
  }
  while (!stop_.load()) {
    if (!connected_) {
      const int64_t wait = retry_at_ms_ - port::monotonic_millis();
      if (wait > 0) {
        // Keep the local side of the status fresh while the link is down.
        if (port::monotonic_millis() >= next_local_refresh_ms_ && !refresh_local()) break;
        status_.state = LinkState::kBackingOff;
        status_.retry_in_ms = wait;
        publish(true);
        sleep_ms(std::min(wait, kLocalRefreshMs));
        continue;
      }
      if (!connect()) continue;  // connect() failed through fail(): backs off
    }
    const int64_t now = port::monotonic_millis();
    if (now >= next_local_refresh_ms_ && !refresh_local()) break;
    if (now >= next_metadata_refresh_ms_) {
      std::set<std::string> topics;
      for (const auto& [key, p] : partitions_) {
        if (!p.remote_topic.empty()) topics.insert(p.remote_topic);
      }
      if (topics.empty()) {
        next_metadata_refresh_ms_ = now + kMetadataRefreshMs;
      } else if (!refresh_metadata(topics)) {
        continue;
      }
    }
    bool sent = false;
    int64_t bandwidth_wait = 0;
    if (!fill(&sent, &bandwidth_wait)) continue;
    std::vector<int32_t> busy = producer_->busy_nodes();
    bool window_full = false;
    for (int32_t node : busy) {
      if (producer_->in_flight(node) >= static_cast<size_t>(options_.max_in_flight)) window_full = true;
    }
    if (!busy.empty() && (window_full || !sent)) {
      receive_oldest();
    } else if (busy.empty() && !sent) {
      if (now >= next_idle_check_ms_) {
        next_idle_check_ms_ = now + kIdleCheckMs;
        Status idle = client_->check_idle_connections();
        if (!idle.ok()) {
          fail("lost the central cluster: " + idle.message());
          continue;
        }
      }
      publish(false);
      sleep_ms(bandwidth_wait > 0 ? bandwidth_wait : options_.linger_ms);
      // Look for new data (cheaply: offsets only; bytes at the next full refresh).
      if (bandwidth_wait == 0 && !refresh_local(false)) break;
    }
    publish(false);
  }
  if (producer_) producer_->abandon();
  status_.state = LinkState::kStopped;
  publish(true);
  EDDY_LOG_INFO("forward link %s: stopped", options_.name.c_str());
}

bool Link::connect() {
  status_.state = LinkState::kConnecting;
  publish(true);
  producer_.reset();
  client_.reset();
  client::ClientOptions copt;
  copt.bootstrap = options_.bootstrap;
  copt.connection.client_id = "eddy-forward-" + options_.name;
  copt.connect_timeout_ms = options_.connect_timeout_ms;
  copt.request_timeout_ms = options_.request_timeout_ms;
  std::shared_ptr<Transports> transports = transports_;
  copt.transport_factory = [transports]() -> std::unique_ptr<client::Transport> {
    auto inner = client::make_tcp_transport();
    return std::make_unique<RegisteredTransport>(std::move(inner), [transports](client::Transport* t, bool add) {
      std::lock_guard<std::mutex> lock(transports->mu);
      if (add) {
        transports->live.insert(t);
        if (transports->interrupted) t->interrupt();
      } else {
        transports->live.erase(t);
      }
    });
  };
  client_ = std::make_unique<client::Client>(copt);
  client::UplinkOptions uopt;
  uopt.acks = options_.acks;
  uopt.timeout_ms = static_cast<int32_t>(std::min<int64_t>(options_.request_timeout_ms, INT32_MAX));
  uopt.max_in_flight = options_.max_in_flight;
  producer_ = std::make_unique<client::UplinkProducer>(client_.get(), uopt);
  ++status_.connects;

  Status s = client_->bootstrap();
  if (!s.ok()) {
    fail("cannot reach the central cluster: " + s.message());
    return false;
  }
  if (identity_.producer_id < 0) {
    if (!reset_producer("first start")) return false;
  }
  producer_->set_identity(identity_.producer_id, identity_.producer_epoch);
  if (!refresh_local()) return false;
  std::set<std::string> topics;
  for (const auto& [key, p] : partitions_) {
    if (!p.remote_topic.empty()) topics.insert(p.remote_topic);
  }
  next_metadata_refresh_ms_ = port::monotonic_millis() + kMetadataRefreshMs;
  if (!topics.empty() && !refresh_metadata(topics)) return false;
  connected_ = true;
  status_.state = LinkState::kConnected;
  status_.last_error.clear();
  EDDY_LOG_INFO("forward link %s: connected to %s (producer id %lld epoch %d)", options_.name.c_str(),
                status_.bootstrap.c_str(), static_cast<long long>(identity_.producer_id), identity_.producer_epoch);
  publish(true);
  return true;
}

bool Link::reset_producer(const std::string& why) {
  int64_t id = -1;
  int16_t epoch = -1;
  Status s = producer_->init_producer_id(&id, &epoch);
  if (!s.ok()) {
    fail("cannot get a producer id from the central cluster: " + s.message());
    return false;
  }
  const bool had_one = identity_.producer_id >= 0;
  meta::ForwardProducer fresh{id, epoch};
  // Every partition starts again at sequence 0 under the new producer.
  std::vector<Partition*> all;
  for (auto& [key, p] : partitions_) {
    p.acked.producer_id = id;
    p.acked.producer_epoch = epoch;
    p.acked.next_sequence = 0;
    all.push_back(&p);
  }
  if (!save(all, &fresh)) return false;
  identity_ = fresh;
  producer_->set_identity(id, epoch);
  rewind();
  if (had_one) {
    ++status_.producer_resets;
    EDDY_LOG_WARN(
        "forward link %s: %s; continuing with new producer id %lld epoch %d. Batches that were in flight may reach "
        "the central cluster twice (at-least-once for them)",
        options_.name.c_str(), why.c_str(), static_cast<long long>(id), epoch);
  }
  status_.producer_id = id;
  status_.producer_epoch = epoch;
  return true;
}

std::map<Link::Key, int64_t> Link::acked_offsets() const {
  std::map<Key, int64_t> out;
  for (const auto& [key, p] : partitions_) out[key] = p.acked.next_offset;
  return out;
}

bool Link::refresh_local(bool full) {
  std::vector<LocalPartition> listed;
  if (!store_->list(options_.name, acked_offsets(), full, &listed)) return false;
  if (full) next_local_refresh_ms_ = port::monotonic_millis() + kLocalRefreshMs;
  for (auto& [key, p] : partitions_) p.seen = false;
  std::set<std::string> new_remote_topics;
  std::vector<Key> gone;
  for (LocalPartition& l : listed) {
    Key key{l.topic, l.partition};
    auto it = partitions_.find(key);
    if (it != partitions_.end() && it->second.topic_id != l.topic_id && it->second.pending.empty()) {
      // Deleted and created again under the same name: a new log.
      partitions_.erase(it);
      it = partitions_.end();
    }
    if (it == partitions_.end()) {
      Partition p;
      p.topic = l.topic;
      p.topic_id = l.topic_id;
      p.partition = l.partition;
      p.acked = l.cursor;
      if (p.acked.producer_id != identity_.producer_id || p.acked.producer_epoch != identity_.producer_epoch) {
        // Saved under another producer (or never): sequences restart at 0.
        p.acked.producer_id = identity_.producer_id;
        p.acked.producer_epoch = identity_.producer_epoch;
        p.acked.next_sequence = 0;
      }
      const bool rewound = rewind_past_lost_tail(p, l.log_end_offset);
      p.send_offset = p.acked.next_offset;
      p.send_sequence = p.acked.next_sequence;
      p.priority = mapping_.priority(l.topic);
      std::string error;
      p.remote_topic = mapping_.remote_name(l.topic, &error);
      if (p.remote_topic.empty()) pause(p, error);
      it = partitions_.emplace(key, std::move(p)).first;
      if (!it->second.remote_topic.empty()) new_remote_topics.insert(it->second.remote_topic);
      // Saved at once: a later restart must not find the old cursor below a
      // log end that new appends have carried past it.
      if (rewound && !save({&it->second}, nullptr)) return false;
    }
    Partition& p = it->second;
    p.seen = true;
    p.high_watermark = l.high_watermark;
    p.log_start_offset = l.log_start_offset;
    p.log_end_offset = l.log_end_offset;
    if (full) p.backlog_bytes = l.backlog_bytes;
    p.rejected_appends = l.rejected_appends;
  }
  for (auto it = partitions_.begin(); it != partitions_.end();) {
    if (!it->second.seen && it->second.pending.empty()) {
      gone.push_back(it->first);  // the topic was deleted locally
      it = partitions_.erase(it);
    } else {
      ++it;
    }
  }
  for (const Key& key : gone) {
    meta::Status s = progress_->remove_cursor(options_.name, key.first, key.second);
    if (!s.ok()) EDDY_LOG_WARN("forward link %s: %s", options_.name.c_str(), s.message().c_str());
  }
  if (!gone.empty()) store_->cursors_forgotten(options_.name, gone);
  if (connected_ && !new_remote_topics.empty()) return refresh_metadata(new_remote_topics) || !stop_.load();
  return true;
}

bool Link::rewind_past_lost_tail(Partition& p, int64_t log_end_offset) {
  if (p.acked.next_offset <= log_end_offset) return false;
  // The link forwarded offsets the local log no longer has: with
  // eddy.acks.all.waits.for=page-cache it sends what is not yet synced, and a
  // power cut took that tail. The central cluster has those records; the
  // offsets from the log's end on will hold new ones, which must be sent.
  // The producer sequence goes on where the central partition left it.
  p.lost_after_forwarding += static_cast<uint64_t>(p.acked.next_offset - log_end_offset);
  EDDY_LOG_WARN("forward link %s: %s-%d: forwarded up to offset %lld but the local log ends at %lld (its unsynced "
                "tail was lost after forwarding): forwarding resumes from %lld",
                options_.name.c_str(), p.topic.c_str(), p.partition,
                static_cast<long long>(p.acked.next_offset), static_cast<long long>(log_end_offset),
                static_cast<long long>(log_end_offset));
  p.acked.next_offset = log_end_offset;
  return true;
}

bool Link::refresh_metadata(const std::set<std::string>& topics) {
  std::vector<std::string> names(topics.begin(), topics.end());
  next_metadata_refresh_ms_ = port::monotonic_millis() + kMetadataRefreshMs;
  Status s = client_->refresh_metadata(&names, false);
  if (!s.ok()) {
    fail("metadata from the central cluster: " + s.message());
    return false;
  }
  std::set<std::string> missing = apply_leaders();
  if (!missing.empty() && options_.create_topics && create_remote_topics(missing)) {
    s = client_->refresh_metadata(&names, false);
    if (!s.ok()) {
      fail("metadata from the central cluster: " + s.message());
      return false;
    }
    missing = apply_leaders();
  }
  const int64_t now = port::monotonic_millis();
  for (const std::string& topic : missing) {
    if (created_remote_topics_.count(topic) != 0) {
      // Created, not visible everywhere yet: ask again soon.
      next_metadata_refresh_ms_ = std::min(next_metadata_refresh_ms_, now + 200);
    } else if (!options_.create_topics) {
      pause_topic(topic, "topic " + topic + " does not exist on the central cluster (create it there, or set "
                         "eddy.forward." + options_.name + ".create.topics=true)");
    }
  }
  return true;
}

bool Link::create_remote_topics(const std::set<std::string>& missing) {
  bool created = false;
  client::Admin admin(client_.get());
  for (const std::string& topic : missing) {
    if (created_remote_topics_.count(topic) != 0) continue;
    int32_t partitions = 0;
    for (const auto& [key, p] : partitions_) {
      if (p.remote_topic == topic) partitions = std::max(partitions, p.partition + 1);
    }
    client::NewTopic t;
    t.name = topic;
    t.partitions = partitions;
    t.replication_factor = options_.replication_factor;
    Status s = admin.create_topic(t);
    if (s.ok() || s.kafka_error() == ErrorCode::kTopicAlreadyExists) {
      EDDY_LOG_INFO("forward link %s: created central topic %s with %d partitions", options_.name.c_str(),
                    topic.c_str(), partitions);
      created_remote_topics_.insert(topic);
      created = true;
    } else {
      pause_topic(topic, "could not create central topic " + topic + ": " + s.message());
    }
  }
  return created;
}

void Link::pause_topic(const std::string& remote_topic, const std::string& why) {
  for (auto& [key, p] : partitions_) {
    if (p.remote_topic == remote_topic) pause(p, why);
  }
}

std::set<std::string> Link::apply_leaders() {
  const client::ClusterMetadata& md = client_->metadata();
  const int64_t now = port::monotonic_millis();
  std::set<std::string> missing;
  for (auto& [key, p] : partitions_) {
    if (p.remote_topic.empty()) continue;
    const client::TopicInfo* t = md.topic(p.remote_topic);
    if (t == nullptr) continue;  // not asked for yet
    if (t->error_code == static_cast<int16_t>(ErrorCode::kUnknownTopicOrPartition)) {
      missing.insert(p.remote_topic);
      p.leader = -1;
      continue;
    }
    created_remote_topics_.erase(p.remote_topic);
    if (t->error_code == static_cast<int16_t>(ErrorCode::kTopicAuthorizationFailed)) {
      pause(p, "not authorized to write " + p.remote_topic + " on the central cluster");
      continue;
    }
    if (t->error_code == 0 && t->partition(p.partition) == nullptr) {
      pause(p, "central topic " + p.remote_topic + " has " + std::to_string(t->partitions.size()) +
                   " partitions; local partition " + std::to_string(p.partition) + " has no counterpart");
      continue;
    }
    p.leader = md.leader_for(p.remote_topic, p.partition);
    if (p.leader < 0) {
      // Leader election in progress on the central cluster: ask again soon.
      next_metadata_refresh_ms_ = std::min(next_metadata_refresh_ms_, now + options_.retry_backoff_max_ms / 10 + 100);
    }
    if (!p.paused.empty() && now >= p.paused_until_ms) {
      EDDY_LOG_INFO("forward link %s: %s-%d resumes (was paused: %s)", options_.name.c_str(), p.topic.c_str(),
                    p.partition, p.paused.c_str());
      p.paused.clear();
    }
  }
  return missing;
}

void Link::pause(Partition& p, const std::string& why) {
  if (p.paused != why) {
    EDDY_LOG_WARN("forward link %s: %s-%d paused: %s (retried every %lld ms)", options_.name.c_str(), p.topic.c_str(),
                  p.partition, why.c_str(), static_cast<long long>(options_.paused_retry_ms));
  }
  p.paused = why;
  p.last_error = why;
  p.paused_until_ms = port::monotonic_millis() + options_.paused_retry_ms;
  // Metadata is refreshed when the pause ends, so that a fixed cause resumes.
  next_metadata_refresh_ms_ = std::min(next_metadata_refresh_ms_, p.paused_until_ms);
}

size_t Link::window(const Partition& p) const {
  return p.confirmed ? static_cast<size_t>(options_.max_in_flight) : 1;
}

bool Link::has_unsent(const Partition& p) const {
  return p.buffer_pos < p.buffer.size() || p.send_offset < p.high_watermark;
}

bool Link::next_batch(Partition& p, std::span<uint8_t>* batch, int64_t* base_offset, int64_t* next_offset) {
  if (p.buffer_pos >= p.buffer.size()) {
    p.buffer.clear();
    p.buffer_pos = 0;
    if (p.send_offset >= p.high_watermark) return false;
    size_t want = std::clamp(static_cast<size_t>(options_.max_request_bytes), kMinReadBytes, kMaxReadBytes);
    LocalRead r;
    if (!store_->read(p.topic, p.partition, p.send_offset, want, &r)) return false;
    if (!r.exists) {
      p.high_watermark = p.send_offset;
      return false;
    }
    if (r.status == storage::Status::kOffsetOutOfRange && p.send_offset < r.log_start_offset) {
      // The full policy (or DeleteRecords, or retention) dropped data this
      // link had not forwarded. Counted once: the jump is saved before
      // anything after it is sent.
      if (!p.pending.empty()) return false;  // settle what is in flight first
      const int64_t lost = r.log_start_offset - p.send_offset;
      EDDY_LOG_WARN("forward link %s: %s-%d: %lld messages (offsets %lld..%lld) were dropped locally before they "
                    "were forwarded",
                    options_.name.c_str(), p.topic.c_str(), p.partition, static_cast<long long>(lost),
                    static_cast<long long>(p.send_offset), static_cast<long long>(r.log_start_offset - 1));
      p.acked.dropped_messages += lost;
      p.acked.next_offset = r.log_start_offset;
      p.send_offset = r.log_start_offset;
      if (!save({&p}, nullptr)) return false;
      return next_batch(p, batch, base_offset, next_offset);
    }
    if (r.status != storage::Status::kOk) {
      p.last_error = std::string("local read: ") + storage::status_name(r.status);
      p.high_watermark = p.send_offset;  // look again at the next refresh
      return false;
    }
    if (r.bytes.empty()) {
      p.high_watermark = p.send_offset;
      return false;
    }
    p.buffer = std::move(r.bytes);
  }
  protocol::RecordBatchView view;
  std::span<uint8_t> rest(p.buffer.data() + p.buffer_pos, p.buffer.size() - p.buffer_pos);
  if (protocol::RecordBatchView::parse(rest, &view) != protocol::BatchError::kOk) {
    // Stored batches were validated on append; a broken one here means the
    // read raced a recycle. Drop the read-ahead and read again.
    p.buffer.clear();
    p.buffer_pos = 0;
    return false;
  }
  // The records are walked as on append (structure only: timestamps were
  // judged then): a batch stored before record validation existed, or with
  // eddy.validate.compressed.records=false, that fails is not sent. The
  // central cluster would refuse it and pause the partition, or store it
  // for its consumers to choke on. The cursor moves past it once what is in
  // flight is settled (the skip is saved before anything after it is sent).
  protocol::RecordRules rules;
  rules.open_stream = &options_.open_record_stream;
  rules.max_decompressed_batch_bytes = options_.max_decompressed_batch_bytes;
  protocol::RecordVerdict verdict = protocol::validate_batch_records(view, rules);
  if (verdict.error != ErrorCode::kNone) {
    if (!p.pending.empty()) return false;
    if (view.last_offset() > p.skipped_through) {
      ++p.skipped_invalid_batches;
      EDDY_LOG_WARN("forward link %s: %s-%d: skipping the batch at offsets %lld..%lld, not sent: %s: %s",
                    options_.name.c_str(), p.topic.c_str(), p.partition, static_cast<long long>(view.base_offset()),
                    static_cast<long long>(view.last_offset()), protocol::error_name(verdict.error),
                    verdict.message.c_str());
    }
    p.skipped_through = view.last_offset();
    p.buffer_pos += view.size();
    p.send_offset = view.next_offset();
    p.acked.next_offset = p.send_offset;
    if (!save({&p}, nullptr)) return false;
    return next_batch(p, batch, base_offset, next_offset);
  }
  *batch = rest.subspan(0, view.size());
  *base_offset = view.base_offset();
  *next_offset = view.last_offset() + 1;
  return true;
}

bool Link::fill(bool* sent_any, int64_t* wait_ms) {
  *sent_any = false;
  *wait_ms = 0;
  // Strict priority: only the highest class with something to deliver sends.
  // "Something" includes data appended but not yet below the high watermark
  // (not yet synced in disk mode): the class waits for it rather than let a
  // lower one go first.
  bool any = false;
  int32_t top = std::numeric_limits<int32_t>::min();
  for (const auto& [key, p] : partitions_) {
    if (!p.paused.empty() || p.leader < 0) continue;
    if (has_unsent(p) || !p.pending.empty() || p.send_offset < p.log_end_offset) {
      top = any ? std::max(top, p.priority) : p.priority;
      any = true;
    }
  }
  if (!any) return true;
  std::map<int32_t, std::vector<Partition*>> by_leader;
  std::vector<Partition*> eligible;
  for (auto& [key, p] : partitions_) {
    if (p.paused.empty() && p.leader >= 0 && p.priority == top && has_unsent(p) && p.pending.size() < window(p)) {
      eligible.push_back(&p);
    }
  }
  if (eligible.empty()) return true;
  // Rotate the starting partition so that a full request does not always
  // favour the same ones.
  rotation_ = (rotation_ + 1) % eligible.size();
  std::rotate(eligible.begin(), eligible.begin() + static_cast<std::ptrdiff_t>(rotation_), eligible.end());
  for (Partition* p : eligible) by_leader[p->leader].push_back(p);

  for (auto& [node, parts] : by_leader) {
    while (producer_->in_flight(node) < static_cast<size_t>(options_.max_in_flight)) {
      std::vector<client::UplinkBatch> batches;
      uint64_t request_bytes = 0;
      bool capped = false;
      for (Partition* p : parts) {
        if (p->pending.size() >= window(*p)) continue;
        std::span<uint8_t> bytes;
        int64_t base = 0, next = 0;
        if (!next_batch(*p, &bytes, &base, &next)) {
          if (store_->stopping() || !connected_) return false;
          continue;
        }
        if (!batches.empty() && request_bytes + bytes.size() > static_cast<uint64_t>(options_.max_request_bytes)) {
          break;
        }
        int64_t wait = bucket_.wait_ms(port::monotonic_millis());
        if (wait > 0) {
          *wait_ms = wait;
          capped = true;
          break;
        }
        bucket_.take(port::monotonic_millis(), static_cast<int64_t>(bytes.size()));
        client::UplinkBatch b;
        b.topic = &p->remote_topic;
        b.partition = p->partition;
        b.bytes = bytes;
        b.base_sequence = p->send_sequence;
        b.tag = next_tag_++;
        p->buffer_pos += bytes.size();
        p->send_offset = next;
        p->send_sequence = increment_sequence(p->send_sequence, next - base);
        p->pending.push_back({b.tag, base, next, p->send_sequence, bytes.size()});
        tags_[b.tag] = {p->topic, p->partition};
        request_bytes += bytes.size();
        batches.push_back(b);
      }
      if (batches.empty()) break;
      if (port::log_level() <= port::LogLevel::kDebug) {
        std::string what;
        for (const auto& b : batches) {
          what += " " + *b.topic + "-" + std::to_string(b.partition) + "@seq" + std::to_string(b.base_sequence);
        }
        EDDY_LOG_DEBUG("forward link %s: produce to node %d (priority %d):%s", options_.name.c_str(), node, top,
                       what.c_str());
      }
      Status s = producer_->send(node, batches);
      if (!s.ok()) {
        fail("sending to the central cluster: " + s.message());
        return false;
      }
      *sent_any = true;
      if (capped) break;
    }
    if (*wait_ms > 0) break;
  }
  return true;
}

bool Link::receive_oldest() {
  std::vector<int32_t> busy = producer_->busy_nodes();
  if (busy.empty()) return true;
  std::vector<client::UplinkOutcome> outcomes;
  Status s = producer_->receive(busy.front(), &outcomes);
  if (!s.ok()) {
    fail("waiting for the central cluster: " + s.message());
    return false;
  }
  std::vector<Partition*> changed;
  bool need_rewind = false;
  std::string rewind_reason;
  std::string reset_reason;
  for (const client::UplinkOutcome& o : outcomes) {
    auto t = tags_.find(o.tag);
    if (t == tags_.end()) continue;  // sent before a rewind
    Key key = t->second;
    tags_.erase(t);
    auto it = partitions_.find(key);
    if (it == partitions_.end()) continue;
    Partition& p = it->second;
    if (p.pending.empty() || p.pending.front().tag != o.tag) continue;  // superseded by a rewind
    Pending done = p.pending.front();
    if (o.status.ok()) {
      p.confirmed = true;
      p.pending.pop_front();
      p.acked.next_offset = done.next_offset;
      p.acked.next_sequence = done.next_sequence;
      p.acked.producer_id = identity_.producer_id;
      p.acked.producer_epoch = identity_.producer_epoch;
      p.forwarded_messages += done.next_offset - done.offset;
      p.forwarded_bytes += done.bytes;
      total_messages_ += done.next_offset - done.offset;
      total_bytes_ += done.bytes;
      p.last_error.clear();
      changed.push_back(&p);
      continue;
    }
    const ErrorCode code = o.status.kafka_error();
    p.last_error = o.status.message();
    need_rewind = true;
    if (producer_lost(code) && done.offset == p.acked.next_offset) {
      reset_reason = "the central cluster does not know the producer's sequence for " + p.topic + "-" +
                     std::to_string(p.partition) + " (" + protocol::error_name(code) +
                     "; it expired after producer.id.expiration.ms, or the central data was lost)";
    } else if (producer_fenced(code)) {
      reset_reason = "the central cluster fenced the producer (" + std::string(protocol::error_name(code)) + ")";
    } else if (pauses_partition(code)) {
      pause(p, o.status.message());
    } else if (rewind_reason.empty()) {
      rewind_reason = o.status.message();
    }
  }
  if (!changed.empty() && !save(changed, nullptr)) return false;
  if (!changed.empty() && !need_rewind) backoff_.reset();
  if (!reset_reason.empty()) {
    rewind();
    if (!reset_producer(reset_reason)) return false;
    return true;
  }
  if (need_rewind) {
    if (!rewind_reason.empty()) {
      // Retriable (leader moved, timeouts, not enough replicas): reconnect
      // with fresh metadata after a backoff.
      fail(rewind_reason);
      return false;
    }
    rewind();  // only pauses: the others resend right away
  }
  return true;
}

bool Link::save(const std::vector<Partition*>& changed, const meta::ForwardProducer* producer) {
  std::vector<meta::ForwardCursor> cursors;
  cursors.reserve(changed.size());
  for (const Partition* p : changed) cursors.push_back(p->acked);
  meta::Status s = progress_->save(options_.name, cursors, producer);
  if (!s.ok()) {
    // Nothing more is sent until progress can be saved again: the window
    // invariant (link.h) depends on it.
    EDDY_LOG_ERROR("forward link %s: saving progress failed: %s", options_.name.c_str(), s.message().c_str());
    fail("saving progress: " + s.message());
    return false;
  }
  store_->cursors_saved(options_.name, cursors);
  return true;
}

void Link::rewind() {
  if (producer_) producer_->abandon();
  tags_.clear();
  for (auto& [key, p] : partitions_) {
    p.pending.clear();
    p.confirmed = false;
    p.buffer.clear();
    p.buffer.shrink_to_fit();
    p.buffer_pos = 0;
    p.send_offset = p.acked.next_offset;
    p.send_sequence = p.acked.next_sequence;
  }
}

void Link::fail(const std::string& why) {
  if (stop_.load()) return;
  if (status_.last_error != why) EDDY_LOG_WARN("forward link %s: %s", options_.name.c_str(), why.c_str());
  status_.last_error = why;
  rewind();
  connected_ = false;
  retry_at_ms_ = port::monotonic_millis() + backoff_.next_ms();
}

void Link::publish(bool force) {
  const int64_t now = port::monotonic_millis();
  if (!force && now - last_publish_ms_ < kPublishMs) return;
  last_publish_ms_ = now;
  rate_samples_.push_back({now, total_bytes_, total_messages_});
  while (rate_samples_.size() > 2 && now - rate_samples_.front().ms > kRateWindowMs) rate_samples_.pop_front();
  const RateSample& first = rate_samples_.front();
  double seconds = static_cast<double>(now - first.ms) / 1000.0;
  status_.rate_bytes_per_sec = seconds > 0 ? static_cast<double>(total_bytes_ - first.bytes) / seconds : 0;
  status_.rate_messages_per_sec = seconds > 0 ? static_cast<double>(total_messages_ - first.messages) / seconds : 0;
  status_.producer_id = identity_.producer_id;
  status_.producer_epoch = identity_.producer_epoch;
  if (status_.state == LinkState::kConnected && !connected_) status_.state = LinkState::kBackingOff;
  status_.partitions.clear();
  for (const auto& [key, p] : partitions_) {
    PartitionStatus ps;
    ps.topic = p.topic;
    ps.partition = p.partition;
    ps.remote_topic = p.remote_topic;
    ps.priority = p.priority;
    ps.forwarded_offset = p.acked.next_offset;
    ps.log_start_offset = p.log_start_offset;
    ps.local_end_offset = p.log_end_offset;
    ps.backlog_messages = std::max<int64_t>(0, p.log_end_offset - std::max(p.acked.next_offset, p.log_start_offset));
    ps.backlog_bytes = p.backlog_bytes;
    // Dropped already counted, plus what the full policy dropped since (the
    // link counts it for good when it reads past the gap).
    ps.dropped_messages = p.acked.dropped_messages + std::max<int64_t>(0, p.log_start_offset - p.acked.next_offset);
    ps.rejected_appends = p.rejected_appends;
    ps.skipped_invalid_batches = p.skipped_invalid_batches;
    ps.lost_after_forwarding = p.lost_after_forwarding;
    ps.paused = p.paused;
    ps.last_error = p.last_error;
    ps.forwarded_messages = p.forwarded_messages;
    ps.forwarded_bytes = p.forwarded_bytes;
    status_.partitions.push_back(std::move(ps));
  }
  board_->publish(status_);
}

}  // namespace eddy::forward

#include "forward/link.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "client/tls_transport.h"
#include "forward/uplink_errors.h"
#include "port/log.h"
#include "port/port.h"
#include "protocol/errors.h"
#include "protocol/record_batch.h"
#include "protocol/record_validator.h"

namespace eddy::forward {

using protocol::ErrorCode;

namespace {

// How often an idle link looks whether the central cluster closed or reset
// its connections (one non-blocking peek per connection): a cut uplink shows
// in the status within this, not only when there is data to send again.
constexpr int64_t kIdleCheckMs = 250;

std::string join_addresses(const std::vector<client::BrokerAddress>& addresses) {
  std::string out;
  for (const auto& a : addresses) {
    if (!out.empty()) out += ",";
    out += a.to_string();
  }
  return out;
}

LinkStatus initial_status(const LinkOptions& options) {
  LinkStatus status;
  status.name = options.name;
  status.bootstrap = join_addresses(options.bootstrap);
  status.security = options.security_protocol;
  if (options.sasl) status.security += " " + options.sasl->mechanism + " as " + options.sasl->username;
  status.bandwidth_bytes_per_sec = options.bandwidth_bytes_per_sec;
  return status;
}

}  // namespace

Link::Link(LinkOptions options, TopicMapping mapping, LocalStore* store, meta::ForwardProgress* progress,
           StatusBoard* board)
    : options_(std::move(options)),
      mapping_(std::move(mapping)),
      store_(store),
      progress_(progress),
      transports_(std::make_shared<InterruptibleTransports>()),
      backoff_(options_.retry_backoff_ms, options_.retry_backoff_max_ms),
      bucket_(options_.bandwidth_bytes_per_sec),
      status_(board, initial_status(options_)) {}

Link::~Link() {
  request_stop();
  join();
}

void Link::start() { thread_ = std::thread([this] { run(); }); }

void Link::request_stop() {
  stop_.store(true);
  transports_->interrupt_all();
  port::MutexLock lock(sleep_mu_);
  sleep_cv_.notify_all();
}

void Link::join() {
  if (thread_.joinable()) thread_.join();
}

void Link::sleep_ms(int64_t ms) {
  port::MutexLock lock(sleep_mu_);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!stop_.load()) {
    if (lock.wait_until(sleep_cv_, until) == std::cv_status::timeout) break;
  }
}

void Link::run() {
  LinkStatus& status = status_.status();
  EDDY_LOG_INFO("forward link {}: forwarding to {} ({})", options_.name, status.bootstrap, status.security);
  Status loaded = progress_->load_producer(options_.name, &identity_);
  if (!loaded.ok() && !loaded.is_not_found()) {
    EDDY_LOG_ERROR("forward link {}: {}", options_.name, loaded.message());
    status.last_error = loaded.message();
    status.state = LinkState::kStopped;
    publish(true);
    return;
  }
  while (!stop_.load()) {
    if (!connected_) {
      const int64_t wait = retry_at_ms_ - port::monotonic_millis();
      if (wait > 0) {
        // Keep the local side of the status fresh while the link is down.
        if (port::monotonic_millis() >= next_local_refresh_ms_ && !refresh_local()) break;
        status.state = LinkState::kBackingOff;
        status.retry_in_ms = wait;
        publish(true);
        sleep_ms(std::min(wait, kLocalRefreshMs));
        continue;
      }
      if (!connect()) continue;  // connect() failed through fail(): backs off
    }
    if (!run_connected()) break;
  }
  if (producer_) producer_->abandon();
  status.state = LinkState::kStopped;
  publish(true);
  EDDY_LOG_INFO("forward link {}: stopped", options_.name);
}

bool Link::run_connected() {
  const int64_t now = port::monotonic_millis();
  if (now >= next_local_refresh_ms_ && !refresh_local()) return false;
  if (now >= next_metadata_refresh_ms_) {
    std::set<std::string> topics = remote_topics();
    if (topics.empty()) {
      next_metadata_refresh_ms_ = now + kMetadataRefreshMs;
    } else if (!refresh_metadata(topics)) {
      return true;  // failed through fail(): backs off
    }
  }
  if (!settle_all()) return !store_->stopping();
  bool sent = false;
  int64_t bandwidth_wait = 0;
  if (!fill(&sent, &bandwidth_wait)) return true;
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
        return true;
      }
    }
    publish(false);
    sleep_ms(bandwidth_wait > 0 ? bandwidth_wait : options_.linger_ms);
    // Look for new data (cheaply: offsets only; bytes at the next full refresh).
    if (bandwidth_wait == 0 && !refresh_local(false)) return false;
  }
  publish(false);
  return true;
}

bool Link::connect() {
  LinkStatus& status = status_.status();
  status.state = LinkState::kConnecting;
  publish(true);
  producer_.reset();
  client_.reset();
  client::ClientOptions copt;
  copt.bootstrap = options_.bootstrap;
  copt.connection.client_id = "eddy-forward-" + options_.name;
  copt.connect_timeout_ms = options_.connect_timeout_ms;
  copt.request_timeout_ms = options_.request_timeout_ms;
  copt.connection.sasl = options_.sasl;
  client::TransportFactory base = options_.transport_factory ? options_.transport_factory : client::make_tcp_transport;
  if (options_.tls) {
    // TLS over the base transport; the registry interrupts the TLS end,
    // which passes the interrupt to the socket under it.
    base = [base, tls = options_.tls]() { return client::make_tls_transport(tls, base()); };
  }
  copt.transport_factory = transports_->wrap(std::move(base));
  client_ = std::make_unique<client::Client>(copt);
  client::UplinkOptions uopt;
  uopt.acks = options_.acks;
  uopt.timeout_ms = static_cast<int32_t>(std::min<int64_t>(options_.request_timeout_ms, INT32_MAX));
  uopt.max_in_flight = options_.max_in_flight;
  producer_ = std::make_unique<client::UplinkProducer>(client_.get(), uopt);
  ++status.connects;

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
  std::set<std::string> topics = remote_topics();
  next_metadata_refresh_ms_ = port::monotonic_millis() + kMetadataRefreshMs;
  if (!topics.empty() && !refresh_metadata(topics)) return false;
  connected_ = true;
  status.state = LinkState::kConnected;
  status.last_error.clear();
  EDDY_LOG_INFO("forward link {}: connected to {} (producer id {} epoch {})", options_.name,
                status.bootstrap, identity_.producer_id, identity_.producer_epoch);
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
  const meta::ForwardProducer fresh{id, epoch};
  // Every partition starts again at sequence 0 under the new producer; at
  // the first start, only those that have none (a cursor taken up from
  // another node of a cluster goes on under its producer).
  std::vector<meta::ForwardCursor> cursors;
  for (auto& [key, p] : partitions_) {
    if (had_one || p.window.acked().producer_id < 0) p.window.restart_sequences(fresh);
    cursors.push_back(p.window.acked());
  }
  if (!save_cursors(cursors, &fresh)) return false;
  identity_ = fresh;
  producer_->set_identity(id, epoch);
  rewind();
  LinkStatus& status = status_.status();
  if (had_one) {
    ++status.producer_resets;
    EDDY_LOG_WARN(
        "forward link {}: {}; continuing with new producer id {} epoch {}",
        options_.name, why, id, epoch);
  }
  status.producer_id = id;
  status.producer_epoch = epoch;
  return true;
}

std::set<std::string> Link::remote_topics() const {
  std::set<std::string> topics;
  for (const auto& [key, p] : partitions_) {
    if (!p.remote_topic.empty()) topics.insert(p.remote_topic);
  }
  return topics;
}

bool Link::top_priority(int32_t* top) const {
  // Strict priority: only the highest class with something to deliver sends.
  // "Something" includes data appended but not yet below the high watermark
  // (not yet synced in disk mode): the class waits for it rather than let a
  // lower one go first.
  bool any = false;
  for (const auto& [key, p] : partitions_) {
    if (!p.paused.empty() || p.leader < 0) continue;
    if (has_unsent(p) || !p.window.idle() || p.window.send_offset() < p.log_end_offset) {
      *top = any ? std::max(*top, p.priority) : p.priority;
      any = true;
    }
  }
  return any;
}

bool Link::fill(bool* sent_any, int64_t* wait_ms) {
  *sent_any = false;
  *wait_ms = 0;
  int32_t top = 0;
  if (!top_priority(&top)) return true;
  std::vector<Partition*> eligible;
  for (auto& [key, p] : partitions_) {
    if (p.paused.empty() && p.leader >= 0 && p.priority == top && has_unsent(p) && p.window.can_send()) {
      eligible.push_back(&p);
    }
  }
  if (eligible.empty()) return true;
  // Rotate the starting partition so that a full request does not always
  // favour the same ones.
  rotation_ = (rotation_ + 1) % eligible.size();
  std::rotate(eligible.begin(), eligible.begin() + static_cast<std::ptrdiff_t>(rotation_), eligible.end());
  std::map<int32_t, std::vector<Partition*>> by_leader;
  for (Partition* p : eligible) by_leader[p->leader].push_back(p);

  for (auto& [node, parts] : by_leader) {
    while (producer_->in_flight(node) < static_cast<size_t>(options_.max_in_flight)) {
      std::vector<client::UplinkBatch> batches;
      if (!collect_request(parts, &batches, wait_ms)) return false;
      if (batches.empty()) break;
      if (port::log_level() <= port::LogLevel::kDebug) {
        std::string what;
        for (const auto& b : batches) {
          what += " " + *b.topic + "-" + std::to_string(b.partition) + "@seq" + std::to_string(b.base_sequence);
        }
        EDDY_LOG_DEBUG("forward link {}: produce to node {} (priority {}):{}", options_.name, node, top,
                       what);
      }
      Status s = producer_->send(node, batches);
      if (!s.ok()) {
        fail("sending to the central cluster: " + s.message());
        return false;
      }
      *sent_any = true;
      if (*wait_ms > 0) break;  // the bandwidth cap
    }
    if (*wait_ms > 0) break;
  }
  return true;
}

bool Link::collect_request(const std::vector<Partition*>& parts, std::vector<client::UplinkBatch>* batches,
                           int64_t* wait_ms) {
  uint64_t request_bytes = 0;
  for (Partition* p : parts) {
    if (!p->window.can_send()) continue;
    StoredBatch stored;
    if (!next_batch(*p, &stored)) {
      if (store_->stopping() || !connected_) return false;
      continue;
    }
    if (!batches->empty() && request_bytes + stored.bytes.size() > static_cast<uint64_t>(options_.max_request_bytes)) {
      break;
    }
    int64_t wait = bucket_.wait_ms(port::monotonic_millis());
    if (wait > 0) {
      *wait_ms = wait;
      break;
    }
    bucket_.take(port::monotonic_millis(), static_cast<int64_t>(stored.bytes.size()));
    client::UplinkBatch b;
    b.topic = &p->remote_topic;
    b.partition = p->partition;
    b.bytes = stored.bytes;
    b.tag = next_tag_++;
    b.base_sequence = p->window.send(b.tag, stored.base_offset, stored.next_offset, stored.bytes.size());
    b.producer_id = p->window.acked().producer_id;
    b.producer_epoch = p->window.acked().producer_epoch;
    p->read_ahead.consume(stored.bytes.size());
    tags_[b.tag] = {p->topic, p->partition};
    request_bytes += stored.bytes.size();
    batches->push_back(b);
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
  FailedAnswers failed;
  for (const client::UplinkOutcome& o : outcomes) {
    auto t = tags_.find(o.tag);
    if (t == tags_.end()) continue;  // sent before a rewind
    Key key = t->second;
    tags_.erase(t);
    auto it = partitions_.find(key);
    if (it == partitions_.end()) continue;
    Partition& p = it->second;
    SendWindow::Batch done{};
    if (o.status.ok()) {
      if (!p.window.acknowledge(o.tag, &done, o.remote_base_offset)) continue;  // superseded by a rewind
      p.forwarded_messages += done.next_offset - done.base_offset;
      p.forwarded_bytes += done.bytes;
      status_.count_forwarded(done.bytes, done.next_offset - done.base_offset);
      p.last_error.clear();
      changed.push_back(&p);
    } else if (const SendWindow::Batch* oldest = p.window.oldest(o.tag)) {
      note_failure(p, *oldest, o.status, &failed);
    }  // else superseded by a rewind
  }
  if (!changed.empty() && !save(changed)) return false;
  if (!changed.empty() && !failed.any) backoff_.reset();
  if (!failed.reset_reason.empty()) {
    rewind();
    // What the old producer had in flight is looked for under it first.
    if (!settle_all()) return false;
    return reset_producer(failed.reset_reason);
  }
  if (failed.any) {
    if (!failed.retry_reason.empty()) {
      // Retriable (leader moved, timeouts, not enough replicas): reconnect
      // with fresh metadata after a backoff.
      fail(failed.retry_reason);
      return false;
    }
    rewind();  // only pauses: the others resend right away
  }
  return true;
}

void Link::note_failure(Partition& p, const SendWindow::Batch& batch, const Status& status, FailedAnswers* failed) {
  const ErrorCode code = protocol::kafka_error(status);
  const UplinkErrorKind kind = classify_uplink_error(code);
  p.last_error = status.message();
  failed->any = true;
  if (kind == UplinkErrorKind::kProducerLost && batch.base_offset == p.window.acked().next_offset) {
    failed->reset_reason = "the central cluster does not know the producer's sequence for " + p.topic + "-" +
                           std::to_string(p.partition) + " (" + protocol::error_name(code) +
                           "; it expired after producer.id.expiration.ms, or the central data was lost)";
  } else if (kind == UplinkErrorKind::kProducerFenced) {
    failed->reset_reason = "the central cluster fenced the producer (" + std::string(protocol::error_name(code)) + ")";
  } else if (kind == UplinkErrorKind::kPausesPartition) {
    pause(p, status.message());
  } else if (failed->retry_reason.empty()) {
    failed->retry_reason = status.message();
  }
}

bool Link::save(const std::vector<Partition*>& changed) {
  std::vector<meta::ForwardCursor> cursors;
  cursors.reserve(changed.size());
  for (const Partition* p : changed) cursors.push_back(p->window.acked());
  return save_cursors(cursors, nullptr);
}

bool Link::save_cursors(const std::vector<meta::ForwardCursor>& cursors, const meta::ForwardProducer* producer) {
  Status s = progress_->save(options_.name, cursors, producer);
  if (!s.ok()) {
    // Nothing more is sent until progress can be saved again: the window
    // invariant (send_window.h) depends on it.
    EDDY_LOG_ERROR("forward link {}: saving progress failed: {}", options_.name, s.message());
    fail("saving progress: " + s.message());
    return false;
  }
  store_->cursors_saved(options_.name, cursors);
  return true;
}

void Link::rewind() {
  if (producer_) producer_->abandon();
  tags_.clear();
  any_unsettled_ = true;
  for (auto& [key, p] : partitions_) {
    p.window.rewind();
    p.read_ahead.clear();
  }
}

void Link::fail(const std::string& why) {
  if (stop_.load()) return;
  LinkStatus& status = status_.status();
  if (status.last_error != why) EDDY_LOG_WARN("forward link {}: {}", options_.name, why);
  status.last_error = why;
  rewind();
  connected_ = false;
  retry_at_ms_ = port::monotonic_millis() + backoff_.next_ms();
}

void Link::publish(bool force) {
  status_.publish(force, [this](LinkStatus* status) {
    status->producer_id = identity_.producer_id;
    status->producer_epoch = identity_.producer_epoch;
    if (status->state == LinkState::kConnected && !connected_) status->state = LinkState::kBackingOff;
    status->partitions.clear();
    for (const auto& [key, p] : partitions_) {
      const meta::ForwardCursor& acked = p.window.acked();
      PartitionStatus ps;
      ps.topic = p.topic;
      ps.partition = p.partition;
      ps.forwarded_offset = acked.next_offset;
      ps.remote_topic = p.remote_topic;
      ps.priority = p.priority;
      ps.log_start_offset = p.log_start_offset;
      ps.local_end_offset = p.log_end_offset;
      ps.backlog_messages = std::max<int64_t>(0, p.log_end_offset - std::max(acked.next_offset, p.log_start_offset));
      ps.backlog_bytes = p.backlog_bytes;
      // Dropped already counted, plus what the full policy dropped since (the
      // link counts it for good when it reads past the gap).
      ps.dropped_messages = acked.dropped_messages + std::max<int64_t>(0, p.log_start_offset - acked.next_offset);
      ps.rejected_appends = p.rejected_appends;
      ps.skipped_invalid_batches = p.skipped_invalid_batches;
      ps.lost_after_forwarding = p.lost_after_forwarding;
      ps.paused = p.paused;
      ps.last_error = p.last_error;
      ps.forwarded_messages = p.forwarded_messages;
      ps.forwarded_bytes = p.forwarded_bytes;
      status->partitions.push_back(std::move(ps));
    }
  });
}

}  // namespace eddy::forward

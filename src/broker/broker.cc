#include "broker/broker.h"

#include "port/log.h"
#include "port/port.h"
#include "protocol/errors.h"

namespace eddy::broker {

using protocol::ErrorCode;

namespace {

std::vector<int16_t> supported_api_keys() {
  std::vector<int16_t> keys;
  for (const auto& api : Broker::supported_apis()) keys.push_back(static_cast<int16_t>(api.key));
  return keys;
}

}  // namespace

Broker::Broker(port::Executor& executor, BrokerOptions options, meta::MetaStore* meta, storage::LogManager* logs)
    : executor_(executor),
      options_(std::move(options)),
      meta_(meta),
      logs_(logs),
      topics_(options_, meta, logs,
              [this](const Topic& topic, int32_t partition, storage::PartitionLog* log) {
                on_partition_opened(topic, partition, log);
              }),
      producer_state_(meta, options_.producer_id_expiration_ms),
      alive_(std::make_shared<bool>(true)),
      request_metrics_(supported_api_keys()) {
  topics_.set_partition_closing([this](const Topic& topic, int32_t partition, storage::PartitionLog* log) {
    on_partition_closing(topic, partition, log);
  });
}

Broker::~Broker() { *alive_ = false; }

Status Broker::start() {
  EDDY_DCHECK_ON_LOOP(executor_);
  Status s = topics_.load();
  if (!s.ok()) return s;
  if (s = load_cluster_brokers(); !s.ok()) return s;
  if (s = load_partition_leaders(); !s.ok()) return s;
  if (s = load_fenced_nodes(); !s.ok()) return s;
  if (s = load_sasl_secret(); !s.ok()) return s;
  if (s = load_acls(); !s.ok()) return s;
  if (!producer_state_error_.ok()) return producer_state_error_;
  schedule_producer_snapshots();
  started_ = true;
  if (s = start_groups(); !s.ok()) return s;
  return start_transactions();
}

void Broker::note_encode_problem(const Request& request, const Status& status) {
  // A value the negotiated version cannot carry: the frame is still valid
  // (the value is dropped); worth knowing, not worth failing the client.
  EDDY_LOG_DEBUG("encoding {} v{} for {}: {}", protocol::api_name(request.api_key()), request.version(),
                 request.client.peer, status.message());
}

void Broker::close_bad_request(Request& request, const std::string& why) {
  EDDY_LOG_WARN("closing connection from {} (client id '{}'): {} v{}: {}", request.client.peer,
                request.client_id(), protocol::api_name(request.api_key()), request.version(), why);
  request_metrics_.note_refused(request_metrics_.slot_for(request.api_key()));
  request.reply->close_connection();
}

void Broker::note_trailing_bytes(const Request& request, size_t count) {
  ++requests_with_trailing_bytes_;
  EDDY_LOG_DEBUG("ignoring {} bytes after the last field of {} v{} from {} (client id '{}')", count,
                 protocol::api_name(request.api_key()), request.version(), request.client.peer,
                 request.client_id());
}

void Broker::note_refused_batch(const Request& request, const std::string& topic, int32_t partition,
                                protocol::ErrorCode code, const std::string& why) {
  ++refused_batches_;
  const int64_t now = port::monotonic_millis();
  if (refused_batch_logged_ms_ >= 0 && now - refused_batch_logged_ms_ < 1000) {
    ++refused_batches_unlogged_;
    return;
  }
  refused_batch_logged_ms_ = now;
  EDDY_LOG_WARN("produce from {} (client id '{}') to {}-{} refused: {}: {} ({} refused batches not logged "
                "before this one)",
                request.client.peer, request.client_id(), topic, partition,
                protocol::error_name(code), why, refused_batches_unlogged_);
  refused_batches_unlogged_ = 0;
}

void Broker::handle(const ClientInfo& client, protocol::FrameBytes frame, std::unique_ptr<Reply> reply) {
  EDDY_DCHECK_ON_LOOP(executor_);
  auto request = std::make_unique<Request>();
  request->client = client;
  request->frame = std::move(frame);
  request->reply = std::move(reply);
  // After SaslHandshake v0 the frames are bare SASL tokens, not requests.
  if (sasl_gate(request, false)) return;
  Status s = protocol::parse_request_header(request->frame, &request->parsed);
  if (!s.ok()) {
    close_bad_request(*request, s.message());
    return;
  }
  if (sasl_gate(request, true)) return;
  const int16_t key = request->api_key();
  const int16_t version = request->version();
  const ApiSupport* api = find_api(key);
  if (key == static_cast<int16_t>(protocol::ApiKey::kApiVersions)) {
    handle_api_versions(std::move(request));  // answers any version (KIP-511)
    return;
  }
  if (api == nullptr) {
    close_bad_request(*request, "API not supported by this broker");
    return;
  }
  if (version < api->min_version || version > api->max_version) {
    close_bad_request(*request, "version not supported (this broker speaks " + std::to_string(api->min_version) +
                                    "-" + std::to_string(api->max_version) + ")");
    return;
  }
  (this->*api->handle)(std::move(request));
}

void Broker::handle_api_versions(RequestPtr request) {
  protocol::ApiVersionsResponse response;
  for (const auto& api : supported_apis()) {
    protocol::ApiVersionsResponse::ApiVersion v;
    v.api_key = static_cast<int16_t>(api.key);
    v.min_version = api.min_version;
    v.max_version = api.max_version;
    response.api_keys.push_back(v);
  }
  for (const ApiAnsweredAbove& api : options_.apis_answered_above) {
    protocol::ApiVersionsResponse::ApiVersion v;
    v.api_key = api.api_key;
    v.min_version = api.min_version;
    v.max_version = api.max_version;
    response.api_keys.push_back(v);
  }
  const ApiSupport* self = find_api(static_cast<int16_t>(protocol::ApiKey::kApiVersions));
  int16_t version = request->version();
  if (version > self->max_version || version < self->min_version) {
    // KIP-511: answer with version 0 and UNSUPPORTED_VERSION so that the
    // client can retry with a version we speak.
    response.error_code = protocol::to_int(ErrorCode::kUnsupportedVersion);
    note_errors(*request, response);
    protocol::OutputBuffer out;
    Status s = protocol::encode_response_frame(response, 0, request->correlation_id(), &out);
    if (!s.ok()) note_encode_problem(*request, s);
    request->reply->send(std::move(out));
    return;
  }
  protocol::ApiVersionsRequest body;
  if (!decode(*request, &body)) return;
  respond(*request, response);
}

const AdvertisedListener* Broker::endpoint_for(const std::string& listener) const {
  for (const auto& l : options_.advertised_listeners) {
    if (l.name == listener) return &l;
  }
  return options_.advertised_listeners.empty() ? nullptr : &options_.advertised_listeners.front();
}

void Broker::on_partition_opened(const Topic& topic, int32_t partition, storage::PartitionLog* log) {
  partition_names_[log] = {topic.name, partition};
  for (const PartitionObserver& observe : partition_observers_) observe(topic.name, partition, log, started_);
  ProducerReplayStats replay;
  const int64_t started = port::monotonic_millis();
  Status s = producer_state_.open_partition(topic.name, partition, log, port::wall_clock_millis(), &replay);
  if (!s.ok()) {
    EDDY_LOG_ERROR("{}", s.message());
    if (producer_state_error_.ok()) producer_state_error_ = s;
  } else if (replay.batches_replayed > 0 || replay.snapshot_rows > 0) {
    EDDY_LOG_INFO("{}-{}: producer state from {} snapshot rows and {} batches ({} bytes) in {} ms",
                  topic.name, partition, replay.snapshot_rows, replay.batches_replayed,
                  replay.bytes_replayed,
                  port::monotonic_millis() - started);
  }
  std::weak_ptr<bool> alive = alive_;
  std::string name = topic.name;
  port::Executor* executor = &executor_;
  // A marker appended may move the LSO alone (page-cache mode): wake
  // read_committed fetches, after the append that called this.
  log->set_stable_offset_listener([this, alive, name, partition, executor] {
    executor->post([this, alive, name, partition] {
      auto a = alive.lock();
      if (a && *a) wake_fetch_waiters(name, partition);
    });
  });
  log->set_durability_listener([this, alive, name, partition, executor](int64_t durable, Status status) {
    // Flusher thread: hand over to the reactor.
    executor->post([this, alive, name, partition, durable] {
      auto a = alive.lock();
      if (a && *a) on_partition_durable(name, partition, durable);
    });
  });
}

void Broker::on_partition_closing(const Topic&, int32_t, storage::PartitionLog* log) {
  // The group lets go of the log before the topic's removal deletes it.
  if (replication_ != nullptr) replication_->closing(log);
  partition_names_.erase(log);
}

ReplicaStatus Broker::replica_status(const Topic& topic, int32_t p, const storage::PartitionLog* log) const {
  // A partition of one replica has no group (partition_replication.h): not
  // asked, so that a cluster's unreplicated partitions cost nothing here.
  const auto i = static_cast<size_t>(p);
  if (replication_ == nullptr || log == nullptr || i >= topic.replicas.size() || topic.replicas[i].size() <= 1) {
    return {};
  }
  ReplicaStatus status = replication_->status(log);
  if (!status.replicated) {
    // Several replicas but no group (not created yet, or let go at
    // shutdown): nobody leads it here, and nothing bypasses the group.
    status = ReplicaStatus{};
    status.replicated = true;
    status.replicas = topic.replicas[i];
  } else if (status.leader && !log->replicated()) {
    // A leader whose log was not given the group's commit index yet would
    // read and acknowledge by the log's local rule: not served as leader
    // until it is (PartitionLog::set_replicated_high_watermark).
    status.leader = false;
  }
  return status;
}

void Broker::on_replicated_high_watermark(storage::PartitionLog* log) {
  EDDY_DCHECK_ON_LOOP(executor_);
  auto it = partition_names_.find(log);
  if (it == partition_names_.end()) return;
  const auto [topic, partition] = it->second;  // a copy: the wakes may answer a fetch of a removed topic
  complete_produce_waiters(false);
  complete_marker_waiters();
  wake_fetch_waiters(topic, partition);
}

void Broker::on_replica_log_changed(storage::PartitionLog* log, int64_t from, bool truncated) {
  EDDY_DCHECK_ON_LOOP(executor_);
  auto it = partition_names_.find(log);
  if (it == partition_names_.end()) return;
  const int64_t now = port::wall_clock_millis();
  if (!truncated) {
    Status s = producer_state_.follow(log, from, now);
    if (!s.ok()) {
      EDDY_LOG_ERROR("{}-{}: producer state does not follow the replicated batches from offset {}: {}",
                     it->second.first, it->second.second, from, s.to_string());
    }
    return;
  }
  ProducerReplayStats replay;
  const int64_t started = port::monotonic_millis();
  Status s = producer_state_.rebuild(log, now, &replay);
  if (!s.ok()) {
    EDDY_LOG_ERROR("{}-{}: producer state not rebuilt after replication cut the log: {}", it->second.first,
                   it->second.second, s.to_string());
  } else {
    EDDY_LOG_INFO("{}-{}: log cut to offset {} by replication; producer state rebuilt from {} snapshot rows and "
                  "{} batches in {} ms",
                  it->second.first, it->second.second, log->log_end_offset(), replay.snapshot_rows,
                  replay.batches_replayed, port::monotonic_millis() - started);
  }
  // Batches waiting for acks=all, and markers for WriteTxnMarkers, may be
  // gone with the cut.
  complete_produce_waiters(false);
  complete_marker_waiters();
}

void Broker::on_partition_durable(const std::string& topic, int32_t partition, int64_t durable_offset) {
  EDDY_DCHECK_ON_LOOP(executor_);
  if (replication_ != nullptr) {
    const Topic* t = topics_.find(topic);
    storage::PartitionLog* log = t != nullptr ? t->local(partition) : nullptr;
    if (log != nullptr) replication_->durable(log);  // may move the high watermark first
  }
  complete_produce_waiters(false);
  complete_marker_waiters();
  wake_fetch_waiters(topic, partition);
}

}  // namespace eddy::broker

#include "app/broker_options_from_config.h"

#include "app/broker_config.h"
#include "client/compression.h"
#include "client/record_stream.h"
#include "port/log.h"
#include "security/sasl_server.h"

namespace eddy::app {

storage::LogConfig log_defaults_from(const Config& config) {
  storage::LogConfig c;
  c.segment_bytes = static_cast<uint64_t>(config.get_long("log.segment.bytes"));
  c.retention_bytes = config.get_long("log.retention.bytes");
  // Kafka's precedence: log.retention.ms, then .minutes, then .hours.
  if (config.is_set("log.retention.ms")) {
    c.retention_ms = config.get_long("log.retention.ms");
  } else if (config.is_set("log.retention.minutes")) {
    int64_t m = config.get_long("log.retention.minutes");
    c.retention_ms = m < 0 ? storage::kNoLimit : m * 60 * 1000;
  } else {
    int64_t h = config.get_long("log.retention.hours");
    c.retention_ms = h < 0 ? storage::kNoLimit : h * 3600 * 1000;
  }
  c.flush_interval_messages = config.get_long("log.flush.interval.messages");
  c.flush_interval_ms = config.is_set("log.flush.interval.ms") ? config.get_long("log.flush.interval.ms")
                                                                : config.get_long("log.flush.scheduler.interval.ms");
  c.timestamp_type = config.get_string("log.message.timestamp.type") == "LogAppendTime"
                         ? protocol::TimestampType::kLogAppendTime
                         : protocol::TimestampType::kCreateTime;
  c.full_policy = config.get_string("eddy.full.policy") == "reject" ? storage::FullPolicy::kReject
                                                                      : storage::FullPolicy::kDropOldest;
  c.acks_all_waits_for = config.get_string("eddy.acks.all.waits.for") == "page-cache"
                             ? storage::AcksAllWaitsFor::kPageCache
                             : storage::AcksAllWaitsFor::kDisk;
  return c;
}

broker::BrokerOptions broker_options_from(const Config& config) {
  broker::BrokerOptions o;
  o.node_id = config.get_int("node.id");
  o.auto_create_topics = config.get_bool("auto.create.topics.enable");
  o.num_partitions = config.get_int("num.partitions");
  o.default_replication_factor = static_cast<int16_t>(config.get_int("default.replication.factor"));
  o.min_insync_replicas = config.get_int("min.insync.replicas");
  o.message_max_bytes = config.get_int("message.max.bytes");
  o.producer_id_expiration_ms = config.get_long("producer.id.expiration.ms");
  o.txn_marker_timeout_ms = config.get_long("request.timeout.ms");
  o.transactions.max_timeout_ms = static_cast<int32_t>(config.get_long("transaction.max.timeout.ms"));
  o.transactions.transactional_id_expiration_ms = config.get_long("transactional.id.expiration.ms");
  o.transactions.abort_timed_out_interval_ms =
      config.get_long("transaction.abort.timed.out.transaction.cleanup.interval.ms");
  o.transactions.remove_expired_interval_ms =
      config.get_long("transaction.remove.expired.transaction.cleanup.interval.ms");
  o.producer_snapshot_interval_ms = config.get_long("eddy.producer.snapshot.interval.ms");
  o.group_min_session_timeout_ms = config.get_int("group.min.session.timeout.ms");
  o.group_max_session_timeout_ms = config.get_int("group.max.session.timeout.ms");
  o.group_initial_rebalance_delay_ms = config.get_int("group.initial.rebalance.delay.ms");
  o.offsets_retention_ms = static_cast<int64_t>(config.get_int("offsets.retention.minutes")) * 60 * 1000;
  o.offsets_retention_check_interval_ms = config.get_long("offsets.retention.check.interval.ms");
  o.log_defaults = log_defaults_from(config);
  // Bounded so that one batch cannot take a board's memory: past 16 MiB of
  // decompressed records the lookup answers with the batch's base offset.
  o.decompress = [](protocol::Compression codec, std::span<const uint8_t> in, std::vector<uint8_t>* out) {
    return client::decompress(codec, in, size_t{16} << 20, out).ok();
  };
  o.validate_compressed_records = config.get_bool("eddy.validate.compressed.records");
  o.max_decompressed_batch_bytes = static_cast<uint64_t>(config.get_long("eddy.max.decompressed.batch.bytes"));
  const size_t bound = static_cast<size_t>(std::min<uint64_t>(o.max_decompressed_batch_bytes, SIZE_MAX));
  o.open_record_stream = [bound](protocol::Compression codec, std::span<const uint8_t> compressed) {
    return client::open_record_stream(codec, compressed, bound);
  };
  for (const ConfigKey& key : broker_schema().keys()) {
    if (key.ignored || !key.alias_of.empty()) continue;
    broker::BrokerConfigEntry e;
    e.name = key.name;
    e.value = config.get_string(key.name);
    e.is_default = !config.is_set(key.name);
    e.read_only = true;
    o.static_configs.push_back(std::move(e));
  }
  return o;
}

net::ServerOptions server_options_from(const Config& config) {
  net::ServerOptions o;
  o.max_request_bytes = config.get_int("socket.request.max.bytes");
  o.socket_send_buffer_bytes = config.get_int("socket.send.buffer.bytes");
  o.socket_receive_buffer_bytes = config.get_int("socket.receive.buffer.bytes");
  o.connections_max_idle_ms = config.get_long("connections.max.idle.ms");
  o.request_read_timeout_ms = config.get_long("eddy.request.read.timeout.ms");
  o.max_connections = static_cast<size_t>(config.get_long("max.connections"));
  o.max_connections_per_ip = static_cast<size_t>(config.get_long("max.connections.per.ip"));
  const int64_t queued = config.get_long("queued.max.request.bytes");
  o.queued_max_request_bytes = queued < 0 ? 0 : static_cast<uint64_t>(queued);
  return o;
}

namespace {

// The key that gives listener's mechanisms: Kafka's per-listener prefix
// (listener name in lower case) when set, else sasl.enabled.mechanisms.
std::string mechanisms_key(const Config& config, const std::string& listener) {
  std::string lower = listener;
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  for (const std::string& name : {lower, listener}) {
    const std::string key = "listener.name." + name + ".sasl.enabled.mechanisms";
    if (config.is_set(key)) return key;
  }
  return "sasl.enabled.mechanisms";
}

Status check_sasl_mechanisms(const Config& config, const net::ListenerConfig& listener) {
  const std::string key = mechanisms_key(config, listener.name);
  const std::vector<std::string> mechanisms = config.get_list(key);
  for (const std::string& m : mechanisms) {
    if (!security::is_implemented_sasl_mechanism(m)) {
      return Status::invalid_argument(config.origin(key) + ": " + key + ": SASL mechanism '" + m +
               "' is not available (SCRAM-SHA-512, SCRAM-SHA-256, PLAIN)");
    }
  }
  if (mechanisms.empty()) {
    return Status::invalid_argument(config.origin(key) + ": " + key + ": listener " + listener.name + " needs SASL but no mechanism is enabled");
  }
  return Status();
}

}  // namespace

Status listeners_from(const Config& config, std::vector<net::ListenerConfig>* listeners,
                      std::vector<net::ListenerConfig>* advertised) {
  // "origin: key: why" for a refusal of the value of key.
  auto refused = [&config](const char* key, const Status& why) {
    return Status::invalid_argument(config.origin(key) + ": " + key + ": " + why.message());
  };
  net::SecurityProtocolMap map;
  if (Status s = net::parse_security_protocol_map(config.get_string("listener.security.protocol.map"), &map);
      !s.ok()) {
    return refused("listener.security.protocol.map", s);
  }
  if (Status s = net::parse_listeners(config.get_string("listeners"), &map, listeners); !s.ok()) {
    return refused("listeners", s);
  }
  if (listeners->empty()) return refused("listeners", Status::invalid_argument("at least one listener is needed"));
  for (const net::ListenerConfig& l : *listeners) {
    if (!net::needs_sasl(l.security_protocol)) continue;
    if (Status s = check_sasl_mechanisms(config, l); !s.ok()) return s;
  }
  if (Status s = net::parse_listeners(config.get_string("advertised.listeners"), &map, advertised); !s.ok()) {
    return refused("advertised.listeners", s);
  }
  return Status();
}

std::vector<broker::SaslListener> sasl_listeners_from(const Config& config,
                                                      const std::vector<net::ListenerConfig>& listeners) {
  std::vector<broker::SaslListener> out;
  for (const net::ListenerConfig& l : listeners) {
    if (!net::needs_sasl(l.security_protocol)) continue;
    out.push_back({l.name, config.get_list(mechanisms_key(config, l.name)), config.get_long("connections.max.reauth.ms")});
  }
  return out;
}

std::vector<broker::AdvertisedListener> advertise(const std::vector<net::ListenerConfig>& advertised,
                                                  const std::vector<net::BoundListener>& bound) {
  std::vector<broker::AdvertisedListener> out;
  for (const auto& b : bound) {
    broker::AdvertisedListener a;
    a.name = b.name;
    a.host = b.host;
    a.port = b.port;
    for (const auto& adv : advertised) {
      if (adv.name == b.name) {
        a.host = adv.host;
        a.port = adv.port;
      }
    }
    if (a.host.empty() || a.host == "0.0.0.0" || a.host == "::") {
      EDDY_LOG_WARN("listener {} binds every interface and advertised.listeners does not name it: clients are "
                    "told to connect to localhost:{}",
                    a.name, a.port);
      a.host = "localhost";
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace eddy::app

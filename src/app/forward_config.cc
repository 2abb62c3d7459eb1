#include "app/forward_config.h"

#include <algorithm>
#include <cstdint>
#include <set>

#include "app/client_security.h"
#include "client/broker_address.h"
#include "client/record_stream.h"
#include "forward/topic_mapping.h"

namespace eddy::app {

namespace {

constexpr char kPrefix[] = "eddy.forward.";

std::string where(const Config& config, const std::string& key) { return config.origin(key) + ": " + key; }

// eddy.forward.links: valid, distinct names; and no eddy.forward.<link>.*
// key for a link that is not listed (a typo in a name).
Status check_link_names(const Config& config) {
  std::set<std::string> names;
  for (const std::string& name : config.get_list("eddy.forward.links")) {
    if (!valid_instance_name(name)) {
      return Status::invalid_argument(where(config, "eddy.forward.links") + ": '" + name +
               "' is not a valid link name (1-64 characters of [a-zA-Z0-9_-])");
    }
    if (!names.insert(name).second) {
      return Status::invalid_argument(where(config, "eddy.forward.links") + ": link '" + name + "' is listed twice");
    }
  }
  for (const std::string& key : config.set_keys()) {
    if (key.rfind(kPrefix, 0) != 0 || key == "eddy.forward.links") continue;
    std::string rest = key.substr(sizeof(kPrefix) - 1);
    std::string link = rest.substr(0, rest.find('.'));
    if (names.count(link) == 0) {
      return Status::invalid_argument(where(config, key) + ": link '" + link + "' is not listed in eddy.forward.links");
    }
  }
  return Status();
}

// <k>bootstrap.servers, required, and <k>security.protocol with its TLS and SASL keys
// (client_security.cc).
Status link_endpoint(const Config& config, const std::string& k, forward::LinkOptions* o) {
  std::vector<std::string> servers = config.get_list(k + "bootstrap.servers");
  if (servers.empty()) {
    return Status::invalid_argument("link '" + o->name + "': " + k + "bootstrap.servers is required");
  }
  std::string joined;
  for (const std::string& s : servers) joined += (joined.empty() ? "" : ",") + s;
  if (Status s = client::parse_broker_list(joined, &o->bootstrap); !s.ok()) {
    return Status::invalid_argument(where(config, k + "bootstrap.servers") + ": " + s.message());
  }
  ClientSecurity security;
  if (Status s = client_security(config, k, "link '" + o->name + "'", &security); !s.ok()) return s;
  o->security_protocol = security.protocol;
  o->tls = std::move(security.tls);
  o->sasl = std::move(security.sasl);
  return Status();
}

// <k>topics (at least one), <k>remote.topic, <k>topic.priorities.
Status link_topics(const Config& config, const std::string& k, forward::LinkOptions* o) {
  o->topics = config.get_list(k + "topics");
  if (o->topics.empty()) {
    return Status::invalid_argument(where(config, k + "topics") + ": no topics to forward");
  }
  o->remote_topic = config.get_string(k + "remote.topic");
  for (const std::string& entry : config.get_list(k + "topic.priorities")) {
    size_t colon = entry.rfind(':');
    std::optional<int64_t> priority;
    if (colon != std::string::npos) priority = parse_int64(entry.substr(colon + 1));
    if (colon == std::string::npos || colon == 0 || !priority || *priority < -1000000 || *priority > 1000000) {
      return Status::invalid_argument(where(config, k + "topic.priorities") + ": '" + entry +
               "' is not regex:priority (an integer between -1000000 and 1000000)");
    }
    o->priorities.push_back({entry.substr(0, colon), static_cast<int32_t>(*priority)});
  }
  return Status();
}

// The producer's and the retries' settings of one link.
Status link_sending(const Config& config, const std::string& k, forward::LinkOptions* o) {
  o->acks = config.get_string(k + "acks") == "1" ? 1 : -1;
  o->max_request_bytes = config.get_int(k + "max.request.size");
  o->max_in_flight = config.get_int(k + "max.in.flight.requests.per.connection");
  o->linger_ms = config.get_long(k + "linger.ms");
  o->bandwidth_bytes_per_sec = config.get_long(k + "bandwidth.bytes.per.sec");
  o->retry_backoff_ms = config.get_long(k + "retry.backoff.ms");
  o->retry_backoff_max_ms = config.get_long(k + "retry.backoff.max.ms");
  if (o->retry_backoff_max_ms < o->retry_backoff_ms) {
    return Status::invalid_argument(where(config, k + "retry.backoff.max.ms") + ": smaller than " + k + "retry.backoff.ms");
  }
  o->request_timeout_ms = config.get_long(k + "request.timeout.ms");
  o->connect_timeout_ms = config.get_long(k + "socket.connection.setup.timeout.ms");
  o->paused_retry_ms = config.get_long(k + "paused.retry.ms");
  o->create_topics = config.get_bool(k + "create.topics");
  o->replication_factor = static_cast<int16_t>(config.get_int(k + "replication.factor"));
  if (o->replication_factor == 0) {
    return Status::invalid_argument(where(config, k + "replication.factor") + ": 0 is not a replication factor (-1 or at least 1)");
  }
  return Status();
}

Status link_from(const Config& config, const std::string& name, forward::LinkOptions* o) {
  const std::string k = kPrefix + name + ".";
  o->name = name;
  o->gateway_id = config.get_string("eddy.gateway.id");
  if (Status s = link_endpoint(config, k, o); !s.ok()) return s;
  if (Status s = link_topics(config, k, o); !s.ok()) return s;
  if (Status s = link_sending(config, k, o); !s.ok()) return s;
  if (config.get_bool("eddy.validate.compressed.records")) {
    const size_t bound = static_cast<size_t>(
        std::min<uint64_t>(static_cast<uint64_t>(config.get_long("eddy.max.decompressed.batch.bytes")), SIZE_MAX));
    o->max_decompressed_batch_bytes = bound;
    o->open_record_stream = [bound](protocol::Compression codec, std::span<const uint8_t> compressed) {
      return client::open_record_stream(codec, compressed, bound);
    };
  }
  forward::TopicMapping mapping;
  if (Status s = forward::TopicMapping::create(*o, &mapping); !s.ok()) {
    return Status::invalid_argument("link '" + name + "': " + s.message());
  }
  return Status();
}

}  // namespace

Status forward_links_from(const Config& config, std::vector<forward::LinkOptions>* out) {
  out->clear();
  if (Status s = check_link_names(config); !s.ok()) return s;
  for (const std::string& name : config.get_list("eddy.forward.links")) {
    forward::LinkOptions o;
    if (Status s = link_from(config, name, &o); !s.ok()) return s;
    out->push_back(std::move(o));
  }
  return Status();
}

}  // namespace eddy::app

// What the properties file says about one store-and-forward link (see
// src/app/forward_config.cc for the keys and README.md for their meaning).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "client/broker_address.h"
#include "client/sasl_client_config.h"
#include "client/transport.h"
#include "protocol/record_validator.h"

namespace eddy::security {
class TlsContext;
}

namespace eddy::forward {

struct TopicPriority {
  std::string pattern;  // a regex matching whole local topic names
  int32_t priority = 0;
};

struct LinkOptions {
  std::string name;
  std::vector<client::BrokerAddress> bootstrap;
  // Local topics to forward: regexes (ECMAScript) matching whole names; a
  // plain name matches itself.
  std::vector<std::string> topics;
  // Remote topic name: ${topic}, ${gateway.id} and ${link} are replaced.
  std::string remote_topic = "${topic}";
  std::string gateway_id;
  int16_t acks = -1;  // -1 (all) or 1
  int32_t max_request_bytes = 1048576;
  // How often an idle link looks for new local data.
  int64_t linger_ms = 20;
  // 0: unlimited. Counts batch bytes sent (not protocol overhead).
  int64_t bandwidth_bytes_per_sec = 0;
  // Higher priority drains first; topics matching no entry have priority 0.
  std::vector<TopicPriority> priorities;
  int64_t retry_backoff_ms = 100;
  int64_t retry_backoff_max_ms = 30000;
  int64_t request_timeout_ms = 30000;
  int64_t connect_timeout_ms = 10000;
  // How long a partition paused by a non-retriable error waits before the
  // link tries it again (metadata refresh, then one batch).
  int64_t paused_retry_ms = 60000;
  int32_t max_in_flight = 5;  // produce requests per central broker (1..5)
  // A missing central topic is created with the local partition count and
  // this replication factor (-1: the central cluster's default), as
  // MirrorMaker 2 does; false: the topic pauses until someone creates it.
  bool create_topics = true;
  int16_t replication_factor = -1;
  // Decompresses stored compressed batches so that the link can walk their
  // records before it sends them (unset: only uncompressed ones are walked).
  protocol::RecordStreamFactory open_record_stream;
  uint64_t max_decompressed_batch_bytes = 64ull << 20;
  // security.protocol, as configured (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL).
  std::string security_protocol = "PLAINTEXT";
  // Set (SSL, SASL_SSL): every connection of the link runs TLS over the
  // transport below, verified with this client context.
  std::shared_ptr<const security::TlsContext> tls;
  // Set (SASL_PLAINTEXT, SASL_SSL): every connection authenticates after
  // ApiVersions. Holds the password: never logged nor published.
  std::shared_ptr<const client::SaslClientConfig> sasl;
  // How the link reaches the central cluster (empty: TCP). Unit tests put
  // an in-memory broker here.
  client::TransportFactory transport_factory;
};

}  // namespace eddy::forward

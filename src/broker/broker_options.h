// What the broker needs from the configuration, filled by the app.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/record_validator.h"
#include "storage/log_config.h"
#include "storage/partition_log.h"
#include "txn/coordinator.h"

namespace eddy::broker {

struct AdvertisedListener {
  std::string name;  // "PLAINTEXT"
  std::string host;
  int32_t port = 0;
};

// A listener whose clients must authenticate with SASL (SASL_PLAINTEXT,
// and SASL_SSL once TLS is there) and the mechanisms it offers
// (sasl.enabled.mechanisms, or listener.name.<name>.sasl.enabled.mechanisms).
struct SaslListener {
  std::string name;  // "SASL_PLAINTEXT"
  std::vector<std::string> mechanisms;  // implemented ones only, in the configured order
  // connections.max.reauth.ms: 0, a login lasts the connection; otherwise
  // the session lifetime told to clients of SaslAuthenticate v1+ (KIP-368).
  int64_t max_reauth_ms = 0;
};

// One broker configuration value as DescribeConfigs shows it.
struct BrokerConfigEntry {
  std::string name;
  std::string value;
  bool is_default = true;
  bool read_only = true;
};

// Authorization (authorizer.class.name, super.users,
// allow.everyone.if.no.acl.found): with enabled false every request is
// allowed and the ACL APIs answer SECURITY_DISABLED, as Kafka without an
// authorizer.
struct AuthorizerOptions {
  bool enabled = false;
  std::string super_users;  // "User:admin;User:ops"
  bool allow_everyone_if_no_acl_found = false;
};

// An API the layer above the broker answers before a frame reaches it (a
// cluster node's DescribeQuorum, answered from the Raft room): advertised in
// ApiVersions with the broker's own.
struct ApiAnsweredAbove {
  int16_t api_key = -1;
  int16_t min_version = 0;
  int16_t max_version = 0;
};

struct BrokerOptions {
  int32_t node_id = 1;
  std::vector<AdvertisedListener> advertised_listeners;
  std::vector<ApiAnsweredAbove> apis_answered_above;
  // Listeners that need SASL; a listener not named here needs none.
  std::vector<SaslListener> sasl_listeners;
  AuthorizerOptions authorizer;
  bool auto_create_topics = true;
  int32_t num_partitions = 1;
  int16_t default_replication_factor = 1;
  // min.insync.replicas: the broker default of the topic config (a cluster
  // node's replicated partitions answer acks=all NOT_ENOUGH_REPLICAS below
  // it; a single node accepts 1 only).
  int32_t min_insync_replicas = 1;
  // message.max.bytes: the broker default of the topic config max.message.bytes.
  int32_t message_max_bytes = 1048588;
  // producer.id.expiration.ms: an idempotent producer's state on a partition
  // is dropped after it has not written there for this long.
  int64_t producer_id_expiration_ms = 86400000;
  // How often producer state is snapshotted to the meta store (bounds the
  // log a restart replays to rebuild it).
  int64_t producer_snapshot_interval_ms = 30000;
  // Consumer groups: group.min/max.session.timeout.ms bound the session
  // timeouts members ask for; offsets.retention.minutes (as ms) and
  // offsets.retention.check.interval.ms drive committed-offset expiry.
  int32_t group_min_session_timeout_ms = 6000;
  int32_t group_max_session_timeout_ms = 1800000;
  int32_t group_initial_rebalance_delay_ms = 3000;
  int64_t offsets_retention_ms = 10080LL * 60 * 1000;
  int64_t offsets_retention_check_interval_ms = 600000;
  // The transaction coordinator: transaction.max.timeout.ms,
  // transactional.id.expiration.ms and the sweeper's intervals.
  txn::CoordinatorOptions transactions;
  // request.timeout.ms: how long a WriteTxnMarkers waits for its markers to
  // be durable (replicated: committed) before the partitions still waiting
  // are answered REQUEST_TIMED_OUT (Kafka's DelayedProduce of markers).
  int64_t txn_marker_timeout_ms = 30000;
  // Broker defaults of the topic-level storage configs.
  storage::LogConfig log_defaults;
  // The static broker configuration, for DescribeConfigs.
  std::vector<BrokerConfigEntry> static_configs;
  // Kafka's codecs (set by the app from the client room), for ListOffsets
  // by timestamp inside compressed batches; unset: the batch's base offset.
  storage::RecordsDecompressor decompress;
  // Record validation on append (protocol/record_validator.h): streaming
  // decompression for compressed batches (set by the app from the client
  // room; unset: compressed batches are stored unwalked),
  // eddy.validate.compressed.records and eddy.max.decompressed.batch.bytes.
  protocol::RecordStreamFactory open_record_stream;
  bool validate_compressed_records = true;
  uint64_t max_decompressed_batch_bytes = 64ull << 20;
};

}  // namespace eddy::broker

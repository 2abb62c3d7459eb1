#include "app/broker_config.h"

#include <algorithm>

namespace eddy::app {
namespace {

constexpr int64_t kInt32Max = 2147483647;
constexpr int64_t kLongMax = 9223372036854775807LL;

ConfigKey key(std::string name, ConfigType type, std::string def, std::string doc) {
  ConfigKey k;
  k.name = std::move(name);
  k.type = type;
  k.default_value = std::move(def);
  k.doc = std::move(doc);
  return k;
}
ConfigKey ranged(ConfigKey k, int64_t min, int64_t max) {
  k.min = min;
  k.max = max;
  return k;
}
ConfigKey eddy_key(ConfigKey k) {
  k.kafka = false;
  return k;
}
ConfigKey alias(std::string name, std::string of) {
  ConfigKey k = key(std::move(name), ConfigType::kString, "", "Alias of " + of + ".");
  k.alias_of = std::move(of);
  return k;
}
ConfigKey ignored(std::string name, std::string why) {
  ConfigKey k = key(std::move(name), ConfigType::kString, "", why);
  k.ignored = true;
  return k;
}
ConfigKey one_of(ConfigKey k, std::vector<std::string> allowed) {
  k.type = ConfigType::kEnum;
  k.allowed = std::move(allowed);
  return k;
}

// Kafka's listener security keys, each also as
// listener.name.<listener>.<key> (the listener's name in lower case, as
// Kafka writes it), which overrides the plain key for that listener.
void add_ssl_keys(std::vector<ConfigKey>* keys) {
  using T = ConfigType;
  const std::vector<ConfigKey> ssl = {
      one_of(key("ssl.keystore.type", T::kString, "PEM", "Format of the keystore; PEM only."), {"PEM"}),
      key("ssl.keystore.location", T::kString, "",
          "PEM file with the SSL listeners' certificate chain (own certificate first) and private key."),
      key("ssl.keystore.certificate.chain", T::kString, "",
          "The certificate chain as inline PEM text, instead of ssl.keystore.location."),
      key("ssl.keystore.key", T::kString, "", "The private key as inline PEM text (with ssl.keystore.certificate.chain)."),
      key("ssl.key.password", T::kString, "", "Password of an encrypted private key."),
      one_of(key("ssl.truststore.type", T::kString, "PEM", "Format of the truststore; PEM only."), {"PEM"}),
      key("ssl.truststore.location", T::kString, "",
          "PEM bundle of the CA certificates that verify client certificates (ssl.client.auth)."),
      key("ssl.truststore.certificates", T::kString, "", "The CA certificates as inline PEM text."),
      one_of(key("ssl.client.auth", T::kString, "none",
                 "Client certificates: none, requested (verified when presented) or required. A verified "
                 "certificate makes the principal User:<subject as RFC 2253>, e.g. User:CN=sensor,O=Plant."),
             {"none", "requested", "required"}),
      key("ssl.principal.mapping.rules", T::kString, "DEFAULT",
          "How a client certificate's subject becomes the principal's name, as Kafka: rules tried in order, "
          "DEFAULT (the whole subject) or RULE:pattern/replacement/ (then L or U to lower or upper case it), e.g. "
          "RULE:^CN=(.*?),OU=Sensors.*$/$1/L,DEFAULT. A certificate no rule maps is refused."),
      key("ssl.enabled.protocols", T::kList, "TLSv1.2,TLSv1.3",
          "TLS versions offered. mbedTLS 2.28 (Debian 12) has TLSv1.2 only: TLSv1.3 is skipped, a list of "
          "TLSv1.3 alone is an error."),
      key("ssl.cipher.suites", T::kList, "",
          "Cipher suites by their Kafka/IANA names (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, ...); empty: "
          "mbedTLS's defaults. An unknown name is an error."),
  };
  for (const ConfigKey& k : ssl) keys->push_back(k);
  for (ConfigKey k : ssl) {
    k.name = "listener.name.<listener>." + k.name;
    k.default_value.clear();
    k.doc = "The key after the prefix, for that listener only.";
    keys->push_back(std::move(k));
  }
}

std::vector<ConfigKey> make_keys() {
  using T = ConfigType;
  return {
      // Identity and network
      ranged(key("node.id", T::kInt, "1", "This broker's id in Metadata responses and (later) in a Raft cluster."), 0,
             kInt32Max),
      alias("broker.id", "node.id"),
      key("listeners", T::kList, "PLAINTEXT://127.0.0.1:9092",
          "Comma-separated NAME://host:port addresses to listen on. Empty host: all interfaces; port 0: any free "
          "port."),
      key("advertised.listeners", T::kList, "",
          "Addresses given to clients in Metadata; defaults to the listeners."),
      key("listener.security.protocol.map", T::kList,
          "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
          "Comma-separated LISTENER_NAME:PROTOCOL pairs: the security protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, "
          "SASL_SSL) of each listener named in listeners."),
      // SASL (README.md, "Authentication")
      key("sasl.enabled.mechanisms", T::kList, "SCRAM-SHA-512,SCRAM-SHA-256,PLAIN",
          "SASL mechanisms offered on SASL listeners, in this order: SCRAM-SHA-512, SCRAM-SHA-256, PLAIN (Kafka's "
          "default GSSAPI is not available). Credentials: `eddy users` or kafka-configs --entity-type users."),
      key("listener.name.<listener>.sasl.enabled.mechanisms", T::kList, "",
          "sasl.enabled.mechanisms for one listener (its name in lower case, as in Kafka)."),
      ranged(key("connections.max.reauth.ms", T::kLong, "0",
                 "0: a SASL login lasts as long as its connection. Otherwise a client that authenticated with "
                 "SaslAuthenticate v1+ is told this session lifetime and must re-authenticate on the same "
                 "connection before it ends (KIP-368: Kafka's Java clients and librdkafka 2.2+ do); a request "
                 "after it closes the connection."),
             0, kLongMax),
      // Authorization (README.md, "Authorization (ACLs)")
      key("authorizer.class.name", T::kString, "",
          "Empty: no authorization (every client may do everything; the ACL APIs answer SECURITY_DISABLED). "
          "org.apache.kafka.metadata.authorizer.StandardAuthorizer (or kafka.security.authorizer.AclAuthorizer): "
          "Kafka's ACLs, managed with kafka-acls, kept in eddy.db and enforced per request. Another class is an "
          "error."),
      key("super.users", T::kString, "",
          "Principals allowed everything whatever the ACLs, separated by ';' (User:admin;User:CN=ops)."),
      key("allow.everyone.if.no.acl.found", T::kBool, "false",
          "With an authorizer: whether a resource that no ACL names is open to everyone (Kafka's default: "
          "false, closed)."),
      ranged(key("sasl.server.max.receive.size", T::kInt, "524288",
                 "Largest request frame accepted from a client of a SASL listener before it has authenticated."),
             1024, kInt32Max),
      ranged(key("socket.request.max.bytes", T::kInt, "104857600",
                 "Largest request frame accepted; a larger one closes the connection."),
             1024, kInt32Max),
      ranged(key("socket.send.buffer.bytes", T::kInt, "102400",
                 "SO_SNDBUF of client connections; -1: the kernel's default (which it grows by itself)."),
             -1, kInt32Max),
      ranged(key("socket.receive.buffer.bytes", T::kInt, "-1",
                 "SO_RCVBUF of client connections; -1: the kernel's default, which it grows by itself as a "
                 "connection sends more (Kafka's default is 102400; a fixed buffer stops that growth, and "
                 "measured, large produce requests then cost the broker half as much CPU again)."),
             -1, kInt32Max),
      ranged(key("connections.max.idle.ms", T::kLong, "600000", "Idle connections are closed after this long."), 1,
             kLongMax),
      ranged(key("max.connections", T::kInt, "1000",
                 "At this many client connections the listeners stop accepting until one closes (new clients wait "
                 "in the kernel's backlog). Kafka's default is unlimited; a gateway's memory is not."),
             1, kInt32Max),
      ranged(key("queued.max.request.bytes", T::kLong, "67108864",
                 "Bytes of large requests (beyond a connection's 16 KiB read buffer) being received or waiting for "
                 "their answer (a produce that waits for its sync or its replicas has freed its records already "
                 "and counts no more), all connections together; a connection that would exceed it stops reading "
                 "until memory frees, a request larger than it closes its connection. -1: no bound (Kafka's "
                 "default)."),
             -1, kLongMax),
      eddy_key(ranged(key("eddy.request.read.timeout.ms", T::kLong, "30000",
                          "A request frame must arrive whole within this long of the end of the one before it "
                          "(time spent not reading, for request memory or the in-flight limit, is not counted); "
                          "otherwise its connection is closed and what the frame held is given back. <= 0: never."),
                      -1, kLongMax)),
      ranged(key("max.connections.per.ip", T::kInt, "2147483647",
                 "A connection from an address that already has this many is closed at once (and logged)."),
             1, kInt32Max),
      ranged(key("message.max.bytes", T::kInt, "1048588",
                 "Largest record batch accepted by Produce (after compression)."),
             64, kInt32Max),
      // Storage
      key("log.dirs", T::kString, "./data", "Directory for partition logs and the metadata database."),
      alias("log.dir", "log.dirs"),
      ranged(key("num.partitions", T::kInt, "1", "Partitions of an automatically created topic."), 1, 100000),
      key("auto.create.topics.enable", T::kBool, "true",
          "Create a topic on first Metadata or Produce request that names it."),
      ranged(key("default.replication.factor", T::kInt, "1",
                 "Replication factor of topics created without one (automatically, or with -1). A single node keeps "
                 "one copy whatever it is; a cluster places each partition on this many nodes (at most the "
                 "number of nodes)."),
             1, 32767),
      ranged(key("min.insync.replicas", T::kInt, "1",
                 "Replicas (the leader included) that must be in sync for acks=all to be taken, else "
                 "NOT_ENOUGH_REPLICAS (topic config: min.insync.replicas). A single node is the only replica: 1."),
             1, kInt32Max),
      ranged(key("log.segment.bytes", T::kInt, "16777216",
                 "Size of each preallocated segment file (topic config: segment.bytes). Eddy's default is 16 MiB, "
                 "not Kafka's 1 GiB."),
             64 * 1024, kInt32Max),
      ranged(key("log.retention.bytes", T::kLong, "-1",
                 "Bytes one partition keeps, rounded up to whole segments (at least 2): its ring; -1 is no limit "
                 "of its own, only eddy.disk.budget.bytes (topic config: retention.bytes)."),
             -1, kLongMax),
      ranged(key("log.retention.ms", T::kLong, "604800000",
                 "Age after which a closed segment is recycled; -1 is no limit (topic config: retention.ms)."),
             -1, kLongMax),
      ranged(key("log.retention.minutes", T::kLong, "", "As log.retention.ms, in minutes (log.retention.ms wins)."), -1,
             kLongMax),
      ranged(key("log.retention.hours", T::kLong, "168", "As log.retention.ms, in hours (lowest precedence)."), -1,
             kLongMax),
      ranged(key("log.flush.interval.messages", T::kLong, "9223372036854775807",
                 "fdatasync a partition after this many appended messages (topic config: flush.messages)."),
             1, kLongMax),
      ranged(key("log.flush.interval.ms", T::kLong, "",
                 "fdatasync a partition at least this often; unset: use log.flush.scheduler.interval.ms (topic config: "
                 "flush.ms)."),
             0, kLongMax),
      ranged(key("log.flush.scheduler.interval.ms", T::kLong, "9223372036854775807",
                 "How often the flusher looks for partitions due to be synced."),
             1, kLongMax),
      one_of(key("log.message.timestamp.type", T::kString, "CreateTime",
                 "CreateTime keeps the producer's timestamps; LogAppendTime stamps batches on append."),
             {"CreateTime", "LogAppendTime"}),
      ranged(key("offsets.retention.minutes", T::kInt, "10080",
                 "Committed offsets of an empty group expire after this long."),
             1, kInt32Max),
      ranged(key("offsets.retention.check.interval.ms", T::kLong, "600000",
                 "How often committed offsets of empty groups are checked for expiry."),
             1, kLongMax),
      ranged(key("group.min.session.timeout.ms", T::kInt, "6000",
                 "The smallest session timeout a consumer group member may ask for."),
             1, kInt32Max),
      ranged(key("group.max.session.timeout.ms", T::kInt, "1800000",
                 "The largest session timeout a consumer group member may ask for."),
             1, kInt32Max),
      ranged(key("group.initial.rebalance.delay.ms", T::kInt, "3000",
                 "The first rebalance of an empty group waits this long for more members to join."),
             0, kInt32Max),
      ranged(key("producer.id.expiration.ms", T::kLong, "86400000",
                 "An idempotent producer's sequence state on a partition is forgotten after it has not written "
                 "there for this long."),
             1, kLongMax),
      ranged(key("transaction.max.timeout.ms", T::kInt, "900000",
                 "The longest transaction.timeout.ms a transactional producer may ask for "
                 "(InitProducerId answers INVALID_TRANSACTION_TIMEOUT above it)."),
             1, kInt32Max),
      ranged(key("transactional.id.expiration.ms", T::kLong, "604800000",
                 "A transactional id with no transaction in flight is forgotten after it has not been used for "
                 "this long."),
             1, kLongMax),
      ranged(key("transaction.abort.timed.out.transaction.cleanup.interval.ms", T::kLong, "10000",
                 "How often transactions open longer than their timeout are looked for and aborted (their "
                 "producer is fenced)."),
             1, kLongMax),
      ranged(key("transaction.remove.expired.transaction.cleanup.interval.ms", T::kLong, "3600000",
                 "How often transactional ids past transactional.id.expiration.ms are removed."),
             1, kLongMax),
      ranged(key("request.timeout.ms", T::kLong, "30000",
                 "How long a WriteTxnMarkers (kafka-transactions abort, another node's transaction coordinator) "
                 "waits for its markers to be durable (replicated partitions: committed) before the partitions "
                 "still waiting are answered REQUEST_TIMED_OUT."),
             1, kLongMax),
      // Eddy's own keys
      eddy_key(one_of(key("eddy.acks.all.waits.for", T::kString, "disk",
                          "What an acks=all (acks=-1) Produce waits for: 'disk' (after fdatasync, group commit) or "
                          "'page-cache' (after the write; a power cut may lose it)."),
                      {"disk", "page-cache"})),
      eddy_key(one_of(key("eddy.full.policy", T::kString, "drop-oldest",
                          "When a partition's ring (retention.bytes) or the disk budget is full and the oldest "
                          "segment is not yet forwarded: 'drop-oldest' recycles it anyway, 'reject' refuses new "
                          "batches with a retriable error until it is forwarded (topic config: eddy.full.policy)."),
                      {"drop-oldest", "reject"})),
      eddy_key(ranged(key("eddy.disk.budget.bytes", T::kLong, "",
                          "Disk space all partitions and the metadata of log.dirs may take together. A topic or "
                          "partition whose segments do not fit in what is left is refused (POLICY_VIOLATION); a "
                          "partition without retention.bytes grows only while the budget has room. Unset: half of "
                          "the filesystem, at most what is free plus what the data directory holds at startup."),
                      16 << 20, kLongMax)),
      eddy_key(ranged(key("eddy.producer.snapshot.interval.ms", T::kLong, "30000",
                          "How often idempotent-producer state is saved to the meta store; a restart replays the "
                          "log written since the last save to rebuild it."),
                      100, kLongMax)),
      eddy_key(key("eddy.validate.compressed.records", T::kBool, "true",
                   "Walk the records of compressed batches on append as those of uncompressed ones are (streaming "
                   "decompression, nothing kept): a malformed one is refused instead of stored. 'false' stores "
                   "compressed batches after the header and CRC checks only, for producers you trust.")),
      eddy_key(ranged(key("eddy.max.decompressed.batch.bytes", T::kLong, "67108864",
                          "The most a compressed batch may decompress to (64 MiB: 64 times Kafka's default "
                          "message.max.bytes); a larger one is refused with MESSAGE_TOO_LARGE after that much work, "
                          "so that a decompression bomb costs nothing."),
                      1024, kLongMax)),
      // Replication (src/raft/README.md)
      key("controller.quorum.voters", T::kList, "",
          "Empty: a single node. Otherwise the controller quorum's voters as id@host:port, e.g. "
          "1@10.0.0.1:9093,2@10.0.0.2:9093,3@10.0.0.3:9093: each address is that node's controller listener; "
          "node.id must be one of the ids."),
      key("controller.listener.names", T::kList, "CONTROLLER",
          "The listener (in listeners, mapped in listener.security.protocol.map, PLAINTEXT only for now) on which "
          "this node takes Raft traffic from the other voters; it is never advertised to clients."),
      ranged(key("controller.quorum.election.timeout.ms", T::kInt, "1000",
                 "A voter that hears from no leader for this long (randomised up to twice as long) stands for "
                 "election."),
             10, kInt32Max),
      ranged(key("controller.quorum.fetch.timeout.ms", T::kInt, "2000",
                 "A follower without an answer from its leader, or a leader without fetches from a majority, for "
                 "this long gives up the epoch."),
             10, kInt32Max),
      ranged(key("controller.quorum.request.timeout.ms", T::kInt, "2000",
                 "How long a Raft request to another voter (connect included) may take before it is dropped."),
             10, kInt32Max),
      ranged(key("replica.lag.time.max.ms", T::kLong, "30000",
                 "A follower of a replicated partition is in sync (in the ISR, counted for acks=all and "
                 "min.insync.replicas) while it reached the leader's log end this recently."),
             1, kLongMax),
      ranged(key("broker.session.timeout.ms", T::kInt, "9000",
                 "The controller leader fences a node it has had no fetch of the controller log from for this long "
                 "(and unfences it once it fetches again): every node's Metadata then names the node's replicas "
                 "offline, leaves it out of the ISR and the brokers, and names no leader for a partition whose "
                 "published leader it was. A new controller leader fences nobody during its first such period."),
             100, kInt32Max),
      ranged(key("metadata.log.max.record.bytes.between.snapshots", T::kLong, "1048576",
                 "A node snapshots the cluster's metadata once this many bytes of controller records were applied "
                 "since its last snapshot, and its controller log then starts there, so the log stays this small "
                 "(Kafka's default is 20 MiB; 1 MiB suits a gateway's flash). A node whose log lags behind the "
                 "leader's start fetches the leader's snapshot."),
             1024, kLongMax),
      ranged(key("metadata.log.max.snapshot.interval.ms", T::kLong, "3600000",
                 "A node that applied controller records not yet in its snapshot snapshots them at the latest "
                 "after this long, however few they are (0: only by bytes)."),
             0, kLongMax),
      eddy_key(key("eddy.quorum.bootstrap", T::kBool, "false",
                   "Only read when this node finds no Raft state in log.dirs. true: it is a first start of a new "
                   "cluster, a full voter at once (set it for the first start only, e.g. as --override). false: "
                   "the data directory was lost or replaced, so the node catches up from the leader before it may "
                   "vote or stand (a wiped voter voting at once could elect a leader that lacks committed data).")),
      // Store-and-forward (src/forward/README.md)
      eddy_key(key("eddy.gateway.id", T::kString, "",
                   "This gateway's name, for ${gateway.id} in eddy.forward.<link>.remote.topic.")),
      eddy_key(key("eddy.forward.links", T::kList, "",
                   "Names of the store-and-forward links to central clusters ([a-zA-Z0-9_-]); each is configured "
                   "with the eddy.forward.<link>.* keys.")),
      eddy_key(key("eddy.forward.<link>.bootstrap.servers", T::kList, "",
                   "host:port list of the central Kafka cluster (required for each link).")),
      eddy_key(key("eddy.forward.<link>.topics", T::kList, ".*",
                   "Local topics to forward: comma-separated regexes matching whole names (a plain name matches "
                   "itself).")),
      eddy_key(key("eddy.forward.<link>.remote.topic", T::kString, "${topic}",
                   "Name of the central topic: ${topic}, ${gateway.id} and ${link} are replaced (e.g. "
                   "'${gateway.id}.${topic}'). A missing central topic is created (create.topics) or pauses that topic.")),
      eddy_key(key("eddy.forward.<link>.create.topics", T::kBool, "true",
                   "Create a missing central topic with the local partition count, as MirrorMaker 2 does; false: "
                   "the topic pauses until it exists.")),
      eddy_key(ranged(key("eddy.forward.<link>.replication.factor", T::kInt, "-1",
                          "Replication factor of the central topics the link creates; -1: the central cluster's "
                          "default.replication.factor."),
                      -1, 32767)),
      eddy_key(key("eddy.forward.<link>.topic.priorities", T::kList, "",
                   "regex:priority pairs; after an outage the highest priority drains first (default priority 0).")),
      eddy_key(one_of(key("eddy.forward.<link>.acks", T::kString, "all",
                          "acks of the uplink producer: 'all' (-1) or '1'."),
                      {"all", "-1", "1"})),
      eddy_key(ranged(key("eddy.forward.<link>.max.request.size", T::kInt, "1048576",
                          "Bytes of batches per Produce request to the central cluster (a larger stored batch "
                          "goes alone)."),
                      1024, kInt32Max)),
      eddy_key(ranged(key("eddy.forward.<link>.max.in.flight.requests.per.connection", T::kInt, "5",
                          "Produce requests in flight per central broker (Kafka deduplicates the last 5)."),
                      1, 5)),
      eddy_key(ranged(key("eddy.forward.<link>.linger.ms", T::kLong, "20",
                          "How often an idle link looks for new local data."),
                      1, 60000)),
      eddy_key(ranged(key("eddy.forward.<link>.bandwidth.bytes.per.sec", T::kLong, "0",
                          "Cap on the bytes of batches sent per second, for metered links; 0: no cap."),
                      0, kLongMax)),
      eddy_key(ranged(key("eddy.forward.<link>.retry.backoff.ms", T::kLong, "100",
                          "First wait after a failure; doubles per consecutive failure, with jitter."),
                      1, kLongMax)),
      eddy_key(ranged(key("eddy.forward.<link>.retry.backoff.max.ms", T::kLong, "30000",
                          "Longest wait between two attempts."),
                      1, kLongMax)),
      eddy_key(ranged(key("eddy.forward.<link>.request.timeout.ms", T::kLong, "30000",
                          "How long to wait for the central cluster's answer."),
                      1, kInt32Max)),
      eddy_key(ranged(key("eddy.forward.<link>.socket.connection.setup.timeout.ms", T::kLong, "10000",
                          "How long a connection attempt to the central cluster may take."),
                      1, kLongMax)),
      eddy_key(ranged(key("eddy.forward.<link>.paused.retry.ms", T::kLong, "60000",
                          "A topic paused by a non-retriable error (missing central topic, authorization, batch "
                          "too large) is tried again after this long."),
                      100, kLongMax)),
      eddy_key(one_of(key("eddy.forward.<link>.security.protocol", T::kString, "PLAINTEXT",
                          "Transport to the central cluster: PLAINTEXT, SSL (TLS), SASL_PLAINTEXT (SASL over "
                          "TCP) or SASL_SSL (SASL over TLS). A TLS or authentication failure backs the link off "
                          "with the reason in `eddy forward status`, retried at retry.backoff.ms doubling."),
                      {"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"})),
      eddy_key(one_of(key("eddy.forward.<link>.sasl.mechanism", T::kString, "PLAIN",
                          "SASL mechanism of a SASL_* link: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512."),
                      {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"})),
      eddy_key(key("eddy.forward.<link>.sasl.jaas.config", T::kString, "",
                   "Credentials of a SASL_* link in Kafka's client form: "
                   "'org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" "
                   "password=\"p\";' (or PlainLoginModule). Or use sasl.username with sasl.password[.file].")),
      eddy_key(key("eddy.forward.<link>.sasl.username", T::kString, "",
                   "User name of a SASL_* link (instead of sasl.jaas.config).")),
      eddy_key(key("eddy.forward.<link>.sasl.password", T::kString, "",
                   "Password of a SASL_* link, with sasl.username. Never logged nor shown in the status.")),
      eddy_key(key("eddy.forward.<link>.sasl.password.file", T::kString, "",
                   "A file holding the password (trailing newline ignored), so that it need not sit in the "
                   "properties file; instead of sasl.password.")),
      eddy_key(key("eddy.forward.<link>.ssl.truststore.location", T::kString, "",
                   "PEM bundle of the CA certificates that verify the central cluster (required for SSL and "
                   "SASL_SSL: Eddy has no default CA list).")),
      eddy_key(key("eddy.forward.<link>.ssl.endpoint.identification.algorithm", T::kString, "https",
                   "'https': the central broker's certificate must name the host connected to (a DNS name: "
                   "mbedTLS matches no IP address SANs); empty: only the chain is verified.")),
      eddy_key(key("eddy.forward.<link>.ssl.keystore.location", T::kString, "",
                   "PEM file with the link's client certificate chain and private key, for a central listener "
                   "with ssl.client.auth=required (mutual TLS).")),
      eddy_key(key("eddy.forward.<link>.ssl.keystore.certificate.chain", T::kString, "",
                   "The client certificate chain as inline PEM text, instead of ssl.keystore.location.")),
      eddy_key(key("eddy.forward.<link>.ssl.keystore.key", T::kString, "",
                   "The client private key as inline PEM text (with ssl.keystore.certificate.chain).")),
      eddy_key(key("eddy.forward.<link>.ssl.key.password", T::kString, "",
                   "Password of an encrypted client private key.")),
      // Metrics and the status page (README.md)
      eddy_key(key("eddy.metrics.listener", T::kString, "",
                   "http://HOST:PORT for the metrics listener: Prometheus text at /metrics, the status page at /, "
                   "its data at /status.json. Empty host: every IPv4 interface; port 0: any free port (logged). "
                   "Unset: no listener.")),
      eddy_key(ranged(key("eddy.metrics.history.sample.ms", T::kLong, "15000",
                          "How often the status page's backlog history samples each link; it keeps 240 samples "
                          "(an hour at the default)."),
                      100, 3600000)),
      eddy_key(one_of(key("eddy.log.level", T::kString, "info", "Broker log level on stderr."),
                      {"debug", "info", "warn", "error", "off"})),
      // Accepted so that a Kafka server.properties can be reused.
      ignored("num.network.threads", "Kafka thread pool size; Eddy runs one reactor thread."),
      ignored("num.io.threads", "Kafka thread pool size; Eddy runs one reactor thread."),
      ignored("num.recovery.threads.per.data.dir", "Kafka thread pool size; Eddy recovers on one thread."),
      ignored("offsets.topic.replication.factor", "Eddy keeps group offsets in its metadata database."),
      ignored("transaction.state.log.replication.factor",
              "Eddy keeps transaction state in its metadata database, not in a replicated log."),
      ignored("transaction.state.log.min.isr",
              "Eddy keeps transaction state in its metadata database, not in a replicated log."),
      ignored("transaction.state.log.num.partitions",
              "Eddy keeps transaction state in its metadata database: one coordinator, no log partitions."),
      ignored("transaction.state.log.segment.bytes",
              "Eddy keeps transaction state in its metadata database, not in log segments."),
      ignored("transaction.state.log.load.buffer.size",
              "Eddy loads transaction state from its metadata database at startup, not from a log."),
      ignored("log.retention.check.interval.ms", "Eddy checks retention when a segment rolls."),
  };
}

std::vector<ConfigKey> all_keys() {
  std::vector<ConfigKey> keys = make_keys();
  // After the network keys.
  auto after = std::find_if(keys.begin(), keys.end(), [](const ConfigKey& k) { return k.name == "message.max.bytes"; });
  std::vector<ConfigKey> ssl;
  add_ssl_keys(&ssl);
  keys.insert(after == keys.end() ? keys.end() : after + 1, ssl.begin(), ssl.end());
  return keys;
}

}  // namespace

const ConfigSchema& broker_schema() {
  static const ConfigSchema schema(all_keys());
  return schema;
}

Status load_broker_config(const std::string& path, const std::vector<std::string>& overrides, Config* config,
                          std::vector<std::string>* warnings) {
  std::vector<Property> properties;
  if (!path.empty()) {
    if (Status s = read_properties_file(path, &properties); !s.ok()) return s;
  }
  for (const std::string& o : overrides) {
    size_t eq = o.find('=');
    Property p;
    p.source = "--override";
    if (eq == std::string::npos) {
      p.key = o;
      return Status::invalid_argument(describe_property_error(p, "expected key=value"));
    }
    p.key = o.substr(0, eq);
    p.value = o.substr(eq + 1);
    properties.push_back(std::move(p));
  }
  return config->apply(properties, warnings);
}

std::string describe_broker_schema_markdown() {
  std::string out = "| key | default | meaning |\n|---|---|---|\n";
  for (const ConfigKey& k : broker_schema().keys()) {
    std::string def = k.default_value.empty() ? "(unset)" : "`" + k.default_value + "`";
    std::string doc = k.doc;
    if (k.ignored) {
      def = "(ignored)";
    } else if (!k.kafka) {
      doc = "Eddy: " + doc;
    }
    out += "| `" + k.name + "` | " + def + " | " + doc + " |\n";
  }
  return out;
}

}  // namespace eddy::app

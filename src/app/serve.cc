#include "app/serve.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <functional>
#include <map>
#include <memory>
#include <thread>

#include "app/broker_config.h"
#include "app/broker_frame_handler.h"
#include "app/cluster_controller.h"
#include "app/controller_quorum.h"
#include "app/partition_groups.h"
#include "app/quorum_config.h"
#include "app/authorizer_config.h"
#include "app/broker_options_from_config.h"
#include "app/listener_tls.h"
#include "app/forward_config.h"
#include "app/metrics_endpoint.h"
#include "app/service_manager.h"
#include "broker/broker.h"
#include "forward/forwarder.h"
#include "meta/meta_store.h"
#include "protocol/generated/apis.h"
#include "protocol/generated/describe_quorum.h"
#include "raft/kafka_peer_channel.h"
#include "net/control_server.h"
#include "net/reactor.h"
#include "net/server.h"
#include "storage/disk_budget.h"
#include "storage/log_manager.h"
#include "app/cli.h"
#include "app/version.h"
#include "port/log.h"
#include "port/port.h"

namespace eddy::app {
namespace {

struct ServeArgs {
  std::string config_path;
  std::vector<std::string> overrides;
};

Status parse_serve_args(const std::vector<std::string>& args, ServeArgs* out) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--override") {
      if (i + 1 == args.size()) {
        return Status::invalid_argument("--override needs key=value");
      }
      out->overrides.push_back(args[++i]);
    } else if (a.rfind("--override=", 0) == 0) {
      out->overrides.push_back(a.substr(11));
    } else if (!a.empty() && a[0] == '-') {
      return Status::invalid_argument("unknown option '" + a + "'");
    } else if (out->config_path.empty()) {
      out->config_path = a;
    } else {
      return Status::invalid_argument("more than one config file given ('" + out->config_path + "', '" + a + "')");
    }
  }
  return Status();
}

// How often time-based retention runs.
constexpr int64_t kRetentionCheckMs = 30000;
// How long in-flight requests get to finish on shutdown.
constexpr int64_t kShutdownDeadlineMs = 5000;

// The control socket's commands (see net/control_server.h).
std::string control_command(const forward::Forwarder& forwarder, const storage::DiskBudget& budget,
                            const std::string& command) {
  const forward::DiskBudgetStatus disk{budget.limit_bytes(), budget.used_bytes(), budget.free_bytes()};
  if (command == "forward status") return net::control_reply_ok(forwarder.status_text(false, &disk));
  if (command == "forward status json") return net::control_reply_ok(forwarder.status_text(true, &disk));
  return net::control_reply_error("unknown command '" + command + "' (known: forward status [json])");
}

// Sets the disk budget before any partition is opened: eddy.disk.budget.bytes,
// or default_budget_bytes() of the data directory's filesystem. False when
// the default is needed and the filesystem cannot be measured.
bool set_disk_budget(const Config& config, storage::LogManager* logs) {
  const std::string& dir = logs->directory();
  storage::DataDirectorySpace space;
  const Status measured = storage::measure_data_directory(dir, &space);
  const uint64_t within_reach = space.available_bytes + space.directory_bytes;
  uint64_t limit = 0;
  if (config.is_set("eddy.disk.budget.bytes")) {
    limit = static_cast<uint64_t>(config.get_long("eddy.disk.budget.bytes"));
    EDDY_LOG_INFO("disk budget {} ({} bytes: eddy.disk.budget.bytes, {})",
                  storage::human_bytes(limit), limit, config.origin("eddy.disk.budget.bytes"));
    if (measured.ok() && limit > within_reach) {
      EDDY_LOG_WARN("eddy.disk.budget.bytes={} is more than the filesystem of {} can give ({} free + {} "
                    "already in the data directory): the disk may fill before the budget does",
                    limit, dir, storage::human_bytes(space.available_bytes),
                    storage::human_bytes(space.directory_bytes));
    }
  } else {
    if (!measured.ok()) {
      EDDY_LOG_ERROR("cannot measure the filesystem of {} ({}): set eddy.disk.budget.bytes", dir,
                     measured.to_string());
      return false;
    }
    limit = storage::default_budget_bytes(space);
    EDDY_LOG_INFO("disk budget {} ({} bytes: default, half of the {} filesystem, at most the {} free "
                  "plus the {} already in {}; set eddy.disk.budget.bytes to choose)",
                  storage::human_bytes(limit), limit, storage::human_bytes(space.filesystem_bytes),
                  storage::human_bytes(space.available_bytes),
                  storage::human_bytes(space.directory_bytes), dir);
  }
  logs->budget().set_limit(limit);
  return true;
}

// After the topics are loaded: what they take, and a warning when existing
// partitions were promised more than the budget (a lower limit than before).
void report_disk_budget(const storage::DiskBudget& budget) {
  if (budget.used_bytes() > budget.limit_bytes()) {
    EDDY_LOG_WARN("the partitions on disk and the reserve for metadata take {}, more than "
                  "eddy.disk.budget.bytes={} ({}): no topic or "
                  "partition can be created, and partitions without retention.bytes do not grow, until topics are "
                  "deleted or their retention.bytes lowered",
                  storage::human_bytes(budget.used_bytes()), budget.limit_bytes(),
                  storage::human_bytes(budget.limit_bytes()));
    return;
  }
  EDDY_LOG_INFO("disk budget: {} used, {} free", storage::human_bytes(budget.used_bytes()),
                storage::human_bytes(budget.free_bytes()));
}

// The data directory's two stores: the partition logs (with the disk
// budget) and the meta store. False when either cannot be opened (logged).
bool open_stores(const Config& config, const std::string& data_dir, std::unique_ptr<storage::LogManager>* logs,
                 std::unique_ptr<meta::MetaStore>* meta) {
  Status ls = storage::LogManager::open(data_dir, logs);
  if (ls.code() == Status::Code::kLocked) {
    EDDY_LOG_ERROR("data directory {} is in use by another eddy process", data_dir);
    return false;
  }
  if (!ls.ok()) {
    EDDY_LOG_ERROR("cannot open data directory {}: {}", data_dir, ls.to_string());
    return false;
  }
  if (!set_disk_budget(config, logs->get())) return false;
  Status ms = meta::MetaStore::open(data_dir + "/eddy.db", meta);
  if (!ms.ok()) {
    EDDY_LOG_ERROR("{}", ms.message());
    return false;
  }
  return true;
}

// The stores closed durably (the controller log, when there is one, before
// the logs' flusher stops): kExitOk, else kExitFailure (logged).
int close_stores(ControllerQuorum* controller, storage::LogManager& logs, meta::MetaStore& meta) {
  int rc = kExitOk;
  if (Status s = controller != nullptr ? controller->close() : Status(); !s.ok()) {
    EDDY_LOG_ERROR("closing the controller log failed: {}", s.to_string());
    rc = kExitFailure;
  }
  Status cs = logs.close();
  if (!cs.ok()) {
    EDDY_LOG_ERROR("closing the logs failed: {}", cs.to_string());
    rc = kExitFailure;
  }
  Status mcs = meta.close();
  if (!mcs.ok()) {
    EDDY_LOG_ERROR("{}", mcs.message());
    rc = kExitFailure;
  }
  return rc;
}

// Connections, segment files and indexes, the meta stores: room for
// max.connections clients plus what the broker itself keeps open.
void raise_open_file_limit(const net::ServerOptions& server_options) {
  const uint64_t wanted = static_cast<uint64_t>(server_options.max_connections) + 1024;
  const uint64_t got = port::raise_open_file_limit(wanted);
  if (got < wanted) {
    EDDY_LOG_WARN("the open-file limit is {}, below max.connections + 1024 ({}): raise it (ulimit -n, or "
                  "LimitNOFILE= under systemd) or lower max.connections",
                  got, wanted);
  }
}

// Time retention, every kRetentionCheckMs on the reactor. REQUIRES: logs
// outlives the reactor's run.
void schedule_retention(net::Reactor& reactor, storage::LogManager* logs) {
  reactor.schedule_after(kRetentionCheckMs, [&reactor, logs] {
    size_t dropped = logs->apply_retention(port::wall_clock_millis());
    if (dropped > 0) EDDY_LOG_INFO("retention dropped {} segments", dropped);
    schedule_retention(reactor, logs);
  });
}

// SIGINT/SIGTERM arrive on the returned thread, which then runs shutdown
// on the reactor (once; the thread ends after it posted it).
std::thread shut_down_on_signal(net::Reactor& reactor, std::function<void()> shutdown) {
  return std::thread([&reactor, shutdown = std::move(shutdown)] {
    int sig = port::wait_for_termination_signal();
    reactor.post([sig, shutdown] {
      EDDY_LOG_INFO("signal {}: shutting down", sig);
      shutdown();
    });
  });
}

// A cluster node's controller quorum, wired to the frame handler; nullptr
// for a single node (or when it cannot open: *ok false, logged).
std::unique_ptr<ControllerQuorum> open_controller_quorum(const std::optional<QuorumConfig>& quorum,
                                                         const std::string& data_dir, meta::MetaStore& meta,
                                                         storage::LogManager& logs, net::Reactor& reactor,
                                                         BrokerFrameHandler& handler, bool* ok) {
  *ok = true;
  if (!quorum) return nullptr;
  std::unique_ptr<ControllerQuorum> q;
  int64_t applied = 0;
  Status s = meta.cluster().applied_offset(&applied);
  if (s.ok()) s = ControllerQuorum::open(*quorum, data_dir, meta.cluster_id(), applied, &reactor, &logs.flusher(), &q);
  if (!s.ok()) {
    EDDY_LOG_ERROR("{}", s.to_string());
    *ok = false;
    return nullptr;
  }
  handler.set_controller_quorum(q.get(), quorum->listener);
  return q;
}

// A cluster node's partition groups (replicated partitions), their RPCs on
// the controller listener, their hooks into the broker; nullptr for a single
// node. A node whose controller state was lost (it recovers) starts the
// groups it finds without quorum state as recovering replicas too.
std::unique_ptr<PartitionGroups> open_partition_groups(const std::optional<QuorumConfig>& quorum, const Config& config,
                                                       ControllerQuorum* controller, net::Reactor& reactor,
                                                       broker::Broker& broker) {
  if (!quorum || controller == nullptr) return nullptr;
  PartitionGroupsOptions o;
  o.node_id = quorum->node_id;
  std::map<int32_t, client::BrokerAddress> addresses;
  for (const raft::QuorumVoter& v : quorum->voters) {
    if (v.id == quorum->node_id) continue;
    o.peers.push_back(v.id);
    addresses[v.id] = v.address;
  }
  o.bootstrap = !controller->view().recovering;
  o.election_timeout_ms = quorum->election_timeout_ms;
  o.fetch_timeout_ms = quorum->fetch_timeout_ms;
  o.replica_lag_time_max_ms = config.get_long("replica.lag.time.max.ms");
  o.on_high_watermark = [&broker](storage::PartitionLog* log) { broker.on_replicated_high_watermark(log); };
  o.on_log_changed = [&broker](storage::PartitionLog* log, int64_t from, bool truncated) {
    broker.on_replica_log_changed(log, from, truncated);
  };
  const int64_t timeout = quorum->request_timeout_ms;
  // One connection per peer for each role: the groups' requests, and the
  // follower fetches (which a leader may hold) apart from them.
  auto channel_to = [addresses, timeout](raft::NodeId peer, const char* client_id) {
    raft::KafkaPeerOptions po;
    po.address = addresses.at(peer);
    po.request_timeout_ms = timeout;
    po.client_id = client_id;
    return std::make_unique<raft::KafkaPeerChannel>(std::move(po));
  };
  auto senders = [channel_to, peers = o.peers](raft::PeerSenders::Answered answered) {
    auto channel = [channel_to](raft::NodeId peer) -> std::unique_ptr<raft::GroupChannel> {
      return channel_to(peer, "eddy-partitions");
    };
    return std::make_unique<raft::PeerSenders>(peers, channel, std::move(answered));
  };
  auto fetchers = [channel_to, peers = o.peers](raft::PeerFetchers::Done done) {
    auto channel = [channel_to](raft::NodeId peer) -> std::unique_ptr<raft::FetchChannel> {
      return channel_to(peer, "eddy-fetcher");
    };
    return std::make_unique<raft::PeerFetchers>(peers, channel, std::move(done));
  };
  auto groups = std::make_unique<PartitionGroups>(std::move(o), &reactor, senders, fetchers);
  controller->set_partition_groups(groups.get());
  broker.set_partition_replication(groups.get());
  PartitionGroups* g = groups.get();
  broker.add_partition_observer(
      [&broker, g](const std::string& topic, int32_t partition, storage::PartitionLog* log, bool /*after_start*/) {
        const broker::Topic* t = broker.topics().find(topic);
        if (t != nullptr && t->has_partition(partition)) {
          g->add(topic, t->id, partition, t->replicas[static_cast<size_t>(partition)], log);
        }
      });
  return groups;
}

// Store-and-forward in a cluster (src/forward/README.md, "In a cluster"): a
// replicated partition is forwarded where its replica group is led, and the
// links' cursors of such partitions go through the controller log to every
// node. After broker.start(): the cursors held are handed over at once.
void share_forwarding(ClusterController& cluster, PartitionGroups* groups, forward::Forwarder& forwarder) {
  if (!forwarder.forwards_anything()) return;
  forward::ClusterForwarding c;
  if (groups != nullptr) {
    c.role = [groups](const storage::PartitionLog* log) {
      const broker::ReplicaStatus status = groups->status(log);
      // No group (not started yet, or let go): led by nobody here.
      if (!status.replicated) return forward::ClusterForwarding::Role{false, -1};
      return forward::ClusterForwarding::Role{status.leader, status.leader_epoch};
    };
  }
  c.share = [&cluster](std::vector<meta::ClusterForwardCursor> cursors) {
    cluster.share_forward_cursors(std::move(cursors));
  };
  forwarder.set_cluster(std::move(c));
  cluster.set_forward_cursor_observer(
      [&forwarder](const meta::ClusterForwardCursor& cursor) { forwarder.apply_shared_cursor(cursor); });
}

// What clients are told: every listener but the controller's; a cluster
// node also answers DescribeQuorum (kafka-metadata-quorum).
void advertise_to_clients(const std::optional<QuorumConfig>& quorum, broker::BrokerOptions* options) {
  if (!quorum) return;
  auto& listeners = options->advertised_listeners;
  listeners.erase(std::remove_if(listeners.begin(), listeners.end(),
                                 [&](const broker::AdvertisedListener& l) { return l.name == quorum->listener; }),
                  listeners.end());
  options->apis_answered_above.push_back(
      {static_cast<int16_t>(protocol::ApiKey::kDescribeQuorum), 0, protocol::DescribeQuorumRequest::kMaxVersion});
}

// A cluster node's broker joined to its quorum; nullptr for a single node.
// endpoints: what this node registers (its client listeners as advertised).
std::unique_ptr<ClusterController> join_cluster(ControllerQuorum* quorum, broker::Broker& broker, meta::MetaStore& meta,
                                                net::Reactor& reactor, const broker::BrokerOptions& options,
                                                const std::vector<net::ListenerConfig>& listeners) {
  if (quorum == nullptr) return nullptr;
  std::vector<meta::BrokerEndpoint> endpoints;
  for (const broker::AdvertisedListener& a : options.advertised_listeners) {
    auto l = std::find_if(listeners.begin(), listeners.end(),
                          [&](const net::ListenerConfig& c) { return c.name == a.name; });
    const auto protocol = l != listeners.end() ? l->security_protocol : net::SecurityProtocol::kPlaintext;
    endpoints.push_back({a.name, a.host, a.port, static_cast<int16_t>(protocol)});
  }
  return std::make_unique<ClusterController>(quorum, &broker, &meta, &reactor, std::move(endpoints));
}

MetricsSources started_now() {
  MetricsSources sources;
  sources.started_wall_ms = port::wall_clock_millis();
  sources.started_monotonic_ms = port::monotonic_millis();
  return sources;
}

int run_broker(const Config& config, const std::string& config_path, const std::vector<net::ListenerConfig>& listeners,
               const std::vector<net::ListenerConfig>& advertised, std::vector<forward::LinkOptions> links,
               const MetricsListenerConfig& metrics_config, const broker::AuthorizerOptions& authorizer,
               const std::optional<QuorumConfig>& quorum) {
  MetricsSources metrics_sources = started_now();
  const std::string data_dir = config.get_string("log.dirs");
  EDDY_LOG_INFO("eddy {} starting: config {}, data {}", EDDY_VERSION,
                config_path.empty() ? "(defaults)" : config_path.c_str(), data_dir);
  std::unique_ptr<storage::LogManager> logs;
  std::unique_ptr<meta::MetaStore> meta;
  if (!open_stores(config, data_dir, &logs, &meta)) return kExitFailure;

  net::Reactor reactor;
  logs->set_owner(&reactor);  // checked builds assert partitions are used on the reactor
  broker::Broker* broker_ptr = nullptr;
  BrokerFrameHandler handler(&broker_ptr, config.get_int("sasl.server.max.receive.size"));
  const net::ServerOptions server_options = server_options_from(config);
  raise_open_file_limit(server_options);
  net::Server server(reactor, handler, server_options);
  bool quorum_ok = true;
  std::unique_ptr<ControllerQuorum> controller =
      open_controller_quorum(quorum, data_dir, *meta, *logs, reactor, handler, &quorum_ok);
  if (!quorum_ok) return kExitFailure;
  if (Status s = server.start(listeners); !s.ok()) {
    EDDY_LOG_ERROR("{}", s.message());
    return kExitFailure;
  }
  broker::BrokerOptions options = broker_options_from(config);
  options.authorizer = authorizer;
  options.advertised_listeners = advertise(advertised, server.bound_listeners());
  options.sasl_listeners = sasl_listeners_from(config, listeners);
  advertise_to_clients(quorum, &options);
  broker::Broker broker(reactor, options, meta.get(), logs.get());
  std::unique_ptr<ClusterController> cluster = join_cluster(controller.get(), broker, *meta, reactor, options, listeners);
  std::unique_ptr<PartitionGroups> groups = open_partition_groups(quorum, config, controller.get(), reactor, broker);
  if (cluster) cluster->set_partition_groups(groups.get());
  std::vector<std::string> link_names;
  for (const forward::LinkOptions& link : links) link_names.push_back(link.name);
  // Before the broker opens its topics, so that forwarded partitions are
  // pinned before anything is appended.
  forward::Forwarder forwarder(reactor, broker, data_dir, std::move(links));
  if (Status s = forwarder.init(); !s.ok()) {
    EDDY_LOG_ERROR("{}", s.message());
    return kExitFailure;
  }
  // Listening before the topics load, so that a tool asking meanwhile waits
  // for its answer instead of finding no socket.
  net::ControlServer control(reactor, [&](const std::string& command) {
    return control_command(forwarder, logs->budget(), command);
  });
  if (Status s = control.start(data_dir + "/eddy.sock"); !s.ok()) {
    // The broker works without it; only `eddy forward status` cannot reach it.
    EDDY_LOG_WARN("{}; `eddy forward status` will not reach this broker", s.message());
  }
  if (Status s = broker.start(); !s.ok()) {
    EDDY_LOG_ERROR("{}", s.message());
    return kExitFailure;
  }
  if (cluster) share_forwarding(*cluster, groups.get(), forwarder);
  report_disk_budget(logs->budget());
  metrics_sources.set(&broker, &server, logs.get(), &forwarder, controller.get());
  MetricsEndpoint metrics(reactor, metrics_sources, link_names, metrics_config.history_sample_ms);
  if (Status s = metrics_config.enabled ? metrics.start(metrics_config.host, metrics_config.port) : Status();
      !s.ok()) {
    EDDY_LOG_ERROR("{}", s.message());
    return kExitFailure;
  }
  broker_ptr = &broker;
  if (controller) controller->start();
  if (groups) groups->start();
  if (cluster) cluster->start();
  forwarder.start();
  schedule_retention(reactor, logs.get());
  // Runs once the reactor does: listeners bound and accepting, topics loaded.
  reactor.post([&] { notify_ready(server.bound_listeners()); });

  std::thread signals = shut_down_on_signal(reactor, [&] {
    notify_stopping();
    if (groups) groups->stop();  // partition leaders resign first
    if (controller) controller->stop();
    forwarder.request_stop();
    control.stop();
    metrics.stop();
    broker.drain();
    server.stop(kShutdownDeadlineMs, [&] { reactor.stop(); });
  });
  reactor.run();
  broker_ptr = nullptr;
  forwarder.join();
  // The groups hold the partitions' logs: gone before the logs close.
  broker.set_partition_replication(nullptr);
  groups.reset();
  const int rc = close_stores(controller.get(), *logs, *meta);
  signals.join();
  EDDY_LOG_INFO("stopped");
  return rc;
}

}  // namespace

int run_serve(const std::vector<std::string>& args) {
  ServeArgs serve_args;
  if (Status s = parse_serve_args(args, &serve_args); !s.ok()) {
    std::fprintf(stderr, "eddy serve: %s\nUsage: eddy serve [CONFIG] [--override key=value]...\n", s.message().c_str());
    return kExitUsage;
  }
  Config config(&broker_schema());
  std::vector<std::string> warnings;
  if (Status s = load_broker_config(serve_args.config_path, serve_args.overrides, &config, &warnings); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return kExitUsage;
  }
  port::LogLevel level = port::LogLevel::kInfo;
  port::parse_log_level(config.get_string("eddy.log.level").c_str(), &level);
  port::set_log_level(level);
  for (const std::string& w : warnings) EDDY_LOG_WARN("{}", w);

  // Signals are taken by a dedicated thread (sigwait), never by handlers.
  port::block_termination_signals();

  std::vector<net::ListenerConfig> listeners, advertised;
  if (Status s = listeners_from(config, &listeners, &advertised); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return kExitUsage;
  }
  if (Status s = tls_for_listeners(config, &listeners); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return kExitUsage;
  }
  std::vector<forward::LinkOptions> links;
  if (Status s = forward_links_from(config, &links); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return kExitUsage;
  }
  broker::AuthorizerOptions authorizer;
  if (Status s = authorizer_from(config, &authorizer); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return kExitUsage;
  }
  MetricsListenerConfig metrics_config;
  if (Status s = metrics_listener_from(config, &metrics_config); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return kExitUsage;
  }
  std::optional<QuorumConfig> quorum;
  if (Status s = quorum_config_from(config, listeners, &quorum); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return kExitUsage;
  }
  return run_broker(config, serve_args.config_path, listeners, advertised, std::move(links), metrics_config,
                    authorizer, quorum);
}

}  // namespace eddy::app

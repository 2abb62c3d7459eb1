// The metrics listener (eddy.metrics.listener, off by default): an HTTP
// server on the broker's reactor with
//   /             the status page (status_page.html, embedded; no external
//                 assets), which refreshes itself from /status.json
//   /status.json  broker, disk budget, topics, groups, links and the
//                 links' backlog history (metrics_render.h)
//   /metrics      Prometheus text format 0.0.4
// Anything else is 404; methods other than GET/HEAD 405 (net/http_server.h
// has the limits on connections and request heads).
//
//   MetricsListenerConfig mc;
//   if (!metrics_listener_from(config, &mc, &error)) { ... usage error ... }
//   MetricsEndpoint metrics(reactor, sources, link_names, mc.history_sample_ms);
//   if (mc.enabled) { Status s = metrics.start(mc.host, mc.port); ... }
//   ...
//   metrics.stop();   // on shutdown, on the reactor thread
//
// All members REQUIRE the reactor thread, or no thread inside reactor.run().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/committed_offsets_cache.h"
#include "app/config.h"
#include "app/link_history.h"
#include "app/metrics_sources.h"
#include "net/http_server.h"

namespace eddy::net {
class Reactor;
}

namespace eddy::app {

struct MetricsListenerConfig {
  bool enabled = false;
  std::string host;  // empty: every IPv4 interface
  uint16_t port = 0;
  int64_t history_sample_ms = 15000;
};

// eddy.metrics.listener ("http://HOST:PORT"; empty: off) and
// eddy.metrics.history.sample.ms. kInvalidArgument naming the key.
Status metrics_listener_from(const Config& config, MetricsListenerConfig* out);

class MetricsEndpoint {
 public:
  // sources.history and sources.committed_offsets are set here (to this
  // endpoint's LinkHistory and CommittedOffsetsCache).
  // REQUIRES: reactor and what sources point to outlive the endpoint.
  MetricsEndpoint(net::Reactor& reactor, MetricsSources sources, const std::vector<std::string>& link_names,
                  int64_t history_sample_ms);
  ~MetricsEndpoint();  // stop()
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // Listens, logs "metrics listening on http://HOST:PORT" (the bound port)
  // and starts sampling the links' backlog. kNetwork when it cannot listen.
  Status start(const std::string& host, uint16_t port);
  void stop();
  uint16_t bound_port() const { return http_.bound_port(); }

  // The answer to one request (what the HTTP server calls).
  net::HttpResponse answer(const net::HttpRequest& request);

 private:
  void sample_links();

  net::Reactor& reactor_;
  LinkHistory history_;
  CommittedOffsetsCache committed_offsets_;
  MetricsSources sources_;
  int64_t sample_ms_;
  net::HttpServer http_;
  uint64_t timer_ = 0;
  bool sampling_ = false;
};

}  // namespace eddy::app

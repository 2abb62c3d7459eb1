#include "app/metrics_endpoint.h"

#include "app/metrics_render.h"
#include "app/status_page.h"  // generated from status_page.html (src/app/CMakeLists.txt)
#include "forward/forwarder.h"
#include "net/listener_config.h"
#include "net/reactor.h"
#include "port/log.h"
#include "port/port.h"

namespace eddy::app {

namespace {

constexpr const char* kListenerKey = "eddy.metrics.listener";

}  // namespace

Status metrics_listener_from(const Config& config, MetricsListenerConfig* out) {
  out->history_sample_ms = config.get_long("eddy.metrics.history.sample.ms");
  const std::string value = config.get_string(kListenerKey);
  if (value.empty()) {
    out->enabled = false;
    return Status();
  }
  const std::string where = std::string(kListenerKey) + "=" + value + " (" + config.origin(kListenerKey) + ")";
  net::SecurityProtocolMap http_only;
  std::vector<net::ListenerConfig> parsed;
  Status s = net::parse_security_protocol_map("HTTP:PLAINTEXT", &http_only);
  if (s.ok()) s = net::parse_listeners(value, &http_only, &parsed);
  if (!s.ok()) return Status::invalid_argument(where + ": expected http://HOST:PORT (" + s.message() + ")");
  if (parsed.size() != 1) {
    return Status::invalid_argument(where + ": expected one http://HOST:PORT address");
  }
  out->enabled = true;
  out->host = parsed[0].host;
  out->port = parsed[0].port;
  return Status();
}

MetricsEndpoint::MetricsEndpoint(net::Reactor& reactor, MetricsSources sources,
                                 const std::vector<std::string>& link_names, int64_t history_sample_ms)
    : reactor_(reactor),
      history_(link_names),
      sources_(sources),
      sample_ms_(history_sample_ms),
      http_(reactor, [this](const net::HttpRequest& request) { return answer(request); }) {
  sources_.history = &history_;
  sources_.committed_offsets = &committed_offsets_;
  sources_.http = &http_;
  sources_.history_sample_ms = history_sample_ms;
}

MetricsEndpoint::~MetricsEndpoint() { stop(); }

Status MetricsEndpoint::start(const std::string& host, uint16_t port) {
  if (Status s = http_.start(host, port); !s.ok()) return s;
  EDDY_LOG_INFO("metrics listening on http://{}:{} (/metrics, /status.json, /)",
                host.empty() ? "0.0.0.0" : host.c_str(), http_.bound_port());
  sampling_ = true;
  sample_links();
  return Status();
}

void MetricsEndpoint::stop() {
  if (sampling_) reactor_.cancel(timer_);
  sampling_ = false;
  http_.stop();
}

void MetricsEndpoint::sample_links() {
  history_.sample(sources_.forwarder->status().snapshot(), port::wall_clock_millis());
  timer_ = reactor_.schedule_after(sample_ms_, [this] {
    if (sampling_) sample_links();
  });
}

net::HttpResponse MetricsEndpoint::answer(const net::HttpRequest& request) {
  net::HttpResponse response;
  if (request.path == "/metrics") {
    response.content_type = kPrometheusContentType;
    response.body = render_prometheus_metrics(sources_);
  } else if (request.path == "/status.json") {
    response.content_type = "application/json";
    response.body = render_status_json(sources_);
  } else if (request.path == "/" || request.path == "/index.html") {
    response.content_type = "text/html; charset=utf-8";
    response.body = kStatusPageHtml;
  } else {
    response.status = 404;
    response.body = "404 Not Found (try /metrics, /status.json or /)\n";
  }
  return response;
}

}  // namespace eddy::app

// The metrics listener's two documents, rendered from live state on the
// reactor thread (see metrics_sources.h):
//   /metrics       Prometheus text format 0.0.4 (README: "Metrics and the
//                  status page" lists the families)
//   /status.json   what the status page shows, for scripts
#pragma once

#include <string>

#include "app/metrics_sources.h"
#include "forward/link_status.h"
#include "metrics/prometheus_text.h"

namespace eddy::app {

inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

std::string render_prometheus_metrics(const MetricsSources& sources);
std::string render_status_json(const MetricsSources& sources);

// The eddy_link_* families of /metrics (link_metrics.cc).
void render_link_metrics(const std::vector<forward::LinkStatus>& links, metrics::PrometheusText& out);

}  // namespace eddy::app

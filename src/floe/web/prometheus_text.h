#pragma once

// Prometheus' text exposition format (version 0.0.4): one `# TYPE` line per metric family,
// then its series, label values escaped.

#include <string>
#include <vector>

#include "floe/runtime/process/job_monitor.h"

namespace floe::web {

// Series of one name are grouped under one TYPE line (the first series' type), in name order.
std::string PrometheusText(const std::vector<process::ExposedMetric>& metrics);

}  // namespace floe::web

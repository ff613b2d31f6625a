#pragma once

// The HTTP side of a job's coordinator: Prometheus /metrics on metrics.reporter.prom.port and
// the web UI (/, /api/job) on rest.port at rest.bind-address -- one server when both name the
// same port. Every path is served on both. Requests are bounded (URI and header length,
// timeouts) and only GET is answered; what they get is the last Publish()ed snapshot, so a
// request never waits on the coordinator's loop. docs/monitoring.md.

#include <memory>

#include "floe/common/status.h"
#include "floe/runtime/monitoring_config.h"
#include "floe/runtime/process/coordinator.h"

namespace floe::web {

// Binds both endpoints (a free port where none is configured, else the first free one of the
// range) and serves them on their own threads until destroyed.
Result<std::unique_ptr<process::MonitorEndpoints>> StartMonitorServer(
    const runtime::MonitoringConfig& config);

}  // namespace floe::web

#pragma once

// Where a job's coordinator serves its metrics and web UI, and when it calls a table stalled:
// Flink's option names (metrics.reporter.prom.port, rest.port, rest.bind-address) and floe's
// stall alarm (floe.stall-alarm.*). docs/monitoring.md.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "floe/common/status.h"

namespace floe::runtime {

// A TCP port or a range to try in order; {0, 0} = any free port.
struct PortRange {
  uint16_t first = 0;
  uint16_t last = 0;
};
// "9249" or "9250-9260". InvalidArgument with the rule otherwise.
Result<PortRange> ParsePortRange(const std::string& text);

struct MonitoringConfig {
  // floe.monitoring.enabled = 'false': no endpoints, and the worker sends no metrics (the
  // counters are still kept: they cost a relaxed add per batch).
  bool enabled = true;
  PortRange metrics_port;                       // metrics.reporter.prom.port
  PortRange rest_port;                          // rest.port
  std::string rest_bind_address = "127.0.0.1";  // rest.bind-address (an IPv4 address)
  // floe.stall-alarm.threshold: a table whose writers received rows it has not committed for
  // this long is STALLED. Default 5x the checkpoint interval, at least 10 s; 0 = off (also the
  // default without periodic checkpoints, whose tables commit only at the end).
  std::chrono::milliseconds stall_threshold{0};
  bool stall_fails_job = false;  // floe.stall-alarm.action = 'fail' (or 'warn')
};

// From the job's configuration (SET and --set); `checkpoint_interval` gives the threshold's
// default. InvalidArgument naming the key, the rule and the value, after `where(key)` (e.g.
// the line that set it).
Result<MonitoringConfig> ParseMonitoringConfig(
    const std::map<std::string, std::string>& config, std::chrono::milliseconds checkpoint_interval,
    const std::function<std::string(const std::string& key)>& where);

}  // namespace floe::runtime

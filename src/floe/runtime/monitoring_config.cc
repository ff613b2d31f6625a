#include "floe/runtime/monitoring_config.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>

#include "floe/runtime/checkpoint_config.h"

namespace floe::runtime {
namespace {

Result<uint16_t> ParsePort(std::string_view text) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value == 0 || value > 65535) {
    return Status::InvalidArgument("");
  }
  return static_cast<uint16_t>(value);
}

}  // namespace

Result<PortRange> ParsePortRange(const std::string& text) {
  const size_t dash = text.find('-');
  Result<uint16_t> first = ParsePort(std::string_view(text).substr(0, dash));
  Result<uint16_t> last =
      dash == std::string::npos ? first : ParsePort(std::string_view(text).substr(dash + 1));
  if (!first.ok() || !last.ok() || *last < *first) {
    return Status::InvalidArgument(
        "must be a port (1..65535) or a range such as '9250-9260', got '" + text + "'");
  }
  return PortRange{*first, *last};
}

Result<MonitoringConfig> ParseMonitoringConfig(
    const std::map<std::string, std::string>& config, std::chrono::milliseconds checkpoint_interval,
    const std::function<std::string(const std::string& key)>& where) {
  MonitoringConfig out;
  auto error = [&](const std::string& key, const std::string& rule) {
    return Status::InvalidArgument(where(key) + "'" + key + "' " + rule);
  };
  auto ports = [&](const char* key, PortRange* range) -> Status {
    auto it = config.find(key);
    if (it == config.end()) return Status::OK();
    Result<PortRange> r = ParsePortRange(it->second);
    if (!r.ok()) return error(it->first, r.status().message());
    *range = *r;
    return Status::OK();
  };
  if (auto it = config.find("floe.monitoring.enabled"); it != config.end()) {
    if (it->second != "true" && it->second != "false") {
      return error(it->first, "must be 'true' or 'false', got '" + it->second + "'");
    }
    out.enabled = it->second == "true";
  }
  FLOE_RETURN_NOT_OK(ports("metrics.reporter.prom.port", &out.metrics_port));
  FLOE_RETURN_NOT_OK(ports("rest.port", &out.rest_port));
  if (auto it = config.find("rest.bind-address"); it != config.end()) {
    in_addr addr{};
    std::string address = it->second == "localhost" ? "127.0.0.1" : it->second;
    if (::inet_pton(AF_INET, address.c_str(), &addr) != 1) {
      return error(it->first,
                   "must be an IPv4 address such as '127.0.0.1' (the default: loopback only), "
                   "got '" +
                       it->second + "'");
    }
    out.rest_bind_address = address;
  }
  if (checkpoint_interval.count() > 0) {
    out.stall_threshold =
        std::max<std::chrono::milliseconds>(5 * checkpoint_interval, std::chrono::seconds(10));
  }
  if (auto it = config.find("floe.stall-alarm.threshold"); it != config.end()) {
    Result<std::chrono::milliseconds> d = ParseDuration(it->second);
    if (!d.ok() || d->count() < 0 ||
        (d->count() > 0 && checkpoint_interval.count() > 0 && *d < checkpoint_interval)) {
      return error(it->first, "must be a duration of at least the checkpoint interval (" +
                                  FormatDuration(checkpoint_interval) +
                                  "; a table commits once per checkpoint), or 0 to turn the "
                                  "alarm off, got '" +
                                  it->second + "'");
    }
    out.stall_threshold = *d;
  }
  if (auto it = config.find("floe.stall-alarm.action"); it != config.end()) {
    if (it->second != "warn" && it->second != "fail") {
      return error(it->first, "must be 'warn' or 'fail', got '" + it->second + "'");
    }
    out.stall_fails_job = it->second == "fail";
  }
  return out;
}

}  // namespace floe::runtime

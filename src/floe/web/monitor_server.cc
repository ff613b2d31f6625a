#include "floe/web/monitor_server.h"

#include <vector>

#include "floe/common/mutex.h"
#include "floe/io/http_server.h"
#include "floe/web/prometheus_text.h"

namespace floe::web {

extern const char kIndexHtml[];

namespace {

// What one client may cost the coordinator (docs/monitoring.md, "Limits"): nothing here takes a
// body, and every reply is a snapshot copied under a lock, so two handler threads suffice.
io::HttpLimits MonitorLimits() {
  io::HttpLimits limits;
  limits.max_request_line_bytes = 8 * 1024;
  limits.max_head_bytes = 16 * 1024;
  limits.max_headers = 64;
  limits.max_body_bytes = 4 * 1024;
  limits.request_deadline_ms = 10'000;
  limits.write_deadline_ms = 10'000;
  limits.max_connections = 256;
  limits.max_connections_per_client = 128;
  limits.max_buffered_bytes = 4 << 20;
  limits.handler_threads = 2;
  return limits;
}

class MonitorServer final : public process::MonitorEndpoints {
 public:
  ~MonitorServer() override {
    for (auto& s : servers_) s->Stop();
  }

  Status Start(const runtime::MonitoringConfig& config) {
    FLOE_ASSIGN_OR_RAISE(int web_port, Bind(config.rest_bind_address, config.rest_port));
    web_url_ = "http://" + config.rest_bind_address + ":" + std::to_string(web_port) + "/";
    const bool same = config.metrics_port.first != 0 &&
                      config.metrics_port.first == config.rest_port.first &&
                      config.metrics_port.last == config.rest_port.last;
    int metrics_port = web_port;
    if (!same) {
      FLOE_ASSIGN_OR_RAISE(metrics_port, Bind("127.0.0.1", config.metrics_port));
    }
    metrics_url_ = "http://127.0.0.1:" + std::to_string(metrics_port) + "/metrics";
    for (auto& s : servers_) FLOE_RETURN_NOT_OK(s->Start());
    return Status::OK();
  }

  const std::string& web_url() const override { return web_url_; }
  const std::string& metrics_url() const override { return metrics_url_; }

  void Publish(const std::vector<process::ExposedMetric>& metrics,
               std::string overview_json) override {
    std::string text = PrometheusText(metrics);
    MutexLock lock(mu_);
    metrics_text_ = std::move(text);
    overview_json_ = std::move(overview_json);
  }

 private:
  Result<int> Bind(const std::string& host, runtime::PortRange range) {
    io::HttpServer::Options options;
    options.name = "metrics / web UI";
    options.limits = MonitorLimits();
    FLOE_ASSIGN_OR_RAISE(std::unique_ptr<io::HttpServer> server, io::HttpServer::Make(options));
    server->Route("GET", "/", [](const io::HttpRequest&, io::HttpResponse& res) {
      res.SetContent(kIndexHtml, "text/html; charset=utf-8");
    });
    server->Route("GET", "/api/job", [this](const io::HttpRequest&, io::HttpResponse& res) {
      MutexLock lock(mu_);
      res.SetHeader("Cache-Control", "no-store");
      res.SetContent(overview_json_, "application/json");
    });
    server->Route("GET", "/metrics", [this](const io::HttpRequest&, io::HttpResponse& res) {
      MutexLock lock(mu_);
      res.SetContent(metrics_text_, "text/plain; version=0.0.4; charset=utf-8");
    });
    int port = -1;
    for (int p = range.first; p <= range.last && port < 0; ++p) {
      Result<int> bound = server->Bind(host, p);
      if (bound.ok()) port = *bound;
    }
    if (port < 0) {
      return Status::IOError(
          range.first == 0
              ? "cannot listen on " + host + " for the metrics and web UI endpoints"
              : "no free port in " + std::to_string(range.first) + "-" +
                    std::to_string(range.last) + " on " + host +
                    " for the metrics / web UI endpoint (metrics.reporter.prom.port, rest.port)");
    }
    servers_.push_back(std::move(server));
    return port;
  }

  std::vector<std::unique_ptr<io::HttpServer>> servers_;
  std::string web_url_, metrics_url_;
  Mutex mu_;
  std::string metrics_text_ FLOE_GUARDED_BY(mu_);
  std::string overview_json_ FLOE_GUARDED_BY(mu_) = "{}";
};

}  // namespace

Result<std::unique_ptr<process::MonitorEndpoints>> StartMonitorServer(
    const runtime::MonitoringConfig& config) {
  auto server = std::make_unique<MonitorServer>();
  FLOE_RETURN_NOT_OK(server->Start(config));
  return std::unique_ptr<process::MonitorEndpoints>(std::move(server));
}

}  // namespace floe::web

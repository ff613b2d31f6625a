#include "floe/web/monitor_server.h"

#include <httplib.h>

#include <chrono>
#include <thread>
#include <vector>

#include "floe/common/mutex.h"
#include "floe/web/prometheus_text.h"

namespace floe::web {

extern const char kIndexHtml[];

namespace {

// Request limits (hostile clients): a request line or header beyond httplib's 8 KiB limits is
// refused by httplib itself with 414/400.
constexpr time_t kReadTimeoutSeconds = 5;
constexpr time_t kWriteTimeoutSeconds = 5;
constexpr size_t kMaxBodyBytes = 4096;  // nothing takes a body

class MonitorServer final : public process::MonitorEndpoints {
 public:
  ~MonitorServer() override {
    for (auto& s : servers_) s->stop();
    for (auto& t : threads_) t.join();
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
    for (auto& s : servers_) {
      httplib::Server* server = s.get();
      threads_.emplace_back([server] { server->listen_after_bind(); });
    }
    // Until a server runs, stop() is a no-op: the destructor could then wait forever.
    for (auto& s : servers_) {
      for (int i = 0; i < 5000 && !s->is_running(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      if (!s->is_running()) return Status::IOError("the metrics / web UI server did not start");
    }
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
    auto server = std::make_unique<httplib::Server>();
    server->set_read_timeout(kReadTimeoutSeconds, 0);
    server->set_write_timeout(kWriteTimeoutSeconds, 0);
    server->set_payload_max_length(kMaxBodyBytes);
    // One request per connection: an idle keep-alive connection (a scraper's, a browser's)
    // would hold the coordinator's exit until it timed out.
    server->set_keep_alive_max_count(1);
    server->set_tcp_nodelay(true);  // small replies: no wait for the peer's delayed ACK
    // httplib's default adds SO_REUSEPORT, which lets a second process bind a port in use.
    server->set_socket_options([](socket_t sock) {
      int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    server->Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(kIndexHtml, "text/html; charset=utf-8");
    });
    server->Get("/api/job", [this](const httplib::Request&, httplib::Response& res) {
      MutexLock lock(mu_);
      res.set_header("Cache-Control", "no-store");
      res.set_content(overview_json_, "application/json");
    });
    server->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      MutexLock lock(mu_);
      res.set_content(metrics_text_, "text/plain; version=0.0.4; charset=utf-8");
    });
    // Anything but GET on a known path: 405 (httplib answers unknown paths with 404).
    for (const char* path : {"/", "/api/job", "/metrics"}) {
      auto refuse = [](const httplib::Request&, httplib::Response& res) {
        res.status = 405;
        res.set_header("Allow", "GET");
      };
      server->Post(path, refuse);
      server->Put(path, refuse);
      server->Delete(path, refuse);
      server->Patch(path, refuse);
    }
    server->set_exception_handler([](const httplib::Request&, httplib::Response& res,
                                     std::exception_ptr) { res.status = 500; });
    int port = -1;
    if (range.first == 0) {
      port = server->bind_to_any_port(host);
    } else {
      for (int p = range.first; p <= range.last && port < 0; ++p) {
        if (server->bind_to_port(host, p)) port = p;
      }
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

  std::vector<std::unique_ptr<httplib::Server>> servers_;
  std::vector<std::thread> threads_;
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

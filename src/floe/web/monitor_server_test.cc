#include "floe/web/monitor_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

namespace floe::web {
namespace {

TEST(MonitorServer, ServesWhatWasPublishedAndRefusesWhatIsNotAGet) {
  runtime::MonitoringConfig config;
  auto server = StartMonitorServer(config);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  (*server)->Publish({{"floe_x", runtime::MetricType::kGauge, {}, 7}}, R"({"now_ms":1})");
  const std::string web = (*server)->web_url();
  const std::string metrics = (*server)->metrics_url();
  ASSERT_NE(web, metrics);
  httplib::Client ui(web.substr(0, web.size() - 1));  // without the trailing '/'
  httplib::Client prom(metrics.substr(0, metrics.size() - 8));
  auto page = ui.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<html"), std::string::npos);
  auto job = ui.Get("/api/job");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->body, R"({"now_ms":1})");
  auto text = prom.Get("/metrics");
  ASSERT_TRUE(text);
  EXPECT_EQ(text->body, "# TYPE floe_x gauge\nfloe_x 7\n");
  auto post = prom.Post("/metrics", "x", "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  auto missing = ui.Get("/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  auto long_uri = ui.Get("/" + std::string(100'000, 'a'));
  EXPECT_TRUE(!long_uri || long_uri->status >= 400);
  EXPECT_EQ(prom.Get("/metrics")->status, 200);  // still serving
}

TEST(MonitorServer, AConfiguredPortRangeThatIsTakenIsAClearError) {
  runtime::MonitoringConfig first;
  auto a = StartMonitorServer(first);
  ASSERT_TRUE(a.ok());
  const std::string url = (*a)->metrics_url();
  const int port = std::stoi(url.substr(url.rfind(':') + 1));
  runtime::MonitoringConfig taken;
  taken.metrics_port = {static_cast<uint16_t>(port), static_cast<uint16_t>(port)};
  auto b = StartMonitorServer(taken);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("no free port in " + std::to_string(port)),
            std::string::npos);
}

}  // namespace
}  // namespace floe::web

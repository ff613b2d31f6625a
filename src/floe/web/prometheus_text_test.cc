#include "floe/web/prometheus_text.h"

#include <gtest/gtest.h>

namespace floe::web {
namespace {

using process::ExposedMetric;
using runtime::MetricType;

TEST(PrometheusText, OneTypeLinePerFamilyAndEscapedLabelValues) {
  std::vector<ExposedMetric> m = {
      {"floe_b", MetricType::kGauge, {{"table", "a\"b\\c\nd"}}, 1.5},
      {"floe_a", MetricType::kCounter, {{"x", "1"}}, 3},
      {"floe_b", MetricType::kGauge, {}, -2},
  };
  EXPECT_EQ(PrometheusText(m),
            "# TYPE floe_a counter\n"
            "floe_a{x=\"1\"} 3\n"
            "# TYPE floe_b gauge\n"
            "floe_b{table=\"a\\\"b\\\\c\\nd\"} 1.5\n"
            "floe_b -2\n");
}

}  // namespace
}  // namespace floe::web

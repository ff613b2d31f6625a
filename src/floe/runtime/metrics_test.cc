#include "floe/runtime/metrics.h"

#include <gtest/gtest.h>

namespace floe::runtime {
namespace {

TEST(MetricRegistry, SameNameAndLabelsIsOneMetricAndUnsetGaugesAreNotReported) {
  MetricRegistry registry;
  MetricGroup group(&registry, TaskLabels("source-events", 1));
  group.Counter("numLateRecordsDropped").Add(2);
  group.Counter("numLateRecordsDropped").Add(3);
  Metric& lag = group.Gauge("KafkaSourceReader_records_lag", {{"topic", "t"}, {"partition", "0"}});
  group.Gauge("currentInputWatermark");  // never set
  auto samples = registry.Snapshot();
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].name, "taskmanager_job_task_operator_numLateRecordsDropped");
  EXPECT_EQ(samples[0].type, MetricType::kCounter);
  EXPECT_EQ(samples[0].value, 5);
  EXPECT_EQ(samples[0].labels,
            (MetricLabels{{"task_name", "source-events"}, {"subtask_index", "1"}}));
  lag.Set(0);
  samples = registry.Snapshot();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].name, "taskmanager_job_task_operator_KafkaSourceReader_records_lag");
  EXPECT_EQ(samples[0].labels.size(), 4u);
  EXPECT_EQ(samples[0].value, 0);
}

}  // namespace
}  // namespace floe::runtime

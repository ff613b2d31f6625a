#pragma once

// What a running job measures about itself (Flink's metric groups, flattened to names with
// labels): counters and gauges the executor keeps per subtask and operators register through
// OperatorContext::metrics. Every value is an int64 atomic, so updating one on a hot path is a
// relaxed add. The worker sends a Snapshot() to its coordinator once a second; the coordinator
// serves them (docs/monitoring.md).

#include <atomic>
#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/common/mutex.h"

namespace floe::runtime {

enum class MetricType { kCounter, kGauge };
using MetricLabels = std::vector<std::pair<std::string, std::string>>;

class Metric {
 public:
  // A gauge that holds this is not reported (no watermark yet, say).
  static constexpr int64_t kUnset = INT64_MIN;
  explicit Metric(int64_t initial = 0) : value_(initial) {}
  void Add(int64_t n) { value_.fetch_add(n, std::memory_order_relaxed); }
  void Set(int64_t v) { value_.store(v, std::memory_order_relaxed); }
  int64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_;
};

struct MetricSample {
  std::string name;  // Flink's scope and name joined by '_', e.g. taskmanager_job_task_numRecordsIn
  MetricLabels labels;
  MetricType type = MetricType::kGauge;
  int64_t value = 0;
};

// Thread-safe. Metrics live as long as the registry.
class MetricRegistry {
 public:
  // The metric `name` with `labels`, created on first use with `initial` (the same name and
  // labels give the same metric).
  Metric& Get(std::string_view name, const MetricLabels& labels, MetricType type,
              int64_t initial = 0);
  // Every metric not holding Metric::kUnset, in name order.
  std::vector<MetricSample> Snapshot() const;

 private:
  struct Entry {
    Entry(MetricType t, int64_t initial) : type(t), metric(initial) {}
    MetricType type;
    Metric metric;
  };
  mutable Mutex mu_;
  // The map only: an Entry stays where it is and its metric is atomic.
  std::map<std::pair<std::string, MetricLabels>, std::unique_ptr<Entry>> metrics_
      FLOE_GUARDED_BY(mu_);
};

// One subtask's operator metrics (Flink's operator scope): the task's labels on every metric
// and `taskmanager_job_task_operator_` before every name.
class MetricGroup {
 public:
  MetricGroup(MetricRegistry* registry, MetricLabels task_labels)
      : registry_(registry), labels_(std::move(task_labels)) {}
  Metric& Counter(std::string_view name, const MetricLabels& more = {});
  // Starts out kUnset (not reported) until set.
  Metric& Gauge(std::string_view name, const MetricLabels& more = {});
  // A group nobody reads: the default of OperatorContext::metrics, so operators run outside an
  // executor (unit tests) without null checks.
  static MetricGroup* Unreported();

 private:
  Metric& Get(std::string_view name, const MetricLabels& more, MetricType type);
  MetricRegistry* registry_;
  MetricLabels labels_;
};

// The labels of a subtask's metrics: Flink's task_name (the vertex) and subtask_index.
MetricLabels TaskLabels(const std::string& vertex, uint32_t subtask);

}  // namespace floe::runtime

#include "floe/runtime/metrics.h"

namespace floe::runtime {

Metric& MetricRegistry::Get(std::string_view name, const MetricLabels& labels, MetricType type,
                            int64_t initial) {
  MutexLock lock(mu_);
  auto& slot = metrics_[{std::string(name), labels}];
  if (!slot) slot = std::make_unique<Entry>(type, initial);
  return slot->metric;
}

std::vector<MetricSample> MetricRegistry::Snapshot() const {
  MutexLock lock(mu_);
  std::vector<MetricSample> out;
  out.reserve(metrics_.size());
  for (const auto& [key, entry] : metrics_) {
    const int64_t v = entry->metric.value();
    if (v == Metric::kUnset) continue;
    out.push_back(MetricSample{key.first, key.second, entry->type, v});
  }
  return out;
}

Metric& MetricGroup::Get(std::string_view name, const MetricLabels& more, MetricType type) {
  MetricLabels labels = labels_;
  labels.insert(labels.end(), more.begin(), more.end());
  return registry_->Get("taskmanager_job_task_operator_" + std::string(name), labels, type,
                        type == MetricType::kGauge ? Metric::kUnset : 0);
}

Metric& MetricGroup::Counter(std::string_view name, const MetricLabels& more) {
  return Get(name, more, MetricType::kCounter);
}

Metric& MetricGroup::Gauge(std::string_view name, const MetricLabels& more) {
  return Get(name, more, MetricType::kGauge);
}

MetricGroup* MetricGroup::Unreported() {
  static MetricRegistry registry;
  static MetricGroup group(&registry, {});
  return &group;
}

MetricLabels TaskLabels(const std::string& vertex, uint32_t subtask) {
  return {{"task_name", vertex}, {"subtask_index", std::to_string(subtask)}};
}

}  // namespace floe::runtime

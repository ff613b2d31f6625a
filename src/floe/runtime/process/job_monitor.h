#pragma once

// The coordinator's running picture of its job, for people and alarms: the worker's metric
// samples (once a second), checkpoint completions and the job's own state, turned into the
// series /metrics serves (Flink's names with a floe_ prefix: docs/monitoring.md), the JSON the
// web UI and `floe status` show, and the stall alarm: a table whose writers received rows that
// it has not committed for longer than the threshold is STALLED (timed from the report that
// first showed them, so rows arriving after a long idle spell are not late). Not thread-safe: the
// coordinator's loop owns it.

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "floe/runtime/metrics.h"

namespace floe::process {

struct GraphVertex {
  std::string name;
  uint32_t parallelism = 1;
  bool source = false;
};
struct GraphEdge {
  std::string from;
  std::string to;
  std::string partitioning;  // FORWARD | HASH | REBALANCE | GLOBAL
};

struct MonitorSettings {
  int64_t checkpoint_interval_ms = 0;
  int64_t stall_threshold_ms = 0;  // 0: no alarm
  bool stall_fails_job = false;
  std::vector<GraphVertex> vertices;
  std::vector<GraphEdge> edges;
};

// What the coordinator knows of itself.
struct JobOverview {
  std::string job_id;
  std::string name;
  std::string state;
  int64_t started_ms = 0;
  int restarts = 0;
  int attempt = 0;
  int64_t worker_pid = 0;
  std::string web_url;
  std::string metrics_url;
};

// One exposed series (name with the floe_ prefix).
struct ExposedMetric {
  std::string name;
  runtime::MetricType type = runtime::MetricType::kGauge;
  runtime::MetricLabels labels;
  double value = 0;
};

struct CheckpointRecord {
  uint64_t id = 0;
  int64_t completed_ms = 0;
  int64_t duration_ms = 0;
  uint64_t size_bytes = 0;
  int64_t alignment_us = 0;
  int64_t sync_us = 0;   // the longest synchronous part of any task: the stream stopped
  int64_t async_us = 0;  // the longest asynchronous part: state written while records flowed
  bool savepoint = false;
  std::string sync_task;  // the task of sync_us
};

// A table entering or leaving the STALLED state.
struct StallChange {
  std::string table;
  bool stalled = false;
  int64_t since_commit_ms = 0;      // how long without a commit
  int64_t uncommitted_records = 0;  // rows its writers received since
};

class JobMonitor {
 public:
  JobMonitor(MonitorSettings settings, int64_t now_ms);

  // A new worker attempt: its counters start from zero and the last one's samples are stale.
  void OnWorkerStarted(int64_t now_ms);
  void OnMetrics(std::vector<runtime::MetricSample> samples, int64_t at_ms);
  void OnCheckpoint(const CheckpointRecord& checkpoint);
  // Applies the stall rule at `now_ms` (only while a worker runs); returns the changes.
  std::vector<StallChange> CheckStalls(int64_t now_ms, bool running);

  std::vector<ExposedMetric> Metrics(const JobOverview& job, int64_t now_ms) const;
  std::string OverviewJson(const JobOverview& job, int64_t now_ms) const;

  struct TableState {
    int64_t last_commit_ms = 0;     // 0: none seen in this run
    int64_t written = 0;            // rows its writers received (current attempt)
    int64_t written_at_commit = 0;  // `written` as of the sample that showed the last commit
    int64_t pending_since_ms = 0;   // the report that first showed uncommitted rows (0: none)
    bool stalled = false;
    runtime::MetricLabels committer;  // labels of its committer's metrics (task, table)
  };
  const std::map<std::string, TableState>& tables() const { return tables_; }
  int64_t stall_threshold_ms() const { return settings_.stall_threshold_ms; }

 private:
  using Key = std::pair<std::string, runtime::MetricLabels>;
  int64_t Sample(const std::string& name, const runtime::MetricLabels& labels,
                 int64_t missing) const;

  MonitorSettings settings_;
  int64_t attempt_started_ms_ = 0;
  struct Value {
    int64_t value = 0;
    runtime::MetricType type = runtime::MetricType::kGauge;
  };
  std::map<Key, Value> samples_;  // the latest report
  int64_t samples_at_ms_ = 0;
  std::map<Key, double> rates_;  // per second, of the counters that have one
  std::map<std::string, TableState> tables_;
  std::deque<CheckpointRecord> history_;  // newest first
  uint64_t completed_checkpoints_ = 0;
  int64_t failed_checkpoints_before_ = 0;  // of earlier attempts
};

}  // namespace floe::process

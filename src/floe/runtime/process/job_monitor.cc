#include "floe/runtime/process/job_monitor.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "floe/common/json.h"

namespace floe::process {
namespace {

using nlohmann::json;
using runtime::MetricLabels;
using runtime::MetricType;

const std::string kTask = "taskmanager_job_task_";
const std::string kOperator = "taskmanager_job_task_operator_";
const std::string kRecordsIn = kTask + "numRecordsIn";
const std::string kRecordsOut = kTask + "numRecordsOut";
const std::string kBackPressure = kTask + "backPressuredTimeMicros";
const std::string kWriterRecords = kOperator + "IcebergStreamWriter_recordsWritten";
const std::string kCommitter = kOperator + "IcebergFilesCommitter_";
const std::string kFailedCheckpoints = "jobmanager_job_numberOfFailedCheckpoints";
const std::string kKafkaOffset = kOperator + "KafkaSourceReader_currentOffset";

std::string LabelOf(const MetricLabels& labels, const std::string& name) {
  for (const auto& [k, v] : labels) {
    if (k == name) return v;
  }
  return "";
}

// The task labels (task_name, subtask_index) of a sample's labels.
MetricLabels TaskOf(const MetricLabels& labels) {
  return {{"task_name", LabelOf(labels, "task_name")},
          {"subtask_index", LabelOf(labels, "subtask_index")}};
}

MetricLabels Join(const MetricLabels& a, const MetricLabels& b) {
  MetricLabels out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

}  // namespace

JobMonitor::JobMonitor(MonitorSettings settings, int64_t now_ms)
    : settings_(std::move(settings)), attempt_started_ms_(now_ms) {}

void JobMonitor::OnWorkerStarted(int64_t now_ms) {
  failed_checkpoints_before_ += Sample(kFailedCheckpoints, {}, 0);
  samples_.clear();
  rates_.clear();
  samples_at_ms_ = 0;
  attempt_started_ms_ = now_ms;
  for (auto& [table, st] : tables_) st.written = st.written_at_commit = st.pending_since_ms = 0;
}

int64_t JobMonitor::Sample(const std::string& name, const MetricLabels& labels,
                           int64_t missing) const {
  auto it = samples_.find({name, labels});
  return it == samples_.end() ? missing : it->second.value;
}

void JobMonitor::OnMetrics(std::vector<runtime::MetricSample> samples, int64_t at_ms) {
  std::map<Key, Value> next;
  for (auto& s : samples) next[{std::move(s.name), std::move(s.labels)}] = {s.value, s.type};
  rates_.clear();
  if (samples_at_ms_ > 0 && at_ms > samples_at_ms_) {
    const double seconds = static_cast<double>(at_ms - samples_at_ms_) / 1000.0;
    for (const auto& [key, v] : next) {
      if (key.first != kRecordsIn && key.first != kRecordsOut && key.first != kBackPressure) {
        continue;
      }
      auto prev = samples_.find(key);
      const int64_t before = prev == samples_.end() ? 0 : prev->second.value;
      rates_[key] = static_cast<double>(v.value >= before ? v.value - before : v.value) / seconds;
    }
  }
  samples_ = std::move(next);
  samples_at_ms_ = at_ms;

  // Rows into each table's writers first, so a commit seen in this report is compared with
  // the rows written as of the same report.
  std::map<std::string, int64_t> written;
  for (const auto& [key, v] : samples_) {
    if (key.first == kWriterRecords) written[LabelOf(key.second, "table")] += v.value;
  }
  for (const auto& [table, rows] : written) tables_[table].written = rows;
  // Every committer metric names its table (known before its first commit); the last commit's
  // time moves the table's baseline.
  for (const auto& [key, v] : samples_) {
    if (key.first.rfind(kCommitter, 0) != 0) continue;
    TableState& st = tables_[LabelOf(key.second, "table")];
    st.committer = key.second;
    if (key.first == kCommitter + "lastCommitTimestamp" && v.value > st.last_commit_ms) {
      st.last_commit_ms = v.value;
      st.written_at_commit = st.written;
    }
  }
  for (auto& [table, st] : tables_) {
    if (st.written <= st.written_at_commit) {
      st.pending_since_ms = 0;
    } else if (st.pending_since_ms == 0) {
      st.pending_since_ms = at_ms;
    }
  }
}

void JobMonitor::OnCheckpoint(const CheckpointRecord& checkpoint) {
  if (!checkpoint.savepoint) ++completed_checkpoints_;
  history_.push_front(checkpoint);
  while (history_.size() > 30) history_.pop_back();
}

std::vector<StallChange> JobMonitor::CheckStalls(int64_t now_ms, bool running) {
  std::vector<StallChange> changes;
  if (!running) return changes;
  for (auto& [table, st] : tables_) {
    const int64_t since = now_ms - std::max(st.last_commit_ms, attempt_started_ms_);
    const int64_t uncommitted = st.written - st.written_at_commit;
    const int64_t waiting = now_ms - std::max(st.pending_since_ms, attempt_started_ms_);
    const bool stalled = settings_.stall_threshold_ms > 0 && uncommitted > 0 &&
                         waiting > settings_.stall_threshold_ms;
    if (stalled == st.stalled) continue;
    st.stalled = stalled;
    changes.push_back(StallChange{table, stalled, since, uncommitted});
  }
  return changes;
}

std::vector<ExposedMetric> JobMonitor::Metrics(const JobOverview& job, int64_t now_ms) const {
  const MetricLabels j = {{"job_id", job.job_id}, {"job_name", job.name}};
  std::vector<ExposedMetric> out;
  auto add = [&](const std::string& name, MetricType type, const MetricLabels& labels,
                 double value) {
    out.push_back({"floe_" + name, type, Join(j, labels), value});
  };
  const std::string job_scope = "jobmanager_job_";
  add(job_scope + "uptime", MetricType::kGauge, {}, static_cast<double>(now_ms - job.started_ms));
  add(job_scope + "numRestarts", MetricType::kGauge, {}, job.restarts);
  add(job_scope + "numberOfCompletedCheckpoints", MetricType::kGauge, {},
      static_cast<double>(completed_checkpoints_));
  add(job_scope + "numberOfFailedCheckpoints", MetricType::kGauge, {},
      static_cast<double>(failed_checkpoints_before_ + Sample(kFailedCheckpoints, {}, 0)));
  auto last = std::find_if(history_.begin(), history_.end(),
                           [](const CheckpointRecord& c) { return !c.savepoint; });
  if (last != history_.end()) {
    add(job_scope + "lastCheckpointDuration", MetricType::kGauge, {},
        static_cast<double>(last->duration_ms));
    add(job_scope + "lastCheckpointSize", MetricType::kGauge, {},
        static_cast<double>(last->size_bytes));
    add(job_scope + "lastCheckpointAlignmentTime", MetricType::kGauge, {},
        static_cast<double>(last->alignment_us) / 1000.0);
    add(job_scope + "lastCheckpointSyncDuration", MetricType::kGauge, {},
        static_cast<double>(last->sync_us) / 1000.0);
    add(job_scope + "lastCheckpointAsyncDuration", MetricType::kGauge, {},
        static_cast<double>(last->async_us) / 1000.0);
    add(job_scope + "lastCompletedCheckpointId", MetricType::kGauge, {},
        static_cast<double>(last->id));
    add(job_scope + "lastCompletedCheckpointAge", MetricType::kGauge, {},
        static_cast<double>(now_ms - last->completed_ms));
  }
  for (const auto& [table, st] : tables_) {
    const MetricLabels t = {{"table", table}};
    add(job_scope + "sinkStalled", MetricType::kGauge, t, st.stalled ? 1 : 0);
    add(job_scope + "sinkUncommittedRecords", MetricType::kGauge, t,
        static_cast<double>(std::max<int64_t>(0, st.written - st.written_at_commit)));
    // Iceberg's elapsedSecondsSinceLastSuccessfulCommit, kept by the coordinator so it goes on
    // growing while the worker is down; since the job started when nothing committed yet.
    const int64_t since = st.last_commit_ms > 0 ? st.last_commit_ms : job.started_ms;
    add(kCommitter + "elapsedSecondsSinceLastSuccessfulCommit", MetricType::kGauge,
        st.committer.empty() ? t : st.committer, static_cast<double>(now_ms - since) / 1000.0);
  }
  for (const auto& [key, v] : samples_) {
    if (key.first == kFailedCheckpoints) continue;
    add(key.first, v.type, key.second, static_cast<double>(v.value));
  }
  for (const auto& [key, rate] : rates_) {
    if (key.first == kBackPressure) {
      add(kTask + "backPressuredTimeMsPerSecond", MetricType::kGauge, key.second, rate / 1000.0);
    } else {
      add(key.first + "PerSecond", MetricType::kGauge, key.second, rate);
    }
  }
  return out;
}

// Stays long: the UI's one document, section after section, so its whole shape reads at once.
std::string JobMonitor::OverviewJson(const JobOverview& job, int64_t now_ms) const {
  auto value_or_null = [&](const std::string& name, const MetricLabels& labels) -> json {
    auto it = samples_.find({name, labels});
    return it == samples_.end() ? json(nullptr) : json(it->second.value);
  };
  auto rate = [&](const std::string& name, const MetricLabels& labels, double scale) {
    auto it = rates_.find({name, labels});
    return it == rates_.end() ? 0.0 : it->second / scale;
  };
  json out;
  out["now_ms"] = now_ms;
  out["job"] = {{"id", job.job_id},
                {"name", job.name},
                {"state", job.state},
                {"started_ms", job.started_ms},
                {"uptime_ms", now_ms - job.started_ms},
                {"restarts", job.restarts},
                {"attempt", job.attempt},
                {"worker_pid", job.worker_pid},
                {"checkpoint_interval_ms", settings_.checkpoint_interval_ms},
                {"web_url", job.web_url},
                {"metrics_url", job.metrics_url}};
  json vertices = json::array(), edges = json::array();
  std::map<std::string, size_t> order;
  for (const auto& v : settings_.vertices) {
    order.emplace(v.name, order.size());
    vertices.push_back({{"name", v.name}, {"parallelism", v.parallelism}});
  }
  for (const auto& e : settings_.edges) {
    edges.push_back({{"from", e.from}, {"to", e.to}, {"partitioning", e.partitioning}});
  }
  out["graph"] = {{"vertices", std::move(vertices)}, {"edges", std::move(edges)}};

  json history = json::array();
  json last_id = nullptr;
  for (const auto& c : history_) {
    if (!c.savepoint && last_id.is_null()) last_id = c.id;
    history.push_back({{"id", c.id},
                       {"completed_ms", c.completed_ms},
                       {"duration_ms", c.duration_ms},
                       {"size_bytes", c.size_bytes},
                       {"alignment_ms", static_cast<double>(c.alignment_us) / 1000.0},
                       {"sync_ms", static_cast<double>(c.sync_us) / 1000.0},
                       {"sync_task", c.sync_task},
                       {"async_ms", static_cast<double>(c.async_us) / 1000.0},
                       {"savepoint", c.savepoint}});
  }
  out["checkpoints"] = {{"completed", completed_checkpoints_},
                        {"failed", failed_checkpoints_before_ + Sample(kFailedCheckpoints, {}, 0)},
                        {"last_id", last_id},
                        {"history", std::move(history)}};

  // Every task reports numRecordsOut; rows in graph order, then by subtask.
  std::vector<MetricLabels> tasks;
  for (const auto& [key, v] : samples_) {
    if (key.first == kRecordsOut) tasks.push_back(key.second);
  }
  auto rank = [&](const MetricLabels& l) {
    auto it = order.find(LabelOf(l, "task_name"));
    return std::make_pair(it == order.end() ? order.size() : it->second,
                          std::atoll(LabelOf(l, "subtask_index").c_str()));
  };
  std::sort(tasks.begin(), tasks.end(),
            [&](const MetricLabels& a, const MetricLabels& b) { return rank(a) < rank(b); });
  json task_rows = json::array();
  json source_rows = json::array();
  std::map<std::string, bool> is_source;
  for (const auto& v : settings_.vertices) is_source[v.name] = v.source;
  for (const MetricLabels& t : tasks) {
    const std::string vertex = LabelOf(t, "task_name");
    const int64_t subtask = std::atoll(LabelOf(t, "subtask_index").c_str());
    task_rows.push_back(
        {{"vertex", vertex},
         {"subtask", subtask},
         {"records_in", Sample(kRecordsIn, t, 0)},
         {"records_out", Sample(kRecordsOut, t, 0)},
         {"records_in_per_s", rate(kRecordsIn, t, 1)},
         {"records_out_per_s", rate(kRecordsOut, t, 1)},
         {"back_pressured_ms_per_s", rate(kBackPressure, t, 1000)},
         {"input_watermark_ms", value_or_null(kOperator + "currentInputWatermark", t)},
         {"output_watermark_ms", value_or_null(kOperator + "currentOutputWatermark", t)}});
    if (!is_source[vertex]) continue;
    json base = {{"vertex", vertex},
                 {"subtask", subtask},
                 {"topic", nullptr},
                 {"partition", nullptr},
                 {"offset", nullptr},
                 {"lag", nullptr},
                 {"watermark_ms", value_or_null(kOperator + "currentOutputWatermark", t)},
                 {"idle_ms", value_or_null(kOperator + "sourceIdleTime", t)},
                 {"event_time_lag_ms", value_or_null(kOperator + "currentEmitEventTimeLag", t)}};
    bool any = false;
    for (const auto& [key, v] : samples_) {
      if (key.first != kKafkaOffset || TaskOf(key.second) != t) continue;
      json row = base;
      row["topic"] = LabelOf(key.second, "topic");
      row["partition"] = std::atoll(LabelOf(key.second, "partition").c_str());
      row["offset"] = v.value;
      row["lag"] = value_or_null(kOperator + "KafkaSourceReader_records_lag", key.second);
      source_rows.push_back(std::move(row));
      any = true;
    }
    if (!any) source_rows.push_back(std::move(base));
  }
  out["tasks"] = std::move(task_rows);
  out["sources"] = std::move(source_rows);

  json sinks = json::array();
  json stalled = json::array();
  for (const auto& [table, st] : tables_) {
    const MetricLabels& c = st.committer;
    auto committer = [&](const char* name) { return Sample(kCommitter + name, c, 0); };
    const int64_t last_duration = Sample(kCommitter + "lastCommitDurationMs", c, -1);
    const int64_t watermark = Sample(kCommitter + "lastCommittedWatermark", c, -1);
    sinks.push_back(
        {{"table", table},
         {"commits", committer("commits")},
         {"last_commit_ms", st.last_commit_ms > 0 ? json(st.last_commit_ms) : json(nullptr)},
         {"last_commit_duration_ms", last_duration >= 0 ? json(last_duration) : json(nullptr)},
         {"seconds_since_commit",
          st.last_commit_ms > 0 ? json(static_cast<double>(now_ms - st.last_commit_ms) / 1000.0)
                                : json(nullptr)},
         {"event_time_freshness_ms", watermark >= 0 ? json(watermark) : json(nullptr)},
         {"data_files", committer("totalDataFiles")},
         {"delete_files", committer("totalDeleteFiles")},
         {"records_added", committer("committedDataFilesRecordCount")},
         {"bytes_added", committer("committedDataFilesByteCount")},
         {"uncommitted_records", std::max<int64_t>(0, st.written - st.written_at_commit)},
         {"stalled", st.stalled},
         {"stalled_seconds",
          st.stalled
              ? static_cast<double>(now_ms - std::max(st.last_commit_ms, attempt_started_ms_)) /
                    1000.0
              : 0.0}});
    if (st.stalled) stalled.push_back(table);
  }
  out["sinks"] = std::move(sinks);
  out["alarm"] = {{"threshold_ms", settings_.stall_threshold_ms},
                  {"action", settings_.stall_fails_job ? "fail" : "warn"},
                  {"stalled", std::move(stalled)}};
  return DumpJson(out);
}

}  // namespace floe::process

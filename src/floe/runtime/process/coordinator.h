#pragma once

// The coordinator of `floe run` (Flink's JobManager role for one job): starts the worker
// process, restarts it under the restart strategy, serves the control endpoint (savepoint,
// stop, cancel), keeps job.json current. Single-threaded: one poll loop. See
// docs/processes.md.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"
#include "floe/io/file_io.h"
#include "floe/runtime/monitoring_config.h"
#include "floe/runtime/process/job_monitor.h"
#include "floe/runtime/restart_strategy.h"

namespace floe::process {

// What the coordinator hands every worker attempt (written to <job dir>/run.json, owner-only:
// variables may hold secrets, so they stay off the command line).
struct RunSpec {
  std::string job_file;                                 // absolute
  std::map<std::string, std::string> variables;         // --var and the environment, resolved
  std::map<std::string, std::string> config_overrides;  // --set, plus the defaulted dir
  std::string on_stale_restore = "fail";
};
std::string EncodeRunSpec(const RunSpec& spec);
Result<RunSpec> DecodeRunSpec(std::string_view json);

// The NAMEs of every ${NAME} in a job file, in order of first use.
std::vector<std::string> ReferencedVariables(std::string_view job_text);
// Exit status of a worker whose error restarting cannot fix: InvalidArgument (the user's input:
// "fix input, not retry", common/status.h) before its attempt completed a checkpoint, i.e. from
// planning, restore reconciliation or an operator's Open (a librdkafka property refused only
// when the client is created). The coordinator fails the job at once instead of restarting.
inline constexpr int kWorkerExitFatal = 3;
// Whether a worker error is fatal in that sense.
bool IsFatalWorkerError(const Status& st, bool checkpoint_completed);

// The coordinator's HTTP endpoints (web/ serves them; `floe run` wires them in).
class MonitorEndpoints {
 public:
  virtual ~MonitorEndpoints() = default;
  virtual const std::string& web_url() const = 0;
  virtual const std::string& metrics_url() const = 0;
  // What the endpoints serve from now on. Called on the coordinator's loop, once a second.
  virtual void Publish(const std::vector<ExposedMetric>& metrics, std::string overview_json) = 0;
};
using MonitorEndpointsFactory =
    std::function<Result<std::unique_ptr<MonitorEndpoints>>(const runtime::MonitoringConfig&)>;

struct CoordinatorOptions {
  std::string job_file;
  std::map<std::string, std::string> variables;  // from --var; ${NAME} falls back to env NAME
  std::map<std::string, std::string> config_overrides;  // --set
  std::optional<std::string> from;                      // "latest" | checkpoint/savepoint dir
  std::string on_stale_restore = "fail";
  std::optional<std::string> job_id;
  std::string worker_exe = "/proc/self/exe";
  std::string jobs_root;                  // default JobsRoot()
  MonitorEndpointsFactory start_monitor;  // null: no HTTP endpoints
};

// What the coordinator needs from the planned job; planning also refuses a bad job file before
// anything starts.
struct JobPlanSummary {
  runtime::RestartStrategy restart;
  std::string checkpoint_dir;     // execution.checkpointing.dir ("" = in the job directory)
  std::string savepoint_dir;      // execution.checkpointing.savepoint-dir ("" = under checkpoints)
  io::FileIO checkpoint_file_io;  // what they are reached with (CheckpointConfig::file_io)
  runtime::MonitoringConfig monitoring;
  MonitorSettings monitor;  // the graph, the checkpoint interval, the stall threshold
  std::string name;         // Flink's pipeline.name; "" = the job file's name
};
// Plans `job_text` with the resolved variables and overrides under `job_id`.
using JobValidator = std::function<Result<JobPlanSummary>(
    std::string_view job_text, const std::string& job_id,
    const std::map<std::string, std::string>& variables,
    const std::map<std::string, std::string>& config_overrides)>;

// Runs a job under supervision until it finished, was stopped or cancelled (OK), or failed
// beyond its restart strategy (the error says why). Progress goes to the log (stderr).
Status RunCoordinator(const CoordinatorOptions& options, const JobValidator& validate);

}  // namespace floe::process

#pragma once

// The process layer: `floe run` (the supervising coordinator) and `floe worker` (the process
// that runs the job graph). See docs/processes.md.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"
#include "floe/connectors/connector.h"
#include "floe/sql/planner.h"

namespace floe::cli {

// Turns a job file into a runnable plan. `floe` binds sql::PlanJob; tests bind a fake.
using JobPlanner = std::function<Result<std::unique_ptr<sql::PlannedJob>>(
    std::string_view job_text, const sql::PlanOptions& options)>;

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

Result<connectors::StaleRestorePolicy> ParseStaleRestorePolicy(std::string_view text);
// The NAMEs of every ${NAME} in a job file, in order of first use.
std::vector<std::string> ReferencedVariables(std::string_view job_text);
// Splits "key=value" (at the first '='); `what` names the option in errors.
Result<std::pair<std::string, std::string>> SplitAssignment(const std::string& text,
                                                            const std::string& what);

// Exit status of a worker whose error restarting cannot fix: InvalidArgument (the user's input:
// "fix input, not retry", common/status.h) before its attempt completed a checkpoint, i.e. from
// planning, restore reconciliation or an operator's Open (a librdkafka property refused only
// when the client is created). The coordinator fails the job at once instead of restarting.
inline constexpr int kWorkerExitFatal = 3;
// Whether a worker error is fatal in that sense.
bool IsFatalWorkerError(const Status& st, bool checkpoint_completed);

struct SupervisorOptions {
  std::string job_file;
  std::map<std::string, std::string> variables;  // from --var; ${NAME} falls back to env NAME
  std::map<std::string, std::string> config_overrides;  // --set
  std::optional<std::string> from;                      // "latest" | checkpoint/savepoint dir
  std::string on_stale_restore = "fail";
  std::optional<std::string> job_id;
  std::string worker_exe = "/proc/self/exe";
  std::string jobs_root;  // default JobsRoot()
};

// Runs a job under supervision until it finished, was stopped or cancelled (OK), or failed
// beyond its restart strategy (the error says why). Progress goes to stderr.
Status RunSupervisor(const SupervisorOptions& options, const JobPlanner& planner);

// `floe run JOB.sql [--var N=V]... [--set k=v]... [--from latest|PATH]
//  [--on-stale-restore fail|skip-to-table|replay] [--job-id ID]`
Status RunRunCommand(const std::vector<std::string>& args, const JobPlanner& planner);
// `floe worker --job-file F --job-id ID --attempt K [--from latest|PATH] --spec FILE
//  --control-fd N` (internal: started by `floe run`).
Status RunWorkerCommand(const std::vector<std::string>& args, const JobPlanner& planner);

// Dispatches run, worker, list, savepoint, stop, cancel. NotFound if `command` is none of them.
Status RunProcessCommand(const std::string& command, const std::vector<std::string>& args,
                         const JobPlanner& planner);
bool IsProcessCommand(const std::string& command);

}  // namespace floe::cli

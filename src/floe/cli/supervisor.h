#pragma once

// `floe run` and `floe worker`: their arguments, and the planner bound into the process layer
// (src/floe/runtime/process/: the coordinator, job.json, the control endpoint). See
// docs/processes.md.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"
#include "floe/connectors/connector.h"
#include "floe/runtime/process/coordinator.h"
#include "floe/sql/planner.h"

namespace floe::cli {

// Turns a job file into a runnable plan. `floe` binds sql::PlanJob; tests bind a fake.
using JobPlanner = std::function<Result<std::unique_ptr<sql::PlannedJob>>(
    std::string_view job_text, const sql::PlanOptions& options)>;

Result<connectors::StaleRestorePolicy> ParseStaleRestorePolicy(std::string_view text);
// Splits "key=value" (at the first '='); `what` names the option in errors.
Result<std::pair<std::string, std::string>> SplitAssignment(const std::string& text,
                                                            const std::string& what);

// Plans the job file with `planner` (refusing a bad one before anything starts) and runs it
// under process::RunCoordinator.
Status RunSupervisor(const process::CoordinatorOptions& options, const JobPlanner& planner);

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

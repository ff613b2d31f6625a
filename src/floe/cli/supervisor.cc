// `floe run`: the supervising coordinator. Plans the job (config errors stop here, before any
// worker exists), owns the job id and the job directory, serves the control endpoint on
// loopback, starts `floe worker` and restarts it under the restart strategy. One thread: a
// poll(2) loop over the signal pipe, the control socket, its clients and the worker's socket.

#include "floe/cli/supervisor.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>

#include "floe/cli/args.h"
#include "floe/cli/help.h"
#include "floe/cli/job_control.h"
#include "floe/io/file.h"
#include "floe/runtime/checkpoint_storage.h"
#include "floe/runtime/process/coordinator.h"
#include "floe/web/monitor_server.h"

namespace floe::cli {

Result<connectors::StaleRestorePolicy> ParseStaleRestorePolicy(std::string_view text) {
  if (text == "fail") return connectors::StaleRestorePolicy::kFail;
  if (text == "skip-to-table") return connectors::StaleRestorePolicy::kSkipToTable;
  if (text == "replay") return connectors::StaleRestorePolicy::kReplay;
  return Status::InvalidArgument("--on-stale-restore: unknown value '" + std::string(text) +
                                 "' (fail | skip-to-table | replay)");
}

Result<std::pair<std::string, std::string>> SplitAssignment(const std::string& text,
                                                            const std::string& what) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::InvalidArgument(what + " wants NAME=VALUE, got '" + text + "'");
  }
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

namespace {

// What the coordinator's monitor needs of the plan: the graph's shape and the alarm's settings.
process::MonitorSettings MonitorSettingsOf(const sql::PlannedJob& plan) {
  process::MonitorSettings s;
  s.checkpoint_interval_ms = plan.checkpointing.interval.count();
  s.stall_threshold_ms = plan.monitoring.stall_threshold.count();
  s.stall_fails_job = plan.monitoring.stall_fails_job;
  const auto& vertices = plan.graph.vertices();
  for (const auto& v : vertices) s.vertices.push_back({v.name, v.parallelism, v.is_source()});
  for (const auto& e : plan.graph.edges()) {
    static constexpr const char* kNames[] = {"FORWARD", "HASH", "REBALANCE", "GLOBAL"};
    s.edges.push_back({vertices[e.from.value].name, vertices[e.to.value].name,
                       kNames[static_cast<int>(e.partitioning.kind)]});
  }
  return s;
}

}  // namespace

Status RunSupervisor(const process::CoordinatorOptions& options_in, const JobPlanner& planner) {
  FLOE_RETURN_NOT_OK(ParseStaleRestorePolicy(options_in.on_stale_restore).status());
  process::CoordinatorOptions options = options_in;
  if (!options.start_monitor) options.start_monitor = web::StartMonitorServer;
  return process::RunCoordinator(
      options,
      [&](std::string_view text, const std::string& job_id,
          const std::map<std::string, std::string>& variables,
          const std::map<std::string, std::string>& overrides) -> Result<process::JobPlanSummary> {
        sql::PlanOptions po;
        po.job_id = job_id;
        po.variables = variables;
        po.config_overrides = overrides;
        FLOE_ASSIGN_OR_RAISE(std::unique_ptr<sql::PlannedJob> plan, planner(text, po));
        process::JobPlanSummary summary;
        summary.restart = plan->restart;
        summary.checkpoint_dir = plan->checkpointing.base_dir;
        summary.savepoint_dir = plan->checkpointing.savepoint_dir;
        summary.checkpoint_file_io = plan->checkpointing.file_io;
        summary.monitoring = plan->monitoring;
        summary.monitor = MonitorSettingsOf(*plan);
        if (auto it = plan->config.find("pipeline.name"); it != plan->config.end()) {
          summary.name = it->second;
        }
        return summary;
      });
}

Status RunRunCommand(const std::vector<std::string>& argv, const JobPlanner& planner) {
  FLOE_ASSIGN_OR_RAISE(
      Args args,
      Args::Parse(argv, {{"var", "set", "from", "on-stale-restore", "job-id", "worker-exe"}, {}}));
  if (args.positional().size() != 1) {
    return Status::InvalidArgument(UsageError("run"));
  }
  process::CoordinatorOptions o;
  o.job_file = args.positional()[0];
  for (const auto& v : args.GetAll("var")) {
    FLOE_ASSIGN_OR_RAISE(auto kv, SplitAssignment(v, "--var"));
    o.variables[kv.first] = kv.second;
  }
  for (const auto& v : args.GetAll("set")) {
    FLOE_ASSIGN_OR_RAISE(auto kv, SplitAssignment(v, "--set"));
    o.config_overrides[kv.first] = kv.second;
  }
  o.from = args.Get("from");
  o.on_stale_restore = args.GetOr("on-stale-restore", "fail");
  o.job_id = args.Get("job-id");
  if (o.job_id && (o.job_id->empty() || o.job_id->find('/') != std::string::npos ||
                   *o.job_id == "." || *o.job_id == "..")) {
    return Status::InvalidArgument("--job-id '" + *o.job_id + "' is not a valid job id");
  }
  if (auto exe = args.Get("worker-exe")) o.worker_exe = *exe;
  return RunSupervisor(o, planner);
}

bool IsProcessCommand(const std::string& c) {
  return c == "run" || c == "worker" || c == "list" || c == "status" || c == "savepoint" ||
         c == "stop" || c == "cancel";
}

Status RunProcessCommand(const std::string& command, const std::vector<std::string>& args,
                         const JobPlanner& planner) {
  if (command == "run") return RunRunCommand(args, planner);
  if (command == "worker") return RunWorkerCommand(args, planner);
  if (command == "list") return RunListCommand(args);
  if (command == "status") return RunStatusCommand(args);
  if (command == "savepoint") return RunSavepointCommand(args);
  if (command == "stop") return RunStopCommand(args);
  if (command == "cancel") return RunCancelCommand(args);
  return Status::NotFound("unknown command '" + command + "'");
}

}  // namespace floe::cli

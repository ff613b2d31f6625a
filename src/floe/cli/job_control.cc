#include "floe/cli/job_control.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fcntl.h>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "floe/cli/args.h"
#include "floe/io/file.h"
#include "floe/runtime/process/control_protocol.h"
#include "floe/runtime/process/job_record.h"
#include "floe/runtime/process/json_fields.h"

namespace floe::cli {

using nlohmann::json;
using process::ControlReply;
using process::DumpJson;
using process::IsTerminalState;
using process::JobRecord;
using process::JobsRoot;
using process::ListJobRecords;
using process::ParseControlReply;
using process::ParseJson;
using process::ProcessAlive;
using process::SendControlRequest;

namespace {

// Finds a job by id (or an unambiguous prefix of at least 4 hex digits).
Result<JobRecord> FindJob(const std::string& id) {
  const std::string root = JobsRoot();
  if (id.size() >= 4) {
    std::vector<JobRecord> matches;
    for (auto& r : ListJobRecords(root)) {
      if (r.job_id == id) return r;
      if (r.job_id.compare(0, id.size(), id) == 0) matches.push_back(std::move(r));
    }
    if (matches.size() == 1) return matches[0];
    if (matches.size() > 1) {
      return Status::InvalidArgument("job id prefix '" + id + "' is ambiguous");
    }
  }
  return Status::NotFound("no job '" + id + "' in " + root + " (floe list shows running jobs)");
}

Result<JobRecord> FindRunningJob(const std::string& id) {
  FLOE_ASSIGN_OR_RAISE(JobRecord job, FindJob(id));
  if (IsTerminalState(job.state)) {
    return Status::InvalidArgument("job " + job.job_id + " is " + job.state);
  }
  if (!ProcessAlive(job.pid)) {
    return Status::Unavailable("job " + job.job_id + ": its coordinator (pid " +
                               std::to_string(job.pid) + ") is gone");
  }
  return job;
}

// Sends the request and turns {"ok":false,"error":...} (or a garbled reply) into a Status.
Result<ControlReply> Request(const JobRecord& job, const json& request,
                             std::chrono::milliseconds timeout) {
  FLOE_ASSIGN_OR_RAISE(std::string line, SendControlRequest(job, DumpJson(request), timeout));
  auto reply = ParseControlReply(line);
  if (!reply.ok()) return reply.status().WithContext("job " + job.job_id);
  return reply;
}

// The savepoint's path from a savepoint or stop reply.
Result<std::string> PathOf(const JobRecord& job, const ControlReply& reply) {
  if (!reply.path || reply.path->empty()) {
    return Status::Corruption("job " + job.job_id + ": the reply names no savepoint path");
  }
  return *reply.path;
}

std::chrono::milliseconds TimeoutOf(const Args& args) {
  auto t = args.GetInt("timeout");
  if (t.ok() && *t) return std::chrono::milliseconds(**t * 1000);
  return std::chrono::minutes(15);
}

std::string Absolute(const std::string& dir) { return io::AbsolutePath(dir); }

std::string Pad(std::string s, size_t n) {
  if (s.size() < n) s.append(n - s.size(), ' ');
  return s;
}

}  // namespace

Status RunListCommand(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(Args args, Args::Parse(argv, {{}, {"all", "json"}}));
  if (!args.positional().empty())
    return Status::InvalidArgument("usage: floe list [--all] [--json]");
  bool all = args.Has("all");
  std::vector<JobRecord> jobs;
  for (auto& r : ListJobRecords(JobsRoot())) {
    bool alive = ProcessAlive(r.pid);
    if (!IsTerminalState(r.state) && !alive) r.state = "LOST";  // coordinator gone uncleanly
    if (!all && (IsTerminalState(r.state) || r.state == "LOST")) continue;
    jobs.push_back(std::move(r));
  }
  if (args.Has("json")) {
    for (const auto& r : jobs) {
      json j = ParseJson(EncodeJobRecord(r)).value_or(json::object());
      j.erase("token");
      std::printf("%s\n", DumpJson(j).c_str());
    }
    return Status::OK();
  }
  std::printf("%s%s%s%s%s%s\n", Pad("JOB ID", 34).c_str(), Pad("STATE", 12).c_str(),
              Pad("CHECKPOINT", 12).c_str(), Pad("PID", 9).c_str(), Pad("WORKER", 9).c_str(),
              "JOB");
  for (const auto& r : jobs) {
    std::printf("%s%s%s%s%s%s\n", Pad(r.job_id, 34).c_str(), Pad(r.state, 12).c_str(),
                Pad(r.last_checkpoint ? std::to_string(r.last_checkpoint) : "-", 12).c_str(),
                Pad(std::to_string(r.pid), 9).c_str(),
                Pad(r.worker_pid ? std::to_string(r.worker_pid) : "-", 9).c_str(), r.name.c_str());
  }
  return Status::OK();
}

Status RunSavepointCommand(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(Args args, Args::Parse(argv, {{"timeout"}, {}}));
  if (args.positional().empty() || args.positional().size() > 2) {
    return Status::InvalidArgument("usage: floe savepoint JOB_ID [DIR] [--timeout SECONDS]");
  }
  FLOE_ASSIGN_OR_RAISE(JobRecord job, FindRunningJob(args.positional()[0]));
  json req = {{"cmd", "savepoint"}};
  if (args.positional().size() == 2) req["dir"] = Absolute(args.positional()[1]);
  FLOE_ASSIGN_OR_RAISE(ControlReply reply, Request(job, req, TimeoutOf(args)));
  FLOE_ASSIGN_OR_RAISE(std::string path, PathOf(job, reply));
  std::printf("%s\n", path.c_str());
  return Status::OK();
}

Status RunStopCommand(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(Args args, Args::Parse(argv, {{"timeout"}, {"savepoint"}}));
  if (args.positional().empty() || args.positional().size() > 2) {
    return Status::InvalidArgument("usage: floe stop JOB_ID --savepoint [DIR] [--timeout SECONDS]");
  }
  FLOE_ASSIGN_OR_RAISE(JobRecord job, FindRunningJob(args.positional()[0]));
  json req = {{"cmd", "stop"}};
  if (args.positional().size() == 2) req["dir"] = Absolute(args.positional()[1]);
  FLOE_ASSIGN_OR_RAISE(ControlReply reply, Request(job, req, TimeoutOf(args)));
  FLOE_ASSIGN_OR_RAISE(std::string path, PathOf(job, reply));
  std::printf("%s\n", path.c_str());
  return Status::OK();
}

Status RunCancelCommand(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(Args args, Args::Parse(argv, {{"timeout"}, {}}));
  if (args.positional().size() != 1) return Status::InvalidArgument("usage: floe cancel JOB_ID");
  FLOE_ASSIGN_OR_RAISE(JobRecord job, FindRunningJob(args.positional()[0]));
  FLOE_RETURN_NOT_OK(Request(job, {{"cmd", "cancel"}}, TimeoutOf(args)).status());
  std::printf("job %s cancelled\n", job.job_id.c_str());
  return Status::OK();
}

}  // namespace floe::cli

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
#include "floe/cli/help.h"
#include "floe/common/json.h"
#include "floe/io/file.h"
#include "floe/io/location.h"
#include "floe/runtime/process/control_protocol.h"
#include "floe/runtime/process/job_record.h"

namespace floe::cli {

using nlohmann::json;
using process::ControlReply;
using process::IsTerminalState;
using process::JobRecord;
using process::JobsRoot;
using process::ListJobRecords;
using process::ParseControlReply;
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

// `s` padded to a column of `n`; a longer `s` still keeps a space before the next column.
std::string Pad(std::string s, size_t n) {
  s.append(s.size() < n ? n - s.size() : 1, ' ');
  return s;
}

std::string Seconds(int64_t millis) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", static_cast<double>(millis) / 1000.0);
  return buf;
}

// Each table's freshness for `floe list`: "demo.t 1.2 s ago", "demo.t STALLED 34.0 s".
std::string Freshness(const JobRecord& r, int64_t now) {
  std::string out;
  for (const auto& t : r.tables) {
    if (!out.empty()) out += ", ";
    out += t.table;
    if (t.stalled) out += " STALLED";
    out += t.last_commit_millis > 0 ? " " + Seconds(now - t.last_commit_millis) +
                                          (t.stalled ? " without a commit" : " ago")
                                    : " no commit yet";
  }
  return out.empty() ? "-" : out;
}

// The overview comes from another process (perhaps of another version): it is read with these,
// never with nlohmann's value() and operator[], which throw or are undefined on another shape.
// A member of `o`, or null.
const json& At(const json& o, const char* key) {
  static const json kNull;
  if (!o.is_object()) return kNull;
  auto it = o.find(key);
  return it == o.end() ? kNull : *it;
}
// The elements of an array member (none if it is not an array).
const json& Items(const json& o, const char* key) {
  static const json kNone = json::array();
  const json& v = At(o, key);
  return v.is_array() ? v : kNone;
}
std::string Text(const json& v) { return v.is_string() ? v.get<std::string>() : ""; }
int64_t Int(const json& v, int64_t otherwise) {
  return v.is_number_integer() ? v.get<int64_t>() : otherwise;
}
bool Flag(const json& v) { return v.is_boolean() && v.get<bool>(); }

// A JSON number or null as text ("-" for null).
std::string Num(const json& v) {
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.1f", v.get<double>());
    return buf;
  }
  return "-";
}

// The coordinator's overview (JobMonitor::OverviewJson) as text.
void PrintOverview(const json& o) {
  const json& job = At(o, "job");
  const int64_t now = Int(At(o, "now_ms"), 0);
  std::printf("job %s (%s) %s, up %s, restarts %s, attempt %s, worker %s\n",
              Text(At(job, "id")).c_str(), Text(At(job, "name")).c_str(),
              Text(At(job, "state")).c_str(), Seconds(Int(At(job, "uptime_ms"), 0)).c_str(),
              Num(At(job, "restarts")).c_str(), Num(At(job, "attempt")).c_str(),
              Num(At(job, "worker_pid")).c_str());
  std::printf("web UI %s  metrics %s\n", Text(At(job, "web_url")).c_str(),
              Text(At(job, "metrics_url")).c_str());
  const json& cp = At(o, "checkpoints");
  std::printf("checkpoints: %s completed, %s failed", Num(At(cp, "completed")).c_str(),
              Num(At(cp, "failed")).c_str());
  for (const json& c : Items(cp, "history")) {
    if (Flag(At(c, "savepoint"))) continue;
    const std::string task = Text(At(c, "sync_task"));  // the task the stream waited for
    std::printf(", last %s %s ago (%s ms, %s bytes, alignment %s ms, sync %s ms%s, async %s ms)",
                Num(At(c, "id")).c_str(), Seconds(now - Int(At(c, "completed_ms"), now)).c_str(),
                Num(At(c, "duration_ms")).c_str(), Num(At(c, "size_bytes")).c_str(),
                Num(At(c, "alignment_ms")).c_str(), Num(At(c, "sync_ms")).c_str(),
                task.empty() ? "" : (" in " + task).c_str(), Num(At(c, "async_ms")).c_str());
    break;
  }
  std::printf("\n\n%s%s%s%s%s%s%s\n", Pad("TASK", 32).c_str(), Pad("RECORDS IN", 13).c_str(),
              Pad("RECORDS OUT", 13).c_str(), Pad("IN/S", 10).c_str(), Pad("OUT/S", 10).c_str(),
              Pad("BACKPRESSURE MS/S", 19).c_str(), "WATERMARK IN/OUT");
  for (const json& t : Items(o, "tasks")) {
    std::printf(
        "%s%s%s%s%s%s%s / %s\n",
        Pad(Text(At(t, "vertex")) + "/" + Num(At(t, "subtask")), 32).c_str(),
        Pad(Num(At(t, "records_in")), 13).c_str(), Pad(Num(At(t, "records_out")), 13).c_str(),
        Pad(Num(At(t, "records_in_per_s")), 10).c_str(),
        Pad(Num(At(t, "records_out_per_s")), 10).c_str(),
        Pad(Num(At(t, "back_pressured_ms_per_s")), 19).c_str(),
        Num(At(t, "input_watermark_ms")).c_str(), Num(At(t, "output_watermark_ms")).c_str());
  }
  std::printf("\n%s%s%s%s%s%s\n", Pad("SOURCE", 32).c_str(), Pad("TOPIC/PARTITION", 24).c_str(),
              Pad("OFFSET", 12).c_str(), Pad("LAG", 10).c_str(), Pad("IDLE MS", 10).c_str(),
              "WATERMARK");
  for (const json& s : Items(o, "sources")) {
    std::string split =
        At(s, "topic").is_string() ? Text(At(s, "topic")) + "/" + Num(At(s, "partition")) : "-";
    std::printf("%s%s%s%s%s%s\n",
                Pad(Text(At(s, "vertex")) + "/" + Num(At(s, "subtask")), 32).c_str(),
                Pad(split, 24).c_str(), Pad(Num(At(s, "offset")), 12).c_str(),
                Pad(Num(At(s, "lag")), 10).c_str(), Pad(Num(At(s, "idle_ms")), 10).c_str(),
                Num(At(s, "watermark_ms")).c_str());
  }
  const json& alarm = At(o, "alarm");
  std::printf("\n%s%s%s%s%s%s%s\n", Pad("TABLE", 24).c_str(), Pad("COMMITS", 9).c_str(),
              Pad("LAST COMMIT", 14).c_str(), Pad("FILES", 8).c_str(), Pad("DELETES", 9).c_str(),
              Pad("WATERMARK", 15).c_str(), "STATE");
  for (const json& s : Items(o, "sinks")) {
    const bool stalled = Flag(At(s, "stalled"));
    std::string state = stalled ? "STALLED " + Num(At(s, "stalled_seconds")) +
                                      " s without a commit (threshold " +
                                      Seconds(Int(At(alarm, "threshold_ms"), 0)) + ")"
                                : "OK";
    std::string last = At(s, "seconds_since_commit").is_number()
                           ? Num(At(s, "seconds_since_commit")) + " s ago"
                           : "none yet";
    std::printf("%s%s%s%s%s%s%s\n", Pad(Text(At(s, "table")), 24).c_str(),
                Pad(Num(At(s, "commits")), 9).c_str(), Pad(last, 14).c_str(),
                Pad(Num(At(s, "data_files")), 8).c_str(),
                Pad(Num(At(s, "delete_files")), 9).c_str(),
                Pad(Num(At(s, "event_time_freshness_ms")), 15).c_str(), state.c_str());
  }
}

}  // namespace

Status RunListCommand(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(Args args, Args::Parse(argv, {{}, {"all", "json"}}));
  if (!args.positional().empty()) return Status::InvalidArgument(UsageError("list"));
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
      json j = process::JobRecordToJson(r);
      j.erase("token");
      std::printf("%s\n", DumpJson(j).c_str());
    }
    return Status::OK();
  }
  std::printf("%s%s%s%s%s%s%s\n", Pad("JOB ID", 34).c_str(), Pad("STATE", 12).c_str(),
              Pad("CHECKPOINT", 12).c_str(), Pad("PID", 9).c_str(), Pad("WORKER", 9).c_str(),
              Pad("JOB", 20).c_str(), "TABLES");
  const int64_t now = process::NowMillis();
  for (const auto& r : jobs) {
    std::printf("%s%s%s%s%s%s%s\n", Pad(r.job_id, 34).c_str(), Pad(r.state, 12).c_str(),
                Pad(r.last_checkpoint ? std::to_string(r.last_checkpoint) : "-", 12).c_str(),
                Pad(std::to_string(r.pid), 9).c_str(),
                Pad(r.worker_pid ? std::to_string(r.worker_pid) : "-", 9).c_str(),
                Pad(r.name, 20).c_str(), Freshness(r, now).c_str());
  }
  return Status::OK();
}

Status RunStatusCommand(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(Args args, Args::Parse(argv, {{}, {"json"}}));
  if (args.positional().size() != 1) {
    return Status::InvalidArgument(UsageError("status"));
  }
  FLOE_ASSIGN_OR_RAISE(JobRecord job, FindJob(args.positional()[0]));
  std::optional<json> overview;
  if (!IsTerminalState(job.state) && ProcessAlive(job.pid)) {
    auto line =
        SendControlRequest(job, DumpJson(json{{"cmd", "status"}}), std::chrono::seconds(10));
    Result<json> reply = line.ok() ? ParseJson(*line, JsonPath("status reply")) : line.status();
    if (reply.ok() && At(*reply, "overview").is_object()) overview = At(*reply, "overview");
  }
  if (args.Has("json")) {
    json j = process::JobRecordToJson(job);
    j.erase("token");
    if (overview) j["overview"] = *overview;
    std::printf("%s\n", DumpJson(j).c_str());
    return Status::OK();
  }
  if (overview) {
    PrintOverview(*overview);
    return Status::OK();
  }
  // The coordinator is gone: what job.json recorded.
  const int64_t now = process::NowMillis();
  std::printf("job %s (%s) %s%s\n", job.job_id.c_str(), job.name.c_str(),
              IsTerminalState(job.state) || ProcessAlive(job.pid) ? job.state.c_str() : "LOST",
              job.message.empty() ? "" : (": " + job.message).c_str());
  std::printf("last checkpoint %s\n", job.last_checkpoint
                                          ? (std::to_string(job.last_checkpoint) + ", " +
                                             Seconds(now - job.last_checkpoint_millis) + " ago")
                                                .c_str()
                                          : "none");
  std::printf("tables: %s\n", Freshness(job, now).c_str());
  return Status::OK();
}

Status RunSavepointCommand(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(Args args, Args::Parse(argv, {{"timeout"}, {}}));
  if (args.positional().empty() || args.positional().size() > 2) {
    return Status::InvalidArgument(UsageError("savepoint"));
  }
  FLOE_ASSIGN_OR_RAISE(JobRecord job, FindRunningJob(args.positional()[0]));
  json req = {{"cmd", "savepoint"}};
  if (args.positional().size() == 2) {
    FLOE_ASSIGN_OR_RAISE(req["dir"], io::ResolveLocation(args.positional()[1], "DIR"));
  }
  FLOE_ASSIGN_OR_RAISE(ControlReply reply, Request(job, req, TimeoutOf(args)));
  FLOE_ASSIGN_OR_RAISE(std::string path, PathOf(job, reply));
  std::printf("%s\n", path.c_str());
  return Status::OK();
}

Status RunStopCommand(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(Args args, Args::Parse(argv, {{"timeout"}, {"savepoint"}}));
  if (args.positional().empty() || args.positional().size() > 2) {
    return Status::InvalidArgument(UsageError("stop"));
  }
  FLOE_ASSIGN_OR_RAISE(JobRecord job, FindRunningJob(args.positional()[0]));
  json req = {{"cmd", "stop"}};
  if (args.positional().size() == 2) {
    FLOE_ASSIGN_OR_RAISE(req["dir"], io::ResolveLocation(args.positional()[1], "DIR"));
  }
  FLOE_ASSIGN_OR_RAISE(ControlReply reply, Request(job, req, TimeoutOf(args)));
  FLOE_ASSIGN_OR_RAISE(std::string path, PathOf(job, reply));
  std::printf("%s\n", path.c_str());
  return Status::OK();
}

Status RunCancelCommand(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(Args args, Args::Parse(argv, {{"timeout"}, {}}));
  if (args.positional().size() != 1) return Status::InvalidArgument(UsageError("cancel"));
  FLOE_ASSIGN_OR_RAISE(JobRecord job, FindRunningJob(args.positional()[0]));
  FLOE_RETURN_NOT_OK(Request(job, {{"cmd", "cancel"}}, TimeoutOf(args)).status());
  std::printf("job %s cancelled\n", job.job_id.c_str());
  return Status::OK();
}

}  // namespace floe::cli

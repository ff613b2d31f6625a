// `floe run`: the supervising coordinator. Plans the job (config errors stop here, before any
// worker exists), owns the job id and the job directory, serves the control endpoint on
// loopback, starts `floe worker` and restarts it under the restart strategy. One thread: a
// poll(2) loop over the signal pipe, the control socket, its clients and the worker's socket.

#include "floe/runtime/process/coordinator.h"

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
#include <nlohmann/json.hpp>

#include "floe/common/json.h"
#include "floe/common/log.h"
#include "floe/io/file.h"
#include "floe/io/location.h"
#include "floe/runtime/checkpoint_storage.h"
#include "floe/runtime/process/control_endpoint.h"
#include "floe/runtime/process/control_protocol.h"
#include "floe/runtime/process/job_record.h"

extern char** environ;

namespace floe::process {

using nlohmann::json;

std::string EncodeRunSpec(const RunSpec& spec) {
  json j = {{"job_file", spec.job_file},
            {"variables", spec.variables},
            {"config_overrides", spec.config_overrides},
            {"on_stale_restore", spec.on_stale_restore}};
  return DumpJson(j, 2) + "\n";
}

Result<RunSpec> DecodeRunSpec(std::string_view text) {
  JsonPath at("run spec");
  Result<Json> j = ParseJson(text, at);
  if (!j.ok() || !j->is_object()) return Status::Corruption("run spec is not a JSON object");
  JsonObject f(*j, at);
  RunSpec s;
  FLOE_RETURN_NOT_OK(f.Get("job_file", &s.job_file));
  FLOE_RETURN_NOT_OK(f.Get("variables", &s.variables));
  FLOE_RETURN_NOT_OK(f.Get("config_overrides", &s.config_overrides));
  FLOE_RETURN_NOT_OK(f.Get("on_stale_restore", &s.on_stale_restore));
  return s;
}

std::vector<std::string> ReferencedVariables(std::string_view text) {
  std::vector<std::string> out;
  for (size_t i = text.find("${"); i != std::string_view::npos; i = text.find("${", i + 2)) {
    size_t end = text.find('}', i + 2);
    if (end == std::string_view::npos) break;
    std::string name(text.substr(i + 2, end - i - 2));
    if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) {
      out.push_back(name);
    }
  }
  return out;
}

bool IsFatalWorkerError(const Status& st, bool checkpoint_completed) {
  // Before the attempt's first checkpoint, InvalidArgument is a refusal of the job's input that
  // every attempt repeats (planning, restore, Open; also a malformed record at the start
  // position). Errors after it keep the restart strategy, as before: mid-run errors are not
  // classified yet.
  return st.code() == StatusCode::kInvalidArgument && !checkpoint_completed;
}

namespace {

int g_signal_pipe_write = -1;

void OnSignal(int sig) {
  if (g_signal_pipe_write >= 0) {
    char c = static_cast<char>(sig);
    ssize_t n = ::write(g_signal_pipe_write, &c, 1);
    (void)n;
  }
}

std::string DescribeExit(int wstatus) {
  if (WIFSIGNALED(wstatus)) {
    int sig = WTERMSIG(wstatus);
    const char* abbrev = sigabbrev_np(sig);
    return std::string("killed by ") + (abbrev ? std::string("SIG") + abbrev : std::to_string(sig));
  }
  if (WIFEXITED(wstatus)) return "exit code " + std::to_string(WEXITSTATUS(wstatus));
  return "status " + std::to_string(wstatus);
}

std::string Seconds(int64_t millis) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", static_cast<double>(millis) / 1000.0);
  return buf;
}

class Coordinator {
 public:
  Coordinator(CoordinatorOptions options, const JobPlanSummary& plan, RunSpec spec,
              std::string job_dir, JobRecord record)
      : options_(std::move(options)),
        restart_(plan.restart),
        monitoring_(plan.monitoring),
        spec_(std::move(spec)),
        job_dir_(std::move(job_dir)),
        record_(std::move(record)),
        monitor_(plan.monitor, record_.started_millis),
        checkpoint_file_io_(plan.checkpoint_file_io),
        control_([this](int fd, const std::string& line) { HandleRequest(fd, line); },
                 [this](int fd) { ForgetClient(fd); }) {}

  Status Run() {
    FLOE_RETURN_NOT_OK(SetUp());
    LogInfo("job %s (%s) started; control %s; job dir %s", record_.job_id.c_str(),
            record_.name.c_str(), record_.control.c_str(), job_dir_.c_str());
    if (endpoints_) {
      LogInfo("web UI: %s", record_.web_url.c_str());
      LogInfo("metrics: %s", record_.metrics_url.c_str());
    }
    FLOE_RETURN_NOT_OK(StartWorker(options_.from));
    while (final_state_.empty()) {
      PollOnce();
      control_.ExpireRequests(NowMillis());
      CheckWorker();
      if (final_state_.empty()) Monitor();
      if (worker_pid_ == 0 && restart_at_ != 0 && NowMillis() >= restart_at_ &&
          final_state_.empty()) {
        restart_at_ = 0;
        Status st = StartWorker(RestartFrom());
        if (!st.ok()) Finish(kStateFailed, "cannot start a worker: " + st.ToString());
      }
    }
    Publish(NowMillis());  // the final state
    if (held_stop_fd_ >= 0) ReplyTo(held_stop_fd_, held_stop_reply_);
    ReplyAllPending("job is " + final_state_);
    control_.Close();
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    g_signal_pipe_write = -1;
    if (final_state_ == kStateFailed) {
      return Status::Unavailable("job " + record_.job_id + " failed: " + final_message_);
    }
    return Status::OK();
  }

 private:
  int64_t Elapsed() const { return NowMillis() - record_.started_millis; }

  void SaveRecord() {
    record_.updated_millis = NowMillis();
    Status st = WriteJobRecord(job_dir_, record_);
    if (!st.ok()) LogWarn("cannot update job.json: %s", st.ToString().c_str());
  }

  Status SetUp() {
    ::signal(SIGPIPE, SIG_IGN);
    int p[2];
    if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
      return Status::IOError(std::string("pipe: ") + std::strerror(errno));
    }
    signal_read_.Reset(p[0]);
    signal_write_.Reset(p[1]);
    g_signal_pipe_write = p[1];
    struct sigaction sa {};
    sa.sa_handler = OnSignal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);

    FLOE_RETURN_NOT_OK(control_.Listen());
    record_.control = control_.address();
    if (options_.start_monitor && monitoring_.enabled) {
      auto endpoints = options_.start_monitor(monitoring_);
      if (!endpoints.ok()) return endpoints.status();
      endpoints_ = std::move(*endpoints);
      record_.web_url = endpoints_->web_url();
      record_.metrics_url = endpoints_->metrics_url();
    }
    record_.state = kStateStarting;
    SaveRecord();
    return Status::OK();
  }

  // Where a restarted worker resumes: the newest completed checkpoint of THIS job if there is
  // one, else whatever the first attempt started from (a savepoint, or nothing: a fresh start
  // whose sinks still reconcile with their tables).
  std::optional<std::string> RestartFrom() {
    if (auto latest = LatestCheckpointOfThisJob()) return "latest";
    return options_.from;
  }

  // Where the completed stop savepoint is now: moved into the stop's directory if the worker
  // got that far (the copy's `_metadata` is written last), else where it completed ("" if
  // neither holds a `_metadata`).
  std::string StopSavepointPath() const {
    auto complete = [this](const std::string& dir) {
      return checkpoint_file_io_.Exists(
          io::JoinPath(dir, runtime::CheckpointStorage::kMetadataFile));
    };
    if (!stop_into_.empty()) {
      std::string moved =
          io::JoinPath(stop_into_, std::filesystem::path(stop_savepoint_dir_).filename().string());
      if (complete(moved)) return moved;
    }
    return complete(stop_savepoint_dir_) ? stop_savepoint_dir_ : "";
  }

  std::optional<uint64_t> LatestCheckpointOfThisJob() {
    runtime::CheckpointStorage::Options so;
    so.checkpoint_dir = record_.checkpoint_dir;
    so.job_id = record_.job_id;
    so.file_io = checkpoint_file_io_;
    auto storage = runtime::CheckpointStorage::Make(so);
    if (!storage.ok()) return std::nullopt;
    auto latest = (*storage)->LatestCompleted();
    if (!latest.ok() || !*latest) return std::nullopt;
    auto meta = checkpoint_file_io_.ReadFile(io::JoinPath(
        (*storage)->CheckpointDir(**latest), runtime::CheckpointStorage::kMetadataFile));
    if (!meta.ok()) return std::nullopt;
    auto decoded = runtime::DecodeCheckpointMetadata(*meta);
    if (!decoded.ok() || decoded->header.job_id != record_.job_id) return std::nullopt;
    return (**latest).value;
  }

  Status StartWorker(const std::optional<std::string>& from) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      return Status::IOError(std::string("socketpair: ") + std::strerror(errno));
    }
    UniqueFd mine(sv[0]);
    UniqueFd theirs(sv[1]);
    std::vector<std::string> argv = {"floe",         "worker",
                                     "--job-file",   spec_.job_file,
                                     "--job-id",     record_.job_id,
                                     "--attempt",    std::to_string(attempt_),
                                     "--spec",       io::JoinPath(job_dir_, "run.json"),
                                     "--control-fd", std::to_string(theirs.get())};
    if (from) {
      argv.push_back("--from");
      argv.push_back(*from);
    }
    // FLOE_CRASH_AT reaches the first attempt only: a crash point fires once, the restarted
    // worker runs clean.
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
      if (attempt_ > 0 && std::strncmp(*e, "FLOE_CRASH_AT=", 14) == 0) continue;
      env.emplace_back(*e);
    }
    std::vector<char*> cargv, cenv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    for (auto& e : env) cenv.push_back(e.data());
    cenv.push_back(nullptr);
    const std::string exe = options_.worker_exe;
    const pid_t parent = ::getpid();
    const int child_fd = theirs.get();

    pid_t pid = ::fork();
    if (pid < 0) return Status::IOError(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      // Only async-signal-safe calls from here to execve.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the worker dies with its coordinator
      if (::getppid() != parent) ::_exit(1);
      ::signal(SIGINT, SIG_IGN);  // Ctrl-C is the coordinator's to handle
      ::fcntl(child_fd, F_SETFD, 0);
      ::execve(exe.c_str(), cargv.data(), cenv.data());
      ::_exit(127);
    }
    theirs.Reset();
    int flags = ::fcntl(mine.get(), F_GETFL);
    ::fcntl(mine.get(), F_SETFL, flags | O_NONBLOCK);
    worker_fd_ = std::move(mine);
    worker_lines_ = LineBuffer(kMaxWorkerLineBytes);
    worker_pid_ = pid;
    worker_event_.clear();
    worker_message_.clear();
    monitor_.OnWorkerStarted(NowMillis());
    record_.worker_pid = pid;
    record_.attempt = attempt_;
    // RUNNING once the worker says so: until then it cannot take savepoints.
    if (record_.state != kStateRestarting) record_.state = kStateStarting;
    SaveRecord();
    LogInfo("worker %d started (attempt %d%s)", pid, attempt_ + 1,
            from ? (", from " + *from).c_str() : "");
    ++attempt_;
    return Status::OK();
  }

  void PollOnce() {
    std::vector<pollfd> fds;
    fds.push_back({signal_read_.get(), POLLIN, 0});
    fds.push_back({worker_fd_.valid() ? worker_fd_.get() : -1, POLLIN, 0});
    control_.AddPollFds(&fds);
    int r = ::poll(fds.data(), fds.size(), 100);
    if (r <= 0) return;
    if (fds[0].revents) HandleSignals();
    if (fds[1].fd >= 0 && fds[1].revents) ReadWorker();
    control_.HandleEvents(fds, 2);
  }

  void HandleSignals() {
    char buf[16];
    while (::read(signal_read_.get(), buf, sizeof(buf)) > 0) {
      ++interrupts_;
      if (interrupts_ == 1) {
        LogInfo("interrupted: cancelling the job (again to kill the worker)");
        RequestCancel();
      } else if (worker_pid_ > 0) {
        ::kill(worker_pid_, SIGKILL);
      }
    }
  }

  void RequestCancel() {
    cancel_requested_ = true;
    if (worker_pid_ > 0 && worker_fd_.valid()) {
      (void)WriteAll(worker_fd_.get(), DumpJson(json{{"req", 0}, {"cmd", "cancel"}}) + "\n");
    } else {
      restart_at_ = 0;
      Finish(kStateCancelled, "cancelled while restarting");
    }
  }

  void ReplyTo(int fd, const json& reply) { control_.Reply(fd, DumpJson(reply)); }
  void ReplyError(int fd, std::string_view error) {
    control_.Reply(fd, ControlEndpoint::ErrorLine(error));
  }

  // A control connection went away: every reference to its descriptor goes (the number is
  // reused by the next accept, which must not get this one's answer).
  void ForgetClient(int fd) {
    for (auto p = pending_.begin(); p != pending_.end();) {
      p = p->second == fd ? pending_.erase(p) : std::next(p);
    }
    std::erase(cancel_waiters_, fd);
    if (held_stop_fd_ == fd) held_stop_fd_ = -1;
  }

  void HandleRequest(int fd, const std::string& line) {
    auto req = ParseControlRequest(line, record_.token);
    if (!req.ok()) {
      ReplyError(fd, req.status().message());
      return;
    }
    const std::string& cmd = req->cmd;
    if (cmd == "status") {
      json j = JobRecordToJson(record_);
      j.erase("token");
      j["ok"] = true;
      Result<json> overview =
          ParseJson(monitor_.OverviewJson(Overview(), NowMillis()), JsonPath("overview"));
      j["overview"] = overview.ok() ? std::move(overview).value() : json();
      ReplyTo(fd, j);
      return;
    }
    if (cmd == "cancel") {
      cancel_waiters_.push_back(fd);
      RequestCancel();
      return;
    }
    if (worker_pid_ == 0 || !worker_fd_.valid() || worker_event_ != "running") {
      ReplyError(fd, "job is " + record_.state + " (no running worker); try again");
      return;
    }
    int64_t id = ++next_req_;
    json fwd = {{"req", id}, {"cmd", cmd}};
    if (!req->dir.empty()) fwd["dir"] = req->dir;
    pending_[id] = fd;
    if (cmd == "stop") {
      stop_req_ = id;
      stop_into_ = req->dir;
    }
    LogInfo("%s requested%s", cmd == "stop" ? "stop with savepoint" : "savepoint",
            req->dir.empty() ? "" : (" into " + req->dir).c_str());
    (void)WriteAll(worker_fd_.get(), DumpJson(fwd) + "\n");
  }

  void ReplyAllPending(const std::string& why) {
    for (auto& [id, fd] : pending_) ReplyError(fd, why);
    pending_.clear();
    for (int fd : cancel_waiters_) {
      bool ok = final_state_ == kStateCancelled;
      ok ? ReplyTo(fd, json{{"ok", true}}) : ReplyError(fd, why);
    }
    cancel_waiters_.clear();
  }

  void ReadWorker() {
    auto more = worker_lines_.ReadSome(worker_fd_.get());
    if (!TakeWorkerLines() || !more.ok() || !*more) {
      worker_fd_.Reset();  // the exit is picked up by waitpid
    }
  }

  // Handles every complete status line buffered. False if the worker broke the protocol with a
  // line over the limit: the caller closes its socket, which makes it exit (and be restarted).
  bool TakeWorkerLines() {
    while (true) {
      auto line = worker_lines_.NextLine();
      if (!line.ok()) {
        LogWarn("worker %d: status line refused (%s); closing its socket", worker_pid_,
                line.status().ToString().c_str());
        return false;
      }
      if (!*line) return true;
      HandleWorkerEvent(**line);
    }
  }

  void HandleWorkerEvent(const std::string& line) {
    auto parsed = ParseWorkerEvent(line);
    if (!parsed.ok()) {
      LogWarn("worker %d: %s; ignored", worker_pid_, parsed.status().ToString().c_str());
      return;
    }
    const WorkerEvent& ev = *parsed;
    const std::string& kind = ev.event;
    if (kind == "checkpoint") {
      const uint64_t id = ev.id;
      if (ev.stop) {
        // From here the worker commits the savepoint's side effects: if it dies now, the job
        // ends at this savepoint rather than restarting from an older checkpoint over them.
        stop_savepoint_dir_ = ev.dir;
      }
      if (ev.savepoint) {
        LogInfo("savepoint %llu completed (%s): %s", static_cast<unsigned long long>(id),
                Seconds(Elapsed()).c_str(), ev.dir.c_str());
      } else {
        LogInfo("checkpoint %llu completed (%s)%s", static_cast<unsigned long long>(id),
                Seconds(Elapsed()).c_str(), ev.final ? ", final" : "");
        monitor_.OnCheckpoint({id, NowMillis(), ev.duration_ms, ev.size_bytes, ev.alignment_us,
                               ev.sync_us, ev.async_us, false, ev.sync_task});
        record_.last_checkpoint = id;
        record_.last_checkpoint_millis = NowMillis();
        SaveRecord();
      }
    } else if (kind == "metrics") {
      monitor_.OnMetrics(std::move(parsed->samples), ev.at_ms);
    } else if (kind == "restored") {
      LogInfo("restored from %s %llu (%s); sources start from %s; the next checkpoint is %llu",
              ev.savepoint ? "savepoint" : "checkpoint",
              static_cast<unsigned long long>(ev.checkpoint), ev.path.value_or("").c_str(),
              ev.from_table ? "the positions the table holds" : "its positions",
              static_cast<unsigned long long>(ev.next_checkpoint));
    } else if (kind == "fresh") {
      LogInfo(
          "no checkpoint to restore: sources start from %s; the next checkpoint is %llu",
          ev.from_table ? "the positions the table holds" : "their configured startup positions",
          static_cast<unsigned long long>(ev.next_checkpoint));
    } else if (kind == "restore-plan") {
      LogInfo("restore: %s", ev.message.c_str());
    } else if (kind == "running") {
      worker_event_ = "running";
      record_.state = kStateRunning;
      SaveRecord();
    } else if (kind == "reply") {
      auto it = pending_.find(ev.req);
      if (it != pending_.end()) {
        int fd = it->second;
        pending_.erase(it);
        json reply = {{"ok", ev.ok}};
        if (ev.path) reply["path"] = *ev.path;
        if (ev.error) reply["error"] = *ev.error;
        if (!ev.ok && !ev.error) reply["error"] = "the worker gave no reason";
        if (ev.req == stop_req_ && ev.ok) {
          // Answered once the job is down: `floe stop` returns when the job stopped.
          held_stop_fd_ = fd;
          held_stop_reply_ = reply;
          stop_path_ = ev.path.value_or("");
        } else {
          ReplyTo(fd, reply);
        }
      }
    } else if (kind == "finished" || kind == "cancelled" || kind == "stopped") {
      worker_event_ = kind;
      if (kind == "stopped") worker_message_ = ev.path.value_or("");
    } else if (kind == "failed") {
      worker_event_ = kind;
      worker_message_ = ev.error.value_or("");
      LogInfo("worker reported: %s", worker_message_.c_str());
    }
  }

  void CheckWorker() {
    if (worker_pid_ == 0) return;
    int wstatus = 0;
    pid_t r = ::waitpid(worker_pid_, &wstatus, WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR)) return;
    // Drain what the worker said before it went.
    if (worker_fd_.valid()) {
      while (true) {
        auto more = worker_lines_.ReadSome(worker_fd_.get());
        if (!TakeWorkerLines() || !more.ok() || !*more) break;
        pollfd p{worker_fd_.get(), POLLIN, 0};
        if (::poll(&p, 1, 0) <= 0) break;
      }
      worker_fd_.Reset();
    }
    const pid_t pid = worker_pid_;
    worker_pid_ = 0;
    record_.worker_pid = 0;
    // The stop's savepoint completed but the worker went before answering: the stop succeeded.
    std::string stopped_at = stop_path_;
    if (stopped_at.empty() && !stop_savepoint_dir_.empty()) {
      stopped_at = StopSavepointPath();
      auto it = pending_.find(stop_req_);
      if (!stopped_at.empty() && it != pending_.end()) {
        held_stop_fd_ = it->second;
        held_stop_reply_ = {{"ok", true}, {"path", stopped_at}};
        pending_.erase(it);
      }
    }
    for (auto& [id, fd] : pending_) {
      ReplyError(fd, "the worker exited before answering");
    }
    pending_.clear();

    const bool clean = r == pid && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
    if (clean && worker_event_ == "finished") {
      Finish(kStateFinished, "");
      return;
    }
    if (clean && worker_event_ == "stopped") {
      Finish(kStateStopped, worker_message_);
      return;
    }
    if (clean && worker_event_ == "cancelled") {
      Finish(kStateCancelled, "");
      return;
    }
    std::string how = r == pid ? DescribeExit(wstatus) : "lost";
    if (!stopped_at.empty()) {
      // The stop's savepoint completed; the job was on its way down anyway.
      Finish(kStateStopped, stopped_at);
      return;
    }
    if (cancel_requested_) {
      Finish(kStateCancelled, "worker " + how + " while cancelling");
      return;
    }
    stop_req_ = 0;
    if (r == pid && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == kWorkerExitFatal) {
      Finish(kStateFailed, "worker " + std::to_string(pid) + " " + how +
                               (worker_message_.empty() ? "" : ": " + worker_message_) +
                               "; not restarted: refused before its first checkpoint, every "
                               "attempt would fail the same way");
      return;
    }
    if (restart_.kind != runtime::RestartStrategy::Kind::kFixedDelay) {
      Finish(kStateFailed, "worker " + std::to_string(pid) + " " + how +
                               (worker_message_.empty() ? "" : ": " + worker_message_) +
                               "; restart-strategy.type is none");
      return;
    }
    if (record_.restarts >= restart_.attempts) {
      Finish(kStateFailed, "worker " + std::to_string(pid) + " " + how +
                               (worker_message_.empty() ? "" : ": " + worker_message_) +
                               "; restart attempts exhausted (" + std::to_string(record_.restarts) +
                               " of " + std::to_string(restart_.attempts) +
                               ", restart-strategy.fixed-delay.attempts)");
      return;
    }
    ++record_.restarts;
    auto latest = LatestCheckpointOfThisJob();
    std::string from = latest          ? "checkpoint " + std::to_string(*latest)
                       : options_.from ? *options_.from
                                       : "the beginning (no checkpoint completed yet)";
    LogInfo("worker exited (%s); restarting in %s from %s (restart %d/%d)", how.c_str(),
            Seconds(restart_.delay_ms).c_str(), from.c_str(), record_.restarts, restart_.attempts);
    record_.state = kStateRestarting;
    SaveRecord();
    restart_at_ = NowMillis() + restart_.delay_ms;
  }

  JobOverview Overview() const {
    return JobOverview{record_.job_id,         record_.name,     record_.state,
                       record_.started_millis, record_.restarts, record_.attempt,
                       record_.worker_pid,     record_.web_url,  record_.metrics_url};
  }

  void Publish(int64_t now) {
    if (!endpoints_) return;
    const JobOverview job = Overview();
    endpoints_->Publish(monitor_.Metrics(job, now), monitor_.OverviewJson(job, now));
  }

  // Once a second: the stall alarm, the tables' freshness in job.json, the HTTP endpoints.
  void Monitor() {
    const int64_t now = NowMillis();
    if (now < next_monitor_millis_) return;
    next_monitor_millis_ = now + 1000;
    const bool running = worker_pid_ > 0 && worker_event_ == "running";
    for (const StallChange& c : monitor_.CheckStalls(now, running)) {
      if (!c.stalled) {
        LogInfo("table %s commits again", c.table.c_str());
        continue;
      }
      const std::string what = "table " + c.table + " STALLED: no commit for " +
                               Seconds(c.since_commit_ms) + " while its writers received " +
                               std::to_string(c.uncommitted_records) +
                               " rows it has not committed (floe.stall-alarm.threshold " +
                               Seconds(monitor_.stall_threshold_ms()) + "; last checkpoint " +
                               std::to_string(record_.last_checkpoint) + ")";
      LogWarn("%s", what.c_str());
      if (monitoring_.stall_fails_job && stall_failure_.empty()) {
        stall_failure_ = what + "; failing the job (floe.stall-alarm.action 'fail')";
        RequestCancel();
      }
    }
    std::vector<JobRecord::Table> tables;
    for (const auto& [name, st] : monitor_.tables()) {
      tables.push_back({name, st.last_commit_ms, st.stalled});
    }
    if (tables != record_.tables) {
      record_.tables = std::move(tables);
      SaveRecord();
    }
    Publish(now);
  }

  void Finish(const char* state, const std::string& message_in) {
    std::string message = message_in;
    if (!stall_failure_.empty() && std::string_view(state) == kStateCancelled) {
      // The cancel was the stall alarm's (floe.stall-alarm.action 'fail').
      state = kStateFailed;
      message = stall_failure_;
    }
    final_state_ = state;
    final_message_ = message;
    record_.state = state;
    record_.worker_pid = 0;
    record_.message = message;
    SaveRecord();
    std::string last = record_.last_checkpoint
                           ? ", last checkpoint " + std::to_string(record_.last_checkpoint)
                           : "";
    if (final_state_ == kStateFinished) {
      LogInfo("job %s finished (%s%s)", record_.job_id.c_str(), Seconds(Elapsed()).c_str(),
              last.c_str());
    } else if (final_state_ == kStateStopped) {
      LogInfo("job %s stopped with savepoint %s", record_.job_id.c_str(), message.c_str());
    } else if (final_state_ == kStateCancelled) {
      LogInfo("job %s cancelled%s", record_.job_id.c_str(), last.c_str());
    } else {
      LogInfo("job %s failed: %s", record_.job_id.c_str(), message.c_str());
    }
  }

  CoordinatorOptions options_;
  runtime::RestartStrategy restart_;
  runtime::MonitoringConfig monitoring_;
  RunSpec spec_;
  std::string job_dir_;
  JobRecord record_;
  JobMonitor monitor_;
  const io::FileIO checkpoint_file_io_;  // the job's checkpoints and savepoints
  std::unique_ptr<MonitorEndpoints> endpoints_;
  int64_t next_monitor_millis_ = 0;
  std::string stall_failure_;  // set when the stall alarm fails the job

  ControlEndpoint control_;
  UniqueFd signal_read_, signal_write_, worker_fd_;
  LineBuffer worker_lines_;
  pid_t worker_pid_ = 0;
  std::string worker_event_;    // last lifecycle event of the current worker
  std::string worker_message_;  // its error, or the stop savepoint
  int attempt_ = 0;
  int64_t restart_at_ = 0;
  int interrupts_ = 0;
  bool cancel_requested_ = false;
  int64_t stop_req_ = 0;  // id of the stop-with-savepoint request in flight
  int held_stop_fd_ = -1;
  json held_stop_reply_;
  std::string stop_path_;
  std::string stop_into_;           // the stop's savepoint directory ("" = the default one)
  std::string stop_savepoint_dir_;  // where the stop's savepoint completed (worker event)
  std::map<int64_t, int> pending_;  // request id -> client fd
  std::vector<int> cancel_waiters_;
  int64_t next_req_ = 0;
  std::string final_state_;
  std::string final_message_;
};

// `--from latest`: the job whose newest completed checkpoint to resume, under `root` (the
// configured checkpoint directory, whose subdirectories are job ids). With `job_id` that job's;
// without it the one job `root` holds checkpoints of (several are ambiguous: named, refused).
Result<std::string> JobOfLatestCheckpoint(const io::FileIO& file_io, std::string root,
                                          const std::string& job_id, const std::string& jobs_root) {
  if (root.empty() && !job_id.empty()) {
    root = io::JoinPath(io::JoinPath(jobs_root, job_id), "checkpoints");
  }
  if (root.empty()) {
    return Status::InvalidArgument(
        "--from latest needs execution.checkpointing.dir (or --job-id of a job that kept its "
        "checkpoints in its job directory)");
  }
  auto has_completed = [&](const std::string& id) -> Result<bool> {
    runtime::CheckpointStorage::Options so;
    so.checkpoint_dir = io::JoinPath(root, id);
    so.job_id = id;
    so.file_io = file_io;
    if (!file_io.Exists(so.checkpoint_dir)) return false;
    FLOE_ASSIGN_OR_RAISE(auto storage, runtime::CheckpointStorage::Make(so));
    FLOE_ASSIGN_OR_RAISE(auto latest, storage->LatestCompleted());
    return latest.has_value();
  };
  if (!job_id.empty()) {
    FLOE_ASSIGN_OR_RAISE(bool found, has_completed(job_id));
    if (!found) {
      return Status::NotFound("--from latest: no completed checkpoint in '" +
                              io::JoinPath(root, job_id) + "'");
    }
    return job_id;
  }
  Result<std::vector<std::string>> names = file_io.ListDir(root);
  std::vector<std::string> jobs;
  if (names.ok()) {
    for (const std::string& name : *names) {
      Result<bool> found = has_completed(name);
      if (found.ok() && *found) jobs.push_back(name);
    }
  }
  if (jobs.empty()) {
    return Status::NotFound("--from latest: no completed checkpoint in '" + root +
                            "/<job id>/' (a checkpoint an older floe wrote straight into '" + root +
                            "/chk-N' is restored with --from '" + root + "/chk-N')");
  }
  if (jobs.size() > 1) {
    std::string list;
    for (const std::string& j : jobs) list += (list.empty() ? "" : ", ") + j;
    return Status::InvalidArgument("--from latest: '" + root + "' holds checkpoints of " +
                                   std::to_string(jobs.size()) + " jobs (" + list +
                                   "); name one with --job-id");
  }
  return jobs[0];
}

}  // namespace

Status RunCoordinator(const CoordinatorOptions& in, const JobValidator& validate) {
  CoordinatorOptions options = in;
  if (options.jobs_root.empty()) options.jobs_root = JobsRoot();
  RunSpec spec;
  spec.job_file = io::AbsolutePath(options.job_file);
  spec.config_overrides = options.config_overrides;
  spec.on_stale_restore = options.on_stale_restore;
  FLOE_ASSIGN_OR_RAISE(std::string text, io::ReadFile(spec.job_file));
  spec.variables = options.variables;
  for (const auto& name : ReferencedVariables(text)) {
    if (spec.variables.count(name)) continue;
    if (const char* v = std::getenv(name.c_str())) spec.variables[name] = v;
  }

  // Plan once: every config error surfaces here, before a job directory or worker exists.
  const std::string new_job_id = options.job_id.value_or(RandomHex32());
  FLOE_ASSIGN_OR_RAISE(JobPlanSummary plan,
                       validate(text, new_job_id, spec.variables, spec.config_overrides));
  // Checkpoints go to <execution.checkpointing.dir>/<job id>/chk-N (Flink's layout), so jobs
  // may share one checkpoint directory.
  std::string checkpoint_root = plan.checkpoint_dir;
  std::string savepoint_dir = plan.savepoint_dir;

  // The job id: --job-id, else the one recorded in what we restore from, else a new one.
  std::string job_id;
  if (options.job_id) job_id = *options.job_id;
  if (options.from && *options.from == "latest") {
    FLOE_ASSIGN_OR_RAISE(job_id, JobOfLatestCheckpoint(plan.checkpoint_file_io, checkpoint_root,
                                                       job_id, options.jobs_root));
  } else if (options.from) {
    FLOE_ASSIGN_OR_RAISE(std::string from, io::ResolveLocation(*options.from, "--from"));
    FLOE_ASSIGN_OR_RAISE(auto restored,
                         runtime::CheckpointStorage::LoadPath(plan.checkpoint_file_io, from));
    if (job_id.empty()) job_id = restored.job_id;
    options.from = from;
  }
  if (job_id.empty()) job_id = new_job_id;

  const std::string job_dir = io::JoinPath(options.jobs_root, job_id);
  if (auto existing = ReadJobRecord(job_dir); existing.ok() && !IsTerminalState(existing->state) &&
                                              ProcessAlive(existing->pid) &&
                                              existing->pid != ::getpid()) {
    return Status::AlreadyExists("job " + job_id + " is already running (pid " +
                                 std::to_string(existing->pid) + ")");
  }
  FLOE_RETURN_NOT_OK(io::CreateDirs(job_dir));
  ::chmod(job_dir.c_str(), 0700);
  if (checkpoint_root.empty()) {
    // Without execution.checkpointing.dir the job's checkpoints live in its job directory, so a
    // restarted worker still resumes from the latest one.
    checkpoint_root = io::AbsolutePath(io::JoinPath(job_dir, "checkpoints"));
    spec.config_overrides["execution.checkpointing.dir"] = checkpoint_root;
  }
  const std::string checkpoint_dir = io::JoinPath(checkpoint_root, job_id);
  if (savepoint_dir.empty()) savepoint_dir = io::JoinPath(checkpoint_root, "savepoints");
  {
    std::string path = io::JoinPath(job_dir, "run.json");
    std::string data = EncodeRunSpec(spec);
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (!fd.valid()) return Status::IOError("cannot write " + path + ": " + std::strerror(errno));
    FLOE_RETURN_NOT_OK(WriteAll(fd.get(), data));
  }

  JobRecord record;
  record.job_id = job_id;
  record.name =
      plan.name.empty() ? std::filesystem::path(spec.job_file).filename().string() : plan.name;
  record.job_file = spec.job_file;
  record.pid = ::getpid();
  record.token = RandomHex32();
  record.checkpoint_dir = checkpoint_dir;
  record.savepoint_dir = savepoint_dir;
  record.started_millis = NowMillis();
  Coordinator coordinator(std::move(options), plan, std::move(spec), job_dir, std::move(record));
  return coordinator.Run();
}

}  // namespace floe::process

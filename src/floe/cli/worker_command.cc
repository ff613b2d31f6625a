// `floe worker`: runs the whole job graph of one job attempt in a runtime::LocalJob and talks
// to its coordinator (`floe run`) over an inherited socket: status lines out, commands in.
// One JSON object per line; the protocol is in docs/processes.md.

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "floe/cli/args.h"
#include "floe/cli/supervisor.h"
#include "floe/common/crash_point.h"
#include "floe/common/json.h"
#include "floe/common/log.h"
#include "floe/common/mutex.h"
#include "floe/io/file.h"
#include "floe/runtime/checkpoint_storage.h"
#include "floe/runtime/local_job.h"
#include "floe/runtime/process/control_protocol.h"
#include "floe/runtime/process/coordinator.h"
#include "floe/runtime/process/job_record.h"

namespace floe::cli {
namespace {

using nlohmann::json;

// Status lines to the coordinator. Thread-safe (task threads report checkpoints).
class StatusChannel {
 public:
  explicit StatusChannel(int fd) : fd_(fd) {}
  void Send(const json& event) {
    MutexLock lock(mu_);
    // A write error means the coordinator is gone; the read side notices and exits. DumpJson:
    // an error message may carry bytes that are not UTF-8 (a file name, a record).
    (void)process::WriteAll(fd_, DumpJson(event) + "\n");
  }

 private:
  Mutex mu_;
  int fd_ FLOE_GUARDED_BY(mu_);  // written whole lines at a time
};

// Copies a completed savepoint into `parent` (state files first, `_metadata` last, each written
// durably and exclusively) and removes the original. Returns the new directory.
Result<std::string> MoveSavepoint(const io::FileIO& file_io, const std::string& src,
                                  const std::string& parent) {
  std::string name = std::filesystem::path(src).filename().string();
  std::string dest = io::JoinPath(parent, name);
  FLOE_RETURN_NOT_OK(file_io.CreateDirs(dest));
  FLOE_ASSIGN_OR_RAISE(std::vector<std::string> files, file_io.ListDir(src));
  bool has_metadata = false;
  for (const auto& f : files) {
    if (f == runtime::CheckpointStorage::kMetadataFile) {
      has_metadata = true;
      continue;
    }
    FLOE_ASSIGN_OR_RAISE(std::string data, file_io.ReadFile(io::JoinPath(src, f)));
    FLOE_RETURN_NOT_OK(file_io.WriteFileExclusive(io::JoinPath(dest, f), data));
  }
  if (!has_metadata) return Status::NotFound("savepoint " + src + " has no _metadata");
  FLOE_ASSIGN_OR_RAISE(std::string meta, file_io.ReadFile(io::JoinPath(
                                             src, runtime::CheckpointStorage::kMetadataFile)));
  FLOE_RETURN_NOT_OK(file_io.WriteFileExclusive(
      io::JoinPath(dest, runtime::CheckpointStorage::kMetadataFile), meta));
  FLOE_RETURN_NOT_OK(file_io.SyncDir(parent));
  // The copy is complete; the original goes, `_metadata` first so it stops being a savepoint.
  (void)file_io.RemoveFile(io::JoinPath(src, runtime::CheckpointStorage::kMetadataFile));
  (void)file_io.RemoveTree(src);
  return dest;
}

struct PendingSavepoint {
  int64_t req = 0;
  std::string dir;  // move it here once complete ("" = leave it in the savepoint dir)
  bool stop = false;
  int64_t deadline_millis = 0;
};

class Worker {
 public:
  Worker(int control_fd, std::string job_id)
      : control_fd_(control_fd), status_(control_fd), job_id_(std::move(job_id)) {}
  ~Worker() {
    if (wake_fd_ >= 0) ::close(wake_fd_);
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  Status Run(const process::RunSpec& spec, const std::optional<std::string>& from,
             const JobPlanner& planner) {
    Status st = RunInner(spec, from, planner);
    if (!st.ok()) {
      fatal_ = process::IsFatalWorkerError(st, checkpoint_completed_.load());
      status_.Send({{"event", "failed"}, {"error", st.ToString()}, {"fatal", fatal_}});
    }
    return st;
  }

  // Set by a failed Run: a retry would fail the same way (see process::kWorkerExitFatal).
  bool fatal() const { return fatal_; }

 private:
  Status RunInner(const process::RunSpec& spec, const std::optional<std::string>& from,
                  const JobPlanner& planner) {
    FLOE_ASSIGN_OR_RAISE(std::string text, io::ReadFile(spec.job_file));
    sql::PlanOptions po;
    po.job_id = job_id_;
    po.variables = spec.variables;
    po.config_overrides = spec.config_overrides;
    FLOE_ASSIGN_OR_RAISE(std::unique_ptr<sql::PlannedJob> plan, planner(text, po));
    FLOE_ASSIGN_OR_RAISE(connectors::StaleRestorePolicy policy,
                         ParseStaleRestorePolicy(spec.on_stale_restore));
    const runtime::CheckpointConfig& cc = plan->checkpointing;
    checkpoint_timeout_millis_ = cc.timeout.count();
    checkpoint_file_io_ = cc.file_io;

    // Load the checkpoint to restore here (not only inside LocalJob) because the sinks must
    // reconcile with it before anything starts.
    std::optional<runtime::CompletedCheckpoint> restored;
    if (from && *from == "latest") {
      if (cc.dir.empty()) {
        return Status::InvalidArgument("--from latest needs execution.checkpointing.dir");
      }
      runtime::CheckpointStorage::Options so;
      so.checkpoint_dir = cc.dir;
      so.savepoint_dir = cc.savepoint_dir;
      so.num_retained = cc.num_retained;
      so.job_id = job_id_;
      so.file_io = cc.file_io;
      FLOE_ASSIGN_OR_RAISE(auto storage, runtime::CheckpointStorage::Make(so));
      FLOE_ASSIGN_OR_RAISE(auto latest, storage->LatestCompleted());
      if (!latest) {
        return Status::NotFound("no completed checkpoint in '" + cc.dir + "' to restore from");
      }
      FLOE_ASSIGN_OR_RAISE(restored, storage->Load(*latest));
      if (restored->dir.empty()) restored->dir = storage->CheckpointDir(*latest);
    } else if (from) {
      FLOE_ASSIGN_OR_RAISE(restored, runtime::CheckpointStorage::LoadPath(cc.file_io, *from));
      if (restored->dir.empty()) restored->dir = *from;
    }
    uint64_t min_id = 0;
    bool from_table = false;  // a sink's table holds positions the sources start from
    if (plan->prepare_restore) {
      FLOE_ASSIGN_OR_RAISE(auto plans, plan->prepare_restore(restored, policy, &min_id));
      for (const auto& p : plans) {
        if (!p.message.empty()) status_.Send({{"event", "restore-plan"}, {"message", p.message}});
        from_table = from_table || p.table_ahead;
      }
    }

    runtime::LocalJobOptions o;
    o.job_id = job_id_;
    // Channels count rows, not pieces: a watermark assigner's many small pieces and watermarks
    // queue without a hand-over per few of them (docs/architecture.md, "Tasks and channels").
    o.channel_slot_rows = 1024;
    o.operator_chaining = plan->operator_chaining;
    o.checkpointing = cc;
    if (plan->context.scale_out) o.checkpoint_pins = plan->context.scale_out->pins;
    if (restored) o.restore_from = restored->dir;
    o.min_checkpoint_id = runtime::CheckpointId(min_id);
    o.metrics = metrics_;
    report_metrics_ = plan->monitoring.enabled;
    o.on_checkpoint_complete = [this](const runtime::CompletedCheckpointInfo& info) {
      OnCheckpointComplete(info);
    };
    FLOE_ASSIGN_OR_RAISE(job_, runtime::LocalJob::Make(plan->graph, std::move(o)));
    const uint64_t next_id = job_->checkpoint_floor().value + 1;
    if (restored) {
      status_.Send({{"event", "restored"},
                    {"checkpoint", restored->id.value},
                    {"savepoint", restored->is_savepoint},
                    {"path", restored->dir},
                    {"from_table", from_table},
                    {"next_checkpoint", next_id}});
    } else {
      status_.Send({{"event", "fresh"}, {"from_table", from_table}, {"next_checkpoint", next_id}});
    }
    FLOE_RETURN_NOT_OK(job_->Start());
    status_.Send({{"event", "running"}, {"pid", ::getpid()}});

    std::thread commands([this] { CommandLoop(); });
    Status st = job_->Wait();
    done_ = true;
    const uint64_t one = 1;  // wakes the command thread now, not at its next poll's timeout
    if (wake_fd_ >= 0) (void)!::write(wake_fd_, &one, sizeof(one));
    commands.join();
    next_metrics_millis_ = 0;  // what the last commits left, before the final status line
    ReportMetrics();
    // A stop's savepoint finishes the job: it may have ended before the command thread
    // answered the stop.
    ServeSavepoints();

    runtime::JobState state = job_->state();
    if (!st.ok()) return st.WithContext("job " + job_id_);
    if (!stopped_with_.empty()) {
      status_.Send({{"event", "stopped"}, {"path", stopped_with_}});
    } else if (state == runtime::JobState::kFinished) {
      status_.Send({{"event", "finished"}, {"last_checkpoint", job_->last_completed().value}});
    } else {
      status_.Send({{"event", "cancelled"}});
    }
    return Status::OK();
  }

  void OnCheckpointComplete(const runtime::CompletedCheckpointInfo& info) {
    if (!info.is_savepoint) checkpoint_completed_ = true;
    if (!info.warning.empty()) LogWarn("%s", info.warning.c_str());
    status_.Send({{"event", "checkpoint"},
                  {"id", info.id.value},
                  {"savepoint", info.is_savepoint},
                  {"stop", info.stop},
                  {"final", info.final},
                  {"dir", info.dir},
                  {"duration_ms", info.duration_millis},
                  {"size_bytes", info.size_bytes},
                  {"alignment_us", info.alignment_micros},
                  {"sync_us", info.sync_micros},
                  {"sync_task", info.sync_task},
                  {"async_us", info.async_micros}});
    // Test-only: the stop savepoint is complete and reported, its side effects not yet
    // committed (LocalJob delivers its completion when this returns).
    if (info.stop) CrashPoint("worker-stop-savepoint-completed");
    if (info.is_savepoint) {
      MutexLock lock(mu_);
      completed_savepoints_.push_back(info);
    }
    // Test-only: the process layer's own crash point (see docs/processes.md).
    CrashPoint("worker-checkpoint-completed");
  }

  void Reply(int64_t req, bool ok, const std::string& key, const std::string& value) {
    status_.Send({{"event", "reply"}, {"req", req}, {"ok", ok}, {key, value}});
  }

  void HandleCommand(const std::string& line) {
    auto cmd = process::ParseWorkerCommand(line);
    if (!cmd.ok()) {
      LogWarn("worker: %s; ignored", cmd.status().ToString().c_str());
      return;
    }
    const int64_t req = cmd->req;
    const std::string& verb = cmd->cmd;
    if (verb == "cancel") {
      job_->Cancel();
      Reply(req, true, "state", "cancelling");
      return;
    }
    if (verb != "savepoint" && verb != "stop") {
      Reply(req, false, "error", "unknown command '" + verb + "'");
      return;
    }
    // Only a stop's savepoint commits side effects; a plain one leaves them to the next
    // checkpoint (see LocalJob::TriggerCheckpoint).
    auto id = verb == "stop" ? job_->TriggerStopWithSavepoint()
                             : job_->TriggerCheckpoint(/*is_savepoint=*/true);
    if (!id.ok()) {
      Reply(req, false, "error", "savepoint could not be triggered: " + id.status().ToString());
      return;
    }
    MutexLock lock(mu_);
    pending_[id->value] = PendingSavepoint{
        req, cmd->dir, verb == "stop", process::NowMillis() + checkpoint_timeout_millis_ + 5000};
  }

  // Answers completed (or timed out) savepoints; runs on the command thread so copying a
  // savepoint never blocks a task thread.
  void ServeSavepoints() {
    std::deque<runtime::CompletedCheckpointInfo> done;
    {
      MutexLock lock(mu_);
      done.swap(completed_savepoints_);
    }
    for (const auto& info : done) {
      PendingSavepoint p;
      {
        MutexLock lock(mu_);
        auto it = pending_.find(info.id.value);
        if (it == pending_.end()) {
          // Answered already (timed out). A stop's savepoint commits its side effects and
          // finishes the tasks all the same, so the job ends there.
          if (info.stop) StoppedAt(info.dir);
          continue;
        }
        p = it->second;
        pending_.erase(it);
      }
      std::string path = info.dir;
      if (!p.dir.empty()) {
        auto moved = MoveSavepoint(checkpoint_file_io_, info.dir, p.dir);
        if (!moved.ok() && !info.stop) {
          Reply(p.req, false, "error",
                "savepoint " + info.id.ToString() + " completed at " + info.dir +
                    " but could not be moved: " + moved.status().ToString());
          continue;
        }
        if (!moved.ok()) {
          // A stop still stops (see above), at the savepoint where it completed: its
          // `_metadata` is removed only after a complete copy.
          LogWarn("worker: stop savepoint %s stays at %s: %s", info.id.ToString().c_str(),
                  info.dir.c_str(), moved.status().ToString().c_str());
        } else {
          path = *moved;
        }
      }
      if (p.stop || info.stop) StoppedAt(path);
      Reply(p.req, true, "path", path);
    }
    const int64_t now = process::NowMillis();
    if (stop_deadline_millis_ > 0 && now > stop_deadline_millis_ && !done_) {
      // The tasks were told to commit the stop's savepoint and finish but have not ended in
      // time (a task stuck in a source or sink call): cancel what is left. Whatever they
      // committed, they committed up to the savepoint only (no later checkpoint is triggered).
      LogWarn("worker: tasks did not finish %lld ms after the stop savepoint, cancelling",
              static_cast<long long>(checkpoint_timeout_millis_));
      stop_deadline_millis_ = 0;
      job_->Cancel();
    }
    MutexLock lock(mu_);
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (now > it->second.deadline_millis) {
        Reply(it->second.req, false, "error",
              "savepoint " + std::to_string(it->first) + " did not complete in time");
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
  }

  // The stop's savepoint completed: LocalJob delivers it to the tasks as final, they commit it
  // and finish. No Cancel here -- it would race that commit (a cancelled task drops queued
  // commands and its sink's Close aborts the savepoint's transaction); only a bounded wait.
  void StoppedAt(const std::string& path) {
    stopped_with_ = path;
    if (stop_deadline_millis_ == 0)
      stop_deadline_millis_ = process::NowMillis() + checkpoint_timeout_millis_;
  }

  void CommandLoop() {
    process::LineBuffer lines(process::kMaxWorkerLineBytes);
    while (!done_) {
      pollfd p[2] = {{control_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
      int r = ::poll(p, wake_fd_ >= 0 ? 2 : 1, 50);
      if (r > 0 && p[0].revents != 0) {
        auto more = lines.ReadSome(control_fd_);
        if (!more.ok() || !*more) {
          // The coordinator is gone (PR_SET_PDEATHSIG normally got here first). Die like a
          // killed worker: no cancellation, checkpoints stay for `floe run --from latest`.
          LogError("worker: coordinator gone, exiting");
          std::_Exit(1);
        }
        while (true) {
          auto line = lines.NextLine();
          if (!line.ok()) {
            LogError("worker: command from the coordinator refused (%s), exiting",
                     line.status().ToString().c_str());
            std::_Exit(1);
          }
          if (!*line) break;
          HandleCommand(**line);
        }
      }
      ServeSavepoints();
      ReportMetrics();
    }
  }

  // Once a second: every task's and operator's metrics to the coordinator, which serves them.
  void ReportMetrics() {
    const int64_t now = process::NowMillis();
    if (!report_metrics_ || now < next_metrics_millis_) return;
    next_metrics_millis_ = now + kMetricsReportMillis;
    status_.Send({{"event", "metrics"},
                  {"at_ms", now},
                  {"samples", process::EncodeMetricSamples(metrics_->Snapshot())}});
  }

  static constexpr int64_t kMetricsReportMillis = 1000;
  int control_fd_;
  // Written when the job ended, so the command thread's poll returns at once (-1: none, and the
  // thread sees the end within its poll's 50 ms).
  int wake_fd_ = ::eventfd(0, EFD_CLOEXEC);
  StatusChannel status_;
  std::shared_ptr<runtime::MetricRegistry> metrics_ = std::make_shared<runtime::MetricRegistry>();
  int64_t next_metrics_millis_ = 0;
  bool report_metrics_ = true;  // floe.monitoring.enabled
  std::string job_id_;
  std::unique_ptr<runtime::LocalJob> job_;
  std::atomic<bool> done_{false};
  std::atomic<bool> checkpoint_completed_{false};  // by this attempt
  bool fatal_ = false;
  int64_t checkpoint_timeout_millis_ = 600000;
  io::FileIO checkpoint_file_io_;  // the job's checkpoints and savepoints (set by Run)
  Mutex mu_;
  std::map<uint64_t, PendingSavepoint> pending_ FLOE_GUARDED_BY(mu_);
  std::deque<runtime::CompletedCheckpointInfo> completed_savepoints_ FLOE_GUARDED_BY(mu_);
  std::string stopped_with_;          // command thread (main thread after it ended)
  int64_t stop_deadline_millis_ = 0;  // when to cancel tasks that did not finish after a stop
};

}  // namespace

Status RunWorkerCommand(const std::vector<std::string>& argv, const JobPlanner& planner) {
  ::signal(SIGPIPE, SIG_IGN);
  FLOE_ASSIGN_OR_RAISE(
      Args args,
      Args::Parse(argv, {{"job-file", "job-id", "attempt", "from", "spec", "control-fd"}, {}}));
  auto need = [&](const char* name) -> Result<std::string> {
    auto v = args.Get(name);
    if (!v || v->empty()) return Status::InvalidArgument(std::string("--") + name + " is required");
    return *v;
  };
  FLOE_ASSIGN_OR_RAISE(std::string spec_file, need("spec"));
  FLOE_ASSIGN_OR_RAISE(std::string job_id, need("job-id"));
  FLOE_ASSIGN_OR_RAISE(std::optional<int64_t> fd, args.GetInt("control-fd"));
  if (!fd) return Status::InvalidArgument("--control-fd is required");
  FLOE_ASSIGN_OR_RAISE(std::string spec_text, io::ReadFile(spec_file));
  FLOE_ASSIGN_OR_RAISE(process::RunSpec spec, process::DecodeRunSpec(spec_text));
  if (auto f = args.Get("job-file")) spec.job_file = *f;
  Status st;
  bool fatal = false;
  {
    Worker worker(static_cast<int>(*fd), job_id);
    st = worker.Run(spec, args.Get("from"), planner);
    fatal = worker.fatal();
  }
  if (fatal) {
    // A distinct exit status: the coordinator does not restart this worker.
    LogError("worker: %s", st.ToString().c_str());
    std::exit(process::kWorkerExitFatal);
  }
  return st;
}

}  // namespace floe::cli

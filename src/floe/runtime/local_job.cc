#include "floe/runtime/local_job.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <random>
#include <set>
#include <thread>

#include "floe/common/crash_point.h"
#include "floe/common/mutex.h"
#include "floe/runtime/keyed_state.h"
#include "floe/runtime/state.h"
#include "floe/runtime/task_state.h"

namespace floe::runtime {

namespace {

// The shared-state store of a job restored from another job's incremental checkpoint: uploads go
// to this job's `shared/`, downloads come from the checkpoint's, and every file downloaded is
// also put into this job's `shared/` under its name, so a backend that adopts the restored
// files (lists them again in its next checkpoint) lists files this job's storage holds.
class RestoredSharedStateStore final : public SharedStateStore {
 public:
  RestoredSharedStateStore(SharedStateStore* own, io::FileIO file_io, std::string restored_dir)
      : own_(own), restored_(std::move(file_io), std::move(restored_dir)) {}

  Result<SharedStateFile> Upload(const std::string& local_path, const std::string& name) override {
    return own_->Upload(local_path, name);
  }
  Status Download(const SharedStateFile& file, const std::string& local_path) const override {
    FLOE_RETURN_NOT_OK(restored_.Download(file, local_path));
    return own_->Upload(local_path, file.name).status();
  }

 private:
  SharedStateStore* own_;
  CheckpointSharedStateStore restored_;
};

}  // namespace

struct LocalJob::Impl {
  LocalJobOptions options;
  std::unique_ptr<CheckpointStorage> storage;
  // Where incremental keyed-state checkpoints put their shared files; null without them.
  SharedStateStore* shared_state = nullptr;
  // Set when restoring an incremental checkpoint from a `shared/` other than shared_state's:
  // where its files are read (see RestoredSharedStateStore).
  std::unique_ptr<SharedStateStore> restored_shared_state;
  std::string shared_state_dir() const { return storage->shared_state()->dir(); }
  // Not thread-safe itself: used with `mu` held.
  std::unique_ptr<CheckpointCoordinator> coordinator FLOE_PT_GUARDED_BY(mu);
  std::unique_ptr<LocalExecutor> executor;
  CheckpointId restored_from;
  CheckpointId checkpoint_floor;  // ids of this run start above it

  mutable Mutex mu;
  std::condition_variable timer_cv;
  bool stop_timer FLOE_GUARDED_BY(mu) = false;
  Status job_error FLOE_GUARDED_BY(mu);  // from the coordinator side
  std::thread timer;                     // started by Start, joined by Wait
  Mutex wait_mu;
  bool waited FLOE_GUARDED_BY(wait_mu) = false;
  Status wait_status FLOE_GUARDED_BY(wait_mu);
  // Savepoints triggered by TriggerStopWithSavepoint: the only savepoints whose completion is
  // delivered to the tasks.
  std::set<CheckpointId> stop_savepoints FLOE_GUARDED_BY(mu);
  // The stop-with-savepoint in flight: while set, no checkpoint is triggered (periodic or the
  // end-of-input final one), so nothing after the savepoint is ever committed (Flink's
  // stop-with-savepoint). Cleared if the savepoint fails; the job then runs on.
  std::optional<CheckpointId> stopping FLOE_GUARDED_BY(mu);
  bool stop_completed FLOE_GUARDED_BY(mu) = false;
  bool final_deferred FLOE_GUARDED_BY(mu) = false;  // end of input came while stopping

  // The asynchronous part of checkpoints (Flink's async phase): acks wait here until a writer
  // thread has serialized their keyed state and written their files, so a task thread never
  // waits for storage. Two writers: one large keyed state does not hold back every other ack.
  static constexpr int kStateWriters = 2;
  Mutex writer_mu;
  std::condition_variable writer_cv;
  std::deque<TaskAck> writer_queue FLOE_GUARDED_BY(writer_mu);
  bool writers_stop FLOE_GUARDED_BY(writer_mu) = false;
  std::vector<std::thread> writers;

  void FailLocked(const Status& st) FLOE_REQUIRES(mu) {
    if (job_error.ok()) job_error = st;
    if (executor) executor->Cancel();
  }

  Status TriggerLocked(bool savepoint, CheckpointId* id) FLOE_REQUIRES(mu) {
    FLOE_ASSIGN_OR_RAISE(CheckpointTrigger t, coordinator->TriggerNow(savepoint));
    if (id) *id = t.id;
    return executor->TriggerCheckpoint(t.id, savepoint);
  }

  // Which completions reach the operators (Flink 1.15+ semantics). A periodic (or final)
  // checkpoint: yes, it commits everything staged up to its id. An intermediate savepoint: no.
  // Failover restores from the newest periodic checkpoint only (CheckpointStorage::
  // LatestCompleted), so a savepoint's side effects committed here would be replayed from the
  // checkpoint before it and land twice; they stay staged and the next completed checkpoint
  // commits them (it subsumes the savepoint's id). A stop-with-savepoint's savepoint: yes, it
  // is the last snapshot before the job goes down, and the process layer treats it as the
  // job's end point (see docs/processes.md).
  bool DeliverLocked(const CompletedCheckpointInfo& info) FLOE_REQUIRES(mu) {
    if (!info.is_savepoint) return true;
    return stop_savepoints.erase(info.id) > 0;
  }

  // The stop's savepoint was aborted (declined, timed out): the job runs on as before.
  void CheckStopAbortedLocked() FLOE_REQUIRES(mu) {
    if (!stopping || stop_completed || coordinator->LocationOf(*stopping)) return;
    stop_savepoints.erase(*stopping);
    stopping.reset();
    if (final_deferred) {
      final_deferred = false;
      Status st = TriggerLocked(false, nullptr);
      if (!st.ok()) FailLocked(st.WithContext("final checkpoint"));
    }
  }

  void EnqueueAck(TaskAck ack) {
    {
      MutexLock lock(writer_mu);
      writer_queue.push_back(std::move(ack));
    }
    writer_cv.notify_one();
  }

  void WriterLoop() {
    while (true) {
      TaskAck ack;
      {
        MutexLock lock(writer_mu);
        while (!writers_stop && writer_queue.empty()) writer_cv.wait(lock.native());
        if (writers_stop) return;  // the tasks ended: pending checkpoints cannot complete
        ack = std::move(writer_queue.front());
        writer_queue.pop_front();
      }
      OnAck(std::move(ack));
    }
  }

  void StopWriters() {
    {
      MutexLock lock(writer_mu);
      writers_stop = true;
    }
    writer_cv.notify_all();
    for (std::thread& w : writers) {
      if (w.joinable()) w.join();
    }
  }

  // A task's state file: its operator's blob, with the keyed state view appended for keyed
  // tasks (task_state.h). Incremental keyed state only for checkpoints: savepoints are
  // canonical and self-contained.
  Result<TaskStateHandle> WriteState(TaskAck& ack, const CheckpointLocation& loc) {
    std::string blob;
    std::vector<SharedStateFile> shared;
    if (ack.keyed) {
      StateWriter out;
      BeginKeyedTaskState(ack.state, ack.keyed->key_groups(), out);
      const bool incremental = !loc.is_savepoint && shared_state != nullptr;
      FLOE_RETURN_NOT_OK(ack.keyed->WriteTo(out, incremental ? &shared : nullptr));
      ack.keyed.reset();  // what it held (a copy-on-write view, a RocksDB snapshot) goes now
      blob = out.Finish();
    } else {
      blob = std::move(ack.state);
    }
    if (!storage) return TaskStateHandle{ack.task, "", blob.size(), Crc32(blob)};
    return CheckpointStorage::WriteTaskState(storage->options().file_io, loc, ack.task, blob,
                                             std::move(shared));
  }

  void OnAck(TaskAck ack) {
    std::optional<CheckpointLocation> loc;
    {
      MutexLock lock(mu);
      loc = coordinator->LocationOf(ack.checkpoint);
    }
    if (!loc) return;  // aborted meanwhile
    const auto async_start = std::chrono::steady_clock::now();
    const bool keyed = ack.keyed != nullptr;
    Result<TaskStateHandle> handle = WriteState(ack, *loc);
    // Test-only: a keyed task's state (and an incremental checkpoint's shared files) is written,
    // the checkpoint not yet complete.
    if (keyed && handle.ok()) CrashPoint("keyed-state-written");
    const TaskCheckpointTimes times{ack.alignment_micros, ack.sync_micros,
                                    std::chrono::duration_cast<std::chrono::microseconds>(
                                        std::chrono::steady_clock::now() - async_start)
                                        .count()};
    std::optional<CompletedCheckpointInfo> done;
    {
      MutexLock lock(mu);
      if (!handle.ok()) {
        Status st = coordinator->Decline(ack.checkpoint, handle.status());
        if (!st.ok()) FailLocked(st);
        return;
      }
      auto r =
          coordinator->Acknowledge(ack.checkpoint, std::move(*handle), ack.end_of_input, times);
      if (!r.ok()) {
        FailLocked(r.status());
        return;
      }
      done = std::move(*r);
      if (done && DeliverLocked(*done)) {
        if (done->is_savepoint) {
          done->stop = true;  // delivered below, once the owner knows it exists
          stop_completed = true;
        } else {
          (void)executor->NotifyCheckpointComplete(done->id, done->final);
        }
      }
    }
    if (done && options.on_checkpoint_complete) options.on_checkpoint_complete(*done);
    if (done && done->stop) {
      // After the callback: `floe worker` reports the stop savepoint to `floe run` before any
      // of its side effects is committed, so a worker dying in between is never restarted from
      // an older checkpoint over committed data. Delivered as final: every task commits the
      // savepoint and finishes (records after its barrier are abandoned by Close and replayed
      // by a run resumed from it); the job then ends kFinished without a Cancel racing the
      // commit.
      MutexLock lock(mu);
      (void)executor->NotifyCheckpointComplete(done->id, /*final=*/true);
    }
  }

  void OnEndOfInput() {
    MutexLock lock(mu);
    if (stopping) {
      // The stop's savepoint finishes the tasks (or, if it fails, CheckStopAbortedLocked
      // triggers this final checkpoint then).
      final_deferred = true;
      return;
    }
    Status st = TriggerLocked(false, nullptr);
    if (!st.ok()) FailLocked(st.WithContext("final checkpoint"));
  }

  void TimerLoop() {
    MutexLock lock(mu);
    while (!stop_timer) {
      if (executor->state() != JobState::kRunning) {
        timer_cv.wait_for(lock.native(), std::chrono::milliseconds(100));
        continue;
      }
      Status st = coordinator->CheckTimeouts();
      CheckStopAbortedLocked();
      if (st.ok() && !stopping) {
        auto t = coordinator->MaybeTriggerPeriodic();
        if (!t.ok()) {
          st = t.status();
        } else if (*t) {
          st = executor->TriggerCheckpoint((*t)->id, false);
          if (st.code() == StatusCode::kUnavailable) st = Status::OK();  // job is ending
        }
      }
      if (!st.ok()) FailLocked(st);
      int64_t now = options.clock->NowMillis();
      int64_t wait = 100;
      if (auto next = coordinator->NextWakeupMillis()) {
        wait = std::clamp<int64_t>(*next - now, 1, 100);
      }
      timer_cv.wait_for(lock.native(), std::chrono::milliseconds(wait));
    }
  }
};

LocalJob::LocalJob(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

LocalJob::~LocalJob() {
  Cancel();
  (void)Wait();
}

Result<std::unique_ptr<LocalJob>> LocalJob::Make(const JobGraph& graph, LocalJobOptions options) {
  auto impl = std::make_unique<Impl>();
  FLOE_RETURN_NOT_OK(options.checkpointing.Validate());
  if (options.clock == nullptr) options.clock = SteadyClock::Get();
  if (options.job_id.empty()) {
    std::mt19937_64 rng(std::random_device{}());
    char buf[33];
    std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(rng()),
                  static_cast<unsigned long long>(rng()));
    options.job_id = buf;
  }
  const CheckpointConfig& cc = options.checkpointing;
  CheckpointId floor = options.min_checkpoint_id;
  if (!cc.dir.empty()) {
    CheckpointStorage::Options so;
    so.checkpoint_dir = cc.dir;
    so.savepoint_dir = cc.savepoint_dir;
    so.num_retained = cc.num_retained;
    so.job_id = options.job_id;
    so.file_io = cc.file_io;
    so.pins = options.checkpoint_pins;
    FLOE_ASSIGN_OR_RAISE(impl->storage, CheckpointStorage::Make(std::move(so)));
    FLOE_ASSIGN_OR_RAISE(CheckpointId on_disk, impl->storage->HighestIdOnDisk());
    floor = std::max(floor, on_disk);
  }
  ExecutorOptions eo;
  if (cc.incremental && impl->storage) {
    impl->shared_state = impl->storage->shared_state();
    eo.shared_state = impl->shared_state;
    eo.incremental = true;
  }
  // A claim taken over names the state its last holder committed (a keyed job scaled out by
  // Kafka partition): on this job's checkpoint storage, or another instance's beside it.
  eo.read_claim_state = [file_io = cc.file_io](const std::string& pointer) {
    return ReadClaimState(file_io, pointer);
  };
  eo.mode = cc.mode;
  eo.channel_capacity = options.channel_capacity;
  eo.channel_slot_rows = options.channel_slot_rows;
  eo.operator_chaining = options.operator_chaining;
  eo.idle_backoff = options.idle_backoff;
  eo.final_checkpoint = true;
  eo.allow_non_restored_state = cc.ignore_unclaimed_state;
  if (!options.metrics) options.metrics = std::make_shared<MetricRegistry>();
  eo.metrics = options.metrics;
  if (options.restore_from) {
    CompletedCheckpoint restored;
    if (*options.restore_from == "latest") {
      if (!impl->storage) {
        return Status::InvalidArgument("restore from 'latest' needs execution.checkpointing.dir");
      }
      FLOE_ASSIGN_OR_RAISE(auto latest, impl->storage->LatestCompleted());
      if (!latest) {
        return Status::NotFound("no completed checkpoint in '" +
                                impl->storage->options().checkpoint_dir + "' to restore from");
      }
      FLOE_ASSIGN_OR_RAISE(restored, impl->storage->Load(*latest));
    } else {
      FLOE_ASSIGN_OR_RAISE(restored,
                           CheckpointStorage::LoadPath(cc.file_io, *options.restore_from));
    }
    impl->restored_from = restored.id;
    floor = std::max(floor, restored.id);
    // An incremental checkpoint's shared files are read from its own `shared/`.
    if (!restored.shared_dir.empty()) {
      if (!impl->shared_state) {
        impl->restored_shared_state =
            std::make_unique<CheckpointSharedStateStore>(cc.file_io, restored.shared_dir);
        eo.shared_state = impl->restored_shared_state.get();
      } else if (restored.shared_dir != impl->shared_state_dir()) {
        impl->restored_shared_state = std::make_unique<RestoredSharedStateStore>(
            impl->shared_state, cc.file_io, restored.shared_dir);
        eo.shared_state = impl->restored_shared_state.get();
      }
    }
    eo.restore = std::move(restored);
  }
  Impl* raw = impl.get();
  eo.on_ack = [raw](TaskAck ack) { raw->EnqueueAck(std::move(ack)); };
  eo.on_end_of_input = [raw] { raw->OnEndOfInput(); };
  FLOE_ASSIGN_OR_RAISE(impl->executor, LocalExecutor::Make(graph, std::move(eo)));

  CheckpointCoordinator::Options co;
  co.config = cc;
  co.tasks = impl->executor->task_names();
  co.floor = floor;
  impl->checkpoint_floor = floor;
  co.clock = options.clock;
  co.storage = impl->storage.get();
  co.failed_checkpoints =
      &options.metrics->Get("jobmanager_job_numberOfFailedCheckpoints", {}, MetricType::kCounter);
  FLOE_ASSIGN_OR_RAISE(impl->coordinator, CheckpointCoordinator::Make(std::move(co)));
  impl->options = std::move(options);
  return std::unique_ptr<LocalJob>(new LocalJob(std::move(impl)));
}

Status LocalJob::Start() {
  MutexLock lock(impl_->mu);
  FLOE_RETURN_NOT_OK(impl_->executor->Start());
  Impl* job = impl_.get();
  for (int i = 0; i < Impl::kStateWriters; ++i) {
    impl_->writers.emplace_back([job] { job->WriterLoop(); });
  }
  if (impl_->options.timer_thread) {
    Impl* raw = impl_.get();
    impl_->timer = std::thread([raw] { raw->TimerLoop(); });
  }
  return Status::OK();
}

Result<CheckpointId> LocalJob::TriggerCheckpoint(bool is_savepoint) {
  MutexLock lock(impl_->mu);
  impl_->CheckStopAbortedLocked();
  if (impl_->stopping && !is_savepoint) {
    // It would commit past the stop's savepoint.
    return Status::Unavailable("no checkpoint while stopping with savepoint " +
                               impl_->stopping->ToString());
  }
  CheckpointId id;
  FLOE_RETURN_NOT_OK(impl_->TriggerLocked(is_savepoint, &id));
  return id;
}

Result<CheckpointId> LocalJob::TriggerStopWithSavepoint() {
  MutexLock lock(impl_->mu);
  impl_->CheckStopAbortedLocked();
  if (impl_->stopping) {
    return Status::Conflict("a stop with savepoint " + impl_->stopping->ToString() +
                            " is already in progress");
  }
  CheckpointId id;
  FLOE_RETURN_NOT_OK(impl_->TriggerLocked(/*savepoint=*/true, &id));
  impl_->stop_savepoints.insert(id);
  impl_->stopping = id;
  return id;
}

void LocalJob::Cancel() {
  MutexLock lock(impl_->mu);
  impl_->executor->Cancel();
}

Status LocalJob::Wait() {
  MutexLock wait_lock(impl_->wait_mu);
  if (impl_->waited) return impl_->wait_status;
  Status st = impl_->executor->Wait();
  impl_->StopWriters();
  {
    MutexLock lock(impl_->mu);
    impl_->stop_timer = true;
    impl_->timer_cv.notify_all();
  }
  if (impl_->timer.joinable()) impl_->timer.join();
  if (impl_->executor->state() != JobState::kFinished) {
    // Every task thread ended, so no checkpoint completes any more: what the operators staged
    // above the last one every task acknowledged can never be committed.
    CheckpointId last;
    {
      MutexLock lock(impl_->mu);
      last = std::max(impl_->restored_from, impl_->coordinator->last_fully_acknowledged());
    }
    impl_->executor->Abandon(last);
  }
  MutexLock lock(impl_->mu);
  if (!impl_->job_error.ok()) st = impl_->job_error;
  if (st.ok() && impl_->executor->state() == JobState::kCancelled) {
    st = impl_->coordinator->OnJobCancelled();
  }
  impl_->waited = true;
  impl_->wait_status = st;
  return st;
}

JobState LocalJob::state() const {
  MutexLock lock(impl_->mu);
  JobState s = impl_->executor->state();
  if (s == JobState::kCancelled && !impl_->job_error.ok()) return JobState::kFailed;
  return s;
}

CheckpointId LocalJob::restored_from() const { return impl_->restored_from; }

CheckpointId LocalJob::checkpoint_floor() const { return impl_->checkpoint_floor; }

CheckpointId LocalJob::last_completed() const {
  MutexLock lock(impl_->mu);
  return impl_->coordinator->last_completed();
}

const std::string& LocalJob::job_id() const { return impl_->options.job_id; }

}  // namespace floe::runtime

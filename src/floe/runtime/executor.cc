#include "floe/runtime/executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <map>
#include <set>
#include <thread>

#include "floe/common/log.h"
#include "floe/common/mutex.h"
#include "floe/runtime/channel.h"
#include "floe/runtime/keyed_state.h"
#include "floe/runtime/partitioner.h"
#include "floe/runtime/task_state.h"

namespace floe::runtime {

std::string_view JobStateName(JobState state) {
  switch (state) {
    case JobState::kCreated:
      return "CREATED";
    case JobState::kRunning:
      return "RUNNING";
    case JobState::kFinished:
      return "FINISHED";
    case JobState::kCancelled:
      return "CANCELED";
    case JobState::kFailed:
      return "FAILED";
  }
  return "?";
}

struct ExecutorTask;

namespace {

class OperatorRunner;

// A task's synchronous checkpoint part above this is logged with its parts (info).
constexpr int64_t kSlowSyncMicros = 100'000;

struct OutputTarget {
  InputGate* gate = nullptr;
  size_t channel = 0;
  // Set when the consumer is chained to this producer: elements are handed to its runner on
  // this thread instead of queued in `gate`.
  ExecutorTask* chained = nullptr;
};

// One outgoing edge of a subtask. For FORWARD `targets` holds the single peer; otherwise one
// entry per target subtask (control events go to all of them, data per the partitioning).
struct Output {
  int port = 0;  // Edge::output
  Partitioning partitioning;
  std::vector<OutputTarget> targets;
  uint32_t next_rr = 0;
  std::shared_ptr<const BatchSchema> key_schema;  // schema key_indexes were resolved against
  std::vector<int> key_indexes;
};

}  // namespace

struct ExecutorTask {
  TaskInfo info;
  std::string name;
  int num_inputs = 0;
  std::unique_ptr<Operator> op;
  std::unique_ptr<SourceOperator> source;
  // Keyed vertices only: the options the backend is made with, and the backend (made on the
  // task's thread before Open, destroyed after Close).
  std::shared_ptr<const KeyedStateOptions> keyed_options;
  std::unique_ptr<KeyedStateBackend> keyed;
  std::unique_ptr<InputGate> gate;
  std::vector<int> channel_input;  // gate channel -> logical input (edge) index
  std::vector<Output> outputs;
  // Operator chaining (ExecutorOptions::operator_chaining): the task whose thread runs this one
  // (null: it has its own), the consumers this one runs on its thread, and, while the chain
  // runs, this task's runner.
  ExecutorTask* chained_into = nullptr;
  std::vector<ExecutorTask*> chained;
  OperatorRunner* runner = nullptr;
  std::thread thread;
  OperatorContext ctx;  // valid from Open to Close (operators may keep it)
  bool opened = false;  // set on the task's thread; read after it was joined
  // Task-scope metrics (Flink's names), owned by the registry.
  Metric* records_in = nullptr;
  Metric* records_out = nullptr;
  Metric* back_pressured_micros = nullptr;  // time blocked on full output channels, summed
  Metric* alignment_nanos = nullptr;        // of the last checkpoint
  Metric* input_watermark_millis = nullptr;
  Metric* output_watermark_millis = nullptr;
  std::unique_ptr<MetricGroup> metrics;  // operator scope
};

struct LocalExecutor::Impl {
  ExecutorOptions options;
  uint32_t max_parallelism = 128;
  std::vector<std::unique_ptr<ExecutorTask>> tasks;
  std::vector<std::string> names;
  std::atomic<bool> cancel_flag{false};

  mutable Mutex mu;
  bool started FLOE_GUARDED_BY(mu) = false;
  bool user_cancelled FLOE_GUARDED_BY(mu) = false;
  size_t done_tasks FLOE_GUARDED_BY(mu) = 0;
  size_t ended_tasks FLOE_GUARDED_BY(mu) = 0;
  Status first_error FLOE_GUARDED_BY(mu);
  CheckpointId last_triggered FLOE_GUARDED_BY(mu);
  // Held across the joins in Wait, where `mu` is not (a finishing task thread takes `mu`): a
  // second Wait or an Abandon waits for them.
  Mutex join_mu;
  bool joined FLOE_GUARDED_BY(join_mu) = false;
  bool abandoned FLOE_GUARDED_BY(join_mu) = false;

  bool RunningLocked() const FLOE_REQUIRES(mu) {
    return started && done_tasks < tasks.size() && !cancel_flag.load();
  }

  void CancelAll() {
    cancel_flag.store(true);
    for (auto& t : tasks) t->gate->Cancel();
  }

  void Ack(TaskAck ack) {
    if (options.on_ack) options.on_ack(std::move(ack));
  }

  void ReportEnded() {
    bool all = false;
    {
      MutexLock lock(mu);
      all = ++ended_tasks == tasks.size();
    }
    if (all && options.on_end_of_input) options.on_end_of_input();
  }

  void TaskDone(const Status& st) {
    bool fail = false;
    {
      MutexLock lock(mu);
      // Errors after cancellation started are its echo, not a cause.
      if (!st.ok() && first_error.ok() && !cancel_flag.load()) {
        first_error = st;
        fail = true;
      }
      ++done_tasks;
    }
    if (fail) CancelAll();
  }

  // Runs task `t` and the tasks chained to it, on this thread.
  void RunTask(ExecutorTask& t);
  // Makes the keyed state, opens the operator and restores it.
  Status OpenTask(ExecutorTask& t);
  // Restores a subtask from options.restore, redistributing keyed state on a rescale.
  Status RestoreTask(ExecutorTask& t);
};

namespace {

int64_t SteadyMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Watermarks are reported in milliseconds like Flink's; the end-of-input one is not reported.
void SetWatermarkMetric(Metric* m, int64_t micros) {
  if (micros != INT64_MAX) m->Set(micros / 1000);
}

class TaskCollector final : public Collector {
 public:
  TaskCollector(ExecutorTask& task, LocalExecutor::Impl& impl) : task_(task), impl_(impl) {}

  Status Emit(RecordBatch batch) override {
    if (batch.num_rows() == 0) return Status::OK();
    task_.records_out->Add(static_cast<int64_t>(batch.num_rows()));
    return EmitTo(0, std::move(batch));
  }

  Status EmitSide(int port, RecordBatch batch) override {
    if (port < 1) return Status::Internal("side output " + std::to_string(port) + " (from 1)");
    if (batch.num_rows() == 0) return Status::OK();
    return EmitTo(port, std::move(batch));
  }

  // Sends `batch` down the edges of output `port`.
  Status EmitTo(int port, RecordBatch batch) {
    FLOE_RETURN_NOT_OK(SetIdle(false));  // records make an idle output active again
    size_t n = 0;  // the port's last output takes the batch itself, the others copies
    for (size_t k = 0; k < task_.outputs.size(); ++k) {
      if (task_.outputs[k].port == port) n = k + 1;
    }
    for (size_t k = 0; k < n; ++k) {
      Output& o = task_.outputs[k];
      if (o.port != port) continue;
      const bool last = k + 1 == n;
      switch (o.partitioning.kind) {
        case PartitionKind::kForward:
        case PartitionKind::kGlobal:
          FLOE_RETURN_NOT_OK(Push(o.targets[0], last ? std::move(batch) : RecordBatch(batch)));
          break;
        case PartitionKind::kRebalance: {
          const OutputTarget& t = o.targets[o.next_rr++ % o.targets.size()];
          FLOE_RETURN_NOT_OK(Push(t, last ? std::move(batch) : RecordBatch(batch)));
          break;
        }
        case PartitionKind::kHash: {
          if (o.key_schema != batch.schema()) {
            if (!batch.schema()) return Status::Internal("keyBy on a batch without schema");
            FLOE_ASSIGN_OR_RAISE(o.key_indexes,
                                 ResolveKeyColumns(*batch.schema(), o.partitioning.key_columns));
            o.key_schema = batch.schema();
          }
          if (o.targets.size() == 1) {  // one consumer takes every key: nothing to hash
            FLOE_RETURN_NOT_OK(Push(o.targets[0], last ? std::move(batch) : RecordBatch(batch)));
            break;
          }
          auto rows = HashPartitionRows(batch, o.key_indexes, impl_.max_parallelism,
                                        static_cast<uint32_t>(o.targets.size()));
          for (size_t t = 0; t < rows.size(); ++t) {
            if (rows[t].empty()) continue;
            if (rows[t].size() == batch.num_rows()) {  // the whole batch has one target
              FLOE_RETURN_NOT_OK(Push(o.targets[t], last ? std::move(batch) : RecordBatch(batch)));
              break;
            }
            FLOE_RETURN_NOT_OK(Push(o.targets[t], batch.Take(rows[t])));
          }
          break;
        }
      }
    }
    return Status::OK();
  }

  Status EmitWatermark(Watermark watermark) override {
    SetWatermarkMetric(task_.output_watermark_millis, watermark.micros);
    FLOE_RETURN_NOT_OK(SetIdle(false));
    return Broadcast(watermark);
  }
  Status EmitWatermarkStatus(bool idle) override { return SetIdle(idle); }
  Status EmitClaimChange(const ClaimChange& change) override { return Broadcast(change); }
  // Sends a status change downstream (nothing when the status is unchanged).
  Status SetIdle(bool idle) {
    if (idle == idle_) return Status::OK();
    idle_ = idle;
    return Broadcast(WatermarkStatus{idle});
  }

  // Sends a control element to every target of every output.
  Status Broadcast(const StreamElement& element) {
    for (Output& o : task_.outputs) {
      for (const OutputTarget& t : o.targets) FLOE_RETURN_NOT_OK(Push(t, element));
    }
    return Status::OK();
  }

  // Time spent waiting for room in full output channels, summed over the task's life.
  int64_t blocked_micros() const { return blocked_micros_; }

  // Wakes the consumers of what was pushed since the last call, by this task and the tasks
  // chained to it: the task calls it before it waits for input or ends (the wake-ups are
  // deferred while it works: InputGate::Push).
  void WakeConsumers();

 private:
  // Hands `element` to the runner of a chained consumer, on this thread.
  Status Deliver(const OutputTarget& t, StreamElement element);

  Status Push(const OutputTarget& t, StreamElement element) {
    if (t.chained != nullptr) return Deliver(t, std::move(element));
    int64_t blocked_at = 0;
    if (std::find(woken_later_.begin(), woken_later_.end(), t.gate) == woken_later_.end()) {
      woken_later_.push_back(t.gate);
    }
    Status st = t.gate->Push(
        t.channel, std::move(element),
        [this, &blocked_at] {
          blocked_at = SteadyMicros();
          if (impl_.options.on_output_blocked) impl_.options.on_output_blocked(task_.name);
        },
        /*defer_wakeup=*/true);
    if (blocked_at != 0) {
      const int64_t blocked = SteadyMicros() - blocked_at;
      task_.back_pressured_micros->Add(blocked);
      blocked_micros_ += blocked;
    }
    return st;
  }

  ExecutorTask& task_;
  LocalExecutor::Impl& impl_;
  bool idle_ = false;
  int64_t blocked_micros_ = 0;
  std::vector<InputGate*> woken_later_;  // gates pushed to since WakeConsumers
};

// The tasks chained to `t` run on its thread (ExecutorOptions::operator_chaining): it pumps
// their unfinished work, one slice each (true while any remains), and passes them its commands.
Result<bool> PumpChained(const ExecutorTask& t);
Status CommandChained(const ExecutorTask& t, const TaskCommand& c);

// The main loop of a non-source subtask: barrier alignment, watermark merging, end of input.
class OperatorRunner {
 public:
  OperatorRunner(ExecutorTask& t, LocalExecutor::Impl& impl, TaskCollector& out)
      : t_(t),
        impl_(impl),
        out_(out),
        n_(t.gate->num_channels()),
        blocked_(n_, false),
        ended_(n_, false),
        last_barrier_(n_, 0),
        watermarks_(n_, INT64_MIN),
        idle_(n_, false),
        aligned_(impl.options.mode == CheckpointingMode::kExactlyOnce) {}

  Status Run() {
    while (true) {
      // One slice of the unfinished work of this operator and those chained to it between two
      // elements: barriers and commands get through while, say, millions of timers fire.
      FLOE_ASSIGN_OR_RAISE(const bool busy, Pump());
      if (finished_) {
        if (!busy) break;
        continue;
      }
      // Consumers are woken when this task is about to wait for input, not after each element
      // (a watermark assigner turns a batch into hundreds of elements; InputGate::Push).
      FLOE_ASSIGN_OR_RAISE(InputGate::Next next,
                           t_.gate->Pop(blocked_, std::chrono::milliseconds(0)));
      if (next.kind == InputGate::Next::Kind::kTimeout && !busy) {
        out_.WakeConsumers();
        FLOE_ASSIGN_OR_RAISE(next, t_.gate->Pop(blocked_));
      }
      if (next.kind == InputGate::Next::Kind::kCommand) {
        FLOE_RETURN_NOT_OK(OnCommand(next.command));
      } else if (next.kind == InputGate::Next::Kind::kElement) {
        FLOE_RETURN_NOT_OK(Deliver(next.channel, std::move(next.element)));
      }
    }
    return Status::OK();
  }

  // An element of input channel `c`: from the task's gate, or from the task this one is
  // chained to (channel 0, on that task's thread).
  Status Deliver(size_t c, StreamElement element) {
    FLOE_RETURN_NOT_OK(OnElement(c, std::move(element)));
    working_ = true;  // the element may have left work (a watermark's timers)
    return Status::OK();
  }

  // One slice of the operator's unfinished work (ContinueWork), then one of each chained
  // task's; true while any remains.
  Result<bool> Pump() {
    bool busy = false;
    if (working_ && !finished_) {
      FLOE_ASSIGN_OR_RAISE(working_, t_.op->ContinueWork(out_));
      if (!working_ && end_deferred_) {
        end_deferred_ = false;
        FLOE_RETURN_NOT_OK(EndInput());
        FLOE_RETURN_NOT_OK(SnapshotReady());
      }
      busy = working_ && !finished_;
    }
    FLOE_ASSIGN_OR_RAISE(const bool chained_busy, PumpChained(t_));
    return busy || chained_busy;
  }

  // A command of this task's, passed on to the tasks chained to it (they have no gate of
  // their own to take it from).
  Status OnCommand(const TaskCommand& c) {
    FLOE_RETURN_NOT_OK(OnOwnCommand(c));
    return CommandChained(t_, c);
  }

  void WakeConsumers() { out_.WakeConsumers(); }

 private:
  Status OnOwnCommand(const TaskCommand& c) {
    if (c.kind != TaskCommand::Kind::kCheckpointComplete) return Status::OK();
    if (c.id.value > last_completed_) {
      if (c.id.value > last_snapshot_) {
        return Status::Internal("checkpoint " + c.id.ToString() +
                                " reported complete before this task snapshotted it");
      }
      last_completed_ = c.id.value;
      FLOE_RETURN_NOT_OK(t_.op->OnCheckpointComplete(c.id));
    }
    if (c.flag) finished_ = true;
    return Status::OK();
  }

  Status OnElement(size_t c, StreamElement element) {
    if (auto* batch = std::get_if<RecordBatch>(&element)) {
      if (ended_[c]) return Status::Internal("batch after end of input");
      if (idle_[c]) FLOE_RETURN_NOT_OK(SetChannelIdle(c, false));
      t_.records_in->Add(static_cast<int64_t>(batch->num_rows()));
      return t_.op->ProcessBatch(*batch, t_.channel_input[c], out_);
    }
    if (auto* wm = std::get_if<Watermark>(&element)) {
      if (idle_[c]) FLOE_RETURN_NOT_OK(SetChannelIdle(c, false));
      if (wm->micros > watermarks_[c]) watermarks_[c] = wm->micros;
      return AdvanceWatermark();
    }
    if (auto* status = std::get_if<WatermarkStatus>(&element)) {
      return SetChannelIdle(c, status->idle);
    }
    if (auto* claim = std::get_if<ClaimChange>(&element)) return OnClaimChange(*claim);
    if (auto* barrier = std::get_if<Barrier>(&element)) return OnBarrier(c, *barrier);
    return OnEndOfInput(c);
  }

  // The key group of the claim moves first (the runtime owns keyed state), then the operator
  // hears of it: a beginning claim's group holds the state its last holder committed, an ended
  // claim's group is empty.
  Status OnClaimChange(const ClaimChange& claim) {
    if (t_.keyed) {
      if (claim.key_group >= impl_.max_parallelism) {
        return Status::InvalidArgument(
            "claim " + claim.split + ": partition " + std::to_string(claim.key_group) +
            " has no key group: a keyed job scaled out by Kafka partition keeps one per "
            "partition, so 'pipeline.max-parallelism' (" +
            std::to_string(impl_.max_parallelism) + ") must exceed every partition number");
      }
      Status st;
      if (claim.begins && !claim.state.empty()) {
        if (!impl_.options.read_claim_state) {
          return Status::Internal("claim " + claim.split + " names state but no reader is set");
        }
        Result<std::string> bytes = impl_.options.read_claim_state(claim.state);
        if (bytes.ok()) {
          StateReader in(*bytes);
          st = t_.keyed->RestoreKeyGroup(in, claim.key_group);
        } else {
          st = bytes.status();
        }
      } else {
        st = t_.keyed->DropKeyGroup(claim.key_group);
      }
      if (!st.ok()) {
        return st.WithContext("claim " + claim.split + (claim.begins ? " begins" : " ends") +
                              (claim.state.empty() ? "" : " (state " + claim.state + ")"));
      }
    }
    return t_.op->OnClaimChange(claim, out_);
  }

  // An idle channel is left out of the minimum; when every open channel is idle, this task's
  // output is idle too (Flink's WatermarkStatus). A channel rejoining with a lower watermark
  // does not move the combined watermark back: it counts once it catches up.
  Status SetChannelIdle(size_t c, bool idle) {
    idle_[c] = idle;
    return OnChannelStateChanged();
  }

  // The watermark moves first: a flush (below) emits a watermark, which would make the output
  // active again after it went idle.
  Status OnChannelStateChanged() {
    FLOE_RETURN_NOT_OK(AdvanceWatermark());
    if (ended_count_ == n_) return Status::OK();  // the end of input follows
    bool all_idle = true;
    for (size_t k = 0; k < n_; ++k) all_idle = all_idle && (ended_[k] || idle_[k]);
    return out_.SetIdle(all_idle);
  }

  // The minimum over the active channels. Once no open channel is active, none will raise that
  // minimum, so, like Flink's watermark valve, the watermark moves up to the highest any channel
  // reached, ended ones included (a channel that ended before its sibling went idle would
  // otherwise hold its last watermark back until the idle one ends).
  Status AdvanceWatermark() {
    int64_t min = INT64_MAX;
    int64_t highest = INT64_MIN;
    bool any_active = false;
    bool any_idle = false;
    for (size_t c = 0; c < n_; ++c) {
      highest = std::max(highest, watermarks_[c]);
      if (ended_[c]) continue;
      if (idle_[c]) {
        any_idle = true;
        continue;
      }
      any_active = true;
      min = std::min(min, watermarks_[c]);
    }
    const int64_t next = any_active ? min : (any_idle ? highest : INT64_MIN);
    if (next <= current_watermark_) return Status::OK();
    current_watermark_ = next;
    SetWatermarkMetric(t_.input_watermark_millis, next);
    return t_.op->OnWatermark(Watermark(next), out_);
  }

  Status OnBarrier(size_t c, const Barrier& b) {
    if (b.id.value <= last_snapshot_ || b.id.value <= last_barrier_[c]) {
      return Status::Internal("barrier " + b.id.ToString() + " out of order on channel " +
                              std::to_string(c));
    }
    last_barrier_[c] = b.id.value;
    pending_.emplace(b.id.value, PendingBarrier{b, SteadyMicros()});
    if (aligned_) blocked_[c] = true;  // hold back records of the next checkpoint
    return SnapshotReady();
  }

  // A channel has delivered barrier `id` -- or, when tasks finish at end of input, has ended
  // and so will deliver nothing more.
  bool Delivered(size_t c, uint64_t id) const {
    return last_barrier_[c] >= id || (ended_[c] && !impl_.options.final_checkpoint);
  }

  Status SnapshotReady() {
    while (!pending_.empty()) {
      auto it = pending_.begin();
      for (size_t c = 0; c < n_; ++c) {
        if (!Delivered(c, it->first)) return Status::OK();
      }
      const Barrier b = it->second.barrier;
      const int64_t alignment = SteadyMicros() - it->second.first_seen_micros;
      pending_.erase(it);
      t_.alignment_nanos->Set(alignment * 1000);
      FLOE_RETURN_NOT_OK(PrepareBarrier(b.id));
      const int64_t sync_start = SteadyMicros();
      const int64_t blocked_before = out_.blocked_micros();
      StateWriter state;
      FLOE_RETURN_NOT_OK(t_.op->OnBarrier(b.id, state, out_));
      // What OnBarrier sent on and waited for room for downstream is back pressure: the task's
      // records wait for it as much, checkpoint or not. Flink's sync duration leaves it out as
      // well (what an operator emits before the barrier is not its snapshot).
      const int64_t blocked = out_.blocked_micros() - blocked_before;
      TaskAck ack;
      ack.checkpoint = b.id;
      ack.task = t_.name;
      ack.state = state.Finish();
      ack.end_of_input = all_ended_;
      ack.alignment_micros = alignment;
      const int64_t operator_micros = SteadyMicros() - sync_start - blocked;
      if (t_.keyed) {
        FLOE_ASSIGN_OR_RAISE(std::unique_ptr<KeyedStateSnapshot> view, t_.keyed->TakeSnapshot());
        ack.keyed = std::move(view);
      }
      ack.sync_micros = SteadyMicros() - sync_start - blocked;
      if (ack.sync_micros > kSlowSyncMicros) {
        // The stream waits for this; the checkpoint's sync figure is the slowest task's.
        LogInfo(
            "task %s: the synchronous part of checkpoint %s took %.1f ms (the operator's "
            "OnBarrier %.1f ms, the keyed state's view %.1f ms; not counted: %.1f ms waiting "
            "for room downstream)",
            t_.name.c_str(), b.id.ToString().c_str(), ack.sync_micros / 1000.0,
            operator_micros / 1000.0, (ack.sync_micros - operator_micros) / 1000.0,
            blocked / 1000.0);
      }
      last_snapshot_ = b.id.value;
      impl_.Ack(std::move(ack));
      FLOE_RETURN_NOT_OK(out_.Broadcast(b));
      std::fill(blocked_.begin(), blocked_.end(), false);
    }
    return Status::OK();
  }

  // The operator's work before the barrier (Operator::PrepareBarrier): outside the synchronous
  // part, logged when slow.
  Status PrepareBarrier(CheckpointId id) {
    const int64_t start = SteadyMicros();
    const int64_t blocked_before = out_.blocked_micros();
    FLOE_RETURN_NOT_OK(t_.op->PrepareBarrier(id, out_));
    const int64_t blocked = out_.blocked_micros() - blocked_before;
    const int64_t took = SteadyMicros() - start - blocked;
    if (took > kSlowSyncMicros) {
      LogInfo(
          "task %s: before the barrier of checkpoint %s, %.1f ms of work (not part of the "
          "synchronous part; also %.1f ms waiting for room downstream)",
          t_.name.c_str(), id.ToString().c_str(), took / 1000.0, blocked / 1000.0);
    }
    return Status::OK();
  }

  Status OnEndOfInput(size_t c) {
    if (ended_[c]) return Status::Internal("second end of input on a channel");
    ended_[c] = true;
    ++ended_count_;
    FLOE_RETURN_NOT_OK(OnChannelStateChanged());
    if (ended_count_ == n_) {
      // The operator's unfinished work goes out before its end of input, in slices as ever.
      FLOE_ASSIGN_OR_RAISE(working_, t_.op->ContinueWork(out_));
      if (working_) {
        end_deferred_ = true;
      } else {
        FLOE_RETURN_NOT_OK(EndInput());
      }
    }
    return SnapshotReady();
  }

  Status EndInput() {
    all_ended_ = true;
    FLOE_RETURN_NOT_OK(t_.op->OnEndOfInput(out_));
    FLOE_RETURN_NOT_OK(out_.Broadcast(EndOfInput{}));
    impl_.ReportEnded();
    if (!impl_.options.final_checkpoint) finished_ = true;
    return Status::OK();
  }

  ExecutorTask& t_;
  LocalExecutor::Impl& impl_;
  TaskCollector& out_;
  const size_t n_;
  std::vector<bool> blocked_;
  std::vector<bool> ended_;
  std::vector<uint64_t> last_barrier_;
  std::vector<int64_t> watermarks_;
  std::vector<bool> idle_;  // WatermarkStatus per channel
  int64_t current_watermark_ = INT64_MIN;
  struct PendingBarrier {
    Barrier barrier;
    int64_t first_seen_micros = 0;  // alignment starts when the first channel delivers it
  };
  std::map<uint64_t, PendingBarrier> pending_;  // seen on some channel, not yet snapshotted
  uint64_t last_snapshot_ = 0;
  uint64_t last_completed_ = 0;
  size_t ended_count_ = 0;
  bool all_ended_ = false;
  bool finished_ = false;
  bool working_ = true;        // ContinueWork may have work (a restore may have left some)
  bool end_deferred_ = false;  // every input ended; EndInput waits for the work to finish
  const bool aligned_;
};

Result<bool> PumpChained(const ExecutorTask& t) {
  bool busy = false;
  for (ExecutorTask* member : t.chained) {
    FLOE_ASSIGN_OR_RAISE(const bool b, member->runner->Pump());
    busy = busy || b;
  }
  return busy;
}

Status CommandChained(const ExecutorTask& t, const TaskCommand& c) {
  for (ExecutorTask* member : t.chained) FLOE_RETURN_NOT_OK(member->runner->OnCommand(c));
  return Status::OK();
}

Status TaskCollector::Deliver(const OutputTarget& t, StreamElement element) {
  Status st = t.chained->runner->Deliver(0, std::move(element));
  if (!st.ok()) return st.WithContext("task '" + t.chained->name + "'");
  return st;
}

void TaskCollector::WakeConsumers() {
  for (InputGate* gate : woken_later_) gate->WakeConsumer();
  woken_later_.clear();
  for (ExecutorTask* member : task_.chained) member->runner->WakeConsumers();
}

// The main loop of a source subtask: Poll, and between two Polls serve the mailbox.
class SourceRunner {
 public:
  SourceRunner(ExecutorTask& t, LocalExecutor::Impl& impl, TaskCollector& out)
      : t_(t), impl_(impl), out_(out) {}

  Status Run() {
    while (true) {
      // The chained operators' unfinished work, a slice each between two Polls.
      FLOE_ASSIGN_OR_RAISE(const bool busy, PumpChained(t_));
      if (finished_) {
        if (!busy) break;
        continue;
      }
      // Commands first: a trigger takes effect right after the batch in progress.
      bool command = true;
      while (command && !finished_) {
        out_.WakeConsumers();  // what the last Poll or command sent
        FLOE_ASSIGN_OR_RAISE(InputGate::Next next, t_.gate->Pop({}, std::chrono::milliseconds(0)));
        command = next.kind == InputGate::Next::Kind::kCommand;
        if (command) FLOE_RETURN_NOT_OK(OnCommand(next.command));
      }
      if (finished_) continue;
      if (ended_) {
        FLOE_ASSIGN_OR_RAISE(
            InputGate::Next next,
            busy ? t_.gate->Pop({}, std::chrono::milliseconds(0)) : t_.gate->Pop({}));
        if (next.kind == InputGate::Next::Kind::kCommand) {
          FLOE_RETURN_NOT_OK(OnCommand(next.command));
        }
        continue;
      }
      FLOE_ASSIGN_OR_RAISE(SourceStatus st, t_.source->Poll(out_));
      if (st == SourceStatus::kIdle) {
        out_.WakeConsumers();  // a quiet Poll may still have sent watermarks
        FLOE_ASSIGN_OR_RAISE(
            InputGate::Next next,
            t_.gate->Pop({}, busy ? std::chrono::milliseconds(0) : impl_.options.idle_backoff));
        if (next.kind == InputGate::Next::Kind::kCommand) {
          FLOE_RETURN_NOT_OK(OnCommand(next.command));
        }
      } else if (st == SourceStatus::kEnd) {
        ended_ = true;
        // Like Flink: a bounded source ends with the maximum watermark, so event-time
        // operators fire everything they hold.
        FLOE_RETURN_NOT_OK(out_.Broadcast(Watermark(INT64_MAX)));
        FLOE_RETURN_NOT_OK(out_.Broadcast(EndOfInput{}));
        impl_.ReportEnded();
        if (!impl_.options.final_checkpoint) finished_ = true;
      }
    }
    return Status::OK();
  }

 private:
  Status OnCommand(const TaskCommand& c) {
    if (c.kind == TaskCommand::Kind::kTriggerCheckpoint) {
      if (c.id.value <= last_triggered_) return Status::OK();
      last_triggered_ = c.id.value;
      const int64_t sync_start = SteadyMicros();
      StateWriter state;
      FLOE_RETURN_NOT_OK(t_.source->SnapshotPosition(c.id, state));
      TaskAck ack;
      ack.checkpoint = c.id;
      ack.task = t_.name;
      ack.state = state.Finish();
      ack.end_of_input = ended_;
      ack.sync_micros = SteadyMicros() - sync_start;
      impl_.Ack(std::move(ack));
      return out_.Broadcast(Barrier{c.id, c.flag});
    }
    if (c.id.value > last_completed_) {
      if (c.id.value > last_triggered_) {
        return Status::Internal("checkpoint " + c.id.ToString() +
                                " reported complete before this source snapshotted it");
      }
      last_completed_ = c.id.value;
      FLOE_RETURN_NOT_OK(t_.source->OnCheckpointComplete(c.id));
    }
    if (c.flag) finished_ = true;
    return CommandChained(t_, c);
  }

  ExecutorTask& t_;
  LocalExecutor::Impl& impl_;
  TaskCollector& out_;
  bool ended_ = false;
  bool finished_ = false;
  uint64_t last_triggered_ = 0;
  uint64_t last_completed_ = 0;
};

}  // namespace

// The states a restored subtask starts from: every old subtask's blob of its vertex, by old
// subtask index (null where there is none).
std::vector<const std::string*> OldSubtaskStates(const CompletedCheckpoint& checkpoint,
                                                 const std::string& vertex) {
  std::vector<const std::string*> out;
  const std::string prefix = vertex + "/";
  for (auto it = checkpoint.task_states.lower_bound(prefix);
       it != checkpoint.task_states.end() && it->first.starts_with(prefix); ++it) {
    const std::string index = it->first.substr(prefix.size());
    if (index.empty() || index.size() > 5 ||
        index.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    const size_t i = std::stoul(index);
    if (out.size() <= i) out.resize(i + 1, nullptr);
    out[i] = &it->second;
  }
  return out;
}

Status LocalExecutor::Impl::RestoreTask(ExecutorTask& t) {
  const std::vector<const std::string*> old = OldSubtaskStates(*options.restore, t.info.vertex);
  if (old.empty()) return Status::OK();
  // Split every old file into its operator blob and its keyed state; hand the keyed state of
  // every old subtask whose key groups overlap this one's to the backend.
  std::vector<std::string_view> operator_states(old.size());
  const KeyGroupRange mine = t.info.key_groups;
  for (size_t i = 0; i < old.size(); ++i) {
    if (old[i] == nullptr) continue;
    FLOE_ASSIGN_OR_RAISE(std::optional<KeyedTaskState> parts, ParseKeyedTaskState(*old[i]));
    if (!parts) {
      operator_states[i] = *old[i];
      continue;
    }
    operator_states[i] = parts->operator_state;
    if (!t.keyed) {
      return Status::InvalidArgument(
          "the checkpoint holds keyed state of this vertex, which is "
          "not keyed in this job");
    }
    if (parts->key_groups.end <= mine.start || parts->key_groups.start >= mine.end) continue;
    if (t.keyed_options->from_claims) continue;  // its claims bring each group
    StateReader reader(parts->keyed_state);
    FLOE_RETURN_NOT_OK(t.keyed->Restore(reader));
  }
  if (old.size() == t.info.parallelism) {
    const size_t self = t.info.subtask.value;
    if (old[self] == nullptr) return Status::OK();
    StateReader reader(operator_states[self]);
    return t.source ? t.source->Restore(reader) : t.op->Restore(reader);
  }
  const std::string rescaled = "rescaling from " + std::to_string(old.size()) + " to " +
                               std::to_string(t.info.parallelism) + " subtasks";
  LogInfo("%s: %s, key groups [%u, %u)", t.name.c_str(), rescaled.c_str(), mine.start, mine.end);
  // An operator that wrote no state of its own (stateless, or all of it keyed) rescales freely.
  if (std::all_of(operator_states.begin(), operator_states.end(),
                  [](std::string_view s) { return s.empty(); })) {
    return Status::OK();
  }
  std::vector<std::string> states(operator_states.begin(), operator_states.end());
  Status st = t.source ? t.source->RestoreRescaled(states) : t.op->RestoreRescaled(states);
  return st.WithContext(rescaled);
}

Status LocalExecutor::Impl::OpenTask(ExecutorTask& t) {
  OperatorContext& ctx = t.ctx;
  ctx.task = t.info;
  ctx.mode = options.mode;
  ctx.num_inputs = t.num_inputs;
  ctx.cancel_flag = &cancel_flag;
  ctx.metrics = t.metrics.get();
  if (options.restore) ctx.restored_from = options.restore->id;
  if (t.keyed_options) {
    KeyedStateOptions keyed = *t.keyed_options;
    keyed.key_groups = t.info.key_groups;
    keyed.max_parallelism = t.info.max_parallelism;
    keyed.shared_state = options.shared_state;
    keyed.incremental = options.incremental;
    keyed.task_name = t.name;
    Result<std::unique_ptr<KeyedStateBackend>> made = KeyedStateBackend::Make(std::move(keyed));
    if (!made.ok()) return made.status().WithContext("keyed state");
    t.keyed = std::move(*made);
    ctx.keyed_state = t.keyed.get();
  }
  FLOE_RETURN_NOT_OK(t.source ? t.source->Open(ctx) : t.op->Open(ctx));
  t.opened = true;
  if (options.restore) {
    Status st = RestoreTask(t);
    if (!st.ok())
      return st.WithContext("restoring from checkpoint " + options.restore->id.ToString());
  }
  return Status::OK();
}

namespace {

// `head` and the tasks chained to it, each after the one it is chained to.
std::vector<ExecutorTask*> ChainOf(ExecutorTask& head) {
  std::vector<ExecutorTask*> chain{&head};
  for (size_t i = 0; i < chain.size(); ++i) {
    chain.insert(chain.end(), chain[i]->chained.begin(), chain[i]->chained.end());
  }
  return chain;
}

}  // namespace

void LocalExecutor::Impl::RunTask(ExecutorTask& head) {
  const std::vector<ExecutorTask*> chain = ChainOf(head);
  std::vector<std::unique_ptr<TaskCollector>> outs;
  std::vector<Status> status(chain.size());
  for (ExecutorTask* t : chain) outs.push_back(std::make_unique<TaskCollector>(*t, *this));
  Status st;
  for (size_t i = 0; i < chain.size() && st.ok(); ++i) {
    st = status[i] = OpenTask(*chain[i]);
  }
  {
    std::vector<std::unique_ptr<OperatorRunner>> runners;
    for (size_t i = 1; i < chain.size(); ++i) {
      runners.push_back(std::make_unique<OperatorRunner>(*chain[i], *this, *outs[i]));
      chain[i]->runner = runners.back().get();
    }
    if (st.ok()) {
      status[0] = head.source ? SourceRunner(head, *this, *outs[0]).Run()
                              : OperatorRunner(head, *this, *outs[0]).Run();
    }
    outs[0]->WakeConsumers();  // and the chained tasks' consumers
    for (ExecutorTask* t : chain) t->runner = nullptr;
  }
  for (size_t i = 0; i < chain.size(); ++i) {
    ExecutorTask& t = *chain[i];
    // Finished (a final completion, e.g. stop-with-savepoint): producers still running must
    // not block on this task's full channels before they see their own final completion.
    if (status[0].ok() && status[i].ok()) t.gate->Close();
    if (t.opened) {
      Status closed = t.source ? t.source->Close() : t.op->Close();
      if (status[i].ok()) status[i] = closed;
    }
    t.keyed.reset();  // its pending snapshots own what they need
  }
  for (size_t i = 0; i < chain.size(); ++i) {
    TaskDone(status[i].WithContext("task '" + chain[i]->name + "'"));
  }
}

LocalExecutor::LocalExecutor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

LocalExecutor::~LocalExecutor() {
  Cancel();
  (void)Wait();
}

Result<std::unique_ptr<LocalExecutor>> LocalExecutor::Make(const JobGraph& graph,
                                                           ExecutorOptions options) {
  FLOE_RETURN_NOT_OK(graph.Validate());
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  impl->max_parallelism = graph.max_parallelism();
  if (!impl->options.metrics) impl->options.metrics = std::make_shared<MetricRegistry>();
  MetricRegistry& registry = *impl->options.metrics;
  const auto& vertices = graph.vertices();
  const auto& edges = graph.edges();

  // Channels of a consumer subtask: per input edge in input order, one per producer subtask
  // (just the peer for FORWARD). edge_base[e] = first channel of edge e.
  std::vector<size_t> edge_base(edges.size(), 0);
  std::vector<size_t> num_channels(vertices.size(), 0);
  std::vector<std::vector<int>> channel_input(vertices.size());
  // Edges are numbered per target in insertion order, so walking them in order visits each
  // vertex's inputs in input order.
  for (size_t e = 0; e < edges.size(); ++e) {
    const Edge& edge = edges[e];
    const size_t v = edge.to.value;
    edge_base[e] = num_channels[v];
    size_t width = edge.partitioning.kind == PartitionKind::kForward
                       ? 1
                       : vertices[edge.from.value].parallelism;
    num_channels[v] += width;
    channel_input[v].insert(channel_input[v].end(), width, edge.input);
  }

  std::vector<std::vector<ExecutorTask*>> by_vertex(vertices.size());
  for (size_t v = 0; v < vertices.size(); ++v) {
    const Vertex& vx = vertices[v];
    for (uint32_t s = 0; s < vx.parallelism; ++s) {
      auto t = std::make_unique<ExecutorTask>();
      t->info.vertex = vx.name;
      t->info.subtask = SubtaskIndex(s);
      t->info.parallelism = vx.parallelism;
      t->info.max_parallelism = graph.max_parallelism();
      t->info.key_groups = KeyGroupRangeForSubtask(s, graph.max_parallelism(), vx.parallelism);
      t->name = t->info.name();
      t->keyed_options = vx.keyed_state;
      t->num_inputs = static_cast<int>(graph.InputsOf(VertexId(static_cast<uint32_t>(v))).size());
      t->gate = std::make_unique<InputGate>(num_channels[v], impl->options.channel_capacity,
                                            impl->options.channel_slot_rows);
      t->channel_input = channel_input[v];
      const MetricLabels labels = TaskLabels(vx.name, s);
      auto task_metric = [&](const char* name, MetricType type) {
        return &registry.Get(std::string("taskmanager_job_task_") + name, labels, type);
      };
      t->records_in = task_metric("numRecordsIn", MetricType::kCounter);
      t->records_out = task_metric("numRecordsOut", MetricType::kCounter);
      t->back_pressured_micros = task_metric("backPressuredTimeMicros", MetricType::kCounter);
      t->alignment_nanos = task_metric("checkpointAlignmentTime", MetricType::kGauge);
      t->metrics = std::make_unique<MetricGroup>(&registry, labels);
      t->input_watermark_millis = &t->metrics->Gauge("currentInputWatermark");
      t->output_watermark_millis = &t->metrics->Gauge("currentOutputWatermark");
      if (vx.is_source()) {
        FLOE_ASSIGN_OR_RAISE(t->source, vx.source(t->info));
        if (!t->source) return Status::Internal("source factory of '" + t->name + "' gave null");
      } else {
        FLOE_ASSIGN_OR_RAISE(t->op, vx.op(t->info));
        if (!t->op) return Status::Internal("operator factory of '" + t->name + "' gave null");
      }
      by_vertex[v].push_back(t.get());
      impl->names.push_back(t->name);
      impl->tasks.push_back(std::move(t));
    }
  }

  for (size_t e = 0; e < edges.size(); ++e) {
    const Edge& edge = edges[e];
    const auto& producers = by_vertex[edge.from.value];
    const auto& consumers = by_vertex[edge.to.value];
    for (size_t i = 0; i < producers.size(); ++i) {
      Output o;
      o.port = edge.output;
      o.partitioning = edge.partitioning;
      if (edge.partitioning.kind == PartitionKind::kForward) {
        o.targets.push_back(OutputTarget{consumers[i]->gate.get(), edge_base[e]});
      } else {
        for (ExecutorTask* c : consumers)
          o.targets.push_back(OutputTarget{c->gate.get(), edge_base[e] + i});
        // Spread producers' first batches over different targets.
        o.next_rr = static_cast<uint32_t>(i);
      }
      // A FORWARD edge into a vertex with no other input: each consumer subtask runs on its
      // producer's thread, its elements handed over by a call (Flink's operator chain).
      if (edge.partitioning.kind == PartitionKind::kForward && num_channels[edge.to.value] == 1 &&
          impl->options.operator_chaining) {
        o.targets[0].chained = consumers[i];
        consumers[i]->chained_into = producers[i];
        producers[i]->chained.push_back(consumers[i]);
      }
      producers[i]->outputs.push_back(std::move(o));
    }
  }
  if (impl->options.restore && !impl->options.allow_non_restored_state) {
    std::set<std::string> known;
    for (const Vertex& v : vertices) known.insert(v.name);
    for (const auto& [task, blob] : impl->options.restore->task_states) {
      const std::string vertex = task.substr(0, task.rfind('/'));
      if (known.count(vertex) == 0) {
        return Status::InvalidArgument(
            "checkpoint " + impl->options.restore->id.ToString() + " holds state of task '" + task +
            "', whose operator this job does not have: was a table renamed, or did the query "
            "change its plan? That state would be lost; SET "
            "'execution.savepoint.ignore-unclaimed-state' = 'true' drops it");
      }
    }
  }
  return std::unique_ptr<LocalExecutor>(new LocalExecutor(std::move(impl)));
}

Status LocalExecutor::Start() {
  MutexLock lock(impl_->mu);
  if (impl_->started) return Status::Internal("executor started twice");
  impl_->started = true;
  for (auto& t : impl_->tasks) {
    if (t->chained_into != nullptr) continue;  // runs on the thread of the task it is chained to
    if (!t->chained.empty()) {
      std::string chain;
      for (const ExecutorTask* member : ChainOf(*t)) {
        if (member != t.get()) chain += (chain.empty() ? "'" : ", '") + member->name + "'";
      }
      LogInfo("task '%s' runs %s on its thread (operator chaining)", t->name.c_str(),
              chain.c_str());
    }
    ExecutorTask* task = t.get();
    Impl* impl = impl_.get();
    t->thread = std::thread([impl, task] { impl->RunTask(*task); });
  }
  return Status::OK();
}

Status LocalExecutor::TriggerCheckpoint(CheckpointId id, bool is_savepoint) {
  MutexLock lock(impl_->mu);
  if (!impl_->RunningLocked()) {
    return Status::Unavailable("cannot trigger checkpoint " + id.ToString() +
                               ": the job is not running");
  }
  if (id <= impl_->last_triggered) {
    return Status::InvalidArgument("checkpoint id " + id.ToString() + " is not above " +
                                   impl_->last_triggered.ToString());
  }
  impl_->last_triggered = id;
  for (auto& t : impl_->tasks) {
    if (t->source) {
      t->gate->PostCommand(TaskCommand{TaskCommand::Kind::kTriggerCheckpoint, id, is_savepoint});
    }
  }
  return Status::OK();
}

Status LocalExecutor::NotifyCheckpointComplete(CheckpointId id, bool final) {
  MutexLock lock(impl_->mu);
  if (!impl_->RunningLocked()) {
    return Status::Unavailable("cannot complete checkpoint " + id.ToString() +
                               ": the job is not running");
  }
  for (auto& t : impl_->tasks) {
    if (t->chained_into != nullptr) continue;  // the task it is chained to passes it on
    t->gate->PostCommand(TaskCommand{TaskCommand::Kind::kCheckpointComplete, id, final});
  }
  return Status::OK();
}

void LocalExecutor::Cancel() {
  {
    MutexLock lock(impl_->mu);
    if (impl_->cancel_flag.load() || (impl_->started && impl_->done_tasks == impl_->tasks.size())) {
      return;
    }
    impl_->user_cancelled = true;
  }
  impl_->CancelAll();
}

Status LocalExecutor::Wait() {
  MutexLock join_lock(impl_->join_mu);
  {
    MutexLock lock(impl_->mu);
    if (!impl_->started) return Status::Internal("Wait() before Start()");
  }
  if (!impl_->joined) {
    for (auto& t : impl_->tasks) {
      if (t->thread.joinable()) t->thread.join();
    }
    impl_->joined = true;
  }
  MutexLock lock(impl_->mu);
  return impl_->first_error;
}

void LocalExecutor::Abandon(CheckpointId last_completed) {
  MutexLock join_lock(impl_->join_mu);
  if (!impl_->joined || impl_->abandoned) return;
  impl_->abandoned = true;
  for (auto& t : impl_->tasks) {
    if (t->opened && t->op) t->op->Abandon(last_completed);
  }
}

JobState LocalExecutor::state() const {
  MutexLock lock(impl_->mu);
  if (!impl_->started) return JobState::kCreated;
  if (impl_->done_tasks < impl_->tasks.size()) return JobState::kRunning;
  if (!impl_->first_error.ok()) return JobState::kFailed;
  if (impl_->user_cancelled) return JobState::kCancelled;
  return JobState::kFinished;
}

const std::vector<std::string>& LocalExecutor::task_names() const { return impl_->names; }

}  // namespace floe::runtime

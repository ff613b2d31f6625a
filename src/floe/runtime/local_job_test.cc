#include "floe/runtime/local_job.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <thread>

#include "floe/runtime/checkpoint_storage.h"
#include "floe/runtime/keyed_state.h"
#include "floe/runtime/partitioner.h"
#include "floe/runtime/task_state.h"
#include "floe/runtime/test_util.h"

namespace floe::runtime {
namespace {

using testing::Counter;
using testing::Int64Batch;
using testing::Int64Values;

// What the "external system" (a table) holds: committed values, and per sink subtask the last
// checkpoint committed (like floe.checkpoint-id in an Iceberg snapshot summary) so a commit
// offered again after a restore is skipped.
struct CommitLog {
  std::mutex mu;
  std::vector<int64_t> committed;
  std::map<uint32_t, uint64_t> last_checkpoint;
  std::vector<std::string> events;  // sink lifecycle, for ordering checks
  std::vector<uint64_t> delivered;  // ids passed to the sinks' OnCheckpointComplete

  void Commit(uint32_t subtask, CheckpointId id, const std::vector<int64_t>& values) {
    std::lock_guard lock(mu);
    if (id.value <= last_checkpoint[subtask]) return;
    committed.insert(committed.end(), values.begin(), values.end());
    last_checkpoint[subtask] = id.value;
  }
  void Event(std::string e) {
    std::lock_guard lock(mu);
    events.push_back(std::move(e));
  }
  std::vector<int64_t> Sorted() {
    std::lock_guard lock(mu);
    std::vector<int64_t> v = committed;
    std::sort(v.begin(), v.end());
    return v;
  }
};

struct Shared {
  std::atomic<int64_t> limit{INT64_MAX};  // sources emit values <= limit, then idle
  int64_t end = 1000;                     // last value
  CommitLog log;
  Counter processed;  // rows that reached a sink
  Counter completed;  // completed checkpoints
  Counter notified;   // OnCheckpointComplete calls on sink subtasks
  std::atomic<uint64_t> last_completed{0};
  std::atomic<int> commit_delay_ms{0};    // a slow external commit (sinks' OnCheckpointComplete)
  std::atomic<uint64_t> max_snapshot{0};  // highest checkpoint id a source snapshotted
  // Sinks sleep 1.5 s in OnBarrier of every id >= this one (0: never); `slept_on`: the highest
  // id a sink began such a sleep for. Long against the 1 s timeout of the test that uses it, so a
  // loaded machine neither completes the slow checkpoint nor times out the fast ones.
  std::atomic<uint64_t> slow_from{0};
  std::atomic<uint64_t> slept_on{0};
};

// Subtask s of p emits s+1, s+1+p, ... up to shared.end, in batches of up to 7 values. Its
// position (next value) is its checkpoint state.
class CountingSource final : public SourceOperator {
 public:
  CountingSource(Shared* s, const TaskInfo& t)
      : s_(s), step_(t.parallelism), next_(t.subtask.value + 1) {}
  Status Restore(StateReader& r) override {
    FLOE_ASSIGN_OR_RAISE(uint32_t version, r.GetU32());
    if (version != 1) return Status::Corruption("unknown source state version");
    FLOE_ASSIGN_OR_RAISE(next_, r.GetI64());
    return r.ExpectEnd();
  }
  Result<SourceStatus> Poll(Collector& out) override {
    if (next_ > s_->end) return SourceStatus::kEnd;
    std::vector<int64_t> values;
    while (values.size() < 7 && next_ <= s_->end && next_ <= s_->limit.load()) {
      values.push_back(next_);
      next_ += step_;
    }
    if (values.empty()) return SourceStatus::kIdle;
    FLOE_RETURN_NOT_OK(out.Emit(Int64Batch(values)));
    return SourceStatus::kMore;
  }
  Status SnapshotPosition(CheckpointId id, StateWriter& w) override {
    uint64_t seen = s_->max_snapshot.load();
    while (seen < id.value && !s_->max_snapshot.compare_exchange_weak(seen, id.value)) {
    }
    w.PutU32(1);
    w.PutI64(next_);
    return Status::OK();
  }

 private:
  Shared* s_;
  int64_t step_;
  int64_t next_;
};

class Passthrough final : public Operator {
 public:
  Status ProcessBatch(const RecordBatch& b, int, Collector& out) override {
    return out.Emit(RecordBatch(b));
  }
};

// Stages rows on the barrier, commits on completion (the Iceberg sink's protocol in miniature).
class CommittingSink final : public Operator {
 public:
  explicit CommittingSink(Shared* s) : s_(s) {}
  Status Open(const OperatorContext& ctx) override {
    subtask_ = ctx.task.subtask.value;
    restored_from_ = ctx.restored_from;
    return Status::OK();
  }
  Status Restore(StateReader& r) override {
    FLOE_ASSIGN_OR_RAISE(uint32_t n, r.GetU32());
    for (uint32_t i = 0; i < n; ++i) {
      FLOE_ASSIGN_OR_RAISE(uint64_t id, r.GetU64());
      FLOE_ASSIGN_OR_RAISE(uint32_t count, r.GetU32());
      std::vector<int64_t> values;
      for (uint32_t k = 0; k < count; ++k) {
        FLOE_ASSIGN_OR_RAISE(int64_t v, r.GetI64());
        values.push_back(v);
      }
      pending_[id] = std::move(values);
    }
    FLOE_RETURN_NOT_OK(r.ExpectEnd());
    // The restored checkpoint completed, so what it staged is committed now (once).
    return Commit(*restored_from_);
  }
  Status ProcessBatch(const RecordBatch& b, int, Collector&) override {
    auto v = Int64Values(b);
    current_.insert(current_.end(), v.begin(), v.end());
    s_->processed.Add(static_cast<int64_t>(v.size()));
    return Status::OK();
  }
  Status OnBarrier(CheckpointId id, StateWriter& w, Collector&) override {
    if (uint64_t slow = s_->slow_from.load(); slow != 0 && id.value >= slow) {
      uint64_t seen = s_->slept_on.load();
      while (seen < id.value && !s_->slept_on.compare_exchange_weak(seen, id.value)) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    }
    if (ended_) s_->log.Event("barrier-after-end " + id.ToString());
    pending_[id.value] = std::move(current_);
    current_.clear();
    w.PutU32(static_cast<uint32_t>(pending_.size()));
    for (const auto& [pid, values] : pending_) {
      w.PutU64(pid);
      w.PutU32(static_cast<uint32_t>(values.size()));
      for (int64_t v : values) w.PutI64(v);
    }
    return Status::OK();
  }
  Status OnCheckpointComplete(CheckpointId id) override {
    {
      std::lock_guard lock(s_->log.mu);
      s_->log.delivered.push_back(id.value);
    }
    if (int ms = s_->commit_delay_ms.load(); ms > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    }
    FLOE_RETURN_NOT_OK(Commit(id));
    s_->notified.Add();
    return Status::OK();
  }
  Status OnEndOfInput(Collector&) override {
    ended_ = true;
    s_->log.Event("end-of-input");
    return Status::OK();
  }

 private:
  Status Commit(CheckpointId upto) {
    for (auto it = pending_.begin(); it != pending_.end() && it->first <= upto.value;) {
      s_->log.Commit(subtask_, CheckpointId(it->first), it->second);
      it = pending_.erase(it);
    }
    return Status::OK();
  }

  Shared* s_;
  uint32_t subtask_ = 0;
  std::optional<CheckpointId> restored_from_;
  std::vector<int64_t> current_;
  std::map<uint64_t, std::vector<int64_t>> pending_;
  bool ended_ = false;
};

// source (2) -rebalance-> map (3) -hash(v)-> sink (2)
JobGraph CountingGraph(Shared* s) {
  JobGraph g;
  VertexId src = g.AddSource("numbers", 2,
                             [s](const TaskInfo& t) { return testing::Src<CountingSource>(s, t); });
  VertexId map =
      g.AddOperator("map", 3, [](const TaskInfo&) { return testing::Op<Passthrough>(); });
  VertexId sink =
      g.AddOperator("sink", 2, [s](const TaskInfo&) { return testing::Op<CommittingSink>(s); });
  g.Connect(src, map, Partitioning::Rebalance());
  g.Connect(map, sink, Partitioning::Hash({"v"}));
  return g;
}

LocalJobOptions Options(Shared* s, const std::string& dir) {
  LocalJobOptions o;
  o.job_id = "feedc0de00000000";
  o.checkpointing.dir = dir;
  o.checkpointing.num_retained = 2;
  o.timer_thread = false;
  o.channel_capacity = 4;
  o.idle_backoff = std::chrono::milliseconds(1);
  o.on_checkpoint_complete = [s](const CompletedCheckpointInfo& info) {
    s->last_completed = info.id.value;
    s->completed.Add();
  };
  return o;
}

std::vector<int64_t> Range(int64_t from, int64_t to) {
  std::vector<int64_t> v;
  for (int64_t i = from; i <= to; ++i) v.push_back(i);
  return v;
}

TEST(LocalJob, RestoreAfterCancelCommitsEveryValueExactlyOnce) {
  testing::TempDir tmp;
  Shared s;
  s.limit = 300;
  {
    auto job = LocalJob::Make(CountingGraph(&s), Options(&s, tmp.path())).ValueOrDie();
    ASSERT_TRUE(job->Start().ok());
    ASSERT_TRUE(s.processed.WaitFor(300));
    EXPECT_EQ(*job->TriggerCheckpoint(), CheckpointId(1));
    ASSERT_TRUE(s.completed.WaitFor(1));
    s.limit = 600;
    ASSERT_TRUE(s.processed.WaitFor(600));
    EXPECT_EQ(*job->TriggerCheckpoint(), CheckpointId(2));
    ASSERT_TRUE(s.completed.WaitFor(2));
    // Records past checkpoint 2 reach the sinks but are only staged...
    s.limit = 800;
    ASSERT_TRUE(s.processed.WaitFor(800));
    // ...when the job dies.
    job->Cancel();
    ASSERT_TRUE(job->Wait().ok());
    EXPECT_EQ(job->state(), JobState::kCancelled);
  }
  std::vector<int64_t> before = s.log.Sorted();
  EXPECT_LE(before.size(), 600u);
  if (!before.empty()) {
    EXPECT_LE(before.back(), 600);
  }

  // Restart from the latest completed checkpoint with the limit lifted.
  s.limit = INT64_MAX;
  auto opts = Options(&s, tmp.path());
  opts.restore_from = "latest";
  auto job = LocalJob::Make(CountingGraph(&s), std::move(opts)).ValueOrDie();
  EXPECT_EQ(job->restored_from(), CheckpointId(2));
  ASSERT_TRUE(job->Start().ok());
  ASSERT_TRUE(job->Wait().ok());
  EXPECT_EQ(job->state(), JobState::kFinished);
  EXPECT_GE(job->last_completed(), CheckpointId(3));  // ids continue above the restored one
  EXPECT_EQ(s.log.Sorted(), Range(1, 1000));
}

TEST(LocalJob, BoundedJobCommitsTheTailInAFinalCheckpoint) {
  Shared s;
  s.end = 100;
  auto opts = Options(&s, "");  // no directory: checkpoints still drive the commits
  auto job = LocalJob::Make(CountingGraph(&s), std::move(opts)).ValueOrDie();
  ASSERT_TRUE(job->Start().ok());
  ASSERT_TRUE(job->Wait().ok());
  EXPECT_EQ(job->state(), JobState::kFinished);
  EXPECT_EQ(s.log.Sorted(), Range(1, 100));
  EXPECT_EQ(job->last_completed(), CheckpointId(1));
  // Each sink subtask saw end of input before the final barrier.
  std::lock_guard lock(s.log.mu);
  ASSERT_EQ(s.log.events.size(), 4u);
  EXPECT_EQ(s.log.events[0], "end-of-input");
  EXPECT_EQ(s.log.events[3], "barrier-after-end 1");
}

TEST(LocalJob, RestoresFromASavepoint) {
  testing::TempDir tmp;
  Shared s;
  s.end = 500;
  s.limit = 250;
  std::string savepoint_dir;
  {
    auto opts = Options(&s, tmp.path());
    opts.on_checkpoint_complete = [&](const CompletedCheckpointInfo& info) {
      if (info.is_savepoint) savepoint_dir = info.dir;
      s.completed.Add();
    };
    auto job = LocalJob::Make(CountingGraph(&s), std::move(opts)).ValueOrDie();
    ASSERT_TRUE(job->Start().ok());
    ASSERT_TRUE(s.processed.WaitFor(250));
    ASSERT_TRUE(job->TriggerCheckpoint(/*is_savepoint=*/true).ok());
    ASSERT_TRUE(s.completed.WaitFor(1));
    job->Cancel();
    ASSERT_TRUE(job->Wait().ok());
  }
  ASSERT_FALSE(savepoint_dir.empty());
  EXPECT_EQ(savepoint_dir.find(tmp.path() + "/savepoints/savepoint-feedc0-"), 0u);
  s.limit = INT64_MAX;
  auto opts = Options(&s, tmp.path());
  opts.restore_from = savepoint_dir;
  auto job = LocalJob::Make(CountingGraph(&s), std::move(opts)).ValueOrDie();
  ASSERT_TRUE(job->Start().ok());
  ASSERT_TRUE(job->Wait().ok());
  EXPECT_EQ(s.log.Sorted(), Range(1, 500));
}

// How many sink subtasks were told checkpoint `id` completed.
size_t Delivered(CommitLog& log, uint64_t id) {
  std::lock_guard lock(log.mu);
  return static_cast<size_t>(std::count(log.delivered.begin(), log.delivered.end(), id));
}

// Flink 1.15+: an intermediate savepoint commits nothing. Failover restores from the newest
// checkpoint, so rows committed at a savepoint would be replayed from the checkpoint before it
// and land twice; the next checkpoint commits them instead.
TEST(LocalJob, SavepointCompletionIsNotDeliveredTheNextCheckpointCommitsIt) {
  testing::TempDir tmp;
  Shared s;
  s.limit = 200;
  auto job = LocalJob::Make(CountingGraph(&s), Options(&s, tmp.path())).ValueOrDie();
  ASSERT_TRUE(job->Start().ok());
  ASSERT_TRUE(s.processed.WaitFor(200));
  EXPECT_EQ(*job->TriggerCheckpoint(), CheckpointId(1));
  ASSERT_TRUE(s.notified.WaitFor(2));  // both sink subtasks
  EXPECT_EQ(s.log.Sorted(), Range(1, 200));

  s.limit = 400;
  ASSERT_TRUE(s.processed.WaitFor(400));
  EXPECT_EQ(*job->TriggerCheckpoint(/*is_savepoint=*/true), CheckpointId(2));
  ASSERT_TRUE(s.completed.WaitFor(2));
  s.limit = 600;
  ASSERT_TRUE(s.processed.WaitFor(600));
  EXPECT_EQ(*job->TriggerCheckpoint(), CheckpointId(3));
  ASSERT_TRUE(s.notified.WaitFor(4));
  // Each task handles its commands in order, so a delivered 2 would precede 3.
  EXPECT_EQ(Delivered(s.log, 2), 0u);
  EXPECT_EQ(Delivered(s.log, 3), 2u);
  // Checkpoint 3 subsumed the savepoint: its rows 201..400 are committed with 3's.
  EXPECT_EQ(s.log.Sorted(), Range(1, 600));
  job->Cancel();
  ASSERT_TRUE(job->Wait().ok());
}

// The duplicate scenario: checkpoint 1 completes, a savepoint completes, the job dies before
// the next checkpoint, failover restores from checkpoint 1 and replays what the savepoint
// covered. Every row lands exactly once.
TEST(LocalJob, FailoverAfterASavepointCommitsEveryRowOnce) {
  testing::TempDir tmp;
  Shared s;
  s.limit = 300;
  {
    auto job = LocalJob::Make(CountingGraph(&s), Options(&s, tmp.path())).ValueOrDie();
    ASSERT_TRUE(job->Start().ok());
    ASSERT_TRUE(s.processed.WaitFor(300));
    EXPECT_EQ(*job->TriggerCheckpoint(), CheckpointId(1));
    ASSERT_TRUE(s.notified.WaitFor(2));
    s.limit = 500;
    ASSERT_TRUE(s.processed.WaitFor(500));
    EXPECT_EQ(*job->TriggerCheckpoint(/*is_savepoint=*/true), CheckpointId(2));
    ASSERT_TRUE(s.completed.WaitFor(2));
    s.limit = 700;
    ASSERT_TRUE(s.processed.WaitFor(700));
    job->Cancel();  // dies before checkpoint 3
    ASSERT_TRUE(job->Wait().ok());
  }
  EXPECT_EQ(s.log.Sorted(), Range(1, 300));  // the savepoint committed nothing
  s.limit = INT64_MAX;
  auto opts = Options(&s, tmp.path());
  opts.restore_from = "latest";
  auto job = LocalJob::Make(CountingGraph(&s), std::move(opts)).ValueOrDie();
  EXPECT_EQ(job->restored_from(), CheckpointId(1));
  ASSERT_TRUE(job->Start().ok());
  ASSERT_TRUE(job->Wait().ok());
  EXPECT_EQ(s.log.Sorted(), Range(1, 1000));
  // The failover's ids continue above the savepoint's (2), never reusing it for other positions.
  EXPECT_EQ(job->last_completed(), CheckpointId(3));
}

// Stop-with-savepoint (Flink's): its savepoint is the job's last snapshot, so its completion
// IS delivered -- after on_checkpoint_complete returned with info.stop, so the process layer
// learns of it before any side effect is committed -- as final: every task commits it and
// finishes, the job ends by itself (no Cancel racing the commit, here a slow one of 200 ms).
// Resuming from it continues exactly there.
TEST(LocalJob, StopWithSavepointCommitsItThenTheJobFinishesAndResumesFromIt) {
  testing::TempDir tmp;
  Shared s;
  s.end = 600;
  s.limit = 200;
  std::string stop_dir;
  size_t delivered_before_callback = 99;
  {
    auto opts = Options(&s, tmp.path());
    opts.on_checkpoint_complete = [&](const CompletedCheckpointInfo& info) {
      if (info.stop) {
        stop_dir = info.dir;
        delivered_before_callback = Delivered(s.log, info.id.value);
      }
      s.completed.Add();
    };
    auto job = LocalJob::Make(CountingGraph(&s), std::move(opts)).ValueOrDie();
    ASSERT_TRUE(job->Start().ok());
    ASSERT_TRUE(s.processed.WaitFor(200));
    EXPECT_EQ(*job->TriggerCheckpoint(/*is_savepoint=*/true), CheckpointId(1));
    ASSERT_TRUE(s.completed.WaitFor(1));
    s.limit = 400;
    ASSERT_TRUE(s.processed.WaitFor(400));
    s.commit_delay_ms = 200;
    EXPECT_EQ(*job->TriggerStopWithSavepoint(), CheckpointId(2));
    // No checkpoint while stopping: it would commit past the savepoint.
    EXPECT_EQ(job->TriggerCheckpoint().status().code(), StatusCode::kUnavailable);
    // Records past the savepoint's barrier reach the sinks but are never committed.
    s.limit = 500;
    ASSERT_TRUE(job->Wait().ok());  // ends without Cancel
    EXPECT_EQ(job->state(), JobState::kFinished);
    EXPECT_EQ(delivered_before_callback, 0u);
    EXPECT_EQ(Delivered(s.log, 1), 0u);  // the plain savepoint: not delivered
    EXPECT_EQ(Delivered(s.log, 2), 2u);  // both sink subtasks committed before the job ended
    EXPECT_EQ(s.notified.value(), 2);
    // Both savepoints' rows are committed: 2 subsumes 1.
    EXPECT_EQ(s.log.Sorted(), Range(1, 400));
  }
  ASSERT_FALSE(stop_dir.empty());
  s.commit_delay_ms = 0;
  s.limit = INT64_MAX;
  auto opts = Options(&s, tmp.path());
  opts.restore_from = stop_dir;
  auto job = LocalJob::Make(CountingGraph(&s), std::move(opts)).ValueOrDie();
  ASSERT_TRUE(job->Start().ok());
  ASSERT_TRUE(job->Wait().ok());
  EXPECT_EQ(s.log.Sorted(), Range(1, 600));
}

// Defect found in review: periodic checkpoints (and the end-of-input final checkpoint) kept
// being triggered after the stop savepoint S, and one completing before the job went down
// committed past S, so resuming from S duplicated rows. With a 10 ms interval and an
// unthrottled source racing the stop: nothing above S is triggered or delivered, and resuming
// from S yields every row exactly once.
TEST(LocalJob, StopWithSavepointRacingPeriodicCheckpointsCommitsNothingPastIt) {
  testing::TempDir tmp;
  Shared s;
  s.end = 30000;
  std::mutex mu;
  std::vector<uint64_t> completed_ids;
  std::string stop_dir;
  CheckpointId stop_id;
  {
    auto opts = Options(&s, tmp.path());
    opts.timer_thread = true;
    opts.checkpointing.interval = std::chrono::milliseconds(10);
    opts.checkpointing.max_concurrent = 3;  // periodic ones may start while S is pending
    opts.on_checkpoint_complete = [&](const CompletedCheckpointInfo& info) {
      {
        std::lock_guard lock(mu);
        completed_ids.push_back(info.id.value);
        if (info.stop) stop_dir = info.dir;
      }
      s.completed.Add();
      // `floe worker` reports the stop savepoint to `floe run` here: a window in which the
      // timer would trigger (and the other tasks process) further checkpoints.
      if (info.stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    };
    auto job = LocalJob::Make(CountingGraph(&s), std::move(opts)).ValueOrDie();
    ASSERT_TRUE(job->Start().ok());
    ASSERT_TRUE(s.completed.WaitFor(3));  // periodic checkpoints are running
    auto id = job->TriggerStopWithSavepoint();
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    stop_id = *id;
    ASSERT_TRUE(job->Wait().ok());
    EXPECT_EQ(job->state(), JobState::kFinished);
  }
  ASSERT_FALSE(stop_dir.empty());
  EXPECT_EQ(s.max_snapshot.load(), stop_id.value) << "a checkpoint was triggered after the stop";
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(*std::max_element(completed_ids.begin(), completed_ids.end()), stop_id.value);
  }
  {
    std::lock_guard lock(s.log.mu);
    EXPECT_EQ(*std::max_element(s.log.delivered.begin(), s.log.delivered.end()), stop_id.value);
  }
  std::vector<int64_t> before = s.log.Sorted();
  ASSERT_FALSE(before.empty());
  EXPECT_LT(before.size(), 30000u) << "the source reached its end before the stop";
  auto opts = Options(&s, tmp.path());
  opts.restore_from = stop_dir;
  auto job = LocalJob::Make(CountingGraph(&s), std::move(opts)).ValueOrDie();
  ASSERT_TRUE(job->Start().ok());
  ASSERT_TRUE(job->Wait().ok());
  EXPECT_EQ(s.log.Sorted(), Range(1, 30000));
}

// A stop whose savepoint fails (here: times out) is no stop: the job runs on and periodic
// checkpoints resume, committing as usual.
TEST(LocalJob, AFailedStopSavepointLetsTheJobRunOnWithCheckpoints) {
  testing::TempDir tmp;
  Shared s;
  s.end = INT64_MAX;
  s.limit = 100;
  auto opts = Options(&s, tmp.path());
  opts.timer_thread = true;
  opts.checkpointing.interval = std::chrono::milliseconds(20);
  opts.checkpointing.timeout = std::chrono::milliseconds(1000);
  opts.checkpointing.tolerable_failed = 10;
  auto job = LocalJob::Make(CountingGraph(&s), std::move(opts)).ValueOrDie();
  ASSERT_TRUE(job->Start().ok());
  ASSERT_TRUE(s.completed.WaitFor(1));
  // Every checkpoint not completed yet times out from here, the stop's whatever id it gets.
  s.slow_from = job->last_completed().value + 1;
  auto stop = job->TriggerStopWithSavepoint();
  ASSERT_TRUE(stop.ok()) << stop.status().ToString();
  ASSERT_GE(stop->value, s.slow_from.load());
  // Once a sink sleeps on the stop's barrier (so the stop times out), later barriers are fast.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (s.slept_on.load() < stop->value && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_GE(s.slept_on.load(), stop->value) << "the stop's barrier never reached a sink";
  s.slow_from = 0;
  const int64_t before = s.completed.value();
  s.limit = 300;
  ASSERT_TRUE(s.completed.WaitFor(before + 2)) << "no checkpoint after the failed stop";
  EXPECT_GT(s.last_completed.load(), stop->value);
  EXPECT_EQ(Delivered(s.log, stop->value), 0u);
  EXPECT_EQ(job->state(), JobState::kRunning);
  // A second stop is accepted and this time ends the job.
  s.slow_from = 0;
  auto again = job->TriggerStopWithSavepoint();
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_TRUE(job->Wait().ok());
  EXPECT_EQ(job->state(), JobState::kFinished);
  EXPECT_EQ(Delivered(s.log, again->value), 2u);
}

// Records the end of an operator's life; fails in OnBarrier(fail_at) (0: never).
struct Lifecycle {
  std::mutex mu;
  std::vector<std::string> events;
  void Add(std::string e) {
    std::lock_guard lock(mu);
    events.push_back(std::move(e));
  }
};
class LifecycleOp final : public Operator {
 public:
  LifecycleOp(Lifecycle* l, std::string name, uint64_t fail_at)
      : l_(l), name_(std::move(name)), fail_at_(fail_at) {}
  Status ProcessBatch(const RecordBatch& b, int, Collector& out) override {
    return out.Emit(RecordBatch(b));
  }
  Status OnBarrier(CheckpointId id, StateWriter&, Collector&) override {
    if (id.value == fail_at_) return Status::IOError("no space left on device");
    return Status::OK();
  }
  Status Close() override {
    l_->Add(name_ + " close");
    return Status::OK();
  }
  void Abandon(CheckpointId last_completed) override {
    l_->Add(name_ + " abandon " + last_completed.ToString());
  }

 private:
  Lifecycle* l_;
  std::string name_;
  uint64_t fail_at_;
};

// numbers (1) -> a (fails in OnBarrier(fail_at)) -> b
JobGraph LifecycleGraph(Shared* s, Lifecycle* l, uint64_t fail_at) {
  JobGraph g;
  VertexId src = g.AddSource("numbers", 1,
                             [s](const TaskInfo& t) { return testing::Src<CountingSource>(s, t); });
  VertexId a = g.AddOperator(
      "a", 1, [l, fail_at](const TaskInfo&) { return testing::Op<LifecycleOp>(l, "a", fail_at); });
  VertexId b =
      g.AddOperator("b", 1, [l](const TaskInfo&) { return testing::Op<LifecycleOp>(l, "b", 0); });
  g.Connect(src, a, Partitioning::Forward());
  g.Connect(a, b, Partitioning::Forward());
  return g;
}

// A failed run tells every operator, once all tasks ended, the highest checkpoint or savepoint
// that may have completed: what was staged above it can be thrown away (Operator::Abandon).
TEST(LocalJob, AFailedRunAbandonsEveryOperatorAboveTheLastCompletedCheckpointOrSavepoint) {
  testing::TempDir tmp;
  Shared s;
  s.end = INT64_MAX;
  s.limit = 100;
  Lifecycle l;
  auto job = LocalJob::Make(LifecycleGraph(&s, &l, 3), Options(&s, tmp.path())).ValueOrDie();
  ASSERT_TRUE(job->Start().ok());
  EXPECT_EQ(*job->TriggerCheckpoint(), CheckpointId(1));
  ASSERT_TRUE(s.completed.WaitFor(1));
  EXPECT_EQ(*job->TriggerCheckpoint(/*is_savepoint=*/true), CheckpointId(2));
  ASSERT_TRUE(s.completed.WaitFor(2));
  EXPECT_EQ(*job->TriggerCheckpoint(), CheckpointId(3));  // 'a' fails on its barrier
  Status st = job->Wait();
  EXPECT_NE(st.ToString().find("no space left on device"), std::string::npos) << st.ToString();
  EXPECT_EQ(job->state(), JobState::kFailed);
  std::lock_guard lock(l.mu);
  ASSERT_EQ(l.events.size(), 4u);
  for (const std::string name : {"a", "b"}) {
    auto close = std::find(l.events.begin(), l.events.end(), name + " close");
    auto abandon = std::find(l.events.begin(), l.events.end(), name + " abandon 2");
    ASSERT_NE(close, l.events.end()) << name;
    ASSERT_NE(abandon, l.events.end()) << name;
    EXPECT_LT(close, abandon) << name;
  }
}

TEST(LocalJob, AFinishedRunAbandonsNothingACancelledOneAbandonsAboveItsLastCheckpoint) {
  Shared s;
  s.end = 50;
  Lifecycle finished;
  {
    auto job = LocalJob::Make(LifecycleGraph(&s, &finished, 0), Options(&s, "")).ValueOrDie();
    ASSERT_TRUE(job->Start().ok());
    ASSERT_TRUE(job->Wait().ok());
    EXPECT_EQ(job->state(), JobState::kFinished);
  }
  std::sort(finished.events.begin(), finished.events.end());
  EXPECT_EQ(finished.events, (std::vector<std::string>{"a close", "b close"}));

  Shared c;
  c.end = INT64_MAX;
  c.limit = 100;
  Lifecycle cancelled;
  auto job = LocalJob::Make(LifecycleGraph(&c, &cancelled, 0), Options(&c, "")).ValueOrDie();
  ASSERT_TRUE(job->Start().ok());
  EXPECT_EQ(*job->TriggerCheckpoint(), CheckpointId(1));
  ASSERT_TRUE(c.completed.WaitFor(1));
  job->Cancel();
  ASSERT_TRUE(job->Wait().ok());
  std::lock_guard lock(cancelled.mu);
  EXPECT_EQ(std::count(cancelled.events.begin(), cancelled.events.end(), "a abandon 1"), 1);
  EXPECT_EQ(std::count(cancelled.events.begin(), cancelled.events.end(), "b abandon 1"), 1);
}

TEST(LocalJob, RestoreFromLatestWithoutCheckpointIsNotFound) {
  testing::TempDir tmp;
  Shared s;
  auto opts = Options(&s, tmp.path());
  opts.restore_from = "latest";
  auto job = LocalJob::Make(CountingGraph(&s), std::move(opts));
  ASSERT_FALSE(job.ok());
  EXPECT_TRUE(job.status().IsNotFound()) << job.status().ToString();
}

TEST(LocalJob, RejectsInvalidCheckpointConfigAtStart) {
  Shared s;
  auto opts = Options(&s, "");
  opts.checkpointing.timeout = std::chrono::milliseconds(0);
  auto job = LocalJob::Make(CountingGraph(&s), std::move(opts));
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("timeout must be > 0"), std::string::npos);
}

TEST(LocalJob, PeriodicCheckpointsRunOnTheTimer) {
  testing::TempDir tmp;
  Shared s;
  s.end = 200;
  s.limit = 100;
  auto opts = Options(&s, tmp.path());
  opts.timer_thread = true;
  opts.checkpointing.interval = std::chrono::milliseconds(10);
  auto job = LocalJob::Make(CountingGraph(&s), std::move(opts)).ValueOrDie();
  ASSERT_TRUE(job->Start().ok());
  ASSERT_TRUE(s.completed.WaitFor(2));  // at least two periodic checkpoints while idle
  s.limit = INT64_MAX;
  ASSERT_TRUE(job->Wait().ok());
  EXPECT_EQ(s.log.Sorted(), Range(1, 200));
}

// ---- keyed state owned by the runtime, incremental checkpoints ------------------------------

// v -> k = v % 40.
class ModKey final : public Operator {
 public:
  Status ProcessBatch(const RecordBatch& b, int, Collector& out) override {
    static const auto kSchema = testing::Int64Schema({"k"});
    RecordBatch keys(kSchema);
    for (int64_t v : Int64Values(b)) keys.mutable_column(0).Append<int64_t>(v % 40);
    return out.Emit(std::move(keys));
  }
};

// What the summing operators' state held at each barrier, by checkpoint id and key.
struct SumsAtBarrier {
  std::mutex mu;
  std::map<uint64_t, std::map<int64_t, int64_t>> sums;
};

// The number of rows per key k, in the runtime's keyed state (one value state per key); records
// at each barrier what its state holds (the test's own bookkeeping, not floe's).
class CountPerKey final : public Operator {
 public:
  explicit CountPerKey(SumsAtBarrier* out) : out_(out) {}
  Status Open(const OperatorContext& ctx) override {
    keyed_ = ctx.keyed_state;
    FLOE_ASSIGN_OR_RAISE(count_, keyed_->GetValueState("count"));
    return Status::OK();
  }
  Status RestoreRescaled(const std::vector<std::string>&) override { return Status::OK(); }
  Status ProcessBatch(const RecordBatch& b, int, Collector&) override {
    for (size_t row = 0; row < b.num_rows(); ++row) {
      const int64_t k = b.column(0).Get<int64_t>(row);
      FLOE_RETURN_NOT_OK(keyed_->SetCurrentKey(std::to_string(k), HashKeyRow(b, {0}, row)));
      std::string bytes;
      FLOE_ASSIGN_OR_RAISE(bool has, count_.Get(&bytes));
      const int64_t n = (has ? std::stoll(bytes) : 0) + 1;
      FLOE_RETURN_NOT_OK(count_.Update(std::to_string(n)));
      mirror_[k] = n;
    }
    return Status::OK();
  }
  Status OnBarrier(CheckpointId id, StateWriter&, Collector&) override {
    std::lock_guard lock(out_->mu);
    auto& at = out_->sums[id.value];
    for (const auto& [k, n] : mirror_) at[k] = n;
    return Status::OK();
  }

 private:
  SumsAtBarrier* out_;
  KeyedStateBackend* keyed_ = nullptr;
  ValueState count_;
  std::map<int64_t, int64_t> mirror_;
};

// Every checkpoint that retention kept restores, on a backend of its own, exactly the counts its
// barrier saw: incremental RocksDB checkpoints list the shared files they need and retention
// deleted none of them; a full hashmap job the same through the canonical layout.
void EveryRetainedCheckpointRestores(const std::string& backend, bool incremental) {
  testing::TempDir tmp;
  Shared s;
  s.end = 6000;
  SumsAtBarrier sums;
  KeyedStateOptions keyed;
  keyed.backend = backend;
  JobGraph g;
  VertexId src = g.AddSource(
      "numbers", 1, [&s](const TaskInfo& t) { return testing::Src<CountingSource>(&s, t); });
  VertexId mod = g.AddOperator("mod", 1, [](const TaskInfo&) { return testing::Op<ModKey>(); });
  VertexId count = g.AddOperator(
      "count", 1, [&sums](const TaskInfo&) { return testing::Op<CountPerKey>(&sums); });
  g.SetKeyedState(count, keyed);
  g.Connect(src, mod, Partitioning::Forward());
  g.Connect(mod, count, Partitioning::Hash({"k"}));
  auto opts = Options(&s, tmp.path());
  opts.timer_thread = true;
  opts.checkpointing.interval = std::chrono::milliseconds(10);
  opts.checkpointing.num_retained = 3;
  opts.checkpointing.incremental = incremental;
  s.limit = 0;
  auto job = LocalJob::Make(g, std::move(opts)).ValueOrDie();
  ASSERT_TRUE(job->Start().ok());
  for (int64_t limit = 100; limit <= s.end; limit += 100) {  // a little at a time
    const int64_t before = s.completed.value();
    s.limit = limit;
    ASSERT_TRUE(s.completed.WaitFor(before + 1));
  }
  ASSERT_TRUE(job->Wait().ok()) << job->Wait().ToString();

  CheckpointStorage::Options so;
  so.checkpoint_dir = tmp.path();
  so.num_retained = 3;
  auto storage = CheckpointStorage::Make(std::move(so)).ValueOrDie();
  auto ids = storage->ListCompleted().ValueOrDie();
  ASSERT_EQ(ids.size(), 3u);
  for (CheckpointId id : ids) {
    SCOPED_TRACE("checkpoint " + id.ToString());
    auto loaded = storage->Load(id);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    if (incremental) {
      EXPECT_FALSE(loaded->task_shared.empty());
    }
    auto parts = ParseKeyedTaskState(loaded->task_states.at("count/0")).ValueOrDie();
    ASSERT_TRUE(parts.has_value());
    KeyedStateOptions o = keyed;
    o.shared_state = storage->shared_state();
    auto restored = KeyedStateBackend::Make(o).ValueOrDie();
    StateReader reader(parts->keyed_state);
    ASSERT_TRUE(restored->Restore(reader).ok());
    ValueState v = *restored->GetValueState("count");
    std::map<int64_t, int64_t> expected;
    {
      std::lock_guard lock(sums.mu);
      expected = sums.sums.at(id.value);
    }
    ASSERT_FALSE(expected.empty());
    for (int64_t k = 0; k < 40; ++k) {
      const std::string key = std::to_string(k);
      RecordBatch one = Int64Batch({k});
      ASSERT_TRUE(restored->SetCurrentKey(key, HashKeyRow(one, {0}, 0)).ok());
      std::string bytes;
      const bool has = v.Get(&bytes).ValueOrDie();
      auto it = expected.find(k);
      EXPECT_EQ(has, it != expected.end()) << k;
      if (has && it != expected.end()) {
        EXPECT_EQ(std::stoll(bytes), it->second) << k;
      }
    }
  }
}

TEST(LocalJob, EveryRetainedIncrementalRocksDbCheckpointRestoresItsBarriersState) {
  EveryRetainedCheckpointRestores("rocksdb", true);
}

TEST(LocalJob, EveryRetainedHashMapCheckpointRestoresItsBarriersState) {
  EveryRetainedCheckpointRestores("hashmap", false);
}

}  // namespace
}  // namespace floe::runtime

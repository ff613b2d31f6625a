#include "floe/runtime/checkpoint_coordinator.h"

#include <gtest/gtest.h>

#include "floe/io/file.h"
#include "floe/runtime/test_util.h"

namespace floe::runtime {
namespace {

using std::chrono::milliseconds;

const std::vector<std::string> kTasks = {"src/0", "sink/0"};

std::unique_ptr<CheckpointCoordinator> Make(const CheckpointConfig& config, FakeClock* clock,
                                            CheckpointId floor = CheckpointId(),
                                            CheckpointStorage* storage = nullptr) {
  CheckpointCoordinator::Options o;
  o.config = config;
  o.tasks = kTasks;
  o.floor = floor;
  o.clock = clock;
  o.storage = storage;
  auto c = CheckpointCoordinator::Make(std::move(o));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return std::move(c).ValueOrDie();
}

TaskStateHandle Handle(const std::string& task) { return TaskStateHandle{task, "", 0, 0}; }

// Acks `id` from every task; returns the completion.
std::optional<CompletedCheckpointInfo> AckAll(CheckpointCoordinator& c, CheckpointId id,
                                              bool end_of_input = false) {
  std::optional<CompletedCheckpointInfo> done;
  for (const auto& t : kTasks) {
    auto r = c.Acknowledge(id, Handle(t), end_of_input);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (r.ok() && *r) done = *r;
  }
  return done;
}

std::optional<CheckpointId> Tick(CheckpointCoordinator& c) {
  auto t = c.MaybeTriggerPeriodic();
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok() || !*t) return std::nullopt;
  return (*t)->id;
}

TEST(CheckpointCoordinator, TriggersEveryInterval) {
  FakeClock clock(10'000);
  CheckpointConfig cfg;
  cfg.interval = milliseconds(1000);
  auto c = Make(cfg, &clock);
  EXPECT_EQ(Tick(*c), std::nullopt);
  EXPECT_EQ(c->NextWakeupMillis(), 11'000);
  clock.Advance(milliseconds(999));
  EXPECT_EQ(Tick(*c), std::nullopt);
  clock.Advance(milliseconds(1));
  EXPECT_EQ(Tick(*c), CheckpointId(1));
  auto done = AckAll(*c, CheckpointId(1));
  ASSERT_TRUE(done);
  EXPECT_EQ(done->id, CheckpointId(1));
  EXPECT_FALSE(done->final);
  EXPECT_EQ(c->last_completed(), CheckpointId(1));
  clock.Advance(milliseconds(500));
  EXPECT_EQ(Tick(*c), std::nullopt);
  clock.Advance(milliseconds(500));
  EXPECT_EQ(Tick(*c), CheckpointId(2));
}

TEST(CheckpointCoordinator, NoPeriodicCheckpointsWithoutInterval) {
  FakeClock clock;
  auto c = Make(CheckpointConfig{}, &clock);
  clock.Advance(milliseconds(1'000'000));
  EXPECT_EQ(Tick(*c), std::nullopt);
  EXPECT_EQ(c->NextWakeupMillis(), std::nullopt);
  EXPECT_EQ(c->TriggerNow(false)->id, CheckpointId(1));  // final/savepoint still possible
}

TEST(CheckpointCoordinator, MaxConcurrentBoundsPendingCheckpoints) {
  FakeClock clock;
  CheckpointConfig cfg;
  cfg.interval = milliseconds(100);
  cfg.max_concurrent = 2;
  auto c = Make(cfg, &clock);
  clock.Advance(milliseconds(100));
  EXPECT_EQ(Tick(*c), CheckpointId(1));
  clock.Advance(milliseconds(100));
  EXPECT_EQ(Tick(*c), CheckpointId(2));
  clock.Advance(milliseconds(100));
  EXPECT_EQ(Tick(*c), std::nullopt);  // two pending
  EXPECT_EQ(c->num_pending(), 2u);
  ASSERT_TRUE(AckAll(*c, CheckpointId(1)));
  EXPECT_EQ(Tick(*c), CheckpointId(3));
}

TEST(CheckpointCoordinator, MinPauseSeparatesCheckpoints) {
  FakeClock clock;
  CheckpointConfig cfg;
  cfg.interval = milliseconds(100);
  cfg.min_pause = milliseconds(500);
  cfg.max_concurrent = 5;  // min-pause implies one at a time anyway
  auto c = Make(cfg, &clock);
  clock.Set(100);
  EXPECT_EQ(Tick(*c), CheckpointId(1));
  clock.Set(200);
  EXPECT_EQ(Tick(*c), std::nullopt);  // one pending
  clock.Set(250);
  ASSERT_TRUE(AckAll(*c, CheckpointId(1)));
  clock.Set(300);
  EXPECT_EQ(Tick(*c), std::nullopt);
  EXPECT_EQ(c->NextWakeupMillis(), 750);
  clock.Set(749);
  EXPECT_EQ(Tick(*c), std::nullopt);
  clock.Set(750);
  EXPECT_EQ(Tick(*c), CheckpointId(2));
}

// What the monitoring shows of a checkpoint (docs/monitoring.md): trigger to completion on the
// coordinator's clock, the task states' bytes, the longest alignment; failures counted.
TEST(CheckpointCoordinator, CompletionCarriesDurationSizeAndTheLongestTaskTimes) {
  FakeClock clock;
  CheckpointConfig cfg;
  cfg.timeout = milliseconds(1000);
  cfg.tolerable_failed = 5;
  Metric failed;
  CheckpointCoordinator::Options o;
  o.config = cfg;
  o.tasks = kTasks;
  o.clock = &clock;
  o.failed_checkpoints = &failed;
  auto c = CheckpointCoordinator::Make(std::move(o)).ValueOrDie();
  CheckpointId id = c->TriggerNow(false)->id;
  clock.Advance(milliseconds(250));
  ASSERT_TRUE(c->Acknowledge(id, TaskStateHandle{"src/0", "", 100, 0}, false, {0, 30, 9000}).ok());
  auto done = c->Acknowledge(id, TaskStateHandle{"sink/0", "", 50, 0}, false, {700, 20, 100});
  ASSERT_TRUE(done.ok() && *done);
  EXPECT_EQ((*done)->duration_millis, 250);
  EXPECT_EQ((*done)->size_bytes, 150u);
  EXPECT_EQ((*done)->alignment_micros, 700);
  EXPECT_EQ((*done)->sync_micros, 30);     // the longest of any task, as Flink's statistics
  EXPECT_EQ((*done)->sync_task, "src/0");  // and which task the stream waited for
  EXPECT_EQ((*done)->async_micros, 9000);
  EXPECT_EQ(failed.value(), 0);
  ASSERT_TRUE(c->TriggerNow(false).ok());
  clock.Advance(milliseconds(1000));
  ASSERT_TRUE(c->CheckTimeouts().ok());
  EXPECT_EQ(failed.value(), 1);
}

TEST(CheckpointCoordinator, TimeoutAbortsAndTolerableFailuresFailTheJob) {
  FakeClock clock;
  CheckpointConfig cfg;
  cfg.timeout = milliseconds(1000);
  cfg.tolerable_failed = 1;
  auto c = Make(cfg, &clock);
  CheckpointId first = c->TriggerNow(false)->id;
  ASSERT_TRUE(c->Acknowledge(first, Handle("src/0"), false).ok());
  EXPECT_EQ(c->NextWakeupMillis(), 1000);
  clock.Advance(milliseconds(999));
  EXPECT_TRUE(c->CheckTimeouts().ok());
  EXPECT_EQ(c->num_pending(), 1u);
  clock.Advance(milliseconds(1));
  EXPECT_TRUE(c->CheckTimeouts().ok());  // 1 failure is tolerated
  EXPECT_EQ(c->num_pending(), 0u);
  EXPECT_EQ(c->consecutive_failures(), 1);
  // The late ack of the expired checkpoint is ignored.
  auto late = c->Acknowledge(first, Handle("sink/0"), false);
  ASSERT_TRUE(late.ok());
  EXPECT_FALSE(*late);

  CheckpointId second = c->TriggerNow(false)->id;
  EXPECT_EQ(second, CheckpointId(2));
  clock.Advance(milliseconds(1000));
  Status st = c->CheckTimeouts();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("checkpoint 2 failed: expired after 1000 ms"), std::string::npos)
      << st.ToString();
  EXPECT_NE(st.message().find("2 consecutive failed checkpoints exceed "
                              "execution.checkpointing.tolerable-failed-checkpoints=1"),
            std::string::npos)
      << st.ToString();
}

TEST(CheckpointCoordinator, CompletionResetsTheFailureCount) {
  FakeClock clock;
  CheckpointConfig cfg;
  cfg.timeout = milliseconds(10);
  cfg.tolerable_failed = 1;
  auto c = Make(cfg, &clock);
  for (int round = 0; round < 3; ++round) {
    c->TriggerNow(false).ValueOrDie();
    clock.Advance(milliseconds(10));
    ASSERT_TRUE(c->CheckTimeouts().ok()) << round;
    CheckpointId ok = c->TriggerNow(false)->id;
    ASSERT_TRUE(AckAll(*c, ok));
    EXPECT_EQ(c->consecutive_failures(), 0);
  }
}

TEST(CheckpointCoordinator, DeclineCountsAsFailure) {
  FakeClock clock;
  auto c = Make(CheckpointConfig{}, &clock);
  CheckpointId id = c->TriggerNow(false)->id;
  Status st = c->Decline(id, Status::IOError("disk full"));
  EXPECT_FALSE(st.ok());  // tolerable 0
  EXPECT_NE(st.message().find("disk full"), std::string::npos);
}

TEST(CheckpointCoordinator, SavepointFailuresDoNotFailTheJob) {
  FakeClock clock;
  CheckpointConfig cfg;
  cfg.timeout = milliseconds(10);
  auto c = Make(cfg, &clock);
  c->TriggerNow(true).ValueOrDie();
  clock.Advance(milliseconds(10));
  EXPECT_TRUE(c->CheckTimeouts().ok());
  EXPECT_EQ(c->consecutive_failures(), 0);
}

TEST(CheckpointCoordinator, IdsStartAboveTheFloor) {
  FakeClock clock;
  auto c = Make(CheckpointConfig{}, &clock, CheckpointId(41));
  EXPECT_EQ(c->TriggerNow(false)->id, CheckpointId(42));
  EXPECT_EQ(c->TriggerNow(true)->id, CheckpointId(43));
}

TEST(CheckpointCoordinator, FinalWhenEveryAckSawEndOfInput) {
  FakeClock clock;
  auto c = Make(CheckpointConfig{}, &clock);
  CheckpointId a = c->TriggerNow(false)->id;
  ASSERT_TRUE(c->Acknowledge(a, Handle("src/0"), true).ok());
  auto done = c->Acknowledge(a, Handle("sink/0"), false);
  ASSERT_TRUE(done.ok() && *done);
  EXPECT_FALSE((*done)->final);
  CheckpointId b = c->TriggerNow(false)->id;
  auto fin = AckAll(*c, b, true);
  ASSERT_TRUE(fin);
  EXPECT_TRUE(fin->final);
}

TEST(CheckpointCoordinator, CompletionSubsumesOlderPending) {
  FakeClock clock;
  auto c = Make(CheckpointConfig{}, &clock);
  CheckpointId a = c->TriggerNow(false)->id;
  CheckpointId b = c->TriggerNow(false)->id;
  ASSERT_TRUE(AckAll(*c, b));
  EXPECT_EQ(c->num_pending(), 0u);
  EXPECT_EQ(c->consecutive_failures(), 0);
  EXPECT_FALSE(c->LocationOf(a));
}

TEST(CheckpointCoordinator, AbortAllPendingDoesNotCountFailures) {
  FakeClock clock;
  auto c = Make(CheckpointConfig{}, &clock);
  CheckpointId a = c->TriggerNow(false)->id;
  c->TriggerNow(false).ValueOrDie();
  ASSERT_TRUE(c->AbortAllPending("worker lost").ok());
  EXPECT_EQ(c->num_pending(), 0u);
  EXPECT_EQ(c->consecutive_failures(), 0);
  EXPECT_FALSE(*c->Acknowledge(a, Handle("src/0"), false));
  EXPECT_EQ(c->TriggerNow(false)->id, CheckpointId(3));  // ids never repeat
}

TEST(CheckpointCoordinator, RejectsAcksFromUnknownTasks) {
  FakeClock clock;
  auto c = Make(CheckpointConfig{}, &clock);
  CheckpointId a = c->TriggerNow(false)->id;
  EXPECT_TRUE(c->Acknowledge(a, Handle("stranger/0"), false).status().IsInvalidArgument());
}

TEST(CheckpointCoordinator, WritesMetadataOnlyWhenAllAcksArrived) {
  testing::TempDir tmp;
  CheckpointStorage::Options so;
  so.checkpoint_dir = tmp.path();
  auto storage = CheckpointStorage::Make(so).ValueOrDie();
  FakeClock clock;
  auto c = Make(CheckpointConfig{}, &clock, CheckpointId(), storage.get());
  CheckpointTrigger t = c->TriggerNow(false).ValueOrDie();
  auto h =
      CheckpointStorage::WriteTaskState(io::FileIO(), t.location, "src/0", "pos=5").ValueOrDie();
  ASSERT_TRUE(c->Acknowledge(t.id, h, false).ok());
  EXPECT_FALSE(*storage->LatestCompleted());
  auto h2 =
      CheckpointStorage::WriteTaskState(io::FileIO(), t.location, "sink/0", "staged").ValueOrDie();
  auto done = c->Acknowledge(t.id, h2, false);
  ASSERT_TRUE(done.ok() && *done);
  EXPECT_EQ(*storage->LatestCompleted(), t.id);
  auto loaded = storage->Load(t.id).ValueOrDie();
  EXPECT_EQ(loaded.task_states.at("src/0"), "pos=5");
}

// The tester's case: an older checkpoint that cannot be deleted made every new one "failed"
// although its `_metadata` was on disk, and the job failed after its restarts.
TEST(CheckpointCoordinator, ACheckpointStaysCompletedWhenAnOlderOneCannotBeDeleted) {
  testing::TempDir tmp;
  CheckpointStorage::Options so;
  so.checkpoint_dir = tmp.path();
  auto storage = CheckpointStorage::Make(so).ValueOrDie();
  FakeClock clock;
  CheckpointConfig cfg;
  cfg.tolerable_failed = 0;
  auto c = Make(cfg, &clock, CheckpointId(), storage.get());
  CheckpointTrigger first = c->TriggerNow(false).ValueOrDie();
  ASSERT_TRUE(AckAll(*c, first.id));
  // `_metadata` of the first becomes something its deletion cannot remove.
  const std::string meta = first.location.dir + "/_metadata";
  ASSERT_TRUE(io::RemoveFile(meta).ok());
  ASSERT_TRUE(io::CreateDirs(meta + "/stuck").ok());
  for (int i = 0; i < 3; ++i) {
    CheckpointTrigger t = c->TriggerNow(false).ValueOrDie();
    auto done = AckAll(*c, t.id);
    ASSERT_TRUE(done) << "checkpoint " << t.id.ToString() << " not completed";
    EXPECT_EQ(c->last_completed(), t.id);
    EXPECT_NE(done->warning.find("could not be cleaned up"), std::string::npos) << done->warning;
    EXPECT_EQ(*storage->LatestCompleted(), t.id);
  }
  EXPECT_EQ(c->consecutive_failures(), 0);
}

TEST(CheckpointCoordinator, TimedOutCheckpointLeavesNoDirectory) {
  testing::TempDir tmp;
  CheckpointStorage::Options so;
  so.checkpoint_dir = tmp.path();
  auto storage = CheckpointStorage::Make(so).ValueOrDie();
  FakeClock clock;
  CheckpointConfig cfg;
  cfg.timeout = milliseconds(5);
  cfg.tolerable_failed = 5;
  auto c = Make(cfg, &clock, CheckpointId(), storage.get());
  CheckpointTrigger t = c->TriggerNow(false).ValueOrDie();
  clock.Advance(milliseconds(5));
  ASSERT_TRUE(c->CheckTimeouts().ok());
  EXPECT_FALSE(io::Exists(t.location.dir));
}

TEST(CheckpointCoordinator, RetentionOnCancellation) {
  for (auto retention :
       {CheckpointRetention::kRetainOnCancellation, CheckpointRetention::kDeleteOnCancellation}) {
    testing::TempDir tmp;
    CheckpointStorage::Options so;
    so.checkpoint_dir = tmp.path();
    auto storage = CheckpointStorage::Make(so).ValueOrDie();
    FakeClock clock;
    CheckpointConfig cfg;
    cfg.retention = retention;
    auto c = Make(cfg, &clock, CheckpointId(), storage.get());
    CheckpointTrigger t = c->TriggerNow(false).ValueOrDie();
    for (const auto& task : kTasks) {
      auto h = CheckpointStorage::WriteTaskState(io::FileIO(), t.location, task, "x").ValueOrDie();
      ASSERT_TRUE(c->Acknowledge(t.id, h, false).ok());
    }
    ASSERT_TRUE(c->OnJobCancelled().ok());
    EXPECT_EQ(storage->LatestCompleted()->has_value(),
              retention == CheckpointRetention::kRetainOnCancellation);
  }
}

}  // namespace
}  // namespace floe::runtime

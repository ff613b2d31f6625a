#include "floe/connectors/iceberg/iceberg_sink.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "floe/common/log.h"
#include "floe/common/undeclared_fields.h"
#include "floe/connectors/connectors_test_util.h"
#include "floe/connectors/iceberg/iceberg_committer_operator.h"
#include "floe/connectors/iceberg/iceberg_sink_internal.h"
#include "floe/connectors/iceberg/iceberg_writer_operator.h"
#include "floe/connectors/iceberg/routed_sink.h"
#include "floe/connectors/iceberg/table_maintenance.h"
#include "floe/connectors/partition_claims.h"
#include "floe/iceberg/catalog.h"
#include "floe/iceberg/manifest_io.h"
#include "floe/iceberg/scan.h"
#include "floe/iceberg/snapshot_update.h"
#include "floe/io/file.h"
#include "floe/runtime/checkpoint_storage.h"
#include "floe/runtime/local_job.h"
#include "floe/runtime/row_kind.h"
#include "floe/runtime/source_positions.h"
#include "floe/runtime/test_util.h"
#include "floe/verify/table_verify.h"

namespace floe::connectors {
namespace {

using runtime::CheckpointId;
using runtime::testing::Counter;
using runtime::testing::TempDir;

#define ASSERT_OK(expr)                                       \
  do {                                                        \
    ::floe::Status _st = (expr);                              \
    ASSERT_TRUE(_st.ok()) << #expr << ": " << _st.ToString(); \
  } while (false)

#define ASSERT_OK_AND_ASSIGN(lhs, rexpr)                                      \
  auto FLOE_CONCAT_(_res_, __LINE__) = (rexpr);                               \
  ASSERT_TRUE(FLOE_CONCAT_(_res_, __LINE__).ok())                             \
      << #rexpr << ": " << FLOE_CONCAT_(_res_, __LINE__).status().ToString(); \
  lhs = std::move(FLOE_CONCAT_(_res_, __LINE__)).value()

// seq BIGINT NOT NULL, k BIGINT NOT NULL, v STRING; ids 1..3.
std::shared_ptr<const BatchSchema> SeqSchema() {
  static const auto kSchema = [] {
    auto s = std::make_shared<BatchSchema>();
    s->fields = {Field{"seq", DataType::Int64(), false, 1}, Field{"k", DataType::Int64(), false, 2},
                 Field{"v", DataType::String(), true, 3}};
    return s;
  }();
  return kSchema;
}

RecordBatch SeqRows(int64_t from, int64_t to, int64_t keys) {
  RecordBatch b(SeqSchema());
  for (int64_t s = from; s <= to; ++s) {
    b.mutable_column(0).Append<int64_t>(s);
    b.mutable_column(1).Append<int64_t>(keys > 0 ? s % keys : s);
    b.mutable_column(2).AppendBytes("v" + std::to_string(s));
  }
  return b;
}

// What the test source and the test share.
struct Feed {
  std::atomic<int64_t> limit{0};          // emit seq <= limit, then idle (start: nothing)
  std::atomic<int64_t> end{1000};         // last seq
  int64_t keys = 0;                       // k = seq % keys (0: k = seq)
  Counter emitted;                        // value = highest seq emitted
  std::atomic<int64_t> first_emitted{0};  // first seq this run emitted
  std::shared_ptr<runtime::SourcePositionBoard> board =
      std::make_shared<runtime::SourcePositionBoard>();
};

// Emits seq 1..end in batches of up to 40 rows; position {"next_seq":N} in its state and on
// the board; honours the board's start override (the table's positions).
class SeqSource final : public runtime::SourceOperator {
 public:
  explicit SeqSource(Feed* feed) : feed_(feed) {}
  Status Open(const runtime::OperatorContext& ctx) override {
    task_ = ctx.task.name();
    return Status::OK();
  }
  Status Restore(runtime::StateReader& r) override {
    FLOE_ASSIGN_OR_RAISE(next_, r.GetI64());
    return r.ExpectEnd();
  }
  Result<runtime::SourceStatus> Poll(runtime::Collector& out) override {
    if (!started_) {
      started_ = true;
      if (auto override_position = feed_->board->StartOverride(task_)) {
        auto j = nlohmann::json::parse(*override_position, nullptr, false);
        if (j.is_discarded() || !j.contains("next_seq")) {
          return Status::InvalidArgument("bad override " + *override_position);
        }
        next_ = j["next_seq"].get<int64_t>();
      }
    }
    if (next_ > feed_->end.load()) return runtime::SourceStatus::kEnd;
    int64_t last = std::min({next_ + 39, feed_->end.load(), feed_->limit.load()});
    if (last < next_) return runtime::SourceStatus::kIdle;
    if (feed_->first_emitted.load() == 0) feed_->first_emitted = next_;
    FLOE_RETURN_NOT_OK(out.Emit(SeqRows(next_, last, feed_->keys)));
    next_ = last + 1;
    int64_t before = feed_->emitted.value();
    if (last > before) feed_->emitted.Add(last - before);
    return runtime::SourceStatus::kMore;
  }
  Status SnapshotPosition(CheckpointId id, runtime::StateWriter& w) override {
    w.PutI64(next_);
    feed_->board->Record(id, task_, "{\"next_seq\":" + std::to_string(next_) + "}");
    return Status::OK();
  }

 private:
  Feed* feed_;
  std::string task_;
  int64_t next_ = 1;
  bool started_ = false;
};

// Never emits. Fails when asked to snapshot checkpoint `fail_at`, once the task
// `committer_task` acknowledged that checkpoint (its state file is in chk-<fail_at>): the
// writers have handed their files over for a checkpoint that now never completes -- a worker
// failing (not killed), on a full disk say.
class FailingSource final : public runtime::SourceOperator {
 public:
  FailingSource(std::string checkpoint_dir, std::string committer_task, uint64_t fail_at)
      : checkpoint_dir_(std::move(checkpoint_dir)),
        committer_task_(std::move(committer_task)),
        fail_at_(fail_at) {}
  Result<runtime::SourceStatus> Poll(runtime::Collector&) override {
    return runtime::SourceStatus::kEnd;  // still snapshots every checkpoint
  }
  Status SnapshotPosition(CheckpointId id, runtime::StateWriter&) override {
    if (id.value != fail_at_) return Status::OK();
    // State files are named after the task, '/' made '_' (CheckpointStorage).
    std::string prefix = committer_task_;
    std::replace(prefix.begin(), prefix.end(), '/', '_');
    const std::string dir = checkpoint_dir_ + "/chk-" + id.ToString();
    const auto deadline = std::chrono::steady_clock::now() + runtime::testing::kWaitTimeout;
    for (bool acked = false; !acked && std::chrono::steady_clock::now() < deadline;) {
      Result<std::vector<std::string>> names = io::ListDir(dir);
      for (const std::string& name : names.ok() ? *names : std::vector<std::string>{}) {
        acked = acked || name.rfind(prefix + "-", 0) == 0;
      }
      if (!acked) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return Status::IOError("no space left on device");
  }

 private:
  std::string checkpoint_dir_;
  std::string committer_task_;
  uint64_t fail_at_;
};

struct Sink {
  std::optional<TempDir> dir;  // unless the root is given
  std::string root;            // where the warehouse and checkpoints go
  std::string warehouse() const { return root + "/warehouse"; }
  std::string checkpoints() const { return root + "/checkpoints"; }
  IcebergSinkSpec spec;
  iceberg::TableIdentifier id{"demo", "seqs"};

  // Maintenance after every commit: compaction of every file, expiry of all but the markers.
  void AggressiveMaintenance() {
    spec.table.options["flink-maintenance.rewrite.schedule.commit-count"] = "1";
    spec.table.options["flink-maintenance.rewrite.rewrite-all"] = "true";
    spec.table.options["flink-maintenance.expire-snapshots.schedule.commit-count"] = "1";
    spec.table.options["flink-maintenance.expire-snapshots.max-snapshot-age-seconds"] = "0";
    spec.table.options["flink-maintenance.expire-snapshots.retain-last"] = "1";
  }

  explicit Sink(bool upsert = false, int parallelism = 1, std::string root_dir = "") {
    if (root_dir.empty()) {
      dir.emplace();
      root = dir->path();
    } else {
      root = std::move(root_dir);
    }
    spec.table.name = "seqs";
    spec.table.schema = SeqSchema();
    spec.table.options = {{"connector", "iceberg"},
                          {"catalog-type", "hadoop"},
                          {"warehouse", warehouse()},
                          {"catalog-database", "demo"},
                          {"sink.parallelism", std::to_string(parallelism)}};
    if (upsert) {
      spec.table.primary_key = {"k"};
      spec.table.options["write.upsert.enabled"] = "true";
    }
    spec.sink_id = "seq-pipeline";
  }
  std::unique_ptr<iceberg::FileSystemCatalog> Catalog() const {
    return iceberg::FileSystemCatalog::Make(warehouse()).ValueOrDie();
  }
  iceberg::TableMetadata Metadata() const { return Catalog()->LoadTable(id).ValueOrDie().metadata; }
  // floe.checkpoint-id of every snapshot, oldest first.
  std::vector<uint64_t> CommittedCheckpoints() const {
    std::vector<uint64_t> ids;
    for (const auto& s : Metadata().snapshots) {
      auto id = s.summary.find(internal::kSummaryCheckpointId);
      if (id != s.summary.end()) ids.push_back(std::stoull(id->second));  // not a compaction
    }
    return ids;
  }
  verify::VerifyReport Verify(int64_t first, int64_t last) const {
    verify::VerifyOptions o;
    o.unique_column = "seq";
    o.expect_range = verify::VerifyOptions::Range{"seq", first, last};
    auto catalog = Catalog();
    return verify::VerifyTable(*catalog, id, o).ValueOrDie();
  }
};

// One run of seq-source -> iceberg sink under a LocalJob.
struct JobRun {
  Counter handled;    // checkpoints whose completion the committer handled
  Counter completed;  // checkpoints the job reported complete
  std::string savepoint_dir;
  uint64_t fail_at = 0;  // > 0: a FailingSource in the graph fails the run at this checkpoint
  std::unique_ptr<runtime::LocalJob> job;

  Status Make(Sink& sink, Feed& feed, std::optional<std::string> restore_from = std::nullopt,
              uint64_t min_checkpoint_id = 0, const std::string& job_id = "5eedf00d5eedf00d") {
    runtime::JobGraph graph;
    runtime::VertexId src = graph.AddSource("seq", 1, [&feed](const runtime::TaskInfo&) {
      return runtime::testing::Src<SeqSource>(&feed);
    });
    JobContext ctx;
    ctx.job_id = job_id;
    ctx.positions = feed.board;
    internal::IcebergSinkHooks hooks;
    hooks.on_checkpoint_handled = [this](CheckpointId) { handled.Add(); };
    FLOE_RETURN_NOT_OK(internal::AddIcebergSinkWithHooks(graph, src, sink.spec, ctx, hooks));
    if (fail_at > 0) {
      std::string committer = internal::CommitterVertexName(sink.spec) + "/0";
      graph.AddSource("failing", 1, [&sink, committer, this](const runtime::TaskInfo&) {
        return runtime::testing::Src<FailingSource>(sink.checkpoints(), committer, fail_at);
      });
    }
    runtime::LocalJobOptions o;
    o.job_id = job_id;
    o.checkpointing.dir = sink.checkpoints();
    o.checkpointing.num_retained = 10;
    o.timer_thread = false;
    o.channel_capacity = 4;
    o.idle_backoff = std::chrono::milliseconds(1);
    o.restore_from = std::move(restore_from);
    o.min_checkpoint_id = CheckpointId(min_checkpoint_id);
    o.on_checkpoint_complete = [this](const runtime::CompletedCheckpointInfo& info) {
      if (info.is_savepoint) savepoint_dir = info.dir;
      completed.Add();
    };
    FLOE_ASSIGN_OR_RAISE(job, runtime::LocalJob::Make(graph, std::move(o)));
    return job->Start();
  }
  // Lets the source emit up to `limit`, then takes a checkpoint and waits until it committed.
  void CheckpointAt(Feed& feed, int64_t limit, bool savepoint = false) {
    feed.limit = limit;
    ASSERT_TRUE(feed.emitted.WaitFor(limit));
    int64_t before = handled.value();
    int64_t before_completed = completed.value();
    ASSERT_TRUE(job->TriggerCheckpoint(savepoint).ok());
    // A savepoint's completion is not delivered to the committer (docs/exactly-once.md): it
    // commits nothing, the next checkpoint commits what it staged.
    if (!savepoint) {
      ASSERT_TRUE(handled.WaitFor(before + 1));
    }
    ASSERT_TRUE(completed.WaitFor(before_completed + 1));
  }
};

std::set<std::string> FilesUnder(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (auto& e : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (e.is_regular_file()) out.insert(e.path().string());
  }
  return out;
}

// The .parquet files under the table's data directory.
std::set<std::string> DataFiles(const Sink& sink) {
  std::set<std::string> out;
  for (const std::string& f : FilesUnder(sink.warehouse() + "/demo/seqs/data")) {
    if (f.size() > 8 && f.substr(f.size() - 8) == ".parquet") out.insert(f);
  }
  return out;
}

// Every data and delete file of every snapshot of the table.
std::set<std::string> TableFiles(const Sink& sink) {
  std::set<std::string> out;
  iceberg::TableMetadata md = sink.Metadata();
  for (const iceberg::Snapshot& snapshot : md.snapshots) {
    for (const auto& m :
         iceberg::ReadManifestList(io::FileIO(), snapshot.manifest_list).ValueOrDie()) {
      for (const auto& e : iceberg::ReadManifest(io::FileIO(), m, md).ValueOrDie()) {
        out.insert(iceberg::UriToPath(e.data_file.file_path).ValueOrDie());
      }
    }
  }
  return out;
}

TEST(IcebergSink, CommitsOneSnapshotPerCheckpointWithTheSummaryKeys) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  Feed feed;
  feed.end = 300;
  JobRun run;
  ASSERT_OK(run.Make(sink, feed));
  run.CheckpointAt(feed, 100);
  run.CheckpointAt(feed, 200);
  feed.limit = INT64_MAX;
  ASSERT_OK(run.job->Wait());
  EXPECT_EQ(run.job->state(), runtime::JobState::kFinished);

  iceberg::TableMetadata md = sink.Metadata();
  ASSERT_EQ(md.snapshots.size(), 3u);
  const int64_t next_seq[] = {101, 201, 301};
  for (size_t i = 0; i < 3; ++i) {
    const auto& summary = md.snapshots[i].summary;
    EXPECT_EQ(summary.at("floe.sink-id"), "seq-pipeline");
    EXPECT_EQ(summary.at("floe.job-id"), "5eedf00d5eedf00d");
    EXPECT_EQ(summary.at("floe.checkpoint-id"), std::to_string(i + 1));
    EXPECT_EQ(summary.at("floe.source-offsets"),
              "{\"seq/0\":{\"next_seq\":" + std::to_string(next_seq[i]) + "}}");
    EXPECT_EQ(summary.at("operation"), "append");
    EXPECT_EQ(summary.at("added-records"), "100");
  }
  verify::VerifyReport report = sink.Verify(1, 300);
  EXPECT_EQ(report.rows, 300);
  EXPECT_EQ(report.findings(), 0) << report.ToText();
  // File names carry the job, the writer subtask and the checkpoint they were written for.
  const std::string tag = internal::FileJobTag("5eedf00d5eedf00d");
  EXPECT_EQ(tag.rfind("5eedf00dx", 0), 0u) << tag;
  for (const auto& path : FilesUnder(sink.warehouse() + "/demo/seqs/data")) {
    EXPECT_NE(path.find("/" + tag + "-00000-"), std::string::npos) << path;
  }
}

// A run that fails (not killed) after its writers handed over the files of checkpoint 2, which
// then never completes, removes those files before it ends (Operator::Abandon): they would
// otherwise stay forever, and on a full disk every restart would fail at once. The files of
// checkpoint 1 (committed) stay; a restore lands every row exactly once.
TEST(IcebergSink, AFailedRunRemovesTheFilesOfItsIncompleteCheckpointAndNothingElse) {
  for (bool upsert : {false, true}) {
    SCOPED_TRACE(upsert ? "upsert" : "append");
    Sink sink(upsert);
    ASSERT_OK(PrepareIcebergTable(sink.spec));
    Feed feed;
    feed.end = 400;
    {
      JobRun run;
      run.fail_at = 2;
      ASSERT_OK(run.Make(sink, feed));
      run.CheckpointAt(feed, 100);
      std::set<std::string> committed = DataFiles(sink);
      feed.limit = 200;
      ASSERT_TRUE(feed.emitted.WaitFor(200));
      ASSERT_OK_AND_ASSIGN(CheckpointId two, run.job->TriggerCheckpoint());
      ASSERT_EQ(two, CheckpointId(2));
      Status st = run.job->Wait();
      EXPECT_NE(st.ToString().find("no space left on device"), std::string::npos) << st.ToString();
      EXPECT_EQ(run.job->state(), runtime::JobState::kFailed);
      EXPECT_EQ(DataFiles(sink), committed);
    }
    EXPECT_FALSE(io::Exists(sink.checkpoints() + "/chk-2/_metadata"));
    EXPECT_EQ(sink.CommittedCheckpoints(), (std::vector<uint64_t>{1}));
    EXPECT_FALSE(DataFiles(sink).empty());
    EXPECT_EQ(DataFiles(sink), TableFiles(sink));

    ASSERT_OK_AND_ASSIGN(
        runtime::CompletedCheckpoint chk,
        runtime::CheckpointStorage::LoadPath(io::FileIO(), sink.checkpoints() + "/chk-1"));
    ASSERT_OK_AND_ASSIGN(SinkRestorePlan plan,
                         PlanIcebergSinkRestore(sink.spec, chk, StaleRestorePolicy::kFail, false));
    feed.limit = INT64_MAX;
    feed.first_emitted = 0;
    JobRun run;
    run.fail_at = UINT64_MAX;  // the same graph, not failing
    ASSERT_OK(run.Make(sink, feed, "latest", plan.table_checkpoint_id));
    ASSERT_OK(run.job->Wait());
    EXPECT_EQ(feed.first_emitted.load(), 101);
    verify::VerifyReport report = sink.Verify(1, 400);
    EXPECT_EQ(report.rows, 400);
    EXPECT_EQ(report.findings(), 0) << report.ToText();
    EXPECT_EQ(DataFiles(sink), TableFiles(sink));
  }
}

TEST(IcebergSink, RestoreFromLatestAfterCancelLandsEverySeqExactlyOnce) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  Feed feed;
  feed.end = 400;
  {
    JobRun run;
    ASSERT_OK(run.Make(sink, feed));
    run.CheckpointAt(feed, 100);
    run.CheckpointAt(feed, 200);
    // Rows past checkpoint 2 reach the writer, whose files are abandoned on cancel.
    feed.limit = 250;
    ASSERT_TRUE(feed.emitted.WaitFor(250));
    run.job->Cancel();
    ASSERT_OK(run.job->Wait());
  }
  EXPECT_EQ(sink.CommittedCheckpoints(), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(sink.Verify(1, 200).findings(), 0);

  // The coordinator side: chk-2 holds pending[2], which the table already has.
  ASSERT_OK_AND_ASSIGN(
      runtime::CompletedCheckpoint chk,
      runtime::CheckpointStorage::LoadPath(io::FileIO(), sink.checkpoints() + "/chk-2"));
  ASSERT_OK_AND_ASSIGN(SinkRestorePlan plan,
                       PlanIcebergSinkRestore(sink.spec, chk, StaleRestorePolicy::kFail, true));
  EXPECT_EQ(plan.table_checkpoint_id, 2u);
  EXPECT_FALSE(plan.table_ahead) << plan.message;

  feed.limit = INT64_MAX;
  feed.first_emitted = 0;
  JobRun run;
  ASSERT_OK(run.Make(sink, feed, "latest", plan.table_checkpoint_id));
  ASSERT_OK(run.job->Wait());
  EXPECT_EQ(feed.first_emitted.load(), 201);  // from checkpoint 2's position
  std::vector<uint64_t> ids = sink.CommittedCheckpoints();
  ASSERT_EQ(ids.size(), 3u);  // 1, 2, and the final checkpoint; 2 was not committed again
  EXPECT_GT(ids[2], 2u);
  verify::VerifyReport report = sink.Verify(1, 400);
  EXPECT_EQ(report.rows, 400);
  EXPECT_EQ(report.findings(), 0) << report.ToText();
}

TEST(IcebergSink, RestoreFromAnOldSavepointStartsAtTheTablesPositions) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  Feed feed;
  feed.end = 500;
  std::string savepoint;
  {
    JobRun run;
    ASSERT_OK(run.Make(sink, feed));
    run.CheckpointAt(feed, 100, /*savepoint=*/true);
    savepoint = run.savepoint_dir;
    run.CheckpointAt(feed, 200);
    run.CheckpointAt(feed, 300);
    run.job->Cancel();
    ASSERT_OK(run.job->Wait());
  }
  ASSERT_FALSE(savepoint.empty());
  // Savepoint 1's files were committed by checkpoint 2, still as a snapshot of their own.
  EXPECT_EQ(sink.CommittedCheckpoints(), (std::vector<uint64_t>{1, 2, 3}));

  ASSERT_OK_AND_ASSIGN(runtime::CompletedCheckpoint sp,
                       runtime::CheckpointStorage::LoadPath(io::FileIO(), savepoint));
  ASSERT_EQ(sp.id, CheckpointId(1));
  ASSERT_OK_AND_ASSIGN(SinkRestorePlan plan,
                       PlanIcebergSinkRestore(sink.spec, sp, StaleRestorePolicy::kFail, false));
  EXPECT_TRUE(plan.table_ahead);
  EXPECT_EQ(plan.table_checkpoint_id, 3u);
  EXPECT_EQ(plan.source_positions,
            (std::map<std::string, std::string>{{"seq/0", "{\"next_seq\":301}"}}));
  EXPECT_NE(plan.message.find("holds checkpoint 3"), std::string::npos) << plan.message;
  EXPECT_NE(plan.message.find("checkpoint ids continue above 3"), std::string::npos)
      << plan.message;

  // What the planner does with the plan.
  Feed restored;
  restored.end = 500;
  restored.limit = INT64_MAX;
  restored.board->SetStartOverrides(plan.source_positions);
  JobRun run;
  ASSERT_OK(run.Make(sink, restored, savepoint, plan.table_checkpoint_id));
  ASSERT_OK(run.job->Wait());
  EXPECT_EQ(restored.first_emitted.load(), 301);
  std::vector<uint64_t> ids = sink.CommittedCheckpoints();
  ASSERT_EQ(ids.size(), 4u);
  EXPECT_GT(ids[3], 3u);
  verify::VerifyReport report = sink.Verify(1, 500);
  EXPECT_EQ(report.rows, 500);
  EXPECT_EQ(report.findings(), 0) << report.ToText();
}

TEST(IcebergSink, ResubmittedJobWithoutStateDoesNotReplay) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  {
    Feed feed;
    feed.end = 200;
    JobRun run;
    ASSERT_OK(run.Make(sink, feed));
    run.CheckpointAt(feed, 120);
    feed.limit = INT64_MAX;
    ASSERT_OK(run.job->Wait());
  }
  ASSERT_OK_AND_ASSIGN(
      SinkRestorePlan plan,
      PlanIcebergSinkRestore(sink.spec, std::nullopt, StaleRestorePolicy::kFail, false));
  EXPECT_TRUE(plan.table_ahead);
  EXPECT_EQ(plan.table_checkpoint_id, 2u);

  Feed feed;
  feed.end = 300;
  feed.limit = INT64_MAX;
  feed.board->SetStartOverrides(plan.source_positions);
  JobRun run;  // a new job id; same sink id
  ASSERT_OK(run.Make(sink, feed, std::nullopt, plan.table_checkpoint_id, "0123456789abcdef"));
  ASSERT_OK(run.job->Wait());
  EXPECT_EQ(feed.first_emitted.load(), 201);
  verify::VerifyReport report = sink.Verify(1, 300);
  EXPECT_EQ(report.findings(), 0) << report.ToText();
  iceberg::TableMetadata md = sink.Metadata();
  EXPECT_EQ(md.snapshots.back().summary.at("floe.job-id"), "0123456789abcdef");
}

// The tester's case: the sink table renamed in the job file changes the default sink id; the
// fresh job found "no commit of sink ..." and started at the beginning (the table doubled).
TEST(IcebergSink, ARenamedSinkContinuesFromItsPipelinesLastCommit) {
  Sink sink;
  sink.spec.pipeline = PipelineFingerprint("source-seq=seq()");
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  {
    Feed feed;
    feed.end = 200;
    JobRun run;
    ASSERT_OK(run.Make(sink, feed));
    run.CheckpointAt(feed, 120);
    feed.limit = INT64_MAX;
    ASSERT_OK(run.job->Wait());
  }
  // Another pipeline under another id is not this sink's history.
  sink.spec.sink_id = "renamed->demo.seqs";
  sink.spec.pipeline = PipelineFingerprint("source-seq=other()");
  ASSERT_OK_AND_ASSIGN(
      SinkRestorePlan other,
      PlanIcebergSinkRestore(sink.spec, std::nullopt, StaleRestorePolicy::kFail, false));
  EXPECT_FALSE(other.table_ahead) << other.message;

  sink.spec.pipeline = PipelineFingerprint("source-seq=seq()");
  // An id the user set with 'sink-id' keeps its own history only: two jobs of one pipeline may
  // write one table under their own ids (jdbc_catalog.test.mjs, "two jobs commit to one table").
  sink.spec.table.options["sink-id"] = "renamed->demo.seqs";
  ASSERT_OK_AND_ASSIGN(
      SinkRestorePlan explicit_id,
      PlanIcebergSinkRestore(sink.spec, std::nullopt, StaleRestorePolicy::kFail, false));
  EXPECT_FALSE(explicit_id.table_ahead) << explicit_id.message;
  sink.spec.table.options.erase("sink-id");

  ASSERT_OK_AND_ASSIGN(
      SinkRestorePlan plan,
      PlanIcebergSinkRestore(sink.spec, std::nullopt, StaleRestorePolicy::kFail, false));
  EXPECT_TRUE(plan.table_ahead) << plan.message;
  EXPECT_EQ(plan.table_checkpoint_id, 2u);
  Feed feed;
  feed.end = 300;
  feed.limit = INT64_MAX;
  feed.board->SetStartOverrides(plan.source_positions);
  JobRun run;
  ASSERT_OK(run.Make(sink, feed, std::nullopt, plan.table_checkpoint_id, "0123456789abcdef"));
  ASSERT_OK(run.job->Wait());
  EXPECT_EQ(feed.first_emitted.load(), 201);
  verify::VerifyReport report = sink.Verify(1, 300);
  EXPECT_EQ(report.findings(), 0) << report.ToText();
  EXPECT_EQ(sink.Metadata().snapshots.back().summary.at("floe.sink-id"), "renamed->demo.seqs");
}

// Every Iceberg sink, catalog and maintenance crash point (docs/fault-injection.md) fires in
// a plain bounded run (the process-level kill tests depend on it). Each case runs in a
// re-executed child process.
TEST(IcebergSinkCrashPoints, EveryPointIsReachedInANormalRun) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // The children (re-executed test binaries, killed without cleanup) work under the parent's
  // temp dir, which the parent removes.
  std::optional<TempDir> parent;
  const char* inherited = std::getenv("FLOE_SINK_CRASH_TEST_DIR");
  if (inherited == nullptr) parent.emplace();
  std::string base = inherited != nullptr ? inherited : parent->path();
  ::setenv("FLOE_SINK_CRASH_TEST_DIR", base.c_str(), 1);
  const char* kPoints[] = {"after-data-file-written",
                           "after-barrier-ack",
                           "after-committer-snapshot",
                           "after-checkpoint-complete-before-commit",
                           "before-metadata-file",
                           "after-metadata-file-before-hint",
                           "after-commit-before-record",
                           "compact-after-files-written",
                           "maintenance-after-rewrite-commit",
                           "expire-after-commit-before-delete",
                           "expire-mid-delete"};
  for (const char* point : kPoints) {
    ::setenv("FLOE_CRASH_AT", point, 1);
    EXPECT_EXIT(
        {
          // Maintenance after every commit; the second commit lets expiry find work.
          Sink sink(false, 1, base + "/" + point);
          sink.AggressiveMaintenance();
          if (!PrepareIcebergTable(sink.spec).ok()) std::exit(2);
          Feed feed;
          feed.end = 100;
          JobRun run;
          if (!run.Make(sink, feed).ok()) std::exit(3);
          feed.limit = 50;
          if (!feed.emitted.WaitFor(50) || !run.job->TriggerCheckpoint().ok()) std::exit(4);
          if (!run.handled.WaitFor(1)) std::exit(5);
          feed.limit = INT64_MAX;
          (void)run.job->Wait();
          std::exit(0);
        },
        ::testing::KilledBySignal(SIGKILL), std::string("crash point '") + point + "' reached");
    ::unsetenv("FLOE_CRASH_AT");
  }
  ::unsetenv("FLOE_SINK_CRASH_TEST_DIR");
}

// Maintenance inside the job (docs/connectors.md, "Table maintenance"): compaction and expiry
// after every commit keep the table at one data file and a few snapshots, and every row lands
// exactly once.
TEST(IcebergSinkMaintenance, CompactsAndExpiresAfterCommitsWithoutLosingARow) {
  Sink sink;
  sink.AggressiveMaintenance();
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  Feed feed;
  feed.end = 600;
  JobRun run;
  ASSERT_OK(run.Make(sink, feed));
  for (int64_t limit = 50; limit <= 500; limit += 50) run.CheckpointAt(feed, limit);
  feed.limit = INT64_MAX;
  ASSERT_OK(run.job->Wait());
  verify::VerifyReport report = sink.Verify(1, 600);
  EXPECT_EQ(report.rows, 600);
  EXPECT_EQ(report.findings(), 0) << report.ToText();
  iceberg::TableMetadata md = sink.Metadata();
  ASSERT_OK_AND_ASSIGN(std::vector<iceberg::FileScanTask> tasks,
                       iceberg::PlanScan(io::FileIO(), md));
  EXPECT_EQ(tasks.size(), 1u);  // the last commit's file compacted with the rest
  EXPECT_EQ(md.current_snapshot()->operation(), "replace");
  EXPECT_LE(md.snapshots.size(), 3u) << "expiry keeps the marker, the rewrite and the current";
  // Only files the retained snapshots reference are left: replaced ones went with the expired
  // snapshots.
  auto catalog = sink.Catalog();
  iceberg::OrphanOptions everything;
  everything.older_than_ms = INT64_MAX;
  everything.dry_run = true;
  ASSERT_OK_AND_ASSIGN(iceberg::OrphanResult orphans,
                       iceberg::RemoveOrphanFiles(*catalog, sink.id, everything));
  for (const std::string& f : orphans.orphans) EXPECT_EQ(f.find("/data/"), std::string::npos) << f;
  // The restore marker survived every expiry.
  ASSERT_OK_AND_ASSIGN(auto marker, internal::FindSinkCommit(md, "seq-pipeline"));
  ASSERT_TRUE(marker.has_value());
}

// The orphan task never takes a file the committer has staged (or a checkpoint holds), and runs
// in the background; a bounded job's final call waits for it.
TEST(IcebergSinkMaintenance, OrphanRemovalKeepsStagedFiles) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  Feed feed;
  feed.end = 50;
  feed.limit = INT64_MAX;
  JobRun run;
  ASSERT_OK(run.Make(sink, feed));
  ASSERT_OK(run.job->Wait());
  const std::string data = sink.warehouse() + "/demo/seqs/data";
  const std::string stray = data + "/stray.parquet", staged = data + "/staged.parquet";
  for (const std::string& p : {stray, staged}) ASSERT_OK(io::WriteFileExclusive(p, "x"));
  auto old = std::filesystem::file_time_type::clock::now() - std::chrono::hours(1);
  std::filesystem::last_write_time(stray, old);
  std::filesystem::last_write_time(staged, old);

  internal::MaintenanceConfig config;
  config.rewrite.enabled = config.expire.enabled = false;
  config.orphans = internal::MaintenanceSchedule{true, 1, std::chrono::seconds(0)};
  config.orphan_min_age = std::chrono::seconds(60);
  auto catalog = sink.Catalog();
  internal::TableMaintainer maintainer(
      config, catalog.get(),
      [&]() -> Result<std::unique_ptr<iceberg::Catalog>> {
        return std::unique_ptr<iceberg::Catalog>(sink.Catalog());
      },
      sink.id, "5eedf00d", [&] { return std::set<std::string>{staged}; },
      internal::FailedAttemptScope{"job", sink.checkpoints(), "", io::FileIO(), nullptr});
  maintainer.AfterCommits(9, 1, 0, 0, 0, /*final=*/true);
  EXPECT_EQ(maintainer.stats().orphan_runs, 1);
  EXPECT_EQ(maintainer.stats().orphans_removed, 1);
  EXPECT_FALSE(io::Exists(stray));
  EXPECT_TRUE(io::Exists(staged));
  EXPECT_EQ(sink.Verify(1, 50).findings(), 0);
}

// An upsert table compacts once its commits added N equality delete files, whatever the
// commit count: its read cost stays near an append table's.
TEST(IcebergSinkMaintenance, EqualityDeleteFilesTriggerCompaction) {
  Sink sink(/*upsert=*/true);
  sink.spec.table.options["flink-maintenance.rewrite.schedule.commit-count"] = "0";
  sink.spec.table.options["flink-maintenance.rewrite.schedule.interval-second"] = "0";
  sink.spec.table.options["flink-maintenance.rewrite.schedule.eq-delete-file-count"] = "2";
  sink.spec.table.options["flink-maintenance.rewrite.delete-file-threshold"] = "1";
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  Feed feed;
  feed.end = 400;
  feed.keys = 20;
  JobRun run;
  ASSERT_OK(run.Make(sink, feed));
  for (int64_t limit = 100; limit <= 300; limit += 100) run.CheckpointAt(feed, limit);
  feed.limit = INT64_MAX;
  ASSERT_OK(run.job->Wait());
  int replaces = 0;
  for (const auto& snap : sink.Metadata().snapshots) replaces += snap.operation() == "replace";
  EXPECT_GE(replaces, 1);
  ASSERT_OK_AND_ASSIGN(std::vector<iceberg::FileScanTask> tasks,
                       iceberg::PlanScan(io::FileIO(), sink.Metadata()));
  int64_t rows = 0;
  ASSERT_OK(iceberg::ScanTasks(io::FileIO(), sink.Metadata(), tasks, [&](const RecordBatch& b) {
    rows += static_cast<int64_t>(b.num_rows());
    return Status::OK();
  }));
  EXPECT_EQ(rows, 20);  // the latest row per key
}

TEST(IcebergSinkMaintenance, OptionErrorsNameTheOptionAndTheRule) {
  runtime::CheckpointConfig checkpointing;
  checkpointing.interval = std::chrono::seconds(30);
  auto parse = [&](std::map<std::string, std::string> options) {
    TableDescriptor t;
    t.name = "lake";
    t.options = std::move(options);
    return internal::ParseMaintenanceOptions(t, checkpointing).status();
  };
  Status typo = parse({{"flink-maintenance.rewrite.schedule.comit-count", "3"}});
  EXPECT_NE(typo.message().find("did you mean 'flink-maintenance.rewrite.schedule.commit-count'"),
            std::string::npos)
      << typo.ToString();
  Status young = parse({{"flink-maintenance.delete-orphan-files.min-age-seconds", "100"}});
  EXPECT_NE(young.message().find("must be at least 300 (60 s and 10 checkpoint intervals of 30 s)"),
            std::string::npos)
      << young.ToString();
  Status never = parse({{"flink-maintenance.expire-snapshots.schedule.commit-count", "0"},
                        {"flink-maintenance.expire-snapshots.schedule.interval-second", "0"}});
  EXPECT_NE(never.message().find("the task would never run"), std::string::npos)
      << never.ToString();
  // min-input-files is the size tiers' fan-in: 1 would rewrite a lone file at every run.
  Status fan_in = parse({{"flink-maintenance.rewrite.min-input-files", "1"}});
  EXPECT_NE(fan_in.message().find("'flink-maintenance.rewrite.min-input-files' must be in [2, "),
            std::string::npos)
      << fan_in.ToString();
  Status bad = parse({{"flink-maintenance.rewrite.enabled", "yes"}});
  EXPECT_FALSE(bad.ok());
  EXPECT_TRUE(parse({{"flink-maintenance.rewrite.enabled", "false"},
                     {"flink-maintenance.rewrite.min-input-files", "2"}})
                  .ok());
}

TEST(IcebergSink, TheUnavailableTimeoutIsADurationShorterThanTheCheckpointTimeout) {
  Sink sink;
  JobContext ctx;
  ctx.checkpointing.timeout = std::chrono::minutes(1);
  auto add = [&](const std::string& value) {
    sink.spec.table.options[std::string(internal::kUnavailableTimeout)] = value;
    runtime::JobGraph graph;
    runtime::VertexId src = graph.AddSource("seq", 1, [](const runtime::TaskInfo&) {
      return Result<std::unique_ptr<runtime::SourceOperator>>(Status::Internal("unused"));
    });
    return internal::AddIcebergSinkWithHooks(graph, src, sink.spec, ctx, {});
  };
  Status bad = add("soon");
  EXPECT_NE(bad.message().find("'sink.commit.unavailable-timeout' = 'soon' must be a duration"),
            std::string::npos)
      << bad.ToString();
  Status too_long = add("2 min");
  EXPECT_NE(too_long.message().find("= 120000 ms must be shorter than "
                                    "execution.checkpointing.timeout = 60000 ms"),
            std::string::npos)
      << too_long.ToString();
  EXPECT_TRUE(add("30 s").ok());
  EXPECT_TRUE(add("0 s").ok());
}

// Drives a writer and a committer by hand (no runtime), for the committer's edge cases.
using NullCollector = connectors::testing::CollectingCollector;

struct Harness {
  Sink& sink;
  std::unique_ptr<IcebergWriterOperator> writer;
  NullCollector to_committer;

  std::shared_ptr<iceberg::TableLease> lease;  // the sink's, shared by writer and committer

  explicit Harness(Sink& s, const std::string& row_kind_column = "",
                   std::shared_ptr<iceberg::TableLease> with_lease = nullptr,
                   const std::string& split_column = "")
      : sink(s), lease(std::move(with_lease)) {
    IcebergWriterOptions o;
    o.lease = lease;
    o.catalog.warehouse = sink.warehouse();
    o.table = sink.id;
    o.mode = sink.spec.table.primary_key.empty() ? iceberg::WriteMode::kAppend
                                                 : iceberg::WriteMode::kUpsert;
    o.job_id = "feedfeed";
    o.row_kind_column = row_kind_column;
    o.split_column = split_column;
    writer = IcebergWriterOperator::Make(o).ValueOrDie();
    runtime::OperatorContext ctx;
    ctx.task.vertex = "w";
    EXPECT_TRUE(writer->Open(ctx).ok());
  }
  IcebergCommitterOptions CommitterOptions(
      std::shared_ptr<runtime::SourcePositionBoard> board = nullptr) const {
    IcebergCommitterOptions o;
    o.catalog.warehouse = sink.warehouse();
    o.table = sink.id;
    o.sink_id = "by-hand";
    o.job_id = "feedfeed";
    o.positions = std::move(board);
    o.lease = lease;
    return o;
  }
  static std::unique_ptr<IcebergCommitterOperator> OpenCommitter(
      IcebergCommitterOptions o, std::optional<CheckpointId> restored = std::nullopt) {
    auto c = std::make_unique<IcebergCommitterOperator>(std::move(o));
    runtime::OperatorContext ctx;
    ctx.task.vertex = "c";
    ctx.restored_from = restored;
    EXPECT_TRUE(c->Open(ctx).ok());
    return c;
  }
  // Writes `rows` as checkpoint `id` and hands the files to `committer`; returns its state.
  std::string Stage(IcebergCommitterOperator& committer, CheckpointId id,
                    const std::vector<RecordBatch>& rows) {
    NullCollector none;
    for (const auto& b : rows) EXPECT_TRUE(writer->ProcessBatch(b, 0, none).ok());
    runtime::StateWriter ws;
    EXPECT_TRUE(writer->PrepareBarrier(id, to_committer).ok());
    EXPECT_TRUE(writer->OnBarrier(id, ws, to_committer).ok());
    for (const auto& b : to_committer.batches) EXPECT_TRUE(committer.ProcessBatch(b, 0, none).ok());
    to_committer.batches.clear();
    runtime::StateWriter cs;
    EXPECT_TRUE(committer.OnBarrier(id, cs, none).ok());
    return cs.Finish();
  }
};

std::map<int64_t, int64_t> ScanKeyToSeq(const iceberg::TableMetadata& md) {
  std::map<int64_t, int64_t> out;
  int64_t rows = 0;
  Status st = iceberg::ScanTable(io::FileIO(), md, std::nullopt, [&](const RecordBatch& b) {
    for (size_t r = 0; r < b.num_rows(); ++r) {
      out[b.column(1).Get<int64_t>(r)] = b.column(0).Get<int64_t>(r);
      ++rows;
    }
    return Status::OK();
  });
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(rows, static_cast<int64_t>(out.size())) << "a key appears twice";
  return out;
}

TEST(IcebergCommitter, CommitRepeatedAfterALostRecordIsSkipped) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  Harness h(sink);
  auto a = Harness::OpenCommitter(h.CommitterOptions());
  std::string state = h.Stage(*a, CheckpointId(1), {SeqRows(1, 50, 0)});

  // A restored committer (checkpoint 1 completed) commits pending[1]...
  auto b = Harness::OpenCommitter(h.CommitterOptions(), CheckpointId(1));
  runtime::StateReader rb(state);
  ASSERT_OK(b->Restore(rb));
  EXPECT_EQ(b->stats().committed, 1);
  // ...so the original committer, told "1 complete" late, finds it in the table: no second
  // commit (this is the path CommitOptions::validate guards).
  ASSERT_OK(a->OnCheckpointComplete(CheckpointId(1)));
  EXPECT_EQ(a->stats().committed, 0);
  EXPECT_EQ(a->stats().skipped_present, 1);
  EXPECT_TRUE(a->pending_ids().empty());
  // And a third restore of the same state drops it while reconciling.
  auto c = Harness::OpenCommitter(h.CommitterOptions(), CheckpointId(1));
  runtime::StateReader rc(state);
  ASSERT_OK(c->Restore(rc));
  EXPECT_EQ(c->stats().committed, 0);
  EXPECT_EQ(c->stats().dropped_on_restore, 1);

  EXPECT_EQ(sink.Metadata().snapshots.size(), 1u);
  EXPECT_EQ(sink.Verify(1, 50).findings(), 0);
}

// Kafka sources publish group offsets of N only after this report (kafka_source.h): it must come
// after the table commit, and also when the commit is skipped (already held, or empty).
TEST(IcebergCommitter, ReportsCheckpointsCommittedOnTheBoardAfterTheCommitOrTheSkip) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  Harness h(sink);
  auto board = std::make_shared<runtime::SourcePositionBoard>();
  auto a = Harness::OpenCommitter(h.CommitterOptions(board));
  EXPECT_EQ(board->CommittedByAll(), std::optional<uint64_t>(0));  // registered in Open
  std::string state = h.Stage(*a, CheckpointId(1), {SeqRows(1, 50, 0)});
  EXPECT_EQ(board->CommittedByAll(), std::optional<uint64_t>(0));
  // Another committer (a restore) commits 1 first: `a` skips it as already held, and reports.
  auto b = Harness::OpenCommitter(h.CommitterOptions(), CheckpointId(1));
  runtime::StateReader rb(state);
  ASSERT_OK(b->Restore(rb));
  ASSERT_OK(a->OnCheckpointComplete(CheckpointId(1)));
  EXPECT_EQ(a->stats().skipped_present, 1);
  EXPECT_EQ(board->CommittedByAll(), std::optional<uint64_t>(1));
  // A real commit of 2, then an empty 3 (skipped as empty).
  h.Stage(*a, CheckpointId(2), {SeqRows(51, 60, 0)});
  ASSERT_OK(a->OnCheckpointComplete(CheckpointId(2)));
  EXPECT_EQ(a->stats().committed, 1);
  EXPECT_EQ(board->CommittedByAll(), std::optional<uint64_t>(2));
  h.Stage(*a, CheckpointId(3), {});
  ASSERT_OK(a->OnCheckpointComplete(CheckpointId(3)));
  EXPECT_EQ(a->stats().skipped_empty, 1);
  EXPECT_EQ(board->CommittedByAll(), std::optional<uint64_t>(3));
  ASSERT_OK(a->Close());
  EXPECT_FALSE(board->WaitCommittedByAll(CheckpointId(4), std::chrono::seconds(20), nullptr));
}

// The table's data files on disk (absolute paths).
std::vector<std::string> DataFilesOnDisk(const Sink& sink) {
  std::vector<std::string> out;
  std::string location = iceberg::UriToPath(sink.Metadata().location).ValueOrDie();
  for (const io::FileEntry& f : io::ListFilesRecursive(location + "/data").ValueOrDie()) {
    out.push_back(f.path);
  }
  return out;
}

// A staged file removed (by a sweep or by hand) or changed before its checkpoint's commit: the
// commit fails naming it, the table gets no snapshot referencing a file that is not there, and
// the checkpoint stays pending (the job fails and restarts, and fails again: it never runs on).
// Failed before the check: the commit referenced the missing file.
TEST(IcebergCommitter, RefusesToCommitACheckpointWhoseFilesAreGoneOrChanged) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  Harness h(sink);
  auto a = Harness::OpenCommitter(h.CommitterOptions());
  h.Stage(*a, CheckpointId(1), {SeqRows(1, 50, 0)});
  std::vector<std::string> files = DataFilesOnDisk(sink);
  ASSERT_EQ(files.size(), 1u);
  ASSERT_OK(io::RemoveFile(files[0]));
  Status st = a->OnCheckpointComplete(CheckpointId(1));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("checkpoint 1 is not committed to demo.seqs"), std::string::npos)
      << st.ToString();
  EXPECT_NE(st.message().find(files[0]), std::string::npos) << st.ToString();
  EXPECT_TRUE(sink.Metadata().snapshots.empty());
  EXPECT_EQ(a->pending_ids(), std::vector<uint64_t>{1});

  auto b = Harness::OpenCommitter(h.CommitterOptions());
  h.Stage(*b, CheckpointId(2), {SeqRows(51, 60, 0)});
  std::vector<std::string> now = DataFilesOnDisk(sink);
  ASSERT_EQ(now.size(), 1u);
  ASSERT_OK(io::WriteFileReplace(now[0], "PAR1"));  // replaced by something else
  st = b->OnCheckpointComplete(CheckpointId(2));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("(4 bytes, the writer recorded "), std::string::npos)
      << st.ToString();
  EXPECT_TRUE(sink.Metadata().snapshots.empty());
}

// A committed data file gone (the table lost rows): the in-job compaction finds it and the
// committer fails the job naming the table and the file, instead of one warning and a job that
// runs on and exits 0. Failed before: OnCheckpointComplete returned OK.
TEST(IcebergCommitter, CompactionFindingACommittedFileMissingFailsTheJob) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  Harness h(sink);
  IcebergCommitterOptions o = h.CommitterOptions();
  o.maintenance.rewrite = internal::MaintenanceSchedule{true, 2, std::chrono::seconds(0)};
  o.maintenance.compact.rewrite_all = true;
  auto a = Harness::OpenCommitter(o);
  h.Stage(*a, CheckpointId(1), {SeqRows(1, 50, 0)});
  ASSERT_OK(a->OnCheckpointComplete(CheckpointId(1)));
  std::vector<std::string> committed = DataFilesOnDisk(sink);
  ASSERT_EQ(committed.size(), 1u);
  ASSERT_OK(io::RemoveFile(committed[0]));
  h.Stage(*a, CheckpointId(2), {SeqRows(51, 60, 0)});
  NullCollector none;
  ASSERT_OK(a->OnEndOfInput(none));  // the compaction runs inline now
  Status st = a->OnCheckpointComplete(CheckpointId(2));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("iceberg table demo.seqs"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find(committed[0]), std::string::npos) << st.ToString();
  EXPECT_EQ(sink.CommittedCheckpoints(), (std::vector<uint64_t>{1, 2}));
}

// Orphan removal with no interval at every step of a checkpoint: while the writer has the file
// open, after the committer's barrier, and after the writer's claim ended (the lease rewritten
// without it): the staged file is never taken, the commit lands. Failed without the lease: the
// first sweep deleted the open file.
TEST(IcebergSinkLease, SweepsWithoutIntervalNeverTakeAFileBeforeItsCommit) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  Harness h(sink, "", std::make_shared<iceberg::TableLease>("sink-test", 2000));
  auto a = Harness::OpenCommitter(h.CommitterOptions());
  auto catalog = sink.Catalog();
  auto sweep = [&]() {
    iceberg::OrphanOptions all;
    all.older_than_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count() +
                        1000;
    return iceberg::RemoveOrphanFiles(*catalog, sink.id, all).ValueOrDie();
  };
  NullCollector none;
  ASSERT_OK(h.writer->ProcessBatch(SeqRows(1, 50, 0), 0, none));
  EXPECT_GE(sweep().kept_leased, 1);  // the open file
  h.Stage(*a, CheckpointId(1), {});   // handed over; the committer names it
  ASSERT_OK(h.writer->OnCheckpointComplete(CheckpointId(1)));
  // The refresh drops the writer's claim; the committer's names the file.
  const std::string lease_file = h.lease->path();
  for (int i = 0; i < 200; ++i) {
    Result<std::string> text = io::ReadFile(lease_file);
    if (text.ok() && text->find("\"since-ms\":null") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_NE(io::ReadFile(lease_file).ValueOrDie().find("\"since-ms\":null"), std::string::npos);
  iceberg::OrphanResult late = sweep();
  EXPECT_EQ(late.deleted, 0) << late.orphans.size() << " staged files deleted";
  ASSERT_OK(a->OnCheckpointComplete(CheckpointId(1)));
  EXPECT_EQ(sink.Verify(1, 50).findings(), 0);
}

TEST(IcebergCommitter, SeveralPendingCheckpointsCommitInOrderAsSeparateSnapshots) {
  Sink sink(/*upsert=*/true);
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  Harness h(sink);
  auto a = Harness::OpenCommitter(h.CommitterOptions());
  // Every checkpoint rewrites keys 0..9: squashing them into one commit would keep them all.
  h.Stage(*a, CheckpointId(1), {SeqRows(1, 30, 10)});
  h.Stage(*a, CheckpointId(2), {SeqRows(31, 60, 10)});
  std::string state = h.Stage(*a, CheckpointId(3), {SeqRows(61, 90, 10)});
  EXPECT_EQ(a->pending_ids(), (std::vector<uint64_t>{1, 2, 3}));

  auto b = Harness::OpenCommitter(h.CommitterOptions(), CheckpointId(3));
  runtime::StateReader r(state);
  ASSERT_OK(b->Restore(r));
  EXPECT_EQ(b->stats().committed, 3);
  iceberg::TableMetadata md = sink.Metadata();
  ASSERT_EQ(md.snapshots.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(md.snapshots[i].summary.at("floe.checkpoint-id"), std::to_string(i + 1));
    EXPECT_EQ(md.snapshots[i].sequence_number, static_cast<int64_t>(i + 1));
    if (i > 0) {
      EXPECT_EQ(md.snapshots[i].parent_snapshot_id, md.snapshots[i - 1].snapshot_id);
    }
  }
  std::map<int64_t, int64_t> expected;
  for (int64_t s = 61; s <= 90; ++s) expected[s % 10] = s;
  EXPECT_EQ(ScanKeyToSeq(md), expected);

  // The original committer then learns of 3: everything is in the table already.
  ASSERT_OK(a->OnCheckpointComplete(CheckpointId(3)));
  EXPECT_EQ(a->stats().committed, 0);
  EXPECT_EQ(sink.Metadata().snapshots.size(), 3u);
}

TEST(IcebergCommitter, EmptyCheckpointsCommitOnlyWhenPositionsMove) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  Harness h(sink);
  auto board = std::make_shared<runtime::SourcePositionBoard>();
  auto c = Harness::OpenCommitter(h.CommitterOptions(board));
  board->Record(CheckpointId(1), "src/0", "{\"offset\":10}");
  h.Stage(*c, CheckpointId(1), {SeqRows(1, 10, 0)});
  ASSERT_OK(c->OnCheckpointComplete(CheckpointId(1)));
  board->Record(CheckpointId(2), "src/0", "{\"offset\":10}");  // idle
  h.Stage(*c, CheckpointId(2), {});
  ASSERT_OK(c->OnCheckpointComplete(CheckpointId(2)));
  board->Record(CheckpointId(3), "src/0", "{\"offset\":25}");  // read, but all filtered out
  h.Stage(*c, CheckpointId(3), {});
  ASSERT_OK(c->OnCheckpointComplete(CheckpointId(3)));
  EXPECT_EQ(c->stats().committed, 2);
  EXPECT_EQ(c->stats().skipped_empty, 1);
  iceberg::TableMetadata md = sink.Metadata();
  ASSERT_EQ(md.snapshots.size(), 2u);
  EXPECT_EQ(md.snapshots[1].summary.at("floe.checkpoint-id"), "3");
  EXPECT_EQ(md.snapshots[1].summary.at("floe.source-offsets"), "{\"src/0\":{\"offset\":25}}");
  EXPECT_EQ(md.snapshots[1].summary.count("added-data-files"), 0u);  // an empty append
}

TEST(IcebergCommitter, RefusesCheckpointIdsTheTableAlreadyHolds) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  Harness h(sink);
  auto a = Harness::OpenCommitter(h.CommitterOptions());
  h.Stage(*a, CheckpointId(5), {SeqRows(1, 5, 0)});
  ASSERT_OK(a->OnCheckpointComplete(CheckpointId(5)));
  // A run whose ids did not continue above the table's would lose checkpoint 4's rows.
  auto b = Harness::OpenCommitter(h.CommitterOptions());
  NullCollector none;
  runtime::StateWriter w;
  Status st = b->OnBarrier(CheckpointId(4), w, none);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("must continue above"), std::string::npos) << st.ToString();
}

TEST(IcebergWriter, ChangelogRowKindsRetireKeysInUpsertMode) {
  Sink sink(/*upsert=*/true);
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  Harness h(sink, "op");
  auto schema = std::make_shared<BatchSchema>(*SeqSchema());
  schema->fields.push_back(Field{"op", DataType::String(), false, 0});
  RecordBatch b(schema);
  auto add = [&](int64_t seq, int64_t k, const char* op) {
    b.mutable_column(0).Append<int64_t>(seq);
    b.mutable_column(1).Append<int64_t>(k);
    b.mutable_column(2).AppendBytes("x");
    b.mutable_column(3).AppendBytes(op);
  };
  add(1, 1, "+I");
  add(2, 2, "+I");
  add(3, 3, "+I");
  add(1, 1, "-D");
  add(2, 2, "-U");
  add(4, 2, "+U");
  auto c = Harness::OpenCommitter(h.CommitterOptions());
  h.Stage(*c, CheckpointId(1), {b});
  ASSERT_OK(c->OnCheckpointComplete(CheckpointId(1)));
  EXPECT_EQ(ScanKeyToSeq(sink.Metadata()), (std::map<int64_t, int64_t>{{2, 4}, {3, 3}}));
}

// Seq rows [from, to] with a "$split" column: split_of(seq) for each.
RecordBatch SplitSeqRows(int64_t from, int64_t to,
                         const std::function<std::string(int64_t)>& split_of) {
  auto schema = std::make_shared<BatchSchema>(*SeqSchema());
  schema->fields.push_back(Field{"$split", DataType::String(), false, 0});
  RecordBatch rows = SeqRows(from, to, 0);
  std::vector<Column> columns;
  for (size_t c = 0; c < rows.num_columns(); ++c) columns.push_back(rows.column(c));
  Column split(DataType::String());
  for (int64_t seq = from; seq <= to; ++seq) split.AppendBytes(split_of(seq));
  columns.push_back(std::move(split));
  return RecordBatch(schema, std::move(columns));
}

// The rows of each source split (a Kafka partition) go to files of their own, handed over
// with the split, named as every writer file is; the split column is not written.
TEST(IcebergWriter, RowsOfEachSplitGoToFilesOfTheirOwn) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  Harness h(sink, "", nullptr, "$split");
  NullCollector none;
  ASSERT_OK(h.writer->ProcessBatch(
      SplitSeqRows(1, 30, [](int64_t seq) { return seq % 3 == 0 ? "t/1" : "t/0"; }), 0, none));
  runtime::StateWriter ws;
  ASSERT_OK(h.writer->PrepareBarrier(CheckpointId(1), h.to_committer));
  ASSERT_OK(h.writer->OnBarrier(CheckpointId(1), ws, h.to_committer));
  std::map<std::string, int64_t> rows_of;
  std::set<std::string> names;
  for (const RecordBatch& b : h.to_committer.batches) {
    ASSERT_OK_AND_ASSIGN(std::vector<internal::WriterFiles> files, internal::DecodeWriterFiles(b));
    for (const internal::WriterFiles& f : files) {
      for (const iceberg::DataFile& d : f.data_files) {
        rows_of[f.split] += d.record_count;
        const std::string name = d.file_path.substr(d.file_path.rfind('/') + 1);
        EXPECT_TRUE(internal::ParseWriterFileName(name).has_value()) << name;
        names.insert(name);
      }
    }
  }
  EXPECT_EQ(rows_of, (std::map<std::string, int64_t>{{"t/0", 20}, {"t/1", 10}}));
  EXPECT_EQ(names.size(), 2u);
  auto c = Harness::OpenCommitter(h.CommitterOptions());
  for (const auto& b : h.to_committer.batches) ASSERT_OK(c->ProcessBatch(b, 0, none));
  runtime::StateWriter cs;
  ASSERT_OK(c->OnBarrier(CheckpointId(1), cs, none));
  ASSERT_OK(c->OnCheckpointComplete(CheckpointId(1)));
  EXPECT_EQ(ScanKeyToSeq(sink.Metadata()).size(), 30u);
  EXPECT_EQ(sink.Metadata().current_schema().fields.size(), 3u);
}

// Instances of a scaled-out job (partition_positions): each commit checks and sets the
// positions of the partitions it holds, so a zombie that commits a partition after its new
// holder is fenced (its files deleted, the fence reported to its source), and the rows of a
// partition the source no longer held at the barrier are never committed.
TEST(IcebergCommitter, ScaledOutInstancesCommitEachOffsetOnceAndTheTableFencesAZombie) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  struct Instance {
    Harness h;
    std::shared_ptr<runtime::SourcePositionBoard> board =
        std::make_shared<runtime::SourcePositionBoard>();
    std::unique_ptr<IcebergCommitterOperator> committer;
    explicit Instance(Sink& sink) : h(sink, "", nullptr, "$split") {
      IcebergCommitterOptions o = h.CommitterOptions(board);
      o.partition_positions = true;
      committer = Harness::OpenCommitter(o);
    }
    // Checkpoint `id` with `claims` held at the barrier: rows [from, to] of split `split`.
    void Checkpoint(uint64_t id, const std::vector<PartitionClaim>& claims, int64_t from,
                    int64_t to, const std::string& split) {
      board->Record(CheckpointId(id), "src/0", ClaimsToJson(claims));
      h.Stage(*committer, CheckpointId(id),
              {SplitSeqRows(from, to, [&](int64_t) { return split; })});
      ASSERT_OK(committer->OnCheckpointComplete(CheckpointId(id)));
    }
  };
  const iceberg::SourcePartition t0{"t", 0};
  auto claim = [](iceberg::SourcePartition p, uint64_t gen, std::optional<int64_t> from,
                  int64_t next) {
    return PartitionClaim{std::move(p), gen, from, next};
  };
  auto position = [&] {
    return iceberg::TablePartitionPosition(sink.Metadata(), "by-hand", t0).ValueOrDie();
  };
  Instance a(sink), b(sink);
  // a holds t/0 from the start: offsets [0, 10) are rows 1..10.
  a.Checkpoint(1, {claim(t0, 1, std::nullopt, 10)}, 1, 10, "t/0/1");
  EXPECT_EQ(position(), std::optional<int64_t>(10));
  // The group moves t/0 to b, which starts at the table's position.
  b.Checkpoint(1, {claim(t0, 1, 10, 20)}, 11, 20, "t/0/1");
  EXPECT_EQ(position(), std::optional<int64_t>(20));
  // a, cut off, read [10, 20) too and commits it: the table fences it.
  a.Checkpoint(2, {claim(t0, 1, std::nullopt, 20)}, 11, 20, "t/0/1");
  EXPECT_EQ(position(), std::optional<int64_t>(20));
  EXPECT_EQ(a.board->TakeFenced(), (std::set<std::string>{"t/0/1"}));
  EXPECT_TRUE(b.board->TakeFenced().empty());
  // b lost t/0 before its barrier: rows it read of it stay out.
  b.Checkpoint(2, {}, 21, 25, "t/0/1");
  EXPECT_EQ(position(), std::optional<int64_t>(20));
  std::map<int64_t, int64_t> rows = ScanKeyToSeq(sink.Metadata());
  ASSERT_EQ(rows.size(), 20u);
  EXPECT_EQ(rows.begin()->first, 1);
  EXPECT_EQ(rows.rbegin()->first, 20);
  // Only the committed files are left in the data directory.
  size_t files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(sink.warehouse())) {
    if (e.path().extension() == ".parquet") ++files;
  }
  EXPECT_EQ(files, 2u);
}

// A keyed scaled-out job's commits keep the topic's partition count with the positions; an
// instance that read the topic after partitions were added (its keys now map elsewhere) cannot
// commit over state read with the old count, and the table keeps what it had.
TEST(IcebergCommitter, KeyedCommitsKeepThePartitionCountTheirStateFollows) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  auto scale_out = std::make_shared<ScaleOut>();
  scale_out->keyed_task = "window[0]";
  scale_out->pins = std::make_shared<runtime::CheckpointPins>();
  auto open = [&](Harness& h, std::shared_ptr<runtime::SourcePositionBoard> board) {
    IcebergCommitterOptions o = h.CommitterOptions(std::move(board));
    o.partition_positions = true;
    o.scale_out = scale_out;
    o.checkpoint_dir = sink.checkpoints();
    return Harness::OpenCommitter(o);
  };
  const iceberg::SourcePartition t0{"t", 0};
  auto checkpoint = [&](Harness& h, IcebergCommitterOperator& c,
                        runtime::SourcePositionBoard& board, uint64_t id,
                        const PartitionClaim& claim, int64_t from, int64_t to) {
    board.Record(CheckpointId(id), "src/0", ClaimsToJson({claim}));
    h.Stage(c, CheckpointId(id),
            {SplitSeqRows(from, to, [&](int64_t) { return ClaimSplit(claim); })});
    return c.OnCheckpointComplete(CheckpointId(id));
  };
  Harness ha(sink, "", nullptr, "$split"), hb(sink, "", nullptr, "$split");
  auto board_a = std::make_shared<runtime::SourcePositionBoard>();
  auto board_b = std::make_shared<runtime::SourcePositionBoard>();
  auto a = open(ha, board_a);
  auto b = open(hb, board_b);
  ASSERT_OK(checkpoint(ha, *a, *board_a, 1, PartitionClaim{t0, 1, std::nullopt, 10, 8}, 1, 10));
  EXPECT_EQ(sink.Metadata().properties.at("floe.partitions.by-hand.t"), "8");
  // b took t/0 over after the topic grew to 12 partitions.
  Status grown = checkpoint(hb, *b, *board_b, 1, PartitionClaim{t0, 1, 10, 20, 12}, 11, 20);
  ASSERT_FALSE(grown.ok());
  EXPECT_EQ(grown.code(), StatusCode::kInvalidArgument);
  for (const char* part :
       {"topic 't' read with 8 partitions", "'floe.partitions.by-hand.t'", "read it with 12"}) {
    EXPECT_NE(grown.message().find(part), std::string::npos) << grown.ToString();
  }
  iceberg::TableMetadata m = sink.Metadata();
  EXPECT_EQ(iceberg::TablePartitionPosition(m, "by-hand", t0).ValueOrDie(), 10);
  EXPECT_EQ(ScanKeyToSeq(m).size(), 10u);
  // With the count it started under, the holder goes on.
  ASSERT_OK(checkpoint(ha, *a, *board_a, 2, PartitionClaim{t0, 1, std::nullopt, 20, 8}, 11, 20));
  EXPECT_EQ(ScanKeyToSeq(sink.Metadata()).size(), 20u);
}

TEST(IcebergSink, UpsertThroughTwoHashPartitionedWritersKeepsTheLatestRowPerKey) {
  Sink sink(/*upsert=*/true, /*parallelism=*/2);
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  Feed feed;
  feed.end = 600;
  feed.keys = 37;
  JobRun run;
  ASSERT_OK(run.Make(sink, feed));
  run.CheckpointAt(feed, 200);
  run.CheckpointAt(feed, 400);
  feed.limit = INT64_MAX;
  ASSERT_OK(run.job->Wait());

  // The expected table: per key the row of the highest seq.
  std::map<int64_t, int64_t> latest;
  for (int64_t s = 1; s <= 600; ++s) latest[s % 37] = s;
  std::string expected;
  for (const auto& [k, s] : latest) {
    expected += "{\"seq\":" + std::to_string(s) + ",\"k\":" + std::to_string(k) + ",\"v\":\"v" +
                std::to_string(s) + "\"}\n";
  }
  std::string path = sink.root + "/expected.jsonl";
  ASSERT_OK(io::WriteFileExclusive(path, expected));
  verify::VerifyOptions o;
  o.expected_file = path;
  o.key_column = "k";
  o.unique_column = "k";
  auto catalog = sink.Catalog();
  ASSERT_OK_AND_ASSIGN(verify::VerifyReport report, verify::VerifyTable(*catalog, sink.id, o));
  EXPECT_EQ(report.rows, 37);
  EXPECT_EQ(report.findings(), 0) << report.ToText();
  EXPECT_GT(report.delete_files, 0);
  EXPECT_EQ(sink.CommittedCheckpoints(), (std::vector<uint64_t>{1, 2, 3}));
}

TEST(IcebergSinkRestorePlan, MissingTableOrNoCommitHasNothingToReconcile) {
  Sink sink;
  ASSERT_OK_AND_ASSIGN(
      SinkRestorePlan plan,
      PlanIcebergSinkRestore(sink.spec, std::nullopt, StaleRestorePolicy::kFail, true));
  EXPECT_FALSE(plan.table_ahead);
  EXPECT_EQ(plan.table_checkpoint_id, 0u);
  EXPECT_NE(plan.message.find("does not exist"), std::string::npos) << plan.message;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  ASSERT_OK_AND_ASSIGN(
      plan, PlanIcebergSinkRestore(sink.spec, std::nullopt, StaleRestorePolicy::kFail, true));
  EXPECT_FALSE(plan.table_ahead);
  EXPECT_NE(plan.message.find("holds no commit"), std::string::npos) << plan.message;
}

// Commits an empty snapshot carrying a sink marker.
void CommitMarker(Sink& sink, const std::string& sink_id, uint64_t checkpoint,
                  const std::string& offsets) {
  iceberg::SnapshotChanges changes;
  changes.summary_properties = {{"floe.sink-id", sink_id},
                                {"floe.job-id", "j"},
                                {"floe.checkpoint-id", std::to_string(checkpoint)},
                                {"floe.source-offsets", offsets}};
  auto catalog = sink.Catalog();
  ASSERT_TRUE(iceberg::CommitSnapshot(*catalog, sink.id, changes).ok());
}

// Commits an empty snapshot carrying a full marker of `job` reading `pipeline`.
void CommitJobMarker(Sink& sink, const std::string& job, const std::string& pipeline,
                     uint64_t checkpoint) {
  iceberg::SnapshotChanges changes;
  changes.summary_properties = {{"floe.sink-id", "seq-pipeline"},
                                {"floe.job-id", job},
                                {"floe.pipeline", pipeline},
                                {"floe.checkpoint-id", std::to_string(checkpoint)},
                                {"floe.source-offsets", R"({"seq":{"next":5}})"}};
  auto catalog = sink.Catalog();
  ASSERT_TRUE(iceberg::CommitSnapshot(*catalog, sink.id, changes).ok());
}

TEST(IcebergSinkRestorePlan, RefusesASinkIdLastCommittedByAnotherJobReadingAnotherPipeline) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  CommitJobMarker(sink, "job-b", PipelineFingerprint("source-roster=roster(seed=7)"), 9);
  sink.spec.job_id = "job-a";
  sink.spec.pipeline = PipelineFingerprint("source-roster=roster(seed=42)");
  Result<SinkRestorePlan> refused =
      PlanIcebergSinkRestore(sink.spec, std::nullopt, StaleRestorePolicy::kFail, false);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(refused.status().IsInvalidArgument());
  const std::string& msg = refused.status().message();
  EXPECT_NE(msg.find("job job-b"), std::string::npos) << msg;
  EXPECT_NE(msg.find("this job job-a"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'sink-id'"), std::string::npos) << msg;

  // Legitimate: a resubmission of the same pipeline (new job id), a restart of the same job
  // (pipeline edited), and commits of an older floe without a fingerprint.
  sink.spec.pipeline = PipelineFingerprint("source-roster=roster(seed=7)");
  ASSERT_OK(
      PlanIcebergSinkRestore(sink.spec, std::nullopt, StaleRestorePolicy::kFail, false).status());
  sink.spec.job_id = "job-b";
  sink.spec.pipeline = PipelineFingerprint("source-roster=roster(seed=42)");
  ASSERT_OK(
      PlanIcebergSinkRestore(sink.spec, std::nullopt, StaleRestorePolicy::kFail, false).status());
  CommitMarker(sink, "seq-pipeline", 10, "{}");
  sink.spec.job_id = "job-a";
  ASSERT_OK(
      PlanIcebergSinkRestore(sink.spec, std::nullopt, StaleRestorePolicy::kFail, false).status());
}

TEST(IcebergCommitter, StopsWhenAnotherRunningJobCommitsTheSameSinkId) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  Harness h(sink);
  IcebergCommitterOptions mine = h.CommitterOptions();
  mine.pipeline = PipelineFingerprint("a");
  auto a = Harness::OpenCommitter(mine);
  h.Stage(*a, CheckpointId(1), {SeqRows(1, 10, 0)});
  ASSERT_OK(a->OnCheckpointComplete(CheckpointId(1)));
  EXPECT_EQ(a->stats().committed, 1);

  // Another job (same sink id "by-hand") commits while `a` runs...
  iceberg::SnapshotChanges changes;
  changes.summary_properties = {{"floe.sink-id", "by-hand"},
                                {"floe.job-id", "0therj0b"},
                                {"floe.checkpoint-id", "5"},
                                {"floe.source-offsets", "{}"}};
  auto catalog = sink.Catalog();
  ASSERT_TRUE(iceberg::CommitSnapshot(*catalog, sink.id, changes).ok());

  // ...so `a`'s next commit stops with both jobs named instead of skipping its checkpoint 2 as
  // "already held" (which lost rows silently).
  h.Stage(*a, CheckpointId(2), {SeqRows(11, 20, 0)});
  Status st = a->OnCheckpointComplete(CheckpointId(2));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("job 0therj0b committed sink id 'by-hand'"), std::string::npos)
      << st.ToString();
  EXPECT_NE(st.message().find("this job feedfeed"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("'sink-id'"), std::string::npos) << st.ToString();
  EXPECT_EQ(a->stats().skipped_present, 0);
}

TEST(IcebergSinkRestorePlan, StaleRestoreWithKeyedStateFollowsThePolicy) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  CommitMarker(sink, "seq-pipeline", 12, R"({"kafka/0":{"partition":0,"offset":500}})");
  CommitMarker(sink, "another-sink", 40, "{}");  // newer, but not ours
  runtime::CompletedCheckpoint old;
  old.id = CheckpointId(7);
  old.is_savepoint = true;
  old.dir = "/sp/savepoint-abc";

  Result<SinkRestorePlan> fail =
      PlanIcebergSinkRestore(sink.spec, old, StaleRestorePolicy::kFail, true);
  ASSERT_FALSE(fail.ok());
  EXPECT_TRUE(fail.status().IsInvalidArgument());
  const std::string& msg = fail.status().message();
  EXPECT_NE(msg.find("--on-stale-restore=fail|skip-to-table|replay"), std::string::npos) << msg;
  EXPECT_NE(msg.find("checkpoint 12"), std::string::npos) << msg;
  EXPECT_NE(msg.find("savepoint 7"), std::string::npos) << msg;

  ASSERT_OK_AND_ASSIGN(
      SinkRestorePlan skip,
      PlanIcebergSinkRestore(sink.spec, old, StaleRestorePolicy::kSkipToTable, true));
  EXPECT_TRUE(skip.table_ahead);
  EXPECT_EQ(skip.table_checkpoint_id, 12u);
  EXPECT_EQ(skip.source_positions.at("kafka/0"), R"({"offset":500,"partition":0})");

  ASSERT_OK_AND_ASSIGN(SinkRestorePlan replay,
                       PlanIcebergSinkRestore(sink.spec, old, StaleRestorePolicy::kReplay, true));
  EXPECT_FALSE(replay.table_ahead);
  EXPECT_EQ(replay.table_checkpoint_id, 12u);  // ids still continue above the table's

  // Without keyed state the sources simply start at the table's positions.
  ASSERT_OK_AND_ASSIGN(SinkRestorePlan plain,
                       PlanIcebergSinkRestore(sink.spec, old, StaleRestorePolicy::kFail, false));
  EXPECT_TRUE(plain.table_ahead);
  // A restore at or above the table's checkpoint is not stale.
  runtime::CompletedCheckpoint recent;
  recent.id = CheckpointId(12);
  ASSERT_OK_AND_ASSIGN(SinkRestorePlan current,
                       PlanIcebergSinkRestore(sink.spec, recent, StaleRestorePolicy::kFail, true));
  EXPECT_FALSE(current.table_ahead);
}

TEST(PrepareIcebergTable, CreatesTheTableWithKeyAndWriteProperties) {
  Sink sink(/*upsert=*/true);
  sink.spec.table.options["write.target-file-size-bytes"] = "1048576";
  sink.spec.table.options["write.parquet.compression-codec"] = "snappy";
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  iceberg::TableMetadata md = sink.Metadata();
  const iceberg::Schema& schema = md.current_schema();
  ASSERT_EQ(schema.fields.size(), 3u);
  EXPECT_EQ(schema.fields[1].name, "k");
  EXPECT_FALSE(schema.fields[1].nullable);
  EXPECT_EQ(schema.identifier_field_ids, (std::vector<int32_t>{2}));
  EXPECT_EQ(md.properties.at("write.target-file-size-bytes"), "1048576");
  EXPECT_EQ(md.properties.at("write.parquet.compression-codec"), "snappy");
  EXPECT_EQ(md.properties.at("write.upsert.enabled"), "true");
  // Preparing again finds the table and accepts it.
  ASSERT_OK(PrepareIcebergTable(sink.spec));
}

TEST(PrepareIcebergTable, CreatedTablesDeleteOldMetadataUnlessTheUserSaysOtherwise) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  iceberg::TableMetadata md = sink.Metadata();
  EXPECT_EQ(md.properties.at("write.metadata.delete-after-commit.enabled"), "true");
  EXPECT_EQ(md.properties.at("write.metadata.previous-versions-max"), "20");

  Sink explicit_sink;
  explicit_sink.spec.table.options["write.metadata.delete-after-commit.enabled"] = "false";
  explicit_sink.spec.table.options["write.metadata.previous-versions-max"] = "500";
  ASSERT_OK(PrepareIcebergTable(explicit_sink.spec));
  md = explicit_sink.Metadata();
  EXPECT_EQ(md.properties.at("write.metadata.delete-after-commit.enabled"), "false");
  EXPECT_EQ(md.properties.at("write.metadata.previous-versions-max"), "500");
}

TEST(PrepareIcebergTable, RejectsBadOptionsNamingTheOptionAndTheRule) {
  auto expect_error = [](IcebergSinkSpec spec, const std::string& needle) {
    Status st = PrepareIcebergTable(spec);
    ASSERT_FALSE(st.ok()) << needle;
    EXPECT_NE(st.message().find(needle), std::string::npos) << st.ToString();
  };
  Sink sink;
  IcebergSinkSpec s = sink.spec;
  s.table.options["catalog-type"] = "hive";
  expect_error(s, "option 'catalog-type' = 'hive' is not supported: floe supports 'hadoop'");
  s = sink.spec;
  s.table.options.erase("warehouse");
  expect_error(s, "option 'warehouse' is required");
  s = sink.spec;
  s.table.options["write.upsert.enabled"] = "true";
  expect_error(s, "needs a PRIMARY KEY");
  s = sink.spec;
  s.table.options["format-version"] = "1";
  expect_error(s, "format version 2 only");
  s = sink.spec;
  s.table.options["write.parquet.compression-codec"] = "lz77";
  expect_error(s, "write.parquet.compression-codec");
  s = sink.spec;
  s.table.options["write.target-file-size-bytes"] = "-5";
  expect_error(s, "write.target-file-size-bytes");
  s = sink.spec;
  s.table.options["sink.parallelism"] = "0";
  expect_error(s, "sink.parallelism");
  s = sink.spec;
  s.table.options["bogus"] = "1";
  expect_error(s, "unsupported option 'bogus'");
  s = sink.spec;
  s.table.primary_key = {"v"};
  s.table.options["write.upsert.enabled"] = "true";
  s.table.options["partition-by"] = "bucket(4, seq)";
  expect_error(s, "not in the primary key");
}

TEST(PrepareIcebergTable, AMisspelledTablePropertyIsRefusedWithTheClosestKey) {
  auto error = [](const std::string& key, const std::string& value = "true") {
    Sink sink(/*upsert=*/true);
    sink.spec.table.options[key] = value;
    return PrepareIcebergTable(sink.spec);
  };
  const std::string opt_in = "; set 'floe.allow-unknown-properties' = 'true' to store it anyway";
  Status st = error("write.upsert.enabld");
  EXPECT_TRUE(st.IsInvalidArgument()) << st.ToString();
  EXPECT_EQ(st.message(),
            "iceberg table 'seqs': option 'write.upsert.enabld' is not a table property Iceberg "
            "defines (did you mean 'write.upsert.enabled'?)" +
                opt_in);
  EXPECT_EQ(error("commit.retry.num-retry", "3").message(),
            "iceberg table 'seqs': option 'commit.retry.num-retry' is not a table property "
            "Iceberg defines (did you mean 'commit.retry.num-retries'?)" +
                opt_in);
  // Per-column keys are suggested with the column the user wrote.
  EXPECT_EQ(error("write.metadata.metric.column.seq", "full").message(),
            "iceberg table 'seqs': option 'write.metadata.metric.column.seq' is not a table "
            "property Iceberg defines (did you mean 'write.metadata.metrics.column.seq'?)" +
                opt_in);
  EXPECT_EQ(error("history.expire.max-snapshot-age", "1000").message(),
            "iceberg table 'seqs': option 'history.expire.max-snapshot-age' is not a table "
            "property Iceberg defines (did you mean 'history.expire.max-snapshot-age-ms'?)" +
                opt_in);
  // Nothing close: no suggestion. A per-column key needs its column.
  EXPECT_EQ(error("write.floe-never-heard-of-this").message(),
            "iceberg table 'seqs': option 'write.floe-never-heard-of-this' is not a table "
            "property Iceberg defines" +
                opt_in);
  EXPECT_FALSE(error("write.metadata.metrics.column.", "full").ok());
  // Plain options get a suggestion too.
  EXPECT_NE(error("sink.paralelism", "2")
                .message()
                .find("unsupported option 'sink.paralelism' (did you mean 'sink.parallelism'?)"),
            std::string::npos)
      << error("sink.paralelism", "2").message();
  EXPECT_FALSE(error("floe.allow-unknown-properties", "maybe").ok());
}

TEST(PrepareIcebergTable, KnownPropertiesPassAndTheOptInStoresUnknownOnesWithAWarning) {
  Sink sink;
  auto& options = sink.spec.table.options;
  options["write.metadata.metrics.column.seq"] = "full";
  options["write.parquet.bloom-filter-enabled.column.v"] = "true";
  options["write.parquet.bloom-filter-fpp.column.v"] = "0.05";
  options["write.metadata.metrics.default"] = "counts";
  options["write.distribution-mode"] = "hash";
  options["commit.retry.num-retries"] = "3";
  options["history.expire.max-snapshot-age-ms"] = "86400000";
  options["read.split.target-size"] = "1048576";
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  iceberg::TableMetadata md = sink.Metadata();
  EXPECT_EQ(md.properties.at("write.metadata.metrics.column.seq"), "full");
  EXPECT_EQ(md.properties.at("write.parquet.bloom-filter-enabled.column.v"), "true");
  EXPECT_EQ(md.properties.at("history.expire.max-snapshot-age-ms"), "86400000");
  EXPECT_EQ(md.properties.at("read.split.target-size"), "1048576");

  Sink other;
  other.spec.table.options["write.upsert.enabld"] = "true";
  other.spec.table.options["write.custom.tag"] = "blue";
  other.spec.table.options["floe.allow-unknown-properties"] = "true";
  std::vector<std::string> lines;
  SetLogSinkForTesting([&](LogLevel, std::string_view line) { lines.emplace_back(line); });
  Status st = PrepareIcebergTable(other.spec);
  SetLogSinkForTesting({});
  ASSERT_OK(st);
  md = other.Metadata();
  EXPECT_EQ(md.properties.at("write.upsert.enabld"), "true");
  EXPECT_EQ(md.properties.at("write.custom.tag"), "blue");
  EXPECT_EQ(md.properties.count("floe.allow-unknown-properties"), 0u);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "floe: warning: iceberg table 'seqs': storing table properties Iceberg does not define "
            "('floe.allow-unknown-properties' is set): 'write.custom.tag', 'write.upsert.enabld' "
            "(did you mean 'write.upsert.enabled'?)\n");
}

TEST(PrepareIcebergTable, AnExistingTableMustHaveTheDeclaredColumns) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  IcebergSinkSpec s = sink.spec;
  auto schema = std::make_shared<BatchSchema>(*SeqSchema());
  schema->fields[2].type = DataType::Int32();
  s.table.schema = schema;
  Status st = PrepareIcebergTable(s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("column 'v' is declared INT but the table has STRING"),
            std::string::npos)
      << st.ToString();
  schema = std::make_shared<BatchSchema>(*SeqSchema());
  schema->fields.pop_back();
  s.table.schema = schema;
  st = PrepareIcebergTable(s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("column 'v' that the declaration lacks"), std::string::npos)
      << st.ToString();
}

// 'sink.schema-evolution' = 'add-columns': new declared columns are added (optional, new ids
// after the highest), INT declared BIGINT is widened; a new schema id becomes current. What
// Iceberg cannot do without rewriting files is refused naming the column.
TEST(PrepareIcebergTable, AddColumnsEvolvesTheTableToTheDeclaredColumns) {
  Sink sink;
  IcebergSinkSpec s = sink.spec;
  auto v1 = std::make_shared<BatchSchema>(*SeqSchema());
  v1->fields.push_back(Field{"n", DataType::Int32(), true, 4});
  s.table.schema = v1;
  ASSERT_OK(PrepareIcebergTable(s));
  auto v2 = std::make_shared<BatchSchema>(*SeqSchema());
  v2->fields.push_back(Field{"n", DataType::Int64(), true, 4});
  v2->fields.push_back(Field{"email", DataType::String(), true, 5});
  s.table.schema = v2;
  Status st = PrepareIcebergTable(s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("option 'sink.schema-evolution' = 'add-columns' adds new columns"),
            std::string::npos)
      << st.ToString();
  s.table.options["sink.schema-evolution"] = "add-columns";
  ASSERT_OK(PrepareIcebergTable(s));
  iceberg::TableMetadata md = sink.Metadata();
  EXPECT_EQ(md.current_schema_id, 1);
  EXPECT_EQ(md.schemas.size(), 2u);
  EXPECT_EQ(md.last_column_id, 5);
  const iceberg::Schema& now = md.current_schema();
  ASSERT_EQ(now.fields.size(), 5u);
  EXPECT_EQ(now.FindByName("n")->type, DataType::Int64());
  EXPECT_EQ(now.FindByName("n")->field_id, 4);
  EXPECT_EQ(now.FindByName("email")->field_id, 5);
  EXPECT_TRUE(now.FindByName("email")->nullable);
  EXPECT_EQ(md.schemas[0].FindByName("n")->type, DataType::Int32());
  ASSERT_OK(PrepareIcebergTable(s));  // nothing left to do: no new schema
  EXPECT_EQ(sink.Metadata().schemas.size(), 2u);

  auto refused = [&](std::shared_ptr<BatchSchema> schema, const std::string& needle) {
    s.table.schema = schema;
    Status r = PrepareIcebergTable(s);
    ASSERT_FALSE(r.ok()) << needle;
    EXPECT_NE(r.message().find(needle), std::string::npos) << r.ToString();
  };
  auto narrowed = std::make_shared<BatchSchema>(*v2);
  narrowed->fields[3].type = DataType::Int32();
  refused(narrowed, "column 'n' is declared INT but the table has BIGINT; Iceberg widens only");
  auto required = std::make_shared<BatchSchema>(*v2);
  required->fields.push_back(Field{"city", DataType::String(), false, 6});
  refused(required, "column 'city' is new to the table and declared NOT NULL");
  // A table column the declaration no longer has stays: optional, written null (or from the
  // records' undeclared fields).
  auto dropped = std::make_shared<BatchSchema>(*v2);
  dropped->fields.pop_back();
  s.table.schema = dropped;
  ASSERT_OK(PrepareIcebergTable(s));
  EXPECT_EQ(sink.Metadata().current_schema().fields.size(), 5u);
  s.table.options["sink.schema-evolution"] = "yes";
  refused(v2, "option 'sink.schema-evolution' = 'yes' must be none or add-columns");
}

std::unique_ptr<IcebergWriterOperator> OpenWriter(const Sink& sink, const std::string& job_id,
                                                  const std::string& attempt,
                                                  std::optional<CheckpointId> restored) {
  IcebergWriterOptions o;
  o.catalog.warehouse = sink.warehouse();
  o.table = sink.id;
  o.job_id = job_id;
  o.attempt_token = attempt;
  auto writer = IcebergWriterOperator::Make(o).ValueOrDie();
  runtime::OperatorContext ctx;
  ctx.task.vertex = "w";
  ctx.restored_from = restored;
  EXPECT_TRUE(writer->Open(ctx).ok());
  return writer;
}

// A writer growing the table by its rows' undeclared fields (add_columns): new columns get the
// ids after the table's, in the order rows bring them; its files carry the grown schema to the
// committer and its state holds it. A writer restored from that state (those files not yet
// committed) gives the same fields the same ids whatever order its rows name them in.
TEST(IcebergWriter, GrownSchemaTravelsWithTheFilesAndIsRestoredFromTheState) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));  // seq, k, v: ids 1..3
  auto input = runtime::WithUndeclaredFieldsColumn(*SeqSchema());
  auto rows = [&](int64_t seq, const std::vector<std::string>& names) {
    RecordBatch b(input);
    b.mutable_column(0).Append<int64_t>(seq);
    b.mutable_column(1).Append<int64_t>(seq);
    b.mutable_column(2).AppendNull();
    UndeclaredFieldsWriter packed;
    for (const std::string& n : names) packed.AddString(n, n + std::to_string(seq));
    b.mutable_column(3).AppendBytes(packed.Finish());
    return b;
  };
  auto open = [&](const std::string& attempt) {
    IcebergWriterOptions o;
    o.catalog.warehouse = sink.warehouse();
    o.table = sink.id;
    o.job_id = "j0b";
    o.attempt_token = attempt;
    o.add_columns = true;
    auto writer = IcebergWriterOperator::Make(o).ValueOrDie();
    runtime::OperatorContext ctx;
    ctx.task.vertex = "w";
    EXPECT_TRUE(writer->Open(ctx).ok());
    return writer;
  };
  // The ids the files handed over at barrier `id` were written with, by name.
  auto handed_over = [&](IcebergWriterOperator& w, uint64_t id, runtime::StateWriter* state) {
    testing::CollectingCollector out;
    EXPECT_TRUE(w.PrepareBarrier(CheckpointId(id), out).ok());
    EXPECT_TRUE(w.OnBarrier(CheckpointId(id), *state, out).ok());
    std::map<std::string, int32_t> ids;
    for (const RecordBatch& b : out.batches) {
      for (const internal::WriterFiles& f : internal::DecodeWriterFiles(b).ValueOrDie()) {
        for (const Field& field : iceberg::SchemaFromJson(f.written_schema).ValueOrDie().fields) {
          ids[field.name] = field.field_id;
        }
      }
    }
    return ids;
  };
  NullCollector none;
  auto first = open("a1a1a1a1");
  ASSERT_OK(first->ProcessBatch(rows(1, {"phone"}), 0, none));
  ASSERT_OK(first->ProcessBatch(rows(2, {"email", "phone"}), 0, none));
  runtime::StateWriter state;
  const std::map<std::string, int32_t> want = {
      {"seq", 1}, {"k", 2}, {"v", 3}, {"phone", 4}, {"email", 5}};
  EXPECT_EQ(handed_over(*first, 1, &state), want);
  EXPECT_EQ(sink.Metadata().current_schema().fields.size(), 3u);  // nothing committed

  auto restored = open("b2b2b2b2");
  runtime::StateReader reader(state.data());
  ASSERT_OK(restored->Restore(reader));
  ASSERT_OK(restored->ProcessBatch(rows(3, {"email", "phone"}), 0, none));
  runtime::StateWriter again;
  EXPECT_EQ(handed_over(*restored, 2, &again), want);
}

// Writes `rows` and hands their files over at barrier `id` to nobody: what a worker leaves when
// it dies before checkpoint `id` completes. Returns the new files.
std::set<std::string> HandOverToNobody(const Sink& sink, IcebergWriterOperator& writer,
                                       CheckpointId id, const RecordBatch& rows) {
  std::set<std::string> before = DataFiles(sink);
  NullCollector nobody;
  EXPECT_TRUE(writer.ProcessBatch(rows, 0, nobody).ok());
  runtime::StateWriter state;
  EXPECT_TRUE(writer.PrepareBarrier(id, nobody).ok());
  EXPECT_TRUE(writer.OnBarrier(id, state, nobody).ok());
  std::set<std::string> added;
  for (const std::string& f : DataFiles(sink)) {
    if (before.count(f) == 0) added.insert(f);
  }
  EXPECT_FALSE(added.empty());
  return added;
}

// A completed checkpoint (or savepoint) whose only task state is the committer's.
void WriteCommitterCheckpoint(const Sink& sink, const std::string& job_id, CheckpointId id,
                              bool savepoint, const std::string& committer_state) {
  runtime::CheckpointStorage::Options so;
  so.checkpoint_dir = sink.checkpoints();
  so.num_retained = 5;
  so.job_id = job_id;
  auto storage = runtime::CheckpointStorage::Make(so).ValueOrDie();
  runtime::CheckpointLocation loc = storage->InitCheckpoint(id, savepoint).ValueOrDie();
  runtime::TaskStateHandle handle =
      runtime::CheckpointStorage::WriteTaskState(
          io::FileIO(), loc, internal::CommitterVertexName(sink.spec) + "/0", committer_state)
          .ValueOrDie();
  ASSERT_OK(storage->Finalize(loc, {handle}, 0));
}

bool ContainsAll(const std::set<std::string>& all, const std::set<std::string>& some) {
  return std::includes(all.begin(), all.end(), some.begin(), some.end());
}
bool ContainsNone(const std::set<std::string>& all, const std::set<std::string>& some) {
  for (const std::string& s : some) {
    if (all.count(s) > 0) return false;
  }
  return true;
}

// Before a run, the files this job's earlier attempts left (killed workers, or a failure that
// could not clean up) and nothing references are removed; the table's, those of a retained
// checkpoint or a savepoint, other jobs' and foreign files stay.
TEST(IcebergSinkRestorePlan, RemovesFilesThatEarlierAttemptsLeftAndNothingReferences) {
  Sink sink;
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  const std::string job = "feedfeed";
  sink.spec.job_id = job;
  sink.spec.checkpoint_dir = sink.checkpoints();
  const std::string data = sink.warehouse() + "/demo/seqs/data";

  // Attempt a1a1a1a1: checkpoint 1 committed, checkpoint 2 completed (retained) but not yet
  // committed, savepoint 3, then it dies after handing over files for checkpoint 4.
  Harness h(sink);
  h.writer = OpenWriter(sink, job, "a1a1a1a1", std::nullopt);
  auto committer = Harness::OpenCommitter(h.CommitterOptions());
  h.Stage(*committer, CheckpointId(1), {SeqRows(1, 50, 0)});
  ASSERT_OK(committer->OnCheckpointComplete(CheckpointId(1)));
  const std::set<std::string> table = DataFiles(sink);
  std::set<std::string> before = DataFiles(sink);
  std::string chk2 = h.Stage(*committer, CheckpointId(2), {SeqRows(51, 100, 0)});
  WriteCommitterCheckpoint(sink, job, CheckpointId(2), false, chk2);
  std::set<std::string> in_checkpoint;
  for (const std::string& f : DataFiles(sink)) {
    if (before.count(f) == 0) in_checkpoint.insert(f);
  }
  before = DataFiles(sink);
  std::string sp3 = h.Stage(*committer, CheckpointId(3), {SeqRows(101, 150, 0)});
  WriteCommitterCheckpoint(sink, job, CheckpointId(3), true, sp3);
  std::set<std::string> in_savepoint;
  for (const std::string& f : DataFiles(sink)) {
    if (before.count(f) == 0) in_savepoint.insert(f);
  }
  std::set<std::string> orphans =
      HandOverToNobody(sink, *h.writer, CheckpointId(4), SeqRows(151, 200, 0));
  // Attempt b2b2b2b2, restored from 3, dies the same way (its files: k = 4).
  auto b2 = OpenWriter(sink, job, "b2b2b2b2", CheckpointId(3));
  for (const std::string& f : HandOverToNobody(sink, *b2, CheckpointId(5), SeqRows(151, 200, 0))) {
    orphans.insert(f);
  }
  // Attempt c3c3c3c3, restored from 1 (k = 2): unreferenced, but a savepoint moved elsewhere
  // could hold it (k <= 3, the highest savepoint id recorded), so it stays.
  auto c3 = OpenWriter(sink, job, "c3c3c3c3", CheckpointId(1));
  std::set<std::string> kept = HandOverToNobody(sink, *c3, CheckpointId(2), SeqRows(51, 60, 0));
  // Another job's leftovers, and files floe did not name, are never touched.
  auto other = OpenWriter(sink, "0th3rj0b", "d4d4d4d4", CheckpointId(3));
  for (const std::string& f :
       HandOverToNobody(sink, *other, CheckpointId(4), SeqRows(151, 200, 0))) {
    kept.insert(f);
  }
  const std::string tag = internal::FileJobTag(job);
  for (const std::string& name :
       std::vector<std::string>{"foreign.parquet", tag + "-00000-a1a1a1a1-4.parquet",
                                tag + "-00000-zzzzzzzz-4-00000.parquet"}) {
    ASSERT_OK(io::WriteFileExclusive(data + "/" + name, "x"));
    kept.insert(data + "/" + name);
  }
  ASSERT_EQ(orphans.size(), 2u);

  std::vector<std::string> log;
  SetLogSinkForTesting([&](LogLevel, std::string_view line) { log.emplace_back(line); });
  ASSERT_OK_AND_ASSIGN(
      runtime::CompletedCheckpoint restored,
      runtime::CheckpointStorage::LoadPath(io::FileIO(), sink.checkpoints() + "/chk-2"));
  ASSERT_OK_AND_ASSIGN(
      SinkRestorePlan plan,
      PlanIcebergSinkRestore(sink.spec, restored, StaleRestorePolicy::kFail, false));
  SetLogSinkForTesting(nullptr);
  std::set<std::string> now = DataFiles(sink);
  EXPECT_TRUE(ContainsNone(now, orphans));
  EXPECT_TRUE(ContainsAll(now, table));
  EXPECT_TRUE(ContainsAll(now, in_checkpoint));
  EXPECT_TRUE(ContainsAll(now, in_savepoint));
  EXPECT_TRUE(ContainsAll(now, kept));
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("removed 2 files"), std::string::npos) << log[0];
  EXPECT_NE(log[0].find("(a1a1a1a1, b2b2b2b2) of job feedfeed"), std::string::npos) << log[0];

  // Nothing is left to remove; what the savepoint floor kept is counted.
  internal::FailedAttemptScope scope;
  scope.job_id = job;
  scope.checkpoint_dir = sink.checkpoints();
  scope.restored = &restored;
  ASSERT_OK_AND_ASSIGN(internal::FailedAttemptCleanup again,
                       internal::RemoveFailedAttemptFiles(io::FileIO(), sink.Metadata(), scope));
  EXPECT_EQ(again.files, 0);
  EXPECT_EQ(again.kept_for_savepoints, 1);

  // The restore commits checkpoint 2's files: they are all there.
  auto restoring = Harness::OpenCommitter(h.CommitterOptions(), CheckpointId(2));
  runtime::StateReader r(chk2);
  ASSERT_OK(restoring->Restore(r));
  verify::VerifyReport report = sink.Verify(1, 100);
  EXPECT_EQ(report.rows, 100);
  EXPECT_EQ(report.findings(), 0) << report.ToText();
}

TEST(IcebergSinkInternal, WriterFileNamesCarryAJobTagNoOtherJobShares) {
  EXPECT_EQ(internal::FileJobTag("3f2a9c1d00000000000000000000abcd"), "3f2a9c1d");
  const std::string one = internal::FileJobTag("ingest-prod-1");
  const std::string two = internal::FileJobTag("ingest-prod-2");
  EXPECT_NE(one, two);
  EXPECT_EQ(one.rfind("ingestprx", 0), 0u) << one;
  EXPECT_EQ(one.size(), 17u);
  EXPECT_EQ(internal::FileJobTag(""), "job");

  auto name = internal::ParseWriterFileName(one + "-00003-0a1b2c3d-17-00002-eq-deletes.parquet");
  ASSERT_TRUE(name.has_value());
  EXPECT_EQ(name->job_tag, one);
  EXPECT_EQ(name->subtask, 3u);
  EXPECT_EQ(name->attempt, "0a1b2c3d");
  EXPECT_EQ(name->checkpoint, 17u);
  EXPECT_TRUE(internal::ParseWriterFileName("3f2a9c1d-00000-0a1b2c3d-1-00000.parquet"));
  // A compaction's output (TableMaintainer): "rw" instead of a subtask.
  auto compacted = internal::ParseWriterFileName("3f2a9c1d-rw-0a1b2c3d-12-00000.parquet");
  ASSERT_TRUE(compacted.has_value());
  EXPECT_TRUE(compacted->compaction);
  EXPECT_EQ(compacted->checkpoint, 12u);
  EXPECT_FALSE(name->compaction);
  for (const char* bad :
       {"3f2a9c1d-00000-0a1b2c3d-1-00000.avro", "3f2a9c1d-00000-0a1b2c3d-1.parquet",
        "3f2a9c1d-0-0a1b2c3d-1-00000.parquet", "3f2a9c1d-00000-0A1B2C3D-1-00000.parquet",
        "3f2a9c1d-00000-0a1b2c3d--00000.parquet", "3f_2a9c1d-00000-0a1b2c3d-1-00000.parquet",
        "3f2a9c1d-rx-0a1b2c3d-1-00000.parquet",
        "00000-0-5e1b2c3d-0000-1111-2222-333344445555-00001.parquet"}) {
    EXPECT_FALSE(internal::ParseWriterFileName(bad)) << bad;
  }
}

TEST(IcebergSinkInternal, FileDescriptionsRoundTrip) {
  iceberg::DataFile f;
  f.content = iceberg::FileContent::kEqualityDeletes;
  f.file_path = "file:///w/t/data/x-00001-eq-deletes.parquet";
  f.spec_id = 3;
  f.partition = {iceberg::Value{},
                 iceberg::Value{true},
                 iceberg::Value{int32_t{-7}},
                 iceberg::Value{int64_t{1} << 40},
                 iceberg::Value{1.5f},
                 iceberg::Value{2.25},
                 iceberg::Value{std::string("a/b")},
                 iceberg::Value{Int128(-12345678901234567)}};
  f.record_count = 9;
  f.file_size_in_bytes = 1234;
  f.column_sizes = {{1, 10}, {2, 20}};
  f.value_counts = {{1, 9}};
  f.null_value_counts = {{2, 1}};
  f.nan_value_counts = {{3, 0}};
  f.lower_bounds = {{1, std::string("\0\1", 2)}};
  f.upper_bounds = {{1, "zz"}};
  f.split_offsets = {4, 100};
  f.equality_ids = {1, 2};
  f.sort_order_id = 0;
  internal::WriterFiles files;
  files.checkpoint = CheckpointId(42);
  files.writer_task = "w/1";
  files.split = "orders/7";
  files.data_files = {iceberg::DataFile{}};
  files.delete_files = {f};
  RecordBatch batch = internal::EncodeWriterFiles(files);
  ASSERT_OK_AND_ASSIGN(std::vector<internal::WriterFiles> back, internal::DecodeWriterFiles(batch));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].checkpoint, CheckpointId(42));
  EXPECT_EQ(back[0].writer_task, "w/1");
  EXPECT_EQ(back[0].split, "orders/7");
  EXPECT_EQ(back[0].data_files, files.data_files);
  EXPECT_EQ(back[0].delete_files, files.delete_files);
}

// ---- routed sinks ('catalog-table' naming columns) ---------------------------------------

TEST(RoutedIcebergSink, ATemplateNamesItsColumnsAndMatchesTheNamesItGives) {
  ASSERT_OK_AND_ASSIGN(internal::TableRoute route, internal::ParseTableRoute("ev_{kind}_{region}"));
  EXPECT_EQ(route.columns, (std::vector<std::string>{"kind", "region"}));
  EXPECT_EQ(route.literals, (std::vector<std::string>{"ev_", "_", ""}));
  EXPECT_EQ(route.NameFor({"click", "eu"}), "ev_click_eu");
  EXPECT_TRUE(route.Matches("ev_click_eu"));
  EXPECT_TRUE(route.Matches("ev__eu"));  // an empty value gives a name too
  EXPECT_FALSE(route.Matches("ev_click"));
  EXPECT_FALSE(route.Matches("other_click_eu"));
  ASSERT_OK_AND_ASSIGN(internal::TableRoute plain, internal::ParseTableRoute("events"));
  EXPECT_TRUE(plain.columns.empty());
  for (const char* bad : {"ev_{kind", "ev_{}", "ev_{a}{b}"}) {
    EXPECT_FALSE(internal::ParseTableRoute(bad).ok()) << bad;
  }
}

TEST(RoutedIcebergSink, RouteColumnsMustBeDeclaredStringsAndNoTableIsCreatedAtStart) {
  Sink sink;
  sink.spec.table.options["catalog-table"] = "t_{seq}";
  Status st = PrepareIcebergTable(sink.spec);
  EXPECT_NE(st.message().find("names column 'seq', which is not a STRING"), std::string::npos)
      << st.ToString();
  sink.spec.table.options["catalog-table"] = "t_{nope}";
  st = PrepareIcebergTable(sink.spec);
  EXPECT_NE(st.message().find("names column 'nope', which is not declared"), std::string::npos)
      << st.ToString();
  sink.spec.table.options["catalog-table"] = "t_{v";
  st = PrepareIcebergTable(sink.spec);
  EXPECT_NE(st.message().find("has no closing '}'"), std::string::npos) << st.ToString();
  sink.spec.table.options["catalog-table"] = "t_{v}";
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  ASSERT_OK_AND_ASSIGN(std::vector<iceberg::TableIdentifier> tables,
                       sink.Catalog()->ListTables("demo"));
  EXPECT_TRUE(tables.empty());
}

// Rows routed by `v` ("v<seq>") to t_v<seq>: tables created on first sight, every table's marker
// moving with the positions, a resubmitted job continuing from the tables' common checkpoint,
// and a table of the route that lacks it refusing a fresh start.
TEST(RoutedIcebergSink, RoutesRowsToTablesCreatedOnFirstSightAndResumesFromTheirCommonCheckpoint) {
  Sink sink;
  sink.spec.table.options["catalog-table"] = "t_{v}";
  ASSERT_OK(PrepareIcebergTable(sink.spec));
  {
    Feed feed;
    feed.end = 12;
    JobRun run;
    ASSERT_OK(run.Make(sink, feed));
    run.CheckpointAt(feed, 6);
    feed.limit = INT64_MAX;
    ASSERT_OK(run.job->Wait());
  }
  auto catalog = sink.Catalog();
  auto check_tables = [&](int64_t last, const std::string& checkpoint) {
    ASSERT_OK_AND_ASSIGN(std::vector<iceberg::TableIdentifier> tables, catalog->ListTables("demo"));
    ASSERT_EQ(tables.size(), static_cast<size_t>(last));
    for (int64_t seq = 1; seq <= last; ++seq) {
      iceberg::TableIdentifier id{"demo", "t_v" + std::to_string(seq)};
      ASSERT_OK_AND_ASSIGN(iceberg::LoadedTable loaded, catalog->LoadTable(id));
      const iceberg::Snapshot* current = loaded.metadata.current_snapshot();
      ASSERT_NE(current, nullptr) << id.ToString();
      EXPECT_EQ(current->summary.at("total-records"), "1") << id.ToString();
      EXPECT_EQ(current->summary.at("floe.checkpoint-id"), checkpoint) << id.ToString();
      EXPECT_EQ(loaded.metadata.properties.at(std::string(internal::kRoutedByProperty)),
                "seq-pipeline");
    }
  };
  // t_v1..t_v6 committed at checkpoint 1 and again (no rows, new positions) at 2.
  check_tables(12, "2");
  // The routed committer's state is read like a plain one's (files a restore may commit).
  ASSERT_OK(IcebergFilesHeldByCheckpoints(io::FileIO(), sink.checkpoints(), "").status());

  ASSERT_OK_AND_ASSIGN(
      SinkRestorePlan plan,
      PlanIcebergSinkRestore(sink.spec, std::nullopt, StaleRestorePolicy::kFail, false));
  EXPECT_TRUE(plan.table_ahead);
  EXPECT_EQ(plan.table_checkpoint_id, 2u);
  EXPECT_EQ(plan.source_positions.at("seq/0"), "{\"next_seq\":13}");
  {
    Feed feed;
    feed.end = 20;
    feed.limit = INT64_MAX;
    feed.board->SetStartOverrides(plan.source_positions);
    JobRun run;  // a new job id; same sink id
    ASSERT_OK(run.Make(sink, feed, std::nullopt, plan.table_checkpoint_id, "0123456789abcdef"));
    ASSERT_OK(run.job->Wait());
    EXPECT_EQ(feed.first_emitted.load(), 13);
  }
  check_tables(20, "3");

  // A table of the route this sink created but never committed to: a fresh start cannot tell
  // whether its commit of checkpoint 3 was lost, and refuses.
  ASSERT_OK(PrepareIcebergTable(internal::RoutedTableSpec(sink.spec, "t_vx", "seq-pipeline")));
  Result<SinkRestorePlan> refused =
      PlanIcebergSinkRestore(sink.spec, std::nullopt, StaleRestorePolicy::kFail, false);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("table demo.t_vx holds no checkpoint of it while "
                                            "another of its tables holds checkpoint 3"),
            std::string::npos)
      << refused.status().ToString();
}

}  // namespace
}  // namespace floe::connectors

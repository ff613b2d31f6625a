#include "floe/iceberg/rewrite.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "floe/iceberg/commit_test_util.h"
#include "floe/iceberg/data_test_util.h"
#include "floe/iceberg/maintenance.h"
#include "floe/iceberg/manifest_io.h"
#include "floe/iceberg/streaming_compaction_util.h"
#include "floe/io/file.h"

namespace floe::iceberg {
namespace {

using commit_testing::InterposedCatalog;
using testing::MakeBatch;
using testing::Row;
using testing::Sorted;
using testing::TableHarness;
using testing::TempDir;

Schema KeyedSchema() {
  Schema s;
  s.fields = {Field{"id", DataType::Int64(), false, 1}, Field{"tag", DataType::String(), true, 2}};
  s.identifier_field_ids = {1};
  return s;
}

Row R(int64_t id, std::string tag) { return {id, Value(std::move(tag))}; }

// A keyed table with `commits` upsert commits of ids 0..9 (tag "v<commit>"): ten small files,
// each later commit's equality deletes retiring the earlier rows.
std::unique_ptr<TableHarness> UpsertTable(const std::string& tmp, int commits) {
  auto made = TableHarness::Make(tmp, "db", "t", KeyedSchema(), "", {});
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  auto bs = KeyedSchema().ToBatchSchema();
  for (int c = 0; c < commits; ++c) {
    std::vector<Row> rows;
    for (int64_t id = 0; id < 10; ++id) rows.push_back(R(id, "v" + std::to_string(c)));
    auto snap = (*made)->CommitDelta(WriteMode::kUpsert, {{false, MakeBatch(bs, rows)}});
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
  }
  return std::move(made).value();
}

std::vector<Row> AllTagged(const std::string& tag) {
  std::vector<Row> rows;
  for (int64_t id = 0; id < 10; ++id) rows.push_back(R(id, tag));
  return rows;
}

CompactOptions Aggressive() {
  CompactOptions o;
  o.min_input_files = 2;
  o.delete_file_threshold = 1;
  return o;
}

TEST(RewriteDataFiles, UpsertTableBecomesOneFileWithoutDeletesAndKeepsItsRows) {
  TempDir tmp;
  auto h = UpsertTable(tmp.path(), 6);
  FLOE_ASSERT_OK_AND_ASSIGN(RewriteResult r, h->Compact(Aggressive()));
  ASSERT_TRUE(r.snapshot_id.has_value());
  EXPECT_EQ(r.data_files_before, 6);
  EXPECT_EQ(r.data_files_after, 1);
  EXPECT_GT(r.delete_files_before, 0);
  EXPECT_EQ(r.delete_files_after, 0);
  EXPECT_EQ(r.rows_written, 10);
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<Row> rows, h->Scan());
  EXPECT_EQ(Sorted(rows), AllTagged("v5"));
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, h->Load());
  EXPECT_EQ(md.current_snapshot()->operation(), "replace");
  EXPECT_EQ(md.current_snapshot()->summary.at("total-records"), "10");
  EXPECT_EQ(md.current_snapshot()->summary.at("total-delete-files"), "0");
  // Nothing more to do now: no commit.
  FLOE_ASSERT_OK_AND_ASSIGN(RewriteResult again, h->Compact(Aggressive()));
  EXPECT_FALSE(again.snapshot_id.has_value());
  // The snapshot before the rewrite still reads the same rows.
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<Row> before,
                            h->Scan(*md.current_snapshot()->parent_snapshot_id));
  EXPECT_EQ(Sorted(before), AllTagged("v5"));
}

TEST(RewriteDataFiles, ReportsProgressOncePlannedAndAfterEachFile) {
  TempDir tmp;
  auto h = UpsertTable(tmp.path(), 3);
  std::vector<MaintenanceProgress> seen;
  CompactOptions options = Aggressive();
  options.progress = [&](const MaintenanceProgress& p) { seen.push_back(p); };
  FLOE_ASSERT_OK_AND_ASSIGN(RewriteResult r, RewriteDataFiles(h->catalog(), h->id(), options));
  ASSERT_EQ(seen.size(), 4u);  // planned, then 3 files
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].files_done, static_cast<int64_t>(i));
    EXPECT_EQ(seen[i].files_total, 3);
    EXPECT_EQ(seen[i].bytes_total, r.bytes_rewritten);
  }
  EXPECT_EQ(seen.back().bytes_done, r.bytes_rewritten);
  EXPECT_EQ(seen.back().rows_done, r.rows_written);
}

TEST(RewriteDataFiles, BelowTheThresholdsNothingIsRewritten) {
  TempDir tmp;
  auto made = TableHarness::Make(tmp.path(), "db", "t", KeyedSchema(), "", {});
  ASSERT_TRUE(made.ok());
  auto bs = KeyedSchema().ToBatchSchema();
  for (int c = 0; c < 4; ++c) {
    FLOE_ASSERT_OK_AND_ASSIGN(
        Snapshot s,
        (*made)->CommitDelta(WriteMode::kAppend, {{false, MakeBatch(bs, {R(c, "a")})}}));
  }
  FLOE_ASSERT_OK_AND_ASSIGN(RewriteResult r, (*made)->Compact(CompactOptions{}));  // 4 < 5 files
  EXPECT_FALSE(r.snapshot_id.has_value());
  EXPECT_EQ(r.data_files_after, 4);
}

// A data commit lands between the rewrite's plan and its commit. Its equality deletes retire
// rows of the rewritten files; the rewrite retries on the new table and, since its files keep
// the starting sequence number, those deletes still apply to them.
TEST(RewriteDataFiles, EqualityDeletesCommittedDuringTheRewriteStillApply) {
  TempDir tmp;
  auto h = UpsertTable(tmp.path(), 5);
  InterposedCatalog catalog(&h->catalog());
  auto bs = KeyedSchema().ToBatchSchema();
  bool done = false;
  catalog.before_commit = [&](int) {
    if (done) return;
    done = true;
    auto snap = h->CommitDelta(WriteMode::kUpsert, {{false, MakeBatch(bs, {R(3, "late")})}});
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  };
  FLOE_ASSERT_OK_AND_ASSIGN(RewriteResult r, RewriteDataFiles(catalog, h->id(), Aggressive()));
  ASSERT_TRUE(r.snapshot_id.has_value());
  EXPECT_EQ(r.commit_attempts, 2);
  std::vector<Row> expected = AllTagged("v4");
  expected[3] = R(3, "late");
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<Row> rows, h->Scan());
  EXPECT_EQ(Sorted(rows), Sorted(expected));
  // The late commit's delete file stays: it applies to the rewritten file.
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, h->Load());
  EXPECT_EQ(md.current_snapshot()->summary.at("total-delete-files"), "1");
}

// The other order: the rewrite commits first, then the data commit; nothing to reconcile.
TEST(RewriteDataFiles, DataCommitAfterTheRewriteAppliesNormally) {
  TempDir tmp;
  auto h = UpsertTable(tmp.path(), 5);
  FLOE_ASSERT_OK_AND_ASSIGN(RewriteResult r, h->Compact(Aggressive()));
  ASSERT_TRUE(r.snapshot_id.has_value());
  auto bs = KeyedSchema().ToBatchSchema();
  FLOE_ASSERT_OK_AND_ASSIGN(
      Snapshot s, h->CommitDelta(WriteMode::kUpsert, {{false, MakeBatch(bs, {R(3, "late")})}}));
  std::vector<Row> expected = AllTagged("v4");
  expected[3] = R(3, "late");
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<Row> rows, h->Scan());
  EXPECT_EQ(Sorted(rows), Sorted(expected));
}

// A position delete against a file being rewritten cannot be carried over: the rewrite fails
// (Iceberg's "found new position delete for replaced data file"), removes its files and leaves
// the table as the concurrent commit made it.
TEST(RewriteDataFiles, ConcurrentPositionDeleteOnARewrittenFileFailsTheRewriteCleanly) {
  TempDir tmp;
  auto h = UpsertTable(tmp.path(), 5);
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md0, h->Load());
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<FileScanTask> tasks, PlanScan(io::FileIO(), md0));
  ASSERT_FALSE(tasks.empty());
  const FileScanTask* newest = &tasks.front();  // its rows are live
  for (const FileScanTask& t : tasks) {
    if (t.data_sequence_number > newest->data_sequence_number) newest = &t;
  }
  const DataFile victim = newest->file;
  InterposedCatalog catalog(&h->catalog());
  bool done = false;
  catalog.before_commit = [&](int) {
    if (done) return;
    done = true;
    auto md = h->Load();
    ASSERT_TRUE(md.ok());
    auto config = ConfigFromTableProperties(io::FileIO(), *md, "00000-0-posdel");
    ASSERT_TRUE(config.ok());
    auto writer = PositionDeleteWriter::Make(*md, *config);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    FLOE_ASSERT_OK((*writer)->Add(victim, 0));
    auto files = (*writer)->Finish();
    ASSERT_TRUE(files.ok()) << files.status().ToString();
    SnapshotChanges changes;
    changes.added_delete_files = *files;
    ASSERT_TRUE(CommitSnapshot(h->catalog(), h->id(), changes).ok());
  };
  auto r = RewriteDataFiles(catalog, h->id(), Aggressive());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsConflict()) << r.status().ToString();
  EXPECT_NE(r.status().message().find("position delete"), std::string::npos)
      << r.status().ToString();
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, h->Load());
  EXPECT_NE(md.current_snapshot()->operation(), "replace");
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<Row> rows, h->Scan());
  EXPECT_EQ(rows.size(), 9u);  // the position delete removed one row
  // No compaction output is left behind.
  for (const auto& e : std::filesystem::recursive_directory_iterator(tmp.path())) {
    EXPECT_EQ(e.path().filename().string().rfind("compact-", 0), std::string::npos) << e.path();
  }
}

// Streaming appends, as the Iceberg sink commits them at every checkpoint (issue 21): `commits`
// commits of 20 rows each (ids counting up, so bucket partitions get rows of every commit).
Schema EventSchema() {
  Schema s;
  s.fields = {Field{"id", DataType::Int64(), false, 1}, Field{"tag", DataType::String(), true, 2}};
  return s;
}

RecordBatch EventRows(int c) {
  std::vector<Row> rows;
  for (int64_t i = 0; i < 20; ++i) rows.push_back(R((c - 1) * 20 + i, "c" + std::to_string(c)));
  return MakeBatch(EventSchema().ToBatchSchema(), rows);
}

// Runs `run` on a new table db.events partitioned by `partition`, rows from EventRows.
testing::AmplificationReport StreamInto(const std::string& tmp, const std::string& partition,
                                        testing::StreamingCompactionRun run) {
  auto h = TableHarness::Make(tmp, "db", "events", EventSchema(), partition, {});
  EXPECT_TRUE(h.ok()) << h.status().ToString();
  if (!h.ok()) return {};
  std::vector<Row> model;
  run.rows = [&](int c) {
    RecordBatch b = EventRows(c);
    for (Row& r : testing::RowsOf(b)) model.push_back(std::move(r));
    return b;
  };
  auto report = testing::RunStreamingCompaction((*h)->catalog(), (*h)->id(), run);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  auto rows = (*h)->Scan();
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  if (rows.ok()) {
    EXPECT_EQ(Sorted(*rows), Sorted(model));
  }
  return report.ok() ? *report : testing::AmplificationReport{};
}

// The goal of issue 21 for `commits` commits of EventRows with the default options: rows
// rewritten / rows written at most 3, and no row rewritten more than ceil(log_f(commits)) times
// (f = min-input-files; per partition, each partition getting a file of every commit).
void ExpectAmplificationBounds(const testing::AmplificationReport& r, int commits) {
  EXPECT_EQ(r.rows_written, commits * 20);
  EXPECT_GT(r.compactions, 0);
  EXPECT_LE(r.ratio(), 3.0) << r.rows_rewritten << " rows rewritten for " << r.rows_written;
  EXPECT_LE(r.max_rewrites, testing::CeilLog(commits, CompactOptions{}.min_input_files));
}

// With the default options and a compaction after every commit (the most often a job's
// maintenance can run), rows climb size tiers: 300 commits rewrite each row at most
// ceil(log_f(300)) times (f = min-input-files) and all rows at most 3 times on average. The
// planner before size tiers rewrote every small file at every trigger: 37x.
TEST(RewriteDataFiles, StreamingAppendsAreRewrittenALogarithmicNumberOfTimes) {
  TempDir tmp;
  testing::StreamingCompactionRun run;
  run.commits = 300;
  run.compact_every = 1;
  testing::AmplificationReport r = StreamInto(tmp.path(), "", run);
  ExpectAmplificationBounds(r, run.commits);
  // Tiers bound the files left too: fewer than f per tier.
  const int64_t f = CompactOptions{}.min_input_files;
  EXPECT_LE(r.data_files, (f - 1) * (testing::CeilLog(300 * 20, f) + 1));
}

// Tiers are per partition: two bucket partitions, each with a file of every commit, compacted
// every 10 commits (the Iceberg sink's default trigger), keep the same bounds per partition.
TEST(RewriteDataFiles, PartitionedStreamingAppendsAreTieredPerPartition) {
  TempDir tmp;
  testing::StreamingCompactionRun run;
  run.commits = 300;
  run.compact_every = 10;
  ExpectAmplificationBounds(StreamInto(tmp.path(), "bucket(2, id)", run), run.commits);
}

// Compaction keeps the table's rows as a multiset: duplicate rows (the same id and tag in many
// commits) stay as many as were appended, after every compaction of a run that compacts often.
TEST(RewriteDataFiles, CompactionKeepsTheRowsAsAMultiset) {
  TempDir tmp;
  auto h = TableHarness::Make(tmp.path(), "db", "dups", EventSchema(), "bucket(3, id)", {});
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  std::vector<Row> model;
  testing::StreamingCompactionRun run;
  run.commits = 60;
  run.options.min_input_files = 2;
  run.rows = [&](int c) {
    std::vector<Row> rows;
    for (int i = 0; i < 5; ++i) rows.push_back(R((c + i) % 7, "t" + std::to_string(c % 3)));
    for (const Row& r : rows) model.push_back(r);
    return MakeBatch(EventSchema().ToBatchSchema(), rows);
  };
  run.after_compaction = [&](int c) -> Status {
    FLOE_ASSIGN_OR_RAISE(std::vector<Row> rows, (*h)->Scan());
    if (Sorted(rows) != Sorted(model)) {
      return Status::Internal("rows differ after the compaction at commit " + std::to_string(c));
    }
    return Status::OK();
  };
  FLOE_ASSERT_OK_AND_ASSIGN(testing::AmplificationReport r,
                            testing::RunStreamingCompaction((*h)->catalog(), (*h)->id(), run));
  EXPECT_GT(r.compactions, 10);
}

// A fan-in of 1 would merge a tier's single file with itself at every run: refused up front,
// with the rule and the value.
TEST(RewriteDataFiles, MinInputFilesBelowTwoIsRefused) {
  TempDir tmp;
  auto h = UpsertTable(tmp.path(), 2);
  CompactOptions options;
  options.min_input_files = 1;
  auto r = h->Compact(options);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalidArgument()) << r.status().ToString();
  EXPECT_NE(r.status().message().find("min-input-files must be at least 2"), std::string::npos)
      << r.status().ToString();
  EXPECT_NE(r.status().message().find("got 1"), std::string::npos) << r.status().ToString();
}

TEST(RewriteManifests, ManyManifestsBecomeOneAndTheRowsStay) {
  TempDir tmp;
  auto h = UpsertTable(tmp.path(), 6);
  FLOE_ASSERT_OK_AND_ASSIGN(RewriteResult r, RewriteManifests(h->catalog(), h->id()));
  ASSERT_TRUE(r.snapshot_id.has_value());
  EXPECT_GT(r.manifests_before, 2);
  EXPECT_EQ(r.manifests_after, 2);  // one data, one delete manifest
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<Row> rows, h->Scan());
  EXPECT_EQ(Sorted(rows), AllTagged("v5"));
  FLOE_ASSERT_OK_AND_ASSIGN(RewriteResult again, RewriteManifests(h->catalog(), h->id()));
  EXPECT_FALSE(again.snapshot_id.has_value());
}

// Expiry after a rewrite removes the rewritten files and their deletes; the table still reads.
TEST(RewriteDataFiles, ExpiryAfterARewriteRemovesTheReplacedFiles) {
  TempDir tmp;
  auto h = UpsertTable(tmp.path(), 5);
  FLOE_ASSERT_OK_AND_ASSIGN(RewriteResult r, h->Compact(Aggressive()));
  ASSERT_TRUE(r.snapshot_id.has_value());
  ExpireOptions expire;
  expire.older_than_ms = INT64_MAX;
  expire.retain_last = 1;
  FLOE_ASSERT_OK_AND_ASSIGN(ExpireResult e, ExpireSnapshots(h->catalog(), h->id(), expire));
  EXPECT_EQ(e.data_files_deleted, 5);
  EXPECT_GT(e.delete_files_deleted, 0);
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<Row> rows, h->Scan());
  EXPECT_EQ(Sorted(rows), AllTagged("v4"));
  // Nothing unreferenced is left but old metadata files the catalog's log still lists.
  OrphanOptions orphans;
  orphans.older_than_ms = INT64_MAX;
  orphans.dry_run = true;
  FLOE_ASSERT_OK_AND_ASSIGN(OrphanResult o, RemoveOrphanFiles(h->catalog(), h->id(), orphans));
  for (const std::string& p : o.orphans) {
    EXPECT_EQ(p.find("/data/"), std::string::npos) << p;
  }
}

TEST(RemoveOrphanFiles, RemovesOnlyOldUnreferencedFiles) {
  TempDir tmp;
  auto h = UpsertTable(tmp.path(), 2);
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, h->Load());
  FLOE_ASSERT_OK_AND_ASSIGN(std::string location, UriToPath(md.location));
  const std::string stray = location + "/data/stray.parquet";
  const std::string fresh = location + "/data/fresh.parquet";
  const std::string staged = location + "/data/staged.parquet";
  for (const std::string& p : {stray, fresh, staged}) {
    FLOE_ASSERT_OK(io::WriteFileExclusive(p, "junk"));
  }
  auto old = std::filesystem::file_time_type::clock::now() - std::chrono::hours(24 * 4);
  std::filesystem::last_write_time(stray, old);
  std::filesystem::last_write_time(staged, old);

  OrphanOptions dry;
  dry.dry_run = true;
  dry.in_use = [&](const std::string& p) { return p == staged; };
  FLOE_ASSERT_OK_AND_ASSIGN(OrphanResult d, RemoveOrphanFiles(h->catalog(), h->id(), dry));
  EXPECT_EQ(d.orphans, std::vector<std::string>{stray});
  EXPECT_EQ(d.deleted, 0);
  EXPECT_GE(d.kept_too_new, 1);
  EXPECT_TRUE(io::Exists(stray));

  OrphanOptions real = dry;
  real.dry_run = false;
  FLOE_ASSERT_OK_AND_ASSIGN(OrphanResult r, RemoveOrphanFiles(h->catalog(), h->id(), real));
  EXPECT_EQ(r.deleted, 1);
  EXPECT_FALSE(io::Exists(stray));
  EXPECT_TRUE(io::Exists(fresh));
  EXPECT_TRUE(io::Exists(staged));
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<Row> rows, h->Scan());
  EXPECT_EQ(Sorted(rows), AllTagged("v1"));
}

}  // namespace
}  // namespace floe::iceberg

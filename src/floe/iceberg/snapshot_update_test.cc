#include "floe/iceberg/snapshot_update.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "floe/iceberg/catalog.h"
#include "floe/iceberg/commit_test_util.h"
#include "floe/iceberg/data_writer.h"
#include "floe/iceberg/manifest_io.h"
#include "floe/iceberg/partition_positions.h"
#include "floe/iceberg/scan.h"
#include "floe/io/file.h"

namespace floe::iceberg {
namespace {

using commit_testing::FilesEndingWith;
using commit_testing::InterposedCatalog;
using commit_testing::ScratchDir;

Schema TableSchema() {
  Schema s;
  s.fields = {
      {"id", DataType::Int64(), false, 1},
      {"name", DataType::String(), true, 2},
  };
  return s;
}

// Fast retries for tests: contention is expected, waiting 100 ms+ is not.
CommitOptions FastRetries(int retries = 200) {
  CommitOptions o;
  o.num_retries = retries;
  o.min_wait = std::chrono::milliseconds(1);
  o.max_wait = std::chrono::milliseconds(20);
  return o;
}

struct TestTable {
  std::unique_ptr<FileSystemCatalog> catalog;
  TableIdentifier id{"db", "t"};
  std::string location;      // URI
  std::string metadata_dir;  // local path

  Result<TableMetadata> Load() const {
    FLOE_ASSIGN_OR_RAISE(LoadedTable t, catalog->LoadTable(id));
    return std::move(t.metadata);
  }
};

Result<TestTable> MakeTable(const std::string& warehouse, bool partitioned,
                            std::map<std::string, std::string> props = {},
                            TableIdentifier id = {"db", "t"}) {
  TestTable t;
  t.id = id;
  FLOE_ASSIGN_OR_RAISE(t.catalog, FileSystemCatalog::Make(warehouse));
  PartitionSpec spec;
  if (partitioned) spec.fields = {{2, 1000, "name", Transform{TransformKind::kIdentity, 0}}};
  FLOE_ASSIGN_OR_RAISE(LoadedTable loaded,
                       t.catalog->CreateTable(t.id, TableSchema(), spec, std::move(props)));
  t.location = loaded.metadata.location;
  FLOE_ASSIGN_OR_RAISE(std::string local, UriToPath(t.location));
  t.metadata_dir = local + "/metadata";
  return t;
}

DataFile Data(const TestTable& t, const std::string& name, int64_t records,
              PartitionTuple partition = {}) {
  DataFile f;
  f.file_path = t.location + "/data/" + name + ".parquet";
  f.partition = std::move(partition);
  f.record_count = records;
  f.file_size_in_bytes = records * 10 + 100;
  return f;
}

DataFile Deletes(const TestTable& t, const std::string& name, FileContent content, int64_t records,
                 PartitionTuple partition = {}) {
  DataFile f = Data(t, name, records, std::move(partition));
  f.content = content;
  if (content == FileContent::kEqualityDeletes) f.equality_ids = {1};
  return f;
}

// Live (non-DELETED) entries of the table's current snapshot, by file path.
Result<std::map<std::string, ManifestEntry>> LiveEntries(const TableMetadata& m) {
  std::map<std::string, ManifestEntry> out;
  const Snapshot* s = m.current_snapshot();
  if (s == nullptr) return out;
  FLOE_ASSIGN_OR_RAISE(std::vector<ManifestFile> list,
                       ReadManifestList(io::FileIO(), s->manifest_list));
  for (const ManifestFile& mf : list) {
    FLOE_ASSIGN_OR_RAISE(std::vector<ManifestEntry> entries, ReadManifest(io::FileIO(), mf, m));
    for (ManifestEntry& e : entries) {
      if (e.status == EntryStatus::kDeleted) continue;
      std::string path = e.data_file.file_path;
      if (!out.emplace(path, std::move(e)).second) {
        return Status::Corruption("file listed twice: " + path);
      }
    }
  }
  return out;
}

TEST(CommitSnapshot, AppendCommitsOneSnapshotWithInheritedSequenceNumbers) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path(), /*partitioned=*/true));
  SnapshotChanges changes;
  changes.added_data_files = {Data(t, "a", 10, {Value{std::string("x")}}),
                              Data(t, "b", 20, {Value{std::string("y")}})};
  changes.summary_properties = {{"floe.checkpoint-id", "7"}, {"operation", "ignored"}};
  FLOE_ASSERT_OK_AND_ASSIGN(Snapshot snap, CommitSnapshot(*t.catalog, t.id, changes));

  EXPECT_GT(snap.snapshot_id, 0);
  EXPECT_FALSE(snap.parent_snapshot_id.has_value());
  EXPECT_EQ(snap.sequence_number, 1);
  EXPECT_EQ(snap.schema_id, 0);
  EXPECT_EQ(snap.operation(), "append");
  EXPECT_EQ(snap.summary.at("floe.checkpoint-id"), "7");
  EXPECT_EQ(snap.summary.at("added-data-files"), "2");
  EXPECT_EQ(snap.summary.at("added-records"), "30");
  EXPECT_EQ(snap.summary.at("changed-partition-count"), "2");
  EXPECT_EQ(snap.summary.at("total-records"), "30");
  EXPECT_EQ(snap.summary.at("total-data-files"), "2");
  EXPECT_EQ(snap.summary.at("total-delete-files"), "0");
  EXPECT_EQ(snap.summary.count("added-delete-files"), 0u);
  const std::string list_name = snap.manifest_list.substr(snap.manifest_list.rfind('/') + 1);
  EXPECT_EQ(list_name.rfind("snap-" + std::to_string(snap.snapshot_id) + "-1-", 0), 0u)
      << list_name;
  EXPECT_EQ(snap.manifest_list.rfind(t.location + "/metadata/", 0), 0u) << snap.manifest_list;

  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
  ASSERT_NE(m.current_snapshot(), nullptr);
  EXPECT_EQ(*m.current_snapshot(), snap);
  EXPECT_EQ(m.last_sequence_number, 1);
  EXPECT_EQ(m.refs.at("main").snapshot_id, snap.snapshot_id);
  EXPECT_EQ(m.refs.at("main").type, "branch");
  ASSERT_EQ(m.snapshot_log.size(), 1u);
  EXPECT_EQ(m.snapshot_log[0].snapshot_id, snap.snapshot_id);

  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<ManifestFile> list,
                            ReadManifestList(io::FileIO(), snap.manifest_list));
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].sequence_number, 1);
  EXPECT_EQ(list[0].min_sequence_number, 1);
  EXPECT_EQ(list[0].added_snapshot_id, snap.snapshot_id);
  EXPECT_EQ(list[0].added_files_count, 2);
  EXPECT_EQ(list[0].added_rows_count, 30);
  ASSERT_EQ(list[0].partitions.size(), 1u);
  EXPECT_EQ(list[0].partitions[0].lower_bound, "x");
  EXPECT_EQ(list[0].partitions[0].upper_bound, "y");
  FLOE_ASSERT_OK_AND_ASSIGN(auto live, LiveEntries(m));
  ASSERT_EQ(live.size(), 2u);
  for (const auto& [path, e] : live) {
    EXPECT_EQ(e.status, EntryStatus::kAdded);
    EXPECT_EQ(e.snapshot_id, snap.snapshot_id);
    EXPECT_EQ(e.sequence_number, 1);
  }

  // A second commit: parent, sequence number 2, both manifests listed (new one first).
  SnapshotChanges more;
  more.added_data_files = {Data(t, "c", 5, {Value{std::string("x")}})};
  FLOE_ASSERT_OK_AND_ASSIGN(Snapshot second, CommitSnapshot(*t.catalog, t.id, more));
  EXPECT_EQ(second.parent_snapshot_id, snap.snapshot_id);
  EXPECT_EQ(second.sequence_number, 2);
  EXPECT_EQ(second.summary.at("total-records"), "35");
  EXPECT_EQ(second.summary.at("total-data-files"), "3");
  FLOE_ASSERT_OK_AND_ASSIGN(list, ReadManifestList(io::FileIO(), second.manifest_list));
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].sequence_number, 2);
  EXPECT_EQ(list[1].sequence_number, 1);
  FLOE_ASSERT_OK_AND_ASSIGN(m, t.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(live, LiveEntries(m));
  EXPECT_EQ(live.at(t.location + "/data/c.parquet").sequence_number, 2);
  EXPECT_EQ(live.at(t.location + "/data/a.parquet").sequence_number, 1);
}

TEST(CommitSnapshot, OperationAndSummaryTotalsFollowJava) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path(), false));
  SnapshotChanges append;
  append.added_data_files = {Data(t, "a", 100), Data(t, "b", 50)};
  FLOE_ASSERT_OK_AND_ASSIGN(Snapshot s1, CommitSnapshot(*t.catalog, t.id, append));
  EXPECT_EQ(s1.operation(), "append");
  EXPECT_EQ(s1.summary.at("added-files-size"), std::to_string(1100 + 600));
  EXPECT_EQ(s1.summary.at("changed-partition-count"), "1");  // unpartitioned: one partition
  EXPECT_EQ(s1.summary.at("total-files-size"), "1700");

  SnapshotChanges deletes;
  deletes.added_delete_files = {Deletes(t, "pd", FileContent::kPositionDeletes, 3),
                                Deletes(t, "ed", FileContent::kEqualityDeletes, 4),
                                Deletes(t, "ed2", FileContent::kEqualityDeletes, 1)};
  FLOE_ASSERT_OK_AND_ASSIGN(Snapshot s2, CommitSnapshot(*t.catalog, t.id, deletes));
  EXPECT_EQ(s2.operation(), "delete");
  const std::map<std::string, std::string> want2 = {
      {"added-delete-files", "3"},          {"added-position-delete-files", "1"},
      {"added-equality-delete-files", "2"}, {"added-position-deletes", "3"},
      {"added-equality-deletes", "5"},      {"added-files-size", "380"},
      {"changed-partition-count", "1"},     {"total-records", "150"},
      {"total-files-size", "2080"},         {"total-data-files", "2"},
      {"total-delete-files", "3"},          {"total-position-deletes", "3"},
      {"total-equality-deletes", "5"}};
  for (const auto& [k, v] : want2) EXPECT_EQ(s2.summary[k], v) << k;
  EXPECT_EQ(s2.summary.count("added-data-files"), 0u);
  EXPECT_EQ(s2.summary.count("added-records"), 0u);

  SnapshotChanges both;
  both.added_data_files = {Data(t, "c", 7)};
  both.added_delete_files = {Deletes(t, "ed3", FileContent::kEqualityDeletes, 2)};
  FLOE_ASSERT_OK_AND_ASSIGN(Snapshot s3, CommitSnapshot(*t.catalog, t.id, both));
  EXPECT_EQ(s3.operation(), "overwrite");
  EXPECT_EQ(s3.summary.at("total-records"), "157");
  EXPECT_EQ(s3.summary.at("total-data-files"), "3");
  EXPECT_EQ(s3.summary.at("total-delete-files"), "4");
  EXPECT_EQ(s3.summary.at("total-equality-deletes"), "7");
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<ManifestFile> list,
                            ReadManifestList(io::FileIO(), s3.manifest_list));
  ASSERT_EQ(list.size(), 4u);  // data manifests first, then delete manifests
  EXPECT_EQ(list[0].content, ManifestContent::kData);
  EXPECT_EQ(list[1].content, ManifestContent::kData);
  EXPECT_EQ(list[2].content, ManifestContent::kDeletes);
  EXPECT_EQ(list[2].sequence_number, 3);
  EXPECT_EQ(list[3].content, ManifestContent::kDeletes);
  EXPECT_EQ(list[3].sequence_number, 2);

  // An empty commit (e.g. a checkpoint marker) is an append with zero changes.
  SnapshotChanges empty;
  empty.summary_properties = {{"floe.checkpoint-id", "4"}};
  FLOE_ASSERT_OK_AND_ASSIGN(Snapshot s4, CommitSnapshot(*t.catalog, t.id, empty));
  EXPECT_EQ(s4.operation(), "append");
  EXPECT_EQ(s4.summary.at("changed-partition-count"), "0");
  EXPECT_EQ(s4.summary.at("total-records"), "157");
  EXPECT_EQ(s4.summary.at("manifests-created"), "0");
  EXPECT_EQ(s4.summary.at("manifests-kept"), "4");
}

TEST(CommitSnapshot, TotalsTheParentLacksAreLeftOut) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path(), false));
  SnapshotChanges append;
  append.added_data_files = {Data(t, "a", 1)};
  FLOE_ASSERT_OK(CommitSnapshot(*t.catalog, t.id, append).status());
  // Another engine's snapshot without totals.
  FLOE_ASSERT_OK_AND_ASSIGN(LoadedTable loaded, t.catalog->LoadTable(t.id));
  TableMetadata m = loaded.metadata;
  Snapshot& last = m.snapshots.back();
  last.summary = {{"operation", "append"}, {"total-records", "not a number"}};
  FLOE_ASSERT_OK(t.catalog->CommitTable(loaded, m).status());
  FLOE_ASSERT_OK_AND_ASSIGN(Snapshot s, CommitSnapshot(*t.catalog, t.id, append));
  EXPECT_EQ(s.summary.count("total-records"), 0u);
  EXPECT_EQ(s.summary.count("total-data-files"), 0u);
  EXPECT_EQ(s.summary.at("added-records"), "1");
}

TEST(CommitSnapshot, RetryAfterConflictRewritesOnlyTheManifestList) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path(), false));
  InterposedCatalog interposed(t.catalog.get());
  Snapshot concurrent;
  interposed.before_commit = [&](int call) {
    if (call != 1) return;
    SnapshotChanges other;
    other.added_data_files = {Data(t, "other", 3)};
    Result<Snapshot> s = CommitSnapshot(*t.catalog, t.id, other);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    concurrent = *s;
  };
  SnapshotChanges mine;
  mine.added_data_files = {Data(t, "mine", 5)};
  FLOE_ASSERT_OK_AND_ASSIGN(Snapshot snap, CommitSnapshot(interposed, t.id, mine, FastRetries()));
  EXPECT_EQ(interposed.commits, 2);
  EXPECT_EQ(snap.parent_snapshot_id, concurrent.snapshot_id);
  EXPECT_EQ(snap.sequence_number, 2);
  EXPECT_NE(snap.manifest_list.find("-2-"), std::string::npos) << snap.manifest_list;
  EXPECT_EQ(snap.summary.at("total-records"), "8");

  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(auto live, LiveEntries(m));
  ASSERT_EQ(live.size(), 2u);
  EXPECT_EQ(live.at(t.location + "/data/mine.parquet").sequence_number, 2);
  EXPECT_EQ(live.at(t.location + "/data/other.parquet").sequence_number, 1);
  // Two manifests in all (one per commit, written once) and one list per snapshot: the list
  // of the failed attempt is gone.
  EXPECT_EQ(FilesEndingWith(t.metadata_dir, "-m0.avro").size(), 2u);
  EXPECT_EQ(FilesEndingWith(t.metadata_dir, ".avro").size(), 4u);
}

TEST(CommitSnapshot, GivesUpWithConflictAndRemovesItsFiles) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path(), false));
  InterposedCatalog interposed(t.catalog.get());
  interposed.fail_commits = true;
  SnapshotChanges mine;
  mine.added_data_files = {Data(t, "mine", 5)};
  Result<Snapshot> r = CommitSnapshot(interposed, t.id, mine, FastRetries(3));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsConflict()) << r.status().ToString();
  EXPECT_EQ(interposed.commits, 4);  // 1 + 3 retries
  EXPECT_TRUE(FilesEndingWith(t.metadata_dir, ".avro").empty());
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
  EXPECT_EQ(m.current_snapshot(), nullptr);
}

TEST(CommitSnapshot, RetryCountComesFromTableProperties) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path(), false,
                                                   {{"commit.retry.num-retries", "1"},
                                                    {"commit.retry.min-wait-ms", "1"}}));
  InterposedCatalog interposed(t.catalog.get());
  interposed.fail_commits = true;
  SnapshotChanges mine;
  mine.added_data_files = {Data(t, "mine", 5)};
  Result<Snapshot> r = CommitSnapshot(interposed, t.id, mine);
  EXPECT_TRUE(r.status().IsConflict()) << r.status().ToString();
  EXPECT_EQ(interposed.commits, 2);
}

TEST(CommitSnapshot, ValidateRunsBeforeEveryAttemptAndCanAbort) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path(), false));
  InterposedCatalog interposed(t.catalog.get());
  interposed.before_commit = [&](int call) {
    if (call != 1) return;
    SnapshotChanges other;
    other.added_data_files = {Data(t, "other", 3)};
    other.summary_properties = {{"floe.checkpoint-id", "5"}};
    ASSERT_TRUE(CommitSnapshot(*t.catalog, t.id, other).ok());
  };
  // The exactly-once check: abort when the table already holds checkpoint 5.
  int calls = 0;
  CommitOptions options = FastRetries();
  options.validate = [&](const TableMetadata& m) {
    ++calls;
    const Snapshot* s = m.current_snapshot();
    if (s != nullptr && s->summary.count("floe.checkpoint-id") != 0 &&
        s->summary.at("floe.checkpoint-id") == "5") {
      return Status::AlreadyExists("checkpoint 5 already committed");
    }
    return Status::OK();
  };
  SnapshotChanges mine;
  mine.added_data_files = {Data(t, "mine", 5)};
  mine.summary_properties = {{"floe.checkpoint-id", "5"}};
  Result<Snapshot> r = CommitSnapshot(interposed, t.id, mine, options);
  EXPECT_TRUE(r.status().IsAlreadyExists()) << r.status().ToString();
  EXPECT_EQ(calls, 2);
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
  EXPECT_EQ(m.snapshots.size(), 1u);
  // Only the concurrent commit's manifest and list remain.
  EXPECT_EQ(FilesEndingWith(t.metadata_dir, ".avro").size(), 2u);
}

// Table properties change with the snapshot, and a validate that reads them sees the values
// a concurrent commit set (what a position check inside the compare-and-swap rests on): the
// loser's retry sees the winner's position and can refuse.
TEST(CommitSnapshot, TablePropertiesChangeWithTheSnapshotAndValidateSeesTheWinners) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path(), false));
  InterposedCatalog interposed(t.catalog.get());
  interposed.before_commit = [&](int call) {
    if (call != 1) return;
    SnapshotChanges winner;
    winner.added_data_files = {Data(t, "winner", 3)};
    winner.table_properties = {{"pos.p0", "30"}};
    ASSERT_TRUE(CommitSnapshot(*t.catalog, t.id, winner).ok());
  };
  std::vector<std::string> seen;
  CommitOptions options = FastRetries();
  options.validate = [&](const TableMetadata& m) {
    auto it = m.properties.find("pos.p0");
    seen.push_back(it == m.properties.end() ? "none" : it->second);
    if (seen.back() != "none") return Status::Conflict("p0 moved to " + seen.back());
    return Status::OK();
  };
  SnapshotChanges loser;
  loser.added_data_files = {Data(t, "loser", 5)};
  loser.table_properties = {{"pos.p0", "50"}};
  Result<Snapshot> r = CommitSnapshot(interposed, t.id, loser, options);
  EXPECT_TRUE(r.status().IsConflict()) << r.status().ToString();
  EXPECT_EQ(seen, (std::vector<std::string>{"none", "30"}));
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
  EXPECT_EQ(m.properties.at("pos.p0"), "30");
  EXPECT_EQ(m.snapshots.size(), 1u);
  // A commit that passes sets its properties with its snapshot.
  SnapshotChanges next;
  next.added_data_files = {Data(t, "next", 2)};
  next.table_properties = {{"pos.p0", "32"}, {"pos.p1", "7"}};
  ASSERT_TRUE(CommitSnapshot(*t.catalog, t.id, next).ok());
  FLOE_ASSERT_OK_AND_ASSIGN(m, t.Load());
  EXPECT_EQ(m.properties.at("pos.p0"), "32");
  EXPECT_EQ(m.properties.at("pos.p1"), "7");
  EXPECT_EQ(m.snapshots.size(), 2u);
}

// An owner and a zombie commit rows of one partition through the position check: the zombie,
// whose rows start where the table was before the owner's commit, is fenced for that
// partition (its files stay out) while its other partition commits with its position; the
// owner goes on from its own position.
TEST(PartitionPositions, TheCheckInsideTheSwapFencesACommitStartingBehindTheTable) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path(), false));
  const SourcePartition p0{"orders", 0}, p1{"orders", 1};
  EXPECT_EQ(PartitionPositionProperty("sink", p0), "floe.position.sink.orders.0");
  // Each commit also names the state its rows left (a keyed job's), in the same swap.
  auto part = [&](std::optional<int64_t> from, int64_t next, const std::string& file) {
    return PartitionCommit{
        {from, next}, {Data(t, file, next - from.value_or(0))}, {}, "state-of-" + file};
  };
  SnapshotChanges common;
  common.summary_properties = {{"floe.sink-id", "sink"}};
  // The caller's table properties (a keyed job's partition count) swap in with the positions.
  EXPECT_EQ(PartitionCountProperty("sink", "orders"), "floe.partitions.sink.orders");
  common.table_properties = {{PartitionCountProperty("sink", "orders"), "8"}};
  FLOE_ASSERT_OK_AND_ASSIGN(
      PartitionCommitResult owner1,
      CommitPartitions(*t.catalog, t.id, "sink", {{p0, part(std::nullopt, 10, "owner-1")}}, common,
                       FastRetries()));
  EXPECT_TRUE(owner1.fenced.empty());
  ASSERT_TRUE(owner1.snapshot.has_value());
  // The zombie read p0 from the start as well, and p1, which nobody committed yet.
  FLOE_ASSERT_OK_AND_ASSIGN(PartitionCommitResult zombie,
                            CommitPartitions(*t.catalog, t.id, "sink",
                                             {{p0, part(std::nullopt, 7, "zombie-p0")},
                                              {p1, part(std::nullopt, 4, "zombie-p1")}},
                                             common, FastRetries()));
  EXPECT_EQ(zombie.fenced, std::vector<SourcePartition>{p0});
  ASSERT_TRUE(zombie.snapshot.has_value());
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(auto live, LiveEntries(m));
  EXPECT_EQ(live.count(t.location + "/data/zombie-p0.parquet"), 0u);
  EXPECT_EQ(live.count(t.location + "/data/zombie-p1.parquet"), 1u);
  EXPECT_EQ(m.properties.at("floe.position.sink.orders.0"), "10");
  EXPECT_EQ(m.properties.at("floe.position.sink.orders.1"), "4");
  EXPECT_EQ(m.properties.at("floe.state.sink.orders.0"), "state-of-owner-1");
  EXPECT_EQ(m.properties.at("floe.state.sink.orders.1"), "state-of-zombie-p1");
  // The owner goes on from where it committed; a commit of fenced partitions only adds nothing.
  FLOE_ASSERT_OK_AND_ASSIGN(
      PartitionCommitResult owner2,
      CommitPartitions(*t.catalog, t.id, "sink", {{p0, part(10, 20, "owner-2")}}, common,
                       FastRetries()));
  EXPECT_TRUE(owner2.fenced.empty());
  FLOE_ASSERT_OK_AND_ASSIGN(PartitionCommitResult late,
                            CommitPartitions(*t.catalog, t.id, "sink", {{p0, part(10, 15, "late")}},
                                             common, FastRetries()));
  EXPECT_EQ(late.fenced, std::vector<SourcePartition>{p0});
  EXPECT_FALSE(late.snapshot.has_value());
  FLOE_ASSERT_OK_AND_ASSIGN(m, t.Load());
  EXPECT_EQ(m.snapshots.size(), 3u);
  FLOE_ASSERT_OK_AND_ASSIGN(std::optional<int64_t> at, TablePartitionPosition(m, "sink", p0));
  EXPECT_EQ(at, 20);
  FLOE_ASSERT_OK_AND_ASSIGN(PartitionStart start, TablePartitionStart(m, "sink", p0));
  EXPECT_EQ(start.position, 20);
  EXPECT_EQ(start.state, "state-of-owner-2");  // the fenced late commit's never landed
  EXPECT_EQ(start.topic_partitions, 8);
  for (const char* bad : {"0", "-3", "8x", ""}) {
    TableMetadata broken = m;
    broken.properties["floe.partitions.sink.orders"] = bad;
    Result<PartitionStart> r = TablePartitionStart(broken, "sink", p0);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
    EXPECT_NE(r.status().message().find("'floe.partitions.sink.orders'"), std::string::npos)
        << r.status().ToString();
  }
  // Another sink's positions are its own.
  FLOE_ASSERT_OK_AND_ASSIGN(at, TablePartitionPosition(m, "other", p0));
  EXPECT_EQ(at, std::nullopt);
}

// The bad interleaving: another instance commits the same partition between this commit's
// load and its swap. The swap fails, the retry's check sees the other's position, and the
// partition stays out; nothing is committed twice.
TEST(PartitionPositions, ACommitOvertakenInsideItsSwapLeavesThePartitionOut) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path(), false));
  InterposedCatalog interposed(t.catalog.get());
  const SourcePartition p0{"orders", 0}, p1{"orders", 1};
  interposed.before_commit = [&](int call) {
    if (call != 1) return;
    auto r = CommitPartitions(*t.catalog, t.id, "sink",
                              {{p0, PartitionCommit{{std::nullopt, 9}, {Data(t, "other", 9)}, {}}}},
                              {}, FastRetries());
    ASSERT_TRUE(r.ok() && r->fenced.empty());
  };
  FLOE_ASSERT_OK_AND_ASSIGN(
      PartitionCommitResult mine,
      CommitPartitions(interposed, t.id, "sink",
                       {{p0, PartitionCommit{{std::nullopt, 5}, {Data(t, "mine-p0", 5)}, {}}},
                        {p1, PartitionCommit{{std::nullopt, 3}, {Data(t, "mine-p1", 3)}, {}}}},
                       {}, FastRetries()));
  EXPECT_EQ(mine.fenced, std::vector<SourcePartition>{p0});
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(auto live, LiveEntries(m));
  EXPECT_EQ(live.count(t.location + "/data/mine-p0.parquet"), 0u);
  EXPECT_EQ(live.count(t.location + "/data/mine-p1.parquet"), 1u);
  EXPECT_EQ(live.count(t.location + "/data/other.parquet"), 1u);
  EXPECT_EQ(m.properties.at("floe.position.sink.orders.0"), "9");
  EXPECT_EQ(m.properties.at("floe.position.sink.orders.1"), "3");
}

TEST(PartitionPositions, AMalformedPositionIsCorruptionNamingTheProperty) {
  TableMetadata m;
  m.properties["floe.position.sink.orders.0"] = "12x";
  Result<std::optional<int64_t>> r = TablePartitionPosition(m, "sink", {"orders", 0});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.status().message().find("'floe.position.sink.orders.0' = '12x'"), std::string::npos)
      << r.status().ToString();
  m.properties["floe.position.sink.orders.0"] = "-1";
  EXPECT_FALSE(TablePartitionPosition(m, "sink", {"orders", 0}).ok());
}

TEST(CommitSnapshot, RejectsMalformedChanges) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path(), false));
  SnapshotChanges wrong_content;
  wrong_content.added_data_files = {Deletes(t, "d", FileContent::kPositionDeletes, 1)};
  EXPECT_TRUE(CommitSnapshot(*t.catalog, t.id, wrong_content).status().IsInvalidArgument());
  SnapshotChanges data_as_delete;
  data_as_delete.added_delete_files = {Data(t, "a", 1)};
  EXPECT_TRUE(CommitSnapshot(*t.catalog, t.id, data_as_delete).status().IsInvalidArgument());
  SnapshotChanges no_eq_ids;
  no_eq_ids.added_delete_files = {Deletes(t, "e", FileContent::kEqualityDeletes, 1)};
  no_eq_ids.added_delete_files[0].equality_ids.clear();
  EXPECT_TRUE(CommitSnapshot(*t.catalog, t.id, no_eq_ids).status().IsInvalidArgument());
  SnapshotChanges unknown_spec;
  unknown_spec.added_data_files = {Data(t, "a", 1)};
  unknown_spec.added_data_files[0].spec_id = 9;
  Result<Snapshot> r = CommitSnapshot(*t.catalog, t.id, unknown_spec);
  EXPECT_TRUE(r.status().IsInvalidArgument()) << r.status().ToString();
  SnapshotChanges bad_partition;
  bad_partition.added_data_files = {Data(t, "a", 1, {Value{std::string("x")}})};
  EXPECT_FALSE(CommitSnapshot(*t.catalog, t.id, bad_partition).ok());
  EXPECT_TRUE(FilesEndingWith(t.metadata_dir, ".avro").empty());
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
  EXPECT_TRUE(m.snapshots.empty());
  Result<Snapshot> missing = CommitSnapshot(*t.catalog, TableIdentifier{"db", "nope"}, {});
  EXPECT_TRUE(missing.status().IsNotFound()) << missing.status().ToString();
}

// Checks that the table holds exactly `expected` files, each once, with distinct sequence
// numbers per snapshot and a consistent history.
void ExpectAllCommitted(const TestTable& t, const std::set<std::string>& expected,
                        size_t snapshots) {
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
  EXPECT_EQ(m.snapshots.size(), snapshots);
  EXPECT_EQ(m.last_sequence_number, static_cast<int64_t>(snapshots));
  FLOE_ASSERT_OK_AND_ASSIGN(auto live, LiveEntries(m));
  std::set<std::string> got;
  std::set<int64_t> seqs;
  for (const auto& [path, e] : live) {
    got.insert(path);
    seqs.insert(*e.sequence_number);
  }
  EXPECT_EQ(got, expected);
  EXPECT_EQ(seqs.size(), expected.size());  // one file per commit, each its own sequence number
  // Parent chain covers every snapshot.
  size_t chain = 0;
  for (const Snapshot* s = m.current_snapshot(); s != nullptr;
       s = s->parent_snapshot_id ? m.FindSnapshot(*s->parent_snapshot_id) : nullptr) {
    ++chain;
    EXPECT_EQ(s->sequence_number, static_cast<int64_t>(snapshots - chain + 1));
  }
  EXPECT_EQ(chain, snapshots);
  EXPECT_EQ(m.current_snapshot()->summary.at("total-data-files"), std::to_string(snapshots));
}

TEST(CommitSnapshot, ConcurrentThreadsLoseNothing) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path(), false));
  constexpr int kCommits = 20;
  std::atomic<int> failures{0};
  std::set<std::string> expected;
  auto worker = [&](const std::string& prefix) {
    Result<std::unique_ptr<FileSystemCatalog>> catalog = FileSystemCatalog::Make(dir.path());
    if (!catalog.ok()) {
      ++failures;
      return;
    }
    for (int i = 0; i < kCommits; ++i) {
      SnapshotChanges c;
      c.added_data_files = {Data(t, prefix + std::to_string(i), 1)};
      if (!CommitSnapshot(**catalog, t.id, c, FastRetries()).ok()) ++failures;
    }
  };
  for (const std::string prefix : {"t0-", "t1-"}) {
    for (int i = 0; i < kCommits; ++i) {
      expected.insert(t.location + "/data/" + prefix + std::to_string(i) + ".parquet");
    }
  }
  std::thread a(worker, "t0-");
  std::thread b(worker, "t1-");
  a.join();
  b.join();
  EXPECT_EQ(failures.load(), 0);
  ExpectAllCommitted(t, expected, 2 * kCommits);
}

TEST(CommitSnapshot, ConcurrentProcessesLoseNothing) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path(), false));
  constexpr int kCommits = 20;
  std::vector<pid_t> children;
  for (int p = 0; p < 2; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int bad = 0;
      Result<std::unique_ptr<FileSystemCatalog>> catalog = FileSystemCatalog::Make(dir.path());
      if (!catalog.ok()) _exit(3);
      for (int i = 0; i < kCommits; ++i) {
        SnapshotChanges c;
        c.added_data_files = {Data(t, "p" + std::to_string(p) + "-" + std::to_string(i), 1)};
        if (!CommitSnapshot(**catalog, t.id, c, FastRetries()).ok()) ++bad;
      }
      _exit(bad == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  std::set<std::string> expected;
  for (int p = 0; p < 2; ++p) {
    for (int i = 0; i < kCommits; ++i) {
      expected.insert(t.location + "/data/p" + std::to_string(p) + "-" + std::to_string(i) +
                      ".parquet");
    }
  }
  ExpectAllCommitted(t, expected, 2 * kCommits);
}

// Commits `n` single-file snapshots (data, and every `delete_every`-th also an equality delete)
// and checks after each that the manifest list stays within `bound`.
void CommitMany(const TestTable& t, int n, size_t bound, int delete_every,
                std::set<std::string>* files) {
  for (int i = 1; i <= n; ++i) {
    SnapshotChanges c;
    c.added_data_files = {Data(t, "f" + std::to_string(i), 1)};
    files->insert(c.added_data_files[0].file_path);
    if (delete_every > 0 && i % delete_every == 0) {
      c.added_delete_files = {
          Deletes(t, "d" + std::to_string(i), FileContent::kEqualityDeletes, 1)};
      files->insert(c.added_delete_files[0].file_path);
    }
    Result<Snapshot> s = CommitSnapshot(*t.catalog, t.id, c);
    ASSERT_TRUE(s.ok()) << i << ": " << s.status().ToString();
    Result<std::vector<ManifestFile>> list = ReadManifestList(io::FileIO(), s->manifest_list);
    ASSERT_TRUE(list.ok());
    ASSERT_LE(list->size(), bound) << "after commit " << i;
  }
}

TEST(CommitSnapshot, ManifestMergingKeepsTheListBoundedAndFilesIntact) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(
      TestTable t, MakeTable(dir.path(), false, {{"commit.manifest.min-count-to-merge", "10"}}));
  std::set<std::string> files;
  constexpr int kCommits = 300;
  CommitMany(t, kCommits, /*bound=*/2 * 10, /*delete_every=*/7, &files);
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(auto live, LiveEntries(m));
  std::set<std::string> got;
  for (const auto& [path, e] : live) got.insert(path);
  EXPECT_EQ(got, files);
  // Every file keeps the sequence number and snapshot of the commit that added it, whether
  // its entry is still ADDED or was rewritten as EXISTING by a merge.
  std::map<int64_t, int64_t> snapshot_of_seq;
  for (const Snapshot& s : m.snapshots) snapshot_of_seq[s.sequence_number] = s.snapshot_id;
  int existing = 0;
  for (int i = 1; i <= kCommits; ++i) {
    const ManifestEntry& e = live.at(t.location + "/data/f" + std::to_string(i) + ".parquet");
    EXPECT_EQ(e.sequence_number, i);
    EXPECT_EQ(e.file_sequence_number, i);
    EXPECT_EQ(e.snapshot_id, snapshot_of_seq.at(i));
    existing += e.status == EntryStatus::kExisting;
    if (i % 7 == 0) {
      EXPECT_EQ(live.at(t.location + "/data/d" + std::to_string(i) + ".parquet").sequence_number,
                i);
    }
  }
  EXPECT_GT(existing, kCommits / 2);  // merging happened
  EXPECT_EQ(m.current_snapshot()->summary.at("total-data-files"), std::to_string(kCommits));
  // Files replaced by merges are not referenced any more; manifests never rewritten in place.
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<ManifestFile> list,
                            ReadManifestList(io::FileIO(), m.current_snapshot()->manifest_list));
  int64_t min_seq = INT64_MAX;
  for (const ManifestFile& mf : list) {
    if (mf.content == ManifestContent::kData) min_seq = std::min(min_seq, mf.min_sequence_number);
  }
  EXPECT_EQ(min_seq, 1);

  // The scan sees every data file with its own data sequence number.
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<FileScanTask> tasks, PlanScan(io::FileIO(), m));
  ASSERT_EQ(tasks.size(), static_cast<size_t>(kCommits));
  for (const FileScanTask& task : tasks) {
    const std::string name = task.file.file_path.substr(task.file.file_path.rfind('/') + 2);
    int i = std::stoi(name);
    EXPECT_EQ(task.data_sequence_number, i);
    // Equality deletes of commit k apply to data of commits < k (same sequence: no).
    size_t want = 0;
    for (int k = 7; k <= kCommits; k += 7) want += k > i;
    EXPECT_EQ(task.equality_deletes.size(), want) << name;
  }
}

TEST(CommitSnapshot, ManifestMergingWithDefaultsStaysBelowOneHundred) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path(), false));
  std::set<std::string> files;
  CommitMany(t, 110, /*bound=*/100, /*delete_every=*/0, &files);
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(auto live, LiveEntries(m));
  EXPECT_EQ(live.size(), files.size());
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<ManifestFile> list,
                            ReadManifestList(io::FileIO(), m.current_snapshot()->manifest_list));
  EXPECT_LE(list.size(), 11u);  // merged into one at commit 100
}

TEST(CommitSnapshot, MergingDisabledKeepsEveryManifest) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path(), false,
                                                   {{"commit.manifest-merge.enabled", "false"},
                                                    {"commit.manifest.min-count-to-merge", "2"}}));
  std::set<std::string> files;
  CommitMany(t, 12, /*bound=*/12, 0, &files);
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<ManifestFile> list,
                            ReadManifestList(io::FileIO(), m.current_snapshot()->manifest_list));
  EXPECT_EQ(list.size(), 12u);
}

TEST(CommitSnapshot, MergesSmallManifestsUpToTheTargetSize) {
  ScratchDir dir;
  // Target so small that every manifest fills a bin: nothing ever merges.
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path(), false,
                                                   {{"commit.manifest.target-size-bytes", "1"},
                                                    {"commit.manifest.min-count-to-merge", "2"}}));
  std::set<std::string> files;
  CommitMany(t, 8, /*bound=*/8, 0, &files);
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<ManifestFile> list,
                            ReadManifestList(io::FileIO(), m.current_snapshot()->manifest_list));
  EXPECT_EQ(list.size(), 8u);
}

TEST(CommitSnapshot, PartitionedMergeKeepsPartitionsAndSummaries) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(
      TestTable t, MakeTable(dir.path(), true, {{"commit.manifest.min-count-to-merge", "3"}}));
  for (int i = 0; i < 3; ++i) {
    SnapshotChanges c;
    c.added_data_files = {Data(t, "f" + std::to_string(i), 1, {Value{std::string(1, 'a' + i)}}),
                          Data(t, "n" + std::to_string(i), 1, {Value{}})};
    FLOE_ASSERT_OK(CommitSnapshot(*t.catalog, t.id, c).status());
  }
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<ManifestFile> list,
                            ReadManifestList(io::FileIO(), m.current_snapshot()->manifest_list));
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].sequence_number, 3);
  EXPECT_EQ(list[0].min_sequence_number, 1);
  EXPECT_EQ(list[0].added_files_count, 2);
  EXPECT_EQ(list[0].existing_files_count, 4);
  ASSERT_EQ(list[0].partitions.size(), 1u);
  EXPECT_TRUE(list[0].partitions[0].contains_null);
  EXPECT_EQ(list[0].partitions[0].lower_bound, "a");
  EXPECT_EQ(list[0].partitions[0].upper_bound, "c");
  EXPECT_EQ(m.current_snapshot()->summary.at("manifests-replaced"), "2");
  EXPECT_EQ(m.current_snapshot()->summary.at("manifests-created"), "1");
  FLOE_ASSERT_OK_AND_ASSIGN(auto live, LiveEntries(m));
  EXPECT_EQ(live.at(t.location + "/data/f1.parquet").data_file.partition,
            PartitionTuple{Value{std::string("b")}});
  EXPECT_EQ(live.at(t.location + "/data/n1.parquet").data_file.partition, PartitionTuple{Value{}});
  EXPECT_EQ(live.at(t.location + "/data/f2.parquet").status, EntryStatus::kAdded);
  EXPECT_EQ(live.at(t.location + "/data/f0.parquet").status, EntryStatus::kExisting);
  // The third commit's new manifest was merged away and removed (never referenced); the
  // older ones stay for the older snapshots.
  EXPECT_EQ(FilesEndingWith(t.metadata_dir, "-m0.avro").size(), 2u);
  EXPECT_EQ(FilesEndingWith(t.metadata_dir, "-m1.avro").size(), 1u);
}

// With FLOE_INTEROP_DIR set, writes table floe_commit.merged into $FLOE_INTEROP_DIR/warehouse:
// real Parquet data from several commits, a position delete, and merged manifests (EXISTING
// entries with explicit sequence numbers), plus expected/floe_commit.merged.count, for the
// node readers (tests/interop) to check.
TEST(CommitSnapshot, InteropWarehouseTable) {
  const char* interop = std::getenv("FLOE_INTEROP_DIR");
  if (interop == nullptr || *interop == '\0') GTEST_SKIP() << "FLOE_INTEROP_DIR not set";
  const std::string warehouse = std::string(interop) + "/warehouse";
  const TableIdentifier id{"floe_commit", "merged"};
  std::error_code ec;
  std::filesystem::remove_all(warehouse + "/floe_commit/merged", ec);
  FLOE_ASSERT_OK_AND_ASSIGN(
      TestTable t, MakeTable(warehouse, true, {{"commit.manifest.min-count-to-merge", "3"}}, id));
  std::shared_ptr<const BatchSchema> bs = TableSchema().ToBatchSchema();
  int64_t rows = 0;
  DataFile first_file;
  for (int c = 0; c < 6; ++c) {
    FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
    FLOE_ASSERT_OK_AND_ASSIGN(
        FileWriterConfig config,
        ConfigFromTableProperties(io::FileIO(), m, "00000-" + std::to_string(c) + "-it"));
    FLOE_ASSERT_OK_AND_ASSIGN(auto writer, DataFileWriter::Make(m, config));
    RecordBatch batch(bs);
    for (int r = 0; r < 10; ++r) {
      AppendValue(&batch.mutable_column(0), Value{int64_t{c * 100 + r}});
      AppendValue(&batch.mutable_column(1), Value{std::string(r % 2 == 0 ? "even" : "odd")});
    }
    FLOE_ASSERT_OK(writer->Add(batch));
    FLOE_ASSERT_OK_AND_ASSIGN(std::vector<DataFile> data, writer->Finish());
    rows += 10;
    SnapshotChanges changes;
    changes.added_data_files = data;
    changes.summary_properties = {{"floe.checkpoint-id", std::to_string(c + 1)}};
    if (c == 0) first_file = data[0];
    if (c == 4) {
      FLOE_ASSERT_OK_AND_ASSIGN(auto pos, PositionDeleteWriter::Make(m, config));
      FLOE_ASSERT_OK(pos->Add(first_file.file_path, 0, first_file.partition));
      FLOE_ASSERT_OK(pos->Add(first_file.file_path, 2, first_file.partition));
      FLOE_ASSERT_OK_AND_ASSIGN(std::vector<DataFile> deletes, pos->Finish());
      changes.added_delete_files = deletes;
      rows -= 2;
    }
    FLOE_ASSERT_OK(CommitSnapshot(*t.catalog, t.id, changes).status());
  }
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(auto live, LiveEntries(m));
  int existing = 0;
  for (const auto& [path, e] : live) existing += e.status == EntryStatus::kExisting;
  EXPECT_GT(existing, 0);
  int64_t scanned = 0;
  FLOE_ASSERT_OK(ScanTable(io::FileIO(), m, std::nullopt, [&](const RecordBatch& b) {
    scanned += static_cast<int64_t>(b.num_rows());
    return Status::OK();
  }));
  EXPECT_EQ(scanned, rows);
  FLOE_ASSERT_OK(io::CreateDirs(std::string(interop) + "/expected"));
  std::ofstream(std::string(interop) + "/expected/floe_commit.merged.count") << rows << "\n";

  // A deflate-coded manifest and manifest list (large enough to pass the 4 KiB threshold), in
  // a metadata directory without a table: only the Avro checks read them.
  const std::string loose = warehouse + "/floe_commit/deflate/metadata";
  std::filesystem::remove_all(warehouse + "/floe_commit/deflate", ec);
  std::vector<ManifestEntry> entries;
  for (int i = 0; i < 200; ++i) {
    ManifestEntry e;
    e.data_file =
        Data(t, "big" + std::to_string(i), i + 1, {Value{std::string(i % 2 ? "a" : "b")}});
    e.data_file.value_counts = {{1, i + 1}, {2, i + 1}};
    e.data_file.lower_bounds = {{2, "a"}};
    e.data_file.upper_bounds = {{2, "b"}};
    entries.push_back(std::move(e));
  }
  FLOE_ASSERT_OK_AND_ASSIGN(ManifestFile big,
                            WriteManifest(io::FileIO(), loose + "/big-m0.avro", m.current_schema(),
                                          m.default_spec(), ManifestContent::kData, 1, entries));
  big.sequence_number = 1;
  big.min_sequence_number = 1;
  FLOE_ASSERT_OK(WriteManifestList(io::FileIO(), loose + "/snap-1-1-big.avro", 1, std::nullopt, 1,
                                   std::vector<ManifestFile>(60, big)));
  for (const char* name : {"/big-m0.avro", "/snap-1-1-big.avro"}) {
    FLOE_ASSERT_OK_AND_ASSIGN(std::string bytes, io::ReadFile(loose + name));
    EXPECT_NE(bytes.find("deflate"), std::string::npos) << name;
  }
}

// The schema a writer grew comes into the table in the swap that adds its files: one new
// metadata version, the schema current and named by the snapshot. Committed again, nothing new
// is adopted; a written schema the table disagrees with fails the commit, nothing committed.
TEST(CommitSnapshot, AdoptsTheWrittenSchemaInTheSwapThatAddsItsFiles) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path(), false));
  FLOE_ASSERT_OK_AND_ASSIGN(LoadedTable before, t.catalog->LoadTable(t.id));
  Schema written = TableSchema();
  written.fields.push_back({"email", DataType::String(), true, 3});
  SnapshotChanges changes;
  changes.added_data_files = {Data(t, "grown", 4)};
  changes.written_schema = written;
  FLOE_ASSERT_OK_AND_ASSIGN(Snapshot snap, CommitSnapshot(*t.catalog, t.id, changes));
  FLOE_ASSERT_OK_AND_ASSIGN(LoadedTable after, t.catalog->LoadTable(t.id));
  EXPECT_EQ(after.version, before.version + 1);
  EXPECT_EQ(after.metadata.current_schema_id, 1);
  EXPECT_EQ(snap.schema_id, 1);
  EXPECT_EQ(after.metadata.last_column_id, 3);
  EXPECT_NE(after.metadata.current_schema().FindByName("email"), nullptr);

  changes.added_data_files = {Data(t, "again", 1)};
  FLOE_ASSERT_OK_AND_ASSIGN(snap, CommitSnapshot(*t.catalog, t.id, changes));
  FLOE_ASSERT_OK_AND_ASSIGN(after, t.catalog->LoadTable(t.id));
  EXPECT_EQ(after.metadata.schemas.size(), 2u);
  EXPECT_EQ(snap.schema_id, 1);

  Schema stale = TableSchema();  // another writer's column 3
  stale.fields.push_back({"phone", DataType::String(), true, 3});
  changes.added_data_files = {Data(t, "stale", 1)};
  changes.written_schema = stale;
  Result<Snapshot> r = CommitSnapshot(*t.catalog, t.id, changes);
  EXPECT_TRUE(r.status().IsInvalidArgument()) << r.status().ToString();
  FLOE_ASSERT_OK_AND_ASSIGN(after, t.catalog->LoadTable(t.id));
  EXPECT_EQ(after.metadata.snapshots.size(), 2u);
}

}  // namespace
}  // namespace floe::iceberg

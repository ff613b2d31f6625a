#include "floe/iceberg/maintenance.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <set>
#include <thread>

#include "floe/iceberg/catalog.h"
#include "floe/iceberg/commit_markers.h"
#include "floe/iceberg/commit_test_util.h"
#include "floe/iceberg/data_writer.h"
#include "floe/iceberg/manifest_io.h"
#include "floe/iceberg/rewrite.h"
#include "floe/iceberg/snapshot_update.h"
#include "floe/iceberg/table_paths.h"
#include "floe/io/file.h"

namespace floe::iceberg {
namespace {

using commit_testing::InterposedCatalog;
using commit_testing::ScratchDir;

Schema TableSchema() {
  Schema s;
  s.fields = {{"id", DataType::Int64(), false, 1}, {"name", DataType::String(), true, 2}};
  return s;
}

struct TestTable {
  std::unique_ptr<FileSystemCatalog> catalog;
  TableIdentifier id{"db", "t"};
  std::string location;  // URI

  Result<TableMetadata> Load() const {
    FLOE_ASSIGN_OR_RAISE(LoadedTable t, catalog->LoadTable(id));
    return std::move(t.metadata);
  }
};

Result<TestTable> MakeTable(const std::string& warehouse,
                            std::map<std::string, std::string> props = {}) {
  TestTable t;
  FLOE_ASSIGN_OR_RAISE(t.catalog, FileSystemCatalog::Make(warehouse));
  FLOE_ASSIGN_OR_RAISE(LoadedTable loaded,
                       t.catalog->CreateTable(t.id, TableSchema(), {}, std::move(props)));
  t.location = loaded.metadata.location;
  FLOE_RETURN_NOT_OK(io::CreateDirs(*UriToPath(t.location + "/data")));
  return t;
}

// Appends one data file (a few real bytes on disk, so removal is visible) in one snapshot.
Result<Snapshot> Append(TestTable& t, const std::string& name,
                        std::map<std::string, std::string> summary = {}) {
  DataFile f;
  f.file_path = t.location + "/data/" + name + ".parquet";
  f.record_count = 1;
  f.file_size_in_bytes = 4;
  FLOE_RETURN_NOT_OK(io::WriteFileExclusive(*UriToPath(f.file_path), "data"));
  SnapshotChanges changes;
  changes.added_data_files = {f};
  changes.summary_properties = std::move(summary);
  // Distinct millisecond timestamps, so age cutoffs between snapshots are exact.
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  return CommitSnapshot(*t.catalog, t.id, changes);
}

// `n` snapshots of one file each (f0, f1, ...), oldest first.
Result<std::vector<Snapshot>> AppendFiles(TestTable& t, int n) {
  std::vector<Snapshot> out;
  for (int i = 0; i < n; ++i) {
    FLOE_ASSIGN_OR_RAISE(Snapshot snap, Append(t, "f" + std::to_string(i)));
    out.push_back(std::move(snap));
  }
  return out;
}

// Commits the current metadata with `edit` applied (refs, properties).
Status CommitEdited(TestTable& t, const std::function<void(TableMetadata&)>& edit) {
  FLOE_ASSIGN_OR_RAISE(LoadedTable loaded, t.catalog->LoadTable(t.id));
  TableMetadata edited = loaded.metadata;
  edit(edited);
  return t.catalog->CommitTable(loaded, std::move(edited)).status();
}

bool UriExists(const std::string& uri) { return io::Exists(*UriToPath(uri)); }

std::set<int64_t> Ids(const TableMetadata& m) {
  std::set<int64_t> out;
  for (const Snapshot& s : m.snapshots) out.insert(s.snapshot_id);
  return out;
}

// Every file the table's snapshots reference (lists, manifests, live entries) exists; returns
// the live data files of the current snapshot.
Result<std::set<std::string>> CheckReferencedFilesExist(const TableMetadata& m) {
  std::set<std::string> current_live;
  for (const Snapshot& s : m.snapshots) {
    if (!UriExists(s.manifest_list)) return Status::NotFound(s.manifest_list);
    FLOE_ASSIGN_OR_RAISE(std::vector<ManifestFile> list,
                         ReadManifestList(io::FileIO(), s.manifest_list));
    for (const ManifestFile& mf : list) {
      if (!UriExists(mf.manifest_path)) return Status::NotFound(mf.manifest_path);
      FLOE_ASSIGN_OR_RAISE(std::vector<ManifestEntry> entries, ReadManifest(io::FileIO(), mf, m));
      for (const ManifestEntry& e : entries) {
        if (e.status == EntryStatus::kDeleted) continue;
        if (!UriExists(e.data_file.file_path)) return Status::NotFound(e.data_file.file_path);
        if (s.snapshot_id == m.current_snapshot_id) current_live.insert(e.data_file.file_path);
      }
    }
  }
  return current_live;
}

TEST(ExpireSnapshots, ByAgeAndRetainLast) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path()));
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<Snapshot> s, AppendFiles(t, 5));
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata before, t.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(auto live_before, CheckReferencedFilesExist(before));

  // Default options: 5 days, keep 1: nothing is that old.
  FLOE_ASSERT_OK_AND_ASSIGN(ExpireResult none, ExpireSnapshots(*t.catalog, t.id));
  EXPECT_TRUE(none.expired_snapshot_ids.empty());
  EXPECT_EQ(none.snapshots_kept, 5);
  EXPECT_EQ(none.commit_attempts, 0);

  // Age: snapshots before s[2] expire.
  ExpireOptions by_age;
  by_age.older_than_ms = s[2].timestamp_ms;
  FLOE_ASSERT_OK_AND_ASSIGN(ExpireResult r, ExpireSnapshots(*t.catalog, t.id, by_age));
  EXPECT_EQ(r.expired_snapshot_ids, (std::vector<int64_t>{s[0].snapshot_id, s[1].snapshot_id}));
  EXPECT_EQ(r.snapshots_kept, 3);
  EXPECT_EQ(r.manifest_lists_deleted, 2);
  EXPECT_EQ(r.manifests_deleted, 0);  // the current list still holds every manifest
  EXPECT_EQ(r.data_files_deleted, 0);
  EXPECT_GT(r.bytes_deleted, 0);
  EXPECT_FALSE(UriExists(s[0].manifest_list));
  EXPECT_FALSE(UriExists(s[1].manifest_list));
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
  EXPECT_EQ(Ids(m), (std::set<int64_t>{s[2].snapshot_id, s[3].snapshot_id, s[4].snapshot_id}));
  for (const SnapshotLogEntry& e : m.snapshot_log) EXPECT_EQ(Ids(m).count(e.snapshot_id), 1u);
  EXPECT_EQ(m.snapshot_log.size(), 3u);
  EXPECT_EQ(m.current_snapshot_id, s[4].snapshot_id);

  // Retain-last 2 with everything old.
  ExpireOptions keep2;
  keep2.older_than_ms = s[4].timestamp_ms + 1000;
  keep2.retain_last = 2;
  FLOE_ASSERT_OK_AND_ASSIGN(r, ExpireSnapshots(*t.catalog, t.id, keep2));
  EXPECT_EQ(r.expired_snapshot_ids, (std::vector<int64_t>{s[2].snapshot_id}));
  FLOE_ASSERT_OK_AND_ASSIGN(m, t.Load());
  EXPECT_EQ(Ids(m), (std::set<int64_t>{s[3].snapshot_id, s[4].snapshot_id}));

  // The table property sets the default retain-last.
  FLOE_ASSERT_OK_AND_ASSIGN(LoadedTable loaded, t.catalog->LoadTable(t.id));
  TableMetadata with_prop = loaded.metadata;
  with_prop.properties[kMinSnapshotsToKeep] = "2";
  with_prop.properties[kMaxSnapshotAgeMs] = "0";
  FLOE_ASSERT_OK(t.catalog->CommitTable(loaded, with_prop).status());
  FLOE_ASSERT_OK_AND_ASSIGN(r, ExpireSnapshots(*t.catalog, t.id));
  EXPECT_TRUE(r.expired_snapshot_ids.empty());

  FLOE_ASSERT_OK_AND_ASSIGN(m, t.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(auto live_after, CheckReferencedFilesExist(m));
  EXPECT_EQ(live_after, live_before);
}

TEST(ExpireSnapshots, KeepsCurrentTaggedAndBranchSnapshots) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path()));
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<Snapshot> s, AppendFiles(t, 5));
  FLOE_ASSERT_OK(CommitEdited(t, [&](TableMetadata& m) {
    m.refs["v1"] = SnapshotRef{s[0].snapshot_id, "tag"};
    m.refs["audit"] = SnapshotRef{s[2].snapshot_id, "branch"};
  }));

  ExpireOptions all;
  all.older_than_ms = s[4].timestamp_ms + 1000;
  all.retain_last = 1;
  FLOE_ASSERT_OK_AND_ASSIGN(ExpireResult r, ExpireSnapshots(*t.catalog, t.id, all));
  EXPECT_EQ(r.expired_snapshot_ids, (std::vector<int64_t>{s[1].snapshot_id, s[3].snapshot_id}));
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
  EXPECT_EQ(Ids(m), (std::set<int64_t>{s[0].snapshot_id, s[2].snapshot_id, s[4].snapshot_id}));
  EXPECT_EQ(m.refs.size(), 3u);
  FLOE_ASSERT_OK(CheckReferencedFilesExist(m).status());
}

// history.expire.max-ref-age-ms: a tag or branch whose snapshot is older goes (main never),
// and its snapshots expire with it.
TEST(ExpireSnapshots, RemovesRefsOlderThanMaxRefAge) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path()));
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<Snapshot> s, AppendFiles(t, 3));
  FLOE_ASSERT_OK(CommitEdited(t, [&](TableMetadata& m) {
    m.refs["old-tag"] = SnapshotRef{s[0].snapshot_id, "tag"};
    m.properties[kMaxRefAgeMs] = "1";
  }));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));

  ExpireOptions all;
  all.older_than_ms = s[2].timestamp_ms + 1000;
  all.retain_last = 1;
  FLOE_ASSERT_OK_AND_ASSIGN(ExpireResult r, ExpireSnapshots(*t.catalog, t.id, all));
  EXPECT_EQ(r.refs_removed, std::vector<std::string>{"old-tag"});
  EXPECT_EQ(r.expired_snapshot_ids, (std::vector<int64_t>{s[0].snapshot_id, s[1].snapshot_id}));
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
  EXPECT_EQ(m.refs.size(), 1u);
  EXPECT_EQ(m.refs.count("main"), 1u);
}

// A ref's own retention (spec "Snapshot Retention Policy") as Spark or Trino set it, and the
// statistics files they registered: a branch's min-snapshots-to-keep keeps more of its history
// than the expiry asked for, a tag's own max-ref-age-ms removes it though the table sets none,
// and an expired snapshot's statistics go from the metadata and the disk while a kept one's stay.
TEST(ExpireSnapshots, HonoursEachRefsRetentionAndDropsExpiredSnapshotsStatistics) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path()));
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<Snapshot> s, AppendFiles(t, 6));
  auto stats_file = [&](int i) {
    return t.location + "/metadata/stats-" + std::to_string(i) + ".puffin";
  };
  FLOE_ASSERT_OK(CommitEdited(t, [&](TableMetadata& m) {
    m.refs["main"].min_snapshots_to_keep = 3;
    m.refs["old-tag"] = SnapshotRef{s[0].snapshot_id, "tag"};
    m.refs["old-tag"].max_ref_age_ms = 1;
    for (int i : {1, 4}) {
      const std::string path = stats_file(i);
      m.statistics.push_back(
          {s[i].snapshot_id, path,
           R"({"snapshot-id":)" + std::to_string(s[i].snapshot_id) + R"(,"statistics-path":")" +
               path +
               R"(","file-size-in-bytes":4,"file-footer-size-in-bytes":4,"blob-metadata":[]})"});
    }
  }));
  for (int i : {1, 4}) FLOE_ASSERT_OK(io::WriteFileExclusive(*UriToPath(stats_file(i)), "PFA1"));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));

  ExpireOptions all;
  all.older_than_ms = s[5].timestamp_ms + 1000;
  all.retain_last = 1;
  FLOE_ASSERT_OK_AND_ASSIGN(ExpireResult r, ExpireSnapshots(*t.catalog, t.id, all));
  EXPECT_EQ(r.refs_removed, std::vector<std::string>{"old-tag"});
  EXPECT_EQ(r.expired_snapshot_ids,
            (std::vector<int64_t>{s[0].snapshot_id, s[1].snapshot_id, s[2].snapshot_id}));
  EXPECT_EQ(r.statistics_files_deleted, 1);
  EXPECT_FALSE(UriExists(stats_file(1)));
  EXPECT_TRUE(UriExists(stats_file(4)));
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
  EXPECT_EQ(Ids(m), (std::set<int64_t>{s[3].snapshot_id, s[4].snapshot_id, s[5].snapshot_id}));
  ASSERT_EQ(m.statistics.size(), 1u);
  EXPECT_EQ(m.statistics[0].snapshot_id, s[4].snapshot_id);
  EXPECT_EQ(m.refs.at("main").min_snapshots_to_keep, 3);
  // The statistics file a kept snapshot registers is no orphan.
  OrphanOptions orphans;
  orphans.older_than_ms = INT64_MAX;
  orphans.dry_run = true;
  FLOE_ASSERT_OK_AND_ASSIGN(OrphanResult o, RemoveOrphanFiles(*t.catalog, t.id, orphans));
  EXPECT_TRUE(UriExists(stats_file(4)));
  for (const std::string& path : o.orphans) EXPECT_EQ(path.find("stats-4"), std::string::npos);

  // A new commit on main keeps main's retention.
  FLOE_ASSERT_OK(Append(t, "after").status());
  FLOE_ASSERT_OK_AND_ASSIGN(m, t.Load());
  EXPECT_EQ(m.refs.at("main").min_snapshots_to_keep, 3);
  EXPECT_EQ(m.statistics.size(), 1u);
}

TEST(ExpireSnapshots, DeletesOnlyFilesNoRetainedSnapshotReferences) {
  ScratchDir dir;
  // Merging every commit makes old manifests unreferenced by the current snapshot.
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t,
                            MakeTable(dir.path(), {{"commit.manifest.min-count-to-merge", "2"}}));
  FLOE_ASSERT_OK_AND_ASSIGN(Snapshot a, Append(t, "a"));
  FLOE_ASSERT_OK_AND_ASSIGN(Snapshot b, Append(t, "b"));
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());

  // A snapshot removing file a: one manifest with a DELETED and b EXISTING.
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<ManifestFile> b_list,
                            ReadManifestList(io::FileIO(), b.manifest_list));
  std::vector<ManifestEntry> entries;
  std::set<std::string> old_manifests;
  for (const ManifestFile& mf : b_list) {
    old_manifests.insert(mf.manifest_path);
    FLOE_ASSERT_OK_AND_ASSIGN(std::vector<ManifestEntry> es, ReadManifest(io::FileIO(), mf, m));
    for (ManifestEntry& e : es) {
      e.status = e.data_file.file_path == t.location + "/data/a.parquet" ? EntryStatus::kDeleted
                                                                         : EntryStatus::kExisting;
      entries.push_back(e);
    }
  }
  ASSERT_EQ(entries.size(), 2u);
  const int64_t c_id = 777;
  const std::string meta = *UriToPath(t.location + "/metadata");
  FLOE_ASSERT_OK_AND_ASSIGN(ManifestFile c_manifest,
                            WriteManifest(io::FileIO(), meta + "/c-m0.avro", m.current_schema(),
                                          m.default_spec(), ManifestContent::kData, c_id, entries));
  c_manifest.sequence_number = 3;
  c_manifest.min_sequence_number = 1;
  FLOE_ASSERT_OK(WriteManifestList(io::FileIO(), meta + "/snap-777.avro", c_id, b.snapshot_id, 3,
                                   {c_manifest}));
  FLOE_ASSERT_OK_AND_ASSIGN(LoadedTable loaded, t.catalog->LoadTable(t.id));
  TableMetadata with_c = loaded.metadata;
  Snapshot c;
  c.snapshot_id = c_id;
  c.parent_snapshot_id = b.snapshot_id;
  c.sequence_number = 3;
  c.timestamp_ms = b.timestamp_ms + 1;
  c.manifest_list = PathToUri(meta + "/snap-777.avro");
  c.summary = {{"operation", "delete"}};
  with_c.snapshots.push_back(c);
  with_c.current_snapshot_id = c_id;
  with_c.refs["main"].snapshot_id = c_id;
  with_c.last_sequence_number = 3;
  with_c.snapshot_log.push_back({c.timestamp_ms, c_id});
  FLOE_ASSERT_OK(t.catalog->CommitTable(loaded, with_c).status());

  ExpireOptions all;
  all.older_than_ms = c.timestamp_ms + 1000;
  FLOE_ASSERT_OK_AND_ASSIGN(ExpireResult r, ExpireSnapshots(*t.catalog, t.id, all));
  EXPECT_EQ(r.expired_snapshot_ids, (std::vector<int64_t>{a.snapshot_id, b.snapshot_id}));
  EXPECT_EQ(r.snapshots_kept, 1);
  EXPECT_EQ(r.manifest_lists_deleted, 2);
  EXPECT_EQ(r.manifests_deleted, static_cast<int64_t>(old_manifests.size() + 1));  // + a's own
  EXPECT_EQ(r.data_files_deleted, 1);
  EXPECT_EQ(r.files_not_deleted, 0);
  EXPECT_FALSE(UriExists(t.location + "/data/a.parquet"));
  EXPECT_TRUE(UriExists(t.location + "/data/b.parquet"));
  for (const std::string& path : old_manifests) EXPECT_FALSE(UriExists(path)) << path;
  FLOE_ASSERT_OK_AND_ASSIGN(m, t.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(auto live, CheckReferencedFilesExist(m));
  EXPECT_EQ(live, (std::set<std::string>{t.location + "/data/b.parquet"}));
}

TEST(ExpireSnapshots, KeepsNewestMarkerPerSinkAndItsChainToCurrent) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path()));
  std::vector<Snapshot> s;
  const std::vector<std::string> sinks = {"a", "a", "b", "", "", "b"};
  for (size_t i = 0; i < sinks.size(); ++i) {
    std::map<std::string, std::string> summary;
    if (!sinks[i].empty()) summary = {{kSummarySinkId, sinks[i]}, {"floe.checkpoint-id", "1"}};
    FLOE_ASSERT_OK_AND_ASSIGN(Snapshot snap, Append(t, "f" + std::to_string(i), summary));
    s.push_back(snap);
  }
  ExpireOptions all;
  all.older_than_ms = s.back().timestamp_ms + 1000;
  all.retain_last = 1;
  FLOE_ASSERT_OK_AND_ASSIGN(ExpireResult r, ExpireSnapshots(*t.catalog, t.id, all));
  // Newest of "a" is s[1]: s[1]..s[5] stay (the chain restore walks), s[0] goes.
  EXPECT_EQ(r.expired_snapshot_ids, (std::vector<int64_t>{s[0].snapshot_id}));
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
  EXPECT_EQ(m.snapshots.size(), 5u);
  const Snapshot* walk = m.current_snapshot();
  int steps = 0;
  while (walk != nullptr && walk->parent_snapshot_id &&
         m.FindSnapshot(*walk->parent_snapshot_id) != nullptr) {
    walk = m.FindSnapshot(*walk->parent_snapshot_id);
    ++steps;
  }
  ASSERT_NE(walk, nullptr);
  EXPECT_EQ(walk->snapshot_id, s[1].snapshot_id);
  EXPECT_EQ(steps, 4);  // s[5] -> s[1] unbroken, s[1]'s parent is gone
}

TEST(ExpireSnapshots, RetriesAfterAConflictingCommit) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable t, MakeTable(dir.path()));
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<Snapshot> s, AppendFiles(t, 3));
  InterposedCatalog racing(t.catalog.get());
  Snapshot concurrent;
  racing.before_commit = [&](int call) {
    if (call != 1) return;
    Result<Snapshot> snap = Append(t, "concurrent");
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
    concurrent = *snap;
  };
  ExpireOptions all;
  all.older_than_ms = s.back().timestamp_ms + 1000;  // the concurrent snapshot is newer
  all.retain_last = 1;
  FLOE_ASSERT_OK_AND_ASSIGN(ExpireResult r, ExpireSnapshots(racing, t.id, all));
  EXPECT_EQ(r.commit_attempts, 2);
  EXPECT_EQ(r.expired_snapshot_ids,
            (std::vector<int64_t>{s[0].snapshot_id, s[1].snapshot_id, s[2].snapshot_id}));
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata m, t.Load());
  EXPECT_EQ(Ids(m), (std::set<int64_t>{concurrent.snapshot_id}));
  FLOE_ASSERT_OK_AND_ASSIGN(auto live, CheckReferencedFilesExist(m));
  EXPECT_EQ(live.size(), 4u);

  // Retries exhausted: Conflict, nothing removed.
  FLOE_ASSERT_OK_AND_ASSIGN(Snapshot more, Append(t, "more"));
  InterposedCatalog always(t.catalog.get());
  ExpireOptions no_retry = all;
  no_retry.older_than_ms = more.timestamp_ms + 1000;
  no_retry.num_retries = 0;
  always.before_commit = [&](int call) {
    if (call == 1) {
      ASSERT_TRUE(Append(t, "again").ok());
    }
  };
  Result<ExpireResult> failed = ExpireSnapshots(always, t.id, no_retry);
  EXPECT_TRUE(failed.status().IsConflict()) << failed.status().ToString();
  EXPECT_TRUE(UriExists(concurrent.manifest_list));
}

// Issue 21, finding 6: table `attacker` gets a snapshot whose manifest list is table `victim`'s.
// floe's catalogs refuse that commit (400 through the REST server); written by another tool,
// expiry on `attacker` still deletes nothing of `victim`'s: paths outside the table's location
// are skipped and counted. Failed before: expiry deleted victim's manifest list, manifest and
// data file.
TEST(ExpireSnapshots, NeverDeletesAnotherTablesFilesASnapshotPointsAt) {
  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(TestTable victim, MakeTable(dir.path()));
  TestTable attacker;
  FLOE_ASSERT_OK_AND_ASSIGN(attacker.catalog, FileSystemCatalog::Make(dir.path()));
  attacker.id = TableIdentifier{"db", "attacker"};
  FLOE_ASSERT_OK_AND_ASSIGN(LoadedTable made,
                            attacker.catalog->CreateTable(attacker.id, TableSchema(), {}, {}));
  attacker.location = made.metadata.location;
  FLOE_ASSERT_OK(io::CreateDirs(*UriToPath(attacker.location + "/data")));
  FLOE_ASSERT_OK_AND_ASSIGN(Snapshot victims, Append(victim, "v0"));
  FLOE_ASSERT_OK(Append(attacker, "a0").status());

  FLOE_ASSERT_OK_AND_ASSIGN(LoadedTable base, attacker.catalog->LoadTable(attacker.id));
  TableMetadata evil = base.metadata;
  Snapshot borrowed = victims;
  borrowed.snapshot_id = victims.snapshot_id + 1;
  borrowed.parent_snapshot_id = evil.current_snapshot_id;
  borrowed.sequence_number = ++evil.last_sequence_number;
  borrowed.timestamp_ms = 1;  // old: expires
  evil.snapshots.insert(evil.snapshots.begin(), borrowed);
  Status refused = attacker.catalog->CommitTable(base, evil).status();
  ASSERT_TRUE(refused.IsInvalidArgument()) << refused.ToString();
  EXPECT_NE(refused.message().find("manifest-list '" + victims.manifest_list + "' is not inside"),
            std::string::npos)
      << refused.ToString();

  // Written past the catalog, as another engine might.
  const std::string next = *UriToPath(attacker.location + "/metadata/v" +
                                      std::to_string(base.version + 1) + ".metadata.json");
  FLOE_ASSERT_OK(io::WriteFileExclusive(next, TableMetadataToJson(evil)));
  ExpireOptions options;
  options.older_than_ms = 2;
  FLOE_ASSERT_OK_AND_ASSIGN(ExpireResult r,
                            ExpireSnapshots(*attacker.catalog, attacker.id, options));
  EXPECT_EQ(r.expired_snapshot_ids, std::vector<int64_t>{borrowed.snapshot_id});
  EXPECT_EQ(r.files_outside_skipped, 3);  // victim's manifest list, manifest, data file
  EXPECT_EQ(r.manifest_lists_deleted + r.manifests_deleted + r.data_files_deleted, 0);
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata v, victim.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(std::set<std::string> live, CheckReferencedFilesExist(v));
  EXPECT_EQ(live.size(), 1u);
}

// write.data.path and write.metadata.path stay below the location; so does a moved location.
TEST(TablePaths, PathPropertiesAndLocationStayInsideTheTable) {
  EXPECT_TRUE(IsInsideLocation("file:///wh/db/t", "/wh/db/t/data/x.parquet"));
  EXPECT_TRUE(IsInsideLocation("/wh/db/t/", "file:///wh/db/t/data"));
  EXPECT_TRUE(IsInsideLocation("s3://b/wh/db/t", "s3://b/wh/db/t/metadata/snap-1.avro"));
  EXPECT_TRUE(IsInsideLocation("s3a://b/wh/db/t", "s3://b/wh/db/t/data/x.parquet"));
  EXPECT_FALSE(IsInsideLocation("file:///wh/db/t", "/wh/db/t"));
  EXPECT_FALSE(IsInsideLocation("file:///wh/db/t", "/wh/db/t2/data/x.parquet"));
  EXPECT_FALSE(IsInsideLocation("file:///wh/db/t", "/wh/db/t/../victim/data/x.parquet"));
  EXPECT_FALSE(IsInsideLocation("s3://b/wh/db/t", "s3://other/wh/db/t/x"));
  EXPECT_FALSE(IsInsideLocation("s3://b/wh/db/t", "/wh/db/t/x"));
  EXPECT_FALSE(IsInsideLocation("file:///wh/db/t", "data/x.parquet"));

  ScratchDir dir;
  FLOE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<FileSystemCatalog> catalog,
                            FileSystemCatalog::Make(dir.path()));
  Result<LoadedTable> elsewhere =
      catalog->CreateTable({"db", "t"}, TableSchema(), {}, {{"write.data.path", "/tmp/elsewhere"}});
  ASSERT_TRUE(elsewhere.status().IsInvalidArgument());
  EXPECT_NE(elsewhere.status().message().find(
                "property write.data.path = '/tmp/elsewhere' is not inside the table's location"),
            std::string::npos)
      << elsewhere.status().ToString();
  FLOE_ASSERT_OK_AND_ASSIGN(LoadedTable t,
                            catalog->CreateTable({"db", "t"}, TableSchema(), {}, {}));
  for (const auto& [key, value] : std::map<std::string, std::string>{
           {"write.data.path", "/tmp/elsewhere"}, {"write.metadata.path", t.metadata.location}}) {
    TableMetadata edited = t.metadata;
    edited.properties[key] = value;
    Status st = catalog->CommitTable(t, edited).status();
    EXPECT_TRUE(st.IsInvalidArgument()) << key << ": " << st.ToString();
  }
  TableMetadata moved = t.metadata;
  moved.location = "file:///tmp/elsewhere";
  EXPECT_TRUE(catalog->CommitTable(t, moved).status().IsInvalidArgument());
  TableMetadata inside = t.metadata;
  inside.properties["write.data.path"] = t.metadata.location + "/data2";
  FLOE_ASSERT_OK(catalog->CommitTable(t, inside).status());

  // Stored before by another tool: commits that leave it alone go through, writing there not.
  FLOE_ASSERT_OK_AND_ASSIGN(LoadedTable now, catalog->LoadTable({"db", "t"}));
  TableMetadata foreign = now.metadata;
  foreign.properties["write.data.path"] = "/tmp/elsewhere";
  FLOE_ASSERT_OK(
      io::WriteFileExclusive(*UriToPath(foreign.location + "/metadata/v" +
                                        std::to_string(now.version + 1) + ".metadata.json"),
                             TableMetadataToJson(foreign)));
  FLOE_ASSERT_OK_AND_ASSIGN(LoadedTable stored, catalog->LoadTable({"db", "t"}));
  TableMetadata other = stored.metadata;
  other.properties["commit.retry.num-retries"] = "5";
  FLOE_ASSERT_OK(catalog->CommitTable(stored, other).status());
  Result<FileWriterConfig> config = ConfigFromTableProperties(io::FileIO(), other, "x");
  ASSERT_TRUE(config.status().IsInvalidArgument());
  EXPECT_NE(config.status().message().find("not inside the table's location"), std::string::npos)
      << config.status().ToString();
}

}  // namespace
}  // namespace floe::iceberg

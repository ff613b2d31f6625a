#include "floe/iceberg/catalog.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "floe/iceberg/commit_test_util.h"
#include "floe/io/file.h"

namespace floe::iceberg {
namespace {

namespace fs = std::filesystem;
using commit_testing::WithSnapshot;

class FileSystemCatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("floe_catalog_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    catalog_ = FileSystemCatalog::Make(dir_.string()).ValueOrDie();
  }
  void TearDown() override { fs::remove_all(dir_); }

  static Schema TestSchema() {
    Schema s;
    s.fields = {{"seq", DataType::Int64(), false, 1}, {"ts", DataType::TimestampTz(), true, 2}};
    return s;
  }
  static PartitionSpec TestSpec() {
    PartitionSpec spec;
    spec.fields = {{2, 0, "ts_day", {TransformKind::kDay, 0}}};
    return spec;
  }
  LoadedTable Create(const TableIdentifier& id = {"db", "t"},
                     std::map<std::string, std::string> props = {}) {
    return catalog_->CreateTable(id, TestSchema(), TestSpec(), std::move(props)).ValueOrDie();
  }
  std::string MetadataDir() const { return (dir_ / "db" / "t" / "metadata").string(); }
  std::string MetadataFile(int v) const {
    return MetadataDir() + "/v" + std::to_string(v) + ".metadata.json";
  }

  fs::path dir_;
  std::unique_ptr<FileSystemCatalog> catalog_;
};

TEST_F(FileSystemCatalogTest, CreateWritesV1AndHintAndLoadsBack) {
  LoadedTable t = Create();
  EXPECT_EQ(t.version, 1);
  EXPECT_EQ(t.metadata_location, MetadataFile(1));
  EXPECT_EQ(t.metadata.location, "file://" + (dir_ / "db" / "t").string());
  EXPECT_EQ(catalog_->DefaultTableLocation({"db", "t"}), t.metadata.location);
  EXPECT_EQ(io::ReadFile(MetadataDir() + "/version-hint.text").ValueOrDie(), "1");
  Result<LoadedTable> loaded = catalog_->LoadTable({"db", "t"});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->metadata, t.metadata);
  EXPECT_EQ(loaded->version, 1);
  EXPECT_EQ(loaded->metadata_location, MetadataFile(1));
  EXPECT_EQ(loaded->id, (TableIdentifier{"db", "t"}));
}

TEST_F(FileSystemCatalogTest, CreateTwiceIsAlreadyExistsAndLoadMissingIsNotFound) {
  Create();
  Result<LoadedTable> again = catalog_->CreateTable({"db", "t"}, TestSchema(), {}, {});
  EXPECT_TRUE(again.status().IsAlreadyExists()) << again.status().ToString();
  EXPECT_TRUE(catalog_->LoadTable({"db", "nope"}).status().IsNotFound());
  EXPECT_TRUE(catalog_->LoadTable({"other", "t"}).status().IsNotFound());
  // A bad schema creates nothing.
  Schema empty;
  EXPECT_FALSE(catalog_->CreateTable({"db", "u"}, empty, {}, {}).ok());
  EXPECT_TRUE(catalog_->LoadTable({"db", "u"}).status().IsNotFound());
}

TEST_F(FileSystemCatalogTest, CommitWritesNextVersionLogsPreviousAndUpdatesHint) {
  LoadedTable v1 = Create();
  Result<LoadedTable> v2 = catalog_->CommitTable(v1, WithSnapshot(v1.metadata, 11));
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_EQ(v2->version, 2);
  EXPECT_EQ(v2->metadata_location, MetadataFile(2));
  ASSERT_EQ(v2->metadata.metadata_log.size(), 1u);
  EXPECT_EQ(v2->metadata.metadata_log[0].metadata_file, "file://" + MetadataFile(1));
  EXPECT_EQ(v2->metadata.metadata_log[0].timestamp_ms, v1.metadata.last_updated_ms);
  EXPECT_GE(v2->metadata.last_updated_ms, v1.metadata.last_updated_ms);
  EXPECT_EQ(io::ReadFile(MetadataDir() + "/version-hint.text").ValueOrDie(), "2");
  Result<LoadedTable> loaded = catalog_->LoadTable({"db", "t"});
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->metadata, v2->metadata);
  EXPECT_EQ(loaded->metadata.current_snapshot()->snapshot_id, 11);
}

TEST_F(FileSystemCatalogTest, LoadAfterOwnCommitEqualsAFreshParseAndSeesReplacedFiles) {
  LoadedTable v1 = Create();
  LoadedTable v2 = catalog_->CommitTable(v1, WithSnapshot(v1.metadata, 11)).ValueOrDie();
  // The committing catalog answers from memory; a fresh one parses the file: same metadata.
  LoadedTable remembered = catalog_->LoadTable({"db", "t"}).ValueOrDie();
  auto fresh = FileSystemCatalog::Make(dir_.string()).ValueOrDie();
  LoadedTable parsed = fresh->LoadTable({"db", "t"}).ValueOrDie();
  EXPECT_EQ(remembered.metadata, parsed.metadata);
  EXPECT_EQ(remembered.metadata, v2.metadata);
  EXPECT_EQ(remembered.version, parsed.version);
  // A file put in place of v2 behind the catalog's back is read again, never served stale.
  TableMetadata other = WithSnapshot(v1.metadata, 12);
  other.metadata_log = v2.metadata.metadata_log;
  ASSERT_TRUE(io::RemoveFile(MetadataFile(2)).ok());
  ASSERT_TRUE(io::WriteFileExclusive(MetadataFile(2), TableMetadataToJson(other)).ok());
  EXPECT_EQ(catalog_->LoadTable({"db", "t"}).ValueOrDie().metadata.current_snapshot_id, 12);
}

TEST_F(FileSystemCatalogTest, StaleBaseIsConflictAndChangesNothing) {
  LoadedTable v1 = Create();
  ASSERT_TRUE(catalog_->CommitTable(v1, WithSnapshot(v1.metadata, 1)).ok());
  Result<LoadedTable> r = catalog_->CommitTable(v1, WithSnapshot(v1.metadata, 2));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsConflict()) << r.status().ToString();
  EXPECT_NE(r.status().message().find("reload and retry"), std::string::npos);
  LoadedTable now = catalog_->LoadTable({"db", "t"}).ValueOrDie();
  EXPECT_EQ(now.version, 2);
  EXPECT_EQ(*now.metadata.current_snapshot_id, 1);
  EXPECT_FALSE(io::Exists(MetadataFile(3)));
  // Reload, re-apply, retry: succeeds.
  Result<LoadedTable> retried = catalog_->CommitTable(now, WithSnapshot(now.metadata, 2));
  ASSERT_TRUE(retried.ok());
  EXPECT_EQ(retried->version, 3);
  EXPECT_EQ(retried->metadata.snapshots.size(), 2u);
}

TEST_F(FileSystemCatalogTest, CommitRejectsForeignMetadata) {
  LoadedTable v1 = Create();
  TableMetadata other = v1.metadata;
  other.table_uuid = "00000000-0000-4000-8000-000000000000";
  EXPECT_TRUE(catalog_->CommitTable(v1, other).status().IsInvalidArgument());
  LoadedTable never_loaded;
  never_loaded.id = {"db", "t"};
  EXPECT_FALSE(catalog_->CommitTable(never_loaded, v1.metadata).ok());
}

TEST_F(FileSystemCatalogTest, MetadataLogIsCappedByPreviousVersionsMax) {
  LoadedTable t = Create({"db", "t"}, {{"write.metadata.previous-versions-max", "3"}});
  for (int i = 1; i <= 6; ++i) {
    t = catalog_->CommitTable(t, WithSnapshot(t.metadata, i)).ValueOrDie();
  }
  EXPECT_EQ(t.version, 7);
  ASSERT_EQ(t.metadata.metadata_log.size(), 3u);
  EXPECT_EQ(t.metadata.metadata_log[0].metadata_file, "file://" + MetadataFile(4));
  EXPECT_EQ(t.metadata.metadata_log[2].metadata_file, "file://" + MetadataFile(6));
}

TEST_F(FileSystemCatalogTest, DeleteAfterCommitKeepsOnlyTheLoggedPreviousVersions) {
  LoadedTable t = Create({"db", "t"}, {{"write.metadata.previous-versions-max", "3"},
                                       {"write.metadata.delete-after-commit.enabled", "true"}});
  for (int i = 1; i <= 20; ++i) {
    t = catalog_->CommitTable(t, WithSnapshot(t.metadata, i)).ValueOrDie();
  }
  EXPECT_EQ(t.version, 21);
  // v18..v20 in the log, v21 current; v1..v17 deleted.
  for (int v = 1; v <= 17; ++v) EXPECT_FALSE(io::Exists(MetadataFile(v))) << v;
  for (int v = 18; v <= 21; ++v) EXPECT_TRUE(io::Exists(MetadataFile(v))) << v;
  LoadedTable loaded = catalog_->LoadTable({"db", "t"}).ValueOrDie();
  EXPECT_EQ(loaded.version, 21);
  EXPECT_EQ(loaded.metadata.snapshots.size(), 20u);
}

TEST_F(FileSystemCatalogTest, WithoutDeleteAfterCommitEveryVersionStays) {
  LoadedTable t = Create({"db", "t"}, {{"write.metadata.previous-versions-max", "2"}});
  for (int i = 1; i <= 5; ++i) {
    t = catalog_->CommitTable(t, WithSnapshot(t.metadata, i)).ValueOrDie();
  }
  for (int v = 1; v <= 6; ++v) EXPECT_TRUE(io::Exists(MetadataFile(v))) << v;
}

// With old versions deleted, an exclusive create no longer proves the base was current: a
// committer far behind re-creates a deleted version. It must be refused, not lost.
TEST_F(FileSystemCatalogTest, AStaleBaseWhoseNextVersionWasDeletedIsAConflictNotALostCommit) {
  LoadedTable stale = Create({"db", "t"}, {{"write.metadata.previous-versions-max", "1"},
                                           {"write.metadata.delete-after-commit.enabled", "true"}});
  LoadedTable t = stale;
  for (int i = 1; i <= 4; ++i) {
    t = catalog_->CommitTable(t, WithSnapshot(t.metadata, i)).ValueOrDie();
  }
  ASSERT_FALSE(io::Exists(MetadataFile(2)));
  Result<LoadedTable> r = catalog_->CommitTable(stale, WithSnapshot(stale.metadata, 99));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsConflict()) << r.status().ToString();
  EXPECT_FALSE(io::Exists(MetadataFile(2)));
  LoadedTable now = catalog_->LoadTable({"db", "t"}).ValueOrDie();
  EXPECT_EQ(now.version, 5);
  EXPECT_EQ(*now.metadata.current_snapshot_id, 4);
}

TEST_F(FileSystemCatalogTest, LoadFindsLatestWhenHintIsMissingStaleOrCorrupt) {
  LoadedTable t = Create();
  for (int i = 1; i <= 3; ++i)
    t = catalog_->CommitTable(t, WithSnapshot(t.metadata, i)).ValueOrDie();
  std::string hint = MetadataDir() + "/version-hint.text";
  for (const char* content : {"1", "2", "garbage", "", "-3", "99", "4\n"}) {
    ASSERT_TRUE(io::WriteFileReplace(hint, content).ok());
    Result<LoadedTable> r = catalog_->LoadTable({"db", "t"});
    ASSERT_TRUE(r.ok()) << content << ": " << r.status().ToString();
    EXPECT_EQ(r->version, 4) << "hint '" << content << "'";
    EXPECT_EQ(*r->metadata.current_snapshot_id, 3);
  }
  ASSERT_TRUE(io::RemoveFile(hint).ok());
  Result<LoadedTable> r = catalog_->LoadTable({"db", "t"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->version, 4);
  // Stray files in the metadata dir are ignored.
  ASSERT_TRUE(io::WriteFileReplace(MetadataDir() + "/v9.metadata.json.tmp", "x").ok());
  ASSERT_TRUE(io::WriteFileReplace(MetadataDir() + "/snap-1.avro", "x").ok());
  EXPECT_EQ(catalog_->LoadTable({"db", "t"})->version, 4);
  // Committing after a lost hint works and restores it.
  LoadedTable v5 = catalog_->CommitTable(*r, WithSnapshot(r->metadata, 4)).ValueOrDie();
  EXPECT_EQ(v5.version, 5);
  EXPECT_EQ(io::ReadFile(hint).ValueOrDie(), "5");
}

TEST_F(FileSystemCatalogTest, CrashBetweenMetadataWriteAndHintStillLoadsNewVersion) {
  LoadedTable v1 = Create();
  // Simulate a committer that wrote v2 and died before updating the hint.
  TableMetadata updated = WithSnapshot(v1.metadata, 77);
  ASSERT_TRUE(io::WriteFileExclusive(MetadataFile(2), TableMetadataToJson(updated)).ok());
  EXPECT_EQ(io::ReadFile(MetadataDir() + "/version-hint.text").ValueOrDie(), "1");
  Result<LoadedTable> r = catalog_->LoadTable({"db", "t"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->version, 2);
  EXPECT_EQ(*r->metadata.current_snapshot_id, 77);
  // The load put the hint right for readers that trust it (icebird): before, it stayed at 1
  // when the killed commit was the job's last (interop_independent_readers, floe demo).
  EXPECT_EQ(io::ReadFile(MetadataDir() + "/version-hint.text").ValueOrDie(), "2");
  // And a writer still holding v1 conflicts instead of overwriting v2.
  EXPECT_TRUE(catalog_->CommitTable(v1, WithSnapshot(v1.metadata, 78)).status().IsConflict());
}

TEST_F(FileSystemCatalogTest, CorruptMetadataFileIsCorruptionNamingTheFile) {
  LoadedTable v1 = Create();
  LoadedTable v2 = catalog_->CommitTable(v1, WithSnapshot(v1.metadata, 5)).ValueOrDie();
  std::string good = io::ReadFile(MetadataFile(2)).ValueOrDie();
  for (size_t len = 0; len < good.size(); len += 1 + len / 16) {
    ASSERT_TRUE(io::RemoveFile(MetadataFile(2)).ok());
    ASSERT_TRUE(io::WriteFileExclusive(MetadataFile(2), good.substr(0, len)).ok());
    Result<LoadedTable> r = catalog_->LoadTable({"db", "t"});
    ASSERT_FALSE(r.ok()) << len;
    EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
    EXPECT_NE(r.status().message().find(MetadataFile(2)), std::string::npos)
        << r.status().ToString();
  }
}

TEST_F(FileSystemCatalogTest, TwoThreadsCommittingTheSameBaseExactlyOneWins) {
  for (int round = 0; round < 20; ++round) {
    LoadedTable base = catalog_->LoadTable({"db", "t"}).ok()
                           ? catalog_->LoadTable({"db", "t"}).ValueOrDie()
                           : Create();
    std::atomic<int> ready{0};
    Result<LoadedTable> results[2] = {Status::Internal("unset"), Status::Internal("unset")};
    std::thread threads[2];
    for (int i = 0; i < 2; ++i) {
      threads[i] = std::thread([&, i] {
        TableMetadata updated = WithSnapshot(base.metadata, round * 10 + i + 1);
        ready.fetch_add(1);
        while (ready.load() < 2) {
        }
        results[i] = catalog_->CommitTable(base, updated);
      });
    }
    for (auto& t : threads) t.join();
    int wins = results[0].ok() + results[1].ok();
    ASSERT_EQ(wins, 1) << "round " << round;
    const Result<LoadedTable>& loser = results[0].ok() ? results[1] : results[0];
    EXPECT_TRUE(loser.status().IsConflict()) << loser.status().ToString();
    const LoadedTable& winner = results[0].ok() ? *results[0] : *results[1];
    LoadedTable now = catalog_->LoadTable({"db", "t"}).ValueOrDie();
    EXPECT_EQ(now.version, base.version + 1);
    EXPECT_EQ(now.metadata, winner.metadata);
  }
}

TEST_F(FileSystemCatalogTest, ForkedProcessesCommittingTheSameBaseExactlyOneWins) {
  LoadedTable base = Create();
  constexpr int kProcs = 4;
  pid_t pids[kProcs];
  for (int i = 0; i < kProcs; ++i) {
    pids[i] = ::fork();
    ASSERT_GE(pids[i], 0);
    if (pids[i] == 0) {
      auto catalog = FileSystemCatalog::Make(dir_.string());
      if (!catalog.ok()) ::_exit(3);
      Result<LoadedTable> r = (*catalog)->CommitTable(base, WithSnapshot(base.metadata, 100 + i));
      ::_exit(r.ok() ? 0 : (r.status().IsConflict() ? 1 : 2));
    }
  }
  int wins = 0, conflicts = 0;
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    wins += WEXITSTATUS(status) == 0;
    conflicts += WEXITSTATUS(status) == 1;
  }
  EXPECT_EQ(wins, 1);
  EXPECT_EQ(conflicts, kProcs - 1);
  LoadedTable now = catalog_->LoadTable({"db", "t"}).ValueOrDie();
  EXPECT_EQ(now.version, 2);
  EXPECT_EQ(now.metadata.snapshots.size(), 1u);
}

TEST_F(FileSystemCatalogTest, ForkedProcessesThatRetryAllLandWithoutLosingCommits) {
  Create();
  constexpr int kProcs = 4, kCommitsEach = 5;
  EXPECT_EQ(commit_testing::ForkCommitters(kProcs, kCommitsEach, {"db", "t"},
                                           [&]() -> Result<std::unique_ptr<Catalog>> {
                                             FLOE_ASSIGN_OR_RAISE(
                                                 auto c, FileSystemCatalog::Make(dir_.string()));
                                             return std::unique_ptr<Catalog>(std::move(c));
                                           }),
            0);
  LoadedTable now = catalog_->LoadTable({"db", "t"}).ValueOrDie();
  EXPECT_EQ(now.version, 1 + kProcs * kCommitsEach);
  EXPECT_EQ(now.metadata.snapshots.size(), static_cast<size_t>(kProcs * kCommitsEach));
  EXPECT_EQ(now.metadata.last_sequence_number, kProcs * kCommitsEach);
  EXPECT_EQ(now.metadata.metadata_log.size(), static_cast<size_t>(kProcs * kCommitsEach));
  // Committers re-check after writing the hint, so it ends at the newest version even though
  // they raced to write it (readers such as icebird trust it).
  EXPECT_EQ(io::ReadFile(MetadataDir() + "/version-hint.text").ValueOrDie(),
            std::to_string(now.version));
}

TEST_F(FileSystemCatalogTest, ListTablesFindsOnlyTables) {
  Create({"db", "a"});
  Create({"db", "b"});
  Create({"other", "c"});
  ASSERT_TRUE(io::CreateDirs((dir_ / "db" / "not_a_table").string()).ok());
  Result<std::vector<TableIdentifier>> tables = catalog_->ListTables("db");
  ASSERT_TRUE(tables.ok());
  EXPECT_EQ(*tables, (std::vector<TableIdentifier>{{"db", "a"}, {"db", "b"}}));
  EXPECT_TRUE(catalog_->ListTables("nope").status().IsNotFound());
}

TEST_F(FileSystemCatalogTest, RelativeWarehouseIsMadeAbsolute) {
  fs::path cwd = fs::current_path();
  fs::current_path(dir_);
  auto catalog = FileSystemCatalog::Make("rel/wh");
  fs::current_path(cwd);
  ASSERT_TRUE(catalog.ok());
  EXPECT_EQ((*catalog)->warehouse(), (dir_ / "rel" / "wh").string());
}

TEST(TableIdentifier, ParsesNamespaceDotTable) {
  Result<TableIdentifier> id = TableIdentifier::Parse("db.events_1");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(id->ns, "db");
  EXPECT_EQ(id->name, "events_1");
  EXPECT_EQ(id->ToString(), "db.events_1");
  for (const char* bad : {"events", "a.b.c", ".t", "db.", "d-b.t", "db.t/x", ""}) {
    Result<TableIdentifier> r = TableIdentifier::Parse(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("namespace.table"), std::string::npos);
  }
}

TEST(FileUris, ConvertBothWays) {
  EXPECT_EQ(PathToUri("/wh/db/t"), "file:///wh/db/t");
  EXPECT_EQ(*UriToPath("file:///wh/db/t"), "/wh/db/t");
  EXPECT_EQ(*UriToPath("file:/wh/db/t"), "/wh/db/t");
  EXPECT_EQ(*UriToPath("file://localhost/wh"), "/wh");
  EXPECT_EQ(*UriToPath("/wh"), "/wh");
  // io's functions take s3:// URIs as they are.
  EXPECT_EQ(*UriToPath("s3://bucket/x"), "s3://bucket/x");
  EXPECT_EQ(PathToUri("s3://bucket/x"), "s3://bucket/x");
  EXPECT_FALSE(UriToPath("gs://bucket/x").ok());
  EXPECT_FALSE(UriToPath("file://host/x").ok());
  EXPECT_FALSE(UriToPath("relative/path").ok());
}

}  // namespace
}  // namespace floe::iceberg

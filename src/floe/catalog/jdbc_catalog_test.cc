// JdbcCatalog on SQLite, and (built as catalog_postgres_test with FLOE_CATALOG_TEST_POSTGRES) on
// the throwaway PostgreSQL server that CTest's fixture starts (tests/postgres/test_postgres.sh).
#include "floe/catalog/jdbc_catalog.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "floe/catalog/catalog_config.h"
#include "floe/iceberg/commit_test_util.h"
#include "floe/io/file.h"

namespace floe::catalog {
namespace {

namespace fs = std::filesystem;
using iceberg::LoadedTable;
using iceberg::TableIdentifier;
using iceberg::TableMetadata;
using iceberg::commit_testing::WithSnapshot;

#ifdef FLOE_CATALOG_TEST_POSTGRES
constexpr bool kPostgres = true;
#else
constexpr bool kPostgres = false;
#endif

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

class JdbcCatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    name_ = std::string("t") + std::to_string(::getpid()) + "_" + info->name();
    dir_ = fs::temp_directory_path() / ("floe_jdbc_" + name_);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    config_.type = CatalogConfig::Type::kJdbc;
    config_.name = name_;  // each test its own catalog in the shared database
    config_.warehouse = (dir_ / "wh").string();
    if (kPostgres) {
      const char* server = std::getenv("FLOE_TEST_POSTGRES_DIR");
      ASSERT_NE(server, nullptr)
          << "FLOE_TEST_POSTGRES_DIR is not set: run through ctest, whose fixture starts "
             "PostgreSQL (tests/postgres/test_postgres.sh)";
      config_.uri = Trim(io::ReadFile(std::string(server) + "/uri").ValueOrDie());
      config_.user = "floe";
      config_.password = Trim(io::ReadFile(std::string(server) + "/password").ValueOrDie());
    } else {
      config_.uri = "jdbc:sqlite:" + (dir_ / "catalog.db").string();
    }
    catalog_ = Open();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<iceberg::Catalog> Open() const { return OpenCatalog(config_).ValueOrDie(); }
  std::unique_ptr<SqlDatabase> Database() const {
    if (kPostgres)
      return OpenPostgres(config_.uri.substr(5), config_.user, config_.password).ValueOrDie();
    return OpenSqlite(config_.uri.substr(12)).ValueOrDie();
  }

  static iceberg::Schema TestSchema() {
    iceberg::Schema s;
    s.fields = {{"seq", DataType::Int64(), false, 1}, {"name", DataType::String(), true, 2}};
    return s;
  }
  LoadedTable Create(std::map<std::string, std::string> props = {}) {
    EXPECT_TRUE(iceberg::EnsureNamespace(*catalog_, "db").ok());
    return catalog_->CreateTable(id_, TestSchema(), iceberg::PartitionSpec{}, std::move(props))
        .ValueOrDie();
  }
  std::vector<std::string> MetadataFiles() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_ / "wh" / "db" / "t" / "metadata")) {
      out.push_back(e.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  SqlRow TableRow() const {
    auto rows = Database()
                    ->Query(
                        "SELECT catalog_name, table_namespace, table_name, metadata_location, "
                        "previous_metadata_location, iceberg_type FROM iceberg_tables WHERE "
                        "catalog_name = ?",
                        {name_})
                    .ValueOrDie();
    EXPECT_EQ(rows.size(), 1u);
    return rows.empty() ? SqlRow{} : rows[0];
  }

  std::string name_;
  fs::path dir_;
  CatalogConfig config_;
  std::unique_ptr<iceberg::Catalog> catalog_;
  TableIdentifier id_{"db", "t"};
};

TEST_F(JdbcCatalogTest, CreateWritesIcebergsRowAndFileNamesAndLoadsBack) {
  LoadedTable created = Create();
  EXPECT_EQ(created.version, 0);
  ASSERT_EQ(MetadataFiles().size(), 1u);
  EXPECT_EQ(iceberg::VersionOfMetadataFileName(MetadataFiles()[0]), 0);
  EXPECT_EQ(MetadataFiles()[0].size(), std::string("00000-").size() + 36 + 14);
  SqlRow row = TableRow();
  ASSERT_EQ(row.size(), 6u);
  EXPECT_EQ(row[0], name_);
  EXPECT_EQ(row[1], "db");
  EXPECT_EQ(row[2], "t");
  EXPECT_EQ(row[3], iceberg::PathToUri(created.metadata_location));
  EXPECT_EQ(row[4], std::nullopt);
  EXPECT_EQ(row[5], "TABLE");
  EXPECT_EQ(created.metadata.location, iceberg::PathToUri((dir_ / "wh" / "db" / "t").string()));
  LoadedTable loaded = Open()->LoadTable(id_).ValueOrDie();
  EXPECT_EQ(loaded.metadata, created.metadata);
  EXPECT_EQ(loaded.metadata_location, created.metadata_location);
}

TEST_F(JdbcCatalogTest, CommitSwapsTheRowAndLogsThePreviousFile) {
  LoadedTable base = Create();
  LoadedTable next = catalog_->CommitTable(base, WithSnapshot(base.metadata, 7)).ValueOrDie();
  EXPECT_EQ(next.version, 1);
  SqlRow row = TableRow();
  EXPECT_EQ(row[3], iceberg::PathToUri(next.metadata_location));
  EXPECT_EQ(row[4], iceberg::PathToUri(base.metadata_location));
  ASSERT_EQ(next.metadata.metadata_log.size(), 1u);
  EXPECT_EQ(next.metadata.metadata_log[0].metadata_file,
            iceberg::PathToUri(base.metadata_location));
  LoadedTable reloaded = Open()->LoadTable(id_).ValueOrDie();
  EXPECT_EQ(reloaded.metadata.current_snapshot_id, 7);
  EXPECT_EQ(reloaded.version, 1);
}

TEST_F(JdbcCatalogTest, StaleBaseIsConflictAndLeavesNoFileBehind) {
  LoadedTable base = Create();
  ASSERT_TRUE(catalog_->CommitTable(base, WithSnapshot(base.metadata, 1)).ok());
  auto other = Open();
  Result<LoadedTable> stale = other->CommitTable(base, WithSnapshot(base.metadata, 2));
  ASSERT_TRUE(stale.status().IsConflict()) << stale.status().ToString();
  EXPECT_EQ(MetadataFiles().size(), 2u);
  EXPECT_EQ(catalog_->LoadTable(id_).ValueOrDie().metadata.current_snapshot_id, 1);
}

TEST_F(JdbcCatalogTest, CreateNeedsTheNamespaceAndRefusesATakenName) {
  Result<LoadedTable> orphan =
      catalog_->CreateTable(id_, TestSchema(), iceberg::PartitionSpec{}, {});
  EXPECT_TRUE(orphan.status().IsNotFound()) << orphan.status().ToString();
  Create();
  EXPECT_TRUE(catalog_->CreateTable(id_, TestSchema(), iceberg::PartitionSpec{}, {})
                  .status()
                  .IsAlreadyExists());
  EXPECT_TRUE(catalog_->LoadTable({"db", "missing"}).status().IsNotFound());
}

TEST_F(JdbcCatalogTest, NamespacesKeepTheirPropertiesAndListWithTables) {
  ASSERT_TRUE(catalog_->CreateNamespace("sales", {{"owner", "data-eng"}}).ok());
  EXPECT_TRUE(catalog_->CreateNamespace("sales", {}).IsAlreadyExists());
  auto props = catalog_->LoadNamespace("sales").ValueOrDie();
  EXPECT_EQ(props, (std::map<std::string, std::string>{{"owner", "data-eng"}}));
  EXPECT_TRUE(catalog_->LoadNamespace("nope").status().IsNotFound());
  Create();
  EXPECT_EQ(catalog_->ListNamespaces().ValueOrDie(), (std::vector<std::string>{"db", "sales"}));
  EXPECT_EQ(catalog_->ListTables("db").ValueOrDie(), (std::vector<TableIdentifier>{id_}));
  EXPECT_TRUE(catalog_->ListTables("sales").ValueOrDie().empty());
  EXPECT_TRUE(catalog_->ListTables("nope").status().IsNotFound());
}

TEST_F(JdbcCatalogTest, DeleteAfterCommitKeepsOnlyTheLoggedVersions) {
  Create({{"write.metadata.delete-after-commit.enabled", "true"},
          {"write.metadata.previous-versions-max", "2"}});
  for (int i = 1; i <= 5; ++i) {
    LoadedTable base = catalog_->LoadTable(id_).ValueOrDie();
    ASSERT_TRUE(catalog_->CommitTable(base, WithSnapshot(base.metadata, i)).ok());
  }
  LoadedTable now = catalog_->LoadTable(id_).ValueOrDie();
  EXPECT_EQ(now.version, 5);
  EXPECT_EQ(now.metadata.metadata_log.size(), 2u);
  EXPECT_EQ(MetadataFiles().size(), 3u);  // the current file and the two logged ones
}

TEST_F(JdbcCatalogTest, ForkedProcessesThatRetryAllLandWithoutLosingCommits) {
  Create();
  constexpr int kProcs = 4, kCommitsEach = 5;
  EXPECT_EQ(iceberg::commit_testing::ForkCommitters(kProcs, kCommitsEach, id_,
                                                    [&] { return OpenCatalog(config_); }),
            0);
  LoadedTable now = Open()->LoadTable(id_).ValueOrDie();
  EXPECT_EQ(now.version, kProcs * kCommitsEach);
  EXPECT_EQ(now.metadata.snapshots.size(), static_cast<size_t>(kProcs * kCommitsEach));
  EXPECT_EQ(now.metadata.last_sequence_number, kProcs * kCommitsEach);
  // Losers removed their files: one per version, plus the created one.
  EXPECT_EQ(MetadataFiles().size(), static_cast<size_t>(kProcs * kCommitsEach + 1));
}

#ifdef FLOE_CATALOG_TEST_POSTGRES
// Instances of a scaled-out job starting together on a new database all run CREATE TABLE IF NOT
// EXISTS at once, which PostgreSQL may fail for all but one (a duplicate type or key).
TEST_F(JdbcCatalogTest, ProcessesOpeningANewDatabaseAtOnceAllCreateOrFindItsTables) {
  const std::string fresh = "floe_fresh_" + std::to_string(::getpid());
  ASSERT_TRUE(Database()->Execute("CREATE DATABASE " + fresh, {}).ok());
  CatalogConfig on_fresh = config_;
  size_t at = on_fresh.uri.find("///floe?");
  ASSERT_NE(at, std::string::npos) << on_fresh.uri;
  on_fresh.uri.replace(at, 8, "///" + fresh + "?");
  constexpr int kProcs = 8;
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  std::vector<pid_t> children;
  for (int i = 0; i < kProcs; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) {
      char byte;
      ::close(go[1]);
      if (::read(go[0], &byte, 1) != 0) ::_exit(3);  // released together when the pipe closes
      ::_exit(OpenCatalog(on_fresh).ok() ? 0 : 1);
    }
    children.push_back(pid);
  }
  ::close(go[0]);
  ::close(go[1]);
  int failed = 0;
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(failed, 0);
  EXPECT_TRUE(OpenCatalog(on_fresh).ok());
  EXPECT_TRUE(Database()->Execute("DROP DATABASE " + fresh, {}).ok());
}

TEST_F(JdbcCatalogTest, ErrorsNeverShowThePassword) {
  CatalogConfig wrong = config_;
  wrong.password = "not-the-" + config_.password;
  Result<std::unique_ptr<iceberg::Catalog>> refused = OpenCatalog(wrong);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().ToString().find(wrong.password), std::string::npos)
      << refused.status().ToString();
  EXPECT_NE(refused.status().ToString().find("password authentication failed"), std::string::npos)
      << refused.status().ToString();
  CatalogConfig in_uri = config_;
  in_uri.password.clear();
  in_uri.uri += "&password=" + wrong.password;
  refused = OpenCatalog(in_uri);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().ToString().find(wrong.password), std::string::npos)
      << refused.status().ToString();
  EXPECT_EQ(in_uri.Describe().find(wrong.password), std::string::npos) << in_uri.Describe();
}
#else

// Needs a database of its own, which SQLite gives each test.
TEST_F(JdbcCatalogTest, ADatabaseWithIcebergsFirstSchemaIsUsedAsItIs) {
  config_.uri = "jdbc:sqlite:" + (dir_ / "v0.db").string();
  ASSERT_TRUE(OpenSqlite((dir_ / "v0.db").string())
                  .ValueOrDie()
                  ->Execute("CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, "
                            "table_namespace VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT "
                            "NULL, metadata_location VARCHAR(1000), previous_metadata_location "
                            "VARCHAR(1000), PRIMARY KEY (catalog_name, table_namespace, "
                            "table_name))",
                            {})
                  .ok());
  catalog_ = Open();
  LoadedTable base = Create();
  ASSERT_TRUE(catalog_->CommitTable(base, WithSnapshot(base.metadata, 3)).ok());
  EXPECT_EQ(Open()->LoadTable(id_).ValueOrDie().metadata.current_snapshot_id, 3);
}
#endif

}  // namespace
}  // namespace floe::catalog

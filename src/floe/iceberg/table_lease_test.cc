#include "floe/iceberg/table_lease.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "floe/iceberg/commit_internal.h"
#include "floe/iceberg/data_test_util.h"
#include "floe/iceberg/rewrite.h"
#include "floe/io/file.h"

namespace floe::iceberg {
namespace {

using testing::TableHarness;
using testing::TempDir;

Schema OneColumn() {
  Schema s;
  s.fields = {Field{"id", DataType::Int64(), false, 1}};
  return s;
}

struct LeaseFixture {
  TempDir tmp;
  std::unique_ptr<TableHarness> h;
  TableMetadata md;
  std::string location;

  LeaseFixture() {
    auto made = TableHarness::Make(tmp.path(), "db", "t", OneColumn(), "", {});
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    h = std::move(made).value();
    md = h->Load().value();
    location = UriToPath(md.location).value();
  }
  // A file in the table's data dir, `age` old.
  std::string File(const std::string& name, std::chrono::hours age = std::chrono::hours(0)) {
    const std::string p = location + "/data/" + name;
    EXPECT_TRUE(io::CreateDirs(location + "/data").ok());
    EXPECT_TRUE(io::WriteFileExclusive(p, "bytes").ok());
    std::filesystem::last_write_time(p, std::filesystem::file_time_type::clock::now() - age);
    return p;
  }
  Result<OrphanResult> SweepEverything() {
    OrphanOptions all;
    all.older_than_ms = internal::NowMs() + 1000;  // --older-than 0s, and then some
    return RemoveOrphanFiles(h->catalog(), h->id(), all);
  }
};

// A job's writer claims "since" before it opens a file and its committer names the staged
// files: a sweep with no interval at all deletes neither, nor the lease itself, and deletes
// them once the claims are released and the lease is gone. Failed before table leases: both
// files were deleted.
TEST(TableLease, SweepWithoutIntervalSkipsWhatALiveLeaseClaims) {
  LeaseFixture f;
  const std::string staged = f.File("staged.parquet", std::chrono::hours(100));
  const std::string stray = f.File("stray.parquet", std::chrono::hours(100));
  auto lease = std::make_unique<TableLease>("job-writer");
  FLOE_ASSERT_OK(lease->Open(io::FileIO(), f.md));
  FLOE_ASSERT_OK(lease->Claim("committer", LeaseClaim{std::nullopt, {PathToUri(staged)}}));
  FLOE_ASSERT_OK(lease->Claim("writer-0", LeaseClaim{internal::NowMs(), {}}));
  const std::string open = f.File("open.parquet");  // written after the claim

  FLOE_ASSERT_OK_AND_ASSIGN(OrphanResult r, f.SweepEverything());
  EXPECT_EQ(r.orphans, std::vector<std::string>{stray});
  EXPECT_EQ(r.kept_leased, 3);  // staged, open, the lease file
  EXPECT_TRUE(io::Exists(staged));
  EXPECT_TRUE(io::Exists(open));
  EXPECT_TRUE(io::Exists(lease->path()));

  lease.reset();  // the job ended: its lease is removed
  FLOE_ASSERT_OK_AND_ASSIGN(OrphanResult after, f.SweepEverything());
  EXPECT_EQ(after.kept_leased, 0);
  EXPECT_FALSE(io::Exists(staged));
  EXPECT_FALSE(io::Exists(open));
}

// A killed job leaves its lease behind: once older than its ttl it covers nothing and is an
// orphan itself.
TEST(TableLease, LeaseOlderThanItsTtlIsDead) {
  LeaseFixture f;
  const std::string staged = f.File("staged.parquet", std::chrono::hours(100));
  const std::string dir = LeaseDirectory(f.location);
  FLOE_ASSERT_OK(io::CreateDirs(dir));
  const std::string lease = dir + "/killed-job.json";
  FLOE_ASSERT_OK(io::WriteFileExclusive(
      lease, R"({"format":1,"holder":"killed","ttl-ms":60000,"since-ms":0,"paths":[]})"));
  std::filesystem::last_write_time(
      lease, std::filesystem::file_time_type::clock::now() - std::chrono::minutes(2));
  FLOE_ASSERT_OK_AND_ASSIGN(OrphanResult r, f.SweepEverything());
  EXPECT_EQ(r.kept_leased, 0);
  EXPECT_FALSE(io::Exists(staged));
  EXPECT_FALSE(io::Exists(lease));
}

// A live lease that does not parse stops the sweep before anything is deleted, naming the file
// and the field.
TEST(TableLease, UnreadableLiveLeaseDeletesNothing) {
  LeaseFixture f;
  const std::string stray = f.File("stray.parquet", std::chrono::hours(100));
  const std::string dir = LeaseDirectory(f.location);
  FLOE_ASSERT_OK(io::CreateDirs(dir));
  for (const char* bad : {R"({"format":1,"holder":"x","ttl-ms":"soon","paths":[]})",
                          R"({"format":1,"holder":"x","ttl-ms":1000,"since-ms":-5})"}) {
    FLOE_ASSERT_OK(io::WriteFileReplace(dir + "/bad.json", bad));
    Result<OrphanResult> r = f.SweepEverything();
    ASSERT_FALSE(r.ok());
    const std::string& message = r.status().message();
    EXPECT_NE(message.find("bad.json"), std::string::npos) << message;
    EXPECT_TRUE(message.find("'ttl-ms'") != std::string::npos ||
                message.find("'since-ms': must not be negative") != std::string::npos)
        << message;
    EXPECT_TRUE(io::Exists(stray));
  }
}

// Claims that the file already covers are not written again; a wider one is, before Claim
// returns.
TEST(TableLease, ClaimWritesTheFileOnlyWhenItWidens) {
  LeaseFixture f;
  TableLease lease("holder/with spaces");
  FLOE_ASSERT_OK(lease.Open(io::FileIO(), f.md));
  EXPECT_NE(lease.path().find("holder_with_spaces-"), std::string::npos) << lease.path();
  FLOE_ASSERT_OK(lease.Claim("a", LeaseClaim{1000, {"file:///x/y.parquet"}}));
  FLOE_ASSERT_OK_AND_ASSIGN(std::string first, io::ReadFile(lease.path()));
  EXPECT_NE(first.find("\"since-ms\":1000"), std::string::npos) << first;
  EXPECT_NE(first.find("\"/x/y.parquet\""), std::string::npos) << first;
  FLOE_ASSERT_OK(io::RemoveFile(lease.path()));
  FLOE_ASSERT_OK(lease.Claim("b", LeaseClaim{2000, {}}));  // covered: not written
  EXPECT_FALSE(io::Exists(lease.path()));
  FLOE_ASSERT_OK(lease.Claim("c", LeaseClaim{500, {}}));  // older: written
  EXPECT_TRUE(io::Exists(lease.path()));
}

}  // namespace
}  // namespace floe::iceberg

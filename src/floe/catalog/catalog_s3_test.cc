// Catalogs whose tables live on S3 (s3rver behind the signature-checking front of tests/s3, started
// by CTest's fixture `s3rver` in FLOE_TEST_S3_DIR): each catalog keeps its own S3 settings.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "floe/catalog/catalog_config.h"
#include "floe/io/file.h"
#include "floe/io/s3_client.h"

namespace floe::catalog {
namespace {

namespace fs = std::filesystem;
using Options = std::map<std::string, std::string>;

class CatalogS3Test : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("FLOE_TEST_S3_DIR");
    ASSERT_NE(dir, nullptr) << "FLOE_TEST_S3_DIR is not set: run through ctest, whose fixture "
                               "starts s3rver (tests/s3/test_s3rver.sh)";
    endpoint_ = io::ReadFile(std::string(dir) + "/endpoint").ValueOrDie();
    while (!endpoint_.empty() && endpoint_.back() == '\n') endpoint_.pop_back();
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    bucket_ = "c" + std::to_string(::getpid()) + "-" + std::to_string(info->line());
    local_ = fs::temp_directory_path() / ("floe_catalog_s3_" + bucket_);
    fs::remove_all(local_);
    fs::create_directories(local_);
    io::S3Config s3;
    s3.endpoint = endpoint_;
    s3.access_key_id = s3.secret_access_key = "S3RVER";
    ASSERT_TRUE(io::S3Client::Make(s3).ValueOrDie()->CreateBucket(bucket_).ok());
  }
  void TearDown() override { fs::remove_all(local_); }

  // A JDBC catalog on SQLite with its warehouse at s3://<bucket>/<name>, signing with `secret`.
  std::unique_ptr<iceberg::Catalog> Open(const std::string& name, const std::string& secret) {
    Options o = {{"catalog-type", "jdbc"},
                 {"catalog-name", name},
                 {"uri", "jdbc:sqlite:" + (local_ / (name + ".db")).string()},
                 {"warehouse", "s3://" + bucket_ + "/" + name},
                 {"s3.endpoint", endpoint_},
                 {"s3.access-key-id", "S3RVER"},
                 {"s3.secret-access-key", secret}};
    return OpenCatalog(ParseCatalogOptions(o).ValueOrDie()).ValueOrDie();
  }

  static iceberg::Schema TestSchema() {
    iceberg::Schema s;
    s.fields = {{"seq", DataType::Int64(), false, 1}};
    return s;
  }
  static Status Create(iceberg::Catalog& catalog, const std::string& table) {
    FLOE_RETURN_NOT_OK(iceberg::EnsureNamespace(catalog, "db"));
    return catalog.CreateTable({"db", table}, TestSchema(), iceberg::PartitionSpec{}, {}).status();
  }

  std::string endpoint_;
  std::string bucket_;
  fs::path local_;
};

TEST_F(CatalogS3Test, TwoCatalogsUsedAlternatelyEachSignWithTheirOwnSettings) {
  auto right = Open("right", "S3RVER");
  auto wrong = Open("wrong", "not-the-secret");  // opened last: it must not become everyone's
  Status st = Create(*right, "t");
  ASSERT_TRUE(st.ok()) << st.ToString();
  st = Create(*wrong, "t");
  EXPECT_NE(st.message().find("SignatureDoesNotMatch"), std::string::npos) << st.ToString();
  Result<iceberg::LoadedTable> loaded = right->LoadTable({"db", "t"});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->metadata.location, "s3://" + bucket_ + "/right/db/t");
  // A third catalog with the right settings leaves the wrong one wrong.
  auto again = Open("again", "S3RVER");
  st = Create(*wrong, "u");
  EXPECT_NE(st.message().find("SignatureDoesNotMatch"), std::string::npos) << st.ToString();
  EXPECT_TRUE(Create(*again, "t").ok());
  EXPECT_TRUE(right->LoadTable({"db", "t"}).ok());
}

}  // namespace
}  // namespace floe::catalog

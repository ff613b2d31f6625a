// The S3 client: SigV4 against AWS's documented example, and every operation against s3rver (an
// S3 server floe did not write, which checks each request's signature), started by CTest's
// fixture `s3rver` (tests/s3/test_s3rver.sh) in FLOE_TEST_S3_DIR.
#include "floe/io/s3_client.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <cstdlib>

#include "floe/io/file.h"
#include "floe/io/file_io.h"
#include "floe/io/object_store.h"

namespace floe::io {
namespace {

TEST(SigV4, MatchesAwsDocumentedGetObjectExample) {
  S3Config c;
  c.access_key_id = "AKIAIOSFODNN7EXAMPLE";
  c.secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
  c.region = "us-east-1";
  const std::string empty = internal::Sha256Hex("");
  EXPECT_EQ(empty, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  std::string auth = internal::SigV4Authorization(c, "GET", "/test.txt", "",
                                                  {{"host", "examplebucket.s3.amazonaws.com"},
                                                   {"range", "bytes=0-9"},
                                                   {"x-amz-content-sha256", empty},
                                                   {"x-amz-date", "20130524T000000Z"}},
                                                  empty, "20130524T000000Z");
  EXPECT_EQ(auth,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(S3Uris, ParseAndEncode) {
  auto [bucket, key] = ParseS3Uri("s3://lake/wh/demo/t/data/a b.parquet").ValueOrDie();
  EXPECT_EQ(bucket, "lake");
  EXPECT_EQ(key, "wh/demo/t/data/a b.parquet");
  EXPECT_TRUE(ParseS3Uri("s3a://lake").ok());
  EXPECT_FALSE(ParseS3Uri("s3:///key").ok());
  EXPECT_FALSE(ParseS3Uri("/local/path").ok());
  EXPECT_TRUE(IsS3Uri("s3://x/y"));
  EXPECT_FALSE(IsS3Uri("file:///x"));
  EXPECT_EQ(internal::UriEncode("a b/c~d+e", true), "a%20b/c~d%2Be");
  EXPECT_EQ(internal::UriEncode("a/b", false), "a%2Fb");
}

TEST(S3Client, RefusesAMissingKeyOrABadEndpointAtMake) {
  S3Config c;
  c.endpoint = "http://127.0.0.1:1";
  Result<std::unique_ptr<S3Client>> none = S3Client::Make(c);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("s3.access-key-id"), std::string::npos);
  c.access_key_id = c.secret_access_key = "x";
  c.endpoint = "ftp://host";
  EXPECT_FALSE(S3Client::Make(c).ok());
}

TEST(S3Client, ANoAnswerIsRetriedThenUnavailable) {
  S3Config c;
  c.endpoint = "http://127.0.0.1:1";  // nothing listens on port 1
  c.access_key_id = "k";
  c.secret_access_key = "s";
  c.max_attempts = 3;
  c.timeout_seconds = 2;
  auto client = S3Client::Make(c).ValueOrDie();
  Status st = client->Put("b", "k", "x");
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("after 3 attempts"), std::string::npos) << st.ToString();
  EXPECT_EQ(client->counters().requests, 3);
  EXPECT_EQ(client->counters().retries, 2);
}

class S3ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("FLOE_TEST_S3_DIR");
    ASSERT_NE(dir, nullptr) << "FLOE_TEST_S3_DIR is not set: run through ctest, whose fixture "
                               "starts s3rver (tests/s3/test_s3rver.sh)";
    std::string endpoint = ReadFile(std::string(dir) + "/endpoint").ValueOrDie();
    while (!endpoint.empty() && endpoint.back() == '\n') endpoint.pop_back();
    config_.endpoint = endpoint;
    config_.access_key_id = "S3RVER";
    config_.secret_access_key = "S3RVER";
    config_.path_style = true;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    bucket_ = "t" + std::to_string(::getpid()) + "-" + std::to_string(info->line());
    client_ = S3Client::Make(config_).ValueOrDie();
    ASSERT_TRUE(client_->CreateBucket(bucket_).ok());
  }
  // The test front's control (tests/s3/s3rver.mjs): the next PUT of `key` lands and its answer
  // is lost; with `instead`, that body lands in its place (another writer won).
  void LoseNextAnswer(const std::string& key, const std::string& instead = "") {
    httplib::Client front(config_.endpoint);
    httplib::Result r = front.Post(
        "/_floe_test/lose-answer?path=" + internal::UriEncode("/" + bucket_ + "/" + key, false),
        instead, "application/octet-stream");
    ASSERT_TRUE(r && r->status == 204);
  }

  S3Config config_;
  std::string bucket_;
  std::unique_ptr<S3Client> client_;
};

TEST_F(S3ServerTest, AConditionalCreateWhoseAnswerWasLostIsSettledByReadingTheObjectBack) {
  LoseNextAnswer("metadata/00001-a.metadata.json");
  // The first PUT lands, its answer never comes; the retry gets 412 for our own object.
  Status st = client_->Put(bucket_, "metadata/00001-a.metadata.json", "{\"v\":1}", true);
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(client_->counters().retries, 1);
  EXPECT_EQ(client_->Get(bucket_, "metadata/00001-a.metadata.json").ValueOrDie(), "{\"v\":1}");
}

TEST_F(S3ServerTest, AConditionalCreateRetriedOntoAnotherWritersObjectIsAlreadyExists) {
  LoseNextAnswer("metadata/00001-a.metadata.json", "{\"theirs\":1}");
  Status st = client_->Put(bucket_, "metadata/00001-a.metadata.json", "{\"mine\":1}", true);
  EXPECT_TRUE(st.IsAlreadyExists()) << st.ToString();
  EXPECT_EQ(client_->Get(bucket_, "metadata/00001-a.metadata.json").ValueOrDie(), "{\"theirs\":1}");
}

TEST_F(S3ServerTest, PutGetRangeHeadListDelete) {
  ASSERT_TRUE(client_->Put(bucket_, "wh/demo/t/metadata/00001-a.metadata.json", "{\"v\":1}").ok());
  ASSERT_TRUE(client_->Put(bucket_, "wh/demo/t/data/a b+c.parquet", "0123456789").ok());
  ASSERT_TRUE(client_->Put(bucket_, "wh/other", "x").ok());
  EXPECT_EQ(client_->Get(bucket_, "wh/demo/t/metadata/00001-a.metadata.json").ValueOrDie(),
            "{\"v\":1}");
  EXPECT_EQ(client_->GetRange(bucket_, "wh/demo/t/data/a b+c.parquet", 3, 4).ValueOrDie(), "3456");
  EXPECT_EQ(client_->Head(bucket_, "wh/demo/t/data/a b+c.parquet").ValueOrDie().size, 10);
  EXPECT_TRUE(client_->Get(bucket_, "wh/missing").status().IsNotFound());
  EXPECT_TRUE(client_->Head(bucket_, "wh/missing").status().IsNotFound());
  std::vector<S3Object> listed = client_->List(bucket_, "wh/demo/").ValueOrDie();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].key, "wh/demo/t/data/a b+c.parquet");
  EXPECT_EQ(listed[0].size, 10);
  EXPECT_EQ(listed[1].key, "wh/demo/t/metadata/00001-a.metadata.json");
  ASSERT_TRUE(client_->Delete(bucket_, "wh/demo/t/data/a b+c.parquet").ok());
  EXPECT_TRUE(client_->Delete(bucket_, "wh/demo/t/data/a b+c.parquet").ok());  // gone: still OK
  EXPECT_EQ(client_->List(bucket_, "wh/demo/").ValueOrDie().size(), 1u);
  S3Counters c = client_->counters();
  EXPECT_GE(c.requests, 13);
  EXPECT_GE(c.bytes_sent, 7 + 10 + 1);
}

TEST_F(S3ServerTest, ALargeObjectGoesUpInPartsAndComesBackWhole) {
  config_.multipart_threshold = 6 << 20;
  config_.part_size = 5 << 20;
  auto client = S3Client::Make(config_).ValueOrDie();
  std::string data(12 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 7919) >> 3);
  int64_t before = client->counters().requests;
  ASSERT_TRUE(client->Put(bucket_, "big.parquet", data).ok());
  EXPECT_EQ(client->counters().requests - before, 5);  // start, 3 parts, complete
  EXPECT_EQ(client->Head(bucket_, "big.parquet").ValueOrDie().size,
            static_cast<int64_t>(data.size()));
  EXPECT_TRUE(client->Get(bucket_, "big.parquet").ValueOrDie() == data);
  EXPECT_EQ(client->GetRange(bucket_, "big.parquet", (5 << 20) - 2, 4).ValueOrDie(),
            data.substr((5 << 20) - 2, 4));
}

TEST_F(S3ServerTest, AWrongSecretIsRefusedByTheServerAndNeverPrinted) {
  config_.secret_access_key = "not-the-secret-4711";
  auto client = S3Client::Make(config_).ValueOrDie();
  Status st = client->Put(bucket_, "k", "x");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("SignatureDoesNotMatch"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("s3://" + bucket_ + "/k"), std::string::npos) << st.ToString();
  EXPECT_EQ(st.message().find("not-the-secret-4711"), std::string::npos) << st.ToString();
  EXPECT_EQ(client->counters().retries, 0);  // a 403 is not retried
}

TEST_F(S3ServerTest, AFileIOTakesS3UrisWithItsSettings) {
  FileIO file_io(config_);
  const std::string dir = "s3://" + bucket_ + "/wh/demo/t";
  ASSERT_TRUE(file_io.CreateDirs(dir + "/metadata").ok());  // nothing to create
  ASSERT_TRUE(file_io.WriteFileExclusive(dir + "/metadata/00000-a.metadata.json", "{}").ok());
  // A conditional create (If-None-Match: *) of an existing key: AlreadyExists, object unchanged.
  EXPECT_TRUE(file_io.WriteFileExclusive(dir + "/metadata/00000-a.metadata.json", "{\"x\":1}")
                  .IsAlreadyExists());
  ASSERT_TRUE(file_io.WriteFileReplace(dir + "/data/f1.parquet", "PAR1....PAR1").ok());
  ASSERT_TRUE(file_io.WriteFileReplace(dir + "/data/f2.parquet", "PAR1").ok());
  EXPECT_EQ(file_io.ReadFile(dir + "/metadata/00000-a.metadata.json").ValueOrDie(), "{}");
  EXPECT_EQ(file_io.ReadFileRange(dir + "/data/f1.parquet", 8, 4).ValueOrDie(), "PAR1");
  EXPECT_EQ(file_io.FileSize(dir + "/data/f1.parquet").ValueOrDie(), 12u);
  EXPECT_TRUE(file_io.Exists(dir + "/data/f2.parquet"));
  EXPECT_FALSE(file_io.Exists(dir + "/data/f3.parquet"));
  EXPECT_TRUE(file_io.ReadFile(dir + "/data/f3.parquet").status().IsNotFound());
  EXPECT_EQ(file_io.ListDir(dir).ValueOrDie(), (std::vector<std::string>{"data", "metadata"}));
  EXPECT_EQ(file_io.ListDir(dir + "/data").ValueOrDie(),
            (std::vector<std::string>{"f1.parquet", "f2.parquet"}));
  EXPECT_TRUE(file_io.ListDir(dir + "/nothing").status().IsNotFound());
  EXPECT_EQ(file_io.ListFilesRecursive(dir).ValueOrDie().size(), 3u);
  EXPECT_EQ(AbsolutePath(dir), dir);
  ASSERT_TRUE(file_io.RemoveFile(dir + "/data/f2.parquet").ok());
  EXPECT_FALSE(file_io.Exists(dir + "/data/f2.parquet"));
  ASSERT_TRUE(file_io.RemoveTree(dir).ok());
  EXPECT_TRUE(file_io.ListDir(dir).status().IsNotFound());
  // Counted per FileIO, its copies included.
  FileIO copy = file_io;
  EXPECT_FALSE(copy.Exists(dir + "/data/f1.parquet"));
  S3Counters counted = file_io.s3_counters();
  EXPECT_GE(counted.requests, 18);
  EXPECT_GE(counted.bytes_sent, 2 + 12 + 4);
  EXPECT_EQ(copy.s3_counters().requests, counted.requests);
}

TEST_F(S3ServerTest, TwoFileIOsUsedAlternatelyEachSignWithTheirOwnSettings) {
  FileIO right(config_);
  S3Config wrong_config = config_;
  wrong_config.secret_access_key = "not-the-secret";
  FileIO wrong(wrong_config);
  S3Config nowhere_config = config_;
  nowhere_config.endpoint = "http://127.0.0.1:1";  // nothing listens on port 1
  nowhere_config.max_attempts = 1;
  FileIO nowhere(nowhere_config);
  const std::string uri = "s3://" + bucket_ + "/k";
  for (int round = 0; round < 2; ++round) {
    std::string data = "round " + std::to_string(round);
    Status st = wrong.WriteFileReplace(uri, data);
    EXPECT_NE(st.message().find("SignatureDoesNotMatch"), std::string::npos) << st.ToString();
    EXPECT_EQ(nowhere.ReadFile(uri).status().code(), StatusCode::kUnavailable);
    ASSERT_TRUE(right.WriteFileReplace(uri, data).ok());
    EXPECT_EQ(right.ReadFile(uri).ValueOrDie(), data);
    EXPECT_FALSE(wrong.ReadFile(uri).ok());
  }
  EXPECT_EQ(wrong.s3_config()->secret_access_key, "not-the-secret");
  EXPECT_EQ(right.s3_config()->secret_access_key, "S3RVER");
}

TEST_F(S3ServerTest, AWritableFileIsUploadedBySyncOrCloseAndNeverWhenAbandoned) {
  FileIO file_io(config_);
  const std::string dir = "s3://" + bucket_ + "/files";
  {
    auto f = file_io.NewWritableFile(dir + "/synced.parquet", /*exclusive=*/true).ValueOrDie();
    ASSERT_TRUE(f->Append("PAR1").ok());
    EXPECT_FALSE(file_io.Exists(dir + "/synced.parquet"));  // nothing sent before Sync
    ASSERT_TRUE(f->Append("data").ok());
    ASSERT_TRUE(f->Sync().ok());
    EXPECT_EQ(file_io.ReadFile(dir + "/synced.parquet").ValueOrDie(), "PAR1data");
    ASSERT_TRUE(f->Append("PAR1").ok());
    ASSERT_TRUE(f->Close().ok());
    EXPECT_EQ(f->size(), 12);
  }
  EXPECT_EQ(file_io.ReadFile(dir + "/synced.parquet").ValueOrDie(), "PAR1dataPAR1");
  {
    auto f = file_io.NewWritableFile(dir + "/abandoned.parquet", false).ValueOrDie();
    ASSERT_TRUE(f->Append("x").ok());
  }
  EXPECT_FALSE(file_io.Exists(dir + "/abandoned.parquet"));
  EXPECT_FALSE(file_io.NewWritableFile("s3:///no-bucket", false).ok());
}

TEST_F(S3ServerTest, AConditionalCreateThroughAFileIOSurvivesALostAnswer) {
  FileIO file_io(config_);
  LoseNextAnswer("chk-1/_metadata");
  Status st = file_io.WriteFileExclusive("s3://" + bucket_ + "/chk-1/_metadata", "meta");
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(file_io.s3_counters().retries, 1);
  EXPECT_TRUE(
      file_io.WriteFileExclusive("s3://" + bucket_ + "/chk-1/_metadata", "meta").IsAlreadyExists());
}

TEST(FileIO, WithoutSettingsItReachesLocalFilesAndRefusesObjects) {
  FileIO local;
  const std::string dir = ::testing::TempDir() + "/floe_file_io_" + std::to_string(::getpid());
  ASSERT_TRUE(local.CreateDirs(dir).ok());
  ASSERT_TRUE(local.WriteFileExclusive(dir + "/a", "x").ok());
  EXPECT_EQ(local.ReadFile(dir + "/a").ValueOrDie(), "x");
  EXPECT_EQ(local.ListDir(dir).ValueOrDie(), std::vector<std::string>{"a"});
  ASSERT_TRUE(local.RemoveTree(dir).ok());
  Status st = local.WriteFileExclusive("s3://b/k", "x");
  EXPECT_TRUE(st.IsInvalidArgument()) << st.ToString();
  EXPECT_NE(st.message().find("no S3 settings"), std::string::npos) << st.ToString();
  EXPECT_FALSE(local.Exists("s3://b/k"));
  EXPECT_FALSE(local.s3_config().has_value());
  // file.h's functions are for local files: an object needs a FileIO's settings.
  EXPECT_TRUE(ReadFile("s3://b/k").status().IsInvalidArgument());
  EXPECT_TRUE(WritableFile::Create("s3://b/k", true).status().IsInvalidArgument());
}

TEST(FileIO, WithoutCredentialsTheErrorNamesTheObjectAndEverySetting) {
  ::unsetenv("AWS_ACCESS_KEY_ID");  // this process only
  FileIO from_environment = FileIO::FromOptions({}, kIcebergS3Options).ValueOrDie();
  Status st = from_environment.ReadFile("s3://b/k").status();
  ASSERT_TRUE(st.IsInvalidArgument()) << st.ToString();
  EXPECT_NE(st.message().find("s3://b/k"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("s3.access-key-id"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("AWS_ACCESS_KEY_ID"), std::string::npos) << st.ToString();
  // Given options are checked at once.
  EXPECT_FALSE(FileIO::FromOptions({{"s3.endpoint", "http://h:1"}}, kIcebergS3Options).ok());
  FileIO given =
      FileIO::FromOptions({{"s3.access-key", "AK"}, {"s3.secret-key", "SK"}}, kFlinkS3Options)
          .ValueOrDie();
  EXPECT_EQ(given.s3_config()->access_key_id, "AK");
}

}  // namespace
}  // namespace floe::io

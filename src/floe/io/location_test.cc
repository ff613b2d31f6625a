#include "floe/io/location.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace floe::io {
namespace {

std::string Resolve(std::string_view l) {
  Result<std::string> r = ResolveLocation(l, "execution.checkpointing.dir");
  return r.ok() ? *r : "error: " + r.status().message();
}

TEST(ResolveLocation, EveryFormOfALocalPath) {
  EXPECT_EQ(Resolve("/tmp/x/chk"), "/tmp/x/chk");
  EXPECT_EQ(Resolve("/tmp/x/chk/"), "/tmp/x/chk");
  EXPECT_EQ(Resolve("file:///tmp/x/chk"), "/tmp/x/chk");  // Flink's canonical form
  EXPECT_EQ(Resolve("file:/tmp/x/chk"), "/tmp/x/chk");    // Hadoop's
  EXPECT_EQ(Resolve("file://localhost/tmp/x/chk"), "/tmp/x/chk");
  EXPECT_EQ(Resolve("file:///tmp/a%20b"), "/tmp/a%20b");  // as Flink's Path: no decoding
  EXPECT_EQ(Resolve("file:///tmp/x/../y/./z"), "/tmp/y/z");
  std::string cwd = std::filesystem::current_path().string();
  EXPECT_EQ(Resolve("rel/dir"), cwd + "/rel/dir");
  EXPECT_EQ(Resolve("./rel"), cwd + "/rel");
  // A colon after a slash is part of a path, not a scheme.
  EXPECT_EQ(Resolve("/tmp/a:b"), "/tmp/a:b");
  EXPECT_EQ(Resolve("./a:b"), cwd + "/a:b");
}

TEST(ResolveLocation, S3UrisAreKept) {
  EXPECT_EQ(Resolve("s3://bucket/key/dir"), "s3://bucket/key/dir");
  EXPECT_EQ(Resolve("s3://bucket/key/dir/"), "s3://bucket/key/dir");
  EXPECT_NE(Resolve("s3:///nobucket").rfind("error: ", 0), std::string::npos);
}

TEST(ResolveLocation, RefusalsNameTheOptionAndTheRule) {
  for (const char* bad :
       {"hdfs://nn/x", "gs://b/k", "file://otherhost/x", "file:relative", "file://", ""}) {
    std::string r = Resolve(bad);
    EXPECT_EQ(r.rfind("error: execution.checkpointing.dir", 0), 0u) << bad << " -> " << r;
  }
  EXPECT_NE(Resolve("hdfs://nn/x").find("not 'hdfs:'"), std::string::npos);
  EXPECT_NE(Resolve("file://otherhost/x").find("three slashes"), std::string::npos);
}

}  // namespace
}  // namespace floe::io

#include "floe/io/file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

namespace floe::io {
namespace {

std::string TempDir() {
  std::string d = ::testing::TempDir() + "floe_io_" + std::to_string(::getpid());
  EXPECT_TRUE(CreateDirs(d).ok());
  return d;
}

TEST(WriteFileExclusive, SecondWriterGetsAlreadyExists) {
  std::string p = JoinPath(TempDir(), "v1.json");
  (void)RemoveFile(p);
  ASSERT_TRUE(WriteFileExclusive(p, "first").ok());
  Status st = WriteFileExclusive(p, "second");
  EXPECT_TRUE(st.IsAlreadyExists()) << st.ToString();
  EXPECT_EQ(*ReadFile(p), "first");
}

TEST(WriteFileExclusive, ExactlyOneOfManyConcurrentWritersWins) {
  std::string p = JoinPath(TempDir(), "race.json");
  (void)RemoveFile(p);
  std::vector<std::thread> threads;
  std::atomic<int> wins{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      if (WriteFileExclusive(p, "writer" + std::to_string(i)).ok()) ++wins;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wins.load(), 1);
  auto names = ListDir(DirName(p));
  ASSERT_TRUE(names.ok());
  for (const auto& n : *names) EXPECT_EQ(n.find(".tmp-"), std::string::npos) << n;
}

TEST(ReadFileRange, ShortFileIsCorruption) {
  std::string p = JoinPath(TempDir(), "short.bin");
  ASSERT_TRUE(WriteFileReplace(p, "abc").ok());
  EXPECT_EQ(*ReadFileRange(p, 1, 2), "bc");
  EXPECT_TRUE(ReadFileRange(p, 1, 5).status().IsCorruption());
}

TEST(ReadFile, MissingFileIsNotFound) {
  EXPECT_TRUE(ReadFile("/nonexistent/floe/file").status().IsNotFound());
}

TEST(WritableFile, LargeAppendsArriveInOrder) {
  std::string p = JoinPath(TempDir(), "big.bin");
  auto f = WritableFile::Create(p, false);
  ASSERT_TRUE(f.ok());
  std::string a(3 << 20, 'a'), b(100, 'b');
  ASSERT_TRUE((*f)->Append(b).ok());
  ASSERT_TRUE((*f)->Append(a).ok());
  ASSERT_TRUE((*f)->Append(b).ok());
  ASSERT_TRUE((*f)->Sync().ok());
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ(*ReadFile(p), b + a + b);
}

}  // namespace
}  // namespace floe::io

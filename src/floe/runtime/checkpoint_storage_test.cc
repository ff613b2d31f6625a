#include "floe/runtime/checkpoint_storage.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "floe/io/file.h"
#include "floe/runtime/test_util.h"

namespace floe::runtime {
namespace {

using testing::TempDir;

std::unique_ptr<CheckpointStorage> MakeStorage(const std::string& dir, int retained = 1) {
  CheckpointStorage::Options o;
  o.checkpoint_dir = dir;
  o.num_retained = retained;
  o.job_id = "0123456789abcdef";
  auto s = CheckpointStorage::Make(o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).ValueOrDie();
}

// Writes a complete checkpoint with two tasks.
CheckpointLocation WriteCheckpoint(const CheckpointStorage& s, uint64_t id, bool savepoint = false,
                                   bool finalize = true) {
  auto loc = s.InitCheckpoint(CheckpointId(id), savepoint);
  EXPECT_TRUE(loc.ok()) << loc.status().ToString();
  std::vector<TaskStateHandle> handles;
  for (std::string task : {"src/0", "sink/0"}) {
    auto h = CheckpointStorage::WriteTaskState(io::FileIO(), *loc, task,
                                               task + "@" + std::to_string(id));
    EXPECT_TRUE(h.ok()) << h.status().ToString();
    handles.push_back(*h);
  }
  if (finalize) {
    EXPECT_TRUE(s.Finalize(*loc, handles, 1234).ok());
    if (!savepoint) {
      EXPECT_TRUE(s.ApplyRetention().ok());
    }
  }
  return *loc;
}

TEST(CheckpointStorage, RoundTripsACheckpoint) {
  TempDir tmp;
  auto s = MakeStorage(tmp.path());
  WriteCheckpoint(*s, 7);
  EXPECT_EQ(*s->LatestCompleted(), CheckpointId(7));
  auto c = s->Load(CheckpointId(7));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->id, CheckpointId(7));
  EXPECT_FALSE(c->is_savepoint);
  EXPECT_EQ(c->job_id, "0123456789abcdef");
  EXPECT_EQ(c->timestamp_millis, 1234);
  EXPECT_EQ(c->task_states.at("src/0"), "src/0@7");
  EXPECT_EQ(c->task_states.at("sink/0"), "sink/0@7");
  EXPECT_TRUE(io::Exists(tmp.path() + "/chk-7/_metadata"));
}

TEST(CheckpointStorage, DirectoryWithoutMetadataIsNotACheckpoint) {
  TempDir tmp;
  auto s = MakeStorage(tmp.path(), 5);
  WriteCheckpoint(*s, 1);
  WriteCheckpoint(*s, 2, false, /*finalize=*/false);  // crashed before _metadata
  EXPECT_EQ(*s->LatestCompleted(), CheckpointId(1));
  EXPECT_EQ(*s->ListCompleted(), std::vector<CheckpointId>{CheckpointId(1)});
  auto c = s->Load(CheckpointId(2));
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(c.status().IsNotFound()) << c.status().ToString();
  // New ids must still start above the leftover directory.
  EXPECT_EQ(*s->HighestIdOnDisk(), CheckpointId(2));
}

// Reviewer finding: C4 -> savepoint 5 -> killed -> failover from C4 took id 5 again (for
// other positions), so restoring savepoint 5 later met a table that "already had" 5. The
// savepoint's id is recorded when it is initiated, and counts even after the savepoint was
// moved or deleted (`floe stop --savepoint DIR`).
TEST(CheckpointStorage, SavepointIdsCountInTheIdFloorWhereverTheSavepointWent) {
  TempDir tmp;
  auto s = MakeStorage(tmp.path() + "/chk");
  WriteCheckpoint(*s, 4);
  EXPECT_EQ(*s->HighestSavepointId(), CheckpointId());
  CheckpointLocation sp = WriteCheckpoint(*s, 5, /*savepoint=*/true);
  EXPECT_EQ(*s->HighestIdOnDisk(), CheckpointId(5));
  std::error_code ec;
  std::filesystem::remove_all(sp.dir, ec);  // moved elsewhere
  ASSERT_FALSE(ec);
  auto again = MakeStorage(tmp.path() + "/chk");  // the restarted run
  EXPECT_EQ(*again->LatestCompleted(), CheckpointId(4));
  EXPECT_EQ(*again->HighestSavepointId(), CheckpointId(5));
  EXPECT_EQ(*again->HighestIdOnDisk(), CheckpointId(5));
  // A later checkpoint above it, and a lower savepoint id never lowers the record.
  WriteCheckpoint(*again, 6);
  EXPECT_EQ(*again->HighestIdOnDisk(), CheckpointId(6));
  ASSERT_TRUE(io::WriteFileReplace(tmp.path() + "/chk/_savepoint_ids", "x7\n").ok());
  auto bad = again->HighestIdOnDisk();
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsCorruption()) << bad.status().ToString();
  EXPECT_NE(bad.status().message().find("_savepoint_ids"), std::string::npos);
}

TEST(CheckpointStorage, CorruptStateFileIsCorruption) {
  TempDir tmp;
  auto s = MakeStorage(tmp.path());
  CheckpointLocation loc = WriteCheckpoint(*s, 3);
  auto names = io::ListDir(loc.dir);
  ASSERT_TRUE(names.ok());
  for (const auto& n : *names) {
    if (n.find("src_0") == 0) {
      ASSERT_TRUE(io::WriteFileReplace(loc.dir + "/" + n, "src/0@X").ok());  // same size
    }
  }
  auto c = s->Load(CheckpointId(3));
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(c.status().IsCorruption()) << c.status().ToString();
}

TEST(CheckpointStorage, MissingStateFileIsCorruption) {
  TempDir tmp;
  auto s = MakeStorage(tmp.path());
  CheckpointLocation loc = WriteCheckpoint(*s, 3);
  auto names = io::ListDir(loc.dir);
  ASSERT_TRUE(names.ok());
  for (const auto& n : *names) {
    if (n != "_metadata") {
      ASSERT_TRUE(io::RemoveFile(loc.dir + "/" + n).ok());
    }
  }
  EXPECT_TRUE(s->Load(CheckpointId(3)).status().IsCorruption());
}

TEST(CheckpointStorage, CorruptMetadataIsCorruption) {
  TempDir tmp;
  auto s = MakeStorage(tmp.path());
  CheckpointLocation loc = WriteCheckpoint(*s, 4);
  std::string meta = loc.dir + "/_metadata";
  std::string data = *io::ReadFile(meta);
  data[data.size() / 2] ^= 0x40;
  ASSERT_TRUE(io::WriteFileReplace(meta, data).ok());
  EXPECT_TRUE(s->Load(CheckpointId(4)).status().IsCorruption());
  ASSERT_TRUE(io::WriteFileReplace(meta, data.substr(0, 5)).ok());
  EXPECT_TRUE(s->Load(CheckpointId(4)).status().IsCorruption());
}

TEST(CheckpointStorage, FinalizeIsExclusive) {
  TempDir tmp;
  auto s = MakeStorage(tmp.path());
  CheckpointLocation loc = WriteCheckpoint(*s, 5);
  EXPECT_TRUE(s->Finalize(loc, {}, 0).IsAlreadyExists());
  EXPECT_EQ(s->Discard(loc).code(), StatusCode::kInternal);  // never discards a completed one
}

TEST(CheckpointStorage, RetainsTheNewestAndNeverDeletesSavepoints) {
  TempDir tmp;
  auto s = MakeStorage(tmp.path(), 2);
  WriteCheckpoint(*s, 1);
  CheckpointLocation sp = WriteCheckpoint(*s, 2, /*savepoint=*/true);
  WriteCheckpoint(*s, 3, false, /*finalize=*/false);  // aborted
  WriteCheckpoint(*s, 4);
  WriteCheckpoint(*s, 5);
  EXPECT_EQ(*s->ListCompleted(), (std::vector<CheckpointId>{CheckpointId(4), CheckpointId(5)}));
  EXPECT_FALSE(io::Exists(tmp.path() + "/chk-1"));
  EXPECT_FALSE(io::Exists(tmp.path() + "/chk-3"));  // aborted leftover below the latest
  // The savepoint is self-contained and stays.
  EXPECT_EQ(sp.dir.find(tmp.path() + "/savepoints/savepoint-012345-"), 0u) << sp.dir;
  auto loaded = CheckpointStorage::LoadPath(io::FileIO(), sp.dir);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(loaded->is_savepoint);
  EXPECT_EQ(loaded->id, CheckpointId(2));
  EXPECT_EQ(loaded->task_states.at("sink/0"), "sink/0@2");
  EXPECT_TRUE(CheckpointStorage::LoadPath(io::FileIO(), sp.dir + "/_metadata").ok());
}

TEST(CheckpointStorage, DiscardAllCheckpointsKeepsSavepoints) {
  TempDir tmp;
  auto s = MakeStorage(tmp.path(), 3);
  WriteCheckpoint(*s, 1);
  CheckpointLocation sp = WriteCheckpoint(*s, 2, true);
  WriteCheckpoint(*s, 3);
  ASSERT_TRUE(s->DiscardAllCheckpoints().ok());
  EXPECT_TRUE(s->ListCompleted()->empty());
  EXPECT_TRUE(CheckpointStorage::LoadPath(io::FileIO(), sp.dir).ok());
}

TEST(CheckpointStorage, TaskNamesMapToDistinctSafeFiles) {
  TempDir tmp;
  auto s = MakeStorage(tmp.path());
  auto loc = s->InitCheckpoint(CheckpointId(1), false);
  ASSERT_TRUE(loc.ok());
  auto a = CheckpointStorage::WriteTaskState(io::FileIO(), *loc, "a b/0", "1");
  auto b = CheckpointStorage::WriteTaskState(io::FileIO(), *loc, "a_b/0", "2");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->file, b->file);
  EXPECT_EQ(a->file.find('/'), std::string::npos);
  ASSERT_TRUE(s->Finalize(*loc, {*a, *b}, 0).ok());
  auto c = s->Load(CheckpointId(1));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->task_states.at("a b/0"), "1");
  EXPECT_EQ(c->task_states.at("a_b/0"), "2");
}

}  // namespace
}  // namespace floe::runtime

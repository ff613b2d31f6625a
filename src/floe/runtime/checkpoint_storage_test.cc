#include "floe/runtime/checkpoint_storage.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "floe/io/file.h"
#include "floe/io/file_io.h"
#include "floe/runtime/task_state.h"
#include "floe/runtime/test_util.h"

namespace floe::runtime {
namespace {

using testing::TempDir;

// The tests of shared files run twice: here on a local directory, and in runtime_s3_test
// (FLOE_RUNTIME_TEST_S3) on s3://floe-test/<unique>/ of the s3rver CTest's fixture `s3rver`
// starts (tests/s3/test_s3rver.sh), whose front honours conditional creates as AWS does.
#ifdef FLOE_RUNTIME_TEST_S3
io::FileIO TestIo() {
  static const io::FileIO file_io = [] {
    const char* dir = std::getenv("FLOE_TEST_S3_DIR");
    if (dir == nullptr) {
      ADD_FAILURE() << "FLOE_TEST_S3_DIR is not set: run through ctest, whose fixture starts "
                       "s3rver (tests/s3/test_s3rver.sh)";
      return io::FileIO();
    }
    io::S3Config s3;
    s3.endpoint = io::ReadFile(std::string(dir) + "/endpoint").ValueOrDie();
    while (!s3.endpoint.empty() && s3.endpoint.back() == '\n') s3.endpoint.pop_back();
    s3.access_key_id = s3.secret_access_key = "S3RVER";
    return io::FileIO(s3);
  }();
  return file_io;
}
std::string TestRoot(const TempDir& tmp) {
  return "s3://floe-test/runtime-" + std::to_string(::getpid()) + "-" +
         std::filesystem::path(tmp.path()).filename().string();
}
#else
io::FileIO TestIo() { return io::FileIO(); }
std::string TestRoot(const TempDir& tmp) { return tmp.path(); }
#endif

// A directory (local) or prefix (S3) with something in it.
bool HasFiles(const std::string& dir) { return TestIo().ListDir(dir).ok(); }

std::unique_ptr<CheckpointStorage> MakeStorage(const std::string& dir, int retained = 1) {
  CheckpointStorage::Options o;
  o.checkpoint_dir = dir;
  o.num_retained = retained;
  o.job_id = "0123456789abcdef";
  o.file_io = TestIo();
  auto s = CheckpointStorage::Make(o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).ValueOrDie();
}

#ifndef FLOE_RUNTIME_TEST_S3
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

// A keyed job scaled out by Kafka partition: its table names checkpoints (one keyed task's state
// per partition), which retention and a cancellation's cleanup keep whatever their age.
TEST(CheckpointStorage, PinnedCheckpointsOutliveRetentionAndCancellation) {
  TempDir tmp;
  auto pins = std::make_shared<CheckpointPins>();
  CheckpointStorage::Options o;
  o.checkpoint_dir = tmp.path();
  o.num_retained = 1;
  o.job_id = "0123456789abcdef";
  o.pins = pins;
  auto s = CheckpointStorage::Make(o).ValueOrDie();
  auto ids = [&] {
    std::vector<uint64_t> out;
    Result<std::vector<CheckpointId>> done = s->ListCompleted();
    EXPECT_TRUE(done.ok()) << done.status().ToString();
    if (!done.ok()) return out;
    for (CheckpointId id : *done) out.push_back(id.value);
    return out;
  };
  WriteCheckpoint(*s, 1);
  WriteCheckpoint(*s, 2);
  EXPECT_EQ(ids(), (std::vector<uint64_t>{1, 2})) << "nothing deleted before the table was read";
  pins->Settle(CheckpointId(0), {CheckpointId(1)});
  pins->Pin(CheckpointId(3));
  WriteCheckpoint(*s, 3);
  WriteCheckpoint(*s, 4);
  EXPECT_EQ(ids(), (std::vector<uint64_t>{1, 3, 4})) << "named and in flight kept, 2 deleted";
  pins->Settle(CheckpointId(3), {CheckpointId(3)});  // 3's commit named it in place of 1
  WriteCheckpoint(*s, 5);
  EXPECT_EQ(ids(), (std::vector<uint64_t>{3, 5}));
  ASSERT_TRUE(s->DiscardAllCheckpoints().ok());
  EXPECT_EQ(ids(), (std::vector<uint64_t>{3}));
}

// The state a pointer names is the keyed part of one task's state file.
TEST(CheckpointStorage, AClaimStatePointerReadsOneKeyedTasksState) {
  TempDir tmp;
  auto s = MakeStorage(tmp.path());
  auto loc = s->InitCheckpoint(CheckpointId(9), false).ValueOrDie();
  StateWriter file;
  BeginKeyedTaskState("operator's own", KeyGroupRange{0, 128}, file);
  file.PutString("the keyed state");
  std::vector<TaskStateHandle> handles = {
      *CheckpointStorage::WriteTaskState(io::FileIO(), loc, "window/0", file.Finish()),
      *CheckpointStorage::WriteTaskState(io::FileIO(), loc, "sink/0", "plain")};
  ASSERT_TRUE(s->Finalize(loc, handles, 1).ok());
  const std::string pointer = ClaimStatePointer(tmp.path(), CheckpointId(9), "window/0");
  EXPECT_EQ(pointer, s->CheckpointDir(CheckpointId(9)) + "#window/0");
  EXPECT_EQ(ClaimStateCheckpointOf(pointer, tmp.path()), CheckpointId(9));
  EXPECT_EQ(ClaimStateCheckpointOf(pointer, tmp.path() + "-other"), std::nullopt);
  EXPECT_EQ(ClaimStateCheckpointOf(tmp.path() + "/chk-x#window/0", tmp.path()), std::nullopt);
  Result<std::string> keyed = ReadClaimState(io::FileIO(), pointer);
  ASSERT_TRUE(keyed.ok()) << keyed.status().ToString();
  StateReader r(*keyed);
  EXPECT_EQ(*r.GetString(), "the keyed state");
  Status st = ReadClaimState(io::FileIO(), tmp.path() + "/chk-9#count/0").status();
  EXPECT_TRUE(st.IsNotFound()) << st.ToString();
  EXPECT_NE(st.message().find("has no state of task 'count/0'"), std::string::npos);
  st = ReadClaimState(io::FileIO(), tmp.path() + "/chk-8#window/0").status();
  EXPECT_NE(st.message().find("the partition's state '" + tmp.path() + "/chk-8#window/0'"),
            std::string::npos)
      << st.ToString();
  EXPECT_TRUE(
      ReadClaimState(io::FileIO(), tmp.path() + "/chk-9#sink/0").status().IsInvalidArgument());
  EXPECT_TRUE(ReadClaimState(io::FileIO(), "no-task").status().IsInvalidArgument());
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

#endif  // FLOE_RUNTIME_TEST_S3

// Shared files of incremental checkpoints (CheckpointSharedStateStore), their listing in
// `_metadata` and their retention.

std::string LocalFile(const TempDir& tmp, const std::string& name, const std::string& data) {
  std::string path = tmp.path() + "/local-" + name;
  EXPECT_TRUE(io::WriteFileReplace(path, data).ok());
  return path;
}

SharedStateFile UploadBytes(const CheckpointStorage& s, const TempDir& tmp, const std::string& name,
                            const std::string& data) {
  auto f = s.shared_state()->Upload(LocalFile(tmp, name, data), name);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? *f : SharedStateFile{};
}

// A checkpoint whose one task lists `shared`, after it was started with `loc`.
Status FinishCheckpoint(const CheckpointStorage& s, const CheckpointLocation& loc,
                        const std::vector<SharedStateFile>& shared, bool retention = true) {
  FLOE_ASSIGN_OR_RAISE(TaskStateHandle h, CheckpointStorage::WriteTaskState(
                                              TestIo(), loc, "rocks/0", "handle", shared));
  FLOE_RETURN_NOT_OK(s.Finalize(loc, {h}, 1234));
  return retention ? s.ApplyRetention() : Status::OK();
}

// Starts checkpoint `id`, uploads a file for each new name (content: the name), completes it
// listing `names` (old ones by what was uploaded before) and applies retention.
void SharedCheckpoint(const CheckpointStorage& s, const TempDir& tmp, uint64_t id,
                      const std::vector<std::string>& names, bool retention = true) {
  auto loc = s.InitCheckpoint(CheckpointId(id), false);
  ASSERT_TRUE(loc.ok()) << loc.status().ToString();
  std::vector<SharedStateFile> files;
  for (const std::string& n : names) {
    if (TestIo().Exists(s.shared_state()->PathOf(n))) {
      files.push_back({n, n.size(), Crc32(n)});
    } else {
      files.push_back(UploadBytes(s, tmp, n, n));
    }
  }
  Status st = FinishCheckpoint(s, *loc, files, retention);
  ASSERT_TRUE(st.ok()) << st.ToString();
}

std::vector<std::string> SharedNames(const std::string& checkpoint_dir) {
  auto names = TestIo().ListDir(checkpoint_dir + "/shared");
  return names.ok() ? *names : std::vector<std::string>{};
}

using Names = std::vector<std::string>;

TEST(CheckpointSharedStateStore, UploadsAndDownloadsAFileOfSeveralChunks) {
  TempDir tmp;
  const std::string root = TestRoot(tmp);
  auto s = MakeStorage(root + "/job");
  std::string data(8 * 1024 * 1024 + 4097, 'x');  // crosses the 8 MiB copy chunk
  for (size_t i = 0; i < data.size(); i += 4093) data[i] = static_cast<char>(i * 31);
  auto up = s->shared_state()->Upload(LocalFile(tmp, "big", data), "000042.sst");
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  EXPECT_EQ(*up, (SharedStateFile{"000042.sst", data.size(), Crc32(data)}));
  EXPECT_EQ(*TestIo().ReadFile(root + "/job/shared/000042.sst"), data);
  EXPECT_EQ(SharedNames(root + "/job"), Names{"000042.sst"});  // no temp file left
  const std::string back = tmp.path() + "/restored.sst";
  Status down = s->shared_state()->Download(*up, back);
  ASSERT_TRUE(down.ok()) << down.ToString();
  EXPECT_EQ(*io::ReadFile(back), data);
  // A retried upload of the same bytes is done; other bytes under that name are refused.
  auto again = s->shared_state()->Upload(LocalFile(tmp, "big", data), "000042.sst");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, *up);
  auto other = s->shared_state()->Upload(LocalFile(tmp, "other", "other"), "000042.sst");
  EXPECT_TRUE(other.status().IsAlreadyExists()) << other.status().ToString();
  EXPECT_EQ(*TestIo().ReadFile(root + "/job/shared/000042.sst"), data);
}

// Asynchronous snapshot threads upload at once, one name possibly twice (a retried part), while
// the coordinator's retention runs: every upload succeeds and every file stays.
TEST(CheckpointSharedStateStore, ConcurrentUploadsBesideRetentionAllSucceedAndStay) {
  TempDir tmp;
  const std::string root = TestRoot(tmp);
  auto s = MakeStorage(root + "/job");
  SharedCheckpoint(*s, tmp, 1, {"first"});
  ASSERT_TRUE(s->InitCheckpoint(CheckpointId(2), false).ok());
  const std::string same = LocalFile(tmp, "same", "the same bytes");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    const std::string mine = LocalFile(tmp, "t" + std::to_string(t), std::string(1000 + t, 't'));
    threads.emplace_back([&, t, mine] {
      for (int i = 0; i < 5; ++i) {
        const std::string name = "t" + std::to_string(t) + "-" + std::to_string(i) + ".sst";
        auto own = s->shared_state()->Upload(mine, name);
        EXPECT_TRUE(own.ok()) << own.status().ToString();
        auto shared = s->shared_state()->Upload(same, "same.sst");
        EXPECT_TRUE(shared.ok()) << shared.status().ToString();
      }
    });
  }
  std::atomic<bool> done{false};
  std::thread retention([&] {
    while (!done) {
      Status st = s->ApplyRetention();
      EXPECT_TRUE(st.ok()) << st.ToString();
    }
  });
  for (std::thread& t : threads) t.join();
  done = true;
  retention.join();
  ASSERT_TRUE(s->ApplyRetention().ok());
  EXPECT_EQ(SharedNames(root + "/job").size(), 1u + 4 * 5 + 1);  // first, t*-*, same
}

TEST(CheckpointSharedStateStore, RefusesNamesThatAreNotPlainFileNames) {
  TempDir tmp;
  const std::string root = TestRoot(tmp);
  auto s = MakeStorage(root + "/job");
  const std::string local = LocalFile(tmp, "f", "data");
  for (std::string bad : {std::string(""), std::string("."), std::string(".."),
                          std::string("../escape"), std::string("a/b"), std::string("a\\b"),
                          std::string(".tmp-x"), std::string("nul\0x", 5), std::string(201, 'n')}) {
    auto up = s->shared_state()->Upload(local, bad);
    EXPECT_EQ(up.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(s->shared_state()->Download({bad, 4, Crc32("data")}, tmp.path() + "/x").code(),
              StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_TRUE(s->shared_state()->Upload(local, std::string(200, 'n')).ok());
  EXPECT_FALSE(TestIo().Exists(root + "/job/escape"));
}

TEST(CheckpointSharedStateStore, DownloadChecksSizeAndCrcAndNamesAMissingFile) {
  TempDir tmp;
  const std::string root = TestRoot(tmp);
  auto s = MakeStorage(root + "/job");
  SharedStateFile f = UploadBytes(*s, tmp, "a.sst", "0123456789");
  const std::string path = root + "/job/shared/a.sst";
  ASSERT_TRUE(TestIo().WriteFileReplace(path, "0123456780").ok());  // same size, other bytes
  Status st = s->shared_state()->Download(f, tmp.path() + "/out");
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_NE(st.message().find("CRC-32"), std::string::npos) << st.ToString();
  EXPECT_FALSE(io::Exists(tmp.path() + "/out"));  // no half-checked copy left behind
  ASSERT_TRUE(TestIo().WriteFileReplace(path, "012345678").ok());
  st = s->shared_state()->Download(f, tmp.path() + "/out");
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  ASSERT_TRUE(TestIo().RemoveFile(path).ok());
  st = s->shared_state()->Download(f, tmp.path() + "/out");
  EXPECT_TRUE(st.IsNotFound()) << st.ToString();
  EXPECT_NE(st.message().find(path), std::string::npos) << st.ToString();
}

TEST(CheckpointStorage, LoadListsSharedFilesAndNamesAMissingOneWithTheCheckpoint) {
  TempDir tmp;
  const std::string root = TestRoot(tmp);
  auto s = MakeStorage(root + "/job");
  SharedCheckpoint(*s, tmp, 7, {"abc.sst", "def.sst"});
  auto c = s->Load(CheckpointId(7));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->task_shared.at("rocks/0"),
            (std::vector<SharedStateFile>{{"abc.sst", 7, Crc32("abc.sst")},
                                          {"def.sst", 7, Crc32("def.sst")}}));
  EXPECT_EQ(c->shared_dir, root + "/job/shared");
  ASSERT_TRUE(TestIo().WriteFileReplace(root + "/job/shared/def.sst", "longer!!").ok());
  Status st = s->Load(CheckpointId(7)).status();
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_NE(st.message().find("checkpoint 7 needs shared/def.sst"), std::string::npos);
  ASSERT_TRUE(TestIo().RemoveFile(root + "/job/shared/abc.sst").ok());
  st = CheckpointStorage::LoadPath(TestIo(), root + "/job/chk-7").status();
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_NE(st.message().find("checkpoint 7 needs shared/abc.sst (task 'rocks/0'), which is "
                              "missing"),
            std::string::npos)
      << st.ToString();
}

TEST(CheckpointStorage, SavepointsNeverListSharedFiles) {
  TempDir tmp;
  const std::string root = TestRoot(tmp);
  auto s = MakeStorage(root + "/job");
  auto sp = s->InitCheckpoint(CheckpointId(3), /*is_savepoint=*/true);
  ASSERT_TRUE(sp.ok());
  SharedStateFile f = UploadBytes(*s, tmp, "a.sst", "a");
  Status st = FinishCheckpoint(*s, *sp, {f}, /*retention=*/false);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_FALSE(TestIo().Exists(sp->dir + "/_metadata"));
  // One written by something else does not load either.
  TaskStateHandle h{"rocks/0", "x.state", 1, Crc32("x"), {f}};
  CompletedCheckpoint header;
  header.id = CheckpointId(3);
  header.is_savepoint = true;
  ASSERT_TRUE(TestIo().WriteFileReplace(sp->dir + "/x.state", "x").ok());
  ASSERT_TRUE(TestIo()
                  .WriteFileReplace(sp->dir + "/_metadata", EncodeCheckpointMetadata(header, {h}))
                  .ok());
  st = CheckpointStorage::LoadPath(TestIo(), sp->dir).status();
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_NE(st.message().find("self-contained"), std::string::npos) << st.ToString();
}

// Bytes the floe before incremental checkpoints (e56c528) wrote for checkpoint 7 of job
// 0123456789abcdef with tasks src/0 ("src/0@7") and sink/0 ("sink/0@7"): format version 1.
const std::string kOldMetadata = std::string(
    "\x46\x4c\x4f\x45\x43\x4b\x50\x54\x01\x00\x00\x00\x07\x00\x00\x00"
    "\x00\x00\x00\x00\x00\x10\x00\x00\x00\x30\x31\x32\x33\x34\x35\x36"
    "\x37\x38\x39\x61\x62\x63\x64\x65\x66\xd2\x04\x00\x00\x00\x00\x00"
    "\x00\x02\x00\x00\x00\x05\x00\x00\x00\x73\x72\x63\x2f\x30\x14\x00"
    "\x00\x00\x73\x72\x63\x5f\x30\x2d\x61\x61\x61\x61\x61\x61\x61\x61"
    "\x2e\x73\x74\x61\x74\x65\x07\x00\x00\x00\x00\x00\x00\x00\x6d\x04"
    "\x6a\x4c\x06\x00\x00\x00\x73\x69\x6e\x6b\x2f\x30\x15\x00\x00\x00"
    "\x73\x69\x6e\x6b\x5f\x30\x2d\x62\x62\x62\x62\x62\x62\x62\x62\x2e"
    "\x73\x74\x61\x74\x65\x08\x00\x00\x00\x00\x00\x00\x00\xa8\xd8\x31"
    "\x11\x06\xf7\xbd\x8e",
    149);

TEST(CheckpointStorage, LoadsMetadataThePreviousFormatWrote) {
  TempDir tmp;
  const std::string root = TestRoot(tmp);
  auto s = MakeStorage(root + "/job");
  ASSERT_TRUE(TestIo().CreateDirs(root + "/job/chk-7").ok());
  ASSERT_TRUE(TestIo().WriteFileReplace(root + "/job/chk-7/src_0-aaaaaaaa.state", "src/0@7").ok());
  ASSERT_TRUE(
      TestIo().WriteFileReplace(root + "/job/chk-7/sink_0-bbbbbbbb.state", "sink/0@7").ok());
  ASSERT_TRUE(TestIo().WriteFileReplace(root + "/job/chk-7/_metadata", kOldMetadata).ok());
  auto c = s->Load(CheckpointId(7));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->job_id, "0123456789abcdef");
  EXPECT_EQ(c->timestamp_millis, 1234);
  EXPECT_EQ(c->task_states.at("src/0"), "src/0@7");
  EXPECT_EQ(c->task_states.at("sink/0"), "sink/0@7");
  EXPECT_TRUE(c->task_shared.empty());
  // Without shared files the encoder still writes exactly that (an older floe reads it).
  auto meta = DecodeCheckpointMetadata(kOldMetadata);
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(EncodeCheckpointMetadata(meta->header, meta->states), kOldMetadata);
  // With shared files it is version 2, which an older floe refuses instead of misreading.
  meta->states[0].shared = {{"a.sst", 1, 2}};
  std::string v2 = EncodeCheckpointMetadata(meta->header, meta->states);
  EXPECT_EQ(v2[8], 2);
  auto back = DecodeCheckpointMetadata(v2);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->states, meta->states);
}

class RetainedSharedFiles : public ::testing::TestWithParam<int> {};

// Checkpoints 1 {a, b}, 2 {b, c}, 3 {c, d}: after each, shared/ holds exactly what the retained
// ones list, and each retained one loads.
TEST_P(RetainedSharedFiles, KeepsExactlyTheFilesOfRetainedCheckpoints) {
  TempDir tmp;
  const std::string root = TestRoot(tmp);
  const int retained = GetParam();
  auto s = MakeStorage(root + "/job", retained);
  SharedCheckpoint(*s, tmp, 1, {"a", "b"});
  EXPECT_EQ(SharedNames(root + "/job"), (Names{"a", "b"}));
  SharedCheckpoint(*s, tmp, 2, {"b", "c"});
  EXPECT_EQ(SharedNames(root + "/job"), (retained == 1 ? Names{"b", "c"} : Names{"a", "b", "c"}));
  SharedCheckpoint(*s, tmp, 3, {"c", "d"});
  EXPECT_EQ(SharedNames(root + "/job"), (retained == 1 ? Names{"c", "d"} : Names{"b", "c", "d"}));
  auto completed = s->ListCompleted();
  ASSERT_TRUE(completed.ok());
  EXPECT_EQ(completed->size(), static_cast<size_t>(retained));
  for (CheckpointId id : *completed) {
    EXPECT_TRUE(s->Load(id).ok()) << s->Load(id).status().ToString();
  }
  ASSERT_TRUE(s->DiscardAllCheckpoints().ok());
  EXPECT_EQ(SharedNames(root + "/job"), Names{});
}

INSTANTIATE_TEST_SUITE_P(NumRetained, RetainedSharedFiles, ::testing::Values(1, 2));

TEST(SharedRetention, FilesOfACheckpointInFlightSurvive) {
  TempDir tmp;
  const std::string root = TestRoot(tmp);
  auto s = MakeStorage(root + "/job");
  SharedCheckpoint(*s, tmp, 1, {"a"});
  // Checkpoint 2 aborts after uploading x; 3 and 4 are in flight together.
  ASSERT_TRUE(s->InitCheckpoint(CheckpointId(2), false).ok());
  UploadBytes(*s, tmp, "x", "x");
  auto c3 = s->InitCheckpoint(CheckpointId(3), false);
  auto c4 = s->InitCheckpoint(CheckpointId(4), false);
  ASSERT_TRUE(c3.ok() && c4.ok());
  SharedStateFile b = UploadBytes(*s, tmp, "b", "b");  // for 3
  SharedStateFile c = UploadBytes(*s, tmp, "c", "c");  // for 4, not listed by 3
  ASSERT_TRUE(FinishCheckpoint(*s, *c3, {{"a", 1, Crc32("a")}, b}).ok());
  // c may belong to 4; x was uploaded before 3 started and 3 does not list it: it goes.
  EXPECT_EQ(SharedNames(root + "/job"), (Names{"a", "b", "c"}));
  ASSERT_TRUE(FinishCheckpoint(*s, *c4, {b, c}).ok());
  EXPECT_EQ(SharedNames(root + "/job"), (Names{"b", "c"}));
  EXPECT_TRUE(s->Load(CheckpointId(4)).ok());
}

// A worker killed between an upload and `_metadata`: the next process's first retention
// removes the file (and a temp file of an upload cut short), nothing a checkpoint lists.
TEST(SharedRetention, AKillBetweenUploadAndMetadataLeavesFilesTheNextRetentionRemoves) {
  TempDir tmp;
  const std::string root = TestRoot(tmp);
  {
    auto dead = MakeStorage(root + "/job");
    SharedCheckpoint(*dead, tmp, 1, {"a"});
    ASSERT_TRUE(dead->InitCheckpoint(CheckpointId(2), false).ok());
    UploadBytes(*dead, tmp, "x", "x");
    ASSERT_TRUE(TestIo().WriteFileReplace(root + "/job/shared/.tmp-y-0123", "y").ok());
  }
  auto s = MakeStorage(root + "/job");
  // Before it completes a checkpoint, the new process's own uploads count as in flight.
  auto c3 = s->InitCheckpoint(CheckpointId(3), false);
  ASSERT_TRUE(c3.ok());
  SharedStateFile b = UploadBytes(*s, tmp, "b", "b");
  ASSERT_TRUE(s->ApplyRetention().ok());
  EXPECT_EQ(SharedNames(root + "/job"), (Names{"a", "b"}));
  ASSERT_TRUE(FinishCheckpoint(*s, *c3, {{"a", 1, Crc32("a")}, b}).ok());
  EXPECT_EQ(SharedNames(root + "/job"), (Names{"a", "b"}));
  EXPECT_FALSE(HasFiles(root + "/job/chk-2"));
  EXPECT_TRUE(s->Load(CheckpointId(3)).ok());
}

// Killed after checkpoint 2's `_metadata`, before its retention ran; and killed during the
// next retention, after checkpoint 2's `_metadata` went. Each time the next process's retention
// leaves every retained checkpoint loadable.
TEST(SharedRetention, AKillBeforeOrDuringRetentionLosesNothingARetainedCheckpointNeeds) {
  TempDir tmp;
  const std::string root = TestRoot(tmp);
  {
    auto dead = MakeStorage(root + "/job");
    SharedCheckpoint(*dead, tmp, 1, {"a", "b"});
    SharedCheckpoint(*dead, tmp, 2, {"b", "c"}, /*retention=*/false);
  }
  EXPECT_EQ(SharedNames(root + "/job"), (Names{"a", "b", "c"}));
  {
    auto next = MakeStorage(root + "/job");
    ASSERT_TRUE(next->ApplyRetention().ok());
    EXPECT_EQ(SharedNames(root + "/job"), (Names{"b", "c"}));
    EXPECT_TRUE(next->Load(CheckpointId(2)).ok());
    SharedCheckpoint(*next, tmp, 3, {"c", "d"}, /*retention=*/false);
  }
  // The retention after 3 was killed right after removing chk-2/_metadata.
  ASSERT_TRUE(TestIo().RemoveFile(root + "/job/chk-2/_metadata").ok());
  EXPECT_TRUE(MakeStorage(root + "/job")->Load(CheckpointId(3)).ok());
  auto s = MakeStorage(root + "/job");
  ASSERT_TRUE(s->ApplyRetention().ok());
  EXPECT_EQ(SharedNames(root + "/job"), (Names{"c", "d"}));
  EXPECT_FALSE(HasFiles(root + "/job/chk-2"));
  EXPECT_TRUE(s->Load(CheckpointId(3)).ok());
}

TEST(SharedRetention, AnUnreadableRetainedMetadataStopsItBeforeDeletingSharedFiles) {
  TempDir tmp;
  const std::string root = TestRoot(tmp);
  auto s = MakeStorage(root + "/job", 2);
  SharedCheckpoint(*s, tmp, 1, {"a"});
  SharedCheckpoint(*s, tmp, 2, {"b"});
  ASSERT_TRUE(TestIo().WriteFileReplace(root + "/job/chk-1/_metadata", "garbage!!!!!!!!").ok());
  ASSERT_TRUE(s->InitCheckpoint(CheckpointId(3), false).ok());
  Status st = s->ApplyRetention();
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_NE(st.message().find("chk-1/_metadata"), std::string::npos) << st.ToString();
  EXPECT_EQ(SharedNames(root + "/job"), (Names{"a", "b"}));
}

}  // namespace
}  // namespace floe::runtime

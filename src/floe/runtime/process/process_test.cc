#include "floe/runtime/process/coordinator.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>

#include "floe/runtime/process/job_record.h"

namespace floe::process {
namespace {

TEST(JobRecord, RoundTripsThroughJson) {
  JobRecord r;
  r.job_id = "0123456789abcdef0123456789abcdef";
  r.name = "roster.sql";
  r.job_file = "/jobs/roster.sql";
  r.pid = 42;
  r.worker_pid = 43;
  r.attempt = 2;
  r.restarts = 2;
  r.control = "127.0.0.1:4567";
  r.token = "t";
  r.state = kStateRunning;
  r.last_checkpoint = 7;
  r.last_checkpoint_millis = 1700000000000;
  r.checkpoint_dir = "/chk";
  r.savepoint_dir = "/chk/savepoints";
  r.started_millis = 1;
  r.updated_millis = 2;
  r.message = "m";
  auto back = DecodeJobRecord(EncodeJobRecord(r));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->job_id, r.job_id);
  EXPECT_EQ(back->pid, 42);
  EXPECT_EQ(back->worker_pid, 43);
  EXPECT_EQ(back->last_checkpoint, 7u);
  EXPECT_EQ(back->last_checkpoint_millis, r.last_checkpoint_millis);
  EXPECT_EQ(back->control, r.control);
  EXPECT_EQ(back->savepoint_dir, r.savepoint_dir);
  EXPECT_EQ(back->message, "m");
}

TEST(JobRecord, RejectsRecordWithoutJobId) {
  EXPECT_FALSE(DecodeJobRecord("{}").ok());
  EXPECT_FALSE(DecodeJobRecord("not json").ok());
}

TEST(JobRecord, ListFindsWrittenRecordsOldestFirst) {
  auto root = std::filesystem::temp_directory_path() /
              ("floe-jobs-" + std::to_string(::getpid()) + "-" + RandomHex32().substr(0, 8));
  for (int i = 0; i < 2; ++i) {
    JobRecord r;
    r.job_id = i == 0 ? "bbbb" : "aaaa";
    r.started_millis = 10 + i;
    auto dir = root / r.job_id;
    std::filesystem::create_directories(dir);
    ASSERT_TRUE(WriteJobRecord(dir.string(), r).ok());
  }
  std::filesystem::create_directories(root / "garbage");
  auto jobs = ListJobRecords(root.string());
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].job_id, "bbbb");
  EXPECT_EQ(jobs[1].job_id, "aaaa");
  std::filesystem::remove_all(root);
}

TEST(LineBuffer, SplitsLinesAcrossReads) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  UniqueFd a(sv[0]), b(sv[1]);
  ASSERT_TRUE(WriteAll(a.get(), "one\ntw").ok());
  LineBuffer lines;
  auto l1 = lines.ReadLine(b.get(), std::chrono::seconds(30));
  ASSERT_TRUE(l1.ok());
  EXPECT_EQ(*l1, "one");
  ASSERT_TRUE(WriteAll(a.get(), "o\n").ok());
  auto l2 = lines.ReadLine(b.get(), std::chrono::seconds(30));
  ASSERT_TRUE(l2.ok());
  EXPECT_EQ(*l2, "two");
  a.Reset();
  EXPECT_EQ(lines.ReadLine(b.get(), std::chrono::seconds(30)).status().code(),
            StatusCode::kUnavailable);
}

TEST(RunSpec, RoundTripsAndFindsVariables) {
  RunSpec s;
  s.job_file = "/a.sql";
  s.variables = {{"KAFKA", "localhost:9092"}};
  s.config_overrides = {{"execution.checkpointing.dir", "/chk"}};
  s.on_stale_restore = "replay";
  auto back = DecodeRunSpec(EncodeRunSpec(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->job_file, s.job_file);
  EXPECT_EQ(back->variables, s.variables);
  EXPECT_EQ(back->config_overrides, s.config_overrides);
  EXPECT_EQ(back->on_stale_restore, "replay");

  EXPECT_EQ(ReferencedVariables("'${KAFKA}' x ${TOPIC} ${KAFKA} ${"),
            (std::vector<std::string>{"KAFKA", "TOPIC"}));
}

TEST(RunSpec, FieldsOfTheWrongTypeAreCorruptionNotAThrow) {
  for (const char* text :
       {R"({"job_file":5})", R"({"job_file":"/a.sql","on_stale_restore":null})",
        R"({"job_file":"/a.sql","variables":{"A":1}})", R"({"job_file":"/a.sql","variables":[]})",
        R"({"job_file":"/a.sql","config_overrides":{"k":["v"]}})", "[]", "nonsense"}) {
    auto spec = DecodeRunSpec(text);
    EXPECT_EQ(spec.status().code(), StatusCode::kCorruption) << text;
  }
}

TEST(JobRecord, NumbersOutOfRangeOrOfTheWrongTypeAreCorruption) {
  for (const char* text : {R"({"job_id":"a","pid":4294967296})", R"({"job_id":"a","pid":1e300})",
                           R"({"job_id":"a","pid":1.5})", R"({"job_id":"a","last_checkpoint":-1})",
                           R"({"job_id":"a","attempt":"1"})", R"({"job_id":"a","state":7})",
                           R"({"job_id":"a","token":null})", R"({"job_id":5})"}) {
    auto record = DecodeJobRecord(text);
    EXPECT_EQ(record.status().code(), StatusCode::kCorruption) << text;
  }
  auto ok = DecodeJobRecord(R"({"job_id":"a","pid":7,"last_checkpoint":18446744073709551615})");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->pid, 7);
  EXPECT_EQ(ok->last_checkpoint, UINT64_MAX);
}

TEST(WorkerError, InvalidArgumentBeforeTheFirstCheckpointIsFatal) {
  Status refused = Status::InvalidArgument("kafka client: `fetch.max.bytes` must be >= ...");
  EXPECT_TRUE(IsFatalWorkerError(refused, /*checkpoint_completed=*/false));
  // After the attempt made progress the restart strategy stays in charge.
  EXPECT_FALSE(IsFatalWorkerError(refused, /*checkpoint_completed=*/true));
  // The environment's errors are retried.
  EXPECT_FALSE(IsFatalWorkerError(Status::IOError("disk"), false));
  EXPECT_FALSE(IsFatalWorkerError(Status::Unavailable("kafka (retryable) broker down"), false));
  EXPECT_FALSE(IsFatalWorkerError(Status::OK(), false));
}

}  // namespace
}  // namespace floe::process

#include "floe/runtime/process/coordinator.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <thread>

#include "floe/runtime/process/control_protocol.h"
#include "floe/runtime/process/job_monitor.h"
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
  r.web_url = "http://127.0.0.1:1/";
  r.tables = {{"demo.t", 1700000000000, true}};
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
  EXPECT_EQ(back->web_url, r.web_url);
  EXPECT_EQ(back->tables, r.tables);
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

TEST(LineBuffer, RefusesAnUnterminatedLineAtTheLimitAndStopsReading) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  UniqueFd a(sv[0]), b(sv[1]);
  constexpr size_t kLimit = 64 * 1024;
  LineBuffer lines(kLimit);
  const std::string piece(4096, 'x');
  size_t fed = 0;
  Status error;
  // 8 MiB in 4 KiB pieces, never a newline.
  while (fed < 8u << 20) {
    ASSERT_TRUE(WriteAll(a.get(), piece).ok());
    fed += piece.size();
    auto more = lines.ReadSome(b.get());
    auto line = lines.NextLine();
    if (!line.ok()) {
      error = line.status();
      break;
    }
    ASSERT_TRUE(more.ok()) << more.status().ToString();
    ASSERT_FALSE(*line);
    ASSERT_LE(lines.buffered(), kLimit);
  }
  EXPECT_EQ(error.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(error.message(), "line longer than 65536 bytes");
  EXPECT_LE(fed, kLimit + piece.size());
  EXPECT_LE(lines.buffered(), kLimit + piece.size());
  // The error stays, and nothing more is read.
  ASSERT_TRUE(WriteAll(a.get(), "\n").ok());
  EXPECT_FALSE(lines.ReadSome(b.get()).ok());
  EXPECT_FALSE(lines.NextLine().ok());
  EXPECT_LE(lines.buffered(), kLimit + piece.size());
}

TEST(LineBuffer, ScansEachByteOnceHoweverManyReadsALineTakes) {
  LineBuffer lines(16u << 20);
  const std::string piece(4096, 'x');
  for (int i = 0; i < 2048; ++i) {  // 8 MiB
    lines.Append(piece);
    auto line = lines.NextLine();
    ASSERT_TRUE(line.ok());
    ASSERT_FALSE(*line);
  }
  // Rescanning the buffer on every read would have examined ~8 GiB by now.
  EXPECT_EQ(lines.bytes_scanned(), 8u << 20);
  lines.Append("\nnext");
  auto line = lines.NextLine();
  ASSERT_TRUE(line.ok());
  ASSERT_TRUE(*line);
  EXPECT_EQ((*line)->size(), 8u << 20);
  EXPECT_EQ(lines.bytes_scanned(), (8u << 20) + 1);
  EXPECT_EQ(lines.buffered(), 4u);
}

TEST(LineBuffer, SplitsManyLinesOfOneReadAndKeepsTheRest) {
  LineBuffer lines(8);
  lines.Append("a\nbb\n\nc");
  std::vector<std::string> got;
  while (true) {
    auto line = lines.NextLine();
    ASSERT_TRUE(line.ok());
    if (!*line) break;
    got.push_back(**line);
  }
  EXPECT_EQ(got, (std::vector<std::string>{"a", "bb", ""}));
  lines.Append("1234567\n");
  auto c = lines.NextLine();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(**c, "c1234567");  // exactly the limit
  EXPECT_EQ(lines.bytes_scanned(), 15u);
}

TEST(LineBuffer, RefusesACompleteLineLongerThanTheLimit) {
  LineBuffer lines(8);
  lines.Append("123456789\nok\n");
  EXPECT_EQ(lines.NextLine().status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(lines.NextLine().ok());
}

// The error a request line gets, "" if it is accepted.
std::string RequestError(std::string_view line, std::string_view token = "secret-token") {
  auto req = ParseControlRequest(line, token);
  if (req.ok()) return "";
  EXPECT_EQ(req.status().code(), StatusCode::kInvalidArgument) << line;
  EXPECT_EQ(req.status().message().find(token), std::string::npos) << "echoes the token";
  return req.status().message();
}

TEST(ControlRequest, FieldsOfTheWrongTypeAreRefusedNamingTheField) {
  for (const char* v :
       {"1", "0", "-1", "1.5", "1e308", "18446744073709551615", "null", "true", "false", "[]",
        R"(["secret-token"])", "{}", R"({"token":"secret-token"})"}) {
    std::string value(v);
    EXPECT_EQ(RequestError(R"({"cmd":"status","token":)" + value + "}")
                  .rfind("field 'token': expected string, got ", 0),
              0u)
        << value;
    EXPECT_EQ(RequestError(R"({"token":"secret-token","cmd":)" + value + "}")
                  .rfind("field 'cmd': expected string, got ", 0),
              0u)
        << value;
    for (const char* cmd : {"savepoint", "stop", "status", "cancel"}) {
      EXPECT_EQ(RequestError(std::string(R"({"token":"secret-token","cmd":")") + cmd +
                             R"(","dir":)" + value + "}")
                    .rfind("field 'dir': expected string, got ", 0),
                0u)
          << value;
    }
  }
}

TEST(ControlRequest, MissingFieldsBadTokenUnknownCommandAndRelativeDirAreRefused) {
  EXPECT_EQ(RequestError(R"({"cmd":"status"})"), "field 'token': required field is missing");
  EXPECT_EQ(RequestError(R"({"token":"secret-token"})"), "field 'cmd': required field is missing");
  EXPECT_EQ(RequestError(R"({"token":"secret-toke","cmd":"status"})"), "bad token");
  EXPECT_EQ(RequestError(R"({"token":"","cmd":"status"})"), "bad token");
  EXPECT_EQ(RequestError(R"({"token":"SECRET-TOKEN","cmd":"status"})"), "bad token");
  // The token is checked before anything else is looked at.
  EXPECT_EQ(RequestError(R"({"token":"x","cmd":5,"dir":7})"), "bad token");
  EXPECT_EQ(RequestError(R"({"token":"secret-token","cmd":"STATUS"})"), "unknown command 'STATUS'");
  std::string long_cmd(50000, 'y');
  std::string error = RequestError(R"({"token":"secret-token","cmd":")" + long_cmd + "\"}");
  EXPECT_EQ(error.rfind("unknown command 'yyyy", 0), 0u);
  EXPECT_LT(error.size(), 100u);
  for (const char* dir : {R"("")", R"("relative/dir")", R"(".")"}) {
    EXPECT_EQ(
        RequestError(std::string(R"({"token":"secret-token","cmd":"stop","dir":)") + dir + "}"),
        "field 'dir': must be an absolute path");
  }
}

TEST(ControlRequest, LinesThatAreNotOneJsonObjectAreRefused) {
  std::string deep_array = std::string(100000, '[') + std::string(100000, ']');
  std::string deep_object;
  for (int i = 0; i < 20000; ++i) deep_object += R"({"a":)";
  deep_object += "1" + std::string(20000, '}');
  for (std::string line : {std::string(""), std::string("  "), std::string("[]"), std::string("1"),
                           std::string("\"status\""), std::string("null"), std::string("{"),
                           std::string(R"({"token":"secret-token","cmd":"status")"),
                           std::string(R"({"token":"secret-token","cmd":"status"}})"),
                           std::string("{\"token\":\"\xff\xfe\",\"cmd\":\"status\"}"),
                           std::string("\x00\x01\x02\xff", 4), deep_array}) {
    std::string error = RequestError(line);
    EXPECT_TRUE(error == "request is not valid JSON" || error == "request is not a JSON object")
        << error;
  }
  // Deep, but an object: its fields are looked at (and a stack is not overflowed).
  EXPECT_EQ(RequestError(deep_object), "field 'token': required field is missing");
}

TEST(ControlRequest, ValidRequestsParse) {
  auto s = ParseControlRequest(R"({"token":"t","cmd":"status","extra":[1,{"x":null}]})", "t");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->cmd, "status");
  auto sp = ParseControlRequest(R"({"cmd":"savepoint","dir":"/sp","token":"t"})", "t");
  ASSERT_TRUE(sp.ok());
  EXPECT_EQ(sp->cmd, "savepoint");
  EXPECT_EQ(sp->dir, "/sp");
  auto stop = ParseControlRequest(R"({"cmd":"stop","token":"t"})", "t");
  ASSERT_TRUE(stop.ok());
  EXPECT_EQ(stop->dir, "");
  EXPECT_TRUE(ParseControlRequest(R"({"cmd":"cancel","token":"t"})", "t").ok());
}

TEST(ControlRequest, MutatedAndRandomRequestsNeverThrow) {
  std::mt19937 rng(42);
  const std::string valid = R"({"token":"t","cmd":"savepoint","dir":"/sp"})";
  for (int i = 0; i < 20000; ++i) {
    std::string line = valid;
    switch (rng() % 4) {
      case 0:  // flip bytes
        for (int k = 0; k < 3; ++k) line[rng() % line.size()] = static_cast<char>(rng());
        break;
      case 1:  // truncate
        line.resize(rng() % line.size());
        break;
      case 2:  // splice in a random JSON value of another type
        line = R"({"token":"t","cmd":)" + std::string(i % 2 ? "[1,{\"a\":null},true]" : "-0.0e-9") +
               "}";
        break;
      default:  // junk
        line.clear();
        for (size_t k = rng() % 64; k > 0; --k) line.push_back(static_cast<char>(rng()));
    }
    auto req = ParseControlRequest(line, "t");
    if (req.ok()) {
      EXPECT_TRUE(req->cmd == "status" || req->cmd == "savepoint" || req->cmd == "stop" ||
                  req->cmd == "cancel")
          << line;
    } else {
      EXPECT_EQ(req.status().code(), StatusCode::kInvalidArgument);
    }
  }
}

TEST(ControlReply, GarbledRepliesAreCorruptionNotAThrow) {
  for (const char* line :
       {"", "nonsense", "[]", "{}", R"({"ok":"yes"})", R"({"ok":1})", R"({"ok":null,"path":"/p"})",
        R"({"ok":true,"path":5})", R"({"ok":false,"error":7})", R"({"ok":false,"error":null})"}) {
    EXPECT_EQ(ParseControlReply(line).status().code(), StatusCode::kCorruption) << line;
  }
  auto refused = ParseControlReply(R"({"ok":false,"error":"job is RESTARTING"})");
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(), "job is RESTARTING");
  auto ok = ParseControlReply(R"({"ok":true,"path":"/sp/savepoint-1"})");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->path, "/sp/savepoint-1");
  EXPECT_FALSE(ParseControlReply(R"({"ok":true})")->path);
}

TEST(ControlClient, AReplyWithoutEndIsAnErrorNotAnUnboundedBuffer) {
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(listener.get(), 1), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  // A "coordinator" that answers with 4 MiB and no newline.
  std::thread server([&] {
    UniqueFd conn(::accept(listener.get(), nullptr, nullptr));
    LineBuffer request;
    (void)request.ReadLine(conn.get(), std::chrono::seconds(30));  // so the close is no reset
    const std::string junk(64 * 1024, 'j');
    for (int i = 0; i < 64; ++i) {
      if (::send(conn.get(), junk.data(), junk.size(), MSG_NOSIGNAL) < 0) break;
    }
  });
  JobRecord job;
  job.job_id = "abcd";
  job.control = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  job.token = "t";
  auto reply = SendControlRequest(job, R"({"cmd":"status"})", std::chrono::seconds(30));
  server.join();
  EXPECT_EQ(reply.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(reply.status().message().find("line longer than 1048576 bytes"), std::string::npos)
      << reply.status().ToString();
}

TEST(WorkerEvent, FieldsOfTheWrongTypeAreCorruptionNotAThrow) {
  for (const char* line :
       {"", "[]", R"({})", R"({"event":5})", R"({"event":"checkpoint","id":"7"})",
        R"({"event":"checkpoint","id":-1})", R"({"event":"checkpoint","id":1.5})",
        R"({"event":"checkpoint","savepoint":1})", R"({"event":"reply","req":"3"})",
        R"({"event":"reply","ok":"true"})", R"({"event":"reply","path":["/p"]})",
        R"({"event":"failed","error":{}})", R"({"event":"failed","fatal":null})",
        R"({"event":"restore-plan","message":7})", R"({"event":"checkpoint","dir":false})"}) {
    EXPECT_EQ(ParseWorkerEvent(line).status().code(), StatusCode::kCorruption) << line;
  }
  auto ev = ParseWorkerEvent(
      R"({"event":"checkpoint","id":8,"savepoint":false,"stop":true,"final":false,"dir":"/c"})");
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_EQ(ev->id, 8u);
  EXPECT_TRUE(ev->stop);
  EXPECT_EQ(ev->dir, "/c");
  auto reply = ParseWorkerEvent(R"({"event":"reply","req":3,"ok":false,"error":"e"})");
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->req, 3);
  EXPECT_EQ(reply->error, "e");
  EXPECT_FALSE(reply->path);
}

TEST(WorkerCommand, FieldsOfTheWrongTypeAreRefused) {
  for (const char* line : {"x", R"({"req":1})", R"({"req":"1","cmd":"cancel"})",
                           R"({"req":1,"cmd":["stop"]})", R"({"req":1,"cmd":"stop","dir":1})"}) {
    EXPECT_EQ(ParseWorkerCommand(line).status().code(), StatusCode::kInvalidArgument) << line;
  }
  auto cmd = ParseWorkerCommand(R"({"req":4,"cmd":"stop","dir":"/d"})");
  ASSERT_TRUE(cmd.ok());
  EXPECT_EQ(cmd->req, 4);
  EXPECT_EQ(cmd->cmd, "stop");
  EXPECT_EQ(cmd->dir, "/d");
}

TEST(JobRecord, InvalidUtf8IsReplacedNotThrown) {
  JobRecord r;
  r.job_id = "abcd";
  r.name = "bad-\xff\xfe.sql";
  r.message = "worker said \xc3";
  std::string text = EncodeJobRecord(r);
  auto back = DecodeJobRecord(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->name, "bad-\xef\xbf\xbd\xef\xbf\xbd.sql");
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

// ---- JobMonitor: the stall rule -----------------------------------------------------------

// A worker report: rows into demo.t's writer and its committer's last commit time (0 = none).
std::vector<runtime::MetricSample> Report(int64_t written, int64_t last_commit) {
  const runtime::MetricLabels writer = {
      {"task_name", "w"}, {"subtask_index", "0"}, {"table", "demo.t"}};
  const runtime::MetricLabels committer = {
      {"task_name", "c"}, {"subtask_index", "0"}, {"table", "demo.t"}};
  std::vector<runtime::MetricSample> s = {
      {"taskmanager_job_task_operator_IcebergStreamWriter_recordsWritten", writer,
       runtime::MetricType::kCounter, written}};
  if (last_commit > 0) {
    s.push_back({"taskmanager_job_task_operator_IcebergFilesCommitter_lastCommitTimestamp",
                 committer, runtime::MetricType::kGauge, last_commit});
  }
  return s;
}

TEST(JobMonitor, RowsWithoutACommitPastTheThresholdStallIdleInputDoesNot) {
  MonitorSettings settings;
  settings.stall_threshold_ms = 10'000;
  JobMonitor m(settings, 0);
  m.OnMetrics(Report(100, 1'000), 1'000);  // committed everything so far
  EXPECT_TRUE(m.CheckStalls(30'000, true).empty()) << "idle after a commit is healthy";
  m.OnMetrics(Report(150, 1'000), 31'000);  // 50 rows arrive, no commit follows
  EXPECT_TRUE(m.CheckStalls(31'000, true).empty()) << "the last commit is long ago, but the "
                                                      "rows only just arrived: not yet";
  m.OnMetrics(Report(150, 32'000), 32'000);  // they were committed at the next checkpoint
  m.OnMetrics(Report(200, 32'000), 33'000);  // 50 more, and commits stop
  EXPECT_TRUE(m.CheckStalls(43'000, true).empty()) << "they have waited 10 s, not more";
  auto changes = m.CheckStalls(43'001, true);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].table, "demo.t");
  EXPECT_TRUE(changes[0].stalled);
  EXPECT_EQ(changes[0].uncommitted_records, 50);
  EXPECT_EQ(changes[0].since_commit_ms, 11'001);
  EXPECT_TRUE(m.CheckStalls(60'000, false).empty()) << "no verdict while no worker runs";
  m.OnMetrics(Report(200, 61'000), 61'000);
  changes = m.CheckStalls(61'000, true);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_FALSE(changes[0].stalled);
}

TEST(JobMonitor, ARestartedWorkerStartsItsOwnCountsAndClock) {
  MonitorSettings settings;
  settings.stall_threshold_ms = 10'000;
  JobMonitor m(settings, 0);
  m.OnMetrics(Report(100, 1'000), 1'000);
  m.OnMetrics(Report(180, 1'000), 2'000);  // 80 rows uncommitted when the worker dies
  m.OnWorkerStarted(50'000);
  m.OnMetrics(Report(30, 0), 51'000);  // the new attempt replays; its committer has not committed
  EXPECT_TRUE(m.CheckStalls(61'000, true).empty()) << "counted from the new attempt's rows";
  EXPECT_EQ(m.CheckStalls(61'001, true).size(), 1u);
  JobOverview job;
  job.job_id = "id";
  const auto metrics = m.Metrics(job, 61'001);
  bool elapsed = false;
  for (const auto& e : metrics) {
    if (e.name.find("elapsedSecondsSinceLastSuccessfulCommit") != std::string::npos) {
      elapsed = true;
      EXPECT_DOUBLE_EQ(e.value, 60.001) << "since the last commit, across attempts";
    }
  }
  EXPECT_TRUE(elapsed);
}

}  // namespace
}  // namespace floe::process

#include "floe/connectors/filesystem/filesystem_source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>

#include "floe/connectors/connectors_test_util.h"
#include "floe/runtime/local_job.h"

namespace floe::connectors {
namespace {

using testing::CollectingCollector;
using testing::Int64Column;
using testing::Table;

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

// Lines {"id":first}..{"id":last} with a little padding so chunks split files.
std::string Lines(int first, int last) {
  std::string s;
  for (int i = first; i <= last; ++i) {
    s += "{\"id\":" + std::to_string(i) + ",\"name\":\"row-" + std::to_string(i) + "\"}\n";
  }
  return s;
}

// A position as releases before stripes wrote it (one reader: file, byte, line).
std::string OldPosition(const std::string& file, uint64_t offset, int64_t line) {
  return "{\"file\":\"" + file + "\",\"line\":" + std::to_string(line) +
         ",\"offset\":" + std::to_string(offset) + "}";
}

class FilesystemSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Read in name order: a.json, b.jsonl, c.json; notes.txt and .hidden.json are skipped.
    WriteText(dir_.path() + "/b.jsonl", Lines(11, 25));
    WriteText(dir_.path() + "/a.json", Lines(1, 10));
    WriteText(dir_.path() + "/c.json", "\n" + Lines(26, 30));  // blank lines are skipped
    WriteText(dir_.path() + "/notes.txt", "not json\n");
    WriteText(dir_.path() + "/.hidden.json", "not json\n");
  }

  TableDescriptor FsTable(std::map<std::string, std::string> extra = {}) {
    std::map<std::string, std::string> options = {
        {"connector", "filesystem"}, {"format", "json"}, {"path", dir_.path()}};
    for (auto& [k, v] : extra) options[k] = v;
    return Table("events", "id BIGINT NOT NULL, name STRING", options);
  }

  std::unique_ptr<FilesystemSource> MakeSource(const TableDescriptor& table,
                                               std::shared_ptr<runtime::SourcePositionBoard> board,
                                               size_t chunk_bytes = 64, uint32_t subtask = 0,
                                               uint32_t parallelism = 1,
                                               uint64_t split_bytes = SplitLayout{}.split_bytes) {
    Result<FilesystemSourceConfig> config = MakeFilesystemSourceConfig(table);
    EXPECT_TRUE(config.ok()) << config.status().ToString();
    config->chunk_bytes = chunk_bytes;
    config->layout.split_bytes = split_bytes;
    auto source = std::make_unique<FilesystemSource>(*config, std::move(board));
    Status st = source->Open(testing::Context("source-events", subtask, parallelism));
    EXPECT_TRUE(st.ok()) << st.ToString();
    return source;
  }

  static runtime::SourceStatus PollAll(FilesystemSource& source, CollectingCollector& out,
                                       int max_polls = 1 << 20) {
    runtime::SourceStatus st = runtime::SourceStatus::kMore;
    for (int i = 0; i < max_polls && st != runtime::SourceStatus::kEnd; ++i) {
      Result<runtime::SourceStatus> r = source.Poll(out);
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      if (!r.ok()) return runtime::SourceStatus::kEnd;
      st = *r;
    }
    return st;
  }

  static std::vector<int64_t> Range(int64_t a, int64_t b) {
    std::vector<int64_t> v;
    for (int64_t i = a; i <= b; ++i) v.push_back(i);
    return v;
  }

  testing::TempDir dir_;
};

TEST_F(FilesystemSourceTest, ReadsJsonFilesOfADirectoryInNameOrder) {
  auto source = MakeSource(FsTable(), nullptr, 1 << 20);
  CollectingCollector out;
  EXPECT_EQ(PollAll(*source, out), runtime::SourceStatus::kEnd);
  EXPECT_EQ(Int64Column(out.batches, 0), Range(1, 30));
  EXPECT_EQ(out.batches.size(), 3u);  // one chunk per file
  Result<std::vector<std::string>> files = ListSourceFiles(dir_.path());
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(*files, (std::vector<std::string>{dir_.path() + "/a.json", dir_.path() + "/b.jsonl",
                                              dir_.path() + "/c.json"}));
}

TEST_F(FilesystemSourceTest, ReadsASingleFile) {
  TableDescriptor table = FsTable({{"path", dir_.path() + "/b.jsonl"}});
  auto source = MakeSource(table, nullptr);
  CollectingCollector out;
  PollAll(*source, out);
  EXPECT_EQ(Int64Column(out.batches, 0), Range(11, 25));
}

TEST_F(FilesystemSourceTest, ResumesAtTheByteOffsetAcrossFilesAfterEveryPoll) {
  // 64-byte chunks: a checkpoint can fall inside a file, at a file boundary, or at the end.
  CollectingCollector full;
  PollAll(*MakeSource(FsTable(), nullptr), full);
  size_t total_polls = full.batches.size() + 3;
  for (size_t k = 0; k <= total_polls; ++k) {
    auto board = std::make_shared<runtime::SourcePositionBoard>();
    auto first = MakeSource(FsTable(), board);
    CollectingCollector out;
    PollAll(*first, out, static_cast<int>(k));
    runtime::StateWriter state;
    ASSERT_TRUE(first->SnapshotPosition(runtime::CheckpointId(k + 1), state).ok());
    auto second = MakeSource(FsTable(), board);
    std::string blob = state.Finish();
    runtime::StateReader reader(blob);
    ASSERT_TRUE(second->Restore(reader).ok());
    PollAll(*second, out);
    EXPECT_EQ(Int64Column(out.batches, 0), Range(1, 30)) << "checkpoint after " << k << " polls";
  }
}

TEST_F(FilesystemSourceTest, RecordsEachStripesCursorOnTheBoard) {
  auto board = std::make_shared<runtime::SourcePositionBoard>();
  auto source = MakeSource(FsTable(), board, 1 << 20);
  const SplitLayout layout;
  const std::string a = dir_.path() + "/a.json";
  const uint32_t a_stripe = layout.StripeOf(a, 0);
  CollectingCollector out;
  runtime::StateWriter s0;
  ASSERT_TRUE(source->SnapshotPosition(runtime::CheckpointId(1), s0).ok());
  Result<FilePosition> at_start = FilePosition::FromJson(
      board->PositionsAt(runtime::CheckpointId(1)).at("source-events/0"), layout);
  ASSERT_TRUE(at_start.ok()) << at_start.status().ToString();
  EXPECT_EQ(at_start->cursors.size(), layout.stripes);  // one subtask: every stripe
  EXPECT_EQ(at_start->cursors.at(a_stripe), (StripeCursor{a, 0, 0}));
  ASSERT_TRUE(source->Poll(out).ok());  // all of a.json
  runtime::StateWriter s1;
  ASSERT_TRUE(source->SnapshotPosition(runtime::CheckpointId(2), s1).ok());
  std::string json = board->PositionsAt(runtime::CheckpointId(2)).at("source-events/0");
  EXPECT_EQ(json.rfind("{\"files\":[{\"cursors\":[[", 0), 0u) << json;
  EXPECT_NE(json.find("\"split_bytes\":4194304,\"stripes\":128}"), std::string::npos) << json;
  Result<FilePosition> parsed = FilePosition::FromJson(json, layout);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, source->position());
  EXPECT_NE(parsed->cursors.at(a_stripe), (StripeCursor{a, 0, 0}));  // a.json is done
  // Earlier releases' single-reader form: every stripe's cursor at that byte.
  uint64_t a_size = Lines(1, 10).size();
  Result<FilePosition> legacy = FilePosition::FromJson(OldPosition(a, a_size, 11), layout);
  ASSERT_TRUE(legacy.ok()) << legacy.status().ToString();
  EXPECT_EQ(*legacy, FilePosition::AtByte(layout, a, a_size));
  EXPECT_EQ(legacy->cursors.at(a_stripe), (StripeCursor{a, 0, a_size}));
  for (const char* bad : {"{\"file\":1}", "{\"split_bytes\":0,\"stripes\":2,\"files\":[]}",
                          "{\"split_bytes\":8,\"stripes\":2,\"files\":[{\"file\":\"x\","
                          "\"cursors\":[[2,0,0]]}]}",
                          "{\"split_bytes\":8,\"stripes\":2,\"files\":[{\"file\":\"x\","
                          "\"cursors\":[[1,0,0],[1,3,0]]}]}"}) {
    EXPECT_FALSE(FilePosition::FromJson(bad, layout).ok()) << bad;
  }
}

TEST_F(FilesystemSourceTest, StartOverrideBeatsRestoredState) {
  auto board = std::make_shared<runtime::SourcePositionBoard>();
  runtime::StateWriter state;
  state.PutU32(1);
  state.PutString(dir_.path() + "/a.json");
  state.PutU64(0);
  state.PutI64(1);
  // The table holds everything up to line 6 of b.jsonl (rows 11..15).
  uint64_t offset = Lines(11, 15).size();
  board->SetStartOverrides({{"source-events/0", OldPosition(dir_.path() + "/b.jsonl", offset, 6)}});
  auto source = MakeSource(FsTable(), board);
  std::string blob = state.Finish();
  runtime::StateReader reader(blob);
  ASSERT_TRUE(source->Restore(reader).ok());
  CollectingCollector out;
  PollAll(*source, out);
  EXPECT_EQ(Int64Column(out.batches, 0), Range(16, 30));
}

TEST_F(FilesystemSourceTest, APositionInAFileThatIsGoneContinuesWithTheNextFile) {
  auto board = std::make_shared<runtime::SourcePositionBoard>();
  board->SetStartOverrides({{"source-events/0", OldPosition(dir_.path() + "/b.json", 999, 40)}});
  auto source = MakeSource(FsTable(), board);
  CollectingCollector out;
  PollAll(*source, out);
  EXPECT_EQ(Int64Column(out.batches, 0), Range(11, 30));  // b.jsonl sorts after b.json
}

// A name from a Latin-1 system: not UTF-8, so JSON cannot hold it as is. It is read like any
// other file, and its position (in the state and as JSON on the board, which the Iceberg sink
// commits) comes back byte for byte: no crash when checkpointing, none when restoring.
TEST_F(FilesystemSourceTest, AFileNameThatIsNotUtf8IsReadCheckpointedAndRestoredExactly) {
  const std::string bad = dir_.path() + "/bad\xff.json";  // sorts between b.jsonl and c.json
  WriteText(bad, Lines(31, 35));
  std::vector<int64_t> all = Range(1, 25);
  for (int64_t i = 31; i <= 35; ++i) all.push_back(i);
  for (int64_t i = 26; i <= 30; ++i) all.push_back(i);
  CollectingCollector full;
  PollAll(*MakeSource(FsTable(), nullptr), full);
  ASSERT_EQ(Int64Column(full.batches, 0), all);
  bool was_in_bad_file = false;
  for (size_t k = 0; k <= full.batches.size() + 2; ++k) {
    auto board = std::make_shared<runtime::SourcePositionBoard>();
    auto first = MakeSource(FsTable(), board);
    CollectingCollector out;
    PollAll(*first, out, static_cast<int>(k));
    runtime::StateWriter state;
    Status st = first->SnapshotPosition(runtime::CheckpointId(k + 1), state);
    ASSERT_TRUE(st.ok()) << st.ToString();
    for (const auto& [stripe, cursor] : first->position().cursors) {
      was_in_bad_file |= cursor.file == bad && cursor.offset > 0;
    }
    std::string json = board->PositionsAt(runtime::CheckpointId(k + 1)).at("source-events/0");
    Result<FilePosition> parsed = FilePosition::FromJson(json, SplitLayout{});
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(*parsed, first->position()) << json;

    // Restored from the state blob.
    auto from_state = MakeSource(FsTable(), board);
    std::string blob = state.Finish();
    runtime::StateReader reader(blob);
    ASSERT_TRUE(from_state->Restore(reader).ok());
    CollectingCollector rest = out;
    PollAll(*from_state, rest);
    EXPECT_EQ(Int64Column(rest.batches, 0), all) << "from the state, after " << k << " polls";

    // Restored from the table's position (the board's JSON, as the sink commits it).
    auto table_board = std::make_shared<runtime::SourcePositionBoard>();
    table_board->SetStartOverrides({{"source-events/0", json}});
    auto from_table = MakeSource(FsTable(), table_board);
    CollectingCollector rest2 = out;
    PollAll(*from_table, rest2);
    EXPECT_EQ(Int64Column(rest2.batches, 0), all) << "from the table, after " << k << " polls";
  }
  EXPECT_TRUE(was_in_bad_file);
}

TEST_F(FilesystemSourceTest, ABadLineFailsWithFileAndLine) {
  WriteText(dir_.path() + "/b.jsonl", Lines(11, 13) + "{\"id\":\"x\"}\n" + Lines(15, 25));
  auto source = MakeSource(FsTable(), nullptr, 1 << 20);
  CollectingCollector out;
  ASSERT_EQ(*source->Poll(out), runtime::SourceStatus::kMore);  // a.json
  Result<runtime::SourceStatus> r = source->Poll(out);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("b.jsonl:4"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("'id'"), std::string::npos) << r.status().message();
  EXPECT_EQ(Int64Column(out.batches, 0), Range(1, 10));  // nothing of the failing chunk
}

TEST_F(FilesystemSourceTest, AByteOrderMarkIsSkippedAtTheStartOfEachFileOnly) {
  const std::string bom = "\xEF\xBB\xBF";
  WriteText(dir_.path() + "/a.json", bom + Lines(1, 10));
  WriteText(dir_.path() + "/b.jsonl", bom + Lines(11, 25));
  CollectingCollector out;
  EXPECT_EQ(PollAll(*MakeSource(FsTable(), nullptr), out), runtime::SourceStatus::kEnd);
  EXPECT_EQ(Int64Column(out.batches, 0), Range(1, 30));
  // Files joined with cat: the second file's mark is in the middle.
  WriteText(dir_.path() + "/b.jsonl", Lines(11, 13) + bom + Lines(14, 25));
  auto source = MakeSource(FsTable(), nullptr, 1 << 20);
  CollectingCollector rest;
  ASSERT_EQ(*source->Poll(rest), runtime::SourceStatus::kMore);  // a.json
  Result<runtime::SourceStatus> r = source->Poll(rest);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(
                "b.jsonl:4: stray UTF-8 byte-order mark (EF BB BF) at the start of the line"),
            std::string::npos)
      << r.status().message();
}

TEST_F(FilesystemSourceTest, IgnoreParseErrorsSkipsBadLines) {
  WriteText(dir_.path() + "/b.jsonl", Lines(11, 13) + "{\"id\":\"x\"}\n" + Lines(15, 25));
  auto source = MakeSource(FsTable({{"json.ignore-parse-errors", "true"}}), nullptr);
  CollectingCollector out;
  EXPECT_EQ(PollAll(*source, out), runtime::SourceStatus::kEnd);
  std::vector<int64_t> want = Range(1, 13);
  for (int64_t i = 15; i <= 30; ++i) want.push_back(i);
  EXPECT_EQ(Int64Column(out.batches, 0), want);
}

// 'format' = 'debezium-json': each line one change event; the rows carry their kinds after the
// table's columns; a bad event names its file and line; each format's options are its own.
TEST_F(FilesystemSourceTest, DebeziumJsonLinesAreChangeEventsWithTheirRowKinds) {
  std::filesystem::remove_all(dir_.path());
  std::filesystem::create_directories(dir_.path());
  WriteText(
      dir_.path() + "/changes.jsonl",
      "{\"op\":\"c\",\"before\":null,\"after\":{\"id\":1,\"name\":\"a\"}}\n"
      "\n"
      "{\"op\":\"u\",\"before\":{\"id\":1,\"name\":\"a\"},\"after\":{\"id\":1,\"name\":\"b\"}}\n"
      "{\"op\":\"d\",\"before\":{\"id\":1,\"name\":\"b\"},\"after\":null}\n");
  const TableDescriptor table = FsTable({{"format", "debezium-json"}});
  EXPECT_TRUE(IsFilesystemChangelogSource(table));
  EXPECT_FALSE(IsFilesystemChangelogSource(FsTable()));
  CollectingCollector out;
  EXPECT_EQ(PollAll(*MakeSource(table, nullptr, 1 << 20), out), runtime::SourceStatus::kEnd);
  ASSERT_EQ(out.batches.size(), 1u);
  const RecordBatch& b = out.batches[0];
  ASSERT_EQ(b.num_columns(), 3u);
  std::string kinds;
  for (size_t r = 0; r < b.num_rows(); ++r) {
    kinds += std::string(b.column(2).GetBytes(r)) + std::string(b.column(1).GetBytes(r)) + " ";
  }
  EXPECT_EQ(kinds, "+Ia -Ua +Ub -Db ");

  WriteText(dir_.path() + "/changes.jsonl",
            "{\"op\":\"c\",\"after\":{\"id\":1}}\n{\"op\":\"x\",\"after\":{\"id\":2}}\n");
  CollectingCollector failed;
  Result<runtime::SourceStatus> r = MakeSource(table, nullptr, 1 << 20)->Poll(failed);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("changes.jsonl:2: "), std::string::npos)
      << r.status().message();
  EXPECT_TRUE(failed.batches.empty());  // nothing of the failing chunk

  Result<FilesystemSourceConfig> mixed = MakeFilesystemSourceConfig(
      FsTable({{"format", "debezium-json"}, {"json.ignore-parse-errors", "true"}}));
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find(
                "option 'json.ignore-parse-errors' applies to 'format' = 'json' only"),
            std::string::npos)
      << mixed.status().message();
}

TEST_F(FilesystemSourceTest, RefusesBadOptionsAtPlanTime) {
  Result<FilesystemSourceConfig> r =
      MakeFilesystemSourceConfig(FsTable({{"path", dir_.path() + "/missing"}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("option 'path' must name an existing file"),
            std::string::npos)
      << r.status().message();
  r = MakeFilesystemSourceConfig(FsTable({{"format", "csv"}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("option 'format' must be 'json' or 'debezium-json'"),
            std::string::npos);
  r = MakeFilesystemSourceConfig(FsTable({{"json.ignore-parse-errors", "yes"}}));
  ASSERT_FALSE(r.ok());
  // Flink's continuous mode is refused, not ignored: the source reads the files once.
  r = MakeFilesystemSourceConfig(FsTable({{"source.monitor-interval", "10 s"}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(
                "option 'source.monitor-interval' is not supported yet (the filesystem source is "
                "bounded: it reads the files present when the job starts)"),
            std::string::npos)
      << r.status().message();
  // Flink's filesystem connector has no source parallelism option: the job's parallelism rules.
  r = MakeFilesystemSourceConfig(FsTable({{"scan.parallelism", "2"}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unsupported option 'scan.parallelism'"), std::string::npos)
      << r.status().message();
  r = MakeFilesystemSourceConfig(FsTable({{"paht", "x"}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(
                "unsupported option 'paht' (did you mean 'path'?) for connector 'filesystem'"),
            std::string::npos)
      << r.status().message();
  // The Kafka source's rule: Flink's two spellings, both timestamp forms read either way.
  r = MakeFilesystemSourceConfig(FsTable({{"json.timestamp-format.standard", "ISO"}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(
      r.status().message().find(
          "option 'json.timestamp-format.standard' must be 'SQL' (\"2020-12-30 "
          "12:13:14.123\", the default) or 'ISO-8601' (\"2020-12-30T12:13:14.123\"), got 'ISO'"),
      std::string::npos)
      << r.status().message();
  for (const char* standard : {"SQL", "ISO-8601"}) {
    EXPECT_TRUE(
        MakeFilesystemSourceConfig(FsTable({{"json.timestamp-format.standard", standard}})).ok());
  }
}

TEST_F(FilesystemSourceTest, LocalJobReadsEverythingAndTakesAFinalCheckpoint) {
  JobContext context;
  context.positions = std::make_shared<runtime::SourcePositionBoard>();
  auto collected = std::make_shared<testing::Collected>();
  runtime::JobGraph graph;
  Result<runtime::VertexId> src = AddFilesystemSource(graph, "source-events", FsTable(), context);
  ASSERT_TRUE(src.ok()) << src.status().ToString();
  runtime::VertexId sink = graph.AddOperator("sink", 1, testing::CollectingSinkFactory(collected));
  graph.Connect(*src, sink, runtime::Partitioning::Forward());
  runtime::LocalJobOptions options;
  options.timer_thread = false;
  auto job = runtime::LocalJob::Make(graph, options).ValueOrDie();
  ASSERT_TRUE(job->Start().ok());
  ASSERT_TRUE(job->Wait().ok());
  EXPECT_EQ(Int64Column(collected->Batches(), 0), Range(1, 30));
  runtime::CheckpointId final_id = job->last_completed();
  ASSERT_TRUE(final_id.valid());
  Result<FilePosition> end = FilePosition::FromJson(
      context.positions->PositionsAt(final_id).at("source-events/0"), SplitLayout{});
  ASSERT_TRUE(end.ok());
  ASSERT_EQ(end->cursors.size(), SplitLayout{}.stripes);
  for (const auto& [stripe, cursor] : end->cursors) {
    EXPECT_EQ(cursor, (StripeCursor{dir_.path() + "/c.json", 1, 0})) << "stripe " << stripe;
  }
}

// Rows of every subtask of `parallelism`, each polled to the end.
std::vector<int64_t> ReadAllSubtasks(
    const std::function<std::unique_ptr<FilesystemSource>(uint32_t subtask, uint32_t parallelism)>&
        make,
    uint32_t parallelism) {
  std::vector<int64_t> ids;
  for (uint32_t i = 0; i < parallelism; ++i) {
    CollectingCollector out;
    auto source = make(i, parallelism);
    while (true) {
      Result<runtime::SourceStatus> r = source->Poll(out);
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      if (!r.ok() || *r == runtime::SourceStatus::kEnd) break;
    }
    std::vector<int64_t> got = Int64Column(out.batches, 0);
    ids.insert(ids.end(), got.begin(), got.end());
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// Each file is cut into splits; every subtask reads its stripes' splits, and together they
// read every line once, whatever the split size (smaller than a line, a line across splits,
// one split per file) and the parallelism (more subtasks than splits).
TEST_F(FilesystemSourceTest, SubtasksReadEveryLineOnceWhateverTheSplitSize) {
  WriteText(dir_.path() + "/d.json", Lines(31, 400));
  for (uint64_t split_bytes : {7, 64, 100, 1000, 1 << 22}) {
    for (uint32_t parallelism : {1, 2, 3, 5}) {
      std::vector<int64_t> ids = ReadAllSubtasks(
          [&](uint32_t i, uint32_t p) {
            return MakeSource(FsTable(), nullptr, 64, i, p, split_bytes);
          },
          parallelism);
      EXPECT_EQ(ids, Range(1, 400)) << split_bytes << "-byte splits, parallelism " << parallelism;
    }
  }
}

// A checkpoint of two subtasks after any number of polls each, restored by 1, 2 or 3 subtasks
// (from the state blobs and from the board's JSON, as the table holds it): every line once.
TEST_F(FilesystemSourceTest, RestoresAtAnotherParallelismAfterAnyNumberOfPolls) {
  WriteText(dir_.path() + "/d.json", Lines(31, 200));
  const uint64_t split_bytes = 150;
  for (int polls = 0; polls <= 40; polls += 3) {
    auto board = std::make_shared<runtime::SourcePositionBoard>();
    std::vector<int64_t> before;
    std::vector<std::string> blobs;
    std::map<std::string, std::string> jsons;
    for (uint32_t i = 0; i < 2; ++i) {
      auto old = MakeSource(FsTable(), board, 64, i, 2, split_bytes);
      CollectingCollector out;
      PollAll(*old, out, polls);
      std::vector<int64_t> got = Int64Column(out.batches, 0);
      before.insert(before.end(), got.begin(), got.end());
      runtime::StateWriter state;
      ASSERT_TRUE(old->SnapshotPosition(runtime::CheckpointId(1), state).ok());
      blobs.push_back(state.Finish());
      const std::string task = "source-events/" + std::to_string(i);
      jsons[task] = board->PositionsAt(runtime::CheckpointId(1)).at(task);
    }
    for (uint32_t parallelism : {1, 2, 3}) {
      std::vector<int64_t> from_state = ReadAllSubtasks(
          [&](uint32_t i, uint32_t p) {
            auto source =
                MakeSource(FsTable(), nullptr, 64, i, p, 1 << 20);  // the blobs' layout wins
            Status st;
            if (p == blobs.size()) {
              runtime::StateReader reader(blobs[i]);
              st = source->Restore(reader);
            } else {
              st = source->RestoreRescaled(blobs);
            }
            EXPECT_TRUE(st.ok()) << st.ToString();
            return source;
          },
          parallelism);
      from_state.insert(from_state.end(), before.begin(), before.end());
      std::sort(from_state.begin(), from_state.end());
      EXPECT_EQ(from_state, Range(1, 200)) << polls << " polls, restored by " << parallelism;

      auto table = std::make_shared<runtime::SourcePositionBoard>();
      table->SetStartOverrides(jsons);
      std::vector<int64_t> from_table = ReadAllSubtasks(
          [&](uint32_t i, uint32_t p) { return MakeSource(FsTable(), table, 64, i, p); },
          parallelism);
      from_table.insert(from_table.end(), before.begin(), before.end());
      std::sort(from_table.begin(), from_table.end());
      EXPECT_EQ(from_table, Range(1, 200)) << polls << " polls, table, " << parallelism;
    }
  }
}

// A split that starts mid-file does not know its line numbers: a bad line there is still named
// by its line in the file.
TEST_F(FilesystemSourceTest, ABadLineInASplitMidFileNamesItsLineInTheFile) {
  WriteText(dir_.path() + "/d.json", Lines(31, 60) + "{\"id\":\"x\"}\n" + Lines(62, 90));
  Status failed;
  for (uint32_t i = 0; i < 2; ++i) {
    auto source = MakeSource(FsTable(), nullptr, 64, i, 2, 100);
    CollectingCollector out;
    while (true) {
      Result<runtime::SourceStatus> r = source->Poll(out);
      if (!r.ok()) failed = r.status();
      if (!r.ok() || *r == runtime::SourceStatus::kEnd) break;
    }
  }
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("d.json:31: "), std::string::npos) << failed.message();
}

}  // namespace
}  // namespace floe::connectors

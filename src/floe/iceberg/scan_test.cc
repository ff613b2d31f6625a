#include "floe/iceberg/scan.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <random>

#include "floe/format/json/json_lines.h"
#include "floe/iceberg/catalog.h"
#include "floe/iceberg/data_test_util.h"
#include "floe/iceberg/data_writer.h"
#include "floe/iceberg/rewrite.h"
#include "floe/iceberg/snapshot_update.h"
#include "floe/io/file.h"

namespace floe::iceberg {
namespace {

using testing::Describe;
using testing::MakeBatch;
using testing::Micros;
using testing::Row;
using testing::RowsOf;
using testing::Sorted;
using testing::TableHarness;
using testing::TempDir;
using testing::TypesOf;

// ---- The model: Iceberg semantics on a plain list of rows ----------------------------------

struct Model {
  std::vector<size_t> key_cols;
  std::vector<Row> rows;

  bool SameKey(const Row& a, const Row& b) const {
    for (size_t c : key_cols) {
      if (a[c] != b[c]) return false;  // monostate == monostate: null equals null
    }
    return true;
  }
  void Remove(const Row& key_row) {
    std::erase_if(rows, [&](const Row& r) { return SameKey(r, key_row); });
  }
  void Upsert(const Row& row) {
    Remove(row);
    rows.push_back(row);
  }
};

struct Op {
  enum Kind { kUpsert, kDelete, kAppend } kind;
  Row row;
};

// Builds the DeltaWriter input of one commit from ops (consecutive ops of one kind share a
// batch) and applies them to the model.
std::vector<std::pair<bool, RecordBatch>> Batches(const std::vector<Op>& ops,
                                                  const std::shared_ptr<const BatchSchema>& bs,
                                                  Model* model) {
  std::vector<std::pair<bool, RecordBatch>> out;
  std::vector<Row> pending;
  bool pending_delete = false;
  auto flush = [&] {
    if (!pending.empty()) out.emplace_back(pending_delete, MakeBatch(bs, pending));
    pending.clear();
  };
  for (const Op& op : ops) {
    bool is_delete = op.kind == Op::kDelete;
    if (is_delete != pending_delete) flush();
    pending_delete = is_delete;
    pending.push_back(op.row);
    if (op.kind == Op::kDelete) model->Remove(op.row);
    if (op.kind == Op::kUpsert) model->Upsert(op.row);
    if (op.kind == Op::kAppend) model->rows.push_back(op.row);
  }
  flush();
  return out;
}

Schema ProviderSchema(bool composite_key) {
  Schema s;
  s.fields = {
      Field{"id", DataType::Int64(), false, 1},
      Field{"region", DataType::String(), !composite_key, 2},
      Field{"name", DataType::String(), true, 3},
      Field{"score", DataType::Double(), true, 4},
      Field{"updated_at", DataType::TimestampTz(), true, 5},
      Field{"opens_at", DataType::Time(), true, 6},
  };
  s.identifier_field_ids = composite_key ? std::vector<int32_t>{2, 1} : std::vector<int32_t>{1};
  return s;
}

Row ProviderRow(std::mt19937& rng, int64_t id, int version) {
  // The region is a function of the id, so the composite key (region, id) never puts one id in
  // two regions (icebird ignores the partition scope of deletes).
  Value region = Value(std::string("r") + std::to_string(id % 3));
  Value name =
      rng() % 7 == 0 ? Value{} : Value("p" + std::to_string(id) + "v" + std::to_string(version));
  Value score = rng() % 9 == 0 ? Value{} : Value(static_cast<double>(rng() % 1000) / 10.0);
  Value opens = rng() % 5 == 0 ? Value{} : Value(int64_t(rng() % 86'400) * 1'000'000 + version);
  return {id, region, name, score, Value(Micros(2024, 5, 1 + version % 28, id % 24)), opens};
}

void WriteExpected(const TableHarness& h, const Schema& schema, const std::vector<Row>& rows);

// Several commits of appends, upserts (with repeated keys inside a commit), deletes and
// delete-only commits; after each commit the scan must equal the model, and at the end every
// earlier snapshot must still read as the model did then.
// With compact_every > 0, RewriteDataFiles (deletes applied, small files merged) runs after every
// compact_every-th commit and the scan must still equal the model; a last rewrite of every file
// leaves no delete file.
void RunModelCheck(const std::string& name, const std::string& partition_clause, bool composite_key,
                   const std::map<std::string, std::string>& props, int compact_every = 0) {
  TempDir tmp;
  Schema schema = ProviderSchema(composite_key);
  auto made = TableHarness::Make(tmp.path(), "floe_data", name, schema, partition_clause, props,
                                 /*for_interop=*/true);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  TableHarness& h = **made;
  auto bs = schema.ToBatchSchema();
  std::vector<DataType> types = TypesOf(schema);
  Model model;
  model.key_cols = composite_key ? std::vector<size_t>{0, 1} : std::vector<size_t>{0};

  std::mt19937 rng(42);
  std::vector<std::pair<int64_t, std::vector<Row>>> history;  // snapshot id -> model rows
  int64_t next_id = 0;
  for (int commit = 0; commit < 8; ++commit) {
    std::vector<Op> ops;
    WriteMode mode = WriteMode::kUpsert;
    if (commit == 0 || commit == 4) {
      mode = WriteMode::kAppend;  // fresh ids, plus (commit 4) duplicates of existing ids
      for (int i = 0; i < 60; ++i)
        ops.push_back({Op::kAppend, ProviderRow(rng, next_id++, commit)});
      if (commit == 4) {
        for (int64_t id : {1, 2, 5}) ops.push_back({Op::kAppend, ProviderRow(rng, id, commit)});
      }
    } else if (commit == 6) {
      mode = WriteMode::kDelete;
      for (int i = 0; i < 10; ++i) {
        ops.push_back({Op::kDelete, ProviderRow(rng, static_cast<int64_t>(rng() % next_id), 0)});
      }
    } else {
      for (int i = 0; i < 50; ++i) {
        int64_t id = rng() % 4 == 0 ? next_id++ : static_cast<int64_t>(rng() % (next_id + 1));
        if (id == next_id) ++next_id;
        bool del = rng() % 6 == 0;
        ops.push_back({del ? Op::kDelete : Op::kUpsert, ProviderRow(rng, id, commit)});
      }
      // The same key several times in one commit: the last write wins.
      ops.push_back({Op::kUpsert, ProviderRow(rng, 3, commit * 10 + 1)});
      ops.push_back({Op::kUpsert, ProviderRow(rng, 3, commit * 10 + 2)});
      if (commit == 2) ops.push_back({Op::kDelete, ProviderRow(rng, 3, 0)});
      if (commit == 5) {  // deleted then re-inserted within the commit
        ops.push_back({Op::kDelete, ProviderRow(rng, 10, 0)});
        ops.push_back({Op::kUpsert, ProviderRow(rng, 10, 55)});
      }
    }
    auto batches = Batches(ops, bs, &model);
    auto snap = h.CommitDelta(mode, batches);
    ASSERT_TRUE(snap.ok()) << "commit " << commit << ": " << snap.status().ToString();
    history.emplace_back(snap->snapshot_id, model.rows);
    auto scanned = h.Scan();
    ASSERT_TRUE(scanned.ok()) << scanned.status().ToString();
    ASSERT_EQ(Sorted(*scanned), Sorted(model.rows))
        << "after commit " << commit << "\nscan:\n"
        << Describe(Sorted(*scanned), types) << "model:\n"
        << Describe(Sorted(model.rows), types);
    if (compact_every > 0 && (commit + 1) % compact_every == 0) {
      CompactOptions options;
      options.min_input_files = 2;
      options.delete_file_threshold = 1;
      auto compacted = h.Compact(options);
      ASSERT_TRUE(compacted.ok()) << compacted.status().ToString();
      EXPECT_TRUE(compacted->snapshot_id.has_value()) << "commit " << commit;
      auto after = h.Scan();
      ASSERT_TRUE(after.ok()) << after.status().ToString();
      ASSERT_EQ(Sorted(*after), Sorted(model.rows)) << "after compaction at commit " << commit;
    }
  }
  if (compact_every > 0) {
    CompactOptions all;
    all.rewrite_all = true;
    auto compacted = h.Compact(all);
    ASSERT_TRUE(compacted.ok()) << compacted.status().ToString();
    EXPECT_EQ(compacted->delete_files_after, 0);
    EXPECT_EQ(compacted->rows_written, static_cast<int64_t>(model.rows.size()));
    auto after = h.Scan();
    ASSERT_TRUE(after.ok()) << after.status().ToString();
    ASSERT_EQ(Sorted(*after), Sorted(model.rows)) << "after rewriting every file";
  }
  for (const auto& [snapshot_id, rows] : history) {
    auto scanned = h.Scan(snapshot_id);
    ASSERT_TRUE(scanned.ok()) << scanned.status().ToString();
    EXPECT_EQ(Sorted(*scanned), Sorted(rows)) << "snapshot " << snapshot_id;
  }
  // The commits above must have exercised equality deletes across commits.
  auto md = h.Load();
  ASSERT_TRUE(md.ok()) << md.status().ToString();
  auto tasks = PlanScan(io::FileIO(), *md);
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  size_t with_deletes = 0;
  for (const FileScanTask& t : *tasks) with_deletes += t.equality_deletes.empty() ? 0 : 1;
  EXPECT_EQ(with_deletes > 0, compact_every == 0);
  WriteExpected(h, schema, model.rows);
}

TEST(ScanEndToEnd, UnpartitionedUpsertsAndDeletesMatchTheModel) {
  RunModelCheck("upsert_plain", "", false, {});
}

TEST(ScanEndToEnd, BucketPartitionedUpsertsWithSmallFilesMatchTheModel) {
  RunModelCheck(
      "upsert_bucketed", "bucket(4, id)", false,
      {{"write.target-file-size-bytes", "4096"}, {"write.parquet.compression-codec", "snappy"}});
}

TEST(ScanEndToEnd, CompositeKeyPartitionedByAKeyColumnMatchesTheModel) {
  RunModelCheck("upsert_region", "region", true, {});
}

TEST(ScanEndToEnd, CompactedEveryTwoCommitsMatchesTheModel) {
  RunModelCheck("upsert_compacted", "", false, {}, /*compact_every=*/2);
}

TEST(ScanEndToEnd, BucketPartitionedCompactedEveryThreeCommitsMatchesTheModel) {
  RunModelCheck("upsert_bucketed_compacted", "bucket(4, id)", false,
                {{"write.target-file-size-bytes", "4096"}}, /*compact_every=*/3);
}

// ---- Targeted cases ---------------------------------------------------------------------------

Schema SimpleSchema() {
  Schema s;
  s.fields = {Field{"id", DataType::Int64(), false, 1}, Field{"tag", DataType::String(), true, 2},
              Field{"region", DataType::String(), true, 3}};
  s.identifier_field_ids = {1};
  return s;
}

Row R(int64_t id, Value tag, Value region = Value{}) { return {id, std::move(tag), region}; }

TEST(Scan, EmptyTablePlansNoTasksAndUnknownSnapshotIsNotFound) {
  TempDir tmp;
  auto h = TableHarness::Make(tmp.path(), "db", "empty", SimpleSchema(), "", {});
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, (*h)->Load());
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<FileScanTask> tasks, PlanScan(io::FileIO(), md));
  EXPECT_TRUE(tasks.empty());
  auto missing = PlanScan(io::FileIO(), md, 12345);
  EXPECT_TRUE(missing.status().IsNotFound()) << missing.status().ToString();
}

TEST(Scan, EqualityDeleteOfAnOlderCommitDoesNotApplyToNewerRows) {
  TempDir tmp;
  auto made = TableHarness::Make(tmp.path(), "db", "eq_seq", SimpleSchema(), "", {});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  TableHarness& h = **made;
  auto bs = SimpleSchema().ToBatchSchema();
  FLOE_ASSERT_OK_AND_ASSIGN(
      Snapshot s1,
      h.CommitDelta(WriteMode::kAppend, {{false, MakeBatch(bs, {R(1, "a"), R(2, "b")})}}));
  FLOE_ASSERT_OK_AND_ASSIGN(
      Snapshot s2, h.CommitDelta(WriteMode::kDelete, {{false, MakeBatch(bs, {R(1, {})})}}));
  FLOE_ASSERT_OK_AND_ASSIGN(
      Snapshot s3, h.CommitDelta(WriteMode::kAppend, {{false, MakeBatch(bs, {R(1, "again")})}}));
  EXPECT_LT(s1.sequence_number, s2.sequence_number);
  EXPECT_LT(s2.sequence_number, s3.sequence_number);
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<Row> rows, h.Scan());
  EXPECT_EQ(Sorted(rows), Sorted({R(1, "again"), R(2, "b")}));

  // The plan shows why: the delete is attached to the old file only.
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, h.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<FileScanTask> tasks, PlanScan(io::FileIO(), md));
  ASSERT_EQ(tasks.size(), 2u);
  for (const FileScanTask& t : tasks) {
    EXPECT_EQ(t.equality_deletes.size(), t.data_sequence_number == s1.sequence_number ? 1u : 0u);
    EXPECT_TRUE(t.position_deletes.empty());
  }
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<Row> at_s2, h.Scan(s2.snapshot_id));
  EXPECT_EQ(at_s2, std::vector<Row>{R(2, "b")});
}

TEST(Scan, PositionDeletesApplyToOlderAndSameCommitFilesOfTheirPartition) {
  TempDir tmp;
  auto made = TableHarness::Make(tmp.path(), "db", "pos", SimpleSchema(), "region", {});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  TableHarness& h = **made;
  auto bs = SimpleSchema().ToBatchSchema();

  // Commit 1: one file per region.
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, h.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(FileWriterConfig config, h.Config(md));
  FLOE_ASSERT_OK_AND_ASSIGN(auto writer, DataFileWriter::Make(md, config));
  std::vector<Row> first;
  for (int64_t i = 0; i < 10; ++i)
    first.push_back(R(i, "t" + std::to_string(i), i < 5 ? "a" : "b"));
  FLOE_ASSERT_OK(writer->Add(MakeBatch(bs, first)));
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<DataFile> files1, writer->Finish());
  ASSERT_EQ(files1.size(), 2u);
  FLOE_ASSERT_OK(h.Commit(WriteResult{files1, {}}).status());
  const DataFile& file_a =
      files1[0].partition[0] == Value(std::string("a")) ? files1[0] : files1[1];

  // Commit 2: a new file in region a, and position deletes for row 1 of the old file, row 0 of
  // the new one (same commit: applies), and a delete filed under the wrong partition (ignored).
  FLOE_ASSERT_OK_AND_ASSIGN(md, h.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(config, h.Config(md));
  FLOE_ASSERT_OK_AND_ASSIGN(writer, DataFileWriter::Make(md, config));
  FLOE_ASSERT_OK(writer->Add(MakeBatch(bs, {R(20, "new0", "a"), R(21, "new1", "a")})));
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<DataFile> files2, writer->Finish());
  ASSERT_EQ(files2.size(), 1u);
  FLOE_ASSERT_OK_AND_ASSIGN(config, h.Config(md));
  FLOE_ASSERT_OK_AND_ASSIGN(auto pos, PositionDeleteWriter::Make(md, config));
  FLOE_ASSERT_OK(pos->Add(file_a, 1));
  FLOE_ASSERT_OK(pos->Add(files2[0], 0));
  FLOE_ASSERT_OK(pos->Add(file_a.file_path, 3, {Value(std::string("b"))}));  // wrong partition
  FLOE_ASSERT_OK(pos->Add(file_a, 1000));  // beyond the file: harmless
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<DataFile> deletes, pos->Finish());
  FLOE_ASSERT_OK_AND_ASSIGN(Snapshot s2, h.Commit(WriteResult{files2, deletes}));

  std::vector<Row> expected;
  for (const Row& r : first) {
    if (std::get<int64_t>(r[0]) != 1) expected.push_back(r);
  }
  expected.push_back(R(21, "new1", "a"));
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<Row> rows, h.Scan());
  EXPECT_EQ(Sorted(rows), Sorted(expected)) << Describe(Sorted(rows), TypesOf(SimpleSchema()));

  // Commit 3: new data is not touched by the older position deletes.
  FLOE_ASSERT_OK_AND_ASSIGN(md, h.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(config, h.Config(md));
  FLOE_ASSERT_OK_AND_ASSIGN(writer, DataFileWriter::Make(md, config));
  FLOE_ASSERT_OK(writer->Add(MakeBatch(bs, {R(30, "x", "a")})));
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<DataFile> files3, writer->Finish());
  FLOE_ASSERT_OK(h.Commit(WriteResult{files3, {}}).status());
  FLOE_ASSERT_OK_AND_ASSIGN(md, h.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<FileScanTask> tasks, PlanScan(io::FileIO(), md));
  ASSERT_EQ(tasks.size(), 4u);
  for (const FileScanTask& t : tasks) {
    if (t.data_sequence_number > s2.sequence_number) {
      EXPECT_TRUE(t.position_deletes.empty());
    }
  }
  expected.push_back(R(30, "x", "a"));
  FLOE_ASSERT_OK_AND_ASSIGN(rows, h.Scan());
  EXPECT_EQ(Sorted(rows), Sorted(expected));
}

TEST(Scan, PartitionedEqualityDeletesStayInTheirPartitionAndNullMatchesNull) {
  TempDir tmp;
  auto made = TableHarness::Make(tmp.path(), "db", "eq_scope", SimpleSchema(), "region", {});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  TableHarness& h = **made;
  auto bs = SimpleSchema().ToBatchSchema();
  FLOE_ASSERT_OK(
      h.CommitDelta(WriteMode::kAppend,
                    {{false, MakeBatch(bs, {R(1, "x", "a"), R(2, "x", "b"), R(3, {}, "a"),
                                            R(4, "y", "a"), R(5, {}, {}), R(6, "x", {})})}})
          .status());
  // Delete tag = 'x' in region a, tag IS NULL in region a, and tag = 'x' in the null region.
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, h.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(FileWriterConfig config, h.Config(md));
  FLOE_ASSERT_OK_AND_ASSIGN(auto eq, EqualityDeleteWriter::Make(md, {2}, config));
  FLOE_ASSERT_OK(eq->Add(MakeBatch(bs, {R(0, "x", "a"), R(0, {}, "a"), R(0, "x", {})})));
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<DataFile> deletes, eq->Finish());
  EXPECT_EQ(deletes.size(), 2u);  // partitions a and null
  FLOE_ASSERT_OK(h.Commit(WriteResult{{}, deletes}).status());
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<Row> rows, h.Scan());
  EXPECT_EQ(Sorted(rows), Sorted({R(2, "x", "b"), R(4, "y", "a"), R(5, {}, {})}));
}

TEST(Scan, ProjectsOldFilesToTheCurrentSchema) {
  TempDir tmp;
  Schema s;
  s.fields = {Field{"id", DataType::Int32(), false, 1}, Field{"f", DataType::Float(), true, 2},
              Field{"gone", DataType::String(), true, 3}};
  s.identifier_field_ids = {1};
  auto made = TableHarness::Make(tmp.path(), "db", "evolve", s, "", {});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  TableHarness& h = **made;
  FLOE_ASSERT_OK(h.CommitDelta(WriteMode::kAppend,
                               {{false, MakeBatch(s.ToBatchSchema(),
                                                  {{int32_t{1}, 1.5f, std::string("g1")},
                                                   {int32_t{2}, Value{}, std::string("g2")}})}})
                     .status());
  // Evolve in memory: int -> long, float -> double, drop "gone", add "extra" (id 4).
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, h.Load());
  Schema evolved;
  evolved.schema_id = 1;
  evolved.fields = {Field{"extra", DataType::String(), true, 4},
                    Field{"id", DataType::Int64(), false, 1},
                    Field{"f", DataType::Double(), true, 2}};
  md.schemas.push_back(evolved);
  md.current_schema_id = 1;
  md.last_column_id = 4;
  std::vector<Row> rows;
  FLOE_ASSERT_OK(ScanTable(io::FileIO(), md, std::nullopt, [&](const RecordBatch& b) {
    EXPECT_EQ(b.schema()->fields[0].name, "extra");
    for (Row& r : RowsOf(b)) rows.push_back(std::move(r));
    return Status::OK();
  }));
  EXPECT_EQ(Sorted(rows),
            (std::vector<Row>{{Value{}, int64_t{1}, 1.5}, {Value{}, int64_t{2}, Value{}}}));
}

TEST(Scan, CorruptDataFileFailsWithItsPath) {
  TempDir tmp;
  auto made = TableHarness::Make(tmp.path(), "db", "corrupt", SimpleSchema(), "", {});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  TableHarness& h = **made;
  auto bs = SimpleSchema().ToBatchSchema();
  FLOE_ASSERT_OK(
      h.CommitDelta(WriteMode::kAppend, {{false, MakeBatch(bs, {R(1, "a"), R(2, "b")})}}).status());
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, h.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<FileScanTask> tasks, PlanScan(io::FileIO(), md));
  ASSERT_EQ(tasks.size(), 1u);
  FLOE_ASSERT_OK_AND_ASSIGN(std::string path, UriToPath(tasks[0].file.file_path));

  // Garbage of the same size, then a truncated file: both are clear errors naming the file.
  FLOE_ASSERT_OK_AND_ASSIGN(std::string bytes, io::ReadFile(path));
  std::string garbage(bytes.size(), 'x');
  FLOE_ASSERT_OK(io::WriteFileReplace(path, garbage));
  auto rows = h.Scan();
  ASSERT_FALSE(rows.ok());
  EXPECT_NE(rows.status().message().find(tasks[0].file.file_path), std::string::npos)
      << rows.status().ToString();
  FLOE_ASSERT_OK(io::WriteFileReplace(path, bytes.substr(0, bytes.size() / 2)));
  auto rows2 = h.Scan();
  ASSERT_FALSE(rows2.ok());
  EXPECT_NE(rows2.status().message().find(tasks[0].file.file_path), std::string::npos)
      << rows2.status().ToString();
  std::filesystem::remove(path);
  auto rows3 = h.Scan();
  ASSERT_FALSE(rows3.ok());
  EXPECT_NE(rows3.status().message().find(tasks[0].file.file_path), std::string::npos);
}

TEST(Scan, CheckScanFilesReadsFootersOnlyAndNamesTheFile) {
  TempDir tmp;
  auto made = TableHarness::Make(tmp.path(), "db", "check", SimpleSchema(), "", {});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  TableHarness& h = **made;
  auto bs = SimpleSchema().ToBatchSchema();
  FLOE_ASSERT_OK(
      h.CommitDelta(WriteMode::kAppend, {{false, MakeBatch(bs, {R(1, "a"), R(2, "b")})}}).status());
  FLOE_ASSERT_OK(h.CommitDelta(WriteMode::kDelete, {{false, MakeBatch(bs, {R(1, {})})}}).status());
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, h.Load());
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<FileScanTask> tasks, PlanScan(io::FileIO(), md));
  ASSERT_EQ(tasks.size(), 1u);
  ASSERT_EQ(tasks[0].equality_deletes.size(), 1u);
  FLOE_ASSERT_OK(CheckScanFiles(io::FileIO(), tasks));
  const DataFile& data = tasks[0].file;
  const DataFile& deletes = *tasks[0].equality_deletes[0].file;
  FLOE_ASSERT_OK_AND_ASSIGN(std::string data_path, UriToPath(data.file_path));
  FLOE_ASSERT_OK_AND_ASSIGN(std::string delete_path, UriToPath(deletes.file_path));
  FLOE_ASSERT_OK_AND_ASSIGN(std::string data_bytes, io::ReadFile(data_path));
  FLOE_ASSERT_OK_AND_ASSIGN(std::string delete_bytes, io::ReadFile(delete_path));

  // Truncated: the size tells.
  FLOE_ASSERT_OK(io::WriteFileReplace(delete_path, delete_bytes.substr(0, 20)));
  Status st = CheckScanFiles(io::FileIO(), tasks);
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_EQ(st.message(), "equality delete file " + deletes.file_path +
                              " is 20 bytes, its manifest entry says " +
                              std::to_string(deletes.file_size_in_bytes));
  FLOE_ASSERT_OK(io::WriteFileReplace(delete_path, delete_bytes));
  // Same size, broken footer: the footer tells.
  std::string torn = data_bytes;
  for (size_t i = torn.size() - 40; i < torn.size() - 8; ++i) torn[i] = 'x';
  FLOE_ASSERT_OK(io::WriteFileReplace(data_path, torn));
  st = CheckScanFiles(io::FileIO(), tasks);
  EXPECT_FALSE(st.ok());
  EXPECT_TRUE(st.message().starts_with("checking data file " + data.file_path + ": "))
      << st.ToString();
  // A page broken, the footer intact: only reading the rows finds it.
  torn = data_bytes;
  for (size_t i = 4; i < 64; ++i) torn[i] = static_cast<char>(torn[i] ^ 0x5a);
  FLOE_ASSERT_OK(io::WriteFileReplace(data_path, torn));
  FLOE_ASSERT_OK(CheckScanFiles(io::FileIO(), tasks));
  EXPECT_FALSE(ReadTask(io::FileIO(), tasks[0], md).ok());
  // Gone.
  std::filesystem::remove(data_path);
  st = CheckScanFiles(io::FileIO(), tasks);
  EXPECT_NE(st.message().find(data.file_path), std::string::npos) << st.ToString();
}

// $FLOE_INTEROP_DIR/expected/<ns>.<table>.jsonl: the scan result (sorted), one JSON object per
// row, for the independent reader to compare with.
void WriteExpected(const TableHarness& h, const Schema& schema, const std::vector<Row>& rows) {
  if (h.interop_dir().empty()) return;
  RecordBatch batch = MakeBatch(schema.ToBatchSchema(), Sorted(rows));
  std::string text;
  for (size_t r = 0; r < batch.num_rows(); ++r) json::AppendRowAsJson(batch, r, &text);
  std::string dir = h.interop_dir() + "/expected";
  FLOE_ASSERT_OK(io::CreateDirs(dir));
  FLOE_ASSERT_OK(io::WriteFileReplace(dir + "/" + h.id().ToString() + ".jsonl", text));
}

}  // namespace
}  // namespace floe::iceberg

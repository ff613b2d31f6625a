#include "floe/iceberg/data_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "floe/format/parquet/file_reader.h"
#include "floe/iceberg/catalog.h"
#include "floe/iceberg/data_test_util.h"
#include "floe/io/file.h"

namespace floe::iceberg {
namespace {

using testing::MakeBatch;
using testing::Micros;
using testing::Row;
using testing::RowsOf;
using testing::Sorted;
using testing::TempDir;

Schema EventSchema() {
  Schema s;
  s.fields = {
      Field{"id", DataType::Int64(), false, 1},
      Field{"name", DataType::String(), true, 2},
      Field{"score", DataType::Double(), true, 3},
      Field{"ts", DataType::TimestampTz(), false, 4},
      Field{"amount", DataType::Decimal(10, 2), true, 5},
      Field{"day", DataType::Date(), true, 6},
  };
  s.identifier_field_ids = {1};
  return s;
}

Result<TableMetadata> MakeTable(const std::string& dir, const Schema& schema,
                                const std::string& partition_clause,
                                std::map<std::string, std::string> properties = {}) {
  PartitionSpec spec;
  if (!partition_clause.empty()) {
    FLOE_ASSIGN_OR_RAISE(spec, ParsePartitionClause(partition_clause, schema));
  }
  return NewTableMetadata(schema, spec, PathToUri(dir + "/tbl"), std::move(properties));
}

Result<RecordBatch> ReadBack(const DataFile& file) {
  FLOE_ASSIGN_OR_RAISE(std::string path, UriToPath(file.file_path));
  FLOE_ASSIGN_OR_RAISE(auto reader, parquet::FileReader::Open(io::FileIO(), path));
  return reader->ReadAll();
}

FileWriterConfig Config(const TableMetadata& metadata, const std::string& prefix = "00000-0-t") {
  auto config = ConfigFromTableProperties(io::FileIO(), metadata, prefix);
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return *config;
}

std::vector<Row> EventRows() {
  return {
      {int64_t{3}, std::string("carol"), 2.5, Micros(2024, 1, 2, 5), Int128{12345}, int32_t{19724}},
      {int64_t{1}, std::string("alice"), std::nan(""), Micros(2024, 1, 1, 1), Int128{-99},
       std::monostate{}},
      {int64_t{7}, std::monostate{}, -1.0, Micros(2024, 1, 3, 23), std::monostate{},
       int32_t{19725}},
      {int64_t{2}, std::string("bob"), std::monostate{}, Micros(2024, 1, 2, 0), Int128{0},
       int32_t{19723}},
  };
}

Value Bound(const std::map<int32_t, std::string>& bounds, int32_t id, const DataType& type) {
  auto it = bounds.find(id);
  if (it == bounds.end()) return std::monostate{};
  auto v = DeserializeValue(type, it->second);
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return v.ok() ? *v : Value{};
}

TEST(DataFileWriter, DescribesFileWithCountsBoundsAndSizes) {
  TempDir tmp;
  Schema schema = EventSchema();
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, MakeTable(tmp.path(), schema, ""));
  FLOE_ASSERT_OK_AND_ASSIGN(auto writer, DataFileWriter::Make(md, Config(md)));
  RecordBatch batch = MakeBatch(md.current_schema().ToBatchSchema(), EventRows());
  FLOE_ASSERT_OK(writer->Add(batch));
  EXPECT_EQ(writer->row_count(), 4);
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<DataFile> files, writer->Finish());
  ASSERT_EQ(files.size(), 1u);
  const DataFile& f = files[0];

  EXPECT_EQ(f.content, FileContent::kData);
  EXPECT_EQ(f.file_format, "PARQUET");
  EXPECT_EQ(f.file_path.rfind("file://" + tmp.path() + "/tbl/data/00000-0-t-", 0), 0u)
      << f.file_path;
  EXPECT_TRUE(f.partition.empty());
  EXPECT_EQ(f.record_count, 4);
  FLOE_ASSERT_OK_AND_ASSIGN(std::string path, UriToPath(f.file_path));
  FLOE_ASSERT_OK_AND_ASSIGN(uint64_t size, io::FileSize(path));
  EXPECT_EQ(f.file_size_in_bytes, static_cast<int64_t>(size));
  ASSERT_FALSE(f.split_offsets.empty());
  EXPECT_EQ(f.split_offsets[0], 4);  // after the "PAR1" magic

  for (int32_t id = 1; id <= 6; ++id) {
    EXPECT_EQ(f.value_counts.at(id), 4) << id;
    EXPECT_GT(f.column_sizes.at(id), 0) << id;
  }
  EXPECT_EQ(f.null_value_counts.at(1), 0);
  EXPECT_EQ(f.null_value_counts.at(2), 1);
  EXPECT_EQ(f.null_value_counts.at(3), 1);
  EXPECT_EQ(f.null_value_counts.at(5), 1);
  EXPECT_EQ(f.nan_value_counts.at(3), 1);
  EXPECT_EQ(f.nan_value_counts.count(1), 0u);  // only float/double columns have NaN counts

  EXPECT_EQ(Bound(f.lower_bounds, 1, DataType::Int64()), Value(int64_t{1}));
  EXPECT_EQ(Bound(f.upper_bounds, 1, DataType::Int64()), Value(int64_t{7}));
  EXPECT_EQ(Bound(f.lower_bounds, 2, DataType::String()), Value(std::string("alice")));
  EXPECT_EQ(Bound(f.upper_bounds, 2, DataType::String()), Value(std::string("carol")));
  EXPECT_EQ(Bound(f.lower_bounds, 3, DataType::Double()), Value(-1.0));  // NaN excluded
  EXPECT_EQ(Bound(f.upper_bounds, 3, DataType::Double()), Value(2.5));
  EXPECT_EQ(Bound(f.lower_bounds, 4, DataType::TimestampTz()), Value(Micros(2024, 1, 1, 1)));
  EXPECT_EQ(Bound(f.upper_bounds, 4, DataType::TimestampTz()), Value(Micros(2024, 1, 3, 23)));
  EXPECT_EQ(Bound(f.lower_bounds, 5, DataType::Decimal(10, 2)), Value(Int128{-99}));
  EXPECT_EQ(Bound(f.upper_bounds, 5, DataType::Decimal(10, 2)), Value(Int128{12345}));
  EXPECT_EQ(Bound(f.lower_bounds, 6, DataType::Date()), Value(int32_t{19723}));
  EXPECT_EQ(Bound(f.upper_bounds, 6, DataType::Date()), Value(int32_t{19725}));

  // The file reads back to the rows written, with the table's field ids.
  FLOE_ASSERT_OK_AND_ASSIGN(RecordBatch back, ReadBack(f));
  ASSERT_EQ(back.num_columns(), 6u);
  for (size_t c = 0; c < 6; ++c) {
    EXPECT_EQ(back.schema()->fields[c].field_id, schema.fields[c].field_id);
  }
  EXPECT_TRUE(back.Equals(batch));
}

// floe writes rows in arrival order: in a table another engine sorted, its files claim no
// sort order (rather than the table's, which they do not follow); in an unsorted one, order 0.
TEST(DataFileWriter, NamesTheUnsortedOrderOrNoneNeverASortedOne) {
  TempDir tmp;
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, MakeTable(tmp.path(), EventSchema(), ""));
  TableMetadata sorted = md;
  SortOrder by_first;
  by_first.order_id = 1;
  by_first.unsorted = false;
  by_first.json =
      R"({"order-id":1,"fields":[{"transform":"identity","source-id":1,"direction":"asc",)"
      R"("null-order":"nulls-first"}]})";
  sorted.sort_orders = {by_first};
  sorted.default_sort_order_id = 1;
  for (const auto& [table, expected] :
       {std::pair{md, std::optional<int32_t>(0)}, std::pair{sorted, std::optional<int32_t>()}}) {
    FileWriterConfig config = Config(table);
    config.file_prefix += expected ? "-unsorted" : "-sorted";
    FLOE_ASSERT_OK_AND_ASSIGN(auto writer, DataFileWriter::Make(table, config));
    FLOE_ASSERT_OK(writer->Add(MakeBatch(table.current_schema().ToBatchSchema(), EventRows())));
    FLOE_ASSERT_OK_AND_ASSIGN(std::vector<DataFile> files, writer->Finish());
    ASSERT_EQ(files.size(), 1u);
    EXPECT_EQ(files[0].sort_order_id, expected);
  }
}

TEST(DataFileWriter, TruncatesStringBoundsTo16CodePoints) {
  TempDir tmp;
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, MakeTable(tmp.path(), EventSchema(), ""));
  FLOE_ASSERT_OK_AND_ASSIGN(auto writer, DataFileWriter::Make(md, Config(md)));
  // 20 code points, some multi-byte: bounds keep 16 code points, not 16 bytes.
  std::string lo =
      "\xc3\xa9\xc3\xa9\xc3\xa9"
      "aaaaaaaaaaaaaaaaa";  // é x3 + a x17
  std::string hi = "zzzzzzzzzzzzzzzzzzzz";
  std::vector<Row> rows = {
      {int64_t{1}, lo, 1.0, Micros(2024, 1, 1), Int128{1}, int32_t{1}},
      {int64_t{2}, hi, 1.0, Micros(2024, 1, 1), Int128{1}, int32_t{1}},
  };
  FLOE_ASSERT_OK(writer->Add(MakeBatch(md.current_schema().ToBatchSchema(), rows)));
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<DataFile> files, writer->Finish());
  ASSERT_EQ(files.size(), 1u);
  // Byte order: "z..." < "é..." (0x7a < 0xc3).
  EXPECT_EQ(files[0].lower_bounds.at(2), "zzzzzzzzzzzzzzzz");
  EXPECT_EQ(files[0].upper_bounds.at(2),
            "\xc3\xa9\xc3\xa9\xc3\xa9"
            "aaaaaaaaaaaab");
}

TEST(BoundTruncation, IncrementsLastCodePointOrDropsTheBound) {
  const DataType s = DataType::String();
  const DataType b = DataType::Binary();
  EXPECT_EQ(TruncateLowerBound(s, "short", 16), "short");
  EXPECT_EQ(TruncateUpperBound(s, "short", 16), "short");
  EXPECT_EQ(TruncateUpperBound(s, "abcd", 2), "ac");
  // U+10FFFF cannot be incremented, so the previous code point is.
  std::string max_cp = "\xf4\x8f\xbf\xbf";
  EXPECT_EQ(TruncateUpperBound(s, "a" + max_cp + "zz", 2), "b");
  EXPECT_EQ(TruncateUpperBound(s, max_cp + max_cp + "z", 2), std::nullopt);
  // U+D7FF + 1 would be a surrogate; U+E000 follows.
  EXPECT_EQ(TruncateUpperBound(s,
                               "\xed\x9f\xbf"
                               "zz",
                               1),
            "\xee\x80\x80");
  EXPECT_EQ(TruncateLowerBound(b, std::string(20, '\x01'), 16), std::string(16, '\x01'));
  EXPECT_EQ(TruncateUpperBound(b, std::string("\x01\xff") + std::string(18, '\xff'), 2), "\x02");
  EXPECT_EQ(TruncateUpperBound(b, std::string(20, '\xff'), 16), std::nullopt);
}

// Compressed files whose row group is larger than the target (the usual streaming case: 128 MiB
// row groups, a few MiB target) come out near the target, not at the uncompressed estimate's
// fraction of it: the writer learns from the files it closed. Compaction depends on it (a file
// below 75% of the target would be rewritten again and again). Pages of 1,000 rows: a 64 KiB
// target is tiny, and a 20,000-row PLAIN page (the id and timestamp columns) would be larger than
// a whole file, where a real target holds many pages.
TEST(DataFileWriter, CompressedFilesRollNearTheTarget) {
  TempDir tmp;
  const int64_t target = 64 * 1024;
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md,
                            MakeTable(tmp.path(), EventSchema(), "",
                                      {{"write.target-file-size-bytes", std::to_string(target)},
                                       {"write.parquet.compression-codec", "zstd"},
                                       {"write.parquet.page-row-limit", "1000"}}));
  auto schema = md.current_schema().ToBatchSchema();
  int64_t id = 0;
  double ratio = 1.0;
  auto write = [&](FileWriterConfig config) -> std::vector<DataFile> {
    auto writer = DataFileWriter::Make(md, std::move(config)).ValueOrDie();
    for (int b = 0; b < 600; ++b) {
      std::vector<Row> rows;
      for (int r = 0; r < 100; ++r, ++id) {
        rows.push_back({id, "name-" + std::to_string(id * 7919 % 5000),
                        static_cast<double>(id % 1000), Micros(2024, 1, 1) + id, Int128{id % 77},
                        int32_t{19000}});
      }
      EXPECT_TRUE(writer->Add(MakeBatch(schema, rows)).ok());
    }
    ratio = writer->stats().size_ratio;
    return writer->Finish().ValueOrDie();
  };
  auto near_target = [&](const std::vector<DataFile>& files, size_t first) {
    ASSERT_GT(files.size(), 3u);
    for (size_t i = first; i + 1 < files.size(); ++i) {  // the last holds the rest
      EXPECT_GE(files[i].file_size_in_bytes, target * 3 / 4) << i;
      EXPECT_LE(files[i].file_size_in_bytes, target * 9 / 5) << i;
    }
  };
  std::vector<DataFile> first = write(Config(md));
  near_target(first, 1);  // the first file calibrates: it rolls early
  EXPECT_LT(first[0].file_size_in_bytes, target * 3 / 4) << "no calibration needed any more?";
  // A writer told what the last one learned rolls its first file near the target too.
  FileWriterConfig seeded = Config(md);
  EXPECT_LT(ratio, 1.0);
  seeded.initial_size_ratio = ratio;
  seeded.file_prefix += "-seeded";
  near_target(write(seeded), 0);
}

TEST(DataFileWriter, RollsFilesAtTargetSize) {
  TempDir tmp;
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md,
                            MakeTable(tmp.path(), EventSchema(), "",
                                      {{"write.target-file-size-bytes", "32768"},
                                       {"write.parquet.row-group-size-bytes", "8192"},
                                       {"write.parquet.compression-codec", "uncompressed"}}));
  FileWriterConfig config = Config(md);
  EXPECT_EQ(config.target_file_size_bytes, 32768);
  FLOE_ASSERT_OK_AND_ASSIGN(auto writer, DataFileWriter::Make(md, config));
  auto schema = md.current_schema().ToBatchSchema();
  int64_t id = 0;
  for (int b = 0; b < 40; ++b) {
    std::vector<Row> rows;
    for (int r = 0; r < 100; ++r, ++id) {
      rows.push_back({id, "name-" + std::to_string(id * 7919), static_cast<double>(id),
                      Micros(2024, 1, 1) + id, Int128{id}, int32_t{19000}});
    }
    FLOE_ASSERT_OK(writer->Add(MakeBatch(schema, rows)));
  }
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<DataFile> files, writer->Finish());
  ASSERT_GT(files.size(), 2u);
  int64_t total = 0;
  std::set<std::string> paths;
  for (const DataFile& f : files) {
    total += f.record_count;
    paths.insert(f.file_path);
    // Files roll on the batch after reaching the target, so none ends far beyond it.
    EXPECT_LT(f.file_size_in_bytes, 2 * 32768) << f.file_path;
    FLOE_ASSERT_OK_AND_ASSIGN(RecordBatch back, ReadBack(f));
    EXPECT_EQ(static_cast<int64_t>(back.num_rows()), f.record_count);
  }
  EXPECT_EQ(total, 4000);
  EXPECT_EQ(paths.size(), files.size());
}

TEST(DataFileWriter, SplitsOneHugeBatchIntoSeveralFiles) {
  TempDir tmp;
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md,
                            MakeTable(tmp.path(), EventSchema(), "",
                                      {{"write.target-file-size-bytes", "20000"},
                                       {"write.parquet.compression-codec", "uncompressed"}}));
  FLOE_ASSERT_OK_AND_ASSIGN(auto writer, DataFileWriter::Make(md, Config(md)));
  std::vector<Row> rows;
  for (int64_t id = 0; id < 5000; ++id) {
    rows.push_back({id, std::string(20, static_cast<char>('a' + id % 26)), 1.0, Micros(2024, 1, 1),
                    Int128{id}, int32_t{1}});
  }
  FLOE_ASSERT_OK(writer->Add(MakeBatch(md.current_schema().ToBatchSchema(), rows)));
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<DataFile> files, writer->Finish());
  EXPECT_GT(files.size(), 3u);
  int64_t total = 0;
  for (const DataFile& f : files) total += f.record_count;
  EXPECT_EQ(total, 5000);
}

TEST(DataFileWriter, PutsRowsIntoTheirDayAndBucketPartitions) {
  TempDir tmp;
  Schema schema = EventSchema();
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md,
                            MakeTable(tmp.path(), schema, "day(ts), bucket(4, id)"));
  const PartitionSpec& spec = md.default_spec();
  FLOE_ASSERT_OK_AND_ASSIGN(auto writer, DataFileWriter::Make(md, Config(md)));
  auto bschema = md.current_schema().ToBatchSchema();
  std::vector<Row> all;
  for (int b = 0; b < 3; ++b) {
    std::vector<Row> rows;
    for (int64_t i = 0; i < 50; ++i) {
      int64_t id = b * 50 + i;
      rows.push_back({id, "n" + std::to_string(id), 0.5, Micros(2024, 3, 1 + id % 3, id % 24),
                      Int128{id}, std::monostate{}});
    }
    all.insert(all.end(), rows.begin(), rows.end());
    FLOE_ASSERT_OK(writer->Add(MakeBatch(bschema, rows)));
  }
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<DataFile> files, writer->Finish());
  EXPECT_EQ(files.size(), 12u);  // 3 days x 4 buckets, all populated with 150 ids
  std::vector<Row> read;
  std::set<std::string> partitions;
  for (const DataFile& f : files) {
    ASSERT_EQ(f.partition.size(), 2u);
    std::string dir = spec.PartitionPath(md.current_schema(), f.partition);
    EXPECT_NE(f.file_path.find("/data/" + dir + "/"), std::string::npos) << f.file_path;
    EXPECT_TRUE(partitions.insert(dir).second) << "two files for " << dir;
    FLOE_ASSERT_OK_AND_ASSIGN(RecordBatch back, ReadBack(f));
    ASSERT_EQ(static_cast<int64_t>(back.num_rows()), f.record_count);
    for (size_t r = 0; r < back.num_rows(); ++r) {
      FLOE_ASSERT_OK_AND_ASSIGN(PartitionTuple p, spec.PartitionOf(back, r));
      EXPECT_EQ(p, f.partition) << "row " << r << " of " << f.file_path;
    }
    for (const Row& row : RowsOf(back)) read.push_back(row);
  }
  EXPECT_EQ(Sorted(read), Sorted(all));
}

TEST(DataFileWriter, RejectsBatchOfAnotherSchemaAndStaysFailed) {
  TempDir tmp;
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, MakeTable(tmp.path(), EventSchema(), ""));
  FLOE_ASSERT_OK_AND_ASSIGN(auto writer, DataFileWriter::Make(md, Config(md)));
  auto other = std::make_shared<BatchSchema>();
  other->fields = {Field{"id", DataType::Int32(), false, 1}};
  Status st = writer->Add(MakeBatch(other, {{int32_t{1}}}));
  EXPECT_TRUE(st.IsInvalidArgument()) << st.ToString();
  EXPECT_NE(st.message().find("columns"), std::string::npos) << st.ToString();
  // Required column with a null: refused by the Parquet writer, and the writer stays failed.
  RecordBatch bad = MakeBatch(
      md.current_schema().ToBatchSchema(),
      {{std::monostate{}, std::string("x"), 1.0, Micros(2024, 1, 1), Int128{1}, int32_t{1}}});
  Status st2 = writer->Add(bad);
  EXPECT_FALSE(st2.ok());
  EXPECT_FALSE(writer->Finish().ok());
  writer->Abandon();
}

TEST(DataFileWriter, AbandonRemovesItsFiles) {
  TempDir tmp;
  FLOE_ASSERT_OK_AND_ASSIGN(
      TableMetadata md,
      MakeTable(tmp.path(), EventSchema(), "", {{"write.target-file-size-bytes", "2000"}}));
  FLOE_ASSERT_OK_AND_ASSIGN(auto writer, DataFileWriter::Make(md, Config(md)));
  int64_t id = 0;
  for (int i = 0; i < 20; ++i) {
    std::vector<Row> rows;
    for (int r = 0; r < 50; ++r, ++id) {
      rows.push_back({id, "n" + std::to_string(id * 31), 1.0 * id, Micros(2024, 1, 1) + id,
                      Int128{id}, int32_t{1}});
    }
    FLOE_ASSERT_OK(writer->Add(MakeBatch(md.current_schema().ToBatchSchema(), rows)));
  }
  EXPECT_GT(writer->stats().files, 1);
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<std::string> before, io::ListDir(tmp.path() + "/tbl/data"));
  EXPECT_GT(before.size(), 1u);
  writer->Abandon();
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<std::string> left, io::ListDir(tmp.path() + "/tbl/data"));
  EXPECT_TRUE(left.empty());
  EXPECT_FALSE(writer->Add(MakeBatch(md.current_schema().ToBatchSchema(), EventRows())).ok());
}

TEST(ConfigFromTableProperties, ReadsWriteProperties) {
  TempDir tmp;
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md,
                            MakeTable(tmp.path(), EventSchema(), "",
                                      {{"write.target-file-size-bytes", "1048576"},
                                       {"write.parquet.compression-codec", "snappy"},
                                       {"write.parquet.row-group-size-bytes", "65536"},
                                       {"write.parquet.page-size-bytes", "4096"},
                                       {"write.parquet.page-row-limit", "500"},
                                       {"write.parquet.dict-size-bytes", "2048"}}));
  FLOE_ASSERT_OK_AND_ASSIGN(FileWriterConfig c, ConfigFromTableProperties(io::FileIO(), md, "p"));
  EXPECT_EQ(c.data_dir, tmp.path() + "/tbl/data");
  EXPECT_EQ(c.file_prefix, "p");
  EXPECT_EQ(c.target_file_size_bytes, 1048576);
  EXPECT_EQ(c.parquet.compression, parquet::Compression::kSnappy);
  EXPECT_EQ(c.parquet.row_group_size_bytes, 65536);
  EXPECT_EQ(c.parquet.page_size_bytes, 4096);
  EXPECT_EQ(c.parquet.page_row_limit, 500);
  EXPECT_EQ(c.parquet.dictionary_page_size_limit, 2048);

  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata plain, MakeTable(tmp.path(), EventSchema(), ""));
  FLOE_ASSERT_OK_AND_ASSIGN(FileWriterConfig d,
                            ConfigFromTableProperties(io::FileIO(), plain, "p"));
  EXPECT_EQ(d.parquet.compression, parquet::Compression::kZstd);
  EXPECT_EQ(d.target_file_size_bytes, 512LL << 20);
  EXPECT_EQ(d.parquet.page_row_limit, 20000);  // Iceberg's default
}

TEST(ConfigFromTableProperties, NamesTheBadPropertyAndValue) {
  TempDir tmp;
  for (auto [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"write.target-file-size-bytes", "12abc"},
                                                        {"write.target-file-size-bytes", "-5"},
                                                        {"write.parquet.compression-codec", "lzma"},
                                                        {"write.parquet.page-size-bytes", "0"},
                                                        {"write.parquet.page-row-limit", "-1"}}) {
    FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md,
                              MakeTable(tmp.path(), EventSchema(), "", {{key, value}}));
    auto c = ConfigFromTableProperties(io::FileIO(), md, "p");
    ASSERT_FALSE(c.ok()) << key << "=" << value;
    EXPECT_TRUE(c.status().IsInvalidArgument());
    EXPECT_NE(c.status().message().find(key), std::string::npos) << c.status().ToString();
    EXPECT_NE(c.status().message().find(value), std::string::npos) << c.status().ToString();
  }
}

TEST(EqualityDeleteWriter, WritesOnlyEqualityColumnsInTheRowsPartition) {
  TempDir tmp;
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md,
                            MakeTable(tmp.path(), EventSchema(), "bucket(4, id)"));
  FLOE_ASSERT_OK_AND_ASSIGN(auto writer, EqualityDeleteWriter::Make(md, {1}, Config(md)));
  FLOE_ASSERT_OK(writer->Add(MakeBatch(md.current_schema().ToBatchSchema(), EventRows())));
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<DataFile> files, writer->Finish());
  ASSERT_FALSE(files.empty());
  int64_t total = 0;
  for (const DataFile& f : files) {
    EXPECT_EQ(f.content, FileContent::kEqualityDeletes);
    EXPECT_EQ(f.equality_ids, std::vector<int32_t>{1});
    EXPECT_NE(f.file_path.find("eq-deletes"), std::string::npos);
    FLOE_ASSERT_OK_AND_ASSIGN(RecordBatch back, ReadBack(f));
    ASSERT_EQ(back.num_columns(), 1u);
    EXPECT_EQ(back.schema()->fields[0].field_id, 1);
    EXPECT_EQ(back.schema()->fields[0].name, "id");
    for (size_t r = 0; r < back.num_rows(); ++r) {
      FLOE_ASSERT_OK_AND_ASSIGN(PartitionTuple p, md.default_spec().PartitionOf(back, r));
      EXPECT_EQ(p, f.partition);
    }
    EXPECT_EQ(f.value_counts.size(), 1u);
    EXPECT_EQ(f.lower_bounds.count(1), 1u);
    total += f.record_count;
  }
  EXPECT_EQ(total, 4);
}

TEST(EqualityDeleteWriter, NeedsThePartitionSourceColumns) {
  TempDir tmp;
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, MakeTable(tmp.path(), EventSchema(), "day(ts)"));
  FLOE_ASSERT_OK_AND_ASSIGN(auto writer, EqualityDeleteWriter::Make(md, {1}, Config(md)));
  auto keys = std::make_shared<BatchSchema>();
  keys->fields = {Field{"id", DataType::Int64(), false, 1}};
  Status st = writer->Add(MakeBatch(keys, {{int64_t{1}}}));
  EXPECT_TRUE(st.IsInvalidArgument()) << st.ToString();
  EXPECT_NE(st.message().find("ts_day"), std::string::npos) << st.ToString();
  EXPECT_FALSE(EqualityDeleteWriter::Make(md, {99}, Config(md)).ok());
}

TEST(PositionDeleteWriter, SortsByPathThenPosWithBoundsOnBoth) {
  TempDir tmp;
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, MakeTable(tmp.path(), EventSchema(), ""));
  FLOE_ASSERT_OK_AND_ASSIGN(auto writer, PositionDeleteWriter::Make(md, Config(md)));
  const std::string a = "file:///w/db/t/data/a-very-long-data-file-name-00001.parquet";
  const std::string b = "file:///w/db/t/data/b-very-long-data-file-name-00002.parquet";
  FLOE_ASSERT_OK(writer->Add(b, 7));
  FLOE_ASSERT_OK(writer->Add(a, 9));
  FLOE_ASSERT_OK(writer->Add(b, 0));
  FLOE_ASSERT_OK(writer->Add(a, 2));
  FLOE_ASSERT_OK_AND_ASSIGN(std::vector<DataFile> files, writer->Finish());
  ASSERT_EQ(files.size(), 1u);
  const DataFile& f = files[0];
  EXPECT_EQ(f.content, FileContent::kPositionDeletes);
  EXPECT_EQ(f.record_count, 4);
  EXPECT_EQ(f.lower_bounds.at(kDeleteFilePathFieldId), a);  // whole path, not truncated
  EXPECT_EQ(f.upper_bounds.at(kDeleteFilePathFieldId), b);
  EXPECT_EQ(Bound(f.lower_bounds, kDeletePosFieldId, DataType::Int64()), Value(int64_t{0}));
  EXPECT_EQ(Bound(f.upper_bounds, kDeletePosFieldId, DataType::Int64()), Value(int64_t{9}));
  FLOE_ASSERT_OK_AND_ASSIGN(RecordBatch back, ReadBack(f));
  ASSERT_EQ(back.num_columns(), 2u);
  EXPECT_EQ(back.schema()->fields[0].field_id, kDeleteFilePathFieldId);
  EXPECT_EQ(back.schema()->fields[1].field_id, kDeletePosFieldId);
  EXPECT_FALSE(back.schema()->fields[0].nullable);
  EXPECT_EQ(RowsOf(back),
            (std::vector<Row>{{a, int64_t{2}}, {a, int64_t{9}}, {b, int64_t{0}}, {b, int64_t{7}}}));
}

TEST(PositionDeleteWriter, RefusesAPartitionOfTheWrongShapeAndStaysFailed) {
  TempDir tmp;
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, MakeTable(tmp.path(), EventSchema(), ""));
  FLOE_ASSERT_OK_AND_ASSIGN(auto writer, PositionDeleteWriter::Make(md, Config(md)));
  Status st = writer->Add("file:///x.parquet", 1, {Value(int32_t{1})});
  EXPECT_TRUE(st.IsInvalidArgument()) << st.ToString();
  EXPECT_FALSE(writer->Add("file:///x.parquet", 2).ok());
  EXPECT_FALSE(writer->Finish().ok());
}

// ---- DeltaWriter ----------------------------------------------------------------------------

Schema KeyedSchema() {
  Schema s;
  s.fields = {Field{"id", DataType::Int64(), false, 1}, Field{"v", DataType::String(), true, 2},
              Field{"region", DataType::String(), true, 3}};
  s.identifier_field_ids = {1};
  return s;
}

TEST(DeltaWriter, UpsertWritesLastRowPerKeyAndOneDeletePerKey) {
  TempDir tmp;
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md,
                            MakeTable(tmp.path(), KeyedSchema(), "bucket(2, id)"));
  FLOE_ASSERT_OK_AND_ASSIGN(auto writer, DeltaWriter::Make(md, WriteMode::kUpsert, Config(md)));
  auto bs = md.current_schema().ToBatchSchema();
  FLOE_ASSERT_OK(writer->Add(MakeBatch(bs, {{int64_t{1}, std::string("a1"), std::string("x")},
                                            {int64_t{2}, std::string("b1"), std::string("x")},
                                            {int64_t{1}, std::string("a2"), std::string("y")}})));
  FLOE_ASSERT_OK(writer->Add(MakeBatch(bs, {{int64_t{3}, std::string("c1"), std::monostate{}},
                                            {int64_t{2}, std::string("b2"), std::string("z")}})));
  FLOE_ASSERT_OK(writer->Delete(MakeBatch(bs, {{int64_t{3}, std::monostate{}, std::monostate{}}})));
  EXPECT_EQ(writer->row_count(), 6);
  EXPECT_EQ(writer->key_count(), 3);
  FLOE_ASSERT_OK_AND_ASSIGN(WriteResult result, writer->Finish());
  std::vector<Row> data;
  for (const DataFile& f : result.data_files) {
    FLOE_ASSERT_OK_AND_ASSIGN(RecordBatch back, ReadBack(f));
    for (const Row& r : RowsOf(back)) data.push_back(r);
  }
  EXPECT_EQ(Sorted(data), (std::vector<Row>{{int64_t{1}, std::string("a2"), std::string("y")},
                                            {int64_t{2}, std::string("b2"), std::string("z")}}));
  std::vector<Row> deletes;
  for (const DataFile& f : result.delete_files) {
    EXPECT_EQ(f.content, FileContent::kEqualityDeletes);
    EXPECT_EQ(f.equality_ids, std::vector<int32_t>{1});
    FLOE_ASSERT_OK_AND_ASSIGN(RecordBatch back, ReadBack(f));
    EXPECT_EQ(back.num_columns(), 1u);
    for (const Row& r : RowsOf(back)) deletes.push_back(r);
  }
  EXPECT_EQ(Sorted(deletes), (std::vector<Row>{{int64_t{1}}, {int64_t{2}}, {int64_t{3}}}));
}

TEST(DeltaWriter, NullKeyValuesEqualEachOther) {
  TempDir tmp;
  Schema schema = KeyedSchema();
  schema.identifier_field_ids = {1, 3};
  schema.fields[2].nullable = false;
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, MakeTable(tmp.path(), schema, ""));
  // Iceberg requires key columns to be NOT NULL; the writer still treats null as equal to null
  // (as equality deletes do), so make the column nullable in memory.
  md.schemas[0].fields[2].nullable = true;
  FLOE_ASSERT_OK_AND_ASSIGN(auto writer, DeltaWriter::Make(md, WriteMode::kUpsert, Config(md)));
  auto bs = md.current_schema().ToBatchSchema();
  FLOE_ASSERT_OK(writer->Add(MakeBatch(bs, {{int64_t{1}, std::string("a"), std::monostate{}},
                                            {int64_t{1}, std::string("b"), std::string("x")},
                                            {int64_t{1}, std::string("c"), std::monostate{}}})));
  FLOE_ASSERT_OK_AND_ASSIGN(WriteResult result, writer->Finish());
  ASSERT_EQ(result.data_files.size(), 1u);
  FLOE_ASSERT_OK_AND_ASSIGN(RecordBatch back, ReadBack(result.data_files[0]));
  EXPECT_EQ(Sorted(RowsOf(back)),
            (std::vector<Row>{{int64_t{1}, std::string("b"), std::string("x")},
                              {int64_t{1}, std::string("c"), std::monostate{}}}));
  ASSERT_EQ(result.delete_files.size(), 1u);
  EXPECT_EQ(result.delete_files[0].record_count, 2);
  EXPECT_EQ(result.delete_files[0].equality_ids, (std::vector<int32_t>{1, 3}));
}

TEST(DeltaWriter, UpsertNeedsAPrimaryKey) {
  TempDir tmp;
  Schema s = KeyedSchema();
  s.identifier_field_ids.clear();
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, MakeTable(tmp.path(), s, ""));
  auto w = DeltaWriter::Make(md, WriteMode::kUpsert, Config(md));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("upsert needs a primary key"), std::string::npos)
      << w.status().ToString();
  EXPECT_TRUE(DeltaWriter::Make(md, WriteMode::kAppend, Config(md)).ok());
}

TEST(DeltaWriter, RefusesPartitionColumnsOutsideTheKey) {
  TempDir tmp;
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, MakeTable(tmp.path(), KeyedSchema(), "region"));
  auto w = DeltaWriter::Make(md, WriteMode::kUpsert, Config(md));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("region"), std::string::npos) << w.status().ToString();
}

TEST(DeltaWriter, DeleteModeWritesKeysOnce) {
  TempDir tmp;
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, MakeTable(tmp.path(), KeyedSchema(), ""));
  FLOE_ASSERT_OK_AND_ASSIGN(auto writer, DeltaWriter::Make(md, WriteMode::kDelete, Config(md)));
  auto keys = std::make_shared<BatchSchema>();
  keys->fields = {Field{"id", DataType::Int64(), false, 1}};
  FLOE_ASSERT_OK(writer->Add(MakeBatch(keys, {{int64_t{5}}, {int64_t{6}}, {int64_t{5}}})));
  FLOE_ASSERT_OK_AND_ASSIGN(WriteResult result, writer->Finish());
  EXPECT_TRUE(result.data_files.empty());
  ASSERT_EQ(result.delete_files.size(), 1u);
  EXPECT_EQ(result.delete_files[0].record_count, 2);
}

TEST(DeltaWriter, AppendModeRefusesDeletesAndStaysFailed) {
  TempDir tmp;
  FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, MakeTable(tmp.path(), KeyedSchema(), ""));
  FLOE_ASSERT_OK_AND_ASSIGN(auto writer, DeltaWriter::Make(md, WriteMode::kAppend, Config(md)));
  auto bs = md.current_schema().ToBatchSchema();
  FLOE_ASSERT_OK(writer->Add(MakeBatch(bs, {{int64_t{1}, std::string("a"), std::monostate{}},
                                            {int64_t{1}, std::string("b"), std::monostate{}}})));
  EXPECT_FALSE(writer->Delete(MakeBatch(bs, {})).ok());
  EXPECT_FALSE(writer->Finish().ok());  // failed writers stay failed
}

// A writer whose schema grows mid-commit: append keeps the file written with the old schema and
// numbers the next after it; upsert carries its buffered rows into the new schema (widened, new
// columns null), so each key is still written once.
TEST(DeltaWriter, EvolveSchemaMidCommitKeepsFilesAndCarriesBufferedRows) {
  Schema schema;
  schema.fields = {Field{"id", DataType::Int64(), false, 1},
                   Field{"n", DataType::Int32(), true, 2}};
  schema.identifier_field_ids = {1};
  Schema wider = schema;
  wider.fields[1].type = DataType::Int64();
  wider.fields.push_back(Field{"email", DataType::String(), true, 0});
  for (WriteMode mode : {WriteMode::kAppend, WriteMode::kUpsert}) {
    TempDir tmp;
    FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata md, MakeTable(tmp.path(), schema, ""));
    FLOE_ASSERT_OK_AND_ASSIGN(TableMetadata grown, EvolveSchema(md, wider.fields, nullptr));
    FLOE_ASSERT_OK_AND_ASSIGN(auto writer, DeltaWriter::Make(md, mode, Config(md)));
    FLOE_ASSERT_OK(writer->Add(MakeBatch(md.current_schema().ToBatchSchema(),
                                         {{int64_t{1}, int32_t{10}}, {int64_t{2}, int32_t{20}}})));
    FLOE_ASSERT_OK(writer->EvolveSchema(grown));
    FLOE_ASSERT_OK(writer->Add(MakeBatch(grown.current_schema().ToBatchSchema(),
                                         {{int64_t{1}, int64_t{1} << 40, std::string("a@b")}})));
    FLOE_ASSERT_OK_AND_ASSIGN(WriteResult result, writer->Finish());
    std::vector<Row> rows;
    std::set<std::string> paths;
    for (const DataFile& f : result.data_files) {
      paths.insert(f.file_path);
      FLOE_ASSERT_OK_AND_ASSIGN(RecordBatch back, ReadBack(f));
      for (Row r : RowsOf(back)) {
        r.resize(3);  // a file of the old schema has no email
        rows.push_back(std::move(r));
      }
    }
    EXPECT_EQ(paths.size(), result.data_files.size());
    if (mode == WriteMode::kAppend) {
      ASSERT_EQ(result.data_files.size(), 2u);
      EXPECT_EQ(Sorted(rows), (std::vector<Row>{{int64_t{1}, int32_t{10}, std::monostate{}},
                                                {int64_t{1}, int64_t{1} << 40, std::string("a@b")},
                                                {int64_t{2}, int32_t{20}, std::monostate{}}}));
    } else {
      ASSERT_EQ(result.data_files.size(), 1u);
      EXPECT_EQ(Sorted(rows), (std::vector<Row>{{int64_t{1}, int64_t{1} << 40, std::string("a@b")},
                                                {int64_t{2}, int64_t{20}, std::monostate{}}}));
      ASSERT_EQ(result.delete_files.size(), 1u);
      EXPECT_EQ(result.delete_files[0].record_count, 2);
    }
  }
}

}  // namespace
}  // namespace floe::iceberg

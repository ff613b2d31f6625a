// Round-trip property test: random schemas x random data x random writer options, written and
// read back equal, with the writer's metrics checked against values computed from the data.

#include <random>

#include "floe/format/parquet/file_reader.h"
#include "floe/format/parquet/file_writer.h"
#include "floe/format/parquet/test_util.h"
#include "gtest/gtest.h"

namespace floe::parquet {
namespace {

constexpr int kCases = 60;

class RoundTripProperty : public ::testing::TestWithParam<int> {};

TEST_P(RoundTripProperty, RandomSchemaAndDataRoundTrip) {
  const uint64_t seed = 0xF10E0000ULL + static_cast<uint64_t>(GetParam());
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto schema = testing::RandomSchema(rng, 8);

  WriterOptions o;
  const Compression codecs[] = {Compression::kZstd, Compression::kSnappy,
                                Compression::kUncompressed};
  o.compression = codecs[GetParam() % 3];  // every codec, evenly
  o.zstd_level = 1 + static_cast<int>(rng() % 5);
  o.dictionary_enabled = rng() % 5 != 0;
  const int64_t page_sizes[] = {64, 700, 8192, 1 << 20};
  o.page_size_bytes = page_sizes[rng() % 4];
  const int64_t row_groups[] = {2048, 32 << 10, 1 << 20, 128 << 20};
  o.row_group_size_bytes = row_groups[rng() % 4];
  const int64_t dict_limits[] = {100, 2048, 1 << 20};
  o.dictionary_page_size_limit = dict_limits[rng() % 3];
  o.key_value_metadata = {{"seed", std::to_string(seed)}};

  const size_t sizes[] = {0, 1, 7, 100, 1000, 2500};
  size_t rows = sizes[rng() % std::size(sizes)];
  std::vector<testing::RandomColumnProfile> profiles;
  for (size_t c = 0; c < schema->fields.size(); ++c) {
    testing::RandomColumnProfile p;
    const double nulls[] = {0, 0.05, 0.5, 1.0};
    p.null_fraction = nulls[rng() % 4];
    switch (rng() % 3) {
      case 0:
        p.pool = 0;
        break;  // high cardinality
      case 1:
        p.pool = 1 + static_cast<int>(rng() % 40);
        break;  // dictionary friendly
      default:  // dictionary friendly, then forces fallback
        p.pool = 3;
        p.switch_to_random_at = static_cast<int>(rows / 3);
    }
    profiles.push_back(p);
  }
  RecordBatch all = testing::RandomBatch(schema, rows, rng, profiles);

  std::string dir = testing::MakeTempDir("prop_" + std::to_string(GetParam()));
  std::string path = dir + "/data.parquet";
  auto w = FileWriter::Open(io::FileIO(), path, schema, o);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  // Feed the rows in random-sized batches, sometimes closing a row group by hand.
  size_t row = 0;
  while (row < rows) {
    size_t n = std::min<size_t>(rows - row, 1 + rng() % 700);
    std::vector<uint32_t> idx(n);
    for (size_t i = 0; i < n; ++i) idx[i] = static_cast<uint32_t>(row + i);
    ASSERT_TRUE((*w)->Add(all.Take(idx)).ok());
    if (rng() % 4 == 0) {
      ASSERT_TRUE((*w)->Flush().ok());
    }
    row += n;
  }
  EXPECT_EQ((*w)->row_count(), static_cast<int64_t>(rows));
  auto written = (*w)->Finish();
  ASSERT_TRUE(written.ok()) << written.status().ToString();

  auto r = FileReader::Open(io::FileIO(), path);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*(*r)->schema(), *schema);
  EXPECT_EQ((*r)->num_rows(), static_cast<int64_t>(rows));
  EXPECT_EQ((*r)->key_value_metadata(), o.key_value_metadata);
  auto back = (*r)->ReadAll();
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->num_rows(), rows);
  for (size_t c = 0; c < schema->fields.size(); ++c) {
    EXPECT_TRUE(back->column(c).Equals(all.column(c)))
        << "column " << schema->fields[c].name << " " << schema->fields[c].type.ToString();
  }

  // Row groups read one by one concatenate to the same rows.
  std::vector<RecordBatch> groups;
  for (int g = 0; g < (*r)->num_row_groups(); ++g) {
    auto b = (*r)->ReadRowGroup(g);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_EQ(static_cast<int64_t>(b->num_rows()), (*r)->row_group_num_rows(g));
    groups.push_back(std::move(*b));
  }
  if (!groups.empty()) {
    EXPECT_TRUE(testing::Concat(schema, groups).Equals(all));
  }

  // File-level facts.
  EXPECT_EQ(written->row_count, static_cast<int64_t>(rows));
  EXPECT_EQ(written->file_size, (*r)->file_size());
  ASSERT_EQ(static_cast<int>(written->row_group_offsets.size()), (*r)->num_row_groups());

  // Metrics against the data.
  std::vector<ColumnMetrics> expected = testing::ExpectedMetrics(all);
  ASSERT_EQ(written->columns.size(), expected.size());
  for (size_t c = 0; c < expected.size(); ++c) {
    SCOPED_TRACE("column " + schema->fields[c].name + " " + schema->fields[c].type.ToString());
    const ColumnMetrics& got = written->columns[c];
    EXPECT_EQ(got.field_id, expected[c].field_id);
    EXPECT_EQ(got.value_count, expected[c].value_count);
    EXPECT_EQ(got.null_count, expected[c].null_count);
    EXPECT_EQ(got.nan_count, expected[c].nan_count);
    EXPECT_EQ(got.min, expected[c].min);
    EXPECT_EQ(got.max, expected[c].max);
    int64_t compressed = 0, nulls = 0;
    for (int g = 0; g < (*r)->num_row_groups(); ++g) {
      auto info = (*r)->column_chunk(g, static_cast<int>(c));
      ASSERT_TRUE(info.ok());
      compressed += info->total_compressed_size;
      nulls += info->null_count.value_or(-1);
      if (c == 0) {
        EXPECT_EQ(info->file_offset, written->row_group_offsets[g]);
      }
    }
    EXPECT_EQ(got.compressed_size, compressed);
    EXPECT_EQ(got.null_count, nulls);
  }
  testing::DumpInterop("property_" + std::to_string(GetParam()), path, all);
}

INSTANTIATE_TEST_SUITE_P(Cases, RoundTripProperty, ::testing::Range(0, kCases));

}  // namespace
}  // namespace floe::parquet

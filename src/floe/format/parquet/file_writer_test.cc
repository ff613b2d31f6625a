#include "floe/format/parquet/file_writer.h"

#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "floe/format/parquet/compression.h"
#include "floe/format/parquet/encoding.h"
#include "floe/format/parquet/file_reader.h"
#include "floe/format/parquet/metadata.h"
#include "floe/format/parquet/schema.h"
#include "floe/format/parquet/test_util.h"
#include "floe/format/parquet/thrift_compact.h"
#include "floe/io/file.h"
#include "gtest/gtest.h"

namespace floe::parquet {
namespace {

using testing::DumpInterop;
using testing::MakeTempDir;

std::shared_ptr<const BatchSchema> Schema(std::vector<Field> fields) {
  return std::make_shared<const BatchSchema>(BatchSchema{std::move(fields)});
}

// Writes `batches` to `path` and returns what Finish returned.
WrittenFile WriteFile(const std::string& path, const std::vector<RecordBatch>& batches,
                      const WriterOptions& options = {}) {
  auto w = FileWriter::Open(io::FileIO(), path, batches.at(0).schema(), options);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  for (const auto& b : batches) {
    Status st = (*w)->Add(b);
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  auto done = (*w)->Finish();
  EXPECT_TRUE(done.ok()) << done.status().ToString();
  return done.ok() ? *done : WrittenFile{};
}

RecordBatch ReadBack(const std::string& path) {
  auto r = FileReader::Open(io::FileIO(), path);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return RecordBatch();
  auto b = (*r)->ReadAll();
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  return b.ok() ? *b : RecordBatch();
}

// Reads the raw footer, for checks of what exactly floe wrote.
format::FileMetaData Footer(const std::string& path) {
  std::string bytes = testing::ReadAllBytes(path);
  uint32_t len;
  std::memcpy(&len, bytes.data() + bytes.size() - 8, 4);
  format::FileMetaData md;
  EXPECT_TRUE(
      format::Decode(std::string_view(bytes).substr(bytes.size() - 8 - len, len), &md).ok());
  return md;
}

template <typename T>
std::string LE(T v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof(T));
}

TEST(ParseCompression, AcceptsNamesCaseInsensitively) {
  EXPECT_EQ(*ParseCompression("ZSTD"), Compression::kZstd);
  EXPECT_EQ(*ParseCompression("Snappy"), Compression::kSnappy);
  EXPECT_EQ(*ParseCompression("uncompressed"), Compression::kUncompressed);
  EXPECT_EQ(*ParseCompression("NONE"), Compression::kUncompressed);
  auto bad = ParseCompression("gzip");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsInvalidArgument());
  EXPECT_NE(bad.status().message().find("zstd, snappy, uncompressed or none"), std::string::npos);
}

TEST(DecimalFixedBytes, IsTheMinimumWidthForThePrecision) {
  EXPECT_EQ(DecimalFixedBytes(1), 1);
  EXPECT_EQ(DecimalFixedBytes(2), 1);
  EXPECT_EQ(DecimalFixedBytes(3), 2);
  EXPECT_EQ(DecimalFixedBytes(9), 4);
  EXPECT_EQ(DecimalFixedBytes(10), 5);
  EXPECT_EQ(DecimalFixedBytes(18), 8);
  EXPECT_EQ(DecimalFixedBytes(19), 9);
  EXPECT_EQ(DecimalFixedBytes(38), 16);
}

// One column of every type, required and optional, round trips and maps to the documented
// Parquet types.
TEST(FileWriter, WritesEveryTypeWithTheDocumentedParquetTypes) {
  std::string dir = MakeTempDir("every_type");
  std::vector<DataType> types = {
      DataType::Boolean(),       DataType::Int32(),        DataType::Int64(),
      DataType::Float(),         DataType::Double(),       DataType::String(),
      DataType::Binary(),        DataType::Date(),         DataType::Timestamp(),
      DataType::TimestampTz(),   DataType::Decimal(9, 2),  DataType::Decimal(18, 0),
      DataType::Decimal(38, 10), DataType::Decimal(20, 5), DataType::Time()};
  std::vector<Field> fields;
  for (size_t i = 0; i < types.size(); ++i) {
    fields.push_back({"req_" + std::to_string(i), types[i], false, static_cast<int32_t>(100 + i)});
    fields.push_back({"opt_" + std::to_string(i), types[i], true, static_cast<int32_t>(200 + i)});
  }
  auto schema = Schema(fields);
  std::mt19937_64 rng(99);
  std::vector<testing::RandomColumnProfile> profiles(fields.size(), {0.3, 0, -1});
  RecordBatch batch = testing::RandomBatch(schema, 500, rng, profiles);
  std::string path = dir + "/every_type.parquet";
  WrittenFile written = WriteFile(path, {batch});
  EXPECT_EQ(written.row_count, 500);
  EXPECT_EQ(written.file_size, static_cast<int64_t>(std::filesystem::file_size(path)));
  RecordBatch back = ReadBack(path);
  EXPECT_TRUE(back.Equals(batch));

  auto reader = FileReader::Open(io::FileIO(), path);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(*(*reader)->schema(), *schema);

  format::FileMetaData md = Footer(path);
  ASSERT_EQ(md.schema.size(), fields.size() + 1);
  EXPECT_EQ(md.schema[0].num_children, static_cast<int32_t>(fields.size()));
  for (size_t i = 0; i < fields.size(); ++i) {
    const format::SchemaElement& e = md.schema[i + 1];
    SCOPED_TRACE(fields[i].name);
    EXPECT_EQ(e.field_id, fields[i].field_id);
    EXPECT_EQ(e.repetition_type,
              fields[i].nullable ? format::Repetition::kOptional : format::Repetition::kRequired);
    const DataType& t = fields[i].type;
    switch (t.id) {
      case TypeId::kString:
        EXPECT_EQ(e.type, format::Type::kByteArray);
        EXPECT_EQ(e.converted_type, format::ConvertedType::kUtf8);
        EXPECT_EQ(e.logical_type->kind, format::LogicalType::kString);
        break;
      case TypeId::kBinary:
        EXPECT_EQ(e.type, format::Type::kByteArray);
        EXPECT_FALSE(e.logical_type.has_value());
        break;
      case TypeId::kDate:
        EXPECT_EQ(e.type, format::Type::kInt32);
        EXPECT_EQ(e.logical_type->kind, format::LogicalType::kDate);
        break;
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz:
        EXPECT_EQ(e.type, format::Type::kInt64);
        EXPECT_EQ(e.logical_type->kind, format::LogicalType::kTimestamp);
        EXPECT_EQ(e.logical_type->unit, format::TimeUnit::kMicros);
        EXPECT_EQ(e.logical_type->is_adjusted_to_utc, t.id == TypeId::kTimestampTz);
        EXPECT_EQ(e.converted_type, format::ConvertedType::kTimestampMicros);
        break;
      case TypeId::kTime:  // Iceberg's time: TIME(isAdjustedToUTC = false, MICROS)
        EXPECT_EQ(e.type, format::Type::kInt64);
        EXPECT_EQ(e.logical_type->kind, format::LogicalType::kTime);
        EXPECT_EQ(e.logical_type->unit, format::TimeUnit::kMicros);
        EXPECT_FALSE(e.logical_type->is_adjusted_to_utc);
        EXPECT_EQ(e.converted_type, format::ConvertedType::kTimeMicros);
        break;
      case TypeId::kDecimal:
        EXPECT_EQ(e.type, t.precision <= 9    ? format::Type::kInt32
                          : t.precision <= 18 ? format::Type::kInt64
                                              : format::Type::kFixedLenByteArray);
        if (t.precision > 18) {
          EXPECT_EQ(e.type_length, DecimalFixedBytes(t.precision));
        }
        EXPECT_EQ(e.converted_type, format::ConvertedType::kDecimal);
        EXPECT_EQ(e.logical_type->precision, t.precision);
        EXPECT_EQ(e.logical_type->scale, t.scale);
        EXPECT_EQ(e.precision, t.precision);
        EXPECT_EQ(e.scale, t.scale);
        break;
      default:
        break;
    }
  }
  EXPECT_EQ(md.column_orders.size(), fields.size());
  DumpInterop("every_type", path, batch);
}

class CodecTest : public ::testing::TestWithParam<Compression> {};

TEST_P(CodecTest, RoundTripsAndRecordsTheCodec) {
  std::string name = "codec_" + std::string(CompressionName(GetParam()));
  std::string dir = MakeTempDir(name);
  auto schema = Schema({{"s", DataType::String(), true, 1},
                        {"i", DataType::Int64(), false, 2},
                        {"d", DataType::Double(), true, 3}});
  std::mt19937_64 rng(5);
  RecordBatch batch =
      testing::RandomBatch(schema, 3000, rng, {{0.1, 20, -1}, {0, 0, -1}, {0.2, 0, -1}});
  WriterOptions o;
  o.compression = GetParam();
  o.page_size_bytes = 4096;
  std::string path = dir + "/" + name + ".parquet";
  WriteFile(path, {batch}, o);
  EXPECT_TRUE(ReadBack(path).Equals(batch));
  auto r = FileReader::Open(io::FileIO(), path);
  ASSERT_TRUE(r.ok());
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ((*r)->column_chunk(0, c)->codec, CompressionName(GetParam()));
    auto pages = (*r)->ReadPageInfos(0, c);
    ASSERT_TRUE(pages.ok());
    for (const auto& p : *pages) EXPECT_TRUE(p.has_crc);
  }
  DumpInterop(name, path, batch);
}

INSTANTIATE_TEST_SUITE_P(Codecs, CodecTest,
                         ::testing::Values(Compression::kUncompressed, Compression::kSnappy,
                                           Compression::kZstd),
                         [](const auto& info) { return std::string(CompressionName(info.param)); });

// A page holds at most page_row_limit rows (Iceberg's write.parquet.page-row-limit), whatever
// its byte size: 50,000 small values are pages of 20,000, 20,000 and 10,000, read back whole.
TEST(PageRowLimit, ClosesAPageAtTheLimitOfRows) {
  std::string dir = MakeTempDir("page_row_limit");
  auto schema = Schema({{"s", DataType::String(), true, 1}, {"i", DataType::Int64(), false, 2}});
  std::mt19937_64 rng(9);
  RecordBatch batch = testing::RandomBatch(schema, 50000, rng, {{0.1, 3, -1}, {0, 0, -1}});
  WriterOptions o;
  o.page_row_limit = 20000;
  std::string path = dir + "/limit.parquet";
  WriteFile(path, {batch}, o);
  EXPECT_TRUE(ReadBack(path).Equals(batch));
  auto r = FileReader::Open(io::FileIO(), path);
  ASSERT_TRUE(r.ok());
  for (int c = 0; c < 2; ++c) {
    auto pages = (*r)->ReadPageInfos(0, c);
    ASSERT_TRUE(pages.ok());
    std::vector<int32_t> rows;
    for (const auto& p : *pages) {
      if (p.type == "DATA_PAGE") rows.push_back(p.num_values);
    }
    EXPECT_EQ(rows, (std::vector<int32_t>{20000, 20000, 10000})) << c;
  }
  DumpInterop("page_row_limit", path, batch);
}

TEST(Statistics, StringsCompareAsUnsignedBytes) {
  std::string dir = MakeTempDir("stats_strings");
  auto schema = Schema({{"s", DataType::String(), true, 1}, {"b", DataType::Binary(), true, 2}});
  RecordBatch batch(schema);
  for (const char* s : {"zebra", "\xc3\xa9t\xc3\xa9", "apple", "", "Zulu"}) {
    batch.mutable_column(0).AppendBytes(s);
    batch.mutable_column(1).AppendBytes(s);
  }
  batch.mutable_column(0).AppendNull();
  batch.mutable_column(1).AppendBytes(std::string("\xff\x00", 2));
  for (bool dict : {true, false}) {
    WriterOptions o;
    o.dictionary_enabled = dict;
    std::string path = dir + "/s" + std::to_string(dict) + ".parquet";
    WrittenFile w = WriteFile(path, {batch}, o);
    // "" < "Zulu" < "apple" < "zebra" < "été" (0xC3 > 'z' unsigned).
    EXPECT_EQ(w.columns[0].min, "");
    EXPECT_EQ(w.columns[0].max, "\xc3\xa9t\xc3\xa9");
    EXPECT_EQ(w.columns[0].null_count, 1);
    EXPECT_EQ(w.columns[0].value_count, 6);
    EXPECT_EQ(w.columns[1].max, std::string("\xff\x00", 2));
    auto r = FileReader::Open(io::FileIO(), path);
    ASSERT_TRUE(r.ok());
    auto info = (*r)->column_chunk(0, 0);
    EXPECT_EQ(info->min_value, "");
    EXPECT_EQ(info->max_value, "\xc3\xa9t\xc3\xa9");
    EXPECT_EQ(info->null_count, 1);
    EXPECT_TRUE(ReadBack(path).Equals(batch));
    if (dict) DumpInterop("stats_strings", path, batch);
  }
}

TEST(Statistics, NaNIsCountedButNeverMinOrMax) {
  std::string dir = MakeTempDir("stats_nan");
  auto schema = Schema({{"d", DataType::Double(), true, 1},
                        {"f", DataType::Float(), false, 2},
                        {"all_nan", DataType::Double(), false, 3},
                        {"zeros", DataType::Double(), false, 4}});
  RecordBatch batch(schema);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (double v : {nan, 3.5, -2.0, nan, 7.25}) {
    batch.mutable_column(0).Append<double>(v);
    batch.mutable_column(1).Append<float>(static_cast<float>(v));
    batch.mutable_column(2).Append<double>(nan);
    batch.mutable_column(3).Append<double>(v == 3.5 ? -0.0 : 0.0);
  }
  batch.mutable_column(0).AppendNull();
  batch.mutable_column(1).Append<float>(-std::numeric_limits<float>::infinity());
  batch.mutable_column(2).Append<double>(nan);
  batch.mutable_column(3).Append<double>(0.0);
  for (bool dict : {true, false}) {
    WriterOptions o;
    o.dictionary_enabled = dict;
    std::string path = dir + "/n" + std::to_string(dict) + ".parquet";
    WrittenFile w = WriteFile(path, {batch}, o);
    EXPECT_EQ(w.columns[0].nan_count, 2);
    EXPECT_EQ(w.columns[0].null_count, 1);
    EXPECT_EQ(w.columns[0].min, LE(-2.0));
    EXPECT_EQ(w.columns[0].max, LE(7.25));
    EXPECT_EQ(w.columns[1].min, LE(-std::numeric_limits<float>::infinity()));
    EXPECT_EQ(w.columns[1].max, LE(7.25f));
    EXPECT_EQ(w.columns[2].nan_count, 6);
    EXPECT_FALSE(w.columns[2].min.has_value());
    EXPECT_FALSE(w.columns[2].max.has_value());
    // Zero bounds follow parquet.thrift: min -0.0, max +0.0.
    EXPECT_EQ(w.columns[3].min, LE(-0.0));
    EXPECT_EQ(w.columns[3].max, LE(0.0));
    auto r = FileReader::Open(io::FileIO(), path);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ((*r)->column_chunk(0, 0)->nan_count, 2);
    EXPECT_FALSE((*r)->column_chunk(0, 2)->min_value.has_value());
    EXPECT_TRUE(ReadBack(path).Equals(batch));
    if (dict) DumpInterop("stats_nan", path, batch);
  }
}

TEST(Statistics, DecimalsCompareAsSignedNumbers) {
  std::string dir = MakeTempDir("stats_decimal");
  auto schema = Schema({{"d9", DataType::Decimal(9, 2), false, 1},
                        {"d18", DataType::Decimal(18, 2), false, 2},
                        {"d38", DataType::Decimal(38, 2), false, 3},
                        {"d20", DataType::Decimal(20, 0), false, 4}});
  RecordBatch batch(schema);
  for (Int128 v : {Int128(5), Int128(-300), Int128(0), Int128(120), Int128(-1)}) {
    for (int c = 0; c < 4; ++c) batch.mutable_column(c).Append<Int128>(v);
  }
  std::string path = dir + "/stats_decimal.parquet";
  WrittenFile w = WriteFile(path, {batch});
  EXPECT_EQ(w.columns[0].min, LE<int32_t>(-300));
  EXPECT_EQ(w.columns[0].max, LE<int32_t>(120));
  EXPECT_EQ(w.columns[1].min, LE<int64_t>(-300));
  EXPECT_EQ(w.columns[1].max, LE<int64_t>(120));
  // Big-endian two's complement in 16 and 9 bytes.
  std::string min16(16, '\xff');
  min16[14] = '\xfe';
  min16[15] = '\xd4';  // -300 = ...FE D4
  std::string max16(16, '\0');
  max16[15] = 120;
  EXPECT_EQ(w.columns[2].min, min16);
  EXPECT_EQ(w.columns[2].max, max16);
  EXPECT_EQ(w.columns[3].min, min16.substr(7));
  EXPECT_EQ(w.columns[3].max, max16.substr(7));
  EXPECT_TRUE(ReadBack(path).Equals(batch));
  DumpInterop("stats_decimal", path, batch);
}

TEST(Statistics, BooleansAndMetricsSumOverRowGroups) {
  std::string dir = MakeTempDir("stats_bool");
  auto schema = Schema({{"b", DataType::Boolean(), true, 1}, {"i", DataType::Int32(), true, 2}});
  RecordBatch b1(schema), b2(schema);
  b1.mutable_column(0).Append<uint8_t>(1);
  b1.mutable_column(1).Append<int32_t>(10);
  b1.mutable_column(0).AppendNull();
  b1.mutable_column(1).AppendNull();
  b2.mutable_column(0).Append<uint8_t>(0);
  b2.mutable_column(1).Append<int32_t>(-10);
  std::string path = dir + "/b.parquet";
  auto w = FileWriter::Open(io::FileIO(), path, schema, {});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Add(b1).ok());
  ASSERT_TRUE((*w)->Flush().ok());
  ASSERT_TRUE((*w)->Add(b2).ok());
  auto done = (*w)->Finish();
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->row_group_offsets.size(), 2u);
  EXPECT_EQ(done->columns[0].min, std::string(1, '\0'));
  EXPECT_EQ(done->columns[0].max, std::string(1, '\1'));
  EXPECT_EQ(done->columns[1].min, LE<int32_t>(-10));
  EXPECT_EQ(done->columns[1].max, LE<int32_t>(10));
  EXPECT_EQ(done->columns[1].value_count, 3);
  EXPECT_EQ(done->columns[1].null_count, 1);
  auto r = FileReader::Open(io::FileIO(), path);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ((*r)->num_row_groups(), 2);
  int64_t compressed = 0;
  for (int g = 0; g < 2; ++g) {
    compressed += (*r)->column_chunk(g, 1)->total_compressed_size;
    EXPECT_EQ((*r)->column_chunk(g, 0)->file_offset, done->row_group_offsets[g]);
  }
  EXPECT_EQ(done->columns[1].compressed_size, compressed);
}

TEST(Dictionary, LowCardinalityColumnsAreDictionaryEncoded) {
  std::string dir = MakeTempDir("dict");
  auto schema = Schema({{"s", DataType::String(), true, 1},
                        {"i", DataType::Int32(), false, 2},
                        {"d", DataType::Decimal(30, 3), true, 3},
                        {"b", DataType::Boolean(), false, 4}});
  std::mt19937_64 rng(11);
  RecordBatch batch = testing::RandomBatch(schema, 5000, rng,
                                           {{0.2, 10, -1}, {0, 5, -1}, {0.1, 3, -1}, {0, 0, -1}});
  std::string path = dir + "/dict.parquet";
  WriteFile(path, {batch});
  auto r = FileReader::Open(io::FileIO(), path);
  ASSERT_TRUE(r.ok());
  for (int c = 0; c < 3; ++c) {
    auto info = (*r)->column_chunk(0, c);
    EXPECT_TRUE(info->dictionary_page_offset.has_value());
    EXPECT_EQ(info->encodings, (std::vector<std::string>{"PLAIN", "RLE", "RLE_DICTIONARY"}));
    auto pages = (*r)->ReadPageInfos(0, c);
    ASSERT_TRUE(pages.ok());
    EXPECT_EQ((*pages)[0].type, "DICTIONARY_PAGE");
    EXPECT_EQ((*pages)[0].encoding, "PLAIN");
    // Each distinct value once (the profiles draw from pools of 10, 5 and 3).
    EXPECT_LE((*pages)[0].num_values, (std::array{10, 5, 3}[c]));
    for (size_t p = 1; p < pages->size(); ++p) EXPECT_EQ((*pages)[p].encoding, "RLE_DICTIONARY");
  }
  // Booleans are always PLAIN.
  EXPECT_FALSE((*r)->column_chunk(0, 3)->dictionary_page_offset.has_value());
  EXPECT_TRUE(ReadBack(path).Equals(batch));
  DumpInterop("dictionary", path, batch);
}

TEST(Dictionary, FallsBackToPlainWhenTheDictionaryOutgrowsItsLimit) {
  std::string dir = MakeTempDir("dict_fallback");
  auto schema = Schema({{"s", DataType::String(), true, 1}, {"l", DataType::Int64(), true, 2}});
  std::mt19937_64 rng(12);
  // 2000 rows from a pool of 4, then high-cardinality values.
  RecordBatch batch = testing::RandomBatch(schema, 6000, rng, {{0.1, 4, 2000}, {0.1, 4, 2000}});
  WriterOptions o;
  o.dictionary_page_size_limit = 2048;
  o.page_size_bytes = 2048;
  std::string path = dir + "/dict_fallback.parquet";
  WriteFile(path, {batch}, o);
  auto r = FileReader::Open(io::FileIO(), path);
  ASSERT_TRUE(r.ok());
  for (int c = 0; c < 2; ++c) {
    auto info = (*r)->column_chunk(0, c);
    EXPECT_EQ(info->encodings, (std::vector<std::string>{"PLAIN", "RLE", "RLE_DICTIONARY"}));
    auto pages = (*r)->ReadPageInfos(0, c);
    ASSERT_TRUE(pages.ok());
    ASSERT_GT(pages->size(), 3u);
    EXPECT_EQ((*pages)[0].type, "DICTIONARY_PAGE");
    EXPECT_LE((*pages)[0].uncompressed_size, 2048);
    EXPECT_EQ((*pages)[1].encoding, "RLE_DICTIONARY");
    EXPECT_EQ(pages->back().encoding, "PLAIN");
    // Once PLAIN, always PLAIN.
    bool plain = false;
    for (size_t p = 1; p < pages->size(); ++p) {
      if ((*pages)[p].encoding == "PLAIN") plain = true;
      if (plain) {
        EXPECT_EQ((*pages)[p].encoding, "PLAIN");
      }
    }
  }
  EXPECT_TRUE(ReadBack(path).Equals(batch));
  DumpInterop("dictionary_fallback", path, batch);
}

// parquet-java's rule: the chunk's first page decides whether the dictionary pays. Columns of
// distinct values are PLAIN from their first page, with no dictionary page; a column of
// repeated values beside them keeps its dictionary.
TEST(Dictionary, ColumnsOfDistinctValuesArePlainFromTheirFirstPage) {
  std::string dir = MakeTempDir("dict_distinct");
  auto schema = Schema({{"seq", DataType::Int64(), false, 1},
                        {"key", DataType::String(), true, 2},
                        {"amount", DataType::Decimal(30, 2), true, 3},
                        {"score", DataType::Double(), false, 4},
                        {"kind", DataType::String(), false, 5}});
  RecordBatch batch(schema);
  const char* kinds[] = {"create", "update", "delete"};
  for (int64_t i = 0; i < 3000; ++i) {
    batch.mutable_column(0).Append<int64_t>(i * 7919);
    if (i % 10 == 3) {
      batch.mutable_column(1).AppendNull();
      batch.mutable_column(2).AppendNull();
    } else {
      batch.mutable_column(1).AppendBytes("key-" + std::to_string(i));
      batch.mutable_column(2).Append<Int128>(static_cast<Int128>(i) * 1000000007);
    }
    batch.mutable_column(3).Append<double>(static_cast<double>(i) / 3);
    batch.mutable_column(4).AppendBytes(kinds[i % 3]);
  }
  WriterOptions o;
  o.page_row_limit = 1000;
  std::string path = dir + "/dict_distinct.parquet";
  WriteFile(path, {batch}, o);
  auto r = FileReader::Open(io::FileIO(), path);
  ASSERT_TRUE(r.ok());
  for (int c = 0; c < 4; ++c) {
    SCOPED_TRACE(c);
    auto info = (*r)->column_chunk(0, c);
    EXPECT_FALSE(info->dictionary_page_offset.has_value());
    EXPECT_EQ(info->encodings, (std::vector<std::string>{"PLAIN", "RLE"}));
    auto pages = (*r)->ReadPageInfos(0, c);
    ASSERT_TRUE(pages.ok());
    ASSERT_EQ(pages->size(), 3u);
    for (const auto& page : *pages) EXPECT_EQ(page.encoding, "PLAIN");
  }
  EXPECT_TRUE((*r)->column_chunk(0, 4)->dictionary_page_offset.has_value());
  EXPECT_TRUE(ReadBack(path).Equals(batch));
  DumpInterop("dictionary_distinct", path, batch);
}

TEST(Dictionary, DisabledMeansPlainOnly) {
  std::string dir = MakeTempDir("dict_off");
  auto schema = Schema({{"s", DataType::String(), true, 1}});
  std::mt19937_64 rng(13);
  RecordBatch batch = testing::RandomBatch(schema, 1000, rng, {{0.1, 3, -1}});
  WriterOptions o;
  o.dictionary_enabled = false;
  std::string path = dir + "/p.parquet";
  WriteFile(path, {batch}, o);
  auto r = FileReader::Open(io::FileIO(), path);
  ASSERT_TRUE(r.ok());
  auto info = (*r)->column_chunk(0, 0);
  EXPECT_FALSE(info->dictionary_page_offset.has_value());
  EXPECT_EQ(info->encodings, (std::vector<std::string>{"PLAIN", "RLE"}));
  EXPECT_TRUE(ReadBack(path).Equals(batch));
}

TEST(Limits, PagesCloseNearThePageSizeLimit) {
  std::string dir = MakeTempDir("pages");
  auto schema = Schema({{"i", DataType::Int64(), false, 1}});
  RecordBatch batch(schema);
  for (int64_t i = 0; i < 10000; ++i) batch.mutable_column(0).Append<int64_t>(i * 7919);
  WriterOptions o;
  o.page_size_bytes = 1024;
  o.dictionary_enabled = false;
  o.compression = Compression::kUncompressed;
  std::string path = dir + "/p.parquet";
  WriteFile(path, {batch}, o);
  auto r = FileReader::Open(io::FileIO(), path);
  ASSERT_TRUE(r.ok());
  auto pages = (*r)->ReadPageInfos(0, 0);
  ASSERT_TRUE(pages.ok());
  EXPECT_GE(pages->size(), 10000u * 8 / 1024 - 1);
  int64_t values = 0;
  for (const auto& p : *pages) {
    // Required column: the page is exactly the PLAIN values.
    EXPECT_EQ(p.uncompressed_size, p.num_values * 8);
    EXPECT_LE(p.uncompressed_size, 1024);
    values += p.num_values;
  }
  EXPECT_EQ(values, 10000);
  EXPECT_TRUE(ReadBack(path).Equals(batch));
}

TEST(Limits, RowGroupsCloseNearTheRowGroupLimitAndOnFlush) {
  std::string dir = MakeTempDir("row_groups");
  auto schema = Schema({{"i", DataType::Int64(), false, 1}, {"s", DataType::String(), true, 2}});
  std::mt19937_64 rng(3);
  RecordBatch batch = testing::RandomBatch(schema, 20000, rng, {{0, 0, -1}, {0.1, 0, -1}});
  WriterOptions o;
  o.row_group_size_bytes = 64 << 10;
  o.compression = Compression::kUncompressed;
  std::string path = dir + "/rg.parquet";
  auto w = FileWriter::Open(io::FileIO(), path, schema, o);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Add(batch).ok());
  EXPECT_GT((*w)->estimated_file_size(), 0);
  ASSERT_TRUE((*w)->Flush().ok());
  ASSERT_TRUE((*w)->Flush().ok());  // empty row group: no-op
  ASSERT_TRUE((*w)->Add(batch.Take({0, 1, 2})).ok());
  EXPECT_EQ((*w)->row_count(), 20003);
  auto done = (*w)->Finish();
  ASSERT_TRUE(done.ok());
  auto r = FileReader::Open(io::FileIO(), path);
  ASSERT_TRUE(r.ok());
  EXPECT_GT((*r)->num_row_groups(), 4);
  EXPECT_EQ((*r)->row_group_num_rows((*r)->num_row_groups() - 1), 3);
  EXPECT_EQ(static_cast<int>(done->row_group_offsets.size()), (*r)->num_row_groups());
  for (int g = 0; g + 1 < (*r)->num_row_groups(); ++g) {
    int64_t size = (*r)->column_chunk(g, 0)->total_compressed_size +
                   (*r)->column_chunk(g, 1)->total_compressed_size;
    EXPECT_LT(size, 2 * o.row_group_size_bytes) << "row group " << g;
  }
  auto all = (*r)->ReadAll();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->num_rows(), 20003u);
  EXPECT_EQ(done->file_size, (*r)->file_size());
}

TEST(Levels, RequiredColumnsHaveNoDefinitionLevels) {
  std::string dir = MakeTempDir("levels");
  auto schema = Schema({{"req", DataType::Int32(), false, 1}, {"opt", DataType::Int32(), true, 2}});
  RecordBatch batch(schema);
  for (int i = 0; i < 100; ++i) {
    batch.mutable_column(0).Append<int32_t>(i);
    if (i % 3 == 0) {
      batch.mutable_column(1).AppendNull();
    } else {
      batch.mutable_column(1).Append<int32_t>(i);
    }
  }
  WriterOptions o;
  o.dictionary_enabled = false;
  o.compression = Compression::kUncompressed;
  std::string path = dir + "/levels.parquet";
  WriteFile(path, {batch}, o);
  auto r = FileReader::Open(io::FileIO(), path);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->ReadPageInfos(0, 0)->at(0).uncompressed_size, 400);
  // 4-byte length + RLE/bit-packed levels + 66 values.
  EXPECT_GT((*r)->ReadPageInfos(0, 1)->at(0).uncompressed_size, 4 + 66 * 4);
  RecordBatch back = ReadBack(path);
  EXPECT_TRUE(back.Equals(batch));
  EXPECT_EQ(back.column(1).null_count(), 34u);
  EXPECT_FALSE((*r)->schema()->fields[0].nullable);
  EXPECT_TRUE((*r)->schema()->fields[1].nullable);
  DumpInterop("levels", path, batch);
}

TEST(FileWriter, RejectsNullsInRequiredColumnsAndStaysFailed) {
  std::string dir = MakeTempDir("required_null");
  auto schema = Schema({{"req", DataType::Int32(), false, 1}});
  RecordBatch bad(schema);
  bad.mutable_column(0).AppendNull();
  RecordBatch good(schema);
  good.mutable_column(0).Append<int32_t>(1);
  std::string path = dir + "/x.parquet";
  auto w = FileWriter::Open(io::FileIO(), path, schema, {});
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE((*w)->Add(bad).IsInvalidArgument());
  EXPECT_TRUE((*w)->Add(good).IsInvalidArgument());
  EXPECT_FALSE((*w)->Finish().ok());
  (*w)->Abandon();
  EXPECT_FALSE(io::Exists(path));
}

TEST(FileWriter, RejectsDecimalsThatDoNotFitTheirStorage) {
  std::string dir = MakeTempDir("decimal_range");
  for (int p : {9, 18, 20}) {
    auto schema = Schema({{"d", DataType::Decimal(p, 0), false, 1}});
    RecordBatch batch(schema);
    batch.mutable_column(0).Append<Int128>(static_cast<Int128>(1) << 100);
    auto w =
        FileWriter::Open(io::FileIO(), dir + "/d" + std::to_string(p) + ".parquet", schema, {});
    ASSERT_TRUE(w.ok());
    EXPECT_TRUE((*w)->Add(batch).IsInvalidArgument()) << p;
  }
  auto bad = FileWriter::Open(io::FileIO(), dir + "/p.parquet",
                              Schema({{"d", DataType::Decimal(39, 0), false, 1}}), {});
  EXPECT_TRUE(bad.status().IsInvalidArgument());
  EXPECT_FALSE(io::Exists(dir + "/p.parquet"));
}

TEST(FileWriter, RejectsBatchesOfAnotherSchema) {
  std::string dir = MakeTempDir("other_schema");
  auto schema = Schema({{"a", DataType::Int32(), false, 1}});
  auto other = Schema({{"a", DataType::Int64(), false, 1}});
  auto w = FileWriter::Open(io::FileIO(), dir + "/x.parquet", schema, {});
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE((*w)->Add(RecordBatch(other)).IsInvalidArgument());
}

TEST(FileWriter, OpenIsExclusiveAndAbandonUnlinks) {
  std::string dir = MakeTempDir("lifecycle");
  auto schema = Schema({{"a", DataType::Int32(), false, 1}});
  std::string path = dir + "/x.parquet";
  {
    auto w = FileWriter::Open(io::FileIO(), path, schema, {});
    ASSERT_TRUE(w.ok());
    EXPECT_TRUE(io::Exists(path));
    auto again = FileWriter::Open(io::FileIO(), path, schema, {});
    EXPECT_TRUE(again.status().IsAlreadyExists());
    (*w)->Abandon();
    EXPECT_FALSE(io::Exists(path));
    (*w)->Abandon();  // idempotent
  }
  {
    auto w = FileWriter::Open(io::FileIO(), path, schema, {});
    ASSERT_TRUE(w.ok());
  }  // destroyed unfinished: removed
  EXPECT_FALSE(io::Exists(path));
}

TEST(FileWriter, WritesKeyValueMetadataAndCreatedBy) {
  std::string dir = MakeTempDir("kv");
  auto schema = Schema({{"a", DataType::Int32(), true, 1}});
  WriterOptions o;
  o.key_value_metadata = {{"iceberg.schema", "{\"type\":\"struct\"}"}, {"empty", ""}};
  std::string path = dir + "/kv.parquet";
  RecordBatch batch(schema);
  batch.mutable_column(0).Append<int32_t>(1);
  WriteFile(path, {batch}, o);
  auto r = FileReader::Open(io::FileIO(), path);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->key_value_metadata(), o.key_value_metadata);
  EXPECT_EQ((*r)->created_by().rfind("floe version ", 0), 0u);
}

TEST(FileWriter, EmptyFileIsValid) {
  std::string dir = MakeTempDir("empty");
  auto schema = Schema({{"a", DataType::String(), true, 1}, {"b", DataType::Double(), false, 2}});
  std::string path = dir + "/empty.parquet";
  auto w = FileWriter::Open(io::FileIO(), path, schema, {});
  ASSERT_TRUE(w.ok());
  auto done = (*w)->Finish();
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->row_count, 0);
  EXPECT_FALSE(done->columns[0].min.has_value());
  auto r = FileReader::Open(io::FileIO(), path);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->num_rows(), 0);
  EXPECT_EQ((*r)->num_row_groups(), 0);
  auto all = (*r)->ReadAll();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->num_rows(), 0u);
  DumpInterop("empty", path, RecordBatch(schema));
}

// A file as other writers make them: data page v2, PLAIN_DICTIONARY, RLE booleans, snappy,
// no statistics, no CRCs, legacy converted types only.
TEST(FileReader, ReadsDataPageV2AndLegacyEncodings) {
  auto page_header = [](format::PageHeader h, std::string_view body) {
    std::string out;
    format::Encode(h, &out);
    out.append(body);
    return out;
  };
  std::string file = "PAR1";
  format::FileMetaData md;
  md.version = 2;
  format::SchemaElement root;
  root.name = "root";
  root.num_children = 3;
  format::SchemaElement a;
  a.name = "a";
  a.type = format::Type::kInt32;
  a.repetition_type = format::Repetition::kOptional;
  format::SchemaElement b;
  b.name = "b";
  b.type = format::Type::kBoolean;
  b.repetition_type = format::Repetition::kRequired;
  format::SchemaElement ts;
  ts.name = "ts";
  ts.type = format::Type::kInt64;
  ts.repetition_type = format::Repetition::kRequired;
  ts.converted_type = format::ConvertedType::kTimestampMillis;
  md.schema = {root, a, b, ts};
  md.num_rows = 5;
  format::RowGroup rg;
  rg.num_rows = 5;

  // Column a: dictionary {10, 20} (PLAIN_DICTIONARY), v2 page with levels 1,0,1,1,0 and
  // indices 1,0,1, values section snappy-compressed.
  int64_t a_start = static_cast<int64_t>(file.size());
  {
    format::PageHeader dh;
    dh.type = format::PageType::kDictionaryPage;
    dh.uncompressed_page_size = 8;
    dh.compressed_page_size = 8;
    dh.dictionary_page_header.emplace();
    dh.dictionary_page_header->num_values = 2;
    dh.dictionary_page_header->encoding = format::Encoding::kPlainDictionary;
    std::string dict;
    int32_t v10 = 10, v20 = 20;
    dict.append(reinterpret_cast<const char*>(&v10), 4);
    dict.append(reinterpret_cast<const char*>(&v20), 4);
    // Dictionary page stored uncompressed is not allowed with a snappy chunk; compress it.
    auto comp = PageCompressor::Make(Compression::kSnappy, 0);
    std::string packed;
    ASSERT_TRUE((*comp)->Compress(dict, &packed).ok());
    dh.compressed_page_size = static_cast<int32_t>(packed.size());
    file += page_header(dh, packed);
  }
  int64_t a_data = static_cast<int64_t>(file.size());
  {
    uint8_t levels[] = {1, 0, 1, 1, 0};
    std::string lv;
    EncodeRleHybrid(levels, 5, 1, &lv);
    uint32_t idx[] = {1, 0, 1};
    std::string values = "\x01";
    EncodeRleHybrid(idx, 3, 1, &values);
    auto comp = PageCompressor::Make(Compression::kSnappy, 0);
    std::string packed;
    ASSERT_TRUE((*comp)->Compress(values, &packed).ok());
    format::PageHeader h;
    h.type = format::PageType::kDataPageV2;
    h.uncompressed_page_size = static_cast<int32_t>(lv.size() + values.size());
    h.compressed_page_size = static_cast<int32_t>(lv.size() + packed.size());
    auto& v2 = h.data_page_header_v2.emplace();
    v2.num_values = 5;
    v2.num_nulls = 2;
    v2.num_rows = 5;
    v2.encoding = format::Encoding::kPlainDictionary;
    v2.definition_levels_byte_length = static_cast<int32_t>(lv.size());
    file += page_header(h, lv + packed);
  }
  auto chunk = [&](format::Type t, std::string name, int64_t start, int64_t data,
                   std::optional<int64_t> dict) {
    format::ColumnChunk cc;
    cc.file_offset = start;
    format::ColumnMetaData m;
    m.type = t;
    m.encodings = {format::Encoding::kRle};
    m.path_in_schema = {name};
    m.codec = format::CompressionCodec::kSnappy;
    m.num_values = 5;
    m.total_compressed_size = static_cast<int64_t>(file.size()) - start;
    m.total_uncompressed_size = m.total_compressed_size;
    m.data_page_offset = data;
    m.dictionary_page_offset = dict;
    cc.meta_data = m;
    return cc;
  };
  rg.columns.push_back(chunk(format::Type::kInt32, "a", a_start, a_data, a_start));

  // Column b: RLE booleans 1,1,0,1,0 in an uncompressed v2 page.
  int64_t b_start = static_cast<int64_t>(file.size());
  {
    uint8_t bits[] = {1, 1, 0, 1, 0};
    std::string rle;
    EncodeRleHybrid(bits, 5, 1, &rle);
    std::string values;
    AppendLE32(static_cast<uint32_t>(rle.size()), &values);
    values += rle;
    format::PageHeader h;
    h.type = format::PageType::kDataPageV2;
    h.uncompressed_page_size = static_cast<int32_t>(values.size());
    h.compressed_page_size = static_cast<int32_t>(values.size());
    auto& v2 = h.data_page_header_v2.emplace();
    v2.num_values = 5;
    v2.num_rows = 5;
    v2.encoding = format::Encoding::kRle;
    v2.is_compressed = false;
    file += page_header(h, values);
  }
  rg.columns.push_back(chunk(format::Type::kBoolean, "b", b_start, b_start, std::nullopt));

  // Column ts: v1 PLAIN millis.
  int64_t ts_start = static_cast<int64_t>(file.size());
  {
    std::string values;
    for (int64_t v : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{1700000000000}, int64_t{5}}) {
      values.append(reinterpret_cast<const char*>(&v), 8);
    }
    auto comp = PageCompressor::Make(Compression::kSnappy, 0);
    std::string packed;
    ASSERT_TRUE((*comp)->Compress(values, &packed).ok());
    format::PageHeader h;
    h.type = format::PageType::kDataPage;
    h.uncompressed_page_size = static_cast<int32_t>(values.size());
    h.compressed_page_size = static_cast<int32_t>(packed.size());
    auto& v1 = h.data_page_header.emplace();
    v1.num_values = 5;
    v1.encoding = format::Encoding::kPlain;
    file += page_header(h, packed);
  }
  rg.columns.push_back(chunk(format::Type::kInt64, "ts", ts_start, ts_start, std::nullopt));
  md.row_groups.push_back(rg);
  std::string footer;
  format::Encode(md, &footer);
  file += footer;
  AppendLE32(static_cast<uint32_t>(footer.size()), &file);
  file += "PAR1";

  auto r = FileReader::OpenBuffer(file, "v2.parquet");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->schema()->fields[2].type, DataType::TimestampTz());
  auto batch = (*r)->ReadAll();
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  const Column& ca = batch->column(0);
  ASSERT_EQ(ca.size(), 5u);
  EXPECT_EQ(ca.Get<int32_t>(0), 20);
  EXPECT_TRUE(ca.IsNull(1));
  EXPECT_EQ(ca.Get<int32_t>(2), 10);
  EXPECT_EQ(ca.Get<int32_t>(3), 20);
  EXPECT_TRUE(ca.IsNull(4));
  const Column& cb = batch->column(1);
  EXPECT_EQ(cb.Get<uint8_t>(0), 1);
  EXPECT_EQ(cb.Get<uint8_t>(2), 0);
  EXPECT_EQ(cb.Get<uint8_t>(3), 1);
  const Column& ct = batch->column(2);
  EXPECT_EQ(ct.Get<int64_t>(2), -1000);
  EXPECT_EQ(ct.Get<int64_t>(3), 1700000000000000);
}

TEST(FileReader, ErrorsNameTheFile) {
  auto r = FileReader::OpenBuffer("PAR1 this is not parquet PAR1", "bogus.parquet");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsCorruption());
  EXPECT_NE(r.status().message().find("bogus.parquet"), std::string::npos);
  auto missing = FileReader::Open(io::FileIO(), "/nonexistent/x.parquet");
  EXPECT_TRUE(missing.status().IsNotFound());
}

}  // namespace
}  // namespace floe::parquet

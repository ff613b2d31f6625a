#include "floe/format/parquet/thrift_compact.h"

#include <random>

#include "floe/format/parquet/metadata.h"
#include "gtest/gtest.h"

namespace floe::parquet {
namespace {

using thrift::CompactReader;
using thrift::CompactWriter;
using thrift::CType;

TEST(ThriftCompact, EncodesFieldHeadersWithShortAndLongDeltas) {
  std::string out;
  CompactWriter w(&out);
  w.StructBegin();
  w.FieldI32(1, 1);    // delta 1, zigzag(1) = 2
  w.FieldI32(17, -1);  // delta 16: long form, id zigzag(17) = 34, zigzag(-1) = 1
  w.FieldBool(18, true);
  w.StructEnd();
  EXPECT_EQ(out, std::string("\x15\x02\x05\x22\x01\x11\x00", 7));
}

TEST(ThriftCompact, EncodesListHeadersAndVarints) {
  std::string out;
  CompactWriter w(&out);
  w.ListBegin(CType::kI32, 3);
  EXPECT_EQ(out, "\x35");
  out.clear();
  w.ListBegin(CType::kBinary, 20);
  EXPECT_EQ(out, "\xf8\x14");
  out.clear();
  w.WriteI64(-150);  // zigzag 299 = 0xAB 0x02
  EXPECT_EQ(out, "\xab\x02");
}

TEST(ThriftCompact, RoundTripsEveryValueType) {
  std::string out;
  CompactWriter w(&out);
  w.StructBegin();
  w.FieldBool(1, false);
  w.FieldI8(2, -7);
  w.FieldI16(3, -300);
  w.FieldI32(4, INT32_MIN);
  w.FieldI64(5, INT64_MAX);
  w.FieldDouble(6, 2.5);
  w.FieldBinary(7, std::string("a\0b", 3));
  w.FieldListBegin(8, CType::kI32, 16);
  for (int i = 0; i < 16; ++i) w.WriteI32(i - 8);
  w.FieldStructBegin(30);
  w.FieldI32(1, 42);
  w.StructEnd();
  w.StructEnd();

  CompactReader r(out);
  ASSERT_TRUE(r.StructBegin().ok());
  CType t;
  int16_t id;
  ASSERT_TRUE(r.FieldBegin(&t, &id).ok());
  bool b = true;
  ASSERT_TRUE(r.ReadBool(t, &b).ok());
  EXPECT_EQ(id, 1);
  EXPECT_FALSE(b);
  ASSERT_TRUE(r.FieldBegin(&t, &id).ok());
  int8_t i8;
  ASSERT_TRUE(r.ReadI8(&i8).ok());
  EXPECT_EQ(i8, -7);
  ASSERT_TRUE(r.FieldBegin(&t, &id).ok());
  int16_t i16;
  ASSERT_TRUE(r.ReadI16(&i16).ok());
  EXPECT_EQ(i16, -300);
  ASSERT_TRUE(r.FieldBegin(&t, &id).ok());
  int32_t i32;
  ASSERT_TRUE(r.ReadI32(&i32).ok());
  EXPECT_EQ(i32, INT32_MIN);
  ASSERT_TRUE(r.FieldBegin(&t, &id).ok());
  int64_t i64;
  ASSERT_TRUE(r.ReadI64(&i64).ok());
  EXPECT_EQ(i64, INT64_MAX);
  ASSERT_TRUE(r.FieldBegin(&t, &id).ok());
  double d;
  ASSERT_TRUE(r.ReadDouble(&d).ok());
  EXPECT_EQ(d, 2.5);
  ASSERT_TRUE(r.FieldBegin(&t, &id).ok());
  std::string s;
  ASSERT_TRUE(r.ReadBinary(&s).ok());
  EXPECT_EQ(s, std::string("a\0b", 3));
  ASSERT_TRUE(r.FieldBegin(&t, &id).ok());
  EXPECT_EQ(t, CType::kList);
  CType elem;
  int32_t size;
  ASSERT_TRUE(r.ListBegin(&elem, &size).ok());
  EXPECT_EQ(size, 16);
  for (int i = 0; i < 16; ++i) {
    ASSERT_TRUE(r.ReadI32(&i32).ok());
    EXPECT_EQ(i32, i - 8);
  }
  // Unknown fields are skipped whole.
  ASSERT_TRUE(r.FieldBegin(&t, &id).ok());
  EXPECT_EQ(id, 30);
  ASSERT_TRUE(r.Skip(t).ok());
  ASSERT_TRUE(r.FieldBegin(&t, &id).ok());
  EXPECT_EQ(t, CType::kStop);
  ASSERT_TRUE(r.StructEnd().ok());
  EXPECT_EQ(r.remaining(), 0u);
}

TEST(ThriftCompact, RejectsLengthsPastTheEnd) {
  std::string bad =
      "\x18\x7f"
      "abc";  // binary field claiming 127 bytes
  CompactReader r(bad);
  ASSERT_TRUE(r.StructBegin().ok());
  CType t;
  int16_t id;
  ASSERT_TRUE(r.FieldBegin(&t, &id).ok());
  std::string s;
  Status st = r.ReadBinary(&s);
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();

  std::string list = "\xf5\xff\xff\xff\xff\x0f";  // list of 2^32-1 i32s
  CompactReader r2(list);
  CType elem;
  int32_t size;
  EXPECT_TRUE(r2.ListBegin(&elem, &size).IsCorruption());
}

TEST(ThriftCompact, BoundsNestingDepth) {
  std::string deep(10000, '\x1c');  // struct field (delta 1, type 12), nested forever
  CompactReader r(deep);
  Status st = r.Skip(CType::kStruct);
  EXPECT_TRUE(st.IsCorruption());
}

TEST(ThriftCompact, FileMetaDataRoundTrips) {
  format::FileMetaData md;
  md.version = 1;
  format::SchemaElement root;
  root.name = "schema";
  root.num_children = 1;
  format::SchemaElement leaf;
  leaf.name = "ts";
  leaf.type = format::Type::kInt64;
  leaf.repetition_type = format::Repetition::kOptional;
  leaf.field_id = 7;
  leaf.converted_type = format::ConvertedType::kTimestampMicros;
  format::LogicalType lt;
  lt.kind = format::LogicalType::kTimestamp;
  lt.is_adjusted_to_utc = true;
  lt.unit = format::TimeUnit::kMicros;
  leaf.logical_type = lt;
  md.schema = {root, leaf};
  md.num_rows = 3;
  format::RowGroup rg;
  rg.num_rows = 3;
  rg.total_byte_size = 100;
  format::ColumnChunk cc;
  cc.file_offset = 4;
  format::ColumnMetaData m;
  m.type = format::Type::kInt64;
  m.encodings = {format::Encoding::kPlain, format::Encoding::kRle};
  m.path_in_schema = {"ts"};
  m.codec = format::CompressionCodec::kZstd;
  m.num_values = 3;
  m.total_compressed_size = 50;
  m.total_uncompressed_size = 60;
  m.data_page_offset = 4;
  m.statistics.emplace();
  m.statistics->null_count = 1;
  m.statistics->min_value = std::string(8, '\0');
  cc.meta_data = m;
  rg.columns.push_back(cc);
  md.row_groups.push_back(rg);
  md.key_value_metadata.push_back({"k", std::string("v")});
  md.created_by = "me";
  md.column_orders = {1};

  std::string bytes;
  format::Encode(md, &bytes);
  format::FileMetaData back;
  ASSERT_TRUE(format::Decode(bytes, &back).ok());
  EXPECT_EQ(back.schema, md.schema);
  EXPECT_EQ(back.num_rows, 3);
  ASSERT_EQ(back.row_groups.size(), 1u);
  const auto& bm = *back.row_groups[0].columns[0].meta_data;
  EXPECT_EQ(bm.encodings, m.encodings);
  EXPECT_EQ(bm.path_in_schema, m.path_in_schema);
  EXPECT_EQ(bm.codec, m.codec);
  EXPECT_EQ(bm.statistics, m.statistics);
  EXPECT_EQ(back.key_value_metadata, md.key_value_metadata);
  EXPECT_EQ(back.created_by, md.created_by);
  EXPECT_EQ(back.column_orders, md.column_orders);

  // Dropping a required field is Corruption.
  format::FileMetaData missing;
  std::string no_rows;
  {
    CompactWriter w(&no_rows);
    w.StructBegin();
    w.FieldI32(1, 1);
    w.StructEnd();
  }
  EXPECT_TRUE(format::Decode(no_rows, &missing).IsCorruption());
}

TEST(ThriftCompact, PageHeaderRoundTrips) {
  format::PageHeader h;
  h.type = format::PageType::kDataPage;
  h.uncompressed_page_size = 100;
  h.compressed_page_size = 80;
  h.crc = 0xdeadbeef;
  h.data_page_header.emplace();
  h.data_page_header->num_values = 12;
  h.data_page_header->encoding = format::Encoding::kRleDictionary;
  std::string bytes;
  format::Encode(h, &bytes);
  bytes += "trailing page data";
  format::PageHeader back;
  auto len = format::DecodePageHeader(bytes, &back);
  ASSERT_TRUE(len.ok());
  EXPECT_EQ(*len, bytes.size() - 18);
  EXPECT_EQ(back.crc, h.crc);
  EXPECT_EQ(back.data_page_header->num_values, 12);
  EXPECT_EQ(back.data_page_header->encoding, format::Encoding::kRleDictionary);
}

TEST(ThriftCompact, GarbageNeverCrashes) {
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 20000; ++i) {
    std::string s(rng() % 64, '\0');
    for (auto& c : s) c = static_cast<char>(rng());
    format::FileMetaData md;
    (void)format::Decode(s, &md);
    format::PageHeader h;
    (void)format::DecodePageHeader(s, &h);
  }
}

}  // namespace
}  // namespace floe::parquet

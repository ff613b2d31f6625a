#include "floe/iceberg/schema.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace floe::iceberg {
namespace {

std::string Bytes(std::initializer_list<int> b) {
  std::string out;
  for (int x : b) out.push_back(static_cast<char>(x));
  return out;
}

// sql::ParseDataType reads these back (sql/parser_test.cc: ReadsBackTheNamesFloePrints).
TEST(FlinkTypeName, SpellsTimestampsWithMicrosecondPrecision) {
  EXPECT_EQ(FlinkTypeName(DataType::Boolean()), "BOOLEAN");
  EXPECT_EQ(FlinkTypeName(DataType::Int32()), "INT");
  EXPECT_EQ(FlinkTypeName(DataType::Int64()), "BIGINT");
  EXPECT_EQ(FlinkTypeName(DataType::Float()), "FLOAT");
  EXPECT_EQ(FlinkTypeName(DataType::Double()), "DOUBLE");
  EXPECT_EQ(FlinkTypeName(DataType::String()), "STRING");
  EXPECT_EQ(FlinkTypeName(DataType::Binary()), "BYTES");
  EXPECT_EQ(FlinkTypeName(DataType::Date()), "DATE");
  EXPECT_EQ(FlinkTypeName(DataType::Timestamp()), "TIMESTAMP(6)");
  EXPECT_EQ(FlinkTypeName(DataType::TimestampTz()), "TIMESTAMP_LTZ(6)");
  EXPECT_EQ(FlinkTypeName(DataType::Decimal(10, 2)), "DECIMAL(10, 2)");
}

TEST(AssignFreshFieldIds, NumbersColumnsFromOneInOrder) {
  Result<std::vector<Field>> fields =
      AssignFreshFieldIds({Field{"seq", DataType::Int64(), false, 7},
                           Field{"weird name", DataType::Decimal(10, 2), true, 0},
                           Field{"d", DataType::Date(), true, 0}});
  ASSERT_TRUE(fields.ok()) << fields.status().ToString();
  ASSERT_EQ(fields->size(), 3u);
  EXPECT_EQ((*fields)[0], (Field{"seq", DataType::Int64(), false, 1}));
  EXPECT_EQ((*fields)[1], (Field{"weird name", DataType::Decimal(10, 2), true, 2}));
  EXPECT_EQ((*fields)[2], (Field{"d", DataType::Date(), true, 3}));
  ASSERT_TRUE(AssignFreshFieldIds({}).ok());
}

TEST(AssignFreshFieldIds, RejectsNamesEqualIgnoringCase) {
  Result<std::vector<Field>> r = AssignFreshFieldIds(
      {Field{"a", DataType::Int32(), true, 0}, Field{"A", DataType::Int64(), true, 0}});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalidArgument());
  EXPECT_EQ(r.status().message(),
            "column 2 ('A'): duplicate column name (names are compared case-insensitively)");
  r = AssignFreshFieldIds({Field{"", DataType::Int32(), true, 0}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "column 1 has no name");
}

Schema SampleSchema() {
  Schema s;
  s.schema_id = 3;
  s.fields = {{"seq", DataType::Int64(), false, 1},
              {"npi", DataType::String(), false, 2},
              {"amount", DataType::Decimal(10, 2), true, 3},
              {"ts", DataType::TimestampTz(), true, 5},
              {"day", DataType::Date(), true, 6},
              {"blob", DataType::Binary(), true, 7},
              {"ok", DataType::Boolean(), true, 8},
              {"f", DataType::Float(), true, 9},
              {"d", DataType::Double(), true, 10},
              {"i", DataType::Int32(), true, 11},
              {"t", DataType::Timestamp(), true, 12}};
  s.identifier_field_ids = {1, 2};
  return s;
}

TEST(Schema, LookupsAndHighestId) {
  Schema s = SampleSchema();
  EXPECT_EQ(s.FindById(5)->name, "ts");
  EXPECT_EQ(s.FindById(4), nullptr);
  EXPECT_EQ(s.FindByName("npi")->field_id, 2);
  EXPECT_EQ(s.FindByName("nope"), nullptr);
  EXPECT_EQ(s.HighestFieldId(), 12);
  auto bs = s.ToBatchSchema();
  EXPECT_EQ(bs->fields, s.fields);
}

TEST(SchemaJson, RoundTripsAndUsesIcebergSpelling) {
  Schema s = SampleSchema();
  std::string json = SchemaToJson(s);
  EXPECT_NE(json.find("\"type\":\"struct\""), std::string::npos);
  EXPECT_NE(json.find("\"identifier-field-ids\":[1,2]"), std::string::npos);
  EXPECT_NE(json.find("\"type\":\"timestamptz\""), std::string::npos);
  EXPECT_NE(json.find("\"required\":true"), std::string::npos);
  Result<Schema> back = SchemaFromJson(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, s);
}

TEST(SchemaJson, RejectsMalformedInputWithFieldPath) {
  Result<Schema> r = SchemaFromJson(
      R"({"type":"struct","schema-id":0,"fields":[{"id":1,"name":"a","required":true,"type":"long"},)"
      R"({"id":2,"name":"b","required":"yes","type":"long"}]})");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsCorruption());
  EXPECT_NE(r.status().message().find("fields[1].required"), std::string::npos)
      << r.status().ToString();
  EXPECT_FALSE(SchemaFromJson("{\"type\":\"struct\",\"fields\":[").ok());
  EXPECT_FALSE(SchemaFromJson("[]").ok());
  EXPECT_FALSE(
      SchemaFromJson(
          R"({"type":"struct","fields":[{"id":1,"name":"a","required":true,"type":"long"},)"
          R"({"id":1,"name":"b","required":true,"type":"long"}]})")
          .ok());
  // Nested types are not supported yet: clear error, no crash.
  r = SchemaFromJson(
      R"({"type":"struct","fields":[{"id":1,"name":"a","required":true,"type":{"type":"list"}}]})");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("fields[0].type"), std::string::npos);
}

TEST(ParseIcebergType, AcceptsCanonicalAndSpacedDecimals) {
  EXPECT_EQ(*ParseIcebergType("decimal(9,2)"), DataType::Decimal(9, 2));
  EXPECT_EQ(*ParseIcebergType("decimal(9, 2)"), DataType::Decimal(9, 2));
  EXPECT_EQ(*ParseIcebergType("timestamptz"), DataType::TimestampTz());
  EXPECT_EQ(*ParseIcebergType("long"), DataType::Int64());
  EXPECT_EQ(ParseIcebergType("uuid").status().code(), StatusCode::kNotImplemented);
  EXPECT_FALSE(ParseIcebergType("decimal(40,2)").ok());
  EXPECT_FALSE(ParseIcebergType("bigint").ok());
}

TEST(SingleValue, SerializesPerAppendixD) {
  EXPECT_EQ(SerializeValue(DataType::Boolean(), true), Bytes({1}));
  EXPECT_EQ(SerializeValue(DataType::Boolean(), false), Bytes({0}));
  EXPECT_EQ(SerializeValue(DataType::Int32(), int32_t{34}), Bytes({34, 0, 0, 0}));
  EXPECT_EQ(SerializeValue(DataType::Int64(), int64_t{-2}),
            Bytes({0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}));
  EXPECT_EQ(SerializeValue(DataType::Float(), 1.0f), Bytes({0, 0, 0x80, 0x3f}));
  EXPECT_EQ(SerializeValue(DataType::Double(), 1.0), Bytes({0, 0, 0, 0, 0, 0, 0xf0, 0x3f}));
  EXPECT_EQ(SerializeValue(DataType::String(), std::string("iceberg")), "iceberg");
  EXPECT_EQ(SerializeValue(DataType::Date(), int32_t{17486}), Bytes({0x4e, 0x44, 0, 0}));
  // Decimals: BigInteger.toByteArray() — minimal two's complement big-endian.
  DataType dec = DataType::Decimal(10, 2);
  EXPECT_EQ(SerializeValue(dec, Int128(0)), Bytes({0x00}));
  EXPECT_EQ(SerializeValue(dec, Int128(1)), Bytes({0x01}));
  EXPECT_EQ(SerializeValue(dec, Int128(-1)), Bytes({0xff}));
  EXPECT_EQ(SerializeValue(dec, Int128(127)), Bytes({0x7f}));
  EXPECT_EQ(SerializeValue(dec, Int128(128)), Bytes({0x00, 0x80}));
  EXPECT_EQ(SerializeValue(dec, Int128(-128)), Bytes({0x80}));
  EXPECT_EQ(SerializeValue(dec, Int128(-129)), Bytes({0xff, 0x7f}));
  EXPECT_EQ(SerializeValue(dec, Int128(1420)), Bytes({0x05, 0x8c}));  // 14.20
  EXPECT_EQ(SerializeValue(dec, Value()), "");
}

TEST(SingleValue, RoundTripsEveryType) {
  Int128 big = static_cast<Int128>(1) << 100;
  std::vector<std::pair<DataType, Value>> cases = {
      {DataType::Boolean(), true},
      {DataType::Boolean(), false},
      {DataType::Int32(), int32_t{-7}},
      {DataType::Int32(), std::numeric_limits<int32_t>::min()},
      {DataType::Int64(), std::numeric_limits<int64_t>::max()},
      {DataType::Float(), -2.5f},
      {DataType::Double(), 3.25},
      {DataType::String(), std::string("h\xc3\xa9llo")},
      {DataType::Binary(), Bytes({0, 1, 2, 0xff})},
      {DataType::Date(), int32_t{-1}},
      {DataType::Timestamp(), int64_t{-1}},
      {DataType::TimestampTz(), int64_t{1700000000000000}},
      {DataType::Decimal(38, 0), big},
      {DataType::Decimal(38, 0), -big},
      {DataType::Decimal(38, 0), Int128(-1)},
      {DataType::Decimal(9, 2), Int128(0)},
  };
  for (const auto& [type, value] : cases) {
    std::string bytes = SerializeValue(type, value);
    Result<Value> back = DeserializeValue(type, bytes);
    ASSERT_TRUE(back.ok()) << type.ToString() << ": " << back.status().ToString();
    EXPECT_EQ(*back, value) << type.ToString();
  }
}

TEST(SingleValue, DeserializeRejectsWrongSizesAndAcceptsPromotions) {
  EXPECT_TRUE(DeserializeValue(DataType::Int32(), "abc").status().IsCorruption());
  EXPECT_FALSE(DeserializeValue(DataType::Boolean(), "").ok());
  EXPECT_FALSE(DeserializeValue(DataType::Decimal(10, 2), "").ok());
  EXPECT_FALSE(DeserializeValue(DataType::Decimal(38, 2), std::string(17, '\x01')).ok());
  EXPECT_EQ(*DeserializeValue(DataType::Int64(), Bytes({0xff, 0xff, 0xff, 0xff})),
            Value(int64_t{-1}));
  EXPECT_EQ(*DeserializeValue(DataType::Double(), Bytes({0, 0, 0x80, 0x3f})), Value(1.0));
}

TEST(ParquetStat, ConvertsEachPhysicalEncoding) {
  EXPECT_EQ(*ParquetStatToIcebergBound(DataType::Boolean(), Bytes({1})), Bytes({1}));
  EXPECT_EQ(*ParquetStatToIcebergBound(DataType::Int32(), Bytes({5, 0, 0, 0})),
            Bytes({5, 0, 0, 0}));
  EXPECT_EQ(*ParquetStatToIcebergBound(DataType::Date(), Bytes({5, 0, 0, 0})), Bytes({5, 0, 0, 0}));
  std::string eight = Bytes({1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(*ParquetStatToIcebergBound(DataType::Int64(), eight), eight);
  EXPECT_EQ(*ParquetStatToIcebergBound(DataType::Timestamp(), eight), eight);
  EXPECT_EQ(*ParquetStatToIcebergBound(DataType::TimestampTz(), eight), eight);
  EXPECT_EQ(*ParquetStatToIcebergBound(DataType::Double(), eight), eight);
  EXPECT_EQ(*ParquetStatToIcebergBound(DataType::Float(), Bytes({0, 0, 0x80, 0x3f})),
            Bytes({0, 0, 0x80, 0x3f}));
  EXPECT_EQ(*ParquetStatToIcebergBound(DataType::String(), "abc"), "abc");
  EXPECT_EQ(*ParquetStatToIcebergBound(DataType::Binary(), Bytes({0, 0xff})), Bytes({0, 0xff}));
  // Decimal P<=9: INT32 little-endian -> minimal big-endian.
  EXPECT_EQ(*ParquetStatToIcebergBound(DataType::Decimal(9, 2), Bytes({0x8c, 0x05, 0, 0})),
            Bytes({0x05, 0x8c}));
  EXPECT_EQ(*ParquetStatToIcebergBound(DataType::Decimal(9, 2), Bytes({0xff, 0xff, 0xff, 0xff})),
            Bytes({0xff}));
  // P<=18: INT64 little-endian.
  EXPECT_EQ(
      *ParquetStatToIcebergBound(DataType::Decimal(18, 2), Bytes({0x80, 0, 0, 0, 0, 0, 0, 0})),
      Bytes({0x00, 0x80}));
  // P>18: fixed-length big-endian two's complement (width for P=20 is 9 bytes).
  EXPECT_EQ(
      *ParquetStatToIcebergBound(DataType::Decimal(20, 0),
                                 Bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})),
      Bytes({0xff, 0x7f}));
  EXPECT_EQ(*ParquetStatToIcebergBound(DataType::Decimal(38, 0), std::string(16, '\0')),
            Bytes({0}));
  // Wrong widths are errors, not garbage.
  EXPECT_TRUE(ParquetStatToIcebergBound(DataType::Int64(), "abcd").status().IsCorruption());
  EXPECT_FALSE(ParquetStatToIcebergBound(DataType::Decimal(9, 2), eight).ok());
  EXPECT_FALSE(ParquetStatToIcebergBound(DataType::Boolean(), "").ok());
}

TEST(CompareValues, OrdersLikeIceberg) {
  EXPECT_LT(CompareValues(DataType::Int64(), int64_t{-5}, int64_t{3}), 0);
  EXPECT_EQ(CompareValues(DataType::Int32(), int32_t{3}, int32_t{3}), 0);
  EXPECT_GT(CompareValues(DataType::Decimal(38, 0), Int128(1) << 90, Int128(5)), 0);
  // Unsigned byte order: 0xff sorts after 'a'.
  EXPECT_GT(CompareValues(DataType::String(), std::string("\xff"), std::string("a")), 0);
  EXPECT_LT(CompareValues(DataType::Binary(), std::string("ab"), std::string("abc")), 0);
  EXPECT_LT(CompareValues(DataType::Double(), -0.0, 0.0), 0);
  EXPECT_GT(CompareValues(DataType::Double(), std::nan(""), 1e300), 0);
  EXPECT_LT(CompareValues(DataType::Boolean(), false, true), 0);
}

TEST(Values, ColumnRoundTripAndHumanStrings) {
  Column c(DataType::Decimal(10, 2));
  AppendValue(&c, Int128(-1420));
  AppendValue(&c, Value());
  EXPECT_EQ(ValueAt(c, 0), Value(Int128(-1420)));
  EXPECT_EQ(ValueAt(c, 1), Value());
  EXPECT_EQ(ValueToString(DataType::Decimal(10, 2), Int128(-1420)), "-14.20");
  EXPECT_EQ(ValueToString(DataType::Decimal(10, 2), Int128(5)), "0.05");
  EXPECT_EQ(ValueToString(DataType::Date(), int32_t{17486}), "2017-11-16");
  EXPECT_EQ(ValueToString(DataType::Date(), int32_t{-1}), "1969-12-31");
  EXPECT_EQ(ValueToString(DataType::Timestamp(), int64_t{1510871468000000}), "2017-11-16T22:31:08");
  EXPECT_EQ(ValueToString(DataType::Timestamp(), int64_t{-1}), "1969-12-31T23:59:59.999999");
  EXPECT_EQ(ValueToString(DataType::String(), std::string("abc")), "abc");
  EXPECT_EQ(ValueToString(DataType::Int64(), int64_t{42}), "42");
  EXPECT_EQ(ValueToString(DataType::Boolean(), true), "true");
  EXPECT_EQ(ValueToString(DataType::Int32(), Value()), "null");

  Column s(DataType::String());
  AppendValue(&s, std::string("x"));
  EXPECT_EQ(ValueAt(s, 0), Value(std::string("x")));
  Column b(DataType::Boolean());
  AppendValue(&b, true);
  EXPECT_EQ(ValueAt(b, 0), Value(true));
  Column ts(DataType::TimestampTz());
  AppendValue(&ts, int64_t{7});
  EXPECT_EQ(ValueAt(ts, 0), Value(int64_t{7}));
}

}  // namespace
}  // namespace floe::iceberg

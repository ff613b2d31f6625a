#include "floe/iceberg/partition_spec.h"

#include <gtest/gtest.h>

namespace floe::iceberg {
namespace {

std::string Bytes(std::initializer_list<int> b) {
  std::string out;
  for (int x : b) out.push_back(static_cast<char>(x));
  return out;
}

std::string LongLE(int64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
  return out;
}

constexpr int32_t kDay20171116 = 17486;
constexpr int64_t kTs20171116T223108 = 1510871468000000;  // micros
constexpr int64_t kMicrosPerHour = 3600LL * 1000000;
constexpr int64_t kMicrosPerDay = 24 * kMicrosPerHour;

int32_t Hash(std::string_view bytes) { return static_cast<int32_t>(Murmur3Hash32(bytes)); }

int32_t ExpectedBucket(int32_t hash, int32_t n) {
  return static_cast<int32_t>((static_cast<uint32_t>(hash) & 0x7fffffffu) %
                              static_cast<uint32_t>(n));
}

// The spec's Appendix B test values.
TEST(Murmur3, MatchesSpecAppendixBVectors) {
  EXPECT_EQ(Hash(LongLE(34)), 2017239379);                       // int / long 34
  EXPECT_EQ(Hash(Bytes({0x05, 0x8c})), -500754589);              // decimal 14.20
  EXPECT_EQ(Hash(LongLE(kDay20171116)), -653330422);             // date 2017-11-16
  EXPECT_EQ(Hash(LongLE(kTs20171116T223108)), -2047944441);      // timestamp
  EXPECT_EQ(Hash(LongLE(kTs20171116T223108 + 1)), -1207196810);  // timestamp + 1us
  EXPECT_EQ(Hash("iceberg"), 1210000089);                        // string
  EXPECT_EQ(Hash(Bytes({0, 1, 2, 3})), -188683207);              // binary / fixed
  EXPECT_EQ(Hash(Bytes({0xF7, 0x9C, 0x3E, 0x09, 0x67, 0x7C, 0x4B, 0xBD, 0xA4, 0x79, 0x3F, 0x34,
                        0x9C, 0xB7, 0x85, 0xE7})),
            1488055340);                   // uuid bytes
  EXPECT_EQ(Hash(LongLE(1)), 1392991556);  // boolean true = hashInt(1)
}

TEST(BucketTransform, HashesEachTypeAsTheSpecSays) {
  Transform b{TransformKind::kBucket, 16};
  for (int32_t n : {1, 7, 16, 1000}) {
    Transform t{TransformKind::kBucket, n};
    EXPECT_EQ(t.Apply(DataType::Int32(), int32_t{34}), Value(ExpectedBucket(2017239379, n)));
    EXPECT_EQ(t.Apply(DataType::Int64(), int64_t{34}), Value(ExpectedBucket(2017239379, n)));
    EXPECT_EQ(t.Apply(DataType::Decimal(4, 2), Int128(1420)), Value(ExpectedBucket(-500754589, n)));
    EXPECT_EQ(t.Apply(DataType::Date(), kDay20171116), Value(ExpectedBucket(-653330422, n)));
    EXPECT_EQ(t.Apply(DataType::Timestamp(), kTs20171116T223108),
              Value(ExpectedBucket(-2047944441, n)));
    EXPECT_EQ(t.Apply(DataType::TimestampTz(), kTs20171116T223108 + 1),
              Value(ExpectedBucket(-1207196810, n)));
    EXPECT_EQ(t.Apply(DataType::String(), std::string("iceberg")),
              Value(ExpectedBucket(1210000089, n)));
    EXPECT_EQ(t.Apply(DataType::Binary(), Bytes({0, 1, 2, 3})),
              Value(ExpectedBucket(-188683207, n)));
  }
  EXPECT_EQ(b.Apply(DataType::Int32(), Value()), Value());
  EXPECT_FALSE(b.CanTransform(DataType::Boolean()));
  EXPECT_FALSE(b.CanTransform(DataType::Double()));
  EXPECT_EQ(b.ResultType(DataType::String()), DataType::Int32());
}

TEST(TruncateTransform, FollowsSpecExamples) {
  Transform t10{TransformKind::kTruncate, 10};
  EXPECT_EQ(t10.Apply(DataType::Int32(), int32_t{1}), Value(int32_t{0}));
  EXPECT_EQ(t10.Apply(DataType::Int32(), int32_t{-1}), Value(int32_t{-10}));
  EXPECT_EQ(t10.Apply(DataType::Int64(), int64_t{-1}), Value(int64_t{-10}));
  EXPECT_EQ(t10.Apply(DataType::Int64(), int64_t{25}), Value(int64_t{20}));
  Transform t50{TransformKind::kTruncate, 50};
  EXPECT_EQ(t50.Apply(DataType::Decimal(9, 2), Int128(1065)), Value(Int128(1050)));  // 10.65
  EXPECT_EQ(t50.Apply(DataType::Decimal(9, 2), Int128(-1)), Value(Int128(-50)));
  Transform t3{TransformKind::kTruncate, 3};
  EXPECT_EQ(t3.Apply(DataType::String(), std::string("iceberg")), Value(std::string("ice")));
  // Code points, not bytes: "é" is 2 bytes.
  EXPECT_EQ(t3.Apply(DataType::String(), std::string("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9")),
            Value(std::string("\xc3\xa9\xc3\xa9\xc3\xa9")));
  EXPECT_EQ(t3.Apply(DataType::String(), std::string("ab")), Value(std::string("ab")));
  EXPECT_EQ(t3.Apply(DataType::Binary(), Bytes({1, 2, 3, 4, 5})), Value(Bytes({1, 2, 3})));
  EXPECT_FALSE(t3.CanTransform(DataType::Date()));
  EXPECT_EQ(t3.ResultType(DataType::String()), DataType::String());
}

TEST(TimeTransforms, CountFromEpochWithFloorForNegativeValues) {
  Transform year{TransformKind::kYear}, month{TransformKind::kMonth}, day{TransformKind::kDay},
      hour{TransformKind::kHour};
  // 2024-01-02T03:04:05
  int64_t ts = (19724 * kMicrosPerDay) + 3 * kMicrosPerHour + 4 * 60000000LL + 5000000;
  EXPECT_EQ(year.Apply(DataType::Timestamp(), ts), Value(int32_t{54}));
  EXPECT_EQ(month.Apply(DataType::Timestamp(), ts), Value(int32_t{648}));
  EXPECT_EQ(day.Apply(DataType::Timestamp(), ts), Value(int32_t{19724}));
  EXPECT_EQ(hour.Apply(DataType::TimestampTz(), ts), Value(int32_t{19724 * 24 + 3}));
  // One microsecond before the epoch belongs to 1969-12-31T23.
  EXPECT_EQ(year.Apply(DataType::Timestamp(), int64_t{-1}), Value(int32_t{-1}));
  EXPECT_EQ(month.Apply(DataType::Timestamp(), int64_t{-1}), Value(int32_t{-1}));
  EXPECT_EQ(day.Apply(DataType::Timestamp(), int64_t{-1}), Value(int32_t{-1}));
  EXPECT_EQ(hour.Apply(DataType::Timestamp(), int64_t{-1}), Value(int32_t{-1}));
  // Exactly at a negative boundary: 1969-01-01T00:00 is year -1, month -12.
  int64_t y1969 = -365 * kMicrosPerDay;
  EXPECT_EQ(year.Apply(DataType::Timestamp(), y1969), Value(int32_t{-1}));
  EXPECT_EQ(month.Apply(DataType::Timestamp(), y1969), Value(int32_t{-12}));
  EXPECT_EQ(year.Apply(DataType::Timestamp(), y1969 - 1), Value(int32_t{-2}));
  EXPECT_EQ(month.Apply(DataType::Timestamp(), y1969 - 1), Value(int32_t{-13}));
  EXPECT_EQ(hour.Apply(DataType::Timestamp(), -kMicrosPerHour), Value(int32_t{-1}));
  EXPECT_EQ(hour.Apply(DataType::Timestamp(), -kMicrosPerHour - 1), Value(int32_t{-2}));
  // Dates.
  EXPECT_EQ(year.Apply(DataType::Date(), int32_t{-1}), Value(int32_t{-1}));
  EXPECT_EQ(month.Apply(DataType::Date(), int32_t{-1}), Value(int32_t{-1}));
  EXPECT_EQ(month.Apply(DataType::Date(), int32_t{31}), Value(int32_t{1}));  // 1970-02-01
  EXPECT_EQ(day.Apply(DataType::Date(), int32_t{-400}), Value(int32_t{-400}));
  EXPECT_EQ(month.Apply(DataType::Date(), kDay20171116), Value(int32_t{47 * 12 + 10}));
  // Leap day 2000-02-29 = 11016: month 2000-02.
  EXPECT_EQ(month.Apply(DataType::Date(), int32_t{11016}), Value(int32_t{30 * 12 + 1}));
  EXPECT_FALSE(hour.CanTransform(DataType::Date()));
  EXPECT_EQ(day.Apply(DataType::Date(), Value()), Value());
  EXPECT_EQ(day.ResultType(DataType::Timestamp()), DataType::Date());
  EXPECT_EQ(hour.ResultType(DataType::Timestamp()), DataType::Int32());
}

TEST(Transform, ParsesAndPrintsSpecNames) {
  for (const char* s :
       {"identity", "bucket[16]", "truncate[4]", "year", "month", "day", "hour", "void"}) {
    Result<Transform> t = Transform::Parse(s);
    ASSERT_TRUE(t.ok()) << s;
    EXPECT_EQ(t->ToString(), s);
  }
  EXPECT_EQ(Transform::Parse("bucket[16]")->param, 16);
  EXPECT_FALSE(Transform::Parse("bucket[0]").ok());
  EXPECT_FALSE(Transform::Parse("bucket[]").ok());
  EXPECT_FALSE(Transform::Parse("bucket[x]").ok());
  EXPECT_FALSE(Transform::Parse("zorder").ok());
  EXPECT_EQ(Transform{TransformKind::kVoid}.Apply(DataType::Int32(), int32_t{1}), Value());
}

Schema TestSchema() {
  Schema s;
  s.fields = {{"seq", DataType::Int64(), false, 1},     {"npi", DataType::String(), false, 2},
              {"city", DataType::String(), true, 3},    {"state", DataType::String(), true, 4},
              {"ts", DataType::TimestampTz(), true, 5}, {"d", DataType::Date(), true, 6},
              {"ok", DataType::Boolean(), true, 7}};
  return s;
}

TEST(ParsePartitionClause, BuildsFieldsWithIcebergDefaultNames) {
  Result<PartitionSpec> spec = ParsePartitionClause(
      "day(ts), bucket(16, npi), truncate(4, city), state, year(d), month(ts), hour(ts)",
      TestSchema());
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  ASSERT_EQ(spec->fields.size(), 7u);
  EXPECT_EQ(spec->fields[0], (PartitionField{5, 1000, "ts_day", {TransformKind::kDay, 0}}));
  EXPECT_EQ(spec->fields[1], (PartitionField{2, 1001, "npi_bucket", {TransformKind::kBucket, 16}}));
  EXPECT_EQ(spec->fields[2],
            (PartitionField{3, 1002, "city_trunc", {TransformKind::kTruncate, 4}}));
  EXPECT_EQ(spec->fields[3], (PartitionField{4, 1003, "state", {TransformKind::kIdentity, 0}}));
  EXPECT_EQ(spec->fields[4], (PartitionField{6, 1004, "d_year", {TransformKind::kYear, 0}}));
  EXPECT_EQ(spec->fields[5].name, "ts_month");
  EXPECT_EQ(spec->fields[6].name, "ts_hour");
  Result<std::vector<DataType>> types = spec->PartitionTypes(TestSchema());
  ASSERT_TRUE(types.ok());
  EXPECT_EQ((*types)[0], DataType::Date());
  EXPECT_EQ((*types)[1], DataType::Int32());
  EXPECT_EQ((*types)[2], DataType::String());

  EXPECT_TRUE(ParsePartitionClause("", TestSchema())->unpartitioned());
  EXPECT_EQ(ParsePartitionClause("truncate(city, 4)", TestSchema())->fields[0].transform.param, 4);
}

TEST(ParsePartitionClause, ErrorsSayWhatIsWrong) {
  auto msg = [](std::string_view clause) {
    Result<PartitionSpec> r = ParsePartitionClause(clause, TestSchema());
    EXPECT_FALSE(r.ok()) << clause;
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_NE(msg("hour(d)").find("timestamp, timestamptz"), std::string::npos);
  EXPECT_NE(msg("bucket(4, ok)").find("'ok' of type boolean"), std::string::npos);
  EXPECT_NE(msg("day(nope)").find("no column named 'nope'"), std::string::npos);
  EXPECT_NE(msg("zorder(ts)").find("unknown transform"), std::string::npos);
  EXPECT_NE(msg("bucket(npi)").find("(N, column)"), std::string::npos);
  EXPECT_NE(msg("bucket(0, npi)").find("positive"), std::string::npos);
  EXPECT_NE(msg("day(ts), day(ts)").find("repeated"), std::string::npos);
  msg("day(ts");
  msg("day(ts),");
}

TEST(PartitionSpec, PartitionOfRowAndHivePath) {
  Schema schema = TestSchema();
  Result<PartitionSpec> spec =
      ParsePartitionClause("day(ts), bucket(16, npi), state, hour(ts)", schema);
  ASSERT_TRUE(spec.ok());
  RecordBatch batch(schema.ToBatchSchema());
  int64_t ts = 19724 * kMicrosPerDay + 3 * kMicrosPerHour;  // 2024-01-02T03:00
  const char* states[] = {"a/b=c%d e", nullptr};
  for (int r = 0; r < 2; ++r) {
    batch.mutable_column(0).Append<int64_t>(r);
    batch.mutable_column(1).AppendBytes("iceberg");
    batch.mutable_column(2).AppendNull();
    if (states[r]) {
      batch.mutable_column(3).AppendBytes(states[r]);
    } else {
      batch.mutable_column(3).AppendNull();
    }
    if (r == 0) {
      batch.mutable_column(4).Append<int64_t>(ts);
    } else {
      batch.mutable_column(4).AppendNull();
    }
    batch.mutable_column(5).AppendNull();
    batch.mutable_column(6).Append<uint8_t>(1);
  }
  ASSERT_TRUE(batch.Validate().ok());
  Result<PartitionTuple> p0 = spec->PartitionOf(batch, 0);
  ASSERT_TRUE(p0.ok()) << p0.status().ToString();
  EXPECT_EQ(*p0, (PartitionTuple{int32_t{19724}, ExpectedBucket(1210000089, 16),
                                 std::string("a/b=c%d e"), int32_t{19724 * 24 + 3}}));
  EXPECT_EQ(spec->PartitionPath(schema, *p0),
            "ts_day=2024-01-02/npi_bucket=" + std::to_string(ExpectedBucket(1210000089, 16)) +
                "/state=a%2Fb%3Dc%25d+e/ts_hour=2024-01-02-03");
  Result<PartitionTuple> p1 = spec->PartitionOf(batch, 1);
  ASSERT_TRUE(p1.ok());
  EXPECT_EQ((*p1)[0], Value());
  EXPECT_EQ(spec->PartitionPath(schema, *p1),
            "ts_day=null/npi_bucket=" + std::to_string(ExpectedBucket(1210000089, 16)) +
                "/state=null/ts_hour=null");
  EXPECT_FALSE(spec->PartitionOf(batch, 2).ok());

  Result<PartitionSpec> ym = ParsePartitionClause("year(ts), month(ts)", schema);
  ASSERT_TRUE(ym.ok());
  EXPECT_EQ(ym->PartitionPath(schema, {int32_t{54}, int32_t{648}}),
            "ts_year=2024/ts_month=2024-01");
  EXPECT_EQ(ym->PartitionPath(schema, {int32_t{-1}, int32_t{-1}}), "ts_year=1969/ts_month=1969-12");
  EXPECT_EQ(PartitionSpec{}.PartitionPath(schema, {}), "");
}

TEST(PartitionSpec, PartitionOfNeedsTheSourceColumn) {
  Schema schema = TestSchema();
  PartitionSpec spec = *ParsePartitionClause("day(ts)", schema);
  auto bs = std::make_shared<BatchSchema>();
  bs->fields = {{"x", DataType::Int64(), true, 1}};
  RecordBatch batch(bs);
  batch.mutable_column(0).Append<int64_t>(1);
  Result<PartitionTuple> r = spec.PartitionOf(batch, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("field id 5"), std::string::npos);
}

TEST(PartitionSpecJson, RoundTrips) {
  PartitionSpec spec =
      *ParsePartitionClause("day(ts), bucket(16, npi), truncate(4, city)", TestSchema());
  spec.spec_id = 2;
  std::string json = PartitionSpecToJson(spec);
  EXPECT_NE(json.find("\"transform\":\"bucket[16]\""), std::string::npos);
  EXPECT_NE(json.find("\"field-id\":1000"), std::string::npos);
  Result<PartitionSpec> back = PartitionSpecFromJson(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, spec);
  Result<PartitionSpec> bad = PartitionSpecFromJson(
      R"({"spec-id":0,"fields":[{"source-id":1,"field-id":1000,"name":"x","transform":"zorder"}]})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("fields[0].transform"), std::string::npos);
  EXPECT_FALSE(PartitionSpecFromJson(R"({"spec-id":0})").ok());
  EXPECT_FALSE(PartitionSpecFromJson(R"({"spec-id":0,"fields":[)").ok());
}

}  // namespace
}  // namespace floe::iceberg

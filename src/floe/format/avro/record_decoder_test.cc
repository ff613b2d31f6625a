#include "floe/format/avro/record_decoder.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "floe/format/avro/encoding.h"
#include "floe/format/avro/value.h"

namespace floe::avro {
namespace {

std::shared_ptr<const Schema> Parse(const std::string& json) {
  auto s = ParseSchema(json);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return *s;
}

std::shared_ptr<const BatchSchema> Columns(std::vector<Field> fields) {
  return std::make_shared<const BatchSchema>(BatchSchema{std::move(fields)});
}

std::string Encode(const Schema& schema, const Value& v) {
  std::string out;
  Status st = EncodeValue(schema.root(), v, &out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

// The writer has a field the table lacks (skipped, nested record included), lists its fields in
// another order, widens int to BIGINT and float to DOUBLE, and lacks a nullable column.
TEST(AvroRecordDecoder, ResolvesFieldsByNameSkipsTheRestAndWidens) {
  auto writer = Parse(R"({"type":"record","name":"User","namespace":"com.example","fields":[
    {"name":"extra","type":{"type":"record","name":"Inner","fields":[
      {"name":"tags","type":{"type":"array","items":"string"}},
      {"name":"m","type":{"type":"map","values":"long"}}]}},
    {"name":"score","type":"float"},
    {"name":"id","type":"int"},
    {"name":"name","type":["null","string"]},
    {"name":"kind","type":{"type":"enum","name":"Kind","symbols":["A","B"]}}]})");
  auto columns = Columns({{"id", DataType::Int64(), false},
                          {"name", DataType::String(), true},
                          {"score", DataType::Double(), true},
                          {"kind", DataType::String(), true},
                          {"missing", DataType::Int32(), true}});
  auto decoder = RecordDecoder::Make(writer, columns);
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  RecordBatch batch(columns);
  for (int i = 0; i < 2; ++i) {
    Value inner = Value::Record({Value::Array({Value::String("x"), Value::String("y")}),
                                 Value::Map({{"k", Value::Long(7)}})});
    Value v =
        Value::Record({inner, Value::Float(1.5f * static_cast<float>(i + 1)), Value::Int(40 + i),
                       i == 0 ? Value::String("ann") : Value::Null(), Value::Enum(i)});
    ASSERT_TRUE((*decoder)->Decode(Encode(*writer, v), &batch).ok());
  }
  ASSERT_EQ(batch.num_rows(), 2u);
  ASSERT_TRUE(batch.Validate().ok());
  EXPECT_EQ(batch.column(0).values<int64_t>()[0], 40);
  EXPECT_EQ(batch.column(0).values<int64_t>()[1], 41);
  EXPECT_EQ(batch.column(1).GetBytes(0), "ann");
  EXPECT_TRUE(batch.column(1).IsNull(1));
  EXPECT_EQ(batch.column(2).values<double>()[1], 3.0);
  EXPECT_EQ(batch.column(3).GetBytes(1), "B");
  EXPECT_TRUE(batch.column(4).IsNull(0));
  EXPECT_TRUE(batch.column(4).IsNull(1));
}

TEST(AvroRecordDecoder, ReadsLogicalTypes) {
  auto writer = Parse(R"({"type":"record","name":"r","fields":[
    {"name":"d","type":{"type":"int","logicalType":"date"}},
    {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
    {"name":"lts","type":{"type":"long","logicalType":"local-timestamp-micros"}},
    {"name":"t","type":{"type":"int","logicalType":"time-millis"}},
    {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
    {"name":"big","type":{"type":"fixed","name":"f16","size":16,"logicalType":"decimal",
                          "precision":38,"scale":0}}]})");
  auto columns = Columns({{"d", DataType::Date(), false},
                          {"ts", DataType::TimestampTz(), false},
                          {"lts", DataType::Timestamp(), false},
                          {"t", DataType::Time(), false},
                          {"amount", DataType::Decimal(12, 2), false},
                          {"big", DataType::Decimal(38, 0), false}});
  auto decoder = RecordDecoder::Make(writer, columns);
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  std::string fixed(16, '\xff');  // -1
  Value v = Value::Record({Value::Int(19000), Value::Long(1700000000123), Value::Long(5),
                           Value::Int(3723004), Value::Bytes(std::string("\xfe\x0c", 2)),
                           Value::Fixed(fixed)});
  RecordBatch batch(columns);
  ASSERT_TRUE((*decoder)->Decode(Encode(*writer, v), &batch).ok());
  EXPECT_EQ(batch.column(0).values<int32_t>()[0], 19000);
  EXPECT_EQ(batch.column(1).values<int64_t>()[0], int64_t{1700000000123} * 1000);
  EXPECT_EQ(batch.column(2).values<int64_t>()[0], 5);
  EXPECT_EQ(batch.column(3).values<int64_t>()[0], int64_t{3723004} * 1000);
  EXPECT_TRUE(batch.column(4).values<Int128>()[0] == -500);  // 0xfe0c = -500: -5.00
  EXPECT_TRUE(batch.column(5).values<Int128>()[0] == -1);
}

// What cannot feed a column is refused when the decoder is made, naming the field.
TEST(AvroRecordDecoder, RefusesWhatTheColumnsCannotHold) {
  auto writer = Parse(R"({"type":"record","name":"r","fields":[
    {"name":"id","type":"long"},{"name":"v","type":"double"}]})");
  auto narrowing = RecordDecoder::Make(writer, Columns({{"id", DataType::Int32(), false}}));
  ASSERT_FALSE(narrowing.ok());
  EXPECT_NE(narrowing.status().message().find("'id'"), std::string::npos)
      << narrowing.status().ToString();
  auto missing = RecordDecoder::Make(
      writer, Columns({{"id", DataType::Int64(), false}, {"name", DataType::String(), false}}));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("'name' is NOT NULL"), std::string::npos)
      << missing.status().ToString();
  auto decimal = Parse(R"({"type":"record","name":"r","fields":[
    {"name":"a","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":3}}]})");
  EXPECT_FALSE(RecordDecoder::Make(decimal, Columns({{"a", DataType::Decimal(10, 2), true}})).ok());
  EXPECT_FALSE(RecordDecoder::Make(decimal, Columns({{"a", DataType::Decimal(9, 3), true}})).ok());
  EXPECT_FALSE(
      RecordDecoder::Make(Parse(R"("long")"), Columns({{"a", DataType::Int64(), true}})).ok());
}

// Bad datums are errors naming the field, and leave the batch as it was.
TEST(AvroRecordDecoder, BadDatumsLeaveTheBatchAsItWas) {
  auto writer = Parse(R"({"type":"record","name":"r","fields":[
    {"name":"id","type":"long"},{"name":"name","type":["null","string"]},
    {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":4,"scale":0}}]})");
  auto columns = Columns({{"id", DataType::Int64(), false},
                          {"name", DataType::String(), false},
                          {"amount", DataType::Decimal(4, 0), true}});
  auto decoder = RecordDecoder::Make(writer, columns);
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  RecordBatch batch(columns);
  std::string good = Encode(*writer, Value::Record({Value::Long(1), Value::String("a"),
                                                    Value::Bytes(std::string("\x01", 1))}));
  ASSERT_TRUE((*decoder)->Decode(good, &batch).ok());
  auto fails = [&](const std::string& datum, const std::string& says) {
    Status st = (*decoder)->Decode(datum, &batch);
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find(says), std::string::npos) << st.ToString();
    EXPECT_EQ(batch.num_rows(), 1u);
    for (size_t c = 0; c < batch.num_columns(); ++c) EXPECT_EQ(batch.column(c).size(), 1u);
  };
  fails(Encode(*writer, Value::Record({Value::Long(2), Value::Null(), Value::Bytes("")})),
        "'name' is null");
  fails(Encode(*writer, Value::Record({Value::Long(2), Value::String("b"),
                                       Value::Bytes(std::string("\x27\x10", 2))})),
        "does not fit DECIMAL(4, 0)");  // 10000
  fails(Encode(*writer, Value::Record({Value::Long(2), Value::String("\xff"), Value::Bytes("")})),
        "not UTF-8");
  fails(good.substr(0, good.size() - 1), "'amount'");
  fails(good + "x", "bytes follow");
  fails(std::string("\x02\x04", 2), "union branch 2");
  // Every truncation of a good datum fails cleanly.
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_FALSE((*decoder)->Decode(good.substr(0, n), &batch).ok());
  EXPECT_EQ(batch.num_rows(), 1u);
}

// Hostile bytes: mutations of a good datum and random strings are errors or rows, never a crash,
// and an error leaves the batch as it was.
TEST(AvroRecordDecoder, MutatedAndRandomDatumsNeverCrash) {
  auto writer = Parse(R"({"type":"record","name":"r","fields":[
    {"name":"id","type":"long"},
    {"name":"tags","type":{"type":"array","items":["null","string"]}},
    {"name":"m","type":{"type":"map","values":{"type":"record","name":"n","fields":[
      {"name":"x","type":"double"}]}}},
    {"name":"name","type":["null","string"]},
    {"name":"kind","type":{"type":"enum","name":"k","symbols":["A","B"]}},
    {"name":"amount","type":{"type":"fixed","name":"f","size":4,"logicalType":"decimal",
                             "precision":9,"scale":2}}]})");
  auto columns = Columns({{"id", DataType::Int64(), false},
                          {"name", DataType::String(), true},
                          {"kind", DataType::String(), true},
                          {"amount", DataType::Decimal(9, 2), true}});
  auto decoder = RecordDecoder::Make(writer, columns);
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  std::string good = Encode(
      *writer,
      Value::Record({Value::Long(7), Value::Array({Value::Null(), Value::String("t")}),
                     Value::Map({{"a", Value::Record({Value::Double(1.5)})}}), Value::String("ann"),
                     Value::Enum(1), Value::Fixed(std::string("\x00\x00\x01\x00", 4))}));
  RecordBatch batch(columns);
  ASSERT_TRUE((*decoder)->Decode(good, &batch).ok());
  std::mt19937_64 rng(26);
  size_t ok = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string datum = good;
    if (trial % 4 == 3) {
      datum.assign(rng() % 64, '\0');
      for (char& c : datum) c = static_cast<char>(rng());
    } else {
      for (int k = 0; k <= trial % 3; ++k) datum[rng() % datum.size()] = static_cast<char>(rng());
    }
    const size_t rows = batch.num_rows();
    Status st = (*decoder)->Decode(datum, &batch);
    if (st.ok()) {
      ++ok;
      ASSERT_EQ(batch.num_rows(), rows + 1);
    } else {
      ASSERT_EQ(batch.num_rows(), rows) << st.ToString();
    }
    for (size_t c = 0; c < batch.num_columns(); ++c)
      ASSERT_EQ(batch.column(c).size(), batch.num_rows());
  }
  EXPECT_TRUE(batch.Validate().ok());
  EXPECT_GT(ok, 0u);
}

// Capturing: the writer's fields no column names are packed into the last column with the
// types they become (a union with null as its value's type, nullable; a date as DATE; an enum as
// its symbol); a nested record is skipped as before; a writer with nothing to capture gives null.
TEST(AvroRecordDecoder, CapturesTheWritersUndeclaredFields) {
  auto writer = Parse(R"({"type":"record","name":"User","fields":[
    {"name":"extra","type":{"type":"record","name":"Inner","fields":[{"name":"a","type":"int"}]}},
    {"name":"id","type":"long"},
    {"name":"email","type":["null","string"]},
    {"name":"visits","type":"int"},
    {"name":"day","type":{"type":"int","logicalType":"date"}},
    {"name":"kind","type":{"type":"enum","name":"Kind","symbols":["A","B"]}}]})");
  auto columns =
      Columns({{"id", DataType::Int64(), false}, {"$undeclared", DataType::String(), true}});
  auto decoder = RecordDecoder::MakeCapturing(writer, columns);
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  RecordBatch batch(columns);
  for (int i = 0; i < 2; ++i) {
    Value v = Value::Record({Value::Record({Value::Int(1)}), Value::Long(7 + i),
                             i == 0 ? Value::String("a@b") : Value::Null(), Value::Int(3),
                             Value::Int(19724), Value::Enum(1)});
    Status st = (*decoder)->Decode(Encode(*writer, v), &batch);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  // A cut datum leaves nothing behind, the captured values included.
  Value v = Value::Record({Value::Record({Value::Int(1)}), Value::Long(9), Value::String("x"),
                           Value::Int(3), Value::Int(1), Value::Enum(0)});
  const std::string datum = Encode(*writer, v);
  EXPECT_FALSE((*decoder)->Decode(datum.substr(0, datum.size() - 1), &batch).ok());
  ASSERT_EQ(batch.num_rows(), 2u);
  ASSERT_TRUE(batch.Validate().ok());
  std::vector<std::string> first;
  UndeclaredFieldsReader reader(batch.column(1).GetBytes(0));
  UndeclaredField f;
  while (*reader.Next(&f)) {
    first.push_back(std::string(f.name) + ":" + SqlTypeName(f.type) + (f.is_null ? "=null" : ""));
  }
  EXPECT_EQ(first,
            (std::vector<std::string>{"email:STRING", "visits:INT", "day:DATE", "kind:STRING"}));
  UndeclaredFieldsReader second(batch.column(1).GetBytes(1));
  ASSERT_TRUE(*second.Next(&f));
  EXPECT_EQ(f.name, "email");
  EXPECT_TRUE(f.is_null);
  ASSERT_TRUE(*second.Next(&f));
  Column visits(DataType::Int64());
  AppendUndeclared(f, &visits);  // INT widens into BIGINT
  EXPECT_EQ(visits.Get<int64_t>(0), 3);

  // 5,000 mutations of a datum: an error or a row, whose packed fields read back.
  std::mt19937_64 rng(50);
  for (int trial = 0; trial < 5000; ++trial) {
    std::string mutated = datum;
    for (int k = 0; k <= trial % 3; ++k) {
      mutated[rng() % mutated.size()] = static_cast<char>(rng());
    }
    (void)(*decoder)->Decode(mutated, &batch);
  }
  ASSERT_TRUE(batch.Validate().ok());
  for (size_t r = 0; r < batch.num_rows(); ++r) {
    if (batch.column(1).IsNull(r)) continue;
    UndeclaredFieldsReader back(batch.column(1).GetBytes(r));
    for (;;) {
      Result<bool> more = back.Next(&f);
      ASSERT_TRUE(more.ok()) << more.status().ToString();
      if (!*more) break;
    }
  }

  auto plain = Parse(R"({"type":"record","name":"P","fields":[{"name":"id","type":"long"}]})");
  auto none = RecordDecoder::MakeCapturing(plain, columns);
  ASSERT_TRUE(none.ok());
  RecordBatch only(columns);
  ASSERT_TRUE((*none)->Decode(Encode(*plain, Value::Record({Value::Long(1)})), &only).ok());
  EXPECT_TRUE(only.column(1).IsNull(0));
}

}  // namespace
}  // namespace floe::avro

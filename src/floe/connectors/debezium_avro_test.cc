#include "floe/connectors/debezium_avro.h"

#include <gtest/gtest.h>

#include "floe/connectors/connectors_test_util.h"
#include "floe/format/avro/encoding.h"
#include "floe/format/avro/value.h"

namespace floe::connectors {
namespace {

using avro::Value;

// Debezium's Avro converter: Envelope {before, after: [null, Value], source, op, ts_ms}.
constexpr const char* kEnvelope = R"({"type":"record","name":"Envelope","namespace":"shop.orders",
  "fields":[
    {"name":"before","type":["null",{"type":"record","name":"Value","fields":[
      {"name":"id","type":"long"},{"name":"note","type":["null","string"],"default":null},
      {"name":"qty","type":"int"}]}],"default":null},
    {"name":"after","type":["null","Value"],"default":null},
    {"name":"source","type":{"type":"record","name":"Source","fields":[
      {"name":"db","type":"string"},{"name":"lsn","type":["null","long"]}]}},
    {"name":"op","type":"string"},
    {"name":"ts_ms","type":["null","long"],"default":null}]})";

std::shared_ptr<const BatchSchema> Columns() {
  auto s = std::make_shared<BatchSchema>();
  s->fields = {Field{"id", DataType::Int64(), false, 1}, Field{"qty", DataType::Int64(), true, 2},
               Field{"note", DataType::String(), true, 3}};
  return s;
}

Value Row(int64_t id, int32_t qty) {
  return Value::Record({Value::Long(id), Value::String("n" + std::to_string(id)), Value::Int(qty)});
}

std::string Event(const avro::Schema& schema, Value before, Value after, const std::string& op) {
  Value event = Value::Record({std::move(before), std::move(after),
                               Value::Record({Value::String("shop"), Value::Long(42)}),
                               Value::String(op), Value::Long(1700000000000)});
  std::string out;
  EXPECT_TRUE(avro::EncodeValue(schema.root(), event, &out).ok());
  return out;
}

TEST(DebeziumAvroDecoder, EveryOpBecomesItsChangelogRows) {
  auto schema = avro::ParseSchema(kEnvelope).ValueOrDie();
  auto decoder = DebeziumAvroDecoder::Make(schema, Columns()).ValueOrDie();
  RecordBatch rows(Columns());
  Column kinds(DataType::String());
  ASSERT_TRUE(decoder->Decode(Event(*schema, Value(), Row(1, 5), "c"), &rows, &kinds).ok());
  ASSERT_TRUE(decoder->Decode(Event(*schema, Value(), Row(2, 6), "r"), &rows, &kinds).ok());
  ASSERT_TRUE(decoder->Decode(Event(*schema, Row(1, 5), Row(1, 7), "u"), &rows, &kinds).ok());
  ASSERT_TRUE(decoder->Decode(Event(*schema, Row(2, 6), Value(), "d"), &rows, &kinds).ok());
  const char* want[] = {R"({"id":1,"qty":5,"note":"n1"})", R"({"id":2,"qty":6,"note":"n2"})",
                        R"({"id":1,"qty":5,"note":"n1"})", R"({"id":1,"qty":7,"note":"n1"})",
                        R"({"id":2,"qty":6,"note":"n2"})"};
  std::vector<std::string> got = testing::JsonRows({rows});
  ASSERT_EQ(got.size(), 5u);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], std::string(want[i]) + "\n");
  std::vector<std::string> k;
  for (size_t i = 0; i < kinds.size(); ++i) k.emplace_back(kinds.GetBytes(i));
  EXPECT_EQ(k, (std::vector<std::string>{"+I", "+I", "-U", "+U", "-D"}));
}

TEST(DebeziumAvroDecoder, BadEventsAppendNothingAndNameTheRule) {
  auto schema = avro::ParseSchema(kEnvelope).ValueOrDie();
  auto decoder = DebeziumAvroDecoder::Make(schema, Columns()).ValueOrDie();
  RecordBatch rows(Columns());
  Column kinds(DataType::String());
  auto refused = [&](const std::string& datum, const std::string& needle) {
    Status st = decoder->Decode(datum, &rows, &kinds);
    ASSERT_FALSE(st.ok()) << needle;
    EXPECT_NE(st.message().find(needle), std::string::npos) << st.ToString();
    EXPECT_EQ(rows.num_rows(), 0u);
    EXPECT_EQ(kinds.size(), 0u);
  };
  refused(Event(*schema, Value(), Row(1, 5), "u"), "op 'u' with a null 'before'");
  refused(Event(*schema, Value(), Value(), "d"), "op 'd' with a null 'before'");
  refused(Event(*schema, Value(), Value(), "c"), "op 'c' with a null 'after'");
  refused(Event(*schema, Value(), Row(1, 5), "t"), "unknown op 't'");
  std::string cut = Event(*schema, Row(1, 5), Row(1, 6), "u");
  for (size_t n = 0; n < cut.size(); ++n) {
    Status st = decoder->Decode(cut.substr(0, n), &rows, &kinds);
    EXPECT_FALSE(st.ok()) << n;
    EXPECT_EQ(rows.num_rows(), 0u) << n;
  }
  refused(cut + "x", "1 bytes follow the envelope");
}

TEST(DebeziumAvroDecoder, AWriterSchemaThatIsNoEnvelopeOrDoesNotFitIsRefused) {
  auto refused = [](const std::string& json, const std::string& needle) {
    auto schema = avro::ParseSchema(json).ValueOrDie();
    auto made = DebeziumAvroDecoder::Make(schema, Columns());
    ASSERT_FALSE(made.ok()) << needle;
    EXPECT_NE(made.status().message().find(needle), std::string::npos) << made.status().ToString();
  };
  refused(R"({"type":"record","name":"R","fields":[{"name":"id","type":"long"}]})",
          "has no field 'before'");
  refused(R"({"type":"record","name":"E","fields":[
    {"name":"before","type":"string"},{"name":"after","type":"string"},{"name":"op","type":"string"}]})",
          "envelope field 'before' must be a union of null and a record");
  refused(R"({"type":"record","name":"E","fields":[
    {"name":"before","type":["null",{"type":"record","name":"V","fields":[{"name":"qty","type":"int"}]}]},
    {"name":"after","type":["null","V"]},{"name":"op","type":"string"}]})",
          "column 'id' is NOT NULL");
}

}  // namespace
}  // namespace floe::connectors

#include "floe/format/avro/record_encoder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "floe/format/avro/record_decoder.h"
#include "floe/format/avro/schema.h"

namespace floe::avro {
namespace {

Field Precise(Field f, int precision) {
  f.precision = precision;
  return f;
}

// The schema is Flink's (AvroSchemaConverter): record name and namespace, ["null", T] with
// default null for nullable columns, logical types.
TEST(AvroRecordEncoder, DerivesFlinksSchemaFromTheColumns) {
  BatchSchema columns{{{"id", DataType::Int64(), false},
                       {"name", DataType::String(), true},
                       {"amount", DataType::Decimal(10, 2), true},
                       {"day", DataType::Date(), false},
                       Precise({"ts", DataType::Timestamp(), false}, 3),
                       Precise({"ts6", DataType::Timestamp(), true}, 6)}};
  auto text = AvroSchemaForColumns(columns);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text,
            R"({"type":"record","name":"record","namespace":"org.apache.flink.avro.generated",)"
            R"("fields":[{"name":"id","type":"long"},)"
            R"({"name":"name","type":["null","string"],"default":null},)"
            R"({"name":"amount","type":["null",{"type":"bytes","logicalType":"decimal",)"
            R"("precision":10,"scale":2}],"default":null},)"
            R"({"name":"day","type":{"type":"int","logicalType":"date"}},)"
            R"({"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},)"
            R"({"name":"ts6","type":["null",{"type":"long","logicalType":"timestamp-micros"}],)"
            R"("default":null}]})");
  auto ltz = AvroSchemaForColumns(BatchSchema{{{"t", DataType::TimestampTz(), true}}});
  ASSERT_FALSE(ltz.ok());
  EXPECT_NE(ltz.status().message().find("'t' TIMESTAMP_LTZ"), std::string::npos)
      << ltz.status().ToString();
}

// Rows written and read back through the decoder are the same rows, nulls, decimals at the
// edges of their byte widths and timestamps before 1970 included.
TEST(AvroRecordEncoder, RowsRoundTripThroughTheDecoder) {
  auto columns = std::make_shared<const BatchSchema>(
      BatchSchema{{{"b", DataType::Boolean(), false},
                   {"i", DataType::Int32(), true},
                   {"l", DataType::Int64(), false},
                   {"f", DataType::Float(), false},
                   {"d", DataType::Double(), true},
                   {"s", DataType::String(), true},
                   {"bin", DataType::Binary(), false},
                   {"dec", DataType::Decimal(38, 4), true},
                   {"day", DataType::Date(), false},
                   {"t", DataType::Time(), false},
                   Precise({"ts", DataType::Timestamp(), false}, 3),
                   Precise({"ts6", DataType::Timestamp(), false}, 6)}});
  RecordBatch rows(columns);
  const std::vector<Int128> decimals = {0,
                                        -1,
                                        127,
                                        128,
                                        -128,
                                        -129,
                                        255,
                                        256,
                                        (static_cast<Int128>(1) << 100) - 1,
                                        -(static_cast<Int128>(1) << 100)};
  for (size_t r = 0; r < decimals.size(); ++r) {
    const auto n = static_cast<int64_t>(r);
    rows.mutable_column(0).Append<uint8_t>(r % 2);
    if (r % 3 == 0) {
      rows.mutable_column(1).AppendNull();
    } else {
      rows.mutable_column(1).Append<int32_t>(static_cast<int32_t>(n * -1000));
    }
    rows.mutable_column(2).Append<int64_t>(n << 40);
    rows.mutable_column(3).Append<float>(static_cast<float>(n) / 8);
    if (r % 4 == 1) {
      rows.mutable_column(4).AppendNull();
      rows.mutable_column(5).AppendNull();
    } else {
      rows.mutable_column(4).Append<double>(static_cast<double>(n) * 1e300);
      rows.mutable_column(5).AppendBytes("s\xc3\xa9" + std::to_string(r));
    }
    rows.mutable_column(6).AppendBytes(std::string(r, '\0'));
    rows.mutable_column(7).Append<Int128>(decimals[r]);
    rows.mutable_column(8).Append<int32_t>(static_cast<int32_t>(n * 1000 - 4000));
    rows.mutable_column(9).Append<int64_t>(n * 3'600'000'000 + n * 1000);
    rows.mutable_column(10).Append<int64_t>((n - 5) * 86'400'000'000 + n * 1000);
    rows.mutable_column(11).Append<int64_t>((n - 5) * 86'400'000'000 + n * 7);
  }
  auto text = AvroSchemaForColumns(*columns);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  auto schema = ParseSchema(*text);
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  auto decoder = RecordDecoder::Make(*schema, columns);
  ASSERT_TRUE(decoder.ok()) << decoder.status().ToString();
  RecordBatch back(columns);
  for (size_t r = 0; r < rows.num_rows(); ++r) {
    std::string datum;
    AppendRowAsAvro(rows, r, &datum);
    Status st = (*decoder)->Decode(datum, &back);
    ASSERT_TRUE(st.ok()) << "row " << r << ": " << st.ToString();
  }
  EXPECT_TRUE(back.Equals(rows));
}

}  // namespace
}  // namespace floe::avro

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "floe/common/civil_time.h"
#include "floe/common/undeclared_fields.h"
#include "floe/format/json/json_lines.h"

namespace floe::json {
namespace {

std::shared_ptr<const BatchSchema> Schema(std::vector<Field> fields) {
  auto s = std::make_shared<BatchSchema>();
  s->fields = std::move(fields);
  return s;
}

std::unique_ptr<JsonLinesDecoder> MakeDecoder(const std::shared_ptr<const BatchSchema>& schema,
                                              bool ignore = false) {
  auto d = JsonLinesDecoder::Make(schema, DecodeOptions{ignore});
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return std::move(d).ValueOrDie();
}

// Decodes `text` and returns the batch; fails the test on a decode error.
RecordBatch MustDecode(const std::shared_ptr<const BatchSchema>& schema, std::string_view text) {
  RecordBatch batch(schema);
  auto d = MakeDecoder(schema);
  Status st = d->Decode(text, "t.jsonl", 1, &batch);
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(batch.Validate().ok());
  return batch;
}

// The error message of decoding `text` (must fail).
std::string DecodeError(const std::shared_ptr<const BatchSchema>& schema, std::string_view text) {
  RecordBatch batch(schema);
  auto d = MakeDecoder(schema);
  Status st = d->Decode(text, "t.jsonl", 1, &batch);
  EXPECT_TRUE(st.IsInvalidArgument()) << st.ToString();
  return st.message();
}

int64_t Micros(int64_t y, int mo, int d, int64_t h, int64_t mi, int64_t s, int64_t us) {
  return (DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s) * 1000000 + us;
}

// ---------------------------------------------------------------------------------------------
// Types and formats

TEST(JsonDecode, EveryTypeFromItsJsonForm) {
  auto schema = Schema({{"b", DataType::Boolean()},
                        {"i", DataType::Int32()},
                        {"l", DataType::Int64()},
                        {"f", DataType::Float()},
                        {"d", DataType::Double()},
                        {"s", DataType::String()},
                        {"by", DataType::Binary()},
                        {"dt", DataType::Date()},
                        {"ts", DataType::Timestamp()},
                        {"tz", DataType::TimestampTz()},
                        {"dec", DataType::Decimal(9, 2)}});
  RecordBatch b = MustDecode(
      schema,
      R"({"b":true,"i":-2147483648,"l":9223372036854775807,"f":1.5,"d":-2.25e-3,"s":"héllo",)"
      R"("by":"AAH/","dt":"2024-02-29","ts":"2024-02-29 12:34:56.789","tz":"2024-02-29T12:34:56Z",)"
      R"("dec":"12.30"})"
      "\n"
      R"({"b":false,"i":7,"l":-9223372036854775808,"f":"NaN","d":"-Infinity","s":"",)"
      R"("by":"","dt":"1969-12-31","ts":"1969-12-31T23:59:59.5","tz":"1970-01-01 01:00:00+01:00",)"
      R"("dec":-0.5})"
      "\n"
      R"({})"
      "\n");
  ASSERT_EQ(b.num_rows(), 3u);
  EXPECT_EQ(b.column(0).Get<uint8_t>(0), 1);
  EXPECT_EQ(b.column(0).Get<uint8_t>(1), 0);
  EXPECT_EQ(b.column(1).Get<int32_t>(0), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(b.column(2).Get<int64_t>(0), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(b.column(2).Get<int64_t>(1), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(b.column(3).Get<float>(0), 1.5f);
  EXPECT_TRUE(std::isnan(b.column(3).Get<float>(1)));
  EXPECT_EQ(b.column(4).Get<double>(0), -2.25e-3);
  EXPECT_EQ(b.column(4).Get<double>(1), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(b.column(5).GetBytes(0), "héllo");
  EXPECT_EQ(b.column(5).GetBytes(1), "");
  EXPECT_EQ(b.column(6).GetBytes(0), std::string("\x00\x01\xff", 3));
  EXPECT_EQ(b.column(7).Get<int32_t>(0), DaysFromCivil(2024, 2, 29));
  EXPECT_EQ(b.column(7).Get<int32_t>(1), -1);
  EXPECT_EQ(b.column(8).Get<int64_t>(0), Micros(2024, 2, 29, 12, 34, 56, 789000));
  EXPECT_EQ(b.column(8).Get<int64_t>(1), -500000);
  EXPECT_EQ(b.column(9).Get<int64_t>(0), Micros(2024, 2, 29, 12, 34, 56, 0));
  EXPECT_EQ(b.column(9).Get<int64_t>(1), 0);
  EXPECT_EQ(b.column(10).Get<Int128>(0), 1230);
  EXPECT_EQ(b.column(10).Get<Int128>(1), -50);
  for (size_t c = 0; c < b.num_columns(); ++c) EXPECT_TRUE(b.column(c).IsNull(2)) << c;
}

TEST(JsonDecode, TimestampFormats) {
  auto schema = Schema({{"ts", DataType::Timestamp()}, {"tz", DataType::TimestampTz()}});
  auto one = [&](std::string_view ts, std::string_view tz) {
    RecordBatch b = MustDecode(
        schema, "{\"ts\":\"" + std::string(ts) + "\",\"tz\":\"" + std::string(tz) + "\"}");
    return std::make_pair(b.column(0).Get<int64_t>(0), b.column(1).Get<int64_t>(0));
  };
  int64_t base = Micros(2021, 6, 30, 23, 59, 58, 0);
  EXPECT_EQ(one("2021-06-30 23:59:58", "2021-06-30T23:59:58Z").first, base);
  EXPECT_EQ(one("2021-06-30T23:59:58.1", "2021-06-30T23:59:58Z").first, base + 100000);
  EXPECT_EQ(one("2021-06-30T23:59:58.123456", "2021-06-30T23:59:58Z").first, base + 123456);
  // Digits past microseconds are truncated, not rounded.
  EXPECT_EQ(one("2021-06-30T23:59:58.123456999", "2021-06-30T23:59:58Z").first, base + 123456);
  EXPECT_EQ(one("2021-06-30T23:59:58", "2021-06-30T23:59:58").second, base);
  // What Flink writes with 'json.timestamp-format.standard' = 'SQL' (its default): a space, only
  // the fractional digits needed, 'Z' for TIMESTAMP_LTZ. Accepted whatever the standard is set to.
  EXPECT_EQ(one("2021-06-30 23:59:58.5", "2021-06-30 23:59:58.5Z"),
            std::make_pair(base + 500000, base + 500000));
  EXPECT_EQ(one("2021-06-30 23:59:58", "2021-06-30 23:59:58Z").second, base);
  // Whole minutes without seconds, as Java's LocalDateTime.toString() writes them (Flink's
  // ISO-8601 parser takes them as well).
  EXPECT_EQ(one("2021-06-30T23:59", "2021-06-30T23:59Z"),
            std::make_pair(base - 58000000, base - 58000000));
  EXPECT_EQ(one("2021-06-30T23:59:58", "2021-07-01T01:59:58+02:00").second, base);
  EXPECT_EQ(one("2021-06-30T23:59:58", "2021-06-30T18:29:58.000001-05:30").second, base + 1);
  // Before 1970 and far away.
  EXPECT_EQ(one("1900-01-01 00:00:00", "1969-12-31T23:59:59.999999Z").first,
            Micros(1900, 1, 1, 0, 0, 0, 0));
  EXPECT_EQ(one("1900-01-01 00:00:00", "1969-12-31T23:59:59.999999Z").second, -1);
  EXPECT_EQ(one("-0044-03-15T12:00:00", "+10000-01-01T00:00:00Z").first,
            Micros(-44, 3, 15, 12, 0, 0, 0));
  EXPECT_EQ(one("-0044-03-15T12:00:00", "+10000-01-01T00:00:00Z").second,
            Micros(10000, 1, 1, 0, 0, 0, 0));
}

TEST(JsonDecode, DatesUseTheProlepticGregorianCalendar) {
  auto schema = Schema({{"d", DataType::Date()}});
  auto days = [&](std::string_view s) {
    return MustDecode(schema, "{\"d\":\"" + std::string(s) + "\"}").column(0).Get<int32_t>(0);
  };
  EXPECT_EQ(days("1970-01-01"), 0);
  EXPECT_EQ(days("2000-03-01"), 11017);
  EXPECT_EQ(days("0001-01-01"), -719162);
  EXPECT_EQ(days("1582-10-04"), -141438);  // no Julian switch
  EXPECT_EQ(days("9999-12-31"), 2932896);
  EXPECT_EQ(days("+10000-01-01"), 2932897);
  EXPECT_EQ(days("-0001-12-31"), -719529);                // year 0 is a leap year
  EXPECT_EQ(days("2100-02-28") + 1, days("2100-03-01"));  // 2100 is not a leap year
  EXPECT_EQ(DecodeError(schema, R"({"d":"2100-02-29"})"),
            "t.jsonl:1: field 'd': expected DATE, got string \"2100-02-29\" (day out of range)");
}

TEST(JsonDecode, TimesOfDayAreMicrosecondsSinceMidnight) {
  auto schema = Schema({{"t", DataType::Time()}});
  auto micros = [&](std::string_view s) {
    return MustDecode(schema, "{\"t\":\"" + std::string(s) + "\"}").column(0).Get<int64_t>(0);
  };
  EXPECT_EQ(micros("00:00:00"), 0);
  EXPECT_EQ(micros("10:20:30"), (10 * 3600 + 20 * 60 + 30) * int64_t{1'000'000});
  EXPECT_EQ(micros("23:59:59.999999"), int64_t{86'400'000'000} - 1);
  EXPECT_EQ(micros("12:00"), 12 * 3600 * int64_t{1'000'000});
  EXPECT_EQ(DecodeError(schema, R"({"t":"24:00:00"})"),
            "t.jsonl:1: field 't': expected TIME, got string \"24:00:00\" (time out of range)");
  EXPECT_EQ(DecodeError(schema, R"({"t":36000})"),
            "t.jsonl:1: field 't': expected TIME, got number 36000");
}

TEST(JsonDecode, DecimalsAreExact) {
  auto schema = Schema({{"p", DataType::Decimal(5, 2)}, {"big", DataType::Decimal(38, 10)}});
  auto dec = [&](std::string_view p) {
    return MustDecode(schema, "{\"p\":" + std::string(p) + "}").column(0).Get<Int128>(0);
  };
  EXPECT_EQ(dec("\"12.30\""), 1230);
  EXPECT_EQ(dec("12.3"), 1230);
  EXPECT_EQ(dec("\"-999.99\""), -99999);
  EXPECT_EQ(dec("0"), 0);
  EXPECT_EQ(dec("\"0.000\""), 0);
  EXPECT_EQ(dec("1.2500"), 125);  // trailing zeros beyond the scale are fine
  EXPECT_EQ(dec("1e2"), 10000);
  EXPECT_EQ(dec("\"+5\""), 500);
  EXPECT_EQ(dec("0.07"), 7);  // would be 0.07000000000000000666 through a double
  RecordBatch b = MustDecode(schema, R"({"big":"-9999999999999999999999999999.9999999999"})");
  Int128 v = 0;
  for (int i = 0; i < 38; ++i) v = v * 10 + 9;
  EXPECT_EQ(b.column(1).Get<Int128>(0), -v);
  EXPECT_EQ(DecodeError(schema, R"({"p":"1.234"})"),
            "t.jsonl:1: field 'p': expected DECIMAL(5, 2), got string \"1.234\" (more fractional "
            "digits than the scale allows)");
  EXPECT_EQ(DecodeError(schema, R"({"p":1000})"),
            "t.jsonl:1: field 'p': expected DECIMAL(5, 2), got number 1000 (more digits than the "
            "precision allows)");
  EXPECT_EQ(DecodeError(schema, R"({"p":"abc"})"),
            "t.jsonl:1: field 'p': expected DECIMAL(5, 2), got string \"abc\" (not a number)");
  EXPECT_EQ(DecodeError(schema, R"({"p":true})"),
            "t.jsonl:1: field 'p': expected DECIMAL(5, 2), got boolean true");
}

TEST(JsonDecode, UnicodeEscapesBlankLinesCrlfAndUnknownFields) {
  auto schema = Schema({{"id", DataType::Int64(), false}, {"name", DataType::String()}});
  RecordBatch b =
      MustDecode(schema,
                 "\n"
                 "{\"id\":1,\"name\":\"caf\\u00e9 \\ud83d\\ude00 \\\"q\\\" \\\\ \\n\"}\r\n"
                 "   \r\n"
                 "\t{\"extra\":{\"a\":[1,2,{\"b\":null}]},\"\\u0069d\":2,\"NAME\":\"x\"}  \r\n"
                 "{\"name\":\"first\",\"id\":3,\"name\":\"last\"}");
  ASSERT_EQ(b.num_rows(), 3u);
  EXPECT_EQ(b.column(0).Get<int64_t>(0), 1);
  EXPECT_EQ(b.column(1).GetBytes(0), "café \xF0\x9F\x98\x80 \"q\" \\ \n");
  EXPECT_EQ(b.column(0).Get<int64_t>(1), 2);  // escaped key matches; "NAME" does not match "name"
  EXPECT_TRUE(b.column(1).IsNull(1));
  EXPECT_EQ(b.column(1).GetBytes(2), "last");  // duplicate key: the last one wins
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST(JsonDecode, ErrorMessagesNameSourceLineFieldAndType) {
  auto schema = Schema({{"id", DataType::Int64(), false},
                        {"revision", DataType::Int32()},
                        {"ok", DataType::Boolean()},
                        {"score", DataType::Float()},
                        {"ts", DataType::Timestamp()},
                        {"tz", DataType::TimestampTz()},
                        {"raw", DataType::Binary()},
                        {"name", DataType::String()}});
  const std::string good = "{\"id\":1}\n";
  auto err = [&](std::string_view bad_line) {
    // The bad line is line 3 (after a good line and a blank one).
    return DecodeError(schema, good + "\n" + std::string(bad_line) + "\n" + good);
  };
  EXPECT_EQ(err(R"({"id":1,"revision":"x"})"),
            "t.jsonl:3: field 'revision': expected INT, got string \"x\"");
  EXPECT_EQ(err(R"({"id":1,"revision":"17"})"),
            "t.jsonl:3: field 'revision': expected INT, got string \"17\"");
  EXPECT_EQ(err(R"({"id":1,"revision":3000000000})"),
            "t.jsonl:3: field 'revision': expected INT, got number 3000000000 (out of range)");
  EXPECT_EQ(err(R"({"id":99999999999999999999})"),
            "t.jsonl:3: field 'id': expected BIGINT NOT NULL, got number 99999999999999999999 (out "
            "of range)");
  EXPECT_EQ(err(R"({"id":1.5})"),
            "t.jsonl:3: field 'id': expected BIGINT NOT NULL, got number 1.5");
  EXPECT_EQ(err(R"({"id":1e3})"),
            "t.jsonl:3: field 'id': expected BIGINT NOT NULL, got number 1e3");
  EXPECT_EQ(err(R"({"revision":1})"),
            "t.jsonl:3: field 'id': expected BIGINT NOT NULL, got nothing (field missing)");
  EXPECT_EQ(err(R"({"id":null})"), "t.jsonl:3: field 'id': expected BIGINT NOT NULL, got null");
  EXPECT_EQ(err(R"({"id":1,"ok":1})"), "t.jsonl:3: field 'ok': expected BOOLEAN, got number 1");
  EXPECT_EQ(err(R"({"id":1,"ok":"true"})"),
            "t.jsonl:3: field 'ok': expected BOOLEAN, got string \"true\"");
  EXPECT_EQ(err(R"({"id":1,"score":1e39})"),
            "t.jsonl:3: field 'score': expected FLOAT, got number 1e39 (out of range)");
  EXPECT_EQ(err(R"({"id":1,"score":"nan"})"),
            "t.jsonl:3: field 'score': expected FLOAT, got string \"nan\"");
  EXPECT_EQ(err(R"({"id":1,"score":[1]})"), "t.jsonl:3: field 'score': expected FLOAT, got array");
  EXPECT_EQ(err(R"({"id":1,"ts":"2020-13-01 00:00:00"})"),
            "t.jsonl:3: field 'ts': expected TIMESTAMP, got string \"2020-13-01 00:00:00\" (month "
            "out of range)");
  EXPECT_EQ(err(R"({"id":1,"ts":"2020-01-01"})"),
            "t.jsonl:3: field 'ts': expected TIMESTAMP, got string \"2020-01-01\" (not YYYY-MM-DD "
            "HH:MM:SS)");
  EXPECT_EQ(err(R"({"id":1,"ts":"2020-01-01 00:00:00Z"})"),
            "t.jsonl:3: field 'ts': expected TIMESTAMP, got string \"2020-01-01 00:00:00Z\" "
            "(unexpected text after the time (no zone allowed))");
  EXPECT_EQ(err(R"({"id":1,"tz":"2020-01-01 00:00:00+0100"})"),
            "t.jsonl:3: field 'tz': expected TIMESTAMP_LTZ, got string \"2020-01-01 "
            "00:00:00+0100\" (bad zone offset (expected Z or +HH:MM))");
  EXPECT_EQ(err(R"({"id":1,"ts":1600000000})"),
            "t.jsonl:3: field 'ts': expected TIMESTAMP, got number 1600000000");
  EXPECT_EQ(err(R"({"id":1,"raw":"@@@"})"),
            "t.jsonl:3: field 'raw': expected BYTES, got string \"@@@\" (not base64)");
  EXPECT_EQ(err(R"({"id":1,"name":5})"), "t.jsonl:3: field 'name': expected STRING, got number 5");
  EXPECT_EQ(err(R"({"id":1,"name":{"a":1}})"),
            "t.jsonl:3: field 'name': expected STRING, got object");
  EXPECT_EQ(err(R"([1,2])"), "t.jsonl:3: expected a JSON object, got array");
  EXPECT_EQ(err(R"("just a string")"),
            "t.jsonl:3: expected a JSON object, got string \"just a string\"");
  EXPECT_EQ(err(R"({"id":1} {"id":2})"),
            "t.jsonl:3: unexpected content after the JSON object at column 10: {\"id\":2}");
  EXPECT_EQ(err(R"({"id":01})"),
            "t.jsonl:3: field 'id': expected BIGINT NOT NULL, got number 01 (invalid JSON number)");
  EXPECT_TRUE(err(R"({"id":1,)").starts_with("t.jsonl:3: invalid JSON: ")) << err(R"({"id":1,)");
  EXPECT_TRUE(err(R"({"id":1)").starts_with("t.jsonl:3: invalid JSON: "));
  EXPECT_TRUE(err("{\"id\":1,\"name\":\"\xff\"}").starts_with("t.jsonl:3: invalid JSON: "));
  EXPECT_TRUE(err("{\"id\":1,\n\"name\":\"x\"}").starts_with("t.jsonl:3: invalid JSON: "));
}

TEST(JsonDecode, ContentAfterTheObjectIsNamedWithItsColumn) {
  auto schema = Schema({{"id", DataType::Int64(), false}, {"name", DataType::String()}});
  const std::string good = "{\"id\":1}\n";
  // The bad line as line 2 in the middle of the input, and as the last line without '\n'.
  auto err = [&](std::string_view bad_line) {
    std::string middle = DecodeError(schema, good + std::string(bad_line) + "\n" + good);
    EXPECT_EQ(DecodeError(schema, good + std::string(bad_line)), middle);
    return middle;
  };
  EXPECT_EQ(err(R"({"id":4} xyz)"),
            "t.jsonl:2: unexpected content after the JSON object at column 10: xyz");
  EXPECT_EQ(err(R"({"id":4}xyz)"),
            "t.jsonl:2: unexpected content after the JSON object at column 9: xyz");
  EXPECT_EQ(err(R"({"id":4}})"),
            "t.jsonl:2: unexpected content after the JSON object at column 9: }");
  EXPECT_EQ(err(R"({"id":4},)"),
            "t.jsonl:2: unexpected content after the JSON object at column 9: ,");
  EXPECT_EQ(err(R"(  {"id":4,"name":"}"} // note)"),
            "t.jsonl:2: unexpected content after the JSON object at column 23: // note");
  // Columns count characters, not bytes.
  EXPECT_EQ(err("{\"id\":4,\"name\":\"\xC3\xA9\"} x"),
            "t.jsonl:2: unexpected content after the JSON object at column 21: x");
  EXPECT_EQ(err(R"({"id":4} )" + std::string(60, 'z')),
            "t.jsonl:2: unexpected content after the JSON object at column 10: " +
                std::string(40, 'z') + "...");
  // An error inside the object comes first.
  EXPECT_EQ(err(R"({"id":"x"} xyz)"),
            "t.jsonl:2: field 'id': expected BIGINT NOT NULL, got string \"x\"");
  EXPECT_TRUE(err(R"({"id":4,} xyz)").starts_with("t.jsonl:2: invalid JSON: "));
  // Alone in the input, and skipped with ignore_parse_errors.
  EXPECT_EQ(DecodeError(schema, R"({"id":4} xyz)"),
            "t.jsonl:1: unexpected content after the JSON object at column 10: xyz");
  RecordBatch batch(schema);
  auto d = MakeDecoder(schema, /*ignore=*/true);
  ASSERT_TRUE(d->Decode("{\"id\":1}\n{\"id\":4} xyz\n{\"id\":5}\n", "t.jsonl", 1, &batch).ok());
  EXPECT_EQ(d->skipped_lines(), 1);
  EXPECT_EQ(batch.num_rows(), 2u);
}

TEST(JsonDecode, ByteOrderMarkIsSkippedAtTheStartOfTheInputOnly) {
  auto schema = Schema({{"id", DataType::Int64(), false}});
  const std::string bom = "\xEF\xBB\xBF";
  // At the start of the input (a file's first line, a Kafka message), as Jackson does.
  RecordBatch b = MustDecode(schema, bom + "{\"id\":1}\n{\"id\":2}\n");
  ASSERT_EQ(b.num_rows(), 2u);
  EXPECT_EQ(b.column(0).Get<int64_t>(0), 1);
  EXPECT_EQ(MustDecode(schema, bom + "{\"id\":1}").num_rows(), 1u);
  EXPECT_EQ(MustDecode(schema, bom + "\n{\"id\":1}\n").num_rows(), 1u);
  EXPECT_EQ(MustDecode(schema, bom).num_rows(), 0u);  // a BOM-only file holds no rows
  std::string padded = bom + "{\"id\":7}\n" + std::string(JsonLinesDecoder::kPadding, ' ');
  RecordBatch in_place(schema);
  ASSERT_TRUE(MakeDecoder(schema)
                  ->DecodePadded(std::string_view(padded.data(), bom.size() + 9),
                                 JsonLinesDecoder::kPadding, "t.jsonl", 1, &in_place)
                  .ok());
  ASSERT_EQ(in_place.num_rows(), 1u);
  EXPECT_EQ(in_place.column(0).Get<int64_t>(0), 7);
  // Anywhere else it is an error that says what it is (files joined with cat, say).
  const std::string mid =
      "stray UTF-8 byte-order mark (EF BB BF) at the start of the line; only the start of a file "
      "may hold one";
  EXPECT_EQ(DecodeError(schema, "{\"id\":1}\n" + bom + "{\"id\":2}\n"), "t.jsonl:2: " + mid);
  EXPECT_EQ(DecodeError(schema, "{\"id\":1}\n  " + bom + "{\"id\":2}"), "t.jsonl:2: " + mid);
  RecordBatch later(schema);
  Status st = MakeDecoder(schema)->Decode(bom + "{\"id\":2}\n", "t.jsonl", 5, &later);
  EXPECT_EQ(st.message(), "t.jsonl:5: " + mid);
  EXPECT_EQ(DecodeError(schema, bom + bom + "{\"id\":2}\n"), "t.jsonl:1: " + mid);
  EXPECT_EQ(DecodeError(schema, "{\"id\":1}" + bom),
            "t.jsonl:1: unexpected content after the JSON object at column 9: a UTF-8 "
            "byte-order mark (EF BB BF)");
}

TEST(JsonDecode, StopsAtTheFirstBadLineKeepingEarlierRows) {
  auto schema = Schema({{"id", DataType::Int64(), false}, {"v", DataType::Int32()}});
  RecordBatch batch(schema);
  auto d = MakeDecoder(schema);
  Status st = d->Decode("{\"id\":1}\n{\"id\":2,\"v\":\"x\"}\n{\"id\":3}\n", "topic/3", 41, &batch);
  EXPECT_EQ(st.message(), "topic/3:42: field 'v': expected INT, got string \"x\"");
  EXPECT_EQ(batch.num_rows(), 1u);
  EXPECT_TRUE(batch.Validate().ok());
}

TEST(JsonDecode, MultiLineObjectsAndSecondValuesGoLineByLine) {
  auto schema = Schema({{"id", DataType::Int64(), false}, {"name", DataType::String()}});
  // An object over two lines: its first line is invalid JSON on its own.
  EXPECT_EQ(DecodeError(schema, "{\"id\":1}\n{\"id\":\n2}\n{\"id\":3}\n")
                .rfind("t.jsonl:2: invalid JSON", 0),
            0u);
  RecordBatch batch(schema);
  auto d = MakeDecoder(schema, /*ignore=*/true);
  ASSERT_TRUE(
      d->Decode("{\"id\":1,\"name\":null}\n{\"id\":\n2}\n{\"id\":3} {\"id\":4}\n"
                "{\"id\":5,\"name\":null,\"name\":\"x\"}\n{\"id\":6,\"name\":\"y\",\"name\":null}",
                "t.jsonl", 1, &batch)
          .ok());
  EXPECT_EQ(d->skipped_lines(), 3);
  ASSERT_EQ(batch.num_rows(), 3u);
  ASSERT_TRUE(batch.Validate().ok());
  EXPECT_EQ(batch.column(0).Get<int64_t>(1), 5);
  EXPECT_EQ(batch.column(1).GetBytes(1), "x");
  EXPECT_TRUE(batch.column(1).IsNull(2));
  EXPECT_EQ(batch.column(1).null_count(), 2u);
}

TEST(JsonDecode, PaddedInputIsParsedInPlaceWithTheSameResult) {
  auto schema = Schema({{"id", DataType::Int64(), false}, {"name", DataType::String()}});
  std::string text = "{\"id\":1,\"name\":\"a\\u00e9\"}\n{\"id\":2,\"name\":\"b\"}\n{\"id\":3}";
  std::string buffer = text + std::string(JsonLinesDecoder::kPadding, 'x');  // any content
  RecordBatch padded(schema);
  auto d = MakeDecoder(schema);
  ASSERT_TRUE(d->DecodePadded(std::string_view(buffer.data(), text.size()),
                              JsonLinesDecoder::kPadding, "t.jsonl", 1, &padded)
                  .ok());
  EXPECT_TRUE(padded.Equals(MustDecode(schema, text)));
  EXPECT_EQ(padded.column(1).GetBytes(0), "a\xC3\xA9");
}

TEST(JsonDecode, IgnoreParseErrorsSkipsWholeLinesAndCountsThem) {
  auto schema = Schema({{"a", DataType::Int64(), false},
                        {"b", DataType::String()},
                        {"c", DataType::Int32(), false}});
  RecordBatch batch(schema);
  auto d = MakeDecoder(schema, /*ignore=*/true);
  // Bad lines fail at their LAST field, after earlier fields were already staged.
  std::string text =
      "{\"a\":1,\"b\":\"x\",\"c\":1}\n"
      "{\"a\":2,\"b\":\"y\",\"c\":\"bad\"}\n"
      "not json\n"
      "{\"a\":3,\"b\":\"z\"}\n"
      "{\"a\":4,\"b\":\"w\",\"c\":4}\n"
      "{\"a\":5,\"b\":\"v\",\"c\":5} trailing\n"
      "{\"a\":6,\"b\":\"u\",\"c\":6}";
  ASSERT_TRUE(d->Decode(text, "t.jsonl", 1, &batch).ok());
  EXPECT_EQ(d->skipped_lines(), 4);
  ASSERT_EQ(batch.num_rows(), 3u);
  ASSERT_TRUE(batch.Validate().ok());
  for (size_t c = 0; c < 3; ++c) EXPECT_EQ(batch.column(c).size(), 3u);
  EXPECT_EQ(batch.column(0).Get<int64_t>(1), 4);
  EXPECT_EQ(batch.column(1).GetBytes(1), "w");
  EXPECT_EQ(batch.column(0).Get<int64_t>(2), 6);
  EXPECT_EQ(batch.column(2).Get<int32_t>(2), 6);
  // Counting carries over calls.
  ASSERT_TRUE(d->Decode("{}\n", "t.jsonl", 8, &batch).ok());
  EXPECT_EQ(d->skipped_lines(), 5);
}

TEST(JsonDecode, RejectsBatchOfAnotherSchema) {
  auto schema = Schema({{"a", DataType::Int64()}});
  RecordBatch other(Schema({{"a", DataType::Int32()}}));
  EXPECT_TRUE(MakeDecoder(schema)->Decode("{}", "x", 1, &other).IsInvalidArgument());
  EXPECT_TRUE(JsonLinesDecoder::Make(Schema({{"d", DataType::Decimal(40, 2)}}))
                  .status()
                  .IsInvalidArgument());
}

// ---------------------------------------------------------------------------------------------
// Volume: the iterate_many fast path, its batch boundaries, and its fallbacks

TEST(JsonDecode, LargeInputWithLineNumbersAcrossBatches) {
  auto schema = Schema(
      {{"id", DataType::Int64(), false}, {"name", DataType::String()}, {"x", DataType::Double()}});
  std::string text;
  const int kRows = 200000;  // several MiB: many iterate_many batches
  for (int i = 0; i < kRows; ++i) {
    text += "{\"id\":" + std::to_string(i) + ",\"name\":\"row " + std::to_string(i) +
            "\",\"x\":" + std::to_string(i) + ".5}\n";
    if (i % 1000 == 0) text += "\n";
  }
  RecordBatch batch = MustDecode(schema, text);
  ASSERT_EQ(batch.num_rows(), static_cast<size_t>(kRows));
  EXPECT_EQ(batch.column(0).Get<int64_t>(123456), 123456);
  EXPECT_EQ(batch.column(1).GetBytes(199999), "row 199999");
  EXPECT_EQ(batch.column(2).Get<double>(7), 7.5);

  // A bad value deep inside: the line number accounts for the blank lines.
  std::string bad = text;
  std::string needle = "{\"id\":150000,";
  size_t at = bad.find(needle);
  bad.replace(at, needle.size(), "{\"id\":\"oops\",");
  // 150000 rows and 150 blank lines (after rows 0, 1000, ..., 149000) come before it.
  int64_t line = 150000 + 150 + 1;
  EXPECT_EQ(DecodeError(schema, bad), "t.jsonl:" + std::to_string(line) +
                                          ": field 'id': expected BIGINT NOT NULL, got string "
                                          "\"oops\"");
  // Broken JSON deep inside (stage-1 error for its whole batch), skipped: every other row kept.
  std::string broken = text;
  broken.replace(at, needle.size(), "{\"id\":150000,\"name\":\"\x01\",");
  RecordBatch kept(schema);
  auto d = MakeDecoder(schema, true);
  ASSERT_TRUE(d->Decode(broken, "t.jsonl", 1, &kept).ok());
  EXPECT_EQ(d->skipped_lines(), 1);
  EXPECT_EQ(kept.num_rows(), static_cast<size_t>(kRows - 1));
  EXPECT_EQ(kept.column(0).Get<int64_t>(149999), 149999);
  EXPECT_EQ(kept.column(0).Get<int64_t>(150000), 150001);
}

TEST(JsonDecode, LineLongerThanABatch) {
  auto schema = Schema({{"s", DataType::String()}});
  std::string big(3 << 20, 'a');
  RecordBatch b = MustDecode(schema, "{\"s\":\"x\"}\n{\"s\":\"" + big + "\"}\n{\"s\":\"y\"}\n");
  ASSERT_EQ(b.num_rows(), 3u);
  EXPECT_EQ(b.column(0).GetBytes(1), big);
  EXPECT_EQ(b.column(0).GetBytes(2), "y");
}

// ---------------------------------------------------------------------------------------------
// Encoder and round trips

TEST(JsonEncode, WritesTheDocumentedFormats) {
  auto schema = Schema({{"b", DataType::Boolean()},
                        {"l", DataType::Int64()},
                        {"f", DataType::Float()},
                        {"d", DataType::Double()},
                        {"s", DataType::String()},
                        {"by", DataType::Binary()},
                        {"dt", DataType::Date()},
                        {"ts", DataType::Timestamp()},
                        {"tz", DataType::TimestampTz()},
                        {"dec", DataType::Decimal(9, 3)},
                        {"n", DataType::Int32()}});
  RecordBatch batch(schema);
  batch.mutable_column(0).Append<uint8_t>(1);
  batch.mutable_column(1).Append<int64_t>(-42);
  batch.mutable_column(2).Append<float>(0.1f);
  batch.mutable_column(3).Append<double>(std::numeric_limits<double>::infinity());
  batch.mutable_column(4).AppendBytes("a\"b\\c\n\x01é");
  batch.mutable_column(5).AppendBytes(std::string("\x00\x01\xff", 3));
  batch.mutable_column(6).Append<int32_t>(-719162);
  batch.mutable_column(7).Append<int64_t>(-1);
  batch.mutable_column(8).Append<int64_t>(Micros(2024, 5, 6, 7, 8, 9, 10));
  batch.mutable_column(9).Append<Int128>(-5);
  batch.mutable_column(10).AppendNull();
  std::string out;
  AppendRowAsJson(batch, 0, &out);
  EXPECT_EQ(
      out,
      R"({"b":true,"l":-42,"f":0.1,"d":"Infinity","s":"a\"b\\c\n\u0001é","by":"AAH/",)"
      R"("dt":"0001-01-01","ts":"1969-12-31T23:59:59.999999","tz":"2024-05-06T07:08:09.00001Z",)"
      R"("dec":"-0.005","n":null})"
      "\n");

  // Flink's json format: 'json.timestamp-format.standard' = 'SQL' (a space) and DECIMAL as a
  // plain JSON number; ISO-8601 keeps the 'T'.
  out.clear();
  AppendRowAsJson(batch, 0, &out, EncodeOptions{TimestampStandard::kSql, true});
  EXPECT_NE(out.find(R"("ts":"1969-12-31 23:59:59.999999","tz":"2024-05-06 07:08:09.00001Z",)"
                     R"("dec":-0.005,"n":null})"),
            std::string::npos)
      << out;
  out.clear();
  AppendRowAsJson(batch, 0, &out, EncodeOptions{TimestampStandard::kIso8601, true});
  EXPECT_NE(out.find(R"("ts":"1969-12-31T23:59:59.999999","tz":"2024-05-06T07:08:09.00001Z",)"
                     R"("dec":-0.005,"n":null})"),
            std::string::npos)
      << out;
}

TEST(JsonEncode, DecimalsAsNumbersArePlainWithEveryFractionalDigit) {
  auto schema = Schema({{"a", DataType::Decimal(20, 0)},
                        {"b", DataType::Decimal(38, 38)},
                        {"c", DataType::Decimal(5, 2)}});
  RecordBatch batch(schema);
  // 454621864049246170: Flink without 'json.encode.decimal-as-plain-number' may write
  // 4.5462186404924617E+17; floe never uses an exponent.
  batch.mutable_column(0).Append<Int128>(Int128(454621864049246170));
  batch.mutable_column(1).Append<Int128>(Int128(27));
  batch.mutable_column(2).Append<Int128>(Int128(-1200));
  std::string out;
  AppendRowAsJson(batch, 0, &out, EncodeOptions{TimestampStandard::kSql, true});
  EXPECT_EQ(out, R"({"a":454621864049246170,"b":0.00000000000000000000000000000000000027,)"
                 R"("c":-12.00})"
                 "\n");
  RecordBatch back = MustDecode(schema, out);
  for (size_t c = 0; c < 3; ++c) EXPECT_TRUE(back.column(c).Equals(batch.column(c))) << c;
}

class RandomBatch {
 public:
  explicit RandomBatch(uint64_t seed) : rng_(seed) {}

  RecordBatch Make(const std::shared_ptr<const BatchSchema>& schema, size_t rows) {
    RecordBatch batch(schema);
    for (size_t r = 0; r < rows; ++r) {
      for (size_t c = 0; c < schema->fields.size(); ++c) {
        const Field& f = schema->fields[c];
        Column& col = batch.mutable_column(c);
        if (f.nullable && Pick(6) == 0) {
          col.AppendNull();
          continue;
        }
        switch (f.type.id) {
          case TypeId::kBoolean:
            col.Append<uint8_t>(Pick(2));
            break;
          case TypeId::kInt32:
            col.Append<int32_t>(static_cast<int32_t>(Int64()));
            break;
          case TypeId::kInt64:
          case TypeId::kTimestamp:
          case TypeId::kTimestampTz:
            col.Append<int64_t>(Int64());
            break;
          case TypeId::kDate:
            col.Append<int32_t>(static_cast<int32_t>(Int64()));
            break;
          case TypeId::kTime:  // microseconds since midnight
            col.Append<int64_t>(static_cast<int64_t>(rng_() % 86'400'000'000));
            break;
          case TypeId::kFloat:
            col.Append<float>(static_cast<float>(Double()));
            break;
          case TypeId::kDouble:
            col.Append<double>(Double());
            break;
          case TypeId::kString:
            col.AppendBytes(String());
            break;
          case TypeId::kBinary: {
            std::string s;
            for (size_t i = Pick(12); i > 0; --i) s.push_back(static_cast<char>(rng_()));
            col.AppendBytes(s);
            break;
          }
          case TypeId::kDecimal: {
            Int128 v = 0;
            int digits = static_cast<int>(Pick(f.type.precision + 1));
            for (int i = 0; i < digits; ++i) v = v * 10 + static_cast<int>(Pick(10));
            col.Append<Int128>(Pick(2) ? -v : v);
            break;
          }
        }
      }
    }
    return batch;
  }

 private:
  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  int64_t Int64() {
    switch (Pick(4)) {
      case 0:
        return static_cast<int64_t>(Pick(2000)) - 1000;
      case 1:
        return Pick(2) ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
      default:
        return static_cast<int64_t>(rng_());
    }
  }
  double Double() {
    switch (Pick(10)) {
      case 0:
        return std::numeric_limits<double>::quiet_NaN();
      case 1:
        return Pick(2) ? std::numeric_limits<double>::infinity()
                       : -std::numeric_limits<double>::infinity();
      case 2:
        return -0.0;
      case 3:
        return std::numeric_limits<double>::denorm_min();
      case 4: {
        // Any bit pattern but NaN (NaN payloads are not kept: NaN is written as "NaN").
        double v = std::bit_cast<double>(static_cast<uint64_t>(rng_()));
        return std::isnan(v) ? 1.0 : v;
      }
      default:
        return std::uniform_real_distribution<double>(-1e6, 1e6)(rng_);
    }
  }
  std::string String() {
    static const char* kPieces[] = {"a",    "Z",    " ", "\"", "\\", "\n", "\r", "\t",
                                    "\x01", "\x1f", "é", "中", "😀",  "/",  "{",  "}"};
    std::string s;
    for (size_t i = Pick(10); i > 0; --i) s += kPieces[Pick(std::size(kPieces))];
    return s;
  }
  std::mt19937_64 rng_;
};

TEST(JsonEncode, RandomBatchesRoundTripThroughTheDecoder) {
  auto schema = Schema({{"b", DataType::Boolean()},
                        {"i", DataType::Int32(), false},
                        {"l", DataType::Int64()},
                        {"f", DataType::Float()},
                        {"d", DataType::Double()},
                        {"s", DataType::String()},
                        {"by", DataType::Binary()},
                        {"dt", DataType::Date()},
                        {"ts", DataType::Timestamp()},
                        {"tz", DataType::TimestampTz()},
                        {"t", DataType::Time()},
                        {"d1", DataType::Decimal(1, 0)},
                        {"d9", DataType::Decimal(9, 2)},
                        {"d38", DataType::Decimal(38, 38)},
                        {"d30", DataType::Decimal(30, 5), false}});
  // Every encoding reads back: floe's default and Flink's forms (the decoder takes both
  // timestamp standards and decimals as strings or numbers).
  const EncodeOptions kEncodings[] = {{},
                                      {TimestampStandard::kSql, true},
                                      {TimestampStandard::kSql, false},
                                      {TimestampStandard::kIso8601, true}};
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const EncodeOptions& options = kEncodings[seed % std::size(kEncodings)];
    RandomBatch gen(seed);
    RecordBatch original = gen.Make(schema, 500);
    ASSERT_TRUE(original.Validate().ok());
    std::string text;
    for (size_t r = 0; r < original.num_rows(); ++r) {
      AppendRowAsJson(original, r, &text, options);
    }
    RecordBatch back = MustDecode(schema, text);
    ASSERT_EQ(back.num_rows(), original.num_rows());
    for (size_t c = 0; c < schema->fields.size(); ++c) {
      EXPECT_TRUE(back.column(c).Equals(original.column(c)))
          << "seed " << seed << " column " << schema->fields[c].name;
    }
    // Scan output appended again yields the same rows again.
    std::string text2;
    for (size_t r = 0; r < back.num_rows(); ++r) AppendRowAsJson(back, r, &text2, options);
    EXPECT_EQ(text2, text);
  }
}

// ---------------------------------------------------------------------------------------------
// Undeclared fields (DecodeOptions::capture_undeclared)

// The packed undeclared fields of row `row` as "name:TYPE=value" items.
std::vector<std::string> Undeclared(const RecordBatch& batch, size_t row) {
  const Column& packed = batch.column(batch.num_columns() - 1);
  if (packed.IsNull(row)) return {};
  std::vector<std::string> out;
  UndeclaredFieldsReader reader(packed.GetBytes(row));
  UndeclaredField f;
  for (;;) {
    Result<bool> more = reader.Next(&f);
    EXPECT_TRUE(more.ok()) << more.status().ToString();
    if (!more.ok() || !*more) break;
    Column one(f.type);
    AppendUndeclared(f, &one);
    std::string value;
    switch (f.type.id) {
      case TypeId::kInt64:
        value = std::to_string(one.Get<int64_t>(0));
        break;
      case TypeId::kDouble:
        value = std::to_string(one.Get<double>(0));
        break;
      case TypeId::kBoolean:
        value = one.Get<uint8_t>(0) != 0 ? "true" : "false";
        break;
      default:
        value = std::string(one.GetBytes(0));
    }
    out.push_back(std::string(f.name) + ":" + SqlTypeName(f.type) + "=" + value);
  }
  return out;
}

// An id column and the column undeclared fields are packed into, and a decoder filling it.
std::shared_ptr<const BatchSchema> CapturingSchema() {
  return Schema({{"id", DataType::Int64(), false}, {"$undeclared", DataType::String(), true}});
}
std::unique_ptr<JsonLinesDecoder> CapturingDecoder(const std::shared_ptr<const BatchSchema>& s) {
  DecodeOptions options;
  options.capture_undeclared = true;
  auto made = JsonLinesDecoder::Make(s, options);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  return std::move(made).ValueOrDie();
}

// Fields no column names go, typed by their JSON, into the last column; nulls are left out, a row
// without any holds null there, and the declared columns read as without the option.
TEST(JsonDecode, UndeclaredFieldsArePackedWithTheTypesTheirJsonGives) {
  auto schema = CapturingSchema();
  auto decoder = CapturingDecoder(schema);
  RecordBatch batch(schema);
  {
    Status ok = decoder->Decode(
        "{\"id\":1}\n"
        "{\"id\":2,\"email\":\"a\\u0040b\",\"visits\":7,\"ratio\":0.5,\"ok\":true,\"gone\":null,"
        "\"tags\":[\"x\", 1],\"at\":{\"k\":{\"v\":2}}}\n"
        "{\"ratio\":3,\"id\":3}\n",
        "t.jsonl", 1, &batch);
    ASSERT_TRUE(ok.ok()) << ok.ToString();
  }
  ASSERT_EQ(batch.num_rows(), 3u);
  EXPECT_EQ(batch.column(0).Get<int64_t>(2), 3);
  EXPECT_TRUE(batch.column(1).IsNull(0));
  EXPECT_EQ(Undeclared(batch, 1),
            (std::vector<std::string>{"email:STRING=a@b", "visits:BIGINT=7",
                                      "ratio:DOUBLE=0.500000", "ok:BOOLEAN=true",
                                      "tags:STRING=[\"x\", 1]", "at:STRING={\"k\":{\"v\":2}}"}));
  // An integral number where DOUBLE was seen reads as DOUBLE.
  EXPECT_EQ(Undeclared(batch, 2), (std::vector<std::string>{"ratio:DOUBLE=3.000000"}));

  // 5,000 mutations of a line: an error or a row, whose packed fields read back.
  const std::string line =
      "{\"id\":9,\"s\":\"x\\u00e9\",\"n\":12,\"a\":[1,{\"b\":null}],\"ok\":false}";
  std::mt19937 rng(50);
  for (int i = 0; i < 5000; ++i) {
    std::string junk = line;
    for (int k = 0; k <= i % 3; ++k) junk[rng() % junk.size()] = static_cast<char>(rng() % 128);
    (void)decoder->Decode(junk, "t.jsonl", 1, &batch);
  }
  ASSERT_TRUE(batch.Validate().ok());
  for (size_t r = 0; r < batch.num_rows(); ++r) (void)Undeclared(batch, r);
}

// A field whose kind differs from what earlier lines gave it, or whose name cannot be a column,
// fails its line naming the field (the source's bad-records policy decides), leaves no part of
// the row behind, and a failed line types nothing.
TEST(JsonDecode, UndeclaredFieldsThatCannotBeAColumnFailTheirLine) {
  auto schema = CapturingSchema();
  auto decoder = CapturingDecoder(schema);
  RecordBatch batch(schema);
  {
    Status ok = decoder->Decode("{\"id\":1,\"n\":5}\n", "t.jsonl", 1, &batch);
    ASSERT_TRUE(ok.ok()) << ok.ToString();
  }
  Status st = decoder->Decode("{\"id\":2,\"n\":5.5}\n", "t.jsonl", 2, &batch);
  EXPECT_EQ(st.message(),
            "t.jsonl:2: undeclared field 'n': expected BIGINT as earlier records gave it, got "
            "number 5.5");
  st = decoder->Decode("{\"id\":2,\"a.b\":1}\n", "t.jsonl", 3, &batch);
  EXPECT_NE(st.message().find("undeclared field 'a.b': a column name must be"), std::string::npos)
      << st.ToString();
  // 's' is typed by a line that then fails: the next line may give it another kind.
  st = decoder->Decode("{\"s\":\"x\",\"id\":\"bad\"}\n", "t.jsonl", 4, &batch);
  EXPECT_FALSE(st.ok());
  {
    Status ok = decoder->Decode("{\"id\":3,\"s\":true}\n", "t.jsonl", 5, &batch);
    ASSERT_TRUE(ok.ok()) << ok.ToString();
  }
  ASSERT_EQ(batch.num_rows(), 2u);
  EXPECT_TRUE(batch.Validate().ok());
  EXPECT_EQ(Undeclared(batch, 1), (std::vector<std::string>{"s:BOOLEAN=true"}));
  // The capture column must be a nullable STRING.
  DecodeOptions bad;
  bad.capture_undeclared = true;
  EXPECT_FALSE(JsonLinesDecoder::Make(Schema({{"id", DataType::Int64(), false}}), bad).ok());
}

}  // namespace
}  // namespace floe::json

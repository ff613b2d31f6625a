#include "floe/sql/exec/calc_operator.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <set>
#include <tuple>

#include "floe/common/civil_time.h"
#include "floe/connectors/connectors_test_util.h"
#include "floe/sql/parser.h"

namespace floe::sql {
namespace {

constexpr const char* kSourceColumns =
    "a BIGINT, b INT, s STRING, f DOUBLE, d DECIMAL(10, 2), flag BOOLEAN";

// Compiles "INSERT INTO dst SELECT <select> FROM src [WHERE <where>]" through the real parser.
Result<std::shared_ptr<const CalcProgram>> Compile(const std::string& where,
                                                   const std::string& select = "*",
                                                   const std::string& sink_columns = kSourceColumns,
                                                   std::shared_ptr<const TimeZone> zone = nullptr) {
  std::string text = std::string("CREATE TABLE src (") + kSourceColumns + ");\nCREATE TABLE dst (" +
                     sink_columns + ");\nINSERT INTO dst SELECT " + select + " FROM src" +
                     (where.empty() ? "" : " WHERE " + where) + ";";
  Result<Script> script = ParseScript(text);
  if (!script.ok()) return script.status();
  connectors::TableDescriptor src = connectors::testing::Table("src", kSourceColumns, {});
  connectors::TableDescriptor dst = connectors::testing::Table("dst", sink_columns, {});
  CalcSpec spec;
  spec.input = src.schema;
  spec.output = dst.schema;
  spec.where = script->inserts[0].where;
  spec.select = script->inserts[0].select;
  spec.sink_name = "dst";
  spec.zone = std::move(zone);
  return CalcProgram::Compile(spec);
}

RecordBatch Input() {
  connectors::TableDescriptor src = connectors::testing::Table("src", kSourceColumns, {});
  RecordBatch b(src.schema);
  auto i64 = [&](size_t c, std::optional<int64_t> v) {
    v ? b.mutable_column(c).Append<int64_t>(*v) : b.mutable_column(c).AppendNull();
  };
  auto i32 = [&](std::optional<int32_t> v) {
    v ? b.mutable_column(1).Append<int32_t>(*v) : b.mutable_column(1).AppendNull();
  };
  auto str = [&](std::optional<std::string> v) {
    v ? b.mutable_column(2).AppendBytes(*v) : b.mutable_column(2).AppendNull();
  };
  auto dbl = [&](std::optional<double> v) {
    v ? b.mutable_column(3).Append<double>(*v) : b.mutable_column(3).AppendNull();
  };
  auto dec = [&](std::optional<int64_t> cents) {
    cents ? b.mutable_column(4).Append<Int128>(*cents) : b.mutable_column(4).AppendNull();
  };
  auto flag = [&](std::optional<bool> v) {
    v ? b.mutable_column(5).Append<uint8_t>(*v ? 1 : 0) : b.mutable_column(5).AppendNull();
  };
  // row 0: 1, 10, 'x', 1.5, 1.50, TRUE
  i64(0, 1), i32(10), str("x"), dbl(1.5), dec(150), flag(true);
  // row 1: 2, NULL, 'y', NULL, 2.25, FALSE
  i64(0, 2), i32(std::nullopt), str("y"), dbl(std::nullopt), dec(225), flag(false);
  // row 2: NULL, 30, NULL, 3.0, NULL, NULL
  i64(0, std::nullopt), i32(30), str(std::nullopt), dbl(3.0), dec(std::nullopt), flag(std::nullopt);
  // row 3: 4, 40, 'x', -1.0, -0.01, TRUE
  i64(0, 4), i32(40), str("x"), dbl(-1.0), dec(-1), flag(true);
  EXPECT_TRUE(b.Validate().ok());
  return b;
}

std::vector<uint32_t> Kept(const std::string& where) {
  Result<std::shared_ptr<const CalcProgram>> p = Compile(where);
  EXPECT_TRUE(p.ok()) << where << ": " << p.status().ToString();
  if (!p.ok()) return {};
  return (*p)->Filter(Input()).ValueOrDie();
}

using Rows = std::vector<uint32_t>;

TEST(CalcProgram, ComparisonWithNullIsUnknownAndDropsTheRow) {
  EXPECT_EQ(Kept("a > 1"), (Rows{1, 3}));
  EXPECT_EQ(Kept("a <= 1"), (Rows{0}));
  EXPECT_EQ(Kept("NOT (a > 1)"), (Rows{0}));  // NOT UNKNOWN is UNKNOWN
  EXPECT_EQ(Kept("a <> 1"), (Rows{1, 3}));
  EXPECT_EQ(Kept("a = a"), (Rows{0, 1, 3}));
}

TEST(CalcProgram, AndOrFollowThreeValuedLogic) {
  EXPECT_EQ(Kept("a > 1 OR flag"), (Rows{0, 1, 3}));          // row 2: UNKNOWN OR UNKNOWN
  EXPECT_EQ(Kept("a > 1 OR b = 30"), (Rows{1, 2, 3}));        // UNKNOWN OR TRUE = TRUE
  EXPECT_EQ(Kept("NOT (b = 10 AND flag)"), (Rows{1, 2, 3}));  // FALSE AND UNKNOWN = FALSE
  EXPECT_EQ(Kept("flag AND a > 0 AND s = 'x'"), (Rows{0, 3}));
  EXPECT_EQ(Kept("flag = FALSE OR s IS NULL"), (Rows{1, 2}));
  EXPECT_EQ(Kept("NOT flag"), (Rows{1}));
  EXPECT_EQ(Kept("TRUE"), (Rows{0, 1, 2, 3}));
  EXPECT_EQ(Kept("FALSE OR flag"), (Rows{0, 3}));
  EXPECT_EQ(Kept("(a > 1) = (b > 20)"), (Rows{0, 3}));  // FALSE = FALSE; UNKNOWN stays UNKNOWN
}

TEST(CalcProgram, IsNullAndIsNotNull) {
  EXPECT_EQ(Kept("b IS NULL"), (Rows{1}));
  EXPECT_EQ(Kept("a IS NOT NULL AND s = 'x'"), (Rows{0, 3}));
  EXPECT_EQ(Kept("(a > 1) IS NULL"), (Rows{2}));
  EXPECT_EQ(Kept("flag IS NOT NULL"), (Rows{0, 1, 3}));
  EXPECT_EQ(Kept("'x' IS NULL"), Rows{});
}

TEST(CalcProgram, ComparesNumbersAcrossTypesAndStringsByBytes) {
  EXPECT_EQ(Kept("d >= 1.5"), (Rows{0, 1}));
  EXPECT_EQ(Kept("d = 1.5"), (Rows{0}));  // exact at scale 2
  EXPECT_EQ(Kept("d = 1.505"), Rows{});
  EXPECT_EQ(Kept("d < 0"), (Rows{3}));
  EXPECT_EQ(Kept("d > a"), (Rows{0, 1}));  // 1.50 > 1, 2.25 > 2, -0.01 < 4
  EXPECT_EQ(Kept("b > 15.5"), (Rows{2, 3}));
  EXPECT_EQ(Kept("f <= 1.5"), (Rows{0, 3}));
  EXPECT_EQ(Kept("f > 2.5e0"), (Rows{2}));
  EXPECT_EQ(Kept("b < a"), Rows{});
  EXPECT_EQ(Kept("a >= -1 AND a < 9223372036854775807"), (Rows{0, 1, 3}));
  EXPECT_EQ(Kept("s < 'y'"), (Rows{0, 3}));
  EXPECT_EQ(Kept("s <> 'x'"), (Rows{1}));
  EXPECT_EQ(Kept("'x' = s"), (Rows{0, 3}));
}

TEST(CalcProgram, RefusesComparingIncompatibleTypesWithThePosition) {
  Result<std::shared_ptr<const CalcProgram>> p = Compile("a > 1 AND s = 1");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(), "line 3, column 53: cannot compare STRING with INT in (s = 1)");
  p = Compile("s");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("WHERE needs a BOOLEAN condition, but s is STRING"),
            std::string::npos)
      << p.status().message();
  p = Compile("a AND flag");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("AND needs BOOLEAN operands"), std::string::npos);
}

TEST(CalcProgram, ProjectsColumnsLiteralsAndPredicatesIntoTheSinkTypes) {
  Result<std::shared_ptr<const CalcProgram>> p =
      Compile("a IS NOT NULL", "a AS x, b, 'lit', b > 15, d, 7",
              "x BIGINT, y BIGINT, z STRING, w BOOLEAN, v DECIMAL(12, 3), n DOUBLE");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE((*p)->is_identity());
  Result<RecordBatch> out = (*p)->Apply(Input());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out->schema(), *(*p)->output_schema());
  EXPECT_EQ(connectors::testing::JsonRows({*out}),
            (std::vector<std::string>{
                "{\"x\":1,\"y\":10,\"z\":\"lit\",\"w\":false,\"v\":\"1.500\",\"n\":7}\n",
                "{\"x\":2,\"y\":null,\"z\":\"lit\",\"w\":null,\"v\":\"2.250\",\"n\":7}\n",
                "{\"x\":4,\"y\":40,\"z\":\"lit\",\"w\":true,\"v\":\"-0.010\",\"n\":7}\n"}));
}

// Arithmetic, as Flink types and runs it (the input rows are a, b: 1, 10 / 2, NULL / NULL, 30 /
// 4, 40): `+ - * /` in the wider operand's type, INT / INT truncated, % with the divisor's type
// and the dividend's sign, NULL in NULL out, in WHERE and the select list alike.
TEST(CalcProgram, ArithmeticFollowsFlinksTypesAndJavasIntegerRules) {
  Result<std::shared_ptr<const CalcProgram>> p =
      Compile("a * 2 + 1 > b / 10", "a + b, b / 4, -b % 7, f * 2, a - b * 2, MOD(a, 3)",
              "s BIGINT, q INT, m INT, f DOUBLE, x BIGINT, r INT");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  Result<RecordBatch> out = (*p)->Apply(Input());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // Row 0: 3 > 1 kept. Row 1: b NULL, so the condition is UNKNOWN: dropped. Row 2: a NULL:
  // dropped. Row 3: 9 > 4 kept.
  EXPECT_EQ(
      connectors::testing::JsonRows({*out}),
      (std::vector<std::string>{"{\"s\":11,\"q\":2,\"m\":-3,\"f\":3,\"x\":-19,\"r\":1}\n",
                                "{\"s\":44,\"q\":10,\"m\":-5,\"f\":-2,\"x\":-76,\"r\":1}\n"}));
  // The select list's types are Flink's: a + b is BIGINT, so it does not go into an INT.
  p = Compile("", "a + b", "x INT");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("has type BIGINT but column 'x'"), std::string::npos)
      << p.status().message();
  // Arithmetic compares like a column: exactly for integers, as doubles with a DOUBLE.
  EXPECT_EQ(Kept("b * 3 = 30"), (Rows{0}));
  EXPECT_EQ(Kept("f + 0.5 >= 2"), (Rows{0, 2}));
  EXPECT_EQ(Kept("-a < -1"), (Rows{1, 3}));
}

// INT and BIGINT wrap around as Java's do; an integer divided by zero fails the batch naming
// the value, unless WHERE dropped its row (the select list is computed for the rows kept); a
// literal zero divisor is refused when the job is planned, as Flink's planner does.
TEST(CalcProgram, IntegerOverflowWrapsAndDivisionByZeroFailsOnlyForRowsKept) {
  Result<std::shared_ptr<const CalcProgram>> p =
      Compile("", "b * 2147483647, -CAST(b - b - 2147483647 - 1 AS INT)", "x INT, y INT");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  Result<RecordBatch> out = (*p)->Apply(Input());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(connectors::testing::JsonRows({*out})[0], "{\"x\":-10,\"y\":-2147483648}\n");

  p = Compile("", "a / (b - 10)", "x BIGINT");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  out = (*p)->Apply(Input());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(),
            "the query into sink 'dst': (a / (b - 10)) cannot be evaluated for the value 1 / 0 "
            "(division by zero)");
  p = Compile("b <> 10", "a / (b - 10)", "x BIGINT");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  out = (*p)->Apply(Input());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->num_rows(), 2u);
  // In WHERE every row is evaluated, as Flink evaluates its condition.
  EXPECT_FALSE((*Compile("a / (b - 10) > 0"))->Filter(Input()).ok());

  p = Compile("", "a / 0", "x BIGINT");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(), "line 3, column 26: division by zero in (a / 0)");
  // Floating-point division by zero is IEEE's, as Java's.
  p = Compile("", "f / 0.0e0", "x DOUBLE");
  ASSERT_FALSE(p.ok()) << "a literal zero is refused whatever its type";
  out = (*Compile("", "f / (f - f)", "x DOUBLE"))->Apply(Input());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(connectors::testing::JsonRows({*out})[1], "{\"x\":null}\n");
}

TEST(CalcProgram, ArithmeticOnOtherTypesIsRefusedWithThePosition) {
  Result<std::shared_ptr<const CalcProgram>> p = Compile("s + 1 > 0");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "line 3, column 43: cannot apply '+' to STRING and INT (it takes INT, BIGINT, FLOAT, "
            "DOUBLE and DECIMAL)");
  p = Compile("f % 2 > 0");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("(it takes INT and BIGINT)"), std::string::npos);
  p = Compile("INITCAP(s) = 'X'");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "line 3, column 41: not implemented yet: INITCAP(s) in WHERE and the select list "
            "(columns, literals, arithmetic, comparisons, CASE, CAST, TO_TIMESTAMP_LTZ and the "
            "functions in docs/sql.md are evaluated)");
}

// CAST evaluates in WHERE and the select list as in computed columns: a timestamp column
// compares with a CAST of a literal.
TEST(CalcProgram, CastInWhereAndTheSelectList) {
  Result<std::shared_ptr<const CalcProgram>> p = Compile(
      "CAST(s AS STRING) = 'x' AND CAST(b AS DOUBLE) > 15", "CAST(b AS BIGINT) * 2", "x BIGINT");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  Result<RecordBatch> out = (*p)->Apply(Input());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(connectors::testing::JsonRows({*out}), (std::vector<std::string>{"{\"x\":80}\n"}));
}

// `expr` into a sink column `x` of `type`: the JSON value of every input row (errors as text).
std::vector<std::string> Values(const std::string& expr, const std::string& type,
                                std::shared_ptr<const TimeZone> zone = nullptr) {
  Result<std::shared_ptr<const CalcProgram>> p = Compile("", expr, "x " + type, std::move(zone));
  if (!p.ok()) return {p.status().message()};
  Result<RecordBatch> out = (*p)->Apply(Input());
  if (!out.ok()) return {out.status().message()};
  std::vector<std::string> values;
  for (const std::string& row : connectors::testing::JsonRows({*out})) {
    values.push_back(row.substr(5, row.size() - 7));  // {"x":<value>}\n
  }
  return values;
}

std::vector<std::string> Four(const std::string& v) { return {v, v, v, v}; }

using Strings = std::vector<std::string>;

// Flink's string functions, with the expectations of Flink's own tests (ScalarFunctionsTest,
// BinaryStringDataTest) where they have one; positions count code points.
TEST(CalcProgram, StringFunctionsFollowFlinksTests) {
  EXPECT_EQ(Values("SUBSTRING('hello', 0, 3)", "STRING"), Four("\"hel\""));
  EXPECT_EQ(Values("SUBSTRING('hello' FROM -2 FOR 3)", "STRING"), Four("\"lo\""));
  EXPECT_EQ(Values("SUBSTRING('hello', -100, 3)", "STRING"), Four("\"\""));
  EXPECT_EQ(Values("SUBSTRING('hello', 100, 10)", "STRING"), Four("\"\""));
  EXPECT_EQ(Values("SUBSTRING('hello', 2, 100)", "STRING"), Four("\"ello\""));
  EXPECT_EQ(Values("SUBSTR('hello', 2, -1)", "STRING"), Four("null"));
  EXPECT_EQ(Values("SUBSTRING('1\u4e163', 1, 2)", "STRING"), Four("\"1\u4e16\""));
  EXPECT_EQ(Values("TRIM(BOTH 'abd' FROM 'abcddcba')", "STRING"), Four("\"cddc\""));
  EXPECT_EQ(Values("TRIM('\u5f00\u5fc3' FROM '\u5fc3\u60c5\u5f00\u5f00\u5fc3\u5fc3')", "STRING"),
            Four("\"\u60c5\""));
  EXPECT_EQ(Values("LTRIM(' \ta ')", "STRING"), Four("\"\\ta \""));  // spaces only
  EXPECT_EQ(Values("RTRIM('abcddcba', 'abc')", "STRING"), Four("\"abcdd\""));
  EXPECT_EQ(Values("UPPER('stra\u00dfe \u00e9t\u00e9')", "STRING"),
            Four("\"STRASSE \u00c9T\u00c9\""));
  EXPECT_EQ(Values("LOWER('\u03a3\u0391 \u0416\u0418 ABC')", "STRING"),
            Four("\"\u03c3\u03b1 \u0436\u0438 abc\""));
  EXPECT_EQ(Values("CHAR_LENGTH('1\u4e163\U0001F600')", "INT"), Four("4"));
  EXPECT_EQ(Values("REPLACE('abc', '', 'x')", "STRING"), Four("\"xaxbxcx\""));
  EXPECT_EQ(Values("REPLACE('aaa', 'aa', 'b')", "STRING"), Four("\"ba\""));
  // NULL in, NULL out (CONCAT and || alike); the input's s is 'x', 'y', NULL, 'x'.
  EXPECT_EQ(Values("CONCAT('<', s, '>')", "STRING"),
            (std::vector<std::string>{"\"<x>\"", "\"<y>\"", "null", "\"<x>\""}));
  EXPECT_EQ(Values("s || '!' || s", "STRING"),
            (std::vector<std::string>{"\"x!x\"", "\"y!y\"", "null", "\"x!x\""}));
  EXPECT_EQ(Values("POSITION('testx' IN 'xxxtest')", "INT"), Four("0"));
  EXPECT_EQ(Values("POSITION('\u754c' IN '\u4e16\u754c\u754c')", "INT"), Four("2"));
  EXPECT_EQ(Values("LOCATE('aa', 'aaads', 2)", "INT"), Four("2"));
  EXPECT_EQ(Values("LOCATE('', 'abc', 3)", "INT"), Four("1"));
  EXPECT_EQ(Values("CONCAT_WS('~', s, 'AA', '', s)", "STRING"),
            (std::vector<std::string>{"\"x~AA~~x\"", "\"y~AA~~y\"", "\"AA~\"", "\"x~AA~~x\""}));
  EXPECT_EQ(Values("CONCAT_WS(s, 'a', 'b')", "STRING"),
            (std::vector<std::string>{"\"axb\"", "\"ayb\"", "null", "\"axb\""}));
  EXPECT_EQ(
      Values("LEFT('hello', 2) || RIGHT('hello', 3) || LEFT('x', -1) || RIGHT('hi', 5)", "STRING"),
      Four("\"hellohi\""));
  EXPECT_EQ(Values("UPPER(5)", "STRING")[0],
            "line 3, column 24: UPPER takes one STRING, got (INT)");
}

// [NOT] BETWEEN, [NOT] IN and [NOT] LIKE in WHERE, with SQL's NULLs: a NULL operand makes each
// UNKNOWN, so the row is dropped whichever way it is negated. Rows: a 1, 2, NULL, 4; b 10,
// NULL, 30, 40; s 'x', 'y', NULL, 'x'.
TEST(CalcProgram, BetweenInAndLikeFollowSqlsThreeValuedLogic) {
  EXPECT_EQ(Kept("b BETWEEN 10 AND 30"), (Rows{0, 2}));
  EXPECT_EQ(Kept("b NOT BETWEEN 10 AND 30"), (Rows{3}));
  EXPECT_EQ(Kept("a IN (1, 4, 7)"), (Rows{0, 3}));
  EXPECT_EQ(Kept("a NOT IN (1, 4)"), (Rows{1}));
  EXPECT_EQ(Kept("s LIKE 'x%'"), (Rows{0, 3}));
  EXPECT_EQ(Kept("s NOT LIKE '_'"), (Rows{}));
  // Without ESCAPE there is no escape character (Flink's LikeCallGen passes none): '\\' is itself.
  EXPECT_EQ(Values("'a\\b' LIKE 'a\\_'", "BOOLEAN"), Four("true"));
  EXPECT_EQ(Values("'a_b' LIKE 'a\\_b'", "BOOLEAN"), Four("false"));
  EXPECT_EQ(Values("'\u4e16\u754c!' LIKE '_%!'", "BOOLEAN"), Four("true"));
  EXPECT_EQ(Values("'abcabd' LIKE '%ab_'", "BOOLEAN"), Four("true"));
  EXPECT_EQ(Values("'abc' LIKE 'a%c%'", "BOOLEAN"), Four("true"));
  EXPECT_EQ(Values("'abc' LIKE 'a%x'", "BOOLEAN"), Four("false"));
}

// DECIMAL arithmetic with Flink's result types (LogicalTypeMerging) and values (exact, HALF_UP
// to the result's scale, NULL past its precision, as DecimalDataUtils with BigDecimal). Rows: d
// DECIMAL(10, 2) 1.50, 2.25, NULL, -0.01; b INT 10, NULL, 30, 40.
TEST(CalcProgram, DecimalArithmeticFollowsFlinksTypesAndRounding) {
  // DECIMAL(10, 2) + INT (as DECIMAL(10, 0)) is DECIMAL(13, 2).
  EXPECT_EQ(Values("d + b", "DECIMAL(13, 2)"), (Strings{"\"11.50\"", "null", "null", "\"39.99\""}));
  EXPECT_EQ(Values("d + b", "DECIMAL(12, 2)")[0],
            "line 3, column 26: query column 1 '(d + b)' has type DECIMAL(13, 2) but column 'x' "
            "of sink 'dst' is DECIMAL(12, 2)");
  EXPECT_EQ(Values("d * d", "DECIMAL(21, 4)"),
            (Strings{"\"2.2500\"", "\"5.0625\"", "null", "\"0.0001\""}));
  // / has scale max(6, s1 + p2 + 1) = 13; -0.00333... rounds HALF_UP at the 13th digit.
  EXPECT_EQ(
      Values("d / 3", "DECIMAL(21, 13)"),
      (Strings{"\"0.5000000000000\"", "\"0.7500000000000\"", "null", "\"-0.0033333333333\""}));
  EXPECT_EQ(Values("d % 1", "DECIMAL(10, 2)"),
            (Strings{"\"0.50\"", "\"0.25\"", "null", "\"-0.01\""}));
  // DECIMAL(20, 10) * DECIMAL(20, 10) is DECIMAL(38, 17) (41 digits: the scale gives way); the
  // exact product, (10^20 - 1)^2 unscaled, passes 128 bits before it is rounded.
  EXPECT_EQ(Values("CAST('9999999999.9999999999' AS DECIMAL(20, 10)) * "
                   "CAST('9999999999.9999999999' AS DECIMAL(20, 10))",
                   "DECIMAL(38, 17)"),
            Four("\"99999999999999999998.00000000000000000\""));
  // DECIMAL(38, 0) / DECIMAL(38, 38) is DECIMAL(38, 6); 1 / 0.5 shifts the dividend by 10^45,
  // past what 128 bits hold.
  EXPECT_EQ(Values("CAST(1 AS DECIMAL(38, 0)) / CAST('0.5' AS DECIMAL(38, 38))", "DECIMAL(38, 6)"),
            Four("\"2.000000\""));
  EXPECT_EQ(Values("-d", "DECIMAL(10, 2)"),
            (Strings{"\"-1.50\"", "\"-2.25\"", "null", "\"0.01\""}));
  EXPECT_EQ(Values("d / (d - d)", "DECIMAL(24, 14)")[0],
            "the query into sink 'dst': (d / (d - d)) cannot be evaluated for the value 1.50 / 0 "
            "(division by zero)");
  // CAST: HALF_UP to a smaller scale, NULL past the precision, integers truncated toward zero.
  EXPECT_EQ(Values("CAST(d AS DECIMAL(10, 1))", "DECIMAL(10, 1)"),
            (Strings{"\"1.5\"", "\"2.3\"", "null", "\"0.0\""}));
  EXPECT_EQ(Values("CAST(b AS DECIMAL(1, 0))", "DECIMAL(1, 0)"), Four("null"));
  EXPECT_EQ(Values("CAST(d AS INT)", "INT"), (Strings{"1", "2", "null", "0"}));
  EXPECT_EQ(Values("CAST(d AS STRING)", "STRING"),
            (Strings{"\"1.50\"", "\"2.25\"", "null", "\"-0.01\""}));
  EXPECT_EQ(
      Values("CAST('1.255' AS DECIMAL(5, 2)) + CAST(' -2 ' AS DECIMAL(3, 0))", "DECIMAL(6, 2)"),
      Four("\"-0.74\""));
  EXPECT_EQ(Values("CAST('1.2.3' AS DECIMAL(5, 2))", "DECIMAL(5, 2)")[0],
            "the query into sink 'dst': CAST('1.2.3' AS DECIMAL(5, 2)) cannot be evaluated for "
            "the value '1.2.3'");
}

// TO_TIMESTAMP(s): TIMESTAMP(3) of 'yyyy-MM-dd HH:mm:ss[.fff]' (or with 'T'), NULL for text that
// is no timestamp, as Flink's.
TEST(CalcProgram, ToTimestampParsesTheDefaultFormatAndIsNullOtherwise) {
  EXPECT_EQ(Values("TO_TIMESTAMP('2026-01-01 10:00:00.123456')", "TIMESTAMP(3)"),
            Four("\"2026-01-01T10:00:00.123\""));
  EXPECT_EQ(Values("TO_TIMESTAMP('yesterday')", "TIMESTAMP(3)"), Four("null"));
  // With a pattern, as Flink's DateTimeUtils.parseTimestampData: java.time's letters, the whole
  // text read, fields left out 1970-01-01 00:00:00, milliseconds kept; else its fallback for
  // "yyyy-M-d[ H:m:s]"; else NULL.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"'2026/03/15 10:20', 'yyyy/MM/dd HH:mm'", "\"2026-03-15T10:20:00\""},
      {"'20260315102030123', 'yyyyMMddHHmmssSSS'", "\"2026-03-15T10:20:30.123\""},
      {"'15.3.26 T 7:05', 'd.M.yy ''T'' H:mm'", "\"2026-03-15T07:05:00\""},
      {"'10:20', 'HH:mm'", "\"1970-01-01T10:20:00\""},
      {"'2026-3-5 1:2:3.5', 'yyyy/MM/dd'", "\"2026-03-05T01:02:03.5\""},  // the fallback
      {"'2026-3-5', 'dd.MM.yyyy'", "\"2026-03-05T00:00:00\""},
      {"'2026/02/30', 'yyyy/MM/dd'", "null"},
      {"'2026/03/15 extra', 'yyyy/MM/dd'", "null"},
      {"'2026/3/15', 'yyyy/MM/dd'", "null"},
  };
  for (const auto& [args, value] : cases) {
    EXPECT_EQ(Values("TO_TIMESTAMP(" + args + ")", "TIMESTAMP(3)"), Four(value)) << args;
  }
  EXPECT_EQ(
      Values("TO_TIMESTAMP('Mon 15', 'EEE dd')", "TIMESTAMP(3)")[0],
      "line 3, column 47: not implemented yet: pattern letter 'E' in TO_TIMESTAMP('Mon 15', "
      "'EEE dd') (TO_TIMESTAMP reads y, M, MM, d, dd, H, HH, m, mm, s, ss, S and quoted text)");
}

// EXTRACT (units as Calcite's: MILLISECOND within the minute, DOW from Sunday, WEEK ISO 8601),
// DATE_FORMAT (Java's SimpleDateFormat letters, as Flink's), CAST to STRING, TRY_CAST (NULL where
// CAST fails).
// 2026-03-15 is a Sunday in ISO week 11.
TEST(CalcProgram, ExtractDateFormatAndTryCast) {
  const std::string t = "CAST('2026-03-15 10:20:30.456' AS TIMESTAMP(3))";
  const std::vector<std::pair<std::string, std::string>> units = {
      {"YEAR", "2026"}, {"QUARTER", "1"}, {"MONTH", "3"},           {"WEEK", "11"},
      {"DAY", "15"},    {"HOUR", "10"},   {"MINUTE", "20"},         {"SECOND", "30"},
      {"DOY", "74"},    {"DOW", "1"},     {"MILLISECOND", "30456"}, {"ISODOW", "7"}};
  for (const auto& [unit, value] : units) {
    EXPECT_EQ(Values("EXTRACT(" + unit + " FROM " + t + ")", "BIGINT"), Four(value)) << unit;
  }
  EXPECT_EQ(Values("EXTRACT(DAY FROM CAST('2024-02-29' AS DATE))", "BIGINT"), Four("29"));
  EXPECT_EQ(Values("DATE_FORMAT(" + t + ", 'yyyy-MM-dd HH:mm:ss.SSS')", "STRING"),
            Four("\"2026-03-15 10:20:30.456\""));
  EXPECT_EQ(Values("DATE_FORMAT(" + t + ", 'EEE, d MMM yy')", "STRING"),
            Four("\"Sun, 15 Mar 26\""));
  EXPECT_EQ(Values("DATE_FORMAT(" + t + ", '''at'' h:mm a, yyyyMMdd')", "STRING"),
            Four("\"at 10:20 AM, 20260315\""));
  // CAST to STRING as Flink's: the precision's fraction digits.
  EXPECT_EQ(Values("CAST(" + t + " AS STRING)", "STRING"), Four("\"2026-03-15 10:20:30.456\""));
  EXPECT_EQ(Values("CAST(CAST('2026-03-15 10:20:30.456' AS TIMESTAMP(0)) AS STRING)", "STRING"),
            Four("\"2026-03-15 10:20:30\""));
  EXPECT_EQ(Values("CAST(CAST('2024-02-29' AS DATE) AS STRING)", "STRING"), Four("\"2024-02-29\""));
  EXPECT_EQ(Values("TRY_CAST(s AS INT)", "INT"), Four("null"));
  EXPECT_EQ(Values("TRY_CAST(CAST(b AS STRING) AS INT)", "INT"),
            (Strings{"10", "null", "30", "40"}));
  EXPECT_EQ(Values("EXTRACT(FORTNIGHT FROM " + t + ")", "BIGINT")[0].rfind(
                "line 3, column 32: expected a unit", 0),
            0u);
}

// REGEXP_EXTRACT (Flink's: the group of the first match, 0 by default; NULL for no match, a group
// out of range or a regex that does not compile), FLOOR / CEIL of numbers and TO a unit,
// TIMESTAMPADD (months clamp the day) and TIMESTAMPDIFF (whole units toward zero; months as
// Calcite's subtractMonths).
TEST(CalcProgram, RegexpExtractFloorCeilAndTimestampArithmetic) {
  EXPECT_EQ(Values("REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)', 2)", "STRING"), Four("\"bar\""));
  EXPECT_EQ(Values("REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)')", "STRING"),
            Four("\"foothebar\""));
  EXPECT_EQ(Values("REGEXP_EXTRACT('order-42-x', '[0-9]+')", "STRING"), Four("\"42\""));
  EXPECT_EQ(Values("REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)', 3)", "STRING"), Four("null"));
  EXPECT_EQ(Values("REGEXP_EXTRACT('abc', 'z+')", "STRING"), Four("null"));
  EXPECT_EQ(Values("REGEXP_EXTRACT('abc', '(')", "STRING"), Four("null"));
  EXPECT_EQ(Values("REGEXP_EXTRACT(s, '(')", "STRING"), Four("null"));

  EXPECT_EQ(Values("FLOOR(CAST(-2.5 AS DOUBLE))", "DOUBLE"), Four("-3"));
  EXPECT_EQ(Values("CEIL(CAST(-2.5 AS DOUBLE))", "DOUBLE"), Four("-2"));
  EXPECT_EQ(Values("FLOOR(b)", "INT"), (Strings{"10", "null", "30", "40"}));
  // DECIMAL(p, s) to DECIMAL(p, 0) (Calcite's ARG0_OR_EXACT_NO_SCALE), toward -inf / +inf.
  EXPECT_EQ(Values("FLOOR(CAST(-2.5 AS DECIMAL(5, 2)))", "DECIMAL(5, 0)"), Four("\"-3\""));
  EXPECT_EQ(Values("CEIL(CAST(-2.5 AS DECIMAL(5, 2)))", "DECIMAL(5, 0)"), Four("\"-2\""));
  EXPECT_EQ(Values("FLOOR(CAST(2.01 AS DECIMAL(5, 2)))", "DECIMAL(5, 0)"), Four("\"2\""));
  EXPECT_EQ(Values("CEIL(CAST(2.01 AS DECIMAL(5, 2)))", "DECIMAL(5, 0)"), Four("\"3\""));
  EXPECT_EQ(Values("CEIL(CAST(7 AS DECIMAL(3, 0)))", "DECIMAL(3, 0)"), Four("\"7\""));
  EXPECT_EQ(Values("POWER(b, 0.5) = SQRT(b) AND ABS(-b) = b AND ABS(-a) = a", "BOOLEAN"),
            (Strings{"true", "null", "null", "true"}));
  EXPECT_EQ(Values("POWER(2, 10)", "DOUBLE"), Four("1024"));
  const std::string t = "CAST('2026-05-17 10:20:30.456' AS TIMESTAMP(3))";
  const std::vector<std::tuple<std::string, std::string, std::string>> rounding = {
      {"SECOND", "2026-05-17T10:20:30", "2026-05-17T10:20:31"},
      {"MINUTE", "2026-05-17T10:20:00", "2026-05-17T10:21:00"},
      {"HOUR", "2026-05-17T10:00:00", "2026-05-17T11:00:00"},
      {"DAY", "2026-05-17T00:00:00", "2026-05-18T00:00:00"},
      {"MONTH", "2026-05-01T00:00:00", "2026-06-01T00:00:00"},
      {"QUARTER", "2026-04-01T00:00:00", "2026-07-01T00:00:00"},
      {"YEAR", "2026-01-01T00:00:00", "2027-01-01T00:00:00"}};
  for (const auto& [unit, floor, ceil] : rounding) {
    EXPECT_EQ(Values("FLOOR(" + t + " TO " + unit + ")", "TIMESTAMP(3)"), Four("\"" + floor + "\""))
        << unit;
    EXPECT_EQ(Values("CEIL(" + t + " TO " + unit + ")", "TIMESTAMP(3)"), Four("\"" + ceil + "\""))
        << unit;
  }
  EXPECT_EQ(Values("CEIL(CAST('2026-05-01' AS DATE) TO MONTH)", "DATE"), Four("\"2026-05-01\""));
  EXPECT_EQ(Values("FLOOR(CAST('1969-12-31 23:59:59' AS TIMESTAMP(0)) TO DAY)", "TIMESTAMP(0)"),
            Four("\"1969-12-31T00:00:00\""));

  EXPECT_EQ(
      Values("TIMESTAMPADD(MONTH, 1, CAST('2020-01-31 10:00:00' AS TIMESTAMP(0)))", "TIMESTAMP(0)"),
      Four("\"2020-02-29T10:00:00\""));
  EXPECT_EQ(Values("TIMESTAMPADD(WEEK, -1, CAST('2020-01-03' AS DATE))", "DATE"),
            Four("\"2019-12-27\""));
  EXPECT_EQ(Values("TIMESTAMPADD(HOUR, b, " + t + ")", "TIMESTAMP(3)")[0],
            "\"2026-05-17T20:20:30.456\"");
  const std::string a = "CAST('2003-01-02 10:00:00' AS TIMESTAMP(0))";
  EXPECT_EQ(
      Values("TIMESTAMPDIFF(DAY, " + a + ", CAST('2003-01-03 10:00:00' AS TIMESTAMP(0)))", "INT"),
      Four("1"));
  EXPECT_EQ(
      Values("TIMESTAMPDIFF(HOUR, CAST('2003-01-03 10:00:00' AS TIMESTAMP(0)), " + a + ")", "INT"),
      Four("-24"));
  // Calcite counts a month from the 31st to a shorter month's last day.
  EXPECT_EQ(
      Values("TIMESTAMPDIFF(MONTH, CAST('2020-01-31' AS DATE), CAST('2020-02-29' AS DATE))", "INT"),
      Four("1"));
  EXPECT_EQ(
      Values("TIMESTAMPDIFF(MONTH, CAST('2020-01-31' AS DATE), CAST('2020-02-28' AS DATE))", "INT"),
      Four("0"));
  EXPECT_EQ(Values("TIMESTAMPDIFF(MONTH, CAST('2020-01-31 10:00:00' AS TIMESTAMP(0)), "
                   "CAST('2020-03-31 09:00:00' AS TIMESTAMP(0)))",
                   "INT"),
            Four("1"));
  EXPECT_EQ(
      Values("TIMESTAMPDIFF(YEAR, CAST('2019-06-01' AS DATE), CAST('2021-05-31' AS DATE))", "INT"),
      Four("1"));
  EXPECT_EQ(Values("TIMESTAMPADD(HOUR, 1, CAST('2020-01-03' AS DATE))", "DATE")[0],
            "line 3, column 24: not implemented yet: TIMESTAMPADD of HOUR to a DATE; CAST the DATE "
            "to TIMESTAMP(0) first");
  // Weeks start on Sunday (Calcite's julianDateFloor, which Flink runs): 2026-05-20 is a
  // Wednesday, 2026-05-17 a Sunday, 1969-12-28 the Sunday before the epoch's Thursday.
  EXPECT_EQ(
      Values("FLOOR(CAST('2026-05-20 10:20:30.456' AS TIMESTAMP(3)) TO WEEK)", "TIMESTAMP(3)"),
      Four("\"2026-05-17T00:00:00\""));
  EXPECT_EQ(Values("CEIL(CAST('2026-05-20 10:20:30.456' AS TIMESTAMP(3)) TO WEEK)", "TIMESTAMP(3)"),
            Four("\"2026-05-24T00:00:00\""));
  EXPECT_EQ(Values("CEIL(CAST('2026-05-17' AS DATE) TO WEEK)", "DATE"), Four("\"2026-05-17\""));
  EXPECT_EQ(Values("FLOOR(CAST('1970-01-01' AS DATE) TO WEEK)", "DATE"), Four("\"1969-12-28\""));
  EXPECT_EQ(Values("FLOOR(" + t + " TO FORTNIGHT)", "TIMESTAMP(3)")[0].rfind(
                "line 3, column 81: expected a unit (SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, "
                "QUARTER or YEAR), found identifier 'FORTNIGHT'",
                0),
            0u);
}

// CURRENT_TIMESTAMP (TIMESTAMP_LTZ), NOW(), LOCALTIMESTAMP (TIMESTAMP) and CURRENT_DATE read the
// wall clock (once per batch, where Flink reads it per record); IFNULL is COALESCE.
TEST(CalcProgram, NowFunctionsReadTheClockAndIfNullIsCoalesce) {
  EXPECT_EQ(Values("CURRENT_TIMESTAMP > CAST('2026-01-01 00:00:00' AS TIMESTAMP_LTZ(3)) AND "
                   "NOW() > CAST('2026-01-01 00:00:00' AS TIMESTAMP_LTZ(3)) AND "
                   "LOCALTIMESTAMP > CAST('2026-01-01 00:00:00' AS TIMESTAMP(3)) AND "
                   "CURRENT_DATE >= CAST('2026-01-01' AS DATE)",
                   "BOOLEAN"),
            Four("true"));
  EXPECT_EQ(Values("IFNULL(b, 0)", "INT"), (Strings{"10", "0", "30", "40"}));
}

// RAND(), RAND_INTEGER(n) and UUID() draw a value per row (so four rows almost surely give four
// values); CURRENT_DATABASE() and CURRENT_CATALOG() are Flink's default names.
TEST(CalcProgram, RandomFunctionsDrawPerRowAndCatalogNamesAreFlinksDefaults) {
  EXPECT_EQ(Values("RAND() >= 0 AND RAND() < 1 AND RAND_INTEGER(3) >= 0 AND RAND_INTEGER(3) < 3",
                   "BOOLEAN"),
            Four("true"));
  const Strings uuids = Values("UUID()", "STRING");
  ASSERT_EQ(uuids.size(), 4u);
  EXPECT_EQ(std::set<std::string>(uuids.begin(), uuids.end()).size(), 4u);
  for (const std::string& u : uuids) {  // "xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx", quoted
    ASSERT_EQ(u.size(), 38u) << u;
    EXPECT_EQ(u[9], '-');
    EXPECT_EQ(u[15], '4') << u;
    EXPECT_NE(std::string("89ab").find(u[20]), std::string::npos) << u;
  }
  const Strings draws = Values("RAND()", "DOUBLE");
  EXPECT_EQ(std::set<std::string>(draws.begin(), draws.end()).size(), 4u);
  EXPECT_EQ(Values("CURRENT_DATABASE() || '.' || CURRENT_CATALOG()", "STRING"),
            Four("\"default_database.default_catalog\""));
  const Strings zero = Values("RAND_INTEGER(0)", "INT");  // no value is below 0: an error
  ASSERT_EQ(zero.size(), 1u);
  EXPECT_NE(zero[0].find("RAND_INTEGER(0)"), std::string::npos) << zero[0];
}

// The session zone ('table.local-time-zone') where TIMESTAMP_LTZ meets a wall clock, as Flink's
// cast rules and functions: the examples of Flink's time zone docs (Asia/Shanghai), each against
// UTC, and the offset FLOOR keeps across a daylight-saving change (America/Los_Angeles).
TEST(CalcProgram, TimestampLtzMeetsTheWallClockInTheSessionZone) {
  auto shanghai = TimeZone::Load("Asia/Shanghai").ValueOrDie();
  const std::string ltz = "TO_TIMESTAMP_LTZ(4001, 3)";
  EXPECT_EQ(Values("CAST(" + ltz + " AS STRING)", "STRING", shanghai),
            Four("\"1970-01-01 08:00:04.001\""));
  EXPECT_EQ(Values("CAST(" + ltz + " AS STRING)", "STRING"), Four("\"1970-01-01 00:00:04.001\""));
  EXPECT_EQ(Values("CAST(CAST(" + ltz + " AS TIMESTAMP(3)) AS STRING)", "STRING", shanghai),
            Four("\"1970-01-01 08:00:04.001\""));
  EXPECT_EQ(Values("CAST(" + ltz + " AS DATE)", "DATE", shanghai), Four("\"1970-01-01\""));
  EXPECT_EQ(Values("CAST(" + ltz + " AS TIME(3))", "TIME(3)", shanghai), Four("\"08:00:04.001\""));
  EXPECT_EQ(Values("EXTRACT(HOUR FROM " + ltz + ")", "BIGINT", shanghai), Four("8"));
  EXPECT_EQ(Values("DATE_FORMAT(" + ltz + ", 'HH:mm:ss')", "STRING", shanghai),
            Four("\"08:00:04\""));
  // TIMESTAMP, DATE and STRING (without an offset) to TIMESTAMP_LTZ: the zone's wall clock.
  const std::string instants =
      "CAST(TIMESTAMP '1970-01-01 08:00:04.001' AS TIMESTAMP_LTZ(3)) = " + ltz +
      " AND CAST('1970-01-01 08:00:04.001' AS TIMESTAMP_LTZ(3)) = " + ltz +
      " AND CAST('1970-01-01 00:00:04.001Z' AS TIMESTAMP_LTZ(3)) = " + ltz +
      " AND CAST(CAST('1970-01-02' AS DATE) AS TIMESTAMP_LTZ(3)) = TO_TIMESTAMP_LTZ(57600, 0)"
      " AND CAST(TIME '08:00:04' AS TIMESTAMP_LTZ(0)) = TO_TIMESTAMP_LTZ(4, 0)"
      " AND FLOOR(" +
      ltz +
      " TO DAY) = TO_TIMESTAMP_LTZ(-28800, 0)"
      " AND " +
      ltz + " > '1970-01-01 08:00:04' AND " + ltz + " < '1970-01-01 08:00:05'";
  EXPECT_EQ(Values(instants, "BOOLEAN", shanghai), Four("true"));
  EXPECT_EQ(Values(ltz + " > '1970-01-01 08:00:04'", "BOOLEAN"), Four("false"));
  // LOCALTIMESTAMP is the zone's wall clock now.
  const std::vector<std::string> local =
      Values("CAST(LOCALTIMESTAMP AS STRING)", "STRING", shanghai);
  int64_t micros = 0;
  ASSERT_EQ(ParseTimestamp(local[0].substr(1, local[0].size() - 2), false, &micros), nullptr);
  const int64_t now = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  EXPECT_LT(std::abs(micros - (now + 8 * kMicrosPerHour)), 60 * kMicrosPerSecond) << local[0];
  // 2021-03-14 03:00 PDT: floored to the day on its own offset (-7 h), as Flink's timestampFloor,
  // so 23:00 PST the day before, not midnight.
  auto la = TimeZone::Load("America/Los_Angeles").ValueOrDie();
  EXPECT_EQ(Values("FLOOR(TO_TIMESTAMP_LTZ(1615716000000, 3) TO DAY) = "
                   "TO_TIMESTAMP_LTZ(1615705200000, 3)",
                   "BOOLEAN", la),
            Four("true"));
}

// TIME(p): microseconds since midnight, as Flink's casts, literals, comparisons and EXTRACT; a
// TIME(0) cast keeps whole seconds; CURRENT_TIME / LOCALTIME are the clock's time of day.
TEST(CalcProgram, TimeValuesCastCompareAndExtractAsFlinks) {
  EXPECT_EQ(Values("CAST(TIME '10:20:30.456' AS STRING)", "STRING"), Four("\"10:20:30.456\""));
  EXPECT_EQ(Values("CAST(CAST('10:20:30.456' AS TIME) AS STRING)", "STRING"), Four("\"10:20:30\""));
  EXPECT_EQ(Values("CAST('10:20:30.456' AS TIME(3))", "TIME(3)"), Four("\"10:20:30.456\""));
  EXPECT_EQ(Values("CAST(CAST('2026-03-15 10:20:30.456' AS TIMESTAMP(3)) AS TIME(3))", "TIME(3)"),
            Four("\"10:20:30.456\""));
  EXPECT_EQ(Values("CAST(CAST(TIME '10:20:30' AS TIMESTAMP(0)) AS STRING)", "STRING"),
            Four("\"1970-01-01 10:20:30\""));
  EXPECT_EQ(Values("EXTRACT(HOUR FROM TIME '10:20:30') * 10000 + EXTRACT(MINUTE FROM TIME "
                   "'10:20:30') * 100 + EXTRACT(SECOND FROM TIME '10:20:30')",
                   "BIGINT"),
            Four("102030"));
  EXPECT_EQ(Values("TIME '10:20:30' > '09:00:00' AND TIME '10:20:30' < TIME '10:20:31'", "BOOLEAN"),
            Four("true"));
  EXPECT_EQ(Values("TRY_CAST('25:00:00' AS TIME)", "TIME"), Four("null"));
  EXPECT_EQ(Values("CAST(b AS BOOLEAN)", "BOOLEAN"), (Strings{"true", "null", "true", "true"}));
  EXPECT_EQ(Values("CAST(0 AS BOOLEAN)", "BOOLEAN"), Four("false"));
  EXPECT_EQ(Values("CHAR_LENGTH(CAST(CURRENT_TIME AS STRING)) + CHAR_LENGTH(CAST(LOCALTIME AS "
                   "STRING))",
                   "INT"),
            Four("16"));
}

// JSON_VALUE(json, path): the scalar at the path as text, NULL for anything else (Flink's NULL ON
// EMPTY and NULL ON ERROR), for `$`, `.name`, `['name']` and `[index]` steps.
TEST(CalcProgram, JsonValueReadsTheScalarAtThePath) {
  const std::string doc = R"('{"a": {"b": [1, "x", true, null, {}], "c d": 2.50}}')";
  const std::vector<std::pair<std::string, std::string>> cases = {{"$.a.b[0]", "\"1\""},
                                                                  {"$.a.b[1]", "\"x\""},
                                                                  {"$.a.b[2]", "\"true\""},
                                                                  {"$.a.b[3]", "null"},
                                                                  {"$.a.b[4]", "null"},
                                                                  {"$.a", "null"},
                                                                  {"$[''a''][''c d'']", "\"2.50\""},
                                                                  {"$.z", "null"},
                                                                  {"$..b", "null"}};
  for (const auto& [path, value] : cases) {
    EXPECT_EQ(Values("JSON_VALUE(" + doc + ", '" + path + "')", "STRING"), Four(value)) << path;
  }
  EXPECT_EQ(Values("JSON_VALUE('{not json', '$.a')", "STRING"), Four("null"));
}

// COALESCE: the first argument that is not NULL, in the widest numeric type; lazy, as Flink's,
// so an argument that would fail is not evaluated where an earlier one has a value.
TEST(CalcProgram, CoalesceIsLazyAndWidens) {
  // a BIGINT: 1, 2, NULL, 4; b INT: 10, NULL, 30, 40.
  EXPECT_EQ(Values("COALESCE(b, a, 0)", "BIGINT"),
            (std::vector<std::string>{"10", "2", "30", "40"}));
  // 1 / (b - b) divides by zero wherever b has a value, but COALESCE stops at b there.
  EXPECT_EQ(Values("COALESCE(b, 1 / (b - b))", "INT"),
            (std::vector<std::string>{"10", "null", "30", "40"}));
  EXPECT_EQ(Values("COALESCE(s, 1)", "STRING")[0],
            "line 3, column 24: COALESCE takes arguments of one type, or numbers, got (STRING, "
            "INT)");
}

// CASE, IF and NULLIF as Flink runs them (ScalarOperatorsTest, IfCallGen): the first WHEN that
// is TRUE picks its result (a NULL condition is not TRUE), no ELSE means NULL, the type is the
// results' common type, and a result is evaluated only for the rows that take it. Rows: a 1, 2,
// NULL, 4; b 10, NULL, 30, 40; s 'x', 'y', NULL, 'x'; d 1.50, 2.25, NULL, -0.01; flag TRUE,
// FALSE, NULL, TRUE.
TEST(CalcProgram, CaseIfAndNullifPickLazilyInTheResultsCommonType) {
  EXPECT_EQ(Values("CASE WHEN b > 20 THEN 'big' WHEN b > 5 THEN 'mid' ELSE 'none' END", "STRING"),
            (Strings{"\"mid\"", "\"none\"", "\"big\"", "\"big\""}));
  EXPECT_EQ(Values("CASE a WHEN 1 THEN 'one' WHEN 2 THEN 'two' END", "STRING"),
            (Strings{"\"one\"", "\"two\"", "null", "null"}));
  // Flink's ScalarOperatorsTest: 'a', not padded to the longer literal's length.
  EXPECT_EQ(Values("CASE 1 WHEN 1 THEN 'a' WHEN 2 THEN 'bcd' END", "STRING"), Four("\"a\""));
  // INT with DECIMAL(10, 2) is DECIMAL(12, 2), as LogicalTypeMerging makes it.
  EXPECT_EQ(Values("CASE WHEN flag THEN b ELSE d END", "DECIMAL(12, 2)"),
            (Strings{"\"10.00\"", "\"2.25\"", "null", "\"40.00\""}));
  EXPECT_EQ(Values("CASE WHEN flag THEN b ELSE d END", "DECIMAL(11, 2)")[0],
            "line 3, column 24: query column 1 'CASE WHEN flag THEN b ELSE d END' has type "
            "DECIMAL(12, 2) but column 'x' of sink 'dst' is DECIMAL(11, 2)");
  EXPECT_EQ(Values("CASE WHEN flag THEN b ELSE a END", "BIGINT"),
            (Strings{"10", "2", "null", "40"}));
  // 1 / (b - b) divides by zero wherever b has a value: only rows with a NULL b take it.
  EXPECT_EQ(Values("CASE WHEN b IS NULL THEN 1 / (b - b) ELSE b END", "INT"),
            (Strings{"10", "null", "30", "40"}));
  EXPECT_EQ(Values("IF(flag, 'y', 'n')", "STRING"), (Strings{"\"y\"", "\"n\"", "\"n\"", "\"y\""}));
  EXPECT_EQ(Values("IF(b = 10, NULL, 100 / (b - 10))", "INT"), (Strings{"null", "null", "5", "3"}));
  EXPECT_EQ(Values("NULLIF(s, 'x')", "STRING"), (Strings{"null", "\"y\"", "null", "null"}));
  EXPECT_EQ(Values("CASE WHEN b THEN 1 END", "INT")[0],
            "line 3, column 34: CASE WHEN needs a BOOLEAN condition, but b is INT");
  EXPECT_EQ(Values("CASE WHEN flag THEN s ELSE b END", "STRING")[0],
            "line 3, column 24: CASE's results: STRING, INT have no common type (values of one "
            "type, or numbers)");
  EXPECT_EQ(Values("CASE WHEN flag THEN NULL END", "INT")[0],
            "line 3, column 24: CASE needs a result that is not NULL (ELSE or a THEN)");
}

// IS [NOT] TRUE / FALSE / UNKNOWN are never UNKNOWN themselves; AND and OR evaluate an operand
// only where the earlier ones left the answer open, as Flink's generated code does, so a guard
// keeps a division by zero from failing the batch.
TEST(CalcProgram, TruthTestsAndLazyAndOr) {
  EXPECT_EQ(Values("flag IS TRUE", "BOOLEAN"), (Strings{"true", "false", "false", "true"}));
  EXPECT_EQ(Values("flag IS NOT FALSE", "BOOLEAN"), (Strings{"true", "false", "true", "true"}));
  EXPECT_EQ(Values("flag IS UNKNOWN", "BOOLEAN"), (Strings{"false", "false", "true", "false"}));
  EXPECT_EQ(Kept("b > 10 AND 100 / (b - 10) > 2"), (Rows{2, 3}));
  EXPECT_EQ(Kept("b = 10 OR 100 / (b - 10) > 4"), (Rows{0, 2}));
  EXPECT_EQ(Values("b <> 10 AND 100 / (b - 10) > 4", "BOOLEAN"),
            (Strings{"false", "null", "true", "false"}));
}

// A string literal compared with a number, a BOOLEAN, a DATE or a TIMESTAMP is a value of that
// type, as Flink's planner casts it (integers as BIGINT); one that is none is refused where it
// stands. A column of strings is not cast (Flink would cast it row by row).
TEST(CalcProgram, StringLiteralsCompareAsTheOtherOperandsType) {
  EXPECT_EQ(Kept("b = '10'"), (Rows{0}));
  EXPECT_EQ(Kept("flag = 'TRUE'"), (Rows{0, 3}));
  EXPECT_EQ(Kept("f > '1'"), (Rows{0, 2}));
  EXPECT_EQ(Values("CAST('2026-01-01 10:00:00' AS TIMESTAMP(3)) > '2026-01-01 09:59:59.999' AND "
                   "CAST('2026-01-02' AS DATE) = '2026-01-02'",
                   "BOOLEAN"),
            Four("true"));
  Result<std::shared_ptr<const CalcProgram>> p = Compile("b = 'ten'");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "line 3, column 45: 'ten' is not a BIGINT, so it cannot be compared with one");
  p = Compile("s = b");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(), "line 3, column 43: cannot compare STRING with INT in (s = b)");
}

TEST(CalcProgram, SelectStarIntoTheSameColumnsIsTheIdentity) {
  Result<std::shared_ptr<const CalcProgram>> p = Compile("");
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE((*p)->is_identity());
  RecordBatch in = Input();
  Result<RecordBatch> out = (*p)->Apply(in);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->Equals(in));
}

TEST(CalcProgram, RefusesATypeMismatchNamingBothColumnsAndTypes) {
  Result<std::shared_ptr<const CalcProgram>> p = Compile("", "a, s", "x BIGINT, y BIGINT");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "line 3, column 27: query column 2 's' has type STRING but column 'y' of sink "
            "'dst' is BIGINT");
  p = Compile("", "a, 3000000000", "x BIGINT, y INT");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("does not convert"), std::string::npos);
  p = Compile("", "b, a", "x INT, y INT");  // BIGINT does not narrow to INT
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("'a' has type BIGINT but column 'y'"), std::string::npos)
      << p.status().message();
}

TEST(CalcProgram, ANullIntoANotNullSinkColumnFailsTheBatch) {
  Result<std::shared_ptr<const CalcProgram>> p = Compile("", "a", "x BIGINT NOT NULL");
  ASSERT_TRUE(p.ok());
  Result<RecordBatch> out = (*p)->Apply(Input());
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("column 'x' of sink 'dst' is NOT NULL"), std::string::npos);
  p = Compile("a IS NOT NULL", "a", "x BIGINT NOT NULL");
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE((*p)->Apply(Input()).ok());
}

TEST(CalcOperator, EmitsOnlyBatchesWithRowsLeft) {
  CalcOperator op(Compile("a > 100").ValueOrDie());
  connectors::testing::CollectingCollector out;
  ASSERT_TRUE(op.ProcessBatch(Input(), 0, out).ok());
  EXPECT_TRUE(out.batches.empty());
  CalcOperator keep(Compile("a > 1", "a, s", "x BIGINT, y STRING").ValueOrDie());
  ASSERT_TRUE(keep.ProcessBatch(Input(), 0, out).ok());
  ASSERT_EQ(out.batches.size(), 1u);
  EXPECT_EQ(connectors::testing::Int64Column(out.batches, 0), (std::vector<int64_t>{2, 4}));
}

// A scaled-out job's input carries the source split after the declared columns: it travels
// through like the row kind, for the rows kept.
TEST(CalcProgram, PassesTheSourceSplitColumnThroughForTheRowsKept) {
  connectors::TableDescriptor src = connectors::testing::Table("src", "id BIGINT, name STRING", {});
  connectors::TableDescriptor dst = connectors::testing::Table("dst", "name STRING", {});
  Result<Script> script = ParseScript(
      "CREATE TABLE src (id BIGINT, name STRING);\nCREATE TABLE dst (name STRING);\n"
      "INSERT INTO dst SELECT name FROM src WHERE id > 1;");
  ASSERT_TRUE(script.ok()) << script.status().ToString();
  CalcSpec spec;
  auto input = std::make_shared<BatchSchema>(*src.schema);
  input->fields.push_back(Field{runtime::kSourceSplitColumn, DataType::String(), false, 0});
  spec.input = input;
  spec.output = dst.schema;
  spec.where = script->inserts[0].where;
  spec.select = script->inserts[0].select;
  spec.sink_name = "dst";
  auto program = CalcProgram::Compile(spec);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  ASSERT_EQ((*program)->output_schema()->fields.size(), 2u);
  EXPECT_EQ((*program)->output_schema()->fields.back().name, runtime::kSourceSplitColumn);
  RecordBatch in(spec.input);
  for (int64_t id : {1, 2, 3}) {
    in.mutable_column(0).Append<int64_t>(id);
    in.mutable_column(1).AppendBytes("n" + std::to_string(id));
    in.mutable_column(2).AppendBytes("t/" + std::to_string(id) + "/7");
  }
  auto out = (*program)->Apply(in);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->num_rows(), 2u);
  EXPECT_EQ(out->column(0).GetBytes(0), "n2");
  EXPECT_EQ(out->column(1).GetBytes(0), "t/2/7");
  EXPECT_EQ(out->column(1).GetBytes(1), "t/3/7");
}

// A changelog input (the reserved row-kind column last): WHERE filters rows of any kind, SELECT
// sees only the declared columns, and the kinds of the rows kept come out last, untouched.
TEST(CalcProgram, PassesTheRowKindColumnThroughForTheRowsKept) {
  connectors::TableDescriptor src = connectors::testing::Table("src", "id BIGINT, name STRING", {});
  connectors::TableDescriptor dst = connectors::testing::Table("dst", "name STRING", {});
  Result<Script> script = ParseScript(
      "CREATE TABLE src (id BIGINT, name STRING);\nCREATE TABLE dst (name STRING);\n"
      "INSERT INTO dst SELECT name FROM src WHERE id > 1;");
  ASSERT_TRUE(script.ok()) << script.status().ToString();
  CalcSpec spec;
  spec.input = runtime::WithRowKindColumn(*src.schema);
  spec.output = dst.schema;
  spec.where = script->inserts[0].where;
  spec.select = script->inserts[0].select;
  spec.sink_name = "dst";
  auto program = CalcProgram::Compile(spec);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ((*program)->output_schema()->fields.size(), 2u);
  EXPECT_EQ((*program)->output_schema()->fields.back().name, runtime::kRowKindColumn);
  RecordBatch in(spec.input);
  const std::vector<std::tuple<int64_t, const char*, const char*>> rows = {
      {1, "a", "+I"}, {2, "b", "-U"}, {2, "c", "+U"}, {1, "a", "-D"}, {3, "d", "+I"}};
  for (const auto& [id, name, kind] : rows) {
    in.mutable_column(0).Append<int64_t>(id);
    in.mutable_column(1).AppendBytes(name);
    in.mutable_column(2).AppendBytes(kind);
  }
  auto out = (*program)->Apply(in);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->num_rows(), 3u);
  std::vector<std::string> got;
  for (size_t r = 0; r < out->num_rows(); ++r) {
    got.push_back(std::string(out->column(1).GetBytes(r)) +
                  std::string(out->column(0).GetBytes(r)));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"-Ub", "+Uc", "+Id"}));
  // SELECT * expands to the declared columns only.
  spec.where.reset();
  spec.select.clear();
  spec.output = src.schema;
  auto star = CalcProgram::Compile(spec);
  ASSERT_TRUE(star.ok()) << star.status().ToString();
  auto all = (*star)->Apply(in);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->num_columns(), 3u);
  EXPECT_EQ(std::string(all->column(2).GetBytes(3)), "-D");
}

}  // namespace
}  // namespace floe::sql

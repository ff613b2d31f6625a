#pragma once

#include <string_view>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/sql/ast.h"

// Flink's result types of scalar operators, shared by the parser (computed columns' types) and
// the evaluator (sql/exec/scalar_expr.h).
namespace floe::sql {

// INT, BIGINT, FLOAT, DOUBLE or DECIMAL.
bool IsNumericType(TypeId id);

// The type of `l op r` as Calcite and Flink type it: for INT, BIGINT, FLOAT and DOUBLE `+ - * /`
// have the wider operand's (DOUBLE if either is DOUBLE, else FLOAT if either is FLOAT, else
// BIGINT if either is BIGINT, else INT: INT / INT is INT, truncated); `%` and MOD of integers
// have the divisor's type. DECIMAL with FLOAT or DOUBLE is DOUBLE. DECIMAL with DECIMAL or an
// integer (INT as DECIMAL(10, 0), BIGINT as DECIMAL(19, 0)) follows Flink's LogicalTypeMerging:
// `+ -` scale max(s1, s2), precision max(p1 - s1, p2 - s2) + scale + 1; `*` DECIMAL(p1 + p2 + 1,
// s1 + s2); `/` scale max(6, s1 + p2 + 1), precision p1 - s1 + s2 + scale; `%` scale max(s1,
// s2), precision min(p1 - s1, p2 - s2) + scale; past 38 digits the precision is 38 and the
// scale gives way to the integer digits, down to min(scale, 6). Anything else is
// InvalidArgument naming the operator and both types.
Result<DataType> ArithmeticType(ArithOp op, const DataType& l, const DataType& r);

// A decimal literal as written ("1.50", "-.5", "007"): its unscaled value and Flink's type for
// it (1.50 is DECIMAL(3, 2), 0.5 DECIMAL(1, 1)); InvalidArgument past 38 digits.
Result<DataType> DecimalLiteralType(std::string_view text, Int128* unscaled);

// The result type of scalar function `name` (upper case) given its arguments' types, for the
// functions floe evaluates (sql/exec/scalar_expr.h): UPPER, LOWER, TRIM, LTRIM, RTRIM (one or
// two STRINGs), CHAR_LENGTH / CHARACTER_LENGTH (INT), SUBSTRING (STRING, INT [, INT]), CONCAT
// (STRINGs), CONCAT_WS (a separator and STRINGs), LEFT / RIGHT (STRING, INT), POSITION /
// LOCATE (two STRINGs [, INT]: INT), REPLACE (three STRINGs), LIKE (two STRINGs: BOOLEAN),
// TO_TIMESTAMP (one STRING: TIMESTAMP(3)), EXTRACT (a unit STRING and a DATE or TIMESTAMP:
// BIGINT), DATE_FORMAT (a DATE or TIMESTAMP and a STRING pattern: STRING), CURRENT_TIMESTAMP
// (TIMESTAMP_LTZ), LOCALTIMESTAMP (TIMESTAMP), CURRENT_DATE (DATE), JSON_VALUE (two STRINGs:
// STRING) and COALESCE (one type, or numbers: the widest).
// NotFound for any other name; InvalidArgument naming the function for wrong arguments.
Result<DataType> ScalarFunctionType(std::string_view name, const std::vector<DataType>& args);

// The type values of `types` all convert to, for COALESCE's arguments and CASE's results, as
// Flink's LogicalTypeMerging finds it: one type as it is; numbers: DOUBLE when a FLOAT or DOUBLE
// meets a DECIMAL, else the widest of INT < BIGINT < FLOAT < DOUBLE, and a DECIMAL with room
// for every operand's digits on both sides of the point (INT needs 10, BIGINT 19), at most 38.
// InvalidArgument for anything else.
Result<DataType> CommonType(const std::vector<DataType>& types);

// Whether EXTRACT takes `unit` (upper case): YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE,
// SECOND, MILLISECOND, MICROSECOND, DOY, DOW, ISODOW (sql/exec/time_functions.h).
bool IsExtractUnit(std::string_view unit);
// The units of FLOOR / CEIL (t TO unit), TIMESTAMPADD and TIMESTAMPDIFF: SECOND, MINUTE, HOUR,
// DAY, WEEK, MONTH, QUARTER, YEAR.
bool IsTimeUnit(std::string_view unit);

// Whether `name` (upper case) is a scalar function the evaluator runs (ScalarFunctionType's, MOD,
// TO_TIMESTAMP_LTZ).
bool IsScalarFunction(std::string_view name);

// A DECIMAL value (unscaled digits and scale) as the nearest DOUBLE.
double DecimalToDouble(Int128 unscaled, int scale);

// Row `row` of a numeric column (INT, BIGINT, FLOAT, DOUBLE, DECIMAL) as the nearest DOUBLE.
double NumberAsDouble(const Column& column, size_t row);

// The type of -x: x's, for INT, BIGINT, FLOAT, DOUBLE and DECIMAL.
Result<DataType> NegationType(const DataType& operand);

}  // namespace floe::sql

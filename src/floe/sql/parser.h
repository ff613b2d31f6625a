#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/sql/ast.h"

// Entry points of the SQL front end. All functions are pure (no I/O, no globals) and safe to
// call from any thread. Every error is Status::InvalidArgument whose first line reads
// "line L, column C: <what was expected>, found <token>" (or "line L, column C: <problem>"),
// followed by the offending source line and a caret under column C. Positions always refer to
// the caller's text as written, before variable substitution.
namespace floe::sql {

using Variables = std::map<std::string, std::string>;

// Parses a script of statements separated by ';' (see README.md): SET, CREATE TABLE,
// INSERT INTO ... SELECT. `${NAME}` is first replaced by variables.at(NAME) anywhere in the
// text; an undefined or malformed reference is an error. Also checks names: duplicate tables,
// columns, options, primary-key/partition/watermark/select/where columns that the table lacks,
// INSERT tables not created earlier, and that the select list matches the sink's column count.
Result<Script> ParseScript(std::string_view text, const Variables& variables = {});

// Replaces every ${NAME} (NAME = [A-Za-z_][A-Za-z0-9_]*) with its value, verbatim and in one
// pass (values are not expanded again). There is no escape: "${" always starts a reference.
Result<std::string> SubstituteVariables(std::string_view text, const Variables& variables);

// Parses one Flink SQL type name, case-insensitive: BOOLEAN, INT | INTEGER, BIGINT, FLOAT,
// DOUBLE [PRECISION], STRING, VARCHAR[(n)], CHAR[(n)], BYTES, VARBINARY[(n)], BINARY[(n)], DATE,
// TIMESTAMP[(p)] [WITHOUT TIME ZONE | WITH LOCAL TIME ZONE], TIMESTAMP_LTZ[(p)],
// DECIMAL | DEC | NUMERIC [(p[, s])]. Lengths and timestamp precisions (0..6) are checked and
// dropped: floe strings are unbounded and timestamps are microseconds. TINYINT, SMALLINT, TIME,
// ARRAY, MAP, ROW, MULTISET are rejected as not supported yet. This is floe's one Flink type
// parser: CREATE TABLE and ParseColumnList (`floe table create --schema`) use it too.
Result<DataType> ParseDataType(std::string_view text);

// Parses a bare column list, as `floe table create --schema` takes it:
// "id BIGINT NOT NULL, name STRING, price DECIMAL(10, 2)". Each column follows CREATE TABLE's
// rules: a name (reserved words need backquotes), a type as ParseDataType reads it, then
// NOT NULL or NULL (the default). No PRIMARY KEY, WATERMARK or ${VAR}; duplicate names are an
// error. Errors in a type name the column ("line 1, column 22: column 'price': DECIMAL precision
// must be 1..38, got 50").
Result<std::vector<ColumnDef>> ParseColumnList(std::string_view text);

}  // namespace floe::sql

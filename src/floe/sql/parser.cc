#include "floe/sql/parser.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <deque>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "floe/common/civil_time.h"
#include "floe/sql/aggregate_plan.h"
#include "floe/sql/lexer_internal.h"
#include "floe/sql/scalar_types.h"

namespace floe::sql {
namespace {

using internal::EqualsIgnoreCase;
using internal::IsReservedWord;
using internal::SourceText;
using internal::Token;
using internal::TokenKind;

constexpr int kMaxNesting = 200;  // parentheses and NOTs; bounds the parser's recursion

constexpr const char* kSupportedTypes =
    "BOOLEAN, INT, INTEGER, BIGINT, FLOAT, DOUBLE, STRING, VARCHAR(n), CHAR(n), BYTES, "
    "VARBINARY(n), BINARY(n), DATE, TIME(p), TIMESTAMP(p), TIMESTAMP(p) WITH LOCAL TIME ZONE, "
    "TIMESTAMP_LTZ(p), DECIMAL(p, s)";

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string Quote(std::string_view s, char q) {
  std::string out(1, q);
  for (char c : s) {
    out += c;
    if (c == q) out += q;
  }
  out += q;
  return out;
}

// How a name appears in messages: 'name'.
std::string Name(std::string_view s) { return Quote(s, '\''); }

std::string Describe(const Token& t) {
  switch (t.kind) {
    case TokenKind::kWord:
      if (IsReservedWord(t.text)) return "keyword " + Upper(t.text);
      return "identifier " + Name(t.text);
    case TokenKind::kQuotedWord:
      return "identifier " + Quote(t.text, '`');
    case TokenKind::kString: {
      constexpr size_t kMaxShown = 40;
      if (t.text.size() <= kMaxShown) return "string " + Quote(t.text, '\'');
      return "string " + Quote(t.text.substr(0, kMaxShown), '\'') + "...";
    }
    case TokenKind::kNumber:
      return "number " + t.text;
    case TokenKind::kEnd:
      return "end of input";
    default:
      return "'" + t.text + "'";
  }
}

std::string JoinNames(const std::vector<ColumnDef>& columns) {
  std::string out;
  for (const ColumnDef& c : columns) {
    if (!out.empty()) out += ", ";
    out += c.name;
  }
  return out;
}

bool ParseInt64(std::string_view text, int64_t* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

// Flink SQL that floe does not run yet, by the word that starts it where a clause, an operator
// or an alias could follow: the message names the construct instead of a bare syntax error.
std::string_view UnsupportedClause(std::string_view word) {
  static constexpr std::pair<std::string_view, std::string_view> kClauses[] = {
      {"ORDER", "ORDER BY"},
      {"LIMIT", "LIMIT"},
      {"OFFSET", "OFFSET"},
      {"FETCH", "FETCH"},
      {"JOIN", "JOIN"},
      {"INNER", "JOIN"},
      {"LEFT", "JOIN"},
      {"RIGHT", "JOIN"},
      {"FULL", "JOIN"},
      {"CROSS", "JOIN"},
      {"NATURAL", "JOIN"},
      {"UNION", "UNION"},
      {"INTERSECT", "INTERSECT"},
      {"EXCEPT", "EXCEPT"},
      {"MINUS", "MINUS"},
      {"GROUPING", "GROUPING SETS"},
      {"CUBE", "CUBE"},
      {"ROLLUP", "ROLLUP"},
      {"OVER",
       "OVER (aggregations over a window of rows; ROW_NUMBER() OVER is supported in a subquery or "
       "view)"},
      {"FILTER", "FILTER (WHERE ...) other than after COUNT, SUM, MIN, MAX or AVG"},
      {"WITHIN", "WITHIN GROUP"},
      {"SIMILAR", "SIMILAR TO"},
      {"FOR", "FOR SYSTEM_TIME AS OF (temporal joins)"},
      {"MATCH_RECOGNIZE", "MATCH_RECOGNIZE"},
      {"LATERAL", "LATERAL"},
      {"UNNEST", "UNNEST"},
      {"DISTINCT", "DISTINCT"},
      {"VALUES", "INSERT ... VALUES"},
      {"OVERWRITE", "INSERT OVERWRITE"},
  };
  for (const auto& [w, construct] : kClauses) {
    if (EqualsIgnoreCase(w, word)) return construct;
  }
  return {};
}

// Statements of Flink's SQL client floe does not run, by their first word.
std::string_view UnsupportedStatement(std::string_view word) {
  static constexpr std::string_view kStatements[] = {
      "ALTER", "ANALYZE", "CALL",     "DELETE", "DESC",   "DESCRIBE", "DROP", "EXPLAIN", "LOAD",
      "RESET", "SHOW",    "TRUNCATE", "UNLOAD", "UPDATE", "USE",      "ADD",  "REMOVE",
  };
  for (std::string_view w : kStatements) {
    if (EqualsIgnoreCase(w, word)) return w;
  }
  return {};
}

// A name with the position of the token that spelled it, for checks made after parsing a list.
struct NameRef {
  std::string name;
  size_t offset;
};

// A view (CREATE VIEW, or a subquery in FROM): its query, over a table, and the columns it
// shows, written into every query that reads it.
struct View {
  std::string name;           // as queries name it ("$subquery<n>" for a subquery)
  Insert query;               // over a table (a view it read is already written in)
  CreateTable shape;          // its columns' names (and a plain column's type), for checks
  std::vector<Expr> columns;  // what each of shape.columns is, over query.source
  // An aggregation, a ranked query or a UNION ALL: planned as a source of its own
  // (PlanViewSource), not written into the query that reads it.
  bool aggregates = false;
};

// Recursive-descent parser over a token vector. One instance parses one text; not reusable.
class Parser {
 public:
  Parser(const SourceText& source, std::vector<Token> tokens)
      : source_(source), tokens_(std::move(tokens)) {}

  Result<Script> ParseScript() {
    while (true) {
      while (Accept(TokenKind::kSemicolon)) {
      }
      if (Peek().kind == TokenKind::kEnd) break;
      if (AtKeyword("SET")) {
        FLOE_ASSIGN_OR_RAISE(SetStatement set, ParseSet());
        script_.sets.push_back(std::move(set));
      } else if (AtKeyword("CREATE") &&
                 (AtKeyword("VIEW", 1) || (AtKeyword("TEMPORARY", 1) && AtKeyword("VIEW", 2)))) {
        FLOE_RETURN_NOT_OK(ParseCreateView());
      } else if (AtKeyword("CREATE")) {
        FLOE_ASSIGN_OR_RAISE(CreateTable table, ParseCreateTable());
        script_.tables.push_back(std::move(table));
      } else if (AtKeyword("INSERT")) {
        FLOE_ASSIGN_OR_RAISE(Insert insert, ParseInsert());
        script_.inserts.push_back(std::move(insert));
      } else if (AtKeyword("EXECUTE") || AtKeyword("BEGIN")) {
        FLOE_RETURN_NOT_OK(ParseExecuteOrStatementSet());
      } else {
        return UnexpectedStatement();
      }
    }
    return std::move(script_);
  }

  // Flink's `EXECUTE INSERT INTO ...`, `EXECUTE STATEMENT SET BEGIN INSERT ...; ... END;` and
  // the SQL client's `BEGIN STATEMENT SET; INSERT ...; ... END;`. Every INSERT of a file runs
  // in one job anyway, as a statement set's do, so these only wrap INSERTs.
  Status ParseExecuteOrStatementSet() {
    const size_t start = Peek().offset;
    if (AcceptKeyword("EXECUTE")) {
      if (AtKeyword("INSERT")) {
        FLOE_ASSIGN_OR_RAISE(Insert insert, ParseInsert());
        script_.inserts.push_back(std::move(insert));
        return Status::OK();
      }
      FLOE_RETURN_NOT_OK(ExpectKeyword("STATEMENT"));
      FLOE_RETURN_NOT_OK(ExpectKeyword("SET"));
      FLOE_RETURN_NOT_OK(ExpectKeyword("BEGIN"));
    } else {
      Advance();  // BEGIN
      FLOE_RETURN_NOT_OK(ExpectKeyword("STATEMENT"));
      FLOE_RETURN_NOT_OK(ExpectKeyword("SET"));
      FLOE_RETURN_NOT_OK(Expect(TokenKind::kSemicolon, "';'"));
    }
    while (true) {
      while (Accept(TokenKind::kSemicolon)) {
      }
      if (AcceptKeyword("END")) return ExpectStatementEnd("';'");
      if (Peek().kind == TokenKind::kEnd) {
        return ErrorAt(start, "the statement set that starts here has no END");
      }
      if (!AtKeyword("INSERT")) {
        return Unexpected("INSERT INTO or END (a statement set holds INSERTs only)");
      }
      FLOE_ASSIGN_OR_RAISE(Insert insert, ParseInsert());
      script_.inserts.push_back(std::move(insert));
    }
  }

  // A statement floe does not run: named when it is Flink's.
  Status UnexpectedStatement() const {
    const Token& t = Peek();
    const size_t at = t.offset;
    constexpr std::string_view kRuns = "; a job file holds SET, CREATE TABLE and INSERT INTO";
    if (t.kind == TokenKind::kWord) {
      if (EqualsIgnoreCase(t.text, "SELECT")) {
        return ErrorAt(at,
                       "a query on its own (SELECT ...) is not supported: floe runs INSERT "
                       "INTO ... SELECT; to see rows, insert them into a table with "
                       "'connector' = 'print'");
      }
      if (EqualsIgnoreCase(t.text, "WITH")) {
        return ErrorAt(at,
                       "WITH (common table expressions) is not supported yet" + std::string(kRuns));
      }
      const std::string_view statement = UnsupportedStatement(t.text);
      if (!statement.empty()) {
        return ErrorAt(
            at, std::string(statement) + " statements are not supported yet" + std::string(kRuns));
      }
    }
    return Unexpected("SET, CREATE TABLE or INSERT INTO");
  }

  Result<DataType> ParseTypeOnly() {
    FLOE_ASSIGN_OR_RAISE(DataType type, ParseType());
    if (Peek().kind != TokenKind::kEnd) return Unexpected("end of the type");
    return type;
  }

  Result<std::vector<ColumnDef>> ParseColumnListOnly() {
    std::vector<ColumnDef> columns;
    do {
      size_t offset = Peek().offset;
      FLOE_ASSIGN_OR_RAISE(ColumnDef column, ParseColumn("column name"));
      for (const ColumnDef& prior : columns) {
        if (prior.name == column.name) return DuplicateColumn(offset, prior);
      }
      columns.push_back(std::move(column));
      if (Peek().kind != TokenKind::kComma && Peek().kind != TokenKind::kEnd) {
        return Unexpected(columns.back().not_null ? "',' or the end of the column list"
                                                  : "NOT NULL, ',' or the end of the column list");
      }
    } while (Accept(TokenKind::kComma));
    return columns;
  }

 private:
  // ---- token helpers ----------------------------------------------------------------------

  const Token& Peek(size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  const Token& Advance() {
    const Token& t = tokens_[pos_];
    if (t.kind != TokenKind::kEnd) ++pos_;
    return t;
  }
  bool AtKeyword(std::string_view keyword, size_t ahead = 0) const {
    const Token& t = Peek(ahead);
    return t.kind == TokenKind::kWord && EqualsIgnoreCase(t.text, keyword);
  }
  bool AcceptKeyword(std::string_view keyword) {
    if (!AtKeyword(keyword)) return false;
    Advance();
    return true;
  }
  static bool IsName(const Token& t) {
    return t.kind == TokenKind::kWord || t.kind == TokenKind::kQuotedWord;
  }
  // A column's name at a name token, `q.column` too (its `q` kept in qualifiers_); consumed.
  Result<const Token*> ColumnToken() {
    if (Peek(1).kind == TokenKind::kDot) {
      if (!in_query_) {
        return ErrorAt(Peek(1).offset,
                       "qualified column names (table.column) stand in queries only");
      }
      qualifiers_.push_back({Peek().text, Peek().offset});
      Advance();
      Advance();
      if (!IsName(Peek())) return Unexpected("a column name after '.'");
    }
    return &Advance();
  }
  bool Accept(TokenKind kind) {
    if (Peek().kind != kind) return false;
    Advance();
    return true;
  }
  Status ExpectKeyword(std::string_view keyword) {
    if (AcceptKeyword(keyword)) return Status::OK();
    return Unexpected(keyword);
  }
  Status Expect(TokenKind kind, std::string_view expected) {
    if (Accept(kind)) return Status::OK();
    return Unexpected(expected);
  }
  SourcePos PosOf(const Token& t) const { return source_.Locate(t.offset); }

  // ---- errors -----------------------------------------------------------------------------

  Status Unexpected(std::string_view expected) const {
    const std::string construct = in_query_ ? UnsupportedConstructAt() : std::string();
    if (!construct.empty()) {
      return source_.Error(Peek().offset, error_context_ + construct +
                                              " is not supported yet (expected " +
                                              std::string(expected) + " here)");
    }
    return source_.Error(Peek().offset, error_context_ + "expected " + std::string(expected) +
                                            ", found " + Describe(Peek()));
  }

  // The Flink construct the next token starts in a query, for messages; empty for none floe
  // knows.
  std::string UnsupportedConstructAt() const {
    const Token& t = Peek();
    switch (t.kind) {
      case TokenKind::kWord:
        if (EqualsIgnoreCase(t.text, "NOT") && Peek(1).kind == TokenKind::kWord) {
          const std::string_view negated = UnsupportedClause(Peek(1).text);
          return negated.empty() ? std::string() : "NOT " + std::string(negated);
        }
        return std::string(UnsupportedClause(t.text));
      default:
        return {};
    }
  }
  Status ErrorAt(size_t offset, std::string message) const {
    return source_.Error(offset, error_context_ + message);
  }
  std::string Where(size_t offset) const {
    SourcePos p = source_.Locate(offset);
    return "line " + std::to_string(p.line) + ", column " + std::to_string(p.column);
  }

  // After a statement: ';' or the end of the script. `alternatives` lists what else could have
  // followed, for the message ("WHERE or ';'").
  Status ExpectStatementEnd(std::string_view alternatives) {
    if (subquery_depth_ > 0 && Peek().kind == TokenKind::kRParen) return Status::OK();
    // A query goes on with UNION ALL where its INSERT, view or subquery takes several.
    if (union_depth_ == subquery_depth_ && AtKeyword("UNION") && AtKeyword("ALL", 1)) {
      return Status::OK();
    }
    if (Accept(TokenKind::kSemicolon) || Peek().kind == TokenKind::kEnd) return Status::OK();
    return Unexpected(alternatives);
  }

  // A table or column name: a bare word that is not reserved, or a `quoted` one.
  Result<std::string> ParseName(std::string_view what) {
    const Token& t = Peek();
    if (t.kind == TokenKind::kQuotedWord ||
        (t.kind == TokenKind::kWord && !IsReservedWord(t.text))) {
      return Advance().text;
    }
    if (t.kind == TokenKind::kWord) {
      return Unexpected(std::string(what) + " (reserved words need backquotes: `" + t.text + "`)");
    }
    return Unexpected(what);
  }

  // A table name; qualified names (catalog.db.table) are a clear error rather than a confusing
  // one further on.
  Result<NameRef> ParseTableName() {
    size_t offset = Peek().offset;
    FLOE_ASSIGN_OR_RAISE(std::string name, ParseName("table name"));
    if (Peek().kind == TokenKind::kDot) {
      return ErrorAt(Peek().offset,
                     "qualified table names (catalog.database.table) are not "
                     "supported yet; use a plain name");
    }
    return NameRef{std::move(name), offset};
  }

  // ( name, name, ... )
  Result<std::vector<NameRef>> ParseNameList(std::string_view what) {
    FLOE_RETURN_NOT_OK(Expect(TokenKind::kLParen, "'('"));
    std::vector<NameRef> names;
    do {
      size_t offset = Peek().offset;
      FLOE_ASSIGN_OR_RAISE(std::string name, ParseName(what));
      names.push_back({std::move(name), offset});
    } while (Accept(TokenKind::kComma));
    FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "',' or ')'"));
    return names;
  }

  Result<std::string> ParseString(std::string_view what) {
    if (Peek().kind != TokenKind::kString) return Unexpected(what);
    return Advance().text;
  }

  // ---- SET --------------------------------------------------------------------------------

  Result<SetStatement> ParseSet() {
    SetStatement set;
    set.pos = PosOf(Advance());
    size_t key_offset = Peek().offset;
    FLOE_ASSIGN_OR_RAISE(set.key, ParseString("a quoted key ('key')"));
    if (set.key.empty()) return ErrorAt(key_offset, "SET key is empty");
    FLOE_RETURN_NOT_OK(Expect(TokenKind::kEq, "'='"));
    FLOE_ASSIGN_OR_RAISE(set.value, ParseString("a quoted value ('value')"));
    FLOE_RETURN_NOT_OK(ExpectStatementEnd("';'"));
    return set;
  }

  // ---- CREATE TABLE -----------------------------------------------------------------------

  Result<CreateTable> ParseCreateTable() {
    CreateTable table;
    table.pos = PosOf(Advance());
    (void)AcceptKeyword("TEMPORARY");  // every table of a job file lives as long as the job
    if (!AcceptKeyword("TABLE")) {
      for (std::string_view what : {"FUNCTION", "CATALOG", "DATABASE"}) {
        if (!AtKeyword(what)) continue;
        return ErrorAt(Peek().offset,
                       "CREATE " + std::string(what) +
                           " is not supported yet (CREATE TABLE and CREATE [TEMPORARY] VIEW are "
                           "the CREATEs floe runs)");
      }
      return Unexpected("TABLE or VIEW");
    }
    FLOE_ASSIGN_OR_RAISE(NameRef name, ParseTableName());
    FLOE_RETURN_NOT_OK(CheckNameIsFree(name));
    table.name = name.name;
    TableElements elements;
    FLOE_RETURN_NOT_OK(ParseTableElements(&table, &elements));
    if (table.columns.empty()) {
      return ErrorAt(name.offset, "table " + Name(table.name) + " has no columns");
    }
    FLOE_RETURN_NOT_OK(CheckTableElements(elements, &table));
    FLOE_RETURN_NOT_OK(ParsePartitionedBy(&table));
    FLOE_RETURN_NOT_OK(ParseTableOptions(&table));
    return table;
  }

  // What a table's elements declare besides its columns, checked once all columns are known.
  struct TableElements {
    std::optional<std::vector<NameRef>> primary_key;
    size_t primary_key_offset = 0;
    std::optional<NameRef> watermark_column;
  };

  // The parenthesized elements of CREATE TABLE: columns, PRIMARY KEY, WATERMARK.
  Status ParseTableElements(CreateTable* table, TableElements* elements) {
    FLOE_RETURN_NOT_OK(Expect(TokenKind::kLParen, "'('"));
    do {
      size_t element_offset = Peek().offset;
      if (AtKeyword("PRIMARY") || AtKeyword("CONSTRAINT")) {
        if (elements->primary_key) {
          return PrimaryKeyTwice(element_offset, elements->primary_key_offset);
        }
        elements->primary_key_offset = element_offset;
        FLOE_ASSIGN_OR_RAISE(elements->primary_key, ParsePrimaryKey());
      } else if (AtKeyword("WATERMARK")) {
        if (table->watermark) {
          return ErrorAt(element_offset, "table " + Name(table->name) + " has two WATERMARKs");
        }
        size_t column_offset = 0;
        FLOE_ASSIGN_OR_RAISE(Watermark watermark, ParseWatermark(&column_offset));
        elements->watermark_column = NameRef{watermark.column, column_offset};
        table->watermark = std::move(watermark);
      } else if (AtKeyword("AS", 1)) {
        FLOE_RETURN_NOT_OK(ParseComputedColumn(element_offset, table));
      } else {
        FLOE_RETURN_NOT_OK(ParsePhysicalColumn(element_offset, table, elements));
      }
    } while (Accept(TokenKind::kComma));
    return Expect(TokenKind::kRParen, "',' or ')'");
  }

  // A computed column: `name AS expr`.
  Status ParseComputedColumn(size_t element_offset, CreateTable* table) {
    ColumnDef column;
    column.pos = PosOf(Peek());
    FLOE_ASSIGN_OR_RAISE(column.name, ParseName("column name, PRIMARY KEY or WATERMARK"));
    if (const ColumnDef* prior = table->FindColumn(column.name)) {
      return DuplicateColumn(element_offset, *prior);
    }
    Advance();  // AS
    FLOE_ASSIGN_OR_RAISE(Expr expr, ParseExpr());
    column.computed = std::move(expr);
    table->columns.push_back(std::move(column));
    if (Peek().kind != TokenKind::kComma && Peek().kind != TokenKind::kRParen) {
      return Unexpected("',' or ')' after the computed column's expression");
    }
    return Status::OK();
  }

  // A physical column, maybe with an inline `PRIMARY KEY NOT ENFORCED`.
  Status ParsePhysicalColumn(size_t element_offset, CreateTable* table, TableElements* elements) {
    FLOE_ASSIGN_OR_RAISE(ColumnDef column, ParseColumn("column name, PRIMARY KEY or WATERMARK"));
    if (const ColumnDef* prior = table->FindColumn(column.name)) {
      return DuplicateColumn(element_offset, *prior);
    }
    if (AcceptKeyword("METADATA")) {  // Flink's `name TYPE METADATA [FROM 'key'] [VIRTUAL]`
      column.metadata = column.name;
      if (AcceptKeyword("FROM")) {
        FLOE_ASSIGN_OR_RAISE(column.metadata, ParseString("the metadata key (a string)"));
      }
      column.is_virtual = AcceptKeyword("VIRTUAL");
      table->columns.push_back(std::move(column));
      if (Peek().kind != TokenKind::kComma && Peek().kind != TokenKind::kRParen) {
        return Unexpected("VIRTUAL, ',' or ')' after the metadata column");
      }
      return Status::OK();
    }
    if (AtKeyword("PRIMARY")) {  // inline: `id BIGINT PRIMARY KEY NOT ENFORCED`
      if (elements->primary_key) {
        return PrimaryKeyTwice(Peek().offset, elements->primary_key_offset);
      }
      elements->primary_key_offset = Peek().offset;
      Advance();
      FLOE_RETURN_NOT_OK(ExpectKeyword("KEY"));
      FLOE_RETURN_NOT_OK(ExpectNotEnforced());
      elements->primary_key = std::vector<NameRef>{{column.name, element_offset}};
    }
    table->columns.push_back(std::move(column));
    if (Peek().kind != TokenKind::kComma && Peek().kind != TokenKind::kRParen) {
      return Unexpected(table->columns.back().not_null ? "PRIMARY KEY, ',' or ')'"
                                                       : "NOT NULL, PRIMARY KEY, ',' or ')'");
    }
    return Status::OK();
  }

  // The primary key and watermark column against the columns, and the computed columns typed.
  Status CheckTableElements(const TableElements& elements, CreateTable* table) {
    if (elements.primary_key) {
      for (const NameRef& key : *elements.primary_key) {
        FLOE_RETURN_NOT_OK(CheckColumn(*table, key, "primary key column"));
        if (std::count(table->primary_key.begin(), table->primary_key.end(), key.name) != 0) {
          return ErrorAt(key.offset, "column " + Name(key.name) + " is twice in the primary key");
        }
        table->primary_key.push_back(key.name);
      }
    }
    for (ColumnDef& column : table->columns) {
      if (column.computed) FLOE_RETURN_NOT_OK(TypeComputedColumn(*table, &column));
    }
    if (elements.primary_key) {
      for (const NameRef& key : *elements.primary_key) {
        if (table->FindColumn(key.name)->computed) {
          return ErrorAt(key.offset, "primary key column " + Name(key.name) +
                                         " is a computed column; a key must be physical");
        }
        if (table->FindColumn(key.name)->metadata) {  // Flink refuses it too
          return ErrorAt(key.offset, "primary key column " + Name(key.name) +
                                         " is a metadata column; a key must be physical");
        }
      }
    }
    if (elements.watermark_column) {
      const NameRef& watermark_column = *elements.watermark_column;
      FLOE_RETURN_NOT_OK(CheckColumn(*table, watermark_column, "watermark column"));
      // Flink's rule for a rowtime attribute: TIMESTAMP(p) or TIMESTAMP_LTZ(p), p in 0..3.
      const ColumnDef* column = table->FindColumn(watermark_column.name);
      TypeId id = column->type.id;
      if ((id != TypeId::kTimestamp && id != TypeId::kTimestampTz) || column->precision > 3) {
        return ErrorAt(watermark_column.offset,
                       "watermark column " + Name(watermark_column.name) +
                           " must be TIMESTAMP(p) or TIMESTAMP_LTZ(p) with precision 0..3 (an "
                           "event-time attribute), but it is " +
                           ToString(column->sql_type()));
      }
    }
    return Status::OK();
  }

  // [PARTITIONED BY (columns)]
  Status ParsePartitionedBy(CreateTable* table) {
    if (!AcceptKeyword("PARTITIONED")) return Status::OK();
    FLOE_RETURN_NOT_OK(ExpectKeyword("BY"));
    FLOE_ASSIGN_OR_RAISE(std::vector<NameRef> partition, ParseNameList("column name"));
    for (const NameRef& col : partition) {
      FLOE_RETURN_NOT_OK(CheckColumn(*table, col, "partition column"));
      if (std::count(table->partitioned_by.begin(), table->partitioned_by.end(), col.name) != 0) {
        return ErrorAt(col.offset, "column " + Name(col.name) + " is twice in PARTITIONED BY");
      }
      table->partitioned_by.push_back(col.name);
    }
    return Status::OK();
  }

  // [WITH ('key' = 'value', ...)] and the statement's end.
  Status ParseTableOptions(CreateTable* table) {
    if (!AcceptKeyword("WITH")) {
      return ExpectStatementEnd(table->partitioned_by.empty() ? "PARTITIONED BY, WITH or ';'"
                                                              : "WITH or ';'");
    }
    FLOE_RETURN_NOT_OK(Expect(TokenKind::kLParen, "'('"));
    do {
      size_t key_offset = Peek().offset;
      FLOE_ASSIGN_OR_RAISE(std::string key, ParseString("a quoted option key ('key')"));
      if (key.empty()) return ErrorAt(key_offset, "option key is empty");
      for (const auto& [k, v] : table->options) {
        if (k == key) return ErrorAt(key_offset, "option " + Name(key) + " is set twice");
      }
      FLOE_RETURN_NOT_OK(Expect(TokenKind::kEq, "'='"));
      FLOE_ASSIGN_OR_RAISE(std::string value, ParseString("a quoted option value ('value')"));
      table->options.emplace_back(std::move(key), std::move(value));
    } while (Accept(TokenKind::kComma));
    FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "',' or ')'"));
    return ExpectStatementEnd("';'");
  }

  Status DuplicateColumn(size_t offset, const ColumnDef& prior) const {
    return ErrorAt(offset, "duplicate column " + Name(prior.name) + " (first defined at line " +
                               std::to_string(prior.pos.line) + ", column " +
                               std::to_string(prior.pos.column) + ")");
  }

  Status PrimaryKeyTwice(size_t offset, size_t first_offset) const {
    return ErrorAt(offset, "a table has at most one PRIMARY KEY (the first is at " +
                               Where(first_offset) + ")");
  }

  Status CheckColumn(const CreateTable& table, const NameRef& ref, std::string_view what) const {
    if (table.FindColumn(ref.name) != nullptr) return Status::OK();
    return ErrorAt(ref.offset, std::string(what) + " " + Name(ref.name) + " is not a column of " +
                                   Name(table.name) + " (" + JoinNames(table.columns) + ")");
  }

  Status ExpectNotEnforced() {
    if (!AcceptKeyword("NOT")) {
      if (AtKeyword("ENFORCED")) {
        return ErrorAt(Peek().offset,
                       "floe does not enforce primary keys; write PRIMARY KEY (...) NOT ENFORCED");
      }
      return Unexpected("NOT ENFORCED");
    }
    return ExpectKeyword("ENFORCED");
  }

  // [CONSTRAINT name] PRIMARY KEY (k1, ...) NOT ENFORCED
  Result<std::vector<NameRef>> ParsePrimaryKey() {
    if (AcceptKeyword("CONSTRAINT")) {
      FLOE_ASSIGN_OR_RAISE(std::string constraint_name, ParseName("constraint name"));
      (void)constraint_name;  // Flink ignores it too
    }
    FLOE_RETURN_NOT_OK(ExpectKeyword("PRIMARY"));
    FLOE_RETURN_NOT_OK(ExpectKeyword("KEY"));
    FLOE_ASSIGN_OR_RAISE(std::vector<NameRef> keys, ParseNameList("column name"));
    FLOE_RETURN_NOT_OK(ExpectNotEnforced());
    return keys;
  }

  // WATERMARK FOR col AS col [- INTERVAL 'n' {DAY | HOUR | MINUTE | SECOND}]
  Result<Watermark> ParseWatermark(size_t* column_offset) {
    Watermark watermark;
    watermark.pos = PosOf(Advance());
    FLOE_RETURN_NOT_OK(ExpectKeyword("FOR"));
    *column_offset = Peek().offset;
    FLOE_ASSIGN_OR_RAISE(watermark.column, ParseName("column name"));
    FLOE_RETURN_NOT_OK(ExpectKeyword("AS"));
    size_t expr_offset = Peek().offset;
    std::string unsupported = "watermark expressions other than `" + watermark.column + "` or `" +
                              watermark.column + " - INTERVAL 'n' unit` are not supported yet";
    if (Peek().kind != TokenKind::kWord && Peek().kind != TokenKind::kQuotedWord) {
      return ErrorAt(expr_offset, unsupported);
    }
    FLOE_ASSIGN_OR_RAISE(std::string column, ParseName("column name"));
    if (column != watermark.column) return ErrorAt(expr_offset, unsupported);
    if (Peek().kind == TokenKind::kComma || Peek().kind == TokenKind::kRParen) return watermark;
    if (!Accept(TokenKind::kMinus)) return ErrorAt(expr_offset, unsupported);
    FLOE_RETURN_NOT_OK(ExpectKeyword("INTERVAL"));
    FLOE_ASSIGN_OR_RAISE(watermark.delay_millis, ParseInterval());
    if (Peek().kind != TokenKind::kComma && Peek().kind != TokenKind::kRParen) {
      return ErrorAt(expr_offset, unsupported);
    }
    return watermark;
  }

  // 'n' unit, after INTERVAL; returns milliseconds. SECOND takes up to 3 decimals. Units may
  // be plural (Flink's docs write INTERVAL '10' MINUTES). A leading '-' in the value only where
  // `allow_negative` (a window offset).
  Result<int64_t> ParseInterval(bool allow_negative = false) {
    size_t value_offset = Peek().offset;
    FLOE_ASSIGN_OR_RAISE(std::string value, ParseString("a quoted interval value ('5')"));
    int64_t unit_millis = 0;
    if (AtKeyword("DAY") || AtKeyword("DAYS")) {
      unit_millis = 86'400'000;
    } else if (AtKeyword("HOUR") || AtKeyword("HOURS")) {
      unit_millis = 3'600'000;
    } else if (AtKeyword("MINUTE") || AtKeyword("MINUTES")) {
      unit_millis = 60'000;
    } else if (AtKeyword("SECOND") || AtKeyword("SECONDS")) {
      unit_millis = 1'000;
    } else {
      return Unexpected("an interval unit (DAY, HOUR, MINUTE or SECOND)");
    }
    bool seconds = unit_millis == 1'000;
    Advance();
    std::string_view v = value;
    v.remove_prefix(std::min(v.find_first_not_of(' '), v.size()));
    v.remove_suffix(v.size() - std::min(v.find_last_not_of(' ') + 1, v.size()));
    bool negative = allow_negative && !v.empty() && v.front() == '-';
    if (negative) v.remove_prefix(1);
    size_t dot = v.find('.');
    std::string_view whole = v.substr(0, dot);
    std::string_view frac = dot == std::string_view::npos ? "" : v.substr(dot + 1);
    auto all_digits = [](std::string_view s) {
      return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    int64_t n = 0;
    // Nine digits keep n * unit_millis far from overflow (10^9 days ~ 8.6e16 ms).
    if (whole.empty() || whole.size() > 9 || !all_digits(whole) || !all_digits(frac) ||
        (dot != std::string_view::npos && (!seconds || frac.empty() || frac.size() > 3)) ||
        !ParseInt64(whole, &n)) {
      return ErrorAt(value_offset,
                     "invalid interval value " + Name(value) +
                         ", expected a non-negative whole number (SECOND also takes up to 3 "
                         "decimals: '0.5')");
    }
    int64_t millis = n * unit_millis;
    if (!frac.empty()) {
      int64_t f = 0;
      (void)ParseInt64(frac, &f);
      for (size_t i = frac.size(); i < 3; ++i) f *= 10;
      millis += f;
    }
    return negative ? -millis : millis;
  }

  // name TYPE [NOT NULL | NULL]; `expected` says what could have stood in the name's place.
  Result<ColumnDef> ParseColumn(std::string_view expected) {
    ColumnDef column;
    column.pos = PosOf(Peek());
    FLOE_ASSIGN_OR_RAISE(column.name, ParseName(expected));
    // Errors inside the type name the column: "column 'price': DECIMAL precision must be ...".
    error_context_ = "column " + Name(column.name) + ": ";
    Result<SqlType> type = ParseSqlType();
    error_context_.clear();
    FLOE_ASSIGN_OR_RAISE(SqlType sql_type, std::move(type));
    column.type = sql_type.type;
    column.precision = sql_type.precision;
    if (AcceptKeyword("NOT")) {
      FLOE_RETURN_NOT_OK(ExpectKeyword("NULL"));
      column.not_null = true;
    } else {
      AcceptKeyword("NULL");
    }
    return column;
  }

  // ---- types ------------------------------------------------------------------------------

  // ( integer ), if present; `fallback` otherwise. The value must be within [lo, hi].
  Result<int64_t> ParseTypeArgument(std::string_view type, std::string_view what, int64_t fallback,
                                    int64_t lo, int64_t hi) {
    if (!Accept(TokenKind::kLParen)) return fallback;
    FLOE_ASSIGN_OR_RAISE(int64_t v, ParseTypeInteger(type, what, lo, hi));
    FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "')'"));
    return v;
  }

  Result<int64_t> ParseTypeInteger(std::string_view type, std::string_view what, int64_t lo,
                                   int64_t hi) {
    const Token& t = Peek();
    int64_t v = 0;
    if (t.kind != TokenKind::kNumber)
      return Unexpected("the " + std::string(what) + " of " + std::string(type) + " (an integer)");
    if (!ParseInt64(t.text, &v) || v < lo || v > hi) {
      return ErrorAt(t.offset, std::string(type) + " " + std::string(what) + " must be " +
                                   std::to_string(lo) + ".." + std::to_string(hi) + ", got " +
                                   t.text);
    }
    Advance();
    return v;
  }

  Status CheckTimestampPrecision(int64_t p, size_t offset) const {
    if (p > 6) {
      return ErrorAt(offset, "nanosecond timestamps (precision " + std::to_string(p) +
                                 ") are not supported yet, use precision 0..6");
    }
    return Status::OK();
  }

  Result<DataType> ParseType() {
    FLOE_ASSIGN_OR_RAISE(SqlType type, ParseSqlType());
    return type.type;
  }

  Result<SqlType> ParseSqlType() {
    const Token& t = Peek();
    constexpr std::string_view kExpected = "a column type";
    if (t.kind != TokenKind::kWord) return Unexpected(kExpected);
    std::string name = Upper(t.text);
    size_t offset = t.offset;
    auto is = [&](std::initializer_list<std::string_view> names) {
      return std::find(names.begin(), names.end(), name) != names.end();
    };
    constexpr int64_t kMaxLength = std::numeric_limits<int32_t>::max();
    if (is({"BOOLEAN"})) {
      Advance();
      return SqlType{DataType::Boolean(), 0};
    }
    if (is({"INT", "INTEGER"})) {
      Advance();
      return SqlType{DataType::Int32(), 0};
    }
    if (is({"BIGINT"})) {
      Advance();
      return SqlType{DataType::Int64(), 0};
    }
    if (is({"FLOAT"})) {
      Advance();
      return SqlType{DataType::Float(), 0};
    }
    if (is({"DOUBLE"})) {
      Advance();
      AcceptKeyword("PRECISION");
      return SqlType{DataType::Double(), 0};
    }
    if (is({"STRING"})) {
      Advance();
      return SqlType{DataType::String(), 0};
    }
    if (is({"VARCHAR", "CHAR"})) {
      Advance();
      FLOE_ASSIGN_OR_RAISE(int64_t n, ParseTypeArgument(name, "length", 1, 1, kMaxLength));
      (void)n;  // floe strings are unbounded
      return SqlType{DataType::String(), 0};
    }
    if (is({"BYTES"})) {
      Advance();
      return SqlType{DataType::Binary(), 0};
    }
    if (is({"VARBINARY", "BINARY"})) {
      Advance();
      FLOE_ASSIGN_OR_RAISE(int64_t n, ParseTypeArgument(name, "length", 1, 1, kMaxLength));
      (void)n;
      return SqlType{DataType::Binary(), 0};
    }
    if (is({"DATE"})) {
      Advance();
      return SqlType{DataType::Date(), 0};
    }
    if (is({"TIME"})) {  // Flink's default precision is 0
      Advance();
      size_t p_offset = Peek(1).offset;
      FLOE_ASSIGN_OR_RAISE(int64_t p, ParseTypeArgument(name, "precision", 0, 0, 9));
      FLOE_RETURN_NOT_OK(CheckTimestampPrecision(p, p_offset));
      if (AtKeyword("WITHOUT")) {
        Advance();
        FLOE_RETURN_NOT_OK(ExpectKeyword("TIME"));
        FLOE_RETURN_NOT_OK(ExpectKeyword("ZONE"));
      }
      return SqlType{DataType::Time(), static_cast<int>(p)};
    }
    if (is({"TIMESTAMP", "TIMESTAMP_LTZ"})) {
      Advance();
      bool ltz = name == "TIMESTAMP_LTZ";
      size_t p_offset = Peek(1).offset;
      FLOE_ASSIGN_OR_RAISE(int64_t p, ParseTypeArgument(name, "precision", 6, 0, 9));
      FLOE_RETURN_NOT_OK(CheckTimestampPrecision(p, p_offset));
      if (!ltz && AtKeyword("WITHOUT")) {
        Advance();
        FLOE_RETURN_NOT_OK(ExpectKeyword("TIME"));
        FLOE_RETURN_NOT_OK(ExpectKeyword("ZONE"));
      } else if (!ltz && AtKeyword("WITH") && (AtKeyword("LOCAL", 1) || AtKeyword("TIME", 1))) {
        Advance();
        if (AtKeyword("TIME")) {
          return ErrorAt(Peek().offset,
                         "Flink has no TIMESTAMP WITH TIME ZONE; use TIMESTAMP_LTZ or "
                         "TIMESTAMP WITH LOCAL TIME ZONE");
        }
        Advance();
        FLOE_RETURN_NOT_OK(ExpectKeyword("TIME"));
        FLOE_RETURN_NOT_OK(ExpectKeyword("ZONE"));
        ltz = true;
      }
      return SqlType{ltz ? DataType::TimestampTz() : DataType::Timestamp(), static_cast<int>(p)};
    }
    if (is({"DECIMAL", "DEC", "NUMERIC"})) {
      Advance();
      int64_t p = 10, s = 0;  // Flink's defaults
      if (Accept(TokenKind::kLParen)) {
        FLOE_ASSIGN_OR_RAISE(p, ParseTypeInteger(name, "precision", 1, 38));
        if (Accept(TokenKind::kComma)) {
          const Token& s_token = Peek();
          FLOE_ASSIGN_OR_RAISE(s, ParseTypeInteger(name, "scale", 0, 38));
          if (s > p) {
            return ErrorAt(s_token.offset, name + " scale must be 0..precision (" +
                                               std::to_string(p) + "), got " + std::to_string(s));
          }
        }
        FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "',' or ')'"));
      }
      return SqlType{DataType::Decimal(static_cast<int>(p), static_cast<int>(s)), 0};
    }
    if (is({"TINYINT", "SMALLINT", "INTERVAL", "ARRAY", "MAP", "MULTISET", "ROW", "RAW"})) {
      return ErrorAt(offset,
                     "type " + name + " is not supported yet; supported: " + kSupportedTypes);
    }
    return Unexpected(std::string(kExpected) + " (" + kSupportedTypes + ")");
  }

  // ---- INSERT -----------------------------------------------------------------------------

  Result<Insert> ParseInsert() {
    in_query_ = true;  // an error ends the parse, so only a finished INSERT clears it
    Insert insert;
    insert.pos = PosOf(Advance());
    FLOE_RETURN_NOT_OK(ExpectKeyword("INTO"));
    FLOE_ASSIGN_OR_RAISE(NameRef sink, ParseTableName());
    const CreateTable* sink_table = nullptr;
    FLOE_ASSIGN_OR_RAISE(sink_table, LookUpTable(sink));
    if (FindView(sink.name) != nullptr) {
      return ErrorAt(sink.offset,
                     "view " + Name(sink.name) + " cannot be written; INSERT INTO a table");
    }
    insert.sink = std::move(sink.name);
    if (Peek().kind == TokenKind::kLParen) {
      return ErrorAt(Peek().offset,
                     "INSERT INTO with a column list is not supported yet; the query's columns "
                     "match the sink's by position");
    }
    size_t writable = 0;  // computed columns of a sink are not written (as in Flink)
    for (const ColumnDef& c : sink_table->columns) writable += c.computed ? 0 : 1;
    auto query = [&](Insert* q) -> Status {
      const size_t select_offset = Peek().offset;
      FLOE_ASSIGN_OR_RAISE(size_t produced, ParseQuery(q));
      if (produced == writable) return Status::OK();
      return ErrorAt(select_offset, "the SELECT produces " + std::to_string(produced) +
                                        " columns but sink table " + Name(sink_table->name) +
                                        " has " + std::to_string(writable) +
                                        (writable == sink_table->columns.size()
                                             ? ""
                                             : " physical (computed columns are not written)") +
                                        " (INSERT matches columns by position)");
    };
    union_depth_ = 0;
    FLOE_RETURN_NOT_OK(query(&insert));
    while (AtKeyword("UNION") && AtKeyword("ALL", 1)) {
      Advance();
      Advance();
      Insert branch;
      branch.sink = insert.sink;
      branch.pos = PosOf(Peek());
      FLOE_RETURN_NOT_OK(query(&branch));
      insert.union_all.push_back(std::move(branch));
    }
    in_query_ = false;
    union_depth_ = -1;
    return insert;
  }

  // SELECT ... FROM source [WHERE ...] [GROUP BY ...] [HAVING ...] into `query` (all but its
  // sink), its columns checked against the source; a source that is a view (or a subquery) is
  // written into the query (InlineView). Returns how many columns the query produces.
  Result<size_t> ParseQuery(Insert* query) {
    Insert& insert = *query;
    FLOE_RETURN_NOT_OK(ExpectKeyword("SELECT"));
    const size_t distinct = AtKeyword("DISTINCT") ? Advance().offset : 0;
    if (distinct == 0) (void)AcceptKeyword("ALL");  // SELECT ALL is SELECT
    column_refs_.clear();
    qualifiers_.clear();
    group_window_refs_.clear();
    std::optional<size_t> star;  // where `*` stands among other items (`*, ROW_NUMBER() ...`)
    if (Peek().kind == TokenKind::kStar && Peek(1).kind != TokenKind::kComma) {
      Advance();  // SELECT *: select stays empty
    } else {
      do {
        if (IsName(Peek()) && Peek(1).kind == TokenKind::kDot && Peek(2).kind == TokenKind::kStar &&
            !star) {
          qualifiers_.push_back({Peek().text, Peek().offset});
          Advance();
          Advance();
        }
        if (Peek().kind == TokenKind::kStar && !star) {
          star = insert.select.size();
          Advance();
          continue;
        }
        SelectItem item;
        if (AtKeyword("ROW_NUMBER") && Peek(1).kind == TokenKind::kLParen &&
            Peek(2).kind == TokenKind::kRParen && AtKeyword("OVER", 3)) {
          FLOE_ASSIGN_OR_RAISE(insert.row_number, ParseRowNumber(insert));
          item.expr = Expr::Column(std::string(kRowNumberColumn));
          item.expr.pos = insert.row_number->pos;
        } else {
          FLOE_ASSIGN_OR_RAISE(item.expr, ParseExpr());
        }
        if (AcceptKeyword("AS")) {
          FLOE_ASSIGN_OR_RAISE(item.alias, ParseName("alias"));
        } else if (Peek().kind == TokenKind::kQuotedWord ||
                   (Peek().kind == TokenKind::kWord && !IsReservedWord(Peek().text) &&
                    UnsupportedClause(Peek().text).empty())) {
          item.alias = Advance().text;  // `SELECT a b` aliases a as b
        }
        insert.select.push_back(std::move(item));
      } while (Accept(TokenKind::kComma));
    }
    if (!AtKeyword("FROM")) {
      return Unexpected(insert.select.empty() ? "FROM" : "',', AS or FROM");
    }
    insert.from_pos = PosOf(Advance());
    NameRef source;
    std::vector<NameRef> window_columns;  // DESCRIPTOR and PARTITION BY columns, checked below
    if (AtKeyword("TABLE")) {
      FLOE_ASSIGN_OR_RAISE(WindowTvf window, ParseWindowTvf(&source, &window_columns));
      insert.window = std::move(window);
    } else if (Peek().kind == TokenKind::kLParen) {
      FLOE_ASSIGN_OR_RAISE(source, ParseSubquery());
    } else {
      FLOE_ASSIGN_OR_RAISE(source, ParseTableName());
    }
    // A qualifier names the source as aliased, else the table (a subquery has none unaliased).
    FLOE_ASSIGN_OR_RAISE(std::optional<std::string> alias, AcceptAlias());
    std::string qualifier = alias ? *alias : FindView(source.name) == nullptr ? source.name : "";
    if (Peek().kind == TokenKind::kComma) {
      return ErrorAt(Peek().offset, "joins (FROM a, b) are not supported yet");
    }
    const CreateTable* source_table = nullptr;
    FLOE_ASSIGN_OR_RAISE(source_table, LookUpTable(source));
    insert.source = source.name;
    if (star) {
      std::vector<SelectItem> all;
      for (const ColumnDef& c : source_table->columns) all.push_back({Expr::Column(c.name), ""});
      if (insert.window) {
        for (std::string_view name : {kWindowStart, kWindowEnd, kWindowTime}) {
          all.push_back({Expr::Column(std::string(name)), ""});
        }
      }
      insert.select.insert(insert.select.begin() + static_cast<std::ptrdiff_t>(*star), all.begin(),
                           all.end());
    }
    FLOE_RETURN_NOT_OK(ParseWhereGroupByHaving(&insert));
    FLOE_RETURN_NOT_OK(CheckGroupWindowRefs(&insert));

    for (const NameRef& ref : window_columns) {
      FLOE_RETURN_NOT_OK(CheckColumn(*source_table, ref, "window column"));
    }
    for (const NameRef& ref : qualifiers_) {
      if (!qualifier.empty() && ref.name == qualifier) continue;
      return ErrorAt(ref.offset, "unknown table " + Name(ref.name) + " in a qualified column: " +
                                     (qualifier.empty() ? "the subquery read has no alias"
                                                        : "the query reads " + Name(qualifier)));
    }
    for (const NameRef& ref : column_refs_) {
      if (source_table->FindColumn(ref.name) != nullptr) continue;
      if (insert.window &&
          (ref.name == kWindowStart || ref.name == kWindowEnd || ref.name == kWindowTime)) {
        continue;
      }
      return ErrorAt(ref.offset,
                     "unknown column " + Name(ref.name) + " in " +
                         (insert.window ? "the window TVF over table " : "table ") +
                         Name(source_table->name) + " (" + JoinNames(source_table->columns) +
                         (insert.window ? ", window_start, window_end, window_time" : "") + ")");
    }
    size_t produced = insert.select.size();
    if (insert.select.empty()) produced = source_table->columns.size() + (insert.window ? 3 : 0);
    if (distinct != 0) FLOE_RETURN_NOT_OK(GroupByTheSelectList(distinct, &insert));
    if (const View* view = FindView(insert.source)) {
      FLOE_RETURN_NOT_OK(InlineView(*view, source.offset, &insert));
    }
    return produced;
  }

  // ROW_NUMBER() OVER ([PARTITION BY col, ...] ORDER BY col [ASC | DESC], ...): columns of the
  // table read. Only one per query.
  Result<RowNumber> ParseRowNumber(const Insert& insert) {
    RowNumber rn;
    rn.pos = PosOf(Peek());
    if (insert.row_number) {
      return ErrorAt(Peek().offset, "a second ROW_NUMBER() in one query is not supported yet");
    }
    Advance();  // ROW_NUMBER
    Advance();  // (
    Advance();  // )
    Advance();  // OVER
    FLOE_RETURN_NOT_OK(Expect(TokenKind::kLParen, "'('"));
    auto column = [&]() -> Result<std::string> {
      if (!IsName(Peek())) return Unexpected("a column");
      FLOE_ASSIGN_OR_RAISE(const Token* t, ColumnToken());
      column_refs_.push_back({t->text, t->offset});
      return t->text;
    };
    if (AcceptKeyword("PARTITION")) {
      FLOE_RETURN_NOT_OK(ExpectKeyword("BY"));
      do {
        FLOE_ASSIGN_OR_RAISE(std::string c, column());
        rn.partition_by.push_back(std::move(c));
      } while (Accept(TokenKind::kComma));
    }
    if (!AtKeyword("ORDER")) return Unexpected("ORDER BY (ROW_NUMBER needs an order)");
    Advance();
    FLOE_RETURN_NOT_OK(ExpectKeyword("BY"));
    do {
      RowNumber::Order order;
      if (AtKeyword("PROCTIME") && Peek(1).kind == TokenKind::kLParen &&
          Peek(2).kind == TokenKind::kRParen) {
        order.proctime = true;
        Advance();
        Advance();
        Advance();
      } else {
        FLOE_ASSIGN_OR_RAISE(order.column, column());
      }
      if (AcceptKeyword("DESC")) {
        order.descending = true;
      } else {
        (void)AcceptKeyword("ASC");
      }
      order.nulls_first = !order.descending;  // Flink's default: NULL is the lowest value
      if (AcceptKeyword("NULLS")) {
        if (AcceptKeyword("FIRST")) {
          order.nulls_first = true;
        } else if (AcceptKeyword("LAST")) {
          order.nulls_first = false;
        } else {
          return Unexpected("FIRST or LAST");
        }
      }
      rn.order_by.push_back(std::move(order));
    } while (Accept(TokenKind::kComma));
    if (AtKeyword("ROWS") || AtKeyword("RANGE")) {
      return ErrorAt(Peek().offset, "a frame (ROWS / RANGE) on ROW_NUMBER() is not supported");
    }
    FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "',' or ')'"));
    return rn;
  }

  // SELECT DISTINCT items is GROUP BY items, as Calcite plans it (an aggregation without
  // aggregates: a changelog whose rows are the distinct ones).
  Status GroupByTheSelectList(size_t distinct, Insert* insert) const {
    const bool aggregates =
        std::any_of(insert->select.begin(), insert->select.end(),
                    [](const SelectItem& item) { return ContainsAggregateCall(item.expr); });
    if (insert->select.empty() || !insert->group_by.empty() || insert->having || insert->window ||
        aggregates) {
      return ErrorAt(distinct,
                     "SELECT DISTINCT is supported with a list of columns or expressions only, "
                     "not yet with *, GROUP BY, HAVING, a window or aggregates");
    }
    insert->group_by_pos = source_.Locate(distinct);
    for (const SelectItem& item : insert->select) insert->group_by.push_back(item.expr);
    return Status::OK();
  }

  // Grouping sets as lists of expressions.
  using GroupingSets = std::vector<std::vector<Expr>>;

  bool AtGroupingSetsConstruct() const {
    return (AtKeyword("GROUPING") && AtKeyword("SETS", 1)) ||
           ((AtKeyword("CUBE") || AtKeyword("ROLLUP")) && Peek(1).kind == TokenKind::kLParen);
  }

  // `(a, b)`, `()` or an expression: one grouping set.
  Result<std::vector<Expr>> ParseGroupingSet() {
    std::vector<Expr> set;
    if (!Accept(TokenKind::kLParen)) {
      FLOE_ASSIGN_OR_RAISE(Expr e, ParseExpr());
      set.push_back(std::move(e));
      return set;
    }
    if (Accept(TokenKind::kRParen)) return set;
    do {
      FLOE_ASSIGN_OR_RAISE(Expr e, ParseExpr());
      set.push_back(std::move(e));
    } while (Accept(TokenKind::kComma));
    FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "',' or ')'"));
    return set;
  }

  // One item of GROUP BY as the grouping sets it stands for: an expression is one set of one;
  // GROUPING SETS (s, ...) lists sets (each may be a CUBE or ROLLUP); ROLLUP (s1, ..., sn) is
  // s1..sn, s1..sn-1, ..., (); CUBE (s1, ..., sn) every subset of them (SQL's definitions).
  Result<GroupingSets> ParseGroupingItem() {
    if (!AtGroupingSetsConstruct()) {
      FLOE_ASSIGN_OR_RAISE(Expr e, ParseExpr());
      return GroupingSets{{std::move(e)}};
    }
    const bool cube = AtKeyword("CUBE"), rollup = AtKeyword("ROLLUP");
    const size_t at = Peek().offset;
    if (!cube && !rollup) Advance();  // GROUPING
    Advance();                        // SETS, CUBE or ROLLUP
    FLOE_RETURN_NOT_OK(Expect(TokenKind::kLParen, "'('"));
    GroupingSets parts;
    do {
      if (!cube && !rollup && AtGroupingSetsConstruct()) {
        FLOE_ASSIGN_OR_RAISE(GroupingSets nested, ParseGroupingItem());
        parts.insert(parts.end(), nested.begin(), nested.end());
        continue;
      }
      FLOE_ASSIGN_OR_RAISE(std::vector<Expr> set, ParseGroupingSet());
      parts.push_back(std::move(set));
    } while (Accept(TokenKind::kComma));
    FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "',' or ')'"));
    if (!cube && !rollup) return parts;
    GroupingSets sets;
    if (rollup) {
      for (size_t n = parts.size() + 1; n-- > 0;) {
        std::vector<Expr> set;
        for (size_t i = 0; i < n; ++i) set.insert(set.end(), parts[i].begin(), parts[i].end());
        sets.push_back(std::move(set));
      }
      return sets;
    }
    if (parts.size() > 12) {
      return ErrorAt(at, "CUBE of more than 12 items is not supported");
    }
    for (uint32_t absent = 0; absent < (1u << parts.size()); ++absent) {
      std::vector<Expr> set;
      for (size_t i = 0; i < parts.size(); ++i) {
        if ((absent >> (parts.size() - 1 - i) & 1) == 0) {
          set.insert(set.end(), parts[i].begin(), parts[i].end());
        }
      }
      sets.push_back(std::move(set));
    }
    return sets;
  }

  // GROUP BY's items. With GROUPING SETS, CUBE or ROLLUP among them, the items' sets are
  // crossed (SQL's rule for a GROUP BY list) into insert.grouping_sets over the distinct
  // expressions, which group_by holds.
  Status ParseGroupByItems(Insert* insert) {
    GroupingSets sets{{}};
    bool any_sets = false;
    do {
      any_sets = any_sets || AtGroupingSetsConstruct();
      GroupingSets item;
      if (AtGroupWindow()) {
        FLOE_ASSIGN_OR_RAISE(item, ParseGroupWindow(*insert));
      } else {
        FLOE_ASSIGN_OR_RAISE(item, ParseGroupingItem());
      }
      GroupingSets crossed;
      for (const std::vector<Expr>& left : sets) {
        for (const std::vector<Expr>& right : item) {
          std::vector<Expr> set = left;
          set.insert(set.end(), right.begin(), right.end());
          crossed.push_back(std::move(set));
        }
      }
      sets = std::move(crossed);
      if (sets.size() > 4096) {
        return ErrorAt(Peek().offset, "GROUP BY has more than 4096 grouping sets");
      }
    } while (Accept(TokenKind::kComma));
    if (!any_sets) {
      insert->group_by = std::move(sets[0]);
      return Status::OK();
    }
    for (const std::vector<Expr>& set : sets) {
      std::vector<int> indices;
      for (const Expr& e : set) {
        auto it = std::find(insert->group_by.begin(), insert->group_by.end(), e);
        if (it == insert->group_by.end()) it = insert->group_by.insert(it, e);
        const int index = static_cast<int>(it - insert->group_by.begin());
        if (std::find(indices.begin(), indices.end(), index) == indices.end()) {
          indices.push_back(index);
        }
      }
      std::sort(indices.begin(), indices.end());
      insert->grouping_sets.push_back(std::move(indices));
    }
    return Status::OK();
  }

  // ---- group windows (Flink's legacy GROUP BY TUMBLE(ts, INTERVAL ...)) ------------------
  // Written into the window TVF they stand for: GROUP BY TUMBLE(ts, size) is FROM
  // TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size)) GROUP BY window_start, window_end; HOP(ts,
  // slide, size) and SESSION(ts, gap) alike (SESSION partitioned by the other GROUP BY
  // columns). Their auxiliary functions TUMBLE_START / _END / _ROWTIME (with the same
  // arguments) are window_start, window_end and window_time.

  bool AtGroupWindow() const {
    return (AtKeyword("TUMBLE") || AtKeyword("HOP") || AtKeyword("SESSION")) &&
           Peek(1).kind == TokenKind::kLParen;
  }

  // (ts, INTERVAL ...[, INTERVAL ...]) after a group window function's name and '('.
  Result<GroupWindowCall> ParseGroupWindowArgs(const Token& name_token, WindowKind kind) {
    GroupWindowCall call;
    call.kind = kind;
    call.offset = name_token.offset;
    if (!IsName(Peek())) return Unexpected("the time attribute column");
    FLOE_ASSIGN_OR_RAISE(const Token* column, ColumnToken());
    column_refs_.push_back({column->text, column->offset});
    call.column = column->text;
    call.column_offset = column->offset;
    for (size_t i = 0, n = kind == WindowKind::kHop ? 2 : 1; i < n; ++i) {
      FLOE_RETURN_NOT_OK(Expect(TokenKind::kComma, "','"));
      FLOE_RETURN_NOT_OK(ExpectKeyword("INTERVAL"));
      const size_t at = Peek().offset;
      FLOE_ASSIGN_OR_RAISE(int64_t millis, ParseInterval());
      if (millis <= 0) {
        return ErrorAt(at, Upper(name_token.text) + "'s interval must be positive, got " +
                               std::to_string(millis) + " ms");
      }
      call.intervals.push_back(millis);
    }
    if (Peek().kind == TokenKind::kComma) {
      return ErrorAt(Peek().offset,
                     "the alignment argument of a group window is not supported yet");
    }
    FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "')'"));
    return call;
  }

  // TUMBLE(...) / HOP(...) / SESSION(...) as a GROUP BY item: the query's window.
  Result<GroupingSets> ParseGroupWindow(Insert& insert) {
    const Token& name_token = Advance();
    const std::string name = Upper(name_token.text);
    Advance();  // (
    if (insert.window) {
      return ErrorAt(name_token.offset,
                     insert.group_window
                         ? "a second group window function in one GROUP BY"
                         : "a group window function over a window table-valued function");
    }
    WindowTvf window;
    window.kind = name == "TUMBLE" ? WindowKind::kTumble
                  : name == "HOP"  ? WindowKind::kHop
                                   : WindowKind::kSession;
    window.pos = PosOf(name_token);
    FLOE_ASSIGN_OR_RAISE(GroupWindowCall call, ParseGroupWindowArgs(name_token, window.kind));
    window.time_column = call.column;
    window.time_column_pos = source_.Locate(call.column_offset);
    window.size_millis = call.intervals.back();
    if (window.kind == WindowKind::kHop) {
      window.step_millis = call.intervals.front();
      if (window.size_millis % window.step_millis != 0) {
        return ErrorAt(call.offset, "HOP's size (" + std::to_string(window.size_millis) +
                                        " ms) must be a whole multiple of its slide (" +
                                        std::to_string(window.step_millis) + " ms)");
      }
    }
    insert.window = std::move(window);
    insert.group_window = std::move(call);
    return GroupingSets{
        {Expr::Column(std::string(kWindowStart)), Expr::Column(std::string(kWindowEnd))}};
  }

  // TUMBLE_START(ts, INTERVAL ...) and its kin, after the name and '(': window_start,
  // window_end or window_time, checked against the GROUP BY's window once it is parsed.
  Result<Expr> ParseGroupWindowAuxiliary(const Token& name_token, const std::string& name) {
    const size_t underscore = name.find('_');
    const std::string kind = name.substr(0, underscore), part = name.substr(underscore + 1);
    if (part == "PROCTIME") {
      return ErrorAt(name_token.offset, name + " is not supported yet (processing-time windows)");
    }
    FLOE_ASSIGN_OR_RAISE(GroupWindowCall call,
                         ParseGroupWindowArgs(name_token, kind == "TUMBLE" ? WindowKind::kTumble
                                                          : kind == "HOP"  ? WindowKind::kHop
                                                                           : WindowKind::kSession));
    call.auxiliary = name;
    group_window_refs_.push_back(call);
    Expr e = Expr::Column(std::string(part == "START" ? kWindowStart
                                      : part == "END" ? kWindowEnd
                                                      : kWindowTime));
    e.pos = PosOf(name_token);
    return e;
  }

  // The auxiliary functions of the query against its GROUP BY's window; TUMBLE_ROWTIME groups
  // by window_time too.
  Status CheckGroupWindowRefs(Insert* insert) {
    for (const GroupWindowCall& ref : group_window_refs_) {
      if (!insert->group_window) {
        return ErrorAt(ref.offset, ref.auxiliary + " needs its group window in the GROUP BY (" +
                                       ref.auxiliary.substr(0, ref.auxiliary.find('_')) +
                                       "(time, interval ...))");
      }
      const GroupWindowCall& w = *insert->group_window;
      if (ref.kind != w.kind || ref.column != w.column || ref.intervals != w.intervals) {
        return ErrorAt(ref.offset,
                       ref.auxiliary + " must take the arguments of the GROUP BY's group window");
      }
      const Expr time = Expr::Column(std::string(kWindowTime));
      if (ref.auxiliary.ends_with("_ROWTIME") &&
          std::find(insert->group_by.begin(), insert->group_by.end(), time) ==
              insert->group_by.end()) {
        insert->group_by.push_back(time);
      }
    }
    if (insert->group_window && insert->window->kind == WindowKind::kSession) {
      for (const Expr& key : insert->group_by) {
        if (key.kind == ExprKind::kColumn &&
            (key.name == kWindowStart || key.name == kWindowEnd || key.name == kWindowTime)) {
          continue;
        }
        if (key.kind != ExprKind::kColumn || !insert->grouping_sets.empty()) {
          return ErrorAt(insert->group_window->offset,
                         "SESSION(time, gap) in a GROUP BY with expressions or grouping sets is "
                         "not supported yet; GROUP BY columns");
        }
        insert->window->partition_by.push_back(key.name);
      }
    }
    return Status::OK();
  }

  // [WHERE expr] [GROUP BY expr, ...] [HAVING expr] up to the statement's end.
  Status ParseWhereGroupByHaving(Insert* insert_out) {
    Insert& insert = *insert_out;
    if (AcceptKeyword("WHERE")) {
      FLOE_ASSIGN_OR_RAISE(Expr where, ParseExpr());
      insert.where = std::move(where);
      if (!AtKeyword("GROUP") && !AtKeyword("HAVING")) {
        FLOE_RETURN_NOT_OK(
            ExpectStatementEnd("AND, OR, a comparison, IS [NOT] NULL, GROUP BY or ';'"));
      }
    }
    if (AtKeyword("GROUP")) {
      insert.group_by_pos = PosOf(Advance());
      FLOE_RETURN_NOT_OK(ExpectKeyword("BY"));
      FLOE_RETURN_NOT_OK(ParseGroupByItems(&insert));
      if (!AtKeyword("HAVING")) {
        FLOE_RETURN_NOT_OK(ExpectStatementEnd("',', HAVING or ';'"));
      }
    } else if (!insert.where && !AtKeyword("HAVING")) {
      FLOE_RETURN_NOT_OK(ExpectStatementEnd("WHERE, GROUP BY or ';'"));
    }
    if (AcceptKeyword("HAVING")) {
      FLOE_ASSIGN_OR_RAISE(Expr having, ParseExpr());
      insert.having = std::move(having);
      FLOE_RETURN_NOT_OK(ExpectStatementEnd("AND, OR, a comparison or ';'"));
    }
    return Status::OK();
  }

  // ---- views and subqueries ---------------------------------------------------------------

  const View* FindView(std::string_view name) const {
    for (const View& v : views_) {
      if (v.name == name) return &v;
    }
    return nullptr;
  }

  Status CheckNameIsFree(const NameRef& name) const {
    if (const CreateTable* prior = script_.FindTable(name.name)) {
      return ErrorAt(name.offset, "table " + Name(name.name) + " is already created (line " +
                                      std::to_string(prior->pos.line) + ")");
    }
    if (const View* prior = FindView(name.name)) {
      return ErrorAt(name.offset, "view " + Name(name.name) + " is already created (line " +
                                      std::to_string(prior->query.pos.line) + ")");
    }
    return Status::OK();
  }

  // CREATE [TEMPORARY] VIEW [IF NOT EXISTS] name [(column, ...)] AS query: a named query, written
  // into every query that reads it (Flink plans a view the same way: it has no operators of its
  // own).
  Status ParseCreateView() {
    const SourcePos pos = PosOf(Advance());  // CREATE
    (void)AcceptKeyword("TEMPORARY");
    FLOE_RETURN_NOT_OK(ExpectKeyword("VIEW"));
    if (AcceptKeyword("IF")) {
      FLOE_RETURN_NOT_OK(ExpectKeyword("NOT"));
      FLOE_RETURN_NOT_OK(ExpectKeyword("EXISTS"));
    }
    FLOE_ASSIGN_OR_RAISE(NameRef name, ParseTableName());
    FLOE_RETURN_NOT_OK(CheckNameIsFree(name));
    std::vector<NameRef> renames;
    if (Accept(TokenKind::kLParen)) {
      do {
        const size_t offset = Peek().offset;
        FLOE_ASSIGN_OR_RAISE(std::string column, ParseName("column name"));
        renames.push_back({std::move(column), offset});
      } while (Accept(TokenKind::kComma));
      FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "',' or ')'"));
    }
    FLOE_RETURN_NOT_OK(ExpectKeyword("AS"));
    in_query_ = true;
    Insert query;
    query.pos = pos;
    union_depth_ = 0;
    FLOE_RETURN_NOT_OK(ParseUnionQuery(&query).status());
    union_depth_ = -1;
    in_query_ = false;
    return AddView(name, name.name, std::move(query), renames);
  }

  // ( query ) [[AS] alias] in FROM: an unnamed view.
  Result<NameRef> ParseSubquery() {
    const Token& open = Advance();
    FLOE_RETURN_NOT_OK(Nest(open));
    ++subquery_depth_;
    std::vector<NameRef> outer_refs = std::move(column_refs_);
    std::vector<NameRef> outer_qualifiers = std::move(qualifiers_);
    std::vector<GroupWindowCall> outer_group_windows = std::move(group_window_refs_);
    Insert inner;
    inner.pos = PosOf(open);
    const int outer_union = union_depth_;
    union_depth_ = subquery_depth_;
    FLOE_RETURN_NOT_OK(ParseUnionQuery(&inner).status());
    union_depth_ = outer_union;
    column_refs_ = std::move(outer_refs);
    qualifiers_ = std::move(outer_qualifiers);
    group_window_refs_ = std::move(outer_group_windows);
    --subquery_depth_;
    --depth_;
    FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "')'"));
    const size_t after = pos_;
    FLOE_ASSIGN_OR_RAISE(std::optional<std::string> alias, AcceptAlias());
    pos_ = after;  // the query reading the subquery takes its alias
    NameRef name{"$subquery" + std::to_string(views_.size()), open.offset};
    FLOE_RETURN_NOT_OK(AddView(name, alias.value_or("subquery"), std::move(inner), {}));
    return name;
  }

  // [AS] alias after a table, subquery or window TVF in FROM.
  Result<std::optional<std::string>> AcceptAlias() {
    if (AcceptKeyword("AS")) {
      FLOE_ASSIGN_OR_RAISE(std::string alias, ParseName("alias"));
      return std::optional<std::string>(std::move(alias));
    }
    if (Peek().kind == TokenKind::kQuotedWord ||
        (Peek().kind == TokenKind::kWord && !IsReservedWord(Peek().text) &&
         UnsupportedClause(Peek().text).empty() && !AtKeyword("GROUP") && !AtKeyword("HAVING"))) {
      return std::optional<std::string>(Advance().text);
    }
    return std::optional<std::string>();
  }

  // A view's or subquery's query, and the queries UNION ALL joins to it (into its union_all),
  // each producing as many columns. Returns that number.
  Result<size_t> ParseUnionQuery(Insert* query) {
    FLOE_ASSIGN_OR_RAISE(size_t produced, ParseQuery(query));
    while (AtKeyword("UNION") && AtKeyword("ALL", 1)) {
      Advance();
      Advance();
      Insert branch;
      branch.pos = PosOf(Peek());
      const size_t select_offset = Peek().offset;
      FLOE_ASSIGN_OR_RAISE(size_t more, ParseQuery(&branch));
      if (more != produced) {
        return ErrorAt(select_offset, "this query of a UNION ALL produces " + std::to_string(more) +
                                          " columns, the first " + std::to_string(produced));
      }
      query->union_all.push_back(std::move(branch));
    }
    return produced;
  }

  // Registers the view `name` over `query` (already over a table); `shown` names it in messages.
  Status AddView(const NameRef& name, const std::string& shown, Insert query,
                 const std::vector<NameRef>& renames) {
    View view;
    view.name = name.name;
    view.shape.name = shown;
    view.shape.pos = query.pos;
    // A window TVF without an aggregation: the query reading the view takes the window over.
    const bool window_only =
        query.window && query.group_by.empty() && !query.having &&
        std::none_of(query.select.begin(), query.select.end(),
                     [](const SelectItem& item) { return ContainsAggregateCall(item.expr); });
    // Planned as a source of its own: an aggregation, or a ranked query (a ROW_NUMBER kept to a
    // range: deduplication, Top-N), whose changelog the reading query takes as its input; or a
    // UNION ALL, whose queries each read their own table.
    view.aggregates = (IsAggregateQuery(query) && !window_only) ||
                      (query.row_number && query.row_number->last != 0) || !query.union_all.empty();
    const View* over = query.from_view.empty() ? nullptr : FindView(query.source);
    const CreateTable* source = over != nullptr ? &over->shape : script_.FindTable(query.source);
    if (source == nullptr) return Status::Internal("a view's query reads no table");
    CreateTable with_window = *source;
    if (window_only) {
      const ColumnDef* time = source->FindColumn(query.window->time_column);
      for (std::string_view name : {kWindowStart, kWindowEnd, kWindowTime}) {
        ColumnDef column;
        column.name = std::string(name);
        column.type = name == kWindowTime && time != nullptr ? time->type : DataType::Timestamp();
        column.precision = 3;
        with_window.columns.push_back(std::move(column));
      }
      source = &with_window;
    }
    if (query.select.empty()) {
      for (const ColumnDef& c : source->columns) {
        view.shape.columns.push_back(c);
        view.shape.columns.back().computed.reset();
        view.columns.push_back(Expr::Column(c.name));
      }
    }
    for (size_t i = 0; i < query.select.size(); ++i) {
      const SelectItem& item = query.select[i];
      ColumnDef column;
      if (item.expr.kind == ExprKind::kColumn && source->FindColumn(item.expr.name) != nullptr) {
        column = *source->FindColumn(item.expr.name);
        column.computed.reset();
      } else if (item.expr.kind == ExprKind::kColumn && item.expr.name == kRowNumberColumn) {
        column.type = DataType::Int64();
        column.not_null = true;
      } else {
        column.type = DataType::String();  // a stand-in: the planner types expressions
      }
      column.name = !item.alias.empty()                   ? item.alias
                    : item.expr.kind == ExprKind::kColumn ? item.expr.name
                                                          : "EXPR$" + std::to_string(i);
      column.pos = item.expr.pos;
      view.shape.columns.push_back(std::move(column));
      view.columns.push_back(item.expr);
    }
    if (!renames.empty()) {
      if (renames.size() != view.shape.columns.size()) {
        return ErrorAt(renames[0].offset, "view " + Name(name.name) + " names " +
                                              std::to_string(renames.size()) +
                                              " columns but its query produces " +
                                              std::to_string(view.shape.columns.size()));
      }
      for (size_t i = 0; i < renames.size(); ++i) view.shape.columns[i].name = renames[i].name;
    }
    view.query = std::move(query);
    views_.push_back(std::move(view));
    return Status::OK();
  }

  // Writes view `v` into `q`, which reads it: q's columns become the view's expressions, the
  // view's WHERE goes before q's (AND is lazy, so q's condition sees only the view's rows, as
  // in Flink's merged Calc), and q reads the view's table.
  Status InlineView(const View& v, size_t offset, Insert* q) const {
    if (v.aggregates) {
      // Planned as a source of its own (the planner's PlanViewSource); its query reads a table.
      if (!v.query.from_view.empty()) {
        return ErrorAt(offset, "not supported yet: a query over " + ViewName(v) +
                                   ", which reads an aggregation itself (two cascaded "
                                   "aggregations are supported, not more)");
      }
      q->from_view.push_back(v.query);
      for (const ColumnDef& c : v.shape.columns) q->from_view_columns.push_back(c.name);
      return Status::OK();
    }
    std::map<std::string, const Expr*> defs;
    for (size_t i = 0; i < v.columns.size(); ++i) {
      defs.emplace(v.shape.columns[i].name, &v.columns[i]);
      FLOE_RETURN_NOT_OK(CheckReadOnce(v, i, offset, *q));
    }
    if (v.query.row_number) FLOE_RETURN_NOT_OK(RankView(v, offset, defs, q));
    if (q->row_number) FLOE_RETURN_NOT_OK(RenameRankColumns(v, defs, &*q->row_number));
    if (q->select.empty()) {
      for (size_t i = 0; i < v.columns.size(); ++i) {
        q->select.push_back({v.columns[i], v.shape.columns[i].name});
      }
    } else {
      for (SelectItem& item : q->select) {
        if (item.alias.empty() && item.expr.kind == ExprKind::kColumn) item.alias = item.expr.name;
        item.expr = Substitute(item.expr, defs);
      }
    }
    std::optional<Expr> where = v.query.where;
    if (q->where && !v.query.row_number) {
      Expr outer = Substitute(*q->where, defs);
      if (where) {
        const SourcePos pos = outer.pos;
        std::vector<Expr> both;
        both.push_back(std::move(*where));
        both.push_back(std::move(outer));
        where = Expr::And(std::move(both));
        where->pos = pos;
      } else {
        where = std::move(outer);
      }
    }
    q->where = std::move(where);
    for (Expr& e : q->group_by) e = Substitute(e, defs);
    if (q->having) q->having = Substitute(*q->having, defs);
    if (v.query.window) {
      if (q->window) {
        return ErrorAt(offset, "not supported yet: a window TVF over " + ViewName(v) +
                                   ", which is a window TVF itself");
      }
      q->window = v.query.window;
    } else if (q->window) {
      auto base = [&](std::string* column, const SourcePos& pos) -> Status {
        const Expr* def = defs.at(*column);
        if (def->kind != ExprKind::kColumn) {
          return ErrorAt(pos.offset, "window column " + Name(*column) + " of view " +
                                         Name(v.shape.name) + " is " + ToString(*def) +
                                         "; a window needs a column of the table the view reads");
        }
        *column = def->name;
        return Status::OK();
      };
      FLOE_RETURN_NOT_OK(base(&q->window->time_column, q->window->time_column_pos));
      for (std::string& p : q->window->partition_by) FLOE_RETURN_NOT_OK(base(&p, q->window->pos));
    }
    q->source = v.query.source;
    q->from_view = v.query.from_view;  // a view over an aggregating view reads that
    q->from_view_columns = v.query.from_view_columns;
    return Status::OK();
  }

  // `q` reads view `v`, which numbers its rows (ROW_NUMBER): q's WHERE keeps a range of the
  // numbers (rn = 1, rn <= N, rn < N, rn >= 1, ANDed), which becomes q's row_number; the view's
  // WHERE runs before the numbering (InlineView).
  Status RankView(const View& v, size_t offset, const std::map<std::string, const Expr*>& defs,
                  Insert* q) const {
    const std::string what =
        "a query over " + ViewName(v) + " (ROW_NUMBER: deduplication or Top-N)";
    if (q->row_number || q->window || !q->group_by.empty() || q->having ||
        std::any_of(q->select.begin(), q->select.end(),
                    [](const SelectItem& item) { return ContainsAggregateCall(item.expr); })) {
      return ErrorAt(offset, "not supported yet: " + what +
                                 " that aggregates, ranks again or has a window itself");
    }
    if (v.query.window && v.query.window->kind == WindowKind::kSession) {
      return ErrorAt(offset,
                     "not supported yet: window Top-N and window deduplication over "
                     "SESSION windows");
    }
    // Over windows (a window TVF, or a window aggregation's result), ranks may start past 1.
    const bool over_windows = v.query.window || !v.query.from_view.empty();
    RowNumber rn = *v.query.row_number;
    std::vector<Expr> written;  // the WHERE's terms as written
    if (q->where && q->where->kind == ExprKind::kAnd) {
      written = q->where->children;
    } else if (q->where) {
      written.push_back(*q->where);
    }
    const auto is_number = [](const Expr& e) {
      return e.kind == ExprKind::kColumn && e.name == kRowNumberColumn;
    };
    for (const Expr& as_written : written) {
      const Expr term = Substitute(as_written, defs);
      const bool left = term.kind == ExprKind::kCompare && is_number(term.children[0]);
      const bool right = term.kind == ExprKind::kCompare && is_number(term.children[1]);
      const Expr* bound = left ? &term.children[1] : right ? &term.children[0] : nullptr;
      if (bound == nullptr || bound->kind != ExprKind::kLiteral ||
          bound->literal.kind != Literal::Kind::kInteger || term.op == CompareOp::kNe) {
        return ErrorAt(term.pos.offset,
                       "not supported yet: " + what +
                           " with a WHERE other than a range of the "
                           "row number (rn = 1, rn <= N, rn < N, joined by AND): " +
                           ToString(as_written));
      }
      const int64_t n = bound->literal.integer;
      CompareOp op = term.op;
      if (right) {  // 3 >= rn is rn <= 3
        op = op == CompareOp::kLt   ? CompareOp::kGt
             : op == CompareOp::kLe ? CompareOp::kGe
             : op == CompareOp::kGt ? CompareOp::kLt
             : op == CompareOp::kGe ? CompareOp::kLe
                                    : op;
      }
      if (op == CompareOp::kEq || op == CompareOp::kLe || op == CompareOp::kLt) {
        const int64_t last = op == CompareOp::kLt ? n - 1 : n;
        if (last < 1) {
          return ErrorAt(term.pos.offset, what + " keeps no rows: " + ToString(as_written) +
                                              " holds for no row number");
        }
        rn.last = rn.last == 0 ? last : std::min(rn.last, last);
      }
      if (op == CompareOp::kEq || op == CompareOp::kGe || op == CompareOp::kGt) {
        rn.first = std::max(rn.first, op == CompareOp::kGt ? n + 1 : n);
      }
      if (rn.first > 1 && !over_windows) {
        return ErrorAt(term.pos.offset, "not supported yet: " + what +
                                            " keeping ranks that do not start at 1 " +
                                            ToString(as_written));
      }
    }
    if (rn.last == 0) {
      return ErrorAt(offset, what + " needs WHERE rn <= N (or rn = 1) on the row number: " +
                                 "Flink's Top-N and deduplication keep a range of it (an OVER "
                                 "aggregation without one is not supported)");
    }
    std::vector<SelectItem> select = q->select;
    if (select.empty()) {
      for (size_t i = 0; i < v.columns.size(); ++i) select.push_back({v.columns[i], ""});
    }
    for (const SelectItem& item : select) {
      rn.selected = rn.selected || References(Substitute(item.expr, defs), kRowNumberColumn);
    }
    q->row_number = std::move(rn);
    return Status::OK();
  }

  static bool References(const Expr& e, std::string_view column) {
    if (e.kind == ExprKind::kColumn && e.name == column) return true;
    return std::any_of(e.children.begin(), e.children.end(),
                       [&](const Expr& child) { return References(child, column); });
  }

  static std::string ViewName(const View& v) {
    return v.name.rfind("$subquery", 0) == 0 ? "a subquery" : "view " + Name(v.name);
  }

  // `e` with each column of the view replaced by what it is.
  // Written into the query that reads it, a view column is computed where it is read: a
  // non-deterministic one (RAND(), UUID()) read twice would differ where Flink, which then
  // keeps the view's Calc apart, computes it once.
  Status CheckReadOnce(const View& v, size_t column, size_t offset, const Insert& q) const {
    std::function<bool(const Expr&)> random = [&](const Expr& e) {
      if (e.kind == ExprKind::kCall &&
          (e.name == "RAND" || e.name == "RAND_INTEGER" || e.name == "UUID")) {
        return true;
      }
      return std::any_of(e.children.begin(), e.children.end(), random);
    };
    if (!random(v.columns[column])) return Status::OK();
    const std::string& name = v.shape.columns[column].name;
    std::function<size_t(const Expr&)> reads = [&](const Expr& e) -> size_t {
      size_t n = e.kind == ExprKind::kColumn && e.name == name ? 1 : 0;
      for (const Expr& child : e.children) n += reads(child);
      return n;
    };
    size_t n = q.select.empty() ? 1 : 0;
    for (const SelectItem& item : q.select) n += reads(item.expr);
    for (const Expr& key : q.group_by) n += reads(key);
    if (q.where) n += reads(*q.where);
    if (q.having) n += reads(*q.having);
    if (n <= 1) return Status::OK();
    return ErrorAt(offset, "not supported yet: column " + Name(name) + " of " + ViewName(v) +
                               " is " + ToString(v.columns[column]) +
                               ", which differs each time it is computed, and the query reads "
                               "it " +
                               std::to_string(n) + " times (Flink computes it once)");
  }

  // A ROW_NUMBER over view `v` names v's columns: each becomes the column of v's table it is
  // (`SELECT pt AS t ...`, `ORDER BY t` orders by pt); a column that is an expression is refused.
  Status RenameRankColumns(const View& v, const std::map<std::string, const Expr*>& defs,
                           RowNumber* rn) const {
    const auto rename = [&](std::string* column) -> Status {
      auto it = defs.find(*column);
      if (it == defs.end()) return Status::OK();  // a window column
      if (it->second->kind != ExprKind::kColumn) {
        return ErrorAt(rn->pos.offset, "not supported yet: ROW_NUMBER over column " +
                                           Name(*column) + " of " + ViewName(v) + ", which is " +
                                           ToString(*it->second) +
                                           "; rank by a column it passes on");
      }
      *column = it->second->name;
      return Status::OK();
    };
    for (std::string& column : rn->partition_by) FLOE_RETURN_NOT_OK(rename(&column));
    for (RowNumber::Order& order : rn->order_by) {
      if (!order.proctime) FLOE_RETURN_NOT_OK(rename(&order.column));
    }
    return Status::OK();
  }

  static Expr Substitute(const Expr& e, const std::map<std::string, const Expr*>& defs) {
    if (e.kind == ExprKind::kColumn) {
      auto it = defs.find(e.name);
      if (it == defs.end()) return e;  // a window column
      Expr def = *it->second;
      if (def.kind == ExprKind::kColumn) def.pos = e.pos;
      return def;
    }
    Expr out = e;
    for (Expr& child : out.children) child = Substitute(child, defs);
    return out;
  }

  // ---- window table-valued functions ------------------------------------------------------

  // One argument of a window TVF: `TABLE t [PARTITION BY ...]`, `DESCRIPTOR(col)` or
  // `INTERVAL 'n' unit`, optionally named (`SIZE => ...`).
  struct TvfArg {
    enum class Kind { kTable, kDescriptor, kInterval } kind = Kind::kInterval;
    std::string param;  // upper case; empty when positional
    size_t offset = 0;  // where the argument (or its name) starts
    size_t value_offset = 0;
    NameRef table;
    std::vector<NameRef> partition_by;
    size_t partition_offset = 0;
    NameRef column;
    int64_t millis = 0;
  };

  Result<TvfArg> ParseTvfArg() {
    TvfArg arg;
    arg.offset = Peek().offset;
    if ((Peek().kind == TokenKind::kWord || Peek().kind == TokenKind::kQuotedWord) &&
        Peek(1).kind == TokenKind::kEq && Peek(2).kind == TokenKind::kGt &&
        Peek(2).offset == Peek(1).offset + 1) {
      arg.param = Upper(Advance().text);
      Advance();
      Advance();
    }
    arg.value_offset = Peek().offset;
    if (AcceptKeyword("TABLE")) {
      arg.kind = TvfArg::Kind::kTable;
      FLOE_ASSIGN_OR_RAISE(arg.table, ParseTableName());
      if (AtKeyword("PARTITION")) {
        arg.partition_offset = Advance().offset;
        FLOE_RETURN_NOT_OK(ExpectKeyword("BY"));
        if (Peek().kind == TokenKind::kLParen) {
          FLOE_ASSIGN_OR_RAISE(arg.partition_by, ParseNameList("column name"));
        } else {  // one column; several need parentheses
          size_t offset = Peek().offset;
          FLOE_ASSIGN_OR_RAISE(std::string name, ParseName("column name or '('"));
          arg.partition_by.push_back({std::move(name), offset});
        }
      }
    } else if (AtKeyword("DESCRIPTOR")) {
      arg.kind = TvfArg::Kind::kDescriptor;
      Advance();
      FLOE_ASSIGN_OR_RAISE(std::vector<NameRef> columns, ParseNameList("column name"));
      if (columns.size() != 1) {
        return ErrorAt(columns[1].offset,
                       "a window's DESCRIPTOR takes exactly one column (the time attribute)");
      }
      arg.column = std::move(columns[0]);
    } else if (AcceptKeyword("INTERVAL")) {
      arg.kind = TvfArg::Kind::kInterval;
      FLOE_ASSIGN_OR_RAISE(arg.millis, ParseInterval(/*allow_negative=*/true));
    } else {
      return Unexpected("a window argument: TABLE t, DESCRIPTOR(column) or INTERVAL 'n' unit");
    }
    return arg;
  }

  // The parameters of window TVF `name` (upper case), in the positional order Flink declares
  // them, and its kind in *kind; empty when `name` is not a window TVF.
  static std::vector<std::string> WindowTvfParams(const std::string& name, WindowKind* kind) {
    if (name == "TUMBLE") {
      *kind = WindowKind::kTumble;
      return {"DATA", "TIMECOL", "SIZE", "OFFSET"};
    }
    if (name == "HOP") {
      *kind = WindowKind::kHop;
      return {"DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"};
    }
    if (name == "CUMULATE") {
      *kind = WindowKind::kCumulate;
      return {"DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"};
    }
    if (name == "SESSION") {
      *kind = WindowKind::kSession;
      return {"DATA", "TIMECOL", "GAP"};
    }
    return {};
  }

  using TvfBinding = std::map<std::string, const TvfArg*>;  // parameter -> its argument

  // Binds the arguments of window TVF `name` to its `params`: all positional, or all named with
  // DATA first (Flink); each of the right kind, every parameter but OFFSET given.
  // `close_offset`: the closing parenthesis, where a missing argument is reported.
  Result<TvfBinding> BindTvfArgs(const std::string& name, const std::vector<std::string>& params,
                                 const std::vector<TvfArg>& args, size_t close_offset) const {
    std::string signature = name + "(" + params[0];
    for (size_t i = 1; i < params.size(); ++i) {
      signature += params[i] == "OFFSET" ? "[, OFFSET]" : ", " + params[i];
    }
    signature += ")";
    TvfBinding bound;
    bool named = !args[0].param.empty();
    for (size_t i = 0; i < args.size(); ++i) {
      const TvfArg& arg = args[i];
      if (arg.param.empty() == named) {
        return ErrorAt(arg.offset,
                       "pass all of " + name + "'s arguments by position or all by name, not both");
      }
      std::string param;
      if (named) {
        param = arg.param;
        if (std::find(params.begin(), params.end(), param) == params.end()) {
          return ErrorAt(arg.offset,
                         name + " has no parameter " + param + "; it takes " + signature);
        }
        if (i == 0 && param != "DATA") {
          return ErrorAt(arg.offset, "the DATA argument must come first (" + signature + ")");
        }
        if (bound.count(param) != 0) {
          return ErrorAt(arg.offset, name + "'s " + param + " is given twice");
        }
      } else {
        if (i >= params.size()) {
          return ErrorAt(arg.offset, name + " takes at most " + std::to_string(params.size()) +
                                         " arguments: " + signature);
        }
        param = params[i];
      }
      TvfArg::Kind want = param == "DATA"      ? TvfArg::Kind::kTable
                          : param == "TIMECOL" ? TvfArg::Kind::kDescriptor
                                               : TvfArg::Kind::kInterval;
      if (arg.kind != want) {
        std::string expected = want == TvfArg::Kind::kTable        ? "TABLE t"
                               : want == TvfArg::Kind::kDescriptor ? "DESCRIPTOR(column)"
                                                                   : "INTERVAL 'n' unit";
        return ErrorAt(arg.value_offset, name + "'s " + param + " argument must be " + expected +
                                             " (" + signature + ")");
      }
      bound[param] = &arg;
    }
    for (const std::string& param : params) {
      if (param != "OFFSET" && bound.count(param) == 0) {
        return ErrorAt(close_offset, name + " needs its " + param + " argument: " + signature);
      }
    }
    return bound;
  }

  // The window's size, and step for HOP and CUMULATE (positive; the size a whole number of
  // steps, as Flink slices both), from the bound arguments of window TVF `name`.
  Status SetWindowSizes(const std::string& name, TvfBinding& bound, WindowTvf* window) const {
    auto positive = [&](const std::string& param) -> Result<int64_t> {
      const TvfArg& arg = *bound[param];
      if (arg.millis <= 0) {
        return ErrorAt(arg.value_offset, name + "'s " + param +
                                             " must be a positive interval, got " +
                                             std::to_string(arg.millis) + " ms");
      }
      return arg.millis;
    };
    switch (window->kind) {
      case WindowKind::kTumble: {
        FLOE_ASSIGN_OR_RAISE(window->size_millis, positive("SIZE"));
        break;
      }
      case WindowKind::kHop:
      case WindowKind::kCumulate: {
        std::string step = window->kind == WindowKind::kHop ? "SLIDE" : "STEP";
        FLOE_ASSIGN_OR_RAISE(window->size_millis, positive("SIZE"));
        FLOE_ASSIGN_OR_RAISE(window->step_millis, positive(step));
        // Flink slices both: the size must be a whole number of slides (steps).
        if (window->size_millis % window->step_millis != 0) {
          return ErrorAt(bound["SIZE"]->value_offset,
                         name + "'s SIZE (" + std::to_string(window->size_millis) +
                             " ms) must be a whole multiple of its " + step + " (" +
                             std::to_string(window->step_millis) + " ms)");
        }
        break;
      }
      case WindowKind::kSession: {
        FLOE_ASSIGN_OR_RAISE(window->size_millis, positive("GAP"));
        break;
      }
    }
    return Status::OK();
  }

  // FROM TABLE(TUMBLE | HOP | CUMULATE | SESSION (args)); *source gets the table argument,
  // *columns the DESCRIPTOR and PARTITION BY columns (checked against it by the caller).
  Result<WindowTvf> ParseWindowTvf(NameRef* source, std::vector<NameRef>* columns) {
    Advance();  // TABLE
    FLOE_RETURN_NOT_OK(Expect(TokenKind::kLParen, "'(' (FROM TABLE(TUMBLE(...)))"));
    WindowTvf window;
    const Token& fn = Peek();
    std::string name = fn.kind == TokenKind::kWord ? Upper(fn.text) : "";
    std::vector<std::string> params = WindowTvfParams(name, &window.kind);
    if (params.empty()) {
      return Unexpected("a window table-valued function (TUMBLE, HOP, CUMULATE or SESSION)");
    }
    window.pos = PosOf(Advance());
    FLOE_RETURN_NOT_OK(Expect(TokenKind::kLParen, "'('"));
    std::vector<TvfArg> args;
    do {
      FLOE_ASSIGN_OR_RAISE(TvfArg arg, ParseTvfArg());
      args.push_back(std::move(arg));
    } while (Accept(TokenKind::kComma));
    size_t close_offset = Peek().offset;
    FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "',' or ')'"));
    FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "')' (closing TABLE(...))"));
    FLOE_ASSIGN_OR_RAISE(TvfBinding bound, BindTvfArgs(name, params, args, close_offset));

    const TvfArg& data = *bound["DATA"];
    *source = data.table;
    if (!data.partition_by.empty()) {
      if (window.kind != WindowKind::kSession) {
        return ErrorAt(data.partition_offset, "PARTITION BY is only for SESSION windows; " + name +
                                                  " windows are keyed by the GROUP BY columns");
      }
      for (const NameRef& key : data.partition_by) {
        window.partition_by.push_back(key.name);
        columns->push_back(key);
      }
    }
    const TvfArg& timecol = *bound["TIMECOL"];
    window.time_column = timecol.column.name;
    window.time_column_pos = source_.Locate(timecol.column.offset);
    columns->push_back(timecol.column);

    FLOE_RETURN_NOT_OK(SetWindowSizes(name, bound, &window));
    if (bound.count("OFFSET") != 0) {
      window.offset_millis = bound["OFFSET"]->millis;
      window.offset_pos = source_.Locate(bound["OFFSET"]->value_offset);
    }
    return window;
  }

  Result<const CreateTable*> LookUpTable(const NameRef& ref) const {
    if (const CreateTable* table = script_.FindTable(ref.name)) return table;
    if (const View* view = FindView(ref.name)) return &view->shape;
    std::string msg = "unknown table " + Name(ref.name);
    for (const CreateTable& t : script_.tables) {
      if (EqualsIgnoreCase(t.name, ref.name)) {
        msg += " (names are case-sensitive; did you mean " + Name(t.name) + "?)";
        return ErrorAt(ref.offset, msg);
      }
    }
    msg += "; tables must be created with CREATE TABLE before they are used";
    return ErrorAt(ref.offset, msg);
  }

  // ---- expressions ------------------------------------------------------------------------
  //   expr      := and ( OR and )*
  //   and       := not ( AND not )*
  //   not       := NOT not | predicate
  //   predicate := primary [ cmp primary | IS [NOT] NULL ]
  //   primary   := column | literal | '-' number | '(' expr ')'

  Result<Expr> ParseExpr() { return ParseChain("OR", ExprKind::kOr, &Parser::ParseAnd); }
  Result<Expr> ParseAnd() { return ParseChain("AND", ExprKind::kAnd, &Parser::ParseNot); }

  Result<Expr> ParseChain(std::string_view keyword, ExprKind kind, Result<Expr> (Parser::*next)()) {
    FLOE_ASSIGN_OR_RAISE(Expr first, (this->*next)());
    if (!AtKeyword(keyword)) return first;
    Expr chain;
    chain.kind = kind;
    chain.pos = PosOf(Peek());
    chain.children.push_back(std::move(first));
    while (AcceptKeyword(keyword)) {
      FLOE_ASSIGN_OR_RAISE(Expr operand, (this->*next)());
      chain.children.push_back(std::move(operand));
    }
    return chain;
  }

  Result<Expr> ParseNot() {
    if (!AtKeyword("NOT")) return ParsePredicate();
    const Token& not_token = Advance();
    FLOE_RETURN_NOT_OK(Nest(not_token));
    FLOE_ASSIGN_OR_RAISE(Expr operand, ParseNot());
    --depth_;
    Expr e = Expr::Not(std::move(operand));
    e.pos = PosOf(not_token);
    return e;
  }

  Result<Expr> ParsePredicate() {
    FLOE_ASSIGN_OR_RAISE(Expr left, ParseAdditive());
    std::optional<CompareOp> op;
    switch (Peek().kind) {
      case TokenKind::kEq:
        op = CompareOp::kEq;
        break;
      case TokenKind::kNe:
        op = CompareOp::kNe;
        break;
      case TokenKind::kLt:
        op = CompareOp::kLt;
        break;
      case TokenKind::kLe:
        op = CompareOp::kLe;
        break;
      case TokenKind::kGt:
        op = CompareOp::kGt;
        break;
      case TokenKind::kGe:
        op = CompareOp::kGe;
        break;
      default:
        break;
    }
    if (op) {
      SourcePos pos = PosOf(Advance());
      FLOE_ASSIGN_OR_RAISE(Expr right, ParseAdditive());
      Expr e = Expr::Compare(*op, std::move(left), std::move(right));
      e.pos = pos;
      return e;
    }
    if (AtKeyword("IS")) {
      SourcePos pos = PosOf(Advance());
      bool negated = AcceptKeyword("NOT");
      if (AtKeyword("TRUE") || AtKeyword("FALSE")) {
        const bool truth = AtKeyword("TRUE");
        return TruthTest(std::move(left), truth, negated, PosOf(Advance()));
      }
      if (!AcceptKeyword("NULL") && !AcceptKeyword("UNKNOWN")) {
        return Unexpected(negated ? "NULL, TRUE, FALSE or UNKNOWN"
                                  : "NULL, NOT NULL, TRUE, FALSE or UNKNOWN");
      }
      Expr e = negated ? Expr::IsNotNull(std::move(left)) : Expr::IsNull(std::move(left));
      e.pos = pos;
      return e;
    }
    return ParseRangePredicate(std::move(left));
  }

  // `x IS [NOT] TRUE | FALSE`, never UNKNOWN: written as CASE WHEN [NOT] x THEN TRUE ELSE FALSE
  // END (or with the results swapped for NOT), which needs x to be BOOLEAN.
  static Expr TruthTest(Expr operand, bool truth, bool negated, SourcePos pos) {
    Expr condition = std::move(operand);
    if (!truth) {
      condition = Expr::Not(std::move(condition));
      condition.pos = pos;
    }
    std::vector<Expr> parts;
    parts.push_back(std::move(condition));
    parts.push_back(Expr::Lit(Literal::Boolean(!negated)));
    parts.push_back(Expr::Lit(Literal::Boolean(negated)));
    parts[1].pos = parts[2].pos = pos;
    Expr e = Expr::Case(std::move(parts));
    e.pos = pos;
    return e;
  }

  // CASE [operand] WHEN w THEN v ... [ELSE e] END. The simple form's WHEN w is `operand = w`;
  // without ELSE the result is NULL, as SQL says.
  Result<Expr> ParseCase() {
    const Token& case_token = Advance();
    FLOE_RETURN_NOT_OK(Nest(case_token));
    std::optional<Expr> operand;
    if (!AtKeyword("WHEN")) {
      FLOE_ASSIGN_OR_RAISE(operand, ParseExpr());
    }
    std::vector<Expr> parts;
    do {
      const SourcePos when_pos = PosOf(Peek());
      FLOE_RETURN_NOT_OK(ExpectKeyword("WHEN"));
      FLOE_ASSIGN_OR_RAISE(Expr when, ParseExpr());
      if (operand) {
        when = Expr::Compare(CompareOp::kEq, *operand, std::move(when));
        when.pos = when_pos;
      }
      parts.push_back(std::move(when));
      FLOE_RETURN_NOT_OK(ExpectKeyword("THEN"));
      FLOE_ASSIGN_OR_RAISE(Expr then, ParseExprOrNull());
      parts.push_back(std::move(then));
    } while (AtKeyword("WHEN"));
    if (AcceptKeyword("ELSE")) {
      FLOE_ASSIGN_OR_RAISE(Expr otherwise, ParseExprOrNull());
      parts.push_back(std::move(otherwise));
    } else {
      parts.push_back(Expr::Lit(Literal::Null()));
      parts.back().pos = PosOf(Peek());
    }
    if (!AcceptKeyword("END")) return Unexpected(parts.size() == 3 ? "WHEN, ELSE or END" : "END");
    --depth_;
    Expr e = Expr::Case(std::move(parts));
    e.pos = PosOf(case_token);
    return e;
  }

  // An expression, or NULL where the context types it (a CASE result, CAST(NULL AS t)).
  Result<Expr> ParseExprOrNull() {
    if (!AtKeyword("NULL")) return ParseExpr();
    Expr e = Expr::Lit(Literal::Null());
    e.pos = PosOf(Advance());
    return e;
  }

  // IF(c, a, b) is CASE WHEN c THEN a ELSE b END; NULLIF(a, b) is CASE WHEN a = b THEN NULL
  // ELSE a END, as Calcite rewrites it.
  Result<Expr> ConditionalCall(const std::string& name, Expr call) {
    std::vector<Expr>& args = call.children;
    if (name == "IF") {
      if (args.size() != 3) {
        return ErrorAt(call.pos.offset, "IF takes (condition, value if TRUE, value otherwise)");
      }
      Expr e = Expr::Case(std::move(args));
      e.pos = call.pos;
      return e;
    }
    if (args.size() != 2) return ErrorAt(call.pos.offset, "NULLIF takes two values");
    std::vector<Expr> parts;
    parts.push_back(Expr::Compare(CompareOp::kEq, args[0], args[1]));
    parts.push_back(Expr::Lit(Literal::Null()));
    parts.push_back(std::move(args[0]));
    parts[0].pos = parts[1].pos = call.pos;
    Expr e = Expr::Case(std::move(parts));
    e.pos = call.pos;
    return e;
  }

  // After an operand: [NOT] BETWEEN low AND high, [NOT] IN (value, ...), [NOT] LIKE pattern.
  // BETWEEN and IN are written as the comparisons SQL defines them by (a >= low AND a <= high;
  // a = v1 OR a = v2 ...), so NULLs follow three-valued logic; LIKE is a call.
  Result<Expr> ParseRangePredicate(Expr left) {
    const bool negated =
        AtKeyword("NOT") && (AtKeyword("BETWEEN", 1) || AtKeyword("IN", 1) || AtKeyword("LIKE", 1));
    if (negated) Advance();
    Expr e;
    if (AtKeyword("BETWEEN")) {
      const SourcePos pos = PosOf(Advance());
      (void)AcceptKeyword("ASYMMETRIC");
      if (AtKeyword("SYMMETRIC"))
        return ErrorAt(Peek().offset, "BETWEEN SYMMETRIC is not supported yet");
      FLOE_ASSIGN_OR_RAISE(Expr low, ParseAdditive());
      FLOE_RETURN_NOT_OK(ExpectKeyword("AND"));
      FLOE_ASSIGN_OR_RAISE(Expr high, ParseAdditive());
      Expr from = Expr::Compare(CompareOp::kGe, left, std::move(low));
      Expr to = Expr::Compare(CompareOp::kLe, std::move(left), std::move(high));
      from.pos = to.pos = pos;
      std::vector<Expr> both;
      both.push_back(std::move(from));
      both.push_back(std::move(to));
      e = Expr::And(std::move(both));
      e.pos = pos;
    } else if (AtKeyword("IN")) {
      const SourcePos pos = PosOf(Advance());
      FLOE_RETURN_NOT_OK(Expect(TokenKind::kLParen, "'('"));
      if (AtKeyword("SELECT"))
        return ErrorAt(Peek().offset, "subqueries in IN are not supported yet");
      std::vector<Expr> equals;
      do {
        FLOE_ASSIGN_OR_RAISE(Expr value, ParseAdditive());
        Expr eq = Expr::Compare(CompareOp::kEq, left, std::move(value));
        eq.pos = pos;
        equals.push_back(std::move(eq));
      } while (Accept(TokenKind::kComma));
      FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "',' or ')'"));
      e = equals.size() == 1 ? std::move(equals[0]) : Expr::Or(std::move(equals));
      e.pos = pos;
    } else if (AtKeyword("LIKE")) {
      const SourcePos pos = PosOf(Advance());
      FLOE_ASSIGN_OR_RAISE(Expr pattern, ParseAdditive());
      if (AtKeyword("ESCAPE"))
        return ErrorAt(Peek().offset, "LIKE ... ESCAPE is not supported yet");
      std::vector<Expr> args;
      args.push_back(std::move(left));
      args.push_back(std::move(pattern));
      e = Expr::Call("LIKE", std::move(args));
      e.pos = pos;
    } else {
      return left;
    }
    if (!negated) return e;
    const SourcePos pos = e.pos;
    Expr n = Expr::Not(std::move(e));
    n.pos = pos;
    return n;
  }

  // a + b, a - b: left-associative, below * / % (Calcite's precedence).
  Result<Expr> ParseAdditive() {
    FLOE_ASSIGN_OR_RAISE(Expr left, ParseMultiplicative());
    while (Peek().kind == TokenKind::kPlus || Peek().kind == TokenKind::kMinus) {
      const ArithOp op = Peek().kind == TokenKind::kPlus ? ArithOp::kAdd : ArithOp::kSub;
      SourcePos pos = PosOf(Advance());
      FLOE_ASSIGN_OR_RAISE(Expr right, ParseMultiplicative());
      left = Expr::Arith(op, std::move(left), std::move(right));
      left.pos = pos;
    }
    return left;
  }

  Result<Expr> ParseMultiplicative() {
    FLOE_ASSIGN_OR_RAISE(Expr left, ParseUnary());
    while (true) {
      ArithOp op;
      switch (Peek().kind) {
        case TokenKind::kStar:
          op = ArithOp::kMul;
          break;
        case TokenKind::kSlash:
          op = ArithOp::kDiv;
          break;
        case TokenKind::kPercent:
          op = ArithOp::kMod;
          break;
        case TokenKind::kConcat: {  // binds as tightly as * in Calcite; CONCAT's semantics
          SourcePos pos = PosOf(Advance());
          FLOE_ASSIGN_OR_RAISE(Expr right, ParseUnary());
          std::vector<Expr> args;
          args.push_back(std::move(left));
          args.push_back(std::move(right));
          left = Expr::Call("CONCAT", std::move(args));
          left.pos = pos;
          continue;
        }
        default:
          return left;
      }
      SourcePos pos = PosOf(Advance());
      FLOE_ASSIGN_OR_RAISE(Expr right, ParseUnary());
      left = Expr::Arith(op, std::move(left), std::move(right));
      left.pos = pos;
    }
  }

  // -x, +x; a minus before a number is the number's sign (ParsePrimary).
  Result<Expr> ParseUnary() {
    const Token& t = Peek();
    const bool minus = t.kind == TokenKind::kMinus && Peek(1).kind != TokenKind::kNumber;
    if (!minus && t.kind != TokenKind::kPlus) return ParsePrimary();
    Advance();
    FLOE_RETURN_NOT_OK(Nest(t));
    FLOE_ASSIGN_OR_RAISE(Expr operand, ParseUnary());
    --depth_;
    if (!minus) return operand;
    Expr e = Expr::Negate(std::move(operand));
    e.pos = PosOf(t);
    return e;
  }

  // TIMESTAMP '2020-10-10 00:00:01.5' and DATE '2020-10-10': the string CAST to the type
  // (Flink's typed literals; a TIMESTAMP's precision is its fraction's digits), checked here.
  Result<Expr> TypedLiteral() {
    const Token& type = Advance();
    const Token& value = Advance();
    const std::string name = Upper(type.text);
    SqlType cast{DataType::Date(), 0};
    const char* error = nullptr;
    if (name == "DATE") {
      int32_t days = 0;
      error = ParseDate(value.text, &days);
    } else {
      int64_t micros = 0;
      error = name == "TIME" ? ParseTime(value.text, &micros)
                             : ParseTimestamp(value.text, false, &micros);
      const size_t dot = value.text.find('.');
      const int digits =
          dot == std::string::npos ? 0 : static_cast<int>(value.text.size() - dot - 1);
      cast =
          SqlType{name == "TIME" ? DataType::Time() : DataType::Timestamp(), std::min(digits, 6)};
    }
    if (error != nullptr) {
      return ErrorAt(value.offset, "'" + value.text + "' is not a " + name + " literal: " + error);
    }
    Expr literal = Expr::Lit(Literal::String(value.text));
    literal.pos = PosOf(value);
    Expr e = Expr::Cast(std::move(literal), cast);
    e.pos = PosOf(type);
    return e;
  }

  Result<Expr> ParsePrimary() {
    const Token& t = Peek();
    switch (t.kind) {
      case TokenKind::kLParen: {
        if (AtKeyword("SELECT", 1)) {
          return ErrorAt(t.offset,
                         "subqueries in expressions (scalar subqueries) are not supported yet");
        }
        Advance();
        FLOE_RETURN_NOT_OK(Nest(t));
        FLOE_ASSIGN_OR_RAISE(Expr inner, ParseExpr());
        --depth_;
        FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "')'"));
        return inner;
      }
      case TokenKind::kNumber:
        return NumberLiteral(Advance(), false);
      case TokenKind::kMinus:
        if (Peek(1).kind == TokenKind::kNumber) {
          Advance();
          return NumberLiteral(Advance(), true);
        }
        break;
      case TokenKind::kString: {
        Expr e = Expr::Lit(Literal::String(t.text));
        e.pos = PosOf(Advance());
        return e;
      }
      case TokenKind::kWord:
        if (AtKeyword("TRUE") || AtKeyword("FALSE")) {
          Expr e = Expr::Lit(Literal::Boolean(AtKeyword("TRUE")));
          e.pos = PosOf(Advance());
          return e;
        }
        if (AtKeyword("NULL")) {
          return ErrorAt(t.offset,
                         "NULL is not a value here; test for it with IS NULL or IS NOT NULL");
        }
        if ((AtKeyword("TIMESTAMP") || AtKeyword("DATE") || AtKeyword("TIME")) &&
            Peek(1).kind == TokenKind::kString) {
          return TypedLiteral();
        }
        if (IsReservedWord(t.text)) break;
        if (AtKeyword("CASE")) return ParseCase();
        // Flink's niladic time functions, written without parentheses.
        for (std::string_view now :
             {"CURRENT_TIMESTAMP", "LOCALTIMESTAMP", "CURRENT_DATE", "CURRENT_TIME", "LOCALTIME"}) {
          if (!AtKeyword(now) || Peek(1).kind == TokenKind::kLParen) continue;
          Expr e = Expr::Call(std::string(now), {});
          e.pos = PosOf(Advance());
          return e;
        }
        [[fallthrough]];
      case TokenKind::kQuotedWord: {
        if (Peek(1).kind == TokenKind::kLParen) return ParseCall();
        FLOE_ASSIGN_OR_RAISE(const Token* column, ColumnToken());
        column_refs_.push_back({column->text, column->offset});
        Expr e = Expr::Column(column->text);
        e.pos = PosOf(t);
        return e;
      }
      default:
        break;
    }
    return Unexpected("an expression (a column, a literal or '(')");
  }

  static constexpr const char* kTimeUnits =
      "SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER or YEAR";
  // FLOOR(t TO unit) / CEIL(...): FLOOR(t, 'UNIT'), FLOOR(x) as written; TIMESTAMPADD(unit, n,
  // t) / TIMESTAMPDIFF(unit, a, b): the unit first, as a string literal. After the '('.
  Result<Expr> ParseUnitCall(const std::string& name) {
    Expr e;
    if (name != "TIMESTAMPADD" && name != "TIMESTAMPDIFF") {
      FLOE_ASSIGN_OR_RAISE(Expr operand, ParseExpr());
      e = Expr::Call(name == "FLOOR" ? "FLOOR" : "CEIL", {});
      e.children.push_back(std::move(operand));
      if (AcceptKeyword("TO")) {
        FLOE_ASSIGN_OR_RAISE(Expr unit, ParseUnit(IsTimeUnit, kTimeUnits));
        e.children.push_back(std::move(unit));
      }
      FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "TO or ')'"));
      return e;
    }
    FLOE_ASSIGN_OR_RAISE(Expr unit, ParseUnit(IsTimeUnit, kTimeUnits));
    e = Expr::Call(name, {});
    e.children.push_back(std::move(unit));
    for (int i = 0; i < 2; ++i) {
      FLOE_RETURN_NOT_OK(Expect(TokenKind::kComma, "','"));
      FLOE_ASSIGN_OR_RAISE(Expr arg, ParseExpr());
      e.children.push_back(std::move(arg));
    }
    FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "')'"));
    return e;
  }

  // A time unit keyword (SECOND, ...) as the upper-case string literal the functions take.
  Result<Expr> ParseUnit(bool (*known)(std::string_view), std::string_view units) {
    const Token& unit = Peek();
    if (unit.kind != TokenKind::kWord || !known(Upper(unit.text))) {
      return Unexpected("a unit (" + std::string(units) + ")");
    }
    Expr literal = Expr::Lit(Literal::String(Upper(Advance().text)));
    literal.pos = PosOf(unit);
    return literal;
  }

  // name ( [DISTINCT] expr, ... ) | COUNT(*) | CAST(expr AS type). Which functions exist and
  // where they may stand is checked later (computed columns here, queries by the planner).
  Result<Expr> ParseCall() {
    const Token& name_token = Advance();
    std::string name = Upper(name_token.text);
    Advance();  // (
    FLOE_RETURN_NOT_OK(Nest(name_token));
    Expr e;
    // Flink functions whose arguments floe's grammar does not take: named where they stand.
    for (std::string_view f : {"JSON_OBJECTAGG", "JSON_ARRAYAGG", "JSON_OBJECT", "JSON_ARRAY"}) {
      if (name == f) return ErrorAt(name_token.offset, name + " is not supported yet");
    }
    for (std::string_view f : {"TUMBLE", "HOP", "SESSION", "CUMULATE"}) {
      if (name != f) continue;
      return ErrorAt(
          name_token.offset,
          f == "CUMULATE"
              ? std::string("CUMULATE is a window table-valued function: FROM "
                            "TABLE(CUMULATE(TABLE t, DESCRIPTOR(time), step, size))")
              : "the group window function " + name + "(time, interval) stands in GROUP BY only");
    }
    for (std::string_view f : {"TUMBLE_", "HOP_", "SESSION_"}) {
      if (!name.starts_with(f)) continue;
      const std::string part = name.substr(f.size());
      if (part != "START" && part != "END" && part != "ROWTIME" && part != "PROCTIME") continue;
      FLOE_ASSIGN_OR_RAISE(Expr aux, ParseGroupWindowAuxiliary(name_token, name));
      --depth_;
      return aux;
    }
    if (name == "CAST" || name == "TRY_CAST") {
      FLOE_ASSIGN_OR_RAISE(Expr operand, ParseExprOrNull());
      FLOE_RETURN_NOT_OK(ExpectKeyword("AS"));
      FLOE_ASSIGN_OR_RAISE(SqlType type, ParseSqlType());
      e = Expr::Cast(std::move(operand), type);
      if (name == "TRY_CAST") e.name = name;
      FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "')'"));
    } else if (name == "EXTRACT") {  // EXTRACT(unit FROM t): EXTRACT('UNIT', t)
      const Token& unit = Peek();
      if (unit.kind != TokenKind::kWord || !IsExtractUnit(Upper(unit.text))) {
        return Unexpected(
            "a unit (YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, "
            "MILLISECOND, MICROSECOND, DOY, DOW, ISODOW)");
      }
      Expr unit_literal = Expr::Lit(Literal::String(Upper(Advance().text)));
      unit_literal.pos = PosOf(unit);
      FLOE_RETURN_NOT_OK(ExpectKeyword("FROM"));
      FLOE_ASSIGN_OR_RAISE(Expr operand, ParseExpr());
      e = Expr::Call("EXTRACT", {});
      e.children.push_back(std::move(unit_literal));
      e.children.push_back(std::move(operand));
      FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "')'"));
    } else if (((name == "FLOOR" || name == "CEIL" || name == "CEILING") &&
                Peek().kind != TokenKind::kRParen) ||
               name == "TIMESTAMPADD" || name == "TIMESTAMPDIFF") {
      FLOE_ASSIGN_OR_RAISE(e, ParseUnitCall(name));
    } else if (name == "TRIM" &&
               (AtKeyword("BOTH") || AtKeyword("LEADING") || AtKeyword("TRAILING") ||
                AtKeyword("FROM", 1) || AtKeyword("FROM"))) {
      FLOE_ASSIGN_OR_RAISE(e, ParseTrim());
    } else if (name == "POSITION" && Peek().kind != TokenKind::kRParen) {
      // POSITION(search IN s): the operand stops before IN, which would read as a predicate
      FLOE_ASSIGN_OR_RAISE(Expr search, ParseAdditive());
      FLOE_RETURN_NOT_OK(ExpectKeyword("IN"));
      FLOE_ASSIGN_OR_RAISE(Expr s, ParseExpr());
      FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "')'"));
      e = Expr::Call("POSITION", {});
      e.children.push_back(std::move(search));
      e.children.push_back(std::move(s));
    } else if ((name == "SUBSTRING" || name == "SUBSTR") && Peek().kind != TokenKind::kRParen) {
      // SUBSTRING(s FROM start [FOR length]), or the comma form
      FLOE_ASSIGN_OR_RAISE(Expr operand, ParseExpr());
      e = Expr::Call("SUBSTRING", {});
      e.children.push_back(std::move(operand));
      const bool from = AcceptKeyword("FROM");
      if (from || Accept(TokenKind::kComma)) {
        FLOE_ASSIGN_OR_RAISE(Expr start, ParseExpr());
        e.children.push_back(std::move(start));
        if (from ? AcceptKeyword("FOR") : Accept(TokenKind::kComma)) {
          FLOE_ASSIGN_OR_RAISE(Expr length, ParseExpr());
          e.children.push_back(std::move(length));
        }
      }
      FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, from ? "FOR or ')'" : "',' or ')'"));
    } else {
      e = Expr::Call(name, {});
      if (Peek().kind == TokenKind::kStar) {
        if (name != "COUNT") {
          return ErrorAt(Peek().offset, "only COUNT takes '*', " + name + " does not");
        }
        Advance();
        e.star = true;
        FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "')'"));
      } else if (!Accept(TokenKind::kRParen)) {
        if (AtKeyword("DISTINCT") && Peek(1).kind != TokenKind::kRParen &&
            Peek(1).kind != TokenKind::kComma) {
          Advance();
          e.distinct = true;
        }
        do {
          FLOE_ASSIGN_OR_RAISE(Expr arg, name == "IF" ? ParseExprOrNull() : ParseExpr());
          e.children.push_back(std::move(arg));
        } while (Accept(TokenKind::kComma));
        FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "',' or ')'"));
      }
    }
    --depth_;
    e.pos = PosOf(name_token);
    if (name == "IFNULL" || name == "NOW") {  // Flink's names for COALESCE, CURRENT_TIMESTAMP
      e.name = name == "IFNULL" ? "COALESCE" : "CURRENT_TIMESTAMP";
    }
    if ((name == "IF" || name == "NULLIF") && !e.distinct) {
      return ConditionalCall(name, std::move(e));
    }
    if (IsAggregateName(name) && AtKeyword("FILTER") && Peek(1).kind == TokenKind::kLParen) {
      FLOE_RETURN_NOT_OK(ParseAggregateFilter(&e));
    }
    return e;
  }

  // After an aggregate call: FILTER (WHERE condition), written into its argument as Calcite
  // does for a function that skips NULLs: F(x) FILTER (WHERE c) is F(CASE WHEN c THEN x END),
  // COUNT(*) FILTER (WHERE c) is COUNT(CASE WHEN c THEN 1 END).
  Status ParseAggregateFilter(Expr* call) {
    const Token& filter = Advance();
    Advance();  // (
    FLOE_RETURN_NOT_OK(ExpectKeyword("WHERE"));
    FLOE_ASSIGN_OR_RAISE(Expr condition, ParseExpr());
    FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "')'"));
    if (call->children.size() > 1) {
      return ErrorAt(filter.offset, "FILTER takes an aggregate of one argument or *");
    }
    Expr value = call->star ? Expr::Lit(Literal::Integer(1)) : std::move(call->children[0]);
    if (call->star) value.pos = PosOf(filter);
    std::vector<Expr> parts;
    parts.push_back(std::move(condition));
    parts.push_back(std::move(value));
    parts.push_back(Expr::Lit(Literal::Null()));
    parts.back().pos = PosOf(filter);
    Expr when = Expr::Case(std::move(parts));
    when.pos = PosOf(filter);
    call->star = false;
    call->children.clear();
    call->children.push_back(std::move(when));
    return Status::OK();
  }

  // After TRIM(: [BOTH | LEADING | TRAILING] [characters] FROM s, or [characters] FROM s, as
  // Calcite parses it; LEADING is LTRIM(s, characters), TRAILING RTRIM, BOTH (the default) TRIM.
  Result<Expr> ParseTrim() {
    std::string name = "TRIM";
    if (AcceptKeyword("LEADING")) {
      name = "LTRIM";
    } else if (AcceptKeyword("TRAILING")) {
      name = "RTRIM";
    } else {
      (void)AcceptKeyword("BOTH");
    }
    std::optional<Expr> characters;
    if (!AtKeyword("FROM")) {
      FLOE_ASSIGN_OR_RAISE(Expr c, ParseExpr());
      characters = std::move(c);
    }
    FLOE_RETURN_NOT_OK(ExpectKeyword("FROM"));
    FLOE_ASSIGN_OR_RAISE(Expr operand, ParseExpr());
    FLOE_RETURN_NOT_OK(Expect(TokenKind::kRParen, "')'"));
    Expr e = Expr::Call(name, {});
    e.children.push_back(std::move(operand));
    if (characters) e.children.push_back(std::move(*characters));
    return e;
  }

  // ---- computed columns -------------------------------------------------------------------

  struct TypedExpr {
    SqlType type;
    bool nullable = true;
  };

  // Sets a computed column's type from its expression: columns (physical ones only, as in
  // Flink), literals, predicates, CAST and TO_TIMESTAMP_LTZ(epoch, 0 | 3).
  Status TypeComputedColumn(const CreateTable& table, ColumnDef* column) {
    FLOE_ASSIGN_OR_RAISE(TypedExpr typed, TypeOf(table, *column->computed));
    column->type = typed.type.type;
    column->precision = typed.type.precision;
    column->not_null = !typed.nullable;
    return Status::OK();
  }

  Result<TypedExpr> TypeOf(const CreateTable& table, const Expr& e) {
    switch (e.kind) {
      case ExprKind::kColumn: {
        const ColumnDef* c = table.FindColumn(e.name);
        if (c == nullptr) {
          return ErrorAt(e.pos.offset, "unknown column " + Name(e.name) + " in table " +
                                           Name(table.name) + " (" + JoinNames(table.columns) +
                                           ")");
        }
        if (c->computed) {
          return ErrorAt(e.pos.offset, "column " + Name(e.name) +
                                           " is computed; a computed column may only use "
                                           "physical columns");
        }
        return TypedExpr{c->sql_type(), !c->not_null};
      }
      case ExprKind::kLiteral: {
        const Literal& l = e.literal;
        switch (l.kind) {
          case Literal::Kind::kBoolean:
            return TypedExpr{{DataType::Boolean(), 0}, false};
          case Literal::Kind::kInteger: {
            bool fits_int = l.integer >= std::numeric_limits<int32_t>::min() &&
                            l.integer <= std::numeric_limits<int32_t>::max();
            return TypedExpr{{fits_int ? DataType::Int32() : DataType::Int64(), 0}, false};
          }
          case Literal::Kind::kDecimal: {
            Int128 unscaled = 0;
            Result<DataType> type = DecimalLiteralType(l.text, &unscaled);
            if (!type.ok()) return ErrorAt(e.pos.offset, type.status().message());
            return TypedExpr{{*type, 0}, false};
          }
          case Literal::Kind::kDouble:
            return TypedExpr{{DataType::Double(), 0}, false};
          case Literal::Kind::kString:
            return TypedExpr{{DataType::String(), 0}, false};
          case Literal::Kind::kNull:
            return ErrorAt(e.pos.offset, "NULL is not a value here; write CAST(NULL AS type)");
        }
        return Status::Internal("unknown literal kind");
      }
      case ExprKind::kCompare:
      case ExprKind::kAnd:
      case ExprKind::kOr:
      case ExprKind::kNot:
      case ExprKind::kIsNull:
      case ExprKind::kIsNotNull: {
        bool nullable = false;
        for (const Expr& child : e.children) {
          FLOE_ASSIGN_OR_RAISE(TypedExpr t, TypeOf(table, child));
          nullable = nullable || t.nullable;
        }
        if (e.kind == ExprKind::kIsNull || e.kind == ExprKind::kIsNotNull) nullable = false;
        return TypedExpr{{DataType::Boolean(), 0}, nullable};
      }
      case ExprKind::kCase:
        return TypeOfCase(table, e);
      case ExprKind::kCast:
        return TypeOfCast(table, e);
      case ExprKind::kArith:
      case ExprKind::kNegate:
        return TypeOfArithmetic(table, e, e.kind == ExprKind::kNegate, e.arith);
      case ExprKind::kCall: {
        if (e.name == "MOD" && e.children.size() == 2 && !e.distinct) {
          return TypeOfArithmetic(table, e, false, ArithOp::kMod);
        }
        if (e.name == "CURRENT_WATERMARK") {  // the rowtime is not one yet where it is declared
          return ErrorAt(e.pos.offset, "CURRENT_WATERMARK is not allowed in a computed column");
        }
        if (!e.distinct && !e.star && !IsAggregateName(e.name) && e.name != "TO_TIMESTAMP_LTZ") {
          FLOE_ASSIGN_OR_RAISE(std::optional<TypedExpr> typed, TypeOfScalarFunction(table, e));
          if (typed) return *typed;
        }
        if (e.name == "TO_TIMESTAMP_LTZ") {
          if (e.children.size() != 2 || e.distinct) {
            return ErrorAt(e.pos.offset,
                           "TO_TIMESTAMP_LTZ takes (epoch, precision): TO_TIMESTAMP_LTZ(ts, 3) "
                           "for epoch milliseconds, TO_TIMESTAMP_LTZ(ts, 0) for seconds");
          }
          FLOE_ASSIGN_OR_RAISE(TypedExpr epoch, TypeOf(table, e.children[0]));
          if (!IsNumericType(epoch.type.type.id)) {
            return ErrorAt(e.children[0].pos.offset,
                           "TO_TIMESTAMP_LTZ needs a numeric epoch, got " + ToString(epoch.type));
          }
          const Expr& p = e.children[1];
          if (p.kind != ExprKind::kLiteral || p.literal.kind != Literal::Kind::kInteger ||
              (p.literal.integer != 0 && p.literal.integer != 3)) {
            return ErrorAt(p.pos.offset,
                           "TO_TIMESTAMP_LTZ's precision must be the literal 0 (epoch seconds) "
                           "or 3 (epoch milliseconds)");
          }
          return TypedExpr{{DataType::TimestampTz(), static_cast<int>(p.literal.integer)},
                           epoch.nullable};
        }
        if (IsAggregateName(e.name)) {
          return ErrorAt(e.pos.offset,
                         "aggregate function " + e.name + " is not allowed in a computed column");
        }
        return ErrorAt(e.pos.offset,
                       "function " + e.name +
                           " is not supported yet; computed columns support "
                           "arithmetic, CAST, TO_TIMESTAMP_LTZ and the functions in docs/sql.md");
      }
    }
    return Status::Internal("unknown expression kind");
  }

  // A scalar function floe evaluates (ScalarFunctionType's list), or nullopt for another name.
  Result<std::optional<TypedExpr>> TypeOfScalarFunction(const CreateTable& table, const Expr& e) {
    std::vector<DataType> types;
    bool nullable = false, all_nullable = true;
    for (const Expr& child : e.children) {
      FLOE_ASSIGN_OR_RAISE(TypedExpr t, TypeOf(table, child));
      types.push_back(t.type.type);
      nullable = nullable || t.nullable;
      all_nullable = all_nullable && t.nullable;
    }
    Result<DataType> type = ScalarFunctionType(e.name, types);
    if (type.status().code() == StatusCode::kNotFound) return std::optional<TypedExpr>();
    if (!type.ok()) return ErrorAt(e.pos.offset, type.status().message());
    // COALESCE is NOT NULL when one argument is; SUBSTRING may be NULL (a negative length);
    // the others are NULL when an argument is.
    if (e.name == "COALESCE") nullable = all_nullable;
    if (e.name == "SUBSTRING" || e.name == "TO_TIMESTAMP" || e.name == "JSON_VALUE") {
      nullable = true;
    }
    const bool timestamp = type->id == TypeId::kTimestamp || type->id == TypeId::kTimestampTz;
    return std::optional<TypedExpr>(TypedExpr{{*type, timestamp ? 3 : 0}, nullable});
  }

  // CAST(x AS t): the casts Flink allows between floe's types; CAST(NULL AS t) is a NULL of t.
  Result<TypedExpr> TypeOfCast(const CreateTable& table, const Expr& e) {
    const Expr& operand = e.children.at(0);
    if (operand.kind == ExprKind::kLiteral && operand.literal.kind == Literal::Kind::kNull) {
      return TypedExpr{e.cast_type, true};
    }
    FLOE_ASSIGN_OR_RAISE(TypedExpr from, TypeOf(table, operand));
    TypeId a = from.type.type.id, b = e.cast_type.type.id;
    auto temporal = [](TypeId id) {
      return id == TypeId::kDate || id == TypeId::kTimestamp || id == TypeId::kTimestampTz;
    };
    // TIME from and to the timestamps (the time of day; 1970-01-01 at it), not from a DATE.
    auto with_time = [&](TypeId x, TypeId y) {
      return x == TypeId::kTime && (y == TypeId::kTimestamp || y == TypeId::kTimestampTz);
    };
    bool ok =
        a == b || a == TypeId::kString || b == TypeId::kString ||
        (IsNumericType(a) && IsNumericType(b)) || (temporal(a) && temporal(b)) || with_time(a, b) ||
        with_time(b, a) || (IsNumericType(a) && b == TypeId::kTimestampTz) ||
        (a == TypeId::kBoolean && IsNumericType(b)) || (IsNumericType(a) && b == TypeId::kBoolean);
    if (!ok) {
      std::string hint = IsNumericType(a) && b == TypeId::kTimestamp
                             ? "; for epoch numbers use TO_TIMESTAMP_LTZ(epoch, 3) (and "
                               "CAST that to TIMESTAMP(3))"
                             : "";
      return ErrorAt(e.pos.offset,
                     "cannot CAST " + ToString(from.type) + " to " + ToString(e.cast_type) + hint);
    }
    return TypedExpr{e.cast_type, from.nullable || !e.name.empty()};
  }

  // CASE: BOOLEAN conditions; the results' common type (CommonType), NULL results aside.
  Result<TypedExpr> TypeOfCase(const CreateTable& table, const Expr& e) {
    std::vector<DataType> types;
    bool nullable = false;
    int precision = 0;  // of timestamps
    for (size_t i = 0; i < e.children.size(); ++i) {
      const Expr& child = e.children[i];
      const bool result = i % 2 == 1 || i + 1 == e.children.size();
      if (result && child.kind == ExprKind::kLiteral &&
          child.literal.kind == Literal::Kind::kNull) {
        nullable = true;
        continue;
      }
      FLOE_ASSIGN_OR_RAISE(TypedExpr t, TypeOf(table, child));
      if (!result && t.type.type.id != TypeId::kBoolean) {
        return ErrorAt(child.pos.offset, "CASE WHEN needs a BOOLEAN condition, but " +
                                             ToString(child) + " is " + ToString(t.type));
      }
      if (result) {
        types.push_back(t.type.type);
        nullable = nullable || t.nullable;
        precision = std::max(precision, t.type.precision);
      }
    }
    if (types.empty()) {
      return ErrorAt(e.pos.offset, "CASE needs a result that is not NULL (ELSE or a THEN)");
    }
    Result<DataType> type = CommonType(types);
    if (!type.ok()) return ErrorAt(e.pos.offset, "CASE's results: " + type.status().message());
    return TypedExpr{{*type, precision}, nullable};
  }

  // `a op b`, MOD(a, b) or -a: Flink's result type (scalar_types.h), nullable when an operand is.
  Result<TypedExpr> TypeOfArithmetic(const CreateTable& table, const Expr& e, bool negate,
                                     ArithOp op) {
    std::vector<TypedExpr> operands;
    for (const Expr& child : e.children) {
      FLOE_ASSIGN_OR_RAISE(TypedExpr t, TypeOf(table, child));
      operands.push_back(std::move(t));
    }
    Result<DataType> type = negate
                                ? NegationType(operands[0].type.type)
                                : ArithmeticType(op, operands[0].type.type, operands[1].type.type);
    if (!type.ok()) return ErrorAt(e.pos.offset, type.status().message());
    bool nullable = false;
    for (const TypedExpr& t : operands) nullable = nullable || t.nullable;
    return TypedExpr{{*type, 0}, nullable};
  }

  static bool IsAggregateName(std::string_view name) {
    return name == "COUNT" || name == "SUM" || name == "MIN" || name == "MAX" || name == "AVG";
  }

  Status Nest(const Token& at) {
    if (++depth_ > kMaxNesting) {
      return ErrorAt(at.offset, "expression nested too deeply (more than " +
                                    std::to_string(kMaxNesting) + " levels)");
    }
    return Status::OK();
  }

  Result<Expr> NumberLiteral(const Token& t, bool negative) {
    std::string text = (negative ? "-" : "") + t.text;
    Expr e;
    if (text.find_first_of("eE") != std::string::npos) {
      double v = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || end != text.data() + text.size()) {
        return ErrorAt(t.offset, "number " + text + " is out of range for DOUBLE");
      }
      e = Expr::Lit(Literal::Double(v));
    } else if (int64_t v = 0; text.find('.') == std::string::npos && ParseInt64(text, &v)) {
      e = Expr::Lit(Literal::Integer(v));
    } else {
      e = Expr::Lit(Literal::Decimal(std::move(text)));
    }
    e.pos = PosOf(t);
    return e;
  }

  const SourceText& source_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  Script script_;
  std::vector<NameRef> column_refs_;  // of the INSERT being parsed
  std::vector<NameRef> qualifiers_;   // its `q` of `q.column`, checked against its FROM
  std::vector<GroupWindowCall> group_window_refs_;  // its TUMBLE_START(...) and kin
  std::deque<View> views_;     // CREATE VIEWs and subqueries, written into their queries
  int subquery_depth_ = 0;     // inside FROM ( ... ): a ')' ends the query
  std::string error_context_;  // prefixes error messages: "column 'price': "
  bool in_query_ = false;      // inside an INSERT's query: Unexpected names Flink constructs
  int union_depth_ = -1;       // the subquery depth whose query UNION ALL may go on (-1: none)
};

}  // namespace

Result<Script> ParseScript(std::string_view text, const Variables& variables) {
  FLOE_ASSIGN_OR_RAISE(SourceText source, SourceText::Make(text, variables));
  FLOE_ASSIGN_OR_RAISE(std::vector<Token> tokens, internal::Tokenize(source));
  return Parser(source, std::move(tokens)).ParseScript();
}

Result<std::string> SubstituteVariables(std::string_view text, const Variables& variables) {
  FLOE_ASSIGN_OR_RAISE(SourceText source, SourceText::Make(text, variables));
  return source.text();
}

Result<DataType> ParseDataType(std::string_view text) {
  SourceText source = SourceText::Verbatim(text);
  FLOE_ASSIGN_OR_RAISE(std::vector<Token> tokens, internal::Tokenize(source));
  return Parser(source, std::move(tokens)).ParseTypeOnly();
}

Result<std::vector<ColumnDef>> ParseColumnList(std::string_view text) {
  SourceText source = SourceText::Verbatim(text);
  FLOE_ASSIGN_OR_RAISE(std::vector<Token> tokens, internal::Tokenize(source));
  return Parser(source, std::move(tokens)).ParseColumnListOnly();
}

}  // namespace floe::sql

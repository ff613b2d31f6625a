#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"
#include "floe/sql/ast.h"

// Internal to floe_sql: variable substitution with a position map back to the caller's text,
// and the tokenizer. Not installed, not for other modules.
namespace floe::sql::internal {

// The script text after ${VAR} substitution, plus what is needed to report positions in the
// text as the user wrote it. Immutable once built; holds views of nothing.
class SourceText {
 public:
  // Substitutes variables in `original`. Errors name the reference and its position.
  static Result<SourceText> Make(std::string_view original,
                                 const std::map<std::string, std::string>& variables);
  // The text as is: "${" is not special.
  static SourceText Verbatim(std::string_view original);

  // The text to tokenize.
  const std::string& text() const { return text_; }

  // Position in the original text of byte `offset` of text(). Bytes that came from a
  // variable's value map to the '$' of its reference.
  SourcePos Locate(size_t offset) const;

  // "line L, column C: <message>" plus the source line and a caret under the column; adds the
  // variable's name when `offset` falls inside a substituted value.
  Status Error(size_t offset, std::string_view message) const;

 private:
  struct Substitution {
    size_t out_begin;  // [out_begin, out_end) in text_ holds the value
    size_t out_end;
    size_t in_begin;  // [in_begin, in_end) in original_ holds "${NAME}"
    size_t in_end;
    std::string name;
  };
  const Substitution* Find(size_t offset) const;
  size_t ToOriginal(size_t offset) const;

  std::string original_;
  std::string text_;
  std::vector<Substitution> substitutions_;  // ordered by position
  std::vector<size_t> line_starts_;          // byte offsets in original_
};

enum class TokenKind {
  kWord,        // bare identifier or keyword: [A-Za-z_][A-Za-z0-9_$]*, text as written
  kQuotedWord,  // `identifier`, text unquoted (`` -> `); never a keyword
  kString,      // 'literal', text unescaped ('' -> ')
  kNumber,      // 12, 1.5, .5, 1e3; text as written
  kLParen,
  kRParen,
  kComma,
  kSemicolon,
  kDot,
  kStar,
  kPlus,
  kMinus,
  kSlash,
  kPercent,
  kConcat,  // ||
  kEq,
  kNe,  // <> or !=
  kLt,
  kLe,
  kGt,
  kGe,
  kEnd,  // after the last token (its offset is the end of the last real token)
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;
  size_t offset = 0;  // byte offset in SourceText::text()
};

// Splits source.text() into tokens, skipping whitespace, "-- ..." and "/* ... */" comments.
// The last token is always kEnd.
Result<std::vector<Token>> Tokenize(const SourceText& source);

// ASCII case-insensitive equality, for keywords.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// Words that need backquotes to be used as names (case-insensitive): the keywords that start
// statements and clauses or take part in expressions. Type names and contextual words (KEY,
// FOR, ENFORCED, units) are not reserved.
bool IsReservedWord(std::string_view word);

// True if `name` can be written without backquotes.
bool IsPlainIdentifier(std::string_view name);

}  // namespace floe::sql::internal

#include <algorithm>
#include <cctype>
#include <iterator>
#include <string>
#include <utility>

#include "floe/sql/lexer_internal.h"

namespace floe::sql::internal {
namespace {

bool IsWordStart(char c) {
  auto u = static_cast<unsigned char>(c);
  return std::isalpha(u) || c == '_' || u >= 0x80;  // bytes >= 0x80: UTF-8 letters
}

bool IsWordChar(char c) {
  auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || c == '_' || c == '$' || u >= 0x80;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsVariableNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }

bool IsVariableNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool IsUtf8Continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) ==
                  std::toupper(static_cast<unsigned char>(y));
         });
}

bool IsReservedWord(std::string_view word) {
  static constexpr std::string_view kReserved[] = {
      "AND",      "AS",   "BY",    "CONSTRAINT", "CREATE",    "FALSE", "FROM",        "INSERT",
      "INTERVAL", "INTO", "IS",    "NOT",        "NULL",      "OR",    "PARTITIONED", "PRIMARY",
      "SELECT",   "SET",  "TABLE", "TRUE",       "WATERMARK", "WHERE", "WITH",
  };
  return std::any_of(std::begin(kReserved), std::end(kReserved),
                     [&](std::string_view r) { return EqualsIgnoreCase(r, word); });
}

bool IsPlainIdentifier(std::string_view name) {
  if (name.empty() || !IsWordStart(name[0]) || IsReservedWord(name)) return false;
  return std::all_of(name.begin(), name.end(), IsWordChar);
}

SourceText SourceText::Verbatim(std::string_view original) {
  SourceText src;
  src.original_ = std::string(original);
  src.text_ = src.original_;
  src.line_starts_.push_back(0);
  for (size_t i = 0; i < original.size(); ++i) {
    if (original[i] == '\n') src.line_starts_.push_back(i + 1);
  }
  return src;
}

Result<SourceText> SourceText::Make(std::string_view original,
                                    const std::map<std::string, std::string>& variables) {
  SourceText src = Verbatim(original);
  std::string& out = src.text_;
  out.clear();
  size_t i = 0;
  while (i < original.size()) {
    size_t ref = original.find("${", i);
    if (ref == std::string_view::npos) break;
    out.append(original.substr(i, ref - i));
    size_t name_begin = ref + 2;
    size_t name_end = name_begin;
    if (name_end < original.size() && IsVariableNameStart(original[name_end])) {
      while (name_end < original.size() && IsVariableNameChar(original[name_end])) ++name_end;
    }
    if (name_end == name_begin || name_end >= original.size() || original[name_end] != '}') {
      // Report against the original text: nothing has been substituted at or after `ref`.
      src.text_ = src.original_;
      src.substitutions_.clear();
      return src.Error(ref,
                       "malformed variable reference, expected ${NAME} with NAME made of "
                       "letters, digits and '_'");
    }
    std::string name(original.substr(name_begin, name_end - name_begin));
    auto it = variables.find(name);
    if (it == variables.end()) {
      src.text_ = src.original_;
      src.substitutions_.clear();
      return src.Error(ref, "undefined variable ${" + name + "}; define it with --var " + name +
                                "=VALUE or in the environment");
    }
    size_t out_begin = out.size();
    out.append(it->second);
    src.substitutions_.push_back({out_begin, out.size(), ref, name_end + 1, std::move(name)});
    i = name_end + 1;
  }
  if (i < original.size()) out.append(original.substr(i));
  return src;
}

const SourceText::Substitution* SourceText::Find(size_t offset) const {
  // The last substitution starting at or before `offset`.
  auto it = std::upper_bound(substitutions_.begin(), substitutions_.end(), offset,
                             [](size_t off, const Substitution& s) { return off < s.out_begin; });
  if (it == substitutions_.begin()) return nullptr;
  return &*std::prev(it);
}

size_t SourceText::ToOriginal(size_t offset) const {
  const Substitution* s = Find(offset);
  if (s == nullptr) return offset;
  if (offset < s->out_end) return s->in_begin;
  return s->in_end + (offset - s->out_end);
}

SourcePos SourceText::Locate(size_t offset) const {
  size_t at = std::min(ToOriginal(offset), original_.size());
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), at);
  size_t line_index = static_cast<size_t>(it - line_starts_.begin()) - 1;
  size_t line_start = line_starts_[line_index];
  int column = 1;
  for (size_t i = line_start; i < at; ++i) {
    if (!IsUtf8Continuation(original_[i])) ++column;
  }
  return {static_cast<int>(line_index) + 1, column, offset};
}

Status SourceText::Error(size_t offset, std::string_view message) const {
  SourcePos pos = Locate(offset);
  std::string msg = "line " + std::to_string(pos.line) + ", column " + std::to_string(pos.column) +
                    ": " + std::string(message);
  const Substitution* s = Find(offset);
  if (s != nullptr && offset < s->out_end) {
    msg += " (in the value of ${" + s->name + "})";
  }
  // The source line, and a caret under the column (tabs kept so the caret lines up).
  size_t line_start = line_starts_[static_cast<size_t>(pos.line) - 1];
  size_t line_end = original_.find('\n', line_start);
  if (line_end == std::string::npos) line_end = original_.size();
  std::string_view line = std::string_view(original_).substr(line_start, line_end - line_start);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  msg += "\n  ";
  msg += line;
  msg += "\n  ";
  size_t at = std::min(ToOriginal(offset), original_.size());
  for (size_t i = line_start; i < at && i < line_start + line.size(); ++i) {
    if (original_[i] == '\t') {
      msg += '\t';
    } else if (!IsUtf8Continuation(original_[i])) {
      msg += ' ';
    }
  }
  msg += '^';
  return Status::InvalidArgument(std::move(msg));
}

namespace {

// The end of the number starting at `begin`: digits, an optional fraction and exponent.
Result<size_t> ScanNumber(const SourceText& source, size_t begin) {
  const std::string& s = source.text();
  size_t i = begin;
  while (i < s.size() && IsDigit(s[i])) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && IsDigit(s[i])) ++i;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t exp = i + 1;
    if (exp < s.size() && (s[exp] == '+' || s[exp] == '-')) ++exp;
    if (exp >= s.size() || !IsDigit(s[exp])) {
      return source.Error(i, "malformed number, expected digits after the exponent");
    }
    i = exp;
    while (i < s.size() && IsDigit(s[i])) ++i;
  }
  if (i < s.size() && IsWordStart(s[i])) {
    return source.Error(
        i, "malformed number, expected a delimiter after '" + s.substr(begin, i - begin) + "'");
  }
  return i;
}

// The end of the string literal or quoted identifier whose quote is at `begin`; *text gets what
// it holds. '' inside a string and `` inside a quoted identifier stand for the quote itself.
Result<size_t> ScanQuoted(const SourceText& source, size_t begin, std::string* text) {
  const std::string& s = source.text();
  const char c = s[begin];
  size_t i = begin + 1;
  while (true) {
    if (i >= s.size()) {
      return source.Error(
          begin, c == '\'' ? "unterminated string literal" : "unterminated quoted identifier");
    }
    if (s[i] == c) {
      if (i + 1 < s.size() && s[i + 1] == c) {
        *text += c;
        i += 2;
        continue;
      }
      ++i;
      break;
    }
    *text += s[i++];
  }
  if (c == '`' && text->empty()) return source.Error(begin, "empty quoted identifier ``");
  return i;
}

// The operator or punctuation token at `i`, and its length in bytes.
Result<std::pair<TokenKind, size_t>> ScanSymbol(const SourceText& source, size_t i) {
  const std::string& s = source.text();
  const char c = s[i];
  auto next_is = [&](char n) { return i + 1 < s.size() && s[i + 1] == n; };
  switch (c) {
    case '(':
      return std::pair{TokenKind::kLParen, size_t{1}};
    case ')':
      return std::pair{TokenKind::kRParen, size_t{1}};
    case ',':
      return std::pair{TokenKind::kComma, size_t{1}};
    case ';':
      return std::pair{TokenKind::kSemicolon, size_t{1}};
    case '.':
      return std::pair{TokenKind::kDot, size_t{1}};
    case '*':
      return std::pair{TokenKind::kStar, size_t{1}};
    case '+':
      return std::pair{TokenKind::kPlus, size_t{1}};
    case '-':
      return std::pair{TokenKind::kMinus, size_t{1}};
    case '=':
      return std::pair{TokenKind::kEq, size_t{1}};
    case '<':
      if (next_is('=')) return std::pair{TokenKind::kLe, size_t{2}};
      if (next_is('>')) return std::pair{TokenKind::kNe, size_t{2}};
      return std::pair{TokenKind::kLt, size_t{1}};
    case '>':
      if (next_is('=')) return std::pair{TokenKind::kGe, size_t{2}};
      return std::pair{TokenKind::kGt, size_t{1}};
    case '!':
      if (!next_is('=')) return source.Error(i, "unexpected character '!', did you mean '!='?");
      return std::pair{TokenKind::kNe, size_t{2}};
    case '"':
      return source.Error(i,
                          "unexpected character '\"': strings take single quotes ('text'), "
                          "identifiers backquotes (`name`)");
    case '/':  // "/*" comments are skipped before this
      return std::pair{TokenKind::kSlash, size_t{1}};
    case '%':
      return std::pair{TokenKind::kPercent, size_t{1}};
    case '|':
      if (next_is('|')) return std::pair{TokenKind::kConcat, size_t{2}};
      return source.Error(i, "unexpected character '|', did you mean '||'?");
    case '[':  // Flink's ARRAY[...], MAP[...] and a[i]: collection types floe has not built
      return source.Error(i,
                          "unexpected character '[': ARRAY and MAP values (ARRAY[...], "
                          "MAP[...], element access) are not supported yet");
    default: {
      std::string shown = std::isprint(static_cast<unsigned char>(c))
                              ? std::string("'") + c + "'"
                              : "byte " + std::to_string(static_cast<unsigned char>(c));
      return source.Error(i, "unexpected character " + shown);
    }
  }
}

}  // namespace

Result<std::vector<Token>> Tokenize(const SourceText& source) {
  const std::string& s = source.text();
  std::vector<Token> tokens;
  size_t end_of_last = 0;
  size_t i = 0;
  auto add = [&](TokenKind kind, size_t begin, size_t end, std::string text) {
    tokens.push_back({kind, std::move(text), begin});
    end_of_last = end;
  };
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '-' && i + 1 < s.size() && s[i + 1] == '-') {
      size_t nl = s.find('\n', i);
      i = nl == std::string::npos ? s.size() : nl + 1;
      continue;
    }
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      size_t close = s.find("*/", i + 2);
      if (close == std::string::npos) return source.Error(i, "unterminated comment '/*'");
      i = close + 2;
      continue;
    }
    size_t begin = i;
    if (IsWordStart(c)) {
      while (i < s.size() && IsWordChar(s[i])) ++i;
      add(TokenKind::kWord, begin, i, s.substr(begin, i - begin));
    } else if (IsDigit(c) || (c == '.' && i + 1 < s.size() && IsDigit(s[i + 1]))) {
      FLOE_ASSIGN_OR_RAISE(i, ScanNumber(source, begin));
      add(TokenKind::kNumber, begin, i, s.substr(begin, i - begin));
    } else if (c == '\'' || c == '`') {
      std::string text;
      FLOE_ASSIGN_OR_RAISE(i, ScanQuoted(source, begin, &text));
      add(c == '\'' ? TokenKind::kString : TokenKind::kQuotedWord, begin, i, std::move(text));
    } else {
      FLOE_ASSIGN_OR_RAISE(auto symbol, ScanSymbol(source, begin));
      const auto [kind, len] = symbol;
      i += len;
      add(kind, begin, i, s.substr(begin, len));
    }
  }
  tokens.push_back({TokenKind::kEnd, "", end_of_last});
  return tokens;
}

}  // namespace floe::sql::internal

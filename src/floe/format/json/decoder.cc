#include <simdjson.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <unordered_map>
#include <vector>

#include "floe/common/civil_time.h"
#include "floe/common/undeclared_fields.h"
#include "floe/format/json/json_lines.h"
#include "floe/format/json/text_format_internal.h"

namespace floe::json {

namespace od = simdjson::ondemand;

static_assert(JsonLinesDecoder::kPadding >= simdjson::SIMDJSON_PADDING);

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Equality of short strings without a memcmp call (field names are compared once per value).
inline bool SameText(std::string_view a, std::string_view b) {
  size_t n = a.size();
  if (n != b.size()) return false;
  const char* p = a.data();
  const char* q = b.data();
  if (n >= 8 && n <= 16) {
    uint64_t x0, x1, y0, y1;
    std::memcpy(&x0, p, 8);
    std::memcpy(&y0, q, 8);
    std::memcpy(&x1, p + n - 8, 8);
    std::memcpy(&y1, q + n - 8, 8);
    return ((x0 ^ y0) | (x1 ^ y1)) == 0;
  }
  if (n < 8) {
    for (size_t i = 0; i < n; ++i) {
      if (p[i] != q[i]) return false;
    }
    return true;
  }
  return std::memcmp(p, q, n) == 0;
}

// Whether [p, p + n) holds a '\\'. May read up to 15 bytes past p + n: only for text inside a
// buffer with SIMDJSON_PADDING readable bytes after it.
inline bool HasBackslash(const char* p, size_t n) {
#if defined(__SSE2__)
  const __m128i bs = _mm_set1_epi8('\\');
  for (size_t i = 0; i < n; i += 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, bs)));
    if (n - i < 16) mask &= (1u << (n - i)) - 1;
    if (mask != 0) return true;
  }
  return false;
#else
  return std::memchr(p, '\\', n) != nullptr;
#endif
}

int64_t CountNewlines(const char* p, size_t n) {
  int64_t count = 0;
  for (size_t i = 0; i < n; ++i) count += p[i] == '\n';
  return count;
}

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// U+FEFF in UTF-8. Jackson (so Flink) skips it at the start of its input; so does the decoder.
constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

// The offset just past the '}' closing the object `text` starts with, or npos when the text
// ends first. Counts brackets outside strings only; whether the object is valid JSON is left to
// the parser.
size_t EndOfObject(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// "unexpected content after the JSON object at column N: <text>" for content starting at `at`
// in `line`; the column counts characters (UTF-8 sequences) from 1, as editors do.
Status TrailingContent(std::string_view line, const char* at) {
  size_t offset = static_cast<size_t>(at - line.data());
  size_t column = 1;
  for (size_t i = 0; i < offset; ++i) column += (static_cast<uint8_t>(line[i]) & 0xC0) != 0x80;
  std::string_view rest = TrimRight(line.substr(offset));
  std::string shown;
  if (rest.starts_with(kByteOrderMark)) {
    shown = "a UTF-8 byte-order mark (EF BB BF)";
  } else {
    constexpr size_t kMax = 40;
    size_t n = std::min(rest.size(), kMax);
    while (n < rest.size() && n > 0 && (static_cast<uint8_t>(rest[n]) & 0xC0) == 0x80) --n;
    shown = std::string(rest.substr(0, n)) + (n < rest.size() ? "..." : "");
  }
  return Status::InvalidArgument("unexpected content after the JSON object at column " +
                                 std::to_string(column) + ": " + shown);
}

// JSON number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?. Sets *integral when there is
// neither fraction nor exponent.
bool IsJsonNumber(std::string_view s, bool* integral) {
  size_t i = 0;
  auto digit = [&](size_t k) { return k < s.size() && s[k] >= '0' && s[k] <= '9'; };
  if (i < s.size() && s[i] == '-') ++i;
  if (!digit(i)) return false;
  if (s[i] == '0') {
    ++i;
  } else {
    while (digit(i)) ++i;
  }
  *integral = true;
  if (i < s.size() && s[i] == '.') {
    *integral = false;
    ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    *integral = false;
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  return i == s.size();
}

// How a JSON value looks in an error message: `string "x"`, `number 1.5`, `object`, ...
std::string Describe(std::string_view tok) {
  constexpr size_t kMax = 40;
  std::string_view shown = tok.size() > kMax ? tok.substr(0, kMax) : tok;
  std::string suffix = tok.size() > kMax ? "..." : "";
  if (tok.empty()) return "nothing";
  switch (tok[0]) {
    case '"':
      return "string " + std::string(shown) + (tok.size() > kMax ? "...\"" : "");
    case '{':
      return "object";
    case '[':
      return "array";
    case 't':
    case 'f':
      return "boolean " + std::string(shown) + suffix;
    case 'n':
      return std::string(shown) + suffix;
    default:
      return "number " + std::string(shown) + suffix;
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------

struct JsonLinesDecoder::Impl {
  struct FieldInfo {
    std::string_view name;
    DataType type;
    bool nullable;
  };

  std::shared_ptr<const BatchSchema> schema;
  DecodeOptions options;
  std::vector<FieldInfo> fields;
  std::unordered_map<std::string_view, int> index;  // views into schema->fields[].name
  // seen[i] == row_gen when field i has a value in the row being decoded.
  std::vector<uint64_t> seen;
  uint64_t row_gen = 0;
  std::string bytes;  // decoded base64, reused across rows
  // DecodeOptions::capture_undeclared: the packed fields of the row being decoded, and the type
  // each name got first.
  UndeclaredFieldsWriter undeclared;
  std::map<std::string, DataType, std::less<>> undeclared_types;  // found by string_view
  std::vector<std::string> undeclared_new;  // names the row being decoded gave their type
  Column* undeclared_out = nullptr;
  static constexpr size_t kMaxUndeclaredNames = 1000;
  od::parser parser;
  std::string padded;  // the input plus SIMDJSON_PADDING bytes when the caller has no padding
  int64_t skipped = 0;

  // Per Decode call.
  std::string_view source;
  RecordBatch* out = nullptr;
  std::vector<Column*> columns;  // out's columns, by field
  size_t rows = 0;               // complete rows in *out
  const char* buf = nullptr;     // the input, readable up to buf + capacity
  size_t capacity = 0;

  // Iterate-many batch size: larger batches amortize stage 1; lines longer than this fall back to
  // line-by-line parsing, which has no size limit.
  static constexpr size_t kBatchSize = size_t{1} << 20;

  Status LineError(int64_t line, const std::string& msg) const {
    return Status::InvalidArgument(std::string(source) + ":" + std::to_string(line) + ": " + msg);
  }

  std::string Expected(int idx) const {
    const FieldInfo& f = fields[idx];
    return "field '" + std::string(f.name) + "': expected " + SqlTypeName(f.type) +
           (f.nullable ? "" : " NOT NULL");
  }
  Status Mismatch(int idx, std::string_view tok, std::string_view why = {}) const {
    std::string msg = Expected(idx) + ", got " + Describe(TrimRight(tok));
    if (!why.empty()) msg += " (" + std::string(why) + ")";
    return Status::InvalidArgument(std::move(msg));
  }

  int Lookup(std::string_view key, int hint) const {
    // Fields usually come in schema order: try the next one before hashing.
    if (hint < static_cast<int>(fields.size()) && SameText(fields[hint].name, key)) return hint;
    auto it = index.find(key);
    return it == index.end() ? -1 : it->second;
  }

  Status ParseInteger(int idx, std::string_view tok, int64_t* out_value) {
    bool integral = false;
    if (!IsJsonNumber(tok, &integral)) return Mismatch(idx, tok, "invalid JSON number");
    if (!integral) return Mismatch(idx, tok);
    int64_t v = 0;
    auto [end, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    if (ec != std::errc() || end != tok.data() + tok.size())
      return Mismatch(idx, tok, "out of range");
    if (fields[idx].type.id == TypeId::kInt32 &&
        (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())) {
      return Mismatch(idx, tok, "out of range");
    }
    *out_value = v;
    return Status::OK();
  }

  Status ParseFloating(int idx, od::value& val, std::string_view tok, double* d, float* f) {
    bool is_float = fields[idx].type.id == TypeId::kFloat;
    if (tok[0] == '"') {
      std::string_view s;
      if (val.get_string().get(s) != simdjson::SUCCESS) return Mismatch(idx, tok, "invalid string");
      double v;
      if (s == "NaN") {
        v = std::numeric_limits<double>::quiet_NaN();
      } else if (s == "Infinity") {
        v = std::numeric_limits<double>::infinity();
      } else if (s == "-Infinity") {
        v = -std::numeric_limits<double>::infinity();
      } else {
        return Mismatch(idx, tok);
      }
      *d = v;
      *f = static_cast<float>(v);
      return Status::OK();
    }
    bool integral = false;
    if (!IsJsonNumber(tok, &integral)) return Mismatch(idx, tok, "invalid JSON number");
    // from_chars is exact (fast_float in libstdc++ 12); FLOAT parses as float directly so that
    // the shortest float text written by the encoder reads back to the same float.
    const char* end = tok.data() + tok.size();
    std::from_chars_result r;
    if (is_float) {
      r = std::from_chars(tok.data(), end, *f);
    } else {
      r = std::from_chars(tok.data(), end, *d);
    }
    if (r.ec == std::errc::result_out_of_range) return Mismatch(idx, tok, "out of range");
    if (r.ec != std::errc() || r.ptr != end) return Mismatch(idx, tok, "invalid JSON number");
    return Status::OK();
  }

  Status ParseString(int idx, od::value& val, std::string_view tok, std::string_view* s) {
    if (tok[0] != '"') return Mismatch(idx, tok);
    // Without escapes the text between the quotes is the value: take it from the input rather
    // than have simdjson copy it (stage 1 already validated UTF-8 and control characters, and
    // the token ends at the closing quote).
    if (tok.size() >= 2 && tok.back() == '"') {
      const char* p = tok.data() + 1;
      size_t len = tok.size() - 2;
      if (!HasBackslash(p, len)) {
        *s = std::string_view(p, len);
        return Status::OK();
      }
    }
    if (val.get_string().get(*s) != simdjson::SUCCESS) return Mismatch(idx, tok, "invalid string");
    return Status::OK();
  }

  // Decodes one value and appends it to column `idx`. On error the column may hold a value of
  // the current row; Rollback() removes it.
  Status ParseValue(int idx, od::value& val) {
    Column& col = *columns[idx];
    if (seen[idx] == row_gen) {
      col.Truncate(rows);  // a repeated key: the last value wins
    }
    seen[idx] = row_gen;
    std::string_view tok = TrimRight(val.raw_json_token());
    if (tok.empty())
      return Status::InvalidArgument("field '" + std::string(fields[idx].name) + "': invalid JSON");
    char c = tok[0];
    if (c == 'n') {
      if (tok != "null") return Mismatch(idx, tok, "invalid JSON");
      if (!fields[idx].nullable) return Mismatch(idx, tok);
      col.AppendNull();
      return Status::OK();
    }
    const DataType& type = fields[idx].type;
    switch (type.id) {
      case TypeId::kBoolean:
        if (tok == "true") {
          col.Append<uint8_t>(1);
        } else if (tok == "false") {
          col.Append<uint8_t>(0);
        } else {
          return Mismatch(idx, tok);
        }
        return Status::OK();
      case TypeId::kInt32:
      case TypeId::kInt64: {
        if (c != '-' && (c < '0' || c > '9')) return Mismatch(idx, tok);
        int64_t v = 0;
        FLOE_RETURN_NOT_OK(ParseInteger(idx, tok, &v));
        if (type.id == TypeId::kInt32) {
          col.Append<int32_t>(static_cast<int32_t>(v));
        } else {
          col.Append<int64_t>(v);
        }
        return Status::OK();
      }
      case TypeId::kFloat:
      case TypeId::kDouble: {
        if (c != '-' && c != '"' && (c < '0' || c > '9')) return Mismatch(idx, tok);
        double d = 0;
        float f = 0;
        FLOE_RETURN_NOT_OK(ParseFloating(idx, val, tok, &d, &f));
        if (type.id == TypeId::kFloat) {
          col.Append<float>(f);
        } else {
          col.Append<double>(d);
        }
        return Status::OK();
      }
      case TypeId::kString: {
        std::string_view s;
        FLOE_RETURN_NOT_OK(ParseString(idx, val, tok, &s));
        col.AppendBytes(s);
        return Status::OK();
      }
      case TypeId::kBinary: {
        std::string_view s;
        FLOE_RETURN_NOT_OK(ParseString(idx, val, tok, &s));
        if (!internal::DecodeBase64(s, &bytes)) return Mismatch(idx, tok, "not base64");
        col.AppendBytes(bytes);
        return Status::OK();
      }
      case TypeId::kDate: {
        std::string_view s;
        FLOE_RETURN_NOT_OK(ParseString(idx, val, tok, &s));
        int32_t days = 0;
        if (const char* err = ParseDate(s, &days)) return Mismatch(idx, tok, err);
        col.Append<int32_t>(days);
        return Status::OK();
      }
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz: {
        std::string_view s;
        FLOE_RETURN_NOT_OK(ParseString(idx, val, tok, &s));
        int64_t micros = 0;
        if (const char* err = ParseTimestamp(s, type.id == TypeId::kTimestampTz, &micros)) {
          return Mismatch(idx, tok, err);
        }
        col.Append<int64_t>(micros);
        return Status::OK();
      }
      case TypeId::kTime: {
        std::string_view s;
        FLOE_RETURN_NOT_OK(ParseString(idx, val, tok, &s));
        int64_t micros = 0;
        if (const char* err = ParseTime(s, &micros)) return Mismatch(idx, tok, err);
        col.Append<int64_t>(micros);
        return Status::OK();
      }
      case TypeId::kDecimal: {
        std::string_view s = tok;
        if (c == '"') {
          FLOE_RETURN_NOT_OK(ParseString(idx, val, tok, &s));
        } else {
          bool integral = false;
          if (!IsJsonNumber(tok, &integral)) return Mismatch(idx, tok);
        }
        Int128 dec = 0;
        if (const char* err = internal::ParseDecimal(s, type.precision, type.scale, &dec)) {
          return Mismatch(idx, tok, err);
        }
        col.Append<Int128>(dec);
        return Status::OK();
      }
    }
    return Status::Internal("unknown column type");
  }

  // Decodes one JSON object straight into the columns: each field's value is appended as it
  // is met, then missing nullable fields get nulls. On error the row may be partly appended:
  // the caller must Rollback(). Once it returns OK, the caller commits with ++rows.
  template <typename Doc>
  Status Stage(Doc& doc) {
    od::object obj;
    simdjson::error_code err = doc.get_object().get(obj);
    if (err == simdjson::INCORRECT_TYPE) {
      std::string_view tok;
      if (doc.raw_json_token().get(tok) != simdjson::SUCCESS) tok = {};
      return Status::InvalidArgument("expected a JSON object, got " + Describe(TrimRight(tok)));
    }
    if (err)
      return Status::InvalidArgument(std::string("invalid JSON: ") + simdjson::error_message(err));
    ++row_gen;
    undeclared.Clear();
    undeclared_new.clear();
    int hint = 0;
    for (auto&& field_result : obj) {
      // Used in place: copying the (key, value) pair out of the result costs a store-forwarding
      // stall per field.
      if ((err = field_result.error())) {
        return Status::InvalidArgument(std::string("invalid JSON: ") +
                                       simdjson::error_message(err));
      }
      od::field&& field = std::move(field_result).value_unsafe();
      // The raw key is the text between the quotes (stage 1 validated the closing quote). Only
      // keys with escapes pay for unescaping.
      const char* p = field.key().raw();
      const char* q = p;
      while (*q != '"' && *q != '\\') ++q;
      std::string_view key(p, q - p);
      if (*q == '\\') {
        if ((err = field.unescaped_key().get(key))) {
          return Status::InvalidArgument(std::string("invalid JSON: ") +
                                         simdjson::error_message(err));
        }
      }
      int idx = Lookup(key, hint);
      if (idx < 0) {
        if (undeclared_out != nullptr) {
          od::value value = field.value();
          FLOE_RETURN_NOT_OK(Capture(key, value));
        }
        continue;  // unknown field: skipped by the iterator
      }
      hint = idx + 1;
      FLOE_RETURN_NOT_OK(ParseValue(idx, field.value()));
    }
    for (size_t i = 0; i < fields.size(); ++i) {
      if (seen[i] != row_gen) {
        if (!fields[i].nullable) {
          return Status::InvalidArgument(Expected(static_cast<int>(i)) +
                                         ", got nothing (field missing)");
        }
        columns[i]->AppendNull();
      }
    }
    if (undeclared_out != nullptr) {
      if (undeclared.empty()) {
        undeclared_out->AppendNull();
      } else {
        undeclared_out->AppendBytes(undeclared.Finish());
      }
    }
    return Status::OK();
  }

  // The type an undeclared field `name` gets for a value of `type`: the first one seen for the
  // name, which a later value must match (an integral number reads as DOUBLE where DOUBLE was
  // seen). Errors name the field.
  Result<DataType> UndeclaredType(std::string_view name, DataType type, std::string_view tok) {
    if (name.empty() || name.size() > 128 || std::any_of(name.begin(), name.end(), [](char c) {
          return c == '.' || static_cast<unsigned char>(c) < 0x20;
        })) {
      return Status::InvalidArgument(
          "undeclared field '" + std::string(name.substr(0, 128)) +
          "': a column name must be 1 to 128 bytes without '.' or control characters");
    }
    auto it = undeclared_types.find(name);
    if (it == undeclared_types.end()) {
      if (undeclared_types.size() >= kMaxUndeclaredNames) {
        return Status::InvalidArgument("undeclared field '" + std::string(name) + "': more than " +
                                       std::to_string(kMaxUndeclaredNames) +
                                       " distinct undeclared fields");
      }
      undeclared_types.emplace(std::string(name), type);
      undeclared_new.emplace_back(name);
      return type;
    }
    if (it->second == type) return type;
    if (it->second.id == TypeId::kDouble && type.id == TypeId::kInt64) return it->second;
    return Status::InvalidArgument("undeclared field '" + std::string(name) + "': expected " +
                                   SqlTypeName(it->second) + " as earlier records gave it, got " +
                                   Describe(tok));
  }

  // An undeclared field of the row into `undeclared`.
  Status Capture(std::string_view key, od::value& val) {
    std::string_view tok = TrimRight(val.raw_json_token());
    if (tok.empty())
      return Status::InvalidArgument("field '" + std::string(key) + "': invalid JSON");
    const char c = tok[0];
    if (c == 'n') {
      if (tok != "null")
        return Status::InvalidArgument("field '" + std::string(key) + "': invalid JSON");
      return Status::OK();
    }
    if (c == 't' || c == 'f') {
      if (tok != "true" && tok != "false") {
        return Status::InvalidArgument("field '" + std::string(key) + "': invalid JSON");
      }
      FLOE_RETURN_NOT_OK(UndeclaredType(key, DataType::Boolean(), tok).status());
      undeclared.AddBool(key, tok == "true");
      return Status::OK();
    }
    if (c == '"') {
      std::string_view text;
      if (val.get_string().get(text) != simdjson::SUCCESS) {
        return Status::InvalidArgument("field '" + std::string(key) + "': invalid string");
      }
      FLOE_RETURN_NOT_OK(UndeclaredType(key, DataType::String(), tok).status());
      undeclared.AddString(key, text);
      return Status::OK();
    }
    if (c == '{' || c == '[') {
      std::string_view json;
      simdjson::error_code err;
      if (c == '{') {
        od::object object;
        err = val.get_object().get(object);
        if (!err) err = object.raw_json().get(json);
      } else {
        od::array array;
        err = val.get_array().get(array);
        if (!err) err = array.raw_json().get(json);
      }
      if (err) return Status::InvalidArgument("field '" + std::string(key) + "': invalid JSON");
      FLOE_RETURN_NOT_OK(UndeclaredType(key, DataType::String(), tok).status());
      undeclared.AddString(key, TrimRight(json));
      return Status::OK();
    }
    bool integral = false;
    if (!IsJsonNumber(tok, &integral)) {
      return Status::InvalidArgument("field '" + std::string(key) + "': invalid JSON number " +
                                     Describe(tok));
    }
    int64_t i = 0;
    if (integral) {
      auto [end, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), i);
      integral = ec == std::errc() && end == tok.data() + tok.size();
    }
    FLOE_ASSIGN_OR_RAISE(
        DataType type, UndeclaredType(key, integral ? DataType::Int64() : DataType::Double(), tok));
    if (type.id == TypeId::kInt64) {
      undeclared.AddInt64(key, i);
      return Status::OK();
    }
    double d = 0;
    if (val.get_double().get(d) != simdjson::SUCCESS) {
      return Status::InvalidArgument("field '" + std::string(key) + "': number " + Describe(tok) +
                                     " is out of range");
    }
    undeclared.AddDouble(key, d);
    return Status::OK();
  }

  // Removes whatever a failed Stage appended: no partial row remains.
  void Rollback() {
    out->Truncate(rows);
    // A failed row types no undeclared field.
    for (const std::string& name : undeclared_new) undeclared_types.erase(name);
    undeclared_new.clear();
  }

  // A failed line: an error, or skipped and counted.
  Status OnBadLine(int64_t line, const Status& st) {
    if (options.ignore_parse_errors) {
      ++skipped;
      return Status::OK();
    }
    return LineError(line, st.message());
  }

  // Parses `text` (inside the input buffer) as one document and stages it as a row. Sets
  // *after to where a further value starts on the line, or nullptr. On error the row may be
  // partly appended: the caller must Rollback().
  Status StageText(std::string_view text, const char** after) {
    *after = nullptr;
    size_t room = capacity - (text.data() - buf);
    od::document doc;
    simdjson::error_code err = parser.iterate(text.data(), text.size(), room).get(doc);
    if (err) {
      return Status::InvalidArgument(std::string("invalid JSON: ") + simdjson::error_message(err));
    }
    FLOE_RETURN_NOT_OK(Stage(doc));
    auto location = doc.current_location();
    if (location.error() == simdjson::OUT_OF_BOUNDS) return Status::OK();
    if (location.error()) {
      return Status::InvalidArgument(std::string("invalid JSON: ") +
                                     simdjson::error_message(location.error()));
    }
    *after = location.value_unsafe();
    return Status::OK();
  }

  // Stages the line `raw` (no newline), whose text without surrounding whitespace is `text`.
  // On error the row may be partly appended: the caller must Rollback().
  Status StageLine(std::string_view raw, std::string_view text) {
    if (text.starts_with(kByteOrderMark)) {
      return Status::InvalidArgument(
          "stray UTF-8 byte-order mark (EF BB BF) at the start of the line; only the start of a "
          "file may hold one");
    }
    const char* after = nullptr;
    Status st = StageText(text, &after);
    if (st.ok()) return after == nullptr ? st : TrailingContent(raw, after);
    // simdjson checks that a document ends where its object does before reading the object, so
    // `{"id":4} xyz` fails as an unfinished object. When the line holds a whole object followed
    // by something else, decode the object alone: its own error comes first, else the content
    // after it is the error.
    if (text[0] != '{') return st;
    size_t end = EndOfObject(text);
    if (end == std::string_view::npos || end == text.size()) return st;
    Rollback();
    FLOE_RETURN_NOT_OK(StageText(text.substr(0, end), &after));
    size_t next = end;
    while (IsSpace(text[next])) ++next;
    return TrailingContent(raw, text.data() + next);
  }

  // Decodes the single line [begin, begin + len) of the input (no newline) on its own.
  Status DecodeOneLine(size_t begin, size_t len, int64_t line) {
    std::string_view raw(buf + begin, len);
    std::string_view text = TrimRight(raw);
    size_t lead = 0;
    while (lead < text.size() && IsSpace(text[lead])) ++lead;
    if (lead == text.size()) return Status::OK();  // blank line
    text.remove_prefix(lead);
    Status st = StageLine(raw, text);
    if (!st.ok()) {
      Rollback();
      return OnBadLine(line, st);
    }
    ++rows;
    return Status::OK();
  }

  bool AllSpace(size_t begin, size_t end) const {
    for (size_t i = begin; i < end; ++i) {
      if (!IsSpace(buf[i])) return false;
    }
    return true;
  }

  // Fast path: iterate_many over the whole input, one document per line. Anything that does not
  // look like exactly one object per line, and any stage-1 error, hands the rest of the input
  // (from the line after the last one handled) to the line-by-line path, which gives exact
  // per-line errors. Returns the offset and line number where that path must start.
  //
  // A document is decoded as soon as it is met, but only counts as handled once the next
  // document's start (or the end of the input) shows it was alone on its line: its first '\n'
  // must be followed by nothing but whitespace up to the next document. (A second value on the
  // line would start before that '\n'; the rest of a multi-line object would sit after it.)
  // Until then it is "pending"; a pending document that fails the check is rolled back (row
  // and error alike) and the line-by-line path redoes it. This avoids measuring each document's
  // extent, which costs a walk over its structural indexes.
  Status RunStream(size_t n, int64_t first_line, size_t* resume, int64_t* resume_line) {
    od::document_stream stream;
    if (parser.iterate_many(buf, n, kBatchSize).get(stream) != simdjson::SUCCESS) {
      return Status::OK();
    }
    *resume = 0;
    *resume_line = first_line;
    bool pending = false;
    size_t pending_eol = 0;      // the pending document's first '\n' at or after its start, or n
    int64_t pending_line = 0;    // its line number
    size_t pending_rows = rows;  // rows before it
    Status pending_status;       // its decode error, reported once it is known to be one line
    // Accepts the pending document: its row stays, its error (if any) is reported or counted.
    auto settle = [&]() -> Status {
      pending = false;
      if (!pending_status.ok()) FLOE_RETURN_NOT_OK(OnBadLine(pending_line, pending_status));
      *resume = pending_eol < n ? pending_eol + 1 : n;
      *resume_line = pending_line + 1;
      return Status::OK();
    };
    // Drops the pending document: the line-by-line path starts at its line.
    auto abandon = [&]() {
      if (pending) {
        out->Truncate(pending_rows);
        rows = pending_rows;
        pending = false;
      }
    };
    for (auto it = stream.begin(); it != stream.end(); ++it) {
      od::document_reference doc;
      if ((*it).get(doc) != simdjson::SUCCESS) {
        abandon();
        return Status::OK();
      }
      size_t start = it.current_index();
      if (pending) {
        if (start <= pending_eol || start >= n || !AllSpace(pending_eol, start)) {
          abandon();
          return Status::OK();
        }
        FLOE_RETURN_NOT_OK(settle());
      }
      if (start < *resume || start >= n || buf[start] != '{') return Status::OK();
      int64_t line = *resume_line + CountNewlines(buf + *resume, start - *resume);
      const void* nl = std::memchr(buf + start, '\n', n - start);
      pending = true;
      pending_eol = nl != nullptr ? static_cast<size_t>(static_cast<const char*>(nl) - buf) : n;
      pending_line = line;
      pending_rows = rows;
      pending_status = Stage(doc);
      if (pending_status.ok()) {
        ++rows;
      } else {
        Rollback();
      }
    }
    // An incomplete last document is left to the line-by-line path.
    size_t truncated = stream.truncated_bytes();
    size_t end = truncated > 0 && truncated <= n ? n - truncated : n;
    if (pending) {
      if (!AllSpace(pending_eol, end)) {
        abandon();
        return Status::OK();
      }
      FLOE_RETURN_NOT_OK(settle());
    }
    if (truncated > 0) return Status::OK();
    *resume = n;
    return Status::OK();
  }

  Status Run(std::string_view data, size_t padding, int64_t first_line) {
    // A byte-order mark opening the input (a file's first line, a Kafka message) is skipped,
    // as Jackson does; anywhere else StageLine refuses it.
    if (first_line == 1 && data.starts_with(kByteOrderMark)) {
      data.remove_prefix(kByteOrderMark.size());
    }
    size_t n = data.size();
    if (padding >= simdjson::SIMDJSON_PADDING) {
      // The caller's buffer is readable far enough past the end: parse in place.
      buf = data.data();
      capacity = n + padding;
    } else {
      // simdjson reads up to SIMDJSON_PADDING bytes past the end of its input.
      padded.resize(n + simdjson::SIMDJSON_PADDING);
      std::memcpy(padded.data(), data.data(), n);
      std::memset(padded.data() + n, ' ', simdjson::SIMDJSON_PADDING);
      buf = padded.data();
      capacity = padded.size();
    }
    columns.resize(fields.size());
    for (size_t i = 0; i < fields.size(); ++i) columns[i] = &out->mutable_column(i);
    undeclared_out = options.capture_undeclared ? &out->mutable_column(fields.size()) : nullptr;
    rows = out->num_rows();
    size_t pos = 0;
    int64_t line = first_line;
    FLOE_RETURN_NOT_OK(RunStream(n, first_line, &pos, &line));
    while (pos < n) {
      const void* nl = std::memchr(buf + pos, '\n', n - pos);
      size_t end = nl != nullptr ? static_cast<const char*>(nl) - buf : n;
      FLOE_RETURN_NOT_OK(DecodeOneLine(pos, end - pos, line));
      pos = end + 1;
      ++line;
    }
    return Status::OK();
  }
};

// ---------------------------------------------------------------------------------------------

JsonLinesDecoder::JsonLinesDecoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JsonLinesDecoder::~JsonLinesDecoder() = default;

Result<std::unique_ptr<JsonLinesDecoder>> JsonLinesDecoder::Make(
    std::shared_ptr<const BatchSchema> schema, DecodeOptions options) {
  if (schema == nullptr) return Status::InvalidArgument("json decoder: no schema");
#if defined(__AVX2__) && defined(__x86_64__)
  // Built with FLOE_JSON_AVX2 (see CMakeLists.txt): refuse cleanly rather than fault later.
  if (!__builtin_cpu_supports("avx2")) {
    return Status::NotImplemented(
        "json decoder was built for AVX2 CPUs; rebuild with -DFLOE_JSON_AVX2=OFF");
  }
#endif
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  size_t declared = schema->fields.size();
  if (options.capture_undeclared) {
    if (declared == 0 || schema->fields.back().type.id != TypeId::kString ||
        !schema->fields.back().nullable) {
      return Status::InvalidArgument(
          "json decoder: capturing undeclared fields needs a last nullable STRING field");
    }
    --declared;
  }
  for (size_t i = 0; i < declared; ++i) {
    const Field& f = schema->fields[i];
    if (f.type.id == TypeId::kDecimal && (f.type.precision < 1 || f.type.precision > 38 ||
                                          f.type.scale < 0 || f.type.scale > f.type.precision)) {
      return Status::InvalidArgument("json decoder: field '" + f.name + "' has invalid type " +
                                     SqlTypeName(f.type));
    }
    if (!impl->index.emplace(f.name, static_cast<int>(i)).second) {
      return Status::InvalidArgument("json decoder: duplicate field name '" + f.name + "'");
    }
    impl->fields.push_back({f.name, f.type, f.nullable});
  }
  impl->seen.assign(declared, 0);
  impl->schema = std::move(schema);
  return std::make_unique<JsonLinesDecoder>(std::move(impl));
}

int64_t JsonLinesDecoder::skipped_lines() const { return impl_->skipped; }

Status JsonLinesDecoder::Decode(std::string_view data, std::string_view source, int64_t first_line,
                                RecordBatch* out) {
  return DecodePadded(data, 0, source, first_line, out);
}

Status JsonLinesDecoder::DecodePadded(std::string_view data, size_t padding,
                                      std::string_view source, int64_t first_line,
                                      RecordBatch* out) {
  if (out == nullptr || out->schema() == nullptr ||
      (out->schema() != impl_->schema && !(*out->schema() == *impl_->schema))) {
    return Status::InvalidArgument("json decoder: output batch has a different schema");
  }
  impl_->source = source;
  impl_->out = out;
  Status st = impl_->Run(data, padding, first_line);
  impl_->out = nullptr;
  return st;
}

namespace {

// A JSONPath of `$`, `.name`, `['name']` and `[index]` steps as a JSON Pointer ("/a/0"); false
// for anything else (wildcards, filters, recursive descent).
bool PathToPointer(std::string_view path, std::string* pointer) {
  if (path.empty() || path[0] != '$') return false;
  size_t i = 1;
  auto append = [&](std::string_view step) {
    pointer->push_back('/');
    for (char c : step) {
      if (c == '~') {
        pointer->append("~0");
      } else if (c == '/') {
        pointer->append("~1");
      } else {
        pointer->push_back(c);
      }
    }
  };
  while (i < path.size()) {
    if (path[i] == '.') {
      size_t end = i + 1;
      while (end < path.size() && path[end] != '.' && path[end] != '[') ++end;
      if (end == i + 1 || path.substr(i + 1, end - i - 1) == "*") return false;
      append(path.substr(i + 1, end - i - 1));
      i = end;
    } else if (path[i] == '[') {
      const size_t close = path.find(']', i);
      if (close == std::string_view::npos) return false;
      std::string_view inside = path.substr(i + 1, close - i - 1);
      if (inside.size() >= 2 && inside.front() == '\'' && inside.back() == '\'') {
        append(inside.substr(1, inside.size() - 2));
      } else if (!inside.empty() && std::all_of(inside.begin(), inside.end(),
                                                [](char c) { return c >= '0' && c <= '9'; })) {
        append(inside);
      } else {
        return false;
      }
      i = close + 1;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<std::string> JsonValue(std::string_view json, std::string_view path) {
  std::string pointer;
  if (!PathToPointer(path, &pointer)) return std::nullopt;
  thread_local od::parser parser;
  const simdjson::padded_string padded(json);
  od::document doc;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS) return std::nullopt;
  od::value value;
  if (doc.at_pointer(pointer).get(value) != simdjson::SUCCESS) return std::nullopt;
  od::json_type type;
  if (value.type().get(type) != simdjson::SUCCESS) return std::nullopt;
  switch (type) {
    case od::json_type::string: {
      std::string_view text;
      if (value.get_string().get(text) != simdjson::SUCCESS) return std::nullopt;
      return std::string(text);
    }
    case od::json_type::number:
    case od::json_type::boolean: {
      std::string_view raw = value.raw_json_token();
      while (!raw.empty() && IsSpace(raw.back())) raw.remove_suffix(1);
      return std::string(raw);
    }
    default:
      return std::nullopt;
  }
}

}  // namespace floe::json

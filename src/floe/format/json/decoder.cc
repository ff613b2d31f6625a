#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>
#include <vector>

#include "floe/format/json/json_lines.h"
#include "floe/format/json/text_format_internal.h"

namespace floe::json {

namespace od = simdjson::ondemand;

std::string SqlTypeName(const DataType& type) {
  switch (type.id) {
    case TypeId::kBoolean:
      return "BOOLEAN";
    case TypeId::kInt32:
      return "INT";
    case TypeId::kInt64:
      return "BIGINT";
    case TypeId::kFloat:
      return "FLOAT";
    case TypeId::kDouble:
      return "DOUBLE";
    case TypeId::kString:
      return "STRING";
    case TypeId::kBinary:
      return "BYTES";
    case TypeId::kDate:
      return "DATE";
    case TypeId::kTimestamp:
      return "TIMESTAMP";
    case TypeId::kTimestampTz:
      return "TIMESTAMP_LTZ";
    case TypeId::kDecimal:
      return "DECIMAL(" + std::to_string(type.precision) + ", " + std::to_string(type.scale) + ")";
  }
  return "UNKNOWN";
}

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
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
  // One schema field's value for the row being decoded. Rows are staged here and appended to
  // the columns only once the whole line decoded, so a bad line leaves no partial row.
  struct Slot {
    bool seen = false;
    bool null = false;
    int64_t i = 0;  // boolean, INT, BIGINT, DATE, TIMESTAMP(_LTZ)
    double d = 0;
    float f = 0;
    Int128 dec = 0;
    std::string_view str;  // STRING (into the parser's buffer) or BYTES (into bytes)
    std::string bytes;     // decoded base64, reused across rows
  };
  struct FieldInfo {
    std::string_view name;
    DataType type;
    bool nullable;
  };

  std::shared_ptr<const BatchSchema> schema;
  DecodeOptions options;
  std::vector<FieldInfo> fields;
  std::unordered_map<std::string_view, int> index;  // views into schema->fields[].name
  std::vector<Slot> slots;
  od::parser parser;
  std::string padded;  // the input plus SIMDJSON_PADDING bytes, reused across calls
  int64_t skipped = 0;

  // Per Decode call.
  std::string_view source;
  RecordBatch* out = nullptr;

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
    if (hint < static_cast<int>(fields.size()) && fields[hint].name == key) return hint;
    auto it = index.find(key);
    return it == index.end() ? -1 : it->second;
  }

  Status ParseInteger(int idx, std::string_view tok, Slot* slot) {
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
    slot->i = v;
    return Status::OK();
  }

  Status ParseFloating(int idx, od::value& val, std::string_view tok, Slot* slot) {
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
      slot->d = v;
      slot->f = static_cast<float>(v);
      return Status::OK();
    }
    bool integral = false;
    if (!IsJsonNumber(tok, &integral)) return Mismatch(idx, tok, "invalid JSON number");
    // from_chars is exact (fast_float in libstdc++ 12); FLOAT parses as float directly so that
    // the shortest float text written by the encoder reads back to the same float.
    const char* end = tok.data() + tok.size();
    std::from_chars_result r;
    if (is_float) {
      r = std::from_chars(tok.data(), end, slot->f);
    } else {
      r = std::from_chars(tok.data(), end, slot->d);
    }
    if (r.ec == std::errc::result_out_of_range) return Mismatch(idx, tok, "out of range");
    if (r.ec != std::errc() || r.ptr != end) return Mismatch(idx, tok, "invalid JSON number");
    return Status::OK();
  }

  Status ParseString(int idx, od::value& val, std::string_view tok, std::string_view* s) {
    if (tok[0] != '"') return Mismatch(idx, tok);
    if (val.get_string().get(*s) != simdjson::SUCCESS) return Mismatch(idx, tok, "invalid string");
    return Status::OK();
  }

  Status ParseValue(int idx, od::value& val) {
    Slot& slot = slots[idx];
    std::string_view tok = TrimRight(val.raw_json_token());
    if (tok.empty())
      return Status::InvalidArgument("field '" + std::string(fields[idx].name) + "': invalid JSON");
    slot.seen = true;
    slot.null = false;
    char c = tok[0];
    if (c == 'n') {
      if (tok != "null") return Mismatch(idx, tok, "invalid JSON");
      if (!fields[idx].nullable) return Mismatch(idx, tok);
      slot.null = true;
      return Status::OK();
    }
    const DataType& type = fields[idx].type;
    switch (type.id) {
      case TypeId::kBoolean:
        if (tok == "true") {
          slot.i = 1;
        } else if (tok == "false") {
          slot.i = 0;
        } else {
          return Mismatch(idx, tok);
        }
        return Status::OK();
      case TypeId::kInt32:
      case TypeId::kInt64:
        if (c != '-' && (c < '0' || c > '9')) return Mismatch(idx, tok);
        return ParseInteger(idx, tok, &slot);
      case TypeId::kFloat:
      case TypeId::kDouble:
        if (c != '-' && c != '"' && (c < '0' || c > '9')) return Mismatch(idx, tok);
        return ParseFloating(idx, val, tok, &slot);
      case TypeId::kString:
        return ParseString(idx, val, tok, &slot.str);
      case TypeId::kBinary: {
        std::string_view s;
        FLOE_RETURN_NOT_OK(ParseString(idx, val, tok, &s));
        if (!internal::DecodeBase64(s, &slot.bytes)) return Mismatch(idx, tok, "not base64");
        slot.str = slot.bytes;
        return Status::OK();
      }
      case TypeId::kDate: {
        std::string_view s;
        FLOE_RETURN_NOT_OK(ParseString(idx, val, tok, &s));
        int32_t days = 0;
        if (const char* err = internal::ParseDate(s, &days)) return Mismatch(idx, tok, err);
        slot.i = days;
        return Status::OK();
      }
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz: {
        std::string_view s;
        FLOE_RETURN_NOT_OK(ParseString(idx, val, tok, &s));
        if (const char* err =
                internal::ParseTimestamp(s, type.id == TypeId::kTimestampTz, &slot.i)) {
          return Mismatch(idx, tok, err);
        }
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
        if (const char* err = internal::ParseDecimal(s, type.precision, type.scale, &slot.dec)) {
          return Mismatch(idx, tok, err);
        }
        return Status::OK();
      }
    }
    return Status::Internal("unknown column type");
  }

  // Decodes one JSON object into the slots; Commit() then appends the row. Nothing touches the
  // columns before the whole line is known to be good.
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
    for (Slot& s : slots) s.seen = false;
    int hint = 0;
    for (auto field_result : obj) {
      od::field field;
      if ((err = std::move(field_result).get(field))) {
        return Status::InvalidArgument(std::string("invalid JSON: ") +
                                       simdjson::error_message(err));
      }
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
      if (idx < 0) continue;  // unknown field: skipped by the iterator
      hint = idx + 1;
      FLOE_RETURN_NOT_OK(ParseValue(idx, field.value()));
    }
    for (size_t i = 0; i < fields.size(); ++i) {
      if (!slots[i].seen) {
        if (!fields[i].nullable) {
          return Status::InvalidArgument(Expected(static_cast<int>(i)) +
                                         ", got nothing (field missing)");
        }
        slots[i].null = true;
      }
    }
    return Status::OK();
  }

  void Commit() {
    for (size_t i = 0; i < fields.size(); ++i) {
      const Slot& s = slots[i];
      Column& col = out->mutable_column(i);
      if (s.null) {
        col.AppendNull();
        continue;
      }
      switch (fields[i].type.id) {
        case TypeId::kBoolean:
          col.Append<uint8_t>(static_cast<uint8_t>(s.i));
          break;
        case TypeId::kInt32:
        case TypeId::kDate:
          col.Append<int32_t>(static_cast<int32_t>(s.i));
          break;
        case TypeId::kInt64:
        case TypeId::kTimestamp:
        case TypeId::kTimestampTz:
          col.Append<int64_t>(s.i);
          break;
        case TypeId::kFloat:
          col.Append<float>(s.f);
          break;
        case TypeId::kDouble:
          col.Append<double>(s.d);
          break;
        case TypeId::kString:
        case TypeId::kBinary:
          col.AppendBytes(s.str);
          break;
        case TypeId::kDecimal:
          col.Append<Int128>(s.dec);
          break;
      }
    }
  }

  // A failed line: an error, or skipped and counted.
  Status OnBadLine(int64_t line, const Status& st) {
    if (options.ignore_parse_errors) {
      ++skipped;
      return Status::OK();
    }
    return LineError(line, st.message());
  }

  // Decodes the single line [begin, begin + len) of `padded` (no newline) on its own.
  Status DecodeOneLine(size_t begin, size_t len, int64_t line) {
    std::string_view text = TrimRight(std::string_view(padded.data() + begin, len));
    size_t lead = 0;
    while (lead < text.size() && IsSpace(text[lead])) ++lead;
    if (lead == text.size()) return Status::OK();  // blank line
    text.remove_prefix(lead);
    size_t capacity = padded.size() - (text.data() - padded.data());
    od::document doc;
    simdjson::error_code err = parser.iterate(text.data(), text.size(), capacity).get(doc);
    Status st;
    if (err) {
      st = Status::InvalidArgument(std::string("invalid JSON: ") + simdjson::error_message(err));
    } else {
      st = Stage(doc);
      if (st.ok() && doc.current_location().error() != simdjson::OUT_OF_BOUNDS) {
        st = Status::InvalidArgument("more than one JSON value on the line");
      }
    }
    if (!st.ok()) return OnBadLine(line, st);
    Commit();
    return Status::OK();
  }

  // Fast path: iterate_many over the whole input, one document per line. Anything that does not
  // look like exactly one object per line, and any stage-1 error, hands the rest of the input
  // (from the line after the last one handled) to the line-by-line path, which gives exact
  // per-line errors. Returns the offset and line number where that path must start.
  Status RunStream(size_t n, int64_t first_line, size_t* resume, int64_t* resume_line) {
    const char* buf = padded.data();
    od::document_stream stream;
    if (parser.iterate_many(buf, n, kBatchSize).get(stream) != simdjson::SUCCESS) {
      return Status::OK();
    }
    *resume = 0;
    *resume_line = first_line;
    for (auto it = stream.begin(); it != stream.end(); ++it) {
      od::document_reference doc;
      if ((*it).get(doc) != simdjson::SUCCESS) return Status::OK();
      size_t start = it.current_index();
      if (start < *resume || start >= n) return Status::OK();
      int64_t line = *resume_line + std::count(buf + *resume, buf + start, '\n');
      std::string_view src = it.source();
      if (src.empty() || src[0] != '{' || start + src.size() > n ||
          std::memchr(src.data(), '\n', src.size()) != nullptr) {
        return Status::OK();
      }
      size_t eol = start + src.size();
      while (eol < n && buf[eol] != '\n') {
        if (!IsSpace(buf[eol])) return Status::OK();  // a second value on the line
        ++eol;
      }
      Status st = Stage(doc);
      if (st.ok()) {
        Commit();
      } else {
        FLOE_RETURN_NOT_OK(OnBadLine(line, st));
      }
      *resume = eol < n ? eol + 1 : n;
      *resume_line = line + 1;
    }
    if (stream.truncated_bytes() > 0) return Status::OK();  // an incomplete last document
    *resume = n;
    return Status::OK();
  }

  Status Run(std::string_view data, int64_t first_line) {
    size_t n = data.size();
    // simdjson reads up to SIMDJSON_PADDING bytes past the end of its input.
    padded.resize(n + simdjson::SIMDJSON_PADDING);
    std::memcpy(padded.data(), data.data(), n);
    std::memset(padded.data() + n, ' ', simdjson::SIMDJSON_PADDING);
    size_t pos = 0;
    int64_t line = first_line;
    FLOE_RETURN_NOT_OK(RunStream(n, first_line, &pos, &line));
    while (pos < n) {
      const void* nl = std::memchr(padded.data() + pos, '\n', n - pos);
      size_t end = nl != nullptr ? static_cast<const char*>(nl) - padded.data() : n;
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
  for (size_t i = 0; i < schema->fields.size(); ++i) {
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
  impl->slots.resize(schema->fields.size());
  impl->schema = std::move(schema);
  return std::make_unique<JsonLinesDecoder>(std::move(impl));
}

int64_t JsonLinesDecoder::skipped_lines() const { return impl_->skipped; }

Status JsonLinesDecoder::Decode(std::string_view data, std::string_view source, int64_t first_line,
                                RecordBatch* out) {
  if (out == nullptr || out->schema() == nullptr ||
      (out->schema() != impl_->schema && !(*out->schema() == *impl_->schema))) {
    return Status::InvalidArgument("json decoder: output batch has a different schema");
  }
  impl_->source = source;
  impl_->out = out;
  Status st = impl_->Run(data, first_line);
  impl_->out = nullptr;
  return st;
}

}  // namespace floe::json

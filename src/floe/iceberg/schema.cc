#include "floe/iceberg/schema.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>
#include "floe/common/civil_time.h"

#include "floe/common/json.h"
#include "floe/iceberg/json_internal.h"

namespace floe::iceberg {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool ParseInt(std::string_view s, int64_t* out) {
  s = Trim(s);
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// Little-endian encoding helpers.
template <typename T>
std::string LittleEndian(T v) {
  std::string out(sizeof(T), '\0');
  std::memcpy(out.data(), &v, sizeof(T));  // x86-64 / aarch64: little-endian hosts only
  return out;
}

template <typename T>
T FromLittleEndian(std::string_view b) {
  T v;
  std::memcpy(&v, b.data(), sizeof(T));
  return v;
}

// Any integral storage kind as int64 / Int128 (lenient for widened types).
std::optional<Int128> AsWide(const Value& v) {
  if (auto* p = std::get_if<int32_t>(&v)) return *p;
  if (auto* p = std::get_if<int64_t>(&v)) return *p;
  if (auto* p = std::get_if<Int128>(&v)) return *p;
  if (auto* p = std::get_if<bool>(&v)) return *p ? 1 : 0;
  return std::nullopt;
}

double AsDouble(const Value& v) {
  if (auto* p = std::get_if<float>(&v)) return *p;
  if (auto* p = std::get_if<double>(&v)) return *p;
  if (auto w = AsWide(v)) return static_cast<double>(*w);
  return 0;
}

std::string_view AsBytes(const Value& v) {
  if (auto* p = std::get_if<std::string>(&v)) return *p;
  return {};
}

std::string Int128ToString(Int128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  // Negate as unsigned so INT128_MIN does not overflow.
  unsigned __int128 u =
      neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string digits;
  while (u != 0) {
    digits.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  if (neg) digits.push_back('-');
  std::reverse(digits.begin(), digits.end());
  return digits;
}

std::string DecimalToString(Int128 unscaled, int scale) {
  std::string s = Int128ToString(unscaled);
  if (scale <= 0) return s;
  bool neg = !s.empty() && s[0] == '-';
  std::string digits = neg ? s.substr(1) : s;
  if (digits.size() <= static_cast<size_t>(scale)) {
    digits.insert(0, static_cast<size_t>(scale) + 1 - digits.size(), '0');
  }
  digits.insert(digits.size() - static_cast<size_t>(scale), ".");
  return neg ? "-" + digits : digits;
}

template <typename F>
std::string FloatToString(F v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  if (ec != std::errc()) return "?";
  return std::string(buf, p);
}

std::string Base64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t n = (static_cast<uint8_t>(in[i]) << 16) | (static_cast<uint8_t>(in[i + 1]) << 8) |
                 static_cast<uint8_t>(in[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (i < in.size()) {
    uint32_t n = static_cast<uint8_t>(in[i]) << 16;
    if (i + 1 < in.size()) n |= static_cast<uint8_t>(in[i + 1]) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// Java's Float.compare / Double.compare: -0.0 < 0.0, NaN above everything and equal to itself.
template <typename F>
int CompareFloating(F a, F b) {
  bool an = std::isnan(a), bn = std::isnan(b);
  if (an || bn) return an == bn ? 0 : (an ? 1 : -1);
  if (a < b) return -1;
  if (a > b) return 1;
  bool as = std::signbit(a), bs = std::signbit(b);
  return as == bs ? 0 : (as ? -1 : 1);
}

}  // namespace

// ---- Schema ------------------------------------------------------------------------------

const Field* Schema::FindById(int32_t id) const {
  for (const Field& f : fields) {
    if (f.field_id == id) return &f;
  }
  return nullptr;
}

const Field* Schema::FindByName(std::string_view name) const {
  for (const Field& f : fields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

int32_t Schema::HighestFieldId() const {
  int32_t highest = 0;
  for (const Field& f : fields) highest = std::max(highest, f.field_id);
  return highest;
}

std::shared_ptr<const BatchSchema> Schema::ToBatchSchema() const {
  auto out = std::make_shared<BatchSchema>();
  out->fields = fields;
  return out;
}

// ---- Flink types -------------------------------------------------------------------------

std::string FlinkTypeName(const DataType& type) {
  // Iceberg timestamps are microseconds: TIMESTAMP(6) / TIMESTAMP_LTZ(6) in Flink's terms.
  std::string name = SqlTypeName(type);
  if (type.id == TypeId::kTimestamp || type.id == TypeId::kTimestampTz) name += "(6)";
  if (type.id == TypeId::kTime) name += "(6)";
  return name;
}

Result<std::vector<Field>> AssignFreshFieldIds(std::vector<Field> columns) {
  std::set<std::string> seen;  // upper-cased: Iceberg engines often resolve names ignoring case
  for (size_t i = 0; i < columns.size(); ++i) {
    Field& f = columns[i];
    std::string where = "column " + std::to_string(i + 1);
    if (f.name.empty()) return Status::InvalidArgument(where + " has no name");
    if (!seen.insert(Upper(f.name)).second) {
      return Status::InvalidArgument(where + " ('" + f.name +
                                     "'): duplicate column name (names are compared "
                                     "case-insensitively)");
    }
    f.field_id = static_cast<int32_t>(i + 1);
  }
  return columns;
}

// ---- Iceberg JSON ------------------------------------------------------------------------

std::string SchemaToJson(const Schema& schema) {
  return DumpJson(internal::SchemaToJsonValue(schema));
}

Result<Schema> SchemaFromJson(std::string_view json) {
  JsonPath at("schema JSON");
  FLOE_ASSIGN_OR_RAISE(OrderedJson j, ParseOrderedJson(json, at));
  return internal::SchemaFromJsonValue(j, at);
}

Result<DataType> ParseIcebergType(std::string_view text) {
  std::string s;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) s.push_back(c);
  }
  static const std::pair<const char*, DataType> kSimple[] = {
      {"boolean", DataType::Boolean()},     {"int", DataType::Int32()},
      {"long", DataType::Int64()},          {"float", DataType::Float()},
      {"double", DataType::Double()},       {"string", DataType::String()},
      {"binary", DataType::Binary()},       {"date", DataType::Date()},
      {"timestamp", DataType::Timestamp()}, {"timestamptz", DataType::TimestampTz()},
      {"time", DataType::Time()},
  };
  for (const auto& [name, type] : kSimple) {
    if (s == name) return type;
  }
  if (s.rfind("decimal(", 0) == 0 && s.back() == ')') {
    std::string_view args = std::string_view(s).substr(8, s.size() - 9);
    size_t comma = args.find(',');
    int64_t p, sc;
    if (comma != std::string_view::npos && ParseInt(args.substr(0, comma), &p) &&
        ParseInt(args.substr(comma + 1), &sc) && p >= 1 && p <= 38 && sc >= 0 && sc <= p) {
      return DataType::Decimal(static_cast<int>(p), static_cast<int>(sc));
    }
    return Status::InvalidArgument("bad Iceberg decimal type '" + std::string(text) +
                                   "' (precision 1..38, scale 0..precision)");
  }
  static const char* kKnownUnsupported[] = {"time",           "uuid",    "timestamp_ns",
                                            "timestamptz_ns", "variant", "unknown"};
  for (const char* name : kKnownUnsupported) {
    if (s == name) {
      return Status::NotImplemented("Iceberg type '" + s + "' is not supported by floe yet");
    }
  }
  if (s.rfind("fixed[", 0) == 0) {
    return Status::NotImplemented("Iceberg type '" + s + "' is not supported by floe yet");
  }
  return Status::InvalidArgument("unknown Iceberg type '" + std::string(text) + "'");
}

// ---- single values -----------------------------------------------------------------------

namespace {

// Java's BigInteger.toByteArray(): minimal two's complement big-endian (0 -> one 0x00 byte).
std::string MinimalBigEndian(Int128 v) {
  unsigned char be[16];
  unsigned __int128 u = static_cast<unsigned __int128>(v);
  for (int i = 15; i >= 0; --i) {
    be[i] = static_cast<unsigned char>(u & 0xff);
    u >>= 8;
  }
  int start = 0;
  // Drop a leading byte while it is pure sign extension of the next byte's top bit.
  while (start < 15) {
    bool redundant = (be[start] == 0x00 && (be[start + 1] & 0x80) == 0) ||
                     (be[start] == 0xff && (be[start + 1] & 0x80) != 0);
    if (!redundant) break;
    ++start;
  }
  return std::string(reinterpret_cast<const char*>(be + start), 16 - start);
}

Result<Int128> FromBigEndian(std::string_view b, std::string_view what) {
  if (b.empty()) return Status::Corruption(std::string(what) + ": empty decimal bytes");
  // Allow redundant sign bytes beyond 16 (some writers pad to a fixed width).
  while (b.size() > 16) {
    uint8_t lead = static_cast<uint8_t>(b[0]);
    uint8_t next_sign = (static_cast<uint8_t>(b[1]) & 0x80) ? 0xff : 0x00;
    if (lead != next_sign) {
      return Status::Corruption(std::string(what) + ": decimal value wider than 128 bits");
    }
    b.remove_prefix(1);
  }
  unsigned __int128 u =
      (static_cast<uint8_t>(b[0]) & 0x80) ? ~static_cast<unsigned __int128>(0) : 0;
  for (char c : b) u = (u << 8) | static_cast<uint8_t>(c);
  return static_cast<Int128>(u);
}

Status WrongSize(const DataType& type, std::string_view bytes, std::string_view expected) {
  return Status::Corruption("bad " + type.ToString() + " value: " + std::to_string(bytes.size()) +
                            " bytes, expected " + std::string(expected));
}

}  // namespace

std::string SerializeValue(const DataType& type, const Value& value) {
  if (std::holds_alternative<std::monostate>(value)) return std::string();
  switch (type.id) {
    case TypeId::kBoolean: {
      auto w = AsWide(value);
      return std::string(1, (w && *w != 0) ? '\x01' : '\x00');
    }
    case TypeId::kInt32:
    case TypeId::kDate:
      return LittleEndian(static_cast<int32_t>(AsWide(value).value_or(0)));
    case TypeId::kInt64:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTime:
      return LittleEndian(static_cast<int64_t>(AsWide(value).value_or(0)));
    case TypeId::kFloat:
      return LittleEndian(static_cast<float>(AsDouble(value)));
    case TypeId::kDouble:
      return LittleEndian(AsDouble(value));
    case TypeId::kString:
    case TypeId::kBinary:
      return std::string(AsBytes(value));
    case TypeId::kDecimal:
      return MinimalBigEndian(AsWide(value).value_or(0));
  }
  return std::string();
}

Result<Value> DeserializeValue(const DataType& type, std::string_view bytes) {
  switch (type.id) {
    case TypeId::kBoolean:
      if (bytes.size() != 1) return WrongSize(type, bytes, "1");
      return Value(bytes[0] != 0);
    case TypeId::kInt32:
    case TypeId::kDate:
      if (bytes.size() != 4) return WrongSize(type, bytes, "4");
      return Value(FromLittleEndian<int32_t>(bytes));
    case TypeId::kInt64:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTime:
      // 4 bytes: a bound written before an int -> long promotion (as Java accepts).
      if (bytes.size() == 4) return Value(static_cast<int64_t>(FromLittleEndian<int32_t>(bytes)));
      if (bytes.size() != 8) return WrongSize(type, bytes, "8");
      return Value(FromLittleEndian<int64_t>(bytes));
    case TypeId::kFloat:
      if (bytes.size() != 4) return WrongSize(type, bytes, "4");
      return Value(FromLittleEndian<float>(bytes));
    case TypeId::kDouble:
      if (bytes.size() == 4) return Value(static_cast<double>(FromLittleEndian<float>(bytes)));
      if (bytes.size() != 8) return WrongSize(type, bytes, "8");
      return Value(FromLittleEndian<double>(bytes));
    case TypeId::kString:
    case TypeId::kBinary:
      return Value(std::string(bytes));
    case TypeId::kDecimal: {
      FLOE_ASSIGN_OR_RAISE(Int128 v, FromBigEndian(bytes, type.ToString()));
      return Value(v);
    }
  }
  return Status::Internal("unknown type");
}

Result<std::string> ParquetStatToIcebergBound(const DataType& type, std::string_view stat) {
  auto need = [&](size_t n) -> Status {
    if (stat.size() != n) {
      return Status::Corruption("Parquet statistic for " + type.ToString() + " has " +
                                std::to_string(stat.size()) + " bytes, expected " +
                                std::to_string(n));
    }
    return Status::OK();
  };
  switch (type.id) {
    case TypeId::kBoolean:
      FLOE_RETURN_NOT_OK(need(1));
      return std::string(1, stat[0] != 0 ? '\x01' : '\x00');
    case TypeId::kInt32:
    case TypeId::kDate:
    case TypeId::kFloat:
      FLOE_RETURN_NOT_OK(need(4));
      return std::string(stat);
    case TypeId::kInt64:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTime:
    case TypeId::kDouble:
      FLOE_RETURN_NOT_OK(need(8));
      return std::string(stat);
    case TypeId::kString:
    case TypeId::kBinary:
      return std::string(stat);
    case TypeId::kDecimal: {
      Int128 unscaled;
      if (type.precision <= 9) {
        FLOE_RETURN_NOT_OK(need(4));
        unscaled = FromLittleEndian<int32_t>(stat);
      } else if (type.precision <= 18) {
        FLOE_RETURN_NOT_OK(need(8));
        unscaled = FromLittleEndian<int64_t>(stat);
      } else {
        Result<Int128> v = FromBigEndian(stat, "Parquet statistic for " + type.ToString());
        if (!v.ok()) return v.status();
        unscaled = *v;
      }
      return MinimalBigEndian(unscaled);
    }
  }
  return Status::Internal("unknown type");
}

int CompareValues(const DataType& type, const Value& a, const Value& b) {
  switch (type.id) {
    case TypeId::kFloat:
      return CompareFloating(static_cast<float>(AsDouble(a)), static_cast<float>(AsDouble(b)));
    case TypeId::kDouble:
      return CompareFloating(AsDouble(a), AsDouble(b));
    case TypeId::kString:
    case TypeId::kBinary: {
      int c = AsBytes(a).compare(AsBytes(b));  // char_traits<char>::compare is memcmp: unsigned
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    default: {
      Int128 x = AsWide(a).value_or(0), y = AsWide(b).value_or(0);
      return x < y ? -1 : (x > y ? 1 : 0);
    }
  }
}

Value ValueAt(const Column& column, size_t row) {
  if (column.IsNull(row)) return std::monostate{};
  switch (column.type().id) {
    case TypeId::kBoolean:
      return column.Get<uint8_t>(row) != 0;
    case TypeId::kInt32:
    case TypeId::kDate:
      return column.Get<int32_t>(row);
    case TypeId::kInt64:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTime:
      return column.Get<int64_t>(row);
    case TypeId::kFloat:
      return column.Get<float>(row);
    case TypeId::kDouble:
      return column.Get<double>(row);
    case TypeId::kString:
    case TypeId::kBinary:
      return std::string(column.GetBytes(row));
    case TypeId::kDecimal:
      return column.Get<Int128>(row);
  }
  return std::monostate{};
}

void AppendValue(Column* column, const Value& value) {
  if (std::holds_alternative<std::monostate>(value)) {
    column->AppendNull();
    return;
  }
  switch (column->type().id) {
    case TypeId::kBoolean:
      column->Append<uint8_t>(AsWide(value).value_or(0) != 0 ? 1 : 0);
      return;
    case TypeId::kInt32:
    case TypeId::kDate:
      column->Append<int32_t>(static_cast<int32_t>(AsWide(value).value_or(0)));
      return;
    case TypeId::kInt64:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTime:
      column->Append<int64_t>(static_cast<int64_t>(AsWide(value).value_or(0)));
      return;
    case TypeId::kFloat:
      column->Append<float>(static_cast<float>(AsDouble(value)));
      return;
    case TypeId::kDouble:
      column->Append<double>(AsDouble(value));
      return;
    case TypeId::kString:
    case TypeId::kBinary:
      column->AppendBytes(AsBytes(value));
      return;
    case TypeId::kDecimal:
      column->Append<Int128>(AsWide(value).value_or(0));
      return;
  }
}

// "2024-01-02T03:04:05", plus ".123456" when the micros are not zero.
constexpr TimestampFormat kValueTimestamps{'T', /*always_micros=*/false, YearStyle::kNoPlusSign};

std::string ValueToString(const DataType& type, const Value& value) {
  if (std::holds_alternative<std::monostate>(value)) return "null";
  switch (type.id) {
    case TypeId::kBoolean:
      return AsWide(value).value_or(0) != 0 ? "true" : "false";
    case TypeId::kInt32:
    case TypeId::kInt64:
      return Int128ToString(AsWide(value).value_or(0));
    case TypeId::kDate:
      return FormatDate(static_cast<int64_t>(AsWide(value).value_or(0)), YearStyle::kNoPlusSign);
    case TypeId::kTimestamp:
      return FormatTimestamp(static_cast<int64_t>(AsWide(value).value_or(0)), kValueTimestamps);
    case TypeId::kTimestampTz:
      return FormatTimestamp(static_cast<int64_t>(AsWide(value).value_or(0)), kValueTimestamps) +
             "+00:00";
    case TypeId::kTime: {  // java.time.LocalTime's text, as Iceberg's human strings
      const int64_t micros = static_cast<int64_t>(AsWide(value).value_or(0));
      std::string text;
      AppendTime(micros, TimestampFormat{'T', /*always_micros=*/false}, &text);
      if (micros % (60 * kMicrosPerSecond) == 0) text.resize(5);           // "10:15"
      if (text.size() == 15 && text.substr(12) == "000") text.resize(12);  // ".123"
      return text;
    }
    case TypeId::kFloat:
      return FloatToString(static_cast<float>(AsDouble(value)));
    case TypeId::kDouble:
      return FloatToString(AsDouble(value));
    case TypeId::kString:
      return std::string(AsBytes(value));
    case TypeId::kBinary:
      return Base64(AsBytes(value));  // as Java's TransformUtil
    case TypeId::kDecimal:
      return DecimalToString(AsWide(value).value_or(0), type.scale);
  }
  return "?";
}

}  // namespace floe::iceberg

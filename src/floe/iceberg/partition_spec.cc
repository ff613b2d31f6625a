#include "floe/iceberg/partition_spec.h"

#include <algorithm>
#include <cctype>
#include <charconv>
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

// Partition path values write years as Java's TransformUtil does (String.format("%04d")): no '+'.
constexpr YearStyle kPathYears = YearStyle::kNoPlusSign;

// "07": a month or hour in a partition path value. REQUIRES: 0 <= v <= 99.
std::string Pad2(int64_t v) {
  return {static_cast<char>('0' + v / 10), static_cast<char>('0' + v % 10)};
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool ParseInt32(std::string_view s, int32_t* out) {
  s = Trim(s);
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

uint32_t Rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

// The integer as Java's BigInteger.toByteArray() (minimal two's complement, big-endian).
std::string MinimalBigEndian(Int128 v) {
  // SerializeValue's decimal encoding is exactly this.
  return SerializeValue(DataType::Decimal(38, 0), Value(v));
}

std::string LongBytes(int64_t v) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &v, 8);  // little-endian hosts
  return out;
}

std::optional<int64_t> AsInt64(const Value& v) {
  if (auto* p = std::get_if<int32_t>(&v)) return *p;
  if (auto* p = std::get_if<int64_t>(&v)) return *p;
  return std::nullopt;
}

// Truncates a UTF-8 string to at most `n` code points (continuation bytes 10xxxxxx are not
// counted as starts).
std::string TruncateUtf8(const std::string& s, int32_t n) {
  int32_t count = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<uint8_t>(s[i]) & 0xC0) != 0x80) {
      if (count == n) return s.substr(0, i);
      ++count;
    }
  }
  return s;
}

bool IsTimeType(TypeId id) {
  return id == TypeId::kDate || id == TypeId::kTimestamp || id == TypeId::kTimestampTz;
}

// Java's URLEncoder (application/x-www-form-urlencoded, UTF-8): keeps [A-Za-z0-9.*_-], turns
// space into '+', percent-encodes every other byte.
std::string UrlEscape(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '.' || c == '-' || c == '*' || c == '_') {
      out.push_back(c);
    } else if (c == ' ') {
      out.push_back('+');
    } else {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    }
  }
  return out;
}

const char* DefaultSuffix(TransformKind kind) {
  switch (kind) {
    case TransformKind::kIdentity:
      return "";
    case TransformKind::kBucket:
      return "_bucket";
    case TransformKind::kTruncate:
      return "_trunc";
    case TransformKind::kYear:
      return "_year";
    case TransformKind::kMonth:
      return "_month";
    case TransformKind::kDay:
      return "_day";
    case TransformKind::kHour:
      return "_hour";
    case TransformKind::kVoid:
      return "_null";
  }
  return "";
}

std::string AllowedSources(TransformKind kind) {
  switch (kind) {
    case TransformKind::kBucket:
      return "int, long, decimal, date, timestamp, timestamptz, string, binary";
    case TransformKind::kTruncate:
      return "int, long, decimal, string, binary";
    case TransformKind::kYear:
    case TransformKind::kMonth:
    case TransformKind::kDay:
      return "date, timestamp, timestamptz";
    case TransformKind::kHour:
      return "timestamp, timestamptz";
    default:
      return "any primitive type";
  }
}

}  // namespace

// ---- Transform ---------------------------------------------------------------------------

std::string Transform::ToString() const {
  switch (kind) {
    case TransformKind::kIdentity:
      return "identity";
    case TransformKind::kBucket:
      return "bucket[" + std::to_string(param) + "]";
    case TransformKind::kTruncate:
      return "truncate[" + std::to_string(param) + "]";
    case TransformKind::kYear:
      return "year";
    case TransformKind::kMonth:
      return "month";
    case TransformKind::kDay:
      return "day";
    case TransformKind::kHour:
      return "hour";
    case TransformKind::kVoid:
      return "void";
  }
  return "unknown";
}

Result<Transform> Transform::Parse(std::string_view text) {
  std::string s = Lower(Trim(text));
  static const std::pair<const char*, TransformKind> kSimple[] = {
      {"identity", TransformKind::kIdentity}, {"year", TransformKind::kYear},
      {"month", TransformKind::kMonth},       {"day", TransformKind::kDay},
      {"hour", TransformKind::kHour},         {"void", TransformKind::kVoid},
  };
  for (const auto& [name, kind] : kSimple) {
    if (s == name) return Transform{kind, 0};
  }
  for (auto [prefix, kind] : {std::pair{"bucket[", TransformKind::kBucket},
                              std::pair{"truncate[", TransformKind::kTruncate}}) {
    size_t n = std::strlen(prefix);
    if (s.size() > n + 1 && s.compare(0, n, prefix) == 0 && s.back() == ']') {
      int32_t param;
      if (!ParseInt32(std::string_view(s).substr(n, s.size() - n - 1), &param) || param <= 0) {
        return Status::InvalidArgument("bad transform '" + std::string(text) +
                                       "': the parameter must be a positive integer");
      }
      return Transform{kind, param};
    }
  }
  return Status::InvalidArgument("unknown partition transform '" + std::string(text) +
                                 "' (expected identity, bucket[N], truncate[W], year, month, "
                                 "day, hour or void)");
}

bool Transform::CanTransform(const DataType& type) const {
  TypeId id = type.id;
  switch (kind) {
    case TransformKind::kIdentity:
    case TransformKind::kVoid:
      return true;
    case TransformKind::kBucket:
      return param > 0 && id != TypeId::kBoolean && id != TypeId::kFloat && id != TypeId::kDouble;
    case TransformKind::kTruncate:
      return param > 0 && (id == TypeId::kInt32 || id == TypeId::kInt64 || id == TypeId::kDecimal ||
                           id == TypeId::kString || id == TypeId::kBinary);
    case TransformKind::kYear:
    case TransformKind::kMonth:
    case TransformKind::kDay:
      return IsTimeType(id);
    case TransformKind::kHour:
      return id == TypeId::kTimestamp || id == TypeId::kTimestampTz;
  }
  return false;
}

DataType Transform::ResultType(const DataType& source) const {
  switch (kind) {
    case TransformKind::kIdentity:
    case TransformKind::kTruncate:
    case TransformKind::kVoid:
      return source;
    case TransformKind::kDay:
      return DataType::Date();  // spec: date, stored as int32 days
    case TransformKind::kBucket:
    case TransformKind::kYear:
    case TransformKind::kMonth:
    case TransformKind::kHour:
      return DataType::Int32();
  }
  return DataType::Int32();
}

uint32_t Murmur3Hash32(std::string_view bytes) {
  constexpr uint32_t c1 = 0xcc9e2d51, c2 = 0x1b873593;
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t len = bytes.size();
  const size_t nblocks = len / 4;
  uint32_t h = 0;  // seed
  for (size_t i = 0; i < nblocks; ++i) {
    uint32_t k = static_cast<uint32_t>(data[4 * i]) |
                 (static_cast<uint32_t>(data[4 * i + 1]) << 8) |
                 (static_cast<uint32_t>(data[4 * i + 2]) << 16) |
                 (static_cast<uint32_t>(data[4 * i + 3]) << 24);
    k *= c1;
    k = Rotl32(k, 15);
    k *= c2;
    h ^= k;
    h = Rotl32(h, 13);
    h = h * 5 + 0xe6546b64;
  }
  const uint8_t* tail = data + nblocks * 4;
  uint32_t k = 0;
  switch (len & 3) {
    case 3:
      k ^= static_cast<uint32_t>(tail[2]) << 16;
      [[fallthrough]];
    case 2:
      k ^= static_cast<uint32_t>(tail[1]) << 8;
      [[fallthrough]];
    case 1:
      k ^= tail[0];
      k *= c1;
      k = Rotl32(k, 15);
      k *= c2;
      h ^= k;
  }
  h ^= static_cast<uint32_t>(len);
  h ^= h >> 16;
  h *= 0x85ebca6b;
  h ^= h >> 13;
  h *= 0xc2b2ae35;
  h ^= h >> 16;
  return h;
}

Value Transform::Apply(const DataType& source, const Value& value) const {
  if (std::holds_alternative<std::monostate>(value) || kind == TransformKind::kVoid) {
    return std::monostate{};
  }
  if (!CanTransform(source)) return std::monostate{};
  switch (kind) {
    case TransformKind::kIdentity:
      return value;
    case TransformKind::kBucket: {
      std::string bytes;
      switch (source.id) {
        case TypeId::kInt32:
        case TypeId::kInt64:
        case TypeId::kDate:
        case TypeId::kTimestamp:
        case TypeId::kTimestampTz:
        case TypeId::kTime:
          bytes = LongBytes(AsInt64(value).value_or(0));
          break;
        case TypeId::kString:
        case TypeId::kBinary: {
          const std::string* s = std::get_if<std::string>(&value);
          if (s != nullptr) bytes = *s;
          break;
        }
        case TypeId::kDecimal: {
          const Int128* d = std::get_if<Int128>(&value);
          bytes = MinimalBigEndian(d ? *d : Int128(AsInt64(value).value_or(0)));
          break;
        }
        default:
          return std::monostate{};
      }
      uint32_t h = Murmur3Hash32(bytes) & 0x7fffffffu;
      return static_cast<int32_t>(h % static_cast<uint32_t>(param));
    }
    case TransformKind::kTruncate: {
      switch (source.id) {
        case TypeId::kInt32: {
          int64_t v = AsInt64(value).value_or(0);
          return static_cast<int32_t>(v - FloorMod(v, param));
        }
        case TypeId::kInt64: {
          int64_t v = AsInt64(value).value_or(0);
          return v - FloorMod(v, param);
        }
        case TypeId::kDecimal: {
          const Int128* d = std::get_if<Int128>(&value);
          Int128 v = d ? *d : Int128(AsInt64(value).value_or(0));
          Int128 r = ((v % param) + param) % param;
          return v - r;
        }
        case TypeId::kString: {
          const std::string* s = std::get_if<std::string>(&value);
          return s ? TruncateUtf8(*s, param) : std::string();
        }
        case TypeId::kBinary: {
          const std::string* s = std::get_if<std::string>(&value);
          return s ? s->substr(0, static_cast<size_t>(param)) : std::string();
        }
        default:
          return std::monostate{};
      }
    }
    case TransformKind::kYear:
    case TransformKind::kMonth:
    case TransformKind::kDay:
    case TransformKind::kHour: {
      int64_t v = AsInt64(value).value_or(0);
      if (kind == TransformKind::kHour) {
        return static_cast<int32_t>(FloorDiv(v, kMicrosPerHour));
      }
      int64_t days = source.id == TypeId::kDate ? v : FloorDiv(v, kMicrosPerDay);
      if (kind == TransformKind::kDay) return static_cast<int32_t>(days);
      CivilDate c = CivilFromDays(days);
      if (kind == TransformKind::kYear) return static_cast<int32_t>(c.year - 1970);
      return static_cast<int32_t>((c.year - 1970) * 12 + (c.month - 1));
    }
    case TransformKind::kVoid:
      return std::monostate{};
  }
  return std::monostate{};
}

// ---- PartitionSpec -----------------------------------------------------------------------

Result<std::vector<DataType>> PartitionSpec::PartitionTypes(const Schema& schema) const {
  std::vector<DataType> types;
  types.reserve(fields.size());
  for (const PartitionField& f : fields) {
    const Field* src = schema.FindById(f.source_id);
    if (src == nullptr) {
      return Status::InvalidArgument("partition field '" + f.name + "': source column id " +
                                     std::to_string(f.source_id) + " is not in the schema");
    }
    if (!f.transform.CanTransform(src->type)) {
      return Status::InvalidArgument("partition field '" + f.name + "': " + f.transform.ToString() +
                                     " cannot apply to column '" + src->name + "' of type " +
                                     src->type.ToString() +
                                     " (allowed: " + AllowedSources(f.transform.kind) + ")");
    }
    types.push_back(f.transform.ResultType(src->type));
  }
  return types;
}

Result<PartitionTuple> PartitionSpec::PartitionOf(const RecordBatch& batch, size_t row) const {
  PartitionTuple tuple;
  tuple.reserve(fields.size());
  const BatchSchema* bs = batch.schema().get();
  if (bs == nullptr) return Status::InvalidArgument("PartitionOf: batch has no schema");
  if (row >= batch.num_rows()) {
    return Status::InvalidArgument("PartitionOf: row " + std::to_string(row) + " out of range (" +
                                   std::to_string(batch.num_rows()) + " rows)");
  }
  for (const PartitionField& f : fields) {
    int index = -1;
    for (size_t i = 0; i < bs->fields.size(); ++i) {
      if (bs->fields[i].field_id == f.source_id) {
        index = static_cast<int>(i);
        break;
      }
    }
    if (index < 0) {
      return Status::InvalidArgument("partition field '" + f.name +
                                     "': the batch has no column "
                                     "with field id " +
                                     std::to_string(f.source_id));
    }
    const Column& col = batch.column(static_cast<size_t>(index));
    if (!f.transform.CanTransform(col.type())) {
      return Status::InvalidArgument("partition field '" + f.name + "': " + f.transform.ToString() +
                                     " cannot apply to type " + col.type().ToString());
    }
    tuple.push_back(f.transform.Apply(col.type(), ValueAt(col, row)));
  }
  return tuple;
}

std::string PartitionSpec::PartitionPath(const Schema& schema,
                                         const PartitionTuple& partition) const {
  std::string path;
  for (size_t i = 0; i < fields.size(); ++i) {
    const PartitionField& f = fields[i];
    const Value& v = i < partition.size() ? partition[i] : Value(std::monostate{});
    std::string human;
    if (std::holds_alternative<std::monostate>(v)) {
      human = "null";
    } else {
      int64_t n = 0;
      if (auto* p = std::get_if<int32_t>(&v)) n = *p;
      if (auto* p = std::get_if<int64_t>(&v)) n = *p;
      switch (f.transform.kind) {
        case TransformKind::kYear:
          human = FormatYear(1970 + n, kPathYears);
          break;
        case TransformKind::kMonth:
          human = FormatYear(1970 + FloorDiv(n, 12), kPathYears) + "-" + Pad2(FloorMod(n, 12) + 1);
          break;
        case TransformKind::kDay:
          human = FormatDate(n, kPathYears);
          break;
        case TransformKind::kHour:
          human = FormatDate(FloorDiv(n, 24), kPathYears) + "-" + Pad2(FloorMod(n, 24));
          break;
        case TransformKind::kBucket:
          human = std::to_string(n);
          break;
        default: {
          const Field* src = schema.FindById(f.source_id);
          DataType type = src ? f.transform.ResultType(src->type) : DataType::String();
          human = ValueToString(type, v);
        }
      }
    }
    if (!path.empty()) path.push_back('/');
    path += UrlEscape(f.name) + "=" + UrlEscape(human);
  }
  return path;
}

// ---- partition clause --------------------------------------------------------------------

namespace {

// The items of partition clause `rest` (trimmed, not empty): split at top-level commas.
Result<std::vector<std::string_view>> SplitPartitionItems(std::string_view rest) {
  std::vector<std::string_view> items;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '(') ++depth;
    if (rest[i] == ')') --depth;
    if (depth < 0) break;
    if (rest[i] == ',' && depth == 0) {
      items.push_back(rest.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) {
    return Status::InvalidArgument("partition clause has unbalanced parentheses: '" +
                                   std::string(rest) + "'");
  }
  items.push_back(rest.substr(start));
  return items;
}

// The column `raw` names (maybe backquoted) in partition item `item`: the one of that name, else
// the only one whose name matches it ignoring case.
Result<const Field*> FindPartitionColumn(const Schema& schema, std::string_view raw,
                                         const std::string& item) {
  std::string_view name = Trim(raw);
  if (name.size() >= 2 && name.front() == '`' && name.back() == '`') {
    name = name.substr(1, name.size() - 2);
  }
  if (const Field* f = schema.FindByName(name)) return f;
  const Field* match = nullptr;
  for (const Field& f : schema.fields) {
    if (Lower(f.name) == Lower(name)) {
      if (match != nullptr) {
        return Status::InvalidArgument("partition item '" + item + "': column name '" +
                                       std::string(name) + "' is ambiguous");
      }
      match = &f;
    }
  }
  if (match == nullptr) {
    return Status::InvalidArgument("partition item '" + item + "': no column named '" +
                                   std::string(name) + "' in the schema");
  }
  return match;
}

// The transform named `func` (lower case) in partition item `item`.
Result<TransformKind> TransformNamed(const std::string& func, const std::string& item) {
  if (func == "year" || func == "years") return TransformKind::kYear;
  if (func == "month" || func == "months") return TransformKind::kMonth;
  if (func == "day" || func == "days") return TransformKind::kDay;
  if (func == "hour" || func == "hours") return TransformKind::kHour;
  if (func == "identity") return TransformKind::kIdentity;
  if (func == "bucket") return TransformKind::kBucket;
  if (func == "truncate") return TransformKind::kTruncate;
  return Status::InvalidArgument("partition item '" + item + "': unknown transform '" + func +
                                 "' (expected year, month, day, hour, bucket(N, col), "
                                 "truncate(W, col) or a column name)");
}

// Partition item `item` of the form 'func(column)' or 'func(N, column)', its '(' at `open`: sets
// *transform and *column.
Status ParseTransformItem(const Schema& schema, const std::string& item, size_t open,
                          Transform* transform, const Field** column) {
  if (item.back() != ')') {
    return Status::InvalidArgument("partition item '" + item +
                                   "': expected 'func(column)' or 'func(N, column)'");
  }
  std::string func = Lower(Trim(std::string_view(item).substr(0, open)));
  std::string_view args = std::string_view(item).substr(open + 1, item.size() - open - 2);
  FLOE_ASSIGN_OR_RAISE(transform->kind, TransformNamed(func, item));
  bool parameterized =
      transform->kind == TransformKind::kBucket || transform->kind == TransformKind::kTruncate;
  size_t comma = args.find(',');
  if (!parameterized) {
    if (comma != std::string_view::npos) {
      return Status::InvalidArgument("partition item '" + item + "': " + func +
                                     " takes one column");
    }
    FLOE_ASSIGN_OR_RAISE(*column, FindPartitionColumn(schema, args, item));
    return Status::OK();
  }
  if (comma == std::string_view::npos) {
    return Status::InvalidArgument("partition item '" + item + "': " + func + " takes (N, column)");
  }
  std::string_view a = args.substr(0, comma), b = args.substr(comma + 1);
  int32_t n;
  std::string_view col;
  if (ParseInt32(a, &n)) {
    col = b;
  } else if (ParseInt32(b, &n)) {
    col = a;  // Spark also accepts truncate(col, W)
  } else {
    return Status::InvalidArgument("partition item '" + item + "': " + func +
                                   " needs an integer parameter, as in " + func + "(16, column)");
  }
  if (n <= 0) {
    return Status::InvalidArgument("partition item '" + item + "': the parameter must be positive");
  }
  transform->param = n;
  FLOE_ASSIGN_OR_RAISE(*column, FindPartitionColumn(schema, col, item));
  return Status::OK();
}

}  // namespace

Result<PartitionSpec> ParsePartitionClause(std::string_view text, const Schema& schema) {
  PartitionSpec spec;
  std::string_view rest = Trim(text);
  if (rest.empty()) return spec;
  FLOE_ASSIGN_OR_RAISE(std::vector<std::string_view> items, SplitPartitionItems(rest));
  std::set<std::string> names;
  std::set<std::pair<int32_t, std::string>> seen;
  for (std::string_view raw_item : items) {
    std::string item(Trim(raw_item));
    if (item.empty()) {
      return Status::InvalidArgument("partition clause has an empty item (stray comma?): '" +
                                     std::string(rest) + "'");
    }
    Transform transform;
    const Field* column = nullptr;
    size_t open = item.find('(');
    if (open == std::string::npos) {
      FLOE_ASSIGN_OR_RAISE(column, FindPartitionColumn(schema, item, item));
    } else {
      FLOE_RETURN_NOT_OK(ParseTransformItem(schema, item, open, &transform, &column));
    }
    if (!transform.CanTransform(column->type)) {
      return Status::InvalidArgument("partition item '" + item + "': " + transform.ToString() +
                                     " cannot apply to column '" + column->name + "' of type " +
                                     column->type.ToString() +
                                     " (allowed: " + AllowedSources(transform.kind) + ")");
    }
    if (!seen.insert({column->field_id, transform.ToString()}).second) {
      return Status::InvalidArgument("partition item '" + item + "' is repeated");
    }
    PartitionField pf;
    pf.source_id = column->field_id;
    pf.field_id = 1000 + static_cast<int32_t>(spec.fields.size());
    pf.name = column->name + DefaultSuffix(transform.kind);
    pf.transform = transform;
    if (!names.insert(pf.name).second) {
      return Status::InvalidArgument("partition item '" + item + "': partition field name '" +
                                     pf.name + "' is used twice");
    }
    spec.fields.push_back(std::move(pf));
  }
  return spec;
}

std::string PartitionSpecToJson(const PartitionSpec& spec) {
  return DumpJson(internal::PartitionSpecToJsonValue(spec));
}

Result<PartitionSpec> PartitionSpecFromJson(std::string_view json) {
  JsonPath at("partition spec JSON");
  FLOE_ASSIGN_OR_RAISE(OrderedJson j, ParseOrderedJson(json, at));
  return internal::PartitionSpecFromJsonValue(j, at);
}

}  // namespace floe::iceberg

#include "floe/format/parquet/test_util.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "floe/common/civil_time.h"
#include "floe/format/parquet/schema.h"
#include "gtest/gtest.h"

namespace floe::parquet::testing {

namespace fs = std::filesystem;

std::string MakeTempDir(const std::string& name) {
  fs::path dir =
      fs::path(::testing::TempDir()) / ("floe_parquet_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string ReadAllBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

RecordBatch Concat(const std::shared_ptr<const BatchSchema>& schema,
                   const std::vector<RecordBatch>& batches) {
  RecordBatch out(schema);
  for (const auto& b : batches) {
    for (size_t c = 0; c < b.num_columns(); ++c) {
      for (size_t r = 0; r < b.num_rows(); ++r) out.mutable_column(c).AppendFrom(b.column(c), r);
    }
  }
  return out;
}

DataType RandomType(std::mt19937_64& rng) {
  switch (rng() % 12) {
    case 0:
      return DataType::Boolean();
    case 1:
      return DataType::Int32();
    case 2:
      return DataType::Int64();
    case 3:
      return DataType::Float();
    case 4:
      return DataType::Double();
    case 5:
      return DataType::String();
    case 6:
      return DataType::Binary();
    case 7:
      return DataType::Date();
    case 8:
      return DataType::Timestamp();
    case 9:
      return DataType::TimestampTz();
    default: {
      // Bias towards the physical-type boundaries 9/10, 18/19 and 38.
      static const int kPrecisions[] = {1, 5, 9, 10, 15, 18, 19, 25, 30, 37, 38};
      int p = kPrecisions[rng() % std::size(kPrecisions)];
      int s = static_cast<int>(rng() % (p + 1));
      return DataType::Decimal(p, s);
    }
  }
}

std::shared_ptr<const BatchSchema> RandomSchema(std::mt19937_64& rng, int max_fields) {
  auto schema = std::make_shared<BatchSchema>();
  int n = 1 + static_cast<int>(rng() % max_fields);
  for (int i = 0; i < n; ++i) {
    Field f;
    f.name = "c" + std::to_string(i) + "_" + RandomType(rng).ToString().substr(0, 3);
    f.type = RandomType(rng);
    f.nullable = rng() % 2 == 0;
    f.field_id = 1 + i * 3;
    schema->fields.push_back(f);
  }
  return schema;
}

namespace {

Int128 Pow10(int p) {
  Int128 v = 1;
  for (int i = 0; i < p; ++i) v *= 10;
  return v;
}

std::string RandomUtf8(std::mt19937_64& rng, size_t max_len) {
  static const char* kPieces[] = {"a",
                                  "b",
                                  "z",
                                  "A",
                                  " ",
                                  "0",
                                  "~",
                                  "\"",
                                  "\\",
                                  "\n",
                                  "\t",
                                  "\x01",
                                  "\xc3\xa9",
                                  "\xe6\xbc\xa2",
                                  "\xf0\x9f\x98\x80",
                                  "/"};
  size_t len = max_len == 0 ? 0 : rng() % (max_len + 1);
  std::string s;
  for (size_t i = 0; i < len; ++i) s += kPieces[rng() % std::size(kPieces)];
  return s;
}

// Appends one random non-null value of `type` to `col`.
void AppendRandom(Column& col, std::mt19937_64& rng) {
  const DataType& t = col.type();
  uint64_t pick = rng() % 16;
  switch (t.id) {
    case TypeId::kBoolean:
      col.Append<uint8_t>(rng() % 2);
      break;
    case TypeId::kInt32:
    case TypeId::kDate: {
      int32_t v = static_cast<int32_t>(rng());
      if (pick == 0) v = std::numeric_limits<int32_t>::min();
      if (pick == 1) v = std::numeric_limits<int32_t>::max();
      if (pick == 2) v = 0;
      if (pick == 3) v = -1;
      col.Append<int32_t>(v);
      break;
    }
    case TypeId::kTime: {  // microseconds since midnight, its ends included
      const int64_t v = pick == 0   ? 0
                        : pick == 1 ? kMicrosPerDay - 1
                                    : int64_t(rng() % kMicrosPerDay);
      col.Append<int64_t>(v);
      break;
    }
    case TypeId::kInt64:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz: {
      int64_t v = static_cast<int64_t>(rng());
      if (pick == 0) v = std::numeric_limits<int64_t>::min();
      if (pick == 1) v = std::numeric_limits<int64_t>::max();
      if (pick == 2) v = 0;
      if (pick == 3) v = static_cast<int64_t>(rng() % 2000) - 1000;
      col.Append<int64_t>(v);
      break;
    }
    case TypeId::kFloat: {
      float v = std::uniform_real_distribution<float>(-1e6f, 1e6f)(rng);
      if (pick == 0) v = std::numeric_limits<float>::quiet_NaN();
      if (pick == 1) v = std::numeric_limits<float>::infinity();
      if (pick == 2) v = -std::numeric_limits<float>::infinity();
      if (pick == 3) v = -0.0f;
      if (pick == 4) v = 0.0f;
      if (pick == 5) v = std::numeric_limits<float>::max();
      if (pick == 6) v = std::numeric_limits<float>::denorm_min();
      col.Append<float>(v);
      break;
    }
    case TypeId::kDouble: {
      double v = std::uniform_real_distribution<double>(-1e12, 1e12)(rng);
      if (pick == 0) v = std::numeric_limits<double>::quiet_NaN();
      if (pick == 1) v = std::numeric_limits<double>::infinity();
      if (pick == 2) v = -std::numeric_limits<double>::infinity();
      if (pick == 3) v = -0.0;
      if (pick == 4) v = 0.0;
      if (pick == 5) v = -std::numeric_limits<double>::max();
      if (pick == 6) v = 1.0 / 3.0;
      col.Append<double>(v);
      break;
    }
    case TypeId::kString: {
      size_t max_len = pick == 0 ? 0 : (pick == 1 ? 3000 : 12);
      col.AppendBytes(RandomUtf8(rng, max_len));
      break;
    }
    case TypeId::kBinary: {
      size_t len = pick == 0 ? 0 : (pick == 1 ? 2000 : rng() % 16);
      std::string s(len, '\0');
      for (auto& c : s) c = static_cast<char>(rng());
      col.AppendBytes(s);
      break;
    }
    case TypeId::kDecimal: {
      Int128 max = Pow10(t.precision) - 1;
      Int128 v;
      if (pick == 0) {
        v = max;
      } else if (pick == 1) {
        v = -max;
      } else if (pick == 2) {
        v = 0;
      } else {
        unsigned __int128 r = (static_cast<unsigned __int128>(rng()) << 64) | rng();
        // 2 * max + 1 overflows Int128 at precision 38; do the range in unsigned arithmetic.
        unsigned __int128 span = static_cast<unsigned __int128>(max) * 2 + 1;
        v = static_cast<Int128>(r % span - static_cast<unsigned __int128>(max));
      }
      col.Append<Int128>(v);
      break;
    }
  }
}

}  // namespace

RecordBatch RandomBatch(const std::shared_ptr<const BatchSchema>& schema, size_t rows,
                        std::mt19937_64& rng, const std::vector<RandomColumnProfile>& profiles) {
  RecordBatch batch(schema);
  for (size_t c = 0; c < schema->fields.size(); ++c) {
    const Field& f = schema->fields[c];
    RandomColumnProfile p = c < profiles.size() ? profiles[c] : RandomColumnProfile{};
    Column& col = batch.mutable_column(c);
    // A pool of distinct values makes the column dictionary friendly.
    Column pool(f.type);
    for (int i = 0; i < p.pool; ++i) AppendRandom(pool, rng);
    std::bernoulli_distribution is_null(f.nullable ? p.null_fraction : 0.0);
    for (size_t r = 0; r < rows; ++r) {
      if (is_null(rng)) {
        col.AppendNull();
      } else if (p.pool > 0 &&
                 (p.switch_to_random_at < 0 || r < static_cast<size_t>(p.switch_to_random_at))) {
        col.AppendFrom(pool, rng() % pool.size());
      } else {
        AppendRandom(col, rng);
      }
    }
  }
  return batch;
}

namespace {

template <typename T>
std::string LE(T v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof(T));
}

std::string BigEndian(Int128 v, int width) {
  std::string out(width, '\0');
  for (int i = width - 1; i >= 0; --i) {
    out[i] = static_cast<char>(static_cast<uint8_t>(v & 0xff));
    v >>= 8;
  }
  return out;
}

}  // namespace

std::vector<ColumnMetrics> ExpectedMetrics(const RecordBatch& batch) {
  std::vector<ColumnMetrics> out;
  for (size_t c = 0; c < batch.num_columns(); ++c) {
    const Field& f = batch.schema()->fields[c];
    const Column& col = batch.column(c);
    ColumnMetrics m;
    m.field_id = f.field_id;
    m.value_count = static_cast<int64_t>(col.size());
    m.null_count = static_cast<int64_t>(col.null_count());
    bool has = false;
    auto scan = [&](auto get, auto less, auto encode) {
      using V = decltype(get(size_t{0}));
      V mn{}, mx{};
      for (size_t r = 0; r < col.size(); ++r) {
        if (col.IsNull(r)) continue;
        V v = get(r);
        if constexpr (std::is_floating_point_v<V>) {
          if (std::isnan(v)) {
            ++m.nan_count;
            continue;
          }
        }
        if (!has || less(v, mn)) mn = v;
        if (!has || less(mx, v)) mx = v;
        has = true;
      }
      if (has) {
        if constexpr (std::is_floating_point_v<V>) {
          if (mn == 0) mn = -V(0);
          if (mx == 0) mx = V(0);
        }
        m.min = encode(mn);
        m.max = encode(mx);
      }
    };
    auto lt = [](auto a, auto b) { return a < b; };
    switch (f.type.id) {
      case TypeId::kBoolean:
        scan([&](size_t r) { return col.Get<uint8_t>(r); }, lt, [](uint8_t v) { return LE(v); });
        break;
      case TypeId::kInt32:
      case TypeId::kDate:
        scan([&](size_t r) { return col.Get<int32_t>(r); }, lt, [](int32_t v) { return LE(v); });
        break;
      case TypeId::kInt64:
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz:
      case TypeId::kTime:
        scan([&](size_t r) { return col.Get<int64_t>(r); }, lt, [](int64_t v) { return LE(v); });
        break;
      case TypeId::kFloat:
        scan([&](size_t r) { return col.Get<float>(r); }, lt, [](float v) { return LE(v); });
        break;
      case TypeId::kDouble:
        scan([&](size_t r) { return col.Get<double>(r); }, lt, [](double v) { return LE(v); });
        break;
      case TypeId::kString:
      case TypeId::kBinary:
        scan([&](size_t r) { return std::string(col.GetBytes(r)); },
             [](const std::string& a, const std::string& b) {
               // unsigned byte order, spelled out
               return std::lexicographical_compare(
                   a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
                     return static_cast<uint8_t>(x) < static_cast<uint8_t>(y);
                   });
             },
             [](const std::string& v) { return v; });
        break;
      case TypeId::kDecimal: {
        int p = f.type.precision;
        scan([&](size_t r) { return col.Get<Int128>(r); }, lt,
             [p](Int128 v) {
               if (p <= 9) return LE(static_cast<int32_t>(v));
               if (p <= 18) return LE(static_cast<int64_t>(v));
               return BigEndian(v, DecimalFixedBytes(p));
             });
        break;
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

namespace {

void JsonEscape(std::string_view s, std::string* out) {
  out->push_back('"');
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      case '\b':
        *out += "\\b";
        break;
      case '\f':
        *out += "\\f";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          *out += buf;
        } else {
          out->push_back(ch);
        }
    }
  }
  out->push_back('"');
}

std::string Int128ToString(Int128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  unsigned __int128 u =
      neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  while (u > 0) {
    s.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  if (neg) s.push_back('-');
  return std::string(s.rbegin(), s.rend());
}

void DoubleJson(double v, std::string* out) {
  if (std::isnan(v)) {
    *out += "\"NaN\"";
  } else if (std::isinf(v)) {
    *out += v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  } else {
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%.17g", v);
    *out += buf;
  }
}

}  // namespace

std::string RowToJson(const RecordBatch& batch, size_t row) {
  std::string out = "{";
  for (size_t c = 0; c < batch.num_columns(); ++c) {
    const Field& f = batch.schema()->fields[c];
    const Column& col = batch.column(c);
    if (c > 0) out += ",";
    JsonEscape(f.name, &out);
    out += ":";
    if (col.IsNull(row)) {
      out += "null";
      continue;
    }
    switch (f.type.id) {
      case TypeId::kBoolean:
        out += col.Get<uint8_t>(row) ? "true" : "false";
        break;
      case TypeId::kInt32:
      case TypeId::kDate:
        out += std::to_string(col.Get<int32_t>(row));
        break;
      case TypeId::kInt64:
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz:
      case TypeId::kTime:
        out += "\"" + std::to_string(col.Get<int64_t>(row)) + "\"";
        break;
      case TypeId::kFloat:
        DoubleJson(static_cast<double>(col.Get<float>(row)), &out);
        break;
      case TypeId::kDouble:
        DoubleJson(col.Get<double>(row), &out);
        break;
      case TypeId::kString:
        JsonEscape(col.GetBytes(row), &out);
        break;
      case TypeId::kBinary: {
        static const char* kHex = "0123456789abcdef";
        out += "\"";
        for (char ch : col.GetBytes(row)) {
          out.push_back(kHex[static_cast<uint8_t>(ch) >> 4]);
          out.push_back(kHex[static_cast<uint8_t>(ch) & 15]);
        }
        out += "\"";
        break;
      }
      case TypeId::kDecimal:
        out += "\"" + Int128ToString(col.Get<Int128>(row)) + "\"";
        break;
    }
  }
  out += "}";
  return out;
}

void DumpInterop(const std::string& name, const std::string& parquet_path,
                 const RecordBatch& expected) {
  const char* dir = std::getenv("FLOE_INTEROP_DIR");
  if (dir == nullptr || *dir == '\0') return;
  fs::path out_dir = fs::path(dir) / "parquet";
  fs::create_directories(out_dir);
  fs::copy_file(parquet_path, out_dir / (name + ".parquet"), fs::copy_options::overwrite_existing);
  std::ofstream rows(out_dir / (name + ".expected.jsonl"), std::ios::binary | std::ios::trunc);
  for (size_t r = 0; r < expected.num_rows(); ++r) rows << RowToJson(expected, r) << "\n";
  std::string schema = "[";
  const auto& fields = expected.schema()->fields;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) schema += ",";
    schema += "{\"name\":";
    JsonEscape(fields[i].name, &schema);
    schema += ",\"type\":";
    JsonEscape(fields[i].type.ToString(), &schema);
    schema += ",\"nullable\":";
    schema += fields[i].nullable ? "true" : "false";
    schema += ",\"field_id\":" + std::to_string(fields[i].field_id) + "}";
  }
  schema += "]\n";
  std::ofstream(out_dir / (name + ".schema.json"), std::ios::binary | std::ios::trunc) << schema;
}

}  // namespace floe::parquet::testing

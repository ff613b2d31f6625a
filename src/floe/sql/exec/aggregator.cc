#include "floe/sql/exec/aggregator.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <map>
#include <utility>

#include "floe/common/byte_codec.h"
#include "floe/sql/exec/decimal_arithmetic.h"

namespace floe::sql::internal {

std::string StateShape(const BatchSchema& input, const std::vector<int>& keys,
                       const std::vector<AggregateCall>& calls) {
  auto column = [&](int i) {
    const Field& f = input.fields[static_cast<size_t>(i)];
    return f.name + " " + SqlTypeName(f.type);
  };
  std::string out = "keys (";
  for (size_t i = 0; i < keys.size(); ++i) out += (i ? ", " : "") + column(keys[i]);
  out += ");";
  for (size_t i = 0; i < calls.size(); ++i) {
    const AggregateCall& c = calls[i];
    out += (i ? ", " : " ") + std::string(ToString(c.function)) + "(" +
           (c.distinct ? "DISTINCT " : "") + (c.input_column < 0 ? "*" : column(c.input_column)) +
           ")";
  }
  return out;
}

Status CheckStateShape(std::string_view task, std::string_view restored, std::string_view mine) {
  if (restored == mine) return Status::OK();
  return Status::InvalidArgument(
      "the state of '" + std::string(task) + "' was written by a query with " +
      std::string(restored) + ", this job's query has " + std::string(mine) +
      ": its accumulators cannot be read. Restore with the query the snapshot was taken with, "
      "or write to a new sink table (its operators start without state)");
}

namespace {

// One value of a column as bytes, in place: the fixed-width storage, or the string / binary
// bytes. Valid while the column is.
std::string_view CellOf(const Column& c, size_t row) {
  const int w = c.type().fixed_width();
  if (w == 0) return c.GetBytes(row);
  return std::string_view(reinterpret_cast<const char*>(c.values<uint8_t>()) + row * w, w);
}

void AppendCell(Column* c, std::string_view cell) {
  switch (c->type().fixed_width()) {
    case 0:
      c->AppendBytes(cell);
      return;
    case 1:
      c->Append<uint8_t>(static_cast<uint8_t>(cell[0]));
      return;
    case 4: {
      uint32_t v;
      std::memcpy(&v, cell.data(), 4);
      c->Append(v);
      return;
    }
    case 8: {
      uint64_t v;
      std::memcpy(&v, cell.data(), 8);
      c->Append(v);
      return;
    }
    default: {
      Int128 v;
      std::memcpy(&v, cell.data(), sizeof(v));
      c->Append(v);
      return;
    }
  }
}

template <typename T>
T Load(std::string_view cell) {
  T v;
  std::memcpy(&v, cell.data(), sizeof(T));
  return v;
}

// <0, 0, >0 as a < b for two cells of `type`.
int CompareCells(const DataType& type, std::string_view a, std::string_view b) {
  auto cmp = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
  switch (type.id) {
    case TypeId::kBoolean:
      return cmp(Load<uint8_t>(a), Load<uint8_t>(b));
    case TypeId::kInt32:
    case TypeId::kDate:
      return cmp(Load<int32_t>(a), Load<int32_t>(b));
    case TypeId::kInt64:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTime:
      return cmp(Load<int64_t>(a), Load<int64_t>(b));
    case TypeId::kFloat:
      return cmp(Load<float>(a), Load<float>(b));
    case TypeId::kDouble:
      return cmp(Load<double>(a), Load<double>(b));
    case TypeId::kDecimal:
      return cmp(Load<Int128>(a), Load<Int128>(b));
    case TypeId::kString:
    case TypeId::kBinary:
      return a.compare(b);
  }
  return 0;
}

bool IsFloating(const DataType& t) { return t.id == TypeId::kFloat || t.id == TypeId::kDouble; }

// A numeric input value widened for summing: integers as int64, decimals as their unscaled
// Int128, floats as double.
struct Number {
  Int128 integer = 0;
  double floating = 0;
};

// A numeric cell (CellOf) widened for summing.
Number NumberOfCell(const DataType& type, std::string_view cell) {
  Number n;
  switch (type.id) {
    case TypeId::kInt32:
      n.integer = Load<int32_t>(cell);
      break;
    case TypeId::kInt64:
      n.integer = Load<int64_t>(cell);
      break;
    case TypeId::kDecimal:
      n.integer = Load<Int128>(cell);
      break;
    case TypeId::kFloat:
      n.floating = Load<float>(cell);
      break;
    case TypeId::kDouble:
      n.floating = Load<double>(cell);
      break;
    default:
      break;
  }
  return n;
}

// One value (its cell) folded into `a` as `function` folds it without DISTINCT.
void FoldCell(AggregateFunction function, const DataType& type, std::string_view cell,
              AggregateState::One* a) {
  switch (function) {
    case AggregateFunction::kCount:
      ++a->count;
      return;
    case AggregateFunction::kSum:
    case AggregateFunction::kAvg: {
      const Number v = NumberOfCell(type, cell);
      a->integer += v.integer;
      a->floating += v.floating;
      // NULL exactly when no value is counted (Flink's SumWithRetract: count == 0), which a
      // changelog's retraction that came first can make of an add.
      a->has = ++a->count != 0;
      return;
    }
    case AggregateFunction::kMin:
    case AggregateFunction::kMax: {
      const int cmp = a->has ? CompareCells(type, cell, a->cell) : 0;
      if (!a->has || (function == AggregateFunction::kMin ? cmp < 0 : cmp > 0)) a->cell = cell;
      a->has = true;
      return;
    }
    case AggregateFunction::kListAgg:
      a->list().emplace_back(cell);
      return;
  }
}

}  // namespace

namespace {

// The compact layout's first four bytes: as the earlier layouts' key length (u32), more than any
// blob holds, so a blob says which layout it is.
constexpr uint32_t kCompactLayout = 0xffffffff;

// Which fields of an accumulator the compact layout holds: only those not at their default.
constexpr uint32_t kHasCount = 1;
constexpr uint32_t kHas = 2;
constexpr uint32_t kHasInteger = 4;  // fits in 64 bits: a varint
constexpr uint32_t kHasWideInteger = 8;
constexpr uint32_t kHasFloating = 16;
constexpr uint32_t kHasCell = 32;
constexpr uint32_t kHasDistinct = 64;
constexpr uint32_t kHasValues = 128;
constexpr uint32_t kHasList = 256;

uint32_t FieldsOf(const AggregateState::One& a) {
  const bool wide = a.integer < std::numeric_limits<int64_t>::min() ||
                    a.integer > std::numeric_limits<int64_t>::max();
  uint32_t fields = 0;
  if (a.count != 0) fields |= kHasCount;
  if (a.has) fields |= kHas;
  if (a.integer != 0) fields |= wide ? kHasWideInteger : kHasInteger;
  if (std::bit_cast<uint64_t>(a.floating) != 0) fields |= kHasFloating;  // -0.0 kept too
  if (!a.cell.empty()) fields |= kHasCell;
  if (!a.distinct().empty()) fields |= kHasDistinct;
  if (!a.values().empty()) fields |= kHasValues;
  if (!a.list().empty()) fields |= kHasList;
  return fields;
}

void PutCounts(const std::map<std::string, int64_t>& counts, ByteWriter& w) {
  w.PutVarU64(counts.size());
  for (const auto& [v, n] : counts) {
    w.PutVarBytes(v);
    w.PutVarI64(n);
  }
}

Status GetCounts(ByteReader& r, std::map<std::string, int64_t>* counts) {
  FLOE_ASSIGN_OR_RAISE(uint64_t n, r.GetVarU64());
  for (uint64_t i = 0; i < n; ++i) {
    FLOE_ASSIGN_OR_RAISE(std::string_view v, r.GetVarBytesView());
    FLOE_ASSIGN_OR_RAISE(int64_t rows, r.GetVarI64());
    (*counts)[std::string(v)] = rows;
  }
  return Status::OK();
}

Result<AggregateState> DecodeCompact(ByteReader& r) {
  AggregateState acc;
  FLOE_ASSIGN_OR_RAISE(std::string_view key, r.GetVarBytesView());
  acc.key = key;
  FLOE_ASSIGN_OR_RAISE(acc.rows, r.GetVarI64());
  FLOE_ASSIGN_OR_RAISE(uint64_t n, r.GetVarU64());
  if (n > r.remaining()) return Status::Corruption("aggregate state: too many accumulators");
  acc.aggs.resize(n);
  for (AggregateState::One& a : acc.aggs) {
    FLOE_ASSIGN_OR_RAISE(uint64_t fields, r.GetVarU64());
    if (fields & kHasCount) {
      FLOE_ASSIGN_OR_RAISE(a.count, r.GetVarI64());
    }
    a.has = (fields & kHas) != 0;
    if (fields & kHasInteger) {
      FLOE_ASSIGN_OR_RAISE(int64_t integer, r.GetVarI64());
      a.integer = integer;
    }
    if (fields & kHasWideInteger) {
      FLOE_ASSIGN_OR_RAISE(uint64_t lo, r.GetU64());
      FLOE_ASSIGN_OR_RAISE(uint64_t hi, r.GetU64());
      a.integer = static_cast<Int128>((static_cast<unsigned __int128>(hi) << 64) | lo);
    }
    if (fields & kHasFloating) {
      FLOE_ASSIGN_OR_RAISE(a.floating, r.GetDouble());
    }
    if (fields & kHasCell) {
      FLOE_ASSIGN_OR_RAISE(std::string_view cell, r.GetVarBytesView());
      a.cell = cell;
    }
    if (fields & kHasDistinct) FLOE_RETURN_NOT_OK(GetCounts(r, &a.distinct()));
    if (fields & kHasValues) FLOE_RETURN_NOT_OK(GetCounts(r, &a.values()));
    if (fields & kHasList) {
      FLOE_ASSIGN_OR_RAISE(uint64_t items, r.GetVarU64());
      for (uint64_t i = 0; i < items; ++i) {
        FLOE_ASSIGN_OR_RAISE(std::string_view v, r.GetVarBytesView());
        a.list().emplace_back(v);
      }
    }
  }
  FLOE_RETURN_NOT_OK(r.ExpectEnd());
  return acc;
}

}  // namespace

// Kept per key and window (and in every checkpoint), so it holds only the fields not at their
// default, in varints: a COUNT(*) window is about 20 bytes where the fixed layout took 80.
AggregateState::Sets& AggregateState::SetsHolder::Mutable() {
  if (!p_) p_ = std::make_unique<Sets>();
  return *p_;
}

const AggregateState::Sets& AggregateState::SetsHolder::Read() const {
  static const Sets kEmpty;
  return p_ ? *p_ : kEmpty;
}

std::string AggregateState::Encode() const {
  ByteWriter w;
  w.PutU32(kCompactLayout);
  w.PutVarBytes(key);
  w.PutVarI64(rows);
  w.PutVarU64(aggs.size());
  for (const One& a : aggs) {
    const uint32_t fields = FieldsOf(a);
    w.PutVarU64(fields);
    if (fields & kHasCount) w.PutVarI64(a.count);
    if (fields & kHasInteger) w.PutVarI64(static_cast<int64_t>(a.integer));
    if (fields & kHasWideInteger) {
      w.PutU64(static_cast<uint64_t>(a.integer));
      w.PutU64(static_cast<uint64_t>(static_cast<unsigned __int128>(a.integer) >> 64));
    }
    if (fields & kHasFloating) w.PutDouble(a.floating);
    if (fields & kHasCell) w.PutVarBytes(a.cell);
    if (fields & kHasDistinct) PutCounts(a.distinct(), w);
    if (fields & kHasValues) PutCounts(a.values(), w);
    if (fields & kHasList) {
      w.PutVarU64(a.list().size());
      for (const std::string& v : a.list()) w.PutVarBytes(v);
    }
  }
  return w.Finish();
}

// The compact layout, else the fixed one of earlier releases (state they checkpointed).
Result<AggregateState> AggregateState::Decode(std::string_view bytes) {
  ByteReader r(bytes);
  if (bytes.size() >= 4) {
    FLOE_ASSIGN_OR_RAISE(uint32_t head, r.GetU32());
    if (head == kCompactLayout) return DecodeCompact(r);
    r = ByteReader(bytes);
  }
  AggregateState acc;
  FLOE_ASSIGN_OR_RAISE(acc.key, r.GetString());
  FLOE_ASSIGN_OR_RAISE(uint32_t n, r.GetU32());
  for (uint32_t i = 0; i < n; ++i) {
    One a;
    FLOE_ASSIGN_OR_RAISE(a.count, r.GetI64());
    FLOE_ASSIGN_OR_RAISE(a.has, r.GetBool());
    FLOE_ASSIGN_OR_RAISE(uint64_t lo, r.GetU64());
    FLOE_ASSIGN_OR_RAISE(uint64_t hi, r.GetU64());
    a.integer = static_cast<Int128>((static_cast<unsigned __int128>(hi) << 64) | lo);
    FLOE_ASSIGN_OR_RAISE(a.floating, r.GetDouble());
    FLOE_ASSIGN_OR_RAISE(a.cell, r.GetString());
    FLOE_ASSIGN_OR_RAISE(uint32_t distinct, r.GetU32());
    for (uint32_t d = 0; d < distinct; ++d) {
      FLOE_ASSIGN_OR_RAISE(std::string v, r.GetString());
      a.distinct().emplace(std::move(v), 1);  // the count, if kept, follows
    }
    acc.aggs.push_back(std::move(a));
  }
  if (r.AtEnd()) return acc;  // written before the extension: an append-only aggregation's
  FLOE_ASSIGN_OR_RAISE(uint8_t extension, r.GetU8());
  if (extension != 1 && extension != 2) {  // 2: LISTAGG's lists too
    return Status::Corruption("aggregate state: unknown extension " + std::to_string(extension));
  }
  FLOE_ASSIGN_OR_RAISE(acc.rows, r.GetI64());
  auto get_counts = [&](std::map<std::string, int64_t>* counts) -> Status {
    counts->clear();
    FLOE_ASSIGN_OR_RAISE(uint32_t n, r.GetU32());
    for (uint32_t i = 0; i < n; ++i) {
      FLOE_ASSIGN_OR_RAISE(std::string v, r.GetString());
      FLOE_ASSIGN_OR_RAISE(int64_t rows, r.GetI64());
      (*counts)[std::move(v)] = rows;
    }
    return Status::OK();
  };
  for (One& a : acc.aggs) {
    FLOE_RETURN_NOT_OK(get_counts(&a.distinct()));
    FLOE_RETURN_NOT_OK(get_counts(&a.values()));
    if (extension < 2) continue;
    FLOE_ASSIGN_OR_RAISE(uint32_t n, r.GetU32());
    for (uint32_t i = 0; i < n; ++i) {
      FLOE_ASSIGN_OR_RAISE(std::string v, r.GetString());
      a.list().push_back(std::move(v));
    }
  }
  FLOE_RETURN_NOT_OK(r.ExpectEnd());
  return acc;
}

std::string KeyOf(const RecordBatch& batch, size_t row, const std::vector<int>& key_columns) {
  std::string out;
  KeyOfInto(batch, row, key_columns, &out);
  return out;
}

void KeyOfInto(const RecordBatch& batch, size_t row, const std::vector<int>& key_columns,
               std::string* out) {
  // Written in place, once per row on the window's hot path: a ByteWriter moved in and out
  // copied short (inline) strings twice. The layout is ByteWriter's: a presence byte, PutString.
  out->clear();
  for (int k : key_columns) {
    const Column& c = batch.column(k);
    if (c.IsNull(row)) {
      out->push_back('\0');
      continue;
    }
    out->push_back('\1');
    AppendLengthPrefixed(CellOf(c, row), out);
  }
}

Status AppendKey(std::string_view key, size_t num_keys, RecordBatch* out, size_t first_column) {
  ByteReader r(key);
  for (size_t k = 0; k < num_keys; ++k) {
    Column& c = out->mutable_column(first_column + k);
    FLOE_ASSIGN_OR_RAISE(uint8_t present, r.GetU8());
    if (present == 0) {
      c.AppendNull();
      continue;
    }
    FLOE_ASSIGN_OR_RAISE(std::string cell, r.GetString());
    AppendCell(&c, cell);
  }
  return r.ExpectEnd();
}

AggregateState Aggregator::Create(std::string key) const {
  AggregateState state;
  state.key = std::move(key);
  state.aggs.resize(calls_.size());
  return state;
}

void Aggregator::Add(const RecordBatch& batch, size_t row, AggregateState* acc) const {
  ++acc->rows;
  for (size_t i = 0; i < calls_.size(); ++i) {
    const AggregateCall& call = calls_[i];
    AggregateState::One& a = acc->aggs[i];
    if (call.input_column < 0) {  // COUNT(*)
      ++a.count;
      continue;
    }
    const Column& c = batch.column(call.input_column);
    if (c.IsNull(row)) continue;  // aggregates skip NULLs
    const std::string_view cell = CellOf(c, row);
    if (call.distinct) {
      if (a.distinct()[std::string(cell)]++ == 0 && call.function == AggregateFunction::kListAgg) {
        a.list().emplace_back(cell);  // first seen
      }
      continue;
    }
    // MIN / MAX over a changelog keep every value's rows, for when the best one is taken back.
    if (retracting_ &&
        (call.function == AggregateFunction::kMin || call.function == AggregateFunction::kMax)) {
      ++a.values()[std::string(cell)];
    }
    FoldCell(call.function, c.type(), cell, &a);
  }
}

void Aggregator::Retract(const RecordBatch& batch, size_t row, AggregateState* acc) const {
  --acc->rows;
  for (size_t i = 0; i < calls_.size(); ++i) {
    const AggregateCall& call = calls_[i];
    AggregateState::One& a = acc->aggs[i];
    if (call.input_column < 0) {  // COUNT(*)
      --a.count;
      continue;
    }
    const Column& c = batch.column(call.input_column);
    if (c.IsNull(row)) continue;
    auto take = [](std::map<std::string, int64_t>& counts, const std::string& v) {
      auto it = counts.find(v);
      if (it != counts.end() && --it->second <= 0) counts.erase(it);
    };
    const bool by_value = call.distinct || call.function == AggregateFunction::kListAgg ||
                          call.function == AggregateFunction::kMin ||
                          call.function == AggregateFunction::kMax;
    const std::string cell = by_value ? std::string(CellOf(c, row)) : std::string();
    if (call.distinct) {
      take(a.distinct(), cell);
      if (call.function == AggregateFunction::kListAgg && a.distinct().count(cell) == 0) {
        std::erase(a.list(), cell);
      }
      continue;
    }
    if (call.function == AggregateFunction::kListAgg) {  // the first equal value goes
      auto it = std::find(a.list().begin(), a.list().end(), cell);
      if (it != a.list().end()) a.list().erase(it);
      continue;
    }
    switch (call.function) {
      case AggregateFunction::kCount:
        --a.count;
        break;
      case AggregateFunction::kSum:
      case AggregateFunction::kAvg: {
        const Number v = NumberOfCell(c.type(), CellOf(c, row));
        a.integer -= v.integer;
        a.floating -= v.floating;
        // SUM of no values is NULL; a delete without its insert counts -1, not NULL. The sum
        // is kept as Flink's SumWithRetract keeps it, whatever the count.
        a.has = --a.count != 0;
        break;
      }
      case AggregateFunction::kMin:
      case AggregateFunction::kMax: {
        take(a.values(), cell);
        a.has = !a.values().empty();
        if (!a.has) break;
        // The best value left, in the column's order.
        const DataType& type = c.type();
        const std::string* best = nullptr;
        for (const auto& [v, n] : a.values()) {
          const int cmp = best == nullptr ? 0 : CompareCells(type, v, *best);
          if (best == nullptr || (call.function == AggregateFunction::kMin ? cmp < 0 : cmp > 0)) {
            best = &v;
          }
        }
        a.cell = *best;
        break;
      }
      case AggregateFunction::kListAgg:
        break;  // above
    }
  }
}

void Aggregator::Merge(const AggregateState& from, AggregateState* into) const {
  into->rows += from.rows;
  for (size_t i = 0; i < calls_.size(); ++i) {
    const AggregateCall& call = calls_[i];
    const AggregateState::One& f = from.aggs[i];
    AggregateState::One& a = into->aggs[i];
    a.count += f.count;
    a.integer += f.integer;
    a.floating += f.floating;
    for (const auto& [v, n] : f.distinct()) a.distinct()[v] += n;
    for (const auto& [v, n] : f.values()) a.values()[v] += n;
    for (const std::string& v : f.list()) {
      if (!call.distinct || std::find(a.list().begin(), a.list().end(), v) == a.list().end()) {
        a.list().push_back(v);
      }
    }
    if (!f.has) continue;
    if ((call.function == AggregateFunction::kMin || call.function == AggregateFunction::kMax) &&
        a.has) {
      const DataType& type = input_->fields[call.input_column].type;
      int cmp = CompareCells(type, f.cell, a.cell);
      if (call.function == AggregateFunction::kMin ? cmp < 0 : cmp > 0) a.cell = f.cell;
    } else if (!a.has) {
      a.cell = f.cell;
    }
    a.has = true;
  }
}

void Aggregator::AppendResults(const AggregateState& state, RecordBatch* out,
                               size_t first_column) const {
  for (size_t i = 0; i < calls_.size(); ++i) {
    const AggregateCall& call = calls_[i];
    const AggregateState::One& a = state.aggs[i];
    Column& c = out->mutable_column(first_column + i);
    if (!call.distinct || call.function == AggregateFunction::kListAgg) {
      AppendResult(call, a, &c);
    } else if (call.function == AggregateFunction::kCount) {
      c.Append<int64_t>(static_cast<int64_t>(a.distinct().size()));
    } else {  // SUM / AVG / MIN / MAX (DISTINCT): over each value held once
      const DataType& type = input_->fields[static_cast<size_t>(call.input_column)].type;
      AggregateState::One once;
      for (const auto& [cell, rows] : a.distinct()) FoldCell(call.function, type, cell, &once);
      AppendResult(call, once, &c);
    }
  }
}

void Aggregator::AppendResult(const AggregateCall& call, const AggregateState::One& a,
                              Column* out) const {
  Column& c = *out;
  switch (call.function) {
    case AggregateFunction::kCount:
      c.Append<int64_t>(a.count);
      return;
    case AggregateFunction::kMin:
    case AggregateFunction::kMax:
      a.has ? AppendCell(&c, a.cell) : c.AppendNull();
      return;
    case AggregateFunction::kListAgg: {
      if (a.list().empty()) {
        c.AppendNull();
        return;
      }
      std::string joined;
      for (size_t i = 0; i < a.list().size(); ++i) {
        if (i > 0) joined += call.separator;
        joined += a.list()[i];
      }
      c.AppendBytes(joined);
      return;
    }
    case AggregateFunction::kSum:
    case AggregateFunction::kAvg:
      break;
  }
  if (!a.has) {
    c.AppendNull();
    return;
  }
  const bool avg = call.function == AggregateFunction::kAvg;
  const DataType& type = call.output_type;
  if (IsFloating(type)) {
    double v = avg ? a.floating / static_cast<double>(a.count) : a.floating;
    type.id == TypeId::kFloat ? c.Append<float>(static_cast<float>(v)) : c.Append(v);
    return;
  }
  if (avg && type.id == TypeId::kDecimal) {
    // DECIMAL(38, max(6, s)): the sum over the count, HALF_UP, as Flink's decimal divide.
    const int scale = input_->fields[static_cast<size_t>(call.input_column)].type.scale;
    const std::optional<Int128> v =
        decimal::Apply(ArithOp::kDiv, a.integer, scale, a.count, 0, type.precision, type.scale);
    v ? c.Append<Int128>(*v) : c.AppendNull();
    return;
  }
  // Integer AVG truncates toward zero, as Flink's.
  Int128 v = avg ? a.integer / a.count : a.integer;
  switch (type.id) {
    case TypeId::kInt32:
      c.Append<int32_t>(static_cast<int32_t>(v));
      return;
    case TypeId::kDecimal:
      c.Append<Int128>(v);
      return;
    default:
      c.Append<int64_t>(static_cast<int64_t>(v));
      return;
  }
}

}  // namespace floe::sql::internal

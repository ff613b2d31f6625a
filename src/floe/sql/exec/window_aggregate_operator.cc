#include "floe/sql/exec/window_aggregate_operator.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <utility>

#include "floe/common/byte_codec.h"
#include "floe/common/crash_point.h"
#include "floe/runtime/partitioner.h"

namespace floe::sql {

namespace {

constexpr uint32_t kStateVersion = 1;
// Flink fires a window once the watermark reaches its last millisecond (window_end - 1 ms);
// floe's timestamps are microseconds.
constexpr int64_t kOneMilli = 1000;

int64_t FloorMod(int64_t a, int64_t b) { return ((a % b) + b) % b; }

// One value of a column as bytes: the fixed-width storage, or the string / binary bytes.
std::string CellOf(const Column& c, size_t row) {
  const int w = c.type().fixed_width();
  if (w == 0) return std::string(c.GetBytes(row));
  return std::string(reinterpret_cast<const char*>(c.values<uint8_t>()) + row * w, w);
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

// A window's namespace in the keyed state: its start and end.
std::string WindowNamespace(int64_t start, int64_t end) {
  ByteWriter w;
  w.PutI64(start);
  w.PutI64(end);
  return w.Finish();
}

using Sessions = std::vector<std::pair<int64_t, int64_t>>;

std::string EncodeSessions(const Sessions& sessions) {
  ByteWriter w;
  w.PutU32(static_cast<uint32_t>(sessions.size()));
  for (const auto& [start, end] : sessions) {
    w.PutI64(start);
    w.PutI64(end);
  }
  return w.Finish();
}

Result<Sessions> DecodeSessions(std::string_view bytes) {
  ByteReader r(bytes);
  FLOE_ASSIGN_OR_RAISE(uint32_t n, r.GetU32());
  Sessions out;
  for (uint32_t i = 0; i < n; ++i) {
    FLOE_ASSIGN_OR_RAISE(int64_t start, r.GetI64());
    FLOE_ASSIGN_OR_RAISE(int64_t end, r.GetI64());
    out.emplace_back(start, end);
  }
  FLOE_RETURN_NOT_OK(r.ExpectEnd());
  return out;
}

bool IsFloating(const DataType& t) { return t.id == TypeId::kFloat || t.id == TypeId::kDouble; }

// A numeric input value widened for summing: integers as int64, decimals as their unscaled
// Int128, floats as double.
struct Number {
  Int128 integer = 0;
  double floating = 0;
};

Number NumberAt(const Column& c, size_t row) {
  Number n;
  switch (c.type().id) {
    case TypeId::kInt32:
      n.integer = c.Get<int32_t>(row);
      break;
    case TypeId::kInt64:
      n.integer = c.Get<int64_t>(row);
      break;
    case TypeId::kDecimal:
      n.integer = c.Get<Int128>(row);
      break;
    case TypeId::kFloat:
      n.floating = c.Get<float>(row);
      break;
    case TypeId::kDouble:
      n.floating = c.Get<double>(row);
      break;
    default:
      break;
  }
  return n;
}

}  // namespace

std::vector<std::pair<int64_t, int64_t>> WindowsOf(const WindowSpec& spec, int64_t ts) {
  const int64_t size = spec.size_ms * kOneMilli, step = spec.step_ms * kOneMilli;
  const int64_t offset = spec.offset_ms * kOneMilli;
  std::vector<std::pair<int64_t, int64_t>> out;
  switch (spec.kind) {
    case WindowKind::kTumble: {
      int64_t start = ts - FloorMod(ts - offset, size);
      out.emplace_back(start, start + size);
      break;
    }
    case WindowKind::kHop: {
      // Every window of `size` starting at offset + a multiple of `step` that holds ts.
      int64_t last = ts - FloorMod(ts - offset, step);
      for (int64_t start = last - size + step; start <= last; start += step) {
        out.emplace_back(start, start + size);
      }
      break;
    }
    case WindowKind::kCumulate: {
      // The windows [start, start + k * step) of the size-long window holding ts whose end is
      // past ts.
      int64_t start = ts - FloorMod(ts - offset, size);
      for (int64_t end = start + ((ts - start) / step + 1) * step; end <= start + size;
           end += step) {
        out.emplace_back(start, end);
      }
      break;
    }
    case WindowKind::kSession:
      break;  // sessions merge; not computed here
  }
  return out;
}

std::shared_ptr<const BatchSchema> WindowAggregateOutput(const WindowAggregateSpec& spec) {
  auto schema = std::make_shared<BatchSchema>();
  for (int k : spec.key_columns) schema->fields.push_back(spec.input->fields[k]);
  const DataType time = spec.input->fields[spec.window.time_column].type;
  schema->fields.push_back(Field{"window_start", DataType::Timestamp(), false, 0});
  schema->fields.push_back(Field{"window_end", DataType::Timestamp(), false, 0});
  schema->fields.push_back(Field{"window_time", time, false, 0});
  for (size_t i = 0; i < spec.aggregates.size(); ++i) {
    const AggregateCall& a = spec.aggregates[i];
    schema->fields.push_back(Field{"agg" + std::to_string(i), a.output_type, a.nullable, 0});
  }
  return schema;
}

// The accumulators of one key and window, serialized into one value state.
struct WindowAggregateOperator::Accumulators {
  struct One {
    int64_t count = 0;  // COUNT / rows summed (AVG)
    bool has = false;   // SUM / MIN / MAX / AVG saw a non-null value
    Int128 integer = 0;
    double floating = 0;
    std::string cell;  // MIN / MAX
    std::set<std::string> distinct;
  };
  std::string key;  // the key cells, for the output row
  std::vector<One> aggs;

  std::string Encode() const {
    ByteWriter w;
    w.PutString(key);
    w.PutU32(static_cast<uint32_t>(aggs.size()));
    for (const One& a : aggs) {
      w.PutI64(a.count);
      w.PutBool(a.has);
      w.PutU64(static_cast<uint64_t>(a.integer));
      w.PutU64(static_cast<uint64_t>(static_cast<unsigned __int128>(a.integer) >> 64));
      w.PutDouble(a.floating);
      w.PutString(a.cell);
      w.PutU32(static_cast<uint32_t>(a.distinct.size()));
      for (const std::string& d : a.distinct) w.PutString(d);
    }
    return w.Finish();
  }

  static Result<Accumulators> Decode(std::string_view bytes) {
    ByteReader r(bytes);
    Accumulators acc;
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
        a.distinct.insert(std::move(v));
      }
      acc.aggs.push_back(std::move(a));
    }
    FLOE_RETURN_NOT_OK(r.ExpectEnd());
    return acc;
  }
};

Result<std::unique_ptr<WindowAggregateOperator>> WindowAggregateOperator::Make(
    WindowAggregateSpec spec) {
  const int n = spec.input ? static_cast<int>(spec.input->fields.size()) : 0;
  auto bad = [](const std::string& m) { return Status::InvalidArgument("window aggregate: " + m); };
  const WindowSpec& w = spec.window;
  if (w.time_column < 0 || w.time_column >= n) return bad("no time column");
  TypeId time = spec.input->fields[w.time_column].type.id;
  if (time != TypeId::kTimestamp && time != TypeId::kTimestampTz) {
    return bad("the time column must be TIMESTAMP(3) or TIMESTAMP_LTZ(3)");
  }
  const bool stepped = w.kind == WindowKind::kHop || w.kind == WindowKind::kCumulate;
  if (w.size_ms <= 0 || (stepped && w.step_ms <= 0)) {
    return bad("window size (SESSION: gap) and step must be positive");
  }
  if (stepped && w.size_ms % w.step_ms != 0) {
    return bad("the window size must be a multiple of its step");
  }
  for (int k : spec.key_columns) {
    if (k < 0 || k >= n) return bad("key column out of range");
  }
  for (const AggregateCall& a : spec.aggregates) {
    if (a.input_column >= n || (a.input_column < 0 && a.function != AggregateFunction::kCount)) {
      return bad("aggregate input out of range");
    }
  }
  return std::unique_ptr<WindowAggregateOperator>(new WindowAggregateOperator(std::move(spec)));
}

WindowAggregateOperator::WindowAggregateOperator(WindowAggregateSpec spec)
    : spec_(std::move(spec)), output_(WindowAggregateOutput(spec_)) {}

WindowAggregateOperator::~WindowAggregateOperator() = default;

size_t WindowAggregateOperator::open_windows() const { return state_ ? state_->num_entries() : 0; }

Status WindowAggregateOperator::Open(const runtime::OperatorContext& ctx) {
  FLOE_ASSIGN_OR_RAISE(runtime::KeyedStateOptions options,
                       runtime::KeyedStateOptions::FromOptions(spec_.job_config, ctx.task));
  options.ttl = std::chrono::milliseconds(0);  // windows are purged by their timers
  FLOE_ASSIGN_OR_RAISE(state_, runtime::KeyedStateBackend::Make(std::move(options)));
  FLOE_ASSIGN_OR_RAISE(accumulators_, state_->GetValueState("window-accumulators"));
  FLOE_ASSIGN_OR_RAISE(sessions_, state_->GetValueState("window-sessions"));
  return Status::OK();
}

Status WindowAggregateOperator::Restore(runtime::StateReader& state) {
  FLOE_ASSIGN_OR_RAISE(uint32_t version, state.GetU32());
  if (version != kStateVersion) {
    return Status::Corruption("window aggregate state: unknown format version " +
                              std::to_string(version));
  }
  FLOE_ASSIGN_OR_RAISE(int64_t watermark, state.GetI64());
  watermark_ = runtime::Watermark(watermark);
  FLOE_ASSIGN_OR_RAISE(late_records_dropped_, state.GetI64());
  FLOE_ASSIGN_OR_RAISE(std::string keyed, state.GetBytes());
  runtime::StateReader keyed_reader(keyed);
  FLOE_RETURN_NOT_OK(state_->Restore(keyed_reader));
  return state.ExpectEnd();
}

Status WindowAggregateOperator::OnBarrier(runtime::CheckpointId id, runtime::StateWriter& state,
                                          runtime::Collector& out) {
  (void)id, (void)out;
  state.PutU32(kStateVersion);
  state.PutI64(watermark_.micros);
  state.PutI64(late_records_dropped_);
  runtime::StateWriter keyed;
  FLOE_RETURN_NOT_OK(state_->Snapshot(keyed));
  state.PutBytes(keyed.data());
  return Status::OK();
}

void WindowAggregateOperator::AddRow(const RecordBatch& batch, size_t row,
                                     Accumulators* acc) const {
  for (size_t i = 0; i < spec_.aggregates.size(); ++i) {
    const AggregateCall& call = spec_.aggregates[i];
    Accumulators::One& a = acc->aggs[i];
    if (call.input_column < 0) {  // COUNT(*)
      ++a.count;
      continue;
    }
    const Column& c = batch.column(call.input_column);
    if (c.IsNull(row)) continue;  // aggregates skip NULLs
    if (call.distinct) {
      a.distinct.insert(CellOf(c, row));
      continue;
    }
    switch (call.function) {
      case AggregateFunction::kCount:
        ++a.count;
        break;
      case AggregateFunction::kSum:
      case AggregateFunction::kAvg: {
        Number v = NumberAt(c, row);
        a.integer += v.integer;
        a.floating += v.floating;
        ++a.count;
        a.has = true;
        break;
      }
      case AggregateFunction::kMin:
      case AggregateFunction::kMax: {
        std::string cell = CellOf(c, row);
        int cmp = a.has ? CompareCells(c.type(), cell, a.cell) : 0;
        if (!a.has || (call.function == AggregateFunction::kMin ? cmp < 0 : cmp > 0)) {
          a.cell = std::move(cell);
        }
        a.has = true;
        break;
      }
    }
  }
}

void WindowAggregateOperator::Merge(const Accumulators& from, Accumulators* into) const {
  for (size_t i = 0; i < spec_.aggregates.size(); ++i) {
    const AggregateCall& call = spec_.aggregates[i];
    const Accumulators::One& f = from.aggs[i];
    Accumulators::One& a = into->aggs[i];
    a.count += f.count;
    a.integer += f.integer;
    a.floating += f.floating;
    a.distinct.insert(f.distinct.begin(), f.distinct.end());
    if (!f.has) continue;
    if ((call.function == AggregateFunction::kMin || call.function == AggregateFunction::kMax) &&
        a.has) {
      const DataType& type = spec_.input->fields[call.input_column].type;
      int cmp = CompareCells(type, f.cell, a.cell);
      if (call.function == AggregateFunction::kMin ? cmp < 0 : cmp > 0) a.cell = f.cell;
    } else if (!a.has) {
      a.cell = f.cell;
    }
    a.has = true;
  }
}

Status WindowAggregateOperator::ProcessBatch(const RecordBatch& batch, int input,
                                             runtime::Collector& out) {
  (void)input, (void)out;
  const Column& time = batch.column(spec_.window.time_column);
  std::string key, ns, value;  // reused across rows
  for (size_t row = 0; row < batch.num_rows(); ++row) {
    if (time.IsNull(row)) {
      ++late_records_dropped_;  // no window holds a row without event time
      continue;
    }
    std::vector<std::pair<int64_t, int64_t>> windows =
        WindowsOf(spec_.window, time.Get<int64_t>(row));
    key.clear();
    for (int k : spec_.key_columns) {
      const Column& c = batch.column(k);
      if (c.IsNull(row)) {
        key.push_back('\0');
        continue;
      }
      std::string cell = CellOf(c, row);
      key.push_back('\1');
      ByteWriter w;
      w.PutString(cell);
      key += w.data();
    }
    bool placed = false;
    const uint64_t hash = runtime::HashKeyRow(batch, spec_.key_columns, row);
    if (spec_.window.kind == WindowKind::kSession) {
      FLOE_RETURN_NOT_OK(state_->SetCurrentKey(key, hash));
      bool late = false;
      FLOE_RETURN_NOT_OK(AddToSession(key, time.Get<int64_t>(row), batch, row, &late));
      if (late) ++late_records_dropped_;
      continue;
    }
    for (const auto& [start, end] : windows) {
      if (end - kOneMilli <= watermark_.micros) continue;  // fired already: late for it
      placed = true;
      FLOE_RETURN_NOT_OK(state_->SetCurrentKey(key, hash));
      ns = WindowNamespace(start, end);
      state_->SetCurrentNamespace(ns);
      FLOE_ASSIGN_OR_RAISE(bool exists, accumulators_.Get(&value));
      Accumulators acc;
      if (exists) {
        FLOE_ASSIGN_OR_RAISE(acc, Accumulators::Decode(value));
      } else {
        acc.key = key;
        acc.aggs.resize(spec_.aggregates.size());
        FLOE_RETURN_NOT_OK(state_->RegisterTimer(runtime::TimeDomain::kEventTime, end - kOneMilli));
      }
      AddRow(batch, row, &acc);
      FLOE_RETURN_NOT_OK(accumulators_.Update(acc.Encode()));
    }
    if (!placed) ++late_records_dropped_;
  }
  return Status::OK();
}

Status WindowAggregateOperator::AddToSession(const std::string& key, int64_t ts,
                                             const RecordBatch& batch, size_t row, bool* late) {
  const int64_t gap = spec_.window.size_ms * kOneMilli;
  std::string value;
  state_->SetCurrentNamespace("");
  FLOE_ASSIGN_OR_RAISE(bool has_sessions, sessions_.Get(&value));
  Sessions sessions;
  if (has_sessions) {
    FLOE_ASSIGN_OR_RAISE(sessions, DecodeSessions(value));
  }
  int64_t start = ts, end = ts + gap;
  Sessions merged_from, kept;
  for (const auto& s : sessions) {
    if (s.first <= end && s.second >= start) {  // overlap or touch: one session
      merged_from.push_back(s);
      start = std::min(start, s.first);
      end = std::max(end, s.second);
    } else {
      kept.push_back(s);
    }
  }
  if (end - kOneMilli <= watermark_.micros) {
    *late = true;  // the session it would belong to has fired
    return Status::OK();
  }
  Accumulators acc;
  acc.key = key;
  acc.aggs.resize(spec_.aggregates.size());
  for (const auto& [s_start, s_end] : merged_from) {
    state_->SetCurrentNamespace(WindowNamespace(s_start, s_end));
    FLOE_ASSIGN_OR_RAISE(bool exists, accumulators_.Get(&value));
    if (exists) {
      FLOE_ASSIGN_OR_RAISE(Accumulators old, Accumulators::Decode(value));
      Merge(old, &acc);
    }
    FLOE_RETURN_NOT_OK(accumulators_.Clear());
    FLOE_RETURN_NOT_OK(state_->DeleteTimer(runtime::TimeDomain::kEventTime, s_end - kOneMilli));
  }
  AddRow(batch, row, &acc);
  state_->SetCurrentNamespace(WindowNamespace(start, end));
  FLOE_RETURN_NOT_OK(accumulators_.Update(acc.Encode()));
  FLOE_RETURN_NOT_OK(state_->RegisterTimer(runtime::TimeDomain::kEventTime, end - kOneMilli));
  kept.emplace_back(start, end);
  state_->SetCurrentNamespace("");
  return sessions_.Update(EncodeSessions(kept));
}

Status WindowAggregateOperator::Fire(const runtime::Timer& timer, RecordBatch* out) {
  std::string value;
  FLOE_ASSIGN_OR_RAISE(bool exists, accumulators_.Get(&value));
  if (!exists) return Status::OK();
  FLOE_ASSIGN_OR_RAISE(Accumulators acc, Accumulators::Decode(value));
  FLOE_RETURN_NOT_OK(accumulators_.Clear());
  ByteReader ns(timer.ns);
  FLOE_ASSIGN_OR_RAISE(int64_t start, ns.GetI64());
  FLOE_ASSIGN_OR_RAISE(int64_t end, ns.GetI64());
  if (spec_.window.kind == WindowKind::kSession) {
    state_->SetCurrentNamespace("");
    FLOE_ASSIGN_OR_RAISE(bool has_sessions, sessions_.Get(&value));
    Sessions sessions;
    if (has_sessions) {
      FLOE_ASSIGN_OR_RAISE(sessions, DecodeSessions(value));
    }
    std::erase(sessions, std::make_pair(start, end));
    FLOE_RETURN_NOT_OK(sessions.empty() ? sessions_.Clear()
                                        : sessions_.Update(EncodeSessions(sessions)));
  }

  size_t col = 0;
  ByteReader key(acc.key);
  for (size_t k = 0; k < spec_.key_columns.size(); ++k, ++col) {
    Column& c = out->mutable_column(col);
    FLOE_ASSIGN_OR_RAISE(uint8_t present, key.GetU8());
    if (present == 0) {
      c.AppendNull();
      continue;
    }
    FLOE_ASSIGN_OR_RAISE(std::string cell, key.GetString());
    AppendCell(&c, cell);
  }
  out->mutable_column(col++).Append<int64_t>(start);
  out->mutable_column(col++).Append<int64_t>(end);
  out->mutable_column(col++).Append<int64_t>(end - kOneMilli);  // window_time
  for (size_t i = 0; i < spec_.aggregates.size(); ++i, ++col) {
    const AggregateCall& call = spec_.aggregates[i];
    const Accumulators::One& a = acc.aggs[i];
    Column& c = out->mutable_column(col);
    if (call.distinct) {  // COUNT(DISTINCT col); the planner allows no other DISTINCT
      c.Append<int64_t>(static_cast<int64_t>(a.distinct.size()));
      continue;
    }
    switch (call.function) {
      case AggregateFunction::kCount:
        c.Append<int64_t>(a.count);
        break;
      case AggregateFunction::kMin:
      case AggregateFunction::kMax:
        a.has ? AppendCell(&c, a.cell) : c.AppendNull();
        break;
      case AggregateFunction::kSum:
      case AggregateFunction::kAvg: {
        if (!a.has) {
          c.AppendNull();
          break;
        }
        const bool avg = call.function == AggregateFunction::kAvg;
        const DataType& type = call.output_type;
        if (IsFloating(type)) {
          double v = avg ? a.floating / static_cast<double>(a.count) : a.floating;
          type.id == TypeId::kFloat ? c.Append<float>(static_cast<float>(v)) : c.Append(v);
          break;
        }
        // Integer AVG truncates toward zero, as Flink's; a DECIMAL AVG keeps the input scale
        // here (the planner's DECIMAL(38, max(6, s)) rescaling is left to the sink Calc).
        Int128 v = avg ? a.integer / a.count : a.integer;
        switch (type.id) {
          case TypeId::kInt32:
            c.Append<int32_t>(static_cast<int32_t>(v));
            break;
          case TypeId::kDecimal:
            c.Append<Int128>(v);
            break;
          default:
            c.Append<int64_t>(static_cast<int64_t>(v));
            break;
        }
        break;
      }
    }
  }
  return Status::OK();
}

Status WindowAggregateOperator::OnWatermark(runtime::Watermark watermark, runtime::Collector& out) {
  if (watermark <= watermark_) return Status::OK();  // watermarks only move forward
  watermark_ = watermark;
  RecordBatch fired(output_);
  FLOE_RETURN_NOT_OK(state_->AdvanceWatermark(
      watermark, [&](const runtime::Timer& timer) { return Fire(timer, &fired); }));
  if (fired.num_rows() > 0) {
    FLOE_RETURN_NOT_OK(out.Emit(std::move(fired)));
    // Fired and sent on, not yet in any checkpoint: a restore must fire these windows again,
    // and the sink must not have committed them.
    CrashPoint("window-after-fire");
  }
  return out.EmitWatermark(watermark);
}

}  // namespace floe::sql

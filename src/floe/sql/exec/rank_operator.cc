#include "floe/sql/exec/rank_operator.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <utility>

#include "floe/common/byte_codec.h"
#include "floe/runtime/partitioner.h"
#include "floe/runtime/row_kind.h"
#include "floe/sql/ast.h"
#include "floe/sql/exec/aggregator.h"
#include "floe/sql/exec/window_aggregate_operator.h"

namespace floe::sql {

struct RankOperator::Entry {
  std::string order;  // OrderKey: compares as the ORDER BY does, byte by byte
  std::string cells;  // every column, internal::KeyOf
};

namespace {

// 1: the shape; 2: the shape and the watermark (a window rank).
constexpr uint32_t kStateVersion = 1;
constexpr uint32_t kWindowedStateVersion = 2;

template <typename U>
void PutBigEndian(U v, std::string* out) {
  for (int shift = static_cast<int>(sizeof(U)) * 8 - 8; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>(static_cast<uint8_t>(v >> shift)));
  }
}

// The value of `c` at `row` in bytes that compare (memcmp, shorter first) as SQL orders it
// ascending: numbers and times by value, strings and bytes by bytes. NULL is ordered apart (see
// OrderKey).
void AppendOrderCell(const Column& c, size_t row, std::string* out) {
  switch (c.type().id) {
    case TypeId::kBoolean:
      out->push_back(static_cast<char>(c.Get<uint8_t>(row)));
      return;
    case TypeId::kInt32:
    case TypeId::kDate:
      PutBigEndian(static_cast<uint32_t>(c.Get<int32_t>(row)) ^ 0x80000000u, out);
      return;
    case TypeId::kInt64:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTime:
      PutBigEndian(static_cast<uint64_t>(c.Get<int64_t>(row)) ^ (uint64_t{1} << 63), out);
      return;
    case TypeId::kFloat: {
      uint32_t bits = 0;
      const float v = c.Get<float>(row);
      std::memcpy(&bits, &v, sizeof(bits));
      PutBigEndian((bits >> 31) != 0 ? ~bits : bits ^ 0x80000000u, out);
      return;
    }
    case TypeId::kDouble: {
      uint64_t bits = 0;
      const double v = c.Get<double>(row);
      std::memcpy(&bits, &v, sizeof(bits));
      PutBigEndian((bits >> 63) != 0 ? ~bits : bits ^ (uint64_t{1} << 63), out);
      return;
    }
    case TypeId::kDecimal:
      PutBigEndian(static_cast<unsigned __int128>(c.Get<Int128>(row)) ^
                       (static_cast<unsigned __int128>(1) << 127),
                   out);
      return;
    case TypeId::kString:
    case TypeId::kBinary:
      // 0 escaped as 0 255, ended by 0 0: no encoding is a prefix of another.
      for (char b : c.GetBytes(row)) {
        out->push_back(b);
        if (b == 0) out->push_back(static_cast<char>(0xFF));
      }
      out->append(2, '\0');
      return;
  }
}

std::string OrderKey(const RecordBatch& batch, size_t row,
                     const std::vector<RankSpec::Order>& order) {
  std::string key;
  for (const RankSpec::Order& o : order) {
    const Column& c = batch.column(static_cast<size_t>(o.column));
    if (c.IsNull(row)) {  // before (0) or after (2) every value (1), whatever the direction
      key.push_back(static_cast<char>(o.nulls_first ? 0 : 2));
      continue;
    }
    key.push_back(1);
    const size_t start = key.size();
    AppendOrderCell(c, row, &key);
    if (o.descending) {
      for (size_t i = start; i < key.size(); ++i) key[i] = static_cast<char>(~key[i]);
    }
  }
  return key;
}

std::string Encode(const std::vector<RankOperator::Entry>& top) {
  ByteWriter w;
  w.PutU32(static_cast<uint32_t>(top.size()));
  for (const RankOperator::Entry& e : top) {
    w.PutString(e.order);
    w.PutString(e.cells);
  }
  return w.Finish();
}

Result<std::vector<RankOperator::Entry>> Decode(std::string_view bytes) {
  ByteReader r(bytes);
  FLOE_ASSIGN_OR_RAISE(uint32_t n, r.GetU32());
  std::vector<RankOperator::Entry> top;
  for (uint32_t i = 0; i < n; ++i) {
    RankOperator::Entry e;
    FLOE_ASSIGN_OR_RAISE(e.order, r.GetString());
    FLOE_ASSIGN_OR_RAISE(e.cells, r.GetString());
    top.push_back(std::move(e));
  }
  FLOE_RETURN_NOT_OK(r.ExpectEnd());
  return top;
}

// What the state means, checked at a restore (internal::CheckStateShape).
std::string ShapeOf(const RankSpec& spec) {
  const auto name = [&](int c) {
    const Field& f = spec.input->fields[static_cast<size_t>(c)];
    return f.name + " " + SqlTypeName(f.type);
  };
  std::string shape = "ROW_NUMBER over (";
  for (size_t i = 0; i < spec.input->fields.size(); ++i) {
    shape += (i > 0 ? ", " : "") + name(static_cast<int>(i));
  }
  shape += ") partitioned by (";
  for (size_t i = 0; i < spec.partition_columns.size(); ++i) {
    shape += (i > 0 ? ", " : "") + name(spec.partition_columns[i]);
  }
  shape += ") ordered by (";
  for (size_t i = 0; i < spec.order.size(); ++i) {
    shape += (i > 0 ? ", " : "") + name(spec.order[i].column) +
             (spec.order[i].descending ? " DESC" : "") +
             (spec.order[i].nulls_first == spec.order[i].descending
                  ? (spec.order[i].nulls_first ? " NULLS FIRST" : " NULLS LAST")
                  : "");
  }
  shape += "), ranks " + std::to_string(spec.first) + ".." + std::to_string(spec.limit);
  return spec.window_end_column < 0 ? shape
                                    : shape + " per window" + WindowClock(spec.zone).Describe();
}

}  // namespace

std::shared_ptr<const BatchSchema> RankOutput(const RankSpec& spec) {
  BatchSchema schema = *spec.input;
  if (spec.output_number) {
    schema.fields.push_back(Field{std::string(kRowNumberColumn), DataType::Int64(), false, 0});
  }
  if (spec.window_end_column >= 0 || spec.insert_only) {
    return std::make_shared<const BatchSchema>(std::move(schema));
  }
  return runtime::WithRowKindColumn(schema);
}

Result<std::unique_ptr<RankOperator>> RankOperator::Make(RankSpec spec) {
  const int n = spec.input ? static_cast<int>(spec.input->fields.size()) : 0;
  for (int c : spec.partition_columns) {
    if (c < 0 || c >= n) return Status::InvalidArgument("rank: partition column out of range");
  }
  if (spec.order.empty() && spec.limit != 1) {
    return Status::InvalidArgument("rank: arrival order keeps one row");
  }
  if (spec.insert_only && (!spec.order.empty() || spec.ties_replace || spec.limit != 1 ||
                           spec.window_end_column >= 0)) {
    return Status::InvalidArgument("rank: only keep-first deduplication on arrival emits inserts");
  }
  for (const RankSpec::Order& o : spec.order) {
    if (o.column < 0 || o.column >= n) {
      return Status::InvalidArgument("rank: order column out of range");
    }
  }
  if (spec.limit < 1) return Status::InvalidArgument("rank: the limit must be at least 1");
  return std::unique_ptr<RankOperator>(new RankOperator(std::move(spec)));
}

RankOperator::RankOperator(RankSpec spec)
    : spec_(std::move(spec)), output_(RankOutput(spec_)), shape_(ShapeOf(spec_)) {
  for (size_t c = 0; c < spec_.input->fields.size(); ++c) {
    all_columns_.push_back(static_cast<int>(c));
  }
}

RankOperator::~RankOperator() = default;

Result<runtime::KeyedStateOptions> RankOperator::KeyedStateOptionsFor(const RankSpec& spec) {
  return runtime::KeyedStateOptions::FromOptions(spec.job_config, {});
}

Status RankOperator::Open(const runtime::OperatorContext& ctx) {
  if (ctx.keyed_state == nullptr) {
    return Status::Internal("rank '" + ctx.task.name() + "' has no keyed state");
  }
  state_ = ctx.keyed_state;
  task_ = ctx.task.name();
  FLOE_ASSIGN_OR_RAISE(kept_, state_->GetValueState("rank-kept-rows", /*ttl=*/true));
  return Status::OK();
}

Status RankOperator::Restore(runtime::StateReader& state) {
  FLOE_ASSIGN_OR_RAISE(uint32_t version, state.GetU32());
  if (version != kStateVersion && version != kWindowedStateVersion) {
    return Status::Corruption("rank state: unknown format version " + std::to_string(version));
  }
  FLOE_ASSIGN_OR_RAISE(std::string_view restored, state.GetBytesView());
  FLOE_RETURN_NOT_OK(internal::CheckStateShape(task_, restored, shape_));
  if (version == kWindowedStateVersion) {
    FLOE_ASSIGN_OR_RAISE(int64_t watermark, state.GetI64());
    // Rescaled, several subtasks' states arrive: the lowest is the one every window passed.
    if (watermark_.micros == INT64_MIN || watermark < watermark_.micros) {
      watermark_ = runtime::Watermark(watermark);
    }
  }
  return state.ExpectEnd();
}

Status RankOperator::RestoreRescaled(const std::vector<std::string>& states) {
  for (const std::string& blob : states) {
    if (blob.empty()) continue;
    runtime::StateReader reader(blob);
    FLOE_RETURN_NOT_OK(Restore(reader));
  }
  return Status::OK();
}

Status RankOperator::OnBarrier(runtime::CheckpointId, runtime::StateWriter& state,
                               runtime::Collector&) {
  state.PutU32(windowed() ? kWindowedStateVersion : kStateVersion);
  state.PutString(shape_);
  if (windowed()) state.PutI64(watermark_.micros);
  return Status::OK();
}

Status RankOperator::Append(const Entry& entry, int64_t rank, const char* kind,
                            RecordBatch* changes) const {
  const size_t columns = all_columns_.size();
  FLOE_RETURN_NOT_OK(internal::AppendKey(entry.cells, columns, changes, 0));
  size_t next = columns;
  if (spec_.output_number) changes->mutable_column(next++).Append<int64_t>(rank);
  if (kind != nullptr) changes->mutable_column(next).AppendBytes(kind);
  return Status::OK();
}

bool RankOperator::Enters(const std::string& order, const std::vector<Entry>& top) const {
  if (top.size() < static_cast<size_t>(spec_.limit)) return true;
  const std::string& last = top.back().order;
  return order < last || (spec_.ties_replace && order == last);
}

size_t RankOperator::Place(Entry entry, std::vector<Entry>* top) const {
  auto at = spec_.ties_replace  // keep-last deduplication: the newer row first
                ? top->begin()
                : std::upper_bound(
                      top->begin(), top->end(), entry.order,
                      [](const std::string& order, const Entry& e) { return order < e.order; });
  const size_t position = static_cast<size_t>(at - top->begin());
  top->insert(at, std::move(entry));
  return position;
}

Status RankOperator::Rank(Entry entry, std::vector<Entry>* top, RecordBatch* changes) {
  const size_t kept = top->size();
  const size_t limit = static_cast<size_t>(spec_.limit);
  if (limit == 1) {
    if (kept > 0) FLOE_RETURN_NOT_OK(Append(top->front(), 1, "-U", changes));
    Place(std::move(entry), top);
    top->resize(1);
    return Append(top->front(), 1, spec_.insert_only ? nullptr : kept > 0 ? "+U" : "+I", changes);
  }
  const size_t position = Place(std::move(entry), top);
  if (!spec_.output_number) {
    if (top->size() > limit) {
      FLOE_RETURN_NOT_OK(Append(top->back(), 0, "-D", changes));
      top->pop_back();
    }
    return Append((*top)[position], 0, "+I", changes);
  }
  // The rows from the new one's rank down move one rank lower: each rank's old and new row.
  const size_t last = std::min(kept, limit);
  for (size_t rank = position + 1; rank <= last; ++rank) {
    FLOE_RETURN_NOT_OK(Append((*top)[rank], static_cast<int64_t>(rank), "-U", changes));
    FLOE_RETURN_NOT_OK(Append((*top)[rank - 1], static_cast<int64_t>(rank), "+U", changes));
  }
  if (kept < limit) {
    FLOE_RETURN_NOT_OK(Append((*top)[kept], static_cast<int64_t>(kept + 1), "+I", changes));
  }
  if (top->size() > limit) top->resize(limit);
  return Status::OK();
}

Status RankOperator::ProcessBatch(const RecordBatch& batch, int, runtime::Collector& out) {
  // The kept rows of each partition (a window rank's: of each partition and window), read once
  // per batch and written back after it if a row entered.
  struct Kept {
    uint64_t hash = 0;
    std::string key, ns;
    std::vector<Entry> top;
    bool changed = false;
  };
  std::unordered_map<std::string, size_t> index;  // key + namespace -> kept
  std::vector<Kept> kept;
  RecordBatch changes(output_);
  std::string value;
  const WindowClock clock(spec_.zone);
  for (size_t row = 0; row < batch.num_rows(); ++row) {
    std::string ns;
    int64_t end = 0;
    if (windowed()) {
      end = batch.column(static_cast<size_t>(spec_.window_end_column)).Get<int64_t>(row);
      if (clock.FiresAt(end) <= watermark_.micros) continue;  // its window fired: late
      ns = std::string_view(WindowNamespace(
          batch.column(static_cast<size_t>(spec_.window_start_column)).Get<int64_t>(row), end));
    }
    std::string key = internal::KeyOf(batch, row, spec_.partition_columns);
    auto [it, fresh] = index.try_emplace(key + ns, kept.size());
    if (fresh) {
      Kept k;
      k.hash = runtime::HashKeyRow(batch, spec_.partition_columns, row);
      FLOE_RETURN_NOT_OK(state_->SetCurrentKey(key, k.hash));
      state_->SetCurrentNamespace(ns);
      FLOE_ASSIGN_OR_RAISE(bool exists, kept_.Get(&value));
      if (exists) {
        FLOE_ASSIGN_OR_RAISE(k.top, Decode(value));
      } else if (windowed()) {
        FLOE_RETURN_NOT_OK(
            state_->RegisterTimer(runtime::TimeDomain::kEventTime, clock.FiresAt(end)));
      }
      k.key = std::move(key);
      k.ns = std::move(ns);
      kept.push_back(std::move(k));
    }
    Kept& k = kept[it->second];
    std::string order = OrderKey(batch, row, spec_.order);
    if (!Enters(order, k.top)) continue;  // before its cells are encoded: most rows stop here
    Entry entry{std::move(order), internal::KeyOf(batch, row, all_columns_)};
    k.changed = true;
    if (windowed()) {  // emitted when the window fires
      Place(std::move(entry), &k.top);
      if (k.top.size() > static_cast<size_t>(spec_.limit)) k.top.pop_back();
    } else {
      FLOE_RETURN_NOT_OK(Rank(std::move(entry), &k.top, &changes));
    }
  }
  for (const Kept& k : kept) {
    if (!k.changed) continue;
    FLOE_RETURN_NOT_OK(state_->SetCurrentKey(k.key, k.hash));
    state_->SetCurrentNamespace(k.ns);
    FLOE_RETURN_NOT_OK(kept_.Update(Encode(k.top)));
  }
  if (changes.num_rows() == 0) return Status::OK();
  return out.Emit(std::move(changes));
}

Status RankOperator::OnWatermark(runtime::Watermark watermark, runtime::Collector& out) {
  if (!windowed()) return out.EmitWatermark(watermark);
  if (watermark <= watermark_) return Status::OK();  // watermarks only move forward
  watermark_ = watermark;
  RecordBatch fired(output_);
  std::string value;
  FLOE_RETURN_NOT_OK(state_->AdvanceWatermark(watermark, [&](const runtime::Timer&) -> Status {
    FLOE_ASSIGN_OR_RAISE(bool exists, kept_.Get(&value));
    if (!exists) return Status::OK();
    FLOE_ASSIGN_OR_RAISE(std::vector<Entry> top, Decode(value));
    for (size_t i = static_cast<size_t>(spec_.first - 1); i < top.size(); ++i) {
      FLOE_RETURN_NOT_OK(Append(top[i], static_cast<int64_t>(i + 1), nullptr, &fired));
    }
    return kept_.Clear();
  }));
  if (fired.num_rows() > 0) FLOE_RETURN_NOT_OK(out.Emit(std::move(fired)));
  return out.EmitWatermark(watermark);
}

}  // namespace floe::sql

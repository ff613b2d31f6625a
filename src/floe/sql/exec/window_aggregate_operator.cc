#include "floe/sql/exec/window_aggregate_operator.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <unordered_map>
#include <utility>

#include "floe/common/byte_codec.h"
#include "floe/common/crash_point.h"
#include "floe/common/flat_string_map.h"
#include "floe/common/log.h"
#include "floe/runtime/partitioner.h"
#include "floe/runtime/row_kind.h"
#include "floe/sql/exec/aggregator.h"

namespace floe::sql {

namespace {

// Rows of fired windows per batch sent on (OnWatermark).
constexpr size_t kFiredBatchRows = 4096;

// 3: the watermark, the late count and the state's shape (StateShape); the runtime snapshots
// the keyed state, which holds the window buffer too (kBufferLayout). 2 (read only): the same,
// written when a barrier flushed the buffer into the keyed state; a binary that reads only 2
// would drop a buffer it cannot see, so it must refuse 3. 1 (read only): the keyed state
// followed, nested in the operator's blob.
constexpr uint32_t kStateVersion = 3;
constexpr uint32_t kFlushedBufferStateVersion = 2;
constexpr uint32_t kNestedKeyedStateVersion = 1;
// Window sizes are planned in milliseconds; floe's timestamps are microseconds. (When a window
// fires, and its window_time: WindowClock.)
constexpr int64_t kOneMilli = 1000;
// The window buffer of one key group, as a barrier left it: one value of the keyed state
// "window-buffer" under the key "" in the group's namespace "". u32 kBufferLayout, then per key:
// bytes key, u64 scope, bool loaded, u32 windows, and per window i64 start, i64 end, u8 flags
// (kBuffer*), the stored bounds (i64, i64) when kBufferStored, varbytes accumulators.
constexpr uint32_t kBufferLayout = 1;
constexpr uint8_t kBufferStored = 1, kBufferDirty = 2, kBufferRemoved = 4;

int64_t FloorMod(int64_t a, int64_t b) { return ((a % b) + b) % b; }

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

}  // namespace

namespace {

// Calls f(start, end) for each window holding ts, ascending by end (WindowsOf without a vector:
// this runs per row).
template <typename F>
void ForEachWindow(const WindowSpec& spec, int64_t ts, F&& f) {
  const int64_t size = spec.size_ms * kOneMilli, step = spec.step_ms * kOneMilli;
  const int64_t offset = spec.offset_ms * kOneMilli;
  switch (spec.kind) {
    case WindowKind::kTumble: {
      int64_t start = ts - FloorMod(ts - offset, size);
      f(start, start + size);
      break;
    }
    case WindowKind::kHop: {
      // Every window of `size` starting at offset + a multiple of `step` that holds ts.
      int64_t last = ts - FloorMod(ts - offset, step);
      for (int64_t start = last - size + step; start <= last; start += step) f(start, start + size);
      break;
    }
    case WindowKind::kCumulate: {
      // The windows [start, start + k * step) of the size-long window holding ts whose end is
      // past ts.
      int64_t start = ts - FloorMod(ts - offset, size);
      for (int64_t end = start + ((ts - start) / step + 1) * step; end <= start + size;
           end += step) {
        f(start, end);
      }
      break;
    }
    case WindowKind::kSession:
      break;  // sessions merge; not computed here
  }
}

}  // namespace

std::vector<std::pair<int64_t, int64_t>> WindowsOf(const WindowSpec& spec, int64_t ts) {
  std::vector<std::pair<int64_t, int64_t>> out;
  ForEachWindow(spec, ts, [&](int64_t start, int64_t end) { out.emplace_back(start, end); });
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
  return spec.split_column >= 0 ? runtime::WithSourceSplitColumn(*schema) : schema;
}

// A window's accumulator held in memory between flushes.
struct WindowAggregateOperator::CachedWindow {
  int64_t start = 0, end = 0;
  internal::AggregateState acc;
  // The bounds under which the keyed state holds it (namespace and timer); unset: not yet there.
  std::optional<std::pair<int64_t, int64_t>> stored;
  bool dirty = false;    // acc or the bounds differ from the stored ones
  bool removed = false;  // a session merged into another: its stored namespace and timer go
};

struct WindowAggregateOperator::CachedKey {
  std::string key;     // KeyOf
  uint64_t scope = 0;  // ClaimedSplits::ScopeOf
  // TUMBLE, HOP, CUMULATE: the windows rows touched since the flush. SESSION: every session of
  // the key, read from the state when the key was first touched, in the state's list order.
  std::vector<CachedWindow> windows;
  // The windows above hold what the state does (SESSION: every session was read). A key whose
  // timer fired is flushed and read again by its next row.
  bool loaded = false;
  size_t position = 0;  // in Cache::keys
};

// How many rows ahead ProcessBatch works out the cache keys, to prefetch their entries.
constexpr size_t kLookAhead = 16;

struct WindowAggregateOperator::Cache {
  FlatStringMap<CachedKey> keys;  // key [+ split when scaled out]
  size_t windows = 0;
  // The rows ahead in ProcessBatch, by row modulo kLookAhead: each one's cache key (CacheKeyText),
  // the key's own length and the hash. Kept here so the strings keep their capacity.
  struct Ahead {
    std::string text;
    size_t key_size = 0;
    uint64_t hash = 0;
    size_t position = FlatStringMap<CachedKey>::npos;  // in `keys`, once looked up
  };
  std::array<Ahead, kLookAhead> ahead;
  // When windows the keyed state has never held are due: the keys' positions in `keys` by the
  // time their window fires. An entry may be stale (the window fired, was flushed, or a session
  // grew); a due one is checked against the key's windows. Rebuilt when it outgrows them. Keys
  // due together are visited in their order in `keys`: memory read forward, not at random.
  //
  // Windows on a grid (TUMBLE, HOP, CUMULATE) fire at few distinct times, so their entries go
  // into one list per time, appended in O(1) and sorted when the list comes due; a heap of
  // (time, key) cost O(log n) cache misses per entry. Sessions end wherever their last row
  // puts them: a heap.
  class DueKeys {
   public:
    explicit DueKeys(bool on_grid) : on_grid_(on_grid) {}
    void Push(int64_t fires_at, size_t key) {
      ++size_;
      if (!on_grid_) {
        heap_.push({fires_at, key});
        return;
      }
      if (last_ == nullptr || last_fires_at_ != fires_at) {
        last_ = &lists_[fires_at];
        last_fires_at_ = fires_at;
      }
      last_->push_back(key);
    }
    // True when a key is due at `watermark` (which only rises).
    bool AnyDue(int64_t watermark) const {
      if (!on_grid_) return !heap_.empty() && heap_.top().fires_at <= watermark;
      return next_ < firing_.size() || (!lists_.empty() && lists_.begin()->first <= watermark);
    }
    // REQUIRES: AnyDue(the watermark). The next key due: earliest time first, then by position.
    size_t Pop() {
      --size_;
      if (!on_grid_) {
        const size_t key = heap_.top().key;
        heap_.pop();
        return key;
      }
      if (next_ == firing_.size()) {
        auto list = lists_.begin();
        firing_ = std::move(list->second);
        lists_.erase(list);
        last_ = nullptr;
        std::sort(firing_.begin(), firing_.end());
        next_ = 0;
      }
      return firing_[next_++];
    }
    size_t size() const { return size_; }
    void Clear() {
      heap_ = {};
      lists_.clear();
      firing_.clear();
      next_ = 0;
      size_ = 0;
      last_ = nullptr;
    }

   private:
    struct Due {
      int64_t fires_at;
      size_t key;
      bool operator>(const Due& o) const {
        return fires_at != o.fires_at ? fires_at > o.fires_at : key > o.key;
      }
    };
    const bool on_grid_;
    size_t size_ = 0;                                                  // entries left
    std::priority_queue<Due, std::vector<Due>, std::greater<>> heap_;  // not on a grid
    std::map<int64_t, std::vector<size_t>> lists_;                     // on a grid: by time
    std::vector<size_t>* last_ = nullptr;  // the list Push appended to last (map nodes stay put)
    int64_t last_fires_at_ = 0;
    std::vector<size_t> firing_;  // the list being fired, sorted
    size_t next_ = 0;             // in firing_
  };
  DueKeys due;
  // The key groups whose window buffer the keyed state holds (a cleared cache leaves them there
  // until the next barrier clears them).
  std::set<uint32_t> buffered_groups;

  explicit Cache(bool on_grid) : due(on_grid) {}
  void Clear() {
    keys.Clear();
    windows = 0;
    due.Clear();
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
  if (spec.changelog && runtime::RowKindIndex(*spec.input) < 0) {
    return bad("a changelog input without its row-kind column");
  }
  if (spec.split_column >= n ||
      (spec.split_column >= 0 &&
       spec.input->fields[spec.split_column].type.id != TypeId::kString)) {
    return bad("the source split column must be a STRING column of the input");
  }
  return std::unique_ptr<WindowAggregateOperator>(new WindowAggregateOperator(std::move(spec)));
}

size_t DefaultWindowBufferLimit(std::string_view backend) {
  return backend == "rocksdb" ? 100000 : 1000000;
}

WindowAggregateOperator::WindowAggregateOperator(WindowAggregateSpec spec)
    : spec_(std::move(spec)),
      clock_(spec_.zone),
      output_(WindowAggregateOutput(spec_)),
      aggregator_(spec_.input, spec_.aggregates, spec_.changelog),
      claims_(spec_.split_column),
      cache_(std::make_unique<Cache>(spec_.window.kind != WindowKind::kSession)),
      shape_(ToString(spec_.window, *spec_.input) + clock_.Describe() +
             (spec_.changelog ? " over a changelog " : " ") +
             internal::StateShape(*spec_.input, spec_.key_columns, spec_.aggregates)),
      kind_column_(spec_.changelog ? runtime::RowKindIndex(*spec_.input) : -1) {}

WindowAggregateOperator::~WindowAggregateOperator() = default;

size_t WindowAggregateOperator::open_windows() const {
  size_t held = 0;  // windows in memory the state does not hold yet
  for (const auto& [_, key] : cache_->keys) {
    for (const CachedWindow& w : key.windows) held += !w.stored && !w.removed;
  }
  // The keyed state's entries less the buffers, which hold windows counted above.
  return (state_ ? state_->num_entries() - cache_->buffered_groups.size() : 0) + held;
}

Result<runtime::KeyedStateOptions> WindowAggregateOperator::KeyedStateOptionsFor(
    const WindowAggregateSpec& spec) {
  FLOE_ASSIGN_OR_RAISE(runtime::KeyedStateOptions options,
                       runtime::KeyedStateOptions::FromOptions(spec.job_config, {}));
  options.ttl = std::chrono::milliseconds(0);  // windows are purged by their timers
  return options;
}

Status WindowAggregateOperator::Open(const runtime::OperatorContext& ctx) {
  if (ctx.keyed_state == nullptr) {
    return Status::Internal("window aggregate '" + ctx.task.name() + "' has no keyed state");
  }
  state_ = ctx.keyed_state;
  task_ = ctx.task.name();
  subtask_ = ctx.task.subtask.value;
  late_metric_ = &ctx.metrics->Counter("numLateRecordsDropped");
  FLOE_ASSIGN_OR_RAISE(accumulators_, state_->GetValueState("window-accumulators"));
  FLOE_ASSIGN_OR_RAISE(sessions_, state_->GetValueState("window-sessions"));
  FLOE_ASSIGN_OR_RAISE(buffer_, state_->GetValueState("window-buffer"));
  return Status::OK();
}

Status WindowAggregateOperator::ReadState(runtime::StateReader& state,
                                          runtime::Watermark* watermark, int64_t* late) {
  FLOE_ASSIGN_OR_RAISE(uint32_t version, state.GetU32());
  if (version != kStateVersion && version != kFlushedBufferStateVersion &&
      version != kNestedKeyedStateVersion) {
    return Status::Corruption("window aggregate state: unknown format version " +
                              std::to_string(version));
  }
  FLOE_ASSIGN_OR_RAISE(int64_t micros, state.GetI64());
  *watermark = runtime::Watermark(micros);
  FLOE_ASSIGN_OR_RAISE(*late, state.GetI64());
  if (version == kNestedKeyedStateVersion) {
    FLOE_ASSIGN_OR_RAISE(std::string_view keyed, state.GetBytesView());
    runtime::StateReader keyed_reader(keyed);
    FLOE_RETURN_NOT_OK(state_->Restore(keyed_reader));
  } else {
    FLOE_ASSIGN_OR_RAISE(std::string_view shape, state.GetBytesView());
    FLOE_RETURN_NOT_OK(internal::CheckStateShape(task_, shape, shape_));
  }
  return state.ExpectEnd();
}

Status WindowAggregateOperator::Restore(runtime::StateReader& state) {
  if (claims_.scaled_out()) return Status::OK();  // its claims bring the state
  FLOE_RETURN_NOT_OK(ReadState(state, &watermark_, &late_records_dropped_));
  late_reported_ = late_records_dropped_;
  late_metric_->Set(late_records_dropped_);
  FLOE_RETURN_NOT_OK(ReadBuffers());
  ResumeFiring();
  return Status::OK();
}

Status WindowAggregateOperator::RestoreRescaled(const std::vector<std::string>& states) {
  if (claims_.scaled_out()) return Status::OK();  // its claims bring the state
  std::optional<runtime::Watermark> lowest;
  int64_t late_sum = 0;
  for (const std::string& blob : states) {
    if (blob.empty()) continue;
    runtime::StateReader reader(blob);
    runtime::Watermark watermark;
    int64_t late = 0;
    FLOE_RETURN_NOT_OK(ReadState(reader, &watermark, &late));
    if (!lowest || watermark < *lowest) lowest = watermark;
    late_sum += late;
  }
  if (lowest) watermark_ = *lowest;
  late_records_dropped_ = subtask_ == 0 ? late_sum : 0;
  late_reported_ = late_records_dropped_;
  late_metric_->Set(late_records_dropped_);
  FLOE_RETURN_NOT_OK(ReadBuffers());
  ResumeFiring();
  return Status::OK();
}

Status WindowAggregateOperator::OnBarrier(runtime::CheckpointId id, runtime::StateWriter& state,
                                          runtime::Collector& out) {
  (void)out;
  if (late_records_dropped_ > late_reported_) {
    // Never silently: the rows' windows had all fired (Flink's numLateRecordsDropped).
    LogWarn(
        "%s: %lld late row(s) dropped before checkpoint %s (%lld in all): their event time "
        "was behind the watermark and every window they belong to had fired; a larger "
        "WATERMARK delay keeps them",
        task_.c_str(), static_cast<long long>(late_records_dropped_ - late_reported_),
        id.ToString().c_str(), static_cast<long long>(late_records_dropped_));
    late_reported_ = late_records_dropped_;
  }
  state.PutU32(kStateVersion);
  state.PutI64(watermark_.micros);
  state.PutI64(late_records_dropped_);
  state.PutString(shape_);
  return Status::OK();
}

Status WindowAggregateOperator::ProcessBatch(const RecordBatch& batch, int input,
                                             runtime::Collector& out) {
  (void)input, (void)out;
  // The metric follows the checkpointed count however the batch ends.
  struct PublishLate {
    runtime::Metric* metric;
    const int64_t* count;
    ~PublishLate() { metric->Set(*count); }
  } publish{late_metric_, &late_records_dropped_};
  const Column& time = batch.column(spec_.window.time_column);
  const bool session = spec_.window.kind == WindowKind::kSession;
  // With many keys each row waits on a chain of cache misses: the key's slot, its entry, its
  // newest window, that window's accumulators. The keys of the rows ahead are worked out once,
  // and each link prefetched a few rows before the next link reads it.
  const size_t rows = batch.num_rows();
  auto look_ahead = [&](size_t r) {
    Cache::Ahead& a = cache_->ahead[r % kLookAhead];
    a.key_size = CacheKeyText(batch, r, &a.text);
    a.hash = FlatStringMap<CachedKey>::HashOf(a.text);
    a.position = FlatStringMap<CachedKey>::npos;
    cache_->keys.PrefetchSlot(a.hash);
  };
  auto newest_window = [&](size_t r) -> const CachedWindow* {
    const Cache::Ahead& a = cache_->ahead[r % kLookAhead];
    if (a.position == FlatStringMap<CachedKey>::npos) return nullptr;
    const CachedKey& key = cache_->keys.At(a.position);
    return key.windows.empty() ? nullptr : &key.windows.back();
  };
  for (size_t r = 0; r < std::min(rows, kLookAhead); ++r) look_ahead(r);
  for (size_t row = 0; row < rows; ++row) {
    if (row + kLookAhead / 2 < rows) {
      cache_->keys.PrefetchEntry(cache_->ahead[(row + kLookAhead / 2) % kLookAhead].hash);
    }
    if (row + kLookAhead / 4 < rows) {  // its entry is loaded: keep the position, fetch windows
      Cache::Ahead& a = cache_->ahead[(row + kLookAhead / 4) % kLookAhead];
      a.position = cache_->keys.PositionOf(a.text, a.hash);
      if (const CachedWindow* w = newest_window(row + kLookAhead / 4)) __builtin_prefetch(w);
    }
    if (row + kLookAhead / 8 < rows) {
      const CachedWindow* w = newest_window(row + kLookAhead / 8);
      if (w != nullptr && !w->acc.aggs.empty()) __builtin_prefetch(w->acc.aggs.data());
    }
    if (time.IsNull(row)) {
      ++late_records_dropped_;  // no window holds a row without event time
    } else {
      const Cache::Ahead& a = cache_->ahead[row % kLookAhead];
      FLOE_ASSIGN_OR_RAISE(CachedKey * key,
                           CachedKeyOf(batch, row, a.text, a.key_size, a.hash, a.position));
      const int64_t ts = clock_.Local(time.Get<int64_t>(row));
      bool late = false;
      FLOE_RETURN_NOT_OK(session ? AddToSession(*key, ts, batch, row, &late)
                                 : AddToWindows(*key, ts, batch, row, &late));
      if (late) ++late_records_dropped_;
    }
    if (row + kLookAhead < rows) look_ahead(row + kLookAhead);  // into this row's place
  }
  if (cache_->windows > spec_.max_cached_windows) return Flush();
  // TUMBLE, HOP, CUMULATE: keys whose windows all fired stay in the cache until a flush; many of
  // them (a million keys seen once each) make every lookup slower, so they go once they outnumber
  // the windows held. (A SESSION key without sessions still saves reading its empty list.)
  if (!session && cache_->keys.size() > 2 * cache_->windows + 65536) DropKeysWithoutWindows();
  return Status::OK();
}

void WindowAggregateOperator::DropKeysWithoutWindows() {
  cache_->keys.EraseIf([](const auto& entry) { return entry.second.windows.empty(); });
  Renumber();
}

void WindowAggregateOperator::Renumber() {
  size_t position = 0;
  for (auto& [_, key] : cache_->keys) key.position = position++;
  RebuildDue();
}

size_t WindowAggregateOperator::CacheKeyText(const RecordBatch& batch, size_t row,
                                             std::string* out) const {
  internal::KeyOfInto(batch, row, spec_.key_columns, out);
  const size_t key_size = out->size();
  if (claims_.scaled_out()) {  // one key in two partitions stays two (docs: kafka.md)
    out->append(batch.column(static_cast<size_t>(claims_.split_column())).GetBytes(row));
  }
  return key_size;
}

Result<WindowAggregateOperator::CachedKey*> WindowAggregateOperator::CachedKeyOf(
    const RecordBatch& batch, size_t row, std::string_view text, size_t key_size, uint64_t hash,
    size_t position) {
  // Positions stay put within a batch: keys are only added, and go only between batches.
  CachedKey* found = position != FlatStringMap<CachedKey>::npos ? &cache_->keys.At(position)
                                                                : cache_->keys.Find(text, hash);
  if (found == nullptr) {
    FLOE_ASSIGN_OR_RAISE(uint64_t scope, claims_.ScopeOf(batch, row, spec_.key_columns));
    found = &cache_->keys.Insert(text);
    found->key = text.substr(0, key_size);
    found->scope = scope;
    found->position = cache_->keys.size() - 1;
  }
  CachedKey& key = *found;
  if (key.loaded) return &key;
  key.loaded = true;
  if (spec_.window.kind != WindowKind::kSession) return &key;
  // Every session of the key, so the rows to come merge with them in memory.
  FLOE_RETURN_NOT_OK(claims_.SetKeyIn(*state_, key.key, key.scope));
  state_->SetCurrentNamespace("");
  FLOE_ASSIGN_OR_RAISE(bool has_sessions, sessions_.Get(&scratch_));
  if (!has_sessions) return &key;
  FLOE_ASSIGN_OR_RAISE(Sessions sessions, DecodeSessions(scratch_));
  for (const auto& [start, end] : sessions) {
    CachedWindow w{start, end, {}, std::make_pair(start, end)};
    state_->SetCurrentNamespace(WindowNamespace(start, end));
    FLOE_ASSIGN_OR_RAISE(bool exists, accumulators_.Get(&scratch_));
    if (exists) {
      FLOE_ASSIGN_OR_RAISE(w.acc, internal::AggregateState::Decode(scratch_));
    } else {
      w.acc = aggregator_.Create(key.key);
    }
    key.windows.push_back(std::move(w));
    ++cache_->windows;
  }
  return &key;
}

Status WindowAggregateOperator::AddToWindows(CachedKey& key, int64_t ts, const RecordBatch& batch,
                                             size_t row, bool* late) {
  Status status;
  bool placed = false;
  ForEachWindow(spec_.window, ts, [&](int64_t start, int64_t end) {
    if (!status.ok() || clock_.FiresAt(end) <= watermark_.micros) return;  // fired: late for it
    placed = true;
    CachedWindow* w = nullptr;
    for (CachedWindow& held : key.windows) {
      if (held.start == start && held.end == end) w = &held;
    }
    if (w == nullptr) {  // first touched since the flush: read what the state holds
      CachedWindow fresh;
      fresh.start = start;
      fresh.end = end;
      status = claims_.SetKeyIn(*state_, key.key, key.scope);
      if (!status.ok()) return;
      state_->SetCurrentNamespace(WindowNamespace(start, end));
      Result<bool> exists = accumulators_.Get(&scratch_);
      status = exists.status();
      if (!status.ok()) return;
      if (!*exists) {
        fresh.acc = aggregator_.Create(key.key);
        NoteDue(key, clock_.FiresAt(end));
      } else {
        Result<internal::AggregateState> acc = internal::AggregateState::Decode(scratch_);
        status = acc.status();
        if (!status.ok()) return;
        fresh.acc = std::move(*acc);
        fresh.stored = std::make_pair(start, end);
      }
      key.windows.push_back(std::move(fresh));
      ++cache_->windows;
      w = &key.windows.back();
    }
    Fold(batch, row, &w->acc);
    w->dirty = true;
  });
  *late = status.ok() && !placed;
  return status;
}

Status WindowAggregateOperator::AddToSession(CachedKey& key, int64_t ts, const RecordBatch& batch,
                                             size_t row, bool* late) {
  const int64_t gap = spec_.window.size_ms * kOneMilli;
  int64_t start = ts, end = ts + gap;
  std::vector<size_t> merged;  // the sessions it touches, in list order
  for (size_t i = 0; i < key.windows.size(); ++i) {
    const CachedWindow& s = key.windows[i];
    if (s.removed || clock_.FiresAt(s.end) <= watermark_.micros) {
      continue;  // behind the watermark, to fire in a later slice: as if fired
    }
    if (s.start <= end && s.end >= start) {  // overlap or touch: one session
      merged.push_back(i);
      start = std::min(start, s.start);
      end = std::max(end, s.end);
    }
  }
  if (clock_.FiresAt(end) <= watermark_.micros) {
    *late = true;  // the session it would belong to has fired
    return Status::OK();
  }
  if (merged.empty()) {
    CachedWindow fresh;
    fresh.start = start;
    fresh.end = end;
    fresh.acc = aggregator_.Create(key.key);
    key.windows.push_back(std::move(fresh));
    ++cache_->windows;
  } else {
    // The first session it touches takes in the others (in list order) and moves to the end
    // of the list, as a new session would.
    CachedWindow into = std::move(key.windows[merged.front()]);
    for (size_t k = 1; k < merged.size(); ++k) {
      CachedWindow& other = key.windows[merged[k]];
      aggregator_.Merge(other.acc, &into.acc);
      other.acc = {};
      other.removed = true;  // its stored namespace and timer go at the flush
    }
    into.start = start;
    into.end = end;
    key.windows.erase(key.windows.begin() + static_cast<std::ptrdiff_t>(merged.front()));
    key.windows.push_back(std::move(into));
  }
  CachedWindow& session = key.windows.back();
  if (!session.stored) NoteDue(key, clock_.FiresAt(end));
  Fold(batch, row, &session.acc);
  session.dirty = true;
  return Status::OK();
}

Status WindowAggregateOperator::Flush() {
  for (auto& [_, key] : cache_->keys) FLOE_RETURN_NOT_OK(FlushKey(key));
  cache_->Clear();
  return Status::OK();
}

Status WindowAggregateOperator::FlushKey(CachedKey& key) {
  FLOE_RETURN_NOT_OK(claims_.SetKeyIn(*state_, key.key, key.scope));
  bool changed = false;
  for (CachedWindow& w : key.windows) {
    if (w.stored && (w.removed || *w.stored != std::make_pair(w.start, w.end))) {
      state_->SetCurrentNamespace(WindowNamespace(w.stored->first, w.stored->second));
      FLOE_RETURN_NOT_OK(accumulators_.Clear());
      FLOE_RETURN_NOT_OK(
          state_->DeleteTimer(runtime::TimeDomain::kEventTime, clock_.FiresAt(w.stored->second)));
      w.stored.reset();
      changed = true;
    }
    if (w.removed || !w.dirty) continue;
    state_->SetCurrentNamespace(WindowNamespace(w.start, w.end));
    FLOE_RETURN_NOT_OK(accumulators_.Update(w.acc.Encode()));
    if (!w.stored) {
      FLOE_RETURN_NOT_OK(
          state_->RegisterTimer(runtime::TimeDomain::kEventTime, clock_.FiresAt(w.end)));
    }
    changed = true;
  }
  if (spec_.window.kind == WindowKind::kSession && changed) {
    Sessions sessions;
    for (const CachedWindow& w : key.windows) {
      if (!w.removed) sessions.emplace_back(w.start, w.end);
    }
    state_->SetCurrentNamespace("");
    FLOE_RETURN_NOT_OK(sessions.empty() ? sessions_.Clear()
                                        : sessions_.Update(EncodeSessions(sessions)));
  }
  cache_->windows -= key.windows.size();
  key.windows.clear();
  key.loaded = false;
  return Status::OK();
}

void WindowAggregateOperator::NoteDue(const CachedKey& key, int64_t fires_at) {
  cache_->due.Push(fires_at, key.position);
  // Mostly stale entries (a session's every row pushes one): one per window held again.
  if (cache_->due.size() > 2 * cache_->windows + 1024) RebuildDue();
}

void WindowAggregateOperator::RebuildDue() {
  cache_->due.Clear();
  for (const auto& [_, key] : cache_->keys) {
    for (const CachedWindow& w : key.windows) {
      if (!w.stored && !w.removed) cache_->due.Push(clock_.FiresAt(w.end), key.position);
    }
  }
}

Result<bool> WindowAggregateOperator::FireHeld(RecordBatch* out, size_t max_rows) {
  auto& due = cache_->due;
  while (due.AnyDue(watermark_.micros)) {
    if (out->num_rows() >= max_rows) return true;
    const size_t position = due.Pop();
    CachedKey& key = (cache_->keys.begin() + static_cast<std::ptrdiff_t>(position))->second;
    Status status;
    std::erase_if(key.windows, [&](const CachedWindow& w) {
      if (w.stored || w.removed || clock_.FiresAt(w.end) > watermark_.micros) return false;
      if (status.ok()) status = AppendFired(w.acc, w.start, w.end, key.scope, out);
      --cache_->windows;
      return true;
    });
    FLOE_RETURN_NOT_OK(status);
  }
  return false;
}

Status WindowAggregateOperator::PrepareBarrier(runtime::CheckpointId id, runtime::Collector& out) {
  (void)id, (void)out;
  return WriteBuffers();
}

uint32_t WindowAggregateOperator::KeyGroupOf(const CachedKey& key) const {
  if (claims_.scaled_out()) return static_cast<uint32_t>(key.scope);
  return runtime::KeyGroupForHash(key.scope, state_->options().max_parallelism);
}

// A checkpoint of the buffer as it stands, a value per key group: the windows stay in memory,
// and neither go into the keyed state one by one (each with its timer) nor fire from there.
Status WindowAggregateOperator::WriteBuffers() {
  std::map<uint32_t, ByteWriter> groups;
  for (const auto& [_, key] : cache_->keys) {
    if (key.windows.empty()) continue;  // the state holds what the key has
    auto [at, fresh] = groups.try_emplace(KeyGroupOf(key));
    ByteWriter& w = at->second;
    if (fresh) w.PutU32(kBufferLayout);
    w.PutString(key.key);
    w.PutU64(key.scope);
    w.PutBool(key.loaded);
    w.PutU32(static_cast<uint32_t>(key.windows.size()));
    for (const CachedWindow& window : key.windows) {
      w.PutI64(window.start);
      w.PutI64(window.end);
      w.PutU8((window.stored ? kBufferStored : 0) | (window.dirty ? kBufferDirty : 0) |
              (window.removed ? kBufferRemoved : 0));
      if (window.stored) {
        w.PutI64(window.stored->first);
        w.PutI64(window.stored->second);
      }
      w.PutVarBytes(window.acc.Encode());
    }
  }
  auto set_group = [&](uint32_t group) {
    state_->SetCurrentNamespace("");
    return state_->SetCurrentKeyInGroup("", group);
  };
  for (uint32_t group : cache_->buffered_groups) {
    if (groups.contains(group)) continue;
    FLOE_RETURN_NOT_OK(set_group(group));
    FLOE_RETURN_NOT_OK(buffer_.Clear());
  }
  cache_->buffered_groups.clear();
  for (auto& [group, w] : groups) {
    FLOE_RETURN_NOT_OK(set_group(group));
    FLOE_RETURN_NOT_OK(buffer_.Update(w.Finish()));
    cache_->buffered_groups.insert(group);
  }
  return Status::OK();
}

Status WindowAggregateOperator::ReadBuffers() {
  const runtime::KeyGroupRange range = state_->options().key_groups;
  for (uint32_t group = range.start; group < range.end; ++group) {
    FLOE_RETURN_NOT_OK(ReadBuffer(group));
  }
  Renumber();
  return Status::OK();
}

Status WindowAggregateOperator::ReadBuffer(uint32_t group) {
  state_->SetCurrentNamespace("");
  FLOE_RETURN_NOT_OK(state_->SetCurrentKeyInGroup("", group));
  std::string value;
  FLOE_ASSIGN_OR_RAISE(bool held, buffer_.Get(&value));
  if (!held) return Status::OK();
  cache_->buffered_groups.insert(group);
  ByteReader r(value);
  auto read = [&]() -> Status {
    FLOE_ASSIGN_OR_RAISE(uint32_t layout, r.GetU32());
    if (layout != kBufferLayout) {
      return Status::Corruption("unknown layout " + std::to_string(layout));
    }
    std::string split;
    if (claims_.scaled_out()) {
      FLOE_ASSIGN_OR_RAISE(std::string_view s, claims_.SplitOf(group));
      split = s;
    }
    while (!r.AtEnd()) {
      FLOE_ASSIGN_OR_RAISE(std::string name, r.GetString());
      const std::string text = name + split;  // CacheKeyText
      if (cache_->keys.Find(text) != nullptr) return Status::Corruption("a key twice");
      CachedKey& key = cache_->keys.Insert(text);
      key.key = std::move(name);
      key.position = cache_->keys.size() - 1;
      FLOE_ASSIGN_OR_RAISE(key.scope, r.GetU64());
      FLOE_ASSIGN_OR_RAISE(key.loaded, r.GetBool());
      FLOE_ASSIGN_OR_RAISE(uint32_t windows, r.GetU32());
      for (uint32_t i = 0; i < windows; ++i) {
        CachedWindow w;
        FLOE_ASSIGN_OR_RAISE(w.start, r.GetI64());
        FLOE_ASSIGN_OR_RAISE(w.end, r.GetI64());
        FLOE_ASSIGN_OR_RAISE(uint8_t flags, r.GetU8());
        w.dirty = (flags & kBufferDirty) != 0;
        w.removed = (flags & kBufferRemoved) != 0;
        if (flags & kBufferStored) {
          FLOE_ASSIGN_OR_RAISE(int64_t start, r.GetI64());
          FLOE_ASSIGN_OR_RAISE(int64_t end, r.GetI64());
          w.stored = std::make_pair(start, end);
        }
        FLOE_ASSIGN_OR_RAISE(std::string_view acc, r.GetVarBytesView());
        FLOE_ASSIGN_OR_RAISE(w.acc, internal::AggregateState::Decode(acc));
        key.windows.push_back(std::move(w));
        ++cache_->windows;
      }
    }
    return Status::OK();
  };
  return read().WithContext("window aggregate '" + task_ + "': the window buffer of key group " +
                            std::to_string(group));
}

void WindowAggregateOperator::Fold(const RecordBatch& batch, size_t row,
                                   internal::AggregateState* acc) const {
  if (kind_column_ >= 0 && runtime::IsRetraction(batch.column(kind_column_).GetBytes(row))) {
    aggregator_.Retract(batch, row, acc);
  } else {
    aggregator_.Add(batch, row, acc);
  }
}

Status WindowAggregateOperator::Fire(const runtime::Timer& timer, RecordBatch* out) {
  // The timer's key held in memory goes to the state first: rows may have reached its window
  // since, or grown its session past this timer.
  scratch_.assign(timer.key);
  if (claims_.scaled_out()) {
    FLOE_ASSIGN_OR_RAISE(std::string_view split, claims_.SplitOf(timer.key_group));
    scratch_.append(split);
  }
  if (CachedKey* held = cache_->keys.Find(scratch_); held != nullptr && held->loaded) {
    FLOE_RETURN_NOT_OK(FlushKey(*held));
    FLOE_RETURN_NOT_OK(state_->SetCurrentKeyInGroup(timer.key, timer.key_group));
    state_->SetCurrentNamespace(timer.ns);
  }
  std::string value;
  FLOE_ASSIGN_OR_RAISE(bool exists, accumulators_.Get(&value));
  if (!exists) return Status::OK();
  FLOE_ASSIGN_OR_RAISE(internal::AggregateState acc, internal::AggregateState::Decode(value));
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
  return AppendFired(acc, start, end, timer.key_group, out);
}

Status WindowAggregateOperator::AppendFired(const internal::AggregateState& acc, int64_t start,
                                            int64_t end, uint64_t scope, RecordBatch* out) const {
  if (spec_.changelog && acc.rows == 0) return Status::OK();  // every row retracted
  const size_t keys = spec_.key_columns.size();
  FLOE_RETURN_NOT_OK(internal::AppendKey(acc.key, keys, out, 0));
  size_t col = keys;
  out->mutable_column(col++).Append<int64_t>(start);
  out->mutable_column(col++).Append<int64_t>(end);
  out->mutable_column(col++).Append<int64_t>(clock_.WindowTime(end));
  aggregator_.AppendResults(acc, out, col);
  if (claims_.scaled_out()) {  // the scope is the claim's key group
    FLOE_ASSIGN_OR_RAISE(std::string_view split, claims_.SplitOf(static_cast<uint32_t>(scope)));
    out->mutable_column(out->num_columns() - 1).AppendBytes(split);
  }
  return Status::OK();
}

Status WindowAggregateOperator::OnClaimChange(const runtime::ClaimChange& change,
                                              runtime::Collector& out) {
  if (claims_.scaled_out()) {
    // The runtime replaced or dropped the group's state: what the cache read from it is gone
    // too, and rows held for it since the last checkpoint are replayed by the claim's holder.
    cache_->keys.EraseIf([&](const auto& entry) {
      if (static_cast<uint32_t>(entry.second.scope) != change.key_group) return false;
      cache_->windows -= entry.second.windows.size();
      return true;
    });
    cache_->buffered_groups.erase(change.key_group);
  }
  claims_.Apply(change);
  if (claims_.scaled_out()) {
    // A group taken over brings the buffer its last holder checkpointed (its split is known now).
    if (change.begins) FLOE_RETURN_NOT_OK(ReadBuffer(change.key_group));
    Renumber();
  }
  if (change.begins) ResumeFiring();
  return runtime::Operator::OnClaimChange(change, out);
}

Status WindowAggregateOperator::OnWatermark(runtime::Watermark watermark, runtime::Collector& out) {
  if (watermark <= watermark_) return Status::OK();  // watermarks only move forward
  watermark_ = watermark;
  firing_ = true;
  return ContinueWork(out).status();
}

// One slice: up to kFiredBatchRows due timers, sent on as one batch, so a step of the watermark
// over millions of open windows (the end of a bounded input) neither holds all their rows at once
// nor keeps barriers waiting. Rows that arrive between slices cannot change what fires: every
// window still to fire is already behind watermark_, so they are late for it (AddToSession skips
// such sessions).
Result<bool> WindowAggregateOperator::ContinueWork(runtime::Collector& out) {
  if (!firing_) return false;
  RecordBatch fired(output_);
  FLOE_ASSIGN_OR_RAISE(bool more, FireHeld(&fired, kFiredBatchRows));
  if (!more) {
    FLOE_ASSIGN_OR_RAISE(
        more, state_->FireEventTimers(
                  watermark_, [&](const runtime::Timer& timer) { return Fire(timer, &fired); },
                  kFiredBatchRows - fired.num_rows()));
  }
  if (fired.num_rows() > 0) {
    FLOE_RETURN_NOT_OK(out.Emit(std::move(fired)));
    // Fired and sent on, not yet in any checkpoint: a restore must fire these windows again,
    // and the sink must not have committed them.
    CrashPoint("window-after-fire");
  }
  if (more) return true;
  firing_ = false;
  FLOE_RETURN_NOT_OK(out.EmitWatermark(watermark_));
  return false;
}

void WindowAggregateOperator::ResumeFiring() {
  std::optional<int64_t> next = state_->NextTimer(runtime::TimeDomain::kEventTime);
  firing_ = (next && *next <= watermark_.micros) || cache_->due.AnyDue(watermark_.micros);
}

}  // namespace floe::sql

#include "floe/runtime/keyed_state.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <unordered_map>

#include "floe/common/flat_string_map.h"
#include "floe/runtime/checkpoint_config.h"
#include "floe/runtime/copy_on_write.h"
#include "floe/runtime/keyed_state_checks.h"
#include "floe/runtime/partitioner.h"
#include "floe/runtime/rocksdb_keyed_state.h"

// Snapshot layout (keyed state section, format version 1). The operator places it anywhere in
// its own blob; every integer little-endian, `bytes` = u32 length + bytes (common/byte_codec.h):
//
//   u32    format_version        1
//   string backend               "hashmap" (informational: the layout is backend-neutral, so a
//                                rocksdb full snapshot / savepoint can use the same one)
//   u32    max_parallelism
//   u32    key_group_start, key_group_end     the range [start, end) this snapshot covers
//   u32    state_count
//   state_count x { string name, u8 kind, u8 stamped }   stamped: entries carry write times
//   u32    group_count           non-empty key groups, ascending
//   group_count x { u32 key_group, bytes section }
//
//   section = state_count x { u32 entry_count, entry_count x entry }   in the order above
//             + timers: 2 x { u32 n, n x { i64 timestamp, bytes key, bytes ns } }
//                       (event time, then processing time)
//   entry   = bytes key, bytes ns, payload
//   payload = value / reducing / aggregating:  [i64 written_ms] bytes value
//             list:  u32 n, n x { [i64 written_ms] bytes element }
//             map:   u32 n, n x { bytes user_key, [i64 written_ms] bytes value }
//             ([i64 written_ms] only when stamped)
//
// Why sections per key group, each length-prefixed: a key group is the unit a rescale moves.
// A subtask restoring a range [a, b) out of several old snapshots reads each header, then takes
// the sections of the groups it owns and skips the rest by their length, without decoding them.

namespace floe::runtime {

std::string_view StateKindName(StateKind kind) {
  switch (kind) {
    case StateKind::kValue:
      return "value";
    case StateKind::kList:
      return "list";
    case StateKind::kMap:
      return "map";
    case StateKind::kReducing:
      return "reducing";
    case StateKind::kAggregating:
      return "aggregating";
  }
  return "unknown";
}

// The backends floe has; the planner refuses the others through FromOptions before a worker
// starts, and Make checks again for callers that build options by hand. `key` is the option
// the value came from.
Status CheckStateBackend(const std::string& backend,
                         const std::string& key = "state.backend.type") {
  if (backend != "hashmap" && backend != "rocksdb") {
    return Status::InvalidArgument("'" + key + "' = '" + backend +
                                   "': expected 'hashmap' or 'rocksdb'");
  }
  return Status::OK();
}

Result<KeyedStateOptions> KeyedStateOptions::FromOptions(
    const std::map<std::string, std::string>& options, const TaskInfo& task) {
  KeyedStateOptions out;
  out.key_groups = task.key_groups;
  out.max_parallelism = task.max_parallelism;
  out.task_name = task.name();
  FLOE_RETURN_NOT_OK(ReadRocksDbOptions(options, &out));
  // Flink still reads its deprecated key 'state.backend' when 'state.backend.type' is unset.
  for (const char* key : {"state.backend.type", "state.backend"}) {
    auto it = options.find(key);
    if (it == options.end()) continue;
    FLOE_RETURN_NOT_OK(CheckStateBackend(it->second, key));
    out.backend = it->second;
    break;
  }
  if (auto it = options.find("table.exec.state.ttl"); it != options.end()) {
    Result<std::chrono::milliseconds> ttl = ParseDuration(it->second);
    if (!ttl.ok()) {
      return Status::InvalidArgument("'table.exec.state.ttl' = '" + it->second +
                                     "': " + ttl.status().message());
    }
    if (ttl->count() < 0) {
      return Status::InvalidArgument("'table.exec.state.ttl' = '" + it->second +
                                     "' is negative (0 disables state expiry)");
    }
    out.ttl = *ttl;
  }
  return out;
}

namespace {

constexpr uint32_t kFormatVersion = 1;

// A stored value and the wall-clock millisecond it was last written (for TTL).
struct Stamped {
  std::string bytes;
  int64_t written_ms = 0;
};
using MapSlot = std::map<std::string, Stamped, std::less<>>;

// The in-memory key of a (key, namespace) scope: u32 key length + key + namespace.
void BuildScopeKey(std::string_view key, std::string_view ns, std::string* scope) {
  std::string& out = *scope;
  out.resize(4 + key.size() + ns.size());
  uint32_t n = static_cast<uint32_t>(key.size());
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  std::memcpy(out.data() + 4, key.data(), key.size());
  std::memcpy(out.data() + 4 + key.size(), ns.data(), ns.size());
}

std::string ScopeKey(std::string_view key, std::string_view ns) {
  std::string out;
  BuildScopeKey(key, ns, &out);
  return out;
}

void SplitScopeKey(const std::string& scope, std::string_view* key, std::string_view* ns) {
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= static_cast<uint32_t>(static_cast<uint8_t>(scope[i])) << (8 * i);
  *key = std::string_view(scope).substr(4, n);
  *ns = std::string_view(scope).substr(4 + n);
}

// Value, reducing and aggregating state: the one kind a row reads and writes per record.
using ValueGroup = FlatStringMap<Stamped>;
using ListGroup = std::unordered_map<std::string, std::vector<Stamped>>;
using MapGroup = std::unordered_map<std::string, MapSlot>;

Stamped& Upsert(ValueGroup& group, std::string_view scope) {
  Stamped* found = group.Find(scope);
  return found != nullptr ? *found : group.Insert(scope);
}

// One registered (or restored, not yet registered) state: one hash table per key group, of the
// container its kind needs, each shared copy-on-write with the snapshots taken since it was
// last written.
struct Table {
  StateDescriptor desc;
  bool registered = false;
  std::vector<CopyOnWrite<ValueGroup>> values;
  std::vector<CopyOnWrite<ListGroup>> lists;
  std::vector<CopyOnWrite<MapGroup>> maps;

  size_t EntriesIn(size_t g) const {
    switch (desc.kind) {
      case StateKind::kList:
        return lists[g].get().size();
      case StateKind::kMap:
        return maps[g].get().size();
      default:
        return values[g].get().size();
    }
  }
};

// HashMapKeyedStateBackend: `state.backend.type: hashmap`. Everything on the heap, full
// snapshots. Expired TTL entries are removed when read and at snapshot.
class HashMapKeyedStateBackend final : public internal::ScopedKeyedStateBackend {
 public:
  explicit HashMapKeyedStateBackend(KeyedStateOptions options)
      : ScopedKeyedStateBackend(options.key_groups, options.max_parallelism),
        options_(std::move(options)),
        clock_(options_.clock != nullptr ? options_.clock : SystemClock::Get()),
        groups_(options_.key_groups.end - options_.key_groups.start),
        timers_(options_.key_groups) {}

  Result<StateId> Register(StateDescriptor desc) override {
    FLOE_RETURN_NOT_OK(internal::CheckDescriptor(desc));
    for (size_t i = 0; i < tables_.size(); ++i) {
      Table& t = tables_[i];
      if (t.desc.name != desc.name) continue;
      if (t.desc.kind != desc.kind) {
        return internal::KindMismatch(desc.name, t.desc.kind, t.registered, desc.kind);
      }
      t.desc = std::move(desc);
      t.registered = true;
      return StateId{static_cast<uint32_t>(i)};
    }
    Table t;
    t.desc = std::move(desc);
    t.registered = true;
    Size(t);
    tables_.push_back(std::move(t));
    return StateId{static_cast<uint32_t>(tables_.size() - 1)};
  }

  Result<bool> Get(StateId id, std::string* out) override {
    FLOE_ASSIGN_OR_RAISE(
        Table * t,
        Access(id, "get", {StateKind::kValue, StateKind::kReducing, StateKind::kAggregating}));
    const Stamped* s = FindValue(*t);
    if (s == nullptr) return false;
    if (t->desc.kind == StateKind::kAggregating && t->desc.aggregate.result) {
      FLOE_RETURN_NOT_OK(t->desc.aggregate.result(s->bytes, out));
    } else {
      out->assign(s->bytes);
    }
    return true;
  }

  Status Put(StateId id, std::string_view value) override {
    FLOE_ASSIGN_OR_RAISE(Table * t, Access(id, "update", {StateKind::kValue}));
    Upsert(t->values[Group()].mut(), scope_) = Stamped{std::string(value), clock_->NowMillis()};
    return Status::OK();
  }

  Status Add(StateId id, std::string_view value) override {
    FLOE_ASSIGN_OR_RAISE(
        Table * t,
        Access(id, "add", {StateKind::kList, StateKind::kReducing, StateKind::kAggregating}));
    int64_t now = clock_->NowMillis();
    if (t->desc.kind == StateKind::kList) {
      t->lists[Group()].mut()[scope_].push_back(Stamped{std::string(value), now});
      return Status::OK();
    }
    // One lookup per record, folding in place (the group is copied at most once per checkpoint).
    ValueGroup& group = t->values[Group()].mut();
    Stamped* found = group.Find(scope_);
    bool fresh = found == nullptr;
    Stamped& s = fresh ? group.Insert(scope_) : *found;
    fresh = fresh || Expired(*t, s, now);
    std::string next;
    Status st;
    if (t->desc.kind == StateKind::kReducing) {
      if (fresh) {
        next.assign(value);
      } else {
        st = t->desc.reduce(s.bytes, value, &next);
      }
    } else {
      st = fresh ? t->desc.aggregate.create(&next) : Status::OK();
      if (!fresh) next = std::move(s.bytes);
      if (st.ok()) st = t->desc.aggregate.add(value, &next);
    }
    if (!st.ok()) {
      group.Erase(scope_);  // a failing user function fails the job; leave no half-built value
      return st;
    }
    s = Stamped{std::move(next), now};
    return Status::OK();
  }

  Status GetList(StateId id, std::vector<std::string>* out) override {
    FLOE_ASSIGN_OR_RAISE(Table * t, Access(id, "get", {StateKind::kList}));
    out->clear();
    const ListGroup& group = t->lists[Group()].get();
    auto it = group.find(scope_);
    if (it == group.end()) return Status::OK();
    if (TtlOn(*t)) {  // expired elements go first
      ListGroup& live = t->lists[Group()].mut();
      auto list = live.find(scope_);
      if (PruneList(*t, list->second, clock_->NowMillis())) {
        live.erase(list);
        return Status::OK();
      }
      it = list;
    }
    out->reserve(it->second.size());
    for (const Stamped& s : it->second) out->push_back(s.bytes);
    return Status::OK();
  }

  Status UpdateList(StateId id, std::vector<std::string> values) override {
    FLOE_ASSIGN_OR_RAISE(Table * t, Access(id, "update", {StateKind::kList}));
    ListGroup& group = t->lists[Group()].mut();
    if (values.empty()) {
      group.erase(scope_);
      return Status::OK();
    }
    int64_t now = clock_->NowMillis();
    std::vector<Stamped> list;
    list.reserve(values.size());
    for (std::string& v : values) list.push_back(Stamped{std::move(v), now});
    group[scope_] = std::move(list);
    return Status::OK();
  }

  Result<bool> MapGet(StateId id, std::string_view user_key, std::string* out) override {
    FLOE_ASSIGN_OR_RAISE(Table * t, Access(id, "get", {StateKind::kMap}));
    const MapGroup& group = t->maps[Group()].get();
    auto it = group.find(scope_);
    if (it == group.end()) return false;
    auto entry = it->second.find(user_key);
    if (entry == it->second.end()) return false;
    if (Expired(*t, entry->second, clock_->NowMillis())) {
      MapGroup& live = t->maps[Group()].mut();
      auto slot = live.find(scope_);
      slot->second.erase(slot->second.find(user_key));
      if (slot->second.empty()) live.erase(slot);
      return false;
    }
    out->assign(entry->second.bytes);
    return true;
  }

  Status MapPut(StateId id, std::string_view user_key, std::string_view value) override {
    FLOE_ASSIGN_OR_RAISE(Table * t, Access(id, "put", {StateKind::kMap}));
    MapSlot& slot = t->maps[Group()].mut()[scope_];
    Stamped s{std::string(value), clock_->NowMillis()};
    auto it = slot.find(user_key);
    if (it != slot.end()) {
      it->second = std::move(s);
    } else {
      slot.emplace(std::string(user_key), std::move(s));
    }
    return Status::OK();
  }

  Status MapRemove(StateId id, std::string_view user_key) override {
    FLOE_ASSIGN_OR_RAISE(Table * t, Access(id, "remove", {StateKind::kMap}));
    if (t->maps[Group()].get().count(scope_) == 0) return Status::OK();
    MapGroup& group = t->maps[Group()].mut();
    auto it = group.find(scope_);
    auto entry = it->second.find(user_key);
    if (entry != it->second.end()) it->second.erase(entry);
    if (it->second.empty()) group.erase(it);
    return Status::OK();
  }

  Status MapEntries(StateId id, std::vector<std::pair<std::string, std::string>>* out) override {
    FLOE_ASSIGN_OR_RAISE(Table * t, Access(id, "iterate", {StateKind::kMap}));
    out->clear();
    const MapGroup& group = t->maps[Group()].get();
    auto it = group.find(scope_);
    if (it == group.end()) return Status::OK();
    if (TtlOn(*t)) {  // expired entries go first
      MapGroup& live = t->maps[Group()].mut();
      if (PruneMap(*t, live.find(scope_)->second, clock_->NowMillis())) {
        live.erase(scope_);
        return Status::OK();
      }
      it = live.find(scope_);
    }
    out->reserve(it->second.size());
    for (const auto& [k, v] : it->second) out->emplace_back(k, v.bytes);
    return Status::OK();
  }

  Status Clear(StateId id) override {
    FLOE_ASSIGN_OR_RAISE(Table * t, Access(id, "clear", {}));
    size_t g = Group();
    auto erase = [this](auto& cow) {
      if (cow.get().count(scope_) > 0) cow.mut().erase(scope_);
    };
    switch (t->desc.kind) {
      case StateKind::kList:
        erase(t->lists[g]);
        break;
      case StateKind::kMap:
        erase(t->maps[g]);
        break;
      default:
        if (t->values[g].get().Find(scope_) != nullptr) t->values[g].mut().Erase(scope_);
    }
    return Status::OK();
  }

  Status MergeNamespaces(StateId id, std::string_view target,
                         const std::vector<std::string>& sources) override {
    FLOE_ASSIGN_OR_RAISE(Table * t,
                         Access(id, "merge namespaces of",
                                {StateKind::kList, StateKind::kReducing, StateKind::kAggregating}));
    if (t->desc.kind == StateKind::kAggregating && !t->desc.aggregate.merge) {
      return Status::InvalidArgument("keyed state '" + t->desc.name +
                                     "': merging namespaces needs the aggregate's merge function");
    }
    size_t g = Group();
    int64_t now = clock_->NowMillis();
    std::string target_scope = ScopeKey(current_key_, target);
    if (t->desc.kind == StateKind::kList) {
      ListGroup& group = t->lists[g].mut();
      std::vector<Stamped> merged;
      for (const std::string& ns : sources) {
        if (ns == target) continue;
        auto it = group.find(ScopeKey(current_key_, ns));
        if (it == group.end()) continue;
        for (Stamped& s : it->second) {
          if (!Expired(*t, s, now)) merged.push_back(std::move(s));
        }
        group.erase(it);
      }
      if (!merged.empty()) {
        std::vector<Stamped>& into = group[target_scope];
        for (Stamped& s : merged) into.push_back(std::move(s));
      }
      return Status::OK();
    }
    ValueGroup& group = t->values[g].mut();
    std::optional<std::string> acc;
    if (Stamped* s = group.Find(target_scope); s != nullptr && !Expired(*t, *s, now)) {
      acc = std::move(s->bytes);
    }
    for (const std::string& ns : sources) {
      if (ns == target) continue;
      const std::string source_scope = ScopeKey(current_key_, ns);
      Stamped* s = group.Find(source_scope);
      if (s == nullptr) continue;
      if (!Expired(*t, *s, now)) {
        if (!acc) {
          acc = std::move(s->bytes);
        } else if (t->desc.kind == StateKind::kReducing) {
          std::string next;
          FLOE_RETURN_NOT_OK(t->desc.reduce(*acc, s->bytes, &next));
          acc = std::move(next);
        } else {
          FLOE_RETURN_NOT_OK(t->desc.aggregate.merge(s->bytes, &*acc));
        }
      }
      group.Erase(source_scope);
    }
    if (acc) {
      Upsert(group, target_scope) = Stamped{std::move(*acc), now};
    } else {
      group.Erase(target_scope);
    }
    return Status::OK();
  }

  Status RegisterTimer(TimeDomain domain, int64_t timestamp) override {
    FLOE_RETURN_NOT_OK(RequireKey("register a timer"));
    timers_.Register(domain, timestamp, current_group_, current_key_, current_ns_);
    return Status::OK();
  }

  Status DeleteTimer(TimeDomain domain, int64_t timestamp) override {
    FLOE_RETURN_NOT_OK(RequireKey("delete a timer"));
    timers_.Delete(domain, timestamp, current_group_, current_key_, current_ns_);
    return Status::OK();
  }

  Result<bool> FireEventTimers(Watermark watermark, const TimerHandler& handler,
                               size_t max_timers) override {
    if (watermark > watermark_) watermark_ = watermark;
    return Fire(TimeDomain::kEventTime, watermark_.micros, handler, max_timers);
  }

  Status AdvanceProcessingTime(const TimerHandler& handler) override {
    return Fire(TimeDomain::kProcessingTime, CurrentProcessingTime(), handler, SIZE_MAX).status();
  }

  std::optional<int64_t> NextTimer(TimeDomain domain) const override {
    return timers_.NextTimestamp(domain);
  }
  int64_t CurrentProcessingTime() const override { return clock_->NowMillis() * 1000; }
  Watermark current_watermark() const override { return watermark_; }

  Result<std::unique_ptr<KeyedStateSnapshot>> TakeSnapshot() override;
  Status Restore(StateReader& in) override {
    return RestoreGroups(in, options_.key_groups, /*once=*/true);
  }
  Status DropKeyGroup(uint32_t key_group) override {
    FLOE_RETURN_NOT_OK(CheckOwnGroup(key_group));
    const size_t g = key_group - options_.key_groups.start;
    for (Table& t : tables_) {  // fresh containers: a snapshot view keeps the old ones
      if (!t.values.empty()) t.values[g] = {};
      if (!t.lists.empty()) t.lists[g] = {};
      if (!t.maps.empty()) t.maps[g] = {};
    }
    timers_.DropKeyGroup(key_group);
    if (!restored_groups_.empty()) restored_groups_[g] = false;
    return Status::OK();
  }
  Status RestoreKeyGroup(StateReader& in, uint32_t key_group) override {
    FLOE_RETURN_NOT_OK(DropKeyGroup(key_group));
    return RestoreGroups(in, KeyGroupRange{key_group, key_group + 1}, /*once=*/false);
  }

  size_t num_entries() const override {
    size_t n = 0;
    for (const Table& t : tables_) {
      for (size_t g = 0; g < groups_; ++g) n += t.EntriesIn(g);
    }
    return n;
  }
  const KeyedStateOptions& options() const override { return options_; }

 private:
  size_t Group() const { return current_group_ - options_.key_groups.start; }

  // The table behind `id` if it may do `what` (kinds empty: any kind) under a current key.
  Result<Table*> Access(StateId id, std::string_view what, std::initializer_list<StateKind> kinds) {
    if (id.value >= tables_.size() || !tables_[id.value].registered) {
      return Status::InvalidArgument("keyed state: unknown state id " + std::to_string(id.value));
    }
    Table& t = tables_[id.value];
    if (kinds.size() > 0 && std::find(kinds.begin(), kinds.end(), t.desc.kind) == kinds.end()) {
      return Status::InvalidArgument("keyed state '" + t.desc.name + "': cannot " +
                                     std::string(what) + " " +
                                     std::string(StateKindName(t.desc.kind)) + " state this way");
    }
    if (!has_key_) {
      return RequireKey(std::string(what) + " state '" + t.desc.name + "'");
    }
    if (scope_dirty_) {
      BuildScopeKey(current_key_, current_ns_, &scope_);
      scope_dirty_ = false;
    }
    return &t;
  }

  void Size(Table& t) const {
    switch (t.desc.kind) {
      case StateKind::kList:
        t.lists.resize(groups_);
        break;
      case StateKind::kMap:
        t.maps.resize(groups_);
        break;
      default:
        t.values.resize(groups_);
    }
  }

  bool TtlOn(const Table& t) const { return t.desc.ttl && options_.ttl.count() > 0; }
  bool Expired(const Table& t, const Stamped& s, int64_t now_ms) const {
    return TtlOn(t) && s.written_ms + options_.ttl.count() <= now_ms;
  }

  // The live value of the current scope, erasing it when expired.
  const Stamped* FindValue(Table& t) {
    const Stamped* s = t.values[Group()].get().Find(scope_);
    if (s == nullptr) return nullptr;
    if (Expired(t, *s, clock_->NowMillis())) {
      t.values[Group()].mut().Erase(scope_);
      return nullptr;
    }
    return s;
  }

  // Drop expired elements; true when nothing is left.
  bool PruneList(const Table& t, std::vector<Stamped>& list, int64_t now) const {
    if (t.desc.ttl && options_.ttl.count() > 0) {
      std::erase_if(list, [&](const Stamped& s) { return Expired(t, s, now); });
    }
    return list.empty();
  }
  bool PruneMap(const Table& t, MapSlot& map, int64_t now) const {
    if (t.desc.ttl && options_.ttl.count() > 0) {
      std::erase_if(map, [&](const auto& kv) { return Expired(t, kv.second, now); });
    }
    return map.empty();
  }

  // Fires up to `max_timers` due timers; true when due ones remain.
  Result<bool> Fire(TimeDomain domain, int64_t upto, const TimerHandler& handler,
                    size_t max_timers) {
    for (size_t fired = 0; fired < max_timers; ++fired) {
      std::optional<Timer> timer = timers_.PopDue(domain, upto);
      if (!timer) return false;
      SetScope(timer->key, timer->ns, timer->key_group);
      FLOE_RETURN_NOT_OK(handler(*timer));
    }
    std::optional<int64_t> next = timers_.NextTimestamp(domain);
    return next && *next <= upto;
  }

  std::vector<bool> restored_groups_;  // by key group - start, once Restore ran
  // Restores the groups of `in` within `only` (a subrange of this subtask's); `once`: a group
  // restored before is Corruption (Restore's rule for the snapshots of a rescale).
  Status RestoreGroups(StateReader& in, KeyGroupRange only, bool once);
  // order[i]: the table of the snapshot's i-th state; stamped[i]: its entries carry write times.
  Status RestoreGroup(size_t g, const std::vector<uint32_t>& order,
                      const std::vector<bool>& stamped, StateReader& in);

  KeyedStateOptions options_;
  const Clock* clock_;
  size_t groups_;  // key groups in the range
  std::vector<Table> tables_;
  TimerService timers_;
  Watermark watermark_;
  // scope_ (the base's) is ScopeKey(current_key_, current_ns_), rebuilt on the first access
  // after the scope changed (a window operator sets key and namespace back to back).
};

void PutStamped(const Stamped& s, bool stamped, StateWriter& out) {
  if (stamped) out.PutI64(s.written_ms);
  out.PutBytes(s.bytes);
}

Result<Stamped> GetStamped(bool stamped, StateReader& in) {
  Stamped s;
  if (stamped) {
    FLOE_ASSIGN_OR_RAISE(s.written_ms, in.GetI64());
  }
  FLOE_ASSIGN_OR_RAISE(s.bytes, in.GetBytes());
  return s;
}

// Writes key and namespace of a scope key.
void PutScope(const std::string& scope, StateWriter& out) {
  std::string_view key, ns;
  SplitScopeKey(scope, &key, &ns);
  out.PutBytes(key);
  out.PutBytes(ns);
}

// A heap backend's state as of its TakeSnapshot: every table's key-group containers and the
// timers, shared copy-on-write, so taking it copies pointers only and the backend's later
// writes copy the one group they touch. WriteTo serializes it on the state-writer thread,
// leaving out what had expired at the barrier (Flink's cleanupFullSnapshot: memory is cleaned
// when read, not here).
class HeapSnapshot final : public KeyedStateSnapshot {
 public:
  struct TableView {
    std::string name;
    StateKind kind = StateKind::kValue;
    bool stamped = false;  // entries carry write times (StateDescriptor::ttl)
    bool expires = false;  // ... and a TTL applies
    std::vector<std::shared_ptr<const ValueGroup>> values;
    std::vector<std::shared_ptr<const ListGroup>> lists;
    std::vector<std::shared_ptr<const MapGroup>> maps;
  };

  HeapSnapshot(const KeyedStateOptions& options, int64_t now_ms, std::vector<TableView> tables,
               TimerService::View timers)
      : max_parallelism_(options.max_parallelism),
        range_(options.key_groups),
        ttl_ms_(options.ttl.count()),
        now_ms_(now_ms),
        tables_(std::move(tables)),
        timers_(std::move(timers)) {}

  KeyGroupRange key_groups() const override { return range_; }

  Status WriteTo(StateWriter& out, std::vector<SharedStateFile>* shared) override {
    (void)shared;  // the heap backend always writes the canonical layout
    out.PutU32(kFormatVersion);
    out.PutString("hashmap");
    out.PutU32(max_parallelism_);
    out.PutU32(range_.start);
    out.PutU32(range_.end);
    out.PutU32(static_cast<uint32_t>(tables_.size()));
    for (const TableView& t : tables_) {
      out.PutString(t.name);
      out.PutU8(static_cast<uint8_t>(t.kind));
      out.PutBool(t.stamped);
    }
    std::vector<uint32_t> groups;  // the non-empty ones
    for (uint32_t g = 0; g < range_.end - range_.start; ++g) {
      if (!Empty(g)) groups.push_back(g);
    }
    out.PutU32(static_cast<uint32_t>(groups.size()));
    StateWriter section;
    for (uint32_t g : groups) {
      WriteGroup(g, section);
      out.PutU32(range_.start + g);
      out.PutBytes(section.Finish());
    }
    return Status::OK();
  }

 private:
  bool Expired(const TableView& t, const Stamped& s) const {
    return t.expires && s.written_ms + ttl_ms_ <= now_ms_;
  }

  bool Empty(uint32_t g) const {
    if (!timers_.KeyGroupEmpty(range_.start + g)) return false;
    for (const TableView& t : tables_) {
      switch (t.kind) {
        case StateKind::kList:
          if (!t.lists[g]->empty()) return false;
          break;
        case StateKind::kMap:
          if (!t.maps[g]->empty()) return false;
          break;
        default:
          if (!t.values[g]->empty()) return false;
      }
    }
    return true;
  }

  // One table's live entries of group g: u32 count, then the entries.
  void WriteEntries(const TableView& t, uint32_t g, StateWriter& out) const {
    StateWriter entries;
    uint32_t n = 0;
    std::vector<const Stamped*> live;
    std::vector<std::pair<const std::string*, const Stamped*>> live_map;
    switch (t.kind) {
      case StateKind::kList:
        for (const auto& [scope, list] : *t.lists[g]) {
          live.clear();
          for (const Stamped& s : list) {
            if (!Expired(t, s)) live.push_back(&s);
          }
          if (live.empty()) continue;
          ++n;
          PutScope(scope, entries);
          entries.PutU32(static_cast<uint32_t>(live.size()));
          for (const Stamped* s : live) PutStamped(*s, t.stamped, entries);
        }
        break;
      case StateKind::kMap:
        for (const auto& [scope, map] : *t.maps[g]) {
          live_map.clear();
          for (const auto& [user_key, s] : map) {
            if (!Expired(t, s)) live_map.emplace_back(&user_key, &s);
          }
          if (live_map.empty()) continue;
          ++n;
          PutScope(scope, entries);
          entries.PutU32(static_cast<uint32_t>(live_map.size()));
          for (const auto& [user_key, s] : live_map) {
            entries.PutBytes(*user_key);
            PutStamped(*s, t.stamped, entries);
          }
        }
        break;
      default:
        for (const auto& [scope, s] : *t.values[g]) {
          if (Expired(t, s)) continue;
          ++n;
          PutScope(scope, entries);
          PutStamped(s, t.stamped, entries);
        }
    }
    out.PutU32(n);
    out.PutRaw(entries.data());
  }

  void WriteGroup(uint32_t g, StateWriter& out) const {
    for (const TableView& t : tables_) WriteEntries(t, g, out);
    timers_.SnapshotKeyGroup(range_.start + g, out);
  }

  uint32_t max_parallelism_;
  KeyGroupRange range_;
  int64_t ttl_ms_;
  int64_t now_ms_;
  std::vector<TableView> tables_;
  TimerService::View timers_;
};

Result<std::unique_ptr<KeyedStateSnapshot>> HashMapKeyedStateBackend::TakeSnapshot() {
  std::vector<HeapSnapshot::TableView> tables;
  tables.reserve(tables_.size());
  for (const Table& t : tables_) {
    HeapSnapshot::TableView v;
    v.name = t.desc.name;
    v.kind = t.desc.kind;
    v.stamped = t.desc.ttl;
    v.expires = TtlOn(t);
    for (const auto& g : t.values) v.values.push_back(g.share());
    for (const auto& g : t.lists) v.lists.push_back(g.share());
    for (const auto& g : t.maps) v.maps.push_back(g.share());
    tables.push_back(std::move(v));
  }
  return std::unique_ptr<KeyedStateSnapshot>(std::make_unique<HeapSnapshot>(
      options_, clock_->NowMillis(), std::move(tables), timers_.Share()));
}

Status HashMapKeyedStateBackend::RestoreGroup(size_t g, const std::vector<uint32_t>& order,
                                              const std::vector<bool>& stamped, StateReader& in) {
  // Entries without a write time (the state had no TTL when snapshotted) count as written now.
  const int64_t now = clock_->NowMillis();
  for (size_t i = 0; i < order.size(); ++i) {
    Table& t = tables_[order[i]];
    FLOE_ASSIGN_OR_RAISE(uint32_t entries, in.GetU32());
    for (uint32_t e = 0; e < entries; ++e) {
      FLOE_ASSIGN_OR_RAISE(std::string key, in.GetBytes());
      FLOE_ASSIGN_OR_RAISE(std::string ns, in.GetBytes());
      std::string scope = ScopeKey(key, ns);
      switch (t.desc.kind) {
        case StateKind::kList: {
          FLOE_ASSIGN_OR_RAISE(uint32_t n, in.GetU32());
          std::vector<Stamped>& list = t.lists[g].mut()[scope];
          for (uint32_t k = 0; k < n; ++k) {
            FLOE_ASSIGN_OR_RAISE(Stamped s, GetStamped(stamped[i], in));
            if (!stamped[i]) s.written_ms = now;
            list.push_back(std::move(s));
          }
          break;
        }
        case StateKind::kMap: {
          FLOE_ASSIGN_OR_RAISE(uint32_t n, in.GetU32());
          MapSlot& map = t.maps[g].mut()[scope];
          for (uint32_t k = 0; k < n; ++k) {
            FLOE_ASSIGN_OR_RAISE(std::string user_key, in.GetBytes());
            FLOE_ASSIGN_OR_RAISE(Stamped s, GetStamped(stamped[i], in));
            if (!stamped[i]) s.written_ms = now;
            map[std::move(user_key)] = std::move(s);
          }
          break;
        }
        default: {
          FLOE_ASSIGN_OR_RAISE(Stamped s, GetStamped(stamped[i], in));
          if (!stamped[i]) s.written_ms = now;
          Upsert(t.values[g].mut(), scope) = std::move(s);
        }
      }
    }
  }
  FLOE_RETURN_NOT_OK(
      timers_.RestoreKeyGroup(options_.key_groups.start + static_cast<uint32_t>(g), in));
  return in.ExpectEnd();
}

Status HashMapKeyedStateBackend::RestoreGroups(StateReader& in, KeyGroupRange only, bool once) {
  // Version 2 is the rocksdb backend's incremental layout: only it reads that.
  FLOE_ASSIGN_OR_RAISE(
      internal::SnapshotHeader h,
      internal::ReadSnapshotHeader(in, options_.max_parallelism, {kFormatVersion},
                                   "1; version 2 is an incremental rocksdb checkpoint: restore it "
                                   "with 'state.backend.type' = 'rocksdb', or switch backends "
                                   "through a savepoint"));
  const uint32_t start = h.range.start;
  const uint32_t end = h.range.end;
  const KeyGroupRange mine = options_.key_groups;
  // The snapshot's i-th state is table order[i]: registered before the restore (matched by
  // name), or kept unregistered until the operator registers it.
  FLOE_ASSIGN_OR_RAISE(
      std::vector<uint32_t> order,
      internal::MatchRestoredStates(h.states, tables_, [this](Table& t) { Size(t); }));
  std::vector<bool> stamped_by_state;
  for (const StateDescriptor& d : h.states) stamped_by_state.push_back(d.ttl);

  FLOE_ASSIGN_OR_RAISE(uint32_t group_count, in.GetU32());
  int64_t last = -1;
  for (uint32_t i = 0; i < group_count; ++i) {
    FLOE_ASSIGN_OR_RAISE(uint32_t key_group, in.GetU32());
    FLOE_ASSIGN_OR_RAISE(std::string section, in.GetBytes());
    if (key_group < start || key_group >= end || static_cast<int64_t>(key_group) <= last) {
      return Status::Corruption("keyed state: key group " + std::to_string(key_group) +
                                " out of order or outside [" + std::to_string(start) + ", " +
                                std::to_string(end) + ")");
    }
    last = key_group;
    if (key_group < only.start || key_group >= only.end) continue;  // another subtask's
    if (restored_groups_.empty()) restored_groups_.assign(groups_, false);
    if (once && restored_groups_[key_group - mine.start]) {
      return Status::Corruption("keyed state: key group " + std::to_string(key_group) +
                                " restored from two snapshots");
    }
    restored_groups_[key_group - mine.start] = true;
    StateReader reader(section);
    Status st = RestoreGroup(key_group - mine.start, order, stamped_by_state, reader);
    if (!st.ok()) return st.WithContext("keyed state, key group " + std::to_string(key_group));
  }
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<KeyedStateBackend>> KeyedStateBackend::Make(KeyedStateOptions options) {
  FLOE_RETURN_NOT_OK(CheckStateBackend(options.backend));
  const KeyGroupRange r = options.key_groups;
  if (options.max_parallelism == 0 || options.max_parallelism > kMaxMaxParallelism ||
      r.start > r.end || r.end > options.max_parallelism) {
    return Status::InvalidArgument("keyed state: key groups [" + std::to_string(r.start) + ", " +
                                   std::to_string(r.end) + ") do not fit max parallelism " +
                                   std::to_string(options.max_parallelism));
  }
  if (options.backend == "rocksdb") return MakeRocksDbKeyedStateBackend(std::move(options));
  return std::unique_ptr<KeyedStateBackend>(
      std::make_unique<HashMapKeyedStateBackend>(std::move(options)));
}

Status KeyedStateBackend::AdvanceWatermark(Watermark watermark, const TimerHandler& handler) {
  return FireEventTimers(watermark, handler, SIZE_MAX).status();
}

Status KeyedStateBackend::Snapshot(StateWriter& out) {
  FLOE_ASSIGN_OR_RAISE(std::unique_ptr<KeyedStateSnapshot> view, TakeSnapshot());
  return view->WriteTo(out);
}

Result<ValueState> KeyedStateBackend::GetValueState(std::string name, bool ttl) {
  StateDescriptor d{std::move(name), StateKind::kValue, ttl, {}, {}};
  FLOE_ASSIGN_OR_RAISE(StateId id, Register(std::move(d)));
  return ValueState(this, id);
}

Result<ListState> KeyedStateBackend::GetListState(std::string name, bool ttl) {
  StateDescriptor d{std::move(name), StateKind::kList, ttl, {}, {}};
  FLOE_ASSIGN_OR_RAISE(StateId id, Register(std::move(d)));
  return ListState(this, id);
}

Result<MapState> KeyedStateBackend::GetMapState(std::string name, bool ttl) {
  StateDescriptor d{std::move(name), StateKind::kMap, ttl, {}, {}};
  FLOE_ASSIGN_OR_RAISE(StateId id, Register(std::move(d)));
  return MapState(this, id);
}

Result<ReducingState> KeyedStateBackend::GetReducingState(std::string name, ReduceFunction reduce,
                                                          bool ttl) {
  StateDescriptor d{std::move(name), StateKind::kReducing, ttl, std::move(reduce), {}};
  FLOE_ASSIGN_OR_RAISE(StateId id, Register(std::move(d)));
  return ReducingState(this, id);
}

Result<AggregatingState> KeyedStateBackend::GetAggregatingState(std::string name,
                                                                AggregateFunction aggregate,
                                                                bool ttl) {
  StateDescriptor d{std::move(name), StateKind::kAggregating, ttl, {}, std::move(aggregate)};
  FLOE_ASSIGN_OR_RAISE(StateId id, Register(std::move(d)));
  return AggregatingState(this, id);
}

}  // namespace floe::runtime

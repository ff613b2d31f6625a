#include "floe/runtime/rocksdb_keyed_state.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <deque>
#include <filesystem>
#include <optional>
#include <set>

#include "floe/common/mutex.h"
#include "floe/runtime/keyed_state_checks.h"
#include "floe/runtime/rocksdb_database.h"
#include "floe/runtime/rocksdb_snapshot.h"

// RocksDbKeyedStateBackend: `state.backend.type: rocksdb`.
//
// The layout of the database: rocksdb_database.h; snapshots: rocksdb_snapshot.h.

namespace floe::runtime {
namespace rocksdb_internal {
namespace {

// A batch written when it grows past this, so a restore's memory stays bounded.
constexpr size_t kRestoreBatchBytes = 4 << 20;

// --- the backend --------------------------------------------------------------------------

class RocksDbKeyedStateBackend final : public internal::ScopedKeyedStateBackend {
 public:
  RocksDbKeyedStateBackend(KeyedStateOptions options, std::shared_ptr<Db> db)
      : ScopedKeyedStateBackend(options.key_groups, options.max_parallelism),
        options_(std::move(options)),
        clock_(options_.clock != nullptr ? options_.clock : SystemClock::Get()),
        db_(std::move(db)) {
    write_.disableWAL = true;
    const size_t groups = options_.key_groups.end - options_.key_groups.start;
    for (auto& heads : group_heads_) heads.resize(groups);
    for (auto& floors : floors_) floors.resize(groups);
    for (auto& caches : caches_) caches.resize(groups);
  }

  Result<StateId> Register(StateDescriptor desc) override {
    FLOE_RETURN_NOT_OK(internal::CheckDescriptor(desc));
    for (size_t i = 0; i < tables_.size(); ++i) {
      StateInfo& t = tables_[i];
      if (t.desc.name != desc.name) continue;
      if (t.desc.kind != desc.kind) {
        return internal::KindMismatch(desc.name, t.desc.kind, t.registered, desc.kind);
      }
      t.desc = std::move(desc);
      t.registered = true;
      SyncTtl();
      return StateId{static_cast<uint32_t>(i)};
    }
    tables_.push_back(StateInfo{std::move(desc), true});
    SyncTtl();
    return StateId{static_cast<uint32_t>(tables_.size() - 1)};
  }

  Result<bool> Get(StateId id, std::string* out) override {
    FLOE_ASSIGN_OR_RAISE(
        StateInfo * t,
        Access(id, "get", {StateKind::kValue, StateKind::kReducing, StateKind::kAggregating}));
    FLOE_ASSIGN_OR_RAISE(std::optional<std::string> v, ReadValue(*t, StateKey(id)));
    if (!v) return false;
    if (t->desc.kind == StateKind::kAggregating && t->desc.aggregate.result) {
      FLOE_RETURN_NOT_OK(t->desc.aggregate.result(*v, out));
    } else {
      *out = std::move(*v);
    }
    return true;
  }

  Status Put(StateId id, std::string_view value) override {
    FLOE_RETURN_NOT_OK(Access(id, "update", {StateKind::kValue}).status());
    return Write(StateKey(id), value);
  }

  Status Add(StateId id, std::string_view value) override {
    FLOE_ASSIGN_OR_RAISE(
        StateInfo * t,
        Access(id, "add to", {StateKind::kList, StateKind::kReducing, StateKind::kAggregating}));
    const std::string& key = StateKey(id);
    if (t->desc.kind == StateKind::kList) {
      std::string element;
      AppendElement(&element, clock_->NowMillis(), value);
      return Check(db_->db->Merge(write_, db_->state, key, element), "merge");
    }
    FLOE_ASSIGN_OR_RAISE(std::optional<std::string> v, ReadValue(*t, key));
    std::string next;
    if (t->desc.kind == StateKind::kReducing) {
      if (v) {
        FLOE_RETURN_NOT_OK(t->desc.reduce(*v, value, &next));
      } else {
        next.assign(value);
      }
    } else {
      if (v) {
        next = std::move(*v);
      } else {
        FLOE_RETURN_NOT_OK(t->desc.aggregate.create(&next));
      }
      FLOE_RETURN_NOT_OK(t->desc.aggregate.add(value, &next));
    }
    return Write(key, next);
  }

  Status GetList(StateId id, std::vector<std::string>* out) override {
    FLOE_ASSIGN_OR_RAISE(StateInfo * t, Access(id, "get", {StateKind::kList}));
    out->clear();
    std::string raw;
    rocksdb::Status st = db_->db->Get(rocksdb::ReadOptions(), db_->state, StateKey(id), &raw);
    if (st.IsNotFound()) return Status::OK();
    FLOE_RETURN_NOT_OK(Check(st, "read"));
    std::vector<Stamped> elements;
    if (!DecodeElements(raw, &elements)) return BadRow("state");
    const int64_t now = clock_->NowMillis();
    for (const Stamped& e : elements) {
      if (!Expired(*t, options_, e.written_ms, now)) out->emplace_back(e.bytes);
    }
    return Status::OK();
  }

  Status UpdateList(StateId id, std::vector<std::string> values) override {
    FLOE_RETURN_NOT_OK(Access(id, "update", {StateKind::kList}).status());
    if (values.empty()) return Check(db_->db->Delete(write_, db_->state, StateKey(id)), "delete");
    std::string encoded;
    const int64_t now = clock_->NowMillis();
    for (const std::string& v : values) AppendElement(&encoded, now, v);
    return Check(db_->db->Put(write_, db_->state, StateKey(id), encoded), "write");
  }

  Result<bool> MapGet(StateId id, std::string_view user_key, std::string* out) override {
    FLOE_ASSIGN_OR_RAISE(StateInfo * t, Access(id, "get from", {StateKind::kMap}));
    std::string key = StateKey(id);
    key.append(user_key);
    FLOE_ASSIGN_OR_RAISE(std::optional<std::string> v, ReadValue(*t, key));
    if (!v) return false;
    *out = std::move(*v);
    return true;
  }

  Status MapPut(StateId id, std::string_view user_key, std::string_view value) override {
    FLOE_RETURN_NOT_OK(Access(id, "put into", {StateKind::kMap}).status());
    std::string key = StateKey(id);
    key.append(user_key);
    return Write(key, value);
  }

  Status MapRemove(StateId id, std::string_view user_key) override {
    FLOE_RETURN_NOT_OK(Access(id, "remove from", {StateKind::kMap}).status());
    std::string key = StateKey(id);
    key.append(user_key);
    return Check(db_->db->Delete(write_, db_->state, key), "delete");
  }

  Status MapEntries(StateId id, std::vector<std::pair<std::string, std::string>>* out) override {
    FLOE_ASSIGN_OR_RAISE(StateInfo * t, Access(id, "iterate", {StateKind::kMap}));
    out->clear();
    const std::string prefix = StateKey(id);
    const int64_t now = clock_->NowMillis();
    std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(rocksdb::ReadOptions(), db_->state));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      Stamped v;
      if (!DecodeStamped(View(it->value()), &v)) return BadRow("state");
      if (Expired(*t, options_, v.written_ms, now)) continue;
      out->emplace_back(std::string(View(it->key()).substr(prefix.size())), std::string(v.bytes));
    }
    return Check(it->status(), "iterate");
  }

  Status Clear(StateId id) override {
    FLOE_ASSIGN_OR_RAISE(StateInfo * t, Access(id, "clear", {}));
    const std::string prefix = StateKey(id);
    if (t->desc.kind != StateKind::kMap) {
      return Check(db_->db->Delete(write_, db_->state, prefix), "delete");
    }
    rocksdb::WriteBatch batch;
    std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(rocksdb::ReadOptions(), db_->state));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      batch.Delete(db_->state, it->key());
    }
    FLOE_RETURN_NOT_OK(Check(it->status(), "iterate"));
    return Check(db_->db->Write(write_, &batch), "delete");
  }

  Status MergeNamespaces(StateId id, std::string_view target,
                         const std::vector<std::string>& sources) override;

  // --- timers ------------------------------------------------------------------------------

  Status RegisterTimer(TimeDomain domain, int64_t timestamp) override {
    FLOE_RETURN_NOT_OK(RequireKey("register a timer"));
    const std::string key = TimerKey(domain, timestamp, current_group_, current_key_, current_ns_);
    FLOE_RETURN_NOT_OK(Check(db_->db->Put(write_, db_->timers, key, ""), "write timer"));
    std::string& floor = floors_[Index(domain)][Group()];
    if (key < floor) floor.clear();
    TimerCache& cache = caches_[Index(domain)][Group()];
    // Cached when it sorts among the cached timers (a refill finds one sorting after them).
    if (cache.loaded && (cache.complete || (!cache.keys.empty() && key < cache.keys.back()))) {
      auto at = std::lower_bound(cache.keys.begin(), cache.keys.end(), key);
      if (at == cache.keys.end() || *at != key) cache.keys.insert(at, key);
    }
    std::optional<int64_t>& head = group_heads_[Index(domain)][Group()];
    if (!head || timestamp < *head) SetHead(domain, current_group_, timestamp);
    return Status::OK();
  }

  Status DeleteTimer(TimeDomain domain, int64_t timestamp) override {
    FLOE_RETURN_NOT_OK(RequireKey("delete a timer"));
    const std::string key = TimerKey(domain, timestamp, current_group_, current_key_, current_ns_);
    FLOE_RETURN_NOT_OK(Check(db_->db->Delete(write_, db_->timers, key), "delete timer"));
    TimerCache& cache = caches_[Index(domain)][Group()];
    if (cache.loaded) {
      auto at = std::lower_bound(cache.keys.begin(), cache.keys.end(), key);
      if (at != cache.keys.end() && *at == key) cache.keys.erase(at);
    }
    if (group_heads_[Index(domain)][Group()] == timestamp) {
      FLOE_ASSIGN_OR_RAISE(std::optional<int64_t> first, FirstTimestamp(domain, current_group_));
      SetHead(domain, current_group_, first);
    }
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
    const auto& heads = heads_[Index(domain)];
    if (heads.empty()) return std::nullopt;
    return heads.begin()->first;
  }
  int64_t CurrentProcessingTime() const override { return clock_->NowMillis() * 1000; }
  Watermark current_watermark() const override { return watermark_; }

  // --- checkpoints -------------------------------------------------------------------------

  Result<std::unique_ptr<KeyedStateSnapshot>> TakeSnapshot() override {
    const uint64_t number = ++snapshots_;
    const auto start = std::chrono::steady_clock::now();
    auto snapshot =
        std::make_unique<RocksDbSnapshot>(db_, options_, tables_, clock_->NowMillis(), number);
    if (options_.incremental && options_.shared_state != nullptr) {
      const int64_t view_micros = std::chrono::duration_cast<std::chrono::microseconds>(
                                      std::chrono::steady_clock::now() - start)
                                      .count();
      FLOE_RETURN_NOT_OK(snapshot->SwitchMemTables(
          db_->remove_dir + "/chk-" + std::to_string(number), view_micros));
    }
    return std::unique_ptr<KeyedStateSnapshot>(std::move(snapshot));
  }

  Status Restore(StateReader& in) override;
  Status DropKeyGroup(uint32_t key_group) override;
  Status RestoreKeyGroup(StateReader& in, uint32_t key_group) override;

  // A scan of the whole database: for tests and diagnostics, not for a hot path.
  size_t num_entries() const override {
    size_t n = 0;
    std::string last;
    std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(rocksdb::ReadOptions(), db_->state));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      std::string_view key = View(it->key());
      std::string_view rest = key.substr(std::min<size_t>(6, key.size()));
      std::string k, ns;
      if (!GetEscaped(&rest, &k) || !GetEscaped(&rest, &ns)) continue;
      std::string_view scope = key.substr(0, key.size() - rest.size());
      if (scope == last) continue;
      last.assign(scope);
      ++n;
    }
    return n;
  }
  const KeyedStateOptions& options() const override { return options_; }

  Status PauseBackgroundWork(bool pause) {
    return Check(pause ? db_->db->PauseBackgroundWork() : db_->db->ContinueBackgroundWork(),
                 pause ? "pause background work" : "continue background work");
  }

  // A full manual compaction of both column families (CompactRocksDbKeyedState).
  Status CompactAll() {
    rocksdb::CompactRangeOptions o;
    o.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
    for (rocksdb::ColumnFamilyHandle* family : {db_->state, db_->timers}) {
      FLOE_RETURN_NOT_OK(Check(db_->db->Flush(rocksdb::FlushOptions(), family), "flush"));
      FLOE_RETURN_NOT_OK(Check(db_->db->CompactRange(o, family, nullptr, nullptr), "compact"));
    }
    return Status::OK();
  }

 private:
  static size_t Index(TimeDomain d) { return static_cast<size_t>(d); }

  // Tells the compaction filter which states expire (after registering or restoring states).
  void SyncTtl() {
    if (!db_->ttl) return;
    std::vector<std::optional<StateKind>> kinds;
    for (const StateInfo& t : tables_) {
      kinds.push_back(t.desc.ttl ? std::optional(t.desc.kind) : std::nullopt);
    }
    db_->ttl->SetStates(std::move(kinds));
  }
  size_t Group() const { return current_group_ - options_.key_groups.start; }

  Result<StateInfo*> Access(StateId id, std::string_view what,
                            std::initializer_list<StateKind> kinds) {
    if (id.value >= tables_.size() || !tables_[id.value].registered) {
      return Status::InvalidArgument("keyed state: unknown state id " + std::to_string(id.value));
    }
    StateInfo& t = tables_[id.value];
    if (kinds.size() > 0 && std::find(kinds.begin(), kinds.end(), t.desc.kind) == kinds.end()) {
      return Status::InvalidArgument("keyed state '" + t.desc.name + "': cannot " +
                                     std::string(what) + " " +
                                     std::string(StateKindName(t.desc.kind)) + " state this way");
    }
    if (!has_key_) return RequireKey(std::string(what) + " state '" + t.desc.name + "'");
    return &t;
  }

  // The row key of state `id` in the current scope (namespace `ns` when given).
  const std::string& StateKey(StateId id, std::optional<std::string_view> ns = std::nullopt) {
    if (scope_dirty_) {
      scope_ = Scope(current_key_, current_ns_);
      scope_dirty_ = false;
    }
    key_.clear();
    PutBe(&key_, current_group_, 2);
    PutBe(&key_, id.value, 4);
    if (ns) {
      PutEscaped(&key_, current_key_);
      PutEscaped(&key_, *ns);
    } else {
      key_.append(scope_);
    }
    return key_;
  }

  Status Write(const std::string& key, std::string_view value) {
    return Check(db_->db->Put(write_, db_->state, key, EncodeStamped(clock_->NowMillis(), value)),
                 "write");
  }

  // The live value at `key`: nullopt when absent or expired.
  Result<std::optional<std::string>> ReadValue(const StateInfo& t, const std::string& key) {
    rocksdb::PinnableSlice raw;
    rocksdb::Status st = db_->db->Get(rocksdb::ReadOptions(), db_->state, key, &raw);
    if (st.IsNotFound()) return std::optional<std::string>();
    FLOE_RETURN_NOT_OK(Check(st, "read"));
    Stamped v;
    if (!DecodeStamped(View(raw), &v)) return BadRow("state");
    if (Expired(t, options_, v.written_ms, clock_->NowMillis()))
      return std::optional<std::string>();
    return std::optional<std::string>(std::string(v.bytes));
  }

  void SetHead(TimeDomain domain, uint32_t key_group, std::optional<int64_t> ts) {
    auto& heads = heads_[Index(domain)];
    std::optional<int64_t>& head =
        group_heads_[Index(domain)][key_group - options_.key_groups.start];
    if (head) heads.erase({*head, key_group});
    head = ts;
    if (head) heads.insert({*head, key_group});
  }

  // An iterator over the timers of one key group and domain, at the earliest. Not movable: the
  // iterator holds a pointer to `upper_slice`.
  struct TimerCursor {
    TimerCursor() = default;
    TimerCursor(const TimerCursor&) = delete;
    std::string upper;
    rocksdb::Slice upper_slice;
    std::unique_ptr<rocksdb::Iterator> it;
  };

  // Seeks from the group's floor (the last timer popped, unless an earlier one was registered
  // since): a queue's head in RocksDB sits behind the tombstones of every timer popped before
  // it, and seeking from the start of the group would scan them all again on every pop
  // (quadratic until a flush). The upper bound keeps a seek out of the next domain's rows.
  Status OpenTimers(TimeDomain domain, uint32_t key_group, TimerCursor* c) const {
    std::string lower = GroupPrefix(key_group);
    lower.push_back(static_cast<char>(domain));
    c->upper = GroupPrefix(key_group);
    c->upper.push_back(static_cast<char>(static_cast<int>(domain) + 1));
    c->upper_slice = rocksdb::Slice(c->upper);
    rocksdb::ReadOptions read;
    read.iterate_upper_bound = &c->upper_slice;
    c->it.reset(db_->db->NewIterator(read, db_->timers));
    const std::string& floor = floors_[Index(domain)][key_group - options_.key_groups.start];
    c->it->Seek(floor.empty() ? lower : floor);
    return Check(c->it->status(), "read timers");
  }

  // Reads up to kTimerCacheSize of the group's timers from its floor into its cache.
  Status Refill(TimeDomain domain, uint32_t key_group) {
    TimerCache& cache = caches_[Index(domain)][key_group - options_.key_groups.start];
    TimerCursor c;
    FLOE_RETURN_NOT_OK(OpenTimers(domain, key_group, &c));
    cache.keys.clear();
    for (; c.it->Valid() && cache.keys.size() < kTimerCacheSize; c.it->Next()) {
      cache.keys.emplace_back(View(c.it->key()));
    }
    FLOE_RETURN_NOT_OK(Check(c.it->status(), "read timers"));
    cache.complete = !c.it->Valid();
    cache.loaded = true;
    return Status::OK();
  }

  // The group's earliest timer (its row), refilling the cache when it ran out; null when the
  // group has none.
  Result<const std::string*> FrontTimer(TimeDomain domain, uint32_t key_group) {
    TimerCache& cache = caches_[Index(domain)][key_group - options_.key_groups.start];
    if (!cache.loaded || (cache.keys.empty() && !cache.complete)) {
      FLOE_RETURN_NOT_OK(Refill(domain, key_group));
    }
    return cache.keys.empty() ? nullptr : &cache.keys.front();
  }

  // The earliest timestamp of one group and domain.
  Result<std::optional<int64_t>> FirstTimestamp(TimeDomain domain, uint32_t key_group) {
    FLOE_ASSIGN_OR_RAISE(const std::string* front, FrontTimer(domain, key_group));
    if (front == nullptr) return std::optional<int64_t>();
    Timer t;
    if (!DecodeTimerKey(*front, &t)) return BadRow("timers");
    return std::optional<int64_t>(t.timestamp);
  }

  // Fires due timers in the heap's (timestamp, key group, key, namespace) order: each time the
  // earliest head's group gives up its first timer. A group's first timers come from its cache
  // (Flink's RocksDBCachingPriorityQueueSet), so firing timers that alternate between groups,
  // as session ends spread over milliseconds do, costs no seek per timer. Timers the handler
  // registers or deletes keep the caches and heads current. At most `max_timers`; true when
  // due ones remain.
  Result<bool> Fire(TimeDomain domain, int64_t upto, const TimerHandler& handler,
                    size_t max_timers) {
    const auto& heads = heads_[Index(domain)];
    for (size_t fired = 0; !heads.empty() && heads.begin()->first <= upto; ++fired) {
      if (fired == max_timers) return true;
      const uint32_t g = heads.begin()->second;
      FLOE_ASSIGN_OR_RAISE(const std::string* front, FrontTimer(domain, g));
      if (front == nullptr) {
        return Status::Internal("rocksdb keyed state: timer head of key group " +
                                std::to_string(g) + " has no timer");
      }
      Timer t;
      if (!DecodeTimerKey(*front, &t)) return BadRow("timers");
      FLOE_RETURN_NOT_OK(Pop(domain, g));
      SetScope(t.key, t.ns, t.key_group);
      FLOE_RETURN_NOT_OK(handler(t));
    }
    return false;
  }

  // Deletes the group's first timer and makes the next one its head. The deleted row becomes
  // the group's floor: a queue's head in RocksDB sits behind the tombstones of every timer
  // popped before it, and a refill seeking from the start of the group would scan them all.
  Status Pop(TimeDomain domain, uint32_t g) {
    TimerCache& cache = caches_[Index(domain)][g - options_.key_groups.start];
    std::string& floor = floors_[Index(domain)][g - options_.key_groups.start];
    floor = std::move(cache.keys.front());
    cache.keys.pop_front();
    FLOE_RETURN_NOT_OK(Check(db_->db->Delete(write_, db_->timers, floor), "delete timer"));
    FLOE_ASSIGN_OR_RAISE(std::optional<int64_t> next, FirstTimestamp(domain, g));
    SetHead(domain, g, next);
    return Status::OK();
  }

  // Reads every group's earliest timers again (after a restore).
  Status LoadHeads() {
    for (auto& floors : floors_) std::fill(floors.begin(), floors.end(), std::string());
    for (auto& caches : caches_) std::fill(caches.begin(), caches.end(), TimerCache());
    for (uint32_t g = options_.key_groups.start; g < options_.key_groups.end; ++g) {
      for (TimeDomain d : {TimeDomain::kEventTime, TimeDomain::kProcessingTime}) {
        FLOE_ASSIGN_OR_RAISE(std::optional<int64_t> first, FirstTimestamp(d, g));
        SetHead(d, g, first);
      }
    }
    return Status::OK();
  }

  // Table index of each of the snapshot's states (matched by name; unknown ones are added,
  // unregistered until the operator registers them).
  Result<std::vector<uint32_t>> MatchStates(const std::vector<StateDescriptor>& states);
  // Marks a key group restored; Corruption if it already was.
  Status MarkRestored(uint32_t key_group);
  // Restores the groups of `in` within `only`; `once`: MarkRestored each (Restore's rule).
  Status RestoreCanonical(const SnapshotHeader& h, const std::vector<uint32_t>& order,
                          StateReader& in, KeyGroupRange only, bool once);
  Status RestoreCanonicalGroup(uint32_t key_group, const SnapshotHeader& h,
                               const std::vector<uint32_t>& order, StateReader& in,
                               rocksdb::WriteBatch* batch);
  Status RestoreNative(const SnapshotHeader& h, const std::vector<uint32_t>& order,
                       StateReader& in);
  // Downloads the files of a native snapshot into `dir`; *files: the SSTs by number.
  Status DownloadNative(const SnapshotHeader& h, StateReader& in, const fs::path& dir,
                        std::map<uint64_t, SharedStateFile>* files);
  // Whether the downloaded database can become the live one as it is (Flink's restore without
  // rescaling): same key groups, first restore, nothing written yet, no snapshot holding the
  // database, every state at the index the snapshot gave it.
  Result<bool> CanAdopt(const SnapshotHeader& h, const std::vector<uint32_t>& order);
  Status Adopt(const SnapshotHeader& h, const fs::path& dir,
               std::map<uint64_t, SharedStateFile> files);
  Status CopyOwnedGroups(const SnapshotHeader& h, const std::vector<uint32_t>& order, Db& from);
  Status Flush(rocksdb::WriteBatch* batch, bool force) {
    if (batch->Count() == 0 || (!force && batch->GetDataSize() < kRestoreBatchBytes)) {
      return Status::OK();
    }
    FLOE_RETURN_NOT_OK(Check(db_->db->Write(write_, batch), "restore"));
    batch->Clear();
    return Status::OK();
  }

  KeyedStateOptions options_;
  const Clock* clock_;
  std::shared_ptr<Db> db_;
  rocksdb::WriteOptions write_;
  std::vector<StateInfo> tables_;
  // Per domain: each group's earliest timer timestamp (index: key group - start), and the
  // ordered set of (timestamp, key group) of those heads.
  std::vector<std::optional<int64_t>> group_heads_[2];
  std::set<std::pair<int64_t, uint32_t>> heads_[2];
  // Per domain and group: the row of the last popped timer, "" when unknown (OpenTimers).
  std::vector<std::string> floors_[2];
  // Per domain and group: its first timers' rows, in order. Every timer of the group that sorts
  // at or before the last one cached is cached; `complete`: the group has no other timer.
  // Loaded on first use, refilled when it runs out, dropped on restore.
  struct TimerCache {
    bool loaded = false;
    bool complete = false;
    std::deque<std::string> keys;
  };
  static constexpr size_t kTimerCacheSize = 128;
  std::vector<TimerCache> caches_[2];
  std::vector<bool> restored_groups_;
  Watermark watermark_;
  uint64_t snapshots_ = 0;

  // scope_ (the base's) is Scope(current_key_, current_ns_), rebuilt after the scope changed.
  std::string key_;  // StateKey's buffer
};

Status RocksDbKeyedStateBackend::MergeNamespaces(StateId id, std::string_view target,
                                                 const std::vector<std::string>& sources) {
  FLOE_ASSIGN_OR_RAISE(StateInfo * t,
                       Access(id, "merge namespaces of",
                              {StateKind::kList, StateKind::kReducing, StateKind::kAggregating}));
  if (t->desc.kind == StateKind::kAggregating && !t->desc.aggregate.merge) {
    return Status::InvalidArgument("keyed state '" + t->desc.name +
                                   "': merging namespaces needs the aggregate's merge function");
  }
  const int64_t now = clock_->NowMillis();
  const std::string target_key = StateKey(id, target);
  rocksdb::WriteBatch batch;
  std::optional<std::string> acc;
  if (t->desc.kind != StateKind::kList) {
    FLOE_ASSIGN_OR_RAISE(acc, ReadValue(*t, target_key));
  }
  std::string merged_list;
  for (const std::string& ns : sources) {
    if (ns == target) continue;
    const std::string source_key = StateKey(id, ns);
    std::string raw;
    rocksdb::Status st = db_->db->Get(rocksdb::ReadOptions(), db_->state, source_key, &raw);
    if (st.IsNotFound()) continue;
    FLOE_RETURN_NOT_OK(Check(st, "read"));
    batch.Delete(db_->state, source_key);
    if (t->desc.kind == StateKind::kList) {
      std::vector<Stamped> elements;
      if (!DecodeElements(raw, &elements)) return BadRow("state");
      for (const Stamped& e : elements) {
        if (!Expired(*t, options_, e.written_ms, now))
          AppendElement(&merged_list, e.written_ms, e.bytes);
      }
      continue;
    }
    Stamped v;
    if (!DecodeStamped(raw, &v)) return BadRow("state");
    if (Expired(*t, options_, v.written_ms, now)) continue;
    if (!acc) {
      acc.emplace(v.bytes);
    } else if (t->desc.kind == StateKind::kReducing) {
      std::string next;
      FLOE_RETURN_NOT_OK(t->desc.reduce(*acc, v.bytes, &next));
      acc = std::move(next);
    } else {
      FLOE_RETURN_NOT_OK(t->desc.aggregate.merge(v.bytes, &*acc));
    }
  }
  if (t->desc.kind == StateKind::kList) {
    if (!merged_list.empty()) batch.Merge(db_->state, target_key, merged_list);
  } else if (acc) {
    batch.Put(db_->state, target_key, EncodeStamped(now, *acc));
  } else {
    batch.Delete(db_->state, target_key);
  }
  return Check(db_->db->Write(write_, &batch), "merge namespaces");
}

Result<std::vector<uint32_t>> RocksDbKeyedStateBackend::MatchStates(
    const std::vector<StateDescriptor>& states) {
  return internal::MatchRestoredStates(states, tables_, [](StateInfo&) {});
}

Status RocksDbKeyedStateBackend::MarkRestored(uint32_t key_group) {
  if (restored_groups_.empty()) {
    restored_groups_.assign(options_.key_groups.end - options_.key_groups.start, false);
  }
  auto slot = restored_groups_.begin() + (key_group - options_.key_groups.start);
  if (*slot) {
    return Status::Corruption("keyed state: key group " + std::to_string(key_group) +
                              " restored from two snapshots");
  }
  *slot = true;
  return Status::OK();
}

Status RocksDbKeyedStateBackend::Restore(StateReader& in) {
  FLOE_ASSIGN_OR_RAISE(SnapshotHeader h, ReadHeader(in, options_.max_parallelism));
  FLOE_ASSIGN_OR_RAISE(std::vector<uint32_t> order, MatchStates(h.states));
  SyncTtl();
  Status st = h.version == kNativeVersion
                  ? RestoreNative(h, order, in)
                  : RestoreCanonical(h, order, in, options_.key_groups, true);
  FLOE_RETURN_NOT_OK(st);
  return LoadHeads();
}

Status RocksDbKeyedStateBackend::DropKeyGroup(uint32_t key_group) {
  FLOE_RETURN_NOT_OK(CheckOwnGroup(key_group));
  // Open snapshots keep seeing the group: DeleteRange writes a tombstone, not a rewrite.
  const std::string from = GroupPrefix(key_group);
  const std::string to = GroupPrefix(key_group + 1);
  for (rocksdb::ColumnFamilyHandle* family : {db_->state, db_->timers}) {
    FLOE_RETURN_NOT_OK(Check(db_->db->DeleteRange(write_, family, from, to), "drop key group"));
  }
  const size_t g = key_group - options_.key_groups.start;
  for (TimeDomain d : {TimeDomain::kEventTime, TimeDomain::kProcessingTime}) {
    SetHead(d, key_group, std::nullopt);
    floors_[Index(d)][g].clear();
    caches_[Index(d)][g] = TimerCache();
  }
  if (!restored_groups_.empty()) restored_groups_[g] = false;
  return Status::OK();
}

Status RocksDbKeyedStateBackend::RestoreKeyGroup(StateReader& in, uint32_t key_group) {
  FLOE_RETURN_NOT_OK(DropKeyGroup(key_group));
  FLOE_ASSIGN_OR_RAISE(SnapshotHeader h, ReadHeader(in, options_.max_parallelism));
  if (h.version == kNativeVersion) {
    return Status::InvalidArgument(
        "keyed state: key group " + std::to_string(key_group) +
        " cannot be taken from an incremental rocksdb checkpoint (its files hold every group); "
        "a partition's state moves in the canonical layout");
  }
  FLOE_ASSIGN_OR_RAISE(std::vector<uint32_t> order, MatchStates(h.states));
  SyncTtl();
  FLOE_RETURN_NOT_OK(
      RestoreCanonical(h, order, in, KeyGroupRange{key_group, key_group + 1}, false));
  for (TimeDomain d : {TimeDomain::kEventTime, TimeDomain::kProcessingTime}) {
    FLOE_ASSIGN_OR_RAISE(std::optional<int64_t> first, FirstTimestamp(d, key_group));
    SetHead(d, key_group, first);
  }
  return Status::OK();
}

Status RocksDbKeyedStateBackend::RestoreCanonical(const SnapshotHeader& h,
                                                  const std::vector<uint32_t>& order,
                                                  StateReader& in, KeyGroupRange only, bool once) {
  FLOE_ASSIGN_OR_RAISE(uint32_t group_count, in.GetU32());
  int64_t last = -1;
  rocksdb::WriteBatch batch;
  for (uint32_t i = 0; i < group_count; ++i) {
    FLOE_ASSIGN_OR_RAISE(uint32_t key_group, in.GetU32());
    FLOE_ASSIGN_OR_RAISE(std::string section, in.GetBytes());
    if (key_group < h.range.start || key_group >= h.range.end ||
        static_cast<int64_t>(key_group) <= last) {
      return Status::Corruption("keyed state: key group " + std::to_string(key_group) +
                                " out of order or outside [" + std::to_string(h.range.start) +
                                ", " + std::to_string(h.range.end) + ")");
    }
    last = key_group;
    if (key_group < only.start || key_group >= only.end) continue;  // another subtask's
    if (once) FLOE_RETURN_NOT_OK(MarkRestored(key_group));
    StateReader reader(section);
    Status st = RestoreCanonicalGroup(key_group, h, order, reader, &batch);
    if (!st.ok()) return st.WithContext("keyed state, key group " + std::to_string(key_group));
    FLOE_RETURN_NOT_OK(Flush(&batch, false));
  }
  return Flush(&batch, true);
}

Status RocksDbKeyedStateBackend::RestoreCanonicalGroup(uint32_t key_group, const SnapshotHeader& h,
                                                       const std::vector<uint32_t>& order,
                                                       StateReader& in,
                                                       rocksdb::WriteBatch* batch) {
  // Entries without a write time (the state had no TTL when snapshotted) count as written now.
  const int64_t now = clock_->NowMillis();
  auto stamped = [&](bool has_stamp, std::string* out) -> Status {
    int64_t ms = now;
    if (has_stamp) {
      FLOE_ASSIGN_OR_RAISE(ms, in.GetI64());
    }
    FLOE_ASSIGN_OR_RAISE(std::string bytes, in.GetBytes());
    *out = EncodeStamped(ms, bytes);
    return Status::OK();
  };
  for (size_t i = 0; i < order.size(); ++i) {
    const StateKind kind = h.states[i].kind;
    const bool has_stamp = h.states[i].ttl;
    FLOE_ASSIGN_OR_RAISE(uint32_t entries, in.GetU32());
    for (uint32_t e = 0; e < entries; ++e) {
      FLOE_ASSIGN_OR_RAISE(std::string key, in.GetBytes());
      FLOE_ASSIGN_OR_RAISE(std::string ns, in.GetBytes());
      std::string row = StateRowPrefix(key_group, order[i]) + Scope(key, ns);
      std::string value;
      if (kind == StateKind::kList || kind == StateKind::kMap) {
        FLOE_ASSIGN_OR_RAISE(uint32_t n, in.GetU32());
        for (uint32_t k = 0; k < n; ++k) {
          std::string user_key;
          if (kind == StateKind::kMap) {
            FLOE_ASSIGN_OR_RAISE(user_key, in.GetBytes());
          }
          std::string one;
          FLOE_RETURN_NOT_OK(stamped(has_stamp, &one));
          if (kind == StateKind::kMap) {
            batch->Put(db_->state, row + user_key, one);
          } else {
            AppendElement(&value, static_cast<int64_t>(GetLe(one, 0, 8)),
                          std::string_view(one).substr(8));
          }
        }
        if (kind == StateKind::kMap || value.empty()) continue;
      } else {
        FLOE_RETURN_NOT_OK(stamped(has_stamp, &value));
      }
      batch->Put(db_->state, row, value);
    }
  }
  for (TimeDomain d : {TimeDomain::kEventTime, TimeDomain::kProcessingTime}) {
    FLOE_ASSIGN_OR_RAISE(uint32_t n, in.GetU32());
    for (uint32_t k = 0; k < n; ++k) {
      FLOE_ASSIGN_OR_RAISE(int64_t ts, in.GetI64());
      FLOE_ASSIGN_OR_RAISE(std::string key, in.GetBytes());
      FLOE_ASSIGN_OR_RAISE(std::string ns, in.GetBytes());
      batch->Put(db_->timers, TimerKey(d, ts, key_group, key, ns), "");
    }
  }
  return in.ExpectEnd();
}

// Flink's restore of an incremental snapshot: the files come back into a directory of their
// own, that database is opened, and the key groups this subtask owns are copied into the live
// database (rows keep their layout; only the state ids are renumbered).
Status RocksDbKeyedStateBackend::RestoreNative(const SnapshotHeader& h,
                                               const std::vector<uint32_t>& order,
                                               StateReader& in) {
  const fs::path dir = fs::path(db_->remove_dir) / ("restore-" + std::to_string(++db_->next_dir));
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) {
    return Status::IOError("rocksdb keyed state: cannot create '" + dir.string() +
                           "': " + ec.message());
  }
  std::map<uint64_t, SharedStateFile> files;
  Status st = DownloadNative(h, in, dir, &files);
  if (!st.ok()) {
    fs::remove_all(dir, ec);
    return st;
  }
  FLOE_ASSIGN_OR_RAISE(bool adopt, CanAdopt(h, order));
  if (adopt) return Adopt(h, dir, std::move(files));
  FLOE_ASSIGN_OR_RAISE(std::unique_ptr<Db> from,
                       OpenDb(dir.string(), dir.string(), db_->memory, nullptr));
  return CopyOwnedGroups(h, order, *from);
}

Result<bool> RocksDbKeyedStateBackend::CanAdopt(const SnapshotHeader& h,
                                                const std::vector<uint32_t>& order) {
  if (h.range != options_.key_groups || !restored_groups_.empty() || db_.use_count() != 1) {
    return false;
  }
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] != i) return false;
  }
  for (rocksdb::ColumnFamilyHandle* family : {db_->state, db_->timers}) {
    std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(rocksdb::ReadOptions(), family));
    it->SeekToFirst();
    FLOE_RETURN_NOT_OK(Check(it->status(), "restore"));
    if (it->Valid()) return false;
  }
  return true;
}

Status RocksDbKeyedStateBackend::Adopt(const SnapshotHeader& h, const fs::path& dir,
                                       std::map<uint64_t, SharedStateFile> files) {
  FLOE_ASSIGN_OR_RAISE(std::unique_ptr<Db> adopted,
                       OpenDb(dir.string(), "", db_->memory, db_->ttl));
  // The working directory (and its cleanup) moves to the adopted database; the empty one goes.
  adopted->remove_dir = std::exchange(db_->remove_dir, "");
  adopted->registered_dir = std::exchange(db_->registered_dir, false);
  adopted->file_prefix = db_->file_prefix;
  adopted->next_dir = db_->next_dir.load();
  {
    // The restored checkpoint completed, so its files may be listed again instead of uploaded.
    MutexLock lock(adopted->mu);
    adopted->uploaded = std::move(files);
  }
  const std::string empty_path = db_->path;
  db_ = std::move(adopted);
  std::error_code ec;
  fs::remove_all(empty_path, ec);
  for (uint32_t g = h.range.start; g < h.range.end; ++g) FLOE_RETURN_NOT_OK(MarkRestored(g));
  return Status::OK();
}

Status RocksDbKeyedStateBackend::DownloadNative(const SnapshotHeader& h, StateReader& in,
                                                const fs::path& dir,
                                                std::map<uint64_t, SharedStateFile>* files) {
  const std::string what = "keyed state: incremental snapshot of key groups [" +
                           std::to_string(h.range.start) + ", " + std::to_string(h.range.end) + ")";
  if (options_.shared_state == nullptr) {
    return Status::InvalidArgument(what + " needs shared files, but this job keeps none");
  }
  FLOE_ASSIGN_OR_RAISE(uint32_t sst_count, in.GetU32());
  for (uint32_t i = 0; i < sst_count; ++i) {
    FLOE_ASSIGN_OR_RAISE(std::string local, in.GetString());
    SharedStateFile file;
    FLOE_ASSIGN_OR_RAISE(file.name, in.GetString());
    FLOE_ASSIGN_OR_RAISE(file.size, in.GetU64());
    FLOE_ASSIGN_OR_RAISE(file.crc32, in.GetU32());
    if (!PlainFileName(local) || !PlainFileName(file.name)) {
      return Status::Corruption(what + ": file name '" + local + "' / '" + file.name +
                                "' is not a plain file name");
    }
    Status st = options_.shared_state->Download(file, (dir / local).string());
    if (st.IsNotFound()) {
      return Status::NotFound(what + " needs shared file '" + file.name +
                              "', which is missing: " + st.message());
    }
    FLOE_RETURN_NOT_OK(st.WithContext(what + ", shared file '" + file.name + "'"));
    if (std::optional<uint64_t> number = SstNumber(local)) (*files)[*number] = file;
  }
  FLOE_ASSIGN_OR_RAISE(uint32_t private_count, in.GetU32());
  for (uint32_t i = 0; i < private_count; ++i) {
    FLOE_ASSIGN_OR_RAISE(std::string name, in.GetString());
    FLOE_ASSIGN_OR_RAISE(std::string content, in.GetBytes());
    if (!PlainFileName(name)) {
      return Status::Corruption(what + ": file name '" + name + "' is not a plain file name");
    }
    FLOE_RETURN_NOT_OK(WriteFile(dir / name, content));
  }
  return Status::OK();
}

Status RocksDbKeyedStateBackend::CopyOwnedGroups(const SnapshotHeader& h,
                                                 const std::vector<uint32_t>& order, Db& from) {
  const uint32_t start = std::max(h.range.start, options_.key_groups.start);
  const uint32_t end = std::min(h.range.end, options_.key_groups.end);
  rocksdb::WriteBatch batch;
  std::unique_ptr<rocksdb::Iterator> rows(from.db->NewIterator(rocksdb::ReadOptions(), from.state));
  std::unique_ptr<rocksdb::Iterator> timers(
      from.db->NewIterator(rocksdb::ReadOptions(), from.timers));
  for (uint32_t g = start; g < end; ++g) {
    FLOE_RETURN_NOT_OK(MarkRestored(g));
    const std::string prefix = GroupPrefix(g);
    for (rows->Seek(prefix); rows->Valid() && rows->key().starts_with(prefix); rows->Next()) {
      std::string_view key = View(rows->key());
      if (key.size() < 6 || GetBe(key, 2, 4) >= order.size()) return BadRow("state");
      std::string row = StateRowPrefix(g, order[GetBe(key, 2, 4)]);
      row.append(key.substr(6));
      batch.Put(db_->state, row, rows->value());
      FLOE_RETURN_NOT_OK(Flush(&batch, false));
    }
    FLOE_RETURN_NOT_OK(Check(rows->status(), "restore"));
    for (timers->Seek(prefix); timers->Valid() && timers->key().starts_with(prefix);
         timers->Next()) {
      batch.Put(db_->timers, timers->key(), "");
      FLOE_RETURN_NOT_OK(Flush(&batch, false));
    }
    FLOE_RETURN_NOT_OK(Check(timers->status(), "restore"));
  }
  return Flush(&batch, true);
}

// --- options ------------------------------------------------------------------------------

// Flink's MemorySize: a number of bytes with an optional unit (b, k/kb, m/mb, g/gb, t/tb and
// the long names; powers of 1024), case-insensitive, whitespace between allowed.
Result<uint64_t> ParseMemorySize(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) != 0) ++i;
  size_t digits = i;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])) != 0)
    ++digits;
  if (digits == i || digits - i > 15)
    return Status::InvalidArgument("expected a size such as '64 mb'");
  const uint64_t n = std::stoull(std::string(text.substr(i, digits - i)));
  std::string unit;
  for (char c : text.substr(digits)) {
    if (std::isspace(static_cast<unsigned char>(c)) == 0)
      unit.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  static const std::vector<std::pair<std::vector<std::string>, int>> kUnits = {
      {{"", "b", "bytes"}, 0},
      {{"k", "kb", "kibibytes"}, 10},
      {{"m", "mb", "mebibytes"}, 20},
      {{"g", "gb", "gibibytes"}, 30},
      {{"t", "tb", "tebibytes"}, 40}};
  for (const auto& [names, shift] : kUnits) {
    if (std::find(names.begin(), names.end(), unit) == names.end()) continue;
    if (shift > 0 && n > (UINT64_MAX >> shift)) return Status::InvalidArgument("too large");
    return n << shift;
  }
  return Status::InvalidArgument("unknown unit '" + unit + "' (b, kb, mb, gb, tb)");
}

Result<double> ParseRatio(const std::string& key, const std::string& value) {
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size() || !(v > 0 && v < 1)) {
    return Status::InvalidArgument("'" + key + "' = '" + value +
                                   "': expected a fraction greater than 0 and less than 1");
  }
  return v;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

constexpr uint64_t kMinMemory = uint64_t{8} << 20;

Status ReadMemoryOption(const std::string& key, const std::string& value, KeyedStateOptions* out) {
  if (key == "state.backend.rocksdb.memory.fixed-per-slot") {
    Result<uint64_t> size = ParseMemorySize(value);
    if (!size.ok()) {
      return Status::InvalidArgument("'" + key + "' = '" + value + "': " + size.status().message());
    }
    if (*size < kMinMemory) {
      return Status::InvalidArgument("'" + key + "' = '" + value + "' is " + std::to_string(*size) +
                                     " bytes; floe needs at least 8 mb per subtask");
    }
    out->rocksdb_memory_bytes = *size;
  } else if (key == "state.backend.rocksdb.memory.managed") {
    if (Lower(value) == "false") {
      return Status::InvalidArgument(
          "'" + key +
          "' = 'false': floe always bounds rocksdb's memory (block cache and "
          "memtables) by 'state.backend.rocksdb.memory.fixed-per-slot'");
    }
    if (Lower(value) != "true") {
      return Status::InvalidArgument("'" + key + "' = '" + value + "': expected true");
    }
  } else if (key == "state.backend.rocksdb.memory.write-buffer-ratio") {
    FLOE_ASSIGN_OR_RAISE(out->rocksdb_write_buffer_ratio, ParseRatio(key, value));
  } else {
    FLOE_ASSIGN_OR_RAISE(out->rocksdb_high_prio_pool_ratio, ParseRatio(key, value));
  }
  return Status::OK();
}

std::shared_ptr<TtlRules> MakeTtlRules(const KeyedStateOptions& o) {
  if (o.ttl.count() <= 0) return nullptr;
  return std::make_shared<TtlRules>(o.ttl.count(),
                                    o.clock != nullptr ? o.clock : SystemClock::Get());
}

}  // namespace
}  // namespace rocksdb_internal

// The backend and its helpers live in rocksdb_internal; the public functions below name them
// unqualified.
namespace {

namespace fs = std::filesystem;
using rocksdb_internal::Db;
using rocksdb_internal::ForgetDir;
using rocksdb_internal::Lower;
using rocksdb_internal::MakeMemory;
using rocksdb_internal::MakeTtlRules;
using rocksdb_internal::OpenDb;
using rocksdb_internal::RandomHex;
using rocksdb_internal::ReadMemoryOption;
using rocksdb_internal::RemoveLeftoversAndRegister;
using rocksdb_internal::RocksDbKeyedStateBackend;
using rocksdb_internal::SafeName;

}  // namespace

Status CompactRocksDbKeyedState(KeyedStateBackend& backend) {
  auto* rocks = dynamic_cast<RocksDbKeyedStateBackend*>(&backend);
  if (rocks == nullptr) {
    return Status::InvalidArgument("keyed state: compaction needs the rocksdb backend");
  }
  return rocks->CompactAll();
}

Status PauseRocksDbBackgroundWork(KeyedStateBackend& backend, bool pause) {
  auto* rocks = dynamic_cast<RocksDbKeyedStateBackend*>(&backend);
  if (rocks == nullptr) {
    return Status::InvalidArgument(
        "keyed state: pausing background work needs the rocksdb backend");
  }
  return rocks->PauseBackgroundWork(pause);
}

std::string DefaultRocksDbLocalDir() {
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  return (tmp / "floe-rocksdb").string();
}

Status ReadRocksDbOptions(const std::map<std::string, std::string>& options,
                          KeyedStateOptions* out) {
  static const std::string kPrefix = "state.backend.rocksdb.";
  static const std::set<std::string> kMemory = {
      "state.backend.rocksdb.memory.fixed-per-slot", "state.backend.rocksdb.memory.managed",
      "state.backend.rocksdb.memory.write-buffer-ratio",
      "state.backend.rocksdb.memory.high-prio-pool-ratio"};
  for (const auto& [key, value] : options) {
    if (key.compare(0, kPrefix.size(), kPrefix) != 0) continue;
    if (kMemory.count(key) > 0) {
      FLOE_RETURN_NOT_OK(ReadMemoryOption(key, value, out));
    } else if (key == "state.backend.rocksdb.localdir") {
      if (value.empty()) return Status::InvalidArgument("'" + key + "' is empty");
      if (value.find_first_of(",;") != std::string::npos) {
        return Status::InvalidArgument("'" + key + "' = '" + value +
                                       "': floe takes one directory (Flink's list of several, "
                                       "one per slot, is not supported)");
      }
      out->rocksdb_local_dir = value;
    } else if (key == "state.backend.rocksdb.memory.partitioned-index-filters") {
      if (Lower(value) != "true") {
        return Status::InvalidArgument("'" + key + "' = '" + value +
                                       "': floe always partitions index and filter blocks; "
                                       "only 'true' is accepted");
      }
    } else if (key == "state.backend.rocksdb.timer-service.factory") {
      if (Lower(value) == "heap") {
        return Status::NotImplemented("'" + key +
                                      "' = 'heap' is not implemented: floe keeps rocksdb timers "
                                      "in rocksdb (the default, 'rocksdb')");
      }
      if (Lower(value) != "rocksdb") {
        return Status::InvalidArgument("'" + key + "' = '" + value + "': expected 'rocksdb'");
      }
    } else {
      return Status::InvalidArgument(
          "'" + key +
          "' is not a rocksdb option floe honours (it reads localdir, memory.fixed-per-slot, "
          "memory.managed, memory.write-buffer-ratio, memory.high-prio-pool-ratio, "
          "memory.partitioned-index-filters, timer-service.factory); refused rather than "
          "ignored");
    }
  }
  return Status::OK();
}

Result<std::unique_ptr<KeyedStateBackend>> MakeRocksDbKeyedStateBackend(KeyedStateOptions options) {
  const fs::path base =
      options.rocksdb_local_dir.empty() ? DefaultRocksDbLocalDir() : options.rocksdb_local_dir;
  std::error_code ec;
  fs::create_directories(base, ec);
  if (ec) {
    return Status::IOError("'state.backend.rocksdb.localdir' = '" + base.string() +
                           "': cannot create it: " + ec.message());
  }
  const std::string prefix = SafeName(options.task_name) + "-" + RandomHex();
  const fs::path dir = base / ("floe-" + std::to_string(getpid()) + "-" + prefix);
  RemoveLeftoversAndRegister(base, dir.string());
  fs::create_directories(dir / "db", ec);
  Result<std::unique_ptr<Db>> db =
      ec ? Status::IOError("rocksdb keyed state: cannot create '" + dir.string() +
                           "': " + ec.message())
         : OpenDb((dir / "db").string(), dir.string(), MakeMemory(options), MakeTtlRules(options));
  if (!db.ok()) {
    fs::remove_all(dir, ec);
    ForgetDir(dir.string());
    return db.status();
  }
  (*db)->registered_dir = true;
  (*db)->file_prefix = prefix;
  return std::unique_ptr<KeyedStateBackend>(
      std::make_unique<RocksDbKeyedStateBackend>(std::move(options), std::move(*db)));
}

}  // namespace floe::runtime

#pragma once

// Keyed state and timers for operators (Flink's keyed state backend, hashmap flavour).
//
// Why bytes: the backend stores keys, namespaces and values as serialized bytes, and the
// operator owns the encodings. That keeps this interface free of templates and row types, and a
// RocksDB backend (which can only hold bytes) can implement the same interface later; the heap
// backend pays one copy per write for it.
//
// Scope: every state access is under the current key (bytes plus the key-group it hashes to)
// and the current namespace (bytes; windows use one per window, "" otherwise). Timers are
// per (key, namespace) too. Snapshots are cut by key group (Flink's max parallelism), the unit
// a later rescale moves; see keyed_state.cc for the snapshot layout.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/common/status.h"
#include "floe/runtime/clock.h"
#include "floe/runtime/ids.h"
#include "floe/runtime/operator.h"
#include "floe/runtime/state.h"
#include "floe/runtime/timer_service.h"

namespace floe::runtime {

enum class StateKind : uint8_t { kValue = 1, kList = 2, kMap = 3, kReducing = 4, kAggregating = 5 };
std::string_view StateKindName(StateKind kind);

// Combines two values into one (ReducingState): *out = reduce(accumulated, added).
using ReduceFunction =
    std::function<Status(std::string_view accumulated, std::string_view added, std::string* out)>;

// AggregatingState's functions, on serialized accumulators (Flink's AggregateFunction).
struct AggregateFunction {
  // A fresh accumulator for a scope that has none.
  std::function<Status(std::string* acc)> create;
  // Folds one input into *acc.
  std::function<Status(std::string_view input, std::string* acc)> add;
  // What Get returns for an accumulator; unset: Get returns the accumulator itself.
  std::function<Status(std::string_view acc, std::string* out)> result;
  // Folds accumulator `other` into *acc; needed only for MergeNamespaces (session windows).
  std::function<Status(std::string_view other, std::string* acc)> merge;
};

// What an operator declares for each state, usually in Open. `name` is unique per operator and
// keys the state in snapshots, so it must not change between a job and its restore.
struct StateDescriptor {
  std::string name;
  StateKind kind = StateKind::kValue;
  // Subject to KeyedStateOptions::ttl (`table.exec.state.ttl`). Set it for non-window state
  // (group aggregates, joins); window state is purged by its own timers and leaves it unset.
  bool ttl = false;
  ReduceFunction reduce;        // kReducing only
  AggregateFunction aggregate;  // kAggregating only
};

// Handle of a registered state, valid for the backend that returned it.
struct StateId {
  uint32_t value = 0;
  bool operator==(const StateId&) const = default;
};

struct KeyedStateOptions {
  // `state.backend.type`: "hashmap" (heap) or "rocksdb" (rocksdb_keyed_state.h).
  std::string backend = "hashmap";
  // The subtask's key groups and the job's max parallelism (TaskInfo::key_groups,
  // TaskInfo::max_parallelism).
  KeyGroupRange key_groups{0, 128};
  uint32_t max_parallelism = 128;
  // `table.exec.state.ttl`: state with StateDescriptor::ttl expires this long after its last
  // write (Flink's OnCreateAndWrite + NeverReturnExpired); 0 = never.
  std::chrono::milliseconds ttl{0};
  // `execution.checkpointing.incremental`: checkpoints (not savepoints) may be written in the
  // backend's own layout, uploading only what changed since the last checkpoint to
  // `shared_state`.
  bool incremental = false;
  // Where incremental snapshots upload their shared files and restores download them from;
  // null when the job keeps no checkpoints on storage. Not owned; outlives the backend.
  SharedStateStore* shared_state = nullptr;
  // rocksdb only (`state.backend.rocksdb.*`, docs/state.md). `localdir`: the parent of the
  // backend's working directory; empty = DefaultRocksDbLocalDir().
  std::string rocksdb_local_dir;
  // `memory.fixed-per-slot`, per subtask in floe: block cache and memtables of one backend.
  uint64_t rocksdb_memory_bytes = uint64_t{64} << 20;
  double rocksdb_write_buffer_ratio = 0.5;    // `memory.write-buffer-ratio`
  double rocksdb_high_prio_pool_ratio = 0.1;  // `memory.high-prio-pool-ratio`
  // A keyed job scaled out by Kafka partition: every key group comes with its claim
  // (ClaimChange), so a restore from the instance's own checkpoint leaves the keyed state empty.
  bool from_claims = false;
  // Names the working directory and the shared files (TaskInfo::name()).
  std::string task_name;
  // Wall-clock time for TTL and processing-time timers; null = SystemClock. Must be wall-clock
  // (epoch based), not monotonic: both are checkpointed and compared after a restore.
  const Clock* clock = nullptr;

  // Reads `state.backend.type` (else Flink's deprecated `state.backend`), `table.exec.state.ttl`;
  // `state.backend.rocksdb.*`; the key groups come from `task`. Unknown backends and
  // options are InvalidArgument.
  static Result<KeyedStateOptions> FromOptions(const std::map<std::string, std::string>& options,
                                               const TaskInfo& task);
};

// A consistent view of one backend's keyed state and timers, taken at a barrier by
// KeyedStateBackend::TakeSnapshot. It owns what it needs: it stays valid while the backend
// changes, and after the backend is destroyed.
class KeyedStateSnapshot {
 public:
  virtual ~KeyedStateSnapshot() = default;
  // Appends the snapshot to `out`. Called at most once, on any thread, concurrently with the
  // backend's own thread. Expired TTL entries are left out.
  // `shared` null: the canonical layout (see keyed_state.cc), which every backend restores
  // (savepoints, full checkpoints). `shared` set (an incremental checkpoint, when the backend
  // was made with KeyedStateOptions::incremental): the backend's own layout, which may list
  // files uploaded to KeyedStateOptions::shared_state now or by earlier checkpoints; every
  // file the snapshot needs is appended to *shared.
  virtual Status WriteTo(StateWriter& out, std::vector<SharedStateFile>* shared = nullptr) = 0;
  // The key groups the view covers.
  virtual KeyGroupRange key_groups() const = 0;
};

class ValueState;
class ListState;
class MapState;
class ReducingState;
class AggregatingState;

// KeyedStateBackend holds one keyed subtask's state and timers. Lifecycle: Make (in the
// operator's Open) -> register states -> [Restore] -> {SetCurrentKey / SetCurrentNamespace,
// state access, timers, Advance*, Snapshot}* . Not thread-safe: the subtask's thread only.
// Errors: calling an operation of the wrong kind, or accessing state before SetCurrentKey, is
// InvalidArgument; a failing user function's status is returned as is.
class KeyedStateBackend {
 public:
  // The backend named by options.backend. REQUIRES: key_groups within [0, max_parallelism).
  static Result<std::unique_ptr<KeyedStateBackend>> Make(KeyedStateOptions options);
  virtual ~KeyedStateBackend() = default;

  // --- scope ---------------------------------------------------------------------------------
  // `key_hash` must be the hash the HASH partitioner routed the record by (HashKeyRow of the
  // same row and key columns), so the state lands in the record's key group. A key group outside
  // this subtask's range (a record routed by other columns, or another max parallelism) is
  // InvalidArgument. The namespace is left unchanged.
  virtual Status SetCurrentKey(std::string_view key, uint64_t key_hash) = 0;
  // The same with the key group given instead of hashed: in a job scaled out by Kafka partition
  // the group is the row's source partition (docs/architecture.md, "Keyed jobs"). A group
  // outside this subtask's range is InvalidArgument.
  virtual Status SetCurrentKeyInGroup(std::string_view key, uint32_t key_group) = 0;
  virtual void SetCurrentNamespace(std::string_view ns) = 0;
  virtual std::string_view current_key() const = 0;
  virtual std::string_view current_namespace() const = 0;
  virtual uint32_t current_key_group() const = 0;

  // --- states --------------------------------------------------------------------------------
  // Registers a state, or returns the id of the one of that name (restored state is kept by
  // name until registered; a kind differing from the restored one is InvalidArgument).
  virtual Result<StateId> Register(StateDescriptor descriptor) = 0;
  Result<ValueState> GetValueState(std::string name, bool ttl = false);
  Result<ListState> GetListState(std::string name, bool ttl = false);
  Result<MapState> GetMapState(std::string name, bool ttl = false);
  Result<ReducingState> GetReducingState(std::string name, ReduceFunction reduce, bool ttl = false);
  Result<AggregatingState> GetAggregatingState(std::string name, AggregateFunction aggregate,
                                               bool ttl = false);

  // Byte-level operations under the current key and namespace (the typed handles below wrap
  // them). Get: value / reducing (the reduced value) / aggregating (result of the accumulator);
  // false when absent or expired.
  virtual Result<bool> Get(StateId id, std::string* out) = 0;
  virtual Status Put(StateId id, std::string_view value) = 0;  // value
  // list: append; reducing: reduce into the value; aggregating: add to the accumulator.
  virtual Status Add(StateId id, std::string_view value) = 0;
  virtual Status GetList(StateId id, std::vector<std::string>* out) = 0;  // in append order
  virtual Status UpdateList(StateId id, std::vector<std::string> values) = 0;
  virtual Result<bool> MapGet(StateId id, std::string_view user_key, std::string* out) = 0;
  virtual Status MapPut(StateId id, std::string_view user_key, std::string_view value) = 0;
  virtual Status MapRemove(StateId id, std::string_view user_key) = 0;
  // Every live entry, ordered by user key bytes.
  virtual Status MapEntries(StateId id, std::vector<std::pair<std::string, std::string>>* out) = 0;
  virtual Status Clear(StateId id) = 0;  // any kind
  // Folds the state of namespaces `sources` into `target` for the current key and clears the
  // sources (merging session windows): list appends, reducing reduces, aggregating merges.
  // Value and map state cannot merge (InvalidArgument). The current namespace is unchanged.
  virtual Status MergeNamespaces(StateId id, std::string_view target,
                                 const std::vector<std::string>& sources) = 0;

  // --- timers --------------------------------------------------------------------------------
  // Timers of the current key and namespace, microseconds (see Timer). Registering an existing
  // timer again does nothing; deleting a missing one does nothing.
  virtual Status RegisterTimer(TimeDomain domain, int64_t timestamp) = 0;
  virtual Status DeleteTimer(TimeDomain domain, int64_t timestamp) = 0;
  // Called for each due timer with the current key and namespace set to the timer's. It may
  // read and write state and register timers (one due already fires in the same call).
  using TimerHandler = std::function<Status(const Timer& timer)>;
  // Fires event-time timers with timestamp <= watermark, in timestamp order, at most
  // `max_timers` of them, and returns whether due timers remain (a later call with the same
  // watermark goes on where this one stopped). Operators fire in slices so the runtime serves
  // barriers between them (Operator::ContinueWork). Afterwards the current key is the last
  // fired timer's: set it again before accessing state.
  virtual Result<bool> FireEventTimers(Watermark watermark, const TimerHandler& handler,
                                       size_t max_timers) = 0;
  // Every due event-time timer at once.
  Status AdvanceWatermark(Watermark watermark, const TimerHandler& handler);
  // Fires processing-time timers with timestamp <= CurrentProcessingTime().
  virtual Status AdvanceProcessingTime(const TimerHandler& handler) = 0;
  virtual std::optional<int64_t> NextTimer(TimeDomain domain) const = 0;
  virtual int64_t CurrentProcessingTime() const = 0;  // clock ms x 1000
  // Highest watermark passed to AdvanceWatermark (INT64_MIN before the first). Not snapshotted:
  // operators keep their watermark in their own state.
  virtual Watermark current_watermark() const = 0;

  // --- checkpoints ---------------------------------------------------------------------------
  // The synchronous part of a checkpoint (Flink's sync phase), called at the barrier: a
  // consistent view of every key group's state and timers as of now, which later changes to
  // the backend do not affect. It must be cheap (copy-on-write, a RocksDB snapshot): the
  // stream waits for it. Writing the view out is the asynchronous part
  // (KeyedStateSnapshot::WriteTo), done on another thread while records flow.
  virtual Result<std::unique_ptr<KeyedStateSnapshot>> TakeSnapshot() = 0;
  // Both parts at once, on this thread (tests, tools).
  Status Snapshot(StateWriter& out);
  // Adds the key groups of a snapshot written by any backend (the layout is canonical) that lie
  // in this subtask's range and skips the others without decoding them. A rescaled subtask
  // calls it once for every old snapshot whose range overlaps its own. Another max parallelism
  // is InvalidArgument (key groups would not line up); a key group restored twice is
  // Corruption. REQUIRES: before any state access or timer.
  virtual Status Restore(StateReader& in) = 0;
  // Removes every state entry and timer of one key group (a partition this instance no longer
  // holds). A group outside the range is InvalidArgument.
  virtual Status DropKeyGroup(uint32_t key_group) = 0;
  // Replaces one key group with its section of a canonical snapshot (a partition's state, taken
  // over from the instance that held it): unlike Restore, at any time, after state access too.
  // A snapshot without the group leaves it empty; the other groups are skipped undecoded. An
  // incremental rocksdb snapshot is InvalidArgument (its files hold every group).
  virtual Status RestoreKeyGroup(StateReader& in, uint32_t key_group) = 0;

  // Live (key, namespace) scopes over all states, expired ones included until cleaned.
  virtual size_t num_entries() const = 0;
  virtual const KeyedStateOptions& options() const = 0;
};

// Typed handles: copyable views of one registered state, valid while the backend lives. All
// calls act on the backend's current key and namespace.
class ValueState {
 public:
  ValueState() = default;
  ValueState(KeyedStateBackend* backend, StateId id) : backend_(backend), id_(id) {}
  Result<bool> Get(std::string* out) const { return backend_->Get(id_, out); }
  Status Update(std::string_view value) const { return backend_->Put(id_, value); }
  Status Clear() const { return backend_->Clear(id_); }
  StateId id() const { return id_; }

 private:
  KeyedStateBackend* backend_ = nullptr;
  StateId id_;
};

class ListState {
 public:
  ListState() = default;
  ListState(KeyedStateBackend* backend, StateId id) : backend_(backend), id_(id) {}
  Status Get(std::vector<std::string>* out) const { return backend_->GetList(id_, out); }
  Status Add(std::string_view value) const { return backend_->Add(id_, value); }
  Status Update(std::vector<std::string> values) const {
    return backend_->UpdateList(id_, std::move(values));
  }
  Status Clear() const { return backend_->Clear(id_); }
  StateId id() const { return id_; }

 private:
  KeyedStateBackend* backend_ = nullptr;
  StateId id_;
};

class MapState {
 public:
  MapState() = default;
  MapState(KeyedStateBackend* backend, StateId id) : backend_(backend), id_(id) {}
  Result<bool> Get(std::string_view user_key, std::string* out) const {
    return backend_->MapGet(id_, user_key, out);
  }
  Status Put(std::string_view user_key, std::string_view value) const {
    return backend_->MapPut(id_, user_key, value);
  }
  Status Remove(std::string_view user_key) const { return backend_->MapRemove(id_, user_key); }
  Status Entries(std::vector<std::pair<std::string, std::string>>* out) const {
    return backend_->MapEntries(id_, out);
  }
  Status Clear() const { return backend_->Clear(id_); }
  StateId id() const { return id_; }

 private:
  KeyedStateBackend* backend_ = nullptr;
  StateId id_;
};

class ReducingState {
 public:
  ReducingState() = default;
  ReducingState(KeyedStateBackend* backend, StateId id) : backend_(backend), id_(id) {}
  Result<bool> Get(std::string* out) const { return backend_->Get(id_, out); }
  Status Add(std::string_view value) const { return backend_->Add(id_, value); }
  Status Clear() const { return backend_->Clear(id_); }
  StateId id() const { return id_; }

 private:
  KeyedStateBackend* backend_ = nullptr;
  StateId id_;
};

class AggregatingState {
 public:
  AggregatingState() = default;
  AggregatingState(KeyedStateBackend* backend, StateId id) : backend_(backend), id_(id) {}
  Result<bool> Get(std::string* out) const { return backend_->Get(id_, out); }
  Status Add(std::string_view input) const { return backend_->Add(id_, input); }
  Status Clear() const { return backend_->Clear(id_); }
  StateId id() const { return id_; }

 private:
  KeyedStateBackend* backend_ = nullptr;
  StateId id_;
};

}  // namespace floe::runtime

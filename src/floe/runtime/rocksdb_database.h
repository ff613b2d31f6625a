#pragma once

// The rocksdb keyed state backend's database: the row layout and its encoding, the merge
// operator and TTL compaction filter, the memory budget, opening a database, and the working
// directory. Internal to the rocksdb backend: only its .cc files include this (and through it
// RocksDB's headers).

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/write_buffer_manager.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/mutex.h"
#include "floe/common/status.h"
#include "floe/runtime/keyed_state.h"

// RocksDbKeyedStateBackend: `state.backend.type: rocksdb`.
//
// One RocksDB per backend in `<localdir>/floe-<pid>-<task>-<random>/db`, two column families:
//
//   default (state):  u16 key_group BE | u32 state_id BE | esc(key) | esc(ns) [| user_key]
//                     value/reducing/aggregating: i64 written_ms | value bytes
//                     list: concatenated elements, each u32 length | i64 written_ms | bytes
//                     map: one row per user key (user_key raw after the scope): i64 | bytes
//   timers:           u16 key_group BE | u8 domain | u64 BE (timestamp ^ sign bit) |
//                     esc(key) | esc(ns)                          (empty value)
//
//   esc(x) = x with every 0x00 written 0x00 0xff, then 0x00 0x01: prefix-free and
//   order-preserving, so a map's rows are one contiguous range per scope in user-key order and
//   timers sort as the heap's (timestamp, key, namespace).
//
// Why key group first: one key group is one contiguous range (a snapshot section, a rescale's
// copy), and iterating the state family visits groups and states in the canonical layout's
// order (keyed_state.cc). Timers of a group sort by time, and the backend keeps each group's
// earliest timestamp in memory (Flink's per-key-group queue heads), so the next due timer is one
// seek. state_id is the index of the state in this backend's list (names live in the snapshots,
// not in the database); a rescaled restore renumbers them while copying, a restore of the same
// range adopts the downloaded database when the numbers already match.
//
// Every value carries its write time, TTL or not (8 bytes), so a state may gain TTL across a
// restore; expired rows go when RocksDB compacts (TtlCompactionFilter). The WAL is off (Flink
// does the same): checkpoints are the durability.

namespace floe::runtime::rocksdb_internal {

namespace fs = std::filesystem;

// --- encoding -----------------------------------------------------------------------------

void PutBe(std::string* out, uint64_t v, int bytes);
uint64_t GetBe(std::string_view in, size_t pos, int bytes);
void PutLe(std::string* out, uint64_t v, int bytes);
uint64_t GetLe(std::string_view in, size_t pos, int bytes);
void PutEscaped(std::string* out, std::string_view v);
// Reads one PutEscaped field from the front of *in. False when malformed.
bool GetEscaped(std::string_view* in, std::string* out);
std::string Scope(std::string_view key, std::string_view ns);
std::string GroupPrefix(uint32_t key_group);
std::string StateRowPrefix(uint32_t key_group, uint32_t state);
std::string TimerKey(TimeDomain domain, int64_t ts, uint32_t key_group, std::string_view key,
                     std::string_view ns);
bool DecodeTimerKey(std::string_view in, Timer* t);

// A value with its write time.
struct Stamped {
  std::string_view bytes;
  int64_t written_ms = 0;
};

std::string EncodeStamped(int64_t ms, std::string_view v);
bool DecodeStamped(std::string_view in, Stamped* out);
void AppendElement(std::string* out, int64_t ms, std::string_view v);
bool DecodeElements(std::string_view in, std::vector<Stamped>* out);

// 12 for "000012.sst"; nullopt for any other name.
std::optional<uint64_t> SstNumber(const std::string& file_name);

std::string_view View(const rocksdb::Slice& s);
Status Check(const rocksdb::Status& st, std::string_view what);
Status BadRow(std::string_view family);

// What the TTL compaction filter needs. Shared by the backend (which registers states), its
// databases' filters (compaction threads) and its snapshots (which hold the filter's clock back).
class TtlRules {
 public:
  TtlRules(int64_t ttl_ms, const Clock* clock) : ttl_ms_(ttl_ms), clock_(clock) {}

  // kinds[id]: the kind of state `id` if it has TTL, nullopt otherwise.
  void SetStates(std::vector<std::optional<StateKind>> kinds) {
    MutexLock lock(mu_);
    kinds_ = std::move(kinds);
  }
  // While a snapshot taken at `now_ms` is not yet written, nothing that was live then is
  // filtered: the snapshot reads it after compactions may have run.
  void Pin(int64_t now_ms) {
    MutexLock lock(mu_);
    pinned_.insert(now_ms);
  }
  void Unpin(int64_t now_ms) {
    MutexLock lock(mu_);
    pinned_.erase(pinned_.find(now_ms));
  }
  // The kind of state `id` if it expires, and the time to expire it against.
  std::optional<StateKind> Lookup(uint32_t id, int64_t* now_ms) {
    const int64_t now = clock_->NowMillis();
    MutexLock lock(mu_);
    if (id >= kinds_.size() || !kinds_[id]) return std::nullopt;
    *now_ms = pinned_.empty() ? now : std::min(now, *pinned_.begin());
    return kinds_[id];
  }
  int64_t ttl_ms() const { return ttl_ms_; }

 private:
  const int64_t ttl_ms_;
  const Clock* clock_;
  Mutex mu_;
  std::vector<std::optional<StateKind>> kinds_ FLOE_GUARDED_BY(mu_);
  std::multiset<int64_t> pinned_ FLOE_GUARDED_BY(mu_);
};

class TtlCompactionFilter;

// --- the database and its directory ------------------------------------------------------

// The memory budget (Flink's managed-memory scheme): one LRU block cache of the whole budget,
// with memtables charged to it through a WriteBufferManager of `write_buffer_ratio` of it, and
// index and filter blocks cached there too. Not strict (as Flink): a read may briefly exceed it
// rather than fail.
struct Memory {
  std::shared_ptr<rocksdb::Cache> cache;
  std::shared_ptr<rocksdb::WriteBufferManager> write_buffers;
  size_t write_buffer_bytes = 0;
};

Memory MakeMemory(const KeyedStateOptions& o);

// Removes `dir` from the working directories of this process's backends.
void ForgetDir(const std::string& dir);

// An open database. Shared by the backend and its snapshots (which outlive it); the last owner
// closes it and removes `remove_dir`.
struct Db {
  ~Db();

  std::string path;
  std::string remove_dir;
  bool registered_dir = false;  // remove_dir is a backend's working directory (g_dirs)
  Memory memory;
  // TTL: null when state never expires. The filter must outlive `db`.
  std::shared_ptr<TtlRules> ttl;
  std::unique_ptr<TtlCompactionFilter> ttl_filter;
  rocksdb::DB* db = nullptr;
  rocksdb::ColumnFamilyHandle* state = nullptr;
  rocksdb::ColumnFamilyHandle* timers = nullptr;

  // Incremental snapshots: shared file names are `<file_prefix>-<sst number>-<snapshot>.sst`.
  std::string file_prefix;
  std::atomic<uint64_t> next_dir{0};
  Mutex mu;
  // SST files uploaded by snapshots whose WriteTo finished OK, by SST file number; later
  // snapshots list them again instead of uploading. (SST files are immutable and their numbers
  // are never reused within one database.)
  std::map<uint64_t, SharedStateFile> uploaded FLOE_GUARDED_BY(mu);
};

// `ttl`: the rules of the backend that works on the database (null: no expiry, or a database
// opened only to be copied from).
Result<std::unique_ptr<Db>> OpenDb(const std::string& path, std::string remove_dir, Memory memory,
                                   std::shared_ptr<TtlRules> ttl);

// Removes the working directories `floe-<pid>-<task>-<hex>` of processes that no longer run (killed
// before their backends could remove them), and registers `mine` (before it exists, under the same
// lock, so that another backend's scan never takes it for a leftover).
void RemoveLeftoversAndRegister(const fs::path& base, const std::string& mine);

std::string SafeName(std::string_view s);
std::string RandomHex();
Result<std::string> ReadFile(const fs::path& path);
Status WriteFile(const fs::path& path, std::string_view content);

}  // namespace floe::runtime::rocksdb_internal

#include "floe/runtime/rocksdb_keyed_state.h"

#include <rocksdb/cache.h>
#include <rocksdb/compaction_filter.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <rocksdb/write_buffer_manager.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "floe/common/log.h"
#include "floe/common/mutex.h"
#include "floe/runtime/keyed_state_checks.h"
#include "floe/runtime/partitioner.h"

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
//
// Native (incremental) snapshot layout, written when WriteTo gets `shared`:
//   u32 2 | string "rocksdb" | u32 max_parallelism | u32 start | u32 end |
//   u32 state_count x { string name, u8 kind, bool ttl }        (as in the canonical header)
//   u32 sst_count x { string local_name, string shared_name, u64 size, u32 crc32 }
//   u32 private_count x { string file_name, bytes content }      (MANIFEST, CURRENT, OPTIONS)

namespace floe::runtime {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kCanonicalVersion = 1;
constexpr uint32_t kNativeVersion = 2;
constexpr const char* kTimersFamily = "timers";
constexpr uint64_t kSignBit = uint64_t{1} << 63;
// How long an incremental snapshot waits for the barrier's memtables to flush.
constexpr int kFlushWaitMs = 60'000;

// --- encoding -----------------------------------------------------------------------------

void PutBe(std::string* out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetBe(std::string_view in, size_t pos, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<uint8_t>(in[pos + i]);
  return v;
}

void PutLe(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetLe(std::string_view in, size_t pos, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(in[pos + i]);
  return v;
}

void PutEscaped(std::string* out, std::string_view v) {
  for (char c : v) {
    out->push_back(c);
    if (c == '\0') out->push_back('\xff');
  }
  out->push_back('\0');
  out->push_back('\1');
}

// Reads one PutEscaped field from the front of *in. False when malformed.
bool GetEscaped(std::string_view* in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in->size(); ++i) {
    if ((*in)[i] != '\0') {
      out->push_back((*in)[i]);
      continue;
    }
    if (i + 1 >= in->size()) return false;
    if ((*in)[i + 1] == '\1') {
      in->remove_prefix(i + 2);
      return true;
    }
    if ((*in)[i + 1] != '\xff') return false;
    out->push_back('\0');
    ++i;
  }
  return false;
}

std::string Scope(std::string_view key, std::string_view ns) {
  std::string out;
  PutEscaped(&out, key);
  PutEscaped(&out, ns);
  return out;
}

std::string GroupPrefix(uint32_t key_group) {
  std::string out;
  PutBe(&out, key_group, 2);
  return out;
}

std::string StateRowPrefix(uint32_t key_group, uint32_t state) {
  std::string out = GroupPrefix(key_group);
  PutBe(&out, state, 4);
  return out;
}

std::string TimerKey(TimeDomain domain, int64_t ts, uint32_t key_group, std::string_view key,
                     std::string_view ns) {
  std::string out = GroupPrefix(key_group);
  out.push_back(static_cast<char>(domain));
  PutBe(&out, static_cast<uint64_t>(ts) ^ kSignBit, 8);
  PutEscaped(&out, key);
  PutEscaped(&out, ns);
  return out;
}

bool DecodeTimerKey(std::string_view in, Timer* t) {
  if (in.size() < 11) return false;
  t->key_group = static_cast<uint32_t>(GetBe(in, 0, 2));
  t->domain = static_cast<TimeDomain>(in[2]);
  t->timestamp = static_cast<int64_t>(GetBe(in, 3, 8) ^ kSignBit);
  in.remove_prefix(11);
  return GetEscaped(&in, &t->key) && GetEscaped(&in, &t->ns) && in.empty();
}

// A value with its write time.
struct Stamped {
  std::string_view bytes;
  int64_t written_ms = 0;
};

std::string EncodeStamped(int64_t ms, std::string_view v) {
  std::string out;
  out.reserve(8 + v.size());
  PutLe(&out, static_cast<uint64_t>(ms), 8);
  out.append(v);
  return out;
}

bool DecodeStamped(std::string_view in, Stamped* out) {
  if (in.size() < 8) return false;
  out->written_ms = static_cast<int64_t>(GetLe(in, 0, 8));
  out->bytes = in.substr(8);
  return true;
}

void AppendElement(std::string* out, int64_t ms, std::string_view v) {
  PutLe(out, v.size(), 4);
  PutLe(out, static_cast<uint64_t>(ms), 8);
  out->append(v);
}

bool DecodeElements(std::string_view in, std::vector<Stamped>* out) {
  out->clear();
  while (!in.empty()) {
    if (in.size() < 12) return false;
    size_t n = GetLe(in, 0, 4);
    if (in.size() - 12 < n) return false;
    out->push_back(Stamped{in.substr(12, n), static_cast<int64_t>(GetLe(in, 4, 8))});
    in.remove_prefix(12 + n);
  }
  return true;
}

// 12 for "000012.sst"; nullopt for any other name.
std::optional<uint64_t> SstNumber(const std::string& file_name) {
  const size_t dot = file_name.size() >= 4 ? file_name.size() - 4 : 0;
  if (dot == 0 || dot > 18 || file_name.compare(dot, 4, ".sst") != 0) return std::nullopt;
  for (size_t i = 0; i < dot; ++i) {
    if (std::isdigit(static_cast<unsigned char>(file_name[i])) == 0) return std::nullopt;
  }
  return std::stoull(file_name.substr(0, dot));
}

std::string_view View(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

Status Check(const rocksdb::Status& st, std::string_view what) {
  if (st.ok()) return Status::OK();
  return Status::IOError("rocksdb keyed state: " + std::string(what) + ": " + st.ToString());
}

Status BadRow(std::string_view family) {
  return Status::Corruption("rocksdb keyed state: malformed row in the " + std::string(family) +
                            " column family");
}

// Lists use a merge operator: ListState::Add (every record of a window with a process
// function) is then one blind write, where read-modify-write would rewrite the whole list per
// element (quadratic in the list's length). Elements are self-delimiting, so merging is
// concatenation.
class ListAppendOperator final : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice&, const rocksdb::Slice* existing, const rocksdb::Slice& value,
             std::string* new_value, rocksdb::Logger*) const override {
    new_value->clear();
    if (existing != nullptr) new_value->assign(existing->data(), existing->size());
    new_value->append(value.data(), value.size());
    return true;
  }
  const char* Name() const override { return "floe.ListAppend"; }
};

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

// Removes expired TTL state when RocksDB compacts it (Flink's FlinkCompactionFilter): values and
// map entries written longer than the TTL ago, and expired list elements (the rest of the list
// stays). Reads already hide expired state; this gives the disk space back.
class TtlCompactionFilter final : public rocksdb::CompactionFilter {
 public:
  explicit TtlCompactionFilter(std::shared_ptr<TtlRules> rules) : rules_(std::move(rules)) {}

  bool Filter(int, const rocksdb::Slice& key, const rocksdb::Slice& value, std::string* new_value,
              bool* value_changed) const override {
    if (key.size() < 6) return false;
    int64_t now = 0;
    std::optional<StateKind> kind =
        rules_->Lookup(static_cast<uint32_t>(GetBe(View(key), 2, 4)), &now);
    if (!kind) return false;
    const int64_t ttl = rules_->ttl_ms();
    if (*kind != StateKind::kList) {
      Stamped v;
      return DecodeStamped(View(value), &v) && v.written_ms + ttl <= now;
    }
    std::vector<Stamped> elements;
    if (!DecodeElements(View(value), &elements)) return false;
    std::string kept;
    size_t n = 0;
    for (const Stamped& e : elements) {
      if (e.written_ms + ttl > now) {
        AppendElement(&kept, e.written_ms, e.bytes);
        ++n;
      }
    }
    if (n == 0) return true;
    if (n < elements.size()) {
      *new_value = std::move(kept);
      *value_changed = true;
    }
    return false;
  }
  const char* Name() const override { return "floe.TtlCompactionFilter"; }

 private:
  std::shared_ptr<TtlRules> rules_;
};

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

Memory MakeMemory(const KeyedStateOptions& o) {
  Memory m;
  m.cache = rocksdb::NewLRUCache(o.rocksdb_memory_bytes, -1, /*strict_capacity_limit=*/false,
                                 o.rocksdb_high_prio_pool_ratio);
  m.write_buffer_bytes = static_cast<size_t>(static_cast<double>(o.rocksdb_memory_bytes) *
                                             o.rocksdb_write_buffer_ratio);
  m.write_buffers = std::make_shared<rocksdb::WriteBufferManager>(m.write_buffer_bytes, m.cache);
  return m;
}

// Working directories of this process's backends (full paths). One with this process's pid that
// is not listed here is a leftover of an earlier process that had the same pid (a container
// restarted after a kill often runs floe under the same pid again).
Mutex g_dirs_mu;
std::set<std::string> g_dirs FLOE_GUARDED_BY(g_dirs_mu);

void ForgetDir(const std::string& dir) {
  MutexLock lock(g_dirs_mu);
  g_dirs.erase(dir);
}

// An open database. Shared by the backend and its snapshots (which outlive it); the last owner
// closes it and removes `remove_dir`.
struct Db {
  ~Db() {
    if (db != nullptr) {
      for (rocksdb::ColumnFamilyHandle* h : {state, timers}) {
        if (h != nullptr) db->DestroyColumnFamilyHandle(h);
      }
      db->Close();
      delete db;
    }
    std::error_code ec;
    if (!remove_dir.empty()) fs::remove_all(remove_dir, ec);
    if (registered_dir) ForgetDir(remove_dir);
  }

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

rocksdb::ColumnFamilyOptions FamilyOptions(const Memory& memory) {
  rocksdb::ColumnFamilyOptions cf;
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = memory.cache;
  table.cache_index_and_filter_blocks = true;
  table.cache_index_and_filter_blocks_with_high_priority = true;
  table.pin_l0_filter_and_index_blocks_in_cache = true;
  // Partitioned index and filters (Flink's memory.partitioned-index-filters): a point read
  // loads one small filter partition instead of a whole file's filter, which a budget smaller
  // than the state's filters would otherwise evict and read again on every lookup.
  table.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
  table.partition_filters = true;
  table.pin_top_level_index_and_filter = true;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  cf.merge_operator = std::make_shared<ListAppendOperator>();
  // Two families share the write buffer budget; smaller memtables flush before it is exceeded.
  cf.write_buffer_size = std::max<size_t>(memory.write_buffer_bytes / 4, 1 << 20);
  return cf;
}

// `ttl`: the rules of the backend that works on the database (null: no expiry, or a database
// opened only to be copied from).
Result<std::unique_ptr<Db>> OpenDb(const std::string& path, std::string remove_dir, Memory memory,
                                   std::shared_ptr<TtlRules> ttl) {
  auto out = std::make_unique<Db>();
  out->path = path;
  out->remove_dir = std::move(remove_dir);
  out->memory = std::move(memory);
  out->ttl = std::move(ttl);
  if (out->ttl) out->ttl_filter = std::make_unique<TtlCompactionFilter>(out->ttl);
  rocksdb::DBOptions o;
  o.create_if_missing = true;
  o.create_missing_column_families = true;
  o.write_buffer_manager = out->memory.write_buffers;
  o.info_log_level = rocksdb::InfoLogLevel::HEADER_LEVEL;
  o.keep_log_file_num = 1;
  o.avoid_flush_during_shutdown = true;
  rocksdb::ColumnFamilyOptions cf = FamilyOptions(out->memory);
  rocksdb::ColumnFamilyOptions state_cf = cf;
  state_cf.compaction_filter = out->ttl_filter.get();
  std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, state_cf}, {kTimersFamily, cf}};
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  FLOE_RETURN_NOT_OK(Check(rocksdb::DB::Open(o, path, families, &handles, &out->db),
                           "cannot open '" + path + "'"));
  out->state = handles[0];
  out->timers = handles[1];
  return out;
}

bool ProcessRuns(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

// Removes the working directories `floe-<pid>-<task>-<hex>` of processes that no longer run (killed
// before their backends could remove them), and registers `mine` (before it exists, under the same
// lock, so that another backend's scan never takes it for a leftover).
void RemoveLeftoversAndRegister(const fs::path& base, const std::string& mine) {
  MutexLock lock(g_dirs_mu);
  g_dirs.insert(mine);
  std::error_code ec;
  // Only names this backend makes: `localdir` may be a directory that holds other things too.
  static const std::regex kOurs("floe-([0-9]{1,9})-[A-Za-z0-9_]+-[0-9a-f]{1,16}");
  for (const fs::directory_entry& e : fs::directory_iterator(base, ec)) {
    const std::string name = e.path().filename().string();
    std::smatch match;
    if (!std::regex_match(name, match, kOurs)) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(match[1].str()));
    if (pid == getpid() ? g_dirs.count(e.path().string()) > 0 : ProcessRuns(pid)) continue;
    std::error_code remove_ec;
    fs::remove_all(e.path(), remove_ec);
  }
}

std::string SafeName(std::string_view s) {
  std::string out;
  for (char c : s) out.push_back(std::isalnum(static_cast<unsigned char>(c)) != 0 ? c : '_');
  return out.empty() ? "task" : out;
}

std::string RandomHex() {
  std::random_device rd;
  uint64_t v = (static_cast<uint64_t>(rd()) << 32) | rd();
  std::ostringstream s;
  s << std::hex << v;
  return s.str();
}

Result<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("rocksdb keyed state: cannot read '" + path.string() + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Status WriteFile(const fs::path& path, std::string_view content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (!out) return Status::IOError("rocksdb keyed state: cannot write '" + path.string() + "'");
  return Status::OK();
}

// --- snapshots ----------------------------------------------------------------------------

// A state as snapshots see it.
struct StateInfo {
  StateDescriptor desc;
  bool registered = false;
};

bool Expires(const StateInfo& t, const KeyedStateOptions& o) {
  return t.desc.ttl && o.ttl.count() > 0;
}

bool Expired(const StateInfo& t, const KeyedStateOptions& o, int64_t written_ms, int64_t now) {
  return Expires(t, o) && written_ms + o.ttl.count() <= now;
}

// One state's entries of a key group in the canonical layout, counted.
struct StateSection {
  uint32_t count = 0;
  StateWriter entries;
};

// The canonical entries of one state row (or, for maps, of one scope's rows, which the caller
// gathers) are written here.
class CanonicalGroupWriter {
 public:
  CanonicalGroupWriter(const std::vector<StateInfo>& states, const KeyedStateOptions& options,
                       int64_t now)
      : states_(states), options_(options), now_(now), sections_(states.size()) {}

  // Adds one row of the state family (its key group prefix already matched).
  Status AddRow(std::string_view key, std::string_view value) {
    if (key.size() < 6) return BadRow("state");
    const uint32_t id = static_cast<uint32_t>(GetBe(key, 2, 4));
    if (id >= states_.size()) return BadRow("state");
    std::string_view rest = key.substr(6);
    std::string k, ns;
    if (!GetEscaped(&rest, &k) || !GetEscaped(&rest, &ns)) return BadRow("state");
    const StateInfo& t = states_[id];
    if (t.desc.kind == StateKind::kMap)
      return AddMapRow(id, key.substr(0, key.size() - rest.size()), k, ns, rest, value);
    FlushMap();
    StateSection& s = sections_[id];
    if (t.desc.kind == StateKind::kList) {
      std::vector<Stamped> elements;
      if (!DecodeElements(value, &elements)) return BadRow("state");
      std::erase_if(elements,
                    [&](const Stamped& e) { return Expired(t, options_, e.written_ms, now_); });
      if (elements.empty()) return Status::OK();
      s.entries.PutBytes(k);
      s.entries.PutBytes(ns);
      s.entries.PutU32(static_cast<uint32_t>(elements.size()));
      for (const Stamped& e : elements) PutStamped(t, e, s.entries);
    } else {
      Stamped v;
      if (!DecodeStamped(value, &v)) return BadRow("state");
      if (Expired(t, options_, v.written_ms, now_)) return Status::OK();
      s.entries.PutBytes(k);
      s.entries.PutBytes(ns);
      PutStamped(t, v, s.entries);
    }
    ++s.count;
    return Status::OK();
  }

  void AddTimer(const Timer& t) {
    StateSection& s = timers_[static_cast<size_t>(t.domain)];
    s.entries.PutI64(t.timestamp);
    s.entries.PutBytes(t.key);
    s.entries.PutBytes(t.ns);
    ++s.count;
  }

  // The group's section; empty when the group holds nothing.
  std::string Finish() {
    FlushMap();
    bool empty = timers_[0].count == 0 && timers_[1].count == 0;
    for (const StateSection& s : sections_) empty = empty && s.count == 0;
    if (empty) return "";
    StateWriter out;
    for (StateSection* s : Sections()) {
      out.PutU32(s->count);
      out.PutRaw(s->entries.data());
    }
    return out.Finish();
  }

 private:
  std::vector<StateSection*> Sections() {
    std::vector<StateSection*> out;
    for (StateSection& s : sections_) out.push_back(&s);
    out.push_back(&timers_[0]);
    out.push_back(&timers_[1]);
    return out;
  }

  void PutStamped(const StateInfo& t, const Stamped& v, StateWriter& out) const {
    if (t.desc.ttl) out.PutI64(v.written_ms);
    out.PutBytes(v.bytes);
  }

  Status AddMapRow(uint32_t id, std::string_view scope_row, const std::string& k,
                   const std::string& ns, std::string_view user_key, std::string_view value) {
    if (scope_row != map_scope_) {
      FlushMap();
      map_scope_.assign(scope_row);
      map_id_ = id;
      map_key_ = k;
      map_ns_ = ns;
    }
    Stamped v;
    if (!DecodeStamped(value, &v)) return BadRow("state");
    if (Expired(states_[id], options_, v.written_ms, now_)) return Status::OK();
    map_entries_.PutBytes(user_key);
    PutStamped(states_[id], v, map_entries_);
    ++map_count_;
    return Status::OK();
  }

  void FlushMap() {
    if (map_count_ > 0) {
      StateSection& s = sections_[map_id_];
      s.entries.PutBytes(map_key_);
      s.entries.PutBytes(map_ns_);
      s.entries.PutU32(map_count_);
      s.entries.PutRaw(map_entries_.data());
      ++s.count;
    }
    map_scope_.clear();
    map_entries_ = StateWriter();
    map_count_ = 0;
  }

  const std::vector<StateInfo>& states_;
  const KeyedStateOptions& options_;
  int64_t now_;
  std::vector<StateSection> sections_;
  StateSection timers_[2];
  // The map scope being gathered (its rows are contiguous).
  std::string map_scope_;
  uint32_t map_id_ = 0;
  std::string map_key_, map_ns_;
  StateWriter map_entries_;
  uint32_t map_count_ = 0;
};

void WriteHeader(uint32_t version, const KeyedStateOptions& o, const std::vector<StateInfo>& states,
                 StateWriter& out) {
  out.PutU32(version);
  out.PutString("rocksdb");
  out.PutU32(o.max_parallelism);
  out.PutU32(o.key_groups.start);
  out.PutU32(o.key_groups.end);
  out.PutU32(static_cast<uint32_t>(states.size()));
  for (const StateInfo& t : states) {
    out.PutString(t.desc.name);
    out.PutU8(static_cast<uint8_t>(t.desc.kind));
    out.PutBool(t.desc.ttl);
  }
}

class RocksDbSnapshot final : public KeyedStateSnapshot {
 public:
  RocksDbSnapshot(std::shared_ptr<Db> db, const KeyedStateOptions& options,
                  std::vector<StateInfo> states, int64_t now_ms, uint64_t number)
      : db_(std::move(db)),
        options_(options),
        states_(std::move(states)),
        now_ms_(now_ms),
        number_(number),
        view_(db_->db->GetSnapshot()) {
    if (db_->ttl) db_->ttl->Pin(now_ms_);
  }

  ~RocksDbSnapshot() override {
    if (db_->ttl) db_->ttl->Unpin(now_ms_);
    db_->db->ReleaseSnapshot(view_);
    std::error_code ec;
    if (!checkpoint_dir_.empty()) fs::remove_all(checkpoint_dir_, ec);
  }

  // The barrier's part of an incremental snapshot: the memtables, which hold exactly the writes
  // up to the barrier (the task thread is the only writer and is here), become immutable and
  // flush in the background. WriteTo waits for that flush, off the task thread. Flink flushes
  // synchronously here (a native checkpoint); under load that flush waits behind compactions.
  Status SwitchMemTables(const std::string& dir) {
    rocksdb::FlushOptions flush;
    flush.wait = false;
    flush.allow_write_stall = true;
    FLOE_RETURN_NOT_OK(Check(db_->db->Flush(flush, {db_->state, db_->timers}), "flush"));
    checkpoint_dir_ = dir;
    return Status::OK();
  }

  Status WriteTo(StateWriter& out, std::vector<SharedStateFile>* shared) override {
    if (shared == nullptr || checkpoint_dir_.empty()) return WriteCanonical(out);
    FLOE_ASSIGN_OR_RAISE(bool linked, LinkBarrierFiles());
    if (linked) return WriteNative(out, shared);
    // Files written after the barrier joined the database's files before they could be linked:
    // this checkpoint writes the state itself instead (the next one is incremental again).
    LogWarn(
        "rocksdb keyed state: key groups [%u, %u): the SST files of checkpoint state %llu "
        "already hold later writes; writing the full state for it instead",
        options_.key_groups.start, options_.key_groups.end,
        static_cast<unsigned long long>(number_));
    return WriteCanonical(out);
  }

  KeyGroupRange key_groups() const override { return options_.key_groups; }

 private:
  // Hard-links the database's files as of the barrier into checkpoint_dir_ (RocksDB's
  // Checkpoint without its flush): waits for the barrier's memtables to flush, then takes the
  // live files while deletions are off. False when a file holds a write after the barrier (a
  // later memtable flushed, or a compaction took it in, before the files were listed).
  Result<bool> LinkBarrierFiles() {
    const rocksdb::SequenceNumber barrier = view_->GetSequenceNumber();
    for (int waited_ms = 0;; ++waited_ms) {
      uint64_t state = 0, timers = 0;
      const char* property = "rocksdb.num-immutable-mem-table";
      if (!db_->db->GetIntProperty(db_->state, property, &state) ||
          !db_->db->GetIntProperty(db_->timers, property, &timers)) {
        return Status::Internal("rocksdb keyed state: no property " + std::string(property));
      }
      if (state == 0 && timers == 0) break;
      if (waited_ms >= kFlushWaitMs) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    FLOE_RETURN_NOT_OK(Check(db_->db->DisableFileDeletions(), "disable file deletions"));
    Result<bool> linked = LinkLiveFiles(barrier);
    Status enabled = Check(db_->db->EnableFileDeletions(/*force=*/false), "enable file deletions");
    if (!linked.ok()) return linked.status();
    FLOE_RETURN_NOT_OK(enabled);
    return linked;
  }

  Result<bool> LinkLiveFiles(rocksdb::SequenceNumber barrier) {
    rocksdb::LiveFilesStorageInfoOptions no_flush;
    no_flush.wal_size_for_flush = std::numeric_limits<uint64_t>::max();
    std::vector<rocksdb::LiveFileStorageInfo> files;
    FLOE_RETURN_NOT_OK(
        Check(db_->db->GetLiveFilesStorageInfo(no_flush, &files), "list live files"));
    std::vector<rocksdb::LiveFileMetaData> ssts;
    db_->db->GetLiveFilesMetaData(&ssts);
    std::set<uint64_t> listed;
    for (const rocksdb::LiveFileStorageInfo& f : files) {
      if (f.file_type == rocksdb::kTableFile) listed.insert(f.file_number);
    }
    std::set<uint64_t> described;
    for (const rocksdb::LiveFileMetaData& m : ssts) {
      if (m.largest_seqno > barrier) return false;
      described.insert(m.file_number);
    }
    if (listed != described) return false;  // a flush or compaction ran between the two calls
    std::error_code ec;
    fs::create_directories(checkpoint_dir_, ec);
    if (ec) return Status::IOError("creating '" + checkpoint_dir_ + "': " + ec.message());
    for (const rocksdb::LiveFileStorageInfo& f : files) {
      const fs::path from = fs::path(f.directory) / f.relative_filename;
      const fs::path to = fs::path(checkpoint_dir_) / f.relative_filename;
      if (f.file_type == rocksdb::kTableFile) {
        fs::create_hard_link(from, to, ec);
        if (ec) return Status::IOError("linking '" + from.string() + "': " + ec.message());
      } else if (!f.replacement_contents.empty()) {
        FLOE_RETURN_NOT_OK(WriteFile(to, f.replacement_contents));
      } else {
        FLOE_ASSIGN_OR_RAISE(std::string content, ReadFile(from));
        if (content.size() < f.size) {
          return Status::IOError("'" + from.string() + "' is shorter than RocksDB listed it");
        }
        content.resize(f.size);  // a MANIFEST grows after the listing
        FLOE_RETURN_NOT_OK(WriteFile(to, content));
      }
    }
    return true;
  }

  std::unique_ptr<rocksdb::Iterator> Iterate(rocksdb::ColumnFamilyHandle* family) const {
    rocksdb::ReadOptions read;
    read.snapshot = view_;
    read.fill_cache = false;  // a snapshot reads everything once
    return std::unique_ptr<rocksdb::Iterator>(db_->db->NewIterator(read, family));
  }

  Status WriteCanonical(StateWriter& out) {
    WriteHeader(kCanonicalVersion, options_, states_, out);
    std::unique_ptr<rocksdb::Iterator> rows = Iterate(db_->state);
    std::unique_ptr<rocksdb::Iterator> timers = Iterate(db_->timers);
    std::vector<std::pair<uint32_t, std::string>> sections;
    for (uint32_t g = options_.key_groups.start; g < options_.key_groups.end; ++g) {
      FLOE_ASSIGN_OR_RAISE(std::string section, GroupSection(g, rows.get(), timers.get()));
      if (!section.empty()) sections.emplace_back(g, std::move(section));
    }
    out.PutU32(static_cast<uint32_t>(sections.size()));
    for (const auto& [g, section] : sections) {
      out.PutU32(g);
      out.PutBytes(section);
    }
    return Status::OK();
  }

  Result<std::string> GroupSection(uint32_t g, rocksdb::Iterator* rows, rocksdb::Iterator* timers) {
    const std::string prefix = GroupPrefix(g);
    CanonicalGroupWriter group(states_, options_, now_ms_);
    for (rows->Seek(prefix); rows->Valid() && rows->key().starts_with(prefix); rows->Next()) {
      FLOE_RETURN_NOT_OK(group.AddRow(View(rows->key()), View(rows->value())));
    }
    FLOE_RETURN_NOT_OK(Check(rows->status(), "snapshot"));
    for (timers->Seek(prefix); timers->Valid() && timers->key().starts_with(prefix);
         timers->Next()) {
      Timer t;
      if (!DecodeTimerKey(View(timers->key()), &t)) return BadRow("timers");
      group.AddTimer(t);
    }
    FLOE_RETURN_NOT_OK(Check(timers->status(), "snapshot"));
    return group.Finish();
  }

  // Flink's RocksIncrementalSnapshotStrategy: every SST file of the checkpoint is listed; the
  // ones an earlier successful snapshot uploaded are reused, the others uploaded now.
  Status WriteNative(StateWriter& out, std::vector<SharedStateFile>* shared) {
    WriteHeader(kNativeVersion, options_, states_, out);
    std::vector<fs::path> ssts, privates;
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(checkpoint_dir_, ec)) {
      (e.path().extension() == ".sst" ? ssts : privates).push_back(e.path());
    }
    if (ec)
      return Status::IOError("rocksdb keyed state: listing '" + checkpoint_dir_ +
                             "': " + ec.message());
    std::sort(ssts.begin(), ssts.end());
    std::sort(privates.begin(), privates.end());
    std::map<uint64_t, SharedStateFile> fresh;
    out.PutU32(static_cast<uint32_t>(ssts.size()));
    for (const fs::path& path : ssts) {
      FLOE_ASSIGN_OR_RAISE(SharedStateFile file, SharedFile(path, &fresh));
      out.PutString(path.filename().string());
      out.PutString(file.name);
      out.PutU64(file.size);
      out.PutU32(file.crc32);
      shared->push_back(file);
    }
    out.PutU32(static_cast<uint32_t>(privates.size()));
    for (const fs::path& path : privates) {
      FLOE_ASSIGN_OR_RAISE(std::string content, ReadFile(path));
      out.PutString(path.filename().string());
      out.PutBytes(content);
    }
    MutexLock lock(db_->mu);
    db_->uploaded.insert(fresh.begin(), fresh.end());
    return Status::OK();
  }

  // The shared file for one SST of the checkpoint: an earlier upload, or a new one (added to
  // *fresh, confirmed when this WriteTo succeeds).
  Result<SharedStateFile> SharedFile(const fs::path& path,
                                     std::map<uint64_t, SharedStateFile>* fresh) {
    const std::optional<uint64_t> number = SstNumber(path.filename().string());
    if (!number) {
      return Status::Internal("rocksdb keyed state: unexpected SST file name '" + path.string() +
                              "'");
    }
    {
      MutexLock lock(db_->mu);
      auto it = db_->uploaded.find(*number);
      if (it != db_->uploaded.end()) return it->second;
    }
    // The snapshot number keeps a name unique when a failed snapshot uploaded the same SST.
    const std::string name =
        db_->file_prefix + "-" + path.stem().string() + "-" + std::to_string(number_) + ".sst";
    FLOE_ASSIGN_OR_RAISE(SharedStateFile file, options_.shared_state->Upload(path.string(), name));
    (*fresh)[*number] = file;
    return file;
  }

  std::shared_ptr<Db> db_;
  KeyedStateOptions options_;
  std::vector<StateInfo> states_;
  int64_t now_ms_;
  uint64_t number_;
  const rocksdb::Snapshot* view_;
  std::string checkpoint_dir_;
};

// --- restore ------------------------------------------------------------------------------

using internal::SnapshotHeader;

Result<SnapshotHeader> ReadHeader(StateReader& in, uint32_t max_parallelism) {
  return internal::ReadSnapshotHeader(in, max_parallelism, {kCanonicalVersion, kNativeVersion},
                                      "1, or 2 on rocksdb");
}

bool PlainFileName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

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
    ++timer_changes_;
    std::optional<int64_t>& head = group_heads_[Index(domain)][Group()];
    if (!head || timestamp < *head) SetHead(domain, current_group_, timestamp);
    return Status::OK();
  }

  Status DeleteTimer(TimeDomain domain, int64_t timestamp) override {
    FLOE_RETURN_NOT_OK(RequireKey("delete a timer"));
    const std::string key = TimerKey(domain, timestamp, current_group_, current_key_, current_ns_);
    FLOE_RETURN_NOT_OK(Check(db_->db->Delete(write_, db_->timers, key), "delete timer"));
    ++timer_changes_;
    if (group_heads_[Index(domain)][Group()] == timestamp) {
      FLOE_ASSIGN_OR_RAISE(std::optional<int64_t> first, FirstTimestamp(domain, current_group_));
      SetHead(domain, current_group_, first);
    }
    return Status::OK();
  }

  Status AdvanceWatermark(Watermark watermark, const TimerHandler& handler) override {
    if (watermark > watermark_) watermark_ = watermark;
    return Fire(TimeDomain::kEventTime, watermark_.micros, handler);
  }

  Status AdvanceProcessingTime(const TimerHandler& handler) override {
    return Fire(TimeDomain::kProcessingTime, CurrentProcessingTime(), handler);
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
    auto snapshot =
        std::make_unique<RocksDbSnapshot>(db_, options_, tables_, clock_->NowMillis(), number);
    if (options_.incremental && options_.shared_state != nullptr) {
      FLOE_RETURN_NOT_OK(
          snapshot->SwitchMemTables(db_->remove_dir + "/chk-" + std::to_string(number)));
    }
    return std::unique_ptr<KeyedStateSnapshot>(std::move(snapshot));
  }

  Status Restore(StateReader& in) override;

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

  // The earliest timestamp of one group and domain.
  Result<std::optional<int64_t>> FirstTimestamp(TimeDomain domain, uint32_t key_group) const {
    TimerCursor c;
    FLOE_RETURN_NOT_OK(OpenTimers(domain, key_group, &c));
    if (!c.it->Valid()) return std::optional<int64_t>();
    Timer t;
    if (!DecodeTimerKey(View(c.it->key()), &t)) return BadRow("timers");
    return std::optional<int64_t>(t.timestamp);
  }

  // Fires due timers in the heap's (timestamp, key group, key, namespace) order. The earliest
  // head's group is read with one iterator for as long as its timers come next (all keys of a
  // tumbling window end at one timestamp): a seek per fired timer costs more than the handler.
  // A handler that registers or deletes timers ends the run; the heads decide again.
  Status Fire(TimeDomain domain, int64_t upto, const TimerHandler& handler) {
    const auto& heads = heads_[Index(domain)];
    while (!heads.empty() && heads.begin()->first <= upto) {
      const uint32_t g = heads.begin()->second;
      // Timers of g come next while they sort before the next group's head.
      std::optional<std::pair<int64_t, uint32_t>> other;
      if (heads.size() > 1) other = *std::next(heads.begin());
      TimerCursor c;
      FLOE_RETURN_NOT_OK(OpenTimers(domain, g, &c));
      if (!c.it->Valid()) {
        return Status::Internal("rocksdb keyed state: timer head of key group " +
                                std::to_string(g) + " has no timer");
      }
      const uint64_t changes = timer_changes_;
      do {
        Timer t;
        if (!DecodeTimerKey(View(c.it->key()), &t)) return BadRow("timers");
        if (t.timestamp > upto || (other && std::pair(t.timestamp, g) > *other)) break;
        FLOE_RETURN_NOT_OK(PopAt(domain, g, &c));
        SetScope(t.key, t.ns, t.key_group);
        FLOE_RETURN_NOT_OK(handler(t));
      } while (c.it->Valid() && timer_changes_ == changes);
    }
    return Status::OK();
  }

  // Deletes the timer at the cursor, moves the cursor to the next and makes it the group's head.
  // The cursor's view predates the delete, so its next row is the group's new earliest.
  Status PopAt(TimeDomain domain, uint32_t g, TimerCursor* c) {
    std::string& floor = floors_[Index(domain)][g - options_.key_groups.start];
    floor.assign(View(c->it->key()));
    FLOE_RETURN_NOT_OK(Check(db_->db->Delete(write_, db_->timers, floor), "delete timer"));
    c->it->Next();
    FLOE_RETURN_NOT_OK(Check(c->it->status(), "read timers"));
    std::optional<int64_t> next;
    if (c->it->Valid()) {
      Timer t;
      if (!DecodeTimerKey(View(c->it->key()), &t)) return BadRow("timers");
      next = t.timestamp;
    }
    SetHead(domain, g, next);
    return Status::OK();
  }

  // Reads every group's earliest timers again (after a restore).
  Status LoadHeads() {
    for (auto& floors : floors_) std::fill(floors.begin(), floors.end(), std::string());
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
  Status RestoreCanonical(const SnapshotHeader& h, const std::vector<uint32_t>& order,
                          StateReader& in);
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
  uint64_t timer_changes_ = 0;  // timers registered or deleted by the caller (Fire)
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
  Status st =
      h.version == kNativeVersion ? RestoreNative(h, order, in) : RestoreCanonical(h, order, in);
  FLOE_RETURN_NOT_OK(st);
  return LoadHeads();
}

Status RocksDbKeyedStateBackend::RestoreCanonical(const SnapshotHeader& h,
                                                  const std::vector<uint32_t>& order,
                                                  StateReader& in) {
  const KeyGroupRange mine = options_.key_groups;
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
    if (key_group < mine.start || key_group >= mine.end) continue;  // another subtask's
    FLOE_RETURN_NOT_OK(MarkRestored(key_group));
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

Status CompactRocksDbKeyedState(KeyedStateBackend& backend) {
  auto* rocks = dynamic_cast<RocksDbKeyedStateBackend*>(&backend);
  if (rocks == nullptr) {
    return Status::InvalidArgument("keyed state: compaction needs the rocksdb backend");
  }
  return rocks->CompactAll();
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

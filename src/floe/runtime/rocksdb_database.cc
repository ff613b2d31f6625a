#include "floe/runtime/rocksdb_database.h"

#include <rocksdb/compaction_filter.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/table.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>

namespace floe::runtime::rocksdb_internal {

namespace {

constexpr const char* kTimersFamily = "timers";
constexpr uint64_t kSignBit = uint64_t{1} << 63;

}  // namespace

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

namespace {

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
  // Every incremental checkpoint makes both families' memtables immutable. With RocksDB's default
  // of two, a second checkpoint before the first one's flush ends stops all writes until it ends
  // (seen on the timers family under load), and the barrier would wait for it.
  cf.max_write_buffer_number = 4;
  return cf;
}

}  // namespace

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

Memory MakeMemory(const KeyedStateOptions& o) {
  Memory m;
  m.cache = rocksdb::NewLRUCache(o.rocksdb_memory_bytes, -1, /*strict_capacity_limit=*/false,
                                 o.rocksdb_high_prio_pool_ratio);
  m.write_buffer_bytes = static_cast<size_t>(static_cast<double>(o.rocksdb_memory_bytes) *
                                             o.rocksdb_write_buffer_ratio);
  m.write_buffers = std::make_shared<rocksdb::WriteBufferManager>(m.write_buffer_bytes, m.cache);
  return m;
}

namespace {

// Working directories of this process's backends (full paths). One with this process's pid that
// is not listed here is a leftover of an earlier process that had the same pid (a container
// restarted after a kill often runs floe under the same pid again).
Mutex g_dirs_mu;
std::set<std::string> g_dirs FLOE_GUARDED_BY(g_dirs_mu);

}  // namespace

void ForgetDir(const std::string& dir) {
  MutexLock lock(g_dirs_mu);
  g_dirs.erase(dir);
}

Db::~Db() {
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
  // Warnings name why RocksDB slows or stops writes (memtables, level-0 files, compaction debt).
  o.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
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

namespace {

bool ProcessRuns(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

}  // namespace

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

}  // namespace floe::runtime::rocksdb_internal

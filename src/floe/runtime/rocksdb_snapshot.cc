#include "floe/runtime/rocksdb_snapshot.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <optional>
#include <set>
#include <thread>

#include "floe/common/log.h"

namespace floe::runtime::rocksdb_internal {

namespace {

// How long an incremental snapshot waits for the barrier's memtables to flush.
constexpr int kFlushWaitMs = 60'000;

bool Expires(const StateInfo& t, const KeyedStateOptions& o) {
  return t.desc.ttl && o.ttl.count() > 0;
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

}  // namespace

bool Expired(const StateInfo& t, const KeyedStateOptions& o, int64_t written_ms, int64_t now) {
  return Expires(t, o) && written_ms + o.ttl.count() <= now;
}

RocksDbSnapshot::RocksDbSnapshot(std::shared_ptr<Db> db, const KeyedStateOptions& options,
                                 std::vector<StateInfo> states, int64_t now_ms, uint64_t number)
    : db_(std::move(db)),
      options_(options),
      states_(std::move(states)),
      now_ms_(now_ms),
      number_(number),
      view_(db_->db->GetSnapshot()) {
  if (db_->ttl) db_->ttl->Pin(now_ms_);
}

RocksDbSnapshot::~RocksDbSnapshot() {
  if (db_->ttl) db_->ttl->Unpin(now_ms_);
  db_->db->ReleaseSnapshot(view_);
  std::error_code ec;
  if (!checkpoint_dir_.empty()) fs::remove_all(checkpoint_dir_, ec);
}

Status RocksDbSnapshot::SwitchMemTables(const std::string& dir, int64_t view_micros) {
  rocksdb::FlushOptions flush;
  flush.wait = false;
  flush.allow_write_stall = true;
  using Clock = std::chrono::steady_clock;
  auto micros_since = [](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t).count();
  };
  // Where a slow barrier's time went: each family's switch, and of it the wait while RocksDB
  // stopped writes.
  int64_t switch_micros[2] = {0, 0};
  int64_t stopped_micros = 0;
  rocksdb::ColumnFamilyHandle* families[2] = {db_->state, db_->timers};
  for (int f = 0; f < 2; ++f) {
    const Clock::time_point start = Clock::now();
    // An empty memtable holds nothing of the barrier's; the task is the only writer and waits
    // here, so it stays empty. RocksDB would refuse to switch it while it stops writes, a stop
    // that the switch of the other family may just have caused.
    uint64_t entries = 0;
    if (db_->db->GetIntProperty(families[f], "rocksdb.num-entries-active-mem-table", &entries) &&
        entries == 0) {
      continue;
    }
    for (;;) {
      const Clock::time_point attempt = Clock::now();
      rocksdb::Status s = db_->db->Flush(flush, families[f]);
      // RocksDB refuses while it stops writes for its flushes or compactions to catch up: the
      // task's next write would wait as long, so the barrier waits for the stop to end rather
      // than fail the job.
      if (!s.IsTryAgain() || stopped_micros >= int64_t{kFlushWaitMs} * 1000) {
        FLOE_RETURN_NOT_OK(Check(s, "flush"));
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      stopped_micros += micros_since(attempt);
    }
    switch_micros[f] = micros_since(start);
  }
  const int64_t total_micros = view_micros + switch_micros[0] + switch_micros[1];
  if (total_micros > 100'000 || stopped_micros > 0) {
    // The stream waits for this: say where the time went, and where RocksDB says why.
    char stopped[160] = "";
    if (stopped_micros > 0) {
      std::snprintf(stopped, sizeof stopped, ", of which %.1f ms while RocksDB stopped writes",
                    static_cast<double>(stopped_micros) / 1000.0);
    }
    LogWarn(
        "rocksdb keyed state: key groups [%u, %u): the barrier of checkpoint state %llu took "
        "%.1f ms: the snapshot %.1f ms, the memtable switch of the state %.1f ms and of the "
        "timers %.1f ms%s (RocksDB's LOG in %s names its stalls)",
        options_.key_groups.start, options_.key_groups.end,
        static_cast<unsigned long long>(number_), static_cast<double>(total_micros) / 1000.0,
        static_cast<double>(view_micros) / 1000.0, static_cast<double>(switch_micros[0]) / 1000.0,
        static_cast<double>(switch_micros[1]) / 1000.0, stopped, db_->path.c_str());
  }
  checkpoint_dir_ = dir;
  return Status::OK();
}

Status RocksDbSnapshot::WriteTo(StateWriter& out, std::vector<SharedStateFile>* shared) {
  if (shared == nullptr || checkpoint_dir_.empty()) return WriteCanonical(out);
  FLOE_ASSIGN_OR_RAISE(bool linked, LinkBarrierFiles());
  if (linked) return WriteNative(out, shared);
  // Files written after the barrier joined the database's files before they could be linked:
  // this checkpoint writes the state itself instead (the next one is incremental again).
  LogWarn(
      "rocksdb keyed state: key groups [%u, %u): the SST files of checkpoint state %llu "
      "already hold later writes; writing the full state for it instead",
      options_.key_groups.start, options_.key_groups.end, static_cast<unsigned long long>(number_));
  return WriteCanonical(out);
}

Result<bool> RocksDbSnapshot::LinkBarrierFiles() {
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

Result<bool> RocksDbSnapshot::LinkLiveFiles(rocksdb::SequenceNumber barrier) {
  rocksdb::LiveFilesStorageInfoOptions no_flush;
  no_flush.wal_size_for_flush = std::numeric_limits<uint64_t>::max();
  std::vector<rocksdb::LiveFileStorageInfo> files;
  FLOE_RETURN_NOT_OK(Check(db_->db->GetLiveFilesStorageInfo(no_flush, &files), "list live files"));
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

std::unique_ptr<rocksdb::Iterator> RocksDbSnapshot::Iterate(
    rocksdb::ColumnFamilyHandle* family) const {
  rocksdb::ReadOptions read;
  read.snapshot = view_;
  read.fill_cache = false;  // a snapshot reads everything once
  return std::unique_ptr<rocksdb::Iterator>(db_->db->NewIterator(read, family));
}

Status RocksDbSnapshot::WriteCanonical(StateWriter& out) {
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

Result<std::string> RocksDbSnapshot::GroupSection(uint32_t g, rocksdb::Iterator* rows,
                                                  rocksdb::Iterator* timers) {
  const std::string prefix = GroupPrefix(g);
  CanonicalGroupWriter group(states_, options_, now_ms_);
  for (rows->Seek(prefix); rows->Valid() && rows->key().starts_with(prefix); rows->Next()) {
    FLOE_RETURN_NOT_OK(group.AddRow(View(rows->key()), View(rows->value())));
  }
  FLOE_RETURN_NOT_OK(Check(rows->status(), "snapshot"));
  for (timers->Seek(prefix); timers->Valid() && timers->key().starts_with(prefix); timers->Next()) {
    Timer t;
    if (!DecodeTimerKey(View(timers->key()), &t)) return BadRow("timers");
    group.AddTimer(t);
  }
  FLOE_RETURN_NOT_OK(Check(timers->status(), "snapshot"));
  return group.Finish();
}

Status RocksDbSnapshot::WriteNative(StateWriter& out, std::vector<SharedStateFile>* shared) {
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

Result<SharedStateFile> RocksDbSnapshot::SharedFile(const fs::path& path,
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

Result<SnapshotHeader> ReadHeader(StateReader& in, uint32_t max_parallelism) {
  return internal::ReadSnapshotHeader(in, max_parallelism, {kCanonicalVersion, kNativeVersion},
                                      "1, or 2 on rocksdb");
}

bool PlainFileName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

}  // namespace floe::runtime::rocksdb_internal

#pragma once

// The rocksdb keyed state backend's snapshots: the canonical layout written from a RocksDB
// snapshot, and the native (incremental) layout from the database's files as of the barrier.
// Internal to the rocksdb backend: only its .cc files include this.

#include <rocksdb/db.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/runtime/keyed_state.h"
#include "floe/runtime/keyed_state_checks.h"
#include "floe/runtime/rocksdb_database.h"

namespace floe::runtime::rocksdb_internal {

constexpr uint32_t kCanonicalVersion = 1;
constexpr uint32_t kNativeVersion = 2;

// A state as snapshots see it.
struct StateInfo {
  StateDescriptor desc;
  bool registered = false;
};

// Whether a value of state `t` written at `written_ms` has expired at `now` (TTL on and elapsed).
bool Expired(const StateInfo& t, const KeyedStateOptions& o, int64_t written_ms, int64_t now);

// Native (incremental) snapshot layout, written when WriteTo gets `shared`:
//   u32 2 | string "rocksdb" | u32 max_parallelism | u32 start | u32 end |
//   u32 state_count x { string name, u8 kind, bool ttl }        (as in the canonical header)
//   u32 sst_count x { string local_name, string shared_name, u64 size, u32 crc32 }
//   u32 private_count x { string file_name, bytes content }      (MANIFEST, CURRENT, OPTIONS)
//
// TakeSnapshot's result: reads the database through a RocksDB snapshot (canonical layout), or
// after SwitchMemTables links its files as of the barrier (native layout).
class RocksDbSnapshot final : public KeyedStateSnapshot {
 public:
  RocksDbSnapshot(std::shared_ptr<Db> db, const KeyedStateOptions& options,
                  std::vector<StateInfo> states, int64_t now_ms, uint64_t number);
  ~RocksDbSnapshot() override;
  // The barrier's part of an incremental snapshot: the memtables, which hold exactly the writes
  // up to the barrier (the task thread is the only writer and is here), become immutable and
  // flush in the background. WriteTo waits for that flush, off the task thread. Flink flushes
  // synchronously here (a native checkpoint); under load that flush waits behind compactions.
  // `view_micros`: how long taking the RocksDB snapshot took; a barrier slower than 100 ms in all
  // is logged with where its time went.
  Status SwitchMemTables(const std::string& dir, int64_t view_micros);
  Status WriteTo(StateWriter& out, std::vector<SharedStateFile>* shared) override;

  KeyGroupRange key_groups() const override { return options_.key_groups; }

 private:
  // Hard-links the database's files as of the barrier into checkpoint_dir_ (RocksDB's
  // Checkpoint without its flush): waits for the barrier's memtables to flush, then takes the
  // live files while deletions are off. False when a file holds a write after the barrier (a
  // later memtable flushed, or a compaction took it in, before the files were listed).
  Result<bool> LinkBarrierFiles();
  Result<bool> LinkLiveFiles(rocksdb::SequenceNumber barrier);
  std::unique_ptr<rocksdb::Iterator> Iterate(rocksdb::ColumnFamilyHandle* family) const;
  Status WriteCanonical(StateWriter& out);
  Result<std::string> GroupSection(uint32_t g, rocksdb::Iterator* rows, rocksdb::Iterator* timers);
  // Flink's RocksIncrementalSnapshotStrategy: every SST file of the checkpoint is listed; the
  // ones an earlier successful snapshot uploaded are reused, the others uploaded now.
  Status WriteNative(StateWriter& out, std::vector<SharedStateFile>* shared);
  // The shared file for one SST of the checkpoint: an earlier upload, or a new one (added to
  // *fresh, confirmed when this WriteTo succeeds).
  Result<SharedStateFile> SharedFile(const fs::path& path,
                                     std::map<uint64_t, SharedStateFile>* fresh);

  std::shared_ptr<Db> db_;
  KeyedStateOptions options_;
  std::vector<StateInfo> states_;
  int64_t now_ms_;
  uint64_t number_;
  const rocksdb::Snapshot* view_;
  std::string checkpoint_dir_;
};

using internal::SnapshotHeader;

// The header of a snapshot this backend wrote (format version 1 or 2).
Result<SnapshotHeader> ReadHeader(StateReader& in, uint32_t max_parallelism);
// A file name of a native snapshot: no directory, not `.` or `..`.
bool PlainFileName(const std::string& name);

}  // namespace floe::runtime::rocksdb_internal

#pragma once

// The rocksdb keyed state backend (`state.backend.type: rocksdb`, Flink's
// EmbeddedRocksDBStateBackend): keyed state and timers in an embedded RocksDB on local disk,
// snapshots taken from a RocksDB snapshot (canonical layout) or a RocksDB checkpoint
// (incremental). Layout and design: rocksdb_database.h (rows, encoding, the database),
// rocksdb_snapshot.h (snapshots), rocksdb_keyed_state.cc (the backend, options). RocksDB's own
// headers stay out of this header.

#include <map>
#include <memory>
#include <string>

#include "floe/common/status.h"
#include "floe/runtime/keyed_state.h"

namespace floe::runtime {

// The backend for `options` (KeyedStateBackend::Make calls it for "rocksdb"). Creates the
// working directory `<local dir>/floe-<pid>-<task>-<random>` and first removes the ones of
// processes that no longer run.
Result<std::unique_ptr<KeyedStateBackend>> MakeRocksDbKeyedStateBackend(KeyedStateOptions options);

// Reads the `state.backend.rocksdb.*` options into `out`. An option of that prefix floe does not
// honour is InvalidArgument (never silently ignored).
Status ReadRocksDbOptions(const std::map<std::string, std::string>& options,
                          KeyedStateOptions* out);

// A full manual compaction of a rocksdb backend (tests, tools): expired TTL state is removed
// then, as it is by RocksDB's own compactions over time. Another backend is InvalidArgument.
Status CompactRocksDbKeyedState(KeyedStateBackend& backend);
// Pauses (or resumes) a rocksdb backend's flushes and compactions (tests: RocksDB then stops
// writes once its memtables are all waiting for a flush). Another backend is InvalidArgument.
Status PauseRocksDbBackgroundWork(KeyedStateBackend& backend, bool pause);

// Where working directories go when `state.backend.rocksdb.localdir` is unset:
// <system temp dir>/floe-rocksdb.
std::string DefaultRocksDbLocalDir();

}  // namespace floe::runtime

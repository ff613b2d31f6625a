// Keyed state backends at scale (issue 22, part 6), in one process without a job around them:
// session-like state (one ~64-byte value and one event-time timer per key), then
//   - load: keys/s written, peak RSS (VmHWM) after loading;
//   - canonical snapshot: the stream pause (TakeSnapshot), the asynchronous part (WriteTo) and
//     its bytes; restore time into a fresh backend;
//   - rocksdb only, incremental: the pause and bytes uploaded of a first checkpoint, then of a
//     second after 1% of the keys changed; restore time from the second.
//
//   keyed_state_bench BACKEND KEYS [MEMORY_MB]     (BACKEND: hashmap | rocksdb)
//
// Prints one JSON object. Built with the tests (build/src/floe/runtime/keyed_state_bench).

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "floe/common/testing/temp_dir.h"
#include "floe/runtime/keyed_state.h"
#include "floe/runtime/testing/dir_shared_state_store.h"

namespace {

using floe::Result;
using floe::Status;
using namespace floe::runtime;
using Clock = std::chrono::steady_clock;

double MillisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// VmHWM / VmRSS of this process in MiB.
double StatusMiB(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stod(line.substr(field.size() + 1)) / 1024;
  }
  return -1;
}

uint64_t Mix(uint64_t x) {  // splitmix64: spreads keys over the key groups
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

Status Write(KeyedStateBackend& backend, int64_t from, int64_t to, int64_t step, int version) {
  FLOE_ASSIGN_OR_RAISE(ValueState v, backend.GetValueState("session"));
  std::string value;
  for (int64_t k = from; k < to; k += step) {
    FLOE_RETURN_NOT_OK(backend.SetCurrentKey(std::to_string(k), Mix(static_cast<uint64_t>(k))));
    value = std::to_string(k) + "," + std::to_string(version) + ",";
    value.resize(64, '.');
    FLOE_RETURN_NOT_OK(v.Update(value));
    FLOE_RETURN_NOT_OK(backend.RegisterTimer(TimeDomain::kEventTime, 1'000'000 + k % 100'000));
  }
  return Status::OK();
}

struct Written {
  std::string blob;
  double sync_ms = 0;
  double async_ms = 0;
};

Result<Written> Checkpoint(KeyedStateBackend& backend, std::vector<SharedStateFile>* shared) {
  Written out;
  Clock::time_point start = Clock::now();
  FLOE_ASSIGN_OR_RAISE(std::unique_ptr<KeyedStateSnapshot> view, backend.TakeSnapshot());
  out.sync_ms = MillisSince(start);
  start = Clock::now();
  StateWriter w;
  FLOE_RETURN_NOT_OK(view->WriteTo(w, shared));
  out.async_ms = MillisSince(start);
  out.blob = w.Finish();
  return out;
}

Result<double> RestoreMillis(const KeyedStateOptions& options, const std::string& blob) {
  Clock::time_point start = Clock::now();
  FLOE_ASSIGN_OR_RAISE(std::unique_ptr<KeyedStateBackend> backend,
                       KeyedStateBackend::Make(options));
  StateReader r(blob);
  FLOE_RETURN_NOT_OK(backend->Restore(r));
  return MillisSince(start);
}

Status Run(const std::string& backend_name, int64_t keys, uint64_t memory_mb) {
  floe::testing::TempDir shared;
  testing::DirSharedStateStore store(shared.path());
  KeyedStateOptions o;
  o.backend = backend_name;
  o.rocksdb_memory_bytes = memory_mb << 20;
  o.incremental = backend_name == "rocksdb";
  o.shared_state = &store;
  FLOE_ASSIGN_OR_RAISE(std::unique_ptr<KeyedStateBackend> backend, KeyedStateBackend::Make(o));
  Clock::time_point start = Clock::now();
  FLOE_RETURN_NOT_OK(Write(*backend, 0, keys, 1, 1));
  const double load_ms = MillisSince(start);
  std::printf(
      "{\"backend\": \"%s\", \"keys\": %lld, \"memory_mb\": %llu, \"load_keys_per_s\": %.0f",
      backend_name.c_str(), static_cast<long long>(keys),
      static_cast<unsigned long long>(memory_mb), keys / (load_ms / 1000));
  std::printf(", \"rss_hwm_mib\": %.0f", StatusMiB("VmHWM"));
  FLOE_ASSIGN_OR_RAISE(Written full, Checkpoint(*backend, nullptr));
  FLOE_ASSIGN_OR_RAISE(double restore_full, RestoreMillis(o, full.blob));
  std::printf(
      ", \"canonical\": {\"sync_ms\": %.1f, \"async_ms\": %.0f, \"bytes\": %zu, "
      "\"restore_ms\": %.0f}",
      full.sync_ms, full.async_ms, full.blob.size(), restore_full);
  if (backend_name == "rocksdb") {
    std::vector<SharedStateFile> files;
    FLOE_ASSIGN_OR_RAISE(Written first, Checkpoint(*backend, &files));
    const uint64_t first_bytes = store.uploaded_bytes + first.blob.size();
    FLOE_RETURN_NOT_OK(Write(*backend, 0, keys, 100, 2));  // 1% of the keys change
    FLOE_ASSIGN_OR_RAISE(Written second, Checkpoint(*backend, &files));
    const uint64_t second_bytes = store.uploaded_bytes + second.blob.size() - first_bytes;
    FLOE_ASSIGN_OR_RAISE(double restore_incremental, RestoreMillis(o, second.blob));
    std::printf(
        ", \"incremental\": {\"first_sync_ms\": %.1f, \"first_bytes\": %llu, "
        "\"second_sync_ms\": %.1f, \"second_bytes\": %llu, \"restore_ms\": %.0f}",
        first.sync_ms, static_cast<unsigned long long>(first_bytes), second.sync_ms,
        static_cast<unsigned long long>(second_bytes), restore_incremental);
  }
  std::printf(", \"rss_hwm_end_mib\": %.0f}\n", StatusMiB("VmHWM"));
  return Status::OK();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: keyed_state_bench hashmap|rocksdb KEYS [MEMORY_MB]\n";
    return 2;
  }
  Status st = Run(argv[1], std::stoll(argv[2]), argc > 3 ? std::stoull(argv[3]) : 64);
  if (!st.ok()) {
    std::cerr << st.ToString() << "\n";
    return 1;
  }
  return 0;
}

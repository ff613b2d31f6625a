#pragma once

// Helpers shared by the snapshot-producing operations of floe_iceberg (commits, rewrites,
// expiry). Internal to the module.

#include <charconv>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>

#include "floe/common/uuid.h"
#include "floe/iceberg/table_metadata.h"

namespace floe::iceberg::internal {

// Random bits for ids and file names. A fresh std::random_device per call (the kernel's
// generator), so forked processes never share a generator state.
inline uint64_t Random64() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ static_cast<uint64_t>(rd());
}

// A random (version 4) UUID in its 36-character text form.
inline std::string NewUuid() {
  const uint64_t hi = Random64();
  return UuidV4Text(hi, Random64());
}

// A random positive 63-bit snapshot id the table does not use yet.
inline int64_t NewSnapshotId(const TableMetadata& metadata) {
  for (;;) {
    auto id = static_cast<int64_t>(Random64() & static_cast<uint64_t>(INT64_MAX));
    if (id != 0 && metadata.FindSnapshot(id) == nullptr) return id;
  }
}

inline int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// An integer table property; `fallback` when unset or not an integer.
inline int64_t IntProperty(const TableMetadata& m, const char* key, int64_t fallback) {
  std::string text = m.Property(key, "");
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) return fallback;
  return v;
}

inline constexpr char kNumRetriesProperty[] = "commit.retry.num-retries";
inline constexpr int64_t kNumRetriesDefault = 4;

}  // namespace floe::iceberg::internal

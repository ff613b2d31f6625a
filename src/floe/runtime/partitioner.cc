#include "floe/runtime/partitioner.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace floe::runtime {
namespace {

uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t HashBytes(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return Mix64(h);
}

template <typename T>
uint64_t HashLittleEndian(T v) {
  // x86-64 and aarch64 store little-endian, which is the canonical order; a big-endian port
  // must byte-swap here.
  static_assert(sizeof(T) <= 16);
  return HashBytes(&v, sizeof(T));
}

}  // namespace

uint64_t HashKeyValue(const Column& column, size_t row) {
  if (column.IsNull(row)) return kNullKeyHash;
  switch (column.type().id) {
    case TypeId::kBoolean:
      return HashLittleEndian<uint8_t>(column.Get<uint8_t>(row) ? 1 : 0);
    case TypeId::kInt32:
    case TypeId::kDate:
      return HashLittleEndian(column.Get<int32_t>(row));
    case TypeId::kInt64:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTime:
      return HashLittleEndian(column.Get<int64_t>(row));
    case TypeId::kFloat: {
      float v = column.Get<float>(row);
      if (v == 0.0f) v = 0.0f;
      if (std::isnan(v)) v = std::numeric_limits<float>::quiet_NaN();
      return HashLittleEndian(v);
    }
    case TypeId::kDouble: {
      double v = column.Get<double>(row);
      if (v == 0.0) v = 0.0;
      if (std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();
      return HashLittleEndian(v);
    }
    case TypeId::kDecimal:
      return HashLittleEndian(column.Get<Int128>(row));
    case TypeId::kString:
    case TypeId::kBinary: {
      std::string_view b = column.GetBytes(row);
      return HashBytes(b.data(), b.size());
    }
  }
  return 0;
}

uint64_t HashKeyRow(const RecordBatch& batch, const std::vector<int>& key_indexes, size_t row) {
  uint64_t h = 0;
  for (int k : key_indexes) {
    uint64_t v = HashKeyValue(batch.column(static_cast<size_t>(k)), row);
    h = Mix64(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
  }
  return h;
}

uint32_t KeyGroupForHash(uint64_t hash, uint32_t max_parallelism) {
  return static_cast<uint32_t>(hash % max_parallelism);
}

uint32_t SubtaskForKeyGroup(uint32_t key_group, uint32_t max_parallelism, uint32_t parallelism) {
  return static_cast<uint32_t>(static_cast<uint64_t>(key_group) * parallelism / max_parallelism);
}

KeyGroupRange KeyGroupRangeForSubtask(uint32_t subtask, uint32_t max_parallelism,
                                      uint32_t parallelism) {
  // The inverse of SubtaskForKeyGroup: the key groups g with floor(g * p / m) == subtask.
  uint64_t m = max_parallelism, p = parallelism;
  uint64_t start = (subtask * m + p - 1) / p;
  uint64_t end = ((subtask + 1) * m + p - 1) / p;
  return KeyGroupRange{static_cast<uint32_t>(start), static_cast<uint32_t>(end)};
}

uint32_t DefaultMaxParallelism(uint32_t parallelism) {
  uint64_t n = static_cast<uint64_t>(parallelism) + parallelism / 2;
  uint64_t pow2 = 1;
  while (pow2 < n) pow2 <<= 1;
  return static_cast<uint32_t>(
      std::min<uint64_t>(std::max<uint64_t>(pow2, 128), kMaxMaxParallelism));
}

Result<std::vector<int>> ResolveKeyColumns(const BatchSchema& schema,
                                           const std::vector<std::string>& names) {
  std::vector<int> out;
  out.reserve(names.size());
  for (const std::string& name : names) {
    int i = schema.FieldIndex(name);
    if (i < 0) {
      std::string have;
      for (const Field& f : schema.fields) have += (have.empty() ? "" : ", ") + f.name;
      return Status::InvalidArgument("keyBy column '" + name +
                                     "' is not in the batch (columns: " + have + ")");
    }
    out.push_back(i);
  }
  return out;
}

std::vector<std::vector<uint32_t>> HashPartitionRows(const RecordBatch& batch,
                                                     const std::vector<int>& key_indexes,
                                                     uint32_t max_parallelism,
                                                     uint32_t parallelism) {
  std::vector<std::vector<uint32_t>> out(parallelism);
  const size_t rows = batch.num_rows();
  for (size_t r = 0; r < rows; ++r) {
    uint32_t group = KeyGroupForHash(HashKeyRow(batch, key_indexes, r), max_parallelism);
    out[SubtaskForKeyGroup(group, max_parallelism, parallelism)].push_back(
        static_cast<uint32_t>(r));
  }
  return out;
}

}  // namespace floe::runtime

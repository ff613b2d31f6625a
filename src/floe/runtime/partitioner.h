#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/runtime/operator.h"

namespace floe::runtime {

// Key hashing for keyBy. The hash is part of floe's persistent contract (keyed state will be
// stored per key group), so it is defined here independently of std::hash and the platform:
//   value hash  = splitmix64-finalized FNV-1a-64 over the value's canonical little-endian bytes
//                 (booleans one byte, -0.0 as 0.0, every NaN as the canonical quiet NaN,
//                 decimals as 16 bytes of the unscaled Int128, strings/binary their bytes);
//                 a null hashes to the constant kNullKeyHash;
//   row hash    = fold over key columns: h = mix(h ^ (value hash + 0x9e3779b97f4a7c15 + (h << 6)
//                 + (h >> 2))), starting from 0.
// Two rows with equal key values (nulls equal to nulls) get the same hash in any process.
inline constexpr uint64_t kNullKeyHash = 0x6e756c6c6b657921ULL;

uint64_t HashKeyValue(const Column& column, size_t row);
uint64_t HashKeyRow(const RecordBatch& batch, const std::vector<int>& key_indexes, size_t row);

// Flink's key-group scheme: hash -> key group in [0, max_parallelism) -> subtask.
uint32_t KeyGroupForHash(uint64_t hash, uint32_t max_parallelism);
uint32_t SubtaskForKeyGroup(uint32_t key_group, uint32_t max_parallelism, uint32_t parallelism);
KeyGroupRange KeyGroupRangeForSubtask(uint32_t subtask, uint32_t max_parallelism,
                                      uint32_t parallelism);

// Flink's default max parallelism for an operator of parallelism p (KeyGroupRangeAssignment):
// min(max(roundUpToPowerOfTwo(p + p/2), 128), 32768). The planner uses a fixed
// `pipeline.max-parallelism` (default 128) for the whole job today; this is the rule for when it
// derives one. The max parallelism must not change across a restore (it fixes the key groups).
uint32_t DefaultMaxParallelism(uint32_t parallelism);
inline constexpr uint32_t kMaxMaxParallelism = 32768;

// Indexes of `names` in the batch's schema; InvalidArgument naming a missing column.
Result<std::vector<int>> ResolveKeyColumns(const BatchSchema& schema,
                                           const std::vector<std::string>& names);

// Row indexes of `batch` per target subtask (size `parallelism`) under hash partitioning.
std::vector<std::vector<uint32_t>> HashPartitionRows(const RecordBatch& batch,
                                                     const std::vector<int>& key_indexes,
                                                     uint32_t max_parallelism,
                                                     uint32_t parallelism);

}  // namespace floe::runtime

#pragma once

// The source partitions one instance of a scaled-out job holds (docs/architecture.md, "Scale-out
// across machines"). An instance holds a partition in generations: a generation begins each time
// the consumer group gives it the partition, or the table fences it and it re-seeks, and starts at
// the table's position of the partition. Rows travel with their generation's split name (the
// Iceberg writers' split column), so a commit takes only the rows of the generation the source
// held at its barrier, and a partition's rows from before a rebalance never mix with its rows
// after.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/partition_positions.h"

namespace floe::connectors {

struct PartitionClaim {
  iceberg::SourcePartition partition;
  uint64_t generation = 0;
  // The table's position of the partition when the generation began (nullopt: it had none).
  std::optional<int64_t> from;
  int64_t next = 0;  // the next offset to read
  // A keyed job's: how many partitions the topic had when the generation began, the key ->
  // partition map its state follows (0: not kept).
  int32_t topic_partitions = 0;
  bool operator==(const PartitionClaim&) const = default;
};

// "<topic>/<partition>/<generation>": the split name of the generation's rows.
std::string ClaimSplit(const PartitionClaim& claim);

// The position a source records at a barrier:
//   {"claims":[{"topic":"t","partition":0,"generation":1,"from":null,"next":42}, ...]}
// with "topic_partitions":N in a claim that keeps it.
std::string ClaimsToJson(const std::vector<PartitionClaim>& claims);
// Corruption naming the field for anything else (`what` names the document in messages).
Result<std::vector<PartitionClaim>> ClaimsFromJson(std::string_view json, std::string_view what);

}  // namespace floe::connectors

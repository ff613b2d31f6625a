#pragma once

// Positions of source partitions kept as table properties, for jobs whose instances share a
// Kafka topic (docs/architecture.md, "Scale-out across machines"): the property
// `floe.position.<sink id>.<topic>.<partition>` holds the next offset to read of that partition,
// and for a keyed job `floe.state.<sink id>.<topic>.<partition>` the state reading it produced
// (a pointer into a checkpoint, runtime::ClaimStatePointer), and
// `floe.partitions.<sink id>.<topic>` how many partitions the topic had when that state was read
// (the producer's key -> partition map a keyed job's state follows).
// A commit sets it together with the rows it covers, and requires, inside the catalog's
// compare-and-swap (CommitOptions::validate), that it still holds the offset the rows start at;
// snapshot expiry never touches table properties.

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/catalog.h"
#include "floe/iceberg/manifest.h"
#include "floe/iceberg/snapshot_update.h"
#include "floe/iceberg/table_metadata.h"

namespace floe::iceberg {

struct SourcePartition {
  std::string topic;
  int32_t partition = 0;
  auto operator<=>(const SourcePartition&) const = default;
  std::string ToString() const;  // "<topic>/<partition>"
};

// "floe.position.<sink id>.<topic>.<partition>".
std::string PartitionPositionProperty(std::string_view sink_id, const SourcePartition& p);

// "floe.state.<sink id>.<topic>.<partition>".
std::string PartitionStateProperty(std::string_view sink_id, const SourcePartition& p);

// "floe.partitions.<sink id>.<topic>".
std::string PartitionCountProperty(std::string_view sink_id, std::string_view topic);

// The table's partition count of `topic` for `sink_id`: nullopt when it has none. Corruption
// (naming the property) when the value is not a positive count.
Result<std::optional<int32_t>> TablePartitionCount(const TableMetadata& metadata,
                                                   std::string_view sink_id,
                                                   std::string_view topic);

// Where the next holder of a partition starts, read from one table metadata so they agree.
struct PartitionStart {
  std::optional<int64_t> position;          // the next offset; nullopt: the table has none
  std::string state;                        // the state's pointer; "": none (or not a keyed job)
  std::optional<int32_t> topic_partitions;  // the topic's count the state follows; nullopt: none
};
Result<PartitionStart> TablePartitionStart(const TableMetadata& metadata, std::string_view sink_id,
                                           const SourcePartition& p);

// The table's position of `p` for `sink_id`: nullopt when it has none. Corruption (naming the
// property) when the value is not a non-negative offset.
Result<std::optional<int64_t>> TablePartitionPosition(const TableMetadata& metadata,
                                                      std::string_view sink_id,
                                                      const SourcePartition& p);

// The rows one commit adds of one partition: offsets [from, next). `from` is what the table must
// hold when the commit swaps (nullopt: no position yet, the partition's first commit).
struct PartitionRange {
  std::optional<int64_t> from;
  int64_t next = 0;
};

// The check inside the swap: the partitions of `ranges` whose table position is not their
// `from` (another instance committed them since, or a zombie's turn has passed). Corruption for
// a malformed position.
Result<std::vector<SourcePartition>> FencedPartitions(
    const TableMetadata& metadata, std::string_view sink_id,
    const std::map<SourcePartition, PartitionRange>& ranges);

// One partition's part of a commit: its range and the files holding those rows (files of one
// partition only, so a fenced partition's rows stay out without rewriting a file).
struct PartitionCommit {
  PartitionRange range;
  std::vector<DataFile> data_files;
  std::vector<DataFile> delete_files;
  std::string state = {};  // a keyed job's state pointer, set in the same swap ("": as is)
};

struct PartitionCommitResult {
  std::optional<Snapshot> snapshot;     // none when every partition was fenced
  std::vector<SourcePartition> fenced;  // left out: their files were not committed
};

// Commits the partitions' files in one snapshot of table `id` with their positions
// (`common`'s summary entries and table properties too), checking every partition's position inside
// the swap (FencedPartitions). A fenced partition is left out and the rest are committed; a swap
// lost to another writer is retried as CommitSnapshot does (`options`, whose own validate still
// runs first). The caller deletes the fenced partitions' files.
Result<PartitionCommitResult> CommitPartitions(
    Catalog& catalog, const TableIdentifier& id, std::string_view sink_id,
    const std::map<SourcePartition, PartitionCommit>& parts, const SnapshotChanges& common,
    const CommitOptions& options);

}  // namespace floe::iceberg

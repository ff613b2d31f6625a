#include "floe/iceberg/partition_positions.h"

#include <charconv>

namespace floe::iceberg {

namespace {

// The properties a commit of `ranges` sets: each partition's next offset and its state.
std::map<std::string, std::string> PositionUpdates(
    std::string_view sink_id, const std::map<SourcePartition, PartitionRange>& ranges,
    const std::map<SourcePartition, PartitionCommit>& parts) {
  std::map<std::string, std::string> out;
  for (const auto& [p, range] : ranges) {
    out[PartitionPositionProperty(sink_id, p)] = std::to_string(range.next);
    const std::string& state = parts.at(p).state;
    if (!state.empty()) out[PartitionStateProperty(sink_id, p)] = state;
  }
  return out;
}

// The integer property `key` at or above `min`: nullopt when absent, Corruption naming it (and
// `what` it should be) when malformed.
template <typename T>
Result<std::optional<T>> IntegerProperty(const TableMetadata& metadata, const std::string& key,
                                         T min, const char* what) {
  auto it = metadata.properties.find(key);
  if (it == metadata.properties.end()) return std::optional<T>();
  const std::string& text = it->second;
  T value = min;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min) {
    return Status::Corruption("table property '" + key + "' = '" + text + "' is not " + what);
  }
  return std::optional<T>(value);
}

}  // namespace

std::string SourcePartition::ToString() const { return topic + "/" + std::to_string(partition); }

std::string PartitionPositionProperty(std::string_view sink_id, const SourcePartition& p) {
  return "floe.position." + std::string(sink_id) + "." + p.topic + "." +
         std::to_string(p.partition);
}

std::string PartitionStateProperty(std::string_view sink_id, const SourcePartition& p) {
  return "floe.state." + std::string(sink_id) + "." + p.topic + "." + std::to_string(p.partition);
}

std::string PartitionCountProperty(std::string_view sink_id, std::string_view topic) {
  return "floe.partitions." + std::string(sink_id) + "." + std::string(topic);
}

Result<PartitionStart> TablePartitionStart(const TableMetadata& metadata, std::string_view sink_id,
                                           const SourcePartition& p) {
  PartitionStart start;
  FLOE_ASSIGN_OR_RAISE(start.position, TablePartitionPosition(metadata, sink_id, p));
  auto state = metadata.properties.find(PartitionStateProperty(sink_id, p));
  if (state != metadata.properties.end()) start.state = state->second;
  FLOE_ASSIGN_OR_RAISE(start.topic_partitions, TablePartitionCount(metadata, sink_id, p.topic));
  return start;
}

Result<std::optional<int64_t>> TablePartitionPosition(const TableMetadata& metadata,
                                                      std::string_view sink_id,
                                                      const SourcePartition& p) {
  return IntegerProperty<int64_t>(metadata, PartitionPositionProperty(sink_id, p), 0,
                                  "a partition's next offset (a non-negative integer)");
}

Result<std::optional<int32_t>> TablePartitionCount(const TableMetadata& metadata,
                                                   std::string_view sink_id,
                                                   std::string_view topic) {
  return IntegerProperty<int32_t>(metadata, PartitionCountProperty(sink_id, topic), 1,
                                  "a topic's partition count (a positive integer)");
}

Result<std::vector<SourcePartition>> FencedPartitions(
    const TableMetadata& metadata, std::string_view sink_id,
    const std::map<SourcePartition, PartitionRange>& ranges) {
  std::vector<SourcePartition> fenced;
  for (const auto& [p, range] : ranges) {
    FLOE_ASSIGN_OR_RAISE(std::optional<int64_t> held, TablePartitionPosition(metadata, sink_id, p));
    if (held != range.from) fenced.push_back(p);
  }
  return fenced;
}

Result<PartitionCommitResult> CommitPartitions(
    Catalog& catalog, const TableIdentifier& id, std::string_view sink_id,
    const std::map<SourcePartition, PartitionCommit>& parts, const SnapshotChanges& common,
    const CommitOptions& options) {
  PartitionCommitResult out;
  std::map<SourcePartition, PartitionRange> ranges;
  for (const auto& [p, part] : parts) ranges[p] = part.range;
  // Each round leaves out what the previous one found fenced; positions only ever move on, so
  // the rounds end.
  while (true) {
    SnapshotChanges changes = common;
    for (const auto& [p, part] : parts) {
      if (ranges.count(p) == 0) continue;
      changes.added_data_files.insert(changes.added_data_files.end(), part.data_files.begin(),
                                      part.data_files.end());
      changes.added_delete_files.insert(changes.added_delete_files.end(), part.delete_files.begin(),
                                        part.delete_files.end());
    }
    for (auto& [key, value] : PositionUpdates(sink_id, ranges, parts)) {
      changes.table_properties[key] = std::move(value);
    }
    if (ranges.empty() && changes.added_data_files.empty() && changes.added_delete_files.empty()) {
      return out;
    }
    std::vector<SourcePartition> fenced_now;
    CommitOptions checked = options;
    checked.validate = [&](const TableMetadata& m) -> Status {
      if (options.validate) FLOE_RETURN_NOT_OK(options.validate(m));
      FLOE_ASSIGN_OR_RAISE(fenced_now, FencedPartitions(m, sink_id, ranges));
      if (fenced_now.empty()) return Status::OK();
      return Status::Conflict("partition " + fenced_now.front().ToString() + " is fenced");
    };
    Result<Snapshot> snapshot = CommitSnapshot(catalog, id, changes, checked);
    if (snapshot.ok()) {
      out.snapshot = std::move(*snapshot);
      return out;
    }
    if (fenced_now.empty()) return snapshot.status();
    for (const SourcePartition& p : fenced_now) {
      ranges.erase(p);
      out.fenced.push_back(p);
    }
  }
}

}  // namespace floe::iceberg

#include "floe/iceberg/manifest_merge_internal.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "floe/iceberg/commit_internal.h"
#include "floe/iceberg/manifest_io.h"

namespace floe::iceberg::internal {
namespace {

// Table properties (Iceberg's names and defaults, TableProperties.java).
constexpr char kMergeEnabled[] = "commit.manifest-merge.enabled";
constexpr char kMinCountToMerge[] = "commit.manifest.min-count-to-merge";
constexpr int64_t kMinCountToMergeDefault = 100;
constexpr char kTargetSizeBytes[] = "commit.manifest.target-size-bytes";
constexpr int64_t kTargetSizeBytesDefault = 8 * 1024 * 1024;

bool BoolProperty(const TableMetadata& m, const char* key, bool fallback) {
  std::string text = m.Property(key, "");
  if (text == "true" || text == "TRUE" || text == "True") return true;
  if (text == "false" || text == "FALSE" || text == "False") return false;
  return fallback;
}

// Packs `items` into bins of at most `target` bytes, from the end, without reordering (Java's
// ListPacker with lookback 1, packEnd): the under-filled bin is the first one, which holds the
// newest manifests and is merged again later.
std::vector<std::vector<ManifestFile>> PackEnd(const std::vector<ManifestFile>& items,
                                               int64_t target) {
  std::vector<std::vector<ManifestFile>> bins;
  int64_t weight = 0;
  for (auto it = items.rbegin(); it != items.rend(); ++it) {
    if (bins.empty() || weight + it->manifest_length > target) {
      bins.emplace_back();
      weight = 0;
    }
    bins.back().push_back(*it);
    weight += it->manifest_length;
  }
  std::reverse(bins.begin(), bins.end());
  for (auto& bin : bins) std::reverse(bin.begin(), bin.end());
  return bins;
}

}  // namespace

Result<ManifestFile> ManifestMerger::MergeBin(const TableMetadata& base,
                                              const std::vector<ManifestFile>& bin,
                                              ManifestContent content, int64_t snapshot_id,
                                              int64_t seq) {
  std::vector<std::string> key;
  for (const ManifestFile& m : bin) key.push_back(m.manifest_path);
  auto cached = merged_.find(key);
  if (cached != merged_.end()) return cached->second.ForSequence(seq);

  const PartitionSpec* spec = base.FindSpec(bin.front().partition_spec_id);
  if (spec == nullptr) {
    return Status::Corruption("manifest " + bin.front().manifest_path + " has partition spec " +
                              std::to_string(bin.front().partition_spec_id) +
                              ", which the table does not have");
  }
  OwnManifest own;
  own.has_added = false;
  own.merged_from = key;
  std::vector<ManifestEntry> out;
  for (const ManifestFile& m : bin) {
    FLOE_ASSIGN_OR_RAISE(std::vector<ManifestEntry> entries, ReadManifest(file_io_, m, base));
    bool own_manifest = m.added_snapshot_id == snapshot_id;
    for (ManifestEntry& e : entries) {
      if (e.status == EntryStatus::kDeleted) continue;  // deletes of earlier snapshots are dropped
      if (own_manifest && e.status == EntryStatus::kAdded && e.snapshot_id == snapshot_id) {
        // Still an add of this snapshot: keep inheriting, so a retry can reuse the file.
        e.sequence_number.reset();
        e.file_sequence_number.reset();
        own.has_added = true;
      } else {
        e.status = EntryStatus::kExisting;
        int64_t s = e.sequence_number.value_or(0);
        own.min_other_seq = own.min_other_seq ? std::min(*own.min_other_seq, s) : s;
      }
      out.push_back(std::move(e));
    }
  }
  FLOE_ASSIGN_OR_RAISE(own.file, write_(base.current_schema(), *spec, content, out));
  ManifestFile result = own.ForSequence(seq);
  merged_.emplace(std::move(key), std::move(own));
  return result;
}

Result<ManifestMerger::Merged> ManifestMerger::Merge(const TableMetadata& base,
                                                     std::vector<ManifestFile> manifests,
                                                     ManifestContent content, int64_t snapshot_id,
                                                     int64_t seq) {
  Merged out;
  if (manifests.empty() || !BoolProperty(base, kMergeEnabled, true)) {
    out.manifests = std::move(manifests);
    return out;
  }
  const int64_t min_count = IntProperty(base, kMinCountToMerge, kMinCountToMergeDefault);
  const int64_t target = IntProperty(base, kTargetSizeBytes, kTargetSizeBytesDefault);
  const std::string first = manifests.front().manifest_path;

  // Newest spec first, as Java orders the groups.
  std::map<int32_t, std::vector<ManifestFile>, std::greater<>> groups;
  for (ManifestFile& m : manifests) groups[m.partition_spec_id].push_back(std::move(m));

  for (auto& [spec_id, group] : groups) {
    for (std::vector<ManifestFile>& bin : PackEnd(group, target)) {
      bool has_first = std::any_of(bin.begin(), bin.end(),
                                   [&](const ManifestFile& m) { return m.manifest_path == first; });
      if (bin.size() == 1 || (has_first && static_cast<int64_t>(bin.size()) < min_count)) {
        for (ManifestFile& m : bin) out.manifests.push_back(std::move(m));
        continue;
      }
      FLOE_ASSIGN_OR_RAISE(ManifestFile merged, MergeBin(base, bin, content, snapshot_id, seq));
      for (const ManifestFile& m : bin) {
        if (m.added_snapshot_id != snapshot_id) ++out.replaced;
      }
      out.manifests.push_back(std::move(merged));
    }
  }
  return out;
}

}  // namespace floe::iceberg::internal

#pragma once

// Manifest merging for CommitSnapshot (snapshot_update.cc). Internal to floe_iceberg.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/manifest.h"
#include "floe/iceberg/partition_spec.h"
#include "floe/iceberg/schema.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/io/file_io.h"

namespace floe::iceberg::internal {

// A manifest a commit wrote, with what is needed to describe it for any attempt's sequence
// number.
struct OwnManifest {
  ManifestFile file;
  bool has_added = true;                 // holds ADDED entries of this snapshot (inherit seq)
  std::optional<int64_t> min_other_seq;  // smallest data seq of its other live entries
  std::vector<std::string> merged_from;  // empty for the new manifests

  ManifestFile ForSequence(int64_t seq) const {
    ManifestFile out = file;
    out.sequence_number = seq;
    int64_t min = min_other_seq.value_or(seq);
    out.min_sequence_number = has_added ? std::min(min, seq) : min;
    return out;
  }
};

// Merges the manifests of one commit's new manifest list (CommitSnapshot describes the rule and
// the table properties that set it): per content kind and spec, manifests are packed in list
// order into bins of up to the target size, and a bin of several manifests is rewritten into
// one, except the bin holding the newest manifest while it has fewer than min-count manifests.
// A merged manifest is kept by the paths it merged, so a retried attempt whose bins did not
// change reuses the file. One per commit; not thread-safe.
class ManifestMerger {
 public:
  // Writes `entries` into a new manifest of the commit (the commit names the file and removes
  // it if the commit fails) and describes it.
  using WriteFn = std::function<Result<ManifestFile>(
      const Schema& schema, const PartitionSpec& spec, ManifestContent content,
      const std::vector<ManifestEntry>& entries)>;

  // Manifests are read with `file_io` (the table's catalog's).
  ManifestMerger(io::FileIO file_io, WriteFn write)
      : file_io_(std::move(file_io)), write_(std::move(write)) {}

  struct Merged {
    std::vector<ManifestFile> manifests;
    int replaced = 0;  // manifests of earlier snapshots merged into new ones
  };

  // Merges `manifests`, all of `content`: the commit's new ones first, then the parent's. The
  // commit's snapshot is `snapshot_id` with sequence number `seq`.
  Result<Merged> Merge(const TableMetadata& base, std::vector<ManifestFile> manifests,
                       ManifestContent content, int64_t snapshot_id, int64_t seq);

  // Forgets the merged manifests (their files are the commit's to remove), as when the commit
  // starts over with a new snapshot id.
  void Clear() { merged_.clear(); }

 private:
  Result<ManifestFile> MergeBin(const TableMetadata& base, const std::vector<ManifestFile>& bin,
                                ManifestContent content, int64_t snapshot_id, int64_t seq);

  io::FileIO file_io_;
  WriteFn write_;
  std::map<std::vector<std::string>, OwnManifest> merged_;  // by the paths merged
};

}  // namespace floe::iceberg::internal

#include "floe/iceberg/maintenance.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "floe/common/crash_point.h"
#include "floe/common/log.h"
#include "floe/iceberg/commit_internal.h"
#include "floe/iceberg/commit_markers.h"
#include "floe/iceberg/manifest_io.h"
#include "floe/iceberg/table_paths.h"
#include "floe/io/file.h"

namespace floe::iceberg {
namespace {

using internal::IntProperty;
using internal::NowMs;

// Ancestors of `head` (itself first), as far as the parent links reach a known snapshot.
std::vector<const Snapshot*> Ancestry(const TableMetadata& m, std::optional<int64_t> head) {
  std::vector<const Snapshot*> out;
  const Snapshot* s = head ? m.FindSnapshot(*head) : nullptr;
  while (s != nullptr && out.size() <= m.snapshots.size()) {
    out.push_back(s);
    s = s->parent_snapshot_id ? m.FindSnapshot(*s->parent_snapshot_id) : nullptr;
  }
  return out;
}

// The ids of the snapshots to keep (see ExpireSnapshots).
std::set<int64_t> SnapshotsToKeep(const TableMetadata& m, int64_t older_than_ms,
                                  int64_t retain_last, int64_t now_ms) {
  std::set<int64_t> keep;
  if (m.current_snapshot_id) keep.insert(*m.current_snapshot_id);
  for (const auto& [name, ref] : m.refs) {
    keep.insert(ref.snapshot_id);
    if (ref.type != "branch") continue;
    // A branch's own min-snapshots-to-keep and max-snapshot-age-ms keep more of its ancestry.
    const int64_t newest = std::max<int64_t>(retain_last, ref.min_snapshots_to_keep.value_or(1));
    const int64_t young = ref.max_snapshot_age_ms ? now_ms - *ref.max_snapshot_age_ms : INT64_MAX;
    std::vector<const Snapshot*> chain = Ancestry(m, ref.snapshot_id);
    for (size_t i = 0; i < chain.size(); ++i) {
      if (static_cast<int64_t>(i) < newest || chain[i]->timestamp_ms >= young) {
        keep.insert(chain[i]->snapshot_id);
      }
    }
  }
  for (const Snapshot& s : m.snapshots) {
    if (s.timestamp_ms >= older_than_ms) keep.insert(s.snapshot_id);
  }
  // floe's restore markers: the newest snapshot of each sink id in the main ancestry, and the
  // chain from the current snapshot down to the oldest of them.
  auto main = m.refs.find("main");
  std::vector<const Snapshot*> chain =
      Ancestry(m, main != m.refs.end() ? std::optional<int64_t>(main->second.snapshot_id)
                                       : m.current_snapshot_id);
  std::set<std::string> sinks;
  size_t deepest = 0;
  bool any = false;
  for (size_t i = 0; i < chain.size(); ++i) {
    auto sink = chain[i]->summary.find(kSummarySinkId);
    if (sink != chain[i]->summary.end() && sinks.insert(sink->second).second) {
      deepest = i;
      any = true;
    }
  }
  if (any) {
    for (size_t i = 0; i <= deepest; ++i) keep.insert(chain[i]->snapshot_id);
  }
  return keep;
}

// Removes a file given as URI or path; counts its size, or a failure. Already missing is fine.
void Remove(const io::FileIO& file_io, const std::string& uri_or_path, int64_t* counter,
            ExpireResult* result) {
  std::string path = uri_or_path;
  if (uri_or_path.rfind("file:", 0) == 0) {
    Result<std::string> local = UriToPath(uri_or_path);
    if (!local.ok()) {
      ++result->files_not_deleted;
      return;
    }
    path = *local;
  }
  if (!file_io.Exists(path)) return;
  Result<uint64_t> size = file_io.FileSize(path);
  Status st = file_io.RemoveFile(path);
  if (!st.ok()) {
    if (!st.IsNotFound()) ++result->files_not_deleted;
    return;
  }
  ++*counter;
  if (size.ok()) result->bytes_deleted += static_cast<int64_t>(*size);
  CrashPoint("expire-mid-delete");
}

// Removes the files only `expired` snapshots reference, given the metadata just committed
// (and `base`, the metadata before it, for the statistics files registered for them).
Status DeleteExpiredFiles(const io::FileIO& file_io, const TableMetadata& base,
                          const TableMetadata& committed, const std::vector<Snapshot>& expired,
                          const MaintenanceProgressFn& on_progress, ExpireResult* result) {
  // Everything retained snapshots reference. Failing here removes nothing.
  std::set<std::string> retained_manifests;
  std::set<std::string> live;
  std::map<std::string, FileContent> candidates;
  for (const Snapshot& s : committed.snapshots) {
    FLOE_ASSIGN_OR_RAISE(std::vector<ManifestFile> list,
                         ReadManifestList(file_io, s.manifest_list));
    for (const ManifestFile& mf : list) {
      if (!retained_manifests.insert(mf.manifest_path).second) continue;
      FLOE_ASSIGN_OR_RAISE(std::vector<ManifestEntry> entries,
                           ReadManifest(file_io, mf, committed));
      for (const ManifestEntry& e : entries) {
        if (e.status == EntryStatus::kDeleted) {
          candidates.emplace(e.data_file.file_path, e.data_file.content);
        } else {
          live.insert(e.data_file.file_path);
        }
      }
    }
  }
  // What the expired snapshots reference beyond that.
  std::set<std::string> expired_manifests;
  for (const Snapshot& s : expired) {
    FLOE_ASSIGN_OR_RAISE(std::vector<ManifestFile> list,
                         ReadManifestList(file_io, s.manifest_list));
    for (const ManifestFile& mf : list) {
      if (retained_manifests.count(mf.manifest_path) > 0 ||
          !expired_manifests.insert(mf.manifest_path).second) {
        continue;
      }
      FLOE_ASSIGN_OR_RAISE(std::vector<ManifestEntry> entries,
                           ReadManifest(file_io, mf, committed));
      for (const ManifestEntry& e : entries) {
        candidates.emplace(e.data_file.file_path, e.data_file.content);
      }
    }
  }
  // Data and delete files, then manifests, then manifest lists; each with its counter. Listed
  // first so that progress has a total.
  std::vector<std::pair<std::string, int64_t*>> doomed;
  for (const auto& [path, content] : candidates) {
    if (live.count(path) > 0) continue;
    doomed.emplace_back(path, content == FileContent::kData ? &result->data_files_deleted
                                                            : &result->delete_files_deleted);
  }
  for (const std::string& path : expired_manifests) {
    doomed.emplace_back(path, &result->manifests_deleted);
  }
  for (const Snapshot& s : expired) {
    doomed.emplace_back(s.manifest_list, &result->manifest_lists_deleted);
  }
  std::set<std::string> kept_statistics;
  for (const auto* files : {&committed.statistics, &committed.partition_statistics}) {
    for (const StatisticsFile& f : *files) kept_statistics.insert(f.path);
  }
  for (const auto* files : {&base.statistics, &base.partition_statistics}) {
    for (const StatisticsFile& f : *files) {
      if (committed.FindSnapshot(f.snapshot_id) == nullptr && kept_statistics.count(f.path) == 0) {
        doomed.emplace_back(f.path, &result->statistics_files_deleted);
      }
    }
  }
  MaintenanceProgress progress;
  progress.files_total = static_cast<int64_t>(doomed.size());
  if (on_progress) on_progress(progress);
  for (const auto& [path, counter] : doomed) {
    if (!IsInsideLocation(committed.location, path)) {
      // A commit may name any path; floe deletes only the table's own files.
      LogWarn("expire snapshots: '%s' is not inside the table's location '%s'; not deleted",
              path.c_str(), committed.location.c_str());
      ++result->files_outside_skipped;
    } else {
      Remove(file_io, path, counter, result);
    }
    if (on_progress) {
      ++progress.files_done;
      progress.bytes_done = result->bytes_deleted;
      on_progress(progress);
    }
  }
  return Status::OK();
}

}  // namespace

Result<ExpireResult> ExpireSnapshots(Catalog& catalog, const TableIdentifier& id,
                                     const ExpireOptions& options) {
  FLOE_ASSIGN_OR_RAISE(LoadedTable table, catalog.LoadTable(id));
  const int64_t retries = options.num_retries
                              ? *options.num_retries
                              : IntProperty(table.metadata, internal::kNumRetriesProperty,
                                            internal::kNumRetriesDefault);
  const std::string context = "expire snapshots of " + id.ToString();
  ExpireResult result;
  for (int attempt = 1;; ++attempt) {
    const TableMetadata& base = table.metadata;
    const int64_t older_than =
        options.older_than_ms
            ? *options.older_than_ms
            : NowMs() - IntProperty(base, kMaxSnapshotAgeMs, kMaxSnapshotAgeMsDefault);
    const int64_t retain_last = std::max<int64_t>(
        1, options.retain_last
               ? *options.retain_last
               : IntProperty(base, kMinSnapshotsToKeep, kMinSnapshotsToKeepDefault));
    // Branches and tags (never main) whose snapshot is older than their max-ref-age-ms (the
    // table's history.expire.max-ref-age-ms when they set none) go first.
    TableMetadata updated = base;
    const int64_t max_ref_age = IntProperty(base, kMaxRefAgeMs, INT64_MAX);
    const int64_t now = NowMs();
    result.refs_removed.clear();
    std::erase_if(updated.refs, [&](const auto& ref) {
      const Snapshot* s = base.FindSnapshot(ref.second.snapshot_id);
      const int64_t max_age = ref.second.max_ref_age_ms.value_or(max_ref_age);
      bool old = ref.first != "main" && s != nullptr && max_age != INT64_MAX &&
                 now - s->timestamp_ms > max_age;
      if (old) result.refs_removed.push_back(ref.first);
      return old;
    });
    const std::set<int64_t> keep = SnapshotsToKeep(updated, older_than, retain_last, now);

    std::vector<Snapshot> expired;
    std::vector<int64_t> expired_ids;
    for (const Snapshot& s : base.snapshots) {
      if (keep.count(s.snapshot_id) > 0) continue;
      expired.push_back(s);
      expired_ids.push_back(s.snapshot_id);
    }
    updated.RemoveSnapshots(expired_ids);
    result.snapshots_kept = static_cast<int64_t>(updated.snapshots.size());
    if (expired.empty() && result.refs_removed.empty()) return result;

    result.commit_attempts = attempt;
    Result<LoadedTable> committed = catalog.CommitTable(table, std::move(updated));
    if (committed.ok()) {
      std::sort(expired.begin(), expired.end(), [](const Snapshot& a, const Snapshot& b) {
        return a.timestamp_ms != b.timestamp_ms ? a.timestamp_ms < b.timestamp_ms
                                                : a.sequence_number < b.sequence_number;
      });
      for (const Snapshot& s : expired) result.expired_snapshot_ids.push_back(s.snapshot_id);
      CrashPoint("expire-after-commit-before-delete");
      Status st = DeleteExpiredFiles(catalog.file_io(), base, committed->metadata, expired,
                                     options.progress, &result);
      if (!st.ok()) return st.WithContext(context + ": snapshots expired, files kept");
      return result;
    }
    if (!committed.status().IsConflict()) {
      return committed.status().WithContext(context + " (outcome unknown, files kept)");
    }
    if (attempt > retries) {
      return Status::Conflict(context + " failed after " + std::to_string(attempt) +
                              " attempts: " + committed.status().message());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10 * attempt));
    FLOE_ASSIGN_OR_RAISE(table, catalog.LoadTable(id));
  }
}

}  // namespace floe::iceberg

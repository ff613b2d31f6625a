#include "floe/iceberg/snapshot_update.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <thread>
#include <utility>

#include "floe/iceberg/commit_internal.h"
#include "floe/iceberg/manifest_io.h"
#include "floe/io/file.h"

namespace floe::iceberg {
namespace {

using internal::IntProperty;
using internal::NewSnapshotId;
using internal::NewUuid;
using internal::NowMs;
using internal::Random64;

using Clock = std::chrono::steady_clock;

// Table properties (Iceberg's names and defaults, TableProperties.java).
constexpr char kMinWaitMs[] = "commit.retry.min-wait-ms";
constexpr int64_t kMinWaitMsDefault = 100;
constexpr char kMaxWaitMs[] = "commit.retry.max-wait-ms";
constexpr int64_t kMaxWaitMsDefault = 60 * 1000;
constexpr char kTotalTimeoutMs[] = "commit.retry.total-timeout-ms";
constexpr int64_t kTotalTimeoutMsDefault = 30 * 60 * 1000;
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

std::optional<int64_t> ParseLong(const std::map<std::string, std::string>& m,
                                 const std::string& key) {
  auto it = m.find(key);
  if (it == m.end()) return std::nullopt;
  int64_t v = 0;
  const std::string& t = it->second;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || ptr != t.data() + t.size()) return std::nullopt;
  return v;
}

Status ValidateChanges(const SnapshotChanges& changes) {
  for (const DataFile& f : changes.added_data_files) {
    if (f.content != FileContent::kData) {
      return Status::InvalidArgument("added data file " + f.file_path +
                                     " has delete content; pass it as a delete file");
    }
  }
  for (const DataFile& f : changes.added_delete_files) {
    if (f.content == FileContent::kData) {
      return Status::InvalidArgument("added delete file " + f.file_path + " has data content");
    }
    if (f.content == FileContent::kEqualityDeletes && f.equality_ids.empty()) {
      return Status::InvalidArgument("equality delete file " + f.file_path +
                                     " without equality_ids");
    }
  }
  for (const auto* files : {&changes.added_data_files, &changes.added_delete_files}) {
    for (const DataFile& f : *files) {
      if (f.file_path.empty() || f.record_count < 0 || f.file_size_in_bytes < 0) {
        return Status::InvalidArgument("file \"" + f.file_path +
                                       "\": empty path or negative record count / size");
      }
    }
  }
  return Status::OK();
}

// A manifest this commit wrote, with what is needed to describe it for any attempt's sequence
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

class SnapshotCommitter {
 public:
  SnapshotCommitter(Catalog& catalog, const TableIdentifier& id, const SnapshotChanges& changes,
                    const CommitOptions& options)
      : catalog_(catalog), id_(id), changes_(changes), options_(options) {}

  Result<Snapshot> Run();

 private:
  struct Attempt {
    Snapshot snapshot;
    TableMetadata updated;
    std::set<std::string> referenced;  // manifest paths (URIs) in the new list
    std::string list_path;             // local path
  };

  Result<Attempt> Apply(const TableMetadata& base, int attempt);
  Status WriteNewManifests(const TableMetadata& base);
  Result<std::vector<ManifestFile>> Merge(const TableMetadata& base,
                                          std::vector<ManifestFile> manifests,
                                          ManifestContent content, int64_t seq);
  Result<ManifestFile> MergeBin(const TableMetadata& base, const std::vector<ManifestFile>& bin,
                                ManifestContent content, int64_t seq);
  std::string NextManifestPath() {
    return io::JoinPath(metadata_dir_,
                        NewUuid() + "-m" + std::to_string(manifest_count_++) + ".avro");
  }
  std::map<std::string, std::string> Summary(const TableMetadata& base,
                                             const std::vector<ManifestFile>& final_list) const;
  // Removes every file this commit wrote except the manifests in `keep` (URIs).
  void Cleanup(const std::set<std::string>& keep, const std::string& keep_list);

  Catalog& catalog_;
  const TableIdentifier& id_;
  const SnapshotChanges& changes_;
  const CommitOptions& options_;

  std::string metadata_dir_;
  int64_t snapshot_id_ = 0;
  int manifest_count_ = 0;
  bool new_written_ = false;
  std::vector<OwnManifest> new_manifests_;
  std::map<std::vector<std::string>, OwnManifest> merged_;  // by the paths merged
  std::vector<std::string> written_;                        // local paths, all attempts
  int replaced_ = 0;                                        // of the current attempt
};

Result<Snapshot> SnapshotCommitter::Run() {
  FLOE_RETURN_NOT_OK(ValidateChanges(changes_));
  FLOE_ASSIGN_OR_RAISE(LoadedTable table, catalog_.LoadTable(id_));
  const TableMetadata& first = table.metadata;
  FLOE_ASSIGN_OR_RAISE(std::string location, UriToPath(first.location));
  metadata_dir_ = io::JoinPath(location, "metadata");
  snapshot_id_ = NewSnapshotId(first);

  const int64_t retries = options_.num_retries ? *options_.num_retries
                                               : IntProperty(first, internal::kNumRetriesProperty,
                                                             internal::kNumRetriesDefault);
  const std::chrono::milliseconds min_wait = options_.min_wait.value_or(
      std::chrono::milliseconds(IntProperty(first, kMinWaitMs, kMinWaitMsDefault)));
  const std::chrono::milliseconds max_wait = options_.max_wait.value_or(
      std::chrono::milliseconds(IntProperty(first, kMaxWaitMs, kMaxWaitMsDefault)));
  const std::chrono::milliseconds total_timeout = options_.total_timeout.value_or(
      std::chrono::milliseconds(IntProperty(first, kTotalTimeoutMs, kTotalTimeoutMsDefault)));
  const Clock::time_point deadline = Clock::now() + total_timeout;

  for (int attempt = 1;; ++attempt) {
    if (options_.validate) {
      Status st = options_.validate(table.metadata);
      if (!st.ok()) {
        Cleanup({}, "");
        return st;
      }
    }
    Result<Attempt> applied = Apply(table.metadata, attempt);
    if (!applied.ok()) {
      Cleanup({}, "");
      return applied.status().WithContext("commit to " + id_.ToString());
    }
    Result<LoadedTable> committed = catalog_.CommitTable(table, applied->updated);
    if (committed.ok()) {
      Cleanup(applied->referenced, applied->list_path);
      return applied->snapshot;
    }
    if (!committed.status().IsConflict()) {
      // The new metadata may or may not be in place: keep every file.
      return committed.status().WithContext("commit to " + id_.ToString() +
                                            " (outcome unknown, files kept)");
    }
    std::chrono::milliseconds wait = max_wait;
    if (attempt - 1 < 30) wait = std::min(max_wait, min_wait * (int64_t{1} << (attempt - 1)));
    wait += std::chrono::milliseconds(
        static_cast<int64_t>(Random64() % static_cast<uint64_t>(wait.count() / 10 + 1)));
    if (attempt > retries || Clock::now() + wait > deadline) {
      Cleanup({}, "");
      return Status::Conflict("commit to " + id_.ToString() + " failed after " +
                              std::to_string(attempt) +
                              " attempts: " + committed.status().message());
    }
    std::this_thread::sleep_for(wait);
    Result<LoadedTable> reloaded = catalog_.LoadTable(id_);
    if (!reloaded.ok()) {
      Cleanup({}, "");
      return reloaded.status().WithContext("commit to " + id_.ToString());
    }
    table = std::move(reloaded).value();
  }
}

Status SnapshotCommitter::WriteNewManifests(const TableMetadata& base) {
  const Schema& schema = base.current_schema();
  for (ManifestContent content : {ManifestContent::kData, ManifestContent::kDeletes}) {
    const std::vector<DataFile>& files =
        content == ManifestContent::kData ? changes_.added_data_files : changes_.added_delete_files;
    std::map<int32_t, std::vector<ManifestEntry>> by_spec;
    for (const DataFile& f : files) {
      ManifestEntry e;
      e.status = EntryStatus::kAdded;
      e.snapshot_id = snapshot_id_;
      e.data_file = f;
      by_spec[f.spec_id].push_back(std::move(e));
    }
    for (auto& [spec_id, entries] : by_spec) {
      const PartitionSpec* spec = base.FindSpec(spec_id);
      if (spec == nullptr) {
        return Status::InvalidArgument("file " + entries.front().data_file.file_path +
                                       " has partition spec " + std::to_string(spec_id) +
                                       ", which the table does not have");
      }
      std::string path = NextManifestPath();
      Result<ManifestFile> mf = WriteManifest(path, schema, *spec, content, snapshot_id_, entries);
      if (!mf.ok()) {
        if (!mf.status().IsAlreadyExists()) written_.push_back(path);
        return mf.status();
      }
      written_.push_back(path);
      OwnManifest own;
      own.file = std::move(mf).value();
      new_manifests_.push_back(std::move(own));
    }
  }
  new_written_ = true;
  return Status::OK();
}

Result<ManifestFile> SnapshotCommitter::MergeBin(const TableMetadata& base,
                                                 const std::vector<ManifestFile>& bin,
                                                 ManifestContent content, int64_t seq) {
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
    FLOE_ASSIGN_OR_RAISE(std::vector<ManifestEntry> entries, ReadManifest(m, base));
    bool own_manifest = m.added_snapshot_id == snapshot_id_;
    for (ManifestEntry& e : entries) {
      if (e.status == EntryStatus::kDeleted) continue;  // deletes of earlier snapshots are dropped
      if (own_manifest && e.status == EntryStatus::kAdded && e.snapshot_id == snapshot_id_) {
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
  std::string path = NextManifestPath();
  Result<ManifestFile> mf =
      WriteManifest(path, base.current_schema(), *spec, content, snapshot_id_, out);
  if (!mf.ok()) {
    if (!mf.status().IsAlreadyExists()) written_.push_back(path);
    return mf.status();
  }
  written_.push_back(path);
  own.file = std::move(mf).value();
  ManifestFile result = own.ForSequence(seq);
  merged_.emplace(std::move(key), std::move(own));
  return result;
}

Result<std::vector<ManifestFile>> SnapshotCommitter::Merge(const TableMetadata& base,
                                                           std::vector<ManifestFile> manifests,
                                                           ManifestContent content, int64_t seq) {
  if (manifests.empty() || !BoolProperty(base, kMergeEnabled, true)) return manifests;
  const int64_t min_count = IntProperty(base, kMinCountToMerge, kMinCountToMergeDefault);
  const int64_t target = IntProperty(base, kTargetSizeBytes, kTargetSizeBytesDefault);
  const std::string first = manifests.front().manifest_path;

  // Newest spec first, as Java orders the groups.
  std::map<int32_t, std::vector<ManifestFile>, std::greater<>> groups;
  for (ManifestFile& m : manifests) groups[m.partition_spec_id].push_back(std::move(m));

  std::vector<ManifestFile> out;
  for (auto& [spec_id, group] : groups) {
    for (std::vector<ManifestFile>& bin : PackEnd(group, target)) {
      bool has_first = std::any_of(bin.begin(), bin.end(),
                                   [&](const ManifestFile& m) { return m.manifest_path == first; });
      if (bin.size() == 1 || (has_first && static_cast<int64_t>(bin.size()) < min_count)) {
        for (ManifestFile& m : bin) out.push_back(std::move(m));
        continue;
      }
      FLOE_ASSIGN_OR_RAISE(ManifestFile merged, MergeBin(base, bin, content, seq));
      for (const ManifestFile& m : bin) {
        if (m.added_snapshot_id != snapshot_id_) ++replaced_;
      }
      out.push_back(std::move(merged));
    }
  }
  return out;
}

std::map<std::string, std::string> SnapshotCommitter::Summary(
    const TableMetadata& base, const std::vector<ManifestFile>& final_list) const {
  int64_t added_data_files = 0, added_records = 0, added_size = 0;
  int64_t added_delete_files = 0, added_eq_delete_files = 0, added_pos_delete_files = 0;
  int64_t added_eq_deletes = 0, added_pos_deletes = 0;
  std::set<std::string> changed_partitions;
  const Schema& schema = base.current_schema();
  for (const auto* files : {&changes_.added_data_files, &changes_.added_delete_files}) {
    for (const DataFile& f : *files) {
      added_size += f.file_size_in_bytes;
      switch (f.content) {
        case FileContent::kData:
          ++added_data_files;
          added_records += f.record_count;
          break;
        case FileContent::kPositionDeletes:
          ++added_delete_files;
          ++added_pos_delete_files;
          added_pos_deletes += f.record_count;
          break;
        case FileContent::kEqualityDeletes:
          ++added_delete_files;
          ++added_eq_delete_files;
          added_eq_deletes += f.record_count;
          break;
      }
      // Java keys changed partitions by the partition path alone.
      const PartitionSpec* spec = base.FindSpec(f.spec_id);
      changed_partitions.insert(spec != nullptr ? spec->PartitionPath(schema, f.partition) : "");
    }
  }

  std::map<std::string, std::string> s = changes_.summary_properties;
  auto set_if = [&s](bool cond, const char* key, int64_t v) {
    if (cond) {
      s[key] = std::to_string(v);
    } else {
      s.erase(key);
    }
  };
  set_if(added_data_files > 0, "added-data-files", added_data_files);
  set_if(added_delete_files > 0, "added-delete-files", added_delete_files);
  set_if(added_eq_delete_files > 0, "added-equality-delete-files", added_eq_delete_files);
  set_if(added_pos_delete_files > 0, "added-position-delete-files", added_pos_delete_files);
  set_if(added_size > 0, "added-files-size", added_size);
  set_if(added_records > 0, "added-records", added_records);
  set_if(added_pos_deletes > 0, "added-position-deletes", added_pos_deletes);
  set_if(added_eq_deletes > 0, "added-equality-deletes", added_eq_deletes);
  s["changed-partition-count"] = std::to_string(changed_partitions.size());

  // Totals: the parent's plus this snapshot's additions; a total the parent lacks (or that does
  // not parse) is left out, and a table without snapshots starts from zero (as Java does).
  const Snapshot* parent = base.current_snapshot();
  std::map<std::string, std::string> previous;
  if (parent != nullptr) {
    previous = parent->summary;
  } else {
    for (const char* key :
         {"total-records", "total-files-size", "total-data-files", "total-delete-files",
          "total-position-deletes", "total-equality-deletes"}) {
      previous[key] = "0";
    }
  }
  auto total = [&](const char* key, int64_t added) {
    std::optional<int64_t> prev = ParseLong(previous, key);
    if (prev && *prev + added >= 0) {
      s[key] = std::to_string(*prev + added);
    } else {
      s.erase(key);
    }
  };
  total("total-records", added_records);
  total("total-files-size", added_size);
  total("total-data-files", added_data_files);
  total("total-delete-files", added_delete_files);
  total("total-position-deletes", added_pos_deletes);
  total("total-equality-deletes", added_eq_deletes);

  int64_t created = 0;
  for (const ManifestFile& m : final_list) created += m.added_snapshot_id == snapshot_id_;
  s["manifests-created"] = std::to_string(created);
  s["manifests-kept"] = std::to_string(static_cast<int64_t>(final_list.size()) - created);
  s["manifests-replaced"] = std::to_string(replaced_);

  const bool adds_data = !changes_.added_data_files.empty();
  const bool adds_deletes = !changes_.added_delete_files.empty();
  s["operation"] = adds_deletes ? (adds_data ? "overwrite" : "delete") : "append";
  return s;
}

Result<SnapshotCommitter::Attempt> SnapshotCommitter::Apply(const TableMetadata& base,
                                                            int attempt) {
  if (base.FindSnapshot(snapshot_id_) != nullptr) {
    // Someone took our id meanwhile (p ~ 2^-63): start over with a new one.
    Cleanup({}, "");
    written_.clear();
    new_manifests_.clear();
    merged_.clear();
    new_written_ = false;
    snapshot_id_ = NewSnapshotId(base);
  }
  if (!new_written_) FLOE_RETURN_NOT_OK(WriteNewManifests(base));
  replaced_ = 0;

  const int64_t seq = base.last_sequence_number + 1;
  const Snapshot* parent = base.current_snapshot();
  std::vector<ManifestFile> parent_manifests;
  if (parent != nullptr) {
    FLOE_ASSIGN_OR_RAISE(parent_manifests, ReadManifestList(parent->manifest_list));
  }

  std::vector<ManifestFile> final_list;
  for (ManifestContent content : {ManifestContent::kData, ManifestContent::kDeletes}) {
    std::vector<ManifestFile> list;
    for (const OwnManifest& m : new_manifests_) {
      if (m.file.content == content) list.push_back(m.ForSequence(seq));
    }
    for (const ManifestFile& m : parent_manifests) {
      if (m.content == content) list.push_back(m);
    }
    FLOE_ASSIGN_OR_RAISE(std::vector<ManifestFile> merged,
                         Merge(base, std::move(list), content, seq));
    for (ManifestFile& m : merged) final_list.push_back(std::move(m));
  }

  Attempt a;
  a.list_path =
      io::JoinPath(metadata_dir_, "snap-" + std::to_string(snapshot_id_) + "-" +
                                      std::to_string(attempt) + "-" + NewUuid() + ".avro");
  std::optional<int64_t> parent_id;
  if (parent != nullptr) parent_id = parent->snapshot_id;
  Status st = WriteManifestList(a.list_path, snapshot_id_, parent_id, seq, final_list);
  if (!st.IsAlreadyExists()) written_.push_back(a.list_path);
  FLOE_RETURN_NOT_OK(st);
  for (const ManifestFile& m : final_list) a.referenced.insert(m.manifest_path);

  Snapshot& snap = a.snapshot;
  snap.snapshot_id = snapshot_id_;
  snap.parent_snapshot_id = parent_id;
  snap.sequence_number = seq;
  snap.timestamp_ms = std::max(NowMs(), parent != nullptr ? parent->timestamp_ms : 0);
  snap.manifest_list = PathToUri(a.list_path);
  snap.summary = Summary(base, final_list);
  snap.schema_id = base.current_schema_id;

  a.updated = base;
  a.updated.snapshots.push_back(snap);
  a.updated.current_snapshot_id = snap.snapshot_id;
  a.updated.refs["main"] = SnapshotRef{snap.snapshot_id, "branch"};
  a.updated.snapshot_log.push_back(SnapshotLogEntry{snap.timestamp_ms, snap.snapshot_id});
  a.updated.last_sequence_number = seq;
  a.updated.last_updated_ms = std::max(base.last_updated_ms, snap.timestamp_ms);
  return a;
}

void SnapshotCommitter::Cleanup(const std::set<std::string>& keep, const std::string& keep_list) {
  for (const std::string& path : written_) {
    if (path == keep_list || keep.count(PathToUri(path)) != 0) continue;
    (void)io::RemoveFile(path);  // best effort: an orphan is harmless
  }
  std::vector<std::string> kept;
  for (const std::string& path : written_) {
    if (path == keep_list || keep.count(PathToUri(path)) != 0) kept.push_back(path);
  }
  written_ = std::move(kept);
}

}  // namespace

Result<Snapshot> CommitSnapshot(Catalog& catalog, const TableIdentifier& id,
                                const SnapshotChanges& changes, const CommitOptions& options) {
  SnapshotCommitter committer(catalog, id, changes, options);
  return committer.Run();
}

}  // namespace floe::iceberg

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
#include "floe/iceberg/manifest_merge_internal.h"
#include "floe/io/file.h"

namespace floe::iceberg {
namespace {

using internal::IntProperty;
using internal::NewSnapshotId;
using internal::NewUuid;
using internal::NowMs;
using internal::OwnManifest;
using internal::Random64;

using Clock = std::chrono::steady_clock;

// Table properties (Iceberg's names and defaults, TableProperties.java).
constexpr char kMinWaitMs[] = "commit.retry.min-wait-ms";
constexpr int64_t kMinWaitMsDefault = 100;
constexpr char kMaxWaitMs[] = "commit.retry.max-wait-ms";
constexpr int64_t kMaxWaitMsDefault = 60 * 1000;
constexpr char kTotalTimeoutMs[] = "commit.retry.total-timeout-ms";
constexpr int64_t kTotalTimeoutMsDefault = 30 * 60 * 1000;

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

class SnapshotCommitter {
 public:
  SnapshotCommitter(Catalog& catalog, const TableIdentifier& id, const SnapshotChanges& changes,
                    const CommitOptions& options)
      : catalog_(catalog),
        id_(id),
        changes_(changes),
        options_(options),
        merger_(catalog.file_io(),
                [this](const Schema& schema, const PartitionSpec& spec, ManifestContent content,
                       const std::vector<ManifestEntry>& entries) {
                  return WriteOwnManifest(schema, spec, content, entries);
                }) {}

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
  // Writes a manifest of this commit's snapshot, recording the file for Cleanup.
  Result<ManifestFile> WriteOwnManifest(const Schema& schema, const PartitionSpec& spec,
                                        ManifestContent content,
                                        const std::vector<ManifestEntry>& entries);
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
  internal::ManifestMerger merger_;
  std::vector<std::string> written_;  // local paths, all attempts
  int replaced_ = 0;                  // of the current attempt
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
      OwnManifest own;
      FLOE_ASSIGN_OR_RAISE(own.file, WriteOwnManifest(schema, *spec, content, entries));
      new_manifests_.push_back(std::move(own));
    }
  }
  new_written_ = true;
  return Status::OK();
}

Result<ManifestFile> SnapshotCommitter::WriteOwnManifest(
    const Schema& schema, const PartitionSpec& spec, ManifestContent content,
    const std::vector<ManifestEntry>& entries) {
  std::string path = NextManifestPath();
  Result<ManifestFile> mf =
      WriteManifest(catalog_.file_io(), path, schema, spec, content, snapshot_id_, entries);
  if (!mf.ok()) {
    if (!mf.status().IsAlreadyExists()) written_.push_back(path);
    return mf.status();
  }
  written_.push_back(path);
  return mf;
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
    merger_.Clear();
    new_written_ = false;
    snapshot_id_ = NewSnapshotId(base);
  }
  std::optional<TableMetadata> evolved;
  if (changes_.written_schema) {
    FLOE_ASSIGN_OR_RAISE(evolved, AdoptWrittenSchema(base, *changes_.written_schema));
  }
  const TableMetadata& table = evolved ? *evolved : base;
  if (!new_written_) FLOE_RETURN_NOT_OK(WriteNewManifests(table));
  replaced_ = 0;

  const int64_t seq = base.last_sequence_number + 1;
  const Snapshot* parent = base.current_snapshot();
  std::vector<ManifestFile> parent_manifests;
  if (parent != nullptr) {
    FLOE_ASSIGN_OR_RAISE(parent_manifests,
                         ReadManifestList(catalog_.file_io(), parent->manifest_list));
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
    FLOE_ASSIGN_OR_RAISE(internal::ManifestMerger::Merged merged,
                         merger_.Merge(base, std::move(list), content, snapshot_id_, seq));
    replaced_ += merged.replaced;
    for (ManifestFile& m : merged.manifests) final_list.push_back(std::move(m));
  }

  Attempt a;
  a.list_path =
      io::JoinPath(metadata_dir_, "snap-" + std::to_string(snapshot_id_) + "-" +
                                      std::to_string(attempt) + "-" + NewUuid() + ".avro");
  std::optional<int64_t> parent_id;
  if (parent != nullptr) parent_id = parent->snapshot_id;
  Status st =
      WriteManifestList(catalog_.file_io(), a.list_path, snapshot_id_, parent_id, seq, final_list);
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
  snap.schema_id = table.current_schema_id;

  a.updated = table;
  a.updated.snapshots.push_back(snap);
  a.updated.SetMain(snap.snapshot_id);
  a.updated.snapshot_log.push_back(SnapshotLogEntry{snap.timestamp_ms, snap.snapshot_id});
  a.updated.last_sequence_number = seq;
  a.updated.last_updated_ms = std::max(base.last_updated_ms, snap.timestamp_ms);
  for (const auto& [key, value] : changes_.table_properties) a.updated.properties[key] = value;
  return a;
}

void SnapshotCommitter::Cleanup(const std::set<std::string>& keep, const std::string& keep_list) {
  for (const std::string& path : written_) {
    if (path == keep_list || keep.count(PathToUri(path)) != 0) continue;
    (void)catalog_.file_io().RemoveFile(path);  // best effort: an orphan is harmless
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

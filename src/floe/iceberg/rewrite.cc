#include "floe/iceberg/rewrite.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include "floe/common/crash_point.h"
#include "floe/format/parquet/file_reader.h"
#include "floe/iceberg/commit_internal.h"
#include "floe/iceberg/data_writer.h"
#include "floe/iceberg/manifest_io.h"
#include "floe/iceberg/row_key_internal.h"
#include "floe/iceberg/scan.h"
#include "floe/iceberg/table_lease.h"
#include "floe/io/file.h"

namespace floe::iceberg {
namespace {

using internal::IntProperty;
using internal::NowMs;

constexpr char kTargetFileSize[] = "write.target-file-size-bytes";
constexpr int64_t kTargetFileSizeDefault = 512LL << 20;
constexpr char kManifestTargetSize[] = "commit.manifest.target-size-bytes";
constexpr int64_t kManifestTargetSizeDefault = 8LL << 20;

// One live (ADDED or EXISTING) entry of a snapshot, with explicit snapshot id and sequence
// numbers (ReadManifest fills inherited ones in) and the spec of its manifest.
struct LiveFile {
  ManifestEntry entry;
  ManifestContent content = ManifestContent::kData;
};

struct SnapshotFiles {
  std::vector<ManifestFile> manifests;
  std::vector<LiveFile> live;
  int64_t entries_bytes_estimate = 400;  // manifest bytes per entry, measured below
};

Result<SnapshotFiles> ReadSnapshotFiles(const io::FileIO& file_io, const TableMetadata& m,
                                        const Snapshot* snapshot) {
  SnapshotFiles out;
  if (snapshot == nullptr) return out;
  FLOE_ASSIGN_OR_RAISE(out.manifests, ReadManifestList(file_io, snapshot->manifest_list));
  int64_t bytes = 0, entries_total = 0;
  for (const ManifestFile& mf : out.manifests) {
    FLOE_ASSIGN_OR_RAISE(std::vector<ManifestEntry> entries, ReadManifest(file_io, mf, m));
    bytes += mf.manifest_length;
    entries_total += static_cast<int64_t>(entries.size());
    for (ManifestEntry& e : entries) {
      if (e.status == EntryStatus::kDeleted) continue;
      e.data_file.spec_id = mf.partition_spec_id;
      out.live.push_back(LiveFile{std::move(e), mf.content});
    }
  }
  if (entries_total > 0) out.entries_bytes_estimate = std::max<int64_t>(1, bytes / entries_total);
  return out;
}

// Counts of a set of live files, as the snapshot summary names them.
struct FileTotals {
  int64_t data_files = 0, delete_files = 0, records = 0, bytes = 0, data_bytes = 0;
  int64_t position_deletes = 0, equality_deletes = 0;

  void Add(const DataFile& d) {
    bytes += d.file_size_in_bytes;
    if (d.content == FileContent::kData) {
      ++data_files;
      records += d.record_count;
      data_bytes += d.file_size_in_bytes;
    } else {
      ++delete_files;
      (d.content == FileContent::kPositionDeletes ? position_deletes : equality_deletes) +=
          d.record_count;
    }
  }
};

FileTotals CountFiles(const SnapshotFiles& files) {
  FileTotals c;
  for (const LiveFile& f : files.live) c.Add(f.entry.data_file);
  return c;
}

// The data file paths a position delete file targets.
Result<std::set<std::string>> PositionDeleteTargets(const io::FileIO& file_io,
                                                    const DataFile& file) {
  FLOE_ASSIGN_OR_RAISE(std::string path, UriToPath(file.file_path));
  FLOE_ASSIGN_OR_RAISE(auto reader, parquet::FileReader::Open(file_io, path));
  FLOE_ASSIGN_OR_RAISE(RecordBatch batch, reader->ReadAll());
  std::set<std::string> out;
  for (size_t c = 0; c < batch.schema()->fields.size(); ++c) {
    if (batch.schema()->fields[c].field_id != kDeleteFilePathFieldId) continue;
    const Column& col = batch.column(static_cast<int>(c));
    if (col.type().id != TypeId::kString) break;
    for (size_t r = 0; r < batch.num_rows(); ++r) {
      if (!col.IsNull(r)) out.insert(std::string(col.GetBytes(r)));
    }
    return out;
  }
  return Status::Corruption("position delete file " + file.file_path +
                            " lacks file_path (id 2147483546, string)");
}

// What one "replace" snapshot changes.
struct ReplaceChanges {
  std::set<std::string> removed;  // paths (URIs) of live data and delete files to remove
  std::vector<DataFile> added;    // new data files
  // Data sequence number of the added files; and the snapshot the change was planned on (both
  // unset for a manifest-only rewrite).
  std::optional<int64_t> data_sequence_number;
  std::optional<int64_t> starting_snapshot_id;
};

// Validation failures that a retry cannot fix.
Status NotRetryable(const std::string& message) { return Status::Conflict(message); }

class ReplaceCommitter {
 public:
  ReplaceCommitter(Catalog& catalog, const TableIdentifier& id, const ReplaceChanges& changes,
                   RewriteResult* result)
      : catalog_(catalog), id_(id), changes_(changes), result_(result) {}

  // Commits, retrying on Conflict up to `retries` times. `first` is the table as loaded by
  // the caller.
  Result<Snapshot> Run(LoadedTable first, int64_t retries);
  // After a failed Run: the catalog's answer left the outcome open (files must stay).
  bool outcome_unknown() const { return outcome_unknown_; }

 private:
  struct Attempt {
    TableMetadata updated;
    Snapshot snapshot;
    int64_t manifests = 0;
  };
  Result<Attempt> Apply(const TableMetadata& base, int attempt);
  Status Validate(const TableMetadata& base, const SnapshotFiles& files) const;
  void RemoveWritten() {
    for (const std::string& p : written_) (void)catalog_.file_io().RemoveFile(p);
    written_.clear();
  }

  Catalog& catalog_;
  const TableIdentifier& id_;
  const ReplaceChanges& changes_;
  RewriteResult* result_;
  std::vector<std::string> written_;  // this attempt's manifests and list (local paths)
  bool outcome_unknown_ = false;
};

Result<Snapshot> ReplaceCommitter::Run(LoadedTable table, int64_t retries) {
  const std::string context = "rewrite of " + id_.ToString();
  for (int attempt = 1;; ++attempt) {
    result_->commit_attempts = attempt;
    Result<Attempt> applied = Apply(table.metadata, attempt);
    if (!applied.ok()) {
      RemoveWritten();
      return applied.status().WithContext(context);
    }
    Result<LoadedTable> committed = catalog_.CommitTable(table, applied->updated);
    if (committed.ok()) {
      result_->manifests_after = applied->manifests;
      return applied->snapshot;
    }
    if (!committed.status().IsConflict()) {
      outcome_unknown_ = true;
      return committed.status().WithContext(context + " (outcome unknown, files kept)");
    }
    RemoveWritten();
    if (attempt > retries) {
      return Status::Conflict(context + " failed after " + std::to_string(attempt) +
                              " attempts: " + committed.status().message());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10 * attempt));
    FLOE_ASSIGN_OR_RAISE(table, catalog_.LoadTable(id_));
  }
}

Status ReplaceCommitter::Validate(const TableMetadata& base, const SnapshotFiles& files) const {
  std::set<std::string> live;
  for (const LiveFile& f : files.live) live.insert(f.entry.data_file.file_path);
  for (const std::string& path : changes_.removed) {
    if (live.count(path) == 0) {
      return NotRetryable("file " + path +
                          " was removed by a concurrent commit (another rewrite?); nothing "
                          "committed, run the rewrite again");
    }
  }
  if (!changes_.starting_snapshot_id) return Status::OK();
  const Snapshot* start = base.FindSnapshot(*changes_.starting_snapshot_id);
  const int64_t start_seq = start != nullptr ? start->sequence_number : 0;
  // A position delete committed after the plan that targets a rewritten file would be lost
  // (its positions mean nothing in the new files): Iceberg refuses this too. Equality deletes
  // are fine: the new files keep the starting sequence number, so newer ones still apply.
  for (const LiveFile& f : files.live) {
    const DataFile& d = f.entry.data_file;
    if (d.content != FileContent::kPositionDeletes ||
        f.entry.sequence_number.value_or(0) <= start_seq) {
      continue;
    }
    FLOE_ASSIGN_OR_RAISE(std::set<std::string> targets,
                         PositionDeleteTargets(catalog_.file_io(), d));
    for (const std::string& t : targets) {
      if (changes_.removed.count(t) > 0) {
        return NotRetryable("found new position delete " + d.file_path +
                            " for rewritten data file " + t +
                            " (committed after the rewrite was planned); nothing committed");
      }
    }
  }
  return Status::OK();
}

// The summary of a replace snapshot, with Java's names; totals from the new state itself.
std::map<std::string, std::string> ReplaceSummary(const FileTotals& added,
                                                  const FileTotals& removed,
                                                  const FileTotals& total, size_t manifests_created,
                                                  size_t manifests_replaced) {
  std::map<std::string, std::string> s;
  auto put = [&s](const char* key, int64_t v) {
    if (v > 0) s[key] = std::to_string(v);
  };
  s["operation"] = "replace";
  put("added-data-files", added.data_files);
  put("deleted-data-files", removed.data_files);
  put("removed-delete-files", removed.delete_files);
  put("added-records", added.records);
  put("deleted-records", removed.records);
  put("added-files-size", added.bytes);
  put("removed-files-size", removed.bytes);
  put("removed-position-deletes", removed.position_deletes);
  put("removed-equality-deletes", removed.equality_deletes);
  s["total-records"] = std::to_string(total.records);
  s["total-files-size"] = std::to_string(total.bytes);
  s["total-data-files"] = std::to_string(total.data_files);
  s["total-delete-files"] = std::to_string(total.delete_files);
  s["total-position-deletes"] = std::to_string(total.position_deletes);
  s["total-equality-deletes"] = std::to_string(total.equality_deletes);
  s["manifests-created"] = std::to_string(manifests_created);
  s["manifests-kept"] = "0";
  s["manifests-replaced"] = std::to_string(manifests_replaced);
  return s;
}

Result<ReplaceCommitter::Attempt> ReplaceCommitter::Apply(const TableMetadata& base, int attempt) {
  const Snapshot* parent = base.current_snapshot();
  if (parent == nullptr) return Status::Conflict("table has no snapshot");
  FLOE_ASSIGN_OR_RAISE(SnapshotFiles files, ReadSnapshotFiles(catalog_.file_io(), base, parent));
  FLOE_RETURN_NOT_OK(Validate(base, files));
  if (attempt == 1) {
    FileTotals before = CountFiles(files);
    result_->data_files_before = before.data_files;
    result_->delete_files_before = before.delete_files;
    result_->data_bytes_before = before.data_bytes;
    result_->manifests_before = static_cast<int64_t>(files.manifests.size());
  }

  const int64_t snapshot_id = internal::NewSnapshotId(base);
  const int64_t seq = base.last_sequence_number + 1;
  FLOE_ASSIGN_OR_RAISE(std::string location, UriToPath(base.location));
  const std::string metadata_dir = io::JoinPath(location, "metadata");
  const std::string uuid = internal::NewUuid();

  // Every entry of the new snapshot, by content kind and spec.
  std::map<std::pair<ManifestContent, int32_t>, std::vector<ManifestEntry>> groups;
  FileTotals removed, added, total;
  for (LiveFile& f : files.live) {
    ManifestEntry e = f.entry;
    if (changes_.removed.count(e.data_file.file_path) > 0) {
      e.status = EntryStatus::kDeleted;
      e.snapshot_id = snapshot_id;
      removed.Add(e.data_file);
    } else {
      e.status = EntryStatus::kExisting;
      total.Add(e.data_file);
    }
    groups[{f.content, e.data_file.spec_id}].push_back(std::move(e));
  }
  for (const DataFile& d : changes_.added) {
    ManifestEntry e;
    e.status = EntryStatus::kAdded;
    e.snapshot_id = snapshot_id;
    e.sequence_number = changes_.data_sequence_number;  // the starting sequence number
    e.data_file = d;
    added.Add(d);
    total.Add(d);
    groups[{ManifestContent::kData, d.spec_id}].push_back(std::move(e));
  }

  // Grouped by partition: entries sorted by their tuple, packed into manifests near the target.
  const int64_t per_manifest =
      std::max<int64_t>(1, IntProperty(base, kManifestTargetSize, kManifestTargetSizeDefault) /
                               files.entries_bytes_estimate);
  std::vector<ManifestFile> list;
  for (auto& [key, entries] : groups) {
    const PartitionSpec* spec = base.FindSpec(key.second);
    if (spec == nullptr) {
      return Status::Corruption("partition spec " + std::to_string(key.second) +
                                " is not in the table metadata");
    }
    std::stable_sort(entries.begin(), entries.end(),
                     [](const ManifestEntry& a, const ManifestEntry& b) {
                       return internal::PartitionKey(0, a.data_file.partition) <
                              internal::PartitionKey(0, b.data_file.partition);
                     });
    for (size_t begin = 0; begin < entries.size(); begin += per_manifest) {
      size_t end = std::min(entries.size(), begin + static_cast<size_t>(per_manifest));
      std::vector<ManifestEntry> chunk(entries.begin() + begin, entries.begin() + end);
      std::string path =
          io::JoinPath(metadata_dir, uuid + "-r" + std::to_string(list.size()) + ".avro");
      Result<ManifestFile> mf = WriteManifest(catalog_.file_io(), path, base.current_schema(),
                                              *spec, key.first, snapshot_id, chunk);
      if (!mf.status().IsAlreadyExists()) written_.push_back(path);
      FLOE_RETURN_NOT_OK(mf.status());
      mf->sequence_number = seq;
      int64_t min_seq = seq;
      for (const ManifestEntry& e : chunk) {
        if (e.status != EntryStatus::kDeleted) {
          min_seq = std::min(min_seq, e.sequence_number.value_or(seq));
        }
      }
      mf->min_sequence_number = min_seq;
      list.push_back(std::move(mf).value());
    }
  }

  const std::string list_path =
      io::JoinPath(metadata_dir, "snap-" + std::to_string(snapshot_id) + "-" +
                                     std::to_string(attempt) + "-" + uuid + ".avro");
  Status st =
      WriteManifestList(catalog_.file_io(), list_path, snapshot_id, parent->snapshot_id, seq, list);
  if (!st.IsAlreadyExists()) written_.push_back(list_path);
  FLOE_RETURN_NOT_OK(st);

  std::map<std::string, std::string> summary =
      ReplaceSummary(added, removed, total, list.size(), files.manifests.size());
  result_->data_files_after = total.data_files;
  result_->delete_files_after = total.delete_files;
  result_->data_bytes_after = total.data_bytes;

  Attempt a;
  Snapshot& snap = a.snapshot;
  snap.snapshot_id = snapshot_id;
  snap.parent_snapshot_id = parent->snapshot_id;
  snap.sequence_number = seq;
  snap.timestamp_ms = std::max(NowMs(), parent->timestamp_ms);
  snap.manifest_list = PathToUri(list_path);
  snap.summary = std::move(summary);
  snap.schema_id = base.current_schema_id;
  a.updated = base;
  a.updated.snapshots.push_back(snap);
  a.updated.SetMain(snapshot_id);
  a.updated.snapshot_log.push_back(SnapshotLogEntry{snap.timestamp_ms, snapshot_id});
  a.updated.last_sequence_number = seq;
  a.updated.last_updated_ms = std::max(base.last_updated_ms, snap.timestamp_ms);
  a.manifests = static_cast<int64_t>(list.size());
  return a;
}

int64_t Retries(const TableMetadata& m, std::optional<int> requested) {
  return requested ? *requested
                   : IntProperty(m, internal::kNumRetriesProperty, internal::kNumRetriesDefault);
}

// The sizes a rewrite aims at.
struct SizeRule {
  int64_t target = 0, min = 0, max = 0;
};

Result<SizeRule> Sizes(const TableMetadata& m, const CompactOptions& o) {
  if (o.min_input_files < 2) {
    return Status::InvalidArgument(
        "rewrite option min-input-files must be at least 2 (a size tier is compacted once it "
        "holds this many files); got " +
        std::to_string(o.min_input_files));
  }
  SizeRule r;
  r.target =
      o.target_file_size_bytes.value_or(IntProperty(m, kTargetFileSize, kTargetFileSizeDefault));
  r.min = o.min_file_size_bytes.value_or(r.target * 3 / 4);
  r.max = o.max_file_size_bytes.value_or(r.target * 9 / 5);
  if (r.target <= 0 || r.min < 0 || r.max < r.target || r.min > r.target) {
    return Status::InvalidArgument(
        "rewrite file sizes must satisfy 0 <= min <= target <= max and target > 0; got min " +
        std::to_string(r.min) + ", target " + std::to_string(r.target) + ", max " +
        std::to_string(r.max));
  }
  return r;
}

bool TooManyDeletes(const FileScanTask& t, const CompactOptions& o) {
  const int64_t count = static_cast<int64_t>(t.position_deletes.size() + t.equality_deletes.size());
  if (count == 0) return false;
  if (count >= o.delete_file_threshold) return true;
  int64_t delete_rows = 0;
  for (const auto* list : {&t.position_deletes, &t.equality_deletes}) {
    for (const ScanDeleteFile& d : *list) delete_rows += d.file->record_count;
  }
  return t.file.record_count == 0 ||
         static_cast<double>(delete_rows) >=
             o.delete_ratio_threshold * static_cast<double>(t.file.record_count);
}

// Size tiers (docs/connectors.md, "Compaction tiers"). A file's tier is measured in rows:
// tier k holds files of [f^k, f^(k+1)) rows, f = min-input-files. Rows, not bytes, because a
// rewrite keeps rows exactly but not bytes (each small Parquet file carries its own footer and
// compresses worse), so f files of one byte tier could merge into a file of that same tier and
// be rewritten again; f files of one row tier always merge into a higher tier.
int TierOf(int64_t rows, int64_t fan_in) {
  int k = 0;
  for (int64_t bound = fan_in; rows >= bound; bound *= fan_in) {
    ++k;
    if (bound > INT64_MAX / fan_in) break;
  }
  return k;
}

// A partition's small files as the tier planner sees them: one unit per file, and units merged
// by this plan (their rows summed, since the writer streams a partition's chosen files into one
// output).
struct TierUnit {
  int64_t rows = 0;
  std::vector<size_t> tasks;
};

// Which of one partition's small files (`small`, indices into `tasks`) to merge: while some tier
// holds at least f units, those units merge into one (which lands at least one tier higher and
// may fill that tier in turn). A row is thus rewritten only when it moves up a tier: at most
// ceil(log_f(N)) times for N equal appends, instead of at every trigger.
std::vector<size_t> TieredMerges(const std::vector<FileScanTask>& tasks,
                                 const std::vector<size_t>& small, int64_t fan_in) {
  std::vector<TierUnit> units;
  for (size_t i : small) units.push_back({std::max<int64_t>(0, tasks[i].file.record_count), {i}});
  for (;;) {
    std::map<int, std::vector<size_t>> by_tier;  // tier -> unit indices, smallest tier first
    for (size_t u = 0; u < units.size(); ++u) by_tier[TierOf(units[u].rows, fan_in)].push_back(u);
    auto full = std::find_if(by_tier.begin(), by_tier.end(), [fan_in](const auto& tier) {
      return static_cast<int64_t>(tier.second.size()) >= fan_in;
    });
    if (full == by_tier.end()) break;
    std::set<size_t> members(full->second.begin(), full->second.end());
    std::vector<TierUnit> next;
    TierUnit merged;
    for (size_t u = 0; u < units.size(); ++u) {
      if (members.count(u) == 0) {
        next.push_back(std::move(units[u]));
        continue;
      }
      merged.rows += units[u].rows;
      merged.tasks.insert(merged.tasks.end(), units[u].tasks.begin(), units[u].tasks.end());
    }
    next.push_back(std::move(merged));
    units = std::move(next);
  }
  std::vector<size_t> chosen;
  for (const TierUnit& u : units) {
    if (u.tasks.size() > 1) chosen.insert(chosen.end(), u.tasks.begin(), u.tasks.end());
  }
  return chosen;
}

// One partition's plan: files rewritten whatever their tier (too many deletes, over the max
// size, rewrite_all), and small files (under the min size) for the tier planner.
struct PartitionPlan {
  std::vector<size_t> forced, small;
};

// A partition's files to rewrite: the forced ones; when there are any, the small files of their
// tier or below go along (the partition is rewritten anyway, so an upsert table's newest files
// join the files their deletes apply to instead of staying apart); the rest by tiers.
std::vector<size_t> WithForced(const std::vector<FileScanTask>& tasks, const PartitionPlan& plan,
                               int64_t fan_in) {
  std::vector<size_t> chosen = plan.forced, rest;
  int top = -1;
  for (size_t i : plan.forced) top = std::max(top, TierOf(tasks[i].file.record_count, fan_in));
  for (size_t i : plan.small) {
    (TierOf(tasks[i].file.record_count, fan_in) <= top ? chosen : rest).push_back(i);
  }
  std::vector<size_t> merged = TieredMerges(tasks, rest, fan_in);
  chosen.insert(chosen.end(), merged.begin(), merged.end());
  return chosen;
}

// Chooses the files to rewrite, partition by partition (spec and tuple), within max_bytes.
std::vector<bool> ChooseFiles(const std::vector<FileScanTask>& tasks, const SizeRule& size,
                              const CompactOptions& o, RewriteResult* result) {
  std::map<std::string, PartitionPlan> partitions;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const FileScanTask& t = tasks[i];
    const int64_t bytes = t.file.file_size_in_bytes;
    PartitionPlan& p = partitions[internal::PartitionKey(t.file.spec_id, t.file.partition)];
    if (o.rewrite_all || bytes > size.max || TooManyDeletes(t, o)) {
      p.forced.push_back(i);
    } else if (bytes < size.min) {
      p.small.push_back(i);
    }
  }
  std::vector<bool> rewrite(tasks.size(), false);
  int64_t budget = o.max_bytes;
  for (const auto& [key, plan] : partitions) {
    std::vector<size_t> chosen = WithForced(tasks, plan, o.min_input_files);
    int64_t bytes = 0;
    for (size_t i : chosen) bytes += tasks[i].file.file_size_in_bytes;
    if (chosen.empty() || bytes > budget) continue;
    budget -= bytes;
    ++result->groups_rewritten;
    for (size_t i : chosen) rewrite[i] = true;
  }
  return rewrite;
}

}  // namespace

Result<std::optional<PreparedRewrite>> PrepareRewrite(Catalog& catalog, const TableIdentifier& id,
                                                      const CompactOptions& options,
                                                      RewriteResult* counts) {
  FLOE_ASSIGN_OR_RAISE(LoadedTable table, catalog.LoadTable(id));
  const TableMetadata& m = table.metadata;
  const io::FileIO& file_io = catalog.file_io();
  PreparedRewrite prepared;
  prepared.file_io = file_io;
  RewriteResult& result = prepared.result;
  const Snapshot* start = m.current_snapshot();
  if (start == nullptr) return std::optional<PreparedRewrite>();
  FLOE_ASSIGN_OR_RAISE(SizeRule size, Sizes(m, options));
  FLOE_ASSIGN_OR_RAISE(std::vector<FileScanTask> tasks, PlanScan(file_io, m));
  FLOE_ASSIGN_OR_RAISE(SnapshotFiles files, ReadSnapshotFiles(file_io, m, start));
  {
    FileTotals c = CountFiles(files);
    result.data_files_before = result.data_files_after = c.data_files;
    result.delete_files_before = result.delete_files_after = c.delete_files;
    result.data_bytes_before = result.data_bytes_after = c.data_bytes;
    result.manifests_before = result.manifests_after = static_cast<int64_t>(files.manifests.size());
  }
  if (counts != nullptr) *counts = result;

  const std::vector<bool> rewrite = ChooseFiles(tasks, size, options, &result);
  if (result.groups_rewritten == 0) return std::optional<PreparedRewrite>();

  // Read the chosen files with their deletes, write them anew.
  std::vector<FileScanTask> chosen;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (!rewrite[i]) continue;
    chosen.push_back(tasks[i]);
    prepared.removed.push_back(tasks[i].file.file_path);
    ++result.data_files_rewritten;
    result.bytes_rewritten += tasks[i].file.file_size_in_bytes;
    result.rows_read += tasks[i].file.record_count;
  }
  // A delete file goes when every file it applies to is rewritten: the new files carry the
  // starting sequence number, which no delete planned here exceeds.
  std::set<std::string> needed;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (rewrite[i]) continue;
    for (const auto* list : {&tasks[i].position_deletes, &tasks[i].equality_deletes}) {
      for (const ScanDeleteFile& d : *list) needed.insert(d.file->file_path);
    }
  }
  for (const LiveFile& f : files.live) {
    const std::string& path = f.entry.data_file.file_path;
    if (f.content == ManifestContent::kDeletes && needed.count(path) == 0) {
      prepared.removed.push_back(path);
      ++result.delete_files_removed;
    }
  }

  std::string prefix =
      options.file_prefix.empty() ? "compact-" + internal::NewUuid() : options.file_prefix;
  FLOE_ASSIGN_OR_RAISE(FileWriterConfig config, ConfigFromTableProperties(file_io, m, prefix));
  config.target_file_size_bytes = size.target;
  config.initial_size_ratio = options.size_ratio;
  FLOE_ASSIGN_OR_RAISE(std::unique_ptr<DataFileWriter> writer,
                       DataFileWriter::Make(m, std::move(config)));
  MaintenanceProgress progress;
  progress.files_total = static_cast<int64_t>(chosen.size());
  progress.bytes_total = result.bytes_rewritten;
  if (options.progress) options.progress(progress);
  Status written = ScanTasks(file_io, m, chosen, [&](const RecordBatch& batch) -> Status {
    result.rows_written += static_cast<int64_t>(batch.num_rows());
    FLOE_RETURN_NOT_OK(writer->Add(batch));
    // ScanTasks hands over one task's rows per call, in order: this batch is file files_done.
    if (options.progress && progress.files_done < progress.files_total) {
      progress.bytes_done += chosen[progress.files_done++].file.file_size_in_bytes;
      progress.rows_done = result.rows_written;
      options.progress(progress);
    }
    return Status::OK();
  });
  Result<std::vector<DataFile>> added =
      written.ok() ? writer->Finish() : Result<std::vector<DataFile>>(written);
  if (!added.ok()) {
    writer->Abandon();
    return added.status().WithContext("rewrite of " + id.ToString());
  }
  CrashPoint("compact-after-files-written");
  result.size_ratio = writer->stats().size_ratio;
  prepared.added = std::move(added).value();
  prepared.data_sequence_number = start->sequence_number;
  prepared.starting_snapshot_id = start->snapshot_id;
  result.data_files_added = static_cast<int64_t>(prepared.added.size());
  for (const DataFile& d : prepared.added) result.bytes_added += d.file_size_in_bytes;
  return std::optional<PreparedRewrite>(std::move(prepared));
}

void AbandonRewrite(const PreparedRewrite& prepared) {
  for (const DataFile& d : prepared.added) {
    if (auto p = UriToPath(d.file_path); p.ok()) (void)prepared.file_io.RemoveFile(*p);
  }
}

Result<RewriteResult> CommitRewrite(Catalog& catalog, const TableIdentifier& id,
                                    const PreparedRewrite& prepared,
                                    std::optional<int> num_retries) {
  RewriteResult result = prepared.result;
  ReplaceChanges changes;
  changes.removed.insert(prepared.removed.begin(), prepared.removed.end());
  changes.added = prepared.added;
  changes.data_sequence_number = prepared.data_sequence_number;
  changes.starting_snapshot_id = prepared.starting_snapshot_id;
  Result<LoadedTable> table = catalog.LoadTable(id);
  if (!table.ok()) {
    AbandonRewrite(prepared);
    return table.status();
  }
  const int64_t retries = Retries(table->metadata, num_retries);
  ReplaceCommitter committer(catalog, id, changes, &result);
  Result<Snapshot> snapshot = committer.Run(std::move(table).value(), retries);
  if (!snapshot.ok()) {
    if (!committer.outcome_unknown()) AbandonRewrite(prepared);
    return snapshot.status();
  }
  result.snapshot_id = snapshot->snapshot_id;
  return result;
}

Result<RewriteResult> RewriteDataFiles(Catalog& catalog, const TableIdentifier& id,
                                       const CompactOptions& options) {
  RewriteResult counts;
  FLOE_ASSIGN_OR_RAISE(std::optional<PreparedRewrite> prepared,
                       PrepareRewrite(catalog, id, options, &counts));
  if (!prepared) return counts;
  return CommitRewrite(catalog, id, *prepared, options.num_retries);
}

Result<RewriteResult> RewriteManifests(Catalog& catalog, const TableIdentifier& id,
                                       std::optional<int> num_retries) {
  FLOE_ASSIGN_OR_RAISE(LoadedTable table, catalog.LoadTable(id));
  RewriteResult result;
  const Snapshot* current = table.metadata.current_snapshot();
  if (current == nullptr) return result;
  FLOE_ASSIGN_OR_RAISE(std::vector<ManifestFile> manifests,
                       ReadManifestList(catalog.file_io(), current->manifest_list));
  result.manifests_before = result.manifests_after = static_cast<int64_t>(manifests.size());
  std::set<std::pair<ManifestContent, int32_t>> kinds;
  for (const ManifestFile& mf : manifests) kinds.insert({mf.content, mf.partition_spec_id});
  if (manifests.size() <= kinds.size()) return result;  // one per kind already
  ReplaceChanges changes;
  int64_t retries = Retries(table.metadata, num_retries);
  ReplaceCommitter committer(catalog, id, changes, &result);
  FLOE_ASSIGN_OR_RAISE(Snapshot snapshot, committer.Run(std::move(table), retries));
  result.snapshot_id = snapshot.snapshot_id;
  return result;
}

Result<OrphanResult> RemoveOrphanFiles(Catalog& catalog, const TableIdentifier& id,
                                       const OrphanOptions& options) {
  FLOE_ASSIGN_OR_RAISE(LoadedTable table, catalog.LoadTable(id));
  const TableMetadata& m = table.metadata;
  const io::FileIO& file_io = catalog.file_io();
  FLOE_ASSIGN_OR_RAISE(std::string location, UriToPath(m.location));
  auto local = [](const std::string& uri_or_path) -> std::string {
    if (uri_or_path.rfind("file:", 0) != 0) return io::AbsolutePath(uri_or_path);
    Result<std::string> p = UriToPath(uri_or_path);
    return p.ok() ? *p : uri_or_path;
  };
  // In this order: the interval and the leases before the references, so a file a lease stops
  // covering after its commit is among the references read next.
  const int64_t older_than = options.older_than_ms.value_or(NowMs() - 3LL * 24 * 3600 * 1000);
  FLOE_ASSIGN_OR_RAISE(LiveLeases leases, LiveLeases::Read(file_io, location, NowMs()));
  std::set<std::string> referenced;
  referenced.insert(local(table.metadata_location));
  referenced.insert(io::JoinPath(io::JoinPath(location, "metadata"), "version-hint.text"));
  for (const MetadataLogEntry& e : m.metadata_log) referenced.insert(local(e.metadata_file));
  for (const auto* stats : {&m.statistics, &m.partition_statistics}) {
    for (const StatisticsFile& f : *stats) referenced.insert(local(f.path));
  }
  std::set<std::string> manifests;
  for (const Snapshot& s : m.snapshots) {
    referenced.insert(local(s.manifest_list));
    FLOE_ASSIGN_OR_RAISE(std::vector<ManifestFile> list,
                         ReadManifestList(file_io, s.manifest_list));
    for (const ManifestFile& mf : list) {
      if (!manifests.insert(mf.manifest_path).second) continue;
      referenced.insert(local(mf.manifest_path));
      FLOE_ASSIGN_OR_RAISE(std::vector<ManifestEntry> entries, ReadManifest(file_io, mf, m));
      for (const ManifestEntry& e : entries) referenced.insert(local(e.data_file.file_path));
    }
  }

  OrphanResult result;
  std::vector<std::pair<std::string, int64_t>> candidates;
  FLOE_ASSIGN_OR_RAISE(std::vector<io::FileEntry> files, file_io.ListFilesRecursive(location));
  for (const io::FileEntry& f : files) {
    ++result.files_scanned;
    if (referenced.count(f.path) > 0) continue;
    if (options.in_use && options.in_use(f.path)) continue;
    if (leases.Covers(f)) {
      ++result.kept_leased;
      continue;
    }
    if (f.mtime_ms >= older_than) {
      ++result.kept_too_new;
      continue;
    }
    candidates.emplace_back(f.path, f.size);
  }
  std::sort(candidates.begin(), candidates.end());
  MaintenanceProgress progress;
  progress.files_total = static_cast<int64_t>(candidates.size());
  for (const auto& [path, bytes] : candidates) progress.bytes_total += bytes;
  if (options.progress) options.progress(progress);
  for (const auto& [path, bytes] : candidates) {
    result.orphans.push_back(path);
    result.orphan_bytes += bytes;
    if (!options.dry_run) {
      Status st = file_io.RemoveFile(path);
      if (st.ok() || st.IsNotFound()) {
        ++result.deleted;
      } else {
        ++result.not_deleted;
      }
    }
    if (options.progress) {
      ++progress.files_done;
      progress.bytes_done += bytes;
      options.progress(progress);
    }
  }
  return result;
}

}  // namespace floe::iceberg

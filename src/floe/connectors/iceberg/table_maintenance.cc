#include "floe/connectors/iceberg/table_maintenance.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <utility>

#include "floe/common/crash_point.h"
#include "floe/common/log.h"
#include "floe/connectors/connector_options.h"
#include "floe/iceberg/maintenance.h"
#include "floe/iceberg/scan.h"

namespace floe::connectors::internal {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

std::string Key(std::string_view task, std::string_view name) {
  return std::string(kMaintenancePrefix) + std::string(task) + "." + std::string(name);
}

Result<MaintenanceSchedule> ParseSchedule(const TableDescriptor& t, std::string_view task,
                                          MaintenanceSchedule defaults) {
  MaintenanceSchedule s;
  FLOE_ASSIGN_OR_RAISE(s.enabled, BoolOption(t, Key(task, "enabled"), defaults.enabled));
  FLOE_ASSIGN_OR_RAISE(s.commit_count, IntOption(t, Key(task, "schedule.commit-count"),
                                                 defaults.commit_count, 0, kMax));
  FLOE_ASSIGN_OR_RAISE(int64_t seconds, IntOption(t, Key(task, "schedule.interval-second"),
                                                  defaults.interval.count(), 0, 10LL << 30));
  s.interval = std::chrono::seconds(seconds);
  if (s.enabled && s.commit_count == 0 && s.interval.count() == 0 && task != "rewrite") {
    // Without a trigger the task would never run; say so instead of silently doing nothing.
    return Status::InvalidArgument(OptionError(t, Key(task, "schedule.commit-count"),
                                               "and '" + Key(task, "schedule.interval-second") +
                                                   "' are both 0: the task would never run (set '" +
                                                   Key(task, "enabled") +
                                                   "' = 'false' to switch it off)",
                                               "0"));
  }
  return s;
}

}  // namespace

const std::vector<std::string>& MaintenanceOptionKeys() {
  static const std::vector<std::string> kKeys = [] {
    std::vector<std::string> keys;
    for (const char* task : {"rewrite", "expire-snapshots", "delete-orphan-files"}) {
      for (const char* name : {"enabled", "schedule.commit-count", "schedule.interval-second"}) {
        keys.push_back(Key(task, name));
      }
    }
    for (const char* name :
         {"schedule.data-file-count", "schedule.data-file-size", "schedule.eq-delete-file-count",
          "max-bytes", "target-file-size-bytes", "min-file-size-bytes", "max-file-size-bytes",
          "min-input-files", "delete-file-threshold", "rewrite-all"}) {
      keys.push_back(Key("rewrite", name));
    }
    keys.push_back(Key("expire-snapshots", "max-snapshot-age-seconds"));
    keys.push_back(Key("expire-snapshots", "retain-last"));
    keys.push_back(Key("delete-orphan-files", "min-age-seconds"));
    std::sort(keys.begin(), keys.end());
    return keys;
  }();
  return kKeys;
}

Result<MaintenanceConfig> ParseMaintenanceOptions(const TableDescriptor& t,
                                                  const runtime::CheckpointConfig& checkpointing) {
  const std::vector<std::string>& known = MaintenanceOptionKeys();
  for (const auto& [key, value] : t.options) {
    if (key.rfind(kMaintenancePrefix, 0) != 0) continue;
    if (std::binary_search(known.begin(), known.end(), key)) continue;
    return Status::InvalidArgument("table '" + t.name + "': unsupported option '" + key + "'" +
                                   DidYouMean(key, known) + " (the 'flink-maintenance.*' options " +
                                   "floe supports are listed in docs/connectors.md)");
  }
  MaintenanceConfig c;
  FLOE_ASSIGN_OR_RAISE(c.rewrite, ParseSchedule(t, "rewrite", c.rewrite));
  FLOE_ASSIGN_OR_RAISE(
      c.rewrite_data_file_count,
      IntOption(t, Key("rewrite", "schedule.data-file-count"), c.rewrite_data_file_count, 1, kMax));
  FLOE_ASSIGN_OR_RAISE(
      c.rewrite_data_file_size,
      IntOption(t, Key("rewrite", "schedule.data-file-size"), c.rewrite_data_file_size, 1, kMax));
  FLOE_ASSIGN_OR_RAISE(c.rewrite_eq_delete_file_count,
                       IntOption(t, Key("rewrite", "schedule.eq-delete-file-count"), 0, 0, kMax));
  FLOE_ASSIGN_OR_RAISE(c.compact.max_bytes,
                       IntOption(t, Key("rewrite", "max-bytes"), kMax, 1, kMax));
  auto optional_size = [&](const char* name) -> Result<std::optional<int64_t>> {
    if (t.options.count(Key("rewrite", name)) == 0) return std::optional<int64_t>();
    FLOE_ASSIGN_OR_RAISE(int64_t v, IntOption(t, Key("rewrite", name), 0, 1, kMax));
    return std::optional<int64_t>(v);
  };
  FLOE_ASSIGN_OR_RAISE(c.compact.target_file_size_bytes, optional_size("target-file-size-bytes"));
  FLOE_ASSIGN_OR_RAISE(c.compact.min_file_size_bytes, optional_size("min-file-size-bytes"));
  FLOE_ASSIGN_OR_RAISE(c.compact.max_file_size_bytes, optional_size("max-file-size-bytes"));
  FLOE_ASSIGN_OR_RAISE(c.compact.min_input_files, IntOption(t, Key("rewrite", "min-input-files"),
                                                            c.compact.min_input_files, 2, kMax));
  FLOE_ASSIGN_OR_RAISE(c.compact.delete_file_threshold,
                       IntOption(t, Key("rewrite", "delete-file-threshold"), kMax, 1, kMax));
  FLOE_ASSIGN_OR_RAISE(c.compact.rewrite_all, BoolOption(t, Key("rewrite", "rewrite-all"), false));

  FLOE_ASSIGN_OR_RAISE(c.expire, ParseSchedule(t, "expire-snapshots", c.expire));
  if (t.options.count(Key("expire-snapshots", "max-snapshot-age-seconds")) > 0) {
    FLOE_ASSIGN_OR_RAISE(
        int64_t seconds,
        IntOption(t, Key("expire-snapshots", "max-snapshot-age-seconds"), 0, 0, kMax / 1000));
    c.expire_max_age_ms = seconds * 1000;
  }
  if (t.options.count(Key("expire-snapshots", "retain-last")) > 0) {
    FLOE_ASSIGN_OR_RAISE(int64_t n,
                         IntOption(t, Key("expire-snapshots", "retain-last"), 1, 1, kMax));
    c.expire_retain_last = n;
  }

  FLOE_ASSIGN_OR_RAISE(c.orphans, ParseSchedule(t, "delete-orphan-files", c.orphans));
  FLOE_ASSIGN_OR_RAISE(int64_t min_age, IntOption(t, Key("delete-orphan-files", "min-age-seconds"),
                                                  c.orphan_min_age.count(), 0, kMax / 1000));
  const int64_t interval_s =
      std::chrono::duration_cast<std::chrono::seconds>(checkpointing.interval).count();
  const int64_t floor_s = std::max<int64_t>(60, 10 * interval_s);
  if (c.orphans.enabled && min_age < floor_s) {
    return Status::InvalidArgument(OptionError(
        t, Key("delete-orphan-files", "min-age-seconds"),
        "must be at least " + std::to_string(floor_s) + " (60 s and 10 checkpoint intervals of " +
            std::to_string(interval_s) +
            " s): younger unreferenced files may belong to a checkpoint not committed yet",
        std::to_string(min_age)));
  }
  c.orphan_min_age = std::chrono::seconds(min_age);
  return c;
}

TableMaintainer::TableMaintainer(MaintenanceConfig config, iceberg::Catalog* catalog,
                                 CatalogFactory open_catalog, iceberg::TableIdentifier id,
                                 std::string job_tag,
                                 std::function<std::set<std::string>()> staged_files,
                                 FailedAttemptScope checkpoints)
    : config_(std::move(config)),
      catalog_(catalog),
      open_catalog_(std::move(open_catalog)),
      id_(std::move(id)),
      job_tag_(std::move(job_tag)),
      staged_files_(std::move(staged_files)),
      checkpoints_(std::move(checkpoints)) {
  checkpoints_.restored = nullptr;
  char hex[9];
  std::snprintf(hex, sizeof(hex), "%08x", static_cast<unsigned>(std::random_device{}()));
  attempt_ = hex;
  const Clock::time_point now = Clock::now();
  rewrite_due_.last_run = expire_due_.last_run = orphans_due_.last_run = now;
}

TableMaintainer::~TableMaintainer() { Stop(); }

void TableMaintainer::Stop() {
  if (rewrite_job_.valid()) {
    Result<std::optional<iceberg::PreparedRewrite>> r = rewrite_job_.get();
    if (r.ok() && r->has_value()) iceberg::AbandonRewrite(**r);
  }
  if (orphan_job_.valid()) (void)orphan_job_.get();
}

bool TableMaintainer::IsDue(const MaintenanceSchedule& s, const Due& due) const {
  if (!s.enabled || due.commits == 0) return false;
  if (s.commit_count > 0 && due.commits >= s.commit_count) return true;
  return s.interval.count() > 0 && Clock::now() - due.last_run >= s.interval;
}

iceberg::CompactOptions TableMaintainer::CompactOptionsFor(uint64_t checkpoint) const {
  iceberg::CompactOptions options = config_.compact;
  // One prefix per run: <tag>-rw-<attempt>-<checkpoint> (+ -<nnnnn>.parquet by the writer).
  options.file_prefix = job_tag_ + "-rw-" + attempt_ + "-" + std::to_string(checkpoint);
  options.size_ratio = size_ratio_;
  return options;
}

void TableMaintainer::AfterCommits(uint64_t checkpoint, int64_t commits, int64_t data_files,
                                   int64_t data_bytes, int64_t eq_delete_files, bool final) {
  rewrite_due_.commits += commits;
  expire_due_.commits += commits;
  orphans_due_.commits += commits;
  data_files_since_rewrite_ += data_files;
  eq_deletes_since_rewrite_ += eq_delete_files;
  data_bytes_since_rewrite_ += data_bytes;
  const Clock::time_point start = Clock::now();
  bool ran = false;
  if (Busy()) {
    Harvest(final);
    ran = true;
  }
  const bool rewrite_due = IsDue(config_.rewrite, rewrite_due_) ||
                           (config_.rewrite.enabled &&
                            (data_files_since_rewrite_ >= config_.rewrite_data_file_count ||
                             data_bytes_since_rewrite_ >= config_.rewrite_data_file_size ||
                             (config_.rewrite_eq_delete_file_count > 0 &&
                              eq_deletes_since_rewrite_ >= config_.rewrite_eq_delete_file_count)));
  if (rewrite_due && !Busy()) {
    rewrite_due_ = Due{0, Clock::now()};
    data_files_since_rewrite_ = data_bytes_since_rewrite_ = eq_deletes_since_rewrite_ = 0;
    iceberg::CompactOptions options = CompactOptionsFor(checkpoint);
    if (final) {
      // No commit follows: compact now, so a bounded job ends compacted.
      CommitPrepared(iceberg::PrepareRewrite(*catalog_, id_, options));
      ran = true;
    } else {
      rewrite_job_ =
          std::async(std::launch::async,
                     [factory = open_catalog_, id = id_,
                      options]() -> Result<std::optional<iceberg::PreparedRewrite>> {
                       FLOE_ASSIGN_OR_RAISE(std::unique_ptr<iceberg::Catalog> catalog, factory());
                       return iceberg::PrepareRewrite(*catalog, id, options);
                     });
    }
  }
  if (IsDue(config_.expire, expire_due_)) {
    Expire();
    expire_due_ = Due{0, Clock::now()};
    ran = true;
  }
  if (IsDue(config_.orphans, orphans_due_) && !Busy()) {
    orphans_due_ = Due{0, Clock::now()};
    iceberg::OrphanOptions options;
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    options.older_than_ms =
        now_ms -
        std::chrono::duration_cast<std::chrono::milliseconds>(config_.orphan_min_age).count();
    // Never orphans: files staged here now (files staged later are younger than min-age, at
    // least 10 checkpoint intervals) and files a checkpoint or savepoint may still commit.
    orphan_job_ = std::async(
        std::launch::async,
        [factory = open_catalog_, id = id_, options, staged = staged_files_(),
         scope = checkpoints_]() mutable -> Result<iceberg::OrphanResult> {
          FLOE_ASSIGN_OR_RAISE(std::set<std::string> held, FilesHeldByCheckpoints(scope));
          held.insert(staged.begin(), staged.end());
          options.in_use = [&held](const std::string& path) { return held.count(path) > 0; };
          FLOE_ASSIGN_OR_RAISE(std::unique_ptr<iceberg::Catalog> catalog, factory());
          return iceberg::RemoveOrphanFiles(*catalog, id, options);
        });
    if (final) Harvest(true);
  }
  if (!ran) return;
  const int64_t ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  stats_.total_ms += ms;
  stats_.max_ms = std::max(stats_.max_ms, ms);
}

void TableMaintainer::Harvest(bool wait) {
  auto ready = [wait](const auto& f) {
    return f.valid() && (wait || f.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
  };
  if (ready(rewrite_job_)) CommitPrepared(rewrite_job_.get());
  if (ready(orphan_job_)) FinishOrphans(orphan_job_.get());
}

void TableMaintainer::CommitPrepared(Result<std::optional<iceberg::PreparedRewrite>> prepared) {
  if (!prepared.ok() && prepared.status().IsNotFound() && data_lost_.ok()) {
    // A file compaction planned from may have been replaced and expired meanwhile; only a file
    // the current snapshot still references is lost data.
    data_lost_ = CheckCurrentFiles().WithContext(
        "iceberg table " + id_.ToString() +
        ": a file the table references is missing or "
        "damaged, its rows are lost (found after compaction failed: " +
        prepared.status().message() + ")");
  }
  if (!prepared.ok()) {
    ++stats_.failures;
    LogWarn(
        "iceberg table %s: compaction failed (the job goes on; retried at the next trigger): %s",
        id_.ToString().c_str(), prepared.status().ToString().c_str());
    return;
  }
  if (!prepared->has_value()) return;
  size_ratio_ = (*prepared)->result.size_ratio;
  const Clock::time_point start = Clock::now();
  Result<iceberg::RewriteResult> r = iceberg::CommitRewrite(*catalog_, id_, **prepared);
  if (!r.ok()) {
    ++stats_.failures;
    LogWarn(
        "iceberg table %s: compaction commit failed (the job goes on; retried at the next "
        "trigger): %s",
        id_.ToString().c_str(), r.status().ToString().c_str());
    return;
  }
  CrashPoint("maintenance-after-rewrite-commit");
  ++stats_.rewrites;
  stats_.data_files_rewritten += r->data_files_rewritten;
  stats_.delete_files_removed += r->delete_files_removed;
  LogInfo("iceberg table %s: compacted %" PRId64 " -> %" PRId64 " data files, %" PRId64
          " -> %" PRId64 " delete files (%" PRId64 " rows kept); commit %lld ms",
          id_.ToString().c_str(), r->data_files_before, r->data_files_after, r->delete_files_before,
          r->delete_files_after, r->rows_written,
          static_cast<long long>(
              std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count()));
}

Status TableMaintainer::CheckCurrentFiles() const {
  FLOE_ASSIGN_OR_RAISE(iceberg::LoadedTable table, catalog_->LoadTable(id_));
  FLOE_ASSIGN_OR_RAISE(std::vector<iceberg::FileScanTask> tasks,
                       iceberg::PlanScan(catalog_->file_io(), table.metadata));
  return iceberg::CheckScanFiles(catalog_->file_io(), tasks);
}

void TableMaintainer::LogSummary() const {
  const MaintenanceStats& s = stats_;
  if (s.rewrites + s.expirations + s.orphan_runs + s.failures == 0) return;
  LogInfo("iceberg table %s: maintenance: %" PRId64 " compactions (%" PRId64
          " data files rewritten, %" PRId64 " delete files removed), %" PRId64
          " expirations (%" PRId64 " snapshots), %" PRId64 " orphan runs (%" PRId64
          " files), %" PRId64 " failures; %" PRId64 " ms in total after commits, longest %" PRId64
          " ms",
          id_.ToString().c_str(), s.rewrites, s.data_files_rewritten, s.delete_files_removed,
          s.expirations, s.snapshots_expired, s.orphan_runs, s.orphans_removed, s.failures,
          s.total_ms, s.max_ms);
}

void TableMaintainer::Expire() {
  iceberg::ExpireOptions options;
  if (config_.expire_max_age_ms) {
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    options.older_than_ms = now_ms - *config_.expire_max_age_ms;
  }
  options.retain_last = config_.expire_retain_last;
  Result<iceberg::ExpireResult> r = iceberg::ExpireSnapshots(*catalog_, id_, options);
  if (!r.ok()) {
    ++stats_.failures;
    LogWarn("iceberg table %s: snapshot expiry failed (the job goes on): %s",
            id_.ToString().c_str(), r.status().ToString().c_str());
    return;
  }
  if (r->expired_snapshot_ids.empty()) return;
  ++stats_.expirations;
  stats_.snapshots_expired += static_cast<int64_t>(r->expired_snapshot_ids.size());
  LogDebug("iceberg table %s: expired %zu snapshots (%" PRId64 " kept), deleted %" PRId64
           " data, %" PRId64 " delete and %" PRId64 " statistics files",
           id_.ToString().c_str(), r->expired_snapshot_ids.size(), r->snapshots_kept,
           r->data_files_deleted, r->delete_files_deleted, r->statistics_files_deleted);
}

void TableMaintainer::FinishOrphans(Result<iceberg::OrphanResult> r) {
  if (!r.ok()) {
    ++stats_.failures;
    LogWarn("iceberg table %s: orphan file removal failed (the job goes on): %s",
            id_.ToString().c_str(), r.status().ToString().c_str());
    return;
  }
  ++stats_.orphan_runs;
  stats_.orphans_removed += r->deleted;
  if (r->deleted > 0) {
    LogInfo("iceberg table %s: removed %" PRId64 " orphan files (%" PRId64 " bytes)",
            id_.ToString().c_str(), r->deleted, r->orphan_bytes);
  }
}

}  // namespace floe::connectors::internal

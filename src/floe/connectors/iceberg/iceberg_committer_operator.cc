#include "floe/connectors/iceberg/iceberg_committer_operator.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <utility>

#include "floe/common/crash_point.h"
#include "floe/common/log.h"
#include "floe/connectors/iceberg/iceberg_sink_internal.h"
#include "floe/connectors/partition_claims.h"
#include "floe/iceberg/data_file_codec.h"
#include "floe/iceberg/partition_positions.h"
#include "floe/iceberg/snapshot_update.h"
#include "floe/runtime/checkpoint_config.h"
#include "floe/runtime/checkpoint_storage.h"

namespace floe::connectors {

namespace {

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

namespace internal {

namespace {

constexpr uint32_t kCommitterStateVersion = 3;

}  // namespace

void EncodeCommitterState(const std::string& sink_id,
                          const std::map<uint64_t, PendingCommit>& pending,
                          runtime::StateWriter& out) {
  out.PutU32(kCommitterStateVersion);
  out.PutString(sink_id);
  out.PutU32(static_cast<uint32_t>(pending.size()));
  for (const auto& [id, p] : pending) {
    out.PutU64(id);
    out.PutU32(static_cast<uint32_t>(p.positions.size()));
    for (const auto& [task, position] : p.positions) {
      out.PutString(task);
      out.PutString(position);
    }
    iceberg::EncodeDataFiles(p.data_files, out);
    iceberg::EncodeDataFiles(p.delete_files, out);
    for (const auto* splits : {&p.data_splits, &p.delete_splits}) {
      out.PutU32(static_cast<uint32_t>(splits->size()));
      for (const std::string& split : *splits) out.PutString(split);
    }
    out.PutString(p.written_schema);
  }
}

Result<CommitterState> DecodeCommitterState(runtime::StateReader& in) {
  FLOE_ASSIGN_OR_RAISE(uint32_t version, in.GetU32());
  if (version != kCommitterStateVersion && version != 2 && version != 1) {
    return Status::Corruption("iceberg committer state: unknown format version " +
                              std::to_string(version));
  }
  CommitterState state;
  FLOE_ASSIGN_OR_RAISE(state.sink_id, in.GetString());
  FLOE_ASSIGN_OR_RAISE(uint32_t count, in.GetU32());
  for (uint32_t i = 0; i < count; ++i) {
    FLOE_ASSIGN_OR_RAISE(uint64_t id, in.GetU64());
    PendingCommit p;
    FLOE_ASSIGN_OR_RAISE(uint32_t positions, in.GetU32());
    for (uint32_t k = 0; k < positions; ++k) {
      FLOE_ASSIGN_OR_RAISE(std::string task, in.GetString());
      FLOE_ASSIGN_OR_RAISE(std::string position, in.GetString());
      p.positions[std::move(task)] = std::move(position);
    }
    FLOE_ASSIGN_OR_RAISE(p.data_files, iceberg::DecodeDataFiles(in));
    FLOE_ASSIGN_OR_RAISE(p.delete_files, iceberg::DecodeDataFiles(in));
    if (version == 1) {  // written before writers split their files
      p.data_splits.assign(p.data_files.size(), "");
      p.delete_splits.assign(p.delete_files.size(), "");
    } else {
      for (auto [splits, files] : {std::pair(&p.data_splits, p.data_files.size()),
                                   std::pair(&p.delete_splits, p.delete_files.size())}) {
        FLOE_ASSIGN_OR_RAISE(uint32_t n, in.GetU32());
        if (n != files) {
          return Status::Corruption("iceberg committer state: " + std::to_string(n) +
                                    " splits for " + std::to_string(files) + " files");
        }
        for (uint32_t k = 0; k < n; ++k) {
          FLOE_ASSIGN_OR_RAISE(std::string split, in.GetString());
          splits->push_back(std::move(split));
        }
      }
    }
    if (version >= 3) {
      FLOE_ASSIGN_OR_RAISE(p.written_schema, in.GetString());
    }
    state.pending[id] = std::move(p);
  }
  FLOE_RETURN_NOT_OK(in.ExpectEnd());
  return state;
}

Result<std::vector<CommitterState>> DecodeCommitterStates(runtime::StateReader& in) {
  runtime::StateReader peek = in;
  FLOE_ASSIGN_OR_RAISE(uint32_t version, peek.GetU32());
  std::vector<CommitterState> states;
  if (version != kRoutedCommitterStateVersion) {
    FLOE_ASSIGN_OR_RAISE(CommitterState state, DecodeCommitterState(in));
    states.push_back(std::move(state));
    return states;
  }
  in = peek;
  FLOE_ASSIGN_OR_RAISE(std::string sink_id, in.GetString());
  FLOE_ASSIGN_OR_RAISE(uint32_t tables, in.GetU32());
  for (uint32_t i = 0; i < tables; ++i) {
    FLOE_ASSIGN_OR_RAISE(std::string table, in.GetString());
    FLOE_ASSIGN_OR_RAISE(std::string blob, in.GetString());
    runtime::StateReader reader(blob);
    Result<CommitterState> state = DecodeCommitterState(reader);
    if (!state.ok()) return state.status().WithContext("routed table " + table);
    states.push_back(std::move(state).value());
  }
  FLOE_RETURN_NOT_OK(in.ExpectEnd());
  return states;
}

}  // namespace internal

Status IcebergCommitterOperator::Open(const runtime::OperatorContext& ctx) {
  if (ctx.task.parallelism != 1) {
    return Status::InvalidArgument("iceberg committer must run with parallelism 1, not " +
                                   std::to_string(ctx.task.parallelism));
  }
  restored_from_ = ctx.restored_from;
  task_ = ctx.task.name();
  const runtime::MetricLabels table = {{"table", options_.table.ToString()}};
  auto counter = [&](const char* name) {
    return &ctx.metrics->Counter(std::string("IcebergFilesCommitter_") + name, table);
  };
  auto gauge = [&](const char* name) {
    return &ctx.metrics->Gauge(std::string("IcebergFilesCommitter_") + name, table);
  };
  metrics_ = Metrics{counter("commits"),
                     gauge("lastCommitDurationMs"),
                     gauge("lastCommitTimestamp"),
                     gauge("lastCommittedWatermark"),
                     counter("committedDataFilesCount"),
                     counter("committedDataFilesRecordCount"),
                     counter("committedDataFilesByteCount"),
                     counter("committedDeleteFilesCount"),
                     counter("committedDeleteFilesRecordCount"),
                     counter("committedDeleteFilesByteCount"),
                     gauge("totalDataFiles"),
                     gauge("totalDeleteFiles"),
                     counter("commitConflicts")};
  // Registered before any checkpoint can complete (that needs this task's acknowledgement).
  if (options_.positions) options_.positions->RegisterCommitter(task_);
  if (options_.shared_catalog) {
    catalog_ = options_.shared_catalog;
  } else {
    FLOE_ASSIGN_OR_RAISE(catalog_, catalog::OpenCatalog(options_.catalog));
  }
  if (keyed()) {
    // What the table names of this job's checkpoints, before any of them may be retired.
    FLOE_ASSIGN_OR_RAISE(iceberg::LoadedTable loaded, catalog_->LoadTable(options_.table));
    named_ = NamedCheckpoints(loaded.metadata);
    options_.scale_out->pins->Settle(runtime::CheckpointId(0), named_);
  }
  maintainer_ = std::make_unique<internal::TableMaintainer>(
      options_.maintenance, catalog_.get(),
      [config = options_.catalog] { return catalog::OpenCatalog(config); }, options_.table,
      internal::FileJobTag(options_.job_id), [this] { return StagedFiles(); },
      internal::FailedAttemptScope{options_.job_id, options_.checkpoint_dir, options_.savepoint_dir,
                                   options_.checkpoint_file_io, nullptr});
  return LoadTableMarker();
}

Status IcebergCommitterOperator::LoadTableMarker() {
  FLOE_ASSIGN_OR_RAISE(iceberg::LoadedTable loaded, catalog_->LoadTable(options_.table));
  if (options_.lease) {
    FLOE_RETURN_NOT_OK(options_.lease->Open(catalog_->file_io(), loaded.metadata));
  }
  // Instances of a scaled-out job share the sink id: positions, not markers, order commits.
  if (options_.partition_positions) return Status::OK();
  FLOE_ASSIGN_OR_RAISE(
      std::optional<internal::SinkCommit> marker,
      internal::FindSinkOrPipelineCommit(loaded.metadata, options_.sink_id,
                                         options_.continue_pipeline ? options_.pipeline : ""));
  if (marker) {
    FLOE_RETURN_NOT_OK(internal::CheckSinkOwner(
        *marker, options_.table.ToString(), options_.sink_id, options_.job_id, options_.pipeline));
    seen_marker_snapshot_ = marker->snapshot_id;
    table_checkpoint_ = marker->checkpoint_id;
    committed_positions_ = std::move(marker->source_positions);
  } else {
    seen_marker_snapshot_ = 0;
    table_checkpoint_ = 0;
    committed_positions_.reset();
  }
  return Status::OK();
}

Status IcebergCommitterOperator::Restore(runtime::StateReader& state) {
  // The state's sink id is not checked: the staged files are this vertex's output whatever the
  // id was then.
  FLOE_ASSIGN_OR_RAISE(internal::CommitterState restored, internal::DecodeCommitterState(state));
  if (options_.partition_positions) {
    // Scaled out, a restart never restores: the sources start at the table's positions, and
    // what the checkpoint staged is read again.
    if (!restored.pending.empty()) {
      LogInfo(
          "iceberg sink '%s': scaled out, the %zu commit(s) the restored checkpoint staged "
          "are not committed: the group and the table decide where reading starts",
          options_.sink_id.c_str(), restored.pending.size());
    }
    return Status::OK();
  }
  pending_ = std::move(restored.pending);
  uint64_t highest = pending_.empty() ? 0 : pending_.rbegin()->first;

  // Reconcile with the table (docs/architecture.md, the commit protocol's step 5): what it
  // already holds is dropped...
  FLOE_RETURN_NOT_OK(LoadTableMarker());
  for (auto it = pending_.begin(); it != pending_.end() && it->first <= table_checkpoint_;) {
    ++stats_.dropped_on_restore;
    it = pending_.erase(it);
  }
  // ...and the rest is committed now: the restored checkpoint completed, so all it staged is
  // due, even if this run ends before its own first checkpoint completes.
  uint64_t upto = restored_from_ ? restored_from_->value : highest;
  return CommitUpTo(std::max(upto, highest));
}

Status IcebergCommitterOperator::ProcessBatch(const RecordBatch& batch, int input,
                                              runtime::Collector& out) {
  (void)input, (void)out;
  FLOE_ASSIGN_OR_RAISE(std::vector<internal::WriterFiles> messages,
                       internal::DecodeWriterFiles(batch));
  for (internal::WriterFiles& m : messages) {
    Pending& p = collected_[m.checkpoint.value];
    for (auto& f : m.data_files) {
      p.data_files.push_back(std::move(f));
      p.data_splits.push_back(m.split);
    }
    for (auto& f : m.delete_files) {
      p.delete_files.push_back(std::move(f));
      p.delete_splits.push_back(m.split);
    }
    if (!m.written_schema.empty()) p.written_schema = std::move(m.written_schema);
  }
  return Status::OK();
}

Status IcebergCommitterOperator::OnBarrier(runtime::CheckpointId id, runtime::StateWriter& state,
                                           runtime::Collector& out) {
  (void)out;
  if (id.value <= table_checkpoint_) {
    // Committing N would be skipped as "already held": its rows would be lost.
    return Status::Internal("iceberg sink " + options_.sink_id + ": checkpoint " + id.ToString() +
                            " is not above checkpoint " + std::to_string(table_checkpoint_) +
                            " that table " + options_.table.ToString() +
                            " already holds for this sink; checkpoint ids must continue above "
                            "the table's (min checkpoint id from PlanIcebergSinkRestore)");
  }
  if (keyed()) options_.scale_out->pins->Pin(id);  // its commit will name chk-<id>
  Pending& staged = pending_[id.value];
  for (auto it = collected_.begin(); it != collected_.end() && it->first <= id.value;) {
    Pending& c = it->second;
    for (auto& f : c.data_files) staged.data_files.push_back(std::move(f));
    for (auto& f : c.delete_files) staged.delete_files.push_back(std::move(f));
    for (auto& s : c.data_splits) staged.data_splits.push_back(std::move(s));
    for (auto& s : c.delete_splits) staged.delete_splits.push_back(std::move(s));
    if (!c.written_schema.empty()) staged.written_schema = std::move(c.written_schema);
    it = collected_.erase(it);
  }
  if (options_.positions) staged.positions = options_.positions->PositionsAt(id);
  // A finite watermark only: none yet, or end of input, says nothing about event time.
  if (watermark_ != INT64_MIN && watermark_ != INT64_MAX) watermark_at_[id.value] = watermark_;

  internal::EncodeCommitterState(options_.sink_id, pending_, state);
  // Before this barrier is acknowledged, so before the writers' claims on these files end.
  FLOE_RETURN_NOT_OK(ClaimOnLease(std::nullopt));
  CrashPoint("after-committer-snapshot");
  return Status::OK();
}

Status IcebergCommitterOperator::OnCheckpointComplete(runtime::CheckpointId id) {
  CrashPoint("after-checkpoint-complete-before-commit");
  FLOE_RETURN_NOT_OK(CommitUpTo(id.value));
  if (options_.positions) {
    options_.positions->ForgetUpTo(id);
    // Checkpoints <= id are in the table (committed now, earlier, or skipped as already held or
    // empty): sources may publish id's external offsets.
    options_.positions->ReportCommitted(task_, id);
  }
  if (maintainer_ && (commits_since_check_ > 0 || end_of_input_)) {
    FLOE_RETURN_NOT_OK(RunMaintenance(id.value));
  }
  commits_since_check_ = data_files_since_check_ = data_bytes_since_check_ = 0;
  eq_deletes_since_check_ = 0;
  if (options_.on_checkpoint_handled) options_.on_checkpoint_handled(id);
  return Status::OK();
}

Status IcebergCommitterOperator::OnWatermark(runtime::Watermark watermark,
                                             runtime::Collector& out) {
  (void)out;  // nothing downstream
  watermark_ = std::max(watermark_, watermark.micros);
  return Status::OK();
}

Status IcebergCommitterOperator::OnEndOfInput(runtime::Collector& out) {
  (void)out;
  end_of_input_ = true;
  return Status::OK();
}

Status IcebergCommitterOperator::Close() {
  if (maintainer_) {
    maintainer_->Stop();
    maintainer_->LogSummary();
  }
  if (options_.positions && !task_.empty()) options_.positions->ReportClosed(task_);
  return Status::OK();
}

Status IcebergCommitterOperator::CommitUpTo(uint64_t id) {
  // Test-only: the table stands still while checkpoints complete (the stall alarm's test).
  if (HoldPoint("iceberg-commit")) return Status::OK();
  if (pending_.empty() || pending_.begin()->first > id) return Status::OK();
  // A commit's manifests are written before it; the claim ends with the commits.
  FLOE_RETURN_NOT_OK(ClaimOnLease(NowMillis()));
  if (keyed()) {
    // The state the commit names is checkpoint `id`'s, so the rows and positions must be its
    // too: earlier pending checkpoints (aborted ones, say) join its one snapshot.
    if (options_.upsert && pending_.begin()->first < id) {
      return Status::Conflict(
          "iceberg sink " + options_.sink_id + ": checkpoint " +
          std::to_string(pending_.begin()->first) + " is still pending when checkpoint " +
          std::to_string(id) +
          " completes; an upsert table takes one snapshot per checkpoint, "
          "and a scaled-out keyed job's state is named per commit: this instance restarts and "
          "reads its partitions again from the table");
    }
    Pending merged;
    auto append = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
    for (auto it = pending_.begin(); it != pending_.end() && it->first <= id;) {
      Pending& p = it->second;
      append(merged.data_files, p.data_files);
      append(merged.delete_files, p.delete_files);
      append(merged.data_splits, p.data_splits);
      append(merged.delete_splits, p.delete_splits);
      if (!p.written_schema.empty()) merged.written_schema = std::move(p.written_schema);
      merged.positions = std::move(p.positions);
      watermark_at_.erase(it->first);
      it = pending_.erase(it);
    }
    FLOE_RETURN_NOT_OK(CommitOne(id, merged));
    return ClaimOnLease(std::nullopt);
  }
  for (auto it = pending_.begin(); it != pending_.end() && it->first <= id;) {
    FLOE_RETURN_NOT_OK(CommitOne(it->first, it->second));
    watermark_at_.erase(it->first);
    it = pending_.erase(it);
  }
  return ClaimOnLease(std::nullopt);
}

Status IcebergCommitterOperator::CheckStagedFilesPresent(uint64_t id,
                                                         const Pending& pending) const {
  std::vector<std::string> problems;
  const io::FileIO& file_io = catalog_->file_io();
  for (const auto* files : {&pending.data_files, &pending.delete_files}) {
    for (const iceberg::DataFile& f : *files) {
      Result<std::string> path = iceberg::UriToPath(f.file_path);
      Result<uint64_t> size = path.ok() ? file_io.FileSize(*path) : Result<uint64_t>(path.status());
      if (size.ok() && static_cast<int64_t>(*size) == f.file_size_in_bytes) continue;
      problems.push_back(f.file_path + (size.ok() ? " (" + std::to_string(*size) +
                                                        " bytes, the writer recorded " +
                                                        std::to_string(f.file_size_in_bytes) + ")"
                                                  : " (" + size.status().message() + ")"));
    }
  }
  if (problems.empty()) return Status::OK();
  std::string list;
  for (size_t i = 0; i < problems.size() && i < 10; ++i) list += (i ? "; " : "") + problems[i];
  if (problems.size() > 10) list += "; and " + std::to_string(problems.size() - 10) + " more";
  return Status::Corruption(
      "iceberg sink " + options_.sink_id + ": checkpoint " + std::to_string(id) +
      " is not committed to " + options_.table.ToString() + ": " + std::to_string(problems.size()) +
      " of its files are missing or changed since they were written (removed as orphans, or "
      "by hand?), and a commit would reference them: " +
      list);
}

Status IcebergCommitterOperator::ClaimOnLease(std::optional<int64_t> since_ms) {
  if (!options_.lease) return Status::OK();
  std::set<std::string> staged = StagedFiles();
  if (!since_ms && staged.empty()) {
    options_.lease->Release("committer");
    return Status::OK();
  }
  return options_.lease->Claim("committer", iceberg::LeaseClaim{since_ms, std::move(staged)});
}

Status IcebergCommitterOperator::RunMaintenance(uint64_t id) {
  // A compaction's files are written on a background thread until its commit, a later call.
  if (options_.lease && !maintenance_claimed_) {
    Status st = options_.lease->Claim("maintenance", iceberg::LeaseClaim{NowMillis(), {}});
    if (!st.ok()) {
      LogWarn("iceberg table %s: maintenance skipped, its files could not be claimed: %s",
              options_.table.ToString().c_str(), st.ToString().c_str());
      return Status::OK();
    }
    maintenance_claimed_ = true;
  }
  maintainer_->AfterCommits(id, commits_since_check_, data_files_since_check_,
                            data_bytes_since_check_, eq_deletes_since_check_, end_of_input_);
  if (options_.lease && !maintainer_->busy()) {
    options_.lease->Release("maintenance");
    maintenance_claimed_ = false;
  }
  return maintainer_->data_lost();
}

Status IcebergCommitterOperator::CommitOne(uint64_t id, const Pending& pending) {
  if (options_.partition_positions) return CommitClaims(id, pending);
  if (id <= table_checkpoint_) {
    ++stats_.skipped_present;
    return Status::OK();
  }
  bool has_files = !pending.data_files.empty() || !pending.delete_files.empty();
  // Compared in the form the summary stores (re-encoded JSON), so positions read back from
  // the table after a restore compare equal to the same positions from a source.
  std::string offsets_json = internal::SourceOffsetsToJson(pending.positions);
  FLOE_ASSIGN_OR_RAISE(auto positions, internal::SourceOffsetsFromJson(offsets_json));
  bool positions_changed =
      !positions.empty() && (!committed_positions_ || *committed_positions_ != positions);
  if (!has_files && !positions_changed) {
    ++stats_.skipped_empty;
    return Status::OK();
  }
  FLOE_RETURN_NOT_OK(CheckStagedFilesPresent(id, pending));
  iceberg::SnapshotChanges changes;
  changes.added_data_files = pending.data_files;
  changes.added_delete_files = pending.delete_files;
  if (!pending.written_schema.empty()) {
    FLOE_ASSIGN_OR_RAISE(changes.written_schema, iceberg::SchemaFromJson(pending.written_schema));
  }
  changes.summary_properties = {
      {internal::kSummarySinkId, options_.sink_id},
      {internal::kSummaryJobId, options_.job_id},
      {internal::kSummaryCheckpointId, std::to_string(id)},
      {internal::kSummarySourceOffsets, offsets_json},
  };
  if (!options_.pipeline.empty()) {
    changes.summary_properties[internal::kSummaryPipeline] = options_.pipeline;
  }
  if (auto w = watermark_at_.find(id); w != watermark_at_.end()) {
    // Floor to milliseconds, so the summary never claims more than the watermark.
    int64_t ms = w->second / 1000;
    if (w->second % 1000 < 0) --ms;
    changes.summary_properties[internal::kSummaryWatermark] = std::to_string(ms);
  }
  bool already_held = false;
  int attempts = 0;
  iceberg::CommitOptions commit_options;
  commit_options.validate = [&](const iceberg::TableMetadata& metadata) -> Status {
    ++attempts;
    FLOE_ASSIGN_OR_RAISE(std::optional<internal::SinkCommit> marker,
                         internal::FindSinkCommit(metadata, options_.sink_id));
    if (marker && marker->snapshot_id != seen_marker_snapshot_ &&
        marker->job_id != options_.job_id) {
      return Status::InvalidArgument(
          "table " + options_.table.ToString() + ": job " + marker->job_id +
          " committed sink id '" + options_.sink_id + "' (checkpoint " +
          std::to_string(marker->checkpoint_id) + ") while this job " + options_.job_id +
          " writes it: two running jobs share one sink id and would hide each other's commits "
          "(rows lost). Stop one and give it its own sink id with the table option 'sink-id'");
    }
    if (marker) seen_marker_snapshot_ = marker->snapshot_id;
    if (marker && marker->checkpoint_id >= id) {
      already_held = true;
      return Status::AlreadyExists("table holds checkpoint " +
                                   std::to_string(marker->checkpoint_id) + " of this sink");
    }
    return Status::OK();
  };
  const auto commit_start = std::chrono::steady_clock::now();
  Result<iceberg::Snapshot> snapshot = CommitThroughOutages(id, changes, commit_options, &attempts);
  if (!snapshot.ok()) {
    if (already_held && snapshot.status().IsAlreadyExists()) {
      // Committed before (by this sink in an earlier attempt whose record was lost).
      ++stats_.skipped_present;
      table_checkpoint_ = std::max(table_checkpoint_, id);
      return Status::OK();
    }
    return snapshot.status().WithContext("iceberg sink " + options_.sink_id + ": committing " +
                                         "checkpoint " + std::to_string(id) + " to " +
                                         options_.table.ToString());
  }
  // Another writer (a second job, a maintenance command) committed in between: worth seeing
  // when the table is contended.
  ReportRetries(id, attempts - 1, "conflicts with other writers (reloaded and re-applied)");
  // Committed, but pending[id] is still in this committer's state.
  CrashPoint("after-commit-before-record");
  ++stats_.committed;
  ++commits_since_check_;
  for (const iceberg::DataFile& f : pending.data_files) {
    ++data_files_since_check_;
    data_bytes_since_check_ += f.file_size_in_bytes;
  }
  for (const iceberg::DataFile& f : pending.delete_files) {
    if (f.content == iceberg::FileContent::kEqualityDeletes) ++eq_deletes_since_check_;
  }
  RecordCommit(*snapshot, pending, commit_start);
  seen_marker_snapshot_ = snapshot->snapshot_id;
  table_checkpoint_ = id;
  committed_positions_ = std::move(positions);
  return Status::OK();
}

void IcebergCommitterOperator::ReportRetries(uint64_t id, int retries, const char* what) {
  if (retries <= 0) return;
  metrics_.commit_conflicts->Add(retries);
  LogInfo("iceberg sink '%s': checkpoint %llu committed to %s after %d %s",
          options_.sink_id.c_str(), static_cast<unsigned long long>(id),
          options_.table.ToString().c_str(), retries, what);
}

struct IcebergCommitterOperator::ClaimCommit {
  std::map<std::string, PartitionClaim> claims;  // the claims the sources held at the barrier
  std::map<iceberg::SourcePartition, iceberg::PartitionCommit> parts;  // what lands of each
  std::map<iceberg::SourcePartition, std::string> split_of;            // each part's claim
  // Files of a generation the sources no longer held at the barrier (the partition was revoked,
  // or fenced and read again): never committed, their rows are read again by the partition's
  // holder from the table's position.
  std::vector<const iceberg::DataFile*> dropped;
  // A keyed job's: each topic's partition count its claims were read with, set with the
  // positions; a table holding another count refuses the commit.
  std::map<std::string, int32_t> topic_partitions;
};

Result<IcebergCommitterOperator::ClaimCommit> IcebergCommitterOperator::PlanClaimCommit(
    uint64_t id, const Pending& pending) const {
  ClaimCommit c;
  // Named references, not a structured binding: clang 14 (the thread-safety check) cannot
  // capture one in the lambda below.
  auto& claims = c.claims;
  auto& parts = c.parts;
  auto& split_of = c.split_of;
  auto& dropped = c.dropped;
  for (const auto& [task, json] : pending.positions) {
    FLOE_ASSIGN_OR_RAISE(std::vector<PartitionClaim> held,
                         ClaimsFromJson(json, "source position of " + task));
    for (PartitionClaim& claim : held) claims.emplace(ClaimSplit(claim), std::move(claim));
  }
  for (const auto& [split, claim] : claims) {
    if (fenced_splits_.count(split) > 0) continue;
    auto done = committed_claims_.find(claim.partition);
    iceberg::PartitionRange range;
    range.from = done != committed_claims_.end() && done->second.generation == claim.generation
                     ? std::optional<int64_t>(done->second.next)
                     : claim.from;
    range.next = claim.next;
    parts[claim.partition].range = range;
    split_of[claim.partition] = split;
  }
  auto place = [&](const std::vector<iceberg::DataFile>& files,
                   const std::vector<std::string>& splits, bool deletes) {
    for (size_t i = 0; i < files.size(); ++i) {
      auto claim = claims.find(i < splits.size() ? splits[i] : std::string());
      auto part = claim == claims.end() ? parts.end() : parts.find(claim->second.partition);
      if (part == parts.end()) {
        dropped.push_back(&files[i]);
      } else {
        (deletes ? part->second.delete_files : part->second.data_files).push_back(files[i]);
      }
    }
  };
  place(pending.data_files, pending.data_splits, false);
  place(pending.delete_files, pending.delete_splits, true);
  if (keyed()) {
    const std::string state = runtime::ClaimStatePointer(
        options_.checkpoint_dir, runtime::CheckpointId(id), options_.scale_out->keyed_task);
    for (auto& [p, part] : parts) part.state = state;
    // One count per topic: the source refuses a claim under a count other than its first.
    for (const auto& [split, claim] : claims) {
      if (claim.topic_partitions > 0) {
        c.topic_partitions[claim.partition.topic] = claim.topic_partitions;
      }
    }
  }
  std::erase_if(parts, [](const auto& kv) {
    const iceberg::PartitionCommit& part = kv.second;
    return part.data_files.empty() && part.delete_files.empty() &&
           part.range.from == part.range.next;
  });
  return c;
}

Status IcebergCommitterOperator::CommitClaims(uint64_t id, const Pending& pending) {
  FLOE_ASSIGN_OR_RAISE(ClaimCommit planned, PlanClaimCommit(id, pending));
  auto& claims = planned.claims;
  auto& parts = planned.parts;
  auto& split_of = planned.split_of;
  auto& dropped = planned.dropped;
  iceberg::PartitionCommitResult result;
  if (!parts.empty()) {
    FLOE_RETURN_NOT_OK(CheckStagedFilesPresent(id, pending));
    iceberg::SnapshotChanges common;
    common.summary_properties = {
        {internal::kSummarySinkId, options_.sink_id},
        {internal::kSummaryJobId, options_.job_id},
        {internal::kSummaryCheckpointId, std::to_string(id)},
        {internal::kSummarySourceOffsets, internal::SourceOffsetsToJson(pending.positions)},
    };
    // Staged and about to swap: a zombie paused here commits after the group moved its
    // partitions on.
    CrashPoint("scale-out-before-commit");
    const auto commit_start = std::chrono::steady_clock::now();
    int attempts = 0;  // swaps tried: other instances' commits in between make more
    for (const auto& [topic, count] : planned.topic_partitions) {
      common.table_properties[iceberg::PartitionCountProperty(options_.sink_id, topic)] =
          std::to_string(count);
    }
    iceberg::CommitOptions counted;
    std::set<runtime::CheckpointId> named;  // what the table names of this job's, at the swap
    counted.validate = [&](const iceberg::TableMetadata& m) -> Status {
      ++attempts;
      if (keyed()) named = NamedCheckpoints(m);
      return CheckPartitionCounts(m, planned.topic_partitions);
    };
    FLOE_ASSIGN_OR_RAISE(
        result, iceberg::CommitPartitions(*catalog_, options_.table, options_.sink_id, parts,
                                          common, counted));
    ReportRetries(id, attempts - 1,
                  "retries (other instances' commits or fenced partitions in between)");
    if (result.snapshot) {
      ++stats_.committed;
      ++commits_since_check_;
      Pending committed;  // the files that landed, for the commit metrics
      for (const auto& [p, part] : parts) {
        if (std::find(result.fenced.begin(), result.fenced.end(), p) != result.fenced.end()) {
          continue;
        }
        committed.data_files.insert(committed.data_files.end(), part.data_files.begin(),
                                    part.data_files.end());
        committed.delete_files.insert(committed.delete_files.end(), part.delete_files.begin(),
                                      part.delete_files.end());
      }
      RecordCommit(*result.snapshot, committed, commit_start);
    }
    if (keyed()) {
      // Over-counts a checkpoint this commit stopped naming until the next commit's swap
      // shows it: pinned a little longer, never too short.
      if (result.snapshot) named.insert(runtime::CheckpointId(id));
      named_ = std::move(named);
    }
  }
  if (keyed()) options_.scale_out->pins->Settle(runtime::CheckpointId(id), named_);
  for (const auto& [p, part] : parts) {
    if (std::find(result.fenced.begin(), result.fenced.end(), p) == result.fenced.end()) {
      committed_claims_[p] = CommittedClaim{claims.at(split_of.at(p)).generation, part.range.next};
      continue;
    }
    // Another instance committed the partition since this one took it: its rows here are
    // that instance's too. The source reads it again from the table's position.
    LogWarn(
        "iceberg sink '%s': partition %s fenced by table %s at checkpoint %llu: another "
        "instance committed it since this one took it; its %zu file(s) here are dropped "
        "and it is read again from the table's position",
        options_.sink_id.c_str(), p.ToString().c_str(), options_.table.ToString().c_str(),
        static_cast<unsigned long long>(id), part.data_files.size() + part.delete_files.size());
    fenced_splits_.insert(split_of.at(p));
    if (options_.positions) options_.positions->ReportFenced(split_of.at(p));
    for (const auto* files : {&part.data_files, &part.delete_files}) {
      for (const iceberg::DataFile& f : *files) dropped.push_back(&f);
    }
  }
  for (const iceberg::DataFile* f : dropped) {
    Result<std::string> path = iceberg::UriToPath(f->file_path);
    if (path.ok()) (void)catalog_->file_io().RemoveFile(*path);  // else an orphan, swept later
  }
  return Status::OK();
}

std::set<runtime::CheckpointId> IcebergCommitterOperator::NamedCheckpoints(
    const iceberg::TableMetadata& metadata) const {
  std::set<runtime::CheckpointId> out;
  const std::string key_prefix = "floe.state." + options_.sink_id + ".";
  for (auto it = metadata.properties.lower_bound(key_prefix);
       it != metadata.properties.end() && it->first.rfind(key_prefix, 0) == 0; ++it) {
    // Another instance's checkpoint is not this one's to keep.
    std::optional<runtime::CheckpointId> id =
        runtime::ClaimStateCheckpointOf(it->second, options_.checkpoint_dir);
    if (id) out.insert(*id);
  }
  return out;
}

Status IcebergCommitterOperator::CheckPartitionCounts(
    const iceberg::TableMetadata& metadata, const std::map<std::string, int32_t>& counts) const {
  for (const auto& [topic, count] : counts) {
    FLOE_ASSIGN_OR_RAISE(std::optional<int32_t> held,
                         iceberg::TablePartitionCount(metadata, options_.sink_id, topic));
    if (held && *held != count) {
      return Status::InvalidArgument(
          "table " + options_.table.ToString() + " holds keyed state of topic '" + topic +
          "' read with " + std::to_string(*held) + " partitions (table property '" +
          iceberg::PartitionCountProperty(options_.sink_id, topic) +
          "'); this instance read it with " + std::to_string(count) +
          ": keys moved between partitions, so their state and their new rows no longer meet "
          "(docs/kafka.md)");
    }
  }
  return Status::OK();
}

Result<iceberg::Snapshot> IcebergCommitterOperator::CommitThroughOutages(
    uint64_t id, const iceberg::SnapshotChanges& changes,
    const iceberg::CommitOptions& commit_options, int* validations) {
  using std::chrono::milliseconds;
  const auto start = std::chrono::steady_clock::now();
  milliseconds wait(100);
  for (int outage = 1;; ++outage) {
    *validations = 0;
    Result<iceberg::Snapshot> snapshot =
        iceberg::CommitSnapshot(*catalog_, options_.table, changes, commit_options);
    if (snapshot.ok() || !snapshot.status().IsUnavailable()) return snapshot;
    const auto used =
        std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
    if (used + wait > options_.unavailable_timeout) {
      return snapshot.status().WithContext(
          "the catalog stayed unavailable for " + runtime::FormatDuration(used) + " (" +
          std::to_string(outage) + " attempts; 'sink.commit.unavailable-timeout' = " +
          runtime::FormatDuration(options_.unavailable_timeout) + ")");
    }
    LogWarn(
        "iceberg sink '%s': catalog unavailable while committing checkpoint %llu to %s: %s; "
        "retrying in %s (%s of %s used)",
        options_.sink_id.c_str(), static_cast<unsigned long long>(id),
        options_.table.ToString().c_str(), snapshot.status().message().c_str(),
        runtime::FormatDuration(wait).c_str(), runtime::FormatDuration(used).c_str(),
        runtime::FormatDuration(options_.unavailable_timeout).c_str());
    std::this_thread::sleep_for(wait);
    wait = std::min(wait * 2, milliseconds(5000));
    // The catalog's own connection is re-opened on its next call; a catalog that cannot be
    // re-opened stays unavailable and the loop goes on.
  }
}

void IcebergCommitterOperator::RecordCommit(const iceberg::Snapshot& snapshot,
                                            const Pending& pending,
                                            std::chrono::steady_clock::time_point started) {
  metrics_.commits->Add(1);
  metrics_.last_commit_duration_ms->Set(std::chrono::duration_cast<std::chrono::milliseconds>(
                                            std::chrono::steady_clock::now() - started)
                                            .count());
  metrics_.last_commit_timestamp->Set(snapshot.timestamp_ms);
  auto summary_int = [&](const std::string& key, runtime::Metric* metric) {
    auto it = snapshot.summary.find(key);
    if (it != snapshot.summary.end()) metric->Set(std::atoll(it->second.c_str()));
  };
  summary_int(internal::kSummaryWatermark, metrics_.last_committed_watermark);
  summary_int("total-data-files", metrics_.total_data_files);
  summary_int("total-delete-files", metrics_.total_delete_files);
  for (const iceberg::DataFile& f : pending.data_files) {
    metrics_.data_files->Add(1);
    metrics_.data_records->Add(f.record_count);
    metrics_.data_bytes->Add(f.file_size_in_bytes);
  }
  for (const iceberg::DataFile& f : pending.delete_files) {
    metrics_.delete_files->Add(1);
    metrics_.delete_records->Add(f.record_count);
    metrics_.delete_bytes->Add(f.file_size_in_bytes);
  }
}

std::set<std::string> IcebergCommitterOperator::StagedFiles() const {
  std::set<std::string> out;
  for (const auto* staged : {&pending_, &collected_}) {
    for (const auto& [id, p] : *staged) {
      for (const auto* files : {&p.data_files, &p.delete_files}) {
        for (const iceberg::DataFile& f : *files) {
          Result<std::string> local = iceberg::UriToPath(f.file_path);
          if (local.ok()) out.insert(*local);
        }
      }
    }
  }
  return out;
}

const internal::MaintenanceStats& IcebergCommitterOperator::maintenance_stats() const {
  static const internal::MaintenanceStats kNone;
  return maintainer_ ? maintainer_->stats() : kNone;
}

std::vector<uint64_t> IcebergCommitterOperator::pending_ids() const {
  std::vector<uint64_t> ids;
  for (const auto& [id, p] : pending_) ids.push_back(id);
  return ids;
}

}  // namespace floe::connectors

#pragma once

// Test and bench only: a streaming writer's life in miniature. Small appends committed one by
// one (a sink's checkpoints) with a compaction after every few (its maintenance trigger), and
// how often compaction rewrote each row. Shared by rewrite_test.cc (the bound) and
// bench/compaction_amplification.cc (the figure).

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "floe/common/record_batch.h"
#include "floe/iceberg/catalog.h"
#include "floe/iceberg/data_writer.h"
#include "floe/iceberg/rewrite.h"
#include "floe/iceberg/row_key_internal.h"
#include "floe/iceberg/snapshot_update.h"

namespace floe::iceberg::testing {

struct StreamingCompactionRun {
  int commits = 300;
  int compact_every = 1;  // a compaction after every this many commits
  CompactOptions options;
  // The rows commit `c` (1-based) appends.
  std::function<RecordBatch(int c)> rows;
  // Called after every compaction that committed (e.g. to compare the table with a model).
  std::function<Status(int c)> after_compaction;
};

struct AmplificationReport {
  int64_t rows_written = 0;    // appended by the commits
  int64_t rows_rewritten = 0;  // read by compactions (RewriteResult::rows_read, summed)
  int64_t compactions = 0;     // that committed
  int max_rewrites = 0;        // the most times one row was rewritten
  int64_t data_files = 0;      // live data files at the end
  double ratio() const {
    return rows_written == 0 ? 0 : static_cast<double>(rows_rewritten) / rows_written;
  }
};

// ceil(log_f(n)) for n >= 1, f >= 2, in integers: the most times a row is rewritten when every
// rewrite takes it into a file of the next size tier (see RewriteDataFiles).
inline int CeilLog(int64_t n, int64_t f) {
  int k = 0;
  for (int64_t p = 1; p < n; p *= f) ++k;
  return k;
}

namespace detail {

inline Status AppendCommit(Catalog& catalog, const TableIdentifier& id, int c,
                           const RecordBatch& batch) {
  FLOE_ASSIGN_OR_RAISE(LoadedTable table, catalog.LoadTable(id));
  FLOE_ASSIGN_OR_RAISE(FileWriterConfig config,
                       ConfigFromTableProperties(catalog.file_io(), table.metadata,
                                                 "00000-0-stream-" + std::to_string(c)));
  FLOE_ASSIGN_OR_RAISE(auto writer, DataFileWriter::Make(table.metadata, std::move(config)));
  FLOE_RETURN_NOT_OK(writer->Add(batch));
  SnapshotChanges changes;
  FLOE_ASSIGN_OR_RAISE(changes.added_data_files, writer->Finish());
  return CommitSnapshot(catalog, id, changes).status();
}

// Per data file written by a compaction: its partition and the most times any of its rows was
// rewritten. Appended files are absent (0 rewrites).
struct RewriteDepth {
  std::string partition;
  int depth = 0;
};
using RewriteDepths = std::map<std::string, RewriteDepth>;

// Compacts once; records each new file's depth: one more than the deepest file of its
// partition that the compaction replaced.
inline Status Compact(Catalog& catalog, const TableIdentifier& id, const CompactOptions& options,
                      RewriteDepths* depths, AmplificationReport* report, bool* committed) {
  FLOE_ASSIGN_OR_RAISE(std::optional<PreparedRewrite> prepared,
                       PrepareRewrite(catalog, id, options));
  *committed = prepared.has_value();
  if (!prepared) return Status::OK();
  FLOE_ASSIGN_OR_RAISE(RewriteResult r, CommitRewrite(catalog, id, *prepared));
  std::map<std::string, int> deepest;  // partition -> depth of the deepest replaced file
  for (const std::string& path : prepared->removed) {
    auto it = depths->find(path);
    if (it == depths->end()) continue;
    int& d = deepest[it->second.partition];
    d = std::max(d, it->second.depth);
    depths->erase(it);
  }
  for (const DataFile& f : prepared->added) {
    std::string partition = internal::PartitionKey(f.spec_id, f.partition);
    const int depth = deepest[partition] + 1;
    (*depths)[f.file_path] = RewriteDepth{partition, depth};
    report->max_rewrites = std::max(report->max_rewrites, depth);
  }
  report->rows_rewritten += r.rows_read;
  report->data_files = r.data_files_after;
  ++report->compactions;
  return Status::OK();
}

}  // namespace detail

// Runs `run` against the existing table `id` (REQUIRES: run.rows set).
inline Result<AmplificationReport> RunStreamingCompaction(Catalog& catalog,
                                                          const TableIdentifier& id,
                                                          const StreamingCompactionRun& run) {
  AmplificationReport report;
  detail::RewriteDepths depths;
  for (int c = 1; c <= run.commits; ++c) {
    RecordBatch batch = run.rows(c);
    report.rows_written += static_cast<int64_t>(batch.num_rows());
    FLOE_RETURN_NOT_OK(detail::AppendCommit(catalog, id, c, batch));
    if (c % run.compact_every != 0) continue;
    bool committed = false;
    FLOE_RETURN_NOT_OK(detail::Compact(catalog, id, run.options, &depths, &report, &committed));
    if (committed && run.after_compaction) FLOE_RETURN_NOT_OK(run.after_compaction(c));
  }
  FLOE_ASSIGN_OR_RAISE(LoadedTable table, catalog.LoadTable(id));
  const Snapshot* current = table.metadata.current_snapshot();
  if (current != nullptr && current->summary.count("total-data-files") > 0) {
    report.data_files = std::strtoll(current->summary.at("total-data-files").c_str(), nullptr, 10);
  }
  return report;
}

}  // namespace floe::iceberg::testing

// Compaction's write amplification under streaming appends (issue 21): COMMITS small appends
// (a sink's checkpoints, ROWS rows each) to a new table, compacted after every EVERY commits
// (the Iceberg sink's maintenance trigger) with the default options but min-input-files F.
// Prints one JSON object: rows written, rows rewritten, their ratio, the most rewrites of one
// row and the bound ceil(log_F(COMMITS)), compactions, data files left, seconds. Driven by
// bench/compaction_amplification.sh; not a test (the bound's test is rewrite_test.cc).
//
//   compaction_amplification_bench WAREHOUSE COMMITS EVERY ROWS F [PARTITION_CLAUSE]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "floe/iceberg/partition_spec.h"
#include "floe/iceberg/streaming_compaction_util.h"

namespace {

using floe::Result;
using floe::Status;
namespace ice = floe::iceberg;

ice::Schema EventSchema() {
  ice::Schema s;
  s.fields = {floe::Field{"id", floe::DataType::Int64(), false, 1},
              floe::Field{"tag", floe::DataType::String(), true, 2}};
  return s;
}

floe::RecordBatch Rows(int c, int rows) {
  floe::RecordBatch batch(EventSchema().ToBatchSchema());
  for (int i = 0; i < rows; ++i) {
    ice::AppendValue(&batch.mutable_column(0), ice::Value(int64_t{c - 1} * rows + i));
    ice::AppendValue(&batch.mutable_column(1), ice::Value(std::string("c") + std::to_string(c)));
  }
  return batch;
}

Result<ice::testing::AmplificationReport> Run(const std::string& warehouse,
                                              ice::testing::StreamingCompactionRun run, int rows,
                                              const std::string& partition) {
  FLOE_ASSIGN_OR_RAISE(auto catalog, ice::FileSystemCatalog::Make(warehouse));
  const ice::TableIdentifier id{"bench", "events"};
  ice::PartitionSpec spec;
  if (!partition.empty()) {
    FLOE_ASSIGN_OR_RAISE(spec, ice::ParsePartitionClause(partition, EventSchema()));
  }
  FLOE_RETURN_NOT_OK(catalog->CreateTable(id, EventSchema(), spec, {}).status());
  run.rows = [rows](int c) { return Rows(c, rows); };
  return ice::testing::RunStreamingCompaction(*catalog, id, run);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr,
                 "usage: compaction_amplification_bench WAREHOUSE COMMITS EVERY ROWS F "
                 "[PARTITION_CLAUSE]\n");
    return 2;
  }
  ice::testing::StreamingCompactionRun run;
  run.commits = std::atoi(argv[2]);
  run.compact_every = std::atoi(argv[3]);
  const int rows = std::atoi(argv[4]);
  run.options.min_input_files = std::atoll(argv[5]);
  const std::string partition = argc > 6 ? argv[6] : "";
  if (run.commits < 1 || run.compact_every < 1 || rows < 1 || run.options.min_input_files < 1) {
    std::fprintf(stderr, "COMMITS, EVERY, ROWS and F must be positive integers\n");
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  Result<ice::testing::AmplificationReport> r = Run(argv[1], run, rows, partition);
  if (!r.ok()) {
    std::fprintf(stderr, "compaction_amplification_bench: %s\n", r.status().ToString().c_str());
    return 1;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "{\"commits\": %d, \"compact_every\": %d, \"rows_per_commit\": %d, \"min_input_files\": "
      "%lld, \"partition\": \"%s\", \"rows_written\": %lld, \"rows_rewritten\": %lld, "
      "\"ratio\": %.3f, \"max_rewrites\": %d, \"bound_max_rewrites\": %d, \"compactions\": %lld, "
      "\"data_files\": %lld, \"seconds\": %.1f}\n",
      run.commits, run.compact_every, rows, static_cast<long long>(run.options.min_input_files),
      partition.c_str(), static_cast<long long>(r->rows_written),
      static_cast<long long>(r->rows_rewritten), r->ratio(), r->max_rewrites,
      ice::testing::CeilLog(run.commits, run.options.min_input_files),
      static_cast<long long>(r->compactions), static_cast<long long>(r->data_files), seconds);
  return 0;
}

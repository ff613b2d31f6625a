// `floe demo`: the main job on embedded defaults. For now (storage core) it generates the
// reference study's roster feed, lands it in an append table and an upsert table in
// ./warehouse, reads both back and prints their description. The streaming runtime replaces
// the file step with the checkpointed job.
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>

#include "floe/cli/args.h"
#include "floe/cli/commands.h"
#include "floe/cli/table_ops.h"
#include "floe/connectors/roster_generator.h"
#include "floe/format/json/json_lines.h"
#include "floe/iceberg/catalog.h"
#include "floe/iceberg/scan.h"
#include "floe/io/file.h"

namespace floe::cli {
namespace {

Status WriteRosterFile(const connectors::RosterOptions& options, const std::string& path) {
  connectors::RosterGenerator gen(options);
  FLOE_ASSIGN_OR_RAISE(auto file, io::WritableFile::Create(path, /*exclusive=*/false));
  std::string text;
  while (!gen.done()) {
    RecordBatch batch = gen.Next(4096);
    text.clear();
    for (size_t r = 0; r < batch.num_rows(); ++r) json::AppendRowAsJson(batch, r, &text);
    FLOE_RETURN_NOT_OK(file->Append(text));
  }
  return file->Close();
}

Status EnsureTable(iceberg::Catalog& catalog, const iceberg::TableIdentifier& id,
                   bool primary_key) {
  auto loaded = catalog.LoadTable(id);
  if (loaded.ok()) return Status::OK();
  if (!loaded.status().IsNotFound()) return loaded.status();
  iceberg::Schema schema;
  FLOE_ASSIGN_OR_RAISE(schema.fields,
                       iceberg::ParseFlinkColumns(connectors::RosterGenerator::FlinkColumns()));
  iceberg::PartitionSpec spec;
  if (primary_key) {
    schema.identifier_field_ids = {schema.FindByName("npi")->field_id};
  } else {
    FLOE_ASSIGN_OR_RAISE(spec, iceberg::ParsePartitionClause("day(event_time)", schema));
  }
  return catalog.CreateTable(id, schema, spec, {}).status();
}

// Rows of the current snapshot and, for `column`, how many distinct values they hold.
Status CountRows(const iceberg::LoadedTable& table, const std::string& column, int64_t* rows,
                 int64_t* distinct) {
  std::set<std::string> seen;
  *rows = 0;
  FLOE_RETURN_NOT_OK(iceberg::ScanTable(table.metadata, std::nullopt, [&](const RecordBatch& b) {
    int idx = b.schema()->FieldIndex(column);
    for (size_t r = 0; r < b.num_rows(); ++r) {
      const Column& c = b.column(static_cast<size_t>(idx));
      seen.insert(c.type().is_variable_width() ? std::string(c.GetBytes(r))
                                               : std::to_string(c.Get<int64_t>(r)));
    }
    *rows += static_cast<int64_t>(b.num_rows());
    return Status::OK();
  }));
  *distinct = static_cast<int64_t>(seen.size());
  return Status::OK();
}

}  // namespace

Status RunDemo(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(Args args, Args::Parse(argv, {{"warehouse", "events", "seed"}, {}}));
  connectors::RosterOptions options;
  FLOE_ASSIGN_OR_RAISE(auto events, args.GetInt("events"));
  FLOE_ASSIGN_OR_RAISE(auto seed, args.GetInt("seed"));
  if (events) options.events = *events;
  if (seed) options.seed = static_cast<uint64_t>(*seed);
  std::string warehouse = args.GetOr("warehouse", "warehouse");
  FLOE_ASSIGN_OR_RAISE(auto catalog, iceberg::FileSystemCatalog::Make(warehouse));

  std::string sample = io::JoinPath(warehouse, "roster-sample.jsonl");
  FLOE_RETURN_NOT_OK(io::CreateDirs(warehouse));
  std::printf(
      "[1/4] generating the roster feed: %lld events about %lld providers (seed %llu) -> %s\n",
      static_cast<long long>(options.events), static_cast<long long>(options.providers),
      static_cast<unsigned long long>(options.seed), sample.c_str());
  FLOE_RETURN_NOT_OK(WriteRosterFile(options, sample));

  const iceberg::TableIdentifier append_id{"demo", "roster_append"};
  const iceberg::TableIdentifier upsert_id{"demo", "roster_upsert"};
  FLOE_RETURN_NOT_OK(EnsureTable(*catalog, append_id, /*primary_key=*/false));
  FLOE_RETURN_NOT_OK(EnsureTable(*catalog, upsert_id, /*primary_key=*/true));

  WriteReport report;
  std::printf("[2/4] append into %s (partitioned by day(event_time))\n",
              append_id.ToString().c_str());
  FLOE_RETURN_NOT_OK(
      WriteJsonFile(*catalog, append_id, sample, iceberg::WriteMode::kAppend, true, &report));
  std::printf("      snapshot %lld: %lld rows in %lld data files\n",
              static_cast<long long>(report.snapshot_id), static_cast<long long>(report.rows_read),
              static_cast<long long>(report.data_files));
  report = {};
  std::printf("[3/4] upsert into %s (primary key npi)\n", upsert_id.ToString().c_str());
  FLOE_RETURN_NOT_OK(
      WriteJsonFile(*catalog, upsert_id, sample, iceberg::WriteMode::kUpsert, true, &report));
  std::printf("      snapshot %lld: %lld rows read, %lld data files, %lld equality deletes\n",
              static_cast<long long>(report.snapshot_id), static_cast<long long>(report.rows_read),
              static_cast<long long>(report.data_files),
              static_cast<long long>(report.delete_records));

  std::printf("[4/4] reading both tables back\n");
  int64_t rows = 0, distinct = 0;
  FLOE_ASSIGN_OR_RAISE(auto append_table, catalog->LoadTable(append_id));
  FLOE_RETURN_NOT_OK(CountRows(append_table, "seq", &rows, &distinct));
  std::printf("      %s: %lld rows, %lld distinct seq, %lld snapshots\n",
              append_id.ToString().c_str(), static_cast<long long>(rows),
              static_cast<long long>(distinct),
              static_cast<long long>(append_table.metadata.snapshots.size()));
  FLOE_ASSIGN_OR_RAISE(auto upsert_table, catalog->LoadTable(upsert_id));
  FLOE_RETURN_NOT_OK(CountRows(upsert_table, "npi", &rows, &distinct));
  std::printf("      %s: %lld rows, %lld distinct npi (one row per provider)\n",
              upsert_id.ToString().c_str(), static_cast<long long>(rows),
              static_cast<long long>(distinct));
  FLOE_ASSIGN_OR_RAISE(std::string description, DescribeTable(upsert_table));
  std::printf("\nfloe table describe %s --warehouse %s\n%s\n", upsert_id.ToString().c_str(),
              warehouse.c_str(), description.c_str());
  if (rows != distinct) {
    return Status::Internal("upsert table holds " + std::to_string(rows) + " rows for " +
                            std::to_string(distinct) + " keys");
  }
  return Status::OK();
}

}  // namespace floe::cli

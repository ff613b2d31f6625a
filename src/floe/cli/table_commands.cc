// The `floe table` commands: the storage core driven from the shell.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "floe/cli/args.h"
#include "floe/cli/catalog_args.h"
#include "floe/cli/commands.h"
#include "floe/cli/progress_line.h"
#include "floe/cli/table_ops.h"
#include "floe/common/civil_time.h"
#include "floe/common/closest_match.h"
#include "floe/connectors/iceberg/iceberg_sink.h"
#include "floe/format/json/json_lines.h"
#include "floe/iceberg/catalog.h"
#include "floe/iceberg/maintenance.h"
#include "floe/iceberg/manifest_io.h"
#include "floe/iceberg/rewrite.h"
#include "floe/iceberg/scan.h"
#include "floe/iceberg/table_lease.h"
#include "floe/iceberg/table_properties.h"
#include "floe/io/location.h"
#include "floe/io/object_store.h"
#include "floe/runtime/checkpoint_config.h"
#include "floe/sql/parser.h"
#include "floe/verify/table_verify.h"

namespace floe::cli {
namespace {

using iceberg::TableIdentifier;

constexpr const char* kUsage =
    "usage: floe table <command> NS.TABLE ... [--warehouse DIR]\n"
    "  create NS.TABLE --schema \"col TYPE [NOT NULL], ...\" [--partition-by \"day(ts), "
    "bucket(16, id)\"]\n"
    "                  [--primary-key col[,col]] [--property key=value]...\n"
    "                  [--allow-unknown-properties]  (store write.*/commit.*/read.*/history.*\n"
    "                  keys Iceberg does not define instead of refusing them)\n"
    "  set-properties NS.TABLE KEY=VALUE... [--allow-unknown-properties]\n"
    "                                 set table properties in one commit (write.data.path and\n"
    "                                 write.metadata.path must lie inside the table's location)\n"
    "  append NS.TABLE FILE.jsonl     add the file's rows in one snapshot\n"
    "  upsert NS.TABLE FILE.jsonl     replace rows by primary key in one snapshot\n"
    "  delete NS.TABLE FILE.jsonl     delete the rows whose keys the file holds\n"
    "  scan NS.TABLE [--snapshot ID] [--limit N]   rows as JSON lines, deletes applied\n"
    "  describe NS.TABLE              schema, spec, properties, snapshots, file counts\n"
    "  snapshots | history | files | partitions NS.TABLE\n"
    "                                 Iceberg's metadata tables as JSON lines (Trino's "
    "$snapshots,\n"
    "                                 ...), floe's commit markers in snapshots\n"
    "  positions NS.TABLE             a scaled-out job's partitions: the table's next offset\n"
    "                                 and the instance (job id) that committed it\n"
    "  verify NS.TABLE [--unique COL] [--expect-range COL:1..N] [--expected FILE --key COL]\n"
    "                                 rows, duplicates, missing runs, differences; exit 1 on any\n"
    "  expire-snapshots NS.TABLE [--max-snapshot-age-ms N | --older-than TIME|DURATION] "
    "[--retain-last "
    "N]\n"
    "                                 remove old snapshots and the files only they reference\n"
    "                                 (defaults: history.expire.* properties, 5 days, keep 1;\n"
    "                                 AGE in ms; TIME ISO 8601 UTC; DURATION like 2d, 90min)\n"
    "  compact NS.TABLE [--target-file-size-bytes N] [--min-file-size-bytes N]\n"
    "                  [--max-file-size-bytes N] [--min-input-files N] [--delete-file-threshold "
    "N]\n"
    "                  [--max-bytes N] [--rewrite-all]\n"
    "                                 merge small files per partition by size tiers, deletes\n"
    "                                 applied (defaults: write.target-file-size-bytes, 75%/180%,\n"
    "                                 8 files per tier)\n"
    "  rewrite-manifests NS.TABLE     regroup the manifests by partition into few\n"
    "  remove-orphan-files NS.TABLE [--older-than TIME|DURATION] [--dry-run]\n"
    "                  [--force-unsafe-interval]  (needed for --older-than under 24h)\n"
    "                  [--checkpoint-dir DIR [--savepoint-dir DIR]]...\n"
    "                                 delete files no snapshot references (default older than 3d)\n"
    "                                 and no checkpoint or savepoint of a writing job holds\n"
    "a progress line goes to stderr on a terminal\n"
    "(FLOE_PROGRESS=always|never overrides; --quiet on append, upsert, delete)\n";

Result<TableIdentifier> TableArg(const Args& args, size_t want_positional, const char* form) {
  if (args.positional().size() != want_positional) {
    return Status::InvalidArgument(std::string("expected: floe table ") + form);
  }
  return TableIdentifier::Parse(args.positional()[0]);
}

std::vector<std::string> SplitTrim(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(sep, start);
    if (end == std::string::npos) end = text.size();
    std::string part = text.substr(start, end - start);
    size_t a = part.find_first_not_of(" \t"), b = part.find_last_not_of(" \t");
    if (a != std::string::npos) out.push_back(part.substr(a, b - a + 1));
    start = end + 1;
  }
  return out;
}

// --schema "col TYPE [NOT NULL], ...": a CREATE TABLE's column list, read by the SQL front end
// (floe's one Flink type parser), numbered as a new table's fields.
Result<std::vector<Field>> SchemaFields(const std::string& text) {
  FLOE_ASSIGN_OR_RAISE(std::vector<sql::ColumnDef> columns, sql::ParseColumnList(text));
  std::vector<Field> fields;
  for (const sql::ColumnDef& c : columns) fields.push_back(Field{c.name, c.type, !c.not_null, 0});
  return iceberg::AssignFreshFieldIds(std::move(fields));
}

// One KEY=VALUE argument of `what` into `properties`. As the Iceberg sink does, a misspelled
// Iceberg key (it would be stored and ignored) is refused unless `allow_unknown`.
Status AddPropertyArg(const char* what, const std::string& kv, bool allow_unknown,
                      std::map<std::string, std::string>* properties) {
  size_t eq = kv.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::InvalidArgument(std::string(what) + " wants key=value, got '" + kv + "'");
  }
  std::string key = kv.substr(0, eq);
  if (iceberg::InTablePropertyNamespace(key) && !iceberg::IsKnownTableProperty(key) &&
      !allow_unknown) {
    return Status::InvalidArgument(std::string(what) + " '" + key +
                                   "' is not a table property Iceberg defines" +
                                   DidYouMean(key, iceberg::TablePropertySuggestions(key)) +
                                   "; pass --allow-unknown-properties to store it anyway");
  }
  (*properties)[key] = kv.substr(eq + 1);
  return Status::OK();
}

Status Create(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(
      Args args, Args::Parse(argv, {{kCatalogFlags, kCatalogNameFlag, kJdbcUserFlag, "warehouse",
                                     "schema", "partition-by", "primary-key", "property"},
                                    {"allow-unknown-properties"}}));
  FLOE_ASSIGN_OR_RAISE(TableIdentifier id, TableArg(args, 1, "create NS.TABLE --schema ..."));
  auto schema_text = args.Get("schema");
  if (!schema_text) return Status::InvalidArgument("create needs --schema \"col TYPE, ...\"");
  Result<std::vector<Field>> fields = SchemaFields(*schema_text);
  if (!fields.ok()) return fields.status().WithContext("--schema");
  iceberg::Schema schema;
  schema.fields = std::move(*fields);
  for (const std::string& key : SplitTrim(args.GetOr("primary-key", ""), ',')) {
    const Field* f = schema.FindByName(key);
    if (f == nullptr) {
      return Status::InvalidArgument("--primary-key: no column '" + key + "' in the schema");
    }
    // As in Flink, primary key columns are NOT NULL; Iceberg requires identifier fields to be.
    for (auto& field : schema.fields) {
      if (field.name == key) field.nullable = false;
    }
    schema.identifier_field_ids.push_back(f->field_id);
  }
  iceberg::PartitionSpec spec;
  if (auto clause = args.Get("partition-by")) {
    FLOE_ASSIGN_OR_RAISE(spec, iceberg::ParsePartitionClause(*clause, schema));
  }
  FLOE_RETURN_NOT_OK(ValidateUpsertPartitioning(schema, spec));
  std::map<std::string, std::string> properties;
  for (const std::string& kv : args.GetAll("property")) {
    FLOE_RETURN_NOT_OK(
        AddPropertyArg("--property", kv, args.Has("allow-unknown-properties"), &properties));
  }
  FLOE_RETURN_NOT_OK(ValidateWriteProperties(schema, spec, properties));
  FLOE_ASSIGN_OR_RAISE(auto catalog, OpenCatalogFromArgs(args));
  FLOE_RETURN_NOT_OK(iceberg::EnsureNamespace(*catalog, id.ns));
  FLOE_ASSIGN_OR_RAISE(auto table, catalog->CreateTable(id, schema, spec, properties));
  std::printf("created %s at %s\n", id.ToString().c_str(), table.metadata.location.c_str());
  return Status::OK();
}

// A lease on the table for the files this command writes until it commits them, so that a
// concurrent remove-orphan-files leaves them alone (iceberg/table_lease.h).
Result<std::unique_ptr<iceberg::TableLease>> HoldLease(iceberg::Catalog& catalog,
                                                       const TableIdentifier& id,
                                                       const std::string& holder) {
  FLOE_ASSIGN_OR_RAISE(iceberg::LoadedTable table, catalog.LoadTable(id));
  auto lease = std::make_unique<iceberg::TableLease>(holder);
  FLOE_RETURN_NOT_OK(lease->Open(catalog.file_io(), table.metadata));
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  FLOE_RETURN_NOT_OK(lease->Claim("command", iceberg::LeaseClaim{now, {}}));
  return lease;
}

// `floe table set-properties NS.TABLE KEY=VALUE...`: one commit; the catalog refuses paths
// outside the table (iceberg/table_paths.h), Iceberg keys floe does not know need the opt-in.
Status SetProperties(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(
      Args args, Args::Parse(argv, {{kCatalogFlags, kCatalogNameFlag, kJdbcUserFlag, "warehouse"},
                                    {"allow-unknown-properties"}}));
  if (args.positional().size() < 2) {
    return Status::InvalidArgument("expected: floe table set-properties NS.TABLE KEY=VALUE...");
  }
  FLOE_ASSIGN_OR_RAISE(TableIdentifier id, TableIdentifier::Parse(args.positional()[0]));
  FLOE_ASSIGN_OR_RAISE(auto catalog, OpenCatalogFromArgs(args));
  FLOE_ASSIGN_OR_RAISE(iceberg::LoadedTable table, catalog->LoadTable(id));
  iceberg::TableMetadata updated = table.metadata;
  for (size_t i = 1; i < args.positional().size(); ++i) {
    FLOE_RETURN_NOT_OK(AddPropertyArg("set-properties", args.positional()[i],
                                      args.Has("allow-unknown-properties"), &updated.properties));
  }
  FLOE_RETURN_NOT_OK(catalog->CommitTable(table, std::move(updated)).status());
  std::printf("set-properties %s: %zu properties set\n", id.ToString().c_str(),
              args.positional().size() - 1);
  return Status::OK();
}

Status Write(const std::vector<std::string>& argv, iceberg::WriteMode mode, const char* verb) {
  FLOE_ASSIGN_OR_RAISE(
      Args args, Args::Parse(argv, {{kCatalogFlags, kCatalogNameFlag, kJdbcUserFlag, "warehouse"},
                                    {"quiet"}}));
  FLOE_ASSIGN_OR_RAISE(TableIdentifier id,
                       TableArg(args, 2, (std::string(verb) + " NS.TABLE FILE.jsonl").c_str()));
  FLOE_ASSIGN_OR_RAISE(auto catalog, OpenCatalogFromArgs(args));
  FLOE_ASSIGN_OR_RAISE(auto lease, HoldLease(*catalog, id, std::string("cli-") + verb));
  WriteReport report;
  FLOE_RETURN_NOT_OK(
      WriteJsonFile(*catalog, id, args.positional()[1], mode, !args.Has("quiet"), &report));
  std::printf(
      "%s %s: %lld rows read, snapshot %lld (%lld data files, %lld delete files, %lld deletes)\n",
      verb, id.ToString().c_str(), static_cast<long long>(report.rows_read),
      static_cast<long long>(report.snapshot_id), static_cast<long long>(report.data_files),
      static_cast<long long>(report.delete_files), static_cast<long long>(report.delete_records));
  return Status::OK();
}

Status Scan(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(
      Args args, Args::Parse(argv, {{kCatalogFlags, kCatalogNameFlag, kJdbcUserFlag, "warehouse",
                                     "snapshot", "limit"},
                                    {}}));
  FLOE_ASSIGN_OR_RAISE(TableIdentifier id, TableArg(args, 1, "scan NS.TABLE"));
  FLOE_ASSIGN_OR_RAISE(auto snapshot, args.GetInt("snapshot"));
  FLOE_ASSIGN_OR_RAISE(auto limit, args.GetInt("limit"));
  FLOE_ASSIGN_OR_RAISE(auto catalog, OpenCatalogFromArgs(args));
  FLOE_ASSIGN_OR_RAISE(auto table, catalog->LoadTable(id));
  if (snapshot && table.metadata.FindSnapshot(*snapshot) == nullptr) {
    return Status::NotFound("table " + id.ToString() + " has no snapshot " +
                            std::to_string(*snapshot));
  }
  const io::FileIO& file_io = catalog->file_io();
  FLOE_ASSIGN_OR_RAISE(auto tasks, iceberg::PlanScan(file_io, table.metadata, snapshot));
  // Missing, truncated or replaced files are found from their footers before the first row is
  // printed; only damage inside a page can still stop the scan halfway, and then it says so.
  if (Status st = iceberg::CheckScanFiles(file_io, tasks); !st.ok()) {
    return st.WithContext("nothing was printed");
  }
  int64_t remaining = limit ? *limit : INT64_MAX;
  int64_t printed = 0;
  std::string out;
  Status st = iceberg::ScanTasks(file_io, table.metadata, tasks, [&](const RecordBatch& batch) {
    for (size_t r = 0; r < batch.num_rows() && remaining > 0; ++r, --remaining, ++printed) {
      json::AppendRowAsJson(batch, r, &out);
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    out.clear();
    return Status::OK();
  });
  if (st.ok()) return st;
  std::fflush(stdout);  // the rows printed come before the error
  if (printed == 0) return st.WithContext("nothing was printed");
  return st.WithContext("output incomplete: " + std::to_string(printed) +
                        " rows printed before this error");
}

Status Describe(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(
      Args args,
      Args::Parse(argv, {{kCatalogFlags, kCatalogNameFlag, kJdbcUserFlag, "warehouse"}, {}}));
  FLOE_ASSIGN_OR_RAISE(TableIdentifier id, TableArg(args, 1, "describe NS.TABLE"));
  FLOE_ASSIGN_OR_RAISE(auto catalog, OpenCatalogFromArgs(args));
  FLOE_ASSIGN_OR_RAISE(auto table, catalog->LoadTable(id));
  FLOE_ASSIGN_OR_RAISE(std::string text, DescribeTable(catalog->file_io(), table));
  std::printf("%s\n", text.c_str());
  return Status::OK();
}

// `floe table snapshots | history | files | partitions NS.TABLE`: Iceberg's metadata tables.
Status MetadataTableCommand(const std::string& view, const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(
      Args args,
      Args::Parse(argv, {{kCatalogFlags, kCatalogNameFlag, kJdbcUserFlag, "warehouse"}, {}}));
  FLOE_ASSIGN_OR_RAISE(TableIdentifier id, TableArg(args, 1, (view + " NS.TABLE").c_str()));
  FLOE_ASSIGN_OR_RAISE(auto catalog, OpenCatalogFromArgs(args));
  FLOE_ASSIGN_OR_RAISE(auto table, catalog->LoadTable(id));
  FLOE_ASSIGN_OR_RAISE(std::string rows, MetadataTableRows(catalog->file_io(), table, view));
  std::fwrite(rows.data(), 1, rows.size(), stdout);
  return Status::OK();
}

Status Verify(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(
      Args args, Args::Parse(argv, {{kCatalogFlags, kCatalogNameFlag, kJdbcUserFlag, "warehouse",
                                     "unique", "expect-range", "expected", "key"},
                                    {}}));
  FLOE_ASSIGN_OR_RAISE(TableIdentifier id, TableArg(args, 1, "verify NS.TABLE [checks]"));
  verify::VerifyOptions options;
  options.unique_column = args.GetOr("unique", "");
  if (auto range = args.Get("expect-range")) {
    FLOE_ASSIGN_OR_RAISE(options.expect_range, verify::ParseExpectRange(*range));
  }
  options.expected_file = args.GetOr("expected", "");
  options.key_column = args.GetOr("key", "");
  if (options.expected_file.empty() != options.key_column.empty()) {
    return Status::InvalidArgument("--expected FILE and --key COL go together");
  }
  FLOE_ASSIGN_OR_RAISE(auto catalog, OpenCatalogFromArgs(args));
  FLOE_ASSIGN_OR_RAISE(auto report, verify::VerifyTable(*catalog, id, options));
  std::printf("%s", report.ToText().c_str());
  if (report.findings() > 0) {
    return Status::InvalidArgument(std::to_string(report.findings()) + " finding(s) in " +
                                   id.ToString());
  }
  return Status::OK();
}

// Feeds an engine's maintenance progress to `line`.
iceberg::MaintenanceProgressFn ShowOn(ProgressLine& line) {
  return [&line](const iceberg::MaintenanceProgress& p) {
    ProgressCounts counts;
    counts.files = p.files_done;
    counts.files_total = p.files_total;
    counts.bytes = p.bytes_done;
    counts.bytes_total = p.bytes_total;
    counts.rows = p.rows_done;
    line.Update(counts);
  };
}

// --older-than: an ISO 8601 timestamp ("2024-05-01T00:00:00Z"; no zone = UTC) or a duration
// before now ("2d", "90min", "0").
Result<int64_t> OlderThanMs(const std::string& text) {
  int64_t micros = 0;
  if (text.size() >= 10 && text[4] == '-') {
    const bool zoned = text.back() == 'Z' || text.find('+', 10) != std::string::npos ||
                       text.find('-', 10) != std::string::npos;
    if (const char* err = ParseTimestamp(text, zoned, &micros)) {
      return Status::InvalidArgument("--older-than '" + text + "': " + err);
    }
    return micros / 1000;
  }
  Result<std::chrono::milliseconds> age = runtime::ParseDuration(text);
  if (!age.ok()) return age.status().WithContext("--older-than");
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  return now - age->count();
}

// remove-orphan-files: an interval under 24 h is refused without --force-unsafe-interval.
Status CheckOrphanInterval(const std::string& text, int64_t older_than_ms, bool forced) {
  constexpr int64_t kMinMs = 24LL * 3600 * 1000;
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const int64_t interval_ms = now - older_than_ms;
  if (forced || interval_ms >= kMinMs) return Status::OK();
  return Status::InvalidArgument(
      "remove-orphan-files: --older-than '" + text + "' is an interval of " +
      std::to_string(std::max<int64_t>(interval_ms, 0) / 1000) +
      " s, under the minimum of 24 h: a file younger than that may belong to a write still in "
      "progress (a job's checkpoint not committed yet, a compaction), and deleting it loses "
      "rows the commit then references; Iceberg's remove_orphan_files refuses intervals under "
      "24 hours for this reason. Live floe jobs' files are protected by their leases whatever "
      "the interval, other writers' are not; pass --force-unsafe-interval to go ahead");
}

Status ExpireSnapshotsCommand(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(
      Args args, Args::Parse(argv, {{kCatalogFlags, kCatalogNameFlag, kJdbcUserFlag, "warehouse",
                                     "max-snapshot-age-ms", "older-than", "retain-last"},
                                    {}}));
  FLOE_ASSIGN_OR_RAISE(TableIdentifier id, TableArg(args, 1, "expire-snapshots NS.TABLE"));
  iceberg::ExpireOptions options;
  if (args.Has("max-snapshot-age-ms") && args.Has("older-than")) {
    return Status::InvalidArgument("give --max-snapshot-age-ms or --older-than, not both");
  }
  // --max-snapshot-age-ms is an age, like history.expire.max-snapshot-age-ms: 0 = older than now.
  FLOE_ASSIGN_OR_RAISE(auto age_ms, args.GetInt("max-snapshot-age-ms"));
  if (age_ms) {
    if (*age_ms < 0) return Status::InvalidArgument("--max-snapshot-age-ms must not be negative");
    FLOE_ASSIGN_OR_RAISE(options.older_than_ms, OlderThanMs(std::to_string(*age_ms) + "ms"));
  }
  if (auto text = args.Get("older-than")) {
    FLOE_ASSIGN_OR_RAISE(options.older_than_ms, OlderThanMs(*text));
  }
  FLOE_ASSIGN_OR_RAISE(options.retain_last, args.GetInt("retain-last"));
  if (options.retain_last && *options.retain_last < 1) {
    return Status::InvalidArgument("--retain-last must be at least 1");
  }
  FLOE_ASSIGN_OR_RAISE(auto catalog, OpenCatalogFromArgs(args));
  ProgressLine line("expire-snapshots");
  options.progress = ShowOn(line);
  FLOE_ASSIGN_OR_RAISE(iceberg::ExpireResult r, iceberg::ExpireSnapshots(*catalog, id, options));
  line.Done();
  std::printf(
      "expire-snapshots %s: %zu snapshots expired, %lld kept; deleted %lld manifest lists, "
      "%lld manifests, %lld data files, %lld delete files (%lld bytes)\n",
      id.ToString().c_str(), r.expired_snapshot_ids.size(),
      static_cast<long long>(r.snapshots_kept), static_cast<long long>(r.manifest_lists_deleted),
      static_cast<long long>(r.manifests_deleted), static_cast<long long>(r.data_files_deleted),
      static_cast<long long>(r.delete_files_deleted), static_cast<long long>(r.bytes_deleted));
  if (r.statistics_files_deleted > 0) {
    std::printf("deleted %lld statistics files of expired snapshots\n",
                static_cast<long long>(r.statistics_files_deleted));
  }
  for (const std::string& ref : r.refs_removed) {
    std::printf(
        "removed ref '%s' (older than its max-ref-age-ms or the table's "
        "history.expire.max-ref-age-ms)\n",
        ref.c_str());
  }
  if (r.files_not_deleted > 0) {
    std::printf("%lld files could not be deleted (left as orphans)\n",
                static_cast<long long>(r.files_not_deleted));
  }
  if (r.files_outside_skipped > 0) {
    std::printf("%lld files outside the table's location not deleted (named in the warnings)\n",
                static_cast<long long>(r.files_outside_skipped));
  }
  return Status::OK();
}

Status CompactCommand(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(
      Args args,
      Args::Parse(argv, {{kCatalogFlags, kCatalogNameFlag, kJdbcUserFlag, "warehouse",
                          "target-file-size-bytes", "min-file-size-bytes", "max-file-size-bytes",
                          "min-input-files", "delete-file-threshold", "max-bytes"},
                         {"rewrite-all"}}));
  FLOE_ASSIGN_OR_RAISE(TableIdentifier id, TableArg(args, 1, "compact NS.TABLE"));
  iceberg::CompactOptions options;
  FLOE_ASSIGN_OR_RAISE(options.target_file_size_bytes, args.GetInt("target-file-size-bytes"));
  FLOE_ASSIGN_OR_RAISE(options.min_file_size_bytes, args.GetInt("min-file-size-bytes"));
  FLOE_ASSIGN_OR_RAISE(options.max_file_size_bytes, args.GetInt("max-file-size-bytes"));
  // min-input-files is the size tiers' fan-in: a tier of one file would rewrite it forever.
  for (auto [name, field, least] :
       {std::tuple{"min-input-files", &options.min_input_files, 2},
        std::tuple{"delete-file-threshold", &options.delete_file_threshold, 1},
        std::tuple{"max-bytes", &options.max_bytes, 1}}) {
    FLOE_ASSIGN_OR_RAISE(std::optional<int64_t> v, args.GetInt(name));
    if (v && *v < least) {
      return Status::InvalidArgument(std::string("--") + name + " must be >= " +
                                     std::to_string(least) + ", got " + std::to_string(*v));
    }
    if (v) *field = *v;
  }
  options.rewrite_all = args.Has("rewrite-all");
  FLOE_ASSIGN_OR_RAISE(auto catalog, OpenCatalogFromArgs(args));
  FLOE_ASSIGN_OR_RAISE(auto lease, HoldLease(*catalog, id, "cli-compact"));
  ProgressLine line("compact");
  options.progress = ShowOn(line);
  FLOE_ASSIGN_OR_RAISE(iceberg::RewriteResult r, iceberg::RewriteDataFiles(*catalog, id, options));
  line.Done();
  if (!r.snapshot_id) {
    std::printf("compact %s: nothing to compact (%lld data files, %lld delete files, %s)\n",
                id.ToString().c_str(), static_cast<long long>(r.data_files_before),
                static_cast<long long>(r.delete_files_before),
                FormatBytes(r.data_bytes_before).c_str());
    return Status::OK();
  }
  std::printf(
      "compact %s: rewrote %lld data files (%s, %lld rows) in %lld partitions into %lld (%s, %lld "
      "rows), removed %lld delete files; data files %lld -> %lld, delete files %lld -> %lld, data "
      "%s -> %s; snapshot %lld\n",
      id.ToString().c_str(), static_cast<long long>(r.data_files_rewritten),
      FormatBytes(r.bytes_rewritten).c_str(), static_cast<long long>(r.rows_read),
      static_cast<long long>(r.groups_rewritten), static_cast<long long>(r.data_files_added),
      FormatBytes(r.bytes_added).c_str(), static_cast<long long>(r.rows_written),
      static_cast<long long>(r.delete_files_removed), static_cast<long long>(r.data_files_before),
      static_cast<long long>(r.data_files_after), static_cast<long long>(r.delete_files_before),
      static_cast<long long>(r.delete_files_after), FormatBytes(r.data_bytes_before).c_str(),
      FormatBytes(r.data_bytes_after).c_str(), static_cast<long long>(*r.snapshot_id));
  return Status::OK();
}

Status RewriteManifestsCommand(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(
      Args args,
      Args::Parse(argv, {{kCatalogFlags, kCatalogNameFlag, kJdbcUserFlag, "warehouse"}, {}}));
  FLOE_ASSIGN_OR_RAISE(TableIdentifier id, TableArg(args, 1, "rewrite-manifests NS.TABLE"));
  FLOE_ASSIGN_OR_RAISE(auto catalog, OpenCatalogFromArgs(args));
  FLOE_ASSIGN_OR_RAISE(iceberg::RewriteResult r, iceberg::RewriteManifests(*catalog, id));
  if (!r.snapshot_id) {
    std::printf("rewrite-manifests %s: nothing to do (%lld manifests)\n", id.ToString().c_str(),
                static_cast<long long>(r.manifests_before));
  } else {
    std::printf("rewrite-manifests %s: %lld -> %lld manifests; snapshot %lld\n",
                id.ToString().c_str(), static_cast<long long>(r.manifests_before),
                static_cast<long long>(r.manifests_after), static_cast<long long>(*r.snapshot_id));
  }
  return Status::OK();
}

Status RemoveOrphanFilesCommand(const std::vector<std::string>& argv) {
  FLOE_ASSIGN_OR_RAISE(
      Args args, Args::Parse(argv, {{kCatalogFlags, kCatalogNameFlag, kJdbcUserFlag, "warehouse",
                                     "older-than", "checkpoint-dir", "savepoint-dir"},
                                    {"dry-run", "force-unsafe-interval"}}));
  FLOE_ASSIGN_OR_RAISE(TableIdentifier id, TableArg(args, 1, "remove-orphan-files NS.TABLE"));
  iceberg::OrphanOptions options;
  options.dry_run = args.Has("dry-run");
  // Files a job writing the table staged in a retained checkpoint or savepoint are not orphans:
  // a restore may still commit them.
  if (args.Has("savepoint-dir") && !args.Has("checkpoint-dir")) {
    return Status::InvalidArgument("--savepoint-dir needs --checkpoint-dir (the job's)");
  }
  auto held = std::make_shared<std::set<std::string>>();
  std::string savepoint_dir;
  if (auto dir = args.Get("savepoint-dir")) {
    FLOE_ASSIGN_OR_RAISE(savepoint_dir, io::ResolveLocation(*dir, "--savepoint-dir"));
  }
  // A job's checkpoints on s3:// are read with the AWS environment's settings.
  const io::FileIO checkpoint_file_io(io::S3ConfigFromEnvironment());
  for (const std::string& given : args.GetAll("checkpoint-dir")) {
    FLOE_ASSIGN_OR_RAISE(std::string dir, io::ResolveLocation(given, "--checkpoint-dir"));
    FLOE_ASSIGN_OR_RAISE(std::set<std::string> files, connectors::IcebergFilesHeldByCheckpoints(
                                                          checkpoint_file_io, dir, savepoint_dir));
    held->insert(files.begin(), files.end());
  }
  options.in_use = [held](const std::string& path) { return held->count(path) > 0; };
  if (auto text = args.Get("older-than")) {
    FLOE_ASSIGN_OR_RAISE(options.older_than_ms, OlderThanMs(*text));
    FLOE_RETURN_NOT_OK(
        CheckOrphanInterval(*text, *options.older_than_ms, args.Has("force-unsafe-interval")));
  }
  FLOE_ASSIGN_OR_RAISE(auto catalog, OpenCatalogFromArgs(args));
  ProgressLine line("remove-orphan-files");
  options.progress = ShowOn(line);
  FLOE_ASSIGN_OR_RAISE(iceberg::OrphanResult r, iceberg::RemoveOrphanFiles(*catalog, id, options));
  line.Done();
  for (const std::string& path : r.orphans) {
    std::printf("%s %s\n", options.dry_run ? "orphan" : "removed", path.c_str());
  }
  std::printf(
      "remove-orphan-files %s: %zu orphan files (%s) %s; %lld unreferenced files kept as newer "
      "than --older-than, %lld as work in progress of a live writer (its lease); %lld files "
      "scanned\n",
      id.ToString().c_str(), r.orphans.size(), FormatBytes(r.orphan_bytes).c_str(),
      options.dry_run ? "found (dry run, nothing deleted)" : "deleted",
      static_cast<long long>(r.kept_too_new), static_cast<long long>(r.kept_leased),
      static_cast<long long>(r.files_scanned));
  if (r.not_deleted > 0) {
    return Status::IOError(std::to_string(r.not_deleted) + " orphan files could not be deleted");
  }
  return Status::OK();
}

}  // namespace

Status RunTableCommand(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "help") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    std::fputs(kCatalogUsage, args.empty() ? stderr : stdout);
    return args.empty() ? Status::InvalidArgument("missing table command") : Status::OK();
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  const std::string& verb = args[0];
  if (verb == "create") return Create(rest);
  if (verb == "append") return Write(rest, iceberg::WriteMode::kAppend, "append");
  if (verb == "upsert") return Write(rest, iceberg::WriteMode::kUpsert, "upsert");
  if (verb == "delete") return Write(rest, iceberg::WriteMode::kDelete, "delete");
  if (verb == "scan") return Scan(rest);
  if (verb == "describe") return Describe(rest);
  if (verb == "snapshots" || verb == "history" || verb == "files" || verb == "partitions" ||
      verb == "positions") {
    return MetadataTableCommand(verb, rest);
  }
  if (verb == "verify") return Verify(rest);
  if (verb == "expire-snapshots") return ExpireSnapshotsCommand(rest);
  if (verb == "set-properties") return SetProperties(rest);
  if (verb == "compact") return CompactCommand(rest);
  if (verb == "rewrite-manifests") return RewriteManifestsCommand(rest);
  if (verb == "remove-orphan-files") return RemoveOrphanFilesCommand(rest);
  std::fputs(kUsage, stderr);
  std::fputs(kCatalogUsage, stderr);
  return Status::InvalidArgument("unknown table command '" + verb + "'");
}

}  // namespace floe::cli

#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "floe/iceberg/partition_spec.h"
#include "floe/iceberg/schema.h"

namespace floe::iceberg {

struct Snapshot {
  int64_t snapshot_id = 0;
  std::optional<int64_t> parent_snapshot_id;
  int64_t sequence_number = 0;
  int64_t timestamp_ms = 0;
  std::string manifest_list;  // absolute file:// path
  // Includes "operation" (append | replace | overwrite | delete), the standard totals
  // (added-data-files, total-records, ...) and floe's commit marker (floe.*).
  std::map<std::string, std::string> summary;
  std::optional<int32_t> schema_id;

  std::string operation() const;
  bool operator==(const Snapshot&) const = default;
};

struct SnapshotLogEntry {
  int64_t timestamp_ms = 0;
  int64_t snapshot_id = 0;
  bool operator==(const SnapshotLogEntry&) const = default;
};

struct MetadataLogEntry {
  int64_t timestamp_ms = 0;
  std::string metadata_file;
  bool operator==(const MetadataLogEntry&) const = default;
};

struct SnapshotRef {
  SnapshotRef(int64_t id = 0, std::string ref_type = "branch")
      : snapshot_id(id), type(std::move(ref_type)) {}
  int64_t snapshot_id = 0;
  std::string type = "branch";
  // The ref's own retention (spec "Snapshot Retention Policy"); unset: the table's
  // history.expire.* properties. The first two apply to branches, the third to any ref but main.
  std::optional<int32_t> min_snapshots_to_keep;
  std::optional<int64_t> max_snapshot_age_ms;
  std::optional<int64_t> max_ref_age_ms;
  bool operator==(const SnapshotRef&) const = default;
};

// A sort order the table declares (spec "Sort Orders"), kept as written: floe does not sort
// what it writes (the spec lets streaming writers skip the default order) but keeps the orders
// other engines declared.
struct SortOrder {
  int32_t order_id = 0;
  bool unsorted = true;                                // no fields
  std::string json = R"({"order-id":0,"fields":[]})";  // the whole object, compact
  bool operator==(const SortOrder&) const = default;
};

// A table or partition statistics file registered for a snapshot (spec "Table Statistics",
// "Partition Statistics"), kept as written: floe writes none, keeps the ones other engines
// registered, and drops one with its snapshot (expiry deletes the file).
struct StatisticsFile {
  int64_t snapshot_id = 0;
  std::string path;  // statistics-path
  std::string json;  // the whole entry, compact
  bool operator==(const StatisticsFile&) const = default;
};

// Table metadata, format v2 (spec "Table Metadata"). Plain value; encode/decode with
// TableMetadataToJson / TableMetadataFromJson. Fields floe does not act on (sort orders,
// statistics, refs' retention) are kept as another engine wrote them.
struct TableMetadata {
  int format_version = 2;
  std::string table_uuid;
  std::string location;  // absolute file:// URI of the table directory, no trailing slash
  int64_t last_sequence_number = 0;
  int64_t last_updated_ms = 0;
  int32_t last_column_id = 0;
  std::vector<Schema> schemas;
  int32_t current_schema_id = 0;
  std::vector<PartitionSpec> partition_specs;
  int32_t default_spec_id = 0;
  int32_t last_partition_id = 999;
  int32_t default_sort_order_id = 0;
  std::vector<SortOrder> sort_orders = {SortOrder{}};  // the unsorted order, id 0
  std::map<std::string, std::string> properties;
  std::optional<int64_t> current_snapshot_id;
  std::vector<Snapshot> snapshots;
  std::vector<SnapshotLogEntry> snapshot_log;
  std::vector<MetadataLogEntry> metadata_log;
  std::map<std::string, SnapshotRef> refs;  // "main" -> current snapshot when there is one
  std::vector<StatisticsFile> statistics;
  std::vector<StatisticsFile> partition_statistics;

  const Schema& current_schema() const;  // REQUIRES: valid metadata
  const PartitionSpec& default_spec() const;
  const PartitionSpec* FindSpec(int32_t spec_id) const;
  const Snapshot* current_snapshot() const;  // nullptr when the table has no snapshot
  const Snapshot* FindSnapshot(int64_t snapshot_id) const;
  // Value of a table property, or `fallback`.
  std::string Property(const std::string& key, const std::string& fallback) const;
  // The sort order id floe's data files carry: the default order's when it has no fields, else
  // none (floe writes rows in arrival order, which a sorted order would misdescribe).
  std::optional<int32_t> WrittenSortOrderId() const;
  // Makes `snapshot_id` the current snapshot and main's, keeping main's retention settings.
  void SetMain(int64_t snapshot_id);
  // Drops these snapshots, their snapshot-log entries and their statistics (refs untouched).
  void RemoveSnapshots(const std::vector<int64_t>& snapshot_ids);
  bool operator==(const TableMetadata&) const = default;
};

// Builds the metadata of a new, empty table: fresh uuid, schema id 0, spec id 0 (field ids
// reassigned from 1000), properties as given, no snapshots.
Result<TableMetadata> NewTableMetadata(const Schema& schema, const PartitionSpec& spec,
                                       const std::string& location,
                                       std::map<std::string, std::string> properties);

// Schema evolution by the columns a writer declares (name, type, nullable; field_id ignored),
// as Iceberg allows it without rewriting a file: a declared column the table lacks is added as
// optional with a new field id (after last-column-id); a column whose declared type is a legal
// widening of the table's (int -> long, float -> double, decimal(P, S) -> decimal(P', S) with
// P' > P) is widened in place. The result is a new schema (the next schema id) made current,
// or `base` unchanged when there is nothing to do; *changes lists what changed ("added column
// 'email' STRING (id 8)", ...). InvalidArgument naming the column for anything else: a NOT
// NULL column to add (v2 cannot add a required column), a narrowing or another type, a table
// column not declared.
// `keep_other_columns`: table columns the declaration lacks are kept instead of refused (a table
// that also grows by the fields its records carry).
Result<TableMetadata> EvolveSchema(const TableMetadata& base, const std::vector<Field>& declared,
                                   std::vector<std::string>* changes,
                                   bool keep_other_columns = false);
// The table's schema grown to what a writer wrote files with (`written`, whose field ids the
// writer chose after the table's last-column-id): each field of `written` the current schema
// lacks (by id) is added as it is, made optional, and a field `written` widens (as EvolveSchema
// allows) is widened; the result is a new current schema, or `base` unchanged when there is
// nothing to adopt. InvalidArgument naming the field when the two disagree: an id under another
// name, a type neither equal nor a widening, a new id not above last-column-id or a new name the
// table already has (the table evolved otherwise since the writer read it).
Result<TableMetadata> AdoptWrittenSchema(const TableMetadata& base, const Schema& written,
                                         std::vector<std::string>* changes = nullptr);

// JSON text with every required v2 field. Snapshot ids are written as JSON integers.
std::string TableMetadataToJson(const TableMetadata& metadata);
// Errors name `source` (the file) and the missing or malformed field.
Result<TableMetadata> TableMetadataFromJson(std::string_view json, std::string_view source);
// One snapshot as the metadata's "snapshots" hold it (the REST catalog's add-snapshot).
std::string SnapshotToJson(const Snapshot& snapshot);
Result<Snapshot> SnapshotFromJson(std::string_view json, std::string_view source);
// One ref as the metadata's "refs" hold it (snapshot-id, type, its retention when set), which is
// also what REST's set-snapshot-ref carries beside its action and ref-name.
std::string SnapshotRefToJson(const SnapshotRef& ref);
Result<SnapshotRef> SnapshotRefFromJson(std::string_view json, std::string_view source);

}  // namespace floe::iceberg

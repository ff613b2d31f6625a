#pragma once

// A routed Iceberg sink: 'catalog-table' = 'events_{kind}' sends each row to the table its
// columns name, creating tables on first sight (docs/connectors.md, "One job, many tables").
// Each table gets the plain sink's writer and committer (IcebergWriterOperator,
// IcebergCommitterOperator), opened inside one writer and one committer task, so one checkpoint
// covers every table, each table gets its own commits and markers, and its own maintenance.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/catalog/catalog_config.h"
#include "floe/common/status.h"
#include "floe/connectors/iceberg/iceberg_committer_operator.h"
#include "floe/connectors/iceberg/iceberg_writer_operator.h"
#include "floe/runtime/operator.h"

namespace floe::connectors::internal {

// A table name template: literal text and {column} references.
struct TableRoute {
  std::vector<std::string> literals;  // the text around the references: columns.size() + 1
  std::vector<std::string> columns;   // the referenced columns, in order
  // The name for one row's values (one per column).
  std::string NameFor(const std::vector<std::string_view>& values) const;
  // Whether `name` could have come from this template (a value may be empty).
  bool Matches(std::string_view name) const;
};
// No columns when `text` holds no "{"; InvalidArgument for an unclosed or empty reference.
Result<TableRoute> ParseTableRoute(std::string_view text);

// What a routed sink's operators need to open one table's writer and committer; built by
// iceberg_sink.cc. Thread-safe (the writer and committer tasks call it concurrently).
struct RoutedTables {
  std::string sink_id;
  std::string ns;  // the tables' namespace
  TableRoute route;
  catalog::CatalogConfig catalog;  // each task opens one and shares it among its tables
  // Creates the table through `catalog` when missing (as a plain sink's PrepareIcebergTable
  // does) and returns its writer's options.
  std::function<Result<IcebergWriterOptions>(const std::string& table, iceberg::Catalog& catalog)>
      writer_options;
  std::function<Result<IcebergCommitterOptions>(const std::string& table)> committer_options;
  // The route's existing tables this sink committed to or created (their names).
  std::function<Result<std::vector<std::string>>(iceberg::Catalog& catalog)> discover;
};

// The writer task of a routed sink: per row, the table its route columns name (a null value
// or a name that is not a valid table name fails the task, naming row, column and value); the
// rows of each table go to that table's IcebergWriterOperator, opened on first sight.
class RoutedIcebergWriterOperator final : public runtime::Operator {
 public:
  explicit RoutedIcebergWriterOperator(std::shared_ptr<const RoutedTables> tables)
      : tables_(std::move(tables)) {}

  Status Open(const runtime::OperatorContext& ctx) override;
  Status ProcessBatch(const RecordBatch& batch, int input, runtime::Collector& out) override;
  Status PrepareBarrier(runtime::CheckpointId id, runtime::Collector& out) override;
  Status OnBarrier(runtime::CheckpointId id, runtime::StateWriter& state,
                   runtime::Collector& out) override;
  Status OnEndOfInput(runtime::Collector& out) override;
  Status OnCheckpointComplete(runtime::CheckpointId id) override;
  Status Close() override;
  void Abandon(runtime::CheckpointId last_completed) override;

 private:
  Result<runtime::Operator*> Writer(const std::string& table);

  std::shared_ptr<const RoutedTables> tables_;
  runtime::OperatorContext ctx_;
  uint64_t last_barrier_ = 0;
  std::shared_ptr<iceberg::Catalog> catalog_;  // shared by the tables' writers
  std::map<std::string, std::unique_ptr<runtime::Operator>> writers_;  // by table name
};

// The committer task of a routed sink: one IcebergCommitterOperator per table, opened for the
// tables `discover` finds (so every table's marker moves with the source positions), for the
// tables of the restored state, and on the first files of a new table. Its state holds each
// table's committer state (kRoutedCommitterStateVersion).
class RoutedIcebergCommitterOperator final : public runtime::Operator {
 public:
  explicit RoutedIcebergCommitterOperator(std::shared_ptr<const RoutedTables> tables)
      : tables_(std::move(tables)) {}

  Status Open(const runtime::OperatorContext& ctx) override;
  Status Restore(runtime::StateReader& state) override;
  Status ProcessBatch(const RecordBatch& batch, int input, runtime::Collector& out) override;
  Status OnBarrier(runtime::CheckpointId id, runtime::StateWriter& state,
                   runtime::Collector& out) override;
  Status OnCheckpointComplete(runtime::CheckpointId id) override;
  Status OnEndOfInput(runtime::Collector& out) override;
  Status OnWatermark(runtime::Watermark watermark, runtime::Collector& out) override;
  Status Close() override;
  void Abandon(runtime::CheckpointId last_completed) override;

 private:
  Result<IcebergCommitterOperator*> Committer(const std::string& table);

  std::shared_ptr<const RoutedTables> tables_;
  runtime::OperatorContext ctx_;
  std::optional<runtime::Watermark> watermark_;
  bool end_of_input_ = false;
  std::shared_ptr<iceberg::Catalog> catalog_;  // shared by the tables' committers
  std::map<std::string, std::unique_ptr<IcebergCommitterOperator>> committers_;
};

}  // namespace floe::connectors::internal

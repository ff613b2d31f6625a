#include "floe/connectors/iceberg/routed_sink.h"

#include <algorithm>
#include <utility>

#include "floe/catalog/catalog_config.h"
#include "floe/common/log.h"
#include "floe/connectors/iceberg/iceberg_sink_internal.h"
#include "floe/iceberg/catalog.h"

namespace floe::connectors::internal {

namespace {

struct NoOutput final : runtime::Collector {
  Status Emit(RecordBatch) override { return Status::OK(); }
  Status EmitWatermark(runtime::Watermark) override { return Status::OK(); }
};

Status OpenSharedCatalog(const catalog::CatalogConfig& config,
                         std::shared_ptr<iceberg::Catalog>* out) {
  FLOE_ASSIGN_OR_RAISE(*out, catalog::OpenCatalog(config));
  return Status::OK();
}

}  // namespace

std::string TableRoute::NameFor(const std::vector<std::string_view>& values) const {
  std::string name = literals[0];
  for (size_t i = 0; i < values.size(); ++i) {
    name.append(values[i]);
    name += literals[i + 1];
  }
  return name;
}

bool TableRoute::Matches(std::string_view name) const {
  const std::string& first = literals.front();
  const std::string& last = literals.back();
  if (name.size() < first.size() + last.size()) return false;
  if (name.substr(0, first.size()) != first) return false;
  if (name.substr(name.size() - last.size()) != last) return false;
  // The literals between references appear in order (a value may be empty).
  size_t at = first.size();
  const size_t end = name.size() - last.size();
  for (size_t i = 1; i + 1 < literals.size(); ++i) {
    size_t found = name.substr(0, end).find(literals[i], at);
    if (found == std::string_view::npos) return false;
    at = found + literals[i].size();
  }
  return true;
}

Result<TableRoute> ParseTableRoute(std::string_view text) {
  TableRoute route;
  size_t at = 0;
  for (;;) {
    size_t open = text.find('{', at);
    if (open == std::string_view::npos) {
      route.literals.emplace_back(text.substr(at));
      break;
    }
    size_t close = text.find('}', open);
    if (close == std::string_view::npos) {
      return Status::InvalidArgument("'" + std::string(text) + "': '{' at " + std::to_string(open) +
                                     " has no closing '}'");
    }
    std::string column(text.substr(open + 1, close - open - 1));
    if (column.empty()) {
      return Status::InvalidArgument("'" + std::string(text) + "': an empty reference '{}'");
    }
    if (!route.literals.empty() && open == at) {
      return Status::InvalidArgument("'" + std::string(text) +
                                     "': two references must be separated by text (a name "
                                     "could not be split back into their values)");
    }
    route.literals.emplace_back(text.substr(at, open - at));
    route.columns.push_back(std::move(column));
    at = close + 1;
  }
  return route;
}

// ---- writer --------------------------------------------------------------------------------

Status RoutedIcebergWriterOperator::Open(const runtime::OperatorContext& ctx) {
  ctx_ = ctx;
  if (ctx.restored_from) last_barrier_ = ctx.restored_from->value;
  return Status::OK();
}

Result<runtime::Operator*> RoutedIcebergWriterOperator::Writer(const std::string& table) {
  auto it = writers_.find(table);
  if (it != writers_.end()) return it->second.get();
  if (!catalog_) FLOE_RETURN_NOT_OK(OpenSharedCatalog(tables_->catalog, &catalog_));
  FLOE_ASSIGN_OR_RAISE(IcebergWriterOptions options, tables_->writer_options(table, *catalog_));
  options.shared_catalog = catalog_;
  FLOE_ASSIGN_OR_RAISE(std::unique_ptr<IcebergWriterOperator> writer,
                       IcebergWriterOperator::Make(std::move(options)));
  // The writer names its files after the checkpoint it expects next.
  runtime::OperatorContext ctx = ctx_;
  if (last_barrier_ > 0) ctx.restored_from = runtime::CheckpointId(last_barrier_);
  Status opened = writer->Open(ctx);
  if (!opened.ok()) return opened.WithContext("routed table " + table);
  return writers_.emplace(table, std::move(writer)).first->second.get();
}

Status RoutedIcebergWriterOperator::ProcessBatch(const RecordBatch& batch, int input,
                                                 runtime::Collector& out) {
  const TableRoute& route = tables_->route;
  std::vector<const Column*> columns;
  for (const std::string& name : route.columns) {
    int index = batch.schema()->FieldIndex(name);
    if (index < 0 || batch.schema()->fields[index].type.id != TypeId::kString) {
      return Status::Internal("routed iceberg sink '" + tables_->sink_id +
                              "': the input has no STRING column '" + name + "'");
    }
    columns.push_back(&batch.column(static_cast<size_t>(index)));
  }
  // Rows by table name. Rows of one table often come in runs: a row with the previous row's
  // values joins its table without building the name again.
  std::map<std::string, std::vector<uint32_t>> rows;
  std::vector<uint32_t>* run = nullptr;
  std::vector<std::string_view> values(columns.size()), previous;
  for (uint32_t row = 0; row < batch.num_rows(); ++row) {
    for (size_t c = 0; c < columns.size(); ++c) {
      if (columns[c]->IsNull(row)) {
        return Status::InvalidArgument("routed iceberg sink '" + tables_->sink_id + "': row " +
                                       std::to_string(row) +
                                       " of a batch has NULL in route column '" + route.columns[c] +
                                       "': a row must name its table");
      }
      values[c] = columns[c]->GetBytes(row);
    }
    if (run != nullptr && values == previous) {
      run->push_back(row);
      continue;
    }
    previous = values;
    std::string name = route.NameFor(values);
    auto [it, first_seen] = rows.try_emplace(name);
    run = &it->second;
    run->push_back(row);
    if (first_seen) {
      if (!iceberg::TableIdentifier::Parse(tables_->ns + "." + name).ok() || name.size() > 128) {
        std::string shown;
        for (size_t c = 0; c < columns.size(); ++c) {
          shown += (c ? ", " : "") + route.columns[c] + " = '" +
                   std::string(values[c].substr(0, 64)) + "'";
        }
        return Status::InvalidArgument(
            "routed iceberg sink '" + tables_->sink_id + "': row " + std::to_string(row) +
            " of a batch routes to table name '" + name.substr(0, 160) + "' (" + shown +
            "), which is not a valid table name (letters, digits and _ only, at most 128)");
      }
    }
  }
  for (const auto& [table, indexes] : rows) {
    FLOE_ASSIGN_OR_RAISE(runtime::Operator * writer, Writer(table));
    if (indexes.size() == batch.num_rows()) {
      FLOE_RETURN_NOT_OK(writer->ProcessBatch(batch, input, out));
    } else {
      FLOE_RETURN_NOT_OK(writer->ProcessBatch(batch.Take(indexes), input, out));
    }
  }
  return Status::OK();
}

Status RoutedIcebergWriterOperator::PrepareBarrier(runtime::CheckpointId id,
                                                   runtime::Collector& out) {
  for (auto& [table, writer] : writers_) FLOE_RETURN_NOT_OK(writer->PrepareBarrier(id, out));
  return Status::OK();
}

Status RoutedIcebergWriterOperator::OnBarrier(runtime::CheckpointId id, runtime::StateWriter& state,
                                              runtime::Collector& out) {
  state.PutU32(1);  // as a plain writer's: a format version, no other state
  for (auto& [table, writer] : writers_) {
    runtime::StateWriter ignored;
    FLOE_RETURN_NOT_OK(writer->OnBarrier(id, ignored, out));
  }
  last_barrier_ = std::max(last_barrier_, id.value);
  return Status::OK();
}

Status RoutedIcebergWriterOperator::OnEndOfInput(runtime::Collector& out) {
  for (auto& [table, writer] : writers_) FLOE_RETURN_NOT_OK(writer->OnEndOfInput(out));
  return Status::OK();
}

Status RoutedIcebergWriterOperator::OnCheckpointComplete(runtime::CheckpointId id) {
  for (auto& [table, writer] : writers_) FLOE_RETURN_NOT_OK(writer->OnCheckpointComplete(id));
  return Status::OK();
}

Status RoutedIcebergWriterOperator::Close() {
  Status first;
  for (auto& [table, writer] : writers_) {
    Status st = writer->Close();
    if (first.ok() && !st.ok()) first = st.WithContext("routed table " + table);
  }
  return first;
}

void RoutedIcebergWriterOperator::Abandon(runtime::CheckpointId last_completed) {
  for (auto& [table, writer] : writers_) writer->Abandon(last_completed);
}

// ---- committer -----------------------------------------------------------------------------

Status RoutedIcebergCommitterOperator::Open(const runtime::OperatorContext& ctx) {
  ctx_ = ctx;
  // Every table this sink wrote commits each checkpoint's positions, rows or not: a fresh start
  // then finds all of them at one checkpoint (or knows a commit is missing).
  FLOE_RETURN_NOT_OK(OpenSharedCatalog(tables_->catalog, &catalog_));
  FLOE_ASSIGN_OR_RAISE(std::vector<std::string> existing, tables_->discover(*catalog_));
  for (const std::string& table : existing) FLOE_RETURN_NOT_OK(Committer(table).status());
  return Status::OK();
}

Result<IcebergCommitterOperator*> RoutedIcebergCommitterOperator::Committer(
    const std::string& table) {
  auto it = committers_.find(table);
  if (it != committers_.end()) return it->second.get();
  FLOE_ASSIGN_OR_RAISE(IcebergCommitterOptions options, tables_->committer_options(table));
  options.shared_catalog = catalog_;
  auto committer = std::make_unique<IcebergCommitterOperator>(std::move(options));
  // Its own task name: each table's committer reports to the position board by itself.
  runtime::OperatorContext ctx = ctx_;
  ctx.task.vertex += "[" + table + "]";
  Status opened = committer->Open(ctx);
  if (!opened.ok()) return opened.WithContext("routed table " + table);
  // A committer emits nothing; what it is told now, the others were told when it happened.
  NoOutput none;
  if (watermark_) FLOE_RETURN_NOT_OK(committer->OnWatermark(*watermark_, none));
  if (end_of_input_) FLOE_RETURN_NOT_OK(committer->OnEndOfInput(none));
  return committers_.emplace(table, std::move(committer)).first->second.get();
}

Status RoutedIcebergCommitterOperator::Restore(runtime::StateReader& state) {
  FLOE_ASSIGN_OR_RAISE(uint32_t version, state.GetU32());
  if (version != kRoutedCommitterStateVersion) {
    return Status::InvalidArgument(
        "routed iceberg sink '" + tables_->sink_id +
        "': the restored state is a one-table sink's; a sink cannot switch between one table "
        "and a routed 'catalog-table' across a restore (start the routed job fresh)");
  }
  // The sink id is not checked (as a plain committer's): the staged files are this vertex's.
  FLOE_RETURN_NOT_OK(state.GetString().status());
  FLOE_ASSIGN_OR_RAISE(uint32_t count, state.GetU32());
  for (uint32_t i = 0; i < count; ++i) {
    FLOE_ASSIGN_OR_RAISE(std::string table, state.GetString());
    FLOE_ASSIGN_OR_RAISE(std::string_view blob, state.GetBytesView());
    FLOE_ASSIGN_OR_RAISE(IcebergCommitterOperator * committer, Committer(table));
    runtime::StateReader reader(blob);
    Status st = committer->Restore(reader);
    if (!st.ok()) return st.WithContext("routed table " + table);
  }
  return state.ExpectEnd();
}

Status RoutedIcebergCommitterOperator::ProcessBatch(const RecordBatch& batch, int input,
                                                    runtime::Collector& out) {
  FLOE_ASSIGN_OR_RAISE(std::vector<WriterFiles> messages, DecodeWriterFiles(batch));
  for (size_t row = 0; row < messages.size(); ++row) {
    std::string_view table(messages[row].table);
    size_t dot = table.rfind('.');
    if (dot != std::string_view::npos) table.remove_prefix(dot + 1);
    FLOE_ASSIGN_OR_RAISE(IcebergCommitterOperator * committer, Committer(std::string(table)));
    if (messages.size() == 1) return committer->ProcessBatch(batch, input, out);
    FLOE_RETURN_NOT_OK(
        committer->ProcessBatch(batch.Take({static_cast<uint32_t>(row)}), input, out));
  }
  return Status::OK();
}

Status RoutedIcebergCommitterOperator::OnBarrier(runtime::CheckpointId id,
                                                 runtime::StateWriter& state,
                                                 runtime::Collector& out) {
  state.PutU32(kRoutedCommitterStateVersion);
  state.PutString(tables_->sink_id);
  state.PutU32(static_cast<uint32_t>(committers_.size()));
  for (auto& [table, committer] : committers_) {
    runtime::StateWriter blob;
    Status st = committer->OnBarrier(id, blob, out);
    if (!st.ok()) return st.WithContext("routed table " + table);
    state.PutString(table);
    state.PutBytes(blob.data());
  }
  return Status::OK();
}

Status RoutedIcebergCommitterOperator::OnCheckpointComplete(runtime::CheckpointId id) {
  for (auto& [table, committer] : committers_) {
    Status st = committer->OnCheckpointComplete(id);
    if (!st.ok()) return st.WithContext("routed table " + table);
  }
  return Status::OK();
}

Status RoutedIcebergCommitterOperator::OnEndOfInput(runtime::Collector& out) {
  end_of_input_ = true;
  for (auto& [table, committer] : committers_) FLOE_RETURN_NOT_OK(committer->OnEndOfInput(out));
  return Status::OK();
}

Status RoutedIcebergCommitterOperator::OnWatermark(runtime::Watermark watermark,
                                                   runtime::Collector& out) {
  watermark_ = watermark;
  for (auto& [table, committer] : committers_) {
    FLOE_RETURN_NOT_OK(committer->OnWatermark(watermark, out));
  }
  return Status::OK();
}

Status RoutedIcebergCommitterOperator::Close() {
  Status first;
  for (auto& [table, committer] : committers_) {
    Status st = committer->Close();
    if (first.ok() && !st.ok()) first = st.WithContext("routed table " + table);
  }
  return first;
}

void RoutedIcebergCommitterOperator::Abandon(runtime::CheckpointId last_completed) {
  for (auto& [table, committer] : committers_) committer->Abandon(last_completed);
}

}  // namespace floe::connectors::internal

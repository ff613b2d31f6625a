#include "floe/connectors/iceberg/iceberg_writer_operator.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <random>
#include <utility>

#include "floe/common/crash_point.h"
#include "floe/common/log.h"
#include "floe/common/undeclared_fields.h"
#include "floe/connectors/iceberg/iceberg_sink_internal.h"
#include "floe/io/file.h"
#include "floe/runtime/row_kind.h"

namespace floe::connectors {

namespace {

std::string RandomHex(int digits) {
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd());
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < digits; ++i) out.push_back(kHex[rng() & 15]);
  return out;
}

bool NamesEqualIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

enum class RowOp { kWrite, kDelete, kIgnore };

// Files of one split are numbered from its index in the checkpoint times this.
constexpr int64_t kFilesPerSplit = 1'000'000;

}  // namespace

Result<std::unique_ptr<IcebergWriterOperator>> IcebergWriterOperator::Make(
    IcebergWriterOptions options) {
  if (options.mode != iceberg::WriteMode::kAppend && options.mode != iceberg::WriteMode::kUpsert) {
    return Status::InvalidArgument("iceberg writer: mode must be append or upsert");
  }
  if (options.attempt_token.empty()) options.attempt_token = RandomHex(8);
  return std::make_unique<IcebergWriterOperator>(std::move(options));
}

Status IcebergWriterOperator::Open(const runtime::OperatorContext& ctx) {
  if (options_.shared_catalog) {
    catalog_ = options_.shared_catalog;
  } else {
    FLOE_ASSIGN_OR_RAISE(catalog_, catalog::OpenCatalog(options_.catalog));
  }
  FLOE_ASSIGN_OR_RAISE(iceberg::LoadedTable loaded, catalog_->LoadTable(options_.table));
  metadata_ = std::move(loaded.metadata);
  table_schema_ = metadata_.current_schema().ToBatchSchema();
  FLOE_ASSIGN_OR_RAISE(config_,
                       iceberg::ConfigFromTableProperties(catalog_->file_io(), metadata_, ""));
  task_name_ = ctx.task.name();
  // What the coordinator's stall alarm watches: rows reaching this table's writers.
  records_written_ = &ctx.metrics->Counter("IcebergStreamWriter_recordsWritten",
                                           {{"table", options_.table.ToString()}});
  last_flush_ms_ = &ctx.metrics->Gauge("IcebergStreamWriter_lastFlushDurationMs",
                                       {{"table", options_.table.ToString()}});
  char subtask[16];
  std::snprintf(subtask, sizeof(subtask), "%05u", ctx.task.subtask.value);
  prefix_base_ =
      internal::FileJobTag(options_.job_id) + "-" + subtask + "-" + options_.attempt_token;
  if (ctx.restored_from) last_checkpoint_ = ctx.restored_from->value;
  lease_key_ = "writer-" + std::string(subtask);
  if (options_.lease) FLOE_RETURN_NOT_OK(options_.lease->Open(catalog_->file_io(), metadata_));
  if (options_.mode == iceberg::WriteMode::kUpsert &&
      metadata_.current_schema().identifier_field_ids.empty()) {
    return Status::InvalidArgument("iceberg sink " + options_.table.ToString() +
                                   ": upsert needs a primary key (the table has no identifier "
                                   "fields)");
  }
  return Status::OK();
}

Status IcebergWriterOperator::Restore(runtime::StateReader& state) {
  // A format version, and (version 2) the schema the writer had grown: the restored committer
  // may still commit files written with it, so the writer continues with its field ids.
  if (state.AtEnd()) return Status::OK();
  FLOE_ASSIGN_OR_RAISE(uint32_t version, state.GetU32());
  if (version != 1 && version != 2) {
    return Status::Corruption("iceberg writer state: unknown format version " +
                              std::to_string(version));
  }
  if (version == 2) {
    FLOE_ASSIGN_OR_RAISE(std::string json, state.GetString());
    FLOE_ASSIGN_OR_RAISE(iceberg::Schema grown, iceberg::SchemaFromJson(json));
    std::vector<std::string> changes;
    Result<iceberg::TableMetadata> adopted =
        iceberg::AdoptWrittenSchema(metadata_, grown, &changes);
    if (!adopted.ok()) {
      return adopted.status().WithContext("iceberg sink " + options_.table.ToString() +
                                          ": restoring the schema the writer had grown");
    }
    if (!changes.empty()) {
      FLOE_RETURN_NOT_OK(UseSchema(std::move(adopted).value(), changes, "restored the schema"));
    }
  }
  return state.ExpectEnd();
}

Result<const IcebergWriterOperator::Binding*> IcebergWriterOperator::BindingFor(
    const std::shared_ptr<const BatchSchema>& schema) {
  auto it = bindings_.find(schema.get());
  if (it != bindings_.end()) return &it->second.second;
  Binding binding;
  const BatchSchema& in = *schema;
  std::vector<bool> used(in.fields.size(), false);
  // A STRING column the writer reads but does not write (the row kind, the source split).
  auto reserved = [&](const std::string& name, const char* what, int* index) -> Status {
    *index = name.empty() ? -1 : in.FieldIndex(name);
    if (*index < 0) return Status::OK();
    if (in.fields[*index].type.id != TypeId::kString) {
      return Status::InvalidArgument("iceberg sink " + options_.table.ToString() + ": " + what +
                                     " column '" + name + "' must be STRING");
    }
    used[*index] = true;
    return Status::OK();
  };
  FLOE_RETURN_NOT_OK(reserved(options_.row_kind_column, "row kind", &binding.row_kind_index));
  FLOE_RETURN_NOT_OK(reserved(options_.split_column, "split", &binding.split_index));
  if (options_.add_columns) {
    FLOE_RETURN_NOT_OK(
        reserved(runtime::kUndeclaredFieldsColumn, "undeclared fields", &binding.undeclared_index));
  }
  for (const Field& field : table_schema_->fields) {
    int index = in.FieldIndex(field.name);
    if (index < 0) {
      for (size_t i = 0; i < in.fields.size(); ++i) {
        if (!used[i] && NamesEqualIgnoreCase(in.fields[i].name, field.name)) {
          index = static_cast<int>(i);
          break;
        }
      }
    }
    if (options_.add_columns) binding.by_name.emplace(field.name, binding.source_index.size());
    if (index < 0 && options_.add_columns && field.nullable) {
      binding.undeclared_columns.push_back(binding.source_index.size());
      binding.source_index.push_back(-1);
      continue;
    }
    if (index < 0) {
      return Status::InvalidArgument("iceberg sink " + options_.table.ToString() +
                                     ": input has no column '" + field.name + "'");
    }
    if (!(in.fields[index].type == field.type)) {
      return Status::InvalidArgument("iceberg sink " + options_.table.ToString() + ": column '" +
                                     field.name + "' is " + in.fields[index].type.ToString() +
                                     " in the input but " + field.type.ToString() +
                                     " in the table");
    }
    used[index] = true;
    binding.source_index.push_back(index);
  }
  for (size_t i = 0; i < in.fields.size(); ++i) {
    if (!used[i]) {
      return Status::InvalidArgument("iceberg sink " + options_.table.ToString() +
                                     ": input column '" + in.fields[i].name +
                                     "' is not a column of the table");
    }
  }
  binding.identity = binding.row_kind_index < 0 && binding.split_index < 0 &&
                     binding.undeclared_index < 0 && in == *table_schema_;
  auto [pos, inserted] = bindings_.emplace(schema.get(), std::make_pair(schema, binding));
  (void)inserted;
  return &pos->second.second;
}

Result<RecordBatch> IcebergWriterOperator::Rebind(const RecordBatch& batch,
                                                  const Binding& binding) const {
  std::vector<Column> columns;
  columns.reserve(binding.source_index.size());
  for (size_t c = 0; c < binding.source_index.size(); ++c) {
    const Field& field = table_schema_->fields[c];
    if (binding.source_index[c] < 0) {
      columns.emplace_back(field.type);  // FillUndeclared's
      continue;
    }
    const Column& column = batch.column(binding.source_index[c]);
    if (!field.nullable && column.null_count() > 0) {
      return Status::InvalidArgument("iceberg sink " + options_.table.ToString() + ": column '" +
                                     field.name +
                                     "' is NOT NULL in the table but the input "
                                     "holds a null");
    }
    columns.push_back(column);
  }
  if (!binding.undeclared_columns.empty()) {
    FLOE_RETURN_NOT_OK(FillUndeclared(batch, binding, &columns));
  }
  return RecordBatch(table_schema_, std::move(columns));
}

Status IcebergWriterOperator::FillUndeclared(const RecordBatch& batch, const Binding& binding,
                                             std::vector<Column>* columns) const {
  const size_t rows = batch.num_rows();
  if (binding.undeclared_index < 0) {
    for (size_t c : binding.undeclared_columns) {
      for (size_t row = 0; row < rows; ++row) (*columns)[c].AppendNull();
    }
    return Status::OK();
  }
  const Column& packed = batch.column(static_cast<size_t>(binding.undeclared_index));
  UndeclaredField field;
  for (size_t row = 0; row < rows; ++row) {
    if (!packed.IsNull(row)) {
      UndeclaredFieldsReader reader(packed.GetBytes(row));
      for (;;) {
        FLOE_ASSIGN_OR_RAISE(bool more, reader.Next(&field));
        if (!more) break;
        auto it = binding.by_name.find(field.name);
        if (it == binding.by_name.end() || binding.source_index[it->second] >= 0) {
          continue;  // an input column's name: the input's value is written
        }
        Column& column = (*columns)[it->second];
        if (column.size() > row) column.Truncate(row);  // a repeated name: the last wins
        AppendUndeclared(field, &column);
      }
    }
    for (size_t c : binding.undeclared_columns) {
      if ((*columns)[c].size() == row) (*columns)[c].AppendNull();
    }
  }
  return Status::OK();
}

Result<bool> IcebergWriterOperator::GrowSchema(const Column& undeclared, const Binding& binding) {
  if (undeclared.null_count() == undeclared.size()) return false;
  // Columns to add or widen, by name, and the table column each name matches (null: new).
  std::map<std::string, Field, std::less<>> wanted;
  UndeclaredField field;
  for (size_t row = 0; row < undeclared.size(); ++row) {
    if (undeclared.IsNull(row)) continue;
    UndeclaredFieldsReader reader(undeclared.GetBytes(row));
    for (;;) {
      FLOE_ASSIGN_OR_RAISE(bool more, reader.Next(&field));
      if (!more) break;
      auto column = binding.by_name.find(field.name);
      const Field* held = nullptr;
      if (column != binding.by_name.end()) {
        if (binding.source_index[column->second] >= 0) continue;  // an input column's name
        held = &table_schema_->fields[column->second];
      }
      auto w = wanted.find(field.name);
      const Field* have = w != wanted.end() ? &w->second : held;
      if (have != nullptr && UndeclaredFitsColumn(field.type, have->type)) continue;
      if (have != nullptr && !UndeclaredFitsColumn(have->type, field.type)) {
        return Status::InvalidArgument(
            "iceberg sink " + options_.table.ToString() + ": undeclared field '" +
            std::string(field.name) + "' holds " + SqlTypeName(field.type) + " but column '" +
            have->name + "' is " + SqlTypeName(have->type) +
            "; Iceberg widens only INT to BIGINT, FLOAT to DOUBLE and a DECIMAL's precision "
            "(declare the column, or fix the producer)");
      }
      Field grown{std::string(have != nullptr ? have->name : field.name), field.type, true, 0};
      wanted.insert_or_assign(std::string(field.name), std::move(grown));
    }
  }
  if (wanted.empty()) return false;
  std::vector<Field> fields;
  for (auto& [name, f] : wanted) fields.push_back(std::move(f));
  std::vector<std::string> changes;
  Result<iceberg::TableMetadata> evolved =
      iceberg::EvolveSchema(metadata_, fields, &changes, /*keep_other_columns=*/true);
  if (!evolved.ok()) {
    return evolved.status().WithContext("iceberg sink " + options_.table.ToString());
  }
  FLOE_RETURN_NOT_OK(UseSchema(std::move(evolved).value(), changes, "grew the schema"));
  return true;
}

Status IcebergWriterOperator::UseSchema(iceberg::TableMetadata evolved,
                                        const std::vector<std::string>& changes, const char* what) {
  metadata_ = std::move(evolved);
  table_schema_ = metadata_.current_schema().ToBatchSchema();
  bindings_.clear();
  grown_ = true;
  for (auto& [split, writer] : writers_) FLOE_RETURN_NOT_OK(writer->EvolveSchema(metadata_));
  std::string list;
  for (const std::string& c : changes) list += (list.empty() ? "" : ", ") + c;
  LogInfo("iceberg sink %s: writer '%s' %s by its rows' fields (committed with their files): %s",
          options_.table.ToString().c_str(), task_name_.c_str(), what, list.c_str());
  return Status::OK();
}

Status IcebergWriterOperator::WriteRows(const RecordBatch& rows, bool is_delete,
                                        const std::string& split) {
  if (rows.num_rows() == 0) return Status::OK();
  std::unique_ptr<iceberg::DeltaWriter>& writer = writers_[split];
  if (!writer) {
    if (!open_since_ms_) {
      // Claimed before the first byte, so no sweep can list the file unclaimed.
      open_since_ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
      FLOE_RETURN_NOT_OK(UpdateLease());
    }
    iceberg::FileWriterConfig config = config_;
    config.file_prefix = prefix_base_ + "-" + std::to_string(last_checkpoint_ + 1);
    config.first_file_number = static_cast<int64_t>(writers_.size() - 1) * kFilesPerSplit;
    Result<std::unique_ptr<iceberg::DeltaWriter>> made =
        iceberg::DeltaWriter::Make(metadata_, options_.mode, config);
    if (!made.ok()) {
      writers_.erase(split);
      return made.status();
    }
    writer = std::move(made).value();
  }
  return is_delete ? writer->Delete(rows) : writer->Add(rows);
}

Status IcebergWriterOperator::ProcessBatch(const RecordBatch& batch, int input,
                                           runtime::Collector& out) {
  (void)input, (void)out;
  if (batch.num_rows() == 0) return Status::OK();
  records_written_->Add(static_cast<int64_t>(batch.num_rows()));
  FLOE_ASSIGN_OR_RAISE(const Binding* binding, BindingFor(batch.schema()));
  if (binding->undeclared_index >= 0) {
    FLOE_ASSIGN_OR_RAISE(
        bool grown,
        GrowSchema(batch.column(static_cast<size_t>(binding->undeclared_index)), *binding));
    if (grown) {
      FLOE_ASSIGN_OR_RAISE(binding, BindingFor(batch.schema()));
    }
  }
  if (binding->split_index < 0) return WriteSplit(batch, *binding, "");
  // Each split's rows in their order (a key's last operation decides within its split).
  const Column& splits = batch.column(binding->split_index);
  std::map<std::string, std::vector<uint32_t>, std::less<>> rows;
  auto it = rows.end();
  for (size_t row = 0; row < batch.num_rows(); ++row) {
    std::string_view split = splits.IsNull(row) ? std::string_view() : splits.GetBytes(row);
    // Rows come in runs of one split: a lookup per run, not per row.
    if (it == rows.end() || it->first != split) {
      it = rows.find(split);
      if (it == rows.end()) it = rows.emplace(std::string(split), std::vector<uint32_t>()).first;
    }
    it->second.push_back(static_cast<uint32_t>(row));
  }
  for (const auto& [split, indexes] : rows) {
    FLOE_RETURN_NOT_OK(WriteSplit(indexes.size() == batch.num_rows() ? batch : batch.Take(indexes),
                                  *binding, split));
  }
  return Status::OK();
}

Status IcebergWriterOperator::WriteSplit(const RecordBatch& batch, const Binding& binding,
                                         const std::string& split) {
  if (binding.row_kind_index < 0) {
    if (binding.identity) {
      for (size_t c = 0; c < table_schema_->fields.size(); ++c) {
        if (!table_schema_->fields[c].nullable && batch.column(c).null_count() > 0) {
          return Status::InvalidArgument("iceberg sink " + options_.table.ToString() +
                                         ": column '" + table_schema_->fields[c].name +
                                         "' is NOT NULL in the table but the input holds a null");
        }
      }
      return WriteRows(batch, false, split);
    }
    FLOE_ASSIGN_OR_RAISE(RecordBatch rows, Rebind(batch, binding));
    return WriteRows(rows, false, split);
  }
  // Changelog input: consecutive rows of the same operation go to the writer together, in
  // order, so a key's last operation in the checkpoint decides.
  const Column& kinds = batch.column(binding.row_kind_index);
  auto op_of = [&](size_t row) -> Result<RowOp> {
    std::string_view kind = kinds.IsNull(row) ? std::string_view("+I") : kinds.GetBytes(row);
    if (kind == "+I" || kind == "+U") return RowOp::kWrite;
    if (kind == "-U") return RowOp::kIgnore;
    if (kind == "-D") {
      if (options_.mode != iceberg::WriteMode::kUpsert) {
        return Status::InvalidArgument(
            "iceberg sink " + options_.table.ToString() +
            ": a delete (-D) row reached an append table; set 'write.upsert.enabled'='true' "
            "(with a PRIMARY KEY) to apply changelogs");
      }
      return RowOp::kDelete;
    }
    return Status::InvalidArgument("iceberg sink " + options_.table.ToString() + ": row kind '" +
                                   std::string(kind) + "' in column '" + options_.row_kind_column +
                                   "' is not one of +I, -U, +U, -D");
  };
  size_t row = 0;
  while (row < batch.num_rows()) {
    FLOE_ASSIGN_OR_RAISE(RowOp op, op_of(row));
    std::vector<uint32_t> run{static_cast<uint32_t>(row)};
    size_t next = row + 1;
    while (next < batch.num_rows()) {
      FLOE_ASSIGN_OR_RAISE(RowOp next_op, op_of(next));
      if (next_op != op) break;
      run.push_back(static_cast<uint32_t>(next++));
    }
    row = next;
    if (op == RowOp::kIgnore) continue;
    RecordBatch part = run.size() == batch.num_rows() ? batch : batch.Take(run);
    FLOE_ASSIGN_OR_RAISE(RecordBatch rows, Rebind(part, binding));
    FLOE_RETURN_NOT_OK(WriteRows(rows, op == RowOp::kDelete, split));
  }
  return Status::OK();
}

Status IcebergWriterOperator::HandOver(runtime::CheckpointId id, runtime::Collector& out) {
  if (writers_.empty()) return Status::OK();
  std::map<std::string, std::unique_ptr<iceberg::DeltaWriter>> writers = std::move(writers_);
  writers_.clear();
  const std::optional<int64_t> since = std::exchange(open_since_ms_, std::nullopt);
  std::vector<internal::WriterFiles> finished;
  Status failed;
  for (auto& [split, writer] : writers) {
    if (!failed.ok()) {
      writer->Abandon();
      continue;
    }
    Result<iceberg::WriteResult> written = writer->Finish();
    if (!written.ok()) {
      failed = written.status().WithContext("iceberg sink " + options_.table.ToString() +
                                            ": finishing files for checkpoint " + id.ToString());
      continue;
    }
    config_.initial_size_ratio =
        written->data_size_ratio;  // the next checkpoint's files roll near the target
    internal::WriterFiles files;
    files.checkpoint = id;
    files.writer_task = task_name_;
    files.split = split;
    files.table = options_.table.ToString();
    files.data_files = std::move(written->data_files);
    files.delete_files = std::move(written->delete_files);
    if (grown_) files.written_schema = iceberg::SchemaToJson(metadata_.current_schema());
    if (!files.data_files.empty() || !files.delete_files.empty()) {
      finished.push_back(std::move(files));
    }
  }
  FLOE_RETURN_NOT_OK(failed);
  if (finished.empty()) return Status::OK();
  auto& handed = handed_over_[id.value];
  if (since) handed_since_ms_.emplace(id.value, *since);  // the first group of id is the oldest
  for (const internal::WriterFiles& files : finished) {
    for (const auto* list : {&files.data_files, &files.delete_files}) {
      for (const iceberg::DataFile& f : *list) {
        handed.emplace_back(f.file_path, f.file_size_in_bytes);
      }
    }
  }
  // The files are fsynced; the barrier is not acked yet.
  CrashPoint("after-data-file-written");
  for (const internal::WriterFiles& files : finished) {
    FLOE_RETURN_NOT_OK(out.Emit(internal::EncodeWriterFiles(files)));
  }
  return Status::OK();
}

Status IcebergWriterOperator::PrepareBarrier(runtime::CheckpointId id, runtime::Collector& out) {
  // Closing the epoch's files is the writer's flush, before the barrier as in Iceberg's Flink
  // writer; its time is the gauge, not the checkpoint's synchronous part.
  const auto start = std::chrono::steady_clock::now();
  FLOE_RETURN_NOT_OK(HandOver(id, out));
  last_flush_ms_->Set(std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - start)
                          .count());
  return Status::OK();
}

Status IcebergWriterOperator::OnBarrier(runtime::CheckpointId id, runtime::StateWriter& state,
                                        runtime::Collector& out) {
  (void)out;
  if (grown_) {
    state.PutU32(2);
    state.PutString(iceberg::SchemaToJson(metadata_.current_schema()));
  } else {
    state.PutU32(1);  // format version; the writer keeps no other state
  }
  last_checkpoint_ = std::max(last_checkpoint_, id.value);
  CrashPoint("after-barrier-ack");
  return Status::OK();
}

Status IcebergWriterOperator::OnEndOfInput(runtime::Collector& out) {
  // The committer files them under the first barrier it sees next (ids only grow).
  return HandOver(runtime::CheckpointId(last_checkpoint_ + 1), out);
}

Status IcebergWriterOperator::OnCheckpointComplete(runtime::CheckpointId id) {
  // The completed checkpoint holds (or committed) every file handed over up to it.
  handed_over_.erase(handed_over_.begin(), handed_over_.upper_bound(id.value));
  // The committer's claim names them since its barrier, before this completion.
  handed_since_ms_.erase(handed_since_ms_.begin(), handed_since_ms_.upper_bound(id.value));
  return UpdateLease();
}

Status IcebergWriterOperator::UpdateLease() {
  if (!options_.lease) return Status::OK();
  std::optional<int64_t> since = open_since_ms_;
  for (const auto& [id, ms] : handed_since_ms_) since = since ? std::min(*since, ms) : ms;
  if (!since) {
    options_.lease->Release(lease_key_);
    return Status::OK();
  }
  return options_.lease->Claim(lease_key_, iceberg::LeaseClaim{since, {}});
}

Status IcebergWriterOperator::Close() {
  // Files of an epoch that never reached a barrier are nobody's: the sources replay their rows.
  for (auto& [split, writer] : writers_) writer->Abandon();
  writers_.clear();
  open_since_ms_.reset();
  return UpdateLease();
}

void IcebergWriterOperator::Abandon(runtime::CheckpointId last_completed) {
  // Files handed over for checkpoint N sit in the committer's state of the first committer
  // barrier >= N, so N > last_completed means no completed checkpoint or savepoint holds them,
  // and none was committed (commits follow completions). Their rows are replayed after a
  // restore, which can only be from last_completed or earlier.
  int64_t files = 0;
  int64_t bytes = 0;
  for (auto it = handed_over_.upper_bound(last_completed.value); it != handed_over_.end(); ++it) {
    for (const auto& [uri, size] : it->second) {
      Result<std::string> path = iceberg::UriToPath(uri);
      if (path.ok() && config_.file_io.RemoveFile(*path).ok()) {
        ++files;
        bytes += size;
      }
    }
  }
  handed_over_.clear();
  handed_since_ms_.clear();
  (void)UpdateLease();  // narrows: written at the lease's next refresh
  if (files > 0) {
    LogInfo(
        "iceberg sink %s: writer '%s' removed %lld files (%lld bytes) handed over for "
        "checkpoints above %s, which can no longer complete",
        options_.table.ToString().c_str(), task_name_.c_str(), static_cast<long long>(files),
        static_cast<long long>(bytes), last_completed.ToString().c_str());
  }
}

}  // namespace floe::connectors

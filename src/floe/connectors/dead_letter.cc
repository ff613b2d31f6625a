#include "floe/connectors/dead_letter.h"

#include <nlohmann/json.hpp>

#include "floe/connectors/connector_options.h"

namespace floe::connectors {

namespace {

const std::string kTable(kBadRecordsTableOption);

}  // namespace

const char* const kDeadLetterColumnsDdl =
    "source_table STRING, kafka_topic STRING, kafka_partition INT, kafka_offset BIGINT, "
    "kafka_timestamp TIMESTAMP_LTZ(3), kafka_key BYTES, kafka_value BYTES, kafka_headers STRING, "
    "error_message STRING";

Result<BadRecordPolicy> ParseBadRecordPolicy(const TableDescriptor& table) {
  FLOE_ASSIGN_OR_RAISE(size_t policy, ChoiceOption(table, std::string(kBadRecordsOption), "fail",
                                                   {"fail", "skip", "dead-letter"}));
  const bool named = table.options.count(kTable) != 0;
  if (policy == 2 && (!named || table.options.at(kTable).empty())) {
    return Status::InvalidArgument(
        "table '" + table.name + "': option '" + std::string(kBadRecordsOption) +
        "' = 'dead-letter' needs '" + kTable +
        "', the name of an Iceberg table declared in this job file with the columns (all or some "
        "of) " +
        kDeadLetterColumnsDdl);
  }
  if (policy != 2 && named) {
    return Status::InvalidArgument("table '" + table.name + "': option '" + kTable +
                                   "' is only read with '" + std::string(kBadRecordsOption) +
                                   "' = 'dead-letter'");
  }
  return static_cast<BadRecordPolicy>(policy);
}

std::shared_ptr<const BatchSchema> DeadLetterSchema() {
  static const std::shared_ptr<const BatchSchema> schema = [] {
    auto s = std::make_shared<BatchSchema>();
    const std::pair<const char*, DataType> columns[] = {
        {"source_table", DataType::String()},         {"kafka_topic", DataType::String()},
        {"kafka_partition", DataType::Int32()},       {"kafka_offset", DataType::Int64()},
        {"kafka_timestamp", DataType::TimestampTz()}, {"kafka_key", DataType::Binary()},
        {"kafka_value", DataType::Binary()},          {"kafka_headers", DataType::String()},
        {"error_message", DataType::String()}};
    int32_t id = 1;
    for (const auto& [name, type] : columns) {
      Field f{name, type, true, id++};
      if (type.id == TypeId::kTimestampTz) f.precision = 3;
      s->fields.push_back(std::move(f));
    }
    return s;
  }();
  return schema;
}

DeadLetterRows::DeadLetterRows() : rows_(DeadLetterSchema()) {}

void DeadLetterRows::Append(const DeadLetter& letter) {
  const auto bytes = [&](size_t i, std::optional<std::string_view> v) {
    if (v) {
      rows_.mutable_column(i).AppendBytes(*v);
    } else {
      rows_.mutable_column(i).AppendNull();
    }
  };
  bytes(0, letter.source_table);
  bytes(1, letter.topic);
  if (letter.partition) {
    rows_.mutable_column(2).Append<int32_t>(*letter.partition);
  } else {
    rows_.mutable_column(2).AppendNull();
  }
  if (letter.offset) {
    rows_.mutable_column(3).Append<int64_t>(*letter.offset);
  } else {
    rows_.mutable_column(3).AppendNull();
  }
  if (letter.timestamp_ms) {
    rows_.mutable_column(4).Append<int64_t>(*letter.timestamp_ms * 1000);
  } else {
    rows_.mutable_column(4).AppendNull();
  }
  bytes(5, letter.key);
  bytes(6, letter.value);
  if (letter.headers == nullptr || letter.headers->empty()) {
    rows_.mutable_column(7).AppendNull();
  } else {
    // Header values are bytes; text that is not UTF-8 shows U+FFFD where it breaks.
    nlohmann::json headers = nlohmann::json::array();
    for (const auto& [name, value] : *letter.headers) {
      headers.push_back({{"key", name}, {"value", value}});
    }
    rows_.mutable_column(7).AppendBytes(
        headers.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  bytes(8, letter.error);
}

RecordBatch DeadLetterRows::Take() { return std::exchange(rows_, RecordBatch(DeadLetterSchema())); }

Status CheckDeadLetterTable(const TableDescriptor& declared, std::string_view source_table) {
  const BatchSchema& full = *DeadLetterSchema();
  const std::string what =
      "dead-letter table '" + declared.name + "' of table '" + std::string(source_table) + "'";
  const std::string ddl =
      std::string("; declare it with the columns (all or some of) ") + kDeadLetterColumnsDdl;
  bool has_error = false;
  for (const Field& f : declared.schema->fields) {
    const int i = full.FieldIndex(f.name);
    if (i < 0) return Status::InvalidArgument(what + " has column '" + f.name + "'" + ddl);
    if (!(full.fields[i].type == f.type)) {
      return Status::InvalidArgument(what + ": column '" + f.name + "' has another type" + ddl);
    }
    if (!f.nullable && f.name != "source_table" && f.name != "error_message") {
      return Status::InvalidArgument(what + ": column '" + f.name +
                                     "' is NOT NULL, but a record may lack it (a null key, no "
                                     "timestamp, no headers)" +
                                     ddl);
    }
    has_error = has_error || f.name == "error_message";
  }
  if (!has_error) return Status::InvalidArgument(what + " has no column 'error_message'" + ddl);
  if (!declared.primary_key.empty()) {
    return Status::InvalidArgument(what + " has a PRIMARY KEY; dead letters are appended");
  }
  return Status::OK();
}

RecordBatch ProjectDeadLetters(const RecordBatch& full,
                               const std::shared_ptr<const BatchSchema>& declared) {
  std::vector<Column> columns;
  columns.reserve(declared->fields.size());
  for (const Field& f : declared->fields) {
    columns.push_back(full.column(static_cast<size_t>(full.schema()->FieldIndex(f.name))));
  }
  return RecordBatch(declared, std::move(columns));
}

Status DeadLetterProjection::ProcessBatch(const RecordBatch& batch, int, runtime::Collector& out) {
  if (batch.schema() != nullptr && *batch.schema() == *DeadLetterSchema()) {
    return out.Emit(ProjectDeadLetters(batch, declared_));
  }
  const BatchSchema* s = batch.schema().get();
  if (s == nullptr || s->fields.size() != 2 || s->fields[0].name != "error_message" ||
      s->fields[1].name != "row" || s->fields[0].type.id != TypeId::kString ||
      s->fields[1].type.id != TypeId::kString) {
    return Status::Internal("dead-letter rows of another shape reached the dead-letter table");
  }
  DeadLetterRows rows;
  for (size_t r = 0; r < batch.num_rows(); ++r) {
    DeadLetter letter;
    letter.source_table = source_table_;
    letter.value = batch.column(1).GetBytes(r);
    letter.error = batch.column(0).GetBytes(r);
    rows.Append(letter);
  }
  return out.Emit(ProjectDeadLetters(rows.Take(), declared_));
}

}  // namespace floe::connectors

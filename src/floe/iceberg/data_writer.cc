#include "floe/iceberg/data_writer.h"

#include <algorithm>
#include <charconv>
#include <unordered_map>
#include <utility>

#include "floe/common/utf8.h"
#include "floe/iceberg/catalog.h"
#include "floe/iceberg/file_fanout_internal.h"
#include "floe/iceberg/row_key_internal.h"
#include "floe/iceberg/table_paths.h"
#include "floe/io/file.h"
#include "floe/io/s3_client.h"

namespace floe::iceberg {

namespace {

Result<int64_t> PositiveIntProperty(const TableMetadata& metadata, const std::string& key,
                                    int64_t fallback) {
  auto it = metadata.properties.find(key);
  if (it == metadata.properties.end()) return fallback;
  const std::string& text = it->second;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v <= 0) {
    return Status::InvalidArgument("table property " + key + ": '" + text +
                                   "' is not a positive integer");
  }
  return v;
}

// UTF-8 helpers for bound truncation. Invalid UTF-8 is treated byte-wise (bounds stay valid
// as unsigned byte strings either way).
size_t CodePointLength(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;
}

// Byte offsets of the first `n` code points' ends; returns the byte length of that prefix, or
// npos if `s` has at most n code points.
size_t PrefixBytes(std::string_view s, int n) {
  size_t pos = 0;
  for (int i = 0; i < n; ++i) {
    if (pos >= s.size()) return std::string_view::npos;
    pos += CodePointLength(static_cast<unsigned char>(s[pos]));
  }
  return pos >= s.size() ? std::string_view::npos : pos;
}

uint32_t DecodeUtf8(std::string_view s) {
  auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(s[i])); };
  switch (s.size()) {
    case 1:
      return b(0);
    case 2:
      return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3:
      return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    default:
      return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
}

}  // namespace

std::string TruncateLowerBound(const DataType& type, std::string_view bound, int length) {
  if (type.id == TypeId::kString) {
    size_t n = PrefixBytes(bound, length);
    return std::string(n == std::string_view::npos ? bound : bound.substr(0, n));
  }
  return std::string(bound.substr(0, std::min(bound.size(), static_cast<size_t>(length))));
}

std::optional<std::string> TruncateUpperBound(const DataType& type, std::string_view bound,
                                              int length) {
  if (type.id == TypeId::kString) {
    size_t n = PrefixBytes(bound, length);
    if (n == std::string_view::npos) return std::string(bound);
    // Start offsets of the code points of the prefix, to increment from the last one back.
    std::vector<size_t> starts;
    for (size_t pos = 0; pos < n; pos += CodePointLength(static_cast<unsigned char>(bound[pos]))) {
      starts.push_back(pos);
    }
    for (size_t i = starts.size(); i-- > 0;) {
      size_t end = i + 1 < starts.size() ? starts[i + 1] : n;
      uint32_t cp = DecodeUtf8(bound.substr(starts[i], end - starts[i])) + 1;
      if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xE000;  // skip the surrogate range
      if (cp > 0x10FFFF) continue;
      std::string out(bound.substr(0, starts[i]));
      AppendUtf8(cp, &out);
      return out;
    }
    return std::nullopt;
  }
  if (bound.size() <= static_cast<size_t>(length)) return std::string(bound);
  std::string out(bound.substr(0, length));
  while (!out.empty()) {
    auto last = static_cast<unsigned char>(out.back());
    if (last != 0xFF) {
      out.back() = static_cast<char>(last + 1);
      return out;
    }
    out.pop_back();
  }
  return std::nullopt;
}

Result<FileWriterConfig> ConfigFromTableProperties(const io::FileIO& file_io,
                                                   const TableMetadata& metadata,
                                                   std::string file_prefix) {
  FileWriterConfig config;
  config.file_io = file_io;
  config.file_prefix = std::move(file_prefix);
  std::string data_path = metadata.Property("write.data.path", "");
  if (data_path.empty()) {
    FLOE_ASSIGN_OR_RAISE(std::string location, UriToPath(metadata.location));
    config.data_dir = io::JoinPath(location, "data");
  } else if (!IsInsideLocation(metadata.location, data_path)) {
    // Never write where this table's maintenance would then delete another's files.
    return Status::InvalidArgument("table property write.data.path: '" + data_path +
                                   "' is not inside the table's location '" + metadata.location +
                                   "'; floe writes a table's files only below its location");
  } else if (data_path.rfind("file:", 0) == 0 || io::IsS3Uri(data_path)) {
    FLOE_ASSIGN_OR_RAISE(config.data_dir, UriToPath(data_path));
  } else if (!data_path.empty() && data_path[0] == '/') {
    config.data_dir = data_path;
  } else {
    return Status::InvalidArgument("table property write.data.path: '" + data_path +
                                   "' is neither an absolute path nor a file:// or s3:// URI");
  }
  FLOE_ASSIGN_OR_RAISE(config.target_file_size_bytes,
                       PositiveIntProperty(metadata, "write.target-file-size-bytes", 512LL << 20));
  std::string codec = metadata.Property("write.parquet.compression-codec", "zstd");
  auto compression = parquet::ParseCompression(codec);
  if (!compression.ok()) {
    return Status::InvalidArgument("table property write.parquet.compression-codec: '" + codec +
                                   "' is not a supported codec (" + compression.status().message() +
                                   ")");
  }
  config.parquet.compression = *compression;
  FLOE_ASSIGN_OR_RAISE(config.parquet.row_group_size_bytes,
                       PositiveIntProperty(metadata, "write.parquet.row-group-size-bytes",
                                           config.parquet.row_group_size_bytes));
  FLOE_ASSIGN_OR_RAISE(config.parquet.page_size_bytes,
                       PositiveIntProperty(metadata, "write.parquet.page-size-bytes",
                                           config.parquet.page_size_bytes));
  FLOE_ASSIGN_OR_RAISE(
      config.parquet.page_row_limit,
      PositiveIntProperty(metadata, "write.parquet.page-row-limit", config.parquet.page_row_limit));
  FLOE_ASSIGN_OR_RAISE(config.parquet.dictionary_page_size_limit,
                       PositiveIntProperty(metadata, "write.parquet.dict-size-bytes",
                                           config.parquet.dictionary_page_size_limit));
  auto level = metadata.properties.find("write.parquet.compression-level");
  if (level != metadata.properties.end() && !level->second.empty() &&
      config.parquet.compression == parquet::Compression::kZstd) {
    FLOE_ASSIGN_OR_RAISE(int64_t v,
                         PositiveIntProperty(metadata, "write.parquet.compression-level", 3));
    if (v > 22) {
      return Status::InvalidArgument("table property write.parquet.compression-level: '" +
                                     level->second + "' is outside zstd's 1..22");
    }
    config.parquet.zstd_level = static_cast<int>(v);
  }
  return config;
}

namespace {

// Checks that `batch` carries the table's current schema (ids and types, in order).
Status CheckTableBatch(const Schema& schema, const BatchSchema& batch) {
  if (batch.fields.size() != schema.fields.size()) {
    return Status::InvalidArgument("batch has " + std::to_string(batch.fields.size()) +
                                   " columns, the table schema has " +
                                   std::to_string(schema.fields.size()));
  }
  for (size_t i = 0; i < batch.fields.size(); ++i) {
    const Field& b = batch.fields[i];
    const Field& t = schema.fields[i];
    if (b.field_id != t.field_id || b.type != t.type) {
      return Status::InvalidArgument("batch column " + std::to_string(i) + " ('" + b.name +
                                     "', id " + std::to_string(b.field_id) + ", " +
                                     b.type.ToString() + ") does not match table column '" +
                                     t.name + "' (id " + std::to_string(t.field_id) + ", " +
                                     t.type.ToString() + ")");
    }
  }
  return Status::OK();
}

// Index of the column with field id `id` in `schema`, or -1.
int ColumnIndexById(const BatchSchema& schema, int32_t id) {
  for (size_t i = 0; i < schema.fields.size(); ++i) {
    if (schema.fields[i].field_id == id) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// DataFileWriter

DataFileWriter::DataFileWriter(std::unique_ptr<internal::FileFanout> fanout)
    : fanout_(std::move(fanout)) {}
DataFileWriter::~DataFileWriter() = default;

Result<std::unique_ptr<DataFileWriter>> DataFileWriter::Make(const TableMetadata& metadata,
                                                             FileWriterConfig config) {
  internal::FileFanout::Options options;
  options.config = std::move(config);
  options.file_schema = metadata.current_schema().ToBatchSchema();
  options.content = FileContent::kData;
  options.sort_order_id = metadata.WrittenSortOrderId();
  FLOE_ASSIGN_OR_RAISE(auto fanout, internal::FileFanout::Make(metadata, std::move(options)));
  return std::make_unique<DataFileWriter>(std::move(fanout));
}

Status DataFileWriter::Add(const RecordBatch& batch) {
  FLOE_RETURN_NOT_OK(fanout_->status());
  if (batch.schema().get() != fanout_->file_schema().get()) {
    FLOE_RETURN_NOT_OK(fanout_->Fail(CheckTableBatch(fanout_->schema(), *batch.schema())));
  }
  // Parquet is written with the table's schema (names, nullability) whatever the batch says.
  if (*batch.schema() == *fanout_->file_schema()) return fanout_->Add(batch, batch);
  RecordBatch retyped(fanout_->file_schema(), batch.columns());
  return fanout_->Add(retyped, batch);
}

Status DataFileWriter::Flush() { return fanout_->Flush(); }
Result<std::vector<DataFile>> DataFileWriter::Finish() { return fanout_->Finish(); }
void DataFileWriter::Abandon() { fanout_->Abandon(); }
int64_t DataFileWriter::row_count() const { return fanout_->row_count(); }
WriterStats DataFileWriter::stats() const { return fanout_->stats(); }
int64_t DataFileWriter::next_file_number() const { return fanout_->next_file_number(); }

// ---------------------------------------------------------------------------------------------
// EqualityDeleteWriter

EqualityDeleteWriter::EqualityDeleteWriter(std::unique_ptr<internal::FileFanout> fanout)
    : fanout_(std::move(fanout)) {}
EqualityDeleteWriter::~EqualityDeleteWriter() = default;

Result<std::unique_ptr<EqualityDeleteWriter>> EqualityDeleteWriter::Make(
    const TableMetadata& metadata, std::vector<int32_t> equality_field_ids,
    FileWriterConfig config) {
  if (equality_field_ids.empty()) {
    return Status::InvalidArgument("equality delete writer needs at least one equality field");
  }
  const Schema& schema = metadata.current_schema();
  auto delete_schema = std::make_shared<BatchSchema>();
  for (int32_t id : equality_field_ids) {
    const Field* f = schema.FindById(id);
    if (f == nullptr) {
      return Status::InvalidArgument("equality field id " + std::to_string(id) +
                                     " is not in the table's current schema");
    }
    if (ColumnIndexById(*delete_schema, id) >= 0) {
      return Status::InvalidArgument("equality field id " + std::to_string(id) + " given twice");
    }
    delete_schema->fields.push_back(*f);
  }
  internal::FileFanout::Options options;
  options.config = std::move(config);
  options.file_schema = std::move(delete_schema);
  options.content = FileContent::kEqualityDeletes;
  options.equality_ids = std::move(equality_field_ids);
  options.sort_order_id = metadata.WrittenSortOrderId();
  options.name_suffix = "-eq-deletes";
  FLOE_ASSIGN_OR_RAISE(auto fanout, internal::FileFanout::Make(metadata, std::move(options)));
  return std::make_unique<EqualityDeleteWriter>(std::move(fanout));
}

Status EqualityDeleteWriter::Add(const RecordBatch& rows) {
  FLOE_RETURN_NOT_OK(fanout_->status());
  const auto& fields = fanout_->file_schema()->fields;
  std::vector<Column> columns;
  columns.reserve(fields.size());
  for (const Field& f : fields) {
    int i = ColumnIndexById(*rows.schema(), f.field_id);
    if (i < 0) {
      return fanout_->Fail(Status::InvalidArgument("equality delete rows lack column '" + f.name +
                                                   "' (id " + std::to_string(f.field_id) + ")"));
    }
    if (rows.column(i).type() != f.type) {
      return fanout_->Fail(Status::InvalidArgument(
          "equality delete column '" + f.name + "' has type " + rows.column(i).type().ToString() +
          ", the table says " + f.type.ToString()));
    }
    if (!f.nullable && rows.column(i).null_count() != 0) {
      return fanout_->Fail(Status::InvalidArgument("equality delete column '" + f.name +
                                                   "' is required but holds nulls"));
    }
    columns.push_back(rows.column(i));
  }
  RecordBatch deletes(fanout_->file_schema(), std::move(columns));
  return fanout_->Add(deletes, rows);
}

Status EqualityDeleteWriter::Flush() { return fanout_->Flush(); }
Result<std::vector<DataFile>> EqualityDeleteWriter::Finish() { return fanout_->Finish(); }
void EqualityDeleteWriter::Abandon() { fanout_->Abandon(); }
int64_t EqualityDeleteWriter::row_count() const { return fanout_->row_count(); }
WriterStats EqualityDeleteWriter::stats() const { return fanout_->stats(); }
const std::shared_ptr<const BatchSchema>& EqualityDeleteWriter::delete_schema() const {
  return fanout_->file_schema();
}

// ---------------------------------------------------------------------------------------------
// PositionDeleteWriter

struct PositionDeleteWriter::Pending {
  struct Group {
    PartitionTuple partition;
    std::vector<std::pair<std::string, int64_t>> deletes;
  };
  std::unordered_map<std::string, size_t> index;  // partition key -> groups
  std::vector<Group> groups;
};

PositionDeleteWriter::PositionDeleteWriter(std::unique_ptr<internal::FileFanout> fanout,
                                           std::unique_ptr<Pending> pending)
    : fanout_(std::move(fanout)), pending_(std::move(pending)) {}
PositionDeleteWriter::~PositionDeleteWriter() = default;

std::shared_ptr<const BatchSchema> PositionDeleteWriter::DeleteSchema() {
  static const std::shared_ptr<const BatchSchema> kSchema = [] {
    auto s = std::make_shared<BatchSchema>();
    s->fields.push_back(Field{"file_path", DataType::String(), false, kDeleteFilePathFieldId});
    s->fields.push_back(Field{"pos", DataType::Int64(), false, kDeletePosFieldId});
    return std::shared_ptr<const BatchSchema>(std::move(s));
  }();
  return kSchema;
}

Result<std::unique_ptr<PositionDeleteWriter>> PositionDeleteWriter::Make(
    const TableMetadata& metadata, FileWriterConfig config) {
  internal::FileFanout::Options options;
  options.config = std::move(config);
  options.file_schema = DeleteSchema();
  options.content = FileContent::kPositionDeletes;
  options.name_suffix = "-pos-deletes";
  // Readers prune by file_path bounds; a truncated bound would still be correct, but a whole one
  // lets a single-file delete be matched exactly (as Iceberg's Java writer does).
  options.untruncated_ids = {kDeleteFilePathFieldId};
  FLOE_ASSIGN_OR_RAISE(auto fanout, internal::FileFanout::Make(metadata, std::move(options)));
  return std::make_unique<PositionDeleteWriter>(std::move(fanout), std::make_unique<Pending>());
}

Status PositionDeleteWriter::Add(std::string_view file_path, int64_t pos,
                                 const PartitionTuple& partition) {
  FLOE_RETURN_NOT_OK(status_);
  if (pos < 0) {
    status_ = Status::InvalidArgument("position delete with negative position " +
                                      std::to_string(pos) + " for " + std::string(file_path));
    return status_;
  }
  if (partition.size() != fanout_->spec().fields.size()) {
    status_ = Status::InvalidArgument("position delete for " + std::string(file_path) +
                                      " has a partition of " + std::to_string(partition.size()) +
                                      " values, the table's spec has " +
                                      std::to_string(fanout_->spec().fields.size()) + " fields");
    return status_;
  }
  std::string key;
  for (const Value& v : partition) internal::AppendValueKey(v, &key);
  auto [it, inserted] = pending_->index.emplace(key, pending_->groups.size());
  if (inserted) pending_->groups.push_back(Pending::Group{partition, {}});
  pending_->groups[it->second].deletes.emplace_back(std::string(file_path), pos);
  ++row_count_;
  return Status::OK();
}

Status PositionDeleteWriter::Add(const DataFile& data_file, int64_t pos) {
  if (data_file.spec_id != fanout_->spec().spec_id) {
    status_ = Status::InvalidArgument(
        "data file " + data_file.file_path + " has spec id " + std::to_string(data_file.spec_id) +
        ", the writer writes spec " + std::to_string(fanout_->spec().spec_id));
    return status_;
  }
  return Add(data_file.file_path, pos, data_file.partition);
}

Result<std::vector<DataFile>> PositionDeleteWriter::Finish() {
  FLOE_RETURN_NOT_OK(status_);
  for (auto& group : pending_->groups) {
    std::sort(group.deletes.begin(), group.deletes.end());
    RecordBatch batch(DeleteSchema());
    batch.mutable_column(0).Reserve(group.deletes.size());
    batch.mutable_column(1).Reserve(group.deletes.size());
    for (const auto& [path, pos] : group.deletes) {
      batch.mutable_column(0).AppendBytes(path);
      batch.mutable_column(1).Append<int64_t>(pos);
    }
    group.deletes.clear();
    group.deletes.shrink_to_fit();
    Status st = fanout_->AddPartition(group.partition, batch);
    if (!st.ok()) {
      status_ = st;
      return st;
    }
  }
  pending_->groups.clear();
  auto files = fanout_->Finish();
  if (!files.ok()) status_ = files.status();
  return files;
}

void PositionDeleteWriter::Abandon() {
  pending_->groups.clear();
  fanout_->Abandon();
  if (status_.ok()) status_ = Status::Internal("writer abandoned");
}

// ---------------------------------------------------------------------------------------------
// DeltaWriter

struct DeltaWriter::State {
  Schema schema;
  std::shared_ptr<const BatchSchema> table_batch_schema;
  std::vector<int32_t> key_ids;
  std::unique_ptr<DataFileWriter> data;
  std::unique_ptr<EqualityDeleteWriter> deletes;
  io::FileIO file_io;
  FileWriterConfig config;              // a data writer opened by EvolveSchema continues it
  std::vector<DataFile> finished_data;  // files of data writers EvolveSchema finished

  // Buffered batches of this commit (upsert rows or delete rows), and per key the slot of its
  // latest occurrence.
  struct Buffered {
    RecordBatch rows;
    bool is_delete = false;
  };
  struct Slot {
    uint32_t batch;
    uint32_t row;
  };
  std::vector<Buffered> batches;
  std::unordered_map<std::string, Slot> latest;
};

DeltaWriter::DeltaWriter(WriteMode mode, std::unique_ptr<State> state)
    : mode_(mode), state_(std::move(state)) {}
DeltaWriter::~DeltaWriter() = default;

Result<std::unique_ptr<DeltaWriter>> DeltaWriter::Make(const TableMetadata& metadata,
                                                       WriteMode mode, FileWriterConfig config) {
  auto state = std::make_unique<State>();
  state->file_io = config.file_io;
  state->config = config;
  const Schema& schema = metadata.current_schema();
  state->schema = schema;
  state->table_batch_schema = schema.ToBatchSchema();
  if (mode != WriteMode::kDelete) {
    FLOE_ASSIGN_OR_RAISE(state->data, DataFileWriter::Make(metadata, config));
  }
  if (mode != WriteMode::kAppend) {
    const char* what = mode == WriteMode::kUpsert ? "upsert" : "delete by key";
    if (schema.identifier_field_ids.empty()) {
      return Status::InvalidArgument(
          std::string(what) +
          " needs a primary key: the table has no identifier fields (declare PRIMARY KEY (...) "
          "NOT ENFORCED, i.e. identifier-field-ids in the schema)");
    }
    state->key_ids = schema.identifier_field_ids;
    for (const PartitionField& pf : metadata.default_spec().fields) {
      if (std::find(state->key_ids.begin(), state->key_ids.end(), pf.source_id) ==
          state->key_ids.end()) {
        const Field* source = schema.FindById(pf.source_id);
        return Status::InvalidArgument(
            std::string(what) +
            " on a partitioned table needs every partition source column in "
            "the primary key, but partition field '" +
            pf.name + "' comes from '" + (source ? source->name : std::to_string(pf.source_id)) +
            "', which is not a key column (a key could then move between partitions and its "
            "old row would survive)");
      }
    }
    FLOE_ASSIGN_OR_RAISE(state->deletes,
                         EqualityDeleteWriter::Make(metadata, state->key_ids, config));
  }
  return std::make_unique<DeltaWriter>(mode, std::move(state));
}

int64_t DeltaWriter::key_count() const { return static_cast<int64_t>(state_->latest.size()); }

Status DeltaWriter::Add(const RecordBatch& batch) {
  FLOE_RETURN_NOT_OK(status_);
  if (mode_ == WriteMode::kAppend) {
    row_count_ += static_cast<int64_t>(batch.num_rows());
    status_ = state_->data->Add(batch);
    return status_;
  }
  if (mode_ == WriteMode::kDelete) return Delete(batch);
  // Validate now, not at Finish, so the error points at the batch that caused it.
  if (batch.schema().get() != state_->table_batch_schema.get()) {
    status_ = CheckTableBatch(state_->schema, *batch.schema());
    FLOE_RETURN_NOT_OK(status_);
  }
  status_ = batch.Validate();
  FLOE_RETURN_NOT_OK(status_);
  std::vector<int> key_cols;
  for (int32_t id : state_->key_ids) key_cols.push_back(ColumnIndexById(*batch.schema(), id));
  const uint32_t b = static_cast<uint32_t>(state_->batches.size());
  std::string key;
  for (size_t row = 0; row < batch.num_rows(); ++row) {
    key.clear();
    for (int c : key_cols) internal::AppendColumnKey(batch.column(c), row, &key);
    state_->latest[key] = State::Slot{b, static_cast<uint32_t>(row)};
  }
  state_->batches.push_back(State::Buffered{batch, false});
  row_count_ += static_cast<int64_t>(batch.num_rows());
  return Status::OK();
}

Status DeltaWriter::Delete(const RecordBatch& batch) {
  FLOE_RETURN_NOT_OK(status_);
  if (mode_ == WriteMode::kAppend) {
    status_ = Status::InvalidArgument("Delete on an append-mode writer");
    return status_;
  }
  // Keep only the key columns (what the delete file holds), checked against the table.
  const auto& delete_fields = state_->deletes->delete_schema()->fields;
  std::vector<int> key_cols;
  std::vector<Column> columns;
  for (const Field& f : delete_fields) {
    int i = ColumnIndexById(*batch.schema(), f.field_id);
    if (i < 0) {
      status_ = Status::InvalidArgument("delete rows lack key column '" + f.name + "' (id " +
                                        std::to_string(f.field_id) + ")");
      return status_;
    }
    if (batch.column(i).type() != f.type) {
      status_ = Status::InvalidArgument("delete key column '" + f.name + "' has type " +
                                        batch.column(i).type().ToString() + ", the table says " +
                                        f.type.ToString());
      return status_;
    }
    columns.push_back(batch.column(i));
  }
  RecordBatch keys(state_->deletes->delete_schema(), std::move(columns));
  const uint32_t b = static_cast<uint32_t>(state_->batches.size());
  std::string key;
  for (size_t row = 0; row < keys.num_rows(); ++row) {
    key.clear();
    for (size_t c = 0; c < keys.num_columns(); ++c) {
      internal::AppendColumnKey(keys.column(c), row, &key);
    }
    state_->latest[key] = State::Slot{b, static_cast<uint32_t>(row)};
  }
  state_->batches.push_back(State::Buffered{std::move(keys), true});
  row_count_ += static_cast<int64_t>(batch.num_rows());
  return Status::OK();
}

namespace {

// `rows` (of an earlier schema, columns found by field id) in `to`'s columns: a column `rows`
// lacks is all null, a narrower one is widened (INT -> BIGINT, FLOAT -> DOUBLE, a DECIMAL's
// precision).
RecordBatch ToSchema(const RecordBatch& rows, const std::shared_ptr<const BatchSchema>& to) {
  std::vector<Column> columns;
  columns.reserve(to->fields.size());
  for (const Field& f : to->fields) {
    const int i = ColumnIndexById(*rows.schema(), f.field_id);
    Column& out = columns.emplace_back(f.type);
    if (i < 0) {
      for (size_t r = 0; r < rows.num_rows(); ++r) out.AppendNull();
      continue;
    }
    const Column& in = rows.column(static_cast<size_t>(i));
    if (in.type() == f.type) {
      out = in;
      continue;
    }
    for (size_t r = 0; r < rows.num_rows(); ++r) {
      if (in.IsNull(r)) {
        out.AppendNull();
      } else if (in.type().id == TypeId::kInt32) {
        out.Append<int64_t>(in.Get<int32_t>(r));
      } else if (in.type().id == TypeId::kFloat) {
        out.Append<double>(in.Get<float>(r));
      } else {
        out.Append<Int128>(in.Get<Int128>(r));  // a DECIMAL's precision: same values
      }
    }
  }
  return RecordBatch(to, std::move(columns));
}

}  // namespace

Status DeltaWriter::EvolveSchema(const TableMetadata& evolved) {
  FLOE_RETURN_NOT_OK(status_);
  State& s = *state_;
  if (s.data == nullptr) {  // kDelete: keys only
    s.schema = evolved.current_schema();
    s.table_batch_schema = s.schema.ToBatchSchema();
    return Status::OK();
  }
  FileWriterConfig config = s.config;
  if (mode_ == WriteMode::kAppend) {
    Result<std::vector<DataFile>> written = s.data->Finish();
    if (!written.ok()) {
      status_ = written.status();
      return status_;
    }
    for (DataFile& f : *written) s.finished_data.push_back(std::move(f));
    config.initial_size_ratio = s.data->stats().size_ratio;
  } else {
    s.data->Abandon();  // upsert writes at Finish: nothing was written yet
  }
  config.first_file_number = s.data->next_file_number();
  Result<std::unique_ptr<DataFileWriter>> data = DataFileWriter::Make(evolved, config);
  if (!data.ok()) {
    status_ = data.status();
    return status_;
  }
  s.data = std::move(data).value();
  s.config = config;
  s.schema = evolved.current_schema();
  s.table_batch_schema = s.schema.ToBatchSchema();
  for (State::Buffered& b : s.batches) {
    if (!b.is_delete) b.rows = ToSchema(b.rows, s.table_batch_schema);
  }
  return Status::OK();
}

Result<WriteResult> DeltaWriter::Finish() {
  FLOE_RETURN_NOT_OK(status_);
  WriteResult result;
  auto fail = [this](Status st) {
    status_ = st;
    return st;
  };
  if (mode_ != WriteMode::kAppend) {
    // Winning rows per batch, in their original order.
    std::vector<std::vector<uint32_t>> keep(state_->batches.size());
    for (const auto& [key, slot] : state_->latest) keep[slot.batch].push_back(slot.row);
    state_->latest.clear();
    for (size_t b = 0; b < state_->batches.size(); ++b) {
      std::vector<uint32_t>& rows = keep[b];
      if (rows.empty()) continue;
      std::sort(rows.begin(), rows.end());
      const RecordBatch& all = state_->batches[b].rows;
      RecordBatch winners = rows.size() == all.num_rows() ? all : all.Take(rows);
      // One equality delete per key retires the key's rows from earlier commits; the row
      // written beside it has the same sequence number and is not affected.
      Status st = state_->deletes->Add(winners);
      if (!st.ok()) return fail(st);
      if (!state_->batches[b].is_delete) {
        st = state_->data->Add(winners);
        if (!st.ok()) return fail(st);
      }
      state_->batches[b].rows = RecordBatch();  // release memory as we go
    }
    state_->batches.clear();
    auto deletes = state_->deletes->Finish();
    if (!deletes.ok()) return fail(deletes.status());
    result.delete_files = std::move(*deletes);
  }
  if (state_->data) {
    auto data = state_->data->Finish();
    if (!data.ok()) {
      // The delete files are finished, so no Abandon removes them; nothing will reference them.
      for (const DataFile& f : result.delete_files) {
        Result<std::string> path = UriToPath(f.file_path);
        if (path.ok()) (void)state_->file_io.RemoveFile(*path);
      }
      return fail(data.status());
    }
    result.data_files = std::move(state_->finished_data);
    for (DataFile& f : *data) result.data_files.push_back(std::move(f));
    result.data_size_ratio = state_->data->stats().size_ratio;
  }
  status_ = Status::Internal("writer already finished");
  return result;
}

void DeltaWriter::Abandon() {
  if (state_->data) state_->data->Abandon();
  for (const DataFile& f : state_->finished_data) {
    Result<std::string> path = UriToPath(f.file_path);
    if (path.ok()) (void)state_->file_io.RemoveFile(*path);
  }
  state_->finished_data.clear();
  if (state_->deletes) state_->deletes->Abandon();
  state_->batches.clear();
  state_->latest.clear();
  if (status_.ok()) status_ = Status::Internal("writer abandoned");
}

}  // namespace floe::iceberg

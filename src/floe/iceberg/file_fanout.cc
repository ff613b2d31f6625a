#include "floe/iceberg/file_fanout_internal.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "floe/iceberg/catalog.h"
#include "floe/iceberg/row_key_internal.h"
#include "floe/io/file.h"
#include "floe/io/s3_client.h"

namespace floe::iceberg::internal {
namespace {

constexpr int kTruncateLength = 16;  // write.metadata.metrics.default = truncate(16)

std::string FileName(const std::string& prefix, int64_t n, std::string_view suffix) {
  char num[24];
  std::snprintf(num, sizeof(num), "%05lld", static_cast<long long>(n));
  std::string name = prefix;
  name += '-';
  name += num;
  name += suffix;
  name += ".parquet";
  return name;
}

}  // namespace

Result<std::unique_ptr<FileFanout>> FileFanout::Make(const TableMetadata& metadata,
                                                     Options options) {
  auto fanout = std::make_unique<FileFanout>();
  fanout->options_ = std::move(options);
  const std::string& dir = fanout->options_.config.data_dir;
  if (dir.empty() || (dir[0] != '/' && !io::IsS3Uri(dir))) {
    return Status::InvalidArgument("writer data_dir must be an absolute path or s3:// URI, got '" +
                                   fanout->options_.config.data_dir + "'");
  }
  if (fanout->options_.config.file_prefix.empty()) {
    return Status::InvalidArgument("writer file_prefix must not be empty");
  }
  if (fanout->options_.config.target_file_size_bytes <= 0) {
    return Status::InvalidArgument("target file size must be positive");
  }
  fanout->next_file_ = fanout->options_.config.first_file_number;
  if (const double r = fanout->options_.config.initial_size_ratio; r >= 0.05 && r <= 2.0) {
    fanout->size_ratio_ = r;
  }
  fanout->schema_ = metadata.current_schema();
  fanout->spec_ = metadata.default_spec();
  const Schema& schema = fanout->schema_;
  for (const PartitionField& pf : fanout->spec_.fields) {
    const Field* source = schema.FindById(pf.source_id);
    if (source == nullptr) {
      return Status::InvalidArgument("partition field '" + pf.name + "' has source id " +
                                     std::to_string(pf.source_id) +
                                     ", which is not in the current schema");
    }
    fanout->source_types_.push_back(source->type);
  }
  if (fanout->spec_.unpartitioned()) {
    fanout->partition_index_.emplace("", 0);
    fanout->OpenPartition({});
  }
  return fanout;
}

WriterStats FileFanout::stats() const {
  WriterStats s;
  s.rows = rows_;
  s.files = static_cast<int64_t>(finished_.size());
  s.bytes_written = bytes_written_;
  for (const auto& p : partitions_) {
    if (p.file) s.open_bytes += p.file->estimated_file_size();
  }
  s.size_ratio = size_ratio_;
  return s;
}

Status FileFanout::Add(const RecordBatch& file_rows, const RecordBatch& source_rows) {
  FLOE_RETURN_NOT_OK(status_);
  if (finished_called_) return Status::Internal("writer used after Finish");
  if (file_rows.num_rows() == 0) return Status::OK();
  if (spec_.unpartitioned()) return Fail(AddToPartition(0, file_rows));

  std::vector<int> source_cols;
  for (const PartitionField& pf : spec_.fields) {
    int found = -1;
    const auto& fields = source_rows.schema()->fields;
    for (size_t i = 0; i < fields.size(); ++i) {
      if (fields[i].field_id == pf.source_id) found = static_cast<int>(i);
    }
    if (found < 0) {
      return Fail(Status::InvalidArgument("rows lack column id " + std::to_string(pf.source_id) +
                                          ", the source of partition "
                                          "field '" +
                                          pf.name + "'"));
    }
    source_cols.push_back(found);
  }

  // Group row indices by partition. Consecutive rows usually share a partition, so compare
  // with the previous row's key before hashing.
  std::vector<std::vector<uint32_t>>& groups = group_rows_;
  for (auto& g : groups) g.clear();
  std::string key;
  std::string prev_key;
  size_t prev_index = 0;
  bool have_prev = false;
  PartitionTuple tuple(spec_.fields.size());
  const size_t n = file_rows.num_rows();
  for (size_t row = 0; row < n; ++row) {
    key.clear();
    for (size_t f = 0; f < spec_.fields.size(); ++f) {
      tuple[f] = spec_.fields[f].transform.Apply(source_types_[f],
                                                 ValueAt(source_rows.column(source_cols[f]), row));
      AppendValueKey(tuple[f], &key);
    }
    size_t index;
    if (have_prev && key == prev_key) {
      index = prev_index;
    } else {
      auto it = partition_index_.find(key);
      if (it == partition_index_.end()) {
        index = partitions_.size();
        partition_index_.emplace(key, index);
        OpenPartition(tuple);
      } else {
        index = it->second;
      }
      prev_key = key;
      prev_index = index;
      have_prev = true;
    }
    if (groups.size() <= index) groups.resize(index + 1);
    groups[index].push_back(static_cast<uint32_t>(row));
  }
  for (size_t index = 0; index < groups.size(); ++index) {
    if (groups[index].empty()) continue;
    if (groups[index].size() == n) return Fail(AddToPartition(index, file_rows));
    FLOE_RETURN_NOT_OK(Fail(AddToPartition(index, file_rows.Take(groups[index]))));
  }
  return Status::OK();
}

Status FileFanout::AddPartition(const PartitionTuple& partition, const RecordBatch& file_rows) {
  FLOE_RETURN_NOT_OK(status_);
  if (finished_called_) return Status::Internal("writer used after Finish");
  if (partition.size() != spec_.fields.size()) {
    return Fail(Status::InvalidArgument("partition tuple has " + std::to_string(partition.size()) +
                                        " values, spec " + std::to_string(spec_.spec_id) + " has " +
                                        std::to_string(spec_.fields.size()) + " fields"));
  }
  std::string key;
  for (const Value& v : partition) AppendValueKey(v, &key);
  auto it = partition_index_.find(key);
  size_t index;
  if (it == partition_index_.end()) {
    index = partitions_.size();
    partition_index_.emplace(key, index);
    OpenPartition(partition);
  } else {
    index = it->second;
  }
  return Fail(AddToPartition(index, file_rows));
}

Status FileFanout::Flush() {
  FLOE_RETURN_NOT_OK(status_);
  for (auto& p : partitions_) {
    if (p.file) FLOE_RETURN_NOT_OK(Fail(p.file->Flush()));
  }
  return Status::OK();
}

Result<std::vector<DataFile>> FileFanout::Finish() {
  FLOE_RETURN_NOT_OK(status_);
  if (finished_called_) return Status::Internal("writer finished twice");
  for (auto& p : partitions_) FLOE_RETURN_NOT_OK(Fail(CloseFile(&p)));
  // One directory sync per partition directory makes the new names durable.
  for (const auto& p : partitions_) {
    FLOE_RETURN_NOT_OK(Fail(options_.config.file_io.SyncDir(p.dir)));
  }
  finished_called_ = true;
  return std::move(finished_);
}

void FileFanout::Abandon() {
  for (auto& p : partitions_) {
    if (p.file) {
      p.file->Abandon();
      p.file.reset();
    }
  }
  if (!finished_called_) {
    for (const std::string& path : created_) (void)options_.config.file_io.RemoveFile(path);
  }
  created_.clear();
  finished_.clear();
  if (status_.ok()) status_ = Status::Internal("writer abandoned");
}

void FileFanout::OpenPartition(const PartitionTuple& partition) {
  PartitionState p;
  p.partition = partition;
  std::string rel = spec_.PartitionPath(schema_, partition);
  p.dir = rel.empty() ? options_.config.data_dir : io::JoinPath(options_.config.data_dir, rel);
  partitions_.push_back(std::move(p));
}

Status FileFanout::AddToPartition(size_t index, const RecordBatch& rows) {
  PartitionState& p = partitions_[index];
  // A batch far larger than the target is written in slices so files roll near the target
  // (in-memory size overestimates the encoded size, so slices of a quarter target suffice).
  const int64_t target = options_.config.target_file_size_bytes;
  const int64_t bytes = static_cast<int64_t>(rows.ByteSize());
  const size_t n = rows.num_rows();
  if (bytes > target / 4 && n > 1) {
    size_t per_slice =
        std::max<size_t>(1, static_cast<size_t>(static_cast<double>(n) * (target / 4) / bytes));
    if (per_slice < n) {
      std::vector<uint32_t> idx;
      for (size_t start = 0; start < n; start += per_slice) {
        idx.clear();
        for (size_t r = start; r < std::min(n, start + per_slice); ++r) {
          idx.push_back(static_cast<uint32_t>(r));
        }
        FLOE_RETURN_NOT_OK(WriteRows(&p, rows.Take(idx)));
      }
      return Status::OK();
    }
  }
  return WriteRows(&p, rows);
}

Status FileFanout::WriteRows(PartitionState* p, const RecordBatch& rows) {
  if (!p->file) {
    const io::FileIO& file_io = options_.config.file_io;
    if (!file_io.Exists(p->dir)) FLOE_RETURN_NOT_OK(file_io.CreateDirs(p->dir));
    p->path = io::JoinPath(
        p->dir, FileName(options_.config.file_prefix, next_file_++, options_.name_suffix));
    FLOE_ASSIGN_OR_RAISE(p->file, parquet::FileWriter::Open(file_io, p->path, options_.file_schema,
                                                            options_.config.parquet));
    created_.push_back(p->path);
  }
  FLOE_RETURN_NOT_OK(p->file->Add(rows));
  rows_ += static_cast<int64_t>(rows.num_rows());
  // The estimate counts the open pages and the dictionary before compression; scaled by what
  // the files closed so far really came to, files roll near the target instead of well below.
  const double estimate = static_cast<double>(p->file->estimated_file_size()) * size_ratio_;
  if (estimate >= static_cast<double>(options_.config.target_file_size_bytes)) {
    FLOE_RETURN_NOT_OK(CloseFile(p));
  }
  return Status::OK();
}

Status FileFanout::CloseFile(PartitionState* p) {
  if (!p->file) return Status::OK();
  std::unique_ptr<parquet::FileWriter> file = std::move(p->file);
  const int64_t estimated = file->estimated_file_size();
  FLOE_ASSIGN_OR_RAISE(parquet::WrittenFile written, file->Finish());
  if (estimated > 0 && written.file_size > 0) {
    size_ratio_ = std::clamp(static_cast<double>(written.file_size) / estimated, 0.05, 2.0);
  }
  FLOE_ASSIGN_OR_RAISE(DataFile df, Describe(*p, written));
  bytes_written_ += df.file_size_in_bytes;
  finished_.push_back(std::move(df));
  return Status::OK();
}

Result<DataFile> FileFanout::Describe(const PartitionState& p,
                                      const parquet::WrittenFile& written) const {
  DataFile df;
  df.content = options_.content;
  df.file_path = PathToUri(p.path);
  df.spec_id = spec_.spec_id;
  df.partition = p.partition;
  df.record_count = written.row_count;
  df.file_size_in_bytes = written.file_size;
  df.split_offsets = written.row_group_offsets;
  df.equality_ids = options_.equality_ids;
  df.sort_order_id = options_.sort_order_id;
  const auto& fields = options_.file_schema->fields;
  for (const auto& m : written.columns) {
    const Field* field = nullptr;
    for (const Field& f : fields) {
      if (f.field_id == m.field_id) field = &f;
    }
    if (field == nullptr) continue;
    const DataType& type = field->type;
    df.column_sizes[m.field_id] = m.compressed_size;
    df.value_counts[m.field_id] = m.value_count;
    df.null_value_counts[m.field_id] = m.null_count;
    if (type.id == TypeId::kFloat || type.id == TypeId::kDouble) {
      df.nan_value_counts[m.field_id] = m.nan_count;
    }
    if (!m.min || !m.max) continue;
    FLOE_ASSIGN_OR_RAISE(std::string lower, ParquetStatToIcebergBound(type, *m.min));
    FLOE_ASSIGN_OR_RAISE(std::string upper, ParquetStatToIcebergBound(type, *m.max));
    bool truncate = type.is_variable_width() &&
                    std::find(options_.untruncated_ids.begin(), options_.untruncated_ids.end(),
                              m.field_id) == options_.untruncated_ids.end();
    if (truncate) {
      std::optional<std::string> up = TruncateUpperBound(type, upper, kTruncateLength);
      df.lower_bounds[m.field_id] = TruncateLowerBound(type, lower, kTruncateLength);
      if (up) df.upper_bounds[m.field_id] = std::move(*up);
    } else {
      df.lower_bounds[m.field_id] = std::move(lower);
      df.upper_bounds[m.field_id] = std::move(upper);
    }
  }
  return df;
}

}  // namespace floe::iceberg::internal

#include "floe/iceberg/scan.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "floe/format/parquet/file_reader.h"
#include "floe/iceberg/catalog.h"
#include "floe/iceberg/data_writer.h"
#include "floe/iceberg/manifest_io.h"
#include "floe/iceberg/row_key_internal.h"
#include "floe/io/file.h"

namespace floe::iceberg {

namespace {

using internal::AppendColumnKey;
using internal::PartitionKey;

// Whether `path` may be among the paths a position delete file's file_path bounds cover.
bool PathWithinBounds(const DataFile& deletes, const std::string& path) {
  auto lower = deletes.lower_bounds.find(kDeleteFilePathFieldId);
  if (lower != deletes.lower_bounds.end() && path < lower->second) return false;
  auto upper = deletes.upper_bounds.find(kDeleteFilePathFieldId);
  if (upper != deletes.upper_bounds.end() && path > upper->second) return false;
  return true;
}

int ColumnIndexById(const BatchSchema& schema, int32_t id) {
  for (size_t i = 0; i < schema.fields.size(); ++i) {
    if (schema.fields[i].field_id == id) return static_cast<int>(i);
  }
  return -1;
}

Result<RecordBatch> ReadParquet(const io::FileIO& file_io, const std::string& uri,
                                std::string_view what) {
  auto fail = [&](const Status& st) {
    return st.WithContext("reading " + std::string(what) + " " + uri);
  };
  auto path = UriToPath(uri);
  if (!path.ok()) return fail(path.status());
  auto reader = parquet::FileReader::Open(file_io, *path);
  if (!reader.ok()) return fail(reader.status());
  auto batch = (*reader)->ReadAll();
  if (!batch.ok()) return fail(batch.status());
  return std::move(*batch);
}

// `column` converted to `target`, for the promotions Iceberg allows (int -> long, float ->
// double, decimal(P, S) -> decimal(P', S)).
Result<Column> Promote(const Column& column, const DataType& target, const std::string& name) {
  const DataType& from = column.type();
  if (from == target) return column;
  Column out(target);
  out.Reserve(column.size());
  if (from.id == TypeId::kInt32 && target.id == TypeId::kInt64) {
    for (size_t i = 0; i < column.size(); ++i) {
      if (column.IsNull(i)) {
        out.AppendNull();
      } else {
        out.Append<int64_t>(column.Get<int32_t>(i));
      }
    }
    return out;
  }
  if (from.id == TypeId::kFloat && target.id == TypeId::kDouble) {
    for (size_t i = 0; i < column.size(); ++i) {
      if (column.IsNull(i)) {
        out.AppendNull();
      } else {
        out.Append<double>(column.Get<float>(i));
      }
    }
    return out;
  }
  if (from.id == TypeId::kDecimal && target.id == TypeId::kDecimal && from.scale == target.scale &&
      from.precision <= target.precision) {
    for (size_t i = 0; i < column.size(); ++i) {
      if (column.IsNull(i)) {
        out.AppendNull();
      } else {
        out.Append<Int128>(column.Get<Int128>(i));
      }
    }
    return out;
  }
  return Status::Corruption("column '" + name + "' is stored as " + from.ToString() +
                            ", which cannot be read as the table's " + target.ToString());
}

// Rows of `file` (a data file's batch) projected onto `schema` by field id.
Result<RecordBatch> Project(const RecordBatch& file, const Schema& schema,
                            const std::shared_ptr<const BatchSchema>& out_schema) {
  std::vector<Column> columns;
  columns.reserve(schema.fields.size());
  const size_t n = file.num_rows();
  for (const Field& f : schema.fields) {
    int i = ColumnIndexById(*file.schema(), f.field_id);
    if (i < 0) {
      Column nulls(f.type);
      nulls.Reserve(n);
      for (size_t r = 0; r < n; ++r) nulls.AppendNull();
      columns.push_back(std::move(nulls));
    } else {
      FLOE_ASSIGN_OR_RAISE(Column c, Promote(file.column(i), f.type, f.name));
      columns.push_back(std::move(c));
    }
  }
  return RecordBatch(out_schema, std::move(columns));
}

// Delete file contents, parsed once and shared by the tasks they apply to.
struct PositionDeletes {
  // data file path -> deleted positions
  std::unordered_map<std::string, std::vector<int64_t>> by_path;
};

struct EqualityDeletes {
  std::vector<int32_t> equality_ids;
  std::unordered_set<std::string> keys;
};

class DeleteLoader {
 public:
  explicit DeleteLoader(const io::FileIO& file_io) : file_io_(file_io) {}

  Result<std::shared_ptr<const PositionDeletes>> Positions(const DataFile& file) {
    auto it = positions_.find(file.file_path);
    if (it != positions_.end()) return it->second;
    FLOE_ASSIGN_OR_RAISE(RecordBatch batch,
                         ReadParquet(file_io_, file.file_path, "position delete file"));
    int path_col = ColumnIndexById(*batch.schema(), kDeleteFilePathFieldId);
    int pos_col = ColumnIndexById(*batch.schema(), kDeletePosFieldId);
    if (path_col < 0 || pos_col < 0 || batch.column(path_col).type().id != TypeId::kString ||
        batch.column(pos_col).type().id != TypeId::kInt64) {
      return Status::Corruption("position delete file " + file.file_path +
                                " lacks file_path (id 2147483546, string) or pos (id "
                                "2147483545, long)");
    }
    auto deletes = std::make_shared<PositionDeletes>();
    const Column& paths = batch.column(path_col);
    const Column& positions = batch.column(pos_col);
    for (size_t r = 0; r < batch.num_rows(); ++r) {
      if (paths.IsNull(r) || positions.IsNull(r)) continue;
      deletes->by_path[std::string(paths.GetBytes(r))].push_back(positions.Get<int64_t>(r));
    }
    positions_.emplace(file.file_path, deletes);
    return std::shared_ptr<const PositionDeletes>(std::move(deletes));
  }

  Result<std::shared_ptr<const EqualityDeletes>> Equalities(const DataFile& file) {
    auto it = equalities_.find(file.file_path);
    if (it != equalities_.end()) return it->second;
    if (file.equality_ids.empty()) {
      return Status::Corruption("equality delete file " + file.file_path +
                                " has no equality_ids in its manifest entry");
    }
    FLOE_ASSIGN_OR_RAISE(RecordBatch batch,
                         ReadParquet(file_io_, file.file_path, "equality delete file"));
    std::vector<int> cols;
    for (int32_t id : file.equality_ids) {
      int c = ColumnIndexById(*batch.schema(), id);
      if (c < 0) {
        return Status::Corruption("equality delete file " + file.file_path +
                                  " lacks its equality column id " + std::to_string(id));
      }
      cols.push_back(c);
    }
    auto deletes = std::make_shared<EqualityDeletes>();
    deletes->equality_ids = file.equality_ids;
    deletes->keys.reserve(batch.num_rows());
    std::string key;
    for (size_t r = 0; r < batch.num_rows(); ++r) {
      key.clear();
      for (int c : cols) AppendColumnKey(batch.column(c), r, &key);
      deletes->keys.insert(key);
    }
    equalities_.emplace(file.file_path, deletes);
    return std::shared_ptr<const EqualityDeletes>(std::move(deletes));
  }

 private:
  const io::FileIO& file_io_;
  std::unordered_map<std::string, std::shared_ptr<const PositionDeletes>> positions_;
  std::unordered_map<std::string, std::shared_ptr<const EqualityDeletes>> equalities_;
};

Result<RecordBatch> ReadTaskWith(const io::FileIO& file_io, const FileScanTask& task,
                                 const TableMetadata& metadata,
                                 const std::shared_ptr<const BatchSchema>& out_schema,
                                 DeleteLoader* loader) {
  const DataFile& df = task.file;
  if (df.content != FileContent::kData) {
    return Status::InvalidArgument("scan task file " + df.file_path + " is not a data file");
  }
  FLOE_ASSIGN_OR_RAISE(RecordBatch raw, ReadParquet(file_io, df.file_path, "data file"));
  const size_t n = raw.num_rows();
  if (static_cast<int64_t>(n) != df.record_count) {
    return Status::Corruption("data file " + df.file_path + " holds " + std::to_string(n) +
                              " rows, its manifest entry says " + std::to_string(df.record_count));
  }
  auto projected = Project(raw, metadata.current_schema(), out_schema);
  if (!projected.ok()) return projected.status().WithContext("reading data file " + df.file_path);
  if (task.position_deletes.empty() && task.equality_deletes.empty()) return projected;

  std::vector<uint8_t> deleted(n, 0);
  size_t deleted_count = 0;
  for (const ScanDeleteFile& d : task.position_deletes) {
    FLOE_ASSIGN_OR_RAISE(auto positions, loader->Positions(*d.file));
    auto it = positions->by_path.find(df.file_path);
    if (it == positions->by_path.end()) continue;
    for (int64_t pos : it->second) {
      if (pos >= 0 && static_cast<size_t>(pos) < n && !deleted[pos]) {
        deleted[pos] = 1;
        ++deleted_count;
      }
    }
  }

  // Equality deletes grouped by their column set, so each data row is keyed once per set. The
  // data row's columns come from the file itself (by id), so a dropped column still matches.
  std::map<std::vector<int32_t>, std::vector<std::shared_ptr<const EqualityDeletes>>> groups;
  for (const ScanDeleteFile& d : task.equality_deletes) {
    FLOE_ASSIGN_OR_RAISE(auto eq, loader->Equalities(*d.file));
    groups[eq->equality_ids].push_back(std::move(eq));
  }
  std::string key;
  for (const auto& [ids, sets] : groups) {
    std::vector<const Column*> cols;
    std::vector<Column> nulls;  // for columns the data file lacks
    nulls.reserve(ids.size());
    for (int32_t id : ids) {
      int c = ColumnIndexById(*raw.schema(), id);
      if (c >= 0) {
        cols.push_back(&raw.column(c));
      } else {
        const Field* f = metadata.current_schema().FindById(id);
        nulls.emplace_back(f ? f->type : DataType::String());
        for (size_t r = 0; r < n; ++r) nulls.back().AppendNull();
        cols.push_back(&nulls.back());
      }
    }
    for (size_t r = 0; r < n; ++r) {
      if (deleted[r]) continue;
      key.clear();
      for (const Column* c : cols) AppendColumnKey(*c, r, &key);
      for (const auto& set : sets) {
        if (set->keys.count(key) != 0) {
          deleted[r] = 1;
          ++deleted_count;
          break;
        }
      }
    }
  }
  if (deleted_count == 0) return projected;
  std::vector<uint32_t> keep;
  keep.reserve(n - deleted_count);
  for (size_t r = 0; r < n; ++r) {
    if (!deleted[r]) keep.push_back(static_cast<uint32_t>(r));
  }
  return projected->Take(keep);
}

}  // namespace

Result<std::vector<FileScanTask>> PlanScan(const io::FileIO& file_io, const TableMetadata& metadata,
                                           std::optional<int64_t> snapshot_id) {
  const Snapshot* snapshot = nullptr;
  if (snapshot_id) {
    snapshot = metadata.FindSnapshot(*snapshot_id);
    if (snapshot == nullptr) {
      return Status::NotFound("snapshot " + std::to_string(*snapshot_id) +
                              " is not in the table's metadata (expired or never existed)");
    }
  } else {
    snapshot = metadata.current_snapshot();
    if (snapshot == nullptr) return std::vector<FileScanTask>{};
  }
  FLOE_ASSIGN_OR_RAISE(std::vector<ManifestFile> manifests,
                       ReadManifestList(file_io, snapshot->manifest_list));

  std::vector<FileScanTask> tasks;
  struct Deletes {
    std::vector<ScanDeleteFile> positions;
    std::vector<ScanDeleteFile> equalities;
  };
  std::unordered_map<std::string, Deletes> by_partition;  // spec + partition -> deletes
  std::vector<ScanDeleteFile> global_equalities;          // unpartitioned equality deletes
  for (const ManifestFile& manifest : manifests) {
    FLOE_ASSIGN_OR_RAISE(std::vector<ManifestEntry> entries,
                         ReadManifest(file_io, manifest, metadata));
    const PartitionSpec* spec = metadata.FindSpec(manifest.partition_spec_id);
    if (spec == nullptr) {
      return Status::Corruption("manifest " + manifest.manifest_path + " uses partition spec " +
                                std::to_string(manifest.partition_spec_id) +
                                ", which the table metadata lacks");
    }
    for (ManifestEntry& entry : entries) {
      if (entry.status == EntryStatus::kDeleted) continue;
      DataFile& file = entry.data_file;
      file.spec_id = manifest.partition_spec_id;
      int64_t seq = entry.sequence_number.value_or(manifest.sequence_number);
      if (manifest.content == ManifestContent::kData) {
        if (file.content != FileContent::kData) {
          return Status::Corruption("data manifest " + manifest.manifest_path +
                                    " lists delete file " + file.file_path);
        }
        FileScanTask task;
        task.file = std::move(file);
        task.data_sequence_number = seq;
        tasks.push_back(std::move(task));
        continue;
      }
      ScanDeleteFile d{std::make_shared<const DataFile>(std::move(file)), seq};
      if (d.file->content == FileContent::kPositionDeletes) {
        by_partition[PartitionKey(d.file->spec_id, d.file->partition)].positions.push_back(
            std::move(d));
      } else if (d.file->content == FileContent::kEqualityDeletes) {
        if (spec->unpartitioned()) {
          global_equalities.push_back(std::move(d));
        } else {
          by_partition[PartitionKey(d.file->spec_id, d.file->partition)].equalities.push_back(
              std::move(d));
        }
      } else {
        return Status::Corruption("delete manifest " + manifest.manifest_path +
                                  " lists data file " + d.file->file_path);
      }
    }
  }

  for (FileScanTask& task : tasks) {
    const int64_t seq = task.data_sequence_number;
    auto it = by_partition.find(PartitionKey(task.file.spec_id, task.file.partition));
    if (it != by_partition.end()) {
      for (const ScanDeleteFile& d : it->second.positions) {
        if (seq <= d.data_sequence_number && PathWithinBounds(*d.file, task.file.file_path)) {
          task.position_deletes.push_back(d);
        }
      }
      for (const ScanDeleteFile& d : it->second.equalities) {
        if (seq < d.data_sequence_number) task.equality_deletes.push_back(d);
      }
    }
    for (const ScanDeleteFile& d : global_equalities) {
      if (seq < d.data_sequence_number) task.equality_deletes.push_back(d);
    }
  }
  return tasks;
}

Result<RecordBatch> ReadTask(const io::FileIO& file_io, const FileScanTask& task,
                             const TableMetadata& metadata) {
  DeleteLoader loader(file_io);
  return ReadTaskWith(file_io, task, metadata, metadata.current_schema().ToBatchSchema(), &loader);
}

Status CheckScanFiles(const io::FileIO& file_io, const std::vector<FileScanTask>& tasks) {
  std::unordered_set<std::string> checked;
  auto check = [&](const DataFile& file, std::string_view what) -> Status {
    if (!checked.insert(file.file_path).second) return Status::OK();
    auto fail = [&](const Status& st) {
      return st.WithContext("checking " + std::string(what) + " " + file.file_path);
    };
    auto path = UriToPath(file.file_path);
    if (!path.ok()) return fail(path.status());
    auto size = file_io.FileSize(*path);
    if (!size.ok()) return fail(size.status());
    if (static_cast<int64_t>(*size) != file.file_size_in_bytes) {
      return Status::Corruption(std::string(what) + " " + file.file_path + " is " +
                                std::to_string(*size) + " bytes, its manifest entry says " +
                                std::to_string(file.file_size_in_bytes));
    }
    auto reader = parquet::FileReader::Open(file_io, *path);
    if (!reader.ok()) return fail(reader.status());
    if ((*reader)->num_rows() != file.record_count) {
      return Status::Corruption(std::string(what) + " " + file.file_path + " holds " +
                                std::to_string((*reader)->num_rows()) +
                                " rows, its manifest entry says " +
                                std::to_string(file.record_count));
    }
    return Status::OK();
  };
  for (const FileScanTask& task : tasks) {
    FLOE_RETURN_NOT_OK(check(task.file, "data file"));
    for (const ScanDeleteFile& d : task.position_deletes) {
      FLOE_RETURN_NOT_OK(check(*d.file, "position delete file"));
    }
    for (const ScanDeleteFile& d : task.equality_deletes) {
      FLOE_RETURN_NOT_OK(check(*d.file, "equality delete file"));
    }
  }
  return Status::OK();
}

Status ScanTable(const io::FileIO& file_io, const TableMetadata& metadata,
                 std::optional<int64_t> snapshot_id,
                 const std::function<Status(const RecordBatch&)>& fn) {
  FLOE_ASSIGN_OR_RAISE(std::vector<FileScanTask> tasks, PlanScan(file_io, metadata, snapshot_id));
  return ScanTasks(file_io, metadata, tasks, fn);
}

Status ScanTasks(const io::FileIO& file_io, const TableMetadata& metadata,
                 const std::vector<FileScanTask>& tasks,
                 const std::function<Status(const RecordBatch&)>& fn) {
  DeleteLoader loader(file_io);
  auto schema = metadata.current_schema().ToBatchSchema();
  for (const FileScanTask& task : tasks) {
    FLOE_ASSIGN_OR_RAISE(RecordBatch batch, ReadTaskWith(file_io, task, metadata, schema, &loader));
    FLOE_RETURN_NOT_OK(fn(batch));
  }
  return Status::OK();
}

}  // namespace floe::iceberg

#include "floe/cli/table_ops.h"

#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "floe/cli/progress_line.h"
#include "floe/common/civil_time.h"
#include "floe/common/json.h"
#include "floe/connectors/partition_claims.h"
#include "floe/format/json/json_lines.h"
#include "floe/iceberg/commit_markers.h"
#include "floe/iceberg/manifest_io.h"
#include "floe/iceberg/partition_positions.h"
#include "floe/iceberg/snapshot_update.h"
#include "floe/io/file.h"
#include "floe/io/line_reader.h"

namespace floe::cli {
namespace {

using iceberg::WriteMode;

std::string RandomHex(int digits) {
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd());
  static const char* kHex = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < digits; ++i) s.push_back(kHex[rng() % 16]);
  return s;
}

// The columns a write mode reads from each line: all of them, or only the key for deletes.
std::shared_ptr<const BatchSchema> InputSchema(const iceberg::Schema& schema, WriteMode mode) {
  if (mode != WriteMode::kDelete) return schema.ToBatchSchema();
  auto keys = std::make_shared<BatchSchema>();
  for (int32_t id : schema.identifier_field_ids) keys->fields.push_back(*schema.FindById(id));
  return keys;
}

const char* ModeName(WriteMode mode) {
  switch (mode) {
    case WriteMode::kAppend:
      return "append";
    case WriteMode::kUpsert:
      return "upsert";
    case WriteMode::kDelete:
      return "delete";
  }
  return "write";
}

}  // namespace

Status ValidateUpsertPartitioning(const iceberg::Schema& schema,
                                  const iceberg::PartitionSpec& spec) {
  if (schema.identifier_field_ids.empty()) return Status::OK();
  for (const auto& pf : spec.fields) {
    bool in_key = false;
    for (int32_t id : schema.identifier_field_ids) in_key |= (id == pf.source_id);
    if (!in_key) {
      const Field* f = schema.FindById(pf.source_id);
      return Status::InvalidArgument(
          "partition field '" + pf.name + "' comes from column '" + (f ? f->name : "?") +
          "', which is not in the primary key: with a primary key, every partition column must "
          "be part of it (an upsert that moved a row to another partition would leave the old "
          "row alive)");
    }
  }
  return Status::OK();
}

Status ValidateWriteProperties(const iceberg::Schema& schema, const iceberg::PartitionSpec& spec,
                               const std::map<std::string, std::string>& properties) {
  FLOE_ASSIGN_OR_RAISE(auto metadata,
                       iceberg::NewTableMetadata(schema, spec, "file:///validate", properties));
  return iceberg::ConfigFromTableProperties(io::FileIO(), metadata, "validate").status();
}

Status WriteJsonFile(iceberg::Catalog& catalog, const iceberg::TableIdentifier& id,
                     const std::string& path, WriteMode mode, bool progress, WriteReport* report) {
  FLOE_ASSIGN_OR_RAISE(iceberg::LoadedTable table, catalog.LoadTable(id));
  const iceberg::Schema& schema = table.metadata.current_schema();
  auto input_schema = InputSchema(schema, mode);
  FLOE_ASSIGN_OR_RAISE(auto decoder, json::JsonLinesDecoder::Make(input_schema));
  FLOE_ASSIGN_OR_RAISE(uint64_t total_bytes, io::FileSize(path));
  // Small chunks keep the text, the columns decoded from it and the pages encoded from them in
  // the CPU's L2 cache from read() to Parquet (8 MiB chunks ran ~15% slower on the bench).
  constexpr size_t kChunkBytes = 256 << 10;
  FLOE_ASSIGN_OR_RAISE(auto reader, io::LineChunkReader::Open(path, kChunkBytes));
  // Unique per command run, so concurrent writers never collide on a file name.
  std::string prefix = "00000-0-" + RandomHex(8) + "-" + RandomHex(4) + "-" + RandomHex(12);
  FLOE_ASSIGN_OR_RAISE(
      auto config, iceberg::ConfigFromTableProperties(catalog.file_io(), table.metadata, prefix));
  FLOE_ASSIGN_OR_RAISE(auto writer, iceberg::DeltaWriter::Make(table.metadata, mode, config));

  ProgressLine line(ModeName(mode), progress);
  Status st;
  io::LineChunkReader::Chunk chunk;
  RecordBatch batch(input_schema);  // reused: its columns keep their capacity across chunks
  while (st.ok()) {
    auto more = reader->Next(&chunk);
    if (!more.ok()) {
      st = more.status();
      break;
    }
    if (!*more) break;
    batch.Truncate(0);
    st = decoder->DecodePadded(chunk.text, chunk.padding, path, chunk.first_line, &batch);
    if (!st.ok()) break;
    report->rows_read += static_cast<int64_t>(batch.num_rows());
    st = mode == WriteMode::kDelete ? writer->Delete(batch) : writer->Add(batch);
    ProgressCounts counts;
    counts.rows = report->rows_read;
    counts.bytes = static_cast<int64_t>(chunk.end_offset);
    counts.bytes_total = static_cast<int64_t>(total_bytes);
    line.Update(counts);
  }
  line.Done();
  // An empty file (or one of blank lines, or a byte-order mark alone) is refused by name rather
  // than committed as an empty snapshot.
  if (st.ok() && report->rows_read == 0) st = Status::InvalidArgument(path + " holds no rows");
  if (!st.ok()) {
    writer->Abandon();
    return st.WithContext("nothing was committed");
  }
  auto files = writer->Finish();
  if (!files.ok()) return files.status().WithContext("nothing was committed");
  iceberg::SnapshotChanges changes;
  changes.added_data_files = std::move(files->data_files);
  changes.added_delete_files = std::move(files->delete_files);
  report->data_files = static_cast<int64_t>(changes.added_data_files.size());
  report->delete_files = static_cast<int64_t>(changes.added_delete_files.size());
  for (const auto& f : changes.added_delete_files) report->delete_records += f.record_count;
  FLOE_ASSIGN_OR_RAISE(auto snapshot, iceberg::CommitSnapshot(catalog, id, changes));
  report->snapshot_id = snapshot.snapshot_id;
  return Status::OK();
}

Result<std::string> DescribeTable(const io::FileIO& file_io, const iceberg::LoadedTable& table) {
  using nlohmann::ordered_json;
  const auto& m = table.metadata;
  ordered_json out;
  out["table"] = table.id.ToString();
  out["location"] = m.location;
  out["metadata-location"] = table.metadata_location;
  out["format-version"] = m.format_version;
  out["table-uuid"] = m.table_uuid;
  const iceberg::Schema& schema = m.current_schema();
  ordered_json columns = ordered_json::array();
  for (const Field& f : schema.fields) {
    columns.push_back({{"id", f.field_id},
                       {"name", f.name},
                       {"type", iceberg::FlinkTypeName(f.type)},
                       {"iceberg-type", f.type.ToString()},
                       {"required", !f.nullable}});
  }
  out["schema"] = {{"schema-id", schema.schema_id}, {"columns", columns}};
  ordered_json key = ordered_json::array();
  for (int32_t id : schema.identifier_field_ids) key.push_back(schema.FindById(id)->name);
  out["primary-key"] = key;
  ordered_json spec = ordered_json::array();
  for (const auto& pf : m.default_spec().fields) {
    const Field* src = schema.FindById(pf.source_id);
    spec.push_back({{"name", pf.name},
                    {"transform", pf.transform.ToString()},
                    {"source", src ? src->name : "?"},
                    {"field-id", pf.field_id}});
  }
  out["partition-spec"] = {{"spec-id", m.default_spec_id}, {"fields", spec}};
  out["properties"] = m.properties;
  out["current-snapshot-id"] =
      m.current_snapshot_id ? ordered_json(*m.current_snapshot_id) : ordered_json(nullptr);
  ordered_json snapshots = ordered_json::array();
  for (const auto& s : m.snapshots) {
    snapshots.push_back(
        {{"snapshot-id", s.snapshot_id},
         {"parent-snapshot-id",
          s.parent_snapshot_id ? ordered_json(*s.parent_snapshot_id) : ordered_json(nullptr)},
         {"sequence-number", s.sequence_number},
         {"timestamp-ms", s.timestamp_ms},
         {"operation", s.operation()},
         {"summary", s.summary}});
  }
  out["snapshots"] = snapshots;
  // Live files of the current snapshot, counted from its manifests.
  int64_t data_files = 0, data_bytes = 0, delete_files = 0, delete_bytes = 0, records = 0;
  int64_t manifests = 0;
  if (const iceberg::Snapshot* current = m.current_snapshot()) {
    FLOE_ASSIGN_OR_RAISE(auto list, iceberg::ReadManifestList(file_io, current->manifest_list));
    manifests = static_cast<int64_t>(list.size());
    for (const auto& mf : list) {
      FLOE_ASSIGN_OR_RAISE(auto entries, iceberg::ReadManifest(file_io, mf, m));
      for (const auto& e : entries) {
        if (e.status == iceberg::EntryStatus::kDeleted) continue;
        if (e.data_file.content == iceberg::FileContent::kData) {
          ++data_files;
          data_bytes += e.data_file.file_size_in_bytes;
          records += e.data_file.record_count;
        } else {
          ++delete_files;
          delete_bytes += e.data_file.file_size_in_bytes;
        }
      }
    }
  }
  out["files"] = {{"manifests", manifests},       {"data-files", data_files},
                  {"data-bytes", data_bytes},     {"data-records", records},
                  {"delete-files", delete_files}, {"delete-bytes", delete_bytes}};
  return DumpJson(out, 2);
}

namespace {

std::string IsoMillis(int64_t ms) {
  return FormatTimestamp(ms * 1000, TimestampFormat{'T', false, YearStyle::kIso8601, true}) + "Z";
}

nlohmann::ordered_json OrNull(const std::map<std::string, std::string>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(it->second);
}

// A summary value that is a whole number; none when absent or not one.
std::optional<int64_t> SummaryInt(const std::map<std::string, std::string>& m,
                                  const std::string& k) {
  auto it = m.find(k);
  if (it == m.end()) return std::nullopt;
  const std::string& text = it->second;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// The current snapshot's live files (ADDED or EXISTING entries).
Result<std::vector<iceberg::DataFile>> LiveFiles(const io::FileIO& file_io,
                                                 const iceberg::TableMetadata& m) {
  std::vector<iceberg::DataFile> out;
  const iceberg::Snapshot* current = m.current_snapshot();
  if (current == nullptr) return out;
  FLOE_ASSIGN_OR_RAISE(std::vector<iceberg::ManifestFile> manifests,
                       iceberg::ReadManifestList(file_io, current->manifest_list));
  for (const iceberg::ManifestFile& mf : manifests) {
    FLOE_ASSIGN_OR_RAISE(std::vector<iceberg::ManifestEntry> entries,
                         iceberg::ReadManifest(file_io, mf, m));
    for (iceberg::ManifestEntry& e : entries) {
      if (e.status == iceberg::EntryStatus::kDeleted) continue;
      e.data_file.spec_id = mf.partition_spec_id;
      out.push_back(std::move(e.data_file));
    }
  }
  return out;
}

std::string PartitionText(const iceberg::TableMetadata& m, const iceberg::DataFile& f) {
  const iceberg::PartitionSpec* spec = m.FindSpec(f.spec_id);
  return spec == nullptr ? "" : spec->PartitionPath(m.current_schema(), f.partition);
}

// The `positions` view: every (sink, topic, partition) a scaled-out job's commits claimed.
Result<std::string> PositionRows(const iceberg::TableMetadata& m) {
  struct Row {
    std::optional<int64_t> next;            // the table's position
    const iceberg::Snapshot* by = nullptr;  // the newest commit that set it
  };
  std::map<std::pair<std::string, iceberg::SourcePartition>, Row> rows;
  for (const iceberg::Snapshot& s : m.snapshots) {  // oldest first
    auto sink = s.summary.find(iceberg::kSummarySinkId);
    auto offsets = s.summary.find(iceberg::kSummarySourceOffsets);
    if (sink == s.summary.end() || offsets == s.summary.end()) continue;
    Result<Json> tasks = ParseJson(offsets->second, JsonPath("snapshot summary"));
    if (!tasks.ok() || !tasks->is_object()) continue;
    for (auto it = tasks->begin(); it != tasks->end(); ++it) {
      // Positions of a job that is not scaled out have no claims: not listed.
      Result<std::vector<connectors::PartitionClaim>> claims =
          connectors::ClaimsFromJson(DumpJson(it.value()), "snapshot summary");
      if (!claims.ok()) continue;
      for (const connectors::PartitionClaim& c : *claims) {
        Row& row = rows[{sink->second, c.partition}];
        FLOE_ASSIGN_OR_RAISE(row.next,
                             iceberg::TablePartitionPosition(m, sink->second, c.partition));
        if (row.next && *row.next == c.next) row.by = &s;
      }
    }
  }
  std::string out;
  for (const auto& [key, row] : rows) {
    OrderedJson j;
    j["sink"] = key.first;
    j["topic"] = key.second.topic;
    j["partition"] = key.second.partition;
    j["next_offset"] = row.next ? OrderedJson(*row.next) : OrderedJson(nullptr);
    j["committed_by_job"] =
        row.by ? OrNull(row.by->summary, iceberg::kSummaryJobId) : OrderedJson(nullptr);
    j["committed_at"] =
        row.by ? OrderedJson(IsoMillis(row.by->timestamp_ms)) : OrderedJson(nullptr);
    j["snapshot_id"] = row.by ? OrderedJson(row.by->snapshot_id) : OrderedJson(nullptr);
    out += DumpJson(j) + "\n";
  }
  return out;
}

}  // namespace

Result<std::string> MetadataTableRows(const io::FileIO& file_io, const iceberg::LoadedTable& table,
                                      const std::string& view) {
  const iceberg::TableMetadata& m = table.metadata;
  using Json = OrderedJson;
  std::string out;
  auto emit = [&out](const Json& row) { out += DumpJson(row) + "\n"; };
  auto parent = [](const iceberg::Snapshot* s) {
    return s != nullptr && s->parent_snapshot_id ? Json(*s->parent_snapshot_id) : Json(nullptr);
  };
  if (view == "snapshots") {
    for (const iceberg::Snapshot& s : m.snapshots) {
      Json row;
      row["committed_at"] = IsoMillis(s.timestamp_ms);
      row["snapshot_id"] = s.snapshot_id;
      row["parent_id"] = parent(&s);
      row["operation"] = OrNull(s.summary, "operation");
      row["manifest_list"] = s.manifest_list;
      row["summary"] = Json(s.summary);
      row["floe_sink"] = OrNull(s.summary, iceberg::kSummarySinkId);
      row["floe_job"] = OrNull(s.summary, iceberg::kSummaryJobId);
      std::optional<int64_t> checkpoint = SummaryInt(s.summary, iceberg::kSummaryCheckpointId);
      row["floe_checkpoint"] = checkpoint ? Json(*checkpoint) : Json(nullptr);
      std::optional<int64_t> watermark = SummaryInt(s.summary, iceberg::kSummaryWatermark);
      row["floe_watermark"] = watermark ? Json(IsoMillis(*watermark)) : Json(nullptr);
      emit(row);
    }
    return out;
  }
  if (view == "history") {
    std::set<int64_t> ancestors;
    for (const iceberg::Snapshot* s = m.current_snapshot(); s != nullptr;
         s = s->parent_snapshot_id ? m.FindSnapshot(*s->parent_snapshot_id) : nullptr) {
      if (!ancestors.insert(s->snapshot_id).second) break;
    }
    for (const iceberg::SnapshotLogEntry& e : m.snapshot_log) {
      Json row;
      row["made_current_at"] = IsoMillis(e.timestamp_ms);
      row["snapshot_id"] = e.snapshot_id;
      row["parent_id"] = parent(m.FindSnapshot(e.snapshot_id));
      row["is_current_ancestor"] = ancestors.count(e.snapshot_id) > 0;
      emit(row);
    }
    return out;
  }
  if (view == "files" || view == "partitions") {
    FLOE_ASSIGN_OR_RAISE(std::vector<iceberg::DataFile> files, LiveFiles(file_io, m));
    if (view == "files") {
      for (const iceberg::DataFile& f : files) {
        Json row;
        row["content"] = static_cast<int>(f.content);
        row["file_path"] = f.file_path;
        row["file_format"] = f.file_format;
        row["spec_id"] = f.spec_id;
        row["partition"] = PartitionText(m, f);
        row["record_count"] = f.record_count;
        row["file_size_in_bytes"] = f.file_size_in_bytes;
        emit(row);
      }
      return out;
    }
    std::map<std::pair<int32_t, std::string>, Json> parts;
    for (const iceberg::DataFile& f : files) {
      Json& row = parts[{f.spec_id, PartitionText(m, f)}];
      if (row.is_null()) {
        row["partition"] = PartitionText(m, f);
        row["spec_id"] = f.spec_id;
        for (const char* k : {"record_count", "file_count", "total_data_file_size_in_bytes",
                              "position_delete_record_count", "position_delete_file_count",
                              "equality_delete_record_count", "equality_delete_file_count"}) {
          row[k] = 0;
        }
      }
      auto add = [&row](const char* k, int64_t v) { row[k] = row[k].get<int64_t>() + v; };
      switch (f.content) {
        case iceberg::FileContent::kData:
          add("record_count", f.record_count);
          add("file_count", 1);
          add("total_data_file_size_in_bytes", f.file_size_in_bytes);
          break;
        case iceberg::FileContent::kPositionDeletes:
          add("position_delete_record_count", f.record_count);
          add("position_delete_file_count", 1);
          break;
        case iceberg::FileContent::kEqualityDeletes:
          add("equality_delete_record_count", f.record_count);
          add("equality_delete_file_count", 1);
          break;
      }
    }
    for (const auto& [key, row] : parts) emit(row);
    return out;
  }
  if (view == "positions") return PositionRows(m);
  return Status::InvalidArgument("unknown metadata table '" + view +
                                 "' (snapshots, history, files, partitions, positions)");
}

}  // namespace floe::cli

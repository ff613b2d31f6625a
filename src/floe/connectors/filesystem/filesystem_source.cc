#include "floe/connectors/filesystem/filesystem_source.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>

#include "floe/common/json.h"
#include "floe/connectors/connector_options.h"
#include "floe/io/file.h"
#include "floe/io/location.h"
#include "floe/io/s3_client.h"
#include "floe/runtime/row_kind.h"

namespace floe::connectors {
namespace {

const std::vector<std::string> kFilesystemOptions = {"path",
                                                     "format",
                                                     "json.ignore-parse-errors",
                                                     "json.fail-on-missing-field",
                                                     "json.timestamp-format.standard",
                                                     "debezium-json.schema-include",
                                                     "debezium-json.ignore-parse-errors",
                                                     "debezium-json.timestamp-format.standard",
                                                     "source.monitor-interval"};

constexpr uint32_t kStateVersion = 1;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool IsDirectory(const std::string& path) {
  // ListDir succeeds only on directories.
  return io::ListDir(path).ok();
}

}  // namespace

std::string FilePosition::ToJson() const {
  Json j = {{"offset", offset}, {"line", line}};
  // File names are bytes: one that is not UTF-8 must still come back exactly.
  SetJsonBytes(j, "file", file);
  return DumpJson(j);
}

Result<FilePosition> FilePosition::FromJson(const std::string& json) {
  auto bad = [&](const Status& why) {
    return Status::InvalidArgument(
        "filesystem source position must look like {\"file\":\"/abs/path\",\"offset\":N,"
        "\"line\":L}, got " +
        json + " (" + why.message() + ")");
  };
  JsonPath at("position");
  Result<Json> j = ParseJson(json, at);
  if (!j.ok()) return bad(j.status());
  JsonObject f(*j, at);
  FilePosition p;
  Status st = f.RequiredBytes("file", &p.file);
  if (st.ok()) st = f.Required("offset", &p.offset);
  if (st.ok()) st = f.Required("line", &p.line);
  if (st.ok() && p.line < 1) st = f.Error("line", "must be at least 1");
  if (!st.ok()) return bad(st);
  return p;
}

Result<std::vector<std::string>> ListSourceFiles(const std::string& path) {
  std::string abs = io::AbsolutePath(path);
  if (!io::Exists(abs)) return Status::NotFound("filesystem source path does not exist: " + abs);
  if (!IsDirectory(abs)) return std::vector<std::string>{abs};
  FLOE_ASSIGN_OR_RAISE(std::vector<std::string> names, io::ListDir(abs));
  std::vector<std::string> files;
  for (const std::string& n : names) {
    if (n.empty() || n[0] == '.') continue;  // hidden and in-progress files
    if (!EndsWith(n, ".json") && !EndsWith(n, ".jsonl")) continue;
    std::string p = io::JoinPath(abs, n);
    if (IsDirectory(p)) continue;
    files.push_back(std::move(p));
  }
  std::sort(files.begin(), files.end());
  return files;
}

Result<FilesystemSourceConfig> MakeFilesystemSourceConfig(const TableDescriptor& table) {
  FLOE_RETURN_NOT_OK(CheckSupportedOptions(table, "filesystem", kFilesystemOptions));
  FilesystemSourceConfig config;
  auto path = table.options.find("path");
  if (path == table.options.end() || path->second.empty()) {
    return Status::InvalidArgument("table '" + table.name +
                                   "': the filesystem connector needs 'path' (a file or a "
                                   "directory of .json/.jsonl files)");
  }
  FLOE_ASSIGN_OR_RAISE(
      config.path, io::ResolveLocation(path->second, "table '" + table.name + "' option 'path'"));
  if (io::IsS3Uri(config.path)) {
    return Status::NotImplemented(OptionError(
        table, "path", "names object storage; the filesystem source reads local files so far",
        path->second));
  }
  std::string format = StringOption(table, "format", "");
  if (format != "json" && format != "debezium-json") {
    return Status::InvalidArgument(
        OptionError(table, "format",
                    "must be 'json' or 'debezium-json' (the formats floe reads so far)", format));
  }
  config.debezium = format == "debezium-json";
  // Each format's options belong to it (as Flink's prefixes say).
  const std::string other = config.debezium ? "json." : "debezium-json.";
  for (const auto& [key, value] : table.options) {
    if (key.rfind(other, 0) == 0) {
      return Status::InvalidArgument(OptionError(
          table, key, "applies to 'format' = '" + other.substr(0, other.size() - 1) + "' only",
          value));
    }
  }
  const std::string prefix = config.debezium ? "debezium-json." : "json.";
  FLOE_ASSIGN_OR_RAISE(config.ignore_parse_errors,
                       BoolOption(table, prefix + "ignore-parse-errors", false));
  FLOE_ASSIGN_OR_RAISE(config.debezium_schema_include,
                       BoolOption(table, "debezium-json.schema-include", false));
  // Validated only: the decoder takes both timestamp spellings whatever the standard is set to
  // (the Kafka source does the same).
  FLOE_RETURN_NOT_OK(TimestampStandardOption(table, prefix + "timestamp-format.standard").status());
  FLOE_ASSIGN_OR_RAISE(bool fail_on_missing,
                       BoolOption(table, "json.fail-on-missing-field", false));
  if (fail_on_missing) {
    return Status::InvalidArgument(OptionError(
        table, "json.fail-on-missing-field",
        "is not supported yet (a missing nullable field is null; a missing NOT NULL field is an "
        "error)",
        "true"));
  }
  if (table.options.count("source.monitor-interval") != 0) {
    return Status::InvalidArgument(OptionError(
        table, "source.monitor-interval",
        "is not supported yet (the filesystem source is bounded: it reads the files present "
        "when the job starts)",
        table.options.at("source.monitor-interval")));
  }
  if (!io::Exists(config.path)) {
    return Status::InvalidArgument(
        OptionError(table, "path", "must name an existing file or directory", config.path));
  }
  if (table.schema == nullptr || table.schema->fields.empty()) {
    return Status::InvalidArgument("table '" + table.name + "' declares no columns");
  }
  config.schema = table.schema;
  // Fails early on a schema the decoder cannot handle.
  FLOE_ASSIGN_OR_RAISE(auto decoder, json::JsonLinesDecoder::Make(config.schema));
  (void)decoder;
  return config;
}

FilesystemSource::FilesystemSource(FilesystemSourceConfig config,
                                   std::shared_ptr<runtime::SourcePositionBoard> positions)
    : config_(std::move(config)),
      start_("filesystem source", "the first file", kStateVersion, kStateVersion,
             std::move(positions)) {}

Status FilesystemSource::Open(const runtime::OperatorContext& ctx) {
  start_.SetTask(ctx.task.name());
  if (ctx.task.parallelism != 1) {
    return Status::InvalidArgument("the filesystem source runs with parallelism 1, got " +
                                   std::to_string(ctx.task.parallelism));
  }
  json::DecodeOptions options;
  options.ignore_parse_errors = config_.ignore_parse_errors;
  if (config_.debezium) {
    DebeziumJsonOptions debezium;
    debezium.schema_include = config_.debezium_schema_include;
    debezium.ignore_parse_errors = config_.ignore_parse_errors;
    FLOE_ASSIGN_OR_RAISE(debezium_, DebeziumJsonDecoder::Make(config_.schema, debezium));
  } else {
    FLOE_ASSIGN_OR_RAISE(decoder_, json::JsonLinesDecoder::Make(config_.schema, options));
  }
  FLOE_ASSIGN_OR_RAISE(files_, ListSourceFiles(config_.path));
  return Status::OK();
}

Status FilesystemSource::Restore(runtime::StateReader& state) {
  FLOE_RETURN_NOT_OK(start_.BeginRestore(state).status());
  FLOE_ASSIGN_OR_RAISE(position_.file, state.GetString());
  FLOE_ASSIGN_OR_RAISE(position_.offset, state.GetU64());
  FLOE_ASSIGN_OR_RAISE(position_.line, state.GetI64());
  return state.ExpectEnd();
}

Status FilesystemSource::EnsureStarted() {
  if (started_) return Status::OK();
  started_ = true;
  SourceStart::Start start = start_.Resolve();
  if (start.origin == StartOrigin::kTable) {
    FLOE_ASSIGN_OR_RAISE(position_, FilePosition::FromJson(start.table_position));
  }
  if (start.origin == StartOrigin::kStartupMode) {
    file_index_ = 0;
    position_ = FilePosition{files_.empty() ? config_.path : files_[0], 0, 1};
  } else {
    // Files sort by name: everything before the position's file is done. If that file is gone,
    // continue with the next one in order.
    auto it = std::lower_bound(files_.begin(), files_.end(), position_.file);
    file_index_ = static_cast<size_t>(it - files_.begin());
    if (it != files_.end() && *it != position_.file) position_ = FilePosition{*it, 0, 1};
  }
  start_.LogStart(start, position_.ToJson());
  return Status::OK();
}

Result<runtime::SourceStatus> FilesystemSource::Poll(runtime::Collector& out) {
  FLOE_RETURN_NOT_OK(EnsureStarted());
  while (file_index_ < files_.size()) {
    if (reader_ == nullptr) {
      const std::string& file = files_[file_index_];
      uint64_t offset = position_.file == file ? position_.offset : 0;
      int64_t line = position_.file == file ? position_.line : 1;
      FLOE_ASSIGN_OR_RAISE(reader_,
                           io::LineChunkReader::Open(file, config_.chunk_bytes, offset, line));
      position_ = FilePosition{file, offset, line};
    }
    io::LineChunkReader::Chunk chunk;
    FLOE_ASSIGN_OR_RAISE(bool more, reader_->Next(&chunk));
    if (!more) {
      reader_.reset();
      if (file_index_ + 1 < files_.size()) position_ = FilePosition{files_[file_index_ + 1], 0, 1};
      ++file_index_;
      continue;
    }
    RecordBatch batch(config_.debezium ? runtime::WithRowKindColumn(*config_.schema)
                                       : config_.schema);
    if (config_.debezium) {
      FLOE_RETURN_NOT_OK(DecodeChanges(chunk.text, chunk.first_line, &batch));
    } else {
      FLOE_RETURN_NOT_OK(decoder_->Decode(chunk.text, position_.file, chunk.first_line, &batch));
    }
    int64_t newlines = std::count(chunk.text.begin(), chunk.text.end(), '\n');
    position_.offset = chunk.end_offset;
    position_.line = chunk.first_line + newlines;
    if (batch.num_rows() > 0) FLOE_RETURN_NOT_OK(out.Emit(std::move(batch)));
    return runtime::SourceStatus::kMore;
  }
  return runtime::SourceStatus::kEnd;
}

// Each non-blank line of `text` (whose first line is `first_line`) one change event: its rows,
// and their kinds as the last column of *out.
Status FilesystemSource::DecodeChanges(std::string_view text, int64_t first_line,
                                       RecordBatch* out) {
  RecordBatch rows(config_.schema);
  Column kinds(DataType::String());
  int64_t line = first_line;
  for (size_t at = 0; at < text.size(); ++line) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view event = text.substr(at, end - at);
    at = end + 1;
    if (event.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    Status st = debezium_->Decode(event, &rows, &kinds);
    if (!st.ok()) {
      return Status(st.code(), position_.file + ":" + std::to_string(line) + ": " + st.message());
    }
  }
  const size_t n = rows.num_columns();
  for (size_t c = 0; c < n; ++c) out->mutable_column(c) = std::move(rows.mutable_column(c));
  out->mutable_column(n) = std::move(kinds);
  return Status::OK();
}

Status FilesystemSource::SnapshotPosition(runtime::CheckpointId id, runtime::StateWriter& state) {
  FLOE_RETURN_NOT_OK(EnsureStarted());
  start_.BeginSnapshot(state);
  state.PutString(position_.file);
  state.PutU64(position_.offset);
  state.PutI64(position_.line);
  start_.Record(id, position_.ToJson());
  return Status::OK();
}

bool IsFilesystemChangelogSource(const TableDescriptor& table) {
  auto format = table.options.find("format");
  return format != table.options.end() && format->second == "debezium-json";
}

Result<runtime::VertexId> AddFilesystemSource(runtime::JobGraph& graph, const std::string& name,
                                              const TableDescriptor& table,
                                              const JobContext& context) {
  FLOE_ASSIGN_OR_RAISE(FilesystemSourceConfig config, MakeFilesystemSourceConfig(table));
  return AddSourceVertex<FilesystemSource>(graph, name, 1, std::move(config), context.positions);
}

Connector FilesystemConnector() {
  Connector c;
  c.name = "filesystem";
  c.options = kFilesystemOptions;
  c.identity_options = {"path"};
  c.emits_changelog = IsFilesystemChangelogSource;
  c.add_source = [](const SourceRequest& r) {
    return AddFilesystemSource(*r.graph, r.vertex_name, *r.table, *r.context);
  };
  return c;
}

}  // namespace floe::connectors

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

// State blob versions: 1 = one file position (file, offset, line), parallelism 1 (read only);
// 2 = the split layout and the cursors of the subtask's stripes.
constexpr uint32_t kStateVersion = 2;

// The line number a reader that did not start at a file's first byte counts from: never 1 (the
// decoder skips a byte-order mark on line 1), and far from every real line number. An error then
// counts the file's lines before its chunk (DecodeChunk).
constexpr int64_t kUnknownLine = -(int64_t{1} << 62);

// FNV-1a: a hash that stays the same across builds and machines (stripes are in checkpoints).
uint64_t StableHash(std::string_view bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool IsDirectory(const std::string& path) {
  // ListDir succeeds only on directories.
  return io::ListDir(path).ok();
}

}  // namespace

uint32_t SplitLayout::StripeOf(std::string_view file, uint64_t split) const {
  return static_cast<uint32_t>((StableHash(file) + split) % stripes);
}

FilePosition FilePosition::AtByte(const SplitLayout& layout, const std::string& file,
                                  uint64_t offset) {
  FilePosition p;
  p.layout = layout;
  // The line at `offset` starts in split n; the other stripes' splits up to n are done.
  const uint64_t n = offset / layout.split_bytes;
  const uint32_t owner = layout.StripeOf(file, n);
  for (uint32_t s = 0; s < layout.stripes; ++s) {
    p.cursors[s] = s == owner ? StripeCursor{file, n, offset} : StripeCursor{file, n + 1, 0};
  }
  return p;
}

std::string FilePosition::ToJson() const {
  std::map<std::string, Json> by_file;
  for (const auto& [stripe, c] : cursors) {
    by_file[c.file].push_back(Json::array({stripe, c.split, c.offset}));
  }
  Json files = Json::array();
  for (auto& [file, list] : by_file) {
    Json f = {{"cursors", std::move(list)}};
    // File names are bytes: one that is not UTF-8 must still come back exactly.
    SetJsonBytes(f, "file", file);
    files.push_back(std::move(f));
  }
  Json j = {{"split_bytes", layout.split_bytes},
            {"stripes", layout.stripes},
            {"files", std::move(files)}};
  return DumpJson(j);
}

Result<FilePosition> FilePosition::FromJson(const std::string& json, const SplitLayout& layout) {
  auto bad = [&](const Status& why) {
    return Status::InvalidArgument(
        "filesystem source position must look like {\"split_bytes\":S,\"stripes\":K,\"files\":"
        "[{\"file\":\"/abs/path\",\"cursors\":[[stripe,split,offset]]}]} (or "
        "{\"file\":\"/abs/path\",\"offset\":N,\"line\":L}), got " +
        json + " (" + why.message() + ")");
  };
  JsonPath at("position");
  Result<Json> j = ParseJson(json, at);
  if (!j.ok()) return bad(j.status());
  JsonObject top(*j, at);
  if (top.Has("offset")) {  // one reader's byte, as written before stripes
    std::string file;
    uint64_t offset = 0;
    int64_t line = 0;
    Status st = top.RequiredBytes("file", &file);
    if (st.ok()) st = top.Required("offset", &offset);
    if (st.ok()) st = top.Required("line", &line);
    if (st.ok() && line < 1) st = top.Error("line", "must be at least 1");
    if (!st.ok()) return bad(st);
    return AtByte(layout, file, offset);
  }
  FilePosition p;
  const Json* files = nullptr;
  Status st = top.Required("split_bytes", &p.layout.split_bytes);
  if (st.ok()) st = top.Required("stripes", &p.layout.stripes);
  if (st.ok() && (p.layout.split_bytes < 1 || p.layout.stripes < 1)) {
    st = top.Error("split_bytes", "split_bytes and stripes must be at least 1");
  }
  if (st.ok()) st = top.RequiredArray("files", &files);
  for (size_t i = 0; st.ok() && i < files->size(); ++i) {
    JsonObject f((*files)[i], at.Child("files").Index(i));
    std::string file;
    std::vector<std::vector<uint64_t>> list;
    st = f.RequiredBytes("file", &file);
    if (st.ok()) st = f.Required("cursors", &list);
    for (size_t c = 0; st.ok() && c < list.size(); ++c) {
      if (list[c].size() != 3 || list[c][0] >= p.layout.stripes) {
        st = f.Error("cursors", "each must be [stripe below 'stripes', split, offset]");
      } else if (!p.cursors
                      .try_emplace(static_cast<uint32_t>(list[c][0]),
                                   StripeCursor{file, list[c][1], list[c][2]})
                      .second) {
        st = f.Error("cursors", "stripe " + std::to_string(list[c][0]) + " appears twice");
      }
    }
  }
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

namespace {

// Reads a blob of any version in [1, kStateVersion]; `fresh` is the layout a version-1 blob's
// single position is cut by.
Result<FilePosition> ReadFilePosition(SourceStart& start, runtime::StateReader& state,
                                      const SplitLayout& fresh) {
  FLOE_ASSIGN_OR_RAISE(uint32_t version, start.BeginRestore(state));
  if (version == 1) {
    FLOE_ASSIGN_OR_RAISE(std::string file, state.GetString());
    FLOE_ASSIGN_OR_RAISE(uint64_t offset, state.GetU64());
    FLOE_RETURN_NOT_OK(state.GetI64().status());  // its line number
    FLOE_RETURN_NOT_OK(state.ExpectEnd());
    return FilePosition::AtByte(fresh, file, offset);
  }
  FilePosition p;
  FLOE_ASSIGN_OR_RAISE(p.layout.split_bytes, state.GetU64());
  FLOE_ASSIGN_OR_RAISE(p.layout.stripes, state.GetU32());
  FLOE_ASSIGN_OR_RAISE(uint32_t n, state.GetU32());
  if (p.layout.split_bytes < 1 || p.layout.stripes < 1 || n > p.layout.stripes) {
    return Status::Corruption("filesystem source state: a bad split layout");
  }
  for (uint32_t i = 0; i < n; ++i) {
    FLOE_ASSIGN_OR_RAISE(uint32_t stripe, state.GetU32());
    StripeCursor c;
    FLOE_ASSIGN_OR_RAISE(c.file, state.GetString());
    FLOE_ASSIGN_OR_RAISE(c.split, state.GetU64());
    FLOE_ASSIGN_OR_RAISE(c.offset, state.GetU64());
    if (stripe >= p.layout.stripes || !p.cursors.emplace(stripe, std::move(c)).second) {
      return Status::Corruption("filesystem source state: stripe " + std::to_string(stripe) +
                                " is out of range or appears twice");
    }
  }
  FLOE_RETURN_NOT_OK(state.ExpectEnd());
  return p;
}

// The union of the old subtasks' positions: one layout, each stripe's cursor from the subtask
// that read it.
Result<FilePosition> MergeFilePositions(const std::vector<FilePosition>& parts) {
  FilePosition out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i == 0) out.layout = parts[i].layout;
    if (!(parts[i].layout == out.layout)) {
      return Status::Corruption(
          "old subtask " + std::to_string(i) + " cut the files into " +
          std::to_string(parts[i].layout.stripes) + " stripes of " +
          std::to_string(parts[i].layout.split_bytes) + "-byte splits, old subtask 0 into " +
          std::to_string(out.layout.stripes) + " of " + std::to_string(out.layout.split_bytes));
    }
    for (const auto& [stripe, cursor] : parts[i].cursors) {
      auto [it, fresh] = out.cursors.try_emplace(stripe, cursor);
      if (!fresh && !(it->second == cursor)) {
        return Status::Corruption("stripe " + std::to_string(stripe) +
                                  " has two positions: old subtasks disagree");
      }
    }
  }
  return out;
}

}  // namespace

FilesystemSource::FilesystemSource(FilesystemSourceConfig config,
                                   std::shared_ptr<runtime::SourcePositionBoard> positions)
    : config_(std::move(config)),
      start_("filesystem source", "the first file", kStateVersion, 1, std::move(positions)),
      layout_(config_.layout) {}

Status FilesystemSource::Open(const runtime::OperatorContext& ctx) {
  start_.SetTask(ctx.task.name());
  subtask_ = ctx.task.subtask.value;
  parallelism_ = std::max<uint32_t>(1, ctx.task.parallelism);
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
  sizes_.clear();
  for (const std::string& file : files_) {
    FLOE_ASSIGN_OR_RAISE(uint64_t size, io::FileSize(file));
    sizes_.push_back(size);
  }
  return Status::OK();
}

Status FilesystemSource::Restore(runtime::StateReader& state) {
  FLOE_ASSIGN_OR_RAISE(restored_, ReadFilePosition(start_, state, config_.layout));
  return Status::OK();
}

Status FilesystemSource::RestoreRescaled(const std::vector<std::string>& states) {
  const std::string where = "filesystem source '" + start_.task() + "': the restored checkpoint";
  std::vector<FilePosition> old;
  for (size_t i = 0; i < states.size(); ++i) {
    if (states[i].empty()) continue;
    runtime::StateReader reader(states[i]);
    Result<FilePosition> p = ReadFilePosition(start_, reader, config_.layout);
    if (!p.ok()) return p.status().WithContext(where + ", old subtask " + std::to_string(i));
    old.push_back(std::move(*p));
  }
  if (old.empty()) return Status::OK();  // nothing read yet: a fresh start
  Result<FilePosition> merged = MergeFilePositions(old);
  if (!merged.ok()) return merged.status().WithContext(where);
  restored_ = std::move(*merged);
  return Status::OK();
}

Result<FilePosition> FilesystemSource::TablePosition(const SourceStart::Start& from) const {
  const std::string where =
      "filesystem source '" + start_.task() + "': the table's positions (floe.source-offsets)";
  std::vector<std::string> jsons = from.table_positions;
  if (jsons.empty()) jsons.push_back(from.table_position);
  std::vector<FilePosition> old;
  for (const std::string& json : jsons) {
    Result<FilePosition> p = FilePosition::FromJson(json, config_.layout);
    if (!p.ok()) return p.status().WithContext(where);
    old.push_back(std::move(*p));
  }
  Result<FilePosition> merged = MergeFilePositions(old);
  if (!merged.ok()) return merged.status().WithContext(where);
  return merged;
}

// Splits of this subtask's stripes that `done` does not cover, in (file, split) order.
void FilesystemSource::PlanSplits(const FilePosition& done) {
  pending_.clear();
  next_ = 0;
  const uint64_t bytes = layout_.split_bytes;
  for (uint32_t f = 0; f < files_.size(); ++f) {
    const uint64_t splits = (sizes_[f] + bytes - 1) / bytes;
    for (uint64_t n = 0; n < splits; ++n) {
      const uint32_t stripe = layout_.StripeOf(files_[f], n);
      if (stripe % parallelism_ != subtask_) continue;
      const uint64_t begin = n * bytes;
      const uint64_t end = std::min(begin + bytes, sizes_[f]);
      uint64_t from = begin;
      auto c = done.cursors.find(stripe);
      if (c != done.cursors.end()) {
        const StripeCursor& at = c->second;
        if (files_[f] < at.file || (files_[f] == at.file && n < at.split)) continue;
        if (files_[f] == at.file && n == at.split) from = std::max(begin, at.offset);
      }
      if (from < end) pending_.push_back(PendingSplit{f, n, from, end});
    }
  }
}

FilePosition FilesystemSource::position() const {
  FilePosition p;
  p.layout = layout_;
  for (size_t i = next_; i < pending_.size(); ++i) {
    const PendingSplit& split = pending_[i];
    const std::string& file = files_[split.file];
    p.cursors.try_emplace(layout_.StripeOf(file, split.split),
                          StripeCursor{file, split.split, split.from});
  }
  // A stripe with nothing left points past the last split of the last file.
  StripeCursor done;
  if (!files_.empty()) {
    done = StripeCursor{files_.back(),
                        (sizes_.back() + layout_.split_bytes - 1) / layout_.split_bytes, 0};
  }
  for (uint32_t s = subtask_; s < layout_.stripes; s += parallelism_)
    p.cursors.try_emplace(s, done);
  return p;
}

Status FilesystemSource::EnsureStarted() {
  if (started_) return Status::OK();
  started_ = true;
  SourceStart::Start start = start_.Resolve();
  FilePosition done;
  done.layout = config_.layout;
  if (start.origin == StartOrigin::kTable) {
    FLOE_ASSIGN_OR_RAISE(done, TablePosition(start));
  } else if (start.origin == StartOrigin::kCheckpoint && restored_.has_value()) {
    done = *restored_;
  }
  layout_ = done.layout;
  PlanSplits(done);
  std::string at = "the end (nothing left to read)";
  if (!pending_.empty()) {
    at = "byte " + std::to_string(pending_[0].from) + " of " + files_[pending_[0].file] + " (" +
         std::to_string(pending_.size()) + " splits to read)";
  }
  start_.LogStart(start, at);
  return Status::OK();
}

Result<runtime::SourceStatus> FilesystemSource::Poll(runtime::Collector& out) {
  FLOE_RETURN_NOT_OK(EnsureStarted());
  while (next_ < pending_.size()) {
    PendingSplit& split = pending_[next_];
    const std::string& file = files_[split.file];
    if (reader_ == nullptr) {
      // A split holds the lines that start in it: one that began in the split before is its.
      FLOE_ASSIGN_OR_RAISE(split.from, io::NextLineStart(file, split.from));
      line_known_ = split.from == 0;
      FLOE_ASSIGN_OR_RAISE(reader_,
                           io::LineChunkReader::Open(file, config_.chunk_bytes, split.from,
                                                     line_known_ ? 1 : kUnknownLine, split.end));
    }
    io::LineChunkReader::Chunk chunk;
    FLOE_ASSIGN_OR_RAISE(bool more, reader_->Next(&chunk));
    if (!more) {
      reader_.reset();
      ++next_;
      continue;
    }
    RecordBatch batch(config_.debezium ? runtime::WithRowKindColumn(*config_.schema)
                                       : config_.schema);
    FLOE_RETURN_NOT_OK(DecodeChunk(chunk, file, &batch));
    split.from = chunk.end_offset;
    if (batch.num_rows() > 0) FLOE_RETURN_NOT_OK(out.Emit(std::move(batch)));
    return runtime::SourceStatus::kMore;
  }
  return runtime::SourceStatus::kEnd;
}

Status FilesystemSource::DecodeChunk(const io::LineChunkReader::Chunk& chunk,
                                     const std::string& file, RecordBatch* out) {
  auto decode = [&](int64_t first_line, RecordBatch* into) {
    // The reader's padding lets the parser read past the chunk without a copy.
    return config_.debezium
               ? DecodeChanges(chunk.text, file, first_line, into)
               : decoder_->DecodePadded(chunk.text, chunk.padding, file, first_line, into);
  };
  Status st = decode(chunk.first_line, out);
  if (st.ok() || line_known_) return st;
  // The message names a line: count the lines before the chunk and decode it again for it.
  FLOE_ASSIGN_OR_RAISE(int64_t before, io::CountNewlinesBefore(file, chunk.begin_offset));
  RecordBatch again(out->schema());
  Status named = decode(before + 1, &again);
  return named.ok() ? st : named;
}

// Each non-blank line of `text` (whose first line is `first_line`) one change event: its rows,
// and their kinds as the last column of *out.
Status FilesystemSource::DecodeChanges(std::string_view text, const std::string& file,
                                       int64_t first_line, RecordBatch* out) {
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
    if (!st.ok()) return Status(st.code(), file + ":" + std::to_string(line) + ": " + st.message());
  }
  const size_t n = rows.num_columns();
  for (size_t c = 0; c < n; ++c) out->mutable_column(c) = std::move(rows.mutable_column(c));
  out->mutable_column(n) = std::move(kinds);
  return Status::OK();
}

Status FilesystemSource::SnapshotPosition(runtime::CheckpointId id, runtime::StateWriter& state) {
  FLOE_RETURN_NOT_OK(EnsureStarted());
  const FilePosition p = position();
  start_.BeginSnapshot(state);
  state.PutU64(p.layout.split_bytes);
  state.PutU32(p.layout.stripes);
  state.PutU32(static_cast<uint32_t>(p.cursors.size()));
  for (const auto& [stripe, c] : p.cursors) {
    state.PutU32(stripe);
    state.PutString(c.file);
    state.PutU64(c.split);
    state.PutU64(c.offset);
  }
  start_.Record(id, p.ToJson());
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
  return AddSourceVertex<FilesystemSource>(graph, name, context.default_parallelism,
                                           std::move(config), context.positions);
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

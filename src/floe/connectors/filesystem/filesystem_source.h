#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/connectors/connector.h"
#include "floe/connectors/debezium_json.h"
#include "floe/connectors/registry.h"
#include "floe/connectors/source_start.h"
#include "floe/format/json/json_lines.h"
#include "floe/io/line_reader.h"
#include "floe/runtime/job_graph.h"
#include "floe/runtime/operator.h"
#include "floe/runtime/source_positions.h"

namespace floe::connectors {

// Settings of a 'connector' = 'filesystem' table ('format' = 'json' or 'debezium-json').
struct FilesystemSourceConfig {
  std::string path;  // 'path': a file, or a directory whose *.json / *.jsonl files are read
  bool ignore_parse_errors = false;  // 'json.ignore-parse-errors' / 'debezium-json.ignore-...'
  // 'format' = 'debezium-json': each line a Debezium change event; the rows carry their kind
  // in the row-kind column (runtime/row_kind.h), a changelog.
  bool debezium = false;
  bool debezium_schema_include = false;  // 'debezium-json.schema-include'
  size_t chunk_bytes = 1 << 20;  // bytes read per Poll (whole lines; a longer line grows it)
  std::shared_ptr<const BatchSchema> schema;  // the declared table
};

// Validates the options (path required and existing, format json or debezium-json, unknown
// options refused).
Result<FilesystemSourceConfig> MakeFilesystemSourceConfig(const TableDescriptor& table);

// Whether the table is read as a changelog ('format' = 'debezium-json').
bool IsFilesystemChangelogSource(const TableDescriptor& table);

// Where a filesystem source is: the next byte to read of `file` (absolute path) and that
// byte's 1-based line number. Files are read in name order; a position in file F means every
// file before F is done. After the last file the position stays at its end.
struct FilePosition {
  std::string file;
  uint64_t offset = 0;
  int64_t line = 1;
  bool operator==(const FilePosition&) const = default;
  // {"file":"/abs/path","offset":N,"line":L}
  std::string ToJson() const;
  static Result<FilePosition> FromJson(const std::string& json);
};

// The files a filesystem source reads, absolute and sorted: `path` itself, or the *.json and
// *.jsonl files directly inside the directory `path` (sorted by name). NotFound if missing.
Result<std::vector<std::string>> ListSourceFiles(const std::string& path);

// FilesystemSource is a bounded JSON-lines source: it reads the files in chunks that end on
// line boundaries (io::LineChunkReader) and decodes each chunk into one batch
// (json::JsonLinesDecoder). Position = FilePosition after the last emitted chunk, kept in the
// state blob and recorded on the position board; a restore resumes at that byte. A start
// override on the board (the table is ahead) beats the restored state. A line that does not
// decode fails Poll with "file:line: field ...", so the job fails before any later checkpoint
// (nothing past the bad line is committed), unless 'json.ignore-parse-errors' skips it. With
// 'debezium-json' each line is one change event (DebeziumJsonDecoder) and the batch carries the
// row-kind column after the table's columns.
// Parallelism 1. Single-threaded, like every operator.
class FilesystemSource final : public runtime::SourceOperator {
 public:
  FilesystemSource(FilesystemSourceConfig config,
                   std::shared_ptr<runtime::SourcePositionBoard> positions);

  Status Open(const runtime::OperatorContext& ctx) override;
  Status Restore(runtime::StateReader& state) override;
  Result<runtime::SourceStatus> Poll(runtime::Collector& out) override;
  Status SnapshotPosition(runtime::CheckpointId id, runtime::StateWriter& state) override;

  const FilePosition& position() const { return position_; }

 private:
  Status EnsureStarted();

  FilesystemSourceConfig config_;
  SourceStart start_;
  std::unique_ptr<json::JsonLinesDecoder> decoder_;
  std::unique_ptr<DebeziumJsonDecoder> debezium_;  // 'format' = 'debezium-json'
  Status DecodeChanges(std::string_view text, int64_t first_line, RecordBatch* out);
  std::vector<std::string> files_;
  size_t file_index_ = 0;  // files_[file_index_] is being read (== size(): done)
  std::unique_ptr<io::LineChunkReader> reader_;
  FilePosition position_;
  bool started_ = false;
};

// Adds the filesystem source vertex `name` (parallelism 1) for `table` to `graph`.
Result<runtime::VertexId> AddFilesystemSource(runtime::JobGraph& graph, const std::string& name,
                                              const TableDescriptor& table,
                                              const JobContext& context);

// 'connector' = 'filesystem' for the registry.
Connector FilesystemConnector();

}  // namespace floe::connectors

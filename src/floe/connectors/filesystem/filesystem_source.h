#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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

// How a filesystem source shares its files among its subtasks. Each file is cut into splits of
// `split_bytes`; a split holds the lines that start in its byte range. Split n of file F belongs
// to stripe (hash(F) + n) % `stripes`, and subtask i of P reads the stripes s with s % P == i,
// all of its splits in (file name, split) order, so the subtasks move through the files side by
// side (their watermarks stay close). The layout is kept in the state: a restore at another
// parallelism hands the same stripes to other subtasks.
struct SplitLayout {
  uint64_t split_bytes = 4 << 20;
  uint32_t stripes = 128;  // the most subtasks that get work
  bool operator==(const SplitLayout&) const = default;
  uint32_t StripeOf(std::string_view file, uint64_t split) const;
};

// Settings of a 'connector' = 'filesystem' table ('format' = 'json' or 'debezium-json').
struct FilesystemSourceConfig {
  std::string path;  // 'path': a file, or a directory whose *.json / *.jsonl files are read
  bool ignore_parse_errors = false;  // 'json.ignore-parse-errors' / 'debezium-json.ignore-...'
  // 'format' = 'debezium-json': each line a Debezium change event; the rows carry their kind
  // in the row-kind column (runtime/row_kind.h), a changelog.
  bool debezium = false;
  bool debezium_schema_include = false;  // 'debezium-json.schema-include'
  size_t chunk_bytes = 1 << 20;  // bytes read per Poll (whole lines; a longer line grows it)
  SplitLayout layout;            // for a fresh start; a restored position brings its own
  std::shared_ptr<const BatchSchema> schema;  // the declared table
};

// Validates the options (path required and existing, format json or debezium-json, unknown
// options refused).
Result<FilesystemSourceConfig> MakeFilesystemSourceConfig(const TableDescriptor& table);

// Whether the table is read as a changelog ('format' = 'debezium-json').
bool IsFilesystemChangelogSource(const TableDescriptor& table);

// Where one stripe is: its splits before split `split` of `file` (in file name, then split
// order) are done, and that split is read up to byte `offset` (nothing of it when `offset` is at
// or before its first byte). A stripe that is done points past the last file's last split.
struct StripeCursor {
  std::string file;
  uint64_t split = 0;
  uint64_t offset = 0;
  bool operator==(const StripeCursor&) const = default;
};

// Where a filesystem source subtask is: the cursors of its stripes. The state blob and the JSON
// on the position board (which the Iceberg sink commits) hold it; the JSON is
// {"split_bytes":S,"stripes":K,"files":[{"file":"/abs/path","cursors":[[stripe,split,offset],..]}]}.
// The single-file form of earlier releases, {"file":"/abs/path","offset":N,"line":L} (one
// subtask: every file before it done, that file read up to byte N), is still read.
struct FilePosition {
  SplitLayout layout;
  std::map<uint32_t, StripeCursor> cursors;  // by stripe
  bool operator==(const FilePosition&) const = default;
  std::string ToJson() const;
  static Result<FilePosition> FromJson(const std::string& json, const SplitLayout& layout);
  // The position of one reader that is at byte `offset` of `file` (the earlier releases' form):
  // every stripe's cursor under `layout`.
  static FilePosition AtByte(const SplitLayout& layout, const std::string& file, uint64_t offset);
};

// The files a filesystem source reads, absolute and sorted: `path` itself, or the *.json and
// *.jsonl files directly inside the directory `path` (sorted by name). NotFound if missing.
Result<std::vector<std::string>> ListSourceFiles(const std::string& path);

// FilesystemSource is a bounded JSON-lines source: it reads its splits (SplitLayout) in chunks
// that end on line boundaries (io::LineChunkReader) and decodes each chunk into one batch
// (json::JsonLinesDecoder). Its position (FilePosition) is in the state blob and recorded on the
// position board; a restore resumes at that byte of each stripe, at any parallelism. A start
// override on the board (the table is ahead) beats the restored state. A line that does not
// decode fails Poll with "file:line: field ...", so the job fails before any later checkpoint
// (nothing past the bad line is committed), unless 'json.ignore-parse-errors' skips it. With
// 'debezium-json' each line is one change event (DebeziumJsonDecoder) and the batch carries the
// row-kind column after the table's columns. Single-threaded, like every operator.
class FilesystemSource final : public runtime::SourceOperator {
 public:
  FilesystemSource(FilesystemSourceConfig config,
                   std::shared_ptr<runtime::SourcePositionBoard> positions);

  Status Open(const runtime::OperatorContext& ctx) override;
  Status Restore(runtime::StateReader& state) override;
  Status RestoreRescaled(const std::vector<std::string>& states) override;
  Result<runtime::SourceStatus> Poll(runtime::Collector& out) override;
  Status SnapshotPosition(runtime::CheckpointId id, runtime::StateWriter& state) override;

  // The cursors of this subtask's stripes now.
  FilePosition position() const;

 private:
  // A split still to read: lines starting in [from, end) of files_[file].
  struct PendingSplit {
    uint32_t file;
    uint64_t split;
    uint64_t from;
    uint64_t end;
  };
  Status EnsureStarted();
  Result<FilePosition> TablePosition(const SourceStart::Start& from) const;
  void PlanSplits(const FilePosition& done);
  Status DecodeChunk(const io::LineChunkReader::Chunk& chunk, const std::string& file,
                     RecordBatch* out);
  Status DecodeChanges(std::string_view text, const std::string& file, int64_t first_line,
                       RecordBatch* out);

  FilesystemSourceConfig config_;
  SourceStart start_;
  std::unique_ptr<json::JsonLinesDecoder> decoder_;
  std::unique_ptr<DebeziumJsonDecoder> debezium_;  // 'format' = 'debezium-json'
  uint32_t subtask_ = 0;
  uint32_t parallelism_ = 1;
  SplitLayout layout_;  // the restored position's, else config_'s
  std::vector<std::string> files_;
  std::vector<uint64_t> sizes_;  // of files_, when the source started
  std::optional<FilePosition> restored_;
  std::vector<PendingSplit> pending_;
  size_t next_ = 0;  // pending_[next_] is being read (== size(): done)
  std::unique_ptr<io::LineChunkReader> reader_;
  bool line_known_ = false;  // reader_ started at the file's first byte: its line numbers hold
  bool started_ = false;
};

// Adds the filesystem source vertex `name` ('parallelism.default' subtasks) for `table`.
Result<runtime::VertexId> AddFilesystemSource(runtime::JobGraph& graph, const std::string& name,
                                              const TableDescriptor& table,
                                              const JobContext& context);

// 'connector' = 'filesystem' for the registry.
Connector FilesystemConnector();

}  // namespace floe::connectors

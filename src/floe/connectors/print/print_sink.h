#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/connectors/connector.h"
#include "floe/connectors/registry.h"
#include "floe/runtime/job_graph.h"
#include "floe/runtime/operator.h"

namespace floe::connectors {

// Where the print sink writes: a whole batch of lines per call (stdout or stderr by default).
using PrintWriter = std::function<Status(std::string_view text)>;

// Settings of a 'connector' = 'print' table.
struct PrintSinkConfig {
  std::string identifier;       // 'print-identifier': prefix "<identifier>> "
  bool standard_error = false;  // 'standard-error': stderr instead of stdout
  uint32_t parallelism = 0;     // 'sink.parallelism'; 0 = the job's default
};

Result<PrintSinkConfig> MakePrintSinkConfig(const TableDescriptor& table);

// PrintSink writes each row as one line: an optional prefix, the row kind as Flink prints it
// ("+I "; a changelog input -- rows with kRowKindColumn -- shows each row's own "-U ", "+U ",
// "-D ") and the row as a JSON object in the JSON-lines format floe
// reads (json::AppendRowAsJson), e.g.
//   +I {"seq":1,"npi":"1000000042","active":true}
//   lake> +I {...}          ('print-identifier' = 'lake')
//   lake:2> +I {...}        (subtask 2 of a print sink with parallelism > 1; 1-based, as Flink)
// The prefix format follows Flink's print connector; the row format is floe's (JSON instead of
// Flink's "+I[1, 1000000042, true]") so the output can be fed back through a filesystem table.
// One write per batch, so lines of parallel subtasks never interleave within a line.
class PrintSink final : public runtime::Operator {
 public:
  // `writer` null = stdout (or stderr per config).
  PrintSink(PrintSinkConfig config, PrintWriter writer = nullptr);

  Status Open(const runtime::OperatorContext& ctx) override;
  Status ProcessBatch(const RecordBatch& batch, int input, runtime::Collector& out) override;
  Status OnWatermark(runtime::Watermark watermark, runtime::Collector& out) override;

 private:
  PrintSinkConfig config_;
  PrintWriter writer_;
  std::string prefix_;
  std::string buffer_;
};

// BlackholeSink discards everything (Flink's 'blackhole': for benchmarks and dry runs).
class BlackholeSink final : public runtime::Operator {
 public:
  Status ProcessBatch(const RecordBatch& batch, int input, runtime::Collector& out) override;
  Status OnWatermark(runtime::Watermark watermark, runtime::Collector& out) override;
  int64_t rows() const { return rows_; }

 private:
  int64_t rows_ = 0;
};

// Adds a print sink vertex `name` after `input`. `default_parallelism` applies unless the
// table sets 'sink.parallelism'; the edge is FORWARD when parallelisms match, else REBALANCE.
Status AddPrintSink(runtime::JobGraph& graph, runtime::VertexId input, const std::string& name,
                    const TableDescriptor& table, uint32_t default_parallelism);
// Same for 'connector' = 'blackhole' (option 'sink.parallelism').
Status AddBlackholeSink(runtime::JobGraph& graph, runtime::VertexId input, const std::string& name,
                        const TableDescriptor& table, uint32_t default_parallelism);

// 'print' and 'blackhole' for the registry.
Connector PrintConnector();
Connector BlackholeConnector();

}  // namespace floe::connectors

#include "floe/connectors/print/print_sink.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "floe/connectors/connector_options.h"
#include "floe/format/json/json_lines.h"

namespace floe::connectors {
namespace {

const std::vector<std::string> kPrintOptions = {"print-identifier", "standard-error",
                                                "sink.parallelism"};
const std::vector<std::string> kBlackholeOptions = {"sink.parallelism"};

Status WriteTo(FILE* f, std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fflush(f) != 0) {
    return Status::IOError(std::string("print sink: write failed: ") + std::strerror(errno));
  }
  return Status::OK();
}

Result<uint32_t> SinkParallelism(const TableDescriptor& table, uint32_t default_parallelism) {
  FLOE_ASSIGN_OR_RAISE(int64_t p, IntOption(table, "sink.parallelism", 0, 1, 1 << 15));
  return p == 0 ? default_parallelism : static_cast<uint32_t>(p);
}

Status ConnectSink(runtime::JobGraph& graph, runtime::VertexId input, const std::string& name,
                   uint32_t parallelism, runtime::OperatorFactory factory) {
  runtime::VertexId sink = graph.AddOperator(name, parallelism, std::move(factory));
  bool forward = graph.vertex(input).parallelism == parallelism;
  graph.Connect(input, sink,
                forward ? runtime::Partitioning::Forward() : runtime::Partitioning::Rebalance());
  return Status::OK();
}

}  // namespace

Result<PrintSinkConfig> MakePrintSinkConfig(const TableDescriptor& table) {
  FLOE_RETURN_NOT_OK(CheckSupportedOptions(table, "print", kPrintOptions));
  PrintSinkConfig config;
  config.identifier = StringOption(table, "print-identifier", "");
  FLOE_ASSIGN_OR_RAISE(config.standard_error, BoolOption(table, "standard-error", false));
  FLOE_ASSIGN_OR_RAISE(int64_t p, IntOption(table, "sink.parallelism", 0, 1, 1 << 15));
  config.parallelism = static_cast<uint32_t>(p);
  return config;
}

PrintSink::PrintSink(PrintSinkConfig config, PrintWriter writer)
    : config_(std::move(config)), writer_(std::move(writer)) {
  if (writer_ == nullptr) {
    FILE* f = config_.standard_error ? stderr : stdout;
    writer_ = [f](std::string_view text) { return WriteTo(f, text); };
  }
}

Status PrintSink::Open(const runtime::OperatorContext& ctx) {
  prefix_ = config_.identifier;
  if (ctx.task.parallelism > 1) {
    if (!prefix_.empty()) prefix_ += ":";
    prefix_ += std::to_string(ctx.task.subtask.value + 1);
  }
  if (!prefix_.empty()) prefix_ += "> ";
  return Status::OK();
}

Status PrintSink::ProcessBatch(const RecordBatch& batch, int, runtime::Collector&) {
  buffer_.clear();
  int kind_index = batch.schema() ? runtime::RowKindIndex(*batch.schema()) : -1;
  if (kind_index < 0) {
    for (size_t i = 0; i < batch.num_rows(); ++i) {
      buffer_ += prefix_;
      buffer_ += "+I ";
      json::AppendRowAsJson(batch, i, &buffer_);
    }
  } else {
    // A changelog: each row's own kind (+I, -U, +U, -D), then its declared columns.
    auto schema = std::make_shared<BatchSchema>(*batch.schema());
    schema->fields.erase(schema->fields.begin() + kind_index);
    std::vector<Column> columns;
    for (size_t c = 0; c < batch.num_columns(); ++c) {
      if (static_cast<int>(c) != kind_index) columns.push_back(batch.column(c));
    }
    RecordBatch rows(std::move(schema), std::move(columns));
    const Column& kinds = batch.column(static_cast<size_t>(kind_index));
    for (size_t i = 0; i < rows.num_rows(); ++i) {
      buffer_ += prefix_;
      buffer_ += kinds.GetBytes(i);
      buffer_ += ' ';
      json::AppendRowAsJson(rows, i, &buffer_);
    }
  }
  if (buffer_.empty()) return Status::OK();
  return writer_(buffer_);
}

Status PrintSink::OnWatermark(runtime::Watermark, runtime::Collector&) { return Status::OK(); }

Status BlackholeSink::ProcessBatch(const RecordBatch& batch, int, runtime::Collector&) {
  rows_ += static_cast<int64_t>(batch.num_rows());
  return Status::OK();
}

Status BlackholeSink::OnWatermark(runtime::Watermark, runtime::Collector&) { return Status::OK(); }

Status AddPrintSink(runtime::JobGraph& graph, runtime::VertexId input, const std::string& name,
                    const TableDescriptor& table, uint32_t default_parallelism) {
  FLOE_ASSIGN_OR_RAISE(PrintSinkConfig config, MakePrintSinkConfig(table));
  uint32_t parallelism = config.parallelism == 0 ? default_parallelism : config.parallelism;
  return ConnectSink(
      graph, input, name, parallelism,
      [config](const runtime::TaskInfo&) -> Result<std::unique_ptr<runtime::Operator>> {
        return std::unique_ptr<runtime::Operator>(std::make_unique<PrintSink>(config));
      });
}

Status AddBlackholeSink(runtime::JobGraph& graph, runtime::VertexId input, const std::string& name,
                        const TableDescriptor& table, uint32_t default_parallelism) {
  FLOE_RETURN_NOT_OK(CheckSupportedOptions(table, "blackhole", kBlackholeOptions));
  FLOE_ASSIGN_OR_RAISE(uint32_t parallelism, SinkParallelism(table, default_parallelism));
  return ConnectSink(graph, input, name, parallelism,
                     [](const runtime::TaskInfo&) -> Result<std::unique_ptr<runtime::Operator>> {
                       return std::unique_ptr<runtime::Operator>(std::make_unique<BlackholeSink>());
                     });
}

namespace {

// print and blackhole apply a changelog as it comes (print shows each row's kind).
Status AcceptsAnyChangelog(const TableDescriptor&) { return Status::OK(); }

}  // namespace

Connector PrintConnector() {
  Connector c;
  c.name = "print";
  c.options = kPrintOptions;
  c.add_sink = [](const SinkRequest& r) -> Result<AddedSink> {
    FLOE_RETURN_NOT_OK(
        AddPrintSink(*r.graph, r.input, r.vertex_name, *r.table, r.context->default_parallelism));
    return AddedSink{};
  };
  c.accepts_changelog = AcceptsAnyChangelog;
  return c;
}

Connector BlackholeConnector() {
  Connector c;
  c.name = "blackhole";
  c.options = kBlackholeOptions;
  c.add_sink = [](const SinkRequest& r) -> Result<AddedSink> {
    FLOE_RETURN_NOT_OK(AddBlackholeSink(*r.graph, r.input, r.vertex_name, *r.table,
                                        r.context->default_parallelism));
    return AddedSink{};
  };
  c.accepts_changelog = AcceptsAnyChangelog;
  return c;
}

}  // namespace floe::connectors

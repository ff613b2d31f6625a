#include "floe/sql/exec/computed_columns_operator.h"

#include <algorithm>
#include <optional>

#include "floe/common/log.h"
#include "floe/format/json/json_lines.h"
#include "floe/sql/exec/scalar_expr.h"

namespace floe::sql {

struct ComputedColumnsProgram::Impl {
  std::string table;
  ComputedColumnsSpec::FailedRows failed_rows = ComputedColumnsSpec::FailedRows::kFail;
  std::shared_ptr<const BatchSchema> output;
  // Per output column: the input column copied, or the expression computed.
  struct Out {
    int physical = -1;
    std::optional<ScalarExpr> computed;
    std::string name;
    bool nullable = true;
  };
  std::vector<Out> outs;
};

ComputedColumnsProgram::ComputedColumnsProgram(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
ComputedColumnsProgram::~ComputedColumnsProgram() = default;

Result<std::shared_ptr<const ComputedColumnsProgram>> ComputedColumnsProgram::Compile(
    const ComputedColumnsSpec& spec) {
  if (spec.input == nullptr || spec.output == nullptr ||
      spec.output->fields.size() != spec.columns.size()) {
    return Status::Internal("computed columns: input, output and columns disagree");
  }
  auto impl = std::make_unique<Impl>();
  impl->table = spec.table;
  impl->failed_rows = spec.failed_rows;
  impl->output = spec.output;
  for (size_t i = 0; i < spec.columns.size(); ++i) {
    const ColumnDef& c = spec.columns[i];
    Impl::Out out;
    out.name = c.name;
    out.nullable = spec.output->fields[i].nullable;
    if (c.computed) {
      FLOE_ASSIGN_OR_RAISE(ScalarExpr node, ScalarExpr::Compile(*c.computed, *spec.input,
                                                                "in a computed column", spec.zone));
      if (node.type().type != spec.output->fields[i].type) {
        return Status::Internal("computed column '" + c.name + "' has type " +
                                ToString(node.type()) + ", the table says " +
                                SqlTypeName(spec.output->fields[i].type));
      }
      out.computed = std::move(node);
    } else {
      out.physical = spec.input->FieldIndex(c.name);
      if (out.physical < 0) return Status::Internal("physical column '" + c.name + "' not read");
    }
    impl->outs.push_back(std::move(out));
  }
  return std::shared_ptr<const ComputedColumnsProgram>(
      std::make_shared<ComputedColumnsProgram>(std::move(impl)));
}

Result<RecordBatch> ComputedColumnsProgram::Apply(const RecordBatch& batch,
                                                  int64_t watermark) const {
  std::vector<Column> columns;
  columns.reserve(impl_->outs.size());
  for (const Impl::Out& out : impl_->outs) {
    if (!out.computed) {
      columns.push_back(batch.column(static_cast<size_t>(out.physical)));
      continue;
    }
    FLOE_ASSIGN_OR_RAISE(
        Column value, out.computed->Evaluate(
                          batch, "table '" + impl_->table + "', computed column '" + out.name + "'",
                          nullptr, watermark));
    if (!out.nullable && value.null_count() > 0) {
      return Status::InvalidArgument("table '" + impl_->table + "', computed column '" + out.name +
                                     "' is NOT NULL but " + out.computed->text() + " gave NULL");
    }
    columns.push_back(std::move(value));
  }
  return RecordBatch(impl_->output, std::move(columns));
}

ComputedColumnsSpec::FailedRows ComputedColumnsProgram::failed_rows() const {
  return impl_->failed_rows;
}

namespace {

// What side output 1 carries: a row that failed and why (connectors/dead_letter.h reads it).
std::shared_ptr<const BatchSchema> FailedRowSchema() {
  static const std::shared_ptr<const BatchSchema> schema = [] {
    auto s = std::make_shared<BatchSchema>();
    s->fields = {Field{"error_message", DataType::String(), false, 1},
                 Field{"row", DataType::String(), false, 2}};
    return s;
  }();
  return schema;
}

}  // namespace

Status ComputedColumnsOperator::Open(const runtime::OperatorContext& ctx) {
  task_ = ctx.task.name();
  errors_ = &ctx.metrics->Counter("numRecordsInErrors");
  return Status::OK();
}

Status ComputedColumnsOperator::ProcessBatch(const RecordBatch& batch, int,
                                             runtime::Collector& out) {
  using FailedRows = ComputedColumnsSpec::FailedRows;
  Result<RecordBatch> result = program_->Apply(batch, watermark_.micros);
  const FailedRows policy = program_->failed_rows();
  if (!result.ok() && policy != FailedRows::kFail) {
    // Row by row, for the rows that fail and their own errors (rare: only a batch that failed).
    std::vector<uint32_t> good;
    RecordBatch failed(FailedRowSchema());
    std::string text;
    for (size_t r = 0; r < batch.num_rows(); ++r) {
      const std::vector<uint32_t> one = {static_cast<uint32_t>(r)};
      Result<RecordBatch> row = program_->Apply(batch.Take(one), watermark_.micros);
      if (row.ok()) {
        good.push_back(one.front());
        continue;
      }
      if (errors_ != nullptr) errors_->Add(1);
      // The first hundred in full, then one line per 10,000: the metric counts them all.
      if (logged_++ % 10000 == 0 || logged_ <= 100) {
        LogWarn("%s: %s a row ('scan.bad-records'): %s", task_.c_str(),
                policy == FailedRows::kSkip ? "skipped" : "dead-lettered",
                row.status().message().c_str());
      }
      if (policy == FailedRows::kSkip) continue;
      text.clear();
      json::AppendRowAsJson(batch, r, &text);
      if (!text.empty() && text.back() == '\n') text.pop_back();
      failed.mutable_column(0).AppendBytes(row.status().message());
      failed.mutable_column(1).AppendBytes(text);
    }
    if (failed.num_rows() > 0) FLOE_RETURN_NOT_OK(out.EmitSide(1, std::move(failed)));
    result = program_->Apply(batch.Take(good), watermark_.micros);
  }
  if (!result.ok()) return result.status();
  if (result->num_rows() == 0) return Status::OK();
  return out.Emit(std::move(result).value());
}

Status ComputedColumnsOperator::OnWatermark(runtime::Watermark watermark, runtime::Collector& out) {
  watermark_ = std::max(watermark_, watermark);
  return out.EmitWatermark(watermark);
}

}  // namespace floe::sql

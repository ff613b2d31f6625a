#include "floe/sql/exec/computed_columns_operator.h"

#include <algorithm>
#include <optional>

#include "floe/sql/exec/scalar_expr.h"

namespace floe::sql {

struct ComputedColumnsProgram::Impl {
  std::string table;
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

Status ComputedColumnsOperator::ProcessBatch(const RecordBatch& batch, int,
                                             runtime::Collector& out) {
  FLOE_ASSIGN_OR_RAISE(RecordBatch result, program_->Apply(batch, watermark_.micros));
  if (result.num_rows() == 0) return Status::OK();
  return out.Emit(std::move(result));
}

Status ComputedColumnsOperator::OnWatermark(runtime::Watermark watermark, runtime::Collector& out) {
  watermark_ = std::max(watermark_, watermark);
  return out.EmitWatermark(watermark);
}

}  // namespace floe::sql

#include "floe/sql/exec/calc_operator.h"

#include <algorithm>
#include <cstdint>

#include "floe/format/json/json_lines.h"
#include "floe/runtime/row_kind.h"
#include "floe/sql/exec/decimal_arithmetic.h"
#include "floe/sql/exec/scalar_expr.h"
#include "floe/sql/scalar_types.h"

namespace floe::sql {
namespace {

int DigitCount(Int128 v) {
  if (v < 0) v = -v;
  int d = 1;
  while (v >= 10) v /= 10, ++d;
  return d;
}

std::string Where(const SourcePos& pos) {
  return "line " + std::to_string(pos.line) + ", column " + std::to_string(pos.column) + ": ";
}

std::string TypeName(const DataType& t) { return json::SqlTypeName(t); }

// How one output column is produced: a column (the input's or a computed one) copied or
// widened, or a literal.
struct OutputPlan {
  enum class Kind { kInput, kComputed, kLiteral } kind = Kind::kInput;
  int column = -1;  // kInput: into the batch; kComputed: into the computed values
  bool widen = false;
  DataType target;
  bool target_nullable = true;
  std::string target_name;
  std::string text;                         // the select item's SQL, for messages
  Column literal_value{DataType::Int64()};  // kLiteral: one row, already converted
};

bool IsWidening(const DataType& from, const DataType& to) {
  if (from == to) return true;
  switch (from.id) {
    case TypeId::kInt32:
      if (to.id == TypeId::kInt64 || to.id == TypeId::kDouble) return true;
      return to.id == TypeId::kDecimal && to.precision - to.scale >= 10;
    case TypeId::kInt64:
      if (to.id == TypeId::kDouble) return true;
      return to.id == TypeId::kDecimal && to.precision - to.scale >= 19;
    case TypeId::kFloat:
      return to.id == TypeId::kDouble;
    case TypeId::kDecimal:
      return to.id == TypeId::kDecimal && to.scale >= from.scale &&
             to.precision - to.scale >= from.precision - from.scale;
    default:
      return false;
  }
}

// Converts a literal to `target`, exactly; false when it does not fit.
bool LiteralToColumn(const Literal& lit, const DataType& target, Column* out) {
  switch (target.id) {
    case TypeId::kBoolean:
      if (lit.kind != Literal::Kind::kBoolean) return false;
      out->Append<uint8_t>(lit.boolean ? 1 : 0);
      return true;
    case TypeId::kInt32:
      if (lit.kind != Literal::Kind::kInteger || lit.integer < INT32_MIN ||
          lit.integer > INT32_MAX) {
        return false;
      }
      out->Append<int32_t>(static_cast<int32_t>(lit.integer));
      return true;
    case TypeId::kInt64:
      if (lit.kind != Literal::Kind::kInteger) return false;
      out->Append<int64_t>(lit.integer);
      return true;
    case TypeId::kFloat:
    case TypeId::kDouble: {
      double v = 0;
      if (lit.kind == Literal::Kind::kInteger) {
        v = static_cast<double>(lit.integer);
      } else if (lit.kind == Literal::Kind::kDouble) {
        v = lit.real;
      } else if (lit.kind == Literal::Kind::kDecimal) {
        Int128 unscaled = 0;
        Result<DataType> type = DecimalLiteralType(lit.text, &unscaled);
        if (!type.ok()) return false;
        v = DecimalToDouble(unscaled, type->scale);
      } else {
        return false;
      }
      target.id == TypeId::kFloat ? out->Append<float>(static_cast<float>(v))
                                  : out->Append<double>(v);
      return true;
    }
    case TypeId::kDecimal: {
      Int128 unscaled = lit.integer;
      int scale = 0;
      if (lit.kind == Literal::Kind::kDecimal) {
        Result<DataType> type = DecimalLiteralType(lit.text, &unscaled);
        if (!type.ok()) return false;
        scale = type->scale;
      } else if (lit.kind != Literal::Kind::kInteger) {
        return false;
      }
      if (scale > target.scale) return false;
      const Int128 v = unscaled * decimal::Pow10(target.scale - scale);
      if (DigitCount(v) > target.precision) return false;
      out->Append<Int128>(v);
      return true;
    }
    case TypeId::kString:
      if (lit.kind != Literal::Kind::kString) return false;
      out->AppendBytes(lit.text);
      return true;
    default:
      return false;
  }
}

// One value widened as IsWidening admits.
void CastValue(const Column& in, size_t row, const DataType& to, Column* out) {
  const DataType& from = in.type();
  switch (to.id) {
    case TypeId::kInt64:
      out->Append<int64_t>(in.Get<int32_t>(row));
      return;
    case TypeId::kDouble:
      out->Append<double>(NumberAsDouble(in, row));
      return;
    case TypeId::kDecimal: {
      Int128 v = from.id == TypeId::kDecimal ? in.Get<Int128>(row)
                 : from.id == TypeId::kInt32 ? Int128(in.Get<int32_t>(row))
                                             : Int128(in.Get<int64_t>(row));
      int own_scale = from.id == TypeId::kDecimal ? from.scale : 0;
      out->Append<Int128>(v * decimal::Pow10(to.scale - own_scale));
      return;
    }
    default:
      out->AppendFrom(in, row);  // unreachable: IsWidening admits nothing else
  }
}

// The row kinds of the rows a WHERE kept from a changelog. An update is a -U row right before
// its +U; when the WHERE keeps one half only, the row left (-U kept: -D) or entered (+U kept:
// +I) the result, so an upsert sink, which applies +U and -D and skips -U, ends with the rows
// the WHERE holds for. Flink passes the lone half on as it is.
Column KeptRowKinds(const Column& kinds, const std::vector<uint32_t>& rows) {
  std::vector<uint8_t> kept(kinds.size(), 0);
  for (uint32_t r : rows) kept[r] = 1;
  auto is = [&](size_t r, std::string_view kind) {
    return r < kinds.size() && !kinds.IsNull(r) && kinds.GetBytes(r) == kind;
  };
  Column out(kinds.type());
  out.Reserve(rows.size());
  for (uint32_t r : rows) {
    if (is(r, "-U") && is(r + 1, "+U") && kept[r + 1] == 0) {
      out.AppendBytes("-D");
    } else if (is(r, "+U") && r > 0 && is(r - 1, "-U") && kept[r - 1] == 0) {
      out.AppendBytes("+I");
    } else {
      out.AppendFrom(kinds, r);
    }
  }
  return out;
}

// What a row's error names: the Calc's sink.
std::string CalcWhat(const std::string& sink) { return "the query into sink '" + sink + "'"; }

}  // namespace

struct CalcProgram::Impl {
  std::shared_ptr<const BatchSchema> input;
  std::shared_ptr<const BatchSchema> output;
  std::optional<ScalarExpr> where;
  std::vector<OutputPlan> outputs;
  std::vector<ScalarExpr> computed;  // the select items beyond columns and literals
  std::string sink_name;
  bool identity = false;
  // Reserved columns ending the input (the row kind, the source split): passed through after
  // the output's columns, for the rows kept.
  size_t reserved = 0;
  // The row-kind column of a changelog input that a WHERE filters (KeptRowKinds), else -1.
  int filtered_kind_column = -1;

  Status CompileSelect(const CalcSpec& spec, const BatchSchema& visible);
  Result<std::vector<uint32_t>> Filter(const RecordBatch& batch, int64_t watermark) const;
};

CalcProgram::CalcProgram(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CalcProgram::~CalcProgram() = default;

Result<std::shared_ptr<const CalcProgram>> CalcProgram::Compile(const CalcSpec& spec) {
  if (spec.input == nullptr || spec.output == nullptr) {
    return Status::InvalidArgument("calc: input and output schemas are required");
  }
  auto impl = std::make_unique<Impl>();
  impl->input = spec.input;
  impl->output = spec.output;
  impl->sink_name = spec.sink_name;
  // A changelog input carries the row kind after the declared columns, a scaled-out job's the
  // source split: expressions see only the declared columns (same indices), and the reserved
  // ones travel to the output untouched.
  std::shared_ptr<const BatchSchema> visible = spec.input;
  impl->reserved = runtime::TrailingReservedColumns(*spec.input);
  if (runtime::RowKindIndex(*spec.input) >= 0 && impl->reserved == 0) {
    return Status::Internal("calc: the row kind column must follow the declared columns");
  }
  if (impl->reserved > 0) {
    auto declared = std::make_shared<BatchSchema>(*spec.input);
    declared->fields.resize(declared->fields.size() - impl->reserved);
    visible = std::move(declared);
    auto output = std::make_shared<BatchSchema>(*spec.output);
    for (size_t i = visible->fields.size(); i < spec.input->fields.size(); ++i) {
      output->fields.push_back(spec.input->fields[i]);
    }
    impl->output = std::move(output);
  }
  constexpr std::string_view kPlace = "in WHERE and the select list";
  if (spec.where.has_value()) {
    FLOE_ASSIGN_OR_RAISE(ScalarExpr where,
                         ScalarExpr::Compile(*spec.where, *visible, kPlace, spec.zone));
    if (where.type().type.id != TypeId::kBoolean) {
      return Status::InvalidArgument(Where(spec.where->pos) +
                                     "WHERE needs a BOOLEAN condition, but " + where.text() +
                                     " is " + TypeName(where.type().type));
    }
    impl->where = std::move(where);
  }
  if (impl->where) impl->filtered_kind_column = runtime::RowKindIndex(*spec.input);
  FLOE_RETURN_NOT_OK(impl->CompileSelect(spec, *visible));
  impl->identity = !impl->where.has_value() && spec.select.empty() && *visible == *spec.output;
  return std::shared_ptr<const CalcProgram>(std::make_shared<CalcProgram>(std::move(impl)));
}

Status CalcProgram::Impl::CompileSelect(const CalcSpec& spec, const BatchSchema& visible) {
  std::vector<SelectItem> items = spec.select;
  if (items.empty()) {
    for (const Field& f : visible.fields) items.push_back({Expr::Column(f.name), ""});
  }
  const std::vector<Field>& sink = spec.output->fields;
  if (items.size() != sink.size()) {
    return Status::InvalidArgument("the query produces " + std::to_string(items.size()) +
                                   " columns but sink '" + spec.sink_name + "' has " +
                                   std::to_string(sink.size()));
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const SelectItem& item = items[i];
    const Field& target = sink[i];
    OutputPlan plan;
    plan.target = target.type;
    plan.target_nullable = target.nullable;
    plan.target_name = target.name;
    plan.text = ToString(item.expr);
    auto mismatch = [&](const DataType& type, const std::string& extra) {
      const std::string name = item.alias.empty() ? plan.text : item.alias;
      return Status::InvalidArgument(
          Where(item.expr.pos) + "query column " + std::to_string(i + 1) + " '" + name +
          "' has type " + TypeName(type) + " but column '" + target.name + "' of sink '" +
          spec.sink_name + "' is " + TypeName(target.type) + extra);
    };
    FLOE_ASSIGN_OR_RAISE(
        ScalarExpr value,
        ScalarExpr::Compile(item.expr, visible, "in WHERE and the select list", spec.zone));
    const DataType type = value.type().type;
    if (item.expr.kind == ExprKind::kLiteral) {
      plan.kind = OutputPlan::Kind::kLiteral;
      plan.literal_value = Column(target.type);
      if (!LiteralToColumn(item.expr.literal, target.type, &plan.literal_value)) {
        return mismatch(type, " (the literal does not convert to it exactly)");
      }
    } else {
      if (!IsWidening(type, target.type)) return mismatch(type, "");
      plan.widen = type != target.type;
      if (item.expr.kind == ExprKind::kColumn) {
        plan.kind = OutputPlan::Kind::kInput;
        plan.column = visible.FieldIndex(item.expr.name);
      } else {
        plan.kind = OutputPlan::Kind::kComputed;
        plan.column = static_cast<int>(computed.size());
        computed.push_back(std::move(value));
      }
    }
    outputs.push_back(std::move(plan));
  }
  return Status::OK();
}

const std::shared_ptr<const BatchSchema>& CalcProgram::output_schema() const {
  return impl_->output;
}

bool CalcProgram::is_identity() const { return impl_->identity; }

Result<std::vector<uint32_t>> CalcProgram::Impl::Filter(const RecordBatch& batch,
                                                        int64_t watermark) const {
  std::vector<uint32_t> rows;
  const size_t n = batch.num_rows();
  rows.reserve(n);
  if (!where.has_value()) {
    for (size_t i = 0; i < n; ++i) rows.push_back(static_cast<uint32_t>(i));
    return rows;
  }
  FLOE_ASSIGN_OR_RAISE(Column truth,
                       where->Evaluate(batch, CalcWhat(sink_name), nullptr, watermark));
  const uint8_t* v = truth.values<uint8_t>();
  for (size_t i = 0; i < n; ++i) {
    if (v[i] != 0 && !truth.IsNull(i)) rows.push_back(static_cast<uint32_t>(i));
  }
  return rows;
}

Result<std::vector<uint32_t>> CalcProgram::Filter(const RecordBatch& batch) const {
  return impl_->Filter(batch, INT64_MIN);
}

Result<RecordBatch> CalcProgram::Apply(const RecordBatch& batch, int64_t watermark) const {
  FLOE_ASSIGN_OR_RAISE(std::vector<uint32_t> rows, impl_->Filter(batch, watermark));
  const bool all = rows.size() == batch.num_rows();
  std::vector<Column> values;
  if (!impl_->computed.empty()) {
    // Only the rows kept are evaluated (as Flink's Calc projects after its condition), so a
    // row the WHERE drops cannot fail the projection.
    std::vector<uint8_t> keep(batch.num_rows(), all ? 1 : 0);
    if (!all) {
      for (uint32_t r : rows) keep[r] = 1;
    }
    for (const ScalarExpr& e : impl_->computed) {
      FLOE_ASSIGN_OR_RAISE(Column value,
                           e.Evaluate(batch, CalcWhat(impl_->sink_name), keep.data(), watermark));
      values.push_back(std::move(value));
    }
  }
  std::vector<Column> columns;
  columns.reserve(impl_->outputs.size() + impl_->reserved);
  for (const OutputPlan& plan : impl_->outputs) {
    Column out(plan.target);
    if (plan.kind == OutputPlan::Kind::kLiteral) {
      out.Reserve(rows.size());
      for (size_t k = 0; k < rows.size(); ++k) out.AppendFrom(plan.literal_value, 0);
    } else {
      const size_t at = static_cast<size_t>(plan.column);
      const Column& in = plan.kind == OutputPlan::Kind::kInput ? batch.column(at) : values[at];
      if (!plan.widen && all) {
        out = in;
      } else {
        out.Reserve(rows.size());
        for (uint32_t r : rows) {
          if (!plan.widen) {
            out.AppendFrom(in, r);
          } else if (in.IsNull(r)) {
            out.AppendNull();
          } else {
            CastValue(in, r, plan.target, &out);
          }
        }
      }
    }
    if (!plan.target_nullable && out.null_count() > 0) {
      return Status::InvalidArgument(
          "column '" + plan.target_name + "' of sink '" + impl_->sink_name +
          "' is NOT NULL but the query produced a NULL for it (from " + plan.text + ")");
    }
    columns.push_back(std::move(out));
  }
  for (size_t c = batch.num_columns() - impl_->reserved; c < batch.num_columns(); ++c) {
    const Column& in = batch.column(c);
    if (static_cast<int>(c) == impl_->filtered_kind_column && !all) {
      columns.push_back(KeptRowKinds(in, rows));
    } else if (all) {
      columns.push_back(in);
    } else {
      Column kept(in.type());
      kept.Reserve(rows.size());
      for (uint32_t r : rows) kept.AppendFrom(in, r);
      columns.push_back(std::move(kept));
    }
  }
  return RecordBatch(impl_->output, std::move(columns));
}

Status CalcOperator::ProcessBatch(const RecordBatch& batch, int, runtime::Collector& out) {
  FLOE_ASSIGN_OR_RAISE(RecordBatch result, program_->Apply(batch, watermark_.micros));
  if (result.num_rows() == 0) return Status::OK();
  return out.Emit(std::move(result));
}

Status CalcOperator::OnWatermark(runtime::Watermark watermark, runtime::Collector& out) {
  watermark_ = std::max(watermark_, watermark);
  return out.EmitWatermark(watermark);
}

}  // namespace floe::sql

#include "floe/sql/exec/computed_columns_operator.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "floe/common/civil_time.h"

namespace floe::sql {
namespace {

std::string Where(const SourcePos& pos) {
  return "line " + std::to_string(pos.line) + ", column " + std::to_string(pos.column) + ": ";
}

bool IsInteger(TypeId id) { return id == TypeId::kInt32 || id == TypeId::kInt64; }
bool IsFloating(TypeId id) { return id == TypeId::kFloat || id == TypeId::kDouble; }
bool IsTimestamp(TypeId id) { return id == TypeId::kTimestamp || id == TypeId::kTimestampTz; }

// A compiled expression: what it reads and the SQL type it yields.
struct Node {
  enum class Kind { kColumn, kLiteral, kCast, kToTimestampLtz } kind = Kind::kColumn;
  SqlType type;
  SourcePos pos;
  std::string text;                   // for messages
  int column = -1;                    // kColumn: into the input
  Column literal{DataType::Int64()};  // kLiteral: one value of `type`
  int64_t epoch_unit = 1;             // kToTimestampLtz: micros per epoch unit
  std::vector<Node> children;
};

// Whether CAST(from AS to) is evaluated (see the header).
bool CastSupported(const SqlType& from, const SqlType& to) {
  const TypeId a = from.type.id, b = to.type.id;
  if (a == b && a != TypeId::kDecimal) return true;
  const bool num_a = IsInteger(a) || IsFloating(a), num_b = IsInteger(b) || IsFloating(b);
  if (num_a && num_b) return true;
  if (IsInteger(a) && b == TypeId::kDecimal) return to.type.precision - to.type.scale >= 19;
  if (a == TypeId::kString) {
    return IsInteger(b) || b == TypeId::kDouble || b == TypeId::kBoolean || b == TypeId::kDate ||
           IsTimestamp(b);
  }
  if (IsInteger(a) && b == TypeId::kString) return true;
  if (IsTimestamp(a) && IsTimestamp(b)) return true;
  if (a == TypeId::kDate && IsTimestamp(b)) return true;
  if (IsTimestamp(a) && b == TypeId::kDate) return true;
  return IsInteger(a) && b == TypeId::kTimestampTz;
}

Result<Node> CompileNode(const Expr& e, const BatchSchema& input) {
  Node n;
  n.pos = e.pos;
  n.text = ToString(e);
  switch (e.kind) {
    case ExprKind::kColumn: {
      n.kind = Node::Kind::kColumn;
      n.column = input.FieldIndex(e.name);
      if (n.column < 0) {
        return Status::InvalidArgument(Where(e.pos) + "computed columns may use physical columns " +
                                       "only; '" + e.name + "' is not one");
      }
      // Physical timestamps hold microseconds: precision 6 is the safe reading.
      n.type = SqlType{input.fields[static_cast<size_t>(n.column)].type, 6};
      return n;
    }
    case ExprKind::kLiteral: {
      n.kind = Node::Kind::kLiteral;
      const Literal& l = e.literal;
      switch (l.kind) {
        case Literal::Kind::kBoolean:
          n.type.type = DataType::Boolean();
          n.literal = Column(n.type.type);
          n.literal.Append<uint8_t>(l.boolean ? 1 : 0);
          return n;
        case Literal::Kind::kInteger:
          if (l.integer >= std::numeric_limits<int32_t>::min() &&
              l.integer <= std::numeric_limits<int32_t>::max()) {
            n.type.type = DataType::Int32();
            n.literal = Column(n.type.type);
            n.literal.Append<int32_t>(static_cast<int32_t>(l.integer));
          } else {
            n.type.type = DataType::Int64();
            n.literal = Column(n.type.type);
            n.literal.Append<int64_t>(l.integer);
          }
          return n;
        case Literal::Kind::kDouble:
          n.type.type = DataType::Double();
          n.literal = Column(n.type.type);
          n.literal.Append<double>(l.real);
          return n;
        case Literal::Kind::kString:
          n.type.type = DataType::String();
          n.literal = Column(n.type.type);
          n.literal.AppendBytes(l.text);
          return n;
        case Literal::Kind::kDecimal:
          break;
      }
      return Status::NotImplemented(Where(e.pos) + "not implemented yet: the decimal literal " +
                                    n.text + " in a computed column");
    }
    case ExprKind::kCast: {
      n.kind = Node::Kind::kCast;
      FLOE_ASSIGN_OR_RAISE(Node child, CompileNode(e.children.at(0), input));
      n.type = e.cast_type;
      if (!CastSupported(child.type, n.type)) {
        return Status::NotImplemented(Where(e.pos) + "not implemented yet: CAST from " +
                                      ToString(child.type) + " to " + ToString(n.type) +
                                      " in a computed column");
      }
      n.children.push_back(std::move(child));
      return n;
    }
    case ExprKind::kCall: {
      if (e.name == "TO_TIMESTAMP_LTZ" && e.children.size() == 2 &&
          e.children[1].kind == ExprKind::kLiteral) {
        n.kind = Node::Kind::kToTimestampLtz;
        FLOE_ASSIGN_OR_RAISE(Node epoch, CompileNode(e.children[0], input));
        const TypeId id = epoch.type.type.id;
        if (!IsInteger(id) && id != TypeId::kDouble) {
          return Status::NotImplemented(Where(e.pos) + "not implemented yet: TO_TIMESTAMP_LTZ of " +
                                        ToString(epoch.type) + " (INT, BIGINT or DOUBLE epochs)");
        }
        const int64_t precision = e.children[1].literal.integer;
        n.epoch_unit = precision == 3 ? 1000 : kMicrosPerSecond;
        n.type = SqlType{DataType::TimestampTz(), static_cast<int>(precision)};
        n.children.push_back(std::move(epoch));
        return n;
      }
      break;
    }
    default:
      break;
  }
  return Status::NotImplemented(Where(e.pos) + "not implemented yet: " + n.text +
                                " in a computed column (columns, literals, CAST and "
                                "TO_TIMESTAMP_LTZ are evaluated)");
}

// Micros truncated to `precision` fractional digits (floor, as Flink truncates).
int64_t Truncate(int64_t micros, int precision) {
  if (precision >= 6) return micros;
  int64_t unit = 1;
  for (int i = precision; i < 6; ++i) unit *= 10;
  int64_t r = micros % unit;
  if (r < 0) r += unit;
  return micros - r;
}

class Evaluator {
 public:
  Evaluator(const std::string& table, const std::string& column, const RecordBatch& batch)
      : table_(table), column_(column), batch_(batch) {}

  Result<Column> Eval(const Node& n) {
    const size_t rows = batch_.num_rows();
    switch (n.kind) {
      case Node::Kind::kColumn:
        return batch_.column(static_cast<size_t>(n.column));
      case Node::Kind::kLiteral: {
        Column out(n.type.type);
        out.Reserve(rows);
        for (size_t r = 0; r < rows; ++r) out.AppendFrom(n.literal, 0);
        return out;
      }
      case Node::Kind::kToTimestampLtz: {
        Column storage(DataType::Int64());
        FLOE_ASSIGN_OR_RAISE(const Column* operand, Operand(n.children[0], &storage));
        const Column& in = *operand;
        Column out(DataType::TimestampTz());
        out.Reserve(rows);
        for (size_t r = 0; r < rows; ++r) {
          if (in.IsNull(r)) {
            out.AppendNull();
            continue;
          }
          const TypeId id = in.type().id;
          if (id == TypeId::kDouble) {
            const double v = in.Get<double>(r) * static_cast<double>(n.epoch_unit);
            if (!std::isfinite(v) || std::fabs(v) > 9.2e18) return Bad(n, std::to_string(v));
            out.Append<int64_t>(static_cast<int64_t>(v));
            continue;
          }
          const int64_t v = id == TypeId::kInt32 ? in.Get<int32_t>(r) : in.Get<int64_t>(r);
          int64_t micros;
          if (__builtin_mul_overflow(v, n.epoch_unit, &micros)) return Bad(n, std::to_string(v));
          out.Append<int64_t>(micros);
        }
        return out;
      }
      case Node::Kind::kCast: {
        Column storage(DataType::Int64());
        FLOE_ASSIGN_OR_RAISE(const Column* operand, Operand(n.children[0], &storage));
        return Cast(n, *operand);
      }
    }
    return Status::Internal("unknown computed expression");
  }

 private:
  // An operand: the batch's own column when it is one (not copied), else evaluated into
  // `storage`.
  Result<const Column*> Operand(const Node& n, Column* storage) {
    if (n.kind == Node::Kind::kColumn) return &batch_.column(static_cast<size_t>(n.column));
    FLOE_ASSIGN_OR_RAISE(*storage, Eval(n));
    return storage;
  }

  Status Bad(const Node& n, const std::string& value) const {
    return Status::InvalidArgument("table '" + table_ + "', computed column '" + column_ +
                                   "': " + n.text + " cannot be evaluated for the value " + value);
  }

  Result<Column> Cast(const Node& n, const Column& in) {
    const DataType& from = in.type();
    const DataType& to = n.type.type;
    const size_t rows = in.size();
    Column out(to);
    out.Reserve(rows);
    for (size_t r = 0; r < rows; ++r) {
      if (in.IsNull(r)) {
        out.AppendNull();
        continue;
      }
      FLOE_RETURN_NOT_OK(CastValue(n, in, r, from, to, &out));
    }
    return out;
  }

  Status CastValue(const Node& n, const Column& in, size_t r, const DataType& from,
                   const DataType& to, Column* out) {
    const TypeId a = from.id, b = to.id;
    if (a == TypeId::kString) return ParseValue(n, in.GetBytes(r), to, out);
    if (IsTimestamp(a) || a == TypeId::kDate) {
      const int64_t micros =
          a == TypeId::kDate ? int64_t{in.Get<int32_t>(r)} * kMicrosPerDay : in.Get<int64_t>(r);
      if (b == TypeId::kDate) {
        int64_t days = micros / kMicrosPerDay;
        if (micros % kMicrosPerDay < 0) --days;
        out->Append<int32_t>(static_cast<int32_t>(days));
      } else {
        out->Append<int64_t>(Truncate(micros, n.type.precision));
      }
      return Status::OK();
    }
    if (a == TypeId::kBoolean) {  // only to BOOLEAN
      out->Append<uint8_t>(in.Get<uint8_t>(r));
      return Status::OK();
    }
    // Numbers.
    const bool integral = IsInteger(a);
    const int64_t i = a == TypeId::kInt32   ? in.Get<int32_t>(r)
                      : a == TypeId::kInt64 ? in.Get<int64_t>(r)
                                            : 0;
    const double d = a == TypeId::kFloat    ? in.Get<float>(r)
                     : a == TypeId::kDouble ? in.Get<double>(r)
                                            : static_cast<double>(i);
    switch (b) {
      case TypeId::kInt32:
      case TypeId::kInt64: {
        int64_t v = i;
        if (!integral) {
          if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) return Bad(n, std::to_string(d));
          v = static_cast<int64_t>(d);  // toward zero, as Flink
        }
        if (b == TypeId::kInt32) {
          if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
            return Bad(n, std::to_string(v));
          }
          out->Append<int32_t>(static_cast<int32_t>(v));
        } else {
          out->Append<int64_t>(v);
        }
        return Status::OK();
      }
      case TypeId::kFloat:
        out->Append<float>(static_cast<float>(d));
        return Status::OK();
      case TypeId::kDouble:
        out->Append<double>(d);
        return Status::OK();
      case TypeId::kDecimal: {
        Int128 v = i;
        for (int k = 0; k < to.scale; ++k) v *= 10;
        out->Append<Int128>(v);
        return Status::OK();
      }
      case TypeId::kString:
        out->AppendBytes(std::to_string(i));
        return Status::OK();
      case TypeId::kTimestampTz: {
        int64_t micros;
        if (__builtin_mul_overflow(i, kMicrosPerSecond, &micros)) {
          return Bad(n, std::to_string(i));
        }
        out->Append<int64_t>(micros);
        return Status::OK();
      }
      default:
        return Status::Internal("cast not compiled: " + n.text);
    }
  }

  // Parses without allocating (this runs per row); the message is built only on failure.
  Status ParseValue(const Node& n, std::string_view s, const DataType& to, Column* out) {
    auto bad = [&] { return Bad(n, "'" + std::string(s.substr(0, 64)) + "'"); };
    std::string_view text = s;
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    const char* first = text.data();
    const char* last = text.data() + text.size();
    switch (to.id) {
      case TypeId::kInt32: {
        int32_t v = 0;
        auto [end, ec] = std::from_chars(first, last, v);
        if (text.empty() || ec != std::errc() || end != last) return bad();
        out->Append<int32_t>(v);
        return Status::OK();
      }
      case TypeId::kInt64: {
        int64_t v = 0;
        auto [end, ec] = std::from_chars(first, last, v);
        if (text.empty() || ec != std::errc() || end != last) return bad();
        out->Append<int64_t>(v);
        return Status::OK();
      }
      case TypeId::kDouble: {
        double v = 0;
        auto [end, ec] = std::from_chars(first, last, v);
        if (text.empty() || ec != std::errc() || end != last) return bad();
        out->Append<double>(v);
        return Status::OK();
      }
      case TypeId::kBoolean: {
        auto is = [&text](std::string_view word) {
          return text.size() == word.size() &&
                 std::equal(text.begin(), text.end(), word.begin(), [](char a, char b) {
                   return std::tolower(static_cast<unsigned char>(a)) == b;
                 });
        };
        if (!is("true") && !is("false")) return bad();
        out->Append<uint8_t>(is("true") ? 1 : 0);
        return Status::OK();
      }
      case TypeId::kDate: {
        int32_t days;
        if (ParseDate(text, &days) != nullptr) return bad();
        out->Append<int32_t>(days);
        return Status::OK();
      }
      case TypeId::kTimestamp:
      case TypeId::kTimestampTz: {
        int64_t micros;
        if (ParseTimestamp(text, to.id == TypeId::kTimestampTz, &micros) != nullptr) return bad();
        out->Append<int64_t>(Truncate(micros, n.type.precision));
        return Status::OK();
      }
      case TypeId::kString:
        out->AppendBytes(s);
        return Status::OK();
      default:
        return Status::Internal("cast not compiled: " + n.text);
    }
  }

  const std::string& table_;
  const std::string& column_;
  const RecordBatch& batch_;
};

}  // namespace

struct ComputedColumnsProgram::Impl {
  std::string table;
  std::shared_ptr<const BatchSchema> output;
  // Per output column: the input column copied, or the expression computed.
  struct Out {
    int physical = -1;
    std::optional<Node> computed;
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
      FLOE_ASSIGN_OR_RAISE(Node node, CompileNode(*c.computed, *spec.input));
      if (node.type.type != spec.output->fields[i].type) {
        return Status::Internal("computed column '" + c.name + "' has type " + ToString(node.type) +
                                ", the table says " + SqlTypeName(spec.output->fields[i].type));
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

Result<RecordBatch> ComputedColumnsProgram::Apply(const RecordBatch& batch) const {
  std::vector<Column> columns;
  columns.reserve(impl_->outs.size());
  for (const Impl::Out& out : impl_->outs) {
    if (!out.computed) {
      columns.push_back(batch.column(static_cast<size_t>(out.physical)));
      continue;
    }
    Evaluator eval(impl_->table, out.name, batch);
    FLOE_ASSIGN_OR_RAISE(Column value, eval.Eval(*out.computed));
    if (!out.nullable && value.null_count() > 0) {
      return Status::InvalidArgument("table '" + impl_->table + "', computed column '" + out.name +
                                     "' is NOT NULL but " + out.computed->text + " gave NULL");
    }
    columns.push_back(std::move(value));
  }
  return RecordBatch(impl_->output, std::move(columns));
}

Status ComputedColumnsOperator::ProcessBatch(const RecordBatch& batch, int,
                                             runtime::Collector& out) {
  FLOE_ASSIGN_OR_RAISE(RecordBatch result, program_->Apply(batch));
  if (result.num_rows() == 0) return Status::OK();
  return out.Emit(std::move(result));
}

}  // namespace floe::sql

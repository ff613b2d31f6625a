#include "floe/sql/exec/calc_operator.h"

#include "floe/runtime/row_kind.h"

#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>

#include "floe/format/json/json_lines.h"
#include "floe/sql/exec/scalar_expr.h"
#include "floe/sql/scalar_types.h"

namespace floe::sql {
namespace {

// Three-valued truth, one byte per row.
constexpr uint8_t kFalse = 0;
constexpr uint8_t kTrue = 1;
constexpr uint8_t kUnknown = 2;

// How a comparison is carried out.
enum class Domain { kBool, kInt, kDouble, kDecimal, kBytes };

struct DecimalLiteral {
  Int128 unscaled = 0;
  int precision = 1;
  int scale = 0;
};

Int128 Pow10(int n) {
  Int128 v = 1;
  for (int i = 0; i < n; ++i) v *= 10;
  return v;
}

// Digits of an int64 value (for "does this fit DECIMAL(p, s)").
int DigitCount(Int128 v) {
  if (v < 0) v = -v;
  int d = 1;
  while (v >= 10) v /= 10, ++d;
  return d;
}

std::string Where(const SourcePos& pos) {
  return "line " + std::to_string(pos.line) + ", column " + std::to_string(pos.column) + ": ";
}

bool IsInteger(TypeId id) { return id == TypeId::kInt32 || id == TypeId::kInt64; }
bool IsFloating(TypeId id) { return id == TypeId::kFloat || id == TypeId::kDouble; }
bool IsNumeric(TypeId id) { return IsInteger(id) || IsFloating(id) || id == TypeId::kDecimal; }
bool IsTemporal(TypeId id) {
  return id == TypeId::kDate || id == TypeId::kTimestamp || id == TypeId::kTimestampTz;
}

// A compiled expression node. Boolean-valued nodes evaluate to a truth vector; value nodes
// (column, literal) are read by comparisons and projections.
struct Node {
  ExprKind kind = ExprKind::kLiteral;
  DataType type;       // value type (Boolean for predicates)
  int column = -1;     // kColumn
  Literal literal;     // kLiteral
  DecimalLiteral dec;  // kLiteral of kind kDecimal/kInteger, parsed
  CompareOp op = CompareOp::kEq;
  Domain domain = Domain::kBool;  // kCompare
  int scale = 0;                  // kCompare in kDecimal
  std::vector<Node> children;
  SourcePos pos;
  std::string text;  // SQL of the node, for messages

  bool is_bool() const { return type.id == TypeId::kBoolean; }
  bool is_value() const { return kind == ExprKind::kColumn || kind == ExprKind::kLiteral; }
};

// Where value expressions beyond columns and literals (arithmetic, CAST, functions) go: each
// is a ScalarExpr, evaluated per batch into a scratch column that the expression tree reads
// like an input column, at index first + its position.
struct Scratch {
  size_t first = 0;
  std::vector<ScalarExpr>* exprs = nullptr;
};

// The columns expressions read: the batch's, then the scratch columns computed for it.
class Columns {
 public:
  Columns(const RecordBatch& batch, const std::vector<Column>& scratch)
      : batch_(batch), scratch_(scratch) {}
  const Column& column(size_t i) const {
    return i < batch_.num_columns() ? batch_.column(i) : scratch_[i - batch_.num_columns()];
  }
  size_t num_rows() const { return batch_.num_rows(); }

 private:
  const RecordBatch& batch_;
  const std::vector<Column>& scratch_;
};

// The natural type of a literal (Flink: an integer literal is INT when it fits, else BIGINT).
DataType LiteralType(const Literal& lit, const DecimalLiteral& dec) {
  switch (lit.kind) {
    case Literal::Kind::kBoolean:
      return DataType::Boolean();
    case Literal::Kind::kInteger:
      return lit.integer >= INT32_MIN && lit.integer <= INT32_MAX ? DataType::Int32()
                                                                  : DataType::Int64();
    case Literal::Kind::kDecimal:
      return DataType::Decimal(dec.precision, dec.scale);
    case Literal::Kind::kDouble:
      return DataType::Double();
    case Literal::Kind::kString:
      return DataType::String();
  }
  return DataType::String();
}

std::string TypeName(const DataType& t) { return json::SqlTypeName(t); }

// Precision/scale an integer type needs as a decimal.
DecimalLiteral IntegerAsDecimalShape(TypeId id) {
  DecimalLiteral d;
  d.precision = id == TypeId::kInt32 ? 10 : 19;
  d.scale = 0;
  return d;
}

Result<Node> CompileExpr(const Expr& e, const BatchSchema& schema, const Scratch& scratch) {
  Node n;
  n.kind = e.kind;
  n.pos = e.pos;
  n.text = ToString(e);
  switch (e.kind) {
    case ExprKind::kColumn: {
      n.column = schema.FieldIndex(e.name);
      if (n.column < 0) {
        return Status::InvalidArgument(Where(e.pos) + "unknown column '" + e.name + "'");
      }
      n.type = schema.fields[static_cast<size_t>(n.column)].type;
      return n;
    }
    case ExprKind::kLiteral: {
      n.literal = e.literal;
      if (e.literal.kind == Literal::Kind::kDecimal) {
        Result<DataType> type = DecimalLiteralType(e.literal.text, &n.dec.unscaled);
        if (!type.ok()) return Status::InvalidArgument(Where(e.pos) + type.status().message());
        n.dec.precision = type->precision;
        n.dec.scale = type->scale;
      } else if (e.literal.kind == Literal::Kind::kInteger) {
        n.dec.unscaled = e.literal.integer;
        n.dec.precision = DigitCount(e.literal.integer);
      }
      n.type = LiteralType(e.literal, n.dec);
      return n;
    }
    case ExprKind::kAnd:
    case ExprKind::kOr:
    case ExprKind::kNot: {
      n.type = DataType::Boolean();
      for (const Expr& c : e.children) {
        FLOE_ASSIGN_OR_RAISE(Node child, CompileExpr(c, schema, scratch));
        if (!child.is_bool()) {
          const char* what = e.kind == ExprKind::kAnd  ? "AND"
                             : e.kind == ExprKind::kOr ? "OR"
                                                       : "NOT";
          return Status::InvalidArgument(Where(c.pos) + what + " needs BOOLEAN operands, but " +
                                         child.text + " is " + TypeName(child.type));
        }
        n.children.push_back(std::move(child));
      }
      return n;
    }
    case ExprKind::kIsNull:
    case ExprKind::kIsNotNull: {
      n.type = DataType::Boolean();
      FLOE_ASSIGN_OR_RAISE(Node child, CompileExpr(e.children.at(0), schema, scratch));
      n.children.push_back(std::move(child));
      return n;
    }
    case ExprKind::kCompare: {
      n.type = DataType::Boolean();
      n.op = e.op;
      FLOE_ASSIGN_OR_RAISE(Node l, CompileExpr(e.children.at(0), schema, scratch));
      FLOE_ASSIGN_OR_RAISE(Node r, CompileExpr(e.children.at(1), schema, scratch));
      TypeId a = l.type.id, b = r.type.id;
      auto refuse = [&](const std::string& why) {
        return Status::InvalidArgument(Where(e.pos) + "cannot compare " + TypeName(l.type) +
                                       " with " + TypeName(r.type) + " in " + n.text + why);
      };
      if (a == TypeId::kBoolean || b == TypeId::kBoolean) {
        if (a != b) return refuse("");
        n.domain = Domain::kBool;
      } else if (IsNumeric(a) && IsNumeric(b)) {
        if (IsInteger(a) && IsInteger(b)) {
          n.domain = Domain::kInt;
        } else if (IsFloating(a) || IsFloating(b)) {
          n.domain = Domain::kDouble;
        } else {
          // Decimal with decimal or integer: exact at the larger scale when it fits 38 digits.
          DecimalLiteral ls = a == TypeId::kDecimal
                                  ? DecimalLiteral{0, l.type.precision, l.type.scale}
                                  : IntegerAsDecimalShape(a);
          DecimalLiteral rs = b == TypeId::kDecimal
                                  ? DecimalLiteral{0, r.type.precision, r.type.scale}
                                  : IntegerAsDecimalShape(b);
          if (l.kind == ExprKind::kLiteral) ls = l.dec;
          if (r.kind == ExprKind::kLiteral) rs = r.dec;
          int scale = std::max(ls.scale, rs.scale);
          int digits = std::max(ls.precision - ls.scale, rs.precision - rs.scale) + scale;
          if (digits <= 38) {
            n.domain = Domain::kDecimal;
            n.scale = scale;
          } else {
            n.domain = Domain::kDouble;
          }
        }
      } else if ((a == TypeId::kString && b == TypeId::kString) ||
                 (a == TypeId::kBinary && b == TypeId::kBinary)) {
        n.domain = Domain::kBytes;
      } else if (IsTemporal(a) && a == b && l.kind == ExprKind::kColumn &&
                 r.kind == ExprKind::kColumn) {
        n.domain = Domain::kInt;
      } else if (IsTemporal(a) || IsTemporal(b)) {
        return refuse(" (comparing DATE/TIMESTAMP values with literals is not supported yet)");
      } else {
        return refuse("");
      }
      n.children.push_back(std::move(l));
      n.children.push_back(std::move(r));
      return n;
    }
    case ExprKind::kCall:  // aggregates never reach a Calc: the planner sends them elsewhere
    case ExprKind::kCast:
    case ExprKind::kArith:
    case ExprKind::kNegate: {
      FLOE_ASSIGN_OR_RAISE(ScalarExpr value,
                           ScalarExpr::Compile(e, schema, "in WHERE and the select list"));
      n.kind = ExprKind::kColumn;
      n.type = value.type().type;
      n.column = static_cast<int>(scratch.first + scratch.exprs->size());
      scratch.exprs->push_back(std::move(value));
      return n;
    }
  }
  return Status::Internal("unknown expression kind");
}

// ---- evaluation -------------------------------------------------------------------------

// One comparison operand in a domain's representation: a column read directly or converted
// once per batch, or a constant.
template <typename T>
struct Operand {
  const T* data = nullptr;  // null: constant
  T constant{};
  std::vector<T> storage;
  const Column* column = nullptr;  // for nulls

  bool IsNull(size_t i) const { return column != nullptr && column->IsNull(i); }
  T At(size_t i) const { return data != nullptr ? data[i] : constant; }
};

template <typename T, typename Cmp>
void CompareRows(size_t n, const Operand<T>& l, const Operand<T>& r, Cmp cmp, uint8_t* out) {
  bool nulls = (l.column != nullptr && l.column->null_count() > 0) ||
               (r.column != nullptr && r.column->null_count() > 0);
  for (size_t i = 0; i < n; ++i) out[i] = cmp(l.At(i), r.At(i)) ? kTrue : kFalse;
  if (nulls) {
    for (size_t i = 0; i < n; ++i) {
      if (l.IsNull(i) || r.IsNull(i)) out[i] = kUnknown;
    }
  }
}

template <typename T>
void CompareOperands(CompareOp op, size_t n, const Operand<T>& l, const Operand<T>& r,
                     uint8_t* out) {
  switch (op) {
    case CompareOp::kEq:
      return CompareRows(n, l, r, std::equal_to<T>(), out);
    case CompareOp::kNe:
      return CompareRows(n, l, r, std::not_equal_to<T>(), out);
    case CompareOp::kLt:
      return CompareRows(n, l, r, std::less<T>(), out);
    case CompareOp::kLe:
      return CompareRows(n, l, r, std::less_equal<T>(), out);
    case CompareOp::kGt:
      return CompareRows(n, l, r, std::greater<T>(), out);
    case CompareOp::kGe:
      return CompareRows(n, l, r, std::greater_equal<T>(), out);
  }
}

Operand<int64_t> IntOperand(const Node& node, const Columns& batch) {
  Operand<int64_t> o;
  if (node.kind == ExprKind::kLiteral) {
    o.constant = node.literal.integer;
    return o;
  }
  const Column& c = batch.column(static_cast<size_t>(node.column));
  o.column = &c;
  if (c.type().fixed_width() == 8) {
    o.data = c.values<int64_t>();
  } else {
    o.storage.resize(c.size());
    const int32_t* v = c.values<int32_t>();
    for (size_t i = 0; i < c.size(); ++i) o.storage[i] = v[i];
    o.data = o.storage.data();
  }
  return o;
}

double LiteralAsDouble(const Node& node) {
  switch (node.literal.kind) {
    case Literal::Kind::kInteger:
      return static_cast<double>(node.literal.integer);
    case Literal::Kind::kDouble:
      return node.literal.real;
    default:
      return std::strtod(node.literal.text.c_str(), nullptr);
  }
}

double ValueAsDouble(const Column& c, size_t i) {
  switch (c.type().id) {
    case TypeId::kInt32:
      return c.Get<int32_t>(i);
    case TypeId::kInt64:
      return static_cast<double>(c.Get<int64_t>(i));
    case TypeId::kFloat:
      return c.Get<float>(i);
    case TypeId::kDouble:
      return c.Get<double>(i);
    case TypeId::kDecimal:
      return DecimalToDouble(c.Get<Int128>(i), c.type().scale);
    default:
      return 0;
  }
}

Operand<double> DoubleOperand(const Node& node, const Columns& batch) {
  Operand<double> o;
  if (node.kind == ExprKind::kLiteral) {
    o.constant = LiteralAsDouble(node);
    return o;
  }
  const Column& c = batch.column(static_cast<size_t>(node.column));
  o.column = &c;
  if (c.type().id == TypeId::kDouble) {
    o.data = c.values<double>();
    return o;
  }
  o.storage.resize(c.size());
  for (size_t i = 0; i < c.size(); ++i) o.storage[i] = ValueAsDouble(c, i);
  o.data = o.storage.data();
  return o;
}

Operand<Int128> DecimalOperand(const Node& node, const Columns& batch, int scale) {
  Operand<Int128> o;
  if (node.kind == ExprKind::kLiteral) {
    o.constant = node.dec.unscaled * Pow10(scale - node.dec.scale);
    return o;
  }
  const Column& c = batch.column(static_cast<size_t>(node.column));
  o.column = &c;
  if (c.type().id == TypeId::kDecimal && c.type().scale == scale) {
    o.data = c.values<Int128>();
    return o;
  }
  int own_scale = c.type().id == TypeId::kDecimal ? c.type().scale : 0;
  Int128 factor = Pow10(scale - own_scale);
  o.storage.resize(c.size());
  for (size_t i = 0; i < c.size(); ++i) {
    Int128 v = c.type().id == TypeId::kDecimal ? c.Get<Int128>(i)
               : c.type().id == TypeId::kInt32 ? Int128(c.Get<int32_t>(i))
                                               : Int128(c.Get<int64_t>(i));
    o.storage[i] = v * factor;
  }
  o.data = o.storage.data();
  return o;
}

void EvalBool(const Node& node, const Columns& batch, std::vector<uint8_t>* out);

void CompareBytes(const Node& node, const Columns& batch, uint8_t* out) {
  size_t n = batch.num_rows();
  const Node& l = node.children[0];
  const Node& r = node.children[1];
  auto get = [&](const Node& side, size_t i) -> std::string_view {
    if (side.kind == ExprKind::kLiteral) return side.literal.text;
    return batch.column(static_cast<size_t>(side.column)).GetBytes(i);
  };
  auto is_null = [&](const Node& side, size_t i) {
    return side.kind == ExprKind::kColumn &&
           batch.column(static_cast<size_t>(side.column)).IsNull(i);
  };
  for (size_t i = 0; i < n; ++i) {
    if (is_null(l, i) || is_null(r, i)) {
      out[i] = kUnknown;
      continue;
    }
    int c = get(l, i).compare(get(r, i));
    bool v = false;
    switch (node.op) {
      case CompareOp::kEq:
        v = c == 0;
        break;
      case CompareOp::kNe:
        v = c != 0;
        break;
      case CompareOp::kLt:
        v = c < 0;
        break;
      case CompareOp::kLe:
        v = c <= 0;
        break;
      case CompareOp::kGt:
        v = c > 0;
        break;
      case CompareOp::kGe:
        v = c >= 0;
        break;
    }
    out[i] = v ? kTrue : kFalse;
  }
}

void EvalCompare(const Node& node, const Columns& batch, std::vector<uint8_t>* out) {
  size_t n = batch.num_rows();
  const Node& l = node.children[0];
  const Node& r = node.children[1];
  switch (node.domain) {
    case Domain::kBool: {
      std::vector<uint8_t> a, b;
      EvalBool(l, batch, &a);
      EvalBool(r, batch, &b);
      Operand<int64_t> la, rb;
      // Truth values are compared as 0/1 once unknowns are set aside.
      la.storage.assign(a.begin(), a.end());
      rb.storage.assign(b.begin(), b.end());
      la.data = la.storage.data();
      rb.data = rb.storage.data();
      CompareOperands(node.op, n, la, rb, out->data());
      for (size_t i = 0; i < n; ++i) {
        if (a[i] == kUnknown || b[i] == kUnknown) (*out)[i] = kUnknown;
      }
      return;
    }
    case Domain::kInt:
      return CompareOperands(node.op, n, IntOperand(l, batch), IntOperand(r, batch), out->data());
    case Domain::kDouble:
      return CompareOperands(node.op, n, DoubleOperand(l, batch), DoubleOperand(r, batch),
                             out->data());
    case Domain::kDecimal:
      return CompareOperands(node.op, n, DecimalOperand(l, batch, node.scale),
                             DecimalOperand(r, batch, node.scale), out->data());
    case Domain::kBytes:
      return CompareBytes(node, batch, out->data());
  }
}

void EvalBool(const Node& node, const Columns& batch, std::vector<uint8_t>* out) {
  size_t n = batch.num_rows();
  out->assign(n, kFalse);
  switch (node.kind) {
    case ExprKind::kColumn: {
      const Column& c = batch.column(static_cast<size_t>(node.column));
      const uint8_t* v = c.values<uint8_t>();
      for (size_t i = 0; i < n; ++i) (*out)[i] = v[i] != 0 ? kTrue : kFalse;
      if (c.null_count() > 0) {
        for (size_t i = 0; i < n; ++i) {
          if (c.IsNull(i)) (*out)[i] = kUnknown;
        }
      }
      return;
    }
    case ExprKind::kLiteral:
      out->assign(n, node.literal.boolean ? kTrue : kFalse);
      return;
    case ExprKind::kNot:
      EvalBool(node.children[0], batch, out);
      for (uint8_t& v : *out) v = v == kUnknown ? kUnknown : (v == kTrue ? kFalse : kTrue);
      return;
    case ExprKind::kAnd:
    case ExprKind::kOr: {
      bool is_and = node.kind == ExprKind::kAnd;
      EvalBool(node.children[0], batch, out);
      std::vector<uint8_t> other;
      for (size_t c = 1; c < node.children.size(); ++c) {
        EvalBool(node.children[c], batch, &other);
        for (size_t i = 0; i < n; ++i) {
          uint8_t a = (*out)[i], b = other[i];
          uint8_t dominant = is_and ? kFalse : kTrue;
          (*out)[i] = (a == dominant || b == dominant)   ? dominant
                      : (a == kUnknown || b == kUnknown) ? kUnknown
                                                         : (is_and ? kTrue : kFalse);
        }
      }
      return;
    }
    case ExprKind::kIsNull:
    case ExprKind::kIsNotNull: {
      const Node& child = node.children[0];
      uint8_t when_null = node.kind == ExprKind::kIsNull ? kTrue : kFalse;
      uint8_t when_set = when_null == kTrue ? kFalse : kTrue;
      if (child.kind == ExprKind::kColumn) {
        const Column& c = batch.column(static_cast<size_t>(child.column));
        for (size_t i = 0; i < n; ++i) (*out)[i] = c.IsNull(i) ? when_null : when_set;
      } else if (child.kind == ExprKind::kLiteral) {
        out->assign(n, when_set);
      } else {
        EvalBool(child, batch, out);
        for (uint8_t& v : *out) v = v == kUnknown ? when_null : when_set;
      }
      return;
    }
    case ExprKind::kCompare:
      EvalCompare(node, batch, out);
      return;
    case ExprKind::kCall:
    case ExprKind::kCast:
    case ExprKind::kArith:
    case ExprKind::kNegate:
      return;  // compiled into scratch columns
  }
}

// ---- projection --------------------------------------------------------------------------

// How one output column is produced.
struct OutputPlan {
  enum class Kind { kCopy, kCast, kLiteral, kPredicate } kind = Kind::kCopy;
  Node node;
  DataType target;
  bool target_nullable = true;
  std::string target_name;
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
bool LiteralToColumn(const Node& node, const DataType& target, Column* out) {
  const Literal& lit = node.literal;
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
      if (lit.kind != Literal::Kind::kInteger && lit.kind != Literal::Kind::kDecimal &&
          lit.kind != Literal::Kind::kDouble) {
        return false;
      }
      double v = LiteralAsDouble(node);
      if (target.id == TypeId::kFloat) {
        out->Append<float>(static_cast<float>(v));
      } else {
        out->Append<double>(v);
      }
      return true;
    }
    case TypeId::kDecimal: {
      if (lit.kind != Literal::Kind::kInteger && lit.kind != Literal::Kind::kDecimal) return false;
      if (node.dec.scale > target.scale) return false;
      Int128 v = node.dec.unscaled * Pow10(target.scale - node.dec.scale);
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

void CastValue(const Column& in, size_t row, const DataType& to, Column* out) {
  const DataType& from = in.type();
  switch (to.id) {
    case TypeId::kInt64:
      out->Append<int64_t>(in.Get<int32_t>(row));
      return;
    case TypeId::kDouble:
      out->Append<double>(ValueAsDouble(in, row));
      return;
    case TypeId::kDecimal: {
      Int128 v = from.id == TypeId::kDecimal ? in.Get<Int128>(row)
                 : from.id == TypeId::kInt32 ? Int128(in.Get<int32_t>(row))
                                             : Int128(in.Get<int64_t>(row));
      int own_scale = from.id == TypeId::kDecimal ? from.scale : 0;
      out->Append<Int128>(v * Pow10(to.scale - own_scale));
      return;
    }
    default:
      out->AppendFrom(in, row);  // unreachable: IsWidening admits nothing else
  }
}

}  // namespace

struct CalcProgram::Impl {
  std::shared_ptr<const BatchSchema> input;
  std::shared_ptr<const BatchSchema> output;
  std::optional<Node> where;
  std::vector<OutputPlan> outputs;
  std::string sink_name;
  bool identity = false;
  // Reserved columns ending the input (the row kind, the source split): passed through after
  // the output's columns, for the rows kept.
  size_t reserved = 0;
  // Value expressions computed per batch (Scratch): the WHERE's over every row, then the
  // select list's over the rows kept.
  std::vector<ScalarExpr> where_scratch;
  std::vector<ScalarExpr> select_scratch;

  // The rows WHERE keeps, in order; `scratch` gets the WHERE's scratch columns.
  Result<std::vector<uint32_t>> Filter(const RecordBatch& batch,
                                       std::vector<Column>* scratch) const;
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
  if (spec.where.has_value()) {
    const Scratch scratch{spec.input->fields.size(), &impl->where_scratch};
    FLOE_ASSIGN_OR_RAISE(Node where, CompileExpr(*spec.where, *visible, scratch));
    if (!where.is_bool()) {
      return Status::InvalidArgument(Where(spec.where->pos) +
                                     "WHERE needs a BOOLEAN condition, but " + where.text + " is " +
                                     TypeName(where.type));
    }
    impl->where = std::move(where);
  }
  std::vector<SelectItem> items = spec.select;
  if (items.empty()) {
    for (const Field& f : visible->fields) items.push_back({Expr::Column(f.name), ""});
  }
  const std::vector<Field>& sink = spec.output->fields;
  if (items.size() != sink.size()) {
    return Status::InvalidArgument("the query produces " + std::to_string(items.size()) +
                                   " columns but sink '" + spec.sink_name + "' has " +
                                   std::to_string(sink.size()));
  }
  const Scratch select_scratch{spec.input->fields.size() + impl->where_scratch.size(),
                               &impl->select_scratch};
  for (size_t i = 0; i < items.size(); ++i) {
    const SelectItem& item = items[i];
    const Field& target = sink[i];
    OutputPlan plan;
    FLOE_ASSIGN_OR_RAISE(plan.node, CompileExpr(item.expr, *visible, select_scratch));
    plan.target = target.type;
    plan.target_nullable = target.nullable;
    plan.target_name = target.name;
    auto mismatch = [&](const std::string& extra) {
      std::string name = item.alias.empty() ? plan.node.text : item.alias;
      return Status::InvalidArgument(
          Where(item.expr.pos) + "query column " + std::to_string(i + 1) + " '" + name +
          "' has type " + TypeName(plan.node.type) + " but column '" + target.name + "' of sink '" +
          spec.sink_name + "' is " + TypeName(target.type) + extra);
    };
    if (plan.node.kind == ExprKind::kLiteral) {
      plan.kind = OutputPlan::Kind::kLiteral;
      plan.literal_value = Column(target.type);
      if (!LiteralToColumn(plan.node, target.type, &plan.literal_value)) {
        return mismatch(" (the literal does not convert to it exactly)");
      }
    } else if (plan.node.kind == ExprKind::kColumn) {
      if (plan.node.type == target.type) {
        plan.kind = OutputPlan::Kind::kCopy;
      } else if (IsWidening(plan.node.type, target.type)) {
        plan.kind = OutputPlan::Kind::kCast;
      } else {
        return mismatch("");
      }
    } else {
      if (target.type.id != TypeId::kBoolean) return mismatch("");
      plan.kind = OutputPlan::Kind::kPredicate;
    }
    impl->outputs.push_back(std::move(plan));
  }
  impl->identity = !impl->where.has_value() && spec.select.empty() && *visible == *spec.output;
  return std::shared_ptr<const CalcProgram>(std::make_shared<CalcProgram>(std::move(impl)));
}

const std::shared_ptr<const BatchSchema>& CalcProgram::output_schema() const {
  return impl_->output;
}

bool CalcProgram::is_identity() const { return impl_->identity; }

// What a row's error names: the Calc's sink.
std::string CalcWhat(const std::string& sink) { return "the query into sink '" + sink + "'"; }

Result<std::vector<uint32_t>> CalcProgram::Impl::Filter(const RecordBatch& batch,
                                                        std::vector<Column>* scratch) const {
  std::vector<uint32_t> rows;
  size_t n = batch.num_rows();
  if (!where.has_value()) {
    rows.resize(n);
    for (size_t i = 0; i < n; ++i) rows[i] = static_cast<uint32_t>(i);
    return rows;
  }
  for (const ScalarExpr& e : where_scratch) {
    FLOE_ASSIGN_OR_RAISE(Column value, e.Evaluate(batch, CalcWhat(sink_name)));
    scratch->push_back(std::move(value));
  }
  std::vector<uint8_t> truth;
  EvalBool(*where, Columns(batch, *scratch), &truth);
  rows.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (truth[i] == kTrue) rows.push_back(static_cast<uint32_t>(i));
  }
  return rows;
}

Result<std::vector<uint32_t>> CalcProgram::Filter(const RecordBatch& batch) const {
  std::vector<Column> scratch;
  return impl_->Filter(batch, &scratch);
}

Result<RecordBatch> CalcProgram::Apply(const RecordBatch& batch) const {
  std::vector<Column> scratch;
  FLOE_ASSIGN_OR_RAISE(std::vector<uint32_t> rows, impl_->Filter(batch, &scratch));
  bool all = rows.size() == batch.num_rows();
  if (!impl_->select_scratch.empty()) {
    // Only the rows kept are evaluated (as Flink's Calc projects after its condition), so a
    // row the WHERE drops cannot fail the projection.
    std::vector<uint8_t> keep(batch.num_rows(), all ? 1 : 0);
    if (!all) {
      for (uint32_t r : rows) keep[r] = 1;
    }
    for (const ScalarExpr& e : impl_->select_scratch) {
      FLOE_ASSIGN_OR_RAISE(Column value,
                           e.Evaluate(batch, CalcWhat(impl_->sink_name), keep.data()));
      scratch.push_back(std::move(value));
    }
  }
  const Columns input(batch, scratch);
  std::vector<Column> columns;
  columns.reserve(impl_->outputs.size());
  std::vector<uint8_t> truth;
  for (const OutputPlan& plan : impl_->outputs) {
    Column out(plan.target);
    switch (plan.kind) {
      case OutputPlan::Kind::kCopy: {
        const Column& in = input.column(static_cast<size_t>(plan.node.column));
        if (all) {
          out = in;
        } else {
          out.Reserve(rows.size());
          for (uint32_t r : rows) out.AppendFrom(in, r);
        }
        break;
      }
      case OutputPlan::Kind::kCast: {
        const Column& in = input.column(static_cast<size_t>(plan.node.column));
        out.Reserve(rows.size());
        for (uint32_t r : rows) {
          if (in.IsNull(r)) {
            out.AppendNull();
          } else {
            CastValue(in, r, plan.target, &out);
          }
        }
        break;
      }
      case OutputPlan::Kind::kLiteral:
        out.Reserve(rows.size());
        for (size_t k = 0; k < rows.size(); ++k) out.AppendFrom(plan.literal_value, 0);
        break;
      case OutputPlan::Kind::kPredicate:
        EvalBool(plan.node, input, &truth);
        out.Reserve(rows.size());
        for (uint32_t r : rows) {
          if (truth[r] == kUnknown) {
            out.AppendNull();
          } else {
            out.Append<uint8_t>(truth[r] == kTrue ? 1 : 0);
          }
        }
        break;
    }
    if (!plan.target_nullable && out.null_count() > 0) {
      return Status::InvalidArgument(
          "column '" + plan.target_name + "' of sink '" + impl_->sink_name +
          "' is NOT NULL but the query produced a NULL for it (from " + plan.node.text + ")");
    }
    columns.push_back(std::move(out));
  }
  for (size_t c = batch.num_columns() - impl_->reserved; c < batch.num_columns(); ++c) {
    const Column& in = batch.column(c);
    if (all) {
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
  FLOE_ASSIGN_OR_RAISE(RecordBatch result, program_->Apply(batch));
  if (result.num_rows() == 0) return Status::OK();
  return out.Emit(std::move(result));
}

}  // namespace floe::sql

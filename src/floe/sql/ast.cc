#include "floe/sql/ast.h"

#include <charconv>
#include <string>
#include <utility>

#include "floe/sql/lexer_internal.h"

namespace floe::sql {
namespace {

Expr WithChildren(ExprKind kind, std::vector<Expr> children) {
  Expr e;
  e.kind = kind;
  e.children = std::move(children);
  return e;
}

Expr WithTwo(ExprKind kind, Expr left, Expr right) {
  std::vector<Expr> children;
  children.push_back(std::move(left));
  children.push_back(std::move(right));
  return WithChildren(kind, std::move(children));
}

std::string QuoteName(std::string_view name) {
  if (internal::IsPlainIdentifier(name)) return std::string(name);
  std::string out = "`";
  for (char c : name) {
    out += c;
    if (c == '`') out += '`';
  }
  return out + "`";
}

std::string LiteralToString(const Literal& literal) {
  switch (literal.kind) {
    case Literal::Kind::kBoolean:
      return literal.boolean ? "TRUE" : "FALSE";
    case Literal::Kind::kInteger:
      return std::to_string(literal.integer);
    case Literal::Kind::kDecimal:
      return literal.text;
    case Literal::Kind::kDouble: {
      char buf[64];
      auto [end, ec] =
          std::to_chars(buf, buf + sizeof(buf), literal.real, std::chars_format::scientific);
      (void)ec;  // 64 bytes hold any double
      return std::string(buf, end);
    }
    case Literal::Kind::kString: {
      std::string out = "'";
      for (char c : literal.text) {
        out += c;
        if (c == '\'') out += '\'';
      }
      return out + "'";
    }
    case Literal::Kind::kNull:
      return "NULL";
  }
  return "?";
}

}  // namespace

Expr Expr::Column(std::string name) {
  Expr e;
  e.kind = ExprKind::kColumn;
  e.name = std::move(name);
  return e;
}

Expr Expr::Lit(Literal literal) {
  Expr e;
  e.kind = ExprKind::kLiteral;
  e.literal = std::move(literal);
  return e;
}

Expr Expr::Compare(CompareOp op, Expr left, Expr right) {
  Expr e = WithTwo(ExprKind::kCompare, std::move(left), std::move(right));
  e.op = op;
  return e;
}

Expr Expr::And(std::vector<Expr> operands) {
  return WithChildren(ExprKind::kAnd, std::move(operands));
}

Expr Expr::Or(std::vector<Expr> operands) {
  return WithChildren(ExprKind::kOr, std::move(operands));
}

Expr Expr::Not(Expr operand) {
  std::vector<Expr> children;
  children.push_back(std::move(operand));
  return WithChildren(ExprKind::kNot, std::move(children));
}

Expr Expr::IsNull(Expr operand) {
  std::vector<Expr> children;
  children.push_back(std::move(operand));
  return WithChildren(ExprKind::kIsNull, std::move(children));
}

Expr Expr::IsNotNull(Expr operand) {
  std::vector<Expr> children;
  children.push_back(std::move(operand));
  return WithChildren(ExprKind::kIsNotNull, std::move(children));
}

Expr Expr::Call(std::string name, std::vector<Expr> args) {
  Expr e = WithChildren(ExprKind::kCall, std::move(args));
  e.name = std::move(name);
  return e;
}

Expr Expr::CountStar() {
  Expr e = Call("COUNT", {});
  e.star = true;
  return e;
}

Expr Expr::Cast(Expr operand, SqlType type) {
  std::vector<Expr> children;
  children.push_back(std::move(operand));
  Expr e = WithChildren(ExprKind::kCast, std::move(children));
  e.cast_type = type;
  return e;
}

Expr Expr::Arith(ArithOp op, Expr left, Expr right) {
  Expr e = WithTwo(ExprKind::kArith, std::move(left), std::move(right));
  e.arith = op;
  return e;
}

Expr Expr::Negate(Expr operand) {
  std::vector<Expr> children;
  children.push_back(std::move(operand));
  return WithChildren(ExprKind::kNegate, std::move(children));
}

Expr Expr::Case(std::vector<Expr> whens_thens_else) {
  return WithChildren(ExprKind::kCase, std::move(whens_thens_else));
}

std::string_view ToString(ArithOp op) {
  switch (op) {
    case ArithOp::kAdd:
      return "+";
    case ArithOp::kSub:
      return "-";
    case ArithOp::kMul:
      return "*";
    case ArithOp::kDiv:
      return "/";
    case ArithOp::kMod:
      return "%";
  }
  return "?";
}

std::string ToString(const SqlType& type) {
  switch (type.type.id) {
    case TypeId::kTimestamp:
      return "TIMESTAMP(" + std::to_string(type.precision) + ")";
    case TypeId::kTimestampTz:
      return "TIMESTAMP_LTZ(" + std::to_string(type.precision) + ")";
    case TypeId::kTime:
      return "TIME(" + std::to_string(type.precision) + ")";
    default:
      return SqlTypeName(type.type);
  }
}

std::string_view ToString(WindowKind kind) {
  switch (kind) {
    case WindowKind::kTumble:
      return "TUMBLE";
    case WindowKind::kHop:
      return "HOP";
    case WindowKind::kCumulate:
      return "CUMULATE";
    case WindowKind::kSession:
      return "SESSION";
  }
  return "?";
}

std::string_view ToString(CompareOp op) {
  switch (op) {
    case CompareOp::kEq:
      return "=";
    case CompareOp::kNe:
      return "<>";
    case CompareOp::kLt:
      return "<";
    case CompareOp::kLe:
      return "<=";
    case CompareOp::kGt:
      return ">";
    case CompareOp::kGe:
      return ">=";
  }
  return "?";
}

std::string ToString(const Expr& expr) {
  switch (expr.kind) {
    case ExprKind::kColumn:
      return QuoteName(expr.name);
    case ExprKind::kLiteral:
      return LiteralToString(expr.literal);
    case ExprKind::kCompare:
      return "(" + ToString(expr.children.at(0)) + " " + std::string(ToString(expr.op)) + " " +
             ToString(expr.children.at(1)) + ")";
    case ExprKind::kAnd:
    case ExprKind::kOr: {
      std::string out = "(";
      for (size_t i = 0; i < expr.children.size(); ++i) {
        if (i > 0) out += expr.kind == ExprKind::kAnd ? " AND " : " OR ";
        out += ToString(expr.children[i]);
      }
      return out + ")";
    }
    case ExprKind::kNot:
      return "(NOT " + ToString(expr.children.at(0)) + ")";
    case ExprKind::kIsNull:
      return "(" + ToString(expr.children.at(0)) + " IS NULL)";
    case ExprKind::kIsNotNull:
      return "(" + ToString(expr.children.at(0)) + " IS NOT NULL)";
    case ExprKind::kCall: {
      if (expr.star) return expr.name + "(*)";
      std::string out = expr.name + "(" + (expr.distinct ? "DISTINCT " : "");
      for (size_t i = 0; i < expr.children.size(); ++i) {
        if (i > 0) out += ", ";
        out += ToString(expr.children[i]);
      }
      return out + ")";
    }
    case ExprKind::kCast:  // name: "TRY_CAST" for one, empty for CAST
      return (expr.name.empty() ? std::string("CAST") : expr.name) + "(" +
             ToString(expr.children.at(0)) + " AS " + ToString(expr.cast_type) + ")";
    case ExprKind::kArith:
      return "(" + ToString(expr.children.at(0)) + " " + std::string(ToString(expr.arith)) + " " +
             ToString(expr.children.at(1)) + ")";
    case ExprKind::kNegate:
      return "(- " + ToString(expr.children.at(0)) + ")";
    case ExprKind::kCase: {
      std::string out = "CASE";
      const size_t pairs = expr.children.size() / 2;
      for (size_t i = 0; i < pairs; ++i) {
        out += " WHEN " + ToString(expr.children[2 * i]) + " THEN " +
               ToString(expr.children[2 * i + 1]);
      }
      return out + " ELSE " + ToString(expr.children.back()) + " END";
    }
  }
  return "?";
}

const ColumnDef* CreateTable::FindColumn(std::string_view name) const {
  for (const ColumnDef& c : columns) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

int CreateTable::ColumnIndex(std::string_view name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

bool CreateTable::has_computed_columns() const {
  for (const ColumnDef& c : columns) {
    if (c.computed) return true;
  }
  return false;
}

const CreateTable* Script::FindTable(std::string_view name) const {
  for (const CreateTable& t : tables) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace floe::sql

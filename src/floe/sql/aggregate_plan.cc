#include "floe/sql/aggregate_plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "floe/sql/scalar_types.h"

namespace floe::sql {
namespace {

Status ErrorAt(const SourcePos& pos, const std::string& message) {
  return Status::InvalidArgument("line " + std::to_string(pos.line) + ", column " +
                                 std::to_string(pos.column) + ": " + message);
}

bool IsWindowColumn(std::string_view name) {
  return name == kWindowStart || name == kWindowEnd || name == kWindowTime;
}

std::optional<AggregateFunction> AggregateOf(std::string_view name) {
  if (name == "COUNT") return AggregateFunction::kCount;
  if (name == "SUM") return AggregateFunction::kSum;
  if (name == "MIN") return AggregateFunction::kMin;
  if (name == "MAX") return AggregateFunction::kMax;
  if (name == "AVG") return AggregateFunction::kAvg;
  if (name == "LISTAGG") return AggregateFunction::kListAgg;
  return std::nullopt;
}

bool ContainsAggregate(const Expr& e) {
  if (e.kind == ExprKind::kCall && (AggregateOf(e.name) || IsReducedAggregate(e.name))) {
    return true;
  }
  return std::any_of(e.children.begin(), e.children.end(), ContainsAggregate);
}

// The first reference to a window column in `e`, or nullptr.
const Expr* FindWindowColumn(const Expr& e) {
  if (e.kind == ExprKind::kColumn && IsWindowColumn(e.name)) return &e;
  for (const Expr& child : e.children) {
    if (const Expr* found = FindWindowColumn(child)) return found;
  }
  return nullptr;
}

std::string TypeText(const DataType& type, bool nullable) {
  return SqlTypeName(type) + (nullable ? "" : " NOT NULL");
}

// The aggregate call `e` (AddAggregate's); `windowed`: the query reads a window TVF, whose
// window_* columns are not the table's.
Result<AggregateCall> PlanCall(const Expr& e, const CreateTable& source, const BatchSchema& input,
                               bool windowed) {
  std::optional<AggregateFunction> function = AggregateOf(e.name);
  if (!function) return Status::Internal("not an aggregate: " + ToString(e));
  AggregateCall call;
  call.function = *function;
  call.distinct = e.distinct;
  if (e.star) {
    call.output_type = DataType::Int64();
    call.nullable = false;
    return call;
  }
  if (*function == AggregateFunction::kListAgg && e.children.size() == 2) {
    const Expr& sep = e.children[1];
    if (sep.kind != ExprKind::kLiteral || sep.literal.kind != Literal::Kind::kString) {
      return ErrorAt(sep.pos, "LISTAGG's separator must be a string literal, not " + ToString(sep));
    }
    call.separator = sep.literal.text;
  } else if (e.children.size() != 1) {
    return ErrorAt(e.pos, e.name + " takes one argument" +
                              (*function == AggregateFunction::kCount && e.children.size() > 1
                                   ? " (COUNT over several columns is not supported yet)"
                                   : ""));
  }
  const Expr& arg = e.children[0];
  if (ContainsAggregate(arg)) {
    return ErrorAt(arg.pos, "aggregate functions cannot be nested (" + ToString(e) + ")");
  }
  if (arg.kind != ExprKind::kColumn) {
    return ErrorAt(arg.pos, "the argument of " + e.name +
                                " must be a column (expressions in aggregates are not supported "
                                "yet): " +
                                ToString(e));
  }
  if (windowed && IsWindowColumn(arg.name)) {
    return ErrorAt(arg.pos, "aggregating the window column '" + arg.name +
                                "' is not supported; it is the same for every row of a window");
  }
  call.input_column = input.FieldIndex(arg.name);
  if (call.input_column < 0) {
    return Status::Internal("column '" + arg.name + "' of '" + source.name +
                            "' passed the parser but is not in the input schema");
  }
  const Field& field = input.fields[static_cast<size_t>(call.input_column)];
  const DataType& t = field.type;
  switch (*function) {
    case AggregateFunction::kCount:
      call.output_type = DataType::Int64();
      call.nullable = false;
      return call;
    case AggregateFunction::kSum:
    case AggregateFunction::kAvg:
      if (!IsNumericType(t.id)) {
        return ErrorAt(e.pos, e.name + " needs a numeric argument, but column '" + arg.name +
                                  "' is " + SqlTypeName(t));
      }
      call.output_type = t;
      if (t.id == TypeId::kDecimal) {
        call.output_type = *function == AggregateFunction::kSum
                               ? DataType::Decimal(38, t.scale)
                               : DataType::Decimal(38, std::max(6, t.scale));
      }
      return call;
    case AggregateFunction::kListAgg:
      if (t.id != TypeId::kString) {
        return ErrorAt(e.pos, "LISTAGG needs a STRING argument, but column '" + arg.name + "' is " +
                                  SqlTypeName(t));
      }
      call.output_type = DataType::String();
      return call;
    case AggregateFunction::kMin:
    case AggregateFunction::kMax:
      if (t.id == TypeId::kBinary) {
        return ErrorAt(e.pos, e.name + " of a BYTES column is not supported yet");
      }
      call.output_type = t;
      return call;
  }
  return Status::Internal("unknown aggregate function");
}

// The window TVF of an aggregation: consumed by a window aggregation.
Result<WindowSpec> PlanWindow(const Insert& insert, const CreateTable& source) {
  const WindowTvf& w = *insert.window;
  if (insert.group_by.empty()) {
    return ErrorAt(w.pos, "the " + std::string(ToString(w.kind)) +
                              " window table-valued function of an aggregation must be consumed "
                              "by a window aggregation: GROUP BY window_start, window_end[, keys]");
  }
  return PlanWindowTvf(w, source);
}

}  // namespace

Result<WindowSpec> PlanWindowTvf(const WindowTvf& w, const CreateTable& source) {
  std::string fn(ToString(w.kind));
  for (const ColumnDef& c : source.columns) {
    if (IsWindowColumn(c.name)) {
      return ErrorAt(c.pos, "table '" + source.name + "' has a column named '" + c.name +
                                "', which the " + fn + " window would add again");
    }
  }
  if (const ColumnDef* c = source.FindColumn(w.time_column); c != nullptr && c->is_proctime()) {
    return ErrorAt(w.time_column_pos, "DESCRIPTOR(" + w.time_column +
                                          ") is a processing-time attribute (PROCTIME()): "
                                          "processing-time windows are not supported yet");
  }
  if (!source.watermark) {
    return ErrorAt(w.time_column_pos,
                   "DESCRIPTOR(" + w.time_column + ") is not a time attribute: table '" +
                       source.name +
                       "' has no WATERMARK (declare one: WATERMARK FOR col AS col - INTERVAL "
                       "'5' SECOND); processing-time windows are not supported yet");
  }
  if (w.time_column != source.watermark->column) {
    return ErrorAt(w.time_column_pos, "DESCRIPTOR(" + w.time_column +
                                          ") is not a time attribute: the event-time "
                                          "attribute of table '" +
                                          source.name + "' is '" + source.watermark->column +
                                          "' (its WATERMARK column)");
  }
  if (w.kind == WindowKind::kSession && w.offset_millis) {
    return ErrorAt(w.offset_pos, "SESSION windows take no offset");
  }
  WindowSpec spec;
  spec.kind = w.kind;
  spec.size_ms = w.size_millis;
  spec.step_ms = w.step_millis;
  spec.offset_ms = w.offset_millis.value_or(0);
  spec.time_column = source.ColumnIndex(w.time_column);
  return spec;
}

namespace {

// WHERE runs before the aggregate, on the table's columns.
Status CheckWhere(const Expr& where, bool windowed) {
  if (ContainsAggregate(where)) {
    return ErrorAt(where.pos,
                   "aggregate functions are not allowed in WHERE; filter groups with HAVING");
  }
  if (const Expr* wc = windowed ? FindWindowColumn(where) : nullptr) {
    return ErrorAt(wc->pos, "filtering on '" + wc->name +
                                "' before the window aggregation is not supported yet");
  }
  return Status::OK();
}

bool InEverySet(const Insert& insert, size_t item) {
  return std::all_of(
      insert.grouping_sets.begin(), insert.grouping_sets.end(), [&](const std::vector<int>& set) {
        return std::find(set.begin(), set.end(), static_cast<int>(item)) != set.end();
      });
}

// GROUPING SETS, CUBE, ROLLUP: each set as the keys it groups by; window columns in every set.
Status PlanGroupingSets(const Insert& insert, const std::vector<int>& key_items,
                        AggregatePlan* plan) {
  if (insert.grouping_sets.empty()) return Status::OK();
  for (size_t i = 0; i < insert.group_by.size(); ++i) {
    const Expr& item = insert.group_by[i];
    if (insert.window && IsWindowColumn(item.name) && !InEverySet(insert, i)) {
      return ErrorAt(item.pos, item.name +
                                   " must be in every grouping set of a window aggregation "
                                   "(GROUP BY window_start, window_end, GROUPING SETS (...))");
    }
  }
  if (insert.window && insert.window->kind == WindowKind::kSession) {
    return ErrorAt(insert.group_by_pos,
                   "GROUPING SETS, CUBE and ROLLUP over SESSION windows are not supported yet");
  }
  for (const std::vector<int>& set : insert.grouping_sets) {
    std::vector<bool> grouped;
    for (int item : key_items) {
      grouped.push_back(std::find(set.begin(), set.end(), item) != set.end());
    }
    plan->grouping_sets.push_back(std::move(grouped));
  }
  return Status::OK();
}

// GROUP BY: columns only; window_start and window_end together, with a window. Sets the plan's
// key columns, grouping sets and groups_by_window_time; returns the keys' names.
Result<std::vector<std::string>> PlanGroupBy(const Insert& insert, AggregatePlan* plan) {
  const BatchSchema& input = *plan->input;
  bool by_start = false, by_end = false;
  std::vector<std::string> key_names;
  std::vector<int> key_items;  // the group_by item of each key
  for (size_t i = 0; i < insert.group_by.size(); ++i) {
    const Expr& item = insert.group_by[i];
    if (item.kind != ExprKind::kColumn) {
      return ErrorAt(item.pos, "GROUP BY takes columns; grouping by " + ToString(item) +
                                   " is not supported yet");
    }
    if (insert.window && item.name == kWindowStart) {
      by_start = true;
    } else if (insert.window && item.name == kWindowEnd) {
      by_end = true;
    } else if (insert.window && item.name == kWindowTime) {
      plan->groups_by_window_time = true;
    } else if (std::find(key_names.begin(), key_names.end(), item.name) == key_names.end()) {
      key_names.push_back(item.name);
      key_items.push_back(static_cast<int>(i));
      plan->key_columns.push_back(input.FieldIndex(item.name));
    }
  }
  FLOE_RETURN_NOT_OK(PlanGroupingSets(insert, key_items, plan));
  if (insert.window && (!by_start || !by_end)) {
    std::string missing = by_start ? "window_end" : by_end ? "window_start" : "";
    SourcePos at = insert.group_by_pos;
    for (const Expr& item : insert.group_by) {
      if (item.name == kWindowStart || item.name == kWindowEnd) at = item.pos;
    }
    if (missing.empty()) {
      return ErrorAt(at,
                     "a window aggregation must GROUP BY window_start, window_end (Flink "
                     "rejects a window table-valued function not consumed by one)");
    }
    return ErrorAt(at, "GROUP BY " + std::string(by_start ? "window_start" : "window_end") +
                           " without " + missing +
                           ": a window aggregation groups by both window_start and window_end");
  }
  if (insert.window && insert.window->kind == WindowKind::kSession) {
    std::set<std::string> partition(insert.window->partition_by.begin(),
                                    insert.window->partition_by.end());
    std::set<std::string> keys(key_names.begin(), key_names.end());
    if (partition != keys) {
      return ErrorAt(insert.window->pos,
                     "SESSION windows are supported with PARTITION BY equal to the GROUP BY "
                     "keys (other than window_start, window_end) only, not yet otherwise");
    }
  }
  return key_names;
}

// Key k as the aggregate emits it: nullable when a grouping set leaves it out.
Field KeyField(const AggregatePlan& plan, size_t k) {
  Field f = plan.input->fields[static_cast<size_t>(plan.key_columns[k])];
  for (const std::vector<bool>& set : plan.grouping_sets) f.nullable = f.nullable || !set[k];
  return f;
}

// GROUPING(k, ...) and GROUPING_ID(k, ...) of grouped columns: per grouping set, a bit per
// argument, the first the highest, 1 where the set leaves the column out (SQL's); 0 without
// grouping sets. A BIGINT over the layout, picked by the set's index column.
Result<Expr> GroupingFunction(const Expr& e, const AggregatePlan& plan,
                              const std::vector<std::string>& key_names) {
  if (e.children.empty()) return ErrorAt(e.pos, e.name + " takes grouped columns");
  std::vector<size_t> keys;
  for (const Expr& arg : e.children) {
    auto key = arg.kind == ExprKind::kColumn
                   ? std::find(key_names.begin(), key_names.end(), arg.name)
                   : key_names.end();
    if (key == key_names.end()) {
      return ErrorAt(arg.pos, "the arguments of " + e.name +
                                  " must be GROUP BY columns (other than window columns), but " +
                                  ToString(arg) + " is not one");
    }
    keys.push_back(static_cast<size_t>(key - key_names.begin()));
  }
  auto value_in = [&](size_t set) {
    int64_t bits = 0;
    for (size_t k : keys) bits = bits << 1 | (plan.grouping_sets[set][k] ? 0 : 1);
    return Expr::Lit(Literal::Integer(bits));
  };
  Expr value = Expr::Lit(Literal::Integer(0));
  if (!plan.grouping_sets.empty()) {
    std::vector<Expr> cases;
    for (size_t s = 0; s + 1 < plan.grouping_sets.size(); ++s) {
      cases.push_back(Expr::Compare(CompareOp::kEq, Expr::Column(std::string(kGroupingSetColumn)),
                                    Expr::Lit(Literal::Integer(static_cast<int64_t>(s)))));
      cases.push_back(value_in(s));
    }
    cases.push_back(value_in(plan.grouping_sets.size() - 1));
    value = cases.size() == 1 ? std::move(cases[0]) : Expr::Case(std::move(cases));
  }
  Expr cast = Expr::Cast(std::move(value), SqlType{DataType::Int64(), 0});
  cast.pos = e.pos;
  return cast;
}

// A column of the select list: a window column (window_time only when grouped by) or a GROUP
// BY key. Sets where it comes from (*out) and its type (*field).
Status PlanSelectColumn(const Expr& e, const AggregatePlan& plan,
                        const std::vector<std::string>& key_names, AggregateOutput* out,
                        Field* field) {
  const BatchSchema& input = *plan.input;
  if (plan.window && IsWindowColumn(e.name)) {
    bool grouped = e.name == kWindowTime ? plan.groups_by_window_time : true;
    if (!grouped) {
      return ErrorAt(e.pos,
                     "window_time is not in the GROUP BY; add it to select it "
                     "(GROUP BY window_start, window_end, window_time)");
    }
    if (e.name == kWindowStart) {
      out->kind = AggregateOutput::Kind::kWindowStart;
      field->type = DataType::Timestamp();
    } else if (e.name == kWindowEnd) {
      out->kind = AggregateOutput::Kind::kWindowEnd;
      field->type = DataType::Timestamp();
    } else {
      out->kind = AggregateOutput::Kind::kWindowTime;
      field->type = input.fields[static_cast<size_t>(plan.window->time_column)].type;
    }
    field->nullable = false;
    return Status::OK();
  }
  auto key = std::find(key_names.begin(), key_names.end(), e.name);
  if (key == key_names.end()) {
    return ErrorAt(e.pos, "column '" + e.name +
                              "' is neither in the GROUP BY nor inside an aggregate "
                              "function");
  }
  out->kind = AggregateOutput::Kind::kKey;
  out->index = static_cast<int>(key - key_names.begin());
  const Field f = KeyField(plan, static_cast<size_t>(out->index));
  field->type = f.type;
  field->nullable = f.nullable;
  return Status::OK();
}

// The aggregate `e`, added to plan->aggregates unless an equal call is there: its index.
Result<int> AddAggregate(const Expr& e, const CreateTable& source, AggregatePlan* plan,
                         std::map<std::string, int>* calls) {
  const std::string text = ToString(e);
  auto it = calls->find(text);
  if (it != calls->end()) return it->second;
  FLOE_ASSIGN_OR_RAISE(AggregateCall call,
                       PlanCall(e, source, *plan->input, plan->window.has_value()));
  const int index = static_cast<int>(plan->aggregates.size());
  plan->aggregates.push_back(call);
  plan->aggregate_names.push_back(text);
  calls->emplace(text, index);
  return index;
}

// `e` over the aggregate's layout (AggregateLayout): aggregates become columns named by their
// SQL, grouped and window columns stay; any other column is neither grouped nor aggregated, and
// a function that is not built in is refused.
Result<Expr> OverLayout(const Expr& e, const CreateTable& source,
                        const std::vector<std::string>& key_names, AggregatePlan* plan,
                        std::map<std::string, int>* calls) {
  if (e.kind == ExprKind::kCall && AggregateOf(e.name)) {
    FLOE_ASSIGN_OR_RAISE(int index, AddAggregate(e, source, plan, calls));
    Expr column = Expr::Column(plan->aggregate_names[static_cast<size_t>(index)]);
    column.pos = e.pos;
    return column;
  }
  if (e.kind == ExprKind::kCall && (e.name == "GROUPING" || e.name == "GROUPING_ID")) {
    return GroupingFunction(e, *plan, key_names);
  }
  if (e.kind == ExprKind::kCall && !IsScalarFunction(e.name)) {
    return ErrorAt(e.pos, "function " + e.name +
                              " is not supported yet: floe runs the built-in functions of "
                              "docs/sql.md, and no user-defined functions");
  }
  if (e.kind == ExprKind::kColumn) {
    AggregateOutput out;
    Field field;
    FLOE_RETURN_NOT_OK(PlanSelectColumn(e, *plan, key_names, &out, &field));
    return e;
  }
  Expr rewritten = e;
  for (Expr& child : rewritten.children) {
    FLOE_ASSIGN_OR_RAISE(child, OverLayout(child, source, key_names, plan, calls));
  }
  return rewritten;
}

// What PlanSelectItem works with besides the item.
struct SelectContext {
  const CreateTable& source;
  const std::vector<std::string>& key_names;
  const ExpressionTyper& typer;
  std::map<std::string, int> calls;  // the aggregates planned so far, by their SQL
};

// An expression over grouped columns and aggregates, typed over the layout by the planner's
// typer.
Result<SqlType> TypeOverLayout(const Expr& e, const Expr& over_layout, const AggregatePlan& plan,
                               const ExpressionTyper& typer) {
  if (!typer) {
    return ErrorAt(e.pos, "select item " + ToString(e) +
                              " is not supported in an aggregation yet: select grouped "
                              "columns and COUNT, SUM, MIN, MAX, AVG of columns");
  }
  return typer(over_layout, *AggregateLayout(plan));
}

// One item of the select list: a grouped column, an aggregate (added to plan->aggregates) or an
// expression over them. Sets where it comes from (*out); returns its field, named by its alias
// or column (else unnamed).
Result<Field> PlanSelectItem(const SelectItem& item, SelectContext& context, AggregatePlan* plan,
                             AggregateOutput* out) {
  const Expr& e = item.expr;
  Field field;
  field.name = item.alias;
  if (e.kind == ExprKind::kColumn) {
    FLOE_RETURN_NOT_OK(PlanSelectColumn(e, *plan, context.key_names, out, &field));
    if (field.name.empty()) field.name = e.name;
    return field;
  }
  if (e.kind == ExprKind::kCall && AggregateOf(e.name)) {
    FLOE_ASSIGN_OR_RAISE(out->index, AddAggregate(e, context.source, plan, &context.calls));
    out->kind = AggregateOutput::Kind::kAggregate;
    const AggregateCall& call = plan->aggregates[static_cast<size_t>(out->index)];
    field.type = call.output_type;
    field.nullable = call.nullable;
    return field;
  }
  FLOE_ASSIGN_OR_RAISE(Expr over_layout,
                       OverLayout(e, context.source, context.key_names, plan, &context.calls));
  FLOE_ASSIGN_OR_RAISE(SqlType type, TypeOverLayout(e, over_layout, *plan, context.typer));
  out->kind = AggregateOutput::Kind::kExpression;
  out->expr = std::move(over_layout);
  field.type = type.type;
  field.nullable = true;
  return field;
}

// The output schema of `fields` with Flink's unique names (a repeated name gets 0, 1, ...
// appended) and field ids 1, 2, ...
std::shared_ptr<const BatchSchema> OutputSchema(std::vector<Field> fields) {
  std::set<std::string> taken;
  for (Field& f : fields) {
    std::string name = f.name;
    for (int n = 0; taken.count(name) != 0; ++n) name = f.name + std::to_string(n);
    f.name = name;
    taken.insert(name);
  }
  auto output = std::make_shared<BatchSchema>();
  int32_t id = 1;
  for (Field& f : fields) {
    f.field_id = id++;
    output->fields.push_back(std::move(f));
  }
  return output;
}

}  // namespace

bool IsAggregateFunction(std::string_view name) { return AggregateOf(name).has_value(); }
bool IsReducedAggregate(std::string_view name) {
  for (std::string_view f :
       {"VAR_POP", "VAR_SAMP", "VARIANCE", "STDDEV_POP", "STDDEV_SAMP", "STDDEV"}) {
    if (name == f) return true;
  }
  return false;
}
bool ContainsAggregateCall(const Expr& e) { return ContainsAggregate(e); }

std::shared_ptr<const BatchSchema> RowSchemaOf(const CreateTable& table) {
  auto schema = std::make_shared<BatchSchema>();
  int32_t id = 1;
  for (const ColumnDef& c : table.columns) {
    bool in_key = std::find(table.primary_key.begin(), table.primary_key.end(), c.name) !=
                  table.primary_key.end();
    Field f{c.name, c.type, !c.not_null && !in_key, id++};
    if (c.type.id == TypeId::kTimestamp || c.type.id == TypeId::kTimestampTz ||
        c.type.id == TypeId::kTime) {
      f.precision = c.precision;
    }
    schema->fields.push_back(std::move(f));
  }
  return schema;
}

std::string_view ToString(AggregateFunction function) {
  switch (function) {
    case AggregateFunction::kCount:
      return "COUNT";
    case AggregateFunction::kSum:
      return "SUM";
    case AggregateFunction::kMin:
      return "MIN";
    case AggregateFunction::kMax:
      return "MAX";
    case AggregateFunction::kAvg:
      return "AVG";
    case AggregateFunction::kListAgg:
      return "LISTAGG";
  }
  return "?";
}

bool AggregatePlan::operator==(const AggregatePlan& other) const {
  auto same = [](const std::shared_ptr<const BatchSchema>& a,
                 const std::shared_ptr<const BatchSchema>& b) {
    return a == b || (a != nullptr && b != nullptr && *a == *b);
  };
  return source == other.source && sink == other.sink && same(input, other.input) &&
         watermark == other.watermark && where == other.where && window == other.window &&
         key_columns == other.key_columns && grouping_sets == other.grouping_sets &&
         groups_by_window_time == other.groups_by_window_time && aggregates == other.aggregates &&
         having == other.having && outputs == other.outputs && same(output, other.output);
}

bool IsAggregateQuery(const Insert& insert) {
  // A window TVF alone is read row by row (WindowTableFunction); with GROUP BY, HAVING or an
  // aggregate it is a window aggregation.
  if (!insert.group_by.empty() || insert.having) return true;
  return std::any_of(insert.select.begin(), insert.select.end(),
                     [](const SelectItem& item) { return ContainsAggregate(item.expr); });
}

std::shared_ptr<const BatchSchema> AggregateLayout(const AggregatePlan& plan) {
  auto layout = std::make_shared<BatchSchema>();
  for (size_t k = 0; k < plan.key_columns.size(); ++k) layout->fields.push_back(KeyField(plan, k));
  if (!plan.grouping_sets.empty()) {
    layout->fields.push_back(Field{std::string(kGroupingSetColumn), DataType::Int64(), false});
  }
  if (plan.window) {
    layout->fields.push_back(Field{std::string(kWindowStart), DataType::Timestamp(), false});
    layout->fields.push_back(Field{std::string(kWindowEnd), DataType::Timestamp(), false});
    layout->fields.push_back(
        Field{std::string(kWindowTime), plan.input->fields[plan.window->time_column].type, false});
  }
  for (size_t i = 0; i < plan.aggregates.size(); ++i) {
    const AggregateCall& a = plan.aggregates[i];
    layout->fields.push_back(Field{plan.aggregate_names[i], a.output_type, a.nullable});
  }
  return layout;
}

Result<AggregatePlan> PlanAggregate(const Script& script, const Insert& insert,
                                    const ExpressionTyper& typer) {
  const CreateTable* source = script.FindTable(insert.source);
  if (source == nullptr) return Status::Internal("INSERT reads a table the parser did not check");
  AggregatePlan plan;
  plan.source = insert.source;
  plan.sink = insert.sink;
  plan.input = RowSchemaOf(*source);
  if (source->watermark) {
    plan.watermark = WatermarkDef{source->ColumnIndex(source->watermark->column),
                                  source->watermark->delay_millis};
  }
  if (insert.window) {
    FLOE_ASSIGN_OR_RAISE(plan.window, PlanWindow(insert, *source));
  }
  if (insert.where) {
    FLOE_RETURN_NOT_OK(CheckWhere(*insert.where, insert.window.has_value()));
    plan.where = insert.where;
  }
  if (insert.select.empty()) {
    return ErrorAt(insert.pos,
                   "SELECT * cannot be aggregated: list the GROUP BY columns and the aggregates");
  }
  FLOE_ASSIGN_OR_RAISE(std::vector<std::string> key_names, PlanGroupBy(insert, &plan));

  // The select list: grouped columns, aggregates and expressions over them, in any order.
  SelectContext context{*source, key_names, typer, {}};
  std::vector<Field> fields;
  for (size_t i = 0; i < insert.select.size(); ++i) {
    AggregateOutput out;
    FLOE_ASSIGN_OR_RAISE(Field field, PlanSelectItem(insert.select[i], context, &plan, &out));
    if (field.name.empty()) field.name = "EXPR$" + std::to_string(i);
    plan.outputs.push_back(std::move(out));
    fields.push_back(std::move(field));
  }
  if (insert.having) {
    FLOE_ASSIGN_OR_RAISE(Expr having,
                         OverLayout(*insert.having, *source, key_names, &plan, &context.calls));
    FLOE_ASSIGN_OR_RAISE(SqlType type, TypeOverLayout(*insert.having, having, plan, typer));
    if (type.type.id != TypeId::kBoolean) {
      return ErrorAt(insert.having->pos, "HAVING needs a BOOLEAN condition, but " +
                                             ToString(*insert.having) + " is " +
                                             SqlTypeName(type.type));
    }
    plan.having = std::move(having);
  }
  plan.output = OutputSchema(std::move(fields));
  return plan;
}

std::string ToString(const WindowSpec& w, const BatchSchema& input) {
  std::string out = std::string(ToString(w.kind)) + "(";
  out += (w.kind == WindowKind::kSession ? "gap=" : "size=") + std::to_string(w.size_ms) + "ms";
  if (w.step_ms != 0) {
    out += (w.kind == WindowKind::kHop ? ", slide=" : ", step=") + std::to_string(w.step_ms) + "ms";
  }
  if (w.offset_ms != 0) out += ", offset=" + std::to_string(w.offset_ms) + "ms";
  const std::string time =
      w.time_column < 0 ? "*" : input.fields[static_cast<size_t>(w.time_column)].name;
  return out + ", time=" + time + ")";
}

std::string ToString(const AggregatePlan& plan) {
  const BatchSchema& input = *plan.input;
  auto column = [&](int index) {
    return index < 0 ? std::string("*") : input.fields[static_cast<size_t>(index)].name;
  };
  std::string out;
  if (plan.window) {
    out += ToString(*plan.window, input) + " ";
  } else {
    out += "GROUP BY (changelog) ";
  }
  out += "keys=[";
  for (size_t i = 0; i < plan.key_columns.size(); ++i) {
    out += (i > 0 ? ", " : "") + column(plan.key_columns[i]);
  }
  out += "]";
  if (!plan.grouping_sets.empty()) {
    out += " sets=[";
    for (size_t s = 0; s < plan.grouping_sets.size(); ++s) {
      out += s > 0 ? ", (" : "(";
      std::string sep;
      for (size_t k = 0; k < plan.key_columns.size(); ++k) {
        if (!plan.grouping_sets[s][k]) continue;
        out += sep + column(plan.key_columns[k]);
        sep = ", ";
      }
      out += ")";
    }
    out += "]";
  }
  out += " aggs=[";
  for (size_t i = 0; i < plan.aggregates.size(); ++i) {
    const AggregateCall& a = plan.aggregates[i];
    out += (i > 0 ? ", " : "") + std::string(ToString(a.function)) + "(" +
           (a.distinct ? "DISTINCT " : "") + column(a.input_column) +
           "):" + TypeText(a.output_type, a.nullable);
  }
  out += "] out=[";
  for (size_t i = 0; i < plan.output->fields.size(); ++i) {
    const Field& f = plan.output->fields[i];
    out += (i > 0 ? ", " : "") + f.name + " " + TypeText(f.type, f.nullable);
  }
  out += "]";
  if (plan.watermark) {
    out += " watermark=" + column(plan.watermark->column) + "-" +
           std::to_string(plan.watermark->delay_ms) + "ms";
  }
  return out;
}

}  // namespace floe::sql

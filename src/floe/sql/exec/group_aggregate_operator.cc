#include "floe/sql/exec/group_aggregate_operator.h"

#include <cstring>

#include <unordered_map>
#include <utility>

#include "floe/runtime/row_kind.h"

namespace floe::sql {

namespace {
// 2: the state's shape (StateShape); the runtime snapshots the keyed state. 1 (read only): the
// keyed state followed, nested in the operator's blob.
constexpr uint32_t kStateVersion = 2;
constexpr uint32_t kNestedKeyedStateVersion = 1;

Status ReadState(runtime::StateReader& state, runtime::KeyedStateBackend& keyed_state,
                 std::string_view task, std::string_view shape) {
  FLOE_ASSIGN_OR_RAISE(uint32_t version, state.GetU32());
  if (version != kStateVersion && version != kNestedKeyedStateVersion) {
    return Status::Corruption("group aggregate state: unknown format version " +
                              std::to_string(version));
  }
  if (version == kNestedKeyedStateVersion) {
    FLOE_ASSIGN_OR_RAISE(std::string_view keyed, state.GetBytesView());
    runtime::StateReader keyed_reader(keyed);
    FLOE_RETURN_NOT_OK(keyed_state.Restore(keyed_reader));
  } else {
    FLOE_ASSIGN_OR_RAISE(std::string_view restored, state.GetBytesView());
    FLOE_RETURN_NOT_OK(internal::CheckStateShape(task, restored, shape));
  }
  return state.ExpectEnd();
}
}  // namespace

std::shared_ptr<const BatchSchema> GroupAggregateOutput(const GroupAggregateSpec& spec) {
  BatchSchema schema;
  for (int k : spec.key_columns) schema.fields.push_back(spec.input->fields[k]);
  for (size_t i = 0; i < spec.aggregates.size(); ++i) {
    const AggregateCall& a = spec.aggregates[i];
    schema.fields.push_back(Field{"agg" + std::to_string(i), a.output_type, a.nullable, 0});
  }
  std::shared_ptr<const BatchSchema> out = runtime::WithRowKindColumn(schema);
  return spec.split_column < 0 ? out : runtime::WithSourceSplitColumn(*out);
}

Result<std::unique_ptr<GroupAggregateOperator>> GroupAggregateOperator::Make(
    GroupAggregateSpec spec) {
  const int n = spec.input ? static_cast<int>(spec.input->fields.size()) : 0;
  for (int k : spec.key_columns) {
    if (k < 0 || k >= n) return Status::InvalidArgument("group aggregate: key column out of range");
  }
  for (const AggregateCall& a : spec.aggregates) {
    if (a.input_column >= n || (a.input_column < 0 && a.function != AggregateFunction::kCount)) {
      return Status::InvalidArgument("group aggregate: aggregate input out of range");
    }
  }
  if (spec.split_column >= n ||
      (spec.split_column >= 0 &&
       spec.input->fields[spec.split_column].type.id != TypeId::kString)) {
    return Status::InvalidArgument(
        "group aggregate: the source split column must be a STRING column of the input");
  }
  if (spec.changelog && runtime::RowKindIndex(*spec.input) < 0) {
    return Status::InvalidArgument("group aggregate: a changelog input needs its row-kind column");
  }
  return std::unique_ptr<GroupAggregateOperator>(new GroupAggregateOperator(std::move(spec)));
}

GroupAggregateOperator::GroupAggregateOperator(GroupAggregateSpec spec)
    : spec_(std::move(spec)),
      output_(GroupAggregateOutput(spec_)),
      aggregator_(spec_.input, spec_.aggregates, spec_.changelog),
      claims_(spec_.split_column),
      kind_column_(spec_.changelog ? runtime::RowKindIndex(*spec_.input) : -1),
      shape_(internal::StateShape(*spec_.input, spec_.key_columns, spec_.aggregates)) {}

GroupAggregateOperator::~GroupAggregateOperator() = default;

Result<runtime::KeyedStateOptions> GroupAggregateOperator::KeyedStateOptionsFor(
    const GroupAggregateSpec& spec) {
  return runtime::KeyedStateOptions::FromOptions(spec.job_config, {});
}

Status GroupAggregateOperator::Open(const runtime::OperatorContext& ctx) {
  if (ctx.keyed_state == nullptr) {
    return Status::Internal("group aggregate '" + ctx.task.name() + "' has no keyed state");
  }
  state_ = ctx.keyed_state;
  task_ = ctx.task.name();
  FLOE_ASSIGN_OR_RAISE(accumulators_, state_->GetValueState("group-accumulators", /*ttl=*/true));
  FLOE_ASSIGN_OR_RAISE(runtime::KeyedStateOptions options, KeyedStateOptionsFor(spec_));
  emit_unchanged_ = options.ttl.count() > 0;
  return Status::OK();
}

Status GroupAggregateOperator::Restore(runtime::StateReader& state) {
  if (claims_.scaled_out()) return Status::OK();  // its claims bring the state
  return ReadState(state, *state_, task_, shape_);
}

Status GroupAggregateOperator::RestoreRescaled(const std::vector<std::string>& states) {
  if (claims_.scaled_out()) return Status::OK();  // its claims bring the state
  for (const std::string& blob : states) {
    if (blob.empty()) continue;
    runtime::StateReader reader(blob);
    FLOE_RETURN_NOT_OK(ReadState(reader, *state_, task_, shape_));
  }
  return Status::OK();
}

Status GroupAggregateOperator::OnBarrier(runtime::CheckpointId id, runtime::StateWriter& state,
                                         runtime::Collector& out) {
  (void)id, (void)out;
  state.PutU32(kStateVersion);
  state.PutString(shape_);
  return Status::OK();
}

Status GroupAggregateOperator::OnClaimChange(const runtime::ClaimChange& change,
                                             runtime::Collector& out) {
  claims_.Apply(change);
  return runtime::Operator::OnClaimChange(change, out);
}

void GroupAggregateOperator::AppendRow(const internal::AggregateState& state, const char* kind,
                                       std::string_view split, RecordBatch* out,
                                       Status* status) const {
  const size_t keys = spec_.key_columns.size();
  Status st = internal::AppendKey(state.key, keys, out, 0);
  if (!st.ok() && status->ok()) *status = st;
  aggregator_.AppendResults(state, out, keys);
  const size_t kind_column = keys + spec_.aggregates.size();
  out->mutable_column(kind_column).AppendBytes(kind);
  if (claims_.scaled_out()) out->mutable_column(kind_column + 1).AppendBytes(split);
}

namespace {

// Whether the last two rows of `rows` hold the same aggregate values (columns [keys, keys +
// aggregates)).
bool LastTwoRowsAgree(const RecordBatch& rows, size_t keys, size_t aggregates) {
  const size_t a = rows.num_rows() - 2, b = rows.num_rows() - 1;
  for (size_t c = keys; c < keys + aggregates; ++c) {
    const Column& column = rows.column(c);
    if (column.IsNull(a) || column.IsNull(b)) {
      if (column.IsNull(a) != column.IsNull(b)) return false;
      continue;
    }
    const size_t width = column.type().fixed_width();
    if (width == 0) {
      if (column.GetBytes(a) != column.GetBytes(b)) return false;
    } else if (std::memcmp(column.values<uint8_t>() + a * width,
                           column.values<uint8_t>() + b * width, width) != 0) {
      return false;
    }
  }
  return true;
}

}  // namespace

Status GroupAggregateOperator::ProcessBatch(const RecordBatch& batch, int input,
                                            runtime::Collector& out) {
  (void)input;
  // The rows of each key, in first-seen order: one -U/+U (or +I) per key and batch.
  std::unordered_map<std::string, size_t> index;
  std::vector<std::pair<std::string, std::vector<size_t>>> groups;
  for (size_t row = 0; row < batch.num_rows(); ++row) {
    std::string key = internal::KeyOf(batch, row, spec_.key_columns);
    std::string group_key = key;
    if (claims_.scaled_out()) {  // one key in two partitions stays two (docs: kafka.md)
      group_key.append(batch.column(static_cast<size_t>(spec_.split_column)).GetBytes(row));
    }
    auto [it, fresh] = index.try_emplace(std::move(group_key), groups.size());
    if (fresh) groups.emplace_back(std::move(key), std::vector<size_t>{});
    groups[it->second].second.push_back(row);
  }
  RecordBatch changes(output_);
  Status status;
  std::string value;
  for (const auto& [key, rows] : groups) {
    FLOE_RETURN_NOT_OK(claims_.SetKey(*state_, key, batch, rows.front(), spec_.key_columns));
    const std::string_view split =
        claims_.scaled_out()
            ? batch.column(static_cast<size_t>(spec_.split_column)).GetBytes(rows.front())
            : std::string_view();
    FLOE_ASSIGN_OR_RAISE(bool exists, accumulators_.Get(&value));
    internal::AggregateState acc;
    const size_t before = changes.num_rows();
    if (exists) {
      FLOE_ASSIGN_OR_RAISE(acc, internal::AggregateState::Decode(value));
      AppendRow(acc, "-U", split, &changes, &status);
    } else {
      acc = aggregator_.Create(key);
    }
    for (size_t row : rows) {
      if (kind_column_ < 0 || !runtime::IsRetraction(batch.column(kind_column_).GetBytes(row))) {
        aggregator_.Add(batch, row, &acc);
      } else if (exists || acc.rows > 0) {  // a retraction for a group without state: dropped
        aggregator_.Retract(batch, row, &acc);
      }
    }
    if (kind_column_ >= 0 && acc.rows <= 0) {  // every row taken back: the group is gone
      changes.Truncate(before);
      if (exists) {
        FLOE_ASSIGN_OR_RAISE(internal::AggregateState last,
                             internal::AggregateState::Decode(value));
        AppendRow(last, "-D", split, &changes, &status);
      }
      FLOE_RETURN_NOT_OK(accumulators_.Clear());
      continue;
    }
    AppendRow(acc, exists ? "+U" : "+I", split, &changes, &status);
    if (exists && !emit_unchanged_ &&
        LastTwoRowsAgree(changes, spec_.key_columns.size(), spec_.aggregates.size())) {
      changes.Truncate(changes.num_rows() - 2);  // nothing changed: Flink emits nothing
    }
    FLOE_RETURN_NOT_OK(accumulators_.Update(acc.Encode()));
  }
  FLOE_RETURN_NOT_OK(status);
  return out.Emit(std::move(changes));
}

}  // namespace floe::sql

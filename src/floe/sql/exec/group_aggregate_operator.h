#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/runtime/keyed_state.h"
#include "floe/runtime/operator.h"
#include "floe/sql/aggregate_plan.h"
#include "floe/sql/exec/aggregator.h"
#include "floe/sql/exec/claimed_splits.h"

namespace floe::sql {

// A regular GROUP BY aggregation (no window), built from an AggregatePlan without a window.
struct GroupAggregateSpec {
  std::shared_ptr<const BatchSchema> input;
  std::vector<int> key_columns;  // the HASH edge into this operator uses the same columns
  std::vector<AggregateCall> aggregates;
  // The job's settings: state.backend.type and table.exec.state.ttl.
  std::map<std::string, std::string> job_config;
  // Scaled out by Kafka partition: the input's kSourceSplitColumn (-1: not scaled out). A row's
  // key group is then its claim's partition, and output rows carry the claim's split last.
  int split_column = -1;
  // The input is a changelog: its kRowKindColumn tells the rows added (+I, +U) from the rows
  // taken back (-U, -D), which are retracted from their group.
  bool changelog = false;
};

// The output: keys (input names and types), agg0, agg1, ..., then the row-kind column
// (runtime/row_kind.h): a changelog; and kSourceSplitColumn when scaled out.
std::shared_ptr<const BatchSchema> GroupAggregateOutput(const GroupAggregateSpec& spec);

// GroupAggregateOperator keeps one accumulator per key on keyed state and emits a changelog of
// the results, as Flink's GroupAggregate does with mini-batch: after each input batch, a key
// seen for the first time gets +I, a key whose result changed gets -U (the previous result)
// then +U (the new one). Into an upsert Iceberg table the latest value per key lands; print
// shows the kinds. The state is subject to `table.exec.state.ttl` (Flink: a key idle that long
// is forgotten and starts over, emitting +I again). Over a changelog, a group whose rows are
// all taken back is deleted (-D of its last result), and a retraction for a group without
// state is dropped, as Flink's GroupAggFunction does. Checkpointed with the keyed state.
class GroupAggregateOperator final : public runtime::Operator {
 public:
  static Result<std::unique_ptr<GroupAggregateOperator>> Make(GroupAggregateSpec spec);
  ~GroupAggregateOperator() override;

  // The keyed state its vertex needs (JobGraph::SetKeyedState): the job's backend and
  // `table.exec.state.ttl`.
  static Result<runtime::KeyedStateOptions> KeyedStateOptionsFor(const GroupAggregateSpec& spec);

  // REQUIRES: ctx.keyed_state.
  Status Open(const runtime::OperatorContext& ctx) override;
  Status Restore(runtime::StateReader& state) override;
  // All its state is keyed, which the runtime redistributes.
  Status RestoreRescaled(const std::vector<std::string>& states) override;
  Status ProcessBatch(const RecordBatch& batch, int input, runtime::Collector& out) override;
  Status OnBarrier(runtime::CheckpointId id, runtime::StateWriter& state,
                   runtime::Collector& out) override;
  // Scaled out: notes the claim's split (the runtime moved its key group already).
  Status OnClaimChange(const runtime::ClaimChange& change, runtime::Collector& out) override;

 private:
  explicit GroupAggregateOperator(GroupAggregateSpec spec);
  // One changelog row; `split`: the claim's, when scaled out.
  void AppendRow(const internal::AggregateState& state, const char* kind, std::string_view split,
                 RecordBatch* out, Status* status) const;

  GroupAggregateSpec spec_;
  std::shared_ptr<const BatchSchema> output_;
  internal::Aggregator aggregator_;
  runtime::KeyedStateBackend* state_ = nullptr;  // the runtime's
  internal::ClaimedSplits claims_;
  int kind_column_ = -1;  // the input's kRowKindColumn, over a changelog
  runtime::ValueState accumulators_;
  // With `table.exec.state.ttl`, an update that changes no value is still emitted (it refreshes
  // the row downstream), as Flink's GroupAggFunction does; without, it is not.
  bool emit_unchanged_ = false;
  std::string task_;   // for messages
  std::string shape_;  // what its state means, checked at a restore (internal::StateShape)
};

}  // namespace floe::sql

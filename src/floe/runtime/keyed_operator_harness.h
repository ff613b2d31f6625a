#pragma once

// Tests of keyed operators: runs one the way the executor does, with a keyed state backend the
// harness owns and hands over in OperatorContext::keyed_state, and checkpoints written as the
// executor writes a keyed task's state file (task_state.h). Header-only; tests only.

#include <memory>
#include <string>
#include <utility>

#include "floe/runtime/keyed_state.h"
#include "floe/runtime/task_state.h"

namespace floe::runtime::testing {

template <typename Op>
class KeyedOperatorHarness {
 public:
  // Makes the backend (`options.key_groups` from `ctx.task`) and opens `op` with it.
  static Result<KeyedOperatorHarness> Open(std::unique_ptr<Op> op, OperatorContext ctx,
                                           KeyedStateOptions options = {}) {
    KeyedOperatorHarness h;
    options.key_groups = ctx.task.key_groups;
    options.max_parallelism = ctx.task.max_parallelism;
    FLOE_ASSIGN_OR_RAISE(h.state_, KeyedStateBackend::Make(std::move(options)));
    ctx.keyed_state = h.state_.get();
    h.op_ = std::move(op);
    FLOE_RETURN_NOT_OK(h.op_->Open(ctx));
    h.key_groups_ = ctx.task.key_groups;
    return h;
  }

  Op* operator->() const { return op_.get(); }
  Op& op() const { return *op_; }
  KeyedStateBackend& state() const { return *state_; }

  // Barrier `id`: the task state file the executor would write.
  Result<std::string> Checkpoint(CheckpointId id, Collector& out) {
    StateWriter op_state;
    FLOE_RETURN_NOT_OK(op_->PrepareBarrier(id, out));
    FLOE_RETURN_NOT_OK(op_->OnBarrier(id, op_state, out));
    FLOE_ASSIGN_OR_RAISE(std::unique_ptr<KeyedStateSnapshot> view, state_->TakeSnapshot());
    StateWriter file;
    BeginKeyedTaskState(op_state.data(), key_groups_, file);
    FLOE_RETURN_NOT_OK(view->WriteTo(file));
    return file.Finish();
  }

  // Restores from one task state file of the same parallelism.
  Status Restore(const std::string& file) {
    FLOE_ASSIGN_OR_RAISE(std::optional<KeyedTaskState> parts, ParseKeyedTaskState(file));
    if (!parts) {  // an operator blob alone (written before the runtime owned keyed state)
      StateReader reader(file);
      return op_->Restore(reader);
    }
    StateReader keyed(parts->keyed_state);
    FLOE_RETURN_NOT_OK(state_->Restore(keyed));
    StateReader reader(parts->operator_state);
    return op_->Restore(reader);
  }

 private:
  std::unique_ptr<KeyedStateBackend> state_;
  std::unique_ptr<Op> op_;
  KeyGroupRange key_groups_;
};

}  // namespace floe::runtime::testing

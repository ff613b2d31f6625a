#include "floe/sql/exec/claimed_splits.h"

#include "floe/runtime/keyed_state.h"
#include "floe/runtime/partitioner.h"

namespace floe::sql::internal {

Status ClaimedSplits::SetKey(runtime::KeyedStateBackend& state, std::string_view key,
                             const RecordBatch& batch, size_t row,
                             const std::vector<int>& key_columns) {
  FLOE_ASSIGN_OR_RAISE(uint64_t scope, ScopeOf(batch, row, key_columns));
  return SetKeyIn(state, key, scope);
}

Result<uint64_t> ClaimedSplits::ScopeOf(const RecordBatch& batch, size_t row,
                                        const std::vector<int>& key_columns) {
  if (split_column_ < 0) return runtime::HashKeyRow(batch, key_columns, row);
  FLOE_ASSIGN_OR_RAISE(uint32_t group,
                       GroupOf(batch.column(static_cast<size_t>(split_column_)).GetBytes(row)));
  return group;
}

Status ClaimedSplits::SetKeyIn(runtime::KeyedStateBackend& state, std::string_view key,
                               uint64_t scope) const {
  if (split_column_ < 0) return state.SetCurrentKey(key, scope);
  return state.SetCurrentKeyInGroup(key, static_cast<uint32_t>(scope));
}

void ClaimedSplits::Apply(const runtime::ClaimChange& change) {
  last_split_.clear();
  auto held = splits_.find(change.key_group);
  if (held != splits_.end()) {
    groups_.erase(held->second);
    splits_.erase(held);
  }
  if (!change.begins) return;
  groups_[change.split] = change.key_group;
  splits_[change.key_group] = change.split;
}

Result<uint32_t> ClaimedSplits::GroupOf(std::string_view split) {
  if (!last_split_.empty() && split == last_split_) return last_group_;
  auto it = groups_.find(split);
  if (it == groups_.end()) {
    return Status::Internal("a row of split '" + std::string(split) +
                            "' reached a keyed operator without its claim");
  }
  last_split_.assign(split);
  last_group_ = it->second;
  return last_group_;
}

Result<std::string_view> ClaimedSplits::SplitOf(uint32_t key_group) const {
  auto it = splits_.find(key_group);
  if (it == splits_.end()) {
    return Status::Internal("key group " + std::to_string(key_group) + " has no claim");
  }
  return std::string_view(it->second);
}

}  // namespace floe::sql::internal

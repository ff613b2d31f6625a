#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/record_batch.h"
#include "floe/common/status.h"
#include "floe/runtime/stream_element.h"

namespace floe::runtime {
class KeyedStateBackend;
}

namespace floe::sql::internal {

// A keyed operator's claims in a job scaled out by Kafka partition (docs/architecture.md,
// "Keyed jobs"): each claim's split name (the kSourceSplitColumn of its rows) and the partition
// it holds, which is the key group of its rows' state. Learnt from claim changes; the output
// rows of a group carry its claim's split, so the commit check fences them with the partition.
class ClaimedSplits {
 public:
  // `split_column`: the input's kSourceSplitColumn; -1 when the job is not scaled out (keys
  // then hash to their key groups, and claim changes never come).
  explicit ClaimedSplits(int split_column) : split_column_(split_column) {}
  bool scaled_out() const { return split_column_ >= 0; }
  int split_column() const { return split_column_; }

  // Sets the backend's current key to row `row`'s `key`: in its claim's key group when scaled
  // out, else in the group its key columns hash to (the HASH edge's routing).
  Status SetKey(runtime::KeyedStateBackend& state, std::string_view key, const RecordBatch& batch,
                size_t row, const std::vector<int>& key_columns);
  // The same in two steps, for an operator that keeps a key in memory and reaches its state
  // later: where row `row`'s key lives (its key hash, or its claim's key group when scaled out),
  // then setting the current key there.
  Result<uint64_t> ScopeOf(const RecordBatch& batch, size_t row,
                           const std::vector<int>& key_columns);
  Status SetKeyIn(runtime::KeyedStateBackend& state, std::string_view key, uint64_t scope) const;
  void Apply(const runtime::ClaimChange& change);
  // The key group of a row's split. Internal when no claim of it began (or it ended): the
  // source sends a claim change ahead of a claim's rows.
  Result<uint32_t> GroupOf(std::string_view split);
  // The split the group's output rows carry. Internal when the group has no claim.
  Result<std::string_view> SplitOf(uint32_t key_group) const;

 private:
  int split_column_;
  std::map<std::string, uint32_t, std::less<>> groups_;  // split -> key group
  std::map<uint32_t, std::string> splits_;               // key group -> split
  std::string last_split_;  // GroupOf's last answer: rows come in runs of one split
  uint32_t last_group_ = 0;
};

}  // namespace floe::sql::internal

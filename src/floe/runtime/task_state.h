#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "floe/common/status.h"
#include "floe/runtime/operator.h"
#include "floe/runtime/state.h"

namespace floe::runtime {

// The state file of one subtask of a keyed vertex: the operator's own blob, then the keyed
// state the runtime snapshotted, with the key groups it covers, so a restore can pick old
// snapshots by range without decoding them. Layout (common/byte_codec.h):
//
//   u32   magic "FKS1"
//   bytes operator_state
//   u32   key_group_start, key_group_end
//   ...   keyed state, to the end of the file: the canonical layout (keyed_state.cc) or, in an
//         incremental checkpoint, the backend's own, which its Restore tells apart
//
// Subtasks of other vertices write their operator's blob alone, as before; so did keyed
// vertices before the runtime owned keyed state (their operators nest it in their own blob).
struct KeyedTaskState {
  std::string_view operator_state;
  KeyGroupRange key_groups;
  std::string_view keyed_state;
};

// Starts a keyed task's state file; the caller appends the keyed state to `out`.
void BeginKeyedTaskState(std::string_view operator_state, KeyGroupRange key_groups,
                         StateWriter& out);
// Splits a keyed task's state file (views into `blob`). nullopt when `blob` has no magic: an
// operator blob alone (a non-keyed vertex, or a keyed one written before the runtime owned
// keyed state). Corruption when the magic is there but the rest does not parse.
Result<std::optional<KeyedTaskState>> ParseKeyedTaskState(std::string_view blob);

}  // namespace floe::runtime

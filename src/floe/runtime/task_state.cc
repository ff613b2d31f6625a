#include "floe/runtime/task_state.h"

namespace floe::runtime {

namespace {

// "FKS1" read as a little-endian u32. No operator blob starts with it: they start with a
// small format version.
constexpr uint32_t kKeyedTaskStateMagic = 0x31534B46;

}  // namespace

void BeginKeyedTaskState(std::string_view operator_state, KeyGroupRange key_groups,
                         StateWriter& out) {
  out.PutU32(kKeyedTaskStateMagic);
  out.PutBytes(operator_state);
  out.PutU32(key_groups.start);
  out.PutU32(key_groups.end);
}

Result<std::optional<KeyedTaskState>> ParseKeyedTaskState(std::string_view blob) {
  StateReader in(blob);
  if (blob.size() < 4) return std::optional<KeyedTaskState>();
  FLOE_ASSIGN_OR_RAISE(uint32_t magic, in.GetU32());
  if (magic != kKeyedTaskStateMagic) return std::optional<KeyedTaskState>();
  KeyedTaskState out;
  FLOE_ASSIGN_OR_RAISE(out.operator_state, in.GetBytesView());
  FLOE_ASSIGN_OR_RAISE(out.key_groups.start, in.GetU32());
  FLOE_ASSIGN_OR_RAISE(out.key_groups.end, in.GetU32());
  if (out.key_groups.start > out.key_groups.end) {
    return Status::Corruption("task state: key-group range [" +
                              std::to_string(out.key_groups.start) + ", " +
                              std::to_string(out.key_groups.end) + ") is empty the wrong way");
  }
  out.keyed_state = blob.substr(in.position());
  return std::optional<KeyedTaskState>(out);
}

}  // namespace floe::runtime

#include "floe/runtime/keyed_state_checks.h"

#include "floe/runtime/partitioner.h"

namespace floe::runtime::internal {

Result<uint32_t> KeyGroupInRange(uint64_t key_hash, KeyGroupRange r, uint32_t max_parallelism) {
  const uint32_t g = KeyGroupForHash(key_hash, max_parallelism);
  if (g >= r.start && g < r.end) return g;
  return Status::InvalidArgument(
      "keyed state: key group " + std::to_string(g) + " is outside this subtask's range [" +
      std::to_string(r.start) + ", " + std::to_string(r.end) +
      "): the record was not routed by the same key (HASH edge on the state's key columns, "
      "same max parallelism)");
}

Status GroupInRange(uint32_t key_group, KeyGroupRange r) {
  if (key_group >= r.start && key_group < r.end) return Status::OK();
  return Status::InvalidArgument("keyed state: key group " + std::to_string(key_group) +
                                 " is outside this subtask's range [" + std::to_string(r.start) +
                                 ", " + std::to_string(r.end) + ")");
}

Status CheckDescriptor(const StateDescriptor& desc) {
  if (desc.name.empty()) return Status::InvalidArgument("keyed state: empty state name");
  if (desc.kind == StateKind::kReducing && !desc.reduce) {
    return Status::InvalidArgument("keyed state '" + desc.name +
                                   "': reducing state needs a reduce function");
  }
  if (desc.kind == StateKind::kAggregating && (!desc.aggregate.create || !desc.aggregate.add)) {
    return Status::InvalidArgument("keyed state '" + desc.name +
                                   "': aggregating state needs create and add functions");
  }
  return Status::OK();
}

Status KindMismatch(const std::string& name, StateKind had, bool registered, StateKind wanted) {
  return Status::InvalidArgument("keyed state '" + name + "' is " +
                                 std::string(StateKindName(had)) +
                                 (registered ? "" : " in the restored snapshot") +
                                 ", registered as " + std::string(StateKindName(wanted)));
}

Status NoCurrentKey(std::string_view what) {
  return Status::InvalidArgument("keyed state: cannot " + std::string(what) +
                                 " before SetCurrentKey");
}

Result<SnapshotHeader> ReadSnapshotHeader(StateReader& in, uint32_t max_parallelism,
                                          std::initializer_list<uint32_t> versions,
                                          std::string_view known) {
  SnapshotHeader h;
  FLOE_ASSIGN_OR_RAISE(h.version, in.GetU32());
  if (std::find(versions.begin(), versions.end(), h.version) == versions.end()) {
    return Status::Corruption("keyed state: snapshot format version " + std::to_string(h.version) +
                              " is not one this backend reads (" + std::string(known) + ")");
  }
  FLOE_ASSIGN_OR_RAISE(std::string backend, in.GetString());  // informational
  FLOE_ASSIGN_OR_RAISE(h.max_parallelism, in.GetU32());
  FLOE_ASSIGN_OR_RAISE(h.range.start, in.GetU32());
  FLOE_ASSIGN_OR_RAISE(h.range.end, in.GetU32());
  if (h.max_parallelism != max_parallelism) {
    return Status::InvalidArgument(
        "keyed state was written with max parallelism " + std::to_string(h.max_parallelism) +
        ", this job has " + std::to_string(max_parallelism) +
        ": 'pipeline.max-parallelism' must not change across a restore (it fixes the key "
        "groups)");
  }
  if (h.range.start > h.range.end || h.range.end > h.max_parallelism) {
    return Status::Corruption("keyed state: snapshot key groups [" + std::to_string(h.range.start) +
                              ", " + std::to_string(h.range.end) + ") do not fit max parallelism " +
                              std::to_string(h.max_parallelism));
  }
  FLOE_ASSIGN_OR_RAISE(uint32_t count, in.GetU32());
  for (uint32_t i = 0; i < count; ++i) {
    StateDescriptor d;
    FLOE_ASSIGN_OR_RAISE(d.name, in.GetString());
    FLOE_ASSIGN_OR_RAISE(uint8_t kind, in.GetU8());
    FLOE_ASSIGN_OR_RAISE(d.ttl, in.GetBool());
    if (kind < 1 || kind > 5) {
      return Status::Corruption("keyed state '" + d.name + "': unknown state kind " +
                                std::to_string(kind));
    }
    d.kind = static_cast<StateKind>(kind);
    h.states.push_back(std::move(d));
  }
  return h;
}

}  // namespace floe::runtime::internal

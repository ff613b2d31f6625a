#pragma once

// What both keyed state backends (keyed_state.cc, the rocksdb_*.cc files) check and read the
// same way: the key's group, state descriptors, and the header every snapshot layout starts
// with. Internal to the runtime.

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "floe/runtime/keyed_state.h"

namespace floe::runtime::internal {

// The key group `key_hash` falls in; InvalidArgument when it is outside `range`.
Result<uint32_t> KeyGroupInRange(uint64_t key_hash, KeyGroupRange range, uint32_t max_parallelism);
// InvalidArgument when `key_group` lies outside `range`.
Status GroupInRange(uint32_t key_group, KeyGroupRange range);
// A descriptor Register can take: a name, and the functions its kind needs.
Status CheckDescriptor(const StateDescriptor& desc);
// State `name` is `had` (in the restored snapshot only, unless `registered`) and is asked to be
// `wanted`.
Status KindMismatch(const std::string& name, StateKind had, bool registered, StateKind wanted);
// An access before SetCurrentKey.
Status NoCurrentKey(std::string_view what);

// The header every snapshot layout starts with (the canonical one is documented at the top of
// keyed_state.cc).
struct SnapshotHeader {
  uint32_t version = 0;
  uint32_t max_parallelism = 0;
  KeyGroupRange range;
  std::vector<StateDescriptor> states;  // name, kind and ttl (entries carry write times)
};
// Reads it. A version not in `versions` is Corruption (`known` names them), another max
// parallelism InvalidArgument with Flink's rule, a range that does not fit Corruption.
Result<SnapshotHeader> ReadSnapshotHeader(StateReader& in, uint32_t max_parallelism,
                                          std::initializer_list<uint32_t> versions,
                                          std::string_view known);

// The current key, namespace and key group both backends keep the same way; `scope_` is the
// backend's own encoding of (key, namespace), rebuilt (by the backend) when `scope_dirty_`.
class ScopedKeyedStateBackend : public KeyedStateBackend {
 public:
  ScopedKeyedStateBackend(KeyGroupRange key_groups, uint32_t max_parallelism)
      : key_groups_(key_groups), max_parallelism_(max_parallelism) {}
  Status SetCurrentKey(std::string_view key, uint64_t key_hash) override {
    FLOE_ASSIGN_OR_RAISE(uint32_t g, KeyGroupInRange(key_hash, key_groups_, max_parallelism_));
    SetScope(key, current_ns_, g);
    return Status::OK();
  }
  Status SetCurrentKeyInGroup(std::string_view key, uint32_t key_group) override {
    FLOE_RETURN_NOT_OK(CheckOwnGroup(key_group));
    SetScope(key, current_ns_, key_group);
    return Status::OK();
  }
  void SetCurrentNamespace(std::string_view ns) override {
    current_ns_.assign(ns);
    scope_dirty_ = true;
  }
  std::string_view current_key() const override { return current_key_; }
  std::string_view current_namespace() const override { return current_ns_; }
  uint32_t current_key_group() const override { return current_group_; }

 protected:
  void SetScope(std::string_view key, std::string_view ns, uint32_t group) {
    current_key_.assign(key);
    if (ns.data() != current_ns_.data()) current_ns_.assign(ns);
    current_group_ = group;
    has_key_ = true;
    scope_dirty_ = true;
  }
  Status CheckOwnGroup(uint32_t key_group) const { return GroupInRange(key_group, key_groups_); }
  Status RequireKey(std::string_view what) const {
    return has_key_ ? Status::OK() : NoCurrentKey(what);
  }

  bool has_key_ = false;
  std::string current_key_;
  std::string current_ns_;
  uint32_t current_group_ = 0;
  std::string scope_;
  bool scope_dirty_ = true;

 private:
  KeyGroupRange key_groups_;
  uint32_t max_parallelism_;
};

// For each state of a restored snapshot, the index of its table in `tables` (each has a
// `StateDescriptor desc`): matched by name, or appended (unregistered) when absent; `added` is
// called on every appended table. Refuses a kind that differs and a state listed twice.
template <typename Table, typename Added>
Result<std::vector<uint32_t>> MatchRestoredStates(const std::vector<StateDescriptor>& restored,
                                                  std::vector<Table>& tables, Added added) {
  std::vector<uint32_t> order;
  for (const StateDescriptor& s : restored) {
    uint32_t index = 0;
    while (index < tables.size() && tables[index].desc.name != s.name) ++index;
    if (index == tables.size()) {
      Table t;
      t.desc.name = s.name;
      t.desc.kind = s.kind;
      t.desc.ttl = s.ttl;
      added(t);
      tables.push_back(std::move(t));
    } else if (tables[index].desc.kind != s.kind) {
      return KindMismatch(s.name, s.kind, false, tables[index].desc.kind);
    }
    if (std::find(order.begin(), order.end(), index) != order.end()) {
      return Status::Corruption("keyed state: state '" + s.name + "' twice in the snapshot");
    }
    order.push_back(index);
  }
  return order;
}

}  // namespace floe::runtime::internal

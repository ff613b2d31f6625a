#pragma once

#include <compare>
#include <cstdint>
#include <string>

namespace floe::runtime {

// CheckpointId numbers checkpoints and savepoints of one job. Ids only grow: a restored job
// continues above the id it restored from (and above any id an external system, e.g. an
// Iceberg table's snapshot summary, has already seen). 0 means "none".
struct CheckpointId {
  constexpr CheckpointId() = default;
  constexpr explicit CheckpointId(uint64_t v) : value(v) {}
  uint64_t value = 0;

  constexpr CheckpointId Next() const { return CheckpointId(value + 1); }
  constexpr bool valid() const { return value != 0; }
  std::string ToString() const { return std::to_string(value); }
  auto operator<=>(const CheckpointId&) const = default;
};

// SubtaskIndex is the index of one parallel instance of a vertex, in [0, parallelism).
struct SubtaskIndex {
  constexpr SubtaskIndex() = default;
  constexpr explicit SubtaskIndex(uint32_t v) : value(v) {}
  uint32_t value = 0;
  auto operator<=>(const SubtaskIndex&) const = default;
};

// VertexId is the position of a vertex in its JobGraph.
struct VertexId {
  constexpr VertexId() = default;
  constexpr explicit VertexId(uint32_t v) : value(v) {}
  uint32_t value = 0;
  auto operator<=>(const VertexId&) const = default;
};

// Event time, microseconds since the epoch (the unit of floe's timestamp columns).
struct Watermark {
  constexpr Watermark() = default;
  constexpr explicit Watermark(int64_t us) : micros(us) {}
  int64_t micros = INT64_MIN;
  auto operator<=>(const Watermark&) const = default;
};

// The stable name of one subtask, "<vertex name>/<subtask index>". It keys the subtask's state
// in a checkpoint, so it must not change between a job and its restore (vertex names are the
// job's stable operator ids, like Flink's uid()).
inline std::string TaskName(const std::string& vertex, SubtaskIndex subtask) {
  return vertex + "/" + std::to_string(subtask.value);
}

}  // namespace floe::runtime

#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/runtime/ids.h"
#include "floe/runtime/operator.h"

namespace floe::runtime {

struct KeyedStateOptions;

// How the records of an edge are spread over the target vertex's subtasks. Control elements
// (barriers, watermarks, end of input) always go to every connected target subtask.
//   kForward   producer subtask i -> consumer subtask i (equal parallelism required)
//   kHash      by a stable hash of the key columns (keyBy): all rows of a key reach one subtask;
//              null keys hash to a fixed value
//   kRebalance whole batches round robin over all target subtasks
//   kGlobal    everything to subtask 0 (a single committer, say)
enum class PartitionKind { kForward, kHash, kRebalance, kGlobal };

struct Partitioning {
  PartitionKind kind = PartitionKind::kForward;
  std::vector<std::string> key_columns;  // kHash only

  static Partitioning Forward() { return {PartitionKind::kForward, {}}; }
  static Partitioning Hash(std::vector<std::string> keys) {
    return {PartitionKind::kHash, std::move(keys)};
  }
  static Partitioning Rebalance() { return {PartitionKind::kRebalance, {}}; }
  static Partitioning Global() { return {PartitionKind::kGlobal, {}}; }
  std::string ToString() const;
};

// Factories build one operator instance per subtask (on the thread that starts the job).
using OperatorFactory = std::function<Result<std::unique_ptr<Operator>>(const TaskInfo&)>;
using SourceFactory = std::function<Result<std::unique_ptr<SourceOperator>>(const TaskInfo&)>;

struct Vertex {
  std::string name;  // stable operator id: keys the vertex's state in checkpoints
  uint32_t parallelism = 1;
  SourceFactory source;  // set for sources
  OperatorFactory op;    // set for everything else
  // Set for a keyed vertex: the runtime gives each subtask a keyed state backend made with
  // these options (key groups, max parallelism and the shared-state store filled in per run).
  std::shared_ptr<const KeyedStateOptions> keyed_state;
  bool is_source() const { return static_cast<bool>(source); }
};

struct Edge {
  VertexId from;
  VertexId to;
  Partitioning partitioning;
  int input = 0;  // index of this edge among `to`'s inputs (= ProcessBatch's `input`)
  // Which of `from`'s outputs feeds it: 0 its main output (Collector::Emit), 1.. a side output
  // (Collector::EmitSide; a source's dead letters). Control elements go down every edge.
  int output = 0;
};

// JobGraph is the logical plan the executor runs: vertices (operator factory, parallelism, name)
// and edges with a partitioning. Build it, Validate it, hand it to an executor (which copies
// what it needs). Plain value; not thread-safe while being built.
class JobGraph {
 public:
  VertexId AddSource(std::string name, uint32_t parallelism, SourceFactory factory);
  VertexId AddOperator(std::string name, uint32_t parallelism, OperatorFactory factory);
  // Makes `v` keyed: its operator finds a keyed state backend in OperatorContext::keyed_state.
  void SetKeyedState(VertexId v, const KeyedStateOptions& options);
  // Adds an edge from `from`'s output `output` (0: the main one); it becomes `to`'s next input
  // (0, 1, ...).
  void Connect(VertexId from, VertexId to, Partitioning partitioning, int output = 0);

  // Upper bound for parallelism and the number of key groups (Flink's max parallelism).
  void set_max_parallelism(uint32_t n) { max_parallelism_ = n; }
  uint32_t max_parallelism() const { return max_parallelism_; }

  // Checks: at least one source; unique, non-empty names without '/'; 1 <= parallelism <=
  // max_parallelism; sources have no inputs, operators at least one; FORWARD joins equal
  // parallelism; HASH names key columns; no cycles.
  Status Validate() const;

  const std::vector<Vertex>& vertices() const { return vertices_; }
  const std::vector<Edge>& edges() const { return edges_; }
  const Vertex& vertex(VertexId id) const { return vertices_[id.value]; }
  // Edges into `to`, ordered by input index.
  std::vector<Edge> InputsOf(VertexId to) const;
  std::vector<Edge> OutputsOf(VertexId from) const;
  // Every subtask's TaskName, vertex by vertex.
  std::vector<std::string> TaskNames() const;

 private:
  std::vector<Vertex> vertices_;
  std::vector<Edge> edges_;
  uint32_t max_parallelism_ = 128;
};

}  // namespace floe::runtime

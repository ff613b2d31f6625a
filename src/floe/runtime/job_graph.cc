#include "floe/runtime/job_graph.h"

#include <set>

#include "floe/runtime/keyed_state.h"

namespace floe::runtime {

std::string Partitioning::ToString() const {
  switch (kind) {
    case PartitionKind::kForward:
      return "FORWARD";
    case PartitionKind::kRebalance:
      return "REBALANCE";
    case PartitionKind::kGlobal:
      return "GLOBAL";
    case PartitionKind::kHash: {
      std::string s = "HASH(";
      for (size_t i = 0; i < key_columns.size(); ++i) {
        if (i) s += ", ";
        s += key_columns[i];
      }
      return s + ")";
    }
  }
  return "?";
}

void JobGraph::SetKeyedState(VertexId v, const KeyedStateOptions& options) {
  vertices_[v.value].keyed_state = std::make_shared<const KeyedStateOptions>(options);
}

VertexId JobGraph::AddSource(std::string name, uint32_t parallelism, SourceFactory factory) {
  Vertex v;
  v.name = std::move(name);
  v.parallelism = parallelism;
  v.source = std::move(factory);
  vertices_.push_back(std::move(v));
  return VertexId(static_cast<uint32_t>(vertices_.size() - 1));
}

VertexId JobGraph::AddOperator(std::string name, uint32_t parallelism, OperatorFactory factory) {
  Vertex v;
  v.name = std::move(name);
  v.parallelism = parallelism;
  v.op = std::move(factory);
  vertices_.push_back(std::move(v));
  return VertexId(static_cast<uint32_t>(vertices_.size() - 1));
}

void JobGraph::Connect(VertexId from, VertexId to, Partitioning partitioning, int output) {
  int input = 0;
  for (const Edge& e : edges_) input += e.to == to ? 1 : 0;
  edges_.push_back(Edge{from, to, std::move(partitioning), input, output});
}

std::vector<Edge> JobGraph::InputsOf(VertexId to) const {
  std::vector<Edge> out;
  for (const Edge& e : edges_) {
    if (e.to == to) out.push_back(e);
  }
  return out;  // Connect numbers inputs in insertion order, so this is already sorted
}

std::vector<Edge> JobGraph::OutputsOf(VertexId from) const {
  std::vector<Edge> out;
  for (const Edge& e : edges_) {
    if (e.from == from) out.push_back(e);
  }
  return out;
}

std::vector<std::string> JobGraph::TaskNames() const {
  std::vector<std::string> out;
  for (const Vertex& v : vertices_) {
    for (uint32_t i = 0; i < v.parallelism; ++i) out.push_back(TaskName(v.name, SubtaskIndex(i)));
  }
  return out;
}

Status JobGraph::Validate() const {
  const size_t n = vertices_.size();
  if (max_parallelism_ == 0) return Status::InvalidArgument("job graph: max parallelism is 0");
  std::set<std::string> names;
  bool any_source = false;
  for (const Vertex& v : vertices_) {
    if (v.name.empty()) return Status::InvalidArgument("job graph: a vertex has an empty name");
    if (v.name.find('/') != std::string::npos) {
      return Status::InvalidArgument("job graph: vertex name '" + v.name + "' contains '/'");
    }
    if (!names.insert(v.name).second) {
      return Status::InvalidArgument("job graph: two vertices are named '" + v.name + "'");
    }
    if (v.parallelism < 1 || v.parallelism > max_parallelism_) {
      return Status::InvalidArgument("job graph: vertex '" + v.name + "' has parallelism " +
                                     std::to_string(v.parallelism) + "; it must be in [1, " +
                                     std::to_string(max_parallelism_) + "] (max parallelism)");
    }
    if (static_cast<bool>(v.source) == static_cast<bool>(v.op)) {
      return Status::InvalidArgument("job graph: vertex '" + v.name +
                                     "' needs exactly one of a source or an operator factory");
    }
    any_source = any_source || v.is_source();
  }
  if (!any_source) return Status::InvalidArgument("job graph: no source vertex");
  std::vector<int> indegree(n, 0);
  for (const Edge& e : edges_) {
    if (e.from.value >= n || e.to.value >= n) {
      return Status::InvalidArgument("job graph: edge names a vertex that does not exist");
    }
    const Vertex& from = vertices_[e.from.value];
    const Vertex& to = vertices_[e.to.value];
    std::string what = "job graph: edge '" + from.name + "' -> '" + to.name + "'";
    if (to.is_source()) return Status::InvalidArgument(what + " feeds a source");
    if (e.output < 0) return Status::InvalidArgument(what + " leaves a negative output");
    if (e.partitioning.kind == PartitionKind::kForward && from.parallelism != to.parallelism) {
      return Status::InvalidArgument(what + " is FORWARD but parallelism differs (" +
                                     std::to_string(from.parallelism) + " vs " +
                                     std::to_string(to.parallelism) + "); use REBALANCE or HASH");
    }
    if (e.partitioning.kind == PartitionKind::kHash && e.partitioning.key_columns.empty()) {
      return Status::InvalidArgument(what + " is HASH without key columns");
    }
    ++indegree[e.to.value];
  }
  for (size_t i = 0; i < n; ++i) {
    if (!vertices_[i].is_source() && indegree[i] == 0) {
      return Status::InvalidArgument("job graph: operator '" + vertices_[i].name +
                                     "' has no input");
    }
  }
  // Kahn's algorithm: a cycle leaves vertices with positive in-degree.
  std::vector<size_t> ready;
  for (size_t i = 0; i < n; ++i) {
    if (indegree[i] == 0) ready.push_back(i);
  }
  size_t visited = 0;
  while (!ready.empty()) {
    size_t v = ready.back();
    ready.pop_back();
    ++visited;
    for (const Edge& e : edges_) {
      if (e.from.value == v && --indegree[e.to.value] == 0) ready.push_back(e.to.value);
    }
  }
  if (visited != n) return Status::InvalidArgument("job graph: edges form a cycle");
  return Status::OK();
}

}  // namespace floe::runtime

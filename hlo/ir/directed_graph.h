// A small directed graph over integer node ids: the one place sharc uses
// Boost.Graph (topological orders, strongly connected components, cycles), so
// its types never appear in IR headers.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace sharc::hlo {

class DirectedGraph {
 public:
  explicit DirectedGraph(int64_t num_nodes) : num_nodes_(num_nodes) {}
  int64_t num_nodes() const { return num_nodes_; }
  void AddEdge(int64_t from, int64_t to) { edges_.push_back({from, to}); }

  // Nodes such that every edge goes from an earlier to a later node, or
  // nothing if the graph has a cycle. Ties keep ascending node order.
  std::optional<std::vector<int64_t>> TopologicalOrder() const;
  // Component id of every node; components are numbered in reverse
  // topological order of the condensation (sinks first).
  std::vector<int64_t> StronglyConnectedComponents(int64_t* num_components) const;
  // The nodes of one cycle, in edge order, or empty if acyclic.
  std::vector<int64_t> FindCycle() const;

 private:
  int64_t num_nodes_;
  std::vector<std::pair<int64_t, int64_t>> edges_;
};

}  // namespace sharc::hlo

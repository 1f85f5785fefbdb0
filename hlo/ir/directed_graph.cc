#include "hlo/ir/directed_graph.h"

#include <algorithm>
#include <queue>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>

namespace sharc::hlo {

namespace {
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

Graph Build(int64_t n, const std::vector<std::pair<int64_t, int64_t>>& edges) {
  Graph g(static_cast<size_t>(n));
  for (const auto& [a, b] : edges) boost::add_edge(static_cast<size_t>(a), static_cast<size_t>(b), g);
  return g;
}
}  // namespace

std::optional<std::vector<int64_t>> DirectedGraph::TopologicalOrder() const {
  // Kahn's algorithm with a min-heap so the order is deterministic and
  // close to the input order (Boost's topological_sort is DFS-based and
  // would reorder independent nodes).
  Graph g = Build(num_nodes_, edges_);
  std::vector<int64_t> indegree(static_cast<size_t>(num_nodes_), 0);
  for (const auto& [a, b] : edges_) ++indegree[static_cast<size_t>(b)];
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> ready;
  for (int64_t v = 0; v < num_nodes_; ++v)
    if (indegree[v] == 0) ready.push(v);
  std::vector<int64_t> order;
  order.reserve(static_cast<size_t>(num_nodes_));
  while (!ready.empty()) {
    int64_t v = ready.top();
    ready.pop();
    order.push_back(v);
    for (auto [it, end] = boost::adjacent_vertices(static_cast<size_t>(v), g); it != end; ++it) {
      if (--indegree[*it] == 0) ready.push(static_cast<int64_t>(*it));
    }
  }
  if (static_cast<int64_t>(order.size()) != num_nodes_) return std::nullopt;
  return order;
}

std::vector<int64_t> DirectedGraph::StronglyConnectedComponents(int64_t* num_components) const {
  Graph g = Build(num_nodes_, edges_);
  std::vector<int> component(static_cast<size_t>(num_nodes_), 0);
  int n = num_nodes_ == 0 ? 0 : boost::strong_components(g, component.data());
  if (num_components != nullptr) *num_components = n;
  return std::vector<int64_t>(component.begin(), component.end());
}

std::vector<int64_t> DirectedGraph::FindCycle() const {
  int64_t count = 0;
  std::vector<int64_t> component = StronglyConnectedComponents(&count);
  std::vector<int64_t> size(static_cast<size_t>(count), 0);
  for (int64_t c : component) ++size[static_cast<size_t>(c)];
  // A cycle lives in a component of 2+ nodes, or a node with a self edge.
  for (const auto& [a, b] : edges_) {
    if (a == b) return {a};
  }
  for (int64_t start = 0; start < num_nodes_; ++start) {
    if (size[static_cast<size_t>(component[start])] < 2) continue;
    // Walk edges inside the component until a node repeats.
    std::vector<int64_t> path{start};
    std::vector<int64_t> seen_at(static_cast<size_t>(num_nodes_), -1);
    seen_at[start] = 0;
    int64_t v = start;
    while (true) {
      int64_t next = -1;
      for (const auto& [a, b] : edges_) {
        if (a == v && component[b] == component[start]) {
          next = b;
          break;
        }
      }
      if (next < 0) break;
      if (seen_at[next] >= 0) return std::vector<int64_t>(path.begin() + seen_at[next], path.end());
      seen_at[next] = static_cast<int64_t>(path.size());
      path.push_back(next);
      v = next;
    }
  }
  return {};
}

}  // namespace sharc::hlo

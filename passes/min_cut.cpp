#include "passes/min_cut.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/boykov_kolmogorov_max_flow.hpp>
#include <boost/property_map/property_map.hpp>
#include <deque>

namespace lathe::passes {

void FlowNetwork::addEdge(uint32_t from, uint32_t to, int64_t capacity) {
  edges_.push_back({from, to, std::min(capacity, kInfinite)});
}

FlowNetwork::Cut FlowNetwork::minimumCut(uint32_t source, uint32_t sink) const {
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using Graph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<boost::edge_capacity_t, int64_t,
                      boost::property<boost::edge_residual_capacity_t, int64_t,
                                      boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  // Infinite edges get a capacity above every finite cut, so they are never cut when a finite cut exists.
  int64_t finite = 0;
  for (const Edge& e : edges_) {
    if (e.capacity < kInfinite) finite = std::min(kInfinite - 1, finite + e.capacity);
  }
  const int64_t infinite = std::min(kInfinite, finite + 1);

  Graph graph(vertices_);
  auto capacity = boost::get(boost::edge_capacity, graph);
  auto residual = boost::get(boost::edge_residual_capacity, graph);
  auto reverse = boost::get(boost::edge_reverse, graph);
  for (const Edge& e : edges_) {
    auto forward = boost::add_edge(e.from, e.to, graph).first;
    auto backward = boost::add_edge(e.to, e.from, graph).first;
    capacity[forward] = e.capacity >= kInfinite ? infinite : e.capacity;
    capacity[backward] = 0;
    reverse[forward] = backward;
    reverse[backward] = forward;
  }
  // Boykov-Kolmogorov augments along paths, so no value exceeds the flow (bounded by the finite
  // capacities); push-relabel's preflow piles the excess of many infinite edges onto one vertex
  // and overflows int64.
  std::vector<Traits::edge_descriptor> predecessor(vertices_);
  std::vector<boost::default_color_type> color(vertices_);
  std::vector<int64_t> distance(vertices_);
  const auto index = boost::get(boost::vertex_index, graph);
  Cut cut;
  cut.value = boost::boykov_kolmogorov_max_flow(graph, capacity, residual, reverse,
                                                boost::make_iterator_property_map(predecessor.begin(), index),
                                                boost::make_iterator_property_map(color.begin(), index),
                                                boost::make_iterator_property_map(distance.begin(), index), index, source,
                                                sink);
  if (cut.value >= infinite) cut.value = kInfinite;

  // Vertices that reach the sink through edges with residual capacity left: walking back from the
  // sink, u reaches v when the edge u -> v (the reverse of an out-edge of v) has residual capacity.
  cut.sinkSide.assign(vertices_, 0);
  std::deque<uint32_t> queue{sink};
  cut.sinkSide[sink] = 1;
  while (!queue.empty()) {
    const uint32_t v = queue.front();
    queue.pop_front();
    for (auto [it, end] = boost::out_edges(v, graph); it != end; ++it) {
      const auto u = static_cast<uint32_t>(boost::target(*it, graph));
      if (!cut.sinkSide[u] && residual[reverse[*it]] > 0) {
        cut.sinkSide[u] = 1;
        queue.push_back(u);
      }
    }
  }
  return cut;
}

}  // namespace lathe::passes

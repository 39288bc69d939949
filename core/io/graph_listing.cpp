#include "io/graph_listing.h"

#include <algorithm>

namespace lathe::io {

const ir::Graph* dynamoGraphOf(const std::vector<GraphListing>& graphs, const GraphListing& graph) {
  for (const GraphListing& other : graphs) {
    if (other.kind == "dynamo_output_graph" && other.compileId == graph.compileId && other.rank == graph.rank) {
      return other.graph.get();
    }
  }
  return nullptr;
}

bool compiledByInductor(const std::vector<GraphListing>& graphs, const GraphListing& graph) {
  for (const GraphListing& other : graphs) {
    if (other.compileId == graph.compileId && other.rank == graph.rank && other.kind.find("post_grad") != std::string::npos) {
      return true;
    }
  }
  return false;
}

const GraphListing* findGraph(const std::vector<GraphListing>& graphs, std::string_view id) {
  for (const GraphListing& g : graphs) {
    if (g.id == id) return &g;
  }
  if (!id.empty() && id.size() < 10 && std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    const size_t index = std::stoul(std::string(id));
    if (index < graphs.size()) return &graphs[index];
  }
  return nullptr;
}

}  // namespace lathe::io

// s-t minimum cut over integer capacities, with the cut torch's partitioner takes: the sink side
// is every vertex that can still reach the sink in the residual network of a maximum flow
// (networkx.minimum_cut). That set is the same for every maximum flow, so the cut is deterministic
// whatever order the solver works in.
#pragma once

#include <cstdint>
#include <vector>

namespace lathe::passes {

class FlowNetwork {
 public:
  static constexpr int64_t kInfinite = INT64_MAX / 4;

  explicit FlowNetwork(uint32_t vertices) : vertices_(vertices) {}
  uint32_t addVertex() { return vertices_++; }
  [[nodiscard]] uint32_t vertexCount() const { return vertices_; }
  // Capacities >= kInfinite count as infinite.
  void addEdge(uint32_t from, uint32_t to, int64_t capacity);

  struct Cut {
    int64_t value = 0;            // capacity of the cut; >= kInfinite when no finite cut exists
    std::vector<uint8_t> sinkSide;  // per vertex
  };
  [[nodiscard]] Cut minimumCut(uint32_t source, uint32_t sink) const;

 private:
  struct Edge {
    uint32_t from, to;
    int64_t capacity;
  };
  uint32_t vertices_;
  std::vector<Edge> edges_;
};

}  // namespace lathe::passes

// The joint graph as torch's partitioner sees it: Inductor's joint-graph passes first drop no-op
// ops (torch/_inductor/fx_passes/post_grad.py remove_noop_ops: alias, clone, same-shape view and
// slice, same-dtype casts, ...), then the partitioner merges identical nodes
// (torch/_functorch/compile_utils.py fx_graph_cse). Decisions that must match torch's are made on
// this graph and mapped back by node name.
#pragma once

#include <memory>
#include <vector>

#include "ir/graph.h"

namespace lathe::analysis {

struct CanonicalGraph {
  std::shared_ptr<const ir::Graph> graph;
  std::vector<ir::NodeId> toCanonical;  // per original node: the node that stands for it
  std::vector<ir::NodeId> toOriginal;   // per canonical node: the original node of the same name
  size_t removedNoOps = 0;
  size_t mergedDuplicates = 0;
};

struct CanonicalizeOptions {
  bool removeNoOps = true;
  bool mergeDuplicates = true;
};

[[nodiscard]] CanonicalGraph canonicalize(const ir::Graph& graph, const CanonicalizeOptions& options = {});

}  // namespace lathe::analysis

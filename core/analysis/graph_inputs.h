// What each placeholder of a graph is (parameter, buffer, user input, tangent, symbolic size) and
// the module that owns a parameter or buffer. AOT graphs only say `PlainAOTInput(idx=3)`; the
// Dynamo graph of the same compile names its placeholders after the module attribute they came
// from (the loader reads role and module path from those names), in the same order as the AOT
// primals, so the two are joined by position.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace lathe::analysis {

struct GraphInputs {
  std::vector<ir::Role> role;             // per node; Unknown for nodes that are not inputs
  std::vector<std::string> modulePath;    // per node: "model.layers.0.self_attn.q_proj" or ""
  std::vector<ir::NodeId> placeholders;   // in order
  bool joinedWithDynamo = false;          // roles came from the Dynamo graph

  [[nodiscard]] bool isWeight(ir::NodeId node) const {
    return role[node] == ir::Role::Parameter || role[node] == ir::Role::Buffer;
  }
};

// Roles of `graph`'s placeholders. Roles the graph already carries (pt2 signatures, AOT
// descriptors that name parameters, tangents) are kept; the others come from `dynamo` (the
// compile's dynamo_output_graph) when its placeholder count equals the graph's non-tangent
// placeholder count, else they stay as loaded.
[[nodiscard]] GraphInputs inferGraphInputs(const ir::Graph& graph, const ir::Graph* dynamo);

}  // namespace lathe::analysis

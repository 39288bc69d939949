#include "analysis/graph_inputs.h"

namespace lathe::analysis {

namespace {

std::vector<ir::NodeId> placeholdersOf(const ir::Graph& graph) {
  std::vector<ir::NodeId> out;
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    if (graph.node(id).kind == ir::NodeKind::Placeholder) out.push_back(id);
  }
  return out;
}

}  // namespace

GraphInputs inferGraphInputs(const ir::Graph& graph, const ir::Graph* dynamo) {
  GraphInputs inputs;
  inputs.role.assign(graph.size(), ir::Role::Unknown);
  inputs.modulePath.assign(graph.size(), {});
  inputs.placeholders = placeholdersOf(graph);
  std::vector<ir::NodeId> primals;
  for (ir::NodeId id : inputs.placeholders) {
    const ir::Node& node = graph.node(id);
    inputs.role[id] = node.role == ir::Role::Unknown ? ir::Role::UserInput : node.role;
    inputs.modulePath[id] = std::string(graph.str(node.provenance.modulePath));
    if (node.role != ir::Role::Tangent) primals.push_back(id);
  }
  if (dynamo == nullptr) return inputs;
  const std::vector<ir::NodeId> sources = placeholdersOf(*dynamo);
  if (sources.size() != primals.size() || sources.empty()) return inputs;
  // Same position must mean the same value: a dtype or rank mismatch says the graphs differ.
  for (size_t i = 0; i < primals.size(); ++i) {
    const ir::TensorMeta& a = graph.node(primals[i]).meta;
    const ir::TensorMeta& b = dynamo->node(sources[i]).meta;
    if (a.kind != b.kind || a.dtype != b.dtype || a.sizes.size() != b.sizes.size()) return inputs;
  }
  for (size_t i = 0; i < primals.size(); ++i) {
    const ir::Node& source = dynamo->node(sources[i]);
    const ir::NodeId target = primals[i];
    if (inputs.role[target] == ir::Role::UserInput &&
        (source.role == ir::Role::Parameter || source.role == ir::Role::Buffer)) {
      inputs.role[target] = source.role;
    }
    if (inputs.modulePath[target].empty()) inputs.modulePath[target] = std::string(dynamo->str(source.provenance.modulePath));
  }
  inputs.joinedWithDynamo = true;
  return inputs;
}

}  // namespace lathe::analysis

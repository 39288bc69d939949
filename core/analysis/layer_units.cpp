#include "analysis/layer_units.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <utility>

#include "analysis/joint.h"

namespace lathe::analysis {

namespace {

using ir::NodeId;

constexpr NodeId kNever = std::numeric_limits<NodeId>::max();  // first use of a value nothing reads

NodeId firstUse(const ir::Graph& graph, NodeId node) {
  const auto users = graph.users(node);
  return users.empty() ? kNever : users[0];
}

// Tangent placeholders and everything downstream of them.
std::vector<bool> backwardNodes(const ir::Graph& graph, const GraphInputs& inputs) {
  std::vector<bool> backward(graph.size(), false);
  for (NodeId node = 0; node < graph.size(); ++node) {
    if (inputs.role[node] == ir::Role::Tangent) backward[node] = true;
    if (!backward[node]) {
      for (NodeId in : graph.inputs(node)) {
        if (backward[in]) {
          backward[node] = true;
          break;
        }
      }
    }
  }
  return backward;
}

// Parameter -> unit name, from module paths. Units in order: prologue, layers by first use, epilogue.
std::vector<std::pair<std::string, std::vector<NodeId>>> unitsFromModulePaths(const ir::Graph& graph,
                                                                              const GraphInputs& inputs,
                                                                              const std::vector<NodeId>& parameters) {
  std::map<std::string, NodeId> layerFirstUse;  // key -> earliest use of its parameters
  std::vector<std::string> keys;
  NodeId firstLayerUse = kNever;
  for (NodeId p : parameters) {
    keys.push_back(layerUnitKey(inputs.modulePath[p]));
    if (keys.back().empty()) continue;
    const NodeId use = firstUse(graph, p);
    auto [it, inserted] = layerFirstUse.emplace(keys.back(), use);
    if (!inserted) it->second = std::min(it->second, use);
    firstLayerUse = std::min(firstLayerUse, use);
  }
  std::vector<std::pair<NodeId, std::string>> layers;
  for (const auto& [key, use] : layerFirstUse) layers.emplace_back(use, key);
  std::sort(layers.begin(), layers.end());

  std::vector<std::pair<std::string, std::vector<NodeId>>> units;
  std::vector<NodeId> prologue, epilogue;
  std::map<std::string, std::vector<NodeId>> byLayer;
  for (size_t i = 0; i < parameters.size(); ++i) {
    const NodeId p = parameters[i];
    if (!keys[i].empty()) {
      byLayer[keys[i]].push_back(p);
    } else if (layerFirstUse.empty() || firstUse(graph, p) < firstLayerUse) {
      prologue.push_back(p);
    } else {
      epilogue.push_back(p);
    }
  }
  if (!prologue.empty()) units.emplace_back("prologue", std::move(prologue));
  for (const auto& [use, key] : layers) units.emplace_back(key, std::move(byLayer[key]));
  if (!epilogue.empty()) units.emplace_back("epilogue", std::move(epilogue));
  return units;
}

// Parameter -> "block.<k>": stretches of the forward program order cut at each Attention op.
std::vector<std::pair<std::string, std::vector<NodeId>>> unitsFromRepeatedStructure(
    const ir::Graph& graph, const ir::OpRegistry& ops, const std::vector<bool>& backward,
    const std::vector<NodeId>& parameters) {
  std::vector<int32_t> stretch(graph.size(), kNoUnit);
  int32_t current = 0;
  for (NodeId node = 0; node < graph.size(); ++node) {
    if (backward[node] || !graph.node(node).isCall()) continue;
    if (ops.lookup(graph.target(node)).category == ir::OpCategory::Attention) ++current;
    stretch[node] = current;
  }
  std::map<int32_t, std::vector<NodeId>> byStretch;
  for (NodeId p : parameters) {
    int32_t at = current;
    for (NodeId user : graph.users(p)) {
      if (stretch[user] != kNoUnit) {
        at = stretch[user];
        break;
      }
    }
    byStretch[at].push_back(p);
  }
  std::vector<std::pair<std::string, std::vector<NodeId>>> units;
  for (auto& [index, weights] : byStretch) {
    units.emplace_back("block." + std::to_string(units.size()), std::move(weights));
  }
  return units;
}

}  // namespace

LayerUnits layerUnits(const ir::Graph& graph, const GraphInputs& inputs, const ir::OpRegistry& ops) {
  const size_t n = graph.size();
  LayerUnits out;
  out.unit.assign(n, kNoUnit);

  std::vector<NodeId> parameters;
  bool anyPath = false;
  for (NodeId p : inputs.placeholders) {
    if (inputs.role[p] != ir::Role::Parameter) continue;
    parameters.push_back(p);
    anyPath = anyPath || !inputs.modulePath[p].empty();
  }
  if (parameters.empty()) return out;

  const std::vector<bool> backward = backwardNodes(graph, inputs);
  auto named = anyPath ? unitsFromModulePaths(graph, inputs, parameters)
                       : unitsFromRepeatedStructure(graph, ops, backward, parameters);
  std::vector<int32_t> weightUnit(n, kNoUnit);
  for (auto& [name, weights] : named) {
    LayerUnit unit;
    unit.id = static_cast<int32_t>(out.units.size());
    unit.name = name;
    std::sort(weights.begin(), weights.end());
    unit.weights = weights;
    for (NodeId w : weights) {
      unit.weightBytes += graph.node(w).meta.storageBytes();
      weightUnit[w] = unit.id;
    }
    out.units.push_back(std::move(unit));
  }

  // Latest unit among the parameters in each node's transitive inputs, and among the parameters a
  // node reads directly or through views.
  std::vector<int32_t> reach(n, kNoUnit), weightView(n, kNoUnit), reads(n, kNoUnit);
  for (NodeId node = 0; node < n; ++node) {
    if (weightUnit[node] != kNoUnit) {
      reach[node] = weightView[node] = weightUnit[node];
      continue;
    }
    const auto ins = graph.inputs(node);
    for (NodeId in : ins) {
      reach[node] = std::max(reach[node], reach[in]);
      reads[node] = std::max(reads[node], weightView[in]);
    }
    if (graph.node(node).isCall() && !ins.empty() &&
        ops.lookup(graph.target(node)).category == ir::OpCategory::View) {
      weightView[node] = weightView[ins[0]];
    }
  }

  // Latest unit among the parameters whose gradient output a node transitively feeds. A joint
  // graph returns the forward outputs, then one gradient slot per primal.
  std::vector<int32_t> feeds(n, kNoUnit);
  std::vector<NodeId> primals;
  for (NodeId p : inputs.placeholders) {
    if (inputs.role[p] != ir::Role::Tangent) primals.push_back(p);
  }
  const std::vector<NodeId> items = outputItems(graph);
  if (items.size() >= primals.size()) {
    const size_t forwardOutputs = items.size() - primals.size();
    for (size_t i = 0; i < primals.size(); ++i) {
      const NodeId gradient = items[forwardOutputs + i];
      if (gradient != ir::kNoNode) feeds[gradient] = std::max(feeds[gradient], weightUnit[primals[i]]);
    }
  }
  for (NodeId node = static_cast<NodeId>(n); node-- > 0;) {
    for (NodeId user : graph.users(node)) feeds[node] = std::max(feeds[node], feeds[user]);
  }

  int32_t previous = 0;
  for (NodeId node = 0; node < n; ++node) {
    const ir::Node& info = graph.node(node);
    if (info.kind == ir::NodeKind::Output) continue;
    if (weightUnit[node] != kNoUnit) {
      out.unit[node] = weightUnit[node];
      continue;
    }
    int32_t unit = kNoUnit;
    if (backward[node]) {
      unit = std::max(feeds[node], reads[node]);
    } else if (info.isInput()) {
      continue;  // the unit of its first user, below
    } else {
      unit = reach[node];
    }
    out.unit[node] = unit == kNoUnit ? previous : unit;
    previous = out.unit[node];
  }
  for (NodeId node = 0; node < n; ++node) {
    if (!graph.node(node).isInput() || out.unit[node] != kNoUnit) continue;
    int32_t first = 0;
    for (NodeId user : graph.users(node)) {
      if (out.unit[user] != kNoUnit) {
        first = out.unit[user];
        break;
      }
    }
    out.unit[node] = first;
  }
  return out;
}

std::string layerUnitKey(std::string_view modulePath) {
  size_t start = 0;
  bool first = true;
  while (start <= modulePath.size()) {
    const size_t dot = std::min(modulePath.find('.', start), modulePath.size());
    const std::string_view component = modulePath.substr(start, dot - start);
    const bool numeric = !component.empty() && std::all_of(component.begin(), component.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
    if (numeric && !first) return std::string(modulePath.substr(0, dot));
    first = false;
    start = dot + 1;
  }
  return {};
}

}  // namespace lathe::analysis

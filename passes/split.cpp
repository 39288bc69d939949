#include "passes/split.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <map>
#include <vector>

#include "analysis/joint.h"
#include "util/diagnostics.h"
#include "util/format.h"

namespace lathe::passes {

namespace {

using ir::NodeId;
using plan::kNone;

constexpr NodeId kNever = std::numeric_limits<NodeId>::max();  // first use of a value nothing reads

bool isCall(const ir::Node& node) {
  return node.kind == ir::NodeKind::CallFunction || node.kind == ir::NodeKind::CallMethod ||
         node.kind == ir::NodeKind::CallModule;
}

bool isInput(const ir::Node& node) {
  return node.kind == ir::NodeKind::Placeholder || node.kind == ir::NodeKind::GetAttr;
}


std::string plural(size_t count, std::string_view word) {
  return std::to_string(count) + " " + std::string(word) + (count == 1 ? "" : "s");
}

// ---- pieces ----

struct Pieces {
  std::vector<int32_t> piece;
  std::vector<bool> boundary;
  int32_t count = 0;
  size_t splitOps = 0;
};

Pieces splitPieces(const PassContext& context, bool attention) {
  const ir::Graph& graph = context.graph;
  const size_t n = graph.size();
  Pieces out;
  out.piece.assign(n, kNone);
  out.boundary.assign(n, false);

  std::vector<int32_t> raw(n, kNone);
  int32_t id = 0;
  for (NodeId node = 0; node < n; ++node) {
    if (node % 4096 == 0) context.progress.checkCancelled();
    const ir::Node& info = graph.node(node);
    if (!isCall(info)) continue;
    const ir::OpInfo& op = context.ops.lookup(graph.target(node));
    if (op.subgraphBoundary || (attention && op.category == ir::OpCategory::Attention)) {
      out.boundary[node] = true;
      ++out.splitOps;
      id += 1;
      raw[node] = id;
      id += 1;
      continue;
    }
    // An element of the split op's tuple result (not an index into a tensor it returned).
    const bool element = op.category == ir::OpCategory::Getitem && info.args.size() == 2 &&
                         info.args[0].kind == ir::Arg::Kind::Node && info.args[1].kind == ir::Arg::Kind::Int;
    if (element && out.boundary[info.args[0].node]) {
      raw[node] = raw[info.args[0].node];
      continue;
    }
    raw[node] = id;
  }

  // Dense renumbering: ids in use, in increasing order, become 0, 1, 2, ...
  std::vector<int32_t> used;
  for (int32_t r : raw) {
    if (r != kNone) used.push_back(r);
  }
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  for (NodeId node = 0; node < n; ++node) {
    if (raw[node] == kNone) continue;
    out.piece[node] = static_cast<int32_t>(std::lower_bound(used.begin(), used.end(), raw[node]) - used.begin());
  }
  out.count = static_cast<int32_t>(used.size());

  for (NodeId node = 0; node < n; ++node) {
    if (!isInput(graph.node(node))) continue;
    int32_t first = 0;
    for (NodeId user : graph.users(node)) {
      if (out.piece[user] != kNone) {
        first = out.piece[user];
        break;
      }
    }
    out.piece[node] = first;
    out.count = std::max(out.count, first + 1);
  }
  return out;
}

std::vector<std::string> pieceDiff(const ir::Graph& graph, const Pieces& pieces) {
  std::vector<size_t> sizes(static_cast<size_t>(pieces.count), 0);
  std::vector<NodeId> splitOpOf(static_cast<size_t>(pieces.count), ir::kNoNode);
  for (NodeId node = 0; node < graph.size(); ++node) {
    if (pieces.piece[node] == kNone) continue;
    ++sizes[static_cast<size_t>(pieces.piece[node])];
    if (pieces.boundary[node]) splitOpOf[static_cast<size_t>(pieces.piece[node])] = node;
  }
  std::vector<std::string> lines;
  for (size_t p = 0; p < sizes.size(); ++p) {
    std::string line = "+ piece " + std::to_string(p) + ": " + plural(sizes[p], "node");
    if (splitOpOf[p] != ir::kNoNode) {
      line += " (split op " + std::string(graph.name(splitOpOf[p])) + ")";
    } else if (p > 0 && splitOpOf[p - 1] != ir::kNoNode) {
      line += " (after split op " + std::string(graph.name(splitOpOf[p - 1])) + ")";
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

// ---- layer units ----

NodeId firstUse(const ir::Graph& graph, NodeId node) {
  const auto users = graph.users(node);
  return users.empty() ? kNever : users[0];
}

// Tangent placeholders and everything downstream of them.
std::vector<bool> backwardNodes(const ir::Graph& graph, const analysis::GraphInputs& inputs) {
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
                                                                              const analysis::GraphInputs& inputs,
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
  std::vector<int32_t> stretch(graph.size(), kNone);
  int32_t current = 0;
  for (NodeId node = 0; node < graph.size(); ++node) {
    if (backward[node] || !isCall(graph.node(node))) continue;
    if (ops.lookup(graph.target(node)).category == ir::OpCategory::Attention) ++current;
    stretch[node] = current;
  }
  std::map<int32_t, std::vector<NodeId>> byStretch;
  for (NodeId p : parameters) {
    int32_t at = current;
    for (NodeId user : graph.users(p)) {
      if (stretch[user] != kNone) {
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

LayerUnits layerUnits(const ir::Graph& graph, const analysis::GraphInputs& inputs, const ir::OpRegistry& ops) {
  const size_t n = graph.size();
  LayerUnits out;
  out.unit.assign(n, kNone);

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
  std::vector<int32_t> weightUnit(n, kNone);
  for (auto& [name, weights] : named) {
    plan::LayerUnit unit;
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
  std::vector<int32_t> reach(n, kNone), weightView(n, kNone), reads(n, kNone);
  for (NodeId node = 0; node < n; ++node) {
    if (weightUnit[node] != kNone) {
      reach[node] = weightView[node] = weightUnit[node];
      continue;
    }
    const auto ins = graph.inputs(node);
    for (NodeId in : ins) {
      reach[node] = std::max(reach[node], reach[in]);
      reads[node] = std::max(reads[node], weightView[in]);
    }
    if (isCall(graph.node(node)) && !ins.empty() &&
        ops.lookup(graph.target(node)).category == ir::OpCategory::View) {
      weightView[node] = weightView[ins[0]];
    }
  }

  // Latest unit among the parameters whose gradient output a node transitively feeds. A joint
  // graph returns the forward outputs, then one gradient slot per primal.
  std::vector<int32_t> feeds(n, kNone);
  std::vector<NodeId> primals;
  for (NodeId p : inputs.placeholders) {
    if (inputs.role[p] != ir::Role::Tangent) primals.push_back(p);
  }
  const std::vector<NodeId> items = analysis::outputItems(graph);
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
    if (weightUnit[node] != kNone) {
      out.unit[node] = weightUnit[node];
      continue;
    }
    int32_t unit = kNone;
    if (backward[node]) {
      unit = std::max(feeds[node], reads[node]);
    } else if (isInput(info)) {
      continue;  // the unit of its first user, below
    } else {
      unit = reach[node];
    }
    out.unit[node] = unit == kNone ? previous : unit;
    previous = out.unit[node];
  }
  for (NodeId node = 0; node < n; ++node) {
    if (!isInput(graph.node(node)) || out.unit[node] != kNone) continue;
    int32_t first = 0;
    for (NodeId user : graph.users(node)) {
      if (out.unit[user] != kNone) {
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

PassResult SplitPass::run(const PassContext& context, const plan::PlanState& before, const PassOptions& options) const {
  options.requireKnown(name(), {"attention", "units"});
  requireSupportedGraph(context.graph);
  const bool attention = options.flag("attention", true);
  const bool withUnits = options.flag("units", true);
  const ir::Graph& graph = context.graph;
  const size_t n = graph.size();
  if (context.inputs.role.size() != n || context.inputs.modulePath.size() != n) {
    throw Error(ErrorCode::Internal, "split: graph inputs describe " + std::to_string(context.inputs.role.size()) +
                                         " nodes, the graph has " + std::to_string(n));
  }

  PassResult result;
  result.state = before;
  const Pieces pieces = splitPieces(context, attention);
  result.diff = pieceDiff(graph, pieces);
  result.state.piece = pieces.piece;
  result.state.boundary = pieces.boundary;
  result.state.pieceCount = pieces.count;

  LayerUnits units;
  units.unit.assign(n, kNone);
  if (withUnits) units = layerUnits(graph, context.inputs, context.ops);
  result.state.unit = std::move(units.unit);
  result.state.units = std::move(units.units);

  uint64_t minBytes = 0, maxBytes = 0;
  for (const plan::LayerUnit& unit : result.state.units) {
    minBytes = unit.id == 0 ? unit.weightBytes : std::min(minBytes, unit.weightBytes);
    maxBytes = std::max(maxBytes, unit.weightBytes);
    result.diff.push_back("+ unit " + unit.name + ": " + plural(unit.weights.size(), "weight") + ", " +
                          formatBytes(unit.weightBytes));
  }
  result.stats = {
      {"pieces", static_cast<double>(result.state.pieceCount), ""},
      {"split_ops", static_cast<double>(pieces.splitOps), ""},
      {"units", static_cast<double>(result.state.units.size()), ""},
      {"unit_weight_bytes_min", static_cast<double>(minBytes), "bytes"},
      {"unit_weight_bytes_max", static_cast<double>(maxBytes), "bytes"},
  };
  return result;
}

}  // namespace lathe::passes

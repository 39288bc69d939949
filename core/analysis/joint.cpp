#include "analysis/joint.h"

#include <algorithm>
#include <limits>

#include "ir/op_info.h"

namespace lathe::analysis {

namespace {

constexpr int32_t kFar = 1'000'000'000;  // torch's int(1e9)

// Nodes FX's dead-code elimination keeps although nothing reads them.
bool impure(const ir::Graph& graph, ir::NodeId n) {
  const std::string_view target = graph.target(n);
  return target.find("_assert") != std::string_view::npos || target.find("sym_constrain_range") != std::string_view::npos ||
         target.ends_with("_.default") || target.find(".copy_.") != std::string_view::npos;
}

// Nodes computable from `available` (placeholders outside it are unavailable).
std::vector<uint8_t> computableFrom(const ir::Graph& graph, const std::vector<uint8_t>& available) {
  const size_t n = graph.size();
  std::vector<uint8_t> computable(n, 0);
  for (ir::NodeId id = 0; id < n; ++id) {
    const ir::Node& node = graph.node(id);
    if (available[id]) {
      computable[id] = 1;
      continue;
    }
    if (node.kind == ir::NodeKind::Placeholder || node.kind == ir::NodeKind::Output) continue;
    bool ok = true;
    for (ir::NodeId in : graph.inputs(id)) ok = ok && computable[in];
    computable[id] = ok ? 1 : 0;
  }
  return computable;
}

// torch's _extract_graph_with_inputs_outputs, node set only: nodes computable from `available`
// (`computable` = computableFrom(graph, available)), kept when an output needs them (or they are
// impure). Returns per-node membership; `missing` receives needed nodes that could not be
// computed. A needed node in `lookThrough` is not reported itself: its inputs are, so that the
// values a caller could make available are the ones named.
std::vector<uint8_t> extract(const ir::Graph& graph, const std::vector<uint8_t>& impureNodes,
                             const std::vector<uint8_t>& available, const std::vector<uint8_t>& computable,
                             std::span<const ir::NodeId> outputs, std::vector<ir::NodeId>* missing,
                             const std::vector<uint8_t>* lookThrough = nullptr) {
  const size_t n = graph.size();
  std::vector<uint8_t> kept(n, 0);
  std::vector<ir::NodeId> stack;
  auto need = [&](ir::NodeId id) {
    if (kept[id]) return;
    kept[id] = 1;
    stack.push_back(id);
  };
  for (ir::NodeId out : outputs) need(out);
  for (ir::NodeId id = 0; id < n; ++id) {
    if (computable[id] && !available[id] && impureNodes[id]) need(id);
  }
  while (!stack.empty()) {
    const ir::NodeId id = stack.back();
    stack.pop_back();
    if (!computable[id]) {
      if (lookThrough != nullptr && (*lookThrough)[id]) {
        for (ir::NodeId in : graph.inputs(id)) need(in);
      } else if (missing != nullptr) {
        missing->push_back(id);
      }
      continue;
    }
    if (available[id]) continue;
    for (ir::NodeId in : graph.inputs(id)) need(in);
  }
  for (ir::NodeId id = 0; id < n; ++id) kept[id] = kept[id] && computable[id];
  if (missing != nullptr) std::sort(missing->begin(), missing->end());
  return kept;
}

}  // namespace

std::vector<ir::NodeId> outputItems(const ir::Graph& graph) {
  std::vector<ir::NodeId> items;
  const ir::NodeId out = graph.outputNode();
  if (out == ir::kNoNode || graph.node(out).args.empty()) return items;
  const ir::Arg& value = graph.node(out).args[0];
  if (value.kind == ir::Arg::Kind::List || value.kind == ir::Arg::Kind::Tuple) {
    for (const ir::Arg& item : value.items) items.push_back(item.kind == ir::Arg::Kind::Node ? item.node : ir::kNoNode);
  } else if (value.kind == ir::Arg::Kind::Node) {
    items.push_back(value.node);
  }
  return items;
}

JointInfo analyzeJoint(const ir::Graph& graph) {
  JointInfo info;
  const size_t n = graph.size();
  info.impure.assign(n, 0);
  for (ir::NodeId id = 0; id < n; ++id) {
    const ir::NodeKind kind = graph.node(id).kind;
    info.impure[id] = kind != ir::NodeKind::Placeholder && kind != ir::NodeKind::Output && impure(graph, id);
  }
  for (ir::NodeId id = 0; id < n; ++id) {
    const ir::Node& node = graph.node(id);
    if (node.kind != ir::NodeKind::Placeholder) continue;
    (node.role == ir::Role::Tangent ? info.tangents : info.primals).push_back(id);
  }
  const std::vector<ir::NodeId> items = outputItems(graph);
  if (info.tangents.empty() || items.size() < info.primals.size()) return info;
  info.forwardOutputCount = items.size() - info.primals.size();
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i] == ir::kNoNode) continue;
    (i < info.forwardOutputCount ? info.forwardOutputs : info.backwardOutputs).push_back(items[i]);
  }

  info.requiredBackward.assign(n, 0);
  for (ir::NodeId id : info.tangents) info.requiredBackward[id] = 1;
  for (ir::NodeId id = 0; id < n; ++id) {
    if (!info.requiredBackward[id]) continue;
    for (ir::NodeId user : graph.users(id)) {
      if (graph.node(user).kind != ir::NodeKind::Output) info.requiredBackward[user] = 1;
    }
  }
  info.tangentClosure = info.requiredBackward;
  for (ir::NodeId out : info.backwardOutputs) {
    if (graph.node(out).kind != ir::NodeKind::Output) info.requiredBackward[out] = 1;
  }

  info.primal.assign(n, 0);
  for (ir::NodeId id : info.primals) info.primal[id] = 1;
  info.fromPrimals = computableFrom(graph, info.primal);
  info.requiredForward = extract(graph, info.impure, info.primal, info.fromPrimals, info.forwardOutputs, nullptr);
  for (ir::NodeId id : info.primals) info.requiredForward[id] = 1;  // placeholders of the forward graph

  info.forwardOrder.assign(n, -1);
  int32_t order = 0;
  for (ir::NodeId id = 0; id < n; ++id) {
    if (info.requiredForward[id]) info.forwardOrder[id] = order++;
  }
  info.distanceFromBackward.assign(n, kFar);
  for (ir::NodeId id = static_cast<ir::NodeId>(n); id-- > 0;) {
    const ir::Node& node = graph.node(id);
    if (node.kind == ir::NodeKind::Output) continue;
    if (!info.requiredForward[id]) {
      info.distanceFromBackward[id] = 0;
      continue;
    }
    int32_t best = kFar;
    for (ir::NodeId user : graph.users(id)) {
      const int32_t d = graph.node(user).kind == ir::NodeKind::Output ? kFar : info.distanceFromBackward[user];
      best = std::min(best, d == kFar ? kFar : d + 1);
    }
    info.distanceFromBackward[id] = best;
  }
  info.joint = true;
  return info;
}

StepPartition partitionJoint(const ir::Graph& graph, const JointInfo& info, std::span<const ir::NodeId> saved) {
  StepPartition step;
  const size_t n = graph.size();
  std::vector<uint8_t> isSaved(n, 0);
  for (ir::NodeId id : saved) isSaved[id] = 1;

  // Backward: from the saved values and the tangents to the gradients.
  std::vector<uint8_t> backwardInputs(n, 0);
  for (ir::NodeId id = 0; id < n; ++id) {
    if (isSaved[id] && !info.tangentClosure[id]) backwardInputs[id] = 1;
  }
  for (ir::NodeId id : info.tangents) backwardInputs[id] = 1;
  for (ir::NodeId id = 0; id < n; ++id) {
    if (isSaved[id] && info.tangentClosure[id] && graph.node(id).kind != ir::NodeKind::Placeholder) step.missing.push_back(id);
  }
  std::vector<ir::NodeId> missing;
  std::vector<uint8_t> backward = extract(graph, info.impure, backwardInputs, computableFrom(graph, backwardInputs),
                                          info.backwardOutputs, &missing, &info.tangentClosure);
  step.missing.insert(step.missing.end(), missing.begin(), missing.end());
  std::sort(step.missing.begin(), step.missing.end());
  step.missing.erase(std::unique(step.missing.begin(), step.missing.end()), step.missing.end());

  // Saved values the backward never reads are dropped, as torch does.
  std::vector<uint8_t> readByBackward(n, 0);
  for (ir::NodeId id = 0; id < n; ++id) {
    if (!backward[id] || backwardInputs[id]) continue;
    for (ir::NodeId in : graph.inputs(id)) readByBackward[in] = 1;
  }
  for (ir::NodeId out : info.backwardOutputs) readByBackward[out] = 1;
  for (ir::NodeId id = 0; id < n; ++id) {
    if (isSaved[id] && !info.tangentClosure[id] && readByBackward[id]) step.saved.push_back(id);
  }

  // Forward: the forward outputs and the saved values from the primals.
  std::vector<ir::NodeId> forwardTargets(info.forwardOutputs);
  forwardTargets.insert(forwardTargets.end(), step.saved.begin(), step.saved.end());
  std::vector<ir::NodeId> forwardMissing;
  step.inForward = extract(graph, info.impure, info.primal, info.fromPrimals, forwardTargets, &forwardMissing);
  for (ir::NodeId id : forwardMissing) step.missing.push_back(id);
  for (ir::NodeId id = 0; id < n; ++id) {
    if (step.inForward[id] && graph.node(id).kind != ir::NodeKind::Placeholder) step.forward.push_back(id);
  }

  step.inBackward.assign(n, 0);
  for (ir::NodeId id = 0; id < n; ++id) {
    if (backward[id] && !backwardInputs[id] && graph.node(id).kind != ir::NodeKind::Placeholder) {
      step.inBackward[id] = 1;
      if (step.inForward[id]) step.recomputed.push_back(id);
    }
  }
  // Execution order of the backward: the tangent closure in program order; everything else (recomputed
  // values, values computed from saved weights) just before its first use, as torch's
  // reordering_to_mimic_autograd_engine places it.
  std::vector<uint8_t> emitted(n, 0);
  std::vector<std::pair<ir::NodeId, size_t>> stack;
  auto emit = [&](ir::NodeId root) {
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [id, next] = stack.back();
      const auto ins = graph.inputs(id);
      if (next < ins.size()) {
        const ir::NodeId in = ins[next++];
        if (step.inBackward[in] && !emitted[in]) {
          emitted[in] = 1;
          stack.emplace_back(in, 0);
        }
        continue;
      }
      step.backward.push_back(id);
      stack.pop_back();
    }
  };
  for (ir::NodeId id = 0; id < n; ++id) {
    if (!step.inBackward[id] || emitted[id] || !info.tangentClosure[id]) continue;
    emitted[id] = 1;
    emit(id);
  }
  for (ir::NodeId id = 0; id < n; ++id) {  // gradients that need no tangent (rare)
    if (!step.inBackward[id] || emitted[id]) continue;
    emitted[id] = 1;
    emit(id);
  }
  return step;
}

}  // namespace lathe::analysis

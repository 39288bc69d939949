// Analyses of an AOTAutograd joint graph (`def forward(self, primals, tangents)` returning the
// forward outputs followed by one gradient slot per primal): which nodes the forward must compute,
// which belong to the backward, and how a set of saved values splits the graph into a forward and a
// backward with recomputation. The classification follows torch's min-cut partitioner
// (torch/_functorch/partitioners.py: classify_nodes, _extract_graph_with_inputs_outputs), so
// decisions made on it can be compared with torch's own.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ir/graph.h"

namespace lathe::analysis {

struct JointInfo {
  // false: not a joint graph (no tangents, or outputs do not fit); the placeholders are then all in
  // `primals` and the other fields are empty.
  bool joint = false;
  std::vector<ir::NodeId> primals;   // placeholders that are not tangents, in order
  std::vector<ir::NodeId> tangents;
  size_t forwardOutputCount = 0;     // output items before the gradients
  std::vector<ir::NodeId> forwardOutputs;   // nodes returned as forward outputs (None items skipped)
  std::vector<ir::NodeId> backwardOutputs;  // gradient nodes (None items skipped)
  // Per node flags.
  std::vector<uint8_t> impure;            // nodes FX's dead-code elimination keeps although nothing reads them (set for every graph)
  std::vector<uint8_t> primal;            // the primals
  std::vector<uint8_t> fromPrimals;       // computable from the primals alone
  std::vector<uint8_t> requiredForward;   // computed by the forward: ancestors of forward outputs reachable from primals
  std::vector<uint8_t> requiredBackward;  // tangents, everything downstream of them, and gradient outputs
  std::vector<uint8_t> tangentClosure;    // tangents and everything downstream of them
  std::vector<int32_t> forwardOrder;      // position among requiredForward nodes, -1 elsewhere
  std::vector<int32_t> distanceFromBackward;  // torch's dist_from_bw: 0 off the forward, else 1 + min over users

  [[nodiscard]] bool isForward(ir::NodeId n) const { return requiredForward[n] != 0; }
  [[nodiscard]] bool isBackward(ir::NodeId n) const { return requiredBackward[n] != 0; }
};

[[nodiscard]] JointInfo analyzeJoint(const ir::Graph& graph);

// A training step made from a joint graph and a saved set, as torch's _extract_fwd_bwd_modules
// builds it: the forward computes the forward outputs and the saved values from the primals; the
// backward starts from the saved values and the tangents and computes the gradients, recomputing
// any forward value it needs that was not saved.
struct StepPartition {
  std::vector<ir::NodeId> forward;     // program order
  std::vector<ir::NodeId> backward;    // execution order: each recomputed value just before its first use
  std::vector<ir::NodeId> saved;       // the saved values the backward reads (unused ones dropped), program order
  std::vector<ir::NodeId> recomputed;  // forward values the backward computes again, program order
  std::vector<uint8_t> inForward, inBackward;  // per node
  // Values the backward needs but cannot compute from saved values and tangents (a primal that was
  // not saved, a saved value in the tangent closure). Empty for a valid saved set.
  std::vector<ir::NodeId> missing;
  [[nodiscard]] bool valid() const { return missing.empty(); }
};

[[nodiscard]] StepPartition partitionJoint(const ir::Graph& graph, const JointInfo& info,
                                           std::span<const ir::NodeId> saved);

// Items of the output node in order; kNoNode for a None item.
[[nodiscard]] std::vector<ir::NodeId> outputItems(const ir::Graph& graph);

}  // namespace lathe::analysis

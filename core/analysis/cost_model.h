// Roofline cost of nodes and fused groups on a hardware profile.
//
// A kernel takes max(FLOPs / FLOP rate, bytes / memory bandwidth) plus one launch. FLOPs and bytes
// come from ir::estimateCost. The FLOP rate of matrix-unit ops (matmul, attention, convolution) is
// the profile's rate for the dtype of their first matrix operand (an input of two dimensions or
// more); every other op does its arithmetic on the vector units in fp32 (Inductor upcasts
// bf16/fp16 math), so it gets the fp32 rate. Both ceilings are scaled by the profile's efficiency
// for the op's category: the fraction of the roofline such kernels reach. Collectives are priced
// as memory traffic (profiles have no interconnect yet). Nodes without a kernel (CostFormula::None:
// views, getitem, host ops; placeholders and the output) cost nothing and launch nothing.
#pragma once

#include <span>
#include <vector>

#include "hw/hw_profile.h"
#include "ir/graph.h"
#include "ir/op_info.h"

namespace lathe::analysis {

struct NodeCost {
  double flops = 0;
  double bytes = 0;  // read + written
  double computeSeconds = 0;
  double memorySeconds = 0;
  // Collectives on a profile that describes its peer link: the ring's time over it (latency per
  // step, the bytes each rank sends at peer_bandwidth); 0 otherwise.
  double linkSeconds = 0;
  double seconds = 0;  // max(computeSeconds, memorySeconds, linkSeconds) + the launch overhead when kernel
  bool kernel = false;
};

[[nodiscard]] NodeCost nodeCost(const ir::Graph& graph, ir::NodeId node, const hw::HwProfile& profile,
                                const ir::OpRegistry& registry = ir::OpRegistry::global());

// One fused kernel made of `nodes` (any order; duplicates count once): FLOPs and compute time summed over
// its nodes; bytes = tensors it reads from outside the group (each once; through a view inside the
// group only the view's extent) + values it writes that are read outside the group or are graph
// outputs. Views inside the group are free. Memory time uses the lowest efficiency among the
// group's kernel nodes (a fused reduction runs at the pace of a reduction). One launch, or none
// when no node of the group is a kernel.
[[nodiscard]] NodeCost groupCost(const ir::Graph& graph, std::span<const ir::NodeId> nodes,
                                 const hw::HwProfile& profile,
                                 const ir::OpRegistry& registry = ir::OpRegistry::global());

// nodeCost(...).seconds of every node, indexed by NodeId.
[[nodiscard]] std::vector<double> nodeSeconds(const ir::Graph& graph, const hw::HwProfile& profile,
                                              const ir::OpRegistry& registry = ir::OpRegistry::global());

}  // namespace lathe::analysis

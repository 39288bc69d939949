// The fusion pass: Inductor-style groups of nodes that become one generated kernel (the contract the
// CUDA generator consumes: PlanState.group and .groups).
//
// Greedy and deterministic over program order. Each fusible node (OpInfo::fusible; not a split op)
// tries the groups of its producers, in input order, and joins the first one where all rules
// hold; it then also pulls in the other producer groups where the rules still hold; else it starts
// a group of its own. Rules:
// - Views and getitems cost nothing and are never anchors: one joins the group of the node it
//   reads when every user of it is in that group, or when a member reads it (left outside, it
//   would be a path out of the group and back in); else it stays outside.
// - A group is convex: no path leaves it and comes back, so fusing never makes a cycle.
// - At most one reduction or normalization per group: kind "reduction" or "normalization", with
//   its pointwise prologue and epilogue; groups without one are "pointwise".
// - Shapes (element counts, symbolic sizes at their hints): a group has a loop numel L (the common
//   output numel of a pointwise group; the numel of the tensor a reduction reduces) and, with a
//   reduction, a reduced numel R (its smallest output). A pointwise node joins when its output
//   numel is L, or R where the group has a reduction; a reduction joins a group without one when
//   the tensor it reduces has numel L. Inputs of other numels are read as broadcasts. Nodes whose
//   sizes have no hints, or that hold no elements, do not fuse.
// - Size: at most max_nodes nodes (option, default 64 as Inductor's max_fusion_size), views included.
// - Never across pieces (PlanState.piece where the split pass set it, else the stretches between
//   subgraph_boundary ops) and never across a split op; in a joint graph, never a forward node
//   (not downstream of a tangent) with a backward one.
// Groups of one node are not groups. Ids follow the program order of each group's first node.
//
// Statistics: FusionPass's declarations. traffic_removed_bytes estimates the memory traffic fusion
// removes: one read of every in-group value per in-group reader, and one write of every member that
// nothing outside the group reads.
#pragma once

#include <span>
#include <string_view>

#include "passes/pass.h"

namespace lathe::passes {

class FusionPass final : public Pass {
 public:
  static constexpr OptionSpec kMaxNodes{"max_nodes", OptionType::Number, "64",
                                        "the most nodes a group holds, views included (Inductor's max_fusion_size)",
                                        {}, 1, 1e9, false, true};

  static constexpr StatKey kGroups{"groups", StatUnit::Count, "fusion groups (each one generated kernel)"};
  static constexpr StatKey kGroupsPointwise{"groups_pointwise", StatUnit::Count, "groups without a reduction"};
  static constexpr StatKey kGroupsReduction{"groups_reduction", StatUnit::Count, "groups around a reduction"};
  static constexpr StatKey kGroupsNormalization{"groups_normalization", StatUnit::Count,
                                                "groups around a normalization (softmax, layer_norm)"};
  static constexpr StatKey kFusedNodes{"fused_nodes", StatUnit::Count, "nodes in a group"};
  static constexpr StatKey kKernelsBefore{"kernels_before", StatUnit::Count,
                                          "calls other than views, getitems and host ops"};
  static constexpr StatKey kKernelsAfter{"kernels_after", StatUnit::Count, "kernels left once each group is one"};
  static constexpr StatKey kTrafficRemoved{"traffic_removed_bytes", StatUnit::Bytes,
                                         "memory traffic fusion removes (in-group reads and writes)"};

  [[nodiscard]] const PassInfo& info() const override;
  [[nodiscard]] PassResult run(const PassContext& context, const plan::PlanState& before,
                               const PassOptions& options) const override;
};

// True when no path leaves the node set and comes back into it. Nodes in any order, duplicates
// allowed; the graph's program order must be topological (as FX graphs are).
[[nodiscard]] bool isConvex(const ir::Graph& graph, std::span<const ir::NodeId> group);

}  // namespace lathe::passes

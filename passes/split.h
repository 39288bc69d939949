// The split pass: MagiCompiler's piecewise split and FSDP-style layer units.
//
// Pieces. Nodes are walked in program order. A split op is a node whose op is flagged
// subgraph_boundary (OpInfo::subgraphBoundary, also from a flags file) or, with option
// attention=true (the default), whose category is Attention; Attention covers the backward
// variants too, so a joint graph splits at its backward attention ops as well. Numbering is
// MagiCompiler's (the id goes up by one, the split op gets the id, it goes up by one again; other
// nodes take the current id), then renumbered densely: MagiCompiler leaves gaps when a split op
// comes first or two are consecutive, and its offload scheduler then indexes the wrong piece.
// Getitems reading a split op's tuple belong to the split op's piece. Placeholders and get_attr
// nodes take the piece of their first user (piece 0 when nothing reads them); the output node has
// none. PlanState: piece, boundary (exactly the split ops), pieceCount.
//
// Layer units (option units=true, the default): the target's analysis::layerUnits
// (analysis/layer_units.h). PlanState: unit, units.
#pragma once

#include "passes/pass.h"

namespace lathe::passes {

class SplitPass final : public Pass {
 public:
  static constexpr OptionSpec kAttention{"attention", OptionType::Flag, "true",
                                         "split at attention ops too, not only at subgraph_boundary ops"};
  static constexpr OptionSpec kUnits{"units", OptionType::Flag, "true", "group the weights into layer units"};

  static constexpr StatKey kPieces{"pieces", StatUnit::Count, "pieces the split ops cut the graph into"};
  static constexpr StatKey kSplitOps{"split_ops", StatUnit::Count, "ops the graph is split at"};
  static constexpr StatKey kLayerUnits{"units", StatUnit::Count, "layer units"};
  static constexpr StatKey kUnitWeightBytesMin{"unit_weight_bytes_min", StatUnit::Bytes, "weights of the smallest unit"};
  static constexpr StatKey kUnitWeightBytesMax{"unit_weight_bytes_max", StatUnit::Bytes, "weights of the largest unit"};

  [[nodiscard]] const PassInfo& info() const override;
  [[nodiscard]] PassResult run(const PassContext& context, const plan::PlanState& before,
                               const PassOptions& options) const override;
};

}  // namespace lathe::passes

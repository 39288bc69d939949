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
// Layer units (option units=true, the default). Parameters only: buffers are plain inputs, as in
// MagiCompiler's offload.
// - With module paths (GraphInputs::modulePath): a parameter's unit is the shortest prefix of its
//   path that ends in a numeric component under a container ("model.layers.3.mlp.up_proj" ->
//   "model.layers.3", "transformer.h.7", "vit.encoder.layer.11"). A parameter with no numeric
//   component goes to "prologue" when its first use comes before the first use of any layer
//   parameter, else to "epilogue"; with no layer parameters at all, everything is "prologue".
// - Without module paths (no parameter has one, e.g. no Dynamo join): repeated structure. The
//   forward program order is cut at each Attention op (the op starts the next stretch); a parameter
//   belongs to the stretch of its first forward use (the last stretch when the forward never reads
//   it). Stretches that own parameters become units "block.0", "block.1", ... in order.
// Units are ordered prologue, layers by first use, epilogue. Each node then gets a unit:
// - forward nodes: the latest-numbered unit among the parameters in its transitive inputs; with no
//   parameter among them, the unit of the previous node in program order (unit 0 at the start);
// - backward nodes (a tangent placeholder and everything downstream of it): the latest-numbered
//   unit among the parameters whose gradient output it transitively feeds and the parameters it
//   reads directly (or through views); with neither, the previous node's unit;
// - parameters: their unit; other placeholders and get_attr nodes: the unit of their first user;
//   the output node: none.
// PlanState: unit, units (weights in program order, weightBytes = sum of storage bytes).
//
// Stats: pieces, split_ops, units, unit_weight_bytes_min, unit_weight_bytes_max.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "passes/pass.h"

namespace lathe::passes {

class SplitPass final : public Pass {
 public:
  [[nodiscard]] std::string_view name() const override { return "split"; }
  [[nodiscard]] PassResult run(const PassContext& context, const plan::PlanState& before,
                               const PassOptions& options) const override;
};

// A graph's layer units as the pass computes them (above), on their own: the studio's module
// clusters need them without planning anything.
struct LayerUnits {
  std::vector<int32_t> unit;  // per node, plan::kNone for the output
  std::vector<plan::LayerUnit> units;
};
[[nodiscard]] LayerUnits layerUnits(const ir::Graph& graph, const analysis::GraphInputs& inputs,
                                    const ir::OpRegistry& ops);

// The layer-unit key of a module path ("model.layers.3.mlp.up_proj" -> "model.layers.3"); empty when
// no component after the first is a number.
[[nodiscard]] std::string layerUnitKey(std::string_view modulePath);

}  // namespace lathe::passes

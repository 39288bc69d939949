// Layer units of a graph, from its parameters' module paths or its repeated structure: what the
// split pass plans offload and layer-wise compile with, and what the studio clusters the graph by.
//
// Layer units: MagiCompiler's FSDP-style compile units, the weights of one transformer layer or
// repeated block. Parameters only: buffers are plain inputs, as in MagiCompiler's offload.
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
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/graph_inputs.h"
#include "ir/graph.h"
#include "ir/op_info.h"

namespace lathe::analysis {

inline constexpr int32_t kNoUnit = -1;

struct LayerUnit {
  int32_t id = kNoUnit;
  std::string name;                 // "model.layers.3"; "prologue" / "epilogue" for what is outside the layers
  std::vector<ir::NodeId> weights;  // parameter placeholders the unit owns, in program order
  uint64_t weightBytes = 0;         // their storage
};

struct LayerUnits {
  std::vector<int32_t> unit;  // per node, kNoUnit for the output
  std::vector<LayerUnit> units;
};
[[nodiscard]] LayerUnits layerUnits(const ir::Graph& graph, const GraphInputs& inputs, const ir::OpRegistry& ops);

// The layer-unit key of a module path ("model.layers.3.mlp.up_proj" -> "model.layers.3"); empty when
// no component after the first is a number.
[[nodiscard]] std::string layerUnitKey(std::string_view modulePath);

}  // namespace lathe::analysis

// Two graphs node by node: a joint graph before and after a change, two compiles of one frame, the
// same layer on two ranks. Inputs are aligned in order (their names are positions, and a recompile
// with a symbolic size inserts one); other nodes are matched by name where the op is the same (FX
// names are stable across runs of the same code), then, among those left, by what produced them:
// the same op from the same source line and function (a node renamed by a recompile that numbered
// its siblings differently). A matched
// pair that differs in its op, kind or value (dtype, shape) is a change; what is left is only in one
// of the graphs. Linear in the nodes (hash maps), deterministic (program order).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/op_info.h"

namespace lathe::analysis {

struct NodeDiff {
  enum class Kind : uint8_t { Changed, OnlyInA, OnlyInB };
  Kind kind = Kind::Changed;
  ir::NodeId a = ir::kNoNode;  // kNoNode: only in B
  ir::NodeId b = ir::kNoNode;  // kNoNode: only in A
  bool matchedByProvenance = false;  // a pair with different names, matched by op and source line
  // For Changed: what differs (DiffField bits), and the same as text for the CLI:
  // "op aten.mm.default -> aten.addmm.default", ...
  uint8_t fields = 0;
  std::vector<std::string> what;

  enum DiffField : uint8_t { Name = 1, NodeKindField = 2, Op = 4, Value = 8 };
  [[nodiscard]] bool differs(DiffField field) const { return (fields & field) != 0; }
};

struct GraphDiff {
  size_t nodesA = 0, nodesB = 0;
  // Pairs, changed or not: by name, inputs aligned under other names, by op and source line.
  size_t matchedByName = 0, matchedByPosition = 0, matchedByProvenance = 0;
  size_t changed = 0, onlyInA = 0, onlyInB = 0;
  // Calls per op category in each graph (ir::OpCategory order).
  std::array<size_t, ir::kOpCategoryCount> callsA{}, callsB{};
  std::vector<NodeDiff> nodes;  // changed pairs in A's order, then only-in-A, then only-in-B

  [[nodiscard]] bool identical() const { return changed == 0 && onlyInA == 0 && onlyInB == 0; }
};

[[nodiscard]] GraphDiff diffGraphs(const ir::Graph& a, const ir::Graph& b);

// "bf16[2, 4096]" for a tensor value, the expression for a symbolic scalar, "" when unknown.
[[nodiscard]] std::string valueText(const ir::Graph& graph, ir::NodeId node);

}  // namespace lathe::analysis

// The ops the generator expresses, by what each does to indices, and the readers of a node's
// arguments: an argument that is missing or not a constant where one is needed refuses the group.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "kernels/codegen/expressions.h"

namespace lathe::kernels::codegen {

// What an op does to indices, for the check of what may follow the reduction.
enum class Shaping : uint8_t {
  Elementwise,  // broadcasts its operands to its own shape
  Reshape,      // view, unsqueeze, squeeze, alias: same elements in the same row-major order
  Expand,
  Permute,
  Slice,
  Select,
  Embedding,
  Gather,        // index.Tensor, gather: elements picked by index tensors
  Scatter,       // scatter: the base, or the value whose index names this element
  Concat,        // cat: each element from one of the operands
  SliceScatter,  // slice_scatter: the source where the slice is, else the base
  Creation,      // iota, full, scalar_tensor: no tensor operand
  Getitem,
  Reduction,
  Normalization,  // softmax, log_softmax, layer_norm: element-sized, from its row's statistics
};

struct OpSpec {
  Shaping shaping;
  std::string_view name;  // short name the generator dispatches on
};

// "aten.mul.Tensor" -> packet "aten.mul", overload "Tensor".
std::pair<std::string, std::string> splitOverload(const std::string& canonical);
// The op a node calls, by its short name ("mul"), or Unsupported naming the target.
OpSpec opOf(const ir::Graph& graph, NodeId node);
std::string overloadOf(const ir::Graph& graph, NodeId node);

const Arg* kwarg(const ir::Graph& graph, NodeId node, std::string_view key);
// Positional argument `position`, else keyword `key`; nullptr when neither is given.
const Arg* argument(const ir::Graph& graph, NodeId node, size_t position, std::string_view key);
int64_t intArg(const Arg* arg, std::string_view what);
std::vector<int64_t> intList(const Arg* arg, std::string_view what);
int64_t normalizeDim(int64_t dim, size_t rank);

}  // namespace lathe::kernels::codegen

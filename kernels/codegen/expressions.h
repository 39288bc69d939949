// What every part of the generator shares: its refusal (Unsupported), tensor shapes and layouts,
// the C++ types generated values are computed in (Val), and element positions (Index).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "kernels/cuda_codegen.h"

namespace lathe::kernels::codegen {

using ir::Arg;
using ir::NodeId;
using Shape = std::vector<int64_t>;

// Thrown inside the generator of one group: the group is not generated, for this reason.
struct Unsupported {
  std::string reason;
};
[[noreturn]] void unsupported(std::string reason);

int64_t product(const Shape& shape, size_t from = 0, size_t to = SIZE_MAX);
Shape contiguousStrides(const Shape& sizes);
// Dense in row-major order: strides of dimensions larger than one are the contiguous ones.
bool isContiguous(const TensorSpec& spec);
// The non-1 sizes in order: two shapes with the same list hold their elements in the same order.
Shape squeezed(const Shape& shape);
// Same sizes, and the same strides where a dimension has more than one element.
bool sameLayout(const Shape& sizes, const Shape& strides, const TensorSpec& tensor);
// The dimensions of a dense tensor from the largest stride to the smallest, when its elements
// fill its storage without gaps in some order of its dimensions; nullopt otherwise.
std::optional<std::vector<size_t>> memoryOrder(const TensorSpec& tensor);

enum class CType : uint8_t { Float, Int, Bool };

std::string_view cTypeName(CType type);
// fp32 for floating dtypes, int64 / bool for the others.
CType computeType(ir::DType dtype);
// The type a tensor's elements are stored as in device memory.
std::string_view storageType(ir::DType dtype);

struct Val {
  std::string expr;
  CType type = CType::Float;
};

Val cast(const Val& v, CType to);
std::string floatLiteral(double value);
Val literal(const Arg& arg);
// `expr` (fp32) rounded to `dtype` where it is bf16 or fp16, as a store of it would round.
std::string rounded(const std::string& expr, ir::DType dtype);

// An element position: one index expression per dimension. `linear`, when set, is the row-major
// element number the dimensions were split from (views that keep the order pass it on).
struct Index {
  std::vector<std::string> dims;
  std::string linear;
  // When set: the element's number in memory order for a tensor laid out with these sizes and
  // strides (a permuted dense tensor, walked in its memory order).
  std::string memory;
  Shape memorySizes, memoryStrides;
};

}  // namespace lathe::kernels::codegen

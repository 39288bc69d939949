// CUDA C++ generation for the fusion groups of a plan (passes/fusion.h): one kernel per group, with
// a C launch function, so that a group runs as one kernel of the exported library.
//
// Every value of a group is generated as "its element at an index": a load for a value the group
// reads, an expression over its operands' elements for a member (broadcasts, views and casts are
// index and type transforms). Sizes and strides are the capture's, symbolic sizes at their hints:
// a launch checks the symbols it was given against those hints. Math is fp32 for floating values
// (int64 / bool for the others); values stay fp32 inside a group and are rounded to bf16 / fp16
// where the program converts them (convert_element_type) and where they are stored, as Inductor's
// kernels do by default: nearer the exact result than eager, and one conversion fewer per op.
//
// Kernel shapes:
// - pointwise: one element per thread, walked in the first output's memory order; where some
//   tensor is dense in that order, a second kernel takes 16 bytes of each such tensor per thread
//   (vector loads and stores) and the scalar one finishes the tail or runs alone when a pointer is
//   not aligned. Where each chunk lies in one innermost row, operands the chunk shares are loaded
//   once and broadcast runs (a RoPE table, a mask's positions) as one pack of at most 16 bytes;
//   a cat or slice_scatter whose boundaries fall between chunks picks its branch per chunk.
// - reduction / normalization (softmax, log_softmax, layer_norm): one block per row of the
//   reduction (the kept elements), fp32 accumulation, warp shuffles then shared memory across
//   warps; softmax statistics in one pass (running maximum and sum); where rows are consecutive
//   elements, a second kernel walks them in 16-byte chunks of the tensors read or written along
//   them (the launch picks it when their pointers are aligned). Members after the reduction
//   that are as large as its input run over the row again in the same block; they must reach the
//   reduced value through the row's own elements (the reduction over trailing dimensions, with
//   broadcasts and order-keeping views in between). Where they do not and rows are short, each
//   element reduces its own row inside a pointwise kernel; else the group is not generated.
//   Rows of at most 16 consecutive elements run on groups of lanes (a power of two per row,
//   combined by shuffles), other short rows a thread per row. The pass after the statistics
//   walks the row from its end (what the first pass read last is likeliest still in L2).
// - column reduction (over leading dimensions, the trailing ones kept): a block per strip of
//   consecutive columns, its thread groups over the rows (each warp's loads consecutive), the
//   groups' results combined in shared memory in halving steps (a fixed order); where pointers
//   allow, each thread takes 16 bytes of columns of the narrowest tensor.
// Anything the generator cannot express makes the group "not generated" with the reason; it never
// emits a kernel it cannot vouch for. Output is deterministic: the same plan gives the same bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "plan/plan_state.h"

namespace lathe::kernels {

// A dense tensor a launch reads or writes: sizes and strides in elements, at the hints.
struct TensorSpec {
  std::string name;  // the graph node's name
  ir::DType dtype = ir::DType::Unknown;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  // What makes the value: the node's canonical op ("aten.exp.default") or FX kind ("placeholder"),
  // so that a harness can draw inputs from the producer's value domain.
  std::string producer;
};

struct LaunchConfig {
  int64_t grid = 0;   // blocks of the main launch
  int64_t block = 0;  // threads per block
};

struct GeneratedKernel {
  std::string name;    // "lathe_g12_mean": the file src/<name>.cu and the __global__ function
  std::string launch;  // "lathe_launch_g12": the extern "C" entry point
  int32_t group = plan::kNone;
  std::string kind;    // the group's kind
  std::string source;  // the .cu text (includes lathe_kernels.cuh)
  std::vector<TensorSpec> inputs, outputs;
  std::vector<std::string> fx;  // the group's nodes as FX Python lines over the input names
  // Bytes read and written by one launch: each tensor once; of a table read only through gathers
  // (embedding, index, gather), the gathered elements.
  uint64_t bytes = 0;
  LaunchConfig config;
  int vectorWidth = 1;               // elements per thread in the vector kernel; 1 when there is none
  std::vector<std::string> symbols;  // the symbols whose hints the kernel was generated for
};

struct NotGenerated {
  int32_t group = plan::kNone;
  std::string reason;
};

struct Symbol {
  std::string name;  // "s0"
  int64_t hint = 0;
};

struct KernelSet {
  std::vector<GeneratedKernel> kernels;    // in group order
  std::vector<NotGenerated> notGenerated;  // in group order
  std::vector<Symbol> symbols;  // every symbol a kernel uses, by name; index = position in `symbols` of a launch
};

// The shared device helpers every kernel source includes, as the file lathe_kernels.cuh: the text of
// kernels/codegen/device/lathe_kernels.cuh, compiled into the library.
inline constexpr std::string_view kCommonHeaderName = "lathe_kernels.cuh";
[[nodiscard]] std::string commonHeader();

// The positions of the symbols in a launch's `symbols` array, as the file lathe_symbols.h (included
// by lathe_kernels.cuh): `#define LATHE_SYMBOL_s0 0`.
inline constexpr std::string_view kSymbolsHeaderName = "lathe_symbols.h";
[[nodiscard]] std::string symbolsHeader(const std::vector<Symbol>& symbols);

// Kernels for every group of `state` (node ids of `graph`). A group no fusion pass makes (no nodes
// or no anchor, an anchor outside it, a node listed twice or also in an earlier group, an id that
// is negative or repeats) is not generated, with the reason. Throws Error(Internal) only when the
// state does not belong to the graph (a node id beyond it).
[[nodiscard]] KernelSet generateKernels(const ir::Graph& graph, const plan::PlanState& state);

// One node as an FX Python line over the names of its inputs ("mul_3 = torch.ops.aten.mul.Tensor(add_1,
// rsqrt)"), runnable with `exec` given torch and those names.
[[nodiscard]] std::string fxLine(const ir::Graph& graph, ir::NodeId node);

}  // namespace lathe::kernels

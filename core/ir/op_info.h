// The operator registry: what each op target in a graph is (category, fusibility, the flags users
// set for custom ops) and what it costs (FLOPs and bytes from the node's tensor metadata).
//
// Built-in knowledge is one data table (op_table.cpp, one line per op). Keys are canonical names:
// "aten.mm" (a whole overload packet), "aten.max.other" (one overload, where overloads differ),
// "operator.getitem", torch-level names seen in Dynamo graphs ("torch.matmul",
// "torch._C._nn.linear") and bare method names of CallMethod nodes ("view", "to").
// lookup() accepts targets as graphs store them: "torch.ops.aten.mm.default", "aten::mm",
// "aten.add_.Tensor" (an in-place variant resolves to its functional op). Targets nobody knows
// resolve to category Unknown: they still load and show, they are never dropped.
//
// Categories:
//   Matmul        mm, bmm, addmm, linear, matmul, baddbmm, grouped and scaled mm
//   Attention     every scaled-dot-product-attention variant, forward and backward; flex_attention
//   Convolution   convolution and convolution_backward
//   Pointwise     elementwise math, comparisons, activations and their backward helpers, casts, copies
//   Reduction     sum, mean, amax, var_mean, argmax, cumsum, norms of vectors, losses, pooling
//   Normalization layer/RMS/batch/group norm, softmax and log_softmax, forward and backward
//   DataMovement  gathers and scatters (embedding, index, index_select), cat, pad, sort, topk
//   View          views and aliases (view, reshape, permute, slice, split, expand): no kernel
//   Creation      empty, zeros, full, arange, iota, *_like, new_*
//   Random        rand, randn, bernoulli, dropout, Inductor's RNG prims, philox wrappers
//   Collective    _c10d_functional, c10d and legacy c10d_functional ops, wait_tensor
//   Getitem       operator.getitem: picks an element of a tuple result (or indexes a tensor)
//   Host          runs on the host, no kernel: symbolic sizes and scalars (sym_size, sym_numel,
//                 _local_scalar_dense), asserts, grad-mode switches
//   HigherOrder   higher-order ops that run subgraphs (wrap, invoke_subgraph, cond, ...)
//   Custom        an op the user registered flags for at run time, with no built-in line
//   Unknown       everything else
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "util/diagnostics.h"

namespace lathe::ir {

enum class OpCategory : uint8_t {
  Unknown,
  Matmul,
  Attention,
  Convolution,
  Pointwise,
  Reduction,
  Normalization,
  DataMovement,
  View,
  Creation,
  Random,
  Collective,
  Getitem,
  Host,
  HigherOrder,
  Custom,
};
inline constexpr size_t kOpCategoryCount = 16;

// "matmul", "attention", ..., "data_movement", "higher_order", "unknown".
[[nodiscard]] std::string_view categoryName(OpCategory category);
[[nodiscard]] std::optional<OpCategory> categoryFromName(std::string_view name);

// How estimateCost prices a node. bytesRead defaults to the storage bytes of every distinct tensor
// input; bytesWritten to the storage bytes of every output (a tuple's outputs are the getitem
// nodes reading it). FLOPs are multiply-adds counted as 2.
enum class CostFormula : uint8_t {
  None,                   // no kernel: views, getitem, host ops, waits, subgraph calls (0 FLOPs, 0 bytes)
  Opaque,                 // unknown arithmetic: default bytes, FLOPs unknown (OpCost::flopsKnown = false)
  Memory,                 // pure data movement: default bytes, 0 FLOPs
  Fill,                   // writes its outputs without reading tensor data (*_like read only metadata):
                          // FLOPs = flopsPerElement x output numel
  Pointwise,              // FLOPs = flopsPerElement x output numel (the largest output of a tuple)
  Reduction,              // FLOPs = flopsPerElement x numel of the first tensor input
  Gather,                 // arg 0 is a table read only where indexed: reads min(table, output) bytes of it
  Matmul,                 // a @ b (args 0, 1) with broadcast batch: 2*B*M*N*K
  MatmulBias,             // bias + a @ b (args 0, 1, 2), addmm/baddbmm: 2*B*M*N*K + output numel
  Linear,                 // x @ W^T (+ bias) (args 0, 1, 2): 2*M*N*K (+ output numel with a bias)
  GroupedMatmul,          // _grouped_mm: 2*G*M*N*K, G only when both operands are 3-D
  LinearLoss,             // lathe.linear_cross_entropy (x, W, ...): the logits x @ W^T, 2*M*N*K, and
                          // their log-sum-exp, 5*M*N (as log_softmax)
  LinearLossBackward,     // lathe.linear_cross_entropy_backward (grad, x, W, ...): the logits recomputed
                          // chunk by chunk, then the x and W gradients: 3 * 2*M*N*K, and softmax's
                          // backward, 4*M*N
  Attention,              // forward: 2*B*H*Sq*Sk*(Dqk + Dv), i.e. 4*B*H*Sq*Sk*D; halved when causal
  AttentionBackward,      // 2*B*H*Sq*Sk*(3*Dqk + 2*Dv) = 2.5 x forward: QK^T recomputed, then dV, dP,
                          // dQ, dK (torch.utils.flop_counter counts the same five matmuls)
  Convolution,            // 2 * output numel * Cin/groups * kernel area; when aten.convolution's
                          // `transposed` (arg 6) is true: 2 * input numel * Cout/groups * kernel area
  ConvolutionTransposed,  // conv_transpose*: always the transposed count
  ConvolutionBackward,    // forward count x (grad_input wanted + grad_weight wanted), output_mask arg 10
  Collective,             // default bytes; FLOPs = flopsPerElement x input numel (the reduction adds);
                          // commBytes = max(bytes read, bytes written)
};

// Where attention formulas find their operands among the positional arguments.
struct AttentionArgs {
  int8_t query = 0;            // key and value follow it
  int8_t causal = -1;          // is_causal (bool) or custom_mask_type (int, nonzero = causal); -1: none
  int8_t maxSeqLenK = -1;      // max_k for packed variable-length inputs; -1: none
  bool sequenceFirst = false;  // [B, S, H, D] (_flash/_efficient_attention_*) instead of [B, H, S, D]
  friend bool operator==(const AttentionArgs&, const AttentionArgs&) = default;
};

// An argument of a node: a positional index, or a keyword name when position < 0.
struct ArgRef {
  int32_t position = -1;
  std::string keyword;
  friend bool operator==(const ArgRef&, const ArgRef&) = default;
};

// Output metadata of a node whose artifact does not record it, as MagiCompiler's
// `infer_output_meta_fn`: Recorded trusts the graph (every built-in op); FirstTensorArgs makes
// output i shaped like the i-th tensor argument (count outputs); Arguments makes output i shaped
// like arguments[i].
struct OutputMetaRule {
  enum class Kind : uint8_t { Recorded, FirstTensorArgs, Arguments };
  Kind kind = Kind::Recorded;
  uint32_t count = 1;
  std::vector<ArgRef> arguments;
  friend bool operator==(const OutputMetaRule&, const OutputMetaRule&) = default;
};

struct OpInfo {
  std::string name;  // the table key that matched: "aten.mm", "aten.max.other"; "" for Unknown
  OpCategory category = OpCategory::Unknown;
  CostFormula formula = CostFormula::Opaque;
  double flopsPerElement = 0;  // Fill, Pointwise, Reduction, Collective formulas
  AttentionArgs attention;     // Attention formulas
  bool fusible = false;        // can join a fused (Inductor-style generated) kernel
  // The functional form of an update of argument 0 (index_put, scatter_add, slice_scatter ...):
  // Inductor's reinplacing writes it into that argument when nothing else reads it.
  bool updatesFirstArgument = false;
  // MagiCompiler's custom-op flags. Built-in ops that torch's partitioner treats as compute
  // intensive (mm, bmm, addmm, convolution(_backward), SDPA flash/efficient,
  // _flash/_efficient_attention_forward, upsample_bilinear2d, _scaled_mm) are compute sensitive by
  // default, so a heuristic recompute reproduces MagiCompiler; cuDNN SDPA is not, as there.
  bool computeSensitive = false;  // keep its output when recomputing
  bool subgraphBoundary = false;  // piecewise split around it
  OutputMetaRule outputMeta;
  bool builtIn = true;  // false when run-time flags shaped this entry
  friend bool operator==(const OpInfo&, const OpInfo&) = default;
};

// A patch of run-time flags for one target. Unset fields keep the built-in value.
struct OpFlags {
  std::optional<bool> computeSensitive;
  std::optional<bool> subgraphBoundary;
  std::optional<bool> fusible;
  std::optional<OpCategory> category;
  // Take category, formula and fusibility from this op ("aten._scaled_dot_product_flash_attention")
  // before the other fields apply: how a custom kernel gets a cost.
  std::optional<std::string> like;
  std::optional<OutputMetaRule> outputMeta;
};

// "torch.ops.aten.mm.default" -> "aten.mm.default", "aten::mm" -> "aten.mm"; other text unchanged.
[[nodiscard]] std::string canonicalOpName(std::string_view target);

class OpRegistry {
 public:
  OpRegistry();  // the built-in table, no run-time flags
  OpRegistry(const OpRegistry&) = delete;
  OpRegistry& operator=(const OpRegistry&) = delete;

  // The process-wide registry used by lookupOp() and estimateCost() without a registry argument.
  static OpRegistry& global();
  // Every built-in line (aliases resolved), in table order.
  static std::span<const OpInfo> builtIns();

  // Never fails: unknown targets give an entry with category Unknown. The reference stays valid
  // for the registry's lifetime, also across later setFlags calls: an entry that flags replace is
  // kept, not freed (flags are set at setup, so the kept ones stay few).
  [[nodiscard]] const OpInfo& lookup(std::string_view target) const;

  // Thread-safe with concurrent lookups. A packet key ("aten.max") applies to all its overloads;
  // an overload key ("aten.max.other") only to that one, after the packet's flags. Flags for a
  // target with no built-in line make a Custom entry (unless `like` or `category` say otherwise).
  // An empty target is ignored.
  void setFlags(std::string_view target, const OpFlags& flags);
  // {"athena.flash_attn": {"compute_sensitive": true, "subgraph_boundary": true}, ...}. Per entry:
  // compute_sensitive / is_compute_sensitive, subgraph_boundary / is_subgraph_boundary, fusible
  // (bool); category (a categoryName); like (an op name); infer_output_meta: "recorded", a count N
  // (the first N tensor arguments; null = 1, as MagiCompiler's None), or a list of argument
  // positions (int) and keyword names (string). Bad entries and keys are warnings with file:line
  // and are skipped; text that is not a JSON object throws Error(BadInput).
  void loadFlagsJson(std::string_view jsonText, const std::string& sourceName, Diagnostics& diagnostics);
  void loadFlagsFile(const std::filesystem::path& path, Diagnostics& diagnostics);
  // Canonical keys that have run-time flags, sorted.
  [[nodiscard]] std::vector<std::string> flaggedTargets() const;

 private:
  void applyPatches(std::vector<std::pair<std::string, OpFlags>> patches);
  void rebuildOverridesLocked();
  [[nodiscard]] const OpInfo* findLocked(std::string_view name) const;

  mutable std::shared_mutex mutex_;
  std::map<std::string, OpFlags, std::less<>> patches_;
  // Merged entries keyed by a view of their own name. Replaced entries move to retired_ so that
  // references handed out earlier stay valid.
  std::unordered_map<std::string_view, std::unique_ptr<OpInfo>> overrides_;
  std::vector<std::unique_ptr<OpInfo>> retired_;
};

// OpRegistry::global().lookup(target).
[[nodiscard]] const OpInfo& lookupOp(std::string_view target);

struct OpCost {
  double flops = 0;
  double bytesRead = 0;
  double bytesWritten = 0;
  double commBytes = 0;     // collectives: payload bytes per rank, before ring/tree factors
  bool flopsKnown = true;   // false: the op has no FLOP formula (Unknown, Custom, Opaque)
  bool sizesHinted = true;  // false: a symbolic size had no hint and counted as 0
};

// Cost of one node from its inputs' and outputs' TensorMeta (symbolic sizes use their hints).
// Placeholders, get_attr and output nodes cost nothing; call_module nodes are priced as unknown
// ops. The graph must be finalized and the node in range (else Error(Internal)).
[[nodiscard]] OpCost estimateCost(const Graph& graph, NodeId node);
[[nodiscard]] OpCost estimateCost(const Graph& graph, NodeId node, const OpRegistry& registry);

// The node's outputs: its recorded tensor meta; for a tuple result, the metas of the getitem
// nodes reading it, by index (unread indices have kind None); otherwise what the op's
// OutputMetaRule infers from its arguments. Empty when nothing is known.
[[nodiscard]] std::vector<TensorMeta> outputMetas(const Graph& graph, NodeId node, const OpRegistry& registry);

}  // namespace lathe::ir

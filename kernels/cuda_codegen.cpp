#include "kernels/cuda_codegen.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>

#include "io/fx/fx_python.h"
#include "ir/op_info.h"
#include "util/diagnostics.h"

namespace lathe::kernels {

namespace {

// Kernels have C names: the NVRTC path's library finds them in the loaded fatbin by name.
constexpr const char* kKernelDeclaration = "extern \"C\" __global__ void __launch_bounds__(";

using ir::Arg;
using ir::NodeId;
using Shape = std::vector<int64_t>;

// Thrown inside the generator of one group: the group is not generated, for this reason.
struct Unsupported {
  std::string reason;
};
[[noreturn]] void unsupported(std::string reason) {
  throw Unsupported{std::move(reason)};
}

int64_t product(const Shape& shape, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t p = 1;
  for (size_t d = from; d < shape.size() && d < to; ++d) p *= shape[d];
  return p;
}

Shape contiguousStrides(const Shape& sizes) {
  Shape strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * std::max<int64_t>(sizes[d], 1);
  return strides;
}

// Dense in row-major order: strides of dimensions larger than one are the contiguous ones.
bool isContiguous(const TensorSpec& spec) {
  const Shape dense = contiguousStrides(spec.sizes);
  for (size_t d = 0; d < spec.sizes.size(); ++d) {
    if (spec.sizes[d] != 1 && spec.strides[d] != dense[d]) return false;
  }
  return true;
}

// The non-1 sizes in order: two shapes with the same list hold their elements in the same order.
Shape squeezed(const Shape& shape) {
  Shape out;
  for (int64_t s : shape) {
    if (s != 1) out.push_back(s);
  }
  return out;
}

enum class CType : uint8_t { Float, Int, Bool };

std::string_view cTypeName(CType type) {
  switch (type) {
    case CType::Float: return "float";
    case CType::Int: return "long long";
    case CType::Bool: return "bool";
  }
  return "float";
}

CType computeType(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::BF16:
    case ir::DType::F16:
    case ir::DType::F32: return CType::Float;
    case ir::DType::I64:
    case ir::DType::I32:
    case ir::DType::I16:
    case ir::DType::I8:
    case ir::DType::U8: return CType::Int;
    case ir::DType::Bool: return CType::Bool;
    default: unsupported("dtype " + std::string(ir::dtypeTorchName(dtype)));
  }
}

std::string_view storageType(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::BF16: return "__nv_bfloat16";
    case ir::DType::F16: return "__half";
    case ir::DType::F32: return "float";
    case ir::DType::I64: return "long long";
    case ir::DType::I32: return "int";
    case ir::DType::I16: return "short";
    case ir::DType::I8: return "signed char";
    case ir::DType::U8: return "unsigned char";
    case ir::DType::Bool: return "bool";
    default: unsupported("dtype " + std::string(ir::dtypeTorchName(dtype)));
  }
}

struct Val {
  std::string expr;
  CType type = CType::Float;
};

Val cast(const Val& v, CType to) {
  if (v.type == to) return v;
  if (to == CType::Bool) return {"(" + v.expr + " != 0)", to};
  return {"static_cast<" + std::string(cTypeName(to)) + ">(" + v.expr + ")", to};
}

std::string floatLiteral(double value) {
  if (std::isnan(value)) return "__int_as_float(0x7fffffff)";
  if (std::isinf(value)) return value > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  std::string text(buffer);
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";
  return text + "f";
}

Val literal(const Arg& arg) {
  switch (arg.kind) {
    case Arg::Kind::Int: return {std::to_string(arg.i) + "LL", CType::Int};
    case Arg::Kind::Float: return {floatLiteral(arg.f), CType::Float};
    case Arg::Kind::Bool: return {arg.b ? "true" : "false", CType::Bool};
    default: unsupported("a scalar argument that is not a constant");
  }
}

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

// Same sizes, and the same strides where a dimension has more than one element.
bool sameLayout(const Shape& sizes, const Shape& strides, const TensorSpec& tensor) {
  if (tensor.sizes != sizes) return false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] != 1 && tensor.strides[d] != strides[d]) return false;
  }
  return true;
}

// The dimensions of a dense tensor from the largest stride to the smallest, when its elements
// fill its storage without gaps in some order of its dimensions; nullopt otherwise.
std::optional<std::vector<size_t>> memoryOrder(const TensorSpec& tensor) {
  std::vector<size_t> order;
  for (size_t d = 0; d < tensor.sizes.size(); ++d) {
    if (tensor.sizes[d] != 1) order.push_back(d);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return tensor.strides[a] > tensor.strides[b]; });
  int64_t expected = 1;
  for (size_t k = order.size(); k-- > 0;) {
    if (tensor.strides[order[k]] != expected) return std::nullopt;
    expected *= tensor.sizes[order[k]];
  }
  return order;
}

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
std::pair<std::string, std::string> splitOverload(const std::string& canonical) {
  const size_t first = canonical.find('.');
  const size_t last = canonical.rfind('.');
  if (first == std::string::npos || first == last) return {canonical, ""};
  return {canonical.substr(0, last), canonical.substr(last + 1)};
}

const std::map<std::string, Shaping, std::less<>>& opShaping() {
  static const std::map<std::string, Shaping, std::less<>> table = [] {
    std::map<std::string, Shaping, std::less<>> t;
    for (const char* name : {"add",
                             "sub",
                             "rsub",
                             "mul",
                             "div",
                             "true_divide",
                             "maximum",
                             "minimum",
                             "pow",
                             "neg",
                             "exp",
                             "exp2",
                             "log",
                             "log1p",
                             "expm1",
                             "sqrt",
                             "rsqrt",
                             "tanh",
                             "sigmoid",
                             "relu",
                             "abs",
                             "sin",
                             "cos",
                             "reciprocal",
                             "silu",
                             "erf",
                             "floor",
                             "ceil",
                             "sign",
                             "logical_not",
                             "bitwise_not",
                             "eq",
                             "ne",
                             "gt",
                             "ge",
                             "lt",
                             "le",
                             "bitwise_and",
                             "bitwise_or",
                             "bitwise_xor",
                             "logical_and",
                             "logical_or",
                             "where",
                             "clamp",
                             "clamp_min",
                             "clamp_max",
                             "gelu",
                             "gelu_backward",
                             "silu_backward",
                             "sigmoid_backward",
                             "tanh_backward",
                             "threshold_backward",
                             "clone",
                             "_to_copy",
                             "convert_element_type",
                             "copy",
                             "lift_fresh_copy",
                             "detach",
                             "fma",
                             "isnan",
                             "to",
                             "__and__",
                             "__or__",
                             "__xor__",
                             "masked_fill",
                             "dropout"}) {
      t.emplace(name, Shaping::Elementwise);
    }
    for (const char* name : {"view", "_unsafe_view", "reshape", "unsqueeze", "squeeze", "alias"})
      t.emplace(name, Shaping::Reshape);
    t.emplace("expand", Shaping::Expand);
    t.emplace("permute", Shaping::Permute);
    t.emplace("slice", Shaping::Slice);
    t.emplace("select", Shaping::Select);
    t.emplace("embedding", Shaping::Embedding);
    t.emplace("index", Shaping::Gather);
    t.emplace("gather", Shaping::Gather);
    t.emplace("scatter", Shaping::Scatter);
    t.emplace("cat", Shaping::Concat);
    t.emplace("slice_scatter", Shaping::SliceScatter);
    for (const char* name : {"iota", "arange", "full", "scalar_tensor"}) t.emplace(name, Shaping::Creation);
    for (const char* name : {"softmax", "_softmax", "log_softmax", "_log_softmax", "layer_norm"}) {
      t.emplace(name, Shaping::Normalization);
    }
    for (const char* name : {"sum", "mean", "amax", "amin", "var_mean"}) t.emplace(name, Shaping::Reduction);
    return t;
  }();
  return table;
}

// The op a node calls, by its short name ("mul"), or Unsupported naming the target.
OpSpec opOf(const ir::Graph& graph, NodeId node) {
  const ir::Node& info = graph.node(node);
  if (info.kind != ir::NodeKind::CallFunction) unsupported("a " + std::string(ir::nodeKindName(info.kind)) + " node");
  const std::string_view target = graph.target(node);
  if (target == io::fx::kGetItemTarget) return {Shaping::Getitem, "getitem"};
  const std::string canonical = ir::canonicalOpName(target);
  const auto [packet, overload] = splitOverload(canonical);
  std::string_view shortName(packet);
  for (std::string_view ns : {"aten.", "prims."}) {
    if (shortName.starts_with(ns)) shortName.remove_prefix(ns.size());
  }
  if (shortName.find('.') != std::string_view::npos || packet == canonical) unsupported("op " + std::string(target));
  const auto& table = opShaping();
  const auto it = table.find(shortName);
  if (it == table.end()) unsupported("op " + canonical);
  return {it->second, it->first};
}

std::string overloadOf(const ir::Graph& graph, NodeId node) {
  return splitOverload(ir::canonicalOpName(graph.target(node))).second;
}

const Arg* kwarg(const ir::Graph& graph, NodeId node, std::string_view key) {
  for (const auto& [name, value] : graph.node(node).kwargs) {
    if (graph.str(name) == key) return &value;
  }
  return nullptr;
}

// Positional argument `position`, else keyword `key`; nullptr when neither is given.
const Arg* argument(const ir::Graph& graph, NodeId node, size_t position, std::string_view key) {
  const auto& args = graph.node(node).args;
  if (position < args.size()) return &args[position];
  return key.empty() ? nullptr : kwarg(graph, node, key);
}

int64_t intArg(const Arg* arg, std::string_view what) {
  if (arg == nullptr || arg->kind != Arg::Kind::Int) unsupported(std::string(what) + " is not a constant integer");
  return arg->i;
}

std::vector<int64_t> intList(const Arg* arg, std::string_view what) {
  if (arg == nullptr) unsupported(std::string(what) + " missing");
  if (arg->kind == Arg::Kind::Int) return {arg->i};
  if (arg->kind != Arg::Kind::List && arg->kind != Arg::Kind::Tuple) unsupported(std::string(what) + " is not a list");
  std::vector<int64_t> out;
  for (const Arg& item : arg->items) out.push_back(intArg(&item, what));
  return out;
}

int64_t normalizeDim(int64_t dim, size_t rank) {
  const int64_t r = std::max<int64_t>(static_cast<int64_t>(rank), 1);
  if (dim < -r || dim >= r) unsupported("dimension " + std::to_string(dim) + " out of range");
  return dim < 0 ? dim + r : dim;
}

std::string identifier(std::string_view text) {
  std::string out;
  for (char c : text) out += io::fx::isIdentChar(c) ? c : '_';
  return out;
}

// Symbols in the capture: their hints, from dimensions whose expression is the bare symbol.
using SymbolHints = std::map<std::string, int64_t, std::less<>>;

SymbolHints symbolHints(const ir::Graph& graph) {
  SymbolHints hints;
  auto visit = [&](const ir::SymDim& dim) {
    if (!dim.symbolic() || !dim.hasHint) return;
    const std::string_view expr = graph.str(dim.expr);
    if (io::fx::identLength(expr, 0) == expr.size()) hints.emplace(std::string(expr), dim.value);
  };
  for (const ir::Node& node : graph.nodes()) {
    for (const ir::SymDim& d : node.meta.sizes) visit(d);
    for (const ir::SymDim& d : node.meta.strides) visit(d);
  }
  return hints;
}

class GroupGenerator {
 public:
  GroupGenerator(const ir::Graph& graph, const plan::FusionGroup& group, const SymbolHints& hints)
      : graph_(graph), group_(group), hints_(hints) {
    for (NodeId node : group.nodes) members_.insert(node);
  }

  GeneratedKernel generate() {
    orderNodes();
    collectInterface();
    kernel_.group = group_.id;
    kernel_.kind = group_.kind;
    const std::string anchor = identifier(graph_.name(group_.anchor));
    kernel_.name = "lathe_g" + std::to_string(group_.id) + "_" + anchor;
    kernel_.launch = "lathe_launch_g" + std::to_string(group_.id);
    for (NodeId node : nodes_) kernel_.fx.push_back(fxLine(graph_, node));
    reduction_ = group_.kind == "pointwise" ? ir::kNoNode : group_.anchor;
    std::string kernels = reduction_ == ir::kNoNode ? pointwiseKernels() : reductionKernels();
    kernel_.bytes = trafficBytes();
    kernel_.symbols.assign(usedSymbols_.begin(), usedSymbols_.end());
    kernel_.source = sourceFile(kernels);
    return std::move(kernel_);
  }

 private:
  // ---------------------------------------------------------------- interface and shapes

  bool member(NodeId node) const { return members_.contains(node); }

  // The group's nodes in program order, each once, and its anchor one of them: a plan bundle may
  // hold any list (the fusion pass writes sorted ones), and the checks below read nodes in order.
  void orderNodes() {
    if (group_.nodes.empty()) unsupported("the group has no nodes");
    nodes_ = group_.nodes;
    std::sort(nodes_.begin(), nodes_.end());
    if (const auto twice = std::adjacent_find(nodes_.begin(), nodes_.end()); twice != nodes_.end())
      unsupported(std::string(graph_.name(*twice)) + " is listed twice");
    if (group_.anchor == ir::kNoNode) unsupported("the group has no anchor");
    if (!member(group_.anchor))
      unsupported("its anchor " + std::string(graph_.name(group_.anchor)) + " is not one of its nodes");
  }

  // Bytes a launch moves: every tensor once, except a table read only through gathers
  // (embedding, index, gather), of which at most the gathered elements are read.
  uint64_t trafficBytes() {
    std::map<NodeId, uint64_t> gathered;  // table input -> bytes its gathers pick
    std::set<NodeId> readWhole;
    for (NodeId node : nodes_) {
      const auto inputs = graph_.inputs(node);
      const Shaping shaping = opOf(graph_, node).shaping;
      const ir::Node& info = graph_.node(node);
      for (NodeId in : inputs) {
        if (member(in)) continue;
        const bool table = (shaping == Shaping::Embedding || shaping == Shaping::Gather) && !info.args.empty() &&
                           info.args[0].kind == Arg::Kind::Node && info.args[0].node == in;
        if (table) {
          gathered[in] += static_cast<uint64_t>(numel(node)) * ir::dtypeSize(tensorMeta(in).dtype);
        } else {
          readWhole.insert(in);
        }
      }
    }
    uint64_t bytes = 0;
    for (const auto& [in, slot] : inputSlot_) {
      const uint64_t whole = tensorBytes(kernel_.inputs[slot]);
      const auto it = gathered.find(in);
      bytes += it == gathered.end() || readWhole.contains(in) ? whole : std::min(whole, it->second);
    }
    for (const TensorSpec& spec : kernel_.outputs) bytes += tensorBytes(spec);
    return bytes;
  }

  static uint64_t tensorBytes(const TensorSpec& spec) {
    if (product(spec.sizes) == 0) return 0;
    int64_t extent = 1;
    for (size_t d = 0; d < spec.sizes.size(); ++d) extent += (spec.sizes[d] - 1) * spec.strides[d];
    return static_cast<uint64_t>(extent) * ir::dtypeSize(spec.dtype);
  }

  int64_t dimValue(const ir::SymDim& dim) {
    if (!dim.symbolic()) return dim.value;
    if (!dim.hasHint) unsupported("symbolic size " + std::string(graph_.str(dim.expr)) + " without a hint");
    const std::string_view expr = graph_.str(dim.expr);
    for (size_t at = 0; at < expr.size();) {
      const size_t length = io::fx::identLength(expr, at);
      if (length == 0) {
        ++at;
        continue;
      }
      const std::string symbol(expr.substr(at, length));
      if (!hints_.contains(symbol)) unsupported("symbol " + symbol + " has no hint of its own");
      usedSymbols_.insert(symbol);
      at += length;
    }
    return dim.value;
  }

  const ir::TensorMeta& tensorMeta(NodeId node) {
    const ir::TensorMeta& meta = graph_.node(node).meta;
    if (!meta.isTensor()) unsupported(std::string(graph_.name(node)) + " is not a tensor");
    return meta;
  }

  // Sizes whose products the generator may form with every dimension (rows, row sizes, element
  // counts) without overflow, and whose indices the kernels' 64-bit arithmetic holds.
  const Shape& shape(NodeId node) {
    if (auto it = shapes_.find(node); it != shapes_.end()) return it->second;
    Shape sizes;
    int64_t elements = 1;  // of the non-empty dimensions
    for (const ir::SymDim& d : tensorMeta(node).sizes) {
      const int64_t size = dimValue(d);
      if (size < 0) unsupported(std::string(graph_.name(node)) + " has a negative size");
      if (size > 0 && (__builtin_mul_overflow(elements, size, &elements) || elements > kMaxElements))
        unsupported(std::string(graph_.name(node)) + " has more than 2^48 elements");
      sizes.push_back(size);
    }
    return shapes_.emplace(node, std::move(sizes)).first->second;
  }

  int64_t numel(NodeId node) { return product(shape(node)); }

  TensorSpec spec(NodeId node) {
    const ir::TensorMeta& meta = tensorMeta(node);
    const ir::Node& info = graph_.node(node);
    TensorSpec out{std::string(graph_.name(node)),
                   meta.dtype,
                   shape(node),
                   {},
                   info.kind == ir::NodeKind::CallFunction ? ir::canonicalOpName(graph_.target(node))
                                                           : std::string(ir::nodeKindName(info.kind))};
    if (meta.hasStrides && meta.strides.size() == meta.sizes.size()) {
      for (const ir::SymDim& d : meta.strides) out.strides.push_back(dimValue(d));
    } else {
      out.strides = contiguousStrides(out.sizes);
    }
    int64_t extent = 1;  // elements from the first to the last, as tensorBytes counts them
    for (size_t d = 0; d < out.sizes.size(); ++d) {
      if (out.strides[d] < 0) unsupported(out.name + " has a negative stride");
      int64_t span = 0;
      if (out.sizes[d] > 1 && (__builtin_mul_overflow(out.sizes[d] - 1, out.strides[d], &span) ||
                               __builtin_add_overflow(extent, span, &extent) || extent > kMaxElements))
        unsupported(out.name + " spans more than 2^48 elements");
    }
    storageType(meta.dtype);  // refuses dtypes without a storage type
    return out;
  }

  // Checks and size queries (torch.export puts an _assert_tensor_metadata after every dtype
  // conversion): they read no element, so a member they read need not be stored.
  bool readsOnlyMetadata(NodeId user) const {
    static const std::set<std::string, std::less<>> kMetadataOps = {"aten._assert_tensor_metadata", "aten.sym_size",
                                                                    "aten.sym_numel", "aten.sym_stride",
                                                                    "aten.sym_storage_offset"};
    if (graph_.node(user).kind != ir::NodeKind::CallFunction) return false;
    return kMetadataOps.contains(splitOverload(ir::canonicalOpName(graph_.target(user))).first);
  }

  // Inputs: values read from outside the group, in first-use order. Outputs: members read outside.
  void collectInterface() {
    for (NodeId node : nodes_) {
      for (NodeId in : graph_.inputs(node)) {
        if (member(in) || inputSlot_.contains(in)) continue;
        if (graph_.node(in).meta.kind != ir::ValueKind::Tensor) {
          unsupported("reads " + std::string(graph_.name(in)) + ", which is not a tensor");
        }
        inputSlot_.emplace(in, kernel_.inputs.size());
        kernel_.inputs.push_back(spec(in));
      }
    }
    for (NodeId node : nodes_) {
      const bool outside = std::any_of(graph_.users(node).begin(), graph_.users(node).end(),
                                       [&](NodeId user) { return !member(user) && !readsOnlyMetadata(user); });
      if (!outside) continue;
      outputNodes_.push_back(node);
      TensorSpec out = spec(node);
      for (size_t d = 0; d < out.sizes.size(); ++d) {
        if (out.sizes[d] > 1 && out.strides[d] == 0) unsupported("output " + out.name + " overlaps itself (stride 0)");
      }
      kernel_.outputs.push_back(std::move(out));
    }
    if (outputNodes_.empty()) unsupported("nothing outside the group reads it");
  }

  // ---------------------------------------------------------------- emission

  void line(const std::string& text) {
    body_->append(static_cast<size_t>(indent_), ' ');
    *body_ += text;
    *body_ += '\n';
  }
  std::string temp() { return "v" + std::to_string(temps_++); }

  // The index along a dimension of `size` elements, `stride` apart, of the row-major element number
  // `linear` of a shape of `total` elements. Below 2^31 elements the division and remainder by
  // constants run in 32 bits: a few instructions instead of a 64-bit sequence, per element of a
  // memory-bound kernel.
  static std::string dimensionOf(const std::string& linear, int64_t stride, int64_t size, int64_t total) {
    if (stride == 1 && size == total) return linear;
    const bool narrow = total <= INT32_MAX;
    const std::string suffix = narrow ? "u" : "LL";
    std::string expr = narrow ? "static_cast<unsigned>(" + linear + ")" : linear;
    if (stride != 1) expr = "(" + expr + " / " + std::to_string(stride) + suffix + ")";
    if (stride * size != total) expr += " % " + std::to_string(size) + suffix;
    return expr;
  }

  // Splits a row-major element number over a shape.
  Index split(const std::string& linear, const Shape& sizes) {
    if (chunk_ && linear == "j") return splitChunk(sizes);
    Index out{std::vector<std::string>(sizes.size(), "0"), linear};
    const int64_t total = product(sizes);
    int64_t stride = 1;
    for (size_t d = sizes.size(); d-- > 0;) {
      if (sizes[d] != 1) {
        const std::string name = linear + "_" + std::to_string(stride) + "_" + std::to_string(sizes[d]);
        if (!memo_.contains(name)) {
          line("const long long " + name + " = " + dimensionOf(linear, stride, sizes[d], total) + ";");
          memo_.emplace(name, Val{name, CType::Int});
        }
        out.dims[d] = name;
      }
      stride *= sizes[d];
    }
    return out;
  }

  // The element position in a vector kernel whose chunks each lie in one innermost row: every
  // dimension but the innermost is the chunk's (computed once, before the element loop), the
  // innermost is the chunk's start plus `e`. Loads then see which operands the whole chunk shares
  // and which it reads as one consecutive run.
  Index splitChunk(const Shape& sizes) {
    Index out{std::vector<std::string>(sizes.size(), "0"), "j"};
    const int64_t total = product(sizes);
    int64_t stride = 1;
    bool innermost = true;
    for (size_t d = sizes.size(); d-- > 0;) {
      if (sizes[d] == 1) continue;
      const std::string name = "jb_" + std::to_string(stride) + "_" + std::to_string(sizes[d]);
      if (!chunk_->names.contains(name)) {
        chunk_->prologue += "  const long long " + name + " = " + dimensionOf("base", stride, sizes[d], total) + ";\n";
        chunk_->names.insert(name);
      }
      if (innermost) {
        if (sizes[d] % chunk_->width != 0) chunk_->usable = false;
        out.dims[d] = "(" + name + " + e)";
        innermost = false;
      } else {
        out.dims[d] = name;
      }
      stride *= sizes[d];
    }
    return out;
  }

  // Whether every name in `expr` is defined before a chunk's element loop.
  bool chunkInvariant(std::string_view expr) const {
    for (size_t at = 0; at < expr.size();) {
      const char c = expr[at];
      if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
        while (at < expr.size() && std::isalnum(static_cast<unsigned char>(expr[at])) != 0) ++at;
      } else if (std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_') {
        const size_t length = io::fx::identLength(expr, at);
        const std::string_view name = expr.substr(at, length);
        if (name != "static_cast" && name != "unsigned" && !chunk_->names.contains(std::string(name))) return false;
        at += length;
      } else {
        ++at;
      }
    }
    return true;
  }

  // An innermost index "(jb_1_S + e)", possibly shifted by slices ("((jb_1_S + e) + 64LL)"), as the
  // index of the chunk's first element; nullopt for anything else or a shift that breaks the
  // chunk's alignment.
  std::optional<std::string> chunkRunStart(const std::string& dim) const {
    std::vector<std::string> shifts;  // " + 64LL)", from the outermost in
    std::string_view inner = dim;
    while (!(inner.starts_with("(jb_") && inner.ends_with(" + e)"))) {
      if (inner.size() < 8 || inner.front() != '(' || !inner.ends_with("LL)")) return std::nullopt;
      const size_t digits = inner.find_last_not_of("0123456789", inner.size() - 4);
      if (digits == std::string_view::npos || digits < 3 || digits == inner.size() - 4) return std::nullopt;
      const std::string_view sign = inner.substr(digits - 2, 3);
      if (sign != " + " && sign != " - ") return std::nullopt;
      const int64_t shift = std::stoll(std::string(inner.substr(digits + 1, inner.size() - 4 - digits)));
      if (shift % chunk_->width != 0) return std::nullopt;
      shifts.push_back(std::string(sign) + std::to_string(shift) + "LL)");
      inner = inner.substr(1, digits - 3);
    }
    std::string start(inner.substr(1, inner.size() - 6));
    for (auto shift = shifts.rbegin(); shift != shifts.rend(); ++shift) start = "(" + start + *shift;
    return start;
  }

  // A load in a chunked vector kernel, outside any branch: a value the whole chunk shares is loaded
  // once; a run of `width` consecutive elements starting at an aligned offset, as one pack.
  std::optional<Val> chunkLoad(size_t slot, const TensorSpec& tensor, const Index& index, const std::string& off) {
    const CType type = computeType(tensor.dtype);
    const std::string in = "in" + std::to_string(slot);
    std::string guard;  // the branches the load sits in, on the chunk
    for (const std::optional<std::string>& g : chunkGuards_) guard += (guard.empty() ? "" : " && ") + ("(" + *g + ")");
    // Declared before the element loop; loaded there too, when the chunk takes the load's branches.
    auto hoist = [&](const std::string& declared, const std::string& name, const std::string& load) {
      if (guard.empty()) {
        chunk_->prologue += "  const " + declared + " " + name + " = " + load + ";\n";
      } else {
        chunk_->prologue += "  " + declared + " " + name + "{};\n  if (" + guard + ") " + name + " = " + load + ";\n";
      }
    };
    if (chunkInvariant(off)) {
      std::string& name = chunk_->loads[guard + "|" + in + "[" + off + "]"];
      if (name.empty()) {
        name = temp();
        hoist(std::string(cTypeName(type)), name, "lathe::ld(" + in + ", " + off + ")");
        chunk_->names.insert(name);
      }
      return Val{name, type};
    }
    std::string start;
    bool run = false;
    for (size_t d = 0; d < tensor.sizes.size(); ++d) {
      if (tensor.sizes[d] == 1 || index.dims[d] == "0" || tensor.strides[d] == 0) continue;
      std::string term;
      if (!chunkInvariant(index.dims[d])) {
        const std::optional<std::string> first = chunkRunStart(index.dims[d]);
        if (run || tensor.strides[d] != 1 || !first) return std::nullopt;
        run = true;
        term = *first;
      } else {
        if (tensor.strides[d] % chunk_->width != 0) return std::nullopt;
        term = index.dims[d] + " * " + std::to_string(tensor.strides[d]) + "LL";
      }
      start += (start.empty() ? "" : " + ") + term;
    }
    if (!run) return std::nullopt;
    const std::string pack =
        "lathe::Pack<" + std::string(storageType(tensor.dtype)) + ", " + std::to_string(chunk_->width) + ">";
    std::string& name = chunk_->loads[guard + "|" + in + "@" + start];
    if (name.empty()) {
      name = temp();
      hoist(pack, name, "*reinterpret_cast<const " + pack + "*>(" + in + " + " + start + ")");
      chunk_->packedInputs.insert(slot);
    }
    return Val{"lathe::up(" + name + ".v[e])", type};
  }

  std::string linearOf(const Index& index, const Shape& sizes) {
    if (!index.linear.empty()) return index.linear;
    std::string expr;
    const Shape strides = contiguousStrides(sizes);
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] == 1 || index.dims[d] == "0") continue;
      if (!expr.empty()) expr += " + ";
      expr += strides[d] == 1 ? index.dims[d] : index.dims[d] + " * " + std::to_string(strides[d]) + "LL";
    }
    if (expr.empty()) return "0LL";
    return indexConstant(expr);
  }

  // `expr` as a constant of the scope, declared once per scope (memoized as values are: a value
  // asked for again, a Deferred one's requester among them, builds the same indices).
  std::string indexConstant(const std::string& expr) {
    Val& known = memo_["= " + expr];
    if (known.expr.empty()) {
      known = {temp(), CType::Int};
      line("const long long " + known.expr + " = " + expr + ";");
    }
    return known.expr;
  }

  // The operand's index for an element of `to`, numpy broadcasting (sizes aligned at the right).
  Index broadcast(const Index& index, const Shape& to, const Shape& from) {
    if (from.size() > to.size()) unsupported("an operand of higher rank than its result");
    const size_t lead = to.size() - from.size();
    Index out;
    for (size_t d = 0; d < from.size(); ++d) {
      if (from[d] == 1) {
        out.dims.push_back("0");
      } else if (from[d] == to[d + lead]) {
        out.dims.push_back(index.dims[d + lead]);
      } else {
        unsupported("sizes that do not broadcast");
      }
    }
    if (product(from) == product(to)) {
      out.linear = index.linear;
      if (!index.memory.empty()) {
        out.memory = index.memory;
        out.memorySizes = from;
        out.memoryStrides.assign(index.memoryStrides.begin() + static_cast<std::ptrdiff_t>(lead),
                                 index.memoryStrides.end());
      }
    }
    return out;
  }

  // Same elements in the same order, another shape.
  Index reshape(const Index& index, const Shape& to, const Shape& from) {
    if (product(to) != product(from)) unsupported("a view that changes the element count");
    if (squeezed(to) == squeezed(from)) {
      Index out{{}, index.linear};
      size_t at = 0;
      for (int64_t size : from) {
        if (size == 1) {
          out.dims.push_back("0");
          continue;
        }
        while (to[at] == 1) ++at;
        out.dims.push_back(index.dims[at++]);
      }
      return out;
    }
    return split(linearOf(index, to), from);
  }

  std::string offset(const Index& index, const TensorSpec& tensor) {
    if (!index.linear.empty() && isContiguous(tensor)) return index.linear;
    if (!index.memory.empty() && sameLayout(index.memorySizes, index.memoryStrides, tensor)) return index.memory;
    std::string expr;
    for (size_t d = 0; d < tensor.sizes.size(); ++d) {
      if (tensor.sizes[d] == 1 || index.dims[d] == "0" || tensor.strides[d] == 0) continue;
      if (!expr.empty()) expr += " + ";
      expr += tensor.strides[d] == 1 ? index.dims[d] : index.dims[d] + " * " + std::to_string(tensor.strides[d]) + "LL";
    }
    return expr.empty() ? "0LL" : expr;
  }

  static std::string key(NodeId node, const Index& index) {
    std::string k = std::to_string(node) + "@";
    for (const std::string& d : index.dims) k += d + ",";
    return k;
  }

  size_t inputSlot(NodeId node) const {
    const auto it = inputSlot_.find(node);
    if (it == inputSlot_.end()) unsupported("reads " + std::string(graph_.name(node)) + ", which it does not take in");
    return it->second;
  }

  Val load(NodeId node, const Index& index) {
    const size_t slot = inputSlot(node);
    const TensorSpec& tensor = kernel_.inputs[slot];
    const std::string off = offset(index, tensor);
    const CType type = computeType(tensor.dtype);
    if (vectorMode_ && off == "j") {
      directInputs_.insert(slot);
      return {"lathe::up(vin" + std::to_string(slot) + ".v[e])", type};
    }
    if (chunk_ && std::all_of(chunkGuards_.begin(), chunkGuards_.end(), [](const auto& g) { return g.has_value(); })) {
      if (std::optional<Val> shared = chunkLoad(slot, tensor, index, off)) return *shared;
    }
    return {"lathe::ld(in" + std::to_string(slot) + ", " + off + ")", type};
  }

  Val operand(NodeId node, size_t position, std::string_view keyword, const Index& index) {
    const Arg* arg = argument(graph_, node, position, keyword);
    if (arg == nullptr) unsupported(std::string(graph_.name(node)) + ": missing argument");
    if (arg->kind != Arg::Kind::Node) return literal(*arg);
    return value(arg->node, broadcast(index, shape(node), shape(arg->node)));
  }

  // Emission recurses through the operands of each member (value -> compute -> value): a level per
  // node along a chain of the group. To bound the native stack, a member kDeferDepth levels below
  // the innermost `evaluate` (or kMaxStackDepth levels deep in all) is thrown back to that evaluate
  // as Deferred, which emits it first, from its own level, then asks again for what it was asked.
  // What the first attempt emitted is memoized (indices too), so the second meets it and goes on
  // where the first stopped: the kernel is the one unbounded recursion would emit, but that a
  // scatter asked again numbers its temporaries anew. Each branch and loop body is an evaluate of
  // its own, so a deferral never leaves its scope; a body that starts kMaxStackDepth levels deep
  // refuses the group.
  struct Deferred {
    NodeId node;
    Index index;
  };

  Val evaluate(NodeId node, const Index& index) {
    const int outerBase = depthBase_;
    depthBase_ = depth_;
    std::vector<Deferred> pending{{node, index}};
    Val result;
    while (!pending.empty()) {
      try {
        result = value(pending.back().node, pending.back().index);
        pending.pop_back();
      } catch (Deferred& deeper) {
        depth_ = depthBase_;
        pending.push_back(std::move(deeper));
      }
    }
    depthBase_ = outerBase;
    return result;
  }

  Val value(NodeId node, const Index& index) {
    const std::string k = key(node, index);
    if (auto it = memo_.find(k); it != memo_.end()) return it->second;
    if (index.dims.size() != shape(node).size()) {
      unsupported(std::string(graph_.name(node)) + " is read with " + std::to_string(index.dims.size()) +
                  " indices for its " + std::to_string(shape(node).size()) + " dimensions");
    }
    if (k.size() > kMaxIndexText)
      unsupported("index expressions of more than " + std::to_string(kMaxIndexText) + " characters");
    if (static_cast<size_t>(temps_) > kMaxValuesPerNode * nodes_.size()) {
      unsupported("more than " + std::to_string(kMaxValuesPerNode) +
                  " values per node (operands read in ever more ways)");
    }
    Val result;
    if (!member(node)) {
      result = load(node, index);
    } else {
      if (depth_ - depthBase_ == kDeferDepth || depth_ == kMaxStackDepth) {
        if (depth_ == depthBase_)
          unsupported("values nested more than " + std::to_string(kMaxStackDepth) + " deep through branches and loops");
        throw Deferred{node, index};
      }
      ++depth_;
      const ir::DType dtype = tensorMeta(node).dtype;
      result = cast(compute(node, index), computeType(dtype));
      --depth_;
      // Values inside the group stay fp32, as in Inductor's kernels (its default, which does not
      // emulate eager's rounding after every op): a conversion the program asks for rounds, the
      // stores round, the rest does not, which spares a conversion per op and per element and
      // lands nearer the exact result than eager does.
      const std::string_view name = opOf(graph_, node).name;
      const bool conversion = name == "convert_element_type" || name == "_to_copy" || name == "to";
      if (conversion && dtype == ir::DType::BF16) result.expr = "lathe::round_bf16(" + result.expr + ")";
      if (conversion && dtype == ir::DType::F16) result.expr = "lathe::round_f16(" + result.expr + ")";
    }
    const std::string name = temp();
    line("const " + std::string(cTypeName(result.type)) + " " + name + " = " + result.expr + ";");
    result.expr = name;
    memo_.emplace(k, result);
    return result;
  }

  NodeId tensorOperand(NodeId node) const {
    const auto& args = graph_.node(node).args;
    if (args.empty() || args[0].kind != Arg::Kind::Node)
      unsupported(std::string(graph_.name(node)) + " without a tensor operand");
    return args[0].node;
  }

  static Val call(std::string_view function, const Val& x) {
    return {std::string(function) + "(" + x.expr + ")", CType::Float};
  }

  Val compute(NodeId node, const Index& index) {
    const OpSpec op = opOf(graph_, node);
    const std::string_view name = op.name;
    const CType out = computeType(tensorMeta(node).dtype);
    const Shape& own = shape(node);
    auto input0 = [&]() { return tensorOperand(node); };
    switch (op.shaping) {
      case Shaping::Reshape: {
        const NodeId base = input0();
        return value(base, reshape(index, own, shape(base)));
      }
      case Shaping::Expand: {
        const NodeId base = input0();
        return value(base, broadcast(index, own, shape(base)));
      }
      case Shaping::Permute: {
        const NodeId base = input0();
        const std::vector<int64_t> order = intList(argument(graph_, node, 1, "dims"), "permute dims");
        if (order.size() != own.size()) unsupported("permute of another rank");
        Index from{std::vector<std::string>(own.size()), ""};
        for (size_t d = 0; d < order.size(); ++d)
          from.dims[static_cast<size_t>(normalizeDim(order[d], own.size()))] = index.dims[d];
        if (std::find(from.dims.begin(), from.dims.end(), "") != from.dims.end())
          unsupported("permute dims that are not a permutation");
        return value(base, from);
      }
      case Shaping::Slice: {
        const NodeId base = input0();
        const Shape& baseShape = shape(base);
        if (baseShape.size() != own.size()) unsupported("slice of another rank");
        const auto dim =
            static_cast<size_t>(normalizeDim(intArg(argument(graph_, node, 1, "dim"), "slice dim"), own.size()));
        const Arg* startArg = argument(graph_, node, 2, "start");
        int64_t start = startArg == nullptr || startArg->kind == Arg::Kind::None ? 0 : intArg(startArg, "slice start");
        const Arg* stepArg = argument(graph_, node, 4, "step");
        const int64_t step = stepArg == nullptr ? 1 : intArg(stepArg, "slice step");
        if (step < 1) unsupported("slice step below 1");
        if (start < 0) start += baseShape[dim];
        start = std::clamp<int64_t>(start, 0, baseShape[dim]);
        int64_t last = 0;  // the base's element the slice ends at
        if (own[dim] > 0 && (__builtin_mul_overflow(own[dim] - 1, step, &last) ||
                             __builtin_add_overflow(last, start, &last) || last >= baseShape[dim]))
          unsupported("slice beyond its base");
        Index from{index.dims, ""};
        std::string d = index.dims[dim];
        if (step != 1) d = "(" + d + " * " + std::to_string(step) + "LL)";
        if (start != 0) d = "(" + d + " + " + std::to_string(start) + "LL)";
        from.dims[dim] = d;
        return value(base, from);
      }
      case Shaping::Select: {
        const NodeId base = input0();
        const Shape& baseShape = shape(base);
        if (baseShape.size() != own.size() + 1) unsupported("select of another rank");
        const auto dim =
            static_cast<size_t>(normalizeDim(intArg(argument(graph_, node, 1, "dim"), "select dim"), baseShape.size()));
        int64_t at = intArg(argument(graph_, node, 2, "index"), "select index");
        if (at < 0) at += baseShape[dim];
        if (at < 0 || at >= baseShape[dim]) unsupported("select index out of range");
        Index from{index.dims, ""};
        from.dims.insert(from.dims.begin() + static_cast<std::ptrdiff_t>(dim), std::to_string(at) + "LL");
        return value(base, from);
      }
      case Shaping::Embedding: {
        const NodeId weight = input0();
        const Arg* indicesArg = argument(graph_, node, 1, "indices");
        if (indicesArg == nullptr || indicesArg->kind != Arg::Kind::Node) unsupported("embedding without indices");
        if (member(weight)) unsupported("embedding of a table computed in the group");
        const TensorSpec& table = kernel_.inputs[inputSlot(weight)];
        if (table.sizes.size() != 2 || index.dims.empty()) unsupported("embedding of a table that is not 2-D");
        if (shape(indicesArg->node).size() + 1 != own.size()) unsupported("embedding indices of another rank");
        Index rows{std::vector<std::string>(index.dims.begin(), index.dims.end() - 1), ""};
        const Val row = cast(value(indicesArg->node, rows), CType::Int);
        std::string off = row.expr + " * " + std::to_string(table.strides[0]) + "LL";
        if (table.sizes[1] != 1) off += " + " + index.dims.back() + " * " + std::to_string(table.strides[1]) + "LL";
        return {"lathe::ld(in" + std::to_string(inputSlot(weight)) + ", " + off + ")", computeType(table.dtype)};
      }
      case Shaping::Gather: return name == "gather" ? gatherDim(node, index) : gather(node, index);
      case Shaping::Scatter: return scatter(node, index, out);
      case Shaping::Concat: return concat(node, index, out);
      case Shaping::SliceScatter: return sliceScatter(node, index, out);
      case Shaping::Creation: return creation(node, name, index, out);
      case Shaping::Getitem: {
        const NodeId base = input0();
        if (base != reduction_) unsupported("getitem of a value other than the group's reduction");
        const int64_t item = intArg(argument(graph_, node, 1, ""), "getitem index");
        if (reduced_.empty()) unsupported("the reduced value is read before it is reduced");
        if (item < 0 || static_cast<size_t>(item) >= reduced_.size()) unsupported("getitem index out of range");
        return reduced_[static_cast<size_t>(item)];
      }
      case Shaping::Reduction: {
        if (node == reduction_ && inlineReduction_) return inlineReduction(index);
        if (node != reduction_ || reduced_.empty()) unsupported("a reduction read before it is reduced");
        return reduced_.front();
      }
      case Shaping::Normalization: {
        if (node != reduction_ || reduced_.size() != 2) unsupported("a normalization read before its row is reduced");
        const Val x = cast(value(input0(), index), CType::Float);
        if (name == "softmax" || name == "_softmax")
          return {"(lathe::fast_exp(" + x.expr + " - red_max) * red_inverse)", CType::Float};
        if (name == "log_softmax" || name == "_log_softmax")
          return {"(" + x.expr + " - red_max - red_log_sum)", CType::Float};
        Val y{"((" + x.expr + " - red_mean) * red_rstd)", CType::Float};
        const Arg* weight = argument(graph_, node, 2, "weight");
        const Arg* bias = argument(graph_, node, 3, "bias");
        if (weight != nullptr && weight->kind == Arg::Kind::Node)
          y.expr = "(" + y.expr + " * " + cast(operand(node, 2, "weight", index), CType::Float).expr + ")";
        if (bias != nullptr && bias->kind == Arg::Kind::Node)
          y.expr = "(" + y.expr + " + " + cast(operand(node, 3, "bias", index), CType::Float).expr + ")";
        return y;
      }
      case Shaping::Elementwise: return elementwise(node, name, index, out);
    }
    unsupported("op " + std::string(name));
  }

  // A value chosen by conditions: one branch per condition (an empty one: otherwise), each in its
  // own scope, so that no branch reads what it does not need (an operand out of its range).
  // In a chunked vector kernel, `chunkCondition` (on the chunk's first element) may stand for the
  // condition when the whole chunk always takes the same branch: loads in it can then be hoisted.
  struct Branch {
    std::string condition;
    std::function<Val()> value;
    std::optional<std::string> chunkCondition = std::nullopt;
  };
  Val choose(CType out, const std::vector<Branch>& branches) {
    const std::string name = temp();
    line(std::string(cTypeName(out)) + " " + name + ";");
    const bool uniform = std::all_of(branches.begin(), branches.end(), [](const Branch& b) {
      return b.condition.empty() || b.chunkCondition.has_value();
    });
    std::string earlier;  // no earlier branch taken, on the chunk
    for (size_t k = 0; k < branches.size(); ++k) {
      const std::string condition =
          uniform && !branches[k].condition.empty() ? *branches[k].chunkCondition : branches[k].condition;
      line(std::string(k == 0 ? "" : "} else ") + (condition.empty() ? "{" : "if (" + condition + ") {"));
      const auto saved = memo_;
      indent_ += 2;
      std::optional<std::string> guard;
      if (uniform) {
        guard = earlier.empty() ? condition : condition.empty() ? earlier : earlier + " && (" + condition + ")";
        if (!condition.empty()) earlier += (earlier.empty() ? "!(" : " && !(") + condition + ")";
      }
      chunkGuards_.push_back(guard);
      const Val v = branches[k].value();
      chunkGuards_.pop_back();
      line(name + " = " + cast(v, out).expr + ";");
      indent_ -= 2;
      memo_ = saved;
    }
    line("}");
    return {name, out};
  }

  // self[i0, i1, ...] with index tensors for some dimensions (None for the others), the indexed
  // dimensions next to each other: the result has self's dimensions before them, the broadcast
  // shape of the index tensors, then self's dimensions after them. Negative indices count from
  // the end, as in PyTorch; indices out of range are the caller's error, as there.
  Val gather(NodeId node, const Index& index) {
    const NodeId self = tensorOperand(node);
    const Shape& selfShape = shape(self);
    const Arg* indices = argument(graph_, node, 1, "indices");
    if (indices == nullptr || indices->kind != Arg::Kind::List || indices->items.size() > selfShape.size()) {
      unsupported("index without a list of indices");
    }
    std::vector<NodeId> by(selfShape.size(), ir::kNoNode);
    size_t first = SIZE_MAX, last = 0;
    for (size_t d = 0; d < indices->items.size(); ++d) {
      const Arg& item = indices->items[d];
      if (item.kind == Arg::Kind::None) continue;
      if (item.kind != Arg::Kind::Node) unsupported("index with an index that is not a tensor");
      const ir::TensorMeta& meta = tensorMeta(item.node);
      if (meta.dtype == ir::DType::Bool || meta.dtype == ir::DType::U8) unsupported("index with a boolean mask");
      by[d] = item.node;
      first = std::min(first, d);
      last = d;
    }
    if (first == SIZE_MAX) unsupported("index without index tensors");
    for (size_t d = first; d <= last; ++d) {
      if (by[d] == ir::kNoNode) unsupported("index with index tensors apart");
    }
    Shape broadcastShape;
    for (size_t d = first; d <= last; ++d) {
      const Shape& s = shape(by[d]);
      if (s.size() > broadcastShape.size())
        broadcastShape.insert(broadcastShape.begin(), s.size() - broadcastShape.size(), 1);
      for (size_t k = 0; k < s.size(); ++k) {
        int64_t& into = broadcastShape[broadcastShape.size() - s.size() + k];
        if (into == 1)
          into = s[k];
        else if (s[k] != 1 && s[k] != into)
          unsupported("index tensors that do not broadcast");
      }
    }
    const size_t after = selfShape.size() - last - 1;
    if (index.dims.size() != first + broadcastShape.size() + after)
      unsupported("index of another rank than its result");
    Index within{
        std::vector<std::string>(index.dims.begin() + static_cast<std::ptrdiff_t>(first),
                                 index.dims.begin() + static_cast<std::ptrdiff_t>(first + broadcastShape.size())),
        ""};
    Index from{std::vector<std::string>(selfShape.size()), ""};
    for (size_t d = 0; d < first; ++d) from.dims[d] = index.dims[d];
    for (size_t d = first; d <= last; ++d) {
      from.dims[d] = wrapped(value(by[d], broadcast(within, broadcastShape, shape(by[d]))), selfShape[d]);
    }
    for (size_t d = 0; d < after; ++d) from.dims[last + 1 + d] = index.dims[first + broadcastShape.size() + d];
    return value(self, from);
  }

  std::string wrapped(const Val& at, int64_t size) {
    const Val i = cast(at, CType::Int);
    return indexConstant(i.expr + " < 0 ? " + i.expr + " + " + std::to_string(size) + "LL : " + i.expr);
  }

  // gather(self, dim, index): out[..., i_dim, ...] = self[..., index[..., i_dim, ...], ...].
  Val gatherDim(NodeId node, const Index& index) {
    const NodeId self = tensorOperand(node);
    const Shape& selfShape = shape(self);
    const auto dim =
        static_cast<size_t>(normalizeDim(intArg(argument(graph_, node, 1, "dim"), "gather dim"), selfShape.size()));
    const Arg* by = argument(graph_, node, 2, "index");
    if (by == nullptr || by->kind != Arg::Kind::Node) unsupported("gather without an index tensor");
    if (shape(by->node) != shape(node) || selfShape.size() != shape(node).size())
      unsupported("gather index of another shape");
    Index from{index.dims, ""};
    from.dims[dim] = wrapped(value(by->node, index), selfShape[dim]);
    return value(self, from);
  }

  // scatter(self, dim, index, value | src): self, except where an index along `dim` names the
  // element (the last one wins where several do; PyTorch leaves that order unspecified).
  Val scatter(NodeId node, const Index& index, CType out) {
    const NodeId self = tensorOperand(node);
    const Shape& own = shape(node);
    const auto dim =
        static_cast<size_t>(normalizeDim(intArg(argument(graph_, node, 1, "dim"), "scatter dim"), own.size()));
    const Arg* by = argument(graph_, node, 2, "index");
    const Arg* source = argument(graph_, node, 3, overloadOf(graph_, node) == "src" ? "src" : "value");
    if (by == nullptr || by->kind != Arg::Kind::Node || source == nullptr)
      unsupported("scatter without an index and a source");
    if (kwarg(graph_, node, "reduce") != nullptr) unsupported("scatter with a reduction");
    const Shape& byShape = shape(by->node);
    if (shape(self) != own || byShape.size() != own.size()) unsupported("scatter of other shapes");
    for (size_t d = 0; d < own.size(); ++d) {
      if (d != dim && byShape[d] != own[d]) unsupported("scatter index smaller than its base");
    }
    if (source->kind == Arg::Kind::Node && shape(source->node) != byShape)
      unsupported("scatter source of another shape than its index");
    const std::string result = temp(), k = temp();
    line(std::string(cTypeName(out)) + " " + result + " = " + cast(value(self, index), out).expr + ";");
    line("for (long long " + k + " = 0; " + k + " < " + std::to_string(byShape[dim]) + "LL; ++" + k + ") {");
    const auto saved = memo_;
    indent_ += 2;
    Index at{index.dims, ""};
    at.dims[dim] = k;
    const std::string target = wrapped(evaluate(by->node, at), own[dim]);
    line("if (" + target + " == " + index.dims[dim] + ") {");
    indent_ += 2;
    const Val v = source->kind == Arg::Kind::Node ? evaluate(source->node, at) : literal(*source);
    line(result + " = " + cast(v, out).expr + ";");
    indent_ -= 2;
    line("}");
    indent_ -= 2;
    memo_ = saved;
    line("}");
    return {result, out};
  }

  Val concat(NodeId node, const Index& index, CType out) {
    const Arg* tensors = argument(graph_, node, 0, "tensors");
    if (tensors == nullptr || tensors->kind != Arg::Kind::List) unsupported("cat without a list of tensors");
    const Shape& own = shape(node);
    const Arg* dimArg = argument(graph_, node, 1, "dim");
    const auto dim = static_cast<size_t>(normalizeDim(dimArg == nullptr ? 0 : intArg(dimArg, "cat dim"), own.size()));
    std::vector<Branch> branches;
    int64_t start = 0;
    const std::optional<std::string> chunkFirst = chunk_ ? chunkRunStart(index.dims[dim]) : std::nullopt;
    for (const Arg& item : tensors->items) {
      if (item.kind != Arg::Kind::Node) unsupported("cat of something that is not a tensor");
      const NodeId part = item.node;
      const Shape& partShape = shape(part);
      if (partShape.size() != own.size()) unsupported("cat of tensors of another rank");
      if (partShape[dim] == 0) continue;
      Index from{index.dims, ""};
      if (start != 0) from.dims[dim] = "(" + index.dims[dim] + " - " + std::to_string(start) + "LL)";
      start += partShape[dim];
      branches.push_back({index.dims[dim] + " < " + std::to_string(start) + "LL",
                          [this, part, from] { return evaluate(part, from); }});
      if (chunkFirst && start % chunk_->width == 0)
        branches.back().chunkCondition = *chunkFirst + " < " + std::to_string(start) + "LL";
    }
    if (branches.empty() || start != own[dim]) unsupported("cat sizes that do not add up");
    branches.back().condition.clear();
    return choose(out, branches);
  }

  Val sliceScatter(NodeId node, const Index& index, CType out) {
    const Shape& own = shape(node);
    const Arg* base = argument(graph_, node, 0, "self");
    const Arg* source = argument(graph_, node, 1, "src");
    if (base == nullptr || source == nullptr || base->kind != Arg::Kind::Node || source->kind != Arg::Kind::Node) {
      unsupported("slice_scatter without tensor operands");
    }
    if (shape(base->node) != own || shape(source->node).size() != own.size())
      unsupported("slice_scatter of other shapes");
    const Arg* dimArg = argument(graph_, node, 2, "dim");
    const auto dim =
        static_cast<size_t>(normalizeDim(dimArg == nullptr ? 0 : intArg(dimArg, "slice_scatter dim"), own.size()));
    const Arg* startArg = argument(graph_, node, 3, "start");
    const Arg* endArg = argument(graph_, node, 4, "end");
    const Arg* stepArg = argument(graph_, node, 5, "step");
    auto bound = [&](const Arg* arg, int64_t otherwise) {
      int64_t v = arg == nullptr || arg->kind == Arg::Kind::None ? otherwise : intArg(arg, "slice_scatter bound");
      if (v < 0) v += own[dim];
      return std::clamp<int64_t>(v, 0, own[dim]);
    };
    const int64_t start = bound(startArg, 0), end = bound(endArg, own[dim]);
    const int64_t step = stepArg == nullptr ? 1 : intArg(stepArg, "slice_scatter step");
    if (step < 1) unsupported("slice_scatter step below 1");
    const Shape& sourceShape = shape(source->node);
    for (size_t d = 0; d < own.size(); ++d) {
      const int64_t want = d == dim ? (end > start ? (end - start - 1) / step + 1 : 0) : own[d];
      if (sourceShape[d] != want) unsupported("slice_scatter source of another shape than its slice");
    }
    const std::string& at = index.dims[dim];
    std::string condition = at + " >= " + std::to_string(start) + "LL && " + at + " < " + std::to_string(end) + "LL";
    std::string within = "(" + at + " - " + std::to_string(start) + "LL)";
    if (step != 1) {
      condition += " && " + within + " % " + std::to_string(step) + "LL == 0";
      within = "(" + within + " / " + std::to_string(step) + "LL)";
    }
    Index fromSource{index.dims, ""};
    fromSource.dims[dim] = within;
    const NodeId src = source->node, self = base->node;
    std::vector<Branch> branches{{condition, [this, src, fromSource] { return evaluate(src, fromSource); }},
                                 {"", [this, self, index] { return evaluate(self, index); }}};
    const std::optional<std::string> chunkFirst = chunk_ ? chunkRunStart(at) : std::nullopt;
    if (chunkFirst && step == 1 && start % chunk_->width == 0 && end % chunk_->width == 0) {
      branches.front().chunkCondition =
          *chunkFirst + " >= " + std::to_string(start) + "LL && " + *chunkFirst + " < " + std::to_string(end) + "LL";
    }
    return choose(out, branches);
  }

  Val creation(NodeId node, std::string_view name, const Index& index, CType out) {
    if ((name == "iota" || name == "arange") && index.dims.size() != 1)
      unsupported(std::string(name) + " that is not 1-D");
    if (name == "iota") {
      const Arg* start = kwarg(graph_, node, "start");
      const Arg* step = kwarg(graph_, node, "step");
      const Val first = start == nullptr ? Val{"0LL", CType::Int} : literal(*start);
      const Val by = step == nullptr ? Val{"1LL", CType::Int} : literal(*step);
      return {"(" + cast(first, out).expr + " + " + cast({index.dims[0], CType::Int}, out).expr + " * " +
                  cast(by, out).expr + ")",
              out};
    }
    if (name == "arange") {  // arange(end), arange.start(start, end), arange.start_step(start, end, step)
      const std::string overload = overloadOf(graph_, node);
      const Arg* first = argument(graph_, node, 0, "start");
      const Arg* step = overload == "start_step" ? argument(graph_, node, 2, "step") : kwarg(graph_, node, "step");
      const Val from = overload == "default" || first == nullptr ? Val{"0LL", CType::Int} : literal(*first);
      const Val by = step == nullptr ? Val{"1LL", CType::Int} : literal(*step);
      return {"(" + cast(from, out).expr + " + " + cast({index.dims[0], CType::Int}, out).expr + " * " +
                  cast(by, out).expr + ")",
              out};
    }
    const Arg* fill = argument(graph_, node, name == "full" ? 1 : 0, name == "full" ? "fill_value" : "");
    if (fill == nullptr) unsupported(std::string(name) + " without a value");
    return literal(*fill);
  }

  Val elementwise(NodeId node, std::string_view name, const Index& index, CType out) {
    const std::string overload = overloadOf(graph_, node);
    auto a = [&]() { return operand(node, 0, "self", index); };
    auto b = [&]() { return operand(node, 1, "other", index); };
    auto binary = [&](std::string_view symbol) {
      const CType common = a().type == CType::Float || b().type == CType::Float ? CType::Float : out;
      return Val{"(" + cast(a(), common).expr + " " + std::string(symbol) + " " + cast(b(), common).expr + ")", common};
    };
    auto compare = [&](std::string_view symbol) {
      const Val x = a(), y = b();
      const CType common = x.type == CType::Float || y.type == CType::Float ? CType::Float : CType::Int;
      return Val{"(" + cast(x, common).expr + " " + std::string(symbol) + " " + cast(y, common).expr + ")",
                 CType::Bool};
    };
    auto unary = [&](std::string_view function) { return call(function, cast(a(), CType::Float)); };
    auto scaled = [&](std::string_view symbol) {  // add / sub with alpha
      const Arg* alpha = argument(graph_, node, 2, "alpha");
      Val y = cast(b(), out);
      if (alpha != nullptr) y = {"(" + y.expr + " * " + cast(literal(*alpha), out).expr + ")", out};
      return Val{"(" + cast(a(), out).expr + " " + std::string(symbol) + " " + y.expr + ")", out};
    };
    if (name == "add") return scaled("+");
    if (name == "sub") return scaled("-");
    if (name == "rsub") {
      const Val x = cast(a(), out), y = cast(b(), out);
      const Arg* alpha = argument(graph_, node, 2, "alpha");
      const std::string xs = alpha == nullptr ? x.expr : "(" + x.expr + " * " + cast(literal(*alpha), out).expr + ")";
      return {"(" + y.expr + " - " + xs + ")", out};
    }
    if (name == "mul") return binary("*");
    if (name == "div" || name == "true_divide") {
      const Arg* mode = argument(graph_, node, 2, "rounding_mode");
      const Val x = a(), y = b();
      if (mode != nullptr && mode->kind == Arg::Kind::String) {
        const std::string_view how = graph_.str(mode->s);
        if (how != "floor" && how != "trunc") unsupported("div rounding mode " + std::string(how));
        if (out == CType::Int) {
          return {std::string(how == "floor" ? "lathe::floor_div" : "lathe::trunc_div") + "(" +
                      cast(x, CType::Int).expr + ", " + cast(y, CType::Int).expr + ")",
                  CType::Int};
        }
        return {std::string(how == "floor" ? "floorf" : "truncf") + "(" + cast(x, CType::Float).expr + " / " +
                    cast(y, CType::Float).expr + ")",
                CType::Float};
      }
      return {"(" + cast(x, CType::Float).expr + " / " + cast(y, CType::Float).expr + ")", CType::Float};
    }
    if (name == "maximum") return {"lathe::maximum(" + cast(a(), out).expr + ", " + cast(b(), out).expr + ")", out};
    if (name == "minimum") return {"lathe::minimum(" + cast(a(), out).expr + ", " + cast(b(), out).expr + ")", out};
    if (name == "pow") {
      if (overload != "Tensor_Scalar") unsupported("pow." + overload);
      const Arg* exponent = argument(graph_, node, 1, "exponent");
      const Val x = cast(a(), CType::Float);
      // Constant exponents as multiplications and square roots (as Inductor does): powf is a
      // long call where the exponent is a float, even when it holds 2.0 or 3.0.
      std::optional<double> constant;
      if (exponent != nullptr && exponent->kind == Arg::Kind::Int) constant = static_cast<double>(exponent->i);
      if (exponent != nullptr && exponent->kind == Arg::Kind::Float) constant = exponent->f;
      if (constant && *constant == 0.5) return call("sqrtf", x);
      if (constant && *constant == -0.5) return call("rsqrtf", x);
      if (constant && *constant == 0.0) return {"1.0f", CType::Float};
      if (constant && std::trunc(*constant) == *constant && std::abs(*constant) <= kUnrolledPowerLimit) {
        const std::string base = temp();
        line("const float " + base + " = " + x.expr + ";");
        std::string product = base;
        for (int k = 1; k < static_cast<int>(std::abs(*constant)); ++k) product += " * " + base;
        return {*constant > 0 ? "(" + product + ")" : "(1.0f / (" + product + "))", CType::Float};
      }
      return {"powf(" + x.expr + ", " + cast(b(), CType::Float).expr + ")", CType::Float};
    }
    if (name == "neg") return {"(-" + cast(a(), out).expr + ")", out};
    if (name == "abs") return {"lathe::absolute(" + cast(a(), out).expr + ")", out};
    if (name == "exp") return unary("lathe::fast_exp");
    if (name == "exp2") return unary("exp2f");
    if (name == "log") return unary("logf");
    if (name == "log1p") return unary("log1pf");
    if (name == "expm1") return unary("expm1f");
    if (name == "sqrt") return unary("sqrtf");
    if (name == "rsqrt") return unary("rsqrtf");
    if (name == "tanh") return unary("tanhf");
    if (name == "sin") return unary("sinf");
    if (name == "cos") return unary("cosf");
    if (name == "erf") return unary("erff");
    if (name == "floor") return out == CType::Float ? unary("floorf") : a();
    if (name == "ceil") return out == CType::Float ? unary("ceilf") : a();
    if (name == "sigmoid") return unary("lathe::sigmoid");
    if (name == "silu") return unary("lathe::silu");
    if (name == "reciprocal") return {"(1.0f / " + cast(a(), CType::Float).expr + ")", CType::Float};
    if (name == "relu")
      return {"lathe::maximum(" + cast(a(), out).expr + ", " + cast({"0LL", CType::Int}, out).expr + ")", out};
    if (name == "sign") return {"lathe::sign(" + cast(a(), out).expr + ")", out};
    if (name == "isnan") return {"lathe::is_nan(" + cast(a(), CType::Float).expr + ")", CType::Bool};
    if (name == "logical_not") return {"(!" + cast(a(), CType::Bool).expr + ")", CType::Bool};
    if (name == "bitwise_not")
      return out == CType::Bool ? Val{"(!" + cast(a(), CType::Bool).expr + ")", CType::Bool}
                                : Val{"(~" + cast(a(), CType::Int).expr + ")", CType::Int};
    if (name == "eq") return compare("==");
    if (name == "ne") return compare("!=");
    if (name == "gt") return compare(">");
    if (name == "ge") return compare(">=");
    if (name == "lt") return compare("<");
    if (name == "le") return compare("<=");
    if (name == "logical_and")
      return {"(" + cast(a(), CType::Bool).expr + " && " + cast(b(), CType::Bool).expr + ")", CType::Bool};
    if (name == "logical_or")
      return {"(" + cast(a(), CType::Bool).expr + " || " + cast(b(), CType::Bool).expr + ")", CType::Bool};
    if (name == "bitwise_and" || name == "bitwise_or" || name == "bitwise_xor" || name == "__and__" ||
        name == "__or__" || name == "__xor__") {
      if (out == CType::Float) unsupported("bitwise op on floating values");
      const std::string symbol = name == "bitwise_and" || name == "__and__" ? "&"
                                 : name == "bitwise_or" || name == "__or__" ? "|"
                                                                            : "^";
      return {"(" + cast(a(), out).expr + " " + symbol + " " + cast(b(), out).expr + ")", out};
    }
    if (name == "where") {
      const Val c = cast(operand(node, 0, "condition", index), CType::Bool);
      const Val x = cast(operand(node, 1, "self", index), out), y = cast(operand(node, 2, "other", index), out);
      return {"(" + c.expr + " ? " + x.expr + " : " + y.expr + ")", out};
    }
    if (name == "dropout") {  // the identity outside training; in training it draws random numbers
      const Arg* train = argument(graph_, node, 2, "train");
      if (train == nullptr || train->kind != Arg::Kind::Bool || train->b)
        unsupported("dropout in training mode (random numbers)");
      return a();
    }
    if (name == "masked_fill") {
      const Val c = cast(operand(node, 1, "mask", index), CType::Bool);
      const Val fill = cast(operand(node, 2, "value", index), out);
      return {"(" + c.expr + " ? " + fill.expr + " : " + cast(a(), out).expr + ")", out};
    }
    if (name == "clamp" || name == "clamp_min" || name == "clamp_max") {
      Val x = cast(a(), out);
      const bool hasMin = name != "clamp_max", hasMax = name != "clamp_min";
      const Arg* lo = hasMin ? argument(graph_, node, 1, "min") : nullptr;
      const Arg* hi = hasMax ? argument(graph_, node, name == "clamp" ? 2 : 1, "max") : nullptr;
      if (lo != nullptr && lo->kind != Arg::Kind::None)
        x = {"lathe::maximum(" + x.expr + ", " + cast(operand(node, 1, "min", index), out).expr + ")", out};
      if (hi != nullptr && hi->kind != Arg::Kind::None) {
        x = {"lathe::minimum(" + x.expr + ", " + cast(operand(node, name == "clamp" ? 2 : 1, "max", index), out).expr +
                 ")",
             out};
      }
      return x;
    }
    if (name == "gelu" || name == "gelu_backward") {
      const Arg* approximate = kwarg(graph_, node, "approximate");
      const bool tanh =
          approximate != nullptr && approximate->kind == Arg::Kind::String && graph_.str(approximate->s) == "tanh";
      if (name == "gelu")
        return {std::string(tanh ? "lathe::gelu_tanh(" : "lathe::gelu(") + cast(a(), CType::Float).expr + ")",
                CType::Float};
      const Val grad = cast(operand(node, 0, "grad_output", index), CType::Float);
      const Val x = cast(operand(node, 1, "self", index), CType::Float);
      return {
          std::string(tanh ? "lathe::gelu_tanh_backward(" : "lathe::gelu_backward(") + grad.expr + ", " + x.expr + ")",
          CType::Float};
    }
    if (name == "silu_backward") {
      const Val grad = cast(operand(node, 0, "grad_output", index), CType::Float);
      return {
          "lathe::silu_backward(" + grad.expr + ", " + cast(operand(node, 1, "self", index), CType::Float).expr + ")",
          CType::Float};
    }
    if (name == "sigmoid_backward" || name == "tanh_backward") {
      const Val grad = cast(operand(node, 0, "grad_output", index), CType::Float);
      const Val y = cast(operand(node, 1, "output", index), CType::Float);
      return name == "sigmoid_backward"
                 ? Val{"(" + grad.expr + " * " + y.expr + " * (1.0f - " + y.expr + "))", CType::Float}
                 : Val{"(" + grad.expr + " * (1.0f - " + y.expr + " * " + y.expr + "))", CType::Float};
    }
    if (name == "threshold_backward") {
      const Val grad = cast(operand(node, 0, "grad_output", index), out);
      const Val x = cast(operand(node, 1, "self", index), CType::Float);
      const Val threshold = cast(operand(node, 2, "threshold", index), CType::Float);
      return {"(" + x.expr + " <= " + threshold.expr + " ? " + cast({"0LL", CType::Int}, out).expr + " : " + grad.expr +
                  ")",
              out};
    }
    if (name == "fma") {
      const Val x = cast(a(), out), y = cast(operand(node, 1, "", index), out),
                z = cast(operand(node, 2, "", index), out);
      return out == CType::Float ? Val{"fmaf(" + x.expr + ", " + y.expr + ", " + z.expr + ")", out}
                                 : Val{"(" + x.expr + " * " + y.expr + " + " + z.expr + ")", out};
    }
    // clone, _to_copy, convert_element_type, copy, lift_fresh_copy, detach: the value, cast.
    if (name == "copy") return operand(node, 1, "src", index);
    return a();
  }

  // ---------------------------------------------------------------- kernels

  std::string params() const {
    std::string out;
    for (size_t k = 0; k < kernel_.inputs.size(); ++k) {
      out +=
          "const " + std::string(storageType(kernel_.inputs[k].dtype)) + "* __restrict__ in" + std::to_string(k) + ", ";
    }
    for (size_t k = 0; k < kernel_.outputs.size(); ++k) {
      out += std::string(storageType(kernel_.outputs[k].dtype)) + "* __restrict__ out" + std::to_string(k) + ", ";
    }
    return out;
  }
  std::string arguments() const {
    std::string out;
    for (size_t k = 0; k < kernel_.inputs.size(); ++k) out += "in" + std::to_string(k) + ", ";
    for (size_t k = 0; k < kernel_.outputs.size(); ++k) out += "out" + std::to_string(k) + ", ";
    return out;
  }

  void resetBody(std::string* body, int indent) {
    body_ = body;
    indent_ = indent;
    memo_.clear();
  }

  // Element `linear` of an output: in row-major order, or where elements need not follow rows
  // (pointwise kernels) in the output's memory order when it is a permuted dense tensor, so that
  // its stores and the loads of tensors laid out as it is are consecutive.
  Index outputIndex(const std::string& linear, const TensorSpec& out) {
    const bool free = reduction_ == ir::kNoNode || inlineReduction_;
    const std::optional<std::vector<size_t>> order = free && !isContiguous(out) ? memoryOrder(out) : std::nullopt;
    if (!order) return split(linear, out.sizes);
    Shape sizes;
    for (size_t d : *order) sizes.push_back(out.sizes[d]);
    const Index walked = split(linear, sizes);
    Index index{std::vector<std::string>(out.sizes.size(), "0"), "", linear, out.sizes, out.strides};
    for (size_t k = 0; k < order->size(); ++k) index.dims[(*order)[k]] = walked.dims[k];
    return index;
  }

  // Stores every output whose element count is `count`, at element `linear` of its own shape.
  void storeOutputs(const std::string& linear, int64_t count) {
    for (size_t k = 0; k < outputNodes_.size(); ++k) {
      const TensorSpec& out = kernel_.outputs[k];
      if (product(out.sizes) != count) continue;
      const Index index = outputIndex(linear, out);
      const Val v = evaluate(outputNodes_[k], index);
      const std::string off = offset(index, out);
      if (vectorMode_ && off == "j") {
        directOutputs_.insert(k);
        line("vout" + std::to_string(k) + ".v[e] = lathe::down<" + std::string(storageType(out.dtype)) + ">(" + v.expr +
             ");");
      } else {
        line("out" + std::to_string(k) + "[" + off + "] = lathe::down<" + std::string(storageType(out.dtype)) + ">(" +
             v.expr + ");");
      }
    }
  }

  std::string pointwiseKernels() {
    const int64_t total = product(kernel_.outputs.front().sizes);
    for (const TensorSpec& out : kernel_.outputs) {
      if (product(out.sizes) != total) unsupported("outputs of different element counts in a pointwise group");
    }
    constexpr int kBlock = 256;
    std::string scalarBody;
    resetBody(&scalarBody, 2);
    storeOutputs("j", total);

    std::string vectorBody;
    vectorMode_ = true;
    resetBody(&vectorBody, 4);
    storeOutputs("j", total);
    vectorMode_ = false;
    size_t widest = 0;
    for (size_t k : directInputs_) widest = std::max<size_t>(widest, ir::dtypeSize(kernel_.inputs[k].dtype));
    for (size_t k : directOutputs_) widest = std::max<size_t>(widest, ir::dtypeSize(kernel_.outputs[k].dtype));
    int width = widest == 0 ? 1 : static_cast<int>(16 / widest);
    // Again with each chunk in one innermost row, where shapes allow: kept when it hoists a load.
    // A pack wider than 16 bytes (8 int64 of a mask builder's positions) is one thread's strided
    // run: chunks narrow until every pack is 16 bytes, the width the direct tensors allow or less.
    auto chunkPass = [&](int chunkWidth) -> std::optional<std::string> {
      chunk_ = ChunkWalk{.width = chunkWidth};
      vectorMode_ = true;
      std::string chunkBody;
      resetBody(&chunkBody, 4);
      storeOutputs("j", total);
      vectorMode_ = false;
      if (chunk_->usable && !chunk_->loads.empty()) return chunkBody;
      chunk_.reset();
      return std::nullopt;
    };
    if (width > 1) {
      std::optional<std::string> chunkBody = chunkPass(width);
      size_t widestPack = 0;
      if (chunk_) {
        for (size_t k : chunk_->packedInputs)
          widestPack = std::max<size_t>(widestPack, ir::dtypeSize(kernel_.inputs[k].dtype));
      }
      if (widestPack * static_cast<size_t>(width) > 16) {
        const int narrower = static_cast<int>(16 / widestPack);
        std::optional<std::string> narrowBody = narrower > 1 ? chunkPass(narrower) : std::nullopt;
        if (narrowBody) width = narrower;
        chunkBody = std::move(narrowBody);  // else the plain vector body, at the first width
      }
      if (chunkBody) vectorBody = std::move(*chunkBody);
    }
    kernel_.vectorWidth = width;

    std::string text;
    text += kKernelDeclaration + std::to_string(kBlock) + ") " + kernel_.name + "(" + params() +
            "long long start, long long end) {\n";
    text += "  const long long j = start + static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;\n";
    text += "  if (j >= end) return;\n" + scalarBody + "}\n\n";
    if (width > 1) {
      const std::string w = std::to_string(width);
      text += kKernelDeclaration + std::to_string(kBlock) + ") " + kernel_.name + "_vec(" + params() +
              "long long chunks) {\n";
      text += "  const long long chunk = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;\n";
      text += "  if (chunk >= chunks) return;\n  const long long base = chunk * " + w + "LL;\n";
      if (chunk_) text += chunk_->prologue;
      text += packDeclarations(w);
      text += "#pragma unroll\n  for (int e = 0; e < " + w + "; ++e) {\n    const long long j = base + e;\n" +
              vectorBody + "  }\n";
      text += packStores();
      text += "}\n\n";
    }

    launchBody_ += "  long long done = 0;\n";
    if (width > 1) {
      std::string aligned;
      for (size_t k : directInputs_)
        aligned += " && lathe::aligned(in" + std::to_string(k) + ", " + std::to_string(width) + ")";
      for (size_t k : directOutputs_)
        aligned += " && lathe::aligned(out" + std::to_string(k) + ", " + std::to_string(width) + ")";
      if (chunk_) {
        for (size_t k : chunk_->packedInputs) {
          if (!directInputs_.contains(k))
            aligned += " && lathe::aligned(in" + std::to_string(k) + ", " + std::to_string(width) + ")";
        }
      }
      const int64_t chunks = total / width;
      launchBody_ += "  if (" + std::to_string(chunks) + "LL > 0" + aligned + ") {\n";
      launchBody_ += "    LATHE_LAUNCH(" + kernel_.name + "_vec, " + std::to_string((chunks + kBlock - 1) / kBlock) +
                     ", " + std::to_string(kBlock) + ", s, " + arguments() + std::to_string(chunks) + "LL);\n";
      launchBody_ += "    done = " + std::to_string(chunks * width) + "LL;\n  }\n";
      kernel_.config = {(chunks + kBlock - 1) / kBlock, kBlock};
    } else {
      kernel_.config = {(total + kBlock - 1) / kBlock, kBlock};
    }
    launchBody_ += "  if (done < " + std::to_string(total) + "LL) {\n";
    launchBody_ += "    const long long rest = " + std::to_string(total) + "LL - done;\n";
    launchBody_ += "    LATHE_LAUNCH(" + kernel_.name + ", static_cast<unsigned>((rest + " +
                   std::to_string(kBlock - 1) + ") / " + std::to_string(kBlock) + "), " + std::to_string(kBlock) +
                   ", s, " + arguments() + "done, " + std::to_string(total) + "LL);\n  }\n";
    return text;
  }

  struct ReductionOp {
    std::string combine;   // lathe functor
    std::string identity;  // C++ expression
    CType accumulator = CType::Float;
    bool mean = false;
    bool variance = false;
    int64_t correction = 1;
    bool online = false;     // softmax, log_softmax
    bool layerNorm = false;  // mean and centred variance, then rsqrt(var + epsilon)
    double epsilon = 1e-5;
  };

  ReductionOp reductionOp(NodeId node, std::string_view name) {
    ReductionOp op;
    const ir::TensorMeta& meta = graph_.node(node).meta;
    const ir::DType dtype = meta.isTensor() ? meta.dtype : tensorMeta(tensorOperand(node)).dtype;
    op.accumulator = computeType(dtype) == CType::Float ? CType::Float : CType::Int;
    if (name == "sum" || name == "mean") {
      op.combine = "lathe::Sum";
      op.identity = op.accumulator == CType::Float ? "0.0f" : "0LL";
      op.mean = name == "mean";
      if (op.mean) op.accumulator = CType::Float;
    } else if (name == "amax" || name == "amin") {
      op.combine = name == "amax" ? "lathe::Max" : "lathe::Min";
      op.identity = std::string("lathe::Identity<") + std::string(cTypeName(op.accumulator)) +
                    ">::" + (name == "amax" ? "lowest()" : "highest()");
    } else if (name == "var_mean") {
      op.combine = "lathe::Sum";
      op.identity = "0.0f";
      op.accumulator = CType::Float;
      op.variance = true;
      const Arg* correction = kwarg(graph_, node, "correction");
      if (correction == nullptr) correction = argument(graph_, node, 2, "");
      op.correction =
          correction == nullptr || correction->kind == Arg::Kind::None ? 1 : intArg(correction, "var_mean correction");
    } else if (name == "softmax" || name == "_softmax" || name == "log_softmax" || name == "_log_softmax") {
      op.online = true;
      op.accumulator = CType::Float;
    } else if (name == "layer_norm") {
      op.combine = "lathe::Sum";
      op.identity = "0.0f";
      op.accumulator = CType::Float;
      op.layerNorm = true;
      const Arg* epsilon = argument(graph_, node, 4, "eps");
      if (epsilon != nullptr && epsilon->kind == Arg::Kind::Float)
        op.epsilon = epsilon->f;
      else if (epsilon != nullptr && epsilon->kind != Arg::Kind::None)
        unsupported("layer_norm eps that is not a constant");
    } else {
      unsupported("reduction " + std::string(name));
    }
    return op;
  }

  // Members that read the reduced value, and a check that each reads it through the elements of
  // its own row (see the header): the value they reach is the one this block reduced.
  std::optional<std::string> acrossRows(int64_t rows, int64_t total) {
    std::set<NodeId> after{reduction_};
    for (NodeId node : nodes_) {
      if (node == reduction_) continue;
      const auto inputs = graph_.inputs(node);
      const bool reads = std::any_of(inputs.begin(), inputs.end(), [&](NodeId in) { return after.contains(in); });
      if (!reads) continue;
      after.insert(node);
      const OpSpec op = opOf(graph_, node);
      const int64_t count = numel(node);
      if (count != rows && count != total)
        return std::string(graph_.name(node)) + " after the reduction has another size";
      for (NodeId in : inputs) {
        if (!after.contains(in)) continue;
        const int64_t from = in == reduction_ && !graph_.node(in).meta.isTensor() ? rows : numel(in);
        if (op.shaping == Shaping::Getitem ||
            ((op.shaping == Shaping::Reshape || op.shaping == Shaping::Elementwise || op.shaping == Shaping::Expand) &&
             from == count)) {
          continue;
        }
        if ((op.shaping == Shaping::Elementwise || op.shaping == Shaping::Expand) && from == rows && count == total &&
            rowBroadcast(shape(node), shape(in), total / rows)) {
          continue;
        }
        return std::string(op.name) + " reads the reduced value across rows (" + std::string(graph_.name(node)) + ")";
      }
    }
    return std::nullopt;
  }

  // Broadcasting `from` to `to` repeats each element of `from` over `rowSize` consecutive elements.
  static bool rowBroadcast(const Shape& to, const Shape& from, int64_t rowSize) {
    if (from.size() > to.size()) return false;
    const size_t lead = to.size() - from.size();
    for (size_t split = 0; split <= to.size(); ++split) {
      if (product(to, split) != rowSize) continue;
      bool ok = true;
      for (size_t d = 0; d < to.size() && ok; ++d) {
        const int64_t fromSize = d < lead ? 1 : from[d - lead];
        ok = d >= split ? fromSize == 1 : (fromSize == to[d] || to[d] == 1);
      }
      if (ok) return true;
    }
    return false;
  }

  // The reduction's operand split into rows (the kept dimensions) of reduced elements.
  struct RowPlan {
    OpSpec op{Shaping::Reduction, ""};
    ReductionOp reduce;
    NodeId source = ir::kNoNode;
    std::vector<bool> reducedDim;
    Shape kept, reducedSizes;
    int64_t rows = 0, rowSize = 0, total = 0;
  };

  RowPlan planRows() {
    RowPlan plan;
    const OpSpec op = opOf(graph_, reduction_);
    plan.op = op;
    if (op.shaping != Shaping::Reduction && op.shaping != Shaping::Normalization) {
      unsupported(std::string(op.name) + ": not a reduction the generator knows");
    }
    const bool normalization = op.shaping == Shaping::Normalization;
    const ReductionOp reduce = reductionOp(reduction_, op.name);
    const ir::Node& info = graph_.node(reduction_);
    if (info.args.empty() || info.args[0].kind != Arg::Kind::Node) unsupported("a reduction without a tensor operand");
    const NodeId source = info.args[0].node;
    const Shape& sourceShape = shape(source);
    std::vector<bool> reducedDim(sourceShape.size(), false);
    const Arg* dims = argument(graph_, reduction_, 1, "dim");
    if (normalization) {
      // Rows are the innermost elements: the normalized shape, or the softmax dimension with only
      // size-1 dimensions after it, so that an element's row is its element number / row size.
      if (shape(reduction_) != sourceShape) unsupported(std::string(op.name) + " of another shape than its input");
      if (op.name == "layer_norm") {
        const size_t n =
            intList(argument(graph_, reduction_, 1, "normalized_shape"), "layer_norm normalized_shape").size();
        if (n == 0 || n > sourceShape.size()) unsupported("layer_norm normalized_shape of another rank");
        for (size_t d = sourceShape.size() - n; d < sourceShape.size(); ++d) reducedDim[d] = true;
      } else {
        const auto dim =
            static_cast<size_t>(normalizeDim(intArg(dims, std::string(op.name) + " dim"), sourceShape.size()));
        for (size_t d = dim + 1; d < sourceShape.size(); ++d) {
          if (sourceShape[d] != 1) unsupported(std::string(op.name) + " over a dimension that is not the innermost");
        }
        reducedDim[dim] = true;
      }
    } else if (dims == nullptr || dims->kind == Arg::Kind::None ||
               (dims->kind == Arg::Kind::List && dims->items.empty())) {
      reducedDim.assign(sourceShape.size(), true);
    } else {
      for (int64_t d : intList(dims, "reduction dims"))
        reducedDim[static_cast<size_t>(normalizeDim(d, sourceShape.size()))] = true;
    }
    if (const Arg* dtype = kwarg(graph_, reduction_, "dtype");
        !normalization && dtype != nullptr && dtype->kind != Arg::Kind::None) {
      if (dtype->kind != Arg::Kind::DType || computeType(dtype->dtype) != reduce.accumulator)
        unsupported("reduction with a dtype argument");
    }
    for (size_t d = 0; d < sourceShape.size(); ++d)
      (reducedDim[d] ? plan.reducedSizes : plan.kept).push_back(sourceShape[d]);
    plan.rows = product(plan.kept);
    plan.rowSize = product(plan.reducedSizes);
    plan.total = product(sourceShape);
    if (plan.rows * plan.rowSize != plan.total || plan.rows == 0 || plan.rowSize == 0)
      unsupported("an empty reduction");
    plan.reduce = reduce;
    plan.source = source;
    plan.reducedDim = std::move(reducedDim);
    return plan;
  }

  // Reductions small enough to run inside each element that reads them: the members after the
  // reduction may then index it any way (a transpose, a slice), as each element reduces its own.
  static constexpr int64_t kInlineRowLimit = 64;
  // Reductions over at most this many elements: where a row's elements are consecutive, a group
  // of lanes per row (the next power of two), each lane on one element, combined by shuffles, so
  // that a warp's loads and stores are consecutive; else a thread per row (its loop over the few
  // reduced elements inside), consecutive threads on consecutive rows. A block per row would
  // leave most of its threads idle. Where only row-sized values leave a group whose rows are not
  // consecutive, as a pointwise kernel over them.
  static constexpr int64_t kShortRowLimit = 16;
  // Multiprocessors of an H100 / H200, which grids of column kernels are sized to fill.
  static constexpr int64_t kSMs = 132;
  // pow with an integer exponent up to this size is written as multiplications.
  static constexpr double kUnrolledPowerLimit = 8;
  // Elements of a tensor the generator takes (256 Ti, more than any device holds).
  static constexpr int64_t kMaxElements = int64_t{1} << 48;
  // Bounds on the native recursion of emission (see evaluate), in members being computed: a level
  // takes 30 KiB of stack in a sanitizer build.
  static constexpr int kDeferDepth = 16;
  static constexpr int kMaxStackDepth = 48;
  // Bounds on what a kernel may grow to where operands are read in ever more ways (the values to
  // emit double per node where each node reads the one before in two branches): values emitted
  // per node of the group (the samples' kernels emit at most 13), and the length of an index
  // (slices of slices nest their offsets).
  static constexpr size_t kMaxValuesPerNode = 256;
  static constexpr size_t kMaxIndexText = 1 << 14;

  // The reduction at `index` of its result, as a loop inside the element that reads it.
  Val inlineReduction(const Index& index) {
    const RowPlan& p = rows_;
    const Shape& sourceShape = shape(p.source);
    const bool keepdim = shape(reduction_).size() == sourceShape.size();
    if (!keepdim && shape(reduction_).size() != p.kept.size())
      unsupported(std::string(graph_.name(reduction_)) + " has neither its operand's rank nor its kept dimensions'");
    const std::string acc = temp(), k = temp();
    line(std::string(cTypeName(p.reduce.accumulator)) + " " + acc + " = " + p.reduce.identity + ";");
    line("for (long long " + k + " = 0; " + k + " < " + std::to_string(p.rowSize) + "LL; ++" + k + ") {");
    const auto saved = memo_;
    indent_ += 2;
    const Index within = split(k, p.reducedSizes);
    Index at{std::vector<std::string>(sourceShape.size()), ""};
    size_t reducedAt = 0, ownAt = 0;
    for (size_t d = 0; d < sourceShape.size(); ++d) {
      if (p.reducedDim[d]) {
        at.dims[d] = within.dims[reducedAt++];
        if (keepdim) ++ownAt;
      } else {
        at.dims[d] = index.dims[ownAt++];
      }
    }
    const Val x = cast(evaluate(p.source, at), p.reduce.accumulator);
    line(acc + " = " + p.reduce.combine + "()(" + acc + ", " + x.expr + ");");
    indent_ -= 2;
    memo_ = saved;
    line("}");
    if (p.reduce.mean) return {"(" + acc + " / " + std::to_string(p.rowSize) + ".0f)", CType::Float};
    return {acc, p.reduce.accumulator};
  }

  std::string reductionKernels() {
    rows_ = planRows();
    const bool simple = rows_.op.shaping == Shaping::Reduction && !rows_.reduce.variance;
    const bool rowSizedOutputs = std::all_of(kernel_.outputs.begin(), kernel_.outputs.end(),
                                             [&](const TensorSpec& out) { return product(out.sizes) == rows_.rows; });
    const bool shortConsecutive = rows_.rowSize <= kShortRowLimit && rows_.rows > 1 && trailingRows();
    if (simple && rowSizedOutputs && rows_.rowSize <= kShortRowLimit && !shortConsecutive) {
      inlineReduction_ = true;
      return pointwiseKernels();
    }
    const std::optional<std::string> across = acrossRows(rows_.rows, rows_.total);
    if (!across) {
      if (simple && rows_.rows > 1 && leadingReduced() && columnOutputs()) return columnKernel();
      laneRows_ = shortConsecutive ? static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(rows_.rowSize))) : 0;
      threadRows_ = !shortConsecutive && rows_.rowSize <= kShortRowLimit;
      return reductionKernel();
    }
    if (!simple || rows_.rowSize > kInlineRowLimit) unsupported(*across);
    inlineReduction_ = true;
    return pointwiseKernels();
  }

  // Reduced dimensions before every kept one (size-1 dimensions aside): element k of row r is
  // element k * rows + r of the operand, so consecutive rows are consecutive in memory (columns).
  bool leadingReduced() {
    const Shape& sizes = shape(rows_.source);
    bool kept = false;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] == 1) continue;
      if (kept && rows_.reducedDim[d]) return false;
      kept = kept || !rows_.reducedDim[d];
    }
    return true;
  }

  // Outputs a column kernel can store: the row-sized ones, and element-sized ones that do not read
  // the reduced value (each element is visited once, by some thread of the strip's block).
  bool columnOutputs() {
    std::set<NodeId> after{reduction_};
    for (NodeId node : nodes_) {
      const auto inputs = graph_.inputs(node);
      if (std::any_of(inputs.begin(), inputs.end(), [&](NodeId in) { return after.contains(in); })) after.insert(node);
    }
    for (size_t k = 0; k < outputNodes_.size(); ++k) {
      const int64_t count = product(kernel_.outputs[k].sizes);
      if (count != rows_.rows && (count != rows_.total || after.contains(outputNodes_[k]))) return false;
    }
    return true;
  }

  // Column reductions (a weight or bias gradient: the sum over every token of each feature): a
  // block owns a strip of consecutive columns, its thread groups (one per strip-wide slice of
  // the block) take every groups-th row, so that a warp reads consecutive elements, and the
  // groups' partial results are combined in shared memory in a fixed order (deterministic, no
  // atomics, no second pass). The groups are counted from blockDim, so a block of one group (as
  // the CPU check runs it) reduces its strip in one thread per column.
  std::string columnKernel() {
    const ReductionOp& reduce = rows_.reduce;
    const int64_t rows = rows_.rows, rowSize = rows_.rowSize;
    // Strips of 32 columns where that gives a block to every SM of an H100 / H200 (132), else
    // narrower ones (8 columns: still a whole 32-byte sector of fp32) for more blocks.
    int64_t width = 8;
    for (int64_t candidate : {32, 16}) {
      if ((rows + candidate - 1) / candidate >= kSMs) {
        width = candidate;
        break;
      }
    }
    const int64_t strips = (rows + width - 1) / width;
    const int64_t block = columnBlock(strips);
    const int64_t groups = block / width;
    const std::string strip = std::to_string(width);
    const std::string acc(cTypeName(reduce.accumulator));
    std::string body;
    resetBody(&body, 2);
    line("__shared__ " + acc + " partial[" + std::to_string(groups) + "][" + strip + "];");
    line("const long long row = static_cast<long long>(blockIdx.x) * " + strip + " + threadIdx.x % " + strip + "u;");
    line("const unsigned group = threadIdx.x / " + strip + "u, groups = blockDim.x / " + strip + "u;");
    line(acc + " acc = " + reduce.identity + ";");
    const Shape& sourceShape = shape(rows_.source);
    line("if (row < " + std::to_string(rows) + "LL) {");
    indent_ += 2;
    line("#pragma unroll 4");  // several rows' loads in flight per thread
    line("for (long long k = group; k < " + std::to_string(rowSize) + "LL; k += groups) {");
    const auto saved = memo_;
    indent_ += 2;
    line("const long long j = k * " + std::to_string(rows) + "LL + row;");
    // Split from j (not from k and row), so that outputs of the operand's shape share its loads.
    const Val x = cast(evaluate(rows_.source, split("j", sourceShape)), reduce.accumulator);
    line("acc = " + reduce.combine + "()(acc, " + x.expr + ");");
    storeOutputs("j", rows_.total);
    indent_ -= 2;
    memo_ = saved;
    line("}");
    indent_ -= 2;
    line("}");
    line("partial[group][threadIdx.x % " + strip + "u] = acc;");
    combineGroups("threadIdx.x % " + strip + "u", 1);
    line("if (group != 0 || row >= " + std::to_string(rows) + "LL) return;");
    line("acc = partial[0][threadIdx.x];");
    const ir::TensorMeta& meta = tensorMeta(reduction_);
    const CType type = computeType(meta.dtype);
    const std::string expr = reduce.mean ? "acc / " + std::to_string(rowSize) + ".0f" : "acc";
    line("const " + std::string(cTypeName(type)) +
         " red = " + rounded(cast({expr, reduce.accumulator}, type).expr, meta.dtype) + ";");
    reduced_ = {{"red", type}};
    storeOutputs("row", rows);
    const std::string name = kernel_.name + "_cols";
    std::string args = arguments();
    args.resize(args.size() - 2);
    std::string prototype = params();
    prototype.resize(prototype.size() - 2);
    kernel_.config = {strips, block};
    std::string text =
        kKernelDeclaration + std::to_string(block) + ") " + name + "(" + prototype + ") {\n" + body + "}\n\n";
    const std::string scalarLaunch = "  LATHE_LAUNCH(" + name + ", " + std::to_string(strips) + ", " +
                                     std::to_string(block) + ", s, " + args + ");\n";
    const std::optional<VectorColumns> vector = columnVectorKernel();
    if (!vector) {
      launchBody_ += scalarLaunch;
      return text;
    }
    kernel_.config = vector->config;
    kernel_.vectorWidth = vector->width;
    launchBody_ += "  if (" + vector->aligned + ") {\n  " + vector->launch + "  } else {\n  " + scalarLaunch + "  }\n";
    return text + vector->text;
  }

  // The thread groups' partial results of a column kernel (partial[group][column]), combined in
  // halving steps (group g takes g + half), so that the block's last group does not add every other
  // group's values one after another: log2(groups) steps, in a fixed order.
  void combineGroups(const std::string& firstColumn, int columns) {
    const ReductionOp& reduce = rows_.reduce;
    line("for (unsigned half = groups / 2; half > 0; half /= 2) {");
    line("  __syncthreads();");
    line("  if (group < half) {");
    line("    #pragma unroll");
    line("    for (int e = 0; e < " + std::to_string(columns) + "; ++e) {");
    line("      const unsigned c = " + firstColumn + " + e;");
    line("      partial[group][c] = " + reduce.combine + "()(partial[group][c], partial[group + half][c]);");
    line("    }");
    line("  }");
    line("}");
    line("__syncthreads();");
  }

  // The packs of a vector loop's tensors that move whole chunks (directInputs_ / directOutputs_):
  // inputs loaded from `base` before the element loop, outputs declared, then stored after it.
  std::string packDeclarations(const std::string& width) const {
    std::string text;
    for (size_t k : directInputs_) {
      const std::string type = "lathe::Pack<" + std::string(storageType(kernel_.inputs[k].dtype)) + ", " + width + ">";
      text += "  const " + type + " vin" + std::to_string(k) + " = *reinterpret_cast<const " + type + "*>(in" +
              std::to_string(k) + " + base);\n";
    }
    for (size_t k : directOutputs_) {
      text += "  lathe::Pack<" + std::string(storageType(kernel_.outputs[k].dtype)) + ", " + width + "> vout" +
              std::to_string(k) + ";\n";
    }
    return text;
  }
  std::string packStores() const {
    std::string text;
    for (size_t k : directOutputs_) {
      const std::string n = std::to_string(k);
      text += "  *reinterpret_cast<decltype(vout" + n + ")*>(out" + n + " + base) = vout" + n + ";\n";
    }
    return text;
  }
  // Emits `text` line by line at the current indentation plus `extra` spaces.
  void lines(const std::string& text, int extra) {
    std::istringstream in(text);
    for (std::string one; std::getline(in, one);) line(std::string(static_cast<size_t>(extra), ' ') + one);
  }

  struct VectorColumns {
    std::string text, launch, aligned;
    LaunchConfig config;
    int width = 1;
  };

  // The column reduction with each thread on `width` consecutive columns (16 bytes of the widest
  // tensor): the loads of a 2-byte operand are 16 bytes wide instead of 2, so that enough bytes are
  // in flight. Partial results combine in the same fixed order; nullopt where columns, shapes or
  // the operand's layout do not allow whole chunks.
  std::optional<VectorColumns> columnVectorKernel() {
    const ReductionOp& reduce = rows_.reduce;
    const int64_t rows = rows_.rows, rowSize = rows_.rowSize;
    // 16 bytes of the narrowest tensor (two 16-byte accesses of a 4-byte one beside 2-byte ones): a
    // strip's row then covers whole 32-byte sectors of every tensor; narrower ones leave half
    // sectors to other blocks, and DRAM moves the sector twice.
    size_t narrowest = 8;
    for (const TensorSpec& t : kernel_.inputs) narrowest = std::min<size_t>(narrowest, ir::dtypeSize(t.dtype));
    for (const TensorSpec& t : kernel_.outputs) narrowest = std::min<size_t>(narrowest, ir::dtypeSize(t.dtype));
    const int width = static_cast<int>(std::min<size_t>(8, 16 / narrowest));
    if (width < 2 || rows % width != 0) return std::nullopt;
    int64_t lanes = 2;
    for (int64_t candidate : {8, 4}) {
      if (rows / (candidate * width) >= kSMs) {
        lanes = candidate;
        break;
      }
    }
    int64_t strips = (rows + lanes * width - 1) / (lanes * width);
    // Few strips (a few thousand columns): the rows are split over blocks too, 256 threads each,
    // strips of 8 threads (a 128-byte line of a bf16 row), until there are blocks for every SM
    // twice; the last block of a strip to finish combines the splits' partial sums (module
    // memory) in split order, so the result does not depend on which finished first.
    int64_t splits = 1;
    int64_t block = columnBlock(strips);
    if (strips < 2 * kSMs) {
      constexpr int64_t kSplitBlock = 256, kRowsPerGroup = 4;  // at least: a group's loads overlap
      int64_t splitLanes = 8;
      while (splitLanes > 2 && splitLanes * width > rows) splitLanes /= 2;
      const int64_t splitStrips = (rows + splitLanes * width - 1) / (splitLanes * width);
      const int64_t wanted = (2 * kSMs + splitStrips - 1) / splitStrips;
      const int64_t most = rowSize / (kSplitBlock / splitLanes * kRowsPerGroup);
      if (std::min(wanted, most) > 1) {
        splits = std::min(wanted, most);
        lanes = splitLanes;
        strips = splitStrips;
        block = kSplitBlock;
      }
    }
    const int64_t rowsPerSplit = (rowSize + splits - 1) / splits;
    const std::string w = std::to_string(width), l = std::to_string(lanes);
    const std::string acc(cTypeName(reduce.accumulator));
    const std::string partials = kernel_.name + "_partials", arrivals = kernel_.name + "_arrivals";

    directInputs_.clear();
    directOutputs_.clear();
    chunk_ = ChunkWalk{.width = width};
    vectorMode_ = true;
    std::string element;
    resetBody(&element, 8);
    const Val x = cast(evaluate(rows_.source, split("j", shape(rows_.source))), reduce.accumulator);
    line("acc[e] = " + reduce.combine + "()(acc[e], " + x.expr + ");");
    storeOutputs("j", rows_.total);
    vectorMode_ = false;
    const ChunkWalk walk = *chunk_;
    chunk_.reset();
    if (!walk.usable) return std::nullopt;

    std::string body;
    resetBody(&body, 2);
    line("__shared__ " + acc + " partial[" + std::to_string(block / lanes) + "][" + std::to_string(lanes * width) +
         "];");
    line("const unsigned lane = threadIdx.x % " + l + "u, group = threadIdx.x / " + l + "u, groups = blockDim.x / " +
         l + "u;");
    std::string rowStart = "0LL", rowEnd = std::to_string(rowSize) + "LL";
    if (splits > 1) {
      line("const long long strip = blockIdx.x % " + std::to_string(strips) + "u, split = blockIdx.x / " +
           std::to_string(strips) + "u;");
      line("const long long col0 = (strip * " + l + " + lane) * " + w + ";");
      line("const long long row_end = split * " + std::to_string(rowsPerSplit) + "LL + " +
           std::to_string(rowsPerSplit) + "LL < " + rowEnd + " ? split * " + std::to_string(rowsPerSplit) + "LL + " +
           std::to_string(rowsPerSplit) + "LL : " + rowEnd + ";");
      rowStart = "split * " + std::to_string(rowsPerSplit) + "LL";
      rowEnd = "row_end";
    } else {
      line("const long long col0 = (static_cast<long long>(blockIdx.x) * " + l + " + lane) * " + w + ";");
    }
    line(acc + " acc[" + w + "];");
    line("#pragma unroll");
    line("for (int e = 0; e < " + w + "; ++e) acc[e] = " + reduce.identity + ";");
    line("if (col0 < " + std::to_string(rows) + "LL) {");
    line("  #pragma unroll 2");
    line("  for (long long k = " + rowStart + " + group; k < " + rowEnd + "; k += groups) {");
    line("    const long long base = k * " + std::to_string(rows) + "LL + col0;");
    lines(walk.prologue + packDeclarations(w), 2);
    line("    #pragma unroll");
    line("    for (int e = 0; e < " + w + "; ++e) {");
    line("      const long long j = base + e;");
    body += element;
    line("    }");
    lines(packStores(), 2);
    line("  }");
    line("}");
    line("#pragma unroll");
    line("for (int e = 0; e < " + w + "; ++e) partial[group][lane * " + w + " + e] = acc[e];");
    combineGroups("lane * " + w, width);
    line("if (group != 0 || col0 >= " + std::to_string(rows) + "LL) return;");
    line("#pragma unroll");
    line("for (int e = 0; e < " + w + "; ++e) acc[e] = partial[0][lane * " + w + " + e];");
    if (splits > 1) {
      // The threadFenceReduction pattern, per lane: publish, count, and the last one reads all.
      const std::string arrival = arrivals + "[strip * " + l + " + lane]";
      line("#pragma unroll");
      line("for (int e = 0; e < " + w + "; ++e) " + partials + "[split * " + std::to_string(rows) +
           "LL + col0 + e] = acc[e];");
      line("__threadfence();");
      line("if (atomicAdd(&" + arrival + ", 1u) != " + std::to_string(splits - 1) + "u) return;");
      line("__threadfence();");
      line("#pragma unroll");
      line("for (int e = 0; e < " + w + "; ++e) acc[e] = " + reduce.identity + ";");
      line("for (long long from = 0; from < " + std::to_string(splits) + "LL; ++from) {");
      line("  #pragma unroll");
      line("  for (int e = 0; e < " + w + "; ++e) acc[e] = " + reduce.combine + "()(acc[e], __ldcg(&" + partials +
           "[from * " + std::to_string(rows) + "LL + col0 + e]));");
      line("}");
      line(arrival + " = 0u;  // ready for the next launch");
    }
    line("#pragma unroll");
    line("for (int e = 0; e < " + w + "; ++e) {");
    indent_ += 2;
    line("const long long row = col0 + e;");
    const ir::TensorMeta& meta = tensorMeta(reduction_);
    const CType type = computeType(meta.dtype);
    const std::string expr = reduce.mean ? "acc[e] / " + std::to_string(rowSize) + ".0f" : "acc[e]";
    line("const " + std::string(cTypeName(type)) +
         " red = " + rounded(cast({expr, reduce.accumulator}, type).expr, meta.dtype) + ";");
    reduced_ = {{"red", type}};
    storeOutputs("row", rows);
    indent_ -= 2;
    line("}");

    VectorColumns out;
    out.width = width;
    out.config = {strips * splits, block};
    const std::string name = kernel_.name + "_cols_vec";
    std::string args = arguments();
    args.resize(args.size() - 2);
    std::string prototype = params();
    prototype.resize(prototype.size() - 2);
    out.text = kKernelDeclaration + std::to_string(block) + ") " + name + "(" + prototype + ") {\n" + body + "}\n\n";
    if (splits > 1) {
      // Module memory: one launch of this kernel at a time per device (see docs/kernels.md).
      out.text = "__device__ " + acc + " " + partials + "[" + std::to_string(splits * rows) +
                 "];\n__device__ unsigned " + arrivals + "[" + std::to_string(strips * lanes) + "];\n\n" + out.text;
    }
    out.launch = "  LATHE_LAUNCH(" + name + ", " + std::to_string(strips * splits) + ", " + std::to_string(block) +
                 ", s, " + args + ");\n";
    out.aligned = "true";
    std::set<size_t> packedInputs = walk.packedInputs;
    packedInputs.insert(directInputs_.begin(), directInputs_.end());
    for (size_t k : packedInputs) out.aligned += " && lathe::aligned(in" + std::to_string(k) + ", " + w + ")";
    for (size_t k : directOutputs_) out.aligned += " && lathe::aligned(out" + std::to_string(k) + ", " + w + ")";
    return out;
  }

  // A column kernel's block: few strips get more threads each, so that enough loads are in flight.
  static int64_t columnBlock(int64_t strips) { return strips >= 2 * kSMs ? 256 : strips >= kSMs ? 512 : 1024; }

  static std::string rounded(const std::string& expr, ir::DType dtype) {
    if (dtype == ir::DType::BF16) return "lathe::round_bf16(" + expr + ")";
    if (dtype == ir::DType::F16) return "lathe::round_f16(" + expr + ")";
    return expr;
  }

  // Reduced dimensions after every kept one (size-1 dimensions aside): row r is the elements
  // r * rowSize ... (r + 1) * rowSize - 1 of the reduction's operand, so rows can be read in chunks.
  bool trailingRows() {
    const Shape& sizes = shape(rows_.source);
    bool reduced = false;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] == 1) continue;
      if (reduced && !rows_.reducedDim[d]) return false;
      reduced = reduced || rows_.reducedDim[d];
    }
    return true;
  }

  // A loop of the block's threads over the elements of its row; `element` emits the body for the
  // element whose number in the operand is `j` (`k` in the row). In vector mode each thread takes
  // chunks of kVectorToken elements: tensors read or written in that order are moved 16 bytes at
  // a time (preloaded before, stored after the chunk's elements).
  // `backwards`: the block walks the row from its end, so that a pass after the first meets the
  // elements the first read last, the ones most likely still in L2, before they are evicted.
  void rowLoop(const std::function<void()>& element, bool backwards = false) {
    const std::string rowSize = std::to_string(rows_.rowSize) + "LL";
    const auto saved = memo_;
    backwards = backwards && laneRows_ == 0 && !threadRows_;
    if (!vectorMode_) {
      line(laneRows_ != 0 ? std::string("if (active) {")
           : threadRows_  ? "for (long long k = 0; k < " + rowSize + "; ++k) {"
           : backwards    ? "for (long long k = " + rowSize + " - 1 - threadIdx.x; k >= 0; k -= blockDim.x) {"
                          : "for (long long k = threadIdx.x; k < " + rowSize + "; k += blockDim.x) {");
      indent_ += 2;
      line("const long long j = row * " + rowSize + " + k;");
      element();
      indent_ -= 2;
      memo_ = saved;
      line("}");
      return;
    }
    directInputs_.clear();
    directOutputs_.clear();
    std::string inner;
    std::string* outer = body_;
    body_ = &inner;
    indent_ += 4;
    element();
    indent_ -= 4;
    body_ = outer;
    memo_ = saved;
    const std::string width(kVectorToken);
    line(backwards ? "for (long long c = " + rowSize + " / " + width + " - 1 - threadIdx.x; c >= 0; c -= blockDim.x) {"
                   : "for (long long c = threadIdx.x; c < " + rowSize + " / " + width + "; c += blockDim.x) {");
    line("  const long long base = row * " + rowSize + " + c * " + width + ";");
    lines(packDeclarations(width), 0);
    line("#pragma unroll");
    line("  for (int e = 0; e < " + width + "; ++e) {");
    line("    const long long j = base + e;");
    *body_ += inner;
    line("  }");
    lines(packStores(), 0);
    line("}");
    rowDirectInputs_.insert(directInputs_.begin(), directInputs_.end());
    rowDirectOutputs_.insert(directOutputs_.begin(), directOutputs_.end());
  }

  // The body of a row kernel (one block per row), scalar or in chunks (see rowLoop).
  std::string reductionBody() {
    const ReductionOp& reduce = rows_.reduce;
    const NodeId source = rows_.source;
    const Shape& sourceShape = shape(source);
    const int64_t rows = rows_.rows, rowSize = rows_.rowSize, total = rows_.total;
    std::string body;
    resetBody(&body, 2);
    const std::string acc = std::string(cTypeName(reduce.accumulator));
    if (laneRows_ != 0) {
      // No early return: every lane of a warp takes part in the shuffles.
      const std::string lanes = std::to_string(laneRows_);
      line("const long long lane_at = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;");
      line("const long long row = lane_at / " + lanes + ", k = lane_at % " + lanes + ";");
      line("const bool active = row < " + std::to_string(rows) + "LL && k < " + std::to_string(rowSize) + "LL;");
    } else if (threadRows_) {
      line("const long long row = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;");
      line("if (row >= " + std::to_string(rows) + "LL) return;");
    } else {
      line("const long long row = blockIdx.x;");
    }
    // The element of the operand the loop is at: split from `j` where rows are trailing, else from
    // the row and `k`.
    auto rowElement = [&]() {
      if (vectorMode_) return split("j", sourceShape);
      const Index rowIndex = split("row", rows_.kept);
      const Index within = split("k", rows_.reducedSizes);
      Index at{std::vector<std::string>(sourceShape.size()), ""};
      size_t keptAt = 0, reducedAt = 0;
      for (size_t d = 0; d < sourceShape.size(); ++d) {
        at.dims[d] = rows_.reducedDim[d] ? within.dims[reducedAt++] : rowIndex.dims[keptAt++];
      }
      return at;
    };
    // One pass over the row; `center` subtracts the mean in the second pass of var_mean.
    auto pass = [&](const std::string& accumulator, const std::string& center) {
      line(acc + " " + accumulator + " = " + reduce.identity + ";");
      rowLoop([&] {
        const Val x = cast(evaluate(source, rowElement()), reduce.accumulator);
        if (center.empty()) {
          line(accumulator + " = " + reduce.combine + "()(" + accumulator + ", " + x.expr + ");");
        } else {
          line("{ const float d = " + x.expr + " - " + center + "; " + accumulator + " += d * d; }");
        }
      });
      if (laneRows_ != 0) {
        line(accumulator + " = lathe::lane_reduce<" + std::to_string(laneRows_) + ">(" + accumulator + ", " +
             reduce.combine + "());");
      } else if (!threadRows_) {
        line(accumulator + " = lathe::block_reduce(" + accumulator + ", " + reduce.combine + "(), " + reduce.identity +
             ");");
      }
    };
    const std::string count = std::to_string(rowSize) + ".0f";
    if (reduce.online) {
      // Softmax statistics in one pass: the running maximum and the sum of exp(x - maximum).
      line("float red_max = lathe::Identity<float>::lowest(), red_sum = 0.0f;");
      rowLoop([&] {
        line("lathe::online_add(red_max, red_sum, " + cast(evaluate(source, rowElement()), CType::Float).expr + ");");
      });
      if (laneRows_ != 0) {
        line("lathe::lane_reduce_online<" + std::to_string(laneRows_) + ">(red_max, red_sum);");
      } else if (!threadRows_) {
        line("lathe::block_reduce_online(red_max, red_sum);");
      }
      // Once per row, not per element: the normalization multiplies by 1 / sum or subtracts log(sum).
      const std::string_view name = rows_.op.name;
      if (name == "softmax" || name == "_softmax") line("const float red_inverse = 1.0f / red_sum;");
      if (name == "log_softmax" || name == "_log_softmax") line("const float red_log_sum = logf(red_sum);");
      reduced_ = {{"red_max", CType::Float}, {"red_sum", CType::Float}};
    } else {
      pass("acc", "");
    }
    if (reduce.layerNorm) {
      line("const float red_mean = acc / " + count + ";");
      pass("acc2", "red_mean");
      line("const float red_rstd = rsqrtf(acc2 / " + count + " + " + floatLiteral(reduce.epsilon) + ");");
      reduced_ = {{"red_mean", CType::Float}, {"red_rstd", CType::Float}};
    } else if (reduce.variance) {
      line("const float mean_full = acc / " + count + ";");
      pass("acc2", "mean_full");
      std::vector<ir::DType> itemTypes(2, tensorMeta(source).dtype);
      for (NodeId user : graph_.users(reduction_)) {
        const Arg* item = argument(graph_, user, 1, "");
        if (graph_.target(user) == io::fx::kGetItemTarget && item != nullptr && item->kind == Arg::Kind::Int &&
            item->i >= 0 && item->i < 2) {
          itemTypes[static_cast<size_t>(item->i)] = tensorMeta(user).dtype;
        }
      }
      const std::string divisor = std::to_string(std::max<int64_t>(rowSize - reduce.correction, 0)) + ".0f";
      line("const float red_var = " + rounded("acc2 / " + divisor, itemTypes[0]) + ";");
      line("const float red_mean = " + rounded("mean_full", itemTypes[1]) + ";");
      reduced_ = {{"red_var", CType::Float}, {"red_mean", CType::Float}};
    } else if (!reduce.online) {
      const ir::TensorMeta& meta = tensorMeta(reduction_);
      const CType type = computeType(meta.dtype);
      const std::string expr = reduce.mean ? "acc / " + count : "acc";
      line("const " + std::string(cTypeName(type)) +
           " red = " + rounded(cast({expr, reduce.accumulator}, type).expr, meta.dtype) + ";");
      reduced_ = {{"red", type}};
    }
    // Row-sized outputs, once per row (scalar stores: one element).
    bool rowOutputs = false;
    for (const TensorSpec& out : kernel_.outputs) rowOutputs = rowOutputs || product(out.sizes) == rows;
    if (rowOutputs) {
      line(threadRows_      ? std::string("{")
           : laneRows_ != 0 ? "if (row < " + std::to_string(rows) + "LL && k == 0) {"
                            : std::string("if (threadIdx.x == 0) {"));
      const auto saved = memo_;
      const bool vector = vectorMode_;
      vectorMode_ = false;
      indent_ += 2;
      storeOutputs("row", rows);
      indent_ -= 2;
      vectorMode_ = vector;
      memo_ = saved;
      line("}");
    }
    // Element-sized outputs: the row's elements again, in each output's own order.
    bool elementOutputs = false;
    for (const TensorSpec& out : kernel_.outputs) elementOutputs = elementOutputs || product(out.sizes) == total;
    if (rows != total && elementOutputs) rowLoop([&] { storeOutputs("j", total); }, true);
    return body;
  }

  std::string reductionKernel() {
    const int64_t rows = rows_.rows, rowSize = rows_.rowSize, total = rows_.total;
    for (const TensorSpec& out : kernel_.outputs) {
      const int64_t count = product(out.sizes);
      if (count != rows && count != total) unsupported("output " + out.name + " is neither row- nor element-sized");
    }
    // Short rows: lanes or a thread per row (see kShortRowLimit); else a block per row.
    const int64_t block = threadRows_ || laneRows_ != 0 ? 256
                          : rowSize >= 2048             ? 512
                          : rowSize >= 256              ? 256
                                                        : std::max<int64_t>(32, (rowSize + 31) / 32 * 32);
    const int64_t grid = laneRows_ != 0 ? (rows * laneRows_ + block - 1) / block
                         : threadRows_  ? (rows + block - 1) / block
                                        : rows;
    const std::string scalarBody = reductionBody();
    // The chunked variant, where rows are trailing and some tensor is read or written along them.
    std::string vectorBody;
    int width = 1;
    if (trailingRows() && !threadRows_ && laneRows_ == 0) {
      vectorMode_ = true;
      vectorBody = reductionBody();
      vectorMode_ = false;
      size_t widest = 0;
      for (size_t k : rowDirectInputs_) widest = std::max<size_t>(widest, ir::dtypeSize(kernel_.inputs[k].dtype));
      for (size_t k : rowDirectOutputs_) widest = std::max<size_t>(widest, ir::dtypeSize(kernel_.outputs[k].dtype));
      width = widest == 0 ? 1 : static_cast<int>(16 / widest);
      if (width > 1 && rowSize % width != 0) width = 1;
    }
    std::string args = arguments();
    args.resize(args.size() - 2);
    std::string prototype = params();
    prototype.resize(prototype.size() - 2);
    const std::string launchBounds = kKernelDeclaration + std::to_string(block) + ") ";
    const std::string launch = ", " + std::to_string(grid) + ", " + std::to_string(block) + ", s, " + args + ");\n";
    std::string text = launchBounds + kernel_.name + "(" + prototype + ") {\n" + scalarBody + "}\n\n";
    kernel_.config = {grid, block};
    if (width == 1) {
      launchBody_ += "  LATHE_LAUNCH(" + kernel_.name + launch;
      return text;
    }
    const std::string w = std::to_string(width);
    for (size_t at = vectorBody.find(kVectorToken); at != std::string::npos; at = vectorBody.find(kVectorToken, at)) {
      vectorBody.replace(at, kVectorToken.size(), w);
    }
    text += launchBounds + kernel_.name + "_vec(" + prototype + ") {\n" + vectorBody + "}\n\n";
    kernel_.vectorWidth = width;
    std::string aligned;
    for (size_t k : rowDirectInputs_)
      aligned +=
          (aligned.empty() ? "" : " && ") + std::string("lathe::aligned(in") + std::to_string(k) + ", " + w + ")";
    for (size_t k : rowDirectOutputs_)
      aligned +=
          (aligned.empty() ? "" : " && ") + std::string("lathe::aligned(out") + std::to_string(k) + ", " + w + ")";
    launchBody_ += "  if (" + aligned + ") {\n    LATHE_LAUNCH(" + kernel_.name + "_vec" + launch +
                   "  } else {\n    LATHE_LAUNCH(" + kernel_.name + launch + "  }\n";
    return text;
  }

  std::string sourceFile(const std::string& kernels) const {
    std::string text = "// Generated by lathe export: fusion group " + std::to_string(group_.id) + " (" + group_.kind +
                       "), " + std::to_string(nodes_.size()) + " nodes.\n";
    for (const std::string& fx : kernel_.fx) text += "//   " + fx + "\n";
    text += "#include \"" + std::string(kCommonHeaderName) + "\"\n\n";
    // nvcc reads all of it; on the NVRTC path, NVRTC the kernels and the host compiler the rest.
    text += "#ifdef __CUDACC__  // the kernels: nvcc, NVRTC\n" + kernels +
            "#endif\n\n#ifndef __CUDACC_RTC__  // the launch function: nvcc, or the host compiler after NVRTC\n";
    text += "extern \"C\" int " + kernel_.launch +
            "(void* const* outputs, const void* const* inputs, const int64_t* symbols, void* stream) {\n";
    if (!kernel_.symbols.empty()) {
      text += "  if (symbols == nullptr) return lathe::kInvalidValue;\n";
      for (const std::string& symbol : kernel_.symbols) {
        text += "  if (symbols[LATHE_SYMBOL_" + symbol + "] != " + std::to_string(hints_.at(symbol)) +
                "LL) return lathe::kInvalidValue;  // generated for " + symbol + " = " +
                std::to_string(hints_.at(symbol)) + "\n";
      }
    } else {
      text += "  (void)symbols;\n";
    }
    for (size_t k = 0; k < kernel_.inputs.size(); ++k) {
      const std::string type(storageType(kernel_.inputs[k].dtype));
      text += "  const auto* in" + std::to_string(k) + " = static_cast<const " + type + "*>(inputs[" +
              std::to_string(k) + "]);\n";
    }
    for (size_t k = 0; k < kernel_.outputs.size(); ++k) {
      const std::string type(storageType(kernel_.outputs[k].dtype));
      text +=
          "  auto* out" + std::to_string(k) + " = static_cast<" + type + "*>(outputs[" + std::to_string(k) + "]);\n";
    }
    text += "  const lathe::Stream s = static_cast<lathe::Stream>(stream);\n";
    text += launchBody_;
    text += "  return 0;\n}\n#endif\n";
    return text;
  }

  const ir::Graph& graph_;
  const plan::FusionGroup& group_;
  const SymbolHints& hints_;
  std::set<NodeId> members_;
  std::vector<NodeId> nodes_;  // the group's, in program order
  std::map<NodeId, size_t> inputSlot_;
  std::vector<NodeId> outputNodes_;
  std::map<NodeId, Shape> shapes_;
  std::set<std::string> usedSymbols_;
  GeneratedKernel kernel_;
  NodeId reduction_ = ir::kNoNode;
  std::vector<Val> reduced_;  // the reduced values once the row is reduced (var_mean: var, mean)
  RowPlan rows_;
  bool inlineReduction_ = false;
  bool threadRows_ = false;  // a thread per row of the reduction (short rows), no block-wide combine
  int64_t laneRows_ = 0;     // lanes per row (short consecutive rows), combined by shuffles; 0: off
  std::set<size_t> rowDirectInputs_, rowDirectOutputs_;  // moved in chunks by a row kernel's loops
  // Stands for the chunk width in a row kernel's text until the widest chunked tensor is known.
  static constexpr std::string_view kVectorToken = "LATHE_VECTOR_WIDTH";

  std::string* body_ = nullptr;
  int indent_ = 0;
  int temps_ = 0;
  // Members being computed (value -> compute nesting), and their number at the innermost
  // evaluate: see evaluate().
  int depth_ = 0, depthBase_ = 0;
  std::map<std::string, Val> memo_;
  bool vectorMode_ = false;
  std::set<size_t> directInputs_, directOutputs_;
  // A pointwise vector kernel whose chunks each lie in one innermost row (splitChunk).
  struct ChunkWalk {
    int width = 0;
    bool usable = true;           // every shape split over "j" has an innermost size that is a multiple of width
    std::string prologue;         // before the element loop: the chunk's position and the loads it shares
    std::set<std::string> names;  // defined in the prologue
    std::map<std::string, std::string> loads;  // load -> its name in the prologue
    std::set<size_t> packedInputs;             // read as packs: the launch checks their alignment
  };
  std::optional<ChunkWalk> chunk_;
  // Per enclosing branch of choose(): the condition under which a whole chunk takes it, or nullopt
  // when elements of one chunk may go different ways (loads there stay per element).
  std::vector<std::optional<std::string>> chunkGuards_;
  std::string launchBody_;
};

}  // namespace

std::string commonHeader() {
  return R"(// Device helpers shared by the kernels lathe export generates (one file per fusion group).
// Read by nvcc (kernels and launch functions, with the CUDA runtime), by NVRTC (the kernels) and,
// on the NVRTC path, by a host C++ compiler (the launch functions, through the driver API).
#pragma once
#if defined(__CUDACC_RTC__)
// NVRTC has no cuda_bf16.h / cuda_fp16.h built in: the storage types and their conversions, as
// those headers make them on sm_80 and later.
struct __align__(2) __nv_bfloat16 { unsigned short x; };
struct __align__(2) __half { unsigned short x; };
__device__ __forceinline__ float __bfloat162float(__nv_bfloat16 v) {
  return __uint_as_float(static_cast<unsigned>(v.x) << 16);
}
__device__ __forceinline__ __nv_bfloat16 __float2bfloat16_rn(float f) {
  __nv_bfloat16 r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r.x) : "f"(f));
  return r;
}
__device__ __forceinline__ float __half2float(__half v) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.x));
  return f;
}
__device__ __forceinline__ __half __float2half_rn(float f) {
  __half r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r.x) : "f"(f));
  return r;
}
#elif defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
namespace lathe { using Stream = cudaStream_t; }
// A kernel launch in a launch function, which returns the launch's error when it fails.
#define LATHE_LAUNCH(kernel, grid, block, stream, ...)                          \
  do {                                                                          \
    kernel<<<grid, block, 0, stream>>>(__VA_ARGS__);                            \
    const cudaError_t lathe_status = cudaGetLastError();                        \
    if (lathe_status != cudaSuccess) return static_cast<int>(lathe_status);     \
  } while (0)
#else
#include <stdint.h>
// The storage types, only pointed to on the host.
struct __nv_bfloat16 { unsigned short x; };
struct __half { unsigned short x; };
namespace lathe {
using Stream = struct CUstream_st*;
// Launches a kernel of the bundle's fatbin by name in the current context (the driver runtime the
// NVRTC path builds into the library); returns the CUresult.
int driver_launch(const char* kernel, unsigned grid, unsigned block, Stream stream, void** args);
// Each argument must have its kernel parameter's type: the driver copies it by that size.
template <typename... Args>
int launch(const char* kernel, unsigned grid, unsigned block, Stream stream, Args... args) {
  void* pointers[] = {static_cast<void*>(&args)..., nullptr};
  return driver_launch(kernel, grid, block, stream, pointers);
}
}
#define LATHE_LAUNCH(kernel, grid, block, stream, ...)                                \
  do {                                                                                \
    const int lathe_status = lathe::launch(#kernel, grid, block, stream, __VA_ARGS__); \
    if (lathe_status != 0) return lathe_status;                                       \
  } while (0)
#endif
#ifndef __CUDACC_RTC__
namespace lathe {
// What a launch function returns for symbol values it was not generated for: cudaErrorInvalidValue
// and CUDA_ERROR_INVALID_VALUE.
constexpr int kInvalidValue = 1;
template <typename T>
inline bool aligned(const T* p, int n) { return reinterpret_cast<uintptr_t>(p) % (sizeof(T) * n) == 0; }
}
#endif

#include "lathe_symbols.h"

#ifdef __CUDACC__
namespace lathe {

__device__ __forceinline__ float up(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float up(__half x) { return __half2float(x); }
__device__ __forceinline__ float up(float x) { return x; }
__device__ __forceinline__ long long up(long long x) { return x; }
__device__ __forceinline__ long long up(int x) { return x; }
__device__ __forceinline__ long long up(short x) { return x; }
__device__ __forceinline__ long long up(signed char x) { return x; }
__device__ __forceinline__ long long up(unsigned char x) { return x; }
__device__ __forceinline__ bool up(bool x) { return x; }

template <typename T>
__device__ __forceinline__ auto ld(const T* p, long long offset) { return up(p[offset]); }

template <typename T> struct Down { template <typename V> __device__ static T from(V v) { return static_cast<T>(v); } };
template <> struct Down<__nv_bfloat16> { __device__ static __nv_bfloat16 from(float v) { return __float2bfloat16_rn(v); } };
template <> struct Down<__half> { __device__ static __half from(float v) { return __float2half_rn(v); } };
template <typename T, typename V>
__device__ __forceinline__ T down(V v) { return Down<T>::from(v); }

__device__ __forceinline__ float round_bf16(float x) { return __bfloat162float(__float2bfloat16_rn(x)); }
__device__ __forceinline__ float round_f16(float x) { return __half2float(__float2half_rn(x)); }

// NaN-propagating, as torch's maximum / minimum / amax / amin.
__device__ __forceinline__ float maximum(float a, float b) { return (a != a || a > b) ? a : b; }
__device__ __forceinline__ float minimum(float a, float b) { return (a != a || a < b) ? a : b; }
__device__ __forceinline__ long long maximum(long long a, long long b) { return a > b ? a : b; }
__device__ __forceinline__ long long minimum(long long a, long long b) { return a < b ? a : b; }
__device__ __forceinline__ bool maximum(bool a, bool b) { return a || b; }
__device__ __forceinline__ bool minimum(bool a, bool b) { return a && b; }
__device__ __forceinline__ float absolute(float a) { return fabsf(a); }
__device__ __forceinline__ long long absolute(long long a) { return a < 0 ? -a : a; }
__device__ __forceinline__ float sign(float a) { return a != a ? a : static_cast<float>((a > 0.0f) - (a < 0.0f)); }
__device__ __forceinline__ long long sign(long long a) { return (a > 0) - (a < 0); }
__device__ __forceinline__ bool is_nan(float a) { return a != a; }
__device__ __forceinline__ long long floor_div(long long a, long long b) {
  const long long q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__device__ __forceinline__ long long trunc_div(long long a, long long b) { return a / b; }
// exp through the multifunction unit (ex2.approx of x * log2(e)), as Triton's exp: a few ulp,
// where expf's accurate sequence would make a long softmax row compute-bound.
__device__ __forceinline__ float fast_exp(float x) { return __expf(x); }

__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }
__device__ __forceinline__ float silu_backward(float g, float x) {
  const float s = sigmoid(x);
  return g * s * (1.0f + x * (1.0f - s));
}
__device__ __forceinline__ float gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
__device__ __forceinline__ float gelu_backward(float g, float x) {
  const float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
  const float pdf = 0.39894228040143268f * expf(-0.5f * x * x);
  return g * (cdf + x * pdf);
}
__device__ __forceinline__ float gelu_tanh(float x) {
  const float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}
__device__ __forceinline__ float gelu_tanh_backward(float g, float x) {
  const float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);
  const float t = tanhf(inner);
  const float dinner = 0.79788456080286536f * (1.0f + 3.0f * 0.044715f * x * x);
  return g * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * dinner);
}

// N elements of T in one aligned access (16 bytes or less).
template <typename T, int N>
struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

struct Sum { template <typename T> __device__ T operator()(T a, T b) const { return a + b; } };
struct Max { template <typename T> __device__ T operator()(T a, T b) const { return maximum(a, b); } };
struct Min { template <typename T> __device__ T operator()(T a, T b) const { return minimum(a, b); } };
template <typename T> struct Identity;
template <> struct Identity<float> {
  __device__ static float lowest() { return -__int_as_float(0x7f800000); }
  __device__ static float highest() { return __int_as_float(0x7f800000); }
};
template <> struct Identity<long long> {
  __device__ static long long lowest() { return -0x7fffffffffffffffLL - 1; }
  __device__ static long long highest() { return 0x7fffffffffffffffLL; }
};

// The reduction over the whole block, in every thread: warp shuffles, then one value per warp
// through shared memory. Every thread of the block must call it.
template <typename T, typename Op>
__device__ T block_reduce(T v, Op op, T identity) {
  __shared__ T partial[32];
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) >> 5;
  v = threadIdx.x < warps ? partial[threadIdx.x] : identity;
  if (warp == 0) {
    for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
    if (lane == 0) partial[0] = v;
  }
  __syncthreads();
  v = partial[0];
  __syncthreads();
  return v;
}

// Softmax statistics: adds x to a running maximum m and sum s of exp(value - m). One exp per
// element and no branch: exp(-|x - m|) is exp(x - m) when x is not above m (added), else
// exp(m - x) (the old sum rescaled to the new maximum, plus 1). A NaN reaches s either way, and
// so does a +inf (its own term is exp(inf - inf) in torch), through x - x.
__device__ __forceinline__ void online_add(float& m, float& s, float x) {
  const float e = fast_exp(-fabsf(x - m));
  s = x > m ? fmaf(s, e, 1.0f + (x - x)) : s + e;
  m = maximum(m, x);
}
__device__ __forceinline__ void online_merge(float& m, float& s, float m2, float s2) {
  const float next = maximum(m, m2);
  s = next == Identity<float>::lowest() ? s + s2 : s * fast_exp(m - next) + s2 * fast_exp(m2 - next);
  m = next;
}
// The reduction over each aligned group of `Lanes` lanes (a power of two up to 32), in every lane
// of the group. Every lane of the warp must call it. a + b is b + a, so all lanes agree bit for bit.
template <int Lanes, typename T, typename Op>
__device__ __forceinline__ T lane_reduce(T v, Op op) {
#pragma unroll
  for (int offset = Lanes / 2; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// online_merge over each group of `Lanes` lanes, as lane_reduce.
template <int Lanes>
__device__ __forceinline__ void lane_reduce_online(float& m, float& s) {
#pragma unroll
  for (int offset = Lanes / 2; offset > 0; offset >>= 1) {
    online_merge(m, s, __shfl_xor_sync(0xffffffffu, m, offset), __shfl_xor_sync(0xffffffffu, s, offset));
  }
}

// online_merge over the whole block, in every thread, as block_reduce.
__device__ inline void block_reduce_online(float& m, float& s) {
  __shared__ float partial[2][32];
  for (int offset = 16; offset > 0; offset >>= 1) {
    online_merge(m, s, __shfl_xor_sync(0xffffffffu, m, offset), __shfl_xor_sync(0xffffffffu, s, offset));
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) {
    partial[0][warp] = m;
    partial[1][warp] = s;
  }
  __syncthreads();
  const int warps = (blockDim.x + 31) >> 5;
  m = threadIdx.x < warps ? partial[0][threadIdx.x] : Identity<float>::lowest();
  s = threadIdx.x < warps ? partial[1][threadIdx.x] : 0.0f;
  if (warp == 0) {
    for (int offset = 16; offset > 0; offset >>= 1) {
      online_merge(m, s, __shfl_xor_sync(0xffffffffu, m, offset), __shfl_xor_sync(0xffffffffu, s, offset));
    }
    if (lane == 0) {
      partial[0][0] = m;
      partial[1][0] = s;
    }
  }
  __syncthreads();
  m = partial[0][0];
  s = partial[1][0];
  __syncthreads();
}

}  // namespace lathe
#endif
)";
}

std::string fxLine(const ir::Graph& graph, NodeId node) {
  std::string out(graph.name(node));
  out += " = ";
  const ir::Node& info = graph.node(node);
  std::function<void(const Arg&)> arg = [&](const Arg& a) {
    switch (a.kind) {
      case Arg::Kind::None: out += "None"; return;
      case Arg::Kind::Node: out += graph.name(a.node); return;
      case Arg::Kind::Int: out += std::to_string(a.i); return;
      case Arg::Kind::Float:
        if (std::isinf(a.f) || std::isnan(a.f)) {
          out += std::isnan(a.f) ? "float('nan')" : a.f > 0 ? "float('inf')" : "float('-inf')";
        } else {
          io::fx::appendFloatRepr(out, a.f);
        }
        return;
      case Arg::Kind::Bool: out += a.b ? "True" : "False"; return;
      case Arg::Kind::String: io::fx::appendStringRepr(out, graph.str(a.s)); return;
      case Arg::Kind::DType: out += "torch." + std::string(ir::dtypeTorchName(a.dtype)); return;
      case Arg::Kind::Device: out += "torch." + std::string(graph.str(a.s)); return;
      case Arg::Kind::Layout:
      case Arg::Kind::MemoryFormat:
      case Arg::Kind::SymExpr:
      case Arg::Kind::Raw: out += graph.str(a.s); return;
      case Arg::Kind::List:
      case Arg::Kind::Tuple:
        out += a.kind == Arg::Kind::List ? '[' : '(';
        for (size_t k = 0; k < a.items.size(); ++k) {
          if (k) out += ", ";
          arg(a.items[k]);
        }
        if (a.kind == Arg::Kind::Tuple && a.items.size() == 1) out += ',';
        out += a.kind == Arg::Kind::List ? ']' : ')';
        return;
      case Arg::Kind::Dict:
        out += '{';
        for (size_t k = 0; k < a.items.size() && k < a.keys.size(); ++k) {
          if (k) out += ", ";
          arg(a.keys[k]);
          out += ": ";
          arg(a.items[k]);
        }
        out += '}';
        return;
    }
  };
  if (graph.target(node) == io::fx::kGetItemTarget && info.args.size() == 2) {
    arg(info.args[0]);
    out += '[';
    arg(info.args[1]);
    out += ']';
    return out;
  }
  out += graph.target(node);
  out += '(';
  bool first = true;
  for (const Arg& a : info.args) {
    if (!first) out += ", ";
    first = false;
    arg(a);
  }
  for (const auto& [key, value] : info.kwargs) {
    if (!first) out += ", ";
    first = false;
    out += graph.str(key);
    out += " = ";
    arg(value);
  }
  out += ')';
  return out;
}

std::string symbolsHeader(const std::vector<Symbol>& symbols) {
  std::string text =
      "// Positions of the symbols in the `symbols` array every launch takes (manifest.json \"symbols\").\n#pragma "
      "once\n";
  for (size_t k = 0; k < symbols.size(); ++k) {
    text += "#define LATHE_SYMBOL_" + symbols[k].name + " " + std::to_string(k) + "  // hint " +
            std::to_string(symbols[k].hint) + "\n";
  }
  return text;
}

namespace {

// A group whose kernel would clash with an earlier group's: the same id (kernel names are made of
// it), or a node that group computes already.
void requireDistinct(const ir::Graph& graph, const plan::FusionGroup& group, std::map<NodeId, int32_t>& groupOf,
                     std::set<int32_t>& ids) {
  if (group.id < 0) unsupported("group id " + std::to_string(group.id) + " is negative");
  if (ids.contains(group.id)) unsupported("an earlier group has id " + std::to_string(group.id));
  for (NodeId node : group.nodes) {
    const auto earlier = groupOf.find(node);
    if (earlier != groupOf.end() && earlier->second != group.id) {
      unsupported(std::string(graph.name(node)) + " is in fusion group " + std::to_string(earlier->second) + " too");
    }
  }
  ids.insert(group.id);
  for (NodeId node : group.nodes) groupOf.emplace(node, group.id);
}

}  // namespace

KernelSet generateKernels(const ir::Graph& graph, const plan::PlanState& state) {
  const SymbolHints hints = symbolHints(graph);
  KernelSet set;
  std::set<std::string> symbols;
  std::map<NodeId, int32_t> groupOf;
  std::set<int32_t> ids;
  for (const plan::FusionGroup& group : state.groups) {
    const bool outside = group.anchor != ir::kNoNode && group.anchor >= graph.size();
    if (outside ||
        std::any_of(group.nodes.begin(), group.nodes.end(), [&](NodeId node) { return node >= graph.size(); }))
      throw Error(ErrorCode::Internal, "fusion group " + std::to_string(group.id) + " names a node outside the graph");
    try {
      requireDistinct(graph, group, groupOf, ids);
      GeneratedKernel kernel = GroupGenerator(graph, group, hints).generate();
      symbols.insert(kernel.symbols.begin(), kernel.symbols.end());
      set.kernels.push_back(std::move(kernel));
    } catch (const Unsupported& why) {
      set.notGenerated.push_back({group.id, why.reason});
    }
  }
  for (const std::string& symbol : symbols) set.symbols.push_back({symbol, hints.at(symbol)});
  return set;
}

}  // namespace lathe::kernels

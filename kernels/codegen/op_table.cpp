#include "kernels/codegen/op_table.h"

#include <algorithm>
#include <functional>
#include <map>

#include "io/fx/fx_python.h"
#include "ir/op_info.h"

namespace lathe::kernels::codegen {

std::pair<std::string, std::string> splitOverload(const std::string& canonical) {
  const size_t first = canonical.find('.');
  const size_t last = canonical.rfind('.');
  if (first == std::string::npos || first == last) return {canonical, ""};
  return {canonical.substr(0, last), canonical.substr(last + 1)};
}

namespace {

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

}  // namespace

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

}  // namespace lathe::kernels::codegen

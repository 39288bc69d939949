// The graph IR: FX semantics (one node = one value; tuple results are read by getitem nodes),
// nodes in program order in a flat vector indexed by dense NodeId, users/inputs as CSR built once
// by finalize(). Strings are interned per graph. A finalized graph is immutable; passes annotate
// it from outside or build a new one.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/dtype.h"
#include "ir/string_pool.h"

namespace lathe::ir {

using NodeId = uint32_t;
inline constexpr NodeId kNoNode = UINT32_MAX;

// One dimension: a concrete integer or a symbolic expression (sympy str syntax: "s77",
// "2*s0", "(s77//2)") with a concrete hint used for sizing when one is known.
struct SymDim {
  int64_t value = 0;   // the size, or the hint of a symbolic size
  StrId expr = 0;      // 0 = concrete
  bool hasHint = true; // false: symbolic with no known value (value is then 0)

  [[nodiscard]] bool symbolic() const { return expr != 0; }
  friend bool operator==(const SymDim&, const SymDim&) = default;
};

enum class ValueKind : uint8_t { None, Tensor, SymInt, SymFloat, SymBool, Opaque };

// Metadata of the value a node produces (FX annotation `"bf16[1, 64][64, 1]cuda:0"`).
struct TensorMeta {
  ValueKind kind = ValueKind::None;
  DType dtype = DType::Unknown;
  std::vector<SymDim> sizes;
  std::vector<SymDim> strides;
  bool hasStrides = false;
  StrId device = 0;   // "cuda:0", "cpu", "meta"; 0 = not given
  StrId wrapper = 0;  // tensor subclass around it: "FunctionalTensor", "DTensor"; 0 = plain
  StrId extra = 0;    // text after the tensor inside a wrapper (DTensor placements), kept verbatim
  // SymInt/SymFloat/SymBool: the expression ("s77"). Opaque: the annotation as printed, quotes
  // included when it was quoted (`"weird"`), bare for a Python type (`torch.SymInt`).
  StrId symExpr = 0;

  [[nodiscard]] bool isTensor() const { return kind == ValueKind::Tensor; }
  // Element count and storage bytes from sizes/strides, using hints for symbolic dims.
  // Storage bytes = (1 + sum((size_i - 1) * stride_i)) * itemsize for strided tensors, numel *
  // itemsize when strides are unknown, 0 for an empty tensor; saturating at INT64_MAX on absurd sizes.
  [[nodiscard]] int64_t numel() const;
  [[nodiscard]] uint64_t storageBytes() const;
  [[nodiscard]] bool allHinted() const;
  friend bool operator==(const TensorMeta&, const TensorMeta&) = default;
};

// A node argument. Kept as a tagged struct (not std::variant) so that lists nest cheaply.
struct Arg {
  enum class Kind : uint8_t {
    None,
    Node,          // node reference (node)
    Int,           // i
    Float,         // f (inf/nan allowed)
    Bool,          // b
    String,        // s: the string value, unquoted
    DType,         // dtype
    Device,        // s: printed form, e.g. "device(type='cuda', index=0)"
    Layout,        // s: "torch.strided"
    MemoryFormat,  // s: "torch.contiguous_format"
    SymExpr,       // s: symbolic expression text that is not a single node ("s0 + 1")
    List,          // items, printed [..]
    Tuple,         // items, printed (..)
    Dict,          // keys[i] -> items[i]
    Raw,           // s: anything else, kept verbatim (e.g. "slice(None, None, None)")
  };
  // SymExpr and Raw may also hold in items the node references found inside their text
  // ("slice(None, sym_size, None)"), so that users/inputs stay complete.
  Kind kind = Kind::None;
  bool b = false;
  ir::DType dtype = ir::DType::Unknown;
  NodeId node = kNoNode;
  StrId s = 0;
  int64_t i = 0;
  double f = 0.0;
  std::vector<Arg> items;
  std::vector<Arg> keys;

  static Arg none() { return {}; }
  static Arg ofNode(NodeId n) { Arg a; a.kind = Kind::Node; a.node = n; return a; }
  static Arg ofInt(int64_t v) { Arg a; a.kind = Kind::Int; a.i = v; return a; }
  static Arg ofFloat(double v) { Arg a; a.kind = Kind::Float; a.f = v; return a; }
  static Arg ofBool(bool v) { Arg a; a.kind = Kind::Bool; a.b = v; return a; }
  static Arg ofDType(ir::DType t) { Arg a; a.kind = Kind::DType; a.dtype = t; return a; }
  static Arg ofStr(Kind k, StrId id) { Arg a; a.kind = k; a.s = id; return a; }
  bool operator==(const Arg& o) const;
};

enum class NodeKind : uint8_t { Placeholder, CallFunction, CallMethod, CallModule, GetAttr, Output };

// What a value is in a training step. Set by loaders where the artifact tells (AOT primals that
// are parameters, tangents, pt2 signature) and refined by analyses.
enum class Role : uint8_t {
  Unknown,
  Parameter,   // weight
  Buffer,
  UserInput,   // activation input
  Tangent,
  SymInput,    // symbolic size passed as an input
  Forward,
  Backward,
  Output,
  Gradient,
};

// Where the value came from in user code (`# File: path:line in func, code: src`).
struct Provenance {
  StrId file = 0;
  uint32_t line = 0;
  StrId function = 0;
  StrId code = 0;
  StrId modulePath = 0;  // "model.layers.0.self_attn" where known
  StrId annotation = 0;  // `# Annotation: {...}` (node.meta["custom"]) kept verbatim, braces included
  friend bool operator==(const Provenance&, const Provenance&) = default;
};

// FX op names ("placeholder", "call_function", ...) and role names ("parameter", "tangent", ...).
[[nodiscard]] std::string_view nodeKindName(NodeKind kind);
[[nodiscard]] std::string_view roleName(Role role);

struct Node {
  NodeKind kind = NodeKind::CallFunction;
  Role role = Role::Unknown;
  bool synthetic = false;  // added by a loader for FX semantics (pt2 getitems), not in the artifact
  StrId name = 0;
  // Canonical target: "torch.ops.aten.mm.default", "operator.getitem", "operator.mul",
  // "torch.ops.higher_order.wrap"; the method name for CallMethod; the attribute path for GetAttr;
  // "output" for the output node. Placeholders: the forward parameter name when it differs from the
  // node name (Dynamo's `L_x_` read as `l_x_ = L_x_`, `*args`), else 0.
  StrId target = 0;
  std::vector<Arg> args;  // placeholders: the default value from the signature, if any
  std::vector<std::pair<StrId, Arg>> kwargs;
  TensorMeta meta;
  StrId comment = 0;  // trailing comment kept verbatim: "PlainAOTInput(idx=0)"
  Provenance provenance;
  // Output node: the trailing comment of each returned item, in order ("GradAOTOutput(grad_of=
  // PlainAOTInput(idx=1))", "None"); empty when the text has none. 0 for an item without one.
  std::vector<StrId> itemComments;

  // Runs an op (call_function, call_method or call_module).
  [[nodiscard]] bool isCall() const {
    return kind == NodeKind::CallFunction || kind == NodeKind::CallMethod || kind == NodeKind::CallModule;
  }
  // A value the graph is given (placeholder or get_attr).
  [[nodiscard]] bool isInput() const { return kind == NodeKind::Placeholder || kind == NodeKind::GetAttr; }
};

class Graph;
using GraphPtr = std::shared_ptr<const Graph>;

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // --- building (before finalize) ---
  StringPool& strings() { return strings_; }
  StrId intern(std::string_view s) { return strings_.intern(s); }
  NodeId addNode(Node node);
  void reserve(size_t nodes) { nodes_.reserve(nodes); }
  Node& mutableNode(NodeId id) { return nodes_[id]; }
  void addSubgraph(std::string_view attrName, std::shared_ptr<Graph> g);
  void setClassName(std::string_view name) { className_ = intern(name); }
  // AOT joint style: `def forward(self, primals, tangents):` followed by flattened placeholders.
  void setForwardParams(std::vector<StrId> params) { forwardParams_ = std::move(params); }
  // Builds CSR inputs/users and the name index. Call once when all nodes are added.
  void finalize();

  // --- reading ---
  [[nodiscard]] const StringPool& strings() const { return strings_; }
  [[nodiscard]] std::string_view str(StrId id) const { return strings_.view(id); }
  [[nodiscard]] size_t size() const { return nodes_.size(); }
  [[nodiscard]] const std::vector<Node>& nodes() const { return nodes_; }
  [[nodiscard]] const Node& node(NodeId id) const { return nodes_[id]; }
  [[nodiscard]] std::string_view name(NodeId id) const { return str(nodes_[id].name); }
  [[nodiscard]] std::string_view target(NodeId id) const { return str(nodes_[id].target); }
  // Distinct nodes this node reads (through args/kwargs, nested lists included), in first-use order.
  // Inline: the planner's searches walk them millions of times.
  [[nodiscard]] std::span<const NodeId> inputs(NodeId id) const {
    return {inputIds_.data() + inputOffsets_[id], inputOffsets_[id + 1] - inputOffsets_[id]};
  }
  // Distinct nodes that read this node, in program order.
  [[nodiscard]] std::span<const NodeId> users(NodeId id) const {
    return {userIds_.data() + userOffsets_[id], userOffsets_[id + 1] - userOffsets_[id]};
  }
  [[nodiscard]] NodeId find(std::string_view name) const;
  [[nodiscard]] NodeId outputNode() const { return output_; }
  [[nodiscard]] std::string_view className() const { return str(className_); }
  [[nodiscard]] const std::vector<StrId>& forwardParams() const { return forwardParams_; }
  [[nodiscard]] const std::vector<std::pair<std::string, std::shared_ptr<const Graph>>>& subgraphs() const {
    return subgraphs_;
  }
  [[nodiscard]] bool finalized() const { return finalized_; }

 private:
  StringPool strings_;
  std::vector<Node> nodes_;
  std::vector<uint32_t> inputOffsets_, userOffsets_;
  std::vector<NodeId> inputIds_, userIds_;
  std::unordered_map<std::string_view, NodeId> byName_;
  std::vector<std::pair<std::string, std::shared_ptr<const Graph>>> subgraphs_;
  std::vector<StrId> forwardParams_;
  StrId className_ = 0;
  NodeId output_ = kNoNode;
  bool finalized_ = false;
};

// Visits every node reference inside an argument (nested lists/tuples/dicts included).
template <typename F>
void forEachNodeRef(const Arg& a, F&& f) {
  if (a.kind == Arg::Kind::Node) {
    f(a.node);
    return;
  }
  for (const auto& item : a.items) forEachNodeRef(item, f);
  for (const auto& key : a.keys) forEachNodeRef(key, f);
}

// Counts used by `lathe graphs` (see the CLI reference): calls = top-level nodes other than
// placeholders, the output node and synthetic nodes; torchOps = calls whose target starts with
// "torch.ops.".
struct GraphCounts {
  size_t nodes = 0, calls = 0, torchOps = 0, placeholders = 0;
};
[[nodiscard]] GraphCounts countGraph(const Graph& g);

}  // namespace lathe::ir

#include "ir/graph.h"

#include <algorithm>
#include <cmath>

namespace lathe::ir {

// Sizes come from user files: damaged ones may hold absurd values, so arithmetic saturates
// instead of overflowing.
namespace {
constexpr int64_t kSaturated = INT64_MAX;

int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? kSaturated : r;
}
int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? kSaturated : r;
}
}  // namespace

int64_t TensorMeta::numel() const {
  int64_t n = 1;
  for (const auto& d : sizes) {
    if (d.value <= 0) return 0;
    n = saturatingMul(n, d.value);
  }
  return n;
}

uint64_t TensorMeta::storageBytes() const {
  if (kind != ValueKind::Tensor) return 0;
  const auto item = static_cast<int64_t>(dtypeSize(dtype));
  if (!hasStrides || strides.size() != sizes.size()) return static_cast<uint64_t>(saturatingMul(numel(), item));
  int64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i].value <= 0) return 0;
    const int64_t stride = strides[i].value == INT64_MIN ? kSaturated : std::abs(strides[i].value);
    extent = saturatingAdd(extent, saturatingMul(sizes[i].value - 1, stride));
  }
  return static_cast<uint64_t>(saturatingMul(extent, item));
}

bool TensorMeta::allHinted() const {
  auto hinted = [](const SymDim& d) { return d.hasHint; };
  return std::all_of(sizes.begin(), sizes.end(), hinted) && std::all_of(strides.begin(), strides.end(), hinted);
}

bool Arg::operator==(const Arg& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case Kind::None: return true;
    case Kind::Node: return node == o.node;
    case Kind::Int: return i == o.i;
    case Kind::Float: return f == o.f || (std::isnan(f) && std::isnan(o.f));
    case Kind::Bool: return b == o.b;
    case Kind::DType: return dtype == o.dtype;
    case Kind::String:
    case Kind::Device:
    case Kind::Layout:
    case Kind::MemoryFormat:
    case Kind::SymExpr:
    case Kind::Raw: return s == o.s;
    case Kind::List:
    case Kind::Tuple:
    case Kind::Dict: return items == o.items && keys == o.keys;
  }
  return false;
}

NodeId Graph::addNode(Node node) {
  const auto id = static_cast<NodeId>(nodes_.size());
  if (node.kind == NodeKind::Output) output_ = id;
  nodes_.push_back(std::move(node));
  return id;
}

void Graph::addSubgraph(std::string_view attrName, std::shared_ptr<Graph> g) {
  subgraphs_.emplace_back(std::string(attrName), std::move(g));
}

void Graph::finalize() {
  const size_t n = nodes_.size();
  inputOffsets_.assign(n + 1, 0);
  inputIds_.clear();
  std::vector<uint32_t> userCount(n, 0);
  std::vector<NodeId> scratch;
  for (NodeId id = 0; id < n; ++id) {
    scratch.clear();
    auto collect = [&](NodeId ref) {
      if (ref < n && std::find(scratch.begin(), scratch.end(), ref) == scratch.end()) scratch.push_back(ref);
    };
    for (const auto& a : nodes_[id].args) forEachNodeRef(a, collect);
    for (const auto& [k, a] : nodes_[id].kwargs) forEachNodeRef(a, collect);
    for (NodeId ref : scratch) ++userCount[ref];
    inputIds_.insert(inputIds_.end(), scratch.begin(), scratch.end());
    inputOffsets_[id + 1] = static_cast<uint32_t>(inputIds_.size());
  }
  userOffsets_.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) userOffsets_[i + 1] = userOffsets_[i] + userCount[i];
  userIds_.assign(userOffsets_[n], kNoNode);
  std::vector<uint32_t> fill(userOffsets_.begin(), userOffsets_.end() - 1);
  for (NodeId id = 0; id < n; ++id)
    for (uint32_t k = inputOffsets_[id]; k < inputOffsets_[id + 1]; ++k) userIds_[fill[inputIds_[k]]++] = id;
  byName_.clear();
  byName_.reserve(n);
  for (NodeId id = 0; id < n; ++id) byName_.emplace(str(nodes_[id].name), id);
  finalized_ = true;
}

NodeId Graph::find(std::string_view name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? kNoNode : it->second;
}

std::string_view nodeKindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::Placeholder: return "placeholder";
    case NodeKind::CallFunction: return "call_function";
    case NodeKind::CallMethod: return "call_method";
    case NodeKind::CallModule: return "call_module";
    case NodeKind::GetAttr: return "get_attr";
    case NodeKind::Output: return "output";
  }
  return "?";
}

std::string_view roleName(Role role) {
  switch (role) {
    case Role::Unknown: return "unknown";
    case Role::Parameter: return "parameter";
    case Role::Buffer: return "buffer";
    case Role::UserInput: return "user_input";
    case Role::Tangent: return "tangent";
    case Role::SymInput: return "sym_input";
    case Role::Forward: return "forward";
    case Role::Backward: return "backward";
    case Role::Output: return "output";
    case Role::Gradient: return "gradient";
  }
  return "unknown";
}

GraphCounts countGraph(const Graph& g) {
  GraphCounts c;
  c.nodes = g.size();
  for (const auto& n : g.nodes()) {
    if (n.synthetic) continue;
    if (n.kind == NodeKind::Placeholder) {
      ++c.placeholders;
      continue;
    }
    if (n.kind == NodeKind::Output) continue;
    ++c.calls;
    if (g.str(n.target).starts_with("torch.ops.")) ++c.torchOps;
  }
  return c;
}

}  // namespace lathe::ir

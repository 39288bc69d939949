#include "analysis/canonical.h"

#include <bit>
#include <string>
#include <unordered_map>

#include "analysis/joint.h"
#include "ir/op_info.h"

namespace lathe::analysis {

namespace {

using ir::Arg;
using ir::NodeId;

// Inductor removes a no-op only when input and output have the same metadata (same_meta).
bool sameShape(const ir::TensorMeta& a, const ir::TensorMeta& b) {
  return a.isTensor() && b.isTensor() && a.dtype == b.dtype && a.sizes == b.sizes &&
         (!a.hasStrides || !b.hasStrides || a.strides == b.strides) && a.device == b.device;
}

const Arg* positional(const ir::Node& node, size_t i) { return i < node.args.size() ? &node.args[i] : nullptr; }

// The input a no-op node forwards, or kNoNode when the node does real work.
NodeId noOpSource(const ir::Graph& graph, NodeId id) {
  const ir::Node& node = graph.node(id);
  if (node.kind != ir::NodeKind::CallFunction || node.args.empty()) return ir::kNoNode;
  const std::string name = ir::canonicalOpName(graph.target(id));
  const Arg* first = positional(node, 0);
  auto source = [&](const Arg* arg) { return arg != nullptr && arg->kind == Arg::Kind::Node ? arg->node : ir::kNoNode; };
  const NodeId src = source(first);
  auto sameAsSource = [&] { return src != ir::kNoNode && sameShape(graph.node(src).meta, node.meta) ? src : ir::kNoNode; };
  if (name == "aten.alias.default" || name == "aten.clone.default" || name == "aten.view.default" || name == "aten.slice.Tensor" || name == "aten.constant_pad_nd.default" ||
      name == "aten.repeat.default" || name == "prims.convert_element_type.default" || name == "prims.device_put.default") {
    return sameAsSource();
  }
  if (name == "aten.pow.Tensor_Scalar") {
    const Arg* exponent = positional(node, 1);
    const bool one = exponent != nullptr && exponent->kind == Arg::Kind::Int && exponent->i == 1;
    return one ? sameAsSource() : ir::kNoNode;
  }
  if (name == "aten.cat.default" && first->kind == Arg::Kind::List && first->items.size() == 1) {
    const NodeId only = source(&first->items[0]);
    return only != ir::kNoNode && sameShape(graph.node(only).meta, node.meta) ? only : ir::kNoNode;
  }
  if (name == "aten.ceil.default" || name == "aten.floor.default" || name == "aten.round.default" ||
      name == "aten.trunc.default") {
    return src != ir::kNoNode && !ir::dtypeIsFloating(graph.node(src).meta.dtype) ? sameAsSource() : ir::kNoNode;
  }
  return ir::kNoNode;
}

template <typename F>
void resolveRefs(Arg& arg, const F& map) {
  if (arg.kind == Arg::Kind::Node) arg.node = map(arg.node);
  for (Arg& item : arg.items) resolveRefs(item, map);
  for (Arg& key : arg.keys) resolveRefs(key, map);
}

void appendKey(std::string& key, const Arg& arg) {
  key += static_cast<char>('A' + static_cast<int>(arg.kind));
  switch (arg.kind) {
    case Arg::Kind::Node: key += std::to_string(arg.node); break;
    case Arg::Kind::Int: key += std::to_string(arg.i); break;
    case Arg::Kind::Float: key += std::to_string(std::bit_cast<uint64_t>(arg.f)); break;
    case Arg::Kind::Bool: key += arg.b ? '1' : '0'; break;
    case Arg::Kind::DType: key += std::to_string(static_cast<int>(arg.dtype)); break;
    default: key += std::to_string(arg.s); break;
  }
  key += '(';
  for (const Arg& item : arg.items) appendKey(key, item);
  key += '|';
  for (const Arg& k : arg.keys) appendKey(key, k);
  key += ')';
}

}  // namespace

CanonicalGraph canonicalize(const ir::Graph& graph, const CanonicalizeOptions& options) {
  const size_t n = graph.size();
  CanonicalGraph result;
  // Each original node stands for itself, or for the node it forwards / duplicates.
  std::vector<NodeId> stand(n);
  for (NodeId id = 0; id < n; ++id) stand[id] = id;
  std::vector<uint8_t> outputItem(n, 0);
  for (NodeId id : outputItems(graph)) {
    if (id != ir::kNoNode) outputItem[id] = 1;
  }
  auto resolve = [&](NodeId id) {
    while (stand[id] != id) id = stand[id];
    return id;
  };
  // Storage of each node (views share their base's): torch never merges a node that shares
  // storage with an output.
  std::vector<NodeId> storage(n);
  std::vector<uint8_t> outputStorage(n, 0);
  for (NodeId id = 0; id < n; ++id) {
    storage[id] = id;
    const auto ins = graph.inputs(id);
    if (graph.node(id).kind == ir::NodeKind::CallFunction && !ins.empty() && graph.node(ins[0]).meta.isTensor() &&
        ir::lookupOp(graph.target(id)).category == ir::OpCategory::View) {
      storage[id] = storage[ins[0]];
    }
  }
  for (NodeId id = 0; id < n; ++id) {
    if (outputItem[id]) outputStorage[storage[id]] = 1;
  }
  std::unordered_map<std::string, NodeId> seen;
  for (NodeId id = 0; id < n; ++id) {
    const ir::Node& node = graph.node(id);
    if (node.kind != ir::NodeKind::CallFunction) continue;
    if (options.removeNoOps) {
      const NodeId src = noOpSource(graph, id);
      // remove_noop_ops keeps a returned node unless it is a view of a value that is neither an
      // input nor returned itself.
      const bool view = src != ir::kNoNode && storage[id] == storage[src];
      const bool keep = outputItem[id] && (!view || graph.node(src).kind == ir::NodeKind::Placeholder || outputItem[src]);
      if (src != ir::kNoNode && !keep) {
        stand[id] = resolve(src);
        ++result.removedNoOps;
        continue;
      }
    }
    if (!options.mergeDuplicates || outputStorage[storage[id]]) continue;
    const ir::OpCategory category = ir::lookupOp(graph.target(id)).category;
    if (category == ir::OpCategory::Random || ir::canonicalOpName(graph.target(id)).starts_with("aten.empty")) continue;
    // Arguments with references resolved to representatives, so chains of duplicates merge.
    std::string key = std::to_string(node.target) + ':';
    for (const Arg& arg : node.args) {
      Arg resolved = arg;
      resolveRefs(resolved, resolve);
      appendKey(key, resolved);
    }
    key += '#';
    for (const auto& [name, arg] : node.kwargs) {
      Arg resolved = arg;
      resolveRefs(resolved, resolve);
      key += std::to_string(name) + '=';
      appendKey(key, resolved);
    }
    const auto [it, inserted] = seen.emplace(std::move(key), id);
    if (!inserted) {
      stand[id] = it->second;
      ++result.mergedDuplicates;
    }
  }

  // Rebuild: same string ids (the pool is copied in order), nodes that stand for themselves only.
  auto canonical = std::make_shared<ir::Graph>();
  for (ir::StrId s = 1; s < graph.strings().size(); ++s) canonical->intern(graph.strings().view(s));
  std::vector<NodeId> newId(n, ir::kNoNode);
  result.toCanonical.assign(n, ir::kNoNode);
  for (NodeId id = 0; id < n; ++id) {
    if (resolve(id) != id) continue;
    ir::Node node = graph.node(id);
    auto toNew = [&](NodeId ref) { return newId[resolve(ref)]; };
    for (Arg& arg : node.args) resolveRefs(arg, toNew);
    for (auto& [name, arg] : node.kwargs) resolveRefs(arg, toNew);
    newId[id] = canonical->addNode(std::move(node));
    result.toOriginal.push_back(id);
  }
  for (NodeId id = 0; id < n; ++id) result.toCanonical[id] = newId[resolve(id)];
  canonical->setForwardParams(graph.forwardParams());
  canonical->finalize();
  result.graph = std::move(canonical);
  return result;
}

}  // namespace lathe::analysis

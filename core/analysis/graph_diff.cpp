#include "analysis/graph_diff.h"

#include <string_view>
#include <unordered_map>

#include "ir/dtype.h"

namespace lathe::analysis {

namespace {

using ir::NodeId;

std::string dimText(const ir::Graph& graph, const ir::SymDim& dim) {
  return dim.symbolic() ? std::string(graph.str(dim.expr)) : std::to_string(dim.value);
}

// What a node was made by: its op and where in the user's code, when the graph records it.
std::string provenanceKey(const ir::Graph& graph, NodeId id) {
  const ir::Node& node = graph.node(id);
  if (node.provenance.file == 0 && node.provenance.modulePath == 0) return {};
  std::string key(graph.target(id));
  key += '\x1f';
  key += graph.str(node.provenance.file);
  key += ':' + std::to_string(node.provenance.line) + '\x1f';
  key += graph.str(node.provenance.function);
  key += '\x1f';
  key += graph.str(node.provenance.modulePath);
  return key;
}

// What differs between a matched pair: the NodeDiff::DiffField bits and their text.
struct Differences {
  uint8_t fields = 0;
  std::vector<std::string> what;
};

Differences differences(const ir::Graph& a, NodeId x, const ir::Graph& b, NodeId y) {
  Differences d;
  const ir::Node& p = a.node(x);
  const ir::Node& q = b.node(y);
  if (p.kind != q.kind) {
    d.fields |= NodeDiff::NodeKindField;
    d.what.push_back("kind " + std::string(ir::nodeKindName(p.kind)) + " -> " + std::string(ir::nodeKindName(q.kind)));
  }
  if (a.target(x) != b.target(y)) {
    d.fields |= NodeDiff::Op;
    d.what.push_back("op " + std::string(a.target(x)) + " -> " + std::string(b.target(y)));
  }
  const std::string valueA = valueText(a, x), valueB = valueText(b, y);
  if (valueA != valueB) {
    d.fields |= NodeDiff::Value;
    d.what.push_back("value " + (valueA.empty() ? "?" : valueA) + " -> " + (valueB.empty() ? "?" : valueB));
  }
  // An input's name is its position: a new name says nothing the alignment has not.
  if (a.name(x) != b.name(y) && p.kind != ir::NodeKind::Placeholder) {
    d.fields |= NodeDiff::Name;
    d.what.insert(d.what.begin(), "name " + std::string(a.name(x)) + " -> " + std::string(b.name(y)));
  }
  return d;
}

// Inputs of B looked at for each input of A: an inserted input or two (symbolic sizes) is skipped,
// a reordered signature is not searched.
constexpr size_t kInputLookahead = 4;

// Whether two inputs can be the same input of two compiles: the same kind of value, dtype and rank,
// and every size equal where both are concrete.
bool valuesFit(const ir::Graph& a, NodeId x, const ir::Graph& b, NodeId y) {
  const ir::TensorMeta& p = a.node(x).meta;
  const ir::TensorMeta& q = b.node(y).meta;
  if (p.kind != q.kind || p.dtype != q.dtype || p.sizes.size() != q.sizes.size()) return false;
  for (size_t i = 0; i < p.sizes.size(); ++i) {
    if (!p.sizes[i].symbolic() && !q.sizes[i].symbolic() && p.sizes[i].value != q.sizes[i].value) return false;
  }
  return true;
}

}  // namespace

std::string valueText(const ir::Graph& graph, NodeId id) {
  const ir::TensorMeta& meta = graph.node(id).meta;
  if (meta.isTensor()) {
    std::string text(ir::dtypeAbbr(meta.dtype));
    text += '[';
    for (size_t i = 0; i < meta.sizes.size(); ++i) text += (i ? ", " : "") + dimText(graph, meta.sizes[i]);
    return text + ']';
  }
  return meta.symExpr != 0 ? std::string(graph.str(meta.symExpr)) : std::string();
}

GraphDiff diffGraphs(const ir::Graph& a, const ir::Graph& b) {
  GraphDiff diff;
  diff.nodesA = a.size();
  diff.nodesB = b.size();
  const ir::OpRegistry& ops = ir::OpRegistry::global();
  for (NodeId id = 0; id < a.size(); ++id)
    if (a.node(id).isCall()) ++diff.callsA[static_cast<size_t>(ops.lookup(a.target(id)).category)];
  for (NodeId id = 0; id < b.size(); ++id)
    if (b.node(id).isCall()) ++diff.callsB[static_cast<size_t>(ops.lookup(b.target(id)).category)];

  std::vector<NodeId> partnerOfA(a.size(), ir::kNoNode);
  std::vector<uint8_t> takenInB(b.size(), 0);
  // Inputs are named by position (primals_3), so one input more (a symbolic size) renames the rest:
  // they are aligned in order instead, each with the next input of B its value fits.
  std::vector<NodeId> inputsB;
  for (NodeId id = 0; id < b.size(); ++id)
    if (b.node(id).kind == ir::NodeKind::Placeholder) inputsB.push_back(id);
  size_t nextInput = 0;
  for (NodeId id = 0; id < a.size(); ++id) {
    if (a.node(id).kind != ir::NodeKind::Placeholder) continue;
    for (size_t k = nextInput; k < inputsB.size() && k < nextInput + kInputLookahead; ++k) {
      if (!valuesFit(a, id, b, inputsB[k])) continue;
      partnerOfA[id] = inputsB[k];
      takenInB[inputsB[k]] = 1;
      nextInput = k + 1;
      ++(a.name(id) == b.name(inputsB[k]) ? diff.matchedByName : diff.matchedByPosition);
      break;
    }
  }
  std::unordered_map<std::string_view, NodeId> byName;
  for (NodeId id = 0; id < b.size(); ++id)
    if (b.node(id).kind != ir::NodeKind::Placeholder) byName.emplace(b.name(id), id);
  for (NodeId id = 0; id < a.size(); ++id) {
    if (a.node(id).kind == ir::NodeKind::Placeholder) continue;
    const auto it = byName.find(a.name(id));
    // The same name for another op is another node (a recompile numbers its nodes afresh).
    if (it == byName.end() || a.target(id) != b.target(it->second) || a.node(id).kind != b.node(it->second).kind) continue;
    partnerOfA[id] = it->second;
    takenInB[it->second] = 1;
    ++diff.matchedByName;
  }
  // Among the rest, the k-th node of a provenance in A pairs with the k-th in B.
  std::unordered_map<std::string, std::vector<NodeId>> unmatchedB;
  for (NodeId id = 0; id < b.size(); ++id) {
    if (takenInB[id]) continue;
    std::string key = provenanceKey(b, id);
    if (!key.empty()) unmatchedB[std::move(key)].push_back(id);
  }
  std::unordered_map<std::string, size_t> used;
  std::vector<uint8_t> byProvenance(a.size(), 0);
  for (NodeId id = 0; id < a.size(); ++id) {
    if (partnerOfA[id] != ir::kNoNode) continue;
    const std::string key = provenanceKey(a, id);
    if (key.empty()) continue;
    const auto it = unmatchedB.find(key);
    if (it == unmatchedB.end()) continue;
    size_t& next = used[key];
    if (next >= it->second.size()) continue;
    partnerOfA[id] = it->second[next++];
    takenInB[partnerOfA[id]] = 1;
    byProvenance[id] = 1;
    ++diff.matchedByProvenance;
  }

  for (NodeId id = 0; id < a.size(); ++id) {
    if (partnerOfA[id] == ir::kNoNode) continue;
    Differences found = differences(a, id, b, partnerOfA[id]);
    const bool renamedOnly = byProvenance[id] && found.what.size() == 1;
    if (found.what.empty()) continue;
    NodeDiff change{NodeDiff::Kind::Changed, id, partnerOfA[id], byProvenance[id] != 0, found.fields, std::move(found.what)};
    if (renamedOnly) change.what.front() += " (same op, value and source line)";
    diff.nodes.push_back(std::move(change));
    ++diff.changed;
  }
  for (NodeId id = 0; id < a.size(); ++id) {
    if (partnerOfA[id] != ir::kNoNode) continue;
    diff.nodes.push_back({NodeDiff::Kind::OnlyInA, id, ir::kNoNode, false, 0, {}});
    ++diff.onlyInA;
  }
  for (NodeId id = 0; id < b.size(); ++id) {
    if (takenInB[id]) continue;
    diff.nodes.push_back({NodeDiff::Kind::OnlyInB, ir::kNoNode, id, false, 0, {}});
    ++diff.onlyInB;
  }
  return diff;
}

}  // namespace lathe::analysis

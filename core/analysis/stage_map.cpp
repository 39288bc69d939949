#include "analysis/stage_map.h"

#include <algorithm>

namespace lathe::analysis {

namespace {

// Graphs of one family share node names; Other graphs are each a family of their own.
constexpr int kDynamoFamily = 0;
constexpr int kAotFamily = 1;
constexpr int kExportedFamily = 2;
constexpr int kFirstOtherFamily = 3;

int familyOf(GraphStage stage, size_t graph) {
  switch (stage) {
    case GraphStage::Dynamo:
    case GraphStage::PreGrad: return kDynamoFamily;
    case GraphStage::Joint:
    case GraphStage::JointPass:
    case GraphStage::Forward:
    case GraphStage::Backward:
    case GraphStage::Inference:
    case GraphStage::PostGrad: return kAotFamily;
    case GraphStage::Exported: return kExportedFamily;
    case GraphStage::Other: break;
  }
  return kFirstOtherFamily + static_cast<int>(graph);
}

uint64_t groupKey(uint32_t provenance, uint32_t value) {
  return (uint64_t{provenance} << 32) | value;
}

bool isTangent(const ir::Graph& graph, ir::NodeId id) {
  return graph.node(id).role == ir::Role::Tangent || graph.name(id).starts_with("tangents_");
}

bool sameDims(const ir::Graph& ga, const std::vector<ir::SymDim>& a, const ir::Graph& gb,
              const std::vector<ir::SymDim>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].symbolic() != b[i].symbolic()) return false;
    if (a[i].symbolic() ? ga.str(a[i].expr) != gb.str(b[i].expr) : a[i].value != b[i].value) return false;
  }
  return true;
}

// Whether two nodes of the same name hold the same value: same kind of value, and for tensors the
// same dtype and sizes (a pass that reuses a name for another value changes them, as a rule).
bool sameValue(const ir::Graph& ga, ir::NodeId a, const ir::Graph& gb, ir::NodeId b) {
  const ir::TensorMeta& ma = ga.node(a).meta;
  const ir::TensorMeta& mb = gb.node(b).meta;
  if (ma.kind != mb.kind) return false;
  if (!ma.isTensor()) return true;
  return ma.dtype == mb.dtype && sameDims(ga, ma.sizes, gb, mb.sizes);
}

}  // namespace

GraphStage graphStageOf(std::string_view kind) {
  if (kind == "dynamo_output_graph") return GraphStage::Dynamo;
  if (kind.find("pre_grad") != std::string_view::npos) return GraphStage::PreGrad;
  if (kind == "aot_joint_graph") return GraphStage::Joint;
  if (kind == "before_joint_graph" || kind == "after_joint_graph") return GraphStage::JointPass;
  if (kind == "aot_forward_graph") return GraphStage::Forward;
  if (kind == "aot_backward_graph") return GraphStage::Backward;
  if (kind == "aot_inference_graph") return GraphStage::Inference;
  if (kind.find("post_grad") != std::string_view::npos) return GraphStage::PostGrad;
  if (kind == "exported_program") return GraphStage::Exported;
  return GraphStage::Other;
}

StageMap::StageMap(const std::vector<io::GraphListing>& listings, std::string_view compileId, int32_t rank) {
  for (const io::GraphListing& listing : listings) {
    if (listing.compileId == compileId && listing.rank == rank && listing.parent.empty()) graphs_.push_back(listing);
  }
  info_.resize(graphs_.size());
  for (size_t graph = 0; graph < graphs_.size(); ++graph) index(graph);
}

void StageMap::index(size_t graph) {
  GraphInfo& info = info_[graph];
  info.stage = graphStageOf(graphs_[graph].kind);
  info.family = familyOf(info.stage, graph);
  if (!graphs_[graph].graph) return;
  const ir::Graph& g = *graphs_[graph].graph;
  info.keys.resize(g.size());
  std::string key;
  uint32_t lastProvenance = 0;
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    const ir::Node& node = g.node(id);
    NodeKeys& keys = info.keys[id];
    if (node.kind == ir::NodeKind::Placeholder) {
      if (!isTangent(g, id)) {
        keys.inputPosition = static_cast<uint32_t>(info.inputs.size());
        info.inputs.push_back(id);
      }
      continue;
    }
    const ir::Provenance& where = node.provenance;
    if (where.file == 0 && where.code == 0) continue;
    key.assign(g.str(where.file));
    key += '\n';
    key += std::to_string(where.line);
    key += '\n';
    key += g.str(where.code);
    keys.provenance = provenanceIds_.try_emplace(key, static_cast<uint32_t>(provenanceIds_.size() + 1)).first->second;
    auto& runs = info.runs[keys.provenance];
    if (keys.provenance != lastProvenance || runs.empty()) runs.emplace_back();
    lastProvenance = keys.provenance;
    keys.run = static_cast<uint32_t>(runs.size() - 1);
    runs.back().push_back(id);
    const ir::OpInfo& op = ir::lookupOp(g.target(id));
    // Unknown ops keep their target as written, so that two unknown ops match only when equal.
    const std::string opName = op.name.empty() ? std::string(g.target(id)) : op.name;
    keys.op = opIds_.try_emplace(opName, static_cast<uint32_t>(opIds_.size() + 1)).first->second;
    keys.category = op.category;
    auto& sameOp = info.byOp[groupKey(keys.provenance, keys.op)];
    keys.opOrdinal = static_cast<uint32_t>(sameOp.size());
    sameOp.push_back(id);
    if (keys.category != ir::OpCategory::Unknown) {
      auto& sameCategory = info.byCategory[groupKey(keys.provenance, static_cast<uint32_t>(keys.category))];
      keys.categoryOrdinal = static_cast<uint32_t>(sameCategory.size());
      sameCategory.push_back(id);
    }
  }
}

std::optional<size_t> StageMap::indexOf(std::string_view graphId) const {
  for (size_t graph = 0; graph < graphs_.size(); ++graph) {
    if (graphs_[graph].id == graphId) return graph;
  }
  return std::nullopt;
}

std::vector<StageNodeRef> StageMap::byName(size_t from, ir::NodeId node, size_t to) const {
  const ir::Graph& source = *graphs_[from].graph;
  const ir::Graph& target = *graphs_[to].graph;
  const ir::NodeId match = target.find(source.name(node));
  if (match == ir::kNoNode || !sameValue(source, node, target, match)) return {};
  return {{to, match, StageMatchBy::Name}};
}

std::vector<StageNodeRef> StageMap::byProvenance(size_t from, ir::NodeId node, size_t to) const {
  const NodeKeys& keys = info_[from].keys[node];
  if (keys.provenance == 0) return {};
  auto pick = [&](const std::unordered_map<uint64_t, std::vector<ir::NodeId>>& groups, uint64_t groupId,
                  uint32_t ordinal) -> std::vector<StageNodeRef> {
    const auto found = groups.find(groupId);
    if (found == groups.end()) return {};
    const std::vector<ir::NodeId>& candidates = found->second;
    if (ordinal < candidates.size()) return {{to, candidates[ordinal], StageMatchBy::Provenance}};
    std::vector<StageNodeRef> all;
    for (ir::NodeId candidate : candidates) all.push_back({to, candidate, StageMatchBy::Provenance});
    return all;
  };
  std::vector<StageNodeRef> matches = pick(info_[to].byOp, groupKey(keys.provenance, keys.op), keys.opOrdinal);
  if (matches.empty() && keys.category != ir::OpCategory::Unknown) {
    matches = pick(info_[to].byCategory, groupKey(keys.provenance, static_cast<uint32_t>(keys.category)),
                   keys.categoryOrdinal);
  }
  if (matches.empty()) {
    const auto found = info_[to].runs.find(keys.provenance);
    if (found != info_[to].runs.end() && keys.run < found->second.size()) {
      for (ir::NodeId candidate : found->second[keys.run]) matches.push_back({to, candidate, StageMatchBy::Provenance});
    }
  }
  return matches;
}

std::vector<StageNodeRef> StageMap::byInputPosition(size_t from, ir::NodeId node, size_t to) const {
  const uint32_t position = info_[from].keys[node].inputPosition;
  const std::vector<ir::NodeId>& inputs = info_[to].inputs;
  // Positions line up only when both graphs take the same inputs (not a backward graph's saved values).
  if (position == UINT32_MAX || inputs.size() != info_[from].inputs.size()) return {};
  const ir::NodeId match = inputs[position];
  const ir::TensorMeta& a = graphs_[from].graph->node(node).meta;
  const ir::TensorMeta& b = graphs_[to].graph->node(match).meta;
  if (a.kind != b.kind || a.dtype != b.dtype || a.sizes.size() != b.sizes.size()) return {};
  return {{to, match, StageMatchBy::InputPosition}};
}

std::vector<StageNodeRef> StageMap::counterparts(size_t from, ir::NodeId node, size_t to) const {
  if (from == to || from >= graphs_.size() || to >= graphs_.size() || !graphs_[from].graph || !graphs_[to].graph ||
      node >= graphs_[from].graph->size()) {
    return {};
  }
  if (info_[from].family == info_[to].family) {
    if (std::vector<StageNodeRef> named = byName(from, node, to); !named.empty()) return named;
  }
  if (graphs_[from].graph->node(node).kind == ir::NodeKind::Placeholder) {
    return info_[from].family == info_[to].family ? std::vector<StageNodeRef>{} : byInputPosition(from, node, to);
  }
  return byProvenance(from, node, to);
}

std::vector<StageNodeRef> StageMap::counterparts(size_t from, ir::NodeId node) const {
  std::vector<StageNodeRef> all;
  for (size_t to = 0; to < graphs_.size(); ++to) {
    std::vector<StageNodeRef> matches = counterparts(from, node, to);
    all.insert(all.end(), matches.begin(), matches.end());
  }
  return all;
}

}  // namespace lathe::analysis

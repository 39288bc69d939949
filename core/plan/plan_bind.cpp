#include "plan/plan_bind.h"

#include <algorithm>
#include <string>

#include "util/diagnostics.h"

namespace lathe::plan {

namespace {

[[noreturn]] void refuse(std::string_view planName, const std::string& what) {
  throw Error(ErrorCode::BadInput, std::string(planName) + ": " + what);
}

}  // namespace

BoundPlan bind(const PlanBundle& bundle, const ir::Graph& graph, std::string_view planName) {
  const std::string fingerprint = graphFingerprint(graph);
  if (fingerprint != bundle.fingerprint) {
    refuse(planName, "graph " + bundle.graphId + " is not the graph the plan was made for (fingerprint " + fingerprint +
                         " instead of " + bundle.fingerprint + ")");
  }
  BoundPlan bound;
  bound.graph = &graph;
  bound.nodeIds.reserve(bundle.nodeNames.size());
  std::vector<std::string> missing;
  for (const std::string& name : bundle.nodeNames) {
    const ir::NodeId id = graph.find(name);
    if (id == ir::kNoNode) missing.push_back(name);
    bound.nodeIds.push_back(id);
  }
  if (!missing.empty()) {
    constexpr size_t kShown = 5;
    std::string names;
    for (size_t i = 0; i < missing.size() && i < kShown; ++i) names += (i ? ", " : "") + missing[i];
    refuse(planName, std::to_string(missing.size()) + " of the plan's nodes are not in graph " + bundle.graphId + ": " +
                         names + (missing.size() > kShown ? ", ..." : ""));
  }
  // Equal fingerprints print the same FX text, so the graph has the bundle's nodes and no others;
  // still, the mapping below holds for any graph that has them.
  const PlanState& from = bundle.state;
  PlanState& to = bound.state;
  to = PlanState::empty(graph.size());
  to.pieceCount = from.pieceCount;
  for (size_t i = 0; i < bound.nodeIds.size(); ++i) {
    const ir::NodeId id = bound.nodeIds[i];
    to.piece[id] = from.piece[i];
    to.boundary[id] = from.boundary[i];
    to.unit[id] = from.unit[i];
    to.group[id] = from.group[i];
  }
  auto mapped = [&](std::vector<ir::NodeId> ids, bool sorted) {
    for (ir::NodeId& id : ids) id = bound.nodeIds[id];
    if (sorted) std::sort(ids.begin(), ids.end());
    return ids;
  };
  to.units = from.units;
  for (LayerUnit& unit : to.units) unit.weights = mapped(std::move(unit.weights), false);
  to.groups = from.groups;
  for (FusionGroup& group : to.groups) {
    group.nodes = mapped(std::move(group.nodes), true);
    group.anchor = bound.nodeIds[group.anchor];
  }
  if (from.recompute) {
    RecomputeDecision decision = *from.recompute;
    // Saved values keep their reasons beside them: map in place, then order both by program order.
    std::vector<std::pair<ir::NodeId, Message>> saved;
    for (size_t i = 0; i < decision.saved.size(); ++i) saved.emplace_back(bound.nodeIds[decision.saved[i]], decision.savedReasons[i]);
    std::sort(saved.begin(), saved.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    decision.saved.clear();
    decision.savedReasons.clear();
    for (auto& [id, reason] : saved) {
      decision.saved.push_back(id);
      decision.savedReasons.push_back(std::move(reason));
    }
    decision.recomputed = mapped(std::move(decision.recomputed), true);
    to.recompute = std::move(decision);
  }
  to.offload = from.offload;  // indexed by unit, not by node
  if (from.activationOffload) {
    ActivationOffloadDecision decision = *from.activationOffload;
    for (OffloadedActivation& t : decision.tensors) {
      for (ir::NodeId* id : {&t.node, &t.waitAfter, &t.reloadAfter, &t.firstUse}) {
        if (*id != ir::kNoNode) *id = bound.nodeIds[*id];
      }
    }
    to.activationOffload = std::move(decision);
  }
  return bound;
}

BoundPlan bind(const PlanBundle& bundle, const io::Artifact& artifact, std::string_view planName) {
  const std::vector<io::GraphListing> graphs = artifact.graphs();
  const io::GraphListing* listing = io::findGraph(graphs, bundle.graphId);
  if (!listing || !listing->graph) {
    refuse(planName, artifact.path.string() + " holds no graph " + bundle.graphId + ", the graph of the plan");
  }
  // The listing's shared_ptr aliases a graph the artifact owns, which outlives this call.
  return bind(bundle, *listing->graph, planName);
}

std::string captureOf(const PlanBundle& bundle, const std::filesystem::path& planPath) {
  namespace fs = std::filesystem;
  const fs::path artifact(bundle.artifact);
  std::error_code ec;
  if (!artifact.empty()) {
    if (artifact.is_absolute() || fs::exists(artifact, ec)) return bundle.artifact;
    const fs::path besidePlan = planPath.parent_path() / artifact;
    if (fs::exists(besidePlan, ec)) return besidePlan.string();
  }
  refuse(planPath.string(), "the plan's capture " + (artifact.empty() ? std::string("(none named)") : bundle.artifact) +
                                " is not here nor beside the plan");
}

}  // namespace lathe::plan

#include "views/stage_links.h"

#include "views/formatting.h"

namespace lathe::views {

void StageLinks::setArtifact(std::shared_ptr<const io::Artifact> artifact) {
  artifact_ = std::move(artifact);
  listings_ = artifact_ ? artifact_->graphs() : std::vector<io::GraphListing>{};
  maps_.clear();
}

std::pair<const analysis::StageMap*, size_t> StageLinks::mapOf(const QString& graphId) {
  const std::string id = graphId.toStdString();
  const io::GraphListing* listing = io::findGraph(listings_, id);
  if (!listing || !listing->parent.empty()) return {nullptr, 0};
  auto& map = maps_[{listing->compileId, listing->rank}];
  if (!map) map = std::make_unique<analysis::StageMap>(listings_, listing->compileId, listing->rank);
  const std::optional<size_t> index = map->indexOf(id);
  return index ? std::pair{map.get(), *index} : std::pair<const analysis::StageMap*, size_t>{nullptr, 0};
}

std::vector<StageLink> StageLinks::linksOf(const QString& graphId, ir::NodeId node) {
  const auto [map, from] = mapOf(graphId);
  std::vector<StageLink> links;
  if (!map) return links;
  for (const analysis::StageNodeRef& match : map->counterparts(from, node)) {
    const io::GraphListing& listing = map->graphs()[match.graph];
    links.push_back(
        {toQString(listing.id), stageName(listing), match.node, toQString(listing.graph->name(match.node))});
  }
  return links;
}

ir::NodeId StageLinks::follow(const QString& fromGraphId, ir::NodeId node, const QString& toGraphId) {
  if (node == ir::kNoNode || fromGraphId == toGraphId) return ir::kNoNode;
  const auto [map, from] = mapOf(fromGraphId);
  if (!map) return ir::kNoNode;
  const std::optional<size_t> to = map->indexOf(toGraphId.toStdString());
  if (!to) return ir::kNoNode;
  const std::vector<analysis::StageNodeRef> matches = map->counterparts(from, node, *to);
  return matches.empty() ? ir::kNoNode : matches.front().node;
}

QString StageLinks::stageName(const io::GraphListing& listing) {
  const std::string& kind = listing.kind;
  QString name;
  if (kind == "dynamo_output_graph")
    name = tr("Dynamo graph");
  else if (kind == "before_pre_grad_graph")
    name = tr("pre-grad graph (before passes)");
  else if (kind == "after_pre_grad_graph")
    name = tr("pre-grad graph");
  else if (kind == "aot_joint_graph")
    name = tr("joint graph");
  else if (kind == "before_joint_graph")
    name = tr("joint-pass graph (before passes)");
  else if (kind == "after_joint_graph")
    name = tr("joint-pass graph");
  else if (kind == "aot_forward_graph")
    name = tr("forward graph");
  else if (kind == "aot_backward_graph")
    name = tr("backward graph");
  else if (kind == "aot_inference_graph")
    name = tr("inference graph");
  else if (kind == "before_post_grad_graph")
    name = tr("post-grad graph (before passes)");
  else if (kind == "inductor_post_grad_graph")
    name = tr("post-grad graph");
  else
    name = toQString(kind);
  // Kinds that repeat within a compile (the backward's post-grad graphs) carry "#2" in their id.
  if (const size_t hash = listing.id.rfind('#'); hash != std::string::npos && hash > listing.id.rfind(':'))
    name += QLatin1Char(' ') + toQString(std::string_view(listing.id).substr(hash));
  return name;
}

}  // namespace lathe::views

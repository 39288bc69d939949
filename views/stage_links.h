// One selection across the graph stages of a compile: for a node of one graph, the nodes that
// stand for it in the compile's other stages (analysis::StageMap), with names people read
// ("forward graph", "post-grad graph #2"). The map of a compile is built the first time it is asked
// for (about 1.5 ms for a 4-layer Llama-3-8B training compile) and kept until the artifact changes.
#pragma once

#include <QCoreApplication>
#include <QString>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "analysis/stage_map.h"
#include "io/artifact.h"

namespace lathe::views {

struct StageLink {
  QString graphId;
  QString stageName;  // "forward graph", "post-grad graph #2"
  ir::NodeId node = ir::kNoNode;
  QString nodeName;
};

class StageLinks {
  Q_DECLARE_TR_FUNCTIONS(lathe::views::StageLinks)

 public:
  void setArtifact(std::shared_ptr<const io::Artifact> artifact);

  // Counterparts of `node` of graph `graphId` in every other stage of its compile, graph by graph.
  [[nodiscard]] std::vector<StageLink> linksOf(const QString& graphId, ir::NodeId node);
  // The first node of graph `toGraphId` that stands for `node` of `fromGraphId`; kNoNode when the
  // graphs are of different compiles or nothing stands for it.
  [[nodiscard]] ir::NodeId follow(const QString& fromGraphId, ir::NodeId node, const QString& toGraphId);

  // "joint graph", "forward graph", ... for a TORCH_TRACE graph kind; the graph id's "#2" appended.
  [[nodiscard]] static QString stageName(const io::GraphListing& listing);

 private:
  // The map of the compile holding `graphId` and the graph's index in it; null when unknown.
  std::pair<const analysis::StageMap*, size_t> mapOf(const QString& graphId);

  std::shared_ptr<const io::Artifact> artifact_;
  std::vector<io::GraphListing> listings_;
  std::map<std::pair<std::string, int32_t>, std::unique_ptr<analysis::StageMap>> maps_;  // by compile, rank
};

}  // namespace lathe::views

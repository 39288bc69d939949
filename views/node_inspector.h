// Everything about one node: value, role, op info (category, fusibility, MagiCompiler flags), the
// roofline cost on the plan's target (and, with a profile applied, what was measured beside the
// model's estimate), arguments with links to their nodes, users, provenance.
#pragma once

#include <QWidget>
#include <memory>

#include "hw/hw_profile.h"
#include "ir/graph.h"
#include "views/node_times.h"
#include "views/stage_links.h"

class QTextBrowser;

namespace lathe::views {

class NodeInspector : public QWidget {
  Q_OBJECT

 public:
  explicit NodeInspector(QWidget* parent = nullptr);

  // alsoIn: the node's counterparts in the other stages of its compile, listed as links.
  void setNode(std::shared_ptr<const ir::Graph> graph, ir::NodeId node, std::vector<StageLink> alsoIn = {});
  // The target the cost section prices the node on (passes::kDefaultHardware until set).
  void setHardware(hw::HwProfile profile);
  // The plan's node times: the node's share of its fused kernel, and what a profile measured. Null,
  // or another graph's: the roofline alone.
  void setNodeTimes(std::shared_ptr<const NodeTimes> times);
  void clear();
  [[nodiscard]] ir::NodeId node() const { return node_; }
  // The shown text, for tests and accessibility.
  [[nodiscard]] QString plainText() const;

 signals:
  // A link to another node of the same graph (an input or a user) was clicked.
  void nodeActivated(lathe::ir::NodeId node);
  // An "Also in" link was clicked: the node of another stage's graph.
  void stageNodeActivated(const QString& graphId, lathe::ir::NodeId node);

 private:
  [[nodiscard]] QString argHtml(const ir::Arg& arg) const;
  [[nodiscard]] QString nodeLink(ir::NodeId node) const;
  [[nodiscard]] QString costHtml() const;
  [[nodiscard]] QString measuredHtml() const;
  // times_ when they are of the graph on show, else null.
  [[nodiscard]] const NodeTimes* shownTimes() const;
  [[nodiscard]] QString alsoInHtml() const;

  QTextBrowser* browser_;
  std::shared_ptr<const ir::Graph> graph_;
  ir::NodeId node_ = ir::kNoNode;
  std::vector<StageLink> alsoIn_;
  hw::HwProfile profile_;
  std::shared_ptr<const NodeTimes> times_;
};

}  // namespace lathe::views

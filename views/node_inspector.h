// Everything about one node: value, role, op info (category, fusibility, MagiCompiler flags), the
// roofline cost on the H200 profile, arguments with links to their nodes, users, provenance.
#pragma once

#include <QWidget>
#include <memory>

#include "hw/hw_profile.h"
#include "ir/graph.h"

class QTextBrowser;

namespace lathe::views {

class NodeInspector : public QWidget {
  Q_OBJECT

 public:
  explicit NodeInspector(QWidget* parent = nullptr);

  void setNode(std::shared_ptr<const ir::Graph> graph, ir::NodeId node);
  void clear();
  [[nodiscard]] ir::NodeId node() const { return node_; }
  // The shown text, for tests and accessibility.
  [[nodiscard]] QString plainText() const;

 signals:
  // A link to another node of the same graph (an input or a user) was clicked.
  void nodeActivated(lathe::ir::NodeId node);

 private:
  [[nodiscard]] QString argHtml(const ir::Arg& arg) const;
  [[nodiscard]] QString nodeLink(ir::NodeId node) const;
  [[nodiscard]] QString costHtml() const;

  QTextBrowser* browser_;
  std::shared_ptr<const ir::Graph> graph_;
  ir::NodeId node_ = ir::kNoNode;
  hw::HwProfile profile_;
};

}  // namespace lathe::views

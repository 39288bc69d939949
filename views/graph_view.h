// The graph drawn from its Graphviz layout: boxes coloured by op category (with a legend), name
// and target on each box, edges as splines, module clusters. Wheel zooms, drag pans, "Fit"
// fits; zoomed far out the boxes lose their text. Layout runs on a worker thread with an overlay
// meanwhile, and is cached per graph id.
#pragma once

#include <QFutureWatcher>
#include <QGraphicsView>
#include <QHash>
#include <memory>
#include <unordered_map>

#include "ir/graph.h"
#include "views/graph_layout.h"

class QGraphicsItem;
class QLabel;
class QToolButton;

namespace lathe::views {

class GraphView : public QGraphicsView {
  Q_OBJECT

 public:
  explicit GraphView(QWidget* parent = nullptr);
  ~GraphView() override;

  // Shows a graph: at once when its layout is cached, else once the worker has laid it out.
  void setGraph(std::shared_ptr<const ir::Graph> graph, QString graphId);
  void clear();
  [[nodiscard]] bool isLayingOut() const;
  [[nodiscard]] ir::NodeId selectedNode() const { return selected_; }
  // The layout on show, null while laying out or with no graph.
  [[nodiscard]] const GraphLayout* layout() const { return shown_.get(); }
  // Scene position of a node's box centre; null point when the node has no box.
  [[nodiscard]] QPointF nodeCentre(ir::NodeId node) const;

 public slots:
  // Selects a node and centres it; kNoNode clears the selection. Emits nothing.
  void selectNode(lathe::ir::NodeId node);
  // Whole graph when it is readable that way, else the full width from the top.
  void fitToWindow();

 signals:
  // The user selected a node in the view.
  void nodeSelected(lathe::ir::NodeId node);
  // A layout is on show (after setGraph, once the worker finished or from the cache).
  void layoutShown();
  // The layout failed; the overlay says why.
  void layoutFailed(const QString& message);

 protected:
  void wheelEvent(QWheelEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  struct LayoutResult {
    std::shared_ptr<const GraphLayout> layout;
    QString error;
  };

  void onLayoutFinished();
  void buildScene();
  void placeOverlays();
  void updateLegend();
  void onSceneSelectionChanged();

  std::shared_ptr<const ir::Graph> graph_;
  QString graphId_;
  // Cached layouts by graph id, with the graph they were made for (ids repeat across artifacts).
  struct CachedLayout {
    std::weak_ptr<const ir::Graph> graph;
    std::shared_ptr<const GraphLayout> layout;
  };
  QHash<QString, CachedLayout> cache_;
  std::shared_ptr<const GraphLayout> shown_;
  QFutureWatcher<LayoutResult>* watcher_;
  // The graph the running layout is for: a result for any other one is cached, not shown.
  std::shared_ptr<const ir::Graph> layingOut_;
  QString layingOutId_;
  std::unordered_map<ir::NodeId, QGraphicsItem*> itemsByNode_;
  ir::NodeId selected_ = ir::kNoNode;
  bool selectingProgrammatically_ = false;
  QLabel* overlay_;
  QLabel* legend_;
  QToolButton* fitButton_;
};

}  // namespace lathe::views

// The graph drawn by module cluster (graph_clusters.h): expanded clusters as titled frames,
// collapsed ones and folded repeated layers ("model.layers × 4") as boxes; double-click expands or
// collapses. Nodes show name and target, coloured by an overlay chosen in the toolbar (op category,
// role, fusion group, saved / recomputed, offload unit, size, estimated time) with a matching
// legend. The toolbar also searches (name, target, module path) and jumps to matches. Wheel zooms,
// drag pans; zoomed far out boxes lose their text; a minimap in the corner shows where the view is
// on a graph larger than the window and moves it. Layout runs on a worker thread, level by level,
// cached per expanded cluster and per graph id.
#pragma once

#include <QGraphicsView>
#include <QHash>
#include <memory>
#include <unordered_map>
#include <vector>

#include "io/artifact.h"
#include "ir/graph.h"
#include "plan/plan_state.h"
#include "views/job_tracker.h"
#include "views/logic/graph_clusters.h"

class QComboBox;
class QGraphicsItem;
class QLabel;
class QLineEdit;
class QToolButton;

namespace lathe::views {

class GraphMinimap;
class PlanSession;

class GraphView : public QGraphicsView {
  Q_OBJECT

 public:
  enum class Overlay { Category, Role, FusionGroup, Recompute, OffloadUnit, Size, Time };

  explicit GraphView(QWidget* parent = nullptr);

  // Shows the target's graph: at once when its layout is cached, else once the worker has laid it
  // out. Its inputs and layer units give the clusters; its node costs the time overlay, on the plan
  // session's target while the session plans the same graph.
  void setGraph(std::shared_ptr<const passes::PlanTarget> target);
  void clear();
  // The plan whose current step the fusion, recompute and offload overlays show.
  void setPlanSession(PlanSession* session);
  [[nodiscard]] bool isLayingOut() const;
  [[nodiscard]] ir::NodeId selectedNode() const { return selected_; }
  // The scene on show, null while the first layout runs or with no graph.
  [[nodiscard]] const SceneLayout* layout() const { return shown_.get(); }
  [[nodiscard]] const ClusterTree* clusters() const { return tree_.get(); }
  [[nodiscard]] const ExpansionState& expansion() const { return state_; }
  // Scene position of a node's box centre; null point when the node is not drawn.
  [[nodiscard]] QPointF nodeCentre(ir::NodeId node) const;
  // The fill of a drawn node under the current overlay; invalid when the node is not drawn.
  [[nodiscard]] QColor nodeFill(ir::NodeId node) const;
  [[nodiscard]] Overlay overlay() const { return overlay_; }
  // Legend rows on show: (colour, label).
  [[nodiscard]] const std::vector<std::pair<QColor, QString>>& legendEntries() const { return legendEntries_; }
  // Search matches (program order) and the current one (-1 before the first jump).
  [[nodiscard]] const std::vector<ir::NodeId>& searchMatches() const { return matches_; }
  [[nodiscard]] int currentMatch() const { return currentMatch_; }
  [[nodiscard]] QString searchStatus() const;
  // The whole graph in small in the bottom-left corner, shown while part of it is out of view.
  [[nodiscard]] GraphMinimap* minimap() const { return minimap_; }

  // Writes the laid out graph (every drawn box, with the legend) as SVG or PNG, by the suffix.
  // False with `error` set when the file cannot be written.
  bool exportView(const QString& path, QString* error = nullptr);

 public slots:
  // Selects a node and centres it; kNoNode clears the selection. A node inside a collapsed cluster
  // or fold highlights that box. Emits nothing.
  void selectNode(lathe::ir::NodeId node);
  // Expands what hides the node, then selects and centres it (once laid out). Emits nodeSelected.
  void revealAndSelect(lathe::ir::NodeId node);
  // Toggles a cluster's inside / a fold's members, re-laying out only the levels around it.
  void toggleCluster(int cluster);
  void toggleFold(int fold);
  // Back to the default: folds folded, clusters expanded while the drawing stays small.
  void resetExpansion();
  void setOverlay(lathe::views::GraphView::Overlay overlay);
  void setSearchText(const QString& text);
  void findNext();
  void findPrevious();
  void focusSearch();
  // Whole graph when it is readable that way, else the full width from the top.
  void fitToWindow();

 signals:
  // The user selected a node in the view.
  void nodeSelected(lathe::ir::NodeId node);
  // A layout is on show (after setGraph, an expand or collapse, once the worker finished or from the cache).
  void layoutShown();
  // The layout failed; the overlay says why.
  void layoutFailed(const QString& message);
  void searchStatusChanged(const QString& status);

 protected:
  void wheelEvent(QWheelEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;

 public:
  // What the layout worker is given and gives back (graph_view.cpp).
  struct LayoutJob;
  struct LayoutResult;

 private:
  // Everything known about one graph: kept per graph id so that coming back is instant.
  struct GraphState {
    std::weak_ptr<const ir::Graph> graph;
    std::shared_ptr<const ClusterTree> tree;
    ExpansionState state;
    LevelCache levels;
    std::shared_ptr<const SceneLayout> scene;
  };

  void startLayout();
  // `graph`: the one the job laid out.
  void onLayoutFinished(const std::shared_ptr<const ir::Graph>& graph, JobOutcome<LayoutResult> outcome);
  void relayoutAfter(const std::vector<int>& changedClusters);
  void buildScene();
  void applyOverlay();
  void updateLegend();
  void placeOverlays();
  void onSceneSelectionChanged();
  void showSelection(bool centre);
  void jumpToMatch(int index);
  // Centres on a cluster's frame or box (or its fold's); false when it is not drawn.
  bool showCluster(int cluster);
  void rememberState();
  [[nodiscard]] const plan::PlanState* planState() const;
  [[nodiscard]] QColor overlayFill(ir::NodeId node) const;

  std::shared_ptr<const passes::PlanTarget> target_;
  std::shared_ptr<const ir::Graph> graph_;
  QString graphId_;
  std::shared_ptr<const ClusterTree> tree_;
  ExpansionState state_;
  LevelCache levels_;
  std::shared_ptr<const SceneLayout> shown_;
  QHash<QString, GraphState> cache_;
  // One layout at a time (Graphviz runs one anyway): a change meanwhile waits for it, and what it
  // made for another graph is cached.
  JobTracker layouts_;
  // Bumped by every change of graph or expansion: a result made for an older one is not shown.
  uint64_t generation_ = 0;
  bool relayoutWanted_ = false;
  ir::NodeId selected_ = ir::kNoNode;
  // Selected once the running layout is on show (a search jump into a folded layer).
  ir::NodeId selectAfterLayout_ = ir::kNoNode;
  // Centred once the running layout is on show: the cluster just opened or closed.
  int focusCluster_ = -1;
  bool selectingProgrammatically_ = false;
  std::unordered_map<ir::NodeId, QGraphicsItem*> itemsByNode_;
  std::unordered_map<uint64_t, QGraphicsItem*> boxesByShown_;
  QGraphicsItem* highlightedBox_ = nullptr;

  Overlay overlay_ = Overlay::Category;
  PlanSession* planSession_ = nullptr;

  // The smallest and largest positive values among the drawn nodes: the ends of the colour ramps.
  std::pair<double, double> sizeRange_{0, 0};
  std::pair<double, double> timeRange_{0, 0};
  std::vector<std::pair<QColor, QString>> legendEntries_;

  QString searchText_;
  std::vector<ir::NodeId> matches_;
  int currentMatch_ = -1;

  QWidget* toolbar_;
  QLineEdit* searchField_;
  QLabel* searchCount_;
  QComboBox* overlayChooser_;
  QLabel* busy_;
  QLabel* overlayLabel_;
  QLabel* legend_;
  GraphMinimap* minimap_;
};

}  // namespace lathe::views

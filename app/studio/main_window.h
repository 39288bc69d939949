// lathe-studio's main window: artifact tree (left), the selected graph drawn and as a node table
// (centre tabs), node inspector and pipeline (right), memory timeline and diagnostics (bottom); loading
// and planning on worker threads with progress and cancel.
#pragma once

#include <QMainWindow>
#include <QString>
#include <memory>

#include "io/artifact.h"
#include "ir/graph.h"

class QDockWidget;
class QLabel;
class QLineEdit;
class QMenu;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;
class QTreeView;

namespace lathe::views {
class ArtifactLoader;
class ArtifactTreeModel;
class BudgetPanel;
class DiagnosticsModel;
class GraphNodesModel;
class GanttView;
class GraphView;
class MemoryTimelineView;
class NodeInspector;
class ParetoView;
class PipelinePanel;
class PlanSession;
class SavedTensorLedgerModel;
class CodeView;
class GuardsView;
class StageLinks;
struct LoadOutcome;
}  // namespace lathe::views

namespace lathe::studio {

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  struct Options {
    // Restore and keep the layout, geometry and recent files of the user's sessions (off for
    // screenshots and tests: they want the default layout and leave the user's settings alone).
    bool useSettings = true;
  };

  explicit MainWindow(Options options, QWidget* parent = nullptr);
  ~MainWindow() override;

  void openPath(const QString& path);
  // The capture last opened (or being opened), "" before the first.
  [[nodiscard]] QString currentPath() const;
  // The capture bundled in resources/examples, "" when it is missing.
  [[nodiscard]] static QString exampleArtifactPath();
  // Selects a graph by id in the tree (and so shows its nodes); false when no such graph.
  bool selectGraph(const QString& graphId);
  // Selects the graph a user most likely wants first (first joint graph, else first) and in it a
  // node worth inspecting (the first matmul, else the first call).
  void selectPreferredGraph();

  // The centre tabs.
  enum class CentralView { Graph, Nodes, Guards, Code };
  void showCentralView(CentralView view);
  [[nodiscard]] views::GraphView* graphView() const { return graphView_; }

  // Guards and code tabs, and one selection across the graph stages of a compile.
  [[nodiscard]] views::GuardsView* guardsView() const { return guardsView_; }
  [[nodiscard]] views::CodeView* codeView() const { return codeView_; }
  [[nodiscard]] views::NodeInspector* inspector() const { return inspector_; }
  // The graph on show and its selected node (kNoNode when none).
  [[nodiscard]] QString shownGraphId() const;
  [[nodiscard]] ir::NodeId selectedNode() const;
  // Shows a graph and selects a node of it (the inspector's "Also in" links, the code view's nodes).
  bool selectGraphNode(const QString& graphId, ir::NodeId node);

  // The plan docks; planning runs in the background whenever a graph is selected.
  enum class PlanView { Timeline, Pipeline, Gantt, Budget, Pareto, SavedTensors };
  // Shows, raises and enlarges a plan dock (for screenshots and the View menu).
  void showPlanView(PlanView view);
  [[nodiscard]] views::PlanSession* planSession() const { return planSession_; }
  [[nodiscard]] views::PipelinePanel* pipelinePanel() const { return pipelinePanel_; }
  [[nodiscard]] views::MemoryTimelineView* timelineView() const { return timelineView_; }
  [[nodiscard]] views::BudgetPanel* budgetPanel() const { return budgetPanel_; }
  [[nodiscard]] views::GanttView* ganttView() const { return ganttView_; }
  [[nodiscard]] views::ParetoView* paretoView() const { return paretoView_; }
  [[nodiscard]] views::SavedTensorLedgerModel* savedTensorModel() const { return savedTensorModel_; }
  [[nodiscard]] QTableView* savedTensorTable() const { return savedTensorTable_; }

 signals:
  // Emitted when a load ends: ok is false when it failed or was cancelled.
  void loadFinished(bool ok);
  // Emitted after the user picked another language and its translators were installed: the window's
  // owner rebuilds the window so that every string is read again (main.cpp).
  void languageChanged();

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void createWidgets();
  void createDocks();
  void createMenus();
  void createPlanDocks();
  void createLanguageMenu();
  void createStageViews();
  void resetStageViews(const std::shared_ptr<const io::Artifact>& artifact);
  // Guards and code items of the tree open their tab; false for other items.
  bool showGuardsOrCode(const QModelIndex& treeIndex);
  // After a switch to another stage of the same compile: select the node that stands for the one
  // selected before, and centre it.
  void followSelection(const QString& previousGraphId, ir::NodeId previousNode);
  void showFxText();
  void onLoadFinished(const views::LoadOutcome& outcome);
  void showGraph(const QModelIndex& treeIndex);
  void showNode(ir::NodeId node);
  // The one node selection: selects the node's row in the table, which shows it everywhere.
  void selectNode(ir::NodeId node);
  void rememberRecent(const QString& path);
  void rebuildRecentMenu();
  void openFileDialog();
  void openDirectoryDialog();
  // File › Export View…: the graph view as SVG or PNG.
  void exportGraphDialog();

  Options options_;
  views::ArtifactLoader* loader_;
  views::ArtifactTreeModel* treeModel_;
  views::GraphNodesModel* nodesModel_;
  QSortFilterProxyModel* nodesProxy_;
  views::DiagnosticsModel* diagnosticsModel_;
  views::NodeInspector* inspector_;
  views::PlanSession* planSession_;
  views::PipelinePanel* pipelinePanel_ = nullptr;
  views::MemoryTimelineView* timelineView_ = nullptr;
  QDockWidget* pipelineDock_ = nullptr;
  QDockWidget* timelineDock_ = nullptr;
  // The budget, Gantt, Pareto and saved-tensor docks (createPlanDocks).
  views::BudgetPanel* budgetPanel_ = nullptr;
  views::GanttView* ganttView_ = nullptr;
  views::ParetoView* paretoView_ = nullptr;
  views::SavedTensorLedgerModel* savedTensorModel_ = nullptr;
  QSortFilterProxyModel* savedTensorProxy_ = nullptr;
  QTableView* savedTensorTable_ = nullptr;
  QDockWidget* budgetDock_ = nullptr;
  QDockWidget* ganttDock_ = nullptr;
  QDockWidget* paretoDock_ = nullptr;
  QDockWidget* savedTensorDock_ = nullptr;
  QTreeView* tree_ = nullptr;
  QTabWidget* centralTabs_ = nullptr;
  // createStageViews
  views::GuardsView* guardsView_ = nullptr;
  views::CodeView* codeView_ = nullptr;
  std::unique_ptr<views::StageLinks> stageLinks_;
  bool codeShowsFx_ = true;  // the code tab follows the graph on show (else it shows output code)
  bool keepCode_ = false;    // a go-to-node from the code tab leaves its code in place
  views::GraphView* graphView_ = nullptr;
  QTableView* nodesTable_ = nullptr;
  QTableView* diagnosticsTable_ = nullptr;
  QDockWidget* diagnosticsDock_ = nullptr;
  QLineEdit* search_ = nullptr;
  QLabel* graphTitle_ = nullptr;
  QProgressBar* progressBar_ = nullptr;
  QPushButton* cancelButton_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QMenu* viewMenu_ = nullptr;
};

}  // namespace lathe::studio

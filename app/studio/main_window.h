// lathe-studio's main window: artifact tree (left), the selected graph drawn and as a node table
// (centre tabs), node inspector and pipeline (right), memory timeline and diagnostics (bottom); loading
// and planning on worker threads with progress and cancel.
#pragma once

#include <QMainWindow>
#include <QString>

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
class DiagnosticsModel;
class GraphNodesModel;
class GraphView;
class MemoryTimelineView;
class NodeInspector;
class PipelinePanel;
class PlanSession;
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
  // The capture bundled in resources/examples, "" when it is missing.
  [[nodiscard]] static QString exampleArtifactPath();
  // Selects a graph by id in the tree (and so shows its nodes); false when no such graph.
  bool selectGraph(const QString& graphId);
  // Selects the graph a user most likely wants first (first joint graph, else first) and in it a
  // node worth inspecting (the first matmul, else the first call).
  void selectPreferredGraph();

  // The centre tabs.
  enum class CentralView { Graph, Nodes };
  void showCentralView(CentralView view);
  [[nodiscard]] views::GraphView* graphView() const { return graphView_; }

  // The plan docks; planning runs in the background whenever a graph is selected.
  enum class PlanView { Timeline, Pipeline };
  // Shows, raises and enlarges a plan dock (for screenshots and the View menu).
  void showPlanView(PlanView view);
  [[nodiscard]] views::PlanSession* planSession() const { return planSession_; }
  [[nodiscard]] views::PipelinePanel* pipelinePanel() const { return pipelinePanel_; }
  [[nodiscard]] views::MemoryTimelineView* timelineView() const { return timelineView_; }

 signals:
  // Emitted when a load ends: ok is false when it failed or was cancelled.
  void loadFinished(bool ok);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void createWidgets();
  void createDocks();
  void createMenus();
  void onLoadFinished(const views::LoadOutcome& outcome);
  void showGraph(const QModelIndex& treeIndex);
  void showNode(ir::NodeId node);
  // The one node selection: selects the node's row in the table, which shows it everywhere.
  void selectNode(ir::NodeId node);
  void rememberRecent(const QString& path);
  void rebuildRecentMenu();
  void openFileDialog();
  void openDirectoryDialog();

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
  QTreeView* tree_ = nullptr;
  QTabWidget* centralTabs_ = nullptr;
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

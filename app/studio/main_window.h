// lathe-studio's main window: artifact tree (left), the selected graph drawn and as a node table
// (centre tabs), node inspector and pipeline (right), memory timeline and diagnostics (bottom); loading
// and planning on worker threads with progress and cancel. Plan bundles open, save and export
// kernels from the File menu, and measured profiles price the plan (main_window_plans.cpp).
#pragma once

#include <QMainWindow>
#include <QString>
#include <memory>
#include <vector>

#include "io/artifact.h"
#include "ir/graph.h"
#include "plan/plan_bundle.h"
#include "views/job_tracker.h"

class QAction;
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
class CalibrationView;
class DiagnosticsModel;
class GraphNodesModel;
class GanttView;
class OffloadRunView;
class GraphView;
class MemoryTimelineView;
class NodeInspector;
class ParetoView;
class PipelinePanel;
class PlanSession;
class SavedTensorLedgerModel;
class SnapshotView;
class CompilesView;
class MagiTimelineView;
class CompareView;
class CodeView;
class GuardsView;
class KernelExporter;
class StageLinks;
struct KernelExportOutcome;
struct LoadOutcome;
struct OpenedPlan;
struct PlanRun;
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

  // Opens a capture, or a plan bundle (a .json path): the capture it names, its graph, and its
  // pipeline run with its hardware, once the plan is known to be that graph's.
  void openPath(const QString& path);
  // The capture or plan being opened, else the one on show (a cancelled load or a refused plan
  // leaves it), "" before the first.
  [[nodiscard]] QString currentPath() const;
  // Why the last open failed ("" when it did not): for the headless screenshot's stderr.
  [[nodiscard]] const QString& lastOpenError() const { return lastOpenError_; }
  // The capture bundled in resources/examples, "" when it is missing.
  [[nodiscard]] static QString exampleArtifactPath();
  // Selects a graph by id in the tree (and so shows its nodes); false when no such graph.
  bool selectGraph(const QString& graphId);
  // Selects the graph a user most likely wants first (first joint graph, else first) and in it a
  // node worth inspecting (selectPreferredNode).
  void selectPreferredGraph();
  // In the graph on show, a node worth inspecting (the first matmul, else the first call).
  void selectPreferredNode();

  // The centre tabs.
  // Lifecycle: a MagiCompiler dump's compile timeline (shown for dumps only).
  // Compare: the graph on show against another graph or a plan bundle (File › Compare With…).
  enum class CentralView { Graph, Nodes, Guards, Code, Compiles, Snapshot, Lifecycle, Compare };
  void showCentralView(CentralView view);
  [[nodiscard]] views::GraphView* graphView() const { return graphView_; }

  // Guards and code tabs, and one selection across the graph stages of a compile.
  [[nodiscard]] views::GuardsView* guardsView() const { return guardsView_; }
  [[nodiscard]] views::CodeView* codeView() const { return codeView_; }
  // A CUDA memory snapshot opened on its own: its own tab in place of the graph's.
  [[nodiscard]] views::SnapshotView* snapshotView() const { return snapshotView_; }
  // What each compile of a log cost, by phase.
  [[nodiscard]] views::CompilesView* compilesView() const { return compilesView_; }
  [[nodiscard]] views::MagiTimelineView* magiTimelineView() const { return magiTimelineView_; }
  [[nodiscard]] views::CompareView* compareView() const { return compareView_; }
  // File › Compare With… without the dialog: opens `path` (a capture or a plan bundle) as B of the
  // Compare tab and shows it.
  void compareWith(const QString& path);
  [[nodiscard]] views::ArtifactTreeModel* treeModel() const { return treeModel_; }
  // Shows a compile's graphs: its joint graph where it has one, else its first graph.
  bool selectCompile(const QString& compileId);
  [[nodiscard]] views::NodeInspector* inspector() const { return inspector_; }
  // The graph on show and its selected node (kNoNode when none).
  [[nodiscard]] QString shownGraphId() const;
  [[nodiscard]] ir::NodeId selectedNode() const;
  // Shows a graph and selects a node of it (the inspector's "Also in" links, the code view's nodes).
  bool selectGraphNode(const QString& graphId, ir::NodeId node);

  // The plan docks; planning runs in the background whenever a graph is selected.
  enum class PlanView { Timeline, Pipeline, Gantt, Budget, Pareto, SavedTensors, OffloadRun, Measured };
  // Shows, raises and enlarges a plan dock (for screenshots and the View menu).
  void showPlanView(PlanView view);
  [[nodiscard]] views::PlanSession* planSession() const { return planSession_; }
  [[nodiscard]] views::PipelinePanel* pipelinePanel() const { return pipelinePanel_; }
  [[nodiscard]] views::MemoryTimelineView* timelineView() const { return timelineView_; }
  [[nodiscard]] views::BudgetPanel* budgetPanel() const { return budgetPanel_; }
  [[nodiscard]] views::GanttView* ganttView() const { return ganttView_; }
  [[nodiscard]] views::OffloadRunView* offloadRunView() const { return offloadRunView_; }
  [[nodiscard]] views::ParetoView* paretoView() const { return paretoView_; }
  [[nodiscard]] views::SavedTensorLedgerModel* savedTensorModel() const { return savedTensorModel_; }
  [[nodiscard]] QTableView* savedTensorTable() const { return savedTensorTable_; }
  [[nodiscard]] views::CalibrationView* calibrationView() const { return calibrationView_; }

  // File › Load Profile… without the dialog: prices the graph on show as a lathe.profile/1 file
  // measured it (PlanSession::loadProfile says how it went). While a capture loads, the profile
  // waits for its graph.
  void loadProfile(const QString& path);
  // The profile the plan is priced with, "" when none is.
  [[nodiscard]] QString profilePath() const;

  // File › Save Plan… without the dialog: the current run's last step as a plan bundle, written in
  // the background (planSaved when done).
  void savePlan(const QString& path);
  // File › Export Kernels… without the dialog: kernels for the current plan's fusion groups into
  // `folder` (kernelExporter() reports the stages and the outcome).
  void exportKernels(const QString& folder);
  [[nodiscard]] views::KernelExporter* kernelExporter() const { return kernelExporter_; }
  // File › Export Report… without the dialog: passes::htmlReport of the artifact on show, with the
  // plan on show where there is one, written in the background (reportExported when done).
  void exportReport(const QString& path);
  // The plan file that holds the run on show (the one it was opened from or last saved to), "" when
  // none does.
  [[nodiscard]] QString planFile() const;

 signals:
  // Emitted when a load ends: ok is false when it failed or was cancelled.
  void loadFinished(bool ok);
  // Emitted after the user picked another language and its translators were installed: the window's
  // owner rebuilds the window so that every string is read again (main.cpp).
  void languageChanged();
  // An opened plan's pipeline run came back (ok false: it failed, lastOpenError says why) and was
  // compared with the bundle's decisions (the pipeline dock says how it went).
  void planOpened(bool ok);
  // A Save Plan ended: the path written, or why nothing was.
  void planSaved(bool ok, const QString& pathOrError);
  // An Export Report ended: the path written, or why nothing was.
  void reportExported(bool ok, const QString& pathOrError);

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
  // A snapshot on its own takes the centre (its tab alone) and leaves out the plan docks; any other
  // artifact gets the graph tabs and the docks back.
  void showSnapshotLayout(bool snapshot);
  // Guards and code items of the tree open their tab; false for other items.
  bool showGuardsOrCode(const QModelIndex& treeIndex);
  // After a switch to another stage of the same compile: select the node that stands for the one
  // selected before, and centre it.
  void followSelection(const QString& previousGraphId, ir::NodeId previousNode);
  void showFxText();
  void onLoadFinished(const views::LoadOutcome& outcome);
  void showGraph(const QModelIndex& treeIndex);
  void showNode(ir::NodeId node);
  // "graph · N nodes · …", with a note where a graph traced on the CPU is priced on the target GPU.
  void updateGraphTitle();
  // The one node selection: selects the node's row in the table, which shows it everywhere.
  void selectNode(ir::NodeId node);
  void rememberRecent(const QString& path);
  void rebuildRecentMenu();
  void openFileDialog();
  void openDirectoryDialog();
  void compareWithDialog();
  // File › Export View…: the graph view as SVG or PNG.
  void exportGraphDialog();

  // Plan bundles (main_window_plans.cpp).
  void createPlanFileActions(QMenu* file);
  void updatePlanFileActions();
  // A plan load that failed leaves the window as it was and says why.
  void refusePlan(const views::LoadOutcome& outcome);
  // A graph is being shown: when it is the opened plan's, plan it on the bundle's target with its
  // pipeline (true); else the plan is dropped (another graph was picked) and false.
  [[nodiscard]] bool runOpenedPlan(const QString& graphId);
  void onPlanFinished(bool ok, const QString& error);
  void savePlanDialog();
  void onPlanSaved(const views::JobOutcome<QString>& saved);
  void exportKernelsDialog();
  void onKernelsExported(const views::KernelExportOutcome& outcome);
  void exportReportDialog();
  void onReportExported(const views::JobOutcome<QString>& written);

  // Measured profiles (main_window_plans.cpp).
  void createProfileActions(QMenu* file);
  void loadProfileDialog();
  void onProfileApplied(bool ok, const QString& error);
  // The banner, the Measured dock and the node table's measured column follow the session's profile.
  void onProfileChanged();
  // The node times of the run on show, in the node table and the inspector.
  void showNodeTimes();

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
  views::OffloadRunView* offloadRunView_ = nullptr;  // a run folder's weight offload, measured and simulated
  views::ParetoView* paretoView_ = nullptr;
  views::SavedTensorLedgerModel* savedTensorModel_ = nullptr;
  QSortFilterProxyModel* savedTensorProxy_ = nullptr;
  QTableView* savedTensorTable_ = nullptr;
  QDockWidget* budgetDock_ = nullptr;
  QDockWidget* ganttDock_ = nullptr;
  QDockWidget* offloadRunDock_ = nullptr;  // shown when the opened run streamed weights
  QDockWidget* paretoDock_ = nullptr;
  QDockWidget* savedTensorDock_ = nullptr;
  views::CalibrationView* calibrationView_ = nullptr;
  QDockWidget* calibrationDock_ = nullptr;  // shown once a profile is applied
  QTreeView* tree_ = nullptr;
  QTabWidget* centralTabs_ = nullptr;
  // createStageViews
  views::GuardsView* guardsView_ = nullptr;
  views::CodeView* codeView_ = nullptr;
  views::SnapshotView* snapshotView_ = nullptr;
  views::CompilesView* compilesView_ = nullptr;
  views::MagiTimelineView* magiTimelineView_ = nullptr;
  views::CompareView* compareView_ = nullptr;
  QList<QDockWidget*> hiddenForSnapshot_;  // plan docks a snapshot has no use for, shown again after it
  std::unique_ptr<views::StageLinks> stageLinks_;
  bool codeShowsFx_ = true;  // the code tab follows the graph on show (else it shows output code)
  bool keepCode_ = false;    // a go-to-node from the code tab leaves its code in place
  views::GraphView* graphView_ = nullptr;
  QTableView* nodesTable_ = nullptr;
  QTableView* diagnosticsTable_ = nullptr;
  QDockWidget* diagnosticsDock_ = nullptr;
  QLineEdit* search_ = nullptr;
  QLabel* graphTitle_ = nullptr;
  QLabel* profileBanner_ = nullptr;  // says which profile prices the plan, with a way back
  QProgressBar* progressBar_ = nullptr;
  QPushButton* cancelButton_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QMenu* viewMenu_ = nullptr;
  QString lastOpenError_;
  QString shownPath_;  // the capture or plan on show

  // Plan bundles: the one opened, until its run comes back; the run a plan file holds; kernel
  // exports made of a run, recorded in the plan when it is saved.
  std::shared_ptr<const views::OpenedPlan> openingPlan_;
  QString planFile_;
  std::shared_ptr<const views::PlanRun> planFileRun_;
  std::vector<plan::KernelsRef> kernelRefs_;
  std::shared_ptr<const views::PlanRun> kernelRefsRun_;
  QAction* savePlanAction_ = nullptr;
  QAction* exportKernelsAction_ = nullptr;
  QAction* exportReportAction_ = nullptr;
  // A save is never cancelled: the window waits for it as it goes, so the file is written whole.
  views::JobTracker planSaves_;
  QString savingTo_;
  std::shared_ptr<const views::PlanRun> savingRun_;
  // A report is written whole or not at all (atomically); a new load drops the one in flight.
  views::JobTracker reportExports_;
  QString reportingTo_;
  views::KernelExporter* kernelExporter_ = nullptr;
  std::shared_ptr<const views::PlanRun> exportingRun_;
  QLabel* exportStage_ = nullptr;
  QProgressBar* exportProgress_ = nullptr;
  QPushButton* cancelExport_ = nullptr;

  QAction* loadProfileAction_ = nullptr;
  QAction* clearProfileAction_ = nullptr;
  QString pendingProfile_;  // asked for while a capture loads
};

}  // namespace lathe::studio

#include "main_window.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>
#include <utility>

#include "analysis/cost_model.h"
#include "hw/hw_profile.h"
#include "io/fx/fx_text.h"
#include "language.h"
#include "views/artifact_loader.h"
#include "views/artifact_tree_model.h"
#include "views/budget_panel.h"
#include "views/calibration_view.h"
#include "views/code_view.h"
#include "views/compare_view.h"
#include "views/compiles_view.h"
#include "views/magi_timeline_view.h"
#include "views/diagnostics_model.h"
#include "views/formatting.h"
#include "views/gantt_view.h"
#include "views/graph_nodes_model.h"
#include "views/graph_view.h"
#include "views/guards_view.h"
#include "views/kernel_exporter.h"
#include "views/memory_timeline_view.h"
#include "views/node_inspector.h"
#include "views/pareto_view.h"
#include "views/pipeline_panel.h"
#include "views/plan_file.h"
#include "views/plan_session.h"
#include "views/saved_tensor_ledger_model.h"
#include "views/snapshot_view.h"
#include "views/stage_links.h"

namespace lathe::studio {

namespace {

constexpr int kMaxRecentFiles = 10;
// Rows sampled when sizing columns to their contents: a 100k-node graph must not stall the GUI.
constexpr int kColumnSizingRows = 300;
// Widest a node-table column gets from its contents; long targets and names elide instead of
// pushing the other columns out of view.
constexpr int kMaxNodeColumnWidth = 220;

QString settingsKey(const char* key) {
  return QString::fromLatin1(key);
}

}  // namespace

MainWindow::MainWindow(Options options, QWidget* parent)
    : QMainWindow(parent),
      options_(options),
      loader_(new views::ArtifactLoader(this)),
      treeModel_(new views::ArtifactTreeModel(this)),
      nodesModel_(new views::GraphNodesModel(this)),
      nodesProxy_(new QSortFilterProxyModel(this)),
      diagnosticsModel_(new views::DiagnosticsModel(this)),
      inspector_(new views::NodeInspector(this)),
      planSession_(new views::PlanSession(this)),
      kernelExporter_(new views::KernelExporter(this)) {
  setWindowTitle(tr("Lathe Studio"));
  setAcceptDrops(true);
  nodesProxy_->setSourceModel(nodesModel_);
  nodesProxy_->setSortRole(views::GraphNodesModel::kSortRole);
  nodesProxy_->setFilterKeyColumn(-1);
  nodesProxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);

  createWidgets();
  createDocks();
  createPlanDocks();
  createStageViews();
  createMenus();

  connect(loader_, &views::ArtifactLoader::started, this, [this](const QString& path) {
    progressBar_->setValue(0);
    progressBar_->show();
    cancelButton_->show();
    statusBar()->showMessage(tr("Loading %1…").arg(QFileInfo(path).fileName()));
  });
  connect(loader_, &views::ArtifactLoader::progress, progressBar_, &QProgressBar::setValue);
  connect(loader_, &views::ArtifactLoader::finished, this, &MainWindow::onLoadFinished);
  connect(cancelButton_, &QPushButton::clicked, loader_, &views::ArtifactLoader::cancel);
  connect(tree_->selectionModel(), &QItemSelectionModel::currentChanged, this,
          [this](const QModelIndex& current) { showGraph(current); });
  connect(nodesTable_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { showNode(nodesModel_->nodeAt(nodesProxy_->mapToSource(current))); });
  connect(inspector_, &views::NodeInspector::nodeActivated, this, &MainWindow::selectNode);
  connect(planSession_, &views::PlanSession::hardwareChanged, this, &MainWindow::updateGraphTitle);
  connect(planSession_, &views::PlanSession::hardwareChanged, inspector_, [this] {
    inspector_->setHardware(planSession_->hardwareProfile());
    inspector_->setNodeTimes(nullptr);  // the last hardware's, until the re-plan brings the new ones
  });
  connect(graphView_, &views::GraphView::nodeSelected, this, &MainWindow::selectNode);
  connect(search_, &QLineEdit::textChanged, nodesProxy_, &QSortFilterProxyModel::setFilterFixedString);
  connect(timelineView_, &views::MemoryTimelineView::nodeClicked, this, &MainWindow::selectNode);
  connect(planSession_, &views::PlanSession::finished, this, &MainWindow::onPlanFinished);
  connect(planSession_, &views::PlanSession::finished, this, [this](bool ok) {
    if (ok) showNodeTimes();
  });

  resize(1600, 1000);
  if (options_.useSettings) {
    const QSettings settings;
    restoreGeometry(settings.value(settingsKey("window/geometry")).toByteArray());
    restoreState(settings.value(settingsKey("window/state")).toByteArray());
  }
}

MainWindow::~MainWindow() = default;

void MainWindow::createWidgets() {
  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(6, 6, 6, 0);
  auto* header = new QHBoxLayout;
  graphTitle_ = new QLabel(tr("No graph selected"), central);
  graphTitle_->setObjectName(QStringLiteral("graphTitle"));
  QFont titleFont = graphTitle_->font();
  titleFont.setBold(true);
  graphTitle_->setFont(titleFont);
  graphTitle_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  graphTitle_->setWordWrap(true);  // a long title takes two lines, not the window's width
  search_ = new QLineEdit(central);
  search_->setObjectName(QStringLiteral("nodeSearch"));
  search_->setPlaceholderText(tr("Filter nodes: name, target, category, shape, source…"));
  search_->setClearButtonEnabled(true);
  search_->setMinimumWidth(300);
  auto* focusSearch = new QAction(tr("Find Node"), this);
  focusSearch->setShortcut(QKeySequence::Find);
  connect(focusSearch, &QAction::triggered, search_, [this] {
    // On the graph tab Ctrl+F searches the drawing (and jumps); on the nodes tab it filters the table.
    if (centralTabs_->currentWidget() == graphView_) {
      graphView_->focusSearch();
    } else if (centralTabs_->currentWidget() == guardsView_) {
      guardsView_->focusSearch();
    } else if (centralTabs_->currentWidget() == codeView_) {
      codeView_->showFindBar();
    } else {
      search_->setFocus(Qt::ShortcutFocusReason);
    }
  });
  addAction(focusSearch);
  header->addWidget(graphTitle_, 1);
  header->addWidget(search_);
  layout->addLayout(header);
  profileBanner_ = new QLabel(central);
  profileBanner_->setObjectName(QStringLiteral("profileBanner"));
  profileBanner_->setWordWrap(true);
  profileBanner_->setTextFormat(Qt::RichText);
  profileBanner_->setStyleSheet(
      QStringLiteral("QLabel { background: #fff6d8; border: 1px solid #e2c86e; border-radius: 3px; padding: 4px 6px; }"));
  profileBanner_->hide();
  layout->addWidget(profileBanner_);

  centralTabs_ = new QTabWidget(central);
  centralTabs_->setObjectName(QStringLiteral("centralTabs"));
  centralTabs_->setDocumentMode(true);
  graphView_ = new views::GraphView(centralTabs_);
  graphView_->setPlanSession(planSession_);
  nodesTable_ = new QTableView(centralTabs_);
  nodesTable_->setObjectName(QStringLiteral("nodesTable"));
  nodesTable_->setModel(nodesProxy_);
  nodesTable_->setSortingEnabled(true);
  nodesTable_->sortByColumn(views::GraphNodesModel::IndexColumn, Qt::AscendingOrder);
  nodesTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
  nodesTable_->setSelectionMode(QAbstractItemView::SingleSelection);
  nodesTable_->setAlternatingRowColors(true);
  nodesTable_->setWordWrap(false);
  nodesTable_->verticalHeader()->hide();
  nodesTable_->verticalHeader()->setDefaultSectionSize(nodesTable_->fontMetrics().height() + 6);
  nodesTable_->horizontalHeader()->setStretchLastSection(true);
  nodesTable_->horizontalHeader()->setResizeContentsPrecision(kColumnSizingRows);
  centralTabs_->addTab(graphView_, tr("Graph"));
  centralTabs_->addTab(nodesTable_, tr("Nodes"));
  layout->addWidget(centralTabs_, 1);
  setCentralWidget(central);

  progressBar_ = new QProgressBar(this);
  progressBar_->setRange(0, views::ArtifactLoader::kProgressMaximum);
  progressBar_->setMaximumWidth(240);
  progressBar_->hide();
  cancelButton_ = new QPushButton(tr("Cancel"), this);
  cancelButton_->setObjectName(QStringLiteral("cancelLoad"));
  cancelButton_->hide();
  statusBar()->addPermanentWidget(progressBar_);
  statusBar()->addPermanentWidget(cancelButton_);

  // A kernel export has stages of unknown length (one compiler run is most of it): a busy bar.
  exportStage_ = new QLabel(this);
  exportStage_->setObjectName(QStringLiteral("exportStage"));
  exportProgress_ = new QProgressBar(this);
  exportProgress_->setRange(0, 0);
  exportProgress_->setMaximumWidth(160);
  cancelExport_ = new QPushButton(tr("Cancel Export"), this);
  cancelExport_->setObjectName(QStringLiteral("cancelExport"));
  for (QWidget* widget : {static_cast<QWidget*>(exportStage_), static_cast<QWidget*>(exportProgress_),
                          static_cast<QWidget*>(cancelExport_)}) {
    widget->hide();
    statusBar()->addPermanentWidget(widget);
  }
}

void MainWindow::createDocks() {
  tree_ = new QTreeView(this);
  tree_->setObjectName(QStringLiteral("artifactTree"));
  tree_->setModel(treeModel_);
  tree_->setUniformRowHeights(true);
  tree_->header()->setStretchLastSection(true);
  tree_->header()->setSectionResizeMode(views::ArtifactTreeModel::NameColumn, QHeaderView::ResizeToContents);
  tree_->header()->setSectionResizeMode(views::ArtifactTreeModel::NodesColumn, QHeaderView::ResizeToContents);

  diagnosticsTable_ = new QTableView(this);
  diagnosticsTable_->setObjectName(QStringLiteral("diagnosticsTable"));
  diagnosticsTable_->setModel(diagnosticsModel_);
  diagnosticsTable_->setWordWrap(false);
  diagnosticsTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
  diagnosticsTable_->verticalHeader()->hide();
  diagnosticsTable_->verticalHeader()->setDefaultSectionSize(diagnosticsTable_->fontMetrics().height() + 6);
  diagnosticsTable_->horizontalHeader()->setSectionResizeMode(views::DiagnosticsModel::MessageColumn,
                                                              QHeaderView::Stretch);
  diagnosticsTable_->horizontalHeader()->setSectionResizeMode(views::DiagnosticsModel::LocationColumn,
                                                              QHeaderView::ResizeToContents);

  auto addDock = [this](QWidget* widget, const QString& title, const char* name, Qt::DockWidgetArea area) {
    auto* dock = new QDockWidget(title, this);
    dock->setObjectName(QString::fromLatin1(name));
    dock->setWidget(widget);
    addDockWidget(area, dock);
    return dock;
  };
  QDockWidget* treeDock = addDock(tree_, tr("Artifact"), "artifactDock", Qt::LeftDockWidgetArea);
  QDockWidget* inspectorDock = addDock(inspector_, tr("Inspector"), "inspectorDock", Qt::RightDockWidgetArea);
  pipelinePanel_ = new views::PipelinePanel(planSession_, this);
  pipelineDock_ = addDock(pipelinePanel_, tr("Pipeline"), "pipelineDock", Qt::RightDockWidgetArea);
  splitDockWidget(inspectorDock, pipelineDock_, Qt::Vertical);
  timelineView_ = new views::MemoryTimelineView(planSession_, this);
  timelineDock_ = addDock(timelineView_, tr("Memory timeline"), "timelineDock", Qt::BottomDockWidgetArea);
  diagnosticsDock_ = addDock(diagnosticsTable_, tr("Diagnostics"), "diagnosticsDock", Qt::BottomDockWidgetArea);
  resizeDocks({treeDock, inspectorDock}, {380, 400}, Qt::Horizontal);
  resizeDocks({inspectorDock, pipelineDock_}, {400, 450}, Qt::Vertical);
  resizeDocks({timelineDock_, diagnosticsDock_}, {260, 160}, Qt::Vertical);

  viewMenu_ = new QMenu(tr("&View"), this);
  for (QDockWidget* dock : {treeDock, inspectorDock, pipelineDock_, timelineDock_, diagnosticsDock_}) {
    viewMenu_->addAction(dock->toggleViewAction());
  }
}

void MainWindow::createPlanDocks() {
  budgetPanel_ = new views::BudgetPanel(planSession_, this);
  ganttView_ = new views::GanttView(planSession_, this);
  offloadRunView_ = new views::OffloadRunView(this);
  paretoView_ = new views::ParetoView(planSession_, this);
  savedTensorModel_ = new views::SavedTensorLedgerModel(this);
  savedTensorProxy_ = new QSortFilterProxyModel(this);
  savedTensorProxy_->setSourceModel(savedTensorModel_);
  savedTensorProxy_->setSortRole(views::SavedTensorLedgerModel::kSortRole);
  savedTensorTable_ = new QTableView(this);
  savedTensorTable_->setObjectName(QStringLiteral("savedTensorTable"));
  savedTensorTable_->setModel(savedTensorProxy_);
  savedTensorTable_->setSortingEnabled(true);
  savedTensorTable_->sortByColumn(views::SavedTensorLedgerModel::BytesColumn, Qt::DescendingOrder);
  savedTensorTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
  savedTensorTable_->setSelectionMode(QAbstractItemView::SingleSelection);
  savedTensorTable_->setAlternatingRowColors(true);
  savedTensorTable_->setWordWrap(false);
  savedTensorTable_->verticalHeader()->hide();
  savedTensorTable_->verticalHeader()->setDefaultSectionSize(savedTensorTable_->fontMetrics().height() + 6);
  savedTensorTable_->horizontalHeader()->setStretchLastSection(true);

  auto addPlanDock = [this](QWidget* widget, const QString& title, const char* name) {
    auto* dock = new QDockWidget(title, this);
    dock->setObjectName(QString::fromLatin1(name));
    dock->setWidget(widget);
    addDockWidget(Qt::BottomDockWidgetArea, dock);
    return dock;
  };
  ganttDock_ = addPlanDock(ganttView_, tr("Gantt"), "ganttDock");
  offloadRunDock_ = addPlanDock(offloadRunView_, tr("Offload run"), "offloadRunDock");
  savedTensorDock_ = addPlanDock(savedTensorTable_, tr("Saved tensors"), "savedTensorDock");
  calibrationView_ = new views::CalibrationView(planSession_, this);
  calibrationDock_ = addPlanDock(calibrationView_, tr("Measured"), "calibrationDock");
  paretoDock_ = addPlanDock(paretoView_, tr("Pareto"), "paretoDock");
  budgetDock_ = new QDockWidget(tr("Budget"), this);
  budgetDock_->setObjectName(QStringLiteral("budgetDock"));
  budgetDock_->setWidget(budgetPanel_);
  // The plots share the bottom as tabs at full width, the frontier beside them; the budget
  // controls sit with the inspector, so the plots stay in view while the sliders move.
  splitDockWidget(timelineDock_, paretoDock_, Qt::Horizontal);
  tabifyDockWidget(timelineDock_, ganttDock_);
  tabifyDockWidget(timelineDock_, offloadRunDock_);
  offloadRunDock_->hide();
  tabifyDockWidget(timelineDock_, savedTensorDock_);
  tabifyDockWidget(timelineDock_, calibrationDock_);
  calibrationDock_->hide();
  // The diagnostics get the plots' full width as a tab of theirs, not a strip beside the frontier.
  tabifyDockWidget(timelineDock_, diagnosticsDock_);
  auto* inspectorDock = qobject_cast<QDockWidget*>(inspector_->parentWidget());
  tabifyDockWidget(inspectorDock, budgetDock_);
  inspectorDock->raise();
  timelineDock_->raise();
  // Tabs and splits reset the widths createDocks gave the side columns.
  resizeDocks({findChild<QDockWidget*>(QStringLiteral("artifactDock")), inspectorDock}, {380, 400}, Qt::Horizontal);
  resizeDocks({timelineDock_, paretoDock_}, {1000, 420}, Qt::Horizontal);
  for (QDockWidget* dock :
       {budgetDock_, ganttDock_, offloadRunDock_, paretoDock_, savedTensorDock_, calibrationDock_}) {
    viewMenu_->addAction(dock->toggleViewAction());
  }

  connect(ganttView_, &views::GanttView::nodeClicked, this, &MainWindow::selectNode);
  connect(paretoView_, &views::ParetoView::budgetPicked, budgetPanel_, &views::BudgetPanel::setBudgetBytes);
  connect(planSession_, &views::PlanSession::currentStepChanged, this, [this](int step) {
    savedTensorModel_->setPlan(planSession_->planRun(), step);
    savedTensorTable_->resizeColumnsToContents();
  });
  connect(savedTensorTable_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            const ir::NodeId node = savedTensorModel_->nodeAt(savedTensorProxy_->mapToSource(current));
            if (node != ir::kNoNode) selectNode(node);
          });
}

void MainWindow::createMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* openFile = file->addAction(tr("&Open File…"), this, &MainWindow::openFileDialog);
  openFile->setShortcut(QKeySequence::Open);
  file->addAction(tr("Open &Folder…"), this, &MainWindow::openDirectoryDialog);
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  file->addAction(tr("Open &Example"), this, [this] { openPath(exampleArtifactPath()); });
  file->addAction(tr("Load Memory &Snapshot onto the Timeline…"), this, [this] {
    showPlanView(PlanView::Timeline);
    timelineView_->chooseSnapshot();
  });
  QAction* compare = file->addAction(tr("&Compare With…"), this, &MainWindow::compareWithDialog);
  compare->setObjectName(QStringLiteral("compareWith"));
  compare->setStatusTip(tr("Compare the graph on show with a graph of another capture, or its plan with a plan bundle"));
  createProfileActions(file);
  file->addSeparator();
  createPlanFileActions(file);
  file->addAction(tr("&Export View…"), this, &MainWindow::exportGraphDialog);
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
  rebuildRecentMenu();

  menuBar()->addMenu(viewMenu_);
  createLanguageMenu();

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About Lathe Studio"), this, [this] {
    QMessageBox::about(this, tr("About Lathe Studio"),
                       tr("Lathe Studio %1: a workbench for PyTorch compiler artifacts (TORCH_TRACE logs, "
                          "torch.export archives, CUDA memory snapshots).")
                           .arg(QApplication::applicationVersion()));
  });
}

QString MainWindow::currentPath() const {
  return loader_->busy() || shownPath_.isEmpty() ? loader_->path() : shownPath_;
}

void MainWindow::createLanguageMenu() {
  QMenu* languageMenu = viewMenu_->addMenu(tr("&Language"));
  auto* group = new QActionGroup(languageMenu);
  const QString current = savedLanguage();
  for (const Language& language : availableLanguages()) {
    QAction* action = languageMenu->addAction(language.nativeName);
    action->setCheckable(true);
    action->setChecked(language.code == current);
    group->addAction(action);
    connect(action, &QAction::triggered, this, [this, code = language.code] {
      if (code == savedLanguage()) return;
      saveLanguage(code);
      applyLanguage(code);
      emit languageChanged();
    });
  }
}

QString MainWindow::exampleArtifactPath() {
  const QString path = QString::fromUtf8(LATHE_EXAMPLE_ARTIFACT);
  return QFileInfo::exists(path) ? path : QString();
}

void MainWindow::openPath(const QString& path) {
  if (path.isEmpty()) {
    lastOpenError_ = tr("No file to open (the bundled example is missing).");
    diagnosticsModel_->setLoadError(lastOpenError_, {});
    emit loadFinished(false);
    return;
  }
  if (views::isPlanPath(path)) {
    loader_->loadPlan(path);
  } else {
    loader_->load(path);
  }
}

void MainWindow::openFileDialog() {
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Open artifact"), {},
      tr("PyTorch artifacts and Lathe plans (*.log *.log.gz *.gz *.pt2 *.pickle *.txt *.json);;Lathe plans "
         "(*.plan.json *.json);;All files (*)"));
  if (!path.isEmpty()) openPath(path);
}

void MainWindow::exportGraphDialog() {
  if (!graphView_->layout()) {
    statusBar()->showMessage(tr("No graph is drawn yet: select one in the artifact tree."));
    return;
  }
  const QString path = QFileDialog::getSaveFileName(this, tr("Export the graph view"), {},
                                                    tr("SVG image (*.svg);;PNG image (*.png)"));
  if (path.isEmpty()) return;
  QString error;
  if (graphView_->exportView(path, &error)) {
    statusBar()->showMessage(tr("Exported the graph view to %1").arg(path));
  } else {
    QMessageBox::warning(this, tr("Export the graph view"), error);
  }
}

void MainWindow::openDirectoryDialog() {
  const QString path = QFileDialog::getExistingDirectory(this, tr("Open a folder of TORCH_TRACE rank logs"));
  if (!path.isEmpty()) openPath(path);
}

void MainWindow::compareWithDialog() {
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Compare With"), QFileInfo(shownPath_).absolutePath(),
      tr("Captures and plans (*.log *.gz *.txt *.pt2 *.json);;All files (*)"));
  if (!path.isEmpty()) compareWith(path);
}

void MainWindow::compareWith(const QString& path) {
  compareView_->openB(path);
  showCentralView(CentralView::Compare);
}

void MainWindow::onLoadFinished(const views::LoadOutcome& outcome) {
  const QString pendingProfile = std::exchange(pendingProfile_, {});
  progressBar_->hide();
  cancelButton_->hide();
  const QString name = QFileInfo(loader_->path()).fileName();
  if (outcome.cancelled) {
    lastOpenError_ = tr("Loading %1 cancelled").arg(name);
    statusBar()->showMessage(lastOpenError_);
    emit loadFinished(false);
    return;
  }
  if (!outcome.planPath.isEmpty() && !outcome.artifact) {
    refusePlan(outcome);
    emit loadFinished(false);
    return;
  }
  lastOpenError_.clear();
  shownPath_ = loader_->path();
  openingPlan_ = outcome.plan;
  inspector_->clear();
  resetStageViews(outcome.artifact);
  compareView_->setA(outcome.artifact, {}, nullptr);
  compareView_->setPlanA(nullptr);
  nodesModel_->setGraph(nullptr, {});
  graphView_->clear();
  planSession_->setGraph(nullptr, {}, nullptr);
  graphTitle_->setText(tr("No graph selected"));
  if (!outcome.artifact) {
    treeModel_->clear();
    updatePlanFileActions();
    lastOpenError_ = outcome.error;
    diagnosticsModel_->setLoadError(outcome.error, outcome.errorLocation);
    diagnosticsDock_->setWindowTitle(tr("Diagnostics (%1)").arg(1));
    diagnosticsDock_->show();
    diagnosticsDock_->raise();
    setWindowTitle(tr("Lathe Studio"));
    statusBar()->showMessage(tr("Could not open %1: %2").arg(name, outcome.error));
    graphTitle_->setText(tr("Could not open %1; the Diagnostics pane says why.").arg(name));
    emit loadFinished(false);
    return;
  }
  treeModel_->setArtifact(outcome.artifact);
  updatePlanFileActions();  // a report needs an artifact, not a plan
  const bool snapshot = outcome.artifact->snapshot && outcome.snapshotTimeline;
  showSnapshotLayout(snapshot);
  if (snapshot) {
    snapshotView_->setSnapshot(outcome.artifact, outcome.snapshotTimeline);
    graphTitle_->setText(tr("CUDA memory snapshot · %1").arg(name));
  }
  Diagnostics diagnostics = outcome.artifact->diagnostics();
  // An unreadable profile costs the measured line only, an unreadable run plan the run's own
  // decisions only (the studio plans the graph itself): the run's capture still opens.
  if (!outcome.profileError.isEmpty()) {
    diagnostics.add(Severity::Warning, "profile_unreadable", outcome.profileError.toStdString());
  }
  if (!outcome.runPlanError.isEmpty()) {
    diagnostics.add(Severity::Warning, "run_plan_unreadable", outcome.runPlanError.toStdString());
  }
  diagnosticsModel_->setDiagnostics(diagnostics);
  timelineView_->setMeasuredProfile(outcome.profile);
  offloadRunView_->setProfile(outcome.profile);
  offloadRunDock_->setVisible(offloadRunView_->hasRun());
  // An empty diagnostics pane only takes room from the nodes; it comes back when there is news,
  // counted in its tab, and in front of the plots when something could not be read.
  diagnosticsDock_->setVisible(diagnosticsModel_->rowCount() > 0);
  diagnosticsDock_->setWindowTitle(diagnosticsModel_->rowCount() > 0
                                       ? tr("Diagnostics (%1)").arg(diagnosticsModel_->rowCount())
                                       : tr("Diagnostics"));
  if (diagnosticsModel_->count(Severity::Error) > 0) diagnosticsDock_->raise();
  tree_->expandToDepth(1);
  setWindowTitle(outcome.plan ? tr("%1 · %2 — Lathe Studio").arg(name, QFileInfo(outcome.plan->capturePath).fileName())
                               : tr("%1 — Lathe Studio").arg(name));
  rememberRecent(loader_->path());
  statusBar()->showMessage((snapshot ? tr("Loaded %1: a CUDA memory snapshot").arg(name)
                                     : tr("Loaded %1: %n graph(s)", nullptr, treeModel_->graphCount()).arg(name)) +
                           tr(", %n diagnostic(s)", nullptr, diagnosticsModel_->rowCount()));
  // A plan shows its own graph (the loader found it there); a capture the likeliest one.
  if (outcome.plan && selectGraph(views::toQString(outcome.plan->bundle.graphId))) {
    selectPreferredNode();
  } else {
    selectPreferredGraph();
  }
  // A dump whose compiles kept no graph (torch.compile's own backend) shows its lifecycle.
  if (magiTimelineView_->hasTimeline() && treeModel_->graphCount() == 0) showCentralView(CentralView::Lifecycle);
  if (!pendingProfile.isEmpty()) planSession_->loadProfile(pendingProfile);
  emit loadFinished(true);
}

bool MainWindow::selectGraph(const QString& graphId) {
  const QModelIndex index = treeModel_->indexOfGraph(graphId);
  if (!index.isValid()) return false;
  tree_->setCurrentIndex(index);
  tree_->scrollTo(index);
  return true;
}

void MainWindow::selectPreferredGraph() {
  const QModelIndex index = treeModel_->preferredGraphIndex();
  if (!index.isValid()) return;
  tree_->setCurrentIndex(index);
  tree_->scrollTo(index);
  selectPreferredNode();
}

void MainWindow::selectPreferredNode() {
  const auto& graph = nodesModel_->graph();
  if (!graph) return;
  // The node that costs the step most on the target, where the target prices the graph: the one
  // a user looks at first. Else the first call.
  ir::NodeId chosen = ir::kNoNode;
  if (const auto& target = planSession_->target(); target && target->sharedGraph() == graph) {
    const std::vector<double>& seconds = target->nodeSeconds();
    for (ir::NodeId id = 0; id < graph->size(); ++id) {
      if (graph->node(id).isCall() && seconds[id] > 0 && (chosen == ir::kNoNode || seconds[id] > seconds[chosen]))
        chosen = id;
    }
  }
  for (ir::NodeId id = 0; id < graph->size() && chosen == ir::kNoNode; ++id) {
    if (graph->node(id).isCall()) chosen = id;
  }
  const QModelIndex row = nodesProxy_->mapFromSource(nodesModel_->indexOfNode(chosen));
  if (!row.isValid()) return;
  nodesTable_->setCurrentIndex(row);
  nodesTable_->scrollTo(row, QAbstractItemView::PositionAtCenter);
}

void MainWindow::showGraph(const QModelIndex& treeIndex) {
  if (treeIndex.data(views::ArtifactTreeModel::kItemKindRole).toInt() ==
      static_cast<int>(views::ArtifactTreeModel::ItemKind::Diagnostics)) {
    diagnosticsDock_->show();
    diagnosticsDock_->raise();
  }
  if (showGuardsOrCode(treeIndex)) return;
  auto graph = treeModel_->graphAt(treeIndex);
  if (!graph) return;  // a compile, guards or diagnostics item: keep the graph on show
  const QString id = treeModel_->graphIdAt(treeIndex);
  const QString previousGraphId = nodesModel_->graphId();
  const ir::NodeId previousNode = selectedNode();
  nodesModel_->setGraph(graph, id);
  compareView_->setA(treeModel_->artifact(), id, graph);
  nodesTable_->setColumnHidden(views::GraphNodesModel::MeasuredTimeColumn, true);  // until a profile prices it
  if (!runOpenedPlan(id)) {
    planSession_->setGraph(treeModel_->artifact(), id, graph);
    pipelinePanel_->setPipelineText(planSession_->defaultPipeline());
    planSession_->run(planSession_->defaultPipeline());
  }
  // The session's target: the graph's analyses and costs are computed once for every view.
  graphView_->setGraph(planSession_->target());
  inspector_->clear();
  updateGraphTitle();
  nodesTable_->resizeColumnsToContents();
  QHeaderView* header = nodesTable_->horizontalHeader();
  for (int column = 0; column < header->count(); ++column) {
    header->resizeSection(column, std::min(header->sectionSize(column), kMaxNodeColumnWidth));
  }
  followSelection(previousGraphId, previousNode);
  if (!keepCode_) {  // a graph the user picked: the code tab shows its FX text
    codeShowsFx_ = true;
    if (centralTabs_->currentWidget() == codeView_) showFxText();
  }
}

void MainWindow::updateGraphTitle() {
  const auto& graph = nodesModel_->graph();
  if (!graph) return;
  const ir::GraphCounts counts = ir::countGraph(*graph);
  QString title = tr("%1 · %2 nodes · %3 calls · %4 inputs")
                      .arg(nodesModel_->graphId())
                      .arg(counts.nodes)
                      .arg(counts.calls)
                      .arg(counts.placeholders);
  // A graph traced on the CPU is priced on the target GPU all the same: say so where its figures are.
  const auto& target = planSession_->target();
  if (target && target->sharedGraph() == graph && target->capturedOnCpu()) {
    title = QStringLiteral("%1 · <span style='color:#a15c00'>%2</span>")
                .arg(title.toHtmlEscaped(), tr("captured on the CPU, priced as on %1")
                                                .arg(views::toQString(planSession_->hardwareProfile().name).toHtmlEscaped()));
  }
  graphTitle_->setText(title);
}

void MainWindow::showNode(ir::NodeId node) {
  graphView_->selectNode(node);
  timelineView_->setSelectedNode(node);
  if (node == ir::kNoNode) {
    inspector_->clear();
    return;
  }
  inspector_->setNode(nodesModel_->graph(), node, stageLinks_->linksOf(nodesModel_->graphId(), node));
}

void MainWindow::selectNode(ir::NodeId node) {
  QModelIndex index = nodesProxy_->mapFromSource(nodesModel_->indexOfNode(node));
  if (!index.isValid()) {  // filtered out: show every node again
    search_->clear();
    index = nodesProxy_->mapFromSource(nodesModel_->indexOfNode(node));
  }
  nodesTable_->setCurrentIndex(index);
  nodesTable_->scrollTo(index);
}

void MainWindow::showCentralView(CentralView view) {
  if (snapshotView_->hasSnapshot()) view = CentralView::Snapshot;  // the only tab a snapshot has
  switch (view) {
    case CentralView::Graph: centralTabs_->setCurrentWidget(graphView_); break;
    case CentralView::Nodes: centralTabs_->setCurrentWidget(nodesTable_); break;
    case CentralView::Guards: centralTabs_->setCurrentWidget(guardsView_); break;
    case CentralView::Code: centralTabs_->setCurrentWidget(codeView_); break;
    case CentralView::Compiles: centralTabs_->setCurrentWidget(compilesView_); break;
    case CentralView::Lifecycle:
      if (magiTimelineView_->hasTimeline()) centralTabs_->setCurrentWidget(magiTimelineView_);
      break;
    case CentralView::Snapshot:
      if (snapshotView_->hasSnapshot()) centralTabs_->setCurrentWidget(snapshotView_);
      break;
    case CentralView::Compare: centralTabs_->setCurrentWidget(compareView_); break;
  }
}

void MainWindow::showPlanView(PlanView view) {
  QDockWidget* dock = pipelineDock_;
  switch (view) {
    case PlanView::Timeline: dock = timelineDock_; break;
    case PlanView::Pipeline: dock = pipelineDock_; break;
    case PlanView::Gantt: dock = ganttDock_; break;
    case PlanView::Budget: dock = budgetDock_; break;
    case PlanView::Pareto: dock = paretoDock_; break;
    case PlanView::SavedTensors: dock = savedTensorDock_; break;
    case PlanView::OffloadRun: dock = offloadRunDock_; break;
    case PlanView::Measured: dock = calibrationDock_; break;
  }
  dock->show();
  dock->raise();
  if (view == PlanView::Budget) {
    resizeDocks({budgetDock_}, {460}, Qt::Horizontal);
    resizeDocks({budgetDock_}, {320}, Qt::Vertical);
  } else if (view != PlanView::Pipeline) {
    resizeDocks({dock}, {height() * 2 / 5}, Qt::Vertical);
  } else {
    resizeDocks({pipelineDock_}, {520}, Qt::Horizontal);
    resizeDocks({pipelineDock_}, {height() * 3 / 5}, Qt::Vertical);
  }
}

void MainWindow::rememberRecent(const QString& path) {
  if (!options_.useSettings) return;
  QSettings settings;
  QStringList recent = settings.value(settingsKey("recentFiles")).toStringList();
  const QString absolute = QFileInfo(path).absoluteFilePath();
  recent.removeAll(absolute);
  recent.prepend(absolute);
  while (recent.size() > kMaxRecentFiles) recent.removeLast();
  settings.setValue(settingsKey("recentFiles"), recent);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  recentMenu_->clear();
  const QStringList recent =
      options_.useSettings ? QSettings().value(settingsKey("recentFiles")).toStringList() : QStringList();
  for (const QString& path : recent) {
    recentMenu_->addAction(QFileInfo(path).fileName(), this, [this, path] { openPath(path); })->setToolTip(path);
  }
  recentMenu_->setEnabled(!recent.isEmpty());
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (options_.useSettings) {
    QSettings settings;
    settings.setValue(settingsKey("window/geometry"), saveGeometry());
    settings.setValue(settingsKey("window/state"), saveState());
  }
  QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  const QMimeData* mime = event->mimeData();
  if (mime->hasUrls() && !mime->urls().isEmpty() && mime->urls().first().isLocalFile()) {
    event->acceptProposedAction();
  }
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QList<QUrl> urls = event->mimeData()->urls();
  if (urls.isEmpty() || !urls.first().isLocalFile()) return;
  openPath(urls.first().toLocalFile());
  event->acceptProposedAction();
}

// --- Guards, code and the selection across graph stages -------------------------------------------

void MainWindow::createStageViews() {
  stageLinks_ = std::make_unique<views::StageLinks>();
  guardsView_ = new views::GuardsView(centralTabs_);
  codeView_ = new views::CodeView(centralTabs_);
  centralTabs_->addTab(guardsView_, tr("Guards"));
  centralTabs_->addTab(codeView_, tr("Code"));
  compilesView_ = new views::CompilesView(centralTabs_);
  centralTabs_->addTab(compilesView_, tr("Compiles"));
  connect(compilesView_, &views::CompilesView::compileActivated, this, &MainWindow::selectCompile);
  magiTimelineView_ = new views::MagiTimelineView(centralTabs_);
  centralTabs_->setTabVisible(centralTabs_->addTab(magiTimelineView_, tr("Lifecycle")), false);
  snapshotView_ = new views::SnapshotView(centralTabs_);
  centralTabs_->setTabVisible(centralTabs_->addTab(snapshotView_, tr("Snapshot")), false);
  compareView_ = new views::CompareView(centralTabs_);
  centralTabs_->addTab(compareView_, tr("Compare"));
  connect(compareView_, &views::CompareView::nodeActivated, this, [this](ir::NodeId node) {
    selectNode(node);
    showCentralView(CentralView::Graph);
  });
  connect(compareView_, &views::CompareView::openBRequested, this, &MainWindow::compareWithDialog);
  connect(planSession_, &views::PlanSession::finished, compareView_, [this](bool ok) {
    compareView_->setPlanA(ok && !planSession_->busy() ? planSession_->planRun() : nullptr);
  });
  connect(inspector_, &views::NodeInspector::stageNodeActivated, this, &MainWindow::selectGraphNode);
  connect(codeView_, &views::CodeView::nodeActivated, this, [this](const QString& graphId, ir::NodeId node) {
    keepCode_ = true;
    selectGraphNode(graphId, node);
    keepCode_ = false;
  });
  connect(centralTabs_, &QTabWidget::currentChanged, this, [this] {
    if (centralTabs_->currentWidget() == codeView_ && codeShowsFx_) showFxText();
  });
}

void MainWindow::showSnapshotLayout(bool snapshot) {
  for (QWidget* tab :
       std::initializer_list<QWidget*>{graphView_, nodesTable_, guardsView_, codeView_, compilesView_, compareView_}) {
    centralTabs_->setTabVisible(centralTabs_->indexOf(tab), !snapshot);
  }
  centralTabs_->setTabVisible(centralTabs_->indexOf(snapshotView_), snapshot);
  search_->setVisible(!snapshot);
  if (!snapshot) {
    snapshotView_->clear();
    for (QDockWidget* dock : std::exchange(hiddenForSnapshot_, {})) dock->show();
    return;
  }
  centralTabs_->setCurrentWidget(snapshotView_);
  auto* inspectorDock = qobject_cast<QDockWidget*>(inspector_->parentWidget());
  for (QDockWidget* dock : {inspectorDock, pipelineDock_, timelineDock_, budgetDock_, ganttDock_, paretoDock_,
                            savedTensorDock_, calibrationDock_, offloadRunDock_}) {
    if (dock && dock->isVisible() && !hiddenForSnapshot_.contains(dock)) {
      hiddenForSnapshot_.append(dock);
      dock->hide();
    }
  }
}

bool MainWindow::selectCompile(const QString& compileId) {
  const auto& artifact = treeModel_->artifact();
  if (!artifact || !artifact->trace) return false;
  QString chosen;
  for (const io::GraphEntry& g : artifact->trace->graphs) {
    if (views::toQString(g.compileId) != compileId || !g.parent.empty()) continue;
    if (chosen.isEmpty() || g.kind == "aot_joint_graph") chosen = views::toQString(g.id);
    if (g.kind == "aot_joint_graph") break;
  }
  if (chosen.isEmpty() || !selectGraph(chosen)) {
    statusBar()->showMessage(tr("Compile %1 logged no graph").arg(compileId));
    return false;
  }
  showCentralView(CentralView::Graph);
  return true;
}

void MainWindow::resetStageViews(const std::shared_ptr<const io::Artifact>& artifact) {
  compilesView_->setArtifact(artifact);
  magiTimelineView_->setArtifact(artifact);
  centralTabs_->setTabVisible(centralTabs_->indexOf(magiTimelineView_), magiTimelineView_->hasTimeline());
  stageLinks_->setArtifact(artifact);
  guardsView_->setArtifact(artifact);
  codeShowsFx_ = true;
  codeView_->clear();
}

bool MainWindow::showGuardsOrCode(const QModelIndex& treeIndex) {
  using Kind = views::ArtifactTreeModel::ItemKind;
  const auto kind = static_cast<Kind>(treeIndex.data(views::ArtifactTreeModel::kItemKindRole).toInt());
  const QVariant compile = treeIndex.data(views::ArtifactTreeModel::kCompileIndexRole);
  if (kind == Kind::Guards && compile.isValid()) {
    guardsView_->showCompile(compile.toInt());
    showCentralView(CentralView::Guards);
    return true;
  }
  const QVariant event = treeIndex.data(views::ArtifactTreeModel::kCodeEventRole);
  const auto& artifact = treeModel_->artifact();
  if (kind != Kind::Code || !event.isValid() || !artifact || !artifact->trace) return false;
  // Inductor names source nodes after the Dynamo graph, or after the AOT graph (backward nodes).
  std::vector<views::CodeGraph> graphs;
  const QString postGradId = treeIndex.data(views::ArtifactTreeModel::kCodeGraphRole).toString();
  const io::TraceCompile& traceCompile = artifact->trace->compiles[static_cast<size_t>(compile.toInt())];
  for (size_t graphIndex : traceCompile.graphs) {
    const io::GraphEntry& entry = artifact->trace->graphs[graphIndex];
    if (entry.kind == "dynamo_output_graph" && entry.parent.empty())
      graphs.insert(graphs.begin(), {views::toQString(entry.id), entry.graph});
    else if (views::toQString(entry.id) == postGradId)
      graphs.push_back({postGradId, entry.graph});
  }
  codeShowsFx_ = false;
  codeView_->setCode(tr("%1 · %2").arg(views::toQString(traceCompile.id), treeIndex.data().toString()),
                     views::toQString(artifact->trace->events[static_cast<size_t>(event.toLongLong())].payload),
                     views::CodeLanguage::Python, std::move(graphs));
  showCentralView(CentralView::Code);
  return true;
}

void MainWindow::showFxText() {
  const auto& graph = nodesModel_->graph();
  if (!graph) return;
  codeShowsFx_ = true;
  // Printing a large graph takes a moment; skip it when the text on show is this graph's already.
  const QString title = tr("%1 · FX graph").arg(nodesModel_->graphId());
  if (codeView_->title() != title) {
    codeView_->setCode(title, views::toQString(io::printFxText(*graph)), views::CodeLanguage::Python,
                       {{nodesModel_->graphId(), graph}});
  }
  if (const ir::NodeId node = selectedNode(); node < graph->size())
    codeView_->revealDefinition(views::toQString(graph->name(node)));
}

QString MainWindow::shownGraphId() const {
  return nodesModel_->graphId();
}

ir::NodeId MainWindow::selectedNode() const {
  return inspector_->node();
}

bool MainWindow::selectGraphNode(const QString& graphId, ir::NodeId node) {
  if (graphId != nodesModel_->graphId() && !selectGraph(graphId)) return false;
  selectNode(node);
  nodesTable_->scrollTo(nodesTable_->currentIndex(), QAbstractItemView::PositionAtCenter);
  return selectedNode() == node;
}

void MainWindow::followSelection(const QString& previousGraphId, ir::NodeId previousNode) {
  const ir::NodeId node = stageLinks_->follow(previousGraphId, previousNode, nodesModel_->graphId());
  if (node == ir::kNoNode) return;
  selectNode(node);
  nodesTable_->scrollTo(nodesTable_->currentIndex(), QAbstractItemView::PositionAtCenter);
}

}  // namespace lathe::studio

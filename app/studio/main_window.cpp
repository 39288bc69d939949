#include "main_window.h"

#include <QAction>
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

#include "views/artifact_loader.h"
#include "views/artifact_tree_model.h"
#include "views/diagnostics_model.h"
#include "views/formatting.h"
#include "views/graph_nodes_model.h"
#include "views/graph_view.h"
#include "views/memory_timeline_view.h"
#include "views/node_inspector.h"
#include "views/pipeline_panel.h"
#include "views/plan_session.h"

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
      planSession_(new views::PlanSession(this)) {
  setWindowTitle(tr("Lathe Studio"));
  setAcceptDrops(true);
  nodesProxy_->setSourceModel(nodesModel_);
  nodesProxy_->setSortRole(views::GraphNodesModel::kSortRole);
  nodesProxy_->setFilterKeyColumn(-1);
  nodesProxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);

  createWidgets();
  createDocks();
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
  connect(graphView_, &views::GraphView::nodeSelected, this, &MainWindow::selectNode);
  connect(search_, &QLineEdit::textChanged, nodesProxy_, &QSortFilterProxyModel::setFilterFixedString);
  connect(timelineView_, &views::MemoryTimelineView::nodeClicked, this, &MainWindow::selectNode);

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
  search_ = new QLineEdit(central);
  search_->setObjectName(QStringLiteral("nodeSearch"));
  search_->setPlaceholderText(tr("Filter nodes: name, target, category, shape, source…"));
  search_->setClearButtonEnabled(true);
  search_->setMinimumWidth(300);
  auto* focusSearch = new QAction(tr("Find Node"), this);
  focusSearch->setShortcut(QKeySequence::Find);
  connect(focusSearch, &QAction::triggered, search_, [this] { search_->setFocus(Qt::ShortcutFocusReason); });
  addAction(focusSearch);
  header->addWidget(graphTitle_, 1);
  header->addWidget(search_);
  layout->addLayout(header);

  centralTabs_ = new QTabWidget(central);
  centralTabs_->setObjectName(QStringLiteral("centralTabs"));
  centralTabs_->setDocumentMode(true);
  graphView_ = new views::GraphView(centralTabs_);
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

void MainWindow::createMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* openFile = file->addAction(tr("&Open File…"), this, &MainWindow::openFileDialog);
  openFile->setShortcut(QKeySequence::Open);
  file->addAction(tr("Open &Folder…"), this, &MainWindow::openDirectoryDialog);
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  file->addAction(tr("Open &Example"), this, [this] { openPath(exampleArtifactPath()); });
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
  rebuildRecentMenu();

  menuBar()->addMenu(viewMenu_);

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About Lathe Studio"), this, [this] {
    QMessageBox::about(this, tr("About Lathe Studio"),
                       tr("Lathe Studio %1: a workbench for PyTorch compiler artifacts (TORCH_TRACE logs, "
                          "torch.export archives, CUDA memory snapshots).")
                           .arg(QApplication::applicationVersion()));
  });
}

QString MainWindow::exampleArtifactPath() {
  const QString path = QString::fromUtf8(LATHE_EXAMPLE_ARTIFACT);
  return QFileInfo::exists(path) ? path : QString();
}

void MainWindow::openPath(const QString& path) {
  if (path.isEmpty()) {
    diagnosticsModel_->setLoadError(tr("No file to open (the bundled example is missing)."), {});
    emit loadFinished(false);
    return;
  }
  loader_->load(path);
}

void MainWindow::openFileDialog() {
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Open artifact"), {}, tr("PyTorch artifacts (*.log *.log.gz *.gz *.pt2 *.pickle *.txt);;All files (*)"));
  if (!path.isEmpty()) openPath(path);
}

void MainWindow::openDirectoryDialog() {
  const QString path = QFileDialog::getExistingDirectory(this, tr("Open a folder of TORCH_TRACE rank logs"));
  if (!path.isEmpty()) openPath(path);
}

void MainWindow::onLoadFinished(const views::LoadOutcome& outcome) {
  progressBar_->hide();
  cancelButton_->hide();
  const QString name = QFileInfo(loader_->path()).fileName();
  if (outcome.cancelled) {
    statusBar()->showMessage(tr("Loading %1 cancelled").arg(name));
    emit loadFinished(false);
    return;
  }
  inspector_->clear();
  nodesModel_->setGraph(nullptr, {});
  graphView_->clear();
  planSession_->setGraph(nullptr, {}, nullptr);
  graphTitle_->setText(tr("No graph selected"));
  if (!outcome.artifact) {
    treeModel_->clear();
    diagnosticsModel_->setLoadError(outcome.error, outcome.errorLocation);
    diagnosticsDock_->show();
    setWindowTitle(tr("Lathe Studio"));
    statusBar()->showMessage(tr("Could not open %1: %2").arg(name, outcome.error));
    graphTitle_->setText(tr("Could not open %1; the Diagnostics pane says why.").arg(name));
    emit loadFinished(false);
    return;
  }
  treeModel_->setArtifact(outcome.artifact);
  diagnosticsModel_->setDiagnostics(outcome.artifact->diagnostics());
  // An empty diagnostics pane only takes room from the nodes; it comes back when there is news.
  diagnosticsDock_->setVisible(diagnosticsModel_->rowCount() > 0);
  tree_->expandToDepth(1);
  setWindowTitle(tr("%1 — Lathe Studio").arg(name));
  rememberRecent(loader_->path());
  statusBar()->showMessage(tr("Loaded %1: %n graph(s)", nullptr, treeModel_->graphCount()).arg(name) +
                           tr(", %n diagnostic(s)", nullptr, diagnosticsModel_->rowCount()));
  selectPreferredGraph();
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
  const auto& graph = nodesModel_->graph();
  if (!graph) return;
  ir::NodeId chosen = ir::kNoNode;
  for (ir::NodeId id = 0; id < graph->size() && chosen == ir::kNoNode; ++id) {
    if (views::isCallNode(graph->node(id)) && ir::lookupOp(graph->target(id)).category == ir::OpCategory::Matmul) {
      chosen = id;
    }
  }
  for (ir::NodeId id = 0; id < graph->size() && chosen == ir::kNoNode; ++id) {
    if (views::isCallNode(graph->node(id))) chosen = id;
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
  auto graph = treeModel_->graphAt(treeIndex);
  if (!graph) return;  // a compile, guards or diagnostics item: keep the graph on show
  const QString id = treeModel_->graphIdAt(treeIndex);
  nodesModel_->setGraph(graph, id);
  graphView_->setGraph(graph, id);
  planSession_->setGraph(treeModel_->artifact(), id, graph);
  pipelinePanel_->setPipelineText(planSession_->defaultPipeline());
  planSession_->run(planSession_->defaultPipeline());
  inspector_->clear();
  const ir::GraphCounts counts = ir::countGraph(*graph);
  graphTitle_->setText(
      tr("%1 · %2 nodes · %3 calls · %4 inputs").arg(id).arg(counts.nodes).arg(counts.calls).arg(counts.placeholders));
  nodesTable_->resizeColumnsToContents();
  QHeaderView* header = nodesTable_->horizontalHeader();
  for (int column = 0; column < header->count(); ++column) {
    header->resizeSection(column, std::min(header->sectionSize(column), kMaxNodeColumnWidth));
  }
}

void MainWindow::showNode(ir::NodeId node) {
  graphView_->selectNode(node);
  if (node == ir::kNoNode) {
    inspector_->clear();
    return;
  }
  inspector_->setNode(nodesModel_->graph(), node);
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
  centralTabs_->setCurrentWidget(view == CentralView::Graph ? static_cast<QWidget*>(graphView_) : nodesTable_);
}

void MainWindow::showPlanView(PlanView view) {
  QDockWidget* dock = view == PlanView::Timeline ? timelineDock_ : pipelineDock_;
  dock->show();
  dock->raise();
  if (view == PlanView::Timeline) {
    resizeDocks({timelineDock_}, {height() * 2 / 5}, Qt::Vertical);
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

}  // namespace lathe::studio

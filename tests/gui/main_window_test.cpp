// The main window on real samples: loading selects the first joint graph, selecting a graph in the
// tree shows its nodes, selecting a node shows it in the inspector, and damaged input ends in
// diagnostics or an error in the window, never a crash.
#include "gui_support.h"
#include "main_window.h"

#include <QDockWidget>
#include <QLabel>
#include <QFile>
#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>
#include <algorithm>

#include "hw/hw_profile.h"
#include "io/artifact.h"
#include "passes/plan_target.h"
#include "views/artifact_tree_model.h"
#include "views/diagnostics_model.h"
#include "views/graph_nodes_model.h"
#include "views/node_inspector.h"
#include "views/plan_session.h"

using lathe::studio::MainWindow;
using lathe::views::ArtifactTreeModel;
using lathe::views::GraphNodesModel;

namespace {

using lathe::testing::sample;

struct WindowParts {
  QTreeView* tree;
  ArtifactTreeModel* treeModel;
  QTableView* nodesTable;
  GraphNodesModel* nodesModel;
  QSortFilterProxyModel* nodesProxy;
  lathe::views::NodeInspector* inspector;
  lathe::views::DiagnosticsModel* diagnostics;
};

WindowParts parts(MainWindow& window) {
  WindowParts p{};
  p.tree = window.findChild<QTreeView*>(QStringLiteral("artifactTree"));
  p.treeModel = qobject_cast<ArtifactTreeModel*>(p.tree->model());
  p.nodesTable = window.findChild<QTableView*>(QStringLiteral("nodesTable"));
  p.nodesProxy = qobject_cast<QSortFilterProxyModel*>(p.nodesTable->model());
  p.nodesModel = qobject_cast<GraphNodesModel*>(p.nodesProxy->sourceModel());
  p.inspector = window.findChild<lathe::views::NodeInspector*>();
  p.diagnostics = qobject_cast<lathe::views::DiagnosticsModel*>(
      window.findChild<QTableView*>(QStringLiteral("diagnosticsTable"))->model());
  return p;
}

// Opens `path` and waits for the load to end; returns whether it succeeded.
bool openAndWait(MainWindow& window, const QString& path) {
  QSignalSpy spy(&window, &MainWindow::loadFinished);
  window.openPath(path);
  if (!spy.wait(60000)) return false;
  return spy.first().first().toBool();
}

}  // namespace

class MainWindowTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void selectionFlowsFromTreeToNodesToInspector();
  void multiRankDirectoryLoads();
  void unreadableFileShowsError();
  void damagedLogShowsDiagnostics();
  void truncatedGzipDoesNotCrash();
  void cancelKeepsThePreviousArtifact();
  void cpuCaptureSaysItIsPricedOnTheTarget();
};

// A .pt2 exported on the CPU (fp32) is priced on the target GPU like any graph: the title over the
// graph and the budget panel say so, with the target's name; a CUDA capture's do not.
void MainWindowTest::cpuCaptureSaysItIsPricedOnTheTarget() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  auto* title = window.findChild<QLabel*>(QStringLiteral("graphTitle"));
  auto* outcome = window.findChild<QLabel*>(QStringLiteral("budgetOutcome"));
  QVERIFY(title && outcome);
  QSignalSpy planned(window.planSession(), &lathe::views::PlanSession::finished);
  QVERIFY(openAndWait(window, sample("pt2/gpt2_tiny.pt2")));
  QVERIFY(!planned.isEmpty() || planned.wait(60000));
  const QString hardware = QString::fromStdString(window.planSession()->hardwareProfile().name);
  QVERIFY2(title->text().contains(QStringLiteral("captured on the CPU")) && title->text().contains(hardware),
           qPrintable(title->text()));
  QVERIFY2(outcome->text().contains(QStringLiteral("Captured on the CPU")), qPrintable(outcome->text()));

  planned.clear();
  QVERIFY(openAndWait(window, sample("captures/llama3_8b_2l_tiny_train.log.gz")));
  QVERIFY(!planned.isEmpty() || planned.wait(60000));
  QVERIFY(!title->text().contains(QStringLiteral("CPU")));
  QVERIFY(!outcome->text().contains(QStringLiteral("CPU")));
}

void MainWindowTest::selectionFlowsFromTreeToNodesToInspector() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  const QString path = sample("captures/llama3_8b_2l_tiny_train.log.gz");
  QVERIFY(openAndWait(window, path));
  const WindowParts p = parts(window);

  // After loading, the first joint graph is on show with its costliest node on the target in the
  // inspector.
  QVERIFY(p.nodesModel->graphId().contains(QStringLiteral("joint")));
  QVERIFY(p.inspector->node() != lathe::ir::kNoNode);
  {
    // Priced as the planner prices it: fusion groups as kernels (passes::PlanTarget::nodeSeconds).
    const lathe::passes::PlanTarget target(lathe::io::loadArtifact(path.toStdString()), p.nodesModel->graphId().toStdString(),
                                           lathe::hw::resolveHwProfile(window.planSession()->hardware().toStdString()));
    const std::vector<double>& seconds = target.nodeSeconds();
    QCOMPARE(seconds[p.inspector->node()], *std::max_element(seconds.begin(), seconds.end()));
  }

  const auto listings = lathe::io::loadArtifact(path.toStdString()).graphs();
  QVERIFY(listings.size() > 2);
  for (const auto& listing : listings) {
    const QString id = QString::fromStdString(listing.id);
    const QModelIndex index = p.treeModel->indexOfGraph(id);
    QVERIFY(index.isValid());
    p.tree->setCurrentIndex(index);
    QCOMPARE(p.nodesModel->graphId(), id);
    QCOMPARE(p.nodesModel->rowCount(), static_cast<int>(listing.graph->size()));
  }

  // Selecting a node shows it; following a link to one of its inputs selects that input.
  QVERIFY(window.selectGraph(QString::fromStdString(listings.front().id)));
  const auto& graph = *p.nodesModel->graph();
  lathe::ir::NodeId withInput = lathe::ir::kNoNode;
  for (lathe::ir::NodeId id = 0; id < graph.size() && withInput == lathe::ir::kNoNode; ++id) {
    if (!graph.inputs(id).empty() && graph.node(id).kind != lathe::ir::NodeKind::Output) withInput = id;
  }
  QVERIFY(withInput != lathe::ir::kNoNode);
  p.nodesTable->setCurrentIndex(p.nodesProxy->mapFromSource(p.nodesModel->indexOfNode(withInput)));
  QCOMPARE(p.inspector->node(), withInput);
  const QString shown = p.inspector->plainText();
  QVERIFY(shown.contains(QString::fromUtf8(graph.name(withInput).data(), graph.name(withInput).size())));
  QVERIFY(shown.contains(QStringLiteral("Arguments")));

  const lathe::ir::NodeId input = graph.inputs(withInput).front();
  emit p.inspector->nodeActivated(input);
  QCOMPARE(p.nodesModel->nodeAt(p.nodesProxy->mapToSource(p.nodesTable->currentIndex())), input);
  QCOMPARE(p.inspector->node(), input);
}

void MainWindowTest::multiRankDirectoryLoads() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  QVERIFY(openAndWait(window, sample("captures/llama_4l_fsdp_ranks")));
  const WindowParts p = parts(window);
  QVERIFY(p.treeModel->graphCount() > 0);
  QVERIFY(p.nodesModel->graphId().startsWith(QStringLiteral("rank")));
}

void MainWindowTest::unreadableFileShowsError() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString path = dir.filePath(QStringLiteral("garbage.log"));
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(QByteArray(4096, '\x07'));
  file.close();

  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openAndWait(window, sample("captures/gpt2_tiny_train.log.gz")));
  QVERIFY(!openAndWait(window, path));
  const WindowParts p = parts(window);
  QCOMPARE(p.diagnostics->rowCount(), 1);
  QCOMPARE(p.diagnostics->count(lathe::Severity::Error), size_t{1});
  QVERIFY(!p.diagnostics->data(p.diagnostics->index(0, lathe::views::DiagnosticsModel::MessageColumn))
               .toString()
               .isEmpty());
  // The previous artifact is gone, not left on show as if it were the damaged one.
  QCOMPARE(p.treeModel->rowCount(), 0);
  QCOMPARE(p.nodesModel->rowCount(), 0);
}

void MainWindowTest::damagedLogShowsDiagnostics() {
  QFile original(sample("tlparse/simple.log"));
  QVERIFY(original.open(QIODevice::ReadOnly));
  QByteArray text = original.readAll();
  // Change one payload byte: the record's md5 no longer matches, the rest still loads.
  const qsizetype payload = text.indexOf("\n\t");
  QVERIFY(payload > 0);
  text[payload + 2] = text[payload + 2] == 'x' ? 'y' : 'x';
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("damaged.log"));
  QFile damaged(path);
  QVERIFY(damaged.open(QIODevice::WriteOnly));
  damaged.write(text);
  damaged.close();

  MainWindow window(MainWindow::Options{.useSettings = false});
  window.resize(1600, 1000);
  window.show();
  QVERIFY(openAndWait(window, path));
  const WindowParts p = parts(window);
  QVERIFY(p.treeModel->graphCount() > 0);
  QVERIFY(p.diagnostics->count(lathe::Severity::Warning) > 0);
  // The pane is a tab of the plots at their full width, counted, not a strip squeezed beside the
  // frontier; warnings leave the plots in front.
  auto* diagnosticsDock = window.findChild<QDockWidget*>(QStringLiteral("diagnosticsDock"));
  auto* timelineDock = window.findChild<QDockWidget*>(QStringLiteral("timelineDock"));
  QVERIFY(diagnosticsDock->toggleViewAction()->isChecked());  // in the window, behind the timeline
  QVERIFY(window.tabifiedDockWidgets(timelineDock).contains(diagnosticsDock));
  QCOMPARE(diagnosticsDock->windowTitle(), QStringLiteral("Diagnostics (%1)").arg(p.diagnostics->rowCount()));
  diagnosticsDock->raise();  // its tab clicked
  QVERIFY(lathe::testing::waitUntil([&] { return diagnosticsDock->width() == timelineDock->width() && timelineDock->width() > 800; }));
  bool md5 = false;
  for (int row = 0; row < p.diagnostics->rowCount(); ++row) {
    md5 = md5 || p.diagnostics->data(p.diagnostics->index(row, lathe::views::DiagnosticsModel::CodeColumn))
                     .toString()
                     .contains(QStringLiteral("md5"));
  }
  QVERIFY(md5);
}

void MainWindowTest::truncatedGzipDoesNotCrash() {
  QFile original(sample("captures/mixtral_2l_tiny_train.log.gz"));
  QVERIFY(original.open(QIODevice::ReadOnly));
  const QByteArray bytes = original.readAll();
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("truncated.log.gz"));
  QFile truncated(path);
  QVERIFY(truncated.open(QIODevice::WriteOnly));
  truncated.write(bytes.left(bytes.size() / 2));
  truncated.close();

  MainWindow window(MainWindow::Options{.useSettings = false});
  openAndWait(window, path);
  // Loaded with warnings or refused with an error: either way the window says so.
  QVERIFY(parts(window).diagnostics->rowCount() > 0);
}

void MainWindowTest::cancelKeepsThePreviousArtifact() {
  // A 64 MiB log (one sample's records over and over): long enough that Cancel, pressed right
  // after the load starts, lands while the worker still reads.
  QFile original(sample("tlparse/simple.log"));
  QVERIFY(original.open(QIODevice::ReadOnly));
  const QByteArray records = original.readAll();
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("long.log"));
  QFile large(path);
  QVERIFY(large.open(QIODevice::WriteOnly));
  for (qint64 written = 0; written < (qint64{64} << 20); written += records.size()) large.write(records);
  large.close();

  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openAndWait(window, sample("captures/gpt2_tiny_train.log.gz")));
  const WindowParts p = parts(window);
  const int graphs = p.treeModel->graphCount();
  const QString graphId = p.nodesModel->graphId();

  QSignalSpy spy(&window, &MainWindow::loadFinished);
  window.openPath(path);
  auto* cancel = window.findChild<QPushButton*>(QStringLiteral("cancelLoad"));
  QVERIFY(cancel->isVisibleTo(&window));
  cancel->click();
  QVERIFY(spy.wait(60000));
  QCOMPARE(spy.first().first().toBool(), false);
  QVERIFY(!cancel->isVisibleTo(&window));
  QCOMPARE(p.treeModel->graphCount(), graphs);
  QCOMPARE(p.nodesModel->graphId(), graphId);
}

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"

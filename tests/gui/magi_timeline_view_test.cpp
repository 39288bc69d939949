// MagiCompiler dumps in the studio (tests/data/magi_depyf): the piecewise dump opens on its captured
// graph with its pieces, guards and code in the tree and a Lifecycle tab whose lanes, spans and
// table follow the timeline, opening on the first failure; clicking the failed backend call selects it and shows its graph file.
// The graph-break dump, whose compiles kept no graph, opens on its Lifecycle. The model passes
// QAbstractItemModelTester.
#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <qcustomplot.h>

#include "gui_support.h"
#include "main_window.h"
#include "views/artifact_tree_model.h"
#include "views/magi_timeline_model.h"
#include "views/magi_timeline_view.h"

using lathe::studio::MainWindow;
using lathe::views::MagiTimelineModel;
using lathe::views::MagiTimelineView;

namespace {

const QString kDumps = QStringLiteral(LATHE_SOURCE_DIR "/tests/data/magi_depyf");

bool openAndWait(MainWindow& window, const QString& path) {
  QSignalSpy spy(&window, &MainWindow::loadFinished);
  window.openPath(path);
  if (!spy.wait(60000)) return false;
  return spy.first().first().toBool();
}

// The names under the tree's compile items, depth first.
void collectNames(const QAbstractItemModel& model, const QModelIndex& parent, QStringList& out) {
  for (int row = 0; row < model.rowCount(parent); ++row) {
    const QModelIndex index = model.index(row, 0, parent);
    out << index.data().toString();
    collectNames(model, index, out);
  }
}

}  // namespace

class MagiTimelineViewTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void piecewiseDumpOpensWithPiecesAndLifecycle();
  void clickingTheFailedRunSelectsItAndShowsItsFile();
  void dumpWithoutGraphsOpensOnItsLifecycle();
};

void MagiTimelineViewTest::piecewiseDumpOpensWithPiecesAndLifecycle() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openAndWait(window, kDumps + QStringLiteral("/piecewise")));
  QCOMPARE(window.shownGraphId(), QStringLiteral("forward/0:dynamo_output_graph"));
  QStringList names;
  collectNames(*window.treeModel(), {}, names);
  for (const QString& expected : {QStringLiteral("forward/0 · forward"), QStringLiteral("magi_split_graph"),
                                  QStringLiteral("magi_splitting_op"), QStringLiteral("Guards"),
                                  QStringLiteral("Decompiled bytecode"),
                                  QStringLiteral("Inductor output code · submod_0")}) {
    QVERIFY2(names.contains(expected), qPrintable(expected + QStringLiteral(" not in ") + names.join(u',')));
  }
  QCOMPARE(names.count(QStringLiteral("magi_piece")), 3);

  MagiTimelineView* view = window.magiTimelineView();
  QVERIFY(view->hasTimeline());
  auto* tabs = qobject_cast<QTabWidget*>(view->parentWidget()->parentWidget());
  QVERIFY(tabs);
  QVERIFY(tabs->isTabVisible(tabs->indexOf(view)));
  MagiTimelineModel* model = view->model();
  QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QCOMPARE(model->rowCount(), 72);  // the lines of timeline.jsonl
  // A span or a tick per event that is not a before event; a lane per lifecycle.
  int ends = 0;
  QSet<QString> lifecycles;
  for (int row = 0; row < model->rowCount(); ++row) {
    lifecycles << model->index(row, MagiTimelineModel::LifecycleColumn).data().toString();
    if (model->index(row, MagiTimelineModel::PhaseColumn).data().toString() != QStringLiteral("before")) ++ends;
  }
  QCOMPARE(view->spanCount(), ends);
  QCOMPARE(view->laneCount(), lifecycles.size());
  // The view opens on the first failure: piece 0's compile, event 13.
  QCOMPARE(view->table()->currentIndex().row(), 13);
  QCOMPARE(view->fileBox()->currentText(), QStringLiteral("failed_lifecycle_graph_module.py"));
  // The restart's error is read off the failed event's attributes.
  const int failedCall = 17;
  QCOMPARE(model->index(failedCall, MagiTimelineModel::PhaseColumn).data().toString(), QStringLiteral("failed"));
  QCOMPARE(model->index(failedCall, MagiTimelineModel::DetailsColumn).data().toString(),
           QStringLiteral("TensorifyScalarRestartAnalysis"));
  QCOMPARE(model->index(10, MagiTimelineModel::DetailsColumn).data().toString(),
           QStringLiteral("cache miss (entry_not_found)"));

  // The view on show through --view's path.
  window.showCentralView(MainWindow::CentralView::Lifecycle);
  QCOMPARE(tabs->currentWidget(), view);
  // Opening a capture afterwards takes the tab away.
  QVERIFY(openAndWait(window, lathe::testing::sample("captures/gpt2_train.log.gz")));
  QVERIFY(!view->hasTimeline());
  QVERIFY(!tabs->isTabVisible(tabs->indexOf(view)));
}

void MagiTimelineViewTest::clickingTheFailedRunSelectsItAndShowsItsFile() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.resize(1400, 900);
  window.show();
  QVERIFY(openAndWait(window, kDumps + QStringLiteral("/piecewise")));
  window.showCentralView(MainWindow::CentralView::Lifecycle);
  QVERIFY(QTest::qWaitForWindowExposed(&window));
  MagiTimelineView* view = window.magiTimelineView();
  QCustomPlot* plot = view->plot();
  QVERIFY(lathe::testing::waitUntil([&] { return plot->width() > 100 && plot->height() > 100; }, 5000));
  plot->replot();
  // The failed backend call: event 17, its run from event 0's time to its own, on the
  // magi_backend_call lane (the first lifecycle to run).
  const MagiTimelineModel* model = view->model();
  const double start = model->index(0, MagiTimelineModel::TimeColumn).data(MagiTimelineModel::kSortRole).toDouble();
  const double end = model->index(17, MagiTimelineModel::TimeColumn).data(MagiTimelineModel::kSortRole).toDouble();
  const QPointF at(plot->xAxis->coordToPixel((start + end) / 2), plot->yAxis->coordToPixel(0));
  QCOMPARE(view->eventAt(at), 17);
  QSignalSpy selected(view, &MagiTimelineView::eventSelected);
  QTest::mousePress(plot, Qt::LeftButton, {}, at.toPoint());
  QCOMPARE(selected.count(), 1);
  QCOMPARE(selected.first().first().toLongLong(), 17);
  QCOMPARE(view->table()->currentIndex().row(), 17);
  QCOMPARE(view->fileBox()->currentText(), QStringLiteral("failed_lifecycle_graph_module.py"));
  QVERIFY(view->fileText()->toPlainText().contains(QStringLiteral("class GraphModule")));
  // A pass event keeps its file under the piece's folder: the box names the piece.
  QVERIFY(view->selectEvent(30));
  QVERIFY(view->fileBox()->currentText().startsWith(QStringLiteral("submod_0/")));
}

void MagiTimelineViewTest::dumpWithoutGraphsOpensOnItsLifecycle() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openAndWait(window, kDumps + QStringLiteral("/graph_break")));
  MagiTimelineView* view = window.magiTimelineView();
  auto* tabs = qobject_cast<QTabWidget*>(view->parentWidget()->parentWidget());
  QCOMPARE(tabs->currentWidget(), view);
  QCOMPARE(view->model()->rowCount(), 3);
  QCOMPARE(view->spanCount(), 3);  // three Inductor compiles, each a mark with its output code
  QVERIFY(view->selectEvent(2));
  QCOMPARE(view->fileBox()->currentText(), QStringLiteral("inductor_output.py"));
  QVERIFY(!view->fileText()->toPlainText().isEmpty());
  QStringList names;
  collectNames(*window.treeModel(), {}, names);
  QVERIFY(names.contains(QStringLiteral("__resume_at_102_6/0 · __resume_at_102_6")));
}

QTEST_MAIN(MagiTimelineViewTest)
#include "magi_timeline_view_test.moc"

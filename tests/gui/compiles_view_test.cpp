// The Compiles tab on gpt2's training capture: every compile a row with its time by phase as torch
// logged it (io::compileMetrics), a stacked bar per compile that logged a time, sorting by any
// phase, and a double-click that shows the compile's joint graph. The model passes
// QAbstractItemModelTester.
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTest>
#include <qcustomplot.h>

#include "gui_support.h"
#include "main_window.h"
#include "views/compile_metrics_model.h"
#include "views/compiles_view.h"

using lathe::studio::MainWindow;
using lathe::views::CompileMetricsModel;
using lathe::views::CompilesView;

namespace {

bool openAndWait(MainWindow& window, const QString& path) {
  QSignalSpy spy(&window, &MainWindow::loadFinished);
  window.openPath(path);
  if (!spy.wait(60000)) return false;
  return spy.first().first().toBool();
}

int rowOf(const CompileMetricsModel& model, const QString& compileId) {
  for (int row = 0; row < model.rowCount(); ++row) {
    if (model.index(row, CompileMetricsModel::CompileColumn).data().toString() == compileId) return row;
  }
  return -1;
}

}  // namespace

class CompilesViewTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void everyCompileWithItsPhases();
  void doubleClickShowsTheCompilesJointGraph();
};

void CompilesViewTest::everyCompileWithItsPhases() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openAndWait(window, lathe::testing::sample("captures/gpt2_train.log.gz")));
  CompilesView* view = window.compilesView();
  CompileMetricsModel* model = view->model();
  QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QCOMPARE(model->rowCount(), 8);  // the compiles `lathe info` lists, restarted attempts included
  const int forward = rowOf(*model, QStringLiteral("1/0_1"));
  QVERIFY(forward >= 0);
  // entire_frame_compile_time_s 18.954045; backend 15.403895; Inductor 6.87984; code generation 3.954635.
  QCOMPARE(model->index(forward, CompileMetricsModel::TotalColumn).data().toString(), QStringLiteral("18.95 s"));
  QCOMPARE(model->index(forward, CompileMetricsModel::DynamoColumn).data().toString(), QStringLiteral("3.55 s"));
  QCOMPARE(model->index(forward, CompileMetricsModel::AotAutogradColumn).data().toString(), QStringLiteral("8.52 s"));
  QCOMPARE(model->index(forward, CompileMetricsModel::InductorColumn).data().toString(), QStringLiteral("2.93 s"));
  QCOMPARE(model->index(forward, CompileMetricsModel::CodegenColumn).data().toString(), QStringLiteral("3.95 s"));
  QCOMPARE(model->index(forward, CompileMetricsModel::CacheColumn).data().toString(), QStringLiteral("FX 0/1 · AOT 0/1"));
  QCOMPARE(model->index(forward, CompileMetricsModel::GraphBreaksColumn).data().toString(), QStringLiteral("1"));
  QVERIFY(model->index(forward, CompileMetricsModel::TotalColumn).data(Qt::ToolTipRole).toString().contains(
      QStringLiteral("Longest Triton kernel compiles")));
  // An attempt that restarted logged nothing of its own: empty cells, not zeros.
  QCOMPARE(model->index(rowOf(*model, QStringLiteral("1/0")), CompileMetricsModel::TotalColumn).data().toString(), QString());
  // A bar for each compile that logged a time: 0/0_1, 1/0_1, 2/0_1, 3/0, 4/0.
  QCOMPARE(view->barCount(), 5);

  // Sorted by Dynamo's share, longest first: the forward compile leads.
  view->table()->sortByColumn(CompileMetricsModel::DynamoColumn, Qt::DescendingOrder);
  QCOMPARE(view->table()->model()->index(0, CompileMetricsModel::CompileColumn).data().toString(), QStringLiteral("1/0_1"));
}

void CompilesViewTest::doubleClickShowsTheCompilesJointGraph() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openAndWait(window, lathe::testing::sample("captures/gpt2_train.log.gz")));
  window.showCentralView(MainWindow::CentralView::Compiles);
  QVERIFY(QTest::qWaitForWindowExposed(&window));
  QTableView* table = window.compilesView()->table();
  const int row = rowOf(*window.compilesView()->model(), QStringLiteral("3/0"));
  const QModelIndex index =
      qobject_cast<QSortFilterProxyModel*>(table->model())->mapFromSource(window.compilesView()->model()->index(row, 0));
  table->scrollTo(index);
  QVERIFY(lathe::testing::waitUntil([&] { return table->visualRect(index).isValid(); }, 5000));
  QSignalSpy activated(window.compilesView(), &CompilesView::compileActivated);
  // A double click is a press, then the double-click event (the view wants the press's index).
  QTest::mousePress(table->viewport(), Qt::LeftButton, {}, table->visualRect(index).center());
  QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(index).center());
  QCOMPARE(activated.count(), 1);
  QCOMPARE(activated.first().first().toString(), QStringLiteral("3/0"));
  QCOMPARE(window.shownGraphId(), QStringLiteral("3/0:aot_joint_graph"));
  QVERIFY(!window.selectCompile(QStringLiteral("0/0")));  // a restarted attempt logged no graph
}

QTEST_MAIN(CompilesViewTest)
#include "compiles_view_test.moc"

// A CUDA memory snapshot opened on its own: the window gives it the Snapshot tab alone, with the
// memory over the trace, the allocator's state at the peak (largest first, each with its stack),
// another moment on a click, the readout under the mouse, and the graph tabs and plan docks back when
// a capture is opened after it. The allocations model passes QAbstractItemModelTester.
#include <QAbstractItemModelTester>
#include <QDockWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTest>
#include <qcustomplot.h>

#include "gui_support.h"
#include "main_window.h"
#include "views/formatting.h"
#include "views/snapshot_allocations_model.h"
#include "views/snapshot_view.h"

using lathe::studio::MainWindow;
using lathe::views::SnapshotAllocationsModel;
using lathe::views::SnapshotView;

namespace {

using lathe::testing::sample;

bool openAndWait(MainWindow& window, const QString& path) {
  QSignalSpy spy(&window, &MainWindow::loadFinished);
  window.openPath(path);
  if (!spy.wait(60000)) return false;
  return spy.first().first().toBool();
}

// The centre tabs on show, by text.
QStringList visibleTabs(const MainWindow& window) {
  const auto* tabs = window.findChild<QTabWidget*>(QStringLiteral("centralTabs"));
  QStringList shown;
  for (int i = 0; i < tabs->count(); ++i) {
    if (tabs->isTabVisible(i)) shown << tabs->tabText(i);
  }
  return shown;
}

}  // namespace

class SnapshotViewTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void snapshotOpensOnItsOwnAtItsPeak();
  void aClickShowsAnotherMoment();
  void aCaptureAfterTheSnapshotGetsTheGraphTabsBack();
  void snapshotWithoutTimesReadsByEvent();
};

void SnapshotViewTest::snapshotOpensOnItsOwnAtItsPeak() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.resize(1600, 1000);
  window.show();
  QVERIFY(openAndWait(window, sample("snapshots/llama3_8b_2l_train_snapshot.pickle")));
  SnapshotView* view = window.snapshotView();
  QVERIFY(view->hasSnapshot());
  QCOMPARE(visibleTabs(window), QStringList{QStringLiteral("Snapshot")});
  QCOMPARE(window.findChild<QTabWidget*>(QStringLiteral("centralTabs"))->currentWidget(), view);
  QVERIFY(!window.findChild<QDockWidget*>(QStringLiteral("paretoDock"))->isVisible());

  // At the peak, as `lathe memory` reports it: 75 live, the fp32 logits (1002 MiB) largest, made by
  // the user's loss at capture_one.py:50.
  QCOMPARE(view->moment(), view->device()->peakEventIndex);
  SnapshotAllocationsModel* model = view->allocations();
  QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QCOMPARE(model->live().liveCount, uint64_t{75});
  QCOMPARE(model->live().liveBytes, view->device()->peakAllocatedBytes);
  QCOMPARE(model->rowCount(), 75);
  QCOMPARE(model->live().largest.front().size, uint64_t{1050673152});
  QVERIFY(model->index(0, SnapshotAllocationsModel::UserFrameColumn).data().toString().contains(QStringLiteral("capture_one.py:50")));
  const QString stack = window.findChild<QPlainTextEdit*>(QStringLiteral("snapshotStack"))->toPlainText();
  QVERIFY2(stack.contains(QStringLiteral("▶ /home/user/capture/capture_one.py:50 in loss_of")), qPrintable(stack));
  QVERIFY(stack.indexOf(QStringLiteral("Python frames")) < stack.indexOf(QStringLiteral("Native frames")));

  // The plot: allocated and reserved over 2.2 s of trace; the readout names both at the peak.
  QCOMPARE(view->plot()->graphCount(), 2);
  QVERIFY(view->plot()->xAxis->range().upper > 2.0 && view->plot()->xAxis->range().upper < 2.5);
  const QString readout = view->readoutAt(view->plot()->xAxis->range().upper);
  QVERIFY2(readout.contains(QStringLiteral("allocated 2.83 GiB")) && readout.contains(QStringLiteral("reserved 7.15 GiB")),
           qPrintable(readout));
}

void SnapshotViewTest::aClickShowsAnotherMoment() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.resize(1600, 1000);
  window.show();
  QVERIFY(openAndWait(window, sample("snapshots/llama3_8b_2l_train_snapshot.pickle")));
  SnapshotView* view = window.snapshotView();
  QCustomPlot* plot = view->plot();
  // Half a second in, before the step's activations: the weights and little else.
  QSignalSpy moved(view, &SnapshotView::momentChanged);
  const QPoint at(static_cast<int>(plot->xAxis->coordToPixel(0.5)), static_cast<int>(plot->yAxis->coordToPixel(1)));
  QTest::mouseClick(plot, Qt::LeftButton, {}, at);
  QCOMPARE(moved.count(), 1);
  QVERIFY(view->moment() < view->device()->peakEventIndex);
  const uint64_t early = view->allocations()->live().liveBytes;
  QVERIFY(early < view->device()->peakAllocatedBytes);
  QVERIFY(early >= view->device()->initialAllocatedBytes / 2);
  QVERIFY(view->readoutAt(0.5).contains(lathe::views::formatBytes(early)));
  // Back to the peak with the button beside the state.
  view->findChild<QPushButton*>(QStringLiteral("snapshotPeak"))->click();
  QCOMPARE(view->moment(), view->device()->peakEventIndex);
}

void SnapshotViewTest::aCaptureAfterTheSnapshotGetsTheGraphTabsBack() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.resize(1600, 1000);
  window.show();
  QVERIFY(openAndWait(window, sample("snapshots/llama3_8b_2l_train_snapshot.pickle")));
  QVERIFY(openAndWait(window, sample("captures/llama3_8b_2l_tiny_train.log.gz")));
  QVERIFY(!window.snapshotView()->hasSnapshot());
  QCOMPARE(visibleTabs(window), (QStringList{QStringLiteral("Graph"), QStringLiteral("Nodes"), QStringLiteral("Guards"),
                                             QStringLiteral("Code"), QStringLiteral("Compiles"), QStringLiteral("Compare")}));
  QVERIFY(window.findChild<QDockWidget*>(QStringLiteral("paretoDock"))->isVisible());
  QVERIFY(!window.shownGraphId().isEmpty());
}

void SnapshotViewTest::snapshotWithoutTimesReadsByEvent() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.resize(1600, 1000);
  window.show();
  QVERIFY(openAndWait(window, sample("memory_snapshot/ftcourse/memory_snapshot.pickle")));
  SnapshotView* view = window.snapshotView();
  QVERIFY(view->hasSnapshot());
  QCOMPARE(view->plot()->xAxis->label(), QStringLiteral("Trace event"));
  QCOMPARE(view->allocations()->live().liveBytes, view->device()->peakAllocatedBytes);
  QVERIFY(view->readoutAt(10).startsWith(QStringLiteral("event 10")));
}

QTEST_MAIN(SnapshotViewTest)
#include "snapshot_view_test.moc"

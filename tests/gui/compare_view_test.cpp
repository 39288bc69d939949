// The Compare tab on real captures: B defaults to the same stage of another compile of the capture
// on show; another capture opened as B is diffed node by node as analysis::diffGraphs does, its rows
// coloured by kind and a double-click shows the node in A; a plan bundle opened as B brings its
// graph and is compared with the plan on show as plan::diffPlans does; a B that does not open
// leaves the comparison as it was. GraphDiffModel passes QAbstractItemModelTester.
#include <qcustomplot.h>

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "gui_support.h"
#include "main_window.h"
#include "passes/pipeline.h"
#include "passes/plan_builder.h"
#include "passes/plan_target.h"
#include "plan/plan_bundle.h"
#include "plan/plan_diff.h"
#include "views/compare_view.h"
#include "views/graph_diff_model.h"
#include "views/plan_session.h"

using lathe::studio::MainWindow;
using lathe::testing::sample;
using lathe::views::CompareView;
using lathe::views::GraphDiffModel;

namespace {

const QString kTrain = sample("captures/llama3_8b_2l_train.log.gz");
const QString kDynamic = sample("captures/llama3_8b_2l_dyntrain.log.gz");
const std::string kJoint = "0/0:aot_joint_graph";

bool openAndPlan(MainWindow& window, const QString& path) {
  QSignalSpy loaded(&window, &MainWindow::loadFinished);
  QSignalSpy planned(window.planSession(), &lathe::views::PlanSession::finished);
  window.openPath(path);
  if (!loaded.wait(120000) || !loaded.first().first().toBool()) return false;
  return (!planned.isEmpty() || planned.wait(180000)) && planned.last().first().toBool();
}

bool openB(MainWindow& window, const QString& path) {
  QSignalSpy loaded(window.compareView(), &CompareView::bLoaded);
  window.compareWith(path);
  return loaded.wait(120000) && loaded.first().first().toBool();
}

std::shared_ptr<const lathe::ir::Graph> graphOf(const QString& capture, const std::string& id) {
  const lathe::io::Artifact artifact = lathe::io::loadArtifact(capture.toStdString());
  for (const auto& listing : artifact.graphs()) {
    if (listing.id == id) return listing.graph;
  }
  return nullptr;
}

}  // namespace

class CompareViewTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void anotherCompileOfTheCaptureIsTheDefaultB();
  void aHiddenTabDiffsOnceShown();
  void anotherCaptureIsDiffedNodeByNode();
  void aPlanBundleIsComparedWithThePlanOnShow();
  void aBThatDoesNotOpenChangesNothing();
};

void CompareViewTest::anotherCompileOfTheCaptureIsTheDefaultB() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QSignalSpy loaded(&window, &MainWindow::loadFinished);
  window.openPath(sample("captures/gpt2_train.log.gz"));
  QVERIFY(loaded.wait(120000) && loaded.first().first().toBool());
  window.showCentralView(MainWindow::CentralView::Compare);
  QVERIFY(window.selectGraph(QStringLiteral("1/0_1:aot_joint_graph")));
  CompareView* view = window.compareView();
  QVERIFY(view->pathB().isEmpty());
  // The same stage of the other compile, not A itself.
  QCOMPARE(view->graphIdB(), QStringLiteral("3/0:aot_joint_graph"));
  const lathe::analysis::GraphDiff& d = view->model()->diff();
  QCOMPARE(d.nodesA, size_t{2605});
  QCOMPARE(d.nodesB, size_t{49});
  QVERIFY(!d.identical());
  // Another graph picked in B's list is diffed at once; A's own graph is identical to A.
  QVERIFY(view->selectGraphB(QStringLiteral("1/0_1:aot_joint_graph")));
  QVERIFY(view->model()->diff().identical());
  QCOMPARE(view->model()->rowCount(), 0);
  QVERIFY(view->summary()->text().contains(QStringLiteral("2605")));
}

// While the tab is hidden, graphs shown in the window do not cost a diff; showing it catches up.
void CompareViewTest::aHiddenTabDiffsOnceShown() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QSignalSpy loaded(&window, &MainWindow::loadFinished);
  window.openPath(sample("captures/gpt2_train.log.gz"));
  QVERIFY(loaded.wait(120000) && loaded.first().first().toBool());
  window.showCentralView(MainWindow::CentralView::Nodes);
  QVERIFY(window.selectGraph(QStringLiteral("1/0_1:aot_joint_graph")));
  CompareView* view = window.compareView();
  QVERIFY(!view->isVisible());
  QCOMPARE(view->model()->diff().nodesA, size_t{0});  // not diffed yet
  window.showCentralView(MainWindow::CentralView::Compare);
  QCOMPARE(view->model()->diff().nodesA, size_t{2605});
  QCOMPARE(view->graphIdB(), QStringLiteral("3/0:aot_joint_graph"));
}

void CompareViewTest::anotherCaptureIsDiffedNodeByNode() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openAndPlan(window, kTrain));
  QVERIFY(window.selectGraph(QString::fromStdString(kJoint)));
  QVERIFY(openB(window, kDynamic));
  CompareView* view = window.compareView();
  QCOMPARE(view->graphIdB(), QString::fromStdString(kJoint));  // the same id in B
  GraphDiffModel* model = view->model();
  QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);

  const auto a = graphOf(kTrain, kJoint), b = graphOf(kDynamic, kJoint);
  QVERIFY(a && b);
  const lathe::analysis::GraphDiff expected = lathe::analysis::diffGraphs(*a, *b);
  const lathe::analysis::GraphDiff& d = model->diff();
  QCOMPARE(d.changed, expected.changed);
  QCOMPARE(d.onlyInA, expected.onlyInA);
  QCOMPARE(d.onlyInB, expected.onlyInB);
  QVERIFY(d.changed > 0);
  QCOMPARE(static_cast<size_t>(model->rowCount()), d.changed + d.onlyInA + d.onlyInB);
  QVERIFY(view->summary()->text().contains(QStringLiteral("%1 changed").arg(d.changed)));
  QVERIFY(view->table()->isVisible());

  // The sequence length is symbolic in B: the embedding's value changed, named in both columns.
  int embedding = -1;
  for (int row = 0; row < model->rowCount(); ++row) {
    if (model->index(row, GraphDiffModel::NodeAColumn).data().toString() == QStringLiteral("embedding")) embedding = row;
  }
  QVERIFY(embedding >= 0);
  QCOMPARE(model->index(embedding, GraphDiffModel::ChangeColumn).data().toString(), QStringLiteral("changed"));
  QVERIFY(model->index(embedding, GraphDiffModel::WhatColumn).data().toString().contains(QStringLiteral("value")));
  QVERIFY(model->index(embedding, GraphDiffModel::ValueAColumn).data() != model->index(embedding, GraphDiffModel::ValueBColumn).data());
  QVERIFY(model->index(embedding, 0).data(Qt::BackgroundRole).isValid());

  // Calls per category, both sides, drawn as two bar sets.
  QCOMPARE(view->plot()->plottableCount(), 2);

  // A double-click shows the row's node in A, on the graph tab.
  auto* proxy = qobject_cast<QSortFilterProxyModel*>(view->table()->model());
  const QModelIndex cell = proxy->mapFromSource(model->index(embedding, GraphDiffModel::NodeAColumn));
  window.showCentralView(MainWindow::CentralView::Compare);
  view->table()->scrollTo(cell);
  QSignalSpy activated(view, &CompareView::nodeActivated);
  // A double click is a press, then the double-click event (the view wants the press's index).
  QTest::mousePress(view->table()->viewport(), Qt::LeftButton, {}, view->table()->visualRect(cell).center());
  QTest::mouseDClick(view->table()->viewport(), Qt::LeftButton, {}, view->table()->visualRect(cell).center());
  QCOMPARE(activated.count(), 1);
  QCOMPARE(activated.first().first().value<lathe::ir::NodeId>(), model->nodeA(model->index(embedding, 0)));
  QCOMPARE(window.selectedNode(), model->nodeA(model->index(embedding, 0)));
  QCOMPARE(window.shownGraphId(), QString::fromStdString(kJoint));
  QVERIFY(!view->planDiff());  // B is a capture: no plan to compare
}

void CompareViewTest::aPlanBundleIsComparedWithThePlanOnShow() {
  QTemporaryDir dir;
  const QString planPath = dir.filePath(QStringLiteral("heuristic.plan.json"));
  const lathe::passes::PlanTarget target(lathe::io::loadArtifact(kTrain.toStdString()), kJoint, lathe::hw::resolveHwProfile("h200"));
  const lathe::passes::PassContext context = target.context();
  const std::string pipeline = "split,fusion,recompute(policy=heuristic)";
  const lathe::plan::PlanBundle b = lathe::passes::buildPlanBundle(
      context, lathe::passes::runPipeline(context, lathe::passes::parsePipeline(pipeline)), kTrain.toStdString(), kJoint);
  lathe::plan::writePlan(planPath.toStdString(), b);

  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openAndPlan(window, kTrain));
  CompareView* view = window.compareView();
  QSignalSpy compared(view, &CompareView::planDiffChanged);
  QVERIFY(openB(window, planPath));
  QVERIFY(view->planDiff() || compared.wait(120000));
  while (!view->planDiff() && compared.wait(120000)) {
  }
  QVERIFY(view->planDiff());
  QCOMPARE(view->graphIdB(), QString::fromStdString(kJoint));  // the plan's graph
  QVERIFY(view->model()->diff().identical());                   // of the same capture

  // What plan::diffPlans says of the plan on show as Save Plan writes it and the file.
  const auto run = window.planSession()->planRun();
  const lathe::plan::PlanBundle a = lathe::passes::buildPlanBundle(run->target->context(), run->run, kTrain.toStdString(), kJoint);
  const lathe::plan::PlanDiff expected = lathe::plan::diffPlans(a, b);
  const lathe::plan::PlanDiff& d = *view->planDiff();
  QVERIFY(d.sameGraph);
  QCOMPARE(d.pipelineB, pipeline);
  QCOMPARE(d.savedA, expected.savedA);
  QCOMPARE(d.savedB, expected.savedB);
  QVERIFY(d.savedA != d.savedB);  // torch's saved set against the heuristic's
  QCOMPARE(d.savedOnlyA.size(), expected.savedOnlyA.size());
  QCOMPARE(d.peakB, b.timeline.peakBytes);
  QTableWidget* table = view->planTable();
  QVERIFY(table->isVisible());
  bool savedRow = false;
  for (int row = 0; row < table->rowCount(); ++row) {
    if (table->item(row, 0)->text() != QStringLiteral("values saved for the backward")) continue;
    savedRow = true;
    QCOMPARE(table->item(row, 1)->text(), QString::number(d.savedA));
    QCOMPARE(table->item(row, 2)->text(), QString::number(d.savedB));
  }
  QVERIFY(savedRow);

  // Another plan on show is compared again.
  const size_t savedByB = d.savedB;  // `d` is the view's diff, replaced by the next comparison
  QSignalSpy planned(window.planSession(), &lathe::views::PlanSession::finished);
  window.planSession()->run(QString::fromStdString(pipeline));
  QVERIFY(planned.wait(180000));
  while (!(view->planDiff() && view->planDiff()->savedA == savedByB) && compared.wait(120000)) {
  }
  QCOMPARE(view->planDiff()->savedA, view->planDiff()->savedB);
  QVERIFY(view->planDiff()->savedOnlyA.empty() && view->planDiff()->savedOnlyB.empty());
}

void CompareViewTest::aBThatDoesNotOpenChangesNothing() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openAndPlan(window, kTrain));
  QVERIFY(openB(window, kDynamic));
  CompareView* view = window.compareView();
  const size_t changed = view->model()->diff().changed;
  QSignalSpy loaded(view, &CompareView::bLoaded);
  window.compareWith(sample("captures/no_such_capture.log.gz"));
  QVERIFY(loaded.wait(60000));
  QVERIFY(!loaded.first().first().toBool());
  QVERIFY(!loaded.first().at(1).toString().isEmpty());
  QCOMPARE(view->model()->diff().changed, changed);
  QCOMPARE(view->pathB(), kDynamic);
  QVERIFY(view->summary()->text().contains(QStringLiteral("unchanged")));
}

QTEST_MAIN(CompareViewTest)
#include "compare_view_test.moc"

// The plan views on real captures: the default pipeline runs in the background when a graph is
// selected, the Pipeline dock steps through its states, the memory timeline plots the planned
// step's peak and picks nodes, and lathe-studio screenshots the plan views.
#include <qcustomplot.h>

#include <QImage>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "gui_support.h"
#include "io/artifact.h"
#include "main_window.h"
#include "passes/pipeline.h"
#include "passes/plan_builder.h"
#include "passes/plan_target.h"
#include "studio_process.h"
#include "views/formatting.h"
#include "views/graph_nodes_model.h"
#include "views/memory_timeline_view.h"
#include "views/node_inspector.h"
#include "views/pipeline_panel.h"
#include "views/plan_session.h"

using lathe::studio::MainWindow;

namespace {

using lathe::testing::sample;

// Opens `path` and waits for the load and the plan of the graph it selects.
bool openAndPlan(MainWindow& window, const QString& path) {
  QSignalSpy loaded(&window, &MainWindow::loadFinished);
  QSignalSpy planned(window.planSession(), &lathe::views::PlanSession::finished);
  window.openPath(path);
  if (!loaded.wait(60000) || !loaded.first().first().toBool()) return false;
  if (planned.isEmpty() && !planned.wait(120000)) return false;
  return planned.last().first().toBool();
}

// The peak `lathe plan` finds for the final state of `pipeline` on a graph, computed here on its own.
uint64_t plannedPeak(const QString& path, const std::string& graphId, const std::string& pipeline) {
  const lathe::passes::PlanTarget target(lathe::io::loadArtifact(path.toStdString(), {}), graphId,
                                         lathe::hw::resolveHwProfile(std::string(lathe::passes::kDefaultHardware)));
  const lathe::passes::PassContext context = target.context();
  const auto run = lathe::passes::runPipeline(context, lathe::passes::parsePipeline(pipeline));
  return lathe::passes::plannedStep(context, run.finalState()).timeline.peakBytes;
}

}  // namespace

class PlanViewsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void jointGraphStepsThroughThePipeline();
  void inferenceGraphPlans();
  void screenshotsOfPlanViews();
};

void PlanViewsTest::jointGraphStepsThroughThePipeline() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  const QString path = sample("captures/llama3_8b_2l_tiny_train.log.gz");
  QVERIFY(openAndPlan(window, path));
  lathe::views::PlanSession* session = window.planSession();
  const auto run = session->planRun();
  QVERIFY(run);
  QVERIFY(run->graphId.contains(QStringLiteral("aot_joint_graph")));
  QCOMPARE(run->pipeline, QStringLiteral("split,fusion,recompute(policy=torch)"));
  QCOMPARE(window.pipelinePanel()->pipelineText(), run->pipeline);

  auto* steps = window.findChild<QListWidget*>(QStringLiteral("pipelineSteps"));
  QCOMPARE(steps->count(), 4);
  QCOMPARE(steps->currentRow(), 3);
  QCOMPARE(session->currentStep(), 3);
  QVERIFY(run->stateAt(3).recompute.has_value());

  // Back shows the fusion step: no recompute decision yet, and the statistics follow.
  auto* back = window.findChild<QPushButton*>(QStringLiteral("stepBack"));
  auto* forward = window.findChild<QPushButton*>(QStringLiteral("stepForward"));
  QVERIFY(!forward->isEnabled());
  back->click();
  QCOMPARE(session->currentStep(), 2);
  QCOMPARE(steps->currentRow(), 2);
  QVERIFY(!run->stateAt(2).recompute.has_value());
  QVERIFY(!run->stateAt(2).groups.empty());
  auto* stats = window.findChild<QTableWidget*>(QStringLiteral("stepStats"));
  QVERIFY(stats->rowCount() > 2);
  steps->setCurrentRow(0);
  QCOMPARE(session->currentStep(), 0);
  QVERIFY(!back->isEnabled());
  QVERIFY(run->stateAt(0).groups.empty());
  forward->click();
  forward->click();
  forward->click();
  QCOMPARE(session->currentStep(), 3);

  // The plotted peak is the planned step's, as computed without the studio.
  lathe::views::MemoryTimelineView* timeline = window.timelineView();
  const auto& planned = *session->currentPlanned();
  QVERIFY(planned.timeline.peakBytes > 0);
  QCOMPARE(static_cast<uint64_t>(std::llround(timeline->plottedPeakBytes())), planned.timeline.peakBytes);
  QCOMPARE(planned.timeline.peakBytes,
           plannedPeak(path, run->graphId.toStdString(), "split,fusion,recompute(policy=torch)"));
  // The axis reads in the unit of its largest value, so its top is a number between 1 and 1024 of
  // them (this graph peaks at a few MiB: not 0.008 GiB).
  const double axisTop = timeline->plot()->yAxis->range().upper;
  QVERIFY2(axisTop >= 1 && axisTop < 1024, qPrintable(QString::number(axisTop)));
  QCOMPARE(timeline->plot()->yAxis->label(), QStringLiteral("Live memory (MiB)"));

  // Clicking an execution selects its node everywhere.
  auto* inspector = window.findChild<lathe::views::NodeInspector*>();
  const lathe::ir::NodeId before = inspector->node();
  // An execution may be narrower than a pixel: the one expected is the one under the clicked pixel.
  QCustomPlot* plot = timeline->plot();
  auto pixelOf = [&](size_t index) {
    return QPoint(static_cast<int>(plot->xAxis->coordToPixel(static_cast<double>(index))),
                  static_cast<int>(plot->yAxis->coordToPixel(plot->yAxis->range().center())));
  };
  auto executionAt = [&](const QPoint& pixel) {
    return static_cast<size_t>(std::lround(plot->xAxis->pixelToCoord(pixel.x())));
  };
  size_t index = planned.schedule.backwardStart + 3;
  while (planned.schedule.nodes[executionAt(pixelOf(index))] == before) ++index;
  const QPoint at = pixelOf(index);
  QVERIFY(executionAt(at) + 2 >= index && executionAt(at) <= index + 2);
  QTest::mouseClick(plot, Qt::LeftButton, {}, at);
  const lathe::ir::NodeId clicked = planned.schedule.nodes[executionAt(at)];
  QCOMPARE(inspector->node(), clicked);
  // The selected node is marked at each of its executions (twice for a recomputed one).
  const auto executions = std::count(planned.schedule.nodes.begin(), planned.schedule.nodes.end(), clicked);
  QCOMPARE(timeline->selectedMarkers(), static_cast<int>(executions));
  const lathe::ir::NodeId recomputed = run->stateAt(3).recompute->recomputed.front();
  window.selectGraphNode(run->graphId, recomputed);
  QCOMPARE(timeline->selectedMarkers(), 2);  // its forward and its recomputation

  const lathe::ir::Graph& graph = session->target()->graph();
  // The node table sorts by what the plan says of each node: FLOPs, saved or recomputed, fusion group.
  auto* nodesTable = window.findChild<QTableView*>(QStringLiteral("nodesTable"));
  auto* nodes = qobject_cast<lathe::views::GraphNodesModel*>(qobject_cast<QSortFilterProxyModel*>(nodesTable->model())->sourceModel());
  using Nodes = lathe::views::GraphNodesModel;
  QVERIFY(nodes->hasPlanFacts());
  QCOMPARE(nodes->index(static_cast<int>(recomputed), Nodes::DecisionColumn).data().toString(), QStringLiteral("recomputed"));
  const lathe::ir::NodeId saved = run->stateAt(3).recompute->saved.back();
  QCOMPARE(nodes->index(static_cast<int>(saved), Nodes::DecisionColumn).data().toString(), QStringLiteral("saved"));
  const lathe::plan::PlanState& state = run->stateAt(3);
  const lathe::ir::NodeId fused = state.groups.front().nodes.front();
  QCOMPARE(nodes->index(static_cast<int>(fused), Nodes::FusionGroupColumn).data().toInt(), state.group[fused]);
  bool matmulFlops = false;
  for (lathe::ir::NodeId id = 0; id < graph.size(); ++id) {
    if (graph.target(id) == "torch.ops.aten.mm.default")
      matmulFlops |= nodes->index(static_cast<int>(id), Nodes::FlopsColumn).data(Nodes::kSortRole).toDouble() > 0;
  }
  QVERIFY(matmulFlops);

  // The readout under the mouse names the execution and what is held there, as the plan has it.
  const size_t peak = planned.timeline.peakStep;
  const QString readout = timeline->readoutAt(static_cast<double>(peak));
  QVERIFY2(readout.startsWith(QString::fromUtf8(graph.name(planned.schedule.nodes[peak])) + QStringLiteral(" · execution ")),
           qPrintable(readout));
  QVERIFY2(readout.contains(QStringLiteral("held ") + lathe::views::formatBytes(planned.timeline.peakBytes)), qPrintable(readout));
  // and the largest value held there, by name and size.
  const lathe::analysis::StorageLife* largest = nullptr;
  for (const size_t s : planned.timeline.valuesAt(static_cast<uint32_t>(peak))) {
    const lathe::analysis::StorageLife& life = planned.timeline.storages[s];
    if (largest == nullptr || life.bytes > largest->bytes) largest = &life;
  }
  QVERIFY(largest != nullptr);
  QVERIFY2(readout.contains(QStringLiteral("largest values:\n  ") + QString::fromUtf8(graph.name(largest->node)) +
                            QLatin1Char(' ') + lathe::views::formatBytes(largest->bytes)),
           qPrintable(readout));
  QVERIFY(timeline->readoutAt(-5).isEmpty());
}

void PlanViewsTest::inferenceGraphPlans() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openAndPlan(window, sample("captures/llama3_8b_2l_tiny_infer.log.gz")));
  const auto run = window.planSession()->planRun();
  QVERIFY(run);
  QCOMPARE(run->pipeline, QStringLiteral("split,fusion"));
  QCOMPARE(run->stepCount(), 3);
  QCOMPARE(window.findChild<QListWidget*>(QStringLiteral("pipelineSteps"))->count(), 3);
  QVERIFY(window.planSession()->currentPlanned()->timeline.peakBytes > 0);
  QVERIFY(window.timelineView()->plottedPeakBytes() > 0);
}

void PlanViewsTest::screenshotsOfPlanViews() {
  QTemporaryDir dir;
  for (const QString& view : {QStringLiteral("timeline"), QStringLiteral("pipeline"), QStringLiteral("gantt")}) {
    const QString png = dir.filePath(view + QStringLiteral(".png"));
    const lathe::testing::StudioRun run =
        lathe::testing::runStudio({QStringLiteral("--screenshot"), png, QStringLiteral("--view"), view,
                                   sample("captures/llama3_8b_2l_tiny_train.log.gz")});
    QCOMPARE(run.exitCode, 0);
    const QImage image(png);
    QCOMPARE(image.size(), QSize(1600, 1000));
    QVERIFY(lathe::testing::distinctColours(image) > 20);
    const QString wrong = lathe::testing::wrongView(run, image, view);
    QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
  }
}

QTEST_MAIN(PlanViewsTest)
#include "plan_views_test.moc"

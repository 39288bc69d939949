// The budget panel and the views it drives, on real captures: moving the budget re-plans in the
// background and the timeline follows (within the budget where it can be met, said so where it
// cannot), the target GPU changes the estimate, the Gantt draws the simulated streams, a Pareto
// click sets the budget, the saved-tensor ledger adds up to the plan's saved bytes, and a measured
// memory snapshot is drawn over the plan (read by the studio's loader: one that does not load is
// reported above the plot and leaves it as it was).
#include <cmath>
#include <qcustomplot.h>

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QSignalSpy>
#include <QSlider>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <utility>

#include "gui_support.h"
#include "io/artifact.h"
#include "main_window.h"
#include "hw/hw_profile.h"
#include "passes/pipeline.h"
#include "passes/plan_target.h"
#include "passes/recompute.h"
#include "views/budget_panel.h"
#include "views/formatting.h"
#include "views/logic/budget_plan.h"
#include "views/gantt_view.h"
#include "views/memory_timeline_view.h"
#include "views/node_inspector.h"
#include "views/pareto_view.h"
#include "views/plan_session.h"
#include "views/saved_tensor_ledger_model.h"

using lathe::studio::MainWindow;
using lathe::views::PlanRun;
using lathe::views::PlanSession;

namespace {

using lathe::testing::sample;
using lathe::testing::waitUntil;

constexpr uint64_t kMiB = 1024ull * 1024ull;

// Opens a capture, waits for the default plan and for the frontier the budget panel asks for.
bool openWithFrontier(MainWindow& window, const QString& path) {
  QSignalSpy loaded(&window, &MainWindow::loadFinished);
  window.openPath(path);
  if (!loaded.wait(60000) || !loaded.first().first().toBool()) return false;
  PlanSession* session = window.planSession();
  return waitUntil([&] { return session->planRun() && !session->busy() && session->frontier(); });
}

// Waits for the budget run planned for `budget` on `hardware` (a substring of the target's name).
const PlanRun* waitForBudgetRun(PlanSession* session, uint64_t budget, const QString& hardware = {}) {
  const bool done = waitUntil([&] {
    const auto& run = session->planRun();
    return run && run->budget && run->budget->budgetBytes == budget && run->hardware.contains(hardware) &&
           !session->busy() && session->currentStep() == run->stepCount() - 1;
  });
  return done ? session->planRun().get() : nullptr;
}

// mixtral_2l_train open with its frontier, planned at the budget of its no-recompute peak on the
// H200 (the default target); returns that budget, 0 when a step failed.
uint64_t planMixtralOnH200(MainWindow& window) {
  if (!openWithFrontier(window, sample("captures/mixtral_2l_train.log.gz"))) return 0;
  PlanSession* session = window.planSession();
  const uint64_t budget = session->frontier()->noRecomputePeak() / kMiB * kMiB;
  window.budgetPanel()->setBudgetBytes(budget);
  return waitForBudgetRun(session, budget, QStringLiteral("H200")) != nullptr ? budget : 0;
}


// Opens a capture and waits for its plan to be on show.
bool openPlanned(MainWindow& window, const QString& path) {
  QSignalSpy loaded(&window, &MainWindow::loadFinished);
  window.openPath(path);
  return loaded.wait(60000) && waitUntil([&] { return window.planSession()->currentPlanned() != nullptr; });
}

// Loads a snapshot onto the timeline and waits for its outcome: (ok, error).
std::pair<bool, QString> loadSnapshot(lathe::views::MemoryTimelineView* timeline, const QString& path) {
  QSignalSpy loaded(timeline, &lathe::views::MemoryTimelineView::snapshotLoaded);
  timeline->loadSnapshot(path);
  if (!loaded.wait(120000)) return {false, QStringLiteral("the snapshot load did not end")};
  return {loaded.first().first().toBool(), loaded.first().at(1).toString()};
}

// Where a label of the plot is drawn, in pixels: its text and padding placed by its alignment.
QRectF labelRect(const QCPItemText& label) {
  QRectF box = QFontMetricsF(label.font()).boundingRect(QRectF(0, 0, 1e4, 1e4), static_cast<int>(label.textAlignment()), label.text());
  const QMargins pad = label.padding();
  box.setSize(box.size() + QSizeF(pad.left() + pad.right(), pad.top() + pad.bottom()));
  QPointF corner = label.position->pixelPosition();
  const Qt::Alignment align = label.positionAlignment();
  if (align & Qt::AlignRight) corner.rx() -= box.width();
  if (align & Qt::AlignHCenter) corner.rx() -= box.width() / 2;
  if (align & Qt::AlignBottom) corner.ry() -= box.height();
  if (align & Qt::AlignVCenter) corner.ry() -= box.height() / 2;
  box.moveTopLeft(corner);
  return box;
}

// The plot's labels whose text starts with `prefix`.
QList<QCPItemText*> labelsStartingWith(QCustomPlot* plot, const QString& prefix) {
  QList<QCPItemText*> found;
  for (int i = 0; i < plot->itemCount(); ++i) {
    auto* text = qobject_cast<QCPItemText*>(plot->item(i));
    if (text && text->text().startsWith(prefix)) found << text;
  }
  return found;
}

// A recompute statistic of the run's last recompute step; -1 when it has none.
double recomputeStat(const PlanRun& run, const lathe::passes::StatKey& key) {
  const lathe::passes::PipelineRecord* record = run.recordOf("recompute");
  return record ? record->result.stat(key).value_or(-1) : -1;
}

}  // namespace

class BudgetViewsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void movingTheBudgetReplans();
  void budgetAndPeakLabelsDoNotOverlap();
  void budgetPlanMatchesTheRecomputePass();
  void infeasibleBudgetIsReported();
  void offloadEntersThePlanOnlyWhenAsked();
  void targetGpuChangesTheEstimate();
  void aStepLargerThanTheCardIsShownAgainstItsMemory();
  void ganttDrawsTheSimulatedStreams();
  void paretoClickSetsTheBudget();
  void ledgerAddsUpToTheSavedBytes();
  void ledgerModelOnEveryTrainingCapture_data();
  void ledgerModelOnEveryTrainingCapture();
  void snapshotIsDrawnOverThePlan();
  void snapshotIterationSpansTheStep();
  void damagedSnapshotLeavesTheTimelineAsItWas();
  void inferenceGraphPlansOffloadOnly();
};

// llama's peak is at the end of its backward, so its label hangs left of a line near the right edge,
// and a budget at that peak puts the budget's line just under the top: the two labels on one side
// would cover each other.
void BudgetViewsTest::budgetAndPeakLabelsDoNotOverlap() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.resize(1600, 1000);
  window.show();
  QVERIFY(openWithFrontier(window, sample("captures/llama3_8b_2l_train.log.gz")));
  PlanSession* session = window.planSession();
  window.showPlanView(MainWindow::PlanView::Timeline);
  const uint64_t budget = session->frontier()->noRecomputePeak() / kMiB * kMiB;
  window.budgetPanel()->setBudgetBytes(budget);
  const PlanRun* run = waitForBudgetRun(session, budget);
  QVERIFY(run);
  const auto& timeline = run->planned.back().timeline;
  QVERIFY2(timeline.peakStep * 2 > timeline.live.size(), "the peak is in the right half");
  QCustomPlot* plot = window.timelineView()->plot();
  plot->replot();
  const QList<QCPItemText*> peak = labelsStartingWith(plot, QStringLiteral("peak ")),
                            budgetLabel = labelsStartingWith(plot, QStringLiteral("budget "));
  QCOMPARE(peak.size(), 1);
  QCOMPARE(budgetLabel.size(), 1);
  const QRectF peakBox = labelRect(*peak.first()), budgetBox = labelRect(*budgetLabel.first());
  QVERIFY2(!peakBox.intersects(budgetBox), qPrintable(QStringLiteral("peak label at %1,%2 %3x%4, budget label at %5,%6 %7x%8")
                                                          .arg(peakBox.x()).arg(peakBox.y()).arg(peakBox.width()).arg(peakBox.height())
                                                          .arg(budgetBox.x()).arg(budgetBox.y()).arg(budgetBox.width()).arg(budgetBox.height())));
  // Both inside the plot.
  const QRectF area = plot->axisRect()->rect();
  QVERIFY(area.contains(peakBox.center()) && area.contains(budgetBox.center()));
}

void BudgetViewsTest::movingTheBudgetReplans() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openWithFrontier(window, sample("captures/mixtral_2l_train.log.gz")));
  PlanSession* session = window.planSession();
  lathe::views::BudgetPanel* panel = window.budgetPanel();
  lathe::views::MemoryTimelineView* timeline = window.timelineView();
  const auto frontier = session->frontier();
  QVERIFY(frontier->points.size() >= 3);
  QVERIFY(frontier->minimumPeak() < frontier->noRecomputePeak());

  // The slider spans the frontier: least reachable peak to the peak without recompute.
  QSlider* slider = panel->budgetSlider();
  QVERIFY(slider->isEnabled());
  QCOMPARE(static_cast<uint64_t>(slider->minimum()), (frontier->minimumPeak() + kMiB - 1) / kMiB);
  QCOMPARE(static_cast<uint64_t>(slider->maximum()), frontier->noRecomputePeak() / kMiB);

  panel->setBudgetBytes(static_cast<uint64_t>(slider->maximum()) * kMiB);  // where the slider may already be
  QCOMPARE(slider->value(), slider->maximum());
  const uint64_t high = panel->budgetBytes();
  const PlanRun* generous = waitForBudgetRun(session, high);
  QVERIFY(generous);
  QVERIFY(generous->budgetMet());
  QVERIFY(generous->pipeline.startsWith(QStringLiteral("split,fusion,recompute(memory=")));
  QVERIFY(!generous->pipeline.contains(QStringLiteral("offload")));  // only when asked for
  const uint64_t highPeak = generous->planned.back().timeline.peakBytes;
  QVERIFY(highPeak <= high);
  QCOMPARE(timeline->plottedBudgetBytes(), static_cast<double>(high));
  timeline->pinBaseline();
  QVERIFY(timeline->hasBaseline());
  QCOMPARE(static_cast<uint64_t>(std::llround(timeline->baselinePeakBytes())), highPeak);

  // A fast burst of moves plans once, for where it ends, a budget that forces recompute.
  QSignalSpy started(session, &PlanSession::started);
  for (int value = slider->maximum(); value >= slider->minimum();
       value -= std::max(1, (slider->maximum() - slider->minimum()) / 10)) {
    slider->setValue(value);
  }
  slider->setValue(slider->minimum());
  const uint64_t low = panel->budgetBytes();
  // Before the re-plan comes back, the panel says what this budget will give: the frontier point it picks.
  QLabel* preview = panel->previewLabel();
  QVERIFY(preview->isVisibleTo(panel));
  QVERIFY2(preview->text().contains(lathe::views::formatBytes(frontier->pick(low).peakBytes)) &&
               preview->text().contains(lathe::views::formatSeconds(frontier->pick(low).stepSeconds)),
           qPrintable(preview->text()));
  const PlanRun* tight = waitForBudgetRun(session, low);
  QVERIFY(tight);
  QCOMPARE(started.count(), 1);
  QVERIFY(tight->budgetMet());
  const uint64_t lowPeak = tight->planned.back().timeline.peakBytes;
  QVERIFY(lowPeak <= low);
  QVERIFY(lowPeak < highPeak);
  QCOMPARE(static_cast<uint64_t>(std::llround(timeline->plottedPeakBytes())), lowPeak);
  QVERIFY(recomputeStat(*tight, lathe::passes::RecomputePass::kRecomputeSeconds) > recomputeStat(*generous, lathe::passes::RecomputePass::kRecomputeSeconds));
  // The pinned plan stays on the plot under the new one.
  QCOMPARE(static_cast<uint64_t>(std::llround(timeline->baselinePeakBytes())), highPeak);
  QVERIFY(panel->outcomeLabel()->text().contains(QStringLiteral("Within the budget")));
  // The outcome says what the move changed: a lower peak, values no longer saved.
  const QString outcome = panel->outcomeLabel()->text();
  QVERIFY2(outcome.contains(QStringLiteral("Since the last plan: peak −")), qPrintable(outcome));
}

void BudgetViewsTest::budgetPlanMatchesTheRecomputePass() {
  // The panel's plan picks a point of the frontier computed once; the recompute pass solves it
  // again: both must decide the same.
  const auto artifact = std::make_shared<const lathe::io::Artifact>(
      lathe::io::loadArtifact(sample("captures/mixtral_2l_train.log.gz").toStdString()));
  const lathe::passes::PlanTarget target(*artifact, "", lathe::hw::resolveHwProfile("h200"));  // its joint graph
  QVERIFY(target.joint().joint);
  const lathe::passes::BudgetFrontier frontier = lathe::passes::solveBudgetFrontier(target.context());
  const auto& middle = frontier.points[frontier.points.size() / 2];
  for (const uint64_t budget :
       {frontier.minimumPeak() / 2, middle.peakBytes / kMiB * kMiB, frontier.noRecomputePeak() + kMiB}) {
    const lathe::views::BudgetRequest request{budget, 0.5};
    const lathe::passes::PipelineRun fast = lathe::views::runBudgetPipeline(target, &frontier, request, {});
    const std::string text = lathe::views::budgetPipeline(request, true, true);
    const lathe::passes::PipelineRun full =
        lathe::passes::runPipeline(target.context(), lathe::passes::parsePipeline(text));
    QCOMPARE(fast.history.size(), full.history.size());
    for (size_t i = 0; i < full.history.size(); ++i) {
      QCOMPARE(lathe::passes::formatStep(fast.history[i].step), lathe::passes::formatStep(full.history[i].step));
      const auto& fastDiff = fast.history[i].result.diff;
      const auto& fullDiff = full.history[i].result.diff;
      for (size_t line = 0; line < std::min(fastDiff.size(), fullDiff.size()); ++line)
        QCOMPARE(QString::fromStdString(lathe::toEnglish(fastDiff[line])), QString::fromStdString(lathe::toEnglish(fullDiff[line])));
      QCOMPARE(fastDiff.size(), fullDiff.size());
      QCOMPARE(fast.history[i].result.stats.size(), full.history[i].result.stats.size());
      for (size_t s = 0; s < full.history[i].result.stats.size(); ++s) {
        QCOMPARE(fast.history[i].result.stats[s].key.name, full.history[i].result.stats[s].key.name);
        QCOMPARE(fast.history[i].result.stats[s].value, full.history[i].result.stats[s].value);
      }
    }
    const auto& a = *fast.finalState().recompute;
    const auto& b = *full.finalState().recompute;
    QCOMPARE(a.saved, b.saved);
    QCOMPARE(a.recomputed, b.recomputed);
    QCOMPARE(a.savedReasons, b.savedReasons);
  }
}

void BudgetViewsTest::offloadEntersThePlanOnlyWhenAsked() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openWithFrontier(window, sample("captures/mixtral_2l_train.log.gz")));
  PlanSession* session = window.planSession();
  lathe::views::BudgetPanel* panel = window.budgetPanel();
  auto* streamWeights = panel->findChild<QCheckBox*>(QStringLiteral("streamWeights"));
  auto* offloadActivations = panel->findChild<QCheckBox*>(QStringLiteral("offloadActivations"));
  QVERIFY(streamWeights && offloadActivations);
  QVERIFY(!streamWeights->isChecked() && !offloadActivations->isChecked());
  QVERIFY(offloadActivations->isEnabled());  // a training graph
  QVERIFY(!panel->findChild<QSlider*>(QStringLiteral("residentSlider"))->isEnabled());
  auto runWith = [&](const QString& fragment, bool present) -> const PlanRun* {
    const bool done = waitUntil([&] {
      const auto& run = session->planRun();
      return run && run->budget && !session->busy() && session->currentStep() == run->stepCount() - 1 &&
             run->pipeline.contains(fragment) == present;
    });
    return done ? session->planRun().get() : nullptr;
  };

  // Moving the budget plans recompute only.
  const uint64_t budget = session->frontier()->noRecomputePeak() / kMiB * kMiB;
  panel->setBudgetBytes(budget);
  const PlanRun* plain = waitForBudgetRun(session, budget);
  QVERIFY(plain);
  QVERIFY(!plain->pipeline.contains(QStringLiteral("offload")));
  QVERIFY(!plain->run.finalState().offload && !plain->run.finalState().activationOffload);
  const uint64_t plainPeak = plain->planned.back().timeline.peakBytes;

  // Activation offload: the same budget, saved values in host memory, a peak no higher.
  panel->setOffloadActivations(true);
  const PlanRun* activations = runWith(QStringLiteral("offload=true"), true);
  QVERIFY(activations);
  QVERIFY(!activations->pipeline.contains(QStringLiteral("offload(policy")));
  const auto& decision = activations->run.finalState().activationOffload;
  QVERIFY(decision && !decision->tensors.empty());
  QVERIFY(activations->planned.back().timeline.peakBytes <= plainPeak);
  QVERIFY(panel->outcomeLabel()->text().contains(QStringLiteral("held in host memory")));

  // Weight streaming only when switched on, with the resident share.
  panel->setOffloadActivations(false);
  panel->setStreamWeights(true);
  const PlanRun* streamed = runWith(QStringLiteral("offload(policy=heuristic,resident=0.30)"), true);
  QVERIFY(streamed);
  QVERIFY(!streamed->pipeline.contains(QStringLiteral("offload=true")));
  QVERIFY(streamed->run.finalState().offload.has_value());
  QSlider* resident = panel->findChild<QSlider*>(QStringLiteral("residentSlider"));
  QVERIFY(resident->isEnabled());
  // Moving the resident share says, before the re-plan, what the re-plan's offload step gives.
  resident->setValue(60);
  const QString preview = panel->previewLabel()->text();
  QVERIFY2(panel->previewLabel()->isVisibleTo(panel) && preview.contains(QStringLiteral("Resident 60 %")), qPrintable(preview));
  const PlanRun* sixty = runWith(QStringLiteral("resident=0.60"), true);
  QVERIFY(sixty);
  const auto& weights = sixty->run.finalState().offload;
  QVERIFY(weights.has_value());
  QVERIFY2(preview.contains(QStringLiteral("at most %1 of").arg(lathe::views::formatBytes(weights->peakWeightBytes))) &&
               preview.contains(QStringLiteral("step %1 (stalls %2)")
                                    .arg(lathe::views::formatSeconds(weights->stepSeconds),
                                         lathe::views::formatSeconds(weights->bubbleSeconds))),
           qPrintable(preview));
  panel->setStreamWeights(false);
  QVERIFY(runWith(QStringLiteral("offload"), false));
}

void BudgetViewsTest::infeasibleBudgetIsReported() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openWithFrontier(window, sample("captures/mixtral_2l_train.log.gz")));
  PlanSession* session = window.planSession();
  const uint64_t least = session->frontier()->minimumPeak();
  const uint64_t budget = least / 2 / kMiB * kMiB;
  window.budgetPanel()->setBudgetBytes(budget);
  const PlanRun* run = waitForBudgetRun(session, budget);
  QVERIFY(run);
  QVERIFY(!run->budgetMet());
  QCOMPARE(recomputeStat(*run, lathe::passes::RecomputePass::kPeakBytes), static_cast<double>(least));
  const QString outcome = window.budgetPanel()->outcomeLabel()->text();
  QVERIFY2(outcome.contains(QStringLiteral("cannot be met")), qPrintable(outcome));
  QCOMPARE(window.timelineView()->plottedBudgetBytes(), static_cast<double>(budget));
}

void BudgetViewsTest::targetGpuChangesTheEstimate() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  const uint64_t budget = planMixtralOnH200(window);
  QVERIFY(budget > 0);
  PlanSession* session = window.planSession();
  lathe::views::BudgetPanel* panel = window.budgetPanel();
  const double h200Step = session->planRun()->stepEstimateSeconds();
  QVERIFY(h200Step > 0);
  panel->setHardware(QStringLiteral("rtx5090"));
  QCOMPARE(session->hardware(), QStringLiteral("rtx5090"));
  const PlanRun* rtx = waitForBudgetRun(session, budget, QStringLiteral("5090"));
  QVERIFY(rtx);
  QVERIFY(rtx->stepEstimateSeconds() > h200Step * 1.05);  // less compute and a slower host link
  QVERIFY(panel->outcomeLabel()->text().contains(QStringLiteral("5090")));
}

// A target whose memory the plan outgrows: the timeline draws the card's memory with the step above
// it, the panel says so; an unreadable profile is refused and the plan stays on its target.
void BudgetViewsTest::aStepLargerThanTheCardIsShownAgainstItsMemory() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  const uint64_t budget = planMixtralOnH200(window);
  QVERIFY(budget > 0);
  PlanSession* session = window.planSession();
  lathe::views::BudgetPanel* panel = window.budgetPanel();
  QCOMPARE(window.timelineView()->plottedCapacityBytes(), 0.0);  // about 1.2 GiB on a 141 GB card: not drawn

  lathe::hw::HwProfile small = lathe::hw::resolveHwProfile("h200");
  small.id = "h200_1gib";
  small.name = "H200 with 1 GiB";
  small.hbmCapacity = uint64_t{1} << 30;
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("h200_1gib.json"));
  {
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QByteArray::fromStdString(lathe::hw::hwProfileToJson(small).dump(1)));
  }
  panel->setHardware(path);
  const PlanRun* run = waitForBudgetRun(session, budget, QStringLiteral("1 GiB"));
  QVERIFY(run);
  QVERIFY(run->planned.back().timeline.peakBytes > small.hbmCapacity);
  QCOMPARE(window.timelineView()->plottedCapacityBytes(), static_cast<double>(small.hbmCapacity));
  const QString outcome = panel->outcomeLabel()->text();
  QVERIFY2(outcome.contains(QStringLiteral("more than the 1.00 GiB")), qPrintable(outcome));

  const QString broken = dir.filePath(QStringLiteral("broken.json"));
  {
    QFile file(broken);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("{\"format\": ");
  }
  panel->setHardware(broken);
  QCOMPARE(session->hardware(), path);
  QVERIFY2(panel->outcomeLabel()->text().contains(QStringLiteral("Cannot plan on broken.json")),
           qPrintable(panel->outcomeLabel()->text()));
}

void BudgetViewsTest::ganttDrawsTheSimulatedStreams() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openWithFrontier(window, sample("captures/mixtral_2l_train.log.gz")));
  PlanSession* session = window.planSession();
  lathe::views::GanttView* gantt = window.ganttView();
  window.showPlanView(MainWindow::PlanView::Gantt);

  // The default plan has no offload: one compute bar per kernel, no copies.
  const auto& plain = *session->currentPlanned();
  QCOMPARE(gantt->barCount(lathe::analysis::Stream::Compute), static_cast<int>(plain.schedule.nodes.size()));
  QCOMPARE(gantt->barCount(lathe::analysis::Stream::HostToDevice), 0);
  // Where the step's time model puts them: the bars end with the planned step, and on mixtral's
  // host-bound step they stand apart (the GPU waits for the host's launches).
  const lathe::views::StepGantt& kernels = *session->currentGantt();
  QVERIFY(std::abs(kernels.stepSeconds - plain.stepSeconds) < 1e-12);
  QVERIFY(std::abs(kernels.bars.back().end - plain.stepSeconds) < 1e-9);
  double busy = 0;
  for (const lathe::views::GanttBar& bar : kernels.bars) busy += bar.end - bar.start;
  QVERIFY2(busy < 0.8 * plain.stepSeconds, qPrintable(QStringLiteral("%1 of %2 s busy").arg(busy).arg(plain.stepSeconds)));

  // A budget plan streams weights: segments on compute, copies on H2D, both hoverable.
  window.budgetPanel()->setResidentRatio(0);
  const uint64_t budget = session->frontier()->noRecomputePeak() / kMiB * kMiB;
  window.budgetPanel()->setBudgetBytes(budget);
  const PlanRun* run = waitForBudgetRun(session, budget);
  QVERIFY(run);
  QVERIFY(run->run.finalState().offload.has_value());
  const lathe::views::StepGantt& streams = *session->currentGantt();
  QVERIFY(streams.segments);
  QVERIFY(gantt->barCount(lathe::analysis::Stream::Compute) > 1);
  QVERIFY(gantt->barCount(lathe::analysis::Stream::HostToDevice) > 0);
  QCOMPARE(gantt->barCount(lathe::analysis::Stream::DeviceToHost), 0);  // offload copies in only
  QCOMPARE(streams.stepSeconds, run->run.finalState().offload->stepSeconds);

  QCustomPlot* plot = gantt->plot();
  auto pixelAt = [&](double seconds, lathe::analysis::Stream stream) {
    return QPointF(plot->xAxis->coordToPixel(seconds * 1e3),
                   plot->yAxis->coordToPixel(lathe::views::GanttView::rowOf(stream)));
  };
  for (const auto& bar : streams.bars) {
    const QString tip = gantt->toolTipAt(pixelAt((bar.start + bar.end) / 2, bar.stream));
    QVERIFY2(!tip.isEmpty(), bar.label.c_str());
    if (bar.stream == lathe::analysis::Stream::HostToDevice) QVERIFY(tip.contains(QStringLiteral("Host to device")));
  }

  // Clicking the compute row selects the node running there.
  const auto& planned = *session->currentPlanned();
  auto* inspector = window.findChild<lathe::views::NodeInspector*>();
  const size_t execution = planned.schedule.backwardStart + 2;
  const double middle = (streams.executionStart[execution] + streams.executionEnd[execution]) / 2;
  QTest::mouseClick(plot, Qt::LeftButton, {}, pixelAt(middle, lathe::analysis::Stream::Compute).toPoint());
  const size_t picked = streams.executionAt(
      plot->xAxis->pixelToCoord(pixelAt(middle, lathe::analysis::Stream::Compute).toPoint().x()) / 1e3);
  QCOMPARE(inspector->node(), planned.schedule.nodes[picked]);
}

void BudgetViewsTest::paretoClickSetsTheBudget() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openWithFrontier(window, sample("captures/mixtral_2l_train.log.gz")));
  PlanSession* session = window.planSession();
  window.showPlanView(MainWindow::PlanView::Pareto);
  lathe::views::ParetoView* pareto = window.paretoView();
  QCOMPARE(pareto->pointCount(), static_cast<int>(session->frontier()->points.size()));
  // The default plan (torch's policy) is marked.
  uint64_t markedPeak = 0;
  double markedSeconds = 0;
  QVERIFY(pareto->currentPoint(markedPeak, markedSeconds));

  const int index = pareto->pointCount() / 3;
  const uint64_t peak = session->frontier()->points[static_cast<size_t>(index)].peakBytes;
  pareto->plot()->replot();
  // Room below zero for the no-recompute point, and no negative recompute time labelled there,
  // however far below zero the axis reaches (zoomed out).
  QVERIFY(pareto->plot()->yAxis->range().lower < 0);
  {
    QCPAxis* y = pareto->plot()->yAxis;
    const QCPRange shown = y->range();
    y->setRange(-0.4 * shown.upper, shown.upper);
    pareto->plot()->replot();
    QVERIFY(!y->tickVector().isEmpty());
    for (double tick : y->tickVector()) QVERIFY2(tick >= 0, qPrintable(QString::number(tick)));
    y->setRange(shown);
    pareto->plot()->replot();
  }
  QTest::mouseClick(pareto->plot(), Qt::LeftButton, {}, pareto->pixelOfPoint(index).toPoint());
  const uint64_t budget = window.budgetPanel()->budgetBytes();
  QVERIFY(budget + kMiB / 2 >= peak && budget <= peak + kMiB / 2);  // the peak, to the slider's MiB
  const PlanRun* run = waitForBudgetRun(session, budget);
  QVERIFY(run);
  // The plan's point is marked where its recompute pass put it.
  QVERIFY(pareto->currentPoint(markedPeak, markedSeconds));
  QCOMPARE(static_cast<double>(markedPeak), recomputeStat(*run, lathe::passes::RecomputePass::kPeakBytes));
  QVERIFY(markedPeak <= budget);
}

void BudgetViewsTest::ledgerAddsUpToTheSavedBytes() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openWithFrontier(window, sample("captures/mixtral_2l_train.log.gz")));
  PlanSession* session = window.planSession();
  const uint64_t budget =
      (session->frontier()->minimumPeak() + session->frontier()->noRecomputePeak()) / 2 / kMiB * kMiB;
  window.budgetPanel()->setBudgetBytes(budget);
  const PlanRun* run = waitForBudgetRun(session, budget);
  QVERIFY(run);
  lathe::views::SavedTensorLedgerModel* ledger = window.savedTensorModel();
  QVERIFY(ledger->rowCount() > 0);
  QCOMPARE(static_cast<double>(ledger->totalBytes()), recomputeStat(*run, lathe::passes::RecomputePass::kSavedBytes));
  // Each row says why the budget kept it: what recomputing it would cost and free, an input, or a
  // value that must run once.
  int priced = 0;
  for (int r = 0; r < ledger->rowCount(); ++r) {
    const QString reason = ledger->data(ledger->index(r, lathe::views::SavedTensorLedgerModel::ReasonColumn)).toString();
    QVERIFY2(reason.startsWith(QStringLiteral("kept: recomputing it alone would take ")) ||
                 reason.startsWith(QStringLiteral("an input of the step")) || reason.startsWith(QStringLiteral("must run once")),
             qPrintable(reason));
    priced += reason.startsWith(QStringLiteral("kept: ")) ? 1 : 0;
  }
  QVERIFY(priced > 0);

  // Selecting a row selects its node everywhere.
  window.showPlanView(MainWindow::PlanView::SavedTensors);
  QTableView* table = window.savedTensorTable();
  const QModelIndex row = table->model()->index(ledger->rowCount() - 1, 0);
  table->setCurrentIndex(row);
  auto* inspector = window.findChild<lathe::views::NodeInspector*>();
  const auto* proxy = qobject_cast<const QSortFilterProxyModel*>(table->model());
  QCOMPARE(inspector->node(), ledger->nodeAt(proxy->mapToSource(row)));
}

void BudgetViewsTest::ledgerModelOnEveryTrainingCapture_data() {
  QTest::addColumn<QString>("path");
  const QDir captures(QString::fromUtf8(LATHE_SAMPLES_DIR) + QStringLiteral("/captures"));
  for (const QFileInfo& entry : captures.entryInfoList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
    if (entry.fileName().contains(QStringLiteral("train")) || entry.fileName().contains(QStringLiteral("fsdp"))) {
      QTest::newRow(qPrintable(entry.fileName())) << entry.filePath();
    }
  }
}

void BudgetViewsTest::ledgerModelOnEveryTrainingCapture() {
  QFETCH(QString, path);
  const auto artifact = std::make_shared<const lathe::io::Artifact>(lathe::io::loadArtifact(path.toStdString()));
  const lathe::io::GraphListing* joint = nullptr;
  const std::vector<lathe::io::GraphListing> graphs = artifact->graphs();
  for (const auto& listing : graphs) {
    if (listing.kind == "aot_joint_graph" && !joint) joint = &listing;
  }
  QVERIFY(joint);
  PlanSession session;
  lathe::views::SavedTensorLedgerModel ledger;
  QAbstractItemModelTester tester(&ledger, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QObject::connect(&session, &PlanSession::currentStepChanged, &ledger,
                   [&](int step) { ledger.setPlan(session.planRun(), step); });
  session.setGraph(artifact, QString::fromStdString(joint->id), joint->graph);
  QSignalSpy finished(&session, &PlanSession::finished);
  session.run(session.defaultPipeline());
  QVERIFY(finished.wait(240000));
  QVERIFY2(finished.first().first().toBool(), qPrintable(finished.first().at(1).toString()));
  const PlanRun& run = *session.planRun();
  QVERIFY(ledger.rowCount() > 0);
  QCOMPARE(static_cast<double>(ledger.totalBytes()), recomputeStat(run, lathe::passes::RecomputePass::kSavedBytes));
  for (int row = 0; row < ledger.rowCount(); ++row) {
    const auto saved = ledger
                           .data(ledger.index(row, lathe::views::SavedTensorLedgerModel::SavedAtColumn),
                                 lathe::views::SavedTensorLedgerModel::kSortRole)
                           .toULongLong();
    const auto last = ledger
                          .data(ledger.index(row, lathe::views::SavedTensorLedgerModel::LastUseColumn),
                                lathe::views::SavedTensorLedgerModel::kSortRole)
                          .toULongLong();
    QVERIFY(saved <= last);
  }
  // The steps before recompute have no saved set.
  session.setCurrentStep(0);
  QCOMPARE(ledger.rowCount(), 0);
}

void BudgetViewsTest::snapshotIsDrawnOverThePlan() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openPlanned(window, sample("captures/mixtral_2l_train.log.gz")));
  lathe::views::MemoryTimelineView* timeline = window.timelineView();
  const int graphsBefore = timeline->plot()->graphCount();
  const auto [ok, error] = loadSnapshot(timeline, sample("memory_snapshot/ftcourse/memory_snapshot.pickle"));
  QVERIFY2(ok, qPrintable(error));
  QVERIFY(timeline->snapshot().peakBytes > 0);
  QVERIFY(timeline->snapshot().bytes.size() > 2);
  QCOMPARE(timeline->plot()->graphCount(), graphsBefore + 1);
  // The snapshot's trace is spread over the plan's executions, and the tooltip says so.
  const QCPGraph* curve = timeline->plot()->graph(timeline->plot()->graphCount() - 1);
  bool found = false;
  const QCPRange keys = curve->getKeyRange(found);
  QVERIFY(found);
  const auto lastExecution = static_cast<double>(window.planSession()->currentPlanned()->schedule.nodes.size() - 1);
  QVERIFY(keys.lower >= 0 && keys.upper <= lastExecution && keys.upper > lastExecution / 2);
  QVERIFY(timeline->plot()->toolTip().contains(QStringLiteral("spread evenly")));

  // A file that is not a snapshot is refused and the curve kept.
  const auto [readmeOk, readmeError] = loadSnapshot(timeline, sample("README.md"));
  QVERIFY(!readmeOk);
  QVERIFY2(readmeError.contains(QStringLiteral("not an artifact Lathe reads")), qPrintable(readmeError));
  QVERIFY(timeline->snapshot().peakBytes > 0);
}

// Our llama snapshot recorded two training steps of the capture's model: the one with the peak is
// drawn from the step's first execution to its last (not both squeezed into one step), and the
// line above the plot gives the measured and the planned peak.
void BudgetViewsTest::snapshotIterationSpansTheStep() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openPlanned(window, sample("captures/llama3_8b_2l_train.log.gz")));
  lathe::views::MemoryTimelineView* timeline = window.timelineView();
  const auto [ok, error] = loadSnapshot(timeline, sample("snapshots/llama3_8b_2l_train_snapshot.pickle"));
  QVERIFY2(ok, qPrintable(error));
  const lathe::views::SnapshotCurve& curve = timeline->snapshot();
  QCOMPARE(curve.iterations, 2);
  QCOMPARE(curve.iteration, 2);
  QCOMPARE(curve.lastEvent, 1727u);
  QCOMPARE(curve.position.front(), 0.0);
  QCOMPARE(curve.position.back(), 1.0);
  QCOMPARE(curve.peakBytes, uint64_t{7083753768});
  const QCPGraph* drawn = timeline->plot()->graph(timeline->plot()->graphCount() - 1);
  bool found = false;
  const QCPRange keys = drawn->getKeyRange(found);
  QVERIFY(found);
  const auto lastExecution = static_cast<double>(window.planSession()->currentPlanned()->schedule.nodes.size() - 1);
  QCOMPARE(keys.lower, 0.0);
  QCOMPARE(keys.upper, lastExecution);
  // Its first point is the level the iteration starts from: what the first step left, about the
  // weights' 2.77 GiB, not the first step's activations.
  QVERIFY(curve.bytes.front() < 3.2 * (1ull << 30));
  auto* status = window.findChild<QLabel*>(QStringLiteral("snapshotStatus"));
  const QString planned = lathe::views::formatBytes(window.planSession()->currentPlanned()->timeline.peakBytes);
  QVERIFY2(status->text().contains(QStringLiteral("iteration 2 of 2")) && status->text().contains(QStringLiteral("6.60 GiB")) &&
               status->text().contains(planned),
           qPrintable(status->text()));
  timeline->clearSnapshot();
  QVERIFY(!status->isVisible());
}

void BudgetViewsTest::damagedSnapshotLeavesTheTimelineAsItWas() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openPlanned(window, sample("captures/mixtral_2l_train.log.gz")));
  lathe::views::MemoryTimelineView* timeline = window.timelineView();
  const QString good = sample("memory_snapshot/ftcourse/memory_snapshot.pickle");
  const auto [ok, loadError] = loadSnapshot(timeline, good);
  QVERIFY2(ok, qPrintable(loadError));
  auto* status = window.findChild<QLabel*>(QStringLiteral("snapshotStatus"));
  // A good snapshot's line compares the peaks.
  QVERIFY(status->isVisible());
  QVERIFY2(status->text().contains(QStringLiteral("Measured peak")), qPrintable(status->text()));
  const QVector<double> bytes = timeline->snapshot().bytes;
  const int graphs = timeline->plot()->graphCount();
  QVERIFY(!bytes.isEmpty());

  // A snapshot cut short: a pickle that ends in the middle.
  QTemporaryDir dir;
  const QString damaged = dir.filePath(QStringLiteral("damaged.pickle"));
  {
    QFile from(good), to(damaged);
    QVERIFY(from.open(QIODevice::ReadOnly) && to.open(QIODevice::WriteOnly));
    to.write(from.read(4096));
  }
  std::string loaderError;
  try {
    static_cast<void>(lathe::io::loadArtifact(damaged.toStdString()));
  } catch (const lathe::Error& error) {
    loaderError = error.what();
  }
  QVERIFY(!loaderError.empty());
  const auto [damagedOk, error] = loadSnapshot(timeline, damaged);
  QVERIFY(!damagedOk);
  // Said above the plot, with the file and the loader's own words.
  QVERIFY(status->isVisible());
  QCOMPARE(status->text(), error);
  QVERIFY2(error.contains(QStringLiteral("damaged.pickle")) && error.contains(QString::fromStdString(loaderError)),
           qPrintable(error));
  QVERIFY(!window.findChild<QWidget*>(QStringLiteral("cancelSnapshot"))->isVisible());
  QCOMPARE(timeline->snapshot().bytes, bytes);
  QCOMPARE(timeline->plot()->graphCount(), graphs);

  // Another kind of artifact is refused before it is read.
  const auto [captureOk, captureError] = loadSnapshot(timeline, sample("captures/mixtral_2l_train.log.gz"));
  QVERIFY(!captureOk);
  QVERIFY2(captureError.contains(QStringLiteral("not a CUDA memory snapshot")), qPrintable(captureError));
  QCOMPARE(timeline->snapshot().bytes, bytes);

  // A load replaced by the next one is dropped: only the last one reports.
  QSignalSpy outcomes(timeline, &lathe::views::MemoryTimelineView::snapshotLoaded);
  timeline->loadSnapshot(sample("snapshots/llama3_8b_2l_train_snapshot.pickle"));
  timeline->loadSnapshot(damaged);
  QVERIFY(window.findChild<QWidget*>(QStringLiteral("cancelSnapshot"))->isVisible());  // while it loads
  QVERIFY(outcomes.wait(60000));
  QTest::qWait(200);
  QCOMPARE(outcomes.size(), 1);
  QVERIFY(!outcomes.first().first().toBool());
  QCOMPARE(timeline->snapshot().bytes, bytes);
}

void BudgetViewsTest::inferenceGraphPlansOffloadOnly() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QSignalSpy loaded(&window, &MainWindow::loadFinished);
  window.openPath(sample("captures/mixtral_2l_infer.log.gz"));
  QVERIFY(loaded.wait(60000));
  PlanSession* session = window.planSession();
  QVERIFY(waitUntil([&] { return session->planRun() && !session->busy(); }));
  QVERIFY(!session->jointGraph());
  lathe::views::BudgetPanel* panel = window.budgetPanel();
  QVERIFY(!panel->budgetSlider()->isEnabled());  // no recompute to budget

  // The resident share still re-plans: split, fusion and offload, weights streamed on H2D.
  panel->setResidentRatio(0.5);
  QVERIFY(waitUntil([&] {
    const auto& run = session->planRun();
    return run && run->budget && !session->busy() && session->currentStep() == run->stepCount() - 1;
  }));
  const PlanRun& run = *session->planRun();
  QCOMPARE(run.pipeline, QStringLiteral("split,fusion,offload(policy=heuristic,resident=0.50)"));
  QVERIFY(run.recordOf("recompute") == nullptr);
  QVERIFY(window.ganttView()->barCount(lathe::analysis::Stream::HostToDevice) > 0);
  QVERIFY(!session->frontier());
}

QTEST_MAIN(BudgetViewsTest)
#include "budget_views_test.moc"

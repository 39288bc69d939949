// A run folder of the Python runtime in the studio (tests/data/run_folder, made on the CPU by
// tests/data/make_run_folder.py): it opens on the graph the runtime planned (lathe_joint_graph) with
// the run's plan of it, and the memory timeline sets the run's measurements beside the plan. The measured peak drawn is what
// the profile says (before + the largest peak), only on a graph the run planned; a profile that does
// not read is a warning, and the capture still opens; so is a run plan that does not read, and the
// measurements stay.
#include <QApplication>
#include <QDockWidget>
#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>
#include <filesystem>
#include <qcustomplot.h>

#include "language.h"
#include "main_window.h"
#include "plan/plan_bundle.h"
#include "plan/profile.h"
#include "views/artifact_tree_model.h"
#include "views/diagnostics_model.h"
#include "views/formatting.h"
#include "views/gantt_view.h"
#include "views/memory_timeline_view.h"
#include "views/plan_session.h"

using lathe::studio::MainWindow;
namespace plan = lathe::plan;

namespace {

const QString kRunFolder = QStringLiteral(LATHE_SOURCE_DIR "/tests/data/run_folder");
// A training run on the H200 with 4 Llama-3-8B-dims layers' weights streamed (bench/device/offload).
const QString kOffloadRun = QStringLiteral(LATHE_SOURCE_DIR "/tests/data/h200_weight_offload_run");

bool openAndPlan(MainWindow& window, const QString& path) {
  QSignalSpy loaded(&window, &MainWindow::loadFinished);
  QSignalSpy planned(window.planSession(), &lathe::views::PlanSession::finished);
  window.openPath(path);
  if (!loaded.wait(120000) || !loaded.first().first().toBool()) return false;
  if (planned.isEmpty() && !planned.wait(120000)) return false;
  return planned.last().first().toBool();
}

// The run folder copied, with its profile replaced (the CPU run measured no peak).
QString copyWithProfile(const QTemporaryDir& dir, const std::string& profileText) {
  const std::filesystem::path to = dir.path().toStdString();
  std::filesystem::copy(kRunFolder.toStdString(), to, std::filesystem::copy_options::recursive);
  QFile file(QString::fromStdString((to / "lathe.profile.json").string()));
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) qFatal("cannot write the profile");
  file.write(profileText.data(), static_cast<qint64>(profileText.size()));
  return dir.path();
}

// The code of the window's one diagnostic, a warning; empty when there is not exactly one.
QString onlyWarningCode(const MainWindow& window) {
  const auto* diagnostics = window.findChild<lathe::views::DiagnosticsModel*>();
  if (!diagnostics || diagnostics->rowCount() != 1 || diagnostics->count(lathe::Severity::Warning) != 1) return {};
  return diagnostics->data(diagnostics->index(0, lathe::views::DiagnosticsModel::CodeColumn)).toString();
}

}  // namespace

class RunFolderTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCOMPARE(lathe::studio::applyLanguage(QStringLiteral("en")), QStringLiteral("en"));
  }

  void opensOnThePlannedGraphWithTheRunsMeasurements() {
    MainWindow window(MainWindow::Options{.useSettings = false});
    QVERIFY(openAndPlan(window, kRunFolder));
    QCOMPARE(window.planSession()->planRun()->graphId, QStringLiteral("0/0:lathe_joint_graph"));
    // The run's own plan is on show (its pipeline, re-run here), not one the studio would make.
    const plan::PlanBundle runPlan = plan::readPlan((kRunFolder + QStringLiteral("/plans/0_0_lathe_joint_graph.plan.json")).toStdString());
    QCOMPARE(window.planSession()->planRun()->pipeline, QString::fromStdString(runPlan.pipeline));
    const auto* timeline = window.findChild<lathe::views::MemoryTimelineView*>();
    QVERIFY(timeline);
    const plan::MeasuredProfile profile = plan::readProfile((kRunFolder + QStringLiteral("/lathe.profile.json")).toStdString());
    QVERIFY(!profile.maxPeakBytes());  // measured on the CPU: a time, no peak
    QCOMPARE(timeline->plottedMeasuredPeakBytes(), 0.0);
    QVERIFY2(timeline->measuredSummary().startsWith(QStringLiteral("measured (cpu): ")), qPrintable(timeline->measuredSummary()));
    QVERIFY(timeline->measuredSummary().endsWith(QStringLiteral(", %1 steps").arg(profile.steps.size())));
  }

  void drawsTheMeasuredPeakOnlyOnAGraphTheRunPlanned() {
    plan::MeasuredProfile profile = plan::readProfile((kRunFolder + QStringLiteral("/lathe.profile.json")).toStdString());
    profile.device = "NVIDIA H200";
    profile.steps[0].peakBytes = 90'000;
    profile.steps[0].beforeBytes = 40'000;
    profile.steps[1].peakBytes = 95'000;  // the largest peak
    profile.steps[1].beforeBytes = 40'000;
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    MainWindow window(MainWindow::Options{.useSettings = false});
    QVERIFY(openAndPlan(window, copyWithProfile(dir, plan::profileToJson(profile))));
    const auto* timeline = window.findChild<lathe::views::MemoryTimelineView*>();
    QCOMPARE(timeline->plottedMeasuredPeakBytes(), 135'000.0);
    QVERIFY(timeline->measuredSummary().startsWith(QStringLiteral("measured (NVIDIA H200): ")));

    // A graph the run did not plan (torch's aot_joint_graph) gets no measured line.
    QSignalSpy planned(window.planSession(), &lathe::views::PlanSession::finished);
    auto* tree = window.findChild<QTreeView*>();
    const auto* model = qobject_cast<const lathe::views::ArtifactTreeModel*>(tree->model());
    QVERIFY(model);
    tree->setCurrentIndex(model->indexOfGraph(QStringLiteral("0/0:aot_joint_graph")));
    QVERIFY(planned.wait(120000));
    QCOMPARE(window.planSession()->planRun()->graphId, QStringLiteral("0/0:aot_joint_graph"));
    QCOMPARE(timeline->plottedMeasuredPeakBytes(), 0.0);
    QVERIFY(timeline->measuredSummary().isEmpty());
  }

  void anUnreadableProfileIsAWarningAndTheCaptureOpens() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    MainWindow window(MainWindow::Options{.useSettings = false});
    QVERIFY(openAndPlan(window, copyWithProfile(dir, "{\"format\": \"lathe.profile/9\"}")));
    QCOMPARE(onlyWarningCode(window), QStringLiteral("profile_unreadable"));
    const auto* timeline = window.findChild<lathe::views::MemoryTimelineView*>();
    QVERIFY(timeline->measuredSummary().isEmpty());
  }

  void aRunThatStreamedWeightsShowsItsStepMeasuredBesideSimulated() {
    using lathe::analysis::Stream;
    MainWindow window(MainWindow::Options{.useSettings = false});
    window.resize(1600, 1000);
    window.show();
    QVERIFY(openAndPlan(window, kOffloadRun));
    lathe::views::OffloadRunView* view = window.offloadRunView();
    auto* dock = window.findChild<QDockWidget*>(QStringLiteral("offloadRunDock"));
    QVERIFY(view->hasRun() && dock->toggleViewAction()->isChecked());
    window.showPlanView(MainWindow::PlanView::OffloadRun);
    const plan::MeasuredProfile profile = plan::readProfile((kOffloadRun + QStringLiteral("/lathe.profile.json")).toStdString());
    const plan::WeightOffloadRun& run = *profile.weightOffload;
    QCOMPARE(run.kind, std::string("training"));
    // Every span of the profile is a bar of its row: the forwards and backwards, the copies.
    QCOMPARE(view->barCount(true, Stream::Compute), static_cast<int>(run.measured.segments.size()));
    QCOMPARE(view->barCount(false, Stream::Compute), 2 * static_cast<int>(run.units.size()));
    QCOMPARE(view->barCount(true, Stream::HostToDevice), static_cast<int>(run.measured.h2d.size()));
    QCOMPARE(view->barCount(false, Stream::HostToDevice), static_cast<int>(run.simulated.h2d.size()));
    QVERIFY(view->barCount(true, Stream::DeviceToHost) > 0);
    QCOMPARE(view->barCount(false, Stream::DeviceToHost), 0);  // the planner does not model gradient copies
    QVERIFY(view->stallCount(true) > 0);  // the forward waits for its first weights
    QVERIFY2(view->title().contains(lathe::views::formatSeconds(run.measured.stepSeconds)), qPrintable(view->title()));
    // Hovering the first measured segment and the last simulated one names them.
    QCustomPlot* plot = view->plot();
    plot->replot();
    auto pixel = [&](const plan::TimedSpan& span, bool measured) {
      return QPointF(plot->xAxis->coordToPixel((span.start + span.end) / 2 * 1e3),
                     plot->yAxis->coordToPixel(view->rowOf(measured, Stream::Compute)));
    };
    QVERIFY2(view->toolTipAt(pixel(run.measured.segments.front(), true)).startsWith(QStringLiteral("Measured compute: layers.0\n")),
             qPrintable(view->toolTipAt(pixel(run.measured.segments.front(), true))));
    QVERIFY(view->toolTipAt(pixel(run.simulated.segments.back(), false))
                .startsWith(QStringLiteral("Simulated compute: layers.0 backward\n")));

    // A run folder that streamed nothing has no such run: the dock goes.
    QVERIFY(openAndPlan(window, kRunFolder));
    QVERIFY(!view->hasRun() && !dock->toggleViewAction()->isChecked());
  }

  void anUnreadableRunPlanIsItsOwnWarningAndTheMeasurementsStay() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    std::filesystem::copy(kRunFolder.toStdString(), dir.path().toStdString(), std::filesystem::copy_options::recursive);
    QFile plan(dir.filePath(QStringLiteral("plans/0_0_lathe_joint_graph.plan.json")));
    QVERIFY(plan.open(QIODevice::WriteOnly | QIODevice::Truncate));
    plan.write("{\"format\": \"lathe.plan/1\", \"graph\": ");  // cut off mid-write
    plan.close();
    MainWindow window(MainWindow::Options{.useSettings = false});
    QVERIFY(openAndPlan(window, dir.path()));
    QCOMPARE(onlyWarningCode(window), QStringLiteral("run_plan_unreadable"));
    const auto* timeline = window.findChild<lathe::views::MemoryTimelineView*>();
    QVERIFY2(timeline->measuredSummary().startsWith(QStringLiteral("measured (cpu): ")), qPrintable(timeline->measuredSummary()));
  }
};

QTEST_MAIN(RunFolderTest)
#include "run_folder_test.moc"

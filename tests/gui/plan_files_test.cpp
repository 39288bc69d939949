// Plan bundles in the studio on a real capture: a bundle written as `lathe plan -o` writes it opens
// (File › Open, drag and drop, the command line) into the same graph, pipeline, target and figures;
// a bundle of another graph is refused with both fingerprints and changes nothing; Save Plan writes
// a bundle that reads back with the session's decisions; Export Kernels writes the bundle
// `lathe export` writes, and a cancelled or refused export leaves the folder as it was.
#include <qcustomplot.h>

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDropEvent>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>
#include <QUrl>
#include <algorithm>
#include <functional>
#include <filesystem>

#include "gui_support.h"
#include "io/artifact.h"
#include "language.h"
#include "kernels/cuda_codegen.h"
#include "main_window.h"
#include "passes/plan_builder.h"
#include "passes/plan_target.h"
#include "plan/plan_bind.h"
#include "plan/plan_bundle.h"
#include "studio_process.h"
#include "util/format.h"
#include "views/artifact_tree_model.h"
#include "views/budget_panel.h"
#include "views/formatting.h"
#include "views/gantt_view.h"
#include "views/kernel_exporter.h"
#include "views/memory_timeline_view.h"
#include "views/pipeline_panel.h"
#include "views/plan_file.h"
#include "views/plan_session.h"

using lathe::studio::MainWindow;
namespace plan = lathe::plan;

Q_DECLARE_METATYPE(lathe::views::KernelExportOutcome)

namespace {

using lathe::testing::sample;

const QString kTinyTrain = sample("captures/llama3_8b_2l_tiny_train.log.gz");
// The same model at its full sizes: a joint graph of the same id, another graph.
const QString kFullTrain = sample("captures/llama3_8b_2l_train.log.gz");
const std::string kJointGraph = "0/0:aot_joint_graph";
// Every pass, on a target other than the studio's default: the plan must bring its own.
const std::string kPipeline =
    "split,fusion,recompute(memory=6MiB,policy=budget),offload(policy=heuristic,resident=0.30)";

// The plan `lathe plan CAPTURE --graph GRAPH --hw HW --pipeline PIPELINE -o PATH` writes, made here
// without the studio; `artifact` is what the bundle names as its capture.
plan::PlanBundle writeBundle(const QString& capture, const std::string& hardware, const std::string& pipeline,
                             const QString& path, const std::string& artifact) {
  const lathe::passes::PlanTarget target(lathe::io::loadArtifact(capture.toStdString(), {}), kJointGraph,
                                         lathe::hw::resolveHwProfile(hardware));
  const lathe::passes::PassContext context = target.context();
  const auto run = lathe::passes::runPipeline(context, lathe::passes::parsePipeline(pipeline));
  const plan::PlanBundle bundle = lathe::passes::buildPlanBundle(context, run, artifact, kJointGraph);
  plan::writePlan(path.toStdString(), bundle);
  return bundle;
}

double estimate(const plan::PlanBundle& bundle, const std::string& name) {
  for (const auto& [key, value] : bundle.estimates) {
    if (key == name) return value;
  }
  qFatal("no estimate %s", name.c_str());
}

bool waitForLoad(MainWindow& window, const std::function<void()>& open, bool expectOk = true) {
  QSignalSpy loaded(&window, &MainWindow::loadFinished);
  open();
  return loaded.wait(120000) && loaded.first().first().toBool() == expectOk;
}

// Opens a plan and waits for its pipeline run to come back and be checked.
bool openPlan(MainWindow& window, const std::function<void()>& open) {
  QSignalSpy opened(&window, &MainWindow::planOpened);
  if (!waitForLoad(window, open)) return false;
  return (!opened.isEmpty() || opened.wait(180000)) && opened.first().first().toBool();
}

bool openAndPlan(MainWindow& window, const QString& path) {
  QSignalSpy planned(window.planSession(), &lathe::views::PlanSession::finished);
  if (!waitForLoad(window, [&] { window.openPath(path); })) return false;
  if (planned.isEmpty() && !planned.wait(180000)) return false;
  return planned.last().first().toBool();
}

QMessageBox* planMessage(MainWindow& window) {
  return window.findChild<QMessageBox*>(QStringLiteral("planMessage"));
}

// A write the window runs in the background (Save Plan, Export Report) to `path`, whose folder is
// missing: it ends (`done` with false), writes nothing and says so in a message (closed here).
template <typename Done>
bool failsWritingNothing(MainWindow& window, Done done, const std::function<void(const QString&)>& write,
                         const QString& path) {
  QSignalSpy ended(&window, done);
  write(path);
  if (!ended.wait(60000) || ended.first().first().toBool() || QFileInfo::exists(path)) return false;
  QMessageBox* message = planMessage(window);
  if (!message) return false;
  message->close();
  return true;
}

// Everything in a folder, hidden entries too (staging folders start with a dot).
QStringList entriesOf(const QString& folder) {
  return QDir(folder).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden | QDir::System, QDir::Name);
}

}  // namespace

class PlanFilesTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    // English as shipped: the plural forms ("47 of 50 fusion groups") come from lathe_en.ts.
    QCOMPARE(lathe::studio::applyLanguage(QStringLiteral("en")), QStringLiteral("en"));
    qRegisterMetaType<lathe::views::KernelExportOutcome>();
  }
  void captureIsFoundAsGivenOrBesideThePlan();
  void openedPlanShowsItsGraphPipelineTargetAndFigures();
  void droppedPlanOpens();
  void planOnACustomTargetIsPlannedOnIt();
  void planThatIsNotReproducedSaysSo();
  void planOfAnotherGraphIsRefused();
  void headlessScreenshotShowsThePlan();
  void savedPlanReadsBackWithTheSessionsDecisions();
  void exportKernelsWritesTheBundle();
  void cancelledExportLeavesTheFolderAsItWas();
  void exportRefusesAFolderThatIsNoBundle();
  void exportedReportIsThePlanOnShow();

 private:
  QTemporaryDir dir_;
};

void PlanFilesTest::captureIsFoundAsGivenOrBesideThePlan() {
  plan::PlanBundle bundle;
  bundle.artifact = kTinyTrain.toStdString();
  QCOMPARE(plan::captureOf(bundle, "/nowhere/x.plan.json"), bundle.artifact);
  // Relative to the plan's folder when not relative to the working directory.
  const QString capturesDir = QFileInfo(kTinyTrain).absolutePath();
  bundle.artifact = "llama3_8b_2l_tiny_train.log.gz";
  QCOMPARE(QString::fromStdString(plan::captureOf(bundle, (capturesDir + QStringLiteral("/x.plan.json")).toStdString())),
           QDir(capturesDir).filePath(QStringLiteral("llama3_8b_2l_tiny_train.log.gz")));
  bundle.artifact = "no_such_capture.log.gz";
  try {
    static_cast<void>(plan::captureOf(bundle, "/tmp/x.plan.json"));
    QFAIL("a capture that is nowhere was found");
  } catch (const lathe::Error& error) {
    QCOMPARE(error.code(), lathe::ErrorCode::BadInput);
    QVERIFY2(QString::fromUtf8(error.what()).contains(QStringLiteral("no_such_capture.log.gz")), error.what());
  }
  QCOMPARE(lathe::views::defaultPlanFileName(QStringLiteral("0/0:aot_joint_graph")),
           QStringLiteral("0_0_aot_joint_graph.plan.json"));
}

void PlanFilesTest::openedPlanShowsItsGraphPipelineTargetAndFigures() {
  const QString path = dir_.filePath(QStringLiteral("tiny.plan.json"));
  const plan::PlanBundle bundle = writeBundle(kTinyTrain, "h100", kPipeline, path, kTinyTrain.toStdString());
  QVERIFY(bundle.state.offload.has_value());  // the step time is the simulated offload step's

  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openPlan(window, [&] { window.openPath(path); }));

  // The plan's graph, pipeline and target.
  QCOMPARE(window.shownGraphId().toStdString(), bundle.graphId);
  lathe::views::PlanSession* session = window.planSession();
  const auto run = session->planRun();
  QVERIFY(run);
  QCOMPARE(run->pipeline.toStdString(), bundle.pipeline);
  QCOMPARE(window.pipelinePanel()->pipelineText().toStdString(), bundle.pipeline);
  QCOMPARE(session->hardware(), QStringLiteral("h100"));
  QVERIFY(run->target->hardware() == bundle.hardware);
  QCOMPARE(window.findChild<QComboBox*>(QStringLiteral("targetGpu"))->currentData().toString(), QStringLiteral("h100"));
  QCOMPARE(session->currentStep(), run->stepCount() - 1);
  QCOMPARE(window.planFile(), path);
  QVERIFY2(window.pipelinePanel()->runOrigin().contains(QStringLiteral("makes the decisions it records")),
           qPrintable(window.pipelinePanel()->runOrigin()));

  // The decisions are the bundle's, node for node.
  const plan::PlanState& shown = run->run.finalState();
  const plan::BoundPlan bound = plan::bind(bundle, *run->graph, path.toStdString());
  QVERIFY(shown.recompute && shown.offload && !shown.groups.empty());
  QCOMPARE(shown.group, bound.state.group);
  QCOMPARE(shown.piece, bound.state.piece);
  QCOMPARE(shown.recompute->saved, bound.state.recompute->saved);
  QCOMPARE(shown.recompute->recomputed, bound.state.recompute->recomputed);
  QCOMPARE(shown.offload->resident, bound.state.offload->resident);

  // The figures on show are the bundle's.
  const uint64_t peak = bundle.timeline.peakBytes;
  const double stepSeconds = estimate(bundle, "step_seconds");
  QCOMPARE(static_cast<uint64_t>(std::llround(window.timelineView()->plottedPeakBytes())), peak);
  QCOMPARE(session->currentPlanned()->timeline.peakBytes, peak);
  QCOMPARE(run->stepEstimateSeconds(), stepSeconds);
  auto* stats = window.findChild<QTableWidget*>(QStringLiteral("stepStats"));
  QCOMPARE(stats->item(0, 0)->text(), QStringLiteral("planned peak"));
  QCOMPARE(stats->item(0, 1)->text(), lathe::views::formatBytes(peak));
  QCOMPARE(stats->item(1, 0)->text(), QStringLiteral("planned step time"));
  QCOMPARE(stats->item(1, 1)->text(), lathe::views::formatSeconds(stepSeconds));
  const QString ganttTitle = window.ganttView()->title();
  QVERIFY2(ganttTitle.startsWith(QStringLiteral("Step %1 on ").arg(lathe::views::formatSeconds(stepSeconds))),
           qPrintable(ganttTitle));
  const QString outcome = window.budgetPanel()->outcomeLabel()->text();
  QVERIFY2(outcome.contains(QStringLiteral("Peak %1").arg(lathe::views::formatBytes(peak))) &&
               outcome.contains(lathe::views::formatSeconds(stepSeconds)),
           qPrintable(outcome));

  // The plan can be saved and, having fusion groups, exported.
  QVERIFY(window.findChild<QAction*>(QStringLiteral("savePlan"))->isEnabled());
  QVERIFY(window.findChild<QAction*>(QStringLiteral("exportKernels"))->isEnabled());
}

void PlanFilesTest::droppedPlanOpens() {
  // The plan names its capture relative to its own folder, as `lathe plan -o` run there does.
  QTemporaryDir folder;
  QVERIFY(QFile::copy(kTinyTrain, folder.filePath(QStringLiteral("capture.log.gz"))));
  const QString path = folder.filePath(QStringLiteral("dropped.plan.json"));
  const plan::PlanBundle bundle =
      writeBundle(kTinyTrain, "h200", "split,fusion,recompute(policy=heuristic)", path, "capture.log.gz");

  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(path)});
  QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(&window, &enter);
  QVERIFY(enter.isAccepted());
  QVERIFY(openPlan(window, [&] {
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &drop);
  }));
  QCOMPARE(window.currentPath(), path);
  QCOMPARE(window.shownGraphId().toStdString(), bundle.graphId);
  QCOMPARE(window.planSession()->planRun()->pipeline.toStdString(), bundle.pipeline);
  const auto* tree = qobject_cast<lathe::views::ArtifactTreeModel*>(
      window.findChild<QTreeView*>(QStringLiteral("artifactTree"))->model());
  QCOMPARE(QString::fromStdString(tree->artifact()->path.string()), folder.filePath(QStringLiteral("capture.log.gz")));
  QCOMPARE(static_cast<uint64_t>(std::llround(window.timelineView()->plottedPeakBytes())), bundle.timeline.peakBytes);
}

void PlanFilesTest::planOnACustomTargetIsPlannedOnIt() {
  // A profile of the user's own (`lathe plan --hw FILE`): the bundle holds it, the file may be gone.
  lathe::hw::HwProfile custom = lathe::hw::resolveHwProfile("h200");
  custom.id = "half_h200";
  custom.name = "H200 at half bandwidth";
  custom.hbmBandwidth /= 2;
  const QString profilePath = dir_.filePath(QStringLiteral("half_h200.json"));
  {
    QFile file(profilePath);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QByteArray::fromStdString(lathe::hw::hwProfileToJson(custom).dump(1)));
  }
  const QString path = dir_.filePath(QStringLiteral("custom.plan.json"));
  const plan::PlanBundle bundle =
      writeBundle(kTinyTrain, profilePath.toStdString(), "split,fusion,recompute(policy=torch)", path,
                  kTinyTrain.toStdString());
  QVERIFY(QFile::remove(profilePath));
  QVERIFY(bundle.hardware == custom);

  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openPlan(window, [&] { window.openPath(path); }));
  const auto run = window.planSession()->planRun();
  QVERIFY(run->target->hardware() == custom);
  QCOMPARE(run->hardware, QStringLiteral("H200 at half bandwidth"));
  QVERIFY(window.planSession()->hardware().endsWith(QStringLiteral("/half_h200.json")));
  QCOMPARE(window.findChild<QComboBox*>(QStringLiteral("targetGpu"))->currentText(), QStringLiteral("half_h200.json"));
  QCOMPARE(static_cast<uint64_t>(std::llround(window.timelineView()->plottedPeakBytes())), bundle.timeline.peakBytes);
  QCOMPARE(run->stepEstimateSeconds(), estimate(bundle, "step_seconds"));
}

void PlanFilesTest::planThatIsNotReproducedSaysSo() {
  // A bundle whose recompute decision says another policy than its pipeline runs (as one from
  // another version of Lathe might): it opens, and the window says which decisions differ.
  const QString written = dir_.filePath(QStringLiteral("written.plan.json"));
  writeBundle(kTinyTrain, "h200", "split,fusion,recompute(policy=torch)", written, kTinyTrain.toStdString());
  QFile file(written);
  QVERIFY(file.open(QIODevice::ReadOnly));
  QByteArray json = file.readAll();
  QCOMPARE(json.count("\"policy\": \"torch\""), 1);
  json.replace("\"policy\": \"torch\"", "\"policy\": \"heuristic\"");
  const QString path = dir_.filePath(QStringLiteral("edited.plan.json"));
  QFile edited(path);
  QVERIFY(edited.open(QIODevice::WriteOnly));
  edited.write(json);
  edited.close();

  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openPlan(window, [&] { window.openPath(path); }));
  QCOMPARE(window.pipelinePanel()->runOrigin(),
           QStringLiteral("Plan edited.plan.json: its pipeline re-run here decides otherwise (recompute). The views "
                          "show the re-run, not the bundle."));
  QCOMPARE(window.planSession()->planRun()->run.finalState().recompute->policy, std::string("torch"));
}

void PlanFilesTest::planOfAnotherGraphIsRefused() {
  // A plan of the full-size model's joint graph that names the tiny capture: same graph id, other graph.
  const QString path = dir_.filePath(QStringLiteral("other_graph.plan.json"));
  const plan::PlanBundle bundle = writeBundle(kFullTrain, "h200", "split,fusion", path, kTinyTrain.toStdString());
  const lathe::io::Artifact tiny = lathe::io::loadArtifact(kTinyTrain.toStdString(), {});
  const std::vector<lathe::io::GraphListing> graphs = tiny.graphs();
  const lathe::io::GraphListing* listing = lathe::io::findGraph(graphs, kJointGraph);
  QVERIFY(listing != nullptr);
  const QString captureFingerprint = QString::fromStdString(plan::graphFingerprint(*listing->graph));
  const QString planFingerprint = QString::fromStdString(bundle.fingerprint);
  QVERIFY(captureFingerprint != planFingerprint);

  // The window shows another capture's plan; the refused one must leave all of it in place.
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openAndPlan(window, sample("captures/llama3_8b_2l_tiny_infer.log.gz")));
  const auto* tree = qobject_cast<lathe::views::ArtifactTreeModel*>(
      window.findChild<QTreeView*>(QStringLiteral("artifactTree"))->model());
  const auto artifactBefore = tree->artifact();
  const QString graphBefore = window.shownGraphId();
  const auto runBefore = window.planSession()->planRun();
  const QString hardwareBefore = window.planSession()->hardware();

  QVERIFY(waitForLoad(window, [&] { window.openPath(path); }, false));
  QVERIFY2(window.lastOpenError().contains(captureFingerprint) && window.lastOpenError().contains(planFingerprint),
           qPrintable(window.lastOpenError()));
  QMessageBox* box = planMessage(window);
  QVERIFY(box);
  QVERIFY(box->isVisible());
  QVERIFY2(box->informativeText().contains(captureFingerprint) && box->informativeText().contains(planFingerprint),
           qPrintable(box->informativeText()));
  QVERIFY2(box->text().contains(QStringLiteral("other_graph.plan.json")), qPrintable(box->text()));
  QCOMPARE(tree->artifact(), artifactBefore);
  QCOMPARE(window.currentPath(), sample("captures/llama3_8b_2l_tiny_infer.log.gz"));  // what a rebuilt window reopens
  QCOMPARE(window.shownGraphId(), graphBefore);
  QCOMPARE(window.planSession()->planRun(), runBefore);
  QCOMPARE(window.planSession()->hardware(), hardwareBefore);
  QVERIFY(!window.planSession()->busy());
  box->close();

  // Headless: stderr names both fingerprints, the exit code is bad input's, and no picture is written.
  const QString png = dir_.filePath(QStringLiteral("refused.png"));
  const lathe::testing::StudioRun studio = lathe::testing::runStudio({QStringLiteral("--screenshot"), png, path});
  QCOMPARE(studio.exitCode, 2);
  QVERIFY2(studio.errors.contains(captureFingerprint) && studio.errors.contains(planFingerprint),
           qPrintable(studio.errors));
  QVERIFY(!QFileInfo::exists(png));
}

void PlanFilesTest::headlessScreenshotShowsThePlan() {
  const QString path = dir_.filePath(QStringLiteral("headless.plan.json"));
  const plan::PlanBundle bundle = writeBundle(kTinyTrain, "h100", kPipeline, path, kTinyTrain.toStdString());
  for (const QString& view : {QStringLiteral("graph"), QStringLiteral("pipeline")}) {
    const QString png = dir_.filePath(view + QStringLiteral("-plan.png"));
    const lathe::testing::StudioRun studio =
        lathe::testing::runStudio({QStringLiteral("--screenshot"), png, QStringLiteral("--view"), view, path});
    QVERIFY2(studio.exitCode == 0, qPrintable(studio.errors));
    const QImage image(png);
    QCOMPARE(image.size(), QSize(1600, 1000));
    QVERIFY(lathe::testing::distinctColours(image) > 20);
    const QString wrong = lathe::testing::wrongView(studio, image, view);
    QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
  }
}

void PlanFilesTest::savedPlanReadsBackWithTheSessionsDecisions() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QAction* save = window.findChild<QAction*>(QStringLiteral("savePlan"));
  QVERIFY(!save->isEnabled());  // nothing planned yet
  QVERIFY(openAndPlan(window, kTinyTrain));
  QVERIFY(save->isEnabled());
  QVERIFY(window.planFile().isEmpty());

  lathe::views::PlanSession* session = window.planSession();
  QSignalSpy planned(session, &lathe::views::PlanSession::finished);
  session->run(QString::fromStdString(kPipeline));
  QVERIFY(planned.wait(180000));
  QVERIFY(planned.first().first().toBool());
  const auto run = session->planRun();
  const plan::PlanState& state = run->run.finalState();
  QVERIFY(!state.groups.empty() && state.recompute && state.offload);

  // Nothing is written where the folder is missing, and the window says so.
  QVERIFY(failsWritingNothing(window, &MainWindow::planSaved, [&](const QString& path) { window.savePlan(path); },
                              dir_.filePath(QStringLiteral("missing/x.plan.json"))));

  const QString path = dir_.filePath(lathe::views::defaultPlanFileName(run->graphId));
  QSignalSpy saved(&window, &MainWindow::planSaved);
  window.savePlan(path);
  QVERIFY(!save->isEnabled());  // while it is written
  QVERIFY(saved.wait(60000));
  QVERIFY2(saved.first().first().toBool(), qPrintable(saved.first().at(1).toString()));
  QVERIFY(save->isEnabled());
  QCOMPARE(window.planFile(), path);

  const plan::PlanBundle back = plan::readPlan(path.toStdString());
  QCOMPARE(back.graphId, run->graphId.toStdString());
  QCOMPARE(back.artifact, std::filesystem::absolute(kTinyTrain.toStdString()).string());
  QCOMPARE(back.fingerprint, plan::graphFingerprint(*run->graph));
  QCOMPARE(back.pipeline, kPipeline);
  QVERIFY(back.hardware == run->target->hardware());
  // Bound to the session's graph, the bundle decides what the session does.
  const plan::BoundPlan bound = plan::bind(back, *run->graph, path.toStdString());
  QCOMPARE(lathe::views::differingDecisions(bound.state, state), QStringList());
  QCOMPARE(bound.state.recompute->saved, state.recompute->saved);
  QCOMPARE(bound.state.recompute->recomputed, state.recompute->recomputed);
  QCOMPARE(bound.state.group, state.group);
  QCOMPARE(bound.state.offload->resident, state.offload->resident);
  QCOMPARE(back.timeline.peakBytes, run->planned.back().timeline.peakBytes);

  // Running another pipeline leaves the file behind: the plan on show is in no file.
  session->run(QStringLiteral("split,fusion"));
  QVERIFY(planned.wait(180000));
  QVERIFY(window.planFile().isEmpty());
}

void PlanFilesTest::exportKernelsWritesTheBundle() {
  if (QStandardPaths::findExecutable(QStringLiteral("nvcc")).isEmpty())
    QSKIP("nvcc is not on PATH: the export compiles the kernels with it (CI and the dev machine have it)");
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openAndPlan(window, kTinyTrain));
  const auto run = window.planSession()->planRun();
  const plan::PlanState& state = run->run.finalState();
  QVERIFY(!state.groups.empty());
  const lathe::kernels::KernelSet expected = lathe::kernels::generateKernels(*run->graph, state);
  QVERIFY(!expected.kernels.empty());

  QTemporaryDir parent;
  const QString folder = parent.filePath(QStringLiteral("kernels"));
  QSignalSpy finished(window.kernelExporter(), &lathe::views::KernelExporter::finished);
  QSignalSpy stages(window.kernelExporter(), &lathe::views::KernelExporter::stageChanged);
  window.exportKernels(folder);
  QVERIFY(!window.findChild<QAction*>(QStringLiteral("exportKernels"))->isEnabled());  // while it runs
  QVERIFY(window.findChild<QWidget*>(QStringLiteral("cancelExport"))->isVisible());
  QVERIFY(finished.wait(600000));
  const auto outcome = finished.first().first().value<lathe::views::KernelExportOutcome>();
  QVERIFY2(outcome.ok(), qPrintable(outcome.error));
  QVERIFY(stages.size() >= 3);  // compiler, generation, compilation, writing
  QVERIFY(!window.findChild<QWidget*>(QStringLiteral("cancelExport"))->isVisible());

  QFile manifestFile(QDir(folder).filePath(QStringLiteral("manifest.json")));
  QVERIFY(manifestFile.open(QIODevice::ReadOnly));
  const QJsonObject manifest = QJsonDocument::fromJson(manifestFile.readAll()).object();
  QCOMPARE(manifest.value(QStringLiteral("format")).toString(), QStringLiteral("lathe.kernels/1"));
  QCOMPARE(static_cast<size_t>(manifest.value(QStringLiteral("kernels")).toArray().size()), expected.kernels.size());
  QCOMPARE(static_cast<size_t>(manifest.value(QStringLiteral("not_generated")).toArray().size()),
           expected.notGenerated.size());
  QCOMPARE(manifest.value(QStringLiteral("graph")).toString(), run->graphId);
  QCOMPARE(outcome.kernels, expected.kernels.size());
  QCOMPARE(outcome.groups, state.groups.size());
  QCOMPARE(outcome.manifest, manifestFile.fileName());
  QVERIFY(QFileInfo(QDir(folder).filePath(QStringLiteral("liblathe_kernels.so"))).size() > 0);
  QVERIFY(QFileInfo(QDir(folder).filePath(QStringLiteral("kernels.fatbin"))).size() > 0);
  QCOMPARE(entriesOf(parent.path()), QStringList{QStringLiteral("kernels")});  // no staging left behind

  // The window reports "N of M fusion groups generated" and where.
  QMessageBox* box = planMessage(window);
  QVERIFY(box);
  const QString summary = QStringLiteral("%1 of %2 fusion groups generated").arg(expected.kernels.size()).arg(state.groups.size());
  QVERIFY2(box->text().contains(summary) && box->text().contains(folder), qPrintable(box->text()));
  box->close();

  // Saved afterwards, the plan records the export as `lathe export` does.
  const QString path = parent.filePath(QStringLiteral("exported.plan.json"));
  QSignalSpy saved(&window, &MainWindow::planSaved);
  window.savePlan(path);
  QVERIFY(saved.wait(60000));
  const plan::PlanBundle back = plan::readPlan(path.toStdString());
  QCOMPARE(back.kernels.size(), size_t{1});
  QCOMPARE(QString::fromStdString(back.kernels[0].manifest), manifestFile.fileName());
  QCOMPARE(back.kernels[0].kernels, uint64_t{expected.kernels.size()});
  QCOMPARE(back.kernels[0].notGenerated, uint64_t{expected.notGenerated.size()});

  // A second export replaces the first in place.
  finished.clear();
  window.exportKernels(folder);
  QVERIFY(finished.wait(600000));
  QVERIFY(finished.first().first().value<lathe::views::KernelExportOutcome>().ok());
  QCOMPARE(entriesOf(parent.path()), (QStringList{QStringLiteral("exported.plan.json"), QStringLiteral("kernels")}));
}

void PlanFilesTest::cancelledExportLeavesTheFolderAsItWas() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openAndPlan(window, kTinyTrain));
  QTemporaryDir parent;
  const QString folder = parent.filePath(QStringLiteral("kernels"));
  QSignalSpy finished(window.kernelExporter(), &lathe::views::KernelExporter::finished);
  window.exportKernels(folder);
  window.findChild<QPushButton*>(QStringLiteral("cancelExport"))->click();
  // Cancelled at its next stage, or, when the compiler was running already, once it is done.
  QVERIFY(finished.wait(600000));
  const auto outcome = finished.first().first().value<lathe::views::KernelExportOutcome>();
  QVERIFY(outcome.cancelled);
  QVERIFY(!outcome.ok());
  QVERIFY(!QFileInfo::exists(folder));
  QCOMPARE(entriesOf(parent.path()), QStringList());
  QVERIFY(window.findChild<QAction*>(QStringLiteral("exportKernels"))->isEnabled());

  // Cancelled while the compiler runs, over an earlier export: that one stays, byte for byte.
  if (QStandardPaths::findExecutable(QStringLiteral("nvcc")).isEmpty())
    QSKIP("nvcc is not on PATH: no compiler run to cancel (CI and the dev machine have it)");
  QVERIFY(QDir().mkpath(folder));
  const QByteArray earlier = R"({"format": "lathe.kernels/1", "kernels": []})";
  for (const char* name : {"manifest.json", "mine.txt"}) {
    QFile file(QDir(folder).filePath(QString::fromLatin1(name)));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(earlier);
  }
  finished.clear();
  QSignalSpy stages(window.kernelExporter(), &lathe::views::KernelExporter::stageChanged);
  connect(window.kernelExporter(), &lathe::views::KernelExporter::stageChanged, &window, [&](const QString& text) {
    if (text.startsWith(QStringLiteral("Compiling"))) window.findChild<QPushButton*>(QStringLiteral("cancelExport"))->click();
  });
  window.exportKernels(folder);
  QVERIFY(finished.wait(600000));
  QVERIFY(finished.first().first().value<lathe::views::KernelExportOutcome>().cancelled);
  QVERIFY(stages.last().first().toString().startsWith(QStringLiteral("Compiling")));
  QCOMPARE(entriesOf(parent.path()), QStringList{QStringLiteral("kernels")});
  QCOMPARE(entriesOf(folder), (QStringList{QStringLiteral("manifest.json"), QStringLiteral("mine.txt")}));
  QFile manifest(QDir(folder).filePath(QStringLiteral("manifest.json")));
  QVERIFY(manifest.open(QIODevice::ReadOnly));
  QCOMPARE(manifest.readAll(), earlier);
}

void PlanFilesTest::exportRefusesAFolderThatIsNoBundle() {
  if (QStandardPaths::findExecutable(QStringLiteral("nvcc")).isEmpty())
    QSKIP("nvcc is not on PATH: without a compiler the export stops before it looks at the folder");
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openAndPlan(window, kTinyTrain));
  QTemporaryDir folder;
  QFile notes(folder.filePath(QStringLiteral("notes.txt")));
  QVERIFY(notes.open(QIODevice::WriteOnly));
  notes.write("mine");
  notes.close();
  QSignalSpy finished(window.kernelExporter(), &lathe::views::KernelExporter::finished);
  window.exportKernels(folder.path());
  QVERIFY(finished.wait(60000));
  const auto outcome = finished.first().first().value<lathe::views::KernelExportOutcome>();
  QVERIFY(!outcome.cancelled);
  QVERIFY2(outcome.error.contains(folder.path()) && outcome.error.contains(QStringLiteral("not a lathe export bundle")),
           qPrintable(outcome.error));
  QCOMPARE(entriesOf(folder.path()), QStringList{QStringLiteral("notes.txt")});
  QVERIFY(planMessage(window));
}

// File › Export Report… writes passes::htmlReport of the plan on show: its graph, pipeline and
// peak, the pictures, the compiles; a folder that is missing gets nothing and a message; a snapshot
// (no graph, no plan) still gets its diagnostics.
void PlanFilesTest::exportedReportIsThePlanOnShow() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QAction* report = window.findChild<QAction*>(QStringLiteral("exportReport"));
  QVERIFY(!report->isEnabled());  // nothing open
  QVERIFY(openAndPlan(window, kTinyTrain));
  QVERIFY(report->isEnabled());
  lathe::views::PlanSession* session = window.planSession();
  QSignalSpy planned(session, &lathe::views::PlanSession::finished);
  session->run(QString::fromStdString(kPipeline));
  QVERIFY(planned.wait(180000));
  QVERIFY(planned.first().first().toBool());
  const auto run = session->planRun();

  QVERIFY(failsWritingNothing(window, &MainWindow::reportExported, [&](const QString& path) { window.exportReport(path); },
                              dir_.filePath(QStringLiteral("missing/report.html"))));

  const QString path = dir_.filePath(QStringLiteral("tiny.report.html"));
  QSignalSpy written(&window, &MainWindow::reportExported);
  window.exportReport(path);
  QVERIFY(!report->isEnabled());  // while it is written
  QVERIFY(written.wait(60000));
  QVERIFY2(written.first().first().toBool(), qPrintable(written.first().at(1).toString()));
  QVERIFY(report->isEnabled());
  QFile file(path);
  QVERIFY(file.open(QIODevice::ReadOnly));
  const QString html = QString::fromUtf8(file.readAll());
  QVERIFY(html.startsWith(QStringLiteral("<!DOCTYPE html>")));
  QVERIFY(html.contains(QStringLiteral("Plan of %1 on %2").arg(run->graphId, run->hardware)));
  QVERIFY(html.contains(QString::fromStdString(kPipeline).toHtmlEscaped()));
  QVERIFY(html.contains(QString::fromStdString(lathe::formatBytes(run->planned.back().timeline.peakBytes))));
  QCOMPARE(html.count(QStringLiteral("<svg")), 2);  // the memory timeline and the frontier
  QVERIFY(html.contains(QStringLiteral("<h2>Compiles</h2>")));
  QVERIFY(!html.contains(QStringLiteral("<script")));

  // A snapshot has no graph to plan: its report is what it holds.
  QVERIFY(waitForLoad(window, [&] { window.openPath(sample("snapshots/llama3_8b_2l_train_snapshot.pickle")); }));
  QVERIFY(report->isEnabled());
  const QString snapshotReport = dir_.filePath(QStringLiteral("snapshot.report.html"));
  QSignalSpy snapshotWritten(&window, &MainWindow::reportExported);
  window.exportReport(snapshotReport);
  QVERIFY(snapshotWritten.wait(60000));
  QVERIFY2(snapshotWritten.first().first().toBool(), qPrintable(snapshotWritten.first().at(1).toString()));
  QFile snapshotFile(snapshotReport);
  QVERIFY(snapshotFile.open(QIODevice::ReadOnly));
  const QString snapshotHtml = QString::fromUtf8(snapshotFile.readAll());
  QVERIFY(snapshotHtml.contains(QStringLiteral("<h2>Diagnostics")));
  QVERIFY(!snapshotHtml.contains(QStringLiteral("Plan of")));
}

QTEST_MAIN(PlanFilesTest)
#include "plan_files_test.moc"

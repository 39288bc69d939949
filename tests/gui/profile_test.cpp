// Measured profiles in the studio on a real capture: a lathe.profile/1 file of the graph on show
// prices the plan (File › Load Profile…, --profile): the node table shows each node's estimate and
// measured time, the inspector both, the step time the calibrated one beside the model's, the
// Measured dock the error per op category; Clear Profile goes back to the model's estimates, another
// hardware keeps the measurements; a profile of another graph or one that does not read is refused
// with a message and leaves the session as it was.
#include <QAbstractItemModelTester>
#include <QAction>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QMessageBox>
#include <QPointer>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include "gui_support.h"
#include "io/artifact.h"
#include "language.h"
#include "main_window.h"
#include "passes/calibration.h"
#include "passes/plan_builder.h"
#include "passes/plan_target.h"
#include "plan/plan_bundle.h"
#include "plan/profile.h"
#include "studio_process.h"
#include "views/budget_panel.h"
#include "views/calibration_model.h"
#include "views/calibration_view.h"
#include "views/formatting.h"
#include "views/graph_nodes_model.h"
#include "views/node_inspector.h"
#include "views/plan_session.h"

using lathe::studio::MainWindow;
using lathe::views::GraphNodesModel;
using lathe::views::PlanSession;
namespace passes = lathe::passes;
namespace plan = lathe::plan;

namespace {

using lathe::testing::sample;
using lathe::testing::waitUntil;

const QString kTinyTrain = sample("captures/llama3_8b_2l_tiny_train.log.gz");
// The same model at its full sizes: a joint graph of the same id, another graph.
const QString kFullTrain = sample("captures/llama3_8b_2l_train.log.gz");
const std::string kJointGraph = "0/0:aot_joint_graph";
constexpr double kMeasuredSeconds = 1e-3;  // every call, as the made-up profile says

// Nothing in flight: no load, no profile, no run, no frontier.
bool settled(MainWindow& window) {
  PlanSession* session = window.planSession();
  return waitUntil([&] {
    return session->planRun() && !session->busy() && !session->profileBusy() && !session->frontierBusy();
  });
}

bool openAndPlan(MainWindow& window, const QString& path) {
  QSignalSpy loaded(&window, &MainWindow::loadFinished);
  window.openPath(path);
  return loaded.wait(120000) && loaded.first().first().toBool() && settled(window);
}

// The profile `lathe measure` would write of the capture's joint graph if every call took 1 ms.
plan::MeasuredProfile measuredProfile(const QString& capture) {
  const lathe::io::Artifact artifact = lathe::io::loadArtifact(capture.toStdString(), {});
  const std::vector<lathe::io::GraphListing> graphs = artifact.graphs();
  const lathe::ir::Graph& graph = *lathe::io::findGraph(graphs, kJointGraph)->graph;
  plan::MeasuredNodes measured{.source = "lathe_runtime cpu", .livePeakBytes = 0, .nodes = {}};
  for (lathe::ir::NodeId id = 0; id < graph.size(); ++id) {
    if (graph.node(id).isCall()) measured.nodes.push_back({std::string(graph.name(id)), kMeasuredSeconds, 0});
  }
  plan::MeasuredProfile profile;
  profile.device = "cpu";
  profile.graphs.push_back({.graphId = kJointGraph,
                            .fingerprint = plan::graphFingerprint(graph),
                            .plan = "",
                            .predictedPeakBytes = 0,
                            .predictedStepSeconds = 0,
                            .measured = std::move(measured)});
  return profile;
}

QString writeProfile(const QTemporaryDir& dir, const QString& name, const plan::MeasuredProfile& profile) {
  const QString path = dir.filePath(name);
  plan::writeProfile(path.toStdString(), profile);
  return path;
}

// The step the studio's default pipeline plans on `target` (no weights stream: the planned step's).
double plannedStepSeconds(const passes::PlanTarget& target) {
  const passes::PassContext context = target.context();
  const passes::PipelineRun run =
      passes::runPipeline(context, passes::parsePipeline(std::string(target.defaultPipeline())));
  return passes::plannedStep(context, run.finalState()).stepSeconds;
}

// Loads a profile and waits for it to be applied (or refused) and planned with.
QList<QVariant> loadProfile(MainWindow& window, const QString& path) {
  QSignalSpy applied(window.planSession(), &PlanSession::profileApplied);
  window.loadProfile(path);
  if (applied.isEmpty() && !applied.wait(120000)) return {};
  if (!settled(window)) return {};
  return applied.first();
}

QTableView* nodesTable(MainWindow& window) {
  return window.findChild<QTableView*>(QStringLiteral("nodesTable"));
}

GraphNodesModel* nodesModel(MainWindow& window) {
  const auto* proxy = qobject_cast<QSortFilterProxyModel*>(nodesTable(window)->model());
  return qobject_cast<GraphNodesModel*>(proxy->sourceModel());
}

QLabel* banner(MainWindow& window) {
  return window.findChild<QLabel*>(QStringLiteral("profileBanner"));
}

QMessageBox* message(MainWindow& window) {
  return window.findChild<QMessageBox*>(QStringLiteral("planMessage"));
}

}  // namespace

class ProfileTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    // English as shipped: the plural forms ("661 nodes measured") come from lathe_en.ts.
    QCOMPARE(lathe::studio::applyLanguage(QStringLiteral("en")), QStringLiteral("en"));
    QVERIFY(dir_.isValid());
  }
  void profilePricesNodesAndStep();
  void anotherHardwareKeepsTheMeasurements();
  void profileOfAnotherGraphIsRefused();
  void anotherGraphDropsTheProfile();
  void headlessScreenshotWithAProfile();

 private:
  QTemporaryDir dir_;
};

void ProfileTest::profilePricesNodesAndStep() {
  const plan::MeasuredProfile profile = measuredProfile(kTinyTrain);
  const QString path = writeProfile(dir_, QStringLiteral("tiny.profile.json"), profile);
  const passes::PlanTarget model(lathe::io::loadArtifact(kTinyTrain.toStdString(), {}), kJointGraph,
                                 lathe::hw::resolveHwProfile("h200"));
  const passes::Calibration calibration = passes::calibrate(model, profile, "tiny.profile.json");
  const double modelStep = plannedStepSeconds(model);
  const double measuredStep = plannedStepSeconds(calibration.target);
  QVERIFY(measuredStep > modelStep);

  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  GraphNodesModel* nodes = nodesModel(window);
  QAbstractItemModelTester nodesTester(nodes, QAbstractItemModelTester::FailureReportingMode::QtTest);
  auto* proxy = qobject_cast<QSortFilterProxyModel*>(nodesTable(window)->model());
  QAbstractItemModelTester proxyTester(proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
  lathe::views::CalibrationModel* categories = window.calibrationView()->model();
  QAbstractItemModelTester categoriesTester(categories, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QVERIFY(openAndPlan(window, kTinyTrain));
  QCOMPARE(window.shownGraphId().toStdString(), kJointGraph);
  PlanSession* session = window.planSession();

  // The model's estimates alone: no measured column, the step the model's.
  QVERIFY(nodesTable(window)->isColumnHidden(GraphNodesModel::MeasuredTimeColumn));
  QVERIFY(!nodesTable(window)->isColumnHidden(GraphNodesModel::EstimatedTimeColumn));
  QCOMPARE(session->planRun()->stepEstimateSeconds(), modelStep);
  QVERIFY(!banner(window)->isVisible());
  QVERIFY(!window.findChild<QAction*>(QStringLiteral("clearProfile"))->isEnabled());

  const QList<QVariant> applied = loadProfile(window, path);
  QVERIFY(!applied.isEmpty());
  QVERIFY2(applied.first().toBool(), qPrintable(applied.last().toString()));
  QCOMPARE(window.profilePath(), path);
  const auto run = session->planRun();
  QVERIFY(run->profile);
  QCOMPARE(run->profile->calibration.measuredNodes, calibration.measuredNodes);

  // Each call: its estimate and the 1 ms measured, sorting as numbers; other nodes neither.
  QVERIFY(!nodesTable(window)->isColumnHidden(GraphNodesModel::MeasuredTimeColumn));
  const lathe::ir::Graph& graph = model.graph();
  const std::vector<double>& estimated = model.estimatedNodeSeconds();
  for (lathe::ir::NodeId id = 0; id < graph.size(); ++id) {
    const QModelIndex measuredIndex = nodes->indexOfNode(id, GraphNodesModel::MeasuredTimeColumn);
    const QModelIndex estimatedIndex = nodes->indexOfNode(id, GraphNodesModel::EstimatedTimeColumn);
    if (!graph.node(id).isCall()) {
      QVERIFY(measuredIndex.data().toString().isEmpty());
      QVERIFY(estimatedIndex.data().toString().isEmpty());
      continue;
    }
    QCOMPARE(measuredIndex.data().toString(), lathe::views::formatSeconds(kMeasuredSeconds));
    QCOMPARE(measuredIndex.data(GraphNodesModel::kSortRole).toDouble(), kMeasuredSeconds);
    QCOMPARE(estimatedIndex.data().toString(), lathe::views::formatSeconds(estimated[id]));
    QCOMPARE(estimatedIndex.data(GraphNodesModel::kSortRole).toDouble(), estimated[id]);
  }
  proxy->sort(GraphNodesModel::EstimatedTimeColumn, Qt::DescendingOrder);
  QCOMPARE(proxy->index(0, GraphNodesModel::EstimatedTimeColumn).data(GraphNodesModel::kSortRole).toDouble(),
           *std::max_element(estimated.begin(), estimated.end()));

  // The inspector: measured beside estimated for the selected node.
  const lathe::ir::NodeId selected = window.selectedNode();
  QVERIFY(selected != lathe::ir::kNoNode && graph.node(selected).isCall());
  const QString inspected = window.inspector()->plainText();
  QVERIFY2(inspected.contains(QStringLiteral("Measured beside estimated")) &&
               inspected.contains(lathe::views::formatSeconds(kMeasuredSeconds)) &&
               inspected.contains(lathe::views::formatSeconds(estimated[selected])) &&
               inspected.contains(lathe::views::formatModelError(estimated[selected], kMeasuredSeconds)),
           qPrintable(inspected));

  // The step: the calibrated one, the model's beside it.
  QCOMPARE(run->stepEstimateSeconds(), measuredStep);
  QVERIFY(run->modelStepSeconds);
  QCOMPARE(*run->modelStepSeconds, modelStep);
  const QString outcome = window.budgetPanel()->outcomeLabel()->text();
  const QString step = QStringLiteral("step <b>%1</b> measured · %2 estimated")
                           .arg(lathe::views::formatSeconds(measuredStep), lathe::views::formatSeconds(modelStep));
  QVERIFY2(outcome.contains(step), qPrintable(outcome));

  // The banner and the Measured dock: the error over the graph and per op category.
  const passes::CategoryTimes all = run->profile->total();
  QCOMPARE(all.nodes, calibration.measuredNodes);
  QCOMPARE(all.measured, kMeasuredSeconds * static_cast<double>(calibration.measuredNodes));
  QVERIFY(banner(window)->isVisible());
  const QString summary = banner(window)->text();
  QVERIFY2(summary.contains(QStringLiteral("lathe_runtime cpu on cpu (%1 nodes measured)").arg(all.nodes)) &&
               summary.contains(lathe::views::formatModelError(all.estimated, all.measured)),
           qPrintable(summary));
  QVERIFY(window.findChild<QAction*>(QStringLiteral("clearProfile"))->isEnabled());
  QCOMPARE(categories->rowCount(), static_cast<int>(calibration.byCategory.size()));
  for (int row = 0; row < categories->rowCount(); ++row) {
    const passes::CategoryTimes& expected = calibration.byCategory[static_cast<size_t>(row)];
    QCOMPARE(categories->index(row, lathe::views::CalibrationModel::CategoryColumn).data().toString(),
             lathe::views::opCategoryLabel(expected.category));
    QCOMPARE(categories->index(row, lathe::views::CalibrationModel::NodesColumn).data().toULongLong(),
             static_cast<qulonglong>(expected.nodes));
    QCOMPARE(categories->index(row, lathe::views::CalibrationModel::ErrorColumn).data().toString(),
             lathe::views::formatModelError(expected.estimated, expected.measured));
  }
  QVERIFY(window.calibrationView()->summaryText().startsWith(lathe::views::CalibrationView::summary(*run->profile)));

  // Clear Profile: the model's estimates again.
  window.findChild<QAction*>(QStringLiteral("clearProfile"))->trigger();
  QVERIFY(settled(window));
  QVERIFY(!session->profile());
  QVERIFY(!session->planRun()->profile);
  QCOMPARE(session->planRun()->stepEstimateSeconds(), modelStep);
  QVERIFY(nodesTable(window)->isColumnHidden(GraphNodesModel::MeasuredTimeColumn));
  QVERIFY(nodes->indexOfNode(selected, GraphNodesModel::MeasuredTimeColumn).data().toString().isEmpty());
  QVERIFY(!banner(window)->isVisible());
  QCOMPARE(categories->rowCount(), 0);
  QVERIFY(!window.inspector()->plainText().contains(QStringLiteral("Measured beside estimated")));
}

void ProfileTest::anotherHardwareKeepsTheMeasurements() {
  const plan::MeasuredProfile profile = measuredProfile(kTinyTrain);
  const QString path = writeProfile(dir_, QStringLiteral("hardware.profile.json"), profile);
  const passes::PlanTarget model(lathe::io::loadArtifact(kTinyTrain.toStdString(), {}), kJointGraph,
                                 lathe::hw::resolveHwProfile("h100"));
  const passes::Calibration calibration = passes::calibrate(model, profile, "hardware.profile.json");

  MainWindow window(MainWindow::Options{.useSettings = false});
  QVERIFY(openAndPlan(window, kTinyTrain));
  QVERIFY(loadProfile(window, path).value(0).toBool());
  window.budgetPanel()->setHardware(QStringLiteral("h100"));
  QVERIFY(waitUntil([&] {
    const auto& run = window.planSession()->planRun();
    return run && run->target->hardware().id == "h100";
  }));
  QVERIFY(settled(window));
  // The model's figures beside the measurements are the new hardware's.
  const auto& applied = window.planSession()->profile();
  QVERIFY(applied);
  QCOMPARE(applied->calibration.target.hardware().id, std::string("h100"));
  QCOMPARE(applied->calibration.byCategory.size(), calibration.byCategory.size());
  for (size_t i = 0; i < calibration.byCategory.size(); ++i)
    QCOMPARE(applied->calibration.byCategory[i].estimated, calibration.byCategory[i].estimated);
  // The budget panel's re-plan on the H100, priced with the measurements, the model's step beside it.
  const auto run = window.planSession()->planRun();
  QVERIFY(run->profile && !run->run.finalState().offload);
  const plan::PlanState& state = run->run.finalState();
  QCOMPARE(run->stepEstimateSeconds(), passes::plannedStep(calibration.target.context(), state).stepSeconds);
  QVERIFY(run->modelStepSeconds);
  QCOMPARE(*run->modelStepSeconds, passes::plannedStep(model.context(), state).stepSeconds);
}

void ProfileTest::profileOfAnotherGraphIsRefused() {
  const QString good = writeProfile(dir_, QStringLiteral("good.profile.json"), measuredProfile(kTinyTrain));
  const QString other = writeProfile(dir_, QStringLiteral("other.profile.json"), measuredProfile(kFullTrain));
  const QString broken = dir_.filePath(QStringLiteral("broken.profile.json"));
  {
    QFile file(broken);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("{\"format\": \"lathe.profile/1\", \"graphs\": [");
  }

  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openAndPlan(window, kTinyTrain));
  PlanSession* session = window.planSession();
  for (const bool withProfile : {false, true}) {
    if (withProfile) QVERIFY(loadProfile(window, good).value(0).toBool());
    const auto runBefore = session->planRun();
    const auto profileBefore = session->profile();
    const auto targetBefore = session->target();
    for (const QString& refused : {other, broken}) {
      const QList<QVariant> applied = loadProfile(window, refused);
      QVERIFY(!applied.isEmpty());
      QVERIFY(!applied.first().toBool());
      const QString error = applied.last().toString();
      QVERIFY2(error.contains(QFileInfo(refused).fileName()), qPrintable(error));
      if (refused == other) QVERIFY2(error.contains(QString::fromStdString(kJointGraph)), qPrintable(error));
      QMessageBox* box = message(window);
      QVERIFY(box);
      QVERIFY(box->isVisible());
      QCOMPARE(box->informativeText(), error);
      const QPointer<QMessageBox> closing(box);
      box->close();
      QVERIFY(waitUntil([&] { return closing.isNull(); }));
      // Nothing half-applied: the same plan, the same prices, the same profile (or none).
      QCOMPARE(session->planRun(), runBefore);
      QCOMPARE(session->target(), targetBefore);
      QCOMPARE(session->profile(), profileBefore);
      QCOMPARE(window.profilePath(), withProfile ? good : QString());
      QCOMPARE(nodesTable(window)->isColumnHidden(GraphNodesModel::MeasuredTimeColumn), !withProfile);
      QCOMPARE(banner(window)->isVisible(), withProfile);
    }
  }
}

void ProfileTest::anotherGraphDropsTheProfile() {
  const QString path = writeProfile(dir_, QStringLiteral("drop.profile.json"), measuredProfile(kTinyTrain));
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openAndPlan(window, kTinyTrain));
  QVERIFY(loadProfile(window, path).value(0).toBool());
  QVERIFY(window.selectGraph(QStringLiteral("0/0:aot_forward_graph")));
  QVERIFY(settled(window));
  QVERIFY(!window.planSession()->profile());
  QVERIFY(!window.planSession()->planRun()->profile);
  QVERIFY(!banner(window)->isVisible());
  QVERIFY(nodesTable(window)->isColumnHidden(GraphNodesModel::MeasuredTimeColumn));
}

void ProfileTest::headlessScreenshotWithAProfile() {
  const QString path = writeProfile(dir_, QStringLiteral("headless.profile.json"), measuredProfile(kTinyTrain));
  for (const QString& view : {QStringLiteral("measured"), QStringLiteral("nodes")}) {
    const QString png = dir_.filePath(view + QStringLiteral("-profile.png"));
    const lathe::testing::StudioRun studio =
        lathe::testing::runStudio({QStringLiteral("--screenshot"), png, QStringLiteral("--view"), view,
                                   QStringLiteral("--profile"), path, kTinyTrain});
    QVERIFY2(studio.exitCode == 0, qPrintable(studio.errors));
    const QImage image(png);
    QCOMPARE(image.size(), QSize(1600, 1000));
    const QString wrong = lathe::testing::wrongView(studio, image, view);
    QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
  }
  // A profile of another graph: the reason on stderr, exit 2, no picture.
  const QString other = writeProfile(dir_, QStringLiteral("headless-other.profile.json"), measuredProfile(kFullTrain));
  const QString png = dir_.filePath(QStringLiteral("refused-profile.png"));
  const lathe::testing::StudioRun studio = lathe::testing::runStudio(
      {QStringLiteral("--screenshot"), png, QStringLiteral("--profile"), other, kTinyTrain});
  QCOMPARE(studio.exitCode, 2);
  QVERIFY2(studio.errors.contains(QStringLiteral("headless-other.profile.json")), qPrintable(studio.errors));
  QVERIFY(!QFileInfo::exists(png));
}

QTEST_MAIN(ProfileTest)
#include "profile_test.moc"

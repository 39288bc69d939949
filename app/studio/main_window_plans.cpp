// The main window's plan files: a plan opened (its graph planned with its pipeline and target, then
// checked against the bundle's decisions), File › Save Plan…, File › Export Kernels… and File ›
// Export Report…, and the measured profiles that price the plan (File › Load Profile…, Clear Profile).
#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QStatusBar>
#include <QTableView>
#include <filesystem>

#include "kernels/export_bundle.h"
#include "kernels/toolchain.h"
#include "passes/plan_builder.h"
#include "passes/plan_report.h"
#include "main_window.h"
#include "plan/plan_bundle.h"
#include "util/atomic_write.h"
#include "util/diagnostics.h"
#include "views/artifact_loader.h"
#include "views/artifact_tree_model.h"
#include "views/calibration_view.h"
#include "views/formatting.h"
#include "views/graph_nodes_model.h"
#include "views/kernel_exporter.h"
#include "views/node_inspector.h"
#include "views/pipeline_panel.h"
#include "views/plan_file.h"
#include "views/plan_session.h"

namespace lathe::studio {

namespace {

// A message box that does not block the event loop (plans and exports finish in the background,
// and the headless runs have nobody to click it).
void showMessage(QWidget* parent, QMessageBox::Icon icon, const QString& title, const QString& text,
                 const QString& details = {}) {
  auto* box = new QMessageBox(icon, title, text, QMessageBox::Ok, parent);
  box->setObjectName(QStringLiteral("planMessage"));
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->setInformativeText(details);
  box->setTextInteractionFlags(Qt::TextSelectableByMouse);
  box->open();
}

}  // namespace

void MainWindow::createPlanFileActions(QMenu* file) {
  savePlanAction_ = file->addAction(tr("&Save Plan…"), this, &MainWindow::savePlanDialog);
  savePlanAction_->setObjectName(QStringLiteral("savePlan"));
  savePlanAction_->setShortcut(QKeySequence::Save);
  savePlanAction_->setStatusTip(tr("Write the plan on show (the last step of its pipeline) as a lathe.plan/1 bundle"));
  exportKernelsAction_ = file->addAction(tr("Export &Kernels…"), this, &MainWindow::exportKernelsDialog);
  exportKernelsAction_->setObjectName(QStringLiteral("exportKernels"));
  exportKernelsAction_->setStatusTip(
      tr("Generate and compile CUDA kernels for the plan's fusion groups into a folder, as lathe export does"));
  exportReportAction_ = file->addAction(tr("Export &Report…"), this, &MainWindow::exportReportDialog);
  exportReportAction_->setObjectName(QStringLiteral("exportReport"));
  exportReportAction_->setStatusTip(tr("Write one self-contained HTML file with the plan on show, its pictures, the compiles and "
                                       "the diagnostics, as lathe report does"));
  connect(planSession_, &views::PlanSession::started, this, &MainWindow::updatePlanFileActions);
  connect(planSession_, &views::PlanSession::finished, this, &MainWindow::updatePlanFileActions);
  connect(planSession_, &views::PlanSession::graphChanged, this, &MainWindow::updatePlanFileActions);
  connect(kernelExporter_, &views::KernelExporter::started, this, [this](const QString& output) {
    exportStage_->setText(tr("Exporting kernels to %1…").arg(output));
    for (QWidget* widget : {static_cast<QWidget*>(exportStage_), static_cast<QWidget*>(exportProgress_),
                            static_cast<QWidget*>(cancelExport_)}) {
      widget->show();
    }
    cancelExport_->setEnabled(true);
    updatePlanFileActions();
  });
  connect(kernelExporter_, &views::KernelExporter::stageChanged, exportStage_, &QLabel::setText);
  connect(kernelExporter_, &views::KernelExporter::finished, this, &MainWindow::onKernelsExported);
  connect(cancelExport_, &QPushButton::clicked, this, [this] {
    kernelExporter_->cancel();
    cancelExport_->setEnabled(false);
    exportStage_->setText(tr("Cancelling the export (a compiler run finishes first; its output is thrown away)…"));
  });
  updatePlanFileActions();
}

void MainWindow::updatePlanFileActions() {
  // While a run is on its way the views are about to show another plan: nothing to save yet.
  const std::shared_ptr<const views::PlanRun> run = planSession_->busy() ? nullptr : planSession_->planRun();
  savePlanAction_->setEnabled(run && !planSaves_.busy());
  exportKernelsAction_->setEnabled(run && !run->run.finalState().groups.empty() && !kernelExporter_->busy());
  // Without a plan the report still has the compiles and diagnostics; while one is on its way, the
  // report waits for it.
  exportReportAction_->setEnabled(treeModel_->artifact() && !planSession_->busy() && !reportExports_.busy());
}

QString MainWindow::planFile() const {
  const auto& run = planSession_->planRun();
  return run && run == planFileRun_ ? planFile_ : QString();
}

// --- Opening ------------------------------------------------------------------------------------

void MainWindow::refusePlan(const views::LoadOutcome& outcome) {
  const QString name = QFileInfo(outcome.planPath).fileName();
  lastOpenError_ = outcome.error;
  statusBar()->showMessage(tr("Could not open the plan %1: %2").arg(name, outcome.error));
  showMessage(this, QMessageBox::Critical, tr("Open Plan"),
              tr("Could not open the plan %1. Nothing was changed.").arg(name), outcome.error);
}

bool MainWindow::runOpenedPlan(const QString& graphId) {
  if (!openingPlan_ || views::toQString(openingPlan_->bundle.graphId) != graphId) {
    openingPlan_.reset();  // another graph was picked before the plan's came up
    return false;
  }
  try {
    // Before the graph: the frontier the budget panel asks for is then the plan's target's.
    planSession_->setHardwareProfile(openingPlan_->bundle.hardware);
  } catch (const Error& error) {
    lastOpenError_ = QString::fromUtf8(error.what());
    statusBar()->showMessage(tr("Could not plan on the plan's hardware: %1").arg(lastOpenError_));
    openingPlan_.reset();
    emit planOpened(false);
    return false;
  }
  planSession_->setGraph(treeModel_->artifact(), graphId, nodesModel_->graph());
  const QString pipeline = views::toQString(openingPlan_->bundle.pipeline);
  pipelinePanel_->setPipelineText(pipeline);
  planSession_->run(pipeline);
  return true;
}

void MainWindow::onPlanFinished(bool ok, const QString& error) {
  const auto& run = planSession_->planRun();
  if (!openingPlan_) return;
  const views::OpenedPlan& opened = *openingPlan_;
  const QString name = QFileInfo(opened.path).fileName();
  if (!ok) {
    if (planSession_->busy()) return;  // cancelled by the run that replaced it
    lastOpenError_ = tr("The plan's pipeline failed: %1").arg(error);
    pipelinePanel_->setRunOrigin(tr("Plan %1: its pipeline failed here.").arg(name), true);
    statusBar()->showMessage(lastOpenError_);
    openingPlan_.reset();
    emit planOpened(false);
    return;
  }
  // Another run (the budget panel's, a pipeline typed in) came back first: the plan is not on show.
  if (!run || run->graphId != views::toQString(opened.bundle.graphId) ||
      run->pipeline != views::toQString(opened.bundle.pipeline)) {
    openingPlan_.reset();
    return;
  }
  planFile_ = opened.path;
  planFileRun_ = run;
  kernelRefs_ = opened.bundle.kernels;
  kernelRefsRun_ = run;
  const QStringList differing = views::differingDecisions(run->run.finalState(), opened.state);
  if (differing.isEmpty()) {
    pipelinePanel_->setRunOrigin(tr("Plan %1: its pipeline re-run here on %2 makes the decisions it records.")
                                     .arg(name, run->hardware),
                                 false);
    statusBar()->showMessage(tr("Opened the plan %1: graph %2, %3").arg(name, run->graphId, run->pipeline));
  } else {
    // The views show the re-run; say that it is not what the file holds (another Lathe made it,
    // or a file the pipeline reads has changed).
    pipelinePanel_->setRunOrigin(tr("Plan %1: its pipeline re-run here decides otherwise (%2). The views show "
                                    "the re-run, not the bundle.")
                                     .arg(name, differing.join(QStringLiteral(", "))),
                                 true);
    statusBar()->showMessage(tr("The plan %1 was not reproduced: %2 differ").arg(name, differing.join(QStringLiteral(", "))));
  }
  openingPlan_.reset();
  emit planOpened(true);
}

// --- Save Plan ----------------------------------------------------------------------------------

void MainWindow::savePlanDialog() {
  const auto& run = planSession_->planRun();
  if (!run) return;
  const QString besides = planFile().isEmpty() ? loader_->path() : planFile();
  const QString proposed = QFileInfo(besides).absoluteDir().filePath(views::defaultPlanFileName(run->graphId));
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Save Plan"), proposed, tr("Lathe plans (*.plan.json);;All files (*)"));
  if (!path.isEmpty()) savePlan(path);
}

void MainWindow::savePlan(const QString& path) {
  const auto run = planSession_->planRun();
  const auto& artifact = treeModel_->artifact();
  if (!run || !artifact || planSaves_.busy()) return;
  std::error_code ec;
  const std::string capture = std::filesystem::absolute(artifact->path, ec).string();
  const std::vector<plan::KernelsRef> kernels = run == kernelRefsRun_ ? kernelRefs_ : std::vector<plan::KernelsRef>{};
  savingTo_ = path;
  savingRun_ = run;
  // The bundle's timeline is the planned step's again: for a large graph that takes a moment.
  planSaves_.start(
      [run, capture, kernels, path](const Progress&) {
        // Runs to its end even when the window goes: the cancel is not passed on.
        const Progress progress;
        plan::PlanBundle bundle =
            passes::buildPlanBundle(run->target->context(progress), run->run, capture, run->graphId.toStdString());
        bundle.kernels = kernels;
        plan::writePlan(path.toStdString(), bundle);
        return path;
      },
      [this](const views::JobOutcome<QString>& saved) { onPlanSaved(saved); });
  statusBar()->showMessage(tr("Saving the plan to %1…").arg(path));
  updatePlanFileActions();
}

void MainWindow::onPlanSaved(const views::JobOutcome<QString>& saved) {
  updatePlanFileActions();
  if (!saved.value) {
    const QString& error = saved.error.message;
    statusBar()->showMessage(tr("Could not save the plan to %1").arg(savingTo_));
    showMessage(this, QMessageBox::Warning, tr("Save Plan"),
                tr("Could not save the plan to %1; no file was changed.").arg(savingTo_), error);
    emit planSaved(false, error);
    return;
  }
  planFile_ = savingTo_;
  planFileRun_ = savingRun_;
  statusBar()->showMessage(tr("Saved the plan of %1 to %2").arg(savingRun_->graphId, savingTo_));
  emit planSaved(true, savingTo_);
}

// --- Export Report ------------------------------------------------------------------------------

void MainWindow::exportReportDialog() {
  if (!treeModel_->artifact()) return;
  const QString shown = planFile().isEmpty() ? loader_->path() : planFile();
  const QFileInfo info(shown);
  const QString proposed = info.absoluteDir().filePath(info.completeBaseName() + QStringLiteral(".report.html"));
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Export Report"), proposed, tr("HTML reports (*.html);;All files (*)"));
  if (!path.isEmpty()) exportReport(path);
}

void MainWindow::exportReport(const QString& path) {
  const std::shared_ptr<const io::Artifact> artifact = treeModel_->artifact();
  if (!artifact || reportExports_.busy()) return;
  const auto run = planSession_->busy() ? nullptr : planSession_->planRun();
  const QString plan = run ? planFile() : QString();
  std::error_code ec;
  const std::string capture = std::filesystem::absolute(artifact->path, ec).string();
  passes::ReportHeading heading;
  heading.title = QFileInfo(plan.isEmpty() ? QString::fromStdString(artifact->path.string()) : plan).fileName().toStdString();
  heading.source = plan.isEmpty() ? capture : "plan bundle of " + capture;
  reportingTo_ = path;
  reportExports_.start(
      [artifact, run, capture, heading, path](const views::JobProgress& progress) {
        std::string html;
        if (run) {
          const plan::PlanBundle bundle =
              passes::buildPlanBundle(run->target->context(progress), run->run, capture, run->graphId.toStdString());
          html = passes::htmlReport(*artifact, heading, run->target.get(), &bundle, progress);
        } else {
          html = passes::htmlReport(*artifact, heading, nullptr, nullptr, progress);
        }
        progress.checkCancelled();  // a cancelled report leaves no file
        writeFileAtomic(path.toStdString(), html);
        return path;
      },
      [this](const views::JobOutcome<QString>& written) { onReportExported(written); });
  statusBar()->showMessage(run ? tr("Writing the report of %1 to %2…").arg(run->graphId, path)
                               : tr("Writing the report to %1 (no plan on show: compiles and diagnostics only)…").arg(path));
  updatePlanFileActions();
}

void MainWindow::onReportExported(const views::JobOutcome<QString>& written) {
  updatePlanFileActions();
  if (!written.value) {
    const QString& error = written.error.cancelled ? tr("cancelled") : written.error.message;
    statusBar()->showMessage(tr("Could not write the report to %1").arg(reportingTo_));
    if (!written.error.cancelled) {
      showMessage(this, QMessageBox::Warning, tr("Export Report"),
                  tr("Could not write the report to %1; no file was changed.").arg(reportingTo_), error);
    }
    emit reportExported(false, error);
    return;
  }
  statusBar()->showMessage(tr("Wrote the report to %1").arg(reportingTo_));
  emit reportExported(true, reportingTo_);
}

// --- Export Kernels -----------------------------------------------------------------------------

void MainWindow::exportKernelsDialog() {
  const auto& run = planSession_->planRun();
  if (!run) return;
  const QString besides = planFile().isEmpty() ? loader_->path() : planFile();
  const QString folder = QFileDialog::getExistingDirectory(
      this, tr("Export Kernels: a new or empty folder, or an earlier export to replace"),
      QFileInfo(besides).absolutePath());
  if (!folder.isEmpty()) exportKernels(folder);
}

void MainWindow::exportKernels(const QString& folder) {
  const auto run = planSession_->planRun();
  if (!run || run->run.finalState().groups.empty() || kernelExporter_->busy()) return;
  views::KernelExportRequest request;
  request.graph = run->graph;
  request.state = run->run.finalState();
  request.graphId = run->graphId;
  request.planName = QFileInfo(planFile()).fileName();
  request.output = QFileInfo(folder).absoluteFilePath();
  request.targets = kernels::parseTargets(kernels::kDefaultTargets);
  exportingRun_ = run;
  kernelExporter_->start(std::move(request));
}

void MainWindow::onKernelsExported(const views::KernelExportOutcome& outcome) {
  for (QWidget* widget : {static_cast<QWidget*>(exportStage_), static_cast<QWidget*>(exportProgress_),
                          static_cast<QWidget*>(cancelExport_)}) {
    widget->hide();
  }
  updatePlanFileActions();
  if (outcome.cancelled) {
    statusBar()->showMessage(tr("Kernel export cancelled; %1 is as it was").arg(outcome.output));
    return;
  }
  if (!outcome.error.isEmpty()) {
    statusBar()->showMessage(tr("Kernel export failed; %1 is as it was").arg(outcome.output));
    showMessage(this, QMessageBox::Warning, tr("Export Kernels"),
                tr("No kernels were exported; %1 is as it was.").arg(outcome.output), outcome.error);
    return;
  }
  // Recorded as `lathe export` records it, in the plan once it is saved.
  if (kernelRefsRun_ != exportingRun_) {
    kernelRefs_.clear();
    kernelRefsRun_ = exportingRun_;
  }
  plan::KernelsRef ref{outcome.manifest.toStdString(), std::string(kernels::kKernelsFormat),
                       kernels::parseTargets(kernels::kDefaultTargets), outcome.kernels,
                       outcome.groups - outcome.kernels};
  std::erase_if(kernelRefs_, [&](const plan::KernelsRef& k) { return k.manifest == ref.manifest; });
  kernelRefs_.push_back(std::move(ref));

  const QString summary = tr("%1 of %n fusion group(s) generated", nullptr, static_cast<int>(outcome.groups))
                              .arg(outcome.kernels);
  QStringList details;
  for (const auto& [reason, count] : outcome.notGenerated)
    details << tr("%n group(s) not generated: %1", nullptr, static_cast<int>(count)).arg(views::toQString(reason));
  if (!details.isEmpty()) details << QString();
  details << tr("Compiled with %1 for %2.")
                 .arg(outcome.compiler, QString::fromLatin1(kernels::kDefaultTargets).replace(QLatin1Char(','),
                                                                                              QStringLiteral(", ")));
  details << tr("Save Plan… records the export in the plan bundle.");
  statusBar()->showMessage(tr("%1; the kernel bundle is in %2").arg(summary, outcome.output));
  showMessage(this, QMessageBox::Information, tr("Export Kernels"),
              tr("%1. The kernel bundle (manifest.json, liblathe_kernels.so, kernels.fatbin, sources) is in %2.")
                  .arg(summary, outcome.output),
              details.join(QLatin1Char('\n')));
}

// --- Measured profiles --------------------------------------------------------------------------

void MainWindow::createProfileActions(QMenu* file) {
  loadProfileAction_ = file->addAction(tr("Load &Profile…"), this, &MainWindow::loadProfileDialog);
  loadProfileAction_->setObjectName(QStringLiteral("loadProfile"));
  loadProfileAction_->setStatusTip(
      tr("Price the graph on show as a lathe.profile/1 file measured it (lathe measure CAPTURE -o profile.json)"));
  clearProfileAction_ = file->addAction(tr("&Clear Profile"), planSession_, &views::PlanSession::clearProfile);
  clearProfileAction_->setObjectName(QStringLiteral("clearProfile"));
  clearProfileAction_->setStatusTip(tr("Plan with the model's estimates again"));
  clearProfileAction_->setEnabled(false);
  loadProfileAction_->setEnabled(false);
  connect(planSession_, &views::PlanSession::graphChanged, this,
          [this] { loadProfileAction_->setEnabled(planSession_->hasGraph()); });
  connect(planSession_, &views::PlanSession::profileStarted, this, [this](const QString& path) {
    statusBar()->showMessage(tr("Reading the profile %1…").arg(QFileInfo(path).fileName()));
  });
  connect(planSession_, &views::PlanSession::profileApplied, this, &MainWindow::onProfileApplied);
  connect(planSession_, &views::PlanSession::profileChanged, this, &MainWindow::onProfileChanged);
  connect(profileBanner_, &QLabel::linkActivated, planSession_, &views::PlanSession::clearProfile);
}

void MainWindow::loadProfileDialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Load Profile"), QFileInfo(currentPath()).absolutePath(),
                                                    tr("Lathe profiles (*.json);;All files (*)"));
  if (!path.isEmpty()) loadProfile(path);
}

void MainWindow::loadProfile(const QString& path) {
  // Asked for with a capture (the command line, a language switch): applied once its graph is on show.
  if (loader_->busy()) {
    pendingProfile_ = path;
    return;
  }
  planSession_->loadProfile(path);
}

QString MainWindow::profilePath() const {
  const auto& profile = planSession_->profile();
  return profile ? profile->path : QString();
}

void MainWindow::onProfileApplied(bool ok, const QString& error) {
  if (!ok) {
    statusBar()->showMessage(tr("The profile was not applied: %1").arg(error));
    showMessage(this, QMessageBox::Warning, tr("Load Profile"),
                tr("The profile was not applied; the plan is priced as it was."), error);
    return;
  }
  const auto& profile = planSession_->profile();
  calibrationDock_->show();  // beside the timeline, for the error per op category
  statusBar()->showMessage(views::CalibrationView::summary(*profile));
}

void MainWindow::onProfileChanged() {
  const auto& profile = planSession_->profile();
  clearProfileAction_->setEnabled(profile != nullptr);
  if (!profile) {
    profileBanner_->hide();
    calibrationDock_->hide();
    nodesTable_->setColumnHidden(views::GraphNodesModel::MeasuredTimeColumn, true);
    return;
  }
  profileBanner_->setText(QStringLiteral("%1 <a href=\"clear\">%2</a>")
                              .arg(views::CalibrationView::summary(*profile).toHtmlEscaped(),
                                   tr("Back to the model's estimates").toHtmlEscaped()));
  const QString note = views::CalibrationView::deviceNote(*profile);
  profileBanner_->setToolTip(note.isEmpty() ? profile->path : profile->path + QLatin1Char('\n') + note);
  profileBanner_->show();
}

void MainWindow::showNodeTimes() {
  const auto& run = planSession_->planRun();
  if (!run || run->graph != nodesModel_->graph()) return;
  nodesModel_->setNodeTimes(run->nodeTimes);
  inspector_->setNodeTimes(run->nodeTimes);
  nodesTable_->setColumnHidden(views::GraphNodesModel::MeasuredTimeColumn, !nodesModel_->hasMeasuredTimes());
  for (int column : {views::GraphNodesModel::EstimatedTimeColumn, views::GraphNodesModel::MeasuredTimeColumn})
    nodesTable_->resizeColumnToContents(column);
}

}  // namespace lathe::studio

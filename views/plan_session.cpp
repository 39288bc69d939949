#include "views/plan_session.h"

#include <QFile>
#include <QRegularExpression>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "util/diagnostics.h"

namespace lathe::views {

namespace {

QString errorText(const std::exception& error) {
  return QString::fromUtf8(error.what());
}

// The planned step and simulated streams of every state of a run.
std::shared_ptr<PlanRun> completeRun(const std::shared_ptr<const passes::PlanTarget>& target,
                                     const passes::PassContext& context, passes::PipelineRun pipelineRun,
                                     const Progress& progress) {
  auto run = std::make_shared<PlanRun>();
  run->target = target;
  run->graph = target->sharedGraph();
  run->hardware = QString::fromStdString(target->hardware().name);
  run->run = std::move(pipelineRun);
  run->planned.reserve(run->run.history.size() + 1);
  for (int step = 0; step <= static_cast<int>(run->run.history.size()); ++step) {
    progress.checkCancelled();
    run->planned.push_back(passes::plannedStep(context, run->stateAt(step)));
    run->gantt.push_back(buildStepGantt(context, run->stateAt(step), run->planned.back()));
  }
  return run;
}

PlanOutcome planGraph(const std::shared_ptr<const passes::PlanTarget>& target, const QString& graphId,
                      const std::shared_ptr<const passes::BudgetFrontier>& frontier, const QString& pipeline,
                      const std::optional<BudgetRequest>& budget, const std::shared_ptr<std::atomic<bool>>& cancel) {
  PlanOutcome outcome;
  try {
    Progress progress;
    progress.cancel = cancel.get();
    const passes::PassContext context = target->context(progress);
    passes::PipelineRun pipelineRun;
    QString text = pipeline;
    if (budget) {
      pipelineRun = runBudgetPipeline(*target, frontier.get(), *budget, progress);
      text =
          QString::fromStdString(budgetPipeline(*budget, frontier != nullptr, !pipelineRun.finalState().units.empty()));
    } else {
      pipelineRun = passes::runPipeline(context, passes::parsePipeline(pipeline.toStdString()));
    }
    auto run = completeRun(target, context, std::move(pipelineRun), progress);
    run->graphId = graphId;
    run->pipeline = text;
    run->budget = budget;
    outcome.run = std::move(run);
  } catch (const Error& error) {
    outcome.cancelled = error.code() == ErrorCode::Cancelled;
    outcome.error = errorText(error);
  } catch (const std::exception& error) {
    // Anything else is a bug in a pass; the window shows it instead of going down with it.
    outcome.error = errorText(error);
  }
  return outcome;
}

FrontierOutcome frontierOf(const std::shared_ptr<const passes::PlanTarget>& target,
                           const std::shared_ptr<std::atomic<bool>>& cancel) {
  FrontierOutcome outcome;
  outcome.target = target;
  try {
    Progress progress;
    progress.cancel = cancel.get();
    if (target->joint().joint) {
      outcome.frontier =
          std::make_shared<const passes::BudgetFrontier>(passes::solveBudgetFrontier(target->context(progress)));
    }
  } catch (const std::exception& error) {
    outcome.error = errorText(error);
  }
  return outcome;
}

template <typename T>
void waitAll(std::vector<QFuture<T>>& futures) {
  for (QFuture<T>& future : futures) future.waitForFinished();
}

}  // namespace

const plan::PlanState& PlanRun::stateAt(int step) const {
  return step == 0 ? run.initial : run.history.at(static_cast<size_t>(step - 1)).result.state;
}

double PlanRun::stepEstimateSeconds() const {
  const plan::PlanState& last = run.finalState();
  if (last.offload) return last.offload->stepSeconds;
  return planned.empty() ? 0 : planned.back().stepSeconds;
}

bool PlanRun::budgetMet() const {
  const passes::PipelineRecord* recompute = recordOf("recompute");
  return !recompute || recompute->result.stat(passes::RecomputePass::kBudgetMet).value_or(1) != 0;
}

const passes::PipelineRecord* PlanRun::recordOf(std::string_view pass) const {
  for (auto it = run.history.rbegin(); it != run.history.rend(); ++it) {
    if (it->step.pass == pass) return &*it;
  }
  return nullptr;
}

PlanSession::PlanSession(QObject* parent) : QObject(parent) {
  connect(&watcher_, &QFutureWatcherBase::finished, this, [this] {
    const QFuture<PlanOutcome> future = watcher_.future();
    if (future.resultCount() == 0) return;
    const PlanOutcome outcome = future.result();
    if (!outcome.run) {
      if (outcome.cancelled && pendingBudget_) return;  // the budget run waiting for the frontier replaces it
      emit finished(false, outcome.error);
      return;
    }
    run_ = outcome.run;
    currentStep_ = -1;
    emit finished(true, {});
    setCurrentStep(run_->stepCount() - 1);
  });
  connect(&frontierWatcher_, &QFutureWatcherBase::finished, this, &PlanSession::onFrontierFinished);
}

PlanSession::~PlanSession() {
  if (cancel_) cancel_->store(true);
  if (frontierCancel_) frontierCancel_->store(true);
  waitAll(running_);
  waitAll(frontierRunning_);
}

void PlanSession::setGraph(std::shared_ptr<const io::Artifact> artifact, const QString& graphId,
                           std::shared_ptr<const ir::Graph> graph) {
  cancel();
  if (frontierCancel_) frontierCancel_->store(true);
  artifact_ = std::move(artifact);
  graphId_ = graphId;
  graph_ = std::move(graph);
  target_.reset();
  if (artifact_ && graph_) {
    target_ = std::make_shared<const passes::PlanTarget>(*artifact_, graphId_.toStdString(), hardwareProfile_);
  }
  joint_ = target_ && target_->joint().joint;
  frontier_.reset();
  pendingBudget_.reset();
  run_.reset();
  currentStep_ = -1;
  emit graphChanged();
  emit currentStepChanged(currentStep_);
}

void PlanSession::setHardware(const QString& idOrPath) {
  if (idOrPath != hardware_) useHardware(idOrPath);
}

void PlanSession::useHardware(const QString& idOrPath) {
  hw::HwProfile hardware = hw::resolveHwProfile(idOrPath.toStdString());  // throws before anything changes
  if (frontierCancel_) frontierCancel_->store(true);
  hardware_ = idOrPath;
  hardwareProfile_ = std::move(hardware);
  // The graph's analyses carry over: only the costs are computed anew.
  if (target_) target_ = std::make_shared<const passes::PlanTarget>(target_->onHardware(hardwareProfile_));
  frontier_.reset();
  emit hardwareChanged(hardware_);
}

void PlanSession::setHardwareProfile(const hw::HwProfile& profile) {
  const std::vector<std::string> builtIn = hw::builtInHwIds();
  if (std::find(builtIn.begin(), builtIn.end(), profile.id) != builtIn.end() &&
      hw::resolveHwProfile(profile.id) == profile) {
    setHardware(QString::fromStdString(profile.id));
    return;
  }
  if (!profileDir_) profileDir_ = std::make_unique<QTemporaryDir>();
  QString name = QString::fromStdString(profile.id);
  name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_.-]")), QStringLiteral("_"));
  const QString path = profileDir_->filePath(name + QStringLiteral(".json"));
  const std::string json = hw::hwProfileToJson(profile).dump(1) + "\n";
  QFile file(path);
  // Flushed before useHardware reads the file back: QFile holds small writes in its buffer.
  if (!profileDir_->isValid() || !file.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
      file.write(json.data(), static_cast<qint64>(json.size())) != static_cast<qint64>(json.size()) ||
      !file.flush()) {
    throw Error(ErrorCode::BadInput, "cannot write the hardware profile " + profile.id + " to " + path.toStdString());
  }
  // Always anew: the file may be the one planned on, with another profile of the same id in it.
  useHardware(path);
}

QString PlanSession::defaultPipeline() const {
  return toQString(joint_ ? passes::kDefaultTrainingPipeline : passes::kDefaultInferencePipeline);
}

void PlanSession::run(const QString& pipeline) {
  pendingBudget_.reset();
  startRun(pipeline, std::nullopt);
}

void PlanSession::runBudget(const BudgetRequest& request) {
  if (joint_ && !frontier_) {
    // The run starts once the frontier is there; a later request replaces this one.
    pendingBudget_ = request;
    cancel();
    emit started(QString::fromStdString(budgetPipeline(request, true, true)));
    requestFrontier();
    return;
  }
  pendingBudget_.reset();
  startRun({}, request);
}

void PlanSession::startRun(const QString& pipeline, std::optional<BudgetRequest> budget) {
  if (!artifact_ || !graph_) {
    emit finished(false, tr("No graph to plan"));
    return;
  }
  // Cancel the run in flight; it keeps its own flag, so the new one starts clean.
  cancel();
  std::erase_if(running_, [](const QFuture<PlanOutcome>& future) { return future.isFinished(); });
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  QFuture<PlanOutcome> future =
      QtConcurrent::run(planGraph, target_, graphId_, frontier_, pipeline, budget, cancel_);
  running_.push_back(future);
  watcher_.setFuture(future);
  emit started(budget ? QString::fromStdString(budgetPipeline(*budget, joint_, true)) : pipeline);
}

void PlanSession::cancel() {
  if (cancel_) cancel_->store(true);
}

void PlanSession::requestFrontier() {
  if (!artifact_ || !graph_) return;
  if (frontier_ || !joint_) {
    emit frontierReady(true, {});
    return;
  }
  if (frontierWatcher_.isRunning() && frontierCancel_ && !frontierCancel_->load()) return;  // on its way
  std::erase_if(frontierRunning_, [](const QFuture<FrontierOutcome>& future) { return future.isFinished(); });
  frontierCancel_ = std::make_shared<std::atomic<bool>>(false);
  QFuture<FrontierOutcome> future = QtConcurrent::run(frontierOf, target_, frontierCancel_);
  frontierRunning_.push_back(future);
  frontierWatcher_.setFuture(future);
  emit frontierStarted();
}

void PlanSession::onFrontierFinished() {
  const QFuture<FrontierOutcome> future = frontierWatcher_.future();
  if (future.resultCount() == 0) return;
  const FrontierOutcome outcome = future.result();
  // A frontier of another graph or target, cancelled when that changed.
  if (!outcome.error.isEmpty()) {
    if (frontierCancel_ && frontierCancel_->load()) return;
    emit frontierReady(false, outcome.error);
    if (pendingBudget_) {
      pendingBudget_.reset();
      emit finished(false, outcome.error);
    }
    return;
  }
  if (outcome.target != target_) return;
  frontier_ = outcome.frontier;
  emit frontierReady(true, {});
  if (pendingBudget_) {
    const BudgetRequest request = *pendingBudget_;
    pendingBudget_.reset();
    startRun({}, request);
  }
}

void PlanSession::setCurrentStep(int step) {
  if (!run_ || step < 0 || step >= run_->stepCount() || step == currentStep_) return;
  currentStep_ = step;
  emit currentStepChanged(step);
}

const passes::PlannedStep* PlanSession::currentPlanned() const {
  if (!run_ || currentStep_ < 0) return nullptr;
  return &run_->planned[static_cast<size_t>(currentStep_)];
}

const StepGantt* PlanSession::currentGantt() const {
  if (!run_ || currentStep_ < 0) return nullptr;
  return &run_->gantt[static_cast<size_t>(currentStep_)];
}

}  // namespace lathe::views

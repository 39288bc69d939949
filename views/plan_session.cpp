#include "views/plan_session.h"

#include <QFile>
#include <QRegularExpression>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "util/diagnostics.h"

namespace lathe::views {

namespace {

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

std::shared_ptr<const PlanRun> planGraph(const std::shared_ptr<const passes::PlanTarget>& target,
                                         const QString& graphId,
                                         const std::shared_ptr<const passes::BudgetFrontier>& frontier,
                                         const QString& pipeline, const std::optional<BudgetRequest>& budget,
                                         const Progress& progress) {
  const passes::PassContext context = target->context(progress);
  passes::PipelineRun pipelineRun;
  QString text = pipeline;
  if (budget) {
    pipelineRun = runBudgetPipeline(*target, frontier.get(), *budget, progress);
    text = QString::fromStdString(budgetPipeline(*budget, frontier != nullptr, !pipelineRun.finalState().units.empty()));
  } else {
    pipelineRun = passes::runPipeline(context, passes::parsePipeline(pipeline.toStdString()));
  }
  auto run = completeRun(target, context, std::move(pipelineRun), progress);
  run->graphId = graphId;
  run->pipeline = text;
  run->budget = budget;
  return run;
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

PlanSession::PlanSession(QObject* parent) : QObject(parent) {}

void PlanSession::onRunFinished(JobOutcome<std::shared_ptr<const PlanRun>> outcome) {
  if (!outcome.value) {
    if (outcome.error.cancelled && pendingBudget_) return;  // the budget run waiting for the frontier replaces it
    emit finished(false, outcome.error.message);
    return;
  }
  run_ = std::move(*outcome.value);
  currentStep_ = -1;
  emit finished(true, {});
  setCurrentStep(run_->stepCount() - 1);
}

void PlanSession::setGraph(std::shared_ptr<const io::Artifact> artifact, const QString& graphId,
                           std::shared_ptr<const ir::Graph> graph) {
  cancel();
  frontiers_.abandon();
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
  frontiers_.abandon();
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
  runs_.start(
      [target = target_, graphId = graphId_, frontier = frontier_, pipeline, budget](const Progress& progress) {
        return planGraph(target, graphId, frontier, pipeline, budget, progress);
      },
      [this](JobOutcome<std::shared_ptr<const PlanRun>> outcome) { onRunFinished(std::move(outcome)); });
  emit started(budget ? QString::fromStdString(budgetPipeline(*budget, joint_, true)) : pipeline);
}

void PlanSession::cancel() {
  runs_.cancel();
}

void PlanSession::requestFrontier() {
  if (!artifact_ || !graph_) return;
  if (frontier_ || !joint_) {
    emit frontierReady(true, {});
    return;
  }
  if (frontiers_.busy()) return;  // on its way
  frontiers_.start(
      [target = target_](const Progress& progress) {
        return std::make_shared<const passes::BudgetFrontier>(passes::solveBudgetFrontier(target->context(progress)));
      },
      [this](JobOutcome<std::shared_ptr<const passes::BudgetFrontier>> outcome) {
        onFrontierFinished(std::move(outcome));
      });
  emit frontierStarted();
}

void PlanSession::onFrontierFinished(JobOutcome<std::shared_ptr<const passes::BudgetFrontier>> outcome) {
  if (!outcome.value) {
    emit frontierReady(false, outcome.error.message);
    if (pendingBudget_) {
      pendingBudget_.reset();
      emit finished(false, outcome.error.message);
    }
    return;
  }
  frontier_ = std::move(*outcome.value);
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

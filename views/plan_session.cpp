#include "views/plan_session.h"

#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <algorithm>
#include <utility>
#include <nlohmann/json.hpp>

#include "analysis/cost_model.h"
#include "plan/plan_bundle.h"
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

std::shared_ptr<const NodeTimes> nodeTimesOf(const passes::PlanTarget& target, const plan::PlanState& state,
                                             const AppliedProfile* profile) {
  auto times = std::make_shared<NodeTimes>();
  times->graph = target.sharedGraph();
  times->estimated = target.estimatedNodeSeconds();
  const ir::Graph& graph = target.graph();
  times->flops.resize(graph.size());
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    if (graph.node(id).isCall()) times->flops[id] = analysis::nodeCost(graph, id, target.hardware(), target.ops()).flops;
  }
  times->fusionGroup.assign(graph.size(), -1);
  for (size_t id = 0; id < state.group.size() && id < graph.size(); ++id) times->fusionGroup[id] = state.group[id];
  if (state.recompute) {
    times->decision.assign(graph.size(), NodeTimes::Decision::None);
    for (ir::NodeId id : state.recompute->saved) times->decision[id] = NodeTimes::Decision::Saved;
    for (ir::NodeId id : state.recompute->recomputed) times->decision[id] = NodeTimes::Decision::Recomputed;
  }
  if (profile) {
    times->measured = profile->measuredSeconds;
    times->source = toQString(profile->calibration.source);
  }
  return times;
}

// `target` is `model` calibrated with `profile`, or `model` itself when there is no profile.
std::shared_ptr<const PlanRun> planGraph(const std::shared_ptr<const passes::PlanTarget>& target,
                                         const std::shared_ptr<const passes::PlanTarget>& model,
                                         const std::shared_ptr<const AppliedProfile>& profile, const QString& graphId,
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
  run->profile = profile;
  if (profile && !run->run.finalState().offload) {
    run->modelStepSeconds = passes::plannedStep(model->context(progress), run->run.finalState()).stepSeconds;
  }
  run->nodeTimes = nodeTimesOf(*target, run->run.finalState(), profile.get());
  return run;
}

}  // namespace

passes::CategoryTimes AppliedProfile::total() const {
  passes::CategoryTimes all;
  for (const passes::CategoryTimes& category : calibration.byCategory) {
    all.nodes += category.nodes;
    all.estimated += category.estimated;
    all.measured += category.measured;
  }
  return all;
}

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
  // A profile measured one graph: it goes with it.
  profiles_.abandon();
  const QString loadingProfile = std::exchange(loadingProfile_, {});
  const bool hadProfile = profile_ != nullptr;
  profile_.reset();
  artifact_ = std::move(artifact);
  graphId_ = graphId;
  graph_ = std::move(graph);
  modelTarget_.reset();
  if (artifact_ && graph_) {
    modelTarget_ = std::make_shared<const passes::PlanTarget>(*artifact_, graphId_.toStdString(), hardwareProfile_);
  }
  target_ = modelTarget_;
  joint_ = target_ && target_->joint().joint;
  frontier_.reset();
  pendingBudget_.reset();
  lastBudget_.reset();
  lastPipeline_.clear();
  run_.reset();
  currentStep_ = -1;
  emit graphChanged();
  emit currentStepChanged(currentStep_);
  if (hadProfile) emit profileChanged();
  if (!loadingProfile.isEmpty()) {
    emit profileApplied(false, tr("%1 was not applied: another graph was selected while it was read")
                                   .arg(QFileInfo(loadingProfile).fileName()));
  }
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
  if (modelTarget_) {
    modelTarget_ = std::make_shared<const passes::PlanTarget>(modelTarget_->onHardware(hardwareProfile_));
    target_ = modelTarget_;
    // The measurements price the new target at once; the model's figures beside them follow.
    if (profile_) {
      target_ = std::make_shared<const passes::PlanTarget>(
          modelTarget_->calibrated(profile_->measuredSeconds, profile_->calibration.source));
    }
    if (!loadingProfile_.isEmpty()) {
      calibrate(loadingProfile_, nullptr, true);
    } else if (profile_) {
      calibrate(profile_->path, profile_->profile, false);
    }
  }
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
  lastBudget_.reset();
  lastPipeline_ = pipeline;
  startRun(pipeline, std::nullopt);
}

void PlanSession::runBudget(const BudgetRequest& request) {
  lastBudget_ = request;
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
      [target = target_, model = modelTarget_, profile = profile_, graphId = graphId_, frontier = frontier_, pipeline,
       budget](const Progress& progress) {
        return planGraph(target, model, profile, graphId, frontier, pipeline, budget, progress);
      },
      [this](JobOutcome<std::shared_ptr<const PlanRun>> outcome) { onRunFinished(std::move(outcome)); });
  emit started(budget ? QString::fromStdString(budgetPipeline(*budget, joint_, true)) : pipeline);
}

void PlanSession::cancel() {
  runs_.cancel();
}

void PlanSession::replan() {
  if (lastBudget_) {
    const BudgetRequest request = *lastBudget_;
    runBudget(request);
  } else if (!lastPipeline_.isEmpty()) {
    run(lastPipeline_);
  }
}

void PlanSession::loadProfile(const QString& path) {
  if (!modelTarget_) {
    emit profileApplied(false, tr("No graph to price: select one first"));
    return;
  }
  calibrate(path, nullptr, true);
  emit profileStarted(path);
}

void PlanSession::calibrate(const QString& path, std::shared_ptr<const plan::MeasuredProfile> read, bool loading) {
  loadingProfile_ = loading ? path : QString();
  profiles_.start(
      [model = modelTarget_, path, read = std::move(read)](const Progress& progress) {
        std::shared_ptr<const plan::MeasuredProfile> profile =
            read ? read : std::make_shared<const plan::MeasuredProfile>(plan::readProfile(path.toStdString()));
        progress.checkCancelled();
        passes::Calibration calibration = passes::calibrate(*model, *profile, QFileInfo(path).fileName().toStdString());
        // calibrate found the graph's measurements; by node id, they are what the views show.
        const plan::ProfiledGraph* entry = profile->measuredGraph(plan::graphFingerprint(model->graph()));
        std::vector<std::optional<double>> measured = plan::measuredSecondsByNode(*entry->measured, model->graph());
        return std::make_shared<const AppliedProfile>(
            AppliedProfile{path, std::move(profile), std::move(measured), std::move(calibration)});
      },
      [this, loading](JobOutcome<std::shared_ptr<const AppliedProfile>> outcome) {
        onCalibrated(std::move(outcome), loading);
      });
}

void PlanSession::onCalibrated(JobOutcome<std::shared_ptr<const AppliedProfile>> outcome, bool loading) {
  loadingProfile_.clear();
  if (!outcome.value) {
    // Only a load fails: a profile applied before calibrates the same graph on other hardware.
    if (loading) emit profileApplied(false, outcome.error.message);
    return;
  }
  profile_ = std::move(*outcome.value);
  if (!loading) {  // new hardware: target_ was priced with the measurements when it changed
    emit profileChanged();
    return;
  }
  target_ = std::make_shared<const passes::PlanTarget>(profile_->calibration.target);
  dropFrontier();
  emit profileChanged();
  // Before saying so: whoever waits for the plan priced with it finds the session busy.
  replan();
  if (joint_) requestFrontier();  // the budget panel and the Pareto plot show it
  emit profileApplied(true, {});
}

void PlanSession::clearProfile() {
  profiles_.abandon();
  if (!std::exchange(loadingProfile_, {}).isEmpty())
    emit profileApplied(false, tr("Loading the profile was cancelled"));
  if (!profile_) return;
  profile_.reset();
  target_ = modelTarget_;
  dropFrontier();
  emit profileChanged();
  replan();
  if (joint_) requestFrontier();
}

void PlanSession::dropFrontier() {
  frontiers_.abandon();
  frontier_.reset();
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

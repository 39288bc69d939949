#include "views/plan_session.h"

#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "analysis/graph_inputs.h"
#include "analysis/joint.h"
#include "hw/hw_profile.h"
#include "ir/op_info.h"

namespace lathe::views {

namespace {

// The hardware the studio plans for, as `lathe plan`'s default.
constexpr const char* kHwProfile = "h200";

const io::GraphListing* findListing(const std::vector<io::GraphListing>& graphs, const std::string& id) {
  for (const auto& g : graphs) {
    if (g.id == id) return &g;
  }
  return nullptr;
}

PlanOutcome planGraph(const std::shared_ptr<const io::Artifact>& artifact, const QString& graphId,
                      const QString& pipeline, const std::shared_ptr<std::atomic<bool>>& cancel) {
  PlanOutcome outcome;
  try {
    const std::vector<io::GraphListing> graphs = artifact->graphs();
    const io::GraphListing* listing = findListing(graphs, graphId.toStdString());
    if (!listing || !listing->graph) {
      throw Error(ErrorCode::BadInput, "the artifact has no graph " + graphId.toStdString());
    }
    const analysis::GraphInputs inputs = analysis::inferGraphInputs(*listing->graph, io::dynamoGraphOf(graphs, *listing));
    const hw::HwProfile hw = hw::resolveHwProfile(kHwProfile);
    const bool inductor = io::compiledByInductor(graphs, *listing);
    Progress progress;
    progress.cancel = cancel.get();
    const passes::PassContext context{*listing->graph, inputs, hw, ir::OpRegistry::global(), progress, inductor};
    const std::vector<passes::PipelineStep> steps = passes::parsePipeline(pipeline.toStdString());
    auto run = std::make_shared<PlanRun>();
    run->graph = listing->graph;
    run->graphId = graphId;
    run->pipeline = pipeline;
    run->run = passes::runPipeline(context, steps);
    run->planned.reserve(run->run.history.size() + 1);
    for (int step = 0; step <= static_cast<int>(run->run.history.size()); ++step) {
      progress.checkCancelled();
      run->planned.push_back(passes::plannedStep(context, run->stateAt(step)));
    }
    outcome.run = std::move(run);
  } catch (const Error& error) {
    outcome.cancelled = error.code() == ErrorCode::Cancelled;
    outcome.error = QString::fromUtf8(error.what());
  } catch (const std::exception& error) {
    // Anything else is a bug in a pass; the window shows it instead of going down with it.
    outcome.error = QString::fromUtf8(error.what());
  }
  return outcome;
}

}  // namespace

const plan::PlanState& PlanRun::stateAt(int step) const {
  return step == 0 ? run.initial : run.history.at(static_cast<size_t>(step - 1)).result.state;
}

PlanSession::PlanSession(QObject* parent) : QObject(parent) {
  connect(&watcher_, &QFutureWatcherBase::finished, this, [this] {
    const QFuture<PlanOutcome> future = watcher_.future();
    if (future.resultCount() == 0) return;
    const PlanOutcome outcome = future.result();
    if (!outcome.run) {
      emit finished(false, outcome.error);
      return;
    }
    run_ = outcome.run;
    currentStep_ = -1;
    emit finished(true, {});
    setCurrentStep(run_->stepCount() - 1);
  });
}

PlanSession::~PlanSession() {
  if (cancel_) cancel_->store(true);
  for (QFuture<PlanOutcome>& future : running_) future.waitForFinished();
}

void PlanSession::setGraph(std::shared_ptr<const io::Artifact> artifact, const QString& graphId,
                           std::shared_ptr<const ir::Graph> graph) {
  cancel();
  artifact_ = std::move(artifact);
  graphId_ = graphId;
  graph_ = std::move(graph);
  run_.reset();
  currentStep_ = -1;
  emit currentStepChanged(currentStep_);
}

QString PlanSession::defaultPipeline() const {
  if (graph_ && analysis::analyzeJoint(*graph_).joint) return QStringLiteral("split,fusion,recompute(policy=torch)");
  return QStringLiteral("split,fusion");
}

void PlanSession::run(const QString& pipeline) {
  if (!artifact_ || !graph_) {
    emit finished(false, tr("No graph to plan"));
    return;
  }
  // Cancel the run in flight; it keeps its own flag, so the new one starts clean.
  cancel();
  std::erase_if(running_, [](const QFuture<PlanOutcome>& future) { return future.isFinished(); });
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  QFuture<PlanOutcome> future = QtConcurrent::run(planGraph, artifact_, graphId_, pipeline, cancel_);
  running_.push_back(future);
  watcher_.setFuture(future);
  emit started(pipeline);
}

void PlanSession::cancel() {
  if (cancel_) cancel_->store(true);
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

}  // namespace lathe::views

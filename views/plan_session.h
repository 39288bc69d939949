// Plans the selected graph: runs a pipeline on a worker thread (a JobTracker) with progress and
// cancel, keeps every step's plan state, planned step (schedule, memory timeline) and simulated
// streams (Gantt), and tracks which step is current for the plan views. Starting a new run cancels
// the one in flight. For the budget panel it also computes the recompute frontier of a joint graph
// once per target and runs budget plans from it (budget_plan.h).
#pragma once

#include <QObject>
#include <QString>
#include <QTemporaryDir>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "io/artifact.h"
#include "passes/pipeline.h"
#include "passes/plan_builder.h"
#include "passes/plan_target.h"
#include "views/logic/budget_plan.h"
#include "views/formatting.h"
#include "views/job_tracker.h"
#include "views/logic/step_gantt.h"

namespace lathe::views {

// A finished run: the graph it planned, the pipeline, and per step (initial, then one per pass)
// the planned step that step's state makes and its simulated streams.
struct PlanRun {
  std::shared_ptr<const passes::PlanTarget> target;  // the graph, its inputs and the hardware it was planned on
  std::shared_ptr<const ir::Graph> graph;
  QString graphId;
  QString pipeline;
  QString hardware;  // the target's name ("NVIDIA H200 SXM 141GB")
  passes::PipelineRun run;
  std::vector<passes::PlannedStep> planned;  // planned[0] is the initial state's
  std::vector<StepGantt> gantt;              // parallel to planned
  std::optional<BudgetRequest> budget;       // set for the budget panel's runs

  [[nodiscard]] int stepCount() const { return static_cast<int>(planned.size()); }
  [[nodiscard]] const plan::PlanState& stateAt(int step) const;
  // The step time the last step estimates: the simulated offload step where weights stream, else
  // the sum of the executions' estimated times.
  [[nodiscard]] double stepEstimateSeconds() const;
  // False when a budget run's recompute could not bring the peak down to the budget.
  [[nodiscard]] bool budgetMet() const;
  // The last step of a pass ("recompute"), null when the pipeline has none.
  [[nodiscard]] const passes::PipelineRecord* recordOf(std::string_view pass) const;
};

class PlanSession : public QObject {
  Q_OBJECT

 public:
  explicit PlanSession(QObject* parent = nullptr);

  // The graph to plan: one of the artifact's, with its listing id. Clears the last run.
  void setGraph(std::shared_ptr<const io::Artifact> artifact, const QString& graphId,
                std::shared_ptr<const ir::Graph> graph);
  [[nodiscard]] bool hasGraph() const { return graph_ != nullptr; }
  [[nodiscard]] bool jointGraph() const { return joint_; }
  // The graph ready to plan on the target: the studio's one passes::PlanTarget, whose analyses
  // (joint split, layer units, node costs) every view shares. Null without a graph.
  [[nodiscard]] const std::shared_ptr<const passes::PlanTarget>& target() const { return target_; }
  // The target: a built-in hardware id ("h200") or a lathe.hw/1 JSON file. Drops the frontier.
  // Error(BadInput) when it cannot be read; nothing changes then.
  void setHardware(const QString& idOrPath);
  // A target given as a profile (a plan bundle's): its built-in id where it is a built-in profile,
  // else the profile written to a file of the session's own, since plans read hardware by id or file.
  // Error(BadInput) when that file cannot be written.
  void setHardwareProfile(const hw::HwProfile& profile);
  [[nodiscard]] const QString& hardware() const { return hardware_; }
  [[nodiscard]] const hw::HwProfile& hardwareProfile() const { return hardwareProfile_; }
  // The pipeline `lathe plan` runs by default (passes::PlanTarget::defaultPipeline).
  [[nodiscard]] QString defaultPipeline() const;
  void run(const QString& pipeline);
  void cancel();

  // Computes the recompute frontier of the joint graph on the target in the background, once;
  // frontierReady when it is there (at once when it already is).
  void requestFrontier();
  [[nodiscard]] const std::shared_ptr<const passes::BudgetFrontier>& frontier() const { return frontier_; }
  [[nodiscard]] bool frontierBusy() const { return frontiers_.busy(); }
  // Plans split,fusion,recompute(policy=budget),offload(policy=heuristic) for a joint graph from its
  // frontier (computed first when missing); split,fusion,offload for other graphs.
  void runBudget(const BudgetRequest& request);

  [[nodiscard]] bool busy() const { return runs_.busy(); }
  [[nodiscard]] const std::shared_ptr<const PlanRun>& planRun() const { return run_; }
  [[nodiscard]] int currentStep() const { return currentStep_; }
  // Makes a step (0 = initial state) the one the plan views show; out-of-range steps are ignored.
  void setCurrentStep(int step);
  [[nodiscard]] const passes::PlannedStep* currentPlanned() const;
  [[nodiscard]] const StepGantt* currentGantt() const;

 signals:
  // A new graph (or none) was set; the last run and the frontier are gone.
  void graphChanged();
  // The target changed (setHardware, setHardwareProfile): the id or file now planned on.
  void hardwareChanged(const QString& idOrPath);
  void started(const QString& pipeline);
  // ok is false when the run failed or was cancelled; error says why.
  void finished(bool ok, const QString& error);
  void currentStepChanged(int step);
  void frontierStarted();
  // ok is false when it failed (error says why); a graph that is not joint has no frontier.
  void frontierReady(bool ok, const QString& error);

 private:
  void startRun(const QString& pipeline, std::optional<BudgetRequest> budget);
  void useHardware(const QString& idOrPath);
  void onRunFinished(JobOutcome<std::shared_ptr<const PlanRun>> outcome);
  void onFrontierFinished(JobOutcome<std::shared_ptr<const passes::BudgetFrontier>> outcome);

  std::shared_ptr<const io::Artifact> artifact_;
  std::shared_ptr<const ir::Graph> graph_;
  QString graphId_;
  bool joint_ = false;
  QString hardware_ = toQString(passes::kDefaultHardware);
  hw::HwProfile hardwareProfile_ = hw::resolveHwProfile(passes::kDefaultHardware);
  std::unique_ptr<QTemporaryDir> profileDir_;  // setHardwareProfile's files, made on first use
  std::shared_ptr<const passes::PlanTarget> target_;
  std::shared_ptr<const passes::BudgetFrontier> frontier_;
  std::optional<BudgetRequest> pendingBudget_;  // waits for the frontier
  std::shared_ptr<const PlanRun> run_;
  int currentStep_ = -1;
  // Last: destroyed first, they wait for the threads still planning.
  JobTracker runs_;
  JobTracker frontiers_;  // a frontier of another graph or target is abandoned when that changes
};

}  // namespace lathe::views

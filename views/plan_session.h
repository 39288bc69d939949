// Plans the selected graph: runs a pipeline on a worker thread (a JobTracker) with progress and
// cancel, keeps every step's plan state, planned step (schedule, memory timeline) and simulated
// streams (Gantt), and tracks which step is current for the plan views. Starting a new run cancels
// the one in flight. For the budget panel it also computes the recompute frontier of a joint graph
// once per target and runs budget plans from it (budget_plan.h). A measured profile (lathe.profile/1)
// can price the graph in place of the model's estimates (loadProfile).
#pragma once

#include <QObject>
#include <QString>
#include <QTemporaryDir>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "io/artifact.h"
#include "passes/calibration.h"
#include "passes/pipeline.h"
#include "passes/plan_builder.h"
#include "passes/plan_target.h"
#include "views/logic/budget_plan.h"
#include "views/formatting.h"
#include "views/job_tracker.h"
#include "views/logic/step_gantt.h"
#include "views/node_times.h"

namespace lathe::views {

// A measured profile applied to the session's graph: what it measured of each node, and how far
// the model's estimates on the session's hardware were from it.
struct AppliedProfile {
  QString path;
  std::shared_ptr<const plan::MeasuredProfile> profile;
  std::vector<std::optional<double>> measuredSeconds;  // by NodeId; nullopt where the run timed nothing
  passes::Calibration calibration;

  // The measured nodes of every category together: their estimated and measured seconds.
  [[nodiscard]] passes::CategoryTimes total() const;
};

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
  // The measurements the run was priced with; null: the model's estimates alone.
  std::shared_ptr<const AppliedProfile> profile;
  // With a profile: the model's own estimate of the last step, to show beside the measured one; none
  // where weights stream (that step is the offload simulation's, run on the measured times).
  std::optional<double> modelStepSeconds;
  std::shared_ptr<const NodeTimes> nodeTimes;  // the graph's nodes as the run prices them

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
  // (joint split, layer units, node costs) every view shares; its node costs are the applied
  // profile's measurements where it has them. Null without a graph.
  [[nodiscard]] const std::shared_ptr<const passes::PlanTarget>& target() const { return target_; }
  // The target: a built-in hardware id ("h200") or a lathe.hw/1 JSON file. Drops the frontier; an
  // applied profile stays (its figures beside the model's are computed anew in the background).
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

  // Prices the graph as a lathe.profile/1 file measured it (`lathe measure -o`): read and applied to
  // the target in the background, then what was planned last is planned again on it. profileApplied
  // says how it went; a profile that does not read or measured another graph changes nothing.
  // Selecting another graph drops the profile.
  void loadProfile(const QString& path);
  // Back to the model's estimates; what was planned last is planned again.
  void clearProfile();
  // The profile target() is priced with; null: the model's estimates.
  [[nodiscard]] const std::shared_ptr<const AppliedProfile>& profile() const { return profile_; }
  [[nodiscard]] bool profileBusy() const { return profiles_.busy(); }

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
  void profileStarted(const QString& path);
  // A loadProfile ended: ok false when the profile was not applied (error says why; nothing changed).
  void profileApplied(bool ok, const QString& error);
  // A profile was applied or dropped (cleared, another graph): profile() and target() changed.
  void profileChanged();

 private:
  void startRun(const QString& pipeline, std::optional<BudgetRequest> budget);
  void useHardware(const QString& idOrPath);
  void onRunFinished(JobOutcome<std::shared_ptr<const PlanRun>> outcome);
  void onFrontierFinished(JobOutcome<std::shared_ptr<const passes::BudgetFrontier>> outcome);
  void dropFrontier();
  // Calibrates the model's target with a profile in the background: read from `path` when `read` is
  // null. `loading`: a loadProfile, applied and re-planned when it comes back; else the applied
  // profile's figures on new hardware.
  void calibrate(const QString& path, std::shared_ptr<const plan::MeasuredProfile> read, bool loading);
  void onCalibrated(JobOutcome<std::shared_ptr<const AppliedProfile>> outcome, bool loading);
  // Plans again what was asked last (a pipeline or a budget), on the target as it is now.
  void replan();

  std::shared_ptr<const io::Artifact> artifact_;
  std::shared_ptr<const ir::Graph> graph_;
  QString graphId_;
  bool joint_ = false;
  QString hardware_ = toQString(passes::kDefaultHardware);
  hw::HwProfile hardwareProfile_ = hw::resolveHwProfile(passes::kDefaultHardware);
  std::unique_ptr<QTemporaryDir> profileDir_;  // setHardwareProfile's files, made on first use
  std::shared_ptr<const passes::PlanTarget> modelTarget_;  // priced with the model's estimates
  std::shared_ptr<const passes::PlanTarget> target_;       // modelTarget_, or it calibrated with profile_
  std::shared_ptr<const AppliedProfile> profile_;
  QString loadingProfile_;  // the file a loadProfile in flight reads
  std::shared_ptr<const passes::BudgetFrontier> frontier_;
  std::optional<BudgetRequest> pendingBudget_;  // waits for the frontier
  // What was asked last, for replan: a budget, else a pipeline.
  std::optional<BudgetRequest> lastBudget_;
  QString lastPipeline_;
  std::shared_ptr<const PlanRun> run_;
  int currentStep_ = -1;
  // Last: destroyed first, they wait for the threads still planning.
  JobTracker runs_;
  JobTracker frontiers_;  // a frontier of another graph or target is abandoned when that changes
  JobTracker profiles_;   // likewise a calibration
};

}  // namespace lathe::views

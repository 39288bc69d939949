// Plans the selected graph: runs a pipeline on a worker thread (QtConcurrent) with progress and
// cancel, keeps every step's plan state and planned step (schedule, memory timeline), and tracks
// which step is current for the plan views. Starting a new run cancels the one in flight.
#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <vector>

#include "io/artifact.h"
#include "passes/pipeline.h"
#include "passes/plan_builder.h"

namespace lathe::views {

// A finished run: the graph it planned, the pipeline, and per step (initial, then one per pass)
// the planned step that step's state makes.
struct PlanRun {
  std::shared_ptr<const ir::Graph> graph;
  QString graphId;
  QString pipeline;
  passes::PipelineRun run;
  std::vector<passes::PlannedStep> planned;  // planned[0] is the initial state's

  [[nodiscard]] int stepCount() const { return static_cast<int>(planned.size()); }
  [[nodiscard]] const plan::PlanState& stateAt(int step) const;
};

struct PlanOutcome {
  std::shared_ptr<const PlanRun> run;
  QString error;
  bool cancelled = false;
};

class PlanSession : public QObject {
  Q_OBJECT

 public:
  explicit PlanSession(QObject* parent = nullptr);
  // Cancels and waits for the runs still going, whose threads must not outlive the application.
  ~PlanSession() override;

  // The graph to plan: one of the artifact's, with its listing id. Clears the last run.
  void setGraph(std::shared_ptr<const io::Artifact> artifact, const QString& graphId,
                std::shared_ptr<const ir::Graph> graph);
  // The pipeline `lathe plan` runs by default: recompute with torch's policy for a joint graph.
  [[nodiscard]] QString defaultPipeline() const;
  void run(const QString& pipeline);
  void cancel();

  [[nodiscard]] bool busy() const { return watcher_.isRunning(); }
  [[nodiscard]] const std::shared_ptr<const PlanRun>& planRun() const { return run_; }
  [[nodiscard]] int currentStep() const { return currentStep_; }
  // Makes a step (0 = initial state) the one the plan views show; out-of-range steps are ignored.
  void setCurrentStep(int step);
  [[nodiscard]] const passes::PlannedStep* currentPlanned() const;

 signals:
  void started(const QString& pipeline);
  // ok is false when the run failed or was cancelled; error says why.
  void finished(bool ok, const QString& error);
  void currentStepChanged(int step);

 private:
  QFutureWatcher<PlanOutcome> watcher_;
  std::shared_ptr<std::atomic<bool>> cancel_;
  std::vector<QFuture<PlanOutcome>> running_;
  std::shared_ptr<const io::Artifact> artifact_;
  std::shared_ptr<const ir::Graph> graph_;
  QString graphId_;
  std::shared_ptr<const PlanRun> run_;
  int currentStep_ = -1;
};

}  // namespace lathe::views

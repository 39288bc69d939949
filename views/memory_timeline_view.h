// The "Memory timeline" dock: the current plan step's live bytes over its executions, one stacked
// area per memory category (analysis::MemoryCategory order), with the peak, the start of the
// backward and, for budget plans, the budget marked. "Pin as baseline" keeps the plan on show as an
// outline under the next ones; a CUDA memory snapshot's allocated bytes can be drawn on the same
// axis (read by an ArtifactLoader, with its progress, Cancel and errors shown above the plot), and a
// run folder's measured peak (lathe.profile/1) beside the planned one for the graphs the
// run planned. Clicking the plot picks the execution under the cursor.
#pragma once

#include <QVector>
#include <QWidget>

#include <memory>

#include "ir/graph.h"
#include "plan/profile.h"
#include "views/artifact_loader.h"
#include "views/formatting.h"

class QCustomPlot;
class QCPItemStraightLine;
class QLabel;
class QMouseEvent;
class QProgressBar;
class QPushButton;

namespace lathe::views {

class PlanSession;

// A snapshot's allocated bytes over its trace events (the device with the most events).
// The snapshot drawn over the step: one training iteration of its trace (the one with its peak,
// analysis::snapshotIterations), spread over the step's executions from end to end.
struct SnapshotCurve {
  QString file;
  QVector<double> position;  // 0..1 along the iteration (event index from its first to its last)
  QVector<double> bytes;
  int64_t device = 0;
  size_t events = 0;                       // of the whole trace
  int iteration = 1, iterations = 1;       // which one is drawn, of how many
  uint32_t firstEvent = 0, lastEvent = 0;  // the drawn iteration's events
  uint64_t peakBytes = 0;                  // of the drawn iteration: the trace's peak
};

class MemoryTimelineView : public QWidget {
  Q_OBJECT

 public:
  explicit MemoryTimelineView(PlanSession* session, QWidget* parent = nullptr);

  [[nodiscard]] QCustomPlot* plot() const { return plot_; }
  // The highest point of the stacked areas, in bytes (what the plot shows as the peak).
  [[nodiscard]] double plottedPeakBytes() const;
  // The budget line drawn, in bytes; 0 when none.
  [[nodiscard]] double plottedBudgetBytes() const { return budgetBytes_; }
  // The target's memory drawn, in bytes: shown when the step comes near it (a peak within
  // kCapacityShownBelow of it, or above); 0 when not drawn.
  [[nodiscard]] double plottedCapacityBytes() const { return capacityBytes_; }
  static constexpr double kCapacityShownBelow = 0.5;

  // A run's measured steps: for a graph the run planned, its measured peak (what the step held
  // before plus the largest peak above it) is drawn beside the planned one. Null clears it.
  void setMeasuredProfile(std::shared_ptr<const plan::MeasuredProfile> profile);
  // The measured peak drawn, in bytes; 0 when none is (another graph, no profile, no CUDA peak).
  [[nodiscard]] double plottedMeasuredPeakBytes() const { return measuredPeakBytes_; }
  // The run's legend entry for the graph on show ("measured (cpu): 1.66 ms median, 3 steps"); empty
  // when the run did not plan it.
  [[nodiscard]] const QString& measuredSummary() const { return measuredSummary_; }

  // Marks where the node runs in the step (each execution: a recomputed node twice); kNoNode clears.
  void setSelectedNode(ir::NodeId node);
  // Executions marked for the selected node (none when it does not run in the step on show).
  [[nodiscard]] int selectedMarkers() const { return selectedMarkers_; }
  // What the tooltip says under the mouse at execution `x`: the node, its phase, the total and each
  // category held there; empty outside the step.
  [[nodiscard]] QString readoutAt(double x) const;

  // Keeps the current step's total as an outline drawn under the plans that follow.
  void pinBaseline();
  void clearBaseline();
  [[nodiscard]] bool hasBaseline() const { return !baseline_.isEmpty(); }
  // The pinned total's highest point in bytes (0 without a baseline).
  [[nodiscard]] double baselinePeakBytes() const;

  // Loads a CUDA memory snapshot (.pickle) in the background and draws its allocated bytes, in
  // place of the one drawn; a load in flight is cancelled. snapshotLoaded says how it went; a
  // snapshot that does not load is reported above the plot and leaves the plot as it was.
  void loadSnapshot(const QString& path);
  // Stops the snapshot load in flight (the Cancel beside its progress).
  void cancelSnapshot();
  void clearSnapshot();
  [[nodiscard]] const SnapshotCurve& snapshot() const { return snapshot_; }
  // Asks for a snapshot file and loads it.
  void chooseSnapshot();

 signals:
  void nodeClicked(lathe::ir::NodeId node);
  void snapshotLoaded(bool ok, const QString& error);

 private:
  void showCurrentStep();
  void onSnapshotLoaded(const LoadOutcome& outcome);
  void showSnapshotProgress(bool loading);
  // The run's measurements for the graph on show (legend entry, peak line); returns the peak line's
  // height in axis units, 0 when none is drawn.
  double showMeasured(const QString& graphId);
  void onPlotClicked(QMouseEvent* event);
  void onMouseMove(QMouseEvent* event);
  void drawSelectedNode();
  void updateButtons();

  PlanSession* session_;
  QCustomPlot* plot_;
  QPushButton* pinButton_;
  QPushButton* clearPinButton_;
  QPushButton* snapshotButton_;
  QPushButton* clearSnapshotButton_;
  QProgressBar* snapshotProgress_;
  QPushButton* cancelSnapshotButton_;
  QLabel* snapshotStatus_;  // the load in flight, or why the last one failed
  QVector<double> baseline_;  // bytes per execution of the pinned step
  ByteUnit unit_;             // of the y axis, chosen at each redraw
  QString baselineLabel_;
  double budgetBytes_ = 0;
  double capacityBytes_ = 0;
  std::shared_ptr<const plan::MeasuredProfile> profile_;
  double measuredPeakBytes_ = 0;
  QString measuredSummary_;
  SnapshotCurve snapshot_;
  // The line above the plot tells of a snapshot load (on its way, or why it failed): the measured
  // against planned peak waits until it is over.
  bool statusHoldsLoad_ = false;
  ArtifactLoader* snapshotLoader_;
  ir::NodeId selected_ = ir::kNoNode;
  int selectedMarkers_ = 0;
  std::vector<QCPItemStraightLine*> selectedMarkerItems_;  // owned by the plot
};

}  // namespace lathe::views

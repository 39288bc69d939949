// The "Gantt" dock: the current plan step's compute, host-to-device and device-to-host streams as
// the stream simulator runs them (step_gantt.h), one row each, time in ms. Compute bars are the
// offload plan's segments or, without offload, the kernels; stalls (compute waiting for weights)
// are marked on the compute row. Hovering a bar says what it is; clicking the compute row selects
// the node running there.
#pragma once

#include <QWidget>
#include <memory>

#include "analysis/stream_sim.h"
#include "ir/graph.h"
#include "plan/profile.h"

class QCustomPlot;
class QCPTextElement;
class QMouseEvent;

namespace lathe::views {

class GanttRows;
class PlanSession;

class GanttView : public QWidget {
  Q_OBJECT

 public:
  explicit GanttView(PlanSession* session, QWidget* parent = nullptr);

  [[nodiscard]] QCustomPlot* plot() const { return plot_; }
  // The line above the plot: the step time, the target, compute, stalls, what the bars are.
  [[nodiscard]] QString title() const;
  // Bars drawn in a row (stalls not counted).
  [[nodiscard]] int barCount(analysis::Stream stream) const;
  [[nodiscard]] int stallCount() const;
  // What hovering at a pixel of the plot shows; empty over nothing.
  [[nodiscard]] QString toolTipAt(const QPointF& pixel) const;
  // The plot's y coordinate of a row.
  [[nodiscard]] static double rowOf(analysis::Stream stream);

 signals:
  void nodeClicked(lathe::ir::NodeId node);

 private:
  void showCurrentStep();
  void onPlotClicked(QMouseEvent* event);
  void onMouseMove(QMouseEvent* event);

  PlanSession* session_;
  QCustomPlot* plot_;
  QCPTextElement* title_;
  GanttRows* rows_ = nullptr;
};

// The "Offload run" dock: one step of a run folder's weight offload (lathe.profile/1 weight_offload)
// as the GPU ran it, above the same step as the offload planner simulated it: compute, weight
// copies (H2D) and, for training, gradient copies (D2H), time in ms. Hovering a bar says what it is.
class OffloadRunView : public QWidget {
  Q_OBJECT

 public:
  explicit OffloadRunView(QWidget* parent = nullptr);

  // Shows the profile's weight-offload run; a profile without one (or null) clears the view.
  void setProfile(std::shared_ptr<const plan::MeasuredProfile> profile);
  [[nodiscard]] bool hasRun() const { return measured_ != nullptr; }
  [[nodiscard]] QCustomPlot* plot() const { return plot_; }
  [[nodiscard]] QString title() const;
  [[nodiscard]] int barCount(bool measured, analysis::Stream stream) const;
  [[nodiscard]] int stallCount(bool measured) const;
  [[nodiscard]] QString toolTipAt(const QPointF& pixel) const;
  // The plot's y coordinate of a row of the measured or the simulated step.
  [[nodiscard]] double rowOf(bool measured, analysis::Stream stream) const;

 private:
  void onMouseMove(QMouseEvent* event);

  QCustomPlot* plot_;
  QCPTextElement* title_;
  std::shared_ptr<const plan::MeasuredProfile> profile_;
  double simulatedBase_ = 0;  // where each step's rows begin (GanttView::rowOf above it)
  double measuredBase_ = 3;
  GanttRows* simulated_ = nullptr;
  GanttRows* measured_ = nullptr;
};

}  // namespace lathe::views

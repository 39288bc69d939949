// The "Pareto" dock: the recompute frontier of the selected joint graph on the target (peak memory
// against recompute time, budget_plan.h), computed in the background once per graph and target,
// with the current plan's point marked. Clicking a frontier point asks for its peak as the budget.
#pragma once

#include <QWidget>
#include <cstdint>

#include "views/formatting.h"

class QCustomPlot;
class QCPTextElement;
class QMouseEvent;

namespace lathe::views {

class PlanSession;

class ParetoView : public QWidget {
  Q_OBJECT

 public:
  explicit ParetoView(PlanSession* session, QWidget* parent = nullptr);

  [[nodiscard]] QCustomPlot* plot() const { return plot_; }
  [[nodiscard]] int pointCount() const;
  // Where frontier point `index` (by increasing peak) is drawn, in plot pixels.
  [[nodiscard]] QPointF pixelOfPoint(int index) const;
  // The plan's point (peak bytes, recompute seconds) as drawn; false when none is marked.
  [[nodiscard]] bool currentPoint(uint64_t& peakBytes, double& recomputeSeconds) const;

 signals:
  // A frontier point was clicked: its peak, as the budget to plan for.
  void budgetPicked(uint64_t peakBytes);

 private:
  void showFrontier();
  void onPlotClicked(QMouseEvent* event);

  PlanSession* session_;
  QCustomPlot* plot_;
  QCPTextElement* title_;
  bool marked_ = false;
  uint64_t markedPeak_ = 0;
  double markedSeconds_ = 0;
  ByteUnit unit_;  // of the x axis, chosen at each redraw
};

}  // namespace lathe::views

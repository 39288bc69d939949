// The "Memory timeline" dock: the current plan step's live bytes over its executions, one stacked
// area per memory category (analysis::MemoryCategory order), with the peak and the start of the
// backward marked. Clicking the plot picks the execution under the cursor.
#pragma once

#include <QWidget>

#include "ir/graph.h"

class QCustomPlot;
class QMouseEvent;

namespace lathe::views {

class PlanSession;

class MemoryTimelineView : public QWidget {
  Q_OBJECT

 public:
  explicit MemoryTimelineView(PlanSession* session, QWidget* parent = nullptr);

  [[nodiscard]] QCustomPlot* plot() const { return plot_; }
  // The highest point of the stacked areas, in bytes (what the plot shows as the peak).
  [[nodiscard]] double plottedPeakBytes() const;

 signals:
  void nodeClicked(lathe::ir::NodeId node);

 private:
  void showCurrentStep();
  void onPlotClicked(QMouseEvent* event);

  PlanSession* session_;
  QCustomPlot* plot_;
};

}  // namespace lathe::views

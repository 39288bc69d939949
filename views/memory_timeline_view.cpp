#include "views/memory_timeline_view.h"

#include <QVBoxLayout>
#include <algorithm>
#include <array>
#include <cmath>
#include <qcustomplot.h>

#include "views/formatting.h"
#include "views/plan_session.h"

namespace lathe::views {

namespace {

constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

// One colour per category, in analysis::MemoryCategory order.
const std::array<QColor, analysis::kMemoryCategoryCount> kCategoryColors{
    QColor(0x4e, 0x79, 0xa7), QColor(0x9c, 0x75, 0x5f), QColor(0xf2, 0x8e, 0x2b), QColor(0xe1, 0x57, 0x59),
    QColor(0xba, 0xb0, 0xac), QColor(0x59, 0xa1, 0x4f), QColor(0xed, 0xc9, 0x48), QColor(0xb0, 0x7a, 0xa1),
};

}  // namespace

MemoryTimelineView::MemoryTimelineView(PlanSession* session, QWidget* parent)
    : QWidget(parent), session_(session), plot_(new QCustomPlot(this)) {
  setObjectName(QStringLiteral("memoryTimeline"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(plot_);
  plot_->xAxis->setLabel(tr("Execution"));
  plot_->yAxis->setLabel(tr("Live memory (GiB)"));
  plot_->legend->setVisible(true);
  plot_->legend->setBrush(QColor(255, 255, 255, 220));
  // Two compact rows: the dock is short, and a column of eight entries would hide the plot.
  plot_->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  plot_->legend->setWrap(4);
  plot_->legend->setRowSpacing(0);
  plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
  plot_->setMinimumHeight(200);
  connect(session_, &PlanSession::currentStepChanged, this, &MemoryTimelineView::showCurrentStep);
  connect(plot_, &QCustomPlot::mousePress, this, &MemoryTimelineView::onPlotClicked);
  showCurrentStep();
}

void MemoryTimelineView::showCurrentStep() {
  plot_->clearGraphs();
  plot_->clearItems();
  const passes::PlannedStep* planned = session_->currentPlanned();
  if (!planned || planned->timeline.live.empty()) {
    plot_->replot();
    return;
  }
  const analysis::MemoryTimeline& timeline = planned->timeline;
  const int steps = static_cast<int>(timeline.live.size());
  QVector<double> x(steps);
  for (int i = 0; i < steps; ++i) x[i] = i;
  std::vector<double> cumulative(static_cast<size_t>(steps), 0.0);
  QCPGraph* below = nullptr;
  for (size_t category = 0; category < analysis::kMemoryCategoryCount; ++category) {
    const bool present = std::any_of(timeline.live.begin(), timeline.live.end(),
                                     [&](const auto& live) { return live[category] > 0; });
    if (!present) continue;  // an empty band only clutters the legend
    QVector<double> y(steps);
    for (int i = 0; i < steps; ++i) {
      cumulative[static_cast<size_t>(i)] += static_cast<double>(timeline.live[static_cast<size_t>(i)][category]);
      y[i] = cumulative[static_cast<size_t>(i)] / kBytesPerGiB;
    }
    QCPGraph* graph = plot_->addGraph();
    graph->setName(toQString(analysis::memoryCategoryName(static_cast<analysis::MemoryCategory>(category))));
    const QColor color = kCategoryColors[category];
    graph->setPen(QPen(color.darker(130)));
    QColor fill = color;
    fill.setAlpha(200);
    graph->setBrush(fill);
    // Each band fills down to the one below it; the first down to zero.
    if (below) graph->setChannelFillGraph(below);
    graph->setLineStyle(QCPGraph::lsStepLeft);
    graph->setData(x, y, true);
    below = graph;
  }

  const double peakGiB = static_cast<double>(timeline.peakBytes) / kBytesPerGiB;
  const double top = peakGiB * 1.2 > 0 ? peakGiB * 1.2 : 1.0;
  const auto& schedule = planned->schedule;
  const QPen peakPen(QColor(0xc0, 0x20, 0x20), 1.5, Qt::DashLine);
  auto* peakLine = new QCPItemStraightLine(plot_);
  peakLine->setPen(peakPen);
  peakLine->point1->setCoords(timeline.peakStep, 0);
  peakLine->point2->setCoords(timeline.peakStep, 1);
  auto* peakLabel = new QCPItemText(plot_);
  const QString peakNode = timeline.peakStep < schedule.nodes.size()
                               ? toQString(session_->planRun()->graph->name(schedule.nodes[timeline.peakStep]))
                               : QString();
  peakLabel->setText(
      tr("peak %1 GiB (%2) at %3").arg(peakGiB, 0, 'g', 3).arg(formatBytes(timeline.peakBytes), peakNode));
  peakLabel->setColor(peakPen.color());
  peakLabel->position->setCoords(timeline.peakStep, top);
  // Keep the label inside the plot: to the left of the line when the peak is in the right half.
  const bool rightHalf = timeline.peakStep * 2 > static_cast<uint32_t>(steps);
  peakLabel->setPositionAlignment(Qt::AlignTop | (rightHalf ? Qt::AlignRight : Qt::AlignLeft));
  peakLabel->setPadding(QMargins(4, 2, 4, 2));

  if (schedule.backwardStart > 0 && schedule.backwardStart < schedule.nodes.size()) {
    const QPen phasePen(Qt::black, 1, Qt::DotLine);
    auto* backwardLine = new QCPItemStraightLine(plot_);
    backwardLine->setPen(phasePen);
    backwardLine->point1->setCoords(static_cast<double>(schedule.backwardStart), 0);
    backwardLine->point2->setCoords(static_cast<double>(schedule.backwardStart), 1);
    auto* forwardLabel = new QCPItemText(plot_);
    forwardLabel->setText(tr("← forward"));
    // One line below the peak label, so the two never overlap.
    forwardLabel->setPositionAlignment(Qt::AlignTop | Qt::AlignRight);
    forwardLabel->position->setCoords(static_cast<double>(schedule.backwardStart), top);
    forwardLabel->setPadding(QMargins(4, 20, 4, 2));
    auto* backwardLabel = new QCPItemText(plot_);
    backwardLabel->setText(tr("backward →"));
    backwardLabel->setPositionAlignment(Qt::AlignTop | Qt::AlignLeft);
    backwardLabel->position->setCoords(static_cast<double>(schedule.backwardStart), top);
    backwardLabel->setPadding(QMargins(4, 20, 4, 2));
  }

  plot_->xAxis->setRange(0, std::max(1, steps - 1));
  plot_->yAxis->setRange(0, top);
  plot_->replot();
}

double MemoryTimelineView::plottedPeakBytes() const {
  if (plot_->graphCount() == 0) return 0;
  // The last band is stacked on all the others, so its top is the total.
  bool found = false;
  const QCPRange range = plot_->graph(plot_->graphCount() - 1)->getValueRange(found);
  return found ? range.upper * kBytesPerGiB : 0;
}

void MemoryTimelineView::onPlotClicked(QMouseEvent* event) {
  const passes::PlannedStep* planned = session_->currentPlanned();
  if (!planned || planned->schedule.nodes.empty()) return;
  const double coord = plot_->xAxis->pixelToCoord(event->position().x());
  const auto last = static_cast<double>(planned->schedule.nodes.size() - 1);
  const auto index = static_cast<size_t>(std::clamp(std::round(coord), 0.0, last));
  emit nodeClicked(planned->schedule.nodes[index]);
}

}  // namespace lathe::views

#include "views/pareto_view.h"

#include <qcustomplot.h>

#include <QVBoxLayout>
#include <cmath>
#include <limits>
#include <optional>

#include "passes/recompute.h"
#include "views/formatting.h"
#include "views/plan_session.h"

namespace lathe::views {

namespace {

constexpr double kMs = 1e3;
// Clicks farther than this from every point pick none.
constexpr double kPickRadiusPixels = 14;

// Recompute time is never negative: the axis keeps room below zero for the no-recompute point's
// marker, and labels no tick there.
class NonNegativeTicker : public QCPAxisTicker {
 protected:
  QVector<double> createTickVector(double tickStep, const QCPRange& range) override {
    QVector<double> ticks = QCPAxisTicker::createTickVector(tickStep, range);
    ticks.removeIf([](double tick) { return tick < 0; });
    return ticks;
  }
};

}  // namespace

ParetoView::ParetoView(PlanSession* session, QWidget* parent)
    : QWidget(parent), session_(session), plot_(new QCustomPlot(this)), title_(new QCPTextElement(plot_)) {
  setObjectName(QStringLiteral("paretoView"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(plot_);
  plot_->plotLayout()->insertRow(0);
  plot_->plotLayout()->addElement(0, 0, title_);
  plot_->yAxis->setLabel(tr("Recompute time (ms)"));
  plot_->yAxis->setTicker(QSharedPointer<NonNegativeTicker>::create());
  // One row under the title: inside the axes the legend would hide frontier points or the plan's.
  plot_->axisRect()->insetLayout()->take(plot_->legend);
  plot_->plotLayout()->insertRow(1);
  plot_->plotLayout()->addElement(1, 0, plot_->legend);
  plot_->plotLayout()->setRowStretchFactor(1, 0.001);
  plot_->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  plot_->legend->setBorderPen(Qt::NoPen);
  plot_->legend->setColumnSpacing(12);
  plot_->setMinimumHeight(180);
  plot_->setToolTip(
      tr("Each point is a saved set no other beats on both peak and recompute time. "
         "Click one to plan with its peak as the budget."));
  connect(session_, &PlanSession::frontierStarted, this, &ParetoView::showFrontier);
  connect(session_, &PlanSession::frontierReady, this, &ParetoView::showFrontier);
  connect(session_, &PlanSession::currentStepChanged, this, &ParetoView::showFrontier);
  connect(plot_, &QCustomPlot::mousePress, this, &ParetoView::onPlotClicked);
  showFrontier();
}

void ParetoView::showFrontier() {
  plot_->clearGraphs();
  plot_->legend->setVisible(false);  // an empty legend is a stray box
  marked_ = false;
  const auto& frontier = session_->frontier();
  if (!frontier || frontier->points.empty()) {
    if (!session_->hasGraph()) {
      title_->setText(tr("No graph selected."));
    } else if (!session_->jointGraph()) {
      title_->setText(tr("The recompute frontier needs a joint (training) graph."));
    } else if (session_->frontierBusy()) {
      title_->setText(tr("Computing the recompute frontier…"));
    } else {
      title_->setText(tr("The recompute frontier is computed when the budget panel or this view needs it."));
    }
    plot_->replot();
    return;
  }
  plot_->legend->setVisible(true);
  QCPGraph* points = plot_->addGraph();
  points->setName(tr("frontier (budget policy)"));
  points->setLineStyle(QCPGraph::lsStepRight);
  points->setPen(QPen(QColor(0x4e, 0x79, 0xa7), 1.2));
  points->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QColor(0x4e, 0x79, 0xa7), Qt::white, 6));
  QVector<double> x, y;
  unit_ = byteAxisUnit(static_cast<double>(frontier->noRecomputePeak()));
  plot_->xAxis->setLabel(tr("Peak memory of the step (%1)").arg(unit_.name));
  for (const passes::FrontierPoint& p : frontier->points) {
    x.push_back(static_cast<double>(p.peakBytes) / unit_.bytes);
    y.push_back(p.recomputeSeconds * kMs);
  }
  points->setData(x, y, true);

  const auto& run = session_->planRun();
  const passes::PipelineRecord* record = run ? run->recordOf("recompute") : nullptr;
  if (record) {
    const std::optional<double> peakStat = record->result.stat(passes::RecomputePass::kPeakBytes);
    const std::optional<double> secondsStat = record->result.stat(passes::RecomputePass::kRecomputeSeconds);
    if (peakStat && secondsStat) {
      const double peak = *peakStat, seconds = *secondsStat;
      QCPGraph* current = plot_->addGraph();
      current->setName(tr("this plan: recompute(%1)").arg(toQString(record->step.options.text(passes::RecomputePass::kPolicy))));
      current->setLineStyle(QCPGraph::lsNone);
      current->setScatterStyle(
          QCPScatterStyle(QCPScatterStyle::ssDiamond, QPen(QColor(0xc0, 0x20, 0x20), 2), QColor(0xe1, 0x57, 0x59), 13));
      current->setData({peak / unit_.bytes}, {seconds * kMs});
      marked_ = true;
      markedPeak_ = static_cast<uint64_t>(peak);
      markedSeconds_ = seconds;
    }
  }
  title_->setText(
      tr("Recompute frontier on %1\n%n point(s), peaks %2 to %3", nullptr, static_cast<int>(frontier->points.size()))
          .arg(run ? run->hardware : session_->hardware(), formatBytes(frontier->minimumPeak()),
               formatBytes(frontier->noRecomputePeak())));
  plot_->rescaleAxes();
  const QCPRange xr = plot_->xAxis->range(), yr = plot_->yAxis->range();
  plot_->xAxis->setRange(xr.lower - xr.size() * 0.06 - 0.01, xr.upper + xr.size() * 0.06 + 0.01);
  // Room around the extreme points, so that the plan's marker is never cut in half by an axis: a
  // share of the points' own spread (a fixed margin would dwarf a frontier of microseconds).
  const double spread = yr.size() > 0 ? yr.size() : std::max(std::abs(yr.upper), 0.01);
  plot_->yAxis->setRange(std::min(0.0, yr.lower) - spread * 0.08, yr.upper + spread * 0.12);
  plot_->replot();
}

int ParetoView::pointCount() const {
  const auto& frontier = session_->frontier();
  return frontier ? static_cast<int>(frontier->points.size()) : 0;
}

QPointF ParetoView::pixelOfPoint(int index) const {
  const passes::FrontierPoint& p = session_->frontier()->points.at(static_cast<size_t>(index));
  return {plot_->xAxis->coordToPixel(static_cast<double>(p.peakBytes) / unit_.bytes),
          plot_->yAxis->coordToPixel(p.recomputeSeconds * kMs)};
}

bool ParetoView::currentPoint(uint64_t& peakBytes, double& recomputeSeconds) const {
  peakBytes = markedPeak_;
  recomputeSeconds = markedSeconds_;
  return marked_;
}

void ParetoView::onPlotClicked(QMouseEvent* event) {
  const int count = pointCount();
  int nearest = -1;
  double best = kPickRadiusPixels;
  for (int i = 0; i < count; ++i) {
    const double distance = QLineF(pixelOfPoint(i), event->position()).length();
    if (distance <= best) {
      best = distance;
      nearest = i;
    }
  }
  if (nearest >= 0) emit budgetPicked(session_->frontier()->points[static_cast<size_t>(nearest)].peakBytes);
}

}  // namespace lathe::views

#include "views/gantt_view.h"

#include <qcustomplot.h>

#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <memory>

#include "views/formatting.h"
#include "views/plan_session.h"

namespace lathe::views {

namespace {

using analysis::Stream;

constexpr double kBarHalfHeight = 0.34;
constexpr double kMs = 1e3;

QColor barColor(Stream stream, int32_t shade) {
  switch (stream) {
    case Stream::Compute: return shade == 0 ? QColor(0x4e, 0x79, 0xa7) : QColor(0x7d, 0xa5, 0xcf);
    case Stream::HostToDevice: return shade == 0 ? QColor(0xe8, 0x83, 0x1f) : QColor(0xf5, 0xb0, 0x64);
    case Stream::DeviceToHost: return shade == 0 ? QColor(0x8e, 0x5a, 0xa8) : QColor(0xb6, 0x8f, 0xcb);
  }
  return Qt::gray;
}

const QColor kStallColor(0xd6, 0x27, 0x28);

}  // namespace

// The three rows as one plottable: thousands of kernel bars are drawn in one pass, culled to the
// visible range, instead of one item each.
class GanttRows : public QCPAbstractPlottable {
 public:
  GanttRows(QCPAxis* keyAxis, QCPAxis* valueAxis, std::shared_ptr<const PlanRun> run, const StepGantt* gantt)
      : QCPAbstractPlottable(keyAxis, valueAxis), run_(std::move(run)), gantt_(gantt) {
    setSelectable(QCP::stNone);
  }

  [[nodiscard]] const StepGantt& gantt() const { return *gantt_; }

  double selectTest(const QPointF&, bool, QVariant*) const override { return -1; }
  QCPRange getKeyRange(bool& foundRange, QCP::SignDomain) const override {
    foundRange = true;
    return {gantt_->begin * kMs, std::max(gantt_->stepSeconds, gantt_->begin + 1e-9) * kMs};
  }
  QCPRange getValueRange(bool& foundRange, QCP::SignDomain, const QCPRange&) const override {
    foundRange = true;
    return {-0.5, 2.5};
  }

  // The bar (or stall) under a pixel: index into bars, or into stalls with `stall` set.
  [[nodiscard]] int hit(const QPointF& pixel, bool& stall) const {
    const double key = mKeyAxis->pixelToCoord(pixel.x()) / kMs;
    const double value = mValueAxis->pixelToCoord(pixel.y());
    // A bar narrower than a few pixels is hit from nearby.
    const double slack = std::abs(mKeyAxis->pixelToCoord(pixel.x() + 3) - mKeyAxis->pixelToCoord(pixel.x())) / kMs;
    stall = false;
    const auto& bars = gantt_->bars;
    for (size_t i = 0; i < bars.size(); ++i) {
      const double row = GanttView::rowOf(bars[i].stream);
      if (std::abs(value - row) <= kBarHalfHeight && key >= bars[i].start - slack && key <= bars[i].end + slack) {
        return static_cast<int>(i);
      }
    }
    const double computeRow = GanttView::rowOf(Stream::Compute);
    for (size_t i = 0; i < gantt_->stalls.size(); ++i) {
      const GanttStall& s = gantt_->stalls[i];
      if (std::abs(value - computeRow) <= kBarHalfHeight && key >= s.start - slack && key <= s.end + slack) {
        stall = true;
        return static_cast<int>(i);
      }
    }
    return -1;
  }

 protected:
  void draw(QCPPainter* painter) override {
    const QRect clip = clipRect();
    auto rectOf = [&](double start, double end, double row) {
      QRectF rect(QPointF(mKeyAxis->coordToPixel(start * kMs), mValueAxis->coordToPixel(row + kBarHalfHeight)),
                  QPointF(mKeyAxis->coordToPixel(end * kMs), mValueAxis->coordToPixel(row - kBarHalfHeight)));
      rect = rect.normalized();
      if (rect.width() < 1) rect.setWidth(1);
      return rect;
    };
    painter->setPen(Qt::NoPen);
    for (const GanttStall& stall : gantt_->stalls) {
      const QRectF rect = rectOf(stall.start, stall.end, GanttView::rowOf(Stream::Compute));
      QColor fill = kStallColor;
      fill.setAlpha(70);
      painter->fillRect(rect, fill);
      painter->fillRect(rect, QBrush(kStallColor, Qt::BDiagPattern));
    }
    for (const GanttBar& bar : gantt_->bars) {
      const QRectF rect = rectOf(bar.start, bar.end, GanttView::rowOf(bar.stream));
      if (rect.right() < clip.left() || rect.left() > clip.right()) continue;
      const QColor color = barColor(bar.stream, bar.shade);
      painter->fillRect(rect, color);
      // Outlines and names only where a bar is wide enough to carry them.
      if (rect.width() >= 4) {
        painter->setPen(QPen(color.darker(140), 1));
        painter->drawRect(rect);
        painter->setPen(Qt::NoPen);
      }
      const QString label = QString::fromStdString(bar.label);
      if (rect.width() > painter->fontMetrics().horizontalAdvance(label) + 8) {
        painter->setPen(Qt::white);
        painter->drawText(rect, Qt::AlignCenter, label);
        painter->setPen(Qt::NoPen);
      }
    }
  }
  void drawLegendIcon(QCPPainter* painter, const QRectF& rect) const override {
    painter->fillRect(rect, barColor(Stream::Compute, 0));
  }

 private:
  std::shared_ptr<const PlanRun> run_;  // keeps gantt_ alive
  const StepGantt* gantt_;
};

GanttView::GanttView(PlanSession* session, QWidget* parent)
    : QWidget(parent), session_(session), plot_(new QCustomPlot(this)), title_(new QCPTextElement(plot_)) {
  setObjectName(QStringLiteral("ganttView"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(plot_);
  plot_->plotLayout()->insertRow(0);
  plot_->plotLayout()->addElement(0, 0, title_);
  title_->setTextFlags(Qt::AlignLeft | Qt::AlignVCenter);
  plot_->xAxis->setLabel(tr("Time in the step (ms)"));
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  ticker->addTick(rowOf(Stream::Compute), tr("compute"));
  ticker->addTick(rowOf(Stream::HostToDevice), tr("H2D copy"));
  ticker->addTick(rowOf(Stream::DeviceToHost), tr("D2H copy"));
  plot_->yAxis->setTicker(ticker);
  plot_->yAxis->setRange(-0.6, 2.6);
  plot_->yAxis->grid()->setVisible(false);
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot_->axisRect()->setRangeDrag(Qt::Horizontal);
  plot_->axisRect()->setRangeZoom(Qt::Horizontal);
  plot_->setMouseTracking(true);
  plot_->setMinimumHeight(160);
  connect(session_, &PlanSession::currentStepChanged, this, &GanttView::showCurrentStep);
  connect(plot_, &QCustomPlot::mousePress, this, &GanttView::onPlotClicked);
  connect(plot_, &QCustomPlot::mouseMove, this, &GanttView::onMouseMove);
  showCurrentStep();
}

double GanttView::rowOf(analysis::Stream stream) {
  switch (stream) {
    case Stream::Compute: return 2;
    case Stream::HostToDevice: return 1;
    case Stream::DeviceToHost: return 0;
  }
  return 0;
}

void GanttView::showCurrentStep() {
  plot_->clearPlottables();
  rows_ = nullptr;
  const StepGantt* gantt = session_->currentGantt();
  if (!gantt || gantt->bars.empty()) {
    title_->setText(session_->hasGraph() ? tr("Planning…") : tr("No plan yet: select a graph."));
    plot_->replot();
    return;
  }
  rows_ = new GanttRows(plot_->xAxis, plot_->yAxis, session_->planRun(), gantt);
  double computeSeconds = 0, stallSeconds = 0;
  uint64_t copied = 0;
  for (const GanttBar& bar : gantt->bars) {
    if (bar.stream == Stream::Compute) computeSeconds += bar.end - bar.start;
    copied += bar.bytes;
  }
  for (const GanttStall& stall : gantt->stalls) stallSeconds += stall.end - stall.start;
  QString title =
      tr("Step %1 on %2 · compute %3")
          .arg(formatSeconds(gantt->stepSeconds), session_->planRun()->hardware, formatSeconds(computeSeconds));
  title += gantt->stalls.empty()
               ? tr(" · no stalls")
               : tr(" · %n stall(s) waiting for weights, %1 in all", nullptr, static_cast<int>(gantt->stalls.size()))
                     .arg(formatSeconds(stallSeconds));
  if (copied > 0) title += tr(" · weights copied %1").arg(formatBytes(copied));
  title += gantt->segments ? tr(" · bars: layer segments and weight copies")
                           : tr(" · bars: kernels (every weight resident, nothing to copy)");
  title_->setText(title);
  plot_->xAxis->setRange(gantt->begin * kMs, std::max(gantt->stepSeconds, 1e-9) * kMs);
  plot_->replot();
}

QString GanttView::title() const {
  return title_->text();
}

int GanttView::barCount(analysis::Stream stream) const {
  if (!rows_) return 0;
  const auto& bars = rows_->gantt().bars;
  return static_cast<int>(
      std::count_if(bars.begin(), bars.end(), [&](const GanttBar& bar) { return bar.stream == stream; }));
}

int GanttView::stallCount() const {
  return rows_ ? static_cast<int>(rows_->gantt().stalls.size()) : 0;
}

QString GanttView::toolTipAt(const QPointF& pixel) const {
  if (!rows_) return {};
  bool stall = false;
  const int index = rows_->hit(pixel, stall);
  if (index < 0) return {};
  const StepGantt& gantt = rows_->gantt();
  auto span = [](double start, double end) {
    return tr("%1 → %2 ms (%3)").arg(start * kMs, 0, 'f', 3).arg(end * kMs, 0, 'f', 3).arg(formatSeconds(end - start));
  };
  if (stall) {
    const GanttStall& s = gantt.stalls[static_cast<size_t>(index)];
    return tr("Stall: compute waits for weights before %1\n%2")
        .arg(QString::fromStdString(s.before), span(s.start, s.end));
  }
  const GanttBar& bar = gantt.bars[static_cast<size_t>(index)];
  const QString name = QString::fromStdString(bar.label);
  switch (bar.stream) {
    case Stream::Compute:
      if (gantt.segments) {
        return tr("Compute: %1\n%2\nexecutions %3–%4 (click to select the node under the cursor)")
            .arg(name, span(bar.start, bar.end))
            .arg(bar.firstExecution)
            .arg(bar.lastExecution);
      }
      return tr("Kernel: %1 (execution %2)\n%3").arg(name).arg(bar.firstExecution).arg(span(bar.start, bar.end));
    case Stream::HostToDevice:
      return tr("Host to device: %1, %2\n%3%4")
          .arg(name, formatBytes(bar.bytes), span(bar.start, bar.end),
               bar.start < 0 ? tr("\nstarts in the previous step's tail") : QString());
    case Stream::DeviceToHost:
      return tr("Device to host: %1, %2\n%3").arg(name, formatBytes(bar.bytes), span(bar.start, bar.end));
  }
  return {};
}

void GanttView::onMouseMove(QMouseEvent* event) {
  const QString text = toolTipAt(event->position());
  if (text.isEmpty()) {
    QToolTip::hideText();
  } else {
    QToolTip::showText(event->globalPosition().toPoint(), text, plot_);
  }
}

void GanttView::onPlotClicked(QMouseEvent* event) {
  const StepGantt* gantt = session_->currentGantt();
  const passes::PlannedStep* planned = session_->currentPlanned();
  if (!gantt || !planned || planned->schedule.nodes.empty()) return;
  const double row = plot_->yAxis->pixelToCoord(event->position().y());
  if (std::abs(row - rowOf(Stream::Compute)) > 0.5) return;
  const size_t execution = gantt->executionAt(plot_->xAxis->pixelToCoord(event->position().x()) / kMs);
  if (execution < planned->schedule.nodes.size()) emit nodeClicked(planned->schedule.nodes[execution]);
}

}  // namespace lathe::views

#include "views/gantt_view.h"

#include <qcustomplot.h>

#include <QCoreApplication>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <memory>

#include "views/formatting.h"
#include "views/plan_session.h"
#include "views/logic/step_gantt.h"

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

// "start → end ms (duration)", as both Gantt views' tooltips say it.
QString spanText(double start, double end) {
  return QCoreApplication::translate("lathe::views::GanttView", "%1 → %2 ms (%3)")
      .arg(start * kMs, 0, 'f', 3)
      .arg(end * kMs, 0, 'f', 3)
      .arg(formatSeconds(end - start));
}

// A Gantt plot under its title line: time in ms across, rows down, dragged and zoomed in time only,
// hoverable.
void setUpGanttPlot(QWidget* owner, QCustomPlot* plot, QCPTextElement* title, int minimumHeight) {
  auto* layout = new QVBoxLayout(owner);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(plot);
  plot->plotLayout()->insertRow(0);
  plot->plotLayout()->addElement(0, 0, title);
  title->setTextFlags(Qt::AlignLeft | Qt::AlignVCenter);
  plot->xAxis->setLabel(QCoreApplication::translate("lathe::views::GanttView", "Time in the step (ms)"));
  plot->yAxis->grid()->setVisible(false);
  plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot->axisRect()->setRangeDrag(Qt::Horizontal);
  plot->axisRect()->setRangeZoom(Qt::Horizontal);
  plot->setMouseTracking(true);
  plot->setMinimumHeight(minimumHeight);
}

void showToolTip(QCustomPlot* plot, QMouseEvent* event, const QString& text) {
  if (text.isEmpty()) {
    QToolTip::hideText();
  } else {
    QToolTip::showText(event->globalPosition().toPoint(), text, plot);
  }
}

}  // namespace

// The three rows of a step as one plottable: thousands of kernel bars are drawn in one pass, culled
// to the visible range, instead of one item each. `rowBase` lifts the rows (GanttView::rowOf) so two
// steps can share a plot.
class GanttRows : public QCPAbstractPlottable {
 public:
  GanttRows(QCPAxis* keyAxis, QCPAxis* valueAxis, std::shared_ptr<const void> owner, const StepGantt* gantt,
            double rowBase = 0)
      : QCPAbstractPlottable(keyAxis, valueAxis), owner_(std::move(owner)), gantt_(gantt), rowBase_(rowBase) {
    setSelectable(QCP::stNone);
  }

  [[nodiscard]] double rowOf(Stream stream) const { return rowBase_ + GanttView::rowOf(stream); }

  [[nodiscard]] const StepGantt& gantt() const { return *gantt_; }

  double selectTest(const QPointF&, bool, QVariant*) const override { return -1; }
  QCPRange getKeyRange(bool& foundRange, QCP::SignDomain) const override {
    foundRange = true;
    return {gantt_->begin * kMs, std::max(gantt_->stepSeconds, gantt_->begin + 1e-9) * kMs};
  }
  QCPRange getValueRange(bool& foundRange, QCP::SignDomain, const QCPRange&) const override {
    foundRange = true;
    return {rowBase_ - 0.5, rowBase_ + 2.5};
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
      const double row = rowOf(bars[i].stream);
      if (std::abs(value - row) <= kBarHalfHeight && key >= bars[i].start - slack && key <= bars[i].end + slack) {
        return static_cast<int>(i);
      }
    }
    const double computeRow = rowOf(Stream::Compute);
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
      const QRectF rect = rectOf(stall.start, stall.end, rowOf(Stream::Compute));
      QColor fill = kStallColor;
      fill.setAlpha(70);
      painter->fillRect(rect, fill);
      painter->fillRect(rect, QBrush(kStallColor, Qt::BDiagPattern));
    }
    for (const GanttBar& bar : gantt_->bars) {
      const QRectF rect = rectOf(bar.start, bar.end, rowOf(bar.stream));
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
  std::shared_ptr<const void> owner_;  // keeps gantt_ alive
  const StepGantt* gantt_;
  double rowBase_;
};

GanttView::GanttView(PlanSession* session, QWidget* parent)
    : QWidget(parent), session_(session), plot_(new QCustomPlot(this)), title_(new QCPTextElement(plot_)) {
  setObjectName(QStringLiteral("ganttView"));
  setUpGanttPlot(this, plot_, title_, 160);
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  ticker->addTick(rowOf(Stream::Compute), tr("compute"));
  ticker->addTick(rowOf(Stream::HostToDevice), tr("H2D copy"));
  ticker->addTick(rowOf(Stream::DeviceToHost), tr("D2H copy"));
  plot_->yAxis->setTicker(ticker);
  plot_->yAxis->setRange(-0.6, 2.6);
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
  if (const auto& profile = session_->planRun()->profile)
    title += tr(" · node times measured by %1").arg(toQString(profile->calibration.source));
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
  return rows_ ? static_cast<int>(rows_->gantt().barCount(stream)) : 0;
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
  if (stall) {
    const GanttStall& s = gantt.stalls[static_cast<size_t>(index)];
    return tr("Stall: compute waits for weights before %1\n%2")
        .arg(QString::fromStdString(s.before), spanText(s.start, s.end));
  }
  const GanttBar& bar = gantt.bars[static_cast<size_t>(index)];
  const QString name = QString::fromStdString(bar.label);
  switch (bar.stream) {
    case Stream::Compute:
      if (gantt.segments) {
        return tr("Compute: %1\n%2\nexecutions %3–%4 (click to select the node under the cursor)")
            .arg(name, spanText(bar.start, bar.end))
            .arg(bar.firstExecution)
            .arg(bar.lastExecution);
      }
      return tr("Kernel: %1 (execution %2)\n%3").arg(name).arg(bar.firstExecution).arg(spanText(bar.start, bar.end));
    case Stream::HostToDevice:
      return tr("Host to device: %1, %2\n%3%4")
          .arg(name, formatBytes(bar.bytes), spanText(bar.start, bar.end),
               bar.start < 0 ? tr("\nstarts in the previous step's tail") : QString());
    case Stream::DeviceToHost:
      return tr("Device to host: %1, %2\n%3").arg(name, formatBytes(bar.bytes), spanText(bar.start, bar.end));
  }
  return {};
}

void GanttView::onMouseMove(QMouseEvent* event) {
  showToolTip(plot_, event, toolTipAt(event->position()));
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

namespace lathe::views {

namespace {

// The two steps of a run, owned together so the rows can hold them.
struct RunGantts {
  StepGantt simulated;
  StepGantt measured;
};

}  // namespace

OffloadRunView::OffloadRunView(QWidget* parent)
    : QWidget(parent), plot_(new QCustomPlot(this)), title_(new QCPTextElement(plot_)) {
  setObjectName(QStringLiteral("offloadRunView"));
  setUpGanttPlot(this, plot_, title_, 200);
  connect(plot_, &QCustomPlot::mouseMove, this, &OffloadRunView::onMouseMove);
  setProfile(nullptr);
}

void OffloadRunView::setProfile(std::shared_ptr<const plan::MeasuredProfile> profile) {
  plot_->clearPlottables();
  simulated_ = measured_ = nullptr;
  profile_ = std::move(profile);
  if (!profile_ || !profile_->weightOffload) {
    title_->setText(tr("No weight-offload run: open a run folder of lathe.compile(..., offload=...)."));
    plot_->replot();
    return;
  }
  const plan::WeightOffloadRun& run = *profile_->weightOffload;
  const std::string backward = tr(" backward").toStdString();
  auto gantts = std::make_shared<RunGantts>(
      RunGantts{offloadRunGantt(run, run.simulated, backward), offloadRunGantt(run, run.measured, backward)});
  // Rows per step: compute and H2D, and D2H where gradients were copied out; measured above simulated.
  const bool d2h = gantts->measured.uses(Stream::DeviceToHost) || gantts->simulated.uses(Stream::DeviceToHost);
  simulatedBase_ = d2h ? 0 : -1;
  measuredBase_ = simulatedBase_ + (d2h ? 3 : 2);
  const double simulatedBase = simulatedBase_, measuredBase = measuredBase_;
  simulated_ = new GanttRows(plot_->xAxis, plot_->yAxis, gantts, &gantts->simulated, simulatedBase);
  measured_ = new GanttRows(plot_->xAxis, plot_->yAxis, gantts, &gantts->measured, measuredBase);
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  for (const auto& [base, which] : {std::pair{measuredBase, tr("measured")}, std::pair{simulatedBase, tr("simulated")}}) {
    ticker->addTick(base + GanttView::rowOf(Stream::Compute), tr("%1 compute").arg(which));
    ticker->addTick(base + GanttView::rowOf(Stream::HostToDevice), tr("%1 H2D").arg(which));
  }
  if (d2h) {  // gradients copied out: measured only, the planner does not model them
    ticker->addTick(measuredBase + GanttView::rowOf(Stream::DeviceToHost), tr("measured D2H"));
    ticker->addTick(simulatedBase + GanttView::rowOf(Stream::DeviceToHost), tr("simulated D2H (not modelled)"));
  }
  plot_->yAxis->setTicker(ticker);
  plot_->yAxis->setRange(simulatedBase + (d2h ? -0.6 : 0.4), measuredBase + 2.6);
  const double begin = std::min(gantts->simulated.begin, gantts->measured.begin);
  const double end = std::max(gantts->simulated.stepSeconds, gantts->measured.stepSeconds);
  plot_->xAxis->setRange(begin * kMs, std::max(end, 1e-9) * kMs);

  const double measuredStep = run.measured.stepSeconds, simulatedStep = run.simulated.stepSeconds;
  QString title = tr("Weight offload, one %1 step under %2 on %3: measured %4, simulated %5")
                      .arg(run.kind == "training" ? tr("training") : tr("inference"), QString::fromStdString(run.policy),
                           QString::fromStdString(profile_->device), formatSeconds(measuredStep),
                           formatSeconds(simulatedStep));
  if (simulatedStep > 0) title += tr(" (measured/simulated %1)").arg(measuredStep / simulatedStep, 0, 'f', 3);
  title += tr("\ncompute idle %1 measured, %2 simulated · %3 of %4 units resident · H2D %5/s")
               .arg(formatSeconds(run.measured.idleSeconds()), formatSeconds(run.simulated.idleSeconds()))
               .arg(run.resident.size())
               .arg(run.units.size())
               .arg(formatBytes(static_cast<uint64_t>(run.h2dBandwidth)));
  title_->setText(title);
  plot_->replot();
}

QString OffloadRunView::title() const {
  return title_->text();
}

int OffloadRunView::barCount(bool measured, analysis::Stream stream) const {
  const GanttRows* rows = measured ? measured_ : simulated_;
  return rows ? static_cast<int>(rows->gantt().barCount(stream)) : 0;
}

double OffloadRunView::rowOf(bool measured, analysis::Stream stream) const {
  return (measured ? measuredBase_ : simulatedBase_) + GanttView::rowOf(stream);
}

int OffloadRunView::stallCount(bool measured) const {
  const GanttRows* rows = measured ? measured_ : simulated_;
  return rows ? static_cast<int>(rows->gantt().stalls.size()) : 0;
}

QString OffloadRunView::toolTipAt(const QPointF& pixel) const {
  for (const auto& [rows, which] : {std::pair{measured_, tr("Measured")}, std::pair{simulated_, tr("Simulated")}}) {
    if (!rows) continue;
    bool stall = false;
    const int index = rows->hit(pixel, stall);
    if (index < 0) continue;
    const StepGantt& gantt = rows->gantt();
    if (stall) {
      const GanttStall& s = gantt.stalls[static_cast<size_t>(index)];
      return tr("%1: compute idle before %2 (waiting for its weights, or code outside the layer units)\n%3")
          .arg(which, QString::fromStdString(s.before), spanText(s.start, s.end));
    }
    const GanttBar& bar = gantt.bars[static_cast<size_t>(index)];
    const QString name = QString::fromStdString(bar.label);
    switch (bar.stream) {
      case Stream::Compute: return tr("%1 compute: %2\n%3").arg(which, name, spanText(bar.start, bar.end));
      case Stream::HostToDevice:
        return tr("%1 weight copy: %2, %3\n%4%5")
            .arg(which, name, formatBytes(bar.bytes), spanText(bar.start, bar.end),
                 bar.start < 0 ? tr("\nstarts in the previous step") : QString());
      case Stream::DeviceToHost: return tr("%1 gradient copy: a tensor of %2\n%3").arg(which, name, spanText(bar.start, bar.end));
    }
  }
  return {};
}

void OffloadRunView::onMouseMove(QMouseEvent* event) {
  showToolTip(plot_, event, toolTipAt(event->position()));
}

}  // namespace lathe::views

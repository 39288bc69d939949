#include "views/snapshot_view.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>

#include "views/formatting.h"
#include "views/snapshot_allocations_model.h"

namespace lathe::views {

namespace {

const QColor kAllocatedColor(0x00, 0x96, 0x88);
const QColor kReservedColor(0x90, 0x90, 0x90);
const QColor kPeakColor(0xe1, 0x57, 0x59);
const QColor kCursorColor(0x30, 0x30, 0x30);

}  // namespace

SnapshotView::SnapshotView(QWidget* parent)
    : QWidget(parent),
      deviceBox_(new QComboBox(this)),
      summary_(new QLabel(this)),
      plot_(new QCustomPlot(this)),
      momentLabel_(new QLabel(this)),
      peakButton_(new QPushButton(tr("Go to the peak"), this)),
      table_(new QTableView(this)),
      proxy_(new QSortFilterProxyModel(this)),
      allocations_(new SnapshotAllocationsModel(this)),
      stack_(new QPlainTextEdit(this)) {
  setObjectName(QStringLiteral("snapshotView"));
  peakButton_->setObjectName(QStringLiteral("snapshotPeak"));
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  momentLabel_->setWordWrap(true);
  deviceBox_->setToolTip(tr("The device whose trace is shown"));

  plot_->setMinimumHeight(220);
  plot_->setMouseTracking(true);
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot_->axisRect()->setRangeDrag(Qt::Horizontal);
  plot_->axisRect()->setRangeZoom(Qt::Horizontal);
  plot_->legend->setVisible(true);
  plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
  connect(plot_, &QCustomPlot::mouseMove, this, &SnapshotView::onMouseMove);
  connect(plot_, &QCustomPlot::mousePress, this, &SnapshotView::onPlotClicked);

  proxy_->setSourceModel(allocations_);
  proxy_->setSortRole(SnapshotAllocationsModel::kSortRole);
  table_->setModel(proxy_);
  table_->setObjectName(QStringLiteral("snapshotAllocations"));
  table_->setSortingEnabled(true);
  table_->sortByColumn(SnapshotAllocationsModel::SizeColumn, Qt::DescendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &SnapshotView::showStackOfCurrentRow);

  stack_->setObjectName(QStringLiteral("snapshotStack"));
  stack_->setReadOnly(true);
  stack_->setLineWrapMode(QPlainTextEdit::NoWrap);
  stack_->setPlaceholderText(tr("Select an allocation to see where it was made (▶ marks the user's frame)."));
  stack_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));

  auto* top = new QHBoxLayout;
  top->addWidget(summary_, 1);
  top->addWidget(deviceBox_);
  auto* momentRow = new QHBoxLayout;
  momentRow->addWidget(momentLabel_, 1);
  momentRow->addWidget(peakButton_);
  auto* state = new QWidget(this);
  auto* stateLayout = new QVBoxLayout(state);
  stateLayout->setContentsMargins(0, 0, 0, 0);
  stateLayout->addLayout(momentRow);
  auto* lower = new QSplitter(Qt::Horizontal, state);
  lower->addWidget(table_);
  lower->addWidget(stack_);
  lower->setStretchFactor(0, 3);
  lower->setStretchFactor(1, 2);
  stateLayout->addWidget(lower, 1);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(plot_);
  split->addWidget(state);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addLayout(top);
  layout->addWidget(split, 1);

  connect(deviceBox_, &QComboBox::currentIndexChanged, this, &SnapshotView::showDevice);
  connect(peakButton_, &QPushButton::clicked, this, [this] {
    if (device_) showMoment(device_->peakEventIndex);
  });
  clear();
}

void SnapshotView::setSnapshot(std::shared_ptr<const io::Artifact> artifact,
                               std::shared_ptr<const analysis::SnapshotTimeline> timeline) {
  artifact_ = std::move(artifact);
  timeline_ = std::move(timeline);
  device_ = nullptr;
  const QSignalBlocker block(deviceBox_);
  deviceBox_->clear();
  if (!artifact_ || !artifact_->snapshot || !timeline_ || timeline_->devices.empty()) {
    clear();
    return;
  }
  int busiest = 0;
  for (size_t i = 0; i < timeline_->devices.size(); ++i) {
    const analysis::DeviceMemoryTimeline& d = timeline_->devices[i];
    deviceBox_->addItem(tr("cuda:%1 · %n event(s)", nullptr, static_cast<int>(d.eventCount)).arg(d.device));
    if (d.eventCount > timeline_->devices[static_cast<size_t>(busiest)].eventCount) busiest = static_cast<int>(i);
  }
  deviceBox_->setVisible(timeline_->devices.size() > 1);
  deviceBox_->setCurrentIndex(busiest);
  showDevice(busiest);
}

void SnapshotView::clear() {
  artifact_.reset();
  timeline_.reset();
  device_ = nullptr;
  moment_ = analysis::kBeforeTrace;
  cursor_ = nullptr;
  allocations_->clear();
  deviceBox_->hide();
  peakButton_->setEnabled(false);
  summary_->setText(tr("Open a CUDA memory snapshot (torch.cuda.memory._dump_snapshot) to see its memory over time."));
  momentLabel_->clear();
  stack_->clear();
  plot_->clearGraphs();
  plot_->clearItems();
  plot_->replot();
}

bool SnapshotView::hasTimes() const {
  return device_ && device_->firstTimeUs != io::kNoTime && artifact_->snapshot->hasTimes;
}

double SnapshotView::xOf(const analysis::MemoryPoint& point) const {
  if (point.eventIndex == analysis::kBeforeTrace) return 0;
  if (hasTimes() && point.timeUs != io::kNoTime) return static_cast<double>(point.timeUs - device_->firstTimeUs) * 1e-6;
  return point.eventIndex;
}

const analysis::MemoryPoint& SnapshotView::pointAt(const std::vector<analysis::MemoryPoint>& series, double x) const {
  // Points are in event order, and so in time: the last one not after x.
  const auto after = std::upper_bound(series.begin(), series.end(), x,
                                      [this](double value, const analysis::MemoryPoint& p) { return value < xOf(p); });
  return after == series.begin() ? series.front() : *(after - 1);
}

void SnapshotView::showDevice(int index) {
  if (!timeline_ || index < 0 || static_cast<size_t>(index) >= timeline_->devices.size()) return;
  device_ = &timeline_->devices[static_cast<size_t>(index)];
  const analysis::DeviceMemoryTimeline& d = *device_;
  QString text = tr("<b>%1</b> · cuda:%2 · %n trace event(s)", nullptr, static_cast<int>(d.eventCount))
                     .arg(toQString(artifact_->path.filename().string()).toHtmlEscaped())
                     .arg(d.device);
  if (hasTimes() && !d.allocated.empty()) text += tr(" over %1").arg(formatSeconds(xOf(d.allocated.back())));
  text += tr("<br>Peak allocated <b>%1</b>").arg(formatBytes(d.peakAllocatedBytes));
  if (d.peakEventIndex != analysis::kBeforeTrace) {
    text += hasTimes() ? tr(" at %1").arg(formatSeconds(static_cast<double>(d.peakTimeUs - d.firstTimeUs) * 1e-6))
                       : tr(" at event %1").arg(d.peakEventIndex);
  }
  text += tr(" (%n allocation(s) live)", nullptr, static_cast<int>(d.liveAtPeakCount));
  text += tr(" · peak reserved %1 · %2 allocated before recording, %3 at the end")
              .arg(formatBytes(d.peakReservedBytes), formatBytes(d.initialAllocatedBytes), formatBytes(d.finalAllocatedBytes));
  if (!d.ooms.empty()) text += tr(" · <b>%n out-of-memory event(s)</b>", nullptr, static_cast<int>(d.ooms.size()));
  if (d.reservedInconsistent) text += tr(" · the reserved bytes do not add up (a damaged or partial trace)");
  summary_->setText(text);
  peakButton_->setEnabled(true);
  draw();
  showMoment(d.peakEventIndex);
}

void SnapshotView::draw() {
  plot_->clearGraphs();
  plot_->clearItems();
  cursor_ = nullptr;
  const analysis::DeviceMemoryTimeline& d = *device_;
  const ByteUnit unit = byteAxisUnit(static_cast<double>(std::max(d.peakReservedBytes, d.peakAllocatedBytes)));
  const double end = d.allocated.empty() ? 1 : std::max(1e-9, xOf(d.allocated.back()));
  const auto addSeries = [&](const std::vector<analysis::MemoryPoint>& series, const QString& name, const QColor& color,
                             bool filled) {
    QVector<double> xs, ys;
    for (const analysis::MemoryPoint& p : series) {
      xs << xOf(p);
      ys << static_cast<double>(p.bytes) / unit.bytes;
    }
    if (!series.empty()) {  // held to the end of the trace
      xs << end;
      ys << ys.back();
    }
    QCPGraph* graph = plot_->addGraph();
    graph->setName(name);
    graph->setLineStyle(QCPGraph::lsStepLeft);
    graph->setPen(QPen(color, 1.6));
    if (filled) graph->setBrush(QColor(color.red(), color.green(), color.blue(), 60));
    graph->setData(xs, ys, true);
  };
  addSeries(d.reserved, tr("reserved (segments)"), kReservedColor, false);
  addSeries(d.allocated, tr("allocated"), kAllocatedColor, true);
  plot_->xAxis->setLabel(hasTimes() ? tr("Time since the first event (s)") : tr("Trace event"));
  plot_->yAxis->setLabel(tr("Memory (%1)").arg(unit.name));
  plot_->xAxis->setRange(0, end);
  plot_->yAxis->setRange(0, static_cast<double>(std::max(d.peakReservedBytes, d.peakAllocatedBytes)) / unit.bytes * 1.12);

  if (d.peakEventIndex != analysis::kBeforeTrace) {
    const double x = xOf(pointAt(d.allocated, hasTimes() ? static_cast<double>(d.peakTimeUs - d.firstTimeUs) * 1e-6
                                                          : static_cast<double>(d.peakEventIndex)));
    auto* peak = new QCPItemStraightLine(plot_);
    peak->setPen(QPen(kPeakColor, 1, Qt::DashLine));
    peak->point1->setCoords(x, 0);
    peak->point2->setCoords(x, 1);
    auto* label = new QCPItemText(plot_);
    label->setText(tr("peak %1").arg(formatBytes(d.peakAllocatedBytes)));
    label->setColor(kPeakColor);
    label->position->setCoords(x, static_cast<double>(d.peakAllocatedBytes) / unit.bytes);
    label->setPositionAlignment(Qt::AlignBottom | (x > end * 0.8 ? Qt::AlignRight : Qt::AlignLeft));
    label->setPadding(QMargins(4, 2, 4, 2));
  }
  cursor_ = new QCPItemStraightLine(plot_);
  cursor_->setPen(QPen(kCursorColor, 1));
  plot_->replot();
}

void SnapshotView::showMoment(uint32_t eventIndex) {
  if (!device_) return;
  moment_ = eventIndex;
  allocations_->setMoment(artifact_, device_, eventIndex);
  const analysis::LiveAllocations& live = allocations_->live();
  QString when;
  double x = 0;
  if (eventIndex == analysis::kBeforeTrace || device_->allocated.empty()) {
    when = tr("before the first event");
  } else {
    const std::vector<io::AllocatorEvent>& events = artifact_->snapshot->deviceTraces[static_cast<size_t>(device_->device)];
    const io::AllocatorEvent& e = events[std::min<size_t>(eventIndex, events.size() - 1)];
    x = hasTimes() && e.timeUs != io::kNoTime ? static_cast<double>(e.timeUs - device_->firstTimeUs) * 1e-6 : eventIndex;
    when = hasTimes() ? tr("at %1 (after event %2, %3)").arg(formatSeconds(x)).arg(eventIndex).arg(toQString(io::traceActionName(e.action)))
                      : tr("after event %1 (%2)").arg(eventIndex).arg(toQString(io::traceActionName(e.action)));
  }
  QString text = tr("Allocator state %1: <b>%2</b> in %n live allocation(s)", nullptr, static_cast<int>(live.liveCount))
                     .arg(when, formatBytes(live.liveBytes));
  if (live.liveCount > live.largest.size()) text += tr(", the %n largest listed", nullptr, static_cast<int>(live.largest.size()));
  if (eventIndex == device_->peakEventIndex) text += tr(" — the peak");
  momentLabel_->setText(text + tr(". Click the plot to see another moment."));
  table_->resizeColumnsToContents();
  if (cursor_) {
    cursor_->point1->setCoords(x, 0);
    cursor_->point2->setCoords(x, 1);
    plot_->replot();
  }
  if (allocations_->rowCount() > 0) {
    table_->setCurrentIndex(proxy_->index(0, 0));
  } else {
    stack_->clear();
  }
  emit momentChanged(eventIndex);
}

void SnapshotView::showStackOfCurrentRow() {
  const QModelIndex source = proxy_->mapToSource(table_->currentIndex());
  stack_->setPlainText(source.isValid() ? allocations_->stackText(source.row()) : QString());
}

QString SnapshotView::readoutAt(double x) const {
  if (!device_ || device_->allocated.empty()) return {};
  const analysis::MemoryPoint& allocated = pointAt(device_->allocated, x);
  const analysis::MemoryPoint& reserved = pointAt(device_->reserved, x);
  const QString at = hasTimes() ? formatSeconds(std::max(0.0, x)) : tr("event %1").arg(std::max(0.0, std::floor(x)));
  return tr("%1\nallocated %2\nreserved %3").arg(at, formatBytes(allocated.bytes), formatBytes(reserved.bytes));
}

void SnapshotView::onMouseMove(QMouseEvent* event) {
  const QString text = readoutAt(plot_->xAxis->pixelToCoord(event->position().x()));
  if (text.isEmpty()) {
    QToolTip::hideText();
  } else {
    QToolTip::showText(event->globalPosition().toPoint(), text, plot_);
  }
}

void SnapshotView::onPlotClicked(QMouseEvent* event) {
  if (!device_ || device_->allocated.empty() || event->button() != Qt::LeftButton) return;
  showMoment(pointAt(device_->allocated, plot_->xAxis->pixelToCoord(event->position().x())).eventIndex);
}

}  // namespace lathe::views

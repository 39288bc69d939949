#include "views/memory_timeline_view.h"

#include <qcustomplot.h>

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "analysis/snapshot_timeline.h"
#include "views/formatting.h"
#include "views/plan_session.h"

namespace lathe::views {

namespace {

// One colour per category, in analysis::MemoryCategory order.
const std::array<QColor, analysis::kMemoryCategoryCount> kCategoryColors{
    QColor(0x4e, 0x79, 0xa7), QColor(0x9c, 0x75, 0x5f), QColor(0xf2, 0x8e, 0x2b), QColor(0xe1, 0x57, 0x59),
    QColor(0xba, 0xb0, 0xac), QColor(0x59, 0xa1, 0x4f), QColor(0xed, 0xc9, 0x48), QColor(0xb0, 0x7a, 0xa1),
};

const QColor kBaselineColor(0x30, 0x30, 0x30);
const QColor kBudgetColor(0x7b, 0x1f, 0xa2);
const QColor kSnapshotColor(0x00, 0x96, 0x88);
const QColor kCapacityColor(0x20, 0x20, 0x20);

// The allocated bytes of the device with the most trace events over its iteration with the peak;
// nullopt when no device has any.
std::optional<SnapshotCurve> curveOf(const analysis::SnapshotTimeline& timeline, const QString& file) {
  const analysis::DeviceMemoryTimeline* busiest = nullptr;
  for (const analysis::DeviceMemoryTimeline& device : timeline.devices) {
    if (!busiest || device.eventCount > busiest->eventCount) busiest = &device;
  }
  if (!busiest || busiest->allocated.empty()) return std::nullopt;
  const std::vector<analysis::SnapshotIteration> iterations = analysis::snapshotIterations(*busiest);
  size_t drawn = 0;
  for (size_t i = 0; i < iterations.size(); ++i) {
    if (iterations[i].peakBytes == busiest->peakAllocatedBytes) {
      drawn = i;
      break;
    }
  }
  const analysis::SnapshotIteration& it = iterations.at(drawn);
  SnapshotCurve curve;
  curve.file = file;
  curve.device = busiest->device;
  curve.events = busiest->eventCount;
  curve.iteration = static_cast<int>(drawn) + 1;
  curve.iterations = static_cast<int>(iterations.size());
  curve.firstEvent = it.firstEvent == analysis::kBeforeTrace ? 0 : it.firstEvent;
  curve.lastEvent = it.lastEvent;
  curve.peakBytes = it.peakBytes;
  const double first = static_cast<double>(curve.firstEvent);
  const double span = std::max(1.0, static_cast<double>(it.lastEvent) - first);
  // The level the iteration starts from: what the last point before it left.
  double startBytes = static_cast<double>(busiest->allocated.front().bytes);
  for (const analysis::MemoryPoint& point : busiest->allocated) {
    const bool before = point.eventIndex == analysis::kBeforeTrace || (it.firstEvent != analysis::kBeforeTrace && point.eventIndex < it.firstEvent);
    if (before) {
      startBytes = static_cast<double>(point.bytes);
      continue;
    }
    if (point.eventIndex > it.lastEvent) break;
    if (curve.position.isEmpty()) {
      curve.position.push_back(0);
      curve.bytes.push_back(startBytes);
    }
    curve.position.push_back((point.eventIndex - first) / span);
    curve.bytes.push_back(static_cast<double>(point.bytes));
  }
  if (curve.position.isEmpty()) {
    curve.position.push_back(0);
    curve.bytes.push_back(startBytes);
  }
  return curve;
}

// A level across the whole plot at `y` (axis units), labelled above it at `x`.
void addLevel(QCustomPlot* plot, double y, const QPen& pen, const QString& text, const QColor& textColor, double x,
              Qt::Alignment side, bool underTheLine = false) {
  auto* line = new QCPItemStraightLine(plot);
  line->setPen(pen);
  line->point1->setCoords(0, y);
  line->point2->setCoords(1, y);
  auto* label = new QCPItemText(plot);
  label->setText(text);
  label->setColor(textColor);
  label->position->setCoords(x, y);
  label->setPositionAlignment((underTheLine ? Qt::AlignTop : Qt::AlignBottom) | side);
  label->setPadding(QMargins(4, 2, 4, 2));
}

}  // namespace

MemoryTimelineView::MemoryTimelineView(PlanSession* session, QWidget* parent)
    : QWidget(parent),
      session_(session),
      plot_(new QCustomPlot(this)),
      pinButton_(new QPushButton(tr("Pin as baseline"), this)),
      clearPinButton_(new QPushButton(tr("Clear baseline"), this)),
      snapshotButton_(new QPushButton(tr("Load memory snapshot…"), this)),
      clearSnapshotButton_(new QPushButton(tr("Hide snapshot"), this)),
      snapshotProgress_(new QProgressBar(this)),
      cancelSnapshotButton_(new QPushButton(tr("Cancel"), this)),
      snapshotStatus_(new QLabel(this)),
      snapshotLoader_(new ArtifactLoader(this)) {
  setObjectName(QStringLiteral("memoryTimeline"));
  pinButton_->setObjectName(QStringLiteral("pinBaseline"));
  pinButton_->setToolTip(tr("Keep this plan's total on the plot as an outline, to compare the next plans with it."));
  clearPinButton_->setObjectName(QStringLiteral("clearBaseline"));
  snapshotButton_->setObjectName(QStringLiteral("loadSnapshot"));
  snapshotButton_->setToolTip(
      tr("Draw a CUDA memory snapshot's allocated bytes (torch.cuda.memory._dump_snapshot) "
         "over the plan, to compare the prediction with a measured run."));
  clearSnapshotButton_->setObjectName(QStringLiteral("clearSnapshot"));
  snapshotProgress_->setObjectName(QStringLiteral("snapshotProgress"));
  snapshotProgress_->setRange(0, ArtifactLoader::kProgressMaximum);
  snapshotProgress_->setMaximumWidth(160);
  cancelSnapshotButton_->setObjectName(QStringLiteral("cancelSnapshot"));
  snapshotStatus_->setObjectName(QStringLiteral("snapshotStatus"));
  // A long error is cut to the row's width; its tooltip has all of it.
  snapshotStatus_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  auto* buttons = new QHBoxLayout;
  buttons->setContentsMargins(4, 2, 4, 0);
  for (QPushButton* button : {pinButton_, clearPinButton_, snapshotButton_, clearSnapshotButton_}) {
    button->setFlat(true);
    buttons->addWidget(button);
  }
  buttons->addWidget(snapshotProgress_);
  cancelSnapshotButton_->setFlat(true);
  buttons->addWidget(cancelSnapshotButton_);
  buttons->addWidget(snapshotStatus_, 1);
  showSnapshotProgress(false);
  layout->addLayout(buttons);
  layout->addWidget(plot_, 1);
  connect(pinButton_, &QPushButton::clicked, this, &MemoryTimelineView::pinBaseline);
  connect(clearPinButton_, &QPushButton::clicked, this, &MemoryTimelineView::clearBaseline);
  connect(snapshotButton_, &QPushButton::clicked, this, &MemoryTimelineView::chooseSnapshot);
  connect(clearSnapshotButton_, &QPushButton::clicked, this, &MemoryTimelineView::clearSnapshot);
  connect(cancelSnapshotButton_, &QPushButton::clicked, this, &MemoryTimelineView::cancelSnapshot);
  connect(snapshotLoader_, &ArtifactLoader::progress, snapshotProgress_, &QProgressBar::setValue);
  connect(snapshotLoader_, &ArtifactLoader::finished, this, &MemoryTimelineView::onSnapshotLoaded);
  plot_->xAxis->setLabel(tr("Execution"));
  plot_->legend->setVisible(true);
  // One row above the plot: inside it, the legend would hide the forward's peaks and the peak label.
  plot_->axisRect()->insetLayout()->take(plot_->legend);
  plot_->plotLayout()->insertRow(0);
  plot_->plotLayout()->addElement(0, 0, plot_->legend);
  plot_->plotLayout()->setRowStretchFactor(0, 0.001);
  plot_->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  plot_->legend->setWrap(static_cast<int>(analysis::kMemoryCategoryCount) + 3);  // and baseline, budget, snapshot
  plot_->legend->setBorderPen(Qt::NoPen);
  plot_->legend->setMargins(QMargins(4, 0, 4, 0));
  plot_->legend->setColumnSpacing(12);
  plot_->setMinimumHeight(200);
  connect(session_, &PlanSession::currentStepChanged, this, &MemoryTimelineView::showCurrentStep);
  connect(plot_, &QCustomPlot::mousePress, this, &MemoryTimelineView::onPlotClicked);
  connect(plot_, &QCustomPlot::mouseMove, this, &MemoryTimelineView::onMouseMove);
  plot_->setMouseTracking(true);
  showCurrentStep();
}

void MemoryTimelineView::setSelectedNode(ir::NodeId node) {
  if (node == selected_) return;
  selected_ = node;
  drawSelectedNode();  // the markers only: the step's plot stays
  plot_->replot();
}

void MemoryTimelineView::drawSelectedNode() {
  for (QCPItemStraightLine* marker : std::exchange(selectedMarkerItems_, {})) {
    if (plot_->hasItem(marker)) plot_->removeItem(marker);
  }
  selectedMarkers_ = 0;
  const passes::PlannedStep* planned = session_->currentPlanned();
  if (!planned || selected_ == ir::kNoNode) return;
  const std::vector<ir::NodeId>& nodes = planned->schedule.nodes;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i] != selected_) continue;
    auto* line = new QCPItemStraightLine(plot_);
    line->setPen(QPen(QColor(0x1f, 0x1f, 0x1f), 1.5));
    line->point1->setCoords(static_cast<double>(i), 0);
    line->point2->setCoords(static_cast<double>(i), 1);
    selectedMarkerItems_.push_back(line);
    ++selectedMarkers_;
  }
}

QString MemoryTimelineView::readoutAt(double x) const {
  const passes::PlannedStep* planned = session_->currentPlanned();
  if (!planned || planned->timeline.live.empty()) return {};
  const long index = std::lround(x);
  if (index < 0 || static_cast<size_t>(index) >= planned->timeline.live.size()) return {};
  const size_t i = static_cast<size_t>(index);
  const ir::NodeId node = planned->schedule.nodes[i];
  const ir::Graph& graph = session_->target()->graph();
  const bool backward = planned->schedule.phase[i] == analysis::Phase::Backward;
  QStringList lines{tr("%1 · execution %2 (%3)")
                        .arg(toQString(graph.name(node)))
                        .arg(i)
                        .arg(backward ? tr("backward") : tr("forward")),
                    tr("held %1").arg(formatBytes(planned->timeline.total[i]))};
  for (size_t c = 0; c < analysis::kMemoryCategoryCount; ++c) {
    const uint64_t bytes = planned->timeline.live[i][c];
    if (bytes > 0) {
      lines << tr("  %1 %2").arg(memoryCategoryLabel(static_cast<analysis::MemoryCategory>(c)), formatBytes(bytes));
    }
  }
  // The largest values held here (weights aside): what a user asks of a peak. A dead buffer that
  // Inductor's reuse keeps for a later allocation of its size says which.
  const analysis::MemoryTimeline& timeline = planned->timeline;
  std::vector<size_t> held = timeline.valuesAt(static_cast<uint32_t>(i));
  constexpr size_t kLargest = 4;
  const auto largest = held.begin() + static_cast<ptrdiff_t>(std::min(kLargest, held.size()));
  std::partial_sort(held.begin(), largest, held.end(),
                    [&](size_t a, size_t b) { return timeline.storages[a].bytes > timeline.storages[b].bytes; });
  if (held.begin() != largest) lines << tr("largest values:");
  for (auto it = held.begin(); it != largest; ++it) {
    const analysis::StorageLife& life = timeline.storages[*it];
    QString line = tr("  %1 %2 (%3)").arg(toQString(graph.name(life.node)), formatBytes(life.bytes),
                                        memoryCategoryLabel(life.category));
    if (life.heldDeadAt(static_cast<uint32_t>(i))) {
      line += tr(", dead: kept for %1 by buffer reuse").arg(toQString(graph.name(life.heldFor)));
    }
    lines << line;
  }
  if (i < planned->startSeconds.size()) lines << tr("starts at %1").arg(formatSeconds(planned->startSeconds[i]));
  return lines.join(QLatin1Char('\n'));
}

void MemoryTimelineView::onMouseMove(QMouseEvent* event) {
  const QString text = readoutAt(plot_->xAxis->pixelToCoord(event->position().x()));
  if (text.isEmpty()) {
    QToolTip::hideText();
  } else {
    QToolTip::showText(event->globalPosition().toPoint(), text, plot_);
  }
}

void MemoryTimelineView::pinBaseline() {
  const passes::PlannedStep* planned = session_->currentPlanned();
  if (!planned || planned->timeline.total.empty()) return;
  baseline_.clear();
  for (uint64_t bytes : planned->timeline.total) baseline_.push_back(static_cast<double>(bytes));
  const auto& run = session_->planRun();
  baselineLabel_ = tr("baseline: %1 (peak %2)")
                       .arg(run->budget ? tr("budget %1").arg(formatBytes(run->budget->budgetBytes)) : run->pipeline,
                            formatBytes(planned->timeline.peakBytes));
  showCurrentStep();
}

void MemoryTimelineView::setMeasuredProfile(std::shared_ptr<const plan::MeasuredProfile> profile) {
  profile_ = std::move(profile);
  showCurrentStep();
}

void MemoryTimelineView::clearBaseline() {
  baseline_.clear();
  showCurrentStep();
}

double MemoryTimelineView::baselinePeakBytes() const {
  return baseline_.isEmpty() ? 0 : *std::max_element(baseline_.begin(), baseline_.end());
}

void MemoryTimelineView::loadSnapshot(const QString& path) {
  snapshotLoader_->loadSnapshot(path);
  snapshotProgress_->setValue(0);
  snapshotStatus_->setText(tr("Loading %1…").arg(QFileInfo(path).fileName()));
  snapshotStatus_->setToolTip(path);
  snapshotStatus_->setStyleSheet({});
  statusHoldsLoad_ = true;
  showSnapshotProgress(true);
}

void MemoryTimelineView::cancelSnapshot() {
  snapshotLoader_->cancel();
}

void MemoryTimelineView::showSnapshotProgress(bool loading) {
  snapshotProgress_->setVisible(loading);
  cancelSnapshotButton_->setVisible(loading);
  snapshotStatus_->setVisible(loading || !snapshotStatus_->text().isEmpty());
}

void MemoryTimelineView::onSnapshotLoaded(const LoadOutcome& outcome) {
  const QString file = QFileInfo(snapshotLoader_->path()).fileName();
  std::optional<SnapshotCurve> curve;
  if (outcome.snapshotTimeline) curve = curveOf(*outcome.snapshotTimeline, file);
  QString error;
  if (outcome.cancelled) {
    error = tr("Loading the snapshot %1 cancelled").arg(file);
  } else if (!outcome.error.isEmpty()) {
    error = tr("Could not load the snapshot %1: %2").arg(file, outcome.error);
    if (!outcome.errorLocation.isEmpty()) error += QStringLiteral(" (%1)").arg(outcome.errorLocation);
  } else if (!curve) {
    error = tr("The snapshot %1 has no allocation trace: record one with "
               "torch.cuda.memory._record_memory_history() before the steps.")
                .arg(file);
  }
  snapshotStatus_->setText(error);
  snapshotStatus_->setToolTip(error);
  snapshotStatus_->setStyleSheet(error.isEmpty() ? QString() : QStringLiteral("QLabel { color: #b00020; }"));
  statusHoldsLoad_ = !error.isEmpty();
  showSnapshotProgress(false);
  if (curve) {
    snapshot_ = std::move(*curve);
    showCurrentStep();
  }
  emit snapshotLoaded(error.isEmpty(), error);
}

void MemoryTimelineView::clearSnapshot() {
  snapshot_ = {};
  statusHoldsLoad_ = false;
  snapshotStatus_->clear();
  snapshotStatus_->hide();
  showCurrentStep();
}

void MemoryTimelineView::chooseSnapshot() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Load a CUDA memory snapshot"), {},
                                                    tr("CUDA memory snapshots (*.pickle);;All files (*)"));
  if (!path.isEmpty()) loadSnapshot(path);
}

void MemoryTimelineView::updateButtons() {
  pinButton_->setEnabled(session_->currentPlanned() != nullptr);
  clearPinButton_->setVisible(!baseline_.isEmpty());
  clearSnapshotButton_->setVisible(!snapshot_.bytes.isEmpty());
}

double MemoryTimelineView::showMeasured(const QString& graphId) {
  const bool runPlannedThisGraph =
      profile_ && !profile_->steps.empty() &&
      std::any_of(profile_->graphs.begin(), profile_->graphs.end(),
                  [&](const plan::ProfiledGraph& g) { return toQString(g.graphId) == graphId; });
  if (!runPlannedThisGraph) return 0;
  measuredSummary_ = tr("measured (%1): %2 median, %n step(s)", nullptr, static_cast<int>(profile_->steps.size()))
                         .arg(toQString(profile_->device), formatSeconds(profile_->medianStepSeconds()));
  // In the legend, where it never covers the plan: an entry without data, in the measured pen.
  const QPen pen(kSnapshotColor, 1.8, Qt::DashLine);
  QCPGraph* summary = plot_->addGraph();
  summary->setName(measuredSummary_);
  summary->setPen(pen);
  const std::optional<uint64_t> peak = profile_->maxPeakBytes();
  if (!peak) {
    plot_->setToolTip(tr("The run measured no peak: %1 keeps no allocator statistics.").arg(toQString(profile_->device)));
    return 0;
  }
  const uint64_t before = profile_->maxBeforeBytes();
  measuredPeakBytes_ = static_cast<double>(*peak + before);
  const double inUnits = measuredPeakBytes_ / unit_.bytes;
  addLevel(plot_, inUnits, pen,
           tr("measured peak %1 (%2 above the %3 held before)")
               .arg(formatBytes(*peak + before), formatBytes(*peak), formatBytes(before)),
           kSnapshotColor.darker(120), 0, Qt::AlignLeft);
  return inUnits;
}

void MemoryTimelineView::showCurrentStep() {
  plot_->clearGraphs();
  plot_->clearItems();
  selectedMarkerItems_.clear();  // cleared with the other items
  budgetBytes_ = 0;
  capacityBytes_ = 0;
  measuredPeakBytes_ = 0;
  measuredSummary_.clear();
  updateButtons();
  plot_->setToolTip({});
  const passes::PlannedStep* planned = session_->currentPlanned();
  if (!planned || planned->timeline.live.empty()) {
    plot_->replot();
    return;
  }
  const analysis::MemoryTimeline& timeline = planned->timeline;
  const int steps = static_cast<int>(timeline.live.size());
  // One unit for every curve on the axis, from the largest of them.
  const auto& run = session_->planRun();
  // The card's memory, once the step comes near it: far above, the line would flatten the curves.
  const double capacity = run->target ? static_cast<double>(run->target->hardware().hbmCapacity) : 0.0;
  if (capacity > 0 && static_cast<double>(timeline.peakBytes) >= kCapacityShownBelow * capacity) capacityBytes_ = capacity;
  unit_ = byteAxisUnit(std::max({static_cast<double>(timeline.peakBytes), baselinePeakBytes(), capacityBytes_,
                                 snapshot_.bytes.isEmpty() ? 0.0 : static_cast<double>(snapshot_.peakBytes),
                                 run->budget ? static_cast<double>(run->budget->budgetBytes) : 0.0}));
  plot_->yAxis->setLabel(tr("Live memory (%1)").arg(unit_.name));
  QVector<double> x(steps);
  for (int i = 0; i < steps; ++i) x[i] = i;
  std::vector<double> cumulative(static_cast<size_t>(steps), 0.0);
  QCPGraph* below = nullptr;
  for (size_t category = 0; category < analysis::kMemoryCategoryCount; ++category) {
    const bool present =
        std::any_of(timeline.live.begin(), timeline.live.end(), [&](const auto& live) { return live[category] > 0; });
    if (!present) continue;  // an empty band only clutters the legend
    QVector<double> y(steps);
    for (int i = 0; i < steps; ++i) {
      cumulative[static_cast<size_t>(i)] += static_cast<double>(timeline.live[static_cast<size_t>(i)][category]);
      y[i] = cumulative[static_cast<size_t>(i)] / unit_.bytes;
    }
    QCPGraph* graph = plot_->addGraph();
    graph->setName(memoryCategoryLabel(static_cast<analysis::MemoryCategory>(category)));
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

  double highest = static_cast<double>(timeline.peakBytes) / unit_.bytes;
  int xEnd = steps;

  if (!baseline_.isEmpty()) {
    QCPGraph* outline = plot_->addGraph();
    outline->setName(baselineLabel_);
    outline->setPen(QPen(kBaselineColor, 1.6, Qt::SolidLine));
    outline->setLineStyle(QCPGraph::lsStepLeft);
    QVector<double> bx(baseline_.size()), by(baseline_.size());
    for (int i = 0; i < baseline_.size(); ++i) {
      bx[i] = i;
      by[i] = baseline_[i] / unit_.bytes;
    }
    outline->setData(bx, by, true);
    highest = std::max(highest, baselinePeakBytes() / unit_.bytes);
    xEnd = std::max(xEnd, static_cast<int>(baseline_.size()));
  }

  if (!snapshot_.bytes.isEmpty()) {
    QCPGraph* measured = plot_->addGraph();
    measured->setName(tr("snapshot %1, allocated").arg(snapshot_.file));
    measured->setPen(QPen(kSnapshotColor, 1.4));
    measured->setLineStyle(QCPGraph::lsStepLeft);
    const double span = std::max(1, steps - 1);
    QVector<double> sx(snapshot_.position.size()), sy(snapshot_.bytes.size());
    for (int i = 0; i < sx.size(); ++i) {
      sx[i] = snapshot_.position[i] * span;
      sy[i] = snapshot_.bytes[i] / unit_.bytes;
    }
    measured->setData(sx, sy, true);
    highest = std::max(highest, static_cast<double>(snapshot_.peakBytes) / unit_.bytes);
    const QString drawn = snapshot_.iterations > 1
                              ? tr("iteration %1 of the %2 it recorded (events %3–%4; iterations are found where memory "
                                   "comes back down between steps), the one with its peak,")
                                    .arg(snapshot_.iteration)
                                    .arg(snapshot_.iterations)
                                    .arg(snapshot_.firstEvent)
                                    .arg(snapshot_.lastEvent)
                              : tr("its whole trace (%1 events: one iteration),").arg(snapshot_.events);
    const QString peaks = tr("Measured peak %1, planned %2 (%3).")
                              .arg(formatBytes(snapshot_.peakBytes), formatBytes(timeline.peakBytes),
                                   formatModelError(static_cast<double>(timeline.peakBytes), static_cast<double>(snapshot_.peakBytes)));
    plot_->setToolTip(tr("Snapshot %1 (device %2): %3 spread evenly over this plan's %4 executions, so the curves share "
                         "the step's ends but not a clock. %5")
                          .arg(snapshot_.file)
                          .arg(snapshot_.device)
                          .arg(drawn)
                          .arg(steps)
                          .arg(peaks));
    if (!statusHoldsLoad_) {
      snapshotStatus_->setText(snapshot_.iterations > 1
                                   ? tr("%1: iteration %2 of %3 over the step. %4")
                                         .arg(snapshot_.file)
                                         .arg(snapshot_.iteration)
                                         .arg(snapshot_.iterations)
                                         .arg(peaks)
                                   : tr("%1 over the step. %2").arg(snapshot_.file, peaks));
      snapshotStatus_->setToolTip(plot_->toolTip());
      snapshotStatus_->setVisible(true);
    }
  }

  // The peak's label hangs from the top beside its line, on the side with room; the budget and
  // capacity labels go to the other side, so that none covers another.
  const bool peakInRightHalf = timeline.peakStep * 2 > static_cast<uint32_t>(steps);
  const double levelX = peakInRightHalf ? 0 : xEnd - 1;
  const Qt::Alignment levelSide = peakInRightHalf ? Qt::AlignLeft : Qt::AlignRight;
  if (run->budget) {
    budgetBytes_ = static_cast<double>(run->budget->budgetBytes);
    const double budgetInUnits = budgetBytes_ / unit_.bytes;
    highest = std::max(highest, budgetInUnits);
    addLevel(plot_, budgetInUnits, QPen(kBudgetColor, 1.5, Qt::DashDotLine),
             run->budgetMet() ? tr("budget %1").arg(formatBytes(run->budget->budgetBytes))
                              : tr("budget %1 cannot be met").arg(formatBytes(run->budget->budgetBytes)),
             kBudgetColor, levelX, levelSide);
  }
  if (capacityBytes_ > 0) {
    const double capacityInUnits = capacityBytes_ / unit_.bytes;
    highest = std::max(highest, capacityInUnits);
    const bool fits = static_cast<double>(timeline.peakBytes) <= capacityBytes_;
    addLevel(plot_, capacityInUnits, QPen(kCapacityColor, 2, Qt::SolidLine),
             fits ? tr("%1 memory %2").arg(run->hardware, formatBytes(static_cast<uint64_t>(capacityBytes_)))
                  : tr("%1 memory %2: the step does not fit")
                        .arg(run->hardware, formatBytes(static_cast<uint64_t>(capacityBytes_))),
             fits ? kCapacityColor : QColor(0xc0, 0x20, 0x20), levelX, levelSide,
             // Close above the budget's line, under its own line.
             budgetBytes_ > 0 && capacityBytes_ < budgetBytes_ * 1.15 && capacityBytes_ >= budgetBytes_);
  }
  highest = std::max(highest, showMeasured(run->graphId));
  const double top = highest * 1.2 > 0 ? highest * 1.2 : 1.0;
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
  peakLabel->setText(tr("peak %1 at %2").arg(formatBytes(timeline.peakBytes), peakNode));
  peakLabel->setColor(peakPen.color());
  peakLabel->position->setCoords(timeline.peakStep, top);
  // Keep the label inside the plot: to the left of the line when the peak is in the right half.
  peakLabel->setPositionAlignment(Qt::AlignTop | (peakInRightHalf ? Qt::AlignRight : Qt::AlignLeft));
  peakLabel->setPadding(QMargins(4, 2, 4, 2));

  if (schedule.backwardStart > 0 && schedule.backwardStart < schedule.nodes.size()) {
    const QPen phasePen(Qt::black, 1, Qt::DotLine);
    auto* backwardLine = new QCPItemStraightLine(plot_);
    backwardLine->setPen(phasePen);
    backwardLine->point1->setCoords(static_cast<double>(schedule.backwardStart), 0);
    backwardLine->point2->setCoords(static_cast<double>(schedule.backwardStart), 1);
    // At the foot of the line: the legend and the peak label take the top.
    auto* forwardLabel = new QCPItemText(plot_);
    forwardLabel->setText(tr("← forward"));
    forwardLabel->setPositionAlignment(Qt::AlignBottom | Qt::AlignRight);
    forwardLabel->position->setCoords(static_cast<double>(schedule.backwardStart), 0);
    forwardLabel->setPadding(QMargins(4, 2, 4, 4));
    forwardLabel->setBrush(QColor(255, 255, 255, 200));
    auto* backwardLabel = new QCPItemText(plot_);
    backwardLabel->setText(tr("backward →"));
    backwardLabel->setPositionAlignment(Qt::AlignBottom | Qt::AlignLeft);
    backwardLabel->position->setCoords(static_cast<double>(schedule.backwardStart), 0);
    backwardLabel->setPadding(QMargins(4, 2, 4, 4));
    backwardLabel->setBrush(QColor(255, 255, 255, 200));
  }

  drawSelectedNode();
  plot_->xAxis->setRange(0, std::max(1, xEnd - 1));
  plot_->yAxis->setRange(0, top);
  plot_->replot();
}

double MemoryTimelineView::plottedPeakBytes() const {
  // The last band is stacked on all the others, so its top is the total; overlays follow the bands.
  QCPGraph* top = nullptr;
  for (int i = 0; i < plot_->graphCount(); ++i) {
    if (plot_->graph(i)->brush().style() != Qt::NoBrush) top = plot_->graph(i);
  }
  if (!top) return 0;
  bool found = false;
  const QCPRange range = top->getValueRange(found);
  return found ? range.upper * unit_.bytes : 0;
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

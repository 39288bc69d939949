#include "views/magi_timeline_view.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "util/input.h"
#include "views/formatting.h"
#include "views/magi_timeline_model.h"

namespace lathe::views {

namespace {

// A file shown beside the table is a graph or generated code: a few MB at most.
constexpr uint64_t kMaxShownFileBytes = uint64_t{32} << 20;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kLanePixels = 17;
const QColor kSpanColor(0x4e, 0x79, 0xa7);
const QColor kFailedColor(0xc0, 0x39, 0x2b);
const QColor kMarkColor(0x59, 0xa1, 0x4f);
const QColor kSelectedColor(0xf2, 0x8e, 0x2b);

QCPCurve* lineCurve(QCustomPlot* plot, const QColor& color, double width, const QString& name) {
  auto* curve = new QCPCurve(plot->xAxis, plot->yAxis);
  curve->setPen(QPen(color, width, Qt::SolidLine, Qt::FlatCap));
  curve->setName(name);
  return curve;
}

}  // namespace

MagiTimelineView::MagiTimelineView(QWidget* parent)
    : QWidget(parent),
      summary_(new QLabel(this)),
      modelBox_(new QComboBox(this)),
      plot_(new QCustomPlot(this)),
      table_(new QTableView(this)),
      proxy_(new QSortFilterProxyModel(this)),
      model_(new MagiTimelineModel(this)),
      fileBox_(new QComboBox(this)),
      fileText_(new QPlainTextEdit(this)) {
  setObjectName(QStringLiteral("magiTimelineView"));
  summary_->setWordWrap(true);
  modelBox_->setObjectName(QStringLiteral("magiModelBox"));
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(MagiTimelineModel::kSortRole);
  table_->setObjectName(QStringLiteral("magiTimelineTable"));
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(MagiTimelineModel::IndexColumn, Qt::AscendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          &MagiTimelineView::onCurrentRowChanged);

  fileBox_->setObjectName(QStringLiteral("magiFileBox"));
  fileText_->setObjectName(QStringLiteral("magiFileText"));
  fileText_->setReadOnly(true);
  fileText_->setLineWrapMode(QPlainTextEdit::NoWrap);
  fileText_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  connect(fileBox_, &QComboBox::currentIndexChanged, this, &MagiTimelineView::showFile);

  plot_->setMinimumHeight(180);
  plot_->setMouseTracking(true);
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot_->axisRect()->setRangeDrag(Qt::Horizontal);
  plot_->axisRect()->setRangeZoom(Qt::Horizontal);
  plot_->xAxis->setLabel(tr("Time since the first event (s)"));
  plot_->yAxis->grid()->setVisible(false);
  plot_->yAxis->setRangeReversed(true);  // the first lifecycle at the top
  plot_->legend->setVisible(true);
  plot_->legend->setFillOrder(QCPLegend::foColumnsFirst);
  plot_->legend->setWrap(4);
  plot_->legend->setBorderPen(Qt::NoPen);
  plot_->plotLayout()->addElement(1, 0, plot_->legend);
  plot_->plotLayout()->setRowStretchFactor(1, 0.001);
  connect(plot_, &QCustomPlot::mousePress, this, &MagiTimelineView::onPlotClicked);
  connect(plot_, &QCustomPlot::mouseMove, this, &MagiTimelineView::onMouseMove);
  connect(modelBox_, &QComboBox::currentIndexChanged, this, &MagiTimelineView::showModel);

  auto* filePane = new QWidget(this);
  auto* fileLayout = new QVBoxLayout(filePane);
  fileLayout->setContentsMargins(0, 0, 0, 0);
  fileLayout->addWidget(fileBox_);
  fileLayout->addWidget(fileText_, 1);
  auto* lower = new QSplitter(Qt::Horizontal, this);
  lower->addWidget(table_);
  lower->addWidget(filePane);
  lower->setStretchFactor(0, 3);
  lower->setStretchFactor(1, 2);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(plot_);
  split->addWidget(lower);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  auto* header = new QHBoxLayout;
  header->addWidget(summary_, 1);
  header->addWidget(modelBox_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addLayout(header);
  layout->addWidget(split, 1);
  setArtifact(nullptr);
}

bool MagiTimelineView::hasTimeline() const {
  return artifact_ && artifact_->magi && !artifact_->magi->models.empty();
}

void MagiTimelineView::setArtifact(std::shared_ptr<const io::Artifact> artifact) {
  artifact_ = std::move(artifact);
  const QSignalBlocker block(modelBox_);
  modelBox_->clear();
  if (hasTimeline()) {
    for (const io::MagiModel& m : artifact_->magi->models) {
      modelBox_->addItem(m.rank >= 0 ? tr("%1 · rank %2").arg(toQString(m.name)).arg(m.rank) : toQString(m.name));
    }
  }
  modelBox_->setVisible(modelBox_->count() > 1);
  showModel(0);
}

void MagiTimelineView::showModel(int index) {
  model_->setModel(hasTimeline() ? artifact_ : nullptr, index);
  table_->resizeColumnsToContents();
  fileBox_->clear();
  fileText_->clear();
  draw();
  // What a reader looks for first: the first failure, else the first event.
  if (const io::MagiModel* m = model_->magiModel(); m && !m->timeline.empty()) {
    const auto failed = std::find_if(m->timeline.begin(), m->timeline.end(),
                                     [](const io::MagiTimelineEvent& e) { return e.phase == io::MagiPhase::Failed; });
    selectEvent(failed != m->timeline.end() ? failed->index : m->timeline.front().index);
  }
}

void MagiTimelineView::draw() {
  plot_->clearPlottables();
  selected_ = nullptr;
  spans_.clear();
  lanes_ = 0;
  const io::MagiModel* m = model_->magiModel();
  if (!m || m->timeline.empty()) {
    summary_->setText(m ? tr("%1 has no timeline (no timeline_events/timeline.jsonl).").arg(toQString(m->name))
                        : tr("No MagiCompiler dump: open a magi_depyf folder to see its compile lifecycle."));
    plot_->replot();
    return;
  }
  // A lane per lifecycle, in the order each first ran.
  std::map<std::string, int> laneOf;
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  const auto lane = [&](const std::string& lifecycle) {
    auto [it, inserted] = laneOf.try_emplace(lifecycle, lanes_);
    if (inserted) ticker->addTick(lanes_++, toQString(lifecycle));
    return it->second;
  };
  QCPCurve* ok = lineCurve(plot_, kSpanColor, 9, tr("Lifecycle run"));
  QCPCurve* failed = lineCurve(plot_, kFailedColor, 9, tr("Failed run"));
  auto* marks = new QCPCurve(plot_->xAxis, plot_->yAxis);
  marks->setName(tr("Mark (no before event)"));
  marks->setLineStyle(QCPCurve::lsNone);
  marks->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, kMarkColor, kMarkColor, 9));
  int failures = 0;
  for (const io::MagiTimelineEvent& e : m->timeline) {
    if (e.phase == io::MagiPhase::Before) {
      lane(e.lifecycle);
      continue;
    }
    const int y = lane(e.lifecycle);
    if (!e.durationS) {
      marks->addData(e.seconds, y);
      spans_.push_back({e.seconds, e.seconds, y, e.index});
      continue;
    }
    const Span span{e.seconds - *e.durationS, e.seconds, y, e.index};
    spans_.push_back(span);
    QCPCurve* curve = e.phase == io::MagiPhase::Failed ? failed : ok;
    failures += e.phase == io::MagiPhase::Failed;
    // A zero-length run stays visible as a sliver.
    curve->addData(span.start, y);
    curve->addData(std::max(span.end, span.start + 1e-4), y);
    curve->addData(kNaN, kNaN);
  }
  if (failed->dataCount() == 0) plot_->removePlottable(failed);
  if (marks->dataCount() == 0) plot_->removePlottable(marks);
  plot_->yAxis->setTicker(ticker);
  plot_->yAxis->setRange(-0.7, lanes_ - 0.3);
  // Room for every lane's label: the legend and the axis take about 90 px.
  plot_->setMinimumHeight(std::max(180, 90 + kLanePixels * lanes_));
  const double end = m->timeline.back().seconds;
  plot_->xAxis->setRange(-end * 0.01, end * 1.02 + 1e-3);
  summary_->setText(tr("%1: %n event(s) over %2", nullptr, static_cast<int>(m->timeline.size()))
                        .arg(toQString(m->name), formatSeconds(end)) +
                    (failures > 0 ? tr(", %n failed run(s)", nullptr, failures) : QString()) +
                    tr("; click a span for its event and files."));
  plot_->replot();
}

int64_t MagiTimelineView::eventAt(QPointF pixel) const {
  const double x = plot_->xAxis->pixelToCoord(pixel.x());
  const double y = plot_->yAxis->pixelToCoord(pixel.y());
  const double slack = std::abs(plot_->xAxis->pixelToCoord(pixel.x() + 4) - x);
  const long lane = std::lround(y);
  if (std::abs(y - static_cast<double>(lane)) > 0.35) return -1;
  int64_t best = -1;
  double bestLength = std::numeric_limits<double>::infinity();
  for (const Span& s : spans_) {  // the shortest run under the mouse: nested runs overlap in time
    if (s.lane != lane || x < s.start - slack || x > s.end + slack) continue;
    if (s.end - s.start < bestLength) {
      bestLength = s.end - s.start;
      best = s.event;
    }
  }
  return best;
}

bool MagiTimelineView::selectEvent(int64_t index) {
  const int row = model_->rowOfEvent(index);
  if (row < 0) return false;
  const QModelIndex at = proxy_->mapFromSource(model_->index(row, 0));
  table_->setCurrentIndex(at);
  table_->scrollTo(at);
  return true;
}

void MagiTimelineView::onCurrentRowChanged() {
  const QModelIndex source = proxy_->mapToSource(table_->currentIndex());
  const QSignalBlocker block(fileBox_);
  fileBox_->clear();
  fileText_->clear();
  // The chosen run drawn over its lane.
  if (selected_) plot_->removePlottable(selected_);
  selected_ = nullptr;
  if (!source.isValid()) {
    plot_->replot();
    return;
  }
  const io::MagiTimelineEvent& e = model_->eventAt(source.row());
  for (const Span& s : spans_) {
    if (s.event != e.index) continue;
    if (!selected_) {
      selected_ = lineCurve(plot_, kSelectedColor, 13, tr("Selected"));
      selected_->removeFromLegend();
    }
    selected_->addData(s.start, s.lane);
    selected_->addData(std::max(s.end, s.start + 1e-4), s.lane);
    selected_->addData(kNaN, kNaN);
  }
  plot_->replot();
  for (const auto& file : e.files) {
    // Pass events keep their files under submod_<k>/: the folder names the piece.
    const QString parent = QString::fromStdString(file.parent_path().filename().string());
    const QString name = QString::fromStdString(file.filename().string());
    fileBox_->addItem(parent.startsWith(QLatin1String("submod_")) ? parent + QLatin1Char('/') + name : name,
                      QString::fromStdString(file.string()));
  }
  fileBox_->setEnabled(fileBox_->count() > 0);
  if (fileBox_->count() == 0) fileText_->setPlaceholderText(tr("MagiCompiler wrote no file for this event."));
  showFile(0);
  emit eventSelected(e.index);
}

void MagiTimelineView::showFile(int fileIndex) {
  if (fileIndex < 0 || fileIndex >= fileBox_->count()) {
    fileText_->clear();
    return;
  }
  const QString path = fileBox_->itemData(fileIndex).toString();
  try {
    fileText_->setPlainText(QString::fromStdString(readFile(path.toStdString(), kMaxShownFileBytes)));
  } catch (const Error& e) {
    fileText_->setPlainText(tr("Could not read %1: %2").arg(path, QString::fromUtf8(e.what())));
  }
}

void MagiTimelineView::onPlotClicked(QMouseEvent* event) {
  const int64_t index = eventAt(event->position());
  if (index >= 0) selectEvent(index);
}

void MagiTimelineView::onMouseMove(QMouseEvent* event) {
  const int64_t index = eventAt(event->position());
  const int row = index >= 0 ? model_->rowOfEvent(index) : -1;
  if (row < 0) {
    QToolTip::hideText();
    return;
  }
  const io::MagiTimelineEvent& e = model_->eventAt(row);
  QStringList lines{toQString(e.name), tr("at %1").arg(formatSeconds(e.seconds))};
  if (e.durationS) lines << tr("took %1").arg(formatSeconds(*e.durationS));
  if (const QString details = model_->index(row, MagiTimelineModel::DetailsColumn).data().toString();
      !details.isEmpty()) {
    lines << details;
  }
  QToolTip::showText(event->globalPosition().toPoint(), lines.join(QLatin1Char('\n')), plot_);
}

}  // namespace lathe::views

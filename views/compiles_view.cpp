#include "views/compiles_view.h"

#include <qcustomplot.h>

#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QToolTip>
#include <QVBoxLayout>
#include <array>
#include <cmath>

#include "views/compile_metrics_model.h"
#include "views/formatting.h"

namespace lathe::views {

namespace {

struct Phase {
  CompileMetricsModel::Column column;
  QColor color;
};
const std::array<Phase, 5> kPhases{{
    {CompileMetricsModel::DynamoColumn, QColor(0x4e, 0x79, 0xa7)},
    {CompileMetricsModel::AotAutogradColumn, QColor(0xf2, 0x8e, 0x2b)},
    {CompileMetricsModel::InductorColumn, QColor(0x59, 0xa1, 0x4f)},
    {CompileMetricsModel::CodegenColumn, QColor(0xe1, 0x57, 0x59)},
    {CompileMetricsModel::BackwardColumn, QColor(0xb0, 0x7a, 0xa1)},
}};

}  // namespace

CompilesView::CompilesView(QWidget* parent)
    : QWidget(parent),
      summary_(new QLabel(this)),
      plot_(new QCustomPlot(this)),
      table_(new QTableView(this)),
      proxy_(new QSortFilterProxyModel(this)),
      model_(new CompileMetricsModel(this)) {
  setObjectName(QStringLiteral("compilesView"));
  summary_->setWordWrap(true);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(CompileMetricsModel::kSortRole);
  table_->setObjectName(QStringLiteral("compilesTable"));
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(CompileMetricsModel::CompileColumn, Qt::AscendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  connect(table_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    const QModelIndex source = proxy_->mapToSource(index);
    if (source.isValid()) emit compileActivated(toQString(model_->compileAt(source.row()).id));
  });

  plot_->setMinimumHeight(160);
  plot_->setMouseTracking(true);
  // The legend in a row of its own under the plot: bars fill the axis rect.
  plot_->legend->setVisible(true);
  plot_->legend->setFillOrder(QCPLegend::foColumnsFirst);
  plot_->legend->setWrap(3);
  plot_->legend->setBorderPen(Qt::NoPen);
  plot_->plotLayout()->addElement(1, 0, plot_->legend);
  plot_->plotLayout()->setRowStretchFactor(1, 0.001);
  plot_->xAxis->setLabel(tr("Compile time (s)"));
  plot_->yAxis->grid()->setVisible(false);
  connect(plot_, &QCustomPlot::mouseDoubleClick, this, &CompilesView::onPlotClicked);
  connect(plot_, &QCustomPlot::mouseMove, this, &CompilesView::onMouseMove);

  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(plot_);
  split->addWidget(table_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  layout->addWidget(summary_);
  layout->addWidget(split, 1);
  setArtifact(nullptr);
}

void CompilesView::setArtifact(std::shared_ptr<const io::Artifact> artifact) {
  model_->setArtifact(std::move(artifact));
  table_->resizeColumnsToContents();
  draw();
}

void CompilesView::draw() {
  plot_->clearPlottables();
  barRows_.clear();
  double total = 0, longest = 0;
  for (int row = 0; row < model_->rowCount(); ++row) {
    const io::CompileMetrics& m = model_->metricsAt(row);
    const double seconds = m.totalSeconds.value_or(0) + m.backwardSeconds().value_or(0);
    if (seconds <= 0) continue;
    barRows_.insert(barRows_.begin(), row);  // the first compile at the top
    total += seconds;
    longest = std::max(longest, seconds);
  }
  bars_ = static_cast<int>(barRows_.size());
  if (barRows_.empty()) {
    summary_->setText(model_->rowCount() == 0 ? tr("No compiles: open a TORCH_TRACE log to see what each compile cost.")
                                              : tr("The log has no compile times (no compilation_metrics)."));
    plot_->replot();
    return;
  }
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  for (size_t i = 0; i < barRows_.size(); ++i) {
    ticker->addTick(static_cast<double>(i), toQString(model_->compileAt(barRows_[i]).id));
  }
  plot_->yAxis->setTicker(ticker);
  QCPBars* below = nullptr;
  // A compile that logged its whole time but not the backend's (a frame without a graph, a failed
  // one): the time is drawn, as not broken down.
  auto* whole = new QCPBars(plot_->yAxis, plot_->xAxis);
  whole->setName(tr("Not broken down"));
  whole->setPen(Qt::NoPen);
  whole->setBrush(QColor(0xba, 0xb0, 0xac));
  whole->setWidth(0.7);
  for (size_t i = 0; i < barRows_.size(); ++i) {
    const io::CompileMetrics& m = model_->metricsAt(barRows_[i]);
    const double phases = m.dynamoSeconds.value_or(0) + m.aotAutogradSeconds.value_or(0) + m.inductorSeconds.value_or(0) +
                          m.codegenSeconds.value_or(0);
    whole->addData(static_cast<double>(i), std::max(0.0, m.totalSeconds.value_or(0) - phases));
  }
  below = whole;
  for (const Phase& phase : kPhases) {
    auto* bars = new QCPBars(plot_->yAxis, plot_->xAxis);
    bars->setName(model_->headerData(phase.column, Qt::Horizontal).toString());
    bars->setPen(Qt::NoPen);
    bars->setBrush(phase.color);
    bars->setWidth(0.7);
    QVector<double> keys, values;
    for (size_t i = 0; i < barRows_.size(); ++i) {
      keys << static_cast<double>(i);
      values << model_->index(barRows_[i], phase.column).data(CompileMetricsModel::kSortRole).toDouble();
    }
    for (double& v : values) v = std::max(0.0, v);  // -1: the log does not give this phase
    bars->setData(keys, values, true);
    if (below) bars->moveAbove(below);
    below = bars;
  }
  plot_->xAxis->setRange(0, longest * 1.05);
  plot_->yAxis->setRange(-0.6, static_cast<double>(barRows_.size()) - 0.4);
  summary_->setText(tr("%n compile(s) with times, %1 in all; double-click a bar or a row for its graphs.", nullptr,
                       bars_)
                        .arg(formatSeconds(total)));
  plot_->replot();
}

int CompilesView::modelRowAtBar(double key) const {
  const long bar = std::lround(key);
  if (bar < 0 || bar >= static_cast<long>(barRows_.size()) || std::abs(key - static_cast<double>(bar)) > 0.4) return -1;
  return barRows_[static_cast<size_t>(bar)];
}

void CompilesView::onPlotClicked(QMouseEvent* event) {
  const int row = modelRowAtBar(plot_->yAxis->pixelToCoord(event->position().y()));
  if (row < 0) return;
  table_->setCurrentIndex(proxy_->mapFromSource(model_->index(row, 0)));
  emit compileActivated(toQString(model_->compileAt(row).id));
}

void CompilesView::onMouseMove(QMouseEvent* event) {
  const int row = modelRowAtBar(plot_->yAxis->pixelToCoord(event->position().y()));
  if (row < 0) {
    QToolTip::hideText();
    return;
  }
  QStringList lines{model_->index(row, CompileMetricsModel::CompileColumn).data().toString() + QStringLiteral(" · ") +
                    model_->index(row, CompileMetricsModel::FrameColumn).data().toString()};
  for (const Phase& phase : kPhases) {
    const QString value = model_->index(row, phase.column).data().toString();
    if (!value.isEmpty()) lines << tr("%1: %2").arg(model_->headerData(phase.column, Qt::Horizontal).toString(), value);
  }
  QToolTip::showText(event->globalPosition().toPoint(), lines.join(QLatin1Char('\n')), plot_);
}

}  // namespace lathe::views

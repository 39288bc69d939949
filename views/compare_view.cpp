#include "views/compare_view.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>

#include "passes/plan_builder.h"
#include "plan/plan_bind.h"
#include "util/format.h"
#include "views/formatting.h"
#include "views/graph_diff_model.h"
#include "views/plan_file.h"
#include "views/plan_session.h"

namespace lathe::views {

struct CompareView::LoadedB {
  std::shared_ptr<const io::Artifact> artifact;
  std::optional<plan::PlanBundle> plan;  // B was a plan bundle
};

namespace {

// The id of `id` with its compile ("0/1:aot_joint_graph" -> "aot_joint_graph"): the same stage of
// another compile.
QString stageOf(const QString& id) {
  const qsizetype colon = id.indexOf(QLatin1Char(':'));
  return colon < 0 ? id : id.mid(colon + 1);
}

}  // namespace

CompareView::CompareView(QWidget* parent)
    : QWidget(parent),
      sideA_(new QLabel(this)),
      sourceB_(new QLabel(this)),
      graphB_(new QComboBox(this)),
      openB_(new QPushButton(tr("Open B…"), this)),
      progress_(new QProgressBar(this)),
      cancel_(new QPushButton(tr("Cancel"), this)),
      summary_(new QLabel(this)),
      plot_(new QCustomPlot(this)),
      planTable_(new QTableWidget(this)),
      planTitle_(new QLabel(this)),
      table_(new QTableView(this)),
      proxy_(new QSortFilterProxyModel(this)),
      model_(new GraphDiffModel(this)),
      loads_(this),
      plans_(this) {
  setObjectName(QStringLiteral("compareView"));
  graphB_->setObjectName(QStringLiteral("compareGraphB"));
  openB_->setObjectName(QStringLiteral("compareOpenB"));
  openB_->setToolTip(tr("Compare with a graph of another capture, or with a plan bundle and its graph"));
  summary_->setObjectName(QStringLiteral("compareSummary"));
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  sideA_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // Long ids and file names wrap instead of widening the window.
  sideA_->setWordWrap(true);
  sourceB_->setWordWrap(true);
  sourceB_->setMaximumWidth(260);
  graphB_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  graphB_->setMinimumContentsLength(28);
  progress_->setRange(0, JobTracker::kProgressMaximum);
  progress_->setMaximumWidth(180);
  progress_->hide();
  cancel_->hide();

  auto* header = new QHBoxLayout;
  header->addWidget(new QLabel(tr("A:"), this));
  header->addWidget(sideA_, 1);
  header->addWidget(new QLabel(tr("B:"), this));
  header->addWidget(sourceB_);
  header->addWidget(graphB_);
  header->addWidget(openB_);
  header->addWidget(progress_);
  header->addWidget(cancel_);

  plot_->setObjectName(QStringLiteral("compareCategories"));
  plot_->setMinimumHeight(240);
  plot_->legend->setVisible(true);
  plot_->legend->setBorderPen(Qt::NoPen);
  plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  plot_->yAxis->setLabel(tr("Calls"));
  plot_->xAxis->grid()->setVisible(false);
  plot_->xAxis->setTickLabelRotation(30);

  planTable_->setObjectName(QStringLiteral("comparePlans"));
  planTable_->setColumnCount(4);
  planTable_->setHorizontalHeaderLabels({tr("Plan"), tr("A"), tr("B"), tr("B − A")});
  planTable_->verticalHeader()->hide();
  planTable_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  planTable_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  planTitle_->setWordWrap(true);
  auto* planBox = new QWidget(this);
  auto* planLayout = new QVBoxLayout(planBox);
  planLayout->setContentsMargins(0, 0, 0, 0);
  planLayout->addWidget(planTitle_);
  planLayout->addWidget(planTable_);
  planBox->setObjectName(QStringLiteral("comparePlanBox"));
  planBox->hide();

  proxy_->setSourceModel(model_);
  proxy_->setSortRole(Qt::DisplayRole);
  table_->setObjectName(QStringLiteral("compareNodes"));
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(-1, Qt::AscendingOrder);  // the diff's order until a header is clicked
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setWordWrap(false);

  top_ = new QSplitter(Qt::Horizontal, this);
  top_->addWidget(plot_);
  top_->addWidget(planBox);
  top_->setStretchFactor(0, 3);
  top_->setStretchFactor(1, 2);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(top_);
  split->addWidget(table_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(header);
  layout->addWidget(summary_);
  layout->addWidget(split, 1);

  connect(graphB_, &QComboBox::currentIndexChanged, this, [this] {
    bPicked_ = true;  // B stays where the user put it while A moves
    refreshDiff();
  });
  connect(table_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    const ir::NodeId node = model_->nodeA(proxy_->mapToSource(index));
    if (node != ir::kNoNode) emit nodeActivated(node);
  });
  connect(&loads_, &JobTracker::progress, progress_, &QProgressBar::setValue);
  connect(cancel_, &QPushButton::clicked, this, &CompareView::cancelB);
  // The button opens no dialog itself: the window owns the file dialog (File › Compare With…).
  connect(openB_, &QPushButton::clicked, this, [this] { emit openBRequested(); });
  setA(nullptr, {}, nullptr);
}

CompareView::~CompareView() = default;

void CompareView::setA(std::shared_ptr<const io::Artifact> artifact, const QString& graphId,
                       std::shared_ptr<const ir::Graph> graph) {
  const bool newArtifact = artifact != artifactA_;
  artifactA_ = std::move(artifact);
  graphIdA_ = graphId;
  graphA_ = std::move(graph);
  sideA_->setText(graphA_ ? tr("%1 · %2 (the graph on show)")
                                .arg(graphIdA_, artifactA_ ? QFileInfo(toQString(artifactA_->path.string())).fileName() : QString())
                          : tr("no graph on show"));
  if (newArtifact && !b_) bPicked_ = false;
  if (!bPicked_ || (!b_ && graphIdB() == graphIdA_)) {
    // B follows A: the same graph of B's file (a plan's own graph), else the same stage of another
    // compile; and where A moved onto B's graph, the one most like it instead.
    fillGraphsB(b_ ? (b_->plan ? toQString(b_->plan->graphId) : graphIdA_) : QString());
  } else {
    refreshDiff();
  }
}

void CompareView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (diffStale_) diffGraphs();
}

void CompareView::refreshDiff() {
  diffStale_ = !isVisible();
  if (!diffStale_) diffGraphs();
}

void CompareView::setPlanA(std::shared_ptr<const PlanRun> run) {
  planA_ = std::move(run);
  comparePlans();
}

void CompareView::openB(const QString& path) {
  openingB_ = path;
  progress_->setValue(0);
  progress_->show();
  cancel_->show();
  openB_->setEnabled(false);
  sourceB_->setText(tr("loading %1…").arg(QFileInfo(path).fileName()));
  sourceB_->setToolTip(path);
  loads_.start(
      [path](const JobProgress& progress) {
        auto loaded = std::make_shared<LoadedB>();
        std::string capture = path.toStdString();
        if (isPlanPath(path)) {
          loaded->plan = plan::readPlan(capture);
          capture = plan::captureOf(*loaded->plan, capture);
        }
        loaded->artifact = std::make_shared<const io::Artifact>(io::loadArtifact(capture, progress));
        return std::shared_ptr<const LoadedB>(std::move(loaded));
      },
      [this](const JobOutcome<std::shared_ptr<const LoadedB>>& outcome) { onBLoaded(outcome); });
}

void CompareView::cancelB() { loads_.cancel(); }

void CompareView::onBLoaded(const JobOutcome<std::shared_ptr<const LoadedB>>& outcome) {
  progress_->hide();
  cancel_->hide();
  openB_->setEnabled(true);
  if (!outcome.value) {
    const QString error = outcome.error.cancelled ? tr("cancelled") : outcome.error.message;
    sourceB_->setText(b_ ? QFileInfo(pathB_).fileName() : tr("this artifact"));
    bNotOpened_ = tr("%1 was not opened (%2); the comparison on show is unchanged.")
                      .arg(QFileInfo(openingB_).fileName(), error.toHtmlEscaped());
    refreshDiff();
    emit bLoaded(false, error);
    return;
  }
  b_ = *outcome.value;
  pathB_ = openingB_;
  bPicked_ = false;
  bNotOpened_.clear();
  sourceB_->setText(QFileInfo(pathB_).fileName());
  sourceB_->setToolTip(pathB_);
  fillGraphsB(b_->plan ? toQString(b_->plan->graphId) : graphIdA_);
  comparePlans();
  emit bLoaded(true, {});
}

void CompareView::fillGraphsB(const QString& preferred) {
  const std::shared_ptr<const io::Artifact>& artifact = b_ ? b_->artifact : artifactA_;
  graphsB_ = artifact ? artifact->graphs() : std::vector<io::GraphListing>{};
  if (!b_) sourceB_->setText(tr("this artifact"));
  // Preferred by id; else the same stage of another compile (or rank); else any other graph.
  int pick = -1, sameStage = -1, other = -1;
  for (size_t i = 0; i < graphsB_.size(); ++i) {
    const QString id = toQString(graphsB_[i].id);
    const bool isA = !b_ && id == graphIdA_;
    if (!preferred.isEmpty() && id == preferred && !isA) pick = static_cast<int>(i);
    if (sameStage < 0 && !isA && stageOf(id) == stageOf(graphIdA_)) sameStage = static_cast<int>(i);
    if (other < 0 && !isA) other = static_cast<int>(i);
  }
  if (pick < 0) pick = sameStage >= 0 ? sameStage : other;
  const QSignalBlocker blocker(graphB_);
  graphB_->clear();
  for (const io::GraphListing& g : graphsB_) graphB_->addItem(toQString(g.id));
  graphB_->setCurrentIndex(pick);
  refreshDiff();
}

bool CompareView::selectGraphB(const QString& graphId) {
  const int index = graphB_->findText(graphId);
  if (index < 0) return false;
  bPicked_ = true;
  graphB_->setCurrentIndex(index);  // a new index diffs through currentIndexChanged
  return true;
}

QString CompareView::graphIdB() const { return graphB_->currentText(); }

void CompareView::diffGraphs() {
  diffStale_ = false;
  const int index = graphB_->currentIndex();
  const std::shared_ptr<const ir::Graph> graphB =
      index >= 0 && static_cast<size_t>(index) < graphsB_.size() ? graphsB_[static_cast<size_t>(index)].graph : nullptr;
  model_->setGraphs(graphA_, graphB);
  // Nothing differs: the room goes to the pictures and the plans.
  table_->setVisible(model_->rowCount() > 0);
  table_->resizeColumnsToContents();
  const analysis::GraphDiff& d = model_->diff();
  if (!graphA_) {
    summary_->setText(tr("Select a graph: it is A, compared with B."));
  } else if (!graphB) {
    summary_->setText(tr("No graph to compare with: open another capture or a plan bundle as B."));
  } else if (d.identical()) {
    summary_->setText(tr("The same graph: all %n node(s) match (by name, inputs by position, by op and source line).", nullptr,
                         static_cast<int>(d.nodesA)));
  } else {
    summary_->setText(tr("A has %1 nodes, B %2. Matched %3 by name, %4 inputs by position and %5 by op and source line; "
                         "<b>%6 changed, %7 only in A, %8 only in B</b>. Double-click a row to show its node in A.")
                          .arg(d.nodesA)
                          .arg(d.nodesB)
                          .arg(d.matchedByName)
                          .arg(d.matchedByPosition)
                          .arg(d.matchedByProvenance)
                          .arg(d.changed)
                          .arg(d.onlyInA)
                          .arg(d.onlyInB));
  }
  if (!bNotOpened_.isEmpty()) summary_->setText(bNotOpened_ + QStringLiteral("<br>") + summary_->text());
  drawCategories();
}

void CompareView::drawCategories() {
  plot_->clearPlottables();
  const analysis::GraphDiff& d = model_->diff();
  QVector<double> ticks, a, b;
  QVector<QString> labels;
  for (size_t c = 0; c < ir::kOpCategoryCount; ++c) {
    if (d.callsA[c] == 0 && d.callsB[c] == 0) continue;
    ticks << static_cast<double>(ticks.size());
    labels << opCategoryLabel(static_cast<ir::OpCategory>(c));
    a << static_cast<double>(d.callsA[c]);
    b << static_cast<double>(d.callsB[c]);
  }
  auto* barsA = new QCPBars(plot_->xAxis, plot_->yAxis);
  auto* barsB = new QCPBars(plot_->xAxis, plot_->yAxis);
  barsA->setName(tr("A"));
  barsB->setName(tr("B"));
  barsA->setBrush(QColor(78, 121, 167));
  barsB->setBrush(QColor(242, 142, 43));
  barsA->setPen(Qt::NoPen);
  barsB->setPen(Qt::NoPen);
  auto* group = new QCPBarsGroup(plot_);
  barsA->setBarsGroup(group);
  barsB->setBarsGroup(group);
  barsA->setWidth(0.38);
  barsB->setWidth(0.38);
  barsA->setData(ticks, a);
  barsB->setData(ticks, b);
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  ticker->addTicks(ticks, labels);
  plot_->xAxis->setTicker(ticker);
  plot_->xAxis->setRange(-0.6, std::max<double>(1, static_cast<double>(ticks.size())) - 0.4);
  double most = 1;
  for (double v : a + b) most = std::max(most, v);
  plot_->yAxis->setRange(0, most * 1.15);
  plot_->replot();
}

void CompareView::comparePlans() {
  planDiff_.reset();
  if (!b_ || !b_->plan || !planA_) {
    plans_.abandon();
    showPlanDiff();
    return;
  }
  const std::shared_ptr<const PlanRun> run = planA_;
  const std::shared_ptr<const LoadedB> b = b_;
  const std::string capture = artifactA_ ? artifactA_->path.string() : std::string();
  // A's bundle is the plan on show as Save Plan writes it; its timeline takes a moment on a large graph.
  plans_.start(
      [run, b, capture](const JobProgress& progress) {
        const plan::PlanBundle a =
            passes::buildPlanBundle(run->target->context(progress), run->run, capture, run->graphId.toStdString());
        return plan::diffPlans(a, *b->plan);
      },
      [this](const JobOutcome<plan::PlanDiff>& outcome) {
        if (outcome.value) planDiff_ = *outcome.value;
        showPlanDiff();
      });
}

void CompareView::showPlanDiff() {
  QWidget* box = planTable_->parentWidget();
  if (planDiff_ && box->isHidden()) {
    // Shown anew: the plot keeps three fifths, whatever width the table's text asks for.
    const int width = std::max(top_->width(), 500);
    top_->setSizes({width * 3 / 5, width * 2 / 5});
  }
  box->setVisible(planDiff_.has_value());
  planTable_->setRowCount(0);
  if (!planDiff_) {
    emit planDiffChanged();
    return;
  }
  const plan::PlanDiff& d = *planDiff_;
  planTitle_->setText(tr("<b>Plans</b> A: %1 on %2 · B: %3 on %4%5")
                          .arg(toQString(d.pipelineA), toQString(d.hardwareA), toQString(d.pipelineB), toQString(d.hardwareB),
                               d.sameGraph ? QString() : tr(" (different graphs: decisions compared by node name)")));
  const auto add = [this](const QString& name, const QString& a, const QString& b, const QString& delta) {
    const int row = planTable_->rowCount();
    planTable_->insertRow(row);
    planTable_->setItem(row, 0, new QTableWidgetItem(name));
    for (int column = 1; column <= 3; ++column) {
      auto* item = new QTableWidgetItem(column == 1 ? a : column == 2 ? b : delta);
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      planTable_->setItem(row, column, item);
    }
  };
  for (const plan::PlanDiff::Estimate& e : d.estimates) {
    const QString delta = e.a && e.b ? toQString(formatEstimateChange(e.name, *e.a, *e.b)) : QString();
    const auto text = [&](double value) { return toQString(formatEstimate(e.name, value)); };
    add(passStatText({}, e.name).label, e.a ? text(*e.a) : QStringLiteral("—"), e.b ? text(*e.b) : QStringLiteral("—"), delta);
  }
  for (size_t c = 0; c < plan::kTimelineCategories; ++c) {
    if (d.atPeakA[c] == 0 && d.atPeakB[c] == 0) continue;
    add(tr("at the peak: %1").arg(memoryCategoryLabel(static_cast<analysis::MemoryCategory>(c))), formatBytes(d.atPeakA[c]), formatBytes(d.atPeakB[c]),
        toQString(formatBytesChange(d.atPeakA[c], d.atPeakB[c])));
  }
  const auto counts = [&](const QString& name, size_t a, size_t b) {
    const qlonglong delta = static_cast<qlonglong>(b) - static_cast<qlonglong>(a);
    add(name, QString::number(a), QString::number(b), delta > 0 ? QStringLiteral("+%1").arg(delta) : QString::number(delta));
  };
  counts(tr("values saved for the backward"), d.savedA, d.savedB);
  counts(tr("values recomputed"), d.recomputedA, d.recomputedB);
  add(tr("saved only by this plan"), QString::number(d.savedOnlyA.size()), QString::number(d.savedOnlyB.size()), {});
  counts(tr("fusion groups"), d.groupsA, d.groupsB);
  // The values one plan keeps and the other does not, with the keeping plan's reason, on hover.
  const auto names = [](const std::vector<plan::PlanDiff::Saved>& saved) {
    QStringList lines;
    for (size_t i = 0; i < saved.size() && i < 30; ++i) lines << toQString(saved[i].name) + QStringLiteral(" — ") + translated(saved[i].reason);
    if (saved.size() > 30) lines << tr("… %n more", nullptr, static_cast<int>(saved.size() - 30));
    return lines.join(QLatin1Char('\n'));
  };
  const int savedRow = planTable_->rowCount() - 2;
  planTable_->item(savedRow, 1)->setToolTip(names(d.savedOnlyA));
  planTable_->item(savedRow, 2)->setToolTip(names(d.savedOnlyB));
  planTable_->resizeColumnsToContents();
  emit planDiffChanged();
}

}  // namespace lathe::views

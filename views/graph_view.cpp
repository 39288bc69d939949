#include "views/graph_view.h"

#include <QAction>
#include <QComboBox>
#include <QCoreApplication>
#include <QFileInfo>
#include <QFontMetricsF>
#include <QGraphicsItem>
#include <QGraphicsPathItem>
#include <QGraphicsScene>
#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QStyleOptionGraphicsItem>
#include <QSvgGenerator>
#include <QToolButton>
#include <QWheelEvent>
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <exception>

#include "analysis/cost_model.h"
#include "hw/hw_profile.h"
#include "ir/op_info.h"
#include "passes/plan_target.h"
#include "util/diagnostics.h"
#include "views/formatting.h"
#include "views/graph_minimap.h"
#include "views/plan_session.h"

namespace lathe::views {

namespace {

// Below this scale a box's text would be unreadable: boxes are drawn plain.
constexpr double kTextLevelOfDetail = 0.45;
// Fitting the whole graph is worth it only when its text stays readable at that scale.
constexpr double kReadableScale = 0.6;
constexpr double kMinScale = 0.01;
constexpr double kMaxScale = 4.0;
constexpr double kWheelStep = 1.15;
constexpr qreal kLabelPixelSize = 11;
constexpr int kToolbarHeight = 34;
// Exported PNGs stay below this many pixels on their longer side.
constexpr double kMaxExportPixels = 16000;
// Unit and group colours: hues this far apart (the golden angle) stay distinct for neighbours.
constexpr double kGoldenAngle = 137.508;
constexpr size_t kMaxLegendUnits = 12;

// Item data: what a scene item stands for.
constexpr int kKindKey = 0;
constexpr int kIndexKey = 1;
enum class ItemKind { Node = 1, ClusterBox, FoldBox, Frame };

// Light fills so that black text stays readable, by OpCategory.
constexpr std::array<QRgb, ir::kOpCategoryCount> kCategoryFill{
    0xffd9d9d9,  // unknown
    0xff9ecae1,  // matmul
    0xffc6a5e0,  // attention
    0xff8fb6d9,  // convolution
    0xffb8e0b0,  // pointwise
    0xfff7c58f,  // reduction
    0xfff3a6a6,  // normalization
    0xfff2e394,  // data_movement
    0xffe6e6e6,  // view
    0xffd8c8b0,  // creation
    0xffe8b8d8,  // random
    0xffff9f80,  // collective
    0xfff4f4f4,  // getitem
    0xffcfcfcf,  // host
    0xffb0d8d8,  // higher_order
    0xffa0e0c8,  // custom
};
constexpr QRgb kInputFill = 0xffffffff;
constexpr QRgb kNeutralFill = 0xffe3e3e3;
constexpr QRgb kForwardFill = 0xffc7e9c0;
constexpr QRgb kBackwardFill = 0xfffcbba1;
constexpr QRgb kSavedFill = 0xfffd8d3c;
constexpr QRgb kRecomputedFill = 0xffa48fd6;
// Light yellow to deep orange: low to high size or time.
constexpr std::array<QRgb, 5> kRamp{0xffffffcc, 0xffffeda0, 0xfffed976, 0xfffeb24c, 0xfffd8d3c};

QColor rampColour(double fraction) {
  const double position = std::clamp(fraction, 0.0, 1.0) * static_cast<double>(kRamp.size() - 1);
  const size_t low = std::min(kRamp.size() - 2, static_cast<size_t>(position));
  const double t = position - static_cast<double>(low);
  const QColor a = QColor::fromRgb(kRamp[low]);
  const QColor b = QColor::fromRgb(kRamp[low + 1]);
  return QColor::fromRgbF(static_cast<float>(a.redF() + t * (b.redF() - a.redF())),
                          static_cast<float>(a.greenF() + t * (b.greenF() - a.greenF())),
                          static_cast<float>(a.blueF() + t * (b.blueF() - a.blueF())));
}

QColor paletteColour(int index) {
  const int hue = static_cast<int>(std::fmod(index * kGoldenAngle, 360.0));
  return QColor::fromHsl(hue, 150, 200);
}

// A value's position on a log scale between the smallest and largest positive values.
double logFraction(double value, double low, double high) {
  if (value <= 0 || high <= low) return high > 0 && value >= high ? 1.0 : 0.0;
  return (std::log(value) - std::log(low)) / (std::log(high) - std::log(low));
}

bool containsFolded(std::string_view haystack, const std::string& lowerNeedle) {
  if (lowerNeedle.empty() || haystack.size() < lowerNeedle.size()) return false;
  return std::search(haystack.begin(), haystack.end(), lowerNeedle.begin(), lowerNeedle.end(),
                     [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; }) != haystack.end();
}

uint64_t shownKey(const Shown& shown) {
  return (static_cast<uint64_t>(shown.kind) << 32) | shown.index;
}

QRectF toRect(const LayoutRect& rect) {
  return {rect.x, rect.y, rect.width, rect.height};
}

QPointF toPoint(const LayoutPoint& point) {
  return {point.x, point.y};
}

QFont labelFont(const QFont& base, bool bold) {
  QFont font = base;
  font.setPixelSize(static_cast<int>(kLabelPixelSize));
  font.setBold(bold);
  return font;
}

bool textVisible(const QPainter* painter) {
  return QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform()) >= kTextLevelOfDetail;
}

// One node's box: name over target, or a plain box when zoomed far out.
class NodeItem : public QGraphicsItem {
 public:
  NodeItem(const QRectF& rect, QString name, QString target, bool input)
      : rect_(rect), name_(std::move(name)), target_(std::move(target)), input_(input) {
    setFlag(ItemIsSelectable);
    setToolTip(name_ + QLatin1Char('\n') + target_);
  }

  void setFill(QColor fill) {
    fill_ = fill;
    update();
  }
  [[nodiscard]] QColor fill() const { return fill_; }
  [[nodiscard]] QRectF boundingRect() const override { return rect_.adjusted(-2, -2, 2, 2); }

  void paint(QPainter* painter, const QStyleOptionGraphicsItem* /*option*/, QWidget* /*widget*/) override {
    const bool selected = isSelected();
    QPen border(selected ? QColor(0xd62728) : QColor(0x555555), selected ? 3.0 : 1.0);
    if (input_ && !selected) border.setStyle(Qt::DashLine);
    painter->setPen(border);
    painter->setBrush(fill_);
    painter->drawRoundedRect(rect_, 3, 3);
    if (!textVisible(painter)) return;
    const QRectF inner = rect_.adjusted(4, 2, -4, -2);
    const QRectF top(inner.left(), inner.top(), inner.width(), inner.height() / 2);
    const QRectF bottom(inner.left(), inner.center().y(), inner.width(), inner.height() / 2);
    QFont font = labelFont(painter->font(), true);
    painter->setPen(Qt::black);
    painter->setFont(font);
    painter->drawText(top, Qt::AlignCenter, QFontMetricsF(font).elidedText(name_, Qt::ElideMiddle, inner.width()));
    font.setBold(false);
    painter->setFont(font);
    painter->setPen(QColor(0x333333));
    painter->drawText(bottom, Qt::AlignCenter, QFontMetricsF(font).elidedText(target_, Qt::ElideRight, inner.width()));
  }

 private:
  QRectF rect_;
  QColor fill_ = QColor::fromRgb(kNeutralFill);
  QString name_;
  QString target_;
  bool input_;
};

// A collapsed cluster or a fold (drawn as a stack of cards): title over node count.
class BoxItem : public QGraphicsItem {
 public:
  BoxItem(const QRectF& rect, QString title, QString subtitle, bool fold, int depth)
      : rect_(rect), title_(std::move(title)), subtitle_(std::move(subtitle)), fold_(fold), depth_(depth) {
    setToolTip(title_ + QLatin1Char('\n') + subtitle_ + QLatin1Char('\n') +
               QCoreApplication::translate("lathe::views::GraphView", "Double-click to open."));
  }

  void setHighlighted(bool highlighted) {
    highlighted_ = highlighted;
    update();
  }
  [[nodiscard]] QRectF boundingRect() const override { return rect_.adjusted(-2, -2, 2, 2); }

  void paint(QPainter* painter, const QStyleOptionGraphicsItem* /*option*/, QWidget* /*widget*/) override {
    const QColor fill = QColor::fromHsl(212, 55, std::max(175, 225 - 12 * depth_));
    QRectF card = rect_;
    painter->setPen(QPen(QColor(0x4a6a8a), 1.0));
    if (fold_) {
      // Two cards behind the front one say "several of these".
      constexpr double kOffset = 5;
      card = rect_.adjusted(0, 0, -2 * kOffset, -2 * kOffset);
      painter->setBrush(fill.darker(112));
      painter->drawRoundedRect(card.translated(2 * kOffset, 2 * kOffset), 4, 4);
      painter->drawRoundedRect(card.translated(kOffset, kOffset), 4, 4);
    }
    painter->setPen(highlighted_ ? QPen(QColor(0xd62728), 3.0) : QPen(QColor(0x4a6a8a), 1.5));
    painter->setBrush(fill);
    painter->drawRoundedRect(card, 4, 4);
    if (!textVisible(painter)) return;
    const QRectF inner = card.adjusted(6, 3, -6, -3);
    const QRectF top(inner.left(), inner.top(), inner.width(), inner.height() / 2);
    const QRectF bottom(inner.left(), inner.center().y(), inner.width(), inner.height() / 2);
    QFont font = labelFont(painter->font(), true);
    painter->setFont(font);
    painter->setPen(QColor(0x10263c));
    painter->drawText(top, Qt::AlignCenter, QFontMetricsF(font).elidedText(title_, Qt::ElideMiddle, inner.width()));
    font.setBold(false);
    painter->setFont(font);
    painter->setPen(QColor(0x2c4058));
    painter->drawText(bottom, Qt::AlignCenter, subtitle_);
  }

 private:
  QRectF rect_;
  QString title_;
  QString subtitle_;
  bool fold_;
  int depth_;
  bool highlighted_ = false;
};

// An expanded cluster: a tinted frame with its path as title; its inside is drawn over it.
class FrameItem : public QGraphicsItem {
 public:
  FrameItem(const QRectF& rect, QString title, double titleHeight, int depth, bool backward)
      : rect_(rect), title_(std::move(title)), titleHeight_(titleHeight), depth_(depth), backward_(backward) {
    setToolTip(title_ + QLatin1Char('\n') +
               QCoreApplication::translate("lathe::views::GraphView", "Double-click the frame to close it."));
  }

  [[nodiscard]] QRectF boundingRect() const override { return rect_.adjusted(-1, -1, 1, 1); }

  void paint(QPainter* painter, const QStyleOptionGraphicsItem* /*option*/, QWidget* /*widget*/) override {
    const int hue = backward_ ? 20 : 212;
    painter->setPen(QPen(QColor::fromHsl(hue, 40, 150), 1.0));
    painter->setBrush(QColor::fromHsl(hue, 45, std::max(200, 246 - 9 * depth_)));
    painter->drawRoundedRect(rect_, 6, 6);
    if (!textVisible(painter)) return;
    QFont font = labelFont(painter->font(), true);
    painter->setFont(font);
    painter->setPen(QColor::fromHsl(hue, 50, 60));
    const QRectF title(rect_.left() + 8, rect_.top() + 2, rect_.width() - 16, titleHeight_);
    painter->drawText(title, Qt::AlignLeft | Qt::AlignVCenter,
                      QFontMetricsF(font).elidedText(title_, Qt::ElideMiddle, title.width()));
  }

 private:
  QRectF rect_;
  QString title_;
  double titleHeight_;
  int depth_;
  bool backward_;
};

// All edges as one path: one item instead of thousands keeps big scenes cheap.
QPainterPath edgesPath(const std::vector<SceneEdge>& edges) {
  QPainterPath path;
  for (const SceneEdge& edge : edges) {
    const QPointF start = toPoint(edge.start);
    const QPointF tip = toPoint(edge.end);
    path.moveTo(start);
    path.lineTo(tip);
    QPointF direction = tip - start;
    const double length = std::hypot(direction.x(), direction.y());
    if (length < 1e-6) continue;
    const QPointF unit = direction / length;
    const QPointF normal(-unit.y(), unit.x());
    const QPointF base = tip - unit * 7.0;
    path.moveTo(base + normal * 3.5);
    path.lineTo(tip);
    path.lineTo(base - normal * 3.5);
  }
  return path;
}

}  // namespace

struct GraphView::LayoutJob {
  std::shared_ptr<const ir::Graph> graph;
  std::shared_ptr<const passes::PlanTarget> target;
  std::shared_ptr<const ClusterTree> tree;  // null: build it (and the default expansion)
  ExpansionState state;
  LevelCache levels;
  uint64_t generation = 0;
};

struct GraphView::LayoutResult {
  LayoutJob job;
  std::shared_ptr<const SceneLayout> scene;
};

namespace {

GraphView::LayoutResult runLayout(GraphView::LayoutJob job);

}  // namespace

GraphView::GraphView(QWidget* parent)
    : QGraphicsView(parent),
      toolbar_(new QWidget(this)),
      searchField_(new QLineEdit(toolbar_)),
      searchCount_(new QLabel(toolbar_)),
      overlayChooser_(new QComboBox(toolbar_)),
      busy_(new QLabel(this)),
      overlayLabel_(new QLabel(this)),
      legend_(new QLabel(this)),
      minimap_(new GraphMinimap(this)) {
  setObjectName(QStringLiteral("graphView"));
  setScene(new QGraphicsScene(this));
  scene()->setItemIndexMethod(QGraphicsScene::BspTreeIndex);
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setDragMode(QGraphicsView::ScrollHandDrag);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
  setBackgroundBrush(QColor(0xfafafa));
  setViewportMargins(0, kToolbarHeight, 0, 0);

  toolbar_->setObjectName(QStringLiteral("graphToolbar"));
  auto* bar = new QHBoxLayout(toolbar_);
  bar->setContentsMargins(6, 3, 6, 3);
  bar->setSpacing(4);
  searchField_->setObjectName(QStringLiteral("graphSearch"));
  searchField_->setPlaceholderText(tr("Find: name, op or module path"));
  searchField_->setClearButtonEnabled(true);
  searchField_->setMinimumWidth(240);
  searchField_->setToolTip(tr("Find nodes by name, op or module path (Ctrl+F); Enter or F3 jumps to the next match"));
  searchCount_->setObjectName(QStringLiteral("graphSearchCount"));
  searchCount_->setMinimumWidth(70);
  auto* previous = new QToolButton(toolbar_);
  previous->setArrowType(Qt::UpArrow);
  previous->setToolTip(tr("Previous match (Shift+F3)"));
  auto* next = new QToolButton(toolbar_);
  next->setArrowType(Qt::DownArrow);
  next->setToolTip(tr("Next match (Enter, F3)"));
  overlayChooser_->setObjectName(QStringLiteral("graphOverlay"));
  overlayChooser_->addItem(tr("Op category"), static_cast<int>(Overlay::Category));
  overlayChooser_->addItem(tr("Role"), static_cast<int>(Overlay::Role));
  overlayChooser_->addItem(tr("Fusion group"), static_cast<int>(Overlay::FusionGroup));
  overlayChooser_->addItem(tr("Saved / recomputed"), static_cast<int>(Overlay::Recompute));
  overlayChooser_->addItem(tr("Offload unit"), static_cast<int>(Overlay::OffloadUnit));
  overlayChooser_->addItem(tr("Size"), static_cast<int>(Overlay::Size));
  overlayChooser_->addItem(tr("Estimated time"), static_cast<int>(Overlay::Time));
  auto* reset = new QToolButton(toolbar_);
  reset->setText(tr("Fold all"));
  reset->setToolTip(tr("Fold repeated layers and close big clusters again"));
  auto* fit = new QToolButton(toolbar_);
  fit->setText(tr("Fit"));
  fit->setToolTip(tr("Fit the graph to the window"));
  fit->setObjectName(QStringLiteral("graphFit"));
  bar->addWidget(searchField_);
  bar->addWidget(previous);
  bar->addWidget(next);
  bar->addWidget(searchCount_);
  bar->addStretch(1);
  bar->addWidget(new QLabel(tr("Colour by"), toolbar_));
  bar->addWidget(overlayChooser_);
  bar->addWidget(reset);
  bar->addWidget(fit);

  connect(searchField_, &QLineEdit::textChanged, this, &GraphView::setSearchText);
  connect(searchField_, &QLineEdit::returnPressed, this, &GraphView::findNext);
  connect(next, &QToolButton::clicked, this, &GraphView::findNext);
  connect(previous, &QToolButton::clicked, this, &GraphView::findPrevious);
  connect(reset, &QToolButton::clicked, this, &GraphView::resetExpansion);
  connect(fit, &QToolButton::clicked, this, &GraphView::fitToWindow);
  connect(overlayChooser_, &QComboBox::currentIndexChanged, this,
          [this] { setOverlay(static_cast<Overlay>(overlayChooser_->currentData().toInt())); });
  auto addShortcut = [this](const QKeySequence& keys, void (GraphView::*slot)()) {
    auto* action = new QAction(this);
    action->setShortcut(keys);
    action->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(action, &QAction::triggered, this, slot);
    addAction(action);
  };
  addShortcut(QKeySequence(Qt::Key_F3), &GraphView::findNext);
  addShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F3), &GraphView::findPrevious);

  overlayLabel_->setObjectName(QStringLiteral("graphMessage"));
  overlayLabel_->setAlignment(Qt::AlignCenter);
  overlayLabel_->setStyleSheet(
      QStringLiteral("QLabel { background: rgba(255,255,255,220); border: 1px solid #aaa; padding: 12px; }"));
  overlayLabel_->hide();
  busy_->setText(tr("Laying out…"));
  busy_->setStyleSheet(QStringLiteral("QLabel { background: #fff3c4; border: 1px solid #d9b84a; padding: 3px 8px; }"));
  busy_->hide();
  legend_->setObjectName(QStringLiteral("graphLegend"));
  legend_->setTextFormat(Qt::RichText);
  legend_->setStyleSheet(
      QStringLiteral("QLabel { background: rgba(255,255,255,230); border: 1px solid #ccc; padding: 4px; }"));
  legend_->hide();

  connect(scene(), &QGraphicsScene::selectionChanged, this, &GraphView::onSceneSelectionChanged);
  placeOverlays();
}

bool GraphView::isLayingOut() const {
  return graph_ && (!shown_ || layouts_.busy() || relayoutWanted_);
}

void GraphView::clear() {
  setGraph(nullptr);
}

void GraphView::rememberState() {
  if (!graph_ || !tree_) return;
  cache_.removeIf([](const auto& entry) { return entry.value().graph.expired(); });
  cache_.insert(graphId_, GraphState{graph_, tree_, state_, levels_, shown_});
}

void GraphView::setGraph(std::shared_ptr<const passes::PlanTarget> target) {
  std::shared_ptr<const ir::Graph> graph = target ? target->sharedGraph() : nullptr;
  QString graphId = target ? toQString(target->graphId()) : QString();
  if (graph && graph == graph_ && graphId == graphId_) {
    target_ = std::move(target);  // the same graph on another target
    return;
  }
  rememberState();
  target_ = std::move(target);
  graph_ = std::move(graph);
  graphId_ = std::move(graphId);
  tree_.reset();
  state_ = {};
  levels_.clear();
  shown_.reset();
  selected_ = ir::kNoNode;
  selectAfterLayout_ = ir::kNoNode;
  ++generation_;
  if (graph_) {
    if (auto cached = cache_.constFind(graphId_);
        cached != cache_.constEnd() && cached->graph.lock() == graph_ && cached->scene) {
      tree_ = cached->tree;
      state_ = cached->state;
      levels_ = cached->levels;
      shown_ = cached->scene;
    }
  }
  setSearchText(searchField_->text());
  buildScene();
  if (!graph_) return;
  if (shown_) {
    fitToWindow();
    emit layoutShown();
    return;
  }
  overlayLabel_->setText(tr("Laying out %n node(s)…", nullptr, static_cast<int>(graph_->size())));
  overlayLabel_->adjustSize();
  overlayLabel_->show();
  placeOverlays();
  startLayout();
}

void GraphView::setPlanSession(PlanSession* session) {
  planSession_ = session;
  // Plan overlays follow the plan; the time overlay follows the session's target (its hardware, the
  // profile it is priced with).
  auto recolour = [this] {
    if (overlay_ != Overlay::Category && overlay_ != Overlay::Role && overlay_ != Overlay::Size) applyOverlay();
  };
  auto followTarget = [this] {
    if (planSession_->target() && planSession_->target()->sharedGraph() == graph_) setGraph(planSession_->target());
    if (overlay_ == Overlay::Time) applyOverlay();
  };
  connect(session, &PlanSession::finished, this, recolour);
  connect(session, &PlanSession::currentStepChanged, this, recolour);
  connect(session, &PlanSession::hardwareChanged, this, followTarget);
  connect(session, &PlanSession::profileChanged, this, followTarget);
}

namespace {

GraphView::LayoutResult runLayout(GraphView::LayoutJob job) {
  if (!job.tree) {
    job.tree = std::make_shared<const ClusterTree>(buildClusterTree(*job.target));
    job.state = defaultExpansion(*job.tree);
  }
  auto scene = std::make_shared<const SceneLayout>(composeLayout(*job.graph, *job.tree, job.state, job.levels));
  return {std::move(job), std::move(scene)};
}

}  // namespace

void GraphView::startLayout() {
  if (layouts_.busy()) {  // onLayoutFinished starts the next one
    relayoutWanted_ = true;
    return;
  }
  relayoutWanted_ = false;
  if (shown_) {
    busy_->show();
    placeOverlays();
  }
  layouts_.start([job = LayoutJob{graph_, target_, tree_, state_, levels_, generation_}](
                     const Progress&) mutable { return runLayout(std::move(job)); },
                 [this, graph = graph_](JobOutcome<LayoutResult> outcome) { onLayoutFinished(graph, std::move(outcome)); });
}

void GraphView::onLayoutFinished(const std::shared_ptr<const ir::Graph>& graph, JobOutcome<LayoutResult> outcome) {
  busy_->hide();
  if (!graph_ || graph != graph_) {  // the user moved on: keep what was made, lay out the graph on show
    if (outcome.value) {
      LayoutJob& job = outcome.value->job;
      cache_.insert(toQString(job.target->graphId()),
                    GraphState{job.graph, job.tree, job.state, std::move(job.levels), outcome.value->scene});
    }
    if (graph_ && isLayingOut()) startLayout();
    return;
  }
  if (!outcome.value) {
    overlayLabel_->setText(tr("Could not lay out %1: %2").arg(graphId_, outcome.error.message));
    overlayLabel_->adjustSize();
    overlayLabel_->show();
    placeOverlays();
    emit layoutFailed(outcome.error.message);
    return;
  }
  LayoutResult& result = *outcome.value;
  const bool first = !shown_;
  if (!tree_) {
    tree_ = result.job.tree;
    state_ = result.job.state;
    setSearchText(searchText_);
  }
  if (result.job.generation != generation_ || relayoutWanted_) {  // the expansion changed meanwhile
    startLayout();
    return;
  }
  levels_ = std::move(result.job.levels);
  shown_ = result.scene;
  const QPointF centre = mapToScene(viewport()->rect().center());
  buildScene();
  if (first) {
    fitToWindow();
  } else if (!showCluster(std::exchange(focusCluster_, -1))) {
    centerOn(centre);
  }
  if (selectAfterLayout_ != ir::kNoNode) {
    selected_ = std::exchange(selectAfterLayout_, ir::kNoNode);
    showSelection(true);
  } else {
    showSelection(first);
  }
  emit layoutShown();
}

void GraphView::buildScene() {
  selectingProgrammatically_ = true;
  scene()->clear();
  selectingProgrammatically_ = false;
  itemsByNode_.clear();
  boxesByShown_.clear();
  highlightedBox_ = nullptr;
  if (!shown_ || !graph_ || !tree_) {
    resetTransform();
    scene()->setSceneRect(QRectF());
    legend_->hide();
    if (!graph_) overlayLabel_->hide();
    return;
  }
  overlayLabel_->hide();
  const ir::Graph& graph = *graph_;
  const SceneLayout& layout = *shown_;
  for (const ClusterFrame& frame : layout.frames) {
    const Cluster& cluster = tree_->clusters[static_cast<size_t>(frame.cluster)];
    const bool backward = !cluster.subtree.empty() && tree_->backward[cluster.subtree.front()];
    auto* item =
        new FrameItem(toRect(frame.rect), toQString(cluster.title), frame.titleHeight, cluster.depth, backward);
    item->setData(kKindKey, static_cast<int>(ItemKind::Frame));
    item->setData(kIndexKey, frame.cluster);
    item->setZValue(-100 + cluster.depth);
    scene()->addItem(item);
  }
  // Translucent: edges cross frames and long ones should not hide what they pass over.
  auto* edges = scene()->addPath(edgesPath(layout.edges), QPen(QColor(90, 90, 90, 150), 1.0));
  edges->setZValue(0);
  for (const ClusterBox& box : layout.boxes) {
    const bool fold = box.what.kind == Shown::Kind::Fold;
    auto* item = new BoxItem(toRect(box.rect), toQString(box.title), toQString(box.subtitle), fold, box.depth);
    item->setData(kKindKey, static_cast<int>(fold ? ItemKind::FoldBox : ItemKind::ClusterBox));
    item->setData(kIndexKey, static_cast<int>(box.what.index));
    item->setZValue(1);
    scene()->addItem(item);
    boxesByShown_.emplace(shownKey(box.what), item);
  }
  for (const auto& [node, rect] : layout.nodes) {
    auto* item = new NodeItem(toRect(rect), toQString(graph.name(node)),
                              toQString(nodeShortTarget(graph, node, tree_->role[node])), graph.node(node).isInput());
    item->setData(kKindKey, static_cast<int>(ItemKind::Node));
    item->setData(kIndexKey, QVariant::fromValue(node));
    item->setZValue(2);
    scene()->addItem(item);
    itemsByNode_.emplace(node, item);
  }
  scene()->setSceneRect(toRect(layout.bounds).adjusted(-20, -20, 20, 20));
  applyOverlay();
  placeOverlays();
}

// ---- overlays ----

const plan::PlanState* GraphView::planState() const {
  if (!planSession_ || !planSession_->planRun() || planSession_->planRun()->graph != graph_) return nullptr;
  const int step = planSession_->currentStep();
  if (step < 0 || step >= planSession_->planRun()->stepCount()) return nullptr;
  return &planSession_->planRun()->stateAt(step);
}

QColor GraphView::overlayFill(ir::NodeId node) const {
  const ir::Graph& graph = *graph_;
  const ir::Node& data = graph.node(node);
  const plan::PlanState* plan = planState();
  switch (overlay_) {
    case Overlay::Category:
      if (!data.isCall()) return QColor::fromRgb(kInputFill);
      return QColor::fromRgb(kCategoryFill[static_cast<size_t>(ir::lookupOp(graph.target(node)).category)]);
    case Overlay::Role:
      switch (tree_->role[node]) {
        case ir::Role::Parameter: return QColor(0x9ecae1);
        case ir::Role::Buffer: return QColor(0xc6dbef);
        case ir::Role::Tangent: return QColor(0xfdd0a2);
        case ir::Role::SymInput: return QColor(0xeeeeee);
        default: break;
      }
      if (data.isInput()) return QColor::fromRgb(kInputFill);
      if (!tree_->backward[node]) return QColor::fromRgb(kForwardFill);
      return QColor::fromRgb(kBackwardFill);
    case Overlay::FusionGroup: {
      if (!plan || plan->group[node] == plan::kNone) return QColor::fromRgb(data.isInput() ? kInputFill : kNeutralFill);
      const plan::FusionGroup& group = plan->groups[static_cast<size_t>(plan->group[node])];
      const int hue = group.kind == "reduction" ? 30 : group.kind == "normalization" ? 0 : 120;
      return QColor::fromHsl(hue, 140, 150 + 25 * (group.id % 3));  // neighbours differ in shade
    }
    case Overlay::Recompute: {
      if (data.isInput()) return QColor::fromRgb(kInputFill);
      if (plan && plan->recompute) {
        const auto& decision = *plan->recompute;
        if (std::binary_search(decision.saved.begin(), decision.saved.end(), node)) return QColor::fromRgb(kSavedFill);
        if (std::binary_search(decision.recomputed.begin(), decision.recomputed.end(), node)) {
          return QColor::fromRgb(kRecomputedFill);
        }
      }
      return QColor::fromRgb(tree_->backward[node] ? kBackwardFill : kForwardFill);
    }
    case Overlay::OffloadUnit:
      if (!plan || plan->unit[node] == plan::kNone) return QColor::fromRgb(kNeutralFill);
      return paletteColour(plan->unit[node]);
    case Overlay::Size: {
      const uint64_t bytes = data.meta.isTensor() ? data.meta.storageBytes() : 0;
      if (bytes == 0) return QColor::fromRgb(kNeutralFill);
      return rampColour(logFraction(static_cast<double>(bytes), sizeRange_.first, sizeRange_.second));
    }
    case Overlay::Time: {
      const double seconds = target_ ? target_->nodeSeconds()[node] : 0;
      if (seconds <= 0) return QColor::fromRgb(kNeutralFill);
      return rampColour(logFraction(seconds, timeRange_.first, timeRange_.second));
    }
  }
  return QColor::fromRgb(kNeutralFill);
}

void GraphView::setOverlay(Overlay overlay) {
  overlay_ = overlay;
  const int index = overlayChooser_->findData(static_cast<int>(overlay));
  if (index != overlayChooser_->currentIndex()) overlayChooser_->setCurrentIndex(index);
  applyOverlay();
}

void GraphView::applyOverlay() {
  if (!graph_ || !shown_) {
    minimap_->sceneChanged();  // empty: hidden
    return;
  }
  const ir::Graph& graph = *graph_;
  // Ramps span the drawn nodes' values, so that the colours on screen use the whole ramp.
  auto range = [&](auto&& value) {
    std::pair<double, double> span{0, 0};
    for (const auto& [node, rect] : shown_->nodes) {
      const double v = value(node);
      if (v <= 0) continue;
      span.first = span.first == 0 ? v : std::min(span.first, v);
      span.second = std::max(span.second, v);
    }
    return span;
  };
  if (overlay_ == Overlay::Size) {
    sizeRange_ = range([&](ir::NodeId node) {
      const ir::Node& data = graph.node(node);
      return data.meta.isTensor() ? static_cast<double>(data.meta.storageBytes()) : 0.0;
    });
  }
  if (overlay_ == Overlay::Time && target_) {
    const std::vector<double>& seconds = target_->nodeSeconds();
    timeRange_ = range([&](ir::NodeId node) { return seconds[node]; });
  }
  for (const auto& [node, item] : itemsByNode_) static_cast<NodeItem*>(item)->setFill(overlayFill(node));
  updateLegend();
  minimap_->sceneChanged();
}

QColor GraphView::nodeFill(ir::NodeId node) const {
  const auto found = itemsByNode_.find(node);
  if (found == itemsByNode_.end()) return {};
  return static_cast<const NodeItem*>(found->second)->fill();
}

void GraphView::updateLegend() {
  legendEntries_.clear();
  const ir::Graph& graph = *graph_;
  const plan::PlanState* plan = planState();
  auto add = [this](QColor colour, const QString& label) {
    for (const auto& entry : legendEntries_) {
      if (entry.second == label) return;
    }
    legendEntries_.emplace_back(colour, label);
  };
  QString note;
  switch (overlay_) {
    case Overlay::Category: {
      std::array<bool, ir::kOpCategoryCount> present{};
      bool inputs = false;
      for (const auto& [node, rect] : shown_->nodes) {
        if (graph.node(node).isCall()) {
          present[static_cast<size_t>(ir::lookupOp(graph.target(node)).category)] = true;
        } else {
          inputs = true;
        }
      }
      if (inputs) add(QColor::fromRgb(kInputFill), tr("input"));
      for (size_t category = 0; category < present.size(); ++category) {
        if (present[category]) {
          add(QColor::fromRgb(kCategoryFill[category]),
              opCategoryLabel(static_cast<ir::OpCategory>(category)));
        }
      }
      break;
    }
    case Overlay::Role:
      for (const auto& [node, rect] : shown_->nodes) {
        const ir::Node& data = graph.node(node);
        QString label;
        switch (tree_->role[node]) {
          case ir::Role::Parameter: label = tr("parameter"); break;
          case ir::Role::Buffer: label = tr("buffer"); break;
          case ir::Role::Tangent: label = tr("tangent"); break;
          case ir::Role::SymInput: label = tr("symbolic size"); break;
          default: label = data.isInput() ? tr("input") : tree_->backward[node] ? tr("backward") : tr("forward"); break;
        }
        add(overlayFill(node), label);
      }
      break;
    case Overlay::FusionGroup:
      if (!plan) note = tr("No plan for this graph yet.");
      add(QColor::fromHsl(120, 140, 175), tr("pointwise group (shades tell neighbours apart)"));
      add(QColor::fromHsl(30, 140, 175), tr("reduction group"));
      add(QColor::fromHsl(0, 140, 175), tr("normalization group"));
      add(QColor::fromRgb(kNeutralFill), tr("not fused"));
      break;
    case Overlay::Recompute:
      if (!plan || !plan->recompute) note = tr("The plan on show has no recompute decision.");
      add(QColor::fromRgb(kSavedFill), tr("saved for the backward"));
      add(QColor::fromRgb(kRecomputedFill), tr("recomputed in the backward"));
      add(QColor::fromRgb(kForwardFill), tr("forward"));
      add(QColor::fromRgb(kBackwardFill), tr("backward"));
      add(QColor::fromRgb(kInputFill), tr("input"));
      break;
    case Overlay::OffloadUnit:
      if (!plan || plan->units.empty()) {
        note = tr("No layer units in the plan on show.");
        add(QColor::fromRgb(kNeutralFill), tr("no unit"));
        break;
      }
      for (size_t unit = 0; unit < plan->units.size() && unit < kMaxLegendUnits; ++unit) {
        const bool resident = plan->offload && unit < plan->offload->resident.size() && plan->offload->resident[unit];
        const QString name = toQString(plan->units[unit].name);
        add(paletteColour(static_cast<int>(unit)), resident ? tr("%1 (resident)").arg(name) : name);
      }
      if (plan->units.size() > kMaxLegendUnits) {
        note = tr("%n more unit(s) not listed.", nullptr, static_cast<int>(plan->units.size() - kMaxLegendUnits));
      }
      break;
    case Overlay::Size:
    case Overlay::Time: {
      const auto [low, high] = overlay_ == Overlay::Size ? sizeRange_ : timeRange_;
      auto label = [this](double value) {
        return overlay_ == Overlay::Size ? formatBytes(static_cast<uint64_t>(value)) : formatSeconds(value);
      };
      if (high > 0) {
        for (size_t stop = 0; stop < kRamp.size(); ++stop) {
          const double fraction = static_cast<double>(stop) / static_cast<double>(kRamp.size() - 1);
          add(rampColour(fraction), label(std::exp(std::log(low) + fraction * (std::log(high) - std::log(low)))));
        }
      }
      add(QColor::fromRgb(kNeutralFill), overlay_ == Overlay::Size ? tr("no tensor") : tr("no kernel"));
      if (overlay_ == Overlay::Time) {
        const QString hardware = target_ ? toQString(target_->hardware().name) : QString();
        note = target_ && !target_->calibration().empty()
                   ? tr("Measured by %1 where it timed a node, else the roofline estimate on %2.")
                         .arg(toQString(target_->calibration()), hardware)
                   : tr("Roofline estimate on %1.").arg(hardware);
      }
      break;
    }
  }
  QString rows;
  for (const auto& [colour, label] : legendEntries_) {
    rows += QStringLiteral(
                "<tr><td style=\"background-color:%1; border: 1px solid #999\">&nbsp;&nbsp;&nbsp;&nbsp;</td>"
                "<td>&nbsp;%2</td></tr>")
                .arg(colour.name(), label.toHtmlEscaped());
  }
  QString html =
      QStringLiteral("<b>%1</b><table cellspacing=\"2\">").arg(overlayChooser_->currentText().toHtmlEscaped()) + rows +
      QStringLiteral("</table>");
  if (!note.isEmpty()) html += QStringLiteral("<i>%1</i>").arg(note.toHtmlEscaped());
  legend_->setText(html);
  legend_->adjustSize();
  legend_->show();
  placeOverlays();
}

// ---- expand, collapse, select ----

void GraphView::relayoutAfter(const std::vector<int>& changedClusters) {
  for (const int cluster : changedClusters) invalidateAround(*tree_, cluster, levels_);
  ++generation_;
  startLayout();
}

bool GraphView::showCluster(int cluster) {
  if (cluster < 0 || !shown_) return false;
  QRectF rect;
  for (const ClusterFrame& frame : shown_->frames) {
    if (frame.cluster == cluster) rect = toRect(frame.rect);
  }
  if (rect.isNull()) {
    const int fold = tree_->clusters[static_cast<size_t>(cluster)].fold;
    for (const ClusterBox& box : shown_->boxes) {
      if (box.what == Shown{Shown::Kind::Cluster, static_cast<uint32_t>(cluster)} ||
          (fold >= 0 && box.what == Shown{Shown::Kind::Fold, static_cast<uint32_t>(fold)})) {
        rect = toRect(box.rect);
      }
    }
  }
  if (rect.isNull()) return false;
  // Its top in sight: a tall frame shows its title and first nodes rather than its middle.
  const double visibleHeight = viewport()->height() / transform().m22();
  centerOn(rect.center().x(), std::min(rect.center().y(), rect.top() - 20 + visibleHeight / 2));
  return true;
}

void GraphView::toggleCluster(int cluster) {
  if (!tree_ || cluster <= kRootCluster || cluster >= static_cast<int>(tree_->clusters.size())) return;
  focusCluster_ = cluster;
  auto& expanded = state_.expanded[static_cast<size_t>(cluster)];
  expanded = expanded ? 0 : 1;
  // Closing the last open member of an unfolded fold folds it again.
  const int fold = tree_->clusters[static_cast<size_t>(cluster)].fold;
  if (!expanded && fold >= 0) {
    const auto& members = tree_->folds[static_cast<size_t>(fold)].members;
    if (std::none_of(members.begin(), members.end(),
                     [&](int member) { return state_.expanded[static_cast<size_t>(member)]; })) {
      state_.unfolded[static_cast<size_t>(fold)] = 0;
    }
  }
  relayoutAfter({cluster});
}

void GraphView::toggleFold(int fold) {
  if (!tree_ || fold < 0 || fold >= static_cast<int>(tree_->folds.size())) return;
  auto& unfolded = state_.unfolded[static_cast<size_t>(fold)];
  unfolded = unfolded ? 0 : 1;
  focusCluster_ = tree_->folds[static_cast<size_t>(fold)].members.front();
  relayoutAfter({tree_->folds[static_cast<size_t>(fold)].members.front()});
}

void GraphView::resetExpansion() {
  if (!tree_) return;
  state_ = defaultExpansion(*tree_);
  levels_.clear();
  ++generation_;
  startLayout();
}

void GraphView::mouseDoubleClickEvent(QMouseEvent* event) {
  for (QGraphicsItem* item : items(event->pos())) {
    const auto kind = static_cast<ItemKind>(item->data(kKindKey).toInt());
    const int index = item->data(kIndexKey).toInt();
    if (kind == ItemKind::Node) break;  // a node: nothing to open
    if (kind == ItemKind::ClusterBox || kind == ItemKind::Frame) {
      toggleCluster(index);
      event->accept();
      return;
    }
    if (kind == ItemKind::FoldBox) {
      toggleFold(index);
      event->accept();
      return;
    }
  }
  QGraphicsView::mouseDoubleClickEvent(event);
}

void GraphView::showSelection(bool centre) {
  selectingProgrammatically_ = true;
  scene()->clearSelection();
  selectingProgrammatically_ = false;
  if (highlightedBox_) static_cast<BoxItem*>(std::exchange(highlightedBox_, nullptr))->setHighlighted(false);
  if (selected_ == ir::kNoNode || !shown_ || !tree_) return;
  QGraphicsItem* target = nullptr;
  if (const auto found = itemsByNode_.find(selected_); found != itemsByNode_.end()) {
    target = found->second;
    selectingProgrammatically_ = true;
    target->setSelected(true);
    selectingProgrammatically_ = false;
  } else if (const auto box = boxesByShown_.find(shownKey(shownAs(*tree_, state_, selected_)));
             box != boxesByShown_.end()) {
    target = box->second;
    highlightedBox_ = target;
    static_cast<BoxItem*>(target)->setHighlighted(true);
  }
  if (target && centre) centerOn(target);
}

void GraphView::selectNode(ir::NodeId node) {
  const auto found = itemsByNode_.find(node);
  // The echo of a click in this view: the node is selected and in sight already.
  if (node == selected_ && found != itemsByNode_.end() && found->second->isSelected()) return;
  selected_ = node;
  showSelection(true);
}

void GraphView::revealAndSelect(ir::NodeId node) {
  if (!graph_ || node >= graph_->size()) return;
  std::vector<int> changed;
  if (tree_ && revealNode(*tree_, node, state_, changed)) {
    selected_ = node;
    selectAfterLayout_ = node;
    showSelection(true);  // its box meanwhile
    relayoutAfter(changed);
  } else {
    selected_ = node;
    showSelection(true);
  }
  emit nodeSelected(node);
}

void GraphView::onSceneSelectionChanged() {
  if (selectingProgrammatically_) return;
  const QList<QGraphicsItem*> selectedItems = scene()->selectedItems();
  if (selectedItems.isEmpty()) return;  // a click on the background keeps the shared selection
  const ir::NodeId node = selectedItems.front()->data(kIndexKey).value<ir::NodeId>();
  if (node == selected_) return;
  selected_ = node;
  if (highlightedBox_) static_cast<BoxItem*>(std::exchange(highlightedBox_, nullptr))->setHighlighted(false);
  emit nodeSelected(node);
}

QPointF GraphView::nodeCentre(ir::NodeId node) const {
  const auto found = itemsByNode_.find(node);
  if (found == itemsByNode_.end()) return {};
  return found->second->boundingRect().center();
}

// ---- search ----

void GraphView::setSearchText(const QString& text) {
  searchText_ = text;
  if (searchField_->text() != text) searchField_->setText(text);
  matches_.clear();
  currentMatch_ = -1;
  const std::string needle = text.trimmed().toLower().toStdString();
  if (graph_ && !needle.empty()) {
    const ir::Graph& graph = *graph_;
    for (ir::NodeId id = 0; id < graph.size(); ++id) {
      if (graph.node(id).kind == ir::NodeKind::Output) continue;
      if (containsFolded(graph.name(id), needle) || containsFolded(graph.target(id), needle) ||
          (tree_ && containsFolded(tree_->modulePath[id], needle))) {
        matches_.push_back(id);
      }
    }
  }
  searchCount_->setText(searchStatus());
  emit searchStatusChanged(searchStatus());
}

QString GraphView::searchStatus() const {
  if (searchText_.trimmed().isEmpty()) return {};
  if (matches_.empty()) return tr("no match");
  return tr("%1 / %2").arg(currentMatch_ + 1).arg(matches_.size());
}

void GraphView::jumpToMatch(int index) {
  currentMatch_ = index;
  searchCount_->setText(searchStatus());
  emit searchStatusChanged(searchStatus());
  revealAndSelect(matches_[static_cast<size_t>(index)]);
}

void GraphView::findNext() {
  if (matches_.empty()) return;
  jumpToMatch((currentMatch_ + 1) % static_cast<int>(matches_.size()));
}

void GraphView::findPrevious() {
  if (matches_.empty()) return;
  const int count = static_cast<int>(matches_.size());
  jumpToMatch(currentMatch_ <= 0 ? count - 1 : currentMatch_ - 1);
}

void GraphView::focusSearch() {
  searchField_->setFocus(Qt::ShortcutFocusReason);
  searchField_->selectAll();
}

// ---- export ----

bool GraphView::exportView(const QString& path, QString* error) {
  auto fail = [&](const QString& why) {
    if (error) *error = why;
    return false;
  };
  if (!shown_) return fail(tr("No graph is laid out."));
  const QRectF source = scene()->sceneRect();
  const QString suffix = QFileInfo(path).suffix().toLower();
  // The legend goes in the top right corner, as on screen.
  auto drawLegend = [this](QPainter& painter, double width) {
    if (!legend_->isVisible()) return;
    painter.save();
    painter.translate(width - legend_->width() - 8, 8);
    legend_->render(&painter, QPoint(), QRegion(), QWidget::DrawChildren);
    painter.restore();
  };
  if (suffix == QLatin1String("svg")) {
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(source.size().toSize());
    svg.setViewBox(QRectF(QPointF(0, 0), source.size()));
    svg.setTitle(graphId_);
    svg.setDescription(tr("Graph %1 drawn by Lathe Studio").arg(graphId_));
    QPainter painter;
    if (!painter.begin(&svg)) return fail(tr("Cannot write %1.").arg(path));
    painter.fillRect(QRectF(QPointF(0, 0), source.size()), backgroundBrush());
    scene()->render(&painter, QRectF(QPointF(0, 0), source.size()), source);
    drawLegend(painter, source.width());
    painter.end();
    if (!QFileInfo(path).isFile() || QFileInfo(path).size() == 0) return fail(tr("Cannot write %1.").arg(path));
    return true;
  }
  if (suffix != QLatin1String("png")) return fail(tr("Export writes .svg or .png files, not %1.").arg(path));
  const double scale = std::min(1.0, kMaxExportPixels / std::max(source.width(), source.height()));
  QImage image((source.size() * scale).toSize(), QImage::Format_ARGB32_Premultiplied);
  if (image.isNull()) return fail(tr("The graph is too big for an image."));
  image.fill(backgroundBrush().color());
  {
    QPainter painter(&image);
    painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    scene()->render(&painter, QRectF(QPointF(0, 0), QSizeF(image.size())), source);
    drawLegend(painter, image.width());
  }
  if (!image.save(path, "PNG")) return fail(tr("Cannot write %1.").arg(path));
  return true;
}

// ---- geometry ----

void GraphView::placeOverlays() {
  const QRect area = viewport()->geometry();
  // As wide as the viewport: the vertical scroll bar runs the whole height beside it.
  toolbar_->setGeometry(frameWidth(), frameWidth(), area.width(), kToolbarHeight);
  overlayLabel_->move(area.center() - QPoint(overlayLabel_->width() / 2, overlayLabel_->height() / 2));
  busy_->adjustSize();
  busy_->move(area.left() + 8, area.top() + 8);
  legend_->move(area.right() - legend_->width() - 8, area.bottom() - legend_->height() - 8);
  minimap_->move(area.left() + 8, area.bottom() - minimap_->height() - 8);
  toolbar_->raise();
  legend_->raise();
  minimap_->raise();
  busy_->raise();
  overlayLabel_->raise();
}

void GraphView::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  placeOverlays();
}

void GraphView::wheelEvent(QWheelEvent* event) {
  const double steps = event->angleDelta().y() / 120.0;
  if (steps == 0) return;
  const double current = transform().m11();
  const double target = std::clamp(current * std::pow(kWheelStep, steps), kMinScale, kMaxScale);
  scale(target / current, target / current);
  event->accept();
}

void GraphView::fitToWindow() {
  if (!shown_) return;
  const QRectF bounds = scene()->sceneRect();
  const QSize area = viewport()->size();
  if (bounds.isEmpty() || area.isEmpty()) return;
  const double wholeScale = std::min(area.width() / bounds.width(), area.height() / bounds.height());
  resetTransform();
  if (wholeScale >= kReadableScale) {
    const double fitted = std::min(wholeScale, 1.5);
    scale(fitted, fitted);
    centerOn(bounds.center());
    return;
  }
  // A big graph: its full width when readable, else readable text; from the top either way.
  const double widthScale = std::clamp(area.width() / bounds.width(), kReadableScale, 1.0);
  scale(widthScale, widthScale);
  const double visibleWidth = area.width() / widthScale;
  const double visibleHeight = area.height() / widthScale;
  double centreX = bounds.center().x();
  if (visibleWidth < bounds.width()) {
    // Start where the graph starts: around the first node in program order.
    const QPointF selectedCentre = nodeCentre(selected_);
    centreX = !selectedCentre.isNull() ? selectedCentre.x()
              : shown_->nodes.empty()  ? bounds.center().x()
                                       : toRect(shown_->nodes.front().second).center().x();
  }
  centerOn(centreX, bounds.top() + visibleHeight / 2);
}

}  // namespace lathe::views

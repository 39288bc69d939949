#include "views/graph_view.h"

#include <QFontMetricsF>
#include <QGraphicsItem>
#include <QGraphicsPathItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QLabel>
#include <QPainter>
#include <QPainterPath>
#include <QStyleOptionGraphicsItem>
#include <QToolButton>
#include <QWheelEvent>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <array>
#include <cmath>
#include <exception>

#include "ir/op_info.h"
#include "views/formatting.h"

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
constexpr int kNodeIdKey = 0;

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

bool isInput(const ir::Node& node) {
  return node.kind == ir::NodeKind::Placeholder || node.kind == ir::NodeKind::GetAttr;
}

QColor fillFor(const ir::Graph& graph, ir::NodeId node) {
  if (!isCallNode(graph.node(node))) return QColor::fromRgb(kInputFill);
  return QColor::fromRgb(kCategoryFill[static_cast<size_t>(ir::lookupOp(graph.target(node)).category)]);
}

// One node's box: name over target, or a plain box when zoomed far out.
class NodeItem : public QGraphicsItem {
 public:
  NodeItem(const QRectF& rect, QColor fill, QString name, QString target, bool input)
      : rect_(rect), fill_(fill), name_(std::move(name)), target_(std::move(target)), input_(input) {
    setFlag(ItemIsSelectable);
    setToolTip(name_ + QLatin1Char('\n') + target_);
  }

  [[nodiscard]] QRectF boundingRect() const override { return rect_.adjusted(-2, -2, 2, 2); }

  void paint(QPainter* painter, const QStyleOptionGraphicsItem* /*option*/, QWidget* /*widget*/) override {
    const bool selected = isSelected();
    QPen border(selected ? QColor(0xd62728) : QColor(0x555555), selected ? 3.0 : 1.0);
    if (input_ && !selected) border.setStyle(Qt::DashLine);
    painter->setPen(border);
    painter->setBrush(fill_);
    painter->drawRoundedRect(rect_, 3, 3);
    if (QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform()) < kTextLevelOfDetail) {
      return;
    }
    QFont font = painter->font();
    font.setPixelSize(static_cast<int>(kLabelPixelSize));
    const QRectF inner = rect_.adjusted(4, 2, -4, -2);
    const QRectF top(inner.left(), inner.top(), inner.width(), inner.height() / 2);
    const QRectF bottom(inner.left(), inner.center().y(), inner.width(), inner.height() / 2);
    painter->setPen(Qt::black);
    font.setBold(true);
    painter->setFont(font);
    painter->drawText(top, Qt::AlignCenter, QFontMetricsF(font).elidedText(name_, Qt::ElideMiddle, inner.width()));
    font.setBold(false);
    painter->setFont(font);
    painter->setPen(QColor(0x333333));
    painter->drawText(bottom, Qt::AlignCenter, QFontMetricsF(font).elidedText(target_, Qt::ElideRight, inner.width()));
  }

 private:
  QRectF rect_;
  QColor fill_;
  QString name_;
  QString target_;
  bool input_;
};

QPointF toPoint(const LayoutPoint& point) {
  return {point.x, point.y};
}

QRectF toRect(const LayoutRect& rect) {
  return {rect.x, rect.y, rect.width, rect.height};
}

QPainterPath edgePath(const EdgeLayout& edge) {
  QPainterPath path;
  if (edge.spline.empty()) return path;
  path.moveTo(toPoint(edge.spline.front()));
  size_t i = 1;
  for (; i + 2 < edge.spline.size(); i += 3) {
    path.cubicTo(toPoint(edge.spline[i]), toPoint(edge.spline[i + 1]), toPoint(edge.spline[i + 2]));
  }
  for (; i < edge.spline.size(); ++i) path.lineTo(toPoint(edge.spline[i]));
  // The arrowhead: a triangle from the curve's end to the tip on the target's border.
  const QPointF end = toPoint(edge.spline.back());
  const QPointF tip = toPoint(edge.arrowTip);
  QPointF direction = tip - end;
  double length = std::hypot(direction.x(), direction.y());
  if (length < 1e-6) {
    direction = QPointF(0, 1);
    length = 1;
  }
  const QPointF unit = direction / length;
  const QPointF normal(-unit.y(), unit.x());
  const QPointF base = tip - unit * 7.0;
  path.moveTo(end);
  path.lineTo(tip);
  path.moveTo(base + normal * 3.5);
  path.lineTo(tip);
  path.lineTo(base - normal * 3.5);
  return path;
}

}  // namespace

GraphView::GraphView(QWidget* parent)
    : QGraphicsView(parent),
      watcher_(new QFutureWatcher<LayoutResult>(this)),
      overlay_(new QLabel(this)),
      legend_(new QLabel(this)),
      fitButton_(new QToolButton(this)) {
  setObjectName(QStringLiteral("graphView"));
  setScene(new QGraphicsScene(this));
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setDragMode(QGraphicsView::ScrollHandDrag);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
  setBackgroundBrush(QColor(0xfafafa));

  overlay_->setObjectName(QStringLiteral("graphOverlay"));
  overlay_->setAlignment(Qt::AlignCenter);
  overlay_->setStyleSheet(
      QStringLiteral("QLabel { background: rgba(255,255,255,220); border: 1px solid #aaa; padding: 12px; }"));
  overlay_->hide();
  legend_->setObjectName(QStringLiteral("graphLegend"));
  legend_->setTextFormat(Qt::RichText);
  legend_->setStyleSheet(
      QStringLiteral("QLabel { background: rgba(255,255,255,230); border: 1px solid #ccc; padding: 4px; }"));
  legend_->hide();
  fitButton_->setText(tr("Fit"));
  fitButton_->setToolTip(tr("Fit the graph to the window"));
  fitButton_->setObjectName(QStringLiteral("graphFit"));
  connect(fitButton_, &QToolButton::clicked, this, &GraphView::fitToWindow);

  connect(watcher_, &QFutureWatcher<LayoutResult>::finished, this, &GraphView::onLayoutFinished);
  connect(scene(), &QGraphicsScene::selectionChanged, this, &GraphView::onSceneSelectionChanged);
}

GraphView::~GraphView() = default;

bool GraphView::isLayingOut() const {
  return graph_ && !shown_;
}

void GraphView::clear() {
  graph_.reset();
  graphId_.clear();
  shown_.reset();
  selected_ = ir::kNoNode;
  buildScene();
}

void GraphView::setGraph(std::shared_ptr<const ir::Graph> graph, QString graphId) {
  if (graph && graph == graph_ && graphId == graphId_) return;
  graph_ = std::move(graph);
  graphId_ = std::move(graphId);
  shown_.reset();
  selected_ = ir::kNoNode;
  if (!graph_) {
    buildScene();
    return;
  }
  if (auto cached = cache_.constFind(graphId_); cached != cache_.constEnd() && cached->graph.lock() == graph_) {
    shown_ = cached->layout;
    buildScene();
    emit layoutShown();
    return;
  }
  buildScene();  // empties the scene under the overlay
  const size_t nodes = graph_->size();
  overlay_->setText(tr("Laying out %n node(s)…", nullptr, static_cast<int>(nodes)));
  overlay_->adjustSize();
  overlay_->show();
  placeOverlays();
  if (watcher_->isRunning()) return;  // onLayoutFinished starts this one
  layingOut_ = graph_;
  layingOutId_ = graphId_;
  watcher_->setFuture(QtConcurrent::run([graph = graph_]() -> LayoutResult {
    try {
      return {std::make_shared<const GraphLayout>(layoutGraph(*graph)), {}};
    } catch (const std::exception& error) {
      return {nullptr, QString::fromUtf8(error.what())};
    }
  }));
}

void GraphView::onLayoutFinished() {
  const LayoutResult result = watcher_->result();
  const std::shared_ptr<const ir::Graph> laidOut = std::exchange(layingOut_, nullptr);
  const QString laidOutId = std::exchange(layingOutId_, QString());
  // Layouts of graphs that are gone (an earlier artifact) only hold memory.
  cache_.removeIf([](const auto& entry) { return entry.value().graph.expired(); });
  if (result.layout) cache_.insert(laidOutId, CachedLayout{laidOut, result.layout});
  if (!graph_) return;
  if (laidOut != graph_) {  // the user moved on meanwhile: lay out the graph now on show
    const auto graph = std::exchange(graph_, nullptr);
    const QString id = graphId_;
    setGraph(graph, id);
    return;
  }
  if (!result.layout) {
    overlay_->setText(tr("Could not lay out %1: %2").arg(graphId_, result.error));
    overlay_->adjustSize();
    placeOverlays();
    emit layoutFailed(result.error);
    return;
  }
  const ir::NodeId wanted = selected_;
  shown_ = result.layout;
  buildScene();
  selected_ = wanted;
  if (wanted != ir::kNoNode) selectNode(wanted);
  fitToWindow();
  emit layoutShown();
}

void GraphView::buildScene() {
  selectingProgrammatically_ = true;
  scene()->clear();
  selectingProgrammatically_ = false;
  itemsByNode_.clear();
  resetTransform();
  if (!shown_ || !graph_) {
    scene()->setSceneRect(QRectF());
    legend_->hide();
    if (!graph_) overlay_->hide();
    return;
  }
  overlay_->hide();
  const ir::Graph& graph = *graph_;
  const GraphLayout& layout = *shown_;
  for (const ClusterLayout& cluster : layout.clusters) {
    const QRectF rect = toRect(cluster.rect);
    auto* box = scene()->addRect(rect, QPen(QColor(0xb0b0b0), 1.0),
                                 QColor::fromHsl(210, 40, std::max(200, 245 - 10 * cluster.depth)));
    box->setZValue(-10 + cluster.depth);
    auto* label = scene()->addSimpleText(toQString(cluster.label));
    QFont font = label->font();
    font.setPixelSize(static_cast<int>(kLabelPixelSize));
    label->setFont(font);
    label->setBrush(QColor(0x555555));
    label->setPos(rect.center().x() - label->boundingRect().width() / 2, rect.top() + 2);
    label->setZValue(box->zValue());
  }
  const QPen edgePen(QColor(0x7a7a7a), 1.0);
  for (const EdgeLayout& edge : layout.edges) {
    auto* item = scene()->addPath(edgePath(edge), edgePen);
    item->setZValue(0);
  }
  for (const NodeLayout& node : layout.nodes) {
    auto* item = new NodeItem(toRect(node.rect), fillFor(graph, node.node), toQString(graph.name(node.node)),
                              toQString(nodeShortTarget(graph, node.node)), isInput(graph.node(node.node)));
    item->setData(kNodeIdKey, QVariant::fromValue(node.node));
    item->setZValue(1);
    scene()->addItem(item);
    itemsByNode_.emplace(node.node, item);
  }
  scene()->setSceneRect(toRect(layout.bounds).adjusted(-20, -20, 20, 20));
  updateLegend();
  placeOverlays();
}

void GraphView::updateLegend() {
  std::array<bool, ir::kOpCategoryCount> present{};
  bool inputs = false;
  for (const NodeLayout& node : shown_->nodes) {
    const ir::Node& data = graph_->node(node.node);
    if (isCallNode(data)) {
      present[static_cast<size_t>(ir::lookupOp(graph_->target(node.node)).category)] = true;
    } else {
      inputs = true;
    }
  }
  auto swatch = [](QRgb colour, const QString& name) {
    return QStringLiteral("<tr><td style=\"background-color:%1\">&nbsp;&nbsp;&nbsp;&nbsp;</td><td>&nbsp;%2</td></tr>")
        .arg(QColor::fromRgb(colour).name(), name.toHtmlEscaped());
  };
  QString rows;
  if (inputs) rows += swatch(kInputFill, tr("input"));
  for (size_t category = 0; category < present.size(); ++category) {
    if (present[category]) {
      rows += swatch(kCategoryFill[category], toQString(ir::categoryName(static_cast<ir::OpCategory>(category))));
    }
  }
  legend_->setText(QStringLiteral("<table cellspacing=\"2\">") + rows + QStringLiteral("</table>"));
  legend_->adjustSize();
  legend_->show();
}

void GraphView::placeOverlays() {
  const QRect area = viewport()->geometry();
  overlay_->move(area.center() - QPoint(overlay_->width() / 2, overlay_->height() / 2));
  fitButton_->adjustSize();
  fitButton_->move(area.right() - fitButton_->width() - 8, area.top() + 8);
  legend_->move(area.right() - legend_->width() - 8, area.bottom() - legend_->height() - 8);
  fitButton_->raise();
  legend_->raise();
  overlay_->raise();
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
    centreX = selected_ != ir::kNoNode
                  ? nodeCentre(selected_).x()
                  : toRect(shown_->nodes.empty() ? shown_->bounds : shown_->nodes.front().rect).center().x();
  }
  centerOn(centreX, bounds.top() + visibleHeight / 2);
}

QPointF GraphView::nodeCentre(ir::NodeId node) const {
  const auto found = itemsByNode_.find(node);
  if (found == itemsByNode_.end()) return {};
  return found->second->boundingRect().center();
}

void GraphView::selectNode(ir::NodeId node) {
  const auto found = itemsByNode_.find(node);
  // The echo of a click in this view: the node is selected and in sight already.
  if (node == selected_ && found != itemsByNode_.end() && found->second->isSelected()) return;
  selected_ = node;
  if (!shown_) return;  // applied once the layout is on show
  selectingProgrammatically_ = true;
  scene()->clearSelection();
  if (found != itemsByNode_.end()) {
    found->second->setSelected(true);
    centerOn(found->second);
  }
  selectingProgrammatically_ = false;
}

void GraphView::onSceneSelectionChanged() {
  if (selectingProgrammatically_) return;
  const QList<QGraphicsItem*> items = scene()->selectedItems();
  if (items.isEmpty()) return;  // a click on the background keeps the shared selection
  const ir::NodeId node = items.front()->data(kNodeIdKey).value<ir::NodeId>();
  if (node == selected_) return;
  selected_ = node;
  emit nodeSelected(node);
}

}  // namespace lathe::views

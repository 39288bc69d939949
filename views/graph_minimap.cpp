#include "views/graph_minimap.h"

#include <QGraphicsScene>
#include <QGraphicsView>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <algorithm>

namespace lathe::views {

namespace {
constexpr int kBorder = 1;
}

GraphMinimap::GraphMinimap(QGraphicsView* view) : QWidget(view), view_(view) {
  setObjectName(QStringLiteral("graphMinimap"));
  setCursor(Qt::PointingHandCursor);
  setToolTip(tr("The whole graph: click or drag to move the view"));
  hide();
  // Every scroll and zoom moves a scroll bar's value or range: the frame follows them, once the
  // view has finished moving (a zoom changes the range before the view's transform is complete).
  for (QScrollBar* bar : {view->horizontalScrollBar(), view->verticalScrollBar()}) {
    connect(bar, &QScrollBar::valueChanged, this, &GraphMinimap::viewChanged, Qt::QueuedConnection);
    connect(bar, &QScrollBar::rangeChanged, this, &GraphMinimap::viewChanged, Qt::QueuedConnection);
  }
}

double GraphMinimap::mapScale() const {
  if (sceneRect_.isEmpty()) return 1;
  return std::min((kMaxWidth - 2.0 * kBorder) / sceneRect_.width(), (kMaxHeight - 2.0 * kBorder) / sceneRect_.height());
}

void GraphMinimap::sceneChanged() {
  // The laid-out bounds (what Fit fits), not the items' bounding rect: no walk over the items.
  QGraphicsScene* scene = view_->scene();
  sceneRect_ = scene ? scene->sceneRect() : QRectF();
  picture_ = {};  // drawn again when next painted: a colouring changes while the map is hidden too
  if (!sceneRect_.isEmpty()) {
    const double scale = mapScale();
    resize(QSize(std::max(1, static_cast<int>(sceneRect_.width() * scale)), std::max(1, static_cast<int>(sceneRect_.height() * scale))) +
           QSize(2 * kBorder, 2 * kBorder));
  }
  viewChanged();
}

QRectF GraphMinimap::shownSceneRect() const {
  return view_->mapToScene(view_->viewport()->rect()).boundingRect();
}

QPointF GraphMinimap::mapFromScene(const QPointF& scenePoint) const {
  return (scenePoint - sceneRect_.topLeft()) * mapScale() + QPointF(kBorder, kBorder);
}

void GraphMinimap::viewChanged() {
  const bool allInView = sceneRect_.isEmpty() || shownSceneRect().contains(sceneRect_);
  setVisible(!allInView);
  update();
}

void GraphMinimap::paintEvent(QPaintEvent*) {
  if (picture_.isNull() && !sceneRect_.isEmpty()) {
    picture_ = QPixmap(size() - QSize(2 * kBorder, 2 * kBorder));
    picture_.fill(QColor(0xfa, 0xfa, 0xfa));
    QPainter scenePainter(&picture_);
    scenePainter.setRenderHint(QPainter::Antialiasing);
    view_->scene()->render(&scenePainter, QRectF(QPointF(0, 0), QSizeF(picture_.size())), sceneRect_, Qt::KeepAspectRatio);
  }
  QPainter painter(this);
  painter.fillRect(rect(), QColor(255, 255, 255, 235));
  painter.drawPixmap(kBorder, kBorder, picture_);
  painter.setPen(QColor(0xaa, 0xaa, 0xaa));
  painter.drawRect(rect().adjusted(0, 0, -1, -1));
  // The part on show, clipped to the map.
  const QRectF shown = shownSceneRect().intersected(sceneRect_);
  const QRectF frame(mapFromScene(shown.topLeft()), mapFromScene(shown.bottomRight()));
  painter.setPen(QPen(QColor(0x1f, 0x6f, 0xc0), 1.5));
  painter.setBrush(QColor(0x1f, 0x6f, 0xc0, 40));
  painter.drawRect(frame);
}

void GraphMinimap::centreViewAt(const QPointF& mapPoint) {
  if (sceneRect_.isEmpty()) return;
  view_->centerOn(sceneRect_.topLeft() + (mapPoint - QPointF(kBorder, kBorder)) / mapScale());
  viewChanged();
}

void GraphMinimap::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton) centreViewAt(event->position());
  event->accept();
}

void GraphMinimap::mouseMoveEvent(QMouseEvent* event) {
  if (event->buttons() & Qt::LeftButton) centreViewAt(event->position());
  event->accept();
}

}  // namespace lathe::views

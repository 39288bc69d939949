// The whole drawing in small, in a corner of a QGraphicsView, with the part on show framed: where
// a large graph does not fit at a readable zoom (GraphView::fitToWindow stops there), it shows where
// the view is and a click or a drag on it moves the view there. Hidden while everything is in view.
#pragma once

#include <QPixmap>
#include <QWidget>

class QGraphicsView;

namespace lathe::views {

class GraphMinimap : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kMaxWidth = 220, kMaxHeight = 160;

  explicit GraphMinimap(QGraphicsView* view);

  // The scene's items changed (a new layout, another colouring): the picture is drawn again when
  // the map is next painted, so a hidden map costs nothing.
  void sceneChanged();
  // The view scrolled or zoomed: frame the part on show; hide when all of it is.
  void viewChanged();
  // The part of the scene on show, framed on the map (scene coordinates).
  [[nodiscard]] QRectF shownSceneRect() const;
  // The map position (widget coordinates) that stands for a scene point.
  [[nodiscard]] QPointF mapFromScene(const QPointF& scenePoint) const;

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;

 private:
  void centreViewAt(const QPointF& mapPoint);
  [[nodiscard]] double mapScale() const;

  QGraphicsView* view_;
  QPixmap picture_;  // the scene in small; null until painted after a change
  QRectF sceneRect_;
};

}  // namespace lathe::views

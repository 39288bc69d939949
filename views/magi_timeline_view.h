// A MagiCompiler dump's compile lifecycle, per model: each lifecycle a lane, each run of it a span
// from its before event to its after event (failed runs red, marks as ticks) over the events' table
// (MagiTimelineModel), and the files MagiCompiler wrote for the chosen event (graphs before and
// after each lifecycle, Inductor's output) beside it. Clicking a span selects its event; a model
// opens on its first failure.
#pragma once

#include <QWidget>
#include <memory>
#include <vector>

#include "io/artifact.h"

class QComboBox;
class QCPCurve;
class QCustomPlot;
class QLabel;
class QMouseEvent;
class QPlainTextEdit;
class QSortFilterProxyModel;
class QTableView;

namespace lathe::views {

class MagiTimelineModel;

class MagiTimelineView : public QWidget {
  Q_OBJECT

 public:
  explicit MagiTimelineView(QWidget* parent = nullptr);

  void setArtifact(std::shared_ptr<const io::Artifact> artifact);
  [[nodiscard]] bool hasTimeline() const;
  // Shows model `index` of the dump (the box above the plot when the dump holds several).
  void showModel(int index);
  // Selects the event with this timeline index: its row, its span and its first file.
  bool selectEvent(int64_t index);

  [[nodiscard]] MagiTimelineModel* model() const { return model_; }
  [[nodiscard]] QTableView* table() const { return table_; }
  [[nodiscard]] QCustomPlot* plot() const { return plot_; }
  [[nodiscard]] QComboBox* fileBox() const { return fileBox_; }
  [[nodiscard]] QPlainTextEdit* fileText() const { return fileText_; }
  [[nodiscard]] int spanCount() const { return static_cast<int>(spans_.size()); }
  [[nodiscard]] int laneCount() const { return lanes_; }
  // The timeline index of the event whose span or tick is at this plot position, -1 when none.
  [[nodiscard]] int64_t eventAt(QPointF pixel) const;

 signals:
  void eventSelected(qint64 index);

 private:
  struct Span {
    double start = 0, end = 0;
    int lane = 0;
    int64_t event = 0;
  };
  void draw();
  void onCurrentRowChanged();
  void showFile(int fileIndex);
  void onPlotClicked(QMouseEvent* event);
  void onMouseMove(QMouseEvent* event);

  std::shared_ptr<const io::Artifact> artifact_;
  QLabel* summary_;
  QComboBox* modelBox_;
  QCustomPlot* plot_;
  QTableView* table_;
  QSortFilterProxyModel* proxy_;
  MagiTimelineModel* model_;
  QComboBox* fileBox_;
  QPlainTextEdit* fileText_;
  std::vector<Span> spans_;
  QCPCurve* selected_ = nullptr;  // the chosen event's run, over its lane
  int lanes_ = 0;
};

}  // namespace lathe::views

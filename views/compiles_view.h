// Where compile time went, per compile of a TORCH_TRACE log: a bar per compile stacked by phase
// (Dynamo, AOTAutograd, Inductor, code generation, a backward compiled at its first call) over the
// CompileMetricsModel table, with cache hits, graph breaks and guard counts. Double-clicking a row
// or a bar asks for that compile's graphs.
#pragma once

#include <QWidget>
#include <memory>

#include "io/artifact.h"

class QCustomPlot;
class QLabel;
class QMouseEvent;
class QSortFilterProxyModel;
class QTableView;

namespace lathe::views {

class CompileMetricsModel;

class CompilesView : public QWidget {
  Q_OBJECT

 public:
  explicit CompilesView(QWidget* parent = nullptr);

  void setArtifact(std::shared_ptr<const io::Artifact> artifact);
  [[nodiscard]] CompileMetricsModel* model() const { return model_; }
  [[nodiscard]] QCustomPlot* plot() const { return plot_; }
  [[nodiscard]] QTableView* table() const { return table_; }
  // Bars drawn: the compiles that logged any compile time.
  [[nodiscard]] int barCount() const { return bars_; }

 signals:
  // The compile (TraceCompile::id) whose graphs the user asked for.
  void compileActivated(const QString& compileId);

 private:
  void draw();
  void onPlotClicked(QMouseEvent* event);
  void onMouseMove(QMouseEvent* event);
  [[nodiscard]] int modelRowAtBar(double key) const;

  QLabel* summary_;
  QCustomPlot* plot_;
  QTableView* table_;
  QSortFilterProxyModel* proxy_;
  CompileMetricsModel* model_;
  std::vector<int> barRows_;  // model row of each bar, bottom up
  int bars_ = 0;
};

}  // namespace lathe::views

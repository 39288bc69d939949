// A CUDA memory snapshot opened on its own, as memory_viz shows one: the active memory over the
// trace (allocated and reserved bytes, the peak marked, a readout under the mouse), the allocator's
// state at the moment clicked (the live allocations, largest first; the peak's at first) and the
// call stack of the allocation selected. One device at a time, the busiest first.
#pragma once

#include <QWidget>
#include <memory>

#include "analysis/snapshot_timeline.h"
#include "io/artifact.h"

class QCustomPlot;
class QCPItemStraightLine;
class QComboBox;
class QLabel;
class QMouseEvent;
class QPlainTextEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;

namespace lathe::views {

class SnapshotAllocationsModel;

class SnapshotView : public QWidget {
  Q_OBJECT

 public:
  explicit SnapshotView(QWidget* parent = nullptr);

  void setSnapshot(std::shared_ptr<const io::Artifact> artifact,
                   std::shared_ptr<const analysis::SnapshotTimeline> timeline);
  void clear();
  [[nodiscard]] bool hasSnapshot() const { return device_ != nullptr; }
  [[nodiscard]] const analysis::DeviceMemoryTimeline* device() const { return device_; }
  // Shows what is live just after event `eventIndex` (analysis::kBeforeTrace: before the trace).
  void showMoment(uint32_t eventIndex);
  [[nodiscard]] uint32_t moment() const { return moment_; }
  [[nodiscard]] SnapshotAllocationsModel* allocations() const { return allocations_; }
  // The readout under the mouse at `x` on the time axis (what the tooltip says).
  [[nodiscard]] QString readoutAt(double x) const;
  [[nodiscard]] QCustomPlot* plot() const { return plot_; }

 signals:
  void momentChanged(uint32_t eventIndex);

 private:
  void showDevice(int index);
  void draw();
  void onMouseMove(QMouseEvent* event);
  void onPlotClicked(QMouseEvent* event);
  void showStackOfCurrentRow();
  // Where a point of the trace lies on the time axis: seconds since the first event where the file
  // has times, else the event's index.
  [[nodiscard]] double xOf(const analysis::MemoryPoint& point) const;
  // The last point of `series` at or before `x` (the first when none is).
  [[nodiscard]] const analysis::MemoryPoint& pointAt(const std::vector<analysis::MemoryPoint>& series, double x) const;
  [[nodiscard]] bool hasTimes() const;

  QComboBox* deviceBox_;
  QLabel* summary_;
  QCustomPlot* plot_;
  QCPItemStraightLine* cursor_ = nullptr;
  QLabel* momentLabel_;
  QPushButton* peakButton_;
  QTableView* table_;
  QSortFilterProxyModel* proxy_;
  SnapshotAllocationsModel* allocations_;
  QPlainTextEdit* stack_;

  std::shared_ptr<const io::Artifact> artifact_;
  std::shared_ptr<const analysis::SnapshotTimeline> timeline_;
  const analysis::DeviceMemoryTimeline* device_ = nullptr;
  uint32_t moment_ = analysis::kBeforeTrace;
};

}  // namespace lathe::views

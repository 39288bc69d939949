// The allocator's state at one moment of a CUDA memory snapshot, as memory_viz's "allocator state"
// lists it: one row per live allocation, largest first (analysis::liveAllocationsAt), with its
// size, when it was allocated and the user frame that allocated it; the tooltip and stackText()
// give its whole call stack. Sort through a QSortFilterProxyModel with kSortRole.
#pragma once

#include <QAbstractTableModel>
#include <memory>
#include <vector>

#include "analysis/snapshot_timeline.h"
#include "io/artifact.h"

namespace lathe::views {

class SnapshotAllocationsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { SizeColumn, AllocatedAtColumn, UserFrameColumn, AddressColumn, ColumnCount };
  static constexpr int kSortRole = Qt::UserRole;
  // Rows kept: the largest live allocations (a real step has hundreds live, a leak thousands).
  static constexpr size_t kMaxRows = 500;

  explicit SnapshotAllocationsModel(QObject* parent = nullptr);

  // What is live just after `eventIndex` of `device`'s trace (analysis::kBeforeTrace: before it).
  void setMoment(std::shared_ptr<const io::Artifact> artifact, const analysis::DeviceMemoryTimeline* device,
                 uint32_t eventIndex);
  void clear();
  [[nodiscard]] const analysis::LiveAllocations& live() const { return live_; }
  // The allocation's call stack, its Python frames then its native ones, innermost first, one
  // "file:line in function" a line; ▶ marks the user's frame.
  [[nodiscard]] QString stackText(int row) const;

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                    int role = Qt::DisplayRole) const override;

 private:
  [[nodiscard]] QString frameText(uint32_t frame) const;
  [[nodiscard]] QString allocatedAt(const analysis::LiveAllocation& allocation) const;

  std::shared_ptr<const io::Artifact> artifact_;
  const analysis::DeviceMemoryTimeline* device_ = nullptr;
  analysis::LiveAllocations live_;
};

}  // namespace lathe::views

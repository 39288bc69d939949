#include "views/snapshot_allocations_model.h"

#include "views/formatting.h"

namespace lathe::views {

SnapshotAllocationsModel::SnapshotAllocationsModel(QObject* parent) : QAbstractTableModel(parent) {}

void SnapshotAllocationsModel::setMoment(std::shared_ptr<const io::Artifact> artifact,
                                         const analysis::DeviceMemoryTimeline* device, uint32_t eventIndex) {
  beginResetModel();
  artifact_ = std::move(artifact);
  device_ = device;
  live_ = artifact_ && artifact_->snapshot && device_
              ? analysis::liveAllocationsAt(*artifact_->snapshot, *device_, eventIndex, kMaxRows)
              : analysis::LiveAllocations{};
  endResetModel();
}

void SnapshotAllocationsModel::clear() {
  setMoment(nullptr, nullptr, analysis::kBeforeTrace);
}

int SnapshotAllocationsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(live_.largest.size());
}

int SnapshotAllocationsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QString SnapshotAllocationsModel::frameText(uint32_t frame) const {
  const io::MemorySnapshot& snapshot = *artifact_->snapshot;
  if (frame == io::kNoFrame || frame >= snapshot.frames.size()) return {};
  const io::SnapshotFrame& f = snapshot.frames[frame];
  return tr("%1:%2 in %3").arg(toQString(snapshot.str(f.filename))).arg(f.line).arg(toQString(snapshot.str(f.name)));
}

QString SnapshotAllocationsModel::allocatedAt(const analysis::LiveAllocation& allocation) const {
  if (allocation.allocEvent == analysis::kBeforeTrace) return tr("before recording");
  const std::vector<io::AllocatorEvent>& events = artifact_->snapshot->deviceTraces[static_cast<size_t>(device_->device)];
  const int64_t time = events[allocation.allocEvent].timeUs;
  if (time == io::kNoTime || device_->firstTimeUs == io::kNoTime) return tr("event %1").arg(allocation.allocEvent);
  return tr("%1 (event %2)").arg(formatSeconds(static_cast<double>(time - device_->firstTimeUs) * 1e-6)).arg(allocation.allocEvent);
}

QString SnapshotAllocationsModel::stackText(int row) const {
  if (row < 0 || row >= rowCount()) return {};
  const analysis::LiveAllocation& allocation = live_.largest[static_cast<size_t>(row)];
  // Python frames first, as memory_viz shows them; the C++ frames (allocator, dispatcher,
  // interpreter) after, for those who want them.
  const io::MemorySnapshot& snapshot = *artifact_->snapshot;
  QStringList python, native;
  for (uint32_t frame : snapshot.stack(allocation.frames)) {
    const bool isPython = frame < snapshot.frames.size() && snapshot.str(snapshot.frames[frame].filename).ends_with(".py");
    (isPython ? python : native) << (frame == allocation.userFrame ? QStringLiteral("▶ ") : QStringLiteral("  ")) + frameText(frame);
  }
  if (python.isEmpty() && native.isEmpty()) return tr("No call stack was recorded for this allocation.");
  QString text = tr("Python frames, innermost first:") + QLatin1Char('\n');
  text += python.isEmpty() ? tr("  (none recorded)") : python.join(QLatin1Char('\n'));
  if (!native.isEmpty()) text += QStringLiteral("\n\n") + tr("Native frames:") + QLatin1Char('\n') + native.join(QLatin1Char('\n'));
  return text;
}

QVariant SnapshotAllocationsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
  const analysis::LiveAllocation& a = live_.largest[static_cast<size_t>(index.row())];
  if (role == Qt::ToolTipRole) return stackText(index.row());
  if (role == Qt::TextAlignmentRole) {
    return index.column() == SizeColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
  }
  if (role == kSortRole) {
    switch (index.column()) {
      case SizeColumn: return QVariant::fromValue<qulonglong>(a.size);
      case AllocatedAtColumn: return a.allocEvent == analysis::kBeforeTrace ? -1LL : static_cast<qlonglong>(a.allocEvent);
      case UserFrameColumn: return frameText(a.userFrame);
      case AddressColumn: return QVariant::fromValue<qulonglong>(a.addr);
    }
    return {};
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case SizeColumn: return formatBytes(a.size);
    case AllocatedAtColumn: return allocatedAt(a);
    case UserFrameColumn: return a.userFrame == io::kNoFrame ? tr("— (no user frame)") : frameText(a.userFrame);
    case AddressColumn: return QStringLiteral("0x%1").arg(a.addr, 0, 16);
  }
  return {};
}

QVariant SnapshotAllocationsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case SizeColumn: return tr("Size");
    case AllocatedAtColumn: return tr("Allocated at");
    case UserFrameColumn: return tr("User frame");
    case AddressColumn: return tr("Address");
  }
  return {};
}

}  // namespace lathe::views

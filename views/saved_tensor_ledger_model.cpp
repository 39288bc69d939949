#include "views/saved_tensor_ledger_model.h"

#include <algorithm>
#include <cmath>

#include "views/formatting.h"
#include "views/plan_session.h"

namespace lathe::views {

SavedTensorLedgerModel::SavedTensorLedgerModel(QObject* parent) : QAbstractTableModel(parent) {}

void SavedTensorLedgerModel::setPlan(std::shared_ptr<const PlanRun> run, int step) {
  beginResetModel();
  rows_.clear();
  run_ = std::move(run);
  if (run_ && step >= 0 && step < run_->stepCount() && run_->stateAt(step).recompute) {
    const plan::RecomputeDecision& decision = *run_->stateAt(step).recompute;
    const passes::PlannedStep& planned = run_->planned[static_cast<size_t>(step)];
    const ir::Graph& graph = *run_->graph;
    const auto& schedule = planned.schedule;
    // Where each value is computed in the forward and last read in the backward.
    std::vector<size_t> computed(graph.size(), SIZE_MAX), lastRead(graph.size(), SIZE_MAX);
    for (size_t i = 0; i < schedule.nodes.size(); ++i) {
      const ir::NodeId id = schedule.nodes[i];
      if (schedule.phase[i] == analysis::Phase::Forward && computed[id] == SIZE_MAX) computed[id] = i;
      if (schedule.phase[i] != analysis::Phase::Backward) continue;
      for (ir::NodeId input : graph.inputs(id)) lastRead[input] = i;
    }
    const double stepEnd = planned.stepSeconds;
    auto startOf = [&](size_t i) { return i < planned.startSeconds.size() ? planned.startSeconds[i] : stepEnd; };
    for (size_t k = 0; k < decision.saved.size(); ++k) {
      const ir::NodeId id = decision.saved[k];
      const ir::Node& node = graph.node(id);
      if (!node.meta.isTensor() || run_->target->inputs().isWeight(id)) continue;
      Row row;
      row.node = id;
      row.bytes = node.meta.storageBytes();
      // Placeholders (inputs the backward reads) are held from the step's start.
      row.savedAt = computed[id] == SIZE_MAX ? 0 : computed[id];
      row.lastUse = lastRead[id] == SIZE_MAX ? row.savedAt : lastRead[id];
      row.heldSeconds = std::max(0.0, startOf(row.lastUse) - startOf(row.savedAt));
      row.reason = k < decision.savedReasons.size() ? translated(decision.savedReasons[k]) : QString();
      rows_.push_back(std::move(row));
    }
  }
  endResetModel();
}

ir::NodeId SavedTensorLedgerModel::nodeAt(const QModelIndex& index) const {
  if (!index.isValid() || index.row() >= static_cast<int>(rows_.size())) return ir::kNoNode;
  return rows_[static_cast<size_t>(index.row())].node;
}

uint64_t SavedTensorLedgerModel::totalBytes() const {
  uint64_t total = 0;
  for (const Row& row : rows_) total += row.bytes;
  return total;
}

int SavedTensorLedgerModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int SavedTensorLedgerModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant SavedTensorLedgerModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= static_cast<int>(rows_.size()) || index.column() >= ColumnCount) return {};
  const Row& row = rows_[static_cast<size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole: return display(row, index.column());
    case kSortRole: return sortKey(row, index.column());
    case Qt::TextAlignmentRole:
      if (index.column() != NameColumn && index.column() != ValueColumn && index.column() != ReasonColumn) {
        return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
      }
      return {};
    case Qt::ToolTipRole:
      if (index.column() == ReasonColumn) return row.reason;
      if (index.column() == NameColumn) return sourceSummary(*run_->graph, row.node);
      if (index.column() == HeldColumn)
        return tr("%n execution(s) from saved to last read", nullptr, static_cast<int>(row.lastUse - row.savedAt));
      return {};
    default: return {};
  }
}

QVariant SavedTensorLedgerModel::display(const Row& row, int column) const {
  const ir::Graph& graph = *run_->graph;
  switch (column) {
    case NameColumn: return toQString(graph.name(row.node));
    case ValueColumn: return valueSummary(graph, row.node);
    case BytesColumn: return formatBytes(row.bytes);
    case SavedAtColumn: return QString::number(row.savedAt);
    case LastUseColumn: return QString::number(row.lastUse);
    case HeldColumn: return formatSeconds(row.heldSeconds);
    case ByteTimeColumn:
      return tr("%1·ms").arg(
          formatBytes(static_cast<uint64_t>(std::llround(static_cast<double>(row.bytes) * row.heldSeconds * 1e3))));
    case ReasonColumn: return row.reason;
    default: return {};
  }
}

QVariant SavedTensorLedgerModel::sortKey(const Row& row, int column) const {
  switch (column) {
    case BytesColumn: return QVariant::fromValue<qulonglong>(row.bytes);
    case SavedAtColumn: return QVariant::fromValue<qulonglong>(row.savedAt);
    case LastUseColumn: return QVariant::fromValue<qulonglong>(row.lastUse);
    case HeldColumn: return row.heldSeconds;
    case ByteTimeColumn: return static_cast<double>(row.bytes) * row.heldSeconds;
    default: return display(row, column);
  }
}

QVariant SavedTensorLedgerModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case NameColumn: return tr("Saved tensor");
    case ValueColumn: return tr("Value");
    case BytesColumn: return tr("Bytes");
    case SavedAtColumn: return tr("Saved at");
    case LastUseColumn: return tr("Last backward use");
    case HeldColumn: return tr("Held for");
    case ByteTimeColumn: return tr("Bytes × time");
    case ReasonColumn: return tr("Why kept");
    default: return {};
  }
}

}  // namespace lathe::views

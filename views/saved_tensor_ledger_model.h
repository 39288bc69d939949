// The "Saved tensors" ledger: one row per tensor the current plan step keeps from the forward for
// the backward (its recompute decision; weights, which stay resident anyway, are left out): name,
// value, bytes, when it is saved and last read (executions of the step), how long it is held, bytes
// x time, and why the policy kept it. Sort through a QSortFilterProxyModel with kSortRole.
#pragma once

#include <QAbstractTableModel>
#include <memory>
#include <vector>

#include "ir/graph.h"

namespace lathe::views {

struct PlanRun;

class SavedTensorLedgerModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    NameColumn,
    ValueColumn,
    BytesColumn,
    SavedAtColumn,
    LastUseColumn,
    HeldColumn,
    ByteTimeColumn,
    ReasonColumn,
    ColumnCount
  };
  static constexpr int kSortRole = Qt::UserRole;

  explicit SavedTensorLedgerModel(QObject* parent = nullptr);

  // Shows step `step` of a run; a step without a recompute decision has no rows.
  void setPlan(std::shared_ptr<const PlanRun> run, int step);
  [[nodiscard]] ir::NodeId nodeAt(const QModelIndex& index) const;
  [[nodiscard]] uint64_t totalBytes() const;

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                    int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    ir::NodeId node = ir::kNoNode;
    uint64_t bytes = 0;
    size_t savedAt = 0;  // execution that computes it in the forward
    size_t lastUse = 0;  // last backward execution that reads it
    double heldSeconds = 0;
    QString reason;
  };
  [[nodiscard]] QVariant display(const Row& row, int column) const;
  [[nodiscard]] QVariant sortKey(const Row& row, int column) const;

  std::shared_ptr<const PlanRun> run_;
  std::vector<Row> rows_;
};

}  // namespace lathe::views

// One compile's guard tree as Dynamo prints it: managers (with the value they guard and how it is
// reached) and leaves (the guard type and its code), with the guards a later recompile broke marked.
#pragma once

#include <QAbstractItemModel>
#include <QString>
#include <map>
#include <memory>
#include <vector>

#include "io/guards/guards.h"

namespace lathe::views {

class GuardTreeModel : public QAbstractItemModel {
  Q_OBJECT

 public:
  enum Column { GuardColumn, CodeColumn, SourceColumn, PythonTypeColumn, AccessorColumn, UserCodeColumn, ColumnCount };
  // Leaves: the recompile reasons that point at the guard, joined; empty when none does.
  static constexpr int kRecompileReasonRole = Qt::UserRole;
  // Index of the guard in its GuardTree.
  static constexpr int kGuardIndexRole = Qt::UserRole + 1;

  explicit GuardTreeModel(QObject* parent = nullptr);

  // broken: leaf -> the reasons (one per line) of the recompiles that broke it.
  void setTree(std::shared_ptr<const io::GuardTree> tree, std::map<uint32_t, QString> broken = {});
  [[nodiscard]] const std::shared_ptr<const io::GuardTree>& tree() const { return tree_; }
  [[nodiscard]] const std::map<uint32_t, QString>& brokenGuards() const { return broken_; }

  [[nodiscard]] QModelIndex indexOfGuard(uint32_t guard, int column = GuardColumn) const;
  [[nodiscard]] uint32_t guardAt(const QModelIndex& index) const;

  [[nodiscard]] QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  [[nodiscard]] QModelIndex parent(const QModelIndex& child) const override;
  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                    int role = Qt::DisplayRole) const override;

 private:
  [[nodiscard]] QVariant display(uint32_t guard, int column) const;
  [[nodiscard]] const std::vector<uint32_t>& childrenOf(const QModelIndex& parent) const;

  std::shared_ptr<const io::GuardTree> tree_;
  std::vector<std::vector<uint32_t>> children_;  // per guard
  std::vector<uint32_t> topLevel_;
  std::vector<int> rowInParent_;  // per guard
  std::map<uint32_t, QString> broken_;
  std::vector<bool> holdsBroken_;  // per guard: a broken leaf is in its subtree
};

}  // namespace lathe::views

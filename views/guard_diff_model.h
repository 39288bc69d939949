// The diff of two compiles' guards (io::diffGuards) as a table: what changed, the guard type, the
// value guarded and the code on each side; added, removed and changed rows coloured.
#pragma once

#include <QAbstractTableModel>
#include <memory>

#include "io/guards/guards.h"

namespace lathe::views {

class GuardDiffModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { ChangeColumn, TypeColumn, PathColumn, BeforeColumn, AfterColumn, ColumnCount };

  explicit GuardDiffModel(QObject* parent = nullptr);

  // Keeps both trees alive: the diff's entries view their text.
  void setTrees(std::shared_ptr<const io::GuardTree> before, std::shared_ptr<const io::GuardTree> after);
  [[nodiscard]] const io::GuardDiff& diff() const { return diff_; }
  [[nodiscard]] size_t count(io::GuardChange change) const;

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                    int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const io::GuardTree> before_, after_;
  io::GuardDiff diff_;
};

}  // namespace lathe::views

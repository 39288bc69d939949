// The model's error per op category on the graph a profile measured (passes::Calibration's
// byCategory): one row per category with measured nodes, as `lathe plan --profile` prints them — op
// category, nodes, estimated, measured, error. Sort through a QSortFilterProxyModel with kSortRole.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "passes/calibration.h"

namespace lathe::views {

class CalibrationModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { CategoryColumn, NodesColumn, EstimatedColumn, MeasuredColumn, ErrorColumn, ColumnCount };
  static constexpr int kSortRole = Qt::UserRole;

  explicit CalibrationModel(QObject* parent = nullptr);

  // Empty: no profile.
  void setCategories(std::vector<passes::CategoryTimes> categories);

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                    int role = Qt::DisplayRole) const override;

 private:
  std::vector<passes::CategoryTimes> categories_;
};

}  // namespace lathe::views

#include "views/calibration_model.h"

#include "views/formatting.h"

namespace lathe::views {

CalibrationModel::CalibrationModel(QObject* parent) : QAbstractTableModel(parent) {}

void CalibrationModel::setCategories(std::vector<passes::CategoryTimes> categories) {
  beginResetModel();
  categories_ = std::move(categories);
  endResetModel();
}

int CalibrationModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(categories_.size());
}

int CalibrationModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant CalibrationModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const passes::CategoryTimes& row = categories_[static_cast<size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case CategoryColumn: return opCategoryLabel(row.category);
        case NodesColumn: return static_cast<qulonglong>(row.nodes);
        case EstimatedColumn: return formatSeconds(row.estimated);
        case MeasuredColumn: return formatSeconds(row.measured);
        case ErrorColumn: return formatModelError(row.estimated, row.measured);
        default: return {};
      }
    case kSortRole:
      switch (index.column()) {
        case CategoryColumn: return opCategoryLabel(row.category);
        case NodesColumn: return static_cast<qulonglong>(row.nodes);
        case EstimatedColumn: return row.estimated;
        case MeasuredColumn: return row.measured;
        case ErrorColumn: return row.measured > 0 ? (row.estimated - row.measured) / row.measured : 0.0;
        default: return {};
      }
    case Qt::TextAlignmentRole:
      return index.column() == CategoryColumn ? QVariant() : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
    default: return {};
  }
}

QVariant CalibrationModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole && section == ErrorColumn)
    return tr("(estimated − measured) / measured: −50% means the model expected half the measured time");
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case CategoryColumn: return tr("Op category");
    case NodesColumn: return tr("Nodes");
    case EstimatedColumn: return tr("Estimated");
    case MeasuredColumn: return tr("Measured");
    case ErrorColumn: return tr("Error");
    default: return {};
  }
}

}  // namespace lathe::views

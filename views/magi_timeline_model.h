// The lifecycle timeline of one model of a MagiCompiler dump (io::MagiModel::timeline), an event a
// row: when, which graph or piece, before/after/failed, which lifecycle, how long, what its
// attributes say (errors, cache results, pieces) and its files. Sort through a
// QSortFilterProxyModel with kSortRole.
#pragma once

#include <QAbstractTableModel>
#include <memory>
#include <vector>

#include "io/artifact.h"

namespace lathe::views {

class MagiTimelineModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { IndexColumn, TimeColumn, ScopeColumn, PhaseColumn, LifecycleColumn, DurationColumn, DetailsColumn,
                FilesColumn, ColumnCount };
  static constexpr int kSortRole = Qt::UserRole;

  explicit MagiTimelineModel(QObject* parent = nullptr);

  // Shows model `modelIndex` of the artifact's dump; nothing when it has none.
  void setModel(std::shared_ptr<const io::Artifact> artifact, int modelIndex);
  [[nodiscard]] const io::MagiModel* magiModel() const { return model_; }
  [[nodiscard]] const io::MagiTimelineEvent& eventAt(int row) const;
  // The row of the event with this index in the timeline, -1 when none.
  [[nodiscard]] int rowOfEvent(int64_t index) const;

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                    int role = Qt::DisplayRole) const override;

 private:
  // "TensorifyScalarRestartAnalysis", "cache miss (entry_not_found)", "5 pieces": what an event's
  // attributes tell a reader, empty when nothing.
  [[nodiscard]] static QString details(const io::MagiTimelineEvent& event);

  std::shared_ptr<const io::Artifact> artifact_;
  const io::MagiModel* model_ = nullptr;
  std::vector<QString> details_;  // per row, read off the attributes once
};

}  // namespace lathe::views

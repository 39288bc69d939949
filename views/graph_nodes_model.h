// One row per node of a graph, in program order (row = NodeId): name, target, op category, value
// (dtype and shape), storage bytes, role, FX op and where it came from. Sort and filter it through
// a QSortFilterProxyModel with sortRole kSortRole (numbers sort as numbers).
#pragma once

#include <QAbstractTableModel>
#include <memory>
#include <vector>

#include "ir/graph.h"
#include "ir/op_info.h"

namespace lathe::views {

class GraphNodesModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    IndexColumn,
    NameColumn,
    TargetColumn,
    CategoryColumn,
    ValueColumn,
    BytesColumn,
    RoleColumn,
    OpColumn,
    SourceColumn,
    ColumnCount
  };
  static constexpr int kSortRole = Qt::UserRole;

  explicit GraphNodesModel(QObject* parent = nullptr);

  void setGraph(std::shared_ptr<const ir::Graph> graph, QString graphId);
  [[nodiscard]] const std::shared_ptr<const ir::Graph>& graph() const { return graph_; }
  [[nodiscard]] const QString& graphId() const { return graphId_; }
  [[nodiscard]] ir::NodeId nodeAt(const QModelIndex& index) const;
  [[nodiscard]] QModelIndex indexOfNode(ir::NodeId node, int column = NameColumn) const;

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                    int role = Qt::DisplayRole) const override;

 private:
  [[nodiscard]] QVariant display(ir::NodeId node, int column) const;

  std::shared_ptr<const ir::Graph> graph_;
  QString graphId_;
  std::vector<ir::OpCategory> categories_;  // by NodeId; Unknown for nodes that are not calls
};

}  // namespace lathe::views

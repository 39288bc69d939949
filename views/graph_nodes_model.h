// One row per node of a graph, in program order (row = NodeId): name, target, op category, the
// model's time estimate and the measured time (once the plan on show gives them, NodeTimes), value
// (dtype and shape), storage bytes, role, FX op and where it came from. Sort and filter it through a
// QSortFilterProxyModel with sortRole kSortRole (numbers sort as numbers).
#pragma once

#include <QAbstractTableModel>
#include <memory>
#include <vector>

#include "ir/graph.h"
#include "ir/op_info.h"
#include "views/node_times.h"

namespace lathe::views {

class GraphNodesModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    IndexColumn,
    NameColumn,
    TargetColumn,
    CategoryColumn,
    EstimatedTimeColumn,
    MeasuredTimeColumn,  // empty without a profile
    ValueColumn,
    BytesColumn,
    FlopsColumn,        // the plan's: empty until it comes
    DecisionColumn,     // saved / recomputed by the plan's recompute decision
    FusionGroupColumn,  // the fusion group the node joins
    RoleColumn,
    OpColumn,
    SourceColumn,
    ColumnCount
  };
  static constexpr int kSortRole = Qt::UserRole;

  explicit GraphNodesModel(QObject* parent = nullptr);

  // Clears the node times.
  void setGraph(std::shared_ptr<const ir::Graph> graph, QString graphId);
  // The times of the graph's nodes (ignored when they are another graph's); null clears them.
  void setNodeTimes(std::shared_ptr<const NodeTimes> times);
  [[nodiscard]] bool hasMeasuredTimes() const { return times_ && !times_->measured.empty(); }
  // The plan's FLOPs, fusion groups and decisions are there (setNodeTimes of this graph's plan).
  [[nodiscard]] bool hasPlanFacts() const { return times_ && times_->flops.size() == static_cast<size_t>(rowCount()); }
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
  // The column's time of a node; nullopt where it has none (not a call, not measured).
  [[nodiscard]] std::optional<double> seconds(ir::NodeId node, int column) const;

  std::shared_ptr<const ir::Graph> graph_;
  QString graphId_;
  std::vector<ir::OpCategory> categories_;  // by NodeId; Unknown for nodes that are not calls
  std::shared_ptr<const NodeTimes> times_;  // of graph_, or null
};

}  // namespace lathe::views

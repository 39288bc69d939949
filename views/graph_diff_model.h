// Two graphs node by node (analysis::diffGraphs) as a table: what differs (changed, only in A, only
// in B), the node on each side, its op and value on each side, and what changed; rows coloured by
// kind. The Compare tab's node table.
#pragma once

#include <QAbstractTableModel>
#include <memory>

#include "analysis/graph_diff.h"
#include "ir/graph.h"

namespace lathe::views {

class GraphDiffModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { ChangeColumn, NodeAColumn, NodeBColumn, OpColumn, ValueAColumn, ValueBColumn, WhatColumn, ColumnCount };

  explicit GraphDiffModel(QObject* parent = nullptr);

  // Diffs `a` against `b` (either null: an empty table). Keeps both alive: rows name their nodes.
  void setGraphs(std::shared_ptr<const ir::Graph> a, std::shared_ptr<const ir::Graph> b);
  [[nodiscard]] const analysis::GraphDiff& diff() const { return diff_; }
  // The row's node in A (kNoNode for a node only in B, or an invalid index).
  [[nodiscard]] ir::NodeId nodeA(const QModelIndex& index) const;
  [[nodiscard]] ir::NodeId nodeB(const QModelIndex& index) const;

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  [[nodiscard]] const analysis::NodeDiff* row(const QModelIndex& index) const;

  std::shared_ptr<const ir::Graph> a_, b_;
  analysis::GraphDiff diff_;
};

}  // namespace lathe::views

#include "views/graph_nodes_model.h"

#include "views/formatting.h"

namespace lathe::views {

GraphNodesModel::GraphNodesModel(QObject* parent) : QAbstractTableModel(parent) {}

void GraphNodesModel::setGraph(std::shared_ptr<const ir::Graph> graph, QString graphId) {
  beginResetModel();
  graph_ = std::move(graph);
  graphId_ = std::move(graphId);
  times_.reset();
  categories_.clear();
  if (graph_) {
    categories_.reserve(graph_->size());
    for (ir::NodeId id = 0; id < graph_->size(); ++id) {
      categories_.push_back(graph_->node(id).isCall() ? ir::lookupOp(graph_->target(id)).category
                                                         : ir::OpCategory::Unknown);
    }
  }
  endResetModel();
}

void GraphNodesModel::setNodeTimes(std::shared_ptr<const NodeTimes> times) {
  if (times && times->graph != graph_) return;
  times_ = std::move(times);
  if (rowCount() > 0) emit dataChanged(index(0, EstimatedTimeColumn), index(rowCount() - 1, FusionGroupColumn));
}

std::optional<double> GraphNodesModel::seconds(ir::NodeId node, int column) const {
  if (!times_ || !graph_->node(node).isCall()) return std::nullopt;
  if (column == EstimatedTimeColumn) return times_->estimated[node];
  if (column == MeasuredTimeColumn && !times_->measured.empty()) return times_->measured[node];
  return std::nullopt;
}

ir::NodeId GraphNodesModel::nodeAt(const QModelIndex& index) const {
  if (!graph_ || !index.isValid() || index.model() != this) return ir::kNoNode;
  return static_cast<ir::NodeId>(index.row());
}

QModelIndex GraphNodesModel::indexOfNode(ir::NodeId node, int column) const {
  if (!graph_ || node >= graph_->size()) return {};
  return index(static_cast<int>(node), column);
}

int GraphNodesModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !graph_ ? 0 : static_cast<int>(graph_->size());
}

int GraphNodesModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant GraphNodesModel::display(ir::NodeId id, int column) const {
  const ir::Graph& g = *graph_;
  const ir::Node& node = g.node(id);
  switch (column) {
    case IndexColumn: return static_cast<int>(id);
    case NameColumn: return toQString(g.name(id));
    case OpColumn: return toQString(ir::nodeKindName(node.kind));
    case TargetColumn:
      return node.kind == ir::NodeKind::Output || node.kind == ir::NodeKind::Placeholder
                 ? QString()
                 : toQString(ir::canonicalOpName(g.target(id)));
    case CategoryColumn: return node.isCall() ? opCategoryLabel(categories_[id]) : QString();
    case ValueColumn: return valueSummary(g, id);
    case BytesColumn: return node.meta.isTensor() ? formatBytes(node.meta.storageBytes()) : QString();
    case EstimatedTimeColumn:
    case MeasuredTimeColumn: {
      const std::optional<double> time = seconds(id, column);
      return time ? formatSeconds(*time) : QString();
    }
    case FlopsColumn: return hasPlanFacts() && times_->flops[id] > 0 ? formatFlops(times_->flops[id]) : QString();
    case DecisionColumn:
      if (!hasPlanFacts() || times_->decision.empty()) return QString();
      switch (times_->decision[id]) {
        case NodeTimes::Decision::Saved: return tr("saved");
        case NodeTimes::Decision::Recomputed: return tr("recomputed");
        case NodeTimes::Decision::None: return QString();
      }
      return QString();
    case FusionGroupColumn:
      return hasPlanFacts() && times_->fusionGroup[id] >= 0 ? QString::number(times_->fusionGroup[id]) : QString();
    case RoleColumn: return node.role == ir::Role::Unknown ? QString() : toQString(ir::roleName(node.role));
    case SourceColumn: return sourceSummary(g, id);
    default: return {};
  }
}

QVariant GraphNodesModel::data(const QModelIndex& index, int role) const {
  if (!graph_ || !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const auto id = static_cast<ir::NodeId>(index.row());
  switch (role) {
    case Qt::DisplayRole: return display(id, index.column());
    case kSortRole:
      if (index.column() == BytesColumn) {
        const ir::TensorMeta& meta = graph_->node(id).meta;
        return static_cast<qulonglong>(meta.isTensor() ? meta.storageBytes() : 0);
      }
      if (index.column() == EstimatedTimeColumn || index.column() == MeasuredTimeColumn) {
        return seconds(id, index.column()).value_or(-1);  // nodes without a time sort below zero
      }
      if (index.column() == FlopsColumn) return hasPlanFacts() ? times_->flops[id] : 0.0;
      if (index.column() == FusionGroupColumn) return hasPlanFacts() ? times_->fusionGroup[id] : -1;
      return display(id, index.column());
    case Qt::ToolTipRole:
      if (index.column() == TargetColumn) return toQString(graph_->target(id));
      if (index.column() == SourceColumn) {
        const ir::Provenance& where = graph_->node(id).provenance;
        return where.code != 0 ? toQString(graph_->str(where.code)) : QVariant();
      }
      if (index.column() == MeasuredTimeColumn) {
        const std::optional<double> measured = seconds(id, MeasuredTimeColumn);
        if (!measured) return {};
        const double estimated = times_->estimated[id];
        return tr("Measured %1 by %2; the model estimated %3 (%4)")
            .arg(formatSeconds(*measured), times_->source, formatSeconds(estimated),
                 formatModelError(estimated, *measured));
      }
      return {};
    case Qt::TextAlignmentRole:
      return index.column() == IndexColumn || index.column() == BytesColumn || index.column() == EstimatedTimeColumn ||
                     index.column() == MeasuredTimeColumn || index.column() == FlopsColumn ||
                     index.column() == FusionGroupColumn
                 ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter))
                 : QVariant();
    default: return {};
  }
}

QVariant GraphNodesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole) {
    if (section == EstimatedTimeColumn)
      return tr("The model's estimate on the target GPU (a fused kernel's time shared among its nodes)");
    if (section == MeasuredTimeColumn) return tr("What the loaded profile measured (File › Load Profile…)");
    if (section == DecisionColumn) return tr("The plan's recompute decision: kept for the backward, or computed again there");
    if (section == FusionGroupColumn) return tr("The plan's fusion group: nodes with one number run as one kernel");
    return {};
  }
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case IndexColumn: return tr("#");
    case NameColumn: return tr("Name");
    case OpColumn: return tr("Op");
    case TargetColumn: return tr("Target");
    case CategoryColumn: return tr("Category");
    case ValueColumn: return tr("Value");
    case BytesColumn: return tr("Bytes");
    case FlopsColumn: return tr("FLOPs");
    case DecisionColumn: return tr("Saved / recomputed");
    case FusionGroupColumn: return tr("Fusion group");
    case EstimatedTimeColumn: return tr("Est. time");
    case MeasuredTimeColumn: return tr("Measured");
    case RoleColumn: return tr("Role");
    case SourceColumn: return tr("Module / source");
    default: return {};
  }
}

}  // namespace lathe::views

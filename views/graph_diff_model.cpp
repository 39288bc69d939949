#include "views/graph_diff_model.h"

#include <QBrush>
#include <QColor>
#include <QStringList>

#include "views/formatting.h"

namespace lathe::views {

namespace {

QColor kindColour(analysis::NodeDiff::Kind kind) {
  switch (kind) {
    case analysis::NodeDiff::Kind::Changed: return {252, 236, 200};
    case analysis::NodeDiff::Kind::OnlyInA: return {250, 216, 216};
    case analysis::NodeDiff::Kind::OnlyInB: return {214, 240, 214};
  }
  return {};
}

QString kindName(analysis::NodeDiff::Kind kind) {
  switch (kind) {
    case analysis::NodeDiff::Kind::Changed: return GraphDiffModel::tr("changed");
    case analysis::NodeDiff::Kind::OnlyInA: return GraphDiffModel::tr("only in A");
    case analysis::NodeDiff::Kind::OnlyInB: return GraphDiffModel::tr("only in B");
  }
  return {};
}

}  // namespace

GraphDiffModel::GraphDiffModel(QObject* parent) : QAbstractTableModel(parent) {}

void GraphDiffModel::setGraphs(std::shared_ptr<const ir::Graph> a, std::shared_ptr<const ir::Graph> b) {
  beginResetModel();
  a_ = std::move(a);
  b_ = std::move(b);
  diff_ = a_ && b_ ? analysis::diffGraphs(*a_, *b_) : analysis::GraphDiff{};
  endResetModel();
}

const analysis::NodeDiff* GraphDiffModel::row(const QModelIndex& index) const {
  if (!index.isValid() || index.model() != this || index.row() >= rowCount()) return nullptr;
  return &diff_.nodes[static_cast<size_t>(index.row())];
}

ir::NodeId GraphDiffModel::nodeA(const QModelIndex& index) const {
  const analysis::NodeDiff* d = row(index);
  return d ? d->a : ir::kNoNode;
}

ir::NodeId GraphDiffModel::nodeB(const QModelIndex& index) const {
  const analysis::NodeDiff* d = row(index);
  return d ? d->b : ir::kNoNode;
}

int GraphDiffModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(diff_.nodes.size());
}

int GraphDiffModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant GraphDiffModel::data(const QModelIndex& index, int role) const {
  const analysis::NodeDiff* d = row(index);
  if (!d) return {};
  if (role == Qt::BackgroundRole) return QBrush(kindColour(d->kind));
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
  const bool inA = d->a != ir::kNoNode, inB = d->b != ir::kNoNode;
  switch (index.column()) {
    case ChangeColumn: return kindName(d->kind);
    case NodeAColumn: return inA ? toQString(a_->name(d->a)) : QString();
    case NodeBColumn: return inB ? toQString(b_->name(d->b)) : QString();
    case OpColumn: {
      const QString opA = inA ? toQString(a_->target(d->a)) : QString(), opB = inB ? toQString(b_->target(d->b)) : QString();
      if (!inA) return opB;
      if (!inB || opA == opB) return opA;
      return QStringLiteral("%1 → %2").arg(opA, opB);
    }
    case ValueAColumn: return inA ? valueSummary(*a_, d->a) : QString();
    case ValueBColumn: return inB ? valueSummary(*b_, d->b) : QString();
    case WhatColumn: {
      if (!inA || !inB) return {};
      // What differs, named in the interface language (core's NodeDiff::what is the CLI's English).
      QStringList what;
      if (d->differs(analysis::NodeDiff::NodeKindField)) what << tr("kind");
      if (d->differs(analysis::NodeDiff::Op)) what << tr("op");
      if (d->differs(analysis::NodeDiff::Value)) what << tr("value");
      if (d->differs(analysis::NodeDiff::Name)) what << tr("name (matched by op and source line)");
      return what.join(QStringLiteral(", "));
    }
    default: return {};
  }
}

QVariant GraphDiffModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case ChangeColumn: return tr("Change");
    case NodeAColumn: return tr("Node in A");
    case NodeBColumn: return tr("Node in B");
    case OpColumn: return tr("Op");
    case ValueAColumn: return tr("Value in A");
    case ValueBColumn: return tr("Value in B");
    case WhatColumn: return tr("What differs");
    default: return {};
  }
}

}  // namespace lathe::views

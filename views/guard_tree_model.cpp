#include "views/guard_tree_model.h"

#include <QBrush>
#include <QColor>
#include <QFont>

#include "views/formatting.h"

namespace lathe::views {

namespace {

// Internal ids are guard index + 1, so that 0 stays "no guard".
quintptr idOf(uint32_t guard) {
  return quintptr{guard} + 1;
}

const QColor kBrokenBackground(253, 220, 220);
const QColor kBrokenForeground(150, 20, 20);

}  // namespace

GuardTreeModel::GuardTreeModel(QObject* parent) : QAbstractItemModel(parent) {}

void GuardTreeModel::setTree(std::shared_ptr<const io::GuardTree> tree, std::map<uint32_t, QString> broken) {
  beginResetModel();
  tree_ = std::move(tree);
  children_.clear();
  topLevel_.clear();
  rowInParent_.clear();
  broken_.clear();
  holdsBroken_.clear();
  if (tree_) {
    const size_t count = tree_->size();
    children_.resize(count);
    rowInParent_.resize(count);
    holdsBroken_.assign(count, false);
    for (uint32_t guard = 0; guard < count; ++guard) {
      const uint32_t parent = tree_->node(guard).parent;
      std::vector<uint32_t>& siblings = parent == io::kNoGuardNode ? topLevel_ : children_[parent];
      rowInParent_[guard] = static_cast<int>(siblings.size());
      siblings.push_back(guard);
    }
    for (auto& [leaf, reason] : broken) {
      if (leaf >= count) continue;
      for (uint32_t guard = leaf; guard != io::kNoGuardNode; guard = tree_->node(guard).parent)
        holdsBroken_[guard] = true;
      broken_.emplace(leaf, std::move(reason));
    }
  }
  endResetModel();
}

QModelIndex GuardTreeModel::indexOfGuard(uint32_t guard, int column) const {
  if (!tree_ || guard >= tree_->size()) return {};
  return createIndex(rowInParent_[guard], column, idOf(guard));
}

uint32_t GuardTreeModel::guardAt(const QModelIndex& index) const {
  return index.isValid() && index.internalId() != 0 ? static_cast<uint32_t>(index.internalId() - 1) : io::kNoGuardNode;
}

const std::vector<uint32_t>& GuardTreeModel::childrenOf(const QModelIndex& parent) const {
  return parent.isValid() ? children_[guardAt(parent)] : topLevel_;
}

QModelIndex GuardTreeModel::index(int row, int column, const QModelIndex& parent) const {
  if (!hasIndex(row, column, parent)) return {};
  return createIndex(row, column, idOf(childrenOf(parent)[static_cast<size_t>(row)]));
}

QModelIndex GuardTreeModel::parent(const QModelIndex& child) const {
  const uint32_t guard = guardAt(child);
  if (guard == io::kNoGuardNode) return {};
  return indexOfGuard(tree_->node(guard).parent);
}

int GuardTreeModel::rowCount(const QModelIndex& parent) const {
  if (parent.column() > 0 || !tree_) return 0;
  return static_cast<int>(childrenOf(parent).size());
}

int GuardTreeModel::columnCount(const QModelIndex&) const {
  return ColumnCount;
}

QVariant GuardTreeModel::display(uint32_t guard, int column) const {
  const io::GuardNode& node = tree_->node(guard);
  switch (column) {
    case GuardColumn: {
      QString type = toQString(tree_->text(node.type));
      if (node.dictRole == io::DictEntryRole::Key) return tr("key: %1").arg(type);
      if (node.dictRole == io::DictEntryRole::Value) return tr("value: %1").arg(type);
      if (node.pairIndex >= 0) return tr("%1 %2").arg(type).arg(node.pairIndex);
      return type;
    }
    case CodeColumn: return toQString(tree_->text(node.code));
    case SourceColumn:
      return node.isLeaf() ? toQString(io::guardPath(*tree_, guard)) : toQString(tree_->text(node.source));
    case PythonTypeColumn: return toQString(tree_->text(node.pythonType));
    case AccessorColumn: return toQString(tree_->text(node.accessor));
    case UserCodeColumn: {
      if (node.userFile.empty()) return toQString(tree_->text(node.userSource));
      const QString where = tr("%1:%2").arg(toQString(tree_->text(node.userFile))).arg(node.userLine);
      return node.userSource.empty() ? where : tr("%1  (%2)").arg(toQString(tree_->text(node.userSource)), where);
    }
    default: return {};
  }
}

QVariant GuardTreeModel::data(const QModelIndex& index, int role) const {
  const uint32_t guard = guardAt(index);
  if (guard == io::kNoGuardNode || !tree_) return {};
  const auto brokenReason = broken_.find(guard);
  const bool broken = brokenReason != broken_.end();
  switch (role) {
    case Qt::DisplayRole: return display(guard, index.column());
    case Qt::ToolTipRole: {
      QString tip = display(guard, index.column()).toString();
      if (broken) tip = tr("Broken by a recompile: %1").arg(brokenReason->second) + QLatin1Char('\n') + tip;
      return tip.isEmpty() ? QVariant() : QVariant(tip);
    }
    case Qt::BackgroundRole: return broken ? QVariant(QBrush(kBrokenBackground)) : QVariant();
    case Qt::ForegroundRole: return broken ? QVariant(QBrush(kBrokenForeground)) : QVariant();
    case Qt::FontRole: {
      if (!holdsBroken_[guard] && !(index.column() == GuardColumn && !tree_->node(guard).isLeaf())) return {};
      QFont font;
      font.setBold(holdsBroken_[guard]);
      font.setItalic(!tree_->node(guard).isLeaf() && index.column() == GuardColumn);
      return font;
    }
    case kRecompileReasonRole: return broken ? brokenReason->second : QString();
    case kGuardIndexRole: return static_cast<uint>(guard);
    default: return {};
  }
}

QVariant GuardTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case GuardColumn: return tr("Guard");
    case CodeColumn: return tr("Code");
    case SourceColumn: return tr("Guarded value");
    case PythonTypeColumn: return tr("Python type");
    case AccessorColumn: return tr("Accessed by");
    case UserCodeColumn: return tr("User code");
    default: return {};
  }
}

}  // namespace lathe::views

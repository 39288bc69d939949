#include "views/guard_diff_model.h"

#include <QBrush>
#include <QColor>
#include <algorithm>

#include "views/formatting.h"

namespace lathe::views {

namespace {

QColor changeColour(io::GuardChange change) {
  switch (change) {
    case io::GuardChange::Added: return {214, 240, 214};
    case io::GuardChange::Removed: return {250, 216, 216};
    case io::GuardChange::Changed: return {252, 236, 200};
  }
  return {};
}

QString changeName(io::GuardChange change) {
  switch (change) {
    case io::GuardChange::Added: return GuardDiffModel::tr("added");
    case io::GuardChange::Removed: return GuardDiffModel::tr("removed");
    case io::GuardChange::Changed: return GuardDiffModel::tr("changed");
  }
  return {};
}

}  // namespace

GuardDiffModel::GuardDiffModel(QObject* parent) : QAbstractTableModel(parent) {}

void GuardDiffModel::setTrees(std::shared_ptr<const io::GuardTree> before, std::shared_ptr<const io::GuardTree> after) {
  beginResetModel();
  before_ = std::move(before);
  after_ = std::move(after);
  diff_ = before_ && after_ ? io::diffGuards(*before_, *after_) : io::GuardDiff{};
  endResetModel();
}

size_t GuardDiffModel::count(io::GuardChange change) const {
  return static_cast<size_t>(std::count_if(diff_.entries.begin(), diff_.entries.end(),
                                           [change](const io::GuardDiffEntry& e) { return e.change == change; }));
}

int GuardDiffModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(diff_.entries.size());
}

int GuardDiffModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant GuardDiffModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const io::GuardDiffEntry& entry = diff_.entries[static_cast<size_t>(index.row())];
  if (role == Qt::BackgroundRole) return QBrush(changeColour(entry.change));
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
  switch (index.column()) {
    case ChangeColumn: return changeName(entry.change);
    case TypeColumn: return toQString(entry.type);
    case PathColumn: return toQString(entry.path);
    case BeforeColumn:
      return entry.before == io::kNoGuardNode ? QString() : toQString(before_->text(before_->node(entry.before).code));
    case AfterColumn:
      return entry.after == io::kNoGuardNode ? QString() : toQString(after_->text(after_->node(entry.after).code));
    default: return {};
  }
}

QVariant GuardDiffModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case ChangeColumn: return tr("Change");
    case TypeColumn: return tr("Guard");
    case PathColumn: return tr("Guarded value");
    case BeforeColumn: return tr("Before");
    case AfterColumn: return tr("After");
    default: return {};
  }
}

}  // namespace lathe::views

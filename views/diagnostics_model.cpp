#include "views/diagnostics_model.h"

#include <QBrush>
#include <QColor>
#include <algorithm>

#include "views/formatting.h"

namespace lathe::views {

DiagnosticsModel::DiagnosticsModel(QObject* parent) : QAbstractTableModel(parent) {}

void DiagnosticsModel::setDiagnostics(const Diagnostics& diagnostics) {
  beginResetModel();
  rows_.clear();
  rows_.reserve(diagnostics.size() + 1);
  for (const Diagnostic& item : diagnostics.items()) {
    rows_.push_back({item.severity, toQString(item.code), toQString(item.message),
                     item.where.file.empty() ? QString() : toQString(item.where.str())});
  }
  if (diagnostics.suppressed() > 0) {
    rows_.push_back({Severity::Note,
                     QStringLiteral("suppressed"),
                     tr("%n more diagnostic(s) not kept", nullptr, static_cast<int>(diagnostics.suppressed())),
                     {}});
  }
  endResetModel();
}

void DiagnosticsModel::setLoadError(const QString& message, const QString& location) {
  beginResetModel();
  rows_.assign(1, Row{Severity::Error, QStringLiteral("load_failed"), message, location});
  endResetModel();
}

void DiagnosticsModel::clear() {
  beginResetModel();
  rows_.clear();
  endResetModel();
}

size_t DiagnosticsModel::count(Severity severity) const {
  return static_cast<size_t>(
      std::count_if(rows_.begin(), rows_.end(), [&](const Row& row) { return row.severity == severity; }));
}

int DiagnosticsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int DiagnosticsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

namespace {
QString severityText(Severity severity) {
  switch (severity) {
    case Severity::Note: return DiagnosticsModel::tr("note");
    case Severity::Warning: return DiagnosticsModel::tr("warning");
    case Severity::Error: return DiagnosticsModel::tr("error");
  }
  return {};
}
}  // namespace

QVariant DiagnosticsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& row = rows_[static_cast<size_t>(index.row())];
  if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
    switch (index.column()) {
      case SeverityColumn: return severityText(row.severity);
      case CodeColumn: return row.code;
      case MessageColumn: return row.message;
      case LocationColumn: return row.location;
      default: return {};
    }
  }
  if (role == Qt::ForegroundRole && index.column() == SeverityColumn) {
    switch (row.severity) {
      case Severity::Error: return QBrush(QColor(0xc6, 0x28, 0x28));
      case Severity::Warning: return QBrush(QColor(0xb2, 0x6a, 0x00));
      case Severity::Note: return {};
    }
  }
  return {};
}

QVariant DiagnosticsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case SeverityColumn: return tr("Severity");
    case CodeColumn: return tr("Code");
    case MessageColumn: return tr("Message");
    case LocationColumn: return tr("Location");
    default: return {};
  }
}

}  // namespace lathe::views

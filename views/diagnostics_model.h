// The loader's diagnostics (severity, code, message, file:line), or the error that stopped a load.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "util/diagnostics.h"

namespace lathe::views {

class DiagnosticsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { SeverityColumn, CodeColumn, MessageColumn, LocationColumn, ColumnCount };

  explicit DiagnosticsModel(QObject* parent = nullptr);

  void setDiagnostics(const Diagnostics& diagnostics);
  // One error row: what stopped loading (the artifact is then unreadable).
  void setLoadError(const QString& message, const QString& location);
  void clear();
  [[nodiscard]] size_t count(Severity severity) const;

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                    int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    Severity severity = Severity::Warning;
    QString code, message, location;
  };
  std::vector<Row> rows_;
};

}  // namespace lathe::views

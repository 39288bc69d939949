// The compiles of a TORCH_TRACE log, a row each, with what each cost (io::compileMetrics): compile
// time in all and by phase (Dynamo, AOTAutograd, Inductor, code generation, a backward compiled at
// its first call), cache hits and misses, graph breaks and Dynamo's guard count, as tlparse's
// compile summary lists them. The tooltip adds the Triton kernels that took longest and the
// reasons for restarts and recompiles. Sort through a QSortFilterProxyModel with kSortRole.
#pragma once

#include <QAbstractTableModel>
#include <memory>
#include <vector>

#include "io/artifact.h"
#include "io/trace/compile_metrics.h"

namespace lathe::views {

class CompileMetricsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    CompileColumn,
    FrameColumn,
    StatusColumn,
    TotalColumn,
    DynamoColumn,
    AotAutogradColumn,
    InductorColumn,
    CodegenColumn,
    BackwardColumn,
    CacheColumn,
    GraphBreaksColumn,
    GuardCountColumn,
    ColumnCount
  };
  static constexpr int kSortRole = Qt::UserRole;

  explicit CompileMetricsModel(QObject* parent = nullptr);

  void setArtifact(std::shared_ptr<const io::Artifact> artifact);
  [[nodiscard]] const io::TraceCompile& compileAt(int row) const;
  [[nodiscard]] const io::CompileMetrics& metricsAt(int row) const { return rows_[static_cast<size_t>(row)].metrics; }

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                    int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    size_t compile = 0;  // index into the trace's compiles
    io::CompileMetrics metrics;
  };
  [[nodiscard]] QString toolTip(const Row& row) const;
  [[nodiscard]] static std::optional<double> secondsOf(const io::CompileMetrics& m, int column);

  std::shared_ptr<const io::Artifact> artifact_;
  std::vector<Row> rows_;
};

}  // namespace lathe::views

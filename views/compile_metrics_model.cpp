#include "views/compile_metrics_model.h"

#include <QLocale>

#include "views/formatting.h"

namespace lathe::views {

CompileMetricsModel::CompileMetricsModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompileMetricsModel::setArtifact(std::shared_ptr<const io::Artifact> artifact) {
  beginResetModel();
  artifact_ = std::move(artifact);
  rows_.clear();
  if (artifact_ && artifact_->trace) {
    const std::vector<io::TraceCompile>& compiles = artifact_->trace->compiles;
    for (size_t i = 0; i < compiles.size(); ++i) rows_.push_back({i, io::compileMetrics(compiles[i])});
  }
  endResetModel();
}

const io::TraceCompile& CompileMetricsModel::compileAt(int row) const {
  return artifact_->trace->compiles[rows_[static_cast<size_t>(row)].compile];
}

int CompileMetricsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int CompileMetricsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

std::optional<double> CompileMetricsModel::secondsOf(const io::CompileMetrics& m, int column) {
  switch (column) {
    case TotalColumn: return m.totalSeconds;
    case DynamoColumn: return m.dynamoSeconds;
    case AotAutogradColumn: return m.aotAutogradSeconds;
    case InductorColumn: return m.inductorSeconds;
    case CodegenColumn: return m.codegenSeconds;
    case BackwardColumn: return m.backwardSeconds();
  }
  return std::nullopt;
}

QString CompileMetricsModel::toolTip(const Row& row) const {
  const io::TraceCompile& c = artifact_->trace->compiles[row.compile];
  const io::CompileMetrics& m = row.metrics;
  QStringList lines{tr("Compile %1 of %2 (%3:%4)")
                        .arg(toQString(c.id), toQString(c.frameName), toQString(c.frameFile))
                        .arg(c.frameLine)};
  const auto line = [&](const QString& name, const std::optional<double>& seconds) {
    if (seconds) lines << tr("%1: %2").arg(name, formatSeconds(*seconds));
  };
  line(tr("Joint-graph passes (in AOTAutograd)"), m.jointGraphPassSeconds);
  line(tr("Pre-grad passes"), m.preGradPassSeconds);
  line(tr("Post-grad passes"), m.postGradPassSeconds);
  line(tr("Triton compiles (in code generation)"), m.tritonSeconds);
  line(tr("Tracing thrown away by a restart"), m.dynamoBeforeRestartSeconds);
  if (m.fxGraphRemote.any() || m.aotAutogradRemote.any()) {
    lines << tr("Remote caches: FX graph %1 hit(s), %2 miss(es); AOTAutograd %3 hit(s), %4 miss(es)")
                 .arg(m.fxGraphRemote.hits)
                 .arg(m.fxGraphRemote.misses)
                 .arg(m.aotAutogradRemote.hits)
                 .arg(m.aotAutogradRemote.misses);
  }
  if (!m.tritonKernels.empty()) {
    lines << tr("Longest Triton kernel compiles:");
    for (size_t i = 0; i < m.tritonKernels.size() && i < 5; ++i)
      lines << tr("  %1  %2").arg(formatSeconds(m.tritonKernels[i].second), toQString(m.tritonKernels[i].first));
  }
  for (const std::string& reason : c.restartReasons) lines << tr("Restarted: %1").arg(toQString(reason).section(QLatin1Char('\n'), 0, 0));
  for (const std::string& reason : c.recompileReasons) lines << tr("Recompiled: %1").arg(toQString(reason));
  if (c.status == io::CompileStatus::Failed) lines << tr("Failed: %1: %2").arg(toQString(c.failType), toQString(c.failReason));
  return lines.join(QLatin1Char('\n'));
}

QVariant CompileMetricsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
  const Row& row = rows_[static_cast<size_t>(index.row())];
  const io::TraceCompile& c = artifact_->trace->compiles[row.compile];
  const io::CompileMetrics& m = row.metrics;
  const int column = index.column();
  if (role == Qt::ToolTipRole) return toolTip(row);
  if (role == Qt::TextAlignmentRole) {
    return column >= TotalColumn && column != CacheColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
  }
  if (role == kSortRole) {
    if (const std::optional<double> seconds = secondsOf(m, column)) return *seconds;
    switch (column) {
      case CompileColumn: return static_cast<qulonglong>(row.compile);  // log order
      case CacheColumn: return static_cast<qlonglong>(m.fxGraph().hits);
      case GraphBreaksColumn: return static_cast<qlonglong>(m.graphBreaks.value_or(-1));
      case GuardCountColumn: return static_cast<qlonglong>(c.guardCount.value_or(-1));
      case TotalColumn:
      case DynamoColumn:
      case AotAutogradColumn:
      case InductorColumn:
      case CodegenColumn:
      case BackwardColumn: return -1.0;
    }
    return data(index, Qt::DisplayRole);
  }
  if (role != Qt::DisplayRole) return {};
  if (const std::optional<double> seconds = secondsOf(m, column)) return formatSeconds(*seconds);
  switch (column) {
    case CompileColumn: return c.rank >= 0 ? tr("%1 (rank %2)").arg(toQString(c.id)).arg(c.rank) : toQString(c.id);
    case FrameColumn: return toQString(c.frameName);
    case StatusColumn: return toQString(io::compileStatusName(c.status));
    case CacheColumn: {
      const io::CacheOutcome fx = m.fxGraph(), aot = m.aotAutograd();
      if (!fx.any() && !aot.any()) return QString();
      return tr("FX %1/%2 · AOT %3/%4").arg(fx.hits).arg(fx.hits + fx.misses).arg(aot.hits).arg(aot.hits + aot.misses);
    }
    case GraphBreaksColumn: return m.graphBreaks ? QLocale().toString(static_cast<qlonglong>(*m.graphBreaks)) : QString();
    case GuardCountColumn: return c.guardCount ? QLocale().toString(static_cast<qlonglong>(*c.guardCount)) : QString();
  }
  return QString();  // a phase the log does not give
}

QVariant CompileMetricsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case DynamoColumn: return tr("Dynamo's tracing: the whole frame's compile time less the backend's");
      case AotAutogradColumn: return tr("AOTAutograd: the backend's time less Inductor's (joint graph, partition)");
      case InductorColumn: return tr("Inductor's passes, lowering and scheduling: its time less code generation");
      case CodegenColumn: return tr("Code generation, Triton compiles and autotuning included");
      case BackwardColumn: return tr("A backward Inductor compiled at its first call (bwd_compilation_metrics)");
      case CacheColumn: return tr("Cache hits of lookups: Inductor's FX graph cache and AOTAutograd's (local and remote)");
      case GuardCountColumn: return tr("Dynamo's guard_count metric (it counts more than the guard tree's leaves)");
    }
    return {};
  }
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case CompileColumn: return tr("Compile");
    case FrameColumn: return tr("Frame");
    case StatusColumn: return tr("Status");
    case TotalColumn: return tr("Compile time");
    case DynamoColumn: return tr("Dynamo");
    case AotAutogradColumn: return tr("AOTAutograd");
    case InductorColumn: return tr("Inductor");
    case CodegenColumn: return tr("Code generation");
    case BackwardColumn: return tr("Backward at first call");
    case CacheColumn: return tr("Cache hits");
    case GraphBreaksColumn: return tr("Graph breaks");
    case GuardCountColumn: return tr("Dynamo guard_count");
  }
  return {};
}

}  // namespace lathe::views

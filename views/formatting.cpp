#include "views/formatting.h"

#include "util/format.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <array>
#include <string_view>
#include <cmath>

#include "io/graph_export.h"

namespace lathe::views {

QString toQString(std::string_view text) {
  return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

namespace {

// Scales `value` by `step` until it is below it and prints it with three significant digits.
QString scaled(double value, double step, const std::array<const char*, 6>& units) {
  size_t unit = 0;
  while (std::abs(value) >= step && unit + 1 < units.size()) {
    value /= step;
    ++unit;
  }
  const int decimals = unit == 0 ? 0 : (std::abs(value) < 10 ? 2 : (std::abs(value) < 100 ? 1 : 0));
  return QStringLiteral("%1 %2").arg(value, 0, 'f', decimals).arg(QString::fromLatin1(units[unit]));
}

}  // namespace

ByteUnit byteAxisUnit(double largestBytes) {
  constexpr double kKiB = 1024.0, kMiB = kKiB * 1024.0, kGiB = kMiB * 1024.0;
  if (largestBytes >= kGiB) return {kGiB, QStringLiteral("GiB")};
  if (largestBytes >= kMiB) return {kMiB, QStringLiteral("MiB")};
  return {kKiB, QStringLiteral("KiB")};
}

QString formatBytes(uint64_t bytes) {
  return QString::fromStdString(lathe::formatBytes(bytes));
}

QString formatFlops(double flops) {
  return scaled(flops, 1000.0, {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"});
}

QString formatSeconds(double seconds) { return QString::fromStdString(lathe::formatSeconds(seconds)); }

QString formatModelError(double estimated, double measured) {
  if (!(measured > 0)) return QStringLiteral("—");
  const long percent = std::lround(100 * (estimated - measured) / measured);
  return percent < 0 ? QStringLiteral("−%1%").arg(-percent) : QStringLiteral("+%1%").arg(percent);
}

QString valueSummary(const ir::Graph& graph, ir::NodeId node) {
  const ir::TensorMeta& meta = graph.node(node).meta;
  if (meta.isTensor()) return toQString(io::metaSummary(graph, meta));
  if (meta.symExpr != 0) return toQString(graph.str(meta.symExpr));
  return {};
}

QString sourceSummary(const ir::Graph& graph, ir::NodeId node) {
  const ir::Provenance& where = graph.node(node).provenance;
  if (where.modulePath != 0) return toQString(graph.str(where.modulePath));
  if (where.file == 0) return {};
  QString text = QFileInfo(toQString(graph.str(where.file))).fileName();
  if (where.line != 0) text += QLatin1Char(':') + QString::number(where.line);
  if (where.function != 0) {
    text = QCoreApplication::translate("lathe::views", "%1 in %2").arg(text, toQString(graph.str(where.function)));
  }
  return text;
}

namespace {

// In enum order; QT_TRANSLATE_NOOP lets lupdate collect them for the translations.
constexpr std::array<const char*, ir::kOpCategoryCount> kOpCategoryLabels{
    QT_TRANSLATE_NOOP("lathe::views::OpCategory", "unknown"),
    QT_TRANSLATE_NOOP("lathe::views::OpCategory", "matmul"),
    QT_TRANSLATE_NOOP("lathe::views::OpCategory", "attention"),
    QT_TRANSLATE_NOOP("lathe::views::OpCategory", "convolution"),
    QT_TRANSLATE_NOOP("lathe::views::OpCategory", "pointwise"),
    QT_TRANSLATE_NOOP("lathe::views::OpCategory", "reduction"),
    QT_TRANSLATE_NOOP("lathe::views::OpCategory", "normalization"),
    QT_TRANSLATE_NOOP("lathe::views::OpCategory", "data_movement"),
    QT_TRANSLATE_NOOP("lathe::views::OpCategory", "view"),
    QT_TRANSLATE_NOOP("lathe::views::OpCategory", "creation"),
    QT_TRANSLATE_NOOP("lathe::views::OpCategory", "random"),
    QT_TRANSLATE_NOOP("lathe::views::OpCategory", "collective"),
    QT_TRANSLATE_NOOP("lathe::views::OpCategory", "getitem"),
    QT_TRANSLATE_NOOP("lathe::views::OpCategory", "host"),
    QT_TRANSLATE_NOOP("lathe::views::OpCategory", "higher_order"),
    QT_TRANSLATE_NOOP("lathe::views::OpCategory", "custom"),
};

constexpr std::array<const char*, analysis::kMemoryCategoryCount> kMemoryCategoryLabels{
    QT_TRANSLATE_NOOP("lathe::views::MemoryCategory", "weights"),
    QT_TRANSLATE_NOOP("lathe::views::MemoryCategory", "inputs"),
    QT_TRANSLATE_NOOP("lathe::views::MemoryCategory", "saved"),
    QT_TRANSLATE_NOOP("lathe::views::MemoryCategory", "recomputed"),
    QT_TRANSLATE_NOOP("lathe::views::MemoryCategory", "temporaries"),
    QT_TRANSLATE_NOOP("lathe::views::MemoryCategory", "gradients"),
    QT_TRANSLATE_NOOP("lathe::views::MemoryCategory", "outputs"),
    QT_TRANSLATE_NOOP("lathe::views::MemoryCategory", "prefetched"),
};

// The labels lupdate reads are the core's names (analysis::kMemoryCategoryNames), in its order.
constexpr bool labelsAreTheCategoryNames() {
  for (size_t i = 0; i < analysis::kMemoryCategoryCount; ++i) {
    if (std::string_view(kMemoryCategoryLabels[i]) != analysis::kMemoryCategoryNames[i]) return false;
  }
  return true;
}
static_assert(labelsAreTheCategoryNames(), "a memory category label differs from analysis::kMemoryCategoryNames");

}  // namespace

QString opCategoryLabel(ir::OpCategory category) {
  const auto i = static_cast<size_t>(category);
  return QCoreApplication::translate("lathe::views::OpCategory",
                                     kOpCategoryLabels[i < kOpCategoryLabels.size() ? i : 0]);
}

QString memoryCategoryLabel(analysis::MemoryCategory category) {
  const auto i = static_cast<size_t>(category);
  return QCoreApplication::translate("lathe::views::MemoryCategory",
                                     kMemoryCategoryLabels[i < kMemoryCategoryLabels.size() ? i : 0]);
}

}  // namespace lathe::views

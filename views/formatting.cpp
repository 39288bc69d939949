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

QString translated(const Message& message) {
  return toQString(fill(message, [](const MessagePattern& pattern, std::optional<int64_t> count) {
    return QCoreApplication::translate(pattern.context, pattern.text, nullptr, count ? static_cast<int>(*count) : -1).toStdString();
  }));
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


namespace {

struct KnownStat {
  std::string_view name, pass;  // pass "": any
  const char* label;
  const char* help;
};

// Every statistic the passes declare (passes/*.h), with their declared help as the source text to
// translate (gui_translations checks they agree), and the plan bundle's estimates.
constexpr KnownStat kKnownStats[] = {
      {"groups", "", QT_TRANSLATE_NOOP("PassStats", "fusion groups"), QT_TRANSLATE_NOOP("PassStats", "fusion groups (each one generated kernel)")},
      {"groups_pointwise", "", QT_TRANSLATE_NOOP("PassStats", "pointwise groups"), QT_TRANSLATE_NOOP("PassStats", "groups without a reduction")},
      {"groups_reduction", "", QT_TRANSLATE_NOOP("PassStats", "reduction groups"), QT_TRANSLATE_NOOP("PassStats", "groups around a reduction")},
      {"groups_normalization", "", QT_TRANSLATE_NOOP("PassStats", "normalization groups"), QT_TRANSLATE_NOOP("PassStats", "groups around a normalization (softmax, layer_norm)")},
      {"fused_nodes", "", QT_TRANSLATE_NOOP("PassStats", "fused nodes"), QT_TRANSLATE_NOOP("PassStats", "nodes in a group")},
      {"kernels_before", "", QT_TRANSLATE_NOOP("PassStats", "kernels before fusion"), QT_TRANSLATE_NOOP("PassStats", "calls other than views, getitems and host ops")},
      {"kernels_after", "", QT_TRANSLATE_NOOP("PassStats", "kernels after fusion"), QT_TRANSLATE_NOOP("PassStats", "kernels left once each group is one")},
      {"traffic_removed_bytes", "", QT_TRANSLATE_NOOP("PassStats", "traffic removed"), QT_TRANSLATE_NOOP("PassStats", "memory traffic fusion removes (in-group reads and writes)")},
      {"step_seconds", "offload", QT_TRANSLATE_NOOP("PassStats", "step time"), QT_TRANSLATE_NOOP("PassStats", "the simulated step, copies included")},
      {"step_seconds", "", QT_TRANSLATE_NOOP("PassStats", "step time"), QT_TRANSLATE_NOOP("PassStats", "forward and backward, estimated")},
      {"compute_seconds", "", QT_TRANSLATE_NOOP("PassStats", "compute time"), QT_TRANSLATE_NOOP("PassStats", "the step's compute alone")},
      {"bubble_seconds", "", QT_TRANSLATE_NOOP("PassStats", "stalls"), QT_TRANSLATE_NOOP("PassStats", "compute stalled waiting for copies")},
      {"floor_seconds", "", QT_TRANSLATE_NOOP("PassStats", "floor"), QT_TRANSLATE_NOOP("PassStats", "max(compute, streamed bytes over the host link)")},
      {"peak_weight_bytes", "", QT_TRANSLATE_NOOP("PassStats", "peak weights"), QT_TRANSLATE_NOOP("PassStats", "the most weight bytes on the GPU")},
      {"budget_bytes", "offload", QT_TRANSLATE_NOOP("PassStats", "weight budget"), QT_TRANSLATE_NOOP("PassStats", "the weight budget planned for")},
      {"budget_bytes", "", QT_TRANSLATE_NOOP("PassStats", "peak budget"), QT_TRANSLATE_NOOP("PassStats", "the peak budget asked for (policy=budget)")},
      {"streamed_bytes", "", QT_TRANSLATE_NOOP("PassStats", "streamed per step"), QT_TRANSLATE_NOOP("PassStats", "weight bytes copied in per step")},
      {"resident_units", "", QT_TRANSLATE_NOOP("PassStats", "resident units"), QT_TRANSLATE_NOOP("PassStats", "layer units kept on the GPU")},
      {"saved_values", "", QT_TRANSLATE_NOOP("PassStats", "saved values"), QT_TRANSLATE_NOOP("PassStats", "tensors the forward saves")},
      {"saved_bytes", "", QT_TRANSLATE_NOOP("PassStats", "saved for the backward"), QT_TRANSLATE_NOOP("PassStats", "saved for the backward, weights left out")},
      {"recomputed_nodes", "", QT_TRANSLATE_NOOP("PassStats", "recomputed nodes"), QT_TRANSLATE_NOOP("PassStats", "forward nodes the backward runs again")},
      {"recompute_seconds", "", QT_TRANSLATE_NOOP("PassStats", "recompute time"), QT_TRANSLATE_NOOP("PassStats", "the backward's recomputation")},
      {"peak_bytes", "", QT_TRANSLATE_NOOP("PassStats", "peak"), QT_TRANSLATE_NOOP("PassStats", "the step's estimated peak memory")},
      {"budget_met", "", QT_TRANSLATE_NOOP("PassStats", "budget met"), QT_TRANSLATE_NOOP("PassStats", "whether a plan within the budget was found")},
      {"offloaded_values", "", QT_TRANSLATE_NOOP("PassStats", "offloaded values"), QT_TRANSLATE_NOOP("PassStats", "saved values held in host memory")},
      {"offloaded_bytes", "", QT_TRANSLATE_NOOP("PassStats", "offloaded bytes"), QT_TRANSLATE_NOOP("PassStats", "bytes of the saved values held in host memory")},
      {"pieces", "", QT_TRANSLATE_NOOP("PassStats", "pieces"), QT_TRANSLATE_NOOP("PassStats", "pieces the split ops cut the graph into")},
      {"split_ops", "", QT_TRANSLATE_NOOP("PassStats", "split ops"), QT_TRANSLATE_NOOP("PassStats", "ops the graph is split at")},
      {"units", "", QT_TRANSLATE_NOOP("PassStats", "layer units"), QT_TRANSLATE_NOOP("PassStats", "layer units")},
      {"unit_weight_bytes_min", "", QT_TRANSLATE_NOOP("PassStats", "smallest unit's weights"), QT_TRANSLATE_NOOP("PassStats", "weights of the smallest unit")},
      {"unit_weight_bytes_max", "", QT_TRANSLATE_NOOP("PassStats", "largest unit's weights"), QT_TRANSLATE_NOOP("PassStats", "weights of the largest unit")},
      {"executions", "", QT_TRANSLATE_NOOP("PassStats", "executions"), QT_TRANSLATE_NOOP("PassStats", "nodes run in the step, recomputed ones again")},
      {"kernel_launches", "", QT_TRANSLATE_NOOP("PassStats", "kernel launches"), QT_TRANSLATE_NOOP("PassStats", "kernels the step launches")},
};

}  // namespace

StatText passStatText(std::string_view pass, std::string_view name, std::string_view help) {
  for (const KnownStat& known : kKnownStats) {
    if (known.name != name || (!known.pass.empty() && known.pass != pass)) continue;
    return {QCoreApplication::translate("PassStats", known.label), QCoreApplication::translate("PassStats", known.help)};
  }
  return {toQString(name), toQString(help)};
}

QString formatPassStat(const passes::PassStat& stat) {
  if (stat.key.unit == passes::StatUnit::Flag) {
    return stat.value != 0 ? QCoreApplication::translate("PassStats", "yes") : QCoreApplication::translate("PassStats", "no");
  }
  return toQString(passes::formatStat(stat));
}

}  // namespace lathe::views

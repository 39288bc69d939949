// Text for the studio's views: Qt strings from core's UTF-8 text, and human-readable quantities.
#pragma once

#include <QString>
#include <cstdint>
#include <string_view>

#include "analysis/memory_timeline.h"
#include "ir/graph.h"
#include "ir/op_info.h"
#include "passes/pass.h"

namespace lathe::views {

[[nodiscard]] QString toQString(std::string_view text);
// A message of the core (a pass's diff line, why a value is kept) in the interface language.
[[nodiscard]] QString translated(const Message& message);
// lathe::formatBytes (core/util/format.h) as a QString: 1536 -> "1.50 KiB"
[[nodiscard]] QString formatBytes(uint64_t bytes);
// The unit a memory axis reads best in when its values reach `largestBytes`: GiB from 1 GiB, MiB
// from 1 MiB, else KiB (a tiny graph's timeline would otherwise read 0.008 GiB).
struct ByteUnit {
  double bytes = 1;  // bytes per unit
  QString name;      // "MiB"
};
[[nodiscard]] ByteUnit byteAxisUnit(double largestBytes);
// lathe::formatSeconds as a QString: "2.50 s", "45.00 ms", "3.20 µs"
[[nodiscard]] QString formatSeconds(double seconds);
// How far an estimate is from what was measured, as `lathe plan --profile` prints it: "+12%", "−98%"
// (the estimate 98% below the measurement); "—" when nothing was measured.
[[nodiscard]] QString formatModelError(double estimated, double measured);
// 2.5e12 -> "2.50 TFLOP"
[[nodiscard]] QString formatFlops(double flops);
// "bf16[4, 2048, 4096]" for a tensor, the expression for a symbolic scalar, "" when unknown.
[[nodiscard]] QString valueSummary(const ir::Graph& graph, ir::NodeId node);
// Module path where known, else "file.py:42 in forward"; "" when the node has no provenance.
[[nodiscard]] QString sourceSummary(const ir::Graph& graph, ir::NodeId node);

// Core's category names in the interface language ("matmul", "saved", ...).
[[nodiscard]] QString opCategoryLabel(ir::OpCategory category);
[[nodiscard]] QString memoryCategoryLabel(analysis::MemoryCategory category);

// A pass statistic (or a plan bundle's estimate, named alike) in the interface language: its label
// and what it counts, the pass's own name and help where no translation is known. `pass` tells
// apart names two passes share with different meanings (recompute's budget_bytes is the peak
// budget, offload's the weight budget). {"saved values", "tensors the forward saves"}.
struct StatText {
  QString label, help;
};
[[nodiscard]] StatText passStatText(std::string_view pass, std::string_view name, std::string_view help = {});
// passes::formatStat with its yes / no in the interface language.
[[nodiscard]] QString formatPassStat(const passes::PassStat& stat);

}  // namespace lathe::views

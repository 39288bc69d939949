#include "passes/calibration.h"

#include <algorithm>
#include <array>

#include "plan/plan_bundle.h"
#include "util/diagnostics.h"

namespace lathe::passes {

Calibration calibrate(const PlanTarget& target, const plan::MeasuredProfile& profile, std::string_view profileName) {
  const ir::Graph& graph = target.graph();
  const plan::ProfiledGraph* entry = profile.measuredGraph(plan::graphFingerprint(graph));
  if (entry == nullptr) {
    throw Error(ErrorCode::BadInput, std::string(profileName) + ": no measured nodes of graph " + target.graphId() +
                                         " (the profile was measured on another graph; `lathe measure` it)");
  }
  std::vector<std::optional<double>> measured;
  try {
    measured = plan::measuredSecondsByNode(*entry->measured, graph);
  } catch (const Error& e) {
    throw Error(ErrorCode::BadInput, std::string(profileName) + ": " + e.what());
  }
  const std::vector<double>& estimated = target.estimatedNodeSeconds();
  std::array<CategoryTimes, ir::kOpCategoryCount> categories{};
  size_t count = 0;
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    if (!measured[id]) continue;
    ++count;
    const ir::OpCategory category = target.ops().lookup(graph.target(id)).category;
    CategoryTimes& c = categories[static_cast<size_t>(category)];
    c.category = category;
    ++c.nodes;
    c.estimated += estimated[id];
    c.measured += *measured[id];
  }
  std::vector<CategoryTimes> byCategory;
  for (const CategoryTimes& c : categories) {
    if (c.nodes > 0) byCategory.push_back(c);
  }
  std::sort(byCategory.begin(), byCategory.end(), [](const auto& a, const auto& b) { return a.measured > b.measured; });
  std::string source = entry->measured->source + " on " + profile.device;
  PlanTarget calibrated = target.calibrated(std::move(measured), source);
  return Calibration{std::move(calibrated), std::move(source), profile.device, count, std::move(byCategory),
                     entry->measured->livePeakBytes};
}

}  // namespace lathe::passes

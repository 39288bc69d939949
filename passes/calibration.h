// A planning target priced with what a profile measured (`--profile`, the studio's Load Profile):
// nodes the profile timed cost their measured seconds, the others keep the model's estimate; and the
// model's error per op category, measured beside estimated, to say how far off the model was.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ir/op_info.h"
#include "passes/plan_target.h"
#include "plan/profile.h"

namespace lathe::passes {

struct CategoryTimes {
  ir::OpCategory category = ir::OpCategory::Unknown;
  size_t nodes = 0;       // measured nodes of the category
  double estimated = 0;   // the model's seconds for those nodes
  double measured = 0;
};

struct Calibration {
  PlanTarget target;                      // priced with the measurements
  std::string source;                     // "lathe_runtime cuda on NVIDIA H200"
  std::string device;                     // the profile's device ("NVIDIA H200", "cpu")
  size_t measuredNodes = 0;               // calls the profile timed
  std::vector<CategoryTimes> byCategory;  // categories with measured nodes, by measured time
  uint64_t measuredLivePeakBytes = 0;     // the profile's live peak of the step's own values
};

// The profile's entry for the target's graph (by fingerprint) applied to it. Throws Error(BadInput)
// "<profileName>: ..." when the profile measured no node of this graph.
[[nodiscard]] Calibration calibrate(const PlanTarget& target, const plan::MeasuredProfile& profile,
                                    std::string_view profileName);

}  // namespace lathe::passes

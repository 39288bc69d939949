// Pass infrastructure: a pass reads a graph and the plan so far and returns the next plan state,
// its statistics and a readable diff. Passes are deterministic: the same input gives byte-identical
// output, so plans can be diffed and cached.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/graph_inputs.h"
#include "hw/hw_profile.h"
#include "ir/graph.h"
#include "ir/op_info.h"
#include "plan/plan_state.h"
#include "util/progress.h"

namespace lathe::passes {

// Options of one pipeline step, `recompute(policy=budget,memory=40GiB)` -> {policy: budget, memory: 40GiB}.
class PassOptions {
 public:
  PassOptions() = default;
  explicit PassOptions(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  [[nodiscard]] const std::map<std::string, std::string>& values() const { return values_; }
  [[nodiscard]] bool has(std::string_view key) const;
  [[nodiscard]] std::string string(std::string_view key, std::string_view fallback) const;
  // Throw Error(Usage) naming the pass and key when the text is not a number / byte size / ratio.
  [[nodiscard]] double number(std::string_view key, double fallback) const;
  // "40GiB", "512MiB", "3.5GB", "1e9" (bytes).
  [[nodiscard]] uint64_t bytes(std::string_view key, uint64_t fallback) const;
  [[nodiscard]] bool flag(std::string_view key, bool fallback) const;
  void set(std::string key, std::string value) { values_[std::move(key)] = std::move(value); }
  // Keys a pass does not know are a usage error, so that typos never pass silently.
  void requireKnown(std::string_view pass, std::initializer_list<std::string_view> known) const;

 private:
  std::map<std::string, std::string> values_;
};

// Parses "40GiB", "40 GB", "1.5e9"; nullopt when it is not a size.
[[nodiscard]] std::optional<uint64_t> parseByteSize(std::string_view text);

// Everything a pass may read. The graph is finalized; the context outlives the pass run.
struct PassContext {
  const ir::Graph& graph;
  const analysis::GraphInputs& inputs;  // parameters, buffers, user inputs, tangents; module paths
  const hw::HwProfile& hw;
  const ir::OpRegistry& ops;
  Progress progress;
  // The capture's backend ran Inductor's joint-graph passes before partitioning (false for
  // aot_eager backends): the torch recompute policy then removes no-op ops first, as Inductor did.
  bool inductorJointPasses = true;
};

// What the planner supports: at most plan::kMaxPlanNodes nodes (what a plan bundle holds), no
// negative size, each tensor at most kMaxTensorBytes (its elements and the storage its strides
// span) and all of them at most kMaxGraphBytes. Within these bounds the passes' byte sums, and
// torch's min-cut capacities (a size times up to 2 x 1.1^100), stay exact in 64 bits. Throws
// Error(BadInput) naming the first node beyond them; every pass checks its graph so.
inline constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 40;  // 1 TiB
inline constexpr uint64_t kMaxGraphBytes = uint64_t{1} << 44;   // 16 TiB
void requireSupportedGraph(const ir::Graph& graph);

struct PassStat {
  std::string name;  // "groups", "saved_bytes", "peak_bytes", "step_seconds"
  double value = 0;
  std::string unit;  // "", "bytes", "s", "%"
};

struct PassResult {
  plan::PlanState state;
  std::vector<PassStat> stats;
  std::vector<std::string> diff;  // readable lines: "+ group 3 (pointwise): mul_4, add_2, ..."
};

class Pass {
 public:
  virtual ~Pass() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  [[nodiscard]] virtual PassResult run(const PassContext& context, const plan::PlanState& before,
                                       const PassOptions& options) const = 0;
};

}  // namespace lathe::passes

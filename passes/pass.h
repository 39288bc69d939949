// Pass infrastructure: a pass reads a graph and the plan so far and returns the next plan state,
// its statistics and a readable diff. Passes are deterministic: the same input gives byte-identical
// output, so plans can be diffed and cached.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/graph_inputs.h"
#include "analysis/joint.h"
#include "analysis/layer_units.h"
#include "hw/hw_profile.h"
#include "ir/graph.h"
#include "ir/op_info.h"
#include "plan/plan_state.h"
#include "util/message.h"
#include "util/progress.h"

namespace lathe::passes {

// What a pipeline step's option holds. The pipeline checks every value against its pass's
// declared options before any pass runs (checkPipeline), so a pass reads values that parse.
enum class OptionType : uint8_t {
  Flag,    // true|false (also 1|0, on|off)
  Number,  // a decimal number within [min, max], whole where `whole` is set
  Bytes,   // a byte size: "40GiB", "512MiB", "3.5GB", "1e9"
  Choice,  // one of `choices`
  Path,    // a file name, not empty
};
[[nodiscard]] std::string_view optionTypeName(OptionType type);

// One option a pass declares (LLVM's cl::opt, MLIR's Pass::Option): its name, type, default and help.
struct OptionSpec {
  std::string_view name;
  OptionType type = OptionType::Flag;
  std::string_view fallback;  // the default as pipeline text spells it; empty: none (the pass says what then)
  std::string_view help;
  std::span<const std::string_view> choices = {};  // OptionType::Choice
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool minExclusive = false;  // (min, max] rather than [min, max]
  bool whole = false;
};

// Options of one pipeline step, `recompute(policy=budget,memory=40GiB)` -> {policy: budget, memory: 40GiB},
// read through the pass's declared specs: a value given, else the spec's default.
class PassOptions {
 public:
  PassOptions() = default;
  explicit PassOptions(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  [[nodiscard]] const std::map<std::string, std::string>& values() const { return values_; }
  [[nodiscard]] bool has(const OptionSpec& option) const;
  // Each throws Error(Usage) naming the option when its text does not parse as the spec's type or
  // lies outside its range, and Error(Internal) when the spec is of another type.
  [[nodiscard]] bool flag(const OptionSpec& option) const;
  [[nodiscard]] double number(const OptionSpec& option) const;
  [[nodiscard]] uint64_t bytes(const OptionSpec& option) const;
  [[nodiscard]] std::string text(const OptionSpec& option) const;  // Choice and Path
  void set(std::string key, std::string value) { values_[std::move(key)] = std::move(value); }
  void set(const OptionSpec& option, std::string value) { set(std::string(option.name), std::move(value)); }
  // Every value against its spec, and no key the specs lack (typos never pass silently).
  void check(std::string_view pass, std::span<const OptionSpec> specs) const;

 private:
  [[nodiscard]] const std::string* find(const OptionSpec& option) const;
  std::map<std::string, std::string> values_;
};

// Parses "40GiB", "40 GB", "1.5e9"; nullopt when it is not a size.
[[nodiscard]] std::optional<uint64_t> parseByteSize(std::string_view text);

class PlanTarget;

// Everything a pass may read: the planning target's graph, inputs, hardware and op registry, and the
// analyses passes share, computed once per target (PlanTarget::context makes it). The graph is
// finalized; the target outlives the pass run.
struct PassContext {
  const PlanTarget& target;
  const ir::Graph& graph;
  const analysis::GraphInputs& inputs;  // parameters, buffers, user inputs, tangents; module paths
  const hw::HwProfile& hw;
  const ir::OpRegistry& ops;
  Progress progress;
  // The capture's backend ran Inductor's joint-graph passes before partitioning (false for
  // aot_eager backends): the torch recompute policy then removes no-op ops first, as Inductor did.
  bool inductorJointPasses = true;

  // The target's cached analyses (plan_target.h).
  [[nodiscard]] const analysis::JointInfo& joint() const;
  [[nodiscard]] const analysis::LayerUnits& layerUnits() const;
  [[nodiscard]] const std::vector<double>& nodeSeconds() const;  // estimated seconds per node on hw
  [[nodiscard]] const std::vector<double>& recomputeCost() const;  // seconds to recompute each node on hw
};

// What the planner supports: at most plan::kMaxPlanNodes nodes (what a plan bundle holds), no
// negative size, each tensor at most kMaxTensorBytes (its elements and the storage its strides
// span) and all of them at most kMaxGraphBytes. Within these bounds the passes' byte sums, and
// torch's min-cut capacities (a size times up to 2 x 1.1^100), stay exact in 64 bits. Throws
// Error(BadInput) naming the first node beyond them; every pass checks its graph so.
inline constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 40;  // 1 TiB
inline constexpr uint64_t kMaxGraphBytes = uint64_t{1} << 44;   // 16 TiB
void requireSupportedGraph(const ir::Graph& graph);
// Why the planner refuses the graph (requireSupportedGraph's message), or nothing when it plans it.
[[nodiscard]] std::optional<std::string> unsupportedGraph(const ir::Graph& graph);

// What a statistic measures, so that every front end prints and converts it one way.
enum class StatUnit : uint8_t { Count, Bytes, Seconds, Flag };
[[nodiscard]] std::string_view statUnitName(StatUnit unit);  // "", "bytes", "s", "flag"

// A statistic a pass declares (LLVM's STATISTIC, MLIR's Pass::Statistic): front ends read results
// through these keys, never by spelling a name.
struct StatKey {
  std::string_view name;  // "peak_bytes"
  StatUnit unit = StatUnit::Count;
  std::string_view help;
};

struct PassStat {
  StatKey key;
  double value = 0;
};
// A statistic as people read it: "1.50 GiB", "12.3 ms", "yes", "42".
[[nodiscard]] std::string formatStat(const PassStat& stat);

struct PassResult {
  plan::PlanState state;
  std::vector<PassStat> stats;
  // What the pass changed, one line each ("+ group 3 (pointwise): mul_4, add_2, ..."), said in the
  // face's language: toEnglish for the CLI and the plan file, views::translated in the studio.
  std::vector<Message> diff;

  void set(const StatKey& key, double value);
  [[nodiscard]] std::optional<double> stat(const StatKey& key) const;
};

// What a pass is, declared once: the pipeline checks steps against it, `lathe passes` lists it.
struct PassInfo {
  std::string_view name;
  std::string_view summary;
  std::span<const OptionSpec> options;
  std::span<const StatKey> statistics;
  // Passes that must run earlier in the same pipeline (offload reads the units split makes).
  std::span<const std::string_view> runsAfter = {};
  bool needsJointGraph = false;  // a training step's joint forward/backward graph
};

class Pass {
 public:
  virtual ~Pass() = default;
  [[nodiscard]] virtual const PassInfo& info() const = 0;
  [[nodiscard]] std::string_view name() const { return info().name; }
  // Rules between options that their specs cannot state (policy=budget needs memory=); called by
  // the pipeline check after each value was checked against its spec.
  virtual void checkOptions(const PassOptions& /*options*/) const {}
  [[nodiscard]] virtual PassResult run(const PassContext& context, const plan::PlanState& before,
                                       const PassOptions& options) const = 0;
};

}  // namespace lathe::passes

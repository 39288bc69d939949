// Pipelines as strings: `split,fusion,recompute(policy=budget,memory=40GiB),offload(policy=heuristic,
// resident=0.3)`. Running one records every step's state, statistics and diff, so a viewer can step
// back and forth through it.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "passes/pass.h"

namespace lathe::passes {

struct PipelineStep {
  std::string pass;     // "recompute"
  PassOptions options;  // {policy: budget, memory: 40GiB}
};

// Throws Error(Usage) naming the position and what was expected on malformed text or an unknown pass,
// and as checkPipeline (without a target) on steps their passes refuse.
[[nodiscard]] std::vector<PipelineStep> parsePipeline(std::string_view text);
// Canonical text of a step, options sorted: "recompute(memory=40GiB,policy=budget)".
[[nodiscard]] std::string formatStep(const PipelineStep& step);
[[nodiscard]] std::string formatPipeline(std::span<const PipelineStep> steps);

// The passes a pipeline can name, in the order `lathe passes` lists them.
[[nodiscard]] std::vector<const Pass*> registeredPasses();
[[nodiscard]] std::vector<std::string_view> passNames();
[[nodiscard]] const Pass& findPass(std::string_view name);  // Error(Usage) when unknown

// Checks steps against their passes' declarations before anything runs: every option against its
// spec and the pass's rules between options, every required pass earlier in the pipeline and, with
// a target, a joint graph where a pass needs one. Throws Error(Usage) naming the step.
void checkPipeline(std::span<const PipelineStep> steps, const PlanTarget* target = nullptr);

struct PipelineRecord {
  PipelineStep step;
  PassResult result;
  double seconds = 0;  // wall time of the pass
};

struct PipelineRun {
  plan::PlanState initial;
  std::vector<PipelineRecord> history;
  [[nodiscard]] const plan::PlanState& finalState() const { return history.empty() ? initial : history.back().result.state; }
};

// Checks the whole pipeline on the context's target (checkPipeline), then runs it step by step.
[[nodiscard]] PipelineRun runPipeline(const PassContext& context, std::span<const PipelineStep> steps);

// Runs one step on the run's final state (`runPass` computes its result) and appends its record
// with the wall time; for callers that compute a step differently from Pass::run (the studio's
// budget plans pick the recompute step from a frontier solved before).
void appendStep(PipelineRun& run, PipelineStep step,
                const std::function<PassResult(const plan::PlanState& before)>& runPass);

}  // namespace lathe::passes

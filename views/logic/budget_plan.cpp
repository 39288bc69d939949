#include "views/logic/budget_plan.h"

#include <cstdio>

#include "passes/offload_pass.h"

namespace lathe::views {

namespace {

constexpr uint64_t kMiB = 1024ull * 1024ull;

std::string formatRatio(double ratio) {
  char text[16];
  std::snprintf(text, sizeof text, "%.2f", ratio);
  return text;
}

passes::PipelineStep recomputeStep(const BudgetRequest& request) {
  passes::PassOptions options;
  options.set(passes::RecomputePass::kPolicy, "budget");
  options.set(passes::RecomputePass::kMemory, std::to_string(request.budgetBytes / kMiB) + "MiB");
  if (request.activationOffload) options.set(passes::RecomputePass::kOffload, "true");
  return {"recompute", std::move(options)};
}

}  // namespace

passes::PipelineStep offloadStep(const BudgetRequest& request) {
  passes::PassOptions options;
  options.set(passes::OffloadPass::kPolicy, "heuristic");
  options.set(passes::OffloadPass::kResident, formatRatio(request.residentRatio.value_or(1.0)));
  return {"offload", std::move(options)};
}

std::string budgetPipeline(const BudgetRequest& request, bool withRecompute, bool withOffload) {
  std::vector<passes::PipelineStep> steps{{"split", {}}, {"fusion", {}}};
  if (withRecompute) steps.push_back(recomputeStep(request));
  if (withOffload && request.residentRatio) steps.push_back(offloadStep(request));
  return passes::formatPipeline(steps);
}

passes::PipelineRun runBudgetPipeline(const passes::PlanTarget& target, const passes::BudgetFrontier* frontier,
                                      const BudgetRequest& request, const Progress& progress) {
  const passes::PassContext context = target.context(progress);
  const std::vector<passes::PipelineStep> front{{"split", {}}, {"fusion", {}}};
  passes::PipelineRun run = passes::runPipeline(context, front);

  if (frontier) {
    progress.checkCancelled();
    // The budget as the pipeline text states it (whole MiB), as the recompute pass would read it.
    passes::PipelineStep step = recomputeStep(request);
    const uint64_t budget = step.options.bytes(passes::RecomputePass::kMemory);
    const passes::ActivationOffloadOptions activationOffload;
    passes::appendStep(run, std::move(step), [&](const plan::PlanState& before) {
      return passes::budgetRecompute(context, *frontier, budget, before,
                                     request.activationOffload ? &activationOffload : nullptr);
    });
  }
  if (request.residentRatio && !run.finalState().units.empty()) {
    progress.checkCancelled();
    passes::PipelineStep offload = offloadStep(request);
    const passes::Pass& pass = passes::findPass(offload.pass);
    const passes::PassOptions options = offload.options;
    passes::appendStep(run, std::move(offload),
                       [&](const plan::PlanState& before) { return pass.run(context, before, options); });
  }
  return run;
}

}  // namespace lathe::views

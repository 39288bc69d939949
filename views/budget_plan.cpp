#include "views/budget_plan.h"

#include <algorithm>
#include <cstdio>

#include "util/diagnostics.h"

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
  options.set("policy", "budget");
  options.set("memory", std::to_string(request.budgetBytes / kMiB) + "MiB");
  if (request.activationOffload) options.set("offload", "true");
  return {"recompute", std::move(options)};
}

passes::PipelineStep offloadStep(const BudgetRequest& request) {
  passes::PassOptions options;
  options.set("policy", "heuristic");
  options.set("resident", formatRatio(request.residentRatio.value_or(1.0)));
  return {"offload", std::move(options)};
}

}  // namespace

std::string budgetPipeline(const BudgetRequest& request, bool withRecompute, bool withOffload) {
  std::vector<passes::PipelineStep> steps{{"split", {}}, {"fusion", {}}};
  if (withRecompute) steps.push_back(recomputeStep(request));
  if (withOffload && request.residentRatio) steps.push_back(offloadStep(request));
  return passes::formatPipeline(steps);
}

PlanBasis makePlanBasis(const io::Artifact& artifact, const std::string& graphId, const std::string& hardware) {
  const std::vector<io::GraphListing> graphs = artifact.graphs();
  const auto listing =
      std::find_if(graphs.begin(), graphs.end(), [&](const io::GraphListing& g) { return g.id == graphId; });
  if (listing == graphs.end() || !listing->graph)
    throw Error(ErrorCode::BadInput, "the artifact has no graph " + graphId);
  PlanBasis basis;
  basis.graph = listing->graph;
  basis.inputs = analysis::inferGraphInputs(*listing->graph, io::dynamoGraphOf(graphs, *listing));
  basis.hw = hw::resolveHwProfile(hardware);
  basis.inductor = io::compiledByInductor(graphs, *listing);
  basis.joint = analysis::analyzeJoint(*listing->graph);
  return basis;
}

passes::PipelineRun runBudgetPipeline(const PlanBasis& basis, const passes::BudgetFrontier* frontier,
                                      const BudgetRequest& request, const Progress& progress) {
  const passes::PassContext context = basis.context(progress);
  const std::vector<passes::PipelineStep> front{{"split", {}}, {"fusion", {}}};
  passes::PipelineRun run = passes::runPipeline(context, front);

  if (frontier) {
    progress.checkCancelled();
    // The budget as the pipeline text states it (whole MiB), as the recompute pass would read it.
    passes::PipelineStep step = recomputeStep(request);
    const uint64_t budget = step.options.bytes("memory", 0);
    const passes::ActivationOffloadOptions activationOffload;
    passes::appendStep(run, std::move(step), [&](const plan::PlanState& before) {
      return passes::budgetRecompute(context, basis.joint, *frontier, budget, before,
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

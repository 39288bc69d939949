#include "views/budget_plan.h"

#include <algorithm>
#include <chrono>
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
  return {"recompute", std::move(options)};
}

passes::PipelineStep offloadStep(const BudgetRequest& request) {
  passes::PassOptions options;
  options.set("policy", "heuristic");
  options.set("resident", formatRatio(request.residentRatio));
  return {"offload", std::move(options)};
}

}  // namespace

std::string budgetPipeline(const BudgetRequest& request, bool withRecompute, bool withOffload) {
  std::vector<passes::PipelineStep> steps{{"split", {}}, {"fusion", {}}};
  if (withRecompute) steps.push_back(recomputeStep(request));
  if (withOffload) steps.push_back(offloadStep(request));
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

  auto start = std::chrono::steady_clock::now();
  if (frontier) {
    progress.checkCancelled();
    // The budget as the pipeline text states it (whole MiB), as the recompute pass would read it.
    passes::PipelineStep step = recomputeStep(request);
    const uint64_t budget = step.options.bytes("memory", 0);
    passes::PipelineRecord recompute{std::move(step),
                                     passes::budgetRecompute(context, basis.joint, *frontier, budget, run.finalState()), 0};
    recompute.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    run.history.push_back(std::move(recompute));
  }
  if (!run.finalState().units.empty()) {
    progress.checkCancelled();
    const passes::PipelineStep offload = offloadStep(request);
    start = std::chrono::steady_clock::now();
    passes::PipelineRecord record{offload,
                                  passes::findPass(offload.pass).run(context, run.finalState(), offload.options), 0};
    record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    run.history.push_back(std::move(record));
  }
  return run;
}

}  // namespace lathe::views

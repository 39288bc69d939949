// The offload pass on real captures: the problem it builds from a graph, and the memory timeline of
// the planned step, where resident plus prefetched weights never exceed the weight budget.
#include <gtest/gtest.h>

#include "hw/hw_profile.h"
#include "passes/offload_pass.h"
#include "passes/pipeline.h"
#include "passes/plan_builder.h"
#include "sample_graphs.h"
#include "passes/plan_target.h"

namespace lathe::passes {
namespace {

struct Case {
  const char* sample;
  const char* graph;
  const char* pipeline;
};

class OffloadOnCapture : public ::testing::TestWithParam<Case> {};

TEST_P(OffloadOnCapture, WeightsNeverExceedTheBudgetOnTheTimeline) {
  const testing::SampleGraph g = testing::loadSampleGraph(GetParam().sample, GetParam().graph);
  const hw::HwProfile hw = hw::resolveHwProfile("h200");
  const PlanTarget target{g.graph, "test", g.inputs, hw};
  const PassContext context = target.context();
  const PipelineRun run = runPipeline(context, parsePipeline(GetParam().pipeline));
  const plan::PlanState& state = run.finalState();
  ASSERT_TRUE(state.offload.has_value());
  const plan::OffloadDecision& offload = *state.offload;

  uint64_t resident = 0, total = 0;
  for (const plan::LayerUnit& unit : state.units) {
    total += unit.weightBytes;
    if (offload.resident[unit.id]) resident += unit.weightBytes;
  }
  EXPECT_LE(offload.peakWeightBytes, offload.budgetBytes);
  EXPECT_GE(offload.stepSeconds, offload.floorSeconds * (1 - 1e-9));
  EXPECT_EQ(offload.streamedBytes > 0, resident < total);

  // Parameters in units are the weights that stream; buffers stay in "weights" throughout.
  uint64_t buffers = 0;
  for (ir::NodeId id : g.inputs.placeholders) {
    if (g.inputs.role[id] == ir::Role::Buffer) buffers += g.graph->node(id).meta.storageBytes();
  }
  const PlannedStep planned = plannedStep(context, state);
  const size_t weights = static_cast<size_t>(analysis::MemoryCategory::Weights);
  const size_t prefetched = static_cast<size_t>(analysis::MemoryCategory::Prefetched);
  uint64_t most = 0;
  for (const auto& row : planned.timeline.live) {
    most = std::max(most, row[weights] + row[prefetched]);
    EXPECT_GE(row[weights] + buffers, resident);
  }
  EXPECT_LE(most, offload.budgetBytes + buffers);
  EXPECT_GT(most, resident);

  // Segments cover the step in order, and every streamed unit is read by some segment.
  const OffloadProblem problem = offloadProblem(context, state);
  const std::vector<int32_t> segmentOf = segmentOfSteps(stepSchedule(context, state), state);
  ASSERT_FALSE(segmentOf.empty());
  EXPECT_EQ(static_cast<size_t>(segmentOf.back()) + 1, problem.segments.size());
  for (size_t i = 1; i < segmentOf.size(); ++i) EXPECT_LE(segmentOf[i] - segmentOf[i - 1], 1);
}

const Case kCases[] = {
    {"captures/llama3_8b_2l_infer.log.gz", "0/0:aot_inference_graph", "split,fusion,offload(policy=heuristic,resident=0.3)"},
    {"captures/mixtral_2l_infer.log.gz", "0/0:aot_inference_graph", "split,offload(policy=optimal,resident=0.25)"},
    {"captures/llama3_8b_4l_train.log.gz", "0/0:aot_joint_graph", "split,recompute(policy=torch),offload(policy=optimal,memory=3GiB)"},
    {"captures/llama3_8b_4l_train.log.gz", "0/0:aot_joint_graph", "split,recompute(policy=heuristic),offload(policy=base,memory=6GiB)"},
    {"captures/gpt2_train.log.gz", "1/0_1:aot_joint_graph", "split,offload(policy=cost-effective,resident=0.5)"},
};

INSTANTIATE_TEST_SUITE_P(Samples, OffloadOnCapture, ::testing::ValuesIn(kCases));

}  // namespace
}  // namespace lathe::passes

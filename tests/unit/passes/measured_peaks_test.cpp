// The planner's peak for the shared training captures against what the H200 measured for them
// (../shared/anchors/README.md §1: torch.compile, one step of forward, loss and backward). The GPU
// gives two figures: the peak (max_memory_allocated, with what was held before the step) and the
// step's own memory above what it held before (Δ). The planner's "before" is the graph's weights
// and inputs; the GPU's is about 64 MiB more on every capture (memory the CUDA libraries hold
// through the allocator), so Δ is the tighter check of what the planner models. The default
// pipeline plans with torch's own saved set, so both are predictions of those measurements.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>

#include "hw/hw_profile.h"
#include "io/artifact.h"
#include "passes/pipeline.h"
#include "passes/plan_builder.h"
#include "passes/plan_target.h"

namespace lathe::passes {
namespace {

struct MeasuredCapture {
  const char* capture;
  const char* graphId;
  uint64_t measuredPeakBytes;
  double measuredDeltaGiB;  // as the anchors print it, to 1 MiB
  double deltaTolerance;    // relative: the level reached
  bool peakEndsTheBackward;
};

// gpt2's step runs two compiled graphs (a graph break before the loss); the plan is of the larger.
constexpr MeasuredCapture kMeasured[] = {
    {"captures/llama3_8b_2l_train.log.gz", "0/0:aot_joint_graph", 8'641'416'192, 5.216, 0.01, true},
    {"captures/llama3_8b_4l_train.log.gz", "0/0:aot_joint_graph", 10'911'665'152, 6.518, 0.01, true},
    {"captures/mixtral_2l_train.log.gz", "0/0:aot_joint_graph", 1'322'884'096, 0.708, 0.07, false},
    {"captures/gpt2_train.log.gz", "1/0_1:aot_joint_graph", 1'047'677'952, 0.671, 0.02, false},
};
constexpr double kPeakTolerance = 0.07;

// What the planned step holds before it starts: the graph's weights and inputs.
uint64_t bytesBefore(const PlannedStep& step) {
  const auto& atStart = step.timeline.live.front();
  return atStart[static_cast<size_t>(analysis::MemoryCategory::Weights)] +
         atStart[static_cast<size_t>(analysis::MemoryCategory::Inputs)];
}

class MeasuredPeaks : public ::testing::TestWithParam<MeasuredCapture> {};

TEST_P(MeasuredPeaks, PlannedPeakIsTheMeasuredOne) {
  const MeasuredCapture& m = GetParam();
  const io::Artifact artifact = io::loadArtifact(std::string(LATHE_SAMPLES_DIR) + "/" + m.capture);
  const PlanTarget target(artifact, m.graphId, hw::resolveHwProfile(kDefaultHardware));
  const PassContext context = target.context();
  const PipelineRun run = runPipeline(context, parsePipeline(target.defaultPipeline()));
  const PlannedStep step = plannedStep(context, run.finalState());
  const double planned = static_cast<double>(step.timeline.peakBytes);
  const double measured = static_cast<double>(m.measuredPeakBytes);
  EXPECT_NEAR(planned / measured, 1.0, kPeakTolerance) << m.capture << ": planned " << planned << " B, measured " << measured << " B";
  const double before = static_cast<double>(bytesBefore(step));
  const double plannedDeltaGiB = (planned - before) / (1u << 30);
  EXPECT_NEAR(plannedDeltaGiB / m.measuredDeltaGiB, 1.0, m.deltaTolerance)
      << m.capture << ": the step's own memory, planned " << plannedDeltaGiB << " GiB, measured " << m.measuredDeltaGiB << " GiB";
  if (m.peakEndsTheBackward) {
    // Where the GPU has it: the last steps of the backward, where the fp32 embedding-gradient
    // accumulator is live beside the gradients (not the loss, where the logits are).
    const size_t steps = step.schedule.nodes.size();
    EXPECT_GE(step.timeline.peakStep, steps - steps / 20) << m.capture;
    const auto gradients = static_cast<size_t>(analysis::MemoryCategory::Gradients);
    const auto temporaries = static_cast<size_t>(analysis::MemoryCategory::Temporaries);
    const uint64_t fp32Table = uint64_t{128256} * 4096 * 4;
    EXPECT_GE(step.timeline.atPeak[temporaries], fp32Table) << m.capture;
    EXPECT_GT(step.timeline.atPeak[gradients], 0u) << m.capture;
  }
}

INSTANTIATE_TEST_SUITE_P(Captures, MeasuredPeaks, ::testing::ValuesIn(kMeasured),
                         [](const ::testing::TestParamInfo<MeasuredCapture>& param) {
                           std::string name = param.param.capture;
                           name = name.substr(name.find('/') + 1);
                           name = name.substr(0, name.find('.'));
                           return name;
                         });

// One step of bench.py's four Llama-3-8B-dims layers (B2 x T4096, bf16) run on an H100 under
// lathe.compile(memory=...): its TORCH_TRACE log and plan bundle, and the bytes allocated above the
// step's "before" when each of cuDNN's attention backwards allocated its workspace, from the step's
// memory snapshot (bench/device/runtime/planned_vs_snapshot.py prints both). The planner, planning
// the same saved set on the same joint graph, holds what the GPU held there, within 1% (each is
// 8 MiB off: the workspace of Inductor's norm-backward reductions, not modelled).
// Each layer's FFN backward kernel writes its three outputs into fresh buffers (no input is taken
// over: each is read by two of them), after the matmul that makes the activation's gradient, and
// Inductor holds the dead ones for the next layer's FFN only where its own peak estimate (without
// the weights and tangents) allows it: handing a buffer over put the first two attention
// backwards 12-19% under; the kernel order with the weights in the estimate, up to 15% over.
// Inductor put the RoPE of two layers' recomputed queries into one kernel (they read the same
// cos/sin inputs, and lie within 64 of its scheduler nodes), computing the second layer's norm
// and query projection a layer early: kernels joined only through values the graph computes, or
// nodes at most 64 FX nodes apart, put the first attention backward 4.3% under in both runs.
struct MeasuredRun {
  const char* name;
  const char* run;                  // bench/device/runtime/results/<run>.{log,plan.json}.gz
  double attentionBackwardsMiB[4];  // in the backward's order
};

class MeasuredAttentionBackwards : public ::testing::TestWithParam<MeasuredRun> {};

TEST_P(MeasuredAttentionBackwards, PlannedAtEachIsWhatTheH100Held) {
  const MeasuredRun& m = GetParam();
  const std::string results = std::string(LATHE_SOURCE_DIR "/bench/device/runtime/results/") + m.run + ".";
  const io::Artifact artifact = io::loadArtifact(results + "log.gz");
  const PlanTarget target(artifact, "0/0:lathe_joint_graph", hw::resolveHwProfile("h100"));
  const PassContext context = target.context();
  const PipelineRun run =
      runPipeline(context, parsePipeline("split,fusion,recompute(policy=file,path=" + results + "plan.json.gz)"));
  const PlannedStep step = plannedStep(context, run.finalState());
  const uint64_t before = bytesBefore(step);
  size_t seen = 0;
  for (size_t i = step.schedule.backwardStart; i < step.schedule.nodes.size(); ++i) {
    if (!context.graph.name(step.schedule.nodes[i]).starts_with("_scaled_dot_product_cudnn_attention_backward")) continue;
    ASSERT_LT(seen, std::size(m.attentionBackwardsMiB));
    const double plannedMiB = static_cast<double>(step.timeline.total[i] - before) / (1u << 20);
    EXPECT_NEAR(plannedMiB / m.attentionBackwardsMiB[seen], 1.0, 0.01)
        << m.run << ", attention backward " << seen << ": planned " << plannedMiB << " MiB";
    ++seen;
  }
  EXPECT_EQ(seen, std::size(m.attentionBackwardsMiB));
}

constexpr MeasuredRun kMeasuredRuns[] = {
    {"Memory4_5GiB", "h100-2026-12-06-run-budget-4.5GiB", {3133.2, 3196.2, 3099.1, 2410.1}},
    {"Memory4_7GiB", "h100-2026-12-07-run-budget-4.7GiB", {3162.2, 3066.2, 3050.1, 2394.1}},
};

INSTANTIATE_TEST_SUITE_P(Budgets, MeasuredAttentionBackwards, ::testing::ValuesIn(kMeasuredRuns),
                         [](const ::testing::TestParamInfo<MeasuredRun>& param) { return std::string(param.param.name); });

// The step's peak above its "before" for a pipeline on a kept run's joint graph.
double plannedPeakGiB(const std::string& run, const std::string& pipeline, const char* hardware) {
  const std::string results = std::string(LATHE_SOURCE_DIR "/bench/device/runtime/results/") + run + ".";
  const io::Artifact artifact = io::loadArtifact(results + "log.gz");
  const PlanTarget target(artifact, "0/0:lathe_joint_graph", hw::resolveHwProfile(hardware));
  const PassContext context = target.context();
  const PipelineRun pipelineRun = runPipeline(context, parsePipeline(pipeline));
  const PlannedStep step = plannedStep(context, pipelineRun.finalState());
  return static_cast<double>(step.timeline.peakBytes - bytesBefore(step)) / (1u << 30);
}

// The heuristic's plan for the same joint graph, against the peak the same H100 measured for it
// (results/h100-2026-12-06-kernel-order.jsonl: 3.793 GiB above the step's "before"). Kernels
// joining the recomputed values of layers however far apart (Inductor joins no two nodes more than
// 64 of its scheduler nodes apart) put it at 4.364 GiB, 15% over; kernels joined through the
// layer stack's input, which a residual recomputed from it reads only through the chain of adds
// Inductor writes out every few layers, at 4.051 GiB, 7% over.
TEST(MeasuredPeaks, HeuristicPlanPeakIsWhatTheH100Measured) {
  const double plannedGiB =
      plannedPeakGiB("h100-2026-12-06-run-budget-4.5GiB", "split,fusion,recompute(policy=heuristic)", "h100");
  EXPECT_NEAR(plannedGiB / 3.793, 1.0, 0.05) << "planned " << plannedGiB << " GiB";
}

// The memory=4.7GiB plan of a bench run (results/h100-2026-12-07-snapshot-bench.jsonl, its plan
// made again from its log by the planner of then: the same 2.927 GiB and 81.87 ms the run
// predicted), measured at 3.222 GiB. Inductor computes two pairs of norm weight-gradient sums in
// one kernel each, at the later one's place, holding the gradients the earlier one reads through a
// layer's attention backward; kernels that did not run whole put it at 2.927 GiB, 9% under.
TEST(MeasuredPeaks, BenchPlanPeakIsWhatTheH100Measured) {
  const std::string plan = LATHE_SOURCE_DIR "/bench/device/runtime/results/h100-2026-12-07-snapshot-bench-budget-4.7GiB.plan.json.gz";
  const double plannedGiB = plannedPeakGiB("h100-2026-12-07-snapshot-bench-budget-4.7GiB",
                                           "split,fusion,recompute(policy=file,path=" + plan + ")", "h100_sxm");
  EXPECT_NEAR(plannedGiB / 3.222, 1.0, 0.05) << "planned " << plannedGiB << " GiB";
}

// What the plan bundle lists at the peak of the bench run's memory=4.7GiB plan (its run log kept in
// results/): cuDNN's workspace of the attention backward where the step peaks, and FFN buffers that
// Inductor's reuse keeps dead for the next layer's FFN (docs/benchmarks.md, "Inductor's kernels in
// the plan", where the generated program keeps three).
TEST(MeasuredPeaks, TheBundleNamesWhatIsLiveAtThePeak) {
  const std::string log = LATHE_SOURCE_DIR "/bench/device/runtime/results/h100-2026-12-07-bench-budget-4.7GiB.log.gz";
  const io::Artifact artifact = io::loadArtifact(log);
  const PlanTarget target(artifact, "0/0:lathe_joint_graph", hw::resolveHwProfile("h100"));
  const PassContext context = target.context();
  const PipelineRun run = runPipeline(context, parsePipeline("split,fusion,recompute(policy=budget,memory=4.7GiB)"));
  const plan::PlanBundle bundle = buildPlanBundle(context, run, log, "0/0:lathe_joint_graph");
  const plan::PlanTimeline& t = bundle.timeline;
  ASSERT_TRUE(t.node[t.peakStep].starts_with("_scaled_dot_product_cudnn_attention_backward"));
  const auto workspace = std::find_if(t.atPeakValues.begin(), t.atPeakValues.end(), [&](const plan::PeakValue& v) {
    return v.node == t.node[t.peakStep] && v.bytes == uint64_t{4} * 2 * 32 * 4096 * (2 * 128 + 1);
  });
  EXPECT_NE(workspace, t.atPeakValues.end());
  const size_t heldFfnBuffers = std::count_if(t.atPeakValues.begin(), t.atPeakValues.end(), [](const plan::PeakValue& v) {
    return !v.heldFor.empty() && v.bytes == uint64_t{2} * 4096 * 14336 * 2;
  });
  EXPECT_GE(heldFfnBuffers, 2u);
}

}  // namespace
}  // namespace lathe::passes

// Activation offload on real training captures: what leaves the GPU is saved, its copies are serial
// on each stream and hidden inside the phase they belong to, the GPU timeline never rises at any step,
// and with the budget policy offload never makes the plan recompute more.
#include "passes/activation_offload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include "analysis/joint.h"
#include "hw/hw_profile.h"
#include "passes/pipeline.h"
#include "passes/plan_target.h"
#include "passes/recompute.h"
#include "sample_graphs.h"
#include "util/diagnostics.h"

namespace lathe::passes {
namespace {

using testing::loadSampleGraph;
using testing::SampleGraph;

struct Capture {
  const char* sample;
  const char* compile;
};

const Capture kCaptures[] = {
    {"captures/llama3_8b_2l_train.log.gz", "0/0"},
    {"captures/llama3_8b_4l_train.log.gz", "0/0"},
    {"captures/mixtral_2l_train.log.gz", "0/0"},
    {"captures/gpt2_train.log.gz", "1/0_1"},
};

class OffloadCapture : public ::testing::TestWithParam<Capture> {
 protected:
  void SetUp() override {
    g_ = loadSampleGraph(GetParam().sample, std::string(GetParam().compile) + ":aot_joint_graph");
    target_.emplace(g_.graph, "aot_joint_graph", g_.inputs, hw::resolveHwProfile("h200"));
    ASSERT_TRUE(joint().joint);
  }
  [[nodiscard]] PassContext context() const { return target_->context(); }
  [[nodiscard]] const analysis::JointInfo& joint() const { return target_->joint(); }
  [[nodiscard]] RecomputeEvaluation evaluate(const std::vector<ir::NodeId>& saved, bool offload) const {
    const ActivationOffloadOptions options;
    return evaluateSavedSet(context(), saved, offload ? &options : nullptr);
  }

  SampleGraph g_;
  std::optional<PlanTarget> target_;
};

TEST_P(OffloadCapture, OffloadedValuesAreSavedAndTheirCopiesHideInsideTheirPhase) {
  const plan::RecomputeDecision decision = heuristicPolicy(*g_.graph, joint(), ir::OpRegistry::global());
  const RecomputeEvaluation eval = evaluate(decision.saved, true);
  ASSERT_TRUE(eval.activationOffload.has_value());
  const plan::ActivationOffloadDecision& offload = *eval.activationOffload;
  ASSERT_FALSE(offload.tensors.empty()) << "nothing offloaded on a full-size capture";
  const analysis::StepSchedule schedule = analysis::trainingSchedule(*g_.graph, eval.partition);
  // Start time of each execution, as the planner priced it.
  std::vector<double> start(schedule.nodes.size() + 1, 0.0);
  for (size_t i = 0; i < schedule.nodes.size(); ++i) {
    const ir::NodeId id = schedule.nodes[i];
    const bool recomputation = i >= schedule.backwardStart && eval.partition.inForward[id];
    start[i + 1] = start[i] + (recomputation ? target_->recomputeCost()[id] : target_->nodeSeconds()[id]);
  }
  const double backwardBegins = start[schedule.backwardStart];
  const std::set<ir::NodeId> saved(eval.partition.saved.begin(), eval.partition.saved.end());
  uint64_t bytes = 0;
  double outFree = 0;
  std::vector<const plan::OffloadedActivation*> byCopyIn;
  for (const plan::OffloadedActivation& a : offload.tensors) {
    const std::string name(g_.graph->name(a.node));
    EXPECT_TRUE(saved.count(a.node)) << name;
    EXPECT_GE(a.bytes, ActivationOffloadOptions{}.minBytes) << name;
    EXPECT_GE(a.outStart, outFree - 1e-12) << name << ": copies out overlap";
    outFree = a.outEnd;
    EXPECT_LE(a.outEnd, backwardBegins + 1e-12) << name << ": copy out ends after the forward";
    EXPECT_GE(a.inStart, backwardBegins - 1e-12) << name << ": copy in begins before the backward";
    EXPECT_EQ(a.offGpuStep, schedule.backwardStart) << name << ": let go before the forward ends";
    EXPECT_GE(a.onGpuStep, schedule.backwardStart) << name;
    ASSERT_LT(a.onGpuStep, schedule.nodes.size()) << name;
    // Back before its first reader, which is the planned first use.
    const auto use = std::find(schedule.nodes.begin() + schedule.backwardStart, schedule.nodes.end(), a.firstUse);
    ASSERT_NE(use, schedule.nodes.end()) << name;
    EXPECT_LE(a.inEnd, start[static_cast<size_t>(use - schedule.nodes.begin())] + 1e-12) << name;
    EXPECT_LE(a.onGpuStep, static_cast<uint32_t>(use - schedule.nodes.begin())) << name;
    bytes += a.bytes;
    byCopyIn.push_back(&a);
  }
  EXPECT_EQ(offload.bytes, bytes);
  std::sort(byCopyIn.begin(), byCopyIn.end(), [](auto* a, auto* b) { return a->inStart < b->inStart; });
  for (size_t i = 1; i < byCopyIn.size(); ++i) {
    EXPECT_GE(byCopyIn[i]->inStart, byCopyIn[i - 1]->inEnd - 1e-12) << "copies in overlap";
  }
}

TEST_P(OffloadCapture, TheGpuTimelineNeverRisesAtAnyStep) {
  for (const plan::RecomputeDecision& decision : {torchPolicy(*g_.graph, joint(), g_.inputs),
                                                  heuristicPolicy(*g_.graph, joint(), ir::OpRegistry::global())}) {
    const RecomputeEvaluation kept = evaluate(decision.saved, false);
    const RecomputeEvaluation offloaded = evaluate(decision.saved, true);
    ASSERT_EQ(kept.timeline.total.size(), offloaded.timeline.total.size());
    for (size_t step = 0; step < kept.timeline.total.size(); ++step) {
      ASSERT_LE(offloaded.timeline.total[step], kept.timeline.total[step]) << decision.policy << " step " << step;
    }
    // Offloading changes where values live, not what runs.
    EXPECT_DOUBLE_EQ(offloaded.stepSeconds, kept.stepSeconds);
    EXPECT_LE(offloaded.timeline.peakBytes, kept.timeline.peakBytes);
    EXPECT_GT(offloaded.activationOffload->bytes, 0u) << decision.policy;
  }
}

TEST_P(OffloadCapture, BudgetPolicyWithOffloadNeverRecomputesMore) {
  const PassContext ctx = context();
  const BudgetFrontier frontier = solveBudgetFrontier(ctx);
  const ActivationOffloadOptions options;
  for (size_t i = 0; i < frontier.points.size(); i += std::max<size_t>(1, frontier.points.size() / 4)) {
    const uint64_t budget = frontier.points[i].peakBytes;
    const plan::PlanState empty = plan::PlanState::empty(g_.graph->size());
    const PassResult without = budgetRecompute(ctx, frontier, budget, empty);
    const PassResult with = budgetRecompute(ctx, frontier, budget, empty, &options);
    using P = RecomputePass;
    EXPECT_EQ(with.stat(P::kBudgetMet), 1.0);
    EXPECT_LE(with.stat(P::kPeakBytes).value_or(-1), static_cast<double>(budget));
    EXPECT_LE(with.stat(P::kRecomputeSeconds).value_or(-1), without.stat(P::kRecomputeSeconds).value_or(-1) * (1 + 1e-9));
    ASSERT_TRUE(with.state.activationOffload.has_value());
    EXPECT_FALSE(without.state.activationOffload.has_value());
  }
}

INSTANTIATE_TEST_SUITE_P(Samples, OffloadCapture, ::testing::ValuesIn(kCaptures),
                         [](const ::testing::TestParamInfo<Capture>& param) {
                           std::string name = std::string(param.param.sample) + "_" + param.param.compile;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(ActivationOffload, OptionsAreChecked) {
  const SampleGraph g = loadSampleGraph("captures/llama3_8b_2l_tiny_train.log.gz", "0/0:aot_joint_graph");
  const hw::HwProfile hw = hw::resolveHwProfile("h200");
  const PlanTarget target(g.graph, "aot_joint_graph", g.inputs, hw);
  const PassContext ctx = target.context();
  const RecomputePass pass;
  const plan::PlanState empty = plan::PlanState::empty(g.graph->size());
  for (const std::map<std::string, std::string>& bad : std::vector<std::map<std::string, std::string>>{
           {{"policy", "torch"}, {"offload_min", "1MiB"}},
           {{"policy", "torch"}, {"offload", "maybe"}},
           {{"policy", "torch"}, {"offload", "true"}, {"offload_min", "lots"}},
           {{"policy", "torch"}, {"offload", "true"}, {"offload_link", "1.5"}},
           {{"policy", "torch"}, {"offload_link", "0.5"}}}) {
    try {
      checkPipeline(std::vector<PipelineStep>{{"recompute", PassOptions(bad)}}, &target);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::Usage) << e.what();
    }
  }
  // The tiny capture's values are all below the default size: nothing leaves, and saying so is no error.
  const PassResult tiny = pass.run(ctx, empty, PassOptions({{"policy", "heuristic"}, {"offload", "true"}}));
  ASSERT_TRUE(tiny.state.activationOffload.has_value());
  EXPECT_TRUE(tiny.state.activationOffload->tensors.empty());
  const PassResult all = pass.run(ctx, empty, PassOptions({{"policy", "heuristic"}, {"offload", "true"}, {"offload_min", "0"}}));
  EXPECT_FALSE(all.state.activationOffload->tensors.empty());
}

}  // namespace
}  // namespace lathe::passes

// Recompute policies on real training captures: torch's policy reproduces the saved set the
// capture's own partitioner chose; every policy yields a backward that can run; the budget policy
// keeps the step's peak within the budget by our own accounting. Deep chains plan; joint graphs
// that are not a training step, and saved sets naming backward values, are bad input.
#include "passes/recompute.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include "analysis/cost_model.h"
#include "analysis/graph_inputs.h"
#include "analysis/joint.h"
#include "passes/pipeline.h"
#include "passes/plan_target.h"
#include "hw/hw_profile.h"
#include "io/fx/fx_text.h"
#include "sample_graphs.h"
#include "temp_dir.h"
#include "util/diagnostics.h"

namespace lathe::passes {
namespace {

using testing::loadSampleGraph;
using testing::SampleGraph;

PassOptions options(std::map<std::string, std::string> values) { return PassOptions(std::move(values)); }

struct Capture {
  const char* sample;
  const char* compile;
};

const Capture kTrainingCaptures[] = {
    {"captures/llama3_8b_2l_tiny_train.log.gz", "0/0"}, {"captures/llama3_8b_2l_train.log.gz", "0/0"},
    {"captures/llama3_8b_4l_train.log.gz", "0/0"},      {"captures/llama3_8b_2l_dyntrain.log.gz", "0/0"},
    {"captures/llama3_8b_2l_dyntrain.log.gz", "0/1"},   {"captures/mixtral_2l_tiny_train.log.gz", "0/0"},
    {"captures/mixtral_2l_train.log.gz", "0/0"},        {"captures/gpt2_tiny_train.log.gz", "1/0_1"},
    {"captures/gpt2_train.log.gz", "1/0_1"},            {"captures/vit_b16_tiny_train.log.gz", "0/0"},
};

class TrainingCapture : public ::testing::TestWithParam<Capture> {
 protected:
  void SetUp() override {
    g_ = loadSampleGraph(GetParam().sample, std::string(GetParam().compile) + ":aot_joint_graph");
    target_.emplace(g_.graph, "aot_joint_graph", g_.inputs, hw::resolveHwProfile("h200"));
    ASSERT_TRUE(target_->joint().joint);
  }
  [[nodiscard]] PassContext context() const { return target_->context(); }

  SampleGraph g_;
  std::optional<PlanTarget> target_;
};

// Names the capture's forward graph returns as SavedForBackwardsAOTOutput.
std::set<std::string> captureSaved(const ir::Graph& forward) {
  std::set<std::string> saved;
  const ir::Node& out = forward.node(forward.outputNode());
  const std::vector<ir::NodeId> items = analysis::outputItems(forward);
  for (size_t i = 0; i < items.size() && i < out.itemComments.size(); ++i) {
    if (items[i] != ir::kNoNode && forward.str(out.itemComments[i]).starts_with("SavedForBackwardsAOTOutput")) {
      saved.insert(std::string(forward.name(items[i])));
    }
  }
  return saved;
}

TEST_P(TrainingCapture, TorchPolicyAgreesWithTheCapturesSavedSet) {
  ASSERT_NE(g_.forward, nullptr);
  const std::set<std::string> theirs = captureSaved(*g_.forward);
  ASSERT_FALSE(theirs.empty());
  const plan::RecomputeDecision decision = torchPolicy(*g_.graph, target_->joint(), g_.inputs);
  std::set<std::string> ours;
  for (ir::NodeId id : decision.saved) ours.insert(std::string(g_.graph->name(id)));
  // Byte-weighted |A and B| / |A or B| over activations (primals are saved by both whenever the
  // backward reads them). A name only the capture has (made by Inductor's pattern passes after the
  // joint graph was logged) is sized from the capture's forward graph.
  double both = 0, either = 0;
  std::set<std::string> all(theirs);
  all.insert(ours.begin(), ours.end());
  for (const std::string& name : all) {
    const ir::NodeId j = g_.graph->find(name);
    if (j != ir::kNoNode && g_.graph->node(j).kind == ir::NodeKind::Placeholder) continue;
    const ir::Graph& owner = j != ir::kNoNode ? *g_.graph : *g_.forward;
    const ir::NodeId id = j != ir::kNoNode ? j : g_.forward->find(name);
    ASSERT_NE(id, ir::kNoNode) << name;
    const double bytes = owner.node(id).meta.isTensor() ? static_cast<double>(owner.node(id).meta.storageBytes()) : 0.0;
    either += bytes;
    if (theirs.contains(name) && ours.contains(name)) both += bytes;
  }
  ASSERT_GT(either, 0);
  // The level reached on every sample (docs/benchmarks.md lists the figures): >= 99.2%.
  EXPECT_GE(both / either, 0.992) << GetParam().sample << " " << GetParam().compile;
}

TEST_P(TrainingCapture, EveryPolicyGivesABackwardThatCanRun) {
  const PassContext ctx = context();
  std::vector<std::pair<std::string, plan::RecomputeDecision>> decisions = {
      {"torch", torchPolicy(*g_.graph, target_->joint(), g_.inputs)},
      {"heuristic", heuristicPolicy(*g_.graph, target_->joint(), ir::OpRegistry::global())},
  };
  for (const FrontierPoint& p : budgetFrontier(ctx)) {
    decisions.push_back({"budget", {"budget", p.saved, {}, {}}});
  }
  for (const auto& [name, decision] : decisions) {
    const analysis::StepPartition step = analysis::partitionJoint(*g_.graph, target_->joint(), decision.saved);
    EXPECT_TRUE(step.valid()) << name << ": backward cannot compute " << g_.graph->name(step.missing.front());
    for (ir::NodeId id : step.saved) EXPECT_FALSE(target_->joint().tangentClosure[id]) << name;
    for (ir::NodeId id : step.recomputed) EXPECT_TRUE(step.inForward[id] && step.inBackward[id]) << name;
    // Every backward execution reads only values available at that point.
    std::vector<uint8_t> available(g_.graph->size(), 0);
    for (ir::NodeId id : step.saved) available[id] = 1;
    for (ir::NodeId id : target_->joint().tangents) available[id] = 1;
    for (ir::NodeId id : step.backward) {
      for (ir::NodeId in : g_.graph->inputs(id)) EXPECT_TRUE(available[in]) << name << ": " << g_.graph->name(id) << " reads " << g_.graph->name(in);
      available[id] = 1;
    }
  }
}

TEST_P(TrainingCapture, PoliciesAreDeterministic) {
  EXPECT_EQ(torchPolicy(*g_.graph, target_->joint(), g_.inputs).saved, torchPolicy(*g_.graph, target_->joint(), g_.inputs).saved);
  EXPECT_EQ(heuristicPolicy(*g_.graph, target_->joint(), ir::OpRegistry::global()).saved,
            heuristicPolicy(*g_.graph, target_->joint(), ir::OpRegistry::global()).saved);
  const std::vector<FrontierPoint> a = budgetFrontier(context()), b = budgetFrontier(context());
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].saved, b[i].saved);
}

TEST_P(TrainingCapture, HeuristicNeverRecomputesMatmulsOrAttention) {
  const plan::RecomputeDecision decision = heuristicPolicy(*g_.graph, target_->joint(), ir::OpRegistry::global());
  for (ir::NodeId id : decision.recomputed) {
    const ir::OpCategory category = ir::lookupOp(g_.graph->target(id)).category;
    EXPECT_NE(category, ir::OpCategory::Matmul) << g_.graph->name(id);
    EXPECT_NE(category, ir::OpCategory::Attention) << g_.graph->name(id);
  }
}

TEST_P(TrainingCapture, FrontierIsMonotoneAndNeverWorseThanTorchOrTheHeuristic) {
  const PassContext ctx = context();
  const std::vector<FrontierPoint> frontier = budgetFrontier(ctx);
  ASSERT_FALSE(frontier.empty());
  for (size_t i = 1; i < frontier.size(); ++i) {
    EXPECT_GT(frontier[i].peakBytes, frontier[i - 1].peakBytes);
    EXPECT_LT(frontier[i].recomputeSeconds, frontier[i - 1].recomputeSeconds);
  }
  for (const plan::RecomputeDecision& d : {torchPolicy(*g_.graph, target_->joint(), g_.inputs),
                                           heuristicPolicy(*g_.graph, target_->joint(), ir::OpRegistry::global())}) {
    const RecomputeEvaluation e = evaluateSavedSet(ctx, d.saved);
    bool covered = false;
    for (const FrontierPoint& p : frontier) {
      covered = covered || (p.peakBytes <= e.timeline.peakBytes && p.recomputeSeconds <= e.recomputeSeconds * (1 + 1e-9));
    }
    EXPECT_TRUE(covered) << d.policy << " is not dominated by the frontier";
  }
}

TEST_P(TrainingCapture, BudgetPolicyStaysWithinTheBudget) {
  const PassContext ctx = context();
  const std::vector<FrontierPoint> frontier = budgetFrontier(ctx);
  const RecomputePass pass;
  for (size_t i = 0; i < frontier.size(); i += std::max<size_t>(1, frontier.size() / 4)) {
    const uint64_t budget = frontier[i].peakBytes + 1;
    const PassResult result =
        pass.run(ctx, plan::PlanState::empty(g_.graph->size()), options({{"policy", "budget"}, {"memory", std::to_string(budget)}}));
    EXPECT_EQ(result.stat(RecomputePass::kBudgetMet), 1.0);
    EXPECT_LE(result.stat(RecomputePass::kPeakBytes).value_or(-1), static_cast<double>(budget));
    EXPECT_LE(result.stat(RecomputePass::kRecomputeSeconds).value_or(-1), frontier[i].recomputeSeconds * (1 + 1e-9));
  }
  // Below the smallest peak the plan says so instead of pretending.
  const PassResult tight = pass.run(ctx, plan::PlanState::empty(g_.graph->size()),
                                    options({{"policy", "budget"}, {"memory", "1MiB"}}));
  EXPECT_TRUE(tight.stat(RecomputePass::kBudgetMet) == 0.0 || frontier.front().peakBytes <= (1u << 20));
}

TEST_P(TrainingCapture, WithoutAMemoryBudgetThePlanIsNoSlowerAndNoLargerThanTorchs) {
  const PassContext ctx = context();
  const RecomputePass pass;
  const auto run = [&](const char* policy) {
    return pass.run(ctx, plan::PlanState::empty(g_.graph->size()), options({{"policy", policy}}));
  };
  const PassResult torch = run("torch");
  const PassResult budget = run("budget");
  EXPECT_LE(budget.stat(RecomputePass::kPeakBytes).value_or(-1), torch.stat(RecomputePass::kPeakBytes).value_or(0));
  EXPECT_LE(budget.stat(RecomputePass::kStepSeconds).value_or(-1),
            torch.stat(RecomputePass::kStepSeconds).value_or(0) * 1.001);
  EXPECT_FALSE(budget.stat(RecomputePass::kBudgetBytes).has_value()) << "no budget was asked for";
  // Each kept value says what recomputing it would have cost, or why it cannot be recomputed.
  const plan::RecomputeDecision& decision = *budget.state.recompute;
  ASSERT_EQ(decision.savedReasons.size(), decision.saved.size());
  const std::vector<std::string> english = toEnglish(decision.savedReasons);
  std::set<std::string> reasons(english.begin(), english.end());
  EXPECT_GT(reasons.size(), 1u);
  EXPECT_EQ(reasons.count("kept: cheaper to keep than to recompute"), 0u);
}

INSTANTIATE_TEST_SUITE_P(Samples, TrainingCapture, ::testing::ValuesIn(kTrainingCaptures),
                         [](const ::testing::TestParamInfo<Capture>& param) {
                           std::string name = std::string(param.param.sample) + "_" + param.param.compile;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(RecomputePass, RejectsGraphsThatAreNotJoint) {
  const SampleGraph g = loadSampleGraph("captures/llama3_8b_2l_tiny_infer.log.gz", "0/0:aot_inference_graph");
  const hw::HwProfile hw = hw::resolveHwProfile("h200");
  const PlanTarget target(g.graph, "test", g.inputs, hw);
  const PassContext ctx = target.context();
  try {
    (void)RecomputePass().run(ctx, plan::PlanState::empty(g.graph->size()), options({{"policy", "torch"}}));
    FAIL() << "expected a usage error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Usage);
  }
}

TEST(RecomputePass, RejectsUnknownPoliciesAndOptions) {
  const SampleGraph g = loadSampleGraph("captures/llama3_8b_2l_tiny_train.log.gz", "0/0:aot_joint_graph");
  const hw::HwProfile hw = hw::resolveHwProfile("h200");
  const PlanTarget target(g.graph, "test", g.inputs, hw);
  const PassContext ctx = target.context();
  for (const PassOptions& bad : {options({{"policy", "magic"}}), options({{"polcy", "torch"}}),
                                 options({{"policy", "file"}}), options({{"policy", "budget"}, {"memory", "lots"}}),
                                 options({{"offload_link", "0.5"}}), options({{"offload", "true"}, {"offload_link", "0"}})}) {
    const std::vector<PipelineStep> steps{{"recompute", bad}};
    EXPECT_THROW(checkPipeline(steps, &target), Error) << formatStep(steps[0]);
    EXPECT_THROW((void)runPipeline(ctx, steps), Error) << formatStep(steps[0]);
  }
}

// Joint graphs no capture makes: a chain of `length` pointwise ops from primals_1. A training step
// returns the chain's end and a gradient from the tangent; the other returns, as a forward output,
// the chain's end times the tangent.
std::shared_ptr<ir::Graph> deepJoint(size_t length, bool trainingStep) {
  const std::string a = "\"f32[64][1]cuda:0\"";
  std::string text =
      "class joint_helper(torch.nn.Module):\n    def forward(self, primals_1: " + a + ", tangents_1: " + a + "):\n";
  std::string previous = "primals_1";
  for (size_t i = 0; i < length; ++i) {
    const std::string name = "v_" + std::to_string(i);
    text += "        " + name + ": " + a + " = torch.ops.aten." + (i % 2 == 0 ? "sin.default(" : "cos.default(") +
            previous + ")\n";
    previous = name;
  }
  text += "        grad: " + a + " = torch.ops.aten.mul.Tensor(tangents_1, " + previous + ")\n";
  text += trainingStep ? "        return (" + previous + ", grad)\n" : "        return (grad, " + previous + ")\n";
  Diagnostics diagnostics;
  std::shared_ptr<ir::Graph> graph = io::parseFxText(text, {}, diagnostics);
  if (graph == nullptr) throw std::runtime_error("test graph does not parse");
  return graph;
}

TEST(RecomputePass, TenThousandDeepTrainingChainIsPlanned) {
  const std::shared_ptr<ir::Graph> graph = deepJoint(10'000, true);
  const analysis::GraphInputs inputs = analysis::inferGraphInputs(*graph, nullptr);
  const hw::HwProfile hw = hw::resolveHwProfile("h200");
  const PlanTarget target(graph, "test", inputs, hw);
  const PassContext ctx = target.context();
  const plan::PlanState empty = plan::PlanState::empty(graph->size());
  for (const PassOptions& policy : {options({{"policy", "torch"}}), options({{"policy", "heuristic"}})}) {
    const PassResult result = RecomputePass().run(ctx, empty, policy);
    ASSERT_TRUE(result.state.recompute.has_value());
    const analysis::JointInfo joint = analysis::analyzeJoint(*graph);
    EXPECT_TRUE(analysis::partitionJoint(*graph, joint, result.state.recompute->saved).valid())
        << result.state.recompute->policy;
  }
}

TEST(RecomputePass, ForwardOutputsComputedFromTheTangentsAreBadInputNamingTheNode) {
  const std::shared_ptr<ir::Graph> graph = deepJoint(10'000, false);
  const analysis::GraphInputs inputs = analysis::inferGraphInputs(*graph, nullptr);
  const hw::HwProfile hw = hw::resolveHwProfile("h200");
  const PlanTarget target(graph, "test", inputs, hw);
  const PassContext ctx = target.context();
  const std::string expected = "not a training step the planner can split: grad is returned by the forward";
  for (const PassOptions& policy : {options({{"policy", "torch"}}), options({{"policy", "heuristic"}}),
                                    options({{"policy", "budget"}, {"memory", "1MiB"}})}) {
    try {
      (void)RecomputePass().run(ctx, plan::PlanState::empty(graph->size()), policy);
      ADD_FAILURE() << "planned";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::BadInput) << e.what();
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
  try {
    (void)budgetFrontier(ctx);
    ADD_FAILURE() << "solved";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput) << e.what();
  }
}

TEST(RecomputePass, SavedSetFileNamingABackwardValueIsBadInput) {
  const std::shared_ptr<ir::Graph> graph = deepJoint(4, true);
  const analysis::GraphInputs inputs = analysis::inferGraphInputs(*graph, nullptr);
  const hw::HwProfile hw = hw::resolveHwProfile("h200");
  const PlanTarget target(graph, "test", inputs, hw);
  const PassContext ctx = target.context();
  const testing::TempDir dir;
  const std::string path = dir.write("saved.json", R"(["v_1", "grad"])").string();
  try {
    (void)RecomputePass().run(ctx, plan::PlanState::empty(graph->size()),
                              options({{"policy", "file"}, {"path", path}}));
    ADD_FAILURE() << "planned";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput) << e.what();
    EXPECT_NE(std::string(e.what()).find("grad is computed from the tangents"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lathe::passes

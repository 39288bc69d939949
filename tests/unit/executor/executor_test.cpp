// lathe_runtime on the CPU: every tiny training capture's joint graph runs node by node through
// libtorch, each recompute policy's plan reproduces the unplanned gradients bit for bit, a plan that
// recomputes a random op is caught, and what cannot run is named before anything runs.
#include <gtest/gtest.h>

#include <string>

#include "analysis/joint.h"
#include "runtime/executor/graph_executor.h"
#include "hw/hw_profile.h"
#include "io/artifact.h"
#include "io/fx/fx_text.h"
#include "passes/pipeline.h"
#include "passes/plan_target.h"
#include "util/diagnostics.h"

namespace lathe::runtime {
namespace {

struct TinyCapture {
  const char* capture;
  const char* graphId;
};

constexpr TinyCapture kTiny[] = {
    {"captures/llama3_8b_2l_tiny_train.log.gz", "0/0:aot_joint_graph"},
    {"captures/mixtral_2l_tiny_train.log.gz", "0/0:aot_joint_graph"},
    {"captures/gpt2_tiny_train.log.gz", "1/0_1:aot_joint_graph"},
    {"captures/vit_b16_tiny_train.log.gz", "0/0:aot_joint_graph"},
};

passes::PlanTarget targetOf(const TinyCapture& c) {
  const io::Artifact artifact = io::loadArtifact(std::string(LATHE_SAMPLES_DIR) + "/" + c.capture);
  return passes::PlanTarget(artifact, c.graphId, hw::resolveHwProfile("h200"));
}

ExecuteOptions quick() {
  ExecuteOptions options;
  options.warmup = 0;
  options.repeats = 1;
  return options;
}

class TinyTraining : public ::testing::TestWithParam<TinyCapture> {};

TEST_P(TinyTraining, JointGraphRunsOnTheCpu) {
  const passes::PlanTarget target = targetOf(GetParam());
  const ir::Graph& graph = target.graph();
  EXPECT_TRUE(unsupportedOps(graph, "cpu").empty());
  const GraphRun run = measureGraph(graph, quick());
  EXPECT_EQ(run.deviceName, "cpu");
  ASSERT_EQ(run.nodeSeconds.size(), graph.size());
  EXPECT_GT(run.stepSeconds, 0);
  EXPECT_GT(run.livePeakBytes, 0u);
  EXPECT_FALSE(run.allocatorPeakBytes.has_value());  // the CPU keeps no allocator statistics
  // Every call ran: a matmul's output is new storage of its full size.
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    if (graph.target(id) == "torch.ops.aten.mm.default") {
      EXPECT_EQ(run.nodeOutputBytes[id], graph.node(id).meta.storageBytes()) << graph.name(id);
    }
  }
  // cuDNN attention has no CPU kernel: the report says what ran instead.
  bool attentionSubstituted = false;
  for (const Substitution& s : run.substitutions) attentionSubstituted |= s.op.find("cudnn_attention") != std::string::npos;
  EXPECT_TRUE(attentionSubstituted);
}

TEST_P(TinyTraining, EveryRecomputePolicyReproducesTheGradients) {
  const passes::PlanTarget target = targetOf(GetParam());
  const ir::Graph& graph = target.graph();
  const analysis::JointInfo& joint = target.joint();
  ASSERT_TRUE(joint.joint);
  for (const char* pipeline : {"split,fusion,recompute(policy=torch)", "split,fusion,recompute(policy=heuristic)",
                               "split,fusion,recompute(policy=budget,memory=1MiB)"}) {
    const passes::PipelineRun run = passes::runPipeline(target.context(), passes::parsePipeline(pipeline));
    ASSERT_TRUE(run.finalState().recompute.has_value()) << pipeline;
    const analysis::StepPartition partition = analysis::partitionJoint(graph, joint, run.finalState().recompute->saved);
    const PlanCheck check = checkPlan(graph, joint, partition, quick());
    EXPECT_EQ(check.gradientsCompared, joint.backwardOutputs.size()) << pipeline;
    EXPECT_TRUE(check.differences.empty()) << pipeline << ": " << check.differences.front().gradient;
    EXPECT_TRUE(check.allClose) << pipeline;
  }
}

INSTANTIATE_TEST_SUITE_P(Captures, TinyTraining, ::testing::ValuesIn(kTiny), [](const auto& param) {
  std::string name = param.param.capture;
  name = name.substr(name.find('/') + 1);
  name = name.substr(0, name.find('.'));
  return name;
});

// A plan that saves only the primals recomputes the whole forward in the backward: the same
// gradients where the forward is deterministic.
TEST(Executor, RecomputingEverythingChangesNoGradient) {
  const passes::PlanTarget target = targetOf(kTiny[0]);
  const ir::Graph& graph = target.graph();
  const analysis::JointInfo& joint = target.joint();
  const analysis::StepPartition all = analysis::partitionJoint(graph, joint, joint.primals);
  ASSERT_TRUE(all.valid());
  const PlanCheck check = checkPlan(graph, joint, all, quick());
  EXPECT_FALSE(all.recomputed.empty());
  EXPECT_TRUE(check.differences.empty());
  EXPECT_EQ(check.gradientsCompared, joint.backwardOutputs.size());
}

// gpt2's dropout draws its mask with aten.rand in the forward: recomputing it in the backward draws
// another mask, and the check must say so (torch never recomputes random ops).
TEST(Executor, RecomputingARandomOpIsCaught) {
  const passes::PlanTarget target = targetOf(kTiny[2]);
  const ir::Graph& graph = target.graph();
  const analysis::JointInfo& joint = target.joint();
  const analysis::StepPartition all = analysis::partitionJoint(graph, joint, joint.primals);
  bool recomputesRand = false;
  for (ir::NodeId id : all.recomputed) recomputesRand |= graph.target(id) == "torch.ops.aten.rand.default";
  ASSERT_TRUE(recomputesRand);
  const PlanCheck check = checkPlan(graph, joint, all, quick());
  EXPECT_FALSE(check.differences.empty());
  EXPECT_FALSE(check.allClose);
}

TEST(Executor, APlanThatCannotComputeItsBackwardIsRefused) {
  const passes::PlanTarget target = targetOf(kTiny[0]);
  const ir::Graph& graph = target.graph();
  const analysis::JointInfo& joint = target.joint();
  const analysis::StepPartition nothing = analysis::partitionJoint(graph, joint, {});
  ASSERT_FALSE(nothing.valid());
  try {
    (void)checkPlan(graph, joint, nothing, quick());
    FAIL() << "an invalid partition ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput);
    EXPECT_NE(std::string(e.what()).find("cannot compute"), std::string::npos) << e.what();
  }
}

TEST(Executor, OpsItCannotRunAreNamedBeforeAnythingRuns) {
  Diagnostics diagnostics;
  const auto graph = io::parseFxText(R"(
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 4]"):
        mm: "f32[4, 4]" = torch.ops.aten.mm.default(x, x)
        custom: "f32[4, 4]" = torch.ops.mylib.fancy.default(mm)
        return (custom,)
)", {}, diagnostics);
  const std::vector<std::string> missing = unsupportedOps(*graph, "cpu");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_NE(missing[0].find("torch.ops.mylib.fancy.default"), std::string::npos) << missing[0];
  EXPECT_NE(missing[0].find("custom"), std::string::npos) << missing[0];
  try {
    (void)measureGraph(*graph, quick());
    FAIL() << "a graph with an unknown op ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mylib.fancy"), std::string::npos) << e.what();
  }
}

TEST(Executor, SameSeedSameInputsSameTimesCount) {
  Diagnostics diagnostics;
  const auto graph = io::parseFxText(R"(
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[64, 64]", idx: "i64[8]", w: "f32[10, 64]"):
        emb: "f32[8, 64]" = torch.ops.aten.embedding.default(w, idx)
        mm: "f32[64, 64]" = torch.ops.aten.mm.default(x, x)
        return (emb, mm)
)", {}, diagnostics);
  ExecuteOptions options = quick();
  options.repeats = 3;
  const GraphRun run = measureGraph(*graph, options);
  EXPECT_EQ(run.runs, 3);
  EXPECT_EQ(run.nodeOutputBytes[graph->find("mm")], 64u * 64u * 4u);
  EXPECT_EQ(run.nodeOutputBytes[graph->find("emb")], 8u * 64u * 4u);
  // The indices were drawn below the embedding's 10 rows, else the lookup would have thrown.
  options.device = "mps";
  EXPECT_THROW((void)measureGraph(*graph, options), Error);
}

}  // namespace
}  // namespace lathe::runtime

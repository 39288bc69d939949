// Graph and plan diffs on real captures: a graph against itself and one layer on two FSDP ranks are
// the same; the dynamic recompile's joint graph aligns its inputs past the inserted size symbol and
// shows the sequence dimension turned symbolic; every node is accounted for once. Two plans of
// gpt2's joint graph (torch's saved set and the budget policy's) differ exactly by their saved sets.
#include <gtest/gtest.h>

#include <bit>
#include <set>
#include <string>

#include "analysis/graph_diff.h"
#include "hw/hw_profile.h"
#include "passes/pipeline.h"
#include "passes/plan_builder.h"
#include "passes/plan_target.h"
#include "plan/plan_diff.h"
#include "sample_graphs.h"

namespace lathe {
namespace {

using analysis::GraphDiff;
using analysis::NodeDiff;
using testing::loadSampleGraph;

void expectEveryNodeOnce(const GraphDiff& d) {
  const size_t pairs = d.matchedByName + d.matchedByPosition + d.matchedByProvenance;
  EXPECT_EQ(pairs + d.onlyInA, d.nodesA);
  EXPECT_EQ(pairs + d.onlyInB, d.nodesB);
  std::set<ir::NodeId> seenA, seenB;
  for (const NodeDiff& n : d.nodes) {
    if (n.a != ir::kNoNode) {
      EXPECT_TRUE(seenA.insert(n.a).second);
    }
    if (n.b != ir::kNoNode) {
      EXPECT_TRUE(seenB.insert(n.b).second);
    }
    // A changed pair names each field that differs once, as a flag and as a line; the others none.
    EXPECT_EQ(static_cast<size_t>(std::popcount(n.fields)), n.what.size());
    EXPECT_EQ(n.kind == NodeDiff::Kind::Changed, n.fields != 0);
  }
}

TEST(GraphDiff, AGraphAndItselfAndTwoRanksAreTheSame) {
  const auto gpt2 = loadSampleGraph("captures/gpt2_train.log.gz", "1/0_1:aot_joint_graph");
  const GraphDiff self = analysis::diffGraphs(*gpt2.graph, *gpt2.graph);
  EXPECT_TRUE(self.identical());
  EXPECT_EQ(self.matchedByName, gpt2.graph->size());
  const auto rank0 = loadSampleGraph("captures/llama_4l_fsdp_ranks", "rank0:0/0:aot_joint_graph");
  const auto rank1 = loadSampleGraph("captures/llama_4l_fsdp_ranks", "rank1:0/0:aot_joint_graph");
  EXPECT_TRUE(analysis::diffGraphs(*rank0.graph, *rank1.graph).identical());
}

TEST(GraphDiff, TheDynamicRecompileAlignsItsInputsAndShowsTheSymbolicLength) {
  const auto fixed = loadSampleGraph("captures/llama3_8b_2l_dyntrain.log.gz", "0/0:aot_joint_graph");
  const auto dynamic = loadSampleGraph("captures/llama3_8b_2l_dyntrain.log.gz", "0/1:aot_joint_graph");
  const ir::Graph& a = *fixed.graph;
  const ir::Graph& b = *dynamic.graph;
  const GraphDiff d = analysis::diffGraphs(a, b);
  expectEveryNodeOnce(d);
  EXPECT_FALSE(d.identical());
  // The input ids (primals_1 at seq 512) is B's primals_2: B's primals_1 is the length symbol.
  bool idsAligned = false, symbolOnlyInB = false;
  for (const NodeDiff& n : d.nodes) {
    if (n.kind == NodeDiff::Kind::Changed && a.name(n.a) == "primals_1") {
      idsAligned = b.name(n.b) == "primals_2" && n.what.size() == 1 && n.what[0] == "value i64[1, 512] -> i64[1, s27]" &&
                   n.fields == NodeDiff::Value;
    }
    if (n.kind == NodeDiff::Kind::OnlyInB && b.name(n.b) == "primals_1") symbolOnlyInB = analysis::valueText(b, n.b) == "s27";
  }
  EXPECT_TRUE(idsAligned);
  EXPECT_TRUE(symbolOnlyInB);
  // Most of the graph is the same code: nearly every node of A has its partner in B.
  EXPECT_LT(d.onlyInA, d.nodesA / 50);
}

plan::PlanBundle planOf(const testing::SampleGraph& sample, const char* pipeline) {
  const passes::PlanTarget target{sample.graph, "test", sample.inputs, hw::resolveHwProfile("h200")};
  const passes::PassContext context = target.context();
  return passes::buildPlanBundle(context, passes::runPipeline(context, passes::parsePipeline(pipeline)),
                                 "captures/gpt2_train.log.gz", "1/0_1:aot_joint_graph");
}

TEST(PlanDiff, TwoPlansOfOneGraphDifferByTheirSavedSets) {
  const auto gpt2 = loadSampleGraph("captures/gpt2_train.log.gz", "1/0_1:aot_joint_graph");
  const plan::PlanBundle torch = planOf(gpt2, "fusion,recompute(policy=torch)");
  const plan::PlanBundle budget = planOf(gpt2, "fusion,recompute(policy=budget)");
  const plan::PlanDiff same = plan::diffPlans(torch, torch);
  EXPECT_TRUE(same.sameGraph);
  EXPECT_TRUE(same.savedOnlyA.empty() && same.savedOnlyB.empty());

  const plan::PlanDiff d = plan::diffPlans(torch, budget);
  EXPECT_TRUE(d.sameGraph);
  EXPECT_EQ(d.recomputePolicyA, "torch");
  EXPECT_EQ(d.recomputePolicyB, "budget");
  EXPECT_EQ(d.peakA, torch.timeline.peakBytes);
  EXPECT_LT(d.peakB, d.peakA);  // the budget policy without memory: no larger than torch's
  EXPECT_FALSE(d.savedOnlyA.empty());
  EXPECT_FALSE(d.savedOnlyB.empty());
  EXPECT_EQ(d.savedA - d.savedOnlyA.size(), d.savedB - d.savedOnlyB.size());  // what both save
  std::set<std::string> savedByB;
  for (ir::NodeId id : budget.state.recompute->saved) savedByB.insert(budget.nodeNames[id]);
  for (const plan::PlanDiff::Saved& s : d.savedOnlyA) EXPECT_FALSE(savedByB.contains(s.name)) << s.name;
  for (const plan::PlanDiff::Saved& s : d.savedOnlyB) {
    EXPECT_TRUE(savedByB.contains(s.name)) << s.name;
    EXPECT_FALSE(toEnglish(s.reason).empty());
  }
  bool stepCompared = false;
  for (const auto& e : d.estimates) stepCompared |= e.name == "step_seconds" && e.a && e.b;
  EXPECT_TRUE(stepCompared);
}

}  // namespace
}  // namespace lathe

// Node maps between the graph stages of one compile (core/analysis/stage_map.h) on real captures: a
// training step (Dynamo, joint, forward, backward, post-grad), an inference capture with a
// recompile, and a .pt2.
#include "analysis/stage_map.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

#include "io/artifact.h"

using namespace lathe;
using analysis::StageMap;
using analysis::StageMatchBy;
using analysis::StageNodeRef;

namespace {

const io::Artifact& sample(const std::string& relative) {
  // Each sample is loaded once for the whole test program.
  static std::map<std::string, io::Artifact> loaded;
  auto found = loaded.find(relative);
  if (found == loaded.end()) {
    found = loaded.emplace(relative, io::loadArtifact(std::string(LATHE_SAMPLES_DIR) + "/" + relative)).first;
  }
  return found->second;
}

size_t graphIndex(const StageMap& map, std::string_view id) {
  const std::optional<size_t> index = map.indexOf(id);
  if (!index) throw std::runtime_error("no graph " + std::string(id));
  return *index;
}

const ir::Graph& graphOf(const StageMap& map, size_t index) {
  return *map.graphs()[index].graph;
}

ir::NodeId nodeNamed(const StageMap& map, size_t graph, std::string_view name) {
  const ir::NodeId id = graphOf(map, graph).find(name);
  if (id == ir::kNoNode) throw std::runtime_error("no node " + std::string(name));
  return id;
}

std::string provenanceOf(const ir::Graph& g, ir::NodeId id) {
  const ir::Provenance& p = g.node(id).provenance;
  return std::string(g.str(p.file)) + ":" + std::to_string(p.line) + ":" + std::string(g.str(p.code));
}

// The Dynamo linear call that reads the weight placeholder whose name contains `weight`.
ir::NodeId linearReading(const ir::Graph& dynamo, std::string_view weight) {
  for (ir::NodeId id = 0; id < dynamo.size(); ++id) {
    if (!dynamo.target(id).ends_with("linear")) continue;
    for (ir::NodeId input : dynamo.inputs(id)) {
      if (dynamo.name(input).find(weight) != std::string_view::npos) return id;
    }
  }
  return ir::kNoNode;
}

// The weight placeholder an aten.mm reads through its permute.
ir::NodeId mmWeight(const ir::Graph& g, ir::NodeId mm) {
  for (ir::NodeId input : g.inputs(mm)) {
    if (g.target(input).find("permute") == std::string_view::npos) continue;
    for (ir::NodeId source : g.inputs(input)) {
      if (g.node(source).kind == ir::NodeKind::Placeholder) return source;
    }
  }
  return ir::kNoNode;
}

class TinyTrain : public ::testing::Test {
 protected:
  TinyTrain() : map(sample("captures/llama3_8b_2l_tiny_train.log.gz").graphs(), "0/0", -1) {}
  StageMap map;
};

TEST_F(TinyTrain, ListsEveryStageOfTheCompile) {
  ASSERT_EQ(map.graphs().size(), 10u);
  EXPECT_EQ(map.stage(graphIndex(map, "0/0:dynamo_output_graph")), analysis::GraphStage::Dynamo);
  EXPECT_EQ(map.stage(graphIndex(map, "0/0:aot_joint_graph")), analysis::GraphStage::Joint);
  EXPECT_EQ(map.stage(graphIndex(map, "0/0:aot_forward_graph")), analysis::GraphStage::Forward);
  EXPECT_EQ(map.stage(graphIndex(map, "0/0:aot_backward_graph")), analysis::GraphStage::Backward);
  EXPECT_EQ(map.stage(graphIndex(map, "0/0:inductor_post_grad_graph#2")), analysis::GraphStage::PostGrad);
}

TEST_F(TinyTrain, JointNodeMapsToTheSameNamedForwardNode) {
  const size_t joint = graphIndex(map, "0/0:aot_joint_graph");
  const size_t forward = graphIndex(map, "0/0:aot_forward_graph");
  const std::vector<StageNodeRef> matches = map.counterparts(joint, nodeNamed(map, joint, "mm_3"), forward);
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_EQ(graphOf(map, forward).name(matches[0].node), "mm_3");
  EXPECT_EQ(matches[0].by, StageMatchBy::Name);
}

TEST_F(TinyTrain, SavedValueMapsToTheBackwardPlaceholder) {
  const size_t forward = graphIndex(map, "0/0:aot_forward_graph");
  const size_t backward = graphIndex(map, "0/0:aot_backward_graph");
  const ir::Graph& bwd = graphOf(map, backward);
  // Every backward placeholder that is not a tangent is a value the forward saved, under its name.
  size_t saved = 0;
  for (ir::NodeId id = 0; id < bwd.size(); ++id) {
    if (bwd.node(id).kind != ir::NodeKind::Placeholder || bwd.name(id).starts_with("tangents_")) continue;
    const std::vector<StageNodeRef> back = map.counterparts(backward, id, forward);
    ASSERT_EQ(back.size(), 1u) << bwd.name(id);
    EXPECT_EQ(graphOf(map, forward).name(back[0].node), bwd.name(id));
    ++saved;
  }
  EXPECT_GT(saved, 20u);
}

TEST_F(TinyTrain, ForwardMmMapsBackToTheDynamoLinearOfTheSameLayer) {
  const size_t dynamoIndex = graphIndex(map, "0/0:dynamo_output_graph");
  const size_t forwardIndex = graphIndex(map, "0/0:aot_forward_graph");
  const ir::Graph& dynamo = graphOf(map, dynamoIndex);
  const ir::Graph& forward = graphOf(map, forwardIndex);
  size_t checked = 0;
  for (ir::NodeId mm = 0; mm < forward.size(); ++mm) {
    if (forward.target(mm) != "torch.ops.aten.mm.default") continue;
    const ir::NodeId weight = mmWeight(forward, mm);
    if (weight == ir::kNoNode) continue;  // the rotary embedding's mm reads no weight
    // The weight's Dynamo placeholder names the module; the linear reading it is the one to find.
    const std::vector<StageNodeRef> weightInDynamo = map.counterparts(forwardIndex, weight, dynamoIndex);
    ASSERT_EQ(weightInDynamo.size(), 1u) << forward.name(weight);
    EXPECT_EQ(weightInDynamo[0].by, StageMatchBy::InputPosition);
    const ir::NodeId expected = linearReading(dynamo, dynamo.name(weightInDynamo[0].node));
    ASSERT_NE(expected, ir::kNoNode) << dynamo.name(weightInDynamo[0].node);

    const std::vector<StageNodeRef> matches = map.counterparts(forwardIndex, mm, dynamoIndex);
    ASSERT_EQ(matches.size(), 1u) << forward.name(mm);
    EXPECT_EQ(matches[0].by, StageMatchBy::Provenance);
    EXPECT_EQ(dynamo.name(matches[0].node), dynamo.name(expected)) << forward.name(mm);
    // And back: the linear maps to this very mm.
    const std::vector<StageNodeRef> back = map.counterparts(dynamoIndex, expected, forwardIndex);
    ASSERT_FALSE(back.empty());
    EXPECT_EQ(back[0].node, mm);
    ++checked;
  }
  EXPECT_EQ(checked, 15u);  // 7 projections per layer, 2 layers, and the LM head
}

TEST_F(TinyTrain, EveryMappingSharesANameProvenanceOrInputPosition) {
  size_t mappings = 0;
  for (size_t from = 0; from < map.graphs().size(); ++from) {
    const ir::Graph& source = graphOf(map, from);
    for (ir::NodeId id = 0; id < source.size(); ++id) {
      for (const StageNodeRef& match : map.counterparts(from, id)) {
        const ir::Graph& target = graphOf(map, match.graph);
        ++mappings;
        switch (match.by) {
          case StageMatchBy::Name: EXPECT_EQ(source.name(id), target.name(match.node)); break;
          case StageMatchBy::Provenance: EXPECT_EQ(provenanceOf(source, id), provenanceOf(target, match.node)); break;
          case StageMatchBy::InputPosition:
            EXPECT_EQ(source.node(id).kind, ir::NodeKind::Placeholder);
            EXPECT_EQ(target.node(match.node).kind, ir::NodeKind::Placeholder);
            EXPECT_EQ(source.node(id).meta.dtype, target.node(match.node).meta.dtype);
            break;
        }
      }
    }
  }
  EXPECT_GT(mappings, 10000u);
}

TEST_F(TinyTrain, MostForwardCallsFindTheirDynamoSource) {
  const size_t dynamo = graphIndex(map, "0/0:dynamo_output_graph");
  const size_t forward = graphIndex(map, "0/0:aot_forward_graph");
  const ir::Graph& fwd = graphOf(map, forward);
  size_t withSource = 0, found = 0;
  for (ir::NodeId id = 0; id < fwd.size(); ++id) {
    if (fwd.node(id).provenance.file == 0) continue;
    ++withSource;
    if (!map.counterparts(forward, id, dynamo).empty()) ++found;
  }
  ASSERT_GT(withSource, 200u);
  EXPECT_GT(found * 10, withSource * 9) << found << " of " << withSource;
}

TEST(StageMap, InferenceGraphMapsToPostGradAcrossARecompile) {
  const io::Artifact& artifact = sample("captures/llama3_8b_2l_tiny_infer.log.gz");
  const StageMap second(artifact.graphs(), "0/1", -1);
  ASSERT_EQ(second.graphs().size(), 8u);  // the recompile's graphs only
  const size_t inference = graphIndex(second, "0/1:aot_inference_graph");
  const size_t postGrad = graphIndex(second, "0/1:inductor_post_grad_graph");
  const size_t dynamo = graphIndex(second, "0/1:dynamo_output_graph");
  EXPECT_EQ(second.stage(inference), analysis::GraphStage::Inference);
  const ir::Graph& g = graphOf(second, inference);
  size_t mms = 0;
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    if (g.target(id) != "torch.ops.aten.mm.default") continue;
    const std::vector<StageNodeRef> post = second.counterparts(inference, id, postGrad);
    ASSERT_EQ(post.size(), 1u) << g.name(id);
    EXPECT_EQ(graphOf(second, postGrad).name(post[0].node), g.name(id));
    const std::vector<StageNodeRef> source = second.counterparts(inference, id, dynamo);
    ASSERT_FALSE(source.empty()) << g.name(id);
    EXPECT_TRUE(graphOf(second, dynamo).target(source[0].node).ends_with("linear")) << g.name(id);
    ++mms;
  }
  EXPECT_GT(mms, 10u);
}

TEST(StageMap, ExportedProgramHasOneStageAndNoCounterparts) {
  const io::Artifact& artifact = sample("pt2/llama3_8b_2l_tiny.pt2");
  const std::vector<io::GraphListing> listings = artifact.graphs();
  ASSERT_FALSE(listings.empty());
  const StageMap map(listings, listings.front().compileId, listings.front().rank);
  ASSERT_EQ(map.graphs().size(), 1u);
  EXPECT_EQ(map.stage(0), analysis::GraphStage::Exported);
  for (ir::NodeId id = 0; id < graphOf(map, 0).size(); ++id) EXPECT_TRUE(map.counterparts(0, id).empty());
}

TEST(StageMap, StageNamesFollowTheTraceKinds) {
  using analysis::GraphStage;
  using analysis::graphStageOf;
  EXPECT_EQ(graphStageOf("before_pre_grad_graph"), GraphStage::PreGrad);
  EXPECT_EQ(graphStageOf("after_joint_graph"), GraphStage::JointPass);
  EXPECT_EQ(graphStageOf("before_post_grad_graph"), GraphStage::PostGrad);
  EXPECT_EQ(graphStageOf("compiled_autograd_graph"), GraphStage::Other);
}

}  // namespace

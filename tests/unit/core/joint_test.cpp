// The joint-graph analysis on every tiny training capture: the classification of nodes into
// forward and backward is a partition torch's partitioner would agree with (every primal feeds the
// forward, tangents only the backward), and partitioning with a saved set obeys its contract.
#include "analysis/joint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sample_graphs.h"

namespace lathe::analysis {
namespace {

struct JointSample {
  const char* capture;
  const char* graph;
};
const JointSample kJointSamples[] = {
    {"captures/llama3_8b_2l_tiny_train.log.gz", "0/0:aot_joint_graph"},
    {"captures/mixtral_2l_tiny_train.log.gz", "0/0:aot_joint_graph"},
    {"captures/gpt2_tiny_train.log.gz", "1/0_1:aot_joint_graph"},
    {"captures/vit_b16_tiny_train.log.gz", "0/0:aot_joint_graph"},
};

class JointSamples : public ::testing::TestWithParam<JointSample> {};

TEST_P(JointSamples, ClassifiesEveryNodeConsistently) {
  const testing::SampleGraph sample = testing::loadSampleGraph(GetParam().capture, GetParam().graph);
  const ir::Graph& graph = *sample.graph;
  const JointInfo info = analyzeJoint(graph);
  ASSERT_TRUE(info.joint);
  // Placeholders are the primals then the tangents, nothing else.
  size_t placeholders = 0;
  for (ir::NodeId id = 0; id < graph.size(); ++id) placeholders += graph.node(id).kind == ir::NodeKind::Placeholder;
  EXPECT_EQ(info.primals.size() + info.tangents.size(), placeholders);
  EXPECT_FALSE(info.tangents.empty());
  // The output lists the forward outputs, then one gradient slot per primal.
  EXPECT_EQ(outputItems(graph).size(), info.forwardOutputCount + info.primals.size());
  EXPECT_FALSE(info.backwardOutputs.empty());
  int32_t order = 0;
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    const std::string name(graph.name(id));
    // Nothing downstream of a tangent runs in the forward.
    if (info.tangentClosure[id]) {
      EXPECT_FALSE(info.isForward(id)) << name;
      EXPECT_TRUE(info.isBackward(id)) << name;
      EXPECT_EQ(info.distanceFromBackward[id], 0) << name;
    }
    // Forward positions number the forward nodes in program order.
    EXPECT_EQ(info.forwardOrder[id], info.isForward(id) ? order++ : -1) << name;
    if (info.isForward(id)) {
      EXPECT_GE(info.distanceFromBackward[id], 1) << name;
    }
  }
  for (ir::NodeId tangent : info.tangents) EXPECT_TRUE(info.tangentClosure[tangent]);
  for (ir::NodeId output : info.forwardOutputs) EXPECT_TRUE(info.isForward(output)) << graph.name(output);
  for (ir::NodeId gradient : info.backwardOutputs) EXPECT_TRUE(info.isBackward(gradient)) << graph.name(gradient);
}

TEST_P(JointSamples, PartitionsFollowTheSavedSet) {
  const testing::SampleGraph sample = testing::loadSampleGraph(GetParam().capture, GetParam().graph);
  const ir::Graph& graph = *sample.graph;
  const JointInfo info = analyzeJoint(graph);
  ASSERT_TRUE(info.joint);
  // Saving every forward value: nothing is recomputed and the backward reads only what it uses.
  std::vector<ir::NodeId> everything;
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    if (info.isForward(id) || graph.node(id).kind == ir::NodeKind::Placeholder) everything.push_back(id);
  }
  const StepPartition all = partitionJoint(graph, info, everything);
  ASSERT_TRUE(all.valid());
  EXPECT_TRUE(all.recomputed.empty());
  EXPECT_TRUE(std::is_sorted(all.saved.begin(), all.saved.end()));
  EXPECT_TRUE(std::includes(everything.begin(), everything.end(), all.saved.begin(), all.saved.end()));
  for (ir::NodeId id : all.forward) EXPECT_TRUE(all.inForward[id]);
  for (ir::NodeId id : all.backward) EXPECT_TRUE(all.inBackward[id]);
  // Saving only the primals: the backward recomputes the forward values it reads, each before its
  // first use, and never recomputes a value of the tangent closure.
  const StepPartition primals = partitionJoint(graph, info, info.primals);
  ASSERT_TRUE(primals.valid());
  EXPECT_FALSE(primals.recomputed.empty());
  std::vector<uint8_t> computed(graph.size(), 0);
  for (ir::NodeId id : primals.saved) computed[id] = 1;
  for (ir::NodeId id : info.tangents) computed[id] = 1;
  for (ir::NodeId id : primals.recomputed) EXPECT_FALSE(info.tangentClosure[id]) << graph.name(id);
  for (ir::NodeId id : primals.backward) {
    for (const ir::NodeId input : graph.inputs(id)) {
      EXPECT_TRUE(computed[input] || graph.node(input).kind != ir::NodeKind::CallFunction)
          << graph.name(id) << " reads " << graph.name(input) << " before the backward computes it";
    }
    computed[id] = 1;
  }
  // Saving nothing: the backward lacks the primals it needs.
  EXPECT_FALSE(partitionJoint(graph, info, {}).valid());
}

INSTANTIATE_TEST_SUITE_P(TinyTraining, JointSamples, ::testing::ValuesIn(kJointSamples));

TEST(Joint, AnInferenceGraphIsNotJoint) {
  const testing::SampleGraph sample =
      testing::loadSampleGraph("captures/llama3_8b_2l_tiny_infer.log.gz", "0/0:aot_inference_graph");
  const JointInfo info = analyzeJoint(*sample.graph);
  EXPECT_FALSE(info.joint);
  EXPECT_TRUE(info.tangents.empty());
  EXPECT_FALSE(info.primals.empty());  // every placeholder
  EXPECT_TRUE(info.requiredForward.empty());
  EXPECT_TRUE(info.forwardOutputs.empty());
}

}  // namespace
}  // namespace lathe::analysis

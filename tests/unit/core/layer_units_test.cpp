// Layer units on real training captures: from module paths (one unit per transformer layer, a
// prologue and an epilogue), from repeated structure where no parameter has a path; every
// parameter owned once, gradients and matmuls in the unit of their weight.
#include "analysis/layer_units.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/joint.h"
#include "ir/op_info.h"
#include "sample_graphs.h"

namespace lathe::analysis {
namespace {

using testing::loadSampleGraph;
using testing::SampleGraph;

const SampleGraph& llamaJoint() {
  static const SampleGraph sample = loadSampleGraph("captures/llama3_8b_2l_tiny_train.log.gz", "0/0:aot_joint_graph");
  return sample;
}

TEST(LayerUnits, KeysOfModulePaths) {
  EXPECT_EQ(layerUnitKey("model.layers.3.mlp.up_proj"), "model.layers.3");
  EXPECT_EQ(layerUnitKey("transformer.h.7"), "transformer.h.7");
  EXPECT_EQ(layerUnitKey("vit.encoder.layer.11.attention.query"), "vit.encoder.layer.11");
  EXPECT_EQ(layerUnitKey("blocks.0.mlp.fc1"), "blocks.0");
  EXPECT_EQ(layerUnitKey("model.layers.12"), "model.layers.12");
  EXPECT_EQ(layerUnitKey("model.norm"), "");
  EXPECT_EQ(layerUnitKey("0.weight"), "");  // a number with no container above it
  EXPECT_EQ(layerUnitKey("layers.1a.mlp"), "");
  EXPECT_EQ(layerUnitKey(""), "");
}

TEST(LayerUnits, FromModulePaths) {
  const SampleGraph& llama = llamaJoint();
  const ir::Graph& graph = *llama.graph;
  ASSERT_TRUE(llama.inputs.joinedWithDynamo);
  const LayerUnits state = layerUnits(graph, llama.inputs, ir::OpRegistry::global());

  std::vector<std::string> names;
  for (const LayerUnit& unit : state.units) names.push_back(unit.name);
  EXPECT_EQ(names, (std::vector<std::string>{"prologue", "model.layers.0", "model.layers.1", "epilogue"}));

  std::map<ir::NodeId, int> owners;
  uint64_t unitBytes = 0, parameterBytes = 0;
  for (const LayerUnit& unit : state.units) {
    unitBytes += unit.weightBytes;
    for (ir::NodeId w : unit.weights) {
      ++owners[w];
      EXPECT_EQ(state.unit[w], unit.id);
      const std::string& path = llama.inputs.modulePath[w];
      if (unit.name.starts_with("model.layers.")) {
        EXPECT_TRUE(path.starts_with(unit.name + ".")) << path;
      }
    }
  }
  for (ir::NodeId p : llama.inputs.placeholders) {
    if (llama.inputs.role[p] != ir::Role::Parameter) {
      EXPECT_EQ(owners.count(p), 0u) << graph.name(p);
      continue;
    }
    parameterBytes += graph.node(p).meta.storageBytes();
    EXPECT_EQ(owners[p], 1) << graph.name(p);
  }
  EXPECT_EQ(owners.size(), 21u);  // 9 per layer, embedding, final norm, lm_head (inv_freq is a buffer)
  EXPECT_EQ(unitBytes, parameterBytes);
  EXPECT_EQ(state.units[0].weights.size(), 1u);  // embed_tokens
  EXPECT_EQ(llama.inputs.modulePath[state.units[0].weights[0]], "model.embed_tokens");
  EXPECT_EQ(state.units[1].weights.size(), 9u);
  EXPECT_EQ(state.units[3].weights.size(), 2u);  // model.norm, lm_head

  // Every node but the output has a unit; a gradient lies in the unit of its parameter; forward
  // matmuls lie in the unit of the weight they multiply.
  for (ir::NodeId node = 0; node < graph.size(); ++node) {
    const bool output = graph.node(node).kind == ir::NodeKind::Output;
    EXPECT_EQ(state.unit[node] == kNoUnit, output) << graph.name(node);
  }
  const JointInfo joint = analyzeJoint(graph);
  const std::vector<ir::NodeId> items = outputItems(graph);
  ASSERT_TRUE(joint.joint);
  size_t gradients = 0;
  for (size_t i = 0; i < joint.primals.size(); ++i) {
    const ir::NodeId gradient = items[joint.forwardOutputCount + i];
    if (gradient == ir::kNoNode || state.unit[joint.primals[i]] == kNoUnit) continue;
    if (llama.inputs.role[joint.primals[i]] != ir::Role::Parameter) continue;
    EXPECT_EQ(state.unit[gradient], state.unit[joint.primals[i]]) << graph.name(gradient);
    ++gradients;
  }
  EXPECT_EQ(gradients, 21u);
  size_t matmuls = 0;
  for (ir::NodeId node = 0; node < graph.size(); ++node) {
    if (graph.target(node) != "torch.ops.aten.mm.default" || joint.tangentClosure[node]) continue;
    const ir::NodeId weightView = graph.inputs(node)[1];  // x @ permute(W)
    if (graph.inputs(weightView).empty()) continue;
    const ir::NodeId weight = graph.inputs(weightView)[0];
    if (llama.inputs.role[weight] != ir::Role::Parameter) continue;
    EXPECT_EQ(state.unit[node], state.unit[weight]) << graph.name(node);
    ++matmuls;
  }
  EXPECT_EQ(matmuls, 2u * 7 + 1);  // q, k, v, o, gate, up, down per layer; lm_head
}

TEST(LayerUnits, FromRepeatedStructureWithoutModulePaths) {
  SampleGraph llama = llamaJoint();
  for (std::string& path : llama.inputs.modulePath) path.clear();
  const LayerUnits state = layerUnits(*llama.graph, llama.inputs, ir::OpRegistry::global());
  const SampleGraph& named = llamaJoint();

  // Cut at the two forward attention ops: embedding and layer 0 up to attention; the rest of
  // layer 0 and layer 1 up to attention; the rest.
  ASSERT_EQ(state.units.size(), 3u);
  std::map<std::string, std::set<std::string>> paths;
  size_t weights = 0;
  for (const LayerUnit& unit : state.units) {
    EXPECT_EQ(unit.name, "block." + std::to_string(unit.id));
    for (ir::NodeId w : unit.weights) paths[unit.name].insert(named.inputs.modulePath[w]);
    weights += unit.weights.size();
  }
  EXPECT_EQ(weights, 21u);
  EXPECT_TRUE(paths["block.0"].count("model.embed_tokens"));
  EXPECT_TRUE(paths["block.0"].count("model.layers.0.self_attn.v_proj"));
  EXPECT_TRUE(paths["block.1"].count("model.layers.0.self_attn.o_proj"));
  EXPECT_TRUE(paths["block.1"].count("model.layers.1.self_attn.q_proj"));
  EXPECT_TRUE(paths["block.2"].count("model.layers.1.mlp.down_proj"));
  EXPECT_TRUE(paths["block.2"].count("lm_head"));
}

TEST(LayerUnits, EveryTrainingSampleGetsUnitsOwningEachParameterOnce) {
  struct Case {
    std::string file, compile;
    size_t layers;
  };
  for (const Case& c : std::vector<Case>{{"gpt2_tiny_train.log.gz", "1/0_1", 2},
                                         {"vit_b16_tiny_train.log.gz", "0/0", 2},
                                         {"mixtral_2l_tiny_train.log.gz", "0/0", 2},
                                         {"llama3_8b_4l_train.log.gz", "0/0", 4}}) {
    SCOPED_TRACE(c.file);
    const SampleGraph sample = loadSampleGraph("captures/" + c.file, c.compile + ":aot_joint_graph");
    const LayerUnits units = layerUnits(*sample.graph, sample.inputs, ir::OpRegistry::global());
    size_t layers = 0, owned = 0, parameters = 0;
    uint64_t bytes = 0, parameterBytes = 0;
    for (const LayerUnit& unit : units.units) {
      layers += layerUnitKey(unit.name).empty() ? 0 : 1;
      owned += unit.weights.size();
      bytes += unit.weightBytes;
    }
    for (ir::NodeId p : sample.inputs.placeholders) {
      if (sample.inputs.role[p] != ir::Role::Parameter) continue;
      ++parameters;
      parameterBytes += sample.graph->node(p).meta.storageBytes();
    }
    EXPECT_EQ(layers, c.layers);
    EXPECT_EQ(owned, parameters);
    EXPECT_GT(parameters, 0u);
    EXPECT_EQ(bytes, parameterBytes);
  }
}

}  // namespace
}  // namespace lathe::analysis

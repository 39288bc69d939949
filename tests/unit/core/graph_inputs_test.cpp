// Placeholder roles and module paths of AOT graphs, joined by position with the Dynamo graph of the
// same compile: what each Dynamo placeholder's name says (parameters and buffers of a module, user
// inputs) is what the AOT primal at its position becomes; tangents stay tangents; without a Dynamo
// graph of the same shape the roles stay as loaded.
#include "analysis/graph_inputs.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/artifact.h"
#include "sample_graphs.h"

namespace lathe::analysis {
namespace {

using ir::NodeId;

std::vector<NodeId> placeholdersOf(const ir::Graph& graph, bool withTangents) {
  std::vector<NodeId> out;
  for (NodeId id = 0; id < graph.size(); ++id) {
    if (graph.node(id).kind != ir::NodeKind::Placeholder) continue;
    if (!withTangents && std::string(graph.name(id)).starts_with("tangents_")) continue;
    out.push_back(id);
  }
  return out;
}

// "model.layers.0.input_layernorm" as Dynamo spells it inside a placeholder name:
// "..._modules_model_modules_layers_modules_0_modules_input_layernorm_parameters_...".
std::string dynamoSpelling(const std::string& modulePath) {
  std::string out = "modules_";
  for (char c : modulePath) out += c == '.' ? std::string("_modules_") : std::string(1, c);
  return out + "_";
}

TEST(GraphInputs, AotPrimalsTakeTheRolesAndModulesTheDynamoNamesSay) {
  struct Case {
    const char* sample;
    const char* compile;
  };
  for (const Case& c : {Case{"captures/llama3_8b_2l_tiny_train.log.gz", "0/0"},
                        Case{"captures/mixtral_2l_tiny_train.log.gz", "0/0"},
                        Case{"captures/vit_b16_tiny_train.log.gz", "0/0"},
                        Case{"captures/gpt2_tiny_train.log.gz", "1/0_1"}}) {
    SCOPED_TRACE(c.sample);
    const testing::SampleGraph g = testing::loadSampleGraph(c.sample, std::string(c.compile) + ":aot_joint_graph");
    ASSERT_NE(g.dynamo, nullptr);
    const GraphInputs& inputs = g.inputs;
    EXPECT_TRUE(inputs.joinedWithDynamo);
    EXPECT_EQ(inputs.placeholders, placeholdersOf(*g.graph, true));
    const std::vector<NodeId> primals = placeholdersOf(*g.graph, false);
    const std::vector<NodeId> dynamo = placeholdersOf(*g.dynamo, true);
    ASSERT_EQ(primals.size(), dynamo.size());
    size_t parameters = 0, buffers = 0;
    for (size_t i = 0; i < primals.size(); ++i) {
      const std::string name(g.dynamo->name(dynamo[i]));
      const ir::Role role = inputs.role[primals[i]];
      if (!g.dynamo->node(dynamo[i]).meta.isTensor()) continue;  // a size symbol
      const bool parameter = name.find("_parameters_") != std::string::npos;
      const bool buffer = name.find("_buffers_") != std::string::npos;
      EXPECT_EQ(role, parameter ? ir::Role::Parameter : buffer ? ir::Role::Buffer : ir::Role::UserInput) << name;
      if (parameter || buffer) {
        // A parameter of the model itself (ViT's cls_token) has the root's empty path.
        const bool onRoot = name.find("self_parameters_") != std::string::npos ||
                            name.find("self_buffers_") != std::string::npos;
        const std::string& path = inputs.modulePath[primals[i]];
        EXPECT_EQ(path.empty(), onRoot) << name;
        if (!onRoot) {
          EXPECT_NE(name.find(dynamoSpelling(path)), std::string::npos) << name << " is not of module " << path;
        }
        EXPECT_TRUE(inputs.isWeight(primals[i]));
      }
      parameters += parameter ? 1 : 0;
      buffers += buffer ? 1 : 0;
    }
    EXPECT_GT(parameters, 0u);
    for (NodeId id : inputs.placeholders) {
      if (std::string(g.graph->name(id)).starts_with("tangents_")) {
        EXPECT_EQ(inputs.role[id], ir::Role::Tangent);
      }
    }
    // Nodes that are not inputs have no role and no module.
    for (NodeId id = 0; id < g.graph->size(); ++id) {
      if (g.graph->node(id).kind == ir::NodeKind::Placeholder) continue;
      EXPECT_EQ(inputs.role[id], ir::Role::Unknown) << g.graph->name(id);
      EXPECT_TRUE(inputs.modulePath[id].empty()) << g.graph->name(id);
    }
  }
}

TEST(GraphInputs, WithoutADynamoGraphOfTheSameShapeRolesStayAsLoaded) {
  const testing::SampleGraph llama =
      testing::loadSampleGraph("captures/llama3_8b_2l_tiny_train.log.gz", "0/0:aot_joint_graph");
  const testing::SampleGraph gpt2 = testing::loadSampleGraph("captures/gpt2_tiny_train.log.gz", "1/0_1:aot_joint_graph");
  for (const ir::Graph* dynamo : {static_cast<const ir::Graph*>(nullptr), gpt2.dynamo.get()}) {
    const GraphInputs inputs = inferGraphInputs(*llama.graph, dynamo);
    EXPECT_FALSE(inputs.joinedWithDynamo);
    for (NodeId id : inputs.placeholders) {
      EXPECT_EQ(inputs.role[id], llama.graph->node(id).role) << llama.graph->name(id);
      EXPECT_TRUE(inputs.modulePath[id].empty()) << llama.graph->name(id);
    }
  }
}

}  // namespace
}  // namespace lathe::analysis

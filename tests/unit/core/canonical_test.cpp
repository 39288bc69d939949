// The joint graph as torch's partitioner sees it: no-op ops dropped (a clone or a same-dtype cast of
// the same shape), identical nodes merged, every original node mapped to the node standing for it,
// and the options turning each step off.
#include "analysis/canonical.h"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "io/fx/fx_text.h"
#include "sample_graphs.h"
#include "util/diagnostics.h"

namespace lathe::analysis {
namespace {

using ir::NodeId;

// mul and mul_1 compute the same value; clone and the cast to the same dtype forward mul_1.
std::shared_ptr<ir::Graph> graphWithANoOpAndADuplicate() {
  const std::string f = "\"f32[8][1]cuda:0\"";
  const std::string text = "class joint_helper(torch.nn.Module):\n    def forward(self, primals_1: " + f +
                           ", tangents_1: " + f + "):\n" +
                           "        mul: " + f + " = torch.ops.aten.mul.Tensor(primals_1, primals_1)\n" +
                           "        mul_1: " + f + " = torch.ops.aten.mul.Tensor(primals_1, primals_1)\n" +
                           "        clone: " + f + " = torch.ops.aten.clone.default(mul_1)\n" +
                           "        cast: " + f +
                           " = torch.ops.prims.convert_element_type.default(clone, torch.float32)\n" +
                           "        add: " + f + " = torch.ops.aten.add.Tensor(mul, cast)\n" +
                           "        grad: " + f + " = torch.ops.aten.mul.Tensor(tangents_1, add)\n" +
                           "        return (add, grad)\n";
  Diagnostics diagnostics;
  std::shared_ptr<ir::Graph> graph = io::parseFxText(text, {}, diagnostics);
  if (graph == nullptr) throw std::runtime_error("test graph does not parse");
  return graph;
}

TEST(Canonicalize, DropsNoOpsAndMergesDuplicatesMappingEveryNode) {
  const std::shared_ptr<ir::Graph> graph = graphWithANoOpAndADuplicate();
  const CanonicalGraph canonical = canonicalize(*graph);
  EXPECT_EQ(canonical.removedNoOps, 2u);
  EXPECT_EQ(canonical.mergedDuplicates, 1u);
  EXPECT_EQ(canonical.graph->size(), graph->size() - 3);
  const NodeId mul = graph->find("mul");
  for (const char* forwarded : {"mul_1", "clone", "cast"}) {
    EXPECT_EQ(canonical.toCanonical[graph->find(forwarded)], canonical.toCanonical[mul]) << forwarded;
  }
  EXPECT_EQ(canonical.graph->find("clone"), ir::kNoNode);
  // add now reads mul twice.
  const NodeId add = canonical.graph->find("add");
  ASSERT_NE(add, ir::kNoNode);
  for (NodeId in : canonical.graph->inputs(add)) EXPECT_EQ(canonical.graph->name(in), "mul");
}

TEST(Canonicalize, OptionsTurnEachStepOff) {
  const std::shared_ptr<ir::Graph> graph = graphWithANoOpAndADuplicate();
  const CanonicalGraph untouched = canonicalize(*graph, {.removeNoOps = false, .mergeDuplicates = false});
  EXPECT_EQ(untouched.graph->size(), graph->size());
  EXPECT_EQ(untouched.removedNoOps + untouched.mergedDuplicates, 0u);
  const CanonicalGraph merged = canonicalize(*graph, {.removeNoOps = false, .mergeDuplicates = true});
  EXPECT_EQ(merged.removedNoOps, 0u);
  EXPECT_EQ(merged.mergedDuplicates, 1u);
  EXPECT_NE(merged.graph->find("clone"), ir::kNoNode);
}

// On every training capture: each canonical node stands for the original node of its name, and every
// original node maps to a canonical one that stands for itself or for an equal value.
TEST(Canonicalize, MapsBackAndForthOnEveryTrainingCapture) {
  for (const char* sample : {"captures/llama3_8b_2l_tiny_train.log.gz", "captures/mixtral_2l_tiny_train.log.gz",
                             "captures/vit_b16_tiny_train.log.gz", "captures/llama3_8b_4l_train.log.gz"}) {
    SCOPED_TRACE(sample);
    const testing::SampleGraph g = testing::loadSampleGraph(sample, "0/0:aot_joint_graph");
    const CanonicalGraph canonical = canonicalize(*g.graph);
    ASSERT_EQ(canonical.toCanonical.size(), g.graph->size());
    ASSERT_EQ(canonical.toOriginal.size(), canonical.graph->size());
    EXPECT_EQ(canonical.graph->size() + canonical.removedNoOps + canonical.mergedDuplicates, g.graph->size());
    for (NodeId c = 0; c < canonical.graph->size(); ++c) {
      const NodeId original = canonical.toOriginal[c];
      ASSERT_LT(original, g.graph->size());
      EXPECT_EQ(g.graph->name(original), canonical.graph->name(c));
      EXPECT_EQ(canonical.toCanonical[original], c);
    }
    for (NodeId id = 0; id < g.graph->size(); ++id) {
      const NodeId c = canonical.toCanonical[id];
      ASSERT_LT(c, canonical.graph->size()) << g.graph->name(id);
      EXPECT_EQ(canonical.graph->node(c).meta.dtype, g.graph->node(id).meta.dtype) << g.graph->name(id);
    }
  }
}

}  // namespace
}  // namespace lathe::analysis

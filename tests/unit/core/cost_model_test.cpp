#include "analysis/cost_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <optional>

#include "io/artifact.h"
#include "io/fx/fx_text.h"

using namespace lathe;
using analysis::NodeCost;
using ir::NodeId;

namespace {

const std::filesystem::path kSamples = LATHE_SAMPLES_DIR;

// The forward graph of torch's partition of a 2-layer Llama-3-8B training step (batch 1, seq 2048, bf16).
class CostModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const io::Artifact artifact = io::loadArtifact(kSamples / "captures/llama3_8b_2l_train.log.gz");
    const std::vector<io::GraphListing> graphs = artifact.graphs();
    if (const io::GraphListing* listing = io::findGraph(graphs, "0/0:aot_forward_graph")) {
      graph_ = listing->graph;
    }
    h200_ = hw::resolveHwProfile("h200");
  }
  static void TearDownTestSuite() { graph_.reset(); }
  void SetUp() override { ASSERT_NE(graph_, nullptr) << "no 0/0:aot_forward_graph in the capture"; }

  static const ir::Graph& graph() { return *graph_; }
  static const hw::HwProfile& h200() { return *h200_; }
  static NodeId node(std::string_view name) {
    const NodeId id = graph_->find(name);
    EXPECT_NE(id, ir::kNoNode) << name;
    return id;
  }
  static std::vector<NodeId> nodes(std::initializer_list<std::string_view> names) {
    std::vector<NodeId> ids;
    for (auto name : names) ids.push_back(node(name));
    return ids;
  }
  static double bytesOf(NodeId id) { return static_cast<double>(graph_->node(id).meta.storageBytes()); }

 private:
  static inline std::shared_ptr<const ir::Graph> graph_;
  static inline std::optional<hw::HwProfile> h200_;
};

void expectRoofline(const NodeCost& c, const hw::HwProfile& p) {
  EXPECT_DOUBLE_EQ(c.seconds, std::max(c.computeSeconds, c.memorySeconds) + p.launchOverhead);
}

TEST_F(CostModel, ProjectionMatmulIsComputeBoundAsItsIntensitySays) {
  // mm = view_4 [2048, 4096] @ permute_1 [4096, 4096] (the q projection), bf16.
  const NodeCost c = analysis::nodeCost(graph(), node("mm"), h200());
  const double flops = 2.0 * 2048 * 4096 * 4096;
  const double bytes = 2.0 * (2048 * 4096 + 4096 * 4096 + 2048 * 4096);
  EXPECT_TRUE(c.kernel);
  EXPECT_DOUBLE_EQ(c.flops, flops);
  EXPECT_DOUBLE_EQ(c.bytes, bytes);
  const double ridge = h200().flopsBf16 / h200().hbmBandwidth;  // ~190 FLOP/byte
  ASSERT_GT(flops / bytes, ridge);                              // 1024 FLOP/byte
  EXPECT_GT(c.computeSeconds, c.memorySeconds);
  EXPECT_DOUBLE_EQ(c.computeSeconds, flops / (h200().flopsBf16 * h200().efficiencyOf(ir::OpCategory::Matmul)));
  expectRoofline(c, h200());
}

TEST_F(CostModel, RotaryOuterProductIsMemoryBoundAsItsIntensitySays) {
  // mm_default = squeeze_dim f32[64, 1] @ squeeze_dim_1 f32[1, 2048]: an outer product, K = 1.
  const NodeCost c = analysis::nodeCost(graph(), node("mm_default"), h200());
  const double flops = 2.0 * 64 * 2048;
  const double bytes = 4.0 * (64 + 2048 + 64 * 2048);
  EXPECT_DOUBLE_EQ(c.flops, flops);
  EXPECT_DOUBLE_EQ(c.bytes, bytes);
  ASSERT_LT(flops / bytes, h200().flopsFp32 / h200().hbmBandwidth);  // 0.5 vs ~12 FLOP/byte
  EXPECT_GT(c.memorySeconds, c.computeSeconds);
  EXPECT_DOUBLE_EQ(c.memorySeconds, bytes / h200().hbmBandwidth);
  expectRoofline(c, h200());
}

TEST_F(CostModel, EveryMatmulIsBoundWhereItsIntensityFallsAgainstTheRidge) {
  size_t computeBound = 0, memoryBound = 0;
  for (NodeId id = 0; id < graph().size(); ++id) {
    if (graph().target(id) != "torch.ops.aten.mm.default") continue;
    SCOPED_TRACE(std::string(graph().name(id)));
    const auto in = graph().inputs(id);
    ASSERT_EQ(in.size(), 2u);
    const auto& a = graph().node(in[0]).meta;
    const auto& b = graph().node(in[1]).meta;
    const double m = static_cast<double>(a.sizes[0].value), k = static_cast<double>(a.sizes[1].value);
    const double n = static_cast<double>(b.sizes[1].value);
    const double flops = 2 * m * n * k;
    const double bytes = bytesOf(in[0]) + bytesOf(in[1]) + bytesOf(id);
    const double ridge = h200().flopsFor(a.dtype) / h200().hbmBandwidth;
    const NodeCost c = analysis::nodeCost(graph(), id, h200());
    EXPECT_DOUBLE_EQ(c.flops, flops);
    EXPECT_DOUBLE_EQ(c.bytes, bytes);
    EXPECT_EQ(c.computeSeconds > c.memorySeconds, flops / bytes > ridge);
    (flops / bytes > ridge ? computeBound : memoryBound)++;
  }
  EXPECT_GE(computeBound, 14u);  // 7 projections per layer, 2 layers
  EXPECT_GE(memoryBound, 1u);
}

TEST_F(CostModel, ViewsGetitemsAndPlaceholdersCostNothing) {
  size_t views = 0;
  for (NodeId id = 0; id < graph().size(); ++id) {
    const auto category = ir::lookupOp(graph().target(id)).category;
    const bool free = graph().node(id).kind == ir::NodeKind::Placeholder ||
                      graph().node(id).kind == ir::NodeKind::Output || category == ir::OpCategory::View ||
                      category == ir::OpCategory::Getitem;
    if (!free) continue;
    views += category == ir::OpCategory::View;
    const NodeCost c = analysis::nodeCost(graph(), id, h200());
    EXPECT_FALSE(c.kernel) << graph().name(id);
    EXPECT_EQ(c.seconds, 0) << graph().name(id);
    EXPECT_EQ(c.bytes, 0) << graph().name(id);
  }
  EXPECT_GT(views, 50u);
  const auto viewsOnly = nodes({"permute_1", "view_4"});
  const NodeCost group = analysis::groupCost(graph(), viewsOnly, h200());
  EXPECT_FALSE(group.kernel);
  EXPECT_EQ(group.seconds, 0);
}

TEST_F(CostModel, FusedRmsNormCostsLessThanItsNodes) {
  // hidden.float() -> pow -> mean -> +eps -> rsqrt -> * -> bf16 -> * weight: one Inductor kernel.
  const auto chain =
      nodes({"convert_element_type_4", "pow_1", "mean", "add_3", "rsqrt", "mul_2", "convert_element_type_5", "mul_3"});
  double flops = 0, bytes = 0, seconds = 0;
  for (NodeId id : chain) {
    const NodeCost c = analysis::nodeCost(graph(), id, h200());
    ASSERT_TRUE(c.kernel) << graph().name(id);
    flops += c.flops;
    bytes += c.bytes;
    seconds += c.seconds;
  }
  const NodeCost fused = analysis::groupCost(graph(), chain, h200());
  EXPECT_TRUE(fused.kernel);
  EXPECT_DOUBLE_EQ(fused.flops, flops);
  // Reads embedding (bf16 [1, 2048, 4096]) and primals_4 (the bf16 [4096] weight); writes rsqrt (saved
  // for backward, f32 [1, 2048, 1]) and mul_3 (read by the next matmul, bf16 [1, 2048, 4096]).
  const double expected = 2.0 * 2048 * 4096 + 2.0 * 4096 + 4.0 * 2048 + 2.0 * 2048 * 4096;
  EXPECT_DOUBLE_EQ(fused.bytes, expected);
  EXPECT_LT(fused.bytes, bytes / 5);
  EXPECT_LT(fused.seconds, seconds);
  // A reduction in the group sets its pace.
  EXPECT_DOUBLE_EQ(fused.memorySeconds,
                   expected / (h200().hbmBandwidth * h200().efficiencyOf(ir::OpCategory::Reduction)));
  expectRoofline(fused, h200());
  // Neither order nor repeats in the span matter.
  auto shuffled = chain;
  std::reverse(shuffled.begin(), shuffled.end());
  shuffled.push_back(chain.front());
  EXPECT_DOUBLE_EQ(analysis::groupCost(graph(), shuffled, h200()).seconds, fused.seconds);
}

TEST_F(CostModel, GroupedGatherReadsOnlyTheRowsItGathers) {
  // embedding reads 2048 rows of the 1 GiB table primals_2, indexed by primals_1 (i64 [1, 2048]).
  const auto group = nodes({"embedding", "convert_element_type_4"});
  const NodeCost c = analysis::groupCost(graph(), group, h200());
  const double rows = 2.0 * 2048 * 4096;
  // rows read + indices + embedding written (saved, and read by add_6) + its f32 copy (read by pow_1).
  EXPECT_DOUBLE_EQ(c.bytes, rows + 8.0 * 2048 + rows + 4.0 * 2048 * 4096);
  EXPECT_LT(c.bytes, bytesOf(node("primals_2")) / 10);
}

TEST_F(CostModel, SingleKernelGroupCostsWhatTheNodeCosts) {
  for (const char* name : {"mm", "mm_1", "mul_3", "mean"}) {
    SCOPED_TRACE(name);
    const NodeId id = node(name);
    const NodeCost alone = analysis::nodeCost(graph(), id, h200());
    const NodeCost group = analysis::groupCost(graph(), std::span(&id, 1), h200());
    EXPECT_DOUBLE_EQ(group.flops, alone.flops);
    EXPECT_DOUBLE_EQ(group.bytes, alone.bytes);
    EXPECT_DOUBLE_EQ(group.seconds, alone.seconds);
  }
}

TEST_F(CostModel, EfficiencyScalesTheCeilings) {
  hw::HwProfile slow = h200();
  slow.efficiency[static_cast<size_t>(ir::OpCategory::Matmul)] = 0.5;
  const NodeCost base = analysis::nodeCost(graph(), node("mm"), h200());
  const NodeCost halved = analysis::nodeCost(graph(), node("mm"), slow);
  EXPECT_DOUBLE_EQ(halved.computeSeconds, 2 * base.computeSeconds);
  EXPECT_DOUBLE_EQ(halved.memorySeconds, 2 * base.memorySeconds);
  // A slower card prices the same node higher.
  EXPECT_GT(analysis::nodeCost(graph(), node("mm"), hw::resolveHwProfile("a100")).seconds, base.seconds);
}

TEST_F(CostModel, NodeSecondsMatchesNodeCostForEveryNode) {
  const std::vector<double> seconds = analysis::nodeSeconds(graph(), h200());
  ASSERT_EQ(seconds.size(), graph().size());
  size_t kernels = 0;
  for (NodeId id = 0; id < graph().size(); ++id) {
    const NodeCost c = analysis::nodeCost(graph(), id, h200());
    EXPECT_EQ(seconds[id], c.seconds) << graph().name(id);
    kernels += c.kernel;
  }
  // The forward (2 Llama-3-8B layers and the LM head, 2048 tokens) is ~4 TFLOP: milliseconds.
  const double total = std::accumulate(seconds.begin(), seconds.end(), 0.0);
  EXPECT_GT(total, 1e-3);
  EXPECT_LT(total, 50e-3);
  EXPECT_GT(kernels, 100u);
}

TEST(CostModelMatrixDtype, FusedLossBackwardMultipliesAtItsOperandsRateNotItsScalarGradients) {
  // The runtime's chunked loss backward takes the fp32 loss gradient first; its three lm_head
  // matmuls run on bf16 h and W, at the bf16 rate.
  constexpr std::string_view text = R"fx(
class GraphModule(torch.nn.Module):
    def forward(self, tangents_1: "f32[]", primals_1: "bf16[4096, 4096]", primals_2: "bf16[128256, 4096]", primals_3: "i64[4096]", getitem_1: "f32[4096]"):
        linear_cross_entropy_backward = torch.ops.lathe.linear_cross_entropy_backward.default(tangents_1, primals_1, primals_2, primals_3, getitem_1, -100, True)
        getitem_2: "bf16[4096, 4096]" = linear_cross_entropy_backward[0]
        getitem_3: "bf16[128256, 4096]" = linear_cross_entropy_backward[1];  linear_cross_entropy_backward = None
        return (getitem_2, getitem_3)
)fx";
  Diagnostics diagnostics;
  const auto graph = io::parseFxText(text, {}, diagnostics);
  ASSERT_NE(graph, nullptr);
  const NodeId backward = graph->find("linear_cross_entropy_backward");
  ASSERT_NE(backward, ir::kNoNode);
  const hw::HwProfile h200 = hw::resolveHwProfile("h200");
  const NodeCost c = analysis::nodeCost(*graph, backward, h200);
  ASSERT_GT(c.flops, 3 * 2.0 * 4096 * 128256 * 4096);
  EXPECT_DOUBLE_EQ(c.computeSeconds, c.flops / (h200.flopsBf16 * h200.efficiencyOf(ir::OpCategory::Matmul)));
}

TEST(CostModelCollectives, RunOverThePeerLinkAsARing) {
  // An 8 MiB all_reduce of two ranks (the all_gather beside it names the group's size) and an
  // all_gather into 16 MiB: each rank sends (n-1)/n of the payload per pass, two passes for
  // all_reduce, a ring step's latency per step; device memory would have priced them as a copy.
  constexpr std::string_view text = R"fx(
class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "bf16[4194304]", primals_2: "bf16[4194304]"):
        all_reduce: "bf16[4194304]" = torch.ops._c10d_functional.all_reduce.default(primals_1, 'sum', '0')
        wait_tensor: "bf16[4194304]" = torch.ops._c10d_functional.wait_tensor.default(all_reduce);  all_reduce = None
        all_gather_into_tensor: "bf16[8388608]" = torch.ops._c10d_functional.all_gather_into_tensor.default(primals_2, 2, '0')
        wait_tensor_1: "bf16[8388608]" = torch.ops._c10d_functional.wait_tensor.default(all_gather_into_tensor);  all_gather_into_tensor = None
        return (wait_tensor, wait_tensor_1)
)fx";
  Diagnostics diagnostics;
  const auto graph = io::parseFxText(text, {}, diagnostics);
  ASSERT_NE(graph, nullptr);
  const hw::HwProfile h200 = hw::resolveHwProfile("h200");
  ASSERT_GT(h200.peerBandwidth, 0);
  const double mib8 = 8.0 * 1024 * 1024;
  const NodeCost reduce = analysis::nodeCost(*graph, graph->find("all_reduce"), h200);
  EXPECT_DOUBLE_EQ(reduce.linkSeconds, 2 * h200.peerLatency + 2 * 0.5 * mib8 / h200.peerBandwidth);
  EXPECT_DOUBLE_EQ(reduce.seconds, std::max(reduce.linkSeconds, reduce.memorySeconds) + h200.launchOverhead);
  const NodeCost gather = analysis::nodeCost(*graph, graph->find("all_gather_into_tensor"), h200);
  EXPECT_DOUBLE_EQ(gather.linkSeconds, h200.peerLatency + 0.5 * 2 * mib8 / h200.peerBandwidth);
  // Over the link the all_reduce takes longer than an HBM copy of its bytes would.
  EXPECT_GT(reduce.linkSeconds, 3 * reduce.memorySeconds);

  // A profile without a link prices them as device-memory traffic, as before.
  const hw::HwProfile l40s = hw::resolveHwProfile("l40s");
  ASSERT_EQ(l40s.peerBandwidth, 0);
  const NodeCost local = analysis::nodeCost(*graph, graph->find("all_reduce"), l40s);
  EXPECT_EQ(local.linkSeconds, 0);
  EXPECT_DOUBLE_EQ(local.seconds, std::max(local.computeSeconds, local.memorySeconds) + l40s.launchOverhead);
}

}  // namespace

// The CUDA generator on the fusion groups of the real llama / mixtral / gpt2 captures (every group
// generated or refused with a reason, each kind generated, byte-identical output on a rerun) and on
// small graphs whose kernels can be read: broadcast index math, the vector / scalar choice, rows of
// a reduction, and refusals where a kernel would be wrong.
#include "kernels/cuda_codegen.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "analysis/graph_inputs.h"
#include "hw/hw_profile.h"
#include "io/fx/fx_text.h"
#include "ir/op_info.h"
#include "passes/fusion.h"
#include "passes/pipeline.h"
#include "passes/plan_target.h"
#include "passes/split.h"
#include "sample_graphs.h"

using namespace lathe;

namespace {

plan::PlanState fused(const std::shared_ptr<const ir::Graph>& graph, const analysis::GraphInputs& inputs) {
  const passes::PlanTarget target(graph, "test", inputs, hw::HwProfile{});
  return passes::runPipeline(target.context(), passes::parsePipeline("split,fusion")).finalState();
}

struct SampleCase {
  std::string sample, graph;
  size_t minimumGenerated;  // what the generator covers today: a regression fails here
};

class SampleKernels : public ::testing::TestWithParam<SampleCase> {};

TEST_P(SampleKernels, EveryGroupIsGeneratedOrRefusedWithAReason) {
  const SampleCase& c = GetParam();
  const lathe::testing::SampleGraph sample = lathe::testing::loadSampleGraph(c.sample, c.graph);
  const plan::PlanState state = fused(sample.graph, sample.inputs);
  const kernels::KernelSet set = kernels::generateKernels(*sample.graph, state);
  ASSERT_FALSE(state.groups.empty());
  EXPECT_EQ(set.kernels.size() + set.notGenerated.size(), state.groups.size());
  EXPECT_GE(set.kernels.size(), c.minimumGenerated);
  std::set<int32_t> seen;
  std::set<std::string> kinds, names;
  for (const kernels::GeneratedKernel& k : set.kernels) {
    EXPECT_TRUE(seen.insert(k.group).second);
    EXPECT_TRUE(names.insert(k.name).second) << k.name;
    kinds.insert(k.kind);
    const plan::FusionGroup& group = state.groups.at(static_cast<size_t>(k.group));
    EXPECT_EQ(k.kind, group.kind);
    EXPECT_EQ(k.fx.size(), group.nodes.size());
    EXPECT_FALSE(k.outputs.empty()) << k.name;
    EXPECT_NE(k.source.find("extern \"C\" int " + k.launch +
                            "(void* const* outputs, const void* const* inputs, "
                            "const int64_t* symbols, void* stream)"),
              std::string::npos)
        << k.name;
    EXPECT_NE(k.source.find("__global__"), std::string::npos);
    EXPECT_GT(k.bytes, 0u);
    EXPECT_GT(k.config.grid, 0);
    EXPECT_GT(k.config.block, 0);
    // The FX lines assign every node of the group, outputs included, over the inputs' names.
    std::set<std::string> assigned;
    for (const std::string& line : k.fx) assigned.insert(line.substr(0, line.find(" = ")));
    for (const kernels::TensorSpec& out : k.outputs) EXPECT_TRUE(assigned.contains(out.name)) << out.name;
    for (const kernels::TensorSpec& in : k.inputs) EXPECT_FALSE(assigned.contains(in.name)) << in.name;
  }
  for (const kernels::NotGenerated& n : set.notGenerated) {
    EXPECT_TRUE(seen.insert(n.group).second);
    EXPECT_FALSE(n.reason.empty());
  }
  EXPECT_TRUE(kinds.contains("pointwise"));
  EXPECT_TRUE(kinds.contains("reduction"));
}

TEST_P(SampleKernels, SamePlanGivesByteIdenticalSources) {
  const SampleCase& c = GetParam();
  const lathe::testing::SampleGraph sample = lathe::testing::loadSampleGraph(c.sample, c.graph);
  const plan::PlanState state = fused(sample.graph, sample.inputs);
  const kernels::KernelSet a = kernels::generateKernels(*sample.graph, state);
  const kernels::KernelSet b = kernels::generateKernels(*sample.graph, state);
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  for (size_t k = 0; k < a.kernels.size(); ++k) EXPECT_EQ(a.kernels[k].source, b.kernels[k].source);
}

INSTANTIATE_TEST_SUITE_P(
    Captures, SampleKernels,
    ::testing::Values(SampleCase{"captures/llama3_8b_2l_train.log.gz", "0/0:aot_joint_graph", 47},
                      SampleCase{"captures/mixtral_2l_train.log.gz", "0/0:aot_joint_graph", 60},
                      SampleCase{"captures/gpt2_train.log.gz", "1/0_1:aot_joint_graph", 231},
                      SampleCase{"captures/llama3_8b_2l_infer.log.gz", "0/0:aot_inference_graph", 14},
                      SampleCase{"captures/mixtral_2l_infer.log.gz", "0/0:aot_inference_graph", 24},
                      SampleCase{"captures/gpt2_infer.log.gz", "0/0:aot_inference_graph", 39}));

TEST(SampleKernels, RmsNormIsOneRowReductionWithItsEpilogue) {
  const lathe::testing::SampleGraph sample =
      lathe::testing::loadSampleGraph("captures/llama3_8b_2l_train.log.gz", "0/0:aot_joint_graph");
  const plan::PlanState state = fused(sample.graph, sample.inputs);
  const kernels::KernelSet set = kernels::generateKernels(*sample.graph, state);
  const kernels::GeneratedKernel* rms = nullptr;
  for (const kernels::GeneratedKernel& k : set.kernels) {
    if (k.name.ends_with("_mean")) rms = &k;
  }
  ASSERT_NE(rms, nullptr);
  EXPECT_EQ(rms->kind, "reduction");
  EXPECT_EQ(rms->config.grid, 2048);  // one block per token
  EXPECT_NE(rms->source.find("lathe::block_reduce(acc, lathe::Sum(), 0.0f)"), std::string::npos);
  EXPECT_NE(rms->source.find("rsqrtf("), std::string::npos);
  EXPECT_NE(rms->source.find("acc / 4096.0f"), std::string::npos);  // the mean over the hidden size
  // It gathers 2048 rows of the 128256 x 4096 embedding table: those count, not the 1 GiB table.
  EXPECT_GT(rms->bytes, 2048u * 4096 * 2);
  EXPECT_LT(rms->bytes, 256u << 20);
}

// torch.export keeps softmax and layer_norm whole: the fusion pass's "normalization" groups.
TEST(SampleKernels, NormalizationGroupsOfExportedProgramsAreGenerated) {
  for (const auto& [sample, normalizations] :
       {std::pair{"pt2/gpt2_tiny.pt2", 5}, std::pair{"pt2/mixtral_2l_tiny.pt2", 2}}) {
    const lathe::testing::SampleGraph g = lathe::testing::loadSampleGraph(sample, "model:exported_program");
    const plan::PlanState state = fused(g.graph, g.inputs);
    const kernels::KernelSet set = kernels::generateKernels(*g.graph, state);
    int generated = 0;
    for (const kernels::GeneratedKernel& k : set.kernels) {
      if (k.kind != "normalization") continue;
      ++generated;
      const bool softmax = k.source.find("lathe::online_add(red_max, red_sum, ") != std::string::npos;
      const bool layerNorm = k.source.find("const float red_rstd = rsqrtf(acc2 / ") != std::string::npos;
      EXPECT_TRUE(softmax != layerNorm) << k.name;
    }
    EXPECT_EQ(generated, normalizations) << sample;
  }
}

// ------------------------------------------------------------------------------------------------
// Small graphs whose kernels are read line by line.

std::shared_ptr<ir::Graph> parse(std::string_view text) {
  Diagnostics diagnostics;
  auto graph = io::parseFxText(text, {}, diagnostics);
  if (graph == nullptr || diagnostics.count(Severity::Warning) != 0)
    throw std::runtime_error("test graph does not parse");
  return graph;
}

// One group of every call node of the graph.
kernels::KernelSet generateOne(const ir::Graph& graph, const std::string& kind) {
  plan::PlanState state = plan::PlanState::empty(graph.size());
  plan::FusionGroup group;
  group.id = 0;
  group.kind = kind;
  for (ir::NodeId node = 0; node < graph.size(); ++node) {
    const ir::Node& n = graph.node(node);
    if (n.kind != ir::NodeKind::CallFunction) continue;
    group.nodes.push_back(node);
    const ir::OpCategory category = ir::lookupOp(graph.target(node)).category;
    if (category == ir::OpCategory::Reduction || category == ir::OpCategory::Normalization) group.anchor = node;
  }
  if (group.anchor == ir::kNoNode) group.anchor = group.nodes.front();
  state.groups.push_back(group);
  return kernels::generateKernels(graph, state);
}

constexpr std::string_view kBroadcast = R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "bf16[4, 6, 8][48, 8, 1]cuda:0", w: "bf16[8][1]cuda:0", c: "f32[4, 1, 1][1, 1, 1]cuda:0"):
        mul: "bf16[4, 6, 8][48, 8, 1]cuda:0" = torch.ops.aten.mul.Tensor(x, w)
        add: "f32[4, 6, 8][48, 8, 1]cuda:0" = torch.ops.aten.add.Tensor(mul, c)
        return (add,)
)";

TEST(GeneratedKernels, BroadcastOperandsAreIndexedByTheirOwnDimensions) {
  const auto graph = parse(kBroadcast);
  const kernels::KernelSet set = generateOne(*graph, "pointwise");
  ASSERT_EQ(set.kernels.size(), 1u) << (set.notGenerated.empty() ? "" : set.notGenerated[0].reason);
  const std::string& source = set.kernels[0].source;
  EXPECT_NE(source.find("const long long j_1_8 = static_cast<unsigned>(j) % 8u;"), std::string::npos);
  EXPECT_NE(source.find("const long long j_48_4 = (static_cast<unsigned>(j) / 48u);"), std::string::npos);
  EXPECT_NE(source.find("lathe::ld(in1, j_1_8)"), std::string::npos);   // w[8]: the innermost index
  EXPECT_NE(source.find("lathe::ld(in2, j_48_4)"), std::string::npos);  // c[4, 1, 1]: the outer index
  EXPECT_EQ(source.find("lathe::round_bf16("), std::string::npos);      // mul stays fp32 in the kernel
  ASSERT_EQ(set.kernels[0].inputs.size(), 3u);
  EXPECT_EQ(set.kernels[0].inputs[2].strides, (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(set.kernels[0].outputs.size(), 1u);
  EXPECT_EQ(set.kernels[0].bytes, 4u * 6 * 8 * 2 + 8 * 2 + 4 * 4 + 4u * 6 * 8 * 4);
}

TEST(GeneratedKernels, DenseTensorsGetSixteenByteAccessesWithATailAndAnAlignmentCheck) {
  const auto graph = parse(kBroadcast);
  const kernels::GeneratedKernel k = generateOne(*graph, "pointwise").kernels.at(0);
  // x (bf16) is read in the loop's order, add (f32) written in it: 16 bytes of f32 = 4 elements.
  EXPECT_EQ(k.vectorWidth, 4);
  EXPECT_NE(k.source.find("lathe::Pack<__nv_bfloat16, 4> vin0"), std::string::npos);
  EXPECT_NE(k.source.find("lathe::Pack<float, 4> vout0"), std::string::npos);
  EXPECT_NE(k.source.find("lathe::aligned(in0, 4) && lathe::aligned(out0, 4)"), std::string::npos);
  EXPECT_NE(k.source.find("lathe::ld(in1, j_1_8)"), std::string::npos);  // the broadcast stays scalar
  // 192 elements: 48 chunks of 4, no tail; the scalar kernel runs the rest or everything.
  EXPECT_NE(k.source.find("_vec, 1, 256, s, in0, in1, in2, out0, 48LL)"), std::string::npos);
  EXPECT_NE(k.source.find("if (done < 192LL)"), std::string::npos);
}

TEST(GeneratedKernels, TransposedInputsAreReadWithTheirStrides) {
  // The output is row-major, the input column-major: the input is read element by element with
  // its strides; only the output gets vector stores.
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[8, 6][1, 8]cuda:0"):
        neg: "f32[8, 6][6, 1]cuda:0" = torch.ops.aten.neg.default(x)
        exp: "f32[8, 6][6, 1]cuda:0" = torch.ops.aten.exp.default(neg)
        return (exp,)
)");
  const kernels::GeneratedKernel k = generateOne(*graph, "pointwise").kernels.at(0);
  EXPECT_EQ(k.vectorWidth, 4);
  EXPECT_EQ(k.source.find("vin0"), std::string::npos);
  EXPECT_NE(k.source.find("lathe::Pack<float, 4> vout0"), std::string::npos);
  EXPECT_NE(k.source.find("lathe::ld(in0, j_6_8 + j_1_6 * 8LL)"), std::string::npos) << k.source;
}

TEST(GeneratedKernels, PermutedDenseTensorsAreWalkedInMemoryOrder) {
  // RoPE's q: [batch, heads, seq, dim] viewed over a [batch, seq, heads, dim] buffer. The kernel
  // walks the output in memory order, so the tensors laid out as it is get 16-byte accesses.
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, q: "bf16[1, 4, 8, 16][512, 16, 64, 1]cuda:0", cos: "bf16[1, 1, 8, 16][128, 128, 16, 1]cuda:0"):
        mul: "bf16[1, 4, 8, 16][512, 16, 64, 1]cuda:0" = torch.ops.aten.mul.Tensor(q, cos)
        return (mul,)
)");
  const kernels::GeneratedKernel k = generateOne(*graph, "pointwise").kernels.at(0);
  EXPECT_EQ(k.vectorWidth, 8);
  EXPECT_NE(k.source.find("lathe::Pack<__nv_bfloat16, 8> vin0"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("lathe::Pack<__nv_bfloat16, 8> vout0"), std::string::npos);
  // The head is the middle of the walk (stride 16 in memory), the position the outer part.
  EXPECT_NE(k.source.find("const long long j_16_4 = (static_cast<unsigned>(j) / 16u) % 4u;"), std::string::npos);
  EXPECT_NE(k.source.find("lathe::ld(in1, j_64_8 * 16LL + j_1_16)"), std::string::npos);
}

TEST(GeneratedKernels, ReductionEpilogueRunsOverTheRowItReduced) {
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[3, 5, 64][320, 64, 1]cuda:0"):
        amax: "f32[3, 5, 1][5, 1, 1]cuda:0" = torch.ops.aten.amax.default(x, [-1], True)
        sub: "f32[3, 5, 64][320, 64, 1]cuda:0" = torch.ops.aten.sub.Tensor(x, amax)
        exp: "f32[3, 5, 64][320, 64, 1]cuda:0" = torch.ops.aten.exp.default(sub)
        return (exp,)
)");
  const kernels::KernelSet set = generateOne(*graph, "reduction");
  ASSERT_EQ(set.kernels.size(), 1u) << set.notGenerated.at(0).reason;
  const kernels::GeneratedKernel& k = set.kernels[0];
  EXPECT_EQ(k.config.grid, 15);
  EXPECT_EQ(k.config.block, 64);
  EXPECT_NE(k.source.find("lathe::block_reduce(acc, lathe::Max(), lathe::Identity<float>::lowest())"),
            std::string::npos);
  EXPECT_NE(k.source.find("const long long j = row * 64LL + k;"), std::string::npos);
  EXPECT_NE(k.source.find("lathe::fast_exp("), std::string::npos);
  // The epilogue walks the row from its end: the elements the first pass read last come first.
  EXPECT_NE(k.source.find("for (long long k = 64LL - 1 - threadIdx.x; k >= 0; k -= blockDim.x) {"), std::string::npos);
}

TEST(GeneratedKernels, TrailingRowsAreReadAndWrittenSixteenBytesAtATime) {
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "bf16[4, 4096][4096, 1]cuda:0", w: "bf16[4096][1]cuda:0"):
        convert_element_type: "f32[4, 4096][4096, 1]cuda:0" = torch.ops.prims.convert_element_type.default(x, torch.float32)
        pow_1: "f32[4, 4096][4096, 1]cuda:0" = torch.ops.aten.pow.Tensor_Scalar(convert_element_type, 2)
        mean: "f32[4, 1][1, 1]cuda:0" = torch.ops.aten.mean.dim(pow_1, [-1], True)
        add: "f32[4, 1][1, 1]cuda:0" = torch.ops.aten.add.Tensor(mean, 1e-06)
        rsqrt: "f32[4, 1][1, 1]cuda:0" = torch.ops.aten.rsqrt.default(add)
        mul: "f32[4, 4096][4096, 1]cuda:0" = torch.ops.aten.mul.Tensor(convert_element_type, rsqrt)
        convert_element_type_1: "bf16[4, 4096][4096, 1]cuda:0" = torch.ops.prims.convert_element_type.default(mul, torch.bfloat16)
        mul_1: "bf16[4, 4096][4096, 1]cuda:0" = torch.ops.aten.mul.Tensor(w, convert_element_type_1)
        return (mul_1,)
)");
  const kernels::KernelSet set = generateOne(*graph, "reduction");
  ASSERT_EQ(set.kernels.size(), 1u) << set.notGenerated.at(0).reason;
  const kernels::GeneratedKernel& k = set.kernels[0];
  EXPECT_EQ(k.vectorWidth, 8);
  // Both passes over the row preload x in chunks of 8 bf16; the output is stored the same way.
  size_t preloads = 0;
  for (size_t at = k.source.find("lathe::Pack<__nv_bfloat16, 8> vin0 ="); at != std::string::npos;
       at = k.source.find("lathe::Pack<__nv_bfloat16, 8> vin0 =", at + 1)) {
    ++preloads;
  }
  EXPECT_EQ(preloads, 2u);
  EXPECT_NE(k.source.find("c < 4096LL / 8; c += blockDim.x"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("lathe::Pack<__nv_bfloat16, 8> vout0;"), std::string::npos);
  // w is broadcast over the rows: read element by element, no alignment asked of it.
  EXPECT_NE(k.source.find("if (lathe::aligned(in0, 8) && lathe::aligned(out0, 8)) {"), std::string::npos);
  EXPECT_NE(k.source.find("LATHE_LAUNCH(lathe_g0_mean_vec, 4, 512, s, "), std::string::npos);
}

TEST(GeneratedKernels, ReducedValueReadAcrossRowsIsRefused) {
  // The transpose makes element (i, j) of the result read the maximum of row j: not the row the
  // block reduced. A kernel would be wrong, so there is none.
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[128, 128][128, 1]cuda:0"):
        amax: "f32[128, 1][1, 1]cuda:0" = torch.ops.aten.amax.default(x, [-1], True)
        sub: "f32[128, 128][128, 1]cuda:0" = torch.ops.aten.sub.Tensor(x, amax)
        permute: "f32[128, 128][1, 128]cuda:0" = torch.ops.aten.permute.default(sub, [1, 0])
        mul: "f32[128, 128][1, 128]cuda:0" = torch.ops.aten.mul.Tensor(permute, 2.0)
        return (mul,)
)");
  const kernels::KernelSet set = generateOne(*graph, "reduction");
  EXPECT_TRUE(set.kernels.empty());
  ASSERT_EQ(set.notGenerated.size(), 1u);
  EXPECT_NE(set.notGenerated[0].reason.find("reads the reduced value across rows"), std::string::npos);
}

TEST(GeneratedKernels, ShortRowsReadAcrossRowsAreReducedInsideEachElement) {
  // Grouped-query attention's backward: the sum over the 4 query heads of each KV head, then a
  // transpose. Each output element sums its own 4 values.
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, g: "bf16[1, 2, 4, 16, 8][512, 256, 64, 8, 1]cuda:0"):
        sum_1: "bf16[1, 2, 1, 16, 8][256, 128, 128, 8, 1]cuda:0" = torch.ops.aten.sum.dim_IntList(g, [2], True)
        squeeze: "bf16[1, 2, 16, 8][256, 128, 8, 1]cuda:0" = torch.ops.aten.squeeze.dim(sum_1, 2)
        permute: "bf16[1, 16, 2, 8][256, 8, 128, 1]cuda:0" = torch.ops.aten.permute.default(squeeze, [0, 2, 1, 3])
        clone: "bf16[1, 16, 2, 8][256, 16, 8, 1]cuda:0" = torch.ops.aten.clone.default(permute, memory_format = torch.contiguous_format)
        return (clone,)
)");
  const kernels::KernelSet set = generateOne(*graph, "reduction");
  ASSERT_EQ(set.kernels.size(), 1u) << set.notGenerated.at(0).reason;
  const std::string& source = set.kernels[0].source;
  EXPECT_EQ(source.find("block_reduce"), std::string::npos);
  EXPECT_NE(source.find(" < 4LL; ++"), std::string::npos);
  // Output element (0, s, h, d) sums g[0, h, 0..3, s, d]: head from dimension 2 of the output.
  EXPECT_NE(source.find("lathe::ld(in0, j_8_2 * 256LL + "), std::string::npos) << source;
}

TEST(GeneratedKernels, ColumnReductionReadsEachColumnWithItsStride) {
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, g: "bf16[1, 32, 24][768, 24, 1]cuda:0"):
        convert_element_type: "f32[1, 32, 24][768, 24, 1]cuda:0" = torch.ops.prims.convert_element_type.default(g, torch.float32)
        sum_1: "f32[24][1]cuda:0" = torch.ops.aten.sum.dim_IntList(convert_element_type, [0, 1])
        return (sum_1,)
)");
  const kernels::KernelSet set = generateOne(*graph, "reduction");
  ASSERT_EQ(set.kernels.size(), 1u) << set.notGenerated.at(0).reason;
  const kernels::GeneratedKernel& k = set.kernels[0];
  // Few columns: strips of 8 (3 blocks), each block's 128 groups of 8 threads take every 128th
  // row: a warp reads consecutive columns of 4 rows, not one column with a stride.
  EXPECT_NE(k.source.find("LATHE_LAUNCH(lathe_g0_sum_1_cols, 3, 1024, s, "), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("const long long row = static_cast<long long>(blockIdx.x) * 8 + threadIdx.x % 8u;"),
            std::string::npos);
  EXPECT_NE(k.source.find("for (long long k = group; k < 32LL; k += groups)"), std::string::npos);
  EXPECT_NE(k.source.find("const long long j = k * 24LL + row;"), std::string::npos);
  EXPECT_NE(k.source.find("lathe::ld(in0, j)"), std::string::npos);
  // The warps' partial sums are combined in a fixed order: no atomics, no block per column.
  EXPECT_NE(k.source.find("__shared__ float partial[128][8];"), std::string::npos);
  EXPECT_NE(k.source.find("partial[group][threadIdx.x % 8u] = acc;"), std::string::npos);
  EXPECT_EQ(k.source.find("atomic"), std::string::npos);
  EXPECT_EQ(k.source.find("block_reduce"), std::string::npos);
  // Where the pointers allow, each thread takes 8 consecutive columns (16 bytes of the bf16
  // operand, 32 of the fp32 result) in a strip of 2 such threads: 2 blocks, each row of a strip
  // whole 32-byte sectors.
  EXPECT_EQ(k.config.grid, 2);
  EXPECT_EQ(k.config.block, 1024);
  EXPECT_EQ(k.vectorWidth, 8);
  EXPECT_NE(
      k.source.find("if (true && lathe::aligned(in0, 8)) {\n    LATHE_LAUNCH(lathe_g0_sum_1_cols_vec, 2, 1024, s, "),
      std::string::npos);
  EXPECT_NE(k.source.find("const long long col0 = (static_cast<long long>(blockIdx.x) * 2 + lane) * 8;"),
            std::string::npos);
  EXPECT_NE(k.source.find("const long long base = k * 24LL + col0;"), std::string::npos);
  EXPECT_NE(k.source.find("vin0 = *reinterpret_cast<const lathe::Pack<__nv_bfloat16, 8>*>(in0 + base);"),
            std::string::npos);
  EXPECT_NE(k.source.find("acc[e] = lathe::Sum()(acc[e], "), std::string::npos);
  EXPECT_NE(k.source.find("__shared__ float partial[512][16];"), std::string::npos);
}

TEST(GeneratedKernels, OnlyConversionsRoundInsideAGroup) {
  // bf16 ops keep fp32 values between them (as Inductor's kernels do); the program's own
  // conversion to bf16 rounds, and every store rounds through lathe::down.
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[64][1]cuda:0", w: "bf16[64][1]cuda:0"):
        convert_element_type: "bf16[64][1]cuda:0" = torch.ops.prims.convert_element_type.default(x, torch.bfloat16)
        mul: "bf16[64][1]cuda:0" = torch.ops.aten.mul.Tensor(convert_element_type, w)
        add: "bf16[64][1]cuda:0" = torch.ops.aten.add.Tensor(mul, w)
        return (add,)
)");
  const kernels::KernelSet set = generateOne(*graph, "pointwise");
  ASSERT_EQ(set.kernels.size(), 1u) << set.notGenerated.at(0).reason;
  const std::string& source = set.kernels[0].source;
  const std::string scalar = source.substr(0, source.find("_vec("));
  size_t rounds = 0;
  for (size_t at = scalar.find("lathe::round_bf16("); at != std::string::npos;
       at = scalar.find("lathe::round_bf16(", at + 1))
    ++rounds;
  EXPECT_EQ(rounds, 1u) << scalar;
  EXPECT_NE(scalar.find("out0[j] = lathe::down<__nv_bfloat16>("), std::string::npos);
}

TEST(GeneratedKernels, ChunksInOneRowLoadSharedOperandsOnceAndRunsAsPacks) {
  // RoPE's shape: a table broadcast over heads, a cat of two halves along the innermost
  // dimension, a per-row scale. Each 8-element chunk lies in one row of 32: the table is read as
  // one pack, the scale once per chunk, and the cat's half is chosen per chunk, its pack loaded
  // only by the chunks that take that half.
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, neg: "bf16[1, 4, 16, 16][1024, 256, 16, 1]cuda:0", half: "bf16[1, 4, 16, 16][1024, 256, 16, 1]cuda:0", q: "bf16[1, 4, 16, 32][2048, 512, 32, 1]cuda:0", cos: "bf16[16, 32][32, 1]cuda:0", scale: "bf16[1, 4, 16, 1][64, 16, 1, 1]cuda:0"):
        cat: "bf16[1, 4, 16, 32][2048, 512, 32, 1]cuda:0" = torch.ops.aten.cat.default([neg, half], -1)
        mul: "bf16[1, 4, 16, 32][2048, 512, 32, 1]cuda:0" = torch.ops.aten.mul.Tensor(q, cos)
        mul_1: "bf16[1, 4, 16, 32][2048, 512, 32, 1]cuda:0" = torch.ops.aten.mul.Tensor(cat, cos)
        add: "bf16[1, 4, 16, 32][2048, 512, 32, 1]cuda:0" = torch.ops.aten.add.Tensor(mul, mul_1)
        mul_2: "bf16[1, 4, 16, 32][2048, 512, 32, 1]cuda:0" = torch.ops.aten.mul.Tensor(add, scale)
        return (mul_2,)
)");
  const kernels::KernelSet set = generateOne(*graph, "pointwise");
  ASSERT_EQ(set.kernels.size(), 1u) << set.notGenerated.at(0).reason;
  const std::string& source = set.kernels[0].source;
  const std::string vec = source.substr(source.find("_vec("));
  EXPECT_NE(vec.find("const long long jb_1_32 = static_cast<unsigned>(base) % 32u;"), std::string::npos) << vec;
  EXPECT_NE(vec.find("*reinterpret_cast<const lathe::Pack<__nv_bfloat16, 8>*>(in3 + jb_32_16 * 32LL + jb_1_32);"),
            std::string::npos);
  EXPECT_NE(vec.find("= lathe::ld(in4, jb_512_4 * 16LL + jb_32_16);"), std::string::npos) << vec;
  EXPECT_NE(vec.find("if ((jb_1_32 < 16LL)) "), std::string::npos);
  EXPECT_NE(vec.find("if (jb_1_32 < 16LL) {"), std::string::npos);
  EXPECT_EQ(vec.find("lathe::ld(in3"), std::string::npos);  // no per-element table load left
  EXPECT_EQ(vec.find("lathe::ld(in0"), std::string::npos);
  // The packs' pointers join the alignment check; the scalar kernel keeps per-element loads.
  EXPECT_NE(source.find("lathe::aligned(in3, 8)"), std::string::npos);
  EXPECT_NE(source.find("lathe::aligned(in0, 8)"), std::string::npos);
  EXPECT_NE(source.find("lathe::ld(in3, "), std::string::npos);
}

TEST(GeneratedKernels, ColumnChunksNeedWholeChunksPerRow) {
  // 30 columns of fp32: no whole 16-byte chunk per thread, so only the column-per-thread kernel.
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, g: "f32[64, 30][30, 1]cuda:0"):
        sum_1: "f32[30][1]cuda:0" = torch.ops.aten.sum.dim_IntList(g, [0])
        return (sum_1,)
)");
  const kernels::KernelSet set = generateOne(*graph, "reduction");
  ASSERT_EQ(set.kernels.size(), 1u) << set.notGenerated.at(0).reason;
  EXPECT_EQ(set.kernels[0].vectorWidth, 1);
  EXPECT_EQ(set.kernels[0].source.find("_cols_vec"), std::string::npos) << set.kernels[0].source;
}

TEST(GeneratedKernels, WideColumnReductionsGetOneStripPerBlockAndFewerWarps) {
  // An RMSNorm weight gradient: the mean over 512 tokens of 16384 features. 512 strips of 32
  // columns fill the GPU with 8 warps each; the mean divides the combined sum once.
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, g: "bf16[2, 256, 16384][4194304, 16384, 1]cuda:0", x: "bf16[2, 256, 16384][4194304, 16384, 1]cuda:0"):
        mul: "bf16[2, 256, 16384][4194304, 16384, 1]cuda:0" = torch.ops.aten.mul.Tensor(g, x)
        mean: "bf16[1, 1, 16384][16384, 16384, 1]cuda:0" = torch.ops.aten.mean.dim(mul, [0, 1], True)
        return (mean,)
)");
  const kernels::KernelSet set = generateOne(*graph, "reduction");
  ASSERT_EQ(set.kernels.size(), 1u) << set.notGenerated.at(0).reason;
  const kernels::GeneratedKernel& k = set.kernels[0];
  // The vector kernel: 8 columns (16 bytes) per thread, strips of 8 threads (64 columns): 256
  // strips, fewer than two blocks per SM, so the 512 rows are split in two: 512 blocks of 8
  // warps. The last block of a strip to finish adds both halves, in split order.
  EXPECT_EQ(k.config.grid, 512);
  EXPECT_EQ(k.config.block, 256);
  EXPECT_EQ(k.vectorWidth, 8);
  EXPECT_NE(k.source.find("__device__ float lathe_g0_mean_partials[32768];"), std::string::npos);
  EXPECT_NE(k.source.find("__device__ unsigned lathe_g0_mean_arrivals[2048];"), std::string::npos);
  EXPECT_NE(k.source.find("const long long strip = blockIdx.x % 256u, split = blockIdx.x / 256u;"), std::string::npos);
  EXPECT_NE(k.source.find("for (long long k = split * 256LL + group; k < row_end; k += groups)"), std::string::npos);
  EXPECT_NE(k.source.find("if (atomicAdd(&lathe_g0_mean_arrivals[strip * 8 + lane], 1u) != 1u) return;"),
            std::string::npos);
  EXPECT_NE(k.source.find("for (long long from = 0; from < 2LL; ++from) {"), std::string::npos);
  EXPECT_NE(k.source.find("lathe_g0_mean_arrivals[strip * 8 + lane] = 0u;"), std::string::npos);
  EXPECT_NE(k.source.find("lathe::round_bf16(acc[e] / 512.0f)"), std::string::npos);
  // The fallback for unaligned pointers: 512 strips of 32 columns, 8 warps each.
  EXPECT_NE(k.source.find("LATHE_LAUNCH(lathe_g0_mean_cols, 512, 256, s, "), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("const long long j = k * 16384LL + row;"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("threadIdx.x % 32u;"), std::string::npos);
  EXPECT_NE(k.source.find("lathe::ld(in0, j)"), std::string::npos);
  EXPECT_NE(k.source.find("lathe::ld(in1, j)"), std::string::npos);
  EXPECT_NE(k.source.find("lathe::round_bf16(acc / 512.0f)"), std::string::npos);
}

TEST(GeneratedKernels, ColumnKernelsStoreTheElementOutputsThatDoNotReadTheSum) {
  // RMSNorm's backward: the weight gradient (a column sum) beside the input gradient's pieces,
  // which are stored by the thread that visits their element. A member that reads the sum cannot
  // be stored there (its column is not reduced yet): that group keeps the kernel of a block per row.
  constexpr std::string_view kNormBackward = R"(class GraphModule(torch.nn.Module):
    def forward(self, g: "bf16[1, 64, 256][16384, 256, 1]cuda:0", x: "bf16[1, 64, 256][16384, 256, 1]cuda:0", w: "bf16[256][1]cuda:0"):
        mul: "bf16[1, 64, 256][16384, 256, 1]cuda:0" = torch.ops.aten.mul.Tensor(g, x)
        sum_7: "bf16[1, 1, 256][256, 256, 1]cuda:0" = torch.ops.aten.sum.dim_IntList(mul, [0, 1], True)
        mul_1: "bf16[1, 64, 256][16384, 256, 1]cuda:0" = torch.ops.aten.mul.Tensor(g, w)
        OUTPUT
        return (sum_7, RESULT)
)";
  auto withOutput = [&](const std::string& output, const std::string& result) {
    std::string text(kNormBackward);
    text.replace(text.find("OUTPUT"), 6, output);
    text.replace(text.find("RESULT"), 6, result);
    return text;
  };
  const auto graph = parse(
      withOutput(R"(mul_2: "bf16[1, 64, 256][16384, 256, 1]cuda:0" = torch.ops.aten.mul.Tensor(mul_1, x))", "mul_2"));
  const kernels::KernelSet set = generateOne(*graph, "reduction");
  ASSERT_EQ(set.kernels.size(), 1u) << set.notGenerated.at(0).reason;
  const std::string& source = set.kernels[0].source;
  EXPECT_NE(source.find("_cols, 32, 1024, s, "), std::string::npos) << source;
  EXPECT_NE(source.find("out1[j] = "), std::string::npos);
  EXPECT_NE(source.find("vout1.v[e] = "), std::string::npos);  // the vector kernel's pack of 8
  EXPECT_NE(source.find("out0[row] = "), std::string::npos);

  const auto after = parse(withOutput(
      R"(mul_2: "bf16[1, 64, 256][16384, 256, 1]cuda:0" = torch.ops.aten.mul.Tensor(mul_1, sum_7))", "mul_2"));
  const kernels::KernelSet refused = generateOne(*after, "reduction");
  for (const kernels::GeneratedKernel& k : refused.kernels) EXPECT_EQ(k.source.find("_cols"), std::string::npos);
}

TEST(GeneratedKernels, ReductionsOverFewElementsRunOneOutputElementPerThread) {
  // Mixtral's sum over the 2 experts of each token: a block of 32 threads per output element
  // would idle 30 of them. Each thread sums its 2 elements; the threads walk the contiguous
  // output dimension, so their loads and stores are consecutive.
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "bf16[64, 2, 512][1024, 512, 1]cuda:0"):
        sum_3: "bf16[64, 512][512, 1]cuda:0" = torch.ops.aten.sum.dim_IntList(x, [1])
        return (sum_3,)
)");
  const kernels::KernelSet set = generateOne(*graph, "reduction");
  ASSERT_EQ(set.kernels.size(), 1u) << set.notGenerated.at(0).reason;
  const kernels::GeneratedKernel& k = set.kernels[0];
  EXPECT_EQ(k.source.find("block_reduce"), std::string::npos);
  EXPECT_EQ(k.config.block, 256);
  EXPECT_EQ(k.vectorWidth, 8);  // the bf16 output stored 16 bytes at a time
  EXPECT_EQ(k.config.grid, 64 * 512 / 8 / 256);
  EXPECT_NE(k.source.find(" < 2LL; ++"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("lathe::ld(in0, j_512_64 * 1024LL + "), std::string::npos);
}

TEST(GeneratedKernels, ShortRowsWithElementOutputsRunAThreadPerRow) {
  // Mixtral's combination of the 2 experts of each token, with the weighted values also read
  // outside the group: a thread per output element loops over its 2 elements, storing each
  // weighted value on the way; consecutive threads take consecutive elements of the last dim.
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "bf16[64, 2, 512][1024, 512, 1]cuda:0", w: "bf16[64, 2, 1][2, 1, 1]cuda:0"):
        mul: "bf16[64, 2, 512][1024, 512, 1]cuda:0" = torch.ops.aten.mul.Tensor(x, w)
        sum_3: "bf16[64, 512][512, 1]cuda:0" = torch.ops.aten.sum.dim_IntList(mul, [1])
        return (mul, sum_3)
)");
  const kernels::KernelSet set = generateOne(*graph, "reduction");
  ASSERT_EQ(set.kernels.size(), 1u) << set.notGenerated.at(0).reason;
  const kernels::GeneratedKernel& k = set.kernels[0];
  EXPECT_EQ(k.config.block, 256);
  EXPECT_EQ(k.config.grid, 64 * 512 / 256);
  EXPECT_EQ(k.source.find("block_reduce"), std::string::npos) << k.source;
  EXPECT_EQ(k.source.find("threadIdx.x == 0"), std::string::npos);
  EXPECT_NE(k.source.find("const long long row = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;"),
            std::string::npos);
  EXPECT_NE(k.source.find("if (row >= 32768LL) return;"), std::string::npos);
  EXPECT_NE(k.source.find("for (long long k = 0; k < 2LL; ++k) {"), std::string::npos);
}

TEST(GeneratedKernels, RouterSoftmaxOverEightExpertsRunsEightLanesPerRow) {
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[2048, 8][8, 1]cuda:0"):
        _softmax: "f32[2048, 8][8, 1]cuda:0" = torch.ops.aten._softmax.default(x, 1, False)
        return (_softmax,)
)");
  const kernels::KernelSet set = generateOne(*graph, "normalization");
  ASSERT_EQ(set.kernels.size(), 1u) << set.notGenerated.at(0).reason;
  const kernels::GeneratedKernel& k = set.kernels[0];
  // A lane per element (16384 lanes: 64 blocks), 8 lanes per row combined by shuffles: a warp
  // reads and writes 4 whole rows, consecutive in memory.
  EXPECT_EQ(k.config.grid, 64);
  EXPECT_EQ(k.config.block, 256);
  EXPECT_NE(k.source.find("const long long row = lane_at / 8, k = lane_at % 8;"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("lathe::online_add(red_max, red_sum, "), std::string::npos);
  EXPECT_NE(k.source.find("lathe::lane_reduce_online<8>(red_max, red_sum);"), std::string::npos);
  EXPECT_EQ(k.source.find("block_reduce_online"), std::string::npos);
  EXPECT_EQ(k.source.find("return;"), std::string::npos);  // every lane reaches the shuffles
}

TEST(GeneratedKernels, ShortRowsRoundUpToAPowerOfTwoLanes) {
  // Rows of 6: 8 lanes per row, the last two of each row idle but in the shuffles.
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "bf16[100, 6][6, 1]cuda:0"):
        convert_element_type: "f32[100, 6][6, 1]cuda:0" = torch.ops.prims.convert_element_type.default(x, torch.float32)
        amax: "f32[100, 1][1, 1]cuda:0" = torch.ops.aten.amax.default(convert_element_type, [-1], True)
        sub: "f32[100, 6][6, 1]cuda:0" = torch.ops.aten.sub.Tensor(convert_element_type, amax)
        return (sub,)
)");
  const kernels::KernelSet set = generateOne(*graph, "reduction");
  ASSERT_EQ(set.kernels.size(), 1u) << set.notGenerated.at(0).reason;
  const kernels::GeneratedKernel& k = set.kernels[0];
  EXPECT_EQ(k.config.grid, 4);  // 800 lanes
  EXPECT_NE(k.source.find("const bool active = row < 100LL && k < 6LL;"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("acc = lathe::lane_reduce<8>(acc, lathe::Max());"), std::string::npos);
}

TEST(GeneratedKernels, ConstantPowersAreMultiplicationsAndSquareRoots) {
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[64][1]cuda:0"):
        pow_1: "f32[64][1]cuda:0" = torch.ops.aten.pow.Tensor_Scalar(x, 3.0)
        pow_2: "f32[64][1]cuda:0" = torch.ops.aten.pow.Tensor_Scalar(x, -0.5)
        pow_3: "f32[64][1]cuda:0" = torch.ops.aten.pow.Tensor_Scalar(x, 2.0)
        pow_4: "f32[64][1]cuda:0" = torch.ops.aten.pow.Tensor_Scalar(x, -2)
        pow_5: "f32[64][1]cuda:0" = torch.ops.aten.pow.Tensor_Scalar(x, 1.5)
        return (pow_1, pow_2, pow_3, pow_4, pow_5)
)");
  const kernels::KernelSet set = generateOne(*graph, "pointwise");
  ASSERT_EQ(set.kernels.size(), 1u) << set.notGenerated.at(0).reason;
  const std::string& source = set.kernels[0].source;
  // Only the exponent that is neither an integer nor ±0.5 keeps powf, in each of the two kernels.
  size_t calls = 0;
  for (size_t at = source.find("powf("); at != std::string::npos; at = source.find("powf(", at + 1)) ++calls;
  EXPECT_EQ(calls, 2u) << source;
  EXPECT_NE(source.find("rsqrtf("), std::string::npos);
  EXPECT_NE(source.find("(v1 * v1 * v1)"), std::string::npos) << source;
  EXPECT_NE(source.find("(1.0f / (v"), std::string::npos);
}

TEST(GeneratedKernels, RandomNumbersAreNotGenerated) {
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "bf16[4, 8][8, 1]cuda:0"):
        rand: "bf16[4, 8][8, 1]cuda:0" = torch.ops.aten.rand.default([4, 8], dtype = torch.bfloat16, device = device(type='cuda', index=0), pin_memory = False)
        gt: "b8[4, 8][8, 1]cuda:0" = torch.ops.aten.gt.Scalar(rand, 0.1)
        mul: "bf16[4, 8][8, 1]cuda:0" = torch.ops.aten.mul.Tensor(gt, x)
        return (mul,)
)");
  const kernels::KernelSet set = generateOne(*graph, "pointwise");
  ASSERT_EQ(set.notGenerated.size(), 1u);
  EXPECT_EQ(set.notGenerated[0].reason, "op aten.rand.default");
}

TEST(GeneratedKernels, ConcatReadsEachPartOnlyInItsOwnRange) {
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, a: "bf16[2, 4][4, 1]cuda:0", b: "bf16[2, 4][4, 1]cuda:0"):
        neg: "bf16[2, 4][4, 1]cuda:0" = torch.ops.aten.neg.default(b)
        cat: "bf16[2, 8][8, 1]cuda:0" = torch.ops.aten.cat.default([neg, a], -1)
        return (cat,)
)");
  const kernels::KernelSet set = generateOne(*graph, "pointwise");
  ASSERT_EQ(set.kernels.size(), 1u) << set.notGenerated.at(0).reason;
  const std::string& source = set.kernels[0].source;
  EXPECT_NE(source.find("if (j_1_8 < 4LL) {"), std::string::npos);
  // b is read first (by neg): input 0; a is input 1, read past the first four columns.
  EXPECT_NE(source.find("lathe::ld(in0, j_8_2 * 4LL + j_1_8)"), std::string::npos);
  EXPECT_NE(source.find("lathe::ld(in1, j_8_2 * 4LL + (j_1_8 - 4LL))"), std::string::npos);
}

TEST(GeneratedKernels, IndexTensorsPickRowsAndWrapNegativeIndices) {
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, table: "bf16[16, 8][8, 1]cuda:0", rows: "i64[6][1]cuda:0"):
        index: "bf16[6, 8][8, 1]cuda:0" = torch.ops.aten.index.Tensor(table, [rows])
        mul: "bf16[6, 8][8, 1]cuda:0" = torch.ops.aten.mul.Tensor(index, 2.0)
        return (mul,)
)");
  const kernels::KernelSet set = generateOne(*graph, "pointwise");
  ASSERT_EQ(set.kernels.size(), 1u) << set.notGenerated.at(0).reason;
  const std::string& source = set.kernels[0].source;
  EXPECT_NE(source.find("const long long v1 = v0 < 0 ? v0 + 16LL : v0;"), std::string::npos) << source;
  EXPECT_NE(source.find("lathe::ld(in0, v1 * 8LL + j_1_8)"), std::string::npos);
}

TEST(GeneratedKernels, ScatterWritesTheValueWhereTheIndexNamesTheElement) {
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, base: "f32[4, 10][10, 1]cuda:0", target: "i64[4, 1][1, 1]cuda:0"):
        scatter: "f32[4, 10][10, 1]cuda:0" = torch.ops.aten.scatter.value(base, 1, target, -1.0)
        mul: "f32[4, 10][10, 1]cuda:0" = torch.ops.aten.mul.Tensor(scatter, 3.0)
        return (mul,)
)");
  const kernels::KernelSet set = generateOne(*graph, "pointwise");
  ASSERT_EQ(set.kernels.size(), 1u) << set.notGenerated.at(0).reason;
  const std::string& source = set.kernels[0].source;
  EXPECT_NE(source.find(" < 1LL; ++"), std::string::npos) << source;
  EXPECT_NE(source.find(" == j_1_10) {"), std::string::npos);
  EXPECT_NE(source.find(" = -1.0f;"), std::string::npos);
}

TEST(GeneratedKernels, CommonHeaderIsTheDeviceHelpersFileByteForByte) {
  std::ifstream in(std::string(LATHE_SOURCE_DIR) + "/kernels/codegen/device/lathe_kernels.cuh", std::ios::binary);
  ASSERT_TRUE(in);
  const std::string file{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_EQ(kernels::commonHeader(), file);
}

TEST(GeneratedKernels, FxLinesRunAsPython) {
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 8][8, 1]cuda:0"):
        var_mean = torch.ops.aten.var_mean.correction(x, [1], correction = 0, keepdim = True)
        getitem: "f32[4, 1][1, 1]cuda:0" = var_mean[0]
        getitem_1: "f32[4, 1][1, 1]cuda:0" = var_mean[1]
        add: "f32[4, 1][1, 1]cuda:0" = torch.ops.aten.add.Tensor(getitem, 1e-05)
        rsqrt: "f32[4, 1][1, 1]cuda:0" = torch.ops.aten.rsqrt.default(add)
        sub: "f32[4, 8][8, 1]cuda:0" = torch.ops.aten.sub.Tensor(x, getitem_1)
        mul: "f32[4, 8][8, 1]cuda:0" = torch.ops.aten.mul.Tensor(sub, rsqrt)
        return (mul, rsqrt)
)");
  const kernels::KernelSet set = generateOne(*graph, "reduction");
  ASSERT_EQ(set.kernels.size(), 1u) << set.notGenerated.at(0).reason;
  const kernels::GeneratedKernel& k = set.kernels[0];
  EXPECT_EQ(k.fx.front(), "var_mean = torch.ops.aten.var_mean.correction(x, [1], correction = 0, keepdim = True)");
  EXPECT_EQ(k.fx.at(1), "getitem = var_mean[0]");
  // LayerNorm statistics: the mean pass, then the centred pass; var with correction 0.
  EXPECT_NE(k.source.find("acc2 += d * d;"), std::string::npos);
  EXPECT_NE(k.source.find("acc2 / 8.0f"), std::string::npos);
  ASSERT_EQ(k.outputs.size(), 2u);
  EXPECT_EQ(k.outputs[0].name, "rsqrt");
  EXPECT_EQ(k.outputs[1].name, "mul");
}

TEST(GeneratedKernels, SoftmaxTakesItsRowStatisticsInOnePass) {
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "bf16[2, 4, 4096][16384, 4096, 1]cuda:0"):
        softmax: "bf16[2, 4, 4096][16384, 4096, 1]cuda:0" = torch.ops.aten.softmax.int(x, -1)
        return (softmax,)
)");
  const kernels::KernelSet set = generateOne(*graph, "normalization");
  ASSERT_EQ(set.kernels.size(), 1u) << set.notGenerated.at(0).reason;
  const kernels::GeneratedKernel& k = set.kernels[0];
  EXPECT_EQ(k.config.grid, 8);
  EXPECT_EQ(k.config.block, 512);
  EXPECT_NE(k.source.find("lathe::online_add(red_max, red_sum, "), std::string::npos);
  EXPECT_NE(k.source.find("(lathe::fast_exp(v"), std::string::npos);
  // One division per row, a multiplication per element.
  EXPECT_NE(k.source.find("const float red_inverse = 1.0f / red_sum;"), std::string::npos);
  EXPECT_NE(k.source.find(" - red_max) * red_inverse)"), std::string::npos);
  // The input is read once for the statistics and once for the output: no separate max pass.
  size_t loads = 0;
  for (size_t at = k.source.find("lathe::ld(in0"); at != std::string::npos; at = k.source.find("lathe::ld(in0", at + 1))
    ++loads;
  EXPECT_EQ(loads, 2u);
}

TEST(GeneratedKernels, SoftmaxOverAnOuterDimensionIsRefused) {
  const auto graph = parse(R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[8, 16][16, 1]cuda:0"):
        softmax: "f32[8, 16][16, 1]cuda:0" = torch.ops.aten.softmax.int(x, 0)
        return (softmax,)
)");
  const kernels::KernelSet set = generateOne(*graph, "normalization");
  ASSERT_EQ(set.notGenerated.size(), 1u);
  EXPECT_EQ(set.notGenerated[0].reason, "softmax over a dimension that is not the innermost");
}

// ------------------------------------------------------------------------------------------------
// Hostile input: graphs and groups no capture makes, which must give kernels or reasons, never a
// crash, an exception or a recursion as deep as the graph.

// An inference graph of `length` pointwise ops, each reading the one before (and x every fourth).
std::string chainText(size_t length, const std::string& annotation = "f32[64, 64][64, 1]cuda:0") {
  std::string text = "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"" + annotation + "\"):\n";
  const char* ops[] = {"torch.ops.aten.relu.default({})", "torch.ops.aten.neg.default({})",
                       "torch.ops.aten.mul.Tensor({}, 2)", "torch.ops.aten.add.Tensor({}, x)"};
  std::string previous = "x";
  for (size_t i = 0; i < length; ++i) {
    std::string call = ops[i % 4];
    call.replace(call.find("{}"), 2, previous);
    previous = "v_" + std::to_string(i);
    text += "        " + previous + ": \"" + annotation + "\" = " + call + "\n";
  }
  return text + "        return (" + previous + ",)\n";
}

std::string reasons(const kernels::KernelSet& set) {
  std::string text;
  for (const kernels::NotGenerated& n : set.notGenerated) text += std::to_string(n.group) + ": " + n.reason + "; ";
  return text;
}

TEST(HostileInput, TenThousandNodeChainInGroupsOfFourThousandIsGeneratedWithoutDeepRecursion) {
  const auto graph = parse(chainText(10'000));
  const analysis::GraphInputs inputs = analysis::inferGraphInputs(*graph, nullptr);
  const hw::HwProfile hw;
  const passes::PlanTarget target{graph, "test", inputs, hw};
  const passes::PassContext context = target.context();
  const passes::PassResult split = passes::SplitPass().run(context, plan::PlanState::empty(graph->size()), {});
  const plan::PlanState state =
      passes::FusionPass()
          .run(context, split.state, passes::PassOptions(std::map<std::string, std::string>{{"max_nodes", "4000"}}))
          .state;
  ASSERT_EQ(state.groups.size(), 3u);
  EXPECT_EQ(state.groups[0].nodes.size(), 4000u);
  // Emission that recursed once per node of a chain overflowed the stack at 4000 levels.
  const kernels::KernelSet set = kernels::generateKernels(*graph, state);
  ASSERT_EQ(set.kernels.size(), 3u) << reasons(set);
  const kernels::GeneratedKernel& first = set.kernels[0];
  EXPECT_EQ(first.fx.size(), 4000u);
  ASSERT_EQ(first.inputs.size(), 1u);
  EXPECT_EQ(first.inputs[0].name, "x");
  ASSERT_EQ(first.outputs.size(), 1u);
  EXPECT_EQ(first.outputs[0].name, "v_3999");
  // The last node is stored; x, read by a thousand adds, is loaded once per element (the vector
  // kernel takes it in packs).
  EXPECT_NE(first.source.find("out0[j] = lathe::down<float>("), std::string::npos);
  size_t loads = 0;
  for (size_t at = first.source.find("lathe::ld(in0, j)"); at != std::string::npos;
       at = first.source.find("lathe::ld(in0, j)", at + 1)) {
    ++loads;
  }
  EXPECT_EQ(loads, 1u);
  EXPECT_EQ(set.kernels[2].fx.size(), 2000u);
}

// A group of the nodes given (in that order), with that kind and anchor.
plan::FusionGroup group(int32_t id, std::string kind, std::vector<ir::NodeId> nodes, ir::NodeId anchor) {
  plan::FusionGroup g;
  g.id = id;
  g.kind = std::move(kind);
  g.nodes = std::move(nodes);
  g.anchor = anchor;
  return g;
}

constexpr std::string_view kReduction = R"(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[8, 64][64, 1]cuda:0"):
        mul: "f32[8, 64][64, 1]cuda:0" = torch.ops.aten.mul.Tensor(x, x)
        sum_1: "f32[8, 1][1, 1]cuda:0" = torch.ops.aten.sum.dim_IntList(mul, [1], True)
        exp: "f32[8, 1][1, 1]cuda:0" = torch.ops.aten.exp.default(sum_1)
        neg: "f32[8, 64][64, 1]cuda:0" = torch.ops.aten.neg.default(x)
        relu: "f32[8, 64][64, 1]cuda:0" = torch.ops.aten.relu.default(neg)
        return (exp, relu)
)";

TEST(HostileInput, GroupsNoFusionPassMakesAreRefusedWithAReason) {
  const auto graph = parse(kReduction);
  const ir::NodeId x = graph->find("x"), mul = graph->find("mul"), sum = graph->find("sum_1"), exp = graph->find("exp"),
                   neg = graph->find("neg"), relu = graph->find("relu");
  struct Case {
    std::string what;
    std::vector<plan::FusionGroup> groups;
    std::vector<std::string> reasons;  // per group: "" generated, else a fragment of the reason
  };
  const std::vector<Case> cases = {
      {"the plan's own groups",
       {group(0, "reduction", {mul, sum, exp}, sum), group(1, "pointwise", {neg, relu}, neg)},
       {"", ""}},
      {"no anchor (\"\" in a bundle)",
       {group(0, "reduction", {mul, sum, exp}, ir::kNoNode), group(1, "pointwise", {neg, relu}, ir::kNoNode)},
       {"the group has no anchor", "the group has no anchor"}},
      {"an anchor of another group",
       {group(0, "reduction", {mul, sum, exp}, neg), group(1, "pointwise", {neg, relu}, neg)},
       {"its anchor neg is not one of its nodes", ""}},
      {"an anchor that is not the reduction", {group(0, "reduction", {mul, sum, exp}, mul)}, {"not a reduction"}},
      {"a reduction group made pointwise", {group(0, "pointwise", {mul, sum, exp}, mul)}, {"reduction"}},
      {"a node in two groups",
       {group(0, "pointwise", {neg, relu}, neg), group(1, "pointwise", {relu}, relu)},
       {"", "relu is in fusion group 0 too"}},
      {"the same group twice",
       {group(0, "pointwise", {neg, relu}, neg), group(0, "pointwise", {neg, relu}, neg)},
       {"", "an earlier group has id 0"}},
      {"a negative id", {group(-1, "pointwise", {neg, relu}, neg)}, {"group id -1 is negative"}},
      {"no nodes",
       {group(0, "pointwise", {}, ir::kNoNode), group(1, "reduction", {}, sum)},
       {"the group has no nodes", "the group has no nodes"}},
      {"a node listed twice", {group(0, "pointwise", {neg, relu, relu}, neg)}, {"relu is listed twice"}},
      {"nodes out of order", {group(0, "pointwise", {relu, neg}, neg)}, {""}},
      {"a placeholder", {group(0, "pointwise", {x, neg, relu}, neg)}, {"a placeholder node"}},
      {"a kind nobody knows", {group(0, "mystery", {neg, relu}, neg)}, {"not a reduction"}},
      {"every node", {group(0, "reduction", {x, mul, sum, exp, neg, relu}, sum)}, {"a placeholder node"}},
  };
  for (const Case& c : cases) {
    plan::PlanState state = plan::PlanState::empty(graph->size());
    state.groups = c.groups;
    const kernels::KernelSet set = kernels::generateKernels(*graph, state);
    ASSERT_EQ(set.kernels.size() + set.notGenerated.size(), c.groups.size()) << c.what;
    size_t generated = 0, refused = 0;
    for (size_t g = 0; g < c.groups.size(); ++g) {
      if (c.reasons[g].empty()) {
        ASSERT_LT(generated, set.kernels.size()) << c.what << ": group " << g << " refused: " << reasons(set);
        EXPECT_EQ(set.kernels[generated++].group, c.groups[g].id) << c.what;
      } else {
        ASSERT_LT(refused, set.notGenerated.size()) << c.what << ": group " << g << " generated";
        EXPECT_NE(set.notGenerated[refused++].reason.find(c.reasons[g]), std::string::npos)
            << c.what << ": " << reasons(set);
      }
    }
  }
}

TEST(HostileInput, RandomlyEditedGroupsOfACaptureNeverThrow) {
  const lathe::testing::SampleGraph sample =
      lathe::testing::loadSampleGraph("captures/gpt2_tiny_train.log.gz", "1/0_1:aot_joint_graph");
  const ir::Graph& graph = *sample.graph;
  const plan::PlanState planned = fused(sample.graph, sample.inputs);
  ASSERT_FALSE(planned.groups.empty());
  std::mt19937 rng(17);
  auto anyNode = [&] { return static_cast<ir::NodeId>(rng() % graph.size()); };
  size_t generated = 0;
  for (int round = 0; round < 300; ++round) {
    plan::FusionGroup edited = planned.groups[rng() % planned.groups.size()];
    switch (rng() % 6) {
      case 0: edited.anchor = anyNode(); break;
      case 1: edited.nodes.push_back(anyNode()); break;
      case 2:
        edited.nodes.erase(edited.nodes.begin() + static_cast<std::ptrdiff_t>(rng() % edited.nodes.size()));
        break;
      case 3: std::shuffle(edited.nodes.begin(), edited.nodes.end(), rng); break;
      case 4: edited.kind = std::array{"pointwise", "reduction", "normalization"}[rng() % 3]; break;
      case 5: {
        const std::vector<ir::NodeId>& other = planned.groups[rng() % planned.groups.size()].nodes;
        edited.nodes.insert(edited.nodes.end(), other.begin(), other.end());
      }
    }
    plan::PlanState state = plan::PlanState::empty(graph.size());
    state.groups = {edited};
    kernels::KernelSet set;
    EXPECT_NO_THROW(set = kernels::generateKernels(graph, state)) << "round " << round;
    ASSERT_EQ(set.kernels.size() + set.notGenerated.size(), 1u);
    generated += set.kernels.size();
  }
  EXPECT_GT(generated, 0u);
}

TEST(HostileInput, DeepChainsInsideBranchesAreGeneratedAndBranchesNestedTooDeepRefused) {
  // A cat whose first part is a 2000-node chain: its branch recurses through the chain.
  std::string text = chainText(2000, "f32[4, 8][8, 1]cuda:0");
  text.replace(text.rfind("        return"), std::string::npos,
               "        cat: \"f32[8, 8][8, 1]cuda:0\" = torch.ops.aten.cat.default([v_1999, x])\n"
               "        return (cat,)\n");
  const auto chained = parse(text);
  const kernels::KernelSet deep = generateOne(*chained, "pointwise");
  EXPECT_EQ(deep.kernels.size(), 1u) << reasons(deep);
  // 60 cats, each of the one before and x: each part is a branch inside the one before.
  std::string nested = "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[1, 8][8, 1]cuda:0\"):\n";
  std::string previous = "x";
  for (int i = 1; i <= 60; ++i) {
    const std::string name = "cat_" + std::to_string(i);
    nested += "        " + name + ": \"f32[" + std::to_string(i + 1) +
              ", 8][8, 1]cuda:0\" = torch.ops.aten.cat.default([" + previous + ", x])\n";
    previous = name;
  }
  nested += "        return (" + previous + ",)\n";
  const kernels::KernelSet refused = generateOne(*parse(nested), "pointwise");
  ASSERT_EQ(refused.notGenerated.size(), 1u);
  EXPECT_NE(refused.notGenerated[0].reason.find("nested more than 48 deep"), std::string::npos) << reasons(refused);
}

TEST(HostileInput, OperandsReadInEverMoreWaysStopAtABound) {
  // Each cat reads both halves of the one before, each in a branch of its own: the values to emit
  // double per cat.
  std::string text = "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[4, 8][8, 1]cuda:0\"):\n";
  std::string previous = "x";
  for (int i = 0; i < 22; ++i) {
    const std::string n = std::to_string(i);
    text +=
        "        low_" + n + ": \"f32[4, 4][8, 1]cuda:0\" = torch.ops.aten.slice.Tensor(" + previous + ", 1, 0, 4)\n";
    text +=
        "        high_" + n + ": \"f32[4, 4][8, 1]cuda:0\" = torch.ops.aten.slice.Tensor(" + previous + ", 1, 4, 8)\n";
    text += "        cat_" + n + ": \"f32[4, 8][8, 1]cuda:0\" = torch.ops.aten.cat.default([high_" + n + ", low_" + n +
            "], 1)\n";
    previous = "cat_" + n;
  }
  text += "        return (" + previous + ",)\n";
  const kernels::KernelSet set = generateOne(*parse(text), "pointwise");
  ASSERT_EQ(set.notGenerated.size(), 1u);
  EXPECT_NE(set.notGenerated[0].reason.find("values per node"), std::string::npos) << reasons(set);
}

TEST(HostileInput, SizesBeyondIndexArithmeticAreRefused) {
  for (const auto& [annotation, reason] :
       {std::pair{"f32[1099511627776, 1048576][1048576, 1]cuda:0", "more than 2^48 elements"},
        std::pair{"f32[9223372036854775807, 9223372036854775807][9223372036854775807, 1]cuda:0",
                  "more than 2^48 elements"},
        std::pair{"f32[-4, 8][8, 1]cuda:0", "negative size"}, std::pair{"f32[4, 8][-8, 1]cuda:0", "negative stride"},
        std::pair{"f32[4, 8][4611686018427387904, 1]cuda:0", "spans more than 2^48 elements"}}) {
    const kernels::KernelSet set = generateOne(*parse(chainText(3, annotation)), "pointwise");
    ASSERT_EQ(set.notGenerated.size(), 1u) << annotation;
    EXPECT_NE(set.notGenerated[0].reason.find(reason), std::string::npos) << annotation << ": " << reasons(set);
  }
}

}  // namespace

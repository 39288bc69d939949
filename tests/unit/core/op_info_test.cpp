#include "ir/op_info.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <set>
#include <thread>

#include "io/fx/fx_text.h"
#include "util/input.h"

using namespace lathe;
using namespace lathe::ir;

namespace {

// --- tiny graph builder -------------------------------------------------------------------------

TensorMeta tensor(DType dtype, std::vector<int64_t> sizes) {
  TensorMeta m;
  m.kind = ValueKind::Tensor;
  m.dtype = dtype;
  int64_t stride = 1;
  m.strides.resize(sizes.size());
  for (size_t i = sizes.size(); i-- > 0;) {
    m.strides[i] = SymDim{stride};
    stride *= sizes[i];
  }
  for (int64_t s : sizes) m.sizes.push_back(SymDim{s});
  m.hasStrides = true;
  return m;
}

Arg node(NodeId id) {
  return Arg::ofNode(id);
}
Arg ints(std::vector<int64_t> values) {
  Arg a;
  a.kind = Arg::Kind::List;
  for (int64_t v : values) a.items.push_back(Arg::ofInt(v));
  return a;
}
Arg bools(std::vector<bool> values) {
  Arg a;
  a.kind = Arg::Kind::List;
  for (bool v : values) a.items.push_back(Arg::ofBool(v));
  return a;
}

class Builder {
 public:
  NodeId input(std::string_view name, TensorMeta meta) {
    Node n;
    n.kind = NodeKind::Placeholder;
    n.name = g.intern(name);
    n.meta = std::move(meta);
    return g.addNode(std::move(n));
  }
  NodeId call(std::string_view target, std::vector<Arg> args, TensorMeta meta = {},
              std::vector<std::pair<std::string_view, Arg>> kwargs = {}, NodeKind kind = NodeKind::CallFunction) {
    Node n;
    n.kind = kind;
    n.name = g.intern("n" + std::to_string(g.size()));
    n.target = g.intern(target);
    n.args = std::move(args);
    for (auto& [k, v] : kwargs) n.kwargs.emplace_back(g.intern(k), std::move(v));
    n.meta = std::move(meta);
    return g.addNode(std::move(n));
  }
  NodeId getitem(NodeId tuple, int64_t index, TensorMeta meta) {
    return call("operator.getitem", {node(tuple), Arg::ofInt(index)}, std::move(meta));
  }
  Graph& finish() {
    Node out;
    out.kind = NodeKind::Output;
    out.name = g.intern("output");
    out.target = g.intern("output");
    g.addNode(std::move(out));
    g.finalize();
    return g;
  }
  Graph g;
};

// --- lookup -------------------------------------------------------------------------------------

TEST(OpLookup, AcceptsEveryTargetSpelling) {
  for (const char* target : {"torch.ops.aten.mm.default", "aten::mm", "aten.mm", "aten.mm.default", "aten::mm.out"}) {
    const OpInfo& info = lookupOp(target);
    EXPECT_EQ(info.category, OpCategory::Matmul) << target;
    EXPECT_EQ(info.name, "aten.mm") << target;
  }
  EXPECT_EQ(canonicalOpName("torch.ops.aten.add.Tensor"), "aten.add.Tensor");
  EXPECT_EQ(canonicalOpName("aten::add.Tensor"), "aten.add.Tensor");
  EXPECT_EQ(canonicalOpName("operator.getitem"), "operator.getitem");
  // In-place variants resolve to their functional op, dunder names are left alone.
  EXPECT_EQ(lookupOp("torch.ops.aten.add_.Tensor").name, "aten.add");
  EXPECT_EQ(lookupOp("torch.ops.aten.index_put_.default").name, "aten.index_put");
  EXPECT_EQ(lookupOp("masked_fill_").name, "masked_fill");
  EXPECT_EQ(lookupOp("torch.ops.aten.__and__.Tensor").name, "aten.__and__");
  // Overload lines beat their packet where the overloads differ.
  EXPECT_EQ(lookupOp("torch.ops.aten.max.other").category, OpCategory::Pointwise);
  EXPECT_EQ(lookupOp("torch.ops.aten.max.dim").category, OpCategory::Reduction);
  EXPECT_EQ(lookupOp("torch.ops.aten.where.self").category, OpCategory::Pointwise);
  EXPECT_EQ(lookupOp("torch.ops.aten.where.default").category, OpCategory::DataMovement);
  EXPECT_FALSE(lookupOp("torch.ops.aten.where.default").fusible);
}

TEST(OpLookup, UnknownOpsAreUnknownNotDropped) {
  for (const char* target : {"torch.ops.mylib.fancy.default", "athena.flash_attn", "self.layers.0", "", "aten",
                             "torch.ops.", "::", "..", "_", "aten._", "aten.__"}) {
    const OpInfo& info = lookupOp(target);
    EXPECT_EQ(info.category, OpCategory::Unknown) << target;
    EXPECT_EQ(info.formula, CostFormula::Opaque) << target;
    EXPECT_FALSE(info.fusible) << target;
  }
}

struct Expectation {
  const char* target;
  OpCategory category;
};

// Every op family the registry promises, in the spellings graphs use.
TEST(OpLookup, CoveredOpsHaveTheirCategory) {
  using C = OpCategory;
  const Expectation expectations[] = {
      // Matmul
      {"torch.ops.aten.mm.default", C::Matmul},
      {"torch.ops.aten.bmm.default", C::Matmul},
      {"torch.ops.aten.addmm.default", C::Matmul},
      {"torch.ops.aten.linear.default", C::Matmul},
      {"torch.ops.aten.matmul.default", C::Matmul},
      {"torch.ops.aten.baddbmm.default", C::Matmul},
      {"torch.ops.aten._grouped_mm.default", C::Matmul},
      {"torch.ops.aten._scaled_mm.default", C::Matmul},
      {"torch._C._nn.linear", C::Matmul},
      {"torch.nn.functional.linear", C::Matmul},
      {"torch.matmul", C::Matmul},
      {"torch.addmm", C::Matmul},
      {"operator.matmul", C::Matmul},
      {"matmul", C::Matmul},
      // Attention, forward and backward
      {"torch.ops.aten._scaled_dot_product_flash_attention.default", C::Attention},
      {"torch.ops.aten._scaled_dot_product_flash_attention_backward.default", C::Attention},
      {"torch.ops.aten._scaled_dot_product_efficient_attention.default", C::Attention},
      {"torch.ops.aten._scaled_dot_product_efficient_attention_backward.default", C::Attention},
      {"torch.ops.aten._scaled_dot_product_cudnn_attention.default", C::Attention},
      {"torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default", C::Attention},
      {"torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default", C::Attention},
      {"torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default", C::Attention},
      {"torch.ops.aten._scaled_dot_product_fused_attention_overrideable.default", C::Attention},
      {"torch.ops.aten._scaled_dot_product_fused_attention_overrideable_backward.default", C::Attention},
      {"torch.ops.aten._flash_attention_forward.default", C::Attention},
      {"torch.ops.aten._flash_attention_backward.default", C::Attention},
      {"torch.ops.aten._efficient_attention_forward.default", C::Attention},
      {"torch.ops.aten._efficient_attention_backward.default", C::Attention},
      {"torch.ops.aten._scaled_dot_product_attention_math.default", C::Attention},
      {"torch.ops.aten.scaled_dot_product_attention.default", C::Attention},
      {"torch.ops.higher_order.flex_attention", C::Attention},
      {"torch.ops.higher_order.flex_attention_backward", C::Attention},
      {"torch.nn.functional.scaled_dot_product_attention", C::Attention},
      {"torch._C._nn.scaled_dot_product_attention", C::Attention},
      // Convolution
      {"torch.ops.aten.convolution.default", C::Convolution},
      {"torch.ops.aten.convolution_backward.default", C::Convolution},
      {"torch.conv2d", C::Convolution},
      // Embedding
      {"torch.ops.aten.embedding.default", C::DataMovement},
      {"torch.ops.aten.embedding_dense_backward.default", C::DataMovement},
      {"torch.nn.functional.embedding", C::DataMovement},
      // Pointwise
      {"torch.ops.aten.add.Tensor", C::Pointwise},
      {"torch.ops.aten.sub.Tensor", C::Pointwise},
      {"torch.ops.aten.mul.Scalar", C::Pointwise},
      {"torch.ops.aten.div.Tensor_mode", C::Pointwise},
      {"torch.ops.aten.neg.default", C::Pointwise},
      {"torch.ops.aten.exp.default", C::Pointwise},
      {"torch.ops.aten.log.default", C::Pointwise},
      {"torch.ops.aten.sqrt.default", C::Pointwise},
      {"torch.ops.aten.rsqrt.default", C::Pointwise},
      {"torch.ops.aten.pow.Tensor_Scalar", C::Pointwise},
      {"torch.ops.aten.tanh.default", C::Pointwise},
      {"torch.ops.aten.sigmoid.default", C::Pointwise},
      {"torch.ops.aten.silu.default", C::Pointwise},
      {"torch.ops.aten.gelu.default", C::Pointwise},
      {"torch.ops.aten.relu.default", C::Pointwise},
      {"torch.ops.aten.where.self", C::Pointwise},
      {"torch.ops.aten.clamp.default", C::Pointwise},
      {"torch.ops.aten.abs.default", C::Pointwise},
      {"torch.ops.aten.sin.default", C::Pointwise},
      {"torch.ops.aten.cos.default", C::Pointwise},
      {"torch.ops.aten.maximum.default", C::Pointwise},
      {"torch.ops.aten.minimum.default", C::Pointwise},
      {"torch.ops.aten.eq.Scalar", C::Pointwise},
      {"torch.ops.aten.ne.Scalar", C::Pointwise},
      {"torch.ops.aten.lt.Tensor", C::Pointwise},
      {"torch.ops.aten.gt.Scalar", C::Pointwise},
      {"torch.ops.aten.le.Tensor", C::Pointwise},
      {"torch.ops.aten.ge.Scalar", C::Pointwise},
      {"torch.ops.aten.logical_and.default", C::Pointwise},
      {"torch.ops.aten.logical_not.default", C::Pointwise},
      {"torch.ops.aten.bitwise_and.Tensor", C::Pointwise},
      {"torch.ops.aten.bitwise_or.Tensor", C::Pointwise},
      {"torch.ops.aten.masked_fill.Scalar", C::Pointwise},
      {"torch.ops.aten.threshold_backward.default", C::Pointwise},
      {"torch.ops.aten.gelu_backward.default", C::Pointwise},
      {"torch.ops.aten.silu_backward.default", C::Pointwise},
      {"torch.ops.aten.sigmoid_backward.default", C::Pointwise},
      {"torch.ops.aten.tanh_backward.default", C::Pointwise},
      {"torch.ops.prims.add.default", C::Pointwise},
      {"torch.ops.prims.mul.default", C::Pointwise},
      {"torch.ops.prims.fma.default", C::Pointwise},
      {"torch.ops.prims.convert_element_type.default", C::Pointwise},
      {"torch.ops.aten._to_copy.default", C::Pointwise},
      {"torch.ops.aten.clone.default", C::Pointwise},
      {"torch.ops.aten.copy_.default", C::Pointwise},
      {"torch.ops.aten.to.dtype", C::Pointwise},
      {"operator.add", C::Pointwise},
      {"operator.mul", C::Pointwise},
      {"operator.truediv", C::Pointwise},
      {"to", C::Pointwise},
      {"float", C::Pointwise},
      {"contiguous", C::Pointwise},
      {"torch.nn.functional.silu", C::Pointwise},
      {"torch._C._nn.gelu", C::Pointwise},
      // Reductions
      {"torch.ops.aten.sum.dim_IntList", C::Reduction},
      {"torch.ops.aten.sum.default", C::Reduction},
      {"torch.ops.aten.mean.dim", C::Reduction},
      {"torch.ops.aten.amax.default", C::Reduction},
      {"torch.ops.aten.amin.default", C::Reduction},
      {"torch.ops.aten.max.dim", C::Reduction},
      {"torch.ops.aten.min.default", C::Reduction},
      {"torch.ops.aten.argmax.default", C::Reduction},
      {"torch.ops.aten.var.correction", C::Reduction},
      {"torch.ops.aten.var_mean.correction", C::Reduction},
      {"torch.ops.aten.std.correction", C::Reduction},
      {"torch.ops.aten.prod.dim_int", C::Reduction},
      {"torch.ops.aten.cumsum.default", C::Reduction},
      {"torch.ops.aten.any.dim", C::Reduction},
      {"torch.ops.aten.all.default", C::Reduction},
      {"torch.ops.aten.norm.ScalarOpt_dim", C::Reduction},
      {"torch.ops.aten.nll_loss_forward.default", C::Reduction},
      {"torch.ops.aten.nll_loss_backward.default", C::DataMovement},
      {"torch.nn.functional.cross_entropy", C::Reduction},
      // Normalization
      {"torch.ops.aten.native_layer_norm.default", C::Normalization},
      {"torch.ops.aten.native_layer_norm_backward.default", C::Normalization},
      {"torch.ops.aten._fused_rms_norm.default", C::Normalization},
      {"torch.ops.aten._fused_rms_norm_backward.default", C::Normalization},
      {"torch.ops.aten.rms_norm.default", C::Normalization},
      {"torch.ops.aten._softmax.default", C::Normalization},
      {"torch.ops.aten._log_softmax.default", C::Normalization},
      {"torch.ops.aten._softmax_backward_data.default", C::Normalization},
      {"torch.ops.aten._log_softmax_backward_data.default", C::Normalization},
      {"torch.nn.functional.layer_norm", C::Normalization},
      // Views
      {"torch.ops.aten.view.default", C::View},
      {"torch.ops.aten._unsafe_view.default", C::View},
      {"torch.ops.aten.reshape.default", C::View},
      {"torch.ops.aten.permute.default", C::View},
      {"torch.ops.aten.transpose.int", C::View},
      {"torch.ops.aten.t.default", C::View},
      {"torch.ops.aten.expand.default", C::View},
      {"torch.ops.aten.squeeze.dim", C::View},
      {"torch.ops.aten.unsqueeze.default", C::View},
      {"torch.ops.aten.slice.Tensor", C::View},
      {"torch.ops.aten.select.int", C::View},
      {"torch.ops.aten.split.Tensor", C::View},
      {"torch.ops.aten.split_with_sizes.default", C::View},
      {"torch.ops.aten.chunk.default", C::View},
      {"torch.ops.aten.unbind.int", C::View},
      {"torch.ops.aten.as_strided.default", C::View},
      {"torch.ops.aten.alias.default", C::View},
      {"torch.ops.aten.detach.default", C::View},
      {"torch.ops.aten.narrow.default", C::View},
      {"torch.ops.inductor._alloc_from_pool.default", C::View},
      {"view", C::View},
      {"reshape", C::View},
      {"transpose", C::View},
      // Data movement that is not a view
      {"torch.ops.aten.index_select.default", C::DataMovement},
      {"torch.ops.aten.index.Tensor", C::DataMovement},
      {"torch.ops.aten.gather.default", C::DataMovement},
      {"torch.ops.aten.cat.default", C::DataMovement},
      {"torch.ops.aten.stack.default", C::DataMovement},
      {"torch.ops.aten.slice_scatter.default", C::DataMovement},
      {"torch.ops.aten.scatter.src", C::DataMovement},
      {"torch.ops.aten.index_put.default", C::DataMovement},
      {"torch.ops.aten.constant_pad_nd.default", C::DataMovement},
      {"torch.ops.aten.sort.stable", C::DataMovement},
      {"torch.ops.aten.topk.default", C::DataMovement},
      {"torch.cat", C::DataMovement},
      // Creation
      {"torch.ops.aten.empty.memory_format", C::Creation},
      {"torch.ops.aten.empty_strided.default", C::Creation},
      {"torch.ops.aten.zeros.default", C::Creation},
      {"torch.ops.aten.ones.default", C::Creation},
      {"torch.ops.aten.full.default", C::Creation},
      {"torch.ops.aten.arange.start", C::Creation},
      {"torch.ops.prims.iota.default", C::Creation},
      {"torch.ops.aten.scalar_tensor.default", C::Creation},
      {"torch.ops.aten.new_ones.default", C::Creation},
      {"torch.ops.aten.new_zeros.default", C::Creation},
      {"torch.ops.aten.zeros_like.default", C::Creation},
      {"torch.ops.aten.full_like.default", C::Creation},
      {"torch.arange", C::Creation},
      // Random
      {"torch.ops.aten.rand.default", C::Random},
      {"torch.ops.aten.randn.default", C::Random},
      {"torch.ops.aten.bernoulli.p", C::Random},
      {"torch.ops.aten.native_dropout.default", C::Random},
      {"torch.ops.prims.inductor_random.default", C::Random},
      {"torch.ops.prims.inductor_seeds.default", C::Random},
      {"torch.ops.prims.inductor_lookup_seed.default", C::Random},
      {"torch.ops.rngprims.philox_rand.default", C::Random},
      {"torch.ops.higher_order.run_and_save_rng_state", C::Random},
      {"torch.ops.higher_order.run_with_rng_state", C::Random},
      {"torch.nn.functional.dropout", C::Random},
      // Collectives
      {"torch.ops._c10d_functional.all_reduce.default", C::Collective},
      {"torch.ops._c10d_functional.all_reduce_.default", C::Collective},
      {"torch.ops._c10d_functional.all_gather_into_tensor.default", C::Collective},
      {"torch.ops._c10d_functional.reduce_scatter_tensor.default", C::Collective},
      {"torch.ops._c10d_functional.wait_tensor.default", C::Collective},
      {"torch.ops._c10d_functional.broadcast.default", C::Collective},
      {"torch.ops._c10d_functional.all_to_all_single.default", C::Collective},
      {"torch.ops.c10d.allreduce_.default", C::Collective},
      {"torch.ops.c10d._allgather_base_.default", C::Collective},
      {"torch.ops.c10d.broadcast_.default", C::Collective},
      // Getitem, host, higher-order
      {"operator.getitem", C::Getitem},
      {"torch.ops.aten.sym_size.int", C::Host},
      {"torch.ops.aten.sym_numel.default", C::Host},
      {"torch.ops.aten._local_scalar_dense.default", C::Host},
      {"torch.ops.aten._assert_tensor_metadata.default", C::Host},
      {"torch._C._set_grad_enabled", C::Host},
      {"torch.ops.higher_order.wrap_with_set_grad_enabled", C::HigherOrder},
      {"torch.ops.higher_order.invoke_subgraph", C::HigherOrder},
      {"torch.ops.higher_order.auto_functionalized", C::HigherOrder},
  };
  for (const auto& e : expectations)
    EXPECT_EQ(categoryName(lookupOp(e.target).category), categoryName(e.category)) << e.target;
}

TEST(OpTable, LinesAreWellFormed) {
  std::set<std::string> names;
  for (const OpInfo& info : OpRegistry::builtIns()) {
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate line " << info.name;
    EXPECT_NE(info.category, OpCategory::Unknown) << "unresolved alias " << info.name;
    EXPECT_NE(info.category, OpCategory::Custom) << info.name;
    EXPECT_FALSE(info.name.starts_with("torch.ops.")) << info.name;
    EXPECT_EQ(info.name.find("::"), std::string::npos) << info.name;
    EXPECT_TRUE(info.builtIn);
    EXPECT_FALSE(info.subgraphBoundary) << info.name;  // boundaries are the user's choice
    EXPECT_EQ(lookupOp(info.name).name, info.name);
    const bool attentionFormula =
        info.formula == CostFormula::Attention || info.formula == CostFormula::AttentionBackward;
    EXPECT_EQ(info.category == OpCategory::Attention, attentionFormula) << info.name;
  }
}

// MagiCompiler's compute-sensitive default is torch's OpTypes.is_compute_intensive list.
TEST(OpTable, ComputeSensitiveDefaultsAreTorchsComputeIntensiveOps) {
  std::set<std::string> sensitive;
  for (const OpInfo& info : OpRegistry::builtIns())
    if (info.computeSensitive && info.name.starts_with("aten.")) sensitive.insert(info.name);
  const std::set<std::string> torchList{
      "aten.mm",
      "aten.convolution",
      "aten.convolution_backward",
      "aten.bmm",
      "aten.addmm",
      "aten._scaled_dot_product_flash_attention",
      "aten._scaled_dot_product_efficient_attention",
      "aten._flash_attention_forward",
      "aten._efficient_attention_forward",
      "aten.upsample_bilinear2d",
      "aten._scaled_mm",
  };
  EXPECT_EQ(sensitive, torchList);
  EXPECT_FALSE(lookupOp("torch.ops.aten._scaled_dot_product_cudnn_attention.default").computeSensitive);
  EXPECT_TRUE(lookupOp("torch.mm").computeSensitive);  // aliases carry the flag
}

TEST(OpTable, CategoryNamesRoundTrip) {
  std::set<std::string_view> seen;
  for (size_t i = 0; i < kOpCategoryCount; ++i) {
    const auto category = static_cast<OpCategory>(i);
    const std::string_view name = categoryName(category);
    EXPECT_TRUE(seen.insert(name).second) << name;
    EXPECT_EQ(categoryFromName(name), category);
  }
  EXPECT_EQ(categoryFromName("matmul"), OpCategory::Matmul);
  EXPECT_EQ(categoryFromName("Matmul"), std::nullopt);
}

// --- cost formulas (hand-computed) --------------------------------------------------------------

TEST(OpCostTest, Mm) {
  Builder b;
  const NodeId x = b.input("x", tensor(DType::BF16, {64, 128}));
  const NodeId w = b.input("w", tensor(DType::BF16, {128, 32}));
  const NodeId mm = b.call("torch.ops.aten.mm.default", {node(x), node(w)}, tensor(DType::BF16, {64, 32}));
  const Graph& g = b.finish();
  const OpCost c = estimateCost(g, mm);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 64 * 32 * 128);
  EXPECT_DOUBLE_EQ(c.bytesRead, 64 * 128 * 2 + 128 * 32 * 2);
  EXPECT_DOUBLE_EQ(c.bytesWritten, 64 * 32 * 2);
  EXPECT_TRUE(c.flopsKnown);
  EXPECT_TRUE(c.sizesHinted);
  EXPECT_EQ(estimateCost(g, x).flops, 0);  // placeholders cost nothing
}

TEST(OpCostTest, AddmmAddsTheBias) {
  Builder b;
  const NodeId bias = b.input("bias", tensor(DType::F32, {32}));
  const NodeId x = b.input("x", tensor(DType::F32, {8, 16}));
  const NodeId w = b.input("w", tensor(DType::F32, {16, 32}));
  const NodeId addmm =
      b.call("torch.ops.aten.addmm.default", {node(bias), node(x), node(w)}, tensor(DType::F32, {8, 32}));
  const Graph& g = b.finish();
  const OpCost c = estimateCost(g, addmm);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 8 * 32 * 16 + 8 * 32);
  EXPECT_DOUBLE_EQ(c.bytesRead, (32 + 8 * 16 + 16 * 32) * 4);
  EXPECT_DOUBLE_EQ(c.bytesWritten, 8 * 32 * 4);
}

TEST(OpCostTest, BmmLinearAndBroadcastMatmul) {
  Builder b;
  const NodeId a = b.input("a", tensor(DType::F16, {4, 8, 16}));
  const NodeId c = b.input("c", tensor(DType::F16, {4, 16, 32}));
  const NodeId bmm = b.call("torch.ops.aten.bmm.default", {node(a), node(c)}, tensor(DType::F16, {4, 8, 32}));
  const NodeId x = b.input("x", tensor(DType::BF16, {2, 3, 16}));
  const NodeId w = b.input("w", tensor(DType::BF16, {32, 16}));
  const NodeId bias = b.input("bias", tensor(DType::BF16, {32}));
  const NodeId linear = b.call("torch._C._nn.linear", {node(x), node(w), node(bias)}, tensor(DType::BF16, {2, 3, 32}));
  const NodeId linearNoBias =
      b.call("torch._C._nn.linear", {node(x), node(w), Arg::none()}, tensor(DType::BF16, {2, 3, 32}));
  const NodeId p = b.input("p", tensor(DType::F32, {2, 1, 8, 16}));
  const NodeId q = b.input("q", tensor(DType::F32, {3, 16, 4}));
  const NodeId matmul = b.call("torch.matmul", {node(p), node(q)}, tensor(DType::F32, {2, 3, 8, 4}));
  const NodeId v = b.input("v", tensor(DType::F32, {16}));
  const NodeId mv = b.call("torch.ops.aten.mv.default", {node(p), node(v)});  // no recorded output
  const Graph& g = b.finish();
  EXPECT_DOUBLE_EQ(estimateCost(g, bmm).flops, 2.0 * 4 * 8 * 32 * 16);
  EXPECT_DOUBLE_EQ(estimateCost(g, linear).flops, 2.0 * 6 * 32 * 16 + 6 * 32);
  EXPECT_DOUBLE_EQ(estimateCost(g, linearNoBias).flops, 2.0 * 6 * 32 * 16);
  EXPECT_DOUBLE_EQ(estimateCost(g, matmul).flops, 2.0 * (2 * 3) * 8 * 4 * 16);
  EXPECT_DOUBLE_EQ(estimateCost(g, mv).flops, 2.0 * 2 * 8 * 16);
}

TEST(OpCostTest, GroupedMm) {
  Builder b;
  const NodeId tokens = b.input("tokens", tensor(DType::BF16, {512, 64}));
  const NodeId experts = b.input("experts", tensor(DType::BF16, {8, 64, 128}));
  const NodeId offs = b.input("offs", tensor(DType::I32, {8}));
  const NodeId gmm = b.call("torch.ops.aten._grouped_mm.default", {node(tokens), node(experts), node(offs)},
                            tensor(DType::BF16, {512, 128}));
  const Graph& g = b.finish();
  // Each token meets one expert: 2 * 512 * 64 * 128, not 8x that.
  EXPECT_DOUBLE_EQ(estimateCost(g, gmm).flops, 2.0 * 512 * 64 * 128);
}

TEST(OpCostTest, RuntimeChunkedLossCountsItsMatmuls) {
  Builder b;
  const NodeId h = b.input("h", tensor(DType::BF16, {256, 64}));
  const NodeId w = b.input("w", tensor(DType::BF16, {1000, 64}));
  const NodeId labels = b.input("labels", tensor(DType::I64, {256}));
  const NodeId grad = b.input("grad", tensor(DType::F32, {}));
  const NodeId lse = b.input("lse", tensor(DType::F32, {256}));
  const NodeId loss = b.call("torch.ops.lathe.linear_cross_entropy.default",
                             {node(h), node(w), node(labels), Arg::ofInt(-100), Arg::ofBool(true)});
  const NodeId backward =
      b.call("torch.ops.lathe.linear_cross_entropy_backward.default",
             {node(grad), node(h), node(w), node(labels), node(lse), Arg::ofInt(-100), Arg::ofBool(true)});
  const Graph& g = b.finish();
  // The forward is the lm_head matmul and a log-sum-exp; the backward recomputes the logits and
  // computes both gradients.
  EXPECT_DOUBLE_EQ(estimateCost(g, loss).flops, 2.0 * 256 * 1000 * 64 + 5.0 * 256 * 1000);
  EXPECT_DOUBLE_EQ(estimateCost(g, backward).flops, 3 * 2.0 * 256 * 1000 * 64 + 4.0 * 256 * 1000);
  EXPECT_TRUE(lookupOp("torch.ops.lathe.linear_cross_entropy.default").computeSensitive);
}

TEST(OpCostTest, RuntimeLossFromLogitsIsALogSoftmaxOverThem) {
  Builder b;
  const NodeId logits = b.input("logits", tensor(DType::BF16, {256, 1000}));
  const NodeId labels = b.input("labels", tensor(DType::I64, {256}));
  const NodeId grad = b.input("grad", tensor(DType::F32, {}));
  const NodeId lse = b.input("lse", tensor(DType::F32, {256}));
  const NodeId loss = b.call("torch.ops.lathe.cross_entropy.default",
                             {node(logits), node(labels), Arg::ofInt(-100), Arg::ofBool(true)});
  const NodeId backward = b.call("torch.ops.lathe.cross_entropy_backward.default",
                                 {node(grad), node(logits), node(labels), node(lse), Arg::ofInt(-100), Arg::ofBool(true)},
                                 tensor(DType::BF16, {256, 1000}));
  const Graph& g = b.finish();
  // No matmul: one log-softmax's arithmetic per logit, the gradient's per logit it writes.
  EXPECT_DOUBLE_EQ(estimateCost(g, loss).flops, 5.0 * 256 * 1000);
  EXPECT_GE(estimateCost(g, loss).bytesRead, 2.0 * 256 * 1000);
  EXPECT_DOUBLE_EQ(estimateCost(g, backward).flops, 4.0 * 256 * 1000);
  EXPECT_DOUBLE_EQ(estimateCost(g, backward).bytesWritten, 2.0 * 256 * 1000);
  EXPECT_FALSE(lookupOp("torch.ops.lathe.cross_entropy.default").computeSensitive);
}

TEST(OpCostTest, FlashAttentionForwardAndBackward) {
  constexpr double B = 2, H = 8, S = 128, D = 64;
  Builder b;
  const TensorMeta qkv = tensor(DType::BF16, {2, 8, 128, 64});
  const NodeId q = b.input("q", qkv), k = b.input("k", qkv), v = b.input("v", qkv);
  const NodeId fwd = b.call("torch.ops.aten._scaled_dot_product_flash_attention.default",
                            {node(q), node(k), node(v), Arg::ofFloat(0.0), Arg::ofBool(true)});
  const NodeId out = b.getitem(fwd, 0, qkv);
  const NodeId lse = b.getitem(fwd, 1, tensor(DType::F32, {2, 8, 128}));
  const NodeId grad = b.input("grad", qkv);
  // (grad_out, q, k, v, out, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, ...)
  const NodeId bwd = b.call("torch.ops.aten._scaled_dot_product_flash_attention_backward.default",
                            {node(grad), node(q), node(k), node(v), node(out), node(lse), Arg::none(), Arg::none(),
                             Arg::ofInt(128), Arg::ofInt(128), Arg::ofFloat(0.0), Arg::ofBool(false)});
  const Graph& g = b.finish();

  const OpCost f = estimateCost(g, fwd);
  EXPECT_DOUBLE_EQ(f.flops, 4 * B * H * S * S * D / 2);  // is_causal (arg 4) halves it
  EXPECT_DOUBLE_EQ(f.bytesRead, 3 * B * H * S * D * 2);
  EXPECT_DOUBLE_EQ(f.bytesWritten, B * H * S * D * 2 + B * H * S * 4);  // out + logsumexp
  const OpCost r = estimateCost(g, bwd);
  EXPECT_DOUBLE_EQ(r.flops, 2.5 * 4 * B * H * S * S * D);
  EXPECT_DOUBLE_EQ(r.bytesRead, 5 * B * H * S * D * 2 + B * H * S * 4);  // grad, q, k, v, out + lse
  const OpCost item = estimateCost(g, out);                              // getitem of a tuple: free
  EXPECT_EQ(item.flops, 0);
  EXPECT_EQ(item.bytesRead, 0);
  EXPECT_EQ(item.bytesWritten, 0);
}

// As the sample captures print it: arg 4 of cuDNN SDPA is compute_log_sumexp, not is_causal.
TEST(OpCostTest, CudnnAttentionReadsIsCausalFromItsOwnPosition) {
  Builder b;
  const TensorMeta q4 = tensor(DType::BF16, {1, 32, 64, 128});
  const TensorMeta kv4 = tensor(DType::BF16, {1, 32, 256, 128});
  const NodeId q = b.input("q", q4), k = b.input("k", kv4), v = b.input("v", kv4);
  const NodeId mask = b.input("mask", tensor(DType::Bool, {1, 1, 64, 256}));
  const NodeId full =
      b.call("torch.ops.aten._scaled_dot_product_cudnn_attention.default",
             {node(q), node(k), node(v), node(mask), Arg::ofBool(true)}, {}, {{"scale", Arg::ofFloat(0.125)}});
  const NodeId causal =
      b.call("torch.ops.aten._scaled_dot_product_cudnn_attention.default",
             {node(q), node(k), node(v), Arg::none(), Arg::ofBool(true), Arg::ofFloat(0.0), Arg::ofBool(true)});
  const NodeId dynamo = b.call("torch._C._nn.scaled_dot_product_attention", {node(q), node(k), node(v)}, q4,
                               {{"attn_mask", node(mask)}, {"is_causal", Arg::ofBool(true)}});
  const Graph& g = b.finish();
  const double dense = 4.0 * 1 * 32 * 64 * 256 * 128;
  EXPECT_DOUBLE_EQ(estimateCost(g, full).flops, dense);
  EXPECT_DOUBLE_EQ(estimateCost(g, causal).flops, dense / 2);
  EXPECT_DOUBLE_EQ(estimateCost(g, dynamo).flops, dense / 2);
}

TEST(OpCostTest, SequenceFirstFlashForward) {
  Builder b;
  const TensorMeta bshd = tensor(DType::F16, {2, 128, 8, 64});
  const NodeId q = b.input("q", bshd), k = b.input("k", bshd), v = b.input("v", bshd);
  const NodeId fwd = b.call("torch.ops.aten._flash_attention_forward.default",
                            {node(q), node(k), node(v), Arg::none(), Arg::none(), Arg::ofInt(128), Arg::ofInt(128),
                             Arg::ofFloat(0.0), Arg::ofBool(false), Arg::ofBool(false)});
  const Graph& g = b.finish();
  EXPECT_DOUBLE_EQ(estimateCost(g, fwd).flops, 4.0 * 2 * 8 * 128 * 128 * 64);
}

TEST(OpCostTest, Convolution) {
  Builder b;
  const NodeId image = b.input("image", tensor(DType::BF16, {1, 3, 224, 224}));
  const NodeId weight = b.input("weight", tensor(DType::BF16, {192, 3, 16, 16}));
  const NodeId bias = b.input("bias", tensor(DType::BF16, {192}));
  // convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
  const NodeId conv = b.call("torch.ops.aten.convolution.default",
                             {node(image), node(weight), node(bias), ints({16, 16}), ints({0, 0}), ints({1, 1}),
                              Arg::ofBool(false), ints({0, 0}), Arg::ofInt(1)},
                             tensor(DType::BF16, {1, 192, 14, 14}));
  const NodeId grouped_in = b.input("gin", tensor(DType::F32, {2, 8, 10, 10}));
  const NodeId grouped_w = b.input("gw", tensor(DType::F32, {16, 4, 3, 3}));
  const NodeId grouped = b.call("torch.ops.aten.convolution.default",
                                {node(grouped_in), node(grouped_w), Arg::none(), ints({1, 1}), ints({0, 0}),
                                 ints({1, 1}), Arg::ofBool(false), ints({0, 0}), Arg::ofInt(2)},
                                tensor(DType::F32, {2, 16, 8, 8}));
  const NodeId gradOut = b.input("grad", tensor(DType::BF16, {1, 192, 14, 14}));
  // convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
  //                      transposed, output_padding, groups, output_mask)
  auto backward = [&](std::vector<bool> mask) {
    return b.call("torch.ops.aten.convolution_backward.default",
                  {node(gradOut), node(image), node(weight), ints({192}), ints({16, 16}), ints({0, 0}), ints({1, 1}),
                   Arg::ofBool(false), ints({0, 0}), Arg::ofInt(1), bools(std::move(mask))});
  };
  const NodeId weightGradOnly = backward({false, true, false});
  const NodeId bothGrads = backward({true, true, true});
  const Graph& g = b.finish();

  const double forward = 2.0 * 1 * 192 * 14 * 14 * 3 * 16 * 16;  // 2*N*Cout*Hout*Wout*Cin/groups*kh*kw
  const OpCost c = estimateCost(g, conv);
  EXPECT_DOUBLE_EQ(c.flops, forward);
  EXPECT_DOUBLE_EQ(c.bytesRead, (3 * 224 * 224 + 192 * 3 * 16 * 16 + 192) * 2);
  EXPECT_DOUBLE_EQ(c.bytesWritten, 192 * 14 * 14 * 2);
  EXPECT_DOUBLE_EQ(estimateCost(g, grouped).flops, 2.0 * 2 * 16 * 8 * 8 * (8 / 2) * 3 * 3);
  EXPECT_DOUBLE_EQ(estimateCost(g, weightGradOnly).flops, forward);
  EXPECT_DOUBLE_EQ(estimateCost(g, bothGrads).flops, 2 * forward);
}

TEST(OpCostTest, PointwiseWithBroadcasting) {
  Builder b;
  const NodeId col = b.input("col", tensor(DType::F32, {4, 1}));
  const NodeId row = b.input("row", tensor(DType::F32, {1, 8}));
  const NodeId add = b.call("torch.ops.aten.add.Tensor", {node(col), node(row)}, tensor(DType::F32, {4, 8}));
  const NodeId square = b.call("torch.ops.aten.mul.Tensor", {node(add), node(add)}, tensor(DType::F32, {4, 8}));
  const NodeId gelu = b.call("torch.ops.aten.gelu.default", {node(add)}, tensor(DType::F32, {4, 8}));
  const NodeId cast = b.call("torch.ops.prims.convert_element_type.default", {node(add), Arg::ofDType(DType::BF16)},
                             tensor(DType::BF16, {4, 8}));
  const NodeId symbolic = b.call("operator.add", {node(col), Arg::ofInt(1)});  // no meta: sized from its input
  const Graph& g = b.finish();
  const OpCost c = estimateCost(g, add);
  EXPECT_DOUBLE_EQ(c.flops, 32);
  EXPECT_DOUBLE_EQ(c.bytesRead, 4 * 4 + 8 * 4);
  EXPECT_DOUBLE_EQ(c.bytesWritten, 32 * 4);
  EXPECT_DOUBLE_EQ(estimateCost(g, square).bytesRead, 32 * 4);  // the same input is read once
  EXPECT_DOUBLE_EQ(estimateCost(g, gelu).flops, 5 * 32);
  const OpCost castCost = estimateCost(g, cast);
  EXPECT_DOUBLE_EQ(castCost.flops, 0);
  EXPECT_DOUBLE_EQ(castCost.bytesRead, 128);
  EXPECT_DOUBLE_EQ(castCost.bytesWritten, 64);
  EXPECT_DOUBLE_EQ(estimateCost(g, symbolic).flops, 4);
}

TEST(OpCostTest, LayerNormAndVarMeanTuples) {
  Builder b;
  const NodeId x = b.input("x", tensor(DType::F32, {4, 8}));
  const NodeId weight = b.input("weight", tensor(DType::F32, {8}));
  const NodeId bias = b.input("bias", tensor(DType::F32, {8}));
  const NodeId ln = b.call("torch.ops.aten.native_layer_norm.default",
                           {node(x), ints({8}), node(weight), node(bias), Arg::ofFloat(1e-5)});
  b.getitem(ln, 0, tensor(DType::F32, {4, 8}));
  b.getitem(ln, 1, tensor(DType::F32, {4, 1}));
  b.getitem(ln, 2, tensor(DType::F32, {4, 1}));
  const NodeId vm = b.call("torch.ops.aten.var_mean.correction", {node(x), ints({1})}, {},
                           {{"correction", Arg::ofInt(0)}, {"keepdim", Arg::ofBool(true)}});
  b.getitem(vm, 0, tensor(DType::F32, {4, 1}));
  b.getitem(vm, 1, tensor(DType::F32, {4, 1}));
  const Graph& g = b.finish();
  const OpCost c = estimateCost(g, ln);
  EXPECT_DOUBLE_EQ(c.flops, 8 * 32);
  EXPECT_DOUBLE_EQ(c.bytesRead, (32 + 8 + 8) * 4);
  EXPECT_DOUBLE_EQ(c.bytesWritten, (32 + 4 + 4) * 4);
  const std::vector<TensorMeta> outs = outputMetas(g, ln, OpRegistry::global());
  ASSERT_EQ(outs.size(), 3u);
  EXPECT_EQ(outs[2].sizes[1].value, 1);
  const OpCost v = estimateCost(g, vm);
  EXPECT_DOUBLE_EQ(v.flops, 4 * 32);
  EXPECT_DOUBLE_EQ(v.bytesWritten, 2 * 4 * 4);
}

TEST(OpCostTest, ViewsAndHostOpsAreFree) {
  Builder b;
  const NodeId big = b.input("big", tensor(DType::F32, {1024, 1024}));
  const NodeId view =
      b.call("torch.ops.aten.view.default", {node(big), ints({1024 * 1024})}, tensor(DType::F32, {1024 * 1024}));
  const NodeId permute = b.call("permute", {node(big), Arg::ofInt(1), Arg::ofInt(0)}, tensor(DType::F32, {1024, 1024}),
                                {}, NodeKind::CallMethod);
  const NodeId size = b.call("torch.ops.aten.sym_size.int", {node(big), Arg::ofInt(0)});
  const Graph& g = b.finish();
  for (NodeId id : {view, permute, size}) {
    const OpCost c = estimateCost(g, id);
    EXPECT_EQ(c.flops, 0);
    EXPECT_EQ(c.bytesRead, 0);
    EXPECT_EQ(c.bytesWritten, 0);
  }
}

TEST(OpCostTest, GatherReadsOnlyTheRowsItUses) {
  Builder b;
  const NodeId table = b.input("table", tensor(DType::BF16, {1000, 64}));
  const NodeId ids = b.input("ids", tensor(DType::I64, {2, 16}));
  const NodeId emb =
      b.call("torch.ops.aten.embedding.default", {node(table), node(ids)}, tensor(DType::BF16, {2, 16, 64}));
  const Graph& g = b.finish();
  const OpCost c = estimateCost(g, emb);
  EXPECT_DOUBLE_EQ(c.flops, 0);
  EXPECT_DOUBLE_EQ(c.bytesRead, 2 * 16 * 8 + 2 * 16 * 64 * 2);
  EXPECT_DOUBLE_EQ(c.bytesWritten, 2 * 16 * 64 * 2);
}

TEST(OpCostTest, CreationRandomAndCollectives) {
  Builder b;
  const NodeId x = b.input("x", tensor(DType::BF16, {1024}));
  const NodeId full =
      b.call("torch.ops.aten.full.default", {ints({1024}), Arg::ofFloat(0.0)}, tensor(DType::F32, {1024}));
  const NodeId empty = b.call("torch.ops.aten.empty.memory_format", {ints({1024})}, tensor(DType::F32, {1024}));
  const NodeId zerosLike = b.call("torch.ops.aten.zeros_like.default", {node(x)}, tensor(DType::BF16, {1024}));
  const NodeId dropout =
      b.call("torch.ops.aten.native_dropout.default", {node(x), Arg::ofFloat(0.1), Arg::ofBool(true)});
  b.getitem(dropout, 0, tensor(DType::BF16, {1024}));
  b.getitem(dropout, 1, tensor(DType::Bool, {1024}));
  const NodeId gather = b.call("torch.ops._c10d_functional.all_gather_into_tensor.default",
                               {node(x), Arg::ofInt(2), Arg::ofInt(0)}, tensor(DType::BF16, {2048}));
  const NodeId reduce = b.call("torch.ops._c10d_functional.all_reduce.default", {node(x), Arg::ofInt(0), Arg::ofInt(0)},
                               tensor(DType::BF16, {1024}));
  const NodeId waited =
      b.call("torch.ops._c10d_functional.wait_tensor.default", {node(gather)}, tensor(DType::BF16, {2048}));
  const Graph& g = b.finish();
  EXPECT_DOUBLE_EQ(estimateCost(g, full).bytesWritten, 4096);
  EXPECT_DOUBLE_EQ(estimateCost(g, full).bytesRead, 0);
  EXPECT_DOUBLE_EQ(estimateCost(g, empty).bytesWritten, 0);
  EXPECT_DOUBLE_EQ(estimateCost(g, zerosLike).bytesRead, 0);  // reads only the metadata of x
  const OpCost d = estimateCost(g, dropout);
  EXPECT_DOUBLE_EQ(d.flops, 3 * 1024);
  EXPECT_DOUBLE_EQ(d.bytesRead, 2048);
  EXPECT_DOUBLE_EQ(d.bytesWritten, 2048 + 1024);
  const OpCost ag = estimateCost(g, gather);
  EXPECT_DOUBLE_EQ(ag.flops, 0);
  EXPECT_DOUBLE_EQ(ag.commBytes, 4096);
  const OpCost ar = estimateCost(g, reduce);
  EXPECT_DOUBLE_EQ(ar.flops, 1024);
  EXPECT_DOUBLE_EQ(ar.commBytes, 2048);
  EXPECT_DOUBLE_EQ(estimateCost(g, waited).bytesRead, 0);
}

TEST(OpCostTest, UnknownOpsCostTheirBytesWithUnknownFlops) {
  Builder b;
  const NodeId x = b.input("x", tensor(DType::F32, {16}));
  const NodeId call = b.call("torch.ops.mylib.fancy.default", {node(x)}, tensor(DType::F32, {16}));
  const NodeId module = b.call("self.block", {node(x)}, tensor(DType::F32, {16}), {}, NodeKind::CallModule);
  const Graph& g = b.finish();
  for (NodeId id : {call, module}) {
    const OpCost c = estimateCost(g, id);
    EXPECT_FALSE(c.flopsKnown);
    EXPECT_DOUBLE_EQ(c.bytesRead, 64);
    EXPECT_DOUBLE_EQ(c.bytesWritten, 64);
  }
}

TEST(OpCostTest, SymbolicSizesUseTheirHints) {
  Builder b;
  TensorMeta a = tensor(DType::BF16, {64, 128});
  a.sizes[0] = SymDim{64, b.g.intern("s0"), true};
  TensorMeta unhinted = a;
  unhinted.sizes[0] = SymDim{0, b.g.intern("u0"), false};
  const NodeId x = b.input("x", a);
  const NodeId y = b.input("y", unhinted);
  const NodeId w = b.input("w", tensor(DType::BF16, {128, 32}));
  const NodeId hinted = b.call("torch.ops.aten.mm.default", {node(x), node(w)}, tensor(DType::BF16, {64, 32}));
  const NodeId open = b.call("torch.ops.aten.mm.default", {node(y), node(w)});
  const Graph& g = b.finish();
  const OpCost h = estimateCost(g, hinted);
  EXPECT_DOUBLE_EQ(h.flops, 2.0 * 64 * 32 * 128);
  EXPECT_TRUE(h.sizesHinted);
  const OpCost o = estimateCost(g, open);
  EXPECT_DOUBLE_EQ(o.flops, 0);
  EXPECT_FALSE(o.sizesHinted);
}

TEST(OpCostTest, StridedInputsReadTheirStorageExtent) {
  Builder b;
  TensorMeta transposed = tensor(DType::F32, {8, 4});
  transposed.strides = {SymDim{1}, SymDim{8}};  // a transpose of a contiguous [4, 8]
  TensorMeta expanded = tensor(DType::F32, {8, 4});
  expanded.strides = {SymDim{0}, SymDim{1}};  // one row broadcast 8 times
  const NodeId t = b.input("t", transposed);
  const NodeId e = b.input("e", expanded);
  const NodeId add = b.call("torch.ops.aten.add.Tensor", {node(t), node(e)}, tensor(DType::F32, {8, 4}));
  const Graph& g = b.finish();
  EXPECT_DOUBLE_EQ(estimateCost(g, add).bytesRead, 32 * 4 + 4 * 4);
}

// --- run-time flags ------------------------------------------------------------------------------

TEST(OpFlagsTest, SetFlagsMakesACustomEntry) {
  OpRegistry registry;
  EXPECT_EQ(registry.lookup("torch.ops.athena.flash_attn.default").category, OpCategory::Unknown);
  OpFlags flags;
  flags.computeSensitive = true;
  flags.subgraphBoundary = true;
  registry.setFlags("athena::flash_attn", flags);
  const OpInfo& info = registry.lookup("torch.ops.athena.flash_attn.default");
  EXPECT_EQ(info.category, OpCategory::Custom);
  EXPECT_TRUE(info.computeSensitive);
  EXPECT_TRUE(info.subgraphBoundary);
  EXPECT_FALSE(info.builtIn);
  EXPECT_EQ(registry.flaggedTargets(), std::vector<std::string>{"athena.flash_attn"});
  // Other registries, the global one included, are untouched.
  EXPECT_EQ(lookupOp("athena.flash_attn").category, OpCategory::Unknown);
}

TEST(OpFlagsTest, PacketFlagsReachOverloadsAndOverloadFlagsStayLocal) {
  OpRegistry registry;
  const OpInfo& before = registry.lookup("aten.max.other");
  OpFlags boundary;
  boundary.subgraphBoundary = true;
  registry.setFlags("aten.max", boundary);
  EXPECT_TRUE(registry.lookup("aten.max.dim").subgraphBoundary);
  const OpInfo& other = registry.lookup("torch.ops.aten.max.other");
  EXPECT_TRUE(other.subgraphBoundary);
  EXPECT_EQ(other.category, OpCategory::Pointwise);  // the overload's own line still decides the rest
  EXPECT_FALSE(before.subgraphBoundary);             // references handed out earlier stay valid

  OpFlags sensitive;
  sensitive.computeSensitive = true;
  registry.setFlags("torch.ops.aten.add.Tensor", sensitive);
  EXPECT_TRUE(registry.lookup("torch.ops.aten.add.Tensor").computeSensitive);
  EXPECT_FALSE(registry.lookup("torch.ops.aten.add.Scalar").computeSensitive);
  EXPECT_EQ(registry.lookup("torch.ops.aten.add.Tensor").category, OpCategory::Pointwise);
  EXPECT_TRUE(registry.lookup("aten.max.dim").subgraphBoundary);  // earlier flags survive later ones
}

TEST(OpFlagsTest, LoadsMagiCompilerStyleJson) {
  OpRegistry registry;
  Diagnostics diags;
  const std::string json = R"({
  "athena.flash_attn": {"compute_sensitive": true, "subgraph_boundary": true,
                        "like": "aten._scaled_dot_product_flash_attention"},
  "transformers::grouped_mm_fallback": {"like": "aten._grouped_mm"},
  "mylib.rope": {"is_compute_sensitive": false, "infer_output_meta": ["q", 1]},
  "mylib.norm": {"category": "normalization", "fusible": true, "infer_output_meta": 2},
  "mylib.bad": {"compute_sensitive": "yes", "colour": "red", "category": "fancy"},
  "mylib.worse": 7,
  "torch.ops.": {"fusible": true}
})";
  registry.loadFlagsJson(json, "flags.json", diags);

  const OpInfo& flash = registry.lookup("torch.ops.athena.flash_attn.default");
  EXPECT_EQ(flash.category, OpCategory::Attention);
  EXPECT_EQ(flash.formula, CostFormula::Attention);
  EXPECT_TRUE(flash.computeSensitive);
  EXPECT_TRUE(flash.subgraphBoundary);
  EXPECT_EQ(registry.lookup("torch.ops.transformers.grouped_mm_fallback.default").formula, CostFormula::GroupedMatmul);
  const OpInfo& rope = registry.lookup("mylib.rope");
  EXPECT_EQ(rope.category, OpCategory::Custom);
  EXPECT_FALSE(rope.computeSensitive);
  ASSERT_EQ(rope.outputMeta.kind, OutputMetaRule::Kind::Arguments);
  ASSERT_EQ(rope.outputMeta.arguments.size(), 2u);
  EXPECT_EQ(rope.outputMeta.arguments[0].keyword, "q");
  EXPECT_EQ(rope.outputMeta.arguments[1].position, 1);
  const OpInfo& norm = registry.lookup("mylib.norm");
  EXPECT_EQ(norm.category, OpCategory::Normalization);
  EXPECT_TRUE(norm.fusible);
  EXPECT_EQ(norm.outputMeta.kind, OutputMetaRule::Kind::FirstTensorArgs);
  EXPECT_EQ(norm.outputMeta.count, 2u);

  // Damage is reported with the line it is on, and loading went on.
  EXPECT_EQ(diags.countCode("op_flags_bad_value"), 2u);
  EXPECT_EQ(diags.countCode("op_flags_unknown_key"), 1u);
  EXPECT_EQ(diags.countCode("op_flags_not_object"), 1u);
  EXPECT_EQ(diags.countCode("op_flags_empty_name"), 1u);
  for (const auto& d : diags.items()) {
    EXPECT_EQ(d.where.file, "flags.json");
    const uint64_t line = d.code == "op_flags_not_object" ? 8 : d.code == "op_flags_empty_name" ? 9 : 7;
    EXPECT_EQ(d.where.line, line) << d.message;
  }
  EXPECT_EQ(registry.flaggedTargets().size(), 5u);
  EXPECT_EQ(registry.lookup("mylib.bad").category, OpCategory::Custom);  // its good parts still apply
}

TEST(OpFlagsTest, LikeGivesACustomKernelACost) {
  OpRegistry registry;
  OpFlags flags;
  flags.like = "aten._scaled_dot_product_flash_attention";
  flags.computeSensitive = true;
  registry.setFlags("athena.flash_attn", flags);
  Builder b;
  const TensorMeta qkv = tensor(DType::BF16, {1, 4, 32, 16});
  const NodeId q = b.input("q", qkv), k = b.input("k", qkv), v = b.input("v", qkv);
  const NodeId call = b.call("torch.ops.athena.flash_attn.default", {node(q), node(k), node(v)}, qkv);
  const Graph& g = b.finish();
  const OpCost c = estimateCost(g, call, registry);
  EXPECT_TRUE(c.flopsKnown);
  EXPECT_DOUBLE_EQ(c.flops, 4.0 * 1 * 4 * 32 * 32 * 16);
  EXPECT_FALSE(estimateCost(g, call).flopsKnown);  // the global registry does not know the op
}

TEST(OpFlagsTest, OutputMetaRuleShapesUnrecordedOutputs) {
  OpRegistry registry;
  Diagnostics diags;
  registry.loadFlagsJson(R"({"mylib.rope": {"infer_output_meta": ["k", 0]}, "mylib.pair": {"infer_output_meta": 2}})",
                         "inline", diags);
  EXPECT_TRUE(diags.empty());
  Builder b;
  const NodeId q = b.input("q", tensor(DType::BF16, {2, 8}));
  const NodeId k = b.input("k", tensor(DType::F32, {4, 8}));
  const NodeId rope = b.call("torch.ops.mylib.rope.default", {node(q)}, {}, {{"k", node(k)}});
  const NodeId pair = b.call("torch.ops.mylib.pair.default", {Arg::ofInt(3), node(q), node(k)});
  const Graph& g = b.finish();
  const std::vector<TensorMeta> outs = outputMetas(g, rope, registry);
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[0].dtype, DType::F32);
  EXPECT_EQ(outs[1].dtype, DType::BF16);
  EXPECT_DOUBLE_EQ(estimateCost(g, rope, registry).bytesWritten, 4 * 8 * 4 + 2 * 8 * 2);
  EXPECT_DOUBLE_EQ(estimateCost(g, pair, registry).bytesWritten, 2 * 8 * 2 + 4 * 8 * 4);
  EXPECT_TRUE(outputMetas(g, rope, OpRegistry::global()).empty());  // recorded-only by default
}

TEST(OpFlagsTest, TextThatIsNotAnObjectThrowsBadInput) {
  OpRegistry registry;
  Diagnostics diags;
  try {
    registry.loadFlagsJson("{\n  \"a.b\": {\"fusible\": true},\n  oops\n}", "broken.json", diags);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput);
    EXPECT_EQ(e.where().file, "broken.json");
    EXPECT_EQ(e.where().line, 3u);
  }
  EXPECT_THROW(registry.loadFlagsJson("[1, 2]", "array.json", diags), Error);
  EXPECT_THROW(registry.loadFlagsJson("", "empty.json", diags), Error);
  EXPECT_THROW(registry.loadFlagsJson(R"({"a.b": {"fusible": 1e999}})", "overflow.json", diags), Error);
  EXPECT_TRUE(registry.flaggedTargets().empty());  // nothing applied half-way
  EXPECT_THROW(registry.loadFlagsFile("/nonexistent/flags.json", diags), Error);
}

TEST(OpFlagsTest, LookupsRunConcurrentlyWithSetFlags) {
  OpRegistry registry;
  constexpr size_t kLookups = 5000;
  std::atomic<size_t> matmuls{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t)
    readers.emplace_back([&] {
      for (size_t i = 0; i < kLookups; ++i)
        if (registry.lookup("torch.ops.aten.mm.default").category == OpCategory::Matmul) matmuls.fetch_add(1);
    });
  for (int i = 0; i < 200; ++i) {
    OpFlags flags;
    flags.subgraphBoundary = (i % 2) == 0;
    registry.setFlags("aten.mm", flags);
    registry.setFlags("custom.op" + std::to_string(i % 7), flags);
  }
  for (auto& t : readers) t.join();
  EXPECT_EQ(matmuls.load(), 3 * kLookups);                    // every lookup saw a whole entry
  EXPECT_FALSE(registry.lookup("aten.mm").subgraphBoundary);  // the last write (i = 199) wins
}

// --- real captures ------------------------------------------------------------------------------

// The payload of the first structured-log record of this kind: the tab-indented lines after it.
std::string tracePayload(const std::filesystem::path& log, std::string_view kind) {
  InputFile in(log);
  LineReader reader(in);
  std::string_view line;
  const std::string key = "{\"" + std::string(kind) + "\"";
  bool inside = false;
  std::string payload;
  while (reader.next(line)) {
    if (!inside) {
      inside = line.find(key) != std::string_view::npos;
      continue;
    }
    if (!line.starts_with('\t')) break;
    payload.append(line.substr(1)).push_back('\n');
  }
  return payload;
}

struct ComputeTotals {
  double matmul = 0, attention = 0, convolution = 0;
};

ComputeTotals computeTotals(const Graph& g) {
  ComputeTotals t;
  for (NodeId id = 0; id < g.size(); ++id) {
    const OpCost c = estimateCost(g, id);
    EXPECT_TRUE(c.sizesHinted) << g.name(id);
    switch (lookupOp(g.target(id)).category) {
      case OpCategory::Matmul: t.matmul += c.flops; break;
      case OpCategory::Attention: t.attention += c.flops; break;
      case OpCategory::Convolution: t.convolution += c.flops; break;
      default: break;
    }
  }
  return t;
}

// Tiny Llama (hidden 256, FFN 512, 8 heads of 32, 2 KV heads, vocab 1000, 2 layers, seq 64), its
// AOT forward and backward graphs as torch partitioned them. Expected FLOPs from the model shape.
TEST(OpSamples, TinyLlamaTrainingStepFlops) {
  const std::filesystem::path log =
      std::filesystem::path(LATHE_SAMPLES_DIR) / "captures/llama3_8b_2l_tiny_train.log.gz";
  if (!std::filesystem::exists(log)) GTEST_SKIP() << "no sample " << log;
  constexpr double S = 64, Hd = 256, Kv = 64, Ffn = 512, Vocab = 1000, Layers = 2;
  const double projections = 2 * S * Hd * (Hd + Kv + Kv + Hd);  // q, k, v, o
  const double mlp = 2 * S * Hd * Ffn * 3;                      // gate, up, down
  const double lmHead = 2 * S * Hd * Vocab;
  const double rope = 2 * 16 * S * 1;           // inv_freq [16, 1] @ positions [1, 64]
  const double attention = 4 * 8 * S * S * 32;  // masked, not is_causal: full
  Diagnostics diags;
  for (const char* kind : {"aot_forward_graph", "aot_backward_graph"}) {
    const std::string text = tracePayload(log, kind);
    ASSERT_FALSE(text.empty()) << kind;
    const auto graph = io::parseFxText(text, {}, diags);
    ASSERT_TRUE(graph) << kind;
    const ComputeTotals t = computeTotals(*graph);
    if (std::string_view(kind) == "aot_forward_graph") {
      EXPECT_DOUBLE_EQ(t.matmul, Layers * (projections + mlp) + lmHead + rope);
      EXPECT_DOUBLE_EQ(t.attention, Layers * attention);
    } else {  // every weight matmul twice (input and weight gradient), attention 2.5x
      EXPECT_DOUBLE_EQ(t.matmul, 2 * (Layers * (projections + mlp) + lmHead));
      EXPECT_DOUBLE_EQ(t.attention, Layers * 2.5 * attention);
    }
  }
}

// timm ViT-tiny patch embedding: a 16x16/16 convolution of a 224x224 image to 192 channels.
TEST(OpSamples, VitPatchEmbeddingConvolution) {
  const std::filesystem::path log = std::filesystem::path(LATHE_SAMPLES_DIR) / "captures/vit_b16_tiny_train.log.gz";
  if (!std::filesystem::exists(log)) GTEST_SKIP() << "no sample " << log;
  Diagnostics diags;
  const double forward = 2.0 * 192 * 14 * 14 * 3 * 16 * 16;
  const auto fw = io::parseFxText(tracePayload(log, "aot_forward_graph"), {}, diags);
  const auto bw = io::parseFxText(tracePayload(log, "aot_backward_graph"), {}, diags);
  ASSERT_TRUE(fw && bw);
  EXPECT_DOUBLE_EQ(computeTotals(*fw).convolution, forward);
  EXPECT_DOUBLE_EQ(computeTotals(*bw).convolution, forward);  // output_mask [False, True, False]
}

// Every op target that the sample TORCH_TRACE captures contain is known to the registry.
TEST(OpSamples, EveryOpInTheCapturesIsKnown) {
  const std::filesystem::path captures = std::filesystem::path(LATHE_SAMPLES_DIR) / "captures";
  if (!std::filesystem::exists(captures)) GTEST_SKIP() << "no samples at " << captures;
  std::set<std::string> targets;
  auto isNameChar = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
  for (const char* file : {"llama3_8b_2l_tiny_train.log.gz", "mixtral_2l_tiny_train.log.gz", "gpt2_tiny_train.log.gz",
                           "vit_b16_tiny_train.log.gz"}) {
    InputFile in(captures / file);
    LineReader reader(in);
    std::string_view line;
    while (reader.next(line)) {
      if (line.find("# File:") != std::string_view::npos) continue;  // user source quoted in a comment
      // Printed calls: `= torch.ops.aten.mm.default(` (AOT/post-grad) and `= torch._C._nn.linear(` (Dynamo).
      for (size_t pos = line.find("= torch."); pos != std::string_view::npos; pos = line.find("= torch.", pos + 1)) {
        size_t end = pos + 2;
        while (end < line.size() && isNameChar(line[end])) ++end;
        if (end < line.size() && line[end] == '(') targets.insert(std::string(line.substr(pos + 2, end - pos - 2)));
      }
    }
  }
  ASSERT_GT(targets.size(), 60u);
  std::vector<std::string> unknown;
  for (const auto& t : targets)
    if (lookupOp(t).category == OpCategory::Unknown) unknown.push_back(t);
  EXPECT_TRUE(unknown.empty()) << "unknown: " << testing::PrintToString(unknown);
}

}  // namespace

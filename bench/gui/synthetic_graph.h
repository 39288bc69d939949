// A big graph of replicated layers for the graph view's benchmark and tests: a Mixtral-like
// decoder (embedding, then per layer an RMS norm, attention with rotary embedding, a router and
// `experts` SwiGLU experts, residual adds; a final norm and the LM head), every node with the module
// path torch.export would record. 88 layers of 64 experts make about 100k nodes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace lathe::bench {

class SyntheticDecoder {
 public:
  [[nodiscard]] static std::shared_ptr<const ir::Graph> build(int layers, int experts) {
    SyntheticDecoder builder;
    return builder.make(layers, experts);
  }

 private:
  std::shared_ptr<ir::Graph> graph_ = std::make_shared<ir::Graph>();
  std::string module_;
  int counter_ = 0;

  ir::TensorMeta tensor(std::vector<int64_t> sizes) {
    ir::TensorMeta meta;
    meta.kind = ir::ValueKind::Tensor;
    meta.dtype = ir::DType::BF16;
    for (const int64_t size : sizes) meta.sizes.push_back(ir::SymDim{size, 0, true});
    return meta;
  }

  ir::NodeId add(ir::NodeKind kind, const std::string& target, std::vector<ir::NodeId> inputs,
                 std::vector<int64_t> sizes, ir::Role role = ir::Role::Unknown) {
    ir::Node node;
    node.kind = kind;
    node.role = role;
    const size_t opEnd = target.rfind('.');
    const size_t opStart = target.rfind('.', opEnd - 1);
    const std::string base =
        kind == ir::NodeKind::Placeholder ? "primals" : target.substr(opStart + 1, opEnd - opStart - 1);
    node.name = graph_->intern(base + "_" + std::to_string(counter_++));
    if (kind != ir::NodeKind::Placeholder) node.target = graph_->intern(target);
    for (const ir::NodeId input : inputs) node.args.push_back(ir::Arg::ofNode(input));
    node.meta = tensor(std::move(sizes));
    if (!module_.empty()) node.provenance.modulePath = graph_->intern(module_);
    return graph_->addNode(std::move(node));
  }
  ir::NodeId op(const std::string& aten, std::vector<ir::NodeId> inputs, std::vector<int64_t> sizes) {
    return add(ir::NodeKind::CallFunction, "torch.ops.aten." + aten, std::move(inputs), std::move(sizes));
  }
  ir::NodeId weight(std::vector<int64_t> sizes) {
    return add(ir::NodeKind::Placeholder, {}, {}, std::move(sizes), ir::Role::Parameter);
  }

  ir::NodeId linear(const std::string& module, ir::NodeId x, int64_t in, int64_t out) {
    const std::string outer = module_;
    module_ = module;
    const ir::NodeId w = weight({out, in});
    const ir::NodeId t = op("t.default", {w}, {in, out});
    const ir::NodeId y = op("mm.default", {x, t}, {2048, out});
    module_ = outer;
    return y;
  }

  ir::NodeId rmsNorm(const std::string& module, ir::NodeId x) {
    const std::string outer = module_;
    module_ = module;
    const ir::NodeId w = weight({4096});
    const ir::NodeId f = op("_to_copy.default", {x}, {2048, 4096});
    const ir::NodeId p = op("pow.Tensor_Scalar", {f}, {2048, 4096});
    const ir::NodeId m = op("mean.dim", {p}, {2048, 1});
    const ir::NodeId a = op("add.Tensor", {m}, {2048, 1});
    const ir::NodeId r = op("rsqrt.default", {a}, {2048, 1});
    const ir::NodeId n = op("mul.Tensor", {f, r}, {2048, 4096});
    const ir::NodeId y = op("mul.Tensor", {w, n}, {2048, 4096});
    module_ = outer;
    return y;
  }

  ir::NodeId rotary(ir::NodeId x, ir::NodeId cos, ir::NodeId sin) {
    const ir::NodeId a = op("mul.Tensor", {x, cos}, {2048, 4096});
    const ir::NodeId lo = op("slice.Tensor", {x}, {2048, 2048});
    const ir::NodeId hi = op("slice.Tensor", {x}, {2048, 2048});
    const ir::NodeId neg = op("neg.default", {hi}, {2048, 2048});
    const ir::NodeId rot = op("cat.default", {neg, lo}, {2048, 4096});
    const ir::NodeId b = op("mul.Tensor", {rot, sin}, {2048, 4096});
    return op("add.Tensor", {a, b}, {2048, 4096});
  }

  ir::NodeId layer(int index, int experts, ir::NodeId x, ir::NodeId cos, ir::NodeId sin) {
    const std::string path = "model.layers." + std::to_string(index);
    module_ = path;
    const ir::NodeId h = rmsNorm(path + ".input_layernorm", x);
    module_ = path + ".self_attn";
    const ir::NodeId q = rotary(linear(module_ + ".q_proj", h, 4096, 4096), cos, sin);
    const ir::NodeId k = rotary(linear(module_ + ".k_proj", h, 4096, 4096), cos, sin);
    const ir::NodeId v = linear(module_ + ".v_proj", h, 4096, 4096);
    const ir::NodeId attention = op("_scaled_dot_product_flash_attention.default", {q, k, v}, {2048, 4096});
    const ir::NodeId context = add(ir::NodeKind::CallFunction, "operator.getitem", {attention}, {2048, 4096});
    const ir::NodeId o = linear(module_ + ".o_proj", context, 4096, 4096);
    module_ = path;
    const ir::NodeId residual = op("add.Tensor", {x, o}, {2048, 4096});
    const ir::NodeId g = rmsNorm(path + ".post_attention_layernorm", residual);
    const std::string moe = path + ".block_sparse_moe";
    module_ = moe;
    const ir::NodeId logits = linear(moe + ".gate", g, 4096, static_cast<int64_t>(experts));
    const ir::NodeId routing = op("_softmax.default", {logits}, {2048, experts});
    const ir::NodeId topk = op("topk.default", {routing}, {2048, 2});
    ir::NodeId sum = ir::kNoNode;
    for (int e = 0; e < experts; ++e) {
      const std::string expert = moe + ".experts." + std::to_string(e);
      module_ = expert;
      const ir::NodeId mask = op("eq.Scalar", {topk}, {2048, 2});
      const ir::NodeId tokens = op("index.Tensor", {g, mask}, {64, 4096});
      const ir::NodeId gate = linear(expert + ".w1", tokens, 4096, 14336);
      const ir::NodeId act = op("silu.default", {gate}, {64, 14336});
      const ir::NodeId up = linear(expert + ".w3", tokens, 4096, 14336);
      const ir::NodeId both = op("mul.Tensor", {act, up}, {64, 14336});
      const ir::NodeId down = linear(expert + ".w2", both, 14336, 4096);
      const ir::NodeId scaled = op("mul.Tensor", {down, routing}, {64, 4096});
      module_ = moe;
      sum = sum == ir::kNoNode ? op("index_add.default", {scaled}, {2048, 4096})
                               : op("index_add.default", {sum, scaled}, {2048, 4096});
    }
    module_ = path;
    return op("add.Tensor", {residual, sum}, {2048, 4096});
  }

  std::shared_ptr<const ir::Graph> make(int layers, int experts) {
    const ir::NodeId tokens = add(ir::NodeKind::Placeholder, {}, {}, {2048}, ir::Role::UserInput);
    module_ = "model.embed_tokens";
    ir::NodeId x = op("embedding.default", {weight({32000, 4096}), tokens}, {2048, 4096});
    module_ = "model.rotary_emb";
    const ir::NodeId positions = op("arange.default", {}, {2048});
    const ir::NodeId cos = op("cos.default", {positions}, {2048, 4096});
    const ir::NodeId sin = op("sin.default", {positions}, {2048, 4096});
    for (int index = 0; index < layers; ++index) x = layer(index, experts, x, cos, sin);
    const ir::NodeId normed = rmsNorm("model.norm", x);
    const ir::NodeId logits = linear("lm_head", normed, 4096, 32000);
    module_.clear();
    ir::Node output;
    output.kind = ir::NodeKind::Output;
    output.name = graph_->intern("output");
    output.target = graph_->intern("output");
    output.args.push_back(ir::Arg::ofNode(logits));
    graph_->addNode(std::move(output));
    graph_->finalize();
    return graph_;
  }
};

}  // namespace lathe::bench

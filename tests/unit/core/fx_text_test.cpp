// FX readable graph text: parsing every flavour, printing, equality. Graph texts marked "from
// captures/..." are copied from our own TORCH_TRACE captures (samples/captures, torch 2.11); the
// others are written here in the same format for flavours our captures do not contain. Every graph
// of every TORCH_TRACE sample is parsed too, and what it parses to counted against its text.
#include "io/fx/fx_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <unordered_map>

#include "io/trace/trace_log.h"

using namespace lathe;
using namespace lathe::ir;
using lathe::io::FxParseOptions;
using lathe::io::graphsEqual;
using lathe::io::parseFxText;
using lathe::io::printFxText;

namespace {

// --- from captures/gpt2_tiny_train.log.gz: the loss graph (second compile) at each stage ---

// dynamo_output_graph
constexpr std::string_view kGpt2LossDynamo = R"fx(class GraphModule(torch.nn.Module):
    def forward(self, L_logits_: "bf16[1, 64, 1000][64000, 1000, 1]cuda:0", L_labels_: "i64[1, 64][64, 1]cuda:0"):
        l_logits_ = L_logits_
        l_labels_ = L_labels_

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:59 in ForCausalLMLoss, code: logits = logits.float()
        logits: "f32[1, 64, 1000][64000, 1000, 1]cuda:0" = l_logits_.float();  l_logits_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/functional.py:5430 in pad, code: return torch._C._nn.pad(input, pad, mode, value)
        labels: "i64[1, 65][65, 1]cuda:0" = torch._C._nn.pad(l_labels_, (0, 1), 'constant', -100);  l_labels_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:64 in ForCausalLMLoss, code: shift_labels = labels[..., 1:].contiguous()
        getitem: "i64[1, 64][65, 1]cuda:0" = labels[(Ellipsis, slice(1, None, None))];  labels = None
        shift_labels: "i64[1, 64][65, 1]cuda:0" = getitem.contiguous();  getitem = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:67 in ForCausalLMLoss, code: logits = logits.view(-1, vocab_size)
        logits_1: "f32[64, 1000][1000, 1]cuda:0" = logits.view(-1, 1000);  logits = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:68 in ForCausalLMLoss, code: shift_labels = shift_labels.view(-1)
        shift_labels_1: "i64[64][1]cuda:0" = shift_labels.view(-1);  shift_labels = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:69 in ForCausalLMLoss, code: shift_labels = shift_labels.to(logits.device)
        shift_labels_2: "i64[64][1]cuda:0" = shift_labels_1.to(device(type='cuda', index=0));  shift_labels_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:40 in fixed_cross_entropy, code: loss = nn.functional.cross_entropy(source, target, ignore_index=ignore_index, reduction=reduction)
        loss: "f32[][]cuda:0" = torch.nn.functional.cross_entropy(logits_1, shift_labels_2, ignore_index = -100, reduction = 'mean');  logits_1 = shift_labels_2 = None
        return (loss,)
)fx";

// aot_joint_graph
constexpr std::string_view kGpt2LossJoint = R"fx(class inner_f(torch.nn.Module):
    def forward(
        self,
        primals,
        tangents,
    ):
        primals_1: "bf16[1, 64, 1000][64000, 1000, 1]cuda:0"  # PlainAOTInput(idx=0)
        primals_2: "i64[1, 64][64, 1]cuda:0"  # PlainAOTInput(idx=1)
        tangents_1: "f32[][]cuda:0"  # TangentAOTInput(output=PlainAOTOutput(idx=0))
        primals_1, primals_2, tangents_1, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)
        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:59 in ForCausalLMLoss, code: logits = logits.float()
        convert_element_type: "f32[1, 64, 1000][64000, 1000, 1]cuda:0" = torch.ops.prims.convert_element_type.default(primals_1, torch.float32);  primals_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/functional.py:5430 in pad, code: return torch._C._nn.pad(input, pad, mode, value)
        constant_pad_nd: "i64[1, 65][65, 1]cuda:0" = torch.ops.aten.constant_pad_nd.default(primals_2, [0, 1], -100.0);  primals_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:64 in ForCausalLMLoss, code: shift_labels = labels[..., 1:].contiguous()
        slice_1: "i64[1, 64][65, 1]cuda:0" = torch.ops.aten.slice.Tensor(constant_pad_nd, 1, 1, 9223372036854775807);  constant_pad_nd = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:67 in ForCausalLMLoss, code: logits = logits.view(-1, vocab_size)
        view: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.view.default(convert_element_type, [-1, 1000]);  convert_element_type = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:68 in ForCausalLMLoss, code: shift_labels = shift_labels.view(-1)
        view_1: "i64[64][1]cuda:0" = torch.ops.aten.view.default(slice_1, [-1]);  slice_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:40 in fixed_cross_entropy, code: loss = nn.functional.cross_entropy(source, target, ignore_index=ignore_index, reduction=reduction)
        amax: "f32[64, 1][1, 1]cuda:0" = torch.ops.aten.amax.default(view, [1], True)
        sub: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.sub.Tensor(view, amax);  view = amax = None
        exp: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.exp.default(sub)
        sum_1: "f32[64, 1][1, 1]cuda:0" = torch.ops.aten.sum.dim_IntList(exp, [1], True);  exp = None
        log: "f32[64, 1][1, 1]cuda:0" = torch.ops.aten.log.default(sum_1);  sum_1 = None
        sub_1: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.sub.Tensor(sub, log);  sub = log = None
        alias: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.alias.default(sub_1)
        ne: "b8[64][1]cuda:0" = torch.ops.aten.ne.Scalar(view_1, -100)
        scalar_tensor: "i64[][]cuda:0" = torch.ops.aten.scalar_tensor.default(0, dtype = torch.int64, layout = torch.strided, device = device(type='cuda', index=0))
        where: "i64[64][1]cuda:0" = torch.ops.aten.where.self(ne, view_1, scalar_tensor);  ne = scalar_tensor = None
        unsqueeze: "i64[64, 1][1, 1]cuda:0" = torch.ops.aten.unsqueeze.default(where, 1);  where = None
        gather: "f32[64, 1][1, 1]cuda:0" = torch.ops.aten.gather.default(sub_1, 1, unsqueeze);  sub_1 = unsqueeze = None
        squeeze: "f32[64][1]cuda:0" = torch.ops.aten.squeeze.dim(gather, 1);  gather = None
        neg: "f32[64][1]cuda:0" = torch.ops.aten.neg.default(squeeze);  squeeze = None
        ne_1: "b8[64][1]cuda:0" = torch.ops.aten.ne.Scalar(view_1, -100)
        scalar_tensor_1: "f32[][]cuda:0" = torch.ops.aten.scalar_tensor.default(0, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0))
        where_1: "f32[64][1]cuda:0" = torch.ops.aten.where.self(ne_1, neg, scalar_tensor_1);  ne_1 = neg = scalar_tensor_1 = None
        ne_2: "b8[64][1]cuda:0" = torch.ops.aten.ne.Scalar(view_1, -100)
        sum_2: "i64[][]cuda:0" = torch.ops.aten.sum.default(ne_2);  ne_2 = None
        convert_element_type_1: "f32[][]cuda:0" = torch.ops.prims.convert_element_type.default(sum_2, torch.float32);  sum_2 = None
        sum_3: "f32[][]cuda:0" = torch.ops.aten.sum.default(where_1);  where_1 = None
        div: "f32[][]cuda:0" = torch.ops.aten.div.Tensor(sum_3, convert_element_type_1);  sum_3 = None
        div_1: "f32[][]cuda:0" = torch.ops.aten.div.Tensor(tangents_1, convert_element_type_1);  tangents_1 = convert_element_type_1 = None
        unsqueeze_1: "i64[64, 1][1, 1]cuda:0" = torch.ops.aten.unsqueeze.default(view_1, 1);  view_1 = None
        ne_3: "b8[64, 1][1, 1]cuda:0" = torch.ops.aten.ne.Scalar(unsqueeze_1, -100)
        scalar_tensor_2: "i64[][]cuda:0" = torch.ops.aten.scalar_tensor.default(0, dtype = torch.int64, layout = torch.strided, device = device(type='cuda', index=0))
        where_2: "i64[64, 1][1, 1]cuda:0" = torch.ops.aten.where.self(ne_3, unsqueeze_1, scalar_tensor_2);  ne_3 = scalar_tensor_2 = None
        full: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.full.default([64, 1000], 0, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0), pin_memory = False)
        scatter: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.scatter.value(full, 1, where_2, -1.0);  full = where_2 = None
        ne_4: "b8[64, 1][1, 1]cuda:0" = torch.ops.aten.ne.Scalar(unsqueeze_1, -100);  unsqueeze_1 = None
        scalar_tensor_3: "f32[][]cuda:0" = torch.ops.aten.scalar_tensor.default(0, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0))
        where_3: "f32[64, 1][1, 1]cuda:0" = torch.ops.aten.where.self(ne_4, div_1, scalar_tensor_3);  ne_4 = div_1 = scalar_tensor_3 = None
        mul: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.mul.Tensor(scatter, where_3);  scatter = where_3 = None
        alias_1: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.alias.default(alias);  alias = None
        exp_1: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.exp.default(alias_1);  alias_1 = None
        sum_4: "f32[64, 1][1, 1]cuda:0" = torch.ops.aten.sum.dim_IntList(mul, [1], True)
        mul_1: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.mul.Tensor(exp_1, sum_4);  exp_1 = sum_4 = None
        sub_2: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.sub.Tensor(mul, mul_1);  mul = mul_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:67 in ForCausalLMLoss, code: logits = logits.view(-1, vocab_size)
        view_2: "f32[1, 64, 1000][64000, 1000, 1]cuda:0" = torch.ops.aten.view.default(sub_2, [1, 64, 1000]);  sub_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:59 in ForCausalLMLoss, code: logits = logits.float()
        convert_element_type_2: "bf16[1, 64, 1000][64000, 1000, 1]cuda:0" = torch.ops.prims.convert_element_type.default(view_2, torch.bfloat16);  view_2 = None
        return pytree.tree_unflatten([
            div,  # PlainAOTOutput(idx=0)
            convert_element_type_2,  # GradAOTOutput(grad_of=PlainAOTInput(idx=0))
            None,  # None
        ], self._out_spec)
)fx";

// aot_forward_graph
constexpr std::string_view kGpt2LossForward = R"fx(class GraphModule(torch.nn.Module):
    def forward(
        self,
        primals_1: "bf16[1, 64, 1000][64000, 1000, 1]cuda:0",  # PlainAOTInput(idx=0)
        primals_2: "i64[1, 64][64, 1]cuda:0",  # PlainAOTInput(idx=1)
    ):
        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:59 in ForCausalLMLoss, code: logits = logits.float()
        convert_element_type: "f32[1, 64, 1000][64000, 1000, 1]cuda:0" = torch.ops.prims.convert_element_type.default(primals_1, torch.float32)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/torch/nn/functional.py:5430 in pad, code: return torch._C._nn.pad(input, pad, mode, value)
        constant_pad_nd: "i64[1, 65][65, 1]cuda:0" = torch.ops.aten.constant_pad_nd.default(primals_2, [0, 1], -100.0);  primals_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:64 in ForCausalLMLoss, code: shift_labels = labels[..., 1:].contiguous()
        slice_1: "i64[1, 64][65, 1]cuda:0" = torch.ops.aten.slice.Tensor(constant_pad_nd, 1, 1, 9223372036854775807)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:67 in ForCausalLMLoss, code: logits = logits.view(-1, vocab_size)
        view: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.view.default(convert_element_type, [-1, 1000]);  convert_element_type = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:68 in ForCausalLMLoss, code: shift_labels = shift_labels.view(-1)
        view_1: "i64[64][1]cuda:0" = torch.ops.aten.view.default(slice_1, [-1]);  slice_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:40 in fixed_cross_entropy, code: loss = nn.functional.cross_entropy(source, target, ignore_index=ignore_index, reduction=reduction)
        amax: "f32[64, 1][1, 1]cuda:0" = torch.ops.aten.amax.default(view, [1], True)
        sub: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.sub.Tensor(view, amax);  view = None
        exp: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.exp.default(sub)
        sum_1: "f32[64, 1][1, 1]cuda:0" = torch.ops.aten.sum.dim_IntList(exp, [1], True);  exp = None
        log: "f32[64, 1][1, 1]cuda:0" = torch.ops.aten.log.default(sum_1);  sum_1 = None
        sub_1: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.sub.Tensor(sub, log);  sub = None
        ne: "b8[64][1]cuda:0" = torch.ops.aten.ne.Scalar(view_1, -100)
        full_default: "i64[][]cuda:0" = torch.ops.aten.full.default([], 0, dtype = torch.int64, layout = torch.strided, device = device(type='cuda', index=0), pin_memory = False)
        where: "i64[64][1]cuda:0" = torch.ops.aten.where.self(ne, view_1, full_default);  view_1 = full_default = None
        unsqueeze: "i64[64, 1][1, 1]cuda:0" = torch.ops.aten.unsqueeze.default(where, 1);  where = None
        gather: "f32[64, 1][1, 1]cuda:0" = torch.ops.aten.gather.default(sub_1, 1, unsqueeze);  sub_1 = unsqueeze = None
        squeeze: "f32[64][1]cuda:0" = torch.ops.aten.squeeze.dim(gather, 1);  gather = None
        neg: "f32[64][1]cuda:0" = torch.ops.aten.neg.default(squeeze);  squeeze = None
        full_default_1: "f32[][]cuda:0" = torch.ops.aten.full.default([], 0.0, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0), pin_memory = False)
        where_1: "f32[64][1]cuda:0" = torch.ops.aten.where.self(ne, neg, full_default_1);  neg = full_default_1 = None
        sum_2: "i64[][]cuda:0" = torch.ops.aten.sum.default(ne);  ne = None
        convert_element_type_1: "f32[][]cuda:0" = torch.ops.prims.convert_element_type.default(sum_2, torch.float32);  sum_2 = None
        sum_3: "f32[][]cuda:0" = torch.ops.aten.sum.default(where_1);  where_1 = None
        div: "f32[][]cuda:0" = torch.ops.aten.div.Tensor(sum_3, convert_element_type_1);  sum_3 = None
        return (
            div,  # PlainAOTOutput(idx=0)
            primals_1,  # SavedForBackwardsAOTOutput(idx=0)
            constant_pad_nd,  # SavedForBackwardsAOTOutput(idx=1)
            amax,  # SavedForBackwardsAOTOutput(idx=2)
            log,  # SavedForBackwardsAOTOutput(idx=3)
            convert_element_type_1,  # SavedForBackwardsAOTOutput(idx=4)
        )
)fx";

// aot_backward_graph
constexpr std::string_view kGpt2LossBackward = R"fx(class GraphModule(torch.nn.Module):
    def forward(
        self,
        primals_1: "bf16[1, 64, 1000][64000, 1000, 1]cuda:0",  # PlainAOTInput(idx=0)
        constant_pad_nd: "i64[1, 65][65, 1]cuda:0",
        amax: "f32[64, 1][1, 1]cuda:0",
        log: "f32[64, 1][1, 1]cuda:0",
        convert_element_type_1: "f32[][]cuda:0",
        tangents_1: "f32[][]cuda:0",  # TangentAOTInput(output=PlainAOTOutput(idx=0))
    ):
        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:40 in fixed_cross_entropy, code: loss = nn.functional.cross_entropy(source, target, ignore_index=ignore_index, reduction=reduction)
        div_1: "f32[][]cuda:0" = torch.ops.aten.div.Tensor(tangents_1, convert_element_type_1);  tangents_1 = convert_element_type_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:64 in ForCausalLMLoss, code: shift_labels = labels[..., 1:].contiguous()
        slice_1: "i64[1, 64][65, 1]cuda:0" = torch.ops.aten.slice.Tensor(constant_pad_nd, 1, 1, 9223372036854775807);  constant_pad_nd = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:68 in ForCausalLMLoss, code: shift_labels = shift_labels.view(-1)
        view_1: "i64[64][1]cuda:0" = torch.ops.aten.view.default(slice_1, [-1]);  slice_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:40 in fixed_cross_entropy, code: loss = nn.functional.cross_entropy(source, target, ignore_index=ignore_index, reduction=reduction)
        unsqueeze_1: "i64[64, 1][1, 1]cuda:0" = torch.ops.aten.unsqueeze.default(view_1, 1);  view_1 = None
        ne_3: "b8[64, 1][1, 1]cuda:0" = torch.ops.aten.ne.Scalar(unsqueeze_1, -100)
        full_default: "i64[][]cuda:0" = torch.ops.aten.full.default([], 0, dtype = torch.int64, layout = torch.strided, device = device(type='cuda', index=0), pin_memory = False)
        where_2: "i64[64, 1][1, 1]cuda:0" = torch.ops.aten.where.self(ne_3, unsqueeze_1, full_default);  unsqueeze_1 = full_default = None

        # No stacktrace found for following nodes
        iota_default: "i64[1000][1]cuda:0" = torch.ops.prims.iota.default(1000, start = 0, step = 1, dtype = torch.int64, device = device(type='cuda', index=0), requires_grad = False)
        view_default: "i64[1, 1000][1000, 1]cuda:0" = torch.ops.aten.view.default(iota_default, [1, 1000]);  iota_default = None
        expand_default: "i64[64, 1000][1, 0]cuda:0" = torch.ops.aten.expand.default(where_2, [64, 1000]);  where_2 = None
        eq_tensor: "b8[64, 1000][1000, 1]cuda:0" = torch.ops.aten.eq.Tensor(expand_default, view_default);  expand_default = view_default = None
        scalar_tensor_default: "f32[][]cuda:0" = torch.ops.aten.scalar_tensor.default(0, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0))
        scalar_tensor_default_1: "f32[][]cuda:0" = torch.ops.aten.scalar_tensor.default(-1.0, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0))
        where_self: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.where.self(eq_tensor, scalar_tensor_default_1, scalar_tensor_default);  eq_tensor = scalar_tensor_default_1 = scalar_tensor_default = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:40 in fixed_cross_entropy, code: loss = nn.functional.cross_entropy(source, target, ignore_index=ignore_index, reduction=reduction)
        full_default_1: "f32[][]cuda:0" = torch.ops.aten.full.default([], 0.0, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0), pin_memory = False)
        where_3: "f32[64, 1][1, 1]cuda:0" = torch.ops.aten.where.self(ne_3, div_1, full_default_1);  ne_3 = div_1 = full_default_1 = None
        mul: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.mul.Tensor(where_self, where_3);  where_self = where_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:59 in ForCausalLMLoss, code: logits = logits.float()
        convert_element_type: "f32[1, 64, 1000][64000, 1000, 1]cuda:0" = torch.ops.prims.convert_element_type.default(primals_1, torch.float32);  primals_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:67 in ForCausalLMLoss, code: logits = logits.view(-1, vocab_size)
        view: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.view.default(convert_element_type, [-1, 1000]);  convert_element_type = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:40 in fixed_cross_entropy, code: loss = nn.functional.cross_entropy(source, target, ignore_index=ignore_index, reduction=reduction)
        sub: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.sub.Tensor(view, amax);  view = amax = None
        sub_1: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.sub.Tensor(sub, log);  sub = log = None
        exp_1: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.exp.default(sub_1);  sub_1 = None
        sum_4: "f32[64, 1][1, 1]cuda:0" = torch.ops.aten.sum.dim_IntList(mul, [1], True)
        mul_1: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.mul.Tensor(exp_1, sum_4);  exp_1 = sum_4 = None
        sub_2: "f32[64, 1000][1000, 1]cuda:0" = torch.ops.aten.sub.Tensor(mul, mul_1);  mul = mul_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:67 in ForCausalLMLoss, code: logits = logits.view(-1, vocab_size)
        view_2: "f32[1, 64, 1000][64000, 1000, 1]cuda:0" = torch.ops.aten.view.default(sub_2, [1, 64, 1000]);  sub_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/loss/loss_utils.py:59 in ForCausalLMLoss, code: logits = logits.float()
        convert_element_type_2: "bf16[1, 64, 1000][64000, 1000, 1]cuda:0" = torch.ops.prims.convert_element_type.default(view_2, torch.bfloat16);  view_2 = None
        return (
            convert_element_type_2,  # GradAOTOutput(grad_of=PlainAOTInput(idx=0))
            None,  # None
        )
)fx";

// --- from captures/llama3_8b_2l_train.log.gz ---

// aot_joint_graph: placeholders and the first statements; the return is cut to one item.
constexpr std::string_view kLlamaJointHead = R"fx(class inner_f(torch.nn.Module):
    def forward(
        self,
        primals,
        tangents,
    ):
        primals_1: "i64[1, 2048][2048, 1]cuda:0"  # PlainAOTInput(idx=0)
        primals_2: "bf16[128256, 4096][4096, 1]cuda:0"  # PlainAOTInput(idx=1)
        primals_3: "bf16[64][1]cuda:0"  # PlainAOTInput(idx=2)
        primals_4: "bf16[4096][1]cuda:0"  # PlainAOTInput(idx=3)
        primals_5: "bf16[4096, 4096][4096, 1]cuda:0"  # PlainAOTInput(idx=4)
        primals_6: "bf16[1024, 4096][4096, 1]cuda:0"  # PlainAOTInput(idx=5)
        primals_7: "bf16[1024, 4096][4096, 1]cuda:0"  # PlainAOTInput(idx=6)
        primals_8: "bf16[4096, 4096][4096, 1]cuda:0"  # PlainAOTInput(idx=7)
        primals_9: "bf16[4096][1]cuda:0"  # PlainAOTInput(idx=8)
        primals_10: "bf16[14336, 4096][4096, 1]cuda:0"  # PlainAOTInput(idx=9)
        primals_11: "bf16[14336, 4096][4096, 1]cuda:0"  # PlainAOTInput(idx=10)
        primals_12: "bf16[4096, 14336][14336, 1]cuda:0"  # PlainAOTInput(idx=11)
        primals_13: "bf16[4096][1]cuda:0"  # PlainAOTInput(idx=12)
        primals_14: "bf16[4096, 4096][4096, 1]cuda:0"  # PlainAOTInput(idx=13)
        primals_15: "bf16[1024, 4096][4096, 1]cuda:0"  # PlainAOTInput(idx=14)
        primals_16: "bf16[1024, 4096][4096, 1]cuda:0"  # PlainAOTInput(idx=15)
        primals_17: "bf16[4096, 4096][4096, 1]cuda:0"  # PlainAOTInput(idx=16)
        primals_18: "bf16[4096][1]cuda:0"  # PlainAOTInput(idx=17)
        primals_19: "bf16[14336, 4096][4096, 1]cuda:0"  # PlainAOTInput(idx=18)
        primals_20: "bf16[14336, 4096][4096, 1]cuda:0"  # PlainAOTInput(idx=19)
        primals_21: "bf16[4096, 14336][14336, 1]cuda:0"  # PlainAOTInput(idx=20)
        primals_22: "bf16[4096][1]cuda:0"  # PlainAOTInput(idx=21)
        primals_23: "bf16[128256, 4096][4096, 1]cuda:0"  # PlainAOTInput(idx=22)
        tangents_1: "f32[][]cuda:0"  # TangentAOTInput(output=PlainAOTOutput(idx=0))
        tangents_2: "bf16[1, 2048, 128256][262668288, 128256, 1]cuda:0"  # TangentAOTInput(output=PlainAOTOutput(idx=1))
        primals_1, primals_2, primals_3, primals_4, primals_5, primals_6, primals_7, primals_8, primals_9, primals_10, primals_11, primals_12, primals_13, primals_14, primals_15, primals_16, primals_17, primals_18, primals_19, primals_20, primals_21, primals_22, primals_23, tangents_1, tangents_2, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)
        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:381 in forward, code: inputs_embeds: torch.Tensor = self.embed_tokens(input_ids)
        embedding: "bf16[1, 2048, 4096][8388608, 4096, 1]cuda:0" = torch.ops.aten.embedding.default(primals_2, primals_1);  primals_2 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:388 in forward, code: position_ids = torch.arange(inputs_embeds.shape[1], device=inputs_embeds.device) + past_seen_tokens
        iota: "i64[2048][1]cuda:0" = torch.ops.prims.iota.default(2048, start = 0, step = 1, dtype = torch.int64, device = device(type='cuda', index=0), requires_grad = False)
        add: "i64[2048][1]cuda:0" = torch.ops.aten.add.Tensor(iota, 0);  iota = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:389 in forward, code: position_ids = position_ids.unsqueeze(0)
        unsqueeze: "i64[1, 2048][2048, 1]cuda:0" = torch.ops.aten.unsqueeze.default(add, 0);  add = None
        return pytree.tree_unflatten([
            unsqueeze,  # PlainAOTOutput(idx=0)
        ], self._out_spec)
)fx";

// dynamo_output_graph: signature, first 118 lines of the body, then a return of two values.
constexpr std::string_view kLlamaDynamoHead = R"fx(class GraphModule(torch.nn.Module):
    def forward(self, L_kwargs_input_ids_: "i64[1, 2048][2048, 1]cuda:0", L_self_modules_model_modules_embed_tokens_parameters_weight_: "bf16[128256, 4096][4096, 1]cuda:0", L_self_modules_model_modules_rotary_emb_buffers_inv_freq_: "bf16[64][1]cuda:0", L_self_modules_model_modules_layers_modules_0_modules_input_layernorm_parameters_weight_: "bf16[4096][1]cuda:0", L_self_modules_model_modules_layers_modules_0_modules_self_attn_modules_q_proj_parameters_weight_: "bf16[4096, 4096][4096, 1]cuda:0", L_self_modules_model_modules_layers_modules_0_modules_self_attn_modules_k_proj_parameters_weight_: "bf16[1024, 4096][4096, 1]cuda:0", L_self_modules_model_modules_layers_modules_0_modules_self_attn_modules_v_proj_parameters_weight_: "bf16[1024, 4096][4096, 1]cuda:0", L_self_modules_model_modules_layers_modules_0_modules_self_attn_modules_o_proj_parameters_weight_: "bf16[4096, 4096][4096, 1]cuda:0", L_self_modules_model_modules_layers_modules_0_modules_post_attention_layernorm_parameters_weight_: "bf16[4096][1]cuda:0", L_self_modules_model_modules_layers_modules_0_modules_mlp_modules_gate_proj_parameters_weight_: "bf16[14336, 4096][4096, 1]cuda:0", L_self_modules_model_modules_layers_modules_0_modules_mlp_modules_up_proj_parameters_weight_: "bf16[14336, 4096][4096, 1]cuda:0", L_self_modules_model_modules_layers_modules_0_modules_mlp_modules_down_proj_parameters_weight_: "bf16[4096, 14336][14336, 1]cuda:0", L_self_modules_model_modules_layers_modules_1_modules_input_layernorm_parameters_weight_: "bf16[4096][1]cuda:0", L_self_modules_model_modules_layers_modules_1_modules_self_attn_modules_q_proj_parameters_weight_: "bf16[4096, 4096][4096, 1]cuda:0", L_self_modules_model_modules_layers_modules_1_modules_self_attn_modules_k_proj_parameters_weight_: "bf16[1024, 4096][4096, 1]cuda:0", L_self_modules_model_modules_layers_modules_1_modules_self_attn_modules_v_proj_parameters_weight_: "bf16[1024, 4096][4096, 1]cuda:0", L_self_modules_model_modules_layers_modules_1_modules_self_attn_modules_o_proj_parameters_weight_: "bf16[4096, 4096][4096, 1]cuda:0", L_self_modules_model_modules_layers_modules_1_modules_post_attention_layernorm_parameters_weight_: "bf16[4096][1]cuda:0", L_self_modules_model_modules_layers_modules_1_modules_mlp_modules_gate_proj_parameters_weight_: "bf16[14336, 4096][4096, 1]cuda:0", L_self_modules_model_modules_layers_modules_1_modules_mlp_modules_up_proj_parameters_weight_: "bf16[14336, 4096][4096, 1]cuda:0", L_self_modules_model_modules_layers_modules_1_modules_mlp_modules_down_proj_parameters_weight_: "bf16[4096, 14336][14336, 1]cuda:0", L_self_modules_model_modules_norm_parameters_weight_: "bf16[4096][1]cuda:0", L_self_modules_lm_head_parameters_weight_: "bf16[128256, 4096][4096, 1]cuda:0"):
        l_kwargs_input_ids_ = L_kwargs_input_ids_
        l_self_modules_model_modules_embed_tokens_parameters_weight_ = L_self_modules_model_modules_embed_tokens_parameters_weight_
        l_self_modules_model_modules_rotary_emb_buffers_inv_freq_ = L_self_modules_model_modules_rotary_emb_buffers_inv_freq_
        l_self_modules_model_modules_layers_modules_0_modules_input_layernorm_parameters_weight_ = L_self_modules_model_modules_layers_modules_0_modules_input_layernorm_parameters_weight_
        l_self_modules_model_modules_layers_modules_0_modules_self_attn_modules_q_proj_parameters_weight_ = L_self_modules_model_modules_layers_modules_0_modules_self_attn_modules_q_proj_parameters_weight_
        l_self_modules_model_modules_layers_modules_0_modules_self_attn_modules_k_proj_parameters_weight_ = L_self_modules_model_modules_layers_modules_0_modules_self_attn_modules_k_proj_parameters_weight_
        l_self_modules_model_modules_layers_modules_0_modules_self_attn_modules_v_proj_parameters_weight_ = L_self_modules_model_modules_layers_modules_0_modules_self_attn_modules_v_proj_parameters_weight_
        l_self_modules_model_modules_layers_modules_0_modules_self_attn_modules_o_proj_parameters_weight_ = L_self_modules_model_modules_layers_modules_0_modules_self_attn_modules_o_proj_parameters_weight_
        l_self_modules_model_modules_layers_modules_0_modules_post_attention_layernorm_parameters_weight_ = L_self_modules_model_modules_layers_modules_0_modules_post_attention_layernorm_parameters_weight_
        l_self_modules_model_modules_layers_modules_0_modules_mlp_modules_gate_proj_parameters_weight_ = L_self_modules_model_modules_layers_modules_0_modules_mlp_modules_gate_proj_parameters_weight_
        l_self_modules_model_modules_layers_modules_0_modules_mlp_modules_up_proj_parameters_weight_ = L_self_modules_model_modules_layers_modules_0_modules_mlp_modules_up_proj_parameters_weight_
        l_self_modules_model_modules_layers_modules_0_modules_mlp_modules_down_proj_parameters_weight_ = L_self_modules_model_modules_layers_modules_0_modules_mlp_modules_down_proj_parameters_weight_
        l_self_modules_model_modules_layers_modules_1_modules_input_layernorm_parameters_weight_ = L_self_modules_model_modules_layers_modules_1_modules_input_layernorm_parameters_weight_
        l_self_modules_model_modules_layers_modules_1_modules_self_attn_modules_q_proj_parameters_weight_ = L_self_modules_model_modules_layers_modules_1_modules_self_attn_modules_q_proj_parameters_weight_
        l_self_modules_model_modules_layers_modules_1_modules_self_attn_modules_k_proj_parameters_weight_ = L_self_modules_model_modules_layers_modules_1_modules_self_attn_modules_k_proj_parameters_weight_
        l_self_modules_model_modules_layers_modules_1_modules_self_attn_modules_v_proj_parameters_weight_ = L_self_modules_model_modules_layers_modules_1_modules_self_attn_modules_v_proj_parameters_weight_
        l_self_modules_model_modules_layers_modules_1_modules_self_attn_modules_o_proj_parameters_weight_ = L_self_modules_model_modules_layers_modules_1_modules_self_attn_modules_o_proj_parameters_weight_
        l_self_modules_model_modules_layers_modules_1_modules_post_attention_layernorm_parameters_weight_ = L_self_modules_model_modules_layers_modules_1_modules_post_attention_layernorm_parameters_weight_
        l_self_modules_model_modules_layers_modules_1_modules_mlp_modules_gate_proj_parameters_weight_ = L_self_modules_model_modules_layers_modules_1_modules_mlp_modules_gate_proj_parameters_weight_
        l_self_modules_model_modules_layers_modules_1_modules_mlp_modules_up_proj_parameters_weight_ = L_self_modules_model_modules_layers_modules_1_modules_mlp_modules_up_proj_parameters_weight_
        l_self_modules_model_modules_layers_modules_1_modules_mlp_modules_down_proj_parameters_weight_ = L_self_modules_model_modules_layers_modules_1_modules_mlp_modules_down_proj_parameters_weight_
        l_self_modules_model_modules_norm_parameters_weight_ = L_self_modules_model_modules_norm_parameters_weight_
        l_self_modules_lm_head_parameters_weight_ = L_self_modules_lm_head_parameters_weight_

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:381 in forward, code: inputs_embeds: torch.Tensor = self.embed_tokens(input_ids)
        inputs_embeds: "bf16[1, 2048, 4096][8388608, 4096, 1]cuda:0" = torch.nn.functional.embedding(l_kwargs_input_ids_, l_self_modules_model_modules_embed_tokens_parameters_weight_, None, None, 2.0, False, False);  l_self_modules_model_modules_embed_tokens_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:388 in forward, code: position_ids = torch.arange(inputs_embeds.shape[1], device=inputs_embeds.device) + past_seen_tokens
        arange: "i64[2048][1]cuda:0" = torch.arange(2048, device = device(type='cuda', index=0))
        position_ids: "i64[2048][1]cuda:0" = arange + 0;  arange = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:389 in forward, code: position_ids = position_ids.unsqueeze(0)
        position_ids_1: "i64[1, 2048][2048, 1]cuda:0" = position_ids.unsqueeze(0);  position_ids = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:750 in find_packed_sequence_indices, code: first_dummy_value = position_ids[:, :1] - 1  # We just need the diff on this first value to be 1
        getitem: "i64[1, 1][2048, 1]cuda:0" = position_ids_1[(slice(None, None, None), slice(None, 1, None))]
        first_dummy_value: "i64[1, 1][1, 1]cuda:0" = getitem - 1;  getitem = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:751 in find_packed_sequence_indices, code: position_diff = torch.diff(position_ids, prepend=first_dummy_value, dim=-1)
        position_diff: "i64[1, 2048][2048, 1]cuda:0" = torch.diff(position_ids_1, prepend = first_dummy_value, dim = -1);  first_dummy_value = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:752 in find_packed_sequence_indices, code: packed_sequence_mask = (position_diff != 1).cumsum(-1)
        ne: "b8[1, 2048][2048, 1]cuda:0" = position_diff != 1;  position_diff = None
        packed_sequence_mask: "i64[1, 2048][2048, 1]cuda:0" = ne.cumsum(-1);  ne = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:508 in sdpa_mask, code: batch_arange = torch.arange(batch_size, device=device)
        batch_arange: "i64[1][1]cuda:0" = torch.arange(1, device = device(type='cuda', index=0))

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:509 in sdpa_mask, code: head_arange = torch.arange(1, device=device)
        head_arange: "i64[1][1]cuda:0" = torch.arange(1, device = device(type='cuda', index=0));  head_arange = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:510 in sdpa_mask, code: q_arange = torch.arange(q_length, device=device) + q_offset
        arange_3: "i64[2048][1]cuda:0" = torch.arange(2048, device = device(type='cuda', index=0))
        q_arange: "i64[2048][1]cuda:0" = arange_3 + 0;  arange_3 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:511 in sdpa_mask, code: kv_arange = torch.arange(kv_length, device=device) + kv_offset
        arange_4: "i64[2048][1]cuda:0" = torch.arange(2048, device = device(type='cuda', index=0))
        kv_arange: "i64[2048][1]cuda:0" = arange_4 + 0;  arange_4 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:365 in _non_vmap_expansion_sdpa, code: batch_indices = batch_indices[:, None, None, None]
        batch_indices: "i64[1, 1, 1, 1][1, 1, 1, 1]cuda:0" = batch_arange[(slice(None, None, None), None, None, None)];  batch_arange = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:367 in _non_vmap_expansion_sdpa, code: q_indices = q_indices[None, None, :, None]
        q_indices: "i64[1, 1, 2048, 1][2048, 2048, 1, 1]cuda:0" = q_arange[(None, None, slice(None, None, None), None)];  q_arange = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:368 in _non_vmap_expansion_sdpa, code: kv_indices = kv_indices[None, None, None, :]
        kv_indices: "i64[1, 1, 1, 2048][2048, 2048, 2048, 1]cuda:0" = kv_arange[(None, None, None, slice(None, None, None))];  kv_arange = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:55 in and_mask, code: result = q_idx.new_ones((), dtype=torch.bool)
        result: "b8[][]cuda:0" = q_indices.new_ones((), dtype = torch.bool)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:81 in causal_mask_function, code: return kv_idx <= q_idx
        le: "b8[1, 1, 2048, 2048][4194304, 4194304, 2048, 1]cuda:0" = kv_indices <= q_indices

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:57 in and_mask, code: result = result & mask(batch_idx, head_idx, q_idx, kv_idx).to(result.device)
        to: "b8[1, 1, 2048, 2048][4194304, 4194304, 2048, 1]cuda:0" = le.to(device(type='cuda', index=0));  le = None
        result_1: "b8[1, 1, 2048, 2048][4194304, 4194304, 2048, 1]cuda:0" = result & to;  result = to = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:189 in inner_mask, code: return packed_sequence_mask[batch_idx, q_idx] == packed_sequence_mask[batch_idx, kv_idx]
        getitem_5: "i64[1, 1, 2048, 1][2048, 2048, 1, 1]cuda:0" = packed_sequence_mask[(batch_indices, q_indices)];  q_indices = None
        getitem_6: "i64[1, 1, 1, 2048][2048, 2048, 2048, 1]cuda:0" = packed_sequence_mask[(batch_indices, kv_indices)];  packed_sequence_mask = batch_indices = kv_indices = None
        eq: "b8[1, 1, 2048, 2048][4194304, 4194304, 2048, 1]cuda:0" = getitem_5.__eq__(getitem_6);  getitem_5 = getitem_6 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:57 in and_mask, code: result = result & mask(batch_idx, head_idx, q_idx, kv_idx).to(result.device)
        to_1: "b8[1, 1, 2048, 2048][4194304, 4194304, 2048, 1]cuda:0" = eq.to(device(type='cuda', index=0));  eq = None
        result_2: "b8[1, 1, 2048, 2048][4194304, 4194304, 2048, 1]cuda:0" = result_1 & to_1;  result_1 = to_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:519 in sdpa_mask, code: attention_mask = attention_mask.expand(batch_size, -1, q_length, kv_length)
        attention_mask: "b8[1, 1, 2048, 2048][4194304, 4194304, 2048, 1]cuda:0" = result_2.expand(1, -1, 2048, 2048);  result_2 = None

        # No stacktrace found for following nodes
        _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:115 in forward, code: self.inv_freq[None, :, None].expand(position_ids.shape[0], -1, 1).to(dtype=torch.float, device=x.device)
        getitem_7: "bf16[1, 64, 1][64, 1, 1]cuda:0" = l_self_modules_model_modules_rotary_emb_buffers_inv_freq_[(None, slice(None, None, None), None)];  l_self_modules_model_modules_rotary_emb_buffers_inv_freq_ = None
        expand_1: "bf16[1, 64, 1][64, 1, 1]cuda:0" = getitem_7.expand(1, -1, 1);  getitem_7 = None
        inv_freq_expanded: "f32[1, 64, 1][64, 1, 1]cuda:0" = expand_1.to(dtype = torch.float32, device = device(type='cuda', index=0));  expand_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:117 in forward, code: position_ids_expanded = position_ids[:, None, :].float()
        getitem_8: "i64[1, 1, 2048][2048, 2048, 1]cuda:0" = position_ids_1[(slice(None, None, None), None, slice(None, None, None))];  position_ids_1 = None
        position_ids_expanded: "f32[1, 1, 2048][2048, 2048, 1]cuda:0" = getitem_8.float();  getitem_8 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:122 in forward, code: freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
        matmul: "f32[1, 64, 2048][131072, 2048, 1]cuda:0" = inv_freq_expanded @ position_ids_expanded;  inv_freq_expanded = position_ids_expanded = None
        freqs: "f32[1, 2048, 64][131072, 1, 2048]cuda:0" = matmul.transpose(1, 2);  matmul = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:123 in forward, code: emb = torch.cat((freqs, freqs), dim=-1)
        emb: "f32[1, 2048, 128][262144, 128, 1]cuda:0" = torch.cat((freqs, freqs), dim = -1);  freqs = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:124 in forward, code: cos = emb.cos() * self.attention_scaling
        cos: "f32[1, 2048, 128][262144, 128, 1]cuda:0" = emb.cos()
        cos_1: "f32[1, 2048, 128][262144, 128, 1]cuda:0" = cos * 1.0;  cos = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:125 in forward, code: sin = emb.sin() * self.attention_scaling
        sin: "f32[1, 2048, 128][262144, 128, 1]cuda:0" = emb.sin();  emb = None
        sin_1: "f32[1, 2048, 128][262144, 128, 1]cuda:0" = sin * 1.0;  sin = None
        return (cos_1, sin_1)
)fx";

// --- from captures/llama3_8b_2l_dyntrain.log.gz (the recompile with a symbolic sequence length) ---

// dynamo_output_graph: first three parameters and the first statements.
constexpr std::string_view kDyntrainDynamo = R"fx(class GraphModule(torch.nn.Module):
    def forward(self, s27: "Sym(s27)", L_kwargs_input_ids_: "i64[1, s27][s27, 1]cuda:0", L_self_modules_model_modules_embed_tokens_parameters_weight_: "bf16[128256, 4096][4096, 1]cuda:0"):
        l_kwargs_input_ids_ = L_kwargs_input_ids_
        l_self_modules_model_modules_embed_tokens_parameters_weight_ = L_self_modules_model_modules_embed_tokens_parameters_weight_

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:381 in forward, code: inputs_embeds: torch.Tensor = self.embed_tokens(input_ids)
        inputs_embeds: "bf16[1, s27, 4096][4096*s27, 4096, 1]cuda:0" = torch.nn.functional.embedding(l_kwargs_input_ids_, l_self_modules_model_modules_embed_tokens_parameters_weight_, None, None, 2.0, False, False);  l_self_modules_model_modules_embed_tokens_parameters_weight_ = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:388 in forward, code: position_ids = torch.arange(inputs_embeds.shape[1], device=inputs_embeds.device) + past_seen_tokens
        arange: "i64[s27][1]cuda:0" = torch.arange(s27, device = device(type='cuda', index=0))
        position_ids: "i64[s27][1]cuda:0" = arange + 0;  arange = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:389 in forward, code: position_ids = position_ids.unsqueeze(0)
        position_ids_1: "i64[1, s27][s27, 1]cuda:0" = position_ids.unsqueeze(0);  position_ids = None
        return (inputs_embeds, position_ids_1)
)fx";

// aot_joint_graph: three of the placeholders and statements over symbolic sizes.
constexpr std::string_view kDyntrainJoint = R"fx(class inner_f(torch.nn.Module):
    def forward(
        self,
        primals,
        tangents,
    ):
        primals_1: "Sym(s27)"  # PlainAOTInput(idx=0)
        primals_2: "i64[1, s27][s27, 1]cuda:0"  # PlainAOTInput(idx=1)
        tangents_2: "bf16[1, s27, 128256][128256*s27, 128256, 1]cuda:0"  # TangentAOTInput(output=PlainAOTOutput(idx=1))
        primals_1, primals_2, tangents_2, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)
        add_3: "Sym(s27 + 1)" = primals_1 + 1
        eq_29: "b8[1, 1, s27, s27][s27**2, s27**2, s27, 1]cuda:0" = torch.ops.aten.eq.Tensor(primals_2, primals_2)
        expand: "b8[1, 1, s27, s27][s27**2, s27**2, s27, 1]cuda:0" = torch.ops.aten.expand.default(eq_29, [1, -1, primals_1, primals_1]);  eq_29 = None
        return pytree.tree_unflatten([
            add_3,  # PlainAOTOutput(idx=0)
            expand,  # PlainAOTOutput(idx=1)
            tangents_2,  # PlainAOTOutput(idx=2)
        ], self._out_spec)
)fx";

// --- from captures/llama3_8b_2l_tiny_infer.log.gz: aot_inference_graph, first statements ---
constexpr std::string_view kTinyInference = R"fx(class <lambda>(torch.nn.Module):
    def forward(
        self,
        arg0_1: "i64[1, 32][32, 1]cuda:0",  # PlainAOTInput(idx=0)
        arg1_1: "bf16[1000, 256][256, 1]cuda:0",  # PlainAOTInput(idx=1)
        arg2_1: "bf16[16][1]cuda:0",  # PlainAOTInput(idx=2)
        arg3_1: "bf16[256][1]cuda:0",  # PlainAOTInput(idx=3)
        arg4_1: "bf16[256, 256][256, 1]cuda:0",  # PlainAOTInput(idx=4)
        arg5_1: "bf16[64, 256][256, 1]cuda:0",  # PlainAOTInput(idx=5)
        arg6_1: "bf16[64, 256][256, 1]cuda:0",  # PlainAOTInput(idx=6)
        arg7_1: "bf16[256, 256][256, 1]cuda:0",  # PlainAOTInput(idx=7)
        arg8_1: "bf16[256][1]cuda:0",  # PlainAOTInput(idx=8)
        arg9_1: "bf16[512, 256][256, 1]cuda:0",  # PlainAOTInput(idx=9)
        arg10_1: "bf16[512, 256][256, 1]cuda:0",  # PlainAOTInput(idx=10)
        arg11_1: "bf16[256, 512][512, 1]cuda:0",  # PlainAOTInput(idx=11)
        arg12_1: "bf16[256][1]cuda:0",  # PlainAOTInput(idx=12)
        arg13_1: "bf16[256, 256][256, 1]cuda:0",  # PlainAOTInput(idx=13)
        arg14_1: "bf16[64, 256][256, 1]cuda:0",  # PlainAOTInput(idx=14)
        arg15_1: "bf16[64, 256][256, 1]cuda:0",  # PlainAOTInput(idx=15)
        arg16_1: "bf16[256, 256][256, 1]cuda:0",  # PlainAOTInput(idx=16)
        arg17_1: "bf16[256][1]cuda:0",  # PlainAOTInput(idx=17)
        arg18_1: "bf16[512, 256][256, 1]cuda:0",  # PlainAOTInput(idx=18)
        arg19_1: "bf16[512, 256][256, 1]cuda:0",  # PlainAOTInput(idx=19)
        arg20_1: "bf16[256, 512][512, 1]cuda:0",  # PlainAOTInput(idx=20)
        arg21_1: "bf16[256][1]cuda:0",  # PlainAOTInput(idx=21)
        arg22_1: "bf16[1000, 256][256, 1]cuda:0",  # PlainAOTInput(idx=22)
    ):
        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:381 in forward, code: inputs_embeds: torch.Tensor = self.embed_tokens(input_ids)
        embedding: "bf16[1, 32, 256][8192, 256, 1]cuda:0" = torch.ops.aten.embedding.default(arg1_1, arg0_1);  arg1_1 = arg0_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:388 in forward, code: position_ids = torch.arange(inputs_embeds.shape[1], device=inputs_embeds.device) + past_seen_tokens
        iota: "i64[32][1]cuda:0" = torch.ops.prims.iota.default(32, start = 0, step = 1, dtype = torch.int64, device = device(type='cuda', index=0), requires_grad = False)
        add: "i64[32][1]cuda:0" = torch.ops.aten.add.Tensor(iota, 0);  iota = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py:389 in forward, code: position_ids = position_ids.unsqueeze(0)
        unsqueeze: "i64[1, 32][32, 1]cuda:0" = torch.ops.aten.unsqueeze.default(add, 0);  add = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:750 in find_packed_sequence_indices, code: first_dummy_value = position_ids[:, :1] - 1  # We just need the diff on this first value to be 1
        slice_1: "i64[1, 1][32, 1]cuda:0" = torch.ops.aten.slice.Tensor(unsqueeze, 1, 0, 1)
        sub: "i64[1, 1][1, 1]cuda:0" = torch.ops.aten.sub.Tensor(slice_1, 1);  slice_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/masking_utils.py:751 in find_packed_sequence_indices, code: position_diff = torch.diff(position_ids, prepend=first_dummy_value, dim=-1)
        cat: "i64[1, 33][33, 1]cuda:0" = torch.ops.aten.cat.default([sub, unsqueeze], -1);  sub = None
        slice_2: "i64[1, 32][33, 1]cuda:0" = torch.ops.aten.slice.Tensor(cat, -1, 0, 32)
        slice_3: "i64[1, 32][33, 1]cuda:0" = torch.ops.aten.slice.Tensor(cat, -1, 1, 33);  cat = None
        return (embedding, unsqueeze, sub_1)
)fx";

// --- from captures/mixtral_2l_tiny_train.log.gz: dynamo_output_graph lines of the MoE router
// (`/=` and `a[i] = v` statements); the values they start from are made parameters. ---
constexpr std::string_view kMixtralRouter = R"fx(class GraphModule(torch.nn.Module):
    def forward(self, router_probs: "f32[64, 4][4, 1]cuda:0", hidden_states_9: "bf16[64, 128][128, 1]cuda:0", weighted_out: "f32[128, 128][128, 1]cuda:0"):
        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/mixtral/modeling_mixtral.py:108 in forward, code: router_top_value, router_indices = torch.topk(router_probs, self.top_k, dim=-1)  # (seq_len, top_k)
        topk = torch.topk(router_probs, 2, dim = -1);  router_probs = None
        router_top_value: "f32[64, 2][2, 1]cuda:0" = topk[0]
        router_indices: "i64[64, 2][2, 1]cuda:0" = topk[1];  topk = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/models/mixtral/modeling_mixtral.py:109 in forward, code: router_top_value /= router_top_value.sum(dim=-1, keepdim=True)
        sum_1: "f32[64, 1][1, 1]cuda:0" = router_top_value.sum(dim = -1, keepdim = True)
        router_top_value /= sum_1;  router_top_value_1: "f32[64, 2][2, 1]cuda:0" = router_top_value;  router_top_value = sum_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/moe.py:389 in grouped_mm_experts_forward, code: sample_weights = top_k_weights.reshape(-1)  # (S,)
        sample_weights: "f32[128][1]cuda:0" = router_top_value_1.reshape(-1);  router_top_value_1 = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/moe.py:390 in grouped_mm_experts_forward, code: expert_ids = top_k_index.reshape(-1)  # (S,)
        expert_ids: "i64[128][1]cuda:0" = router_indices.reshape(-1);  router_indices = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/moe.py:393 in grouped_mm_experts_forward, code: expert_ids_g, perm = torch.sort(expert_ids)
        sort = torch.sort(expert_ids);  expert_ids = None
        expert_ids_g: "i64[128][1]cuda:0" = sort[0]
        perm: "i64[128][1]cuda:0" = sort[1];  sort = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/moe.py:394 in grouped_mm_experts_forward, code: selected_hidden_states_g = hidden_states[perm // num_top_k]
        floordiv: "i64[128][1]cuda:0" = perm // 2
        selected_hidden_states_g: "bf16[128, 128][128, 1]cuda:0" = hidden_states_9[floordiv];  hidden_states_9 = floordiv = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/moe.py:395 in grouped_mm_experts_forward, code: sample_weights_g = sample_weights[perm]
        sample_weights_g: "f32[128][1]cuda:0" = sample_weights[perm];  sample_weights = None


        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/moe.py:471 in grouped_mm_experts_forward, code: inv_perm = torch.empty_like(perm)
        inv_perm: "i64[128][1]cuda:0" = torch.empty_like(perm)

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/moe.py:472 in grouped_mm_experts_forward, code: inv_perm[perm] = torch.arange(perm.size(0), device=device)
        arange_5: "i64[128][1]cuda:0" = torch.arange(128, device = device(type='cuda', index=0))
        inv_perm[perm] = arange_5;  setitem = inv_perm;  perm = arange_5 = setitem = None

        # File: /opt/torch/.venv/lib/python3.12/site-packages/transformers/integrations/moe.py:473 in grouped_mm_experts_forward, code: weighted_out = weighted_out[inv_perm]  # (S, hidden_dim)
        weighted_out_1: "f32[128, 128][128, 1]cuda:0" = weighted_out[inv_perm];  weighted_out = inv_perm = None
        return (selected_hidden_states_g, sample_weights_g, expert_ids_g, weighted_out_1)
)fx";

// --- Written here: flavours absent from our captures. ---

// Higher-order ops whose subgraphs are nested classes (the wrap example of formats.md, with a cond
// nesting one more level).
constexpr std::string_view kHigherOrderOps = R"fx(class GraphModule(torch.nn.Module):
    def forward(self, s77: "Sym(s77)", L_x_: "f32[s77, 1]", L_pred_: "b8[][]cpu"):
        l_x_ = L_x_
        l_pred_ = L_pred_

        wrap_body_0 = self.wrap_body_0
        wrap = torch.ops.higher_order.wrap(wrap_body_0, s77, l_x_);  wrap_body_0 = None
        getitem: "f32[s77]" = wrap[0];  wrap = None
        cond_true_0 = self.cond_true_0
        cond_false_0 = self.cond_false_0
        cond = torch.ops.higher_order.cond(l_pred_, cond_true_0, cond_false_0, (getitem, s77));  l_pred_ = cond_true_0 = cond_false_0 = getitem = s77 = None
        getitem_1: "f32[s77]" = cond[0];  cond = None
        return (getitem_1, l_x_)

    class wrap_body_0(torch.nn.Module):
        def forward(self, s77: "Sym(s77)", l_x_: "f32[s77, 1]"):
            view: "f32[s77]" = l_x_.view(s77);  l_x_ = s77 = None
            return (view,)

    class cond_true_0(torch.nn.Module):
        def forward(self, getitem: "f32[s77]", s77: "Sym(s77)"):
            wrap_body_1 = self.wrap_body_1
            wrap = torch.ops.higher_order.wrap(wrap_body_1, getitem);  wrap_body_1 = getitem = None
            getitem_2: "f32[s77]" = wrap[0];  wrap = None
            return (getitem_2,)

        class wrap_body_1(torch.nn.Module):
            def forward(self, getitem: "f32[s77]"):
                sin: "f32[s77]" = getitem.sin();  getitem = None
                return (sin,)

    class cond_false_0(torch.nn.Module):
        def forward(self, getitem: "f32[s77]", s77: "Sym(s77)"):
            neg: "f32[s77]" = -getitem;  getitem = None
            return (neg,)
)fx";

// An exported_program payload: the graph indented under "ExportedProgram:", source comments with
// one extra leading space (2024-25), unbacked symbols, then the signature and ranges.
constexpr std::string_view kExportedProgram = R"fx(ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, x: "i64[]", y: "f32[s0]"):
             # File: /tmp/model.py:12 in forward, code: n = x.item()
            _local_scalar_dense: "Sym(u0)" = torch.ops.aten._local_scalar_dense.default(x);  x = None

             # File: /tmp/model.py:13 in forward, code: n = -n // 3 + 5
            neg: "Sym(-u0)" = -_local_scalar_dense;  _local_scalar_dense = None
            floordiv: "Sym(((-u0)//3))" = neg // 3;  neg = None
            add: "Sym(((-u0)//3) + 5)" = floordiv + 5;  floordiv = None

             # File: /tmp/model.py:14 in forward, code: return torch.cat([y, y])[:n]
            cat: "f32[2*s0]" = torch.ops.aten.cat.default([y, y]);  y = None
            slice_1: "f32[((-u0)//3) + 5]" = torch.ops.aten.slice.Tensor(cat, 0, 0, add);  cat = add = None
            return (slice_1,)

Graph signature: ExportGraphSignature(input_specs=[], output_specs=[])
Range constraints: {u0: VR[-int_oo, 15], s0: VR[2, int_oo]}
)fx";

// Older torch: Python type annotations, no strides/devices, no deletion of unused values.
constexpr std::string_view kOlderDynamo = R"fx(class GraphModule(torch.nn.Module):
    def forward(self, L_x_ : torch.Tensor, L_y_: "f32[5, 5]"):
        l_x_ = L_x_
        l_y_ = L_y_

         # File: /tmp/test.py:7 in fn, code: x.cos() + y
        cos = l_x_.cos();  l_x_ = None
        add: "f32[5, 5]" = cos + l_y_;  cos = l_y_ = None
        return (add,)
)fx";

// Older post-grad graph with pytree inputs: empty signature, the placeholders declared on one
// line, then unpacked; parameters read with get_attr.
constexpr std::string_view kOlderPostGrad = R"fx(class <lambda>(torch.nn.Module):
    def forward(self):
        arg0_1: "f32[8, 10][10, 1]cpu"; arg1_1: "f32[10][1]cpu";

        arg0_1, arg1_1, = fx_pytree.tree_flatten_spec([], self._in_spec)
        # No stacktrace found for following nodes
        fc1_weight: "f32[16, 10][10, 1]cpu" = self.fc1.weight

         # File: /tmp/linear.py:125 in forward, code: return F.linear(input, self.weight, self.bias)
        permute: "f32[10, 16][1, 10]cpu" = torch.ops.aten.permute.default(fc1_weight, [1, 0]);  fc1_weight = None
        addmm: "f32[8, 16][16, 1]cpu" = torch.ops.aten.addmm.default(arg1_1, arg0_1, permute);  arg1_1 = arg0_1 = permute = None
        return (addmm,)
)fx";

// Tensor subclasses, user annotations, collectives.
constexpr std::string_view kSubclassesAndCollectives = R"fx(class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "DTensor(f32[8, 4][4, 1]cuda:0, (Shard(dim=0),))", primals_2: "FunctionalTensor(f32[4])"):
        # Annotation: {'pp_stage': 0} File: /tmp/train.py:30 in step, code: y = all_gather(x)
        all_gather_into_tensor: "f32[16, 4][4, 1]cuda:0" = torch.ops._c10d_functional.all_gather_into_tensor.default(primals_1, 2, '0')
        wait_tensor: "f32[16, 4][4, 1]cuda:0" = torch.ops._c10d_functional.wait_tensor.default(all_gather_into_tensor);  all_gather_into_tensor = None

        # Annotation: {'pp_stage': 0} No stacktrace found for following nodes
        sum_1: "f32[4][1]cuda:0" = torch.ops.aten.sum.dim_IntList(wait_tensor, [0]);  wait_tensor = None
        add: "f32[4]" = torch.ops.aten.add.Tensor(sum_1, primals_2);  sum_1 = primals_2 = None
        return (add,)
)fx";

std::shared_ptr<Graph> parse(std::string_view text, Diagnostics& d, const FxParseOptions& options = {}) {
  return parseFxText(text, options, d);
}

// Parses text that must read without a warning.
std::shared_ptr<Graph> parseClean(std::string_view text, const FxParseOptions& options = {}) {
  Diagnostics d;
  auto g = parseFxText(text, options, d);
  for (const auto& item : d.items()) ADD_FAILURE() << item.where.str() << ": " << item.message;
  return g;
}

// parseFxText(printFxText(g)) == g, and the printed text reads without warnings (unless the graph
// holds an annotation that was not understood, which is printed back as it came).
void expectRoundTrip(const Graph& g, const FxParseOptions& options = {}, bool warningsExpected = false) {
  const std::string printed = printFxText(g);
  Diagnostics d;
  auto again = parseFxText(printed, options, d);
  ASSERT_TRUE(again) << printed;
  if (!warningsExpected) {
    EXPECT_TRUE(d.empty()) << (d.empty() ? "" : d.items()[0].message);
  }
  std::string why;
  EXPECT_TRUE(graphsEqual(g, *again, &why)) << why << "\n" << printed;
}

const Node& byName(const Graph& g, std::string_view name) {
  const NodeId id = g.find(name);
  if (id == kNoNode) {
    ADD_FAILURE() << "no node " << name;
    static const Node kMissing;
    return kMissing;
  }
  return g.node(id);
}

std::vector<int64_t> values(const std::vector<SymDim>& dims) {
  std::vector<int64_t> out;
  for (const auto& d : dims) out.push_back(d.value);
  return out;
}

std::vector<std::string> placeholderNames(const Graph& g) {
  std::vector<std::string> out;
  for (const auto& n : g.nodes())
    if (n.kind == NodeKind::Placeholder) out.emplace_back(g.str(n.name));
  return out;
}

// Every graph payload of every TORCH_TRACE sample, parsed on its own: how many graphs, nested
// graphs, placeholders, calls, torch ops and outputs the parser makes of it, so that a statement it
// drops or misreads changes a count. Counted from the raw text without Lathe: calls and torch ops by
// tests/e2e/graph_counts.py's reader (one per `name = rhs` statement of a forward body); graphs and
// nested graphs by `def forward(` lines, outputs by `return` lines; placeholders by the forwards'
// parameters and declared values (`name: "annotation"`, several to a line in post-grad graphs).
struct SampleCounts {
  std::string_view path;  // under the samples folder
  size_t graphs, nested, placeholders, calls, torchOps, outputs;
};
constexpr SampleCounts kSampleCounts[] = {
    {"captures/gpt2_infer.log.gz", 13, 0, 1942, 8898, 4889, 13},
    {"captures/gpt2_tiny_train.log.gz", 20, 0, 424, 2555, 2052, 20},
    {"captures/gpt2_train.log.gz", 20, 0, 2014, 11604, 9311, 20},
    {"captures/llama3_8b_2l_dyntrain.log.gz", 20, 0, 726, 6373, 5155, 20},
    {"captures/llama3_8b_2l_infer.log.gz", 10, 0, 235, 2047, 999, 10},
    {"captures/llama3_8b_2l_tiny_infer.log.gz", 16, 0, 376, 3555, 2492, 16},
    {"captures/llama3_8b_2l_tiny_train.log.gz", 10, 0, 358, 3176, 2569, 10},
    {"captures/llama3_8b_2l_train.log.gz", 8, 0, 270, 2521, 1928, 8},
    {"captures/llama3_8b_4l_train.log.gz", 10, 0, 634, 5510, 4484, 10},
    {"captures/mixtral_2l_infer.log.gz", 10, 0, 235, 2906, 1257, 10},
    {"captures/mixtral_2l_tiny_train.log.gz", 10, 0, 418, 4050, 3117, 10},
    {"captures/mixtral_2l_train.log.gz", 8, 0, 310, 3221, 2318, 8},
    {"captures/vit_b16_tiny_train.log.gz", 10, 0, 400, 1770, 1487, 10},
    {"captures/llama_4l_fsdp_ranks", 20, 0, 338, 2206, 1826, 20},
    {"tlparse/artifacts.log", 2, 0, 4, 2, 1, 2},
    {"tlparse/autotune_with_compile_id.log", 8, 0, 8, 8, 4, 8},
    {"tlparse/cache_hit_miss.log", 11, 22, 220, 72, 22, 33},
    {"tlparse/comp_failure.log", 1, 0, 1, 1, 0, 1},
    {"tlparse/comp_metrics.log", 3, 0, 3, 3, 0, 3},
    {"tlparse/export.log", 1, 0, 2, 6, 3, 1},
    {"tlparse/export_guard_added.log", 1, 0, 1, 1, 1, 1},
    {"tlparse/links.log", 3, 0, 8, 10, 6, 3},
    {"tlparse/simple.log", 3, 0, 3, 28, 26, 3},
    {"tlparse/simple_corrupted_json.log", 3, 0, 3, 28, 26, 3},
    {"tlparse/inductor_provenance_aot_cuda_log.txt", 5, 0, 22, 55, 47, 5},
    {"tlparse/inductor_provenance_aot_log_old.txt", 7, 0, 30, 74, 62, 7},
    {"tlparse/inductor_provenance_jit_cuda_log.txt", 6, 0, 36, 53, 35, 6},
    {"tlparse/inductor_provenance_jit_debug_handle_log.txt", 8, 0, 47, 96, 78, 8},
    {"tlparse/multi_rank_logs", 117, 0, 117, 117, 49, 117},
    {"tlparse/multi_rank_runtime", 36, 0, 180, 678, 498, 36},
    {"tlparse/multi_rank_schedule", 36, 0, 54, 198, 171, 36},
    {"tlparse/graph_exec_order_tests", 24, 0, 108, 396, 288, 24},
};

void addCounts(const Graph& g, SampleCounts& counts) {
  for (const auto& n : g.nodes()) {
    if (n.kind == NodeKind::Placeholder) {
      ++counts.placeholders;
    } else if (n.kind == NodeKind::Output) {
      ++counts.outputs;
    } else {
      ++counts.calls;
      counts.torchOps += g.str(n.target).starts_with("torch.ops.");
    }
  }
  for (const auto& [attr, sub] : g.subgraphs()) {
    ++counts.nested;
    addCounts(*sub, counts);
  }
}

}  // namespace

TEST(FxText, DynamoGraphFromGpt2Loss) {
  auto g = parseClean(kGpt2LossDynamo);
  ASSERT_TRUE(g);
  EXPECT_TRUE(g->finalized());
  EXPECT_EQ(g->className(), "GraphModule");
  EXPECT_TRUE(g->forwardParams().empty());
  EXPECT_EQ(placeholderNames(*g), (std::vector<std::string>{"l_logits_", "l_labels_"}));

  const Node& logitsIn = byName(*g, "l_logits_");
  EXPECT_EQ(g->str(logitsIn.target), "L_logits_");  // `l_logits_ = L_logits_`
  EXPECT_EQ(logitsIn.role, Role::UserInput);
  EXPECT_EQ(logitsIn.meta.dtype, DType::BF16);
  EXPECT_EQ(values(logitsIn.meta.sizes), (std::vector<int64_t>{1, 64, 1000}));
  EXPECT_EQ(values(logitsIn.meta.strides), (std::vector<int64_t>{64000, 1000, 1}));
  EXPECT_EQ(g->str(logitsIn.meta.device), "cuda:0");
  EXPECT_EQ(logitsIn.meta.storageBytes(), 64000u * 2);

  const Node& logits = byName(*g, "logits");
  EXPECT_EQ(logits.kind, NodeKind::CallMethod);
  EXPECT_EQ(g->str(logits.target), "float");
  ASSERT_EQ(logits.args.size(), 1u);
  EXPECT_EQ(logits.args[0].node, g->find("l_logits_"));
  EXPECT_TRUE(g->str(logits.provenance.file).ends_with("transformers/loss/loss_utils.py"));
  EXPECT_EQ(logits.provenance.line, 59u);
  EXPECT_EQ(g->str(logits.provenance.function), "ForCausalLMLoss");
  EXPECT_EQ(g->str(logits.provenance.code), "logits = logits.float()");

  const Node& labels = byName(*g, "labels");  // torch._C._nn.pad(l_labels_, (0, 1), 'constant', -100)
  EXPECT_EQ(g->str(labels.target), "torch._C._nn.pad");
  ASSERT_EQ(labels.args.size(), 4u);
  EXPECT_EQ(labels.args[1].kind, Arg::Kind::Tuple);
  EXPECT_EQ(labels.args[1].items.size(), 2u);
  EXPECT_EQ(labels.args[2].kind, Arg::Kind::String);
  EXPECT_EQ(g->str(labels.args[2].s), "constant");
  EXPECT_EQ(labels.args[3].kind, Arg::Kind::Int);
  EXPECT_EQ(labels.args[3].i, -100);
  EXPECT_EQ(labels.provenance.line, 5430u);

  const Node& getitem = byName(*g, "getitem");  // labels[(Ellipsis, slice(1, None, None))]
  EXPECT_EQ(g->str(getitem.target), "operator.getitem");
  ASSERT_EQ(getitem.args.size(), 2u);
  EXPECT_EQ(getitem.args[0].node, g->find("labels"));
  ASSERT_EQ(getitem.args[1].kind, Arg::Kind::Tuple);
  EXPECT_EQ(g->str(getitem.args[1].items[0].s), "Ellipsis");
  EXPECT_EQ(g->str(getitem.args[1].items[1].s), "slice(1, None, None)");

  const Node& moved = byName(*g, "shift_labels_2");  // shift_labels_1.to(device(type='cuda', index=0))
  ASSERT_EQ(moved.args.size(), 2u);
  EXPECT_EQ(moved.args[1].kind, Arg::Kind::Device);
  EXPECT_EQ(g->str(moved.args[1].s), "device(type='cuda', index=0)");

  const Node& loss = byName(*g, "loss");
  EXPECT_EQ(g->str(loss.target), "torch.nn.functional.cross_entropy");
  ASSERT_EQ(loss.kwargs.size(), 2u);
  EXPECT_EQ(g->str(loss.kwargs[0].first), "ignore_index");
  EXPECT_EQ(loss.kwargs[0].second.i, -100);
  EXPECT_EQ(g->str(loss.kwargs[1].second.s), "mean");
  EXPECT_TRUE(loss.meta.sizes.empty());  // 0-d: "f32[][]cuda:0"
  EXPECT_TRUE(loss.meta.hasStrides);
  EXPECT_EQ(loss.meta.numel(), 1);

  const Node& out = g->node(g->outputNode());
  ASSERT_EQ(out.args.size(), 1u);
  ASSERT_EQ(out.args[0].kind, Arg::Kind::Tuple);
  EXPECT_EQ(out.args[0].items[0].node, g->find("loss"));
  // Liveness tails (`;  l_logits_ = None`) are dropped: every node is used or returned.
  EXPECT_EQ(g->users(g->find("logits")).size(), 1u);

  const GraphCounts c = countGraph(*g);
  EXPECT_EQ(c.placeholders, 2u);
  EXPECT_EQ(c.calls, 8u);
  EXPECT_EQ(c.torchOps, 0u);

  EXPECT_EQ(printFxText(*g), kGpt2LossDynamo);  // torch's own layout, liveness tails included
  expectRoundTrip(*g);
}

TEST(FxText, AotJointGraphFromGpt2Loss) {
  auto g = parseClean(kGpt2LossJoint);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->className(), "inner_f");
  ASSERT_EQ(g->forwardParams().size(), 2u);
  EXPECT_EQ(g->str(g->forwardParams()[0]), "primals");
  EXPECT_EQ(g->str(g->forwardParams()[1]), "tangents");
  EXPECT_EQ(placeholderNames(*g), (std::vector<std::string>{"primals_1", "primals_2", "tangents_1"}));

  const Node& primals2 = byName(*g, "primals_2");
  EXPECT_EQ(primals2.role, Role::UserInput);
  EXPECT_EQ(primals2.meta.dtype, DType::I64);
  EXPECT_EQ(g->str(primals2.comment), "PlainAOTInput(idx=1)");
  const Node& tangent = byName(*g, "tangents_1");
  EXPECT_EQ(tangent.role, Role::Tangent);
  EXPECT_EQ(tangent.meta.dtype, DType::F32);
  EXPECT_TRUE(tangent.meta.sizes.empty());
  EXPECT_EQ(g->str(tangent.comment), "TangentAOTInput(output=PlainAOTOutput(idx=0))");

  const Node& convert = byName(*g, "convert_element_type");
  EXPECT_EQ(g->str(convert.target), "torch.ops.prims.convert_element_type.default");
  ASSERT_EQ(convert.args.size(), 2u);
  EXPECT_EQ(convert.args[1].kind, Arg::Kind::DType);
  EXPECT_EQ(convert.args[1].dtype, DType::F32);
  EXPECT_EQ(convert.provenance.line, 59u);  // the comment right after the unpack line

  const Node& pad = byName(*g, "constant_pad_nd");  // (primals_2, [0, 1], -100.0)
  ASSERT_EQ(pad.args.size(), 3u);
  EXPECT_EQ(pad.args[1].kind, Arg::Kind::List);
  EXPECT_EQ(pad.args[2].kind, Arg::Kind::Float);
  EXPECT_EQ(pad.args[2].f, -100.0);
  EXPECT_EQ(byName(*g, "slice_1").args[3].i, std::numeric_limits<int64_t>::max());

  const Node& scalar = byName(*g, "scalar_tensor");  // dtype = torch.int64, layout = torch.strided, device = ...
  ASSERT_EQ(scalar.kwargs.size(), 3u);
  EXPECT_EQ(scalar.kwargs[0].second.dtype, DType::I64);
  EXPECT_EQ(scalar.kwargs[1].second.kind, Arg::Kind::Layout);
  EXPECT_EQ(g->str(scalar.kwargs[1].second.s), "torch.strided");
  EXPECT_EQ(scalar.kwargs[2].second.kind, Arg::Kind::Device);
  EXPECT_EQ(byName(*g, "full").kwargs.back().second.kind, Arg::Kind::Bool);

  const Node& out = g->node(g->outputNode());  // return pytree.tree_unflatten([div, ..., None], self._out_spec)
  ASSERT_EQ(out.args[0].kind, Arg::Kind::List);
  ASSERT_EQ(out.args[0].items.size(), 3u);
  EXPECT_EQ(out.args[0].items[1].node, g->find("convert_element_type_2"));
  EXPECT_EQ(out.args[0].items[2].kind, Arg::Kind::None);
  ASSERT_EQ(out.itemComments.size(), 3u);
  EXPECT_EQ(g->str(out.itemComments[0]), "PlainAOTOutput(idx=0)");
  EXPECT_EQ(g->str(out.itemComments[1]), "GradAOTOutput(grad_of=PlainAOTInput(idx=0))");
  EXPECT_EQ(g->str(out.itemComments[2]), "None");

  const GraphCounts c = countGraph(*g);
  EXPECT_EQ(c.placeholders, 3u);
  EXPECT_EQ(c.calls, 45u);
  EXPECT_EQ(c.torchOps, 45u);

  EXPECT_EQ(printFxText(*g), kGpt2LossJoint);
  expectRoundTrip(*g);
}

TEST(FxText, AotForwardAndBackwardFromGpt2Loss) {
  auto fw = parseClean(kGpt2LossForward);
  ASSERT_TRUE(fw);
  EXPECT_TRUE(fw->forwardParams().empty());  // one parameter per line, each with its descriptor
  EXPECT_EQ(fw->str(byName(*fw, "primals_1").comment), "PlainAOTInput(idx=0)");
  const Node& fwOut = fw->node(fw->outputNode());
  ASSERT_EQ(fwOut.args[0].kind, Arg::Kind::Tuple);
  ASSERT_EQ(fwOut.itemComments.size(), 6u);
  EXPECT_EQ(fw->str(fwOut.itemComments[1]), "SavedForBackwardsAOTOutput(idx=0)");
  EXPECT_EQ(fwOut.args[0].items[1].node, fw->find("primals_1"));  // a saved input
  EXPECT_EQ(printFxText(*fw), kGpt2LossForward);
  expectRoundTrip(*fw);

  auto bw = parseClean(kGpt2LossBackward);
  ASSERT_TRUE(bw);
  EXPECT_EQ(placeholderNames(*bw), (std::vector<std::string>{"primals_1", "constant_pad_nd", "amax", "log",
                                                             "convert_element_type_1", "tangents_1"}));
  EXPECT_EQ(byName(*bw, "amax").comment, 0u);  // saved activations carry no descriptor
  EXPECT_EQ(byName(*bw, "tangents_1").role, Role::Tangent);
  const Node& bwOut = bw->node(bw->outputNode());
  ASSERT_EQ(bwOut.itemComments.size(), 2u);
  EXPECT_EQ(bw->str(bwOut.itemComments[0]), "GradAOTOutput(grad_of=PlainAOTInput(idx=0))");
  EXPECT_EQ(printFxText(*bw), kGpt2LossBackward);
  expectRoundTrip(*bw);
}

TEST(FxText, LlamaJointGraphHas23PrimalsAnd2Tangents) {
  auto g = parseClean(kLlamaJointHead);
  ASSERT_TRUE(g);
  struct Expected {
    DType dtype;
    std::vector<int64_t> sizes;
  };
  const std::vector<int64_t> kHidden{4096}, kSquare{4096, 4096}, kKv{1024, 4096}, kUp{14336, 4096}, kDown{4096, 14336};
  std::vector<Expected> expected{{DType::I64, {1, 2048}}, {DType::BF16, {128256, 4096}}, {DType::BF16, {64}}};
  for (int layer = 0; layer < 2; ++layer)
    for (const auto& shape : {kHidden, kSquare, kKv, kKv, kSquare, kHidden, kUp, kUp, kDown})
      expected.push_back({DType::BF16, shape});
  expected.push_back({DType::BF16, kHidden});            // final norm
  expected.push_back({DType::BF16, {128256, 4096}});     // lm_head
  expected.push_back({DType::F32, {}});                  // loss tangent
  expected.push_back({DType::BF16, {1, 2048, 128256}});  // logits tangent

  std::vector<const Node*> placeholders;
  for (const auto& n : g->nodes())
    if (n.kind == NodeKind::Placeholder) placeholders.push_back(&n);
  ASSERT_EQ(placeholders.size(), 25u);
  ASSERT_EQ(expected.size(), 25u);
  size_t primals = 0, tangents = 0;
  for (size_t k = 0; k < placeholders.size(); ++k) {
    const Node& p = *placeholders[k];
    const std::string name(g->str(p.name));
    const bool isTangent = k >= 23;
    EXPECT_EQ(name, isTangent ? "tangents_" + std::to_string(k - 22) : "primals_" + std::to_string(k + 1));
    EXPECT_EQ(p.role, isTangent ? Role::Tangent : Role::UserInput) << name;
    EXPECT_EQ(p.meta.dtype, expected[k].dtype) << name;
    EXPECT_EQ(values(p.meta.sizes), expected[k].sizes) << name;
    EXPECT_EQ(g->str(p.meta.device), "cuda:0") << name;
    (isTangent ? tangents : primals)++;
  }
  EXPECT_EQ(primals, 23u);
  EXPECT_EQ(tangents, 2u);
  EXPECT_EQ(byName(*g, "primals_2").meta.storageBytes(), 128256u * 4096u * 2u);
  EXPECT_EQ(byName(*g, "tangents_2").meta.storageBytes(), 2048u * 128256u * 2u);

  const Node& iota =
      byName(*g, "iota");  // prims.iota(2048, start = 0, step = 1, dtype = ..., device = ..., requires_grad = False)
  EXPECT_EQ(g->str(iota.target), "torch.ops.prims.iota.default");
  ASSERT_EQ(iota.kwargs.size(), 5u);
  EXPECT_EQ(iota.kwargs[2].second.dtype, DType::I64);
  expectRoundTrip(*g);
}

TEST(FxText, DynamoPlaceholderNamesTellParametersAndModulePaths) {
  auto g = parseClean(kLlamaDynamoHead);
  ASSERT_TRUE(g);
  const Node& q =
      byName(*g, "l_self_modules_model_modules_layers_modules_0_modules_self_attn_modules_q_proj_parameters_weight_");
  EXPECT_EQ(q.role, Role::Parameter);
  EXPECT_EQ(g->str(q.provenance.modulePath), "model.layers.0.self_attn.q_proj");
  const Node& invFreq = byName(*g, "l_self_modules_model_modules_rotary_emb_buffers_inv_freq_");
  EXPECT_EQ(invFreq.role, Role::Buffer);
  EXPECT_EQ(g->str(invFreq.provenance.modulePath), "model.rotary_emb");
  EXPECT_EQ(g->str(byName(*g, "l_self_modules_lm_head_parameters_weight_").provenance.modulePath), "lm_head");
  const Node& ids = byName(*g, "l_kwargs_input_ids_");
  EXPECT_EQ(ids.role, Role::UserInput);
  EXPECT_EQ(ids.provenance.modulePath, 0u);
  size_t parameters = 0;
  for (const auto& n : g->nodes()) parameters += n.role == Role::Parameter;
  EXPECT_EQ(parameters, 21u);

  // torch.nn.functional.embedding(ids, weight, None, None, 2.0, False, False)
  const Node& embeds = byName(*g, "inputs_embeds");
  ASSERT_EQ(embeds.args.size(), 7u);
  EXPECT_EQ(embeds.args[2].kind, Arg::Kind::None);
  EXPECT_EQ(embeds.args[4].kind, Arg::Kind::Float);
  EXPECT_EQ(embeds.args[6].kind, Arg::Kind::Bool);
  // Python operators load as operator.* calls.
  EXPECT_EQ(g->str(byName(*g, "position_ids").target), "operator.add");
  EXPECT_EQ(g->str(byName(*g, "matmul").target), "operator.matmul");
  EXPECT_EQ(g->str(byName(*g, "le").target), "operator.le");
  EXPECT_EQ(g->str(byName(*g, "result_1").target), "operator.and_");
  EXPECT_EQ(g->str(byName(*g, "cos_1").target), "operator.mul");
  EXPECT_EQ(byName(*g, "cos_1").args[1].f, 1.0);
  // `# No stacktrace found for following nodes` clears the source until the next `# File:`.
  const Node& grad = byName(*g, "_set_grad_enabled");
  EXPECT_EQ(grad.provenance.file, 0u);
  EXPECT_EQ(grad.provenance.line, 0u);
  EXPECT_EQ(g->users(g->find("_set_grad_enabled")).size(), 0u);
  EXPECT_EQ(byName(*g, "getitem_7").provenance.line, 115u);
  expectRoundTrip(*g);
}

TEST(FxText, SymbolicSizesGetHintsFromTheLookup) {
  const std::unordered_map<std::string, int64_t> known{{"s27", 768}};  // create_symbol s27 = 768
  FxParseOptions withHints;
  withHints.symbols = [&](std::string_view s) -> std::optional<int64_t> {
    auto it = known.find(std::string(s));
    return it == known.end() ? std::nullopt : std::optional<int64_t>(it->second);
  };

  auto g = parseClean(kDyntrainDynamo, withHints);
  ASSERT_TRUE(g);
  const Node& s27 = byName(*g, "s27");
  EXPECT_EQ(s27.role, Role::SymInput);
  EXPECT_EQ(s27.meta.kind, ValueKind::SymInt);
  EXPECT_EQ(g->str(s27.meta.symExpr), "s27");
  const Node& embeds = byName(*g, "inputs_embeds");  // "bf16[1, s27, 4096][4096*s27, 4096, 1]cuda:0"
  ASSERT_EQ(embeds.meta.sizes.size(), 3u);
  EXPECT_TRUE(embeds.meta.sizes[1].symbolic());
  EXPECT_EQ(g->str(embeds.meta.sizes[1].expr), "s27");
  EXPECT_EQ(values(embeds.meta.sizes), (std::vector<int64_t>{1, 768, 4096}));
  EXPECT_EQ(values(embeds.meta.strides), (std::vector<int64_t>{4096 * 768, 4096, 1}));
  EXPECT_TRUE(embeds.meta.allHinted());
  EXPECT_EQ(embeds.meta.storageBytes(), 768u * 4096u * 2u);
  const Node& arange = byName(*g, "arange");  // torch.arange(s27, device = ...): the size is a node
  EXPECT_EQ(arange.args[0].node, g->find("s27"));
  expectRoundTrip(*g, withHints);

  auto noHints = parseClean(kDyntrainDynamo);
  ASSERT_TRUE(noHints);
  const SymDim& unknown = byName(*noHints, "inputs_embeds").meta.sizes[1];
  EXPECT_TRUE(unknown.symbolic());
  EXPECT_FALSE(unknown.hasHint);
  EXPECT_EQ(unknown.value, 0);
  EXPECT_FALSE(byName(*noHints, "inputs_embeds").meta.allHinted());
  expectRoundTrip(*noHints);

  auto joint = parseClean(kDyntrainJoint, withHints);
  ASSERT_TRUE(joint);
  EXPECT_EQ(byName(*joint, "primals_1").role, Role::SymInput);
  const Node& add = byName(*joint, "add_3");  // add_3: "Sym(s27 + 1)" = primals_1 + 1
  EXPECT_EQ(add.meta.kind, ValueKind::SymInt);
  EXPECT_EQ(joint->str(add.meta.symExpr), "s27 + 1");
  EXPECT_EQ(joint->str(add.target), "operator.add");
  const Node& mask = byName(*joint, "eq_29");  // "b8[1, 1, s27, s27][s27**2, s27**2, s27, 1]cuda:0"
  EXPECT_EQ(values(mask.meta.strides), (std::vector<int64_t>{768 * 768, 768 * 768, 768, 1}));
  const Node& expand = byName(*joint, "expand");  // [1, -1, primals_1, primals_1]
  EXPECT_EQ(expand.args[1].items[2].node, joint->find("primals_1"));
  EXPECT_EQ(values(byName(*joint, "tangents_2").meta.strides), (std::vector<int64_t>{128256 * 768, 128256, 1}));
  expectRoundTrip(*joint, withHints);
}

TEST(FxText, InferenceGraphOfTheLambdaClass) {
  auto g = parseClean(kTinyInference);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->className(), "<lambda>");
  const Node& arg0 = byName(*g, "arg0_1");
  EXPECT_EQ(arg0.role, Role::Unknown);  // the text does not tell inputs from weights here
  EXPECT_EQ(arg0.meta.dtype, DType::I64);
  EXPECT_EQ(placeholderNames(*g).size(), 23u);
  const GraphCounts c = countGraph(*g);
  EXPECT_GT(c.calls, 0u);
  EXPECT_EQ(c.torchOps, c.calls);
  expectRoundTrip(*g);
}

TEST(FxText, InplaceOperatorsAndSetItem) {
  auto g = parseClean(kMixtralRouter);
  ASSERT_TRUE(g);
  // router_top_value /= sum_1;  router_top_value_1: "f32[64, 2][2, 1]cuda:0" = router_top_value
  const Node& divided = byName(*g, "router_top_value_1");
  EXPECT_EQ(g->str(divided.target), "operator.itruediv");
  ASSERT_EQ(divided.args.size(), 2u);
  EXPECT_EQ(divided.args[0].node, g->find("router_top_value"));
  EXPECT_EQ(divided.args[1].node, g->find("sum_1"));
  EXPECT_EQ(divided.meta.dtype, DType::F32);
  EXPECT_EQ(divided.provenance.line, 109u);
  // inv_perm[perm] = arange_5;  setitem = inv_perm
  const Node& setitem = byName(*g, "setitem");
  EXPECT_EQ(g->str(setitem.target), "operator.setitem");
  ASSERT_EQ(setitem.args.size(), 3u);
  EXPECT_EQ(setitem.args[0].node, g->find("inv_perm"));
  EXPECT_EQ(setitem.args[1].node, g->find("perm"));
  EXPECT_EQ(setitem.args[2].node, g->find("arange_5"));
  // Tuple results are read by getitem nodes; the call itself has no annotation.
  EXPECT_EQ(byName(*g, "topk").meta.kind, ValueKind::None);
  EXPECT_EQ(byName(*g, "perm").args[1].i, 1);
  EXPECT_EQ(g->str(byName(*g, "floordiv").target), "operator.floordiv");
  expectRoundTrip(*g);
}

TEST(FxText, HigherOrderOpSubgraphsAreNestedClasses) {
  auto g = parseClean(kHigherOrderOps);
  ASSERT_TRUE(g);
  ASSERT_EQ(g->subgraphs().size(), 3u);
  EXPECT_EQ(g->subgraphs()[0].first, "wrap_body_0");
  EXPECT_EQ(g->subgraphs()[1].first, "cond_true_0");
  EXPECT_EQ(g->subgraphs()[2].first, "cond_false_0");
  const Graph& wrapBody = *g->subgraphs()[0].second;
  EXPECT_TRUE(wrapBody.finalized());
  EXPECT_EQ(wrapBody.className(), "wrap_body_0");
  EXPECT_EQ(placeholderNames(wrapBody), (std::vector<std::string>{"s77", "l_x_"}));
  EXPECT_EQ(wrapBody.str(byName(wrapBody, "view").target), "view");

  const Node& attr = byName(*g, "wrap_body_0");
  EXPECT_EQ(attr.kind, NodeKind::GetAttr);
  EXPECT_EQ(g->str(attr.target), "wrap_body_0");
  const Node& wrap = byName(*g, "wrap");
  EXPECT_EQ(g->str(wrap.target), "torch.ops.higher_order.wrap");
  EXPECT_EQ(wrap.args[0].node, g->find("wrap_body_0"));
  EXPECT_EQ(wrap.meta.kind, ValueKind::None);
  const Node& cond = byName(*g, "cond");
  ASSERT_EQ(cond.args.size(), 4u);
  EXPECT_EQ(cond.args[3].kind, Arg::Kind::Tuple);
  EXPECT_EQ(g->str(byName(*g, "getitem").meta.sizes[0].expr), "s77");

  const Graph& trueBranch = *g->subgraphs()[1].second;  // holds one more level
  ASSERT_EQ(trueBranch.subgraphs().size(), 1u);
  EXPECT_EQ(trueBranch.subgraphs()[0].first, "wrap_body_1");
  EXPECT_EQ(trueBranch.subgraphs()[0].second->str(byName(*trueBranch.subgraphs()[0].second, "sin").target), "sin");
  EXPECT_EQ(g->subgraphs()[2].second->str(byName(*g->subgraphs()[2].second, "neg").target), "operator.neg");
  expectRoundTrip(*g);
}

TEST(FxText, ExportedProgramPayload) {
  auto g = parseClean(kExportedProgram);  // the signature and ranges after the graph are not graph text
  ASSERT_TRUE(g);
  EXPECT_EQ(placeholderNames(*g), (std::vector<std::string>{"x", "y"}));
  const Node& x = byName(*g, "x");
  EXPECT_TRUE(x.meta.sizes.empty());
  EXPECT_FALSE(x.meta.hasStrides);
  EXPECT_EQ(x.meta.device, 0u);
  const Node& item = byName(*g, "_local_scalar_dense");
  EXPECT_EQ(item.meta.kind, ValueKind::SymInt);
  EXPECT_EQ(g->str(item.meta.symExpr), "u0");
  EXPECT_EQ(item.provenance.line, 12u);  // " # File:" with the extra space of 2024-25 logs
  EXPECT_EQ(g->str(byName(*g, "neg").target), "operator.neg");
  EXPECT_EQ(byName(*g, "add").provenance.line, 13u);
  const SymDim& n = byName(*g, "slice_1").meta.sizes[0];
  EXPECT_EQ(g->str(n.expr), "((-u0)//3) + 5");
  EXPECT_FALSE(n.hasHint);
  EXPECT_EQ(byName(*g, "slice_1").args[3].node, g->find("add"));
  expectRoundTrip(*g);
}

TEST(FxText, OlderFormats) {
  auto dynamo = parseClean(kOlderDynamo);
  ASSERT_TRUE(dynamo);
  const Node& x = byName(*dynamo, "l_x_");
  EXPECT_EQ(x.meta.kind, ValueKind::Tensor);  // `L_x_ : torch.Tensor`
  EXPECT_EQ(x.meta.dtype, DType::Unknown);
  const Node& y = byName(*dynamo, "l_y_");  // "f32[5, 5]": no strides, no device
  EXPECT_EQ(values(y.meta.sizes), (std::vector<int64_t>{5, 5}));
  EXPECT_FALSE(y.meta.hasStrides);
  EXPECT_EQ(y.meta.device, 0u);
  EXPECT_EQ(byName(*dynamo, "cos").meta.kind, ValueKind::None);
  EXPECT_EQ(byName(*dynamo, "add").provenance.line, 7u);
  expectRoundTrip(*dynamo);

  auto postGrad = parseClean(kOlderPostGrad);
  ASSERT_TRUE(postGrad);
  EXPECT_EQ(placeholderNames(*postGrad), (std::vector<std::string>{"arg0_1", "arg1_1"}));
  EXPECT_TRUE(postGrad->forwardParams().empty());
  const Node& weight = byName(*postGrad, "fc1_weight");
  EXPECT_EQ(weight.kind, NodeKind::GetAttr);
  EXPECT_EQ(postGrad->str(weight.target), "fc1.weight");
  EXPECT_EQ(weight.provenance.file, 0u);
  EXPECT_EQ(byName(*postGrad, "addmm").provenance.line, 125u);
  expectRoundTrip(*postGrad);
}

TEST(FxText, TensorSubclassesAnnotationsAndCollectives) {
  auto g = parseClean(kSubclassesAndCollectives);
  ASSERT_TRUE(g);
  const Node& sharded = byName(*g, "primals_1");
  EXPECT_EQ(g->str(sharded.meta.wrapper), "DTensor");
  EXPECT_EQ(g->str(sharded.meta.extra), "(Shard(dim=0),)");
  EXPECT_EQ(values(sharded.meta.sizes), (std::vector<int64_t>{8, 4}));
  const Node& functional = byName(*g, "primals_2");
  EXPECT_EQ(g->str(functional.meta.wrapper), "FunctionalTensor");
  EXPECT_EQ(functional.meta.extra, 0u);
  EXPECT_EQ(functional.meta.dtype, DType::F32);

  const Node& gather = byName(*g, "all_gather_into_tensor");
  EXPECT_EQ(g->str(gather.target), "torch.ops._c10d_functional.all_gather_into_tensor.default");
  EXPECT_EQ(g->str(gather.provenance.annotation), "{'pp_stage': 0}");
  EXPECT_EQ(gather.provenance.line, 30u);
  const Node& sum = byName(*g, "sum_1");
  EXPECT_EQ(g->str(sum.provenance.annotation), "{'pp_stage': 0}");
  EXPECT_EQ(sum.provenance.file, 0u);
  EXPECT_EQ(countGraph(*g).torchOps, 4u);
  expectRoundTrip(*g);
}

TEST(FxText, DamagedTextWarnsWithLocationAndGoesOn) {
  constexpr std::string_view kDamaged = R"fx(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4][1]cpu"):
        a: "f32[4][1]cpu" = torch.ops.aten.relu.default(x)
        b: "f32[4][1]cpu" = torch.ops.aten.add.Tensor(a, @@@)
        c: "f32[4][1]cpu" = torch.ops.aten.mul.Tensor(a, ghost)
        a: "f32[4][1]cpu" = torch.ops.aten.neg.default(c)
        d: "f32[4][1]cpu" = torch.ops.aten.cat.default([a, c
        e: "weird annotation" = torch.ops.aten.sin.default(a)
        return (e,)
)fx";
  FxParseOptions options;
  options.file = "trace.log";
  options.firstLine = 100;
  Diagnostics d;
  auto g = parse(kDamaged, d, options);
  ASSERT_TRUE(g);
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d.items()[0].code, "fx_syntax");  // b: unreadable arguments, skipped
  EXPECT_EQ(d.items()[0].where.str(), "trace.log:103");
  EXPECT_EQ(d.items()[1].code, "fx_duplicate_name");  // a again
  EXPECT_EQ(d.items()[1].where.str(), "trace.log:105");
  EXPECT_EQ(d.items()[2].code, "fx_syntax");  // d: brackets never closed
  EXPECT_EQ(d.items()[2].where.str(), "trace.log:106");
  EXPECT_EQ(d.items()[3].code, "fx_annotation");
  EXPECT_EQ(d.items()[3].where.str(), "trace.log:107");

  EXPECT_EQ(g->find("b"), kNoNode);
  const Node& c = byName(*g, "c");  // `ghost` names no node: kept as written
  EXPECT_EQ(c.args[1].kind, Arg::Kind::Raw);
  EXPECT_EQ(g->str(c.args[1].s), "ghost");
  EXPECT_EQ(g->str(byName(*g, "a_1").target), "torch.ops.aten.neg.default");
  EXPECT_EQ(byName(*g, "e").meta.kind, ValueKind::Opaque);
  EXPECT_EQ(byName(*g, "e").args[0].node, g->find("a"));  // the name keeps its first definition
  EXPECT_NE(g->outputNode(), kNoNode);
  expectRoundTrip(*g, {}, /*warningsExpected=*/true);

  Diagnostics none;
  EXPECT_EQ(parse("", none), nullptr);
  EXPECT_EQ(parse("not a graph\n  at all (\n", none), nullptr);
  EXPECT_EQ(parse("class X(torch.nn.Module):\n    pass\n", none), nullptr);
}

// Statements that once printed back to a different graph (found by fuzz_fx_text).
TEST(FxText, StatementsThatLookAlikeStayApart) {
  constexpr std::string_view kText = R"fx(class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[4][1]cpu", L_y_: "f32[4][1]cpu"):
        l_x_ = L_x_
        is_none = l_x_ == None
        b: "f32[4][1]cpu" = torch.ops.aten.relu.default(l_x_)  # kept with the node
        l_y_ = L_y_
        s: "Sym(s0)" = +None
        return (is_none, b)
)fx";
  Diagnostics d;
  auto g = parse(kText, d);
  ASSERT_TRUE(g);
  // `a = b == None` is a comparison, not a liveness tail.
  const Node& isNone = byName(*g, "is_none");
  EXPECT_EQ(g->str(isNone.target), "operator.eq");
  EXPECT_EQ(isNone.args[1].kind, Arg::Kind::None);
  // A trailing comment stays with its statement and is printed with it.
  EXPECT_EQ(g->str(byName(*g, "b").comment), "kept with the node");
  EXPECT_NE(printFxText(*g).find("relu.default(l_x_);  l_x_ = None  # kept with the node\n"), std::string::npos);
  // A placeholder alias only opens the body; after other statements it is not one.
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d.items()[0].where.line, 6u);
  EXPECT_EQ(g->find("l_y_"), kNoNode);
  EXPECT_EQ(byName(*g, "L_y_").kind, NodeKind::Placeholder);
  // Operands of Python operators read as any argument: `+None` holds the constant None.
  EXPECT_EQ(byName(*g, "s").args[0].kind, Arg::Kind::None);
  expectRoundTrip(*g);
}

// A graph text cut anywhere (a truncated log) still loads, and what loads prints back to itself.
TEST(FxText, TruncatedTextRoundTrips) {
  for (std::string_view text : {kGpt2LossJoint, kHigherOrderOps, kMixtralRouter}) {
    for (size_t cut = 0; cut <= text.size(); cut += 7) {
      Diagnostics d;
      auto g = parse(text.substr(0, cut), d);
      if (!g) continue;
      SCOPED_TRACE("cut at " + std::to_string(cut));
      expectRoundTrip(*g);
      if (HasFailure()) return;
    }
  }
}

TEST(FxText, PrinterWritesPythonReprs) {
  Graph g;
  Node x;
  x.kind = NodeKind::Placeholder;
  x.name = g.intern("x");
  x.meta.kind = ValueKind::Tensor;
  x.meta.dtype = DType::F16;
  x.meta.sizes = {{2, 0, true}, {3, 0, true}};
  const NodeId xid = g.addNode(x);
  Node call;
  call.name = g.intern("call");
  call.target = g.intern("torch.ops.test.op.default");
  const double floats[] = {1e-05,
                           0.0001,
                           2.0,
                           1e16,
                           123456.789,
                           -0.0,
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           std::nan("")};
  Arg list;
  list.kind = Arg::Kind::List;
  for (double f : floats) list.items.push_back(Arg::ofFloat(f));
  call.args.push_back(list);
  call.args.push_back(Arg::ofStr(Arg::Kind::String, g.intern("it's \"q\"\n\\ \x01 ü")));
  call.args.push_back(Arg::ofInt(std::numeric_limits<int64_t>::min()));
  Arg dict;
  dict.kind = Arg::Kind::Dict;
  dict.keys = {Arg::ofStr(Arg::Kind::String, g.intern("k")), Arg::ofInt(2)};
  Arg single;
  single.kind = Arg::Kind::Tuple;
  single.items = {Arg::ofNode(xid)};
  dict.items = {single, Arg::none()};
  call.args.push_back(dict);
  call.kwargs.emplace_back(g.intern("dtype"), Arg::ofDType(DType::BF16));
  g.addNode(call);
  Node out;
  out.kind = NodeKind::Output;
  out.name = g.intern("output");
  out.target = g.intern("output");
  Arg ret;
  ret.kind = Arg::Kind::Tuple;
  ret.items = {Arg::ofNode(1)};
  out.args = {ret};
  g.addNode(out);
  g.finalize();

  const std::string printed = printFxText(g);
  EXPECT_NE(printed.find("[1e-05, 0.0001, 2.0, 1e+16, 123456.789, -0.0, inf, -inf, nan]"), std::string::npos)
      << printed;
  EXPECT_NE(printed.find(R"('it\'s "q"\n\\ \x01 ü')"), std::string::npos) << printed;
  EXPECT_NE(printed.find("-9223372036854775808"), std::string::npos);
  EXPECT_NE(printed.find("{'k': (x,), 2: None}"), std::string::npos);
  EXPECT_NE(printed.find("dtype = torch.bfloat16"), std::string::npos);
  EXPECT_NE(printed.find("def forward(self, x: \"f16[2, 3]\"):"), std::string::npos);
  EXPECT_NE(printed.find(";  x = None"), std::string::npos);  // x is dead after the call
  expectRoundTrip(g);
}

TEST(FxText, GraphsEqualNamesTheFirstDifference) {
  auto a = parseClean(kGpt2LossDynamo);
  std::string changed(kGpt2LossDynamo);
  const std::string from = "logits_1: \"f32[64, 1000]", to = "logits_1: \"f32[64, 1001]";
  changed.replace(changed.find(from), from.size(), to);
  auto b = parseClean(changed);
  ASSERT_TRUE(a && b);
  std::string why;
  EXPECT_TRUE(graphsEqual(*a, *a, &why));
  EXPECT_FALSE(graphsEqual(*a, *b, &why));
  EXPECT_NE(why.find("logits_1"), std::string::npos) << why;
  EXPECT_NE(why.find("sizes[1]"), std::string::npos) << why;
  EXPECT_NE(why.find("1000 vs 1001"), std::string::npos) << why;

  auto hop = parseClean(kHigherOrderOps);
  std::string otherBranch(kHigherOrderOps);
  otherBranch.replace(otherBranch.find("getitem.sin()"), 13, "getitem.cos()");
  auto hop2 = parseClean(otherBranch);
  ASSERT_TRUE(hop && hop2);
  EXPECT_FALSE(graphsEqual(*hop, *hop2, &why));
  EXPECT_NE(why.find("subgraph cond_true_0: subgraph wrap_body_1: node"), std::string::npos) << why;
}

TEST(FxText, EverySampleParsesToItsCountsFromTheText) {
  const std::filesystem::path samples = LATHE_SAMPLES_DIR;
  for (const SampleCounts& expected : kSampleCounts) {
    SCOPED_TRACE(expected.path);
    // The loader finds the graph payloads among the records; each is parsed here again on its own.
    const io::TraceLog log = io::loadTraceLog(samples / expected.path);
    SampleCounts parsed{expected.path, 0, 0, 0, 0, 0, 0};
    for (const auto& entry : log.graphs) {
      if (!entry.parent.empty()) continue;  // a nested graph, parsed with its parent
      Diagnostics diagnostics;
      const auto g = parseFxText(log.events[entry.event].payload, {}, diagnostics);
      ASSERT_TRUE(g) << entry.id;
      EXPECT_TRUE(diagnostics.empty()) << entry.id << ": " << diagnostics.items().front().message;
      ++parsed.graphs;
      addCounts(*g, parsed);
    }
    EXPECT_EQ(parsed.graphs, expected.graphs);
    EXPECT_EQ(parsed.nested, expected.nested);
    EXPECT_EQ(parsed.placeholders, expected.placeholders);
    EXPECT_EQ(parsed.calls, expected.calls);
    EXPECT_EQ(parsed.torchOps, expected.torchOps);
    EXPECT_EQ(parsed.outputs, expected.outputs);
  }
}

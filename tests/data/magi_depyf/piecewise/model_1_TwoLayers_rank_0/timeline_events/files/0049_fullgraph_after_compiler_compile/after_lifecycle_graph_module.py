from __future__ import annotations
import torch
class GraphModule(torch.nn.Module):
    def forward(self, y: "f32[s77, 4, 32, 16]", s77: "Sym(s77)", l_self_modules_layers_modules_0_modules_out_parameters_weight_: "f32[64, 64]", l_self_modules_layers_modules_0_modules_out_parameters_bias_: "f32[64]", l_x_: "f32[s77, 32, 64]", l_self_modules_layers_modules_0_modules_norm2_parameters_weight_: "f32[64]", l_self_modules_layers_modules_0_modules_norm2_parameters_bias_: "f32[64]", l_self_modules_layers_modules_0_modules_up_parameters_weight_: "f32[256, 64]", l_self_modules_layers_modules_0_modules_up_parameters_bias_: "f32[256]", l_self_modules_layers_modules_0_modules_down_parameters_weight_: "f32[64, 256]", l_self_modules_layers_modules_0_modules_down_parameters_bias_: "f32[64]", l_self_modules_layers_modules_1_modules_norm1_parameters_weight_: "f32[64]", l_self_modules_layers_modules_1_modules_norm1_parameters_bias_: "f32[64]", l_self_modules_layers_modules_1_modules_qkv_parameters_weight_: "f32[192, 64]", l_self_modules_layers_modules_1_modules_qkv_parameters_bias_: "f32[192]"):
        # File: tests/data/make_magi_dumps.py:52 in forward, code: x = x + self.out(y.transpose(1, 2).reshape(b, t, d))
        transpose: "f32[s77, 32, 4, 16]" = y.transpose(1, 2);  y = None
        reshape: "f32[s77, 32, 64]" = transpose.reshape(s77, 32, 64);  transpose = None
        linear: "f32[s77, 32, 64]" = torch._C._nn.linear(reshape, l_self_modules_layers_modules_0_modules_out_parameters_weight_, l_self_modules_layers_modules_0_modules_out_parameters_bias_);  reshape = l_self_modules_layers_modules_0_modules_out_parameters_weight_ = l_self_modules_layers_modules_0_modules_out_parameters_bias_ = None
        add: "f32[s77, 32, 64]" = l_x_ + linear;  l_x_ = linear = None

        # File: tests/data/make_magi_dumps.py:53 in forward, code: return x + self.down(F.gelu(self.up(self.norm2(x))))
        layer_norm: "f32[s77, 32, 64]" = torch.nn.functional.layer_norm(add, (64,), l_self_modules_layers_modules_0_modules_norm2_parameters_weight_, l_self_modules_layers_modules_0_modules_norm2_parameters_bias_, 1e-05);  l_self_modules_layers_modules_0_modules_norm2_parameters_weight_ = l_self_modules_layers_modules_0_modules_norm2_parameters_bias_ = None
        linear_1: "f32[s77, 32, 256]" = torch._C._nn.linear(layer_norm, l_self_modules_layers_modules_0_modules_up_parameters_weight_, l_self_modules_layers_modules_0_modules_up_parameters_bias_);  layer_norm = l_self_modules_layers_modules_0_modules_up_parameters_weight_ = l_self_modules_layers_modules_0_modules_up_parameters_bias_ = None
        gelu: "f32[s77, 32, 256]" = torch._C._nn.gelu(linear_1);  linear_1 = None
        linear_2: "f32[s77, 32, 64]" = torch._C._nn.linear(gelu, l_self_modules_layers_modules_0_modules_down_parameters_weight_, l_self_modules_layers_modules_0_modules_down_parameters_bias_);  gelu = l_self_modules_layers_modules_0_modules_down_parameters_weight_ = l_self_modules_layers_modules_0_modules_down_parameters_bias_ = None
        add_1: "f32[s77, 32, 64]" = add + linear_2;  add = linear_2 = None

        # File: tests/data/make_magi_dumps.py:50 in forward, code: q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        layer_norm_1: "f32[s77, 32, 64]" = torch.nn.functional.layer_norm(add_1, (64,), l_self_modules_layers_modules_1_modules_norm1_parameters_weight_, l_self_modules_layers_modules_1_modules_norm1_parameters_bias_, 1e-05);  l_self_modules_layers_modules_1_modules_norm1_parameters_weight_ = l_self_modules_layers_modules_1_modules_norm1_parameters_bias_ = None
        linear_3: "f32[s77, 32, 192]" = torch._C._nn.linear(layer_norm_1, l_self_modules_layers_modules_1_modules_qkv_parameters_weight_, l_self_modules_layers_modules_1_modules_qkv_parameters_bias_);  layer_norm_1 = l_self_modules_layers_modules_1_modules_qkv_parameters_weight_ = l_self_modules_layers_modules_1_modules_qkv_parameters_bias_ = None
        view: "f32[s77, 32, 3, 4, 16]" = linear_3.view(s77, 32, 3, 4, 16);  linear_3 = s77 = None
        unbind = view.unbind(2);  view = None
        getitem: "f32[s77, 32, 4, 16]" = unbind[0]
        getitem_1: "f32[s77, 32, 4, 16]" = unbind[1]
        getitem_2: "f32[s77, 32, 4, 16]" = unbind[2];  unbind = None

        # File: tests/data/make_magi_dumps.py:51 in forward, code: y = attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        transpose_1: "f32[s77, 4, 32, 16]" = getitem.transpose(1, 2);  getitem = None
        transpose_2: "f32[s77, 4, 32, 16]" = getitem_1.transpose(1, 2);  getitem_1 = None
        transpose_3: "f32[s77, 4, 32, 16]" = getitem_2.transpose(1, 2);  getitem_2 = None
        return (transpose_1, transpose_2, transpose_3, add_1)

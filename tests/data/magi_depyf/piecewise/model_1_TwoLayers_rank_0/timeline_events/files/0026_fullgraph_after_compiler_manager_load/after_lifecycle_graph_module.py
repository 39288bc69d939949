from __future__ import annotations
import torch
class GraphModule(torch.nn.Module):
    def forward(self, l_x_: "f32[s77, 32, 64]", s77: "Sym(s77)", l_self_modules_layers_modules_0_modules_norm1_parameters_weight_: "f32[64]", l_self_modules_layers_modules_0_modules_norm1_parameters_bias_: "f32[64]", l_self_modules_layers_modules_0_modules_qkv_parameters_weight_: "f32[192, 64]", l_self_modules_layers_modules_0_modules_qkv_parameters_bias_: "f32[192]"):
        # File: tests/data/make_magi_dumps.py:50 in forward, code: q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        layer_norm: "f32[s77, 32, 64]" = torch.nn.functional.layer_norm(l_x_, (64,), l_self_modules_layers_modules_0_modules_norm1_parameters_weight_, l_self_modules_layers_modules_0_modules_norm1_parameters_bias_, 1e-05);  l_x_ = l_self_modules_layers_modules_0_modules_norm1_parameters_weight_ = l_self_modules_layers_modules_0_modules_norm1_parameters_bias_ = None
        linear: "f32[s77, 32, 192]" = torch._C._nn.linear(layer_norm, l_self_modules_layers_modules_0_modules_qkv_parameters_weight_, l_self_modules_layers_modules_0_modules_qkv_parameters_bias_);  layer_norm = l_self_modules_layers_modules_0_modules_qkv_parameters_weight_ = l_self_modules_layers_modules_0_modules_qkv_parameters_bias_ = None
        view: "f32[s77, 32, 3, 4, 16]" = linear.view(s77, 32, 3, 4, 16);  linear = s77 = None
        unbind = view.unbind(2);  view = None
        getitem: "f32[s77, 32, 4, 16]" = unbind[0]
        getitem_1: "f32[s77, 32, 4, 16]" = unbind[1]
        getitem_2: "f32[s77, 32, 4, 16]" = unbind[2];  unbind = None

        # File: tests/data/make_magi_dumps.py:51 in forward, code: y = attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        transpose: "f32[s77, 4, 32, 16]" = getitem.transpose(1, 2);  getitem = None
        transpose_1: "f32[s77, 4, 32, 16]" = getitem_1.transpose(1, 2);  getitem_1 = None
        transpose_2: "f32[s77, 4, 32, 16]" = getitem_2.transpose(1, 2);  getitem_2 = None
        return (transpose, transpose_1, transpose_2)

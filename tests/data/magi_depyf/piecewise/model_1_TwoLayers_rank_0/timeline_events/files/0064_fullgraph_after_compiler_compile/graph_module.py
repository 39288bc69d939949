from __future__ import annotations
import torch
class GraphModule(torch.nn.Module):
    def forward(self, y_1: "f32[s77, 4, 32, 16]", s77: "Sym(s77)", l_self_modules_layers_modules_1_modules_out_parameters_weight_: "f32[64, 64]", l_self_modules_layers_modules_1_modules_out_parameters_bias_: "f32[64]", x_1: "f32[s77, 32, 64]", l_self_modules_layers_modules_1_modules_norm2_parameters_weight_: "f32[64]", l_self_modules_layers_modules_1_modules_norm2_parameters_bias_: "f32[64]", l_self_modules_layers_modules_1_modules_up_parameters_weight_: "f32[256, 64]", l_self_modules_layers_modules_1_modules_up_parameters_bias_: "f32[256]", l_self_modules_layers_modules_1_modules_down_parameters_weight_: "f32[64, 256]", l_self_modules_layers_modules_1_modules_down_parameters_bias_: "f32[64]"):
        # File: tests/data/make_magi_dumps.py:52 in forward, code: x = x + self.out(y.transpose(1, 2).reshape(b, t, d))
        transpose: "f32[s77, 32, 4, 16]" = y_1.transpose(1, 2);  y_1 = None
        reshape: "f32[s77, 32, 64]" = transpose.reshape(s77, 32, 64);  transpose = s77 = None
        linear: "f32[s77, 32, 64]" = torch._C._nn.linear(reshape, l_self_modules_layers_modules_1_modules_out_parameters_weight_, l_self_modules_layers_modules_1_modules_out_parameters_bias_);  reshape = l_self_modules_layers_modules_1_modules_out_parameters_weight_ = l_self_modules_layers_modules_1_modules_out_parameters_bias_ = None
        add: "f32[s77, 32, 64]" = x_1 + linear;  x_1 = linear = None

        # File: tests/data/make_magi_dumps.py:53 in forward, code: return x + self.down(F.gelu(self.up(self.norm2(x))))
        layer_norm: "f32[s77, 32, 64]" = torch.nn.functional.layer_norm(add, (64,), l_self_modules_layers_modules_1_modules_norm2_parameters_weight_, l_self_modules_layers_modules_1_modules_norm2_parameters_bias_, 1e-05);  l_self_modules_layers_modules_1_modules_norm2_parameters_weight_ = l_self_modules_layers_modules_1_modules_norm2_parameters_bias_ = None
        linear_1: "f32[s77, 32, 256]" = torch._C._nn.linear(layer_norm, l_self_modules_layers_modules_1_modules_up_parameters_weight_, l_self_modules_layers_modules_1_modules_up_parameters_bias_);  layer_norm = l_self_modules_layers_modules_1_modules_up_parameters_weight_ = l_self_modules_layers_modules_1_modules_up_parameters_bias_ = None
        gelu: "f32[s77, 32, 256]" = torch._C._nn.gelu(linear_1);  linear_1 = None
        linear_2: "f32[s77, 32, 64]" = torch._C._nn.linear(gelu, l_self_modules_layers_modules_1_modules_down_parameters_weight_, l_self_modules_layers_modules_1_modules_down_parameters_bias_);  gelu = l_self_modules_layers_modules_1_modules_down_parameters_weight_ = l_self_modules_layers_modules_1_modules_down_parameters_bias_ = None
        add_1: "f32[s77, 32, 64]" = add + linear_2;  add = linear_2 = None
        return add_1

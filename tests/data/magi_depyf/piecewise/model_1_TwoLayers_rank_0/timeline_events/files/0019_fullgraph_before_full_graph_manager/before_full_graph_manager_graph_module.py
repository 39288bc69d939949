from __future__ import annotations
import torch
class GraphModule(torch.nn.Module):
    def forward(self, s77: "Sym(s77)", L_x_: "f32[s77, 32, 64]", L_self_modules_layers_modules_0_modules_norm1_parameters_weight_: "f32[64]", L_self_modules_layers_modules_0_modules_norm1_parameters_bias_: "f32[64]", L_self_modules_layers_modules_0_modules_qkv_parameters_weight_: "f32[192, 64]", L_self_modules_layers_modules_0_modules_qkv_parameters_bias_: "f32[192]", L_self_modules_layers_modules_0_modules_out_parameters_weight_: "f32[64, 64]", L_self_modules_layers_modules_0_modules_out_parameters_bias_: "f32[64]", L_self_modules_layers_modules_0_modules_norm2_parameters_weight_: "f32[64]", L_self_modules_layers_modules_0_modules_norm2_parameters_bias_: "f32[64]", L_self_modules_layers_modules_0_modules_up_parameters_weight_: "f32[256, 64]", L_self_modules_layers_modules_0_modules_up_parameters_bias_: "f32[256]", L_self_modules_layers_modules_0_modules_down_parameters_weight_: "f32[64, 256]", L_self_modules_layers_modules_0_modules_down_parameters_bias_: "f32[64]", L_self_modules_layers_modules_1_modules_norm1_parameters_weight_: "f32[64]", L_self_modules_layers_modules_1_modules_norm1_parameters_bias_: "f32[64]", L_self_modules_layers_modules_1_modules_qkv_parameters_weight_: "f32[192, 64]", L_self_modules_layers_modules_1_modules_qkv_parameters_bias_: "f32[192]", L_self_modules_layers_modules_1_modules_out_parameters_weight_: "f32[64, 64]", L_self_modules_layers_modules_1_modules_out_parameters_bias_: "f32[64]", L_self_modules_layers_modules_1_modules_norm2_parameters_weight_: "f32[64]", L_self_modules_layers_modules_1_modules_norm2_parameters_bias_: "f32[64]", L_self_modules_layers_modules_1_modules_up_parameters_weight_: "f32[256, 64]", L_self_modules_layers_modules_1_modules_up_parameters_bias_: "f32[256]", L_self_modules_layers_modules_1_modules_down_parameters_weight_: "f32[64, 256]", L_self_modules_layers_modules_1_modules_down_parameters_bias_: "f32[64]"):
        l_x_ = L_x_
        l_self_modules_layers_modules_0_modules_norm1_parameters_weight_ = L_self_modules_layers_modules_0_modules_norm1_parameters_weight_
        l_self_modules_layers_modules_0_modules_norm1_parameters_bias_ = L_self_modules_layers_modules_0_modules_norm1_parameters_bias_
        l_self_modules_layers_modules_0_modules_qkv_parameters_weight_ = L_self_modules_layers_modules_0_modules_qkv_parameters_weight_
        l_self_modules_layers_modules_0_modules_qkv_parameters_bias_ = L_self_modules_layers_modules_0_modules_qkv_parameters_bias_
        l_self_modules_layers_modules_0_modules_out_parameters_weight_ = L_self_modules_layers_modules_0_modules_out_parameters_weight_
        l_self_modules_layers_modules_0_modules_out_parameters_bias_ = L_self_modules_layers_modules_0_modules_out_parameters_bias_
        l_self_modules_layers_modules_0_modules_norm2_parameters_weight_ = L_self_modules_layers_modules_0_modules_norm2_parameters_weight_
        l_self_modules_layers_modules_0_modules_norm2_parameters_bias_ = L_self_modules_layers_modules_0_modules_norm2_parameters_bias_
        l_self_modules_layers_modules_0_modules_up_parameters_weight_ = L_self_modules_layers_modules_0_modules_up_parameters_weight_
        l_self_modules_layers_modules_0_modules_up_parameters_bias_ = L_self_modules_layers_modules_0_modules_up_parameters_bias_
        l_self_modules_layers_modules_0_modules_down_parameters_weight_ = L_self_modules_layers_modules_0_modules_down_parameters_weight_
        l_self_modules_layers_modules_0_modules_down_parameters_bias_ = L_self_modules_layers_modules_0_modules_down_parameters_bias_
        l_self_modules_layers_modules_1_modules_norm1_parameters_weight_ = L_self_modules_layers_modules_1_modules_norm1_parameters_weight_
        l_self_modules_layers_modules_1_modules_norm1_parameters_bias_ = L_self_modules_layers_modules_1_modules_norm1_parameters_bias_
        l_self_modules_layers_modules_1_modules_qkv_parameters_weight_ = L_self_modules_layers_modules_1_modules_qkv_parameters_weight_
        l_self_modules_layers_modules_1_modules_qkv_parameters_bias_ = L_self_modules_layers_modules_1_modules_qkv_parameters_bias_
        l_self_modules_layers_modules_1_modules_out_parameters_weight_ = L_self_modules_layers_modules_1_modules_out_parameters_weight_
        l_self_modules_layers_modules_1_modules_out_parameters_bias_ = L_self_modules_layers_modules_1_modules_out_parameters_bias_
        l_self_modules_layers_modules_1_modules_norm2_parameters_weight_ = L_self_modules_layers_modules_1_modules_norm2_parameters_weight_
        l_self_modules_layers_modules_1_modules_norm2_parameters_bias_ = L_self_modules_layers_modules_1_modules_norm2_parameters_bias_
        l_self_modules_layers_modules_1_modules_up_parameters_weight_ = L_self_modules_layers_modules_1_modules_up_parameters_weight_
        l_self_modules_layers_modules_1_modules_up_parameters_bias_ = L_self_modules_layers_modules_1_modules_up_parameters_bias_
        l_self_modules_layers_modules_1_modules_down_parameters_weight_ = L_self_modules_layers_modules_1_modules_down_parameters_weight_
        l_self_modules_layers_modules_1_modules_down_parameters_bias_ = L_self_modules_layers_modules_1_modules_down_parameters_bias_

        # File: tests/data/make_magi_dumps.py:50 in forward, code: q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        layer_norm: "f32[s77, 32, 64]" = torch.nn.functional.layer_norm(l_x_, (64,), l_self_modules_layers_modules_0_modules_norm1_parameters_weight_, l_self_modules_layers_modules_0_modules_norm1_parameters_bias_, 1e-05);  l_self_modules_layers_modules_0_modules_norm1_parameters_weight_ = l_self_modules_layers_modules_0_modules_norm1_parameters_bias_ = None
        linear: "f32[s77, 32, 192]" = torch._C._nn.linear(layer_norm, l_self_modules_layers_modules_0_modules_qkv_parameters_weight_, l_self_modules_layers_modules_0_modules_qkv_parameters_bias_);  layer_norm = l_self_modules_layers_modules_0_modules_qkv_parameters_weight_ = l_self_modules_layers_modules_0_modules_qkv_parameters_bias_ = None
        view: "f32[s77, 32, 3, 4, 16]" = linear.view(s77, 32, 3, 4, 16);  linear = None
        unbind = view.unbind(2);  view = None
        q: "f32[s77, 32, 4, 16]" = unbind[0]
        k: "f32[s77, 32, 4, 16]" = unbind[1]
        v: "f32[s77, 32, 4, 16]" = unbind[2];  unbind = None

        # File: tests/data/make_magi_dumps.py:51 in forward, code: y = attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        transpose: "f32[s77, 4, 32, 16]" = q.transpose(1, 2);  q = None
        transpose_1: "f32[s77, 4, 32, 16]" = k.transpose(1, 2);  k = None
        transpose_2: "f32[s77, 4, 32, 16]" = v.transpose(1, 2);  v = None
        y: "f32[s77, 4, 32, 16]" = torch.ops.lathe_test.attention.default(transpose, transpose_1, transpose_2);  transpose = transpose_1 = transpose_2 = None

        # File: tests/data/make_magi_dumps.py:52 in forward, code: x = x + self.out(y.transpose(1, 2).reshape(b, t, d))
        transpose_3: "f32[s77, 32, 4, 16]" = y.transpose(1, 2);  y = None
        reshape: "f32[s77, 32, 64]" = transpose_3.reshape(s77, 32, 64);  transpose_3 = None
        linear_1: "f32[s77, 32, 64]" = torch._C._nn.linear(reshape, l_self_modules_layers_modules_0_modules_out_parameters_weight_, l_self_modules_layers_modules_0_modules_out_parameters_bias_);  reshape = l_self_modules_layers_modules_0_modules_out_parameters_weight_ = l_self_modules_layers_modules_0_modules_out_parameters_bias_ = None
        x: "f32[s77, 32, 64]" = l_x_ + linear_1;  l_x_ = linear_1 = None

        # File: tests/data/make_magi_dumps.py:53 in forward, code: return x + self.down(F.gelu(self.up(self.norm2(x))))
        layer_norm_1: "f32[s77, 32, 64]" = torch.nn.functional.layer_norm(x, (64,), l_self_modules_layers_modules_0_modules_norm2_parameters_weight_, l_self_modules_layers_modules_0_modules_norm2_parameters_bias_, 1e-05);  l_self_modules_layers_modules_0_modules_norm2_parameters_weight_ = l_self_modules_layers_modules_0_modules_norm2_parameters_bias_ = None
        linear_2: "f32[s77, 32, 256]" = torch._C._nn.linear(layer_norm_1, l_self_modules_layers_modules_0_modules_up_parameters_weight_, l_self_modules_layers_modules_0_modules_up_parameters_bias_);  layer_norm_1 = l_self_modules_layers_modules_0_modules_up_parameters_weight_ = l_self_modules_layers_modules_0_modules_up_parameters_bias_ = None
        gelu: "f32[s77, 32, 256]" = torch._C._nn.gelu(linear_2);  linear_2 = None
        linear_3: "f32[s77, 32, 64]" = torch._C._nn.linear(gelu, l_self_modules_layers_modules_0_modules_down_parameters_weight_, l_self_modules_layers_modules_0_modules_down_parameters_bias_);  gelu = l_self_modules_layers_modules_0_modules_down_parameters_weight_ = l_self_modules_layers_modules_0_modules_down_parameters_bias_ = None
        x_1: "f32[s77, 32, 64]" = x + linear_3;  x = linear_3 = None

        # File: tests/data/make_magi_dumps.py:50 in forward, code: q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        layer_norm_2: "f32[s77, 32, 64]" = torch.nn.functional.layer_norm(x_1, (64,), l_self_modules_layers_modules_1_modules_norm1_parameters_weight_, l_self_modules_layers_modules_1_modules_norm1_parameters_bias_, 1e-05);  l_self_modules_layers_modules_1_modules_norm1_parameters_weight_ = l_self_modules_layers_modules_1_modules_norm1_parameters_bias_ = None
        linear_4: "f32[s77, 32, 192]" = torch._C._nn.linear(layer_norm_2, l_self_modules_layers_modules_1_modules_qkv_parameters_weight_, l_self_modules_layers_modules_1_modules_qkv_parameters_bias_);  layer_norm_2 = l_self_modules_layers_modules_1_modules_qkv_parameters_weight_ = l_self_modules_layers_modules_1_modules_qkv_parameters_bias_ = None
        view_1: "f32[s77, 32, 3, 4, 16]" = linear_4.view(s77, 32, 3, 4, 16);  linear_4 = None
        unbind_1 = view_1.unbind(2);  view_1 = None
        q_1: "f32[s77, 32, 4, 16]" = unbind_1[0]
        k_1: "f32[s77, 32, 4, 16]" = unbind_1[1]
        v_1: "f32[s77, 32, 4, 16]" = unbind_1[2];  unbind_1 = None

        # File: tests/data/make_magi_dumps.py:51 in forward, code: y = attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        transpose_4: "f32[s77, 4, 32, 16]" = q_1.transpose(1, 2);  q_1 = None
        transpose_5: "f32[s77, 4, 32, 16]" = k_1.transpose(1, 2);  k_1 = None
        transpose_6: "f32[s77, 4, 32, 16]" = v_1.transpose(1, 2);  v_1 = None
        y_1: "f32[s77, 4, 32, 16]" = torch.ops.lathe_test.attention.default(transpose_4, transpose_5, transpose_6);  transpose_4 = transpose_5 = transpose_6 = None

        # File: tests/data/make_magi_dumps.py:52 in forward, code: x = x + self.out(y.transpose(1, 2).reshape(b, t, d))
        transpose_7: "f32[s77, 32, 4, 16]" = y_1.transpose(1, 2);  y_1 = None
        reshape_1: "f32[s77, 32, 64]" = transpose_7.reshape(s77, 32, 64);  transpose_7 = s77 = None
        linear_5: "f32[s77, 32, 64]" = torch._C._nn.linear(reshape_1, l_self_modules_layers_modules_1_modules_out_parameters_weight_, l_self_modules_layers_modules_1_modules_out_parameters_bias_);  reshape_1 = l_self_modules_layers_modules_1_modules_out_parameters_weight_ = l_self_modules_layers_modules_1_modules_out_parameters_bias_ = None
        x_2: "f32[s77, 32, 64]" = x_1 + linear_5;  x_1 = linear_5 = None

        # File: tests/data/make_magi_dumps.py:53 in forward, code: return x + self.down(F.gelu(self.up(self.norm2(x))))
        layer_norm_3: "f32[s77, 32, 64]" = torch.nn.functional.layer_norm(x_2, (64,), l_self_modules_layers_modules_1_modules_norm2_parameters_weight_, l_self_modules_layers_modules_1_modules_norm2_parameters_bias_, 1e-05);  l_self_modules_layers_modules_1_modules_norm2_parameters_weight_ = l_self_modules_layers_modules_1_modules_norm2_parameters_bias_ = None
        linear_6: "f32[s77, 32, 256]" = torch._C._nn.linear(layer_norm_3, l_self_modules_layers_modules_1_modules_up_parameters_weight_, l_self_modules_layers_modules_1_modules_up_parameters_bias_);  layer_norm_3 = l_self_modules_layers_modules_1_modules_up_parameters_weight_ = l_self_modules_layers_modules_1_modules_up_parameters_bias_ = None
        gelu_1: "f32[s77, 32, 256]" = torch._C._nn.gelu(linear_6);  linear_6 = None
        linear_7: "f32[s77, 32, 64]" = torch._C._nn.linear(gelu_1, l_self_modules_layers_modules_1_modules_down_parameters_weight_, l_self_modules_layers_modules_1_modules_down_parameters_bias_);  gelu_1 = l_self_modules_layers_modules_1_modules_down_parameters_weight_ = l_self_modules_layers_modules_1_modules_down_parameters_bias_ = None
        x_3: "f32[s77, 32, 64]" = x_2 + linear_7;  x_2 = linear_7 = None
        return (x_3,)

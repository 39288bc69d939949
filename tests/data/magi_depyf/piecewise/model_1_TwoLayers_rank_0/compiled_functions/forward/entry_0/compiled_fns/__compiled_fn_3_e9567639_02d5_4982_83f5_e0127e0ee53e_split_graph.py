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

        # No stacktrace found for following nodes
        submod_0 = self.submod_0(l_x_, s77, l_self_modules_layers_modules_0_modules_norm1_parameters_weight_, l_self_modules_layers_modules_0_modules_norm1_parameters_bias_, l_self_modules_layers_modules_0_modules_qkv_parameters_weight_, l_self_modules_layers_modules_0_modules_qkv_parameters_bias_);  l_self_modules_layers_modules_0_modules_norm1_parameters_weight_ = l_self_modules_layers_modules_0_modules_norm1_parameters_bias_ = l_self_modules_layers_modules_0_modules_qkv_parameters_weight_ = l_self_modules_layers_modules_0_modules_qkv_parameters_bias_ = None
        getitem = submod_0[0]
        getitem_1 = submod_0[1]
        getitem_2 = submod_0[2];  submod_0 = None
        submod_1 = self.submod_1(getitem, s77, getitem_1, getitem_2);  getitem = getitem_1 = getitem_2 = None
        submod_2 = self.submod_2(submod_1, s77, l_self_modules_layers_modules_0_modules_out_parameters_weight_, l_self_modules_layers_modules_0_modules_out_parameters_bias_, l_x_, l_self_modules_layers_modules_0_modules_norm2_parameters_weight_, l_self_modules_layers_modules_0_modules_norm2_parameters_bias_, l_self_modules_layers_modules_0_modules_up_parameters_weight_, l_self_modules_layers_modules_0_modules_up_parameters_bias_, l_self_modules_layers_modules_0_modules_down_parameters_weight_, l_self_modules_layers_modules_0_modules_down_parameters_bias_, l_self_modules_layers_modules_1_modules_norm1_parameters_weight_, l_self_modules_layers_modules_1_modules_norm1_parameters_bias_, l_self_modules_layers_modules_1_modules_qkv_parameters_weight_, l_self_modules_layers_modules_1_modules_qkv_parameters_bias_);  submod_1 = l_self_modules_layers_modules_0_modules_out_parameters_weight_ = l_self_modules_layers_modules_0_modules_out_parameters_bias_ = l_x_ = l_self_modules_layers_modules_0_modules_norm2_parameters_weight_ = l_self_modules_layers_modules_0_modules_norm2_parameters_bias_ = l_self_modules_layers_modules_0_modules_up_parameters_weight_ = l_self_modules_layers_modules_0_modules_up_parameters_bias_ = l_self_modules_layers_modules_0_modules_down_parameters_weight_ = l_self_modules_layers_modules_0_modules_down_parameters_bias_ = l_self_modules_layers_modules_1_modules_norm1_parameters_weight_ = l_self_modules_layers_modules_1_modules_norm1_parameters_bias_ = l_self_modules_layers_modules_1_modules_qkv_parameters_weight_ = l_self_modules_layers_modules_1_modules_qkv_parameters_bias_ = None
        getitem_3 = submod_2[0]
        getitem_4 = submod_2[1]
        getitem_5 = submod_2[2]
        getitem_6 = submod_2[3];  submod_2 = None
        submod_3 = self.submod_3(getitem_3, s77, getitem_4, getitem_5);  getitem_3 = getitem_4 = getitem_5 = None
        submod_4 = self.submod_4(submod_3, s77, l_self_modules_layers_modules_1_modules_out_parameters_weight_, l_self_modules_layers_modules_1_modules_out_parameters_bias_, getitem_6, l_self_modules_layers_modules_1_modules_norm2_parameters_weight_, l_self_modules_layers_modules_1_modules_norm2_parameters_bias_, l_self_modules_layers_modules_1_modules_up_parameters_weight_, l_self_modules_layers_modules_1_modules_up_parameters_bias_, l_self_modules_layers_modules_1_modules_down_parameters_weight_, l_self_modules_layers_modules_1_modules_down_parameters_bias_);  submod_3 = s77 = l_self_modules_layers_modules_1_modules_out_parameters_weight_ = l_self_modules_layers_modules_1_modules_out_parameters_bias_ = getitem_6 = l_self_modules_layers_modules_1_modules_norm2_parameters_weight_ = l_self_modules_layers_modules_1_modules_norm2_parameters_bias_ = l_self_modules_layers_modules_1_modules_up_parameters_weight_ = l_self_modules_layers_modules_1_modules_up_parameters_bias_ = l_self_modules_layers_modules_1_modules_down_parameters_weight_ = l_self_modules_layers_modules_1_modules_down_parameters_bias_ = None
        return (submod_4,)

    class submod_0(torch.nn.Module):
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

    class submod_1(torch.nn.Module):
        def forward(self, transpose: "f32[s77, 4, 32, 16]", s77: "Sym(s77)", transpose_1: "f32[s77, 4, 32, 16]", transpose_2: "f32[s77, 4, 32, 16]"):
            # File: tests/data/make_magi_dumps.py:51 in forward, code: y = attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
            attention_default: "f32[s77, 4, 32, 16]" = torch.ops.lathe_test.attention.default(transpose, transpose_1, transpose_2);  transpose = transpose_1 = transpose_2 = None
            return attention_default

    class submod_2(torch.nn.Module):
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

    class submod_3(torch.nn.Module):
        def forward(self, transpose_4: "f32[s77, 4, 32, 16]", s77: "Sym(s77)", transpose_5: "f32[s77, 4, 32, 16]", transpose_6: "f32[s77, 4, 32, 16]"):
            # File: tests/data/make_magi_dumps.py:51 in forward, code: y = attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
            attention_default: "f32[s77, 4, 32, 16]" = torch.ops.lathe_test.attention.default(transpose_4, transpose_5, transpose_6);  transpose_4 = transpose_5 = transpose_6 = None
            return attention_default

    class submod_4(torch.nn.Module):
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

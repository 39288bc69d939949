


def forward(self, y, s77 : torch.SymInt, l_self_modules_layers_modules_0_modules_out_parameters_weight_ : torch.nn.parameter.Parameter, l_self_modules_layers_modules_0_modules_out_parameters_bias_ : torch.nn.parameter.Parameter, l_x_ : torch.Tensor, l_self_modules_layers_modules_0_modules_norm2_parameters_weight_ : torch.nn.parameter.Parameter, l_self_modules_layers_modules_0_modules_norm2_parameters_bias_ : torch.nn.parameter.Parameter, l_self_modules_layers_modules_0_modules_up_parameters_weight_ : torch.nn.parameter.Parameter, l_self_modules_layers_modules_0_modules_up_parameters_bias_ : torch.nn.parameter.Parameter, l_self_modules_layers_modules_0_modules_down_parameters_weight_ : torch.nn.parameter.Parameter, l_self_modules_layers_modules_0_modules_down_parameters_bias_ : torch.nn.parameter.Parameter, l_self_modules_layers_modules_1_modules_norm1_parameters_weight_ : torch.nn.parameter.Parameter, l_self_modules_layers_modules_1_modules_norm1_parameters_bias_ : torch.nn.parameter.Parameter, l_self_modules_layers_modules_1_modules_qkv_parameters_weight_ : torch.nn.parameter.Parameter, l_self_modules_layers_modules_1_modules_qkv_parameters_bias_ : torch.nn.parameter.Parameter):
    transpose = y.transpose(1, 2);  y = None
    reshape = transpose.reshape(s77, 32, 64);  transpose = None
    linear = torch._C._nn.linear(reshape, l_self_modules_layers_modules_0_modules_out_parameters_weight_, l_self_modules_layers_modules_0_modules_out_parameters_bias_);  reshape = l_self_modules_layers_modules_0_modules_out_parameters_weight_ = l_self_modules_layers_modules_0_modules_out_parameters_bias_ = None
    add = l_x_ + linear;  l_x_ = linear = None
    layer_norm = torch.nn.functional.layer_norm(add, (64,), l_self_modules_layers_modules_0_modules_norm2_parameters_weight_, l_self_modules_layers_modules_0_modules_norm2_parameters_bias_, 1e-05);  l_self_modules_layers_modules_0_modules_norm2_parameters_weight_ = l_self_modules_layers_modules_0_modules_norm2_parameters_bias_ = None
    linear_1 = torch._C._nn.linear(layer_norm, l_self_modules_layers_modules_0_modules_up_parameters_weight_, l_self_modules_layers_modules_0_modules_up_parameters_bias_);  layer_norm = l_self_modules_layers_modules_0_modules_up_parameters_weight_ = l_self_modules_layers_modules_0_modules_up_parameters_bias_ = None
    gelu = torch._C._nn.gelu(linear_1);  linear_1 = None
    linear_2 = torch._C._nn.linear(gelu, l_self_modules_layers_modules_0_modules_down_parameters_weight_, l_self_modules_layers_modules_0_modules_down_parameters_bias_);  gelu = l_self_modules_layers_modules_0_modules_down_parameters_weight_ = l_self_modules_layers_modules_0_modules_down_parameters_bias_ = None
    add_1 = add + linear_2;  add = linear_2 = None
    layer_norm_1 = torch.nn.functional.layer_norm(add_1, (64,), l_self_modules_layers_modules_1_modules_norm1_parameters_weight_, l_self_modules_layers_modules_1_modules_norm1_parameters_bias_, 1e-05);  l_self_modules_layers_modules_1_modules_norm1_parameters_weight_ = l_self_modules_layers_modules_1_modules_norm1_parameters_bias_ = None
    linear_3 = torch._C._nn.linear(layer_norm_1, l_self_modules_layers_modules_1_modules_qkv_parameters_weight_, l_self_modules_layers_modules_1_modules_qkv_parameters_bias_);  layer_norm_1 = l_self_modules_layers_modules_1_modules_qkv_parameters_weight_ = l_self_modules_layers_modules_1_modules_qkv_parameters_bias_ = None
    view = linear_3.view(s77, 32, 3, 4, 16);  linear_3 = s77 = None
    unbind = view.unbind(2);  view = None
    getitem = unbind[0]
    getitem_1 = unbind[1]
    getitem_2 = unbind[2];  unbind = None
    transpose_1 = getitem.transpose(1, 2);  getitem = None
    transpose_2 = getitem_1.transpose(1, 2);  getitem_1 = None
    transpose_3 = getitem_2.transpose(1, 2);  getitem_2 = None
    return (transpose_1, transpose_2, transpose_3, add_1)
    



def forward(self, y_1, s77 : torch.SymInt, l_self_modules_layers_modules_1_modules_out_parameters_weight_ : torch.nn.parameter.Parameter, l_self_modules_layers_modules_1_modules_out_parameters_bias_ : torch.nn.parameter.Parameter, x_1, l_self_modules_layers_modules_1_modules_norm2_parameters_weight_ : torch.nn.parameter.Parameter, l_self_modules_layers_modules_1_modules_norm2_parameters_bias_ : torch.nn.parameter.Parameter, l_self_modules_layers_modules_1_modules_up_parameters_weight_ : torch.nn.parameter.Parameter, l_self_modules_layers_modules_1_modules_up_parameters_bias_ : torch.nn.parameter.Parameter, l_self_modules_layers_modules_1_modules_down_parameters_weight_ : torch.nn.parameter.Parameter, l_self_modules_layers_modules_1_modules_down_parameters_bias_ : torch.nn.parameter.Parameter):
    transpose = y_1.transpose(1, 2);  y_1 = None
    reshape = transpose.reshape(s77, 32, 64);  transpose = s77 = None
    linear = torch._C._nn.linear(reshape, l_self_modules_layers_modules_1_modules_out_parameters_weight_, l_self_modules_layers_modules_1_modules_out_parameters_bias_);  reshape = l_self_modules_layers_modules_1_modules_out_parameters_weight_ = l_self_modules_layers_modules_1_modules_out_parameters_bias_ = None
    add = x_1 + linear;  x_1 = linear = None
    layer_norm = torch.nn.functional.layer_norm(add, (64,), l_self_modules_layers_modules_1_modules_norm2_parameters_weight_, l_self_modules_layers_modules_1_modules_norm2_parameters_bias_, 1e-05);  l_self_modules_layers_modules_1_modules_norm2_parameters_weight_ = l_self_modules_layers_modules_1_modules_norm2_parameters_bias_ = None
    linear_1 = torch._C._nn.linear(layer_norm, l_self_modules_layers_modules_1_modules_up_parameters_weight_, l_self_modules_layers_modules_1_modules_up_parameters_bias_);  layer_norm = l_self_modules_layers_modules_1_modules_up_parameters_weight_ = l_self_modules_layers_modules_1_modules_up_parameters_bias_ = None
    gelu = torch._C._nn.gelu(linear_1);  linear_1 = None
    linear_2 = torch._C._nn.linear(gelu, l_self_modules_layers_modules_1_modules_down_parameters_weight_, l_self_modules_layers_modules_1_modules_down_parameters_bias_);  gelu = l_self_modules_layers_modules_1_modules_down_parameters_weight_ = l_self_modules_layers_modules_1_modules_down_parameters_bias_ = None
    add_1 = add + linear_2;  add = linear_2 = None
    return add_1
    
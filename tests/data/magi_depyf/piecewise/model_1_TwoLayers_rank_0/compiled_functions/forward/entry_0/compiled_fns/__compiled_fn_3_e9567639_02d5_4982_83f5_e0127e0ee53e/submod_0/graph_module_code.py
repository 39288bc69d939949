


def forward(self, l_x_ : torch.Tensor, s77 : torch.SymInt, l_self_modules_layers_modules_0_modules_norm1_parameters_weight_ : torch.nn.parameter.Parameter, l_self_modules_layers_modules_0_modules_norm1_parameters_bias_ : torch.nn.parameter.Parameter, l_self_modules_layers_modules_0_modules_qkv_parameters_weight_ : torch.nn.parameter.Parameter, l_self_modules_layers_modules_0_modules_qkv_parameters_bias_ : torch.nn.parameter.Parameter):
    layer_norm = torch.nn.functional.layer_norm(l_x_, (64,), l_self_modules_layers_modules_0_modules_norm1_parameters_weight_, l_self_modules_layers_modules_0_modules_norm1_parameters_bias_, 1e-05);  l_x_ = l_self_modules_layers_modules_0_modules_norm1_parameters_weight_ = l_self_modules_layers_modules_0_modules_norm1_parameters_bias_ = None
    linear = torch._C._nn.linear(layer_norm, l_self_modules_layers_modules_0_modules_qkv_parameters_weight_, l_self_modules_layers_modules_0_modules_qkv_parameters_bias_);  layer_norm = l_self_modules_layers_modules_0_modules_qkv_parameters_weight_ = l_self_modules_layers_modules_0_modules_qkv_parameters_bias_ = None
    view = linear.view(s77, 32, 3, 4, 16);  linear = s77 = None
    unbind = view.unbind(2);  view = None
    getitem = unbind[0]
    getitem_1 = unbind[1]
    getitem_2 = unbind[2];  unbind = None
    transpose = getitem.transpose(1, 2);  getitem = None
    transpose_1 = getitem_1.transpose(1, 2);  getitem_1 = None
    transpose_2 = getitem_2.transpose(1, 2);  getitem_2 = None
    return (transpose, transpose_1, transpose_2)
    
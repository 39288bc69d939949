def forward(self, x):
    tmp_1 = __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_enter
    tmp_2 = __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_enter()
    tmp_3 = __import_torch_dot__dynamo_dot_utils.call_size
    tmp_4 = x
    tmp_5 = self._modules['layers']._modules
    tmp_6 = self._modules['layers']._modules['0']._modules
    tmp_7 = self._modules['layers']._modules['0']._modules['norm1']._parameters
    tmp_8 = tmp_6['qkv']._parameters
    tmp_9 = tmp_6['out']._parameters
    tmp_10 = tmp_6['norm2']._parameters
    tmp_11 = tmp_6['up']._parameters
    tmp_12 = tmp_6['down']._parameters
    tmp_13 = tmp_5['1']._modules
    tmp_14 = tmp_5['1']._modules['norm1']._parameters
    tmp_15 = tmp_13['qkv']._parameters
    tmp_16 = tmp_13['out']._parameters
    tmp_17 = tmp_13['norm2']._parameters
    tmp_18 = tmp_13['up']._parameters
    tmp_19 = tmp_13['down']._parameters
    tmp_20 = __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_exit
    __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_exit(tmp_2)
    graph_out_0 = __compiled_fn_3_e9567639_02d5_4982_83f5_e0127e0ee53e(
        __import_torch_dot__dynamo_dot_utils.call_size(x, 0), tmp_4, self.
        _modules['layers']._modules['0']._modules['norm1']._parameters['weight'
        ], tmp_7['bias'], tmp_6['qkv']._parameters['weight'], tmp_8['bias'],
        tmp_6['out']._parameters['weight'], tmp_9['bias'], tmp_6['norm2'].
        _parameters['weight'], tmp_10['bias'], tmp_6['up']._parameters['weight'
        ], tmp_11['bias'], tmp_6['down']._parameters['weight'], tmp_12['bias'],
        tmp_5['1']._modules['norm1']._parameters['weight'], tmp_14['bias'],
        tmp_13['qkv']._parameters['weight'], tmp_15['bias'], tmp_13['out'].
        _parameters['weight'], tmp_16['bias'], tmp_13['norm2']._parameters[
        'weight'], tmp_17['bias'], tmp_13['up']._parameters['weight'], tmp_18[
        'bias'], tmp_13['down']._parameters['weight'], tmp_19['bias'])
    []
    []
    __temp_9 = []
    __temp_9.extend([])
    [__temp_9]
    return graph_out_0[0]

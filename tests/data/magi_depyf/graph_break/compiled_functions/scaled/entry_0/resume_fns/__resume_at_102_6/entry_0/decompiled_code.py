def torch_dynamo_resume_in_scaled_at_79(__nested_resume_fns, __nested_frame_values, b, x):
    tmp_1 = __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_enter
    tmp_2 = __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_enter()
    tmp_3 = __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_exit
    __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_exit(tmp_2)
    graph_out_0 = __compiled_fn_9_6906d5b5_2164_40de_ad6c_53b0075c2cea(b, x)
    []
    []
    __temp_8 = []
    __temp_8.extend([])
    [__temp_8]
    return graph_out_0[0]

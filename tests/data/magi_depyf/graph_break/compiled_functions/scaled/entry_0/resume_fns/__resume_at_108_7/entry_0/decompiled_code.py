def torch_dynamo_resume_in_scaled_at_79(__nested_resume_fns, __nested_frame_values, b, x):
    tmp_1 = __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_enter
    tmp_2 = __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_enter()
    tmp_3 = __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_exit
    __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_exit(tmp_2)
    graph_out_0 = __compiled_fn_11_c3262bc8_8ae3_44f3_a68a_5fcc26c9b672(x, b)
    []
    []
    __temp_8 = []
    __temp_8.extend([])
    [__temp_8]
    return graph_out_0[0]

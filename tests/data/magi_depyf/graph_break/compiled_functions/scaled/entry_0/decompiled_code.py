def scaled(a, b):
    tmp_1 = __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_enter
    tmp_2 = __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_enter()
    tmp_3 = __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_exit
    __import_torch_dot__dynamo_dot_utils.record_pregraph_bytecode_exit(tmp_2)
    graph_out_0 = __compiled_fn_5_ecab6acb_b325_48b8_997e_17c850f2c418(a, b)
    __temp_4 = [()]
    __temp_7 = [graph_out_0[1]][slice(0, 1)]
    __temp_7.extend([b])
    __temp_8 = [__temp_7]
    if graph_out_0[0]:
        __temp_8[0][slice(0, 0)] = []
        __temp_10 = [__temp_8[0]]
        [__temp_4[0]]
        __temp_10[0][slice(0, None)] = [__temp_10[0][1], __temp_10[0][0]]
        __temp_15 = [[], __temp_10]
        __temp_15.extend(__temp_10[-1])
        return __resume_at_102_6(*__temp_15)
    else:
        __temp_8[0][slice(0, 0)] = []
        __temp_18 = [__temp_8[0]]
        [__temp_4[0]]
        __temp_18[0][slice(0, None)] = [__temp_18[0][1], __temp_18[0][0]]
        __temp_23 = [[], __temp_18]
        __temp_23.extend(__temp_18[-1])
        return __resume_at_108_7(*__temp_23)

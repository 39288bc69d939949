def torch_dynamo_resume_in_scaled_at_79(__nested_resume_fns, __nested_frame_values, b, x):
    __is_tracing_resume_prologue = True
    __is_tracing_resume_prologue = False
    return x * b

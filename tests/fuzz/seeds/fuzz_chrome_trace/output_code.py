# Topologically Sorted Source Nodes: [add, relu], Original ATen: [aten.add, aten.relu]
triton_poi_fused_add_relu_0 = async_compile.triton('triton_poi_fused_add_relu_0', '''
@triton.jit
def triton_poi_fused_add_relu_0(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    pass
''', device_str='cuda')


class Runner:
    def call(self, args):
        arg0_1, arg1_1 = args
        with torch.cuda._DeviceGuard(0):
            buf0 = empty_strided_cuda((4, 4), (4, 1), torch.float32)
            # Topologically Sorted Source Nodes: [mm], Original ATen: [aten.mm]
            extern_kernels.mm(arg0_1, arg1_1, out=buf0)
            # Topologically Sorted Source Nodes: [add, relu], Original ATen: [aten.add, aten.relu]
            stream0 = get_raw_stream(0)
            triton_poi_fused_add_relu_0.run(buf0, 16, stream=stream0)
            buf1 = torch.ops.aten._scaled_dot_product_cudnn_attention.default(buf0, buf0, buf0, None, False)
        return (buf0, )

class GraphModule(torch.nn.Module):
    def forward(self, transpose: "f32[s77, 4, 32, 16]", s77: "Sym(s77)", transpose_1: "f32[s77, 4, 32, 16]", transpose_2: "f32[s77, 4, 32, 16]"):
        # File: tests/data/make_magi_dumps.py:51 in forward, code: y = attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        attention_default: "f32[s77, 4, 32, 16]" = torch.ops.lathe_test.attention.default(transpose, transpose_1, transpose_2);  transpose = transpose_1 = transpose_2 = None
        return attention_default

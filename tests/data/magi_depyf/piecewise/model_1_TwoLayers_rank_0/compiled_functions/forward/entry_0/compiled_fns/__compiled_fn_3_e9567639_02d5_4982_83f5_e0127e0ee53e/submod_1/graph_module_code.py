


def forward(self, transpose, s77 : torch.SymInt, transpose_1, transpose_2):
    attention_default = torch.ops.lathe_test.attention.default(transpose, transpose_1, transpose_2);  transpose = transpose_1 = transpose_2 = None
    return attention_default
    
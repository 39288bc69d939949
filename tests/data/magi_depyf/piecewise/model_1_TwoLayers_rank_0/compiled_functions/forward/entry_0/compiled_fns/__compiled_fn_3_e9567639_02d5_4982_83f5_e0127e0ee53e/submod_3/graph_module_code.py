


def forward(self, transpose_4, s77 : torch.SymInt, transpose_5, transpose_6):
    attention_default = torch.ops.lathe_test.attention.default(transpose_4, transpose_5, transpose_6);  transpose_4 = transpose_5 = transpose_6 = None
    return attention_default
    
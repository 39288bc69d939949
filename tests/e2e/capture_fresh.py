#!/usr/bin/env python3
"""Makes captures no test has seen before: a small transformer trained for one step under
torch.compile (aot_eager backend, so no C++ toolchain is needed) with TORCH_TRACE, a recompile
with dynamic shapes, and a torch.export archive. Dims are drawn at random per run.

usage: capture_fresh.py OUT_DIR   (writes OUT_DIR/trace/*.log and OUT_DIR/model.pt2, and prints
a JSON summary with torch's own node counts of the exported program)
"""
import json
import os
import random
import sys
from pathlib import Path

out = Path(sys.argv[1])
os.environ["TORCH_TRACE"] = str(out / "trace")

import torch  # noqa: E402  (TORCH_TRACE must be set before torch is imported)
import torch.nn.functional as F  # noqa: E402

rng = random.Random()
heads = rng.choice([2, 4])
width = heads * rng.choice([8, 16])
vocab = rng.randint(50, 300)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.proj = torch.nn.Linear(width, width)
        self.up = torch.nn.Linear(width, 4 * width)
        self.down = torch.nn.Linear(4 * width, width)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.norm(x)).view(b, s, 3, heads, width // heads).permute(2, 0, 3, 1, 4)
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attn.transpose(1, 2).reshape(b, s, width))
        return x + self.down(F.silu(self.up(self.norm(x))))


class Model(torch.nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, width)
        self.blocks = torch.nn.ModuleList(Block() for _ in range(layers))
        self.head = torch.nn.Linear(width, vocab)

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


model = Model(layers=rng.randint(1, 3))
compiled = torch.compile(model, backend="aot_eager")
for seq in (rng.randint(8, 16), rng.randint(17, 32), rng.randint(33, 48)):  # the 2nd one recompiles dynamic
    ids = torch.randint(0, vocab, (2, seq))
    loss = F.cross_entropy(compiled(ids).flatten(0, 1), ids.flatten())
    loss.backward()

exported = torch.export.export(model.eval(), (torch.randint(0, vocab, (1, 12)),))
torch.export.save(exported, str(out / "model.pt2"))
nodes = list(exported.graph.nodes)
# The serialized graph has no getitem nodes (multi-output nodes name their outputs instead), and
# `lathe graphs` counts the serialized nodes of a .pt2.
import operator  # noqa: E402
calls = sum(1 for n in nodes if n.op not in ("placeholder", "output") and n.target is not operator.getitem)
print(json.dumps({"width": width, "vocab": vocab, "exported_calls": calls,
                  "exported_placeholders": sum(1 for n in nodes if n.op == "placeholder")}))

"""Makes tests/data/magi_depyf: MagiCompiler's introspection dumps (magi_depyf run folders) of two
small models compiled on the CPU, for the loader's, the CLI's and the studio's tests.
  - piecewise/: a two-layer transformer under @magi_compile, attention a subgraph-boundary custom op,
    so the graph splits into five pieces (two of them the boundary op); its first compile restarts
    once (a failed lifecycle in the timeline);
  - graph_break/: a function under torch.compile inside explain_compilation, with a data-dependent
    branch, so Dynamo breaks the graph and the dump holds resume functions and several cache entries.
MagiCompiler comes from ../shared/anchors (with the pydantic-settings and astor it imports):
    PYTHONPATH=../shared/anchors/MagiCompiler:<site with pydantic-settings, astor> \\
      .venv/bin/python tests/data/make_magi_dumps.py
The dumps' absolute paths (the temporary folder, the interpreter's) are made relative."""

import glob
import os
import shutil
import sys
import sysconfig
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "magi_depyf")


def piecewise(work):
    from magi_compiler import magi_compile, magi_register_custom_op

    def in_work(conf):
        conf.cache_root_dir = os.path.join(work, "cache")
        return conf

    @magi_register_custom_op("lathe_test::attention", is_subgraph_boundary=True)
    def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    class Layer(nn.Module):
        def __init__(self, dim=64, heads=4):
            super().__init__()
            self.heads = heads
            self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.qkv = nn.Linear(dim, 3 * dim)
            self.out = nn.Linear(dim, dim)
            self.up, self.down = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
            y = attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
            x = x + self.out(y.transpose(1, 2).reshape(b, t, d))
            return x + self.down(F.gelu(self.up(self.norm2(x))))

    @magi_compile(dynamic_arg_dims={"x": 0}, config_patch=in_work)
    class TwoLayers(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([Layer(), Layer()])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    model = TwoLayers().eval()
    with torch.no_grad():
        for batch in (2, 2, 3):  # a second batch size runs the dynamic graph again, no recompile
            model(torch.randn(batch, 32, 64))
    return glob.glob(os.path.join(work, "cache", "magi_depyf", "run_*", "model_*"))


def graph_break(work):
    from magi_compiler.magi_depyf.inspect import explain_compilation

    @torch.compile
    def scaled(a, b):
        x = a / (torch.abs(a) + 1)
        if b.sum() < 0:  # data-dependent: Dynamo breaks the graph here
            b = -b
        return x * b

    out = os.path.join(work, "explain")
    torch.manual_seed(0)
    with explain_compilation(out):
        for _ in range(6):
            scaled(torch.randn(10), torch.randn(10))
    return glob.glob(os.path.join(out, "**", "compiled_functions"), recursive=True)


def without_machine_paths(folder, work):
    root = os.path.dirname(os.path.dirname(HERE))
    replacements = [
        (root + os.sep, ""),
        (work + os.sep, ""),
        (work, "."),
        (sysconfig.get_paths()["purelib"] + os.sep, "site-packages/"),
        (sysconfig.get_paths()["stdlib"] + os.sep, "python/"),
    ]
    for path in glob.glob(os.path.join(folder, "**", "*"), recursive=True):
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
        fixed = text
        for old, new in replacements:
            fixed = fixed.replace(old, new)
        if fixed != text:
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(fixed)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    with tempfile.TemporaryDirectory(prefix="lathe-magi-") as work:
        work = os.path.realpath(work)
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(work, "inductor")
        (model,) = piecewise(work)
        shutil.copytree(model, os.path.join(OUT, "piecewise", os.path.basename(model)))
        dumps = graph_break(work)
        if not dumps:
            sys.exit("explain_compilation wrote no compiled_functions folder")
        shutil.copytree(os.path.dirname(dumps[0]), os.path.join(OUT, "graph_break"))
        without_machine_paths(OUT, work)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()

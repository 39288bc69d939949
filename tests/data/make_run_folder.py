"""Makes tests/data/run_folder: a run folder of the Python runtime on the CPU (TORCH_TRACE log,
gzipped; plans/; lathe.profile.json), for the studio's and the CLI's tests of run folders.
    .venv/bin/python tests/data/make_run_folder.py"""

import json
import os
import shutil
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "runtime"))
from test_api import Block  # noqa: E402
from trace_logs import local_paths, without_machine_paths, write_gzipped  # noqa: E402

import lathe  # noqa: E402


def main():
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run_folder")
    shutil.rmtree(folder, ignore_errors=True)
    torch.manual_seed(0)
    with torch._inductor.config.patch(fx_graph_cache=False), torch._functorch.config.patch(enable_autograd_cache=False):
        model = lathe.compile(Block(), policy="heuristic", trace_dir=folder)
        x = torch.randn(4, 8, 32)
        for _ in range(3):
            with lathe.step(model):
                model.zero_grad(set_to_none=True)
                model(x).pow(2).mean().backward()
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    for name in os.listdir(folder):
        if name.endswith(".log"):
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as src:
                text = without_machine_paths(src.read(), local_paths(root))
            os.unlink(path)
            write_gzipped(text, os.path.join(folder, "dedicated_log_torch_trace_run.log.gz"))  # a stable name
    profile = os.path.join(folder, "lathe.profile.json")
    document = json.load(open(profile))
    with open(profile, "w") as f:
        json.dump(document, f, indent=1)
    print(folder, sorted(os.listdir(folder)))


if __name__ == "__main__":
    main()

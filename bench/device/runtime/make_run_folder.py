"""A small run folder measured on the GPU, for the studio's and the CLI's tests of run folders:
two Llama-style layers (hidden 256) trained five steps under lathe.compile(trace_dir=...) with
lathe.step around each step. Writes $OUT/run_folder (TORCH_TRACE log, plans/, lathe.profile.json).
    device run (after run.sh's build): python3 bench/device/runtime/make_run_folder.py"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from bench import Layer, Stack  # noqa: E402

import lathe  # noqa: E402


class SmallStack(Stack):
    def __init__(self):
        torch.nn.Module.__init__(self)
        self.layers = torch.nn.ModuleList(Layer(hidden=256, heads=4, kv_heads=2, ffn=688) for _ in range(2))
        inv = 1.0 / 5e5 ** (torch.arange(0, 64, 2).float() / 64)
        angles = torch.outer(torch.arange(512).float(), inv)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos()[None, None], persistent=False)
        self.register_buffer("sin", angles.sin()[None, None], persistent=False)


def main():
    folder = os.path.join(os.environ.get("OUT", "/tmp"), "run_folder")
    torch.manual_seed(0)
    model = SmallStack().cuda()
    lathe.compile(model, policy="heuristic", trace_dir=folder)
    x = torch.randn(4, 512, 256, device="cuda", requires_grad=True)
    for _ in range(5):
        with lathe.step(model):
            model.zero_grad(set_to_none=True)
            model(x).float().pow(2).mean().backward()
    steps = lathe.measured_steps(model)
    print(f"{folder}: {len(lathe.plans(model))} graph(s) planned, {len(steps)} steps, "
          f"peak {max(s['peak_bytes'] for s in steps) / 2**20:.1f} MiB above {steps[0]['before_bytes'] / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()

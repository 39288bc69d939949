"""bench/device/runtime's four-layer stack made small enough for this machine's CPU (hidden 512,
FFN 1792, 8 heads, 2 KV heads, B=2, T=512, float32), compiled by lathe.compile under the budget
policy (or the heuristic) and run for one step with a run folder: its TORCH_TRACE log holds the joint graph the planner
was given and the code Inductor generated from the plan, its plans/ the plan bundle.
inductor_memory.py then sets the program's memory beside the plan's.

  .venv/bin/python bench/runtime/capture_small_stack.py MEMORY OUT_DIR     # MEMORY: "none", e.g. 150MiB, or "heuristic"
"""

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "device", "runtime"))
import bench  # noqa: E402  (the stack of the GPU benchmark)
import lathe  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    memory, out_dir = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    model = bench.Stack(layers=4, seq=512, head_dim=64, layer=lambda: bench.Layer(512, 8, 2, 1792))
    x = torch.randn(2, 512, 512, requires_grad=True)
    policy = "heuristic" if memory == "heuristic" else "budget"
    compiled = lathe.compile(lambda inp: model(inp), policy=policy, memory=None if memory in ("none", "heuristic") else memory,
                             trace_dir=out_dir)
    bench.step(compiled, model, x)
    plan = compiled._lathe_backend.plans[0].plan
    print(f"planned peak {plan.peak_bytes / 2**20:.1f} MiB, before {plan.before_bytes / 2**20:.1f} MiB, "
          f"{len(plan.saved)} values saved; run folder {out_dir}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The planner's predicted peak beside the peak a CPU step measures, on bench/device/runtime's
Llama-3 layer stack made small enough for a CPU (hidden 1024, 8 heads, 2 KV heads, FFN 3584, 4
layers, B=2, T=1024, bf16): torch.compile, and lathe.compile with the torch, heuristic and budget
policies (priced on the H100 profile: prices move what the plans save, not how their bytes are
counted). The measured peak is the CPU allocator's, replayed from torch.profiler's memory events over
one step after warm-up, above the weights and the input; the loss (`out.float().pow(2).mean()`)
runs outside the compiled graph, so its float32 copy is measured and not planned.

usage: bench/plan/planned_vs_cpu_peaks.py BUDGET_A BUDGET_B      e.g. 380MiB 330MiB
Set TORCHINDUCTOR_FX_GRAPH_CACHE=0 TORCHINDUCTOR_AUTOGRAD_CACHE=0: a cache hit skips the planner.
"""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "device", "runtime"))
import lathe  # noqa: E402
from bench import Layer, Stack, step  # noqa: E402
from rows import planner_fields  # noqa: E402

MiB = 2**20


class SmallLayer(Layer):
    def __init__(self):
        super().__init__(hidden=1024, heads=8, kv_heads=2, ffn=3584)


def measured_peak(fn, model, x):
    """Bytes above those live before one step, from the profiler's allocation and free events."""
    step(fn, model, x)
    model.zero_grad(set_to_none=True)
    x.grad = None
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True) as prof:
        step(fn, model, x)
    events = sorted((e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"), key=lambda e: e.start_ns())
    live = peak = 0
    for e in events:
        live += e.nbytes()
        peak = max(peak, live)
    return peak


def main():
    budgets = sys.argv[1:3] or ["380MiB", "330MiB"]
    torch.manual_seed(0)
    model = Stack(layers=4, seq=1024, head_dim=128, layer=SmallLayer).to(torch.bfloat16)
    x = torch.randn(2, 1024, 1024, dtype=torch.bfloat16, requires_grad=True)
    before = sum(t.numel() * t.element_size() for t in list(model.parameters()) + list(model.buffers())) + x.numel() * x.element_size()
    print(f"weights, buffers and input: {before / MiB:.1f} MiB")
    variants = [("torch.compile", lambda: torch.compile(lambda inp: model(inp))),
                ("lathe torch", lambda: lathe.compile(lambda inp: model(inp), policy="torch", hw="h100")),
                ("lathe heuristic", lambda: lathe.compile(lambda inp: model(inp), policy="heuristic", hw="h100"))]
    for budget in budgets:
        variants.append((f"lathe budget:{budget}",
                         lambda budget=budget: lathe.compile(lambda inp: model(inp), policy="budget", memory=budget, hw="h100")))
    print(f"{'variant':24} {'measured MiB':>12} {'planned MiB':>12}")
    for name, make in variants:
        torch._dynamo.reset()
        t0 = time.time()
        fn = make()
        peak = measured_peak(fn, model, x)
        fields = planner_fields(fn)
        planned = f"{fields['predicted_peak_gib'] * 1024 - before / MiB:.1f}" if fields else "-"
        print(f"{name:24} {peak / MiB:12.1f} {planned:>12}   ({time.time() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()

"""Is a step under torch.profiler as long as one without it? bench.py's 4-layer stack under
torch.compile and under lathe.compile(memory=BENCH_MEMORY): for each, BENCH_STEPS steps back to back
timed with CUDA events, then as many under torch.profiler (CPU and CUDA activity, as bench.py's
BENCH_PROFILE_STEPS records them) timed the same way, then as many again without it; and, from the
profiled steps' trace, the kernels' summed device time and their span per step. The SM clock and
the board's power are sampled (nvidia-smi) after each block.
    device run: BENCH_SCRIPT=profiler_effect.py bash bench/device/runtime/run.sh   (carry .device/deps)
Prints one table; writes every row to $OUT/profiler_effect.jsonl.
"""

import os
import subprocess
import sys
import tempfile

import torch

import lathe
from bench import Stack, settle, step
from rows import Rows

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plan"))
from model_vs_gpu import trace_figures  # noqa: E402
from runtime_step import device_and_host  # noqa: E402


def smi():
    """SM clock (MHz) and power draw (W) now."""
    out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True, check=False).stdout.strip().splitlines()
    return out[0] if out else "?"


def timed(fn, model, x, steps, profiled=False):
    """Mean ms per step of `steps` steps back to back; with the profiler on, also its trace's kernel
    ms and kernel span ms per step."""
    from torch.profiler import ProfilerActivity, profile
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    if not profiled:
        start.record()
        for _ in range(steps):
            step(fn, model, x)
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / steps, None, None
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        start.record()
        for _ in range(steps):
            step(fn, model, x)
        end.record()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json.gz")
        prof.export_chrome_trace(path)
        busy, _, _ = device_and_host(path, steps)
        span, _ = trace_figures(path, steps)
    return start.elapsed_time(end) / steps, busy * 1e3, span * 1e3


def main():
    steps = int(os.environ.get("BENCH_STEPS", "10"))
    memory = os.environ.get("BENCH_MEMORY", "4.7GiB")
    results = Rows(os.path.join(os.environ.get("OUT", "/tmp"), "profiler_effect.jsonl"))
    torch.manual_seed(0)
    model = Stack().cuda().to(torch.bfloat16)
    x = torch.randn(2, 4096, 4096, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    variants = {
        "torch.compile": lambda: torch.compile(model),
        f"lathe memory={memory}": lambda: lathe.compile(lambda inp: model(inp), memory=memory),
    }
    for name, make in variants.items():
        torch._dynamo.reset()
        torch.cuda.empty_cache()
        fn = make()
        step(fn, model, x)  # compiles
        settle(fn, model, x)
        for block in ("plain", "profiled", "plain again"):
            ms, busy, span = timed(fn, model, x, steps, profiled=block == "profiled")
            results.record({"variant": name, "block": block, "step_ms": ms, "kernel_ms": busy, "kernel_span_ms": span,
                            "sm_mhz_power_w": smi()})
    print()
    print(f"{'variant':24} {'block':12} {'step ms':>8} {'kernels ms':>11} {'span ms':>8} {'SM MHz, W':>14}")
    for r in results.rows:
        fmt = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
        print(f"{r['variant']:24} {r['block']:12} {r['step_ms']:>8.2f} {fmt(r['kernel_ms']):>11} "
              f"{fmt(r['kernel_span_ms']):>8} {r['sm_mhz_power_w']:>14}")


if __name__ == "__main__":
    main()

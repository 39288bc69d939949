"""A step of lathe.compile's runtime on the GPU, timed two ways (tests/data/h100_lathe_step: two
steps profiled back to back by bench/device/runtime/bench.py with BENCH_PROFILE_STEPS=2; the bench
row of the same call in bench/device/runtime/results/h100-2026-12-07-reuse-estimate-bench.jsonl).
Prints one table: the bench's synchronized median step and its prediction, and, read from the trace,
the device's kernel time per step, the span of the profiled steps per step, the longest time the
device sat idle between two kernels, the host's time per step from its first operator to its last
launch, and the median time from a compiled call's start to its first launch (model_vs_gpu.py's
reading of a trace).
    python3 bench/plan/runtime_step.py
"""
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model_vs_gpu import ROOT, trace_figures  # noqa: E402

TRACE = os.path.join(ROOT, "tests", "data", "h100_lathe_step", "lathe_budget_4.7GiB.trace.json.gz")
ROWS = os.path.join(ROOT, "bench", "device", "runtime", "results", "h100-2026-12-07-reuse-estimate-bench.jsonl")
VARIANT = "lathe budget:4.7GiB"
STEPS = 2


def device_and_host(path, steps):
    """Kernel seconds per step, the longest idle gap between kernels, host seconds per step."""
    events = json.load(gzip.open(path))["traceEvents"]
    kernels = sorted((e for e in events if e.get("cat") == "kernel" and e.get("ph") == "X"), key=lambda e: e["ts"])
    busy = sum(k["dur"] for k in kernels) / steps
    gap, end = 0.0, kernels[0]["ts"]
    for k in kernels:
        gap = max(gap, k["ts"] - end)
        end = max(end, k["ts"] + k["dur"])
    host = [e for e in events if e.get("cat") in ("cpu_op", "cuda_runtime", "cuda_driver") and e.get("ph") == "X"
            and e["name"] != "cudaDeviceSynchronize"]
    launches = [e for e in host if e.get("cat") in ("cuda_runtime", "cuda_driver") and "aunch" in e["name"]]
    host_span = (max(e["ts"] + e["dur"] for e in launches) - min(e["ts"] for e in host)) / steps
    return busy * 1e-6, gap * 1e-6, host_span * 1e-6


def main():
    row = next(json.loads(line) for line in open(ROWS) if json.loads(line)["variant"] == VARIANT)
    busy, gap, host = device_and_host(TRACE, STEPS)
    span, prologue = trace_figures(TRACE, STEPS)
    print(f"{'variant':<22} {'step ms':>8} {'pred ms':>8} {'kernels ms':>11} {'span ms':>8} {'idle gap ms':>12} "
          f"{'host ms':>8} {'prologue ms':>12}")
    print(f"{VARIANT:<22} {row['step_ms']:>8.1f} {row['predicted_step_ms']:>8.1f} {busy * 1e3:>11.2f} {span * 1e3:>8.2f} "
          f"{gap * 1e3:>12.3f} {host * 1e3:>8.2f} {prologue * 1e3:>12.2f}")


if __name__ == "__main__":
    main()

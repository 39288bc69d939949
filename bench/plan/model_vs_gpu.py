"""The planner against a compiled step measured on the GPU, before and after calibrating it with a
torch.profiler trace of the same run (tests/data/h100_compiled_step: captured, timed and profiled
on an H100 by bench/device/measure/capture.py). Prints one table: measured peak and step
(captures.jsonl), the plan's peak and step on the h100_sxm profile, the step and GPU time
calibrated by `lathe measure --trace`, the device time the trace measured per step, and, read
from the trace, the span of one profiled step's kernels and the median host time from a compiled
call's start to its first kernel launch.
    python3 bench/plan/model_vs_gpu.py [LATHE]      (LATHE: build/default/app/cli/lathe)
"""
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "h100_compiled_step")
GRAPHS = {"llama3_8b_2l_train": "0/0:aot_joint_graph", "mixtral_2l_train": "0/0:aot_joint_graph",
          "gpt2_train": "1/0_1:aot_joint_graph"}
GiB = 2**30


def lathe(binary, *args):
    return json.loads(subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout)


def estimates(plan):
    return dict(plan["estimates"])


def trace_figures(path, steps):
    """Kernel span per step, and the median time from each compiled call's start to its first launch."""
    events = json.load(gzip.open(path))["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel" and e.get("ph") == "X"]
    span = (max(k["ts"] + k["dur"] for k in kernels) - min(k["ts"] for k in kernels)) / steps
    launches = sorted(e["ts"] for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver")
                      and e.get("ph") == "X" and "correlation" in e.get("args", {}) and "aunch" in e["name"])
    prologues = []
    for call in (e for e in events if e.get("cat") == "cpu_op" and e["name"].startswith("## Call CompiledFxGraph")):
        first = next((t for t in launches if t >= call["ts"]), None)
        if first is not None and first <= call["ts"] + call["dur"]:
            prologues.append(first - call["ts"])
    return span * 1e-6, statistics.median(prologues) * 1e-6


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "default", "app", "cli", "lathe")
    measured = {json.loads(line)["name"]: json.loads(line) for line in open(os.path.join(DATA, "captures.jsonl"))}
    print(f"{'capture':<20} {'peak GiB':>9} {'planned':>16} {'step ms':>8} {'planned':>15} {'calibrated':>15} "
          f"{'GPU busy ms':>12} {'calib. GPU ms':>14} {'trace span ms':>14} {'prologue ms':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, graph in GRAPHS.items():
            capture = os.path.join(DATA, name + ".log.gz")
            trace = os.path.join(DATA, name + ".trace.json.gz")
            profile = os.path.join(tmp, name + ".profile.json")
            mapped = lathe(binary, "measure", capture, "--graph", graph, "--trace", trace, "--hw", "h100_sxm",
                           "--json", "-o", profile)
            plan = lathe(binary, "plan", capture, "--graph", graph, "--hw", "h100_sxm", "--json")
            calibrated = lathe(binary, "plan", capture, "--graph", graph, "--hw", "h100_sxm", "--profile", profile,
                               "--json")
            m = measured[name]
            peak, step = m["peak"], m["step_ms"] * 1e-3
            planned_peak = plan["timeline"]["peak_bytes"]
            planned_step = estimates(plan)["step_seconds"]
            calibrated_step = estimates(calibrated)["step_seconds"]
            busy = mapped["graph_seconds"] + mapped["other_seconds"]
            span, prologue = trace_figures(trace, mapped["steps"])
            print(f"{name:<20} {peak / GiB:>9.3f} {planned_peak / GiB:>8.3f} ({planned_peak / peak - 1:+6.1%}) "
                  f"{step * 1e3:>8.2f} {planned_step * 1e3:>6.2f} ({planned_step / step - 1:+6.1%}) "
                  f"{calibrated_step * 1e3:>6.2f} ({calibrated_step / step - 1:+6.1%}) {busy * 1e3:>12.2f} "
                  f"{estimates(calibrated)['compute_seconds'] * 1e3:>14.2f} {span * 1e3:>14.2f} {prologue * 1e3:>12.2f}")


if __name__ == "__main__":
    main()

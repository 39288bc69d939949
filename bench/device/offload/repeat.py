"""The same streamed point attached again and again in one process, to tell a slow run from a fast
one: 8 Llama-3-8B-dims layers, bf16, batch 1, eager layers, the optimal policy at one resident
fraction. Per attach: every timed step (not only the median), the plan the profiling step chose
(units kept, each prefetch's trigger and deadline) and what that step measured (segment seconds,
H2D bandwidth). Prints one table of the attaches and the plans that differ.

    device run, carry [".device/deps"]:  BENCH_SCRIPT=../offload/repeat.py bash bench/device/runtime/run.sh

Environment: BENCH_SEQ (1024), BENCH_RESIDENT (0.3), BENCH_REPEATS (6), BENCH_STEPS (20).
"""

import copy
import importlib.util
import json
import os
import statistics
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "runtime"))
from bench import Stack  # noqa: E402  the training bench's layers
from rows import Rows  # noqa: E402

from lathe import _options, _weights  # noqa: E402

# The offload bench's timed loop (a module of the same name as the training bench's: loaded by path).
_spec = importlib.util.spec_from_file_location("offload_bench", os.path.join(HERE, "bench.py"))
offload_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(offload_bench)


def main():
    seq = int(os.environ.get("BENCH_SEQ", "1024"))
    resident = float(os.environ.get("BENCH_RESIDENT", "0.3"))
    repeats = int(os.environ.get("BENCH_REPEATS", "6"))
    steps = int(os.environ.get("BENCH_STEPS", "20"))
    torch.manual_seed(0)
    master = Stack(layers=8, seq=seq).to(torch.bfloat16)
    x = torch.randn(1, seq, 4096, dtype=torch.bfloat16, device="cuda")
    rows = Rows(os.path.join(os.environ.get("OUT", "."), "repeat.jsonl"))
    plans = {}
    for repeat in range(repeats):
        model = copy.deepcopy(master)
        streamer = _weights.attach(model, _options.OffloadSpec(resident=resident, policy="optimal"), "h200")
        seconds, _, _, _ = offload_bench.inference_steps(model, x, steps)
        report = streamer.report()
        plan = streamer.plan
        key = json.dumps({"resident": report["resident"],
                          "prefetches": [(p["unit"], p["trigger"], p["deadline"]) for p in plan["prefetches"]]})
        plans.setdefault(key, []).append(repeat)
        measured = report["measured"]
        ms = [s * 1e3 for s in seconds]
        rows.record(dict(repeat=repeat, median_ms=statistics.median(ms), min_ms=min(ms), max_ms=max(ms),
                         predicted_ms=report["predicted_step_seconds"] * 1e3, plan=list(plans).index(key),
                         h2d_gbs=measured["h2d_bandwidth"] / 1e9,
                         segment_ms=[round(s * 1e3, 3) for s in measured["segment_seconds"]], steps_ms=ms))
        r = rows.rows[-1]
        print(f"attach {repeat}: median {r['median_ms']:.2f} ms (min {r['min_ms']:.2f}, max {r['max_ms']:.2f}), "
              f"predicted {r['predicted_ms']:.2f}, plan {r['plan']}, H2D {r['h2d_gbs']:.1f} GB/s, "
              f"segments ms {r['segment_ms']}", flush=True)
        del model, streamer
        torch.cuda.empty_cache()
    print("\n| attach | median ms | min ms | max ms | predicted ms | plan | H2D GB/s |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows.rows:
        print(f"| {r['repeat']} | {r['median_ms']:.2f} | {r['min_ms']:.2f} | {r['max_ms']:.2f} | {r['predicted_ms']:.2f} | "
              f"{r['plan']} | {r['h2d_gbs']:.1f} |")
    for index, (key, used) in enumerate(plans.items()):
        print(f"plan {index} (attaches {used}): {key}")


if __name__ == "__main__":
    main()

"""The planner's memory timeline beside one measured step, at each of cuDNN's attention backwards
(where the four-layer stack of bench.py peaks): bytes allocated above "before" when the step
allocates the op's workspace (from a snapshot of offload_snapshot.py), and the bytes the plan holds
above its own weights and inputs at that execution, as planned at run time (the plan bundle of the
run folder, BENCH_TRACE_DIR) and as the current planner plans the same saved set on the same joint
graph (`lathe plan RUN_LOG --pipeline ...recompute(policy=file,path=BUNDLE)`). Then both peaks.
    python3 bench/device/runtime/planned_vs_snapshot.py SNAPSHOT RUN_LOG BUNDLE[.gz] [LATHE]
(LATHE: build/default/app/cli/lathe; no GPU, no torch.)
"""

import gzip
import json
import os
import pickle
import subprocess
import sys
import tempfile

from offload_snapshot import replay

MiB = 2**20
GiB = 2**30
ATTENTION_BACKWARD = "_scaled_dot_product_cudnn_attention_backward"
# cuDNN's attention backward workspace at bench.py's shape: B·H·T·(2·D + 1) float32, [2, 32, 4096, 128].
WORKSPACE_BYTES = 269484288


def read_json(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        return json.load(f)


def above_before(timeline):
    """Per step, the plan's bytes above what it holds before the step (weights and inputs)."""
    categories = ["weights", "inputs", "saved", "recomputed", "temporaries", "gradients", "outputs", "prefetched"]
    totals = [sum(timeline[c][i] for c in categories) for i in range(len(timeline["node"]))]
    before = timeline["weights"][0] + timeline["inputs"][0]
    return [t - before for t in totals]


def replanned(lathe, run_log, bundle):
    """The current planner's timeline for the bundle's saved set on the run's joint graph."""
    with tempfile.TemporaryDirectory() as scratch:
        saved = os.path.join(scratch, "saved.json")
        with open(saved, "w") as f:
            json.dump({"saved": bundle["recompute"]["saved"]}, f)
        out = os.path.join(scratch, "plan.json")
        subprocess.run([lathe, "plan", run_log, "--graph", bundle["source"]["graph"], "--hw", bundle["hardware"]["id"],
                        "--pipeline", f"split,fusion,recompute(policy=file,path={saved})", "-o", out],
                       check=True, capture_output=True)
        return read_json(out)["timeline"]


def main():
    snapshot_path, run_log, bundle_path = sys.argv[1:4]
    lathe = sys.argv[4] if len(sys.argv) > 4 else "build/default/app/cli/lathe"
    with open(snapshot_path, "rb") as f:
        trace = pickle.load(f)["device_traces"][0]
    measured = [allocated for _, event, allocated, _, _ in replay(trace)
                if event["action"] == "alloc" and event["size"] == WORKSPACE_BYTES]
    measured_peak = max(allocated for _, _, allocated, _, _ in replay(trace))
    bundle = read_json(bundle_path)
    then = bundle["timeline"]
    now = replanned(lathe, run_log, bundle)
    planned_then, planned_now = above_before(then), above_before(now)
    steps = [i for i, name in enumerate(now["node"]) if name.startswith(ATTENTION_BACKWARD)]
    if len(steps) != len(measured):
        sys.exit(f"{len(steps)} attention backwards planned, {len(measured)} workspaces measured")
    print(f"{'execution':52} {'measured MiB':>12} {'planned MiB, run':>16} {'planned MiB, now':>16}")
    for step, allocated in zip(steps, measured):
        name = now["node"][step]
        print(f"{name:52} {allocated / MiB:12.1f} {planned_then[then['node'].index(name)] / MiB:16.1f} "
              f"{planned_now[step] / MiB:16.1f}")
    print(f"{'peak of the step':52} {measured_peak / MiB:12.1f} {max(planned_then) / MiB:16.1f} {max(planned_now) / MiB:16.1f}")
    print(f"peak GiB: measured {measured_peak / GiB:.3f}, planned at run time {max(planned_then) / GiB:.3f}, "
          f"planned now {max(planned_now) / GiB:.3f}")


if __name__ == "__main__":
    main()

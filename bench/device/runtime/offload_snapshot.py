"""What is on the GPU at the measured peak of one step, with and without activation offload: bench.py's
4-layer stack under lathe.compile(policy=BENCH_POLICY, memory=BENCH_MEMORY), one step under the CUDA
caching allocator's memory history after warm-up. Prints per variant the measured peak (allocated, as
bench.py measures it), the planner's prediction, where in the step the peak falls, and the blocks
live there (largest first, with the frame that allocated them: Inductor's generated code names its
buffer); writes each snapshot to $OUT (`lathe memory` and the studio open them).
    device run: BENCH_SCRIPT=offload_snapshot.py BENCH_POLICY=budget BENCH_MEMORY=4.5GiB \
                bash bench/device/runtime/run.sh   (carry .device/deps)
"""

import os
import pickle

import torch

import lathe
from bench import Stack, step
from rows import planner_fields

GiB = 2**30
MiB = 2**20


def frame_of(frames):
    """The most telling frame: Inductor's generated code, else lathe's runtime, else the first."""
    for keyword in ("torchinductor", "lathe", "bench"):
        for f in frames:
            if keyword in f.get("filename", ""):
                return f"{os.path.basename(f['filename'])}:{f['line']} {f.get('name', '')}"
    return f"{os.path.basename(frames[0]['filename'])}:{frames[0]['line']}" if frames else "?"


def relative_frames(value, root):
    """The snapshot with frames under the checkout named from its root (results are committed)."""
    if isinstance(value, dict):
        return {k: relative_frames(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [relative_frames(v, root) for v in value]
    if isinstance(value, str) and value.startswith(root):
        return value[len(root):]
    return value


def peak_blocks(trace):
    """Replays allocations and frees (as memory_allocated counts them) from the step's start; returns
    the peak above the blocks live before it, the event index at the peak, the events' count, and the
    blocks live at the peak."""
    live = {}
    allocated = peak = 0
    peak_index, at_peak = 0, {}
    for i, event in enumerate(trace):
        action = event["action"]
        if action == "alloc":
            live[event["addr"]] = event
            allocated += event["size"]
            if allocated > peak:
                peak, peak_index, at_peak = allocated, i, dict(live)
        elif action == "free_requested" and event["addr"] in live:
            allocated -= live.pop(event["addr"])["size"]
    return peak, peak_index, len(trace), at_peak


def main():
    policy = os.environ.get("BENCH_POLICY", "budget")
    memory = os.environ.get("BENCH_MEMORY") or None
    out_dir = os.environ.get("OUT", "/tmp")
    torch.manual_seed(0)
    model = Stack().cuda().to(torch.bfloat16)
    x = torch.randn(2, 4096, 4096, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    for offload in (False, True):
        torch._dynamo.reset()
        torch.cuda.empty_cache()
        fn = lathe.compile(lambda inp: model(inp), policy=policy, memory=memory, activation_offload=offload)
        for _ in range(4):
            step(fn, model, x)
        torch.cuda.synchronize()
        model.zero_grad(set_to_none=True)
        x.grad = None
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        torch.cuda.memory._record_memory_history(max_entries=200000, stacks="python")
        step(fn, model, x)
        torch.cuda.synchronize()
        measured = torch.cuda.max_memory_allocated() - before
        snapshot = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        name = f"offload-snapshot-{policy}-{memory or 'none'}-{'offload' if offload else 'resident'}.pickle"
        with open(os.path.join(out_dir, name), "wb") as f:
            pickle.dump(relative_frames(snapshot, os.getcwd() + os.sep), f)

        fields = planner_fields(fn)
        predicted = fields.get("predicted_peak_gib")
        print(f"\n== offload={offload}: measured peak {measured / GiB:.3f} GiB above {before / GiB:.3f}; "
              f"predicted {'-' if predicted is None else f'{predicted - before / GiB:.3f}'} GiB; snapshot {name}")
        trace = snapshot["device_traces"][torch.cuda.current_device()]
        peak, index, count, at_peak = peak_blocks(trace)
        print(f"  replayed peak {peak / GiB:.3f} GiB at event {index} of {count} ({100 * index / max(count, 1):.0f}% into the step)")
        by_frame = {}
        for block in at_peak.values():
            key = frame_of(block.get("frames", []))
            total, n = by_frame.get(key, (0, 0))
            by_frame[key] = (total + block["size"], n + 1)
        print(f"  {'MiB':>8} {'blocks':>6}  allocated at")
        for key, (total, n) in sorted(by_frame.items(), key=lambda kv: -kv[1][0])[:25]:
            print(f"  {total / MiB:8.1f} {n:6d}  {key}")


if __name__ == "__main__":
    main()

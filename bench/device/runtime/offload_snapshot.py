"""What is on the GPU at the measured peak of one step, with and without activation offload: bench.py's
4-layer stack under lathe.compile(policy=BENCH_POLICY, memory=BENCH_MEMORY), one step under the CUDA
caching allocator's memory history after warm-up. Prints per variant the measured peak (allocated, as
bench.py measures it) beside the planner's prediction, then the snapshot's analysis; writes each
snapshot to $OUT (`lathe memory` and the studio open them).
    device run: BENCH_SCRIPT=offload_snapshot.py BENCH_POLICY=budget BENCH_MEMORY=4.5GiB \
                bash bench/device/runtime/run.sh   (carry .device/deps)
BENCH_OFFLOAD (0,1: the variants, without and with activation offload); BENCH_TRACE_DIR (unset: none)
writes each variant's run folder there (its TORCH_TRACE log and plan bundle, which
planned_vs_snapshot.py sets beside the snapshot).
The analysis alone, of snapshots kept (no GPU, no torch):
    python3 bench/device/runtime/offload_snapshot.py --analyze SNAPSHOT.pickle [...]
For each: the host time the trace spans; the peak as max_memory_allocated counts it (a block ends at
its free_requested) with the event and the allocation that reach it; what the step held when the
second generated program (the backward) first allocated; the blocks freed but not yet given back
(free_requested without free_completed) at the peak; the blocks live there, largest first, by the
frame that allocated them (Inductor's generated code names its buffer).
"""

import os
import pickle
import sys

GiB = 2**30
MiB = 2**20


def frame_of(frames):
    """The most telling frame: Inductor's generated code, else lathe's runtime, else the first."""
    for keyword in ("torchinductor", "lathe", "bench"):
        for f in frames:
            if keyword in f.get("filename", ""):
                return f"{os.path.basename(f['filename'])}:{f['line']} {f.get('name', '')}"
    return f"{os.path.basename(frames[0]['filename'])}:{frames[0]['line']}" if frames else "?"


def generated_program(event):
    """The Inductor-generated file an allocation came from, or None."""
    for f in event.get("frames", []):
        if "torchinductor" in f.get("filename", ""):
            return os.path.basename(f["filename"])
    return None


def relative_frames(value, root):
    """The snapshot with frames under the checkout named from its root (results are committed)."""
    if isinstance(value, dict):
        return {k: relative_frames(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [relative_frames(v, root) for v in value]
    if isinstance(value, str) and value.startswith(root):
        return value[len(root):]
    return value


def replay(trace):
    """Replays a device trace: yields, after each event, its index, the event, the bytes allocated
    from the trace's start (a block ends at its free_requested, as max_memory_allocated counts it),
    and, by address, the blocks live (index, event) and those freed but not given back."""
    live, pending = {}, {}
    allocated = 0
    for i, event in enumerate(trace):
        action = event["action"]
        if action == "alloc":
            live[event["addr"]] = (i, event)
            allocated += event["size"]
        elif action == "free_requested":
            if event["addr"] in live:
                allocated -= live.pop(event["addr"])[1]["size"]
            pending[event["addr"]] = (i, event)
        elif action == "free_completed":
            pending.pop(event["addr"], None)
        yield i, event, allocated, live, pending


def analyze(snapshot, device=0):
    """Prints the analysis of one snapshot's device trace (see the module's docstring)."""
    trace = snapshot["device_traces"][device]
    times = [e["time_us"] for e in trace if e.get("time_us")]
    span = f", over {(max(times) - min(times)) / 1e3:.2f} ms of host time" if times else ""
    print(f"  {len(trace)} trace events{span}")
    peak = peak_index = 0
    at_peak, pending_at_peak = {}, {}
    programs, backward_start = [], None
    for i, event, allocated, live, pending in replay(trace):
        if event["action"] != "alloc":
            continue
        program = generated_program(event)
        if program and program not in programs:
            programs.append(program)
            if len(programs) == 2:
                backward_start = allocated - event["size"]
        if allocated > peak:
            peak, peak_index, at_peak, pending_at_peak = allocated, i, dict(live), dict(pending)
    print(f"  peak {peak / GiB:.3f} GiB (allocated, from the trace's start) at event {peak_index} of {len(trace)} "
          f"({100 * peak_index / max(len(trace), 1):.0f}% into the step), reached by a {trace[peak_index]['size']} B "
          f"allocation at {frame_of(trace[peak_index].get('frames', []))}")
    if backward_start is not None:
        print(f"  held when the second generated program first allocated: {backward_start / GiB:.3f} GiB")
    if pending_at_peak:
        freed = ", ".join(str(i) for i, _ in sorted(pending_at_peak.values(), key=lambda p: p[0]))
        print(f"  freed but not given back at the peak: {len(pending_at_peak)} blocks, "
              f"{sum(e['size'] for _, e in pending_at_peak.values()) / GiB:.3f} GiB (free_requested at events {freed})")
    by_frame = {}
    for _, block in at_peak.values():
        key = frame_of(block.get("frames", []))
        total, n = by_frame.get(key, (0, 0))
        by_frame[key] = (total + block["size"], n + 1)
    print(f"  {'MiB':>8} {'blocks':>6}  allocated at")
    for key, (total, n) in sorted(by_frame.items(), key=lambda kv: -kv[1][0])[:25]:
        print(f"  {total / MiB:8.1f} {n:6d}  {key}")


def record_step(fn, model, x):
    """One step of `fn` after warm-up (bench.py's settle), under the caching allocator's memory
    history: the bytes allocated before it, its peak above them, and the snapshot (frames under the
    checkout named from its root)."""
    import torch

    from bench import settle, step

    before = settle(fn, model, x)
    torch.cuda.memory._record_memory_history(max_entries=200000, stacks="python")
    step(fn, model, x)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - before
    snapshot = relative_frames(torch.cuda.memory._snapshot(), os.getcwd() + os.sep)
    torch.cuda.memory._record_memory_history(enabled=None)
    return before, peak, snapshot


def main():
    import torch

    import lathe
    from bench import Stack, step
    from rows import planner_fields, predicted_peak_above_before

    policy = os.environ.get("BENCH_POLICY", "budget")
    memory = os.environ.get("BENCH_MEMORY") or None
    out_dir = os.environ.get("OUT", "/tmp")
    trace_root = os.environ.get("BENCH_TRACE_DIR")
    variants = [v == "1" for v in os.environ.get("BENCH_OFFLOAD", "0,1").split(",") if v]
    torch.manual_seed(0)
    model = Stack().cuda().to(torch.bfloat16)
    x = torch.randn(2, 4096, 4096, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    for offload in variants:
        torch._dynamo.reset()
        torch.cuda.empty_cache()
        trace_dir = os.path.join(trace_root, "offload" if offload else "resident") if trace_root else None
        fn = lathe.compile(lambda inp: model(inp), policy=policy, memory=memory, activation_offload=offload,
                           trace_dir=trace_dir)
        step(fn, model, x)  # compiles
        before, measured, snapshot = record_step(fn, model, x)
        name = f"offload-snapshot-{policy}-{memory or 'none'}-{'offload' if offload else 'resident'}.pickle"
        with open(os.path.join(out_dir, name), "wb") as f:
            pickle.dump(snapshot, f)

        predicted = predicted_peak_above_before({**planner_fields(fn), "before_gib": before / GiB})
        print(f"\n== offload={offload}: measured peak {measured / GiB:.3f} GiB above {before / GiB:.3f}; "
              f"predicted {'-' if predicted is None else f'{predicted:.3f}'} GiB; snapshot {name}")
        analyze(snapshot, torch.cuda.current_device())


if __name__ == "__main__":
    if sys.argv[1:2] == ["--analyze"]:
        for path in sys.argv[2:]:
            print(f"== {path}")
            with open(path, "rb") as f:
                analyze(pickle.load(f))
    else:
        main()

"""Where an activation-offloaded step spends its time: bench.py's 4-layer stack under
lathe.compile(policy=BENCH_POLICY, memory=BENCH_MEMORY, activation_offload=True), one step under torch.profiler after
warm-up. Prints forward and backward times and memory (each phase synchronized), the host/device
copies with their streams and times from the step's start, and the host ops that took longest.
    device run: BENCH_SCRIPT=offload_trace.py bash bench/device/runtime/run.sh   (carry .device/deps)
"""

import os
import time

import torch

import lathe
from bench import Stack, step

GiB = 2**30


def phases(fn, model, x):
    """Forward and backward times (ms) and allocated memory after each, every phase synchronized."""
    model.zero_grad(set_to_none=True)
    x.grad = None
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    t0 = time.perf_counter()
    loss = fn(x).float().pow(2).mean()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    after_forward = torch.cuda.memory_allocated()
    loss.backward()
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    return (t1 - t0) * 1e3, (t2 - t1) * 1e3, (after_forward - before) / GiB


def main():
    policy = os.environ.get("BENCH_POLICY", "heuristic")
    memory = os.environ.get("BENCH_MEMORY") or None  # "4.5GiB" with policy budget
    torch.manual_seed(0)
    model = Stack().cuda().to(torch.bfloat16)
    x = torch.randn(2, 4096, 4096, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    for offload in (False, True):
        torch._dynamo.reset()
        fn = lathe.compile(lambda inp: model(inp), policy=policy, memory=memory, activation_offload=offload)
        for _ in range(4):
            step(fn, model, x)
        fwd, bwd, held = phases(fn, model, x)
        print(f"offload={offload}: forward {fwd:.1f} ms, backward {bwd:.1f} ms, held after forward {held:.3f} GiB")
        if not offload:
            continue
        [plan] = fn._lathe_backend.plans
        print(f"  offloaded {len(plan.offloaded)} of {len(plan.plan.offloaded)} planned")
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                torch.profiler.ProfilerActivity.CUDA]) as prof:
            step(fn, model, x)
            torch.cuda.synchronize()
        events = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        start = min(e.time_range.start for e in events)
        end = max(e.time_range.end for e in events)
        print(f"  profiled step: {(end - start) / 1e3:.1f} ms on the device")
        by_stream = {}
        for e in events:
            key = getattr(e, "device_resource_id", None)
            by_stream[key] = by_stream.get(key, 0) + (e.time_range.end - e.time_range.start)
        print("  busy per stream (ms):", {k: round(v / 1e3, 1) for k, v in by_stream.items()})
        copies = [e for e in events if "Memcpy" in e.name]
        for e in copies[:60]:
            print(f"    {e.name:28} stream {getattr(e, 'device_resource_id', '?')} "
                  f"{(e.time_range.start - start) / 1e3:7.2f} .. {(e.time_range.end - start) / 1e3:7.2f} ms")
        gaps = []
        compute = sorted((e for e in events if "Memcpy" not in e.name), key=lambda e: e.time_range.start)
        for a, b in zip(compute, compute[1:]):
            gap = b.time_range.start - max(a.time_range.end, 0)
            if gap > 300:  # us
                gaps.append((gap, (a.time_range.end - start) / 1e3, a.name[:40], b.name[:40]))
        gaps.sort(reverse=True)
        print("  longest idle gaps of the compute kernels (ms at, after, before):")
        for gap, at, a, b in gaps[:12]:
            print(f"    {gap / 1e3:6.2f} ms at {at:7.2f}  after {a}  before {b}")
        cpu = sorted((e for e in prof.key_averages() if e.self_cpu_time_total > 0),
                     key=lambda e: -e.self_cpu_time_total)[:12]
        print("  host ops by self time (ms, calls):")
        for e in cpu:
            print(f"    {e.key[:60]:60} {e.self_cpu_time_total / 1e3:8.2f} {e.count}")


if __name__ == "__main__":
    main()

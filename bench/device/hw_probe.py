#!/usr/bin/env python3
"""Measures the numbers of a Lathe hardware profile (resources/hw/*.json) on the local CUDA GPU.

Device-to-device copy bandwidth, GEMM rates (bf16, fp16, fp32, tf32, fp8 where the GPU has it) at
8192^3 on random data, pinned host<->device copies at several chunk sizes, pageable H2D, and kernel
launch overhead (eager and per node of a replayed CUDA graph). Each figure is the median of repeats
timed with CUDA events after warm-up; every result is checked against a reference first. Writes
everything to $OUT/hw_probe.json (or --out) and prints one table last. Needs only torch.
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

import torch

GEMM_SIZE = 8192
COPY_BYTES = 1 << 30  # per buffer; far larger than any L2
CHUNK_MB = (1, 8, 64, 256)
PAGEABLE_MB = 64
MB = 1 << 20
LAUNCHES = 2000  # eager tiny kernels per timed loop
GRAPH_NODES = 1000  # tiny kernels per captured graph


def median_seconds(fn, repeats, warmup=3):
    """Median over `repeats` of fn()'s device time, each run bracketed by its own pair of events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def relative_error(out, ref):
    out = out.double()
    return float(torch.linalg.norm(out - ref) / torch.linalg.norm(ref))


def probe_copy():
    src = torch.randn(COPY_BYTES // 4, device="cuda")
    dst = torch.full_like(src, float("nan"))
    dst.copy_(src)
    if not torch.equal(dst, src):
        raise RuntimeError("device-to-device copy produced wrong data")
    seconds = median_seconds(lambda: dst.copy_(src), repeats=20)
    return {"bytes_per_copy": 2 * COPY_BYTES, "seconds": seconds, "bytes_per_s": 2 * COPY_BYTES / seconds}


def gemm_operands(dtype):
    a = torch.randn(GEMM_SIZE, GEMM_SIZE, device="cuda", dtype=torch.float32)
    b = torch.randn(GEMM_SIZE, GEMM_SIZE, device="cuda", dtype=torch.float32)
    return a.to(dtype), b.to(dtype)


def check_rows(out, a, b, rows=64):
    """Error of the first rows of a @ b against float64 computed from the same (rounded) operands."""
    ref = a[:rows].double() @ b.double()
    return relative_error(out[:rows], ref)


def probe_gemm(name, dtype, allow_tf32, repeats, max_error):
    torch.backends.cuda.matmul.allow_tf32 = allow_tf32
    try:
        a, b = gemm_operands(dtype)
        out = torch.full((GEMM_SIZE, GEMM_SIZE), float("nan"), device="cuda", dtype=dtype)
        torch.mm(a, b, out=out)
        error = check_rows(out, a, b)
        if not error < max_error:
            raise RuntimeError(f"{name} GEMM error {error:.2e} over {max_error:.0e}")
        seconds = median_seconds(lambda: torch.mm(a, b, out=out), repeats=repeats)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False
    flops = 2 * GEMM_SIZE**3
    return {"seconds": seconds, "flops_per_s": flops / seconds, "relative_error": error}


def probe_gemm_fp8(repeats):
    """e4m3 x e4m3 -> bf16 through torch._scaled_mm (needs sm_89+); None where it is unavailable."""
    if not hasattr(torch, "float8_e4m3fn") or torch.cuda.get_device_capability() < (8, 9):
        return None
    a, b = gemm_operands(torch.float32)
    a8 = a.to(torch.float8_e4m3fn)
    b8 = b.t().contiguous().to(torch.float8_e4m3fn).t()  # _scaled_mm wants the second operand column-major
    one = torch.tensor(1.0, device="cuda")

    def run():
        return torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

    try:
        out = run()
    except RuntimeError as e:  # no fp8 kernel for this build or GPU
        return {"error": str(e).splitlines()[0]}
    error = relative_error(out[:64], a8[:64].double() @ b8.double())
    if not error < 1e-2:
        raise RuntimeError(f"fp8 GEMM error {error:.2e}")
    seconds = median_seconds(run, repeats=repeats)
    return {"seconds": seconds, "flops_per_s": 2 * GEMM_SIZE**3 / seconds, "relative_error": error}


def probe_host_copies():
    results = {"h2d_pinned": {}, "d2h_pinned": {}}
    for mb in CHUNK_MB:
        n = mb * MB
        host = torch.randint(0, 256, (n,), dtype=torch.uint8).pin_memory()
        back = torch.empty(n, dtype=torch.uint8).pin_memory()
        dev = torch.empty(n, dtype=torch.uint8, device="cuda")
        dev.copy_(host, non_blocking=True)
        back.copy_(dev, non_blocking=True)
        torch.cuda.synchronize()
        if not torch.equal(back, host):
            raise RuntimeError(f"pinned round trip of {mb} MB produced wrong data")
        repeats = max(10, 200 // mb)
        # One copy between two events (what one chunk costs, latency included), and a queue of
        # copies between two events (the stream's throughput when a prefetcher keeps it busy).
        queue = max(4, 1024 // mb)
        for key, copy in (("h2d_pinned", lambda: dev.copy_(host, non_blocking=True)),
                          ("d2h_pinned", lambda: back.copy_(dev, non_blocking=True))):
            single = median_seconds(copy, repeats)
            queued = median_seconds(lambda: [copy() for _ in range(queue)], repeats=5) / queue
            results[key][f"{mb}MB"] = {"seconds": single, "bytes_per_s": n / single, "queued_bytes_per_s": n / queued}

    # Pageable memory is staged through a driver buffer and the call blocks the host, so the host
    # clock around a synchronized copy is what a program sees.
    n = PAGEABLE_MB * MB
    host = torch.randint(0, 256, (n,), dtype=torch.uint8)
    dev = torch.empty(n, dtype=torch.uint8, device="cuda")
    dev.copy_(host)
    if not torch.equal(dev.cpu(), host):
        raise RuntimeError("pageable copy produced wrong data")
    times = []
    for _ in range(3):  # the first pageable copies also fault the driver's staging memory in
        dev.copy_(host)
    for _ in range(10):
        torch.cuda.synchronize()
        start = time.perf_counter()
        dev.copy_(host)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    seconds = statistics.median(times)
    results["h2d_pageable"] = {f"{PAGEABLE_MB}MB": {"seconds": seconds, "bytes_per_s": n / seconds}}
    return results


def probe_launch():
    x = torch.zeros(1, device="cuda")

    def eager_loop():
        for _ in range(LAUNCHES):
            x.add_(1.0)

    eager = median_seconds(eager_loop, repeats=5, warmup=1) / LAUNCHES

    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        x.add_(1.0)  # warm-up on the capture stream
    torch.cuda.current_stream().wait_stream(stream)
    with torch.cuda.graph(graph):
        for _ in range(GRAPH_NODES):
            x.add_(1.0)
    x.zero_()
    graph.replay()
    torch.cuda.synchronize()
    if x.item() != GRAPH_NODES:
        raise RuntimeError(f"graph replay ran {x.item()} of {GRAPH_NODES} kernels")
    replay = median_seconds(graph.replay, repeats=20)

    cpu_times = []  # host time to submit one replay (no synchronization inside)
    for _ in range(20):
        torch.cuda.synchronize()
        start = time.perf_counter()
        graph.replay()
        cpu_times.append(time.perf_counter() - start)
    torch.cuda.synchronize()
    return {
        "eager_seconds_per_op": eager,
        "graph_seconds_per_node": replay / GRAPH_NODES,
        "graph_replay_cpu_seconds": statistics.median(cpu_times),
        "graph_nodes": GRAPH_NODES,
    }


def gpu_state():
    try:
        query = "clocks.sm,clocks.mem,power.draw,temperature.gpu"
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"], capture_output=True, text=True, timeout=20
        )
        return out.stdout.strip() or out.stderr.strip()
    except (OSError, subprocess.SubprocessError) as e:
        return f"nvidia-smi unavailable: {e}"


def table(rows):
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="output folder (default: $OUT, else the current folder)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("hw_probe.py needs a CUDA GPU")
    out_dir = args.out or os.environ.get("OUT") or "."
    torch.manual_seed(0)

    props = torch.cuda.get_device_properties(0)
    result = {
        "date": datetime.date.today().isoformat(),
        "device": props.name,
        "capability": f"sm_{props.major}{props.minor}",
        "sm_count": props.multi_processor_count,
        "total_memory_bytes": props.total_memory,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "gpu_state_before": gpu_state(),
    }
    result["d2d_copy"] = probe_copy()
    gemm = {
        "bf16": probe_gemm("bf16", torch.bfloat16, False, 30, 1e-2),
        "fp16": probe_gemm("fp16", torch.float16, False, 30, 1e-2),
        "fp32": probe_gemm("fp32", torch.float32, False, 10, 1e-4),
        "tf32": probe_gemm("tf32", torch.float32, True, 20, 1e-2),
    }
    fp8 = probe_gemm_fp8(30)
    if fp8 is not None:
        gemm["fp8_e4m3"] = fp8
    result["gemm_8192"] = gemm
    result["gpu_state_after_gemm"] = gpu_state()
    result.update(probe_host_copies())
    result["launch"] = probe_launch()

    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "hw_probe.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=2)

    rows = [
        ("device", f"{result['device']} ({result['capability']}, {result['sm_count']} SMs, "
                   f"{result['total_memory_bytes'] / 2**30:.1f} GiB), torch {result['torch']}"),
        ("D2D copy (read+write)", f"{result['d2d_copy']['bytes_per_s'] / 1e12:.3f} TB/s"),
    ]
    for name, r in gemm.items():
        value = "n/a: " + r["error"] if "error" in r else f"{r['flops_per_s'] / 1e12:.1f} TFLOP/s (err {r['relative_error']:.1e})"
        rows.append((f"GEMM {name} 8192^3", value))
    for direction in ("h2d_pinned", "d2h_pinned", "h2d_pageable"):
        for size, r in result[direction].items():
            queued = f", queued {r['queued_bytes_per_s'] / 1e9:.1f} GB/s" if "queued_bytes_per_s" in r else ""
            rows.append((f"{direction} {size}", f"{r['bytes_per_s'] / 1e9:.1f} GB/s{queued}"))
    launch = result["launch"]
    rows += [
        ("launch, eager tiny op", f"{launch['eager_seconds_per_op'] * 1e6:.2f} us"),
        ("launch, CUDA graph node", f"{launch['graph_seconds_per_node'] * 1e6:.3f} us"),
        (f"graph replay CPU ({GRAPH_NODES} nodes)", f"{launch['graph_replay_cpu_seconds'] * 1e6:.1f} us"),
        ("GPU state after GEMMs", result["gpu_state_after_gemm"]),
        ("written", path),
    ]
    print(table(rows))


if __name__ == "__main__":
    main()

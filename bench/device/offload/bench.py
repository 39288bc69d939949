"""Weight offload at run time on the H200: 8 Llama-3-8B-dims layers, bf16, inference forward, batch 1,
at seq 1024 / 4096 / 16384, with the layers' weights streamed from pinned host memory by
lathe._weights (the executor lathe.compile(..., offload=...) attaches) under each policy, at 0.3 and
0 resident. Per point, in the same run: the all-resident step (compute), the measured step, the floor
max(compute, streamed bytes / measured H2D bandwidth), the planner's predicted step after its
profiling step, peak memory (max allocated minus allocated before the step), and whether the output
equals the resident model's. The layers run eagerly so every row computes with the same kernels.

    device run, carry [".device/deps"]:  bash bench/device/offload/run.sh

Environment: BENCH_SEQS (default 1024,4096,16384), BENCH_LAYERS (8), BENCH_STEPS (10 timed steps),
BENCH_RESIDENT (0.3,0), BENCH_POLICIES (base,cost-effective,heuristic,optimal), BENCH_COMPILE_SEQS
(4096: rows where the layers are compiled, torch.compile resident against lathe.compile(offload=...)
at each resident fraction with the default policy; empty for none).
"""

import copy
import gc
import json
import os
import statistics
import sys
import time

import torch

import lathe  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "runtime"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from bench import Stack  # noqa: E402  the training bench's layers
from hw_probe import median_seconds  # noqa: E402

from lathe import _options, _weights  # noqa: E402

GB = 1e9


def env_list(name, default, kind=str):
    return [kind(v) for v in os.environ.get(name, default).split(",") if v]


def h2d_bandwidth(nbytes=1 << 30):
    host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    device = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    return nbytes / median_seconds(lambda: device.copy_(host, non_blocking=True), repeats=3, warmup=1)


def timed_steps(model, x, steps, warmup=3):
    with torch.no_grad():
        for _ in range(warmup):
            out = model(x)
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        seconds = []
        for _ in range(steps):
            start = time.perf_counter()
            out = model(x)
            torch.cuda.synchronize()
            seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), torch.cuda.max_memory_allocated() - before, before, out


def compiled_rows(master, x, seq, steps, residents, bandwidth):
    """The product path: each layer's forward compiled (torch.compile resident; lathe.compile with
    offload=, which compiles the units the same way and streams between them)."""
    rows = []
    model = copy.deepcopy(master).cuda()
    for layer in model.layers:
        layer.forward = torch.compile(layer.forward)
    start = time.perf_counter()
    compute, peak, before, expected = timed_steps(model, x, steps)
    expected = expected.clone()
    print(f"  torch.compile resident {compute * 1e3:.2f} ms (first steps {time.perf_counter() - start:.0f} s)", flush=True)
    rows.append(dict(seq=seq, policy="torch.compile resident", resident=1.0, step_ms=compute * 1e3,
                     floor_ms=compute * 1e3, ratio=1.0, peak_gb=(peak + before) / GB, equal=True))
    del model
    gc.collect()
    torch.cuda.empty_cache()
    for resident in residents:
        model = lathe.compile(copy.deepcopy(master), offload=dict(resident=resident), hw="h200")
        measured, peak, before, out = timed_steps(model, x, steps)
        report = lathe.offload_report(model)
        floor = max(compute, report["streamed_bytes"] / bandwidth)
        rows.append(dict(
            seq=seq, policy=f"lathe.compile {report['policy']}", resident=resident, step_ms=measured * 1e3,
            floor_ms=floor * 1e3, ratio=measured / floor, predicted_ms=report["predicted_step_seconds"] * 1e3,
            resident_units=len(report["resident"]), slots=report["slots"], peak_gb=(peak + before) / GB,
            unplanned=report["unplanned_loads"],
            equal=bool(torch.allclose(out.float(), expected.float(), rtol=2e-2, atol=2e-2))))
        r = rows[-1]
        print(f"  lathe.compile r={resident} {r['step_ms']:.2f} ms  floor {r['floor_ms']:.2f}  x{r['ratio']:.3f}  "
              f"predicted {r['predicted_ms']:.2f}  equal(bf16 tol) {r['equal']}", flush=True)
        del model
        gc.collect()
        torch.cuda.empty_cache()
    return rows


def main():
    seqs = env_list("BENCH_SEQS", "1024,4096,16384", int)
    layers = int(os.environ.get("BENCH_LAYERS", "8"))
    steps = int(os.environ.get("BENCH_STEPS", "10"))
    residents = env_list("BENCH_RESIDENT", "0.3,0", float)
    policies = env_list("BENCH_POLICIES", "base,cost-effective,heuristic,optimal")
    compile_seqs = env_list("BENCH_COMPILE_SEQS", "4096", int)
    bandwidth = h2d_bandwidth()
    print(f"H2D pinned, 1 GiB: {bandwidth / GB:.1f} GB/s", flush=True)
    torch.manual_seed(0)
    rows = []
    for seq in seqs:
        master = Stack(layers=layers, seq=seq).to(torch.bfloat16)
        weight_bytes = sum(p.numel() * p.element_size() for p in master.layers.parameters())
        x = torch.randn(1, seq, 4096, dtype=torch.bfloat16, device="cuda")
        resident_model = copy.deepcopy(master).cuda()
        compute, peak, before, expected = timed_steps(resident_model, x, steps)
        expected = expected.clone()
        del resident_model
        gc.collect()
        torch.cuda.empty_cache()
        rows.append(dict(seq=seq, policy="resident", resident=1.0, step_ms=compute * 1e3, floor_ms=compute * 1e3,
                         ratio=1.0, peak_gb=(peak + before) / GB, equal=True))
        print(f"seq {seq}: resident {compute * 1e3:.2f} ms, weights {weight_bytes / GB:.2f} GB", flush=True)
        for resident in residents:
            for policy in policies:
                model = copy.deepcopy(master)
                streamer = _weights.attach(model, _options.OffloadSpec(resident=resident, policy=policy), "h200")
                measured, peak, before, out = timed_steps(model, x, steps)
                report = streamer.report()
                link = report["measured"]["h2d_bandwidth"] if report["measured"] else bandwidth
                floor = max(compute, report["streamed_bytes"] / bandwidth)
                rows.append(dict(
                    seq=seq, policy=policy, resident=resident, step_ms=measured * 1e3, floor_ms=floor * 1e3,
                    ratio=measured / floor, predicted_ms=report["predicted_step_seconds"] * 1e3,
                    predicted_vs_measured=report["predicted_step_seconds"] / measured,
                    resident_units=len(report["resident"]), slots=report["slots"],
                    streamed_gb=report["streamed_bytes"] / GB, link_gbs=link / GB,
                    profiled_compute_ms=sum(report["measured"]["unit_seconds"]) * 1e3 if report["measured"] else None,
                    peak_gb=(peak + before) / GB, unplanned=report["unplanned_loads"],
                    equal=bool(torch.equal(out, expected))))
                r = rows[-1]
                print(f"  r={resident} {policy:14s} {r['step_ms']:8.2f} ms  floor {r['floor_ms']:8.2f}  "
                      f"x{r['ratio']:.3f}  predicted {r['predicted_ms']:8.2f}  resident units {r['resident_units']}  "
                      f"slots {r['slots']}  link {r['link_gbs']:.1f} GB/s  weights+act {r['peak_gb']:.2f} GB  "
                      f"equal {r['equal']}", flush=True)
                del model, streamer, out
                gc.collect()
                torch.cuda.empty_cache()
        if seq in compile_seqs:
            rows.extend(compiled_rows(master, x, seq, steps, residents, bandwidth))
        del master
        gc.collect()
    print("\n| seq | resident | policy | step ms | floor ms | step / floor | predicted ms | units kept | slots | GPU GB | equal |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['seq']} | {r['resident']} | {r['policy']} | {r['step_ms']:.2f} | {r['floor_ms']:.2f} | "
              f"{r['ratio']:.3f} | {r.get('predicted_ms', float('nan')):.2f} | {r.get('resident_units', '-')} | "
              f"{r.get('slots', '-')} | {r['peak_gb']:.2f} | {r['equal']} |")
    out_dir = os.environ.get("OUT")
    if out_dir:
        with open(os.path.join(out_dir, "offload.jsonl"), "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()

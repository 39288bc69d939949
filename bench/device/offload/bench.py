"""Weight offload at run time on the H200: 8 Llama-3-8B-dims layers, bf16, inference forward, batch 1,
at seq 1024 / 4096 / 16384, with the layers' weights streamed from pinned host memory by
lathe._weights (the executor lathe.compile(..., offload=...) attaches) under each policy, at 0.3 and
0 resident. Per point, in the same run: the all-resident step (compute), the measured step, the floor
max(compute, streamed bytes / measured H2D bandwidth), the planner's predicted step after its
profiling step, peak memory (max allocated minus allocated before the step), and whether the output
equals the resident model's. The layers run eagerly so every row computes with the same kernels.

Training rows: the training issue's shape (4 layers, batch 2, seq 4096), forward + loss + backward
with grads None before each step; streamed weights' gradients land in pinned host memory. Floor:
max(resident step, H2D bytes / H2D bandwidth, gradient bytes / D2H bandwidth); x's gradient checked
against the resident model's.

A small card: 32 GB emulated with torch.cuda.set_per_process_memory_fraction, running a stack whose
bf16 weights are at least 1.5x that (112 layers, 48.9 GB) at seq 4096, streamed under the optimal
policy with no budget given (the weights get the free memory less what the profiled step allocates);
its resident time is measured on the whole card first.

Environment: BENCH_SEQS (default 1024,4096,16384; empty for no inference rows), BENCH_LAYERS (8),
BENCH_STEPS (10 timed steps), BENCH_RESIDENT (0.3,0), BENCH_POLICIES (base,cost-effective,heuristic,
optimal), BENCH_COMPILE_SEQS (1024,4096,16384: rows where the layers are compiled, torch.compile resident against
lathe.compile(offload=...) at each resident fraction with the default policy; empty for none),
BENCH_TRAIN (optimal,heuristic: the policies of the training rows, at each resident fraction; empty
for none), BENCH_TRAIN_COMPILE (1: training rows with the layers compiled too: torch.compile and
lathe.compile resident, lathe.compile streamed against lathe.compile resident; the first streamed one
writes its run folder, with the recorded step beside its simulation, to $OUT/run-train-r<resident>),
BENCH_CARD_GB (32; 0 for no small-card row), BENCH_CARD_LAYERS (112), BENCH_GRAPH_SEQS (128,512,2048:
the CUDA-graph rows, the stack resident at each length under eager, torch.compile, torch.compile
reduce-overhead and lathe.compile(cuda_graphs=...) with those lengths as buckets; empty for none),
BENCH_GRAPH_RESIDENT (0.3,0: the same lengths with weights streamed, lathe.compile(offload=...) with and
without cuda_graphs=...),
BENCH_MAGI_SEQS (1024,4096,16384: MagiCompiler's executor at each resident fraction under its
COST_EFFECTIVE and HEURISTIC policies, after every lathe row; BENCH_MAGI=0, or no .device/magi, for none).

    device run, carry [".device/deps", ".device/magi"]:  bash bench/device/offload/run.sh
"""

import contextlib
import copy
import gc
import json
import os
import statistics
import sys
import tempfile
import time

import torch

import lathe  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "runtime"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from bench import Layer, Stack  # noqa: E402  the training bench's layers
from hw_probe import median_seconds  # noqa: E402

from lathe import _options, _weights  # noqa: E402

GB = 1e9


def env_list(name, default, kind=str):
    return [kind(v) for v in os.environ.get(name, default).split(",") if v]


def link_bandwidth(nbytes=1 << 30):
    """(H2D, D2H) bytes/s of pinned copies of 1 GiB."""
    host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    device = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    h2d = nbytes / median_seconds(lambda: device.copy_(host, non_blocking=True), repeats=3, warmup=1)
    d2h = nbytes / median_seconds(lambda: host.copy_(device, non_blocking=True), repeats=3, warmup=1)
    return h2d, d2h


@contextlib.contextmanager
def default_dtype(dtype):
    """Modules built in `dtype` (no float32 copy of a large stack first)."""
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(torch.float32)


def release():
    """Frees what the last variant held, its compiled code (which references its modules) included."""
    torch._dynamo.reset()
    gc.collect()
    torch.cuda.empty_cache()


def inference_steps(model, x, steps, warmup=3):
    """Every timed step's seconds (each call synchronised), the memory the steps allocated beyond what
    was allocated before them, that before, and the last output."""
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
    return seconds, torch.cuda.max_memory_allocated() - before, before, out


def timed_steps(model, x, steps, warmup=3):
    seconds, peak, before, out = inference_steps(model, x, steps, warmup)
    return statistics.median(seconds), peak, before, out


def side_stream_row(master, x, seq, steps, resident, expected):
    """The streamed model run on a stream of the caller's (as a serving loop or a graph capture runs
    it): its copies must order against that stream, not the one current when it was attached."""
    model = copy.deepcopy(master)
    streamer = _weights.attach(model, _options.OffloadSpec(resident=resident), "h200")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        measured, peak, before, out = timed_steps(model, x, steps)
    torch.cuda.current_stream().wait_stream(side)
    report = streamer.report()
    row = dict(seq=seq, policy=f"{report['policy']} on a side stream", resident=resident, step_ms=measured * 1e3,
               floor_ms=float("nan"), ratio=float("nan"), predicted_ms=report["predicted_step_seconds"] * 1e3,
               peak_gb=(peak + before) / GB, unplanned=report["unplanned_loads"], equal=bool(torch.equal(out, expected)))
    print(f"  r={resident} {report['policy']} on a side stream {row['step_ms']:8.2f} ms  equal {row['equal']}", flush=True)
    del model, streamer, out
    release()
    return row


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
    release()
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
              f"predicted {r['predicted_ms']:.2f}  unplanned loads {r['unplanned']}  equal(bf16 tol) {r['equal']}", flush=True)
        del model
        release()
    return rows


def magi_rows(layers, seqs, steps, residents, bandwidth):
    """MagiCompiler's executor as its anchor ran it (../shared/anchors/README.md section 3): magi_compile on
    the stack class, attention a custom op that is a subgraph boundary and compute-sensitive (17 pieces
    for 8 layers), offload_config.model_cpu_offload with gpu_resident_weight_ratio at each resident
    fraction, under COST_EFFECTIVE and HEURISTIC; its own all-resident step (no offload) is the compute of
    its floor and the output its offload rows must equal. Runs after every lathe row: MagiCompiler
    changes torch's global configuration."""
    from magi_compiler import magi_compile, magi_register_custom_op
    from magi_compiler.config import OffloadPolicy
    from magi_compiler.offload import offload_warpper

    @magi_register_custom_op("lathe_bench::attention", infer_output_meta_fn=["q"],
                             is_subgraph_boundary=True, is_compute_sensitive=True)
    def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)

    magi_layer = type("MagiOffloadLayer", (Layer,), {"attention": staticmethod(attention)})
    executors = []  # the offloading compile's executor, for the bytes its scheduler keeps
    original_init = offload_warpper.OffloadExecutor.__init__

    def recording_init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        executors.append(self)

    # A cache of this run's own: MagiCompiler keys its artifacts by model index and code, not by the
    # buffers' shapes, and reloaded an earlier run's 4096-token pieces for a 1024-token stack.
    cache = tempfile.mkdtemp(prefix="magi-cache-")

    def config(policy, resident):
        def patch(conf):
            conf.cache_root_dir = cache
            conf.offload_config.model_cpu_offload = policy is not None
            if policy is not None:
                conf.offload_config.offload_policy = OffloadPolicy[policy]
                conf.offload_config.gpu_resident_weight_ratio = resident
            return conf
        return patch

    variants = [("resident", None, 1.0)] + [(policy, policy, r) for r in residents
                                             for policy in ("COST_EFFECTIVE", "HEURISTIC")]
    rows = []
    offload_warpper.OffloadExecutor.__init__ = recording_init
    try:
        for seq in seqs:
            torch.manual_seed(0)
            with default_dtype(torch.bfloat16):
                master = Stack(layers=layers, seq=seq)
            weight_bytes = sum(p.numel() * p.element_size() for p in master.layers.parameters())
            x = torch.randn(1, seq, 4096, dtype=torch.bfloat16, device="cuda")
            compute = expected = None  # MagiCompiler's resident step and output: its offload rows' reference
            for label, policy, resident in variants:
                stack_class = magi_compile(type("MagiStack", (Stack,), {}), dynamic_arg_dims={"x": 1},
                                           config_patch=config(policy, resident))
                with default_dtype(torch.bfloat16):
                    model = stack_class(layers=layers, seq=seq, layer=magi_layer)
                model.load_state_dict(master.state_dict())
                model.cuda()  # with offload, MagiCompiler's patched _apply keeps the weights in pinned host memory
                start = time.perf_counter()
                measured, peak, before, out = timed_steps(model, x, steps, warmup=4)  # its schedule runs from the third call
                first = time.perf_counter() - start
                streamed = 0
                if policy is not None:
                    streamed = weight_bytes - executors[-1].scheduler.get_keep_weight_size()
                else:
                    compute, expected = measured, out.clone()
                executors.clear()  # nothing of this variant outlives it
                floor = max(compute, streamed / bandwidth)
                rows.append(dict(seq=seq, policy=f"MagiCompiler {label}", resident=resident, step_ms=measured * 1e3,
                                 floor_ms=floor * 1e3, ratio=measured / floor, streamed_gb=streamed / GB,
                                 kept_fraction=1 - streamed / weight_bytes, peak_gb=(peak + before) / GB,
                                 equal=bool(torch.equal(out, expected))))
                r = rows[-1]
                print(f"  MagiCompiler seq {seq} r={resident} {label:14s} {r['step_ms']:8.2f} ms  "
                      f"floor {r['floor_ms']:8.2f}  x{r['ratio']:.3f}  kept {r['kept_fraction']:.1%}  "
                      f"H2D {r['streamed_gb']:.2f} GB  GPU {r['peak_gb']:.2f} GB  equal to its resident output "
                      f"{r['equal']}  (first steps {first:.0f} s)", flush=True)
                del model, out
                release()
            del master
    finally:
        offload_warpper.OffloadExecutor.__init__ = original_init
    return rows


def train_step(model, x):
    model.zero_grad(set_to_none=True)
    x.grad = None
    loss = model(x).float().pow(2).mean()
    loss.backward()
    return loss


def timed_training(model, x, steps, warmup=3):
    for _ in range(warmup):  # a streamed model's third step runs its policy
        train_step(model, x)
    torch.cuda.synchronize()
    model.zero_grad(set_to_none=True)
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    seconds = []
    for _ in range(steps):
        start = time.perf_counter()
        loss = train_step(model, x)
        torch.cuda.synchronize()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), torch.cuda.max_memory_allocated() - before, before, loss.item(), x.grad.clone()


def training_rows(steps, residents, policies, compiled, h2d, d2h):
    seq, layers = 4096, 4
    torch.manual_seed(0)
    master = Stack(layers=layers, seq=seq).to(torch.bfloat16)
    x = torch.randn(2, seq, 4096, dtype=torch.bfloat16, device="cuda", requires_grad=True)
    rows = []
    variants = [("eager", lambda m: m.cuda())]
    if compiled:
        def compile_units(m):
            for layer in m.layers:
                layer.forward = torch.compile(layer.forward)
            return m.cuda()
        variants.append(("torch.compile", compile_units))
        # lathe.compile's own resident step (its default policy recomputes): the floor of its offload rows.
        variants.append(("lathe.compile", lambda m: lathe.compile(m.cuda(), hw="h200")))
    for label, prepare in variants:
        model = prepare(copy.deepcopy(master))
        compute, peak, before, loss, x_grad = timed_training(model, x, steps)
        print(f"train {label} resident {compute * 1e3:.2f} ms, GPU {(peak + before) / GB:.2f} GB", flush=True)
        rows.append(dict(seq=seq, policy=f"train {label} resident", resident=1.0, step_ms=compute * 1e3,
                         floor_ms=compute * 1e3, ratio=1.0, peak_gb=(peak + before) / GB, equal=True))
        del model
        release()
        if label == "torch.compile":
            continue
        runs = [(policy, r) for r in residents for policy in policies] if label == "eager" else \
            [(_options.OffloadSpec().policy, r) for r in residents]
        for policy, resident in runs:
            spec = dict(resident=resident, policy=policy)
            if label == "eager":
                model = copy.deepcopy(master)
                streamer = _weights.attach(model, _options.OffloadSpec(**spec), "h200")
            else:
                # The first gets a run folder (its TORCH_TRACE, plans and lathe.profile.json with the
                # streamed step beside its simulation), brought back under $OUT.
                trace_dir = None
                if os.environ.get("OUT") and runs.index((policy, resident)) == 0:
                    trace_dir = os.path.join(os.environ["OUT"], f"run-train-r{resident}")
                model = lathe.compile(copy.deepcopy(master), offload=spec, hw="h200", trace_dir=trace_dir)
                streamer = model._lathe_weights
            measured, peak, before, streamed_loss, streamed_grad = timed_training(model, x, steps)
            report = streamer.report()
            grad_bytes = sum(b for name, b in zip(report["units"], report["unit_bytes"])
                             if name not in report["resident"])
            floor = max(compute, report["streamed_bytes"] / h2d, grad_bytes / d2h)
            rows.append(dict(
                seq=seq, policy=f"train {label} lathe {policy}", resident=resident, step_ms=measured * 1e3,
                floor_ms=floor * 1e3, ratio=measured / floor, predicted_ms=report["predicted_step_seconds"] * 1e3,
                predicted_vs_measured=report["predicted_step_seconds"] / measured,
                resident_units=len(report["resident"]), slots=report["slots"],
                streamed_gb=report["streamed_bytes"] / GB, grads_to_host_gb=grad_bytes / GB,
                peak_gb=(peak + before) / GB, unplanned=report["unplanned_loads"],
                loss_equal=streamed_loss == loss,
                equal=bool(torch.allclose(streamed_grad.float(), x_grad.float(), rtol=2e-2, atol=1e-6))))
            r = rows[-1]
            print(f"  train {label} r={resident} {policy:10s} {r['step_ms']:8.2f} ms  floor {r['floor_ms']:8.2f}  "
                  f"x{r['ratio']:.3f}  predicted {r['predicted_ms']:8.2f}  kept {r['resident_units']}  "
                  f"slots {r['slots']}  H2D {r['streamed_gb']:.2f} GB  D2H {grad_bytes / GB:.2f} GB  "
                  f"GPU {r['peak_gb']:.2f} GB  loss equal {r['loss_equal']}  x.grad close {r['equal']}", flush=True)
            del model, streamer
            release()
    return rows


def small_card_rows(card_gb, layers, steps, h2d):
    """A card of card_gb emulated with the per-process memory fraction, weights >= 1.5x of it."""
    seq = 4096
    release()
    print(f"card {card_gb} GB: {torch.cuda.memory_allocated() / GB:.2f} GB allocated before the model", flush=True)
    torch.manual_seed(0)
    with default_dtype(torch.bfloat16), torch.device("cuda"):  # fast init; the streamer moves the units to the host
        model = Stack(layers=layers, seq=seq)
    weight_bytes = sum(p.numel() * p.element_size() for p in model.layers.parameters())
    x = torch.randn(1, seq, 4096, dtype=torch.bfloat16, device="cuda")
    compute, _, _, expected = timed_steps(model, x, steps)
    expected = expected.clone()
    print(f"card {card_gb} GB: {layers} layers, weights {weight_bytes / GB:.1f} GB "
          f"({weight_bytes / (card_gb * GB):.2f}x the card), resident on the whole H200 {compute * 1e3:.1f} ms", flush=True)
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction(card_gb * GB / total)  # the card from here on
    try:
        start = time.perf_counter()
        # No budget given: the weights get the card's free memory, less the step's own after profiling.
        streamer = _weights.attach(model, _options.OffloadSpec(policy="optimal"), "h200")
        print(f"  weights pinned on the host in {time.perf_counter() - start:.0f} s; device memory now "
              f"{torch.cuda.memory_allocated() / GB:.2f} GB", flush=True)
        measured, peak, before, out = timed_steps(model, x, steps)
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
    report = streamer.report()
    floor = max(compute, report["streamed_bytes"] / h2d)
    row = dict(seq=seq, policy=f"card {card_gb} GB, {layers} layers, optimal", resident=len(report["resident"]) / layers,
               step_ms=measured * 1e3, floor_ms=floor * 1e3, ratio=measured / floor,
               predicted_ms=report["predicted_step_seconds"] * 1e3, resident_units=len(report["resident"]),
               slots=report["slots"], streamed_gb=report["streamed_bytes"] / GB, weights_gb=weight_bytes / GB,
               peak_gb=(peak + before) / GB, unplanned=report["unplanned_loads"], equal=bool(torch.equal(out, expected)),
               weight_budget_gb=report["budget_bytes"] / GB, step_gb=report["measured"]["step_bytes"] / GB)
    print(f"  streamed {row['step_ms']:.1f} ms  floor {row['floor_ms']:.1f}  x{row['ratio']:.3f}  predicted "
          f"{row['predicted_ms']:.1f}  kept {row['resident_units']}/{layers}  GPU {row['peak_gb']:.2f} GB (cap {card_gb}; "
          f"weights {row['weight_budget_gb']:.2f}, step {row['step_gb']:.2f})  "
          f"equal {row['equal']}", flush=True)
    del model, streamer
    release()
    return [row]


# Largest error over the reference's largest magnitude that is bf16 rounding on the 8-layer stack.
MIXED_TOLERANCE = 3e-2


def relative_error(out, reference):
    """Largest difference from the reference over the reference's largest magnitude."""
    reference = reference.float()
    return float((out.float() - reference).abs().max() / reference.abs().max())


def graph_rows(layers, seqs, steps, residents, bandwidth):
    """CUDA graphs: the stack resident, batch 1, eager / torch.compile default / torch.compile
    reduce-overhead / lathe.compile(cuda_graphs=...) with one bucket per length, and lathe at a length
    inside the smallest bucket (padded, no capture of its own). Composed with weight offload, at each
    resident fraction: lathe.compile(offload=...) without graphs and with cuda_graphs=... (the streamed
    step captured, copies included), each against the floor max(the resident graphs' step, streamed
    bytes / H2D); the graphed output checked bit for bit against the ungraphed streamed one, then in
    calls that mix replays with steps longer than every bucket (run without a graph)."""
    torch.manual_seed(0)
    longest = max(seqs)
    beyond = longest + longest // 2  # longer than every bucket: runs without a graph
    master = Stack(layers=layers, seq=beyond).to(torch.bfloat16).cuda()
    inputs = {seq: torch.randn(1, seq, 4096, dtype=torch.bfloat16, device="cuda") for seq in seqs}
    inside = seqs[0] - seqs[0] // 4
    inputs[inside] = torch.randn(1, inside, 4096, dtype=torch.bfloat16, device="cuda")
    inputs[beyond] = torch.randn(1, beyond, 4096, dtype=torch.bfloat16, device="cuda")

    with torch.no_grad():
        expected = {seq: master(x).clone() for seq, x in inputs.items()}
    variants = [("eager", master), ("torch.compile", torch.compile(master)),
                ("torch.compile reduce-overhead", torch.compile(master, mode="reduce-overhead"))]
    lathe_model = lathe.compile(copy.deepcopy(master), hw="h200", cuda_graphs=dict(buckets=tuple(seqs)))
    variants.append(("lathe.compile cuda_graphs", lathe_model))
    streamed = {}
    for resident in residents:
        streamed[resident] = (
            lathe.compile(copy.deepcopy(master), hw="h200", offload=dict(resident=resident)),
            lathe.compile(copy.deepcopy(master), hw="h200", offload=dict(resident=resident),
                          cuda_graphs=dict(buckets=tuple(seqs))))
        variants += [(f"lathe.compile offload r={resident}", streamed[resident][0]),
                     (f"lathe.compile cuda_graphs offload r={resident}", streamed[resident][1])]
    rows, outs = [], {}
    for label, fn in variants:
        if "offload" in label:  # the streamer's first steps profile and record its plan (no graph yet)
            with torch.no_grad():
                for _ in range(6):
                    fn(inputs[seqs[0]])
        lengths = list(seqs) + ([inside] if label == "lathe.compile cuda_graphs" else [])
        for seq in lengths:
            seconds, _, _, out = timed_steps(fn, inputs[seq], max(steps, 20))  # latency: each call synchronised
            outs[(label, seq)] = out.clone()
            equal = bool(torch.allclose(out.float(), expected[seq].float(), rtol=2e-2, atol=2e-2))
            rows.append(dict(seq=seq, policy=f"graphs {label}", resident=1.0, step_ms=seconds * 1e3,
                             floor_ms=float("nan"), ratio=float("nan"), peak_gb=float("nan"), equal=equal,
                             error_vs_eager=relative_error(out, expected[seq])))
            print(f"graphs {label:44s} seq {seq:5d}  {seconds * 1e3:8.3f} ms  close to eager {equal}  "
                  f"max error / max |eager| {rows[-1]['error_vs_eager']:.2e}", flush=True)
        release()
    report = lathe.cuda_graphs_report(lathe_model)
    print(f"lathe cuda graphs: {report}", flush=True)
    by = {(r["policy"], r["seq"]): r for r in rows}
    for seq in seqs:  # lathe's graphs against torch.compile's output (both compiled: no eager rounding)
        error = relative_error(outs[("lathe.compile cuda_graphs", seq)], outs[("torch.compile", seq)])
        by[("graphs lathe.compile cuda_graphs", seq)]["error_vs_torch_compile"] = error
        print(f"seq {seq}: lathe cuda_graphs against torch.compile, max error / max |torch.compile| {error:.2e}",
              flush=True)
    for seq in seqs:
        ratio = by[("graphs lathe.compile cuda_graphs", seq)]["step_ms"] / \
            by[("graphs torch.compile reduce-overhead", seq)]["step_ms"]
        print(f"seq {seq}: lathe / reduce-overhead {ratio:.3f}", flush=True)
    rows.append(dict(seq=0, policy="graphs lathe report", resident=1.0, step_ms=float("nan"), floor_ms=float("nan"),
                     ratio=float("nan"), peak_gb=float("nan"), equal=True, report=report))
    for resident, (plain, graphed) in streamed.items():
        offload = lathe.offload_report(graphed)
        print(f"r={resident}: {lathe.cuda_graphs_report(graphed)}; plan {offload['policy']}, kept "
              f"{offload['resident']}, predicted {offload['predicted_step_seconds'] * 1e3:.2f} ms, "
              f"unplanned loads {offload['unplanned_loads']}", flush=True)
        for seq in seqs:
            floor = max(by[("graphs lathe.compile cuda_graphs", seq)]["step_ms"],
                        offload["streamed_bytes"] / bandwidth * 1e3)
            for label in (f"lathe.compile offload r={resident}", f"lathe.compile cuda_graphs offload r={resident}"):
                row = by[(f"graphs {label}", seq)]
                row.update(resident=resident, floor_ms=floor, ratio=row["step_ms"] / floor,
                           equal_to_ungraphed=bool(torch.equal(outs[(label, seq)],
                                                               outs[(f"lathe.compile offload r={resident}", seq)])))
            graphed_row = by[(f"graphs lathe.compile cuda_graphs offload r={resident}", seq)]
            print(f"seq {seq} r={resident}: floor {floor:.2f} ms, offload {by[(f'graphs lathe.compile offload r={resident}', seq)]['ratio']:.3f}x, "
                  f"with graphs {graphed_row['ratio']:.3f}x, graphed output equals ungraphed "
                  f"{graphed_row['equal_to_ungraphed']}", flush=True)
        # Replays after eager steps and eager steps after replays, in the order a server might call,
        # twice: the second time the host waits for the GPU after every call (a difference in the first
        # pass only would be a race between calls). A step computing with the wrong weights is off by
        # the order of the output itself; rounding is not (torch.compile against eager: 1.5-2.3e-2).
        # Each output is checked against its model's first at the length: the graphs' replays and
        # eager steps must not move, while the model without graphs can (Dynamo recompiles for new
        # lengths, and later calls may run other code: on an H100 its outputs at 128 and 3072 tokens
        # moved by 1.2e-2 after its first 2048 in this order, docs/benchmarks.md).
        order = [seqs[0], beyond, seqs[-1], seqs[0], beyond, beyond, inside] + list(seqs)
        errors, synchronized, first_graphed, first_plain, graphed_drift, plain_drift = [], [], {}, {}, [], []
        with torch.no_grad():
            for synchronize in (False, True):
                for seq in order:
                    out = graphed(inputs[seq])
                    if synchronize:
                        torch.cuda.synchronize()
                    plain_out = plain(inputs[seq])
                    torch.cuda.synchronize()
                    (synchronized if synchronize else errors).append(relative_error(out, plain_out))
                    graphed_drift.append(relative_error(out, first_graphed.setdefault(seq, out.clone())))
                    plain_drift.append(relative_error(plain_out, first_plain.setdefault(seq, plain_out.clone())))
        right = all(e <= MIXED_TOLERANCE for e in errors + synchronized) and not any(graphed_drift)
        print(f"r={resident}: mixed calls {order} (twice, the second synchronised): {lathe.cuda_graphs_report(graphed)}\n"
              f"  max error / max |without graphs| {['%.1e' % e for e in errors]}, synchronised "
              f"{['%.1e' % e for e in synchronized]}\n  against the model's first output at the length: with graphs "
              f"{['%.1e' % e for e in graphed_drift]}, without {['%.1e' % e for e in plain_drift]}\n"
              f"  graphs stable and within {MIXED_TOLERANCE:.0e} of the model without: {right}", flush=True)
        rows.append(dict(seq=0, policy=f"graphs lathe offload report r={resident}", resident=resident,
                         step_ms=float("nan"), floor_ms=float("nan"), ratio=float("nan"), peak_gb=float("nan"),
                         equal=right, mixed_order=order, mixed_errors=errors, mixed_synchronized_errors=synchronized,
                         graphed_drift=graphed_drift, plain_drift=plain_drift,
                         report=lathe.cuda_graphs_report(graphed), offload=offload))
    del master, lathe_model, variants, streamed
    release()
    return rows


def main():
    seqs = env_list("BENCH_SEQS", "1024,4096,16384", int)
    layers = int(os.environ.get("BENCH_LAYERS", "8"))
    steps = int(os.environ.get("BENCH_STEPS", "10"))
    residents = env_list("BENCH_RESIDENT", "0.3,0", float)
    policies = env_list("BENCH_POLICIES", "base,cost-effective,heuristic,optimal")
    compile_seqs = env_list("BENCH_COMPILE_SEQS", "1024,4096,16384", int)
    train_policies = env_list("BENCH_TRAIN", "optimal,heuristic")
    card_gb = float(os.environ.get("BENCH_CARD_GB", "32"))
    bandwidth, d2h = link_bandwidth()
    print(f"pinned, 1 GiB: H2D {bandwidth / GB:.1f} GB/s, D2H {d2h / GB:.1f} GB/s", flush=True)
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
        release()
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
                    profiled_compute_ms=sum(report["measured"]["segment_seconds"]) * 1e3 if report["measured"] else None,
                    peak_gb=(peak + before) / GB, unplanned=report["unplanned_loads"],
                    equal=bool(torch.equal(out, expected))))
                r = rows[-1]
                print(f"  r={resident} {policy:14s} {r['step_ms']:8.2f} ms  floor {r['floor_ms']:8.2f}  "
                      f"x{r['ratio']:.3f}  predicted {r['predicted_ms']:8.2f}  resident units {r['resident_units']}  "
                      f"slots {r['slots']}  link {r['link_gbs']:.1f} GB/s  weights+act {r['peak_gb']:.2f} GB  "
                      f"equal {r['equal']}", flush=True)
                del model, streamer, out
                release()
        if seq == seqs[0] and residents:
            rows.append(side_stream_row(master, x, seq, steps, residents[0], expected))
        if seq in compile_seqs:
            rows.extend(compiled_rows(master, x, seq, steps, residents, bandwidth))
        del master
        gc.collect()
    if train_policies:
        rows.extend(training_rows(steps, residents, train_policies, os.environ.get("BENCH_TRAIN_COMPILE", "1") == "1",
                                  bandwidth, d2h))
    graph_seqs = env_list("BENCH_GRAPH_SEQS", "128,512,2048", int)
    if graph_seqs:
        rows.extend(graph_rows(layers, graph_seqs, steps, env_list("BENCH_GRAPH_RESIDENT", "0.3,0", float), bandwidth))
    if card_gb:
        rows.extend(small_card_rows(card_gb, int(os.environ.get("BENCH_CARD_LAYERS", "112")), steps, bandwidth))
    magi_seqs = env_list("BENCH_MAGI_SEQS", "1024,4096,16384", int)
    if magi_seqs and os.environ.get("BENCH_MAGI", "1") == "1":
        rows.extend(magi_rows(layers, magi_seqs, steps, residents, bandwidth))
    print("\n| seq | resident | policy | step ms | floor ms | step / floor | predicted ms | units kept | slots | GPU GB | equal |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['seq']} | {r['resident']} | {r['policy']} | {r['step_ms']:.2f} | {r['floor_ms']:.2f} | "
              f"{r['ratio']:.3f} | {r.get('predicted_ms', float('nan')):.2f} | {r.get('resident_units', '-')} | "
              f"{r.get('slots', '-')} | {r['peak_gb']:.2f} | {r['equal']} |")
    # MagiCompiler's best within the budget: HEURISTIC keeps more than its ratio where it judges a copy
    # too slow (everything at 1024 tokens); those rows run a different problem and are shown apart.
    print("\n| seq | resident | lathe.compile ms | MagiCompiler best within the budget, ms | lathe / MagiCompiler | "
          "MagiCompiler over the budget |")
    print("|---:|---:|---:|---:|---:|---|")
    for seq in sorted({r["seq"] for r in rows}):
        for resident in residents:
            at = [r for r in rows if r["seq"] == seq and r["resident"] == resident]
            ours = [r for r in at if r["policy"].startswith("lathe.compile")]
            theirs = [r for r in at if r["policy"].startswith("MagiCompiler")]
            within = [r for r in theirs if r["kept_fraction"] <= resident + 1e-6]
            over = ", ".join(f"{r['policy'].removeprefix('MagiCompiler ')} {r['step_ms']:.2f} ms keeping "
                             f"{r['kept_fraction']:.0%}"
                             for r in theirs if r not in within)
            if ours and within:
                best = min(within, key=lambda r: r["step_ms"])
                print(f"| {seq} | {resident} | {ours[0]['step_ms']:.2f} | {best['step_ms']:.2f} ({best['policy'].removeprefix('MagiCompiler ')}) | "
                      f"{ours[0]['step_ms'] / best['step_ms']:.3f} | {over} |")
    out_dir = os.environ.get("OUT")
    if out_dir:
        with open(os.path.join(out_dir, "offload.jsonl"), "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()

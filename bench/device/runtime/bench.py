"""Four Llama-3-8B-dims decoder layers, B=2, T=4096, bf16, forward + loss + backward (the shape of
../shared/anchors/README.md §2): measured peak and step time of eager, torch.compile under
activation_memory_budget, and lathe.compile under its policies, in one run, with the planner's
predicted peak and step beside each lathe point and every variant's gradients against eager's.

Peak = max_memory_allocated over one step minus memory_allocated before it (grads None), as the
anchors measure it; step = median of --steps steps timed with CUDA events after 3 warm-ups, each
started on an idle device (as the anchors time it), and "b2b": the mean of as many steps run back to
back, the host launching a step while the device still runs the last.
MagiCompiler (../shared/anchors, carried as .device/magi by prepare_deps.sh) runs as its anchor did:
@magi_compile(dynamic_arg_dims={"x": 0}) on the layer class, HEURISTIC recompute. Its CompileConfig
parses sys.argv, so this script takes its options from the environment: BENCH_STEPS (10),
BENCH_TORCH_BUDGETS ("1.0,0.5"; "1.0+nomix": that budget compiled with Inductor's mix-order
reductions off), BENCH_LATHE ("heuristic,budget:7GiB,...": policy[:memory][+offload][+nomix],
"+offload" planning activation offload with it, "+nomix" as above), BENCH_MAGI (1),
BENCH_TRACE_DIR (unset: a run folder per lathe variant under it), BENCH_PROFILE_STEPS (0: with
BENCH_TRACE_DIR, that many steps of each lathe variant recorded by torch.profiler into its run
folder as step.trace.json.gz, for
`lathe measure LOG --graph 0/0:lathe_joint_graph --trace TRACE`: the kernels' device time on the
joint graph's nodes beside the planner's estimate), BENCH_SNAPSHOT (0: with BENCH_TRACE_DIR, "1"
records one more step of each lathe variant under the allocator's memory history into its run
folder as step.snapshot.pickle, for planned_vs_snapshot.py).
Prints one table; writes every row to $OUT/runtime.jsonl as it is measured.
"""

import contextlib
import math
import os
import pickle
import statistics
import time
import traceback

import torch
import torch._inductor.config
import torch.nn as nn
import torch.nn.functional as F

import lathe
from rows import GiB, Rows, planner_fields, predicted_peak_above_before



class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        h = x.float()
        return (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * self.weight


def rope(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated * sin


def causal_attention(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)


class Layer(nn.Module):
    attention = staticmethod(causal_attention)  # a subclass may call it as a custom op

    def __init__(self, hidden=4096, heads=32, kv_heads=8, ffn=14336):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, hidden // heads
        self.norm1, self.norm2 = RMSNorm(hidden), RMSNorm(hidden)
        self.q = nn.Linear(hidden, hidden, bias=False)
        self.k = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.v = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.o = nn.Linear(hidden, hidden, bias=False)
        self.gate = nn.Linear(hidden, ffn, bias=False)
        self.up = nn.Linear(hidden, ffn, bias=False)
        self.down = nn.Linear(ffn, hidden, bias=False)

    def forward(self, x, cos, sin):
        b, t, d = x.shape
        h = self.norm1(x)
        q = self.q(h).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        a = self.attention(q, k, v)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Stack(nn.Module):
    def __init__(self, layers=4, seq=4096, head_dim=128, theta=5e5, layer=Layer):
        super().__init__()
        self.layers = nn.ModuleList(layer() for _ in range(layers))
        inv = 1.0 / theta ** (torch.arange(0, head_dim, 2).float() / head_dim)
        angles = torch.outer(torch.arange(seq).float(), inv)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos()[None, None], persistent=False)
        self.register_buffer("sin", angles.sin()[None, None], persistent=False)

    def forward(self, x):
        t = x.shape[1]  # any length up to the one built for (the CUDA-graph rows of bench/device/offload)
        cos, sin = self.cos[:, :, :t].to(x.dtype), self.sin[:, :, :t].to(x.dtype)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return x


def inductor_config(flags):
    """Inductor's configuration for a variant's flags: "nomix" turns its mix-order reductions off."""
    if "nomix" in flags:
        return torch._inductor.config.patch({"triton.mix_order_reduction": False})
    return contextlib.nullcontext()


def step(fn, model, x):
    model.zero_grad(set_to_none=True)
    x.grad = None
    loss = fn(x).float().pow(2).mean()
    loss.backward()
    return loss


def settle(fn, model, x):
    """Three warm-up steps, then the state a measured step starts from: no gradients held, peak
    statistics reset. Returns the memory allocated then (weights and input)."""
    for _ in range(3):
        step(fn, model, x)
    torch.cuda.synchronize()
    model.zero_grad(set_to_none=True)
    x.grad = None
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    return before


def measure(fn, model, x, steps):
    """The step's bytes before it and peak, the most the process reserved, each step's time with the
    device idle at its start (synchronized), the mean step of as many run back to back, and the loss."""
    before = settle(fn, model, x)
    loss = step(fn, model, x)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - before
    # What the process holds: blocks freed with record_stream count until their copies have ended
    # (max_memory_allocated drops them at the free). The cache was emptied before the variant.
    reserved = torch.cuda.max_memory_reserved()
    times = []
    for _ in range(steps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step(fn, model, x)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    # The same steps back to back, with no synchronization between them: the host's launches of one
    # step overlap the device's work of the last, as in a training loop.
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(steps):
        step(fn, model, x)
    end.record()
    torch.cuda.synchronize()
    return before, peak, reserved, times, start.elapsed_time(end) / steps, loss.item()


def grad_error(model, x, reference):
    worst = 0.0
    for (name, p), ref in zip(list(model.named_parameters()) + [("x", x)], reference):
        g = (x.grad if name == "x" else p.grad).float().cpu()
        worst = max(worst, ((g - ref).norm() / ref.norm().clamp_min(1e-30)).item())
    return worst


def main():
    steps = int(os.environ.get("BENCH_STEPS", "10"))
    torch_budgets = os.environ.get("BENCH_TORCH_BUDGETS", "1.0,0.5")
    lathe_specs = os.environ.get("BENCH_LATHE", "heuristic,budget:7GiB,budget:6GiB,budget:5GiB,budget:4.5GiB")
    with_magi = os.environ.get("BENCH_MAGI", "1") == "1"
    out_dir = os.environ.get("OUT", "/tmp")
    trace_root = os.environ.get("BENCH_TRACE_DIR")  # a run folder per lathe variant (capture, plans, profile)
    profile_steps = int(os.environ.get("BENCH_PROFILE_STEPS", "0"))
    snapshot = os.environ.get("BENCH_SNAPSHOT", "0") == "1"
    rows_path = os.path.join(out_dir, "runtime.jsonl")

    torch.manual_seed(0)
    model = Stack().cuda().to(torch.bfloat16)
    x = torch.randn(2, 4096, 4096, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    results = Rows(rows_path)
    record, rows = results.record, results.rows

    step(model, model, x)
    # Kept on the host so that "before" is the weights and the input only, as in the anchors.
    reference = [p.grad.float().cpu() for p in model.parameters()] + [x.grad.float().cpu()]
    model.zero_grad(set_to_none=True)
    x.grad = None

    def profile(fn, module, folder):
        from torch.profiler import ProfilerActivity
        with torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(profile_steps):
                step(fn, module, x)
            torch.cuda.synchronize()
        prof.export_chrome_trace(os.path.join(folder, "step.trace.json.gz"))

    def record_snapshot(fn, module, path):
        """One more step recorded as offload_snapshot.py records it, in this process (where the
        variants before have run), written to `path`: its peak above "before"."""
        from offload_snapshot import record_step
        _, peak, snapshot = record_step(fn, module, x)
        with open(path, "wb") as f:
            pickle.dump(snapshot, f)
        return peak

    def run(name, make, module=model, trace_dir=None):
        torch._dynamo.reset()
        torch.cuda.empty_cache()
        try:
            t0 = time.time()
            fn = make()
            step(fn, module, x)  # compiles
            compile_s = time.time() - t0
            before, peak, reserved, times, back_to_back_ms, loss = measure(fn, module, x, steps)
            row = {"variant": name, "before_gib": before / GiB, "peak_gib": peak / GiB, "reserved_gib": reserved / GiB, "step_ms": statistics.median(times),
                   "steps_ms": times, "back_to_back_step_ms": back_to_back_ms,
                   "loss": loss, "grad_rel_err": grad_error(module, x, reference), "compile_s": compile_s}
            row.update(planner_fields(fn))
            if trace_dir and profile_steps > 0:
                profile(fn, module, trace_dir)
                row["profiled_steps"] = profile_steps
            if trace_dir and snapshot:
                path = os.path.join(trace_dir, "step.snapshot.pickle")
                row["snapshot_peak_gib"] = record_snapshot(fn, module, path) / GiB
            record(row)
        except Exception as error:  # one failing variant must not hide the others
            traceback.print_exc()
            record({"variant": name, "error": f"{type(error).__name__}: {str(error)[:300]}"})

    run("eager", lambda: model)
    for spec in [b for b in torch_budgets.split(",") if b]:
        budget, *flags = spec.split("+")
        def make(budget=float(budget)):
            compiled = torch.compile(model)
            def fn(inp):
                with torch._functorch.config.patch(activation_memory_budget=budget):
                    return compiled(inp)
            return fn
        with inductor_config(flags):
            run(f"torch.compile budget={float(budget)}{' nomix' if 'nomix' in flags else ''}", make)
    for spec in [s for s in lathe_specs.split(",") if s]:
        # "budget:4GiB+offload+nomix": the policy, its memory, activation offload, and Inductor's
        # mix-order reductions off.
        planned, *flags = spec.split("+")
        policy, _, memory = planned.partition(":")
        trace_dir = os.path.join(trace_root, spec.replace(":", "_").replace("+", "_")) if trace_root else None
        with inductor_config(flags):
            run(f"lathe {spec}", lambda policy=policy, memory=memory, flags=flags, trace_dir=trace_dir: lathe.compile(
                lambda inp: model(inp), policy=policy, memory=memory or None, activation_offload="offload" in flags,
                trace_dir=trace_dir), trace_dir=trace_dir)

    # Last: MagiCompiler changes torch's global configuration when it compiles.
    if with_magi:
        from magi_compiler import magi_compile

        magi_layer = magi_compile(type("MagiLayer", (Layer,), {}), dynamic_arg_dims={"x": 0})
        magi_model = Stack()
        magi_model.layers = nn.ModuleList(magi_layer() for _ in range(len(model.layers)))
        magi_model = magi_model.cuda().to(torch.bfloat16)
        magi_model.load_state_dict(model.state_dict())
        run("MagiCompiler layer class", lambda: magi_model, module=magi_model)
        del magi_model

    print()
    print(f"{'variant':34} {'peak GiB':>9} {'reserved':>9} {'step ms':>8} {'b2b ms':>7} {'pred GiB':>9} {'pred ms':>8} {'grad err':>9} {'compile s':>9}")
    for r in rows:
        if "error" in r:
            print(f"{r['variant']:34} {r['error'][:90]}")
            continue
        predicted = predicted_peak_above_before(r)
        pred_peak = "-" if predicted is None else f"{predicted:.3f}"
        pred_ms = f"{r['predicted_step_ms']:.1f}" if "predicted_step_ms" in r else "-"
        print(f"{r['variant']:34} {r['peak_gib']:9.3f} {r['reserved_gib']:9.3f} {r['step_ms']:8.1f} {r['back_to_back_step_ms']:7.1f} {pred_peak:>9} {pred_ms:>8} "
              f"{r['grad_rel_err']:9.2e} {r['compile_s']:9.1f}")


if __name__ == "__main__":
    main()

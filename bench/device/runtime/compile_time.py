"""First-compile time of lathe.compile against torch.compile, each compile in a fresh process with
empty Inductor and Triton caches (the issue's goal: lathe adds at most 10% to torch.compile's
first compile). In one process the first variant would pay for imports, CUDA and the compile
workers that the later ones reuse (bench.py's compile_s column): here every compile starts cold.

Compile time = wall time of the first step (Dynamo, AOTAutograd, lathe's planner, Inductor, the
kernels' compile, one step) minus the median of three later steps. Variants run round-robin, so a
drift of the machine touches them all alike. Options from the environment: BENCH_MODELS
("stack,hf": bench.py's four layers and hf_llama.py's llama3_8b_4l config), BENCH_REPEATS (3),
BENCH_STACK_VARIANTS and BENCH_HF_VARIANTS (comma-separated: "torch", or lathe's POLICY[:MEMORY]
[+offload] on the stack, POLICY[:MEMORY][:none|:all] on the HF model as hf_llama.py spells them),
BENCH_TINY=1 (tiny models on the CPU, to check the script). Prints one table; writes every compile
to $OUT/compile_time.jsonl.
  device run, carry [".device/deps"]:  BENCH_SCRIPT=compile_time.py bash bench/device/runtime/run.sh
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from rows import Rows

STACK_VARIANTS = "torch,heuristic,budget,budget:5GiB,budget:4.8GiB+offload"
HF_VARIANTS = "torch,budget,heuristic:all"


def build(model_name, tiny):
    """(module or function to compile, one training step of a compiled one, the CUDA sync or None)."""
    import torch

    cuda = torch.cuda.is_available()
    device = "cuda" if cuda else "cpu"
    dtype = torch.float32 if tiny else torch.bfloat16
    torch.manual_seed(0)
    if model_name == "stack":
        import bench

        if tiny:
            model = bench.Stack(layers=2, seq=64, head_dim=16, layer=lambda: bench.Layer(64, 4, 2, 128))
            x = torch.randn(2, 64, 64)
        else:
            model, x = bench.Stack(), torch.randn(2, 4096, 4096)
        model = model.to(device, dtype)
        x = x.to(device, dtype).requires_grad_()
        return model, (lambda fn: bench.step(fn, model, x)), cuda
    import hf_llama
    import transformers

    cfg = hf_llama.config(tiny)
    model = transformers.LlamaForCausalLM(cfg).to(dtype).to(device).train()
    batch, seq = (2, 64) if tiny else (2, 2048)
    ids = torch.randint(0, cfg.vocab_size, (batch, seq), device=device)
    return model, (lambda fn: hf_llama.step(fn, ids)), cuda


def compile_once(model_name, spec, tiny):
    """One cold compile in this process; returns its row."""
    import torch

    import lathe
    from rows import planner_fields

    model, train_step, cuda = build(model_name, tiny)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    train_step(model)  # eager once: CUDA's libraries loaded before the clock starts, for every variant
    sync()
    start = time.perf_counter()
    if spec == "torch":
        compiled = torch.compile(model)
    elif model_name == "stack":
        planned, _, offload = spec.partition("+")
        policy, _, memory = planned.partition(":")
        compiled = lathe.compile(lambda inp: model(inp), policy=policy, memory=memory or None,
                                 activation_offload=offload == "offload")
    else:
        parts = spec.split(":")
        rewrites = parts.pop() if len(parts) > 1 and parts[-1] in ("none", "all") else None
        compiled = lathe.compile(model, policy=parts[0], memory=parts[1] if len(parts) > 1 else None,
                                 rewrites=rewrites)
    train_step(compiled)
    sync()
    first = time.perf_counter() - start
    steps = []
    for _ in range(3):
        t = time.perf_counter()
        train_step(compiled)
        sync()
        steps.append(time.perf_counter() - t)
    row = {"model": model_name, "variant": spec, "first_step_s": first, "step_s": statistics.median(steps),
           "compile_s": first - statistics.median(steps)}
    row.update({k: v for k, v in planner_fields(compiled).items() if k in ("planned_graphs", "planning_s", "saved")})
    # Where the time went, by torch's own timers (nested: a phase includes the ones it calls).
    from torch._dynamo.utils import compilation_time_metrics

    row["phases_s"] = {name: round(sum(times), 4) for name, times in compilation_time_metrics.items()}
    return row


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--one":
        print(json.dumps(compile_once(sys.argv[2], sys.argv[3], os.environ.get("BENCH_TINY") == "1")))
        return
    repeats = int(os.environ.get("BENCH_REPEATS", "3"))
    variants = {"stack": os.environ.get("BENCH_STACK_VARIANTS", STACK_VARIANTS).split(","),
                "hf": os.environ.get("BENCH_HF_VARIANTS", HF_VARIANTS).split(",")}
    models = os.environ.get("BENCH_MODELS", "stack,hf").split(",")
    results = Rows(os.path.join(os.environ.get("OUT", "/tmp"), "compile_time.jsonl"))
    for model_name in models:
        for repeat in range(repeats):
            for spec in variants[model_name]:
                with tempfile.TemporaryDirectory() as cache:
                    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(cache, "inductor"),
                               TRITON_CACHE_DIR=os.path.join(cache, "triton"), TORCHINDUCTOR_FX_GRAPH_CACHE="0",
                               TORCHINDUCTOR_AUTOGRAD_CACHE="0")
                    done = subprocess.run([sys.executable, __file__, "--one", model_name, spec], env=env,
                                          capture_output=True, text=True, cwd=os.path.dirname(os.path.abspath(__file__)))
                if done.returncode != 0:
                    results.record({"model": model_name, "variant": spec, "repeat": repeat,
                                    "error": done.stderr.strip().splitlines()[-1][:300] if done.stderr.strip() else "failed"})
                    continue
                results.record(dict(json.loads(done.stdout.strip().splitlines()[-1]), repeat=repeat))

    print()
    # partition: torch's min-cut partitioner or lathe's (its planner included); fw/bw: Inductor on the
    # forward and the backward graph.
    phase_columns = {"partition s": ("min_cut_rematerialization_partition", "LathePartitioner"),
                     "fw s": ("compile_fx.<locals>.fw_compiler_base",), "bw s": ("compile_fx.<locals>.bw_compiler",)}
    print(f"{'model':6} {'variant':22} {'compile s (median)':>18} {'× torch.compile':>15} {'planning s':>10}"
          + "".join(f" {name:>11}" for name in phase_columns) + f" {'runs':>5}")
    for model_name in models:
        def median_of(spec, key):
            values = [r[key] for r in results.rows if r["model"] == model_name and r["variant"] == spec and key in r]
            return (statistics.median(values), len(values)) if values else (None, 0)

        torch_s, _ = median_of("torch", "compile_s")
        for spec in variants[model_name]:
            seconds, runs = median_of(spec, "compile_s")
            if seconds is None:
                print(f"{model_name:6} {spec:22} {'failed':>18}")
                continue
            ratio = f"{seconds / torch_s:.3f}" if torch_s else "-"
            planning, _ = median_of(spec, "planning_s")
            planning = "-" if planning is None else f"{planning:.3f}"
            phases = []
            for names in phase_columns.values():
                values = [sum(r["phases_s"].get(n, 0.0) for n in names) for r in results.rows
                          if r["model"] == model_name and r["variant"] == spec and "phases_s" in r]
                phases.append(f" {statistics.median(values):11.2f}" if values else f" {'-':>11}")
            print(f"{model_name:6} {spec:22} {seconds:18.2f} {ratio:>15} {planning:>10}{''.join(phases)} {runs:>5}")


if __name__ == "__main__":
    main()

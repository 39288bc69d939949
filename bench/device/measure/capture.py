"""Training captures taken on the GPU, each with its measurements and, on request, a torch.profiler
trace of the same compiled program: for each Hugging Face config below (random weights, bf16), one
process compiles the model with torch.compile and writes its TORCH_TRACE, then times the step as
../shared/anchors §1 does (before = memory_allocated with grads None, peak = max_memory_allocated
over one step, median step of 10 after 3 warm-ups; and the mean of 10 steps run back to back,
without synchronising between them). With PROFILE_STEPS=N it then records N steps
with torch.profiler (CPU and CUDA activity) and exports the Chrome trace.

Sets: "heldout" (configs no test has seen), "shared" (the configs of ../shared/samples/captures'
training captures: the trace maps onto this run's capture, whose output code names the kernels).
Usage (device): [PROFILE_STEPS=2] python3 bench/device/measure/capture.py OUT_DIR [SET]
Writes OUT_DIR/<name>.log.gz (the capture), OUT_DIR/<name>.trace.json.gz (with PROFILE_STEPS),
OUT_DIR/captures.jsonl, and prints one table.
  lathe plan OUT_DIR/<name>.log.gz                                  the planner's figures
  lathe measure OUT_DIR/<name>.log.gz --trace OUT_DIR/<name>.trace.json.gz -o profile.json
"""
import gzip
import glob
import json
import os
import shutil
import subprocess
import sys

SETS = {
    # name: (config class, config kwargs, batch, sequence)
    "heldout": {
        "qwen2_2l": ("Qwen2Config", dict(vocab_size=151936, hidden_size=2048, intermediate_size=11008,
                                         num_hidden_layers=2, num_attention_heads=16, num_key_value_heads=2), 1, 2048),
        "mistral_2l": ("MistralConfig", dict(vocab_size=32768, hidden_size=4096, intermediate_size=14336,
                                             num_hidden_layers=2, num_attention_heads=32, num_key_value_heads=8), 2, 2048),
        "phi3_2l": ("Phi3Config", dict(vocab_size=32064, hidden_size=3072, intermediate_size=8192,
                                       num_hidden_layers=2, num_attention_heads=32, num_key_value_heads=32), 2, 2048),
    },
    "shared": {
        "llama3_8b_2l_train": ("LlamaConfig", dict(vocab_size=128256, hidden_size=4096, intermediate_size=14336,
                                                   num_hidden_layers=2, num_attention_heads=32, num_key_value_heads=8,
                                                   rope_theta=500000.0), 1, 2048),
        "mixtral_2l_train": ("MixtralConfig", dict(vocab_size=32000, hidden_size=1024, intermediate_size=3584,
                                                   num_hidden_layers=2, num_attention_heads=16, num_key_value_heads=8,
                                                   num_local_experts=8, num_experts_per_tok=2), 1, 2048),
        "gpt2_train": ("GPT2Config", dict(), 1, 1024),
    },
}
MODELS = {name: spec for models in SETS.values() for name, spec in models.items()}


def measure(name: str, out_dir: str) -> None:
    trace_dir = os.path.join(out_dir, "trace_" + name)
    os.environ["TORCH_TRACE"] = trace_dir
    import torch
    import transformers
    cls, kwargs, batch, seq = MODELS[name]
    if cls == "GPT2Config":
        config = transformers.GPT2Config(n_positions=max(seq, 1024), attn_implementation="sdpa", **kwargs)
    else:
        config = getattr(transformers, cls)(max_position_embeddings=seq, attn_implementation="sdpa", **kwargs)
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(config).to("cuda", torch.bfloat16).train()
    compiled = torch.compile(model)
    ids = torch.randint(0, config.vocab_size, (batch, seq), device="cuda")

    def step():
        model.zero_grad(set_to_none=True)
        compiled(input_ids=ids, labels=ids).loss.backward()

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    model.zero_grad(set_to_none=True)
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    compiled(input_ids=ids, labels=ids).loss.backward()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    times = []
    for _ in range(10):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    # Back to back, no synchronisation between steps: the host's work before a step's first kernel
    # then overlaps the previous step's GPU tail.
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        step()
    end.record()
    torch.cuda.synchronize()
    row = dict(name=name, device=torch.cuda.get_device_name(), torch=torch.__version__, batch=batch, seq=seq,
               before=before, peak=peak, delta=peak - before, step_ms=times[len(times) // 2],
               back_to_back_step_ms=start.elapsed_time(end) / 10)
    profile_steps = int(os.environ.get("PROFILE_STEPS", "0"))
    if profile_steps > 0:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(profile_steps):
                step()
            torch.cuda.synchronize()
        prof.export_chrome_trace(os.path.join(out_dir, name + ".trace.json.gz"))
        row["profiled_steps"] = profile_steps
    print(json.dumps(row), flush=True)


def main() -> None:
    out_dir = sys.argv[1]
    which = sys.argv[2] if len(sys.argv) > 2 else "heldout"
    if which in MODELS:
        measure(which, out_dir)
        return
    rows = []
    for name in SETS[which]:
        run = subprocess.run([sys.executable, __file__, out_dir, name], capture_output=True, text=True)
        lines = [l for l in run.stdout.splitlines() if l.startswith("{")]
        if run.returncode != 0 or not lines:
            print(f"{name}: failed (rc {run.returncode})\n{run.stderr[-3000:]}", flush=True)
            continue
        rows.append(json.loads(lines[-1]))
        logs = sorted(glob.glob(os.path.join(out_dir, "trace_" + name, "*.log")))
        if logs:
            with open(logs[0], "rb") as src, gzip.open(os.path.join(out_dir, name + ".log.gz"), "wb") as dst:
                shutil.copyfileobj(src, dst)
        shutil.rmtree(os.path.join(out_dir, "trace_" + name), ignore_errors=True)
    with open(os.path.join(out_dir, "captures.jsonl"), "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    G = 2**30
    print(f"{'model':<20} {'BxT':>7} {'before GiB':>11} {'peak GiB':>9} {'delta GiB':>10} {'step ms':>8} "
          f"{'back-to-back ms':>16}  device")
    for r in rows:
        print(f"{r['name']:<20} {r['batch']}x{r['seq']:<5} {r['before']/G:>11.3f} {r['peak']/G:>9.3f} "
              f"{r['delta']/G:>10.3f} {r['step_ms']:>8.2f} {r['back_to_back_step_ms']:>16.2f}  {r['device']}")


if __name__ == "__main__":
    main()

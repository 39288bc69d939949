"""The Hugging Face llama3_8b_4l training config of ../shared/anchors/README.md §1 (LlamaForCausalLM,
Llama-3-8B dims, 4 layers, vocab 128256, B=2, T=2048, bf16, random weights; one step = forward with
labels + loss + backward, no optimizer): measured peak and step time of eager, torch.compile and
lathe.compile with and without the memory rewrites (runtime/python/lathe/_rewrites.py), in one run,
with the planner's predicted peak and step beside each lathe point and every variant's gradients
against eager's.

Peak and step as bench.py measures them (peak = max allocated over one step minus allocated before
it, grads None; step = median of BENCH_STEPS CUDA-event-timed steps after 3 warm-ups). Options from
the environment: BENCH_STEPS (10), BENCH_LATHE ("heuristic:none,heuristic,heuristic:all,..."; a spec
is POLICY[:MEMORY][:none|:all]: ":none" turns the rewrites off, ":all" adds logits_without_grad to the
default ones), BENCH_TINY=1 (a tiny config on the
CPU, to check the script itself: peaks are not measured there). Prints one table; writes every row
to $OUT/hf_llama.jsonl as it is measured.
  device run, carry [".device/deps"]:  BENCH_SCRIPT=hf_llama.py bash bench/device/runtime/run.sh
"""

import os
import statistics
import time
import traceback

import torch
import transformers

import lathe
from rows import GiB, Rows, planner_fields, predicted_peak_above_before



def config(tiny):
    if tiny:
        return transformers.LlamaConfig(vocab_size=4096, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                                        attn_implementation="sdpa")
    return transformers.LlamaConfig(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=4,
                                    num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=8192,
                                    rope_theta=500000.0, attn_implementation="sdpa")


class Device:
    """CUDA when there is one (peaks and CUDA-event times), else the CPU (times only)."""

    def __init__(self):
        self.cuda = torch.cuda.is_available()
        self.name = "cuda" if self.cuda else "cpu"

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def allocated(self):
        return torch.cuda.memory_allocated() if self.cuda else None

    def reset_peak(self):
        if self.cuda:
            torch.cuda.reset_peak_memory_stats()

    def peak(self):
        return torch.cuda.max_memory_allocated() if self.cuda else None

    def timed(self, fn):
        if not self.cuda:
            start = time.perf_counter()
            fn()
            return (time.perf_counter() - start) * 1e3
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end)


def step(model, ids):
    model.zero_grad(set_to_none=True)
    loss = model(input_ids=ids, labels=ids).loss  # the output (and its logits) dies here, as in training
    loss.backward()
    return loss


def measure(device, model, ids, steps):
    for _ in range(3):
        step(model, ids)
    device.sync()
    model.zero_grad(set_to_none=True)
    before = device.allocated()
    device.reset_peak()
    loss = step(model, ids)
    device.sync()
    peak = device.peak() - before if device.cuda else None
    times = [device.timed(lambda: step(model, ids)) for _ in range(steps)]
    return before, peak, statistics.median(times), loss.item()


def grad_error(model, reference):
    worst = 0.0
    for (name, p), ref in zip(model.named_parameters(), reference):
        g = p.grad.float().cpu()
        worst = max(worst, ((g - ref).norm() / ref.norm().clamp_min(1e-30)).item())
    return worst


def main():
    tiny = os.environ.get("BENCH_TINY") == "1"
    steps = int(os.environ.get("BENCH_STEPS", "3" if tiny else "10"))
    # Budgets count the weights and ids held before the step (3.6 GiB at the full size).
    specs = os.environ.get("BENCH_LATHE", "heuristic:none,heuristic,heuristic:all,budget:7GiB:all,budget:6GiB:all")
    out_dir = os.environ.get("OUT", "/tmp")
    rows_path = os.path.join(out_dir, "hf_llama.jsonl")
    device = Device()
    dtype = torch.float32 if tiny else torch.bfloat16
    cfg = config(tiny)
    torch.manual_seed(0)
    state = transformers.LlamaForCausalLM(cfg).to(dtype).state_dict()
    batch, seq = (2, 64) if tiny else (2, 2048)
    ids = torch.randint(0, cfg.vocab_size, (batch, seq), generator=torch.Generator().manual_seed(1)).to(device.name)

    def fresh_model():
        model = transformers.LlamaForCausalLM(cfg).to(dtype)
        model.load_state_dict(state)
        return model.to(device.name).train()

    results = Rows(rows_path)
    record, rows = results.record, results.rows

    eager = fresh_model()
    step(eager, ids)
    reference = [p.grad.float().cpu() for p in eager.parameters()]  # on the host: "before" stays weights and ids
    del eager

    def run(name, make):
        torch._dynamo.reset()
        if device.cuda:
            torch.cuda.empty_cache()
        try:
            t0 = time.time()
            model = make()
            step(model, ids)  # compiles
            compile_s = time.time() - t0
            before, peak, ms, loss = measure(device, model, ids, steps)
            row = {"variant": name, "before_gib": before / GiB if before is not None else None,
                   "peak_gib": peak / GiB if peak is not None else None, "step_ms": ms, "loss": loss,
                   "grad_rel_err": grad_error(model, reference), "compile_s": compile_s}
            row.update(planner_fields(model))
            record(row)
            del model
        except Exception as error:  # one failing variant must not hide the others
            traceback.print_exc()
            record({"variant": name, "error": f"{type(error).__name__}: {str(error)[:300]}"})

    run("eager", fresh_model)
    run("torch.compile", lambda: torch.compile(fresh_model()))
    for spec in [s for s in specs.split(",") if s]:
        parts = spec.split(":")
        rewrites = parts.pop() if len(parts) > 1 and parts[-1] in ("none", "all") else None
        policy, memory = parts[0], (parts[1] if len(parts) > 1 else None)
        run(f"lathe {spec}", lambda policy=policy, memory=memory, rewrites=rewrites: lathe.compile(
            fresh_model(), policy=policy, memory=memory, rewrites=rewrites))

    print()
    print(f"{'variant':28} {'peak GiB':>9} {'step ms':>8} {'pred GiB':>9} {'pred ms':>8} {'grad err':>9} {'compile s':>9}")
    for r in rows:
        if "error" in r:
            print(f"{r['variant']:28} {r['error'][:90]}")
            continue
        peak = f"{r['peak_gib']:.3f}" if r["peak_gib"] is not None else "-"
        predicted = predicted_peak_above_before(r)
        predicted = "-" if predicted is None else f"{predicted:.3f}"
        pred_ms = f"{r['predicted_step_ms']:.1f}" if "predicted_step_ms" in r else "-"
        print(f"{r['variant']:28} {peak:>9} {r['step_ms']:8.1f} {predicted:>9} {pred_ms:>8} "
              f"{r['grad_rel_err']:9.2e} {r['compile_s']:9.1f}")


if __name__ == "__main__":
    main()

"""Where the memory rewrites' time goes (runtime/python/lathe/_rewrites.py): their ops alone at the
llama3_8b_4l shape (rows B*T=4096, hidden 4096, vocab 128256, bf16) against what torch.compile
makes of the code they replace: the loss and its backward from h (lathe::linear_cross_entropy, four
lm_head matmuls) and from logits (lathe::cross_entropy after the lm_head linear, three), and the
embedding gradient. For each: the median time of forward + backward (CUDA events, after 3
warm-ups), the device time its kernels add up to (a time much longer than its kernels is waiting on
the host), and its longest kernels, from one run under torch.profiler. Options: BENCH_STEPS (10),
BENCH_TINY=1 (tiny shapes on the CPU, to check the script itself). Prints the kernels of each and
writes every row to $OUT/loss_kernels.jsonl.
  device run, carry [".device/deps"]:  BENCH_SCRIPT=loss_kernels.py bash bench/device/runtime/run.sh
"""

import os
import statistics

import torch
import torch.nn.functional as F

from lathe import _rewrites
from lathe._profile import _kernel_times
from hf_llama import Device
from rows import Rows

TOP = 12


def profile(device, fn, steps):
    for _ in range(3):
        fn()
    device.sync()
    times = [device.timed(fn) for _ in range(steps)]
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.cuda:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as prof:
        fn()
        device.sync()
    kernels = _kernel_times(prof, device.cuda)  # longest first, as lathe.step(kernels=True) records them
    return {"step_ms": statistics.median(times), "kernel_ms": sum(k["seconds"] for k in kernels) * 1e3,
            "launches": sum(k["calls"] for k in kernels),
            "top": [{"name": k["name"][:110], "calls": k["calls"], "ms": k["seconds"] * 1e3} for k in kernels[:TOP]]}


def main():
    tiny = os.environ.get("BENCH_TINY") == "1"
    steps = int(os.environ.get("BENCH_STEPS", "3" if tiny else "10"))
    device = Device()
    results = Rows(os.path.join(os.environ.get("OUT", "/tmp"), "loss_kernels.jsonl"))
    dtype = torch.float32 if tiny else torch.bfloat16
    rows, hidden, vocab = (128, 64, 4096) if tiny else (4096, 4096, 128256)
    gen = torch.Generator().manual_seed(0)
    h = (torch.randn(rows, hidden, generator=gen) * 0.5).to(dtype).to(device.name).requires_grad_()
    weight = (torch.randn(vocab, hidden, generator=gen) * 0.02).to(dtype).to(device.name).requires_grad_()
    labels = torch.randint(0, vocab, (rows,), generator=gen).to(device.name)

    def reference_loss():
        F.cross_entropy(F.linear(h, weight).float(), labels).backward()

    compiled_reference = torch.compile(reference_loss)

    def lathe_loss():
        loss, _ = _rewrites.linear_cross_entropy(h, weight, labels, -100, True)
        loss.backward()

    def lathe_loss_from_logits():
        loss, _ = _rewrites.cross_entropy(F.linear(h, weight), labels, -100, True)
        loss.backward()

    def report(name, fn):
        row = {"variant": name, **profile(device, fn, steps)}
        results.record(row)

    report("loss: torch.compile(cross_entropy(linear))", compiled_reference)
    report("loss: lathe::linear_cross_entropy", lathe_loss)
    report("loss: linear, then lathe::cross_entropy", lathe_loss_from_logits)

    ids = torch.randint(0, vocab, (rows,), generator=gen).to(device.name)
    table = torch.randn(vocab, hidden, generator=gen).to(dtype).to(device.name).requires_grad_()
    grad = torch.randn(rows, hidden, generator=gen).to(dtype).to(device.name)
    report("embedding grad: aten", lambda: torch.ops.aten.embedding_dense_backward(grad, ids, vocab, -1, False))
    report("embedding grad: lathe::embedding_backward", lambda: _rewrites.embedding_backward(grad, ids, vocab, -1))

    for r in results.rows:
        print(f"\n{r['variant']}: step {r['step_ms']:.2f} ms, kernels {r['kernel_ms']:.2f} ms in {r['launches']} launches")
        for k in r["top"]:
            print(f"  {k['ms']:9.3f} ms {k['calls']:5d}x  {k['name']}")


if __name__ == "__main__":
    main()

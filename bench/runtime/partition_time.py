"""Planning cost against torch's own partitioner, on the joint graph of one Llama-3-8B-dims decoder
layer (the model of bench/device/runtime/bench.py; T=256 on the CPU: graph structure, hence
planning work, does not depend on the sizes).

Per variant, the median over --repeat fresh compiles of:
- torch's partitioner: `min_cut_rematerialization_partition` on the joint graph, whole call;
- its decision alone: `choose_saved_values_set` inside it;
- lathe: the native planner call (parse the FX text, run the pipeline, build the plan bundle), and
  lathe's whole partitioner call (torch's housekeeping around it included).
Prints one table.  .venv/bin/python bench/runtime/partition_time.py [--repeat 5]
"""

import argparse
import os
import statistics
import sys
import time
from unittest import mock

import torch
from torch._functorch import partitioners
from torch._inductor.custom_graph_pass import CustomPartitionerFn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "device", "runtime"))
from bench import Layer  # noqa: E402  the benchmark's layer, Llama-3-8B dims

import lathe  # noqa: E402
from lathe._backend import LatheBackend  # noqa: E402
from lathe._options import make_options  # noqa: E402


class TimedTorchPartitioner(CustomPartitionerFn):
    def __init__(self):
        self.whole, self.decision = [], []

    def __call__(self, gm, joint_inputs, **kwargs):
        original = partitioners.choose_saved_values_set

        def timed(*args, **kw):
            start = time.perf_counter()
            result = original(*args, **kw)
            self.decision.append(time.perf_counter() - start)
            return result

        start = time.perf_counter()
        with mock.patch.object(partitioners, "choose_saved_values_set", timed):
            result = partitioners.min_cut_rematerialization_partition(gm, joint_inputs, **kwargs)
        self.whole.append(time.perf_counter() - start)
        return result

    def uuid(self):
        return None


def compile_once(layer, x, cos, sin, backend):
    torch._dynamo.reset()
    compiled = torch.compile(layer, backend=backend)
    compiled(x, cos, sin).float().pow(2).mean().backward()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seq", type=int, default=256)
    args = parser.parse_args()
    torch.manual_seed(0)
    layer = Layer()
    x = torch.randn(1, args.seq, 4096, requires_grad=True)
    cos, sin = torch.randn(1, 1, args.seq, 128), torch.randn(1, 1, args.seq, 128)
    rows = []
    with torch._inductor.config.patch(fx_graph_cache=False), torch._functorch.config.patch(enable_autograd_cache=False):
        torch_partitioner = TimedTorchPartitioner()
        from torch._inductor.compile_fx import compile_fx
        for _ in range(args.repeat):
            compile_once(layer, x, cos, sin,
                         lambda gm, inputs: compile_fx(gm, inputs, config_patches={"custom_partitioner_fn": torch_partitioner}))
        rows.append(("torch min_cut_rematerialization_partition", statistics.median(torch_partitioner.whole)))
        rows.append(("  of it, choose_saved_values_set", statistics.median(torch_partitioner.decision)))
        for policy, memory in (("torch", None), ("heuristic", None), ("budget", "20GiB")):
            planning, whole = [], []
            for _ in range(args.repeat):
                backend = LatheBackend(make_options(policy=policy, memory=memory))
                original = lathe._partitioner.LathePartitioner.__call__

                def timed_call(self, *a, **k):
                    start = time.perf_counter()
                    result = original(self, *a, **k)
                    whole.append(time.perf_counter() - start)
                    return result

                with mock.patch.object(lathe._partitioner.LathePartitioner, "__call__", timed_call):
                    compile_once(layer, x, cos, sin, backend)
                planning.append(sum(p.seconds for p in backend.plans))
            rows.append((f"lathe {policy}: planner (native call)", statistics.median(planning)))
            rows.append((f"lathe {policy}: whole partitioner call", statistics.median(whole)))
    reference = rows[0][1]
    print(f"{'one Llama-3-8B layer joint graph, median of ' + str(args.repeat):46} {'ms':>9} {'× torch partitioner':>20}")
    for name, seconds in rows:
        print(f"{name:46} {seconds * 1e3:9.1f} {seconds / reference:20.3f}")


if __name__ == "__main__":
    main()

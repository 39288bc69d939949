"""Inductor's own estimate of each program's peak, the one its buffer reuse obeys, printed while a
script compiles: a dead buffer is held for a later allocation of its size only where holding it
keeps the program under that estimate (torch/_inductor/codegen/wrapper.py, EfficientPeakEstimate).
The planner models the same rule (core/analysis/memory_timeline.cpp, holdForReuse) with its own
figure for the estimate; this prints Inductor's, and the buffers it counts at its peak, so the two
can be set side by side.

  .venv/bin/python bench/runtime/inductor_peak_estimate.py SCRIPT [ARGS...]
  e.g. bench/runtime/capture_small_stack.py 150MiB /tmp/small-150

Per compiled program: the estimate, the scheduler node at its peak, and the buffers live there
(name, MiB, first and last scheduler step; -1: a graph output, never freed). Nothing is changed in
what Inductor generates.
"""

import runpy
import sys

import torch._inductor.codegen.wrapper as wrapper
from torch._inductor import memory
from torch._inductor.virtualized import V
from torch.utils._ordered_set import OrderedSet

MiB = 2**20
_estimate = wrapper.EfficientPeakEstimate.__init__


def report(estimate) -> None:
    _estimate(estimate)
    nodes = V.graph.scheduler.nodes
    freeable = memory.get_freeable_input_buf(nodes, OrderedSet(V.graph.graph_inputs.keys()))
    buffers, _, _ = memory.compute_memory_timeline(nodes, freeable, OrderedSet(V.graph.get_output_names()))
    peak, per_step = memory.peak_memory_from_buf_info_list(buffers, len(nodes))
    step = per_step.index(peak)
    print(f"program of {len(nodes)} scheduler nodes: estimate {estimate.overall_peak_memory / MiB:.2f} MiB, "
          f"peak at step {step} ({nodes[step].get_name()})")
    live = [b for b in buffers if b.start_step <= step and (b.end_step == -1 or b.end_step >= step)]
    for info in sorted(live, key=lambda b: -b.size_alloc):
        if info.size_alloc >= MiB // 4:
            name = info.buffer.get_name() if hasattr(info.buffer, "get_name") else info.buffer.name
            print(f"  {name:14s} {info.size_alloc / MiB:8.2f} MiB  [{info.start_step}, {info.end_step}]")


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    wrapper.EfficientPeakEstimate.__init__ = report
    sys.argv = sys.argv[1:]
    runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    main()

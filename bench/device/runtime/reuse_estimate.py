"""Inductor's buffer reuse as its wrapper decides it, for bench.py's stack under lathe.compile.

Inductor hands a dead buffer to a later allocation of its size only where the size plus its own
peak estimate over the span the buffer would be held stays within its estimate of the program's
peak (torch/_inductor/codegen/wrapper.py, AllocateLine.should_reuse_buffer; the estimate is
torch/_inductor/memory.py's, per scheduler node). The planner models that decision
(core/analysis/memory_timeline.cpp, holdForReuse); this prints what Inductor itself estimated and
decided, to compare on any machine.

Runs bench.py (its options: BENCH_LATHE names the variants; set TORCHINDUCTOR_FX_GRAPH_CACHE=0 and
TORCHINDUCTOR_AUTOGRAD_CACHE=0, or a cached program is not generated again) with the wrapper
patched to record, per compiled program: each scheduler node's estimated bytes with the FX nodes it
computes, every buffer's estimated size and lifetime in scheduler nodes, and every reuse decision
(size, estimate over the span, estimate of the peak, taken or not). Writes
$OUT/reuse_estimate.json, a list with one entry per program in compile order.
  BENCH_SCRIPT=reuse_estimate.py BENCH_LATHE=budget:4.7GiB BENCH_TORCH_BUDGETS=1.0 BENCH_MAGI=0 \
    TORCHINDUCTOR_FX_GRAPH_CACHE=0 TORCHINDUCTOR_AUTOGRAD_CACHE=0 bash bench/device/runtime/run.sh
"""

import json
import os
import runpy

import torch._inductor.codegen.wrapper as wrapper
from torch._inductor import memory
from torch._inductor.virtualized import V

programs = []


def origins(node):
    """The FX nodes a scheduler node computes (fused nodes: all of theirs)."""
    names = set()
    for part in node.get_nodes():
        names |= {origin.name for origin in getattr(part.node, "origins", ())}
    return sorted(names)


def estimate_init(self):
    estimate_init.original(self)
    nodes = V.graph.scheduler.nodes
    program = {"nodes": [{"name": n.get_name(), "origins": origins(n)} for n in nodes],
               "overall_peak": self.overall_peak_memory, "buffers": [], "reuse": []}
    programs.append(program)
    try:  # the estimate's parts, as this torch computes them (their names move between releases)
        freeable = memory.get_freeable_input_buf(nodes, set(V.graph.graph_inputs.keys()))
        outputs = set(V.graph.get_output_names())
        _, per_node = memory.estimate_peak_memory(nodes, freeable, outputs)
        for entry, estimated in zip(program["nodes"], per_node):
            entry["bytes"] = estimated
        buffers = memory.compute_memory_timeline(nodes, freeable, outputs)[0]
        program["buffers"] = [{"name": b.buffer.get_name(), "alloc": b.size_alloc, "free": b.size_free,
                               "start": b.start_step, "end": b.end_step} for b in buffers]
    except Exception as error:  # noqa: BLE001 - the decisions below are still worth having
        program["error"] = repr(error)


def should_reuse(self, free_line, size):
    taken = should_reuse.original(self, free_line, size)
    estimate = self.wrapper.estimate_peak
    adjacent = free_line.scheduler_node_index + 1 == self.scheduler_node_index
    programs[-1]["reuse"].append({
        "buffer": self.node.get_name(), "dead": free_line.node.get_name(), "size": size,
        "freed_at": free_line.scheduler_node_index, "allocated_at": self.scheduler_node_index,
        "span_estimate": None if adjacent else estimate.peak_between(free_line, self),
        "peak_estimate": estimate.overall_peak_memory, "taken": taken})
    return taken


estimate_init.original = wrapper.EfficientPeakEstimate.__init__
should_reuse.original = wrapper.AllocateLine.should_reuse_buffer
wrapper.EfficientPeakEstimate.__init__ = estimate_init
wrapper.AllocateLine.should_reuse_buffer = should_reuse
try:
    runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench.py"), run_name="__main__")
finally:
    with open(os.path.join(os.environ.get("OUT", "/tmp"), "reuse_estimate.json"), "w") as f:
        json.dump(programs, f)
    print(f"reuse_estimate: {len(programs)} programs, "
          f"{sum(len(p['reuse']) for p in programs)} reuse decisions recorded", flush=True)

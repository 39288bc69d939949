"""The torch.compile backend: Inductor, with Lathe's partitioner deciding what the forward saves."""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional, Sequence

import torch

from . import _custom_ops
from ._options import CompileOptions, make_options
from ._partitioner import PLANNED_GRAPH_ARTIFACT, LathePartitioner
from ._pieces import boundary_nodes, split_at_boundaries
from ._planner import GraphPlan
from ._profile import StepRecorder, write_profile
from ._rewrites import REWRITES_ARTIFACT, apply_rewrites
from ._run_folder import RunFolder


def _compile_id() -> str:
    compile_id = torch._guards.CompileContext.current_compile_id()
    return str(compile_id) if compile_id is not None else "-"


class LatheBackend:
    """A torch.compile backend with fixed options. `plans` lists every joint graph planned, in order."""

    def __init__(self, options: CompileOptions) -> None:
        self.options = options
        self.run_folder = RunFolder(options.trace_dir) if options.trace_dir else None
        self.plans: list[GraphPlan] = []
        self.plan_files: dict[str, str] = {}  # graph id -> its bundle in the run folder
        self.rewritten: list[str] = []  # what the memory rewrites changed, one line per node
        self.recorder = StepRecorder()
        self.weight_offload: Optional[dict] = None  # a streamed step beside its simulation (_weights.py)
        self._lock = threading.Lock()

    def _record(self, plan: GraphPlan) -> None:
        with self._lock:
            self.plans.append(plan)
        if self.run_folder is not None:
            self.plan_files[plan.graph_id] = self.run_folder.write_plan(plan)

    def write_profile(self) -> Optional[str]:
        """The run folder's lathe.profile.json as measured so far; None without a run folder."""
        if self.run_folder is None:
            return None
        with self._lock:
            plans, files, steps = list(self.plans), dict(self.plan_files), list(self.recorder.steps)
        return write_profile(self.run_folder.path, plans, files, steps, self.weight_offload)

    def record_weight_offload(self, timeline: dict) -> None:
        """The weight streamer's recorded step: kept, and written to the run folder's profile."""
        self.weight_offload = timeline
        self.write_profile()

    def _compile(self, gm: torch.fx.GraphModule, example_inputs: Sequence[Any], graph_id: str) -> Callable[..., Any]:
        from torch._inductor.compile_fx import compile_fx

        _custom_ops.push_flags()
        partitioner = LathePartitioner(self.options, on_plan=self._record, graph_id=lambda: graph_id)
        return compile_fx(gm, list(example_inputs), config_patches={"custom_partitioner_fn": partitioner})

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
        # The planned graph's id as the run's capture names it ('0/0:lathe_joint_graph').
        compile_id = _compile_id()
        done = apply_rewrites(gm, self.options.rewrites)
        if done:
            with self._lock:
                self.rewritten.extend(f"{compile_id}: {line}" for line in done)
            torch._logging.trace_structured(
                "artifact", metadata_fn=lambda: {"name": REWRITES_ARTIFACT, "encoding": "string"},
                payload_fn=lambda: "\n".join(done))
        boundaries = boundary_nodes(gm)
        if not boundaries:
            return self._compile(gm, example_inputs, f"{compile_id}:{PLANNED_GRAPH_ARTIFACT}")
        # Pieces compile on their first call, after Dynamo's compile: their ids name the piece.
        return split_at_boundaries(gm, boundaries, lambda index, piece, inputs: self._compile(
            piece, inputs, f"{compile_id}:piece{index}:{PLANNED_GRAPH_ARTIFACT}"))


def lathe_backend(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], options: Optional[dict] = None,
                  **kwargs: Any) -> Callable[..., Any]:
    """`torch.compile(model, backend="lathe", options={...})`: options as lathe.compile takes them."""
    return LatheBackend(make_options(**{**(options or {}), **kwargs}))(gm, example_inputs)

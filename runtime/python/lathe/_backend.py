"""The torch.compile backend: Inductor, with Lathe's partitioner deciding what the forward saves."""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional, Sequence

import torch

from . import _custom_ops
from ._options import CompileOptions, make_options
from ._partitioner import LathePartitioner
from ._planner import GraphPlan
from ._run_folder import RunFolder


def _graph_id() -> str:
    """The id the capture of this compile gives its joint graph ('0/0:aot_joint_graph')."""
    compile_id = torch._guards.CompileContext.current_compile_id()
    return f"{compile_id if compile_id is not None else '-'}:aot_joint_graph"


class LatheBackend:
    """A torch.compile backend with fixed options. `plans` lists every joint graph planned, in order."""

    def __init__(self, options: CompileOptions) -> None:
        self.options = options
        self.run_folder = RunFolder(options.trace_dir) if options.trace_dir else None
        self.plans: list[GraphPlan] = []
        self._lock = threading.Lock()

    def _record(self, plan: GraphPlan, fx_text: str) -> None:
        with self._lock:
            self.plans.append(plan)
        if self.run_folder is not None:
            self.run_folder.write_plan(plan)

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
        from torch._inductor.compile_fx import compile_fx

        _custom_ops.push_flags()
        partitioner = LathePartitioner(self.options, on_plan=self._record, graph_id=_graph_id)
        return compile_fx(gm, example_inputs, config_patches={"custom_partitioner_fn": partitioner})


def lathe_backend(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], options: Optional[dict] = None,
                  **kwargs: Any) -> Callable[..., Any]:
    """`torch.compile(model, backend="lathe", options={...})`: options as lathe.compile takes them."""
    return LatheBackend(make_options(**{**(options or {}), **kwargs}))(gm, example_inputs)

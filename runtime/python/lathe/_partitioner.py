"""Lathe's joint-graph partitioner: torch's min-cut partitioner with Lathe's saved set.

AOTAutograd hands the partitioner the joint forward/backward graph. Everything torch does around the
decision (dead-code elimination, CSE, recompute tags, forced saves of collectives and mutations, the
random-number functionalization, the backward's reordering) stays torch's: only
`choose_saved_values_set`, the choice of which forward values the backward reads, is replaced by
the plan Lathe's planner makes on the same graph, printed as FX readable text. The forward that
runs then saves exactly the planner's set.
"""

from __future__ import annotations

import functools
import hashlib
import operator
import os
from typing import Any, Callable, Optional, Sequence
from unittest import mock

import torch
import torch.fx as fx
from torch._functorch import partitioners
from torch._inductor.custom_graph_pass import CustomPartitionerFn

from ._errors import LatheError
from ._options import CompileOptions
from . import _custom_ops, _offload, _planner


# The TORCH_TRACE artifact holding the joint graph as Lathe planned it (after Inductor's joint passes
# and the partitioner's CSE, unlike aot_joint_graph); Lathe's loader reads it as graph kind
# `lathe_joint_graph`, which `lathe plan` takes by default.
PLANNED_GRAPH_ARTIFACT = "lathe_joint_graph"


def readable_text(gm: fx.GraphModule) -> str:
    """The graph as TORCH_TRACE's aot_joint_graph payload prints it."""
    try:
        return gm.print_readable(print_output=False, include_stride=True, include_device=True, expanded_def=True)
    except TypeError:  # torch without expanded_def
        return gm.print_readable(print_output=False, include_stride=True, include_device=True)


def size_hints(graph: fx.Graph) -> dict:
    """Each size symbol of a dynamic graph at the value it was traced with ({"s0": 2})."""
    for node in graph.nodes:
        value = node.meta.get("val")
        fake_mode = getattr(value, "fake_mode", None)
        shape_env = getattr(fake_mode, "shape_env", None)
        if shape_env is not None:
            # torch 2.13 renamed var_to_val (2.11 has only the old name).
            hints = getattr(shape_env, "backed_var_to_val", None)
            if hints is None:
                hints = shape_env.var_to_val
            return {str(symbol): int(hint) for symbol, hint in hints.items()}
    return {}


def _is_sym(node: fx.Node) -> bool:
    return isinstance(node.meta.get("val"), (torch.SymInt, torch.SymFloat, torch.SymBool))


def _tangent_dependent(joint_graph: fx.Graph) -> set:
    dependent: set = set()
    for node in joint_graph.nodes:  # topological order
        if (node.op == "placeholder" and node.name.startswith("tangents")) or any(
                arg in dependent for arg in node.all_input_nodes):
            dependent.add(node)
    return dependent


def saved_nodes(joint_graph: fx.Graph, names: Sequence[str], graph_id: str) -> tuple[list[fx.Node], list[str]]:
    """The planner's saved names as nodes of the joint graph torch partitions, and the names saved
    through their getitems."""
    by_name = {node.name: node for node in joint_graph.nodes}
    saved: list[fx.Node] = []
    seen: set[fx.Node] = set()

    def add(node: fx.Node) -> None:
        if node not in seen:
            seen.add(node)
            saved.append(node)

    tangent_dependent = _tangent_dependent(joint_graph)
    through_getitems: list[str] = []
    for name in names:
        node = by_name.get(name)
        if node is None:
            raise LatheError(f"{graph_id}: the planner saved {name!r}, which the joint graph lacks")
        if node in tangent_dependent:
            raise LatheError(f"{graph_id}: the planner saved {name!r}, which is computed from the tangents")
        # A value computed from primals alone that torch would leave to the backward (a weight's
        # transpose) is computed by the forward when saved, as the planner's step has it.
        # A tuple-valued node is saved through its getitems (torch's extraction saves tensors).
        if isinstance(node.meta.get("val"), (tuple, list)):
            through_getitems.append(name)
            for user in node.users:
                if user.op == "call_function" and user.target is operator.getitem:
                    add(user)
        else:
            add(node)
    # Sizes the backward reads (dynamic shapes) are always saved: torch's partitioner does the same.
    for node in joint_graph.nodes:
        if node not in tangent_dependent and _is_sym(node) and any(u in tangent_dependent for u in node.users):
            add(node)
    return saved, through_getitems


@functools.lru_cache(maxsize=1)
def _code_digest() -> bytes:
    """The runtime's own code and native module, hashed once per process (uuid is asked per compile)."""
    digest = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(__file__))
    for name in sorted(os.listdir(here)):
        if name.endswith(".py") or name.startswith("_native"):
            with open(os.path.join(here, name), "rb") as f:
                digest.update(f.read())
    return digest.digest()


class _PartitionerKey(str):
    """What a LathePartitioner pickles as (a cache key, not a partitioner)."""


class LathePartitioner(CustomPartitionerFn):
    """One per compiled graph family; `on_plan` sees each joint graph's plan (run folders, tests)."""

    def __init__(self, options: CompileOptions, on_plan: Optional[Callable[[_planner.GraphPlan], None]] = None,
                 graph_id: Callable[[], str] = lambda: "joint") -> None:
        self.options = options
        self.on_plan = on_plan
        self.graph_id = graph_id

    def __call__(self, gm: fx.GraphModule, joint_inputs: Sequence[object], **kwargs: Any):
        made: list[_planner.GraphPlan] = []  # this call's plan (torch may not ask: no backward)

        def choose_saved_values_set(joint_graph: fx.Graph, node_info: Any, *args: Any, **kw: Any) -> list[fx.Node]:
            text = readable_text(joint_graph.owning_module or gm)
            # The graph exactly as planned goes into TORCH_TRACE, so that a plan made from the run's
            # capture (`lathe plan`, the studio) is of this graph and applies back.
            torch._logging.trace_structured(
                "artifact", metadata_fn=lambda: {"name": PLANNED_GRAPH_ARTIFACT, "encoding": "string"},
                payload_fn=lambda: text)
            graph_id = self.graph_id()
            # Parameters and buffers (torch's static-lifetime inputs) stay allocated for the whole step.
            primals = [n for n in joint_graph.nodes if partitioners._is_primal(n)]
            weights = [primals[i].name for i in kwargs.get("static_lifetime_input_indices") or () if i < len(primals)]
            plan = _planner.plan_joint(text, graph_id, self.options, size_hints(joint_graph), weights)
            saved, plan.saved_through_getitems = saved_nodes(joint_graph, plan.plan.saved, graph_id)
            plan.torch_saved = [n.name for n in saved if not _is_sym(n)]
            made.append(plan)
            return saved

        with mock.patch.object(partitioners, "choose_saved_values_set", choose_saved_values_set):
            forward, backward = partitioners.min_cut_rematerialization_partition(gm, joint_inputs, **kwargs)
        for plan in made:
            # What the forward that runs returns beyond the model's outputs is what it saves.
            outputs = forward.graph.output_node().args[0]
            plan.forward_saved = [n.name for n in outputs[kwargs["num_fwd_outputs"]:]
                                  if isinstance(n, fx.Node) and not _is_sym(n)]
            if plan.plan.offloaded:
                plan.offloaded = _offload.apply(forward, backward, plan, kwargs["num_fwd_outputs"])
            if self.on_plan is not None:
                self.on_plan(plan)
        return forward, backward

    def __reduce__(self):
        # Inductor pickles its config into cache keys: the partitioner pickles as its uuid.
        return (_PartitionerKey, (self.uuid(),))

    def __deepcopy__(self, memo: dict) -> "LathePartitioner":
        # Inductor copies its config; this object is the compile's one planner and stays one.
        return self

    def uuid(self) -> Optional[Any]:
        # Inductor caches compiled graphs by this key: it must change with anything that changes
        # the saved set (options, custom-op flags, the plan file's bytes, the planner's and this
        # runtime's code).
        digest = hashlib.sha256(repr(self.options).encode())
        digest.update(repr(sorted(_custom_ops.registered_flags().items())).encode())
        digest.update(_code_digest())
        if self.options.plan:
            with open(self.options.plan, "rb") as f:
                digest.update(f.read())
        return digest.hexdigest()

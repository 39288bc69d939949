"""The bridge to Lathe's planner (the native module): hardware, budgets and pipelines in, saved sets out."""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import Optional, Sequence

import torch

from ._errors import LatheError
from ._options import CompileOptions, parse_bytes

from . import _native

log = logging.getLogger("lathe")

# Device names as torch reports them -> Lathe's hardware profiles.
_DEVICE_PROFILES = (("H200", "h200"), ("H100", "h100"), ("5090", "rtx5090"), ("A100", "a100"), ("L40S", "l40s"))


def resolve_hardware(hw: str) -> str:
    """'auto' -> the profile of the current CUDA device (the default profile without one)."""
    if hw != "auto":
        if hw not in _native.hardware_profiles():
            _native.hardware_memory(hw)  # a profile file path; raises LatheError when it is neither
        return hw
    if torch.cuda.is_available():
        name = torch.cuda.get_device_name()
        for needle, profile in _DEVICE_PROFILES:
            if needle in name:
                return profile
        raise LatheError(f"hw='auto': no Lathe hardware profile for {name!r}; name one "
                         f"({', '.join(_native.hardware_profiles())}) or a profile file")
    return _native.default_hardware


def device_memory(hardware: str) -> int:
    """The memory a fraction or a missing budget refers to: the CUDA device's, else the profile's."""
    if torch.cuda.is_available():
        return torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
    return _native.hardware_memory(hardware)


def budget_bytes(options: CompileOptions, hardware: str) -> Optional[int]:
    """The budget policy's memory in bytes; None without memory= (the least peak no slower than torch's plan)."""
    memory = options.memory
    if memory is None:
        return None
    if isinstance(memory, str):
        return parse_bytes(memory)
    if isinstance(memory, float):
        return int(memory * device_memory(hardware))
    return int(memory)


def pipeline_for(options: CompileOptions, hardware: str, memory: Optional[int] = None) -> str:
    """memory: the budget policy's bytes where options.memory leaves it open (the device's, when the
    plan no slower than torch's does not fit it)."""
    custom = options.option("pipeline")
    if custom:
        return custom
    policy = options.effective_policy
    offload = ",offload=true" if options.activation_offload else ""
    if policy == "budget":
        budget = budget_bytes(options, hardware) or memory
        recompute = f"recompute(policy=budget{f',memory={budget}' if budget else ''}{offload})"
    else:
        recompute = f"recompute(policy={policy}{offload})"
    return f"split,fusion,{recompute}"


@dataclasses.dataclass
class GraphPlan:
    graph_id: str
    hardware: str
    pipeline: str
    plan: "_native.JointPlan"
    seconds: float = 0.0  # wall time of planning (parse, pipeline, bundle)
    torch_saved: list = dataclasses.field(default_factory=list)  # tensors handed to torch's extraction
    saved_through_getitems: list = dataclasses.field(default_factory=list)  # tuple-valued planner names
    forward_saved: Optional[list] = None  # tensors the compiled forward returns for the backward
    offloaded: list = dataclasses.field(default_factory=list)  # saved tensors the graphs copy to host memory and back


def plan_joint(fx_text: str, graph_id: str, options: CompileOptions, symbols: Optional[dict] = None,
               weights: Sequence[str] = ()) -> GraphPlan:
    """Plans one joint graph; raises LatheError when the plan cannot be applied as asked.
    symbols: the traced value of each size symbol of a dynamic graph ({"s0": 2}); weights: the
    placeholders that live for the whole step (parameters and buffers), by name."""
    hardware = resolve_hardware(options.hw)
    symbols = symbols or {}
    start = time.perf_counter()
    if options.plan:
        plan = _native.bind_plan(fx_text, graph_id, options.plan, symbols=symbols)
        return GraphPlan(graph_id, hardware, "(plan file)", plan, time.perf_counter() - start)
    pipeline = pipeline_for(options, hardware)
    plan = _native.plan_joint(fx_text, graph_id, pipeline, hardware, symbols=symbols, weights=list(weights))
    capacity = device_memory(hardware)
    if plan.peak_bytes > capacity and pipeline != pipeline_for(options, hardware, capacity):
        # No memory given and the plan no slower than torch's does not fit: plan within the device.
        pipeline = pipeline_for(options, hardware, capacity)
        plan = _native.plan_joint(fx_text, graph_id, pipeline, hardware, symbols=symbols, weights=list(weights))
    seconds = time.perf_counter() - start
    if not plan.budget_met:
        reason = next((line for line in plan.warnings if "budget" in line), "")
        raise LatheError(f"{graph_id}: no plan fits memory={options.memory!r} on {hardware}"
                         + (f" ({reason.lstrip('! ')})" if reason else ""))
    for line in plan.warnings:
        log.warning("lathe: %s: %s", graph_id, line)
    if plan.peak_bytes > capacity:
        # The torch and heuristic policies do not look at memory: say so before the step runs out of it.
        log.warning("lathe: %s: the plan's predicted peak %.2f GiB exceeds the %.2f GiB of %s; "
                    "memory= with policy='budget' plans within it", graph_id, plan.peak_bytes / 2**30,
                    capacity / 2**30, "the device" if torch.cuda.is_available() else hardware)
    return GraphPlan(graph_id, hardware, pipeline, plan, seconds)


def set_op_flags(target: str, *, compute_sensitive: bool, subgraph_boundary: bool) -> None:
    _native.set_op_flags(target, compute_sensitive=compute_sensitive, subgraph_boundary=subgraph_boundary)


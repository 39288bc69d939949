"""Lathe's runtime: torch.compile under Lathe's plans.

    @lathe.compile(memory="6GiB")           # a module class: every instance is compiled
    class Block(torch.nn.Module): ...

    model = lathe.compile(model, policy="heuristic")   # an instance, in place
    step = lathe.compile(step_fn)                      # a function or a method
    torch.compile(model, backend="lathe")              # the registered backend

The joint forward/backward graph AOTAutograd traces is planned in process by Lathe's planner
(lathe._native: core + passes); the saved set it returns decides what the forward keeps for the
backward, and Inductor compiles both halves.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Iterator, Optional

import torch

from ._errors import LatheError
from ._options import POLICIES, CompileOptions, Memory, make_options, parse_bytes
from ._planner import GraphPlan, resolve_hardware
from ._backend import LatheBackend, lathe_backend
from ._custom_ops import register_custom_op
from ._profile import backend_of
from . import _graphs, _weights

__all__ = ["compile", "register_custom_op", "plans", "offload_report", "cuda_graphs_report", "step", "measured_steps", "LatheError", "LatheBackend", "GraphPlan", "POLICIES",
           "parse_bytes", "resolve_hardware"]

_BACKEND_ATTR = "_lathe_backend"


def compile(obj: Any = None, *, memory: Memory = None, policy: Optional[str] = None, hw: Optional[str] = None,
            plan: Optional[str] = None, trace_dir: Optional[str] = None, dynamic: Optional[bool] = None,
            **options: Any) -> Any:
    """Compiles a module class (every instance), a module instance (in place), a method or a function.

    memory: the planned step's peak budget: bytes, a size ("6GiB") or a fraction of the device.
    policy: torch | heuristic | budget | file. hw: a hardware profile id, a profile file, or "auto".
    plan: a plan bundle to apply (from `lathe plan`, the studio or a run folder).
    trace_dir: a run folder for TORCH_TRACE logs and plan bundles.
    rewrites: the memory rewrites to apply (default all: "linear_cross_entropy", "embedding_grad";
    False or "none" for none). activation_offload: saved values whose copies to host memory and back
    hide behind compute leave the GPU in between (with policy="budget", co-planned with recompute).
    offload: stream the layer units' weights from pinned host memory, just in time (inference and
    training): dict(resident=0.3 | memory="20GiB", policy="optimal" (default) | "heuristic" | ...,
    units=[names]); see offload_report.
    cuda_graphs: inference calls replayed from CUDA graphs of the whole compiled forward (fullgraph),
    one per size bucket: True or dict(buckets=(128, 512, 2048) (default: powers of two), dim=1,
    max_graphs=8); see cuda_graphs_report. With offload, the streamed step is captured, its copies with
    it.
    Unset options come from LATHE_*.
    """
    if obj is None:
        return functools.partial(compile, memory=memory, policy=policy, hw=hw, plan=plan, trace_dir=trace_dir,
                                 dynamic=dynamic, **options)
    settings = make_options(memory=memory, policy=policy, hw=hw, plan=plan, trace_dir=trace_dir, dynamic=dynamic,
                            **options)
    resolve_hardware(settings.hw)  # an unknown profile is refused here, not at the first step
    if isinstance(obj, type):
        if not issubclass(obj, torch.nn.Module):
            raise LatheError(f"lathe.compile: {obj.__name__} is a class but not a torch.nn.Module")
        original_init = obj.__init__

        @functools.wraps(original_init)
        def __init__(self: torch.nn.Module, *args: Any, **kwargs: Any) -> None:
            original_init(self, *args, **kwargs)
            if type(self) is obj or not hasattr(self, _BACKEND_ATTR):  # a subclass's own decoration wins
                _compile_module(self, settings)

        obj.__init__ = __init__
        return obj
    if isinstance(obj, torch.nn.Module):
        return _compile_module(obj, settings)
    if callable(obj):
        if settings.offload is not None:
            raise LatheError("lathe.compile: offload streams a module's weights; compile the module, not a function")
        backend = LatheBackend(settings)
        if settings.cuda_graphs is not None:
            runner = _graphs.GraphRunner(
                torch.compile(obj, backend=backend, fullgraph=True, dynamic=settings.dynamic), settings.cuda_graphs)
            setattr(runner, _BACKEND_ATTR, backend)
            return runner
        compiled = torch.compile(obj, backend=backend, dynamic=settings.dynamic)
        setattr(compiled, _BACKEND_ATTR, backend)
        return compiled
    raise LatheError(f"lathe.compile: cannot compile a {type(obj).__name__} (a module class, a module, "
                     "a method or a function)")


def _compile_module(module: torch.nn.Module, settings: CompileOptions) -> torch.nn.Module:
    backend = LatheBackend(settings)
    object.__setattr__(module, _BACKEND_ATTR, backend)  # not a submodule, not in state_dict
    if settings.offload is None:
        if settings.cuda_graphs is not None:  # whole-graph capture: a graph break is an error naming its reason
            compiled = torch.compile(module.forward, backend=backend, fullgraph=True, dynamic=settings.dynamic)
            _graphs.attach(module, compiled, settings.cuda_graphs)
        else:
            module.compile(backend=backend, dynamic=settings.dynamic)
        return module
    # Streaming runs between the layer units (eager hooks), so each unit's forward is compiled on its
    # own; the code around them runs eagerly. With CUDA graphs the whole streamed step is captured,
    # its copies with it.
    streamer = _weights.attach(module, settings.offload, resolve_hardware(settings.hw))
    streamer.on_timeline = backend.record_weight_offload
    for unit in streamer.units:
        unit.module.forward = torch.compile(unit.module.forward, backend=backend, dynamic=settings.dynamic)
    if settings.cuda_graphs is not None:
        _graphs.attach(module, module.forward, settings.cuda_graphs, weights=streamer)
    return module


def offload_report(model: torch.nn.Module) -> dict:
    """What weight offload decided and measured for a model compiled with offload=: its units, the
    resident set, the slots, the plan's predicted step and floor, the profiled compute per unit and
    copy bandwidth (after the second call), and uses the plan did not foresee."""
    return _weights.report(model)


def cuda_graphs_report(model: Any) -> dict:
    """The size buckets a model compiled with cuda_graphs= holds graphs of, and its captures,
    replays, evictions and calls run without a graph."""
    if isinstance(model, _graphs.GraphRunner):
        return model.report()
    return _graphs.report(model)


def plans(compiled: Any) -> list[GraphPlan]:
    """Every joint graph Lathe planned for a compiled module or function, in compile order."""
    backend = getattr(compiled, _BACKEND_ATTR, None)
    if backend is None:
        raise LatheError("lathe.plans: not compiled by lathe.compile")
    return list(backend.plans)


@contextlib.contextmanager
def step(compiled: Any, kernels: bool = False) -> Iterator[None]:
    """Measures one training step of a compiled module or function: its time and, on CUDA, its peak
    (max allocated minus allocated before). kernels: run the step under torch.profiler and record
    per-kernel times (device time on CUDA; on the CPU the operators' own time). With a run folder
    the measurements are written to its lathe.profile.json beside the plans' predictions
    (`lathe profile FOLDER` prints both)."""
    backend = backend_of(compiled)
    with backend.recorder.measure(kernels=kernels):
        yield
    backend.write_profile()


def measured_steps(compiled: Any) -> list[dict]:
    """The steps lathe.step measured: seconds, peak_bytes and before_bytes (None without CUDA)."""
    return list(backend_of(compiled).recorder.steps)

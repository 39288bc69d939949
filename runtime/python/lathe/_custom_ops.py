"""`lathe.register_custom_op`: a torch custom op with the flags Lathe's planner reads.

Flags live in one registry here and reach the planner when a graph is planned (not when a model
is decorated), so an op registered after `lathe.compile` still counts.
"""

from __future__ import annotations

import dataclasses
import inspect
import threading
import typing
from typing import Any, Callable, Optional, Sequence, Union

import torch

from ._errors import LatheError


@dataclasses.dataclass(frozen=True)
class OpFlags:
    compute_sensitive: bool = False
    subgraph_boundary: bool = False


_lock = threading.Lock()
_flags: dict[str, OpFlags] = {}

OutputMeta = Union[None, int, Sequence[str], Callable[..., Any]]


def planner_key(name: str) -> str:
    """'mylib::attn' -> 'mylib.attn', the op packet as graphs name it (torch.ops.mylib.attn)."""
    return name.replace("::", ".")


def registered_flags() -> dict[str, OpFlags]:
    with _lock:
        return dict(_flags)


def push_flags() -> None:
    """Hands every registered op's flags to the planner (called before each graph is planned)."""
    from . import _planner

    for key, flags in registered_flags().items():
        _planner.set_op_flags(key, compute_sensitive=flags.compute_sensitive,
                              subgraph_boundary=flags.subgraph_boundary)


def _returns_count(fn: Callable[..., Any]) -> int:
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        return 1
    ret = hints.get("return")
    if typing.get_origin(ret) is tuple:
        return len(typing.get_args(ret))
    return 1


def _fake_from(fn: Callable[..., Any], meta: OutputMeta) -> Callable[..., Any]:
    """The shape rule: a callable as given; None -> like the first N tensor parameters (N from the
    return annotation); a list of parameter names -> like those parameters."""
    if callable(meta):
        return meta
    signature = inspect.signature(fn)
    params = list(signature.parameters)
    if meta is None:
        count = _returns_count(fn)
        names: Optional[list[str]] = None
    else:
        names = list(meta)
        unknown = [n for n in names if n not in params]
        if unknown:
            raise LatheError(f"infer_output_meta names {unknown}, not parameters of {fn.__name__} ({params})")
        count = len(names)

    def fake(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        if names is None:
            tensors = [v for v in bound.arguments.values() if isinstance(v, torch.Tensor)][:count]
        else:
            tensors = [bound.arguments[n] for n in names]
        if len(tensors) < count:
            raise LatheError(f"{fn.__name__}: infer_output_meta wants {count} tensor argument(s), got {len(tensors)}")
        outs = tuple(torch.empty_like(t) for t in tensors)
        return outs if count > 1 else outs[0]

    return fake


def register_custom_op(name: Optional[str] = None, *, compute_sensitive: bool = False, subgraph_boundary: bool = False,
                       infer_output_meta: OutputMeta = None, mutates_args: Union[str, Sequence[str]] = (),
                       device_types: Union[str, Sequence[str], None] = None, schema: Optional[str] = None,
                       backward: Optional[Callable[..., Any]] = None,
                       setup_context: Optional[Callable[..., Any]] = None) -> Callable[[Callable[..., Any]], Any]:
    """Decorator: `torch.library.custom_op` + `register_fake` (+ `register_autograd`) with planner flags.

    compute_sensitive: the planner keeps the op's output rather than recompute it.
    subgraph_boundary: the planner splits the graph at the op.
    infer_output_meta: the op's shape rule (see _fake_from); backward/setup_context: its autograd.
    name defaults to '<module>::<function>'.
    """

    def wrap(fn: Callable[..., Any]) -> Any:
        op_name = name or f"{fn.__module__.split('.')[-1]}::{fn.__name__}"
        if "::" not in op_name:
            raise LatheError(f"register_custom_op: {op_name!r} needs a namespace, e.g. 'mylib::{op_name}'")
        op = torch.library.custom_op(op_name, mutates_args=mutates_args, device_types=device_types, schema=schema)(fn)
        op.register_fake(_fake_from(fn, infer_output_meta))
        if backward is not None:
            op.register_autograd(backward, setup_context=setup_context)
        elif setup_context is not None:
            raise LatheError(f"register_custom_op({op_name!r}): setup_context without backward")
        with _lock:
            _flags[planner_key(op_name)] = OpFlags(compute_sensitive, subgraph_boundary)
        return op

    return wrap

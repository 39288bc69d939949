"""Piecewise compilation: a Dynamo graph split at `subgraph_boundary` ops, as MagiCompiler splits
at its splitting ops. Each boundary op runs eagerly on its own; every piece between two boundaries
is compiled by Inductor on its first call, with its own joint graph planned by Lathe."""

from __future__ import annotations

from typing import Any, Callable, Optional

import torch
import torch.fx as fx
from torch.fx.passes.split_module import split_module

from . import _custom_ops


def op_key(target: Any) -> Optional[str]:
    """The planner's key of a call target ('mylib.attn'), or None for what is not a torch op."""
    if isinstance(target, torch._ops.OpOverload):
        return _custom_ops.planner_key(target._schema.name)
    if isinstance(target, torch._ops.OpOverloadPacket):
        return _custom_ops.planner_key(target._qualified_op_name)
    return None


def boundary_nodes(gm: fx.GraphModule) -> list[fx.Node]:
    flags = _custom_ops.registered_flags()
    boundaries = []
    for node in gm.graph.nodes:
        key = op_key(node.target) if node.op == "call_function" else None
        if key is not None and key in flags and flags[key].subgraph_boundary:
            boundaries.append(node)
    return boundaries


class LazyPiece(torch.nn.Module):
    """A piece compiled on its first call, with the inputs it is first called with."""

    def __init__(self, piece: fx.GraphModule, compile_piece: Callable[[fx.GraphModule, list], Callable[..., Any]]):
        super().__init__()
        self.piece = piece
        self.compile_piece = compile_piece
        self.compiled: Optional[Callable[..., Any]] = None

    def forward(self, *args: Any) -> Any:
        if self.compiled is None:
            self.compiled = self.compile_piece(self.piece, list(args))
        return self.compiled(*args)


def split_at_boundaries(gm: fx.GraphModule, boundaries: list[fx.Node],
                        compile_piece: Callable[[int, fx.GraphModule, list], Callable[..., Any]]) -> fx.GraphModule:
    """The graph as pieces: boundary ops alone and eager, the rest compiled by compile_piece(index, ...)."""
    boundary_set = set(boundaries)
    partition: dict[fx.Node, int] = {}
    current = 0
    for node in gm.graph.nodes:
        if node in boundary_set:
            current += 1
            partition[node] = current
            current += 1
        else:
            partition[node] = current
    split = split_module(gm, None, lambda node: partition[node], keep_original_order=True,
                         keep_original_node_name=True)
    boundary_parts = {partition[node] for node in boundaries}
    index = 0
    for name, child in list(split.named_children()):
        part = int(name.rsplit("_", 1)[-1])
        if part in boundary_parts:
            continue  # the boundary op alone: eager
        setattr(split, name, LazyPiece(child, lambda piece, args, i=index: compile_piece(i, piece, args)))
        index += 1
    return split

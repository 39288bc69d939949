"""CUDA graphs for inference: a compiled forward captured once per size bucket and replayed.

    model = lathe.compile(model, cuda_graphs=dict(buckets=(128, 512, 2048), dim=1, max_graphs=8))

What MagiCompiler's graph modes do, without their flaws (../shared/reference/magicompiler.md §3):
- a call's dynamic size (the inputs' `dim`, e.g. the sequence length) is rounded up to its bucket
  (the given sizes, or the next power of two from 16 on) and the inputs are padded to it with zeros,
  so every length inside a bucket replays one graph: no capture per exact length. Padding at the end
  of `dim` must not change the outputs at the real positions (true of causal attention and
  position-wise layers: the model's contract, as the bucket sizes are the caller's; an output
  without `dim`, such as a reduction over it, sees the padding);
- at most `max_graphs` graphs are kept, the least recently used one is dropped (its memory with it)
  when another is captured; a call longer than the largest given bucket runs the compiled forward
  without a graph;
- outputs are the caller's: the real positions are copied out of the graph's static outputs, which
  the next replay overwrites;
- a call that records gradients runs the compiled forward without a graph (graphs here are for
  inference).

With weight offload (`lathe.compile(model, offload=..., cuda_graphs=...)`) the graph holds the weight
streamer's copies and waits as well: the step captured is the streamed forward, its copies on the copy
stream forked from and joined back to the captured stream, so a replay streams the weights the plan
streams. The streamer settles its plan first (its profiled and recorded steps run without a graph),
fixes the slot each copy for the next step lands in so every step ends as each graph's replay begins
(lathe._weights), and when it re-plans (new slots) the graphs are dropped and captured again.

The graph layer (capture, replay) is an interface so the bucketing, padding, eviction and output
ownership are tested without a GPU (tests/runtime/test_cuda_graphs.py).
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Any, Callable, Optional

import torch
import torch.utils._pytree as pytree

from ._errors import LatheError

_GRAPHS_ATTR = "_lathe_graphs"
_SMALLEST_BUCKET = 16
_WARMUP_CALLS = 2  # on a side stream before capture: compiles the bucket's shape, settles the allocator


@dataclasses.dataclass(frozen=True)
class CudaGraphSpec:
    """`cuda_graphs=dict(...)`: bucket sizes along `dim` (None: powers of two), at most `max_graphs`."""
    buckets: Optional[tuple] = None
    dim: int = 1
    max_graphs: int = 8

    def __post_init__(self) -> None:
        if self.buckets is not None:
            if not self.buckets or any(not isinstance(b, int) or isinstance(b, bool) or b <= 0 for b in self.buckets):
                raise LatheError(f"cuda_graphs: buckets are positive sizes, got {self.buckets!r}")
            if list(self.buckets) != sorted(set(self.buckets)):
                raise LatheError(f"cuda_graphs: buckets are increasing sizes, got {self.buckets!r}")
        if not isinstance(self.dim, int) or isinstance(self.dim, bool) or self.dim < 0:
            raise LatheError(f"cuda_graphs: dim is a dimension index, got {self.dim!r}")
        if not isinstance(self.max_graphs, int) or isinstance(self.max_graphs, bool) or self.max_graphs < 1:
            raise LatheError(f"cuda_graphs: max_graphs is at least 1, got {self.max_graphs!r}")

    def bucket(self, size: int) -> Optional[int]:
        """The bucket a size runs in; None when it is larger than every given bucket."""
        if self.buckets is None:
            bucket = _SMALLEST_BUCKET
            while bucket < size:
                bucket *= 2
            return bucket
        return next((b for b in self.buckets if b >= size), None)


def make_cuda_graph_spec(value: Any) -> Optional[CudaGraphSpec]:
    if value is None or value is False:
        return None
    if value is True:
        return CudaGraphSpec()
    if not isinstance(value, dict):
        raise LatheError(f"cuda_graphs: expected True or a dict (buckets, dim, max_graphs), got {value!r}")
    unknown = sorted(set(value) - {"buckets", "dim", "max_graphs"})
    if unknown:
        raise LatheError(f"cuda_graphs: unknown option {unknown[0]!r} (buckets, dim, max_graphs)")
    if value.get("buckets") is not None:
        value = dict(value, buckets=tuple(value["buckets"]))
    return CudaGraphSpec(**value)


class CudaGraphs:
    """Capture and replay on the current CUDA device."""

    def capture(self, fn: Callable[..., Any], args: list) -> tuple[Any, Any]:
        """Warms `fn` up on a side stream, then captures one call into a graph with its own memory
        pool; returns (graph, the call's outputs, which every replay rewrites)."""
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(_WARMUP_CALLS):
                fn(*args)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outputs = fn(*args)
        return graph, outputs

    def replay(self, graph: Any) -> None:
        graph.replay()


@dataclasses.dataclass
class _Captured:
    graph: Any
    inputs: list  # static inputs, padded to the bucket
    outputs: Any  # static outputs (the call's structure)


class GraphRunner:
    """A compiled forward run through CUDA graphs, one per bucket (module docstring)."""

    def __init__(self, fn: Callable[..., Any], spec: CudaGraphSpec, graphs: Any = None, weights: Any = None) -> None:
        self.fn, self.spec = fn, spec
        self.graphs = graphs if graphs is not None else CudaGraphs()
        self.weights = weights  # the weight streamer (lathe._weights) whose copies the graphs hold, or None
        self._layout = None if weights is None else weights.layout  # its buffers the graphs read
        self._cache: collections.OrderedDict[tuple, _Captured] = collections.OrderedDict()
        self.captures = self.replays = self.evictions = self.invalidated = self.ungraphed_calls = 0

    def __call__(self, *args: Any) -> Any:
        size = self._size(args)
        bucket = self.spec.bucket(size) if size is not None and not torch.is_grad_enabled() else None
        if bucket is not None and self.weights is not None:
            if self.weights.layout != self._layout:  # the streamer re-planned: the graphs read freed slots
                self.invalidated += len(self._cache)
                self._cache.clear()
                self._layout = self.weights.layout
            if not self.weights.graphable():  # its plan not settled yet, or a switch from training to make
                bucket = None
        if bucket is None:  # recording gradients, no dynamic size, longer than every bucket, streamer unsettled
            self.ungraphed_calls += 1
            return self.fn(*args)
        key = self._key(args, size, bucket)
        captured = self._cache.get(key)
        if captured is None:
            if len(self._cache) >= self.spec.max_graphs:
                self._cache.popitem(last=False)  # the least recently used graph and its memory
                self.evictions += 1
            inputs = [self._padded(a, size, bucket) for a in args]
            graph, outputs = self.graphs.capture(self.fn, inputs)
            captured = self._cache[key] = _Captured(graph, inputs, outputs)
            self.captures += 1
        else:
            self._cache.move_to_end(key)
            for static, given in zip(captured.inputs, args):
                if isinstance(static, torch.Tensor):
                    self._fill(static, given, size)
        if self.weights is not None:
            self.weights.before_replay()
        self.graphs.replay(captured.graph)
        self.replays += 1
        return pytree.tree_map(lambda out: self._owned(out, bucket, size), captured.outputs)

    def _size(self, args: tuple) -> Optional[int]:
        """The call's dynamic size: the first tensor argument's extent along `dim`."""
        dim = self.spec.dim
        return next((a.shape[dim] for a in args if isinstance(a, torch.Tensor) and a.dim() > dim), None)

    def _key(self, args: tuple, size: int, bucket: int) -> tuple:
        key: list = [bucket]
        for a in args:
            if isinstance(a, torch.Tensor):
                shape = list(a.shape)
                if a.dim() > self.spec.dim and shape[self.spec.dim] == size:
                    shape[self.spec.dim] = bucket
                key.append((tuple(shape), a.dtype, a.device))
            else:
                key.append(("value", repr(a)))  # a non-tensor argument is part of what was captured
        return tuple(key)

    def _padded(self, value: Any, size: int, bucket: int) -> Any:
        if not isinstance(value, torch.Tensor):
            return value
        dim = self.spec.dim
        if value.dim() <= dim or value.shape[dim] != size:
            return value.clone()
        shape = list(value.shape)
        shape[dim] = bucket
        static = torch.zeros(shape, dtype=value.dtype, device=value.device)
        static.narrow(dim, 0, size).copy_(value)
        return static

    def _fill(self, static: torch.Tensor, given: torch.Tensor, size: int) -> None:
        dim = self.spec.dim
        if static.dim() > dim and static.shape[dim] != given.shape[dim]:
            static.narrow(dim, 0, size).copy_(given)
            static.narrow(dim, size, static.shape[dim] - size).zero_()  # the padding of an earlier, longer call
        else:
            static.copy_(given)

    def _owned(self, out: Any, bucket: int, size: int) -> Any:
        """An output the caller owns: the real positions, copied out of the graph's static buffer."""
        if not isinstance(out, torch.Tensor):
            return out
        dim = self.spec.dim
        if out.dim() > dim and out.shape[dim] == bucket:
            return out.narrow(dim, 0, size).clone()
        return out.clone()

    def report(self) -> dict:
        return {"buckets": sorted(key[0] for key in self._cache), "captures": self.captures, "replays": self.replays,
                "evictions": self.evictions, "invalidated": self.invalidated, "ungraphed_calls": self.ungraphed_calls,
                "max_graphs": self.spec.max_graphs}


def attach(module: torch.nn.Module, compiled_forward: Callable[..., Any], spec: CudaGraphSpec,
           graphs: Any = None, weights: Any = None) -> GraphRunner:
    """Runs the module's calls through CUDA graphs of its compiled forward (with the weight streamer's
    copies when its weights are streamed)."""
    runner = GraphRunner(compiled_forward, spec, graphs, weights)
    module.forward = runner
    object.__setattr__(module, _GRAPHS_ATTR, runner)
    return runner


def report(model: torch.nn.Module) -> dict:
    """The buckets captured, and how many captures, replays, evictions and calls without a graph."""
    runner = getattr(model, _GRAPHS_ATTR, None)
    if runner is None:
        raise LatheError("lathe.cuda_graphs_report: the model runs no CUDA graphs (lathe.compile(..., cuda_graphs=...))")
    return runner.report()

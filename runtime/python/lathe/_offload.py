"""Activation offload in the graphs that run: the saved values the planner marks leave the GPU
between their last forward read and their first backward read.

The planner (recompute(..., offload=true)) names the values it can hide: each copy out is issued
after the value's last forward reader, on one device-to-host stream, and the compute stream waits for
all of them at the forward's end, where the value is let go; each copy in is issued early enough in
the backward to end by the first reader, which waits for it. Copies go into pinned host buffers
reused from step to step.

Why the forward's end (as torch's own activation offloading sinks its waits): a wait where the
planner estimates the copy ends stalled the compute stream 4-5 ms a step on the four
Llama-3-8B-dims layers, the planner's node times being slower than the GPU's; and letting the
allocator reuse the storage once the copy has read it (`Tensor.record_stream`) held it longer still,
as the allocator looks at the copy's event only at a later allocation and the host runs a step ahead
of the device: 0.63 GiB more reserved (docs/benchmarks.md, "Activation offload"). After a wait on the
compute stream the storage goes back in stream order, with no event to look at.

Four ops carry this through Inductor, as torch's own activation offloading does (a transfer and a
wait, the wait returning its input so that readers depend on it):
    host = lathe::offload(x)                 copy out, issued on the D2H stream
    host = lathe::offload_wait(host, x, a)   the compute stream waits for the copy; x's last use
    dev  = lathe::reload(host, a)            copy in, issued on the H2D stream into a new buffer
    dev  = lathe::reload_wait(dev, host)     the compute stream waits; the host buffer goes back to the pool
`a` is the output of the node the op must follow. On a CPU the copies are plain copies (the graphs
are the same, for tests).
"""

from __future__ import annotations

import logging
import operator
from typing import Optional

import torch
import torch.fx as fx
from torch.fx import has_side_effect

log = logging.getLogger("lathe")

OFFLOAD_PREFIX = "lathe_host_"
RELOAD_PREFIX = "lathe_reload_"

_streams: dict = {}  # (device, direction) -> torch.cuda.Stream
_events: dict = {}  # data_ptr of a copy's destination -> the event its copy recorded
_pool: dict = {}  # (sizes, strides, dtype) -> pinned host tensors free for reuse


def _stream(device: torch.device, direction: str):
    key = (device, direction)
    if key not in _streams:
        _streams[key] = torch.cuda.Stream(device=device)
    return _streams[key]


def _host_buffer(like: torch.Tensor) -> torch.Tensor:
    key = (tuple(like.shape), tuple(like.stride()), like.dtype)
    free = _pool.get(key)
    if free:
        return free.pop()
    return torch.empty_strided(like.shape, like.stride(), dtype=like.dtype, device="cpu", pin_memory=True)


def _copy(destination: torch.Tensor, source: torch.Tensor, device: torch.device, direction: str) -> None:
    """Copies on the direction's stream once the compute stream has reached this point (for a copy
    in, the compute stream has waited for the copy out that filled its host buffer)."""
    compute = torch.cuda.current_stream(device)
    stream = _stream(device, direction)
    stream.wait_stream(compute)
    with torch.cuda.stream(stream):
        destination.copy_(source, non_blocking=True)
        event = torch.cuda.Event()
        event.record(stream)
    _events[destination.data_ptr()] = event


def _wait(tensor: torch.Tensor, device: torch.device) -> None:
    event = _events.pop(tensor.data_ptr(), None)
    if event is None:
        raise RuntimeError("lathe offload: a wait without its copy (the graph's offload ops are out of order)")
    torch.cuda.current_stream(device).wait_event(event)


@torch.library.custom_op("lathe::offload", mutates_args=())
def offload(x: torch.Tensor) -> torch.Tensor:
    if x.device.type != "cuda":
        return x.clone()
    host = _host_buffer(x)
    _copy(host, x, x.device, "d2h")
    return host


@offload.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="cpu")


@torch.library.custom_op("lathe::reload", mutates_args=())
def reload(host: torch.Tensor, device: torch.device, after: Optional[torch.Tensor] = None) -> torch.Tensor:
    del after  # orders the op only
    # Allocated on the compute stream, so the allocator never hands the buffer to another stream.
    x = torch.empty_strided(host.shape, host.stride(), dtype=host.dtype, device=device)
    if x.device.type != "cuda":
        x.copy_(host)
        return x
    _copy(x, host, x.device, "h2d")
    return x


@reload.register_fake
def _(host: torch.Tensor, device: torch.device, after: Optional[torch.Tensor] = None) -> torch.Tensor:
    return torch.empty_strided(host.shape, host.stride(), dtype=host.dtype, device=device)


# The waits return their input (an alias, which custom_op does not allow): defined by schema.
_library = torch.library.Library("lathe", "FRAGMENT")
_library.define("offload_wait(Tensor(a) host, Tensor source, Tensor? after=None) -> Tensor(a)")
_library.define("reload_wait(Tensor(a) x, Tensor host) -> Tensor(a)")


@torch.library.impl("lathe::offload_wait", "CompositeExplicitAutograd")
def _offload_wait(host: torch.Tensor, source: torch.Tensor, after: Optional[torch.Tensor] = None) -> torch.Tensor:
    if source.device.type == "cuda":
        _wait(host, source.device)
    return host


@torch.library.impl("lathe::reload_wait", "CompositeExplicitAutograd")
def _reload_wait(x: torch.Tensor, host: torch.Tensor) -> torch.Tensor:
    if x.device.type == "cuda":
        _wait(x, x.device)
        # The copy in has ended: the next step's copy out may reuse the buffer.
        _pool.setdefault((tuple(host.shape), tuple(host.stride()), host.dtype), []).append(host)
    return x


@torch.library.register_fake("lathe::offload_wait")
def _(host: torch.Tensor, source: torch.Tensor, after: Optional[torch.Tensor] = None) -> torch.Tensor:
    return host


@torch.library.register_fake("lathe::reload_wait")
def _(x: torch.Tensor, host: torch.Tensor) -> torch.Tensor:
    return x


has_side_effect(torch.ops.lathe.offload_wait.default)
has_side_effect(torch.ops.lathe.reload_wait.default)


def _anchor(node: fx.Node, stop: fx.Node) -> Optional[fx.Node]:
    """The last tensor-valued node from `node` back to `stop` (excluded) that Inductor writes to a
    buffer of its own anyway: an op given it as an argument runs after that work, whatever order
    Inductor picks, and costs no memory. An elementwise value or a view read by an op Inductor cannot
    fuse with must be written out: anchored on the float32 SiLU gradient of a Llama FFN backward,
    a copy in made Inductor keep a 448 MiB buffer at the step's peak on an H100
    (docs/benchmarks.md)."""
    while node is not stop and node.op != "placeholder":
        if isinstance(node.meta.get("val"), torch.Tensor) and _written_out(node):
            return node
        node = node.prev
    return None


def _written_out(node: fx.Node) -> bool:
    """Whether Inductor gives the node's value a buffer whatever reads it: the parts of a tuple, and
    ops other than views, elementwise ops and constants (which it computes inside its readers)."""
    if node.op != "call_function":
        return False
    if node.target is operator.getitem:
        return True
    if not isinstance(node.target, torch._ops.OpOverload):
        return False
    reads_tensor = any(isinstance(a, fx.Node) for a in node.all_input_nodes)
    return reads_tensor and not node.target.is_view and torch.Tag.pointwise not in node.target.tags


def _set_meta(node: fx.Node, value: torch.Tensor) -> None:
    node.meta["val"] = value
    node.meta["tensor_meta"] = fx.passes.shape_prop._extract_tensor_metadata(value)


def apply(forward: fx.GraphModule, backward: fx.GraphModule, plan, num_fwd_outputs: int) -> list[str]:
    """Inserts the offload ops for the planner's (name, bytes) entries of `plan` (a GraphPlan);
    returns the names offloaded.

    Torch builds the backward in its own order (the autograd engine's), not the planner's: the copies
    in are placed again on that order, with the planner's node times and serial-stream rule
    (_native.place_copies_in). A value the graphs do not hold as planned (not saved), or whose copy in
    cannot end in time on the real order, stays on the GPU."""
    from . import _native

    fwd_graph, bwd_graph = forward.graph, backward.graph
    fwd_output = fwd_graph.output_node()
    outputs = list(fwd_output.args[0])
    saved_at = {n.name: i for i, n in enumerate(outputs) if i >= num_fwd_outputs and isinstance(n, fx.Node)}
    placeholders = {n.name: n for n in bwd_graph.find_nodes(op="placeholder")}
    last_placeholder = list(bwd_graph.find_nodes(op="placeholder"))[-1]
    # The backward's executions in torch's order, priced as the planner priced them.
    executions = [n for n in bwd_graph.nodes if n.op not in ("placeholder", "output")]
    position = {n: i for i, n in enumerate(executions)}
    seconds = [plan.plan.node_seconds.get(n.name, 0.0) for n in executions]
    entries = []
    for entry in plan.plan.offloaded:
        name = entry[0]
        index = saved_at.get(name)
        placeholder = placeholders.get(name)
        if index is None or placeholder is None or not placeholder.users or \
                not isinstance(outputs[index].meta.get("val"), torch.Tensor):
            log.debug("lathe: %s is not saved as planned; it stays on the GPU", name)
            continue
        entries.append((entry, index, placeholder, min(position[u] for u in placeholder.users)))
    boundaries = _native.place_copies_in(seconds, [e[3] for e in entries], [e[0][1] for e in entries], plan.hardware,
                                         plan.plan.offload_link_share)

    # The waits for the copies out go at the forward's end: after its last computed value, so that
    # no reordering of Inductor's brings one earlier.
    forward_end = _anchor(fwd_output.prev, None)
    done: list[str] = []
    for (entry, index, placeholder, first_read), boundary in zip(entries, boundaries):
        name = entry[0]
        if boundary is None:
            log.debug("lathe: %s cannot be back in time in torch's backward order; it stays on the GPU", name)
            continue
        value = outputs[index]
        device = value.meta["val"].device
        # Afresh per value: the previous value's copy out was inserted after its last reader.
        fwd_order = {n: i for i, n in enumerate(fwd_graph.nodes)}
        readers = [u for u in value.users if u is not fwd_output]
        last_read = max(readers, key=fwd_order.__getitem__, default=value)
        with fwd_graph.inserting_after(last_read):
            copy_out = fwd_graph.call_function(torch.ops.lathe.offload.default, (value,), name=f"{OFFLOAD_PREFIX}copy_{name}")
        _set_meta(copy_out, value.meta["val"].to("cpu"))  # a fake tensor: the same strides on the host
        with fwd_graph.inserting_before(fwd_output):
            host = fwd_graph.call_function(torch.ops.lathe.offload_wait.default, (copy_out, value, forward_end),
                                           name=f"{OFFLOAD_PREFIX}{name}")
        _set_meta(host, copy_out.meta["val"])
        outputs[index] = host

        # Backward: the host copy comes in as the saved input; the copy in before execution
        # `boundary`, the wait before the first reader.
        trigger = executions[boundary - 1] if boundary > 0 else last_placeholder
        original = placeholder.meta["val"]
        _set_meta(placeholder, host.meta["val"])
        with bwd_graph.inserting_after(trigger):
            copy_in = bwd_graph.call_function(torch.ops.lathe.reload.default,
                                              (placeholder, device, _anchor(trigger, last_placeholder)),
                                              name=f"{RELOAD_PREFIX}copy_{name}")
        _set_meta(copy_in, original)
        with bwd_graph.inserting_before(executions[first_read]):
            back = bwd_graph.call_function(torch.ops.lathe.reload_wait.default, (copy_in, placeholder),
                                           name=f"{RELOAD_PREFIX}{name}")
        _set_meta(back, original)
        for user in list(placeholder.users):
            if user is not copy_in and user is not back:
                user.replace_input_with(placeholder, back)
        done.append(name)
    if done:
        fwd_output.update_arg(0, tuple(outputs))
        fwd_graph.lint()
        bwd_graph.lint()
        forward.recompile()
        backward.recompile()
    return done

"""Activation offload in the graphs that run: the saved values the planner marks leave the GPU
between their last forward read and their first backward read.

The planner (recompute(..., offload=true)) names each value with where its copies go: the copy out
is issued after the value's last forward reader and the value is let go after `wait_after`; the copy
in is issued early enough in the backward to end by the first reader, which waits for it. Copies run
on one device-to-host and one host-to-device stream, into pinned host buffers reused from step to
step.

The compute stream never waits for a copy out: the value's storage is recorded on the copy stream
(`Tensor.record_stream`), so the allocator hands it out again only once the copy has read it, and
the copy in waits for the copy out that filled its host buffer. Making the compute stream wait at
`wait_after` instead cost 4-5 ms a step on the four Llama-3-8B-dims layers with the same peak
(docs/benchmarks.md, "Activation offload"): the planner's node times are slower than the GPU's, so
compute reached the wait before the copy had ended.

Four ops carry this through Inductor, as torch's own activation offloading does (a transfer and a
wait, the wait returning its input so that readers depend on it):
    host = lathe::offload(x)                 copy out, issued on the D2H stream
    host = lathe::offload_wait(host, x, a)   x's last use (then freed, reused once the copy has read it)
    dev  = lathe::reload(host, a)            copy in, issued on the H2D stream into a new buffer
    dev  = lathe::reload_wait(dev, host)     the compute stream waits; the host buffer goes back to the pool
`a` is the output of the node the op must follow. On a CPU the copies are plain copies (the graphs
are the same, for tests).
"""

from __future__ import annotations

import logging
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
    """Copies on the direction's stream once the compute stream has reached this point."""
    compute = torch.cuda.current_stream(device)
    stream = _stream(device, direction)
    stream.wait_stream(compute)
    if direction == "h2d":  # after the copy out that filled the host buffer
        stream.wait_event(_events.pop(source.data_ptr()))
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
        source.record_stream(_stream(source.device, "d2h"))
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
    """The last tensor-valued node from `node` back to `stop` (excluded): an op given it as an
    argument runs after `node`'s work, whatever order Inductor picks."""
    while node is not stop and node.op != "placeholder":
        if isinstance(node.meta.get("val"), torch.Tensor):
            return node
        node = node.prev
    return None


def _set_meta(node: fx.Node, value: torch.Tensor) -> None:
    node.meta["val"] = value
    node.meta["tensor_meta"] = fx.passes.shape_prop._extract_tensor_metadata(value)


def apply(forward: fx.GraphModule, backward: fx.GraphModule, plan, num_fwd_outputs: int) -> list[str]:
    """Inserts the offload ops for the planner's (name, wait after, bytes) entries of `plan` (a
    GraphPlan); returns the names offloaded.

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
    boundaries = _native.place_copies_in(seconds, [e[3] for e in entries], [e[0][2] for e in entries], plan.hardware,
                                         plan.plan.offload_link_share)

    fwd_nodes = {n.name: n for n in fwd_graph.nodes}
    done: list[str] = []
    for (entry, index, placeholder, first_read), boundary in zip(entries, boundaries):
        name, wait_after = entry[0], entry[1]
        if boundary is None:
            log.debug("lathe: %s cannot be back in time in torch's backward order; it stays on the GPU", name)
            continue
        value = outputs[index]
        device = value.meta["val"].device
        # Afresh per value: an earlier value's wait may read this one (its order anchor).
        fwd_order = {n: i for i, n in enumerate(fwd_graph.nodes)}
        # Forward (the planner's order): the copy out after the last reader, the wait after the
        # planned node, never before the copy.
        readers = [u for u in value.users if u is not fwd_output]
        last_read = max(readers, key=fwd_order.__getitem__, default=value)
        wait_node = fwd_nodes.get(wait_after)
        if wait_node is None or wait_node.op == "output" or fwd_order[wait_node] < fwd_order[last_read]:
            wait_node = last_read
        with fwd_graph.inserting_after(last_read):
            copy_out = fwd_graph.call_function(torch.ops.lathe.offload.default, (value,), name=f"{OFFLOAD_PREFIX}copy_{name}")
        _set_meta(copy_out, value.meta["val"].to("cpu"))  # a fake tensor: the same strides on the host
        with fwd_graph.inserting_after(wait_node if wait_node is not last_read else copy_out):
            host = fwd_graph.call_function(torch.ops.lathe.offload_wait.default,
                                           (copy_out, value, _anchor(wait_node, last_read)),
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

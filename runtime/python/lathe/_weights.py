"""Weight offload at run time: the layer units' weights live once in pinned host memory and are copied
to the GPU just in time, on a copy stream, by the plan passes::planOffload makes (lathe._native).

    model = lathe.compile(model, offload=dict(resident=0.3, policy="optimal"))
    model = lathe.compile(model, offload=dict(memory="20GiB"))

Units are the repeated layers (the largest ModuleList of one layer class, or `units=[names]`); every
other parameter stays resident. A streamed unit's load is a copy into one of a fixed set of GPU slots
(each the size of the largest streamed unit, as many as the budget left after the resident units
holds), issued at the plan's trigger segment: the copy stream waits for an event recorded on the
compute stream before that segment, and for the slot's previous user to have ended; the unit's
compute waits for the copy. Between its uses a unit's tensors point at their host copy, so nothing
outside the step reads another unit's weights. Loads whose trigger is in the previous step (the
plan's wrap-around) are issued there, for the next step.

Training: a step that records gradients (grad mode on, unit weights that require grad) is planned
as the forwards and then the backwards in reverse, each a segment; a unit's backward begins when the
gradient of its output is complete. Its weights are copied in again for it, into the slot its
forward used (the tensors autograd saved point there), and each streamed weight's gradient is
copied to a pinned host buffer on a copy-out stream as soon as it is complete, so the optimizer
steps the host copy (`param.grad` is on the host between steps; gradients already there are added
to). No copy for the next training step starts in this one: the optimizer has yet to update the
host copy. A forward whose backward never runs is dropped at the next forward.

Each kind of step (inference, training) has its own plan. Its first two steps run the `base` plan
(priced at the hardware profile's link); the second measures each segment (until the next begins,
so the code between units counts) and the copy stream's bandwidth under load, and from the third on
the chosen policy runs, planned with those numbers (`report(model)` returns them with the
prediction). The profiled step also measures what the step itself allocates beyond the weights
(activations, gradients): the weights' budget from then on is at most the device's free memory (within
the process's memory fraction) less that, so streaming on a small card leaves the step its room.
The fourth step of a kind is recorded (`timeline`: its segments and copies as CUDA events timed them,
beside the plan's simulation of the same step) and handed to `on_timeline` (lathe.compile writes it
to the run folder's lathe.profile.json, which `lathe profile` and the studio's Offload run dock read).

CUDA graphs (`cuda_graphs=` beside `offload=`, lathe._graphs): an inference step may be captured once
the plan has settled; the step's bounds wrap the model's forward, so a replay runs no streamer code.
Inside a capture the copies fork from the captured stream at their triggers (a step's head event for
those issued at its start) and join it at the step's end. The first captured step fixes the slot of
each copy for the next step, and every step after issues those copies into those slots, so any step
ends as every graph begins (docs/runtime.md, "CUDA graphs").
"""

from __future__ import annotations

import dataclasses
import functools
import weakref
from typing import Any, Optional, Sequence

import torch

from . import _native
from ._errors import LatheError
from ._options import OffloadSpec

_ALIGN = 256  # bytes: every tensor of a unit starts aligned in its flat buffer
_STREAMER_ATTR = "_lathe_weights"
# Of the memory the weights and the step share, what is kept free for the caching allocator's partly
# used segments (a 32 GB card ran out at 29.4 GB allocated with no reserve).
_FRAGMENTATION_RESERVE = 0.03
_PROFILED_STEP = 2  # call 1 compiles and warms up under `base`; call 2 is timed; call 3 runs the policy
# The step recorded as a timeline beside the plan's simulation: the second under the chosen policy
# (the first starts cold, without the copies a previous step would have issued).
_TIMELINE_STEP = _PROFILED_STEP + 2


def find_units(model: torch.nn.Module, names: Optional[Sequence[str]] = None) -> list[tuple[str, torch.nn.Module]]:
    """The layer units: the named submodules, or the children of the largest ModuleList whose
    children are all of one class (a transformer's layers)."""
    if names is not None:
        modules = dict(model.named_modules())
        missing = [name for name in names if name not in modules]
        if missing:
            raise LatheError(f"offload: {type(model).__name__} has no submodule {missing[0]!r}")
        return [(name, modules[name]) for name in names]
    best: list[tuple[str, torch.nn.Module]] = []
    for prefix, module in model.named_modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) >= 2 and len({type(m) for m in module}) == 1:
            children = [(f"{prefix}.{i}" if prefix else str(i), m) for i, m in enumerate(module)]
            if len(children) > len(best):
                best = children
    if not best:
        raise LatheError(f"offload: {type(model).__name__} has no list of repeated layers; name them with "
                         "offload=dict(units=[...])")
    return best


class CudaDevice:
    """Streams, events and buffers of one CUDA device: what the streamer schedules on."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.copy_stream = torch.cuda.Stream(device)
        self.copy_out_stream = torch.cuda.Stream(device)

    @property
    def compute(self) -> torch.cuda.Stream:
        """The stream the model's kernels run on: the caller's current one, read at each use (a serving
        loop's side stream; the stream a CUDA graph captures on), not the one current at attach."""
        return torch.cuda.current_stream(self.device)

    def host_buffer(self, nbytes: int) -> torch.Tensor:
        return torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)

    def device_buffer(self, nbytes: int) -> torch.Tensor:
        return torch.empty(nbytes, dtype=torch.uint8, device=self.device)

    def capturing(self) -> bool:
        """Whether the compute stream is being captured into a CUDA graph (nothing runs now; the copies
        and waits issued become the graph's)."""
        return torch.cuda.is_current_stream_capturing()

    def event(self) -> Any:
        # Inside a capture an event only orders streams (fork and join); a timing one is not needed there.
        return torch.cuda.Event(enable_timing=not self.capturing())

    def record(self, stream: Any, event: Any) -> None:
        event.record(stream)

    def wait(self, stream: Any, event: Any) -> None:
        stream.wait_event(event)

    def copy(self, destination: torch.Tensor, source: torch.Tensor) -> None:
        with torch.cuda.stream(self.copy_stream):
            destination.copy_(source, non_blocking=True)

    def copy_out(self, destination: torch.Tensor, source: torch.Tensor) -> Any:
        """Copies a device tensor to pinned host memory on the copy-out stream; returns the event after
        the copy. The source's memory is not reused before the copy has read it."""
        with torch.cuda.stream(self.copy_out_stream):
            destination.copy_(source, non_blocking=True)
        source.record_stream(self.copy_out_stream)
        done = torch.cuda.Event(enable_timing=True)
        done.record(self.copy_out_stream)
        return done

    def host_wait(self, event: Any) -> None:
        event.synchronize()

    def begin_compute(self, unit: int, slot: Optional[torch.Tensor]) -> None:
        pass

    def end_compute(self, unit: int) -> None:
        pass

    def seconds(self, start: Any, end: Any) -> float:
        return start.elapsed_time(end) / 1e3

    def synchronize(self) -> None:
        torch.cuda.synchronize(self.device)

    def free_bytes(self) -> int:
        """Free device memory, counting what the caching allocator holds unused, within the process's
        memory fraction (torch.cuda.set_per_process_memory_fraction) when one is set."""
        free, total = torch.cuda.mem_get_info(self.device)
        allocated = torch.cuda.memory_allocated(self.device)
        free += torch.cuda.memory_reserved(self.device) - allocated
        return min(free, int(torch.cuda.get_per_process_memory_fraction(self.device) * total) - allocated)

    def allocated_bytes(self) -> int:
        return torch.cuda.memory_allocated(self.device)

    def reset_peak(self) -> None:
        torch.cuda.reset_peak_memory_stats(self.device)

    def peak_bytes(self) -> int:
        return torch.cuda.max_memory_allocated(self.device)


@dataclasses.dataclass
class _Unit:
    name: str
    module: torch.nn.Module
    tensors: list  # the unit's parameters and buffers, each once
    layout: list  # (offset, nbytes, dtype, shape) per tensor in the flat buffer
    nbytes: int
    host: torch.Tensor  # pinned flat buffer: the one copy of the unit's weights
    host_views: list
    resident: Optional[torch.Tensor] = None  # flat device buffer while resident
    grad_views: Optional[list] = None  # pinned views the streamed tensors' gradients are copied into
    staging_views: Optional[list] = None  # the same, for gradients added to ones already there


def _views(flat: torch.Tensor, layout: list) -> list[torch.Tensor]:
    return [flat[offset:offset + nbytes].view(dtype).view(shape) for offset, nbytes, dtype, shape in layout]


def _point(tensors: list, views: list) -> None:
    for tensor, view in zip(tensors, views):
        tensor.data = view


INFERENCE, TRAINING = "inference", "training"


@dataclasses.dataclass
class _Request:
    unit: int
    deadline: int  # the segment whose use the copy serves: its run's first
    trigger: Any  # event on the compute stream the copy waits for; None: at once
    next_step: bool  # a wrap-around copy, for the next step


@dataclasses.dataclass
class _Load:
    unit: int
    slot: int
    deadline: int
    next_step: bool
    loaded: Any = None  # event on the copy stream after the copy
    start: Any = None  # event on the copy stream before it (profiled steps)


@dataclasses.dataclass
class _Kind:
    """Inference (the units' forwards) or training (forwards, then backwards in reverse): its segments,
    its plan, how many of its steps ran, what its profiled step measured."""
    segments: list  # the unit each segment of a step reads
    plan: Optional[dict] = None
    steps: int = 0
    measured: Optional[dict] = None


@dataclasses.dataclass
class _Step:
    id: int
    kind: str
    starts: list  # per segment: events when the compute stream reached it and when it could run (profiled)
    copies: list = dataclasses.field(default_factory=list)  # loads issued (profiled steps)
    backward: Optional[int] = None  # the backward segment running
    stash: dict = dataclasses.field(default_factory=dict)  # (unit, tensor) -> gradient held before the step
    grads: list = dataclasses.field(default_factory=list)  # (unit, tensor) copied to host this step
    copied_out: Any = None  # event after the last gradient copy
    ended: bool = False
    allocated_before: int = 0  # device bytes allocated as the step began (profiled steps)
    begin: Any = None  # event on the compute stream as the step began (timed steps)
    ends: list = dataclasses.field(default_factory=list)  # per segment: event at its end (timed steps)
    copies_out: list = dataclasses.field(default_factory=list)  # (unit, start, done) (timeline step)
    head: Any = None  # event on the compute stream as a captured step began: its copies' fork point
    copy_forked: bool = False  # a copy was captured in the step: the copy stream joined its capture


class WeightStreamer:
    """Runs a model's layer units with their weights streamed by an offload plan (module docstring)."""

    def __init__(self, model: torch.nn.Module, spec: OffloadSpec, device: Any, hardware: str) -> None:
        self.spec, self.device = spec, device
        self.h2d_bandwidth, self.launch_latency = _native.hardware_link(hardware)
        self.units: list[_Unit] = []
        unit_modules = find_units(model, spec.units)
        owned = set()
        for name, module in unit_modules:
            tensors = [t for t in list(module.parameters()) + list(module.buffers()) if id(t) not in owned]
            owned.update(id(t) for t in tensors)
            self.units.append(self._pin(name, module, tensors))
        self.rest_bytes = 0
        for tensor in list(model.parameters()) + list(model.buffers()):
            if id(tensor) not in owned:
                owned.add(id(tensor))
                if tensor.device != device.device:
                    tensor.data = tensor.data.to(device.device)
                self.rest_bytes += tensor.numel() * tensor.element_size()
        self.budget = self._budget()
        order = list(range(len(self.units)))
        self._kinds = {INFERENCE: _Kind(order), TRAINING: _Kind(order + order[::-1])}
        self.unplanned_loads = 0
        self.layout = 0  # changes whenever the GPU buffers the weights are read from do (_adopt)
        self._step: Optional[_Step] = None
        self._step_count = 0
        self.kind = INFERENCE
        self._timed_copies: list[_Load] = []
        self.timeline: Optional[dict] = None  # the recorded step beside its simulation (_record_timeline)
        self.on_timeline: Optional[Any] = None  # called with it once recorded
        self._adopt(INFERENCE)
        for position, (_, module) in enumerate(unit_modules):
            module.register_forward_pre_hook(lambda _m, _a, position=position: self._before(position))
            module.register_forward_hook(lambda _m, _a, output, position=position: self._after(position, output))
        # A tensor's hooks are held where the garbage collector does not look: through a weak reference,
        # the streamer (and the GPU memory it holds) goes with the model.
        streamer = weakref.ref(self)

        def gradient_hook(position: int, index: int) -> Any:
            def hook(tensor: torch.Tensor) -> None:
                if streamer() is not None:
                    streamer()._gradient(position, index, tensor)
            return hook

        for position, unit in enumerate(self.units):
            for index, tensor in enumerate(unit.tensors):
                if isinstance(tensor, torch.nn.Parameter) and tensor.requires_grad:
                    tensor.register_post_accumulate_grad_hook(gradient_hook(position, index))
        # The step's bounds wrap the model's forward (not hooks around its call): a graph runner that
        # replaces the forward with a replay of a captured step (_graphs.py) then runs none of this.
        forward = model.forward

        @functools.wraps(forward)
        def streamed_forward(*args: Any, **kwargs: Any) -> Any:
            self._begin_step()
            output = forward(*args, **kwargs)
            self._end_forward()
            return output

        model.forward = streamed_forward

    @property
    def unit_bytes(self) -> list[int]:
        return [u.nbytes for u in self.units]

    @property
    def plan(self) -> dict:
        return self._kinds[self.kind].plan

    @property
    def measured(self) -> Optional[dict]:
        return self._kinds[self.kind].measured

    # -- setup ---------------------------------------------------------------------------------------------

    def _pin(self, name: str, module: torch.nn.Module, tensors: list) -> _Unit:
        layout, offset = [], 0
        for tensor in tensors:
            nbytes = tensor.numel() * tensor.element_size()
            layout.append((offset, nbytes, tensor.dtype, tuple(tensor.shape)))
            offset += -(-nbytes // _ALIGN) * _ALIGN
        host = self.device.host_buffer(max(offset, 1))
        views = _views(host, layout)
        for tensor, view in zip(tensors, views):
            view.copy_(tensor.data)
            tensor.data = view  # the unit's earlier storage (device or pageable host) is released
        return _Unit(name, module, tensors, layout, offset, host, views)

    def _budget(self) -> int:
        """Bytes the units' weights may hold on the GPU: the user's memory less the other weights, or
        with only a resident fraction every unit's bytes (the fraction then bounds what stays)."""
        total = sum(self.unit_bytes)
        if self.spec.memory is not None:
            budget = self.spec.memory - self.rest_bytes
            if budget <= 0:
                raise LatheError(f"offload: memory {self.spec.memory} bytes does not hold the {self.rest_bytes} bytes "
                                 "of weights outside the layer units")
        else:
            budget = total
        return min(budget, self.device.free_bytes())

    def _plan(self, kind: str, policy: str, seconds: list[float], bandwidth: float, budget: int) -> dict:
        names = [u.name for u in self.units]
        try:
            return _native.plan_weight_offload(
                seconds, [[unit] for unit in self._kinds[kind].segments], self.unit_bytes, names, bandwidth,
                self.launch_latency, budget, kind == INFERENCE, policy, self.spec.resident)
        except LatheError as error:
            raise LatheError(f"offload: {error} (units {sum(self.unit_bytes)} bytes, weight budget {budget} bytes, "
                             f"{kind})") from None

    def _adopt(self, kind: str) -> None:
        """Makes a kind's plan current (the `base` plan until its profiled step): its resident set
        resident, slots for the rest, its copies indexed by trigger and its runs of uses by segment."""
        state = self._kinds[kind]
        if state.plan is None:
            state.plan = self._plan(kind, "base", [1e-3] * len(state.segments), self.h2d_bandwidth, self.budget)
        self.device.synchronize()  # nothing in flight: loads issued under the previous plan are dropped
        self.kind = kind
        plan = state.plan
        self._slots: list[torch.Tensor] = []  # the old slots go before new resident units take memory
        self._slot_views: dict[tuple[int, int], list] = {}  # (unit, slot) -> the unit's tensors in the slot
        for unit, keep in zip(self.units, plan["resident"]):
            if keep and unit.resident is None:
                unit.resident = self.device.device_buffer(unit.nbytes)
                unit.resident.copy_(unit.host)
                _point(unit.tensors, _views(unit.resident, unit.layout))
            elif not keep and unit.resident is not None:
                unit.resident = None
                _point(unit.tensors, unit.host_views)
            for tensor in unit.tensors:  # a gradient kept across steps follows its weight
                if tensor.grad is not None and tensor.grad.device != tensor.device:
                    tensor.grad = tensor.grad.to(tensor.device)
        streamed = [u.nbytes for u, keep in zip(self.units, plan["resident"]) if not keep]
        if streamed:  # as many slots as the plan holds streamed bytes at its peak
            slot_bytes = max(streamed)
            resident_bytes = sum(u.nbytes for u in self.units if u.resident is not None)
            count = max(1, min(-(-(plan["peak_weight_bytes"] - resident_bytes) // slot_bytes), len(streamed)))
            self._slots = [self.device.device_buffer(slot_bytes) for _ in range(count)]
        self._slot_free: list[Any] = [None] * len(self._slots)  # event after the slot's last user
        self._slot_load: list[Optional[_Load]] = [None] * len(self._slots)  # load issued, its run not ended
        self._slot_released = list(range(-len(self._slots), 0))  # release order: the oldest is reused first
        self._releases = 0
        self._active: set[int] = set()  # slots whose run of uses has begun
        self._loads: dict[int, _Load] = {}  # run's first segment -> its load, this step
        self._next_loads: dict[int, _Load] = {}  # the same, issued for the next step
        self._by_trigger: dict[int, list[dict]] = {}
        for prefetch in plan["prefetches"]:
            self._by_trigger.setdefault(prefetch["trigger"], []).append(prefetch)
        self._deferred: list[_Request] = []  # copies waiting for a slot, in issue order
        self._wrapped_issued = False
        # CUDA graphs (module docstring): the slot of each copy a step issues for the next, fixed by the
        # first captured step, so every step ends as each graph's replay begins; the copies for the
        # next step outside it, issued at the next step's start; whether the last step was captured.
        self._boundary: Optional[dict[int, int]] = None
        self._held: list[_Request] = []
        self._last_step_graphed = False  # captured, or replayed since: its events mean nothing now
        self.layout += 1  # slots and resident buffers made anew: graphs of earlier steps read freed memory
        # Runs of uses as the planner makes them (passes/offload.cpp, loadsFor): a run goes on while the
        # next segment that reads streamed weights reads the same unit.
        segments = state.segments
        self._run_start: list[Optional[int]] = [None] * len(segments)
        self._run_ends = [False] * len(segments)
        previous = None
        for seg, unit in enumerate(segments):
            if plan["resident"][unit] or self.units[unit].nbytes == 0:
                continue
            continues = previous is not None and segments[previous] == unit
            self._run_start[seg] = self._run_start[previous] if continues else seg
            if continues:
                self._run_ends[previous] = False
            self._run_ends[seg] = True
            previous = seg
        n = len(self.units)
        # Units whose backward starts a run of its own (a copy of their own): the plan's, once.
        self._backward_runs = frozenset(segments[seg] for seg in range(n, len(segments)) if self._run_start[seg] == seg)
        self._forward_slot: dict[int, int] = {}  # unit -> slot of its forward use this step (training)
        self._backward_copies: set[int] = set()  # units whose backward copy is yet to be issued this step

    # -- steps ---------------------------------------------------------------------------------------------

    def graphable(self, kind: str = INFERENCE) -> bool:
        """Whether a step of `kind` may be captured into a CUDA graph now: an inference step, its plan
        settled (profiled, its step recorded: both synchronise, which a capture cannot), and no step of
        another kind to switch from (a switch makes new slots)."""
        return (kind == INFERENCE and self.kind == INFERENCE and self._kinds[INFERENCE].steps >= _TIMELINE_STEP
                and (self._step is None or self._step.ended))

    def before_replay(self) -> None:
        """A graph of a captured step is about to replay. It begins with the loads the last step issued for
        the next in place: after an eager step, the compute stream waits for them (a replay is ordered
        against its own stream only). After it, the next eager step orders itself after the replay."""
        if not self._last_step_graphed:
            for load in self._next_loads.values():
                if load.loaded is not None:
                    self.device.wait(self.device.compute, load.loaded)
        self._last_step_graphed = True

    def _step_kind(self) -> str:
        training = torch.is_grad_enabled() and any(t.requires_grad for u in self.units for t in u.tensors)
        return TRAINING if training else INFERENCE

    def _begin_step(self) -> None:
        kind = self._step_kind()
        capturing = self.device.capturing()
        if capturing and not self.graphable(kind):
            raise LatheError("offload: a step of a streamed model is being captured into a CUDA graph before its "
                             "plan is settled (the first four inference steps profile and record it) or while "
                             "it trains; run those steps first, and capture inference only")
        if self._step is not None and not self._step.ended:
            self._abandon_step()
        if kind != self.kind:
            self._adopt(kind)
        state = self._kinds[kind]
        state.steps += 1
        self._step_count += 1
        step = _Step(self._step_count, kind, [None] * len(state.segments))
        step.ends = [None] * len(state.segments)
        self._step = step
        if capturing or self._last_step_graphed:
            self._after_graph_boundary(step, capturing)
        if state.steps == _TIMELINE_STEP:
            step.begin = self.device.event()
            self.device.record(self.device.compute, step.begin)
            step.copies = [load for load in self._timed_copies if load.next_step]  # issued for this step
        self._timed_copies = []
        if state.steps == _PROFILED_STEP:  # what the step holds beyond the weights: the room left them
            step.allocated_before = self.device.allocated_bytes()
            self.device.reset_peak()
        self._loads, self._next_loads = self._next_loads, {}
        self._deferred, self._held = self._held + self._deferred, []
        for request in self._deferred:  # copies for this step now
            request.next_step = False
        self._forward_slot = {}
        self._backward_copies = set(self._backward_runs)
        if kind == TRAINING:  # gradients held from earlier steps wait aside: this step's arrive on the host
            for u, unit in enumerate(self.units):
                if unit.resident is None:
                    for i, tensor in enumerate(unit.tensors):
                        if tensor.requires_grad and tensor.grad is not None:
                            step.stash[(u, i)] = tensor.grad
                            tensor.grad = None
        if not self._wrapped_issued:  # a cold start: the loads the previous step would have issued
            for prefetch in self.plan["prefetches"]:
                if prefetch["trigger"] > prefetch["deadline"] and prefetch["deadline"] not in self._loads:
                    self._request(_Request(prefetch["unit"], prefetch["deadline"], None, False))
        self._wrapped_issued = True
        self._drain()  # copies for this step that waited for a slot: slots the last step used are free now

    def _after_graph_boundary(self, step: Optional[_Step], capturing: bool) -> None:
        """The step follows a captured one, or is captured itself (with no step: a unit called on its own
        after a captured step). What earlier steps left in flight is ordered by one event on the compute
        stream, recorded now: after a capture, its graph's replays ran before this step in that stream's
        order (each ends with its copies joined); inside a capture nothing runs, and what earlier steps
        issued had ended when the capture began (it synchronises first), so their loads are in place and
        their slots free. Events recorded inside a capture mean nothing outside it, and one recorded
        outside cannot be waited on inside."""
        mark = self.device.event()
        self.device.record(self.device.compute, mark)
        if step is not None:
            step.head = mark if capturing else None
        landed = None if capturing else mark
        self._slot_free = [landed] * len(self._slots)
        for load in self._next_loads.values():
            load.loaded = landed
        for request in self._held + self._deferred:
            request.trigger = mark
        if capturing and self._boundary is None:  # every step from now on ends as this one begins
            self._boundary = {deadline: load.slot for deadline, load in self._next_loads.items()}
        self._last_step_graphed = False

    def _profiling(self) -> bool:
        step = self._step
        return step is not None and not step.ended and self._kinds[self.kind].steps == _PROFILED_STEP

    def _recording(self) -> bool:
        """The step recorded as a timeline; its copies include those the step before issued for it."""
        step = self._step
        return step is not None and not step.ended and self._kinds[self.kind].steps == _TIMELINE_STEP

    def _timing_copies(self) -> bool:
        step = self._step
        return step is not None and not step.ended and \
            self._kinds[self.kind].steps in (_PROFILED_STEP, _TIMELINE_STEP - 1, _TIMELINE_STEP)

    def _end_forward(self) -> None:
        if self._step is not None and self._step.kind == INFERENCE:
            self._end_step()

    def _end_step(self) -> None:
        step = self._step
        self._last_step_graphed = self.device.capturing()
        if self._last_step_graphed:
            # The graph ends with its copies joined to the compute stream (a capture must), so each
            # replay leaves the next step's loads in place.
            if self._deferred:
                raise LatheError("offload: a captured step ended with copies still waiting for a slot; its graph "
                                 "would not leave the next step's weights in place")
            if step.copy_forked:
                joined = self.device.event()
                self.device.record(self.device.copy_stream, joined)
                self.device.wait(self.device.compute, joined)
        if self._profiling() or self._recording():
            end = self.device.event()
            self.device.record(self.device.compute, end)
            profiling = self._profiling()
            step.ended = True
            if profiling:
                self._measure_and_replan(step, end)
            else:
                self._record_timeline(step, end)
        step.ended = True

    def _abandon_step(self) -> None:
        """A training step whose backward never ran: its copies are dropped, its gradients restored,
        and a late backward of it is refused (its slots hold other weights now)."""
        step = self._step
        step.ended = True
        self.device.synchronize()
        for slot, load in enumerate(self._slot_load):
            if load is not None:
                self._slot_free[slot] = load.loaded
                self._slot_load[slot] = None
        self._active.clear()
        self._loads, self._next_loads, self._deferred, self._held = {}, {}, [], []
        self._wrapped_issued = False
        for unit in self.units:
            if unit.resident is None:
                _point(unit.tensors, unit.host_views)
        for (u, i), grad in step.stash.items():
            self.units[u].tensors[i].grad = grad

    # -- copies --------------------------------------------------------------------------------------------

    def _choose_slot(self, request: _Request) -> Optional[int]:
        """A training step's backward copy goes where the unit's forward copy went (the tensors autograd
        saved point there); any other copy takes the free slot released longest ago, leaving to a
        wrap-around copy none that a backward copy of this step still needs."""
        n = len(self.units)
        if not request.next_step and request.deadline >= n and request.unit in self._forward_slot:
            slot = self._forward_slot[request.unit]
            return slot if self._slot_load[slot] is None else None
        if request.next_step and self._boundary is not None:  # the slot every graph's replay reads it from
            slot = self._boundary[request.deadline]
            return slot if self._slot_load[slot] is None else None
        reserved = {self._forward_slot[u] for u in self._backward_copies if u in self._forward_slot} \
            if request.next_step else set()
        free = [s for s in range(len(self._slots)) if self._slot_load[s] is None and s not in reserved]
        return min(free, key=lambda s: self._slot_released[s]) if free else None

    def _request(self, request: _Request) -> None:
        """Issues a copy now, or after the copies already waiting when its slot is still in use. Once a
        step was captured, a copy for the next step that the captured step found not issued waits for
        the next step's start, where the graph issues it."""
        if request.next_step and self._boundary is not None and request.deadline not in self._boundary:
            self._held.append(request)
            return
        if self._deferred or not self._try_issue(request):
            self._deferred.append(request)

    def _drain(self) -> None:
        while self._deferred and self._try_issue(self._deferred[0]):
            self._deferred.pop(0)

    def _try_issue(self, request: _Request) -> bool:
        slot = self._choose_slot(request)
        if slot is None:
            return False
        self._copy(request, slot)
        return True

    def _copy(self, request: _Request, slot: int) -> None:
        copy = self.device.copy_stream
        trigger = request.trigger
        if self.device.capturing():
            self._step.copy_forked = True
            if trigger is None:  # the copy stream joins a capture through an event of the captured stream
                trigger = self._step.head
        if trigger is not None:
            self.device.wait(copy, trigger)
        if self._slot_free[slot] is not None:
            self.device.wait(copy, self._slot_free[slot])
        load = _Load(request.unit, slot, request.deadline, request.next_step, loaded=self.device.event())
        if self._timing_copies():
            load.start = self.device.event()
            self.device.record(copy, load.start)
            if self._profiling() or (self._recording() and not request.next_step):
                self._step.copies.append(load)
            self._timed_copies.append(load)
        info = self.units[request.unit]
        self.device.copy(self._slots[slot][:info.nbytes], info.host)
        self.device.record(copy, load.loaded)
        self._slot_load[slot] = load
        (self._next_loads if request.next_step else self._loads)[request.deadline] = load
        if not request.next_step and request.deadline >= len(self.units):
            self._backward_copies.discard(request.unit)

    def _load_unforeseen(self, unit: int, deadline: int) -> _Load:
        """A use the plan did not foresee (another call order): its copy is issued now, into a slot
        freed of a load not yet in use when none is free."""
        self.unplanned_loads += 1
        self._deferred = [r for r in self._deferred if r.next_step or r.deadline != deadline]
        request = _Request(unit, deadline, None, False)
        slot = self._choose_slot(request)
        if slot is None:
            fixed = request.deadline >= len(self.units) and unit in self._forward_slot
            idle = [s for s in range(len(self._slots)) if s not in self._active]
            slot = self._forward_slot[unit] if fixed else min(idle, key=lambda s: self._slot_released[s])
            pending = self._slot_load[slot]
            del (self._next_loads if pending.next_step else self._loads)[pending.deadline]
            self._slot_free[slot] = pending.loaded
            self._slot_load[slot] = None
        self._copy(request, slot)
        return self._loads[deadline]

    # -- segments ------------------------------------------------------------------------------------------

    def _begin_segment(self, seg: int) -> None:
        prefetches = self._by_trigger.get(seg, [])
        profiling = self._profiling() or self._recording()
        reached = None  # the compute stream has reached the segment: every earlier one has ended
        if prefetches or profiling:
            reached = self.device.event()
            self.device.record(self.device.compute, reached)
        for prefetch in prefetches:
            self._request(_Request(prefetch["unit"], prefetch["deadline"], reached,
                                   prefetch["trigger"] > prefetch["deadline"]))
        position = self._kinds[self.kind].segments[seg]
        info = self.units[position]
        slot = None
        first = self._run_start[seg]
        if first is not None:
            load = self._loads.get(first)
            if load is None:
                load = self._load_unforeseen(position, first)
            if first == seg:
                if load.loaded is not None:  # None: in place before a captured step began
                    self.device.wait(self.device.compute, load.loaded)
                self._active.add(load.slot)
                if seg < len(self.units):
                    self._forward_slot[position] = load.slot
            key = (position, load.slot)
            if key not in self._slot_views:  # made once per unit and slot, not on every call
                self._slot_views[key] = _views(self._slots[load.slot], info.layout)
            _point(info.tensors, self._slot_views[key])
            slot = self._slots[load.slot]
        if profiling:  # a wait for the segment's weights lies between reached and ready: not its compute
            ready = self.device.event()
            self.device.record(self.device.compute, ready)
            self._step.starts[seg] = (reached, ready)
        self.device.begin_compute(position, slot)

    def _end_segment(self, seg: int) -> None:
        position = self._kinds[self.kind].segments[seg]
        self.device.end_compute(position)
        if self._recording() or self._profiling():
            end = self.device.event()
            self.device.record(self.device.compute, end)
            self._step.ends[seg] = end
        if self._run_start[seg] is None or not self._run_ends[seg]:
            return
        load = self._loads.pop(self._run_start[seg])
        freed = self.device.event()
        self.device.record(self.device.compute, freed)
        self._slot_free[load.slot] = freed
        self._slot_load[load.slot] = None
        self._active.discard(load.slot)
        self._slot_released[load.slot] = self._releases
        self._releases += 1
        _point(self.units[position].tensors, self.units[position].host_views)
        self._drain()

    def _before(self, position: int) -> None:
        step = self._step
        if (step is None or step.ended) and self.kind != INFERENCE:  # a unit called on its own, after a step
            self._adopt(INFERENCE)
        elif (step is None or step.ended) and self._last_step_graphed:
            self._after_graph_boundary(None, False)
        self._begin_segment(position)

    def _after(self, position: int, output: Any) -> None:
        self._end_segment(position)
        step = self._step
        outputs = output if isinstance(output, (tuple, list)) else (output,)
        if step is None or step.ended or step.kind != TRAINING:
            if self.units[position].resident is None and any(
                    isinstance(t, torch.Tensor) and t.requires_grad for t in outputs):
                raise LatheError("offload: gradients flow through streamed weights that need none (a backward would "
                                 "read slots reused since); run the step under torch.no_grad(), or let the weights "
                                 "require grad to train them")
            return
        tensor = next((t for t in outputs if isinstance(t, torch.Tensor) and t.requires_grad), None)
        if tensor is None:
            raise LatheError(f"offload: layer unit {self.units[position].name} returned nothing that needs a gradient "
                             "in a training step")
        tensor.register_hook(lambda _grad, step=step, position=position: self._backward_reaches(step, position))

    def _backward_reaches(self, step: _Step, position: int) -> None:
        """The gradient of a unit's output is complete: the previous unit's backward has ended and
        this unit's begins."""
        if step is not self._step or step.ended:
            raise LatheError("offload: a backward of an earlier step; its layer units' slots hold other weights now "
                             "(call backward before the next forward)")
        if step.backward is None:
            torch.autograd.Variable._execution_engine.queue_callback(lambda: self._backward_done(step))
        else:
            self._end_segment(step.backward)
        step.backward = 2 * len(self.units) - 1 - position
        self._begin_segment(step.backward)

    def _backward_done(self, step: _Step) -> None:
        if step is not self._step or step.ended:
            return
        if step.backward is not None:
            self._end_segment(step.backward)
        if step.copied_out is not None:
            self.device.host_wait(step.copied_out)
        for u, i in step.grads:
            unit = self.units[u]
            tensor, held = unit.tensors[i], step.stash.pop((u, i), None)
            if held is None:
                tensor.grad = unit.grad_views[i]
            else:
                tensor.grad = held.add_(unit.staging_views[i])
        for (u, i), held in step.stash.items():
            self.units[u].tensors[i].grad = held
        self._end_step()

    def _gradient(self, position: int, index: int, tensor: torch.Tensor) -> None:
        """A streamed weight's gradient is complete on the GPU: copied to its pinned host view on the
        copy-out stream, and the GPU copy let go."""
        step = self._step
        unit = self.units[position]
        if step is None or step.kind != TRAINING or step.ended or unit.resident is not None:
            return
        if unit.grad_views is None:
            unit.grad_views = _views(self.device.host_buffer(unit.nbytes), unit.layout)
        views = unit.grad_views
        if (position, index) in step.stash:
            if unit.staging_views is None:
                unit.staging_views = _views(self.device.host_buffer(unit.nbytes), unit.layout)
            views = unit.staging_views
        ready = self.device.event()
        self.device.record(self.device.compute, ready)
        self.device.wait(self.device.copy_out_stream, ready)
        start = None
        if self._recording():
            start = self.device.event()
            self.device.record(self.device.copy_out_stream, start)
        step.copied_out = self.device.copy_out(views[index], tensor.grad)
        if start is not None:
            step.copies_out.append((position, start, step.copied_out))
        tensor.grad = None
        step.grads.append((position, index))

    def _measure_and_replan(self, step: _Step, end: Any) -> None:
        self.device.synchronize()
        if any(start is None for start in step.starts):
            raise LatheError("offload: a layer unit did not run in the profiled step; name the units that run "
                             "with offload=dict(units=[...])")
        # A segment lasts from when it could run until the compute stream reaches the next one: the code
        # between units counts, a wait for the next unit's weights does not. A training step's last
        # segment ends with it (what follows is the host waiting for the gradients' copies).
        reached = [r for r, _ in step.starts[1:]] + [step.ends[-1] if step.kind == TRAINING else end]
        seconds = [self.device.seconds(ready, until) for (_, ready), until in zip(step.starts, reached)]
        copied = sum(self.units[load.unit].nbytes for load in step.copies)
        copy_seconds = sum(self.device.seconds(load.start, load.loaded) for load in step.copies)
        bandwidth = copied / copy_seconds if copied and copy_seconds > 0 else self.h2d_bandwidth
        # The weights may take what the device has free once the step's own tensors (activations,
        # gradients) have their room, and no more than the budget asked for.
        step_bytes = max(0, self.device.peak_bytes() - step.allocated_before)
        held = sum(u.nbytes for u in self.units if u.resident is not None) + sum(int(s.numel()) for s in self._slots)
        room = self.device.free_bytes() + held
        budget = min(self.budget, int(room * (1 - _FRAGMENTATION_RESERVE)) - step_bytes)
        state = self._kinds[step.kind]
        state.measured = {"segment_seconds": seconds, "h2d_bandwidth": bandwidth, "copies": len(step.copies),
                          "step_bytes": step_bytes, "weight_budget_bytes": budget}
        state.plan = self._plan(step.kind, self.spec.policy, seconds, bandwidth, budget)
        self._adopt(step.kind)

    def _record_timeline(self, step: _Step, end: Any) -> None:
        """The step as the GPU ran it beside the plan's simulation of it (lathe.profile/1's
        weight_offload), handed to `on_timeline` (a run folder's profile)."""
        self.device.synchronize()
        state, plan = self._kinds[step.kind], self.plan
        segments = state.segments

        def at(event: Any) -> float:
            return self.device.seconds(step.begin, event)

        measured_segments = [{"unit": segments[seg], "start": at(ready), "end": at(end_event)}
                             for seg, ((_, ready), end_event) in enumerate(zip(step.starts, step.ends))
                             if ready is not None and end_event is not None]
        self.timeline = {
            "kind": step.kind, "policy": plan["policy"], "units": [u.name for u in self.units],
            "unit_bytes": list(self.unit_bytes),
            "resident": [u.name for u, keep in zip(self.units, plan["resident"]) if keep],
            "h2d_bandwidth": state.measured["h2d_bandwidth"] if state.measured else self.h2d_bandwidth,
            "simulated": {
                "step_seconds": plan["step_seconds"],
                "segments": [{"unit": segments[seg], "start": span["start"], "end": span["end"]}
                             for seg, span in enumerate(plan["segments"])],
                "h2d": [{"unit": p["unit"], "start": p["start"], "end": p["end"]} for p in plan["prefetches"]],
                "d2h": []},
            "measured": {
                "step_seconds": at(end), "segments": measured_segments,
                "h2d": sorted(({"unit": load.unit, "start": at(load.start), "end": at(load.loaded)} for load in step.copies),
                              key=lambda span: span["start"]),
                "d2h": [{"unit": unit, "start": at(start), "end": at(done)} for unit, start, done in step.copies_out]},
        }
        if self.on_timeline is not None:
            self.on_timeline(self.timeline)

    # -- introspection -------------------------------------------------------------------------------------

    def report(self) -> dict:
        plan = self.plan
        return {
            "kind": self.kind,
            "policy": plan["policy"],
            "units": [u.name for u in self.units],
            "segments": [self.units[u].name for u in self._kinds[self.kind].segments],
            "resident": [u.name for u, keep in zip(self.units, plan["resident"]) if keep],
            "unit_bytes": list(self.unit_bytes),
            "budget_bytes": plan["budget_bytes"],
            "slots": len(self._slots),
            "slot_bytes": int(self._slots[0].numel()) if self._slots else 0,
            "predicted_step_seconds": plan["step_seconds"],
            "floor_seconds": plan["floor_seconds"],
            "bubble_seconds": plan["bubble_seconds"],
            "peak_weight_bytes": plan["peak_weight_bytes"],
            "streamed_bytes": plan["streamed_bytes"],
            "measured": self.measured,
            "unplanned_loads": self.unplanned_loads,
        }


def default_device() -> CudaDevice:
    if not torch.cuda.is_available():
        raise LatheError("offload: streaming weights needs a CUDA device")
    return CudaDevice(torch.device("cuda", torch.cuda.current_device()))


def attach(model: torch.nn.Module, spec: OffloadSpec, hardware: str, device: Any = None) -> WeightStreamer:
    """Streams `model`'s layer units under `spec` (weights move to pinned host memory now), on the
    current CUDA device unless a device layer is given."""
    if getattr(model, _STREAMER_ATTR, None) is not None:
        raise LatheError("offload: this model's weights are already streamed")
    device = device if device is not None else default_device()
    streamer = WeightStreamer(model, spec, device, hardware)
    object.__setattr__(model, _STREAMER_ATTR, streamer)
    _guard_moves(model, device)
    return streamer


def _guard_moves(model: torch.nn.Module, device: Any) -> None:
    """`.cuda()` / `.to(device)` on a streamed model, or on any module inside it (a layer, one of its
    linears), change nothing (the weights are where the plan keeps them); a cast or a move elsewhere
    is refused rather than silently undoing the plan."""
    target = device.device

    def guard(module: torch.nn.Module) -> Any:
        def _apply(fn: Any, recurse: bool = True) -> torch.nn.Module:
            probe = fn(torch.zeros(1, dtype=torch.bfloat16))
            if probe.dtype == torch.bfloat16 and probe.device.type == target.type:
                return module
            raise LatheError(f"offload: {type(model).__name__}'s weights are streamed by lathe; cast or move it "
                             "before lathe.compile(..., offload=...)")
        return _apply

    for module in model.modules():
        object.__setattr__(module, "_apply", guard(module))


def report(model: torch.nn.Module) -> dict:
    """What the weight streamer decided and measured: units, resident set, slots, the plan's
    predicted step and floor, the profiled compute and bandwidth, unplanned loads."""
    streamer = getattr(model, _STREAMER_ATTR, None)
    if streamer is None:
        raise LatheError("lathe.offload_report: the model's weights are not streamed (lathe.compile(..., offload=...))")
    return streamer.report()


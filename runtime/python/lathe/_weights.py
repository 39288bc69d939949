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

Steps 1 and 2 run the `base` plan (priced at the hardware profile's link); step 2 measures each
unit's compute and the copy stream's bandwidth under load, and step 3 on runs the chosen policy
planned with those numbers (`report(model)` returns them with the prediction).

Streaming is for inference (no_grad / inference_mode): a backward would read weights whose slot has
been reused, so a step that records gradients through streamed weights is refused.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional, Sequence

import torch

from . import _native
from ._errors import LatheError
from ._options import OffloadSpec

_ALIGN = 256  # bytes: every tensor of a unit starts aligned in its flat buffer
_STREAMER_ATTR = "_lathe_weights"
_PROFILED_STEP = 2  # call 1 compiles and warms up under `base`; call 2 is timed; call 3 runs the policy


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
        self.compute = torch.cuda.current_stream(device)
        self.copy_stream = torch.cuda.Stream(device)

    def host_buffer(self, nbytes: int) -> torch.Tensor:
        return torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)

    def device_buffer(self, nbytes: int) -> torch.Tensor:
        return torch.empty(nbytes, dtype=torch.uint8, device=self.device)

    def event(self) -> Any:
        return torch.cuda.Event(enable_timing=True)

    def record(self, stream: Any, event: Any) -> None:
        event.record(stream)

    def wait(self, stream: Any, event: Any) -> None:
        stream.wait_event(event)

    def copy(self, destination: torch.Tensor, source: torch.Tensor) -> None:
        with torch.cuda.stream(self.copy_stream):
            destination.copy_(source, non_blocking=True)

    def begin_compute(self, unit: int, slot: Optional[torch.Tensor]) -> None:
        pass

    def end_compute(self, unit: int) -> None:
        pass

    def seconds(self, start: Any, end: Any) -> float:
        return start.elapsed_time(end) / 1e3

    def synchronize(self) -> None:
        torch.cuda.synchronize(self.device)

    def free_bytes(self) -> int:
        """Free device memory, counting what the caching allocator holds unused."""
        free = torch.cuda.mem_get_info(self.device)[0]
        return free + torch.cuda.memory_reserved(self.device) - torch.cuda.memory_allocated(self.device)


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


def _views(flat: torch.Tensor, layout: list) -> list[torch.Tensor]:
    return [flat[offset:offset + nbytes].view(dtype).view(shape) for offset, nbytes, dtype, shape in layout]


def _point(tensors: list, views: list) -> None:
    for tensor, view in zip(tensors, views):
        tensor.data = view


@dataclasses.dataclass
class _Load:
    unit: int
    slot: int
    loaded: Any = None  # event on the copy stream after the copy
    start: Any = None  # event on the copy stream before it (profiled steps)


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
        self.step_index = 0
        self.unplanned_loads = 0
        self.measured: Optional[dict] = None
        self._adopt(self._plan("base", [1e-3] * len(self.units), self.h2d_bandwidth))
        for position, (_, module) in enumerate(unit_modules):
            module.register_forward_pre_hook(lambda _m, _a, position=position: self._before(position))
            module.register_forward_hook(lambda _m, _a, _o, position=position: self._after(position))
        model.register_forward_pre_hook(lambda _m, _a: self._begin_step())
        model.register_forward_hook(lambda _m, _a, _o: self._end_step())

    @property
    def unit_bytes(self) -> list[int]:
        return [u.nbytes for u in self.units]

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

    def _plan(self, policy: str, seconds: list[float], bandwidth: float) -> dict:
        names = [u.name for u in self.units]
        try:
            return _native.plan_weight_offload(
                seconds, [[i] for i in range(len(self.units))], self.unit_bytes, names, bandwidth, self.launch_latency,
                self.budget, True, policy, self.spec.resident)
        except LatheError as error:
            raise LatheError(f"offload: {error} (units {sum(self.unit_bytes)} bytes, budget {self.budget} bytes)") from None

    def _adopt(self, plan: dict) -> None:
        """Makes a plan's resident set resident, sizes the slots for the rest and indexes its copies."""
        self.device.synchronize()  # nothing in flight: loads issued under the previous plan are dropped
        self.plan = plan
        self._slots = []
        for unit, keep in zip(self.units, plan["resident"]):
            if keep and unit.resident is None:
                unit.resident = self.device.device_buffer(unit.nbytes)
                unit.resident.copy_(unit.host)
                _point(unit.tensors, _views(unit.resident, unit.layout))
            elif not keep and unit.resident is not None:
                unit.resident = None
                _point(unit.tensors, unit.host_views)
        streamed = [u.nbytes for u, keep in zip(self.units, plan["resident"]) if not keep]
        if streamed:  # as many slots as the plan holds streamed bytes at its peak
            slot_bytes = max(streamed)
            resident_bytes = sum(u.nbytes for u in self.units if u.resident is not None)
            count = max(1, min(-(-(plan["peak_weight_bytes"] - resident_bytes) // slot_bytes), len(streamed)))
            self._slots = [self.device.device_buffer(slot_bytes) for _ in range(count)]
        self._slot_views: dict[tuple[int, int], list] = {}  # (unit, slot) -> the unit's tensors in the slot
        self._slot_free: list[Any] = [None] * len(self._slots)  # event after the slot's last user
        self._slot_user: list[Optional[int]] = [None] * len(self._slots)  # unit whose use is pending
        self._next_slot = 0
        self._loads: dict[int, _Load] = {}  # unit -> its issued load for the coming use
        self._by_trigger: dict[int, list[dict]] = {}
        for prefetch in plan["prefetches"]:
            self._by_trigger.setdefault(prefetch["trigger"], []).append(prefetch)
        self._deferred: list[tuple[int, Any]] = []  # (unit, trigger event) waiting for a slot's user to end
        self._wrapped_issued = False

    # -- the step ------------------------------------------------------------------------------------------

    def _profiling(self) -> bool:
        return self.step_index == _PROFILED_STEP

    def _begin_step(self) -> None:
        self.step_index += 1
        self._segment_events: list[tuple[Any, Any]] = [(None, None)] * len(self.units)
        self._copy_events: list[_Load] = []
        if not self._wrapped_issued:  # a cold start: the loads the previous step would have issued
            for prefetch in self.plan["prefetches"]:
                if prefetch["trigger"] > prefetch["deadline"] and prefetch["unit"] not in self._loads:
                    self._issue(prefetch["unit"], None)
            self._wrapped_issued = True

    def _end_step(self) -> None:
        if self._profiling():
            self._measure_and_replan()

    def _issue(self, unit: int, trigger: Any) -> None:
        slot = self._next_slot
        if self._slot_user[slot] is not None:  # its user has not run yet: copy once it has ended
            self._deferred.append((unit, trigger))
            return
        self._next_slot = (slot + 1) % len(self._slots)
        copy = self.device.copy_stream
        if trigger is not None:
            self.device.wait(copy, trigger)
        if self._slot_free[slot] is not None:
            self.device.wait(copy, self._slot_free[slot])
        load = _Load(unit, slot, loaded=self.device.event())
        if self._profiling():
            load.start = self.device.event()
            self.device.record(copy, load.start)
            self._copy_events.append(load)
        info = self.units[unit]
        self.device.copy(self._slots[slot][:info.nbytes], info.host)
        self.device.record(copy, load.loaded)
        self._slot_user[slot] = unit
        self._loads[unit] = load

    def _before(self, position: int) -> None:
        info = self.units[position]
        if torch.is_grad_enabled() and info.resident is None and any(t.requires_grad for t in info.tensors):
            raise LatheError("offload: streamed weights are for inference; run the step under torch.no_grad() or "
                             "torch.inference_mode() (a backward would read weights whose slot was reused)")
        triggers = self._by_trigger.get(position, [])
        if triggers:
            event = self.device.event()
            self.device.record(self.device.compute, event)
            for prefetch in triggers:
                self._issue(prefetch["unit"], event)
        slot = None
        if info.resident is None:
            if position not in self._loads:  # a use the plan did not foresee (another call order): load now
                self.unplanned_loads += 1
                self._deferred = [entry for entry in self._deferred if entry[0] != position]
                if self._slot_user[self._next_slot] is not None:
                    self._drop_pending(self._next_slot)
                self._issue(position, None)
            load = self._loads[position]
            self.device.wait(self.device.compute, load.loaded)
            slot = self._slots[load.slot]
            key = (position, load.slot)
            if key not in self._slot_views:  # made once per unit and slot, not on every call
                self._slot_views[key] = _views(slot, info.layout)
            _point(info.tensors, self._slot_views[key])
        if self._profiling():
            start = self.device.event()
            self.device.record(self.device.compute, start)
            self._segment_events[position] = (start, None)
        self.device.begin_compute(position, slot)

    def _after(self, position: int) -> None:
        self.device.end_compute(position)
        info = self.units[position]
        if self._profiling():
            end = self.device.event()
            self.device.record(self.device.compute, end)
            self._segment_events[position] = (self._segment_events[position][0], end)
        if info.resident is None:
            load = self._loads.pop(position)
            freed = self.device.event()
            self.device.record(self.device.compute, freed)
            self._slot_free[load.slot] = freed
            self._slot_user[load.slot] = None
            _point(info.tensors, info.host_views)
            deferred, self._deferred = self._deferred, []
            for unit, trigger in deferred:
                self._issue(unit, trigger)

    def _drop_pending(self, slot: int) -> None:
        """Frees a slot whose load has not been used yet (its unit loads again when it runs)."""
        load = self._loads.pop(self._slot_user[slot])
        self._slot_free[slot] = load.loaded
        self._slot_user[slot] = None

    def _measure_and_replan(self) -> None:
        self.device.synchronize()
        seconds = []
        for start, end in self._segment_events:
            if start is None or end is None:
                raise LatheError("offload: a layer unit did not run in the profiled step; name the units that run "
                                 "with offload=dict(units=[...])")
            seconds.append(self.device.seconds(start, end))
        copied = sum(self.units[load.unit].nbytes for load in self._copy_events)
        copy_seconds = sum(self.device.seconds(load.start, load.loaded) for load in self._copy_events)
        bandwidth = copied / copy_seconds if copied and copy_seconds > 0 else self.h2d_bandwidth
        self.measured = {"unit_seconds": seconds, "h2d_bandwidth": bandwidth, "copies": len(self._copy_events)}
        self._adopt(self._plan(self.spec.policy, seconds, bandwidth))

    # -- introspection -------------------------------------------------------------------------------------

    def report(self) -> dict:
        plan = self.plan
        return {
            "policy": plan["policy"],
            "units": [u.name for u in self.units],
            "resident": [u.name for u, keep in zip(self.units, plan["resident"]) if keep],
            "unit_bytes": list(self.unit_bytes),
            "budget_bytes": self.budget,
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
    """`.cuda()` / `.to(device)` on a streamed model change nothing (its weights are where the plan
    keeps them); a cast or a move elsewhere is refused rather than silently undoing the plan."""
    target = device.device

    def _apply(fn: Any, recurse: bool = True) -> torch.nn.Module:
        probe = fn(torch.zeros(1, dtype=torch.bfloat16))
        if probe.dtype == torch.bfloat16 and probe.device.type == target.type:
            return model
        raise LatheError(f"offload: {type(model).__name__}'s weights are streamed by lathe; cast or move it before "
                         "lathe.compile(..., offload=...)")

    object.__setattr__(model, "_apply", _apply)


def report(model: torch.nn.Module) -> dict:
    """What the weight streamer decided and measured: units, resident set, slots, the plan's
    predicted step and floor, the profiled compute and bandwidth, unplanned loads."""
    streamer = getattr(model, _STREAMER_ATTR, None)
    if streamer is None:
        raise LatheError("lathe.offload_report: the model's weights are not streamed (lathe.compile(..., offload=...))")
    return streamer.report()


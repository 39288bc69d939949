"""Weight offload at run time (lathe._weights) on a simulated device: the streamer's copies, waits and
slots are checked on a clock per stream (no unit computes before its weights arrive, no slot is
overwritten while a unit reads it, weight memory within the budget, copies for the next step issued
in this one), and the streamed model computes exactly what the resident one does."""

import copy
import weakref

import pytest
import torch

import lathe
from lathe import _options, _weights

UNITS = 6
WIDTH = 64
# One unit: a 64x64 fp32 weight and its bias, each aligned in the unit's flat buffer.
UNIT_BYTES = WIDTH * WIDTH * 4 + 256


class Layer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(WIDTH, WIDTH)
        self.register_buffer("scale", torch.full((WIDTH,), 0.5))

    def forward(self, x):
        return torch.relu(self.linear(x)) * self.scale + x


class Stack(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = torch.nn.Linear(8, WIDTH)
        self.layers = torch.nn.ModuleList([Layer() for _ in range(UNITS)])
        self.head = torch.nn.Linear(WIDTH, 4)

    def forward(self, x):
        x = self.embed(x)
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


class _Event:
    time = None


class SimulatedDevice:
    """The CudaDevice interface on the CPU: copies happen at once (the numbers are real) and a clock
    per stream prices each copy at `bandwidth` and each unit's compute at its seconds."""

    device = torch.device("cpu")

    def __init__(self, unit_seconds, bandwidth, capacity=1 << 40):
        self.unit_seconds, self.bandwidth, self.capacity = unit_seconds, bandwidth, capacity
        self.compute, self.copy_stream = "compute", "copy"
        self.clock = {"compute": 0.0, "copy": 0.0}
        self.copies = []  # (slot address, source address, start, end)
        self.computes = []  # (unit, slot address or None, start, end)
        self.allocated = self.peak = 0
        self._open = None

    def host_buffer(self, nbytes):
        return torch.empty(nbytes, dtype=torch.uint8)

    def device_buffer(self, nbytes):
        self.allocated += nbytes
        self.peak = max(self.peak, self.allocated)
        buffer = torch.empty(nbytes, dtype=torch.uint8)
        weakref.finalize(buffer, self._free, nbytes)
        return buffer

    def _free(self, nbytes):
        self.allocated -= nbytes

    def event(self):
        return _Event()

    def record(self, stream, event):
        event.time = self.clock[stream]

    def wait(self, stream, event):
        assert event.time is not None, "a stream waits on an event never recorded"
        self.clock[stream] = max(self.clock[stream], event.time)

    def copy(self, destination, source):
        destination.copy_(source)
        start = self.clock["copy"]
        self.clock["copy"] += source.numel() / self.bandwidth
        self.copies.append((destination.data_ptr(), source.data_ptr(), start, self.clock["copy"]))

    def begin_compute(self, unit, slot):
        self._open = (unit, None if slot is None else slot.data_ptr(), self.clock["compute"])

    def end_compute(self, unit):
        opened, slot, start = self._open
        assert opened == unit
        self.clock["compute"] += self.unit_seconds[unit]
        self.computes.append((unit, slot, start, self.clock["compute"]))

    def seconds(self, start, end):
        return end.time - start.time

    def synchronize(self):
        latest = max(self.clock.values())
        self.clock = {stream: latest for stream in self.clock}

    def free_bytes(self):
        return self.capacity - self.allocated


def streamed(spec, unit_seconds=(1.5e-3,) * UNITS, bandwidth=UNIT_BYTES / 1e-3, **device_options):
    model = Stack()
    reference = copy.deepcopy(model)
    device = SimulatedDevice(list(unit_seconds), bandwidth, **device_options)
    streamer = _weights.attach(model, spec, "h200", device=device)
    return reference, model, device, streamer


def check_schedule(streamer, device):
    """Every streamed use reads a slot its own copy filled before the use began, and no other copy
    into that slot starts before the use has ended."""
    host = {u.host.data_ptr(): i for i, u in enumerate(streamer.units)}
    streamed_uses = [c for c in device.computes if c[1] is not None]
    assert streamed_uses, "nothing was streamed"
    for unit, slot, start, end in streamed_uses:
        into_slot = [c for c in device.copies if c[0] == slot]
        feeding = [c for c in into_slot if host[c[1]] == unit and c[3] <= start]
        assert feeding, f"unit {unit} computed at {start} before its weights arrived"
        filled = max(feeding, key=lambda c: c[3])
        overwritten = [c for c in into_slot if c is not filled and filled[2] <= c[2] < end]
        assert not overwritten, f"slot of unit {unit} overwritten while in use"


@pytest.mark.parametrize("policy", _options.OFFLOAD_POLICIES)
@pytest.mark.parametrize("budget", [dict(resident=0.0), dict(resident=0.3), dict(memory=3 * UNIT_BYTES + 4096)])
def test_streamed_model_computes_what_the_resident_one_does(policy, budget):
    reference, model, device, streamer = streamed(_options.OffloadSpec(policy=policy, **budget))
    x = torch.randn(5, 8)
    with torch.no_grad():
        for _ in range(5):
            assert torch.equal(model(x), reference(x))
    check_schedule(streamer, device)
    assert streamer.unplanned_loads == 0
    if "memory" in budget:  # slots and resident units within the budget
        assert device.peak <= budget["memory"]
    # Between steps the units' tensors hold their values (on the host or resident).
    for (name, tensor), (_, expected) in zip(model.state_dict().items(), reference.state_dict().items()):
        assert torch.equal(tensor.to(expected.device), expected), name


def test_profiled_step_replans_with_measured_compute_and_bandwidth():
    seconds = [1e-3, 2e-3, 0.5e-3, 1.5e-3, 1e-3, 2e-3]
    bandwidth = UNIT_BYTES / 1.2e-3
    _, model, device, streamer = streamed(_options.OffloadSpec(policy="heuristic", resident=0.0),
                                          unit_seconds=seconds, bandwidth=bandwidth)
    x = torch.randn(2, 8)
    ends = []
    with torch.no_grad():
        for _ in range(6):
            model(x)
            ends.append(device.clock["compute"])
    measured = streamer.report()["measured"]
    assert measured["unit_seconds"] == pytest.approx(seconds)
    assert measured["h2d_bandwidth"] == pytest.approx(bandwidth)
    # The planner priced the next steps with those numbers: the simulated steady step is its prediction.
    steady = ends[-1] - ends[-2]
    assert steady == pytest.approx(streamer.report()["predicted_step_seconds"], rel=0.02)
    check_schedule(streamer, device)


def test_copies_for_the_next_step_start_in_this_one():
    # A slow link: the first unit's copy must overlap the previous step's tail to stay hidden.
    _, model, device, streamer = streamed(_options.OffloadSpec(policy="heuristic", resident=0.0),
                                          bandwidth=UNIT_BYTES / 1.4e-3)
    x = torch.randn(2, 8)
    with torch.no_grad():
        for _ in range(4):
            model(x)
    wrapped = [p for p in streamer.plan["prefetches"] if p["trigger"] > p["deadline"]]
    assert wrapped, "the plan overlaps no copy with the previous step"
    first_use = device.computes[-UNITS]
    step_start = first_use[2]
    first_slot = first_use[1]
    feeding = max((c for c in device.copies if c[0] == first_slot and c[3] <= step_start), key=lambda c: c[3])
    assert feeding[2] < step_start - 1e-9


def test_uses_out_of_plan_order_load_on_demand_and_stay_correct():
    # Two slots and compute far longer than a copy: a copy into a slot would run ahead of its last reader.
    reference, model, device, streamer = streamed(_options.OffloadSpec(policy="base", memory=2 * UNIT_BYTES + 4096),
                                                  unit_seconds=(10e-3,) * UNITS)
    x = torch.randn(3, 8)
    with torch.no_grad():
        for _ in range(3):
            model(x)
        order = [3, 0, 5, 1]
        y, expected = model.embed(x), reference.embed(x)
        for i in order:
            y, expected = model.layers[i](y), reference.layers[i](expected)
    assert torch.equal(y, expected)
    assert streamer.unplanned_loads > 0
    check_schedule(streamer, device)


def test_bad_input_is_refused_with_a_clear_error():
    with pytest.raises(lathe.LatheError, match="unknown policy"):
        _options.make_offload_spec(dict(policy="fastest"))
    with pytest.raises(lathe.LatheError, match="unknown option 'lookahead'"):
        _options.make_offload_spec(dict(lookahead=2))
    with pytest.raises(lathe.LatheError, match="resident"):
        _options.make_offload_spec(dict(resident=1.5))
    with pytest.raises(lathe.LatheError, match="no submodule 'blocks.0'"):
        streamed(_options.OffloadSpec(units=("blocks.0",)))
    # A budget below one unit plus what is always resident cannot run a step: said before any step.
    with pytest.raises(lathe.LatheError, match="offload"):
        streamed(_options.OffloadSpec(memory=UNIT_BYTES // 2))
    _, model, _, _ = streamed(_options.OffloadSpec(resident=0.0))
    with pytest.raises(lathe.LatheError, match="inference"):
        model(torch.randn(2, 8))  # gradients through streamed weights
    with pytest.raises(lathe.LatheError, match="cast or move it before"):
        model.to(torch.float64)
    assert model.cpu() is model  # a move to where the plan keeps it changes nothing
    with pytest.raises(lathe.LatheError, match="compile the module, not a function"):
        lathe.compile(lambda x: x, offload=dict(resident=0.5))


def test_environment_sets_what_code_leaves_unset(monkeypatch):
    monkeypatch.setenv("LATHE_OFFLOAD_MEMORY", "2GiB")
    monkeypatch.setenv("LATHE_OFFLOAD_POLICY", "optimal")
    spec = _options.make_offload_spec(None)
    assert spec == _options.OffloadSpec(memory=2 << 30, policy="optimal")
    assert _options.make_offload_spec(dict(policy="base")).policy == "base"
    monkeypatch.setenv("LATHE_OFFLOAD_RESIDENT", "half")
    with pytest.raises(lathe.LatheError, match="LATHE_OFFLOAD_RESIDENT"):
        _options.make_offload_spec(None)


def test_units_are_the_repeated_layers():
    assert [name for name, _ in _weights.find_units(Stack())] == [f"layers.{i}" for i in range(UNITS)]
    with pytest.raises(lathe.LatheError, match="no list of repeated layers"):
        _weights.find_units(torch.nn.Linear(2, 2))


def test_lathe_compile_streams_between_compiled_units(monkeypatch):
    device = SimulatedDevice([1.5e-3] * UNITS, UNIT_BYTES / 1e-3)
    monkeypatch.setattr(_weights, "default_device", lambda: device)
    model = Stack()
    reference = copy.deepcopy(model)
    lathe.compile(model, offload=dict(resident=0.3), hw="h200")
    x = torch.randn(4, 8)
    with torch.no_grad():
        for _ in range(4):
            torch.testing.assert_close(model(x), reference(x))
    report = lathe.offload_report(model)
    assert report["policy"] == "optimal" and report["measured"] is not None
    assert sum(report["unit_bytes"][i] for i, name in enumerate(report["units"]) if name in report["resident"]) \
        <= 0.3 * sum(report["unit_bytes"])
    check_schedule(model._lathe_weights, device)
    with pytest.raises(lathe.LatheError, match="not streamed"):
        lathe.offload_report(reference)

"""Weight offload at run time (lathe._weights) on a simulated device: the streamer's copies, waits and
slots are checked on a clock per stream (no unit computes before its weights arrive, no slot is
overwritten while a unit reads it, a unit's backward reads the slot its forward did, weight memory
within the budget, copies for the next step issued in this one), and the streamed model computes
exactly what the resident one does, in inference and in training (gradients on the host)."""

import copy
import gc
import weakref

import pytest
import torch

import lathe
from lathe import _graphs, _options, _weights

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
    captured = False  # recorded inside a graph capture
    stream = None
    ops = 0  # the operations its stream had issued when it was recorded


class SimulatedDevice:
    """The CudaDevice interface on the CPU: copies happen at once (the numbers are real) and a clock
    per stream prices each copy at `bandwidth` and each unit's compute at its seconds.

    Graph capture as CUDA has it: between begin_capture and end_capture nothing moves (a copy is written
    to the graph's tape, with the units' computes and the slots they read), an event recorded outside
    the capture cannot be waited on inside it nor one recorded inside waited on outside, a stream joins
    the capture only by waiting on an event of a captured stream, and every stream that joined must be
    joined back (its last operation waited on by the captured stream) before the capture ends. The
    clocks run through a capture as through one execution of its graph; a replay takes as long on
    the compute stream, may begin only once no copy into a slot it uses is in flight, and no copy into
    such a slot may begin while it runs."""

    device = torch.device("cpu")

    def __init__(self, unit_seconds, bandwidth, capacity=1 << 40, activation_bytes=0):
        self.unit_seconds, self.bandwidth, self.capacity = unit_seconds, bandwidth, capacity
        self.activation_bytes = activation_bytes  # held on the device while a unit computes
        self.compute, self.copy_stream, self.copy_out_stream = "compute", "copy", "copy_out"
        self.clock = {"compute": 0.0, "copy": 0.0, "copy_out": 0.0}
        self.copies = []  # (slot address, source address, start, end)
        self.copies_out = []  # (destination address, ready, start, end)
        self.computes = []  # (unit, slot address or None, start, end)
        self.allocated = self.peak = self.window_peak = 0
        self._open = None
        self.tape = None  # while capturing: ("copy", destination, source) and ("compute", unit, slot or None)
        self._ops = {"compute": 0, "copy": 0, "copy_out": 0}
        self._forked, self._joined = set(), {}
        self.replays = []  # (start, end, addresses of the slots the graph uses)

    def capturing(self):
        return self.tape is not None

    def begin_capture(self):
        self.tape, self._forked, self._joined = [], {"compute"}, {}
        self._capture_start = self.clock["compute"]

    def end_capture(self):
        """The graph: its tape and how long it runs on the compute stream."""
        tape, self.tape = self.tape, None
        for stream in self._forked - {"compute"}:
            assert self._joined.get(stream, -1) >= self._ops[stream], f"the {stream} stream is not joined back"
        return tape, self.clock["compute"] - self._capture_start

    def replay(self, tape, seconds):
        slots = {entry[1].data_ptr() for entry in tape if entry[0] == "copy"} | \
            {entry[2].data_ptr() for entry in tape if entry[0] == "compute" and entry[2] is not None}
        start = self.clock["compute"]
        for destination, _, _, end in self.copies:
            assert destination not in slots or end <= start, "a replay began while a copy into its slots was in flight"
        self.clock["compute"] = start + seconds
        self.replays.append((start, start + seconds, slots))

    def host_buffer(self, nbytes):
        return torch.empty(nbytes, dtype=torch.uint8)

    def device_buffer(self, nbytes):
        self.allocated += nbytes
        self.peak = max(self.peak, self.allocated)
        self.window_peak = max(self.window_peak, self.allocated)
        assert self.allocated <= self.capacity, "out of device memory"
        buffer = torch.empty(nbytes, dtype=torch.uint8)
        weakref.finalize(buffer, self._free, nbytes)
        return buffer

    def _free(self, nbytes):
        self.allocated -= nbytes

    def event(self):
        return _Event()

    def record(self, stream, event):
        if self.capturing():
            assert stream in self._forked, f"an event recorded on the {stream} stream, which the capture never joined"
        event.time, event.captured, event.stream, event.ops = self.clock[stream], self.capturing(), stream, self._ops[stream]

    def wait(self, stream, event):
        assert event.time is not None, "a stream waits on an event never recorded"
        assert event.captured == self.capturing(), "an event waited on across a capture's edge"
        if self.capturing():
            self._forked.add(stream)
            if stream == "compute":
                self._joined[event.stream] = max(self._joined.get(event.stream, -1), event.ops)
        self.clock[stream] = max(self.clock[stream], event.time)

    def copy(self, destination, source):
        self._ops["copy"] += 1
        if self.capturing():
            assert "copy" in self._forked, "a copy on a stream the capture never joined"
            self.tape.append(("copy", destination, source))
        else:
            destination.copy_(source)
        start = self.clock["copy"]
        if not self.capturing():
            for _, end, slots in self.replays:
                assert destination.data_ptr() not in slots or start >= end, "a copy into a slot a replay still uses"
        self.clock["copy"] += source.numel() / self.bandwidth
        self.copies.append((destination.data_ptr(), source.data_ptr(), start, self.clock["copy"]))

    def copy_out(self, destination, source):
        destination.copy_(source)
        start = self.clock["copy_out"]
        self.clock["copy_out"] = start + source.numel() * source.element_size() / self.bandwidth
        self.copies_out.append((destination.data_ptr(), start, self.clock["copy_out"]))
        done = _Event()
        done.time = self.clock["copy_out"]
        return done

    def host_wait(self, event):
        assert event.time is not None

    def begin_compute(self, unit, slot):
        if self.capturing():
            self.tape.append(("compute", unit, slot))
        self._open = (unit, None if slot is None else slot.data_ptr(), self.clock["compute"])
        self._activations = self.device_buffer(self.activation_bytes) if self.activation_bytes else None

    def end_compute(self, unit):
        opened, slot, start = self._open
        assert opened == unit
        self._activations = None
        self.clock["compute"] += self.unit_seconds[unit]
        self.computes.append((unit, slot, start, self.clock["compute"]))

    def seconds(self, start, end):
        return end.time - start.time

    def synchronize(self):
        latest = max(self.clock.values())
        self.clock = {stream: latest for stream in self.clock}

    def free_bytes(self):
        return self.capacity - self.allocated

    def allocated_bytes(self):
        return self.allocated

    def reset_peak(self):
        self.window_peak = self.allocated

    def peak_bytes(self):
        return self.window_peak


def streamed(spec, unit_seconds=(1.5e-3,) * UNITS, bandwidth=UNIT_BYTES / 1e-3, **device_options):
    model = Stack()
    reference = copy.deepcopy(model)
    device = SimulatedDevice(list(unit_seconds), bandwidth, **device_options)
    streamer = _weights.attach(model, spec, "h200", device=device)
    return reference, model, device, streamer


def compiled(monkeypatch, bandwidth=UNIT_BYTES / 1e-3, **options):
    """lathe.compile(Stack(), offload=dict(resident=0.3), **options) on a simulated device, with an
    uncompiled copy of the model to compare with."""
    device = SimulatedDevice([1.5e-3] * UNITS, bandwidth)
    monkeypatch.setattr(_weights, "default_device", lambda: device)
    model = Stack()
    reference = copy.deepcopy(model)
    lathe.compile(model, offload=dict(resident=0.3), hw="h200", **options)
    return model, reference, device


def check_same_parameters(model, reference, compare=torch.equal, of=lambda tensor: tensor):
    """Each parameter (or `of` it: its grad) of model and reference agree under `compare`."""
    for (name, tensor), (_, expected) in zip(model.named_parameters(), reference.named_parameters()):
        assert compare(of(tensor), of(expected)), name


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
    assert measured["segment_seconds"] == pytest.approx(seconds)
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
    model.layers.requires_grad_(False)
    with pytest.raises(lathe.LatheError, match="need none"):
        model(torch.randn(2, 8, requires_grad=True))  # gradients through frozen streamed weights
    with pytest.raises(lathe.LatheError, match="cast or move it before"):
        model.to(torch.float64)
    assert model.cpu() is model  # a move to where the plan keeps it changes nothing
    assert model.layers[2].cpu() is model.layers[2]  # nor on a layer, or a module inside one
    with pytest.raises(lathe.LatheError, match="cast or move it before"):
        model.layers[2].linear.double()
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
    model, reference, device = compiled(monkeypatch)
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


def check_backward_slots(device, first=0):
    """A unit's backward computes in the slot its forward of the same step did (the tensors autograd
    saved in the forward point there), over the training steps from compute `first` on."""
    forward_slot = {}
    for unit, slot, _, _ in device.computes[first:]:
        if slot is None:
            continue
        if unit in forward_slot and forward_slot[unit][1] == "forward":
            assert forward_slot[unit][0] == slot, f"unit {unit}'s backward reads another slot than its forward"
            forward_slot[unit] = (slot, "backward")
        else:
            forward_slot[unit] = (slot, "forward")


def train(model, x, steps, accumulate=1):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        for _ in range(accumulate):
            loss = model(x).pow(2).mean()
            loss.backward()
        losses.append(loss.item())
        optimizer.step()
    return losses


@pytest.mark.parametrize("policy", _options.OFFLOAD_POLICIES)
@pytest.mark.parametrize("budget", [dict(resident=0.0), dict(resident=0.5), dict(memory=3 * UNIT_BYTES + 4096),
                                    dict(memory=4 * UNIT_BYTES + 4096)])
def test_training_through_streamed_weights_matches_the_resident_model(policy, budget):
    reference, model, device, streamer = streamed(_options.OffloadSpec(policy=policy, **budget))
    x = torch.randn(5, 8)
    assert train(model, x, 5) == train(reference, x, 5)
    check_same_parameters(model, reference)
    report = streamer.report()
    assert report["kind"] == "training" and report["measured"] is not None
    assert len(report["segments"]) == 2 * UNITS
    check_schedule(streamer, device)
    check_backward_slots(device)
    assert streamer.unplanned_loads == 0
    if "memory" in budget:
        assert device.peak <= budget["memory"]
    # Streamed weights' gradients were copied out, a weight and a bias per streamed unit and step:
    # every unit under the first two steps' base plan, then those the policy streams.
    streamed_units = UNITS - len(report["resident"])
    assert len(device.copies_out) == 2 * 2 * UNITS + 3 * 2 * streamed_units


def test_gradients_accumulate_on_the_host_and_inference_steps_mix_in():
    reference, model, device, streamer = streamed(_options.OffloadSpec(policy="optimal", resident=0.0))
    x = torch.randn(3, 8)
    assert train(model, x, 4, accumulate=2) == train(reference, x, 4, accumulate=2)
    with torch.no_grad():  # an evaluation between training steps runs the inference plan
        assert torch.equal(model(x), reference(x))
    assert streamer.report()["kind"] == "inference"
    training_again = len(device.computes)
    assert train(model, x, 2) == train(reference, x, 2)
    check_same_parameters(model, reference, of=lambda tensor: tensor.grad)
    check_schedule(streamer, device)
    check_backward_slots(device, training_again)


def test_a_backward_after_the_next_forward_is_refused():
    _, model, _, _ = streamed(_options.OffloadSpec(resident=0.0))
    x = torch.randn(2, 8)
    stale = model(x).sum()
    fresh = model(x).sum()
    with pytest.raises(lathe.LatheError, match="earlier step"):
        stale.backward()
    fresh.backward()
    assert all(p.grad is not None for p in model.layers.parameters())


def test_backward_copies_return_to_their_forward_slot_with_slots_to_spare(monkeypatch):
    # More slots than units in flight: the free slot released longest ago is not the forward's.
    plan = _weights.WeightStreamer._plan

    def roomier(self, *args):
        decision = plan(self, *args)
        return dict(decision, peak_weight_bytes=4 * UNIT_BYTES)

    monkeypatch.setattr(_weights.WeightStreamer, "_plan", roomier)
    reference, model, device, streamer = streamed(_options.OffloadSpec(policy="heuristic", resident=0.0))
    x = torch.randn(4, 8)
    assert train(model, x, 4) == train(reference, x, 4)
    assert streamer.report()["slots"] == 4
    check_schedule(streamer, device)
    check_backward_slots(device)


def test_lathe_compile_trains_through_streamed_compiled_units(monkeypatch):
    model, reference, device = compiled(monkeypatch)
    x = torch.randn(4, 8)
    torch.testing.assert_close(train(model, x, 4), train(reference, x, 4))
    check_same_parameters(model, reference, compare=lambda a, b: torch.allclose(a, b, rtol=1.3e-6, atol=1e-5))
    assert lathe.offload_report(model)["kind"] == "training"
    assert lathe.plans(model), "the units' joint graphs were planned by lathe"
    check_schedule(model._lathe_weights, device)
    check_backward_slots(device)


def test_weights_leave_the_step_its_room_on_a_small_device():
    # Room for four units, a step that holds one and a half more while a unit computes: after the
    # profiled step the weights get what is free less that, not the whole device.
    capacity, activations = 4 * UNIT_BYTES + 4096, 3 * UNIT_BYTES // 2
    reference, model, device, streamer = streamed(_options.OffloadSpec(policy="optimal"), capacity=capacity,
                                                  activation_bytes=activations)
    x = torch.randn(2, 8)
    with torch.no_grad():
        for _ in range(4):
            assert torch.equal(model(x), reference(x))
    measured = streamer.report()["measured"]
    assert measured["step_bytes"] == activations
    assert streamer.report()["budget_bytes"] <= capacity - activations
    assert device.peak <= capacity
    check_schedule(streamer, device)


def test_the_streamer_and_its_device_memory_go_with_the_model():
    _, model, device, streamer = streamed(_options.OffloadSpec(policy="optimal", resident=0.5))
    train(model, torch.randn(2, 8), 3)
    assert device.allocated > 0
    collected = weakref.ref(streamer)
    del model, streamer
    gc.collect()
    assert collected() is None
    assert device.allocated == 0


@pytest.mark.parametrize("training", [False, True])
def test_a_recorded_step_goes_to_the_run_folder_beside_its_simulation(monkeypatch, tmp_path, training):
    model, _, _ = compiled(monkeypatch, bandwidth=UNIT_BYTES / 1.2e-3, trace_dir=str(tmp_path))
    x = torch.randn(4, 8)
    if training:
        train(model, x, _weights._TIMELINE_STEP)
    else:
        with torch.no_grad():
            for _ in range(_weights._TIMELINE_STEP):
                model(x)
    timeline = model._lathe_weights.timeline
    assert timeline["kind"] == ("training" if training else "inference")
    segments = 2 * UNITS if training else UNITS
    simulated, measured = timeline["simulated"], timeline["measured"]
    assert len(simulated["segments"]) == len(measured["segments"]) == segments
    assert len(measured["h2d"]) == len(simulated["h2d"]) > 0
    assert (len(measured["d2h"]) > 0) == training
    # The simulated device runs what the plan simulates: the two timelines agree.
    assert measured["step_seconds"] == pytest.approx(simulated["step_seconds"], rel=0.05)
    for ran, planned in zip(measured["segments"], simulated["segments"]):
        assert ran["unit"] == planned["unit"]
        assert ran["end"] - ran["start"] == pytest.approx(planned["end"] - planned["start"], rel=1e-6)
    # Written to the run folder's profile, which the C++ reader accepts.
    steps, graphs, _, _, offload = lathe._native.check_profile(str(tmp_path / "lathe.profile.json"))
    assert offload == (segments, len(measured["h2d"]))


class SimulatedStreamedGraphs:
    """The CUDA-graph layer (_graphs.CudaGraphs) over a simulated device: a capture warms the step
    up twice, synchronises and records the step's copies and computes on the device's tape (moving
    nothing); a replay runs the tape alone, as a graph replays its nodes: its copies move bytes in the
    order they were issued, and each unit computes on the slot the captured step gave it. The streamer
    decides nothing in a replay (its hooks are bypassed), so a replay computes right only if the graph
    holds every copy the step needs, the last step (eager or replayed) left the slots as the graph's
    first unit expects them, and the graph leaves them so for the next."""

    def __init__(self, device, streamer=None):
        self.device, self.streamer = device, streamer
        self.tapes = []

    def capture(self, fn, args):
        for _ in range(_graphs._WARMUP_CALLS):
            fn(*args)
        self.device.synchronize()
        self.device.begin_capture()
        try:
            outputs = fn(*args)
        finally:
            tape, seconds = self.device.end_capture()
        self.tapes.append(tape)
        return (fn, args, outputs, tape, seconds), outputs

    def replay(self, graph):
        fn, args, outputs, tape, seconds = graph
        self.device.replay(tape, seconds)
        streamer, entries = self.streamer, iter(tape)

        def run_to_compute(position):
            for entry in entries:
                if entry[0] == "copy":
                    entry[1].copy_(entry[2])
                else:
                    assert entry[1] == position, "the replay runs the units in another order than captured"
                    return entry[2]
            raise AssertionError(f"unit {position} computes in no captured step")

        def before(position):
            slot = run_to_compute(position)
            if slot is not None:
                unit = streamer.units[position]
                _weights._point(unit.tensors, _weights._views(slot, unit.layout))

        def after(position, output):
            unit = streamer.units[position]
            if unit.resident is None:
                _weights._point(unit.tensors, unit.host_views)

        def end():
            for entry in entries:
                assert entry[0] == "copy", "a unit computes after the last one"
                entry[1].copy_(entry[2])

        bypass = dict(_begin_step=lambda: None, _before=before, _after=after, _end_forward=end)
        vars(streamer).update(bypass)
        try:
            fresh = fn(*args)
        finally:
            for name in bypass:
                del vars(streamer)[name]
        torch.utils._pytree.tree_map(lambda static, new: static.copy_(new), outputs, fresh)


def graphed(spec, buckets=(4, 16), **device_options):
    """A streamed Stack whose calls run through CUDA graphs (rows are the bucketed size)."""
    reference, model, device, streamer = streamed(spec, **device_options)
    graphs = SimulatedStreamedGraphs(device, streamer)
    runner = _graphs.attach(model, model.forward, _graphs.CudaGraphSpec(buckets=buckets, dim=0),
                                  graphs=graphs, weights=streamer)
    return reference, model, device, streamer, graphs, runner


@pytest.mark.parametrize("policy", ["optimal", "heuristic", "base"])
@pytest.mark.parametrize("budget", [dict(resident=0.0), dict(resident=0.3)])
@pytest.mark.parametrize("copy_seconds", [1.4e-3, 3e-3])
def test_cuda_graphs_replay_the_streamed_step_with_its_copies(policy, budget, copy_seconds):
    # Slow links (a unit computes for 1.5 ms): the plans copy weights for the next step in this one, so
    # the graphs hold those too; at 3 ms a copy, an eager step ends with copies still in flight.
    reference, model, device, streamer, graphs, runner = graphed(
        _options.OffloadSpec(policy=policy, **budget), bandwidth=UNIT_BYTES / copy_seconds)
    with torch.no_grad():
        # Replays after captures, after eager steps (20 rows exceed every bucket) and after each other;
        # the last step the streamer ran is a capture.
        for rows in (3, 4, 2, 9, 16, 20, 12, 16, 20, 1, 3):
            x = torch.randn(rows, 8)
            torch.testing.assert_close(model(x), reference(x), rtol=1e-5, atol=1e-6)
    report = runner.report()
    # Four steps settle the plan without a graph.
    assert (report["captures"], report["ungraphed_calls"], report["replays"]) == (2, 6, 5)
    assert report["buckets"] == [4, 16] and streamer.unplanned_loads == 0
    with torch.no_grad():  # after a replay, units called out of the plan's order load on demand
        y, expected = model.embed(x), reference.embed(x)
        for i in (3, 0, 5):
            y, expected = model.layers[i](y), reference.layers[i](expected)
    torch.testing.assert_close(y, expected, rtol=1e-5, atol=1e-6)
    check_schedule(streamer, device)
    for tape in graphs.tapes:
        assert any(entry[0] == "copy" for entry in tape)
    if any(p["trigger"] > p["deadline"] for p in streamer.plan["prefetches"]):
        host = {u.host.data_ptr(): i for i, u in enumerate(streamer.units)}
        for tape in graphs.tapes:  # a copy of a unit that does not compute after it: for the next replay
            assert any(entry[0] == "copy" and not any(later[0] == "compute" and later[1] == host[entry[2].data_ptr()]
                                                      for later in tape[at + 1:])
                       for at, entry in enumerate(tape)), "no copy for the next step in the graph"


def test_graphs_are_captured_again_when_the_streamer_makes_new_slots():
    reference, model, device, streamer, graphs, runner = graphed(_options.OffloadSpec(resident=0.3),
                                                                 bandwidth=UNIT_BYTES / 1.4e-3)
    x = torch.randn(3, 8)
    with torch.no_grad():
        for _ in range(6):
            model(x)
    assert runner.report()["captures"] == 1
    model(torch.randn(3, 8)).sum().backward()  # a training step: its own plan, its own slots
    with torch.no_grad():
        for _ in range(3):
            torch.testing.assert_close(model(x), reference(x), rtol=1e-5, atol=1e-6)
    report = runner.report()
    assert report["invalidated"] == 1 and report["captures"] == 2
    check_schedule(streamer, device)


def test_a_step_captured_before_the_plan_settles_is_refused():
    _, model, device, _ = streamed(_options.OffloadSpec(resident=0.3))
    device.begin_capture()
    with torch.no_grad(), pytest.raises(lathe.LatheError, match="before its plan is settled"):
        model(torch.randn(3, 8))


def test_lathe_compile_captures_the_streamed_step(monkeypatch):
    device = SimulatedDevice([1.5e-3] * UNITS, UNIT_BYTES / 1.4e-3)
    graphs = SimulatedStreamedGraphs(device)
    monkeypatch.setattr(_weights, "default_device", lambda: device)
    monkeypatch.setattr(lathe._graphs, "CudaGraphs", lambda: graphs)
    model = Stack()
    reference = copy.deepcopy(model)
    lathe.compile(model, offload=dict(resident=0.3), cuda_graphs=dict(buckets=(8,), dim=0), hw="h200")
    graphs.streamer = model._lathe_weights
    with torch.no_grad():
        for rows in (5, 8, 3, 6, 7, 2):
            x = torch.randn(rows, 8)
            torch.testing.assert_close(model(x), reference(x))
    assert lathe.cuda_graphs_report(model)["captures"] == 1
    assert lathe.offload_report(model)["unplanned_loads"] == 0

"""lathe.compile's forms, options, plan files, run folders and custom-op flags, on a small block."""

import glob
import json
import os
import subprocess

import pytest
import torch

import lathe


class Block(torch.nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.norm = torch.nn.LayerNorm(dim)
        self.up = torch.nn.Linear(dim, 4 * dim)
        self.down = torch.nn.Linear(4 * dim, dim)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


# The `lathe` CLI: CTest names the one it built; run by hand, the default build's.
CLI = os.environ.get("LATHE_CLI") or os.path.join(os.path.dirname(__file__), "../../build/default/app/cli/lathe")


def run_step(module, seed=0):
    x = torch.randn(4, 8, 32, generator=torch.Generator().manual_seed(seed))
    module(x).pow(2).mean().backward()


def grads(module):
    return [p.grad.clone() for p in module.parameters()]


def fresh_pair():
    torch.manual_seed(0)
    reference = Block()
    model = Block()
    model.load_state_dict(reference.state_dict())
    return reference, model


def test_class_decoration_compiles_every_instance_and_keeps_state_dict_keys():
    @lathe.compile(policy="heuristic")
    class Decorated(Block):
        pass

    first, second = Decorated(), Decorated()
    assert list(first.state_dict()) == list(Block().state_dict())
    run_step(first)
    run_step(second)
    assert lathe.plans(first) and lathe.plans(second)


def test_function_and_method_forms_plan_their_graphs():
    reference, model = fresh_pair()
    compiled_forward = lathe.compile(model.forward, policy="torch")
    x = torch.randn(4, 8, 32)
    compiled_forward(x).pow(2).mean().backward()
    reference(x).pow(2).mean().backward()
    for got, want in zip(grads(model), grads(reference)):
        torch.testing.assert_close(got, want)
    assert [p.plan.policy for p in lathe.plans(compiled_forward)] == ["torch"]


def test_environment_sets_what_the_code_leaves_unset(monkeypatch):
    monkeypatch.setenv("LATHE_POLICY", "heuristic")
    monkeypatch.setenv("LATHE_MEMORY", "3GiB")
    options = lathe._options.make_options()
    assert (options.policy, options.memory) == ("heuristic", "3GiB")
    assert lathe._options.make_options(policy="torch").policy == "torch"  # the code's choice wins
    monkeypatch.setenv("LATHE_MEMORY", "0.5")
    assert lathe._options.make_options().memory == 0.5


@pytest.mark.parametrize("kwargs, message", [
    ({"policy": "fastest"}, "unknown policy 'fastest'"),
    ({"memory": "six gigs"}, "cannot read 'six gigs' as a size"),
    ({"memory": 1.5}, "a fraction of the device is in (0, 1]"),
    ({"memory": -4}, "is not a budget"),
    ({"policy": "file"}, "policy='file' needs plan=PATH"),
    ({"plan": "/nonexistent/plan.json"}, "no such file"),
    ({"hw": "no-such-gpu"}, "no-such-gpu"),
    ({"fast_math": True}, "unknown option 'fast_math'"),
])
def test_bad_options_are_refused_before_anything_runs(kwargs, message):
    with pytest.raises(lathe.LatheError) as error:
        model = lathe.compile(Block(), **kwargs)
        run_step(model)
    assert message in str(error.value)


def test_impossible_budget_is_refused_and_nothing_runs_half_planned():
    model = lathe.compile(Block(), policy="budget", memory="1KiB")
    with pytest.raises(Exception) as error:
        run_step(model)
    assert "no plan fits memory='1KiB'" in str(error.value)
    assert all(p.grad is None for p in model.parameters())


def test_each_run_folder_of_a_process_gets_the_trace_of_its_compiles(tmp_path):
    # torch's trace log is one per process: a later run folder takes it over from an earlier one.
    for name in ("first", "second"):
        _, model = fresh_pair()
        lathe.compile(model, policy="heuristic", trace_dir=str(tmp_path / name))
        run_step(model)
    for name in ("first", "second"):
        logs = glob.glob(str(tmp_path / name / "*.log"))
        assert len(logs) == 1 and "lathe_joint_graph" in open(logs[0]).read(), name


def test_run_folder_plans_apply_back_and_another_graphs_plan_is_refused(tmp_path):
    reference, model = fresh_pair()
    lathe.compile(model, policy="heuristic", trace_dir=str(tmp_path))
    run_step(model)
    written = glob.glob(str(tmp_path / "plans" / "*.plan.json"))
    assert len(written) == 1
    bundle = json.load(open(written[0]))
    assert bundle["recompute"]["saved"] == list(lathe.plans(model)[0].plan.saved)
    assert glob.glob(str(tmp_path / "**" / "*.log"), recursive=True), "no TORCH_TRACE log in the run folder"

    # A plan made by the CLI from the run's capture is of the graph the runtime planned: it applies.
    cli_plan = str(tmp_path / "cli.plan.json")
    subprocess.run([CLI, "plan", str(tmp_path), "--pipeline", "split,fusion,recompute(policy=torch)", "-o", cli_plan],
                   check=True, capture_output=True)
    assert json.load(open(cli_plan))["source"]["fingerprint"] == bundle["source"]["fingerprint"]
    torch._dynamo.reset()
    from_cli = lathe.compile(Block(), plan=cli_plan)
    run_step(from_cli)
    assert lathe.plans(from_cli)[0].plan.saved == json.load(open(cli_plan))["recompute"]["saved"]

    torch._dynamo.reset()
    replay = lathe.compile(Block(), plan=written[0])
    replay.load_state_dict(reference.state_dict())
    run_step(replay)
    run_step(reference)
    for got, want in zip(grads(replay), grads(reference)):
        torch.testing.assert_close(got, want)
    [applied] = lathe.plans(replay)
    assert applied.plan.saved == bundle["recompute"]["saved"] and applied.forward_saved == applied.torch_saved

    class Wider(Block):
        def __init__(self):
            super().__init__(dim=48)

    torch._dynamo.reset()
    other = lathe.compile(Wider(), plan=written[0])
    with pytest.raises(Exception) as error:
        other(torch.randn(4, 8, 48)).sum().backward()
    assert "fingerprint" in str(error.value) and bundle["source"]["fingerprint"] in str(error.value)


def _scaled_tanh(x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x) * 1.5


def _scaled_tanh_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad * 1.5 * (1 - torch.tanh(x) ** 2)


def _register_scaled_tanh(name, **flags):
    return lathe.register_custom_op(name, backward=_scaled_tanh_backward,
                                    setup_context=lambda ctx, inputs, output: ctx.save_for_backward(inputs[0]),
                                    **flags)(_scaled_tanh)


class TanhBlock(Block):
    op = None

    def forward(self, x):
        h = type(self).op(self.up(self.norm(x)))
        return x + self.down(h * h)


def _saved_outputs_of(op_name, model):
    [plan] = lathe.plans(model)
    return [name for name in plan.plan.saved if name.startswith(op_name)]


def test_custom_op_flags_change_the_decision_also_when_registered_after_decoration():
    reference = TanhBlock()
    TanhBlock.op = _register_scaled_tanh("lathe_test::plain_tanh")
    plain = lathe.compile(TanhBlock(), policy="heuristic")
    plain.load_state_dict(reference.state_dict())
    run_step(plain)
    assert _saved_outputs_of("plain_tanh", plain) == []  # an unflagged custom op: the heuristic recomputes it

    torch._dynamo.reset()
    flagged = lathe.compile(TanhBlock(), policy="heuristic")
    flagged.load_state_dict(reference.state_dict())
    # Registered after the model was decorated (MagiCompiler copies its flags at decoration).
    TanhBlock.op = _register_scaled_tanh("lathe_test::sensitive_tanh", compute_sensitive=True)
    run_step(flagged)
    assert _saved_outputs_of("sensitive_tanh", flagged) != []
    for got, want in zip(grads(flagged), grads(plain)):
        torch.testing.assert_close(got, want)


def test_registered_backend_entry_point():
    reference, model = fresh_pair()
    compiled = torch.compile(model, backend="lathe", options={"policy": "torch"})
    x = torch.randn(4, 8, 32)
    compiled(x).sum().backward()
    reference(x).sum().backward()
    for got, want in zip(grads(model), grads(reference)):
        torch.testing.assert_close(got, want)


def test_dynamic_sizes_are_planned_at_their_traced_values():
    peaks = {}
    for dynamic in (False, True):
        torch._dynamo.reset()
        model = lathe.compile(Block(), policy="heuristic", dynamic=dynamic)
        run_step(model)
        [plan] = lathe.plans(model)
        peaks[dynamic] = plan.plan.peak_bytes
    assert peaks[True] == peaks[False] > 0


def test_subgraph_boundary_ops_split_the_graph_into_pieces_planned_one_by_one():
    def boundary_forward(x: torch.Tensor) -> torch.Tensor:
        return x * 2.0

    boundary = lathe.register_custom_op(
        "lathe_test::boundary_double", subgraph_boundary=True,
        backward=lambda ctx, grad: grad * 2.0, setup_context=lambda ctx, inputs, output: None)(boundary_forward)

    class TwoPieces(Block):
        def forward(self, x):
            h = self.up(self.norm(x))
            return x + self.down(torch.nn.functional.gelu(boundary(h)))

    torch.manual_seed(0)
    reference = TwoPieces()
    model = lathe.compile(TwoPieces(), policy="heuristic")
    model.load_state_dict(reference.state_dict())
    for seed in (0, 1):
        run_step(model, seed)
        run_step(reference, seed)
        for got, want in zip(grads(model), grads(reference)):
            torch.testing.assert_close(got, want)
        model.zero_grad(set_to_none=True)
        reference.zero_grad(set_to_none=True)
    plans = lathe.plans(model)
    assert [p.graph_id for p in plans] == ["0/0:piece0:lathe_joint_graph", "0/0:piece1:lathe_joint_graph"]
    for plan in plans:  # the boundary op runs eagerly between the pieces, in neither of them
        names = json.loads(plan.plan.bundle_json)["nodes"]["names"]
        assert names and not any("boundary_double" in name for name in names), plan.graph_id


def test_measured_steps_go_to_the_run_folder_profile_which_lathe_reads(tmp_path):
    model = lathe.compile(Block(), policy="heuristic", trace_dir=str(tmp_path))
    for seed in range(3):
        with lathe.step(model):
            run_step(model, seed)
    steps = lathe.measured_steps(model)
    assert len(steps) == 3 and all(s["seconds"] > 0 for s in steps)
    profile = tmp_path / "lathe.profile.json"
    count, graphs, median, peak, offload = lathe._native.check_profile(str(profile))  # the C++ reader
    assert (count, graphs) == (3, 1) and median > 0 and peak is None  # no allocator statistics on the CPU
    # `lathe profile FOLDER` sets the measured steps beside the plan's prediction.
    report = subprocess.run([CLI, "profile", str(tmp_path)], capture_output=True, text=True, check=True).stdout
    assert "0/0:lathe_joint_graph" in report and "measured over 3 steps" in report and "predicted" in report
    assert "peak: not measured (no allocator statistics on cpu)" in report
    document = json.load(open(profile))
    assert document["graphs"][0]["plan"] == os.path.join("plans", "0_0_lathe_joint_graph.plan.json")
    assert document["graphs"][0]["predicted_peak_bytes"] == lathe.plans(model)[0].plan.peak_bytes


def test_a_step_under_the_profiler_records_per_kernel_times(tmp_path):
    model = lathe.compile(Block(), policy="heuristic", trace_dir=str(tmp_path))
    for seed, kernels in enumerate((False, True, False)):
        with lathe.step(model, kernels=kernels):
            run_step(model, seed)
    steps = lathe.measured_steps(model)
    assert [("kernels" in s) for s in steps] == [False, True, False]
    kernels = steps[1]["kernels"]
    # The CPU has no kernels: the step's operators (Inductor's fallbacks, the backward's matmuls).
    assert kernels and all(k["calls"] > 0 and k["seconds"] >= 0 for k in kernels)
    assert [k["seconds"] for k in kernels] == sorted((k["seconds"] for k in kernels), reverse=True)
    assert any(k["name"] in ("aten::mm", "aten::addmm") for k in kernels)
    report = subprocess.run([CLI, "profile", str(tmp_path)], capture_output=True, text=True, check=True).stdout
    assert f"kernels of the last profiled step: {len(kernels)} names" in report and kernels[0]["name"] in report
    listed = json.loads(subprocess.run([CLI, "profile", str(tmp_path), "--json"], capture_output=True, text=True,
                                       check=True).stdout)["kernels"]
    assert [k["name"] for k in listed] == [k["name"] for k in kernels]


def test_a_plan_larger_than_the_device_is_reported_before_the_step(caplog, tmp_path):
    # A hardware profile with 64 KiB of memory: the block's plan (about 120 KiB) does not fit.
    profile = json.load(open(os.path.join(os.path.dirname(__file__), "../../resources/hw/h200.json")))
    profile["hbm_capacity"]["value"] = 65536
    small = tmp_path / "small.json"
    small.write_text(json.dumps(profile))
    with caplog.at_level("WARNING", logger="lathe"):
        run_step(lathe.compile(Block(), policy="heuristic", hw=str(small)))
    assert any("exceeds the 0.00 GiB" in r.getMessage() for r in caplog.records), caplog.text

"""Activation offload under lathe.compile: the graphs that run copy the planned values out and back
(on a CPU, plain copies through the same ops) and the step still gives eager's loss and gradients; the
option reaches the planner from code and environment; plan bundles carry the decision back."""

import glob
import json
import operator

import pytest
import torch

import lathe
from models import MODELS, batch, make_pair
from test_training import assert_step_matches_eager

# The tiny models' values are far below the default 1 MiB worth offloading: offload every one.
EVERY_VALUE = "split,fusion,recompute(policy=heuristic,offload=true,offload_min=0)"


def offload_ops(graph_module):
    return [n for n in graph_module.graph.nodes if n.op == "call_function" and "lathe" in str(n.target)]


@pytest.mark.parametrize("name", list(MODELS))
def test_offloaded_training_step_matches_eager(name):
    reference, model = make_pair(name)
    lathe.compile(model, policy="heuristic", pipeline=EVERY_VALUE)
    for seed in (1, 2):
        assert_step_matches_eager(reference, model, batch(seed))
    plans = lathe.plans(model)
    offloaded = [p for p in plans if p.offloaded]
    assert offloaded, "no graph offloaded anything"
    for plan in plans:
        planned = [entry[0] for entry in plan.plan.offloaded]
        assert set(plan.offloaded) <= set(planned) <= set(plan.plan.saved) | set(plan.saved_through_getitems)
        assert plan.forward_saved == plan.torch_saved  # offload changes where values live, not which


def test_the_graphs_that_run_copy_exactly_the_offloaded_values():
    captured = {}
    original = lathe._offload.apply

    def spy(forward, backward, plan, num_fwd_outputs):
        done = original(forward, backward, plan, num_fwd_outputs)
        captured[plan.graph_id] = (forward, backward, done)
        return done

    lathe._offload.apply = spy
    try:
        _, model = make_pair("llama")
        lathe.compile(model, policy="heuristic", pipeline=EVERY_VALUE)
        model(input_ids=batch(1), labels=batch(1)).loss.backward()
    finally:
        lathe._offload.apply = original
    [(forward, backward, done)] = captured.values()
    assert done
    targets = lambda gm, op: [n for n in offload_ops(gm) if n.target == op]
    ops = torch.ops.lathe
    assert len(targets(forward, ops.offload.default)) == len(targets(forward, ops.offload_wait.default)) == len(done)
    assert len(targets(backward, ops.reload.default)) == len(targets(backward, ops.reload_wait.default)) == len(done)
    # What the forward returns for each offloaded value is its host copy, on the CPU device of the host.
    outputs = forward.graph.output_node().args[0]
    hosts = [n for n in outputs if isinstance(n, torch.fx.Node) and n.target == ops.offload_wait.default]
    assert len(hosts) == len(done)
    # The compute stream waits for the copies out at the forward's end: every wait reads the
    # forward's last computed value, and nothing computed comes after it but the waits.
    waits = targets(forward, ops.offload_wait.default)
    [forward_end] = {w.args[2] for w in waits}
    forward_order = {n: i for i, n in enumerate(forward.graph.nodes)}
    assert not [n for n in forward.graph.nodes if forward_order[n] > forward_order[forward_end] and n.op == "call_function"
                and n.target != ops.offload_wait.default and isinstance(n.meta.get("val"), torch.Tensor)]
    # The ops are anchored on values Inductor writes out anyway, never on an elementwise value or a
    # view that the anchor alone would make it write out.
    anchors = [w.args[2] for w in waits] + [r.args[2] for r in targets(backward, ops.reload.default)]
    for anchor in filter(None, anchors):
        assert anchor.target is operator.getitem or (
            torch.Tag.pointwise not in anchor.target.tags and not anchor.target.is_view), anchor.format_node()
    # Every copy in comes before the wait its reader depends on.
    order = {n: i for i, n in enumerate(backward.graph.nodes)}
    for wait in targets(backward, ops.reload_wait.default):
        assert order[wait.args[0]] < order[wait]
        assert all(order[user] > order[wait] for user in wait.users)


def test_activation_offload_reaches_the_planner_from_code_and_environment(monkeypatch):
    reference, model = make_pair("gpt2")
    lathe.compile(model, policy="budget", memory="8GiB", activation_offload=True)
    assert_step_matches_eager(reference, model, batch(1))
    assert all("offload=true" in p.pipeline for p in lathe.plans(model))
    monkeypatch.setenv("LATHE_ACTIVATION_OFFLOAD", "1")
    assert lathe._options.make_options().activation_offload is True
    assert lathe._options.make_options(activation_offload=False).activation_offload is False
    monkeypatch.setenv("LATHE_ACTIVATION_OFFLOAD", "sometimes")
    with pytest.raises(lathe.LatheError, match="LATHE_ACTIVATION_OFFLOAD: expected 0, 1, true or false"):
        lathe._options.make_options()


@pytest.mark.parametrize("kwargs, message", [
    ({"activation_offload": "yes"}, "activation_offload: expected True or False"),
    ({"pipeline": "split,fusion,recompute(policy=torch,offload_min=1MiB)"}, "offload_min and offload_link apply with offload=true"),
])
def test_bad_offload_options_are_refused(kwargs, message):
    _, model = make_pair("gpt2")
    with pytest.raises(Exception, match=message):
        lathe.compile(model, **kwargs)
        model(input_ids=batch(1), labels=batch(1)).loss.backward()


def test_a_plan_bundle_carries_its_offload_back(tmp_path):
    reference, model = make_pair("llama")
    lathe.compile(model, policy="heuristic", pipeline=EVERY_VALUE, trace_dir=str(tmp_path))
    assert_step_matches_eager(reference, model, batch(1))
    [written] = glob.glob(str(tmp_path / "plans" / "*.plan.json"))
    bundle = json.load(open(written))
    assert [t["node"] for t in bundle["activation_offload"]["tensors"]] == [e[0] for e in lathe.plans(model)[0].plan.offloaded]
    with pytest.raises(lathe.LatheError, match="carries its own offload decision"):
        lathe.compile(make_pair("llama")[1], plan=written, activation_offload=True)
    torch._dynamo.reset()
    reference, replay = make_pair("llama")
    lathe.compile(replay, plan=written)
    assert_step_matches_eager(reference, replay, batch(2))
    [applied] = lathe.plans(replay)
    assert applied.offloaded == lathe.plans(model)[0].offloaded

"""Training steps under lathe.compile give eager's loss and gradients, and the forward that runs
saves exactly the set the planner chose."""

import pytest
import torch

import lathe
from models import MODELS, batch, make_pair, train_step

POLICY_OPTIONS = {
    "torch": {},
    "heuristic": {},
    "budget": {"memory": "8GiB"},  # generous: the fastest plan the budget policy finds
}


def assert_step_matches_eager(reference, model, ids):
    ref_loss, ref_grads = train_step(reference, ids)
    loss, grads = train_step(model, ids)
    torch.testing.assert_close(loss, ref_loss, rtol=1e-5, atol=1e-6)
    assert grads.keys() == ref_grads.keys()
    for name, grad in grads.items():
        torch.testing.assert_close(grad, ref_grads[name], rtol=1e-4, atol=1e-5, msg=lambda m: f"{name}: {m}")


def assert_forward_saves_the_plan(plans):
    assert plans, "no joint graph was planned"
    for plan in plans:
        assert plan.forward_saved == plan.torch_saved, plan.graph_id
        planned = set(plan.plan.saved)
        assert planned <= set(plan.torch_saved) | set(plan.saved_through_getitems), plan.graph_id


@pytest.mark.parametrize("policy", list(POLICY_OPTIONS))
@pytest.mark.parametrize("name", list(MODELS))
def test_training_step_matches_eager(name, policy):
    reference, model = make_pair(name)
    lathe.compile(model, policy=policy, **POLICY_OPTIONS[policy])
    for seed in (1, 2):  # the second step runs the compiled graphs without compiling
        assert_step_matches_eager(reference, model, batch(seed))
    plans = lathe.plans(model)
    assert_forward_saves_the_plan(plans)
    assert all(p.plan.policy == policy for p in plans)


@pytest.mark.parametrize("name", list(MODELS))
def test_with_no_options_the_plan_is_no_larger_and_no_slower_than_torchs(name):
    """One decorator and nothing else: the budget policy without memory= plans the least peak at no
    more step time than torch's own saved set, by the planner's figures."""
    planned = {}
    for policy in ("torch", None):
        reference, model = make_pair(name)
        lathe.compile(model, policy=policy)
        assert_step_matches_eager(reference, model, batch(1))
        planned[policy] = lathe.plans(model)
    assert len(planned[None]) == len(planned["torch"])  # the same graphs (ids differ: Dynamo counts the second compile)
    for default, torch_plan in zip(planned[None], planned["torch"]):
        assert default.plan.policy == "budget" and "memory=" not in default.pipeline
        assert default.plan.peak_bytes <= torch_plan.plan.peak_bytes, default.graph_id
        assert default.plan.step_seconds <= torch_plan.plan.step_seconds * 1.001, default.graph_id


def test_one_decorator_on_the_hugging_face_llama_block_class_compiles_every_layer(monkeypatch):
    from transformers.models.llama import modeling_llama

    reference, _ = make_pair("llama")
    # lathe.compile on a class hooks its __init__, as magi_compile does; undone after the test.
    monkeypatch.setattr(modeling_llama.LlamaDecoderLayer, "__init__", modeling_llama.LlamaDecoderLayer.__init__)
    lathe.compile(modeling_llama.LlamaDecoderLayer, policy="heuristic")
    torch.manual_seed(0)
    model = type(reference)(reference.config).train()
    model.load_state_dict(reference.state_dict())
    for seed in (1, 2):
        assert_step_matches_eager(reference, model, batch(seed))
    layers = list(model.model.layers)
    assert len(layers) == 2 and all(len(lathe.plans(layer)) == 1 for layer in layers)
    assert_forward_saves_the_plan([p for layer in layers for p in lathe.plans(layer)])

"""The memory rewrites: the chunked linear + cross-entropy and the embedding gradient over the rows
a batch reads, as ops against torch's and inside lathe.compile against eager."""

import json
import re

import pytest
import torch
import torch.nn.functional as F
import transformers

import lathe
from lathe import _native, _rewrites
from lathe._options import make_options

import models


@pytest.fixture
def small_chunks(monkeypatch):
    # Several vocabulary chunks even at test sizes, so the chunk loop and its edges run.
    monkeypatch.setattr(_rewrites, "_CHUNK_BYTES", 4 * 24 * 7)


@pytest.mark.parametrize("mean", [True, False])
def test_linear_cross_entropy_equals_torch(small_chunks, mean):
    generator = torch.Generator().manual_seed(0)
    h = torch.randn(24, 16, generator=generator, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(50, 16, generator=generator, dtype=torch.float64, requires_grad=True)
    labels = torch.randint(0, 50, (24,), generator=generator)
    labels[::5] = -100  # ignored rows
    labels[1] = 49  # the last column, in the last (short) chunk
    reduction = "mean" if mean else "sum"
    expected = F.cross_entropy(F.linear(h, weight), labels, ignore_index=-100, reduction=reduction)
    expected_grads = torch.autograd.grad(expected, (h, weight))
    loss, _ = torch.ops.lathe.linear_cross_entropy(h, weight, labels, -100, mean)
    grads = torch.autograd.grad(loss, (h, weight))
    torch.testing.assert_close(loss, expected, rtol=1e-10, atol=1e-10)
    for got, want in zip(grads, expected_grads):
        torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("label", [50, -3])
def test_labels_outside_the_vocabulary_are_refused_as_torch_refuses_them(small_chunks, label):
    generator = torch.Generator().manual_seed(0)
    h, weight = torch.randn(24, 16, generator=generator), torch.randn(50, 16, generator=generator)
    labels = torch.randint(0, 50, (24,), generator=generator)
    labels[7] = label
    with pytest.raises(IndexError, match="out of bounds"):
        F.cross_entropy(F.linear(h, weight), labels)
    with pytest.raises(RuntimeError, match="outside the vocabulary"):
        torch.ops.lathe.linear_cross_entropy(h, weight, labels, -100, True)
    with pytest.raises(RuntimeError, match="out of bounds"):  # its gather of the targets' logits
        torch.ops.lathe.cross_entropy(F.linear(h, weight), labels, -100, True)


@pytest.mark.parametrize("mean", [True, False])
def test_cross_entropy_from_logits_equals_torch(small_chunks, mean):
    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(24, 50, generator=generator, dtype=torch.float64, requires_grad=True)
    labels = torch.randint(0, 50, (24,), generator=generator)
    labels[::5] = -100
    labels[23] = 49  # the last row, in the last (short) chunk, at the last column
    reduction = "mean" if mean else "sum"
    assert _rewrites._row_chunk(24, 50) < 24  # several chunks of rows
    expected = F.cross_entropy(logits, labels, ignore_index=-100, reduction=reduction)
    (expected_grad,) = torch.autograd.grad(expected, logits)
    loss, _ = torch.ops.lathe.cross_entropy(logits, labels, -100, mean)
    (grad,) = torch.autograd.grad(loss, logits)
    torch.testing.assert_close(loss, expected, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(grad, expected_grad, rtol=1e-10, atol=1e-10)


def test_cross_entropy_from_bf16_logits_upcasts_as_torch_does():
    # Hugging Face's loss upcasts the logits to fp32 first; the op upcasts chunk by chunk and
    # returns the gradient in the logits' dtype.
    generator = torch.Generator().manual_seed(0)
    logits = (torch.randn(32, 300, generator=generator) * 4).bfloat16().requires_grad_()
    labels = torch.randint(0, 300, (32,), generator=generator)
    expected = F.cross_entropy(logits.float(), labels)
    (expected_grad,) = torch.autograd.grad(expected, logits)
    loss, _ = torch.ops.lathe.cross_entropy(logits, labels, -100, True)
    (grad,) = torch.autograd.grad(loss, logits)
    assert loss.dtype == torch.float32 and grad.dtype == torch.bfloat16
    torch.testing.assert_close(loss, expected, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(grad, expected_grad)


def test_embedding_gradient_equals_torch_with_padding():
    generator = torch.Generator().manual_seed(0)
    weight = torch.randn(40, 8, generator=generator, requires_grad=True)
    ids = torch.randint(0, 40, (3, 11), generator=generator)
    ids[0, :4] = 7  # repeated rows accumulate
    ids[1, 2] = 3  # the padding row: no gradient
    out_grad = torch.randn(3, 11, 8, generator=generator)
    expected = torch.autograd.grad(F.embedding(ids, weight, padding_idx=3), weight, out_grad)[0]
    got = torch.autograd.grad(torch.ops.lathe.embedding(ids, weight, 3), weight, out_grad)[0]
    torch.testing.assert_close(got, expected, rtol=1e-6, atol=1e-6)
    assert not got[3].any()


VOCAB, HIDDEN = 4096, 32


def wide_vocab_llama(dtype=torch.float32):
    # A vocabulary large against the hidden size, as in a real LM: vocabulary-sized tensors are the peak.
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=64, attn_implementation="sdpa")).to(dtype).train()


def planned_joint_graphs(monkeypatch):
    texts = []
    plan_joint = _native.plan_joint
    monkeypatch.setattr(_native, "plan_joint", lambda text, *a, **k: (texts.append(text), plan_joint(text, *a, **k))[1])
    return texts


def test_rewritten_llama_trains_as_eager(monkeypatch):
    texts = planned_joint_graphs(monkeypatch)
    ids = torch.randint(0, 4096, (2, 32), generator=torch.Generator().manual_seed(1))
    reference = wide_vocab_llama()
    loss, grads = models.train_step(reference, ids)
    for rewrites in (True, False):
        texts.clear()
        model = lathe.compile(wide_vocab_llama(), policy="heuristic", rewrites=rewrites)
        got_loss, got_grads = models.train_step(model, ids)
        torch.testing.assert_close(got_loss, loss, rtol=1e-5, atol=1e-5)
        for name, grad in grads.items():
            torch.testing.assert_close(got_grads[name], grad, rtol=1e-4, atol=1e-5, msg=name)
        backend = model._lathe_backend
        (joint,) = texts
        lathe_ops = set(re.findall(r"torch\.ops\.lathe\.(\w+)", joint))
        if rewrites:
            # The model returns its logits, so the lm_head matmul stays and the loss reads them.
            assert lathe_ops == {"cross_entropy", "cross_entropy_backward", "embedding", "embedding_backward"}
            assert sorted(line.split(": ")[1] for line in backend.rewritten) == ["embedding_grad", "linear_cross_entropy"]
        else:
            assert not lathe_ops and not backend.rewritten


def test_rewritten_bf16_llama_plans_no_fp32_embedding_accumulator():
    # Compiled, a bf16 model's peak is at the end of the backward, where torch's embedding backward
    # holds an fp32 accumulator of the whole table beside the bf16 gradient (../shared/anchors §1);
    # the rewritten one sums only the rows the batch reads. The loss saves nothing here: Inductor
    # never writes out the fp32 log-softmax, and the planner knows it.
    ids = torch.randint(0, VOCAB, (1, 16), generator=torch.Generator().manual_seed(1))  # logits under the table
    timelines = {}
    for rewrites in (True, False):
        model = lathe.compile(wide_vocab_llama(torch.bfloat16), policy="heuristic", rewrites=rewrites)
        models.train_step(model, ids)
        timelines[rewrites] = json.loads(model._lathe_backend.plans[0].plan.bundle_json)["timeline"]
    accumulator_bytes = VOCAB * HIDDEN * 4
    torch_step = timelines[False]
    assert torch_step["phase"][torch_step["peak_step"]] == "b"
    assert torch_step["at_peak"]["temporaries"] >= accumulator_bytes, torch_step["at_peak"]
    # The rewritten step peaks elsewhere (the loss), lower by most of the accumulator.
    peaks = {rewrites: timeline["peak_bytes"] for rewrites, timeline in timelines.items()}
    assert peaks[False] - peaks[True] > accumulator_bytes // 2, peaks


class LossOnlyHead(torch.nn.Module):
    """An lm_head whose logits serve the loss only, as in a training step that returns the loss."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.head = torch.nn.Linear(32, 4096, bias=False)

    def forward(self, h, labels):
        return F.cross_entropy(self.head(h).float().view(-1, 4096), labels.view(-1))


def test_loss_of_logits_no_one_else_reads_never_makes_them(monkeypatch, small_chunks):
    texts = planned_joint_graphs(monkeypatch)
    generator = torch.Generator().manual_seed(2)
    h = torch.randn(2, 16, 32, generator=generator, requires_grad=True)
    labels = torch.randint(0, 4096, (2, 16), generator=generator)
    reference = LossOnlyHead()
    expected = reference(h, labels)
    expected_grads = torch.autograd.grad(expected, (h, reference.head.weight))
    model = lathe.compile(LossOnlyHead(), policy="heuristic")
    loss = model(h, labels)
    grads = torch.autograd.grad(loss, (h, model.head.weight))
    torch.testing.assert_close(loss, expected, rtol=1e-5, atol=1e-5)
    for got, want in zip(grads, expected_grads):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-6)
    (joint,) = texts
    assert set(re.findall(r"torch\.ops\.lathe\.(\w+)", joint)) == {"linear_cross_entropy", "linear_cross_entropy_backward"}
    assert not re.findall(r"\[32, 4096\]", joint)  # no logits-sized tensor anywhere in the step
    assert model._lathe_backend.rewritten == ["0/0: linear_cross_entropy: cross_entropy (lathe::linear_cross_entropy)"]


def test_rewrites_option_and_environment(monkeypatch):
    assert make_options().rewrites == _rewrites.DEFAULT_REWRITES
    assert "logits_without_grad" not in _rewrites.DEFAULT_REWRITES  # it changes what the model returns
    assert make_options(rewrites="all").rewrites == _rewrites.REWRITES
    assert make_options(rewrites=False).rewrites == ()
    assert make_options(rewrites="embedding_grad").rewrites == ("embedding_grad",)
    monkeypatch.setenv("LATHE_REWRITES", "none")
    assert make_options().rewrites == ()
    assert make_options(rewrites=True).rewrites == _rewrites.DEFAULT_REWRITES  # code wins over the environment
    with pytest.raises(lathe.LatheError, match="unknown rewrite 'chunked'"):
        make_options(rewrites=["chunked"])


def test_returned_logits_without_grad_leave_no_logits_gradient(monkeypatch):
    texts = planned_joint_graphs(monkeypatch)
    ids = torch.randint(0, 4096, (2, 32), generator=torch.Generator().manual_seed(1))
    loss, grads = models.train_step(wide_vocab_llama(), ids)
    peaks = {}
    for rewrites in ("linear_cross_entropy,embedding_grad", "all"):
        texts.clear()
        model = lathe.compile(wide_vocab_llama(), policy="heuristic", rewrites=rewrites)
        model.zero_grad(set_to_none=True)
        output = model(input_ids=ids, labels=ids)
        assert output.logits.shape == (2, 32, 4096)
        assert output.logits.requires_grad == (rewrites != "all")
        output.loss.backward()
        torch.testing.assert_close(output.loss.detach(), loss, rtol=1e-5, atol=1e-5)
        for name, p in model.named_parameters():
            torch.testing.assert_close(p.grad, grads[name], rtol=1e-4, atol=1e-5, msg=name)
        (joint,) = texts
        # AOTAutograd hands a differentiable output a gradient (zeros when unused): one of the
        # logits' shape, unless they are returned detached.
        logits_tangents = re.findall(r"tangents_\d+: \"f32\[2, 32, 4096\]", joint)
        assert len(logits_tangents) == (0 if rewrites == "all" else 1), logits_tangents
        peaks[rewrites] = model._lathe_backend.plans[0].plan.peak_bytes
    assert peaks["all"] < peaks["linear_cross_entropy,embedding_grad"], peaks


def test_parameters_are_planned_as_held_for_the_whole_step():
    # AOT's text calls every primal a plain input; the partitioner names the static-lifetime ones
    # (parameters and buffers) so that the plan holds them to the end of the step, as the module does.
    model = lathe.compile(wide_vocab_llama(), policy="heuristic", rewrites=False)
    models.train_step(model, torch.randint(0, VOCAB, (1, 16), generator=torch.Generator().manual_seed(1)))
    weights = json.loads(model._lathe_backend.plans[0].plan.bundle_json)["timeline"]["weights"]
    parameter_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    assert weights[0] >= parameter_bytes
    assert set(weights) == {weights[0]}

"""Memory rewrites of the captured graph, where the compiled peak of a language model is.

On Hugging Face causal LMs the peak is vocabulary-sized (../shared/anchors §1): the fp32 logits of
the loss and their gradient, and the fp32 accumulator `embedding_dense_backward` makes for the
embedding gradient. No saved-set decision moves them, so two rewrites replace the ops themselves,
in the Dynamo graph before AOTAutograd traces it:

- `linear_cross_entropy`: `cross_entropy(linear(h, W) [.float() / views], labels)` becomes one of
  two ops, by whether the model also returns the logits:
  - returned (Hugging Face's models do): the lm_head matmul runs anyway, so the loss is taken from
    its logits, `lathe::cross_entropy(logits, labels)`, upcasting one chunk of rows at a time; its
    backward writes the logits' gradient in their own dtype. No fp32 logits-sized tensor exists,
    and the step runs the three lm_head matmuls it ran before. Whether the logits are kept for the
    backward or recomputed is the planner's saved-set decision, as for any matmul output.
  - not returned: `lathe::linear_cross_entropy(h, W, labels)` walks the vocabulary in chunks: the
    forward keeps one log-sum-exp per row, the backward recomputes one chunk of logits at a time
    and writes the weight gradient chunk by chunk. Full logits exist neither for the loss nor for
    its gradient, at the price of a fourth lm_head matmul.
- `embedding_grad`: `embedding(ids, W)` becomes `lathe::embedding`, whose backward sums the
  gradient in fp32 only over the rows the batch reads and writes them into a gradient of W's dtype.
- `logits_without_grad` (only when asked for: it changes what the model returns): the logits a
  rewritten loss's model also returns are detached, so the backward gets no zeros gradient for
  them (a logits-sized buffer, and its lm_head matmuls when the loss does not use the logits).

The planner's op table prices the ops (core/ir/op_table.cpp): the fused loss as the lm_head matmul
it is (compute sensitive: kept, not recomputed), its backward as three; the loss from logits as the
log-softmax reduction it is. Gradients equal eager's within rounding (tests/runtime/test_rewrites.py).
"""

from __future__ import annotations

import operator
from typing import Optional, Sequence

import torch
import torch.nn.functional as F

from . import _loss_kernels
from ._custom_ops import register_custom_op
from ._errors import LatheError

REWRITES = ("linear_cross_entropy", "embedding_grad", "logits_without_grad")
# logits_without_grad changes what the model returns (logits no gradient can flow back through), so
# it is applied only when asked for.
DEFAULT_REWRITES = ("linear_cross_entropy", "embedding_grad")
REWRITES_ARTIFACT = "lathe_rewrites"  # the TORCH_TRACE artifact listing what a compile rewrote

# Bytes of one fp32 chunk of logits: small next to a vocabulary-sized tensor, large enough that each
# chunk's matmul runs at full rate and each chunk's kernels are long next to their launch.
_CHUNK_BYTES = 128 * 2**20


def parse_rewrites(value: object) -> tuple:
    """True/None: the default rewrites; False, 'none' or (): none; 'all'; a name, a comma list or a
    sequence."""
    if value is None or value is True:
        return DEFAULT_REWRITES
    if value is False:
        return ()
    names = [n.strip() for n in value.split(",")] if isinstance(value, str) else list(value)
    names = [n for n in names if n]
    if names == ["none"]:
        return ()
    if names == ["all"]:
        return REWRITES
    unknown = [n for n in names if n not in REWRITES]
    if unknown:
        raise LatheError(f"rewrites: unknown rewrite {unknown[0]!r} (one of {', '.join(REWRITES)}, or none)")
    return tuple(n for n in REWRITES if n in names)


def _vocab_chunk(rows: int, vocab: int) -> int:
    return max(1, min(vocab, _CHUNK_BYTES // (4 * max(1, rows))))


def _row_chunk(rows: int, vocab: int) -> int:
    return max(1, min(rows, _CHUNK_BYTES // (4 * max(1, vocab))))


def _loss_dtype(h: torch.Tensor) -> torch.dtype:
    """fp32, or h's dtype when wider: the loss's logits are upcast as Hugging Face's loss does."""
    return torch.promote_types(h.dtype, torch.float32)


def _targets(labels: torch.Tensor, ignore_index: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Which rows count, and each row's target column (0 for an ignored row, masked later)."""
    valid = labels != ignore_index
    return valid, torch.where(valid, labels, 0)


def _reduced(losses: torch.Tensor, valid: torch.Tensor, mean: bool) -> torch.Tensor:
    return losses.sum() / valid.sum() if mean else losses.sum()


def _row_scale(grad_loss: torch.Tensor, valid: torch.Tensor, dtype: torch.dtype, mean: bool) -> torch.Tensor:
    """d loss / d row loss: the loss gradient, over the counted rows when the loss is their mean."""
    scale = grad_loss.to(dtype) / valid.sum() if mean else grad_loss.to(dtype)
    return valid.to(dtype) * scale


def _lce_fake(h, weight, labels, ignore_index, mean):
    return h.new_empty((), dtype=_loss_dtype(h)), h.new_empty((h.shape[0],), dtype=_loss_dtype(h))


def _lce_backward_fake(grad_loss, h, weight, labels, lse, ignore_index, mean):
    return torch.empty_like(h), torch.empty_like(weight)


@register_custom_op("lathe::linear_cross_entropy_backward", infer_output_meta=_lce_backward_fake)
def linear_cross_entropy_backward(grad_loss: torch.Tensor, h: torch.Tensor, weight: torch.Tensor,
                                  labels: torch.Tensor, lse: torch.Tensor, ignore_index: int,
                                  mean: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Gradients of linear_cross_entropy for h and weight, one chunk of logits at a time."""
    rows, vocab = h.shape[0], weight.shape[0]
    valid, target = _targets(labels, ignore_index)
    dtype = _loss_dtype(h)
    row_scale = _row_scale(grad_loss, valid, dtype, mean)
    grad_h = torch.zeros(h.shape, dtype=dtype, device=h.device)
    grad_weight = torch.empty_like(weight)
    chunk = _vocab_chunk(rows, vocab)
    for start in range(0, vocab, chunk):
        stop = min(vocab, start + chunk)
        probs = torch.exp(torch.mm(h, weight[start:stop].t()).to(dtype) - lse[:, None])
        inside = ((target >= start) & (target < stop)).to(dtype)
        probs.scatter_add_(1, (target - start).clamp(0, stop - start - 1)[:, None], -inside[:, None])
        grad_logits = (probs * row_scale[:, None]).to(h.dtype)
        grad_h += torch.mm(grad_logits, weight[start:stop]).to(dtype)
        torch.mm(grad_logits.t(), h, out=grad_weight[start:stop])
    return grad_h.to(h.dtype), grad_weight


def _lce_setup(ctx, inputs, output):
    h, weight, labels, ignore_index, mean = inputs
    ctx.save_for_backward(h, weight, labels, output[1])
    ctx.ignore_index, ctx.mean = ignore_index, mean


def _lce_backward(ctx, grad_loss, _grad_lse):
    h, weight, labels, lse = ctx.saved_tensors
    grad_h, grad_weight = linear_cross_entropy_backward(grad_loss, h, weight, labels, lse, ctx.ignore_index, ctx.mean)
    return grad_h, grad_weight, None, None, None


@register_custom_op("lathe::linear_cross_entropy", infer_output_meta=_lce_fake,
                    backward=_lce_backward, setup_context=_lce_setup)
def linear_cross_entropy(h: torch.Tensor, weight: torch.Tensor, labels: torch.Tensor, ignore_index: int,
                         mean: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """cross_entropy(h @ weight.T upcast to fp32, labels): the loss and each row's log-sum-exp."""
    rows, vocab = h.shape[0], weight.shape[0]
    valid, target = _targets(labels, ignore_index)
    # Each chunk clamps its targets, so one out of the vocabulary would pass unseen: checked here
    # as torch's loss checks it, on the device without a sync.
    torch._assert_async(((target >= 0) & (target < vocab)).all(), "linear_cross_entropy: a label is outside the vocabulary")
    dtype = _loss_dtype(h)
    running_max = torch.full((rows,), float("-inf"), dtype=dtype, device=h.device)
    running_sum = torch.zeros(rows, dtype=dtype, device=h.device)
    target_logit = torch.zeros(rows, dtype=dtype, device=h.device)
    chunk = _vocab_chunk(rows, vocab)
    for start in range(0, vocab, chunk):
        stop = min(vocab, start + chunk)
        logits = torch.mm(h, weight[start:stop].t()).to(dtype)
        new_max = torch.maximum(running_max, logits.amax(dim=1))
        running_sum = running_sum * torch.exp(running_max - new_max) + torch.exp(logits - new_max[:, None]).sum(dim=1)
        running_max = new_max
        inside = (target >= start) & (target < stop)
        picked = logits.gather(1, (target - start).clamp(0, stop - start - 1)[:, None]).squeeze(1)
        target_logit = target_logit + torch.where(inside, picked, 0.0)
    lse = running_max + torch.log(running_sum)
    return _reduced(torch.where(valid, lse - target_logit, 0.0), valid, mean), lse


def _ce_fake(logits, labels, ignore_index, mean):
    return logits.new_empty((), dtype=_loss_dtype(logits)), logits.new_empty((logits.shape[0],), dtype=_loss_dtype(logits))


def _ce_backward_fake(grad_loss, logits, labels, lse, ignore_index, mean):
    return torch.empty_like(logits)


@register_custom_op("lathe::cross_entropy_backward", infer_output_meta=_ce_backward_fake)
def cross_entropy_backward(grad_loss: torch.Tensor, logits: torch.Tensor, labels: torch.Tensor, lse: torch.Tensor,
                           ignore_index: int, mean: bool) -> torch.Tensor:
    """The gradient of cross_entropy for logits, in their dtype, one chunk of rows at a time."""
    rows, vocab = logits.shape
    valid, target = _targets(labels, ignore_index)
    dtype = _loss_dtype(logits)
    row_scale = _row_scale(grad_loss, valid, dtype, mean)
    if _loss_kernels.available(logits):
        return _loss_kernels.logits_grad(logits, lse, target, row_scale)
    grad = torch.empty_like(logits)
    chunk = _row_chunk(rows, vocab)
    for start in range(0, rows, chunk):
        stop = min(rows, start + chunk)
        probs = torch.exp(logits[start:stop].to(dtype) - lse[start:stop, None])
        probs.scatter_add_(1, target[start:stop, None], probs.new_full((stop - start, 1), -1.0))
        torch.mul(probs, row_scale[start:stop, None], out=probs)
        grad[start:stop] = probs
    return grad


def _ce_setup(ctx, inputs, output):
    logits, labels, ignore_index, mean = inputs
    ctx.save_for_backward(logits, labels, output[1])
    ctx.ignore_index, ctx.mean = ignore_index, mean


def _ce_backward(ctx, grad_loss, _grad_lse):
    logits, labels, lse = ctx.saved_tensors
    return cross_entropy_backward(grad_loss, logits, labels, lse, ctx.ignore_index, ctx.mean), None, None, None


@register_custom_op("lathe::cross_entropy", infer_output_meta=_ce_fake, backward=_ce_backward,
                    setup_context=_ce_setup)
def cross_entropy(logits: torch.Tensor, labels: torch.Tensor, ignore_index: int,
                  mean: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """cross_entropy(logits upcast to fp32, labels) without an fp32 copy of the logits: the loss
    and each row's log-sum-exp."""
    rows, vocab = logits.shape
    valid, target = _targets(labels, ignore_index)
    dtype = _loss_dtype(logits)
    if _loss_kernels.available(logits):  # only for logits no wider than fp32: dtype is fp32
        lse = _loss_kernels.row_lse(logits)
    else:
        lse = torch.empty(rows, dtype=dtype, device=logits.device)
        chunk = _row_chunk(rows, vocab)
        for start in range(0, rows, chunk):
            stop = min(rows, start + chunk)
            lse[start:stop] = torch.logsumexp(logits[start:stop].to(dtype), dim=1)
    picked = logits.gather(1, target[:, None]).squeeze(1).to(dtype)
    return _reduced(torch.where(valid, lse - picked, 0.0), valid, mean), lse


def _embedding_backward_fake(grad, ids, num_weights, padding_idx):
    return grad.new_empty((num_weights, grad.shape[-1]))


@register_custom_op("lathe::embedding_backward", infer_output_meta=_embedding_backward_fake)
def embedding_backward(grad: torch.Tensor, ids: torch.Tensor, num_weights: int, padding_idx: int) -> torch.Tensor:
    """The embedding's weight gradient, summed in fp32 over the rows the batch reads only."""
    rows, slot = torch.unique(ids.reshape(-1), return_inverse=True)
    sums = torch.zeros((rows.numel(), grad.shape[-1]), dtype=torch.float32, device=grad.device)
    sums.index_add_(0, slot, grad.reshape(-1, grad.shape[-1]).float())
    if padding_idx >= 0:
        sums[rows == padding_idx] = 0
    grad_weight = torch.zeros((num_weights, grad.shape[-1]), dtype=grad.dtype, device=grad.device)
    grad_weight.index_copy_(0, rows, sums.to(grad.dtype))
    return grad_weight


def _embedding_setup(ctx, inputs, output):
    ids, weight, padding_idx = inputs
    ctx.save_for_backward(ids)
    ctx.num_weights, ctx.padding_idx = weight.shape[0], padding_idx


def _embedding_backward(ctx, grad):
    (ids,) = ctx.saved_tensors
    return None, embedding_backward(grad, ids, ctx.num_weights, ctx.padding_idx), None


def _embedding_fake(ids, weight, padding_idx):
    return weight.new_empty((*ids.shape, weight.shape[1]))


@register_custom_op("lathe::embedding", infer_output_meta=_embedding_fake,
                    backward=_embedding_backward, setup_context=_embedding_setup)
def embedding(ids: torch.Tensor, weight: torch.Tensor, padding_idx: int) -> torch.Tensor:
    """F.embedding(ids, weight, padding_idx) (padding_idx -1: none)."""
    return F.embedding(ids, weight, None if padding_idx < 0 else padding_idx)


# --- the graph rewrites ----------------------------------------------------------------------

_PASS_THROUGH_METHODS = {"float", "view", "reshape", "contiguous"}


def _example(node: torch.fx.Node) -> Optional[torch.Tensor]:
    value = node.meta.get("example_value")
    return value if isinstance(value, torch.Tensor) else None


def _is_function(node: object, fn: object) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and node.target is fn


def _arg(node: torch.fx.Node, index: int, name: str, default: object) -> object:
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(name, default)


def _logits_linear(node: torch.fx.Node) -> Optional[tuple[torch.fx.Node, list[torch.fx.Node]]]:
    """The bias-free linear whose output, through casts to fp32 and views, `node` is, and those
    casts and views."""
    between = []
    while isinstance(node, torch.fx.Node):
        if _is_function(node, F.linear) or _is_function(node, torch._C._nn.linear):
            return (node, between) if _arg(node, 2, "bias", None) is None else None
        if node.op == "call_method" and node.target in _PASS_THROUGH_METHODS:
            between.append(node)
            node = node.args[0]
        elif node.op == "call_method" and node.target == "to" and node.args[1:] == (torch.float32,) and not node.kwargs:
            between.append(node)
            node = node.args[0]
        else:
            return None
    return None


def _rewrite_cross_entropy(graph: torch.fx.Graph, node: torch.fx.Node) -> Optional[tuple[torch.fx.Node, Optional[torch.fx.Node]]]:
    """Replaces the loss; returns the linear that made its logits and the node through which the
    new loss reads them: None when it is the fused loss, which reads none (None when nothing
    matched)."""
    logits, labels = _arg(node, 0, "input", None), _arg(node, 1, "target", None)
    if _arg(node, 2, "weight", None) is not None or _arg(node, 7, "label_smoothing", 0.0) != 0.0:
        return None
    if _arg(node, 3, "size_average", None) is not None or _arg(node, 5, "reduce", None) is not None:
        return None
    reduction, ignore_index = _arg(node, 6, "reduction", "mean"), _arg(node, 4, "ignore_index", -100)
    if reduction not in ("mean", "sum") or not isinstance(ignore_index, int) or not isinstance(labels, torch.fx.Node):
        return None
    found = _logits_linear(logits)
    logits_value, labels_value = _example(logits), _example(labels)
    if found is None or logits_value is None or labels_value is None or logits_value.dim() != 2 or labels_value.dim() != 1:
        return None
    linear, between = found
    hidden, weight = linear.args[0], linear.args[1]
    hidden_value, weight_value = _example(hidden), _example(weight)
    if hidden_value is None or weight_value is None or weight_value.dim() != 2:
        return None
    if hidden_value.shape[-1] != weight_value.shape[1] or logits_value.shape[1] != weight_value.shape[0]:
        return None
    loss_path = {node, *between}
    returned = any(user not in loss_path for n in (linear, *between) for user in n.users)
    with graph.inserting_before(node):
        if returned:  # the logits exist anyway: the loss reads them
            reads = graph.call_method("reshape", (linear, -1, weight_value.shape[0]))
            fused = graph.call_function(torch.ops.lathe.cross_entropy.default,
                                        (reads, labels, ignore_index, reduction == "mean"))
        else:
            reads = None
            rows = graph.call_method("reshape", (hidden, -1, hidden_value.shape[-1]))
            fused = graph.call_function(torch.ops.lathe.linear_cross_entropy.default,
                                        (rows, weight, labels, ignore_index, reduction == "mean"))
        loss = graph.call_function(operator.getitem, (fused, 0))
    node.replace_all_uses_with(loss)
    graph.erase_node(node)
    return linear, reads


def _rewrite_embedding(graph: torch.fx.Graph, node: torch.fx.Node) -> bool:
    ids, weight = _arg(node, 0, "input", None), _arg(node, 1, "weight", None)
    padding_idx = _arg(node, 2, "padding_idx", None)
    if _arg(node, 3, "max_norm", None) is not None or _arg(node, 5, "scale_grad_by_freq", False) or _arg(node, 6, "sparse", False):
        return False
    weight_value = _example(weight) if isinstance(weight, torch.fx.Node) else None
    if weight_value is None or weight_value.dim() != 2 or not weight_value.requires_grad:
        return False
    if padding_idx is not None and not isinstance(padding_idx, int):
        return False
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight_value.shape[0]
    with graph.inserting_before(node):
        replacement = graph.call_function(torch.ops.lathe.embedding.default,
                                          (ids, weight, -1 if padding_idx is None else padding_idx))
    node.replace_all_uses_with(replacement)
    graph.erase_node(node)
    return True


def apply_rewrites(gm: torch.fx.GraphModule, rewrites: Sequence[str]) -> list[str]:
    """Rewrites `gm` in place; returns what was rewritten, one line per node."""
    done, logits = [], []
    for node in list(gm.graph.nodes):
        if "linear_cross_entropy" in rewrites and _is_function(node, F.cross_entropy):
            found = _rewrite_cross_entropy(gm.graph, node)
            if found is not None:
                linear, reads = found
                op = "cross_entropy" if reads is not None else "linear_cross_entropy"
                done.append(f"linear_cross_entropy: {node.name} (lathe::{op})")
                logits.append((linear, reads))
        elif "embedding_grad" in rewrites and _is_function(node, F.embedding):
            if _rewrite_embedding(gm.graph, node):
                done.append(f"embedding_grad: {node.name}")
    if done:
        gm.graph.eliminate_dead_code()
    # What is left of a rewritten loss's linear makes the logits the model returns. AOTAutograd
    # hands every differentiable output a gradient, zeros when the caller never uses it: a
    # logits-sized buffer added to the loss's gradient of the logits, or, when the loss does not
    # read them, two lm_head-sized matmuls of its own. Detached, the output needs none (and a loss
    # computed from the returned logits gets no gradient through them).
    if "logits_without_grad" in rewrites:
        for linear, reads in logits:
            if not any(user is not reads for user in linear.users):
                continue
            with gm.graph.inserting_after(linear):
                detached = gm.graph.call_method("detach", (linear,))
            linear.replace_all_uses_with(detached, delete_user_cb=lambda user: user is not detached and user is not reads)
            done.append(f"logits_without_grad: {linear.name}")
    if done:
        gm.recompile()
    return done

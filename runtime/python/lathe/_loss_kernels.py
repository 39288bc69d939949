"""Triton kernels of the loss from logits (lathe::cross_entropy, _rewrites.py) on CUDA: one program
per row reads the row once, in its own dtype, and keeps its arithmetic in fp32 registers. The
chunked torch code beside them (_rewrites.py) writes and reads an fp32 copy of every chunk, which
costs over ten times these kernels' time on the H200 (bench/device/runtime/loss_kernels.py).
Without Triton (the CPU) that code runs instead; TRITON_INTERPRET=1 runs these kernels on the CPU,
as tests/runtime/test_loss_kernels.py does."""

from __future__ import annotations

import os

import torch

try:
    import triton
    import triton.language as tl
except ImportError:  # the CPU wheel of torch comes without Triton
    triton = None

# Columns one program loads per step: a power of two (tl.arange), large enough to stream a row at
# full bandwidth, small enough for its registers.
_BLOCK = 4096


def available(logits: torch.Tensor) -> bool:
    """True when the kernels can run on `logits`: Triton is there, the tensor is contiguous rows of
    a dtype no wider than their fp32 arithmetic, and it is on CUDA (or Triton's interpreter runs
    them on the CPU)."""
    if triton is None or logits.dim() != 2 or not logits.is_contiguous():
        return False
    if logits.dtype not in (torch.bfloat16, torch.float16, torch.float32):
        return False
    return logits.is_cuda or os.environ.get("TRITON_INTERPRET") == "1"


if triton is not None:

    @triton.jit
    def _lse_kernel(logits, lse, row_stride, vocab, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        start = logits + row * row_stride
        columns = tl.arange(0, BLOCK)
        running_max = tl.full((), float("-inf"), tl.float32)
        running_sum = tl.zeros((), tl.float32)
        for offset in tl.range(0, vocab, BLOCK):
            inside = offset + columns < vocab
            x = tl.load(start + offset + columns, mask=inside, other=float("-inf")).to(tl.float32)
            new_max = tl.maximum(running_max, tl.max(x, 0))
            running_sum = running_sum * tl.exp(running_max - new_max) + tl.sum(tl.exp(x - new_max), 0)
            running_max = new_max
        tl.store(lse + row, running_max + tl.log(running_sum))

    @triton.jit
    def _grad_kernel(logits, grad, lse, target, row_scale, row_stride, vocab, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        row_lse = tl.load(lse + row)
        row_target = tl.load(target + row)
        scale = tl.load(row_scale + row)
        columns = tl.arange(0, BLOCK)
        for offset in tl.range(0, vocab, BLOCK):
            inside = offset + columns < vocab
            x = tl.load(logits + row * row_stride + offset + columns, mask=inside, other=0.0).to(tl.float32)
            probs = tl.exp(x - row_lse) - tl.where(offset + columns == row_target, 1.0, 0.0)
            tl.store(grad + row * row_stride + offset + columns, (probs * scale).to(grad.dtype.element_ty), mask=inside)


def row_lse(logits: torch.Tensor) -> torch.Tensor:
    """log(sum(exp(row))) of every row, in fp32."""
    rows, vocab = logits.shape
    lse = torch.empty(rows, dtype=torch.float32, device=logits.device)
    if rows:
        _lse_kernel[(rows,)](logits, lse, logits.stride(0), vocab, BLOCK=_BLOCK, num_warps=8)
    return lse


def logits_grad(logits: torch.Tensor, lse: torch.Tensor, target: torch.Tensor, row_scale: torch.Tensor) -> torch.Tensor:
    """(softmax(row) - one_hot(target)) * row_scale for every row, in the logits' dtype; lse and
    row_scale are fp32, one value per row."""
    rows, vocab = logits.shape
    grad = torch.empty_like(logits)
    if rows:
        _grad_kernel[(rows,)](logits, grad, lse.contiguous(), target.contiguous(), row_scale.contiguous(),
                              logits.stride(0), vocab, BLOCK=_BLOCK, num_warps=8)
    return grad

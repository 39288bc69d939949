"""The Triton kernels of the loss from logits (runtime/python/lathe/_loss_kernels.py), run by Triton's
interpreter on the CPU against torch's cross_entropy. The interpreter lives apart from .venv
(scripts/setup.sh --python puts it in .venv/triton-interpreter), so the check runs in a child
process with it on the path."""

import os
import subprocess
import sys
from pathlib import Path

import lathe

INTERPRETER = Path(sys.prefix) / "triton-interpreter"

CHECK = r"""
import torch, torch.nn.functional as F
from lathe import _loss_kernels

generator = torch.Generator().manual_seed(0)
for dtype in (torch.float32, torch.bfloat16):
    for mean in (True, False):
        # 37 rows over 2.2 blocks of columns: the masked tail of the last block runs.
        logits = (torch.randn(37, 9000, generator=generator) * 3).to(dtype).requires_grad_()
        labels = torch.randint(0, 9000, (37,), generator=generator)
        labels[::4] = -100
        labels[1], labels[2] = 8999, 0
        assert _loss_kernels.available(logits.detach())
        expected = F.cross_entropy(logits.float(), labels, reduction="mean" if mean else "sum")
        (expected_grad,) = torch.autograd.grad(expected, logits)
        loss, lse = torch.ops.lathe.cross_entropy(logits, labels, -100, mean)
        (grad,) = torch.autograd.grad(loss, logits)
        assert lse.dtype == torch.float32 and grad.dtype == dtype
        torch.testing.assert_close(lse, torch.logsumexp(logits.detach().float(), 1))
        torch.testing.assert_close(loss, expected, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(grad, expected_grad)
print("kernels match torch")
"""


def test_triton_loss_kernels_match_torch_cross_entropy():
    assert (INTERPRETER / "triton").is_dir(), f"no Triton interpreter in {INTERPRETER}: run scripts/setup.sh --python"
    package = Path(lathe.__file__).resolve().parents[1]
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=os.pathsep.join([str(INTERPRETER), str(package)]))
    result = subprocess.run([sys.executable, "-c", CHECK], env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "kernels match torch" in result.stdout

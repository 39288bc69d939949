#!/usr/bin/env python3
"""Writes torch.export archives of long-row softmax and log_softmax for the GPU verification.

The captures hold no plain softmax over long rows (their softmax statistics run inside the
cross-entropy groups), while the kernel goal names one: long-row softmax at least 2x Inductor,
whose anchor is Inductor's softmax over 8192 x 8192 and 512 x 131072 bf16 rows at 1.70 TB/s
(../shared/reference/algorithms.md, section 3). So this script exports those programs with
torch.export and prepare.sh plans and exports them through lathe's own .pt2 loader, as a user's
archive would go.

One archive per case (bundle names then say what each kernel is), each program a scale and one
row op over the last dimension of one input (see RowSoftmax):
  softmax_bf16_8192x8192, softmax_bf16_512x131072       bf16 in and out, fp32 math
  log_softmax_bf16_8192x8192, log_softmax_bf16_512x131072
  softmax_fp32_8192x8192                                 fp32 throughout (twice the bytes a row)
The example inputs are meta tensors: export traces with shapes and dtypes, and torch.export.save
stores the example inputs in the archive (real ones would make each file 128-256 MB).

usage: make_softmax_capture.py OUT_DIR   (writes OUT_DIR/<case>.pt2, prints one line per file)
"""

import argparse
from pathlib import Path

import torch

CASES = (
    ("softmax", torch.bfloat16, (8192, 8192)),
    ("softmax", torch.bfloat16, (512, 131072)),
    ("log_softmax", torch.bfloat16, (8192, 8192)),
    ("log_softmax", torch.bfloat16, (512, 131072)),
    ("softmax", torch.float32, (8192, 8192)),
)
DTYPE_NAMES = {torch.bfloat16: "bf16", torch.float32: "fp32"}


class RowSoftmax(torch.nn.Module):
    """softmax or log_softmax over the last dimension of scores scaled as attention's are
    (x / sqrt(64)), in the input's dtype (bf16 rows are reduced in fp32 all the same). Why the
    scale: lathe fuses groups of two ops or more, so a lone softmax would be no group and no
    kernel. Why no cast to fp32 and back: export puts an `_assert_tensor_metadata` on the fp32
    result, which lathe counts as a reader outside the group, so the kernel would also write the
    fp32 rows (twice the traffic of the case the goal names)."""

    def __init__(self, op):
        super().__init__()
        self.op = op

    def forward(self, x):
        return getattr(torch, self.op)(x * 0.125, dim=-1)


def case_name(op, dtype, shape):
    return f"{op}_{DTYPE_NAMES[dtype]}_{'x'.join(map(str, shape))}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder for the .pt2 files")
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    for op, dtype, shape in CASES:
        x = torch.empty(shape, dtype=dtype, device="meta")
        program = torch.export.export(RowSoftmax(op), (x,))
        path = out / f"{case_name(op, dtype, shape)}.pt2"
        torch.export.save(program, path)
        calls = [str(n.target) for n in program.graph.nodes if n.op == "call_function"]
        print(f"{path}: {', '.join(calls)}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Checks and times every kernel of `lathe export` bundles on the local CUDA GPU, in one run.

For each kernel of each bundle (DIR/manifest.json, format lathe.kernels/1): the shared library is
loaded with ctypes (rebuilt from DIR/src with nvcc when the shipped one does not load or holds no
code for this GPU), fresh random inputs of the manifest's shapes are drawn three times (int64
index inputs in range of what they index; the third time every pointer is one element off 16-byte
alignment, for the kernels' non-vector path), outputs are poisoned (0xFF bytes, then 0x5A bytes)
before each launch and every element must be written, guard bytes around each output must stay
intact and the inputs unchanged. Outputs are compared with the manifest's FX lines run in float64
on upcast inputs (every floating cast and dtype argument mapped to float64, so the reference never
rounds) by ||out - ref|| / ||ref||, with bounds by the lowest floating precision the kernel touches.

Then each distinct kernel is timed with CUDA events on CUDA-graph replays (median of many, after
warm-up, rotating input and output sets so that one replay streams several times the L2) against
PyTorch eager of the FX lines in the original dtypes and torch.compile of the same function;
achieved bandwidth is the manifest's bytes over the time, against a large device-to-device copy
measured in the same run (bytes read + written). `cuobjdump --list-elf` lists each fatbin's
entries, and compute-sanitizer memcheck launches each distinct kernel once more with every tensor
its own allocation, to catch reads and writes past a tensor.

Floating inputs are drawn from normal(0, 1), or uniform(0.5, 1.5) where the manifest's `producer`
of an input never gives negative values (exp, softmax, ...: POSITIVE_PRODUCERS) and where normal
draws make the reference non-finite.

Runs the kernels in a worker process that the main process restarts after a crash or a broken CUDA
context, so one faulting kernel costs only itself. Writes $OUT/verify_kernels.json (everything),
$OUT/verify_kernels.txt and .md (the table), and prints the table last. Needs torch (with Triton
for torch.compile) and, for a rebuild, nvcc.

`--profile NAME[,NAME...]` instead runs only those kernels, once each, for Nsight Compute
(profile.sh; see run_profile).
"""

import argparse
import ctypes
import hashlib
import importlib
import json
import math
import operator
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

MB = 1 << 20
GOAL_TRAFFIC_BYTES = 64 * MB  # the bandwidth goal counts kernels that move at least this much
COPY_BYTES = 1 << 30  # per buffer of the copy ceiling; far larger than any L2
GUARD_BYTES = 4096  # canary bytes on each side of every output (keeps 256-byte alignment)
CANARY = 0xA5
POISONS = (0xFF, 0x5A)  # 0xFF bytes are NaN in every floating dtype
# The checks of each kernel: (shift in elements off 16-byte alignment, poisons); with two poisons
# an element that holds the poison after both launches was never written.
DRAWS = ((0, 2), (0, 1), (1, 2))
ROTATE_BYTES = 256 * MB  # one graph replay streams at least this much when a call's data is smaller
MAX_SETS = 64
REPLAYS = 15
TARGET_REPLAY_S = 2e-3
MAX_CALLS_PER_REPLAY = 2000
# Errors that mean the library holds no usable code for this GPU: rebuild it here.
IMAGE_ERRORS = {
    35: "cudaErrorInsufficientDriver",
    200: "cudaErrorInvalidKernelImage",
    209: "cudaErrorNoKernelImageForDevice",
    218: "cudaErrorInvalidPtx",
    222: "cudaErrorUnsupportedPtxVersion",
    500: "cudaErrorSymbolNotFound",
}
# Error bounds on ||out - ref|| / ||ref|| by the lowest floating precision a kernel touches.
ERROR_BOUNDS = {"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-4, "float64": 1e-9}
PRECISION_ORDER = ("bfloat16", "float16", "float32", "float64")
# Over the bound, a kernel still passes when its error is at most 1.5x eager's on the same inputs and
# under this cap (see verify_kernel).
CONDITIONING_CAP = {"bfloat16": 2e-2, "float16": 5e-3, "float32": 1e-3, "float64": 1e-9}
# Ops whose result is never negative (the manifest's `producer` of an input): such inputs are drawn
# from uniform(0.5, 1.5), as the graph feeds them, rather than normal(0, 1). A signed draw of an
# `exp` output made a softmax normalisation exp / sum(exp) ill-conditioned (a sum near zero).
POSITIVE_PRODUCERS = {
    "aten.exp.default",
    "aten._softmax.default",
    "aten.softmax.int",
    "aten.sigmoid.default",
    "aten.rsqrt.default",
    "aten.sqrt.default",
    "aten.abs.default",
}


# ----------------------------------------------------------------------------------------------
# Manifest and the FX function


def load_manifest(bundle):
    manifest = json.loads((bundle / "manifest.json").read_text())
    if manifest.get("format") != "lathe.kernels/1":
        raise ValueError(f"{bundle}/manifest.json: format {manifest.get('format')!r}, expected lathe.kernels/1")
    return manifest


def symbol_values(manifest):
    """The launch's symbols array: each symbol's hint (the kernels are specialised to them)."""
    return [int(v) for v in manifest.get("symbol_hints", [])]


def symbol_names(manifest):
    return list(manifest.get("symbols", []))


def function_source(kernel):
    """The kernel's FX lines as one Python function over its inputs that returns its outputs."""
    params = ", ".join(t["name"] for t in kernel["inputs"])
    body = "".join(f"    {line}\n" for line in kernel["fx"])
    results = ", ".join(t["name"] for t in kernel["outputs"])
    return f"def {kernel['launch']}_fx({params}):\n{body}    return ({results},)\n"


# A device argument in the FX lines: the capture's device (a .pt2 exported on the CPU names "cpu").
DEVICE_ARGUMENT = re.compile(r"torch\.device\(type='(?:cpu|cuda)'(?:, index=\d+)?\)")


def make_function(kernel, torch, extra_globals):
    """The FX lines as a function; their device arguments name the device of the run's tensors, so
    that a program captured on the CPU runs on the GPU (and the reverse)."""
    importlib.import_module("torch._inductor.inductor_prims")  # registers prims.fma and the like
    namespace = {
        "lathe_run_device": torch.device("cuda" if torch.cuda.is_available() else "cpu"),
        "torch": torch,
        "device": torch.device,
        "inf": math.inf,
        "nan": math.nan,
        "operator": operator,
        "math": math,
        **extra_globals,
    }
    source = DEVICE_ARGUMENT.sub("lathe_run_device", function_source(kernel))
    exec(compile(source, f"<fx {kernel['name']}>", "exec"), namespace)
    return namespace[f"{kernel['launch']}_fx"]


def canonical_signature(kernel):
    """Equal for kernels that compute the same function on the same shapes (layers repeat)."""
    names = [t["name"] for t in kernel["inputs"]]
    for line in kernel["fx"]:
        names.append(line.split("=", 1)[0].strip())
    renamed = {name: f"v{i}" for i, name in enumerate(names)}
    # A value name, not an op's part: "softmax" renames the value, not torch.ops.aten.softmax.int.
    pattern = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, sorted(renamed, key=len, reverse=True))) + r")\b")
    text = "\n".join(pattern.sub(lambda m: renamed[m.group(0)], line) for line in kernel["fx"])
    outputs = [renamed.get(t["name"], t["name"]) for t in kernel["outputs"]]
    specs = [(t["dtype"], t["sizes"], t["strides"]) for t in kernel["inputs"] + kernel["outputs"]]
    return hashlib.sha1(json.dumps([text, outputs, specs]).encode()).hexdigest()[:16]


def lowest_precision(kernel):
    """The lowest floating precision among the kernel's tensors and the casts in its FX lines."""
    found = {t["dtype"] for t in kernel["inputs"] + kernel["outputs"]}
    text = "\n".join(kernel["fx"])
    for name, torch_name in (
        ("bfloat16", "torch.bfloat16"),
        ("float16", "torch.float16"),
        ("float32", "torch.float32"),
    ):
        if torch_name in text:
            found.add(name)
    for name in PRECISION_ORDER:
        if name in found:
            return name
    return "float64"  # integer / bool only: exact


def storage_numel(sizes, strides):
    if any(s == 0 for s in sizes):
        return 0
    return 1 + sum((s - 1) * st for s, st in zip(sizes, strides))


def tensor_bytes(spec, torch):
    return (
        storage_numel(spec["sizes"], spec["strides"])
        * torch.empty((), dtype=getattr(torch, spec["dtype"])).element_size()
    )


def is_softmax_like(kernel):
    """softmax / log_softmax (aten._softmax, aten.softmax.int, ...) or its decomposition."""
    text = "\n".join(kernel["fx"])
    return "softmax" in text or ("amax" in text and ".exp." in text)


def main_tensor(kernel, torch):
    return max(kernel["inputs"] + kernel["outputs"], key=lambda t: tensor_bytes(t, torch))


def positive_inputs(kernel, everywhere):
    """Per input, whether its floating values are drawn positive: all of them when `everywhere`
    (normal draws made the reference non-finite), else those whose producer is never negative."""
    return [everywhere or t.get("producer") in POSITIVE_PRODUCERS for t in kernel["inputs"]]


def describe_draw(kernel, everywhere):
    """The floating inputs' draw in words, for the JSON."""
    if everywhere:
        return "uniform(0.5, 1.5) (normal draws make the reference non-finite)"
    chosen = [f"{t['name']} ({t['producer']})" for t in kernel["inputs"] if t.get("producer") in POSITIVE_PRODUCERS]
    return "normal(0, 1)" + (f"; uniform(0.5, 1.5) for {', '.join(chosen)}" if chosen else "")


# ----------------------------------------------------------------------------------------------
# Reference in float64 and the ranges of index inputs


def reference_mode(torch, device):
    """A dispatch mode that runs every op in float64: floating dtype arguments become float64,
    device arguments the reference device, and softmax's half_to_float is dropped."""
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_map

    softmaxes = {torch.ops.aten._softmax.default, torch.ops.aten._log_softmax.default}

    def widen(value):
        if isinstance(value, torch.dtype) and value.is_floating_point:
            return torch.float64
        if isinstance(value, torch.device):
            return torch.device(device)
        if isinstance(value, (list, tuple)):
            return type(value)(widen(v) for v in value)
        return value

    def to_float64(value):  # results of ops that pick the default dtype (int / 2, say)
        if isinstance(value, torch.Tensor) and value.is_floating_point() and value.dtype != torch.float64:
            return value.double()
        return value

    class Float64(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            args = [widen(a) for a in args]
            kwargs = {k: widen(v) for k, v in (kwargs or {}).items()}
            if func in softmaxes and len(args) > 2:
                args[2] = False
            return tree_map(to_float64, func(*args, **kwargs))

    return Float64()


# Ops that index with an integer tensor: op name -> function(args, position of the index tensor,
# position inside a list argument or None) giving the exclusive upper bound of its values.
def _dim_bound(self_index, dim_index):
    return lambda args, pos, sub: args[self_index].shape[args[dim_index]]


INDEXING = {
    "aten.embedding.default": lambda args, pos, sub: args[0].shape[0],
    "aten.embedding_dense_backward.default": lambda args, pos, sub: args[2],
    "aten.index.Tensor": lambda args, pos, sub: args[0].shape[sub],
    "aten._unsafe_index.Tensor": lambda args, pos, sub: args[0].shape[sub],
    "aten.index_put.default": lambda args, pos, sub: args[0].shape[sub],
    "aten._unsafe_index_put.default": lambda args, pos, sub: args[0].shape[sub],
    "aten.gather.default": _dim_bound(0, 1),
    "aten.scatter.value": _dim_bound(0, 1),
    "aten.scatter.src": _dim_bound(0, 1),
    "aten.scatter_add.default": _dim_bound(0, 1),
    "aten.scatter_reduce.two": _dim_bound(0, 1),
    "aten.index_select.default": _dim_bound(0, 1),
    "aten.index_add.default": _dim_bound(0, 1),
    "aten.nll_loss_forward.default": lambda args, pos, sub: args[0].shape[1 if args[0].dim() > 1 else 0],
    "aten.nll_loss_backward.default": lambda args, pos, sub: args[1].shape[1 if args[1].dim() > 1 else 0],
}
DEFAULT_INDEX_BOUND = 1024
# Scatters whose result with repeated indices is undefined (the last write wins, in no given
# order): their index must not repeat along the scatter dimension (topk indices never do).
DISTINCT_INDEX = {"aten.scatter.src", "aten.scatter.value"}


def index_bounds(fn, inputs, torch):
    """For each integer input, (the smallest size it indexes or DEFAULT_INDEX_BOUND when it indexes
    nothing, the dimension along which its values must be distinct or None), found by running fn
    once with those inputs at 0 and following integer values derived from them (views, unsqueezes,
    arithmetic) into indexing ops."""
    from torch.utils._python_dispatch import TorchDispatchMode

    integer = [i for i, t in enumerate(inputs) if not t.is_floating_point() and t.dtype != torch.bool]
    if not integer:
        return {}
    derived = {}  # id(tensor) -> input index; tensors kept alive so ids stay unique
    keep = []
    bounds, distinct = {}, {}
    probe = list(inputs)
    for i in integer:
        probe[i] = torch.zeros_like(inputs[i])
        derived[id(probe[i])] = i
        keep.append(probe[i])

    def sources(value):
        if isinstance(value, torch.Tensor) and id(value) in derived:
            return [(derived[id(value)], None)]
        if isinstance(value, (list, tuple)):
            return [(src, k) for k, v in enumerate(value) for src, _ in sources(v)]
        return []

    class Follow(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            result = func(*args, **(kwargs or {}))
            name = str(func)
            found = [(pos, src, sub) for pos, a in enumerate(args) for src, sub in sources(a)]
            if found and name in INDEXING:
                for pos, src, sub in found:
                    bound = int(INDEXING[name](args, pos, sub))
                    bounds[src] = min(bounds.get(src, bound), bound)
                    if name in DISTINCT_INDEX and pos == 2 and args[2].shape == inputs[src].shape:
                        distinct[src] = args[1] % args[2].dim()
            elif found:
                outs = result if isinstance(result, (list, tuple)) else [result]
                for out in outs:
                    if isinstance(out, torch.Tensor) and not out.is_floating_point():
                        derived[id(out)] = found[0][1]
                        keep.append(out)
            return result

    try:
        with Follow():
            fn(*probe)
    except Exception:  # a probe at zeros may fail where real data does not; defaults then apply
        pass
    return {i: (max(1, bounds.get(i, DEFAULT_INDEX_BOUND)), distinct.get(i)) for i in integer}


# ----------------------------------------------------------------------------------------------
# Tensors


def draw_input(spec, torch, device, index, positive, generator, shift=0):
    """A fresh random tensor of the spec's sizes and strides (never zeros), `shift` elements into
    its buffer (1: the pointer is off 16-byte alignment). Integers in [0, bound) for index =
    (bound, distinct dimension or None), distinct along that dimension when there is one."""
    dtype = getattr(torch, spec["dtype"])
    n = storage_numel(spec["sizes"], spec["strides"]) + shift
    bound, distinct_dim = index
    if distinct_dim is not None and spec["sizes"][distinct_dim] <= bound:
        sizes = list(spec["sizes"])
        sizes[distinct_dim] = bound
        keys = torch.rand(sizes, device=device, generator=generator)
        values = keys.argsort(dim=distinct_dim).narrow(distinct_dim, 0, spec["sizes"][distinct_dim])
        flat = torch.empty(n, device=device, dtype=dtype)
        flat.as_strided(spec["sizes"], spec["strides"], shift).copy_(values)
        return flat.as_strided(spec["sizes"], spec["strides"], shift)
    if dtype.is_floating_point:
        if positive:
            flat = torch.rand(n, device=device, generator=generator) + 0.5
        else:
            flat = torch.randn(n, device=device, generator=generator)
        flat = flat.to(dtype)
    elif dtype == torch.bool:
        flat = torch.rand(n, device=device, generator=generator) < 0.5
    else:
        flat = torch.randint(0, bound, (n,), device=device, dtype=dtype, generator=generator)
    return flat.as_strided(spec["sizes"], spec["strides"], shift)


class GuardedOutput:
    """An output tensor inside a byte buffer with canary bytes on both sides, `shift` elements past
    a 256-byte boundary."""

    def __init__(self, spec, torch, device, shift=0):
        self.torch = torch
        self.dtype = getattr(torch, spec["dtype"])
        itemsize = torch.empty((), dtype=self.dtype).element_size()
        self.nbytes = storage_numel(spec["sizes"], spec["strides"]) * itemsize
        self.start = GUARD_BYTES + shift * itemsize
        padded = -(-(self.nbytes + shift * itemsize) // 256) * 256
        self.buffer = torch.full((padded + 2 * GUARD_BYTES,), CANARY, dtype=torch.uint8, device=device)
        self.body = self.buffer[self.start : self.start + self.nbytes]
        self.tensor = self.body.view(self.dtype).as_strided(spec["sizes"], spec["strides"])

    def poison(self, byte):
        self.body.fill_(byte)

    def guards_intact(self):
        before = self.buffer[: self.start]
        after = self.buffer[self.start + self.nbytes :]
        return bool((before == CANARY).all()) and bool((after == CANARY).all())

    def element_bytes(self):
        """The output's bytes, one row per element in logical order."""
        t = self.tensor.contiguous().reshape(-1)
        return t.view(self.torch.uint8).reshape(t.numel(), t.element_size())


def compare(out, ref, torch, bound):
    """||out - ref|| / ||ref|| over finite reference elements; non-finite ones must match exactly.
    Outliers: elements off by more than 16 * bound * (|ref| + rms(ref)), which a norm over millions
    of elements would hide (a wrong tail element, say). Integer and bool outputs must match exactly;
    their rel_err is the fraction of elements that differ."""
    if not out.is_floating_point():
        mismatches = int((out.to(ref.dtype) != ref).sum())
        return {"rel_err": mismatches / max(1, out.numel()), "mismatches": mismatches, "outliers": mismatches}
    out64, ref64 = out.double(), ref.double()
    finite = torch.isfinite(ref64)
    nan_out = int((~torch.isfinite(out64) & finite).sum())
    special_mismatch = int((~finite & ~((out64 == ref64) | (torch.isnan(out64) & torch.isnan(ref64)))).sum())
    zero = torch.zeros_like(ref64)
    diff = torch.where(finite, out64 - ref64, zero).abs()
    finite_ref = torch.where(finite, ref64, zero)
    ref_norm = float(torch.linalg.vector_norm(finite_ref))
    err_norm = float(torch.linalg.vector_norm(diff))
    rel = err_norm / ref_norm if ref_norm > 0 else err_norm
    rms = ref_norm / math.sqrt(max(1, int(finite.sum())))
    outliers = int((diff > 16 * bound * (finite_ref.abs() + rms)).sum())
    if nan_out or special_mismatch:
        rel = math.nan
    return {
        "rel_err": rel,
        "nan": nan_out,
        "special_mismatch": special_mismatch,
        "outliers": outliers,
        "max_err_over_rms": float(diff.max()) / rms if diff.numel() and rms > 0 else 0.0,
    }


# ----------------------------------------------------------------------------------------------
# The library


class Library:
    def __init__(self, path):
        self.path = str(path)
        self.handle = ctypes.CDLL(self.path)
        self.functions = {}

    def launcher(self, symbol):
        if symbol not in self.functions:
            fn = getattr(self.handle, symbol)
            fn.argtypes = [
                ctypes.POINTER(ctypes.c_void_p),
                ctypes.POINTER(ctypes.c_void_p),
                ctypes.POINTER(ctypes.c_int64),
                ctypes.c_void_p,
            ]
            fn.restype = ctypes.c_int
            self.functions[symbol] = fn
        return self.functions[symbol]


class Launch:
    """One kernel call with its argument arrays built once."""

    def __init__(self, fn, outputs, inputs, symbols, torch):
        self.fn, self.torch = fn, torch
        self.outputs = (ctypes.c_void_p * max(1, len(outputs)))(*[t.data_ptr() for t in outputs])
        self.inputs = (ctypes.c_void_p * max(1, len(inputs)))(*[t.data_ptr() for t in inputs])
        self.symbols = (ctypes.c_int64 * max(1, len(symbols)))(*symbols)

    def __call__(self):
        stream = self.torch.cuda.current_stream().cuda_stream if self.torch.cuda.is_available() else None
        return self.fn(self.outputs, self.inputs, self.symbols, stream)


# ----------------------------------------------------------------------------------------------
# Verification of one kernel


def verify_kernel(kernel, library, symbols, torch, device, seed):
    result = {
        "name": kernel["name"],
        "launch": kernel["launch"],
        "kind": kernel.get("kind"),
        "group": kernel.get("group"),
        "signature": canonical_signature(kernel),
        "bytes": kernel.get("bytes"),
        "softmax_like": is_softmax_like(kernel),
        "precision": lowest_precision(kernel),
    }
    main = main_tensor(kernel, torch)
    result["dtype"], result["shape"] = main["dtype"], main["sizes"]
    result["bound"] = ERROR_BOUNDS[result["precision"]]
    counted = sum(tensor_bytes(t, torch) for t in kernel["inputs"] + kernel["outputs"])
    result["bytes_counted"] = counted
    fn = make_function(kernel, torch, dict(zip(symbols["names"], symbols["values"])))
    generator = torch.Generator(device=device)
    generator.manual_seed(seed)

    zeros_for_shapes = [draw_input(t, torch, device, (1, None), False, generator) for t in kernel["inputs"]]
    bounds = index_bounds(fn, zeros_for_shapes, torch)
    result["index_bounds"] = {
        kernel["inputs"][i]["name"]: {"bound": b, "distinct_dim": d} for i, (b, d) in bounds.items()
    }

    launch_fn = library.launcher(kernel["launch"])
    errors, eager_errors, checks = [], [], []
    everywhere = False
    for shift, poisons in DRAWS:
        positive = positive_inputs(kernel, everywhere)
        inputs = [
            draw_input(t, torch, device, bounds.get(i, (1, None)), positive[i], generator, shift)
            for i, t in enumerate(kernel["inputs"])
        ]
        with reference_mode(torch, device):
            reference = fn(*[t.double() if t.is_floating_point() else t for t in inputs])
        if not checks and not all(bool(torch.isfinite(r).all()) for r in reference if r.is_floating_point()):
            # e.g. log or sqrt of an input: draw positive values instead
            everywhere = True
            inputs = [
                draw_input(t, torch, device, bounds.get(i, (1, None)), True, generator, shift)
                for i, t in enumerate(kernel["inputs"])
            ]
            with reference_mode(torch, device):
                reference = fn(*[t.double() if t.is_floating_point() else t for t in inputs])
        result["input_draw"] = describe_draw(kernel, everywhere)
        snapshots = [t.clone() for t in inputs]
        outputs = [GuardedOutput(t, torch, device, shift) for t in kernel["outputs"]]
        launch = Launch(launch_fn, [o.tensor for o in outputs], inputs, symbols["values"], torch)
        runs = []
        for poison in POISONS[:poisons]:
            for o in outputs:
                o.poison(poison)
            code = launch()
            if code != 0:
                result["launch_error"] = code
                result["pass"] = False
                result["failure"] = f"launch returned {code} ({IMAGE_ERRORS.get(code, 'see cudaError_t')})"
                return result
            if device != "cpu":
                torch.cuda.synchronize()
            runs.append([o.element_bytes().clone() for o in outputs])
        check = {
            "shift": shift,
            "guards_intact": all(o.guards_intact() for o in outputs),
            "inputs_unchanged": all(torch.equal(a, b) for a, b in zip(inputs, snapshots)),
        }
        if len(runs) == 2:
            unwritten = 0
            for a, b in zip(runs[0], runs[1]):
                unwritten += int(((a == POISONS[0]).all(dim=-1) & (b == POISONS[1]).all(dim=-1)).sum())
            check["unwritten"] = unwritten
            check["deterministic"] = (
                all(torch.equal(a, b) for a, b in zip(runs[0], runs[1])) if not unwritten else False
            )
        per_output = [compare(o.tensor, r, torch, result["bound"]) for o, r in zip(outputs, reference)]
        check["rel_err"] = worst_error([e["rel_err"] for e in per_output])
        check["outliers"] = sum(e["outliers"] for e in per_output)
        checks.append(check)
        errors.append(per_output)
        eager = fn(*inputs)
        eager_errors.append([compare(e, r, torch, result["bound"])["rel_err"] for e, r in zip(eager, reference)])
        del inputs, reference, snapshots, outputs, launch, runs, eager  # before the next draw: big rows

    worst = [
        max((e["rel_err"] for e in per_output), key=lambda v: math.inf if math.isnan(v) else v) for per_output in errors
    ]
    result["rel_err"] = max(worst, key=lambda v: math.inf if math.isnan(v) else v)
    result["rel_err_eager"] = max((max(e) for e in eager_errors if e), default=0.0)
    result["outputs"] = [
        {"name": t["name"], "draws": [errors[d][k] for d in range(len(errors))]}
        for k, t in enumerate(kernel["outputs"])
    ]
    result["checks"] = checks
    failures = []
    unwritten = max(c.get("unwritten", 0) for c in checks)
    if unwritten:
        failures.append(f"{unwritten} output elements never written")
    if not all(c["guards_intact"] for c in checks):
        failures.append("wrote outside its outputs (guard bytes changed)")
    if not all(c["inputs_unchanged"] for c in checks):
        failures.append("modified an input")
    outliers = max(sum(e["outliers"] for e in per_output) for per_output in errors)
    result["outliers"] = outliers
    if outliers:
        worst_output = max(result["outputs"], key=lambda o: max(d["outliers"] for d in o["draws"]))
        failures.append(f"{outliers} elements far off (worst output {worst_output['name']})")
    if math.isnan(result["rel_err"]):
        failures.append("NaN/Inf where the reference is finite (or non-finite values differ)")
    elif result["rel_err"] > result["bound"]:
        # Over the bound but as exact as PyTorch itself in the same dtypes on the same inputs: the
        # inputs make the function ill-conditioned (random draws where the graph has a positive
        # tensor, a sum near zero...), not a kernel error; capped per dtype all the same.
        as_eager = (
            result["rel_err"] <= 1.5 * result["rel_err_eager"]
            and result["rel_err"] <= CONDITIONING_CAP[result["precision"]]
        )
        if as_eager:
            result["ill_conditioned"] = True
        else:
            failures.append(
                f"rel err {result['rel_err']:.2e} over {result['bound']:.0e} (eager {result['rel_err_eager']:.2e})"
            )
    result["pass"] = not failures
    if failures:
        aligned_ok = all(
            c["guards_intact"]
            and c["inputs_unchanged"]
            and not c.get("unwritten")
            and not c["outliers"]
            and not (c["rel_err"] is None or math.isnan(c["rel_err"]) or c["rel_err"] > result["bound"])
            for c in checks
            if c["shift"] == 0
        )
        if aligned_ok:
            failures.append("only with pointers one element off 16-byte alignment (the non-vector path)")
        result["failure"] = "; ".join(failures)
    return result


# ----------------------------------------------------------------------------------------------
# Timing


def event_seconds(torch, fn, repeats):
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return times


def time_calls(torch, calls):
    """Median seconds of one call. `calls` rotate through distinct input / output sets. Calls are
    captured into a CUDA graph and its replays timed (falls back to a plain loop of calls when
    capture fails); one replay holds enough calls to run about TARGET_REPLAY_S."""
    for call in calls * 2:  # warm-up: compiles, loads modules, fills allocator caches
        call()
    torch.cuda.synchronize()
    loop = lambda: [call() for call in calls]  # noqa: E731
    rough = statistics.median(event_seconds(torch, loop, 3)) / len(calls)
    rounds = max(1, min(MAX_CALLS_PER_REPLAY // len(calls), math.ceil(TARGET_REPLAY_S / max(rough, 1e-7) / len(calls))))
    method = "cuda_graph"
    try:
        graph = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for call in calls:  # warm-up on the capture stream
                call()
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        with torch.cuda.graph(graph):
            for _ in range(rounds):
                for call in calls:
                    call()
        graph.replay()
        torch.cuda.synchronize()
        times = event_seconds(torch, graph.replay, REPLAYS)
    except Exception as e:  # noqa: BLE001 - any capture failure: time the plain loop instead
        method = f"loop ({type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''})"
        torch.cuda.synchronize()
        times = event_seconds(torch, lambda: [loop() for _ in range(rounds)], REPLAYS)
    per_call = [t / (rounds * len(calls)) for t in times]
    return {
        "seconds": statistics.median(per_call),
        "min_seconds": min(per_call),
        "calls_per_replay": rounds * len(calls),
        "method": method,
    }


def draw_input_sets(kernel, fn, torch, generator, sets):
    """`sets` sets of inputs on the GPU, drawn by the check's rule: index inputs in range,
    positive values from never-negative producers, and everywhere when normal draws would make
    the reference non-finite."""
    zeros = [draw_input(t, torch, "cuda", (1, None), False, generator) for t in kernel["inputs"]]
    bounds = index_bounds(fn, zeros, torch)

    def draw(positive):
        return [
            draw_input(t, torch, "cuda", bounds.get(i, (1, None)), positive[i], generator)
            for i, t in enumerate(kernel["inputs"])
        ]

    probe = draw(positive_inputs(kernel, False))
    with reference_mode(torch, "cuda"):
        reference = fn(*[t.double() if t.is_floating_point() else t for t in probe])
    everywhere = not all(bool(torch.isfinite(r).all()) for r in reference if r.is_floating_point())
    del probe, reference
    return [draw(positive_inputs(kernel, everywhere)) for _ in range(sets)]


def time_kernel(kernel, library, symbols, torch, seed, copy_bytes_per_s):
    """Times lathe, eager and torch.compile at the captured shapes, rotating input sets."""
    fn = make_function(kernel, torch, dict(zip(symbols["names"], symbols["values"])))
    generator = torch.Generator(device="cuda")
    generator.manual_seed(seed)
    counted = sum(tensor_bytes(t, torch) for t in kernel["inputs"] + kernel["outputs"])
    sets = max(1, min(MAX_SETS, math.ceil(ROTATE_BYTES / max(counted, 1))))
    launch_fn = library.launcher(kernel["launch"])
    input_sets = draw_input_sets(kernel, fn, torch, generator, sets)
    output_sets = [[GuardedOutput(t, torch, "cuda").tensor for t in kernel["outputs"]] for _ in range(sets)]
    launches = [Launch(launch_fn, outs, ins, symbols["values"], torch) for outs, ins in zip(output_sets, input_sets)]

    def lathe_call(launch):
        def call():
            code = launch()
            if code != 0:
                raise RuntimeError(f"launch returned {code}")

        return call

    result = {"sets": sets, "bytes_counted": counted}
    result["lathe"] = time_calls(torch, [lathe_call(launch) for launch in launches])
    again = time_calls(torch, [lathe_call(launch) for launch in launches])  # the spread of one version
    result["lathe_repeat_seconds"] = again["seconds"]
    result["lathe_spread"] = abs(again["seconds"] - result["lathe"]["seconds"]) / result["lathe"]["seconds"]
    result["eager"] = time_calls(torch, [lambda ins=ins: fn(*ins) for ins in input_sets])
    started = time.time()
    torch._dynamo.reset()  # each kernel's function is new: stale entries count towards the recompile limit
    compiled = torch.compile(fn, fullgraph=True, dynamic=False)
    try:
        compiled(*input_sets[0])
        result["compile_seconds"] = time.time() - started
        result["compile"] = time_calls(torch, [lambda ins=ins: compiled(*ins) for ins in input_sets])
    except Exception as e:  # noqa: BLE001 - a graph torch.compile rejects is reported, not fatal
        result["compile_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
    bytes_moved = kernel.get("bytes") or counted
    result["bytes"] = bytes_moved
    result["gbps"] = bytes_moved / result["lathe"]["seconds"] / 1e9
    result["copy_fraction"] = bytes_moved / result["lathe"]["seconds"] / copy_bytes_per_s
    if "compile" in result:
        result["inductor_gbps"] = bytes_moved / result["compile"]["seconds"] / 1e9
        result["speedup_vs_inductor"] = result["compile"]["seconds"] / result["lathe"]["seconds"]
    del input_sets, output_sets, launches
    torch.cuda.empty_cache()
    return result


def measure_copy(torch):
    src = torch.randn(COPY_BYTES // 4, device="cuda")
    dst = torch.full_like(src, float("nan"))
    dst.copy_(src)
    if not torch.equal(dst, src):
        raise RuntimeError("device-to-device copy produced wrong data")
    for _ in range(3):
        dst.copy_(src)
    seconds = statistics.median(event_seconds(torch, lambda: dst.copy_(src), 20))
    return {"bytes": 2 * COPY_BYTES, "seconds": seconds, "bytes_per_s": 2 * COPY_BYTES / seconds}


# ----------------------------------------------------------------------------------------------
# Worker: runs tasks, one JSON line per task, so that the main process can resume after a crash


def worker(args):
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    plan = json.loads(Path(args.worker).read_text())
    done = set(plan["skip"])
    libraries = {}
    log = open(plan["results"], "a", buffering=1)

    def write(record):
        log.write(json.dumps(record) + "\n")

    def context_broken():
        if device == "cpu":
            return False
        try:
            torch.cuda.synchronize()
            torch.ones(1, device="cuda").add_(1).item()
            return False
        except Exception:  # noqa: BLE001
            return True

    for task in plan["tasks"]:
        if task["id"] in done:
            continue
        if task["phase"] == "time" and time.time() > plan["deadline"] - task["estimate_s"]:
            write({"id": task["id"], "skipped": "time budget of the run spent"})
            continue
        write({"id": task["id"], "started": True})
        bundle = task["bundle"]
        try:
            if bundle not in libraries:
                libraries[bundle] = Library(plan["libraries"][bundle])
            manifest = load_manifest(Path(plan["bundles"][bundle]))
            kernel = manifest["kernels"][task["index"]]
            symbols = {"names": symbol_names(manifest), "values": symbol_values(manifest)}
            if task["phase"] == "verify":
                record = verify_kernel(kernel, libraries[bundle], symbols, torch, device, task["seed"])
                if device != "cpu" and record.get("launch_error") in IMAGE_ERRORS and not plan["rebuilt"].get(bundle):
                    write({"id": task["id"], "rebuild": bundle, "reason": record["failure"]})
                    return 3
            else:
                record = time_kernel(kernel, libraries[bundle], symbols, torch, task["seed"], plan["copy_bytes_per_s"])
        except Exception as e:  # noqa: BLE001 - one kernel's failure is its result
            record = {"error": f"{type(e).__name__}: {str(e)[:400]}", "pass": False}
        record["id"] = task["id"]
        write(record)
        if context_broken():
            write({"id": task["id"], "context_broken": True})
            return 4
    return 0


# ----------------------------------------------------------------------------------------------
# Main process


def rebuild_library(bundle, manifest, into):
    """Builds the kernels' sources (DIR/src) into a shared library for this GPU with the local nvcc:
    one unit that includes every source, as `lathe export` compiles them."""
    into.mkdir(parents=True, exist_ok=True)
    sources = [bundle / k["source"] for k in manifest["kernels"]]
    if not sources:
        raise RuntimeError(f"{bundle}: the manifest lists no kernel sources to rebuild from")
    unit = into / "all_kernels.cu"
    unit.write_text("".join(f'#include "{src.resolve()}"\n' for src in sources))
    arch = os.environ.get("LATHE_VERIFY_ARCH", "sm_90a")
    library = into / manifest.get("library", "liblathe_kernels.so")
    build = subprocess.run(
        [
            "nvcc",
            "-shared",
            "-Xcompiler",
            "-fPIC",
            "-O3",
            "-std=c++17",
            "-I",
            str(bundle / "src"),
            "-gencode",
            f"arch=compute_{arch[3:]},code={arch}",
            str(unit),
            "-o",
            str(library),
        ],
        capture_output=True,
        text=True,
    )
    if build.returncode != 0:
        raise RuntimeError(f"nvcc failed rebuilding {bundle.name}: {build.stderr[-1500:]}")
    return library


def list_fatbin(bundle, manifest):
    fatbin = bundle / manifest.get("fatbin", "kernels.fatbin")
    if not fatbin.exists():
        return {"error": f"{fatbin.name} missing"}
    try:
        text = subprocess.run(["cuobjdump", "--list-elf", str(fatbin)], capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        return {"error": "cuobjdump not found"}
    entries = re.findall(r"\b(sm_\d+a?)\b", text.stdout)
    counts = {arch: entries.count(arch) for arch in sorted(set(entries))}
    wanted = manifest.get("targets", ["sm_90a", "sm_120"])
    return {
        "elf_per_arch": counts,
        "targets": wanted,
        "all_targets_present": all(counts.get(a, 0) > 0 for a in wanted),
        "returncode": text.returncode,
        "stderr": text.stderr[-400:],
    }


def library_loads(path):
    probe = subprocess.run(
        [sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])", str(path)],
        capture_output=True,
        text=True,
    )
    return probe.returncode == 0, probe.stderr.strip().splitlines()[-1:] if probe.returncode else []


def memcheck_launches(bundle, library):
    """Runs under compute-sanitizer: launches each distinct kernel of the bundle once with aligned
    and once with misaligned pointers, every tensor its own cudaMalloc of exactly its extent
    (PYTORCH_NO_CUDA_MEMORY_CACHING=1), so that a read or write past a tensor is reported."""
    import torch

    manifest = load_manifest(Path(bundle))
    lib = Library(library)
    values = symbol_values(manifest)
    seen = set()
    for kernel in manifest["kernels"]:
        signature = canonical_signature(kernel)
        if signature in seen:
            continue
        seen.add(signature)
        fn = make_function(kernel, torch, dict(zip(symbol_names(manifest), values)))
        generator = torch.Generator(device="cuda")
        generator.manual_seed(7)
        print(f"memcheck prepare {kernel['name']}", flush=True)  # PyTorch's own kernels run next
        bounds = index_bounds(
            fn, [draw_input(t, torch, "cuda", (1, None), False, generator) for t in kernel["inputs"]], torch
        )
        for shift in (0, 1):
            inputs = [
                draw_input(t, torch, "cuda", bounds.get(i, (1, None)), False, generator, shift)
                for i, t in enumerate(kernel["inputs"])
            ]
            outputs = [
                torch.empty(
                    storage_numel(t["sizes"], t["strides"]) + shift, dtype=getattr(torch, t["dtype"]), device="cuda"
                ).as_strided(t["sizes"], t["strides"], shift)
                for t in kernel["outputs"]
            ]
            print(f"memcheck launch {kernel['name']} shift {shift}", flush=True)
            Launch(lib.launcher(kernel["launch"]), outputs, inputs, values, torch)()
            torch.cuda.synchronize()
    return 0


def run_memcheck(bundles, libraries, work, seconds):
    """compute-sanitizer memcheck over every bundle's distinct kernels, within `seconds` in all.
    Returns {bundle: {"kernels_launched", "errors": {kernel: [first messages]}, "finished"}}."""
    sanitizer = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    if not Path(sanitizer).exists():
        return {"error": "compute-sanitizer not found"}
    results = {}
    stop = time.time() + seconds
    env = {**os.environ, "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
    for name, bundle in bundles.items():
        left = stop - time.time()
        if left < 10:
            results[name] = {"skipped": "memcheck time spent"}
            continue
        log = work / f"memcheck_{name}.log"
        with open(log, "w") as f:
            checked = subprocess.Popen(
                [
                    sanitizer,
                    "--tool",
                    "memcheck",
                    "--print-limit",
                    "200",
                    sys.executable,
                    __file__,
                    "--memcheck",
                    str(bundle),
                    libraries[name],
                ],
                stdout=f,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
            try:
                code = checked.wait(timeout=left)
            except subprocess.TimeoutExpired:
                os.killpg(checked.pid, signal.SIGKILL)  # the sanitizer and the Python it runs
                checked.wait()
                code = None
        text = log.read_text(errors="replace")
        # Each launch is followed by a synchronize, so what the sanitizer prints after a launch's
        # marker line belongs to that launch.
        launched, errors, current = set(), {}, None
        for line in text.splitlines():
            marker = re.match(r"memcheck launch (\S+) shift (\d)", line)
            if marker:
                current = f"{marker.group(1)} (shift {marker.group(2)})"
                launched.add(marker.group(1))
            elif line.startswith("memcheck prepare"):
                current = None
            elif current and re.search(r"Invalid __\w+__|Program hit|out of bounds|misaligned", line):
                found = errors.setdefault(current, [])
                if len(found) < 4:
                    found.append(line.strip("= ").strip())
        summary = re.search(r"ERROR SUMMARY: (\d+) error", text)
        results[name] = {
            "kernels_launched": len(launched),
            "errors": errors,
            "exit": code,
            "finished": code is not None and summary is not None,
            "error_summary": int(summary.group(1)) if summary else None,
        }
        print(
            f"{name}: memcheck over {results[name]['kernels_launched']} distinct kernels: "
            f"{results[name]['error_summary']} errors{' (time out)' if code is None else ''}",
            flush=True,
        )
    return results


def run_worker(plan_path, results_path, hard_deadline, hang_s):
    """Runs the worker until it exits; kills it when its log stays silent for hang_s seconds (a
    kernel that never returns) or at hard_deadline. Returns (exit code, what happened)."""
    worker_process = subprocess.Popen([sys.executable, __file__, "--worker", str(plan_path)])
    last_size, last_change = -1, time.time()
    while worker_process.poll() is None:
        time.sleep(0.5)
        size = results_path.stat().st_size
        if size != last_size:
            last_size, last_change = size, time.time()
        for limit, why in (
            (last_change + hang_s, f"hung (no result for {hang_s:.0f} s), killed"),
            (hard_deadline, "killed at the deadline"),
        ):
            if time.time() > limit:
                worker_process.kill()
                worker_process.wait()
                return worker_process.returncode, why
    code = worker_process.returncode
    return code, "finished" if code == 0 else f"exited with {code}"


def format_us(seconds):
    return f"{seconds * 1e6:.1f}" if seconds is not None else "-"


def worst_error(values):
    return max(values, key=lambda v: math.inf if v is None or math.isnan(v) else v, default=None)


def table(rows, copy):
    """One line per distinct kernel (layers repeat: n counts the instances, rel err is the worst
    of them, pass needs all of them), as aligned text and as a Markdown table."""
    header = [
        "bundle",
        "kernel",
        "n",
        "kind",
        "dtype",
        "shape",
        "MiB",
        "rel err",
        "pass",
        "us lathe",
        "us eager",
        "us compile",
        "GB/s",
        "% copy",
        "vs ind.",
        "note",
    ]
    lines = [header]
    distinct = {}
    for r in rows:
        distinct.setdefault(r["time_id"] or r["id"], []).append(r)
    for group in distinct.values():
        first = group[0]
        v, t = first["verify"], first.get("time") or {}
        err = worst_error([r["verify"].get("rel_err") for r in group])
        err_text = "-" if err is None else ("NaN" if math.isnan(err) else f"{err:.1e}")
        failing = [r for r in group if not r["verify"].get("pass")]
        note = []
        if failing:
            f = failing[0]["verify"]
            note.append(
                f"{len(failing)} failing, e.g. {f.get('name')}: {(f.get('failure') or f.get('error') or '')[:90]}"
            )
        if t.get("skipped"):
            note.append(t["skipped"])
        if t.get("compile_error"):
            note.append("compile: " + t["compile_error"][:60])
        if t.get("error"):
            note.append(t["error"][:90])
        if v.get("softmax_like"):
            note.append("softmax")
        if any(r["verify"].get("ill_conditioned") for r in group):
            note.append("over the bound as eager is (ill-conditioned inputs)")
        lathe = t.get("lathe", {}).get("seconds")
        lines.append(
            [
                first["bundle"],
                v.get("name", "?"),
                str(len(group)),
                v.get("kind") or "-",
                v.get("dtype", "-"),
                "x".join(map(str, v.get("shape", []))) or "scalar",
                f"{t['bytes'] / MB:.1f}" if "bytes" in t else "-",
                err_text,
                "NO" if failing else "yes",
                format_us(lathe),
                format_us(t.get("eager", {}).get("seconds")),
                format_us(t.get("compile", {}).get("seconds")),
                f"{t['gbps']:.0f}" if "gbps" in t else "-",
                f"{100 * t['copy_fraction']:.0f}" if "copy_fraction" in t else "-",
                f"{t['speedup_vs_inductor']:.2f}x" if "speedup_vs_inductor" in t else "-",
                "; ".join(note),
            ]
        )
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(header))]
    text = "\n".join("  ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip() for line in lines)
    numeric = {"n", "MiB", "rel err", "us lathe", "us eager", "us compile", "GB/s", "% copy", "vs ind."}
    markdown = "\n".join(
        ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if h in numeric else "---" for h in header) + "|"]
        + ["| " + " | ".join(str(c).replace("|", "/") for c in line) + " |" for line in lines[1:]]
    )
    if copy:
        ceiling = f"copy ceiling: {copy['bytes_per_s'] / 1e9:.0f} GB/s ({copy['bytes'] / MB:.0f} MiB read + written)"
        text += "\n" + ceiling
        markdown += "\n\n" + ceiling
    return text, markdown


def goals(rows):
    """The issue's goals, evaluated on the timed kernels at their captured shapes."""
    timed = [r for r in rows if r["time_id"] == "time:" + r["id"].split(":", 1)[1] and "lathe" in r["time"]]
    big = [r for r in timed if r["time"]["bytes"] >= GOAL_TRAFFIC_BYTES]
    slow_bw = [r for r in big if r["time"]["copy_fraction"] < 0.9]
    vs = [r for r in timed if "speedup_vs_inductor" in r["time"]]
    slower = [r for r in vs if r["time"]["speedup_vs_inductor"] < 1 / 1.05]
    softmax = [r for r in vs if r["verify"].get("softmax_like")]
    failing = [r for r in rows if not r["verify"].get("pass")]
    name = lambda r: f"{r['bundle']}/{r['verify'].get('name', r['id'])}"  # noqa: E731
    return {
        "bandwidth_90pct_at_64MB": {
            "kernels": len(big),
            "below": [(name(r), round(100 * r["time"]["copy_fraction"], 1)) for r in slow_bw],
        },
        "not_slower_than_inductor_by_5pct": {
            "kernels": len(vs),
            "slower": [(name(r), round(r["time"]["speedup_vs_inductor"], 3)) for r in slower],
        },
        "softmax_2x_inductor": [
            (name(r), round(r["time"]["speedup_vs_inductor"], 2), r["verify"].get("shape")) for r in softmax
        ],
        "numerical_agreement": {
            "kernels": len(rows),
            "failing": [(name(r), r["verify"].get("failure") or r["verify"].get("error")) for r in failing],
        },
    }


def find_bundles(roots):
    """{name: folder} of the bundles given: folders holding a manifest.json, or folders of them."""
    bundles = {}
    for root in map(Path, roots):
        found = [root] if (root / "manifest.json").exists() else sorted(p.parent for p in root.glob("*/manifest.json"))
        for b in found:
            bundles[b.name] = b
    return bundles


# ----------------------------------------------------------------------------------------------
# Profiling: the chosen kernels once each, for Nsight Compute (profile.sh)


def select_kernels(manifests, names):
    """(bundle, kernel index) of each kernel the names pick, in their order and without repeats:
    a kernel's name (in every bundle that has one of that name), BUNDLE/NAME, or BUNDLE (all its
    kernels). Raises ValueError listing the names that pick nothing."""
    selected, unknown = [], []
    for name in (n.strip() for n in names):
        if not name:
            continue
        bundle, _, kernel = name.rpartition("/") if "/" in name else ("", "", name)
        if not bundle and kernel in manifests:  # a bundle's name alone
            bundle, kernel = kernel, ""
        picked = [
            (b, i)
            for b, manifest in manifests.items()
            if not bundle or b == bundle
            for i, k in enumerate(manifest["kernels"])
            if not kernel or k["name"] == kernel
        ]
        if not picked:
            unknown.append(name)
        selected += [p for p in picked if p not in selected]
    if unknown or not selected:
        raise ValueError(
            f"no kernel named {', '.join(unknown) or 'at all'} in the bundles {', '.join(sorted(manifests))}"
        )
    return selected


def profile_sequence(manifests, selected, torch):
    """What --profile launches, in order (ncu_table.py assigns ncu's rows to it): per kernel, its
    lathe launch (GPU kernels named after `kernel`), then torch.compile's (triton_ kernels)."""
    sequence = []
    for b, i in selected:
        kernel = manifests[b]["kernels"][i]
        main = main_tensor(kernel, torch)
        sequence.append(
            {
                "id": f"{b}/{kernel['name']}",
                "bundle": b,
                "kernel": kernel["name"],
                "bytes": kernel.get("bytes"),
                "dtype": main["dtype"],
                "shape": main["sizes"],
            }
        )
    return sequence


def run_profile(args):
    """Runs each chosen kernel once after a warm-up, lathe's launch and then torch.compile's, each
    inside an NVTX range and between cudaProfilerStart / Stop, so that
    `ncu --profile-from-start off` sees those launches only (not the warm-ups, nor Triton's
    autotuning). Writes $OUT/profile_sequence.json for ncu_table.py."""
    out = Path(args.out or os.environ.get("OUT") or "verify_out")
    out.mkdir(parents=True, exist_ok=True)
    bundles = find_bundles(args.bundles)
    manifests = {name: load_manifest(b) for name, b in bundles.items()}
    try:
        selected = select_kernels(manifests, args.profile.split(","))
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    import torch

    sequence = profile_sequence(manifests, selected, torch)
    (out / "profile_sequence.json").write_text(json.dumps(sequence, indent=1) + "\n")
    for entry in sequence:
        print(f"profile {entry['id']} ({entry['dtype']} {'x'.join(map(str, entry['shape']))})", flush=True)
    if not torch.cuda.is_available():
        print("--profile needs a CUDA device", file=sys.stderr)
        return 2
    libraries = {}
    status = 0
    for entry, (name, i) in zip(sequence, selected):
        kernel = manifests[name]["kernels"][i]
        if name not in libraries:
            library = bundles[name] / manifests[name].get("library", "liblathe_kernels.so")
            if not library_loads(library)[0]:
                library = rebuild_library(bundles[name], manifests[name], Path(args.work) / name)
            libraries[name] = Library(library)
        symbols = symbol_values(manifests[name])
        fn = make_function(kernel, torch, dict(zip(symbol_names(manifests[name]), symbols)))
        generator = torch.Generator(device="cuda")
        generator.manual_seed(5000 + i)
        inputs = draw_input_sets(kernel, fn, torch, generator, 1)[0]
        outputs = [GuardedOutput(t, torch, "cuda").tensor for t in kernel["outputs"]]
        launch = Launch(libraries[name].launcher(kernel["launch"]), outputs, inputs, symbols, torch)
        code = launch()  # warm-up: loads the module
        if code != 0:
            print(f"{entry['id']}: launch returned {code}", file=sys.stderr)
            status = 1
            continue
        sides = [("lathe", launch)]
        torch._dynamo.reset()
        compiled = torch.compile(fn, fullgraph=True, dynamic=False)
        try:
            compiled(*inputs)  # compiles and autotunes
            compiled(*inputs)
            sides.append(("inductor", lambda: compiled(*inputs)))
        except Exception as e:  # noqa: BLE001 - lathe's side is still worth profiling
            print(f"{entry['id']}: torch.compile failed: {type(e).__name__}: {str(e)[:200]}", file=sys.stderr)
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        for side, call in sides:
            torch.cuda.nvtx.range_push(f"{side} {entry['id']}")
            call()
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
        torch.cuda.profiler.stop()
        del inputs, outputs, launch, compiled, sides
        torch.cuda.empty_cache()
    return status


def run_main(args):
    started = time.time()
    deadline = started + args.budget_s
    out = Path(args.out or os.environ.get("OUT") or "verify_out")
    out.mkdir(parents=True, exist_ok=True)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    bundles = find_bundles(args.bundles)
    if not bundles:
        print(f"no bundles (DIR/manifest.json) under {args.bundles}", file=sys.stderr)
        return 2

    import torch  # the main process measures the copy ceiling; kernels run in the worker

    try:
        import triton

        triton_version = triton.__version__
    except ImportError:
        triton_version = None
    report = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "torch": torch.__version__,
        "triton": triton_version,
        "bundles": {},
        "kernels": [],
    }
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        report["gpu"] = {
            "name": props.name,
            "capability": f"{props.major}.{props.minor}",
            "sms": props.multi_processor_count,
            "l2_bytes": getattr(props, "L2_cache_size", None),
            "cuda": torch.version.cuda,
        }
        smi = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version,clocks.sm,clocks.mem,temperature.gpu", "--format=csv,noheader"],
            capture_output=True,
            text=True,
        )
        report["gpu"]["nvidia_smi"] = smi.stdout.strip()
        report["copy"] = measure_copy(torch)
        torch.cuda.empty_cache()  # the worker needs the memory
        print(f"copy ceiling {report['copy']['bytes_per_s'] / 1e9:.0f} GB/s", flush=True)
    else:
        print("no CUDA device: checks run on the CPU without timing (launches are expected to fail)", flush=True)
    copy_bps = report.get("copy", {}).get("bytes_per_s", 1.0)

    tasks, libraries, manifests = [], {}, {}
    for name, bundle in bundles.items():
        manifest = load_manifest(bundle)
        manifests[name] = manifest
        info = {
            "dir": str(bundle),
            "kernels": len(manifest["kernels"]),
            "not_generated": manifest.get("not_generated", []),
            "fatbin": list_fatbin(bundle, manifest),
            "plan": manifest.get("plan"),
            "graph": manifest.get("graph"),
        }
        library = bundle / manifest.get("library", "liblathe_kernels.so")
        loads, why = library_loads(library)
        if not loads:
            info["library_load_error"] = why
            print(f"{name}: {library.name} does not load here ({why}); rebuilding from src/", flush=True)
            library = rebuild_library(bundle, manifest, work / name)
            info["rebuilt"] = True
        libraries[name] = str(library)
        report["bundles"][name] = info
        print(
            f"{name}: {len(manifest['kernels'])} kernels, fatbin {info['fatbin'].get('elf_per_arch', info['fatbin'])}",
            flush=True,
        )
        for i, _ in enumerate(manifest["kernels"]):
            tasks.append(
                {"id": f"verify:{name}:{i}", "phase": "verify", "bundle": name, "index": i, "seed": 1000 + len(tasks)}
            )

    # Timing: one kernel per signature (layers repeat), largest traffic first, so that the budget
    # goes to the kernels the bandwidth goal counts.
    timed_signature = {}
    timing = []
    if torch.cuda.is_available():
        for name, manifest in manifests.items():
            for i, kernel in enumerate(manifest["kernels"]):
                signature = canonical_signature(kernel)
                if signature in timed_signature:
                    continue
                timed_signature[signature] = f"time:{name}:{i}"
                traffic = kernel.get("bytes") or sum(
                    tensor_bytes(t, torch) for t in kernel["inputs"] + kernel["outputs"]
                )
                timing.append(
                    {
                        "id": f"time:{name}:{i}",
                        "phase": "time",
                        "bundle": name,
                        "index": i,
                        "seed": 5000 + i,
                        "traffic": traffic,
                        "estimate_s": 8.0,
                    }
                )
        timing.sort(key=lambda t: -t["traffic"])
    tasks += timing

    results_path = work / "results.jsonl"
    results_path.write_text("")
    rebuilt = {}
    skip = []
    while True:
        plan = {
            "tasks": tasks,
            "skip": skip,
            "libraries": libraries,
            "bundles": {k: str(v) for k, v in bundles.items()},
            "results": str(results_path),
            "deadline": deadline,
            "copy_bytes_per_s": copy_bps,
            "rebuilt": rebuilt,
        }
        plan_path = work / "plan.json"
        plan_path.write_text(json.dumps(plan))
        code, why = run_worker(plan_path, results_path, deadline + args.grace_s, args.hang_s)
        records = [json.loads(line) for line in results_path.read_text().splitlines() if line.strip()]
        finished = {r["id"] for r in records if "started" not in r}
        started_ids = [r["id"] for r in records if r.get("started")]
        if code == 0:
            break
        rebuild = [r for r in records if "rebuild" in r and r["rebuild"] not in rebuilt]
        if code == 3 and rebuild:
            name = rebuild[-1]["rebuild"]
            print(f"{name}: {rebuild[-1]['reason']}; rebuilding from src/", flush=True)
            libraries[name] = str(rebuild_library(bundles[name], manifests[name], work / name))
            rebuilt[name] = True
            report["bundles"][name]["rebuilt"] = True
            # forget that bundle's results so far: they ran on the unusable library
            records = [r for r in records if not r["id"].startswith(f"verify:{name}:")]
            results_path.write_text("".join(json.dumps(r) + "\n" for r in records))
            skip = sorted({r["id"] for r in records if "started" not in r})
            continue
        crashed = [i for i in started_ids if i not in finished]
        with open(results_path, "a") as f:
            for task_id in crashed:
                f.write(json.dumps({"id": task_id, "error": f"worker {why} during this task", "pass": False}) + "\n")
        print(f"worker {why} (in {crashed or 'no task'})", flush=True)
        if why.startswith("killed at the deadline"):
            break
        skip = sorted(finished | set(crashed))

    records = {}
    for line in results_path.read_text().splitlines():
        r = json.loads(line)
        if r.get("started") or r.get("context_broken") or "rebuild" in r:
            continue
        records[r["id"]] = {**records.get(r["id"], {}), **r}
    rows = []
    for task in tasks:
        if task["phase"] != "verify":
            continue
        name, i = task["bundle"], task["index"]
        kernel = manifests[name]["kernels"][i]
        v = records.get(task["id"], {"error": "not run", "pass": False})
        v.setdefault("name", kernel["name"])
        v.setdefault("kind", kernel.get("kind"))
        time_id = timed_signature.get(canonical_signature(kernel))
        t = dict(records.get(time_id, {})) if time_id else {}
        rows.append({"id": task["id"], "bundle": name, "verify": v, "time": t, "time_id": time_id})
    report["kernels"] = rows
    if torch.cuda.is_available() and args.memcheck_s > 0:
        report["memcheck"] = run_memcheck(bundles, libraries, work, args.memcheck_s)
    report["goals"] = goals(rows)
    if "memcheck" in report:
        report["goals"]["memcheck"] = {
            name: {k: m.get(k) for k in ("kernels_launched", "error_summary", "finished", "skipped", "error")}
            | {"kernels_with_errors": sorted(m.get("errors", {}))}
            for name, m in report["memcheck"].items()
            if isinstance(m, dict)
        }
    report["seconds"] = time.time() - started
    text, markdown = table(rows, report.get("copy"))
    (out / "verify_kernels.json").write_text(json.dumps(report, indent=1, default=str))
    (out / "verify_kernels.txt").write_text(text + "\n")
    (out / "verify_kernels.md").write_text(markdown + "\n")
    print(json.dumps(report["goals"], indent=1))
    print(text)
    return 0 if all(r["verify"].get("pass") for r in rows) else 1


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "bundles",
        nargs="*",
        default=[str(Path(__file__).parent / "bundles")],
        help="bundle folders (DIR/manifest.json) or folders of them (default: bundles/ beside this script)",
    )
    parser.add_argument("--out", help="where the JSON and table go (default: $OUT)")
    parser.add_argument(
        "--work", default="/tmp/lathe_verify_kernels", help="scratch folder (rebuilt libraries, worker log)"
    )
    parser.add_argument("--budget-s", type=float, default=420, help="stop starting timings after this many seconds")
    parser.add_argument("--grace-s", type=float, default=60, help="kill the worker this long after the budget")
    parser.add_argument("--hang-s", type=float, default=120, help="kill a worker that reports nothing for this long")
    parser.add_argument(
        "--memcheck-s",
        type=float,
        default=120,
        help="seconds for compute-sanitizer memcheck of the distinct kernels after the run (0: none)",
    )
    parser.add_argument(
        "--profile",
        metavar="NAME[,NAME...]",
        help="run only these kernels (NAME, BUNDLE/NAME or BUNDLE) once each, lathe's then torch.compile's, "
        "for Nsight Compute: see profile.sh (no checks, no timing)",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--memcheck", nargs=2, metavar=("BUNDLE", "LIBRARY"), help=argparse.SUPPRESS)
    return parser.parse_args()


if __name__ == "__main__":
    arguments = parse_args()
    if arguments.memcheck:
        sys.exit(memcheck_launches(*arguments.memcheck))
    if arguments.profile:
        sys.exit(run_profile(arguments))
    sys.exit(worker(arguments) if arguments.worker else run_main(arguments))

"""The options of `lathe.compile`, from arguments and `LATHE_*` environment variables.

Arguments given in code win; an option the code leaves unset is read from the environment
(`LATHE_MEMORY`, `LATHE_POLICY`, `LATHE_HW`, `LATHE_PLAN`, `LATHE_TRACE_DIR`, `LATHE_DYNAMIC`,
`LATHE_REWRITES`, `LATHE_ACTIVATION_OFFLOAD`, and `LATHE_OFFLOAD_RESIDENT` / `_MEMORY` / `_POLICY`
for weight offload),
so a decorated model can be steered without editing it. Every value is checked when the options
are made, before anything is compiled.
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Any, Optional, Union

from ._errors import LatheError
from ._native import offload_policies
from ._graphs import CudaGraphSpec, make_cuda_graph_spec
from ._rewrites import DEFAULT_REWRITES, REWRITES, parse_rewrites

POLICIES = ("torch", "heuristic", "budget", "file")
OFFLOAD_POLICIES = tuple(offload_policies)  # the weight-offload planner's (passes/offload.h)

_UNITS = {
    "": 1, "b": 1,
    "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3, "t": 1000**4, "tb": 1000**4,
    "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4,
}

Memory = Union[int, float, str, None]


def parse_bytes(text: str) -> int:
    """'6GiB', '512 MiB', '1.5GB', '4096' -> bytes."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*", text)
    if not match or match.group(2).lower() not in _UNITS:
        raise LatheError(f"memory: cannot read {text!r} as a size (e.g. 6GiB, 512MiB, 1.5GB, or bytes)")
    value = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if value < 1:
        raise LatheError(f"memory: {text!r} is less than one byte")
    return int(value)


def _memory_from_text(text: str) -> Memory:
    try:
        fraction = float(text)
    except ValueError:
        return text
    return fraction if 0 < fraction <= 1 and "." in text else text


@dataclasses.dataclass(frozen=True)
class OffloadSpec:
    """`offload=dict(...)`: resident fraction of the units' bytes, a GPU weight budget, a policy, and
    optionally the unit modules by qualified name."""

    resident: Optional[float] = None
    memory: Optional[int] = None  # bytes for weights: resident units + streaming slots + the rest
    policy: str = "optimal"  # the policy that ran within 1% of the floor at every H200 point (docs/benchmarks.md)
    units: Optional[tuple] = None

    def __post_init__(self) -> None:
        if self.policy not in OFFLOAD_POLICIES:
            raise LatheError(f"offload: unknown policy {self.policy!r} (one of {', '.join(OFFLOAD_POLICIES)})")
        if self.resident is not None and not (isinstance(self.resident, (int, float)) and 0 <= self.resident <= 1):
            raise LatheError(f"offload: resident is a fraction of the units' bytes in [0, 1], got {self.resident!r}")
        if self.memory is not None and self.memory <= 0:
            raise LatheError(f"offload: memory {self.memory} is not a budget")


def make_offload_spec(value: Any) -> Optional[OffloadSpec]:
    """`offload=` as given (a dict, True, None), with LATHE_OFFLOAD_RESIDENT / _MEMORY / _POLICY for
    what it leaves unset."""
    env = {key: _env(f"LATHE_OFFLOAD_{key.upper()}") for key in ("resident", "memory", "policy")}
    if value is None or value is False:
        if not any(env.values()):
            return None
        value = {}
    if value is True:
        value = {}
    if not isinstance(value, dict):
        raise LatheError(f"offload: expected a dict (resident, memory, policy, units), got {value!r}")
    unknown = sorted(set(value) - {"resident", "memory", "policy", "units"})
    if unknown:
        raise LatheError(f"offload: unknown option {unknown[0]!r} (resident, memory, policy, units)")
    resident = value.get("resident")
    if resident is None and env["resident"]:
        try:
            resident = float(env["resident"])
        except ValueError:
            raise LatheError(f"LATHE_OFFLOAD_RESIDENT: expected a fraction, got {env['resident']!r}") from None
    memory = value.get("memory") or env["memory"]
    if isinstance(memory, str):
        memory = parse_bytes(memory)
    elif memory is not None and (isinstance(memory, bool) or not isinstance(memory, int)):
        raise LatheError(f"offload: memory takes bytes or a size string, got {memory!r}")
    if resident is None and memory is None:
        resident = 0.3  # MagiCompiler's gpu_resident_weight_ratio
    units = value.get("units")
    if units is not None:
        if isinstance(units, str) or not all(isinstance(name, str) for name in units):
            raise LatheError("offload: units takes a list of submodule names")
        units = tuple(units)
    policy = value.get("policy") or env["policy"]
    return OffloadSpec(resident=resident, memory=memory, units=units, **({"policy": policy} if policy else {}))


@dataclasses.dataclass(frozen=True)
class CompileOptions:
    memory: Memory = None
    policy: str = "budget"
    hw: str = "auto"
    plan: Optional[str] = None
    trace_dir: Optional[str] = None
    dynamic: Optional[bool] = None
    rewrites: tuple = DEFAULT_REWRITES  # memory rewrites of the captured graph (_rewrites.py)
    activation_offload: bool = False  # saved values whose copies hide behind compute wait in host memory
    offload: Optional[OffloadSpec] = None  # layer units' weights streamed from host memory (_weights.py)
    cuda_graphs: Optional[CudaGraphSpec] = None  # inference replayed from CUDA graphs per size bucket (_graphs.py)
    # Pass options beyond the named ones, e.g. pipeline="split,fusion,recompute(policy=torch)".
    extra: tuple = ()

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise LatheError(f"policy: unknown policy {self.policy!r} (one of {', '.join(POLICIES)})")
        if self.policy == "file" and not self.plan:
            raise LatheError("policy='file' needs plan=PATH (a plan bundle from `lathe plan` or the studio)")
        if self.plan and self.policy not in ("file", "budget"):
            raise LatheError(f"plan={self.plan!r} applies a plan bundle; it cannot be combined with policy={self.policy!r}")
        if self.plan and not os.path.isfile(self.plan):
            raise LatheError(f"plan: {self.plan}: no such file")
        memory = self.memory
        if isinstance(memory, bool) or not (memory is None or isinstance(memory, (int, float, str))):
            raise LatheError(f"memory: expected bytes, a size string or a fraction of the device, got {memory!r}")
        if isinstance(memory, str):
            parse_bytes(memory)
        elif isinstance(memory, float) and not 0 < memory <= 1:
            raise LatheError(f"memory: a fraction of the device is in (0, 1], got {memory}")
        elif isinstance(memory, int) and memory <= 0:
            raise LatheError(f"memory: {memory} bytes is not a budget")
        if not isinstance(self.activation_offload, bool):
            raise LatheError(f"activation_offload: expected True or False, got {self.activation_offload!r}")
        if self.activation_offload and self.plan:
            raise LatheError("activation_offload: a plan bundle carries its own offload decision; "
                             "plan it with recompute(..., offload=true)")
        if parse_rewrites(self.rewrites) != tuple(self.rewrites):
            raise LatheError(f"rewrites: expected names from {', '.join(REWRITES)} in that order, got {self.rewrites!r}")
        for key, _ in self.extra:
            if key != "pipeline":
                raise LatheError(
                    f"unknown option {key!r} (memory, policy, hw, plan, trace_dir, dynamic, rewrites, "
                    "activation_offload, offload, cuda_graphs, pipeline)")

    @property
    def effective_policy(self) -> str:
        return "file" if self.plan else self.policy

    def option(self, key: str, default: Any = None) -> Any:
        return dict(self.extra).get(key, default)


def _env(name: str) -> Optional[str]:
    value = os.environ.get(name)
    return value if value not in (None, "") else None


def _env_flag(name: str) -> bool:
    text = _env(name).lower()
    if text not in ("0", "1", "true", "false"):
        raise LatheError(f"{name}: expected 0, 1, true or false, got {text!r}")
    return text in ("1", "true")


def make_options(memory: Memory = None, policy: Optional[str] = None, hw: Optional[str] = None,
                 plan: Optional[str] = None, trace_dir: Optional[str] = None, dynamic: Optional[bool] = None,
                 rewrites: Any = None, activation_offload: Optional[bool] = None, offload: Any = None,
                 cuda_graphs: Any = None, **extra: Any) -> CompileOptions:
    """The arguments given, with `LATHE_*` for those left unset."""
    if memory is None and _env("LATHE_MEMORY"):
        memory = _memory_from_text(_env("LATHE_MEMORY"))
    if dynamic is None and _env("LATHE_DYNAMIC"):
        dynamic = _env_flag("LATHE_DYNAMIC")
    if activation_offload is None:
        activation_offload = _env_flag("LATHE_ACTIVATION_OFFLOAD") if _env("LATHE_ACTIVATION_OFFLOAD") else False
    if cuda_graphs is None and _env("LATHE_CUDA_GRAPHS"):
        cuda_graphs = _env_flag("LATHE_CUDA_GRAPHS")
    if _env("LATHE_PIPELINE") and "pipeline" not in extra:
        extra["pipeline"] = _env("LATHE_PIPELINE")
    return CompileOptions(
        memory=memory,
        policy=policy or _env("LATHE_POLICY") or "budget",
        hw=hw or _env("LATHE_HW") or "auto",
        plan=plan or _env("LATHE_PLAN"),
        trace_dir=trace_dir or _env("LATHE_TRACE_DIR"),
        dynamic=dynamic,
        activation_offload=activation_offload,
        offload=make_offload_spec(offload),
        cuda_graphs=make_cuda_graph_spec(cuda_graphs),
        rewrites=parse_rewrites(_env("LATHE_REWRITES") if rewrites is None and _env("LATHE_REWRITES") else rewrites),
        extra=tuple(sorted(extra.items())),
    )

"""Measured steps: `with lathe.step(model):` around one training step records its time and, on a
CUDA device, its peak (max allocated minus allocated before it, as the anchors measure it);
`lathe.step(model, kernels=True)` runs the step under torch.profiler and records per-kernel times
too (that step is slower, and left out of the median step time). With a
run folder the measurements and the plans' predictions are written to its lathe.profile.json
(lathe.profile/1, core/plan/profile.h), which `lathe profile FOLDER` reads."""

from __future__ import annotations

import contextlib
import json
import os
import time
from typing import Any, Iterator, Optional

import torch

from ._errors import LatheError
from ._run_folder import write_atomically

PROFILE_FORMAT = "lathe.profile/1"
PROFILE_FILE = "lathe.profile.json"


def _kernel_times(profiler: "torch.profiler.profile", cuda: bool) -> list[dict]:
    """Per kernel name: launches and device time, longest first. On the CPU, where there are no
    kernels, the operators' own CPU time (aten ops without their children)."""
    by_name: dict[str, list] = {}
    for event in profiler.events():
        if cuda:
            if event.device_type != torch.autograd.DeviceType.CUDA:
                continue
            seconds = event.device_time / 1e6  # the kernel's own time on the device, µs
        else:
            if not event.name.startswith("aten::"):
                continue
            seconds = event.self_cpu_time_total / 1e6
        entry = by_name.setdefault(event.name, [0, 0.0])
        entry[0] += 1
        entry[1] += seconds
    kernels = [{"name": name, "calls": calls, "seconds": seconds} for name, (calls, seconds) in by_name.items()]
    return sorted(kernels, key=lambda k: (-k["seconds"], k["name"]))


class StepRecorder:
    def __init__(self) -> None:
        self.steps: list[dict] = []

    @contextlib.contextmanager
    def measure(self, kernels: bool = False) -> Iterator[None]:
        cuda = torch.cuda.is_available()
        profiler = None
        if kernels:
            activities = [torch.profiler.ProfilerActivity.CPU]
            if cuda:
                activities.append(torch.profiler.ProfilerActivity.CUDA)
            profiler = torch.profiler.profile(activities=activities)
            profiler.__enter__()
        if cuda:
            torch.cuda.synchronize()
            before = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
        else:
            started = time.perf_counter()
        try:
            yield
        except BaseException:
            if profiler is not None:
                profiler.__exit__(None, None, None)
            raise
        if cuda:
            end.record()
            torch.cuda.synchronize()
            step = {"seconds": start.elapsed_time(end) / 1e3,
                    "peak_bytes": torch.cuda.max_memory_allocated() - before, "before_bytes": before}
        else:
            step = {"seconds": time.perf_counter() - started, "peak_bytes": None, "before_bytes": None}
        if profiler is not None:
            profiler.__exit__(None, None, None)
            step["kernels"] = _kernel_times(profiler, cuda)
        self.steps.append(step)


def _device() -> dict:
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        return {"name": props.name, "memory_bytes": int(props.total_memory)}
    return {"name": "cpu", "memory_bytes": 0}


def write_profile(folder: str, plans: list, plan_files: dict, steps: list[dict],
                  weight_offload: Optional[dict] = None) -> str:
    graphs = [{"graph": p.graph_id, "fingerprint": p.plan.fingerprint,
               "plan": os.path.relpath(plan_files[p.graph_id], folder) if p.graph_id in plan_files else "",
               "predicted_peak_bytes": int(p.plan.peak_bytes), "predicted_step_seconds": float(p.plan.step_seconds)}
              for p in plans]
    document = {"format": PROFILE_FORMAT, "device": _device(), "torch": torch.__version__, "graphs": graphs,
                "steps": steps}
    if weight_offload is not None:
        document["weight_offload"] = weight_offload
    return write_atomically(os.path.join(folder, PROFILE_FILE), json.dumps(document, indent=1))


def backend_of(compiled: Any) -> Any:
    backend = getattr(compiled, "_lathe_backend", None)
    if backend is None:
        raise LatheError("lathe.step: not compiled by lathe.compile")
    return backend

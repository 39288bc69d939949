"""Measured steps: `with lathe.step(model):` around one training step records its time and, on a
CUDA device, its peak (max allocated minus allocated before it, as the anchors measure it). With a
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


class StepRecorder:
    def __init__(self) -> None:
        self.steps: list[dict] = []

    @contextlib.contextmanager
    def measure(self) -> Iterator[None]:
        cuda = torch.cuda.is_available()
        if cuda:
            torch.cuda.synchronize()
            before = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
        else:
            started = time.perf_counter()
        yield
        if cuda:
            end.record()
            torch.cuda.synchronize()
            self.steps.append({"seconds": start.elapsed_time(end) / 1e3,
                               "peak_bytes": torch.cuda.max_memory_allocated() - before, "before_bytes": before})
        else:
            self.steps.append({"seconds": time.perf_counter() - started, "peak_bytes": None, "before_bytes": None})


def _device() -> dict:
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        return {"name": props.name, "memory_bytes": int(props.total_memory)}
    return {"name": "cpu", "memory_bytes": 0}


def write_profile(folder: str, plans: list, plan_files: dict, steps: list[dict]) -> str:
    graphs = [{"graph": p.graph_id, "fingerprint": p.plan.fingerprint,
               "plan": os.path.relpath(plan_files[p.graph_id], folder) if p.graph_id in plan_files else "",
               "predicted_peak_bytes": int(p.plan.peak_bytes), "predicted_step_seconds": float(p.plan.step_seconds)}
              for p in plans]
    document = {"format": PROFILE_FORMAT, "device": _device(), "torch": torch.__version__, "graphs": graphs,
                "steps": steps}
    return write_atomically(os.path.join(folder, PROFILE_FILE), json.dumps(document, indent=1))


def backend_of(compiled: Any) -> Any:
    backend = getattr(compiled, "_lathe_backend", None)
    if backend is None:
        raise LatheError("lathe.step: not compiled by lathe.compile")
    return backend

"""A run folder (`trace_dir` / `LATHE_TRACE_DIR`): the TORCH_TRACE log of every compile and the plan
bundle of every graph Lathe planned, in one folder the studio opens as one artifact."""

from __future__ import annotations

import logging
import os
import re
import tempfile
from typing import Optional

from ._planner import GraphPlan


def _file_name(graph_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", graph_id).strip("_") or "graph"


_routed_to: Optional[str] = None  # the run folder torch's trace log was last pointed at by lathe


class RunFolder:
    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        os.makedirs(os.path.join(self.path, "plans"), exist_ok=True)
        self._route_torch_trace()

    def _route_torch_trace(self) -> None:
        # torch writes TORCH_TRACE through one lazily opened handler, one per process; when the
        # environment named no folder, point it at ours before the next compile logs anything. A
        # later run folder takes it over from an earlier one (whose log ends there): each folder
        # holds the compiles made after it was created.
        global _routed_to
        from torch._logging import _internal

        handler = _internal.LOG_TRACE_HANDLER
        if handler is None:
            return
        ours = _routed_to is not None and handler.root_dir == _routed_to
        if not ours and (handler.root_dir is not None or handler.stream is not None):
            return  # TORCH_TRACE (or torch's own default) decides where the log goes
        if ours and handler.stream is not None:
            handler.acquire()
            try:
                handler.flush()
                handler.stream.close()
                handler.stream = None  # the next record opens a log in the new folder
            finally:
                handler.release()
        handler.root_dir = _routed_to = self.path
        if handler not in _internal.trace_log.handlers:
            handler.setFormatter(_internal.TorchLogsFormatter(trace=True))
            _internal.trace_log.addHandler(handler)
        _internal.trace_log.setLevel(logging.DEBUG)

    def write_plan(self, plan: GraphPlan) -> str:
        """Writes the graph's plan bundle; returns its path."""
        return write_atomically(os.path.join(self.path, "plans", _file_name(plan.graph_id) + ".plan.json"),
                                plan.plan.bundle_json)


def write_atomically(target: str, text: str) -> str:
    """Writes `text` to `target` through a temporary file beside it: never half a file."""
    fd, temp = tempfile.mkstemp(dir=os.path.dirname(target), suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(temp, target)
    except BaseException:
        os.unlink(temp)
        raise
    return target

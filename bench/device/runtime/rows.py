"""What bench.py and hf_llama.py share: result rows appended to a JSONL file as they are measured,
and the planner's figures for a variant compiled by lathe."""

import json

GiB = 2**30


class Rows:
    def __init__(self, path):
        self.path = path
        self.rows = []

    def record(self, row):
        self.rows.append(row)
        with open(self.path, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)


def planner_fields(compiled):
    """The lathe backend's plans of a compiled module or function, summed; {} when not lathe's."""
    backend = getattr(compiled, "_lathe_backend", None)
    if backend is None:
        return {}
    plans = backend.plans
    return {"planned_graphs": len(plans),
            "predicted_peak_gib": sum(p.plan.peak_bytes for p in plans) / GiB,
            "predicted_before_gib": sum(p.plan.before_bytes for p in plans) / GiB,
            "predicted_step_ms": sum(p.plan.step_seconds for p in plans) * 1e3,
            "planning_s": sum(p.seconds for p in plans),
            "saved": sum(len(p.plan.saved) for p in plans),
            "offloaded": sum(len(p.offloaded) for p in plans),
            "offloaded_gib": sum(b for p in plans for (name, *_, b) in p.plan.offloaded if name in p.offloaded) / GiB,
            "rewritten": list(backend.rewritten)}


def predicted_peak_above_before(row):
    """The planner's peak as the benches measure one (max allocated minus allocated before the
    step), in GiB, or None. Against what the plan itself holds before the step: the measured
    "before" also holds what the step does not plan (cuBLAS's workspaces, 64 MiB on an H100).
    Rows recorded before the plan said what it holds before fall back to the measured figure."""
    if "predicted_peak_gib" not in row:
        return None
    before = row.get("predicted_before_gib", row.get("before_gib"))
    return None if before is None else row["predicted_peak_gib"] - before

"""Inductor's buffer-reuse decisions as its wrapper made them on a GPU, from the file
bench/device/runtime/reuse_estimate.py records (one entry per generated program).

For one program, prints:
- its peak estimate (torch/_inductor/memory.py, per scheduler node) as recorded, and the same
  estimate rebuilt from the recorded buffers two ways: as torch 2.11 sums it (a graph output, whose
  end step is -1, is subtracted at step 0: the curve is lower by every output's bytes, a constant
  shift that changes no decision) and with outputs counted from their allocation on (torch 2.13);
- every reuse decision of at least MIN_MIB: the dead buffer, the size, the estimate's maximum over
  the span it would be held, the margin left under the peak (size + span <= peak takes it), taken or
  not, and whether the check replayed on the rebuilt curve decides the same;
- the buffers live at the estimate's peak, largest first, with the FX nodes their scheduler node
  computes (a MultiOutput part shows the bytes it frees: its tuple allocates them).

  python3 bench/runtime/reuse_decisions.py RECORD.json [PROGRAM [MIN_MIB]]

PROGRAM: index in the record (default: the last, a training step's backward); MIN_MIB: 100.
"""

import json
import sys

MiB = 1 << 20


def curve(program, outputs_counted):
    """Bytes per scheduler node: each buffer from its start step to its end step, inclusive."""
    steps = len(program["nodes"])
    delta = [0] * (steps + 1)
    for buffer in program["buffers"]:
        delta[buffer["start"]] += buffer["alloc"]
        if buffer["end"] != -1 or not outputs_counted:
            delta[buffer["end"] + 1] -= buffer["free"]
    running, per_step = 0, []
    for step in range(steps):
        running += delta[step]
        per_step.append(running)
    return per_step


def replay(program, per_step):
    """The wrapper's check in decision order on a copy of the curve: a taken reuse holds its buffer
    over the span. Returns each decision's (span maximum, taken)."""
    held = list(per_step)
    peak = max(max(held), 0)
    decisions = []
    for decision in program["reuse"]:
        first, end = decision["freed_at"] + 1, decision["allocated_at"]
        span = max(held[first:end]) if end > first else 0
        taken = decision["size"] + span <= peak
        if taken:
            for step in range(first, end):
                held[step] += decision["size"]
        decisions.append((span, taken))
    return peak, decisions


def scheduler_node_of(program, buffer_name):
    """The FX nodes of the scheduler node that writes a buffer (bufN: the node opN, alone or fused)."""
    op = "op" + buffer_name[3:] if buffer_name.startswith("buf") else None
    for node in program["nodes"]:
        if op and op in node["name"].split("_"):
            return node["origins"]
    return []


def main():
    record = json.load(open(sys.argv[1]))
    index = int(sys.argv[2]) if len(sys.argv) > 2 else len(record) - 1
    min_bytes = float(sys.argv[3]) * MiB if len(sys.argv) > 3 else 100 * MiB
    program = record[index]
    recorded = [node["bytes"] for node in program["nodes"]]
    as_211 = curve(program, outputs_counted=False)
    as_213 = curve(program, outputs_counted=True)
    outputs = sum(b["free"] for b in program["buffers"] if b["end"] == -1)
    print(f"program {index} of {len(record)}: {len(program['nodes'])} scheduler nodes, {len(program['reuse'])} reuse decisions")
    print(f"  peak estimate recorded {program['overall_peak'] / MiB:.1f} MiB; rebuilt as torch 2.11 sums it "
          f"{max(max(as_211), 0) / MiB:.1f} (largest difference per node {max(abs(a - b) for a, b in zip(as_211, recorded)) / MiB:.1f}); "
          f"outputs counted {max(as_213) / MiB:.1f} (outputs {outputs / MiB:.1f})")
    peak, replayed = replay(program, as_213)
    same = sum(taken == d["taken"] for (_, taken), d in zip(replayed, program["reuse"]))
    print(f"  the check replayed on the curve with outputs counted decides {same} of {len(replayed)} as recorded")
    print(f"\n{'buffer':>8} {'dead':>8} {'MiB':>6} {'span MiB':>9} {'margin':>8} {'taken':>6} {'replayed':>9}")
    for (span, taken), d in zip(replayed, program["reuse"]):
        if d["size"] < min_bytes:
            continue
        print(f"{d['buffer']:>8} {d['dead']:>8} {d['size'] / MiB:6.0f} {span / MiB:9.1f} {(peak - span - d['size']) / MiB:8.1f} "
              f"{str(d['taken']):>6} {str(taken):>9}")
    at = as_213.index(max(as_213))
    live = [b for b in program["buffers"] if b["start"] <= at and (b["end"] >= at or b["end"] == -1)]
    print(f"\nlive at the estimate's peak, scheduler node {at} ({program['nodes'][at]['name']}), {as_213[at] / MiB:.1f} MiB:")
    for b in sorted(live, key=lambda b: (-max(b["alloc"], b["free"]), b["name"])):
        if max(b["alloc"], b["free"]) < 8 * MiB:
            continue
        origins = ", ".join(scheduler_node_of(program, b["name"])[:4])
        print(f"  {b['name']:>8} {max(b['alloc'], b['free']) / MiB:7.1f} MiB  steps {b['start']}..{b['end']}  {origins}")


if __name__ == "__main__":
    main()

"""The memory Inductor's generated programs hold, replayed from their code, beside the plan's.

A TORCH_TRACE log keeps the wrapper code Inductor generated for each compiled program
(`inductor_output_code`). Its `call` allocates every buffer (`empty_strided_*`), hands a dead one to
a later allocation of its size (`# reuse`), and deletes what it no longer needs; replaying those lines
gives the bytes the program holds after each one, without running anything and on any machine. What
the replay cannot see: the ops' own workspaces (cuDNN attention's), the caching allocator's
rounding, and what the caller holds. Graph inputs named `primals_*` (weights and user inputs) are
left out, so the figure is above what the step holds before it, as the benches measure peaks; a
backward's other inputs (the saved values and tangents) count from its start.

With a plan bundle (`lathe plan -o`, or a run folder's plans/), prints the plan's peak of each phase
above its own "before" (weights and inputs at the first step), the figure bench/device/runtime
reports as "pred".

  python3 bench/runtime/inductor_memory.py LOG [PLAN.json]

LOG is a TORCH_TRACE log, plain or gzip. Prints one table.
"""

import gzip
import json
import re
import sys

MiB = 2**20
DTYPE_BYTES = {"torch.bfloat16": 2, "torch.float16": 2, "torch.float32": 4, "torch.float64": 8, "torch.int64": 8,
               "torch.int32": 4, "torch.int16": 2, "torch.int8": 1, "torch.uint8": 1, "torch.bool": 1,
               "torch.float8_e4m3fn": 1, "torch.float8_e5m2": 1}
ASSERT = re.compile(r"assert_size_stride\((\w+), \(([^)]*)\), \(([^)]*)\)")
ALLOCATE = re.compile(r"(\w+) = empty_strided_\w+\(\(([^)]*)\), \(([^)]*)\), (torch\.\w+)\)")
REUSE = re.compile(r"(\w+) = (?:reinterpret_tensor\()?\w+\b.*; del (\w+)\s*# reuse")
PART = re.compile(r"(\w+) = (\w+)\[\d+\]$")
DELETE = re.compile(r"del (\w+)$")


def output_codes(log_path):
    """The payloads of the log's inductor_output_code events, in order."""
    opener = gzip.open if log_path.endswith(".gz") else open
    with opener(log_path, "rt") as f:
        lines = f.read().split("\n")
    codes, i = [], 0
    while i < len(lines):
        if '"inductor_output_code"' in lines[i]:
            i += 1
            body = []
            while i < len(lines) and lines[i].startswith("\t"):
                body.append(lines[i][1:])
                i += 1
            codes.append("\n".join(body))
            continue
        i += 1
    return codes


def sizes(text):
    return [int(x) for x in text.strip().split(",") if x.strip()]


def span_bytes(shape, stride, dtype):
    elements = 1 + sum((s - 1) * st for s, st in zip(shape, stride)) if shape and all(shape) else (0 if shape else 1)
    return elements * DTYPE_BYTES.get(dtype, 4)


def call_body(code):
    """The stripped lines of the code's `call` and the names of its arguments; None without one."""
    lines = code.split("\n")
    start = next((i for i, l in enumerate(lines) if l.strip().startswith("def call(")), None)
    if start is None:
        return None
    indent = len(lines[start]) - len(lines[start].lstrip())
    body = []
    for line in lines[start + 1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        body.append(line.strip())
    args = {a.strip() for a in body[0].split("=")[0].split(",")} if body and "= args" in body[0] else set()
    return body, args


def program_dtype(code):
    """The dtype of a program's inputs: its allocations' most common one (float32 without any)."""
    dtypes = re.findall(r"empty_strided_\w+\([^)]*\), \([^)]*\), (torch\.\w+)\)", code)
    return max(set(dtypes), key=dtypes.count) if dtypes else "torch.float32"


def walk(body, args, input_dtype):
    """Yields the initial state, then (line, live) after each line of the body: live maps each
    buffer the program holds to (bytes, where it came from: "input", "allocated", "takes NAME",
    "part"). Inputs named `primals_*` are left out; inputs take `input_dtype` (their assertions carry
    no dtype)."""
    live, parts = {}, set()
    for line in body:
        m = ASSERT.search(line)
        if m and m.group(1) in args and not m.group(1).startswith("primals"):
            live[m.group(1)] = (span_bytes(sizes(m.group(2)), sizes(m.group(3)), input_dtype), "input")
    yield "", live
    for line in body:
        if m := ALLOCATE.match(line):
            live[m.group(1)] = (span_bytes(sizes(m.group(2)), sizes(m.group(3)), m.group(4)), "allocated")
        elif m := REUSE.match(line):
            live[m.group(1)] = (live.pop(m.group(2), (0, ""))[0], "takes " + m.group(2))
        elif m := PART.match(line):
            parts.add(m.group(1))
        elif (m := ASSERT.search(line)) and m.group(1) in parts and m.group(1) not in live:
            live[m.group(1)] = (span_bytes(sizes(m.group(2)), sizes(m.group(3)), input_dtype), "part")
        elif m := DELETE.match(line):
            live.pop(m.group(1), None)
        yield line, live


def replay(code, input_dtype):
    """(bytes at the start, peak bytes, the line at the peak) of the code's `call`; None without one.
    Inputs take `input_dtype` (their assertions carry no dtype)."""
    parsed = call_body(code)
    if parsed is None:
        return None
    states = walk(*parsed, input_dtype)
    _, live = next(states)
    at_start = peak = sum(bytes_ for bytes_, _ in live.values())
    peak_line = ""
    for line, live in states:
        total = sum(bytes_ for bytes_, _ in live.values())
        if total > peak:
            peak, peak_line = total, line
    return at_start, peak, peak_line


def planned_peaks(plan_path):
    """(forward, backward) peaks of the plan above its own 'before', in bytes."""
    with open(plan_path) as f:
        timeline = json.load(f)["timeline"]
    categories = ["weights", "inputs", "saved", "recomputed", "temporaries", "gradients", "outputs", "prefetched"]
    totals = [sum(timeline[c][i] for c in categories) for i in range(len(timeline["weights"]))]
    before = timeline["weights"][0] + timeline["inputs"][0]
    split = timeline.get("backward_start", len(totals))
    forward = max(totals[:split], default=before) - before
    backward = max(totals[split:], default=before) - before
    return forward, backward


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    codes = output_codes(sys.argv[1])
    if not codes:
        sys.exit(f"{sys.argv[1]}: no inductor_output_code in this log")
    # Inputs of a bf16 program are bf16; a float32 one (CPU tests) float32: read off its allocations.
    print(f"{'program':>8} {'inputs MiB':>11} {'peak MiB':>9}  at")
    replays = []
    for index, code in enumerate(codes):
        result = replay(code, program_dtype(code))
        if result is None:
            continue
        replays.append(result)
        at_start, peak, line = result
        print(f"{index:>8} {at_start / MiB:11.1f} {peak / MiB:9.1f}  {line[:90]}")
    if len(sys.argv) == 3:
        forward, backward = planned_peaks(sys.argv[2])
        print(f"plan: forward {forward / MiB:.1f} MiB, backward {backward / MiB:.1f} MiB above its 'before'")
        if len(replays) >= 2:
            print(f"replayed: forward {replays[0][1] / MiB:.1f} MiB, backward {replays[1][1] / MiB:.1f} MiB "
                  f"(plan/replay {forward / replays[0][1]:.3f}, {backward / replays[1][1]:.3f})")


if __name__ == "__main__":
    main()

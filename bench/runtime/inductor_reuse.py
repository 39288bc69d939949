"""Inductor's buffer reuse in one generated program, replayed from its code.

Two readings of a program's `call` (from a TORCH_TRACE log's inductor_output_code, as
inductor_memory.py reads it):
- the buffers live when the first line containing PATTERN runs, largest first, each with where it
  came from (allocated, taken from a dead buffer, part of a tuple, or an input);
- the program's bytes with every buffer freed after its last use (no reuse: the curve Inductor's
  peak estimate describes), its peak, and Inductor's reuse check replayed on that curve in program
  order: a dead buffer is taken by a later allocation only where its size plus the curve's maximum
  over the span it would be held stays within the peak (torch/_inductor/codegen/wrapper.py,
  AllocateLine.should_reuse_buffer). The reuses the generated code made that this check refuses are
  listed: there Inductor's own estimate is lower than the code's curve.

  python3 bench/runtime/inductor_reuse.py LOG [PROGRAM [PATTERN]]

PROGRAM: the index of the program in the log (default 1, a training step's backward); PATTERN:
default "cudnn_attention_backward.default(". Prints two tables.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inductor_memory import (ALLOCATE, ASSERT, PART, REUSE, MiB, call_body, output_codes,  # noqa: E402
                             program_dtype, sizes, span_bytes, walk)

NAME = re.compile(r"\b\w+\b")


def live_at(body, args, dtype, pattern):
    """{buffer: (bytes, origin)} when the first line containing `pattern` runs (a call: it changes
    nothing walk tracks), or None."""
    for line, live in walk(body, args, dtype):
        if pattern in line:
            return live
    return None


def reuse_check(body, args, dtype):
    """(no-reuse peak, [(line, size, span maximum, taken)] per reuse line of the code, in order)."""
    size, allocated, last_use, parts = {}, {}, {}, set()
    for line in body:
        m = ASSERT.search(line)
        if m and m.group(1) in args and not m.group(1).startswith(("primals", "tangents")):
            size[m.group(1)], allocated[m.group(1)] = span_bytes(sizes(m.group(2)), sizes(m.group(3)), dtype), 0
    for i, line in enumerate(body[1:], start=1):
        if m := ALLOCATE.match(line):
            size[m.group(1)], allocated[m.group(1)] = span_bytes(sizes(m.group(2)), sizes(m.group(3)), m.group(4)), i
            continue
        if m := REUSE.match(line):
            size[m.group(1)], allocated[m.group(1)] = size.get(m.group(2), 0), i
            continue
        if line.startswith(("del ", "#")):
            continue
        if m := PART.match(line):
            parts.add(m.group(1))
        if (m := ASSERT.search(line)) and m.group(1) in parts and m.group(1) not in size:
            size[m.group(1)], allocated[m.group(1)] = span_bytes(sizes(m.group(2)), sizes(m.group(3)), dtype), i
        for name in NAME.findall(line):
            if name in size:
                last_use[name] = i
    delta = [0] * (len(body) + 2)
    for name, bytes_ in size.items():
        if name.startswith("workspace"):  # a kernel's scratch, not in Inductor's estimate
            continue
        delta[allocated[name]] += bytes_
        delta[last_use.get(name, allocated[name]) + 1] -= bytes_
    curve, running = [], 0
    for step in range(len(body)):
        running += delta[step]
        curve.append(running)
    peak = max(curve, default=0)
    checks = []
    for i, line in enumerate(body):
        if not (m := REUSE.match(line)):
            continue
        taken_size, freed = size.get(m.group(1), 0), last_use.get(m.group(2), 0)
        span = max(curve[freed + 1:i], default=0)
        taken = freed + 1 >= i or taken_size + span <= peak
        checks.append((line, taken_size, span, taken))
        for step in range(freed + 1, i):  # a buffer held for reuse holds its bytes over the span
            curve[step] += taken_size
    return peak, checks


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    codes = output_codes(sys.argv[1])
    program = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    pattern = sys.argv[3] if len(sys.argv) > 3 else "cudnn_attention_backward.default("
    if program >= len(codes) or (parsed := call_body(codes[program])) is None:
        sys.exit(f"{sys.argv[1]}: no program {program} with a call")
    body, args = parsed
    dtype = program_dtype(codes[program])
    live = live_at(body, args, dtype, pattern)
    if live is None:
        print(f"no line of program {program} contains {pattern!r}")
    else:
        print(f"live when {pattern!r} first runs: {sum(b for b, _ in live.values()) / MiB:.1f} MiB")
        for name, (bytes_, origin) in sorted(live.items(), key=lambda kv: -kv[1][0]):
            if bytes_ >= MiB:
                print(f"  {name:14s} {bytes_ / MiB:8.1f} MiB  {origin}")
    peak, checks = reuse_check(body, args, dtype)
    refused = [c for c in checks if not c[3]]
    print(f"\nwithout reuse the program peaks at {peak / MiB:.1f} MiB; of its {len(checks)} reuses, this check "
          f"refuses {len(refused)}:")
    for line, size, span, _ in refused:
        print(f"  {line[:60]:60s} {size / MiB:7.1f} MiB + span {span / MiB:7.1f} MiB = "
              f"{(size + span) / MiB:7.1f} > {peak / MiB:.1f}")


if __name__ == "__main__":
    main()

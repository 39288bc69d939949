#!/usr/bin/env python3
"""One table from Nsight Compute's raw CSV of a `verify_kernels.py --profile` run: per chosen
kernel, lathe's GPU kernels and Inductor's (triton_) side by side, with the metrics that explain a
memory-bound kernel's gap (profile.sh collects them).

Input: `ncu --import REPORT --page raw --csv --print-units base` (a header row of metric names, a
row of units, then one row per profiled kernel launch, in launch order) and the run's
profile_sequence.json. Rows are assigned to the sequence in order: GPU kernels named after a lathe
kernel (`lathe_g0_softmax`, `lathe_g0_softmax_vec`) start its entry, the triton_ kernels after
them belong to the same entry. Where a side ran several GPU kernels, times and bytes add up and
the other columns are the longest kernel's.

usage: ncu_table.py RAW_CSV SEQUENCE_JSON [--out DIR]   (prints the table; DIR/profile.{txt,md,json})
"""

import argparse
import csv
import io
import json
import re
import sys
from pathlib import Path

DURATION = "gpu__time_duration.sum"
DRAM_PCT = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
DRAM_READ = "dram__bytes_read.sum"
DRAM_WRITE = "dram__bytes_write.sum"
OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
THEORETICAL_OCCUPANCY = "sm__maximum_warps_per_active_cycle_pct"
REGISTERS = "launch__registers_per_thread"
GRID = "launch__grid_size"
BLOCK = "launch__block_size"
LOAD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
LOAD_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
STORE_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
STORE_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"
# Warp stall reasons: warps stalled for the reason per issued instruction (ncu's WarpStateStats).
STALLS = (
    "long_scoreboard",
    "short_scoreboard",
    "wait",
    "barrier",
    "membar",
    "mio_throttle",
    "lg_throttle",
    "math_pipe_throttle",
    "not_selected",
    "no_instruction",
    "drain",
    "dispatch_stall",
    "branch_resolving",
    "imc_miss",
    "tex_throttle",
)


def stall_metric(reason):
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


METRICS = (
    DURATION,
    DRAM_PCT,
    DRAM_READ,
    DRAM_WRITE,
    OCCUPANCY,
    THEORETICAL_OCCUPANCY,
    REGISTERS,
    GRID,
    BLOCK,
    LOAD_SECTORS,
    LOAD_REQUESTS,
    STORE_SECTORS,
    STORE_REQUESTS,
) + tuple(stall_metric(r) for r in STALLS)

# Unit prefixes ncu writes ("usecond", "Mbyte"; with --print-units base, durations as "ns"); values
# become seconds and bytes.
PREFIXES = {"n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def scale(unit):
    """The factor that turns a value in `unit` into seconds or bytes (1 for other units)."""
    match = re.fullmatch(r"([numKMGT]?)(second|s|byte|B)", unit or "")
    return PREFIXES[match.group(1)] if match else 1.0


def number(text):
    """ncu's number text ("1,234.5", "512") as a float; None for "n/a" or an empty cell."""
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def kernel_base_name(name):
    """ "void lathe_g0_softmax_vec(const __nv_bfloat16 *, ...)" -> "lathe_g0_softmax_vec"."""
    name = re.sub(r"^void\s+", "", name.strip())
    return re.split(r"[(<\s]", name, maxsplit=1)[0]


def read_raw_csv(text):
    """The launches of ncu's raw page: [{"id", "name", "metrics": {metric: seconds / bytes / value}}]
    in launch order. Lines before the header (==PROF== and the program's output) are skipped."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID",')), None)
    if start is None:
        raise ValueError("no ncu raw CSV header (a line starting with \"ID\",)")
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header, body = rows[0], rows[1:]
    units = {}
    if body and body[0] and body[0][0] == "":  # the units row
        units = dict(zip(header, body[0]))
        body = body[1:]
    launches = []
    for row in body:
        if len(row) != len(header) or not row[0].strip().isdigit():
            continue  # ==PROF== lines after the table, a cut row
        cells = dict(zip(header, row))
        metrics = {}
        for metric in header:
            if "__" not in metric:
                continue  # "ID", "Kernel Name", ...: not a metric
            value = number(cells[metric])
            if value is not None:
                metrics[metric] = value * scale(units.get(metric))
        launches.append({"id": int(cells["ID"]), "name": kernel_base_name(cells["Kernel Name"]), "metrics": metrics})
    return sorted(launches, key=lambda launch: launch["id"])


def belongs(name, entry):
    return name == entry["kernel"] or name.startswith(entry["kernel"] + "_")


def assign(launches, sequence):
    """Each sequence entry's launches: [{"lathe": [...], "triton": [...]}], and the launches that
    fit no entry."""
    sides = [{"lathe": [], "triton": []} for _ in sequence]
    unassigned = []
    current = -1
    for launch in launches:
        name = launch["name"]
        if name.startswith("lathe_"):
            if current >= 0 and not sides[current]["triton"] and belongs(name, sequence[current]):
                sides[current]["lathe"].append(launch)
                continue
            following = next((i for i in range(current + 1, len(sequence)) if belongs(name, sequence[i])), None)
            if following is None:
                unassigned.append(launch)
                continue
            current = following
            sides[current]["lathe"].append(launch)
        elif name.startswith("triton_") and current >= 0:
            sides[current]["triton"].append(launch)
        else:
            unassigned.append(launch)
    return sides, unassigned


def summarize(launches):
    """One side's launches as one set of numbers (see the module's note), None when it ran none."""
    if not launches:
        return None
    get = lambda launch, metric: launch["metrics"].get(metric)  # noqa: E731
    seconds = sum(get(k, DURATION) or 0.0 for k in launches)
    longest = max(launches, key=lambda k: get(k, DURATION) or 0.0)

    def total(metric):
        values = [get(k, metric) for k in launches]
        return None if any(v is None for v in values) else sum(values)

    def ratio(numerator, denominator):
        n, d = get(longest, numerator), get(longest, denominator)
        return n / d if n is not None and d else None

    weighted = [(get(k, DRAM_PCT), get(k, DURATION) or 0.0) for k in launches]
    dram_pct = (
        sum(p * t for p, t in weighted) / seconds if seconds and all(p is not None for p, _ in weighted) else None
    )
    stalls = {r: get(longest, stall_metric(r)) for r in STALLS if get(longest, stall_metric(r)) is not None}
    return {
        "kernels": [k["name"] for k in launches],
        "longest": longest["name"],
        "seconds": seconds,
        "dram_pct": dram_pct,
        "bytes_read": total(DRAM_READ),
        "bytes_written": total(DRAM_WRITE),
        "occupancy_pct": get(longest, OCCUPANCY),
        "theoretical_occupancy_pct": get(longest, THEORETICAL_OCCUPANCY),
        "registers": get(longest, REGISTERS),
        "grid": get(longest, GRID),
        "block": get(longest, BLOCK),
        "load_sectors_per_request": ratio(LOAD_SECTORS, LOAD_REQUESTS),
        "store_sectors_per_request": ratio(STORE_SECTORS, STORE_REQUESTS),
        "top_stalls": sorted(stalls.items(), key=lambda item: -item[1])[:3],
    }


def fmt(value, spec):
    return "-" if value is None else format(value, spec)


def pair(lathe, triton, key, spec, factor=1.0):
    """ "lathe / triton" for one column."""
    cell = lambda side: "-" if side is None or side.get(key) is None else format(side[key] * factor, spec)  # noqa: E731
    return f"{cell(lathe)} / {cell(triton)}"


def stalls_text(side):
    if not side or not side["top_stalls"]:
        return "-"
    return ", ".join(f"{reason} {value:.1f}" for reason, value in side["top_stalls"])


def table(sequence, sides):
    """The table as aligned text and as Markdown, one row per chosen kernel."""
    header = [
        "kernel",
        "dtype shape",
        "GPU kernels lathe / triton",
        "us",
        "vs ind.",
        "GB/s",
        "DRAM %",
        "MB read",
        "MB written",
        "occupancy % (theor.)",
        "regs",
        "grid x block",
        "ld sect/req",
        "st sect/req",
        "top stalls lathe",
        "top stalls triton",
    ]
    lines = [header]
    for entry, side in zip(sequence, sides):
        lathe, triton = summarize(side["lathe"]), summarize(side["triton"])

        def kernels(s):
            return "-" if s is None else s["longest"] + (f" +{len(s['kernels']) - 1}" if len(s["kernels"]) > 1 else "")

        def gbps(s):
            if not (s and s["seconds"] and entry.get("bytes")):
                return "-"
            return f"{entry['bytes'] / s['seconds'] / 1e9:.0f}"

        def occupancy(s):
            if s is None:
                return "-"
            return f"{fmt(s['occupancy_pct'], '.0f')} ({fmt(s['theoretical_occupancy_pct'], '.0f')})"

        def launch(s):
            return "-" if s is None else f"{fmt(s['grid'], '.0f')} x {fmt(s['block'], '.0f')}"

        speedup = triton["seconds"] / lathe["seconds"] if lathe and triton and lathe["seconds"] else None
        lines.append(
            [
                entry["id"],
                f"{entry.get('dtype', '?')} {'x'.join(map(str, entry.get('shape', [])))}",
                f"{kernels(lathe)} / {kernels(triton)}",
                pair(lathe, triton, "seconds", ".1f", 1e6),
                fmt(speedup, ".2f") + ("x" if speedup is not None else ""),
                f"{gbps(lathe)} / {gbps(triton)}",
                pair(lathe, triton, "dram_pct", ".0f"),
                pair(lathe, triton, "bytes_read", ".1f", 1e-6),
                pair(lathe, triton, "bytes_written", ".1f", 1e-6),
                f"{occupancy(lathe)} / {occupancy(triton)}",
                pair(lathe, triton, "registers", ".0f"),
                f"{launch(lathe)} / {launch(triton)}",
                pair(lathe, triton, "load_sectors_per_request", ".1f"),
                pair(lathe, triton, "store_sectors_per_request", ".1f"),
                stalls_text(lathe),
                stalls_text(triton),
            ]
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in lines)
    markdown = "\n".join(
        ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        + ["| " + " | ".join(c.replace("|", "/") for c in line) + " |" for line in lines[1:]]
    )
    return text, markdown


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("raw_csv", type=Path, help="ncu --import REPORT --page raw --csv --print-units base")
    parser.add_argument("sequence", type=Path, help="profile_sequence.json of the verify_kernels.py --profile run")
    parser.add_argument("--out", type=Path, help="also write profile.txt, profile.md and profile.json here")
    args = parser.parse_args()
    sequence = json.loads(args.sequence.read_text())
    try:
        launches = read_raw_csv(args.raw_csv.read_text(errors="replace"))
    except ValueError as e:
        print(f"{args.raw_csv}: {e}", file=sys.stderr)
        return 2
    sides, unassigned = assign(launches, sequence)
    text, markdown = table(sequence, sides)
    notes = []
    missing = [e["id"] for e, s in zip(sequence, sides) if not s["lathe"]]
    if missing:
        notes.append(f"no lathe kernel profiled for {', '.join(missing)}")
    if unassigned:
        notes.append(f"{len(unassigned)} profiled kernels fit no entry: {', '.join(k['name'] for k in unassigned[:5])}")
    legend = (
        "cells: lathe / triton (Inductor); us: ncu's gpu__time_duration (sum over a side's GPU kernels); "
        "GB/s: the manifest's bytes over that time; vs ind.: triton time / lathe time; ld/st sect/req: "
        "32-byte L1 sectors per global load / store instruction of a warp (coalesced: the bytes each thread "
        "moves, e.g. 2 for bf16 scalars, 4 for fp32, 16 for 16-byte vectors; more: scattered); stalls: "
        "warps stalled per issued instruction, the longest kernel's top 3"
    )
    text = "\n".join([text, legend, *notes])
    markdown = "\n\n".join([markdown, legend, *notes])
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "profile.txt").write_text(text + "\n")
        (args.out / "profile.md").write_text(markdown + "\n")
        report = [
            {**entry, "lathe": summarize(side["lathe"]), "triton": summarize(side["triton"])}
            for entry, side in zip(sequence, sides)
        ]
        (args.out / "profile.json").write_text(json.dumps({"kernels": report, "unassigned": unassigned}, indent=1))
    print(text)
    return 0 if not missing else 1


if __name__ == "__main__":
    sys.exit(main())

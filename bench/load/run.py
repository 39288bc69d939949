#!/usr/bin/env python3
"""Loading benchmark: MB/s of `lathe` loading each sample with every graph parsed, next to the
tlparse Python package on the same plain-text files in the same run. Prints one Markdown table.

usage: bench/load/run.py [--lathe-bench PATH] [--samples DIR] [--repeat N] [--big-mb N]

Gzip captures are decompressed first (tlparse reads plain files only), and a log of at least
--big-mb MB is made by concatenating the captures with frame ids shifted per copy, so that each
copy's compiles stay distinct.
"""
import argparse
import gzip
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def decompress_captures(samples: Path, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for gz in sorted((samples / "captures").glob("*.log.gz")):
        plain = out / gz.name[:-3]
        if not plain.exists():
            with gzip.open(gz, "rb") as src, open(plain, "wb") as dst:
                shutil.copyfileobj(src, dst)
        files.append(plain)
    return files


FRAME_ID = re.compile(rb'"frame_id": (\d+)')


def make_big_log(captures: list[Path], out: Path, min_mb: int) -> Path:
    big = out / f"concatenated_{min_mb}mb.log"
    if big.exists() and big.stat().st_size >= min_mb << 20:
        return big
    written, copy = 0, 0
    with open(big, "wb") as dst:
        while written < min_mb << 20:
            for path in captures:
                shift = copy * 1000
                data = FRAME_ID.sub(lambda m: b'"frame_id": %d' % (int(m.group(1)) + shift), path.read_bytes())
                dst.write(data)
                written += len(data)
                copy += 1
    return big


def time_lathe(bench: Path, path: Path, repeat: int) -> dict:
    out = subprocess.run([str(bench), "--repeat", str(repeat), str(path)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def time_tlparse(tlparse: str, path: Path, repeat: int) -> float | None:
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeat):
            start = time.perf_counter()
            proc = subprocess.run([tlparse, str(path), "-o", os.path.join(tmp, "out"), "--overwrite", "--no-browser"],
                                  capture_output=True)
            runs.append(time.perf_counter() - start)
            if proc.returncode != 0:
                return None
    return statistics.median(runs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lathe-bench", default=str(ROOT / "build/release/bench/lathe_bench_load"))
    ap.add_argument("--samples", default=str(ROOT.parent / "shared/samples"))
    ap.add_argument("--tlparse", default=shutil.which("tlparse") or str(ROOT / ".venv/bin/tlparse"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--big-mb", type=int, default=200)
    args = ap.parse_args()

    samples = Path(args.samples)
    work = ROOT / "bench/out/load"
    captures = decompress_captures(samples, work)
    files = captures + sorted((samples / "tlparse").glob("*.log")) + sorted((samples / "tlparse").glob("*.txt"))
    files.append(make_big_log(captures, work, args.big_mb))
    # Artifacts tlparse does not read: timed for lathe alone.
    others = sorted(samples.glob("pt2/**/*.pt2")) + sorted(samples.glob("snapshots/*.pickle")) \
        + sorted(samples.glob("memory_snapshot/**/*.pickle"))

    print(f"Loading benchmark: median of {args.repeat} runs, one thread, plain-text inputs; "
          f"tlparse {subprocess.run([args.tlparse, '--version'], capture_output=True, text=True).stdout.strip()}\n")
    print("| file | MB | graphs | lathe s | lathe MB/s | tlparse s | tlparse MB/s | lathe / tlparse |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    worst = None
    for path in files:
        mb = path.stat().st_size / 1e6
        ours = time_lathe(Path(args.lathe_bench), path, args.repeat)
        theirs = time_tlparse(args.tlparse, path, args.repeat)
        ratio = theirs / ours["median_s"] if theirs else None
        if ratio is not None:
            worst = ratio if worst is None else min(worst, ratio)
        name = path.name if path.parent == work else str(path.relative_to(samples))
        print(f"| {name} | {mb:.1f} | {ours['graphs']} | {ours['median_s']:.3f} | {mb / ours['median_s']:.0f} | "
              + (f"{theirs:.3f} | {mb / theirs:.0f} | {ratio:.1f}x |" if theirs else "failed | - | - |"))
    for path in others:
        mb = path.stat().st_size / 1e6
        ours = time_lathe(Path(args.lathe_bench), path, args.repeat)
        print(f"| {path.relative_to(samples)} | {mb:.1f} | {ours['graphs']} | {ours['median_s']:.3f} | "
              f"{mb / ours['median_s']:.0f} | n/a | - | - |")
    print(f"\nslowest ratio (tlparse time / lathe time): {worst:.1f}x" if worst else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())

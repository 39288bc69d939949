#!/usr/bin/env python3
"""Planning benchmark: how long `lathe plan` takes to choose what the forward saves for backward,
next to torch's min_cut_rematerialization_partition on the same joint graphs; how close lathe's
torch policy comes to the saved set of the capture itself; and, on one graph, lathe's recompute
frontier against torch's saved sets under activation memory budgets (by lathe's own estimates).

usage: bench/plan/bench_plan.py [--lathe PATH] [--samples DIR] [--repeat N] [--out DIR]

Every joint graph of the CAPTURES in DIR/captures and of the 80-layer Llama of capture_llama.py
(captured first when bench/out/llama80_train.log.gz is missing) is planned N times with the torch
policy alone, with the default pipeline and with the budget policy; torch_partition.py times torch's
partitioner N times on the same graphs (--params dynamo, as Inductor calls it). Raw results go to
--out as JSON, the tables to stdout.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import torch_partition  # noqa: E402  (the capture comparison and graph reading it uses)

CAPTURES = ["llama3_8b_2l_tiny_train", "llama3_8b_2l_train", "llama3_8b_4l_train", "llama3_8b_2l_dyntrain",
            "gpt2_tiny_train", "gpt2_train", "mixtral_2l_tiny_train", "mixtral_2l_train", "vit_b16_tiny_train",
            "llama_4l_fsdp_ranks"]
LLAMA80 = ROOT / "bench/out/llama80_train.log.gz"
TORCH_POLICY = "recompute(policy=torch)"
DEFAULT_PIPELINE = "split,fusion,recompute(policy=torch)"
BUDGET_FRACTION = 0.9  # the budget pipeline's memory: this fraction of the torch policy's peak
FRONTIER_CAPTURE, FRONTIER_GRAPH = "llama3_8b_4l_train", "0/0:aot_joint_graph"
TORCH_BUDGETS = [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05, 0.0]
# Families whose agreement with the capture has a goal (>= AGREEMENT_GOAL).
AGREEMENT_FAMILIES = ("llama", "mixtral", "gpt2")
AGREEMENT_GOAL, SPEEDUP_GOAL, LLAMA80_SECONDS_GOAL = 0.95, 20.0, 1.0


def run(*cmd: str | Path, env: dict | None = None) -> str:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"bench_plan: {' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stderr.strip()}")
    return proc.stdout


def lathe_plan(lathe: Path, capture: Path, graph: str, pipeline: str, repeat: int) -> dict:
    """Median wall time of the whole `lathe plan` process and of the passes it reports, with the last plan."""
    walls, passes, plan = [], [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = run(lathe, "plan", capture, "--graph", graph, "--pipeline", pipeline, "--json")
        walls.append(time.perf_counter() - start)
        plan = json.loads(out)
        passes.append(sum(step["seconds"] for step in plan["steps"]))
    return {"pipeline": pipeline, "wall_seconds": walls, "median_wall_seconds": statistics.median(walls),
            "pass_seconds": passes, "median_pass_seconds": statistics.median(passes),
            "stats": plan["steps"][-1]["stats"], "saved": plan["recompute"]["saved"]}


def torch_partitions(lathe: Path, capture: Path, repeat: int, out: Path, *extra: str) -> list[dict]:
    # The partitioner runs under no TORCH_TRACE: it must not log itself.
    env = {k: v for k, v in os.environ.items() if k != "TORCH_TRACE"}
    run(sys.executable, HERE / "torch_partition.py", capture, "--lathe", lathe, "--params", "dynamo",
        "--repeat", str(repeat), "-o", out, *extra, env=env)
    result = json.loads(out.read_text())
    return result if isinstance(result, list) else [result]


def agreement_with_capture(lathe: Path, capture: Path, graph: str, saved: list[str]) -> float:
    """Byte-weighted |A∩B|/|A∪B| over non-placeholder tensors, as torch_partition.py --compare-capture."""
    reader = torch_partition.LatheCapture(lathe, str(capture))
    joint, _ = reader.graph(graph)
    forward, forward_comments = reader.graph(torch_partition.forward_graph_id(graph))
    kinds = {n["name"]: (n["meta"] or {}).get("kind") for n in joint["nodes"]}
    tensors = [name for name in saved if kinds.get(name) == "tensor"]
    return torch_partition.compare_with_capture(joint, forward, forward_comments, tensors, [])[
        "agreement_non_placeholder"]


def bench_capture(lathe: Path, name: str, capture: Path, repeat: int, out: Path) -> list[dict]:
    print(f"{name}: torch's partitioner ...", file=sys.stderr, flush=True)
    theirs = torch_partitions(lathe, capture, repeat, out / "torch" / f"{name}.json", "--compare-capture")
    listing = {g["id"]: g for g in json.loads(run(lathe, "graphs", capture, "--json"))}
    rows = []
    for partition in theirs:
        graph = partition["graph"]
        print(f"{name} {graph}: lathe ...", file=sys.stderr, flush=True)
        torch_plan = lathe_plan(lathe, capture, graph, TORCH_POLICY, repeat)
        default_plan = lathe_plan(lathe, capture, graph, DEFAULT_PIPELINE, repeat)
        memory = int(torch_plan["stats"]["peak_bytes"] * BUDGET_FRACTION)
        budget_plan = lathe_plan(lathe, capture, graph, f"recompute(policy=budget,memory={memory})", repeat)
        rows.append({
            "capture": name, "graph": graph, "nodes": listing[graph]["nodes"],
            "torch_seconds": partition["seconds"], "torch_median_seconds": partition["median_seconds"],
            "torch_rerun_agreement": partition["capture"]["agreement_non_placeholder"],
            "lathe_agreement": agreement_with_capture(lathe, capture, graph, torch_plan["saved"]),
            "lathe_torch_policy": torch_plan, "lathe_default": default_plan, "lathe_budget": budget_plan,
        })
    return rows


def frontier(lathe: Path, capture: Path, repeat: int, out: Path) -> dict:
    """torch's saved set at each activation memory budget, evaluated by lathe, and lathe's frontier."""
    print(f"{capture.name}: torch at {len(TORCH_BUDGETS)} budgets ...", file=sys.stderr, flush=True)
    budgets = ",".join(f"{b:g}" for b in TORCH_BUDGETS)
    (partition,) = torch_partitions(lathe, capture, 1, out / "torch_budgets.json", "--graph", FRONTIER_GRAPH,
                                    "--budgets", budgets)
    torch_points = []
    for entry in partition["budgets"]:
        saved_file = out / "saved" / f"torch_budget_{entry['activation_memory_budget']:g}.json"
        saved_file.parent.mkdir(parents=True, exist_ok=True)
        saved_file.write_text(json.dumps({"saved": entry["saved"]}) + "\n")
        plan = lathe_plan(lathe, capture, FRONTIER_GRAPH, f"recompute(policy=file,path={saved_file})", 1)
        stats = plan["stats"]
        torch_points.append({"budget": entry["activation_memory_budget"], "saved_file": shown(saved_file),
                             **{k: stats[k] for k in ("peak_bytes", "recompute_seconds", "step_seconds")}})
    walls = []
    for _ in range(repeat):
        start = time.perf_counter()
        pareto = json.loads(run(lathe, "pareto", capture, "--graph", FRONTIER_GRAPH, "--json"))
        walls.append(time.perf_counter() - start)
    for point in torch_points:
        fitting = [p for p in pareto["frontier"] if p["peak_bytes"] <= point["peak_bytes"]]
        best = min(fitting, key=lambda p: p["recompute_seconds"]) if fitting else None
        point["lathe"] = best
        point["lathe_at_least_as_good"] = best is not None and best["recompute_seconds"] <= point["recompute_seconds"]
    return {"capture": capture.name, "graph": FRONTIER_GRAPH, "torch_points": torch_points, "pareto": pareto,
            "pareto_wall_seconds": walls, "pareto_median_wall_seconds": statistics.median(walls)}


def shown(path: Path) -> str:
    """The path relative to the repository when it lies inside, so that outputs name no machine's paths."""
    path = path.resolve()
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


def ratio(theirs: float, ours: float) -> str:
    return f"{theirs / ours:.1f}x" if ours > 0 else "-"


def print_tables(rows: list[dict], front: dict, repeat: int) -> None:
    print(f"\nPlanning benchmark: median of {repeat} runs; lathe = wall time of the `lathe plan` process "
          f"(load, plan, JSON) and the pass time it reports; torch = min_cut_rematerialization_partition "
          f"alone (torch_partition.py --params dynamo); agreement = byte-weighted |A∩B|/|A∪B| of non-placeholder "
          f"saved values with the capture's own saved set\n")
    print("| capture | graph | nodes | torch s | lathe wall s | lathe pass s | torch / lathe wall | torch / lathe pass "
          "| default wall s | default pass s | budget wall s | budget pass s | budget met | agreement lathe "
          "| agreement torch rerun |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for r in rows:
        tp, dp, bp = r["lathe_torch_policy"], r["lathe_default"], r["lathe_budget"]
        print(f"| {r['capture']} | {r['graph']} | {r['nodes']} | {r['torch_median_seconds']:.3f} | "
              f"{tp['median_wall_seconds']:.3f} | {tp['median_pass_seconds']:.4f} | "
              f"{ratio(r['torch_median_seconds'], tp['median_wall_seconds'])} | "
              f"{ratio(r['torch_median_seconds'], tp['median_pass_seconds'])} | {dp['median_wall_seconds']:.3f} | "
              f"{dp['median_pass_seconds']:.4f} | {bp['median_wall_seconds']:.3f} | {bp['median_pass_seconds']:.3f} | "
              f"{'yes' if bp['stats'].get('budget_met') else 'no'} | {r['lathe_agreement']:.3f} | "
              f"{r['torch_rerun_agreement']:.3f} |")
    print()
    for measure in ("wall", "pass"):
        speedups = [(r["torch_median_seconds"] / r["lathe_torch_policy"][f"median_{measure}_seconds"], r) for r in rows]
        slowest, r = min(speedups, key=lambda sr: sr[0])
        met = sum(speedup >= SPEEDUP_GOAL for speedup, _ in speedups)
        print(f"torch / lathe {measure} time: >= {SPEEDUP_GOAL:g}x on {met} of {len(rows)} graphs; slowest "
              f"{slowest:.1f}x ({r['capture']} {r['graph']})")
    for r in rows:
        if r["capture"] == LLAMA80.name.removesuffix(".log.gz"):
            tp = r["lathe_torch_policy"]
            print(f"80-layer graph ({r['nodes']} nodes): lathe plan {tp['median_wall_seconds']:.3f} s wall, "
                  f"{tp['median_pass_seconds']:.3f} s pass; goal < {LLAMA80_SECONDS_GOAL:g} s")
    goal_rows = [r for r in rows if r["capture"].startswith(AGREEMENT_FAMILIES)]
    low = [f"{r['capture']} {r['graph']} {r['lathe_agreement']:.3f}" for r in goal_rows
           if r["lathe_agreement"] < AGREEMENT_GOAL]
    print(f"agreement with the capture on llama, mixtral, gpt2: {len(goal_rows) - len(low)} of {len(goal_rows)} graphs "
          f">= {AGREEMENT_GOAL:.2f}" + (f"; below: {', '.join(low)}" if low else ""))

    print(f"\nFrontier on {front['capture']} {front['graph']}, by lathe's estimates "
          f"({front['pareto']['hardware']} profile): torch's saved set "
          f"at each activation_memory_budget, evaluated by lathe (recompute(policy=file)), against the point of "
          f"`lathe pareto` with peak <= torch's peak and the least recompute time "
          f"(pareto median {front['pareto_median_wall_seconds']:.3f} s wall)\n")
    print("| torch budget | torch peak GiB | torch recompute ms | torch step ms | lathe peak GiB | lathe recompute ms "
          "| lathe step ms | lathe at least as good |")
    print("|---:|---:|---:|---:|---:|---:|---:|---|")
    for p in front["torch_points"]:
        lathe = p["lathe"]
        ours = (f"{lathe['peak_bytes'] / 2**30:.2f} | {lathe['recompute_seconds'] * 1e3:.2f} | "
                f"{lathe['step_seconds'] * 1e3:.2f}" if lathe else "none | - | -")
        print(f"| {p['budget']:g} | {p['peak_bytes'] / 2**30:.2f} | {p['recompute_seconds'] * 1e3:.2f} | "
              f"{p['step_seconds'] * 1e3:.2f} | {ours} | {'yes' if p['lathe_at_least_as_good'] else 'no'} |")
    good = sum(p["lathe_at_least_as_good"] for p in front["torch_points"])
    print(f"\nlathe's frontier at least as good as torch's at {good} of {len(front['torch_points'])} budgets "
          f"(by lathe's estimates)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lathe", type=Path, default=ROOT / "build/release/app/cli/lathe")
    ap.add_argument("--samples", type=Path, default=ROOT.parent / "shared/samples")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", type=Path, default=ROOT / "bench/out/plan")
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if not args.lathe.is_file():
        ap.error(f"{args.lathe} not found: build the release preset (make bench does) or give --lathe")
    if not LLAMA80.exists():
        print(f"capturing {LLAMA80} ...", file=sys.stderr, flush=True)
        run(sys.executable, HERE / "capture_llama.py", "--layers", "80", "--lathe", args.lathe)
    args.out.mkdir(parents=True, exist_ok=True)

    load_before = os.getloadavg()
    captures = [(name, args.samples / "captures" / (name if name.endswith("_ranks") else f"{name}.log.gz"))
                for name in CAPTURES] + [(LLAMA80.name.removesuffix(".log.gz"), LLAMA80)]
    rows = [row for name, path in captures for row in bench_capture(args.lathe, name, path, args.repeat, args.out)]
    front = frontier(args.lathe, args.samples / "captures" / f"{FRONTIER_CAPTURE}.log.gz", args.repeat, args.out)
    machine = {"machine": platform.machine(), "cpus": os.cpu_count(), "load_average_before": load_before,
               "load_average_after": os.getloadavg(), "date": time.strftime("%Y-%m-%d"), "repeat": args.repeat,
               "torch": torch_partition.torch.__version__}
    (args.out / "results.json").write_text(json.dumps({"run": machine, "graphs": rows}, indent=1) + "\n")
    (args.out / "frontier.json").write_text(json.dumps(front, indent=1) + "\n")
    print_tables(rows, front, args.repeat)
    print(f"\n{machine['machine']}, {machine['cpus']} CPUs, load average {load_before[0]:.1f} before and "
          f"{machine['load_average_after'][0]:.1f} after; torch {machine['torch']}; raw results in "
          f"{shown(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

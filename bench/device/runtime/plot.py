"""The measured frontiers of a bench.py run: peak against step time per variant family.
    python3 bench/device/runtime/plot.py RESULTS.jsonl OUT.png      (needs matplotlib)"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def family(variant):
    for prefix in ("torch.compile", "lathe", "MagiCompiler", "eager"):
        if variant.startswith(prefix):
            return prefix
    return variant


def main(results, out):
    rows = [json.loads(line) for line in open(results) if line.strip()]
    rows = [r for r in rows if "error" not in r]
    style = {"torch.compile": ("tab:blue", "o-"), "lathe": ("tab:red", "s-"), "MagiCompiler": ("tab:green", "D"),
             "eager": ("gray", "^")}
    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    for name, (color, marker) in style.items():
        points = sorted((r["step_ms"], r["peak_gib"], r["variant"]) for r in rows if family(r["variant"]) == name)
        if not points:
            continue
        if name == "lathe":  # the budget sweep is the frontier; the heuristic is a point beside it
            sweep = [p for p in points if "budget" in p[2]]
            ax.plot([p[0] for p in sweep], [p[1] for p in sweep], marker, color=color, label="lathe.compile(memory=…)")
            for p in points:
                if "heuristic" in p[2]:
                    ax.plot(p[0], p[1], "s", color=color, mfc="white", label="lathe.compile(policy='heuristic')")
        elif name == "torch.compile":
            ax.plot([p[0] for p in points], [p[1] for p in points], marker, color=color,
                    label="torch.compile, activation_memory_budget 1.0…0.2")
        else:
            ax.plot([p[0] for p in points], [p[1] for p in points], marker, color=color, markersize=8, label=name)
        for step, peak, variant in points:
            label = variant.split("budget=")[-1] if name == "torch.compile" else variant.split(":")[-1] if "budget:" in variant else ""
            if label:
                ax.annotate(label, (step, peak), textcoords="offset points", xytext=(5, 4), fontsize=7, color=color)
    ax.set_xlabel("step time, ms (median of 10)")
    ax.set_ylabel("peak − before, GiB")
    ax.set_title("4 × Llama-3-8B layers, B2×T4096, bf16, fwd+bwd on one H200 (one run)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

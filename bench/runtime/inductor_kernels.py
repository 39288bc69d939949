"""Inductor's generated kernels beside the plan's fusion groups, for one training step.

A TORCH_TRACE log keeps the wrapper code of each compiled program (`inductor_output_code`): before
every Triton kernel launch a comment names the FX nodes it computes ("Topologically Sorted Source
Nodes"). The plan's fusion pass says which nodes of the joint graph it expects to share a kernel
(the plan bundle's `nodes.group`, the groups the step-time estimate prices as one kernel each).
This compares the two on the joint graph's compute nodes (views, getitems and placeholders left
out): how many kernels each makes, and of the pairs of nodes Inductor computes in one kernel, the
share the plan puts in one group (recall), and of the plan's pairs, the share Inductor does
(precision). A node both forward and backward compute (recomputed) counts once, by its backward
kernel.

  python3 bench/runtime/inductor_kernels.py LOG PLAN.json [LATHE]

PLAN.json: `lathe plan LOG --graph 0/0:lathe_joint_graph ... -o PLAN.json` on the same log (the
joint graph's node names are the programs' source node names). LATHE: build/default/app/cli/lathe,
to read the joint graph's ops. Prints one table.
"""

import itertools
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inductor_memory import output_codes  # noqa: E402

SOURCE = re.compile(r"# Topologically Sorted Source Nodes: \[([^\]]*)\]")
LAUNCH = re.compile(r"^\s*(triton_\w+)\.run\(")
NOT_COMPUTE = ("view", "_unsafe_view", "permute", "transpose", "t", "expand", "slice", "select", "squeeze",
               "unsqueeze", "reshape", "alias", "getitem", "split", "split_with_sizes", "as_strided")


def kernels(code):
    """(kernel name, its source nodes) per Triton launch of the program's `call`, in order."""
    found, sources = [], []
    inside = False
    for line in code.split("\n"):
        if line.strip().startswith("def call("):
            inside = True
        if not inside:
            continue
        if m := SOURCE.search(line):
            sources = [name.strip() for name in m.group(1).split(",") if name.strip()]
        elif m := LAUNCH.match(line):
            found.append((m.group(1), sources))
    return found


def compute_nodes(log, graph, lathe):
    """Names of the joint graph's call_function nodes that compute (not views nor getitems)."""
    shown = subprocess.run([lathe, "show", log, "--graph", graph, "--format", "json"], check=True,
                           capture_output=True, text=True).stdout
    names = set()
    for node in json.loads(shown)["nodes"]:
        if node["op"] != "call_function":
            continue
        op = node["target"].split(".")
        op = op[-2] if len(op) >= 2 and op[-1] in ("default", "Tensor", "int", "Scalar", "dim", "start") else op[-1]
        if op not in NOT_COMPUTE:
            names.add(node["name"])
    return names


def pairs(groups):
    return {frozenset(p) for group in groups for p in itertools.combinations(sorted(group), 2)}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    log, plan_path = sys.argv[1], sys.argv[2]
    lathe = sys.argv[3] if len(sys.argv) > 3 else "build/default/app/cli/lathe"
    with open(plan_path) as f:
        plan = json.load(f)
    graph = plan["source"]["graph"]
    compute = compute_nodes(log, graph, lathe)
    kernel_of = {}  # node -> (program, kernel index); a recomputed node's backward kernel wins
    for program, code in enumerate(output_codes(log)):
        for index, (_, sources) in enumerate(kernels(code)):
            members = [s for s in sources if s in compute]
            for node in members:
                kernel_of[node] = (program, index)
    inductor_groups = {}
    for node, kernel in kernel_of.items():
        inductor_groups.setdefault(kernel, set()).add(node)
    names, group_of = plan["nodes"]["names"], plan["nodes"]["group"]
    plan_groups = {}
    for name, group in zip(names, group_of):
        if group >= 0 and name in compute and name in kernel_of:
            plan_groups.setdefault(group, set()).add(name)
    inductor_pairs = pairs(inductor_groups.values())
    plan_pairs = pairs(plan_groups.values())
    shared = inductor_pairs & plan_pairs
    same = sum(1 for g in inductor_groups.values() if len(g) > 1 and g in plan_groups.values())
    multi = sum(1 for g in inductor_groups.values() if len(g) > 1)
    print(f"{'':44s} {'Inductor':>10s} {'plan':>10s}")
    print(f"{'Triton kernels / fusion groups (2+ nodes)':44s} {multi:10d} {sum(1 for g in plan_groups.values() if len(g) > 1):10d}")
    print(f"{'compute nodes in them':44s} {len(kernel_of):10d} {sum(len(g) for g in plan_groups.values()):10d}")
    print(f"{'pairs of nodes in one kernel':44s} {len(inductor_pairs):10d} {len(plan_pairs):10d}")
    print(f"pairs in both: {len(shared)}; recall {len(shared) / max(1, len(inductor_pairs)):.3f}, "
          f"precision {len(shared) / max(1, len(plan_pairs)):.3f}; Inductor kernels the plan has as one group: "
          f"{same} of {multi}")


if __name__ == "__main__":
    main()

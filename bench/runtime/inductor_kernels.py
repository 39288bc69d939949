"""Inductor's generated kernels beside the plan's two notions of a kernel, for one training step.

A TORCH_TRACE log keeps the wrapper code of each compiled program (`inductor_output_code`): before
every Triton kernel launch a comment names the FX nodes it computes ("Topologically Sorted Source
Nodes"). The plan has two notions of one kernel: the fusion pass's groups (the plan bundle's
`nodes.group`, what the step-time estimate prices as one kernel each) and the memory timeline's
kernels of the backward (`timeline.backward_kernels`: the outputs of each kernel the timeline runs,
as it models Inductor's fusion). Each is compared with Inductor's kernels on the joint graph's
compute nodes (views, getitems and placeholders left out): of the pairs of nodes Inductor computes
in one kernel, the share the plan puts together (recall), and of the plan's pairs, the share
Inductor does (precision). A node both forward and backward compute (recomputed) counts once, by
its backward kernel. Inductor names a recomputed forward node by its source name (`q_7`, `h_10`),
not the joint graph's: such nodes are left out of both sides.

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
    timeline = plan["timeline"]
    fused = [{timeline["node"][step] for step in kernel} & kernel_of.keys() for kernel in timeline.get("backward_kernels", [])]
    print(f"{'':28s} {'kernels':>8s} {'nodes':>6s} {'pairs':>7s} {'shared':>7s} {'recall':>7s} {'precision':>9s}")
    multi = [g for g in inductor_groups.values() if len(g) > 1]
    print(f"{'Inductor':28s} {len(multi):8d} {sum(len(g) for g in multi):6d} {len(pairs(multi)):7d}")
    for label, groups in (("fusion groups", plan_groups.values()), ("timeline's backward kernels", fused)):
        # Inductor's pairs among the nodes this side places (the timeline places kernel outputs)
        inside = set().union(*groups)
        groups = [g for g in groups if len(g) > 1]
        inductor_pairs = {p for p in pairs(inductor_groups.values()) if p <= inside}
        plan_pairs = pairs(groups)
        shared = inductor_pairs & plan_pairs
        print(f"{label:28s} {len(groups):8d} {len(inside):6d} {len(plan_pairs):7d} {len(shared):7d} "
              f"{len(shared) / max(1, len(inductor_pairs)):7.3f} {len(shared) / max(1, len(plan_pairs)):9.3f}")

if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Independent check of `lathe graphs --json`: counts nodes from the raw artifact text, with
nothing shared with Lathe's parsers, and compares.

usage: graph_counts.py LATHE ARTIFACT...

TORCH_TRACE: every graph payload of the log (events and string artifacts that print a
GraphModule) is split into its classes by indentation; in each class's forward body, a statement
`name[: annot] = rhs` is one node unless it is a placeholder alias (`l_x_ = L_x_`, rhs a forward
parameter) or the AOT pytree unpack; bare annotated lines are placeholders. calls = those nodes,
torch_ops = those whose rhs starts with `torch.ops.`. .pt2: calls = len(graph_module.graph.nodes)
of each models/*.json (or serialized_exported_program.json).
"""
import gzip
import json
import re
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path

HEADER = re.compile(r"^[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ [^:]+:\d+\] (\{.*)$")
CLASS = re.compile(r"^( *)class (\S+)\(torch\.nn\.Module\):$")
PARAM = re.compile(r"^\s*(\w+)\s*[:,=)]")


def records(path: Path):
    opener = gzip.open if path.read_bytes()[:2] == b"\x1f\x8b" else open
    header, payload = None, []
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = HEADER.match(line)
            if m:
                if header is not None:
                    yield header, "\n".join(payload)
                try:
                    header = json.loads(m.group(1))
                except json.JSONDecodeError:
                    header = {}
                payload = []
            elif line.startswith("\t") and header is not None:
                payload.append(line[1:])
    if header is not None:
        yield header, "\n".join(payload)


def class_counts(text: str):
    """(calls, torch_ops, placeholders) of each class in the printed module, outermost first."""
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        m = CLASS.match(line)
        if not m:
            continue
        indent = len(m.group(1))
        body = " " * (indent + 8)
        params, calls, ops, placeholders = set(), 0, 0, 0
        j = i + 1
        # forward signature: one line, or the AOT multi-line form ending with "):"
        sig = []
        while j < len(lines):
            sig.append(lines[j])
            j += 1
            if sig[-1].rstrip().endswith("):"):
                break
        sig_text = " ".join(sig)
        inner = sig_text[sig_text.find("(") + 1: sig_text.rfind(")")]
        for part in re.split(r",(?![^\[]*\])", inner):
            pm = PARAM.match(part + ",")
            if pm and pm.group(1) != "self":
                params.add(pm.group(1))
        for line2 in lines[j:]:
            if line2.strip() and not line2.startswith(" " * (indent + 5)) :
                break  # back at the class level or above: next nested class or end
            if not line2.startswith(body) or line2.startswith(body + " "):
                continue
            stmt = line2[len(body):]
            if stmt.startswith("#") or stmt.startswith("return") or stmt == "pass":
                continue
            if "fx_pytree.tree_flatten_spec" in stmt:
                continue
            lhs, eq, rhs = stmt.partition(" = ")
            if not eq:
                if re.match(r'^\w+: "', stmt):
                    placeholders += 1  # AOT bare annotated placeholder
                continue
            rhs = rhs.split(";  ")[0].strip()
            name = lhs.split(":")[0].strip()
            if rhs in params:
                placeholders += 1  # placeholder alias
                continue
            calls += 1
            if rhs.startswith("torch.ops."):
                ops += 1
        out.append((calls, ops, placeholders + len([p for p in params if p not in ("primals", "tangents")])))
    return out


GRAPH_EVENTS = {
    "dynamo_output_graph", "aot_joint_graph", "aot_forward_graph", "aot_backward_graph", "aot_inference_graph",
    "inductor_pre_grad_graph", "inductor_post_grad_graph", "compiled_autograd_graph", "optimize_ddp_split_graph",
    "optimize_ddp_split_child",
}


def expected_trace(path: Path) -> Counter:
    expected = Counter()
    for header, payload in records(path):
        kind = next(iter(header), None)
        is_graph = kind in GRAPH_EVENTS or kind == "exported_program"
        if kind == "artifact":
            meta = header["artifact"]
            is_graph = meta.get("encoding") == "string" and (meta.get("name", "").endswith("_graph")
                                                             or "recompile_pre_grad" in meta.get("name", "")
                                                             or "recompile_post_grad" in meta.get("name", ""))
        if not is_graph:
            continue
        counts = class_counts(payload)
        if counts:
            expected[counts[0][:2]] += 1
    return expected


def expected_pt2(path: Path) -> Counter:
    expected = Counter()
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if re.search(r"(^|/)models/[^/]+\.json$", name) or name.endswith("serialized_exported_program.json"):
                program = json.loads(z.read(name))
                nodes = program["graph_module"]["graph"]["nodes"]
                ops = sum(1 for n in nodes if n["target"].startswith("torch.ops."))
                expected[(len(nodes), ops)] += 1
    return expected


def main() -> int:
    lathe, paths = sys.argv[1], [Path(p) for p in sys.argv[2:]]
    failures = 0
    for path in paths:
        run = subprocess.run([lathe, "graphs", str(path), "--json"], capture_output=True, text=True)
        if run.returncode != 0:
            print(f"FAIL {path}: exit {run.returncode}: {run.stderr.strip()}")
            failures += 1
            continue
        graphs = json.loads(run.stdout)
        got = Counter((g["calls"], g["torch_ops"]) for g in graphs if "parent" not in g)
        is_zip = path.is_file() and path.read_bytes()[:4] == b"PK\x03\x04"
        if path.is_dir():
            want = Counter()
            for f in sorted(path.iterdir()):
                want += expected_trace(f)
        else:
            want = expected_pt2(path) if is_zip else expected_trace(path)
        if got != want:
            print(f"FAIL {path}: (calls, torch_ops) lathe {sorted((got - want).items())} "
                  f"vs text {sorted((want - got).items())}")
            failures += 1
        else:
            print(f"ok   {path}: {sum(got.values())} graphs")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

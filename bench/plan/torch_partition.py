#!/usr/bin/env python3
"""Re-runs torch's own min-cut partitioner on a joint graph that lathe read from a capture, as the
reference for Lathe's recompute planning: which values torch saves for backward, and how long
torch.functorch's min_cut_rematerialization_partition takes on the graph.

usage: torch_partition.py CAPTURE [--graph ID ...] [--lathe PATH]   (default: every aot_joint_graph)
       torch_partition.py --json FILE                                (lathe's `show --format json`)
       options: --params "0,2,5" | dynamo   static-lifetime primal indices (default none); dynamo: the
                primals the capture's dynamo_output_graph has as parameters and buffers
                --budget B: torch._functorch.config.activation_memory_budget for the call (default
                torch's, 1.0); --budgets 1.0,0.5,0: one saved set per budget, under "budgets"
                --repeat N (timed partition runs, default 5), --compare-capture, -o FILE

The graph is rebuilt as a torch.fx.GraphModule whose node.meta["val"] are FakeTensors (symbolic
sizes become SymInts of a ShapeEnv bound to their hints), then partitioned with torch's default
config (or the given activation memory budgets). Prints one JSON object per graph (an array for
several) and a one-line summary per graph and budget on stderr. Exit 2 when a graph cannot be
rebuilt, with the reason on stderr.

The number of forward outputs N is the count of PlainAOTOutput items of the joint's output node.
lathe's JSON does not carry the output items' comments, so they are read from its text form; with
--json the structural rule is used instead: the joint returns the forward outputs, then one
gradient slot per primal input.
"""
import argparse
import copy
import importlib
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import sympy
import torch
import torch._functorch.config as functorch_config
from torch._dynamo.source import ConstantSource
from torch._functorch.partitioners import min_cut_rematerialization_partition
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv
from torch.utils._sympy import functions as sym_functions

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_LATHE = ROOT / "build/default/app/cli/lathe"

# lathe's dtype abbreviations (core/ir/dtype.cpp) to torch dtype names.
DTYPES = {
    "b8": "bool", "u8": "uint8", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u16": "uint16", "u32": "uint32", "u64": "uint64", "f16": "float16", "bf16": "bfloat16",
    "f32": "float32", "f64": "float64", "c32": "complex32", "c64": "complex64", "c128": "complex128",
    "f8e4m3fn": "float8_e4m3fn", "f8e5m2": "float8_e5m2", "f8e4m3fnuz": "float8_e4m3fnuz",
    "f8e5m2fnuz": "float8_e5m2fnuz", "f8e8m0fnu": "float8_e8m0fnu", "f4e2m1fnx2": "float4_e2m1fn_x2",
    "b16": "bits16", "b1x8": "bits1x8",
}
DEVICE_REPR = re.compile(r"device\(type='(\w+)'(?:, index=(\d+))?\)")
# Names the size expressions of torch's ShapeEnv use besides arithmetic (FloorDiv, Mod, Max, ...).
SYMPY_NAMES = {name: obj for name, obj in vars(sym_functions).items() if isinstance(obj, type)}


class RebuildError(Exception):
    """The graph cannot be rebuilt as a GraphModule torch's partitioner accepts."""


# ---------------------------------------------------------------------------------------------
# Reading graphs from lathe


def run_lathe(lathe: Path, *args: str) -> str:
    proc = subprocess.run([str(lathe), *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RebuildError(f"lathe {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


def output_item_comments(fx_text: str) -> list[str | None]:
    """The trailing comment of each item the top-level forward returns, from lathe's text form:
    `return (` or `return pytree.tree_unflatten([` at 8 spaces, one `name,  # comment` per line."""
    lines = fx_text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("        return ")]
    if not starts:
        raise RebuildError("no return statement in lathe's text form of the graph")
    comments = []
    for line in lines[starts[-1] + 1 :]:
        if line.startswith("        ") and not line.startswith("         "):
            break  # the closing `)` or `], self._out_spec)`
        item, _, comment = line.partition("#")
        if item.strip():
            comments.append(comment.strip() or None)
    return comments


class LatheCapture:
    """Graphs of one capture (file or folder of ranks), read through the lathe CLI."""

    def __init__(self, lathe: Path, path: str):
        self.lathe, self.path = lathe, path

    def graph_ids(self, kind: str) -> list[str]:
        listing = json.loads(run_lathe(self.lathe, "graphs", self.path, "--json"))
        return [g["id"] for g in listing if g["kind"] == kind]

    def static_input_indices(self, joint_id: str) -> tuple[list[int], int]:
        """Primal indices of the module's parameters and buffers, and the placeholder count to check
        them against: the joint's primals follow the placeholders of the same compile's
        dynamo_output_graph, which lathe gives roles."""
        dynamo_id = f"{joint_id.rpartition(':')[0]}:dynamo_output_graph"
        doc = json.loads(run_lathe(self.lathe, "show", self.path, "--graph", dynamo_id, "--format", "json"))
        roles = [n["role"] for n in doc["nodes"] if n["op"] == "placeholder"]
        return [i for i, role in enumerate(roles) if role in ("parameter", "buffer")], len(roles)

    def graph(self, graph_id: str) -> tuple[dict, list[str | None]]:
        doc = json.loads(run_lathe(self.lathe, "show", self.path, "--graph", graph_id, "--format", "json"))
        text = run_lathe(self.lathe, "show", self.path, "--graph", graph_id, "--format", "text")
        return doc, output_item_comments(text)


def output_node(doc: dict) -> dict:
    outputs = [n for n in doc["nodes"] if n["op"] == "output"]
    if len(outputs) != 1:
        raise RebuildError(f"{len(outputs)} output nodes")
    return outputs[0]


def output_items(doc: dict) -> list:
    """The returned items: the joint returns one list, the forward graph one tuple."""
    args = output_node(doc)["args"]
    if len(args) == 1 and isinstance(args[0], dict) and "tuple" in args[0]:
        return args[0]["tuple"]
    return args[0] if len(args) == 1 and isinstance(args[0], list) else args


def primal_count(doc: dict) -> int:
    return sum(1 for n in doc["nodes"] if n["op"] == "placeholder" and n["name"].startswith("primals"))


def num_fwd_outputs(doc: dict, comments: list[str | None] | None) -> int:
    if not any(n["op"] == "placeholder" and n["name"].startswith("tangents") for n in doc["nodes"]):
        raise RebuildError("not a joint graph: no tangents_* placeholders")
    structural = len(output_items(doc)) - primal_count(doc)
    if comments is None:
        return structural
    plain = sum(1 for c in comments if c and c.startswith("PlainAOTOutput("))
    if plain != structural:
        raise RebuildError(
            f"{plain} PlainAOTOutput items, but {len(output_items(doc))} outputs minus {primal_count(doc)} "
            f"primals (one gradient slot each) leaves {structural}: other forward outputs (input mutations?)"
        )
    return plain


# ---------------------------------------------------------------------------------------------
# Rebuilding the joint graph as a GraphModule with fake values


class Symbols:
    """The capture's size symbols as symbols of a fresh ShapeEnv, each bound to its hint."""

    def __init__(self, nodes: list[dict]):
        self.shape_env = ShapeEnv(duck_shape=False, specialize_zero_one=False)
        self.fake_mode = FakeTensorMode(shape_env=self.shape_env)
        hinted = {}  # expression text -> hint
        for node in nodes:
            meta = node["meta"] or {}
            for dim in (meta.get("sizes") or []) + (meta.get("strides") or []):
                if isinstance(dim, dict) and "hint" in dim:
                    hinted[dim["expr"]] = dim["hint"]
        hints = self._solve_hints(hinted)
        self.mapping = {
            sym: self.shape_env.create_symbol(hint, source=ConstantSource(sym.name), dynamic_dim=DimDynamic.DYNAMIC)
            for sym, hint in sorted(hints.items(), key=lambda kv: kv[0].name)
        }

    @staticmethod
    def parse(expr: str) -> sympy.Expr:
        try:
            return sympy.sympify(expr, locals=SYMPY_NAMES)
        except (sympy.SympifyError, SyntaxError, TypeError) as e:
            raise RebuildError(f"size expression {expr!r} does not parse: {e}") from e

    def _solve_hints(self, hinted: dict[str, int]) -> dict[sympy.Symbol, int]:
        # A bare symbol gives its hint directly; otherwise solve an expression of one unknown symbol.
        exprs = [(self.parse(text), hint) for text, hint in hinted.items()]
        hints = {e: h for e, h in exprs if isinstance(e, sympy.Symbol)}
        progress = True
        while progress:
            progress = False
            for expr, hint in exprs:
                unknown = [s for s in expr.free_symbols if s not in hints]
                if len(unknown) != 1:
                    continue
                roots = sympy.solve(sympy.Eq(expr.subs(hints), hint), unknown[0])
                positive = [r for r in roots if r.is_integer and r > 0]
                if positive:
                    hints[unknown[0]] = int(positive[0])
                    progress = True
        return hints

    def value(self, expr_text: str) -> torch.SymInt | int:
        expr = self.parse(expr_text)
        missing = sorted(s.name for s in expr.free_symbols if s not in self.mapping)
        if missing:
            raise RebuildError(f"no hint for symbol(s) {', '.join(missing)} in {expr_text!r}")
        expr = expr.xreplace(self.mapping)
        return int(expr) if expr.is_Integer else self.shape_env.create_symintnode(expr, hint=None)


def resolve_target(name: str):
    """'torch.ops.aten.mm.default' -> the OpOverload; 'operator.getitem' -> the function."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError as e:
            raise RebuildError(f"target {name!r} does not resolve in torch {torch.__version__}: {e}") from e
        return obj
    raise RebuildError(f"target {name!r} names no importable module")


def fake_tensor(symbols: Symbols, meta: dict, what: str) -> torch.Tensor:
    dtype_name = DTYPES.get(meta.get("dtype"))
    if dtype_name is None or not hasattr(torch, dtype_name):
        raise RebuildError(f"{what}: dtype {meta.get('dtype')!r} unknown")

    def dim(d):
        return d if isinstance(d, int) else symbols.value(d["expr"])

    sizes = [dim(d) for d in meta["sizes"]]
    if "strides" in meta:
        strides = [dim(d) for d in meta["strides"]]
    else:
        strides = list(torch._prims_common.make_contiguous_strides_for(sizes))
    with symbols.fake_mode:
        return torch.empty_strided(sizes, strides, dtype=getattr(torch, dtype_name), device=meta.get("device", "meta"))


def node_value(symbols: Symbols, node: dict):
    meta = node["meta"]
    if meta["kind"] == "tensor":
        return fake_tensor(symbols, meta, node["name"])
    if meta["kind"] == "sym_int" and "expr" in meta:
        return symbols.value(meta["expr"])
    raise RebuildError(f"node {node['name']}: value of kind {meta['kind']!r} cannot be rebuilt")


def tuple_value(symbols: Symbols, target, element_of: dict[int, object]):
    """A tuple-returning node: the values its getitem users carry, small tensors in unread slots."""
    width = max(element_of) + 1
    schema = getattr(target, "_schema", None)
    if schema is not None and all(str(r.type) != "Tensor[]" for r in schema.returns):
        width = max(width, len(schema.returns))
    device = next((v.device for v in element_of.values() if isinstance(v, torch.Tensor)), "meta")
    with symbols.fake_mode:
        filler = torch.empty(0, device=device)
    return tuple(element_of.get(i, filler) for i in range(width))


class GraphRebuilder:
    def __init__(self, doc: dict):
        self.doc = doc
        self.symbols = Symbols(doc["nodes"])
        self.env: dict[str, torch.fx.Node] = {}

    def arg(self, a, where: str):
        if isinstance(a, list):
            return [self.arg(x, where) for x in a]
        if not isinstance(a, dict):
            return a  # None, bool, int, float, str
        if "node" in a:
            if a["node"] not in self.env:
                raise RebuildError(f"{where}: uses {a['node']} before it is defined")
            return self.env[a["node"]]
        if "tuple" in a:
            return tuple(self.arg(x, where) for x in a["tuple"])
        if "dict" in a:
            return {self.arg(k, where): self.arg(v, where) for k, v in a["dict"]}
        if "dtype" in a:
            if not hasattr(torch, a["dtype"]):
                raise RebuildError(f"{where}: dtype {a['dtype']!r} unknown")
            return getattr(torch, a["dtype"])
        if "device" in a:
            m = DEVICE_REPR.fullmatch(a["device"])
            if not m:
                raise RebuildError(f"{where}: device {a['device']!r} does not parse")
            return torch.device(m[1], int(m[2])) if m[2] else torch.device(m[1])
        if "layout" in a or "memory_format" in a:
            return resolve_target(a.get("layout") or a["memory_format"])
        if "float" in a:
            return float(a["float"])
        if "sym" in a:
            return self.symbols.value(a["sym"])
        raise RebuildError(f"{where}: argument {json.dumps(a)} cannot be rebuilt")

    def build(self) -> torch.fx.GraphModule:
        graph = torch.fx.Graph()
        nodes = self.doc["nodes"]
        getitems: dict[str, dict[int, dict]] = {}  # tuple node -> index -> getitem node
        for n in nodes:
            if n["op"] == "call_function" and n["target"] == "operator.getitem" and n["meta"] is not None:
                source, index = n["args"][0], n["args"][1]
                if isinstance(source, dict) and "node" in source and isinstance(index, int):
                    getitems.setdefault(source["node"], {})[index] = n
        values: dict[str, object] = {}
        for n in nodes:
            where = f"node {n['name']}"
            if n["op"] == "placeholder":
                fx_node = graph.placeholder(n["name"])
            elif n["op"] == "call_function":
                target = resolve_target(n["target"])
                fx_node = graph.create_node(
                    "call_function", target, tuple(self.arg(a, where) for a in n["args"]),
                    {k: self.arg(v, where) for k, v in n["kwargs"].items()}, name=n["name"])
            elif n["op"] == "output":
                graph.output([self.arg(a, where) for a in output_items(self.doc)])
                continue
            else:
                raise RebuildError(f"{where}: op {n['op']!r} is not supported (only placeholder/call_function)")
            if fx_node.name != n["name"]:
                raise RebuildError(f"{where}: FX renamed it to {fx_node.name}")
            self.env[n["name"]] = fx_node
            if n["meta"] is not None:
                values[n["name"]] = fx_node.meta["val"] = node_value(self.symbols, n)
        # Tuple nodes last: their value is made of their getitem users' values.
        for n in nodes:
            if n["meta"] is not None or n["op"] == "output":
                continue
            fx_node = self.env[n["name"]]
            items = getitems.get(n["name"])
            if items:
                element_of = {i: values[g["name"]] for i, g in items.items()}
                fx_node.meta["val"] = tuple_value(self.symbols, fx_node.target, element_of)
            elif not (isinstance(fx_node.target, torch._ops.OpOverload) and not fx_node.target._schema.returns):
                raise RebuildError(f"node {n['name']}: no metadata and no getitem users to take it from")
        return torch.fx.GraphModule(torch.nn.Module(), graph)


# ---------------------------------------------------------------------------------------------
# Partitioning and comparing


def partition(gm: torch.fx.GraphModule, n_fwd: int, params: list[int], repeat: int, budget: float):
    seconds, fw_module = [], None
    for _ in range(repeat):
        fresh = copy.deepcopy(gm)
        with functorch_config.patch(activation_memory_budget=budget):
            start = time.perf_counter()
            fw_module, _ = min_cut_rematerialization_partition(
                fresh, None, num_fwd_outputs=n_fwd, static_lifetime_input_indices=list(params))
            seconds.append(time.perf_counter() - start)
    fw_outputs = list(fw_module.graph.find_nodes(op="output")[0].args[0])
    return fw_outputs[n_fwd:], seconds


def is_sym(node: torch.fx.Node) -> bool:
    return isinstance(node.meta.get("val"), (torch.SymInt, torch.SymFloat, torch.SymBool))


def meta_bytes(meta: dict) -> int:
    """numel x element size (hints for symbolic sizes): what torch's partitioner weighs a value by."""
    numel = 1
    for d in meta["sizes"]:
        numel *= d if isinstance(d, int) else d["hint"]
    return numel * getattr(torch, DTYPES[meta["dtype"]]).itemsize


def agreement(ours: set[str], theirs: set[str], size: dict[str, int]) -> float:
    union = sum(size[n] for n in ours | theirs)
    return sum(size[n] for n in ours & theirs) / union if union else 1.0


def compare_with_capture(joint: dict, forward: dict, forward_comments: list[str | None],
                         saved: list[str], saved_symints: list[str]) -> dict:
    items = output_items(forward)
    if len(items) != len(forward_comments):
        raise RebuildError(f"forward graph: {len(items)} outputs but {len(forward_comments)} item comments")
    metas = {n["name"]: n["meta"] for n in forward["nodes"]}
    metas.update({n["name"]: n["meta"] for n in joint["nodes"]})
    placeholders = {n["name"] for n in joint["nodes"] if n["op"] == "placeholder"}
    chosen = [item["node"] for item, c in zip(items, forward_comments)
              if c and c.startswith("SavedForBackwardsAOTOutput(") and isinstance(item, dict)]
    capture_tensors = {n for n in chosen if metas[n]["kind"] == "tensor"}
    capture_symints = [n for n in chosen if metas[n]["kind"] != "tensor"]
    ours = set(saved)
    size = {n: meta_bytes(metas[n]) for n in ours | capture_tensors}
    order = {n["name"]: i for i, n in enumerate(joint["nodes"])}

    def joint_order(names):
        return sorted(names, key=lambda n: (order.get(n, len(order)), n))

    return {
        "agreement_non_placeholder": agreement(ours - placeholders, capture_tensors - placeholders, size),
        "agreement_all": agreement(ours, capture_tensors, size),
        "saved_bytes": sum(size[n] for n in ours),
        "capture_saved_bytes": sum(size[n] for n in capture_tensors),
        "capture_saved": joint_order(capture_tensors),
        "capture_saved_symints": capture_symints,
        "only_torch": joint_order(ours - capture_tensors),
        "only_capture": joint_order(capture_tensors - ours),
        "only_capture_not_in_joint": sorted(n for n in capture_tensors if n not in order),
        "symints_agree": sorted(saved_symints) == sorted(capture_symints),
    }


def forward_graph_id(joint_id: str) -> str:
    prefix, _, kind = joint_id.rpartition(":")
    if not kind.startswith("aot_joint_graph"):
        raise RebuildError(f"{joint_id} is not an aot_joint_graph id")
    return f"{prefix}:aot_forward_graph{kind[len('aot_joint_graph'):]}"


def run_graph(doc: dict, comments, graph_id: str, args, capture: LatheCapture | None) -> dict:
    n_fwd = num_fwd_outputs(doc, comments)
    params = args.params
    if params == "dynamo":
        params, placeholders = capture.static_input_indices(graph_id)
        if placeholders != primal_count(doc):
            raise RebuildError(
                f"dynamo_output_graph has {placeholders} placeholders, the joint {primal_count(doc)} primals")
    if params and max(params) >= primal_count(doc):
        raise RebuildError(f"--params index {max(params)} but only {primal_count(doc)} primals")
    gm = GraphRebuilder(doc).build()
    forward = capture.graph(forward_graph_id(graph_id)) if args.compare_capture else None
    order = {n["name"]: i for i, n in enumerate(doc["nodes"])}
    runs = []
    for budget in args.budgets:
        saved_nodes, seconds = partition(gm, n_fwd, params, args.repeat, budget)
        saved = sorted((n.name for n in saved_nodes if not is_sym(n)), key=lambda s: order.get(s, len(order)))
        symints = [n.name for n in saved_nodes if is_sym(n)]
        run = {"activation_memory_budget": budget, "saved": saved, "saved_symints": symints,
               "seconds": seconds, "median_seconds": statistics.median(seconds)}
        summary = (f"{graph_id}: {len(doc['nodes'])} nodes, N={n_fwd}, budget {budget:g}, saved {len(saved)} tensors"
                   f" + {len(symints)} symints, partition median {run['median_seconds']:.3f} s of {args.repeat}")
        if forward is not None:
            cmp = compare_with_capture(doc, *forward, saved, symints)
            run["capture"] = cmp
            summary += (f"; vs capture: agreement {cmp['agreement_non_placeholder']:.3f} non-placeholder, "
                        f"{cmp['agreement_all']:.3f} all; saved {cmp['saved_bytes'] / 2**20:.1f} MiB vs "
                        f"{cmp['capture_saved_bytes'] / 2**20:.1f} MiB; only torch-rerun: "
                        f"{' '.join(cmp['only_torch']) or '-'}; only capture: {' '.join(cmp['only_capture']) or '-'}")
        print(summary, file=sys.stderr)
        runs.append(run)
    result = {"graph": graph_id, "num_fwd_outputs": n_fwd, "static_lifetime_input_indices": params,
              "torch": torch.__version__}
    if args.budget_list:
        result["budgets"] = runs
    else:
        result.update(runs[0])
    return result


class ArgumentParser(argparse.ArgumentParser):
    def error(self, message):
        # Exit 1 on usage errors, as lathe does; 2 stays "cannot rebuild".
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def parse_args() -> argparse.Namespace:
    p = ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("capture", nargs="?", help="TORCH_TRACE log (.gz) or folder of rank logs")
    p.add_argument("--graph", action="append", help="joint graph id (repeatable); default: every aot_joint_graph")
    p.add_argument("--json", type=Path, help="a joint graph as lathe's `show --format json` wrote it")
    p.add_argument("--lathe", type=Path, default=DEFAULT_LATHE)
    p.add_argument("--params", default="", help="static-lifetime primal indices, e.g. 0,2,5; or 'dynamo': the "
                   "primals that the capture's dynamo_output_graph has as parameters and buffers")
    p.add_argument("--budget", type=float, help="torch._functorch.config.activation_memory_budget for the "
                   "partition call (default: torch's own, 1.0: no budget)")
    p.add_argument("--budgets", help="comma-separated budgets, e.g. 1.0,0.5,0: one saved set per budget, "
                   "listed under \"budgets\"")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--compare-capture", action="store_true",
                   help="compare with the saved set of the capture's aot_forward_graph")
    p.add_argument("-o", "--output", type=Path, help="write the JSON here instead of stdout")
    args = p.parse_args()
    if (args.json is None) == (args.capture is None):
        p.error("give either a CAPTURE path or --json FILE")
    if args.json is not None and (args.graph or args.compare_capture or args.params == "dynamo"):
        p.error("--graph, --compare-capture and --params dynamo read the capture: give its path instead of --json")
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    if args.budget is not None and args.budgets is not None:
        p.error("give --budget or --budgets, not both")
    args.budget_list = args.budgets is not None
    try:
        args.budgets = ([float(b) for b in args.budgets.split(",") if b.strip()] if args.budget_list
                        else [functorch_config.activation_memory_budget if args.budget is None else args.budget])
    except ValueError:
        p.error(f"--budgets {args.budgets!r}: expected comma-separated numbers")
    if not args.budgets or any(not 0.0 <= b <= 1.0 for b in args.budgets):
        p.error("activation memory budgets lie in [0, 1]")
    if args.params != "dynamo":
        try:
            args.params = sorted({int(i) for i in args.params.split(",") if i.strip()})
        except ValueError:
            p.error(f"--params {args.params!r}: expected comma-separated integers or 'dynamo'")
    return args


def main() -> int:
    args = parse_args()
    try:
        if args.json is not None:
            doc = json.loads(args.json.read_text())
            results = [run_graph(doc, None, doc.get("id", str(args.json)), args, None)]
        else:
            capture = LatheCapture(args.lathe, args.capture)
            ids = args.graph or capture.graph_ids("aot_joint_graph")
            if not ids:
                raise RebuildError(f"{args.capture} has no aot_joint_graph")
            results = []
            for graph_id in ids:
                doc, comments = capture.graph(graph_id)
                results.append(run_graph(doc, comments, graph_id, args, capture))
    except RebuildError as e:
        print(f"torch_partition: cannot rebuild: {e}", file=sys.stderr)
        return 2
    except (OSError, json.JSONDecodeError) as e:
        print(f"torch_partition: cannot read the graph: {e}", file=sys.stderr)
        return 2
    text = json.dumps(results[0] if len(results) == 1 else results, indent=1) + "\n"
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

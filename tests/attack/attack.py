#!/usr/bin/env python3
"""Attack run for the `lathe` CLI (issue 17, "Hostile input never crashes Lathe").

Feeds the CLI crafted hostile inputs (deep JSON, wrong-valued plan bundles, pickle memo bombs,
gzip / whitespace bombs, FX graphs that are not a training step, symlink loops, FIFOs) and
mutations of real inputs of every kind (byte flips, truncation, splices, and structure-aware JSON
and pickle mutators), running the matching commands on each under a time limit and a memory
bound. Any signal, exit 3, peak RSS over the bound or run over the time limit is a failure: the
input is written with a reproducer into OUT/failures/, and the exit status is 1.

    attack.py --lathe build/default/app/cli/lathe --samples ../shared/samples --out /tmp/attack \
              --count 2000 --budget 7200 --seed 17

Standard library only. Deterministic for a --seed: input i of a kind and the commands run on it
depend only on (seed, kind, i); the time budget only decides how many of them run.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import hashlib
import io
import json
import os
import pickle
import random
import re
import resource
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
import warnings
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

MiB = 1 << 20
GiB = 1 << 30

# --------------------------------------------------------------------------------------------
# Commands per input kind. {in} is the input path, {tmp} a fresh directory for what a run writes.

COMMANDS: dict[str, list[tuple[str, list[str]]]] = {
    "trace": [
        ("info", ["info", "{in}"]),
        ("graphs", ["graphs", "--json", "{in}"]),
        ("show", ["show", "{in}", "--graph", "0"]),
        ("guards", ["guards", "{in}"]),
        ("plan", ["plan", "{in}", "-o", "{tmp}/out.plan.json"]),
        ("pareto", ["pareto", "{in}"]),
    ],
    "pt2": [
        ("info", ["info", "--json", "{in}"]),
        ("graphs", ["graphs", "{in}"]),
        ("show", ["show", "{in}", "--graph", "0", "--format", "json"]),
        ("plan", ["plan", "{in}", "-o", "{tmp}/out.plan.json"]),
        ("pareto", ["pareto", "{in}"]),
    ],
    "snapshot": [
        ("info", ["info", "{in}"]),
        ("memory", ["memory", "{in}"]),
        ("memory --json", ["memory", "--json", "{in}"]),
    ],
    "bundle": [
        ("timeline", ["timeline", "{in}"]),
        ("timeline --csv", ["timeline", "--csv", "{in}"]),
        ("timeline --json", ["timeline", "--json", "{in}"]),
        ("export", ["export", "{in}", "-o", "{tmp}/kernels", "--compiler", "nvcc"]),
    ],
}
# Special files (symlink loops, FIFOs, devices): every reader is tried on them.
COMMANDS["fs"] = [
    ("info", ["info", "{in}"]),
    ("graphs", ["graphs", "{in}"]),
    ("memory", ["memory", "{in}"]),
    ("plan", ["plan", "{in}"]),
    ("timeline", ["timeline", "{in}"]),
    ("export", ["export", "{in}", "-o", "{tmp}/kernels", "--compiler", "nvcc"]),
]
KINDS = ["trace", "pt2", "snapshot", "bundle"]

# Samples mutated per kind (relative to the samples folder; missing ones are skipped). Small ones,
# so that a run stays well inside the time limit on an unmutated input.
SAMPLE_FILES = {
    "trace": [
        "tlparse/simple.log", "tlparse/comp_failure.log", "tlparse/comp_metrics.log", "tlparse/export.log",
        "tlparse/cache_hit_miss.log", "tlparse/artifacts.log", "tlparse/links.log",
        "tlparse/export_guard_added.log", "tlparse/simple_corrupted_json.log",
        "tlparse/multi_rank_logs/dedicated_log_torch_trace_rank_0.log",
        "tlparse/multi_rank_schedule/dedicated_log_torch_trace_rank_0_6u3fubwl.log",
        "captures/gpt2_tiny_train.log.gz", "captures/llama3_8b_2l_tiny_train.log.gz",
        "captures/mixtral_2l_tiny_train.log.gz", "captures/llama3_8b_2l_tiny_infer.log.gz",
        "captures/vit_b16_tiny_train.log.gz", "captures/llama3_8b_2l_dyntrain.log.gz",
    ],
    "pt2": ["pt2/gpt2_tiny.pt2", "pt2/llama3_8b_2l_tiny.pt2", "pt2/mixtral_2l_tiny.pt2",
            "pt2/hades-pid/exported_program.pt2"],
    "snapshot": ["snapshots/llama3_8b_2l_train_snapshot.pickle", "memory_snapshot/ftcourse/memory_snapshot.pickle",
                 "memory_snapshot/cs336-a2-systems/memory_files/memory_ctx128_forward.pickle"],
}
# Plan bundles are made at the start from these by `lathe plan`: (name, sample, pipeline or None).
BUNDLE_SOURCES = [
    ("gpt2_tiny_train", "captures/gpt2_tiny_train.log.gz", None),
    ("gpt2_tiny_train_offload", "captures/gpt2_tiny_train.log.gz",
     "split,fusion,recompute(policy=budget,memory=1MiB),offload(policy=heuristic,resident=0.3)"),
    ("llama_tiny_train", "captures/llama3_8b_2l_tiny_train.log.gz", None),
    ("mixtral_tiny_train", "captures/mixtral_2l_tiny_train.log.gz",
     "split,fusion,recompute(policy=heuristic),offload(policy=cost-effective)"),
    ("llama_tiny_infer", "captures/llama3_8b_2l_tiny_infer.log.gz", None),
    ("gpt2_tiny_pt2", "pt2/gpt2_tiny.pt2", None),
]

INTERESTING_INTS = sorted({0, 1, -1, 2, 7, 8, 16, 64, 127, 128, 255, 256, 1000, 4096, 65535, 65536,
                           2**31 - 1, 2**31, 2**31 + 1, -2**31, -2**31 - 1, 2**32 - 1, 2**32, 2**32 + 1,
                           10**6, 10**9, 2**53, 2**53 + 1, 2**63 - 1, 2**63, 2**63 + 1, -2**63, -2**63 - 1,
                           2**64 - 1, 2**64, 10**30})
INTERESTING_FLOATS = [0.5, -0.0, 1e-320, 1e308, -1e308, 3.4e38, 1e-7, 0.1]
NAN_LIKE = ["NaN", "nan", "inf", "-inf", "Infinity", "-Infinity", "1e999", "-0", "0x10", " 1", "", "null"]


# --------------------------------------------------------------------------------------------
# Running one command

@dataclass
class Outcome:
    code: int | None  # exit status, None when killed by a signal
    sig: int | None
    rss_mb: float
    seconds: float
    killed: str = ""  # "timeout" / "rss" when the runner killed it
    stderr: str = ""

    def failure(self, limits: "Limits") -> str:
        """What is wrong with the run, "" when nothing is: every reason, the first one the worst."""
        reasons = []
        if self.killed == "timeout":
            reasons.append(f"timeout (> {limits.timeout:g} s)")
        elif self.killed == "rss":
            reasons.append(f"killed at {self.rss_mb:.0f} MB RSS")
        elif self.sig is not None:
            try:
                reasons.append(signal.Signals(self.sig).name)
            except ValueError:
                reasons.append(f"signal {self.sig}")
        elif self.code == 3:
            reasons.append("exit 3")
        elif self.code not in (0, 1, 2):
            reasons.append(f"exit {self.code}")
        if self.rss_mb > limits.rss_mb and self.killed != "rss":
            reasons.append(f"RSS {self.rss_mb:.0f} MB")
        if self.seconds > limits.timeout and not self.killed:
            reasons.append(f"{self.seconds:.1f} s")
        return ", ".join(reasons)


@dataclass
class Limits:
    timeout: float = 10.0
    rss_mb: float = 1024.0
    kill_rss_mb: float = 2048.0


def run_monitored(argv: list[str], env: dict[str, str], cwd: str, limits: Limits) -> Outcome:
    """Runs argv in its own session; kills it past the time limit or the hard RSS bound. Peak
    RSS is the child's ru_maxrss from wait4 (the child and what it waited for)."""
    errf = open(os.path.join(cwd, ".stderr"), "w+b")
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errf, cwd=cwd, env=env,
                            start_new_session=True, close_fds=True)
    pid = proc.pid
    killed = ""
    polled_rss = 0
    interval = 0.002
    page_kb = os.sysconf("SC_PAGE_SIZE") // 1024
    while True:
        wpid, status, usage = os.wait4(pid, os.WNOHANG)
        if wpid == pid:
            break
        elapsed = time.monotonic() - start
        if not killed:
            try:
                with open(f"/proc/{pid}/statm") as f:
                    polled_rss = max(polled_rss, int(f.read().split()[1]) * page_kb)
            except (OSError, ValueError, IndexError):
                pass
            if elapsed > limits.timeout:
                killed = "timeout"
            elif polled_rss > limits.kill_rss_mb * 1024:
                killed = "rss"
            if killed:
                _kill_group(pid)
        time.sleep(interval)
        interval = min(interval * 1.5, 0.05)
    seconds = time.monotonic() - start
    proc.returncode = status  # reaped here; keeps Popen from waiting again
    _kill_group(pid)  # anything the child left running (nvcc)
    rss_mb = max(usage.ru_maxrss, polled_rss) / 1024.0
    errf.seek(0, os.SEEK_END)
    size = errf.tell()
    errf.seek(max(0, size - 4000))
    tail = errf.read().decode("utf-8", "replace")
    errf.close()
    if os.WIFSIGNALED(status):
        return Outcome(None, os.WTERMSIG(status), rss_mb, seconds, killed, tail)
    return Outcome(os.WEXITSTATUS(status), None, rss_mb, seconds, killed, tail)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class Spawner:
    """Runs commands from a small process forked before the attack loads any sample: a child's
    ru_maxrss counts the memory of the process it was forked from, so forking lathe from the
    attack process itself (hundreds of MB of samples) would report that as lathe's peak."""

    def __init__(self) -> None:
        from multiprocessing.connection import Pipe
        parent, child = Pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the server: one thread per request
            parent.close()
            send_lock = threading.Lock()

            def serve(rid, argv, env, cwd, limits):
                try:
                    o = run_monitored(argv, env, cwd, limits)
                except Exception as e:  # e.g. the CLI vanished
                    o = Outcome(None, None, 0, 0, "", f"attack.py could not run it: {e}")
                with send_lock:
                    child.send((rid, o))

            while True:
                try:
                    req = child.recv()
                except (EOFError, OSError):
                    os._exit(0)
                if req is None:
                    os._exit(0)
                threading.Thread(target=serve, args=req, daemon=True).start()
        child.close()
        self.conn = parent
        self.lock = threading.Lock()
        self.next_id = 0
        self.waiting: dict[int, list] = {}
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                rid, o = self.conn.recv()
            except (EOFError, OSError):
                return
            slot = self.waiting.pop(rid)
            slot[1] = o
            slot[0].set()

    def run(self, argv: list[str], env: dict[str, str], cwd: str, limits: Limits) -> Outcome:
        slot = [threading.Event(), None]
        with self.lock:
            self.next_id += 1
            rid = self.next_id
            self.waiting[rid] = slot
            self.conn.send((rid, argv, env, cwd, limits))
        slot[0].wait()
        return slot[1]

    def close(self) -> None:
        # A sentinel, not close(): closing the socket while _read is blocked on it sends no EOF.
        with self.lock:
            self.conn.send(None)
        os.waitpid(self.pid, 0)


# --------------------------------------------------------------------------------------------
# Writers for the formats

def md5_hex(text: str) -> str:
    return hashlib.md5(text.encode("utf-8", "surrogateescape")).hexdigest()


def trace_record(kind: str, payload: str | None = None, meta: dict | None = None, frame: int = 0,
                 compile_: int = 0, attempt: int = 0) -> str:
    env: dict = {kind: meta or {}, "frame_id": frame, "frame_compile_id": compile_, "attempt": attempt}
    if payload is not None:
        env["has_payload"] = md5_hex(payload)
    line = "V1129 16:17:37.145000 6041 torch/_functorch/_aot_autograd/graph_compile.py:1619] " + json.dumps(env) + "\n"
    if payload is not None:
        line += "".join("\t" + l + "\n" for l in payload.split("\n"))
    return line


def trace_log(graph_kind: str, fx: str, symbols: dict[str, int] | None = None) -> str:
    out = trace_record("dynamo_start", meta={"stack": []})
    for name, val in (symbols or {}).items():
        out += trace_record("create_symbol", meta={"symbol": name, "val": str(val), "vr": "[2, int_oo]", "source": "L['x'].size()[0]"})
    out += trace_record(graph_kind, fx)
    return out


def fx_graph(joint: bool, placeholders: list[tuple[str, str]], body: list[str], outputs: list[str]) -> str:
    """FX readable text as AOTAutograd logs it: placeholders (name, annotation), body lines
    (already `name: "ann" = torch.ops...`), the returned names."""
    lines = ["class joint_helper(torch.nn.Module):" if joint else "class <lambda>(torch.nn.Module):",
             "    def forward("]
    lines.append("        self,")
    if joint:
        lines += ["        primals,", "        tangents,", "    ):"]
        for name, ann in placeholders:
            lines.append(f'        {name}: "{ann}"')
        names = ", ".join(n for n, _ in placeholders)
        lines.append(f"        {names}, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)")
    else:
        for name, ann in placeholders:
            lines.append(f'        {name}: "{ann}",')
        lines.append("    ):")
    lines += ["        " + b for b in body]
    if joint:
        lines.append("        return pytree.tree_unflatten([" + ", ".join(outputs) + "], self._out_spec)")
    else:
        lines.append("        return (" + ", ".join(outputs) + ("," if len(outputs) == 1 else "") + ")")
    return "\n".join(lines)


def chain_fx(n: int, joint: bool, ann: str = "f32[64, 64][64, 1]cuda:0") -> str:
    first = "primals_1" if joint else "arg0_1"
    ph = [(first, ann)]
    if joint:
        ph.append(("tangents_1", ann))
    body, prev = [], first
    ops = ["torch.ops.aten.relu.default({})", "torch.ops.aten.neg.default({})", "torch.ops.aten.mul.Tensor({}, 2)",
           "torch.ops.aten.add.Tensor({}, " + first + ")"]
    for i in range(n):
        name = f"v_{i}"
        body.append(f'{name}: "{ann}" = ' + ops[i % len(ops)].format(prev))
        prev = name
    outs = [prev] + (["None"] if joint else [])
    return fx_graph(joint, ph, body, outs)


def wide_fx(n: int, joint: bool) -> str:
    ann = "f32[8, 8][8, 1]cuda:0"
    first = "primals_1" if joint else "arg0_1"
    ph = [(first, ann)] + ([("tangents_1", ann)] if joint else [])
    body = [f'w_{i}: "{ann}" = torch.ops.aten.neg.default({first})' for i in range(n)]
    outs = [f"w_{i}" for i in range(n)] + (["None"] if joint else [])
    return fx_graph(joint, ph, body, outs)


def sym_nested_fx(depth: int) -> str:
    expr = "s0"
    for i in range(depth):
        expr = f"({expr} + 1)" if i % 2 == 0 else f"2*{expr}"
    ann = f"f32[{expr}, 64][64, 1]cuda:0"
    return chain_fx(8, True, ann)


def nested_srepr(leaf: str, depth: int) -> str:
    expr = leaf
    for i in range(depth):
        expr = f"Add({expr}, Integer(1))" if i % 2 == 0 else f"Mul(Integer(2), {expr})"
    return expr


def resize_pt2_json(text: bytes, size: dict) -> bytes:
    """The model JSON with the first size of every tensor replaced by `size`."""
    doc = json.loads(text)
    stack = [doc]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            sizes = v.get("sizes")
            if isinstance(sizes, list) and sizes and isinstance(sizes[0], dict):
                sizes[0] = size
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return json.dumps(doc).encode()


def gzip_stream(path: Path, chunks: Iterator[bytes], level: int = 9) -> None:
    comp = zlib.compressobj(level, zlib.DEFLATED, 31)
    with open(path, "wb") as f:
        for chunk in chunks:
            f.write(comp.compress(chunk))
        f.write(comp.flush())


def gzip_bomb(path: Path, unit: bytes, total: int, head: bytes = b"", tail: bytes = b"") -> None:
    """A valid gzip file of head + unit repeated to `total` bytes + tail, written in seconds: after
    a full flush deflate starts afresh, so every MiB of the repetition compresses to the same
    block, written once per MiB; only the CRC-32 walks the whole content."""
    chunk = unit * max(1, MiB // len(unit))
    count, rest = divmod(total, len(chunk))
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    crc = zlib.crc32(head)
    with open(path, "wb") as f:
        f.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03")
        f.write(comp.compress(head) + comp.flush(zlib.Z_FULL_FLUSH))
        block = comp.compress(chunk) + comp.flush(zlib.Z_FULL_FLUSH)
        for _ in range(count):
            f.write(block)
            crc = zlib.crc32(chunk, crc)
        f.write(comp.compress(chunk[:rest]) + comp.compress(tail) + comp.flush())
        crc = zlib.crc32(tail, zlib.crc32(chunk[:rest], crc))
        f.write(struct.pack("<II", crc & 0xFFFFFFFF, (len(head) + total + len(tail)) & 0xFFFFFFFF))


def repeated(unit: bytes, total: int, head: bytes = b"", tail: bytes = b"") -> Iterator[bytes]:
    yield head
    block = unit * max(1, MiB // len(unit))
    left = total
    while left > 0:
        take = min(left, len(block))
        yield block[:take]
        left -= take
    yield tail


# --------------------------------------------------------------------------------------------
# Mutators

class JsonMutator:
    """Structure-aware mutations of a parsed JSON value (also used for unpickled snapshots:
    `pickled` allows tuples, bytes and shared / cyclic references)."""

    def __init__(self, rng: random.Random, pickled: bool = False):
        self.rng = rng
        self.pickled = pickled

    def strings(self, value, out: list, limit: int = 2000) -> None:
        stack = [value]
        while stack and len(out) < limit:
            v = stack.pop()
            if isinstance(v, str):
                out.append(v)
            elif isinstance(v, dict):
                stack.extend(v.values())
            elif isinstance(v, (list, tuple)):
                stack.extend(v[:200] if len(v) > 200 else v)

    def pick(self, root) -> tuple[object, object]:
        """A random (container, key) by a walk from the root that stops early more often than not."""
        parent, key, node = None, None, root
        seen = set()
        for _ in range(64):
            children = None
            if isinstance(node, dict) and node:
                children = list(node.keys())
            elif isinstance(node, list) and node:
                children = range(len(node))
            if children is None or id(node) in seen or (parent is not None and self.rng.random() < 0.3):
                break
            seen.add(id(node))
            k = self.rng.choice(children) if isinstance(children, list) else self.rng.randrange(len(node))
            parent, key, node = node, k, node[k]
        return parent, key

    def number(self):
        r = self.rng.random()
        if r < 0.7:
            v = self.rng.choice(INTERESTING_INTS)
            return v + self.rng.choice([0, 0, 0, -1, 1])
        if r < 0.9:
            return self.rng.choice(INTERESTING_FLOATS)
        return self.rng.choice(NAN_LIKE)

    def wrap(self, v):
        depth = self.rng.choice([1, 2, 10, 100, 1000])
        for _ in range(depth):
            v = [v] if self.rng.random() < 0.5 else {"x": v}
        return v

    def new_value(self, old, doc_strings: list):
        rng = self.rng
        r = rng.random()
        if isinstance(old, bool) or old is None:
            return rng.choice([True, False, None, 0, 1, -1, "", [], {}])
        if isinstance(old, (int, float)):
            return self.number() if r < 0.85 else rng.choice(["", None, [], {}, [old], str(old)])
        if isinstance(old, str):
            if r < 0.3:
                return ""
            if r < 0.55 and doc_strings:
                return rng.choice(doc_strings)  # a name from elsewhere in the document
            if r < 0.65:
                return old * rng.choice([2, 100, 5000])
            if r < 0.75:
                return old + rng.choice(["\u0000", "\u00e9", "\ud7ff", "\n", "%s%n", "..", "/", "\\"])
            if r < 0.85:
                return self.number()
            return rng.choice(NAN_LIKE)
        if isinstance(old, (list, tuple)):
            items = list(old)
            if r < 0.2:
                items = items[: rng.randrange(len(items) + 1)] if items else []
            elif r < 0.35 and items:
                del items[rng.randrange(len(items))]
            elif r < 0.55 and items:
                extra = rng.choice([1, 2, 10, 1000])
                items = items + [rng.choice(items) for _ in range(extra)]
            elif r < 0.65:
                items = []
            elif r < 0.75 and items:
                rng.shuffle(items)
            elif r < 0.85:
                items.reverse()
            elif r < 0.93 and items:
                i = rng.randrange(len(items))
                items.insert(i, items[i])
            else:
                return rng.choice([{}, "", 0, None])
            return tuple(items) if isinstance(old, tuple) else items
        if isinstance(old, dict):
            d = dict(old)
            if r < 0.35 and d:
                del d[rng.choice(list(d))]
            elif r < 0.5:
                d[rng.choice(["extra", "", "format", "nodes", "x" * 300])] = self.number()
            elif r < 0.65 and d:
                k = rng.choice(list(d))
                d[rng.choice(doc_strings) if doc_strings else k + "_"] = d.pop(k)
            elif r < 0.8:
                return rng.choice([[], "", 0, None, [d]])
            else:
                d = {}
            return d
        if isinstance(old, bytes):
            return rng.choice([b"", old * 2, old[: len(old) // 2]])
        return None

    def mutate(self, root, ops: int | None = None):
        rng = self.rng
        doc_strings: list = []
        self.strings(root, doc_strings)
        for _ in range(ops or rng.choice([1, 1, 2, 3, 5])):
            parent, key = self.pick(root)
            if parent is None:
                r = rng.random()
                root = self.wrap(root) if r < 0.3 else self.new_value(root, doc_strings)
                continue
            old = parent[key]
            r = rng.random()
            if r < 0.08:
                parent[key] = self.wrap(old)
            elif r < 0.14 and isinstance(parent, (list, dict)):
                # Swap with a sibling value (two groups' anchors, two nodes' names).
                keys = list(parent.keys()) if isinstance(parent, dict) else list(range(len(parent)))
                other = rng.choice(keys)
                parent[key], parent[other] = parent[other], parent[key]
            elif self.pickled and r < 0.22:
                # Share or cycle: the pickle memo turns these into references.
                target, tkey = self.pick(root)
                if target is not None and isinstance(target[tkey], (list, dict)):
                    parent[key] = target[tkey]
                elif isinstance(parent, (list, dict)):
                    parent[key] = parent  # a container that holds itself
            elif self.pickled and r < 0.27 and isinstance(old, list) and old:
                parent[key] = [old[0]] * rng.choice([10, 1000, 100000])  # one object, many references
            else:
                parent[key] = self.new_value(old, doc_strings)
        return root


def mutate_bytes(data: bytes, rng: random.Random, others: list[bytes] | None = None, text: bool = False) -> bytes:
    """Byte-level mutations: bit flips, interesting bytes, inserted / deleted / duplicated ranges,
    truncation, splices with another sample, and for text numbers set to interesting values."""
    buf = bytearray(data)
    for _ in range(rng.choice([1, 1, 1, 2, 3, 6])):
        n = len(buf)
        r = rng.random()
        if n == 0:
            buf += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
            continue
        if r < 0.2:
            for _ in range(rng.choice([1, 2, 4, 16, 64])):
                i = rng.randrange(n)
                buf[i] ^= 1 << rng.randrange(8)
        elif r < 0.3:
            i = rng.randrange(n)
            val = rng.choice([b"\x00", b"\xff", b"\x7f", b"\x80", b"\x00\x00\x00\x80", b"\xff\xff\xff\xff", b"\xff\xff\xff\x7f"])
            buf[i:i + len(val)] = val
        elif r < 0.4:
            i = rng.randrange(n + 1)
            buf[i:i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 32)))
        elif r < 0.5:
            i = rng.randrange(n)
            del buf[i:i + rng.choice([1, 8, 100, 4096, 65536])]
        elif r < 0.58:
            i = rng.randrange(n)
            j = rng.randrange(n)
            piece = buf[i:i + rng.choice([16, 256, 4096])]
            buf[j:j] = piece * rng.choice([1, 2, 50])
        elif r < 0.68:
            del buf[rng.randrange(n):]
        elif r < 0.76 and others:
            other = rng.choice(others)
            if other:
                buf = buf[: rng.randrange(n + 1)] + other[rng.randrange(len(other)):]
        elif text:
            # A number token (sizes, ids, lengths) set to an interesting value.
            start = rng.randrange(n)
            m = re.compile(rb"-?\d+").search(bytes(buf[start:start + 65536]))
            if m:
                a, b = start + m.start(), start + m.end()
                v = rng.choice(INTERESTING_INTS) + rng.choice([0, -1, 1])
                buf[a:b] = str(v).encode()
            else:
                i = rng.randrange(n)
                buf[i:i] = rng.choice([b"[", b"{", b"\"", b"\\", b"\n", b"\t", b"(", b")", b",", b"\x00"]) * rng.choice([1, 100, 10000])
        else:
            i = rng.randrange(n)
            buf[i] = rng.randrange(256)
    return bytes(buf)


# --------------------------------------------------------------------------------------------
# Cases

@dataclass
class Case:
    kind: str            # trace / pt2 / snapshot / bundle / fs
    origin: str          # crafted / mutated
    name: str            # what it is
    path: Path           # the input
    commands: list[tuple[str, list[str]]] = field(default_factory=list)
    recreate: str = ""   # for special files: shell commands that make the input again
    cleanup: bool = False


class Attack:
    def __init__(self, args):
        self.args = args
        self.lathe = str(Path(args.lathe).resolve())
        self.samples = Path(args.samples).resolve()
        self.out = Path(args.out).resolve()
        self.limits = Limits(args.timeout, args.rss_mb, args.rss_mb * 2)
        self.work = self.out / "work"
        self.crafted_dir = self.out / "crafted"
        self.failures_dir = self.out / "failures"
        self.bin = self.out / "bin"
        self.lock = threading.Lock()
        self.stats: dict[tuple[str, str, str], dict] = {}
        self.failures: list[dict] = []
        self.saved_per_class: dict[tuple, int] = {}
        self.counter = 0
        self.env = dict(os.environ)
        self.env.pop("LATHE_LOG_LEVEL", None)
        if args.nvcc == "stub":
            self.env["PATH"] = str(self.bin) + os.pathsep + self.env.get("PATH", "")
        self.sample_data: dict[str, list[tuple[str, bytes]]] = {}
        self.bundles: list[tuple[str, bytes]] = []
        self.setup_notes: list[str] = []
        self.spawner = Spawner()
        self.log = None

    # --- set-up -------------------------------------------------------------------------------
    def setup(self) -> None:
        for d in (self.work, self.crafted_dir, self.bin):
            d.mkdir(parents=True, exist_ok=True)
        if self.failures_dir.exists():
            shutil.rmtree(self.failures_dir)
        self.failures_dir.mkdir(parents=True)
        # A stand-in nvcc that refuses to compile: export runs its loading and kernel generation,
        # then fails as nvcc failing (exit 2) in milliseconds instead of compiling for seconds.
        stub = self.bin / "nvcc"
        stub.write_text("#!/bin/sh\necho 'attack.py stub nvcc: not compiling' >&2\nexit 1\n")
        stub.chmod(0o755)
        for kind, files in SAMPLE_FILES.items():
            pool = []
            for rel in files:
                p = self.samples / rel
                if p.is_file():
                    raw = p.read_bytes()
                    if raw[:2] == b"\x1f\x8b":
                        raw = gzip.decompress(raw)
                    pool.append((rel, raw))
            self.sample_data[kind] = pool
        base = self.out / "base"
        shutil.rmtree(base, ignore_errors=True)  # made again: they follow the CLI's plan format
        base.mkdir()
        for name, rel, pipeline in BUNDLE_SOURCES:
            src = self.samples / rel
            if not src.is_file():
                continue
            dst = base / f"{name}.plan.json"
            argv = [self.lathe, "plan", str(src), "-o", str(dst)] + (["--pipeline", pipeline] if pipeline else [])
            tmp = self.fresh_dir()
            o = self.spawner.run(argv, self.env, str(tmp), Limits(120, 1e9, 1e9))
            shutil.rmtree(tmp, ignore_errors=True)
            if o.code != 0 or not dst.exists():
                self.setup_notes.append(f"base bundle {name}: `lathe plan {rel}` gave {o.failure(self.limits) or o.code}")
                continue
            self.bundles.append((name, dst.read_bytes()))
        if not self.bundles:
            seeds = Path(__file__).resolve().parent.parent / "fuzz" / "seeds" / "fuzz_plan_bundle"
            for p in sorted(seeds.glob("*.json")):
                self.bundles.append((p.stem, p.read_bytes()))
            self.setup_notes.append("no bundle made by `lathe plan`; mutating the fuzz seeds instead")
        self.sample_data["bundle"] = self.bundles

    def fresh_dir(self) -> Path:
        with self.lock:
            self.counter += 1
            n = self.counter
        d = self.work / f"r{n:06d}"
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        return d

    # --- crafted inputs -----------------------------------------------------------------------
    def crafted(self) -> list[Case]:
        ci = self.args.ci
        d = self.crafted_dir
        cases: list[Case] = []

        def add(kind: str, name: str, path: Path, commands=None, recreate: str = "") -> None:
            cases.append(Case(kind, "crafted", name, path, commands or COMMANDS[kind], recreate))

        def write(name: str, data: bytes | str) -> Path:
            # Small inputs are written every run (bundles follow the CLI's format); only the bombs,
            # which depend on nothing but this script, are kept from an earlier run.
            p = d / name
            p.write_bytes(data.encode() if isinstance(data, str) else data)
            return p

        # Plan bundles.
        depth = 100_000
        add("bundle", "JSON nested 100k deep (arrays)", write("deep_array.plan.json", '{"format": "lathe.plan/1", "source": ' + "[" * depth + "]" * depth + "}"))
        add("bundle", "JSON nested 100k deep (objects)", write("deep_object.plan.json", '{"format": "lathe.plan/1", "x": ' + '{"a": ' * depth + "0" + "}" * depth + "}"))
        add("bundle", "JSON nested 100k deep, unclosed", write("deep_unclosed.plan.json", "[" * depth))
        if self.bundles:
            base_name, base_text = self.bundles[0]
            base = json.loads(base_text)
            for label, edit in self.bundle_edits(base):
                b = copy.deepcopy(base)
                try:
                    edit(b)
                except (KeyError, IndexError, TypeError, ValueError):
                    continue
                slug = re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")[:60]
                add("bundle", f"{base_name}: {label}", write(f"bundle_{slug}.plan.json", json.dumps(b, indent=1)))
            deep_node = copy.deepcopy(base)
            deep_node["timeline"]["node"] = "@DEEP@"
            add("bundle", "timeline.node nested 20k deep", write("deep_timeline.plan.json", json.dumps(deep_node).replace('"@DEEP@"', "[" * 20000 + "]" * 20000)))
        # Whitespace bomb: 2.5 MB of gzip that is ~2.5 GB of blanks (CI: 1 GiB).
        ws = 1 * GiB if ci else 2500 * MiB
        p = d / f"whitespace_{ws // MiB}M.plan.json.gz"
        if not p.exists():
            tail = self.bundles[0][1] if self.bundles else b"{}"
            gzip_bomb(p, b" \n\t ", ws, b"", tail)
        add("bundle", f"whitespace bomb .plan.json.gz ({ws // MiB} MiB of blanks, then a bundle)", p)
        p = d / "whitespace_8G.plan.json.gz"
        if not p.exists():
            gzip_bomb(p, b" ", 8 * GiB, b"", b"{}")
        add("bundle", "whitespace bomb .plan.json.gz (8 GiB of blanks, 8 MB of gzip)", p)

        # Snapshots.
        snap = None
        snap_path = self.samples / "snapshots/llama3_8b_2l_train_snapshot.pickle"
        if snap_path.is_file():
            snap = pickle.loads(snap_path.read_bytes())
        if snap is not None:
            entry = snap["device_traces"][0][0]
            s = dict(snap)
            s["device_traces"] = [[entry] * 1_000_000]
            add("snapshot", "one device_traces entry referenced 1M times (memo)", write("memo_entry_1M.pickle", pickle.dumps(s, 4)))
            s = dict(snap)
            s["device_traces"] = [snap["device_traces"][0]] * 100_000
            add("snapshot", "one device trace list referenced by 100k devices (memo)", write("memo_trace_100k.pickle", pickle.dumps(s, 4)))
            frames = entry["frames"]
            s = dict(snap)
            s["device_traces"] = [[dict(entry, addr=entry["addr"] + 512 * i, frames=frames) for i in range(100_000)]]
            add("snapshot", "100k trace entries sharing one frame list (memo)", write("memo_frames_100k.pickle", pickle.dumps(s, 4)))
            blocks = [b for seg in snap["segments"] for b in seg["blocks"]] * 20
            s = dict(snap)
            s["segments"] = [dict(seg, blocks=blocks) for seg in snap["segments"]] * 200
            add("snapshot", f"{len(s['segments'])} segments sharing one list of {len(blocks)} blocks (memo)", write("shared_blocks.pickle", pickle.dumps(s, 4)))
            s = dict(snap)
            s["segments"] = [snap["segments"][0]] * 1_000_000
            add("snapshot", "one segment referenced 1M times (memo)", write("memo_segment_1M.pickle", pickle.dumps(s, 4)))
            s = dict(snap)
            s["device_traces"] = [snap["device_traces"][0] * 60]
            add("snapshot", "real trace repeated 60x (100k events)", write("long_trace.pickle", pickle.dumps(s, 4)))
        # Billion laughs: each list holds the previous one twice; 2^40 leaves through the memo.
        laughs = [0]
        for _ in range(40):
            laughs = [laughs, laughs]
        add("snapshot", "nested lists, each twice the previous (2^40 leaves via memo)", write("laughs.pickle", pickle.dumps({"segments": laughs, "device_traces": [laughs]}, 4)))
        add("snapshot", "lists nested 100k deep (raw opcodes)", write("deep_lists.pickle", b"\x80\x04" + b"]" * depth + b"a" * (depth - 1) + b"."))
        add("snapshot", "MARK 1M deep (raw opcodes)", write("deep_marks.pickle", b"\x80\x04" + b"(" * 1_000_000 + b"."))
        add("snapshot", "BINUNICODE8 declaring 2^62 bytes", write("huge_declared_str.pickle", b"\x80\x04\x8d" + struct.pack("<Q", 1 << 62) + b"abc."))
        add("snapshot", "LONG4 declaring 2^31-1 bytes", write("huge_long.pickle", b"\x80\x04\x8b" + struct.pack("<i", 2**31 - 1) + b"\x01."))
        add("snapshot", "FRAME declaring 2^63 bytes", write("huge_frame.pickle", b"\x80\x04\x95" + struct.pack("<Q", 1 << 63) + b"}."))
        add("snapshot", "LONG_BINGET of an index never stored", write("bad_memo.pickle", b"\x80\x04}\x94j\xff\xff\xff\x7f."))
        bomb = 1 * GiB if ci else 3 * GiB
        p = d / f"gzip_bomb_{bomb // MiB}M.pickle.gz"
        if not p.exists():
            key = lambda k: b"\x8c" + bytes([len(k)]) + k
            gzip_bomb(p, b"K\x00", bomb, b"\x80\x04}(" + key(b"device_traces") + b"]](", b"ea" + key(b"segments") + b"]u.")
        add("snapshot", f"gzip bomb .pickle.gz ({bomb // MiB} MiB decompressed, one list of ints)", p)
        p = d / f"gzip_zero_bomb_{bomb // MiB}M.pickle.gz"
        if not p.exists():
            gzip_bomb(p, b"\x00", bomb, b"\x80\x04\x8e" + struct.pack("<Q", bomb), b".")
        add("snapshot", f"gzip bomb .pickle.gz ({bomb // MiB} MiB of zeros in one BINBYTES8)", p)
        p = d / "gzip_zero_bomb_8G.pickle.gz"
        if not p.exists():
            gzip_bomb(p, b"\x00", 8 * GiB, b"\x80\x04\x8e" + struct.pack("<Q", 8 * GiB), b".")
        add("snapshot", "gzip bomb .pickle.gz (8 GiB of zeros in one BINBYTES8, 8 MB of gzip)", p)

        # .pt2 archives.
        pt2_src = self.samples / "pt2/gpt2_tiny.pt2"
        ws = 1 * GiB if ci else 1 * GiB
        if pt2_src.is_file():
            p = d / f"whitespace_{ws // MiB}M.pt2"
            if not p.exists():
                self.pt2_with_member(pt2_src, p, "models/model.json", lambda real: repeated(b" \n", ws, b"", real))
            add("pt2", f".pt2 whose model JSON is {ws // MiB} MiB of whitespace, then the real JSON", p)
            p = d / "deep_model.pt2"
            if not p.exists():
                self.pt2_with_member(pt2_src, p, "models/model.json", lambda real: iter([b'{"graph_module": ' + b"[" * depth + b"]" * depth + b"}"]))
            add("pt2", ".pt2 whose model JSON is nested 100k deep", p)
            p = d / "deep_weights_config.pt2"
            if not p.exists():
                self.pt2_with_member(pt2_src, p, "data/weights/model_weights_config.json", lambda real: iter([b'{"config": ' + b'{"a": ' * depth + b"1" + b"}" * depth + b"}"]))
            add("pt2", ".pt2 whose weights config is nested 100k deep", p)
            sym = "Symbol('s0', positive=True, integer=True)"
            for label, slug, size in (
                    ("symbolic sizes nested 2*10^3 deep (sympy srepr)", "sym_nested_2k", lambda d: {"as_expr": {"expr_str": nested_srepr(sym, d), "hint": {"as_int": 64}}}),
                    ("sizes of 2^63-1", "huge_sizes", lambda d: {"as_int": 2**63 - 1}),
                    ("negative sizes", "negative_sizes", lambda d: {"as_int": -64}),
                    ("a symbol without a hint", "sym_no_hint", lambda d: {"as_expr": {"expr_str": sym}})):
                p = d / f"{slug}.pt2"
                if not p.exists():
                    self.pt2_with_member(pt2_src, p, "models/model.json", lambda real, size=size: iter([resize_pt2_json(real, size(2000))]))
                add("pt2", label, p)
        p = d / f"flat_whitespace_{ws // MiB}M.pt2"
        if not p.exists():
            with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
                with z.open("serialized_exported_program.json", "w", force_zip64=True) as f:
                    for chunk in repeated(b" ", ws, b"", b"{}"):
                        f.write(chunk)
                z.writestr("version", "1")
        add("pt2", f"flat .pt2 whose program JSON is {ws // MiB} MiB of blanks", p)
        p = d / "many_members.pt2"
        if not p.exists():
            with zipfile.ZipFile(p, "w", zipfile.ZIP_STORED) as z:
                for i in range(60000):
                    z.writestr(f"m/data/weights/w{i}", b"")
                z.writestr("m/archive_format", "pt2")
        add("pt2", ".pt2 with 60k members", p)

        # FX graphs that are not a training step, in TORCH_TRACE logs (lathe plan reads FX text
        # only inside a log or a .pt2).
        graphs = [
            ("chain_10k_joint", "joint graph, a 10^4-deep chain, no backward", lambda: trace_log("aot_joint_graph", chain_fx(10_000, True))),
            ("chain_10k_infer", "inference graph, a 10^4-deep chain", lambda: trace_log("aot_inference_graph", chain_fx(10_000, False))),
            ("chain_100k_joint", "joint graph, a 10^5-deep chain", lambda: trace_log("aot_joint_graph", chain_fx(100_000, True))),
            ("wide_100k_joint", "joint graph, 10^5 nodes wide", lambda: trace_log("aot_joint_graph", wide_fx(100_000, True))),
            ("wide_100k_infer", "inference graph, 10^5 nodes wide", lambda: trace_log("aot_inference_graph", wide_fx(100_000, False))),
            ("sym_nested_2k", "symbolic sizes nested 2*10^3 deep", lambda: trace_log("aot_joint_graph", sym_nested_fx(2000), {"s0": 64})),
            ("sym_nested_20k", "symbolic sizes nested 2*10^4 deep", lambda: trace_log("aot_joint_graph", sym_nested_fx(20000), {"s0": 64})),
            ("sym_unknown", "symbolic sizes without hints", lambda: trace_log("aot_joint_graph", chain_fx(50, True, "f32[s0, s1*s2][s1*s2, 1]cuda:0"))),
            ("huge_sizes", "sizes of 2^63-1", lambda: trace_log("aot_joint_graph", chain_fx(20, True, "f32[9223372036854775807, 9223372036854775807][9223372036854775807, 1]cuda:0"))),
            ("sizes_2_32", "sizes of 2^32 x 2^32", lambda: trace_log("aot_joint_graph", chain_fx(20, True, "f32[4294967296, 4294967296][4294967296, 1]cuda:0"))),
            ("sizes_overflow", "sizes past int64", lambda: trace_log("aot_joint_graph", chain_fx(20, True, "f32[99999999999999999999, 8][8, 1]cuda:0"))),
            ("negative_sizes", "negative sizes", lambda: trace_log("aot_joint_graph", chain_fx(20, True, "f32[-4, -9223372036854775808][-1, 1]cuda:0"))),
            ("negative_sizes_infer", "inference graph, negative sizes", lambda: trace_log("aot_inference_graph", chain_fx(20, False, "f32[-64, 64][64, 1]cuda:0"))),
            ("zero_sizes", "zero-element tensors", lambda: trace_log("aot_joint_graph", chain_fx(20, True, "f32[0, 0][0, 1]cuda:0"))),
            ("deep_envelope", "a record whose JSON is nested 100k deep", lambda: "V1129 16:17:37.145000 6041 x.py:1] " + '{"a": ' * depth + "1" + "}" * depth + "\n"),
        ]
        for slug, label, make in graphs:
            add("trace", label, write(f"{slug}.log", make()))
        long_line = 64 * MiB if ci else 512 * MiB
        p = d / f"long_line_{long_line // MiB}M.log.gz"
        if not p.exists():
            gzip_bomb(p, b"x", long_line, b'V1129 16:17:37.145000 6041 x.py:1] {"str": ["', b'", 0]}\n')
        add("trace", f"one {long_line // MiB} MiB line (gzip)", p)
        # A plan made with fusion(max_nodes=4000) over the 10^4 chain, for `lathe export`.
        chain = d / "chain_10k_joint.log"
        for label, pipeline in (("fusion(max_nodes=4000)", "split,fusion(max_nodes=4000)"),
                                ("fusion(max_nodes=100000)", "split,fusion(max_nodes=100000)")):
            slug = re.sub(r"[^a-z0-9]+", "_", label)
            p = d / f"chain_10k_{slug}.plan.json"
            p.unlink(missing_ok=True)
            tmp = self.fresh_dir()
            o = self.spawner.run([self.lathe, "plan", str(chain), "--pipeline", pipeline, "-o", str(p)], self.env, str(tmp), Limits(60, 1e9, 4096))
            shutil.rmtree(tmp, ignore_errors=True)
            if not p.exists():
                self.setup_notes.append(f"`lathe plan` of the 10^4 chain with {label} gave {o.failure(self.limits) or 'exit %s' % o.code}; its export is not attacked")
                continue
            add("bundle", f"10^4-node chain planned with {label}", p)

        # Special files.
        fs = d / "fs"
        if fs.exists():
            shutil.rmtree(fs)
        fs.mkdir()
        specials = [
            ("loop_a.log", "symlink loop a -> b -> a", "ln -s loop_b.log loop_a.log && ln -s loop_a.log loop_b.log"),
            ("self.pickle", "symlink to itself", "ln -s self.pickle self.pickle"),
            ("loopdir", "trace folder whose rank file is a symlink loop", "mkdir loopdir && ln -s dedicated_log_torch_trace_rank_0.log loopdir/dedicated_log_torch_trace_rank_0.log"),
            ("cycledir", "trace folder holding a symlink to itself", "mkdir cycledir && ln -s ../cycledir cycledir/dedicated_log_torch_trace_sub && ln -s . cycledir/self"),
            ("fifo.plan.json", "FIFO", "mkfifo fifo.plan.json"),
            ("fifodir", "trace folder whose rank file is a FIFO", "mkdir fifodir && mkfifo fifodir/dedicated_log_torch_trace_rank_0.log"),
            ("zero.pickle", "symlink to /dev/zero", "ln -s /dev/zero zero.pickle"),
            ("emptydir", "empty folder", "mkdir emptydir"),
            ("dangling.pt2", "dangling symlink", "ln -s nowhere.pt2 dangling.pt2"),
        ]
        for name, label, sh in specials:
            r = subprocess.run(["sh", "-c", sh], cwd=fs)
            if r.returncode == 0:
                add("fs", label, fs / name, recreate=sh)
        return cases

    def bundle_edits(self, base: dict) -> list[tuple[str, Callable[[dict], None]]]:
        groups = base.get("groups", [])
        names = base.get("nodes", {}).get("names", [])
        edits: list[tuple[str, Callable[[dict], None]]] = []
        T = "timeline"
        for v in (2147483647, 1000000, 4294967295, 2**32, -1, len(base.get(T, {}).get("node", []))):
            edits.append((f"timeline.peak_step = {v}", lambda b, v=v: b[T].__setitem__("peak_step", v)))
            edits.append((f"timeline.backward_start = {v}", lambda b, v=v: b[T].__setitem__("backward_start", v)))
        for v in (2**32, 2**63, 2**64 - 1, 2**64, -1):
            edits.append((f"timeline.peak_bytes = {v}", lambda b, v=v: b[T].__setitem__("peak_bytes", v)))
        for cat in ("outputs", "weights", "node", "seconds"):
            edits.append((f"timeline.{cat} longer than the other series",
                          lambda b, cat=cat: b[T].__setitem__(cat, b[T][cat] + b[T][cat][:10])))
            edits.append((f"timeline.{cat} shorter than the other series",
                          lambda b, cat=cat: b[T].__setitem__(cat, b[T][cat][:-3])))
        edits.append(("timeline.phase longer", lambda b: b[T].__setitem__("phase", b[T]["phase"] + "fb")))
        edits.append(("timeline.phase of other letters", lambda b: b[T].__setitem__("phase", "x" * len(b[T]["phase"]))))
        edits.append(("timeline empty, peak_step 0", lambda b: [b[T].__setitem__(k, [] if isinstance(b[T][k], list) else "") for k in list(b[T]) if isinstance(b[T][k], (list, str))]))
        edits.append(("timeline values 2^64-1", lambda b: b[T].__setitem__("outputs", [2**64 - 1] * len(b[T]["outputs"]))))
        edits.append(("timeline.seconds NaN-like strings", lambda b: b[T].__setitem__("seconds", ["NaN"] * len(b[T]["seconds"]))))
        edits.append(("source.graph = \"\"", lambda b: b["source"].__setitem__("graph", "")))
        edits.append(("source.artifact = \"\"", lambda b: b["source"].__setitem__("artifact", "")))
        edits.append(("source.artifact a directory", lambda b: b["source"].__setitem__("artifact", "/")))
        edits.append(("source.fingerprint = \"\"", lambda b: b["source"].__setitem__("fingerprint", "")))
        edits.append(("source.nodes = 2^63", lambda b: b["source"].__setitem__("nodes", 2**63)))
        edits.append(("node names all empty", lambda b: b["nodes"].__setitem__("names", [""] * len(names))))
        edits.append(("node names duplicated", lambda b: b["nodes"].__setitem__("names", [names[0]] * len(names))))
        edits.append(("two node names swapped", lambda b: b["nodes"]["names"].__setitem__(slice(0, 2), names[1::-1])))
        edits.append(("node names reversed", lambda b: b["nodes"].__setitem__("names", names[::-1])))
        edits.append(("nodes.piece out of range", lambda b: b["nodes"].__setitem__("piece", [2**31 - 1] * len(names))))
        edits.append(("pieces = -5", lambda b: b.__setitem__("pieces", -5)))
        if groups:
            other = next((n for g in groups[1:] for n in g["nodes"] if n not in groups[0]["nodes"]), None)
            outside = next((n for n in names if all(n not in g["nodes"] for g in groups)), None)
            edits.append(("group anchor \"\"", lambda b: [g.__setitem__("anchor", "") for g in b["groups"]]))
            edits.append(("first group anchor \"\"", lambda b: b["groups"][0].__setitem__("anchor", "")))
            red = next((i for i, g in enumerate(groups) if g["kind"] != "pointwise"), None)
            if red is not None:
                edits.append(("reduction group anchor \"\"", lambda b: b["groups"][red].__setitem__("anchor", "")))
                edits.append(("reduction group anchor a node of another group",
                              lambda b: b["groups"][red].__setitem__("anchor", next(n for g in b["groups"] if g is not b["groups"][red] for n in g["nodes"]))))
                edits.append(("reduction group made pointwise", lambda b: b["groups"][red].__setitem__("kind", "pointwise")))
                edits.append(("reduction group without its anchor", lambda b: b["groups"][red].__setitem__("nodes", [n for n in b["groups"][red]["nodes"] if n != b["groups"][red]["anchor"]])))
            if other:
                edits.append(("group anchor a node of another group", lambda b: b["groups"][0].__setitem__("anchor", other)))
            if outside:
                edits.append(("group anchor a node of no group", lambda b: b["groups"][0].__setitem__("anchor", outside)))
                edits.append(("group holding a placeholder", lambda b: b["groups"][0]["nodes"].insert(0, names[0])))
            edits.append(("every group of unknown kind", lambda b: [g.__setitem__("kind", "mystery") for g in b["groups"]]))
            edits.append(("every group made normalization", lambda b: [g.__setitem__("kind", "normalization") for g in b["groups"]]))
            edits.append(("groups with no nodes", lambda b: [g.__setitem__("nodes", []) for g in b["groups"]]))
            edits.append(("group nodes repeated", lambda b: b["groups"][0].__setitem__("nodes", b["groups"][0]["nodes"] * 3)))
            edits.append(("group nodes out of order", lambda b: b["groups"][0]["nodes"].reverse()))
            edits.append(("one group holding every node", lambda b: b["groups"].__setitem__(0, dict(b["groups"][0], nodes=list(names)))))
            edits.append(("two groups holding the same nodes", lambda b: b["groups"].__setitem__(1 % len(groups), dict(b["groups"][0]))))
            edits.append(("nodes.group naming the wrong group", lambda b: b["nodes"].__setitem__("group", [len(groups) - 1] * len(names))))
            edits.append(("groups doubled", lambda b: b.__setitem__("groups", b["groups"] * 2)))
        if "recompute" in base:
            edits.append(("recompute saves every node", lambda b: b["recompute"].update(saved=list(names), saved_reasons=["x"] * len(names))))
            edits.append(("recompute recomputes every node", lambda b: b["recompute"].__setitem__("recomputed", list(names))))
        if "offload" in base:
            edits.append(("offload prefetch segments out of range", lambda b: [p.update(trigger=2**31 - 1, deadline=-2**31) for p in b["offload"]["prefetches"]]))
        edits.append(("hardware all zeros", lambda b: b.__setitem__("hardware", {k: (0 if isinstance(v, (int, float)) and not isinstance(v, bool) else v) for k, v in b["hardware"].items()})))
        edits.append(("estimates NaN-like", lambda b: b.__setitem__("estimates", {"step_seconds": 1e308, "peak_bytes": -1e308})))
        edits.append(("kernels entry of huge counts", lambda b: b.__setitem__("kernels", [{"manifest": "", "format": "", "targets": [""], "kernels": 2**64 - 1, "not_generated": 2**64 - 1}])))
        return edits

    def pt2_with_member(self, src: Path, dst: Path, suffix: str, content: Callable[[bytes], Iterator[bytes]]) -> None:
        with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
            for info in zin.infolist():
                data = zin.read(info)
                if info.filename.endswith(suffix):
                    with zout.open(info.filename, "w", force_zip64=True) as f:
                        for chunk in content(data):
                            f.write(chunk)
                else:
                    zout.writestr(info, data)

    # --- mutated inputs -----------------------------------------------------------------------
    def mutated(self, kind: str, index: int) -> Case | None:
        pool = self.sample_data.get(kind) or []
        if not pool:
            return None
        rng = random.Random(f"{self.args.seed}:{kind}:{index}")
        name, data = rng.choice(pool)
        others = [d for _, d in pool]
        d = self.fresh_dir()
        how = ""
        if kind == "bundle":
            r = rng.random()
            if r < 0.65:
                how = "json"
                try:
                    doc = JsonMutator(rng).mutate(json.loads(data))
                    text = json.dumps(doc, indent=rng.choice([None, 1]), allow_nan=rng.random() < 0.1)
                    out = text.encode("utf-8", "surrogatepass")
                except (RecursionError, ValueError):
                    how = "bytes"
                    out = mutate_bytes(data, rng, others, text=True)
            else:
                how = "bytes"
                out = mutate_bytes(data, rng, others, text=True)
            ext = ".plan.json"
        elif kind == "trace":
            r = rng.random()
            if r < 0.3:
                how = "lines"
                out = self.mutate_trace_lines(data, rng)
            else:
                how = "bytes"
                out = mutate_bytes(data, rng, others, text=True)
            ext = ".log"
        elif kind == "snapshot":
            r = rng.random()
            if r < 0.5:
                how = "pickle"
                try:
                    obj = JsonMutator(rng, pickled=True).mutate(pickle.loads(data))
                    out = pickle.dumps(obj, protocol=rng.choice([0, 1, 2, 3, 4, 4, 5]))
                except (RecursionError, pickle.PicklingError, ValueError, TypeError):
                    how = "bytes"
                    out = mutate_bytes(data, rng, others)
            else:
                how = "bytes"
                out = mutate_bytes(data, rng, others)
            ext = ".pickle"
        else:  # pt2
            r = rng.random()
            if r < 0.6:
                how = "member"
                out = self.mutate_pt2_members(data, rng)
            else:
                how = "bytes"
                out = self.mutate_pt2_bytes(data, rng, others)
            ext = ".pt2"
        if kind != "pt2" and rng.random() < 0.2:
            out = gzip.compress(out, compresslevel=1)
            if rng.random() < 0.3:
                out = out[: rng.randrange(len(out) + 1)]  # a cut gzip stream
            ext += ".gz"
            how += "+gzip"
        path = d / f"input{ext}"
        path.write_bytes(out)
        cmds = COMMANDS[kind]
        k = min(self.args.commands_per_input or len(cmds), len(cmds))
        chosen = [cmds[(index * k + j) % len(cmds)] for j in range(k)]
        return Case(kind, "mutated", f"#{index} {how} of {name}", path, chosen, cleanup=True)

    def mutate_trace_lines(self, data: bytes, rng: random.Random) -> bytes:
        lines = data.split(b"\n")
        for _ in range(rng.choice([1, 2, 4, 8])):
            n = len(lines)
            r = rng.random()
            i = rng.randrange(n)
            if r < 0.35:
                # A record's JSON envelope, structure-mutated.
                starts = [j for j in range(rng.randrange(n), min(n, rng.randrange(n) + 2000)) if lines[j][:1] in (b"V", b"I", b"W")]
                if starts:
                    j = rng.choice(starts)
                    head, sep, env = lines[j].partition(b"] ")
                    try:
                        doc = JsonMutator(rng).mutate(json.loads(env))
                        lines[j] = head + sep + json.dumps(doc).encode("utf-8", "surrogatepass")
                    except ValueError:
                        pass
            elif r < 0.5:
                del lines[i:i + rng.choice([1, 5, 100])]
            elif r < 0.65:
                lines[i:i] = lines[i:i + rng.choice([1, 10, 200])] * rng.choice([1, 2, 10])
            elif r < 0.75:
                j = rng.randrange(n)
                lines[i], lines[j] = lines[j], lines[i]
            elif r < 0.85:
                lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
            else:
                # A payload line's tensor annotation or number changed.
                lines[i] = re.sub(rb"\d+", lambda m: str(rng.choice(INTERESTING_INTS)).encode(), lines[i], count=rng.choice([1, 3, 100]))
            if not lines:
                lines = [b""]
        return b"\n".join(lines)

    def mutate_pt2_members(self, data: bytes, rng: random.Random) -> bytes:
        try:
            zin = zipfile.ZipFile(io.BytesIO(data))
            infos = zin.infolist()
        except zipfile.BadZipFile:
            return mutate_bytes(data, rng)
        json_members = [i for i in infos if i.filename.endswith(".json") or "archive_format" in i.filename or i.filename.endswith("version")]
        targets = set()
        if json_members:
            targets.add(rng.choice(json_members).filename)
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as zout:
            skip = rng.choice(infos).filename if rng.random() < 0.1 else None
            for info in infos:
                if info.filename == skip:
                    continue
                body = zin.read(info)
                if info.filename in targets:
                    if info.filename.endswith(".json") and rng.random() < 0.7:
                        try:
                            doc = JsonMutator(rng).mutate(json.loads(body))
                            body = json.dumps(doc).encode("utf-8", "surrogatepass")
                        except ValueError:
                            body = mutate_bytes(body, rng, text=True)
                    else:
                        body = mutate_bytes(body, rng, text=True)
                name = info.filename
                if rng.random() < 0.01:
                    name = rng.choice(["", "../" + name, name + "/", "/" + name, name.upper()])
                zi = zipfile.ZipInfo(name, info.date_time)
                zi.compress_type = rng.choice([info.compress_type, zipfile.ZIP_DEFLATED]) if rng.random() < 0.2 else info.compress_type
                zout.writestr(zi, body)
                if rng.random() < 0.005:
                    zout.writestr(zipfile.ZipInfo(name + "_dup"), body)
        return out.getvalue()

    def mutate_pt2_bytes(self, data: bytes, rng: random.Random, others: list[bytes]) -> bytes:
        # Most of an archive is weights; aim half the flips at the headers and the central directory.
        if rng.random() < 0.5:
            buf = bytearray(data)
            cd = data.rfind(b"PK\x05\x06")
            spots = [m.start() for m in re.finditer(rb"PK\x01\x02|PK\x03\x04", data[max(0, cd - 200000):])]
            for _ in range(rng.choice([1, 2, 4, 8])):
                if spots:
                    base = max(0, cd - 200000) + rng.choice(spots)
                    i = min(len(buf) - 1, base + rng.randrange(46))
                else:
                    i = rng.randrange(len(buf))
                if rng.random() < 0.5:
                    buf[i] ^= 1 << rng.randrange(8)
                else:
                    v = rng.choice([b"\xff\xff\xff\xff", b"\x00\x00\x00\x00", b"\xff\xff", b"\x00\x00\x00\x80"])
                    buf[i:i + len(v)] = v
            return bytes(buf)
        return mutate_bytes(data, rng, others)

    # --- running ------------------------------------------------------------------------------
    def run_case(self, case: Case) -> None:
        for cname, template in case.commands:
            tmp = self.fresh_dir()
            path = case.path
            if case.kind == "bundle" and template[0] == "export":
                # export records itself in the plan: run it on a copy so the input stays as it was.
                path = tmp / case.path.name
                shutil.copyfile(case.path, path)
            argv = [self.lathe] + [a.replace("{in}", str(path)).replace("{tmp}", str(tmp)) for a in template]
            o = self.spawner.run(argv, self.env, str(tmp), self.limits)
            failure = o.failure(self.limits)
            with self.lock:
                s = self.stats.setdefault((case.kind, case.origin, cname),
                                          {"runs": 0, "exit0": 0, "exit1": 0, "exit2": 0, "failures": 0, "max_rss": 0.0, "max_s": 0.0})
                s["runs"] += 1
                if o.code in (0, 1, 2):
                    s[f"exit{o.code}"] += 1
                s["max_rss"] = max(s["max_rss"], o.rss_mb)
                s["max_s"] = max(s["max_s"], o.seconds)
                if failure:
                    s["failures"] += 1
                self.log.write(json.dumps({"kind": case.kind, "origin": case.origin, "input": case.name, "command": cname,
                                           "exit": o.code, "signal": o.sig, "killed": o.killed, "rss_mb": round(o.rss_mb, 1),
                                           "seconds": round(o.seconds, 3), "failure": failure,
                                           "stderr": o.stderr.strip().splitlines()[-1][:300] if o.stderr.strip() else ""}) + "\n")
            if failure:
                self.record_failure(case, cname, template, o, failure)
            shutil.rmtree(tmp, ignore_errors=True)
        if case.cleanup:
            shutil.rmtree(case.path.parent, ignore_errors=True)

    def record_failure(self, case: Case, cname: str, template: list[str], o: Outcome, failure: str) -> None:
        klass = (case.kind, cname, failure.split(" ")[0], case.origin if case.origin == "crafted" else "")
        with self.lock:
            n = len(self.failures) + 1
            kept = self.saved_per_class.get(klass, 0)
            self.saved_per_class[klass] = kept + 1
            entry = {"kind": case.kind, "origin": case.origin, "command": cname, "input": case.name,
                     "outcome": failure, "rss_mb": round(o.rss_mb, 1), "seconds": round(o.seconds, 2), "saved": None}
            self.failures.append(entry)
        if case.origin == "mutated" and kept >= self.args.keep_per_class:
            return  # enough examples of this one kept
        fdir = self.failures_dir / f"{n:05d}-{case.kind}-{re.sub(r'[^a-z0-9]+', '_', cname)}"
        fdir.mkdir(parents=True, exist_ok=True)
        inp = fdir / case.path.name
        if case.recreate:
            (fdir / "make_input.sh").write_text(f"#!/bin/sh\ncd \"$(dirname \"$0\")\" && {case.recreate}\n")
            subprocess.run(["sh", "make_input.sh"], cwd=fdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        else:
            shutil.copyfile(case.path, inp)
        args = [a.replace("{in}", str(inp)).replace("{tmp}", "$out") for a in template]
        env = f"PATH={shlex.quote(str(self.bin))}:$PATH " if self.args.nvcc == "stub" and template[0] == "export" else ""
        lines = ["#!/bin/sh", f"# {case.kind} ({case.origin}): {case.name}", f"# {cname}: {failure}, {o.rss_mb:.0f} MB, {o.seconds:.2f} s",
                 "out=$(mktemp -d)"]
        if case.recreate:
            lines.append(f"[ -e {shlex.quote(str(inp))} ] || [ -L {shlex.quote(str(inp))} ] || sh {shlex.quote(str(fdir / 'make_input.sh'))}")
        lines.append(env + " ".join([shlex.quote(self.lathe)] + [a if a.startswith("$out") else shlex.quote(a) for a in args]))
        (fdir / "repro.sh").write_text("\n".join(lines) + "\n")
        (fdir / "repro.sh").chmod(0o755)
        (fdir / "stderr.txt").write_text(o.stderr)
        with self.lock:
            entry["saved"] = str(fdir)

    def tasks(self) -> Iterator[Callable[[], Case | None]]:
        if not self.args.no_crafted:
            for case in self.crafted():
                if case.kind in self.args.kinds or case.kind == "fs":
                    yield lambda case=case: case
        if self.args.count > 0:
            for i in range(self.args.count):
                for kind in KINDS:
                    if kind in self.args.kinds:
                        yield lambda kind=kind, i=i: self.mutated(kind, i)

    def run(self) -> int:
        start = time.monotonic()
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        self.setup()
        self.log = open(self.out / "runs.jsonl", "w")
        it = self.tasks()
        it_lock = threading.Lock()
        skipped = [0]
        deadline = start + self.args.budget

        def worker() -> None:
            while True:
                with it_lock:
                    try:
                        task = next(it)
                    except StopIteration:
                        return
                    if time.monotonic() > deadline:
                        skipped[0] += 1
                        continue
                try:
                    case = task()
                    if case is not None:
                        self.run_case(case)
                except Exception as e:  # a generator's bug must not end the run silently
                    with self.lock:
                        self.setup_notes.append(f"attack.py error: {type(e).__name__}: {e}")

        threading.stack_size(256 * MiB)  # deep JSON / pickle values are built and written recursively
        threads = [threading.Thread(target=worker, daemon=True) for _ in range(self.args.jobs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - start
        self.spawner.close()
        self.log.close()
        shutil.rmtree(self.work, ignore_errors=True)
        return self.report(elapsed, skipped[0])

    def report(self, elapsed: float, skipped: int) -> int:
        rows = sorted(self.stats.items(), key=lambda kv: (kv[0][0] not in KINDS, KINDS.index(kv[0][0]) if kv[0][0] in KINDS else 0, kv[0][1], kv[0][2]))
        header = ["kind", "inputs", "command", "runs", "exit 0", "exit 1", "exit 2", "failures", "max RSS MB", "max s"]
        table = [[k[0], k[1], k[2], str(s["runs"]), str(s["exit0"]), str(s["exit1"]), str(s["exit2"]), str(s["failures"]),
                  f"{s['max_rss']:.0f}", f"{s['max_s']:.2f}"] for k, s in rows]
        total = {key: sum(s[key] for _, s in rows) for key in ("runs", "exit0", "exit1", "exit2", "failures")}
        table.append(["all", "", "", str(total["runs"]), str(total["exit0"]), str(total["exit1"]), str(total["exit2"]), str(total["failures"]),
                      f"{max((s['max_rss'] for _, s in rows), default=0):.0f}", f"{max((s['max_s'] for _, s in rows), default=0):.2f}"])
        widths = [max(len(r[i]) for r in table + [header]) for i in range(len(header))]
        fmt_row = lambda r: "  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
        print(f"lathe attack run: seed {self.args.seed}, {self.args.count} mutated inputs per kind, "
              f"{elapsed:.0f} s, limits {self.limits.timeout:g} s / {self.limits.rss_mb:.0f} MB, nvcc {self.args.nvcc}")
        for note in self.setup_notes:
            print("note:", note)
        if skipped:
            print(f"time budget of {self.args.budget:g} s reached: {skipped} inputs not run")
        print(fmt_row(header))
        for r in table:
            print(fmt_row(r))
        md = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        md += ["| " + " | ".join(r) + " |" for r in table]
        (self.out / "table.md").write_text("\n".join(md) + "\n")
        summary = {"seed": self.args.seed, "count": self.args.count, "seconds": round(elapsed, 1), "skipped": skipped,
                   "notes": self.setup_notes,
                   "rows": [{"kind": k[0], "inputs": k[1], "command": k[2], **s} for k, s in rows], "failures": self.failures}
        (self.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
        if self.failures:
            print(f"\n{len(self.failures)} failures (inputs and repro.sh in {self.failures_dir}):")
            for f in self.failures:
                if f["origin"] == "crafted":
                    print(f"  {f['kind']:8} {f['command']:16} {f['outcome']:22} {f['input']}" + (f"  [{Path(f['saved']).name}]" if f["saved"] else ""))
            mutated: dict[tuple, list[dict]] = {}
            for f in self.failures:
                if f["origin"] == "mutated":
                    mutated.setdefault((f["kind"], f["command"], f["outcome"].split(" ")[0]), []).append(f)
            for (kind, cname, what), fs in sorted(mutated.items()):
                example = next((Path(f["saved"]).name for f in fs if f["saved"]), "")
                print(f"  {kind:8} {cname:16} {fs[0]['outcome']:22} {len(fs)} mutated inputs, e.g. {fs[0]['input']}" + (f"  [{example}]" if example else ""))
            return 1
        print("\nno failures")
        return 0


def write_fuzz_seeds(attack: "Attack", root: Path) -> int:
    """Seeds for tests/fuzz/fuzz_plan_bundle and fuzz_plan_entry: `lathe plan` bundles of small
    graphs of our own captures and of fuzz_plan_entry's fixed graph, and the crafted bundles of
    this attack made from them (deep nesting cut to 20k levels). Each under 64 KB."""
    fuzz = root / "tests" / "fuzz"
    src = (fuzz / "fuzz_plan_entry.cpp").read_text()
    m = re.search(r'R"FX\((.*?)\)FX"', src, re.S)
    if not m:
        print("attack.py: no kGraph in fuzz_plan_entry.cpp", file=sys.stderr)
        return 2
    tmp = attack.fresh_dir()
    (tmp / "entry.log").write_text(trace_log("aot_joint_graph", m.group(1)))
    samples = os.path.relpath(attack.samples, root)
    jobs = [  # (seed folder, name, cwd, artifact, extra arguments)
        ("fuzz_plan_entry", "default", tmp, "entry.log", []),
        ("fuzz_plan_entry", "split_fusion", tmp, "entry.log", ["--pipeline", "split,fusion"]),
        ("fuzz_plan_entry", "fusion_max2", tmp, "entry.log", ["--pipeline", "split,fusion(max_nodes=2),recompute(policy=heuristic)"]),
        ("fuzz_plan_entry", "fusion_max1000_budget", tmp, "entry.log", ["--pipeline", "split,fusion(max_nodes=1000),recompute(policy=budget,memory=4KiB)"]),
        ("fuzz_plan_bundle", "gpt2_tiny_loss_default", root, f"{samples}/captures/gpt2_tiny_train.log.gz", ["--graph", "3/0:aot_joint_graph"]),
        ("fuzz_plan_bundle", "gpt2_tiny_loss_budget", root, f"{samples}/captures/gpt2_tiny_train.log.gz",
         ["--graph", "3/0:aot_joint_graph", "--pipeline", "split,fusion,recompute(policy=budget,memory=64KiB)"]),
        ("fuzz_plan_bundle", "llama_tiny_infer", root, f"{samples}/captures/llama3_8b_2l_tiny_infer.log.gz", []),
        ("fuzz_plan_bundle", "llama_tiny_infer_offload", root, f"{samples}/captures/llama3_8b_2l_tiny_infer.log.gz",
         ["--pipeline", "split,fusion,offload(policy=heuristic,resident=0.3)"]),
        ("fuzz_plan_bundle", "gpt2_tiny_pt2", root, f"{samples}/pt2/gpt2_tiny.pt2", ["--pipeline", "split,fusion(max_nodes=8)"]),
    ]
    made: dict[str, dict] = {}
    for folder, name, cwd, artifact, extra in jobs:
        out = fuzz / "seeds" / folder / f"{name}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        o = attack.spawner.run([attack.lathe, "plan", artifact, "-o", str(out)] + extra, attack.env, str(cwd), Limits(120, 1e9, 1e9))
        if o.code != 0:
            print(f"attack.py: `lathe plan {artifact} {' '.join(extra)}` gave {o.failure(attack.limits) or o.code}: {o.stderr.strip()[-300:]}", file=sys.stderr)
            continue
        if out.stat().st_size >= 64 << 10:
            print(f"attack.py: {out.name} is {out.stat().st_size} bytes, over 64 KB; not kept", file=sys.stderr)
            out.unlink()
            continue
        made[f"{folder}/{name}"] = json.loads(out.read_text())
    for folder, base_key in (("fuzz_plan_bundle", "fuzz_plan_bundle/gpt2_tiny_loss_default"), ("fuzz_plan_entry", "fuzz_plan_entry/default")):
        base = made.get(base_key)
        if base is None:
            continue
        dst = fuzz / "seeds" / folder
        for label, edit in attack.bundle_edits(base):
            b = copy.deepcopy(base)
            try:
                edit(b)
            except (KeyError, IndexError, TypeError, ValueError, StopIteration):
                continue
            slug = re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")[:60]
            text = json.dumps(b, indent=1)
            if len(text) < 64 << 10:
                (dst / f"crafted_{slug}.json").write_text(text + "\n")
        depth = 20000
        (dst / "crafted_deep_array.json").write_text('{"format": "lathe.plan/1", "source": ' + "[" * depth + "]" * depth + "}\n")
        (dst / "crafted_deep_object.json").write_text('{"format": "lathe.plan/1", "x": ' + '{"":' * 12000 + "0" + "}" * 12000 + "}\n")
        deep = copy.deepcopy(base)
        deep["timeline"]["node"] = "@DEEP@"
        (dst / "crafted_deep_timeline.json").write_text(json.dumps(deep).replace('"@DEEP@"', "[" * depth + "]" * depth) + "\n")
        (dst / "crafted_whitespace.json").write_text(" \n\t" * 12000 + json.dumps(base) + " " * 4000)
    shutil.rmtree(tmp, ignore_errors=True)
    for folder in ("fuzz_plan_bundle", "fuzz_plan_entry"):
        files = sorted((fuzz / "seeds" / folder).glob("*.json"))
        print(f"{folder}: {len(files)} seeds, largest {max((f.stat().st_size for f in files), default=0)} bytes")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lathe", required=True, help="the lathe CLI")
    ap.add_argument("--samples", required=True, help="the samples folder (read only)")
    ap.add_argument("--out", required=True, help="output folder: failures/, table.md, summary.json, crafted inputs")
    ap.add_argument("--count", type=int, default=150, help="mutated inputs per kind (default 150)")
    ap.add_argument("--budget", type=float, default=240, help="seconds for the whole run; inputs past it are not run (default 240)")
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="runs at once (default: the CPU count)")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds a run may take (default 10)")
    ap.add_argument("--rss-mb", type=float, default=1024.0, help="peak RSS a run may reach, MB (default 1024)")
    ap.add_argument("--commands-per-input", type=int, default=0,
                    help="commands run on each mutated input, rotating through its kind's commands (default 0: all of them)")
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated subset of " + ",".join(KINDS))
    ap.add_argument("--no-crafted", action="store_true", help="mutated inputs only")
    ap.add_argument("--ci", action="store_true", help="smaller bombs (1 GiB instead of 3 GB), for CI")
    ap.add_argument("--nvcc", choices=["stub", "real"], default="stub",
                    help="stub (default): export meets an nvcc that fails at once (exit 2 after kernel generation); real: the toolkit's")
    ap.add_argument("--write-fuzz-seeds", metavar="REPO",
                    help="only write the plan-bundle fuzzers' seeds into REPO/tests/fuzz/seeds/ (uses --lathe and --samples; --out for scratch)")
    ap.add_argument("--keep-per-class", type=int, default=5, help="failing mutated inputs kept per (kind, command, outcome)")
    args = ap.parse_args()
    args.kinds = [k for k in args.kinds.split(",") if k]
    if not Path(args.lathe).is_file():
        print(f"attack.py: no CLI at {args.lathe}", file=sys.stderr)
        return 2
    if not Path(args.samples).is_dir():
        print(f"attack.py: no samples folder at {args.samples}; skipped", file=sys.stderr)
        return 77
    sys.setrecursionlimit(20000)
    warnings.filterwarnings("ignore", category=UserWarning, module="zipfile")  # duplicate members are meant
    attack = Attack(args)
    if args.write_fuzz_seeds:
        attack.work.mkdir(parents=True, exist_ok=True)
        try:
            return write_fuzz_seeds(attack, Path(args.write_fuzz_seeds).resolve())
        finally:
            attack.spawner.close()
    return attack.run()


if __name__ == "__main__":
    sys.exit(main())

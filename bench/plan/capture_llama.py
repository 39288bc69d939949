#!/usr/bin/env python3
"""Captures one training step of a deep, narrow Llama on the CPU with TORCH_TRACE, as a large joint
graph for recompute planning: transformers' LlamaForCausalLM with random weights, --layers layers
of hidden 64, FFN 128, 4 heads, 2 KV heads, vocab 512, batch 1, seq 32, compiled with
torch.compile(backend="aot_eager_decomp_partition"): AOTAutograd with Inductor's decompositions and
torch's min-cut partitioner, but no Inductor code generation, so it needs no C++ toolchain.

usage: capture_llama.py [--layers 80] [--dtype bf16|fp32] [--lathe PATH] [--repeat 5]

Writes bench/out/llama<layers>_train.log.gz, checks with `lathe graphs` that compile 0/0 has its
aot_joint_graph, aot_forward_graph and aot_backward_graph, then runs torch_partition.py on the joint
graph (with the model's parameters as static-lifetime inputs, compared with the capture's saved set).
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DTYPES = {"bf16": "bfloat16", "fp32": "float32"}

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--layers", type=int, default=80)
parser.add_argument("--dtype", choices=sorted(DTYPES), default="bf16")
parser.add_argument("--lathe", type=Path, default=ROOT / "build/default/app/cli/lathe")
parser.add_argument("--repeat", type=int, default=5, help="partition runs for torch_partition.py")
args = parser.parse_args()

trace_dir = Path(tempfile.mkdtemp(prefix="lathe_trace_"))
os.environ["TORCH_TRACE"] = str(trace_dir)

import torch  # noqa: E402  (TORCH_TRACE must be set before torch is imported)
from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402
import transformers  # noqa: E402

SEQ, VOCAB = 32, 512
torch.manual_seed(0)
config = LlamaConfig(num_hidden_layers=args.layers, hidden_size=64, intermediate_size=128, num_attention_heads=4,
                     num_key_value_heads=2, vocab_size=VOCAB, max_position_embeddings=SEQ, use_cache=False)
model = LlamaForCausalLM(config).to(getattr(torch, DTYPES[args.dtype]))
ids = torch.randint(0, VOCAB, (1, SEQ))
compiled = torch.compile(model, backend="aot_eager_decomp_partition", fullgraph=True)

start = time.perf_counter()
compiled(input_ids=ids, labels=ids).loss.backward()
capture_seconds = time.perf_counter() - start

logs = sorted(trace_dir.glob("dedicated_log_torch_trace_*.log"))
if len(logs) != 1:
    sys.exit(f"capture_llama: expected one rank log in {trace_dir}, found {len(logs)}")
out = ROOT / "bench/out" / f"llama{args.layers}_train.log.gz"
out.parent.mkdir(parents=True, exist_ok=True)
with open(logs[0], "rb") as src, gzip.open(out, "wb") as dst:
    shutil.copyfileobj(src, dst)
log_mb = logs[0].stat().st_size / 2**20
shutil.rmtree(trace_dir)
print(f"captured {args.layers} layers ({args.dtype}, torch {torch.__version__}, transformers "
      f"{transformers.__version__}): compile + fwd + bwd {capture_seconds:.1f} s; log {log_mb:.1f} MiB -> {out}")

# The partition below must not trace itself.
env = {k: v for k, v in os.environ.items() if k != "TORCH_TRACE"}
listing = json.loads(subprocess.run([str(args.lathe), "graphs", str(out), "--json"], check=True,
                                    capture_output=True, text=True).stdout)
kinds = {g["kind"]: g for g in listing if g["compile_id"] == "0/0"}
missing = [k for k in ("aot_joint_graph", "aot_forward_graph", "aot_backward_graph") if k not in kinds]
if missing:
    sys.exit(f"capture_llama: compile 0/0 lacks {', '.join(missing)}")
print("compile 0/0: " + ", ".join(f"{k} {kinds[k]['nodes']} nodes" for k in
                                   ("aot_joint_graph", "aot_forward_graph", "aot_backward_graph")))

result = out.with_name(f"llama{args.layers}_partition.json")
subprocess.run([sys.executable, str(HERE / "torch_partition.py"), str(out), "--graph", "0/0:aot_joint_graph",
                "--lathe", str(args.lathe), "--params", "dynamo", "--compare-capture", "--repeat", str(args.repeat),
                "-o", str(result)], check=True, env=env)
print(f"partition median {json.loads(result.read_text())['median_seconds']:.3f} s -> {result}")

"""Makes tests/data/run_folder: a run folder of the Python runtime on the CPU (TORCH_TRACE log,
gzipped; plans/; lathe.profile.json), for the studio's and the CLI's tests of run folders.
    .venv/bin/python tests/data/make_run_folder.py"""

import gzip
import hashlib
import json
import os
import re
import sysconfig
import shutil
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "runtime"))
from test_api import Block  # noqa: E402

import lathe  # noqa: E402


def without_machine_paths(text):
    """The log with this checkout's, the interpreter's and the temp folders' absolute paths made
    relative, and every payload's md5 recomputed so that the log still verifies."""
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    replacements = [
        (os.path.join(root, "tests", "data", "..", "runtime") + os.sep, "tests/runtime/"),
        (sysconfig.get_paths()["purelib"] + os.sep, "site-packages/"),
        (sysconfig.get_paths()["stdlib"] + os.sep, "python/"),
        (root + os.sep, ""),
        ("/tmp/torchinductor_" + os.environ.get("USER", "root") + os.sep, "torchinductor/"),
        (root, "."),  # bare, as in the escaped JSON of config dumps
        ("/tmp/torchinductor_" + os.environ.get("USER", "root"), "torchinductor"),
    ]
    for old, new in replacements:
        text = text.replace(old, new)
    out, header, payload = [], None, []

    def flush():
        if header is None:
            return
        line = header
        if payload:
            digest = hashlib.md5("\n".join(p[1:] for p in payload).encode("utf-8")).hexdigest()
            line = re.sub(r'"has_payload": "[0-9a-f]+"', f'"has_payload": "{digest}"', header)
        out.append(line)
        out.extend(payload)

    for line in text.split("\n"):
        if line.startswith("\t"):
            payload.append(line)
        else:
            flush()
            header, payload = line, []
    flush()
    return "\n".join(out)


def main():
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run_folder")
    shutil.rmtree(folder, ignore_errors=True)
    torch.manual_seed(0)
    with torch._inductor.config.patch(fx_graph_cache=False), torch._functorch.config.patch(enable_autograd_cache=False):
        model = lathe.compile(Block(), policy="heuristic", trace_dir=folder)
        x = torch.randn(4, 8, 32)
        for _ in range(3):
            with lathe.step(model):
                model.zero_grad(set_to_none=True)
                model(x).pow(2).mean().backward()
    for name in os.listdir(folder):
        if name.endswith(".log"):
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as src, open(path + ".gz", "wb") as out, \
                    gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9, mtime=0) as dst:
                dst.write(without_machine_paths(src.read()).encode("utf-8"))
            os.unlink(path)
            os.replace(path + ".gz", os.path.join(folder, "dedicated_log_torch_trace_run.log.gz"))  # a stable name
    profile = os.path.join(folder, "lathe.profile.json")
    document = json.load(open(profile))
    with open(profile, "w") as f:
        json.dump(document, f, indent=1)
    print(folder, sorted(os.listdir(folder)))


if __name__ == "__main__":
    main()

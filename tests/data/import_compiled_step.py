"""Makes tests/data/h100_compiled_step from what `PROFILE_STEPS=2 python3 bench/device/measure/capture.py
OUT shared` wrote on the GPU machine (OUT/<name>.log.gz, OUT/<name>.trace.json.gz, OUT/captures.jsonl):
    python3 tests/data/import_compiled_step.py OUT [TARGET]
The device's paths (the checkout, the standard library, torch's site-packages, Inductor's temp folder, the host compiler, OUT, the temp
file torch.profiler names in the trace) are made relative; TORCH_TRACE payload digests are redone
(trace_logs.py), gzip mtimes fixed. Also run on the folder itself: it is idempotent."""

import gzip
import os
import re
import shutil
import sys

from trace_logs import without_machine_paths, write_gzipped

PREFIXES = [
    (r"(/[^\s\"',]*?/site-packages)/", "site-packages/"),
    (r"(/tmp/torchinductor_[A-Za-z0-9_]+)", "torchinductor"),
    (r"(/[^'\"\s]*/)g\+\+", ""),
    (r"(/(?:root|tmp|home)/[^\s\"',]*?/)trace_", ""),
    (r"(/tmp/)tmp[A-Za-z0-9_]+\.json", ""),
    (r"([^\s\"',]*?/)bench/device/", ""),  # also where torch cut a path short
    (r"(/usr/lib/python3\.[0-9]+)/", "python"),
]


def scrubbed(text):
    pairs = []
    for pattern, new in PREFIXES:
        for old in sorted(set(re.findall(pattern, text)), key=len, reverse=True):
            pairs.append((old, new))
    return pairs


def main():
    source = sys.argv[1]
    target = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                 "h100_compiled_step")
    os.makedirs(target, exist_ok=True)
    for name in sorted(os.listdir(source)):
        path = os.path.join(source, name)
        if name.endswith(".log.gz") or name.endswith(".trace.json.gz"):
            text = gzip.decompress(open(path, "rb").read()).decode("utf-8")
            pairs = scrubbed(text)
            if name.endswith(".log.gz"):
                text = without_machine_paths(text, pairs)
            else:
                for old, new in pairs:
                    text = text.replace(old, new)
            write_gzipped(text, os.path.join(target, name))
        elif name == "captures.jsonl" and os.path.abspath(source) != os.path.abspath(target):
            shutil.copy(path, os.path.join(target, name))


if __name__ == "__main__":
    main()

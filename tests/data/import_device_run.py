"""Makes tests/data/h200_weight_offload_run from a run folder bench/device/offload wrote on the GPU
machine ($OUT/run-train-r0.3: a training step of 4 Llama-3-8B-dims layers with streamed weights,
its TORCH_TRACE log, plan and lathe.profile.json with the recorded step):
    python3 tests/data/import_device_run.py RUN_FOLDER
The log is cut where the same process went on to compile the bench's CUDA-graph rows, and the
device's paths (read off the log: the checkout, torch's site-packages, Inductor's temp folder, the
host compiler) are made relative, as make_run_folder.py does for a log written here."""

import os
import re
import shutil
import sys

from trace_logs import without_machine_paths, write_gzipped

TARGET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "h200_weight_offload_run")


def device_paths(text):
    """The prefixes to replace, as the log names them."""
    def prefix(pattern, what):
        match = re.search(pattern, text)
        if not match:
            sys.exit(f"import_device_run: the log names no {what}")
        return match.group(1)

    root = prefix(r"Filename: (/[^,\s]*?)/bench/device/", "checkout (bench/device)")
    packages = prefix(r"Filename: (/[^,\s]*?/site-packages)/torch/", "site-packages")
    inductor = prefix(r"(/tmp/torchinductor_[A-Za-z0-9_]+)", "Inductor temp folder")
    compiler = prefix(r"(/[^'\"\s]*/)g\+\+", "host compiler")
    return [(root + "/", ""), (root, "."), (packages + "/", "site-packages/"), (inductor + "/", "torchinductor/"),
            (inductor, "torchinductor"), (compiler, "")]


def main():
    source = sys.argv[1]
    logs = [name for name in os.listdir(source) if name.endswith(".log")]
    if len(logs) != 1:
        sys.exit(f"import_device_run: expected one TORCH_TRACE log in {source}, found {len(logs)}")
    with open(os.path.join(source, logs[0]), encoding="utf-8") as f:
        lines = f.read().split("\n")
    cut = next((i for i, line in enumerate(lines) if not line.startswith("\t") and "dynamo_start" in line
                and "graph_rows" in line), len(lines))
    text = "\n".join(lines[:cut]) + "\n"
    text = without_machine_paths(text, device_paths(text))
    shutil.rmtree(TARGET, ignore_errors=True)
    shutil.copytree(os.path.join(source, "plans"), os.path.join(TARGET, "plans"))
    shutil.copy(os.path.join(source, "lathe.profile.json"), TARGET)
    write_gzipped(text, os.path.join(TARGET, "dedicated_log_torch_trace_run.log.gz"))
    print(TARGET, sorted(os.listdir(TARGET)))


if __name__ == "__main__":
    main()

"""TORCH_TRACE logs made fit to commit: the absolute paths of the machine that wrote them made
relative, every payload's md5 recomputed so that the log still verifies, gzipped with a fixed
mtime (the same log gives the same bytes)."""

import gzip
import hashlib
import os
import re
import sysconfig


def local_paths(root):
    """(absolute prefix, replacement) for a log written here: this checkout (`root`), the
    interpreter's packages and standard library, Inductor's temp folder."""
    inductor = "/tmp/torchinductor_" + os.environ.get("USER", "root")
    return [
        (os.path.join(root, "tests", "data", "..", "runtime") + os.sep, "tests/runtime/"),
        (sysconfig.get_paths()["purelib"] + os.sep, "site-packages/"),
        (sysconfig.get_paths()["stdlib"] + os.sep, "python/"),
        (root + os.sep, ""),
        (inductor + os.sep, "torchinductor/"),
        (root, "."),  # bare, as in the escaped JSON of config dumps
        (inductor, "torchinductor"),
    ]


def without_machine_paths(text, paths):
    """`text` with each prefix of `paths` replaced, in order, and the payload digests redone."""
    for old, new in paths:
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


def write_gzipped(text, path):
    with open(path, "wb") as out, gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9, mtime=0) as dst:
        dst.write(text.encode("utf-8"))

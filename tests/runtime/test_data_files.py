"""The captures committed under tests/data carry no absolute paths of the machine that wrote them
(tests/data/trace_logs.py makes them relative)."""

import gzip
import pathlib
import re

DATA = pathlib.Path(__file__).resolve().parent.parent / "data"
MACHINE_PATH = re.compile(r"(?<![\w.])/(home|root|tmp|opt|work|usr)/")


def test_committed_run_folders_name_no_machine_paths():
    files = [p for p in DATA.rglob("*") if p.is_file() and p.suffix in (".gz", ".log", ".json")]
    assert any(p.suffix == ".gz" for p in files), "no capture found under tests/data"
    for path in files:
        text = gzip.decompress(path.read_bytes()).decode("utf-8") if path.suffix == ".gz" else path.read_text("utf-8")
        found = MACHINE_PATH.search(text)
        assert found is None, f"{path.relative_to(DATA)}: {text[found.start():found.start() + 60]!r}"

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


SEEDS = DATA.parent / "fuzz" / "seeds"
INSTALL_PATH = re.compile(r"(?<![\w.])/opt/")  # a package install prefix of the machine that made the capture


def test_text_fuzz_seeds_name_no_install_paths():
    """Seeds cut from real captures name their packages relative to site-packages/; the hand-written
    ones keep their illustrative /tmp paths (a loader must read absolute paths too). Archives and
    pickles are left as torch wrote them."""
    files = [p for p in SEEDS.rglob("*") if p.is_file() and p.suffix in (".txt", ".json", ".log")]
    assert len(files) > 10, "the fuzz seeds are missing"
    for path in files:
        text = path.read_text("utf-8", errors="replace")
        found = INSTALL_PATH.search(text)
        assert found is None, f"{path.relative_to(SEEDS)}: {text[found.start():found.start() + 60]!r}"

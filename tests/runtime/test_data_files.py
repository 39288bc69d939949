"""The captures committed under tests/data carry no absolute paths of the machine that wrote them
(tests/data/trace_logs.py makes them relative), and the fuzz seeds cut from captures no install
prefix of the machine that made them."""

import gzip
import pathlib
import re

DATA = pathlib.Path(__file__).resolve().parent.parent / "data"
SEEDS = DATA.parent / "fuzz" / "seeds"
MACHINE_PATH = re.compile(r"(?<![\w.])/(home|root|tmp|opt|work|usr)/")
INSTALL_PATH = re.compile(r"(?<![\w.])/opt/")  # a package install prefix of the machine that made the capture


def assert_none_names(pattern, files, root):
    for path in files:
        text = gzip.decompress(path.read_bytes()).decode("utf-8") if path.suffix == ".gz" else \
            path.read_text("utf-8", errors="replace")
        found = pattern.search(text)
        assert found is None, f"{path.relative_to(root)}: {text[found.start():found.start() + 60]!r}"


def test_committed_run_folders_name_no_machine_paths():
    files = [p for p in DATA.rglob("*") if p.is_file() and p.suffix in (".gz", ".log", ".json")]
    assert any(p.suffix == ".gz" for p in files), "no capture found under tests/data"
    assert_none_names(MACHINE_PATH, files, DATA)


def test_text_fuzz_seeds_name_no_install_paths():
    """Seeds cut from real captures name their packages relative to site-packages/; the hand-written
    ones keep their illustrative /tmp paths (a loader must read absolute paths too). Archives and
    pickles are left as torch wrote them."""
    files = [p for p in SEEDS.rglob("*") if p.is_file() and p.suffix in (".txt", ".json", ".log")]
    assert len(files) > 10, "the fuzz seeds are missing"
    assert_none_names(INSTALL_PATH, files, SEEDS)

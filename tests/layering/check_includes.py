#!/usr/bin/env python3
"""The include rules of the source tree. Reads every `#include` in core/, passes/, kernels/, views/,
app/, runtime/native/ and runtime/executor/ and fails, listing file:line and the rule broken, when

- a layer of core includes a higher layer of core (CORE_LAYERS);
- a library includes one it does not link (the link lines of its CMakeLists.txt), or links one
  that the architecture does not allow (ARCHITECTURE);
- core, passes or kernels (or views/logic, the studio's Qt-free logic) include Qt or torch;
- a private header, core/io/<package>/detail/*.h, is included from outside core/io/<package>/
  (tests may include one: a unit test can reach an internal).

usage: check_includes.py [SOURCE_DIR]     (default: the checkout this file is in)
"""
import re
import sys
from pathlib import Path

# Layers of core, lowest first: (name, path prefix under core/; the longest that matches wins). A
# file includes its own layer and lower ones only. io/artifact.* is the loader entry, every loader
# behind one call, above the analyses, which take io's data types but not its loaders.
CORE_LAYERS = [("util", "util/"), ("ir", "ir/"), ("hw", "hw/"), ("io", "io/"), ("analysis", "analysis/"),
               ("io/artifact.h", "io/artifact."), ("plan", "plan/")]

# Our libraries: the folder of their sources, the CMakeLists.txt that defines them, their targets.
# Those whose folder a tree lacks are left out.
LIBRARIES = {
    "core": ("core/CMakeLists.txt", ["lathe_core"]),
    "passes": ("passes/CMakeLists.txt", ["lathe_passes"]),
    "kernels": ("kernels/CMakeLists.txt", ["lathe_kernels"]),
    "views/logic": ("views/logic/CMakeLists.txt", ["lathe_views_logic"]),
    "views": ("views/CMakeLists.txt", ["lathe_views"]),
    "app/cli": ("app/cli/CMakeLists.txt", ["lathe"]),
    "app/studio": ("app/studio/CMakeLists.txt", ["lathe_studio_window", "lathe-studio"]),
    "runtime/native": ("runtime/CMakeLists.txt", ["lathe_native"]),
    "runtime/executor": ("runtime/executor/CMakeLists.txt", ["lathe_runtime"]),
}
# What each library may link (README, "Layout"): dependencies point one way.
ARCHITECTURE = {
    "core": set(),
    "passes": {"core"},
    "kernels": {"core"},
    "views/logic": {"passes", "core"},
    "views": {"views/logic", "kernels", "passes", "core"},
    "app/cli": {"runtime/executor", "kernels", "passes", "core"},
    "app/studio": {"views", "views/logic", "kernels", "passes", "core"},
    "runtime/native": {"passes", "core"},
    "runtime/executor": {"passes", "core"},
}
HEADLESS = ("core", "passes", "kernels", "views/logic")  # built and tested without Qt and torch
QT_OR_TORCH = re.compile(r"^(Q[A-Za-z]|qcustomplot\.h$|torch/|ATen/|c10/|caffe2/)")
PRIVATE = re.compile(r"^core/io/([^/]+)/detail/")

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)([>"])')
RAW_STRING = re.compile(r'(?<![A-Za-z0-9_])(?:u8|u|U|L)?R"([^()\\ \t]{0,16})\(')
SOURCES = {".h", ".hpp", ".cpp", ".cc", ".cu", ".inc"}
LINK = re.compile(r"target_link_libraries\(\s*(\S+)([^)]*)\)")
VISIBILITY = {"PUBLIC", "PRIVATE", "INTERFACE"}


def library_of(path: str) -> str | None:
    for library in sorted(LIBRARIES, key=len, reverse=True):  # views/logic/ before views/
        if path.startswith(library + "/"):
            return library
    return None


def include_lines(text: str):
    """(line number, line) of each #include, leaving out the text of raw string literals (the
    sources that kernels/ generates hold includes of their own)."""
    raw_end = None  # the `)delim"` that closes the raw string the scan is in
    for number, line in enumerate(text.splitlines(), 1):
        at = 0
        if raw_end is None and INCLUDE.match(line):
            yield number, line
        while True:
            if raw_end is not None:
                end = line.find(raw_end, at)
                if end < 0:
                    break
                at, raw_end = end + len(raw_end), None
            start = RAW_STRING.search(line, at)
            if not start:
                break
            at, raw_end = start.end(), ")" + start.group(1) + '"'


def core_layer(path_in_core: str) -> int | None:
    matches = [i for i, (_, prefix) in enumerate(CORE_LAYERS) if path_in_core.startswith(prefix)]
    return max(matches, key=lambda i: len(CORE_LAYERS[i][1])) if matches else None


def linked_libraries(root: Path, libraries: list[str]) -> dict[str, set[str]]:
    """The libraries each library can include, from target_link_libraries: its direct links and what
    they link PUBLIC or INTERFACE, transitively."""
    library_of_target = {t: lib for lib in libraries for t in LIBRARIES[lib][1]}
    links: dict[str, list[tuple[str, bool]]] = {}  # target -> (linked target, visible to its users)
    for cmake in {LIBRARIES[lib][0] for lib in libraries}:
        text = re.sub(r"#[^\n]*", "", (root / cmake).read_text())
        for target, args in LINK.findall(text):
            public = True  # items before any keyword are PUBLIC
            for item in args.split():
                if item in VISIBILITY:
                    public = item != "PRIVATE"
                elif item in library_of_target:
                    links.setdefault(target, []).append((item, public))

    def reach(target: str, public_only: bool, seen: set[str]) -> set[str]:
        out = set()
        for linked, public in links.get(target, []):
            if (public or not public_only) and linked not in seen:
                seen.add(linked)
                out |= {linked} | reach(linked, True, seen)
        return out

    result = {}
    for library in libraries:
        reached = set().union(*(reach(t, False, set()) for t in LIBRARIES[library][1]))
        result[library] = {library_of_target[t] for t in reached} - {library}
    return result


def resolve(root: Path, includer: Path, name: str) -> str | None:
    """The included file relative to root, searched as the build does: beside the includer, then
    under core/ (lathe_core's include folder), then at the root (the other libraries')."""
    for base in (includer.parent, root / "core", root):
        candidate = base / name
        if candidate.is_file():
            return candidate.resolve().relative_to(root).as_posix()
    return None


def check(root: Path) -> tuple[list[str], int]:
    root = root.resolve()
    errors = []
    libraries = [library for library in LIBRARIES if (root / library).is_dir()]
    linked = linked_libraries(root, libraries)
    for library, libs in sorted(linked.items()):
        for other in sorted(libs - ARCHITECTURE[library]):
            errors.append(f"{LIBRARIES[library][0]}: {library} links {other}, which the architecture does not allow "
                          f"({library} may link: {', '.join(sorted(ARCHITECTURE[library])) or 'nothing of ours'})")
    includes = 0
    for library in libraries:
        for path in sorted((root / library).rglob("*")):
            source = path.relative_to(root).as_posix()
            if path.suffix not in SOURCES or not path.is_file() or library_of(source) != library:
                continue
            for number, line in include_lines(path.read_text(errors="replace")):
                m = INCLUDE.match(line)
                includes += 1
                where = f"{source}:{number}: #include {m.group(1)}{m.group(2)}{m.group(3)}"
                if library in HEADLESS and QT_OR_TORCH.match(m.group(2)):
                    errors.append(f"{where}: {library} builds without Qt and torch")
                if m.group(1) == "<":
                    continue
                target = resolve(root, path, m.group(2))
                if target is None:
                    errors.append(f"{where}: no such file beside it, under core/ or at the root")
                    continue
                to = library_of(target)
                if to is not None and to != library and to not in linked[library]:
                    errors.append(f"{where}: {library} does not link {to} "
                                  f"(it links: {', '.join(sorted(linked[library])) or 'nothing of ours'})")
                if library == "core" and to == "core":
                    from_layer, to_layer = core_layer(source[5:]), core_layer(target[5:])
                    if from_layer is None or to_layer is None:
                        errors.append(f"{where}: {source if from_layer is None else target} is in no layer of core")
                    elif to_layer > from_layer:
                        errors.append(f"{where}: core layer {CORE_LAYERS[from_layer][0]} includes the higher "
                                      f"layer {CORE_LAYERS[to_layer][0]} (order: "
                                      f"{' < '.join(name for name, _ in CORE_LAYERS)})")
                private = PRIVATE.match(target)
                if private and not source.startswith(f"core/io/{private.group(1)}/"):
                    errors.append(f"{where}: private to core/io/{private.group(1)}/")
    return errors, includes


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]
    errors, includes = check(root)
    for error in errors:
        print(error)
    if includes == 0:
        print(f"no #include found under {root}: not a Lathe checkout")
        return 1
    print(f"{includes} includes checked, {len(errors)} broken rules")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

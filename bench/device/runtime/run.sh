#!/usr/bin/env bash
# The runtime on the GPU machine, in one call: builds lathe._native there (its image has every
# build dependency but libzip, carried as .device/deps: see prepare_deps.sh), then runs bench.py.
#   device run, carry [".device/deps", ".device/magi"]:  bash bench/device/runtime/run.sh
# (bench.py's options are environment variables: see its docstring; BENCH_SCRIPT runs another
# script of this folder after the build, e.g. make_run_folder.py; a BENCH_TRACE_DIR under $OUT
# comes back as $OUT/<its name>.tar.gz)
set -euo pipefail
cd "$(dirname "$0")/../../.."
deps=$PWD/.device/deps
build=/tmp/lathe-runtime-build
# A warm machine keeps the build of an earlier call, and the copied sources may carry older times
# than its objects: rebuild from scratch whenever the sources' contents differ.
sources=$(find CMakeLists.txt cmake core passes kernels runtime/CMakeLists.txt runtime/native -type f -print0 | sort -z | xargs -0 sha1sum | sha1sum)
[ "$(cat "$build/.sources" 2>/dev/null)" = "$sources" ] || { rm -rf "$build"; mkdir -p "$build"; }
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLATHE_BUILD_TESTS=OFF -DLATHE_BUILD_STUDIO=OFF \
  -DPython_EXECUTABLE="$(command -v python3)" -DCMAKE_PREFIX_PATH="$deps" >"${OUT:-/tmp}/cmake.log" 2>&1 \
  || { tail -30 "${OUT:-/tmp}/cmake.log"; exit 1; }
start=$(date +%s)
cmake --build "$build" --target lathe_native -j "$(nproc)" >"${OUT:-/tmp}/build.log" 2>&1 \
  || { tail -30 "${OUT:-/tmp}/build.log"; exit 1; }
echo "$sources" >"$build/.sources"
echo "native module built in $(( $(date +%s) - start )) s"
export LD_LIBRARY_PATH="$deps/lib:${LD_LIBRARY_PATH:-}" PYTHONPATH="$PWD/runtime/python:${PYTHONPATH:-}"
if [ -d .device/magi ]; then  # MagiCompiler and the packages it needs that the image lacks
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .device/magi/wheels/*.whl
  export PYTHONPATH="$PWD/.device/magi:/tmp/site:$PYTHONPATH"
else
  export BENCH_MAGI=0
fi
status=0
python3 "bench/device/runtime/${BENCH_SCRIPT:-bench.py}" || status=$?
# Run folders written under $OUT come back as one archive: the device returns only so many files
# and folders so deep (a run folder's plans/ did not come back, nor the later variants' logs).
if [ -n "${BENCH_TRACE_DIR:-}" ] && [ -d "$BENCH_TRACE_DIR" ] && [ -n "${OUT:-}" ] && [[ "$(realpath "$BENCH_TRACE_DIR")" == "$(realpath "$OUT")"/* ]]; then
  name=$(basename "$BENCH_TRACE_DIR")
  tar czf "$OUT/$name.tar.gz" -C "$(dirname "$BENCH_TRACE_DIR")" "$name" && rm -rf "$BENCH_TRACE_DIR"
fi
exit "$status"

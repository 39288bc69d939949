#!/usr/bin/env bash
# `lathe export --compiler nvrtc` (no CUDA toolkit: libnvrtc and a host C++ compiler) on the tiny
# llama and mixtral training captures: a bundle whose fatbin holds sm_90a and sm_120 machine code,
# whose library exports every launch symbol (nm -D) and nothing of the CUDA runtime (ldd, nm -u),
# with the sources of an nvcc export byte for byte and, where nvcc is installed, the same kernels
# in its fatbin; a missing libnvrtc or an unknown compiler exits with its code and writes nothing.
# libnvrtc: $LATHE_NVRTC, else the nvidia-cuda-nvrtc wheel in SOURCE_DIR/.venv.
# usage: export_nvrtc.sh LATHE SAMPLES_DIR SOURCE_DIR   (skipped where no libnvrtc is found)
set -uo pipefail
lathe=$1 samples=$2 src=$3
if [ -z "${LATHE_NVRTC:-}" ]; then
  for dir in "$src"/.venv/lib/python3*/site-packages/nvidia/{cu13,cuda_nvrtc}/lib; do
    if ls "$dir"/libnvrtc.so.* > /dev/null 2>&1; then export LATHE_NVRTC=$dir; break; fi
  done
fi
if [ -z "${LATHE_NVRTC:-}" ]; then
  echo "export_nvrtc: no libnvrtc (pip install nvidia-cuda-nvrtc into $src/.venv), skipped"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
has_nvcc=""
if command -v nvcc > /dev/null || [ -x "${CUDA_HOME:-/nonexistent}/bin/nvcc" ] || [ -x /usr/local/cuda/bin/nvcc ]; then
  has_nvcc=yes
fi

for s in llama3_8b_2l_tiny_train mixtral_2l_tiny_train; do
  plan=$tmp/$s.plan.json out=$tmp/$s
  "$lathe" plan "$samples/captures/$s.log.gz" -o "$plan" > /dev/null 2> "$tmp/err" || { fail "plan $s: $(head -c 300 "$tmp/err")"; continue; }
  if ! "$lathe" export "$plan" -o "$out" --compiler nvrtc --keep-plan --json > "$tmp/summary.json" 2> "$tmp/err"; then
    fail "export $s: $(head -c 600 "$tmp/err")"; continue
  fi
  nm -D --defined-only "$out/liblathe_kernels.so" | awk '{print $3}' > "$tmp/symbols"
  if ldd "$out/liblathe_kernels.so" | grep -q 'libcuda'; then fail "$s: the library links $(ldd "$out/liblathe_kernels.so" | grep libcuda)"; continue; fi
  if nm -D -u "$out/liblathe_kernels.so" | grep -q ' cuda\| cu[A-Z]'; then fail "$s: the library needs CUDA symbols: $(nm -D -u "$out/liblathe_kernels.so" | grep ' cu' | head -3)"; continue; fi
  reference=""
  if [ -n "$has_nvcc" ]; then
    reference=$tmp/${s}_nvcc
    "$lathe" export "$plan" -o "$reference" --keep-plan > /dev/null 2> "$tmp/err" || { fail "nvcc export $s: $(head -c 600 "$tmp/err")"; continue; }
  fi
  if ! python3 - "$out" "$tmp/summary.json" "$tmp/symbols" "$reference" <<'EOF'
import filecmp, json, os, struct, sys
out, summary, symbols, reference = sys.argv[1:]
m = json.load(open(f"{out}/manifest.json"))
s = json.load(open(summary))
assert s["compiler"].startswith("NVRTC "), s["compiler"]
elf = sorted(e["arch"] for e in s["fatbin"] if e["kind"] == "elf")
assert elf == ["sm_120", "sm_90a"], elf
exported = set(open(symbols).read().split())
launches = {k["launch"] for k in m["kernels"]}
assert launches and exported == launches, f"exported {sorted(exported - launches)[:5]}, missing {sorted(launches - exported)[:5]}"

def kernels(path):
    """{arch: the kernel names (.text.<name> sections) of its ELF entry}"""
    data, at, found = open(path, "rb").read(), 0, {}
    size = struct.unpack_from("<Q", data, 8)[0]
    at = 16
    while at < 16 + size:
        header, payload = struct.unpack_from("<IQ", data, at + 4)
        arch = struct.unpack_from("<I", data, at + 28)[0]
        elf = data[at + header: at + header + payload]
        sections, = struct.unpack_from("<Q", elf, 0x28)
        count, names_index = struct.unpack_from("<HH", elf, 0x3c)
        names_at = struct.unpack_from("<Q", elf, sections + names_index * 64 + 24)[0]
        names = [elf[names_at + struct.unpack_from("<I", elf, sections + k * 64)[0]:].split(b"\0")[0].decode()
                 for k in range(count)]
        found[arch] = sorted(n[6:] for n in names if n.startswith(".text."))
        at += header + payload
    return found

ours = kernels(f"{out}/kernels.fatbin")
assert set(ours) == {90, 120} and ours[90] == ours[120] and len(ours[90]) >= len(m["kernels"]), ours.keys()
if reference:
    listed = sorted(os.listdir(f"{out}/src"))
    assert listed == sorted(os.listdir(f"{reference}/src")), "the two exports list other sources"
    match, mismatch, errors = filecmp.cmpfiles(f"{out}/src", f"{reference}/src", listed, shallow=False)
    assert not mismatch and not errors, f"sources differ: {mismatch[:5]} {errors[:5]}"
    theirs = kernels(f"{reference}/kernels.fatbin")
    assert ours == theirs, "the fatbins hold other kernels"
EOF
  then
    fail "export $s: the bundle does not match"; continue
  fi
  echo "ok   $s: $(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["kernels"], "kernels,", s["compiler"].split(" (")[0])' "$tmp/summary.json")${reference:+, the sources and kernels of the nvcc export}"
done

# Bad input: the exit code, a message, and nothing written.
s=llama3_8b_2l_tiny_train
expect() {  # expect CODE WHAT PATTERN -- ENV... -- ARGS...
  local code=$1 what=$2 pattern=$3; shift 4
  local env=()
  while [ "$1" != "--" ]; do env+=("$1"); shift; done
  shift
  env "${env[@]}" "$lathe" export "$tmp/$s.plan.json" -o "$tmp/bad" --keep-plan "$@" > /dev/null 2> "$tmp/err"
  local rc=$?
  if [ "$rc" -ne "$code" ]; then fail "$what: exit $rc, expected $code ($(head -c 300 "$tmp/err"))"
  elif [ -e "$tmp/bad" ] || ls -a "$tmp" | grep -q '^\.bad\.'; then fail "$what: wrote $tmp/bad"
  elif ! grep -q -- "$pattern" "$tmp/err"; then fail "$what: no '$pattern' in: $(head -c 300 "$tmp/err")"
  else echo "ok   $what: exit $code"; fi
}
expect 2 "libnvrtc that is not there" 'LATHE_NVRTC is /nonexistent' -- LATHE_NVRTC=/nonexistent/libnvrtc.so -- --compiler nvrtc
expect 2 "no host C++ compiler" 'no host C++ compiler' -- CXX= PATH=/nonexistent -- --compiler nvrtc
expect 1 "unknown compiler" 'compiler' -- -- --compiler clang

[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }

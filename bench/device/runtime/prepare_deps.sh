#!/usr/bin/env bash
# Copies what the GPU machine's image lacks to build lathe._native (libzip: headers, library,
# pkg-config file) into .device/deps, and MagiCompiler into .device/magi: git-ignored folders that
# run.sh's call carries.
set -euo pipefail
cd "$(dirname "$0")/../../.."
deps=.device/deps
rm -rf "$deps" && mkdir -p "$deps/include" "$deps/lib/pkgconfig"
cp /usr/include/zip.h /usr/include/zipconf.h "$deps/include/"
cp -L /usr/lib/x86_64-linux-gnu/libzip.so.4 "$deps/lib/libzip.so.4"
cp -L /usr/lib/x86_64-linux-gnu/libzip.so.4 "$deps/lib/libzip.so"
cat >"$deps/lib/pkgconfig/libzip.pc" <<'PC'
prefix=${pcfiledir}/../..
Name: libzip
Description: libzip, carried for the GPU machine's build
Version: 1.7.3
Libs: -L${prefix}/lib -lzip -Wl,-rpath,${prefix}/lib
Cflags: -I${prefix}/include
PC
# MagiCompiler for the side-by-side rows, with the wheels its imports need there.
rm -rf .device/magi && mkdir -p .device/magi
cp -r ../shared/anchors/MagiCompiler/magi_compiler .device/magi/
cp -r ../shared/anchors/magicompiler_wheels .device/magi/wheels
grep -qx "/.device/" .git/info/exclude 2>/dev/null || echo "/.device/" >>.git/info/exclude
echo "wrote $deps ($(du -sh "$deps" | cut -f1))"

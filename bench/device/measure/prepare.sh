#!/usr/bin/env bash
# Copies the shared training captures into .device/captures (git-ignored) for run.sh's call to carry.
set -euo pipefail
cd "$(dirname "$0")/../../.."
rm -rf .device/captures && mkdir -p .device/captures
cp ../shared/samples/captures/*_train.log.gz .device/captures/
grep -qx "/.device/" .git/info/exclude 2>/dev/null || echo "/.device/" >>.git/info/exclude
echo "wrote .device/captures ($(du -sh .device/captures | cut -f1))"

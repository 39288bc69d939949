#!/usr/bin/env bash
# Builds nothing: expects the release preset built (make bench does both) and .venv with tlparse.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec .venv/bin/python bench/load/run.py --tlparse .venv/bin/tlparse "$@"

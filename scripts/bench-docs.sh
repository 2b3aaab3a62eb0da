#!/usr/bin/env bash
# bench-docs.sh: BENCHMARKS.md's results table and the SVGs in docs/plots/ from the tour's
# JSON files, in one command.
#
#   scripts/bench-docs.sh [RUN.json ...]    (default: docs/benchmarks/data/*.json)
#
# Give one file per CUB version, the toolkit's first (scripts/gpu-bench-json.sh makes
# them on the GPU machine); see BENCHMARKS.md, "Regenerating". Needs python3 and
# matplotlib (python3 -m pip install matplotlib).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ "$#" -eq 0 ]; then
  set -- docs/benchmarks/data/*.json
  [ -f "$1" ] || { echo "bench-docs.sh: no docs/benchmarks/data/*.json; give the JSON files" >&2; exit 2; }
fi
python3 scripts/bench-table.py --write BENCHMARKS.md "$@"
python3 scripts/bench-plot.py --out docs/plots "$@"

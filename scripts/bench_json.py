"""Reading gpuprims_bench --json files (bench/bench_json.h); shared by bench-table.py and
bench-plot.py."""
import json
import math
import sys

# The primitives in the order the pages show them, with their titles.
PRIMITIVES = [
    ("reduce", "reduce"),
    ("scan", "scan"),
    ("radix_sort", "radix sort"),
    ("quicksort", "quicksort (CUB: merge sort)"),
    ("select_kth", "select_kth"),
    ("topk", "top-k"),
    ("segmented_select", "segmented select"),
    ("segmented_topk", "segmented top-k"),
    ("life", "Game of Life"),
]
# One row a primitive for the headline table (the rest go in the full table).
HEADLINE = [
    "reduce sum i32",
    "incl scan sum i32",
    "sort keys u32",
    "sort pairs u32/u32",
    "quicksort keys u32",
    "select_kth f32 median",
    "topk f32 k=100 desc +indices",
]


def load(paths):
    """[(source name, run facts, rows)] for each file; the source name is "CUB <cccl>"
    or, without CUB, the backend."""
    runs = []
    for path in paths:
        try:
            with open(path) as f:
                text = f.read()
        except OSError as e:
            sys.exit(f"{path}: {e}")
        try:
            data = json.loads(text)
        except ValueError as e:
            # A tour stopped early leaves its rows unclosed: keep the rows it wrote.
            lines = text.splitlines()
            while lines and not lines[-1].rstrip().rstrip(",").endswith("}"):
                lines.pop()
            try:
                data = json.loads("\n".join(lines).rstrip().rstrip(",") + "\n ]}")
                print(f"{path}: cut short ({e}); using the {len(data.get('rows', []))} rows it holds",
                      file=sys.stderr)
            except ValueError:
                sys.exit(f"{path}: {e}")
        rows = data.get("rows", [])
        cccl = data.get("cccl")
        name = f"CUB {cccl}" if cccl else f"{data.get('backend', '?')} backend"
        runs.append((name, data, rows))
    if not runs:
        sys.exit("no JSON files given (gpuprims_bench --json FILE writes one)")
    return runs


def size_column(row):
    """The size column a row belongs to (the u64 sort row runs at n/2 of its column)."""
    n = row["n"]
    return n * 2 if "(n/2)" in (row.get("variant") or "") else n


def pow2(n):
    """2^K for powers of two, else the number with thousands separators."""
    k = int(round(math.log2(n))) if n > 0 else 0
    return f"2^{k}" if n > 0 and 2**k == n else f"{int(n):,}"


def throughput(row, ms):
    """10^9 items per second (items: elements, or cells x generations)."""
    return row["items"] / (ms * 1e6) if ms and ms > 0 else None

#!/usr/bin/env python3
"""bench-table.py: BENCHMARKS.md's results tables from gpuprims_bench --json files.

    python3 scripts/bench-table.py RUN.json [RUN.json ...]                 # print the tables
    python3 scripts/bench-table.py --write BENCHMARKS.md RUN.json [...]     # replace them in place

Give one file per CUB version (e.g. the tour built against CCCL 3.0.1 and against 3.5.0,
as scripts/gpu-bench-json.sh makes them). gpuprims' time is the first file's; each
ratio (CUB ms / gpuprims ms, > 1: gpuprims is faster) compares CUB with gpuprims as
timed in the same process. --write replaces what lies between the lines
"<!-- bench-table:begin -->" and "<!-- bench-table:end -->". Standard library only.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_json  # noqa: E402

BEGIN, END = "<!-- bench-table:begin -->", "<!-- bench-table:end -->"


def index(runs):
    """{(label, size column): {source: row}} and the labels in order of first appearance."""
    cells, labels = {}, []
    for name, _, rows in runs:
        for r in rows:
            if not r.get("ours", True):
                continue
            key = (r["label"], bench_json.size_column(r))
            cells.setdefault(key, {}).setdefault(name, r)
            if r["label"] not in labels:
                labels.append(r["label"])
    order = [p for p, _ in bench_json.PRIMITIVES]
    prim = {}
    for _, _, rows in runs:
        for r in rows:
            prim.setdefault(r["label"], order.index(r["primitive"]) if r["primitive"] in order else len(order))
    first = {l: i for i, l in enumerate(labels)}
    labels.sort(key=lambda l: (prim[l], first[l]))
    return cells, labels


def fmt_ms(ms):
    if ms is None:
        return "–"
    return f"{ms * 1000:.1f} µs" if ms < 1 else f"{ms:.2f} ms"


def fmt_ratio(ratio):
    """'1.19×', bold where gpuprims is slower."""
    text = f"{ratio:.2f}×"
    return f"**{text}**" if round(ratio, 2) < 1 else text


def cell(by_source, sources, first):
    """'71.7 µs · **1.19×** · 1.03×': ours (first file), then each source's ratio."""
    ours = by_source.get(first)
    if ours is None:
        ours = next(iter(by_source.values()))
    parts = [fmt_ms(ours.get("ms"))]
    for s in sources:
        r = by_source.get(s)
        ratio = r.get("ratio") if r else None
        if ratio is None:
            parts.append("–")
        else:
            parts.append(fmt_ratio(ratio))
    return " · ".join(parts)


def sized_table(runs, cells, labels, wanted):
    """One row a label of `wanted` (in the order of `labels`), one column a size."""
    sources = [name for name, data, _ in runs if data.get("cccl")]
    first = runs[0][0]
    sizes = sorted({size for (label, size) in cells if label in wanted})
    out = ["| row | " + " | ".join(bench_json.pow2(s) for s in sizes) + " |",
           "|---|" + "---|" * len(sizes)]
    for label in labels:
        if label not in wanted:
            continue
        row_cells = []
        for s in sizes:
            by = cells.get((label, s))
            row_cells.append(cell(by, sources, first) if by else "")
        if any(row_cells):
            out.append(f"| {label} | " + " | ".join(row_cells) + " |")
    return out


def fixed_table(runs, prim_rows):
    """Segmented select and Life: cases of their own sizes."""
    sources = [name for name, data, _ in runs if data.get("cccl")]
    first = runs[0][0]
    out = ["| case | n | gpuprims | " + "".join(f"vs {s} | " for s in sources) + "CUB way |",
           "|---|---|---|" + "---|" * len(sources) + "---|"]
    for label, n, by in prim_rows:
        ours = by.get(first) or next(iter(by.values()))
        ratios = []
        for s in sources:
            r = by.get(s)
            ratios.append("–" if not r or r.get("ratio") is None else fmt_ratio(r["ratio"]))
        extra = ""
        if ours["primitive"] == "life":
            g = bench_json.throughput(ours, ours.get("ms"))
            extra = "" if not g else f" ({g:,.0f} Gcell/s)" if g >= 100 else f" ({g:.2f} Gcell/s)"
        out.append(f"| {label} | {int(n):,} | {fmt_ms(ours.get('ms'))}{extra} | " + "".join(r + " | " for r in ratios) +
                   f"{ours.get('cub') or '–'} |")
    return out


def tables(runs):
    cells, labels = index(runs)
    facts = runs[0][1]
    sources = [name for name, data, _ in runs if data.get("cccl")]
    date = (facts.get("date") or "?")[:10]
    lines = [
        f"Device: **{facts.get('device', '?')}** ({facts.get('backend', '?')} backend), gpuprims "
        f"{facts.get('gpuprims', '?')}, {date}; "
        + (f"against {' and '.join(sources)} in the same process on the same data and stream. "
           if sources else "no CUB in these runs. ")
        + "Each cell of the size columns: gpuprims' median time · CUB ms / gpuprims ms for "
        + (" · ".join(sources) if sources else "each CUB")
        + " (> 1: gpuprims is faster; **bold**: slower). Written by `scripts/bench-table.py` from "
        + ", ".join(f"`{os.path.basename(p)}`" for p in ARGS.json) + ".",
        "",
    ]
    sized = {label for (label, size), by in cells.items()
             if next(iter(by.values()))["primitive"] not in ("segmented_select", "segmented_topk", "life")}
    headline = [l for l in bench_json.HEADLINE if l in sized]
    if headline:
        lines += sized_table(runs, cells, headline, set(headline))
        lines.append("")
    fixed = []
    for label in labels:
        for (l, size), by in cells.items():
            if l == label and l not in sized:
                fixed.append((label, size, by))
    if fixed:
        lines += fixed_table(runs, fixed)
        lines.append("")
    rest = sorted(sized - set(headline), key=labels.index)
    if rest:
        lines += ["<details><summary>Every other row of the tour</summary>", ""]
        lines += sized_table(runs, cells, labels, set(rest))
        lines += ["", "</details>", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--write", metavar="FILE", help="replace the tables between the markers in FILE")
    p.add_argument("json", nargs="+", help="gpuprims_bench --json files, one per CUB version")
    ARGS = p.parse_args()
    text = tables(bench_json.load(ARGS.json))
    if not ARGS.write:
        sys.stdout.write(text)
        return
    with open(ARGS.write) as f:
        page = f.read()
    if BEGIN not in page or END not in page:
        sys.exit(f"{ARGS.write}: no {BEGIN} ... {END} lines to write between")
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(ARGS.write, "w") as f:
        f.write(head + BEGIN + "\n" + text + END + tail)
    print(f"bench-table.py: wrote the tables into {ARGS.write}")


if __name__ == "__main__":
    main()

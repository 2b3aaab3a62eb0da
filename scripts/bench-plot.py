#!/usr/bin/env python3
"""bench-plot.py: SVG plots of gpuprims against CUB from gpuprims_bench --json files.

    python3 scripts/bench-plot.py [--out docs/plots] RUN.json [RUN.json ...]

Give one file per CUB version (e.g. the tour built against CCCL 3.0.1 and against 3.5.0,
as scripts/gpu-bench-json.sh makes them). Writes, under --out:

  <primitive>.svg  for reduce, scan, radix_sort, quicksort, select_kth, topk: on the left
                   throughput (10^9 elements a second) against n, gpuprims solid and each
                   CUB dashed or dotted; on the right CUB ms / gpuprims ms against n (above
                   1: gpuprims is faster), each CUB against gpuprims as timed in the same
                   process;
  segmented_select.svg, segmented_topk.svg, life.svg the fixed cases as bars (ms; Life in Gcell/s);
  overview.svg     the ratio of one headline row per primitive at each size.

Needs matplotlib (pip install matplotlib); nothing in the build or CI runs it. The SVGs
carry no date or random ids, so regenerating from the same JSON changes nothing.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_json  # noqa: E402

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("bench-plot.py needs matplotlib: python3 -m pip install matplotlib")

matplotlib.rcParams.update({"svg.hashsalt": "gpuprims", "svg.fonttype": "none", "font.size": 9})
CUB_STYLES = ["--", ":", "-."]
METADATA = {"Date": None, "Creator": "gpuprims scripts/bench-plot.py"}


def series(runs, primitive):
    """{label: {"ours": [(n, row)], source: [(n, row)]}} for one primitive, n ascending."""
    out = {}
    for i, (name, _, rows) in enumerate(runs):
        for r in rows:
            if r["primitive"] != primitive or not r.get("ours", True) or r.get("ms") is None:
                continue
            s = out.setdefault(r["label"], {})
            if i == 0:
                s.setdefault("ours", []).append((r["n"], r))
            if r.get("cub_ms") is not None:
                s.setdefault(name, []).append((r["n"], r))
    for s in out.values():
        for v in s.values():
            v.sort(key=lambda p: p[0])
    return out


def title(runs):
    facts = runs[0][1]
    return f"{facts.get('device', '?')} · gpuprims {facts.get('gpuprims', '?')} · {(facts.get('date') or '?')[:10]}"


def sized_plot(runs, primitive, heading, path):
    data = series(runs, primitive)
    if not data:
        return False
    sources = [name for name, d, _ in runs if d.get("cccl")]
    fig, (ax_t, ax_r) = plt.subplots(1, 2, figsize=(11, 4.4), constrained_layout=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (label, s) in enumerate(data.items()):
        c = colors[i % len(colors)]
        if "ours" in s:
            xs = [n for n, _ in s["ours"]]
            ax_t.plot(xs, [bench_json.throughput(r, r["ms"]) for _, r in s["ours"]], "-o", color=c, ms=3,
                      label=f"{label}")
        for j, src in enumerate(sources):
            if src not in s:
                continue
            xs = [n for n, _ in s[src]]
            style = CUB_STYLES[j % len(CUB_STYLES)]
            ax_t.plot(xs, [bench_json.throughput(r, r["cub_ms"]) for _, r in s[src]], style, color=c, lw=1)
            ax_r.plot(xs, [r["ratio"] for _, r in s[src]], style + "o", color=c, ms=3, lw=1,
                      label=f"{label} vs {src}")
    for ax in (ax_t, ax_r):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("n (elements)")
        ax.grid(True, which="major", alpha=0.3)
    ax_t.set_yscale("log")
    ax_t.set_ylabel("10^9 elements / s (higher is better)")
    ax_t.set_title(f"{heading}: gpuprims (solid)" + "".join(
        f", {s} ({CUB_STYLES[j % len(CUB_STYLES)]})" for j, s in enumerate(sources)))
    ax_t.legend(fontsize=7, loc="best")
    if sources:
        ax_r.axhline(1.0, color="black", lw=0.8)
        ax_r.set_ylabel("CUB ms / gpuprims ms (> 1: gpuprims faster)")
        ax_r.set_title("ratio to CUB")
        ax_r.legend(fontsize=6, loc="best")
    else:
        ax_r.set_axis_off()
        ax_r.text(0.5, 0.5, "no CUB in these runs", ha="center", va="center", transform=ax_r.transAxes)
    fig.suptitle(title(runs), fontsize=8)
    fig.savefig(path, metadata=METADATA)
    plt.close(fig)
    return True


def fixed_plot(runs, primitive, heading, path):
    """Bars: gpuprims and each CUB (ms), or Life's Gcell/s, one group a case."""
    sources = [name for name, d, _ in runs if d.get("cccl")]
    cases = []
    for r in runs[0][2]:
        if r["primitive"] == primitive and r.get("ms") is not None:
            cases.append(r)
    if not cases:
        return False
    life = primitive == "life"
    fig, ax = plt.subplots(figsize=(9, 0.5 + 0.45 * len(cases) * (1 + (0 if life else len(sources)))),
                           constrained_layout=True)
    labels, values, colors = [], [], []
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for r in cases:
        name = r["label"] + ("" if r.get("ours", True) else " (reference, not gpuprims)")
        labels.append(name if life else f"{name}: gpuprims")
        values.append(bench_json.throughput(r, r["ms"]) if life else r["ms"])
        colors.append(palette[0] if r.get("ours", True) else palette[7 % len(palette)])
        if life:
            continue
        for j, src in enumerate(sources):
            match = [x for x in dict((n, d) for n, d, _ in runs)[src]["rows"]
                     if x["label"] == r["label"] and x["n"] == r["n"] and x.get("cub_ms") is not None]
            if match:
                labels.append(f"{r['label']}: {src} ({match[0].get('cub')})")
                values.append(match[0]["cub_ms"])
                colors.append(palette[(j + 1) % len(palette)])
    ys = list(range(len(labels)))[::-1]
    ax.barh(ys, values, color=colors)
    ax.set_yticks(ys, labels, fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("10^9 cells x generations / s (higher is better)" if life else "ms (lower is better)")
    ax.grid(True, axis="x", alpha=0.3)
    for y, v in zip(ys, values):
        ax.text(v, y, f" {v:.3g}", va="center", fontsize=7)
    ax.set_title(f"{heading} · {title(runs)}", fontsize=8)
    fig.savefig(path, metadata=METADATA)
    plt.close(fig)
    return True


def overview_plot(runs, path):
    """Grouped bars: CUB ms / gpuprims ms of each headline row at each size, per CUB."""
    sources = [name for name, d, _ in runs if d.get("cccl")]
    if not sources:
        return False
    by_src = {name: rows for name, _, rows in runs}
    sizes = sorted({bench_json.size_column(r) for r in runs[0][2]
                    if r["label"] in bench_json.HEADLINE and r.get("ratio") is not None})
    if not sizes:
        return False
    fig, axes = plt.subplots(1, len(sizes), figsize=(4 * len(sizes), 4), sharey=True, constrained_layout=True)
    axes = axes if len(sizes) > 1 else [axes]
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    width = 0.8 / len(sources)
    for ax, size in zip(axes, sizes):
        for j, src in enumerate(sources):
            vals = []
            for label in bench_json.HEADLINE:
                m = [r for r in by_src[src] if r["label"] == label and bench_json.size_column(r) == size]
                vals.append(m[0]["ratio"] if m and m[0].get("ratio") is not None else 0)
            xs = [i + (j - (len(sources) - 1) / 2) * width for i in range(len(vals))]
            ax.bar(xs, vals, width, label=f"vs {src}", color=palette[j % len(palette)])
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set_xticks(range(len(bench_json.HEADLINE)), bench_json.HEADLINE, rotation=60, ha="right", fontsize=7)
        ax.set_title(f"n = {bench_json.pow2(size)}")
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].set_ylabel("CUB ms / gpuprims ms (> 1: gpuprims faster)")
    axes[0].legend(fontsize=7)
    fig.suptitle(title(runs), fontsize=8)
    fig.savefig(path, metadata=METADATA)
    plt.close(fig)
    return True


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "plots"),
                   help="folder for the SVGs (default: docs/plots)")
    p.add_argument("json", nargs="+", help="gpuprims_bench --json files, one per CUB version")
    args = p.parse_args()
    runs = bench_json.load(args.json)
    os.makedirs(args.out, exist_ok=True)
    written = []
    for primitive, heading in bench_json.PRIMITIVES:
        path = os.path.join(args.out, f"{primitive}.svg")
        plot = fixed_plot if primitive in ("segmented_select", "segmented_topk", "life") else sized_plot
        if plot(runs, primitive, heading, path):
            written.append(path)
    path = os.path.join(args.out, "overview.svg")
    if overview_plot(runs, path):
        written.append(path)
    for w in written:
        print(f"bench-plot.py: wrote {os.path.relpath(w)}")


if __name__ == "__main__":
    main()

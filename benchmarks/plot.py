"""Bar chart of benchmarks/results/latest.json (needs matplotlib: run it with
the peers venv's interpreter, as run.py does).

    .venv-peers/bin/python benchmarks/plot.py results/latest.json results/latest.png
"""
from __future__ import annotations

import json
import math
import sys

COLORS = {"numpy": "#4d4d4d", "tapeflow": "#d62728", "torch": "#ee7733", "jax": "#0077bb", "tensorflow": "#33bb33"}
SCALE = {"us": 1e6, "ms": 1e3, "s": 1.0}
SYMBOL = {"us": "µs", "ms": "ms", "s": "s"}


def main(src, dst):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(src) as f:
        res = json.load(f)
    panels = []
    for wname, wl in res.get("workloads", {}).items():
        for case in wl.get("cases", []):
            rows = [r for r in case["rows"] if r.get("status") == "ok" and r.get("timing")]
            if rows:
                panels.append((f"{wname} / {case['name']}", case, rows))
    if not panels:
        print("nothing to plot")
        return 1
    ncol = 2 if len(panels) > 1 else 1
    nrow = math.ceil(len(panels) / ncol)
    heights = [max(len(p[2]) for p in panels[i * ncol:(i + 1) * ncol]) for i in range(nrow)]
    fig, axes = plt.subplots(nrow, ncol, figsize=(8 * ncol, sum(0.32 * h + 1.0 for h in heights)),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax, (title, case, rows) in zip(axes.flat, panels):
        disp = case.get("display", "us")
        k = SCALE.get(disp, 1.0)
        rows = sorted(rows, key=lambda r: r["timing"]["median"])
        y = list(range(len(rows)))
        med = [r["timing"]["median"] * k for r in rows]
        lo = [max(m - r["timing"].get("q1", m / k) * k, 0) for m, r in zip(med, rows)]
        hi = [max(r["timing"].get("q3", m / k) * k - m, 0) for m, r in zip(med, rows)]
        ax.barh(y, med, xerr=[lo, hi], color=[COLORS.get(r["framework"], "#999999") for r in rows],
                error_kw={"elinewidth": 0.8, "capsize": 2})
        ax.set_yticks(y)
        ax.set_yticklabels([r["label"] for r in rows], fontsize=7)
        ax.invert_yaxis()
        if max(med) / max(min(med), 1e-12) > 30:
            ax.set_xscale("log")
        ax.set_xlabel(f"{SYMBOL.get(disp, disp)} per {case.get('unit', 'call')} (median; whiskers: interquartile range)", fontsize=8)
        ax.set_title(title + (": " + case["title"] if case.get("title") else ""), fontsize=9)
        for yi, m in zip(y, med):
            ax.text(m, yi, f" {m:.3g}", va="center", fontsize=6)
        ax.tick_params(axis="x", labelsize=7)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in COLORS.values()]
    fig.legend(handles, list(COLORS), loc="upper center", ncol=len(COLORS), fontsize=8,
               bbox_to_anchor=(0.5, 0.985 - 0.25 / fig.get_figheight()))
    m = res.get("machine", {})
    fig.suptitle(f"tapeflow benchmarks - {m.get('cpu_model', '?')}, {res.get('settings', {}).get('threads', '?')} "
                 f"thread(s), {res.get('generated', '')}", fontsize=10, y=0.998)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.9 / fig.get_figheight()))
    fig.savefig(dst, dpi=110)
    print(f"wrote {dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

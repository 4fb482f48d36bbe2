"""Figures of a bench-v2 document (PNG, matplotlib):

- the ladder: the worklog's Figure 1 for our data, a bar per phase at each headline shape with the gain
  over the previous phase and the SM clock it ran at, the peers and the dense peak as lines;
- the sweep: TFLOP/s against size (square shapes) for every phase and peer;
- the worklog side by side: every phase as % of the vendor library on both ladders, the worklog's B300
  (tcgen05, % of cuBLASLt) beside this run's H200 (wgmma, % of the better of cuBLAS/cuBLASLt), so a
  reader sees which steps buy the same on both chips.

Every caption carries the GPU, the data kind and the timing protocol.
"""

from __future__ import annotations

import os
import re

from cute_gemm.report import worklog
from cute_gemm.report.console import caption
from cute_gemm.measure.suite import HEADLINE

PEER_STYLES = {"cublas": ("#dd8452", "--"), "cublaslt": ("#55a868", "-."), "triton": ("#8172b3", ":"),
               "quack": ("#937860", (0, (5, 2, 1, 2))), "quack-tuned": ("#da8bc3", (0, (1, 1)))}
PHASE_COLOR, WORKLOG_COLOR, GREY = "#4c72b0", "#c44e52", "#bbbbbb"


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def phase_order(phase: str):
    """Ladder order of phase ids: 0 < 1 < 2a < 2b < 3 < ... < 10."""
    m = re.match(r"(\d+)(.*)", phase)
    return (int(m.group(1)), m.group(2)) if m else (10**6, phase)


def _footer(doc) -> str:
    g, v = doc.get("gpu") or {}, doc.get("versions") or {}
    return (f"{g.get('name', '?')} · fp16 in, fp32 out, B N-major · {caption(doc)}\n"
            f"torch {v.get('torch')} · cutlass-dsl {v.get('nvidia_cutlass_dsl')} · {doc.get('date', '')[:10]}")


def _rows(doc, shape, kind):
    return [r for r in doc["results"] if r["shape"] == shape and r["kind"] == kind]


def _headline_shapes(doc) -> list[str]:
    present = list(dict.fromkeys(r["shape"] for r in doc["results"]))
    return [str(p) for p in HEADLINE if str(p) in present] or present[:2]


def ladder_figure(doc, path: str) -> str:
    """One panel per headline shape: a bar per phase (TFLOP/s, gain, SM clock), peers and peak as lines."""
    plt = _pyplot()
    shapes = _headline_shapes(doc)
    fig, axes = plt.subplots(1, len(shapes), figsize=(6.8 * len(shapes), 5.4), squeeze=False)
    peak = doc.get("peak_tflops")
    for ax, shape in zip(axes[0], shapes):
        rows = _rows(doc, shape, "phase")
        vals = [r["timing"]["tflops"] if r.get("timing") else 0.0 for r in rows]
        bars = ax.bar([r["name"] for r in rows], vals, color=[PHASE_COLOR if v else GREY for v in vals], zorder=3)
        prev = None
        for bar, r, v in zip(bars, rows, vals):
            if v:
                txt = f"{v:.0f}" + (f"\n{(v / prev - 1) * 100:+.0f}%" if prev else "")
                prev = v
                mhz = ((r.get("power") or {}).get("sm_clock_mhz") or {}).get("median")
                if mhz:
                    ax.text(bar.get_x() + bar.get_width() / 2, v * 0.04, f"{mhz:.0f}\nMHz", ha="center",
                            va="bottom", fontsize=6, color="white", zorder=4)
            else:
                txt = r["status"]
            ax.text(bar.get_x() + bar.get_width() / 2, max(v, 5) + 8, txt, ha="center", va="bottom", fontsize=8,
                    zorder=4, bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.85))
        tops = list(vals)
        for r in _rows(doc, shape, "peer"):
            if r.get("timing"):
                color, ls = PEER_STYLES.get(r["name"], ("#555555", "--"))
                y = r["timing"]["tflops"]
                tops.append(y)
                ax.axhline(y, color=color, ls=ls, lw=1.3, zorder=2, label=f"{r['label']} {y:.0f}")
        if peak:
            ax.axhline(peak, color="#c44e52", ls=":", lw=1, zorder=2, label=f"dense fp16 peak {peak:.0f}")
        ax.set_ylim(0, max([peak or 0, *tops, 1]) * 1.15)
        ax.set_title(f"{shape} (MxNxK)")
        ax.set_xlabel("phase")
        ax.set_ylabel("TFLOP/s (2MNK / time)")
        ax.grid(axis="y", alpha=0.3, zorder=0)
        ax.legend(loc="upper left", fontsize=7)
    fig.suptitle("cute-gemm ladder: TFLOP/s per phase, gain over the previous phase, SM clock", fontsize=12)
    fig.text(0.5, 0.005, _footer(doc), ha="center", fontsize=6.5, color="#555555")
    fig.tight_layout(rect=(0, 0.05, 1, 0.96))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def sweep_figure(doc, path: str) -> str | None:
    """TFLOP/s against M=N=K for every phase and peer; None when fewer than 3 square shapes were timed."""
    square = sorted({r["m"] for r in doc["results"] if r["m"] == r["n"] == r["k"]})
    if len(square) < 3:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9.5, 5.6))
    for key in dict.fromkeys(r["key"] for r in doc["results"]):
        rows = [r for r in doc["results"] if r["key"] == key]
        pts = sorted((r["m"], r["timing"]["tflops"]) for r in rows if r["m"] == r["n"] == r["k"] and r.get("timing"))
        if not pts:
            continue
        if rows[0]["kind"] == "peer":
            color, ls = PEER_STYLES.get(rows[0]["name"], ("#555555", "--"))
            ax.plot(*zip(*pts), color=color, ls=ls, lw=1.6, label=rows[0]["label"])
        else:
            ax.plot(*zip(*pts), marker="o", ms=3, lw=1.2, label=rows[0]["label"])
    if doc.get("peak_tflops"):
        ax.axhline(doc["peak_tflops"], color="#c44e52", ls=":", lw=1, label="dense fp16 peak")
    ax.set_xscale("log", base=2)
    ax.set_xticks(square, [str(s) for s in square])
    ax.set_xlabel("M = N = K")
    ax.set_ylabel("TFLOP/s")
    ax.set_title("TFLOP/s against problem size")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.text(0.5, 0.005, _footer(doc), ha="center", fontsize=6, color="#555555")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def worklog_figure(doc, path: str) -> str:
    """Per headline shape: each phase's % of the vendor library, worklog B300 beside this run."""
    plt = _pyplot()
    shapes = list(worklog.CUBLASLT_TFLOPS)
    fig, axes = plt.subplots(1, len(shapes), figsize=(6.8 * len(shapes), 5.2), squeeze=False)
    gpu = (doc.get("gpu") or {}).get("name", "this GPU")
    for ax, shape in zip(axes[0], shapes):
        ours = {r["name"]: r.get("pct_vendor") for r in _rows(doc, shape, "phase")}
        theirs = worklog.pct_of_vendor(shape)
        phases = sorted(set(ours) | set(theirs), key=phase_order)
        x = range(len(phases))
        w = 0.4
        b300 = [theirs.get(ph, (0, 0, 0)) for ph in phases]
        err = [[mid - lo for mid, lo, _ in b300], [hi - mid for mid, _, hi in b300]]
        ax.bar([i - w / 2 for i in x], [mid for mid, _, _ in b300], w, yerr=err, color=WORKLOG_COLOR, zorder=3,
               label=f"worklog {worklog.GPU}, % of {worklog.VENDOR} ({worklog.CUBLASLT_TFLOPS[shape]} TFLOP/s)")
        h200 = [ours.get(ph) or 0 for ph in phases]
        ax.bar([i + w / 2 for i in x], h200, w, color=PHASE_COLOR, zorder=3,
               label=f"{gpu} (this run), % of the better of cuBLAS/cuBLASLt")
        for i, ph in enumerate(phases):
            for dx, v, known in ((-w / 2, b300[i][0], ph in theirs), (w / 2, h200[i], bool(ours.get(ph)))):
                ax.text(i + dx, max(v, 1) + 1.5, f"{v:.0f}" if known else "-", ha="center", va="bottom", fontsize=7)
        ax.axhline(100, color="#555555", ls="--", lw=1, zorder=2)
        ax.set_xticks(list(x), phases)
        ax.set_ylim(0, max([110, *h200, *(hi for _, _, hi in b300)]) * 1.12)
        ax.set_title(f"{shape}" + ("" if ours else " (not measured in this run)"))
        ax.set_xlabel("phase")
        ax.set_ylabel("% of the vendor library")
        ax.grid(axis="y", alpha=0.3, zorder=0)
        ax.legend(loc="upper left", fontsize=7)
    fig.suptitle("Which steps buy the same on both chips: each phase as % of the vendor library", fontsize=12)
    fig.text(0.5, 0.005, _footer(doc) + " · worklog numbers: its section 1 / Fig. 1", ha="center", fontsize=6.5,
             color="#555555")
    fig.tight_layout(rect=(0, 0.05, 1, 0.96))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_all(doc, out_prefix: str) -> list[str]:
    """Write <prefix>_ladder.png, <prefix>_worklog.png and (with a sweep) <prefix>_sweep.png."""
    os.makedirs(os.path.dirname(out_prefix) or ".", exist_ok=True)
    out = [ladder_figure(doc, out_prefix + "_ladder.png"), worklog_figure(doc, out_prefix + "_worklog.png")]
    sweep = sweep_figure(doc, out_prefix + "_sweep.png")
    if sweep:
        out.append(sweep)
    return out

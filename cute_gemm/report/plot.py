"""Figures of a bench-v2 document (PNG, matplotlib):

- the ladder: the worklog's Figure 1 for our data, a bar per phase at each headline shape with its gain
  over the phase before it in the ladder and the SM clock it ran at, the peers as lines;
- the sweep: TFLOP/s against size (square shapes) for every phase and peer;
- the worklog side by side: every phase as % of the vendor library on both ladders, the worklog's B300
  (tcgen05, % of cuBLASLt) beside this run's H200 (wgmma, % of the better of cuBLAS/cuBLASLt), so a
  reader sees which steps buy the same on both chips (drawn only where a phase is on both sides);
- the roofline: every kernel's TFLOP/s at every shape against the shape's arithmetic intensity (2MNK over
  the bytes of A, B and C once each), under the roof min(dense peak, the run's device-copy bandwidth x
  intensity): how far each kernel is from what the memory or the tensor cores allow (drawn when the
  document has the run's copy bandwidth and the GPU's peak).

Phases and peers have separate style families: phases are solid lines with round markers in one
sequential colour map, in ladder order (``best`` black with a star, config variants dotted in their
phase's colour); peers are dashed, each in a colour outside that map with a marker of its own. The
dense peak is named in the titles, not drawn: a line at 989 would squeeze the band where the kernels
differ. Every caption carries the GPU, the data kind and the timing protocol.
"""

from __future__ import annotations

import os
import re

from cute_gemm.measure.suite import HEADLINE
from cute_gemm.report import worklog
from cute_gemm.measure.results import operands_of
from phases.operands import WORKLOG
from cute_gemm.runtime.problem import Problem
from cute_gemm.report.console import caption
from phases.base import PHASE_IDS

# peers: dashed, colours outside the phases' map (viridis), one marker each
PEER_STYLES = {"cublas": ("#d62728", "s"), "cublaslt": ("#ff7f0e", "^"), "triton": ("#e377c2", "v"),
               "quack": ("#8c564b", "P"), "quack-tuned": ("#7f7f7f", "X")}
OTHER_PEER = ("#17becf", "h")
PHASE_MAP = "viridis"
BEST_COLOR, WORKLOG_COLOR, THIS_RUN_COLOR, GREY = "#111111", "#c44e52", "#4c72b0", "#bbbbbb"


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def phase_order(phase: str):
    """Ladder order of phase ids: 0 < 1 < 2a < 2b < 3 < ... < 10; 'best' after every phase."""
    m = re.match(r"(\d+)(.*)", phase)
    return (int(m.group(1)), m.group(2)) if m else (10**6, phase)


def phase_color(phase: str) -> str:
    """A phase's colour: its place in the ladder on the sequential map, so colour reads as progress."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    base = phase.split()[0]
    pos = PHASE_IDS.index(base) if base in PHASE_IDS else len(PHASE_IDS) - 1
    return to_hex(colormaps[PHASE_MAP](0.9 * pos / (len(PHASE_IDS) - 1)))


def style(row: dict) -> dict:
    """Line and marker style of a result row's series (a phase, a config variant, best, or a peer)."""
    if row["kind"] == "peer":
        color, marker = PEER_STYLES.get(row["name"], OTHER_PEER)
        return {"color": color, "marker": marker, "ls": "--", "lw": 1.5, "ms": 4}
    if row["name"] == "best":
        return {"color": BEST_COLOR, "marker": "*", "ls": "-", "lw": 2.0, "ms": 8}
    if " " in row["name"]:  # a config variant: "7 bn=192"
        return {"color": phase_color(row["name"]), "marker": "D", "ls": ":", "lw": 1.4, "ms": 4}
    return {"color": phase_color(row["name"]), "marker": "o", "ls": "-", "lw": 1.3, "ms": 4}


def previous_phase(name: str) -> str | None:
    """The phase before ``name`` in the ladder ('2b' -> '2a', '3' -> '2b'); None for best, a config
    variant or the first phase: the only bar a step's gain is measured against."""
    if name not in PHASE_IDS or PHASE_IDS.index(name) == 0:
        return None
    return PHASE_IDS[PHASE_IDS.index(name) - 1]


def best_picks(rows: list[dict]) -> list[str]:
    """What the ``best`` rows picked, in order of first appearance ('best (7 bn=192)' -> '7 bn=192')."""
    picks = [r["label"][len("best ("):-1] for r in rows if r["name"] == "best" and r["label"].startswith("best (")]
    return list(dict.fromkeys(picks))


def _footer(doc) -> str:
    g, v = doc.get("gpu") or {}, doc.get("versions") or {}
    return (f"{g.get('name', '?')} · {caption(doc)}\n"
            f"torch {v.get('torch')} · cutlass-dsl {v.get('nvidia_cutlass_dsl')} · {doc.get('date', '')[:10]}")


def _save(plt, fig, path: str, footer: str, rect) -> str:
    """The caption under the figure, the layout inside ``rect``, the PNG written, the figure closed."""
    fig.text(0.5, 0.005, footer, ha="center", fontsize=6.5, color="#555555")
    fig.tight_layout(rect=rect)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _rows(doc, shape, kind):
    """The rows of ``kind`` at ``shape``; where the run computed the shape with several operands, the first's."""
    at = [r for r in doc["results"] if r["shape"] == shape]
    ops = (at[0].get("operands") or {}).get("label") if at else None
    return [r for r in at if r["kind"] == kind and (r.get("operands") or {}).get("label") == ops]


def _headline_shapes(doc) -> list[str]:
    present = list(dict.fromkeys(r["shape"] for r in doc["results"]))
    return [str(p) for p in HEADLINE if str(p) in present] or present[:2]


def _peak_note(doc) -> str:
    peak = doc.get("peak_tflops")
    return f" · dense fp16 peak {peak:.0f} TFLOP/s (above the axis)" if peak else ""


def ladder_figure(doc, path: str) -> str:
    """One panel per headline shape: a bar per phase (TFLOP/s, the gain over the phase before it in the
    ladder, the SM clock; best names its pick), the peers as lines beside it."""
    plt = _pyplot()
    shapes = _headline_shapes(doc)
    fig, axes = plt.subplots(1, len(shapes), figsize=(6.8 * len(shapes), 6.0), squeeze=False)
    for ax, shape in zip(axes[0], shapes):
        rows = _rows(doc, shape, "phase")
        vals = [r["timing"]["tflops"] if r.get("timing") else 0.0 for r in rows]
        by_name = dict(zip((r["name"] for r in rows), vals))
        peers = [r for r in _rows(doc, shape, "peer") if r.get("timing")]
        top = max([*vals, *(r["timing"]["tflops"] for r in peers), 1]) * 1.16
        colors = [style(r)["color"] if v else GREY for r, v in zip(rows, vals)]
        bars = ax.bar([r["name"] for r in rows], vals, color=colors, zorder=3)
        for bar, r, v in zip(bars, rows, vals):
            x = bar.get_x() + bar.get_width() / 2
            if not v:
                ax.text(x, top * 0.02, r["status"], ha="center", va="bottom", fontsize=7, rotation=90, zorder=4)
                continue
            prev = by_name.get(previous_phase(r["name"]))
            extra = (f"{(v / prev - 1) * 100:+.0f}%" if prev else
                     r["label"][len("best "):] if r["name"] == "best" else "")
            ax.text(x, v - top * 0.012, f"{v:.0f}" + (f"\n{extra}" if extra else ""), ha="center", va="top",
                    fontsize=7.5, color="white", fontweight="bold", zorder=4)
            mhz = ((r.get("power") or {}).get("sm_clock_mhz") or {}).get("median")
            if mhz:
                ax.text(x, top * 0.012, f"{mhz:.0f}\nMHz", ha="center", va="bottom", fontsize=6, color="white",
                        zorder=4)
        for r in peers:
            st = style(r)
            y = r["timing"]["tflops"]
            ax.axhline(y, color=st["color"], ls=st["ls"], lw=1.3, zorder=2, label=f"{r['label']} {y:.0f}")
        ax.set_ylim(0, top)
        ax.set_title(f"{shape} (MxNxK)" + _peak_note(doc), fontsize=10)
        ax.set_xlabel("phase (bar: TFLOP/s, % over the phase before it; inside the foot: SM clock)")
        ax.set_ylabel("TFLOP/s (2MNK / time)")
        ax.grid(axis="y", alpha=0.3, zorder=0)
        if peers:
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=min(len(peers), 4), fontsize=7,
                      frameon=False)
    fig.suptitle("cute-gemm ladder: TFLOP/s per phase, gain over the previous phase, SM clock", fontsize=12)
    return _save(plt, fig, path, _footer(doc), rect=(0, 0.04, 1, 0.96))


def sweep_figure(doc, path: str) -> str | None:
    """TFLOP/s against M=N=K for every phase and peer; None when fewer than 3 square shapes were timed."""
    square = sorted({r["m"] for r in doc["results"] if r["m"] == r["n"] == r["k"]})
    if len(square) < 3:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(11, 5.8))
    tops = []
    for key in dict.fromkeys(r["key"] for r in doc["results"]):
        rows = [r for r in doc["results"] if r["key"] == key and r["m"] == r["n"] == r["k"] and r.get("timing")]
        if not rows:
            continue
        rows.sort(key=lambda r: r["m"])
        pts = [(r["m"], r["timing"]["tflops"]) for r in rows]
        tops += [y for _, y in pts]
        label = rows[0]["label"]
        if rows[0]["name"] == "best":
            label = f"best (per shape: {', '.join(best_picks(rows))})"
        st = style(rows[0])
        ax.plot(*zip(*pts), color=st["color"], marker=st["marker"], ls=st["ls"], lw=st["lw"], ms=st["ms"],
                label=label)
    ax.set_xscale("log", base=2)
    ax.set_xticks(square, [str(s) for s in square])
    ax.set_ylim(0, max(tops, default=1) * 1.06)
    ax.set_xlabel("M = N = K")
    ax.set_ylabel("TFLOP/s")
    ax.set_title("TFLOP/s against problem size" + _peak_note(doc))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    return _save(plt, fig, path, _footer(doc), rect=(0, 0.06, 1, 1))


def worklog_figure(doc, path: str) -> str | None:
    """Per headline shape where a phase has a number on both sides: each phase's % of the vendor library,
    the worklog's B300 beside this run. None when no phase of this run is in the worklog at all, or when
    the run computed other operands than the worklog's (nn fp16 -> fp32: the only problem it measured)."""
    if operands_of(doc) != WORKLOG:
        return None
    shapes = []
    for shape in worklog.CUBLASLT_TFLOPS:
        ours = {r["name"]: r.get("pct_vendor") for r in _rows(doc, shape, "phase") if r.get("pct_vendor")}
        if set(ours) & set(worklog.pct_of_vendor(shape)):
            shapes.append((shape, ours))
    if not shapes:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(shapes), figsize=(6.8 * len(shapes), 5.2), squeeze=False)
    gpu = (doc.get("gpu") or {}).get("name", "this GPU")
    for ax, (shape, ours) in zip(axes[0], shapes):
        theirs = worklog.pct_of_vendor(shape)
        phases = sorted(set(ours) | set(theirs), key=phase_order)
        x = range(len(phases))
        w = 0.4
        b300 = [theirs.get(ph, (0, 0, 0)) for ph in phases]
        err = [[mid - lo for mid, lo, _ in b300], [hi - mid for mid, _, hi in b300]]
        ax.bar([i - w / 2 for i in x], [mid for mid, _, _ in b300], w, yerr=err, color=WORKLOG_COLOR, zorder=3,
               label=f"worklog {worklog.GPU}, % of {worklog.VENDOR} ({worklog.CUBLASLT_TFLOPS[shape]} TFLOP/s)")
        h200 = [ours.get(ph) or 0 for ph in phases]
        ax.bar([i + w / 2 for i in x], h200, w, color=THIS_RUN_COLOR, zorder=3,
               label=f"{gpu} (this run), % of the better of cuBLAS/cuBLASLt")
        for i, ph in enumerate(phases):
            for dx, v, known in ((-w / 2, b300[i][0], ph in theirs), (w / 2, h200[i], bool(ours.get(ph)))):
                ax.text(i + dx, max(v, 1) + 1.5, f"{v:.0f}" if known else "-", ha="center", va="bottom", fontsize=7)
        ax.axhline(100, color="#555555", ls="--", lw=1, zorder=2)
        ax.set_xticks(list(x), phases)
        ax.set_ylim(0, max([110, *h200, *(hi for _, _, hi in b300)]) * 1.12)
        ax.set_title(f"{shape}")
        ax.set_xlabel("phase")
        ax.set_ylabel("% of the vendor library")
        ax.grid(axis="y", alpha=0.3, zorder=0)
        ax.legend(loc="upper left", fontsize=7)
    fig.suptitle("Which steps buy the same on both chips: each phase as % of the vendor library", fontsize=12)
    return _save(plt, fig, path, _footer(doc) + " · worklog numbers: its section 1 / Fig. 1",
                 rect=(0, 0.05, 1, 0.96))


def roof(intensity: float, peak_tflops: float, copy_tb_s: float) -> float:
    """The roofline at an arithmetic intensity (FLOP/byte): min(compute roof, bandwidth x intensity), TFLOP/s."""
    return min(peak_tflops, copy_tb_s * intensity)


def roofline_points(doc) -> dict:
    """key -> (the first row of that kernel, [(intensity, TFLOP/s, shape, % of the roof)]) for every timed
    row; the intensity is 2MNK / (A + B + C bytes) with the row's operands (the document's where it has none)."""
    peak, bw = doc["peak_tflops"], doc["copy_bandwidth"]["tb_s"]
    out = {}
    for r in doc["results"]:
        if not r.get("timing"):
            continue
        p = Problem(r["m"], r["n"], r["k"])
        ai = p.flops / p.bytes(operands_of(doc, r))
        tf = r["timing"]["tflops"]
        out.setdefault(r["key"], (r, []))[1].append((ai, tf, r["shape"], 100 * tf / roof(ai, peak, bw)))
    return out


def _ops_text(doc) -> str:
    ops = operands_of(doc)
    return ops.label() if ops else "operands per shape"


def roofline_figure(doc, path: str) -> str | None:
    """Every kernel's TFLOP/s at every shape against the shape's arithmetic intensity, under the roof
    min(peak, copy bandwidth x intensity) of this run; None without a copy bandwidth, a peak or a timing."""
    if not doc.get("peak_tflops") or not (doc.get("copy_bandwidth") or {}).get("tb_s"):
        return None
    points = roofline_points(doc)
    if not points:
        return None
    plt = _pyplot()
    peak, bw = doc["peak_tflops"], doc["copy_bandwidth"]["tb_s"]
    fig, ax = plt.subplots(figsize=(11, 6.2))
    ais = [ai for _, pts in points.values() for ai, _, _, _ in pts]
    lo, hi = min(ais + [peak / bw]) / 2, max(ais + [peak / bw]) * 2
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    ax.plot(xs, [roof(x, peak, bw) for x in xs], color="#333333", lw=2.0, zorder=2,
            label=f"roof: min({peak:.0f} TFLOP/s, {bw:.2f} TB/s device copy x intensity)")
    ax.axvline(peak / bw, color="#999999", ls=":", lw=1, zorder=1)
    ax.text(peak / bw, peak * 1.05, f"ridge {peak / bw:.0f} FLOP/B", ha="center", va="bottom", fontsize=7,
            color="#555555")
    for key, (row, pts) in points.items():
        st = style(row)
        pts.sort()
        label = row["label"]
        if row["name"] == "best":
            picked = dict.fromkeys(p.split()[0] for p in best_picks([r for r in doc["results"] if r["key"] == key]))
            label = f"best (phases {', '.join(picked)} per shape)"
        worst = min(pts, key=lambda t: t[3])
        ax.plot([ai for ai, *_ in pts], [tf for _, tf, *_ in pts], color=st["color"], marker=st["marker"], ls="none",
                ms=st["ms"] + 2, zorder=3, label=f"{label} (lowest {worst[3]:.0f}% of roof, {worst[2]})")
    shapes = {}
    for _, pts in points.values():
        for ai, _, shape, _ in pts:
            shapes[shape] = ai
    if len(shapes) <= 12:  # name the shapes under the axis where they do not pile up
        for shape, ai in shapes.items():
            ax.annotate(shape, (ai, 0), xycoords=("data", "axes fraction"), xytext=(0, 4), textcoords="offset points",
                        rotation=90, fontsize=6, color="#555555", ha="center", va="bottom")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    tops = [tf for _, pts in points.values() for _, tf, _, _ in pts]
    ax.set_ylim(min(tops + [roof(lo, peak, bw)]) / 2, peak * 1.5)
    ax.set_xlabel("arithmetic intensity: 2MNK / (A + B + C bytes), FLOP/byte")
    ax.set_ylabel("TFLOP/s")
    l2 = ("" if doc["protocol"].get("cold_l2")
          else "\nL2-resident timing: a point above the copy roof read its operands from L2")
    ax.set_title(f"Roofline: each kernel at each shape ({_ops_text(doc)}){l2}", fontsize=10)
    ax.grid(alpha=0.3, which="both")
    # inside the axes, where nothing is drawn (high intensity, low throughput): an outside legend is cut off
    ax.legend(fontsize=7, loc="lower right", frameon=True, framealpha=0.92)
    return _save(plt, fig, path, _footer(doc), rect=(0, 0.06, 1, 1))


def plot_all(doc, out_prefix: str) -> list[str]:
    """Write <prefix>_ladder.png, and where the document has what they need, <prefix>_worklog.png (a phase
    on both sides), <prefix>_sweep.png (3 square shapes or more) and <prefix>_roofline.png (the run's copy
    bandwidth and the GPU's peak); returns the paths written."""
    os.makedirs(os.path.dirname(out_prefix) or ".", exist_ok=True)
    out = [ladder_figure(doc, out_prefix + "_ladder.png"), worklog_figure(doc, out_prefix + "_worklog.png"),
           sweep_figure(doc, out_prefix + "_sweep.png"), roofline_figure(doc, out_prefix + "_roofline.png")]
    return [p for p in out if p]

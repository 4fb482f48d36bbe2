"""The worklog's Figure 1 for our data, and TFLOP/s against size for a sweep (PNG, matplotlib)."""

from __future__ import annotations

import os

from cute_gemm.problem import HEADLINE


def _ladder_rows(doc, shape):
    return [r for r in doc["results"] if r["shape"] == shape]


def _title(doc):
    g = doc.get("gpu") or {}
    v = doc.get("versions") or {}
    l2 = "cold L2" if doc.get("protocol", {}).get("cold_l2") else "L2-resident"
    return (f"{g.get('name', '?')} · fp16 in, fp32 out, B N-major · {l2}, median of 10 · "
            f"torch {v.get('torch')} · cutlass-dsl {v.get('nvidia_cutlass_dsl')} · {doc.get('date', '')[:10]}")


def ladder_figure(doc, path: str) -> str:
    """One panel per headline shape: a bar per phase, reference lines, gain per step over the bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shapes = [str(p) for p in HEADLINE if str(p) in doc["libraries"]] or list(doc["libraries"])[:2]
    fig, axes = plt.subplots(1, len(shapes), figsize=(6.5 * len(shapes), 5.2), squeeze=False)
    peak = doc.get("peak_tflops")
    for ax, shape in zip(axes[0], shapes):
        rows = _ladder_rows(doc, shape)
        libs = doc["libraries"][shape]
        labels = [r["key"].split(":")[1] for r in rows]
        vals = [r["timing"]["tflops"] if r.get("timing") else 0.0 for r in rows]
        colors = ["#4c72b0" if r.get("timing") else "#bbbbbb" for r in rows]
        bars = ax.bar(labels, vals, color=colors, zorder=3)
        prev = None
        for bar, r, v in zip(bars, rows, vals):
            if r.get("timing"):
                txt = f"{v:.0f}"
                if prev:
                    txt += f"\n{(v / prev - 1) * 100:+.0f}%"
                prev = v
            else:
                txt = r["status"]
            ax.text(bar.get_x() + bar.get_width() / 2, max(v, 5) + 8, txt, ha="center", va="bottom", fontsize=8,
                    zorder=4, bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.85))
        refs = [("cuBLAS", libs["cublas"]["tflops"], "#dd8452", "--"),
                ("cuBLASLt", libs["cublaslt"]["tflops"], "#55a868", "-."),]
        if peak:
            refs.append(("dense fp16 peak", peak, "#c44e52", ":"))
        for name, y, col, ls in refs:
            ax.axhline(y, color=col, ls=ls, lw=1.3, zorder=2, label=f"{name} {y:.0f}")
        ax.set_ylim(0, (peak or max(vals + [libs["cublas"]["tflops"]])) * 1.12)
        ax.set_title(f"{shape} (MxNxK)")
        ax.set_xlabel("phase")
        ax.set_ylabel("TFLOP/s (2MNK / time)")
        ax.grid(axis="y", alpha=0.3, zorder=0)
        ax.legend(loc="upper left", fontsize=8)
    fig.suptitle("cute-gemm ladder: TFLOP/s per phase, gain over the previous phase", fontsize=12)
    fig.text(0.5, 0.005, _title(doc), ha="center", fontsize=7, color="#555555")
    fig.tight_layout(rect=(0, 0.03, 1, 0.96))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def sweep_figure(doc, path: str) -> str | None:
    """TFLOP/s vs problem size (square shapes) for every phase and both libraries; None without a sweep."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    square = sorted({r["m"] for r in doc["results"] if r["m"] == r["n"] == r["k"]})
    if len(square) < 3:
        return None
    fig, ax = plt.subplots(figsize=(8, 5))
    keys = list(dict.fromkeys(r["key"] for r in doc["results"]))
    for key in keys:
        pts = sorted((r["m"], r["timing"]["tflops"]) for r in doc["results"]
                     if r["key"] == key and r["m"] == r["n"] == r["k"] and r.get("timing"))
        if pts:
            ax.plot(*zip(*pts), marker="o", ms=3, lw=1.2, label=f"phase {key.split(':')[1]}")
    for lib, style in (("cublas", "k--"), ("cublaslt", "k:")):
        pts = sorted((int(s.split("x")[0]), v[lib]["tflops"]) for s, v in doc["libraries"].items()
                     if len(set(s.split("x"))) == 1)
        if pts:
            ax.plot(*zip(*pts), style, lw=1.5, label="cuBLAS" if lib == "cublas" else "cuBLASLt")
    if doc.get("peak_tflops"):
        ax.axhline(doc["peak_tflops"], color="#c44e52", ls=":", lw=1, label="dense fp16 peak")
    ax.set_xscale("log", base=2)
    ax.set_xticks(square, [str(s) for s in square])
    ax.set_xlabel("M = N = K")
    ax.set_ylabel("TFLOP/s")
    ax.set_title("TFLOP/s against problem size")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.text(0.5, 0.005, _title(doc), ha="center", fontsize=6.5, color="#555555")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_all(doc, out_prefix: str) -> list[str]:
    """Write <prefix>_ladder.png and (with a sweep) <prefix>_sweep.png; return the paths written."""
    os.makedirs(os.path.dirname(out_prefix) or ".", exist_ok=True)
    out = [ladder_figure(doc, out_prefix + "_ladder.png")]
    sweep = sweep_figure(doc, out_prefix + "_sweep.png")
    if sweep:
        out.append(sweep)
    return out

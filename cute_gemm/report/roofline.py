"""The roofline of bench documents (PNG, matplotlib): every timed phase, ``best`` and peer as a point at
its arithmetic intensity, under the GPU's two roofs.

Arithmetic intensity here is 2MNK over the least traffic a call needs (A and B read once, C written
once: fp16 A and B, fp32 C unless the row records other operand types). The roofs are the dense fp16
tensor peak (the document's ``peak_tflops``) and the HBM bandwidth of the GPU's datasheet times that
intensity. The bench keeps its inputs L2-resident (the worklog's protocol) unless it ran with
``--cold-l2``, so a point may sit above the HBM roof: the roof says what a kernel fed from HBM alone
could reach, not a bound on an L2-resident one.
"""

from __future__ import annotations

# HBM bandwidth by device-name fragment (datasheet, TB/s)
HBM_TBPS = {"H200": 4.8, "H100": 3.35, "B200": 8.0, "B300": 8.0}


def hbm_tbps(device_name: str) -> float | None:
    return next((v for frag, v in HBM_TBPS.items() if frag in device_name), None)


ELEMENT_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}


def least_bytes(row: dict, doc: dict) -> int:
    """The least traffic a call needs: A and B read once, C written once (the row's operand types where it
    records them, else the worklog's fp16 A and B, fp32 C)."""
    ops = row.get("operands") or doc.get("operands") or {}
    ops = ops if isinstance(ops, dict) else {}
    ab, c = ELEMENT_BYTES.get(ops.get("ab"), 2), ELEMENT_BYTES.get(ops.get("c"), 4)
    m, n, k = row["m"], row["n"], row["k"]
    return ab * (m * k + k * n) + c * m * n


def intensity(row: dict, doc: dict) -> float:
    """FLOP per byte of the least traffic: 2MNK / (A + B read once, C written once)."""
    return row["flops"] / least_bytes(row, doc)


def figure(docs: list[dict], path: str) -> str | None:
    """Write the roofline of ``docs`` (bench-v2) to ``path``; None when nothing in them was timed."""
    from cute_gemm.report.plot import _pyplot, phase_order, style

    rows = [(r, d) for d in docs for r in d["results"]
            if r.get("timing") and (r["kind"] == "peer" or r.get("config") is None)]
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(10, 5.4))
    gpu = (docs[0].get("gpu") or {}).get("name", "?")
    peak = docs[0].get("peak_tflops")
    bw = hbm_tbps(gpu)
    xs = [intensity(r, d) for r, d in rows]
    lo, hi = min(xs) / 2, max(xs) * 2
    if peak and bw:
        ridge = peak / bw
        lo, hi = min(lo, ridge / 8), max(hi, ridge * 4)
        grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
        ax.plot(grid, [min(peak, bw * x) for x in grid], color="#444444", lw=1.6, zorder=2,
                label=f"roofs: {peak:.0f} TFLOP/s dense fp16, {bw:g} TB/s HBM (datasheet)")
        ax.axvline(ridge, color="#999999", ls=":", lw=1, zorder=1)
        ax.text(ridge * 1.05, peak * 0.06, f"ridge {ridge:.0f} FLOP/B", fontsize=7, color="#666666", rotation=90)
    order = sorted({r["name"] for r, _ in rows if r["kind"] == "phase"}, key=phase_order)
    names = order + sorted({r["name"] for r, _ in rows if r["kind"] == "peer"})
    for name in names:
        pts = [(intensity(r, d), r["timing"]["tflops"], r) for r, d in rows if r["name"] == name]
        st = style(pts[0][2])
        label = pts[0][2]["label"] if pts[0][2]["kind"] == "peer" else ("best" if name == "best" else f"phase {name}")
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], color=st["color"], marker=st["marker"],
                   s=28 if name == "best" else 16, zorder=3, label=label, alpha=0.9)
    shapes = {}
    for (r, d), x in zip(rows, xs):
        shapes.setdefault(r["shape"], x)
    ymin = max(1.0, min(r["timing"]["tflops"] for r, _ in rows) / 3)
    for shape, x in shapes.items():
        ax.text(x, ymin * 1.08, shape, fontsize=6.5, rotation=90, ha="center", va="bottom", color="#555555")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(ymin, (peak or max(r["timing"]["tflops"] for r, _ in rows)) * 1.6)
    ax.set_xlabel("arithmetic intensity (FLOP per byte of A + B read once, C written once)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"Roofline, {gpu}: every timed kernel at every shape")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    cold = any((d.get("protocol") or {}).get("cold_l2") for d in docs)
    fig.text(0.5, 0.005, ("inputs rotated beyond the L2 (--cold-l2)" if cold else
                          "inputs L2-resident (the worklog's protocol): a point may sit above the HBM roof")
             + " · " + ", ".join(sorted({(d.get('date') or '')[:10] for d in docs})),
             ha="center", fontsize=7, color="#555555")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path

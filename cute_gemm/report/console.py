"""A bench document in words: the end-of-run result table and the API overhead table (rich).

rich renders plain text when the stream is not a terminal (a log file, a pipe), so the same table goes to
the screen and into ``tee``'d logs; off a terminal it is drawn at ``LOG_WIDTH`` columns so no column wraps.
"""

from __future__ import annotations

from cute_gemm.measure.progress import LOG_WIDTH, terminal

ADDS_WIDTH = 60


COLUMNS = ("kernel", "TFLOP/s", "min..max", "% vendor", "x vendor per round", "% peak", "TB/s", "% copy BW", "SM MHz",
           "W", "TFLOP/s/kW", "throttle", "status", "adds / why not timed")
LEFT = ("kernel", "throttle", "status", "adds / why not timed")


def _num(v, fmt="{:.0f}"):
    return "-" if v is None else fmt.format(v)


def _paired(x: dict | None) -> str:
    return "-" if not x else f"{x['median']:.3f} ({x['min']:.2f}..{x['max']:.2f})"


def result_row(r: dict) -> tuple[str, ...]:
    """One table row for one result of a bench-v2 document (strings, '-' where nothing was measured).
    A peer's note is the library kernel it ran, where that was recorded."""
    t, pw = r.get("timing"), r.get("power") or {}
    clock = (pw.get("sm_clock_mhz") or {}).get("median")
    if t:
        nums = (f"{t['tflops']:.1f}", f"{t['tflops_worst']:.0f}..{t['tflops_best']:.0f}",
                _num(r.get("pct_vendor"), "{:.1f}"), _paired(r.get("x_vendor_paired")), _num(r.get("pct_peak")),
                _num(r.get("tb_s"), "{:.2f}"), _num(r.get("pct_copy_bw")), _num(clock), _num(pw.get("power_w")),
                _num(pw.get("tflops_per_kw")),
                ",".join(pw.get("throttle_reasons") or []) or "-")
        # the GEMM first: "Memset (Device)" (cuBLAS clears a workspace at some shapes) after it
        kernels = sorted(r.get("library_kernels") or [], key=lambda k: k.startswith(("Memset", "Memcpy")))
        status, note = "pass", r.get("adds") or ", ".join(kernels) or r.get("detail") or ""
    else:
        nums = ("-",) * (len(COLUMNS) - 3)
        status, note = r["status"], r.get("reason") or ""
    note = note if len(note) <= ADDS_WIDTH else note[: ADDS_WIDTH - 3] + "..."
    return (r["label"], *nums, status, note)


def shapes(doc: dict) -> list[str]:
    return list(dict.fromkeys(r["shape"] for r in doc["results"]))


def _row_ops(r: dict) -> str | None:
    return (r.get("operands") or {}).get("label")


def per_shape_operands(doc: dict) -> bool:
    """Whether the run's shapes computed different operands (a set whose shapes carry their own, e.g. prefill)."""
    return ("operands" in doc and doc["operands"] is None) or len({_row_ops(r) for r in doc["results"]}) > 1


def cases(doc: dict) -> list[tuple[str, str | None]]:
    """(shape, operands label) of each table, in the run's order; the label None where one run is one operands."""
    mixed = per_shape_operands(doc)
    return list(dict.fromkeys((r["shape"], _row_ops(r) if mixed else None) for r in doc["results"]))


def operands_label(doc: dict) -> str:
    """What every kernel of the run computed: 'nn fp16->fp32' (the worklog's where the document does not say),
    or 'operands per shape'."""
    if per_shape_operands(doc):
        return "operands per shape"
    return (doc.get("operands") or {}).get("label") or "nn fp16->fp32"


def caption(doc: dict) -> str:
    """Operands, data kind and protocol in one line (the table's and the plots' caption)."""
    p = doc["protocol"]
    parts = [operands_label(doc), f"data {doc['data']}",
             f"CUDA-graph timing, median of {p['rounds']} interleaved rounds"]
    if p.get("sustained_s"):
        parts.append(f"{p['sustained_s']:g} s sustained before each timed window")
    parts.append("cold L2" if p.get("cold_l2") else "L2-resident")
    bw = doc.get("copy_bandwidth")
    if bw:
        parts.append(f"device copy {bw['tb_s']:.2f} TB/s")
    return ", ".join(parts)


def vendor_summary(doc: dict) -> list[tuple[str, int, float, float, str]]:
    """Per phase row timed beside cuBLAS/cuBLASLt at two or more shapes of the run (``best`` as one row, whatever it
    picked per shape): (kernel, shapes, geomean of its speed over the faster vendor's, the lowest, where), in the
    run's order."""
    import math

    seen: dict[str, list] = {}
    mixed = per_shape_operands(doc)
    for r in doc["results"]:
        if r["kind"] == "phase" and r.get("pct_vendor"):
            name = "best" if r["key"] == "best" else r["label"]
            where = f"{r['shape']} {_row_ops(r)}" if mixed else r["shape"]
            seen.setdefault(name, []).append((r["pct_vendor"] / 100, where))
    out = []
    for name, vals in seen.items():
        if len(vals) >= 2:
            low = min(vals)
            out.append((name, len(vals), math.exp(sum(math.log(v) for v, _ in vals) / len(vals)), low[0], low[1]))
    return out


def render(doc: dict, out=None):
    """Print one table per shape (per shape and operands, where they vary) of a bench-v2 document (``out``: a rich
    Console; default stdout), then each phase's
    speed over the vendor's across the shapes (``vendor_summary``)."""
    from rich.table import Table

    out = out or terminal()
    tel = doc.get("telemetry") or {}
    if not tel.get("available"):
        out.print(f"no clock/power telemetry: {tel.get('reason') or 'not recorded'}")
    for shape, ops in cases(doc):
        table = Table(title=f"{shape}{f'  {ops}' if ops else ''}  ({caption(doc)})", title_justify="left", box=None,
                      pad_edge=False)
        for col in COLUMNS:
            table.add_column(col, justify="left" if col in LEFT else "right", no_wrap=True)
        for r in doc["results"]:
            if r["shape"] == shape and (ops is None or _row_ops(r) == ops):
                table.add_row(*result_row(r))
        out.print(table)
        out.print()
    summary = vendor_summary(doc)
    if summary:
        out.print("speed over the faster of cuBLAS and cuBLASLt, across the run's shapes: geomean, lowest")
        width = max(len(name) for name, *_ in summary)
        for name, n, geo, low, where in summary:
            out.print(f"  {name:<{width}}  {geo:.3f}  {low:.3f} at {where}  ({n} shapes)")


def render_api(api: dict, out=None):
    """Print the ``api`` section of a bench document: host cost per call and loop TFLOP/s."""
    from rich.table import Table

    out = out or terminal()
    table = Table(title=f"Python API host overhead (wall clock, back to back, {api['calls']} calls at "
                        f"{api['small_shape']}, {api['loop_calls']} at {api['loop_shape']})",
                  title_justify="left", box=None, pad_edge=False)
    for i, col in enumerate(("call", "us per call", "loop TFLOP/s", "first call s", "note")):
        table.add_column(col, justify="left" if i in (0, 4) else "right", no_wrap=True)
    mm = api["torch_mm"]
    table.add_row("torch.mm(a, b, out_dtype=fp32)", f"{mm['us_per_call']:.1f}", f"{mm['loop_tflops']:.1f}", "-", "")
    for row in api["phases"]:
        first = _num(row["first_call_s"], "{:.2f}")
        for how, label in (("gemm", f"cute_gemm.gemm(phase={row['phase']}, out=c)"),
                           ("launcher", f"phase {row['phase']} compiled kernel alone")):
            m = row[how]
            if m:
                table.add_row(label, f"{m['us_per_call']:.1f}", f"{m['loop_tflops']:.1f}",
                              first if how == "gemm" else "", "")
            else:
                table.add_row(label, "-", "-", first if how == "gemm" else "", row["reason"] or "")
    out.print(table)
    for cold in api.get("cold_start") or []:
        parts = []
        for how in ("compile", "from_disk"):
            r = cold[how]
            parts.append(f"{how.replace('_', ' ')}: " + (f"import {r['import_s']:.1f} s + first call {r['first_call_s']:.2f} s"
                                                       if "error" not in r else f"error {r['error']}"))
        out.print(f"fresh process, phase {cold['phase']}: " + "; ".join(parts))

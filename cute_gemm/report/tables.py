"""Plain-text tables (rich, no box, no colour) for reports that end up in terminals, logs and READMEs:
the compile-only census of phases side by side, and Nsight Compute profiles (one kernel per column,
two kernels with their changes, the ladder's "where the cycles go" markdown table).
"""

from __future__ import annotations

from cute_gemm.profiling import codegen, ncu
from cute_gemm.profiling import ncu_metrics as nm


def text_table(header: list[str], rows: list[list[str]], left: int = 1) -> str:
    """A plain-text table (rich, no box, no colour): the first ``left`` columns left-aligned, the others
    right-aligned; for reports that end up in logs and READMEs (compile-only census, profiles)."""
    from io import StringIO

    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, pad_edge=False, show_edge=False, header_style=None, padding=(0, 1))
    for i, head in enumerate(header):
        table.add_column(head, justify="left" if i < left else "right", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    buf = StringIO()
    Console(file=buf, width=100_000, color_system=None, highlight=False, emoji=False).print(table)
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines())


# ------------------------------------------------------------------- compile-only census
RESOURCE_ROWS = ("registers", "spill_bytes", "smem_bytes", "threads", "tmem_cols", "grid_ctas", "cluster", "compile_s")
# the fused epilogue's instructions (phase 11; the persistent phases' epilogue fields), counted beside codegen's
# census where the reports show a step: the activation's SFU tanh and the bias / residual loaded straight to
# registers (without the epilogue no phase uses ld.global: the mainloops load through TMA or cp.async)
EPILOGUE_CENSUS = {"tanh.approx.f32": r"\btanh\.approx\.f32\b", "ld.global": r"\bld\.global\."}
CENSUS_ROWS = (*codegen.CENSUS, *EPILOGUE_CENSUS)


def census_of(ins) -> dict[str, int]:
    """An inspection's census (``codegen.census``) with the epilogue's rows counted in its PTX."""
    import re

    ptx = ins.ptx or ""
    return {**ins.census, **{name: len(re.findall(rx, ptx)) for name, rx in EPILOGUE_CENSUS.items()}}


def side_by_side(inss: list) -> str:
    """A table: one column per compiled phase, census and resources as rows; zeros shown as '.'."""
    if not inss:
        return "(nothing compiled)"
    heads = [i.key for i in inss]
    rows = []
    counts = [census_of(i) for i in inss]
    for name in CENSUS_ROWS:
        vals = [c.get(name, 0) for c in counts]
        if any(vals):
            rows.append((name, [str(v) if v else "." for v in vals]))
    rows.append(("", ["" for _ in inss]))
    for r in RESOURCE_ROWS:
        vals = [getattr(i, r) for i in inss]
        if r in ("tmem_cols", "grid_ctas") and all(v is None for v in vals):
            continue
        rows.append((r, ["-" if v is None else str(v) for v in vals]))
    return text_table(["", *heads], [[name, *vals] for name, vals in rows])


# ------------------------------------------------------------------------ Nsight Compute
def _fmt(key: str, value) -> str:
    if value is None:
        return "n/a"
    col = nm.COLUMNS[key]
    return f"{value * col.scale:,.{col.digits}f}"


def _display(label: str) -> str:
    """'sm90:5' -> 'phase 5', 'cublas' -> 'cuBLAS'."""
    return ncu.PEERS.get(label, "phase " + label.split(":")[-1])


def render_table(kernels: list[dict]) -> str:
    """One column per kernel, one row per counter, then the top three stall reasons and a kernel legend."""
    if not kernels:
        return "(no kernel was profiled)"
    rows = [("", [_display(k["label"]) for k in kernels])]
    rows += [(col.label, [_fmt(key, k["values"].get(key)) for k in kernels]) for key, col in nm.COLUMNS.items()]
    for i in range(3):
        cells = []
        for k in kernels:
            top = ncu.top_stalls(k)
            cells.append(f"{top[i][0]} {100 * top[i][1]:.0f}%" if i < len(top) else "n/a")
        rows.append((f"stall #{i + 1} (share)", cells))
    lines = [text_table([rows[0][0], *rows[0][1]], [[name, *cells] for name, cells in rows[1:]]), ""]
    lines += [f"{col.label.split(' (')[0]}: {col.note}" for col in nm.COLUMNS.values() if col.note]
    lines += [f"{_display(k['label'])}: {k['kernel']}  grid {k.get('grid', '?')} x block {k.get('block', '?')}"
              for k in kernels]
    return "\n".join(lines)


def render_doc(doc: dict) -> str:
    """The table with a header line (GPU, ncu, shape, date) and what was not profiled or is missing."""
    gpu = (doc.get("gpu") or {}).get("name", "unknown GPU")
    s = doc["shape"]
    head = (f"Nsight Compute {doc.get('ncu_version', '?')} on {gpu}, {s['m']}x{s['n']}x{s['k']}, one launch each after "
            f"{doc.get('warmup', '?')} warm-ups, clocks and caches left alone ({doc.get('date', '?')})")
    out = [head, "", render_table(doc["kernels"])]
    for label, why in (doc.get("not_profiled") or {}).items():
        out.append(f"not profiled: {label}: {why}")
    if doc.get("missing_metrics"):
        out.append(f"metrics this ncu lacks (n/a above): {', '.join(doc['missing_metrics'])}")
    if doc.get("not_reported"):
        out.append(f"metrics asked for but not in ncu's report (n/a above): {', '.join(doc['not_reported'])}")
    out += doc.get("notes") or []
    return "\n".join(out)


def counter_label(key: str) -> str:
    return f"stall share, {key.split(':', 1)[1]}" if key.startswith("stall:") else nm.COLUMNS[key].label


def _fmt_counter(key: str, value) -> str:
    if key.startswith("stall:"):
        return "n/a" if value is None else f"{100 * value:.0f}%"
    return _fmt(key, value)


def render_deltas(a: dict, b: dict) -> str:
    """Two kernels' counters side by side with the change, as `cute-gemm compare` prints them."""
    rows = [(counter_label(key), _fmt_counter(key, va), _fmt_counter(key, vb),
             "" if ch is None else f"{100 * ch:+.1f}%") for key, va, vb, ch in ncu.profile_deltas(a, b)]
    return text_table(["", _display(a["label"]), _display(b["label"]), "change"], [list(r) for r in rows])


def _arrow(key: str, va, vb) -> str:
    ch = ncu.relative(va, vb)
    return f"{_fmt_counter(key, va)} → {_fmt_counter(key, vb)}" + (f" ({100 * ch:+.0f}%)" if ch is not None else "")


def render_moved_markdown(kernels: list[dict]) -> str:
    """docs/results.md's 'where the cycles go' table: per ladder step, duration, tensor pipe, top stall, and the
    counter that moved most. Library peers are left out (they are not a step)."""
    ladder = [k for k in kernels if k["label"] not in ncu.PEERS]
    out = ["| step | duration (us) | tensor pipe (%) | top stall after | moved most |", "|---|---:|---:|---|---|"]
    for st, a, b in zip(ncu.moved_most(ladder), ladder, ladder[1:]):
        top = ncu.top_stalls(b, 1)
        mover = (f"{counter_label(st['counter'])}: {_arrow(st['counter'], st['before'], st['after'])}"
                 if st["counter"] else "n/a")
        out.append(f"| {a['label'].split(':')[-1]} → {b['label'].split(':')[-1]} "
                   f"| {_arrow('duration', st['duration_before'], st['duration_after'])} "
                   f"| {_arrow('tensor_pipe', ncu.counter_value(a, 'tensor_pipe'), ncu.counter_value(b, 'tensor_pipe'))} "
                   f"| {f'{top[0][0]} {100 * top[0][1]:.0f}%' if top else 'n/a'} | {mover} |")
    return "\n".join(out)

"""``cute-gemm report``: both ladders as one self-contained HTML file to step through in a browser.

One page per step (phase N-1 -> N) of each ladder and a summary page; on every step page what the step
adds and why (the phase's docstring), the source diff side by side and syntax-highlighted, what changed
in the generated code (the compile-only census ``cute-gemm compare`` prints), the measured numbers of
both phases (TFLOP/s, % of the vendor library, SM clock, power, effective bandwidth) and the Nsight
Compute counters that moved most, with the worklog's B300 number beside ours. A picker diffs any two
phases, as ``cute-gemm compare A B`` does; every page has a permalink (``report.html#sm90/5-6``).

How it is made, and why this way:

- **Highlighting**: Pygments lexes every phase file once; the page carries each file as lines of
  (token class, text) pairs (only the classes the style colours), and the CSS is Pygments' own for
  that style.
- **Diffing**: Python's ``difflib`` diffs the lines of every pair of phase files (both ladders, every
  pair: the picker diffs any two phases offline); the page carries only the matching blocks
  ``SequenceMatcher.get_matching_blocks()`` returns (about 60 KB for all 210 pairs) and lays out the
  side-by-side rows from them. Precomputing every pair's highlighted HTML instead would be ~8 MB.
- **Generated code**: every phase compiled once per run (``profiling.codegen.inspect_phase``, ~1 s each),
  cached in the run; without the CuTe DSL the report still renders and says why there is no census.
- **Numbers**: bench-v2 documents (``cute-gemm bench``) and profile-v1 documents (``cute-gemm profile
  --json``); for a (phase, shape) the first file that measured it is the one shown, and every number
  names its file. Plots: the PNGs ``cute-gemm plot`` wrote beside a bench JSON, drawn now where
  missing, and a roofline (``report.roofline``); all embedded as data URIs.
- **Offline by construction**: CSS and JS inline, images as data URIs, and a Content-Security-Policy
  that lets the page load nothing from anywhere.

The page's data is one JSON document in a ``<script type="application/json">``; ``assets/report.js``
draws the step pages from it, the summary page is drawn here.
"""

from __future__ import annotations

import ast
import base64
import dataclasses
import difflib
import html
import itertools
import json
import os
import pathlib
import re
import subprocess
import tempfile

from cute_gemm.measure import results as _results
from cute_gemm.measure.suite import HEADLINE
from cute_gemm.profiling import codegen, ncu
from cute_gemm.profiling import ncu_metrics as nm
from cute_gemm.report import tables, worklog
from cute_gemm.report.roofline import least_bytes
from cute_gemm.runtime import arch as _arch
from cute_gemm.runtime.problem import Problem
from phases.base import PHASE_IDS

ROOT = pathlib.Path(__file__).resolve().parents[2]  # the checkout: cute_gemm/, phases/, bench/
ASSETS = pathlib.Path(__file__).resolve().parent / "assets"

# The committed H200 results the report shows by default: the sweep of every sm90 phase 0-8 and
# `best` at 8 shapes (with its PNGs beside it), and the three Nsight Compute profiles of the ladder.
DEFAULT_RESULTS = (
    "bench/results/h200_2026-11-30_sweep8_bench.json",
    "bench/results/h200_2026-11-30_profile_4096.json",
    "bench/results/h200_2026-11-30_profile_1024x4096x4096.json",
    "bench/results/h200_2026-11-30_profile_8192.json",
)
MAX_BYTES = 2 * 1024 * 1024  # the file stays below this (tests/test_report.py holds it to it)
STYLE = "default"  # the Pygments style
CENSUS_SHAPES = (Problem(4096, 4096, 4096), Problem(1024, 4096, 4096), Problem(128, 4096, 4096),
                 Problem(16, 4096, 4096))  # the first a phase takes picks the grid the census reports
RESOURCES = (("registers", "registers/thread"), ("spill_bytes", "spill bytes"), ("stack_bytes", "stack bytes"),
             ("smem_bytes", "smem/CTA (bytes)"), ("threads", "threads/CTA"), ("tmem_cols", "TMEM columns"),
             ("cluster", "CTAs/cluster"), ("grid_ctas", "CTAs launched"))
VENDOR = {"cublas": "cuBLAS", "cublaslt": "cuBLASLt"}
MEASURED_NOTE = "not measured in these results"
SM100_NOTE = ("no Blackwell GPU exists in this workplace, so nothing on an sm100 page is measured; its "
              "generated-code census is from compiling for sm_100a on a CPU")


# ------------------------------------------------------------------------------------------- inputs
@dataclasses.dataclass
class Doc:
    path: str  # as the page shows it: relative to the checkout when inside it
    doc: dict
    real: str  # where it is


@dataclasses.dataclass
class Inputs:
    """The documents a report is made from, per kind."""

    bench: list = dataclasses.field(default_factory=list)
    profiles: list = dataclasses.field(default_factory=list)
    missing: list = dataclasses.field(default_factory=list)  # default files this checkout lacks


def default_results() -> tuple[list[str], list[str]]:
    """(the default result files present in this checkout, those missing), paths relative to the cwd
    where the checkout is below it."""
    present, missing = [], []
    for rel in DEFAULT_RESULTS:
        path = ROOT / rel
        (present if path.is_file() else missing).append(_shown(path))
    return present, missing


def _shown(path) -> str:
    """A path as the page shows it: relative to the checkout when inside it."""
    p = pathlib.Path(path).resolve()
    try:
        return str(p.relative_to(ROOT))
    except ValueError:
        return str(path)


def load_inputs(paths: list[str]) -> Inputs:
    """Each file is a bench-v2 or a profile-v1 document; ValueError in one sentence for anything else
    (OSError, e.g. a missing file, propagates for the caller to word)."""
    out = Inputs()
    for path in paths:
        doc = _results.read_json(path, "a result of `cute-gemm bench` or `cute-gemm profile --json`")
        schema = doc.get("schema") if isinstance(doc, dict) else None
        if schema == _results.SCHEMA:
            out.bench.append(Doc(_shown(path), _results.load(path), os.path.abspath(path)))
        elif schema == ncu.SCHEMA:
            out.profiles.append(Doc(_shown(path), ncu.load(path), os.path.abspath(path)))
        else:
            raise ValueError(f"{path} is neither a bench result ({_results.SCHEMA}, `cute-gemm bench`) nor a "
                             f"profile ({ncu.SCHEMA}, `cute-gemm profile --json`): its schema is {schema!r}")
    return out


# ------------------------------------------------------------------------------------------- phases
@dataclasses.dataclass
class Phase:
    """What the report knows of one phase: read from its class (or, without the DSL, from its source)."""

    arch: str
    id: str
    file: pathlib.Path
    doc: str
    summary: str = ""
    adds: str = ""
    worklog: str = ""
    config: dict = dataclasses.field(default_factory=dict)
    parent: str | None = None  # declared by the phase (a ``parent`` attribute), or None
    entry: object = None  # the registry entry, None without the DSL

    @property
    def key(self) -> str:
        return f"{self.arch}:{self.id}"


def load_phases(fam: str) -> tuple[list[Phase], str | None]:
    """A ladder's phases in ladder order, and why they were read from source instead of the registry
    (None when the registry loaded them: that needs the CuTe DSL)."""
    import inspect

    from cute_gemm.runtime import registry

    try:
        entries = registry.all_entries(fam)
    except Exception as exc:  # no DSL (ImportError), or a DSL that cannot load the kernels
        return _phases_from_source(fam), f"the {fam} kernels could not be loaded ({_one_line(exc)})"
    out = []
    for e in entries:
        path = pathlib.Path(inspect.getsourcefile(e.kernel_cls))
        doc = inspect.getmodule(e.kernel_cls).__doc__ or e.kernel_cls.__doc__ or ""
        parent = getattr(e, "parent", None) or getattr(e.kernel_cls, "parent", None)
        out.append(Phase(fam, e.phase, path, inspect.cleandoc(doc), e.summary, e.adds, e.worklog,
                         dataclasses.asdict(e.lesson_config()), str(parent) if parent else None, e))
    return out, None


def _phases_from_source(fam: str) -> list[Phase]:
    """Without the DSL: the phase files of a ladder read as text (docstring, and the summary / adds /
    worklog / parent strings a class sets literally)."""
    from cute_gemm.runtime import registry

    folder = ROOT / "phases" / fam
    out = []
    for pid in registry.phase_ids(fam):
        path = next(p for p in sorted(folder.glob(f"phase{pid}_*.py")))
        tree = ast.parse(path.read_text())
        attrs = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                    attrs.setdefault(node.targets[0].id, node.value.value)
        out.append(Phase(fam, pid, path, ast.get_docstring(tree) or "", attrs.get("summary", ""),
                         attrs.get("adds", ""), attrs.get("worklog", ""), parent=attrs.get("parent")))
    return out


def steps(phases: list[Phase]) -> list[tuple[Phase, Phase, str]]:
    """(from, to, how) per phase after the first: from is its declared ``parent`` when it has one
    ('declared'), else the phase before it in the ladder ('previous')."""
    by_id = {p.id: p for p in phases}
    out = []
    for prev, ph in zip(phases, phases[1:]):
        if ph.parent and ph.parent in by_id and ph.parent != ph.id:
            out.append((by_id[ph.parent], ph, "declared"))
        else:
            out.append((prev, ph, "previous"))
    return out


# ------------------------------------------------------------------------------------------ census
class Census:
    """The compile-only census of each phase, compiled once per run (``cute-gemm compare``'s numbers)."""

    def __init__(self, enabled: bool = True, progress=None):
        self.enabled, self.progress = enabled, progress
        self.done: dict[str, dict | None] = {}
        self.why: dict[str, str] = {}
        self.unavailable: str | None = None if enabled else "not computed in this run (--no-census)"

    def of(self, ph: Phase) -> dict | None:
        if ph.key in self.done:
            return self.done[ph.key]
        self.done[ph.key] = None
        if self.unavailable:
            self.why[ph.key] = self.unavailable
            return None
        if ph.entry is None:
            self.why[ph.key] = "the CuTe DSL could not load this ladder's kernels: no compile, no census"
            return None
        try:
            import cutlass  # noqa: F401  (the compile needs it; say so plainly when it is missing)
        except Exception as exc:
            self.unavailable = f"the CuTe DSL is not installed ({_one_line(exc)}): no compile, no census"
            self.why[ph.key] = self.unavailable
            return None
        config = ph.entry.lesson_config()  # phase 11: bias + gelu (its default is phase 10's kernel)
        kernel = ph.entry.make(config)
        shape = next((p for p in CENSUS_SHAPES if not kernel.can_implement(p.m, p.n, p.k)), None)
        if shape is None:
            self.why[ph.key] = f"{ph.key} takes none of {', '.join(map(str, CENSUS_SHAPES))}"
            return None
        if self.progress:
            self.progress(f"compiling {ph.key} for its census")
        try:
            ins = codegen.inspect_phase(ph.entry, None, shape, config)
        except Exception as exc:
            self.why[ph.key] = f"the compile failed: {_one_line(exc)}"
            return None
        self.done[ph.key] = {"target": ins.target, "shape": ins.shape, "compile_s": ins.compile_s,
                             "census": {k: v for k, v in tables.census_of(ins).items() if v},
                             "res": {k: getattr(ins, k) for k, _ in RESOURCES}}
        return self.done[ph.key]


def _one_line(exc: BaseException) -> str:
    from cute_gemm.errors import one_line

    return one_line(exc)


# ------------------------------------------------------------------------------------------ sources
def highlight_lines(text: str) -> list:
    """The lines of a Python source as the page draws them: a line is a string (nothing coloured) or a
    list of parts, a part a string or [pygments class, text]; only the classes the style colours."""
    from pygments import lex
    from pygments.lexers import PythonLexer
    from pygments.styles import get_style_by_name
    from pygments.token import STANDARD_TYPES

    style = get_style_by_name(STYLE)

    def css_class(tt):
        while tt not in STANDARD_TYPES:
            tt = tt.parent
        s = style.style_for_token(tt)
        coloured = s["color"] or s["bold"] or s["italic"] or s["bgcolor"] or s["underline"]
        return STANDARD_TYPES[tt] if coloured else ""

    lines: list[list] = [[]]
    for tt, value in lex(text, PythonLexer(stripnl=False, ensurenl=False)):
        cls = css_class(tt)
        for i, piece in enumerate(value.split("\n")):
            if i:
                lines.append([])
            if not piece:
                continue
            parts = lines[-1]
            last = parts[-1] if parts else None
            if cls == "" and isinstance(last, str):
                parts[-1] = last + piece
            elif cls and isinstance(last, list) and last[0] == cls:
                last[1] += piece
            else:
                parts.append(piece if cls == "" else [cls, piece])
    if text.endswith("\n") and not lines[-1]:
        lines.pop()
    return [(p[0] if len(p) == 1 and isinstance(p[0], str) else p) if p else "" for p in lines]


def pygments_css(scope: str) -> str:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(style=STYLE).get_style_defs(scope)


def matching_blocks(a: list[str], b: list[str]) -> list[int]:
    """difflib's matching blocks of two files' lines, flat: [i, j, n, i, j, n, ...] (the last is (len a,
    len b, 0)); the page derives the side-by-side rows from them."""
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [x for block in sm.get_matching_blocks() for x in block]


def docstring_lines(text: str) -> int:
    """How many lines the module docstring of a source takes from the top (0 without one): the page folds
    them in the diff, since the page shows the docstring above it."""
    try:
        body = ast.parse(text).body
    except SyntaxError:
        return 0
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first.end_lineno
    return 0


def docstring_html(text: str) -> str:
    """A phase docstring as written (the page keeps its line breaks), with ``code`` spans marked."""
    out, pos = [], 0
    for m in re.finditer(r"``(.+?)``|`([^`\n]+)`", text):
        out.append(html.escape(text[pos:m.start()]))
        out.append(f"<code>{html.escape(m.group(1) or m.group(2))}</code>")
        pos = m.end()
    out.append(html.escape(text[pos:]))
    return "".join(out)


# --------------------------------------------------------------------------------------- measurements
def _shape_key(shape: str):
    """Headline shapes first (the worklog's two), then by size."""
    heads = [str(p) for p in HEADLINE]
    if shape in heads:
        return (0, heads.index(shape))
    try:
        m, n, k = (int(x) for x in shape.split("x"))
        return (1, m * n * k, m)
    except ValueError:
        return (2, shape)


def _vendor(doc: dict, shape: str) -> dict:
    return {VENDOR[r["name"]]: r["timing"]["tflops"] for r in doc["results"]
            if r["kind"] == "peer" and r["shape"] == shape and r["name"] in VENDOR and r.get("timing")}


def measured_row(row: dict, doc: dict, file_index: int) -> dict:
    """One (phase, shape) of a bench document as the page shows it: strings, and ``tf`` to divide."""
    if row["status"] != "ok" or not row.get("timing"):
        return {"file": file_index, "status": row["status"], "reason": row.get("reason") or row["status"]}
    t, pw = row["timing"], row.get("power") or {}
    vendors = _vendor(doc, row["shape"])
    best = max(vendors, key=vendors.get) if vendors else None
    clock = (pw.get("sm_clock_mhz") or {}).get("median")
    eff_bw = least_bytes(row, doc) / (t["ms_median"] * 1e-3) / 1e12
    out = {"file": file_index, "status": "ok", "tf": t["tflops"], "tflops": f"{t['tflops']:.1f}",
           "range": f"{t['tflops_worst']:.0f}..{t['tflops_best']:.0f}" if "tflops_worst" in t else "",
           "pct": f"{row['pct_vendor']:.0f}% of {best}" if row.get("pct_vendor") is not None and best else "",
           "vendor": " · ".join(f"{v} {tf:.1f}" for v, tf in vendors.items()),
           "clock": f"{clock:.0f}" if clock else "", "power": f"{pw['power_w']:.0f}" if pw.get("power_w") else "",
           "throttle": ", ".join(pw.get("throttle_reasons") or []), "bw": f"{eff_bw:.2f}"}
    return out


def measurements(key: str, bench: list) -> dict[str, dict]:
    """shape -> the measured row of phase ``key`` (its default config) from the first file that has it."""
    out = {}
    for i, doc in enumerate(d.doc for d in bench):
        for r in doc["results"]:
            if r["kind"] != "phase" or r["key"] != key or r.get("config") or " " in r["name"]:
                continue
            if r["shape"] not in out or (out[r["shape"]]["status"] != "ok" and r["status"] == "ok"):
                out[r["shape"]] = measured_row(r, doc, i)
    return dict(sorted(out.items(), key=lambda kv: _shape_key(kv[0])))


def worklog_numbers(pid: str) -> list[dict]:
    """The worklog's B300 numbers for a phase id, per shape, as the page shows them."""
    out = []
    for shape, table in worklog.TFLOPS.items():
        if pid not in table:
            continue
        v = table[pid]
        lo, hi = v if isinstance(v, tuple) else (v, v)
        pct = worklog.pct_of_vendor(shape)[pid][0]
        tf = f"{lo}-{hi}" if lo != hi else f"{lo}"
        out.append({"shape": shape, "tf": (lo + hi) / 2, "tflops": tf,
                    "text": f"{tf} TFLOP/s, {pct:.0f}% of {worklog.VENDOR} ({worklog.CUBLASLT_TFLOPS[shape]})"})
    return out


# ------------------------------------------------------------------------------------------ profiles
def ncu_spec() -> dict:
    """How the page shows counters: key, label, scale, digits, whether a stall share, the mover floor."""
    keys = ["duration", "sm_clock", *ncu.MOVERS]
    spec = {"keys": keys, "labels": [], "scale": [], "digits": [], "share": [], "floor": []}
    for key in keys:
        share = key.startswith("stall:")
        col = None if share else nm.COLUMNS[key]
        spec["labels"].append(f"stall share, {key.split(':', 1)[1]}" if share else col.label)
        spec["scale"].append(100 if share else col.scale)
        spec["digits"].append(0 if share else col.digits)
        spec["share"].append(share)
        spec["floor"].append(ncu.MOVERS.get(key))
    return spec


def profile_data(path: str, doc: dict, keys: list[str]) -> dict:
    s = doc.get("shape") or {}
    values, stalls = {}, {}
    for k in doc.get("kernels") or []:
        if k["label"] in ncu.PEERS:
            continue
        values[k["label"]] = [ncu.counter_value(k, key) for key in keys]
        top = ncu.top_stalls(k, 1)
        stalls[k["label"]] = f"{top[0][0]} {100 * top[0][1]:.0f}%" if top else ""
    return {"file": path, "shape": f"{s.get('m')}x{s.get('n')}x{s.get('k')}", "date": (doc.get("date") or "")[:10],
            "gpu": (doc.get("gpu") or {}).get("name", "?"), "ncu": doc.get("ncu_version", "?"),
            "values": values, "top_stall": stalls}


# ------------------------------------------------------------------------------------------- plots
def _data_uri(path) -> str:
    return "data:image/png;base64," + base64.b64encode(pathlib.Path(path).read_bytes()).decode()


def plots(inputs: Inputs, tmp: str) -> tuple[list[dict], list[str]]:
    """[{title, uri, note}] for the summary page, and notes on what could not be drawn. A bench file's
    figures are the PNGs ``cute-gemm plot`` wrote beside it where present, else drawn now."""
    figs, notes = [], []
    if not inputs.bench:
        return figs, notes
    first = inputs.bench[0]
    path, doc, stem = first.path, first.doc, os.path.splitext(first.real)[0]
    titles = {"ladder": "The ladder: TFLOP/s per phase at the worklog's two shapes",
              "sweep": "The sweep: TFLOP/s against size, every phase and peer",
              "worklog": "Beside the worklog: each phase as % of the vendor library, B300 and H200"}
    for kind, title in titles.items():
        png = f"{stem}_{kind}.png"
        note = f"{_shown(png)} (as committed)"
        if not os.path.exists(png):
            try:
                from cute_gemm.report import plot as _plot

                drawn = {"ladder": _plot.ladder_figure, "sweep": _plot.sweep_figure,
                         "worklog": _plot.worklog_figure}[kind](doc, os.path.join(tmp, f"{kind}.png"))
            except ImportError as exc:
                notes.append(f"{title}: not drawn ({_one_line(exc)}; pip install 'cute-gemm[plot]')")
                continue
            if not drawn:
                continue
            png, note = drawn, f"drawn from {path}"
        figs.append({"title": title, "uri": _data_uri(png), "note": note})
    try:
        from cute_gemm.report import roofline

        drawn = roofline.figure([d.doc for d in inputs.bench], os.path.join(tmp, "roofline.png"))
    except ImportError as exc:
        notes.append(f"the roofline: not drawn ({_one_line(exc)}; pip install 'cute-gemm[plot]')")
        drawn = None
    if drawn:
        figs.append({"title": "The roofline: every measured phase and peer against arithmetic intensity",
                     "uri": _data_uri(drawn), "note": "drawn from " + ", ".join(d.path for d in inputs.bench)})
    return figs, notes


# ------------------------------------------------------------------------------------------ the page
def git_describe() -> str:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True,
                             text=True, timeout=10)
        return out.stdout.strip() if out.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def build(arches: list[str], inputs: Inputs, *, census: bool = True, progress=None) -> tuple[str, list[str]]:
    """The report as one HTML string, and its pages in stepping order ('summary', 'sm90/0-1', ...)."""
    from cute_gemm import __version__

    ladders, phases, sources, src_index, pages = {}, {}, [], {}, ["summary"]
    cen = Census(census, progress)
    spec = ncu_spec()
    profiles = [profile_data(d.path, d.doc, spec["keys"]) for d in inputs.profiles]
    load_notes = []
    for fam in arches:
        phs, why = load_phases(fam)
        if why:
            load_notes.append(why)
        st = steps(phs)
        measured = any(measurements(p.key, inputs.bench) for p in phs)
        ladders[fam] = {"ids": [p.id for p in phs], "steps": [[a.id, b.id, how] for a, b, how in st],
                        "measured": measured, "verified": "measured" if fam == "sm90" else "compile-verified"}
        pages += [f"{fam}/{a.id}-{b.id}" for a, b, _ in st]
        for ph in phs:
            rel = _shown(ph.file)
            if rel not in src_index:
                src_index[rel] = len(sources)
                sources.append(ph.file.read_text())
            c = cen.of(ph)
            phases[ph.key] = {
                "arch": fam, "id": ph.id, "key": ph.key, "summary": ph.summary, "adds": ph.adds,
                "worklog": ph.worklog, "doc": docstring_html(ph.doc), "file": rel, "src": src_index[rel],
                "config": ph.config, "parent": ph.parent, "census": c, "census_why": cen.why.get(ph.key),
                "measured": measurements(ph.key, inputs.bench),
                "wl": worklog_numbers(ph.id),
            }
    lines = [s.splitlines() for s in sources]
    diffs = {f"{i}-{j}": matching_blocks(lines[i], lines[j]) for i, j in itertools.combinations(range(len(lines)), 2)}
    data = {
        "ladders": ladders, "phases": phases, "pages": pages, "diffs": diffs,
        "sources": [highlight_lines(s) for s in sources], "doc_lines": [docstring_lines(s) for s in sources],
        "census_rows": list(tables.CENSUS_ROWS), "resources": [list(r) for r in RESOURCES],
        "ncu": spec, "profiles": profiles,
        "files": [{"path": p, "date": (d.get("date") or "")[:10], "gpu": (d.get("gpu") or {}).get("name", "?"),
                   "command": d.get("command", "")} for p, d in ((x.path, x.doc) for x in inputs.bench)],
        "shapes": sorted({r["shape"] for d in inputs.bench for r in d.doc["results"]} | set(worklog.TFLOPS),
                         key=_shape_key),
        "worklog_shapes": list(worklog.TFLOPS), "worklog_gpu": worklog.GPU,
        "notes": {"measured": MEASURED_NOTE, "sm100": SM100_NOTE},
    }
    with tempfile.TemporaryDirectory(prefix="cute-gemm-report-") as tmp:
        figs, plot_notes = plots(inputs, tmp) if "sm90" in arches else ([], [])
    summary = summary_html(arches, ladders, phases, inputs, figs, plot_notes + load_notes, cen)
    version = f"cute-gemm {__version__}" + (f" at {git_describe()}" if git_describe() else "")
    template = (ASSETS / "report.html").read_text()
    return (template.replace("/*CSS*/", (ASSETS / "report.css").read_text() + pygments_css(".src"))
            .replace("/*JS*/", (ASSETS / "report.js").read_text())
            .replace("<!--SUMMARY-->", summary)
            .replace("<!--VERSION-->", html.escape(version))
            .replace("<!--PICKER-->", picker_html(arches, phases))
            .replace("<!--DATA-->", _script_json(data))), pages


def _script_json(data) -> str:
    """JSON safe inside <script>: no '</' or '<!--' can end or open anything."""
    return json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")


def picker_html(arches, phases) -> str:
    opts = []
    for fam in arches:
        items = "".join(f'<option value="{k}">{k}</option>' for k, p in phases.items() if p["arch"] == fam)
        opts.append(f'<optgroup label="{fam}">{items}</optgroup>')
    sel = "".join(opts)
    return (f'<label>diff <select id="pick-a" aria-label="phase A">{sel}</select></label>'
            f'<label>against <select id="pick-b" aria-label="phase B">{sel}</select></label>'
            f'<button id="pick-go" type="button">show</button>')


def _e(text) -> str:
    return html.escape(str(text))


def _cell(m: dict | None) -> str:
    if not m:
        return '<td class="na">–</td>'
    if m["status"] != "ok":
        return f'<td class="na" title="{_e(m["reason"])}">{_e(m["status"])}</td>'
    return f'<td class="num">{_e(m["tflops"])} <span class="dim">({_e(m["pct"].split(" of ")[0])})</span></td>'


def summary_html(arches, ladders, phases, inputs: Inputs, figs, notes, cen: Census) -> str:
    heads = [str(p) for p in HEADLINE]
    out = ['<h1>cute-gemm: the ladders, step by step</h1>',
           '<p class="lead">One page per step of each ladder: what the step adds and why, the source diff, what '
           'changed in the generated code, and the numbers. <kbd>←</kbd> <kbd>→</kbd> step through the pages; '
           'the picker above diffs any two phases; every page has its own link (e.g. '
           '<a href="#sm90/5-6">#sm90/5-6</a>).</p>']
    # measured vs compile-verified
    out.append('<h2>What is measured, what is compile-verified</h2><table class="t"><tr><th>ladder</th>'
               '<th>what it is</th><th>how it is verified here</th></tr>')
    files = ", ".join(f"<code>{_e(p)}</code> ({_e((d.get('date') or '')[:10])}, {_e((d.get('gpu') or {}).get('name', '?'))})"
                      for p, d in ((x.path, x.doc) for x in inputs.bench)) or "no bench result given"
    what = {"sm90": "Hopper: wgmma, accumulators in registers",
            "sm100": "Blackwell: tcgen05, TMEM, 2-CTA pairs (the worklog's kernels)"}
    how = {"sm90": f"<b>run and measured on an NVIDIA H200</b>: checked against cuBLASLt and float64, timed beside "
                   f"the vendor libraries in the same run; numbers from {files}",
           "sm100": "<b>compile-verified only</b>: every phase compiles for sm_100a and its generated code is "
                    "checked on a CPU. <b>No Blackwell GPU exists in this workplace: no sm100 number is "
                    "measured.</b>"}
    for fam in arches:
        out.append(f'<tr><td><b>{fam}</b></td><td>{what.get(fam, "")}</td><td>{how.get(fam, "")}</td></tr>')
    out.append("</table>")
    if cen.unavailable:
        out.append(f'<p class="warn">Generated code: {_e(cen.unavailable)}.</p>')
    for note in notes:
        out.append(f'<p class="warn">{_e(note)}</p>')
    if inputs.missing:
        out.append('<p class="warn">Default result files missing from this checkout: '
                   + ", ".join(f"<code>{_e(m)}</code>" for m in inputs.missing) + "</p>")
    # every phase
    for fam in arches:
        lad = ladders[fam]
        measured = lad["measured"]
        out.append(f'<h2 id="table-{fam}">The {fam} ladder</h2>')
        if fam == "sm100" and not measured:
            out.append(f'<p class="verify"><b>Compile-verified only</b>: {_e(SM100_NOTE)}.</p>')
        elif not measured:
            out.append(f'<p class="warn">No phase of this ladder is measured in these results.</p>')
        cols = ["phase", "what it adds", "step", "tile", "regs", "smem", "B300, worklog (4096³)"]
        if measured:
            cols[-1:-1] = [f"H200 {h} (TFLOP/s, % vendor)" for h in heads]
        out.append('<table class="t phases"><tr>' + "".join(f"<th>{c}</th>" for c in cols) + "</tr>")
        from_of = {b: a for a, b, _ in lad["steps"]}
        for pid in lad["ids"]:
            p = phases[f"{fam}:{pid}"]
            step = (f'<a class="nowrap" href="#{fam}/{from_of[pid]}-{pid}">{_e(from_of[pid])} → {_e(pid)}</a>'
                    if pid in from_of else "first")
            cfg = p["config"]
            tile = f"{cfg['bm']}×{cfg['bn']}×{cfg['bk']}" if {"bm", "bn", "bk"} <= set(cfg) else "?"
            res = (p["census"] or {}).get("res") or {}
            wl = next((w["text"].split(",")[0] for w in p["wl"] if w["shape"] == heads[0]), "")
            row = [f"<b>{_e(pid)}</b>", _e(p["adds"]), step, tile, _e(res.get("registers", "–")),
                   _e(res.get("smem_bytes", "–"))]
            cells = "".join(f"<td>{c}</td>" for c in row)
            if measured:
                cells += "".join(_cell(p["measured"].get(h)) for h in heads)
            cells += f'<td class="num">{_e(wl) or "–"}</td>'
            out.append(f"<tr>{cells}</tr>")
        out.append("</table>")
        if measured:
            out.append(f'<p class="dim">A dash: {MEASURED_NOTE}. % vendor: of the better of cuBLAS and cuBLASLt '
                       f'in the same run. Registers and smem: the compile-only census of this run.</p>')
            bests = _best_rows(inputs, heads)
            if bests:
                out.append(f'<p>{bests}</p>')
    # plots
    if figs:
        out.append("<h2>Plots</h2>")
        for f in figs:
            out.append(f'<figure><img alt="{_e(f["title"])}" src="{f["uri"]}"><figcaption>{_e(f["title"])} '
                       f'<span class="dim">({_e(f["note"])})</span></figcaption></figure>')
    # sources of numbers
    if inputs.bench or inputs.profiles:
        out.append("<h2>Where the numbers come from</h2><ul>")
        for p, d in ((x.path, x.doc) for x in inputs.bench):
            out.append(f"<li><code>{_e(p)}</code>: <code>{_e(d.get('command', ''))}</code>, {_e(d.get('date', ''))}, "
                       f"{_e((d.get('gpu') or {}).get('name', '?'))}; {_e(_results_caption(d))}</li>")
        for p, d in ((x.path, x.doc) for x in inputs.profiles):
            s = d.get("shape") or {}
            out.append(f"<li><code>{_e(p)}</code>: Nsight Compute {_e(d.get('ncu_version', '?'))}, "
                       f"{s.get('m')}x{s.get('n')}x{s.get('k')}, {_e(d.get('date', ''))}</li>")
        out.append("</ul>")
    return "\n".join(out)


def _results_caption(doc) -> str:
    from cute_gemm.report.console import caption

    try:
        return caption(doc)
    except Exception:  # an older or hand-made document: the caption is a courtesy
        return ""


def _best_rows(inputs: Inputs, heads) -> str:
    """`best` and the vendor libraries at the headline shapes, from the first bench file."""
    if not inputs.bench:
        return ""
    doc = inputs.bench[0].doc
    parts = []
    for h in heads:
        rows = {r["name"]: r for r in doc["results"] if r["shape"] == h and r.get("timing")}
        bits = []
        if "best" in rows:
            bits.append(f"{_e(rows['best']['label'])} {rows['best']['timing']['tflops']:.1f}")
        bits += [f"{VENDOR[n]} {rows[n]['timing']['tflops']:.1f}" for n in VENDOR if n in rows]
        if bits:
            parts.append(f"at {h}: " + ", ".join(bits))
    return ("Same run, TFLOP/s: " + "; ".join(parts) + ".") if parts else ""


def write(path: str, text: str) -> int:
    """Write the report; returns its size in bytes."""
    data = text.encode("utf-8")
    with open(path, "wb") as f:
        f.write(data)
    return len(data)


__all__ = ["DEFAULT_RESULTS", "Inputs", "build", "default_results", "load_inputs", "load_phases", "steps", "write"]

"""compute-sanitizer's memcheck, initcheck, synccheck and racecheck on every sm90 phase, with every report
attributed: in our kernel, or elsewhere (torch's fill/random kernels, a host API call).

Each (tool, phase, shape) runs in its own small driver process (this file with --driver): inputs fully
written (randn), C written with fill_ before the launch, one launch through cute_gemm.runtime.plan.launcher after
the compile, a synchronize, and a check of C against a float64 product on the host. The driver reads no
uninitialized memory itself, so initcheck's reports name their culprit. Torch's caching allocator is off
(PYTORCH_NO_CUDA_MEMORY_CACHING=1) so every tensor is its own allocation and memcheck's --padding catches
a write past C. The sanitizer prints every report (--print-limit 0, no backtraces); they are counted as
they stream in (ours: the kernel name holds a phase class, e.g. Sm90Phase5), and the log keeps the first
few verbatim. All kernels are checked (no --kernel-name filter) so the reports elsewhere are seen too;
--only-ours restricts the instrumentation to our kernel when a tool is too slow otherwise. ``--layout``, ``--dtype``
and ``--out-dtype`` give the operands (default the worklog's: nn, fp16 in, fp32 C) for configs that take only some (a
5-stage ring with a 16-bit C); a 16-bit C is checked with rtol widened by one unit of its last place.

Output in --out: summary.json, summary.md (tool x phase x shape -> errors in ours / elsewhere) and the logs
(logs/<tool>_<phase>_<MxNxK>.log for the sanitizer, .out for the driver; --pack tars them into one file).
Exit status: 0 when our kernels are clean, 1 when one reported errors, timed out or computed a wrong C,
2 when compute-sanitizer or the GPU is missing.

  on an H200: python3 bench/sanitize.py --out $OUT/sanitize --deadline 540 --pack
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # run as `python3 bench/sanitize.py` from a checkout, installed or not

from cute_gemm.cli.args import operand_args, operands_of  # noqa: E402  (--layout, --dtype, --out-dtype)

TOOLS = ("memcheck", "initcheck", "synccheck", "racecheck")  # cheapest first, for --deadline
SHAPES = ("512,512,512", "1000,264,520")  # aligned, and ragged (phases that refuse it are skipped)
TOOL_ARGS = {
    "memcheck": ["--padding", "4096"],  # a guard zone after every allocation: a write past C is reported
    "initcheck": [],
    "synccheck": [],
    "racecheck": ["--racecheck-report", "analysis"],
}
PREFIX = "========="
KEEP_REPORTS = 20  # reports kept verbatim per log; all are counted
RESULT_TAG = "RESULT "

# top-level lines that are not reports: the banner and the tool's own warnings ("Warning: Detected overflow of
# tracked cuda::barrier structures"); racecheck's "WARNING: Race reported ..." is a report. Every other
# top-level line opens a report (known kinds: Invalid __global__ read, Uninitialized __global__ memory read,
# Barrier error detected, Race reported, Program hit ..., Target application returned an error, ...).
_BANNER = "COMPUTE-SANITIZER"
_TOOL_WARNING = re.compile(r"Warning: (?!Race reported|Potential)")
_SUMMARY = re.compile(r"ERROR SUMMARY:\s*([\d,]+)\s+error")
_RACE_SUMMARY = re.compile(r"RACECHECK SUMMARY:\s*([\d,]+)\s+hazards? displayed \(([\d,]+) errors?, ([\d,]+) warnings?\)")
# where a report names its kernel: "at kernel(int *)+0x70 in f.cu:41", "at kernel():0x160", "at 0x88 in kernel(...)"
_AT_KERNEL = (re.compile(r"\bat (?!0x)(.+?)(?:\+|:)0x[0-9a-fA-F]+"), re.compile(r"\bat 0x[0-9a-fA-F]+ in (.+)$"))


def our_markers() -> list[str]:
    """Substrings that only our kernels' names contain: every registered phase class, and the prefix the
    CuTe DSL gives kernels defined under phases/ (kernel_cutlass_kernel_phasessm90phase5_...Sm90Phase5_...)."""
    from cute_gemm.runtime import registry

    return ["kernel_cutlass_kernel_phases", *sorted({e.kernel_cls.__name__ for e in registry.all_entries()})]


def kernel_of(report: list[str]) -> str | None:
    """The kernel a report names (argument list dropped), or None for host-side reports."""
    for line in report:
        for rx in _AT_KERNEL:
            m = rx.search(line)
            if m:
                name = m.group(1).strip()
                return name.split("(")[0].strip()[:120] or name[:120]
    return None


def host_kind(report: list[str]) -> str:
    head = report[0]
    if head.startswith("Program hit"):
        return "host: CUDA API error"
    if head.startswith("Host API memory access"):
        return "host: API memory access"
    if head.startswith("Leaked"):
        return "host: leak"
    if head.startswith("Target application"):
        return "host: the driver's exit status"
    return "host: other"


@dataclasses.dataclass
class Attribution:
    """What one sanitizer log says, every report counted as ours or elsewhere."""

    total: int | None = None  # the tool's ERROR SUMMARY (None: no summary, the tool did not finish)
    hazards: dict | None = None  # racecheck: displayed / errors / warnings
    ours: int = 0
    elsewhere: int = 0
    elsewhere_by: dict = dataclasses.field(default_factory=dict)  # kernel (or host kind) -> count
    notes: list = dataclasses.field(default_factory=list)  # tool warnings that are not reports
    first_ours: list = dataclasses.field(default_factory=list)  # the first report in our kernel, verbatim

    @property
    def reports(self) -> int:
        return self.ours + self.elsewhere


def attribute_lines(lines, markers, keep=None) -> Attribution:
    """Stream a sanitizer log: split it into reports, attribute each; write the first KEEP_REPORTS reports
    and every non-report line to ``keep`` (a callable taking a line) when given."""
    att = Attribution()
    report: list[str] = []
    kept = 0

    def close():
        nonlocal report
        if not report:
            return
        text = "\n".join(report)
        if any(m in text for m in markers):
            att.ours += 1
            att.first_ours = att.first_ours or list(report)
        else:
            where = kernel_of(report) or host_kind(report)
            att.elsewhere += 1
            att.elsewhere_by[where] = att.elsewhere_by.get(where, 0) + 1
        report = []

    for raw in lines:
        line = raw.rstrip("\n")
        if not line.startswith(PREFIX):
            continue  # not the tool's (a comment, the application's own output)
        body = line[len(PREFIX):]
        text = body.strip()
        if not text:
            close()  # the blank prefix line between reports
        elif body.startswith("  "):
            if report:
                report.append(text)  # indented: a line of the open report ("at kernel+0x70", "by thread ...")
        elif text.startswith("and ") and report:
            report.append(text)  # racecheck analysis: "and Read access at ..."
        else:
            close()
            m, r = _SUMMARY.search(text), _RACE_SUMMARY.search(text)
            if m:
                att.total = int(m.group(1).replace(",", ""))
            elif r:
                att.hazards = dict(zip(("displayed", "errors", "warnings"),
                                       (int(g.replace(",", "")) for g in r.groups())))
            elif _TOOL_WARNING.match(text):
                att.notes.append(text)
            elif text != _BANNER:
                report = [text]
                kept += 1
        if keep and (not report or kept <= KEEP_REPORTS):
            keep(line)
    close()
    if keep and kept > KEEP_REPORTS:
        keep(f"(cute-gemm sanitize: {kept - KEEP_REPORTS:,} more reports counted above the summary, not kept here)")
    if att.total is None and att.hazards is not None:
        att.total = att.hazards["errors"] + att.hazards["warnings"]
    return att


# ---------------------------------------------------------------------------------------- runs
@dataclasses.dataclass
class Run:
    tool: str
    phase: str
    shape: str
    status: str = "not run"  # clean / elsewhere only / ERRORS / unattributed / timeout / failed / skipped / not run
    reason: str = ""
    errors_total: int | None = None
    ours: int = 0
    elsewhere: int = 0
    elsewhere_by: dict = dataclasses.field(default_factory=dict)
    notes: list = dataclasses.field(default_factory=list)
    first_ours: list = dataclasses.field(default_factory=list)
    driver: dict | None = None
    exit_code: int | None = None
    seconds: float = 0.0
    log: str = ""
    operands: tuple = ()  # (layout, dtype, out_dtype) the driver runs with; () the worklog's (nn, fp16, fp32)

    @property
    def stem(self) -> str:
        phase = re.sub(r"[^0-9A-Za-z]+", "_", self.phase)  # "10:cluster_m=4,bn=128" -> 10_cluster_m_4_bn_128
        return f"{self.tool}_{phase}_{self.shape.replace(',', 'x')}"

    @property
    def bad(self) -> bool:
        """Our kernel's fault, or cannot be ruled out: errors in it, errors no report explains, a wrong C,
        a hang or a crash."""
        return self.status in ("ERRORS", "unattributed", "timeout", "failed")


def sanitizer_command(cs: str, run: Run, log: str, only_ours: str | None = None) -> list[str]:
    cmd = [cs, "--tool", run.tool, "--log-file", log, "--print-limit", "0", "--show-backtrace", "no",
           "--error-exitcode", "86", *TOOL_ARGS[run.tool]]
    if only_ours:
        cmd += ["--kernel-name", f"kns={only_ours}"]
    ops = [x for flag, v in zip(("--layout", "--dtype", "--out-dtype"), run.operands) for x in (flag, v)]
    return cmd + [sys.executable, os.path.abspath(__file__), "--driver", "--phase", run.phase, "--shape", run.shape,
                  *ops]


def _run_killable(cmd, out_path, timeout, env) -> int | None:
    """Run cmd with its output in out_path; on timeout kill its whole process group (the sanitizer and the
    driver it started) and return None."""
    with open(out_path, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return None


def driver_result(out_text: str) -> dict | None:
    for line in out_text.splitlines():
        if line.startswith(RESULT_TAG):
            return json.loads(line[len(RESULT_TAG):])
    return None


def finish(run: Run, att: Attribution, rc: int | None, out_text: str) -> Run:
    """Fill a run's verdict from its attribution, exit code and the driver's output."""
    run.exit_code = rc
    run.errors_total, run.ours, run.elsewhere = att.total, att.ours, att.elsewhere
    run.elsewhere_by, run.notes, run.first_ours = att.elsewhere_by, att.notes, att.first_ours
    run.driver = driver_result(out_text)
    if rc is None:
        run.status, run.reason = "timeout", "killed at the per-run timeout"
    elif att.ours:
        run.status = "ERRORS"
    elif run.driver is None:
        tail = [ln for ln in out_text.strip().splitlines() if ln.strip()][-1:]
        run.status, run.reason = "failed", f"the driver printed no result (exit {rc}): {tail[0] if tail else ''}"
    elif not run.driver.get("ok"):
        run.status, run.reason = "failed", f"wrong C: {run.driver}"
    elif att.total is None:
        run.status, run.reason = "failed", "the sanitizer printed no summary"
    elif att.total > att.reports:
        run.status, run.reason = "unattributed", f"{att.total - att.reports:,} errors in the summary, no report for them"
    else:
        run.status = "elsewhere only" if att.elsewhere else "clean"
    return run


def sanitize_one(cs: str, run: Run, logdir: str, timeout: float, markers, only_ours: str | None) -> Run:
    full, log, out = (os.path.join(logdir, run.stem + ext) for ext in (".full.log", ".log", ".out"))
    env = dict(os.environ, PYTORCH_NO_CUDA_MEMORY_CACHING="1",
               PYTHONPATH=ROOT + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else ""))
    t0 = time.monotonic()
    rc = _run_killable(sanitizer_command(cs, run, full, only_ours), out, timeout, env)
    run.seconds = round(time.monotonic() - t0, 1)
    with open(log, "w") as kept:
        if os.path.exists(full):
            with open(full, errors="replace") as f:
                att = attribute_lines(f, markers, keep=lambda ln: kept.write(ln + "\n"))
            os.remove(full)
        else:
            att = Attribution()
    run.log = os.path.relpath(log, os.path.dirname(logdir))
    with open(out, errors="replace") as f:
        return finish(run, att, rc, f.read())


# ------------------------------------------------------------------------------------- summary
def cell(run: Run) -> str:
    if run.status in ("skipped", "not run", "timeout", "failed", "unattributed"):
        return run.status
    total = "" if run.errors_total is None else f" (summary {run.errors_total:,})"
    return f"{run.ours:,} / {run.elsewhere:,}" + (total if run.errors_total != run.ours + run.elsewhere else "")


def summary_markdown(runs: list[Run], header: str = "") -> str:
    """tool x (phase, shape) -> 'errors in ours / errors elsewhere', then what 'elsewhere' was and the
    first report in our kernels."""
    tools = list(dict.fromkeys(r.tool for r in runs))
    keys = list(dict.fromkeys((r.phase, r.shape) for r in runs))
    by = {(r.tool, r.phase, r.shape): r for r in runs}
    out = [header, ""] if header else []
    out += ["errors in our kernel / elsewhere (torch's kernels, host API calls), per tool:", "",
            "| phase | shape | " + " | ".join(tools) + " |", "|---|---|" + "---:|" * len(tools)]
    for ph, sh in keys:
        cells = [cell(by[(t, ph, sh)]) if (t, ph, sh) in by else "" for t in tools]
        out.append(f"| {ph} | {sh.replace(',', 'x')} | " + " | ".join(cells) + " |")
    ran = [r for r in runs if r.status not in ("skipped", "not run") and (r.elsewhere_by or r.first_ours or r.reason)]
    if ran:
        out += ["", "details:"]
    for r in ran:
        out.append(f"- {r.tool} {r.phase} {r.shape.replace(',', 'x')}: {r.status}" + (f" ({r.reason})" if r.reason else ""))
        for where, n in sorted(r.elsewhere_by.items(), key=lambda kv: -kv[1]):
            out.append(f"  - elsewhere {n:,} x {where}")
        if r.first_ours:
            out.append("  - first report in ours: " + " / ".join(r.first_ours[:4]))
    skipped = dict.fromkeys((r.phase, r.shape, r.reason) for r in runs if r.status == "skipped")
    out += [f"- skipped: phase {ph} at {sh.replace(',', 'x')}: {why}" for ph, sh, why in skipped]
    late = sum(r.status == "not run" for r in runs)
    if late:
        out.append(f"- not run: {late} runs (the --deadline came first)")
    return "\n".join(out)


def plan(entries, tools, shapes, configs=(), operands=None) -> list[Run]:
    """Every (tool, phase or config, shape), tools outermost (cheapest first); shapes a kernel refuses are
    skipped. ``configs``: (entry, 'FIELD=V,...') pairs, each run like a phase under the name 'PHASE:FIELD=V,...'.
    ``operands``: the runs' ``phases.operands.Operands`` (None: the worklog's), what a kernel is asked to take."""
    from cute_gemm.runtime.problem import Problem

    todo = [(e, None, e.phase) for e in entries] + [(e, over, f"{e.phase}:{over}") for e, over in configs]
    runs = []
    for tool in tools:
        for e, over, name in todo:
            for sh in shapes:
                p = Problem.parse(sh)
                run = Run(tool, name, f"{p.m},{p.n},{p.k}")
                if operands is not None and not operands.is_worklog:
                    run.operands = (operands.layout, operands.ab, operands.c)
                why = e.make(e.configured(over), operands).can_implement(p.m, p.n, p.k)
                if why:
                    run.status, run.reason = "skipped", "; ".join(why)
                runs.append(run)
    return runs


# -------------------------------------------------------------------------------------- driver
def driver(spec: str, shape: str, arch: str, operands=None) -> int:
    """One launch of one phase ('7', or '10:cluster_m=4,bn=128' for a config of it) with ``operands`` (None: the
    worklog's), every byte it reads written first, then C checked against float64 on the host (a 16-bit C within
    one more rounding of its type)."""
    import torch

    from cute_gemm.measure.check import tolerance
    from cute_gemm.measure.inputs import make_inputs
    from cute_gemm.runtime import registry
    from cute_gemm.runtime.plan import launcher
    from cute_gemm.runtime.problem import Problem, torch_dtype
    from phases.operands import WORKLOG

    p = Problem.parse(shape)
    phase, over = registry.split_spec(spec)
    entry = registry.get(arch, phase)
    ops = operands or WORKLOG
    a, b = make_inputs(p, operands=ops)  # randn, then A's and B's type: every element written
    cfg = entry.configured(over)
    gated = getattr(cfg, "gated", False)  # C [M, N/2]: act(gate) * up of the column pairs
    nc = p.n // 2 if gated else p.n
    c = torch.empty(p.m, nc, dtype=torch_dtype(ops.c), device="cuda")
    c.fill_(float("nan"))  # written before the launch; an element the kernel skips stays NaN
    ref = a.cpu().double() @ b.cpu().double()
    slack = 0.0
    if getattr(cfg, "accumulate", False):  # C += A @ B: C holds random values first, and the sum is checked
        c.copy_(torch.randn(p.m, p.n, device="cuda").to(c.dtype))
        ref = ref + c.cpu().double()
    if getattr(cfg, "epilogue_active", lambda: False)():  # the fused epilogue: its bias and residual written too
        import cute_gemm
        from cute_gemm.measure.selftest import TANH_APPROX, epilogue_reference

        bias = torch.randn(p.n, device="cuda").to(a.dtype) if cfg.bias else None
        res = torch.randn(p.m, nc, device="cuda").to(c.dtype) if cfg.residual else None
        cute_gemm.gemm(a, b, phase=phase, out=c, config=cfg, bias=bias, activation=cfg.activation, residual=res,
                       gated=gated)
        z = ref + (bias.cpu().double() if bias is not None else 0.0)
        ref = epilogue_reference(z, None, cfg.activation, None if res is None else res.cpu().double(), gated)
        # tanh.approx.f32 (gelu, silu): of |z|, or with the pairs |gate| |up|
        big = z[:, 0::2].abs() * z[:, 1::2].abs() if gated else z.abs()
        slack = TANH_APPROX * big if cfg.activation in ("gelu", "silu") else 0.0
    else:
        launch = launcher(entry, a, b, c, cfg)  # compiles (host only)
        launch()
    torch.cuda.synchronize()
    got = c.cpu().double()
    tol = tolerance(ops)  # at the worklog's K: ATOL / RTOL for an fp32 C, rtol widened by a 16-bit C's rounding
    wrong = ~((got - ref).abs() <= tol.atol + tol.rtol * ref.abs() + slack)  # NaN counts as wrong
    res = {"phase": spec, "shape": shape, "nan": int(torch.isnan(got).sum()), "mismatches": int(wrong.sum())}
    res["ok"] = res["mismatches"] == 0
    print(RESULT_TAG + json.dumps(res), flush=True)
    return 0 if res["ok"] else 1


# ---------------------------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.environ.get("OUT", "out") + "/sanitize", help="output folder (default $OUT/sanitize)")
    ap.add_argument("--tools", default=",".join(TOOLS), help="comma list (default %(default)s)")
    ap.add_argument("--phases", help="phase ids, e.g. 0-3,5 (default: every sm90 phase)")
    ap.add_argument("--config", action="append", default=[], metavar="PHASE:FIELD=V[,FIELD=V]",
                    help="also check this config of a phase, e.g. 10:bm=128,bn=128,bk=64,stages=7,cluster_m=4 "
                         "(repeatable; alone with --phases none)")
    ap.add_argument("--shapes", nargs="+", default=list(SHAPES), metavar="M,N,K", help="default: %(default)s")
    operand_args(ap)
    ap.add_argument("--run-timeout", type=float, default=300, help="seconds per sanitizer run (default %(default)s)")
    ap.add_argument("--deadline", type=float, help="start no run after this many seconds (the rest: 'not run')")
    ap.add_argument("--only-ours", action="store_true",
                    help="instrument our kernel only (--kernel-name kns=<its class>): faster, but blind elsewhere")
    ap.add_argument("--pack", action="store_true", help="tar the logs into sanitize_logs.tar.gz")
    ap.add_argument("--jobs", type=int, default=1, help="sanitizer runs at once (default %(default)s)")
    ap.add_argument("--driver", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--phase", help=argparse.SUPPRESS)
    ap.add_argument("--shape", help=argparse.SUPPRESS)
    ap.add_argument("--arch", default="sm90", help=argparse.SUPPRESS)
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.driver:
        return driver(args.phase, args.shape, args.arch, operands_of(args))
    from cute_gemm.cli.args import UsageError
    from cute_gemm.cli.steps import buildable_variant
    from cute_gemm.measure import environment
    from cute_gemm.runtime import registry

    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = [t for t in tools if t not in TOOLS]
    if unknown:
        print(f"sanitize: unknown tool {', '.join(unknown)} (tools: {', '.join(TOOLS)})", file=sys.stderr)
        return 2
    try:  # a bad --config is said before anything else, GPU or not
        configs = [buildable_variant(spec, "sm90", operands_of(args)) for spec in args.config]
    except UsageError as exc:
        print(f"sanitize: {exc}", file=sys.stderr)
        return 2
    cs = shutil.which("compute-sanitizer")
    if cs is None:
        print("sanitize: compute-sanitizer is not on PATH (it ships with the CUDA toolkit)", file=sys.stderr)
        return 2
    gpu = environment.gpu()
    if gpu is None or gpu["capability"] != "9.0":
        print(f"sanitize: needs an sm90 (Hopper) GPU, found {gpu['name'] if gpu else 'none'}", file=sys.stderr)
        return 2
    entries = registry.all_entries("sm90")
    if args.phases == "none":
        entries = []
    elif args.phases:
        want = registry.parse_phase_list(args.phases)
        entries = [e for e in entries if e.phase in want]
    logdir = os.path.join(args.out, "logs")
    os.makedirs(logdir, exist_ok=True)
    markers = our_markers()
    runs = plan(entries, tools, args.shapes, configs, operands_of(args))
    t0 = time.monotonic()

    def one(run: Run):
        if args.deadline is not None and time.monotonic() - t0 > args.deadline:
            run.reason = "deadline reached before it started"
            return
        only = registry.get("sm90", registry.split_spec(run.phase)[0]).kernel_cls.__name__ if args.only_ours else None
        sanitize_one(cs, run, logdir, args.run_timeout, markers, only)
        print(f"{run.tool:<9} {run.phase:<3} {run.shape:<14} {run.status:<14} ours {run.ours:,} elsewhere "
              f"{run.elsewhere:,}  {run.seconds:.0f}s {run.reason}", flush=True)

    # each run is its own process (sanitizer + driver, mostly host time: imports, instrumentation); several
    # at once share the GPU as separate contexts, and each report still names its own kernel
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(one, [r for r in runs if r.status != "skipped"]))
    rec = environment.record()
    header = (f"compute-sanitizer on {gpu['name']} (driver {gpu.get('driver')}), {rec['date']}, "
              f"{operands_of(args).label()}, "
              f"`{rec['command']}`" + (" (instrumenting our kernel only)" if args.only_ours else ""))
    md = summary_markdown(runs, header)
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(md + "\n")
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump({"schema": "cute-gemm/sanitize-v1", **rec, "only_ours": args.only_ours,
                   "runs": [dataclasses.asdict(r) for r in runs]}, f, indent=1)
    if args.pack:
        with tarfile.open(os.path.join(args.out, "sanitize_logs.tar.gz"), "w:gz") as tar:
            tar.add(logdir, arcname="logs")
        shutil.rmtree(logdir)
    print("\n" + md)
    return 1 if any(r.bad for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())

"""The ``cute-gemm`` command (also ``python3 -m cute_gemm``).

Commands register themselves: each is an ``add_parser(subparsers)`` function that adds its sub-parser and
sets ``fn`` (called with the parsed arguments, returns the exit code). ``COMMANDS`` lists them in help
order, so a command that lives in another module is one more line there (``from cute_gemm import
profile`` and ``profile.add_parser``). The argument types below (``shape_arg``, ``arch_arg``,
``phase_list_arg``, ...) and ``UsageError`` are for such modules too.

Errors: a bad argument, file or combination of options is ONE line on stderr
(``cute-gemm <command>: ...``) and exit 2, found before anything looks for a GPU: argument types reject
bad values while parsing, and commands raise ``UsageError`` for the rest before they start work. Anything
unexpected is one line and exit 1 (``--debug`` or ``CUTE_GEMM_DEBUG=1`` show the traceback); a stdout
closed early (``cute-gemm list | head -1``) ends quietly with exit 141, as a shell's SIGPIPE would.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys

from cute_gemm import __version__
from cute_gemm import arch as _arch
from cute_gemm import peers, profile, timing
from cute_gemm.bench import CHECK, SWEEP
from cute_gemm.console import one_line
from cute_gemm.problem import HEADLINE, Problem

PROG = "cute-gemm"
DEFAULT_OUT = "bench/results/latest.json"

DESCRIPTION = """\
cute-gemm: a GEMM worklog's phases (a serialized tensor-core loop -> beating cuBLAS) as CuTe DSL kernels.

Problem: C[M,N] fp32 = A[M,K] fp16 row-major @ B[K,N] fp16 row-major (N-major), fp32 accumulate.
Shapes are M,N,K: positive integers, N and K multiples of 8 (16-byte rows for cp.async/TMA); the early
phases also need whole tiles (`cute-gemm list` shows each phase's tile).
Two ladders share this tool: sm100 (Blackwell tcgen05, compile-verified here) and sm90 (Hopper wgmma,
run and measured on an H200). Registered phases ('2' means 2b):
{phase_ids}

A newcomer's three commands:
  cute-gemm list                     what each phase adds, per arch
  cute-gemm bench                    check + time every phase beside cuBLAS/cuBLASLt and other peers
                                     (GPU), or the compile-only report (no GPU); then `cute-gemm plot`
  cute-gemm compare 2a 2b            two phases side by side: config, generated code, timings

Errors are one line; --debug (or CUTE_GEMM_DEBUG=1) shows the traceback.
"""


class UsageError(Exception):
    """A bad argument, file or combination of options: one line on stderr, exit 2."""


def _phase_ids(inline: bool) -> str:
    from cute_gemm import registry

    per_arch = [(fam, " ".join(e.phase for e in registry.all_entries(fam))) for fam in _arch.TARGETS]
    if inline:
        return "; ".join(f"{fam}: {ids}" for fam, ids in per_arch)
    return "\n".join(f"  {fam + ':':<7} {ids}" for fam, ids in per_arch)


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors, and the registry's phase ids filled into help texts when shown
    (``{phase_ids}``, ``{phase_ids_inline}``: the registry imports the kernels, too slow for every run)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see `{self.prog} --help`)\n")

    def format_help(self):
        text = super().format_help()
        if "{phase_ids" in text:
            text = text.replace("{phase_ids}", _phase_ids(False)).replace("{phase_ids_inline}", _phase_ids(True))
        return text


# ------------------------------------------------------------------------------------ argument types
def _argtype(fn):
    """An argparse type from a parser that raises ValueError/LookupError with a clear message."""

    def parse(text):
        try:
            return fn(text)
        except (ValueError, LookupError) as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = fn.__name__
    return parse


@_argtype
def shape_arg(text: str) -> Problem:
    """'M,N,K' (or MxNxK, or one number for a cube): positive integers, N and K multiples of 8."""
    p = Problem.parse(text)
    if p.n % 8 or p.k % 8:
        raise ValueError(f"shape {text!r}: N and K must be multiples of 8 (each row of A and B is loaded in "
                         f"16-byte pieces), got N={p.n}, K={p.k}")
    return p


@_argtype
def arch_arg(text: str) -> str:
    """'sm90' / 'sm100' / 'sm_100a' ... -> the family name."""
    return _arch.family(text)


@_argtype
def target_arg(text: str) -> str:
    """'sm_90a' / 'sm100' / 'sm_103a' ... -> the exact target."""
    return _arch.target(text)


@_argtype
def phase_arg(text: str) -> str:
    from cute_gemm import registry

    return registry.parse_phase(text)


@_argtype
def phase_list_arg(text: str) -> list[str]:
    from cute_gemm import registry

    phases = registry.parse_phase_list(text)
    if not phases:
        raise ValueError(f"no phase in {text!r}")
    return phases


@_argtype
def peers_arg(text: str) -> list[str]:
    from cute_gemm.peers import parse_peer_list

    return parse_peer_list(text)


@_argtype
def rounds_arg(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise ValueError(f"rounds must be a whole number, got {text!r}") from None
    if n < 1:
        raise ValueError(f"rounds must be at least 1, got {n}")
    return n


@_argtype
def seconds_arg(text: str) -> float:
    try:
        s = float(text)
    except ValueError:
        raise ValueError(f"seconds must be a number, got {text!r}") from None
    if not s >= 0 or s == float("inf"):
        raise ValueError(f"seconds must be a finite number >= 0, got {text}")
    return s


# --------------------------------------------------------------------------------- files and the GPU
def writable_file(path: str, option: str):
    """UsageError unless ``path`` can be written as a file (its directory is created if missing)."""
    if os.path.isdir(path):
        raise UsageError(f"{option} {path} is a directory; give a file name")
    writable_dir(os.path.dirname(path) or ".", option)


def writable_dir(path: str, option: str):
    """UsageError unless ``path`` is (or can be created as) a directory we can write into."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{option}: cannot create directory {path} ({exc.strerror or exc})") from None
    if not os.access(path, os.W_OK):
        raise UsageError(f"{option}: directory {path} is not writable")


def readable_file(path: str) -> str:
    if not os.path.exists(path):
        raise UsageError(f"{path}: no such file")
    if os.path.isdir(path):
        raise UsageError(f"{path} is a directory; give a JSON file written by `cute-gemm bench`")
    return path


def _gpu_target() -> str | None:
    try:
        import torch

        if not torch.cuda.is_available():
            return None
        return _arch.target_of_capability(*torch.cuda.get_device_capability(0))
    except Exception:
        return None


def _no_gpu_reason() -> str:
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA GPU is visible to torch"
    major, minor = torch.cuda.get_device_capability(0)
    return f"{torch.cuda.get_device_name(0)} (compute capability {major}.{minor}) runs neither ladder"


def _entries(fams: list[str], phases: list[str] | None):
    from cute_gemm import bench

    try:
        return [e for f in fams for e in bench.entries_for(f, phases)]
    except LookupError as exc:
        raise UsageError(str(exc)) from None


def _cannot(entry, p: Problem) -> str | None:
    """Why ``entry`` cannot do ``p`` (its can_implement reasons in one line), or None."""
    why = entry.make().can_implement(p.m, p.n, p.k)
    return f"{entry.key} cannot do {p}: {'; '.join(why)}" if why else None


def _refuse_unimplementable(entries, shapes):
    """UsageError (one line) when a selected phase cannot do a requested shape."""
    for e in entries:
        for p in shapes:
            why = _cannot(e, p)
            if why:
                raise UsageError(why)


# ---------------------------------------------------------------------------------------------- list
def cmd_list(args) -> int:
    from cute_gemm import registry

    for fam in ([args.arch] if args.arch else list(_arch.TARGETS)):
        ents = registry.all_entries(fam)
        verified = "run and measured on the H200" if fam == "sm90" else "compile-verified (no Blackwell GPU here)"
        print(f"{fam} ({', '.join(_arch.TARGETS[fam])}; {verified}):")
        if not ents:
            print("  (no phases registered)")
        for e in ents:
            cfg = e.default_config()
            tile = f"{cfg.bm * cfg.cluster_m}x{cfg.bn}x{cfg.bk} NS={cfg.stages}" + (
                f" cluster {cfg.cluster_m}" if cfg.cluster_m > 1 else "")
            wl = f"  [worklog: {e.worklog}]" if e.worklog else ""
            print(f"  {e.phase:<3} {tile:<24} {e.summary}")
            print(f"      adds: {e.adds}{wl}")
            print(f"      shapes: {e.make().shape_rule()}")
        if fam == "sm90":
            print('  best: per shape, the phase and config a wave-arithmetic heuristic picks (gemm(phase="best"))')
        print()
    return 0


def add_list(sub):
    p = sub.add_parser("list", help="phases per arch: config, summary, what each adds",
                       description="List the registered phases of each ladder with their default config, "
                                   "a one-line summary and what each adds over the previous phase.")
    p.add_argument("--arch", type=arch_arg, help="sm90 (Hopper) or sm100 (Blackwell); default: both")
    p.set_defaults(fn=cmd_list)


# ----------------------------------------------------------------------------- compile-only reports
def compile_report(entries, targets, shapes, dump_dir=None):
    """Compile every entry for its targets at every shape. Returns ([(target, shape, [Inspection])],
    skipped lines (a phase that cannot do a shape), failure lines)."""
    from cute_gemm.inspection import dump, inspect_phase

    tables, skipped, failures = [], [], []
    for p in shapes:
        for tgt in targets:
            done = []
            for e in entries:
                if e.arch != _arch.family(tgt):
                    continue
                why = _cannot(e, p)
                if why:
                    skipped.append(why)
                    continue
                try:
                    ins = inspect_phase(e, tgt, p)
                except Exception as exc:
                    failures.append(f"FAILED to compile {e.key} for {tgt} at {p}: {one_line(exc)}")
                    continue
                done.append(ins)
                if dump_dir:
                    for path in dump(ins, e, dump_dir):
                        print(f"wrote {path}", file=sys.stderr)
            if done:
                tables.append((tgt, p, done))
    if not tables and not failures:
        raise UsageError("; ".join(dict.fromkeys(skipped)) if skipped else "no phase to compile")
    return tables, list(dict.fromkeys(skipped)), failures


def print_compile_report(tables, skipped, failures, as_json: bool = False):
    """The tables (or, ``as_json``, {target: [inspection]}) on stdout; what was skipped or failed on stderr."""
    from cute_gemm.inspection import side_by_side

    if as_json:
        print(json.dumps({t: [i.as_dict() for i in inss] for t, _, inss in tables}, indent=1))
    for tgt, p, inss in ([] if as_json else tables):
        print(f"\n== {tgt} at {p} (compile-only: PTX census = static instruction counts; resources from ptxas) ==")
        print(side_by_side(inss))
    for line in skipped:
        print(f"skipped: {line}", file=sys.stderr)
    for line in failures:
        print(line, file=sys.stderr)


def cmd_inspect(args) -> int:
    fams = [args.arch] if args.arch else list(_arch.TARGETS)
    if args.target:
        tfam = _arch.family(args.target)
        if args.arch and tfam != args.arch:
            raise UsageError(f"--target {args.target} is an {tfam} target, but --arch is {args.arch}")
        if args.all_targets:
            raise UsageError("--target names one target; drop --all-targets or --target")
        fams, targets = [tfam], [args.target]
    else:
        targets = [t for f in fams for t in (_arch.TARGETS[f] if args.all_targets else _arch.TARGETS[f][:1])]
    ents = _entries(fams, args.phase)
    if args.dump:
        writable_dir(args.dump, "--dump")
    tables, skipped, failures = compile_report(ents, targets, [args.shape], args.dump)
    print_compile_report(tables, skipped, failures, as_json=args.json)
    return 1 if failures else 0


def add_inspect(sub):
    p = sub.add_parser("inspect", help="compile-only report (no GPU needed): instruction census + resources",
                       description="Compile phases for a target without a GPU and print, side by side, the "
                                   "instruction census of the PTX (tcgen05/wgmma, cp.async, TMA loads/stores, "
                                   "multicast, setmaxnreg, stmatrix, mbarrier waits, proxy fences) and the "
                                   "resources (registers, spills, dynamic smem, threads, TMEM columns). "
                                   "Phases: {phase_ids_inline}.")
    p.add_argument("--arch", type=arch_arg, help="sm90 (Hopper) or sm100 (Blackwell); default: both")
    p.add_argument("--phase", type=phase_list_arg, help="phase id or list, e.g. 0, 2a, 0-3,5 (default: all)")
    p.add_argument("--target", type=target_arg,
                   help=f"exact target, one of {', '.join(t for ts in _arch.TARGETS.values() for t in ts)} "
                        f"(default: each arch's first)")
    p.add_argument("--all-targets", action="store_true", help="compile sm100 phases for both sm_100a and sm_103a")
    p.add_argument("--shape", type=shape_arg, default="4096,4096,4096",
                   help="M,N,K to compile for (default 4096,4096,4096)")
    p.add_argument("--dump", metavar="DIR", help="also write DIR/<arch>_phase<id>.ptx and .cubin")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.set_defaults(fn=cmd_inspect)


# ----------------------------------------------------------------------------------- timing options
def add_timing_options(p, default_peers):
    """--data, --rounds, --sustained, --peers, --cold-l2: how kernels are timed (bench, run, compare)."""
    from cute_gemm.measure import DATA_KINDS

    p.add_argument("--data", choices=list(DATA_KINDS),
                   help="what A and B hold while timed: " + "; ".join(f"{k}: {v}" for k, v in DATA_KINDS.items())
                        + " (default randn; the check always uses randn)")
    p.add_argument("--rounds", type=rounds_arg, metavar="N",
                   help=f"interleaved timing rounds; the median over rounds is reported (default {timing.ROUNDS})")
    p.add_argument("--sustained", type=seconds_arg, metavar="SECONDS",
                   help="keep each kernel replaying this long before its timed replays in every round: steady "
                        "state under the power cap (default 0; costs rounds x kernels x shapes x SECONDS)")
    p.add_argument("--peers", type=peers_arg, metavar="LIST",
                   help=f"comma list of {', '.join(peers.PEERS)}, or none (default {','.join(default_peers)}); "
                        f"a peer that is not installed or fails is reported, not timed")
    p.add_argument("--cold-l2", action="store_true",
                   help="rotate input sets larger than twice the L2 (default: L2-resident, as the worklog)")


TIMING_OPTIONS = ("data", "rounds", "sustained", "peers", "cold_l2", "best", "config", "ncu_check")


def _variants(specs, fams) -> list:
    """``--config`` specs parsed for the first of ``fams`` that has the phase (the GPU's, when there is one)."""
    out = []
    for spec in specs:
        errors = []
        for fam in fams:
            try:
                out.append(parse_variant(spec, fam))
                break
            except UsageError as exc:
                errors.append(exc)
        else:
            raise errors[0]
    return out


def parse_variant(spec: str, arch: str):
    """'8:bn=128,stages=5' -> (entry, config, 'bn=128 stages=5'); UsageError on a bad phase, field or value."""
    from cute_gemm import registry

    phase, sep, fields = spec.partition(":")
    if not sep or not fields.strip():
        raise UsageError(f"--config {spec!r}: expected PHASE:FIELD=VALUE[,FIELD=VALUE], e.g. 8:bn=128")
    try:
        entry = registry.get(arch, phase)
    except (LookupError, ValueError) as exc:
        raise UsageError(f"--config {spec!r}: {exc}") from None
    known = {f.name: f for f in dataclasses.fields(entry.config_cls)}
    over = {}
    for item in fields.split(","):
        name, eq, value = (x.strip() for x in item.partition("="))
        if not eq or name not in known:
            raise UsageError(f"--config {spec!r}: {name!r} is not a field of phase {entry.phase}'s config "
                             f"({', '.join(known)})")
        try:
            over[name] = int(value)
        except ValueError:
            raise UsageError(f"--config {spec!r}: {name}={value!r} is not an integer") from None
    # a config the phase cannot build (smem, slab count, tile) fails its row's check, not the run
    cfg = dataclasses.replace(entry.default_config(), **over)
    return entry, cfg, " ".join(f"{k}={v}" for k, v in over.items())


def _given(args, names) -> list[str]:
    """The options among ``names`` that were given on the command line (as --flags)."""
    return ["--" + n.replace("_", "-") for n in names if getattr(args, n, None) not in (None, False)]


def _time_shapes(entries, shapes, args, default_peers, progress=False, best_arch=None, variants=()) -> dict:
    """A bench-v2 document for ``entries`` and the chosen peers at ``shapes`` (GPU)."""
    from cute_gemm import bench

    names = args.peers if args.peers is not None else default_peers
    return bench.run_bench(entries, shapes, [peers.PEERS[n] for n in names],
                           data=args.data or "randn", rounds=args.rounds or timing.ROUNDS,
                           sustained_s=args.sustained or 0.0, cold_l2=args.cold_l2, progress=progress,
                           best_arch=best_arch, variants=variants)


# ----------------------------------------------------------------------------------------------- run
def _run_entry(arch: str, phase: str, shapes):
    """The entry `run` measures, after checking that it exists and can do every shape (UsageError)."""
    from cute_gemm import registry

    try:
        entry = registry.get(arch, phase)
    except LookupError as exc:
        raise UsageError(str(exc)) from None
    _refuse_unimplementable([entry], shapes)
    return entry


def cmd_run(args) -> int:
    shapes = args.shape or list(HEADLINE)
    if args.json:
        writable_file(args.json, "--json")
    if args.arch:
        _run_entry(args.arch, args.phase, shapes)
    tgt = _gpu_target()
    if tgt is None:
        raise UsageError(f"needs a Hopper (sm90) or Blackwell (sm100) GPU: {_no_gpu_reason()}; without a GPU, "
                         f"`cute-gemm inspect` shows what the kernels compile to")
    fam = _arch.family(tgt)
    if args.arch and args.arch != fam:
        raise UsageError(f"this GPU is {tgt}: {args.arch} kernels cannot run on it "
                         f"(`cute-gemm list --arch {fam}` shows the phases it runs)")
    entry = _run_entry(fam, args.phase, shapes)
    from cute_gemm import bench
    from cute_gemm.console import render

    doc = _time_shapes([entry], shapes, args, peers.VENDOR)
    for r in doc["results"]:
        if r["kind"] == "phase" and r.get("check"):
            print(_check_line(r))
    render(doc)
    if args.json:
        bench.save(doc, args.json)
        print(f"wrote {args.json}", file=sys.stderr)
    return 0 if all(r["status"] == "ok" for r in doc["results"] if r["kind"] == "phase") else 1


def _check_line(r: dict) -> str:
    chk = r["check"]
    if chk.get("error"):
        return f"{r['key']} at {r['shape']}: ERROR {chk['error']}"
    return (f"{r['key']} at {r['shape']}: check {'PASS' if chk['passed'] else 'FAIL'}, vs cuBLASLt "
            f"{chk['mismatches']} mismatches (max |err| {chk['max_abs_err']:.3g}), vs float64 rel err "
            f"{chk['rel_fro_err']:.2e} (cuBLASLt {chk['cublaslt_rel_fro_err']:.2e}), unwritten {chk['unwritten']}, "
            f"repeat {'identical' if chk['repeat_identical'] else 'DIFFERS'}")


def add_run(sub):
    p = sub.add_parser("run", help="one phase on the GPU: check vs cuBLASLt, time beside cuBLAS/cuBLASLt",
                       description="Check one phase (fresh random inputs, NaN-poisoned C; " + CHECK + ") and, "
                                   "if it passes, time it interleaved "
                                   "with cuBLAS and cuBLASLt (CUDA-graph replays, median over rounds), with the "
                                   "SM clock and power it ran at.")
    p.add_argument("--phase", required=True, type=phase_arg, help="phase id: {phase_ids_inline}")
    p.add_argument("--arch", type=arch_arg, help="must match the GPU (default: the GPU's)")
    p.add_argument("--shape", type=shape_arg, action="append", metavar="M,N,K",
                   help="repeat for several (default: 4096,4096,4096 and 1024,4096,4096)")
    add_timing_options(p, peers.VENDOR)
    p.add_argument("--json", metavar="FILE", help="also write the results as a bench-v2 JSON document")
    p.set_defaults(fn=cmd_run)


# --------------------------------------------------------------------------------------------- bench
def cmd_bench(args) -> int:
    from cute_gemm import bench

    if args.out:
        writable_file(args.out, "--out")
    if args.api:
        clash = _given(args, ("shapes", "sweep", *TIMING_OPTIONS))
        if clash:
            raise UsageError(f"--api measures its own fixed shapes and protocol; drop {', '.join(clash)}")
    tgt = _gpu_target()
    if tgt is not None and args.arch and args.arch != _arch.family(tgt):
        raise UsageError(f"this GPU is {tgt}: {args.arch} kernels cannot run on it (without --arch, bench times "
                         f"the {_arch.family(tgt)} phases)")
    fams = [args.arch] if args.arch else ([_arch.family(tgt)] if tgt else list(_arch.TARGETS))
    entries = _entries(fams, args.phases)
    variants = _variants(args.config or (), fams)  # a bad --config is refused with or without a GPU
    if tgt is None:
        return _bench_compile_only(args, entries, fams)
    writable_file(args.out or DEFAULT_OUT, "--out")
    if args.api:
        return _bench_api(args, entries)
    shapes = list(args.shapes or HEADLINE)
    if args.sweep:
        shapes += [p for p in bench.SWEEP if p not in shapes]
    peer_names = args.peers if args.peers is not None else list(peers.DEFAULT)
    seconds = bench.estimate_seconds(len(entries) + len(variants) + len(peer_names), len(shapes), args.rounds or timing.ROUNDS,
                                     args.sustained or 0.0)
    if seconds > 60:
        print(f"timing takes at least ~{seconds / 60:.0f} min of GPU time (plus checks and compiles)", file=sys.stderr)
    doc = _time_shapes(entries, shapes, args, peers.DEFAULT, progress=not args.quiet,
                       best_arch=_arch.family(tgt) if args.best else None,
                       variants=variants)
    if args.ncu_check:
        checked = [p for p in shapes if str(p) in {"512x512x512", "1024x1024x1024", "4096x4096x4096"}] or shapes
        doc["ncu_check"] = bench.ncu_check(doc, checked, _arch.family(tgt),
                                           progress=lambda line: print(line, file=sys.stderr))
    return _finish(args, doc, plots=not args.no_plot)


def _finish(args, doc, plots: bool) -> int:
    """Print the table, write the JSON (and plots), exit 1 if a phase failed its check."""
    from cute_gemm import bench
    from cute_gemm.console import render

    render(doc)
    out = args.out or DEFAULT_OUT
    bench.save(doc, out)
    print(f"wrote {out}", file=sys.stderr)
    if plots and any(r.get("timing") for r in doc["results"]):
        try:
            from cute_gemm.plot import plot_all
        except ImportError:
            print("matplotlib is not installed: skipped the plots (pip install 'cute-gemm[plot]')", file=sys.stderr)
        else:
            for path in plot_all(doc, os.path.splitext(out)[0]):
                print(f"wrote {path}", file=sys.stderr)
    bad = [r for r in doc["results"] if r["kind"] == "phase" and r["status"] in ("failed", "error")]
    return 1 if bad else 0


def _bench_api(args, entries) -> int:
    from cute_gemm import bench
    from cute_gemm.api_bench import run_api
    from cute_gemm.console import render_api

    api = run_api(entries)
    doc = bench.document([], data="randn", protocol={"rounds": None, "sustained_s": None, "cold_l2": False,
                                                     "timer": "wall clock, back to back"},
                         telemetry={"available": False, "reason": "not recorded for --api"}, api=api)
    render_api(api)
    return _finish(args, doc, plots=False)


def _bench_compile_only(args, entries, fams) -> int:
    """Without a GPU: the compile-only report at the given shapes; --out writes it as JSON."""
    from cute_gemm import environment

    given = _given(args, ("sweep", "api", *TIMING_OPTIONS))
    if given:
        raise UsageError(f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} only to timing on a GPU, "
                         f"and there is none here "
                         f"({_no_gpu_reason()}); without them bench prints the compile-only report")
    shapes = list(args.shapes or [Problem(4096, 4096, 4096)])
    print(f"No GPU to benchmark on ({_no_gpu_reason()}): showing the compile-only report instead. Each phase is "
          f"compiled for its target; on an H200 (sm90) or a Blackwell GPU (sm100) bench checks and times them.",
          file=sys.stderr)
    tables, skipped, failures = compile_report(entries, [_arch.TARGETS[f][0] for f in fams], shapes)
    print_compile_report(tables, skipped, failures)
    if args.out:
        doc = {"schema": "cute-gemm/inspect-v1", **environment.record(), "reason": _no_gpu_reason(),
               "shapes": [str(p) for p in shapes], "skipped": skipped, "failures": failures,
               "reports": [{"target": t, "shape": str(p), "phases": [i.as_dict() for i in inss]}
                           for t, p, inss in tables]}
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        print(f"wrote {args.out} (the compile-only report)", file=sys.stderr)
    return 1 if failures else 0


def add_bench(sub):
    p = sub.add_parser(
        "bench", help="the main job: every phase checked then timed beside its peers, JSON + plots",
        description="On a GPU: for every phase of the GPU's arch (or --phases) and every shape, check against "
                    "cuBLASLt first (a failing phase is reported, never timed), then time all phases and peers of "
                    "the shape together: CUDA graphs of back-to-back launches (>= "
                    f"{timing.TARGET_REPLAY_MS:g} ms per replay), replayed round robin over --rounds rounds on "
                    "the same inputs, median per kernel, with the SM clock, power, TFLOP/s per kW and throttle "
                    "reasons recorded (NVML) while each was timed. Prints a table, writes JSON (--out) and PNG "
                    "plots beside it. --api instead measures the host overhead of the Python API. "
                    "Without a GPU: the compile-only report of the selected phases at --shapes (default 4096^3); "
                    "--out writes it as JSON; timing options are refused.")
    p.add_argument("--arch", type=arch_arg, help="sm90 or sm100; must match the GPU (default: the GPU's, or "
                                                 "both ladders without a GPU)")
    p.add_argument("--phases", type=phase_list_arg, help="e.g. 0-3,5 (default: all registered for the arch)")
    p.add_argument("--shapes", type=shape_arg, nargs="+", metavar="M,N,K",
                   help="default: 4096,4096,4096 1024,4096,4096")
    p.add_argument("--sweep", action="store_true", help=f"add square sizes {', '.join(str(s.m) for s in SWEEP)}")
    add_timing_options(p, peers.DEFAULT)
    p.add_argument("--api", action="store_true",
                   help="measure the Python API's host overhead instead (torch.mm vs cute_gemm.gemm vs the "
                        "compiled kernel alone, per call at 256^3 and in a loop at 1024x4096x4096, and each "
                        "phase's first-call compile time); combine with --phases")
    p.add_argument("--best", action="store_true",
                   help='add a row "best": the phase and config cute_gemm.gemm(phase="best") picks for each shape '
                        "(a wave-arithmetic heuristic over phase 7's tile widths and phase 8), checked and timed like a phase")
    p.add_argument("--config", action="append", metavar="PHASE:FIELD=V[,FIELD=V]",
                   help="add a row for a phase with config overrides, checked and timed like a phase, e.g. "
                        "--config 8:bn=128 --config 7:bn=192,stages=5 (repeatable; the fields: `cute-gemm list`)")
    p.add_argument("--ncu-check", action="store_true",
                   help="after timing, profile one launch of each timed phase and cuBLAS with Nsight Compute at "
                        "512^3, 1024^3 and 4096^3 (those of --shapes, else all) and record, per kernel, graph "
                        "time / ncu duration (they should agree within 5%%)")
    p.add_argument("--out", help=f"JSON path; plots go beside it (default on a GPU: {DEFAULT_OUT}; without a GPU "
                                 f"only written when given)")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG plots")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(fn=cmd_bench)


# ------------------------------------------------------------------------------------------- compare
def cmd_compare(args) -> int:
    from cute_gemm import registry
    from cute_gemm.inspection import inspect_phase, side_by_side

    tgt = _gpu_target()
    default_arch = args.arch or (_arch.family(tgt) if tgt else "sm90")
    try:
        ea, eb = registry.resolve(args.a, default_arch), registry.resolve(args.b, default_arch)
    except (ValueError, LookupError) as exc:
        raise UsageError(str(exc)) from None
    _refuse_unimplementable([ea, eb], [args.shape])
    p = args.shape
    print(f"{ea.key}: {ea.summary}\n{eb.key}: {eb.summary}\n{eb.key} adds: {eb.adds}\n")
    ca, cb = dataclasses.asdict(ea.default_config()), dataclasses.asdict(eb.default_config())
    print("config differences:")
    diff = [(k, ca.get(k), cb.get(k)) for k in dict.fromkeys([*ca, *cb]) if ca.get(k) != cb.get(k)]
    for k, va, vb in diff:
        print(f"  {k:<16} {str(va):>10} -> {vb}")
    if not diff:
        print("  (same tile, stages and cluster: the difference is in the code, below)")
    inss = [inspect_phase(e, None, p) for e in (ea, eb)]
    print(f"\ngenerated code at {p} (compile-only):")
    print(side_by_side(inss))
    if tgt is None:
        print(f"\n(no timing: {_no_gpu_reason()})")
        return 0
    runnable = [e for e in (ea, eb) if e.arch == _arch.family(tgt)]
    if not runnable:
        print(f"\n(no timing: neither phase runs on this {tgt} GPU)")
        return 0
    from cute_gemm.console import render

    doc = _time_shapes(runnable, [p], args, peers.VENDOR)
    print()
    render(doc)
    tf = {r["key"]: r["timing"]["tflops"] for r in doc["results"] if r.get("timing")}
    if ea.key in tf and eb.key in tf:
        print(f"speed-up {eb.key} / {ea.key}: {tf[eb.key] / tf[ea.key]:.3f}x (same run, interleaved)")
    if len(runnable) == 2 and not args.no_profile:
        _compare_profiles(runnable, p)
    return 0


def _compare_profiles(entries, p) -> None:
    """What the step changed in the machine: Nsight Compute counters of both phases and their deltas."""
    try:
        doc = profile.run_profile(entries, f"{p.m},{p.n},{p.k}", peers=())
    except Exception as exc:  # no ncu, no counter access: the timings above stand on their own
        print(f"\n(no profile: {one_line(exc)})")
        return
    kernels = {k["label"]: k for k in doc["kernels"]}
    a, b = (kernels.get(e.key) for e in entries)
    if a and b:
        print("\nwhere the cycles went (Nsight Compute, one launch each, clocks untouched):")
        print(profile.render_deltas(a, b))


def add_compare(sub):
    p = sub.add_parser("compare", help="two phases side by side: config, generated code, timings",
                       description="Compare two phases, e.g. `compare 2 3`, `compare sm90:4 sm90:5`, "
                                   "`compare sm90:3 sm100:3`: config differences, instruction census and "
                                   "resources of both compiled kernels, and with a GPU both timed together "
                                   "beside cuBLAS/cuBLASLt.")
    p.add_argument("a", help="phase (arch:phase or phase)")
    p.add_argument("b", help="phase (arch:phase or phase)")
    p.add_argument("--arch", type=arch_arg, help="arch for bare phase ids (default: the GPU's, else sm90)")
    p.add_argument("--shape", type=shape_arg, default="4096,4096,4096", help="M,N,K (default 4096,4096,4096)")
    add_timing_options(p, peers.VENDOR)
    p.add_argument("--no-profile", action="store_true",
                   help="on a GPU, skip the Nsight Compute profile of both phases and its deltas")
    p.set_defaults(fn=cmd_compare)


# ---------------------------------------------------------------------------------------------- plot
def cmd_plot(args) -> int:
    from cute_gemm import bench

    path = readable_file(args.results)
    try:
        doc = bench.load(path)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot read {path} ({exc.strerror or exc})") from None
    if not any(r.get("timing") for r in doc["results"]):
        raise UsageError(f"{path} has no timed results to plot")
    prefix = args.out or os.path.splitext(path)[0]
    writable_dir(os.path.dirname(prefix) or ".", "--out")
    try:
        from cute_gemm.plot import plot_all
    except ImportError:
        raise UsageError("matplotlib is not installed (pip install 'cute-gemm[plot]')") from None
    for out in plot_all(doc, prefix):
        print(f"wrote {out}")
    return 0


def add_plot(sub):
    p = sub.add_parser("plot", help="PNG plots from a bench JSON: the ladder, the worklog side by side, the sweep",
                       description="Draw, from a bench-v2 result: the worklog's Figure 1 for our data (a bar per "
                                   "phase at each headline shape with its gain and SM clock, the peers and the "
                                   "peak as lines), each phase's % of the vendor library beside the worklog's "
                                   "B300 numbers, and, when the result has a sweep, TFLOP/s against size.")
    p.add_argument("results", help="a JSON file written by `cute-gemm bench`")
    p.add_argument("--out", help="output prefix (default: the JSON path without .json)")
    p.set_defaults(fn=cmd_plot)


# ------------------------------------------------------------------------------------------ selftest
def cmd_selftest(args) -> int:
    from cute_gemm import selftest

    argv = ["--out", args.out, "--timeout", str(args.timeout)] + (["--phases", args.phases] if args.phases else [])
    return selftest.main(argv + (["--list"] if args.list else []))


def add_selftest(sub):
    p = sub.add_parser("selftest", help="on a Blackwell GPU: every sm100 phase checked, a shareable JSON report",
                       description="For a Blackwell (sm100) owner: check every sm100 phase on aligned, ragged and "
                                   "stream-K shapes against cuBLASLt and float64, each check in its own process under "
                                   "a timeout (a hang is reported, not waited on), and write a JSON report (GPU, "
                                   "driver, versions, per phase and shape: pass / fail / hang / error / skip). "
                                   "Without an sm100 GPU it says so in one line.")
    p.add_argument("--out", default="selftest-sm100.json", help="JSON report (default %(default)s)")
    p.add_argument("--phases", help="phase list, e.g. 0-3,7 (default: every sm100 phase)")
    p.add_argument("--timeout", type=int, default=300, help="seconds per check before it counts as a hang")
    p.add_argument("--list", action="store_true", help="list the checks and exit (no GPU needed)")
    p.set_defaults(fn=cmd_selftest)


# ---------------------------------------------------------------------------------------------- main
# Each registers one sub-command (help order). A command from another module is one more entry here.
COMMANDS = (add_list, add_inspect, add_run, add_bench, add_compare, add_plot, profile.add_parser, add_selftest)


def build_parser() -> Parser:
    ap = Parser(prog=PROG, description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    for p in (ap, *sub.choices.values()):
        p.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")
    return ap


def _quiet_stdout():
    """After stdout's reader went away: point stdout at /dev/null so the exit flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv or os.environ.get("CUTE_GEMM_DEBUG", "") not in ("", "0")
    prog = PROG
    try:
        ap = build_parser()
        args = ap.parse_args(argv)
        if not getattr(args, "fn", None):
            ap.print_help()
            return 0
        prog = f"{PROG} {args.cmd}"
        rc = args.fn(args)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler, not at interpreter exit
        return rc
    except SystemExit as exc:  # argparse: --help, --version, or a one-line usage error already printed
        return exc.code if isinstance(exc.code, int) else 2
    except UsageError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        _quiet_stdout()
        return 141
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if debug:
            raise
        print(f"{prog}: unexpected {one_line(exc)} (--debug or CUTE_GEMM_DEBUG=1 shows the traceback)",
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

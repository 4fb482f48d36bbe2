"""Steps several commands share: is there a GPU and which ladder it runs, the phases a command selects,
the compile-only report (``inspect``, and ``bench`` without a GPU), the timing options and the timed
run behind ``bench``, ``run`` and ``compare``, and ``--config`` variants."""

from __future__ import annotations

import json
import sys

from cute_gemm.cli.args import UsageError, peers_arg, rounds_arg, seconds_arg
from cute_gemm.errors import one_line
from cute_gemm.measure import peers, timing
from cute_gemm.runtime import arch as _arch
from cute_gemm.runtime.problem import Problem
from phases.operands import AB_DTYPES, C_DTYPES, LAYOUTS, WORKLOG, Operands


# ------------------------------------------------------------------------------------------- the GPU
def gpu_target() -> str | None:
    """The exact target of GPU 0 ('sm_90a', ...), or None without a GPU that runs a ladder."""
    try:
        import torch

        if not torch.cuda.is_available():
            return None
        return _arch.target_of_capability(*torch.cuda.get_device_capability(0))
    except Exception:
        return None


def no_gpu_reason() -> str:
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA GPU is visible to torch"
    major, minor = torch.cuda.get_device_capability(0)
    return f"{torch.cuda.get_device_name(0)} (compute capability {major}.{minor}) runs neither ladder"


# ------------------------------------------------------------------------------------------ phases
def entries(fams: list[str], phases: list[str] | None):
    """The registered entries of ``fams`` restricted to ``phases``; UsageError naming a missing one. Of several
    ladders (no --arch) each gives those of ``phases`` it has (phase 8 is sm90's only); a phase none has is the
    error."""
    from cute_gemm.measure.suite import entries_for
    from cute_gemm.runtime import registry

    if len(fams) > 1 and phases:
        found = [e for f in fams for e in registry.all_entries(f) if e.phase in phases]
        missing = [p for p in phases if p not in {e.phase for e in found}]
        if not missing:
            return found
        raise UsageError(f"no kernel for phase(s) {', '.join(missing)} in {' or '.join(fams)}")
    try:
        return [e for f in fams for e in entries_for(f, phases)]
    except LookupError as exc:
        raise UsageError(str(exc)) from None


def cannot(entry, p: Problem, config=None, operands: Operands = WORKLOG) -> str | None:
    """Why ``entry`` (with ``config``) cannot do ``p`` with ``operands`` (its can_implement reasons in one
    line), or None."""
    from cute_gemm.runtime.plan import refusals

    why = refusals(entry.make(config, operands), p.m, p.n, p.k)
    ops = "" if operands == WORKLOG else f" with {operands.label()}"
    return f"{entry.key} cannot do {p}{ops}: {'; '.join(why)}" if why else None


def refuse_unimplementable(entries, shapes, operands: Operands = WORKLOG):
    """UsageError (one line) when a selected phase cannot do a requested shape with the operands."""
    for e in entries:
        for p in shapes:
            why = cannot(e, p, operands=operands)
            if why:
                raise UsageError(why)


def parse_variant(spec: str, arch: str, call: dict | None = None):
    """'8:bn=128,stages=5' -> (entry, config, 'bn=128 stages=5'); UsageError on a bad phase, field or value, or a
    config the phase's rules refuse (``PhaseEntry.configured``) -- before anything compiles. ``call``: config
    fields the call itself sets (a fused epilogue's: the gated pairs halve the C staging the rules count), set
    where the phase's config has them before the rules read it; the label is the spec's own."""
    from cute_gemm.errors import UnsupportedError
    from cute_gemm.runtime import registry

    phase, fields = registry.split_spec(spec)
    if not (fields or "").strip():
        raise UsageError(f"--config {spec!r}: expected PHASE:FIELD=VALUE[,FIELD=VALUE], e.g. 8:bn=128")
    try:
        entry = registry.get(arch, phase)
        over = registry.parse_overrides(fields)
        cfg = entry.configured({**over, **{f: v for f, v in (call or {}).items()
                                           if f in entry.config_cls.__dataclass_fields__}})
    except (LookupError, ValueError, UnsupportedError) as exc:  # an InputError is a ValueError
        raise UsageError(f"--config {spec!r}: {exc}") from None
    return entry, cfg, registry.overrides_label(over)


def buildable_variant(spec: str, arch: str, operands=None):
    """'10:bm=128,cluster_m=4' (or a bare phase id) -> (entry, the overrides or None) once that config compiles for
    ``arch`` with ``operands`` (a ``phases.operands.Operands``; None: the worklog's) -- on a CPU too, the compile is
    host-only; UsageError '--config SPEC: why' otherwise. The sanitizer's and the stress run's ``--config``: what they
    will launch is checked before they look for a GPU."""
    from cute_gemm.runtime import registry
    from cute_gemm.runtime.gemm import compile_only

    phase, over = registry.split_spec(spec)
    ops = {} if operands is None else {"layout": operands.layout, "dtype": operands.ab, "out_dtype": operands.c}
    try:
        entry = registry.get(arch, phase)
        compile_only(phase, over, arch, **ops)  # the config's own checks (cluster_m=4 needs bn % 32 == 0)
    except Exception as exc:  # an unknown phase or field, a config that does not build
        raise UsageError(f"--config {spec}: {exc}") from None
    return entry, over


def variants(specs, fams, call: dict | None = None) -> list:
    """``--config`` specs parsed for the first of ``fams`` that has the phase (the GPU's, when there is one): a
    config that ladder refuses is refused, not tried on the next; ``call``: as ``parse_variant``'s."""
    from cute_gemm.runtime import registry

    out = []
    for spec in specs:
        phase = registry.split_spec(spec)[0]
        try:
            has = [f for f in fams if registry.parse_phase(phase) in registry.phase_ids(f)]
        except ValueError:  # an unknown phase id: parse_variant says so
            has = []
        out.append(parse_variant(spec, (has or fams)[0], call))
    return out


# ----------------------------------------------------------------------------- compile-only reports
def compile_report(entries, targets, shapes, dump_dir=None, variants=(), operands: Operands = WORKLOG):
    """Compile every entry (and every (entry, config, label) variant) for its targets and ``operands`` at every
    shape. Returns ([(target, shape, [Inspection])], skipped lines (a phase that cannot do a shape or the
    operands), failure lines)."""
    from cute_gemm.profiling.codegen import dump, inspect_phase

    todo = [(e, None, "") for e in entries] + list(variants)
    tables, skipped, failures = [], [], []
    for p in shapes:
        for tgt in targets:
            done = []
            for e, cfg, label in todo:
                if e.arch != _arch.family(tgt):
                    continue
                name = f"{e.key} {label}".strip()
                try:
                    why = cannot(e, p, cfg, operands)
                except Exception as exc:  # a config the phase cannot even be made with
                    failures.append(f"FAILED to compile {name} for {tgt}: {one_line(exc)}")
                    continue
                if why:
                    skipped.append(why if not label else why.replace(e.key, name, 1))
                    continue
                try:
                    ins = inspect_phase(e, tgt, p, cfg, operands)
                except Exception as exc:
                    failures.append(f"FAILED to compile {name} for {tgt} at {p}: {one_line(exc)}")
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
    from cute_gemm.report.tables import side_by_side

    if as_json:
        print(json.dumps({t: [i.as_dict() for i in inss] for t, _, inss in tables}, indent=1))
    for tgt, p, inss in ([] if as_json else tables):
        ops = "" if inss[0].operands == WORKLOG.label() else f", {inss[0].operands}"
        print(f"\n== {tgt} at {p}{ops} (compile-only: PTX census = static instruction counts; resources from ptxas) ==")
        print(side_by_side(inss))
    for line in skipped:
        print(f"skipped: {line}", file=sys.stderr)
    for line in failures:
        print(line, file=sys.stderr)


# The end of bench's compile-only report (no GPU): how to read the table, and where to go next.
COMPILE_ONLY_LEGEND = """\
How to read it: a column per phase; the rows above the gap count instructions in the PTX (static occurrences,
'.' = none: wgmma/tcgen05 MMAs, cp.async and TMA copies, multicast, mbarrier waits, fences); below it, from
ptxas and the kernel: registers per thread, spill_bytes (stores + loads; 0 is good), smem_bytes per CTA,
threads per CTA, tmem_cols (sm100), grid_ctas launched at the shape, cluster (CTAs per cluster), compile_s.
Next: `cute-gemm inspect --phase 5 --layout nt` (one phase, other operands, --dump for the PTX),
`cute-gemm compare 4 5` (what a step changed), `cute-gemm report --out report.html` (every step in a browser)."""


# ----------------------------------------------------------------------------------------- timing
TIMING_OPTIONS = ("data", "rounds", "sustained", "peers", "cold_l2", "best", "config", "ncu_check", "layout", "dtype",
                  "out_dtype")


def add_timing_options(p, default_peers):
    """--data, --rounds, --sustained, --peers, --cold-l2 (how kernels are timed) and --layout, --dtype,
    --out-dtype (what they compute): bench, run, compare."""
    from cute_gemm.measure.inputs import DATA_KINDS
    from cute_gemm.measure.timing import COLD_L2_FACTOR

    p.add_argument("--data", choices=list(DATA_KINDS),
                   help="what A and B hold while timed (default randn, the worklog's; ints in [-3, 3]; uniform "
                        "in [-1, 1]); the check always uses randn")
    p.add_argument("--rounds", type=rounds_arg, metavar="N",
                   help=f"interleaved timing rounds; the median over rounds is reported (default {timing.ROUNDS})")
    p.add_argument("--sustained", type=seconds_arg, metavar="SECONDS",
                   help="replay each kernel this long before its timed replays, every round: steady state "
                        "under the power cap (default 0)")
    p.add_argument("--peers", type=peers_arg, metavar="LIST",
                   help=f"comma list of {', '.join(peers.PEERS)}, or none (default {','.join(default_peers)}); "
                        f"a peer that is not installed, cannot take the layout or dtypes, or fails is reported, "
                        f"not timed")
    p.add_argument("--cold-l2", action="store_true",
                   help=f"rotate input sets that together hold >= {COLD_L2_FACTOR}x the L2, so every launch reads "
                        f"from HBM (default: L2-resident, as the worklog)")
    add_operand_options(p)


def add_operand_options(p):
    """--layout, --dtype, --out-dtype: the problem every kernel of the run computes (peers included)."""
    p.add_argument("--layout", choices=list(LAYOUTS),
                   help="majors of A and B, BLAS letters (first A, then B): n = row-major, t = column-major (the "
                        ".t() of a contiguous tensor); nt is x @ W.T with an nn.Linear weight W [N,K] "
                        "(default nn, the worklog's)")
    p.add_argument("--dtype", choices=list(AB_DTYPES), help="A and B (default fp16); fp32 accumulate either way")
    p.add_argument("--out-dtype", choices=list(C_DTYPES), help="C, row-major (default fp32)")


def operands_from(args) -> Operands:
    """The operands the options ask for (the worklog's where none is given)."""
    return Operands.of(getattr(args, "layout", None) or "nn", getattr(args, "dtype", None) or "fp16",
                       getattr(args, "out_dtype", None) or "fp32")


def given(args, names) -> list[str]:
    """The options among ``names`` that were given on the command line (as --flags)."""
    return ["--" + n.replace("_", "-") for n in names if getattr(args, n, None) not in (None, False)]


def time_shapes(entries, shapes, args, default_peers, progress=False, best_arch=None, variants=()) -> dict:
    """A bench-v2 document for ``entries`` and the chosen peers at ``shapes`` (GPU)."""
    from cute_gemm.measure import suite

    names = args.peers if args.peers is not None else default_peers
    return suite.run_bench(entries, shapes, [peers.PEERS[n] for n in names],
                           data=args.data or "randn", rounds=args.rounds or timing.ROUNDS,
                           sustained_s=args.sustained or 0.0, cold_l2=args.cold_l2, progress=progress,
                           best_arch=best_arch, variants=variants, operands=operands_from(args))


def check_line(r: dict) -> str:
    """A phase row's check in one line (``run``)."""
    chk = r["check"]
    ops = f" [{chk['operands']}]" if chk.get("operands") and chk["operands"] != WORKLOG.label() else ""
    if chk.get("error"):
        return f"{r['key']} at {r['shape']}{ops}: ERROR {chk['error']}"
    return (f"{r['key']} at {r['shape']}{ops}: check {'PASS' if chk['passed'] else 'FAIL'}, vs cuBLASLt "
            f"{chk['mismatches']} mismatches (max |err| {chk['max_abs_err']:.3g}), vs float64 rel err "
            f"{chk['rel_fro_err']:.2e} (cuBLASLt {chk['cublaslt_rel_fro_err']:.2e}), unwritten {chk['unwritten']}, "
            f"repeat {'identical' if chk['repeat_identical'] else 'DIFFERS'}")

"""``cute-gemm bench``: the main job. On a GPU every phase of its ladder checked, then timed beside the
peers (table, JSON, plots); without one, the compile-only report of the phases, and why."""

from __future__ import annotations

import argparse
import json
import os
import sys

from cute_gemm.cli.args import UsageError, arch_arg, argtype, phase_list_arg, shape_arg, writable_file
from cute_gemm.cli import steps
from cute_gemm.cli.steps import (TIMING_OPTIONS, add_timing_options, compile_report, entries, given,
                                 print_compile_report, time_shapes, variants)
from cute_gemm.measure import peers, timing
from cute_gemm.runtime import arch as _arch
from cute_gemm.runtime.problem import Problem

DEFAULT_OUT = "bench/results/latest.json"


def run(args) -> int:
    from cute_gemm.measure import suite

    if args.out:
        writable_file(args.out, "--out")
    if args.epilogue is not None:  # the fused epilogue beside the unfused sequence and quack: a run of its own
        return _epilogue(args)
    if args.api:
        clash = given(args, ("shapes", "sweep", "set", *TIMING_OPTIONS))
        if clash:
            raise UsageError(f"--api measures its own fixed shapes and protocol; drop {', '.join(clash)}")
    tgt = steps.gpu_target()
    if tgt is not None and args.arch and args.arch != _arch.family(tgt):
        raise UsageError(f"this GPU is {tgt}: {args.arch} kernels cannot run on it (without --arch, bench times "
                         f"the {_arch.family(tgt)} phases)")
    fams = [args.arch] if args.arch else ([_arch.family(tgt)] if tgt else list(_arch.TARGETS))
    ents = entries(fams, args.phases)
    extra = variants(args.config or (), fams)  # a bad --config is refused with or without a GPU
    if tgt is None:
        return _compile_only(args, ents, fams, extra)
    writable_file(args.out or DEFAULT_OUT, "--out")
    if args.api:
        return _api(args, ents)
    shapes = list(args.shapes or ([] if args.set else suite.HEADLINE))
    if args.set:  # a set's own operands per shape (Problem, Operands), but those the run gives replace them
        shapes += [c for c in suite.set_cases(args.set, args.layout, args.dtype, args.out_dtype) if c not in shapes]
        if args.ncu_check and any(not isinstance(c, Problem) and c[1] != steps.operands_from(args) for c in shapes):
            raise UsageError(f"--ncu-check profiles the run's operands, and --set {args.set} names its own per shape: "
                             f"give --layout, --dtype and --out-dtype with it, or drop --ncu-check")
    if args.sweep:
        shapes += [p for p in suite.SWEEP if p not in shapes]
    peer_names = args.peers if args.peers is not None else list(peers.DEFAULT)
    seconds = suite.estimate_seconds(len(ents) + len(extra) + len(peer_names), len(shapes),
                                     args.rounds or timing.ROUNDS, args.sustained or 0.0)
    if seconds > 60:
        print(f"timing takes at least ~{seconds / 60:.0f} min of GPU time (plus checks and compiles)", file=sys.stderr)
    doc = time_shapes(ents, shapes, args, peers.DEFAULT, progress=not args.quiet,
                      best_arch=_arch.family(tgt) if args.best else None, variants=extra)
    if args.ncu_check:
        from cute_gemm.profiling.ncu_check import ncu_check

        checked = [p for p in shapes if str(p) in {"512x512x512", "1024x1024x1024", "4096x4096x4096"}] or shapes
        doc["ncu_check"] = ncu_check(doc, checked, _arch.family(tgt), progress=lambda line: print(line, file=sys.stderr))
    return _finish(args, doc, plots=not args.no_plot)


def _epilogue(args) -> int:
    """``cute-gemm bench --epilogue SPEC`` from its parsed arguments: the options checked, then the timed run
    (``measure.epilogue_bench.run``, a GPU) or what it would time (none; exit 0, ``--out`` the plan as JSON)."""
    from cute_gemm.measure import environment, epilogue_bench as eb, results, sets, suite
    from cute_gemm.runtime import registry
    from phases.epilogue import EpilogueFields
    from phases.operands import Operands

    clash = given(args, ("api", "best", "phases", "peers", "ncu_check"))
    if clash:
        raise UsageError(f"--epilogue times its own variants (fused, unfused torch ops, quack) with phase=\"best\" "
                         f"(and --config's phases); drop {', '.join(clash)}")
    spec = args.epilogue
    tgt = steps.gpu_target()
    configs = list(args.config or ())  # each checked here (phase, fields, the phase's rules), with or without a GPU
    variants(configs, [args.arch] if args.arch else [_arch.family(tgt)] if tgt else ["sm90"], spec.config_fields())
    for c in configs:
        fields = registry.parse_overrides(registry.split_spec(c)[1])
        named = [f for f in fields if f in EpilogueFields.__dataclass_fields__]
        if named:
            raise UsageError(f"--config {c}: {', '.join(named)} comes from --epilogue {spec.text()} (the same epilogue "
                             f"for every variant); give the phase's other fields")
    ops = Operands.of(args.layout or eb.DEFAULT_OPERANDS.layout, args.dtype or eb.DEFAULT_OPERANDS.ab,
                      args.out_dtype or eb.DEFAULT_OPERANDS.c)
    shapes = list(args.shapes or [])
    if args.set:  # the set's shapes, computed with the run's operands (a set's own per-shape operands do not apply)
        shapes += [p for p in sets.get(args.set).problems if p not in shapes]
    if args.sweep:
        shapes += [p for p in suite.SWEEP if p not in shapes]
    shapes = shapes or list(suite.HEADLINE)
    if tgt is not None and args.arch and args.arch != _arch.family(tgt):
        raise UsageError(f"this GPU is {tgt}: {args.arch} kernels cannot run on it (without --arch, bench times "
                         f"the {_arch.family(tgt)} phases)")
    if tgt is None:
        reason = steps.no_gpu_reason()
        print("\n".join(eb.describe(spec, shapes, ops, reason, args.arch, configs)), flush=True)
        if args.out:
            plan = {"schema": "cute-gemm/epilogue-plan-v1", **environment.record(), "reason": reason,
                    "epilogue": spec.text(), "operands": results.operands_record(ops),
                    "shapes": [str(p) for p in shapes], "variants": eb.describe_variants(spec, args.arch, configs),
                    "quack": eb.quack_missing() or "installed", "check": eb.CHECK}
            with open(args.out, "w") as f:
                json.dump(plan, f, indent=1)
                f.write("\n")
            print(f"wrote {args.out} (what would be timed)", file=sys.stderr)
        return 0
    out = args.out or eb.DEFAULT_OUT
    writable_file(out, "--out")
    doc = eb.run(spec, shapes, ops, data=args.data or "randn", rounds=args.rounds, sustained_s=args.sustained or 0.0,
                 cold_l2=True, arch=args.arch, progress=not args.quiet, configs=configs)
    print("\n".join(eb.table(doc)))
    results.save(doc, out)
    print(f"wrote {out}", file=sys.stderr)
    bad = [r for r in doc["results"] if r["kind"] == "phase" and r["status"] in ("failed", "error")]  # ours
    return 1 if bad else 0


def _finish(args, doc, plots: bool) -> int:
    """Print the table, write the JSON (and plots), exit 1 if a phase failed its check."""
    from cute_gemm.measure import results
    from cute_gemm.report.console import render

    render(doc)
    out = args.out or DEFAULT_OUT
    results.save(doc, out)
    print(f"wrote {out}", file=sys.stderr)
    if plots and any(r.get("timing") for r in doc["results"]):
        try:
            from cute_gemm.report.plot import plot_all
        except ImportError:
            print("matplotlib is not installed: skipped the plots (pip install 'cute-gemm[plot]')", file=sys.stderr)
        else:
            for path in plot_all(doc, os.path.splitext(out)[0]):
                print(f"wrote {path}", file=sys.stderr)
    bad = [r for r in doc["results"] if r["kind"] == "phase" and r["status"] in ("failed", "error")]
    return 1 if bad else 0


def _api(args, ents) -> int:
    from cute_gemm.measure import results
    from cute_gemm.measure.host_overhead import run_api
    from cute_gemm.report.console import render_api

    api = run_api(ents)
    doc = results.document([], data="randn", protocol={"rounds": None, "sustained_s": None, "cold_l2": False,
                                                       "timer": "wall clock, back to back"},
                           telemetry={"available": False, "reason": "not recorded for --api"}, api=api)
    render_api(api)
    return _finish(args, doc, plots=False)


def _compile_only(args, ents, fams, extra) -> int:
    """Without a GPU: the compile-only report at the given shapes (--config variants compiled too: whether
    they build is known without a GPU); --out writes it as JSON."""
    from cute_gemm.measure import environment

    timing_only = given(args, ("sweep", "set", "api", *(o for o in TIMING_OPTIONS if o != "config")))
    if timing_only:
        raise UsageError(f"{', '.join(timing_only)} {'applies' if len(timing_only) == 1 else 'apply'} only to timing on a GPU, "
                         f"and there is none here "
                         f"({steps.no_gpu_reason()}); without them bench prints the compile-only report")
    shapes = list(args.shapes or [Problem(4096, 4096, 4096)])
    # the report's first line says what it is and why, on stdout with it (not after it, on stderr)
    print(f"No GPU to benchmark on ({steps.no_gpu_reason()}): showing the compile-only report instead. Each phase is "
          f"compiled for its target; on an H200 (sm90) or a Blackwell GPU (sm100) bench checks and times them.",
          flush=True)
    tables, skipped, failures = compile_report(ents, [_arch.TARGETS[f][0] for f in fams], shapes, variants=extra)
    print_compile_report(tables, skipped, failures)
    print("\n" + steps.COMPILE_ONLY_LEGEND)
    if args.out:
        doc = {"schema": "cute-gemm/inspect-v1", **environment.record(), "reason": steps.no_gpu_reason(),
               "shapes": [str(p) for p in shapes], "skipped": skipped, "failures": failures,
               "reports": [{"target": t, "shape": str(p), "phases": [i.as_dict() for i in inss]}
                           for t, p, inss in tables]}
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        print(f"wrote {args.out} (the compile-only report)", file=sys.stderr)
    return 1 if failures else 0


DESCRIPTION = ("On a GPU: each phase (or --phases) checked against cuBLASLt, then timed beside the peers (CUDA "
               "graphs, interleaved rounds): a table, JSON (--out), plots. Without a GPU: the compile-only report. "
               "More in the README (Commands).")


def _epilogue_spec(text: str):
    from cute_gemm.measure.epilogue_bench import parse_spec

    return parse_spec(text)


class ListSets(argparse.Action):
    """``--list-sets``: print every named shape set, a line each, and exit 0 (with or without a GPU)."""

    def __init__(self, option_strings, dest, **kw):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        from cute_gemm.measure import sets

        print("\n".join(sets.listing()))
        parser.exit(0)


def add_set_options(p):
    """--set NAME and --list-sets (bench, tune)."""
    from cute_gemm.measure import sets

    p.add_argument("--set", type=argtype(sets.check_name), metavar="NAME",
                   help="a named set (see --list-sets); --layout, --dtype, --out-dtype replace its per-shape operands")
    p.add_argument("--list-sets", action=ListSets, help="print the named sets, a line each, and exit")


def add_arguments(p):
    from cute_gemm.measure.suite import SWEEP

    p.add_argument("--arch", type=arch_arg, help="sm90 or sm100 (default: the GPU's; both without a GPU)")
    p.add_argument("--phases", type=phase_list_arg, help="e.g. 0-3,5 (default: all of the arch)")
    p.add_argument("--shapes", type=shape_arg, nargs="+", metavar="M,N,K",
                   help="default: 4096,4096,4096 1024,4096,4096")
    p.add_argument("--sweep", action="store_true", help=f"add squares {SWEEP[0].m}^3..{SWEEP[-1].m}^3")
    add_set_options(p)
    add_timing_options(p, peers.DEFAULT)
    p.add_argument("--api", action="store_true", help="measure the Python API's host overhead instead")
    p.add_argument("--best", action="store_true",
                   help='add a row: what phase="best" picks per shape')
    p.add_argument("--config", action="append", metavar="P:F=V",
                   help="add a row: phase P with config F=V, e.g. 8:bn=128")
    p.add_argument("--epilogue", type=argtype(_epilogue_spec), metavar="SPEC",
                   help="time a fused epilogue (bias, gated, relu|gelu|silu, residual; e.g. bias,gelu) against "
                        "F.linear + torch ops, quack and --config's (docs/usage.md)")
    p.add_argument("--ncu-check", action="store_true",
                   help="after timing, cross-check with Nsight Compute")
    p.add_argument("--out", help=f"JSON path (default on a GPU: {DEFAULT_OUT})")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG plots")
    p.add_argument("--quiet", action="store_true", help="no progress bar")

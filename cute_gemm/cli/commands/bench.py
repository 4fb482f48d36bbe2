"""``cute-gemm bench``: the main job. On a GPU every phase of its ladder checked, then timed beside the
peers (table, JSON, plots); without one, the compile-only report of the phases, and why."""

from __future__ import annotations

import json
import os
import sys

from cute_gemm.cli.args import UsageError, arch_arg, phase_list_arg, shape_arg, writable_file
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
    if args.set:
        shapes += [p for p in suite.SETS[args.set] if p not in shapes]
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


DESCRIPTION = ("On a GPU: for every phase of the GPU's arch (or --phases) and every shape, check against "
               "cuBLASLt on the same tensors first (a failing phase is reported, never timed), then time all "
               "phases and peers of the shape together: CUDA graphs of back-to-back launches (>= "
               f"{timing.TARGET_REPLAY_MS:g} ms per replay), replayed round robin over --rounds rounds on "
               "the same inputs, median per kernel, with the SM clock, power, TFLOP/s per kW and throttle "
               "reasons recorded (NVML) while each was timed, and the bandwidth each reached (A + B + C bytes "
               "over its time, and as % of the run's device-copy bandwidth, measured first). Every kernel "
               "computes one problem: --layout, --dtype, --out-dtype (default the worklog's: nn, fp16, fp32); "
               "a phase or peer that cannot take them is listed with why. Prints a table, writes JSON (--out) "
               "and PNG plots beside it (the ladder, the sweep, a roofline). --api instead measures the host "
               "overhead of the Python API. "
               "Without a GPU: the compile-only report of the selected phases at --shapes (default 4096^3); "
               "--out writes it as JSON; timing options are refused.")


def add_arguments(p):
    from cute_gemm.measure.suite import SET_HELP, SETS, SWEEP

    p.add_argument("--arch", type=arch_arg, help="sm90 or sm100; must match the GPU (default: the GPU's, or "
                                                 "both ladders without a GPU)")
    p.add_argument("--phases", type=phase_list_arg, help="e.g. 0-3,5 (default: all registered for the arch)")
    p.add_argument("--shapes", type=shape_arg, nargs="+", metavar="M,N,K",
                   help="default: 4096,4096,4096 1024,4096,4096")
    p.add_argument("--sweep", action="store_true", help=f"add square sizes {', '.join(str(s.m) for s in SWEEP)}")
    p.add_argument("--set", choices=list(SETS),
                   help="a named set of shapes (instead of the default two, or added to --shapes): "
                        + "; ".join(f"{k}: {v}" for k, v in SET_HELP.items()))
    add_timing_options(p, peers.DEFAULT)
    p.add_argument("--api", action="store_true",
                   help="measure the Python API's host overhead instead (torch.mm vs cute_gemm.gemm vs the "
                        "compiled kernel alone, per call at 256^3 and in a loop at 1024x4096x4096, and each "
                        "phase's first-call compile time); combine with --phases")
    p.add_argument("--best", action="store_true",
                   help='add a row "best": the phase and config cute_gemm.gemm(phase="best") picks for each shape '
                        "and the run's layout and dtypes (a model of each candidate's time, cute_gemm.runtime.choose), "
                        "checked and timed like a phase")
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

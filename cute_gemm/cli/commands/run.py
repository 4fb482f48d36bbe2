"""``cute-gemm run``: one phase on the GPU, checked against cuBLASLt, then timed beside cuBLAS/cuBLASLt."""

from __future__ import annotations

import sys

from cute_gemm.cli.args import UsageError, arch_arg, phase_arg, shape_arg, writable_file
from cute_gemm.cli import steps
from cute_gemm.cli.steps import (add_timing_options, check_line, operands_from, refuse_unimplementable,
                                 time_shapes)
from cute_gemm.measure import peers
from cute_gemm.measure.results import check_text
from cute_gemm.runtime import arch as _arch


def _entry(arch: str, phase: str, shapes, operands):
    """The entry `run` measures, after checking that it exists and can do every shape with the operands
    (UsageError)."""
    from cute_gemm.runtime import registry

    try:
        entry = registry.get(arch, phase)
    except LookupError as exc:
        raise UsageError(str(exc)) from None
    refuse_unimplementable([entry], shapes, operands)
    return entry


def run(args) -> int:
    from cute_gemm.measure.suite import HEADLINE

    shapes = args.shape or list(HEADLINE)
    ops = operands_from(args)
    if args.json:
        writable_file(args.json, "--json")
    if args.arch:
        _entry(args.arch, args.phase, shapes, ops)
    tgt = steps.gpu_target()
    if tgt is None:
        raise UsageError(f"needs a Hopper (sm90) or Blackwell (sm100) GPU: {steps.no_gpu_reason()}; without a GPU, "
                         f"`cute-gemm inspect` shows what the kernels compile to")
    fam = _arch.family(tgt)
    if args.arch and args.arch != fam:
        raise UsageError(f"this GPU is {tgt}: {args.arch} kernels cannot run on it "
                         f"(`cute-gemm list --arch {fam}` shows the phases it runs)")
    entry = _entry(fam, args.phase, shapes, ops)
    from cute_gemm.measure import results
    from cute_gemm.report.console import render

    doc = time_shapes([entry], shapes, args, peers.VENDOR)
    for r in doc["results"]:
        if r["kind"] == "phase" and r.get("check"):
            print(check_line(r))
    render(doc)
    if args.json:
        results.save(doc, args.json)
        print(f"wrote {args.json}", file=sys.stderr)
    return 0 if all(r["status"] == "ok" for r in doc["results"] if r["kind"] == "phase") else 1


DESCRIPTION = ("Check one phase (fresh random inputs in the --layout and dtypes asked for, NaN-poisoned C; "
               + check_text() + "; a 16-bit C allows one rounding more) and, if it passes, time it interleaved "
               "with cuBLAS and cuBLASLt on the same tensors (CUDA-graph replays, median over rounds), with the "
               "SM clock and power it ran at.")


def add_arguments(p):
    p.add_argument("--phase", required=True, type=phase_arg, help="phase id: {phase_ids_inline}")
    p.add_argument("--arch", type=arch_arg, help="must match the GPU (default: the GPU's)")
    p.add_argument("--shape", type=shape_arg, action="append", metavar="M,N,K",
                   help="repeat for several (default: 4096,4096,4096 and 1024,4096,4096)")
    add_timing_options(p, peers.VENDOR)
    p.add_argument("--json", metavar="FILE", help="also write the results as a bench-v2 JSON document")

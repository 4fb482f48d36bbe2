"""``cute-gemm compare A B``: two phases side by side: config, generated code, and on a GPU their timings
and the Nsight Compute counters that moved."""

from __future__ import annotations

import dataclasses

from cute_gemm.cli.args import UsageError, arch_arg, shape_arg
from cute_gemm.cli import steps
from cute_gemm.cli.steps import add_timing_options, operands_from, refuse_unimplementable, time_shapes
from cute_gemm.errors import one_line
from cute_gemm.measure import peers
from cute_gemm.runtime import arch as _arch
from phases.operands import WORKLOG


def run(args) -> int:
    from cute_gemm.profiling.codegen import inspect_phase
    from cute_gemm.report.tables import side_by_side
    from cute_gemm.runtime import registry

    tgt = steps.gpu_target()
    default_arch = args.arch or (_arch.family(tgt) if tgt else "sm90")
    try:
        ea, eb = registry.resolve(args.a, default_arch), registry.resolve(args.b, default_arch)
    except (ValueError, LookupError) as exc:
        raise UsageError(str(exc)) from None
    if ea.key == eb.key:
        raise UsageError(f"{args.a} and {args.b} are both {ea.key}: name two different phases, e.g. "
                         f"`cute-gemm compare 6 7`")
    ops = operands_from(args)
    refuse_unimplementable([ea, eb], [args.shape], ops)
    p = args.shape
    print(f"{ea.key}: {ea.summary}\n{eb.key}: {eb.summary}\n{eb.key} adds: {eb.adds}\n")
    # each phase in the config that shows its step (its default, or the lesson config a phase declares: phase 11's
    # bias + gelu, where the default has no epilogue and compiles to phase 10's kernel)
    cfg_a, cfg_b = ea.lesson_config(), eb.lesson_config()
    ca, cb = dataclasses.asdict(cfg_a), dataclasses.asdict(cfg_b)
    print("config differences:")
    diff = [(k, ca.get(k, "-"), cb.get(k, "-")) for k in dict.fromkeys([*ca, *cb]) if ca.get(k, "-") != cb.get(k, "-")]
    for k, va, vb in diff:  # '-': a field the phase's config does not have (phase 11's epilogue fields in 10)
        print(f"  {k:<16} {str(va):>10} -> {vb}")
    if not diff:
        print("  (same tile, stages and cluster: the difference is in the code, below)")
    inss = [inspect_phase(e, None, p, cfg, ops) for e, cfg in ((ea, cfg_a), (eb, cfg_b))]
    print(f"\ngenerated code at {p}{'' if ops == WORKLOG else ' with ' + ops.label()} (compile-only):")
    print(side_by_side(inss))
    if tgt is None:
        print(f"\n(no timing: {steps.no_gpu_reason()})")
        return 0
    runnable = [e for e in (ea, eb) if e.arch == _arch.family(tgt)]
    if not runnable:
        print(f"\n(no timing: neither phase runs on this {tgt} GPU)")
        return 0
    from cute_gemm.report.console import render

    shown = [e.key for e, cfg in ((ea, cfg_a), (eb, cfg_b)) if e in runnable and cfg != e.default_config()]
    if shown:  # the timing runs each phase as gemm() does by default: phase 11 without an epilogue (phase 10's code)
        print(f"\n(timed in the default config: {', '.join(shown)} without the config compiled above; the fused "
              f"epilogue's own timing: cute-gemm bench --epilogue SPEC)")
    doc = time_shapes(runnable, [p], args, peers.VENDOR)
    print()
    render(doc)
    tf = {r["key"]: r["timing"]["tflops"] for r in doc["results"] if r.get("timing")}
    if ea.key in tf and eb.key in tf:
        print(f"speed-up {eb.key} / {ea.key}: {tf[eb.key] / tf[ea.key]:.3f}x (same run, interleaved)")
    if len(runnable) == 2 and not args.no_profile:
        _profiles(runnable, p)
    return 0


def _profiles(entries, p) -> None:
    """What the step changed in the machine: Nsight Compute counters of both phases and their deltas."""
    from cute_gemm.profiling import ncu
    from cute_gemm.report.tables import render_deltas

    try:
        doc = ncu.run_profile(entries, f"{p.m},{p.n},{p.k}", peers=())
    except Exception as exc:  # no ncu, no counter access: the timings above stand on their own
        print(f"\n(no profile: {one_line(exc)})")
        return
    kernels = {k["label"]: k for k in doc["kernels"]}
    a, b = (kernels.get(e.key) for e in entries)
    if a and b:
        print("\nwhere the cycles went (Nsight Compute, one launch each, clocks untouched):")
        print(render_deltas(a, b))


DESCRIPTION = ("Compare two phases, e.g. `compare 2 3`, `compare sm90:4 sm90:5`, "
               "`compare sm90:3 sm100:3`: config differences, instruction census and "
               "resources of both compiled kernels, and with a GPU both timed together "
               "beside cuBLAS/cuBLASLt.")


def add_arguments(p):
    p.add_argument("a", help="phase (arch:phase or phase)")
    p.add_argument("b", help="phase (arch:phase or phase)")
    p.add_argument("--arch", type=arch_arg, help="arch for bare phase ids (default: the GPU's, else sm90)")
    p.add_argument("--shape", type=shape_arg, default="4096,4096,4096", help="M,N,K (default 4096,4096,4096)")
    add_timing_options(p, peers.VENDOR)
    p.add_argument("--no-profile", action="store_true",
                   help="on a GPU, skip the Nsight Compute profile of both phases and its deltas")

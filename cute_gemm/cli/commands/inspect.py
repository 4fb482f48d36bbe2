"""``cute-gemm inspect``: the compile-only report (no GPU needed): instruction census and resources."""

from __future__ import annotations

from cute_gemm.cli.args import UsageError, arch_arg, phase_list_arg, shape_arg, target_arg, writable_dir
from cute_gemm.cli.steps import (add_operand_options, compile_report, entries, operands_from, print_compile_report,
                                 variants)
from cute_gemm.runtime import arch as _arch


def run(args) -> int:
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
    extra = variants(args.config or (), fams)
    if extra and not args.phase:  # a variant beside its phase's default config, not beside every phase
        ents = list(dict.fromkeys(e for e, _, _ in extra))
    else:
        ents = entries(fams, args.phase)
    if args.dump:
        writable_dir(args.dump, "--dump")
    tables, skipped, failures = compile_report(ents, targets, [args.shape], args.dump, variants=extra,
                                               operands=operands_from(args))
    print_compile_report(tables, skipped, failures, as_json=args.json)
    return 1 if failures else 0


DESCRIPTION = ("Compile phases for a target without a GPU and print, side by side, the "
               "instruction census of the PTX (tcgen05/wgmma, cp.async, TMA loads/stores, "
               "multicast, setmaxnreg, stmatrix, mbarrier waits, proxy fences) and the "
               "resources (registers, spills, dynamic smem, threads, TMEM columns), for the operands "
               "--layout, --dtype, --out-dtype ask for (default the worklog's nn fp16->fp32). "
               "Phases: {phase_ids_inline}.")


def add_arguments(p):
    p.add_argument("--arch", type=arch_arg, help="sm90 (Hopper) or sm100 (Blackwell); default: both")
    p.add_argument("--phase", type=phase_list_arg, help="phase id or list, e.g. 0, 2a, 0-3,5 (default: all)")
    p.add_argument("--target", type=target_arg,
                   help=f"exact target, one of {', '.join(t for ts in _arch.TARGETS.values() for t in ts)} "
                        f"(default: each arch's first)")
    p.add_argument("--all-targets", action="store_true", help="compile sm100 phases for both sm_100a and sm_103a")
    p.add_argument("--shape", type=shape_arg, default="4096,4096,4096",
                   help="M,N,K to compile for (default 4096,4096,4096)")
    p.add_argument("--config", action="append", metavar="PHASE:FIELD=V[,FIELD=V]",
                   help="also compile a phase with config overrides, e.g. --config 8:bn=128,stages=6 (repeatable; "
                        "the fields: `cute-gemm list`); without --phase, beside that phase's default only. A config "
                        "the phase cannot be built with fails here, with the reason, as it would on a GPU")
    add_operand_options(p)
    p.add_argument("--dump", metavar="DIR", help="also write DIR/<arch>_phase<id>.ptx and .cubin")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")

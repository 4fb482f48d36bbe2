"""``cute-gemm list``: the ladders, what each phase adds, its tile, the shapes it takes."""

from __future__ import annotations

from cute_gemm.cli.args import arch_arg
from cute_gemm.runtime import arch as _arch


def run(args) -> int:
    from cute_gemm.runtime import registry

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


DESCRIPTION = ("List the registered phases of each ladder with their default config, "
              "a one-line summary and what each adds over the previous phase.")


def add_arguments(p):
    p.add_argument("--arch", type=arch_arg, help="sm90 (Hopper) or sm100 (Blackwell); default: both")

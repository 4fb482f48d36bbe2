"""``cute-gemm list``: the ladders, what each phase adds, its tile, the shapes it takes."""

from __future__ import annotations

from cute_gemm.cli.args import arch_arg
from cute_gemm.runtime import arch as _arch


def _tile(entry) -> str:
    """'256x256x64 NS=4 cluster 4': the tile a cluster covers, K per stage, stages, CTAs per cluster."""
    cfg = entry.default_config()
    ctas = entry.cluster_ctas()
    return f"{cfg.bm * cfg.cluster_m}x{cfg.bn}x{cfg.bk} NS={cfg.stages}" + (f" cluster {ctas}" if ctas > 1 else "")


def run(args) -> int:
    from cute_gemm.runtime import registry

    for fam in ([args.arch] if args.arch else list(_arch.TARGETS)):
        ents = registry.all_entries(fam)
        verified = "run and measured on the H200" if fam == "sm90" else "compile-verified (no Blackwell GPU here)"
        print(f"{fam} ({', '.join(_arch.TARGETS[fam])}; {verified}):")
        if not ents:
            print("  (no phases registered)")
        tiles = {e.phase: _tile(e) for e in ents}
        width = max(map(len, tiles.values()), default=0) + 2
        for e in ents:
            wl = f"  [worklog: {e.worklog}]" if e.worklog else ""
            print(f"  {e.phase:<3} {tiles[e.phase]:<{width}}{e.summary}")
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

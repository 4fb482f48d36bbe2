"""``cute-gemm list``: the ladders, what each phase adds, its tile, the shapes it takes; ``--fields``: each
phase's config fields (what ``--config PHASE:FIELD=V`` and ``config=`` take), their defaults and the values the
phase's rules allow."""

from __future__ import annotations

import dataclasses
from math import gcd

from cute_gemm.cli.args import arch_arg
from cute_gemm.runtime import arch as _arch

STEPS = (1, 2, 4, 8, 16, 32, 64, 128)


def _probes(default: int) -> list[int]:
    """The values tried for an integer field: 1..16, multiples of 8 up to 512, and up to twice the default
    (``sm_count``'s 132 or 148)."""
    return sorted({*range(1, 17), *range(8, 513, 8), *range(1, 2 * default + 1), default})


def _allowed_text(passed: list[int], probes: list[int]) -> str:
    """The values that passed, in words: '8..256 step 8', '>= 2', 'multiples of 4 (>= 4)', or a list."""
    if not passed:
        return "none (with the other fields at their defaults)"
    lo, hi = passed[0], passed[-1]
    open_ended = hi == probes[-1]
    for d in STEPS:
        if all(v % d == lo % d for v in passed) and passed == [v for v in probes if lo <= v <= hi and v % d == lo % d]:
            if len(passed) == 1:
                return str(lo)
            if d == 1:
                return f">= {lo}" if open_ended else f"{lo}..{hi}"
            if open_ended:
                return f"multiples of {d} (>= {lo})" if lo % d == 0 else f">= {lo}, step {d}"
            if len(passed) <= 4:
                return ", ".join(map(str, passed))
            return f"{lo}..{hi} step {d}"
    return ", ".join(map(str, passed)) if len(passed) <= 10 else ", ".join(map(str, passed[:8])) + ", ..."


def field_rows(entry) -> list[tuple[str, str, str]]:
    """(field, default, allowed) of the phase's config: allowed = the values the phase's rules
    (``PhaseEntry.config_problems``, checked before any compile) pass with the other fields at their defaults --
    a combination can still be refused, and the compile has the last word."""
    from cute_gemm.runtime import registry

    default = entry.default_config()
    words = registry.field_choices(entry.config_cls)
    rows = []
    for f in dataclasses.fields(default):
        v = getattr(default, f.name)
        if isinstance(v, bool):  # a switch: both values, or the one the rules pass (stream-K refuses an epilogue)
            passed = [x for x in (True, False) if not entry.config_problems(dataclasses.replace(default, **{f.name: x}))]
            rows.append((f.name, str(v).lower(), ", ".join(str(x).lower() for x in passed) or "none"))
            continue
        if isinstance(v, str):  # a word field (phase 11's activation): the choices its rules pass
            passed = [x for x in words.get(f.name, ())
                      if not entry.config_problems(dataclasses.replace(default, **{f.name: x}))]
            rows.append((f.name, v, ", ".join(passed) or "any word the phase's rules take"))
            continue
        probes = _probes(v)
        passed = [x for x in probes if not entry.config_problems(dataclasses.replace(default, **{f.name: x}))]
        rows.append((f.name, str(v), _allowed_text(passed, probes)))
    return rows


def _print_fields(fam: str, ents) -> None:
    print(f"{fam}: config fields, default, allowed (each with the others at their defaults; `--config 8:bn=128`, "
          f"gemm(..., config={{'bn': 128}}))")
    for e in ents:
        print(f"  {e.key}")
        for name, default, allowed in field_rows(e):
            print(f"      {name:<14} {default:>6}   {allowed}")
    print()


def _tile(entry) -> str:
    """'256x256x64 NS=4 cluster 4': the tile a cluster covers, K per stage, stages, CTAs per cluster."""
    cfg = entry.default_config()
    ctas = entry.cluster_ctas()
    return f"{cfg.bm * cfg.cluster_m}x{cfg.bn}x{cfg.bk} NS={cfg.stages}" + (f" cluster {ctas}" if ctas > 1 else "")


def run(args) -> int:
    from cute_gemm.runtime import registry

    for fam in ([args.arch] if args.arch else list(_arch.TARGETS)):
        ents = registry.all_entries(fam)
        if args.fields:
            _print_fields(fam, ents)
            continue
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
            print('  best: per shape, the phase and config a time model fitted on the H200 ranks first, or the one'
                  ' `cute-gemm tune` measured fastest on this GPU (gemm(phase="best"))')
        print()
    return 0


DESCRIPTION = ("List the registered phases of each ladder with their default config, "
               "a one-line summary and what each adds over the previous phase. --fields: each phase's config "
               "fields (what --config PHASE:FIELD=V and gemm(config=...) take), their defaults and the values "
               "the phase's rules allow, which are checked before anything compiles.")


def add_arguments(p):
    p.add_argument("--arch", type=arch_arg, help="sm90 (Hopper) or sm100 (Blackwell); default: both")
    p.add_argument("--fields", action="store_true",
                   help="each phase's config fields (for --config PHASE:FIELD=V), their defaults and allowed values")

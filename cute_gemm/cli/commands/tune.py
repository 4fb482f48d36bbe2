"""``cute-gemm tune``: per shape, the model's cheapest candidates of ``phase="best"`` timed on this GPU, the fastest
kept in the GPU's table, which ``best`` then runs for that shape."""

from __future__ import annotations

import sys

from cute_gemm.cli import steps
from cute_gemm.cli.args import (UsageError, _at_least_one, argtype, peers_arg, rounds_arg, seconds_arg, shape_arg,
                               writable_file)
from cute_gemm.cli.steps import add_operand_options, operands_from
from cute_gemm.measure import peers
from cute_gemm.runtime import arch as _arch

DESCRIPTION = """\
Tune phase="best" on this GPU: per shape, the model's --top cheapest candidates checked, then timed
interleaved as `cute-gemm bench` times (cold L2 unless --warm-l2), beside cuBLAS and cuBLASLt. The fastest
is kept in this GPU's table (the model's pick where it ran within 2% of it), which gemm(phase="best") and
linear() run from then on for that shape and operands; CUTE_GEMM_TUNED=0 ignores the table. A shape costs a
few seconds. In Python: cute_gemm.measure.tune.tune_shape(arch, Problem(m, n, k), gpu=...).
"""


@argtype
def top_arg(text: str) -> int:
    return _at_least_one(text, "--top")


def add_arguments(p):
    from cute_gemm.measure import timing, tune
    from cute_gemm.cli.commands.bench import add_set_options

    p.add_argument("--shapes", type=shape_arg, nargs="+", metavar="M,N,K", help="shapes to tune")
    add_set_options(p)
    p.add_argument("--top", type=top_arg, default=tune.TOP, metavar="N",
                   help=f"candidates timed per shape: the model's N cheapest (default {tune.TOP})")
    p.add_argument("--families", action="store_true",
                   help="also time the cheapest of every kernel family the --top leave out (modelled within 1.5x)")
    p.add_argument("--explore", action="store_true",
                   help="also time the configs built but not yet timed on any GPU, which best never picks by itself "
                        "(64-column C slabs, 256x128 tiles in 1x2 clusters, 2x2 clusters); one that wins is kept")
    p.add_argument("--rounds", type=rounds_arg, default=timing.ROUNDS, metavar="N",
                   help=f"interleaved timing rounds (default {timing.ROUNDS})")
    p.add_argument("--sustained", type=seconds_arg, default=0.0, metavar="SECONDS",
                   help="replay each this long before it is timed (default 0)")
    p.add_argument("--warm-l2", action="store_true",
                   help="time with L2-resident inputs (default: cold L2)")
    p.add_argument("--peers", type=peers_arg, metavar="LIST",
                   help="timed beside them (default cublas,cublaslt; none)")
    add_operand_options(p)
    p.add_argument("--out", metavar="FILE", help="also write the timed candidates (a candidates file)")
    p.add_argument("--show", action="store_true", help="print this GPU's table and exit")
    p.add_argument("--forget", action="store_true", help="delete this GPU's table and exit")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _shapes(args) -> list[tuple]:
    """(Problem, Operands) per shape to tune: --shapes with the run's operands, then the set's shapes with their own
    where it names them (the --layout, --dtype, --out-dtype given replace those)."""
    from cute_gemm.measure import suite

    ops = operands_from(args)
    shapes = list(args.shapes or [])
    if args.set:
        shapes += [c for c in suite.set_cases(args.set, args.layout, args.dtype, args.out_dtype) if c not in shapes]
    return list(dict.fromkeys(suite.cases_of(shapes, ops)))


def run(args) -> int:
    from cute_gemm.measure import results, tune
    from cute_gemm.runtime import plan, tuned

    if args.show and args.forget:
        raise UsageError("--show and --forget: give one")
    shapes = _shapes(args)
    if not shapes and not (args.show or args.forget):
        raise UsageError("no shape to tune: give --shapes M,N,K ... or --set NAME")
    if args.out:
        writable_file(args.out, "--out")
    tgt = steps.gpu_target()
    # what each shape times, said once per line
    also = (" and every family's cheapest" if args.families else "") + (" and the untimed configs" if args.explore else "")
    if tgt is None and (args.show or args.forget):
        if args.forget:
            raise UsageError(f"--forget deletes the table of the GPU it runs on ({steps.no_gpu_reason()})")
        return _show_all()
    if tgt is None:
        fam = "sm90"
        print(f"cute-gemm tune: times kernels on a GPU ({steps.no_gpu_reason()}). What it would time on an H100/H200, "
              f"the model's {args.top} cheapest candidates per shape{also}:", file=sys.stderr)
        for p, ops in shapes:
            print(f"\n{p}" + ("" if ops == operands_from(args) else f" {ops.label()}"))
            for _, _, label, cost in tune.candidates(fam, p, args.top, ops, args.families, args.explore):
                print(f"  model {cost:8.1f} us  {label}")
        return 2
    fam, gpu = _arch.family(tgt), plan.device_name(0)
    if args.show or args.forget:
        return _show(gpu) if args.show else _forget(gpu)
    peer_names = args.peers if args.peers is not None else list(peers.VENDOR)
    peer_list = [peers.PEERS[n] for n in peer_names]
    done, docs = [], []
    for i, (p, ops) in enumerate(shapes):
        print(f"[{i + 1}/{len(shapes)}] {p} {ops.label()}: timing the model's {args.top} cheapest candidates{also}", file=sys.stderr,
              flush=True)
        t, doc = tune.tune_shape(fam, p, top=args.top, peer_list=peer_list, rounds=args.rounds,
                                 sustained_s=args.sustained, cold_l2=not args.warm_l2, operands=ops, gpu=gpu,
                                 progress=not args.quiet, families=args.families, explore=args.explore)
        done.append(t)
        docs.append(doc)
        _print_shape(t)
        if args.out:  # after every shape: a run cut short keeps what it measured
            merged = tune.merge(docs)
            merged["command"] = "cute-gemm tune " + " ".join(sys.argv[2:])
            results.save(tune.compact(merged, "cute-gemm tune", fam), args.out)
    _summary(done, gpu)
    return 0 if all(t.fastest for t in done) else 1


def _print_shape(t):
    print(f"\n{t.shape}" + ("" if t.operands.is_worklog else f" {t.operands.label()}"))
    if not t.timed:
        print("  no candidate of phase 'best' takes this shape")
        return
    for label, us in sorted(t.timed.items(), key=lambda kv: (kv[1] is None, kv[1] or 0)):
        mark = " <- kept" if label == t.kept else (" (fastest, within the margin of the model's pick)"
                                                    if label == t.fastest else "")
        model = " (model's pick)" if label == t.model else ""
        vendor = f"  {t.vendor_us / us:5.2f} x vendor" if us and t.vendor_us else ""
        if us is None:
            print(f"  {t.why.get(label, 'not timed')}  {label}{model}")
        else:
            print(f"  {us:8.1f} us{vendor}  {label}{model}{mark}")


def _summary(done, gpu):
    import math

    from cute_gemm.measure import tune

    gains = [t.gain for t in done if t.gain]
    if gains:
        geo = math.exp(sum(map(math.log, gains)) / len(gains))
        moved = sum(1 for t in done if t.kept and t.kept != t.model)
        print(f"\n{len(done)} shapes tuned on {gpu}: the model's pick kept at {len(done) - moved} (the fastest, or "
              f"within {tune.MARGIN:.0%} of it); where not, tuned / model's pick geomean over all shapes {geo:.3f}x "
              f"(best {max(gains):.2f}x)")
    from cute_gemm.runtime import tuned

    print(f"table: {tuned.path(gpu)}", file=sys.stderr)


def _show(gpu) -> int:
    from cute_gemm.runtime import registry, tuned

    table = tuned.entries(gpu)
    print(f"{tuned.path(gpu)}: {len(table)} shapes")
    for key, e in sorted(table.items()):
        cfg = registry.overrides_label(e.get("config") or {})
        was = f"  (model's pick {e['model']}: {e['model_us']} us)" if e.get("model_us") and e.get("model") else ""
        print(f"  {key}: {e.get('phase')} {cfg}  {e.get('us', '?')} us{was}")
    return 0


def _show_all() -> int:
    """Without a GPU: every GPU's table for these kernel sources."""
    from cute_gemm.runtime import cache

    found = sorted((cache.cache_dir() / cache.fingerprint()).glob("tuned-*.json"))
    print(f"no GPU here ({steps.no_gpu_reason()}); tuned tables for these kernel sources: "
          f"{', '.join(map(str, found)) if found else 'none'}")
    return 0


def _forget(gpu) -> int:
    from cute_gemm.runtime import tuned

    print(f"{'deleted' if tuned.forget(gpu) else 'no table at'} {tuned.path(gpu)}")
    return 0

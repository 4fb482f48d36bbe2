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
Tune phase="best" on this GPU. best's model ranks every (phase, config) candidate of a shape by a modelled
time that is right to about 10% per config, so where candidates are close its first is not always the
fastest. For each shape, tune checks the model's --top cheapest candidates (with --families also the cheapest
of every kind of kernel they leave out, for shapes where the model ranks a whole kind low) (against cuBLASLt and float64,
NaN-poisoned C, a bit-identical repeat) and times them interleaved on the same inputs, as `cute-gemm bench`
does (CUDA graphs, median over rounds, cold L2 unless --warm-l2), beside cuBLAS and cuBLASLt (--peers). The
fastest that passed is kept (the model's pick stays where it ran within 2% of the fastest: closer than that
is the run's noise) in this GPU's table (in the kernel cache's directory, one per GPU name; an edit
of the kernels or a new DSL starts a new one), and from then on gemm(phase="best") and linear() run it for
that shape and operands. Shapes not in the table keep the model's pick; CUTE_GEMM_TUNED=0 ignores the table.
A shape costs a few seconds (compiles are cached on disk); --show prints the table, --forget deletes it.
In Python: cute_gemm.measure.tune.tune_shape(arch, Problem(m, n, k), gpu=torch.cuda.get_device_name()).
"""


@argtype
def top_arg(text: str) -> int:
    return _at_least_one(text, "--top")


def add_arguments(p):
    from cute_gemm.measure import timing, tune
    from cute_gemm.measure.suite import SETS

    p.add_argument("--shapes", type=shape_arg, nargs="+", metavar="M,N,K", help="shapes to tune")
    p.add_argument("--set", choices=list(SETS), help="a named set of shapes (`cute-gemm bench --help` lists them), "
                                                     "added to --shapes")
    p.add_argument("--top", type=top_arg, default=tune.TOP, metavar="N",
                   help=f"candidates timed per shape: the model's N cheapest (default {tune.TOP})")
    p.add_argument("--families", action="store_true",
                   help="also time the model's cheapest candidate of every family the --top ones leave out (phase 9; "
                        "phase 10 by weight-tile rows; split or not; multicast or not) modelled within 1.5x of its "
                        "pick: the model ranks within a family better than across families, so this finds a kernel "
                        "it ranks far down; up to twice the candidates per shape")
    p.add_argument("--rounds", type=rounds_arg, default=timing.ROUNDS, metavar="N",
                   help=f"interleaved timing rounds; the median counts (default {timing.ROUNDS})")
    p.add_argument("--sustained", type=seconds_arg, default=0.0, metavar="SECONDS",
                   help="keep each candidate replaying this long before its timed replays (the steady state "
                        "under the power cap; default 0)")
    p.add_argument("--warm-l2", action="store_true",
                   help="time with L2-resident inputs (default: cold L2, every launch reads A and B from HBM, as "
                        "a model's weights are read)")
    p.add_argument("--peers", type=peers_arg, metavar="LIST",
                   help="timed beside the candidates, for the table's 'x vendor' column (default cublas,cublaslt; "
                        "none for no peer)")
    add_operand_options(p)
    p.add_argument("--out", metavar="FILE", help="also write the timed candidates as a compact candidates file "
                                                 "(what bench/fit_best.py reads)")
    p.add_argument("--show", action="store_true", help="print this GPU's table and exit")
    p.add_argument("--forget", action="store_true", help="delete this GPU's table and exit")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _shapes(args) -> list:
    from cute_gemm.measure.suite import SETS

    shapes = list(args.shapes or [])
    if args.set:
        shapes += [p for p in SETS[args.set] if p not in shapes]
    return shapes


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
    ops = operands_from(args)
    tgt = steps.gpu_target()
    also = " and every family's cheapest" if args.families else ""  # what each shape times, said once per line
    if tgt is None and (args.show or args.forget):
        if args.forget:
            raise UsageError(f"--forget deletes the table of the GPU it runs on ({steps.no_gpu_reason()})")
        return _show_all()
    if tgt is None:
        fam = "sm90"
        print(f"cute-gemm tune: times kernels on a GPU ({steps.no_gpu_reason()}). What it would time on an H100/H200, "
              f"the model's {args.top} cheapest candidates per shape{also}:", file=sys.stderr)
        for p in shapes:
            print(f"\n{p}")
            for _, _, label, cost in tune.candidates(fam, p, args.top, ops, args.families):
                print(f"  model {cost:8.1f} us  {label}")
        return 2
    fam, gpu = _arch.family(tgt), plan.device_name(0)
    if args.show or args.forget:
        return _show(gpu) if args.show else _forget(gpu)
    peer_names = args.peers if args.peers is not None else list(peers.VENDOR)
    peer_list = [peers.PEERS[n] for n in peer_names]
    done, docs = [], []
    for i, p in enumerate(shapes):
        print(f"[{i + 1}/{len(shapes)}] {p}: timing the model's {args.top} cheapest candidates{also}", file=sys.stderr,
              flush=True)
        t, doc = tune.tune_shape(fam, p, top=args.top, peer_list=peer_list, rounds=args.rounds,
                                 sustained_s=args.sustained, cold_l2=not args.warm_l2, operands=ops, gpu=gpu,
                                 progress=not args.quiet, families=args.families)
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
    print(f"\n{t.shape}")
    if not t.timed:
        print("  no candidate of phase 'best' takes this shape")
        return
    for label, us in sorted(t.timed.items(), key=lambda kv: (kv[1] is None, kv[1] or 0)):
        mark = " <- kept" if label == t.kept else (" (fastest, within the margin of the model's pick)"
                                                    if label == t.fastest else "")
        model = " (model's pick)" if label == t.model else ""
        vendor = f"  {t.vendor_us / us:5.2f} x vendor" if us and t.vendor_us else ""
        print(f"  {'failed its check' if us is None else f'{us:8.1f} us'}{vendor}  {label}{model}{mark}")


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

"""Measure what ``phase="best"`` chooses among: per shape, the model's cheapest candidates, timed together.

    python bench/candidates.py --shapes 208,6144,8192 232,4608,9216 [--top 8] [--families] [--config 10:bm=192,bn=112 ...]
                               [--twin evict_first_a=false] [--out bench/results/latest_candidates.json]
                               [--bench-out FULL.json] [--note TEXT]

For each shape, one ``cute-gemm bench`` run (cold L2, CUDA graphs, interleaved rounds, every kernel checked
against cuBLASLt and float64 first) of phase 7, ``best``, cuBLAS, cuBLASLt and the ``--top`` candidates that
``cute_gemm.runtime.choose.explain`` ranks cheapest for it, with ``--families`` also the cheapest of every family
(``cute_gemm.measure.tune.family``: phase 9, or phase 10 by weight-tile rows; split or not; multicast or not) -- a refit needs the kernels the model ranks low
timed too, or it can only confirm its own ranking -- plus every ``--config`` given, and with ``--twin FIELD=V`` each of
those configs again with the field set (one switch, with and without, side by side). Every kernel of a
shape is timed in that shape's run only, so the table compares kernels measured side by side. ``--out`` is a
candidates file (``cute-gemm/best-candidates-v1``: per kernel its shape, phase, config, measured and modelled
microseconds and the faster vendor's, small enough to commit; ``cute_gemm.measure.tune.compact``) that
``python bench/fit_best.py FILE`` reads;
``--bench-out`` keeps the full bench-v2 document too (checks, clocks, power). On stdout, a table per shape:
each candidate's measured time beside its modelled one, fastest first, then any kernel not timed and why (a failed
check, a refused shape).
GPU only (sm90): without one it says so and exits 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cute_gemm.cli.args import UsageError, shape_arg  # noqa: E402


def spec_of(row) -> str:
    """An ``explain`` row as a ``--config`` spec (its phase and non-default fields)."""
    from cute_gemm.runtime import registry

    return _spec(row["phase"], registry.get("sm90", row["phase"]).overrides(row["config"]))


def _spec(phase: str, over: dict) -> str:
    """A phase and its config overrides as a ``--config`` spec ('10:bn=128,split_k=1'; a bare id without overrides):
    what ``registry.split_spec`` takes apart."""
    return phase + ":" + ",".join(f"{k}={v}" for k, v in over.items()) if over else phase


def plan(shape, top: int, extra: list[str], families: bool = False) -> list[str]:
    """The ``--config`` specs measured at ``shape``: the model's ``top`` cheapest (phase 7's default aside:
    it runs as a phase), with ``families`` then the cheapest of each family not yet among them, then ``extra``,
    each once."""
    from cute_gemm.runtime import choose

    rows = choose.explain("sm90", shape.m, shape.n, shape.k)
    specs = []
    for row in rows:
        if len(specs) >= top:
            break
        spec = spec_of(row)
        if spec != "7" and spec not in specs:
            specs.append(spec)
    if families:
        from cute_gemm.measure import tune

        specs += [spec_of(r) for r in tune.family_cheapest(rows, [r for r in rows if spec_of(r) in specs])]
    extra = [canonical(s) for s in extra]
    return specs + [s for i, s in enumerate(extra) if s not in specs and s not in extra[:i]]


def canonical(spec: str) -> str:
    """A ``--config`` spec as ``plan`` spells the model's candidates (its non-default fields in the config's order,
    values as Python writes them): '10:split_k=3,bm=128,evict_first_a=true' -> '10:bm=128,split_k=3,evict_first_a=True'.
    Two spellings of one config are then timed once (two rows of one config would share a key)."""
    from cute_gemm.cli import steps

    if ":" not in spec:  # a bare phase id: its default config
        return spec
    entry, cfg, _ = steps.parse_variant(spec, "sm90")
    return _spec(entry.phase, entry.overrides(cfg))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", nargs="+", type=shape_arg, required=True, metavar="M,N,K")
    ap.add_argument("--top", type=int, default=8, help="the model's cheapest candidates per shape (default 8; 0: only best, phase 7 and --config)")
    ap.add_argument("--families", action="store_true",
                    help="also time the model's cheapest candidate of every family (phase, tile rows, split, multicast)")
    ap.add_argument("--config", action="append", default=[], metavar="PHASE:FIELD=V[,FIELD=V][@M,N,K]",
                    help="also time this config at every shape, or with @M,N,K at that shape only (repeatable)")
    ap.add_argument("--twin", metavar="FIELD=V[,FIELD=V]",
                    help="also time each planned config of a phase that has these fields with them set (e.g. "
                         "evict_first_a=false: the picks with and without one switch, side by side)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved timing rounds per shape (default 5)")
    ap.add_argument("--out", default="bench/results/latest_candidates.json", help="the candidates file")
    ap.add_argument("--bench-out", help="also write the full bench-v2 document here")
    ap.add_argument("--note", default="", help="what the run is for (kept in the candidates file)")
    args = ap.parse_args(argv)
    from cute_gemm.cli import steps
    from cute_gemm.measure import peers, results, suite, tune
    from cute_gemm.runtime import registry

    try:
        extra = [_at(spec) for spec in args.config]
        for spec, _ in extra:  # a bad --config is refused before anything runs, with or without a GPU
            if ":" in spec:
                steps.parse_variant(spec, "sm90")
            else:  # a bare phase id: its default config
                registry.get("sm90", spec)
        twin = registry.parse_overrides(args.twin) if args.twin else {}
    except (UsageError, LookupError, ValueError) as exc:
        print(f"candidates: {exc}", file=sys.stderr)
        return 2
    tgt = steps.gpu_target()
    if tgt != "sm_90a":
        why = steps.no_gpu_reason() if tgt is None else f"this GPU is {tgt}"
        print(f"candidates: times sm90 kernels on an H100/H200 ({why}); `cute-gemm inspect --config ...` compiles "
              f"them without one", file=sys.stderr)
        return 2
    parts = []
    for i, shape in enumerate(args.shapes):
        specs = plan(shape, args.top, [spec for spec, at in extra if at in (None, shape)], args.families)
        specs += [t for t in (twin_of(spec, twin) for spec in specs) if t and t not in specs]
        print(f"[{i + 1}/{len(args.shapes)}] {shape}: {len(specs)} candidates", file=sys.stderr, flush=True)
        variants = [steps.parse_variant(s, "sm90") for s in specs if ":" in s]
        plain = [registry.get("sm90", "7")] + [registry.get("sm90", s) for s in specs if ":" not in s]
        part = suite.run_bench(plain, [shape], [peers.PEERS["cublas"], peers.PEERS["cublaslt"]], rounds=args.rounds,
                               cold_l2=True, progress=False, best_arch="sm90", variants=variants)
        parts.append(part)
        doc = tune.merge(parts)
        _table(shape, part["results"])
        # after every shape: a run cut short keeps the shapes it measured
        doc["command"] = "python bench/candidates.py " + " ".join(sys.argv[1:] if argv is None else argv)
        results.save(tune.compact(doc, args.note), args.out)
        if args.bench_out:
            results.save(doc, args.bench_out)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def twin_of(spec: str, fields: dict) -> str | None:
    """``spec`` with ``fields`` set ('10:bn=128' + {'evict_first_a': False} -> '10:bn=128,evict_first_a=False');
    None where the phase lacks one of the fields or already has those values (no twin to time)."""
    from cute_gemm.runtime import registry

    phase, over = registry.split_spec(spec)
    entry = registry.get("sm90", phase)
    if not fields or not set(fields) <= {f.name for f in dataclasses.fields(entry.config_cls)}:
        return None
    if all(getattr(entry.configured(over), f) == v for f, v in fields.items()):
        return None
    return _spec(phase, {**(registry.parse_overrides(over) if over else {}), **fields})


def _at(spec: str):
    """'10:bm=192@208,6144,8192' -> ('10:bm=192', Problem(208, 6144, 8192)); without '@', (spec, None)."""
    if "@" not in spec:
        return spec, None
    spec, shape = spec.rsplit("@", 1)
    try:
        return spec, shape_arg(shape)
    except Exception as exc:  # noqa: BLE001 -- argparse's type errors differ by version
        raise UsageError(f"--config {spec}@{shape}: {exc}") from None


def _table(shape, rows):
    """Measured and modelled time of every kernel of ``shape``, fastest first."""
    from cute_gemm.runtime import choose, registry

    timed = [r for r in rows if r.get("timing")]
    timed.sort(key=lambda r: r["timing"]["ms_median"])
    print(f"\n{shape}")
    for r in timed:
        us = r["timing"]["ms_median"] * 1e3
        cost = ""
        if r["kind"] == "phase" and r.get("phase") not in (None, "best"):
            entry = registry.get("sm90", r["phase"])
            cfg = entry.configured(r.get("config") or {})
            cost = f"model {choose.modelled_us(entry.make(cfg), shape.m, shape.n, shape.k):7.1f}"
        print(f"  {us:8.1f} us  {cost:>13}  {r['label']}")
    for r in rows:  # a kernel that failed its check (or was skipped, or errored) is never left out silently
        if not r.get("timing"):
            print(f"  {'not timed':>11}  {r.get('status', '?'):>13}  {r['label']}: {r.get('reason', '')}")


if __name__ == "__main__":
    sys.exit(main())

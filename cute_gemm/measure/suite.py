"""The main job: every phase of the GPU's arch checked, then timed beside its peers, shape by shape.

``run_bench`` measures the device-copy bandwidth once (``bandwidth``), checks every phase at every shape
first (``shape.check_phases``), then shape by shape checks the peers and times everything that passed
together (``shape.measure_shape``), with NVML telemetry open for the whole run, and returns the result
document (``results``). Every kernel of a shape computes that shape's layout and dtypes (``operands``: the run's,
or the shape's own in a set that names them, ``sets``), phases and peers alike.
"""

from __future__ import annotations

from cute_gemm.measure import environment, sets as _sets, timing
from cute_gemm.measure.results import document, peak_for
from cute_gemm.measure.shape import check_phases, measure_shape
from cute_gemm.runtime import registry
from cute_gemm.runtime.problem import Problem
from phases.operands import WORKLOG, Operands

HEADLINE = (Problem(4096, 4096, 4096), Problem(1024, 4096, 4096))  # the worklog's two shapes
SWEEP = tuple(Problem(s, s, s) for s in (512, 1024, 2048, 3072, 4096, 6144, 8192))
# the named shape sets (``cute-gemm bench --set NAME``) live in ``sets``: here each set's plain shapes and description
SETS = {name: s.problems for name, s in _sets.SETS.items()}
SET_HELP = {name: s.description for name, s in _sets.SETS.items()}


def set_cases(name: str, layout: str | None = None, ab: str | None = None, c: str | None = None) -> list:
    """The shapes of set ``name`` as ``run_bench`` takes them, each once: a plain Problem for an entry without operands
    (it takes the run's), (Problem, Operands) for one with its own -- where the run gives ``layout``, ``ab`` (A and B)
    or ``c`` (C's type), those replace the entry's in every shape."""
    out = []
    for e in _sets.get(name).entries:
        item = e.problem if e.operands is None else (e.problem, Operands.of(
            layout or e.operands.layout, ab or e.operands.ab, c or e.operands.c))
        if item not in out:
            out.append(item)
    return out


def cases_of(shapes, operands=WORKLOG) -> list[tuple]:
    """(Problem, Operands) per item of ``shapes``: a plain Problem takes ``operands``, a pair keeps its own."""
    return [(item, operands) if isinstance(item, Problem) else tuple(item) for item in shapes]


def run_bench(entries, shapes, peer_list, *, data: str = "randn", rounds: int = timing.ROUNDS,
              sustained_s: float = 0.0, cold_l2: bool = False, progress: bool = True,
              best_arch: str | None = None, variants=(), operands=WORKLOG) -> dict:
    """Measure the copy bandwidth, check every entry at every shape, then shape by shape check the peers and
    time everything that passed, interleaved -> a bench-v2 document.

    ``shapes``: Problems, computed with ``operands``, or (Problem, Operands) pairs, computed with their own
    (a set of per-shape operands, ``set_cases``); every kernel of a shape -- phases, ``best``, peers -- gets
    that shape's operands, and each row records them."""
    from cute_gemm.measure.bandwidth import copy_bandwidth
    from cute_gemm.measure.power import Telemetry
    from cute_gemm.measure.progress import Progress
    from cute_gemm.measure.results import operands_record

    cases = cases_of(shapes, operands)
    env = environment.record()
    peak = peak_for(env["gpu"]["name"]) if env["gpu"] else None
    telemetry = Telemetry.open()
    results = []
    total = 1 + len(cases) * (len(entries) + len(variants) + (best_arch is not None) + len(peer_list) + rounds)
    try:
        with Progress(total, enabled=progress) as bar:
            copy_bw = copy_bandwidth()
            bar.step(f"device copy: {copy_bw['tb_s']:.2f} TB/s")
            checked = [check_phases(entries, p, step=bar.step, best_arch=best_arch, variants=variants,
                                    operands=ops) for p, ops in cases]
            for (p, ops), phases in zip(cases, checked):
                rows = measure_shape(p, phases, peer_list, data=data, rounds=rounds, sustained_s=sustained_s,
                                     cold_l2=cold_l2, telemetry=telemetry, peak=peak, step=bar.step,
                                     operands=ops, copy_tb_s=copy_bw["tb_s"])
                results += [dict(r, operands=operands_record(ops)) for r in rows]
    finally:
        telemetry.close()
    kinds = list(dict.fromkeys(ops for _, ops in cases)) or [operands]
    return document(results, data=data, protocol=timing.protocol(rounds, sustained_s, cold_l2),
                    telemetry=telemetry.describe(), env=env, operands=kinds[0] if len(kinds) == 1 else kinds,
                    copy_bandwidth=copy_bw)


def estimate_seconds(n_kernels: int, n_shapes: int, rounds: int, sustained_s: float) -> float:
    """Lower bound of the GPU time the timing takes (the checks and compiles come on top)."""
    per_window = timing.TIMED_MS_PER_ROUND / 1000 + sustained_s
    return n_kernels * n_shapes * rounds * per_window


def entries_for(arch: str, phases: list[str] | None):
    """The registered entries of ``arch``, restricted to ``phases`` (LookupError naming a missing one)."""
    ents = registry.all_entries(arch)
    if phases:
        missing = [p for p in phases if p not in {e.phase for e in ents}]
        if missing:
            have = ", ".join(e.phase for e in ents) or "none"
            raise LookupError(f"no {arch} kernel for phase(s) {', '.join(missing)} (registered: {have})")
        ents = [e for e in ents if e.phase in phases]
    return ents

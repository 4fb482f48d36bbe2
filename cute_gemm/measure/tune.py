"""Tuning ``phase="best"`` on this GPU: per shape, the model's cheapest candidates timed side by side, the fastest kept.

``choose``'s model is right to ~10% per config, so its first candidate is not always the fastest: where several
are close, only a measurement can tell. ``tune`` measures the ``top`` cheapest candidates ``choose.explain``
ranks for a shape -- each checked against cuBLASLt and float64 first (NaN-poisoned C, a bit-identical repeat),
then timed interleaved on the same inputs as ``cute-gemm bench`` times (CUDA graphs, rounds, median; cold L2
unless asked otherwise) -- and stores the fastest in the GPU's table (``cute_gemm.runtime.tuned``), which
``phase="best"`` reads from then on; where the model's pick ran within ``MARGIN`` of the fastest, the model's pick
is kept instead. A candidate that fails its check is never kept.

``cute-gemm tune`` is the command; ``bench/candidates.py`` times candidates the same way for a refit of the
model. ``candidate_rows`` and ``compact`` turn a run into the compact candidates file both write
(``cute-gemm/best-candidates-v1``), which ``bench/fit_best.py`` reads.
"""

from __future__ import annotations

import dataclasses

from cute_gemm.measure import timing
from cute_gemm.runtime.problem import Problem
from phases.operands import WORKLOG, Operands

TOP = 6  # candidates timed per shape by default: the model's pick and the 5 it ranks next
# a candidate displaces the model's pick only when it ran more than this much faster: closer than that, the order of
# two kernels is the run's noise (at the power cap one kernel's median moves 2-3% between runs), not their speed
# (256x28672x8192 tuned cold: phase 10 cluster_m=4 185.5 us against the model's phase 7 187.2; benched after, 201.1)
MARGIN = 0.02
# with families: a family's cheapest is timed when modelled within this factor of the model's pick. The largest miss
# across families measured: 192x5120x27648, phase 9's 64 x 128 modelled 1.25x the pick's time, ran 0.86x of it
FAMILY_REACH = 1.5


@dataclasses.dataclass
class Tuned:
    """One shape's tuning: every candidate timed (label -> microseconds; None: failed its check or was not timed),
    the model's pick, the fastest, and the one kept: the fastest, or the model's pick where that ran within
    ``MARGIN`` of it."""

    shape: Problem
    timed: dict
    model: str
    fastest: str | None
    phase: str | None = None  # the kept one's phase and config overrides: what the table keeps
    config: dict | None = None
    vendor_us: float | None = None  # the faster of cuBLAS and cuBLASLt in the same run, when they ran
    kept: str | None = None
    operands: Operands = WORKLOG  # the layout and dtypes the shape was tuned for
    why: dict = dataclasses.field(default_factory=dict)  # label -> why it has no time ("failed its check", ...)

    @property
    def gain(self) -> float | None:
        """The model's pick's time over the kept one's (1.0: the model's pick stays), None if either was not timed."""
        if self.kept is None or self.timed.get(self.model) is None:
            return None
        return self.timed[self.model] / self.timed[self.kept]


def family(phase: str, config) -> tuple | None:
    """What kind of kernel a candidate is: (phase, weight-tile rows of phase 10, split K or not, multicast or not);
    None for the persistent phases. The model is right to ~10% within a family and can be further off between
    them (192x5120x27648: phase 9's 64 x 128 tiles, ranked 8th, ran 95-96 us; the model's pick 111-116)."""
    if phase not in ("9", "10"):
        return None
    return (phase, config.bm if phase == "10" else None, config.split_k > 1, config.cluster_m > 1)


def family_cheapest(rows, chosen, limit: float | None = None) -> list[dict]:
    """Of ``explain`` rows (cheapest first), the first -- the cheapest -- of every ``family`` none of the ``chosen``
    rows belongs to; with ``limit``, only rows modelled at most that many microseconds."""
    covered = {None} | {family(r["phase"], r["config"]) for r in chosen}
    out = []
    for row in rows:
        if limit is not None and row["cost"] > limit:
            break
        kind = family(row["phase"], row["config"])
        if kind not in covered:
            covered.add(kind)
            out.append(row)
    return out


def candidates(arch: str, p: Problem, top: int = TOP, operands=WORKLOG, families: bool = False,
               explore: bool = False) -> list[tuple]:
    """The model's ``top`` cheapest candidates of ``p``: [(entry, config, label, modelled us)], cheapest first; with
    ``families``, then the cheapest candidate of every ``family`` none of those belongs to, if modelled within
    ``FAMILY_REACH`` of the cheapest; with ``explore``, then every untimed config that takes ``p``
    (``choose.EXPLORE``: built, checked on the PTX machine, never measured)."""
    from cute_gemm.runtime import choose, registry

    rows, seen = [], set()
    for row in choose.explain(arch, p.m, p.n, p.k, operands):
        if (row["phase"], row["config"]) not in seen:  # one row per config, cheapest first
            seen.add((row["phase"], row["config"]))
            rows.append(row)
    chosen = rows[:top]
    if families and rows:
        chosen += family_cheapest(rows[top:], chosen, FAMILY_REACH * rows[0]["cost"])
    if explore:
        chosen += [r for r in choose.explore(arch, p.m, p.n, p.k, operands) if (r["phase"], r["config"]) not in seen]
    return [(registry.get(arch, r["phase"]), r["config"], r["label"], r["cost"]) for r in chosen]


def time_candidates(p: Problem, todo, peer_list=(), *, rounds: int = timing.ROUNDS, sustained_s: float = 0.0,
                    cold_l2: bool = True, operands=WORKLOG, progress: bool = False) -> dict:
    """A bench-v2 document of ``todo`` ((entry, config) each) at ``p``, beside ``peer_list``: all checked, then
    timed in one interleaved run. A default config runs as its phase's row, any other as a variant row."""
    from cute_gemm.measure import suite

    plain = [e for e, cfg in todo if cfg == e.default_config()]
    variants = [(e, cfg, e.overrides_label(cfg)) for e, cfg in todo if cfg != e.default_config()]
    return suite.run_bench(plain, [p], list(peer_list), rounds=rounds, sustained_s=sustained_s, cold_l2=cold_l2,
                           progress=progress, variants=variants, operands=operands)


def tune_shape(arch: str, p: Problem, *, top: int = TOP, peer_list=(), rounds: int = timing.ROUNDS,
               sustained_s: float = 0.0, cold_l2: bool = True, operands=WORKLOG, gpu: str | None = None,
               progress: bool = False, families: bool = False, explore: bool = False) -> tuple[Tuned, dict]:
    """Time the model's ``top`` candidates of ``p`` (with ``families`` also each family's cheapest, with ``explore``
    the untimed configs); with ``gpu`` (the GPU's name), store the fastest in its table. Returns (the tuning, the
    bench document of its run)."""
    from cute_gemm.runtime import tuned

    todo = candidates(arch, p, top, operands, families, explore)
    if not todo:
        return Tuned(p, {}, "", None, operands=operands), {}
    doc = time_candidates(p, [t[:2] for t in todo], peer_list, rounds=rounds, sustained_s=sustained_s,
                          cold_l2=cold_l2, operands=operands, progress=progress)
    rows = candidate_rows(doc)  # the candidates that passed their checks and were timed, each with the vendor's time
    by_label, why = {}, {}
    for e, cfg, label, _ in todo:
        over = e.overrides(cfg)
        us = next((r["us"] for r in rows if (r["phase"], r["config"]) == (e.phase, over)), None)
        by_label[label] = (us, e.phase, over)
        if us is None:
            why[label] = untimed_reason(doc, e.phase, over)
    result = Tuned(p, {lab: t for lab, (t, _, _) in by_label.items()}, todo[0][2], None,
                   vendor_us=rows[0]["vendor_us"] if rows else None, operands=operands, why=why)
    timed = [(t, lab) for lab, (t, _, _) in by_label.items() if t is not None]
    if timed:
        result.fastest = min(timed)[1]
        model_us = by_label[result.model][0]
        near = model_us is not None and model_us <= by_label[result.fastest][0] * (1 + MARGIN)
        result.kept = result.model if near else result.fastest
        _, result.phase, result.config = by_label[result.kept]
        if gpu:
            tuned.store(gpu, arch, p.m, p.n, p.k, operands, result.phase, result.config,
                        us=round(by_label[result.kept][0], 2), model=result.model,
                        model_us=None if model_us is None else round(model_us, 2),
                        vendor_us=None if result.vendor_us is None else round(result.vendor_us, 2),
                        date=doc.get("date", "")[:10], protocol=f"{'cold' if cold_l2 else 'warm'} L2, {rounds} rounds"
                        + (f", sustained {sustained_s:g} s" if sustained_s else ""))
    return result, doc


# ------------------------------------------------------------------------------------ candidates files
def untimed_reason(doc: dict, phase: str, over: dict) -> str:
    """Why a candidate (its phase and config overrides) of a bench-v2 document has no time: "failed its check" where
    its check failed (a wrong result), else "not timed" and the row's status and reason (an error, a skip)."""
    row = next((r for r in doc.get("results", ()) if r.get("kind") == "phase" and r.get("phase") == phase
                and (r.get("config") or {}) == over), None)
    if row is None:
        return "not timed (no row in the run)"
    if row.get("status") == "failed":
        return "failed its check"
    return f"not timed ({row.get('status')}: {row.get('reason') or 'no reason given'})"


# the phases whose rows are candidates: those ``best`` picks among (7-10) and those ``choose.EXPLORE`` adds (phase 6 in
# clusters); the others' rows (a bench run's ladder) are not tuning candidates
CANDIDATE_PHASES = ("6", "7", "8", "9", "10")


def candidate_rows(doc: dict) -> list[dict]:
    """Candidate rows (m, n, k, phase, config, us, vendor_us) of a candidates file, or of a bench-v2 document: its
    rows of the ``CANDIDATE_PHASES`` (a ``best`` row as the candidate it ran) and, per shape, the faster of cuBLAS
    and cuBLASLt (None where neither was timed)."""
    if "rows" in doc:
        return doc["rows"]
    vendor, rows = {}, []
    for r in doc["results"]:
        if r.get("status") != "ok" or not r.get("timing"):
            continue
        us = r["timing"]["ms_median"] * 1e3
        case = (r["shape"], (r.get("operands") or {}).get("label"))  # a shape may be in a run with several operands
        if r["kind"] == "peer" and r["name"] in ("cublas", "cublaslt"):
            vendor[case] = min(us, vendor.get(case, us))
        elif r["kind"] == "phase" and r.get("phase") in (*CANDIDATE_PHASES, "best"):
            # "best" ran one of the candidates: its phase is the checked kernel's, its config the pick's
            phase = r["check"]["key"].split(":")[1] if r["phase"] == "best" else r["phase"]
            rows.append({"m": r["m"], "n": r["n"], "k": r["k"], "phase": phase, "config": r.get("config") or {},
                         "us": us, "case": case})
    mixed = "operands" in doc and doc["operands"] is None  # a run of per-shape operands: each row names its own
    out = []
    for r in rows:
        case = r.pop("case")
        out.append(dict(r, vendor_us=vendor.get(case), **({"operands": case[1]} if mixed else {})))
    return out


def compact(doc: dict, note: str = "", arch: str = "sm90") -> dict:
    """A bench-v2 document of candidate runs as a candidates file: one row per timed phase kernel with the faster
    vendor's time at its shape and the model's time for it."""
    from cute_gemm.runtime import choose, registry

    rows = []
    for r in candidate_rows(doc):
        entry = registry.get(arch, r["phase"])
        cfg = dataclasses.replace(entry.default_config(), **r["config"])
        rows.append({**{k: r[k] for k in ("m", "n", "k", "phase", "config")}, "us": round(r["us"], 2),
                     "vendor_us": None if r["vendor_us"] is None else round(r["vendor_us"], 2),
                     "model_us": round(choose.modelled_us(entry.make(cfg), r["m"], r["n"], r["k"]), 2),
                     **({"operands": r["operands"]} if r.get("operands") else {})})
    gpu, ver = doc["gpu"], doc["versions"]
    return {"schema": "cute-gemm/best-candidates-v1", "gpu": gpu["name"], "driver": gpu["driver"], "torch": ver["torch"],
            "cutlass_dsl": ver["nvidia_cutlass_dsl"], "date": doc["date"][:10],
            "data": f"{doc['data']}, {'cold L2' if doc['protocol'].get('cold_l2') else 'warm L2'}",
            "protocol": f"cute-gemm bench per shape: CUDA graphs, interleaved rounds ({doc['protocol']['rounds']}), "
                        f"median per kernel; every kernel checked first",
            "copy_tb_s": round(doc["copy_bandwidth"]["tb_s"], 3), "command": [doc.get("command", "")], "note": note,
            "rows": rows}


def merge(docs: list[dict]) -> dict | None:
    """One bench-v2 document of several runs (the first's header, every run's rows; operands null where the runs'
    differ, each row carrying its own), None for none."""
    docs = [d for d in docs if d]
    if not docs:
        return None
    kinds = {repr(d.get("operands")) for d in docs}  # runs of other operands: the merged one's are per row (null)
    return {**docs[0], "results": [r for d in docs for r in d["results"]],
            **({"operands": None} if len(kinds) > 1 else {})}


__all__ = ["TOP", "MARGIN", "Tuned", "family", "family_cheapest", "candidates", "time_candidates", "tune_shape",
           "untimed_reason", "CANDIDATE_PHASES", "candidate_rows", "compact", "merge"]

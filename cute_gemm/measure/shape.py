"""One shape: check every kernel, then time the ones that passed together (phases and peers alike).

Every kernel of a run computes one problem in one layout and dtypes (``operands``: the bench's
``--layout``, ``--dtype``, ``--out-dtype``). A phase is checked with ``check_phase`` (fresh randn inputs in
that layout, NaN-poisoned C, vs cuBLASLt on the same tensors and float64, a repeat bit-identical) and a
peer with ``peers.check_peer``; a kernel that cannot do the shape or the operands, is absent, fails or
errors is reported with its reason and never timed. The kernels that passed are timed interleaved on one
set of timing inputs (``data``: the numbers in A and B move the H200's power draw and so its clock) by
``timing``, with the GPU's clock, power and throttle reasons recorded during each timed window by
``power``. Beside TFLOP/s each timed row gets its bandwidth: the bytes of A, B and C once each over its
time (TB/s), and that as % of the run's device-copy bandwidth (``bandwidth.copy_bandwidth``).
"""

from __future__ import annotations

import dataclasses
import statistics

from cute_gemm.errors import one_line
from cute_gemm.measure import power, timing
from cute_gemm.measure.inputs import timing_inputs
from cute_gemm.runtime.problem import Problem
from phases.operands import WORKLOG


def _row(kind: str, key: str, name: str, label: str, p: Problem, **extra) -> dict:
    return {"kind": kind, "key": key, "name": name, "label": label, **extra, "shape": str(p),
            "m": p.m, "n": p.n, "k": p.k, "flops": p.flops, "status": "ok", "reason": None, "check": None,
            "timing": None, "power": None}


@dataclasses.dataclass
class PhaseChecks:
    """The phases' rows at one shape after their checks, and a launch factory for each that passed."""

    rows: list[dict]
    factories: dict


def check_phases(entries, p: Problem, config=None, step=None, best_arch: str | None = None,
                 variants=(), operands=WORKLOG) -> PhaseChecks:
    """Check every entry at ``p`` with ``operands`` (compiling it there); one that cannot do the shape or
    the operands is skipped with its reasons.

    With ``best_arch``, one more row, ``best``: the phase and config ``phase="best"`` picks for this shape
    and these operands on this GPU (``cute_gemm.runtime.choose.resolve``: the GPU's tuned pick, else the
    model's), checked and timed like a phase, its label naming the pick ("... tuned" for a tuned one). ``variants``: (entry, config, label) triples, e.g. phase 8 with ``bn=128``: one more row
    each, keyed and named "8 bn=128" (``cute-gemm bench --config 8:bn=128``).
    The bench checks every phase at every shape before any peer runs: importing quack patches the
    DSL's tensor classes process-wide, and the phases are compiled before that happens.
    """
    from cute_gemm.measure import check
    from cute_gemm.runtime import choose, registry, plan

    # (entry, config, row key, row name, phase, label, adds)
    todo = [(e, config, e.key, e.phase, e.phase, f"phase {e.phase}", e.adds) for e in entries]
    todo += [(e, cfg, f"{e.key} {lab}", f"{e.phase} {lab}", e.phase, f"phase {e.phase} {lab}",
              f"phase {e.phase} with {lab}") for e, cfg, lab in variants]
    if best_arch:
        # what gemm(phase="best") runs on this GPU: its tuned pick (``cute-gemm tune``), else the model's cheapest
        try:
            phase, cfg, how = choose.resolve(best_arch, p.m, p.n, p.k, operands, plan.device_name(0))
        except LookupError:  # no candidate takes the shape
            phase = None
        if phase is not None:
            entry = registry.get(best_arch, phase)
            pick = choose.pick_label(best_arch, phase, cfg, how)
            close = [] if how == "tuned" else choose.close_calls(best_arch, p.m, p.n, p.k, operands)
            adds = f'phase="best" picked phase {pick}' + (
                f" (close call with {', '.join(close)}: within {choose.CLOSE_CALL:.0%} in the model; "
                f"`cute-gemm tune` settles it on this GPU)" if close else "")
            todo.append((entry, cfg, "best", "best", "best", f"best ({pick})", adds))
        else:
            todo.append((None, None, "best", "best", "best", "best", 'phase="best"'))
    rows, factories = [], {}
    for e, cfg, key, name, phase, label, adds in todo:
        row = _row("phase", key, name, label, p, phase=phase, adds=adds,
                   config=None if e is None or cfg is None else e.overrides(cfg))
        if key == "best" and label.endswith(" unfitted)"):
            row["model"] = "unfitted"  # the pick of a model whose constants are datasheet values (choose.fitted)
        why = (["no candidate of phase 'best' takes this shape with " + operands.label()] if e is None
               else plan.refusals(e.make(cfg, operands), p.m, p.n, p.k))
        if why:
            row.update(status="skipped", reason="; ".join(why))
        else:
            res = check.check_phase(e, p, cfg, operands=operands)
            row["check"] = dataclasses.asdict(res)
            if res.error:
                row.update(status="error", reason=res.error.splitlines()[0])
            elif not res.passed:
                row.update(status="failed", reason=res.summary())
            else:
                factories[key] = lambda a, b, c, e=e, cfg=cfg: plan.launcher(e, a, b, c, cfg)
        rows.append(row)
        if step:
            step(f"{p} check {label}: {row['status']}")
    return PhaseChecks(rows, factories)


def _check_peers(peer_list, p: Problem, step, operands=WORKLOG) -> tuple[list[dict], dict]:
    from cute_gemm.measure import peers, reference

    rows, factories = [], {}
    for peer in peer_list:
        detail = peer.detail
        if peer.name in peers.VENDOR:
            detail += f"; this run: {reference.describe(operands.ab, operands.c)}"
        row = _row("peer", f"peer:{peer.name}", peer.name, peer.label, p, detail=detail)
        missing, other = peer.missing(), peer.takes(operands)
        if missing:
            row.update(status="absent", reason=missing)
        elif other:
            row.update(status="skipped", reason=other)
        else:
            chk = peers.check_peer(peer, p, operands)
            row["check"] = chk
            row["library_kernels"] = chk.pop("kernels", None)
            if chk["error"]:
                row.update(status="error", reason=chk["error"])
            elif not chk["passed"]:
                row.update(status="failed", reason=f"wrong result: {chk['mismatches']} mismatches vs cuBLASLt, "
                                                   f"rel err {chk['rel_fro_err']:.2e} vs float64")
            else:
                factories[row["key"]] = peer.factory
        rows.append(row)
        step(f"{p} check {peer.name}: {row['status']}")
    return rows, factories


def add_percentages(rows: list[dict], peak: float | None):
    """% of cuBLAS, of cuBLASLt, of the better of the two ("vendor") and of peak, for every timed row
    of one shape (None where the reference was not measured), and ``x_vendor_paired``."""
    tf = {r["key"]: r["timing"]["tflops"] for r in rows if r.get("timing")}
    cublas, cublaslt = tf.get("peer:cublas"), tf.get("peer:cublaslt")
    vendor = max([v for v in (cublas, cublaslt) if v], default=None)
    vendor_rounds = [r["timing"]["ms_rounds"] for r in rows if r["key"] in ("peer:cublas", "peer:cublaslt")
                     and r.get("timing")]
    for r in rows:
        t = r["timing"]["tflops"] if r.get("timing") else None  # the row's own (two rows may share a key)
        r["pct_cublas"] = 100 * t / cublas if t and cublas else None
        r["pct_cublaslt"] = 100 * t / cublaslt if t and cublaslt else None
        r["pct_vendor"] = 100 * t / vendor if t and vendor else None
        r["pct_peak"] = 100 * t / peak if t and peak else None
        r["x_vendor_paired"] = paired_ratio(r["timing"].get("ms_rounds", []), vendor_rounds) if t else None


def paired_ratio(ms_rounds: list[float], vendor_rounds: list[list[float]]) -> dict | None:
    """Speed relative to the vendor round by round: in round i, the faster of cuBLAS and cuBLASLt *in that
    round* over this kernel (> 1: faster than both). Kernels timed next to each other share the power
    and thermal state of their round, so these ratios spread less than a ratio of medians taken over
    rounds that drift; {"median", "min", "max", "rounds": [...]}, or None without a vendor timing."""
    per_round = [min(v[i] for v in vendor_rounds) / ms for i, ms in enumerate(ms_rounds)
                 if all(i < len(v) for v in vendor_rounds)] if vendor_rounds else []
    if not per_round:
        return None
    return {"median": statistics.median(per_round), "min": min(per_round), "max": max(per_round),
            "rounds": per_round}


def add_bandwidth(rows: list[dict], p: Problem, operands=WORKLOG, copy_tb_s: float | None = None):
    """Per timed row: ``bytes`` (A + B + C once each), ``tb_s`` (those bytes over its median time) and
    ``pct_copy_bw`` (% of the run's device-copy bandwidth; None where it was not measured)."""
    nbytes = p.bytes(operands)
    for r in rows:
        t = r.get("timing")
        r["bytes"] = nbytes
        r["tb_s"] = nbytes / (t["ms_median"] * 1e-3) / 1e12 if t else None
        r["pct_copy_bw"] = 100 * r["tb_s"] / copy_tb_s if t and copy_tb_s else None


def time_together(p: Problem, factories: dict, by_key: dict, *, data, rounds, sustained_s, cold_l2, telemetry,
                  step, operands=WORKLOG):
    """Capture every kernel that passed on one set of timing inputs, time them interleaved (in the order of
    ``factories``) and fill their rows (timing, power). The graphs and the inputs are released when this
    returns. ``step(label, advance=1)``: progress, once per round."""
    sets = timing_inputs(p, data, timing.input_sets_needed(p.bytes(operands), cold_l2), operands)
    captured = {}
    for key, factory in factories.items():
        try:
            captured[key] = timing.capture(lambda f=factory: [f(a, b, c) for a, b, c in sets])
        except Exception as exc:  # reported on the row; the other kernels are still timed
            by_key[key].update(status="error", reason=f"could not capture a CUDA graph: {one_line(exc)}")
    timed = timing.interleave(captured, rounds, sustained_s, telemetry,
                              on_round=lambda r: step(f"{p} timing round {r + 1}/{rounds}"))
    if not captured:
        step(f"{p}: nothing to time", advance=rounds)
    for key, (t, windows) in timed.items():
        row = by_key[key]
        row["timing"] = t.as_dict(p.flops)
        row["power"] = power.summarize(windows, row["timing"]["tflops"])


def measure_shape(p: Problem, phases: PhaseChecks, peer_list, *, data: str = "randn", rounds: int = timing.ROUNDS,
                  sustained_s: float = 0.0, cold_l2: bool = False, telemetry=None, peak: float | None = None,
                  step=None, operands=WORKLOG, copy_tb_s: float | None = None) -> list[dict]:
    """Rows (phases, then peers) for one shape: the peers checked, and every kernel that passed timed
    together with the others, with their bandwidth (``add_bandwidth``, against ``copy_tb_s``).

    ``step(label, advance=1)`` is called once per peer checked and once per timing round (progress).
    """
    import torch

    step = step or (lambda label, advance=1: None)
    peer_rows, peer_factories = _check_peers(peer_list, p, step, operands)
    factories = {**phases.factories, **peer_factories}
    rows = phases.rows + peer_rows
    time_together(p, factories, {r["key"]: r for r in rows}, data=data, rounds=rounds, sustained_s=sustained_s,
                  cold_l2=cold_l2, telemetry=telemetry, step=step, operands=operands)
    add_percentages(rows, peak)
    add_bandwidth(rows, p, operands, copy_tb_s)
    torch.cuda.empty_cache()  # this shape's graph pools and inputs, before the next shape allocates its own
    return rows

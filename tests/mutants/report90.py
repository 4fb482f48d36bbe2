"""The sm90 mutants' report: which check kills each one (CPU rule, PTX machine, another CPU test, the
H200 GPU tests), per kind and per mutant, as a JSON-able summary and markdown."""

from __future__ import annotations

CHECKS = ("CPU rule", "PTX machine", "existing CPU test")
# the tests of tests/test_sm90_ptx_static.py and test_sm90_sim.py -> the rule (as tests/sm90_rules.py names it)
RULES = {
    "test_proxy_fence_then_barrier_before_async_reads": "(a) proxy fence, then barrier",
    "test_wgmma_retired_before_its_stage_is_released": "(b) wgmma retired before release",
    "test_wgmma_accumulators_untouched_while_in_flight": "(g) accumulators untouched in flight",
    "test_wgmma_fence_before_accumulating": "(h) wgmma.fence",
    "test_dsmem_reduce_between_cluster_barriers": "(e) DSMEM between cluster barriers",
    "test_griddepcontrol_wait_before_global_accesses": "(f) griddepcontrol.wait first",
    "test_persistent_phases_with_programmatic_dependent_launch": "(f) griddepcontrol.wait first",
    "test_setmaxnreg_fits_the_registers_of_the_cta": "(i) setmaxnreg budget",
    "test_simulation": "PTX machine",
    "test_simulation_token_tile_multicast": "PTX machine",
    "test_simulation_wide_tiles_and_uneven_splits": "PTX machine",
}


def checks_of(o) -> list:
    """The rules and the machine that kill an outcome, by name; other failing tests by their own names."""
    return [RULES.get(t, t) for t in getattr(o, "failed", [])] or list(o.caught_by)
CAUGHT = ("killed", "compile", "timeout")  # a compile refusal or a hang counts as caught


def summarize90(outcomes: list, gpu: dict | None = None) -> dict:
    """Counts of the CPU run (``outcomes``: runner.Outcome), and with ``gpu`` ({id: {"status", ...}} of
    ``--gpu``) the GPU's and both together."""
    counted = [o for o in outcomes if o.status != "invalid"]
    cpu_killed = [o for o in counted if o.status in CAUGHT]
    by_check = {c: sum(1 for o in counted if c in o.caught_by) for c in CHECKS}
    only = {c: sum(1 for o in counted if o.caught_by == [c]) for c in CHECKS}
    kinds: dict = {}
    for o in counted:
        k = kinds.setdefault(o.kind, {"killed": 0, "total": 0, "survivors": []})
        k["total"] += 1
        if o.status in CAUGHT:
            k["killed"] += 1
        else:
            k["survivors"].append(o.id)
    out = {
        "killed": len(cpu_killed),
        "total": len(counted),
        "kill_rate": round(len(cpu_killed) / len(counted), 3) if counted else 0.0,
        "by_check": by_check,
        "only_by_check": only,
        "by_kind": kinds,
        "survivors": [o.id for o in counted if o.status == "survived"],
        "need_gpu": [o.id for o in counted if o.status == "survived"],
        "invalid": [o.id for o in outcomes if o.status == "invalid"],
        "by_rule": {r: [o.id for o in counted if r in checks_of(o)] for r in RULES.values()},
    }
    if gpu is not None:
        ran = [o for o in counted if o.id in gpu]
        gpu_killed = [o for o in ran if gpu[o.id]["status"] in CAUGHT + ("hang",)]
        both = [o for o in counted if o.status in CAUGHT
                or (o.id in gpu and gpu[o.id]["status"] in CAUGHT + ("hang",))]
        out["gpu"] = {
            "ran": len(ran),
            "killed": len(gpu_killed),
            "killed_cpu_survivors": sum(1 for o in gpu_killed if o.status not in CAUGHT),
            "cpu_and_gpu_killed": len(both),
            "cpu_and_gpu_rate": round(len(both) / len(counted), 3) if counted else 0.0,
            "survivors": [o.id for o in counted if o not in both],
        }
    return out


def markdown90(summary: dict, outcomes: list, fast: bool, notes: dict, gpu: dict | None = None) -> str:
    """The report: the totals, per kind, then per mutant the checks that kill it (and the GPU's verdict)."""
    s = summary
    head = [f"# sm90 mutants{' (fast subset)' if fast else ''}", "",
            f"**CPU checks: {s['killed']} of {s['total']} killed** ({100 * s['kill_rate']:.0f}%): by a CPU rule "
            f"{s['by_check']['CPU rule']}, by the PTX machine {s['by_check']['PTX machine']}, by another CPU test "
            f"{s['by_check']['existing CPU test']} (several checks may kill one mutant; by the rules alone "
            f"{s['only_by_check']['CPU rule']}, by the machine alone {s['only_by_check']['PTX machine']})."]
    if gpu is not None and "gpu" in s:
        g = s["gpu"]
        head += ["", f"**H200 GPU tests: {g['killed']} of {g['ran']} killed**, {g['killed_cpu_survivors']} of them "
                     f"survivors of the CPU checks. **CPU and GPU together: {g['cpu_and_gpu_killed']} of {s['total']}** "
                     f"({100 * g['cpu_and_gpu_rate']:.0f}%); survivors: {', '.join(g['survivors']) or 'none'}."]
    else:
        head += ["", f"Left for the H200 GPU tests (`--gpu`): {', '.join(s['need_gpu']) or 'none'}."]
    lines = head + ["", "| check | mutants it kills |", "|---|---|"]
    for rule, ids in s.get("by_rule", {}).items():
        lines.append(f"| {rule} | {', '.join(f'`{i}`' for i in ids) or '-'} |")
    lines += ["", "| kind | killed on the CPU / total | CPU survivors |", "|---|---:|---|"]
    for kind, k in s["by_kind"].items():
        lines.append(f"| {kind} | {k['killed']} / {k['total']} | {', '.join(k['survivors']) or '-'} |")
    cols = "| mutant | kind | phase | CPU result | caught by | s |" + (" GPU |" if gpu is not None else "") + " first failure / note |"
    lines += ["", cols, "|---|---|---|---|---|---:|" + ("---|" if gpu is not None else "") + "---|"]
    for o in outcomes:
        why = o.detail if o.status != "survived" else notes.get(o.id, o.detail)
        cells = [f"`{o.id}`", o.kind, o.phase, o.status, ", ".join(checks_of(o)) or "-", f"{o.seconds:.0f}"]
        if gpu is not None:
            g = gpu.get(o.id)
            cells.append("-" if g is None else g["status"] + (f": {g['detail'][:60]}" if g.get("detail") else ""))
        cells.append(why.replace("|", "/")[:160])
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    return "\n".join(lines) + "\n"

"""``python -m tests.mutants [--ladder sm100|sm90|epilogue|all] [--fast] [--jobs N] [--out DIR] [--only ID,...] [--list] [--gpu]``

Runs the planted mutants (``tests/mutants/catalog.py`` for sm100, ``catalog_sm90.py`` for sm90,
``catalog_epilogue.py`` for phase 11's fused epilogue on both) in copies of the tree and writes
``mutants.json`` and ``mutants.md`` (sm100), ``mutants_sm90.json`` and ``mutants_sm90.md`` (sm90: which check
kills each mutant), ``mutants_epilogue.json`` and ``mutants_epilogue.md`` into ``--out``. Exit status 1 when a
ladder's kill rate is below ``--min-kill`` (sm100, 0.8), ``--min-kill-sm90`` (0.6) or ``--min-kill-epilogue``
(0.9), or, with ``--fast``, when any mutant survives; 2 for a mutant whose substitution no longer applies (the
catalog must follow the code). ``--gpu`` (sm90, on an H200): the mutants against the GPU tests instead
(``gpu90.py``).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import json
import os
import sys
import time

from .catalog import MUTANTS
from .catalog_epilogue import MUTANTS as MUTANTS_EPILOGUE
from .catalog_sm90 import MUTANTS as MUTANTS_SM90
from .runner import run_mutant

LADDERS = {"sm100": MUTANTS, "sm90": MUTANTS_SM90, "epilogue": MUTANTS_EPILOGUE}


def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tests.mutants", description=__doc__.split("\n\n")[1])
    ap.add_argument("--fast", action="store_true", help="only the CI subset")
    ap.add_argument("--only", default="", help="comma-separated mutant ids")
    ap.add_argument("--jobs", type=int, default=2, help="mutants checked at once (default 2)")
    ap.add_argument("--timeout", type=int, default=420, help="seconds per mutant's checks (default 420)")
    ap.add_argument("--out", default="out/mutants", help="directory for mutants.json / mutants.md")
    ap.add_argument("--min-kill", type=float, default=0.8, help="kill rate below which the run fails")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--ladder", choices=("sm100", "sm90", "epilogue", "all"), default="all",
                    help="whose mutants (default all)")
    ap.add_argument("--min-kill-sm90", type=float, default=0.6, help="sm90: CPU kill rate below which the run fails")
    ap.add_argument("--min-kill-epilogue", type=float, default=0.9,
                    help="the fused epilogue's mutants: kill rate below which the run fails")
    ap.add_argument("--gpu", action="store_true", help="sm90 on an H200: run the GPU tests of each mutant instead")
    ap.add_argument("--gpu-jobs", type=int, default=6, help="--gpu: mutants tested on the GPU at once (default 6)")
    ap.add_argument("--compile-jobs", type=int, default=0, help="--gpu: trees compiled at once (default: every core)")
    ap.add_argument("--test-timeout", type=int, default=40, help="--gpu: seconds per GPU test before it is a hang")
    ap.add_argument("--gpu-timeout", type=int, default=150, help="--gpu: seconds per mutant's GPU tests (default 150)")
    return ap.parse_args(argv)


def select(args) -> list:
    ladders = list(LADDERS) if getattr(args, "ladder", "all") == "all" else [args.ladder]
    pool = [m for lad in ladders for m in LADDERS[lad]]
    chosen = [m for m in pool if not args.fast or m.fast]
    if args.only:
        ids = {x.strip() for x in args.only.split(",") if x.strip()}
        unknown = ids - {m.id for m in pool}
        if unknown:
            raise SystemExit(f"unknown mutant id(s): {', '.join(sorted(unknown))}")
        chosen = [m for m in chosen if m.id in ids]
    return chosen


def summarize(outcomes: list) -> dict:
    counted = [o for o in outcomes if o.status != "invalid"]
    killed = [o for o in counted if o.status in ("killed", "compile", "timeout")]
    kinds: dict = {}
    for o in counted:
        k = kinds.setdefault(o.kind, {"killed": 0, "total": 0, "survivors": []})
        k["total"] += 1
        if o.status in ("killed", "compile", "timeout"):
            k["killed"] += 1
        else:
            k["survivors"].append(o.id)
    return {
        "killed": len(killed),
        "total": len(counted),
        "kill_rate": round(len(killed) / len(counted), 3) if counted else 0.0,
        "by_kind": kinds,
        "survivors": [o.id for o in counted if o.status == "survived"],
        "compile": [o.id for o in counted if o.status == "compile"],
        "invalid": [o.id for o in outcomes if o.status == "invalid"],
    }


def markdown(summary: dict, outcomes: list, fast: bool, ladder: str = "sm100") -> str:
    by_id = {m.id: m for m in LADDERS[ladder]}
    title = "sm100 mutants" if ladder == "sm100" else "fused-epilogue mutants (phase 11, both ladders)"
    lines = [f"# {title}{' (fast subset)' if fast else ''}", "",
             f"**{summary['killed']} of {summary['total']} killed** ({100 * summary['kill_rate']:.0f}%); "
             f"{len(summary['compile'])} of them by the DSL's own compile-time checks "
             f"({', '.join(summary['compile']) or 'none'}), the rest by the CPU tests.", ""]
    if summary.get("command"):
        lines += [f"Run: `{summary['command']}`, {summary['seconds']:.0f} s wall time "
                  f"({summary.get('jobs', 1)} mutants at a time, {os.cpu_count()} CPU cores).", ""]
    lines += ["| kind | killed / total | survivors |", "|---|---:|---|"]
    for kind, k in summary["by_kind"].items():
        lines.append(f"| {kind} | {k['killed']} / {k['total']} | {', '.join(k['survivors']) or '-'} |")
    lines += ["", "| mutant | kind | phase | result | s | caught by / note |", "|---|---|---|---|---:|---|"]
    for o in outcomes:
        why = o.detail if o.status != "survived" or o.id not in by_id else by_id[o.id].note
        lines.append(f"| `{o.id}` | {o.kind} | {o.phase} | {o.status} | {o.seconds:.0f} | "
                     f"{why.replace('|', '/')[:160]} |")
    return "\n".join(lines) + "\n"


def ladder_of(o) -> str:
    return getattr(o, "ladder", "sm100")


def main(argv=None) -> int:
    args = parse_args(argv)
    chosen = select(args)
    if args.list:
        for m in chosen:
            print(f"{ladder_of(m):6s} {m.id:34s} {m.kind:38s} phase {m.phase:3s} {'fast' if m.fast else ''}")
        return 0
    if args.gpu:
        return main_gpu(args, [m for m in chosen if ladder_of(m) == "sm90"])
    t0 = time.perf_counter()
    outcomes = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        # sm90: every check runs (the report names each kind of check that kills); the others and --fast: -x
        futures = {pool.submit(run_mutant, m, args.timeout, first_failure=args.fast or ladder_of(m) != "sm90",
                               fast=args.fast): m for m in chosen}
        for fut in concurrent.futures.as_completed(futures):
            o = fut.result()
            outcomes.append(o)
            print(f"[{len(outcomes)}/{len(chosen)}] {o.id}: {o.status} ({o.seconds:.0f} s) {o.detail[:110]}",
                  flush=True)
    order = {m.id: i for i, m in enumerate(chosen)}
    outcomes.sort(key=lambda o: order[o.id])
    seconds = round(time.perf_counter() - t0, 1)
    command = " ".join(["python -m tests.mutants", *(argv if argv is not None else sys.argv[1:])])
    os.makedirs(args.out, exist_ok=True)
    status = 0
    for ladder in LADDERS:
        mine = [o for o in outcomes if o.ladder == ladder]
        if not mine:
            continue
        if ladder != "sm90":
            summary = summarize(mine)
        else:
            from .report90 import markdown90, summarize90

            summary = summarize90(mine)
        summary.update(seconds=seconds, fast=args.fast, command=command, jobs=args.jobs)
        if ladder == "sm100":
            stem, md, min_kill = "mutants", markdown(summary, mine, args.fast), args.min_kill
        elif ladder == "epilogue":
            stem, md = "mutants_epilogue", markdown(summary, mine, args.fast, "epilogue")
            min_kill = args.min_kill_epilogue
        else:
            notes = {m.id: m.note for m in MUTANTS_SM90}
            stem, md = "mutants_sm90", markdown90(summary, mine, args.fast, notes)
            min_kill = args.min_kill_sm90
        with open(os.path.join(args.out, stem + ".json"), "w") as f:
            json.dump({"summary": summary, "mutants": [dataclasses.asdict(o) for o in mine]}, f, indent=2)
        with open(os.path.join(args.out, stem + ".md"), "w") as f:
            f.write(md)
        print(f"{ladder}: {summary['killed']}/{summary['total']} killed ({100 * summary['kill_rate']:.0f}%) in "
              f"{seconds:.0f} s; report in {args.out}/{stem}.md")
        if summary["invalid"]:
            print(f"invalid mutants (substitution no longer applies, or the checks cannot import): {', '.join(summary['invalid'])}", file=sys.stderr)
            status = 2
        elif (args.fast and summary["survivors"]) or summary["kill_rate"] < min_kill:
            status = status or 1
    return status


def main_gpu(args, chosen: list) -> int:
    """The sm90 mutants against the H200 GPU tests; merged with the CPU run's report when --out has one."""
    from .gpu90 import run_gpu
    from .report90 import markdown90, summarize90
    from .runner import Outcome

    if not chosen:
        raise SystemExit("--gpu runs the sm90 mutants: use --ladder sm90 (or all)")
    res = run_gpu(chosen, jobs=args.compile_jobs or os.cpu_count() or 1, gpu_jobs=args.gpu_jobs,
                  timeout_s=args.gpu_timeout, test_timeout=args.test_timeout)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "mutants_sm90_gpu.json"), "w") as f:
        json.dump(res, f, indent=2)
    bad = {p: r for p, r in res["control"].items() if r["status"] != "survived"}
    cpu_path = os.path.join(args.out, "mutants_sm90.json")
    if os.path.exists(cpu_path):
        with open(cpu_path) as f:
            cpu = json.load(f)
        outcomes = [Outcome(**o) for o in cpu["mutants"]]
        summary = summarize90(outcomes, res["mutants"])
        summary.update(seconds=cpu["summary"].get("seconds"), gpu_seconds=res["seconds"], fast=False,
                       control={p: r["status"] for p, r in res["control"].items()})
        with open(cpu_path, "w") as f:
            json.dump({"summary": summary, "mutants": cpu["mutants"], "gpu": res}, f, indent=2)
        notes = {m.id: m.note for m in MUTANTS_SM90}
        with open(os.path.join(args.out, "mutants_sm90.md"), "w") as f:
            f.write(markdown90(summary, outcomes, False, notes, res["mutants"]))
        g = summary["gpu"]
        print(f"sm90: CPU {summary['killed']}/{summary['total']}, GPU {g['killed']}/{g['ran']}, together "
              f"{g['cpu_and_gpu_killed']}/{summary['total']} ({100 * g['cpu_and_gpu_rate']:.0f}%) in {res['seconds']:.0f} s "
              f"on the GPU; report in {args.out}/mutants_sm90.md")
    else:
        killed = sum(r["status"] in ("killed", "hang", "compile") for r in res["mutants"].values())
        print(f"sm90 on the GPU: {killed}/{len(res['mutants'])} killed in {res['seconds']:.0f} s; "
              f"{args.out}/mutants_sm90_gpu.json (run the CPU suite into the same --out first to merge)")
    if bad:
        print(f"the unmutated tree fails its GPU tests for phase(s) {', '.join(bad)}: {bad}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

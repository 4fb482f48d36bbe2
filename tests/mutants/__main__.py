"""``python -m tests.mutants [--fast] [--jobs N] [--out DIR] [--only ID,...] [--list]``

Runs the planted mutants (``tests/mutants/catalog.py``) in copies of the tree and writes
``mutants.json`` and ``mutants.md`` into ``--out``. Exit status 1 when the kill rate is below
``--min-kill`` (0.8) or, with ``--fast``, when any mutant survives; 2 for a mutant whose substitution
no longer applies (the catalog must follow the code).
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
from .runner import run_mutant


def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tests.mutants", description=__doc__.split("\n\n")[1])
    ap.add_argument("--fast", action="store_true", help="only the CI subset")
    ap.add_argument("--only", default="", help="comma-separated mutant ids")
    ap.add_argument("--jobs", type=int, default=2, help="mutants checked at once (default 2)")
    ap.add_argument("--timeout", type=int, default=420, help="seconds per mutant's checks (default 420)")
    ap.add_argument("--out", default="out/mutants", help="directory for mutants.json / mutants.md")
    ap.add_argument("--min-kill", type=float, default=0.8, help="kill rate below which the run fails")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    return ap.parse_args(argv)


def select(args) -> list:
    chosen = [m for m in MUTANTS if not args.fast or m.fast]
    if args.only:
        ids = {x.strip() for x in args.only.split(",") if x.strip()}
        unknown = ids - {m.id for m in MUTANTS}
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


def markdown(summary: dict, outcomes: list, fast: bool) -> str:
    by_id = {m.id: m for m in MUTANTS}
    lines = [f"# sm100 mutants{' (fast subset)' if fast else ''}", "",
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


def main(argv=None) -> int:
    args = parse_args(argv)
    chosen = select(args)
    if args.list:
        for m in chosen:
            print(f"{m.id:28s} {m.kind:42s} phase {m.phase:3s} {'fast' if m.fast else ''}")
        return 0
    t0 = time.perf_counter()
    outcomes = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(run_mutant, m, args.timeout): m for m in chosen}
        for fut in concurrent.futures.as_completed(futures):
            o = fut.result()
            outcomes.append(o)
            print(f"[{len(outcomes)}/{len(chosen)}] {o.id}: {o.status} ({o.seconds:.0f} s) {o.detail[:110]}",
                  flush=True)
    order = {m.id: i for i, m in enumerate(chosen)}
    outcomes.sort(key=lambda o: order[o.id])
    summary = summarize(outcomes)
    summary["seconds"] = round(time.perf_counter() - t0, 1)
    summary["fast"] = args.fast
    summary["command"] = " ".join(["python -m tests.mutants", *(argv if argv is not None else sys.argv[1:])])
    summary["jobs"] = args.jobs
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "mutants.json"), "w") as f:
        json.dump({"summary": summary, "mutants": [dataclasses.asdict(o) for o in outcomes]}, f, indent=2)
    with open(os.path.join(args.out, "mutants.md"), "w") as f:
        f.write(markdown(summary, outcomes, args.fast))
    print(f"{summary['killed']}/{summary['total']} killed ({100 * summary['kill_rate']:.0f}%) in "
          f"{summary['seconds']:.0f} s; report in {args.out}/")
    if summary["invalid"]:
        print(f"mutants whose substitution no longer applies: {', '.join(summary['invalid'])}", file=sys.stderr)
        return 2
    if args.fast and summary["survivors"]:
        return 1
    return 0 if summary["kill_rate"] >= args.min_kill else 1


if __name__ == "__main__":
    sys.exit(main())

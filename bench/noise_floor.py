"""The benchmark's resolution: the same kernels timed several times in one interleaved run.

The vendor GEMM is captured ``--copies`` times as peer ``cublas`` and as many times as ``cublaslt``
(at the shapes here both run the same nvjet kernel), phases 7 and 8 as many times each, and everything
is timed with the bench's own timing step (``cute_gemm.measure.shape.time_together``: one input set,
CUDA-graph replays, round robin, sustained), once in the listed order and once reversed. Identical
kernels should time alike: their spread is the smallest difference a single bench run can resolve.
Prints one line per timing and writes JSON.

    python3 bench/noise_floor.py --shapes 6144 8192 --out noise.json    (GPU; checkout on PYTHONPATH)
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", type=int, nargs="+", default=[6144, 8192], help="square sizes (default 6144 8192)")
    ap.add_argument("--copies", type=int, default=2, help="captures of each kernel per order (default 2)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--sustained", type=float, default=0.5, help="seconds of load before each timed window")
    ap.add_argument("--out", required=True, help="JSON file to write")
    args = ap.parse_args(argv)

    import torch

    from cute_gemm.measure import environment, peers, shape, timing
    from cute_gemm.measure.power import Telemetry
    from cute_gemm.runtime import registry
    from cute_gemm.runtime.plan import launcher
    from cute_gemm.runtime.problem import Problem

    factories = {"cublas": peers.PEERS["cublas"].factory, "cublaslt": peers.PEERS["cublaslt"].factory}
    for phase in ("7", "8"):
        factories[f"phase{phase}"] = lambda a, b, c, e=registry.get("sm90", phase): launcher(e, a, b, c)
    doc = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(), **environment.record(),
           "protocol": timing.protocol(args.rounds, args.sustained, False), "data": "randn", "runs": []}
    telemetry = Telemetry.open()
    for size in args.shapes:
        p = Problem(size, size, size)
        for reverse in (False, True):
            names = [f"{n}#{i}" for i in range(1, args.copies + 1) for n in factories]
            names = names[::-1] if reverse else names
            # the bench's own timing step: one input set, captured and timed interleaved in this order
            rows = {n: {} for n in names}
            shape.time_together(p, {n: factories[n.split("#")[0]] for n in names}, rows, data="randn",
                                  rounds=args.rounds, sustained_s=args.sustained, cold_l2=False,
                                  telemetry=telemetry, step=lambda label, advance=1: None)
            run = {"shape": str(p), "order": names, "kernels": {}}
            for n, row in rows.items():
                if not row.get("timing"):
                    print(p, n, row.get("reason"), flush=True)
                    continue
                t, pw = row["timing"], row["power"]
                run["kernels"][n] = {"tflops": t["tflops"], "ms_rounds": t["ms_rounds"],
                                     "mhz": pw["sm_clock_mhz"], "w": pw["power_w"]}
                print(p, n, f"{t['tflops']:.1f} TFLOP/s", f"{pw['sm_clock_mhz']['median']} MHz", flush=True)
            doc["runs"].append(run)
            torch.cuda.empty_cache()
        vendor = [k["tflops"] for r in doc["runs"] if r["shape"] == str(p) for n, k in r["kernels"].items()
                  if n.split("#")[0] in peers.VENDOR]
        print(f"{p}: {len(vendor)} timings of the vendor kernel, median {statistics.median(vendor):.1f}, "
              f"spread {100 * (max(vendor) / min(vendor) - 1):.1f}%")
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

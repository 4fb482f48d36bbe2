"""Same-run A/B of the sm90 phases before and after a change, on the H200 (not a test).

    git worktree add /tmp/before <commit>            # or any checkout of the older tree
    python3 bench/before_after.py --before /tmp/before --phases 5,6 --out $OUT/before_after.json

The older tree's ``phases`` package is copied to a temporary package ``phases_before`` (imports
rewritten), its kernels are compiled its own way (each tree brings its own contract: the older one
compiled per shape through ``from_dlpack`` views and took a CUstream), and both sets are timed in this
one process, on the same tensors, interleaved round robin, each kernel as a burst of back-to-back
launches between two CUDA events (the shapes are large enough that the host stays ahead of the GPU;
the older kernels, launched through the DSL's generic executor, are not captured in CUDA graphs: that
crashed on the H200, while the newer ones capture fine). The question it answers: does the newer
kernel run as fast as the older one on the older one's shapes (e.g. did one compile for every shape,
with runtime tile counts and a predicated ragged path, slow the aligned case)?
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import shutil
import statistics
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def load_before(tree: str):
    """The older tree's phases as package ``phases_before`` (imports rewritten); returns its kernel classes."""
    tmp = tempfile.mkdtemp(prefix="phases-before-")
    dst = os.path.join(tmp, "phases_before")
    shutil.copytree(os.path.join(tree, "phases"), dst)
    for dirpath, _, files in os.walk(dst):
        for f in files:
            if f.endswith(".py"):
                p = os.path.join(dirpath, f)
                src = open(p).read()
                src = re.sub(r"\bphases\.", "phases_before.", src)
                src = re.sub(r"\bfrom phases import\b", "from phases_before import", src)
                open(p, "w").write(src)
    sys.path.insert(0, tmp)
    pkg = importlib.import_module("phases_before")
    return {(c.arch, c.phase): c for c in getattr(pkg, "ALL", None) or pkg.all_phases()}


def before_launcher(cls, a, b, c):
    """Compile an older kernel for this shape (its contract: static shapes, from_dlpack views, a CUstream)."""
    import cutlass.cute as cute
    import torch
    from cuda.bindings.driver import CUstream
    from cutlass.cute.runtime import from_dlpack

    args = (from_dlpack(a, assumed_align=16), from_dlpack(b.t(), assumed_align=16), from_dlpack(c, assumed_align=16))
    fn = cute.compile(cls(), *args, CUstream(torch.cuda.current_stream().cuda_stream), options="--gpu-arch sm_90a")

    def launch():
        fn(*args, CUstream(torch.cuda.current_stream().cuda_stream))

    return launch


def burst_ms(launch, n: int) -> float:
    """Milliseconds per launch of ``n`` back-to-back launches between two events on the current stream."""
    import torch

    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(n):
        launch()
    e1.record()
    torch.cuda.synchronize()
    return e0.elapsed_time(e1) / n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="checkout of the older tree")
    ap.add_argument("--phases", default="5,6", help="sm90 phases to compare (default 5,6)")
    ap.add_argument("--shapes", default="4096,4096,4096;1024,4096,4096", help="M,N,K list separated by ';'")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--launches", type=int, default=20, help="launches per timed burst")
    ap.add_argument("--out", help="JSON file")
    args = ap.parse_args(argv)

    import torch

    from cute_gemm.runtime import registry
    from cute_gemm.runtime.plan import launcher
    from cute_gemm.measure.environment import record

    before = load_before(args.before)
    rows = []
    for spec in args.shapes.split(";"):
        m, n, k = (int(x) for x in spec.split(","))
        a = torch.randn(m, k, device="cuda").half()
        b = torch.randn(k, n, device="cuda").half()
        ref = torch.mm(a, b, out_dtype=torch.float32)
        kernels = {}
        for pid in args.phases.split(","):
            for side in ("before", "after"):
                c = torch.full((m, n), float("nan"), device="cuda")
                if side == "before":
                    launch = before_launcher(before[("sm90", pid)], a, b, c)
                else:
                    launch = launcher(registry.get("sm90", pid), a, b, c)
                launch()
                torch.cuda.synchronize()
                ok = bool(torch.allclose(c, ref, atol=0.01, rtol=0.001))
                kernels[(pid, side)] = (launch, ok)
                burst_ms(launch, 3)  # warm
        times = {key: [] for key in kernels}
        for _ in range(args.rounds):  # interleaved: every kernel once per round, same order
            for key, (launch, _) in kernels.items():
                times[key].append(burst_ms(launch, args.launches))
        for (pid, side), ms in times.items():
            med = statistics.median(ms)
            row = {"shape": spec, "phase": pid, "side": side, "correct": kernels[(pid, side)][1],
                   "ms_median": med, "ms_min": min(ms), "ms_max": max(ms), "tflops": 2 * m * n * k / med / 1e9}
            rows.append(row)
            print(f"{spec:>16} phase {pid:<3} {side:<7} {row['tflops']:7.1f} TFLOP/s "
                  f"({min(ms) * 1e3:.1f}..{max(ms) * 1e3:.1f} us)  correct={row['correct']}", flush=True)
        for pid in args.phases.split(","):
            t = {r["side"]: r["tflops"] for r in rows if r["shape"] == spec and r["phase"] == pid}
            print(f"{spec:>16} phase {pid:<3} after/before = {t['after'] / t['before']:.3f}", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"schema": "cute-gemm/before-after-v1", **record(), "before_tree": os.path.abspath(args.before),
                       "protocol": {"rounds": args.rounds, "launches_per_replay": args.launches,
                                    "timing": "back-to-back bursts between CUDA events, interleaved round robin, "
                                              "same tensors, randn"},
                       "results": rows}, f, indent=1)
    return 0 if all(r["correct"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

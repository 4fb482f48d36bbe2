"""H200 check + timing of sm90 phase 6 with and without its ``stream_k`` option (not a test: the same-run A/B behind the README's 3072^3 numbers).

Run from the repository root:  source .devcarry/setup.sh && timeout 150 python3 bench/phase6_stream_k_h200.py
One line per result, flushed as it comes, so a hang (killed by the timeout) still leaves what ran before it.
Order: stream_k off checks (the known-good kernel), stream_k on checks (small shapes first), then timings.
"""

import dataclasses
import sys
import time

import torch

from cute_gemm import registry
from cute_gemm.check import check_phase
from cute_gemm.measure import library_timings, measure
from cute_gemm.problem import Problem

CHECK_SHAPES = [Problem(512, 256, 768), Problem(2048, 1024, 512), Problem(3072, 3072, 3072),
                Problem(1024, 4096, 4096), Problem(4096, 4096, 4096)]
TIME_SHAPES = [Problem(3072, 3072, 3072), Problem(4096, 4096, 4096)]


def say(msg):
    print(msg, flush=True)


def main() -> int:
    entry = registry.get("sm90", "6")
    cfgs = {flag: dataclasses.replace(entry.default_config(), stream_k=flag) for flag in (False, True)}
    say(f"device {torch.cuda.get_device_name()}  torch {torch.__version__}")
    bad = 0
    for flag in (False, True):
        for p in CHECK_SHAPES:
            sched = entry.make(cfgs[flag]).schedule(p.m, p.n, p.k)  # (dp tiles, stream-K tiles, clusters)
            t0 = time.perf_counter()
            r = check_phase(entry, p, config=cfgs[flag])
            bad += not r.passed
            say(f"CHECK stream_k={int(flag)} {p} sched={sched} {'PASS' if r.passed else 'FAIL'} "
                f"mism={r.mismatches} unwritten={r.unwritten} maxerr={r.max_abs_err:.3g} rel={r.rel_fro_err:.2e} "
                f"repeat={'same' if r.repeat_identical else 'DIFF'} err={r.error} ({time.perf_counter() - t0:.1f}s)")
    for p in TIME_SHAPES:
        libs = library_timings(p)
        cb = libs["cublas"]["tflops"]
        say(f"TIME {p} cuBLAS {cb:.1f} cuBLASLt {libs['cublaslt']['tflops']:.1f} TFLOP/s")
        for flag in (False, True):
            m = measure(entry, p, config=cfgs[flag], libs=libs)
            tf = m.tflops
            if tf is None:
                bad += 1
                say(f"TIME stream_k={int(flag)} {p}: check failed, not timed: {m.check}")
                continue
            t = m.timing
            say(f"TIME stream_k={int(flag)} {p}: {tf:.1f} TFLOP/s "
                f"(min-max {t['tflops_worst']:.1f}-{t['tflops_best']:.1f}, {t['ms_median'] * 1e3:.1f} us) "
                f"= {tf / cb:.3f} x cuBLAS")
    say("ALL PASS" if bad == 0 else f"{bad} FAILURES")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

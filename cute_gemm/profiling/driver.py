"""What Nsight Compute runs (``python3 -m cute_gemm.profiling.driver --targets ... --shape M,N,K``).

For each target (a phase key such as 'sm90:5', or a library peer: 'cublas', 'cublaslt'): warm-ups, then
one launch between cudaProfilerStart/Stop, so that ncu (``--profile-from-start off``) profiles only
those. Writes nothing to stdout (ncu's CSV goes there); a target that fails is named on stderr behind
``ncu.DRIVER_TAG`` and the others still run.
"""

from __future__ import annotations

import argparse
import sys

from cute_gemm.profiling.ncu import DRIVER_MODULE, DRIVER_TAG, PEERS, WARMUP


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog=f"python3 -m {DRIVER_MODULE}")
    ap.add_argument("--targets", required=True)
    ap.add_argument("--shape", required=True)
    ap.add_argument("--warmup", type=int, default=WARMUP)
    args = ap.parse_args(argv)

    import torch

    from cute_gemm.measure import reference
    from cute_gemm.measure.inputs import make_inputs, poisoned_output
    from cute_gemm.runtime import plan, registry
    from cute_gemm.runtime.problem import Problem

    p = Problem.parse(args.shape)
    a, b = make_inputs(p)
    c = poisoned_output(p)
    target = plan.device_target(a.device)
    failed = 0
    for label in args.targets.split(","):
        try:
            if label in PEERS:
                def launch(name=label):
                    with reference.blas_library(name):
                        reference.mm_fp32_into(a, b, c)  # the C the phases write, as the bench times it
            else:
                launch = plan.launcher(registry.resolve(label, target), a, b, c)
            for _ in range(max(1, args.warmup)):
                launch()
            torch.cuda.synchronize()
            torch.cuda.profiler.start()
            try:
                launch()
                torch.cuda.synchronize()
            finally:  # a failed launch must not leave the next target's warm-ups in the profiled window
                torch.cuda.profiler.stop()
        except Exception as exc:  # one target's failure must not hide the others' profiles
            failed += 1
            first = str(exc).splitlines()[0] if str(exc) else ""
            print(f"{DRIVER_TAG} {label} failed: {type(exc).__name__}: {first}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

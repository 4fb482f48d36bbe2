#!/usr/bin/env bash
# Everything the H200 has to prove, in one device call (the lease is short): the GPU tests, the main job
# with a size sweep, phase 0 through `cute-gemm run`, a cold-L2 run and a GPU `compare`. Output in $OUT.
#   on the device: source .devcarry/setup.sh && bash bench/run_h200.sh
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
export CUTE_GEMM_GPU_TEST_TIMEOUT=${CUTE_GEMM_GPU_TEST_TIMEOUT:-90}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee "$OUT/gpu.txt"
timeout 230 python3 -m pytest -m gpu -q -p no:cacheprovider 2>&1 | tee "$OUT/gpu_tests.log"
timeout 280 python3 -m cute_gemm bench --sweep --out "$OUT/h200_bench.json" 2>&1 | tee "$OUT/bench.log"
{
  timeout 60 python3 -m cute_gemm run --phase 0 --json "$OUT/h200_run_phase0.json"
  timeout 60 python3 -m cute_gemm run --phase 5 --cold-l2 --shape 4096,4096,4096
  timeout 60 python3 -m cute_gemm compare 2a 2b
} 2>&1 | tee "$OUT/extra.log"

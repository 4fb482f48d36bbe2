#!/usr/bin/env bash
# The H200 runs behind docs/results.md, each under 10 minutes. Output in $OUT (default out/).
#   on an H200, with the project installed:  bash bench/run_h200.sh sweep      # 1
#                                            bash bench/run_h200.sh sustained  # 2
#                                            bash bench/run_h200.sh top        # the top of the ladder
#                                            bash bench/run_h200.sh target     # issue 10's criterion
# 1. sweep: every phase, phase="best" and the peers at the headline shapes and 512^3-8192^3, randn,
#    CUDA-graph timing interleaved over 7 rounds, NVML clock/power, Nsight Compute cross-check.
# 2. sustained: the shapes the performance targets name, each kernel kept busy 0.5 s before each timed
#    replay (steady state under the 700 W cap); the same on small-integer data; the API's host overhead;
#    the GPU tests.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
export CUTE_GEMM_GPU_TEST_TIMEOUT=${CUTE_GEMM_GPU_TEST_TIMEOUT:-120}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv | tee "$OUT/gpu.txt"
case "${1:-sweep}" in
sweep)
  timeout 560 python3 -m cute_gemm bench --sweep --best --ncu-check --out "$OUT/bench.json" 2>&1 | tee "$OUT/bench.log"
  ;;
sustained)
  timeout 200 python3 -m cute_gemm bench --shapes 4096,4096,4096 1024,4096,4096 8192,8192,8192 3072,3072,3072 \
    6144,6144,6144 --phases 5-8 --best --sustained 0.5 --rounds 5 --no-plot --out "$OUT/bench_sustained.json" \
    2>&1 | tee "$OUT/bench_sustained.log"
  timeout 100 python3 -m cute_gemm bench --shapes 4096,4096,4096 8192,8192,8192 --phases 5-8 --best --data ints \
    --rounds 5 --no-plot --out "$OUT/bench_ints.json" 2>&1 | tee "$OUT/bench_ints.log"
  timeout 100 python3 -m cute_gemm bench --api --phases 0,5,7 --out "$OUT/api.json" 2>&1 | tee "$OUT/api.log"
  timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_phases.py 2>&1 | tail -15 | tee "$OUT/gpu_tests.log"
  ;;
top)
  # 3. the top of the ladder (phases 6-8, phase="best", 7 with the 128x192 tile) against the peers at the
  #    target shapes, sustained, after the GPU tests; then Nsight Compute on 6, 7, 8 and cuBLAS at 8192^3.
  timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/ 2>&1 | tail -15 | tee "$OUT/gpu_tests.log"
  timeout 300 python3 -m cute_gemm bench --shapes 4096,4096,4096 1024,4096,4096 8192,8192,8192 3072,3072,3072 \
    6144,6144,6144 --phases 6-8 --best --config 7:bn=192 --sustained 0.5 --rounds 5 --no-plot --quiet \
    --out "$OUT/bench_top.json" 2>&1 | tee "$OUT/bench_top.log"
  timeout 150 python3 -m cute_gemm profile --phase 6-8 --shape 8192,8192,8192 --json "$OUT/profile_8192.json" \
    2>&1 | tee "$OUT/profile_8192.log"
  ;;
target)
  # 4. the criterion: phase 7, phase 8 and phase="best" against cuBLAS and cuBLASLt at the five
  #    target shapes, sustained, 9 rounds (the table's "x vendor per round" pairs each round with the
  #    vendor's same round); after the peer and bench-flow GPU tests.
  timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_worklog_and_peers.py tests/test_bench_flow.py \
    2>&1 | tail -8 | tee "$OUT/gpu_tests.log"
  timeout 420 python3 -m cute_gemm bench --shapes 4096,4096,4096 1024,4096,4096 8192,8192,8192 3072,3072,3072 \
    6144,6144,6144 --phases 7,8 --best --peers cublas,cublaslt \
    --sustained 0.5 --rounds 9 --no-plot --out "$OUT/bench_target.json" 2>&1 | tee "$OUT/bench_target.log"
  ;;
esac

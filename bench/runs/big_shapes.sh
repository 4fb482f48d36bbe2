#!/usr/bin/env bash
# bench/runs/big_shapes.sh: one topic of the H200 runs (bash bench/run_h200.sh --list shows every case).
# The ladder at the big shapes: the sweep over every phase and the square sizes, the five shapes issue 10's targets
# name (sustained: each kernel kept busy under the 700 W power cap), no regression at them after a change, and the
# skinny 1024x4096x4096.
# 1. sweep: every phase, phase="best" and the peers at the headline shapes and 512^3-8192^3, randn,
#    CUDA-graph timing interleaved over 7 rounds, NVML clock/power, Nsight Compute cross-check.
# 2. sustained: the shapes the performance targets name, each kernel kept busy 0.5 s before each timed
#    replay (steady state under the 700 W cap); the same on small-integer data; the API's host overhead;
#    the GPU tests.
#
# Run from the repository root: bash bench/run_h200.sh CASE. Each case's comment says what it ran and, once run,
# what came back; docs/results.md holds the tables. Cases (the number orders the device runs):
#   sweep          1. every phase, best and the peers at the headline shapes and 512^3-8192^3; Nsight Compute cross-check
#   sustained      2. the target shapes sustained (700 W cap), small-integer data, the API's host overhead, GPU tests
#   top            3. phases 6-8 and best beside the peers at the target shapes, sustained; Nsight Compute at 8192^3
#   target         4. issue 10's criterion: phases 7, 8, best beside both vendors at the five target shapes, sustained
#   regime3        7. after phase 9's 16-bit C epilogue fix: its GPU tests, no regression at big shapes, K-major weights
#   skinny-mcast  59. 1024x4096x4096 sustained: the pick beside cuBLAS's arrangement (the B tile multicast), phase 7 + PDL
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
case "${1:-}" in
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
  # 4. the issue's criterion: phase 7, phase 8 and phase="best" against cuBLAS and cuBLASLt at the five
  #    target shapes, sustained, 9 rounds (the table's "x vendor per round" pairs each round with the
  #    vendor's same round); after the peer and bench-flow GPU tests.
  timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_worklog_and_peers.py tests/test_bench_flow.py \
    2>&1 | tail -8 | tee "$OUT/gpu_tests.log"
  timeout 420 python3 -m cute_gemm bench --shapes 4096,4096,4096 1024,4096,4096 8192,8192,8192 3072,3072,3072 \
    6144,6144,6144 --phases 7,8 --best --peers cublas,cublaslt \
    --sustained 0.5 --rounds 9 --no-plot --out "$OUT/bench_target.json" 2>&1 | tee "$OUT/bench_target.log"
  ;;
regime3)
  # 7. after phase 9's 16-bit-C epilogue moved to smem: its GPU tests, no regression at the big shapes, and the
  #    K-major weight layout against the worklog's (fp16 -> fp32, the same phase).
  timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_split_swap.py 2>&1 | tail -4 \
    | tee "$OUT/regime3.log"
  timeout 110 python3 -m cute_gemm bench --shapes 4096,4096,4096 1024,4096,4096 8192,8192,8192 3072,3072,3072 \
    --phases 7,8 --best --peers cublas,cublaslt --rounds 7 --quiet --no-plot --out "$OUT/regress_bench.json" \
    2>&1 | grep -E "^(phase|best|cuBLAS)" | tee -a "$OUT/regime3.log"
  for layout in nt nn; do
    timeout 60 python3 -m cute_gemm bench --shapes 4096,4096,4096 1024,4096,4096 --phases 7 --best \
      --peers cublas,cublaslt --layout $layout --rounds 5 --quiet --no-plot --out "$OUT/layout_${layout}_bench.json" \
      2>&1 | grep -E "^(phase|best|cuBLAS)" | tee -a "$OUT/regime3.log"
  done
  ;;
skinny-mcast)
  # 59. (ran 2026-12-03: ours 0.951-0.966 of cuBLAS, the multicast 0.955) 1024x4096x4096 sustained (the power cap): the model's pick (phase 9 128 x 256) beside cuBLAS's arrangement
  #     (its nvjet 256x128 cluster 1x2 is, in row-major terms, 128 x 256 tiles with the B tile multicast to 2 M tiles:
  #     phase 9 cluster_m=2), phase 7 + PDL (the tuned pick that met 1.016 on 12-02) and 128 x 128 pairs
  timeout 150 python3 -m cute_gemm bench --shapes 1024,4096,4096 --phases 7 --best --peers cublas,cublaslt \
    --config 7:use_pdl=true --config 9:bn=256,stages=4,split_k=1,cluster_m=2,use_pdl=true \
    --config 9:split_k=1,cluster_m=2,use_pdl=true --sustained 0.5 --rounds 9 --quiet --no-plot \
    --out "$OUT/skinny_mcast_bench.json" 2>&1 | tail -10
  ;;
*)
  echo "$0: no case '${1:-}' here (bash bench/run_h200.sh --list)" >&2
  exit 2
  ;;
esac

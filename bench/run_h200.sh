#!/usr/bin/env bash
# The H200 runs behind docs/results.md, each under 10 minutes. Output in $OUT (default out/).
#   on an H200, with the project installed:  bash bench/run_h200.sh sweep      # 1
#                                            bash bench/run_h200.sh sustained  # 2
#                                            bash bench/run_h200.sh top        # the top of the ladder
#                                            bash bench/run_h200.sh target     # issue 10's criterion
#                                            bash bench/run_h200.sh regime     # issue 18: decode, small
#                                            bash bench/run_h200.sh regime2    # issue 18/20: the rest
#                                            bash bench/run_h200.sh regime3    # after phase 9's 16-bit C fix
#                                            bash bench/run_h200.sh regime4    # wave-fitted tiles, refitted model
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
regime)
  # 5. issue 18: every shape a model runs. The GPU tests of the operands and of the split/swap configs,
  #    then phase="best" beside cuBLAS, cuBLASLt and phase 7 on the decode and small sets (cold L2).
  timeout 240 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_operands.py tests/test_gpu_split_swap.py \
    2>&1 | tail -15 | tee "$OUT/gpu_tests_operands.log"
  timeout 170 python3 -m cute_gemm bench --set decode --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --out "$OUT/decode_bench.json" 2>&1 | tail -45 | tee "$OUT/decode_bench.log"
  timeout 60 python3 -m cute_gemm bench --set small --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 7 \
    --quiet --out "$OUT/small_bench.json" 2>&1 | tail -12 | tee "$OUT/small_bench.log"
  ;;
regime2)
  # 6. the rest of issue 18's and 20's criteria: the decode set again after the model's fix, no regression at
  #    the big shapes (best beside phases 7 and 8), the skinny shape sustained, the nn.Linear layout (nt,
  #    bf16 -> bf16) against the worklog's, and phases 9/10 under the sanitizers and the stress run.
  timeout 170 python3 -m cute_gemm bench --set decode --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --out "$OUT/decode_bench.json" 2>&1 | tail -3 | tee "$OUT/decode_bench.log"
  timeout 110 python3 -m cute_gemm bench --shapes 4096,4096,4096 1024,4096,4096 8192,8192,8192 3072,3072,3072 \
    --phases 7,8 --best --peers cublas,cublaslt --rounds 7 --quiet --out "$OUT/regress_bench.json" 2>&1 | tail -12 \
    | tee "$OUT/regress_bench.log"
  timeout 60 python3 -m cute_gemm bench --shapes 1024,4096,4096 --phases 7 --best --peers cublas,cublaslt \
    --sustained 0.5 --rounds 9 --quiet --no-plot --out "$OUT/skinny_sustained_bench.json" 2>&1 | tail -8 \
    | tee "$OUT/skinny_sustained_bench.log"
  timeout 70 python3 -m cute_gemm bench --shapes 4096,4096,4096 1024,4096,4096 --phases 7 --best \
    --peers cublas,cublaslt --layout nt --dtype bf16 --out-dtype bf16 --rounds 5 --quiet --no-plot \
    --out "$OUT/linear_nt_bf16_bench.json" 2>&1 | tail -8 | tee "$OUT/linear_nt_bf16_bench.log"
  timeout 70 python3 -m cute_gemm bench --shapes 4096,4096,4096 1024,4096,4096 --phases 7 --best \
    --peers cublas,cublaslt --layout nn --dtype bf16 --out-dtype bf16 --rounds 5 --quiet --no-plot \
    --out "$OUT/linear_nn_bf16_bench.json" 2>&1 | tail -8 | tee "$OUT/linear_nn_bf16_bench.log"
  timeout 100 python3 bench/sanitize.py --phases 9,10 --shapes 512,512,512 1000,264,520 16,4104,1032 \
    --deadline 60 --jobs 4 --out "$OUT/sanitize" 2>&1 | tail -12
  timeout 50 python3 bench/stress.py --phases 9,10 --calls 300 --thread-calls 150 --timeout 45 \
    --out "$OUT/stress" 2>&1 | tail -6
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
regime4)
  # 8. after the wave-fitted tiles and the refitted model (choose.py): the decode, small and unlisted sets, cold L2,
  #    and no regression at the big shapes, all in one call
  timeout 170 python3 -m cute_gemm bench --set decode --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --out "$OUT/decode_bench.json" 2>&1 | tail -3 | tee "$OUT/regime4.log"
  timeout 60 python3 -m cute_gemm bench --set small --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 7 \
    --quiet --out "$OUT/small_bench.json" 2>&1 | tail -3 | tee -a "$OUT/regime4.log"
  timeout 90 python3 -m cute_gemm bench --set unlisted --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --out "$OUT/unlisted_bench.json" 2>&1 | tail -3 | tee -a "$OUT/regime4.log"
  timeout 110 python3 -m cute_gemm bench --shapes 4096,4096,4096 1024,4096,4096 8192,8192,8192 3072,3072,3072 \
    --phases 7,8 --best --peers cublas,cublaslt --rounds 7 --quiet --no-plot --out "$OUT/regress_bench.json" \
    2>&1 | tail -3 | tee -a "$OUT/regime4.log"
  ;;
esac

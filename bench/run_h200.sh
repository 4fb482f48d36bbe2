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
#                                            bash bench/run_h200.sh regime6    # the token-tile multicast: checks
#                                            bash bench/run_h200.sh regime7    # every set after it, both held-out sets
#                                            bash bench/run_h200.sh tokens     # its candidate tables
#                                            bash bench/run_h200.sh wide       # 192-row tiles, 3-way splits: candidates
#                                            bash bench/run_h200.sh regime8    # their checks
#                                            bash bench/run_h200.sh regime9    # the sets after them, heldout3 first
#                                            bash bench/run_h200.sh tune1      # `cute-gemm tune`: its tests, heldout4, skinny
#                                            bash bench/run_h200.sh tune2      # tuned: decode
#                                            bash bench/run_h200.sh tune3      # tuned: small, heldout3, no-regression
#                                            bash bench/run_h200.sh pdl1       # persistent phases + PDL: tests, skinny, no-regression, small
#                                            bash bench/run_h200.sh pdl2       # decode tuned and benched after it
#                                            bash bench/run_h200.sh pdl3       # tune's margin: decode, no-regression; PDL sanitized
#                                            bash bench/run_h200.sh tokens16   # token tiles in steps of 16: the picks they moved
#                                            bash bench/run_h200.sh tokens16-checks  # their GPU checks, held-out sets
#                                            bash bench/run_h200.sh stream-k   # phase 11 at a58f7fa (reverted)
#                                            bash bench/run_h200.sh families1  # 72-248 tokens: every family's cheapest
#                                            bash bench/run_h200.sh families2  # (the second half of the shapes)
#                                            bash bench/run_h200.sh families3  # 24 more (4 of them from the held-out sets)
#                                            bash bench/run_h200.sh model5     # the refit: old and new picks, heldout5, decode
#                                            bash bench/run_h200.sh model5-sets # the held-out and unlisted sets after it
#                                            bash bench/run_h200.sh model6     # multicast / reduce refit: moved picks, heldout6, heldout5
#                                            bash bench/run_h200.sh families5  # heldout6's candidates, token-row alignment probes
#                                            bash bench/run_h200.sh ring64     # 64-deep k-tiles at 64-128 tokens
#                                            bash bench/run_h200.sh model6-sample  # the refit at random shapes whose pick moved
#                                            bash bench/run_h200.sh ring192    # 192-deep k-tiles at the decode picks
#                                            bash bench/run_h200.sh tokens2    # 128 tokens in two 64-token tiles (cuBLAS's split)
#                                            bash bench/run_h200.sh wmcast     # 64-token tiles sharing the weights (multicast)
#                                            bash bench/run_h200.sh wmcast-checks  # their GPU tests, sanitizers, stress run
#                                            bash bench/run_h200.sh stalls     # where the weight stream's warps wait, per SASS line
#                                            bash bench/run_h200.sh deep64     # 128 tokens as two 64-token tiles in a deep ring
#                                            bash bench/run_h200.sh evict      # phase 10's weights evict-first in L2, with and without
#                                            bash bench/run_h200.sh evict-checks  # its GPU tests, the decode set after it
#                                            bash bench/run_h200.sh evict2     # best's evict-first rule: decode, twins, held-out sets
#                                            bash bench/run_h200.sh evict3     # the rule at random shapes, with and without
#                                            bash bench/run_h200.sh tune-families  # tune --families where best is below 0.9
#                                            bash bench/run_h200.sh l2probe    # fewer L2 reads per weight byte at 128 tokens
#                                            bash bench/run_h200.sh reduce-cost  # what the split-K reduce costs (short K)
#                                            bash bench/run_h200.sh p9pairs    # phase 9's pairs with phase 10's factor: moved picks
#                                            bash bench/run_h200.sh p9pairs-128  # the rule at M = 128, held out; the decode set
#                                            bash bench/run_h200.sh reread     # phase 10 charged per token tile (not landed)
#                                            bash bench/run_h200.sh reread2    # that term with a wide-tile one: the picks it moves
#                                            bash bench/run_h200.sh model7     # the model with both: heldout7, decode, the gaps' sets
#                                            bash bench/run_h200.sh tiles3     # 160-256 tokens in 3-4 narrow token tiles
#                                            bash bench/run_h200.sh tok2       # 128 tokens in two 64-token tiles, split 2 (lost)
#                                            bash bench/run_h200.sh tiles3m    # one 3-token-tile kernel at 200..240 tokens
#                                            bash bench/run_h200.sh tiles3-heldout  # that candidate where it moves the pick
#                                            bash bench/run_h200.sh tiles3-80  # narrowed to 232-240 tokens, K <= 5120
#                                            bash bench/run_h200.sh tiles3-checks  # its config's GPU tests, sanitizers, stress
#                                            bash bench/run_h200.sh model8     # (ran 12-03) issue 18's criteria with the final model, one run
#                                            bash bench/run_h200.sh bm256      # 257-512 tokens in 256-row weight tiles
#                                            bash bench/run_h200.sh bm256-moved  # best's picks they moved, beside the old
#                                            bash bench/run_h200.sh bm256-checks  # their GPU tests, sanitizers
#                                            bash bench/run_h200.sh bm256-tail  # 289-310 tokens at 14336 weight rows
#                                            bash bench/run_h200.sh criteria9  # issue 18's criteria after them
#                                            bash bench/run_h200.sh heldout11  # 257-512 tokens held out; the gaps' families
#                                            bash bench/run_h200.sh gen512     # phase 10's token halves past 256 tokens
#                                            bash bench/run_h200.sh gen512-checks  # their checks, two-wave picks, heldout11
#                                            bash bench/run_h200.sh criteria10  # decode and small with the final model
#                                            bash bench/run_h200.sh m512-stress  # (ran 12-04) 257-512 tokens: the stress run of their configs
#                                            bash bench/run_h200.sh w64pairs   # 128x4096x14336: 64-wide weight tiles in pairs, bk 128
#                                            bash bench/run_h200.sh gaps512    # 257-512 tokens furthest below the vendor: every family
#                                            bash bench/run_h200.sh tiles3x    # past 256 tokens: three token tiles, cuBLAS's arrangements
#                                            bash bench/run_h200.sh w64more    # 65-128 tokens: phase 9's 64 x 64 tiles, bk 128, more shapes
#                                            bash bench/run_h200.sh t3w64-moved  # both: the picks they moved, beside the old
#                                            bash bench/run_h200.sh t3w64-checks  # their GPU tests, sanitizers, stress run
#                                            bash bench/run_h200.sh criteria11  # decode, small, heldout11 with the final model
#                                            bash bench/run_h200.sh criteria11-big  # no regression, the skinny shape sustained
#                                            bash bench/run_h200.sh heldout12  # 12 random shapes of 1-512 tokens, final model
#                                            bash bench/run_h200.sh tiles3-mc4  # (ran 12-03) 241-256 tokens in three 96-token tiles over 4
#                                            bash bench/run_h200.sh mc4-fresh   # (ran 12-03) that rule beside the old picks, 14 fresh shapes
#                                            bash bench/run_h200.sh skinny-mcast  # (ran 12-03) 1024x4096x4096 sustained: B multicast
#                                            bash bench/run_h200.sh region256  # (ran 12-03) 241-256 tokens x N 4288-5120: every family
#                                            bash bench/run_h200.sh reduce-cap  # (ran 12-03) the reduce charged for <= 80 KiB: moved picks
#                                            bash bench/run_h200.sh reduce-cap-checks  # (ran 12-03) the split big tiles' checks
#                                            bash bench/run_h200.sh reduce-cap2  # (ran 12-03) a second sample of moved picks
#                                            bash bench/run_h200.sh model9     # (ran 12-03) heldout8 (new), heldout3, unlisted with the cap
#                                            bash bench/run_h200.sh mcast192   # (ran 12-03) 192-row tiles with the token multicast, 2 token tiles
#                                            bash bench/run_h200.sh tok8       # (ran 12-03) token tiles of 8 x odd (88, 104, ...): tests, beside best
#                                            bash bench/run_h200.sh tok8-moved  # (ran 12-03) steps of 8: new picks beside old, 22 fresh shapes
#                                            bash bench/run_h200.sh tok8-checks  # (ran 12-03) 8 x odd token tiles: sanitizers, stress
#                                            bash bench/run_h200.sh tok8-sets  # (ran 12-03) heldout9 (new), heldout8, unlisted, steps of 8
#                                            bash bench/run_h200.sh tok8-4864  # (ran 12-03) heldout9's lowest shape again, ragged clusters of 4
#                                            bash bench/run_h200.sh tok8-ragged  # (ran 12-03) three 88-token tiles unicast, ragged counts
#                                            bash bench/run_h200.sh heldout10  # (ran 12-03) heldout10 (new): bench + candidates, model picks
#                                            bash bench/run_h200.sh heldout10-tuned # (ran 12-03) heldout10 tuned, then benched; skinny twice
#                                            bash bench/run_h200.sh oneround   # (ran 12-03) one-round persistent launch: moved picks, skinny
#                                            bash bench/run_h200.sh m512       # (ran 12-03) 257-512 tokens: one-wave tiles beside best
#                                            bash bench/run_h200.sh m512-moved # (ran 12-03) 192-column tiles: new picks beside old, 10 fresh
#                                            bash bench/run_h200.sh m512-checks # (ran 12-03) 192-column tiles: GPU tests, sanitizers
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
# beside NAME LIMIT NOTE ARGS...: bench/candidates.py ARGS (the configs to time side by side at each shape) into
# $OUT/NAME.json (a fit_best candidates file; its log $OUT/NAME.log), then each shape's table without the warnings
beside() {
  local name=$1 limit=$2 note=$3
  shift 3
  timeout "$limit" python3 bench/candidates.py "$@" --out "$OUT/$name.json" --note "$note" > "$OUT/$name.log" 2>&1
  grep -v -i warn "$OUT/$name.log" | grep "best (\|phase 9\|phase 10\|cuBLAS\|^[0-9]" | head -90
}
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
  # 4. the issue's criterion: phase 7, phase 8 and phase="best" against cuBLAS and cuBLASLt at the five
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
regime6)
  # 9. the checks of the token-tile multicast (phase 9/10 cluster_m; 2026-12-02, bench/results/h200_2026-12-02_checks_multicast.md):
  #    the split/swap GPU tests, the four sanitizers and the stress run on the multicast configs best picks
  export CUTE_GEMM_GPU_TEST_TIMEOUT=120
  timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_split_swap.py 2>&1 | tail -4 | tee "$OUT/regime6.log"
  C1=10:bm=128,bn=224,bk=64,stages=5,split_k=1,cluster_m=4; C2=10:bm=128,bn=128,bk=64,stages=7,split_k=1,cluster_m=4
  C3=10:bm=64,bn=128,bk=128,stages=4,split_k=2,cluster_m=2; C4=9:bm=128,bn=128,split_k=1,cluster_m=2,use_pdl=true
  timeout 200 python3 bench/sanitize.py --phases none --shapes 200,1032,520 16,4104,1032 1000,264,520 --deadline 170 --jobs 4 \
    --config $C1 --config $C2 --config $C3 --config $C4 --out "$OUT/sanitize" 2>&1 | tail -20 | tee -a "$OUT/regime6.log"
  timeout 120 python3 bench/stress.py --phases none --config $C1 --config $C2 --config $C3 --config $C4 --calls 300 \
    --thread-calls 150 --timeout 110 --shapes 512,512,512 1000,264,520 200,1032,520 16,4104,1032 --out "$OUT/stress" \
    2>&1 | tail -3 | tee -a "$OUT/regime6.log"
  ;;
regime7)
  # 10. every set after the multicast and the held-out run's two fixes (2026-12-02; bench/results/h200_2026-12-02_*): decode,
  #     small, unlisted and both held-out sets, cold L2; no regression at the big shapes; the skinny shape sustained.
  #     (That day the small and unlisted sets and the first held-out run came before the fixes, which move no pick of theirs
  #     but 56x18944x3584's; `python3 -c "from cute_gemm.runtime import choose; ..."` shows a set's picks without a GPU.)
  for set in decode small unlisted heldout heldout2; do
    rounds=5; [ $set = small ] && rounds=7
    timeout 170 python3 -m cute_gemm bench --set $set --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds $rounds \
      --quiet --out "$OUT/${set}_bench.json" 2>&1 | tail -3 | tee -a "$OUT/regime7.log"
  done
  timeout 110 python3 -m cute_gemm bench --shapes 4096,4096,4096 1024,4096,4096 8192,8192,8192 3072,3072,3072 \
    --phases 7,8 --best --peers cublas,cublaslt --rounds 7 --quiet --no-plot --out "$OUT/regress_bench.json" \
    2>&1 | tail -3 | tee -a "$OUT/regime7.log"
  timeout 80 python3 -m cute_gemm bench --shapes 1024,4096,4096 --phases 7 --best --peers cublas,cublaslt \
    --sustained 0.5 --rounds 9 --quiet --no-plot --out "$OUT/skinny_sustained_bench.json" 2>&1 | tail -8 | tee -a "$OUT/regime7.log"
  ;;
tokens)
  # 11. the candidates behind the multicast and the fixes (h200_2026-12-02_best_candidates_tokens.json in h200_2026-12-01_to_03_candidates.tar.xz)
  timeout 150 python3 -m cute_gemm bench --shapes 128,8192,8192 256,14336,4096 128,4096,14336 128,11008,4096 200,5120,5120 \
    240,5120,13824 --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 --quiet --no-plot --out "$OUT/picks2_bench.json" \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=2 --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1,cluster_m=4 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1,cluster_m=2 --config 10:bm=128,bn=256,bk=64,stages=4,split_k=1,cluster_m=4 \
    --config 10:bm=128,bn=256,bk=64,stages=4,split_k=1 --config 9:bm=128,bn=96,stages=8,split_k=1,use_pdl=true \
    --config 10:bm=64,bn=128,bk=128,stages=4,split_k=1 --config 10:bm=64,bn=128,bk=128,stages=4,split_k=2,cluster_m=2 \
    --config 10:bm=64,bn=256,bk=64,stages=5,split_k=1
  timeout 150 python3 -m cute_gemm bench --shapes 200,5120,5120 200,11000,3000 256,3072,12288 160,7168,7168 240,5120,13824 \
    --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 --quiet --no-plot --out "$OUT/tok3_bench.json" \
    --config 10:bm=128,bn=80,bk=64,stages=8,split_k=1,cluster_m=2 --config 10:bm=128,bn=96,bk=64,stages=7,split_k=1,cluster_m=4 \
    --config 10:bm=128,bn=112,bk=64,stages=7,split_k=1 --config 10:bm=128,bn=112,bk=64,stages=7,split_k=1,cluster_m=2 \
    --config 10:bm=64,bn=224,bk=64,stages=6,split_k=1
  timeout 80 python3 -m cute_gemm bench --shapes 64,28672,8192 56,18944,3584 --phases 7 --best --peers cublas,cublaslt --cold-l2 \
    --rounds 5 --quiet --no-plot --out "$OUT/fix_bench.json" --config 10:bm=128,bn=64,bk=128,stages=4,split_k=1 \
    --config 9:bn=160,stages=6,split_k=1,use_pdl=true
  ;;
wide)
  # 12. candidates of the three-warpgroup weight tiles (bm=192) and 3-way splits at the held-out sets' gap shapes
  #     (h200_2026-12-02_best_candidates_wide.json in h200_2026-12-01_to_03_candidates.tar.xz); the picks they moved, beside the previous ones, came
  #     from one generated command (h200_2026-12-02_best_candidates_picks.json in h200_2026-12-01_to_03_candidates.tar.xz keeps it)
  timeout 520 python3 bench/candidates.py --shapes 208,6144,8192 128,4096,14336 232,4608,9216 240,5120,13824 80,5120,20480 \
    120,20480,2560 160,9728,4096 200,5120,5120 --top 8 --config 10:bm=192,bn=112,bk=64,stages=5,split_k=2 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=4 --out "$OUT/cand1.json" 2>&1 | grep -v "^\[" | tee "$OUT/cand1.log"
  ;;
regime8)
  # 13. the checks of bm=192 and split_k=3 (2026-12-02, bench/results/h200_2026-12-02_checks_wide.md): the split/swap GPU
  #     tests, the four sanitizers and the stress run on the configs best picks with them; 256x8192x8192's candidates
  export CUTE_GEMM_GPU_TEST_TIMEOUT=120
  timeout 230 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_split_swap.py 2>&1 | tail -6 | tee "$OUT/checks.log"
  C1=10:bm=192,bn=112,bk=64,stages=5,split_k=2; C2=10:bm=192,bn=128,bk=64,stages=5,split_k=1
  C3=10:bm=128,bn=256,bk=64,stages=4,split_k=3; C4=10:bm=192,bn=96,bk=64,stages=6,split_k=4
  timeout 150 python3 bench/sanitize.py --phases none --shapes 200,1032,520 16,4104,1032 1000,264,520 --deadline 120 --jobs 4 \
    --config $C1 --config $C2 --config $C3 --config $C4 --out "$OUT/sanitize" 2>&1 | tail -20 | tee -a "$OUT/checks.log"
  timeout 90 python3 bench/stress.py --phases none --config $C1 --config $C2 --config $C3 --config $C4 --calls 300 \
    --thread-calls 150 --timeout 80 --shapes 512,512,512 1000,264,520 200,1032,520 16,4104,1032 --out "$OUT/stress" \
    2>&1 | tail -3 | tee -a "$OUT/checks.log"
  timeout 90 python3 bench/candidates.py --shapes 256,8192,8192 --top 6 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1,cluster_m=2@256,8192,8192 --out "$OUT/cand3.json" 2>&1 | grep -v "^\["
  ;;
regime9)
  # 14. the sets after bm=192 and split_k=3 (2026-12-02): heldout3 (chosen before this run), then heldout, heldout2 and
  #     decode, cold L2; the small and unlisted sets and the no-regression shapes keep their picks but one
  #     (200x5120x5120: its candidates are in h200_2026-12-02_best_candidates_wide.json)
  for set in heldout3 heldout heldout2 decode; do
    t=130; [ $set = decode ] && t=210
    timeout $t python3 -m cute_gemm bench --set $set --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
      --quiet --no-plot --out "$OUT/${set}_bench.json" 2>&1 | tail -3 | tee -a "$OUT/regime9.log"
  done
  ;;
tune1)
  # 15. `cute-gemm tune` (2026-12-02): its GPU tests; heldout4 (chosen before this run) tuned, then benched with
  #     the tuned picks; the skinny shape tuned and benched under the criterion's protocol (sustained, warm L2)
  timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_tune.py 2>&1 | tail -5 | tee "$OUT/gpu_tests_tune.log"
  timeout 200 python3 -m cute_gemm tune --set heldout4 --rounds 5 --quiet --out "$OUT/tune_heldout4.json" \
    > "$OUT/tune_heldout4.log" 2>&1; tail -2 "$OUT/tune_heldout4.log"
  timeout 100 python3 -m cute_gemm bench --set heldout4 --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --no-plot --out "$OUT/heldout4_bench.json" 2>&1 | tail -3
  timeout 60 python3 -m cute_gemm tune --shapes 1024,4096,4096 --top 4 --warm-l2 --sustained 0.5 --rounds 5 --quiet \
    --out "$OUT/tune_skinny.json" > "$OUT/tune_skinny.log" 2>&1; tail -9 "$OUT/tune_skinny.log"
  timeout 60 python3 -m cute_gemm bench --shapes 1024,4096,4096 --phases 7 --best --peers cublas,cublaslt \
    --sustained 0.5 --rounds 9 --quiet --no-plot --out "$OUT/skinny_sustained_bench.json" 2>&1 | tail -8
  ;;
tune2)
  # 16. the decode set tuned (cold L2), then benched with the tuned picks
  timeout 330 python3 -m cute_gemm tune --set decode --rounds 3 --quiet --out "$OUT/tune_decode.json" \
    > "$OUT/tune_decode.log" 2>&1; tail -2 "$OUT/tune_decode.log"
  timeout 230 python3 -m cute_gemm bench --set decode --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --no-plot --out "$OUT/decode_bench.json" 2>&1 | tail -3
  ;;
tune3)
  # 17. the small, heldout3, heldout, heldout2 and unlisted sets tuned and benched (cold L2); the no-regression shapes tuned and benched warm, as
  #     their criterion's run is
  for set in small heldout3 heldout heldout2 unlisted; do
    timeout 150 python3 -m cute_gemm tune --set $set --rounds 3 --quiet --out "$OUT/tune_${set}.json" \
      > "$OUT/tune_${set}.log" 2>&1; tail -2 "$OUT/tune_${set}.log"
    timeout 100 python3 -m cute_gemm bench --set $set --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
      --quiet --no-plot --out "$OUT/${set}_bench.json" 2>&1 | tail -3
  done
  R="4096,4096,4096 1024,4096,4096 8192,8192,8192 3072,3072,3072"
  timeout 100 python3 -m cute_gemm tune --shapes $R --top 4 --warm-l2 --rounds 3 --quiet --out "$OUT/tune_regress.json" \
    > "$OUT/tune_regress.log" 2>&1; tail -2 "$OUT/tune_regress.log"
  timeout 100 python3 -m cute_gemm bench --shapes $R --phases 7,8 --best --peers cublas,cublaslt --rounds 7 --quiet \
    --no-plot --out "$OUT/regress_bench.json" 2>&1 | tail -3
  ;;
pdl1)
  # 18. programmatic dependent launch in the persistent phases 6-8 (best's candidates take it): their GPU tests; the
  #     skinny shape tuned and benched sustained (its criterion); the no-regression shapes tuned and benched warm; the
  #     small set (model picks) cold; the two decode shapes nearest 90% of the copy bandwidth, 12 candidates each
  timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_phases.py -k "pdl or best_candidates or cuda_graph" \
    2>&1 | tail -3 | tee "$OUT/gpu_tests_pdl.log"
  timeout 60 python3 -m cute_gemm tune --shapes 1024,4096,4096 --top 4 --warm-l2 --sustained 0.5 --rounds 5 --quiet \
    --out "$OUT/tune_skinny.json" > "$OUT/tune_skinny.log" 2>&1; tail -6 "$OUT/tune_skinny.log"
  timeout 70 python3 -m cute_gemm bench --shapes 1024,4096,4096 --phases 7 --best --peers cublas,cublaslt \
    --sustained 0.5 --rounds 9 --quiet --no-plot --out "$OUT/skinny_sustained_bench.json" 2>&1 | grep -E "^(phase|best|cuBLAS)"
  R="4096,4096,4096 1024,4096,4096 8192,8192,8192 3072,3072,3072"
  timeout 100 python3 -m cute_gemm tune --shapes $R --top 4 --warm-l2 --rounds 3 --quiet --out "$OUT/tune_regress.json" \
    > "$OUT/tune_regress.log" 2>&1; tail -2 "$OUT/tune_regress.log"
  timeout 100 python3 -m cute_gemm bench --shapes $R --phases 7,8 --best --peers cublas,cublaslt --rounds 7 --quiet \
    --no-plot --out "$OUT/regress_bench.json" 2>&1 | grep -E "^(phase|best|cuBLAS|[0-9])"
  timeout 60 python3 -m cute_gemm bench --set small --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 7 \
    --quiet --no-plot --out "$OUT/small_bench.json" 2>&1 | grep -E "^(best|cuBLAS|[0-9])"
  timeout 100 python3 -m cute_gemm tune --shapes 128,4096,14336 128,14336,4096 --top 12 --rounds 3 --quiet \
    --out "$OUT/tune_bw.json" > "$OUT/tune_bw.log" 2>&1; tail -30 "$OUT/tune_bw.log"
  ;;
pdl2)
  # 19. the decode set tuned (cold L2; its two shapes nearest 90% of the copy bandwidth from 12 candidates), then benched
  timeout 300 python3 -m cute_gemm tune --set decode --rounds 3 --quiet --out "$OUT/tune_decode.json" \
    > "$OUT/tune_decode.log" 2>&1; tail -2 "$OUT/tune_decode.log"
  timeout 60 python3 -m cute_gemm tune --shapes 128,4096,14336 128,14336,4096 --top 12 --rounds 3 --quiet \
    --out "$OUT/tune_bw.json" > "$OUT/tune_bw.log" 2>&1; tail -2 "$OUT/tune_bw.log"
  timeout 225 python3 -m cute_gemm bench --set decode --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --no-plot --out "$OUT/decode_bench.json" 2>&1 | tail -3
  ;;
pdl3)
  # 20. after tune's margin (the model's pick stays within 2% of the fastest): the decode set tuned and benched, the
  #     no-regression shapes tuned and benched warm (9 rounds); phases 6-8 with PDL under the four sanitizers and the stress run
  timeout 200 python3 -m cute_gemm tune --set decode --rounds 3 --quiet --out "$OUT/tune_decode.json" \
    > "$OUT/tune_decode.log" 2>&1; tail -2 "$OUT/tune_decode.log"
  timeout 150 python3 -m cute_gemm bench --set decode --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --no-plot --out "$OUT/decode_bench.json" 2>&1 | tail -2
  R="4096,4096,4096 1024,4096,4096 8192,8192,8192 3072,3072,3072"
  timeout 60 python3 -m cute_gemm tune --shapes $R --top 4 --warm-l2 --rounds 3 --quiet --out "$OUT/tune_regress.json" \
    > "$OUT/tune_regress.log" 2>&1; tail -2 "$OUT/tune_regress.log"
  timeout 90 python3 -m cute_gemm bench --shapes $R --phases 7,8 --best --peers cublas,cublaslt --rounds 9 --quiet \
    --no-plot --out "$OUT/regress_bench.json" 2>&1 | grep -E "^(phase|best|cuBLAS|[0-9])"
  timeout 130 python3 bench/sanitize.py --phases none --config 6:use_pdl=True --config 7:use_pdl=True \
    --config 8:use_pdl=True --shapes 512,512,512 1000,264,520 --deadline 90 --jobs 4 --out "$OUT/sanitize" 2>&1 | tail -8
  timeout 50 python3 bench/stress.py --phases none --config 6:use_pdl=True --config 7:use_pdl=True --config 8:use_pdl=True \
    --calls 200 --thread-calls 100 --timeout 45 --out "$OUT/stress" 2>&1 | tail -6
  ;;
tokens16)
  # 21. token tiles in steps of 16 (phase 10's bn: the tokens rounded up to 16, past 64 also to 32): the 14 shapes whose
  #     pick the finer tiles moved, the model's 3 cheapest candidates and the pick before, one run (run with the steps of 16
  #     alone, before token_tiles kept the multiple of 32 too; h200_2026-12-02_best_candidates_tokens16.json in h200_2026-12-01_to_03_candidates.tar.xz)
  timeout 420 python3 bench/candidates.py --top 3 --rounds 5 --shapes 200,11000,3000 144,6144,6144 112,9216,3072 \
    232,4608,9216 80,5120,20480 136,10240,5120 72,9216,9216 104,7680,7680 176,13312,4608 136,8192,3072 168,3584,18944 \
    112,6912,2560 144,9216,3584 168,4096,6144 \
    --config 10:bm=128,bn=224,bk=64,stages=5,cluster_m=4,split_k=1@200,11000,3000 \
    --config 10:bn=160,bk=64,split_k=1@144,6144,6144 \
    --config 10:bm=128,bn=128,bk=64,stages=7,cluster_m=4,split_k=1@112,9216,3072 \
    --config 10:bm=128,bn=256,bk=64,stages=4,split_k=3@232,4608,9216 \
    --config 10:bm=192,bn=96,bk=64,stages=6,split_k=4@80,5120,20480 \
    --config 10:bm=128,bn=160,bk=64,stages=6,cluster_m=4,split_k=1@136,10240,5120 \
    --config 10:bm=192,bn=96,bk=64,stages=6@72,9216,9216 \
    --config 10:bm=128,bn=128,bk=64,stages=7@104,7680,7680 \
    --config 10:bm=128,bn=192,bk=64,stages=5,cluster_m=4,split_k=1@176,13312,4608 \
    --config 10:bn=160,bk=64,split_k=1@136,8192,3072 \
    --config 10:bm=128,bn=192,bk=64,stages=5,split_k=4@168,3584,18944 \
    --config 10:bn=128,stages=4,split_k=1@112,6912,2560 \
    --config 10:bm=128,bn=160,bk=64,stages=6,cluster_m=4,split_k=1@144,9216,3584 \
    --config 10:bn=192,bk=64,stages=7@168,4096,6144 \
    --out "$OUT/tokens16_candidates.json" --note "token tiles in steps of 16: the model's 3 cheapest and the pick before" \
    > "$OUT/tokens16.log" 2>&1; tail -3 "$OUT/tokens16.log"
  ;;
tokens16-checks)
  # 22. (run 2026-12-03) the GPU tests, the four sanitizers and the stress run of the new token widths; the held-out
  #     sets with the model's picks, cold L2; Nsight Compute on the weight stream (bench/results/h200_2026-12-03_runs.tar.xz)
  timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_split_swap.py \
    -k "bn144 or bn80 or bn240 or bn176" 2>&1 | tail -3 | tee "$OUT/gpu_tests_tokens16.log"
  C="--config 10:bn=144,bk=64,split_k=1 --config 10:bm=128,bn=144,bk=64,stages=6,split_k=1,cluster_m=2
     --config 10:bm=128,bn=80,stages=4 --config 10:bm=128,bn=240,bk=64,stages=4,split_k=3
     --config 10:bm=128,bn=176,bk=64,stages=5,split_k=4"
  timeout 150 python3 bench/sanitize.py --phases none $C --shapes 200,1032,520 80,3000,8200 --deadline 110 --jobs 4 \
    --out "$OUT/sanitize" 2>&1 | tail -12
  timeout 60 python3 bench/stress.py --phases none $C --shapes 144,1024,768 80,3000,520 240,512,4096 --calls 200 \
    --thread-calls 100 --timeout 50 --out "$OUT/stress" 2>&1 | tail -6
  for s in heldout3 heldout heldout4 heldout2; do
    timeout 75 python3 -m cute_gemm bench --set $s --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
      --quiet --no-plot --out "$OUT/${s}_bench.json" 2>&1 | tail -1
  done
  ;;
stream-k)
  # 23. phase 11 (stream-K through a workspace), measured and reverted: run on a checkout of a58f7fa
  timeout 200 python3 -m cute_gemm bench --shapes 128,4096,14336 144,6144,6144 72,9216,9216 16,4096,14336 \
    --phases 10 --config 10:bn=128,stages=4 --config 11:bn=128,stages=4 --config 11:bn=128,stages=4,sm_count=128 \
    --config 11:bm=128,bn=128,bk=64,stages=7,sm_count=128 --config 11:bm=128,bn=144,bk=64,stages=6,sm_count=96 \
    --config 11:bm=128,bn=144,bk=64,stages=6 --config 11:bn=80,stages=6 --config 11:bm=128,bn=80,stages=4 \
    --config 11:bn=16 --best --peers cublas,cublaslt --cold-l2 --rounds 3 --no-plot --out "$OUT/p11_bench.json"
  ;;
families1|families2|families3)
  # 24. 72-248 tokens, 16 shapes never measured before (layer widths of 7B-70B models), in two calls of 8: per shape
  #     the model's 2 cheapest and the cheapest of every family (bench/candidates.py --families), what a refit reads
  if [ "$1" = families1 ]; then
    S="96,14336,4096 152,4096,14336 200,10240,8192 88,13824,5120 136,7168,5120 168,18944,3584 248,4608,3584 144,27648,5120"
  elif [ "$1" = families3 ]; then  # 24 more, 8 of them the held-out sets' weakest, after families1-2 came back
    S="72,6144,8192 144,3584,4608 160,4608,3584 176,8192,28672 192,14336,4096 208,2560,10240 240,7168,7168
       80,28672,8192 112,8192,28672 152,5120,5120 168,10240,8192 184,4096,14336 200,3072,8192 248,13824,5120
       120,13824,5120 88,8192,8192 72,9216,9216 232,2048,5632 192,5120,27648 216,10240,8192 144,9216,3584
       160,9728,4096 136,10240,5120 144,6144,6144"
  else
    S="120,6144,4096 232,8192,8192 104,5120,13824 216,3584,18944 80,8192,3072 112,3072,8192 224,14336,4096 184,6144,2048"
  fi
  timeout 560 python3 bench/candidates.py --shapes $S --top 2 --families --rounds 3 --out "$OUT/$1.json" \
    --note "72-248 tokens: the model's 2 cheapest and every family's cheapest" > "$OUT/$1.log" 2>&1; tail -3 "$OUT/$1.log"
  ;;
model5)
  # 25. after the refit to families1-3 (swap_factor 0.85, split_body 0.05, no multicast past K = 5120): per shape the
  #     new pick (best) beside the old one (--config ...@shape), at the 11 shapes of the named sets whose pick moved,
  #     then heldout5 (chosen before this run; the old pick only where it differs); then the decode set as a whole
  timeout 330 python3 bench/candidates.py --top 0 --rounds 5 --shapes 256,4096,4096 1,8192,8192 16,8192,8192 64,8192,8192 128,8192,8192 200,5120,5120 144,6144,6144\
    12,6912,9216 104,7680,7680 16,7168,18432 216,10240,8192 8,13824,5120 40,6144,4096 56,10240,8192\
    72,14336,4096 96,3584,18944 120,9216,9216 144,4096,11008 168,5120,13824 192,9216,3072 216,6144,6144\
    232,11008,4096 248,7168,5120 \
    --config 10:bn=256,bk=64,stages=5@256,4096,4096 --config 10:bm=128,bn=8,stages=6@1,8192,8192 --config \
    10:bm=128,stages=6@16,8192,8192 --config 10:bm=128,bn=64,stages=4@64,8192,8192 --config \
    10:bm=128,bn=128,bk=64,stages=7@128,8192,8192 --config 10:bm=192,bn=112,bk=64,stages=5@200,5120,5120 --config \
    10:bm=128,bn=144,bk=64,stages=6@144,6144,6144 --config 10:bm=128,stages=6@12,6912,9216 --config \
    10:bm=128,bn=112,bk=64,stages=7@104,7680,7680 --config 10:bm=128,stages=6@16,7168,18432 --config \
    10:bm=128,bn=224,bk=64,stages=5,cluster_m=4,split_k=1@216,10240,8192 --config \
    10:bm=128,bn=128,bk=64,stages=7,cluster_m=4,split_k=1@120,9216,9216 \
    --out "$OUT/model5.json" --bench-out "$OUT/model5_bench.json" --note "the refit: new pick (best) and old pick per shape" \
    > "$OUT/model5.log" 2>&1; tail -2 "$OUT/model5.log"
  timeout 200 python3 -m cute_gemm bench --set decode --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --no-plot --out "$OUT/decode_bench.json" 2>&1 | tail -1
  ;;
model5-sets)
  # 26. the held-out sets and the unlisted set with the refit model's picks (no tuned table), cold L2, 5 rounds
  for s in heldout heldout2 heldout3 heldout4 unlisted; do
    timeout 70 python3 -m cute_gemm bench --set $s --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
      --quiet --no-plot --out "$OUT/${s}_bench.json" 2>&1 | tail -1
  done
  ;;
model6)
  # 27. after the multicast / split-K reduce refit (mcast_gain 0.08, 0.25 only where the token rows are not whole
  #     128-B lines; split_us 2.0, dsmem 3e4): the 10 shapes of the named sets and candidate files whose pick moved,
  #     new pick (best) beside the old one; then heldout6 (chosen before this run) and heldout5 as sets
  timeout 200 python3 bench/candidates.py --top 0 --rounds 5 --shapes 72,9216,9216 136,10240,5120 144,3584,4608 \
    144,9216,3584 160,4608,3584 168,5120,13824 176,13312,4608 184,12288,2048 216,3584,18944 232,11008,4096 \
    --config 10:bm=192,bn=96,bk=64,stages=6@72,9216,9216 \
    --config 10:bm=128,bn=160,bk=64,stages=6,cluster_m=4,split_k=1@136,10240,5120 --config 10:bn=144,bk=64@144,3584,4608 \
    --config 10:bm=128,bn=160,bk=64,stages=6,cluster_m=4,split_k=1@144,9216,3584 \
    --config 10:bn=160,bk=64,stages=4,split_k=3,ctas_per_sm=2@160,4608,3584 --config 10:bm=192,bn=96,bk=64,stages=6@168,5120,13824 \
    --config 10:bm=128,bn=192,bk=64,stages=5,cluster_m=4,split_k=1@176,13312,4608 \
    --config 10:bm=128,bn=192,bk=64,stages=5,cluster_m=4,split_k=1@184,12288,2048 --config 10:bn=224,bk=64,stages=6@216,3584,18944 \
    --config 10:bm=128,bn=256,bk=64,stages=4,cluster_m=4,split_k=1@232,11008,4096 \
    --out "$OUT/model6.json" --note "the multicast / reduce refit: new pick (best) and old pick per shape" \
    > "$OUT/model6.log" 2>&1; tail -2 "$OUT/model6.log"
  for s in heldout6 heldout5; do
    timeout 90 python3 -m cute_gemm bench --set $s --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
      --quiet --no-plot --out "$OUT/${s}_bench.json" 2>&1 | tail -1
  done
  ;;
families5)
  # 28. heldout6's shapes and three token-row alignment probes (K x 2 B a multiple of 128 or not, N likewise): the
  #     model's two cheapest, every family's cheapest, the old pick where it moved, the multicast's unicast twins
  timeout 500 python3 bench/candidates.py --top 2 --families --rounds 3 --shapes 88,18176,4544 216,10240,2560 \
    176,18944,3584 136,14336,3584 232,3584,14336 104,13824,5120 200,14336,5120 152,5120,14336 120,27648,5120 \
    184,10944,2048 248,8192,3072 80,24576,6144 200,11008,3000 200,11000,4096 176,14336,2600 \
    --config 10:bm=128,bn=224,bk=64,stages=5,cluster_m=4,split_k=1@216,10240,2560 \
    --config 10:bm=128,bn=160,bk=64,stages=6,cluster_m=4,split_k=1@136,14336,3584 \
    --config 10:bm=128,bn=224,bk=64,stages=5,cluster_m=4,split_k=1@200,14336,5120 \
    --config 10:bm=128,bn=192,bk=64,stages=5,cluster_m=4,split_k=1@184,10944,2048 \
    --config 10:bm=128,bn=224,bk=64,stages=5,cluster_m=4,split_k=1@200,11000,4096 \
    --config 10:bm=128,bn=224,bk=64,stages=5,split_k=1@200,11000,4096 --config 10:bm=128,bn=224,bk=64,stages=5,split_k=1@200,11008,3000 \
    --config 10:bm=128,bn=192,bk=64,stages=5,split_k=1@176,14336,2600 \
    --out "$OUT/families5.json" --note "heldout6 and token-row alignment probes: the model's 2 cheapest, every family's cheapest, old picks, unicast twins" \
    > "$OUT/families5.log" 2>&1; tail -2 "$OUT/families5.log"
  ;;
ring64)
  # 29. the weight stream at 64-128 tokens: 64-deep k-tiles in an 8-deep ring against the picks' 128-deep in 4-7
  #     (the same bytes in flight, twice the TMA transactions), and phase 9's unswapped 64-token tiles
  timeout 300 python3 bench/candidates.py --top 0 --rounds 5 --shapes 128,8192,8192 120,6144,8192 112,8192,8192 \
    128,4096,14336 64,8192,8192 64,4096,14336 \
    --config 9:bm=64,bn=128,bk=64,stages=8,split_k=1,use_pdl=True@128,8192,8192 \
    --config 10:bm=64,bn=128,bk=64,stages=8,split_k=1@128,8192,8192 \
    --config 9:bm=64,bn=128,bk=64,stages=8,split_k=1,use_pdl=True@120,6144,8192 \
    --config 10:bm=64,bn=128,bk=64,stages=8,split_k=1@120,6144,8192 \
    --config 9:bm=64,bn=128,bk=64,stages=8,split_k=1,use_pdl=True@112,8192,8192 \
    --config 10:bm=64,bn=112,bk=64,stages=8,split_k=1@112,8192,8192 \
    --config 10:bm=64,bn=128,bk=64,stages=8,split_k=2@128,4096,14336 \
    --config 10:bm=64,bn=64,bk=64,stages=8,split_k=1@64,8192,8192 \
    --config 10:bm=64,bn=64,bk=64,stages=8,split_k=2@64,4096,14336 \
    --out "$OUT/ring64.json" --note "64-deep k-tiles in an 8-deep ring against the picks, 64-128 tokens" \
    > "$OUT/ring64.log" 2>&1; tail -2 "$OUT/ring64.log"
  ;;
model6-sample)
  # 30. an unbiased check of the multicast / reduce refit away from the measured shapes: 300 random shapes (M 1..512,
  #     N 2048..14336, K 2048..14336; seed 1), 29 distinct ones whose pick moved, every other one of them timed with its
  #     old pick beside the new one (the random half of `python bench/moved_picks.py 17d9d26`'s command)
  timeout 300 python3 bench/candidates.py --top 0 --rounds 5 --shapes 96,6144,14336 128,8192,5120 96,3072,2048 96,4096,14336 192,3072,5120 32,5120,8192 64,4096,3072 64,3072,2048 64,4096,2048 48,4096,4096 1,6144,4096 8,6144,3072 16,5120,4096 32,4096,2048 192,5120,4096 \
    --config 10:bm=128,bn=96,stages=4@96,6144,14336 \
    --config 10:bm=128,bn=128,bk=64,stages=7,cluster_m=4,split_k=1@128,8192,5120 \
    --config 10:bn=96,stages=5@96,3072,2048 \
    --config 10:bn=96,stages=5@96,4096,14336 \
    --config 10:bn=192,bk=64,stages=7@192,3072,5120 \
    --config 10:bm=128,bn=32,stages=5@32,5120,8192 \
    --config 10:bn=64,stages=7@64,4096,3072 \
    --config 10:bn=64,stages=7@64,3072,2048 \
    --config 10:bn=64,stages=7@64,4096,2048 \
    --config 10:bn=48@48,4096,4096 \
    --config 10:bm=128,bn=8,stages=6@1,6144,4096 \
    --config 10:bm=128,bn=8,stages=6@8,6144,3072 \
    --config 10:bm=128,stages=6@16,5120,4096 \
    --config 10:bn=32@32,4096,2048 \
    --config 10:bm=192,bn=96,bk=64,stages=6@192,5120,4096 \
    --out "$OUT/model6_sample.json" --note "refit check: every other random shape whose pick moved, new pick (best) and old" \
    > "$OUT/model6_sample.log" 2>&1; tail -2 "$OUT/model6_sample.log"
  ;;
ring192)
  # 31. 192-deep k-tiles in a 3-7 deep ring against the decode picks' 128-deep (fewer, larger TMA transactions
  #     and wgmma batches per ring slot; the same or more bytes in flight)
  timeout 300 python3 bench/candidates.py --top 0 --rounds 5 --shapes 128,4096,14336 128,8192,8192 64,4096,14336 \
    64,8192,8192 16,8192,8192 \
    --config 10:bn=128,bk=192,stages=3@128,4096,14336 --config 10:bn=128,bk=192,stages=3,split_k=1@128,8192,8192 \
    --config 10:bn=64,bk=192,stages=4@64,4096,14336 --config 10:bn=64,bk=192,stages=4,split_k=1@64,8192,8192 \
    --config 10:bk=192,stages=7,split_k=1@16,8192,8192 \
    --out "$OUT/ring192.json" --note "192-deep k-tiles against the decode picks" > "$OUT/ring192.log" 2>&1
  tail -2 "$OUT/ring192.log"
  ;;
tokens2)
  # 32. 128 tokens in two 64-token tiles of 128 or 192 weight rows (what cuBLAS's nvjet 128x64 split-K does at
  #     128x4096x14336), and phase 9's unswapped 64 tokens x 128 weights, against the picks of the B >= 64 MB
  #     decode shapes at 128 tokens and of heldout4's 120x6144x16384
  timeout 420 python3 bench/candidates.py --top 0 --rounds 5 --shapes 128,4096,14336 128,8192,8192 128,14336,4096 \
    120,6144,16384 \
    --config 10:bm=128,bn=64,bk=128,stages=4@128,4096,14336 --config 10:bm=128,bn=64,bk=64,stages=8@128,4096,14336 \
    --config 9:bm=64,bn=128,bk=128,stages=4,use_pdl=True@128,4096,14336 \
    --config 10:bm=128,bn=64,bk=128,stages=4,split_k=1@128,8192,8192 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=1@128,8192,8192 \
    --config 9:bm=64,bn=128,bk=64,stages=8,split_k=1,use_pdl=True@128,8192,8192 \
    --config 9:bm=64,bn=128,bk=128,stages=4,split_k=1,use_pdl=True@128,8192,8192 \
    --config 10:bm=128,bn=64,bk=64,stages=4,ctas_per_sm=2,split_k=1@128,14336,4096 \
    --config 9:bm=64,bn=128,bk=64,stages=4,ctas_per_sm=2,split_k=1,use_pdl=True@128,14336,4096 \
    --config 10:bm=128,bn=64,bk=128,stages=4,split_k=1@120,6144,16384 \
    --config 10:bm=192,bn=64,bk=64,stages=6@120,6144,16384 \
    --config 10:bm=128,bn=64,bk=64,stages=4,ctas_per_sm=2@120,6144,16384 \
    --out "$OUT/tokens2.json" --note "128 tokens in two 64-token tiles against the picks" > "$OUT/tokens2.log" 2>&1
  tail -25 "$OUT/tokens2.log"
  ;;
wmcast)
  # 33. phase 9's unswapped 64-token tiles with the weight tile multicast over cluster_m = 2 token tiles (each CTA
  #     loads half of the weights' box: one L2 read per weight byte and pair) against their unicast twins and the picks
  timeout 420 python3 bench/candidates.py --top 0 --rounds 5 --shapes 128,8192,8192 128,4096,14336 128,14336,4096 \
    232,2048,5632 256,4096,14336 \
    --config 9:bm=64,bn=128,bk=64,stages=8,split_k=1,cluster_m=2,use_pdl=True@128,8192,8192 \
    --config 9:bm=64,bn=128,bk=64,stages=8,split_k=1,use_pdl=True@128,8192,8192 \
    --config 9:bm=64,bn=64,bk=64,stages=8,split_k=1,cluster_m=2,use_pdl=True@128,4096,14336 \
    --config 9:bm=64,bn=64,bk=64,stages=8,split_k=1,use_pdl=True@128,4096,14336 \
    --config 9:bm=64,bn=128,bk=64,stages=4,split_k=1,cluster_m=2,ctas_per_sm=2,use_pdl=True@128,14336,4096 \
    --config 9:bm=64,bn=128,bk=64,stages=4,split_k=1,ctas_per_sm=2,use_pdl=True@128,14336,4096 \
    --config 9:bm=64,bn=64,bk=64,stages=8,split_k=1,cluster_m=2,use_pdl=True@232,2048,5632 \
    --config 9:bm=64,bn=64,bk=64,stages=8,split_k=1,use_pdl=True@232,2048,5632 \
    --config 9:bm=64,bn=128,bk=64,stages=8,split_k=1,cluster_m=2,use_pdl=True@256,4096,14336 \
    --config 9:bm=64,bn=128,bk=64,stages=8,split_k=1,use_pdl=True@256,4096,14336 \
    --out "$OUT/wmcast.json" --note "64-token tiles with the weights multicast over 2 token tiles" > "$OUT/wmcast.log" 2>&1
  tail -40 "$OUT/wmcast.log"
  ;;
wmcast-checks)
  # 34. the checks of the shared 64-token tiles (phase 9, bm=64 bn=128, no split, cluster_m=2): its split/swap GPU tests
  #     (M = 1, K >> N, fewer k-tiles than CTAs, ragged, more tokens than a tile), the four sanitizers, the stress run
  export CUTE_GEMM_GPU_TEST_TIMEOUT=120
  timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_split_swap.py -k "bm64-bn128-split_k1-cluster_m2" \
    2>&1 | tail -4 | tee "$OUT/checks.log"
  C1=9:bm=64,bn=128,split_k=1,cluster_m=2,use_pdl=True
  timeout 150 python3 bench/sanitize.py --phases none --shapes 200,1032,520 16,4104,1032 1000,264,520 --deadline 120 --jobs 4 \
    --config $C1 --out "$OUT/sanitize" 2>&1 | tail -8 | tee -a "$OUT/checks.log"
  timeout 90 python3 bench/stress.py --phases none --config $C1 --calls 300 --thread-calls 150 --timeout 80 \
    --shapes 512,512,512 1000,264,520 200,1032,520 16,4104,1032 --out "$OUT/stress" 2>&1 | tail -3 | tee -a "$OUT/checks.log"
  ;;
stalls)
  # 35. ncu's warp samples per SASS line of the weight stream's picks at 128 and 16 tokens (the same weights, split 2):
  #     which wait the 128-token kernel's warps spend their time in
  for s in 128,4096,14336 16,4096,14336; do
    timeout 200 python3 bench/stall_sites.py --shape $s --out "$OUT" --top 20 > "$OUT/stalls_$s.log" 2>&1
    tail -24 "$OUT/stalls_$s.log"
  done
  ;;
deep64)
  # 36. 128x4096x14336 as 64 x 64 tiles (two token tiles, no split: 128 CTAs) in a 7-deep ring of 128-deep k-tiles:
  #     112 KiB of weights in flight per SM against the pick's 64 (its stages are 2/3 tokens)
  timeout 200 python3 bench/candidates.py --top 0 --rounds 5 --shapes 128,4096,14336 \
    --config 10:bm=64,bn=64,bk=128,stages=7,split_k=1 --config 10:bm=64,bn=64,bk=64,stages=8,split_k=1 \
    --config 9:bm=64,bn=64,bk=128,stages=7,split_k=1,use_pdl=True \
    --out "$OUT/deep64.json" --note "two 64-token tiles in a deep ring at 128 tokens" > "$OUT/deep64.log" 2>&1
  tail -9 "$OUT/deep64.log"
  ;;
evict)
  # 37. phase 10's weights evict-first in L2 (evict_first_a, now its default) against the same pick without, side by
  #     side: the decode set's shapes up to 256 tokens and the held-out sets' lowest. (The probes that led here --
  #     l2pf, l2hints, l2hints2: the L2 prefetch and every policy pair -- ran at commit 5c38ba5.)
  DEC=""
  for m in 1 16 64 128 256; do for nk in 4096,4096 14336,4096 4096,14336 8192,8192 28672,8192; do DEC="$DEC $m,$nk"; done; done
  timeout 580 python3 bench/candidates.py --top 1 --twin evict_first_a=false --rounds 5 --shapes $DEC \
    232,2048,5632 192,5120,27648 200,11000,3000 120,6144,16384 160,9728,4096 232,11008,4096 120,27648,5120 \
    80,5120,20480 240,5120,13824 \
    --out "$OUT/evict.json" --note "phase 10's pick with the weights evict-first (now) and without" > "$OUT/evict.log" 2>&1
  grep -v -i warn "$OUT/evict.log" | tail -30
  ;;
evict-checks)
  # 38. after evict: the shape whose twin went untimed there, with the full bench document (why); phase 10's GPU
  #     tests in 7 of its configs with the policy on; the decode set benched with the model's picks (no tuned table)
  timeout 90 python3 bench/candidates.py --top 1 --twin evict_first_a=false --rounds 5 --shapes 192,5120,27648 \
    --out "$OUT/evict_long.json" --bench-out "$OUT/evict_long_bench.json" > "$OUT/evict_long.log" 2>&1
  grep -v -i warn "$OUT/evict_long.log" | tail -9
  timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_split_swap.py \
    -k "test_split_and_swap_configs and 10- and (bn8 or cluster_m4 or bm192-bn128)" > "$OUT/evict_tests.log" 2>&1
  tail -3 "$OUT/evict_tests.log"
  timeout 260 python3 -m cute_gemm bench --set decode --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --no-plot --out "$OUT/decode_evict_bench.json" 2>&1 | tail -3
  ;;
evict2)
  # 39. best with the weights evict-first where a tile of >= 128 weight rows holds every token: the decode set, each
  #     such pick with and without the policy at five shapes, and every held-out set (model picks, no tuned table)
  timeout 150 python3 -m cute_gemm bench --set decode --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --no-plot --out "$OUT/decode_evict2_bench.json" 2>&1 | tail -1
  beside evict2 100 "best's picks with the weights evict-first, and without" --top 1 --twin evict_first_a=false --rounds 5 \
    --shapes 120,6144,16384 160,9728,4096 200,11000,3000 128,14336,4096 16,14336,4096
  for set in heldout heldout2 heldout3 heldout4 heldout5 heldout6 unlisted; do
    timeout 60 python3 -m cute_gemm bench --set $set --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
      --quiet --no-plot --out "$OUT/${set}_evict2_bench.json" > /dev/null 2>&1; echo "$set rc=$?"
  done
  ;;
evict3)
  # 40. the rule at random shapes (seed 1 of bench/moved_picks.py) where it turned the policy on: each pick with and
  #     without it, side by side
  timeout 200 python3 bench/candidates.py --top 1 --twin evict_first_a=false --rounds 5 \
    --shapes 8,11008,2048 48,3072,14336 160,5120,14336 1,11008,4096 32,11008,3072 8,5120,5120 48,14336,2048 \
    96,14336,5120 48,11008,8192 24,11008,5120 128,14336,8192 8,14336,14336 \
    --out "$OUT/evict3.json" --note "best's evict-first rule at random shapes where it is on: with and without" \
    > "$OUT/evict3.log" 2>&1
  grep -v -i warn "$OUT/evict3.log" | grep "evict_first_a\|^[0-9]"
  ;;
l2probe)
  # 42. is the 128-token weight stream held by L2's reads? kernels with fewer L2 reads per weight byte at the two decode
  #     shapes below 90% of copy (128x4096x14336, 128x8192x8192), side by side with the picks; then tune-families
  timeout 200 python3 bench/candidates.py --shapes 128,4096,14336 128,8192,8192 --top 3 \
    --config 9:bm=64,bn=144,cluster_m=2,split_k=2,stages=8,use_pdl=True --config 9:bm=64,bn=160,cluster_m=2,split_k=2,stages=8,use_pdl=True \
    --config 9:bm=128,bn=64,split_k=2,stages=8,use_pdl=True --config 10:bm=192,bn=128,bk=64,split_k=5,stages=5 \
    --config 9:bm=64,bn=128,cluster_m=2,split_k=1,stages=8,use_pdl=True \
    --out "$OUT/l2probe.json" > "$OUT/l2probe.log" 2>&1; tail -40 "$OUT/l2probe.log"
  ;;
reduce-cost)
  # 43. what the split-K reduce costs: at short K the k-loop is a few k-tiles, so split 2/3/4 against split 1 (the same
  #     tile) is the DSMEM reduce and its cluster barriers
  timeout 250 python3 bench/candidates.py --shapes 128,4096,512 128,8192,1024 64,4096,1024 --top 0 \
    --config 10:bn=128,stages=4,split_k=1 --config 10:bn=128,stages=4,split_k=2 --config 10:bn=128,stages=4,split_k=4 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1 --config 10:bm=128,bn=128,bk=64,stages=7,split_k=2 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=4 --config 10:bn=64,stages=7,split_k=1 --config 10:bn=64,stages=7,split_k=2 \
    --out "$OUT/reduce_cost.json" > "$OUT/reduce_cost.log" 2>&1; grep -v -i warn "$OUT/reduce_cost.log" | tail -45
  ;;
p9pairs)
  # 45. the model gives phase 9's 64-token tile pairs (multicasting the weights) phase 10's deep-ring factor: every pick
  #     that moved (bench/moved_picks.py f25b204 --random 300 --seed 2: 5 named shapes, 10 random), new beside old in
  #     one run each; then the decode set with the model's picks (no tuned table), cold L2
  timeout 240 python3 bench/candidates.py --top 0 --rounds 5 --shapes 256,4096,4096 128,8192,8192 104,7680,7680 \
    112,6912,2560 240,3072,3072 128,5120,5120 128,8192,14336 256,3072,2048 256,4096,5120 128,8192,3072 256,3072,3072 \
    128,6144,3072 128,6144,2048 128,6144,14336 \
    --config 10:bn=128,bk=64,split_k=1@256,4096,4096 --config 10:bn=128,stages=4,split_k=1@128,8192,8192 \
    --config 10:bn=112,stages=5,split_k=1@104,7680,7680 --config 10:bn=112,stages=5,split_k=1@112,6912,2560 \
    --config 10:bn=128,bk=64,split_k=1@240,3072,3072 --config 10:bn=128,stages=4,split_k=1@128,5120,5120 \
    --config 10:bn=128,stages=4,split_k=1@128,8192,14336 --config 10:bn=128,bk=64,split_k=1@256,3072,2048 \
    --config 10:bn=128,bk=64,split_k=1@256,4096,5120 --config 10:bn=128,stages=4,split_k=1@128,8192,3072 \
    --config 10:bn=128,bk=64,split_k=1@256,3072,3072 --config 10:bn=128,stages=4,split_k=1@128,6144,3072 \
    --config 10:bn=128,stages=4,split_k=1@128,6144,2048 \
    --config 10:bm=128,bn=128,bk=64,stages=7,evict_first_a=True@128,6144,14336 \
    --out "$OUT/p9pairs.json" --note "phase 9's weight-sharing 64-token pairs with phase 10's factor: each moved pick, new (best) beside old" \
    > "$OUT/p9pairs.log" 2>&1
  grep -v -i warn "$OUT/p9pairs.log" | grep "best\|phase 10\|^[0-9]\|not timed\|cuBLAS " | head -80
  timeout 300 python3 -m cute_gemm bench --set decode --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --no-plot --out "$OUT/decode_p9pairs_bench.json" 2>&1 | tail -4
  ;;
p9pairs-128)
  # 46. the rule narrowed to pairs holding every token unpadded (M = 128): 12 shapes of 128 tokens where it moves the
  #     pick, none measured before (chosen from a grid of layer widths after p9pairs), new (best) beside old; then the
  #     decode set with the model's picks
  timeout 200 python3 bench/candidates.py --top 0 --rounds 5 --shapes 128,5632,2560 128,5632,7168 128,6912,4096 \
    128,6912,11008 128,6912,28672 128,7168,5632 128,7168,18944 128,5120,1536 128,8192,2048 128,8192,5120 128,6144,9216 \
    128,5120,4096 \
    --config 10:bn=128,stages=4,split_k=1@128,5632,2560 \
    --config 10:bm=192,bn=128,bk=64,stages=5,split_k=4,evict_first_a=True@128,5632,7168 \
    --config 10:bn=128,stages=4,split_k=1@128,6912,4096 --config 10:bn=128,stages=4,split_k=1@128,6912,11008 \
    --config 10:bm=128,bn=128,bk=64,stages=7,evict_first_a=True@128,6912,28672 \
    --config 10:bn=128,stages=4,split_k=1@128,7168,5632 \
    --config 10:bm=128,bn=128,bk=64,stages=7,evict_first_a=True@128,7168,18944 \
    --config 10:bn=128,stages=4,split_k=1@128,5120,1536 --config 10:bn=128,stages=4,split_k=1@128,8192,2048 \
    --config 10:bn=128,stages=4,split_k=1@128,8192,5120 --config 10:bn=128,stages=4,split_k=1@128,6144,9216 \
    --config 10:bn=128,stages=4,split_k=1@128,5120,4096 \
    --out "$OUT/p9pairs128.json" --note "pairs at M = 128 with phase 10's factor: shapes not measured before, new (best) beside old" \
    > "$OUT/p9pairs128.log" 2>&1
  grep -v -i warn "$OUT/p9pairs128.log" | grep "best\|phase 10\|^[0-9]\|not timed" | head -60
  timeout 200 python3 -m cute_gemm bench --set decode --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --no-plot --out "$OUT/decode_p9pairs128_bench.json" 2>&1 | tail -3
  ;;
reread)
  # 47. the model charges phase 10 for reading the weights once per token tile (Machine.token_tile_reread): every pick
  #     that moved (bench/moved_picks.py f1b93e4 --random 300 --seed 3: 7 named shapes, 6 random), new (best) beside old
  timeout 200 python3 bench/candidates.py --top 0 --rounds 5 --shapes 184,12288,2048 248,2048,8192 208,6144,8192 \
    192,5120,27648 232,2048,5632 216,6144,6144 184,10944,2048 192,5120,14336 192,5120,5120 256,6144,8192 \
    192,11008,2048 256,5120,8192 256,4096,5120 \
    --config 10:bm=192,bn=96,bk=64,stages=6,split_k=1@184,12288,2048 --config 10:bn=128,bk=64@248,2048,8192 \
    --config 10:bm=192,bn=112,bk=64,stages=5@208,6144,8192 --config 10:bm=192,bn=96,bk=64,stages=6@192,5120,27648 \
    --config 10:bn=128,bk=64@232,2048,5632 --config 10:bm=192,bn=112,bk=64,stages=5@216,6144,6144 \
    --config 10:bm=192,bn=96,bk=64,stages=6,split_k=1@184,10944,2048 --config 10:bm=192,bn=96,bk=64,stages=6@192,5120,14336 \
    --config 10:bm=192,bn=96,bk=64,stages=6@192,5120,5120 --config 10:bm=192,bn=128,bk=64,stages=5@256,6144,8192 \
    --config 10:bm=192,bn=96,bk=64,stages=6,split_k=1@192,11008,2048 --config 10:bm=192,bn=128,bk=64,stages=5@256,5120,8192 \
    --config 10:bn=128,bk=64,split_k=1@256,4096,5120 \
    --out "$OUT/reread.json" --note "phase 10 charged for reading the weights once per token tile: each moved pick, new (best) beside old" \
    > "$OUT/reread.log" 2>&1
  grep -v -i warn "$OUT/reread.log" | grep "best\|phase 10\|^[0-9]\|not timed" | head -60
  ;;
reread2)
  # 48. (ran 2026-12-03: 1.047x, faster at 17 of 21; landed) a proposed model: phase 10 charged per token tile's read of the weights (memory x (1 + 0.15 (t - 1)))
  #     and one warpgroup's unsplit 64 x >= 224 tile x 1.1 (fit_best 0.9885 -> 0.9912 over 196 shapes, fitted after
  #     `reread`). Its picks at every named shape and at random ones (seed 4, 400 draws) where they differ from today's
  #     (f1b93e4), given as --config beside best (today's pick), one run per shape; land it only if it wins here
  beside reread2 280 "a proposed model's picks (--config) beside today's (best)" --top 0 --rounds 5 --shapes 184,10944,2048 184,12288,2048 192,5120,27648 208,6144,8192 216,6144,6144 232,2048,5632 248,2048,8192 248,7168,5120 248,8192,3072 256,5632,2048 256,8192,8192 192,5120,5120 192,5120,14336 192,6144,8192 256,2048,8192 256,4096,5120 256,5120,4096 256,6144,3072 256,8192,2048 256,8192,4096 256,8192,14336 \
    --config 10:bm=128,bn=192,bk=64,stages=5,cluster_m=4,split_k=1,evict_first_a=True@184,10944,2048 \
    --config 10:bm=128,bn=192,bk=64,stages=5,cluster_m=4,split_k=1,evict_first_a=True@184,12288,2048 \
    --config 10:bm=192,bn=192,bk=64,stages=4,split_k=4,evict_first_a=True@192,5120,27648 \
    --config 10:bn=208,bk=64,stages=6,split_k=1@208,6144,8192 \
    --config 10:bm=128,bn=112,bk=64,stages=7,split_k=1@216,6144,6144 \
    --config 10:bn=240,bk=64,stages=5,split_k=3@232,2048,5632 \
    --config 10:bn=256,bk=64,stages=5,split_k=3@248,2048,8192 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@248,7168,5120 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@248,8192,3072 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@256,5632,2048 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@256,8192,8192 \
    --config 10:bn=192,bk=64,stages=7,split_k=1@192,5120,5120 \
    --config 10:bm=192,bn=192,bk=64,stages=4,split_k=4,evict_first_a=True@192,5120,14336 \
    --config 10:bn=192,bk=64,stages=7,split_k=1@192,6144,8192 \
    --config 10:bn=256,bk=64,stages=5,split_k=3@256,2048,8192 \
    --config 10:bn=256,bk=64,stages=5@256,4096,5120 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@256,5120,4096 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@256,6144,3072 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@256,8192,2048 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@256,8192,4096 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@256,8192,14336
  ;;
model7)
  # 49. (ran 2026-12-03) after the re-read and wide-tile terms (model picks, no tuned table): heldout7 (chosen after them, never measured),
  #     the old picks at its three moved shapes beside the new (--config beside best), then the decode set and the two
  #     sets that held the shapes below 0.9 (heldout3, unlisted); each bench's last lines: geomean over the vendor, lowest
  timeout 150 python3 -m cute_gemm bench --set heldout7 --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --no-plot --out "$OUT/heldout7_bench.json" 2>&1 | tail -16
  timeout 60 python3 bench/candidates.py --top 0 --rounds 5 --shapes 224,6144,4096 216,8192,28672 232,5120,5120 \
    --config 10:bn=224,bk=64,stages=6,split_k=1@224,6144,4096 --config 10:bn=224,bk=64,stages=6,split_k=1@216,8192,28672 \
    --config 10:bn=240,bk=64,stages=5,split_k=1@232,5120,5120 \
    --out "$OUT/model7_moved.json" --note "heldout7's three moved picks: the old (--config) beside the new (best)" \
    > "$OUT/model7_moved.log" 2>&1
  grep -v -i warn "$OUT/model7_moved.log" | grep "best (\|phase 10\|^[0-9]" | head -12
  timeout 170 python3 -m cute_gemm bench --set decode --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --no-plot --out "$OUT/decode_bench.json" 2>&1 | tail -3
  for set in heldout3 unlisted; do
    timeout 90 python3 -m cute_gemm bench --set $set --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
      --quiet --no-plot --out "$OUT/${set}_bench.json" 2>&1 | tail -3
  done
  ;;
tiles3)
  # 50. (ran 2026-12-03; led to 52-54) 160-256 tokens in 3 (or 4) token tiles of 64-96 with 128 weight rows, one wave, 8 stages of 64, unicast and
  #     the token tile multicast over 2 / 4 weight tiles (cuBLAS's choice at 232x5120x5120: nvjet 128x80 64x8 4x1, 23.5 us
  #     against best's 28.6), beside best, at the gaps of heldout7 / unlisted / reread2 and 4 shapes never measured
  beside tiles3 200 "the tokens in 3 or 4 tiles of 128 weight rows (--config) beside best" --top 0 --rounds 5 --shapes 232,5120,5120 200,5120,5120 184,4608,3584 256,5120,4096 248,4608,3584 216,4096,4096 240,5120,8192 192,3584,8192 168,5632,4096 256,4096,5120 256,3072,12288 232,4096,8192 \
    --config 10:bm=128,bn=80,bk=64,stages=8,split_k=1,cluster_m=1@232,5120,5120 \
    --config 10:bm=128,bn=80,bk=64,stages=8,split_k=1,cluster_m=2@232,5120,5120 \
    --config 10:bm=128,bn=80,bk=64,stages=8,split_k=1,cluster_m=1@200,5120,5120 \
    --config 10:bm=128,bn=80,bk=64,stages=8,split_k=1,cluster_m=2@200,5120,5120 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=1,cluster_m=1@184,4608,3584 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=1,cluster_m=2@184,4608,3584 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=1,cluster_m=4@184,4608,3584 \
    --config 10:bm=128,bn=96,bk=64,stages=8,split_k=1,cluster_m=1@256,5120,4096 \
    --config 10:bm=128,bn=96,bk=64,stages=8,split_k=1,cluster_m=2@256,5120,4096 \
    --config 10:bm=128,bn=96,bk=64,stages=8,split_k=1,cluster_m=4@256,5120,4096 \
    --config 10:bm=128,bn=96,bk=64,stages=8,split_k=1,cluster_m=1@248,4608,3584 \
    --config 10:bm=128,bn=96,bk=64,stages=8,split_k=1,cluster_m=2@248,4608,3584 \
    --config 10:bm=128,bn=96,bk=64,stages=8,split_k=1,cluster_m=4@248,4608,3584 \
    --config 10:bm=128,bn=80,bk=64,stages=8,split_k=1,cluster_m=1@216,4096,4096 \
    --config 10:bm=128,bn=80,bk=64,stages=8,split_k=1,cluster_m=2@216,4096,4096 \
    --config 10:bm=128,bn=80,bk=64,stages=8,split_k=1,cluster_m=1@240,5120,8192 \
    --config 10:bm=128,bn=80,bk=64,stages=8,split_k=1,cluster_m=2@240,5120,8192 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=1,cluster_m=1@192,3584,8192 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=1,cluster_m=2@192,3584,8192 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=1,cluster_m=4@192,3584,8192 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=1,cluster_m=1@168,5632,4096 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=1,cluster_m=2@168,5632,4096 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=1,cluster_m=4@168,5632,4096 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=1,cluster_m=1@256,4096,5120 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=1,cluster_m=2@256,4096,5120 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=1,cluster_m=4@256,4096,5120 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=1,cluster_m=1@256,3072,12288 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=1,cluster_m=2@256,3072,12288 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=1,cluster_m=4@256,3072,12288 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=1,cluster_m=1@232,4096,8192 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=1,cluster_m=2@232,4096,8192 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=1,cluster_m=4@232,4096,8192
  ;;
tok2)
  # 51. (ran 2026-12-03: lost 1.16-1.22x) 128 tokens in two 64-token tiles of 128 weight rows, split 2 (cuBLAS's nvjet 128x64 split-K arrangement at
  #     128x4096x14336): half the smem bytes per weight byte of the pick's 64 x 128, the weights read twice through L2
  beside tok2 120 "two 64-token tiles of 128 weight rows, split 2 (--config), beside best" --top 0 --rounds 7 --shapes 128,4096,14336 128,4096,11008 128,3584,14336 112,4096,14336 128,4096,8192 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=2@128,4096,14336 \
    --config 10:bm=128,bn=64,bk=128,stages=4,split_k=2@128,4096,14336 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=2@128,4096,11008 \
    --config 10:bm=128,bn=64,bk=128,stages=4,split_k=2@128,4096,11008 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=2@128,3584,14336 \
    --config 10:bm=128,bn=64,bk=128,stages=4,split_k=2@128,3584,14336 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=2@112,4096,14336 \
    --config 10:bm=128,bn=64,bk=128,stages=4,split_k=2@112,4096,14336 \
    --config 10:bm=128,bn=64,bk=64,stages=8,split_k=2@128,4096,8192 \
    --config 10:bm=128,bn=64,bk=128,stages=4,split_k=2@128,4096,8192
  ;;
tiles3m)
  # 52. (ran 2026-12-03) the same 3-token-tile kernel (128 x 80, 8 stages of 64, 120 CTAs) at 200..240 tokens of 5120x5120: tiles3 ran it
  #     29.8 us at 200 tokens and 25.6 at 232 -- does the time depend on the tokens in the last tile?
  beside tiles3m 120 "one 3-token-tile kernel (--config) beside best at 200..240 tokens" --top 0 --rounds 7 --shapes 200,5120,5120 208,5120,5120 216,5120,5120 224,5120,5120 232,5120,5120 240,5120,5120 \
    --config 10:bm=128,bn=80,bk=64,stages=8,split_k=1@200,5120,5120 \
    --config 10:bm=128,bn=80,bk=64,stages=8,split_k=1@208,5120,5120 \
    --config 10:bm=128,bn=80,bk=64,stages=8,split_k=1@216,5120,5120 \
    --config 10:bm=128,bn=80,bk=64,stages=8,split_k=1@224,5120,5120 \
    --config 10:bm=128,bn=80,bk=64,stages=8,split_k=1@232,5120,5120 \
    --config 10:bm=128,bn=80,bk=64,stages=8,split_k=1@240,5120,5120
  ;;
tiles3-heldout)
  # 53. (ran 2026-12-03: faster only at 232-240 tokens, K <= 5120) the three-token-tile candidate (at most 8 padded rows) at 12 shapes where it moves the pick, none measured
  #     before: the old pick (--config) beside the new (best)
  beside tiles3_heldout 150 "the three-token-tile candidate: old picks (--config) beside the new (best)" --top 0 --rounds 5 --shapes 136,4608,3072 144,5120,5120 140,4608,4096 188,5120,3072 192,5632,5120 184,5120,8192 236,4608,2048 232,5632,4096 240,4608,6144 236,5120,8192 232,5632,14336 240,5120,4096 \
    --config 10:bn=144,bk=64,split_k=1@136,4608,3072 \
    --config 10:bn=144,bk=64,split_k=1@144,5120,5120 \
    --config 10:bm=128,bn=144,bk=64,stages=6,split_k=3,evict_first_a=True@140,4608,4096 \
    --config 10:bn=192,bk=64,stages=7,split_k=1@188,5120,3072 \
    --config 10:bn=192,bk=64,stages=7,split_k=1@192,5632,5120 \
    --config 10:bm=192,bn=192,bk=64,stages=4,split_k=4,evict_first_a=True@184,5120,8192 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@236,4608,2048 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@232,5632,4096 \
    --config 10:bm=128,bn=240,bk=64,stages=4,split_k=3,evict_first_a=True@240,4608,6144 \
    --config 10:bm=192,bn=128,bk=64,stages=5@236,5120,8192 \
    --config 10:bm=192,bn=128,bk=64,stages=5@232,5632,14336 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@240,5120,4096
  ;;
tiles3-80)
  # 54. (ran 2026-12-03: 1.138x, 9 of 9; landed) the three-token-tile candidate narrowed to 232-240 tokens and K <= 5120 (after tiles3-heldout): the old pick
  #     (--config) beside the new (best) at shapes where it moves the pick, none measured before
  beside tiles3_80 120 "three 80-token tiles at 232-240 tokens, K <= 5120: old picks (--config) beside the new (best)" --top 0 --rounds 5 --shapes 236,5632,2048 240,4608,4096 234,5120,3072 240,5632,5120 232,4608,3584 240,5632,3072 236,5120,4608 232,5632,2560 238,4864,4096 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@236,5632,2048 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@240,4608,4096 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@234,5120,3072 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@240,5632,5120 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@232,4608,3584 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@240,5632,3072 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@236,5120,4608 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@232,5632,2560 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@238,4864,4096
  ;;
tiles3-checks)
  # 55. (ran 2026-12-03: 5 passed, sanitizers 0 errors, stress 0 wrong) best's new config at 232-240 tokens (10 bm=128 bn=80 bk=64 stages=8 split_k=1): its GPU tests (M = 1, K >> N and
  #     not a multiple of the k-tile, fewer k-tiles than CTAs, ragged, more tokens than its tile), the four sanitizers
  #     on two ragged shapes, and the stress run (two streams, two threads, every call checked)
  timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_split_swap.py \
    -k "bm128-bn80-bk64-stages8-split_k1" 2>&1 | tail -3 | tee "$OUT/gpu_tests_tiles3.log"
  C="--config 10:bm=128,bn=80,bk=64,stages=8,split_k=1"
  timeout 150 python3 bench/sanitize.py --phases none $C --shapes 236,1032,520 232,3000,4104 --deadline 110 --jobs 4 \
    --out "$OUT/sanitize" 2>&1 | tail -8
  timeout 60 python3 bench/stress.py --phases none $C --shapes 240,1024,768 232,3000,520 236,512,4096 --calls 200 \
    --thread-calls 100 --timeout 50 --out "$OUT/stress" 2>&1 | tail -6
  ;;
model8)
  # 56. (ran 2026-12-03) issue 18's criteria in one run with the final model (re-read and wide-tile terms, three 80-token tiles at
  #     232-240 tokens): the decode and small sets and heldout7 (cold L2, model picks, no tuned table), no regression at
  #     the big shapes (best beside phases 7 and 8), the skinny shape sustained; each bench's last lines
  timeout 170 python3 -m cute_gemm bench --set decode --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --out "$OUT/decode_bench.json" 2>&1 | tail -3
  timeout 60 python3 -m cute_gemm bench --set small --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 7 \
    --quiet --no-plot --out "$OUT/small_bench.json" 2>&1 | tail -3
  timeout 120 python3 -m cute_gemm bench --set heldout7 --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --no-plot --out "$OUT/heldout7_bench.json" 2>&1 | tail -3
  timeout 110 python3 -m cute_gemm bench --shapes 4096,4096,4096 1024,4096,4096 8192,8192,8192 3072,3072,3072 \
    --phases 7,8 --best --peers cublas,cublaslt --rounds 7 --quiet --no-plot --out "$OUT/regress_bench.json" 2>&1 | tail -12
  timeout 60 python3 -m cute_gemm bench --shapes 1024,4096,4096 --phases 7 --best --peers cublas,cublaslt \
    --sustained 0.5 --rounds 9 --quiet --no-plot --out "$OUT/skinny_sustained_bench.json" 2>&1 | tail -8
  ;;
tiles3-mc4)
  # 57. (ran 2026-12-03: won at 4 of 10, now the rule mc4-fresh checks) 241-256 tokens in three 96-token tiles of 128 weight rows, the token tile multicast over 4
  #     weight tiles (8 stages of 64, one wave of clusters of 4): 1.13x and 1.15x best at 256x5120x4096 and
  #     248x4608x3584 in tiles3, unicast no faster -- beside best at 10 shapes never measured (K <= 5120, N <= 5120)
  beside tiles3_mc4 150 "three 96-token tiles over 4 (--config) beside best" --top 0 --rounds 5 --shapes 244,4096,4096 248,5120,3072 252,3584,4096 256,4608,2048 250,5120,5120 246,3072,3584 256,4096,3072 242,4608,5120 254,5120,2560 256,3584,5120 \
    --config 10:bm=128,bn=96,bk=64,stages=8,split_k=1,cluster_m=4@244,4096,4096 \
    --config 10:bm=128,bn=96,bk=64,stages=8,split_k=1,cluster_m=4@248,5120,3072 \
    --config 10:bm=128,bn=96,bk=64,stages=8,split_k=1,cluster_m=4@252,3584,4096 \
    --config 10:bm=128,bn=96,bk=64,stages=8,split_k=1,cluster_m=4@256,4608,2048 \
    --config 10:bm=128,bn=96,bk=64,stages=8,split_k=1,cluster_m=4@250,5120,5120 \
    --config 10:bm=128,bn=96,bk=64,stages=8,split_k=1,cluster_m=4@246,3072,3584 \
    --config 10:bm=128,bn=96,bk=64,stages=8,split_k=1,cluster_m=4@256,4096,3072 \
    --config 10:bm=128,bn=96,bk=64,stages=8,split_k=1,cluster_m=4@242,4608,5120 \
    --config 10:bm=128,bn=96,bk=64,stages=8,split_k=1,cluster_m=4@254,5120,2560 \
    --config 10:bm=128,bn=96,bk=64,stages=8,split_k=1,cluster_m=4@256,3584,5120
  ;;
mc4-fresh)
  # 58. (ran 2026-12-03: 0.953x, faster at 7 of 14; not taken, the rule is not in choose) the rule "241-256 tokens in three 96-token tiles multicast over 4" (choose.split_candidates), beside the
  #     old pick at 14 shapes never measured where it moves the pick (N 4288-5120, K <= 5120: 27-30 clusters of 4,
  #     one wave); best is the new pick, --config the old one
  beside mc4_fresh 200 "the three-96-token-tile rule (best) beside the old pick (--config) at 14 fresh shapes" --top 0 --rounds 5 \
    --shapes 243,4352,2304 245,4800,4096 247,5120,1536 249,4992,3328 251,4480,4864 253,5056,2816 255,4672,3840 \
    256,4928,1280 241,5120,4608 244,4608,4352 252,4864,5120 246,4416,3072 243,4736,5120 250,4608,2560 \
    --config 10:bm=128,bn=128,bk=64,stages=7,cluster_m=4,split_k=1@243,4352,2304 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@245,4800,4096 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@247,5120,1536 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@249,4992,3328 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@251,4480,4864 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@253,5056,2816 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@255,4672,3840 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@256,4928,1280 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@241,5120,4608 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@244,4608,4352 \
    --config 10:bm=128,bn=256,bk=64,stages=4,split_k=3,evict_first_a=true@252,4864,5120 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@246,4416,3072 \
    --config 10:bm=128,bn=256,bk=64,stages=4,split_k=3,evict_first_a=true@243,4736,5120 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@250,4608,2560
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
region256)
  # 60. (ran 2026-12-03: 128 x 256 split 3 and 192 x 128 split 2 the fastest; led to reduce-cap) 241-256 tokens x 4288-5120 weight rows, where the vendor ran 0.82-0.91 of best at 10 of 14 fresh shapes
  #     (mc4-fresh): every family's cheapest candidate, the 256-token tile split 3 (24.5 us where the model said 29)
  #     and split 2, and the vendor's kernel names (--bench-out)
  beside region256 280 "241-256 tokens x N 4288-5120: every family, one 256-token tile split 2/3" --top 4 --families --rounds 5 \
    --shapes 251,4480,4864 245,4800,4096 255,4672,3840 248,5120,3072 244,4608,4352 \
    --config 10:bm=128,bn=256,bk=64,stages=4,split_k=3,evict_first_a=true \
    --config 10:bm=128,bn=256,bk=64,stages=4,split_k=2,evict_first_a=true \
    --bench-out "$OUT/region256_bench.json"
  ;;
reduce-cap)
  # 61. (ran 2026-12-03: 1.056x, faster at 14 of 19; landed) choose.Machine.reduce_max_bytes (a split's reduce charged for at most 80 KiB of partial tile: split
  #     configs of big tiles measured as fast as the model without its reduce term, region256) -- the new pick (best)
  #     beside the old one (--config) at 19 shapes never measured where it moves: 16 drawn from 4000 random shapes of
  #     1-256 tokens (74 moved), three of 241-256 tokens
  beside reduce_cap 300 "reduce_max_bytes: the new pick (best) beside the old (--config) at 19 fresh shapes" --top 0 --rounds 5 \
    --shapes 190,12288,14336 190,5632,5120 176,7168,18944 148,5120,5632 210,8192,14336 162,9216,12288 152,9216,6144 \
    220,3584,11008 238,3072,11008 182,3072,6144 218,4608,3584 197,3072,9216 175,5120,5120 194,4608,4096 246,6144,7168 \
    179,4608,4096 247,4864,4608 250,4736,4352 256,4544,3840 \
    --config 10:bm=192,bn=96,bk=64,stages=6,split_k=1@190,12288,14336 \
    --config 10:bn=192,bk=64,stages=7,split_k=1@190,5632,5120 \
    --config 10:bn=176,bk=64,stages=7,split_k=1@176,7168,18944 \
    --config 10:bn=160,bk=64,split_k=1@148,5120,5632 \
    --config 10:bm=128,bn=112,bk=64,stages=7,split_k=1@210,8192,14336 \
    --config 10:bm=192,bn=96,bk=64,stages=6,split_k=1@162,9216,12288 \
    --config 10:bm=128,bn=160,bk=64,stages=6,split_k=1,evict_first_a=True@152,9216,6144 \
    --config 10:bn=224,bk=64,stages=6@220,3584,11008 \
    --config 10:bn=240,bk=64,stages=5@238,3072,11008 \
    --config 10:bn=192,bk=64,stages=7@182,3072,6144 \
    --config 10:bm=128,bn=112,bk=64,stages=7,split_k=1@218,4608,3584 \
    --config 10:bn=208,bk=64,stages=6@197,3072,9216 \
    --config 10:bn=176,bk=64,stages=7,split_k=1@175,5120,5120 \
    --config 10:bn=208,bk=64,stages=6,split_k=1@194,4608,4096 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@246,6144,7168 \
    --config 10:bn=192,bk=64,stages=3,split_k=3,ctas_per_sm=2@179,4608,4096 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@247,4864,4608 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@250,4736,4352 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@256,4544,3840
  ;;
reduce-cap-checks)
  # 62. (ran 2026-12-03: 15 passed, sanitizers 0 errors, stress 0 wrong) the split big tiles best now picks more often (reduce_max_bytes): their GPU tests (M = 1, K >> N and not a
  #     multiple of the k-tile, fewer k-tiles than CTAs, ragged, more tokens than a tile), the four sanitizers on two
  #     ragged shapes, the stress run (two streams, two threads, every call checked)
  timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_split_swap.py \
    -k "bm192-bn192-bk64-stages4-split_k4 or bm128-bn224-bk64-stages5-split_k3 or bm192-bn176-bk64-stages4-split_k4" \
    2>&1 | tail -3 | tee "$OUT/gpu_tests_reduce_cap.log"
  C="--config 10:bm=192,bn=192,bk=64,stages=4,split_k=4 --config 10:bm=128,bn=224,bk=64,stages=5,split_k=3"
  timeout 200 python3 bench/sanitize.py --phases none $C --shapes 190,1032,520 250,3000,4104 --deadline 150 --jobs 4 \
    --out "$OUT/sanitize" 2>&1 | tail -8
  timeout 90 python3 bench/stress.py --phases none $C --shapes 240,1024,768 190,3000,520 250,512,4096 --calls 200 \
    --thread-calls 100 --timeout 80 --out "$OUT/stress" 2>&1 | tail -6
  ;;
reduce-cap2)
  # 63. (ran 2026-12-03: 1.058x, faster at 13 of 14) reduce_max_bytes again: the new pick (best) beside the old (--config) at 14 more of the moved random shapes
  #     (none measured before), a second sample after reduce-cap's 19
  beside reduce_cap2 260 "reduce_max_bytes, second sample: the new pick (best) beside the old (--config) at 14 fresh shapes" --top 0 --rounds 5 \
    --shapes 207,3072,6144 159,10240,8192 166,10240,9216 226,3072,28672 129,11008,14336 167,7168,18944 163,9216,16384 \
    179,5120,5632 192,12288,14336 184,5632,6144 173,4608,4096 217,3072,9216 149,12288,14336 168,5120,5632 \
    --config 10:bn=208,bk=64,stages=6@207,3072,6144 \
    --config 10:bm=128,bn=160,bk=64,stages=6,split_k=1,evict_first_a=True@159,10240,8192 \
    --config 10:bm=192,bn=96,bk=64,stages=6,split_k=1@166,10240,9216 \
    --config 10:bn=240,bk=64,stages=5@226,3072,28672 \
    --config 10:bm=128,bn=144,bk=64,stages=6,split_k=1,evict_first_a=True@129,11008,14336 \
    --config 10:bn=176,bk=64,stages=7,split_k=1@167,7168,18944 \
    --config 10:bm=192,bn=96,bk=64,stages=6,split_k=1@163,9216,16384 \
    --config 10:bn=192,bk=64,stages=7,split_k=1@179,5120,5632 \
    --config 10:bm=192,bn=96,bk=64,stages=6,split_k=1@192,12288,14336 \
    --config 10:bn=192,bk=64,stages=7,split_k=1@184,5632,6144 \
    --config 10:bn=176,bk=64,stages=3,split_k=3,ctas_per_sm=2@173,4608,4096 \
    --config 10:bn=224,bk=64,stages=6@217,3072,9216 \
    --config 10:bm=128,bn=160,bk=64,stages=6,split_k=1,evict_first_a=True@149,12288,14336 \
    --config 10:bn=176,bk=64,stages=7,split_k=1@168,5120,5632
  ;;
model9)
  # 64. (ran 2026-12-03: heldout8 1.036, heldout3 1.037, unlisted 1.013) the model with the reduce cap on shapes chosen after it (heldout8, never measured) and on the two sets that
  #     held the lowest shapes of the earlier ones (heldout3, unlisted; the cap moved no pick there), cold L2, model picks;
  #     each bench's last lines
  for set in heldout8 heldout3 unlisted; do
    timeout 130 python3 -m cute_gemm bench --set $set --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
      --quiet --no-plot --out "$OUT/${set}_model9_bench.json" 2>&1 | tail -3
  done
  ;;
mcast192)
  # 65. (ran 2026-12-03: lost at 11000 and 14336 weight rows, 1.12x at 11008; not taken) 200x11000x3000, the lowest unlisted shape (0.857-0.878 of the vendor): cuBLAS runs 192 x 104 tiles in 4 x 2
  #     clusters there; ours in 192-row tiles with the token tile multicast over 2 or 4 weight tiles (two token tiles, which
  #     the model gives no multicast gain) beside the model's 3 cheapest, and at two more ragged-K shapes
  beside mcast192 150 "192-row weight tiles with the token multicast, two token tiles" --top 3 --rounds 5 \
    --shapes 200,11000,3000 176,14336,2600 200,11008,3000 \
    --config 10:bm=192,bn=112,bk=64,stages=5,split_k=1,cluster_m=2 \
    --config 10:bm=192,bn=128,bk=64,stages=5,split_k=1,cluster_m=4 \
    --config 10:bm=192,bn=112,bk=64,stages=5,split_k=1
  ;;
tok8)
  # 66. (ran 2026-12-03: 25 passed; three 88-token tiles over 4 1.13-1.26x best at 241-256 tokens) token tiles of 8 x an
  #     odd number (the TMA box 8 rows taller than the MMA's N): their GPU tests, then cuBLAS's
  #     arrangements at the shapes furthest below the vendor (three 88-token tiles over 4 at 241-256 tokens; 192 x 104
  #     over 2 at 200 tokens; two 88-token tiles at 176), beside the model's 3 cheapest
  timeout 240 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_split_swap.py -k "bn88 or bn104 or (bn24 and not bn240) or bn72 or bn40" \
    2>&1 | tail -4 | tee "$OUT/gpu_tests_tok8.log"
  beside tok8 330 "token tiles of 8 x odd: cuBLAS's arrangements where best is furthest below the vendor" --top 3 --rounds 5 \
    --shapes 256,4608,2048 254,5120,2560 250,5120,5120 256,5120,4096 200,11000,3000 200,11000,4096 176,9216,3072 \
      72,9216,9216 184,10240,8192 \
    --config 10:bm=128,bn=88,bk=64,stages=7,split_k=1,cluster_m=4@256,4608,2048 \
    --config 10:bm=128,bn=88,bk=64,stages=7,split_k=1,cluster_m=4@254,5120,2560 \
    --config 10:bm=128,bn=88,bk=64,stages=7,split_k=1,cluster_m=4@250,5120,5120 \
    --config 10:bm=128,bn=88,bk=64,stages=7,split_k=1,cluster_m=4@256,5120,4096 \
    --config 10:bm=128,bn=96,bk=64,stages=7,split_k=1,cluster_m=4@256,5120,4096 \
    --config 10:bm=192,bn=104,bk=64,stages=5,split_k=1,cluster_m=2@200,11000,3000 \
    --config 10:bm=192,bn=104,bk=64,stages=5,split_k=1@200,11000,3000 \
    --config 10:bm=192,bn=104,bk=64,stages=5,split_k=1,cluster_m=2@200,11000,4096 \
    --config 10:bm=192,bn=88,bk=64,stages=5,split_k=1@176,9216,3072 \
    --config 10:bm=192,bn=88,bk=64,stages=5,split_k=1,cluster_m=2@176,9216,3072 \
    --config 10:bm=128,bn=72,stages=4,split_k=1,evict_first_a=true@72,9216,9216 \
    --config 10:bm=192,bn=184,bk=64,stages=4,split_k=2@184,10240,8192 \
    --config 10:bm=192,bn=192,bk=64,stages=4,split_k=2@184,10240,8192
  ;;
tok8-moved)
  # 67. (ran 2026-12-03: 1.067x at the 10 of 241-256 tokens, 0.990x at the 12 others -- 169x2560x5120 0.77x, since
  #     mended) token tiles in steps of 8 and three 88-token tiles over 4 at 241-256 tokens (K <= 5120): the new pick (best) beside
  #     the old (--config) at 22 shapes never measured, drawn at random where the pick moved (10 of 241-256 tokens, 12 of
  #     20-240)
  beside tok8-moved 500 "token tiles in steps of 8: the new pick (best) beside the old (--config) at 22 fresh shapes" --top 0 --rounds 5 \
    --shapes 242,4608,1536 241,5120,4096 249,4608,4096 247,4608,2048 247,4608,2560 251,4608,4608 256,4608,1024 \
      241,12288,1024 246,5120,1536 251,5120,2048 102,4096,11008 230,3584,8192 169,2560,5120 231,3584,5120 \
      162,4096,6144 166,7168,4096 178,5120,14336 194,11008,8192 198,5632,3072 167,7168,14336 175,3072,3072 \
      151,11008,4096 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@242,4608,1536 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@241,5120,4096 \
    --config 10:bm=128,bn=256,bk=64,stages=4,split_k=3,evict_first_a=True@249,4608,4096 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@247,4608,2048 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@247,4608,2560 \
    --config 10:bm=128,bn=256,bk=64,stages=4,split_k=3,evict_first_a=True@251,4608,4608 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@256,4608,1024 \
    --config 10:bm=128,bn=256,bk=64,stages=4,cluster_m=4,split_k=1,evict_first_a=True@241,12288,1024 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@246,5120,1536 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@251,5120,2048 \
    --config 10:bn=112,stages=5@102,4096,11008 \
    --config 10:bn=240,bk=64,stages=5@230,3584,8192 \
    --config 10:bm=192,bn=96,bk=64,stages=6,split_k=4@169,2560,5120 \
    --config 10:bn=240,bk=64,stages=5@231,3584,5120 \
    --config 10:bn=176,bk=64,stages=7@162,4096,6144 \
    --config 10:bn=176,bk=64,stages=7,split_k=1@166,7168,4096 \
    --config 10:bm=192,bn=192,bk=64,stages=4,split_k=4,evict_first_a=True@178,5120,14336 \
    --config 10:bm=192,bn=112,bk=64,stages=5,split_k=1@194,11008,8192 \
    --config 10:bn=208,bk=64,stages=6,split_k=1@198,5632,3072 \
    --config 10:bn=176,bk=64,stages=7,split_k=1@167,7168,14336 \
    --config 10:bn=96,bk=64,split_k=1@175,3072,3072 \
    --config 10:bm=128,bn=160,bk=64,stages=6,cluster_m=4,split_k=1,evict_first_a=True@151,11008,4096
  ;;
tok8-checks)
  # 68. (ran 2026-12-03: 0 errors in 16, stress PASS) 8 x odd token tiles (the TMA box 8 rows taller than the MMA): the
  #     four sanitizers on two ragged shapes, the stress run
  C="--config 10:bm=128,bn=88,bk=64,stages=8,split_k=1,cluster_m=4 --config 10:bm=192,bn=184,bk=64,stages=4,split_k=4"
  timeout 200 python3 bench/sanitize.py --phases none $C --shapes 250,1032,520 190,3000,4104 --deadline 150 --jobs 4 \
    --out "$OUT/sanitize" 2>&1 | tail -8
  timeout 90 python3 bench/stress.py --phases none $C --shapes 240,1024,768 190,3000,520 250,512,4096 --calls 200 \
    --thread-calls 100 --timeout 80 --out "$OUT/stress" 2>&1 | tail -6
  ;;
tok8-sets)
  # 69. (ran 2026-12-03: heldout9 1.014, heldout8 1.046, unlisted 1.021) the model with token tiles in steps of 8 on
  #     shapes chosen after it (heldout9, never measured) and on two earlier
  #     held-out sets whose picks it moved (heldout8, unlisted), cold L2, model picks; each bench's last lines
  for set in heldout9 heldout8 unlisted; do
    timeout 150 python3 -m cute_gemm bench --set $set --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
      --quiet --no-plot --out "$OUT/${set}_tok8_bench.json" 2>&1 | tail -3
  done
  ;;
tok8-4864)
  # 70. (ran 2026-12-03: unicast 17.4 / 12.8 us against the old 18.9 / 13.5; 232x2048x5632 15.4 against 14.5) heldout9's
  #     lowest (252x4864x3072: three 88-token tiles over 4 at 0.82 of the vendor): again, beside the old pick, the
  #     unicast twin and the model's cheapest, at it and at three more shapes whose weight tiles leave a cluster of 4 ragged
  #     (the rule skipped them then: best was the old pick there); and 232x2048x5632, where steps of 8 moved the pick from one
  #     240-token tile split 3 (measured 14.5 us) to two 120-token tiles split 2
  beside tok8-4864 200 "three 88-token tiles over 4 where 38 weight tiles leave the last cluster half empty" --top 3 --rounds 5 \
    --shapes 252,4864,3072 248,4864,2048 244,4352,3072 252,4864,4096 232,2048,5632 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@252,4864,3072 --config 10:bm=128,bn=88,bk=64,split_k=1@252,4864,3072 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@248,4864,2048 --config 10:bm=128,bn=88,bk=64,split_k=1@248,4864,2048 \
    --config 10:bm=128,bn=128,bk=64,stages=7,cluster_m=4,split_k=1@244,4352,3072 \
    --config 10:bm=128,bn=256,bk=64,stages=4,split_k=3,evict_first_a=True@252,4864,4096 \
    --config 10:bn=240,bk=64,stages=5,split_k=3@232,2048,5632
  ;;
heldout10)
  # 72. (ran 2026-12-03: 1.019, lowest 0.855 at 65x2048x4096; the model's pick the fastest at 8 of 12) the model (as of
  #     168a26e) on 12 shapes drawn at random before any was measured (--set heldout10: M 1..237 x a model's layer
  #     widths, seed 20261203): the set's bench, cold L2, model picks; then every shape's 4 cheapest candidates and
  #     every family's cheapest beside best, to see where the model misses the fastest
  timeout 150 python3 -m cute_gemm bench --set heldout10 --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --no-plot --out "$OUT/heldout10_bench.json" 2>&1 | tail -3
  beside heldout10_candidates 400 "heldout10: the 4 cheapest and every family's cheapest beside best" --top 4 --families \
    --rounds 5 --shapes 1,14336,10240 44,13824,7168 65,2048,4096 67,2560,27648 78,9216,6144 86,6144,6144 \
      90,13824,5632 129,5632,6912 159,5632,6144 202,2048,8192 226,12288,3584 237,2048,10240
  ;;
heldout10-tuned)
  # 75. (ran 2026-12-03: tuned 1.077, lowest 0.986; the skinny shape's two rows of one kernel 610.6 and 600.8 TFLOP/s,
  #     phase 7 618.8, cuBLAS 622.0) heldout10 tuned on this GPU (cute-gemm tune --families: each shape's 6 cheapest and
  #     every family's cheapest, cold L2), then benched with the tuned picks: what the per-GPU table gives on shapes the
  #     model missed (heldout10 with the model's picks: 1.019, lowest 0.855). Then the skinny shape sustained with
  #     best's kernel twice (best and the same config as a --config row) beside phase 7 + PDL and the vendor's two entry
  #     points (one nvjet kernel): how far apart two rows of one kernel land in one sustained run
  timeout 330 python3 -m cute_gemm tune --set heldout10 --families --rounds 5 --quiet --out "$OUT/tune_heldout10.json" \
    > "$OUT/tune_heldout10.log" 2>&1; tail -3 "$OUT/tune_heldout10.log"
  timeout 150 python3 -m cute_gemm bench --set heldout10 --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --no-plot --out "$OUT/heldout10_tuned_bench.json" 2>&1 | tail -3
  timeout 100 python3 -m cute_gemm bench --shapes 1024,4096,4096 --phases 7 --best --peers cublas,cublaslt \
    --config 9:bn=256,stages=4,split_k=1,use_pdl=True --config 7:use_pdl=True --sustained 0.5 --rounds 9 --quiet \
    --no-plot --out "$OUT/skinny_twice_bench.json" 2>&1 | tail -12
  ;;
oneround)
  # 76. (ran 2026-12-03: 1.013x, faster at 7 of 10; sustained best (phase 7) 0.987 of cuBLASLt) a persistent kernel with
  #     PDL whose schedule is one round charged the data-parallel launch (1.4 us, was 4.0): the picks it moves (phase
  #     9's 128 x 256 -> phase 7, 10 shapes: the named 512x8192x8192, 2048x2048x2048 and the skinny shape, whose
  #     measured fastest was phase 7 already, and random ones of 384-512 rows x 8192) beside the old picks, cold L2;
  #     then the skinny shape sustained, new pick beside old and the vendor
  beside oneround 300 "one-round persistent launch: new picks (best, phase 7) beside the old (phase 9 128 x 256)" --top 0 \
    --rounds 7 --shapes 1024,4096,4096 512,8192,8192 2048,2048,2048 384,8192,2048 384,8192,3072 512,8192,14336 \
      384,8192,4096 384,8192,8192 512,8192,2048 384,8192,5120 \
    --config 9:bn=256,stages=4,split_k=1,use_pdl=True@1024,4096,4096 --config 9:bn=256,stages=4,split_k=1@512,8192,8192 \
    --config 9:bn=256,stages=4,split_k=1,use_pdl=True@2048,2048,2048 \
    --config 9:bn=256,stages=4,split_k=1,use_pdl=True@384,8192,2048 \
    --config 9:bn=256,stages=4,split_k=1,use_pdl=True@384,8192,3072 --config 9:bn=256,stages=4,split_k=1@512,8192,14336 \
    --config 9:bn=256,stages=4,split_k=1,use_pdl=True@384,8192,4096 --config 9:bn=256,stages=4,split_k=1@384,8192,8192 \
    --config 9:bn=256,stages=4,split_k=1,use_pdl=True@512,8192,2048 \
    --config 9:bn=256,stages=4,split_k=1,use_pdl=True@384,8192,5120
  timeout 100 python3 -m cute_gemm bench --shapes 1024,4096,4096 --phases 7 --best --peers cublas,cublaslt \
    --config 9:bn=256,stages=4,split_k=1,use_pdl=True --sustained 0.5 --rounds 9 --quiet --no-plot \
    --out "$OUT/skinny_oneround_bench.json" 2>&1 | tail -8
  ;;
m512)
  # 77. (ran 2026-12-03: phase 10's 128 x 192 1.24-1.27x best at 384 x 8192, phase 9's 128 x 192 1.25x at
  #     288x14336x4096; the rest lost) 257-512 tokens, where best has only 128 x 256 tiles in one partial wave
  #     (384x8192x8192: 96 tiles, 0.84 of the vendor in oneround): one-wave tiles the candidates lack -- phase 9's 192 x
  #     128 (three consumer warpgroups; with the B multicast over 2), 128 x 192, and phase 10's swap with two token
  #     tiles (128 weight rows x 192 or 256 tokens) -- beside the model's two cheapest and best. Six shapes to design a
  #     rule on (first line), six to test it (second), chosen before the run
  beside m512 420 "257-512 tokens: one-wave tiles beside best" --top 2 --rounds 5 \
    --shapes 384,8192,8192 384,8192,2048 320,8192,4096 448,4096,4096 288,14336,4096 480,5120,5120 \
      272,11008,4096 352,4096,14336 416,6144,6144 304,8192,3072 496,3584,8192 368,28672,4096 \
    --config 9:bm=192,bn=128,split_k=1,stages=5,use_pdl=True \
    --config 9:bm=192,bn=128,split_k=1,stages=5,cluster_m=2,use_pdl=True \
    --config 9:bm=128,bn=192,split_k=1,stages=5,use_pdl=True \
    --config 10:bm=128,bn=192,bk=64,split_k=1,stages=5 --config 10:bm=128,bn=256,bk=64,split_k=1,stages=4
  ;;
bm256)
  # 80. (ran 2026-12-04: won at 5 of 11, 288x14336x4096 56.1 us against 78.7) 257-512 tokens in weight tiles of 256
  #     rows (phase 10, two consumer warpgroups of 128 rows each, cuBLAS's 256 x 128 "coopA" arrangement): 2-4 token tiles
  #     of <= 144 tokens, split where the tiles leave SMs idle -- the two fullest grids per shape, beside the model's two
  #     cheapest and best; --bench-out keeps cuBLAS's kernels
  beside bm256 480 "257-512 tokens: 256-row weight tiles beside best" --top 2 --rounds 5 --bench-out "$OUT/bm256_bench.json" \
    --shapes 288,14336,4096 320,8192,4096 304,8192,3072 384,8192,8192 480,5120,5120 272,11008,4096 \
      352,4096,14336 448,4096,4096 416,6144,6144 496,3584,8192 512,14336,4096 \
    --config 10:bm=256,bn=144,bk=64,stages=4,split_k=1@288,14336,4096 \
    --config 10:bm=256,bn=80,bk=64,stages=5,split_k=1@320,8192,4096 \
    --config 10:bm=256,bn=112,bk=64,stages=4,split_k=1@320,8192,4096 \
    --config 10:bm=256,bn=80,bk=64,stages=5,split_k=1@304,8192,3072 \
    --config 10:bm=256,bn=104,bk=64,stages=4,split_k=1@304,8192,3072 \
    --config 10:bm=256,bn=96,bk=64,stages=5,split_k=1@384,8192,8192 \
    --config 10:bm=256,bn=128,bk=64,stages=4,split_k=1@384,8192,8192 \
    --config 10:bm=256,bn=120,bk=64,stages=4,split_k=1@480,5120,5120 \
    --config 10:bm=256,bn=96,bk=64,stages=5,split_k=1@272,11008,4096 \
    --config 10:bm=256,bn=136,bk=64,stages=4,split_k=1@272,11008,4096 \
    --config 10:bm=256,bn=88,bk=64,stages=5,split_k=2@352,4096,14336 \
    --config 10:bm=256,bn=120,bk=64,stages=4,split_k=2@352,4096,14336 \
    --config 10:bm=256,bn=112,bk=64,stages=4,split_k=2@448,4096,4096 \
    --config 10:bm=256,bn=104,bk=64,stages=4,split_k=1@416,6144,6144 \
    --config 10:bm=256,bn=128,bk=64,stages=4,split_k=2@496,3584,8192 \
    --config 10:bm=256,bn=128,bk=64,stages=4,split_k=1@512,14336,4096
  ;;
bm256-moved)
  # 81. (ran 2026-12-04: 1.14x at 15, faster at 12; 4 x 128 token tiles then left out) 256-row weight tiles in best's
  #     candidates past 256 tokens: the new picks (best) beside the old (--config) at the decode set's one moved shape
  #     (512x8192x8192) and 14 random shapes of 257-512 tokens whose pick moved (seed 20261204, 128 of 396 moved; 14 drawn
  #     with seed 4), cold L2
  beside bm256-moved 300 "256-row weight tiles past 256 tokens: new picks beside the old" --top 0 --rounds 5 \
    --shapes 512,8192,8192 384,11008,8192 470,8192,3072 269,8192,4096 360,3072,14336 413,4096,14336 322,3072,8192 \
      398,14336,14336 265,3072,8192 281,11008,2048 394,8192,3072 381,4096,14336 374,11008,4096 409,14336,4096 \
      435,8192,3072 \
    --config 7:use_pdl=True@512,8192,8192 --config 9:bn=256,stages=4,split_k=1@384,11008,8192 \
    --config 7:use_pdl=True@470,8192,3072 --config 10:bm=128,bn=192,bk=64,stages=5,split_k=1@269,8192,4096 \
    --config 7:bn=192,use_pdl=True@360,3072,14336 --config 9:split_k=1@413,4096,14336 \
    --config 7:bn=192,use_pdl=True@322,3072,8192 --config 7:bn=128,stages=6,use_pdl=True@398,14336,14336 \
    --config 9:bm=64,stages=8,split_k=1,use_pdl=True@265,3072,8192 \
    --config 9:bn=256,stages=4,split_k=1,use_pdl=True@281,11008,2048 --config 7:use_pdl=True@394,8192,3072 \
    --config 9:split_k=1@381,4096,14336 --config 9:bn=256,stages=4,split_k=1,use_pdl=True@374,11008,4096 \
    --config 7:bn=128,stages=6,use_pdl=True@409,14336,4096 --config 7:use_pdl=True@435,8192,3072
  ;;
bm256-checks)
  # 82. (ran 2026-12-04: 26 passed; 0 errors in 8 sanitizer runs) the 256-row weight tiles' GPU tests (three configs x
  #     the file's five shapes, two more at ragged shapes of 257-512 tokens, one in every C type) and the four sanitizers
  #     on two of them at a ragged shape
  timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_split_swap.py \
    -k "bm256 or 192_columns or (every_c_type and over6)" 2>&1 | tail -3
  C="--config 10:bm=256,bn=144,bk=64,stages=4,split_k=1 --config 10:bm=256,bn=88,bk=64,stages=5,split_k=2"
  timeout 200 python3 bench/sanitize.py --phases none $C --shapes 317,1032,1032 --deadline 150 --jobs 4 \
    --out "$OUT/sanitize" 2>&1 | tail -8
  ;;
bm256-tail)
  # 83. (ran 2026-12-04: four 80-token tiles faster at 3 of 3) 289-310 tokens at 14336 weight rows, where two token
  #     tiles would need 152 (past the registers of 256-row tiles): the model's pick, four token tiles of 80 (224 CTAs,
  #     two waves), beside its next two (phase 9's 128 x 192)
  beside bm256-tail 150 "289-310 tokens at N = 14336: four 80-token tiles of 256 weight rows beside the next" --top 3 \
    --rounds 5 --shapes 298,14336,4096 305,14336,4096 290,14336,8192
  ;;
criteria9)
  # 84. (ran 2026-12-04: decode 1.076, regressions none, skinny sustained 1.018) issue 18's criteria in one run after
  #     the 256-row weight tiles (no decode pick moved; the small set, no regression at the big shapes, the skinny shape
  #     sustained)
  timeout 170 python3 -m cute_gemm bench --set decode --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --out "$OUT/decode_bench.json" 2>&1 | tail -3
  timeout 60 python3 -m cute_gemm bench --set small --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 7 \
    --quiet --no-plot --out "$OUT/small_bench.json" 2>&1 | tail -3
  timeout 110 python3 -m cute_gemm bench --shapes 4096,4096,4096 1024,4096,4096 8192,8192,8192 3072,3072,3072 \
    --phases 7,8 --best --peers cublas,cublaslt --rounds 7 --quiet --no-plot --out "$OUT/regress_bench.json" 2>&1 | tail -12
  timeout 60 python3 -m cute_gemm bench --shapes 1024,4096,4096 --phases 7 --best --peers cublas,cublaslt \
    --sustained 0.5 --rounds 9 --quiet --no-plot --out "$OUT/skinny_sustained_bench.json" 2>&1 | tail -8
  ;;
heldout11)
  # 85. (ran 2026-12-04: heldout11 0.888, lowest 0.527) 12 random shapes of 257-512 tokens drawn after the 256-row
  #     weight tiles (--set heldout11), best (model picks) beside phase 7 and both vendors, cold L2; then the three shapes
  #     of 257-322 tokens furthest below the vendor in bm256-moved, every family's cheapest candidate beside best
  timeout 200 python3 -m cute_gemm bench --set heldout11 --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --no-plot --out "$OUT/heldout11_bench.json" 2>&1 | tail -3
  beside gaps257 240 "257-322 tokens below the vendor: every family's cheapest beside best" --top 3 --families \
    --rounds 5 --shapes 269,8192,4096 322,3072,8192 265,3072,8192
  ;;
gen512)
  # 86. (ran 2026-12-04: 1.177x at 20, faster at 16) phase 10's generic token tiles past 256 tokens (two halves of <=
  #     256, every weight-tile height and split, as at 129-256 tokens): the new picks (best) beside the old (--config) at
  #     the 8 named-set shapes they move and 12 of 193 random shapes of 257-512 tokens whose pick moved (seed 99; 12 drawn
  #     with seed 5), cold L2
  beside gen512 300 "phase 10's token tiles (halves) past 256 tokens: new picks beside the old" --top 0 --rounds 5 \
    --shapes 512,4096,4096 512,4096,14336 512,8192,8192 259,2560,7168 309,4096,8192 316,8192,8192 368,4096,14336 \
      454,8192,10240 267,2048,4096 408,6144,2048 319,8192,5120 268,2048,3072 461,4096,5120 257,4096,2048 \
      433,4096,3072 440,4096,3072 386,4096,5120 410,4096,3072 425,4096,8192 452,4096,5120 \
    --config 9:split_k=1,use_pdl=True@512,4096,4096 --config 9:split_k=1@512,4096,14336 \
    --config 7:use_pdl=True@512,8192,8192 --config 9:use_pdl=True@259,2560,7168 \
    --config 10:bm=256,bn=80,bk=64,stages=5@309,4096,8192 --config 10:bm=256,bn=80,bk=64,stages=5,split_k=1@316,8192,8192 \
    --config 10:bm=256,bn=96,bk=64,stages=5@368,4096,14336 --config 10:bm=256,bn=120,bk=64,stages=4,split_k=1@454,8192,10240 \
    --config 7:bn=128,stages=6,use_pdl=True@267,2048,4096 --config 8:use_pdl=True@408,6144,2048 \
    --config 10:bm=256,bn=80,bk=64,stages=5,split_k=1@319,8192,5120 --config 9:bm=64,stages=8,split_k=1,use_pdl=True@268,2048,3072 \
    --config 9:split_k=1,use_pdl=True@461,4096,5120 --config 9:split_k=1,use_pdl=True@257,4096,2048 \
    --config 9:split_k=1,use_pdl=True@433,4096,3072 --config 9:split_k=1,use_pdl=True@440,4096,3072 \
    --config 9:split_k=1,use_pdl=True@386,4096,5120 --config 9:split_k=1,use_pdl=True@410,4096,3072 \
    --config 10:bm=256,bn=112,bk=64,stages=4@425,4096,8192 --config 9:split_k=1,use_pdl=True@452,4096,5120
  ;;
gen512-checks)
  # 87. (ran 2026-12-04: 16 passed, 0 sanitizer errors, the halves faster at 3 of 3, heldout11 0.951) the token halves
  #     past 256 tokens: their GPU tests (four new configs at two ragged shapes of 257-512 tokens, with the earlier ones),
  #     the four sanitizers on two at a ragged shape; the picks they moved where the model's two-wave 128-row tiles were
  #     never measured (289-322 tokens), beside the 256-row picks; heldout11 after them
  timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_split_swap.py -k "192_columns" 2>&1 | tail -3
  C="--config 10:bm=64,bn=232,bk=64,stages=5,split_k=1 --config 10:bm=192,bn=136,bk=64,stages=5,split_k=4"
  timeout 150 python3 bench/sanitize.py --phases none $C --shapes 317,1032,1032 --deadline 120 --jobs 4 \
    --out "$OUT/sanitize" 2>&1 | tail -6
  beside gen512-two-waves 150 "token halves in 128-row tiles (two waves) beside the 256-row picks" --top 2 --rounds 5 \
    --shapes 298,14336,4096 290,14336,8192 269,8192,4096 322,3072,8192 265,3072,8192 \
    --config 10:bm=256,bn=80,bk=64,stages=5,split_k=1@298,14336,4096 \
    --config 10:bm=256,bn=80,bk=64,stages=5,split_k=1@290,14336,8192 \
    --config 10:bm=256,bn=136,bk=64,stages=4@269,8192,4096
  timeout 150 python3 -m cute_gemm bench --set heldout11 --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --no-plot --out "$OUT/heldout11_bench.json" 2>&1 | tail -3
  ;;
criteria10)
  # 88. (ran 2026-12-04: decode 1.077, lowest 0.966; small 1.133, lowest 1.005) the decode and small sets with the
  #     final model (the token halves moved three 512-token decode picks)
  timeout 170 python3 -m cute_gemm bench --set decode --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --out "$OUT/decode_bench.json" 2>&1 | tail -3
  timeout 60 python3 -m cute_gemm bench --set small --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 7 \
    --quiet --no-plot --out "$OUT/small_bench.json" 2>&1 | tail -3
  ;;
m512-stress)
  # 89. (ran 2026-12-04: PASS, 0 wrong) the stress run (two streams, two Python threads, every call checked, memory
  #     flat) of the configs best picks past 256 tokens: 256-row weight tiles unsplit and split 2, the token halves in
  #     64- and 192-row tiles (split 4), at ragged shapes of 257-512 tokens (2-4 token tiles each)
  C="--config 10:bm=256,bn=144,bk=64,stages=4,split_k=1 --config 10:bm=256,bn=88,bk=64,stages=5,split_k=2"
  C="$C --config 10:bm=64,bn=232,bk=64,stages=5,split_k=1 --config 10:bm=192,bn=136,bk=64,stages=5,split_k=4"
  timeout 150 python3 bench/stress.py --phases none $C --shapes 317,1032,1032 259,2056,520 463,1544,776 \
    --calls 200 --thread-calls 100 --timeout 140 --out "$OUT/stress" 2>&1 | tail -8
  ;;
w64pairs)
  # 90. (ran 2026-12-04: shared 33.4 us, unicast 33.5, the pick 34.1; 128x4096x4096 11.7 / 11.9 / 13.2) 128x4096x14336
  #     (the one decode shape with B >= 64 MB under 90% of the copy bandwidth): phase 9's 64-token x 64-weight tile with
  #     128-deep k-tiles (33.4 us in deep64, the pick's time) with its two token tiles in a cluster sharing the weight
  #     tile (cluster_m=2: each CTA loads half the box and multicasts it; at bk 64 this lost 3%), beside it unicast and
  #     the pick (best), 9 rounds
  beside w64pairs 200 "64 x 64 tiles, bk 128: the weight tile shared by the two token tiles, beside unicast and the pick" \
    --top 0 --rounds 9 --shapes 128,4096,14336 128,4096,4096 \
    --config 9:bm=64,bn=64,bk=128,stages=7,split_k=1,use_pdl=True \
    --config 9:bm=64,bn=64,bk=128,stages=7,split_k=1,use_pdl=True,cluster_m=2 \
    --config 9:bm=64,bn=64,bk=128,stages=6,split_k=1,use_pdl=True,cluster_m=2
  ;;
gaps512)
  # 91. (ran 2026-12-04: no family of ours reached cuBLAS's three-token-tile kernels) the three shapes of 257-512 tokens
  #     furthest below the vendor with the final model (heldout11 0.856 at 259x2560x7168 and 0.858 at 434x5120x6144;
  #     322x3072x8192 33.6 us against 30.6 in gen512-checks): every family's cheapest candidate and the model's top 4
  #     beside best, with the vendors' kernel names
  beside gaps512 300 "257-512 tokens below the vendor after the halves: every family's cheapest beside best" --top 4 --families \
    --rounds 5 --shapes 259,2560,7168 434,5120,6144 322,3072,8192 --bench-out "$OUT/gaps512_bench.json"
  ;;
tiles3x)
  # 92. (ran 2026-12-04: faster than best at 3 of 6, 1.10-1.18x; in the model since) past 256 tokens, cuBLAS's
  #     arrangements there (gaps512's kernel names: nvjet 64x88 over clusters of 4 at 259x2560x7168, 128x152 over 4 at
  #     434x5120x6144, 64x168 over 4 x 2 at 322x3072x8192): the tokens in three tiles of 64 or 128 weight rows in one
  #     wave, unicast and with the token tile multicast over the weight tiles, beside best and the model's top 2, at the
  #     three gaps and three more shapes
  beside tiles3x 300 "three token tiles past 256 tokens (cuBLAS's arrangements), unicast and multicast, beside best" \
    --top 2 --rounds 5 --shapes 259,2560,7168 434,5120,6144 322,3072,8192 300,4096,4096 384,4096,8192 480,5120,5120 \
    --config 10:bm=64,bn=88,bk=64,stages=8,split_k=1,cluster_m=1@259,2560,7168 --config 10:bm=64,bn=88,bk=64,stages=8,split_k=1,cluster_m=4@259,2560,7168 \
    --config 10:bm=128,bn=152,bk=64,stages=6,split_k=1,cluster_m=1@434,5120,6144 --config 10:bm=128,bn=152,bk=64,stages=6,split_k=1,cluster_m=4@434,5120,6144 \
    --config 10:bm=64,bn=168,bk=64,stages=7,split_k=1,cluster_m=2@322,3072,8192 --config 10:bm=128,bn=112,bk=64,stages=7,split_k=1,cluster_m=2@322,3072,8192 \
    --config 10:bm=128,bn=104,bk=64,stages=7,split_k=1,cluster_m=1@300,4096,4096 --config 10:bm=128,bn=104,bk=64,stages=7,split_k=1,cluster_m=2@300,4096,4096 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1,cluster_m=1@384,4096,8192 --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1,cluster_m=4@384,4096,8192 \
    --config 10:bm=128,bn=160,bk=64,stages=6,split_k=1,cluster_m=1@480,5120,5120 --config 10:bm=128,bn=160,bk=64,stages=6,split_k=1,cluster_m=4@480,5120,5120
  ;;
w64more)
  # 93. (ran 2026-12-04: faster than best at 5 of 7, 1.03-1.14x) phase 9's 64-token x 64-weight tile with 128-deep
  #     k-tiles, unsplit (w64pairs: 11.7 us at 128x4096x4096 against best's 13.2, the model says 16.0), beside best and
  #     the model's pick at more shapes of 65-128 tokens whose two token tiles x weight tiles fill one wave (N <= 4224)
  #     or two with a split (N = 2048)
  beside w64more 240 "phase 9's 64 x 64 tiles with bk 128 at 65-128 tokens, beside best" --top 1 --rounds 7 \
    --shapes 128,4096,2048 128,4096,6144 128,4096,11008 120,4096,4096 96,4096,4096 128,3584,8192 128,2048,8192 \
    --config 9:bm=64,bn=64,bk=128,stages=7,split_k=1,use_pdl=True \
    --config 9:bm=64,bn=64,bk=128,stages=7,split_k=2,use_pdl=True@128,2048,8192
  ;;
t3w64-moved)
  # 94. (ran 2026-12-04: 1.048x, faster at 18 of 22) three token tiles past 256 tokens (tiles3x) and phase 9's deep 64 x
  #     64 pair at 113-128 tokens (w64more) in the model: the new picks (best) beside the old (--config) at every shape
  #     they moved of the named sets and 400 random ones (`python bench/moved_picks.py HEAD --random 400 --seed 7
  #     --every 1` before the change: 17) and 5 shapes of 113-127 tokens chosen after it, cold L2
  beside t3w64-moved 420 "three token tiles past 256 tokens and phase 9's deep 64 x 64 pair: new picks beside old" \
    --top 0 --rounds 5 --shapes 128,4096,4096 128,4096,14336 404,5120,10240 434,5120,6144 384,5120,8192 384,5120,3072 \
      384,5120,5120 128,4096,2048 512,5120,3072 128,2048,5120 128,2048,3072 384,5120,4096 \
      128,2048,2048 128,3072,14336 128,3072,4096 384,5120,2048 512,5120,2048 116,4096,8192 \
      113,4096,5120 120,2560,8192 128,2816,5120 118,3840,11008 \
    --config 10:bn=128,stages=4@128,4096,4096 --config 10:bn=128,stages=4@128,4096,14336 \
    --config 10:bm=256,bn=136,bk=64,stages=4@404,5120,10240 --config 8:use_pdl=True@434,5120,6144 \
    --config 9:split_k=1,use_pdl=True@384,5120,8192 --config 9:split_k=1,use_pdl=True@384,5120,3072 \
    --config 9:split_k=1,use_pdl=True@384,5120,5120 --config 9:bm=64,bn=64,stages=8,split_k=1,use_pdl=True@128,4096,2048 \
    --config 8:use_pdl=True@512,5120,3072 --config 10:bn=128,stages=4,split_k=3@128,2048,5120 \
    --config 10:bn=128,stages=4,split_k=3@128,2048,3072 --config 9:split_k=1,use_pdl=True@384,5120,4096 \
    --config 9:bm=64,bn=64,stages=8,use_pdl=True@128,2048,2048 --config 10:bm=128,bn=128,bk=64,stages=7,split_k=4,evict_first_a=True@128,3072,14336 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=4,evict_first_a=True@128,3072,4096 --config 9:split_k=1,use_pdl=True@384,5120,2048 \
    --config 8:use_pdl=True@512,5120,2048 --config 10:bn=120,stages=4@116,4096,8192 \
    --config 10:bn=120,stages=4@113,4096,5120 --config 10:bm=128,bn=120,bk=64,stages=7,split_k=4,evict_first_a=True@120,2560,8192 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=4,evict_first_a=True@128,2816,5120 --config 10:bm=128,bn=120,bk=64,stages=7,split_k=4,evict_first_a=True@118,3840,11008
  ;;
t3w64-checks)
  # 95. (ran 2026-12-04: 9 passed, sanitizers 0 errors, stress PASS) the configs of three token tiles and of phase 9's
  #     deep 64 x 64 pair: their GPU tests (the pair at the split/swap file's five shapes: M = 1, K >> N and not a
  #     multiple of the k-tile, fewer k-tiles than CTAs, ragged, more tokens than its tiles; the three-tile configs at
  #     two ragged shapes of 257-512 tokens), the four sanitizers on three of them at a ragged shape, and the stress run
  #     (two streams, two threads, every call checked)
  timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_split_swap.py \
    -k "bk128-stages7-split_k1 or bn152 or bn88-bk64-stages8" 2>&1 | tail -3
  C="--config 9:bm=64,bn=64,bk=128,stages=7,split_k=1,use_pdl=True --config 10:bm=128,bn=152,bk=64,stages=6,split_k=1"
  C="$C --config 10:bm=64,bn=88,bk=64,stages=8,split_k=1"
  timeout 180 python3 bench/sanitize.py --phases none $C --shapes 317,1032,1032 --deadline 150 --jobs 4 \
    --out "$OUT/sanitize" 2>&1 | tail -8
  timeout 100 python3 bench/stress.py --phases none $C --shapes 317,1032,1032 120,2056,4104 463,1544,776 \
    --calls 200 --thread-calls 100 --timeout 90 --out "$OUT/stress" 2>&1 | tail -8
  ;;
criteria11)
  # 96. (ran 2026-12-04 twice: decode 1.084 / 1.086, B >= 64 MB at >= 92.2 / 90.9% of copy, small 1.130 / 1.127,
  #     heldout11 0.969 / 0.962) issue 18's decode and small sets with the final model (the deep 64 x 64 pair moved
  #     128x4096x4096 and 128x4096x14336), and heldout11 (three token tiles moved 404x5120x10240 and 434x5120x6144); the
  #     big shapes' picks did not move (criteria9 holds for them)
  timeout 170 python3 -m cute_gemm bench --set decode --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --out "$OUT/decode_bench.json" 2>&1 | tail -3
  timeout 60 python3 -m cute_gemm bench --set small --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 7 \
    --quiet --no-plot --out "$OUT/small_bench.json" 2>&1 | tail -3
  timeout 150 python3 -m cute_gemm bench --set heldout11 --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --no-plot --out "$OUT/heldout11_bench.json" 2>&1 | tail -3
  ;;
criteria11-big)
  # 97. (ran 2026-12-04: within 2% everywhere, sustained 0.982) the rest of issue 18's criteria with the final model, in
  #     the same session as criteria11: no regression at the big shapes (best beside phases 7 and 8) and the skinny
  #     shape sustained
  timeout 110 python3 -m cute_gemm bench --shapes 4096,4096,4096 1024,4096,4096 8192,8192,8192 3072,3072,3072 \
    --phases 7,8 --best --peers cublas,cublaslt --rounds 7 --quiet --no-plot --out "$OUT/regress_bench.json" 2>&1 | tail -12
  timeout 60 python3 -m cute_gemm bench --shapes 1024,4096,4096 --phases 7 --best --peers cublas,cublaslt \
    --sustained 0.5 --rounds 9 --quiet --no-plot --out "$OUT/skinny_sustained_bench.json" 2>&1 | tail -8
  ;;
heldout12)
  # 98. 12 random shapes of 1-512 tokens drawn after the final model (--set heldout12), best beside phase 7 and both
  #     vendors, cold L2: the regime, not the lists
  timeout 240 python3 -m cute_gemm bench --set heldout12 --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --no-plot --out "$OUT/heldout12_bench.json" 2>&1 | tail -3
  ;;
m512-moved)
  # 78. (ran 2026-12-03: 1.140x, faster at 10 of 10) the 192-column tiles past 256 tokens (m512) and the one-round
  #     persistent launch (oneround) together: the new picks (best) beside the old (--config) at 10 random shapes of
  #     257-512 tokens whose pick they moved (seed 1203, drawn after both rules), cold L2
  beside m512-moved 300 "192-column tiles past 256 tokens and one-round persistent launch: new picks beside old" --top 0 \
    --rounds 5 --shapes 470,8192,5632 317,7168,6144 477,8192,8192 323,7168,18944 352,13824,12288 364,14336,6144 \
      298,14336,4096 373,7168,3072 322,14336,14336 484,8192,3072 \
    --config 9:bn=256,stages=4,split_k=1@470,8192,5632 --config 9:bn=256,stages=4,split_k=1,use_pdl=True@317,7168,6144 \
    --config 9:bn=256,stages=4,split_k=1@477,8192,8192 --config 9@323,7168,18944 --config 9:split_k=1@352,13824,12288 \
    --config 9:split_k=1@364,14336,6144 --config 9:split_k=1,use_pdl=True@298,14336,4096 \
    --config 9:bn=256,stages=4,split_k=1,use_pdl=True@373,7168,3072 --config 9:split_k=1@322,14336,14336 \
    --config 9:bn=256,stages=4,split_k=1,use_pdl=True@484,8192,3072
  ;;
m512-checks)
  # 79. (ran 2026-12-03: 15 passed; 0 errors in 8 sanitizer runs) the 192-column tiles best now picks past 256 tokens:
  #     their GPU tests (10 configs x shapes of test_gpu_split_swap.py, and two ragged shapes of 257-512 tokens), the
  #     four sanitizers on both at one ragged shape
  timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_split_swap.py -k "bn192" 2>&1 | tail -3
  C="--config 9:bm=128,bn=192,bk=64,stages=5,split_k=1,use_pdl=True --config 10:bm=128,bn=192,bk=64,stages=5,split_k=1"
  timeout 150 python3 bench/sanitize.py --phases none $C --shapes 317,1032,1032 --deadline 110 --jobs 4 \
    --out "$OUT/sanitize" 2>&1 | tail -8
  ;;
tok8-ragged)
  # 71. (ran 2026-12-03: 1.055-1.063x at K = 2048, 0.945-0.972x past it: unicast taken up to K = 2048) three 88-token
  #     tiles unicast where the weight tiles leave a cluster of 4 ragged (the rule's second half): the new
  #     pick (best) beside the old (--config) at 5 fresh shapes of 241-256 tokens
  beside tok8-ragged 150 "three 88-token tiles unicast at ragged weight-tile counts: new pick beside the old" --top 0 --rounds 5 \
    --shapes 246,4736,3584 255,4864,2048 249,5248,3072 250,4736,2048 252,4352,4096 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@246,4736,3584 --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@255,4864,2048 \
    --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@249,5248,3072 --config 10:bm=128,bn=128,bk=64,stages=7,split_k=1@250,4736,2048 \
    --config 10:bm=128,bn=256,bk=64,stages=4,split_k=3,evict_first_a=True@252,4352,4096
  ;;
tune-families)
  # 41. (ran 2026-12-03, heldout3 only) cute-gemm tune --families at the held-out sets that hold the shapes still below 0.9 of the vendor
  #     (232x2048x5632, 192x5120x27648 in heldout3; 200x11000x3000 in unlisted), then those sets benched with the
  #     table; the bench's last lines give each set's geomean over the vendor and its lowest shape
  for set in heldout3 unlisted; do
    timeout 200 python3 -m cute_gemm tune --set $set --families --rounds 3 --quiet --out "$OUT/tune_families_${set}.json" \
      > "$OUT/tune_families_${set}.log" 2>&1; tail -2 "$OUT/tune_families_${set}.log"
    timeout 90 python3 -m cute_gemm bench --set $set --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
      --quiet --no-plot --out "$OUT/${set}_tuned_families_bench.json" 2>&1 | tail -3
  done
  ;;
esac

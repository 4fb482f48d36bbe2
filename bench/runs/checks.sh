#!/usr/bin/env bash
# bench/runs/checks.sh: one topic of the H200 runs (bash bench/run_h200.sh --list shows every case).
# The checks a config passes before best may pick it: its GPU tests (tests/test_gpu_split_swap.py and the like),
# the four compute-sanitizer tools (bench/sanitize.py) and the stress run (bench/stress.py: two streams, two Python
# threads, every call checked), at ragged shapes the config takes.
#
# Run from the repository root: bash bench/run_h200.sh CASE. Each case's comment says what it ran and, once run,
# what came back; docs/results.md holds the tables. Cases (the number orders the device runs):
#   regime6             9. the token-tile multicast's configs: GPU tests, sanitizers, stress run
#   regime8            13. 192-row tiles and 3-way splits (bm=192, split_k=3): GPU tests, sanitizers, stress run
#   tokens16-checks    22. token tiles in steps of 16: GPU tests, sanitizers, stress run; the held-out sets; Nsight Compute
#   wmcast-checks      34. 64-token tiles sharing the weights (wmcast): GPU tests, sanitizers, stress run
#   evict-checks       38. phase 10's weights evict-first: its GPU tests in 7 configs, the decode set after it
#   tiles3-checks      55. three 80-token tiles at 232-240 tokens (tiles3-80's config): GPU tests, sanitizers, stress run
#   reduce-cap-checks  62. the split big tiles best picks more often after reduce-cap: GPU tests, sanitizers, stress run
#   tok8-checks        68. token tiles of 8 x an odd number: sanitizers, stress run
#   m512-checks        79. 192-column tiles past 256 tokens (m512): GPU tests, sanitizers
#   bm256-checks       82. 256-row weight tiles (bm256): GPU tests, sanitizers
#   gen512-checks      87. phase 10's token halves past 256 tokens (gen512): GPU tests, sanitizers; two-wave picks; heldout11
#   m512-stress        89. 257-512 tokens: the stress run of the configs best picks there
#   t3w64-checks       95. three token tiles past 256 tokens and phase 9's deep 64 x 64 pair: GPU tests, sanitizers, stress run
#   clusters-checks    96. clusters along N sharing A (cluster_n=2, phases 6 and 8): sanitizers, stress run
#   fit-checks         97. phase 8 in the widths best picks where they fill its rounds (160, 176): GPU tests, sanitizers, stress run, best
#   ring5-checks       98. best's phase 8 with a 16-bit C (5 stages, bands of 16): GPU tests, sanitizers, stress run
#   p8w128-checks      99. phase 8 128 wide in 6 stages (N = 2048): GPU tests, sanitizers, stress run, the train-step set
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# persistent_checks CONFIGS: a persistent phase's configs under the four sanitizers at 1000x3000x520 (ragged: partial
# tiles in M and N) and in the stress run at three ragged shapes
persistent_checks() {
  timeout 200 python3 bench/sanitize.py --phases none $1 --shapes 1000,3000,520 --deadline 160 --jobs 4 \
    --out "$OUT/sanitize" 2>&1 | tail -8
  timeout 120 python3 bench/stress.py --phases none $1 --shapes 1000,3000,520 317,1032,1032 2056,4104,1032 \
    --calls 200 --thread-calls 100 --timeout 100 --out "$OUT/stress" 2>&1 | tail -8
}
case "${1:-}" in
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
tok8-checks)
  # 68. (ran 2026-12-03: 0 errors in 16, stress PASS) 8 x odd token tiles (the TMA box 8 rows taller than the MMA): the
  #     four sanitizers on two ragged shapes, the stress run
  C="--config 10:bm=128,bn=88,bk=64,stages=8,split_k=1,cluster_m=4 --config 10:bm=192,bn=184,bk=64,stages=4,split_k=4"
  timeout 200 python3 bench/sanitize.py --phases none $C --shapes 250,1032,520 190,3000,4104 --deadline 150 --jobs 4 \
    --out "$OUT/sanitize" 2>&1 | tail -8
  timeout 90 python3 bench/stress.py --phases none $C --shapes 240,1024,768 190,3000,520 250,512,4096 --calls 200 \
    --thread-calls 100 --timeout 80 --out "$OUT/stress" 2>&1 | tail -6
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
m512-stress)
  # 89. (ran 2026-12-04: PASS, 0 wrong) the stress run (two streams, two Python threads, every call checked, memory
  #     flat) of the configs best picks past 256 tokens: 256-row weight tiles unsplit and split 2, the token halves in
  #     64- and 192-row tiles (split 4), at ragged shapes of 257-512 tokens (2-4 token tiles each)
  C="--config 10:bm=256,bn=144,bk=64,stages=4,split_k=1 --config 10:bm=256,bn=88,bk=64,stages=5,split_k=2"
  C="$C --config 10:bm=64,bn=232,bk=64,stages=5,split_k=1 --config 10:bm=192,bn=136,bk=64,stages=5,split_k=4"
  timeout 150 python3 bench/stress.py --phases none $C --shapes 317,1032,1032 259,2056,520 463,1544,776 \
    --calls 200 --thread-calls 100 --timeout 140 --out "$OUT/stress" 2>&1 | tail -8
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
clusters-checks)
  # 96. (ran 2026-12-05 on an H100, --calls 150 --thread-calls 80: 0 errors in ours under the four tools, stress PASS)
  #     (built 2026-12-05, third session) cluster_n=2 -- 2 x 2 clusters on phases 6 and 8, and 256 x 128
  #     tiles in 1 x 2 (3 stages: the worklog's fp32 C, which these tools run, doubles the staging) -- under the four
  #     sanitizers at a ragged shape (a cluster's CTAs past M and N), and the stress run (two streams, two threads,
  #     every call checked). Their GPU tests are prefill-clusters' first step
  C="--config 6:cluster_n=2,use_pdl=True --config 8:cluster_n=2,use_pdl=True"
  C="$C --config 6:bm=256,bn=128,stages=3,cluster_m=1,cluster_n=2,use_pdl=True"
  persistent_checks "$C"
  ;;
fit-checks)
  # 97. (ran 2026-12-06, eleventh session, on an H100, in two calls: the GPU tests of 176 with the fused epilogue 4
  #     passed; the sanitizers 0 errors in our kernels, the stress run 400 calls 0 wrong, nt bf16 -> bf16 -- with
  #     fp32 C the 176 config is refused, hence the operands below; best then picks phase 8 at 176 and 160 where the
  #     model ranks the width CLOSE_CALL ahead, 1024x11008x4096 and 2048x3584x18944 nt; there best ran 0.959 and 0.945
  #     of the vendor, phase 8 at 192 0.919 and 0.874; the twelfth session then found phase 7 at 0.982 at the second,
  #     and choose.fitted_factor now leaves it phase 7's: prefill.sh fit-factor) choose.fitted_width's widths best
  #     picks -- phase 8 at 176 in 16-column C slabs (11 staging buffers), 160 in 5 -- their GPU tests (plain in the
  #     three layouts, 176 with the fused epilogue), the four sanitizers at a ragged shape (the last tile 8 columns
  #     wide at 176) and the stress run; then best at the two shapes beside phase 8 at 192 and the vendors
  export CUTE_GEMM_GPU_TEST_TIMEOUT=120
  timeout 170 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_phases.py tests/test_gpu_epilogue.py \
    -k "(prefill_configs and (bn176 or bn160)) or (persistent_phases_take and w176)" 2>&1 | tail -4 \
    | tee "$OUT/fit_tests.log"
  C="--config 8:bn=176,epi_n=16,epi_stages=11,use_pdl=True --config 8:bn=160,epi_stages=5,use_pdl=True"
  persistent_checks "$C --layout nt --dtype bf16 --out-dtype bf16"
  timeout 100 python3 -m cute_gemm bench --shapes 1024,11008,4096 2048,3584,18944 --layout nt --dtype bf16 \
    --out-dtype bf16 --phases 8 --config 8:stages=5,group_m=16,use_pdl=true --best --peers cublas,cublaslt \
    --cold-l2 --rounds 5 --quiet --no-plot --out "$OUT/fit_best.json" > "$OUT/fit_best.log" 2>&1
  grep -A8 "speed over the faster" "$OUT/fit_best.log"
  ;;
ring5-checks)
  # 98. (ran 2026-12-05 on an H100, seventh session: the GPU tests of both configs 4 passed, 2 skipped (fp32 C,
  #     refused); sanitizers 0 errors in ours; stress 400 + 200 calls, 0 wrong) best's phase 8 with a 16-bit C,
  #     choose.RING5 -- 5 stages (200 KiB; an fp32 C's staging leaves room for 4), in raster bands of 16 M-tiles (8
  #     pairs, not 4) up to K = 4096 -- its GPU tests in the three layouts of a training step and both C types (fp32
  #     skipped: refused), then the four sanitizers and the stress run at ragged shapes (bf16 in and out)
  export CUTE_GEMM_GPU_TEST_TIMEOUT=120
  timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_phases.py \
    -k "prefill_configs and stages5 and not epi_stages5 and not early_turn" \
    2>&1 | tail -4 | tee "$OUT/ring5_tests.log"
  C="--config 8:stages=5,group_m=16,use_pdl=True --config 8:stages=5,use_pdl=True"
  persistent_checks "$C --layout nt --dtype bf16 --out-dtype bf16"
  ;;
p8w128-checks)
  # 99. (ran 2026-12-06 on an H100, twelfth session: tests 3 passed, sanitizers 0 errors, stress 0 wrong; the
  #     train-step set 0.842 of the vendor, phase 7 0.993, best 1.000: kept out of the model)
  #     phase 8 128 wide in a 6-stage ring, with the early turn: on the
  #     H200 (bench/results/h200_2026-12-05e_runs.tar.xz, run19) 5-6% ahead of phase 7 (best's pick) and of cuBLAS at
  #     8192x2048x2048 nt and nn, 1-3% at 4096^3 and 8192x2048x5632 nt, 3% behind at 2048x2048x8192 tn. In
  #     choose.EXPLORE until these checks pass: its GPU tests in the three layouts of a training step, the four
  #     sanitizers and the stress run at ragged shapes; then the train-step set with it beside best, phase 7 and the
  #     vendors, which gives the model a factor for it (a PERSISTENT row) or not
  export CUTE_GEMM_GPU_TEST_TIMEOUT=120
  timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_phases.py \
    -k "prefill_configs and bn128 and stages6" 2>&1 | tail -4 | tee "$OUT/p8w128_tests.log"
  persistent_checks "--config 8:bn=128,stages=6,use_pdl=True --layout nn --dtype bf16 --out-dtype bf16"
  timeout 200 python3 -m cute_gemm bench --set train-step --best --phases 7 --config 7:use_pdl=true \
    --config 8:bn=128,stages=6,use_pdl=true --peers cublas,cublaslt --cold-l2 --quiet --no-plot \
    --out "$OUT/p8w128_train_step.json" > "$OUT/p8w128_train_step.log" 2>&1
  grep -A6 "speed over the faster" "$OUT/p8w128_train_step.log"
  ;;
*)
  echo "$0: no case '${1:-}' here (bash bench/run_h200.sh --list)" >&2
  exit 2
  ;;
esac

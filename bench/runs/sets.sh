#!/usr/bin/env bash
# bench/runs/sets.sh: one topic of the H200 runs (bash bench/run_h200.sh --list shows every case).
# Issue 18's criteria and the named shape sets with the model's picks (decode, small, unlisted and the held-out sets,
# cold L2, best beside phase 7 and both vendors): the runs behind the README's measured rows. Each bench's last lines
# give the set's geomean over the vendor and its lowest shape.
#
# Run from the repository root: bash bench/run_h200.sh CASE. Each case's comment says what it ran and, once run,
# what came back; docs/results.md holds the tables. Cases (the number orders the device runs):
#   regime           5. issue 18: the operands' and split/swap GPU tests; the decode and small sets
#   regime2          6. issues 18/20: decode, no regression at the big shapes, skinny sustained, nn.Linear's layout, sanitizers
#   regime4          8. after the wave-fitted tiles and the refitted model: decode, small, unlisted, no regression
#   regime7         10. every set after the token-tile multicast, both held-out sets; no regression; skinny sustained
#   regime9         14. the sets after 192-row tiles and 3-way splits, heldout3 first
#   model5-sets     26. the held-out and unlisted sets after the families1-3 refit
#   model7          49. the model with the re-read and wide-tile terms: heldout7, decode, the gaps' sets
#   model8          56. issue 18's criteria in one run after the re-read and wide-tile terms
#   model9          64. heldout8 (new), heldout3, unlisted with the reduce cap
#   tok8-sets       69. heldout9 (new), heldout8, unlisted with token tiles in steps of 8
#   heldout10       72. heldout10 (new): the set with the model's picks, then every shape's candidates
#   criteria9       84. issue 18's criteria after the 256-row weight tiles
#   heldout11       85. heldout11 (257-512 tokens, new); every family at the gaps
#   criteria10      88. decode and small with the final model
#   criteria11      96. decode, small, heldout11 with the final model
#   criteria11-big  97. no regression at the big shapes, the skinny shape sustained (the same session as criteria11)
#   heldout12       98. 12 random shapes of 1-512 tokens, final model
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
case "${1:-}" in
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
model5-sets)
  # 26. the held-out sets and the unlisted set with the refit model's picks (no tuned table), cold L2, 5 rounds
  for s in heldout heldout2 heldout3 heldout4 unlisted; do
    timeout 70 python3 -m cute_gemm bench --set $s --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
      --quiet --no-plot --out "$OUT/${s}_bench.json" 2>&1 | tail -1
  done
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
model9)
  # 64. (ran 2026-12-03: heldout8 1.036, heldout3 1.037, unlisted 1.013) the model with the reduce cap on shapes chosen after it (heldout8, never measured) and on the two sets that
  #     held the lowest shapes of the earlier ones (heldout3, unlisted; the cap moved no pick there), cold L2, model picks;
  #     each bench's last lines
  for set in heldout8 heldout3 unlisted; do
    timeout 130 python3 -m cute_gemm bench --set $set --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
      --quiet --no-plot --out "$OUT/${set}_model9_bench.json" 2>&1 | tail -3
  done
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
criteria10)
  # 88. (ran 2026-12-04: decode 1.077, lowest 0.966; small 1.133, lowest 1.005) the decode and small sets with the
  #     final model (the token halves moved three 512-token decode picks)
  timeout 170 python3 -m cute_gemm bench --set decode --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 5 \
    --quiet --out "$OUT/decode_bench.json" 2>&1 | tail -3
  timeout 60 python3 -m cute_gemm bench --set small --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 7 \
    --quiet --no-plot --out "$OUT/small_bench.json" 2>&1 | tail -3
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
*)
  echo "$0: no case '${1:-}' here (bash bench/run_h200.sh --list)" >&2
  exit 2
  ;;
esac

#!/usr/bin/env bash
# bench/runs/model_changes.sh: one topic of the H200 runs (bash bench/run_h200.sh --list shows every case).
# Changes to the model (cute_gemm/runtime/choose.py) tried on the GPU: the candidates a refit reads (bench/candidates.py,
# fit_best's files), and the picks a change moves -- the new pick (best) beside the old one (--config SPEC@M,N,K) at
# shapes never measured before, drawn where the pick moved (bench/moved_picks.py).
#
# Run from the repository root: bash bench/run_h200.sh CASE. Each case's comment says what it ran and, once run,
# what came back; docs/results.md holds the tables. Cases (the number orders the device runs):
#   tokens          11. the candidates behind the token-tile multicast and the held-out run's fixes
#   wide            12. 192-row tiles and 3-way splits: candidates at the held-out sets' gap shapes
#   tokens16        21. token tiles in steps of 16: the picks they moved
#   families1       24. 72-248 tokens, 8 shapes: the model's 2 cheapest and every family's cheapest (what a refit reads)
#   families2       24. 72-248 tokens, 8 more shapes, as families1
#   families3       24. 72-248 tokens, 24 more shapes (some the held-out sets' weakest), as families1
#   model5          25. the refit to families1-3: old and new picks side by side, heldout5, the decode set
#   model6          27. the multicast / split-K reduce refit: moved picks, heldout6, heldout5
#   families5       28. heldout6's candidates, token-row alignment probes
#   model6-sample   30. the multicast / reduce refit at random shapes whose pick moved (an unbiased check)
#   evict2          39. best's evict-first rule: the decode set, picks with and without it, every held-out set
#   evict3          40. best's evict-first rule at random shapes, each pick with and without it
#   p9pairs         45. phase 9's pairs with phase 10's factor: moved picks
#   p9pairs-128     46. phase 9's pairs rule at 128 tokens, 12 shapes held out; the decode set
#   reread          47. phase 10 charged per token tile (not landed)
#   reread2         48. phase 10 charged per token tile, and a wide-tile term (landed): the picks they move, beside the old
#   tiles3-heldout  53. three 80-token tiles at 12 shapes where they move the pick, beside the old pick
#   tiles3-80       54. three 80-token tiles narrowed to 232-240 tokens, K <= 5120 (landed): new picks beside the old
#   mc4-fresh       58. three 96-token tiles over 4 at 241-256 tokens as a rule (not taken): beside the old, 14 fresh shapes
#   reduce-cap      61. a split's reduce charged for at most 80 KiB (landed): the picks it moves, beside the old
#   reduce-cap2     63. the reduce cap: a second sample of moved picks, beside the old
#   tok8-moved      67. token tiles in steps of 8: new picks beside the old, 22 fresh shapes
#   tok8-ragged     71. three 88-token tiles unicast where a cluster of 4 is ragged: new picks beside the old
#   oneround        76. a one-round persistent launch with PDL: the picks it moves, beside the old; the skinny shape
#   m512-moved      78. 192-column tiles past 256 tokens and the one-round launch: new picks beside the old, 10 fresh shapes
#   bm256-moved     81. 256-row weight tiles in best's candidates: the picks they moved, beside the old
#   gen512          86. phase 10's token halves past 256 tokens: the picks they move, beside the old
#   t3w64-moved     94. three token tiles past 256 tokens and phase 9's deep 64 x 64 pair: the picks they moved, beside the old
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
case "${1:-}" in
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
*)
  echo "$0: no case '${1:-}' here (bash bench/run_h200.sh --list)" >&2
  exit 2
  ;;
esac

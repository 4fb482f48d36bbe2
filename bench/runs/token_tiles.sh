#!/usr/bin/env bash
# bench/runs/token_tiles.sh: one topic of the H200 runs (bash bench/run_h200.sh --list shows every case).
# 129-512 tokens: how the tokens are tiled -- three or four token tiles, 8 x an odd number of tokens, the token
# tile multicast over the weight tiles, 192- and 256-row weight tiles, cuBLAS's arrangements at the shapes furthest
# below the vendor -- each beside best's pick. The case's comment says what came back and whether the model took it.
#
# Run from the repository root: bash bench/run_h200.sh CASE. Each case's comment says what it ran and, once run,
# what came back; docs/results.md holds the tables. Cases (the number orders the device runs):
#   tiles3      50. 160-256 tokens in 3-4 narrow token tiles
#   tiles3m     52. one 3-token-tile kernel at 200..240 tokens
#   tiles3-mc4  57. 241-256 tokens in three 96-token tiles, the token tile multicast over 4 weight tiles
#   region256   60. 241-256 tokens x N 4288-5120: every family
#   mcast192    65. 200x11000x3000: 192-row tiles with the token multicast, 2 token tiles
#   tok8        66. token tiles of 8 x odd (88, 104, ...): GPU tests; cuBLAS's arrangements beside best
#   tok8-4864   70. heldout9's lowest shape again, ragged clusters of 4
#   m512        77. 257-512 tokens: one-wave tiles beside best
#   bm256       80. 257-512 tokens in 256-row weight tiles
#   bm256-tail  83. 289-310 tokens at 14336 weight rows
#   gaps512     91. 257-512 tokens furthest below the vendor: every family
#   tiles3x     92. past 256 tokens: three token tiles, cuBLAS's arrangements
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
case "${1:-}" in
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
bm256-tail)
  # 83. (ran 2026-12-04: four 80-token tiles faster at 3 of 3) 289-310 tokens at 14336 weight rows, where two token
  #     tiles would need 152 (past the registers of 256-row tiles): the model's pick, four token tiles of 80 (224 CTAs,
  #     two waves), beside its next two (phase 9's 128 x 192)
  beside bm256-tail 150 "289-310 tokens at N = 14336: four 80-token tiles of 256 weight rows beside the next" --top 3 \
    --rounds 5 --shapes 298,14336,4096 305,14336,4096 290,14336,8192
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
*)
  echo "$0: no case '${1:-}' here (bash bench/run_h200.sh --list)" >&2
  exit 2
  ;;
esac

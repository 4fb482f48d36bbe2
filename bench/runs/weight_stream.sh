#!/usr/bin/env bash
# bench/runs/weight_stream.sh: one topic of the H200 runs (bash bench/run_h200.sh --list shows every case).
# 1-128 tokens, where the kernel streams the weights (the decode set): k-tile depths, token tiles sharing the
# weights, L2 policies, split-K's cost, where the warps wait, phase 11 (stream-K, reverted) -- each beside best's
# pick. The case's comment says what came back and whether the model took it.
#
# Run from the repository root: bash bench/run_h200.sh CASE. Each case's comment says what it ran and, once run,
# what came back; docs/results.md holds the tables. Cases (the number orders the device runs):
#   stream-k     23. phase 11 (stream-K), measured and reverted: run on a checkout of a58f7fa
#   ring64       29. 64-deep k-tiles at 64-128 tokens
#   ring192      31. 192-deep k-tiles at the decode picks
#   tokens2      32. 128 tokens in two 64-token tiles (cuBLAS's split)
#   wmcast       33. 64-token tiles sharing the weights (multicast)
#   stalls       35. where the weight stream's warps wait, per SASS line
#   deep64       36. 128 tokens as two 64-token tiles in a deep ring
#   evict        37. phase 10's weights evict-first in L2, with and without
#   l2probe      42. fewer L2 reads per weight byte at 128 tokens
#   reduce-cost  43. what the split-K reduce costs (short K)
#   tok2         51. 128 tokens in two 64-token tiles, split 2 (lost)
#   w64pairs     90. 128x4096x14336: 64-wide weight tiles in pairs, bk 128
#   w64more      93. 65-128 tokens: phase 9's 64 x 64 tiles, bk 128, more shapes
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
case "${1:-}" in
stream-k)
  # 23. phase 11 (stream-K through a workspace), measured and reverted: run on a checkout of a58f7fa
  timeout 200 python3 -m cute_gemm bench --shapes 128,4096,14336 144,6144,6144 72,9216,9216 16,4096,14336 \
    --phases 10 --config 10:bn=128,stages=4 --config 11:bn=128,stages=4 --config 11:bn=128,stages=4,sm_count=128 \
    --config 11:bm=128,bn=128,bk=64,stages=7,sm_count=128 --config 11:bm=128,bn=144,bk=64,stages=6,sm_count=96 \
    --config 11:bm=128,bn=144,bk=64,stages=6 --config 11:bn=80,stages=6 --config 11:bm=128,bn=80,stages=4 \
    --config 11:bn=16 --best --peers cublas,cublaslt --cold-l2 --rounds 3 --no-plot --out "$OUT/p11_bench.json"
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
*)
  echo "$0: no case '${1:-}' here (bash bench/run_h200.sh --list)" >&2
  exit 2
  ;;
esac

#!/usr/bin/env bash
# bench/runs/prefill.sh: one topic of the H200 runs (bash bench/run_h200.sh --list shows every case).
# Prefill and training shapes (issue 45): the three GEMMs of a linear layer at 512-16384 tokens -- the forward
# y = x W^T (nt, bf16 -> bf16), dX = dY W (nn, bf16 -> bf16) and dW = dY^T X (tn, bf16 -> fp32) -- `--set prefill`,
# its thirds prefill-fwd/-dx/-dw and the held-out prefill-heldout, beside cuBLAS and cuBLASLt, cold L2.
#
# Run from the repository root: bash bench/run_h200.sh CASE. Each case's comment says what it ran and, once run,
# what came back; docs/results.md holds the tables. Cases (the number orders the device runs):
#   prefill-base      1. the 10 layers' three GEMMs, each layout a run: best, phases 7-9 configs, both vendors
#   prefill-model     2. --set prefill with the model's new picks beside phase 7 and both vendors, 3 rounds
#   prefill-criteria  3. issue 45's criteria: --set prefill twice, prefill-heldout once, two shapes sustained
#   prefill-epi64     4. 64-column C slabs (epi_n=64, 16-bit C) against 32 for phases 7 and 8; phase 6 at 256 x 128
#   prefill-clusters  5. clusters along N sharing A (cluster_n=2): cuBLAS's 256 x 128 in 1 x 2, and 2 x 2 on 6 and 8
#   prefill-cand-fwd  6. 4 and 5 in one run per layout: every untimed persistent config beside best and the vendors
#   prefill-cand-dx   6. as prefill-cand-fwd, the dX third (nn)
#   prefill-fit       7. phase 8 in the widths that fill its rounds (144, 176: 16-column slabs; 160): tests, then timed
#   early-turn        8. phase 8 handing the tensor pipe on when its wgmmas are issued (early_turn): tests, then timed
#   p7-buffers        9. phase 7 with 4 C staging buffers (16-bit C) beside its 2, where best picks phase 7: tests, timed
#   fit-factor       10. phase 8's fitted widths priced by their smem reads (fitted_factor): the five moved picks, old beside new
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
case "${1:-}" in
prefill-base)
  # 1. (ran 2026-12-04 21:31 UTC) before the model's change: best, phase 7 with and without PDL, phase 8 with PDL,
  #    phase 7 in 128 x 192 and 128 x 128 tiles, phase 9's 128 x 256, both vendors; 5 rounds. best 0.94-1.13 of the
  #    vendor; phase 9's tile picked where phase 7 ran 2-4% faster, phase 7 where phase 8 ran 2-6% faster at short K
  L="512,6144,4096 1024,11008,4096 2048,4096,4096 4096,4096,14336 8192,18944,3584 2048,3584,18944 16384,1280,8192
     4096,8192,1024 8192,5632,2048 1024,2048,5632"
  fwd=""; dx=""; dw=""
  for s in $L; do IFS=, read -r T N K <<< "$s"; fwd+="$T,$N,$K "; dx+="$T,$K,$N "; dw+="$N,$K,$T "; done
  CFG="--config 7:use_pdl=true --config 8:use_pdl=true --config 7:bn=192,use_pdl=true
       --config 7:bn=128,stages=6,use_pdl=true --config 9:bn=256,stages=4,split_k=1"
  for job in "fwd nt bf16 $fwd" "dx nn bf16 $dx" "dw tn fp32 $dw"; do
    set -- $job; name=$1; lay=$2; od=$3; shift 3
    # shellcheck disable=SC2086
    timeout 280 python3 -m cute_gemm bench --shapes "$@" --layout "$lay" --dtype bf16 --out-dtype "$od" --phases 7 \
      --best $CFG --peers cublas,cublaslt --cold-l2 --rounds 5 --quiet --no-plot --out "$OUT/base_$name.json" \
      > "$OUT/base_$name.log" 2>&1
  done
  ;;
prefill-model)
  # 2. (ran 2026-12-04 21:38 UTC) after it: best 1.003 geomean over the 30 shapes, lowest 0.944 (18944x3584x8192 dW);
  #    phase 7 alone 0.962. (The dW picks came from a tuned table that `tune --set prefill-dw --top 1` had filled
  #    with the model's first choices.)
  timeout 250 python3 -m cute_gemm bench --set prefill --phases 7 --best --peers cublas,cublaslt --cold-l2 --rounds 3 \
    --no-plot --quiet --out "$OUT/prefill_p7_best.json" 2>&1 | tee "$OUT/prefill_p7_best.txt"
  ;;
prefill-criteria)
  # 3. (ran 2026-12-05, fifth session, H200: prefill 1.005 and 1.005, lowest 0.890 at 1024x11008x4096 fwd; held-out
  #    1.006; sustained 0.978 and 0.913: not met; 2026-12-06 on an H100, the prefill set once: 1.003, lowest 0.944;
  #    sustained 0.967 and 0.951) issue 45's criteria: the prefill set twice (best, phases 7 and 8
  #    with and without PDL, both vendors), the held-out set once, 2048x4096x4096 and 1024x11008x4096 sustained
  CFG="--phases 7,8 --config 7:use_pdl=true --config 8:use_pdl=true --peers cublas,cublaslt --cold-l2 --quiet --no-plot"
  for run in prefill_A prefill_B prefill-heldout_A; do
    # shellcheck disable=SC2086
    timeout 250 python3 -m cute_gemm bench --set "${run%_*}" --best $CFG --out "$OUT/$run.json" > "$OUT/$run.log" 2>&1
    grep -A8 "speed over the faster" "$OUT/$run.log"
  done
  timeout 150 python3 -m cute_gemm bench --shapes 2048,4096,4096 1024,11008,4096 --layout nt --dtype bf16 \
    --out-dtype bf16 --best --phases 7,8 --peers cublas,cublaslt --sustained 0.5 --quiet --no-plot \
    --out "$OUT/sustained.json" > "$OUT/sustained.log" 2>&1
  grep -A8 "speed over the faster" "$OUT/sustained.log"
  ;;
prefill-epi64)
  # 4. (timed as part of prefill-cand-fwd/-dx, 2026-12-05, on an H100) the persistent phases stage a 16-bit C in slabs of 32
  #    columns, 64-B rows; epi_n=64 gives 128-B rows and half the slabs (the same bytes), for every bf16-out GEMM of a
  #    training step. Both slab widths of phases 7 and 8 beside best and the vendors, forward and dX sets; and phase 6
  #    in cuBLAS's most common prefill tile, 256 x 128 in two warpgroups of 128 rows (not among best's candidates);
  #    at 256 rows a 64-column slab is 32 KiB, so that variant runs a 3-stage ring (4 were over the smem, which bench
  #    refuses before timing anything: fixed before it ran, tests/test_run_script.py now checks every --config)
  CFG="--phases 8 --config 8:use_pdl=true --config 8:use_pdl=true,epi_n=64,epi_stages=3 --config 7:use_pdl=true
       --config 7:use_pdl=true,epi_n=64 --config 6:bm=256,bn=128,use_pdl=true
       --config 6:bm=256,bn=128,stages=3,use_pdl=true,epi_n=64
       --best --peers cublas,cublaslt --cold-l2 --rounds 3 --quiet --no-plot"
  for s in fwd dx; do
    # shellcheck disable=SC2086
    timeout 260 python3 -m cute_gemm bench --set "prefill-$s" $CFG --out "$OUT/epi64_$s.json" > "$OUT/epi64_$s.log" 2>&1
    tail -42 "$OUT/epi64_$s.log"
  done
  ;;
prefill-clusters)
  # 5. (its GPU tests ran 2026-12-05 on an H100: 16 passed, 5 skipped; its timing ran as prefill-cand-fwd/-dx)
  #    (built 2026-12-05, third session, the device paused) cluster_n=2, a config of phases 6 and 8: CTAs
  #    along N share the A tile by multicast. Phase 6 in cuBLAS's own arrangement (256 x 128, two warpgroups of 128
  #    rows, clusters of 1 x 2, with 32- and 64-column slabs), and 2 x 2 clusters sharing both operands on phases 6 and
  #    8, beside best (phases 7 and 8 with PDL) and the vendors; first their GPU checks (every layout of a training step)
  timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_phases.py -k prefill_configs 2>&1 | tail -5
  CFG="--phases 8 --config 8:use_pdl=true --config 7:use_pdl=true
       --config 6:bm=256,bn=128,cluster_m=1,cluster_n=2,use_pdl=true
       --config 6:bm=256,bn=128,stages=3,cluster_m=1,cluster_n=2,use_pdl=true,epi_n=64
       --config 6:cluster_n=2,use_pdl=true --config 8:cluster_n=2,use_pdl=true
       --best --peers cublas,cublaslt --cold-l2 --rounds 3 --quiet --no-plot"
  for s in fwd dx; do
    # shellcheck disable=SC2086
    timeout 200 python3 -m cute_gemm bench --set "prefill-$s" $CFG --out "$OUT/clusters_$s.json" > "$OUT/clusters_$s.log" 2>&1
    tail -42 "$OUT/clusters_$s.log"
  done
  ;;
prefill-cand-fwd|prefill-cand-dx)
  # 6. (2026-12-05, fourth session) prefill-epi64's and prefill-clusters' configs in one bench per layout, so that
  #    each shape times them all in the same interleaved rounds: the 64-column slabs of phases 7 and 8, phase 6 in
  #    256 x 128 tiles (clusters of 2 x 1 and of 1 x 2, 32- and 64-column slabs), 2 x 2 clusters on 6 and 8.
  #    Ran twice each on an H100 (the H200 did not start), 2026-12-05: no config near best over the set (fwd best
  #    0.976 / 0.982, the others 0.81-0.93; dX best 1.002 / 0.996, the others 0.73-0.95); 2 x 2 wins at 3 long-K shapes
  s=${1#prefill-cand-}
  CFG="--phases 8 --config 8:use_pdl=true --config 8:use_pdl=true,epi_n=64,epi_stages=3 --config 7:use_pdl=true
       --config 7:use_pdl=true,epi_n=64 --config 6:bm=256,bn=128,use_pdl=true
       --config 6:bm=256,bn=128,cluster_m=1,cluster_n=2,use_pdl=true
       --config 6:bm=256,bn=128,stages=3,cluster_m=1,cluster_n=2,use_pdl=true,epi_n=64
       --config 6:cluster_n=2,use_pdl=true --config 8:cluster_n=2,use_pdl=true
       --best --peers cublas,cublaslt --cold-l2 --rounds 3 --quiet --no-plot"
  # shellcheck disable=SC2086
  timeout 320 python3 -m cute_gemm bench --set "prefill-$s" $CFG --out "$OUT/cand_$s.json" > "$OUT/cand_$s.log" 2>&1
  tail -45 "$OUT/cand_$s.log"
  ;;
prefill-fit)
  # 7. (ran 2026-12-05, sixth session, on an H100, in one call with 575 s for the three benches: at 1024x11008x4096
  #    fwd 176 ran 97.6% of the vendor, 192 91.0, best 93.2; in nn and tn 0.56-0.75 of 192, so fitted_width now needs
  #    B K-major; not in best, tune --explore's) choose.fitted_width's configs: phase 8 at 144, 160 and 176 wide
  #    (144 and 176 in 16-column C slabs) where 192 leaves the persistent grid's last round part-empty -- at
  #    1024x11008x4096 (best 0.89-0.92) 504 tiles of 176 in 4 full rounds against 464 of 192 in 3.5. First their GPU
  #    tests (three layouts, ragged), then each beside phase 8 at 192, best and the vendors on the forward and dX
  #    thirds and the training step's GEMMs; a config best may pick needs checks.sh's sanitizers and stress run too
  timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_phases.py \
    -k "prefill_configs and (bn176 or bn144 or bn160)" > "$OUT/fit_tests.log" 2>&1
  tail -2 "$OUT/fit_tests.log"
  CFG="--phases 8 --config 8:use_pdl=true --config 8:bn=176,epi_n=16,epi_stages=11,use_pdl=true
       --config 8:bn=144,epi_n=16,epi_stages=9,use_pdl=true --config 8:bn=160,epi_stages=5,use_pdl=true
       --best --peers cublas,cublaslt --cold-l2 --rounds 5 --quiet --no-plot"
  for set in prefill-fwd prefill-dx train-step; do
    # shellcheck disable=SC2086
    timeout 200 python3 -m cute_gemm bench --set "$set" $CFG --out "$OUT/fit_$set.json" > "$OUT/fit_$set.log" 2>&1
    grep -A8 "speed over the faster" "$OUT/fit_$set.log"
  done
  ;;
early-turn)
  # 8. (ran 2026-12-05 on an H100, eighth session, as its first commit, early_turn then off by default: per-round
  #    ratios 1.003-1.023 plain, 1.005-1.033 fused over 10 shapes; prefill-fwd phase 8 0.931 -> 0.940 of the vendor;
  #    since then the default, so the second config is phase 8's own) phase 8 passed its mainloop turn once the tile's
  #    wgmmas had completed; CUTLASS's ping-pong passes it once they are issued, so the other warpgroup's queue behind
  #    them and the tensor pipe does not drain between tiles (early_turn=True; PTX machine and PTX rules checked). Its
  #    GPU tests, then best's phase 8 (RING5) with and without it, beside best and the vendors, on the forward third
  #    (its short-K shapes lost most to quack's same tile: 4096x8192x1024 97.6 us against 88.9, H100) and the training
  #    step's GEMMs. If it pays: the default, then `epi-prefill` again (a fused config cannot be timed by --config:
  #    the bench's calls pass no bias)
  timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_phases.py \
    -k "prefill_configs and early_turn" > "$OUT/turn_tests.log" 2>&1
  tail -2 "$OUT/turn_tests.log"
  CFG="--phases 8 --config 8:stages=5,group_m=16,use_pdl=true
       --config 8:stages=5,group_m=16,use_pdl=true,early_turn=true
       --best --peers cublas,cublaslt --cold-l2 --rounds 7 --quiet --no-plot"
  for set in prefill-fwd train-step; do
    # shellcheck disable=SC2086
    timeout 170 python3 -m cute_gemm bench --set "$set" $CFG --out "$OUT/turn_$set.json" > "$OUT/turn_$set.log" 2>&1
    grep -A6 "speed over the faster" "$OUT/turn_$set.log"
  done
  ;;
p7-buffers)
  # 9. (ran 2026-12-05 on an H100, ninth session: GPU tests 2 passed, 1 skipped; train-step 0.987 -> 0.997 of the
  #    vendor, prefill-dx 0.950 -> 0.958, within the run-to-run spread) phase 7's epilogue is exposed each tile round
  #    (both consumer
  #    warpgroups store the tile while the tensor pipe waits; the model charges 0.8 us a round), and with 2 staging
  #    buffers each slab's barrier waits until the previous slab's TMA store has read its buffer: 8 waits a tile, one
  #    after another. quack's GEMM lets 5 stores read at once. With a 16-bit C, 4 buffers fit beside phase 7's ring
  #    (epi_stages=4: each slab waits for the store three slabs back; choose.EXPLORE, PTX machine case
  #    phase7-4-buffers). Its GPU tests (three layouts; with an fp32 C it is refused), then phase 7 with 2 and with
  #    4 buffers beside best and the vendors on the training step's GEMMs (phase 7 is best's pick at N = 2048) and
  #    the prefill set's dX third
  timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_phases.py \
    -k "prefill_configs and epi_stages4" > "$OUT/p7_buffers_tests.log" 2>&1
  tail -2 "$OUT/p7_buffers_tests.log"
  CFG="--phases 7 --config 7:use_pdl=true --config 7:use_pdl=true,epi_stages=4
       --best --peers cublas,cublaslt --cold-l2 --rounds 7 --quiet --no-plot"
  for set in train-step prefill-dx; do
    # shellcheck disable=SC2086
    timeout 190 python3 -m cute_gemm bench --set "$set" $CFG --out "$OUT/p7buf_$set.json" > "$OUT/p7buf_$set.log" 2>&1
    grep -A6 "speed over the faster" "$OUT/p7buf_$set.log"
  done
  ;;
fit-factor)
  # 10. (ran 2026-12-06, thirteenth session, H100: the moved picks 0.900, 0.991, 0.932, 0.923 where the old ran
  #     0.956, 0.970, 0.967, 0.926; the H200 ranks these tiles otherwise, model kept; built 2026-12-06, twelfth
  #     session) best's fitted widths are priced with choose.fitted_factor: phase
  #     8's factor times the smem operand bytes a MAC reads at that width over 192's (160: 1.08, 176: 1.04). On an
  #     H100 (the twelfth session's d7) best's 160 at 2048x3584x18944 ran 0.932 of the vendor and phase 7's 128x256
  #     0.982; the H200 had run phase 7 128 wide there at 1.02 (fifth session). Among the named sets' shapes in the
  #     forward's nt layout five picks move: 2048x3584x18944 and 512x14336x4096 from 8 at 160 to 7 at 128 (6 stages),
  #     512x28672x8192 and 498x28672x3072 from 8 at 176 to 7 at 256; 1024x11008x4096 keeps 176 and 1024x5120x4096
  #     160 (the rule's other side). Each beside the old pick, cold L2, 7 rounds
  timeout 300 python3 -m cute_gemm bench --shapes 2048,3584,18944 512,14336,4096 512,28672,8192 498,28672,3072 \
    1024,11008,4096 1024,5120,4096 --layout nt --dtype bf16 --out-dtype bf16 --best --phases 7 --config 7:use_pdl=true \
    --config 7:bn=128,stages=6,use_pdl=true --config 8:bn=160,epi_stages=5,use_pdl=true \
    --config 8:bn=176,epi_n=16,epi_stages=11,use_pdl=true --peers cublas,cublaslt --cold-l2 --rounds 7 --quiet \
    --no-plot --out "$OUT/fit_factor.json" > "$OUT/fit_factor.log" 2>&1
  grep -v -i warn "$OUT/fit_factor.log" | grep -E "^[0-9]|best|phase|cuBLAS" | head -60
  ;;
*)
  echo "$0: no case '${1:-}' here (bash bench/run_h200.sh --list)" >&2
  exit 2
  ;;
esac

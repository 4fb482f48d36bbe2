#!/usr/bin/env bash
# bench/runs/epilogue.sh: one topic of the H200 runs (bash bench/run_h200.sh --list shows every case).
# Fused epilogues (issue 47): `cute-gemm bench --epilogue SPEC` -- y = act(x W^T + b) + r as one call of
# cute_gemm.gemm(phase="best", bias=, activation=, residual=) (phase 11), beside the unfused sequence a model runs
# (F.linear or x @ W.T on cuBLAS, then F.gelu / F.silu, then + r) and quack's fused GEMM, nt bf16 -> bf16, cold L2.
# Shapes: the decode set (1-512 tokens x five weights) and the forward third of the prefill set (prefill-fwd: the
# epilogue follows the forward GEMM y = x W^T; dX and dW have none).
#
# Run from the repository root: bash bench/run_h200.sh CASE. Each case's comment says what it ran and, once run,
# what came back; docs/results.md holds the tables. Cases (the number orders the device runs):
#   epi-decode        1. --set decode, bias,gelu and bias,silu: fused vs unfused vs quack, 5 rounds
#   epi-prefill       2. --set prefill-fwd, bias,gelu and bias,silu: fused vs unfused vs quack, 5 rounds
#   epi-gated         3. gated,silu (SwiGLU) on --set decode and --set prefill-fwd, 5 rounds
#   epi-residual      4. residual alone (a skip connection), --set decode and --set prefill-fwd, 5 rounds
#   epi-gpu-tests     0. first: the GPU tests of the fused epilogue (quick subset) and of the accumulate epilogue
#   epi-gpu-full      5. the fused epilogue's whole GPU product: every epilogue x C dtype x layout, gated, persistent
#   epi-stalls        6. where phase 8's warps wait, plain and with a bias or gelu, at 4096x8192x1024 (ncu, per SASS line)
#   epi-spread        7. phase 8's fused epilogue slab by slab (epi_spread) beside its arithmetic all at once, short K
#   bias-smem         8. phase 8 with the tile's bias copied to smem as its mainloop starts (bias_smem): tests, timed
#   epi-addr          9. the bias loads' addresses by a shift: the persistent phases' fused GPU tests, then timed beside quack
#   epi-counters     10. after epi-addr: the Nsight Compute counters of phase 8 plain, fused, fused with bias_smem
#   spread-slabs     11. best's phase 8 fused in 16-column slabs, spread, bias in smem (choose.spread_slabs): tests, timed
#   gated-slabs      12. the gated pairs in their own 32-column slabs, spread (spread_slabs): tests, SwiGLU beside the old form
# Each case is two bench calls of at most 270 s: within one device command's 600 s with the bundle's unpacking.
# quack's gemm_act / gemm_gated fingerprint the DSL's functions as installed code only where their path holds
# "site-packages"; a DSL unpacked elsewhere and put on PYTHONPATH (the device's /tmp/site) makes quack raise "epilogue
# fn depends on <ContextVar _LOC_TRANSFORMS> ... no fail-closed semantic key" (2026-12-05): link it, e.g.
#   ln -sfn /tmp/site /tmp/site-packages; export PYTHONPATH="${PYTHONPATH//\/tmp\/site/\/tmp\/site-packages}"
# Run 2026-12-05 (docs/results.md, "The fused epilogue ... (H200, 2026-12-05)"): bias,gelu decode 1.109, prefill-fwd
# 1.019 (phase 8 picked where the plain pick was 7), then 1.115 with phase 7's epilogue (quack 1.036); gated,silu
# 1.279 / 1.248.
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# epi NAME LIMIT ARGS...: `cute-gemm bench --epilogue ...` into $OUT/NAME.json (its log $OUT/NAME.log), then its table
epi() {
  local name=$1 limit=$2
  shift 2
  timeout "$limit" python3 -m cute_gemm bench "$@" --rounds 5 --quiet --out "$OUT/$name.json" > "$OUT/$name.log" 2>&1
  echo "== $name (exit $?)"
  grep -A60 "^epilogue " "$OUT/$name.log" || tail -5 "$OUT/$name.log"
}
case "${1:-}" in
epi-decode)
  # 1. (not yet run) the decode set's 30 shapes: the fused epilogue's case is at few tokens, where the unfused
  #    sequence's two extra launches and trips of y through memory are a large share of the layer
  epi epi_decode_bias_gelu 270 --epilogue bias,gelu --set decode
  epi epi_decode_bias_silu 270 --epilogue bias,silu --set decode
  ;;
epi-prefill)
  # 2. (ran 2026-12-05, fifth session, H200: bias+gelu 1.10x unfused, 1.03x quack; bias+silu 1.21x, 1.05x. Sixth
  #    session, on an H100, the bias loaded once per tile: bias+gelu 1.09x, 1.01x; gated silu 1.36x, 1.05x) the prefill
  #    set's 10 forward GEMMs (512-16384 tokens), where the GEMM dominates
  epi epi_prefill_bias_gelu 270 --epilogue bias,gelu --set prefill-fwd
  epi epi_prefill_bias_silu 270 --epilogue bias,silu --set prefill-fwd
  ;;
epi-gated)
  # 3. (ran 2026-12-05, fifth session, H200: decode 1.28x unfused, 2.12x quack; prefill 1.35x, 1.06x) SwiGLU
  #    (gated,silu): the set's weight read as interleaved (gate, up) rows, y [M, N/2] -- one phase 11 call vs F.linear
  #    then F.silu(y[:, 0::2]) * y[:, 1::2] vs quack's gemm_gated
  epi epi_decode_gated_silu 270 --epilogue gated,silu --set decode
  epi epi_prefill_gated_silu 270 --epilogue gated,silu --set prefill-fwd
  ;;
epi-residual)
  # 4. (not yet run) the residual add alone: quack's gemm_add is its fused peer
  epi epi_decode_residual 270 --epilogue residual --set decode
  epi epi_prefill_residual 270 --epilogue residual --set prefill-fwd
  ;;
epi-gpu-tests)
  # 0. (not yet run) before any timing: the fused epilogue's GPU tests, CUTE_GEMM_EPILOGUE_QUICK's covering subset
  #    (every epilogue kind, C dtype and layout once; gated pairs; split_k 1-3 and best), and the accumulate epilogue's
  #    (C += A @ B, which linear(..., accumulate_grad=True) uses); then the training tests.
  #    Run 2026-12-05: the epilogue's 31 of 32 passed (linear's relu gradient: fixed since); the accumulate tests' process
  #    ended at its first test, the launch hung (phase 5 and best, 1x264x520: the reduce-add issued by one thread, while
  #    the DSL elects a lane of the full warp for it). Fixed (a warp issues it); rerun 2026-12-05 04:47 UTC: the
  #    accumulate GPU tests 15/15, the training tests 10/10
  CUTE_GEMM_EPILOGUE_QUICK=1 timeout 400 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_epilogue.py \
    tests/test_accumulate.py 2>&1 | tail -15 | tee "$OUT/epi_gpu_tests.log"
  timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_train.py 2>&1 | tail -6 \
    | tee "$OUT/train_gpu_tests.log"
  ;;
epi-gpu-full)
  # 5. (ran 2026-12-05 on an H100: 251 passed in 158 s) the fused epilogue's GPU tests without CUTE_GEMM_EPILOGUE_QUICK: every epilogue x C dtype x layout
  #    on ragged shapes (about 180 tests; the kernels compile in worker processes first), the gated pairs, and the
  #    persistent phases 6-8 with bias+gelu+residual and with SwiGLU (one test parametrized by `gated` since
  #    2026-12-05: the merged form has not run on a GPU)
  timeout 560 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_epilogue.py 2>&1 | tail -15 \
    | tee "$OUT/epi_gpu_full.log"
  ;;
epi-stalls)
  # 6. (ran 2026-12-05 on an H100, seventh session: the epilogue region's samples 946 plain, 2056 bias, 2135 gelu,
  #    spread over it, not at one line; docs/results.md "Why quack's GEMM is ahead at short K"; built 2026-12-05,
  #    sixth session) at 4096x8192x1024 (nt bf16 -> bf16) any fused epilogue costs
  #    phase 8 about 6.5 us of 97.7 (bias alone 104.4, gelu alone 103.7: an H100, docs/results.md), though it runs
  #    under the other warpgroup's mainloop: the most-sampled SASS lines of the plain call and of the fused ones
  for e in "" bias gelu; do
    timeout 150 python3 bench/stall_sites.py --shape 4096,8192,1024 --phase 8 --config use_pdl=true --layout nt \
      --dtype bf16 --out-dtype bf16 ${e:+--epilogue $e} --out "$OUT/stalls" --top 20 2>&1 | grep "^|" | head -24
  done
  ;;
epi-spread)
  # 7. (ran 2026-12-05 on an H100, ninth session: GPU tests 4 passed; phase 8 with epi_spread 0-3% faster, about
  #    the noise, quack's fused GEMM still 3-5% ahead; phase 7 3-6% faster with it) ptxas puts all of a tile's
  #    epilogue arithmetic (bias + gelu:
  #    about 1,300 instructions a thread) in one burst right after the wgmma wait, as the other warpgroup starts its
  #    mainloop; its cost grows with the tiles an SM runs, not with K (docs/results.md, run17). `epi_spread` pins each
  #    slab's arithmetic below the previous slab's barrier, so it runs between the slabs' stores, as quack's does.
  #    First its GPU tests (phase 8 with it: bias + gelu and SwiGLU, with and without a residual, ragged shapes); then
  #    phase 8's RING5 config (best's at K <= 4096: 5 stages, bands of 16) without and with it, best's fused call and
  #    quack's beside, at the short-K shapes; with it, deeper store pipelines as quack's (12 stores of 16 columns a
  #    tile, 5 reading smem at once): 3 buffers of 32 columns, 6 of 16; and phase 7's (its two warpgroups store one
  #    tile: spread, the arithmetic overlaps the slabs' store latency). The PTX machine runs each with the switch
  #    (tests/test_sm90_sim.py, tests/test_epilogue_sim_persistent.py)
  timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_epilogue.py \
    -k "persistent and epi_spread" 2>&1 | tail -4 | tee "$OUT/epi_spread_gpu_tests.log"
  epi epi_spread_bias_gelu 400 --epilogue bias,gelu --shapes 2048,8192,1024 4096,8192,1024 8192,8192,1024 \
    4096,8192,2048 1024,11008,4096 --config 8:stages=5,group_m=16,use_pdl=true \
    --config 8:stages=5,group_m=16,use_pdl=true,epi_spread=true \
    --config 8:stages=5,group_m=16,use_pdl=true,epi_spread=true,epi_stages=3 \
    --config 8:stages=5,group_m=16,use_pdl=true,epi_spread=true,epi_n=16,epi_stages=6 \
    --config 7:use_pdl=true --config 7:use_pdl=true,epi_spread=true
  ;;
bias-smem)
  # 8. (built 2026-12-06, tenth session; not run as a case: its GPU tests passed and the field was timed by the eleventh
  #    session's epi_probe.py on an H100, no gain beyond the run's spread) a device timeline of phase 8's warpgroups (docs/results.md, "A
  #    timeline of the two warpgroups") put the fused epilogue's cost at 0.095 x its length, and its first 1.7 us at
  #    4096x8192x1024 as the wait for the tile's bias loads, issued when its wgmmas complete. `bias_smem` copies the
  #    tile's bias to smem (cp.async) as its mainloop starts; each slab reads it there. Its GPU tests (bias + gelu and
  #    SwiGLU, ragged, nt bf16 and nn fp32), then phase 8's RING5 without and with it beside best's and quack's fused
  #    calls at the short-K shapes of the prefill set
  timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_epilogue.py -k "persistent and bias_smem" \
    2>&1 | tail -4 | tee "$OUT/bias_smem_gpu_tests.log"
  epi bias_smem_bias_gelu 400 --epilogue bias,gelu --shapes 2048,8192,1024 4096,8192,1024 8192,8192,1024 \
    4096,8192,2048 1024,11008,4096 8192,5632,2048 --config 8:stages=5,group_m=16,use_pdl=true \
    --config 8:stages=5,group_m=16,use_pdl=true,bias_smem=true \
    --config 8:stages=5,group_m=16,use_pdl=true,bias_smem=true,epi_spread=true
  ;;
epi-addr)
  # 9. (ran 2026-12-06, thirteenth session, H100: 0.97 of quack, bias_smem no gain; the tests stopped at 22 of 28 at
  #    their 120 s, now 160; built 2026-12-06, twelfth session) Nsight Compute beside quack (docs/results.md, "Where the fused
  #    epilogue's time goes") found phase 8's fused epilogue adding 2.6 times quack's integer instructions, most of them
  #    each bias load's address (a signed floor division by 2), while the other warpgroup's tensor pipe idled 2% of the
  #    cycles (quack's 0.1%). `_group_at` now shifts. Its GPU tests first (the persistent phases' fused epilogue: every
  #    kind, ragged), then phase 8's RING5 fused beside best, the unfused sequence and quack's gemm_act at the shapes
  #    where quack was ahead (the twelfth session's d4: 2.7-20.2 us), and with the tile's bias through smem (bias_smem:
  #    one load a tile, as quack does); epi-counters then takes the counters that showed the cost
  timeout 160 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_epilogue.py \
    -k "persistent_phases_take_the_fused_epilogue" 2>&1 | tail -4 | tee "$OUT/epi_addr_gpu_tests.log"
  epi epi_addr_bias_gelu 400 --epilogue bias,gelu --shapes 4096,8192,1024 8192,8192,1024 1024,11008,4096 \
    8192,5632,2048 4096,8192,4096 8192,18944,3584 --config 8:stages=5,group_m=16,use_pdl=true \
    --config 8:stages=5,group_m=16,use_pdl=true,bias_smem=true
  ;;
epi-counters)
  # 10. (ran 2026-12-06, thirteenth session, H100: shared pipe 99.45% plain, 97.39% fused, 97.55% with bias_smem;
  #     built 2026-12-06, twelfth session) after epi-addr: the Nsight Compute counters that showed the
  #     fused epilogue's cost (docs/results.md, "Where the fused epilogue's time goes"), one launch each, clocks free,
  #     at 8192x18944x3584: is the other warpgroup's tensor pipe still idle 2% of the cycles while the epilogue runs?
  #     Plain, fused, and fused with the tile's bias through smem
  M=sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.max
  M=$M,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,smsp__inst_executed_pipe_alu.sum
  NCU="timeout 90 ncu --profile-from-start off --clock-control none --cache-control all --metrics $M python3
       bench/stall_sites.py --launch --shape 8192,18944,3584 --phase 8 --layout nt --dtype bf16 --out-dtype bf16"
  $NCU --config stages=5,group_m=16,use_pdl=true > "$OUT/ncu_addr_plain.txt" 2>&1
  $NCU --config stages=5,group_m=16,use_pdl=true --epilogue bias,gelu > "$OUT/ncu_addr_fused.txt" 2>&1
  $NCU --config stages=5,group_m=16,use_pdl=true,bias_smem=true --epilogue bias,gelu \
    > "$OUT/ncu_addr_fused_bias_smem.txt" 2>&1
  for f in plain fused fused_bias_smem; do
    echo "== ncu $f"; grep -E "^ +(sm__|l1tex__|smsp__)" "$OUT/ncu_addr_$f.txt"
  done
  ;;
spread-slabs)
  # 11. (ran 2026-12-06, thirteenth session, H100: 9 tests passed; bias + gelu 1.000 of quack, 1.03 over the old
  #     config; gated silu 1.045 of quack, 1.32x unfused) Nsight Compute on an H100 (docs/results.md, thirteenth session): phase
  #     8's fused epilogue slows the other warpgroup's wgmmas in proportion to its arithmetic (bias alone +1.3% of the
  #     cycles at 8192x18944x3584, gelu alone +0.9%, both +2.1%; at K = 1024 +9.1%), and less the more it is spread:
  #     epi_spread +1.8% / +6.3%, epi_spread in 16-column slabs through 4 buffers +0.8% / +4.7%, and with the tile's
  #     bias through smem +0.1% / +3.6%. best now runs phase 8's fused epilogue so (choose.spread_slabs; the first run
  #     of this case had it without bias_smem). Its GPU tests (the persistent phases' variant and the linear
  #     layers through best), then bias + gelu timed beside the old config and quack where quack was ahead, and the
  #     gated silu over the prefill set's forward GEMMs
  timeout 180 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_epilogue.py -k "spread_slabs or linear" \
    2>&1 | tail -4 | tee "$OUT/spread_slabs_gpu_tests.log"
  epi spread_slabs_bias_gelu 140 --epilogue bias,gelu --shapes 4096,8192,1024 8192,8192,1024 1024,11008,4096 \
    8192,5632,2048 4096,8192,4096 8192,18944,3584 --config 8:stages=5,group_m=16,use_pdl=true
  epi spread_slabs_gated 200 --epilogue gated,silu --set prefill-fwd
  ;;
gated-slabs)
  # 12. (ran 2026-12-06, fourteenth session, H100, as the tarball's d4 and d5: 9 tests passed; SwiGLU 1.02 and 1.07 of
  #     quack, none below 1.00; the old 16-column form 0.90-0.99 of the new) Nsight Compute on an H100 (docs/results.md,
  #     fourteenth session): spread_slabs' 16-column slabs leave the gated pairs 8 columns of C a slab, and cost phase 8
  #     +4.8% of the plain kernel's cycles at 4096x8192x1024, where their own 32-column slabs spread cost -0.6% (quack's
  #     gemm_gated +0.4%). spread_slabs now keeps the pairs' 32-column slabs. Its GPU tests, then SwiGLU over the
  #     prefill set's forward GEMMs beside the old form
  timeout 180 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_epilogue.py -k "spread_slabs or linear" \
    2>&1 | tail -4 | tee "$OUT/gated_slabs_gpu_tests.log"
  epi gated_slabs 260 --epilogue gated,silu --set prefill-fwd \
    --config 8:stages=5,group_m=16,use_pdl=true,epi_n=16,epi_stages=4,epi_spread=true,bias_smem=true
  ;;
*)
  echo "$0: no case '${1:-}' here (bash bench/run_h200.sh --list)" >&2
  exit 2
  ;;
esac
